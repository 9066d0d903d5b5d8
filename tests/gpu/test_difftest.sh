#!/bin/sh
# test_difftest.sh — the host half of the differential tester (no GPU):
#   1. tests/gpu/hmax_neg.tir (the ptxas VIMNMX3 regression) compiles to PTX in which
#      no neg.s32 feeds an integer min/max chain (the workaround, codegen/cg_math.c),
#      and ptxas assembles it;
#   2. tirgen.py kernels of a few seeds pass `cakec check`, their references evaluate on
#      the checker's shapes (cake_refcheck), they compile, and ptxas assembles them;
#   3. reduce.py shrinks: a generated kernel under a fake failure ("it contains hsum"),
#      and hmax_neg.tir under "its PTX contains max.s32".
# Needs python3 (else skipped, 77); ptxas is used when present.
set -u
C=${CAKEC:-build/cakec}
D=tests/gpu/difftest
command -v python3 > /dev/null || { echo "no python3: skipped"; exit 77; }
[ -n "${PTXAS:-}" ] && [ -x "$PTXAS" ] && PATH=$(dirname "$PTXAS"):$PATH
W=$(mktemp -d "${TMPDIR:-/tmp}/difftest.XXXXXX")
trap 'rm -rf "$W"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# 1. the workaround, in the PTX
$C tests/gpu/hmax_neg.tir --target sm_90a --emit ptx -o "$W/h.ptx" || bad "hmax_neg.tir does not compile"
# no neg.s32 result is an operand of a min/max.s32 (6 of them: the hmin and hmax chains)
neg_feeds_minmax() { # PTX: exit 0 when some neg.s32 result feeds min/max.s32 (or the count is not $2)
    awk -v want="$2" '{ gsub(/[,;]/, "") }
         $1 == "neg.s32" { neg[$2] = 1 }
         $1 ~ /^(max|min)\.s32$/ { n++; if (($3 in neg) || ($4 in neg)) bad = 1 }
         END { exit !(bad || n != want) }' "$1"
}
neg_feeds_minmax "$W/h.ptx" 6 && bad "hmax_neg PTX: a neg.s32 feeds min/max.s32, or not 6 of them"
# and the check itself sees the bug's pattern in the pre-workaround PTX
neg_feeds_minmax tests/gpu/hmax_neg.pre.ptx 3 || bad "the PTX check misses the pre-workaround pattern"
if command -v ptxas > /dev/null; then
    ptxas -arch=sm_90a "$W/h.ptx" -o /dev/null || bad "ptxas rejects hmax_neg's PTX"
fi

# 2. generated kernels: check, reference, compile, assemble
R=${CAKE_BINARY_DIR:-build}/tests/cake_refcheck
[ -x "$R" ] && RC="--refcheck $R" || { echo "no cake_refcheck: references not evaluated"; RC=; }
python3 $D/difftest.py --cakec "$C" --mode host $RC --seeds "${DIFFTEST_SEEDS:-1:16}" --jobs 2 \
    --reduce 0 --size mixed --out "$W/camp" > "$W/camp.log" 2>&1 || { cat "$W/camp.log"; bad "generated kernels"; }

# 3. the reducer
seed=1
while [ $seed -lt 50 ]; do
    python3 $D/tirgen.py --seed $seed -o "$W/g.tir"
    grep -q "hsum(" "$W/g.tir" && break
    seed=$((seed + 1))
done
python3 $D/reduce.py "$W/g.tir" --cakec "$C" -q --cmd "grep -q 'hsum(' {}" -o "$W/r.tir" --budget 60 \
    || bad "reduce.py failed on seed $seed"
n0=$(wc -l < "$W/g.tir"); n1=$(wc -l < "$W/r.tir")
[ "$n1" -lt $((n0 / 2)) ] || bad "reduce.py: seed $seed shrank from $n0 to $n1 lines only"
grep -q "hsum(" "$W/r.tir" || bad "reduce.py lost the failure"
$C check "$W/r.tir" || bad "the reduced kernel does not check"
python3 $D/reduce.py tests/gpu/hmax_neg.tir --cakec "$C" -q --ptx-contains 'max\.s32' -o "$W/h.tir" \
    --budget 60 || bad "reduce.py failed on hmax_neg.tir"
[ "$(wc -l < "$W/h.tir")" -lt 20 ] || bad "reduce.py: hmax_neg.tir did not shrink below 20 lines"
$C "$W/h.tir" --emit ptx -o "$W/h2.ptx" && grep -q 'max\.s32' "$W/h2.ptx" || bad "reduced hmax_neg lost max.s32"

[ $fail = 0 ] && echo "difftest host tests: ok (seed $seed: $n0 -> $n1 lines)"
exit $fail
