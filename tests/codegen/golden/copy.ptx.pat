\.entry copy\(
ld\.global(\.nc)?\.v4\.(u32|b32)
st\.global\.v4\.(u32|b32)
!\.local
