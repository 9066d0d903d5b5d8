/* lib_select.c — dispatch: the shape class of a call, the table lookup, and
 * the exact domain test of the variants the table ranks (docs/library.md,
 * "Dispatch"). Nothing here parses, compiles or allocates: a select is a
 * binary search in a sorted array and a few integer evaluations.
 *
 * The shape class of dims d0..dn-1 is one byte per dim: the dim's bucket
 * (its bit length, 1 for 1, 2 for 2..3, 3 for 4..7, ...) in the low five
 * bits and its power-of-two divisibility (trailing zero bits, at most 7) in
 * the high three, dim 0 in the lowest byte. The tuned cells are keyed by the
 * whole class; the cost model's grid by the buckets alone (the divisibility
 * bits zero), clamped to the op's range and rounded to the nearest grid point
 * (at most LIB_GRID_POINTS buckets per dim, evenly spaced). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib_priv.h"
#include "protect.h"

unsigned lib_bucket(int64_t v)
{
    if (v <= 0)
        return 0;
    unsigned b = 64u - (unsigned)__builtin_clzll((unsigned long long)v);
    return b < 31 ? b : 31;
}

static unsigned twos(int64_t v)
{
    if (v <= 0)
        return 0;
    unsigned t = (unsigned)__builtin_ctzll((unsigned long long)v);
    return t < 7 ? t : 7;
}

uint64_t lib_class_key(const LibOp *op, const int64_t *dimv)
{
    uint64_t key = 0;
    for (uint32_t i = 0; i < op->pub.ndims; i++)
        key |= (uint64_t)(lib_bucket(dimv[i]) | twos(dimv[i]) << 5) << (8 * i);
    return key;
}

uint64_t lib_grid_key(const LibOp *op, const int64_t *dimv)
{
    uint64_t key = 0;
    for (uint32_t i = 0; i < op->pub.ndims; i++) {
        unsigned b = lib_bucket(dimv[i]), st = op->gstep[i];
        b = b < op->glo[i] ? op->glo[i] : b > op->ghi[i] ? op->ghi[i] : b;
        b = op->glo[i] + (b - op->glo[i] + st / 2) / st * st;   /* the nearest grid point */
        b = b > op->ghi[i] ? op->ghi[i] : b;
        key |= (uint64_t)b << (8 * i);
    }
    return key;
}

