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
python3 - <<'PY' 2>&1 | tee -a "$LOG"
import torch, triton
from triton.testing import do_bench
for n in (4096, 8192):
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16); b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    ms = do_bench(lambda: a @ b.t(), warmup=25, rep=100, return_mode="median")
    print(f"cublas {n}^3: {ms:.3f} ms {2*n**3/ms/1e9:.1f} TFLOP/s")
q = torch.randn(4, 32, 4096, 128, device="cuda", dtype=torch.bfloat16)
from torch.nn.attention import sdpa_kernel, SDPBackend
for causal in (False, True):
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        ms = do_bench(lambda: torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=causal), warmup=10, rep=100, return_mode="median")
    f = 4 * 4 * 32 * 4096 * 4096 * 128 / (2 if causal else 1)
    print(f"sdpa flash causal={causal}: {ms:.3f} ms {f/ms/1e9:.1f} TFLOP/s")
PY
mkdir -p "$O/sass"
for f in examples/gemm_sm90.tir examples/flash_attn_fwd.tir; do
    b=$(basename $f .tir)
    "$C" $f --emit ptx -o "$O/sass/$b.ptx" && ptxas -arch=sm_90a -v "$O/sass/$b.ptx" -o "$O/sass/$b.cubin" 2>&1 | grep -E "Used|warn" | tee -a "$LOG"
    cuobjdump -sass "$O/sass/$b.cubin" > "$O/sass/$b.sass" 2>&1; say "$b HGMMA: $(grep -c HGMMA "$O/sass/$b.sass")"
done
tar czf "$O/smoke_raw.tar.gz" -C "$O" $(cd "$O" && ls *.txt) sass 2>/dev/null
