/* lib_meas.c — the tuned table's measured shapes (docs/library.md, "Measured shapes"):
 * each exact shape the table timed and every variant's time there, kept in the artifact
 * beside the class cells, so that a select at a measured shape takes what was measured
 * there rather than what the fit or the class predicts. Sorted by class, then by dims:
 * a class's shapes are a contiguous run found by one binary search, the exact shape and
 * the nearest one are a scan of that run (a few shapes). */
#include <stdlib.h>
#include <string.h>
#include "lib_priv.h"

/* a before b: by class, then dims in the op's order; 0 when the same */
static int meas_cmp(const LibMeas *a, const LibMeas *b, uint32_t nd)
{
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    for (uint32_t i = 0; i < nd; i++)
        if (a->dimv[i] != b->dimv[i])
            return a->dimv[i] < b->dimv[i] ? -1 : 1;
    return 0;
}

/* b's times folded into a: the lesser time of each variant, then fastest first again */
static void meas_merge(CakeCtx *ctx, LibMeas *a, const LibMeas *b)
{
    uint32_t n = a->n;
    uint8_t *var = arena_alloc(&ctx->arena, (a->n + b->n) * sizeof *var);
    float *ms = arena_alloc(&ctx->arena, (a->n + b->n) * sizeof *ms);
    memcpy(var, a->var, a->n * sizeof *var);
    memcpy(ms, a->ms, a->n * sizeof *ms);
    for (uint32_t j = 0; j < b->n; j++) {
        uint32_t i = 0;
        while (i < n && var[i] != b->var[j])
            i++;
        if (i == n)
            var[n] = b->var[j], ms[n++] = b->ms[j];
        else if (b->ms[j] < ms[i])
            ms[i] = b->ms[j];
    }
    for (uint32_t i = 1; i < n; i++)   /* insertion by time: a few dozen variants */
        for (uint32_t k = i; k > 0 && ms[k] < ms[k - 1]; k--) {
            float t = ms[k];
            uint8_t v = var[k];
            ms[k] = ms[k - 1], var[k] = var[k - 1];
            ms[k - 1] = t, var[k - 1] = v;
        }
    a->var = var, a->ms = ms, a->n = n;
}

void lib_meas_sort(CakeCtx *ctx, LibOp *op)
{
    uint32_t nd = op->pub.ndims, n = op->nmeas;
    LibMeas *m = op->meas;
    for (uint32_t i = 1; i < n; i++) {   /* insertion: a table holds a few hundred shapes */
        LibMeas x = m[i];
        uint32_t k = i;
        for (; k > 0 && meas_cmp(&x, &m[k - 1], nd) < 0; k--)
            m[k] = m[k - 1];
        m[k] = x;
    }
    uint32_t w = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (w && !meas_cmp(&m[w - 1], &m[i], nd))
            meas_merge(ctx, &m[w - 1], &m[i]);
        else
            m[w++] = m[i];
    }
    op->nmeas = w;
}

/* the first measured shape of class key or after */
static uint32_t lower_bound(const LibOp *op, uint64_t key)
{
    uint32_t lo = 0, hi = op->nmeas;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (op->meas[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* how far apart two shapes are: the product over the dims of the larger over the smaller
   (the exponential of the sum of |log(d / d')|, without a logarithm) */
double lib_meas_distance(const int64_t *a, const int64_t *b, uint32_t nd)
{
    double p = 1;
    for (uint32_t i = 0; i < nd; i++)
        p *= a[i] > b[i] ? (double)a[i] / (double)b[i] : (double)b[i] / (double)a[i];
    return p;
}

const LibMeas *lib_meas_class(const LibOp *op, uint64_t key, const int64_t *dimv, const LibMeas **exact)
{
    const LibMeas *best = NULL;
    double bd = 0;
    *exact = NULL;
    uint32_t nd = op->pub.ndims;
    for (uint32_t i = lower_bound(op, key); i < op->nmeas && op->meas[i].key == key; i++) {
        const LibMeas *m = &op->meas[i];
        if (!memcmp(m->dimv, dimv, nd * sizeof *dimv)) {
            *exact = m;
            return m;
        }
        double d = lib_meas_distance(m->dimv, dimv, nd);
        if (!best || d < bd)
            best = m, bd = d;
    }
    return best;
}

uint32_t cake_lib_measured(const CakeLib *lib, uint32_t op, uint32_t i, int64_t *dimv,
                           uint32_t *var, double *ms, uint32_t cap)
{
    if (!lib || op >= lib->nops || i >= lib->ops[op].nmeas)
        return 0;
    const LibOp *o = &lib->ops[op];
    const LibMeas *m = &o->meas[i];
    if (dimv)
        memcpy(dimv, m->dimv, o->pub.ndims * sizeof *dimv);
    for (uint32_t j = 0; j < m->n && j < cap; j++) {
        if (var)
            var[j] = m->var[j];
        if (ms)
            ms[j] = m->ms[j];
    }
    return m->n;
}
