# exp2_fma.tir: the polynomial exp2 (min.NaN, the rounding adds, Horner fmas, the exponent
# bits shifted in, the select below -125) and one ex2.approx for the plain exp2
=1 ex2\.approx
min\.NaN\.f32
fma\.rn\.f32 .*0f3F317169
fma\.rn\.f32 .*0f3F7FFB0E
shl\.b32 .*, 23;
selp\.f32 .*0f00000000
!local
