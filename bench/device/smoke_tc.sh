#!/bin/bash
# smoke_tc.sh — a short first device call for the tile path: the small TMA/wgmma
# kernels of tests/gpu/tc under `run --check`, then each tile example under --check
# (its own shapes), then a few benches; every command time-limited, logs under $OUT.
#   usage (device machine, repo root): bash bench/device/smoke_tc.sh
set -u
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out}
mkdir -p "$O"
export LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
LOG=$O/smoke.txt
say() { echo "$@" | tee -a "$LOG"; }
run() { # name limit args...
    local n=$1 l=$2; shift 2
    timeout -k 5 "$l" "$C" run "$@" > "$O/$n.txt" 2>&1
    local rc=$?
    say "$n: exit $rc"
    grep -E "pass|fail|FAIL|error|ms|TFLOP" "$O/$n.txt" | head -12 | tee -a "$LOG"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$LOG"
for t in tma_copy wgmma_kmajor wgmma_mnmajor wgmma_areg; do
    run "tc_$t" 60 tests/gpu/tc/$t.tir --check
done
run check_gemm_sm90 120 examples/gemm_sm90.tir --check
run check_flash 120 examples/flash_attn_fwd.tir --check
run check_flash_causal 120 examples/flash_attn_fwd.tir --check --set CAUSAL=1
run check_gemm_sm80 120 examples/gemm_sm80.tir --check
run bench_gemm_sm90_4096 60 examples/gemm_sm90.tir --bench --shape M=4096,N=4096,K=4096 --runs 20
run bench_gemm_sm90_8192 60 examples/gemm_sm90.tir --bench --shape M=8192,N=8192,K=8192 --runs 10
run bench_flash 60 examples/flash_attn_fwd.tir --bench --shape BH=128,S=4096 --runs 10
run bench_gemm_sm80 60 examples/gemm_sm80.tir --bench --shape M=4096,N=4096,K=4096 --runs 10
# the peers, from the one script that measures them (JSON)
python3 bench/device/tc_peers.py --only cublas_bf16_4096,cublas_bf16_8192,sdpa_flash_d128 2>/dev/null | tee -a "$LOG"
mkdir -p "$O/sass"
for f in examples/gemm_sm90.tir examples/flash_attn_fwd.tir; do
    b=$(basename $f .tir)
    "$C" $f --emit ptx -o "$O/sass/$b.ptx" && ptxas -arch=sm_90a -v "$O/sass/$b.ptx" -o "$O/sass/$b.cubin" 2>&1 | grep -E "Used|warn" | tee -a "$LOG"
    cuobjdump -sass "$O/sass/$b.cubin" > "$O/sass/$b.sass" 2>&1; say "$b HGMMA: $(grep -c HGMMA "$O/sass/$b.sass")"
done
tar czf "$O/smoke_raw.tar.gz" -C "$O" $(cd "$O" && ls *.txt) sass 2>/dev/null
