/* cake_cost_fit.c — the cost model's calibration (cake.h, cake_cost_fit;
 * docs/cost-model.md §5): given measured launches, fits the constants of
 * CostCalib on the training cases only and predicts every case with them.
 *
 * Each case is profiled once (cake_cost_profile: the counts do not depend on
 * the constants); the fit then predicts the profiles under many constants
 * (cost_predict, microseconds each). It minimizes the mean |log(predicted /
 * measured)| by coordinate descent over a grid per constant that narrows each
 * round. The interval's half-width is the 80th percentile of the training
 * cases' leave-one-kernel-out errors (each file's cases predicted by a fit
 * without it: what a kernel the fit never saw gets), and the families
 * (cost_pattern) the training cases fall in are the calibrated ones, each with
 * the 80th percentile of the fit's errors on it and its range of times. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "cake_priv.h"
#include "cost.h"

/* the constants the fit moves, with their ranges */
static const struct { size_t off; double lo, hi; } knobs[] = {
    {offsetof(CostCalib, eff_wgmma), 0.3, 1.0},
    {offsetof(CostCalib, eff_mma), 0.3, 1.0},
    {offsetof(CostCalib, eff_hbm), 0.5, 1.0},
    {offsetof(CostCalib, eff_l2), 0.2, 1.5},
    {offsetof(CostCalib, eff_alu), 0.1, 1.0},
    {offsetof(CostCalib, eff_sfu), 0.1, 1.0},
    {offsetof(CostCalib, eff_smem), 0.2, 1.2},
    {offsetof(CostCalib, overlap), 0.0, 1.0},
    {offsetof(CostCalib, l2_miss), 0.0, 1.0},
    {offsetof(CostCalib, launch_us), 1.0, 12.0},
    {offsetof(CostCalib, pipe_lat), 0.5, 3.0},
    {offsetof(CostCalib, loop_mlp), 1.0, 8.0},
    {offsetof(CostCalib, lat_block), 0.0, 3.0},
    {offsetof(CostCalib, req_rate), 0.0, 400.0},
    {offsetof(CostCalib, lat_mem), 0.3, 1.5},
    {offsetof(CostCalib, res_exposed), 0.0, 0.5},
    {offsetof(CostCalib, mlp_knee), 0.0, 8.0},
    {offsetof(CostCalib, pipe_knee), 0.0, 8.0},
    {offsetof(CostCalib, body_knee), 0.0, 8.0},
};
#define NKNOBS (sizeof knobs / sizeof knobs[0])

typedef struct {
    CostProfile *p;
    const TgDevice *dev;
    CostResult hdr;
} Prof;

static double *knob(CostCalib *c, size_t i) { return (double *)((char *)c + knobs[i].off); }

static double loss(Prof *pr, const CakeFitCase *cs, uint32_t n, const CostCalib *c)
{
    double sum = 0;
    uint32_t used = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!cs[i].train || !pr[i].p || cs[i].meas_ms <= 0)
            continue;
        CostResult r = pr[i].hdr;
        cost_predict(pr[i].p, pr[i].dev, c, &r);
        sum += fabs(log(r.time_ms / cs[i].meas_ms));
        used++;
    }
    return used ? sum / used : 0;
}

static void fit(Prof *pr, const CakeFitCase *cs, uint32_t n, CostCalib *c)
{
    double width = 1.0;   /* the grid's span, as a fraction of each range */
    for (int round = 0; round < 8; round++, width *= 0.55)
        for (size_t k = 0; k < NKNOBS; k++) {
            double *x = knob(c, k), best = *x, lo = knobs[k].lo, hi = knobs[k].hi;
            double bl = loss(pr, cs, n, c), span = (hi - lo) * width;
            double a = fmax(lo, best - span / 2), b = fmin(hi, best + span / 2);
            for (int g = 0; g <= 16; g++) {
                *x = a + (b - a) * g / 16;
                double l = loss(pr, cs, n, c);
                if (l < bl - 1e-9) {
                    bl = l;
                    best = *x;
                }
            }
            *x = best;
        }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the 80th percentile of e[0 .. n) (sorted in place) */
static double p80(double *e, uint32_t n)
{
    qsort(e, n, sizeof *e, cmp_double);
    return n ? e[(uint32_t)ceil(0.8 * n) - 1] : 0;
}

/* the bytes in flight of a prediction per what Little's law needs (0: none) */
static double in_flight_ratio(const CostResult *r)
{
    return r->inflight_needed > 0 ? r->inflight_bytes / r->inflight_needed : 0;
}

/* the interval (from the leave-one-out errors loo) and the families (from the
   fit's errors): the 80th percentile of each (the interval must cover 80%) */
static void families(CakeFitCase *cs, uint32_t n, const double *loo, CostCalib *c)
{
    double *err = malloc(sizeof(double) * (n + 1)), *fe = malloc(sizeof(double) * (n + 1));
    uint32_t ne = 0;
    c->npat = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!cs[i].train || !cs[i].ok || cs[i].meas_ms <= 0)
            continue;
        err[ne++] = loo[i];
        int f = 0;
        while (f < c->npat && strcmp(c->pat[f].key, cs[i].r.pattern))
            f++;
        if (f == c->npat) {
            if (c->npat >= COST_MAX_PATTERNS)
                continue;
            CostPattern *q = &c->pat[c->npat++];
            memset(q, 0, sizeof *q);
            snprintf(q->key, sizeof q->key, "%s", cs[i].r.pattern);
            q->t_lo = q->t_hi = cs[i].r.time_ms;
            q->mlp_lo = q->waves_lo = INFINITY;
        }
        CostPattern *q = &c->pat[f];
        int seen = 0;   /* another case of a kernel the family has already */
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = cs[j].train && cs[j].ok && cs[j].meas_ms > 0 && !strcmp(cs[j].r.pattern, q->key) &&
                   !strcmp(cs[j].file, cs[i].file) &&
                   !strcmp(cs[j].kernel ? cs[j].kernel : "", cs[i].kernel ? cs[i].kernel : "");
        q->kernels += !seen;
        q->n++;
        q->t_lo = fmin(q->t_lo, cs[i].r.time_ms);
        q->t_hi = fmax(q->t_hi, cs[i].r.time_ms);
        q->mlp_lo = fmin(q->mlp_lo, in_flight_ratio(&cs[i].r));
        q->waves_lo = fmin(q->waves_lo, cs[i].r.waves);
    }
    for (int f = 0; f < c->npat; f++) {
        uint32_t m = 0;
        for (uint32_t i = 0; i < n; i++)
            if (cs[i].train && cs[i].ok && cs[i].meas_ms > 0 && !strcmp(cs[i].r.pattern, c->pat[f].key))
                fe[m++] = loo[i];   /* what a kernel of the family the fit never saw gets */
        c->pat[f].err = p80(fe, m);
    }
    if (ne)
        c->rel_err = fmax(0.05, p80(err, ne));
    free(err);
    free(fe);
}

