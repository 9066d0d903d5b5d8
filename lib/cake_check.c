/* cake_check.c — libcake's `run --check` (the device callback of oracle/check.c)
 * and `run --bench` (random inputs, L2 flushed, median of device-event times). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cake_priv.h"

typedef struct {
    RtDevice *dev;
    CakeKernel *ck;
} CheckState;

static void free_all(RtDevice *dev, RtPtr *ptrs, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        rt_free(dev, ptrs[i]);
}

/* the CheckLaunchFn: copies the host buffers to the device, runs, copies back */
static int check_launch(void *user, CakeCtx *ctx, CheckLaunch *l)
{
    CheckState *st = user;
    RtDevice *dev = st->dev;
    const Kernel *k = st->ck->k;
    RtPtr *dev_ptr = calloc(l->nbufs + 1, sizeof *dev_ptr);
    RtPtr *tensors = calloc(l->nbufs + 1, sizeof *tensors);
    const void **scalars = calloc(l->nbufs + 1, sizeof *scalars);
    uint32_t nt = 0, ns = 0;
    RtStatus rs = RT_OK;
    for (uint32_t i = 0; i < l->nbufs && rs == RT_OK; i++) {
        CheckBuffer *b = &l->bufs[i];
        if (!b->is_tensor) {
            scalars[ns++] = b->host;
            continue;
        }
        rs = rt_alloc(dev, b->bytes ? b->bytes : 16, &dev_ptr[i]);
        if (rs == RT_OK && b->bytes)
            rs = rt_copy_h2d(dev, dev_ptr[i], b->host, b->bytes);
        tensors[nt++] = dev_ptr[i];
    }
    if (rs == RT_OK)
        rs = lib_launch(ctx, dev, st->ck, l->env, tensors, (const void *const *)scalars);
    for (uint32_t i = 0; i < l->nbufs && rs == RT_OK; i++) {
        CheckBuffer *b = &l->bufs[i];
        if (b->is_tensor && ((b->role & INTERP_WRITTEN) || b->workspace) && b->bytes)
            rs = rt_copy_d2h(dev, b->host, dev_ptr[i], b->bytes);
    }
    if (rs != RT_OK)
        snprintf(l->err, l->errlen, "kernel `%s`: %s: %s", ir_symstr(ctx, k->name),
                 rt_status_name(rs), rt_error(dev));
    if (rt_health(dev) == RT_OK)
        free_all(dev, dev_ptr, l->nbufs);
    free(dev_ptr);
    free(tensors);
    free(scalars);
    return rs != RT_OK;
}

static int check(CakeCtx *ctx, RtDevice *dev, CakeKernel *ck, const ShapeEnv *env, int only_env,
                 const CheckOptions *opt, CheckReport *reps, uint32_t max, uint32_t *n)
{
    CheckState st = {dev, ck};
    ShapeEnv base;
    shape_env_clear(&base);
    if (env)
        base = *env;
    if (only_env && max) {
        check_run_ex(ctx, ck->k, &base, check_launch, &st, opt, &reps[0]);
        *n = 1;
    } else if (!only_env) {
        *n = check_suite(ctx, ck->k, &base, opt, check_launch, &st, reps, max);
    }
    return 0;
}

int cake_check(CakeCtx *ctx, RtDevice *dev, CakeKernel *ck, const ShapeEnv *env, int only_env,
               const CheckOptions *opt, CheckReport *reps, uint32_t max, uint32_t *n)
{
    int rc;
    *n = 0; /* and 0 after a bug: check sets it last */
    CAKE_PROTECTED(ctx, rc, check(ctx, dev, ck, env, only_env, opt, reps, max, n));
    return rc;
}

/* ---- bench ------------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = (*s += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* fills `bytes` of device memory with random values of dtype dt: floats in
 * [-1, 1), integers in [ilo, ihi) */
static RtStatus fill_random(RtDevice *dev, RtPtr p, size_t bytes, DType dt, uint64_t seed,
                            int64_t ilo, int64_t ihi)
{
    int eb = interp_elem_bytes(dt);
    if (eb <= 0)
        eb = 1;
    /* at most 1 Mi elements drawn, repeated over a larger tensor; no more than the
       tensor holds (drawing 1 Mi per argument cost a tuning pass ~50 ms per small shape) */
    size_t chunk_elems = (size_t)1 << 20;
    if (bytes / (size_t)eb + 1 < chunk_elems)
        chunk_elems = bytes / (size_t)eb + 1;
    size_t chunk = chunk_elems * (size_t)eb;
    unsigned char *buf = malloc(chunk);
    for (size_t i = 0; i < chunk_elems; i++) {
        double u = (double)(rng_next(&seed) >> 11) * 0x1p-53 * 2.0 - 1.0;
        if (u == 0)
            u = 0.5;
        if (ir_dtypes[dt].kind != 'f')
            u = (double)(ilo + (int64_t)(rng_next(&seed) % (uint64_t)(ihi - ilo)));
        interp_encode(dt, u, buf + i * (size_t)eb);
    }
    RtStatus st = RT_OK;
    for (size_t off = 0; off < bytes && st == RT_OK; off += chunk) {
        size_t n = bytes - off < chunk ? bytes - off : chunk;
        st = rt_copy_h2d(dev, p + off, buf, n);
    }
    free(buf);
    return st;
}

