/* selcheck.c — dispatch checked against its plain definition (lib/lib_plan.c is the
 * fast form of it): for every op of a library artifact and thousands of seeded shapes
 * (log-uniform over the op's range, odd, even and multiples of 8, plus every bound of
 * every variant's domain and the values next to it),
 *   - each variant's domain as select tests it (lib_domain_fast) against the generic
 *     integer evaluator on the kernel's own assumes at the variant's bindings
 *     (ce_eval_int, as shape_env_assumes_hold) and the manifest's `when` conditions;
 *   - each fitted variant's predicted time from the flat arrays (lib_fit_predict_all)
 *     against lib_fit_predict of that variant alone, bit for bit;
 *   - cake_lib_select's choice (variant, why, rank) against the reference pick and against
 *     cake_lib_explain's, which tests every variant. The reference pick: at a measured
 *     shape of the table (found by a linear scan of every measured shape, dims equal) its
 *     first variant, by time there, whose domain holds; else the least predicted time whose
 *     domain holds (ties to the lower index), unless the nearest measured shape of the
 *     call's class (a linear scan, the least product of the dims' ratios) timed that pick
 *     LIB_MEAS_CONTRADICT times slower than a variant that holds here: the fastest such;
 *     a refusal outside the op's range. Every measured shape and its neighbours (each dim
 *     +-1) are checked besides the seeded shapes.
 * Exit 0 when all agree, 1 with the first disagreements printed.
 *
 *     cake_selcheck FILE.cakelib [SHAPES_PER_OP]     (default 3000)
 *     cake_selcheck FILE.cakelib --dump N            every op's choice at N seeded shapes,
 *                                                    one line each (to diff two builds)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib_priv.h"

static const char *const why_names[] = {"tuned", "cost-model", "manifest-order", "tuned-near", "tuned-fit",
                                        "measured", "measured-near"};

/* xorshift: the same shapes every run */
static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* a seeded value of dim d of op: log-uniform over its range, odd, even or a multiple of 8 */
static int64_t seeded(const LibOp *op, uint32_t d, uint64_t *seed)
{
    int64_t lo = op->has_range[d] ? op->lo[d] : 1, hi = op->has_range[d] ? op->hi[d] : 65536;
    double span = log2((double)hi) - log2((double)lo);
    double e = log2((double)lo) + span * (double)(next(seed) % 100000) / 100000.0;
    int64_t v = (int64_t)pow(2.0, e);
    uint64_t r = next(seed) % 4;
    v = r == 0 ? v : r == 1 ? (v + 1) / 2 * 2 : r == 2 ? v | 1 : (v + 7) / 8 * 8;
    return clamp(v, lo, hi);
}

/* ---- the reference domain: the generic evaluator --------------------------------- */

static int64_t ceil_ref(int64_t x, int64_t d)
{
    return (x + d - 1) / d;
}

static int cond_ref(const LibCond *c, const int64_t *dimv)
{
    int64_t x = dimv[c->dim];
    if (c->rel != LC_MOD)
        x = ceil_ref(x, c->div) * (c->nfac == 2 ? ceil_ref(dimv[c->dim2], c->div2) : 1);
    switch ((LibRel)c->rel) {
    case LC_LT: return x < c->value;
    case LC_LE: return x <= c->value;
    case LC_GT: return x > c->value;
    case LC_GE: return x >= c->value;
    case LC_EQ: return x == c->value;
    case LC_NE: return x != c->value;
    case LC_MOD: return x % c->mod == c->value;
    }
    return 0;
}

