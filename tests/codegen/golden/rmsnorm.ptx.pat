# one bf16x8 load per vector, butterfly warp reduction, one barrier, rsqrt.approx
\.entry rmsnorm\(
ld\.global(\.nc)?\.v4\.(u32|b32)
shfl\.sync\.bfly\.b32
bar\.sync
rsqrt\.approx\.f32
# f32 pairs to bf16 pairs in one cvt (cg_math.c packed_narrow)
cvt\.rn\.bf16x2\.f32
st\.global\.v4\.b32
!\.local
