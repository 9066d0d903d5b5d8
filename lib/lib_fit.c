/* lib_fit.c — the fitted wave model of a tiled op's variants (docs/library.md,
 * "The fitted model"): between tuned points, a variant's time at M, N, K is
 * predicted as a + b * f1 + c * f2 + d * f3, where f1 is the k-tiles on the
 * critical path of its launch (the waves of its blocks over the SMs, times the
 * k-tiles each block takes), f2 the bytes it moves and f3 a family's own
 * (split-K's atomics, GEMV's reads of B from DRAM, the tiles' waves: each wave's
 * prologue and epilogue; and GEMV's f4, its blocks), from its tile geometry (BM, BN,
 * BK, SPLIT; MR, NC, LPC, WARPS for the GEMV family) at its bindings. The
 * coefficients are fitted per variant from every tuned shape it was timed at
 * (least squares of the relative error, nonnegative), when the table is
 * folded; a select evaluates them at the call's dims (no lookup, no
 * allocation) and ranks the variants by the predicted time. What the bucket
 * classes cannot see, wave quantization (133 tiles on 132 SMs), the model
 * counts exactly.
 *
 * The row ops (rmsnorm, layernorm, softmax, cross_entropy) have a family of their
 * own, `rows`: blocks of R rows (a block per row, lane groups of a warp per row) or of
 * a chunk of one row (the split-row sequences), each thread walking its share of the
 * row; time = a + b * waves + c * waves * (elements per thread) + d * M N
 * + e * waves * (elements per thread, where N is odd), with the waves counted over the
 * blocks resident per SM (threads and shared memory). The
 * geometry is read off the kernel's own grid, block size and shared-memory plan at
 * its bindings (rows_geometry), not from parameter names. */
#include <math.h>
#include <string.h>
#include "lib_priv.h"
#include "smem.h"

static const char *const family_names[] = {"", "tiles", "splitk", "gemv", "rows"};

int lib_fit_family(const char *name)
{
    for (int i = 1; i < LIB_FIT__COUNT; i++)
        if (!strcmp(name, family_names[i]))
            return i;
    return 0;
}

const char *lib_fit_family_name(int f)
{
    return f > 0 && f < LIB_FIT__COUNT ? family_names[f] : "";
}

int lib_fit_dims(LibOp *op)
{
    static const char *const names[3] = {"M", "N", "K"};
    for (int i = 0; i < 3; i++) {
        uint32_t d = 0;
        while (d < op->pub.ndims && strcmp(op->dims[d], names[i]))
            d++;
        if (d == op->pub.ndims) {
            if (op->pub.ndims < 2)
                return 0;
            op->fit_dim[0] = 0;   /* rows, columns (B, V of cross_entropy) */
            op->fit_dim[1] = op->fit_dim[2] = 1;
            return 2;
        }
        op->fit_dim[i] = (uint8_t)d;
    }
    return 1;
}

/* the value of parameter `name` of v's kernel at v's bindings (its default where
   unbound), or dflt where the kernel has no such parameter */
static int64_t param_of(CakeCtx *ctx, const LibVariant *v, const char *name, int64_t dflt)
{
    Sym s = ir_intern_cstr(ctx, name);
    CeEnv env = {v->pb, v->npb, NULL, NULL, NULL};
    int64_t x;
    if (ce_env_get(&env, s, &x))
        return x;
    for (uint32_t i = 0; i < v->k->nparams; i++) {
        const Node *p = &v->k->nodes[v->k->params[i]];
        if (p->name == s)
            return p->a && ce_eval_int(ctx, v->k, p->a, &env, &x) ? x : dflt;
    }
    return dflt;
}

/* the blocks of v's launch at rows m, columns n of op: the product of its grid at v's
   bindings, or 0 where it does not evaluate */
