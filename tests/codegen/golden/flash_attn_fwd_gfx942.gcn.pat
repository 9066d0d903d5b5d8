# flash_attn_fwd_gfx942 (examples/flash_attn_fwd_gfx942.tir), gfx942 and gfx90a: the
# counts its schedule implies. The loop body holds two KV blocks of 32 keys, each
# 8 MFMAs for S^T (K = 64) + 8 for O^T (two 32-row atoms of d x 4 k-steps): 32.
# LDS reads: qb once (8 ds_read_b64) + 8 per block for K = 24 ds_read_b64; V^T 32
# ds_read_u16 per block + the epilogue's 32 = 96. Staging: Q 8, K and V 2 + 2 per
# block (prologue and the two halves): 8 + 4 + 8 = 20 global_load_dwordx2 and 20
# ds_write_b64. Column statistics: colmax and colsum per block, one ds_bpermute_b32
# each (lanes l and l ^ 32) = 4. exp2: 16 scores + 1 alpha per block = 34
# v_exp_f32. Barriers: after Q/K0/V0, after each block's refill, after Os: 4.
=32 v_mfma_f32_32x32x8_?bf16
=24 ds_read_b64 
=96 ds_read_u16 
=20 global_load_dwordx2 
=20 ds_write_b64 
=4 ds_bpermute_b32
=34 v_exp_f32
=4 s_barrier
=32 global_store_short 
!scratch_
