/* shapes_pick.c — choosing the test shapes of `run --check` (see check.h).
 *
 * Each free dim gets a tile size T: the largest constant it is divided by
 * (cdiv(M, BM), K / BK) or stepped by (`for i in .. N step S`) anywhere in the
 * kernel; else 1 when the dim is itself a grid extent (a batch or row count:
 * `grid [M]`); else the block size times its granularity (`assume N % 8 ==
 * 0`): a row each thread walks VEC elements at a time. Its pool of candidate
 * values: small numbers, powers of two and their neighbours, multiples of T and
 * ragged values around them, the constants the assumes compare it with (and
 * their neighbours), and the kernel's `shape` default halved repeatedly. A
 * profile orders each dim's pool by preference (aligned, ragged, tiny,
 * many row tiles, groups of heads, largest allowed, mixed, ...); a depth-first search takes the first
 * assignment, in that order, that satisfies every assume that evaluates and
 * the size budget. The default profile scales every `shape` default down by
 * one common power of two until it fits. One shape per profile, duplicates
 * dropped.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define MAX_FREE 8
#define MAX_POOL 512
#define SEARCH_LIMIT 20000

enum { P_ALIGNED, P_RAGGED, P_MANY, P_GROUPS, P_TINY, P_DEFAULT, P_MAX, P_MIXED, P_RAGGED_BIG,
       P_MIXED2, P_RAGGED_SMALL, P__COUNT };

/* P_GROUPS: a dim another dim is a multiple of (`assume H % HK == 0`: KV heads) at
 * GROUP_SIZE and that other dim at GROUP_RATIO times it, so that several groups
 * of several members each run (a group map that is wrong only when both exceed
 * one shows); the other dims ragged */
#define GROUP_SIZE 2
#define GROUP_RATIO 3

/* P_MANY: the first tiled dim at about MANY_TILES tiles (a prime: any group of 2 ..
 * 16 row tiles leaves a partial last group), the others at one and a half tiles
 * (two tiles, the second ragged); its reference may cost MANY_FLOPS_X times the
 * budget of the other profiles. */
#define MANY_TILES 19
#define MANY_FLOPS_X 4

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
    int64_t gran[MAX_FREE];            /* from `assume D % g == 0`, else 1 */
    int upper[MAX_FREE];               /* some assume bounds it from above */
    uint8_t divided[MAX_FREE];         /* its tile size is a divisor the kernel uses */
    int8_t group[MAX_FREE];            /* P_GROUPS: 1 a group count, 2 a multiple of one */
    int ngroups;
    uint32_t first_tiled;              /* the first dim divided by a tile size (P_MANY) */
    double flops_x;                    /* the current profile's budget factor */
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

static int is_dim(const Kernel *k, NodeId e, NodeId dim)
{
    const Node *n = &k->nodes[e];
    return e == dim || (n->op == OP_NAME && n->decl == dim);
}

/* the tile size and granularity of a dim (see the top of the file) */
static void find_tile(Pick *P, uint32_t f)
{
    const Kernel *k = P->k;
    NodeId dim = P->decl[f];
    int64_t t = 0, g = 1;
    int divisor = 0; /* the dim is a modulus (`t % H`, `H % HK`): a count */
    for (NodeId e = 1; e < k->nnodes; e++) {
        const Node *n = &k->nodes[e];
        NodeId a = 0, b = 0;
        int64_t v;
        if (n->op == OP_DIV || n->op == OP_MOD) {
            a = n->a;
            b = n->b;
        } else if (n->op == OP_CDIV && n->n == 2) {
            a = ir_list_at(k, n, 0);
            b = ir_list_at(k, n, 1);
        } else if (n->op == OP_FOR && n->c) {
            a = n->b;
            b = n->c;
        } else {
            continue;
        }
        if (n->op == OP_MOD && is_dim(k, b, dim))
            divisor = 1;
        if (!mentions(k, a, dim, 0) || mentions(k, b, dim, 0) ||
            !shape_eval_int(P->ctx, k, b, &P->env, &v) || v <= 1 || v > (1 << 20))
            continue;
        if (n->op == OP_MOD) {
            if (is_dim(k, a, dim) && v > g)
                g = v;
        } else if (v > t) {
            t = v;
        }
    }
    P->gran[f] = g;
    P->divided[f] = t > 1;
    if (t <= 1) {
        int batch = divisor;
        for (uint32_t i = 0; i < k->ngrid; i++) /* a grid extent, or a factor of one (heads) */
            batch |= mentions(k, k->grid[i], dim, 0);
        for (uint32_t i = 0; i < k->nargs; i++) /* B + 1 sequence offsets: B is a count */
            if (ir_arg_offsets(k, i) && is_dim(k, ir_list_at(k, &k->nodes[k->nodes[k->args[i]].a], 0), dim))
                batch = 1;
        int64_t bt = ce_block_threads(P->ctx, k, tg_first(k));
        t = batch ? 1 : (bt > 1 ? bt : 64) * g;
    }
    P->tile[f] = t;
}

