/* tcfamily.c — the tensor-core family rows (tcfamily.h). Sources: PTX ISA 8.5
 * "Warp-level matrix multiply-accumulate instructions" (mma.sync: a warp,
 * register fragments, synchronous) and "Asynchronous warpgroup level matrix
 * multiply-accumulate" (wgmma: four warps, A from registers or a descriptor,
 * B from a descriptor, wgmma.fence / commit_group / wait_group); AMD CDNA3 ISA
 * "Matrix arithmetic instructions" (MFMA: one wavefront, A/B/C in VGPRs or
 * AGPRs, dependent instructions interlocked by the hardware). */
#include <string.h>
#include "tcfamily.h"
#include "targets.h"

const TcFamilyInfo tc_families[TCF__COUNT] = {
    [TCF_NONE] = {TCF_NONE, "none", OP_NONE, OP_NONE, OP_NONE, OP_NONE, OP_NONE, OP_NONE, 0, TCS_WARP, 1, LY_NONE, LY_NONE,
                  LY_NONE, TCO_REG, TCO_REG, 32, 0, TCA_NONE, CC_FREE, "", 0},
    [TCF_MMA_SYNC] = {TCF_MMA_SYNC, "mma.sync", OP_MMA, OP_L_MMA, OP_NONE, OP_NONE, OP_NONE, OP_NONE,
                      TF_MMA_SYNC, TCS_WARP, 1,
                      LY_MMA, LY_MMA_A, LY_MMA_B, TCO_REG, TCO_REG, 32, 1, TCA_NONE, CC_MMA,
                      "m%un%uk%u", 0},
    [TCF_WGMMA] = {TCF_WGMMA, "wgmma", OP_WGMMA, OP_L_WGMMA, OP_WGMMA_WAIT, OP_L_WG_FENCE,
                   OP_L_WG_COMMIT, OP_L_WG_WAIT, TF_WGMMA, TCS_WARPGROUP, 0,
                   LY_WGMMA, LY_WGMMA_A, LY_NONE, TCO_REG_OR_SMEM, TCO_SMEM_DESC, 32, 0,
                   TCA_FENCE_COMMIT_WAIT, CC_WGMMA, "m%un%uk%u", 1},
    [TCF_MFMA] = {TCF_MFMA, "MFMA", OP_MFMA, OP_L_MFMA, OP_NONE, OP_NONE, OP_NONE, OP_NONE, TF_MFMA, TCS_WAVEFRONT, 1,
                  LY_MFMA, LY_MFMA_A, LY_MFMA_B, TCO_REG, TCO_REG, 32, 0, TCA_NONE, CC_MFMA,
                  "%ux%ux%u", 0},
    /* tcgen05 (sm_100a): reserved; no source op in TIR v1 */
    [TCF_TCGEN05] = {TCF_TCGEN05, "tcgen05", OP_NONE, OP_NONE, OP_NONE, OP_NONE, OP_NONE, OP_NONE,
                     TF_TCGEN05, TCS_WARPGROUP, 0,
                     LY_NONE, LY_NONE, LY_NONE, TCO_SMEM_DESC, TCO_SMEM_DESC, 32, 0, TCA_MBARRIER,
                     CC_WGMMA, "m%un%uk%u", 0},
};

TcFamily tc_family_of(Op op)
{
    switch (op) {
    case OP_MMA: case OP_L_MMA: return TCF_MMA_SYNC;
    case OP_WGMMA: case OP_WGMMA_WAIT: case OP_L_WGMMA: case OP_L_WG_FENCE: case OP_L_WG_COMMIT:
    case OP_L_WG_WAIT:
        return TCF_WGMMA;
    case OP_MFMA: case OP_L_MFMA: return TCF_MFMA;
    default: return TCF_NONE;
    }
}

int tc_fragment(Target tg, TcFamily f, TcOperand which, IrTc t, LyTile *frag)
{
    const TcFamilyInfo *r = &tc_families[f];
    Layout l = which == TC_C ? r->c : which == TC_A ? r->a : r->b;
    int in_regs = which == TC_C || (which == TC_A ? r->a_src == TCO_REG || (r->a_src == TCO_REG_OR_SMEM && t.a_regs)
                                                  : r->b_src == TCO_REG);
    memset(frag, 0, sizeof *frag);
    if (l == LY_NONE || !in_regs)
        return 0;
    frag->layout = l;
    frag->dtype = which == TC_C ? (DType)t.acc : which == TC_B && t.b_dt ? (DType)t.b_dt : (DType)t.ab;
    frag->rows = which == TC_B ? t.k : t.m;
    frag->cols = which == TC_A ? t.k : t.n;
    frag->warp_size = tg_warp(tg);
    return 1;
}

TcFamily tc_family_of_layout(Layout l)
{
    for (int f = TCF_MMA_SYNC; f < TCF__COUNT; f++) {
        const TcFamilyInfo *r = &tc_families[f];
        if (l != LY_NONE && (r->c == l || r->a == l || r->b == l))
            return (TcFamily)f;
    }
    return TCF_NONE;
}