static const LibCell *cell_find(const LibCell *c, uint32_t n, uint64_t key)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c[mid].key == key)
            return &c[mid];
        if (c[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

#define LIB_NEAR_BUCKETS 4   /* how far (in buckets, summed over the dims) a tuned class may be (docs/library.md, "The ranking", says why 4) */

/* the tuned cell nearest the class `key`: the fewest buckets apart summed over the dims,
   then the closest divisibility; NULL when none is within LIB_NEAR_BUCKETS */
static const LibCell *cell_near(const LibOp *op, uint64_t key)
{
    const LibCell *best = NULL;
    unsigned bestd = UINT32_MAX;
    for (uint32_t c = 0; c < op->ntuned; c++) {
        unsigned d = 0, t = 0;
        for (uint32_t i = 0; i < op->pub.ndims; i++) {
            unsigned a = (unsigned)(key >> (8 * i)) & 0xff, b = (unsigned)(op->tuned[c].key >> (8 * i)) & 0xff;
            int db = (int)(a & 31) - (int)(b & 31);
            d += (unsigned)(db < 0 ? -db : db);
            t += (a >> 5) != (b >> 5);
        }
        if (d <= LIB_NEAR_BUCKETS && d * 16 + t < bestd) {
            bestd = d * 16 + t;
            best = &op->tuned[c];
        }
    }
    return best;
}

static int cell_cmp(const void *a, const void *b)
{
    uint64_t x = ((const LibCell *)a)->key, y = ((const LibCell *)b)->key;
    return x < y ? -1 : x > y;
}

void lib_cells_sort(LibCell *c, uint32_t n)
{
    if (n > 1)   /* c may be NULL where there are none */
        qsort(c, n, sizeof *c, cell_cmp);
}

/* ---- domains ------------------------------------------------------------------- */

/* cdiv(x, d), d >= 1 */
static int64_t cond_cdiv(int64_t x, int64_t d)
{
    return x / d + (x % d > 0);
}

int lib_cond_holds(const LibCond *c, const int64_t *dimv)
{
    int64_t x = cond_cdiv(dimv[c->dim], c->div);   /* LC_MOD's divisor is 1: the dim itself */
    if (c->nfac == 2)
        x *= cond_cdiv(dimv[c->dim2], c->div2);
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

/* v's own conditions and assumes at dimv */
static int own_domain_holds(const CakeLib *lib, const LibOp *op, const LibVariant *v,
                            const int64_t *dimv, NodeId *failed, const LibCond **cond)
{
    if (failed)
        *failed = 0;
    if (cond)
        *cond = NULL;
    for (uint32_t i = 0; i < v->nconds; i++)
        if (!lib_cond_holds(&v->conds[i], dimv)) {
            if (cond)
                *cond = &v->conds[i];
            return 0;
        }
    for (uint32_t i = 0; i < v->nas; i++)
        if (!lib_assume_holds(lib, op, v, i, dimv)) {
            if (failed)
                *failed = v->as[i].node;
            return 0;
        }
    return 1;
}

/* the variant whose own domain fails first for v at dimv: a launch of a sequence
   (whose kernel holds the failing assume) or v; NULL when v's domain holds. A launch
   of a sequence fails alone with neither *failed nor *cond: it is never chosen. */
static const LibVariant *failing(const CakeLib *lib, const LibOp *op, const LibVariant *v,
                                 const int64_t *dimv, NodeId *failed, const LibCond **cond)
{
    if (v->part_of >= 0 && !v->nsteps) {
        if (failed)
            *failed = 0;
        if (cond)
            *cond = NULL;
        return v;
    }
    for (uint32_t s = 0; s < v->nsteps; s++)
        if (!own_domain_holds(lib, op, &op->v[v->steps[s]], dimv, failed, cond))
            return &op->v[v->steps[s]];
    return own_domain_holds(lib, op, v, dimv, failed, cond) ? NULL : v;
}

int lib_domain_holds(const CakeLib *lib, const LibOp *op, const LibVariant *v,
                     const int64_t *dimv, NodeId *failed, const LibCond **cond)
{
    return !failing(lib, op, v, dimv, failed, cond);
}

static const char *failed_cond_at(const CakeLib *lib, const LibOp *op, const LibVariant *v,
                                  const int64_t *dimv);

/* ---- select -------------------------------------------------------------------- */

/* the dims of the call in the op's order: 1, or 0 with E1202 */
static int dims_of(CakeCtx *ctx, const LibOp *op, const CakeLibDim *dims, uint32_t n, int64_t *dimv)
{
    uint32_t seen = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = i;   /* most callers give the dims in the op's order, many its names */
        if (j >= op->pub.ndims || (dims[i].name != op->dims[j] && strcmp(op->dims[j], dims[i].name)))
            for (j = 0; j < op->pub.ndims && strcmp(op->dims[j], dims[i].name); j++)
                ;
        const char *why = j == op->pub.ndims ? "is not a dim of the op"
                          : dims[i].value < 1 || dims[i].value > INT32_MAX ? "must be 1 .. 2^31-1"
                                                                          : NULL;
        if (why) {
            Diag *d = diag_report(ctx, E1202, IR_NOSPAN, "op `%s`: `%s` %s", op->pub.name,
                                  dims[i].name, why);
            char list[256];
            size_t at = 0;
            for (uint32_t k = 0; k < op->pub.ndims && at < sizeof list; k++)
                at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", k ? ", " : "", op->dims[k]);
            diag_help(ctx, d, "the dims of `%s`: %s", op->pub.name, list);
            return 0;
        }
        dimv[j] = dims[i].value;
        seen |= 1u << j;
    }
    for (uint32_t j = 0; j < op->pub.ndims; j++)
        if (!(seen & 1u << j)) {
            Diag *d = diag_report(ctx, E1202, IR_NOSPAN, "op `%s`: no value for dim `%s`", op->pub.name,
                                  op->dims[j]);
            diag_help(ctx, d, "give every dim of the op: --shape %s=...", op->dims[j]);
            return 0;
        }
    return 1;
}

/* variant v's domain at dimv, through the plan where the op has one */
static int holds(const CakeLib *lib, const LibOp *op, uint32_t v, const int64_t *dimv)
{
    return op->plan.ready ? lib_domain_fast(lib, op, v, dimv)
                          : lib_domain_holds(lib, op, &op->v[v], dimv, NULL, NULL);
}

void lib_plan(CakeCtx *ctx, CakeLib *lib)
{
    for (uint32_t i = 0; i < lib->nops; i++) {
        lib_domain_plan(ctx, &lib->ops[i]);
        lib_fit_plan(ctx, &lib->ops[i]);
    }
}

static void try_variant(const CakeLib *lib, const LibOp *op, uint32_t v, CakeLibChoice *out,
                        int *found, uint32_t r)
{
    for (uint32_t i = 0; i < out->ntested; i++)
        if (out->tested[i] == v)
            return;
    int held = holds(lib, op, v, out->dimv);
    out->tested[out->ntested] = (uint8_t)v;
    out->held[out->ntested++] = (uint8_t)held;
    if (held && !*found) {
        *found = 1;
        out->variant = v;
        out->rank = r;
    }
}

/* the fitted variant of the least predicted time whose domain holds, in one pass over the
   predictions: a domain is tested only where the prediction beats the best holding one so
   far (a select tests a few, not the ranks before the pick one by one, which cost ten
   times more at the row ops' 40 variants); its rank is the count of predictions below it */
static void fit_pick(const CakeLib *lib, const LibOp *op, CakeLibChoice *out, int *found)
{
    /* t[i]: the prediction of variant vs[i] (the plan's fitted variants, in index order),
       or, without a plan, of variant i (-1: no fit) */
    double t[CAKE_LIB_MAX_VARIANTS];
    const uint8_t *vs = op->plan.fit_ready ? op->plan.fit_var : NULL;
    uint32_t n = vs ? lib_fit_predict_fitted(op, out->dimv, t), op->plan.nfit
                    : (lib_fit_predict_all(op, out->dimv, t), op->pub.nvariants < CAKE_LIB_MAX_VARIANTS
                                                               ? op->pub.nvariants : CAKE_LIB_MAX_VARIANTS);
    uint32_t bi = UINT32_MAX;
    double tb = 0;
    for (uint32_t i = 0; i < n; i++)
        if (t[i] > 0 && (bi == UINT32_MAX || t[i] < tb)) {
            uint32_t v = vs ? vs[i] : i;
            int held = holds(lib, op, v, out->dimv);
            out->tested[out->ntested] = (uint8_t)v;
            out->held[out->ntested++] = (uint8_t)held;
            if (held)
                bi = i, tb = t[i];
        }
    if (bi == UINT32_MAX)
        return;
    uint32_t rank = 0;
    for (uint32_t i = 0; i < n; i++)
        rank += t[i] > 0 && (t[i] < tb || (t[i] == tb && i < bi));
    *found = 1;
    out->variant = vs ? vs[bi] : bi;
    out->rank = rank;
}

/* how many of v's own conditions and assumes fail at dimv */
static uint32_t own_failures(const CakeLib *lib, const LibOp *op, const LibVariant *v, const int64_t *dimv)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < v->nconds; i++)
        n += !lib_cond_holds(&v->conds[i], dimv);
    for (uint32_t i = 0; i < v->nas; i++)
        n += !lib_assume_holds(lib, op, v, i, dimv);
    return n;
}

