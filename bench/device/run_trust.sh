#!/bin/bash
# run_trust.sh — the trust and cost-model device session in one call (builds nothing there):
#   1. tests/gpu/difftest/run.sh: the ptxas -hmax(-v) regression (with and without the
#      workaround, SASS of both) and the generated-kernel campaign (DT_* knobs)
#   2. tests/gpu/test_oracle_large.sh: run --check at real sizes by sampling, value ranges,
#      bench refusing a shape outside the assumes
#   3. bench/device/calibrate_cost.sh: the cost model's calibration sweep
#   usage (on the device machine, from the repo root):  bash bench/device/run_trust.sh
#   expects .carry/ from bench/device/carry.sh. Output under $OUT: difftest/, large.txt,
#   calibration.md/.json, trust_log.txt (difftest/ is packed into difftest.tgz)
#   TRUST_STEPS (default "difftest large calibrate") picks the steps
set -u
export LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
export CAKEC=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out}
mkdir -p "$O"
LOG=$O/trust_log.txt
T0=$SECONDS
say() { echo "$@" | tee -a "$LOG"; }
STEPS=${TRUST_STEPS:-"difftest large calibrate"}
wants() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
if wants difftest; then
say "== difftest (at 0 s)"
DT_DEADLINE=${DT_DEADLINE:-150} DT_REDUCE_BUDGET=${DT_REDUCE_BUDGET:-60} bash tests/gpu/difftest/run.sh > /dev/null 2>&1
say "difftest exit $? in $((SECONDS - T0)) s"
fi
if wants large; then
say "== oracle at real sizes (at $((SECONDS - T0)) s)"
timeout 180 sh tests/gpu/test_oracle_large.sh > "$O/large.txt" 2>&1
say "test_oracle_large exit $? in $((SECONDS - T0)) s"
fi
if wants calibrate; then
say "== cost calibration (at $((SECONDS - T0)) s)"
CAL_DEADLINE=${CAL_DEADLINE:-150} bash bench/device/calibrate_cost.sh > "$O/cal_log.txt" 2>&1
say "calibration exit $? in $((SECONDS - T0)) s"
fi
# the device call brings back a few files only: the campaign's kernels travel as one archive
[ -d "$O/difftest" ] && tar czf "$O/difftest.tgz" --exclude='*.cubin' -C "$O" difftest && rm -rf "$O/difftest"
