# Ampere multistage GEMM: cp.async ring, ldmatrix, mma.sync
\.entry gemm_sm80\(
cp\.async\.cg\.shared\.global \[%r[0-9]+\], \[%rd[0-9]+\], 16, %r[0-9]+;
cp\.async\.commit_group
cp\.async\.wait_group 0
\.reqntid 128, 1, 1
ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16
mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32
# the epilogue's per-element mask (ragged M, N): one 16-bit store per element
st\.global\.(b16|u16)
!\.local
!wgmma
