/* oracle_util.h — helpers shared by the tests of the reference interpreter
 * and `run --check`: parse TIR from a string, bind a shape, fake devices. */
#ifndef ORACLE_UTIL_H
#define ORACLE_UTIL_H
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>
#include "fe.h"
#include "check.h"

/* Parses and resolves src; fails the test on front-end errors. */
static inline Kernel *parse_kernel(CakeCtx *ctx, const char *src)
{
    uint32_t f = ctx_add_file(ctx, "test.tir", src, (uint32_t)strlen(src));
    Module *m = fe_parse(ctx, f);
    fe_resolve(ctx, m);
    if (ctx->nerrors)
        diag_print_text(ctx, stderr, 0);
    assert_int_equal(ctx->nerrors, 0);
    assert_true(m->nkernels >= 1);
    return m->kernels[m->nkernels - 1];
}

static inline ShapeEnv shape_of(CakeCtx *ctx, const Kernel *k, const char *spec)
{
    ShapeEnv e;
    char err[256];
    shape_env_clear(&e);
    if (!shape_env_parse(ctx, k, &e, spec, err, sizeof err))
        fail_msg("shape '%s': %s", spec, err);
    return e;
}

static inline int has_diag(const CakeCtx *ctx, DiagCode code)
{
    for (uint32_t i = 0; i < ctx->ndiags; i++)
        if (ctx->diags[i].code == code)
            return 1;
    return 0;
}

/* Allocates the host tensors of every argument of k under env: inputs get
 * value(i, j) (arg i, storage element j), outputs NaN. */
static inline HostTensor *make_args(CakeCtx *ctx, const Kernel *k, const ShapeEnv *env,
                                    double (*value)(uint32_t, int64_t))
{
    HostTensor *t = calloc(k->nargs, sizeof *t);
    for (uint32_t i = 0; i < k->nargs; i++) {
        assert_true(interp_arg_tensor(ctx, k, i, env, &t[i]));
        int64_t span = t[i].span ? t[i].span : 1;
        t[i].data = malloc((size_t)span * sizeof(double));
        for (int64_t j = 0; j < span; j++)
            t[i].data[j] = value ? interp_round(t[i].dtype, value(i, j)) : NAN;
    }
    return t;
}

static inline void free_args(const Kernel *k, HostTensor *t)
{
    for (uint32_t i = 0; i < k->nargs; i++) {
        free(t[i].data);
        free(t[i].written);
    }
    free(t);
}

/* ---- fake devices for check_run ---------------------------------------- */

typedef struct {
    double perturb;       /* added to every output element */
    int64_t skip_tail;    /* leave the last elements of each output unwritten */
    int nan_at;           /* >= 0: write NaN at this storage element */
    int fail;             /* launch fails */
    int calls;
} FakeDev;

/* Runs the kernel's own reference on the raw buffers, then spoils the
 * result as FakeDev says. */
static inline int fake_device(void *user, CakeCtx *ctx, CheckLaunch *l)
{
    FakeDev *fd = user;
    fd->calls++;
    if (fd->fail) {
        snprintf(l->err, l->errlen, "kernel 'x' faulted: CUDA_ERROR_ILLEGAL_ADDRESS");
        return 3;
    }
    Interp *I = interp_new(ctx, l->k);
    if (!I)
        return 2;
    HostTensor *t = calloc(l->nbufs, sizeof *t);
    for (uint32_t i = 0; i < l->nbufs; i++) {
        interp_arg_tensor(ctx, l->k, i, l->env, &t[i]);
        int64_t span = t[i].span ? t[i].span : 1;
        int eb = interp_elem_bytes(t[i].dtype);
        t[i].data = malloc((size_t)span * sizeof(double));
        for (int64_t j = 0; j < span; j++)
            t[i].data[j] = interp_decode(t[i].dtype, (char *)l->bufs[i].host + j * eb);
    }
    int ok = interp_run(I, l->env, t, NULL);
    for (uint32_t i = 0; i < l->nbufs; i++) {
        int eb = interp_elem_bytes(t[i].dtype);
        if ((l->bufs[i].role & INTERP_WRITTEN) && l->bufs[i].is_tensor)
            for (int64_t j = 0; j < t[i].span - fd->skip_tail; j++) {
                double v = t[i].data[j] + fd->perturb;
                if (j == fd->nan_at)
                    v = NAN;
                interp_encode(t[i].dtype, v, (char *)l->bufs[i].host + j * eb);
            }
        free(t[i].data);
    }
    free(t);
    interp_free(I);
    return ok ? 0 : 2;
}

/* Runs check_suite on k at the shapes it picks (no --shape) with the fake
 * device dev; asserts at least `min` reports, each with status `want`, and
 * returns their count. */
static inline uint32_t suite_expect(CakeCtx *ctx, Kernel *k, FakeDev *dev, CheckReport *reps, uint32_t cap,
                                    uint32_t min, CheckStatus want)
{
    ShapeEnv base;
    shape_env_clear(&base);
    uint32_t n = check_suite(ctx, k, &base, NULL, fake_device, dev, reps, cap);
    assert_true(n >= min);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(reps[i].status, want);
    return n;
}

#endif
