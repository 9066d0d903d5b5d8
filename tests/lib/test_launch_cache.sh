#!/bin/sh
# test_launch_cache.sh — the library's launch cache (lib/lib_cache.c) without a GPU:
# `cakec lib bench --overhead` on gfx942 through tests/runtime/fake_hip.c (which runs
# nothing and logs every call) with tests/lib/fake_hip (rmsnorm: one kernel at M > 8, a
# sequence of two launches with a workspace at M <= 8). Checks:
#   - every launch of the one kernel passes the three tensors of one of the two buffer
#     sets the measurement alternates between, at offset 0, and the dims: a kept launch
#     rebound to other buffers names them, never a mix of the sets;
#   - the last two launches (the rebind check: the first set, then the second) name the
#     first set's buffers, then the second's;
#   - a sequence launches both its kernels every call and allocates its workspace once
#     (the device's allocations do not grow with the calls);
#   - the JSON has every field docs/library.md lists for `dispatch`.
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
FAKE=${CAKE_FAKE_HIP:-}
[ -n "$FAKE" ] && [ -f "$FAKE" ] || { echo "skip: the fake HIP library is not built (CAKE_FAKE_HIP)"; exit 77; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cakecache.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
LIB=$ROOT/tests/lib/fake_hip
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# one kernel: rmsnorm(x, w, y, eps, M, N) -> pointers of 8 bytes, eps and the dims of 4
CAKE_LIBHIP=$FAKE FAKE_HIP_LOG=$TMP/log FAKE_HIP_ARG_SIZES=8,8,8,4,4,4 \
    "$CAKEC" lib bench "$LIB" --op rmsnorm --shape M=64,N=1024 --overhead --json > "$TMP/one.json" 2> "$TMP/err" ||
    bad "lib bench --overhead (one kernel): $(head -c 300 "$TMP/err")"
# per launch: "ID0 ID1 ID2 M N" from its param lines
awk '/^launch/ { if (n) print s; s = ""; n = 1; next }
     /^param [012] buf/ { if ($5 != 0) s = s " off" $5; s = s " " $4 }
     /^param [45] int/ { s = s " " $4 }
     END { if (n) print s }' "$TMP/log" > "$TMP/params"
launches=$(grep -c '^launch' "$TMP/log")
[ "$launches" -ge 1000 ] && ok || bad "only $launches launches logged"
# the bench's own launches come first (its buffers): the overhead's are the rest
bench=$(head -1 "$TMP/params")
grep -vxF "$bench" "$TMP/params" > "$TMP/ov"
sets=$(sort -u "$TMP/ov" | wc -l)
[ "$sets" -eq 2 ] && ok || { bad "the overhead's launches name $sets buffer sets, not 2:"; sort "$TMP/ov" | uniq -c | head; }
grep -q off "$TMP/params" && bad "a tensor passed at an offset" || ok
grep -vq ' 64 1024$' "$TMP/params" && bad "dims other than M=64, N=1024 passed" || ok
first=$(head -1 "$TMP/ov")                  # the raw launch's set, the first of the two
second=$(grep -vxF "$first" "$TMP/ov" | head -1)
last2=$(tail -2 "$TMP/ov" | paste -sd'|' -)
[ "$last2" = "$first|$second" ] && ok || bad "the rebind check's launches: '$last2', not '$first|$second'"
for f in select_ns lib_launch_us raw_launch_us added_us launch_only_us moved_us first_us; do
    grep -q "\"$f\"" "$TMP/one.json" && ok || bad "no \"$f\" in the JSON"
done
grep -q '"rebind_bytes_differ":0' "$TMP/one.json" && ok || bad "the rebound launch's buffers differ"

# a sequence: two launches a call, the workspace allocated once
rm -f "$TMP/log"
CAKE_LIBHIP=$FAKE FAKE_HIP_LOG=$TMP/log "$CAKEC" lib bench "$LIB" --op rmsnorm --shape M=4,N=4096 \
    --overhead --json > "$TMP/seq.json" 2> "$TMP/err" || bad "lib bench --overhead (a sequence): $(head -c 300 "$TMP/err")"
grep -q '"variant":"split"' "$TMP/seq.json" && ok || bad "the sequence variant was not the one chosen"
launches=$(grep -c '^launch' "$TMP/log")
[ $((launches % 2)) -eq 0 ] && [ "$launches" -ge 2000 ] && ok || bad "$launches launches of a two-launch sequence"
mallocs=$(grep -c '^malloc' "$TMP/log")
[ "$mallocs" -le 16 ] && ok || bad "$mallocs device allocations for $launches launches"
grep -q '"raw_launch_us"' "$TMP/seq.json" && bad "a sequence reports a raw launch" || ok

echo "launch cache: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
