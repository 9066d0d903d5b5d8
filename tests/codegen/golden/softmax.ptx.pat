\.entry softmax\(
\.entry softmax_warp\(
ld\.global(\.nc)?\.v4\.f32
st\.global\.v4\.f32
shfl\.sync\.bfly\.b32
bar\.sync
ex2\.approx\.ftz\.f32
!\.local
