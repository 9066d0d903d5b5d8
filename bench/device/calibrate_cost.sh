#!/bin/bash
# calibrate_cost.sh — the cost model's calibration sweep, one device call (< 5 min):
# 59 variants of the GEMM (sm_90a wgmma and sm_80 mma.sync paths), attention and
# SIMT examples, each predicted by `cakec cost` and measured by `cakec run --bench`;
# writes $OUT/calibration.md (per-variant table, Spearman per family and overall,
# median abs error, interval coverage, predicted-best gap) and $OUT/calibration.json.
#   here:       sh bench/device/carry.sh          (fills .carry/)
#   on device:  bash bench/device/calibrate_cost.sh   (carry: .carry)
# CAL_DEADLINE (s, default 270) stops measuring new variants; the table is still written.
set -u
export LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-}
export CAKE_COST_DIR=${CAKE_COST_DIR:-bench/cost}
python3 bench/device/calibrate_cost.py --cakec "${CAKEC:-.carry/cakec}" --device "${CAL_DEVICE:-h200}" \
    --deadline "${CAL_DEADLINE:-270}" --runs "${CAL_RUNS:-20}" "$@"