static int64_t grid_blocks(CakeCtx *ctx, const LibOp *op, const LibVariant *v, int64_t m, int64_t n)
{
    CeBinding b[64];
    uint32_t nb = v->npb < 62 ? v->npb : 62;
    memcpy(b, v->pb, nb * sizeof *b);
    b[nb++] = (CeBinding){op->dsym[op->fit_dim[0]], m};
    b[nb++] = (CeBinding){op->dsym[op->fit_dim[1]], n};
    CeEnv env = {b, nb, NULL, NULL, NULL};
    int64_t blocks = 1, x;
    for (uint32_t i = 0; i < v->k->ngrid; i++) {
        if (!ce_eval_int(ctx, v->k, v->k->grid[i], &env, &x) || x < 1)
            return 0;
        blocks *= x;
    }
    return blocks;
}

/* the row family's geometry of v (a sequence: its first launch, the one that splits the
   row), from its kernel at its bindings: rows per block from the grid at 2^20 rows of
   one column, the columns per block from the grid at one row of 2^20 columns (a grid
   that does not grow with the columns takes the whole row), threads from the block size,
   blocks resident per SM from the device's threads, blocks and shared memory per SM */
static void rows_geometry(CakeCtx *ctx, const LibOp *op, LibVariant *fv)
{
    const LibVariant *v = fv->nsteps ? &op->v[fv->steps[0]] : fv;
    const int64_t big = (int64_t)1 << 20;
    int64_t g[LIB_GEO__COUNT] = {1, 1, 1, 1, 1, 1, 1};
    int64_t per_m = grid_blocks(ctx, op, v, big, 1), per_n = grid_blocks(ctx, op, v, 1, big);
    CeEnv env = {v->pb, v->npb, NULL, NULL, NULL};
    int64_t threads = 0, units = 0;
    if (v->k->block_size && ce_eval_int(ctx, v->k, v->k->block_size, &env, &units))
        threads = tg_block_threads(v->tg, (Unit)v->k->block_unit, units);
    if (per_m < 1 || per_n < 1 || threads < 1 || threads > 2048)
        return;   /* no geometry: the variant is not fitted */
    g[LIB_GEO_ROWS] = per_m >= big ? 1 : big / per_m;
    if (per_n > 1) {
        g[LIB_GEO_CHUNK] = big / per_n;
        g[LIB_GEO_PARTS] = 2;
    }
    g[LIB_GEO_TPR] = threads / g[LIB_GEO_ROWS] > 0 ? threads / g[LIB_GEO_ROWS] : 1;
    const TgDevice *d = tg_device_default(v->tg);
    int64_t res = d ? d->max_threads_per_sm / threads : 2048 / threads;
    if (d && res > d->max_blocks_per_sm)
        res = d->max_blocks_per_sm;
    SmemPlan sp;
    an_smem_plan(ctx, v->k, v->tg, &env, &sp);
    if (d && sp.total > 0 && sp.total < SMEM_HUGE && res > d->smem_per_sm / (sp.total + 1024))
        res = d->smem_per_sm / (sp.total + 1024);   /* 1 KB of each block's the driver reserves */
    g[LIB_GEO_RESIDENT] = res > 0 ? res : 1;
    lib_fit_set_geometry(&fv->fit, g);
}

/* the launch of a sequence whose parameters are the tile geometry: the last that
   declares BM or SPLIT (a split-K kernel, before the store of gemm_splitk_bulk.tir),
   else the last */
static const LibVariant *gemm_step(CakeCtx *ctx, const LibOp *op, const LibVariant *fv)
{
    if (!fv->nsteps)
        return fv;
    for (uint32_t i = fv->nsteps; i-- > 0;) {
        const LibVariant *v = &op->v[fv->steps[i]];
        if (v->k && (param_of(ctx, v, "BM", 0) || param_of(ctx, v, "SPLIT", 0)))
            return v;
    }
    return &op->v[fv->steps[fv->nsteps - 1]];
}

