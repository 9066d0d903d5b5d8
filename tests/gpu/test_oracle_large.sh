#!/bin/sh
# test_oracle_large.sh — `cakec run` on a GPU at real sizes (the lead runs it;
# skipped, exit 77, where there is no GPU):
#   - `--check` at shapes over the 2^27-element host limit samples rows
#     (rmsnorm 16384 x 4096, cross_entropy 8192 x 32000) or output tiles
#     (gemm_sm90 8192^3) and passes; the report says what it sampled;
#   - cross_entropy's `values 0 .. V` targets keep its gather in bounds under
#     --check (picked shapes) and --bench;
#   - --bench refuses softmax at N = 10000 (an assume fails: E0961).
# By hand: CAKEC=build/cakec sh tests/gpu/test_oracle_large.sh
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
EX=$ROOT/examples
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cake_large.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
"$CAKEC" run "$EX/copy.tir" --check --json > "$tmp/probe.json" 2>&1
if grep -q '"E0973"' "$tmp/probe.json"; then
    echo "no GPU: skipped"
    exit 77
fi
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# check FILE SHAPE KIND OF: passes, sampled KIND ("rows"/"tiles") out of OF
check() {
    "$CAKEC" run "$1" --check --shape "$2" --json > "$tmp/out.json" 2> "$tmp/err"
    rc=$?
    [ $rc -eq 0 ] || { bad "$1 $2: exit $rc: $(cat "$tmp/out.json" "$tmp/err")"; return; }
    grep -q "\"sample\":{\"kind\":\"$3\",\"count\":[0-9]*,\"of\":$4[,}]" "$tmp/out.json" ||
        { bad "$1 $2: not sampled as $3 of $4: $(cat "$tmp/out.json")"; return; }
    ok
    "$CAKEC" run "$1" --check --shape "$2" | sed 's/^/    /'
}
check "$EX/rmsnorm.tir" M=16384,N=4096 rows 16384
check "$EX/cross_entropy.tir" B=8192,V=32000 rows 8192
check "$EX/gemm_sm90.tir" M=8192,N=8192,K=8192 tiles 262144

"$CAKEC" run "$EX/cross_entropy.tir" --check > "$tmp/out" 2>&1 && ok ||
    bad "cross_entropy --check: $(cat "$tmp/out")"
"$CAKEC" run "$EX/cross_entropy.tir" --bench > "$tmp/out" 2>&1 && ok ||
    bad "cross_entropy --bench: $(cat "$tmp/out")"
"$CAKEC" run "$EX/softmax.tir" --bench --shape N=10000 > "$tmp/out" 2>&1
[ $? -eq 1 ] && grep -q 'E0961' "$tmp/out" && ok || bad "softmax N=10000 was timed: $(cat "$tmp/out")"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
