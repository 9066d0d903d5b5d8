# persistent GEMM: the tile loop steps by the grid size
\.entry gemm_sm90_persistent\(
%nctaid\.x
wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.bf16\.bf16
cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group
!\.local