void lib_fit_geometry(CakeCtx *ctx, const LibOp *op, LibVariant *fv)
{
    if (fv->fit.family == LIB_FIT_ROWS) {
        const LibVariant *v = fv->nsteps ? &op->v[fv->steps[0]] : fv;
        if (v->k)
            rows_geometry(ctx, op, fv);
        return;
    }
    const LibVariant *v = gemm_step(ctx, op, fv);
    if (!fv->fit.family || !v->k)
        return;
    int64_t g[LIB_GEO__COUNT];
    g[LIB_GEO_BM] = param_of(ctx, v, "BM", 128);
    g[LIB_GEO_BN] = param_of(ctx, v, "BN", 128);
    g[LIB_GEO_BK] = param_of(ctx, v, "BK", 64);
    g[LIB_GEO_SPLIT] = param_of(ctx, v, "SPLIT", 1);
    g[LIB_GEO_MR] = param_of(ctx, v, "MR", 1);
    /* the GEMV family's columns per block: WARPS warps of 32 / LPC lane groups, NC columns each */
    int64_t lpc = param_of(ctx, v, "LPC", 32), nc = param_of(ctx, v, "NC", 1);
    lpc = lpc > 0 ? lpc : 32;
    nc = nc > 0 ? nc : 1;
    g[LIB_GEO_COLS] = param_of(ctx, v, "WARPS", 4) * 32 / lpc * nc;
    g[LIB_GEO_LANE_K] = lpc * 8 / nc;   /* K per step of a lane group: 16-byte vectors over its lanes */
    lib_fit_set_geometry(&fv->fit, g);
}

/* ceil(a / b) of integers 0 < a < 2^31, b >= 1, from inv = 1 / b (or a product of a few
   such inverses), in doubles: an integer quotient n comes out within a few ulps of n,
   which the factor 1 - 1e-14 puts below n; a quotient n + r / b (remainder r >= 1) loses
   (a / b) 1e-14 to the factor, less than r / b for any a < 10^14. A select evaluates a
   few dozen: a division costs ten times more. */
static double cdiv_inv(double a, double inv)
{
    double x = a * inv * (1 - 1e-14);
    double q = (double)(int64_t)x;   /* x < 2^31: no libm call (ceil is one without SSE4.1) */
    return q + (q < x);
}

void lib_fit_set_geometry(LibFit *f, const int64_t *geo)
{
    for (int i = 0; i < LIB_GEO__COUNT; i++) {
        f->geo[i] = geo[i] < 1 ? 1 : geo[i] > LIB_FIT_GEO_MAX ? LIB_FIT_GEO_MAX : geo[i];
        f->inv[i] = 1.0 / (double)f->geo[i];
    }
}

void lib_fit_set_sms(LibOp *op, int64_t sms)
{
    op->fit_sms = sms > 0 && sms <= 256 ? sms : TG_DEFAULT_SM_COUNT;
    op->fit_inv_sms = 1.0 / (double)op->fit_sms;
    op->fit_inv_sms8 = 1.0 / (double)(op->fit_sms * 8);
}

/* the tile counts along M, N and K of the last variant seen: consecutive variants share
   their tiles (the manifest lists a family's together), so a select's few dozen
   predictions divide the dims a few times only */
typedef struct { double inv[3], q[3]; } Tiles;

static double tiles_along(Tiles *c, int d, double x, double inv)
{
    if (c->inv[d] != inv) {
        c->inv[d] = inv;
        c->q[d] = cdiv_inv(x, inv);
    }
    return c->q[d];
}

/* what the features of every variant share at one shape: the dims as doubles, the MB of
   A, B and C (a GEMM), the row ops' m n / 10^6 and whether the row is odd */
typedef struct { double m, n, k, moved, mn; int odd; } Shape;

static Shape shape_of(const LibOp *op, const int64_t *dimv)
{
    Shape s = {(double)dimv[op->fit_dim[0]], (double)dimv[op->fit_dim[1]],
               (double)dimv[op->fit_dim[2]], 0, 0, (int)(dimv[op->fit_dim[1]] % 2)};
    s.moved = ((s.m + s.n) * s.k * 2 + s.m * s.n * 2) * 1e-6;   /* MB of A, B and C */
    s.mn = s.m * s.n * 1e-6;
    return s;
}

