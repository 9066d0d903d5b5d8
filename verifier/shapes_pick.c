/* shapes_pick.c — choosing the test shapes of `run --check` (see check.h).
 *
 * Each free dim gets a tile size T (the largest constant it is divided by
 * anywhere in the kernel: cdiv(M, BM), K / BK, N % VEC, ...; else the block
 * size) and a pool of candidate values: small numbers, powers of two and their
 * neighbours, multiples of T and ragged values around them, and the kernel's
 * `shape` default halved repeatedly. A profile orders each dim's pool by
 * preference (aligned, ragged, tiny, default-scaled, mixed, ...); a
 * depth-first search takes the first assignment, in that order, that
 * satisfies every assume that evaluates and the size budget. One shape per
 * profile, duplicates dropped.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define MAX_FREE 8
#define MAX_POOL 512
#define SEARCH_LIMIT 20000

enum { P_ALIGNED, P_RAGGED, P_TINY, P_DEFAULT, P_MIXED, P_RAGGED_BIG, P_MIXED2, P_RAGGED_SMALL,
       P__COUNT };

typedef struct {
    CakeCtx *ctx;
    const Kernel *k;
    Interp *ref;
    double max_flops, max_elems;
    uint32_t nfree;
    Sym name[MAX_FREE];
    NodeId decl[MAX_FREE];
    int64_t tile[MAX_FREE];
    int64_t dflt[MAX_FREE];            /* the `shape` default, or 0 */
    int64_t pool[MAX_FREE][MAX_POOL];
    uint32_t npool[MAX_FREE];
    int64_t order[MAX_FREE][MAX_POOL]; /* the pool sorted for the current profile */
    double score[MAX_POOL];
    ShapeEnv env;
    uint32_t visits;
} Pick;

static int mentions(const Kernel *k, NodeId e, NodeId dim, int depth)
{
    if (!e || e >= k->nnodes || depth > 32)
        return 0;
    if (e == dim)
        return 1;
    const Node *n = &k->nodes[e];
    if (n->op == OP_NAME)
        return n->decl == dim;
    if (mentions(k, n->a, dim, depth + 1) || mentions(k, n->b, dim, depth + 1) ||
        mentions(k, n->c, dim, depth + 1))
        return 1;
    if (ir_ops[n->op].cls == OC_BUILTIN)
        for (uint32_t i = 0; i < n->n; i++)
            if (mentions(k, ir_list_at(k, n, i), dim, depth + 1))
                return 1;
    return 0;
}

/* the largest constant the dim is divided by (cdiv, /, %) anywhere in k */
static int64_t find_tile(Pick *P, NodeId dim)
{
    const Kernel *k = P->k;
    int64_t t = 0;
    for (NodeId e = 1; e < k->nnodes; e++) {
        const Node *n = &k->nodes[e];
        NodeId a = 0, b = 0;
        if (n->op == OP_DIV || n->op == OP_MOD) {
            a = n->a;
            b = n->b;
        } else if (n->op == OP_CDIV && n->n == 2) {
            a = ir_list_at(k, n, 0);
            b = ir_list_at(k, n, 1);
        } else {
            continue;
        }
        int64_t v;
        if (mentions(k, a, dim, 0) && !mentions(k, b, dim, 0) &&
            shape_eval_int(P->ctx, k, b, &P->env, &v) && v > t && v <= (1 << 20))
            t = v;
    }
    if (t > 1)
        return t;
    int64_t bt = ver_block_threads(P->ctx, k, 32);
    return bt > 1 ? bt : 64;
}

static void pool_add(Pick *P, uint32_t d, int64_t v)
{
    if (v < 1 || v > (INT64_C(1) << 24) || P->npool[d] == MAX_POOL)
        return;
    for (uint32_t i = 0; i < P->npool[d]; i++)
        if (P->pool[d][i] == v)
            return;
    P->pool[d][P->npool[d]++] = v;
}

