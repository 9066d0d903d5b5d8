#!/bin/bash
# run.sh — the differential-testing campaign on the device in one call (builds nothing
# there; docs/checking.md, "Differential testing"):
#   1. the ptxas regression (tests/gpu/hmax_neg.tir): run --check at M=5 and on the
#      checker's shapes, and at M=5 without the workaround (CAKE_NO_MINMAX_FOLD=1, expected
#      to fail while ptxas has the bug); SASS of both PTX files: VIMNMX3, IMNMX, negations
#   2. difftest.py: generated kernels DT_SEEDS (default 1:300) with DT_JOBS processes
#      (default 12), `cakec run --check` each, classify, reduce up to DT_REDUCE failures
#   usage (on the device machine, from the repo root):  bash tests/gpu/difftest/run.sh
#   expects .carry/cakec, .carry/libcake-llvm.so (bench/device/carry.sh) and python3
# Output under $OUT/difftest: log.txt, summary.md (the table), results.tsv, kernels/
# (each failing kernel), reduced/ (their reductions), hmax_neg.*.
set -u
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out}/difftest
mkdir -p "$O"
LOG=$O/log.txt
export LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
export PYTHONUNBUFFERED=1
say() { echo "$@" | tee -a "$LOG"; }
T0=$SECONDS

say "== device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
say "== cakec: $($C --version 2>&1)"
say "== ptxas: $(ptxas --version 2>&1 | tail -1)"

# 1. the hmax regression
H=tests/gpu/hmax_neg.tir
$C run $H --check --shape M=5 --json > "$O/hmax_neg.check_m5.json" 2>>"$LOG"
say "hmax_neg run --check --shape M=5: exit $? (expect 0)"
$C run $H --check --json > "$O/hmax_neg.check.json" 2>>"$LOG"
say "hmax_neg run --check (checker's shapes): exit $? (expect 0)"
CAKE_NO_MINMAX_FOLD=1 $C run $H --check --shape M=5 --json > "$O/hmax_neg.nofold.json" 2>>"$LOG"
say "hmax_neg without the workaround (CAKE_NO_MINMAX_FOLD=1): exit $? (1 while ptxas has the bug)"
CAKE_NO_MINMAX_FOLD=1 $C $H --target sm_90a --emit ptx -o "$O/hmax_neg.nofold.ptx" 2>>"$LOG"
$C $H --target sm_90a --emit ptx -o "$O/hmax_neg.ptx" 2>>"$LOG"
for b in hmax_neg hmax_neg.nofold; do
    p=$O/$b.ptx
    if ptxas -arch=sm_90a "$p" -o "$O/$b.cubin" 2>>"$LOG" && command -v cuobjdump > /dev/null; then
        cuobjdump -sass "$O/$b.cubin" > "$O/$b.sass" 2>>"$LOG"
        say "SASS $b: $(grep -cE 'VIMNMX3' "$O/$b.sass") VIMNMX3, $(grep -cE 'IMNMX' "$O/$b.sass") *IMNMX*, $(grep -cE 'IADD3 .*-R|INEG|IADD.*RZ, -' "$O/$b.sass") negating adds"
    else
        say "SASS $b: ptxas or cuobjdump missing/failed"
    fi
done

# 2. the campaign
# worst case: DT_DEADLINE + DT_TIMEOUT (kernels started by the deadline) + DT_REDUCE_BUDGET
# + DT_TIMEOUT (the reductions run in parallel): 120 + 30 + 90 + 30 s = 4.5 min
python3 tests/gpu/difftest/difftest.py --cakec "$C" --seeds "${DT_SEEDS:-1:300}" \
    --jobs "${DT_JOBS:-12}" --deadline "${DT_DEADLINE:-120}" --timeout "${DT_TIMEOUT:-30}" \
    --reduce "${DT_REDUCE:-6}" --reduce-budget "${DT_REDUCE_BUDGET:-90}" --out "$O" >> "$LOG" 2>&1
say "difftest: exit $? (0: every kernel passed) after $((SECONDS - T0)) s"
cat "$O/summary.md" 2>/dev/null