static void features(const LibOp *op, const LibVariant *v, const Shape *sh, Tiles *c,
                     double f[LIB_FIT_TERMS])
{
    const double *inv = v->fit.inv;
    if (v->fit.family == LIB_FIT_ROWS) {
        f[0] = 1;
        /* rows m, columns n: blocks of ROWS rows (and of a CHUNK of the row when split),
           RESIDENT of them per SM; each thread walks n / (parts * TPR) elements a wave */
        double m = sh->m, n = sh->n;
        double parts = v->fit.geo[LIB_GEO_PARTS] > 1 ? cdiv_inv(n, inv[LIB_GEO_CHUNK]) : 1;
        double blocks = cdiv_inv(m, inv[LIB_GEO_ROWS]) * parts;
        double waves = cdiv_inv(blocks, op->fit_inv_sms * inv[LIB_GEO_RESIDENT]);
        f[1] = waves;
        f[2] = waves * cdiv_inv(n, parts > 1 ? inv[LIB_GEO_TPR] / parts : inv[LIB_GEO_TPR]);
        f[3] = sh->mn;
        /* an odd row is not 4-byte aligned: its elements one scalar load each, or read
           twice (rmsnorm_warp.tir), where an even one moves in pairs or vectors */
        f[4] = sh->odd ? f[2] : 0;
        return;
    }
    double M = sh->m, N = sh->n, K = sh->k;
    f[0] = 1;
    f[2] = sh->moved;
    f[3] = f[4] = 0;
    switch (v->fit.family) {
    case LIB_FIT_SPLITK: {
        double sp = (double)v->fit.geo[LIB_GEO_SPLIT];
        double kt = tiles_along(c, 2, K, inv[LIB_GEO_BK]);
        double tiles = tiles_along(c, 0, M, inv[LIB_GEO_BM]) * tiles_along(c, 1, N, inv[LIB_GEO_BN]);
        f[1] = cdiv_inv(tiles * sp, op->fit_inv_sms) * cdiv_inv(kt, inv[LIB_GEO_SPLIT]);
        f[3] = sp * M * N * 1e-6;   /* the partial sums' atomics */
        break;
    }
    case LIB_FIT_GEMV: {
        /* up to 8 blocks per SM at a time; each lane group walks K for MR rows; B is read
           once per row group (from L2 after the first) */
        double rows = cdiv_inv(M, inv[LIB_GEO_MR]), blocks = rows * cdiv_inv(N, inv[LIB_GEO_COLS]);
        f[1] = cdiv_inv(blocks, op->fit_inv_sms8) * cdiv_inv(K, inv[LIB_GEO_LANE_K]) *
               (double)v->fit.geo[LIB_GEO_MR] * 1e-3;
        f[2] = rows * N * K * 2e-6;
        f[3] = sh->moved;
        f[4] = blocks * 1e-3;   /* each block's own cost (its reduction across warps, its store):
                                   at a short K it is most of the time, and f1 counts only
                                   the waves of blocks, mostly one */
        break;
    }
    default: {
        double kt = tiles_along(c, 2, K, inv[LIB_GEO_BK]);
        double tiles = tiles_along(c, 0, M, inv[LIB_GEO_BM]) * tiles_along(c, 1, N, inv[LIB_GEO_BN]);
        f[3] = cdiv_inv(tiles, op->fit_inv_sms);   /* the waves: each one's fixed cost */
        f[1] = f[3] * kt;
        break;
    }
    }
}

/* sh lies within LIB_FIT_SPAN (the row family: LIB_FIT_SPAN_ROWS) of the least and
   greatest dims v was fitted at, in each of M, N and K (rows: M and N); a fit without a
   span is unbounded */
static int in_span(const LibFit *f, const Shape *sh)
{
    const double d[3] = {sh->m, sh->n, sh->k};
    const double x = f->family == LIB_FIT_ROWS ? LIB_FIT_SPAN_ROWS : LIB_FIT_SPAN;
    for (int i = 0; i < 3; i++)
        if (f->span[i][1] && (d[i] * x < (double)f->span[i][0] || d[i] > (double)f->span[i][1] * x))
            return 0;
    return 1;
}

/* v's predicted ms; `last` is the fitted variant predicted before it (NULL: none), whose
   features f still holds: a variant of the same family and geometry (the row ops' lane
   groups at other ITERS, say) has the same features, which are not counted again */
