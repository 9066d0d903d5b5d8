# gemm_gfx942 (examples/gemm_gfx942.tir), gfx942 and gfx90a: the counts its schedule
# implies. Per k-tile: BK / 8 = 4 k-steps x (2 x 2) atoms = 16 MFMAs 32x32x8 bf16
# (gfx942 spells it v_mfma_f32_32x32x8_bf16, gfx90a v_mfma_f32_32x32x8bf16_1k), and
# per k-step 2 + 2 ds_read_b64 (one per atom row of A and of B) = 16; the loop body
# holds two k-tiles: 32 MFMAs, 32 LDS reads. Staging: BM * BK / (4 * 256) = 4 chunks
# of A and 4 of B per k-tile, one global_load_dwordx2 and one ds_write_b64 each:
# 8 in the prologue + 2 x 8 in the body = 24 of each. Barriers: the prologue's and
# one per k-tile of the body: 3 s_barrier. No scratch (spills).
=32 v_mfma_f32_32x32x8_?bf16
=32 ds_read_b64 
=24 ds_write_b64 
=24 global_load_dwordx2 
=3 s_barrier
s_waitcnt vmcnt[(]
s_waitcnt lgkmcnt[(]
v_accvgpr_read_b32
!scratch_
!buffer_store
