# exp2_fma.tir on AMD: the same sequence (Horner fmas, the exponent bits shifted in), one v_exp_f32
v_fmaak_f32 .*0x3f317169
v_lshl_add_u32 .*, 23,
=1 v_exp_f32
