#!/bin/bash
# sweep_tc.sh — parameter sweeps of the tile examples at 4096^3 (gemm) and the
# SIMT examples' checks after a code-generation change; one device call.
C=.carry/cakec; export LD_LIBRARY_PATH=.carry
b() { timeout 60 $C run "$@" --runs 20 2>&1 | tail -1 | sed "s|^|$* :: |" | cut -c1-200; }
for ex in vector_add copy rmsnorm softmax layernorm; do timeout 120 $C run examples/$ex.tir --check 2>&1 | grep -c pass | sed "s|^|$ex checks passed: |"; done
for s in 2048 4096 8192; do b examples/gemm_sm90.tir --bench --shape M=$s,N=$s,K=$s; done
for v in GROUP_M=4 GROUP_M=16 STAGES=3 BN=128 BN=128,STAGES=6; do b examples/gemm_sm90.tir --bench --shape M=4096,N=4096,K=4096 --set $v; done
for v in BN=128 BN=256 BM=256 STAGES=4 BN=256,STAGES=2; do b examples/gemm_sm80.tir --bench --shape M=4096,N=4096,K=4096 --set $v; done
timeout 60 $C run examples/gemm_sm80.tir --check --set BN=256 2>&1 | tail -3
b examples/flash_attn_fwd_d64.tir --bench --shape BH=128,S=4096 --set STAGES=3
b examples/flash_attn_fwd_d64.tir --bench --shape BH=128,S=4096 --set BN=64,STAGES=4
python3 - <<'PY'
import torch
from triton.testing import do_bench
for n in (2048, 4096, 8192):
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16); b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    ms = do_bench(lambda: a @ b.t(), warmup=25, rep=200, return_mode="median")
    print(f"cublas {n}: {ms:.4f} ms {2*n**3/ms/1e9:.1f} TFLOP/s")
from torch.nn.attention import sdpa_kernel, SDPBackend
q = torch.randn(4, 32, 4096, 64, device="cuda", dtype=torch.bfloat16)
for causal in (False, True):
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        ms = do_bench(lambda: torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=causal), warmup=10, rep=100, return_mode="median")
    print(f"sdpa d64 causal={causal}: {ms:.3f} ms")
PY
