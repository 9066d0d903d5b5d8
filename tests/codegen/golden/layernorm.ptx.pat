\.entry layernorm\(
ld\.global(\.nc)?\.v4\.(u32|b32)
shfl\.sync\.bfly\.b32
bar\.sync
rsqrt\.approx\.f32
st\.global\.v4\.b32
!\.local