static double predict(const LibOp *op, const LibVariant *v, const Shape *sh, Tiles *c,
                      const LibVariant *last, double f[LIB_FIT_TERMS])
{
    if (!v->fit.ok)
        return -1;
    double t = 0;
    if (!last || last->fit.family != v->fit.family || memcmp(last->fit.geo, v->fit.geo, sizeof v->fit.geo))
        features(op, v, sh, c, f);
    if (!in_span(&v->fit, sh))
        return -1;
    for (int i = 0; i < LIB_FIT_TERMS; i++)
        t += v->fit.coef[i] * f[i];
    return t;
}

double lib_fit_predict(const LibOp *op, const LibVariant *v, const int64_t *dimv)
{
    Tiles c = {{0, 0, 0}, {0, 0, 0}};
    double f[LIB_FIT_TERMS];
    Shape sh = shape_of(op, dimv);
    return predict(op, v, &sh, &c, NULL, f);
}

/* ---- the fit -------------------------------------------------------------------------- */

void lib_fit_add(const LibOp *op, LibVariant *v, const int64_t *dimv, double ms)
{
    if (!v->fit.family || ms <= 0)
        return;
    double f[LIB_FIT_TERMS], w = 1 / (ms * ms);   /* the relative error, squared */
    Tiles c = {{0, 0, 0}, {0, 0, 0}};
    Shape sh = shape_of(op, dimv);
    features(op, v, &sh, &c, f);
    for (int i = 0; i < 3; i++) {
        int64_t d = dimv[op->fit_dim[i]], *s = v->fit.span[i];
        s[0] = !s[1] || d < s[0] ? d : s[0];
        s[1] = d > s[1] ? d : s[1];
    }
    for (int i = 0; i < LIB_FIT_TERMS; i++) {
        v->fit.atb[i] += w * f[i] * ms;
        for (int j = 0; j < LIB_FIT_TERMS; j++)
            v->fit.ata[i][j] += w * f[i] * f[j];
    }
    v->fit.npoints++;
}

/* the last term in `on` after the constant that is the constant times a number at every
   point (Cauchy-Schwarz with equality: (sum w f0 ft)^2 = sum w f0^2 * sum w ft^2), else 1;
   the row family keeps dropping its first term (its waves) */
static int repeats_constant(const LibVariant *v, const int *on)
{
    if (v->fit.family == LIB_FIT_ROWS)
        return 1;
    for (int t = LIB_FIT_TERMS - 1; t >= 1; t--) {
        double c = v->fit.ata[0][t], q = v->fit.ata[0][0] * v->fit.ata[t][t];
        if (on[t] && q > 0 && fabs(c * c - q) <= 1e-9 * q)
            return t;
    }
    return 1;
}

/* x of the normal equations restricted to the terms in `on` (Gaussian elimination with
   partial pivoting): 1, or 0 when they are singular (a pivot under 1e-12 of its term's
   own square sum) */
static int solve(const LibVariant *v, const int *on, double *x)
{
    double a[LIB_FIT_TERMS][LIB_FIT_TERMS + 1];
    int idx[LIB_FIT_TERMS], n = 0;
    for (int i = 0; i < LIB_FIT_TERMS; i++)
        if (on[i])
            idx[n++] = i;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            a[i][j] = v->fit.ata[idx[i]][idx[j]];
        a[i][n] = v->fit.atb[idx[i]];
    }
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(a[r][c]) > fabs(a[p][c]))
                p = r;
        if (fabs(a[p][c]) <= 1e-12 * v->fit.ata[idx[c]][idx[c]] || fabs(a[p][c]) < 1e-300)   /* a column the others give */
            return 0;
        for (int j = 0; j <= n; j++) {
            double t = a[c][j];
            a[c][j] = a[p][j];
            a[p][j] = t;
        }
        for (int r = 0; r < n; r++)
            if (r != c) {
                double m = a[r][c] / a[c][c];
                for (int j = c; j <= n; j++)
                    a[r][j] -= m * a[c][j];
            }
    }
    memset(x, 0, LIB_FIT_TERMS * sizeof *x);
    for (int i = 0; i < n; i++)
        x[idx[i]] = a[i][n] / a[i][i];
    return 1;
}

