#!/bin/sh
# test_amd.sh — the AMD tile kernels under `cakec run --sim` (no AMD GPU here): the
# executor runs their TIR-L with 64-lane wavefronts and MFMA from the family's
# fragment maps (ir/tcfamily.h tc_fragment), at ragged shapes, for gfx942 and gfx90a,
# each against the fp64 reference like `run --check` (tests/sim/run_one.sh: every
# report ok, within 60 s). Not in shapes.txt: the H200 cannot run these targets.
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
pass=0 fail=0
one() {
    if sh "$ROOT/tests/sim/run_one.sh" "$CAKEC" "$@" > "${TMPDIR:-/tmp}/cake-amd-sim-$$.out" 2>&1; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); echo "FAIL: $*"; cat "${TMPDIR:-/tmp}/cake-amd-sim-$$.out"
    fi
    rm -f "${TMPDIR:-/tmp}/cake-amd-sim-$$.out"
}
for t in gfx942 gfx90a; do
    one "$ROOT/examples/gemm_gfx942.tir" --target $t --shape M=200,N=136,K=72
    one "$ROOT/examples/gemm_gfx942.tir" --target $t --shape M=17,N=300,K=100
    one "$ROOT/examples/flash_attn_fwd_gfx942.tir" --target $t --shape BH=2,S=100
    one "$ROOT/examples/flash_attn_fwd_gfx942.tir" --target $t --shape BH=1,S=129
    one "$ROOT/tests/codegen/amd/mfma_shapes.tir" --target $t
done
# a planted lowering bug (CAKE_PLANT_BUG=distribute-frag: two A elements of every
# @mfma swapped in distribute) is caught: the output differs from the reference
out=$(CAKE_PLANT_BUG=distribute-frag "$CAKEC" run "$ROOT/examples/gemm_gfx942.tir" --target gfx942 --sim \
      --shape M=200,N=136,K=72 --seed 7 2>&1)
if [ $? -eq 1 ] && printf '%s' "$out" | grep -q "E0957.*output 'C' differs from the reference"; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL: the planted distribute-frag bug in @mfma is not caught: $(printf '%s' "$out" | head -c 300)"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
