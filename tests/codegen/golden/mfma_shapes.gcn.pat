# tests/codegen/amd/mfma_shapes.tir: one MFMA of each shape and input type the AMD
# code generator emits (gfx942 spelling with an underscore, gfx90a's without / _1k)
=1 v_mfma_f32_16x16x16_?f16
=1 v_mfma_f32_32x32x8_?bf16
=1 v_mfma_f32_32x32x2_?f32
!scratch_