/* P_GROUPS' roles: `assume A % D == 0` between two free dims makes D a group
 * count and A a multiple of it */
static void find_groups(Pick *P)
{
    const Kernel *k = P->k;
    for (uint32_t i = 0; i < k->nassumes; i++) {
        const Node *eq = &k->nodes[k->assumes[i]];
        if (eq->op != OP_EQ || k->nodes[eq->a].op != OP_MOD)
            continue;
        const Node *m = &k->nodes[eq->a];
        int64_t z;
        if (!shape_eval_int(P->ctx, k, eq->b, &P->env, &z) || z != 0)
            continue;
        for (uint32_t a = 0; a < P->nfree; a++)
            for (uint32_t d = 0; d < P->nfree; d++)
                if (a != d && is_dim(k, m->a, P->decl[a]) && is_dim(k, m->b, P->decl[d])) {
                    P->group[a] = 2;
                    P->group[d] = 1;
                    P->ngroups++;
                }
    }
}

/* constants the assumes compare the dim with: c, its neighbours, c / 2 */
static void assume_bounds(Pick *P, uint32_t f, int64_t *vals, uint32_t *nvals)
{
    const Kernel *k = P->k;
    for (uint32_t i = 0; i < k->nassumes; i++) {
        const Node *n = &k->nodes[k->assumes[i]];
        /* look through && chains one level deep */
        NodeId cmp[2] = {k->assumes[i], 0};
        if (n->op == OP_AND) {
            cmp[0] = n->a;
            cmp[1] = n->b;
        }
        for (int c = 0; c < 2 && cmp[c]; c++) {
            const Node *m = &k->nodes[cmp[c]];
            if (!(ir_ops[m->op].flags & OF_CMP))
                continue;
            NodeId other = is_dim(k, m->a, P->decl[f]) ? m->b : is_dim(k, m->b, P->decl[f]) ? m->a : 0;
            int64_t v;
            if (!other || !shape_eval_int(P->ctx, k, other, &P->env, &v) || v < 1 || *nvals > 24)
                continue;
            int le = (m->op == OP_LE || m->op == OP_LT) == (other == m->b);
            if (le && m->op != OP_EQ && m->op != OP_NE)
                P->upper[f] = 1;
            int64_t gg = P->gran[f];
            int64_t cands[] = {v, v - 1, v + 1, v - gg, v + gg, v / 2, v / 2 + gg, v / 2 - gg};
            for (size_t j = 0; j < sizeof cands / sizeof *cands; j++)
                vals[(*nvals)++] = cands[j];
        }
    }
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
    int64_t vals[32];
    uint32_t nvals = 0;
    assume_bounds(P, d, vals, &nvals);
    for (uint32_t i = 0; i < nvals; i++)
        pool_add(P, d, vals[i]);
}

static int tz(int64_t v)
{
    return v ? __builtin_ctzll((unsigned long long)v) : 63;
}

static double ragged_score(int64_t v, int64_t T, double target)
{
    return (v % T == 0 ? 1e9 : 0) + 10.0 * tz(v) + fabs(log2((double)v / target));
}