/* how many of variant v's conditions fail at dimv (a sequence: its launches' too) */
static uint32_t failures(const CakeLib *lib, const LibOp *op, const LibVariant *v, const int64_t *dimv)
{
    if (v->part_of >= 0 && !v->nsteps)
        return UINT32_MAX;   /* never the nearest: it is not chosen alone */
    uint32_t n = own_failures(lib, op, v, dimv);
    for (uint32_t s = 0; s < v->nsteps; s++)
        n += own_failures(lib, op, &op->v[v->steps[s]], dimv);
    return n;
}

/* E1203, naming the nearest variant (the fewest conditions failing) and what it requires */
static void report_uncovered(CakeCtx *ctx, const CakeLib *lib, const LibOp *op, const int64_t *dimv)
{
    char shape[256];
    size_t at = 0;
    for (uint32_t i = 0; i < op->pub.ndims && at < sizeof shape; i++)
        at += (size_t)snprintf(shape + at, sizeof shape - at, "%s%s=%lld", i ? ", " : "",
                               op->dims[i], (long long)dimv[i]);
    uint32_t best = 0, fewest = UINT32_MAX;
    for (uint32_t i = 0; i < op->pub.nvariants; i++) {
        uint32_t n = failures(lib, op, &op->v[i], dimv);
        if (n < fewest)
            fewest = n, best = i;
    }
    NodeId failed = 0;
    const LibCond *cond = NULL;
    const LibVariant *named = &op->v[best], *v = failing(lib, op, named, dimv, &failed, &cond);
    v = v ? v : named;
    Diag *d = diag_report(ctx, E1203, IR_NOSPAN, "no variant of op `%s` covers %s", op->pub.name, shape);
    if (cond)
        diag_note(ctx, d, IR_NOSPAN, "the nearest variant, `%s`, requires `%s` (its `when`)",
                  named->pub.name, cond->text);
    else if (failed)
        diag_note(ctx, d, v->k->nodes[failed].span, "the nearest variant, `%s` (kernel `%s`%s%s), "
                  "assumes this, which fails there", named->pub.name, v->pub.kernel,
                  v->pub.set[0] ? " at " : "", v->pub.set);
    for (uint32_t i = 0; i < op->pub.nvariants; i++) {
        const char *why = i == best || op->v[i].part_of >= 0 ? NULL : failed_cond_at(lib, op, &op->v[i], dimv);
        if (why)
            diag_note(ctx, d, IR_NOSPAN, "variant `%s`%s%s%s requires `%s`", op->v[i].pub.name,
                      op->v[i].pub.set[0] ? " (" : "", op->v[i].pub.set, op->v[i].pub.set[0] ? ")" : "", why);
    }
    diag_help(ctx, d, "add a variant for this shape to the library's manifest (docs/library.md), "
                      "or pad the problem to a shape a variant covers");
}