void lib_fit_solve(LibVariant *v)
{
    v->fit.ok = 0;
    if (!v->fit.family ||
        v->fit.npoints < (v->fit.family == LIB_FIT_ROWS ? LIB_FIT_MIN_POINTS_ROWS : LIB_FIT_MIN_POINTS))
        return;
    /* a row variant that came first at no tuned shape is not fitted (docs/library.md, "The
       row family"): from its few points the fit ranked it first where it lost */
    if (v->fit.family == LIB_FIT_ROWS && !v->fit.wins)
        return;
    /* nonnegative: a term whose coefficient comes out negative is dropped and the rest
       fitted again (each round drops one term at least, so at most LIB_FIT_TERMS rounds) */
    int on[LIB_FIT_TERMS];
    for (int i = 0; i < LIB_FIT_TERMS; i++)
        on[i] = v->fit.ata[i][i] > 0;   /* a term zero at every point (the tiles' f3) is left out */
    /* GEMV's fifth term, its blocks, only from 3 shapes a term: from fewer it fits noise */
    if (v->fit.family == LIB_FIT_GEMV && v->fit.npoints < LIB_FIT_MIN_POINTS_F4)
        on[4] = 0;
    for (int round = 0; round < 2 * LIB_FIT_TERMS; round++) {
        double x[LIB_FIT_TERMS];
        if (!solve(v, on, x)) {
            /* singular: a term that repeats another (the waves of a split row that never
               fill one wave, or of tiles that never fill two, are the constant's) is
               dropped: one the constant repeats if any, else the first after the constant */
            int t = repeats_constant(v, on);
            while (t < LIB_FIT_TERMS && !on[t])
                t++;
            if (t == LIB_FIT_TERMS)
                return;
            on[t] = 0;
            continue;
        }
        int neg = 0;
        for (int i = 0; i < LIB_FIT_TERMS; i++)
            if (on[i] && x[i] < 0)
                on[i] = 0, neg = 1;
        if (!neg) {
            memcpy(v->fit.coef, x, sizeof x);
            v->fit.ok = 1;
            return;
        }
    }
}

/* ---- the ranking ---------------------------------------------------------------------- */

static int same_geometry(const LibFit *a, const LibFit *b)
{
    return a->family == b->family && !memcmp(a->geo, b->geo, sizeof a->geo);
}

static int geo_before(const LibFit *a, const LibFit *b)
{
    static const int order[] = {LIB_GEO_BK, LIB_GEO_BM, LIB_GEO_BN};
    if (a->family != b->family)
        return a->family < b->family;
    for (int i = 0; i < 3; i++)
        if (a->geo[order[i]] != b->geo[order[i]])
            return a->geo[order[i]] < b->geo[order[i]];
    return 0;
}

void lib_fit_unplan(LibOp *op)
{
    op->plan.fit_ready = 0;
}