static void make_pool(Pick *P, uint32_t d)
{
    int64_t T = P->tile[d];
    for (int64_t v = 1; v <= 9; v++)
        pool_add(P, d, v);
    for (int i = 2; i <= 22; i++) {
        int64_t p = INT64_C(1) << i;
        pool_add(P, d, p);
        pool_add(P, d, p - 1);
        pool_add(P, d, p + 1);
        pool_add(P, d, p + p / 2);
        pool_add(P, d, 3 * p + 5);
    }
    static const int64_t odd[] = {13, 17, 31, 37, 100, 127, 129, 191, 255, 257, 300, 333, 511,
                                  513, 777, 1000, 1023, 1025, 1500, 2047, 2049, 3000, 4095, 5000};
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++)
        pool_add(P, d, odd[i]);
    for (int64_t m = 1; m <= 5; m++) {
        pool_add(P, d, m * T);
        pool_add(P, d, m * T + T / 2);
        for (int64_t g = 1; g < T; g *= 2) {
            pool_add(P, d, m * T + g);
            pool_add(P, d, m * T - g);
            pool_add(P, d, m * T + 3 * g);
        }
    }
    for (int64_t g = 1; g <= T; g *= 2)
        for (int64_t o = 1; o <= 9; o += 2)
            pool_add(P, d, g * o);
    if (P->dflt[d] > 0)
        for (int64_t v = P->dflt[d]; v >= 1; v /= 2)
            pool_add(P, d, v);
}

static int tz(int64_t v)
{
    return v ? __builtin_ctzll((unsigned long long)v) : 63;
}

static double ragged_score(int64_t v, int64_t T, double target)
{
    return (v % T == 0 ? 1e9 : 0) + 10.0 * tz(v) + fabs(log2((double)v / target));
}

static double score(int profile, uint32_t d, int64_t v, int64_t T, int64_t dflt)
{
    double x = (double)v;
    switch (profile) {
    case P_ALIGNED: return (v % T ? 1e9 : 0) + fabs(log2(x / (2.0 * (double)T)));
    case P_RAGGED: return ragged_score(v, T, 1.5 * (double)T);
    case P_TINY: return x;
    case P_DEFAULT: {
        double D = dflt > 0 ? (double)dflt : 8.0 * (double)T;
        return x <= D ? log2(D / x) + ((int64_t)D % v ? 0.5 : 0) : 1e9 + x;
    }
    case P_MIXED: return d % 2 ? ragged_score(v, T, 2.5 * (double)T) : score(P_ALIGNED, d, v, T, 0);
    case P_MIXED2: return d % 2 ? score(P_ALIGNED, d, v, T, 0) : ragged_score(v, T, 2.5 * (double)T);
    case P_RAGGED_BIG: return ragged_score(v, T, 3.3 * (double)T);
    default: return ragged_score(v, T, 0.6 * (double)T);
    }
}

static Pick *sort_P; /* qsort has no context argument */
static uint32_t sort_d;
static int cmp_score(const void *a, const void *b)
{
    (void)sort_d;
    double x = sort_P->score[*(const uint32_t *)a], y = sort_P->score[*(const uint32_t *)b];
    return x < y ? -1 : x > y;
}

static void order(Pick *P, int profile, uint32_t d)
{
    uint32_t n = P->npool[d], idx[MAX_POOL];
    for (uint32_t i = 0; i < n; i++) {
        idx[i] = i;
        P->score[i] = score(profile, d, P->pool[d][i], P->tile[d], P->dflt[d]);
    }
    sort_P = P;
    sort_d = d;
    qsort(idx, n, sizeof *idx, cmp_score);
    for (uint32_t i = 0; i < n; i++)
        P->order[d][i] = P->pool[d][idx[i]];
}

static int grid_ok(Pick *P)
{
    const Kernel *k = P->k;
    for (uint32_t i = 0; i < k->ngrid; i++) {
        int64_t g;
        if (!shape_eval_int(P->ctx, k, k->grid[i], &P->env, &g))
            continue;
        if (g < 1 || g > (i == 0 ? INT64_C(0x7FFFFFFF) : 65535))
            return 0;
    }
    return 1;
}

