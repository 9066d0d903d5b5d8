# warp-specialized Hopper GEMM: TMA ring, wgmma from descriptors, setmaxnreg roles,
# stmatrix + TMA-store epilogue
\.entry gemm_sm90\(
\.maxnreg 168
\.param \.align 64 \.b8 gemm_sm90_param_[0-9]+\[128\]
cvta\.param\.u64
mbarrier\.init\.shared::cta\.b64
fence\.mbarrier_init\.release\.cluster
setmaxnreg\.dec\.sync\.aligned\.u32 40
setmaxnreg\.inc\.sync\.aligned\.u32 232
mbarrier\.try_wait\.parity\.shared::cta\.b64
mbarrier\.arrive\.expect_tx\.shared::cta\.b64
49152
cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier::complete_tx::bytes
wgmma\.fence\.sync\.aligned
wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.bf16\.bf16
wgmma\.commit_group\.sync\.aligned
wgmma\.wait_group\.sync\.aligned 1
stmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16
fence\.proxy\.async\.shared::cta
cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group
cp\.async\.bulk\.wait_group\.read 1
!\.local