static int own_ref(CakeCtx *ctx, const LibOp *op, const LibVariant *v, const int64_t *dimv)
{
    for (uint32_t i = 0; i < v->nconds; i++)
        if (!cond_ref(&v->conds[i], dimv))
            return 0;
    CeBinding b[SHAPE_ENV_MAX];
    uint32_t n = 0;
    for (uint32_t j = 0; j < v->npb && n < SHAPE_ENV_MAX; j++)
        b[n++] = v->pb[j];
    for (uint32_t j = 0; j < op->pub.ndims && n < SHAPE_ENV_MAX; j++)
        b[n++] = (CeBinding){op->dsym[j], dimv[j]};
    CeEnv env = {b, n, NULL, NULL, NULL};
    for (uint32_t i = 0; i < v->k->nassumes; i++) {
        int64_t x;
        if (ce_eval_int(ctx, v->k, v->k->assumes[i], &env, &x) && x == 0)
            return 0;
    }
    return 1;
}

static int domain_ref(CakeCtx *ctx, const LibOp *op, const LibVariant *v, const int64_t *dimv)
{
    if (v->part_of >= 0 && !v->nsteps)
        return 0;
    for (uint32_t s = 0; s < v->nsteps; s++)
        if (!own_ref(ctx, op, &op->v[v->steps[s]], dimv))
            return 0;
    return own_ref(ctx, op, v, dimv);
}

/* ---- the reference of the measured shapes: linear scans ---------------------------- */

static const LibMeas *exact_ref(const LibOp *op, const int64_t *dimv)
{
    for (uint32_t i = 0; i < op->nmeas; i++) {
        uint32_t d = 0;
        while (d < op->pub.ndims && op->meas[i].dimv[d] == dimv[d])
            d++;
        if (d == op->pub.ndims)
            return &op->meas[i];
    }
    return NULL;
}

/* the ratio of the larger to the smaller of each dim, multiplied */
static double apart(const int64_t *a, const int64_t *b, uint32_t nd)
{
    double p = 1;
    for (uint32_t i = 0; i < nd; i++) {
        double x = (double)a[i], y = (double)b[i];
        p *= x > y ? x / y : y / x;
    }
    return p;
}

static const LibMeas *nearest_ref(const LibOp *op, const int64_t *dimv)
{
    uint64_t key = lib_class_key(op, dimv);
    const LibMeas *best = NULL;
    for (uint32_t i = 0; i < op->nmeas; i++)
        if (op->meas[i].key == key &&
            (!best || apart(op->meas[i].dimv, dimv, op->pub.ndims) < apart(best->dimv, dimv, op->pub.ndims)))
            best = &op->meas[i];
    return best;
}

/* ---- one shape ------------------------------------------------------------------- */

static int bad;

static void shape_text(const LibOp *op, const int64_t *dimv, char *buf, size_t len)
{
    size_t at = 0;
    for (uint32_t i = 0; i < op->pub.ndims && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s=%lld", i ? "," : "", op->dims[i],
                               (long long)dimv[i]);
}

static void fail(const LibOp *op, const int64_t *dimv, const char *what)
{
    char s[256];
    shape_text(op, dimv, s, sizeof s);
    if (bad++ < 20)
        printf("FAIL: %s %s: %s\n", op->pub.name, s, what);
}