static int fits(Pick *P)
{
    const Kernel *k = P->k;
    double elems = 0;
    for (uint32_t i = 0; i < k->nargs; i++) {
        DType dt;
        int rank;
        int64_t shape[IR_MAX_RANK], stride[IR_MAX_RANK];
        if (!shape_arg_geometry(P->ctx, k, i, &P->env, &dt, &rank, shape, stride))
            return 0;
        double n = 1;
        for (int j = 0; j < rank; j++)
            n *= (double)shape[j];
        if (rank && n == 0)
            return 0;
        elems += n;
    }
    if (elems > P->max_elems || !grid_ok(P))
        return 0;
    if (P->ref) {
        InterpCost c;
        uint32_t nd = P->ctx->ndiags, ne = P->ctx->nerrors;
        int ok = interp_cost(P->ref, &P->env, &c);
        P->ctx->ndiags = nd; /* a shape the estimate cannot handle is just not picked */
        P->ctx->nerrors = ne;
        if (!ok || c.flops > P->max_flops)
            return 0;
    }
    return 1;
}

static int search(Pick *P, uint32_t d)
{
    if (d == P->nfree)
        return fits(P);
    for (uint32_t i = 0; i < P->npool[d]; i++) {
        if (++P->visits > SEARCH_LIMIT)
            return 0;
        shape_env_set(&P->env, P->name[d], P->order[d][i]);
        if (!shape_env_assumes_hold(P->ctx, P->k, &P->env, 0, NULL))
            continue;
        if (search(P, d + 1))
            return 1;
    }
    /* unbind: drop this dim from the env again */
    for (uint32_t i = 0; i < P->env.n; i++)
        if (P->env.b[i].name == P->name[d]) {
            P->env.b[i] = P->env.b[--P->env.n];
            break;
        }
    return 0;
}

static int same_shape(const Pick *P, const ShapeEnv *a, const ShapeEnv *b)
{
    for (uint32_t d = 0; d < P->nfree; d++) {
        int64_t x = 0, y = 0;
        shape_env_get(a, P->name[d], &x);
        shape_env_get(b, P->name[d], &y);
        if (x != y)
            return 0;
    }
    return 1;
}

uint32_t shapes_pick(CakeCtx *ctx, const Kernel *k, Interp *ref, const ShapeEnv *base,
                     const PickOptions *opt, ShapeEnv *out, uint32_t max)
{
    Pick *P = calloc(1, sizeof *P);
    P->ctx = ctx;
    P->k = k;
    P->ref = ref;
    P->max_flops = opt && opt->max_flops > 0 ? opt->max_flops : 0x1p26;
    P->max_elems = opt && opt->max_elems > 0 ? opt->max_elems : 0x1p22;
    uint32_t want = opt && opt->max_shapes ? opt->max_shapes : 6;
    if (want > max)
        want = max;
    if (base)
        P->env = *base;
    uint32_t nd = ctx->ndiags, ne = ctx->nerrors;
    int params_ok = shape_env_bind_params(ctx, k, &P->env);
    ctx->ndiags = nd;
    ctx->nerrors = ne;
    uint32_t nout = 0;
    if (!params_ok)
        goto done;
    for (uint32_t i = 0; i < k->ndims && P->nfree < MAX_FREE; i++) {
        const Node *d = &k->nodes[k->dims[i]];
        int64_t v;
        if (shape_env_get(&P->env, d->name, &v))
            continue;
        uint32_t f = P->nfree++;
        P->name[f] = d->name;
        P->decl[f] = k->dims[i];
        for (uint32_t s = 0; s < k->nshapes; s++)
            if (k->shapes[s].name == d->name)
                P->dflt[f] = k->shapes[s].value;
    }
    for (uint32_t f = 0; f < P->nfree; f++) {
        P->tile[f] = find_tile(P, P->decl[f]);
        make_pool(P, f);
    }
    if (P->nfree == 0) {
        if (shape_env_assumes_hold(ctx, k, &P->env, 0, NULL) && want && fits(P))
            out[nout++] = P->env;
        goto done;
    }
    ShapeEnv start = P->env;
    for (int prof = 0; prof < P__COUNT && nout < want; prof++) {
        for (uint32_t f = 0; f < P->nfree; f++)
            order(P, prof, f);
        P->env = start;
        P->visits = 0;
        if (!search(P, 0))
            continue;
        int dup = 0;
        for (uint32_t i = 0; i < nout; i++)
            dup |= same_shape(P, &out[i], &P->env);
        if (!dup)
            out[nout++] = P->env;
    }
done:
    free(P);
    return nout;
}
