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
# the peers, from the one script that measures them (JSON)
python3 bench/device/tc_peers.py --only cublas_bf16,sdpa_flash_d64