/* the op's `range` holds at dimv: 1, or 0 with E1214 naming the dim that is outside */
static int in_range(CakeCtx *ctx, const LibOp *op, const int64_t *dimv)
{
    for (uint32_t i = 0; i < op->pub.ndims; i++)
        if (op->has_range[i] && (dimv[i] < op->lo[i] || dimv[i] > op->hi[i])) {
            Diag *d = diag_report(ctx, E1214, IR_NOSPAN, "op `%s`: %s=%lld is outside the op's range: "
                                  "%s must be in %lld .. %lld", op->pub.name, op->dims[i],
                                  (long long)dimv[i], op->dims[i], (long long)op->lo[i],
                                  (long long)op->hi[i]);
            diag_help(ctx, d, "the manifest's `range` of the op is what its variants were built and "
                              "checked for; split the problem, or widen the range with a variant that "
                              "covers it");
            return 0;
        }
    return 1;
}

/* the measured shape at exactly the call's dims (m, or NULL): its variants by their times
   there, the first whose domain holds (docs/library.md, "Measured shapes") */
static void measured_pick(const CakeLib *lib, const LibOp *op, const LibMeas *m, CakeLibChoice *out,
                          int *found)
{
    for (uint32_t r = 0; m && r < m->n && !*found; r++) {
        try_variant(lib, op, m->var[r], out, found, r);
        if (*found) {
            out->why = CAKE_SEL_MEASURED;
            out->measured = (int32_t)(m - op->meas);
        }
    }
}

/* the fit's pick against the nearest measured shape of the call's class (m, or NULL):
   where the pick was timed there LIB_MEAS_CONTRADICT times slower than another variant,
   the fastest of those faster by that much whose domain holds at the call's dims replaces it */
