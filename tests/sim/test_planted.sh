#!/bin/sh
# test_planted.sh — `run --sim` catches planted lowering bugs (CAKE_PLANT_BUG,
# passes.h pass_planted; docs/sim.md) and reports each with its diagnostic,
# golden: the code, its place in the example and the start of its message.
#   distribute-frag  a wrong fragment index in distribute (wgmma, mma.sync, MFMA): wrong values (E0957)
#   async-no-wait    no wgmma wait in the loop: a race (E0981)
#   pipes-parity     the producer waits on the wrong phase: a deadlock (E0980)
# and a race between two warpgroups of a kernel (tests/sim/race, E0981 from the vector clocks).
set -u
CAKEC=${CAKEC:-build/cakec}
fail=0
# BUG FILE SHAPE EXPECT (CODE@LINE:COL:message start)
while read -r bug file shape expect; do
    out=$(CAKE_PLANT_BUG=$bug "$CAKEC" run "$file" --sim --shape "$shape" --seed 7 --json)
    rc=$?
    got=$(printf '%s' "$out" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
for d in doc["diagnostics"]:
    if d["code"] in ("E0957", "E0980", "E0981", "E0982", "E0984"):
        sp = d.get("span") or {}
        msg = d["message"].replace("run --sim: ", "")
        print("%s@%s:%s:%s" % (d["code"], sp.get("line"), sp.get("col"), msg[:64].replace(" ", "_")))
        break')
    if [ "$rc" = 1 ] && [ "$got" = "$expect" ]; then
        echo "ok   $bug $file: $got"
    else
        echo "FAIL $bug $file: exit $rc, got '$got', want '$expect'"
        fail=1
    fi
done <<'LIST'
distribute-frag examples/gemm_sm90.tir M=200,N=264,K=136 E0957@26:3:output_'C'_differs_from_the_reference_at_[0,_0]_(shape_M=200,_N=
async-no-wait examples/gemm_sm90.tir M=200,N=264,K=520 E0981@55:7:a_TMA_load_overwrites_shared_byte_0_of_`As`_that_a_wgmma_or_TMA_
async-no-wait examples/flash_attn_fwd.tir BH=2,S=200 E0981@97:9:thread_224_reads_an_accumulator_register_that_a_wgmma_in_flight_
distribute-frag examples/gemm_sm80.tir M=150,N=136,K=200 E0957@26:3:output_'C'_differs_from_the_reference_at_[0,_0]_(shape_M=150,_N=
distribute-frag examples/gemm_gfx942.tir M=150,N=200,K=68 E0957@36:3:output_'C'_differs_from_the_reference_at_[0,_0]_(shape_M=150,_N=
pipes-parity examples/gemm_sm90.tir M=200,N=264,K=136 E0980@54:7:deadlock_in_block_(0,_0,_0):_no_thread_can_go_on_and_no_asynchro
LIST
# a race in a kernel (no bug planted): the vector clocks order every other access
out=$("$CAKEC" run tests/sim/race/attn_bwd_xwg_race.tir --sim --tol-scale 16 --set CAUSAL=1,XWG=1 \
      --shape BH=2,S=300 --seed 7 --json | python3 -c '
import json, sys
for d in json.load(sys.stdin)["diagnostics"]:
    if d["code"] == "E0981":
        print("%s@%s:%s" % (d["code"], d["span"]["line"], d["span"]["col"]))
        break')
if [ "$out" = "E0981@180:5" ]; then
    echo "ok   race tests/sim/race/attn_bwd_xwg_race.tir: $out"
else
    echo "FAIL race tests/sim/race/attn_bwd_xwg_race.tir: got '$out', want 'E0981@180:5'"
    fail=1
fi
# with no bug planted the same runs pass
for f in "examples/gemm_sm90.tir M=200,N=264,K=520" "examples/flash_attn_fwd.tir BH=2,S=200"; do
    set -- $f
    if ! "$CAKEC" run "$1" --sim --shape "$2" --seed 7 > /dev/null 2>&1; then
        echo "FAIL $1 at $2 does not pass run --sim without a planted bug"
        fail=1
    fi
done
exit $fail
