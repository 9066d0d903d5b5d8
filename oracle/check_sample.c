/* check_sample.c — the sample of a large `run --check` shape (check.h):
 * whole rows of the reference's outer loop, or output tiles of a
 * matmul-like reference, seeded, so that the reference's cost is that of
 * the sample while the kernel still runs on the whole shape. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define MAX_ROWS 256
#define MAX_TILES 64
#define TILE 16

/* n distinct values of [0, of) in ascending order, 0 and of - 1 among them */
static uint32_t pick(uint64_t *st, int64_t of, uint32_t n, int64_t *out)
{
    if ((int64_t)n >= of) {
        for (int64_t i = 0; i < of; i++)
            out[i] = i;
        return (uint32_t)of;
    }
    uint32_t m = 0;
    out[m++] = 0;
    if (n > 1)
        out[m++] = of - 1;
    while (m < n) {
        int64_t v = (int64_t)(check_rand(st) % (uint64_t)of);
        uint32_t j = 0;
        while (j < m && out[j] != v)
            j++;
        if (j == m)
            out[m++] = v;
    }
    for (uint32_t i = 1; i < m; i++) /* insertion sort: m <= MAX_ROWS */
        for (uint32_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
            int64_t t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return m;
}

static uint32_t clamp_count(double fit, int64_t of, uint32_t cap)
{
    double n = floor(fit);
    if (n < 1)
        n = 1;
    if (n > cap)
        n = cap;
    if (n > (double)of)
        n = (double)of;
    return (uint32_t)n;
}

/* tiles: distinct row tiles, each with one column tile (the last row tile
 * with the last column tile); returns the number of rows given to I */
static void choose_tiles(Interp *I, uint64_t *st, const InterpSamplePlan *p, uint32_t n,
                         CheckSample *s)
{
    int64_t tm = p->rows < TILE ? p->rows : TILE, tn = p->cols < TILE ? p->cols : TILE;
    int64_t rt = (p->rows + tm - 1) / tm, ct = (p->cols + tn - 1) / tn;
    int64_t pickd[MAX_TILES];
    uint32_t m = pick(st, rt, n, pickd);
    size_t cap = (size_t)m * (size_t)tm;
    int64_t *row = malloc(cap * sizeof *row), *lo = malloc(cap * sizeof *lo),
            *hi = malloc(cap * sizeof *hi);
    uint32_t nr = 0;
    for (uint32_t i = 0; i < m; i++) {
        int64_t c = pickd[i] == rt - 1 ? ct - 1 : (int64_t)(check_rand(st) % (uint64_t)ct);
        for (int64_t r = pickd[i] * tm; r < pickd[i] * tm + tm && r < p->rows; r++) {
            row[nr] = r;
            lo[nr] = c * tn;
            hi[nr] = c * tn + tn < p->cols ? c * tn + tn : p->cols;
            nr++;
        }
    }
    interp_set_sample(I, nr, row, lo, hi);
    free(row);
    free(lo);
    free(hi);
    s->tiles = 1;
    s->count = m;
    s->of = rt * ct;
    s->tile[0] = tm;
    s->tile[1] = tn;
}

int check_sample_choose(CakeCtx *ctx, const Kernel *k, Interp *I, const ShapeEnv *env,
                        const CheckOptions *opt, uint64_t seed, CheckSample *s)
{
    memset(s, 0, sizeof *s);
    InterpSamplePlan p;
    if (!interp_sample_plan(I, env, &p) || p.rows <= 0) {
        char buf[256];
        Diag *d = diag_report(ctx, E0960, k->span,
                              "shape %s is too large to check in full, and the reference "
                              "cannot be sampled: %s",
                              shape_env_format(ctx, k, env, buf, sizeof buf),
                              p.ok ? "its row loop is empty" : p.why);
        diag_help(ctx, d, "a sampled check evaluates whole rows: write the reference as "
                          "`for m in 0 .. M { ... out[m, ...] = ... }` or `out[m, n] = ...`; "
                          "or check a smaller --shape");
        return 0;
    }
    InterpCost c;
    double per_row = interp_cost(I, env, &c) ? c.flops / (double)p.rows : 1;
    if (per_row < 1)
        per_row = 1;
    double budget = opt && opt->sample_flops > 0 ? opt->sample_flops : 0x1p28;
    uint64_t st = seed;
    s->on = 1;
    s->seed = seed;
    if (p.tiles && p.cols > 0 && budget / per_row < 8) {
        double per_tile = per_row * (double)(p.cols < TILE ? p.cols : TILE) / (double)p.cols *
                          (double)(p.rows < TILE ? p.rows : TILE);
        int64_t rt = (p.rows + TILE - 1) / TILE;
        choose_tiles(I, &st, &p, clamp_count(budget / per_tile, rt, MAX_TILES), s);
        return 1;
    }
    int64_t row[MAX_ROWS];
    uint32_t n = pick(&st, p.rows, clamp_count(budget / per_row, p.rows, MAX_ROWS), row);
    interp_set_sample(I, n, row, NULL, NULL);
    s->count = n;
    s->of = p.rows;
    return 1;
}
