/* cake.h — libcake: the C library API that the cakec CLI is built on.
 *
 * Compile a .tir kernel for a target, load it on a device, launch it, check
 * it against its fp64 reference, and time it. Every call takes the
 * compilation context explicitly (one CakeCtx per candidate kernel; free it
 * with ctx_free), so an agent loop can compile thousands of kernels in one
 * process. Diagnostics go into the context (ctx->diags).
 *
 *     CakeCtx *ctx = ctx_new();
 *     CakeKernel ck;
 *     if (cake_compile_file(ctx, "rmsnorm.tir", NULL, TG_SM90A, NULL, &ck) == 0) {
 *         RtDevice *dev; char err[256];
 *         if (rt_open(RT_AUTO, 0, &dev, err, sizeof err) == RT_OK) {
 *             CakeCheck chk;
 *             cake_check(ctx, dev, &ck, NULL, NULL, &chk);   // several shapes
 *             CakeBench b;
 *             cake_bench(ctx, dev, &ck, &env, NULL, &b);      // one shape
 *             cake_unload(&ck);
 *             rt_close(dev);
 *         }
 *     }
 *     ctx_free(ctx);
 *
 * After a kernel faults or times out, CUDA refuses further work in the
 * process (RT_FAULT/RT_TIMEOUT from rt_health): run untrusted candidates in
 * a child process and call rt_exit_now after RT_TIMEOUT.
 */
#ifndef CAKE_LIBCAKE_H
#define CAKE_LIBCAKE_H

#include "ir.h"
#include "rt.h"
#include "check.h"

typedef struct CakeKernel {
    Module *m;
    Kernel *k;          /* the kernel compiled (the file's first one for the target) */
    Target tg;
    char *image;        /* PTX text (NVPTX) or a code object (AMDGPU); malloc'd */
    size_t len;
    RtModule *mod;      /* after cake_load */
    RtFunction *fn;
    RtFuncInfo info;
} CakeKernel;

/* Parses, resolves, verifies, lowers and emits the kernel named `kernel`
 * (NULL: the first kernel listing tg) of source file `path` for tg.
 * `set` binds compile-time params ("BM=64,STAGES=3"; NULL: defaults).
 * Returns 0, 1 on user errors (diagnostics in ctx), 2 on an internal error
 * (ctx->bug_msg), 3 when a tool is missing. */
int cake_compile_file(CakeCtx *ctx, const char *path, const char *kernel, Target tg,
                      const char *set, CakeKernel *out);

/* The same from a module already parsed and verified in ctx. */
int cake_compile_module(CakeCtx *ctx, Module *m, const char *kernel, Target tg,
                        const char *set, CakeKernel *out);

/* Loads the image on dev; JIT errors become diagnostics E0963 (with the JIT
 * log's lines as notes). */
RtStatus cake_load(CakeCtx *ctx, RtDevice *dev, CakeKernel *ck);
void cake_unload(CakeKernel *ck);   /* also frees the image */

/* Launches ck once on device buffers: tensors[i] for every tensor argument
 * (in argument order, scalars skipped), scalars[i] pointing at the value of
 * every scalar argument (in its dtype's encoding), dims from env. Waits. */
RtStatus cake_launch(CakeCtx *ctx, RtDevice *dev, CakeKernel *ck, const ShapeEnv *env,
                     const RtPtr *tensors, const void *const *scalars);

/* `run --check`: the kernel against a reference (opt->reference, or its own
 * reference block) at several shapes picked from its assumes (or at the one
 * shape `env` when only_env is set). Fills reps (up to max); returns how many. */
uint32_t cake_check(CakeCtx *ctx, RtDevice *dev, CakeKernel *ck, const ShapeEnv *env,
                    int only_env, const CheckOptions *opt, CheckReport *reps, uint32_t max);

typedef struct CakeBench {
    char shape[256];
    RtTiming t;            /* ms */
    double bytes, flops;   /* the reference's counts at this shape */
    double gbps, tflops;
    double peak_gbps;      /* the device's datasheet bandwidth (0 if unknown) */
    double roofline;       /* achieved / peak bandwidth (memory-bound) */
    int regs, local_bytes, shared_bytes;
    uint32_t grid[3], block[3];
    char message[256];     /* why it failed */
} CakeBench;

/* `run --bench`: random inputs at shape env, warm-up, L2 flushed between
 * runs, median of `runs` (0: 50) timed launches between device events. */
RtStatus cake_bench(CakeCtx *ctx, RtDevice *dev, CakeKernel *ck, const ShapeEnv *env,
                    int runs, CakeBench *out);

/* A launch of ck at shape env on the given buffers, ready for rt_run or
 * rt_time: grid and block from the `grid` clause and the block size, the
 * parameters in the order of the ABI (cg.h). Free it with cake_prepared_free. */
typedef struct CakePrepared {
    RtLaunch rl;
    void **params;
    RtPtr *ptrs;
    int32_t *dims;
} CakePrepared;

RtStatus cake_prepare(CakeCtx *ctx, CakeKernel *ck, const ShapeEnv *env, const RtPtr *tensors,
                      const void *const *scalars, CakePrepared *p);
void cake_prepared_free(CakePrepared *p);

#endif