static void check_shape(CakeCtx *ctx, const CakeLib *lib, uint32_t opi, const int64_t *dimv)
{
    const LibOp *op = &lib->ops[opi];
    uint32_t nv = op->pub.nvariants;
    int held[CAKE_LIB_MAX_VARIANTS];
    for (uint32_t v = 0; v < nv; v++) {
        held[v] = domain_ref(ctx, op, &op->v[v], dimv);
        if (!op->plan.ready)
            fail(op, dimv, "the op has no plan");
        else if (held[v] != lib_domain_fast(lib, op, v, dimv))
            fail(op, dimv, ir_fmt(ctx, "variant %s: the fast domain test says %d, the evaluator %d",
                                  op->v[v].pub.name, !held[v], held[v]));
    }
    double t[CAKE_LIB_MAX_VARIANTS];
    uint32_t best = UINT32_MAX, rank = 0;
    if (op->nfit) {
        lib_fit_predict_all(op, dimv, t);
        for (uint32_t v = 0; v < nv; v++) {
            double one = lib_fit_predict(op, &op->v[v], dimv);
            if (memcmp(&one, &t[v], sizeof one))
                fail(op, dimv, ir_fmt(ctx, "variant %s: predicted %.17g alone, %.17g in the ranking",
                                      op->v[v].pub.name, one, t[v]));
            if (t[v] > 0 && held[v] && (best == UINT32_MAX || t[v] < t[best]))
                best = v;
        }
        for (uint32_t v = 0; best != UINT32_MAX && v < nv; v++)
            rank += t[v] > 0 && (t[v] < t[best] || (t[v] == t[best] && v < best));
    }
    /* the measured shapes' rule over the reference pick */
    CakeLibWhy why = CAKE_SEL_FIT;
    const LibMeas *ex = exact_ref(op, dimv), *nb = ex ? NULL : nearest_ref(op, dimv);
    for (uint32_t r = 0; ex && r < ex->n; r++)
        if (held[ex->var[r]]) {
            best = ex->var[r], rank = r, why = CAKE_SEL_MEASURED;
            break;
        }
    if (nb && best != UINT32_MAX) {
        double tf = -1;
        for (uint32_t r = 0; r < nb->n; r++)
            if (nb->var[r] == best)
                tf = nb->ms[r];
        for (uint32_t r = 0; tf > 0 && r < nb->n; r++)
            if (nb->var[r] != best && held[nb->var[r]] && (double)nb->ms[r] * LIB_MEAS_CONTRADICT < tf) {
                best = nb->var[r], rank = r, why = CAKE_SEL_MEASURED_NEAR;
                break;
            }
    }
    CakeLibDim dims[LIB_MAX_DIMS];
    for (uint32_t i = 0; i < op->pub.ndims; i++)
        dims[i] = (CakeLibDim){op->dims[i], dimv[i]};
    CakeLibChoice a, b;
    ctx->ndiags = ctx->nerrors = 0;
    int ra = cake_lib_select(ctx, lib, opi, dims, op->pub.ndims, &a);
    int rb = cake_lib_explain(ctx, lib, opi, dims, op->pub.ndims, &b);
    ctx->ndiags = ctx->nerrors = 0;
    if (ra != rb || (!ra && (a.variant != b.variant || a.why != b.why || a.rank != b.rank)))
        fail(op, dimv, ir_fmt(ctx, "select (%d: %u %u %u) and explain (%d: %u %u %u) differ", ra,
                              a.variant, a.why, a.rank, rb, b.variant, b.why, b.rank));
    int outside = 0;
    for (uint32_t i = 0; i < op->pub.ndims; i++)
        outside |= op->has_range[i] && (dimv[i] < op->lo[i] || dimv[i] > op->hi[i]);
    if (outside && !ra)
        fail(op, dimv, "select chose a variant outside the op's range");
    if (!outside && best != UINT32_MAX && (ra || a.why != why || a.variant != best || a.rank != rank))
        fail(op, dimv, ir_fmt(ctx, "select chose %u (%s, rank %u), the reference %s (%s, rank %u)",
                              ra ? UINT32_MAX : a.variant, ra ? "-" : why_names[a.why], a.rank,
                              op->v[best].pub.name, why_names[why], rank));
    if (!ra && !held[a.variant])
        fail(op, dimv, ir_fmt(ctx, "select chose %s, whose domain fails", op->v[a.variant].pub.name));
}

static void dump_shape(CakeCtx *ctx, const CakeLib *lib, uint32_t opi, const int64_t *dimv)
{
    const LibOp *op = &lib->ops[opi];
    CakeLibDim dims[LIB_MAX_DIMS];
    for (uint32_t i = 0; i < op->pub.ndims; i++)
        dims[i] = (CakeLibDim){op->dims[i], dimv[i]};
    char s[256];
    shape_text(op, dimv, s, sizeof s);
    CakeLibChoice c;
    ctx->ndiags = ctx->nerrors = 0;
    if (cake_lib_select(ctx, lib, opi, dims, op->pub.ndims, &c)) {
        printf("%s %s -\n", op->pub.name, s);
        ctx->ndiags = ctx->nerrors = 0;
        return;
    }
    printf("%s %s %s %s %u %016llx", op->pub.name, s, op->v[c.variant].pub.name, why_names[c.why],
           c.rank, (unsigned long long)c.class_key);
    for (uint32_t i = 0; i < c.ntested; i++)
        printf(" %s%s", c.held[i] ? "+" : "-", op->v[c.tested[i]].pub.name);
    printf("\n");
}