static double score(int profile, uint32_t d, int64_t v, int64_t T, int64_t dflt, int upper,
                    uint32_t first_tiled, int group)
{
    double x = (double)v;
    switch (profile) {
    case P_GROUPS:
        if (group)
            return fabs(x - (group == 1 ? GROUP_SIZE : GROUP_SIZE * GROUP_RATIO));
        return ragged_score(v, T, 1.5 * (double)T);
    case P_MANY: return ragged_score(v, T, (d == first_tiled ? MANY_TILES - 0.5 : 1.5) * (double)T);
    case P_MAX: return upper ? -x : fabs(log2(x / (2.0 * (double)T)));
    case P_ALIGNED: return (v % T ? 1e9 : 0) + fabs(log2(x / (2.0 * (double)T)));
    case P_RAGGED: return ragged_score(v, T, 1.5 * (double)T);
    case P_TINY: return x;
    case P_DEFAULT: {
        double D = dflt > 0 ? (double)dflt : 8.0 * (double)T;
        return x <= D ? log2(D / x) + ((int64_t)D % v ? 0.5 : 0) : 1e9 + x;
    }
    case P_MIXED: return d % 2 ? ragged_score(v, T, 2.5 * (double)T) : score(P_ALIGNED, d, v, T, 0, 0, 0, 0);
    case P_MIXED2: return d % 2 ? score(P_ALIGNED, d, v, T, 0, 0, 0, 0) : ragged_score(v, T, 2.5 * (double)T);
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
        P->score[i] = score(profile, d, P->pool[d][i], P->tile[d], P->dflt[d], P->upper[d],
                            P->first_tiled, P->group[d]);
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
        if (!ok || c.flops > P->max_flops * P->flops_x)
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

/* every `shape` default (or 8 tiles) divided by one power of two, the largest that fits */
static int scaled_default(Pick *P)
{
    ShapeEnv start = P->env;
    for (int sh = 0; sh < 40; sh++) {
        P->env = start;
        for (uint32_t f = 0; f < P->nfree; f++) {
            int64_t D = P->dflt[f] > 0 ? P->dflt[f] : 8 * P->tile[f];
            int64_t v = D >> sh;
            shape_env_set(&P->env, P->name[f], v > 0 ? v : 1);
        }
        if (shape_env_assumes_hold(P->ctx, P->k, &P->env, 0, NULL) && fits(P))
            return 1;
    }
    P->env = start;
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
    uint32_t want = opt && opt->max_shapes ? opt->max_shapes : 7;
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
    P->first_tiled = UINT32_MAX;
    P->flops_x = 1;
    find_groups(P);
    for (uint32_t f = 0; f < P->nfree; f++) {
        find_tile(P, f);
        make_pool(P, f);
        if (P->first_tiled == UINT32_MAX && P->divided[f]) {
            P->first_tiled = f;
            for (int64_t o = -2; o <= 2; o++) /* MANY_TILES tiles and ragged values near */
                pool_add(P, f, (MANY_TILES - 1) * P->tile[f] + P->tile[f] / 2 + o * P->gran[f]);
        }
    }
    if (P->nfree == 0) {
        if (shape_env_assumes_hold(ctx, k, &P->env, 0, NULL) && want && fits(P))
            out[nout++] = P->env;
        goto done;
    }
    ShapeEnv start = P->env;
    for (int prof = 0; prof < P__COUNT && nout < want; prof++) {
        P->env = start;
        P->flops_x = prof == P_MANY ? MANY_FLOPS_X : 1;
        if ((prof == P_MANY && P->first_tiled == UINT32_MAX) || (prof == P_GROUPS && !P->ngroups))
            continue;
        if (prof == P_DEFAULT) {
            if (!scaled_default(P))
                continue;
        } else {
            for (uint32_t f = 0; f < P->nfree; f++)
                order(P, prof, f);
            P->visits = 0;
            if (!search(P, 0))
                continue;
        }
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
