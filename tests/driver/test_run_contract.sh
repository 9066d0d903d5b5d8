#!/bin/sh
# test_run_contract.sh — `cakec run` refuses, before opening any GPU, a shape
# that breaks the kernel's contract: an assume that does not hold (E0961 at
# the assume, for --bench as for --check) or an empty `values` range (E0124), and
# an option value that is wrong (--tol-scale below 1: E0002).
# Needs no GPU: the refusal comes first (exit 1, not the no-GPU exit 3).
# Prints `N passed, N failed`.
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cake_contract.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# expect RC CODE LINE -- cakec args...: exit status, the code and its line in --json
expect() {
    rc=$1 code=$2 line=$3
    shift 4
    "$CAKEC" "$@" --json > "$tmp/out.json" 2> "$tmp/err"
    got=$?
    [ "$got" -eq "$rc" ] || { bad "$*: exit $got, want $rc"; return; }
    grep -q "\"code\":\"$code\"" "$tmp/out.json" || { bad "$*: no $code in $(cat "$tmp/out.json")"; return; }
    grep -q "\"code\":\"$code\",[^}]*\"line\":$line," "$tmp/out.json" ||
        { bad "$*: $code not at line $line"; return; }
    ok
}

# softmax's row must fit in registers: N <= THREADS * 4 * ITERS (line 21)
expect 1 E0961 21 -- run "$ROOT/examples/softmax.tir" --bench --shape N=10000
expect 1 E0961 21 -- run "$ROOT/examples/softmax.tir" --check --shape M=4,N=10000
expect 1 E0961 20 -- run "$ROOT/examples/softmax.tir" --bench --shape N=8190
# the text form names the assume and says why
"$CAKEC" run "$ROOT/examples/softmax.tir" --bench --shape N=10000 > "$tmp/out" 2>&1
grep -q "softmax.tir:21:10: error\[E0961\]: this assume does not hold for .*N=10000.*refusing to time" "$tmp/out" &&
    ok || bad "text E0961: $(cat "$tmp/out")"
# a shape within the assumes gets past the contract (to the missing GPU: exit 3)
"$CAKEC" run "$ROOT/examples/softmax.tir" --bench --shape N=4096 > /dev/null 2>&1
[ $? -eq 3 ] && ok || bad "softmax N=4096 was refused before the device"
# `values 0 .. V` is empty at V = 0 (cross_entropy assumes V >= 1: use a copy without it)
sed 's/^  assume V >= 1$//' "$ROOT/examples/cross_entropy.tir" > "$tmp/ce.tir"
expect 1 E0124 16 -- run "$tmp/ce.tir" --check --shape B=4,V=0
# --tol-scale only widens: below 1 (or not a number) is E0002 before any GPU; 256 passes on
"$CAKEC" run "$ROOT/examples/attn_decode_merge.tir" --check --tol-scale 0.5 --json > "$tmp/out.json" 2>&1
[ $? -eq 1 ] && grep -q '"code":"E0002"' "$tmp/out.json" && ok || bad "--tol-scale 0.5: $(cat "$tmp/out.json")"
"$CAKEC" run "$ROOT/examples/attn_decode_merge.tir" --check --tol-scale x > /dev/null 2>&1
[ $? -eq 1 ] && ok || bad "--tol-scale x was accepted"
"$CAKEC" run "$ROOT/examples/attn_decode_merge.tir" --check --tol-scale 256 > /dev/null 2>&1
[ $? -eq 3 ] && ok || bad "--tol-scale 256 was refused before the device"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