static void predict_all(Prof *pr, CakeFitCase *cs, uint32_t n, const CostCalib *c)
{
    for (uint32_t i = 0; i < n; i++)
        if (pr[i].p) {
            cs[i].r = pr[i].hdr;
            cost_predict(pr[i].p, pr[i].dev, c, &cs[i].r);
            cs[i].ok = 1;
        }
}

/* the verified module of `file`, verified once per file */
static Module *module_of(CakeCtx *ctx, const char **files, Module **mods, uint32_t *nf, const char *file)
{
    for (uint32_t i = 0; i < *nf; i++)
        if (!strcmp(files[i], file))
            return mods[i];
    Module *m = NULL;
    if (cake_verify_file(ctx, file, NULL, &m))
        m = NULL;
    files[*nf] = file;
    mods[(*nf)++] = m;
    return m;
}

static int fit_run(CakeCtx *ctx, const char *device, CakeFitCase *cs, uint32_t n, CostCalib *c)
{
    Prof *pr = arena_alloc(&ctx->arena, sizeof *pr * (n + 1));
    const char **files = arena_alloc(&ctx->arena, sizeof *files * (n + 1));
    Module **mods = arena_alloc(&ctx->arena, sizeof *mods * (n + 1));
    uint32_t nf = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t nd = ctx->ndiags, ne = ctx->nerrors, nw = ctx->nwarnings;
        Module *m = module_of(ctx, files, mods, &nf, cs[i].file);
        CakeCostOptions o = {.kernel = cs[i].kernel, .device = device, .shape = cs[i].shape,
                             .set = cs[i].set, .regs = cs[i].regs,
                             .spill_bytes = cs[i].spill_bytes};
        CostProfile *p = arena_alloc(&ctx->arena, sizeof *p);
        int rc = m ? cake_cost_profile(ctx, m, &o, p, &pr[i].dev, &pr[i].hdr) : 1;
        if (rc == 0)
            pr[i].p = p;
        else
            snprintf(cs[i].err, sizeof cs[i].err, "%s", ctx->ndiags > nd ? ctx->diags[nd].msg
                                                       : "the file does not verify");
        ctx->ndiags = nd;   /* a case that cannot be costed is reported in the case, not as an error */
        ctx->nerrors = ne;
        ctx->nwarnings = nw;
        cs[i].ok = 0;
    }
    fit(pr, cs, n, c);
    /* the errors the interval and the families are judged by: each training
       file's cases predicted by a fit without that file (leave one kernel out),
       which is what a kernel the fit never saw gets */
    double *loo = arena_alloc(&ctx->arena, sizeof *loo * (n + 1));
    for (uint32_t i = 0; i < n; i++) {
        if (!cs[i].train || !pr[i].p || cs[i].meas_ms <= 0 || loo[i] > 0)
            continue;
        for (uint32_t j = 0; j < n; j++)   /* leave file i out */
            if (cs[j].train && !strcmp(cs[j].file, cs[i].file))
                cs[j].train = 2;
        for (uint32_t j = 0; j < n; j++)
            if (cs[j].train == 2)
                cs[j].train = 0, cs[j].ok = -1;
        CostCalib l = *c;
        fit(pr, cs, n, &l);
        for (uint32_t j = 0; j < n; j++)
            if (cs[j].ok == -1) {
                CostResult r = pr[j].hdr;
                cost_predict(pr[j].p, pr[j].dev, &l, &r);
                loo[j] = fmax(1e-9, fabs(r.time_ms / cs[j].meas_ms - 1));
                cs[j].train = 1;
                cs[j].ok = 0;
            }
    }
    c->rel_err = 0.15;
    predict_all(pr, cs, n, c);
    families(cs, n, loo, c);
    c->pat_err = 0.25;
    predict_all(pr, cs, n, c);   /* again: with the interval and the families */
    snprintf(c->source, sizeof c->source, "fitted by cakec calibrate");
    return 0;
}

int cake_cost_fit(CakeCtx *ctx, const char *device, CakeFitCase *cs, uint32_t n, CostCalib *c)
{
    int rc;
    cost_calib_default(c);
    CAKE_PROTECTED(ctx, rc, fit_run(ctx, device, cs, n, c));
    return rc;
}
