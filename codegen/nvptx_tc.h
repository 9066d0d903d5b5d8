/* nvptx_tc.h — the NVPTX hooks for TIR-L's asynchronous and tensor-core
 * instructions (nvptx_tc.c), listed for cg_nvptx's hook table. */
#ifndef CAKE_NVPTX_TC_H
#define CAKE_NVPTX_TC_H
#include "cg_int.h"

void nv_mbar_init(Cg *, LLVMValueRef bar, LLVMValueRef count);
void nv_mbar_fence_init(Cg *);
void nv_mbar_arrive(Cg *, LLVMValueRef bar, LLVMValueRef tx);
LLVMValueRef nv_mbar_try_wait(Cg *, LLVMValueRef bar, LLVMValueRef parity);
void nv_cp_mbar_arrive(Cg *, LLVMValueRef bar);
void nv_syncwarp(Cg *);
void nv_tma_load(Cg *, LLVMValueRef map, LLVMValueRef smem, LLVMValueRef bar, LLVMValueRef *c, unsigned n);
void nv_tma_store(Cg *, LLVMValueRef map, LLVMValueRef smem, LLVMValueRef *c, unsigned n, int add);
void nv_tmap_prefetch(Cg *, LLVMValueRef map);
void nv_bulk_commit(Cg *);
void nv_bulk_wait(Cg *, int n);
void nv_fence_proxy(Cg *);
void nv_wg_fence(Cg *);
void nv_wg_commit(Cg *);
void nv_wg_wait(Cg *, int n);
void nv_wgmma(Cg *, IrTc t, LLVMValueRef da, LLVMValueRef db, LLVMValueRef *a, unsigned na,
              LLVMValueRef *d, unsigned nd);
void nv_mma(Cg *, IrTc t, LLVMValueRef *a, unsigned na, LLVMValueRef *b, unsigned nb,
            LLVMValueRef *d, unsigned nd);
void nv_ldmatrix(Cg *, int n, int trans, LLVMValueRef addr, LLVMValueRef *out);
void nv_stmatrix(Cg *, int n, int trans, LLVMValueRef addr, LLVMValueRef *in);
void nv_setmaxnreg(Cg *, int inc, int regs);
void nv_cp_async(Cg *, LLVMValueRef dst, LLVMValueRef src, int bytes, LLVMValueRef ok);
void nv_cp_commit(Cg *);
void nv_cp_wait(Cg *, int n);

#define NV_TC_HOOKS                                                                    \
    .mbar_init = nv_mbar_init, .mbar_fence_init = nv_mbar_fence_init,                  \
    .mbar_arrive = nv_mbar_arrive, .mbar_try_wait = nv_mbar_try_wait,                  \
    .cp_mbar_arrive = nv_cp_mbar_arrive, .syncwarp = nv_syncwarp,                      \
    .tma_load = nv_tma_load, .tma_store = nv_tma_store, .bulk_commit = nv_bulk_commit, \
    .tmap_prefetch = nv_tmap_prefetch,                                                 \
    .bulk_wait = nv_bulk_wait, .fence_proxy = nv_fence_proxy, .wg_fence = nv_wg_fence, \
    .wg_commit = nv_wg_commit, .wg_wait = nv_wg_wait, .wgmma = nv_wgmma, .mma = nv_mma, \
    .ldmatrix = nv_ldmatrix, .stmatrix = nv_stmatrix, .setmaxnreg = nv_setmaxnreg,     \
    .cp_async = nv_cp_async, .cp_commit = nv_cp_commit, .cp_wait = nv_cp_wait,

#endif
