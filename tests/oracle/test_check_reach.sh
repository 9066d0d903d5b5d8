#!/bin/sh
# test_check_reach.sh — what the default `run --check` reaches, on the host (no GPU):
# cake_hostcheck prints the shapes, sm.count and sampling the check would use.
#   1. every declared value of CAUSAL is checked (flash_attn_fwd);
#   2. a persistent kernel gets shapes with sm.count below its tile count, and a
#      shape with more row tiles than one group of GROUP_M = 8;
#   3. a 3072^3 GEMM is checked on a sample, in well under a minute.
set -eu
H=${CAKE_BINARY_DIR:-build}/tests/cake_hostcheck
[ -x "$H" ] || { echo "no $H: build cake_hostcheck"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; cat "$T/out" 2>/dev/null; exit 1; }

"$H" examples/flash_attn_fwd.tir > "$T/out" 2>&1 || fail "flash_attn_fwd: hostcheck failed"
grep -q '^CAUSAL=1 ' "$T/out" || fail "flash_attn_fwd: no shape with CAUSAL=1"
grep -q '^CAUSAL=0 ' "$T/out" || fail "flash_attn_fwd: no shape with CAUSAL=0"

"$H" tests/corpus/dynamic/persistent_acc_not_reset.tir > "$T/out" 2>&1 || fail "persistent: hostcheck failed"
# some shape gives a block two tiles or more: tiles = cdiv(M, 128) * cdiv(N, 256) > sm.count
awk '/sm.count=[0-9]/ {
       m = $0; sub(/.*M=/, "", m); sub(/,.*/, "", m)
       n = $0; sub(/.*N=/, "", n); sub(/,.*/, "", n)
       s = $0; sub(/.*sm.count=/, "", s); sub(/[^0-9].*/, "", s)
       t = int((m + 127) / 128) * int((n + 255) / 256)
       if (t >= 2 * s) ok = 1
       if (int((m + 127) / 128) > 8 && (int((m + 127) / 128) % 8)) group = 1 }
     END { exit !(ok && group) }' "$T/out" || fail "persistent: no shape with two tiles per block and a partial group"

start=$(date +%s)
"$H" --only --shape M=3072,N=3072,K=3072 examples/gemm_sm90.tir > "$T/out" 2>&1 || fail "3072^3: hostcheck failed"
grep -q 'sampled' "$T/out" || fail "3072^3: not sampled"
[ $(( $(date +%s) - start )) -lt 60 ] || fail "3072^3: the reference took a minute or more"
echo "check reach: ok"