static void measured_near(const CakeLib *lib, const LibOp *op, const LibMeas *m, CakeLibChoice *out)
{
    if (!m)
        return;
    uint32_t f = 0;
    while (f < m->n && m->var[f] != out->variant)
        f++;
    if (f == m->n)
        return;   /* the pick was not timed there: nothing contradicts it */
    for (uint32_t r = 0; r < f && (double)m->ms[r] * LIB_MEAS_CONTRADICT < (double)m->ms[f]; r++)
        if (holds(lib, op, m->var[r], out->dimv)) {
            out->fit_variant = out->variant;
            out->fit_slowdown = (double)m->ms[f] / (double)m->ms[r];
            out->variant = m->var[r];
            out->rank = r;
            out->why = CAKE_SEL_MEASURED_NEAR;
            out->measured = (int32_t)(m - op->meas);
            return;
        }
}

static int select_impl(CakeCtx *ctx, const CakeLib *lib, uint32_t opi, const int64_t *dimv,
                       int all, CakeLibChoice *out)
{
    const LibOp *op = &lib->ops[opi];
    memset(out->dimv, 0, sizeof out->dimv);
    memcpy(out->dimv, dimv, op->pub.ndims * sizeof *dimv);
    out->op = opi;
    out->ntested = 0;
    out->measured = -1;
    out->fit_variant = UINT32_MAX;
    out->fit_slowdown = 0;
    out->class_key = lib_class_key(op, dimv);
    if (!in_range(ctx, op, dimv))
        return 1;
    /* the rankings in turn: the measured shape, the fitted model's (checked against the
       nearest measured shape), the tuned class, the nearest tuned class, the cost model's
       cell */
    int found = 0;
    const LibMeas *exact = NULL, *near = op->nmeas ? lib_meas_class(op, out->class_key, dimv, &exact) : NULL;
    measured_pick(lib, op, exact, out, &found);
    if (found && !all)
        return 0;
    if (op->nfit && !all) {
        fit_pick(lib, op, out, &found);
        if (found) {
            out->why = CAKE_SEL_FIT;
            measured_near(lib, op, near, out);
            return 0;
        }
    } else if (op->nfit) {
        double t[CAKE_LIB_MAX_VARIANTS];
        uint32_t n = lib_fit_predict_all(op, dimv, t), v;
        int before = found;
        for (uint32_t r = 0; r < n && (v = lib_fit_next(op, t)) != UINT32_MAX; r++)
            try_variant(lib, op, v, out, &found, r);
        if (found && !before) {
            out->why = CAKE_SEL_FIT;
            measured_near(lib, op, near, out);
        }
    }
    const LibCell *cells[3] = {cell_find(op->tuned, op->ntuned, out->class_key), NULL,
                               cell_find(op->model, op->nmodel, lib_grid_key(op, dimv))};
    static const CakeLibWhy whys[3] = {CAKE_SEL_TUNED, CAKE_SEL_NEAR, CAKE_SEL_MODEL};
    if (!cells[0])
        cells[1] = cell_near(op, out->class_key);
    if (!found)
        out->why = CAKE_SEL_ORDER;
    for (uint32_t k = 0; k < 3 && !found; k++)
        for (uint32_t r = 0; cells[k] && r < cells[k]->n && !found; r++)
            if (cells[k]->rank[r] < op->pub.nvariants) {
                try_variant(lib, op, cells[k]->rank[r], out, &found, r);
                if (found)
                    out->why = whys[k];
            }
    for (uint32_t v = 0; v < op->pub.nvariants && (all || !found); v++)
        if (op->v[v].part_of < 0)
            try_variant(lib, op, v, out, &found, out->ntested);
    if (!found) {
        report_uncovered(ctx, lib, op, dimv);
        return 1;
    }
    return 0;
}

static int select_dims(CakeCtx *ctx, const CakeLib *lib, uint32_t op, const CakeLibDim *dims,
                       uint32_t n, int all, CakeLibChoice *out)
{
    int64_t dimv[LIB_MAX_DIMS];
    if (op >= lib->nops) {
        diag_report(ctx, E1201, IR_NOSPAN, "op index %u: the library has %u ops", op, lib->nops);
        return 1;
    }
    if (!dims_of(ctx, &lib->ops[op], dims, n, dimv))
        return 1;
    return select_impl(ctx, lib, op, dimv, all, out);
}

int cake_lib_select(CakeCtx *ctx, const CakeLib *lib, uint32_t op, const CakeLibDim *dims,
                    uint32_t ndims, CakeLibChoice *out)
{
    int rc;
    CAKE_PROTECTED(ctx, rc, select_dims(ctx, lib, op, dims, ndims, 0, out));
    return rc;
}

