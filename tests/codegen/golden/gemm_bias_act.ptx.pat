# GEMM + bias + SiLU: the bias read per column (masked), ex2 for exp, TMA store
\.entry gemm_bias_act\(
wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.bf16\.bf16
# the masked bias load: one predicated 4-byte load
@%p[0-9]+ ld\.global(\.nc)?\.b32
ex2\.approx
cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group
!\.local
