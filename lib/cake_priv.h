/* cake_priv.h — what libcake's files share and its callers do not see. */
#ifndef CAKE_LIB_PRIV_H
#define CAKE_LIB_PRIV_H
#include "cake.h"
#include "cg_plugin.h"
#include "protect.h"

/* The code generator plugin (codegen.c): loaded on first use, never
 * unloaded. NULL with E0974 reported when it is missing or from another build. */
const CgPlugin *lib_codegen(CakeCtx *ctx);

/* cake_find_kernel without the protection (instance.c) */
Kernel *lib_find_kernel(CakeCtx *ctx, const Module *m, const char *name, Target tg);
/* the same lookup, quiet: NULL and no diagnostic when there is none (m may be NULL) */
Kernel *lib_kernel(const CakeCtx *ctx, const Module *m, const char *name, Target tg);

/* cake_prepare and cake_launch with the runtime's status (cake.c) */
RtStatus lib_prepare(CakeCtx *ctx, CakeKernel *ck, const ShapeEnv *env, const RtPtr *tensors,
                     const void *const *scalars, CakePrepared *p);
RtStatus lib_launch(CakeCtx *ctx, RtDevice *dev, CakeKernel *ck, const ShapeEnv *env,
                    const RtPtr *tensors, const void *const *scalars);

/* cake_prepared_rebind with the runtime's status */
RtStatus lib_prepared_rebind(CakeCtx *ctx, CakeKernel *ck, CakePrepared *p, const RtPtr *tensors,
                            const void *const *scalars);

/* A prepared launch kept for the next call at the same shape (the library's
 * launch cache, lib_cache.c): the launch (its tensor maps' descriptors and
 * tensors with it, so that a call on other buffers encodes again only the maps
 * of the tensors that moved) and its kernel. */
typedef struct {
    CakePrepared p;
    CakeKernel *ck;
} LibPrep;

/* lib_prepare into kp (freed with lib_prep_free, also after a failure) */
RtStatus lib_prep_make(CakeCtx *ctx, CakeKernel *ck, const ShapeEnv *env, const RtPtr *tensors,
                       const void *const *scalars, LibPrep *kp);
/* kp's launch on these tensors and scalars: pointers and scalars replaced, the
   tensor maps of moved tensors encoded again (nothing allocated) */
RtStatus lib_prep_bind(CakeCtx *ctx, LibPrep *kp, const RtPtr *tensors, const void *const *scalars);
void lib_prep_free(LibPrep *kp);

/* random arguments of k at env on dev, as `run --bench` draws them (cake_check.c):
   ptr[i] the i-th tensor's buffer, scalp[i] the i-th scalar's value */
typedef struct {
    uint32_t n;
    RtPtr ptr[64];
    unsigned char scal[64][8];
    const void *scalp[64];
} BenchArgs;
RtStatus lib_bench_args(CakeCtx *ctx, RtDevice *dev, const Kernel *k, const ShapeEnv *env,
                        BenchArgs *a, double *arg_bytes);
void lib_bench_args_free(RtDevice *dev, BenchArgs *a);
/* out's counts (ref's reference at env), rates and roofline after a timing of status st */
void lib_bench_finish(CakeCtx *ctx, RtDevice *dev, const Kernel *ref, const ShapeEnv *env,
                      double arg_bytes, RtStatus st, CakeBench *out);

/* Withdraws every fix-it (and the help that spells it) of ctx's errors that,
 * applied to a copy of the source and verified again, does not clear its error
 * or brings more errors (fixit_verify.c). `check` calls it before it returns. */
typedef struct { const char *kernel, *set, *shape; } LibFixitBind;   /* NULL: none */
void lib_verify_fixits(CakeCtx *ctx, const LibFixitBind *bind);

#endif