int cake_lib_explain(CakeCtx *ctx, const CakeLib *lib, uint32_t op, const CakeLibDim *dims,
                     uint32_t ndims, CakeLibChoice *out)
{
    int rc;
    CAKE_PROTECTED(ctx, rc, select_dims(ctx, lib, op, dims, ndims, 1, out));
    return rc;
}

static int select_env(CakeCtx *ctx, const CakeLib *lib, uint32_t op, const ShapeEnv *env,
                      CakeLibChoice *out)
{
    CakeLibDim dims[SHAPE_ENV_MAX];
    for (uint32_t i = 0; i < env->n; i++)
        dims[i] = (CakeLibDim){ir_symstr(ctx, env->b[i].name), env->b[i].value};
    return select_dims(ctx, lib, op, dims, env->n, 0, out);
}

int cake_lib_select_env(CakeCtx *ctx, const CakeLib *lib, uint32_t op, const ShapeEnv *env,
                        CakeLibChoice *out)
{
    int rc;
    CAKE_PROTECTED(ctx, rc, select_env(ctx, lib, op, env, out));
    return rc;
}

static const char *failed_cond_at(const CakeLib *lib, const LibOp *op, const LibVariant *v,
                                  const int64_t *dimv)
{
    NodeId failed = 0;
    const LibCond *cond = NULL;
    const LibVariant *f = failing(lib, op, v, dimv, &failed, &cond);
    if (!f)
        return NULL;
    if (cond)
        return cond->text;
    if (!failed)
        return "a launch of a sequence variant: chosen only as part of it";
    Span s = f->k->nodes[failed].span;
    return ir_fmt(lib->ctx, "%.*s", (int)(s.hi - s.lo), lib->ctx->files[s.file].text + s.lo);
}

const char *cake_lib_failed_cond(const CakeLib *lib, const CakeLibChoice *ch, uint32_t v)
{
    const LibOp *op = &lib->ops[ch->op];
    return v < op->pub.nvariants ? failed_cond_at(lib, op, &op->v[v], ch->dimv) : NULL;
}

/* ---- ops ---------------------------------------------------------------------------- */

uint32_t cake_lib_nops(const CakeLib *lib)
{
    return lib ? lib->nops : 0;
}

int cake_lib_op(const CakeLib *lib, uint32_t i, CakeLibOp *out)
{
    if (!lib || i >= lib->nops)
        return 1;
    *out = lib->ops[i].pub;
    return 0;
}

int cake_lib_variant(const CakeLib *lib, uint32_t op, uint32_t v, CakeLibVariant *out)
{
    if (!lib || op >= lib->nops || v >= lib->ops[op].pub.nvariants)
        return 1;
    *out = lib->ops[op].v[v].pub;
    out->launches = lib->ops[op].v[v].nsteps;
    return 0;
}

const char *cake_lib_tuned_device(const CakeLib *lib)
{
    return lib && lib->tuned_device ? lib->tuned_device : "";
}

static int find_op(CakeCtx *ctx, const CakeLib *lib, const char *name, uint32_t *op)
{
    for (uint32_t i = 0; i < lib->nops; i++)
        if (!strcmp(lib->ops[i].pub.name, name)) {
            *op = i;
            return 0;
        }
    Diag *d = diag_report(ctx, E1201, IR_NOSPAN, "the library has no op `%s`", name);
    for (uint32_t i = 0; i < lib->ngaps; i++)
        if (!strcmp(lib->gaps[i].op, name))
            diag_note(ctx, d, IR_NOSPAN, "`%s` is a documented gap of this library: %s", name,
                      lib->gaps[i].why);
    char list[512];
    size_t at = 0;
    for (uint32_t i = 0; i < lib->nops && at < sizeof list; i++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "", lib->ops[i].pub.name);
    diag_help(ctx, d, "its ops: %s", lib->nops ? list : "(none)");
    return 1;
}

int cake_lib_find_op(CakeCtx *ctx, const CakeLib *lib, const char *name, uint32_t *op)
{
    int rc;
    CAKE_PROTECTED(ctx, rc, find_op(ctx, lib, name, op));
    return rc;
}
