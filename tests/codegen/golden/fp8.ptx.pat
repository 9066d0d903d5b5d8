# f32 pairs to fp8 pairs: one cvt.rn.satfinite per two lanes, both formats
cvt\.rn\.satfinite\.e4m3x2\.f32
cvt\.rn\.satfinite\.e5m2x2\.f32
# fp8 pairs to f16 pairs, exact
cvt\.rn\.f16x2\.e4m3x2
cvt\.rn\.f16x2\.e5m2x2
# the literals: e4m3 1.5 = 0x3C, e5m2 -2.0 = 0xC0
mov\.u16[[:space:]]+%rs[0-9]+, 60;
mov\.u16[[:space:]]+%rs[0-9]+, 192;
# nothing spills
!\.local