void lib_fit_plan(CakeCtx *ctx, LibOp *op)
{
    LibPlan *p = &op->plan;
    uint32_t nv = op->pub.nvariants < CAKE_LIB_MAX_VARIANTS ? op->pub.nvariants : CAKE_LIB_MAX_VARIANTS;
    p->fit_ready = 0;
    p->fit_var = arena_alloc(&ctx->arena, nv + 1);
    p->fit_geo = arena_alloc(&ctx->arena, (nv + 1) * sizeof *p->fit_geo);
    p->fit_coef = arena_alloc(&ctx->arena, (nv + 1) * sizeof *p->fit_coef);
    p->geo_var = arena_alloc(&ctx->arena, nv + 1);
    p->nfit = p->ngeo = 0;
    for (uint32_t v = 0; v < nv; v++) {
        const LibFit *f = &op->v[v].fit;
        if (!f->ok)
            continue;
        uint32_t g = 0;
        while (g < p->ngeo && !same_geometry(&op->v[p->geo_var[g]].fit, f))
            g++;
        if (g == p->ngeo)
            p->geo_var[p->ngeo++] = (uint8_t)v;
        p->fit_var[p->nfit] = (uint8_t)v;
        p->fit_geo[p->nfit] = (uint16_t)g;
        memcpy(p->fit_coef[p->nfit++], f->coef, sizeof f->coef);
    }
    /* the geometries in the order of their K, M and N tiles, so that the tile counts
       along each dim (features' Tiles) are mostly the last ones counted */
    uint16_t at[CAKE_LIB_MAX_VARIANTS];
    for (uint32_t i = 1; i < p->ngeo; i++)
        for (uint32_t j = i; j > 0 && geo_before(&op->v[p->geo_var[j]].fit, &op->v[p->geo_var[j - 1]].fit); j--) {
            uint8_t x = p->geo_var[j];
            p->geo_var[j] = p->geo_var[j - 1];
            p->geo_var[j - 1] = x;
        }
    for (uint32_t g = 0; g < p->ngeo; g++)
        for (uint32_t i = 0; i < p->nfit; i++)
            if (same_geometry(&op->v[p->geo_var[g]].fit, &op->v[p->fit_var[i]].fit))
                at[i] = (uint16_t)g;
    memcpy(p->fit_geo, at, p->nfit * sizeof *at);
    p->fit_ready = 1;
}

/* the plan's form of the predictions: the features once per geometry, then one dot
   product per fitted variant (the same sums in the same order: the same doubles) */
uint32_t lib_fit_predict_fitted(const LibOp *op, const int64_t *dimv, double *t)
{
    const LibPlan *p = &op->plan;
    Tiles c = {{0, 0, 0}, {0, 0, 0}};
    double f[CAKE_LIB_MAX_VARIANTS][LIB_FIT_TERMS];
    uint32_t n = 0;
    Shape sh = shape_of(op, dimv);
    for (uint32_t g = 0; g < p->ngeo; g++)
        features(op, &op->v[p->geo_var[g]], &sh, &c, f[g]);
    for (uint32_t i = 0; i < p->nfit; i++) {
        const double *k = p->fit_coef[i], *x = f[p->fit_geo[i]];
        double s = 0;
        if (!in_span(&op->v[p->fit_var[i]].fit, &sh)) {
            t[i] = -1;
            continue;
        }
        _Static_assert(LIB_FIT_TERMS == 5, "the sum below has a term per feature");
        s += k[0] * x[0];   /* the order of predict's loop: the same double */
        s += k[1] * x[1];
        s += k[2] * x[2];
        s += k[3] * x[3];
        s += k[4] * x[4];
        t[i] = s;
        n += s > 0;
    }
    return n;
}

uint32_t lib_fit_predict_all(const LibOp *op, const int64_t *dimv, double *t)
{
    if (op->plan.fit_ready) {
        double tf[CAKE_LIB_MAX_VARIANTS];
        uint32_t n = lib_fit_predict_fitted(op, dimv, tf);
        for (uint32_t v = 0; v < op->pub.nvariants && v < CAKE_LIB_MAX_VARIANTS; v++)
            t[v] = -1;
        for (uint32_t i = 0; i < op->plan.nfit; i++)
            t[op->plan.fit_var[i]] = tf[i];
        return n;
    }
    uint32_t n = 0;
    Tiles c = {{0, 0, 0}, {0, 0, 0}};
    double f[LIB_FIT_TERMS];
    const LibVariant *last = NULL;
    Shape sh = shape_of(op, dimv);
    for (uint32_t v = 0; v < op->pub.nvariants && v < CAKE_LIB_MAX_VARIANTS; v++) {
        n += (t[v] = predict(op, &op->v[v], &sh, &c, last, f)) > 0;
        last = op->v[v].fit.ok ? &op->v[v] : last;
    }
    return n;
}

uint32_t lib_fit_next(const LibOp *op, double *t)
{
    uint32_t best = UINT32_MAX;
    for (uint32_t v = 0; v < op->pub.nvariants && v < CAKE_LIB_MAX_VARIANTS; v++)
        if (t[v] > 0 && (best == UINT32_MAX || t[v] < t[best]))
            best = v;
    if (best != UINT32_MAX)
        t[best] = -1;
    return best;
}