RtStatus lib_bench_args(CakeCtx *ctx, RtDevice *dev, const Kernel *k, const ShapeEnv *env,
                           BenchArgs *a, double *arg_bytes)
{
    uint32_t nt = 0, ns = 0;
    *arg_bytes = 0;
    for (uint32_t i = 0; i < k->nargs && i < 64; i++) {
        DType dt;
        int rank;
        int64_t shape[IR_MAX_RANK], stride[IR_MAX_RANK];
        if (!shape_arg_geometry(ctx, k, i, env, &dt, &rank, shape, stride))
            return RT_INVALID;
        if (!rank) {
            interp_encode(dt, ir_dtypes[dt].kind == 'f' ? 1e-5 : 1.0, a->scal[ns]);
            a->scalp[ns] = a->scal[ns];
            ns++;
            continue;
        }
        int64_t span = 1;
        for (int d = 0; d < rank; d++)
            span += (shape[d] - 1) * stride[d];
        size_t bytes = (size_t)span * (size_t)interp_elem_bytes(dt);
        *arg_bytes += (double)bytes;
        int64_t ilo = 1, ihi = 8; /* integers: 1 .. 7, or the declared `values` range */
        int vr = check_arg_values(ctx, k, i, env, &ilo, &ihi);
        if (vr == 0)
            return RT_INVALID;
        if (vr < 0) {
            ilo = 1;
            ihi = 8;
        }
        RtStatus st = rt_alloc(dev, bytes ? bytes : 16, &a->ptr[nt]);
        if (st == RT_OK && ir_arg_workspace(k, i)) /* zero in, and the kernel leaves it zero */
            st = rt_memset_d8(dev, a->ptr[nt], 0, bytes);
        else if (st == RT_OK)
            st = fill_random(dev, a->ptr[nt], bytes, dt, 0x43414B45u + i, ilo, ihi);
        nt++;
        a->n = nt;
        if (st != RT_OK)
            return st;
    }
    return RT_OK;
}

void lib_bench_args_free(RtDevice *dev, BenchArgs *a)
{
    if (rt_health(dev) == RT_OK)
        free_all(dev, a->ptr, a->n);
    a->n = 0;
}

static void bench_counts(CakeCtx *ctx, const Kernel *k, const ShapeEnv *env, double arg_bytes,
                         CakeBench *out)
{
    out->bytes = arg_bytes;
    Interp *in = k->reference ? interp_new(ctx, k) : NULL;
    InterpCost cost;
    if (in && interp_cost(in, env, &cost)) {
        out->bytes = cost.bytes;
        out->flops = cost.flops;
    }
    if (in)
        interp_free(in);
}

static RtStatus bench(CakeCtx *ctx, RtDevice *dev, CakeKernel *ck, const ShapeEnv *env,
                      int runs, CakeBench *out)
{
    memset(out, 0, sizeof *out);
    const Kernel *k = ck->k;
    if (k->nargs > 64) {
        snprintf(out->message, sizeof out->message, "bench supports at most 64 arguments");
        return RT_UNSUPPORTED;
    }
    shape_env_format(ctx, k, env, out->shape, sizeof out->shape);
    NodeId failed = 0;
    if (!shape_env_assumes_hold(ctx, k, env, 1, &failed)) { /* E0961 at the assume */
        uint32_t line, col, el, ec;
        span_linecol(ctx, k->nodes[failed].span, &line, &col, &el, &ec);
        snprintf(out->message, sizeof out->message,
                 "the shape violates the assume at line %u: not timed (%.200s)", line, out->shape);
        return RT_INVALID;
    }
    BenchArgs a = {0};
    double arg_bytes;
    CakePrepared p = {0};
    RtStatus st = lib_bench_args(ctx, dev, k, env, &a, &arg_bytes);
    if (st == RT_OK)
        st = lib_prepare(ctx, ck, env, a.ptr, a.scalp, &p);
    if (st == RT_OK)
        st = rt_run(dev, &p.rl); /* also a smoke run: a fault shows here, not in the timing */
    if (st == RT_OK) {
        RtTimeOpts to = {.warmup = 5, .runs = runs ? runs : 50};
        st = rt_time(dev, &p.rl, 1, &to, &out->t, NULL);
        memcpy(out->grid, p.rl.grid, sizeof out->grid);
        memcpy(out->block, p.rl.block, sizeof out->block);
    }
    cake_prepared_free(&p);
    lib_bench_finish(ctx, dev, ck->k, env, arg_bytes, st, out);
    if (st == RT_OK) {
        out->regs = ck->info.regs;
        out->local_bytes = ck->info.local_bytes;
        out->shared_bytes = ck->info.static_shared_bytes;
    }
    lib_bench_args_free(dev, &a);
    return st;
}

void lib_bench_finish(CakeCtx *ctx, RtDevice *dev, const Kernel *ref, const ShapeEnv *env,
                      double arg_bytes, RtStatus st, CakeBench *out)
{
    if (st != RT_OK) {
        snprintf(out->message, sizeof out->message, "%s: %s", rt_status_name(st), rt_error(dev));
        return;
    }
    bench_counts(ctx, ref, env, arg_bytes, out);
    double s = out->t.median_ms * 1e-3;
    out->gbps = out->bytes / s * 1e-9;
    out->tflops = out->flops / s * 1e-12;
    out->peak_gbps = rt_info(dev)->peak_gbps;
    out->roofline = out->peak_gbps > 0 ? out->gbps / out->peak_gbps : 0;
}

int cake_bench(CakeCtx *ctx, RtDevice *dev, CakeKernel *ck, const ShapeEnv *env, int runs,
               CakeBench *out)
{
    int rc;
    memset(out, 0, sizeof *out);
    CAKE_PROTECTED(ctx, rc, bench(ctx, dev, ck, env, runs, out) == RT_OK ? 0 : 3);
    return rc;
}
