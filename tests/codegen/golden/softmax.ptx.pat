\.entry softmax\(
\.entry softmax_warp\(
# the masked 16-byte accesses are predicated (no branch): @%p ld/st of 4 x b32
@%p[0-9]+ ld\.global(\.nc)?\.v4\.b32
@%p[0-9]+ st\.global\.v4\.b32
shfl\.sync\.bfly\.b32
bar\.sync
ex2\.approx\.ftz\.f32
!\.local
