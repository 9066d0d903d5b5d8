#!/bin/bash
# run_tune.sh — issue 9's device acceptance in one call (builds nothing there): `cakec tune`
# on gemm_sm90 and rmsnorm at two shapes each (the file's defaults are always measured, so
# the summary says whether tune matches or beats the hand-set parameters), then a tune run
# with a faulting and an endless candidate in the middle (tests/agent/spin.tir; the fault
# is injected by tests/agent/crash_wrapper.sh). Output under $OUT/tune: one .txt per run,
# the best variants, tune_log.txt.
#   usage (on the device machine, from the repo root):  bash bench/device/run_tune.sh
set -u
export LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
export CAKE_COST_DEVICE=${CAKE_COST_DEVICE:-h200}   # predict for the GPU that measures
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out}/tune
mkdir -p "$O"
LOG=$O/tune_log.txt
T0=$SECONDS
say() { echo "$@" | tee -a "$LOG"; }
tune() { # name timeout args...
    local name=$1 lim=$2
    shift 2
    timeout "$lim" "$C" tune "$@" -o "$O/$name.best.tir" > "$O/$name.txt" 2>&1
    say "$name: exit $? at $((SECONDS - T0)) s: $(tail -2 "$O/$name.txt" | tr '\n' ' ')"
}
G="BM=128,256 BN=128,256 STAGES=3,4,5,6"
tune gemm_4096 150 examples/gemm_sm90.tir --space $G --shape M=4096,N=4096,K=4096 --top 6 --check
tune gemm_8192 150 examples/gemm_sm90.tir --space $G --shape M=8192,N=8192,K=8192 --top 6 --check
R="THREADS=128,256,512 VEC=4,8 ITERS=2,4,8"
tune rms_8192 90 examples/rmsnorm.tir --space $R --shape M=16384,N=8192 --top 6 --check
tune rms_4096 90 examples/rmsnorm.tir --space $R --shape M=4096,N=4096 --top 6 --check
(export CAKEC=$C CAKE_RUN_CMD=tests/agent/crash_wrapper.sh
 tune spin 150 tests/agent/spin.tir --space SPIN=0,1,1000000,2 --top 4 --timeout 5 \
     --child-timeout 60 --shape N=1048576)
# the device call brings back a few files only: the runs travel as one archive
tar czf "${OUT:-/tmp/cake-out}/tune.tgz" -C "${OUT:-/tmp/cake-out}" tune && cat "$LOG"
