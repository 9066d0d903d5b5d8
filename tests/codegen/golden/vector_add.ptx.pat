# vector_add: 16-byte vector loads and stores, launch bounds, no local memory
\.entry vector_add\(
\.reqntid 256, 1, 1
ld\.global(\.nc)?\.v4\.(f32|b32)
st\.global\.v4\.(f32|b32)
!\.local
