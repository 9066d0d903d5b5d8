# flash attention: 3-D TMA boxes, S = Q K^T from descriptors (the first k-step fresh: scale-d 0), O += P V with P in
# registers and V MN-major, online softmax with shuffles and ex2
\.entry flash_attn_fwd\(
setmaxnreg\.dec\.sync\.aligned\.u32 24
setmaxnreg\.inc\.sync\.aligned\.u32 240
cp\.async\.bulk\.tensor\.3d\.shared::cluster\.global\.mbarrier::complete_tx::bytes
wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 \{[^}]*\}, %rd[0-9]+, %rd[0-9]+, 0, 1, 1, 0, 0;
wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 \{[^}]*\}, %rd[0-9]+, %rd[0-9]+, 1, 1, 1, 0, 0;
wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 \{[^}]*\}, \{%r[0-9]+, %r[0-9]+, %r[0-9]+, %r[0-9]+\}, %rd[0-9]+, 1, 1, 1, 1;
shfl\.sync\.bfly\.b32
ex2\.approx
stmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16
cp\.async\.bulk\.tensor\.3d\.global\.shared::cta\.bulk_group
!\.local