/* the bounds of op's fast domains and their neighbours, for dim d: where an off-by-one
   would show */
static uint32_t bounds_of(const LibOp *op, uint32_t d, int64_t *out, uint32_t cap)
{
    uint32_t n = 0;
    for (uint32_t v = 0; op->plan.ready && v < op->pub.nvariants; v++) {
        int64_t lo = op->plan.lo[v * op->pub.ndims + d], hi = op->plan.hi[v * op->pub.ndims + d];
        /* the plan's open ends are INT64_MIN / INT64_MAX: clamped into the dims' range first */
        lo = lo < 0 ? 0 : lo > INT32_MAX ? INT32_MAX : lo;
        hi = hi < 0 ? 0 : hi > INT32_MAX ? INT32_MAX : hi;
        int64_t c[6] = {lo - 1, lo, lo + 1, hi - 1, hi, hi + 1};
        for (int i = 0; i < 6 && n < cap; i++)
            if (c[i] >= 1 && c[i] <= INT32_MAX)
                out[n++] = c[i];
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE.cakelib [SHAPES_PER_OP | --dump N]\n", argv[0]);
        return 2;
    }
    int dump = argc > 3 && !strcmp(argv[2], "--dump");
    int n = dump ? atoi(argv[3]) : argc > 2 ? atoi(argv[2]) : 3000;
    CakeCtx *ctx = ctx_new();
    CakeLib *lib;
    if (cake_lib_open(ctx, argv[1], &lib)) {
        diag_print_text(ctx, stderr, 0);
        return 2;
    }
    uint64_t seed = 0x2545f4914f6cdd1dull, shapes = 0;
    for (uint32_t opi = 0; opi < lib->nops; opi++) {
        const LibOp *op = &lib->ops[opi];
        int64_t dimv[LIB_MAX_DIMS];
        for (int s = 0; s < n; s++) {
            for (uint32_t d = 0; d < op->pub.ndims; d++)
                dimv[d] = seeded(op, d, &seed);
            (dump ? dump_shape : check_shape)(ctx, lib, opi, dimv);
            shapes++;
        }
        if (dump)
            continue;
        /* every measured shape and its neighbours */
        for (uint32_t m = 0; m < op->nmeas; m++)
            for (uint32_t d = 0; d <= op->pub.ndims; d++)
                for (int delta = -1; delta <= 1; delta += 2) {
                    memcpy(dimv, op->meas[m].dimv, op->pub.ndims * sizeof *dimv);
                    if (d < op->pub.ndims)
                        dimv[d] = clamp(dimv[d] + delta, 1, INT32_MAX);
                    check_shape(ctx, lib, opi, dimv);
                    shapes++;
                    if (d == op->pub.ndims)
                        break;
                }
        /* every bound of every dim, the other dims seeded */
        for (uint32_t d = 0; d < op->pub.ndims; d++) {
            int64_t b[6 * CAKE_LIB_MAX_VARIANTS];
            uint32_t nb = bounds_of(op, d, b, 6 * CAKE_LIB_MAX_VARIANTS);
            for (uint32_t i = 0; i < nb; i++) {
                for (uint32_t e = 0; e < op->pub.ndims; e++)
                    dimv[e] = seeded(op, e, &seed);
                dimv[d] = b[i];
                check_shape(ctx, lib, opi, dimv);
                shapes++;
            }
        }
    }
    if (!dump)
        printf("%s: %llu shapes of %u ops, %d disagreements\n", bad ? "FAIL" : "ok",
               (unsigned long long)shapes, lib->nops, bad);
    cake_lib_close(lib);
    ctx_free(ctx);
    return bad != 0;
}
