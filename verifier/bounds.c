/* bounds.c — every index of a global access (load, store, cp.async source) and
 * of a shared/register tile with a constant shape is proven in bounds for all
 * shapes the kernel's `assume`s allow.
 *
 * An index becomes a linear form over atoms (dims, loop variables, thread and
 * block indices, stage tokens, opaque subterms such as `e / c` or `e % c`),
 * with rational coefficients. To prove f <= 0 the prover repeatedly replaces
 * the newest atom by its upper bound (positive coefficient) or lower bound
 * (negative): loop ranges `lo .. hi step s` (tightened by congruences, so that
 * i < N, i % VEC == 0 and N % VEC == 0 give i <= N - VEC), grid extents
 * (block.x <= grid[0] - 1 and block.x <= grid.x - 1; grid.x == grid[0] and
 * grid.x >= 1; sm.count >= 1), block and role sizes (and `lane`, `warp`, `wg` ranges) for the warp width of
 * the target checked for (sync.h: one run per warp width), `e / c` <= e / c for e >= 0 (C's
 * truncation: (e + c - 1) / c otherwise; from below (e - c + 1) / c, or 0 for e >= 0), `cdiv(e, c)` <= (e + c - 1) / c (exact when the
 * assumes make e a multiple of c), `e % c` in [0, c - 1] for e >= 0 (in [-(c - 1), c - 1]
 * otherwise; at most e itself for e >= 0: `V - V % CH >= 0`); `max` from above, `min`
 * from below and `select` are proven per argument (a select's under its condition, negated
 * for the second), and have a constant bound where their arguments do.
 * What remains is linear in the dims, bounded by the assumes (a dim assumed a
 * multiple of m is at least m). Masks, enclosing `if`s (negated on `else`),
 * `let`-bound conditions, earlier `if ... { return }` guards and linear
 * assumes are facts g <= 0 (not where they read a `var` that may have been
 * assigned since: sy_set_since; a let over one is then its own atom): f <= 0
 * also holds when f - g <= 0 does; a false
 * constant fact (`if CAUSAL == 1` under CAUSAL = 0) makes the access dead. TMA
 * accesses are not checked: the hardware zero-fills loads and clips stores
 * outside the tensor. A value loaded from an argument declared `values LO .. HI`
 * lies in [LO, HI - 1].
 * E0801: a global index not proven; E0802: a tile index not proven where its
 * bound is a constant. The help proposes an `assume` that would make the
 * proof go through, or a mask; where a part of the index has no bound (a
 * load, a var) it names that part instead, and where an unguarded index
 * passes the extent at a shape whose tiles are all full (full_shape) the
 * message says the index is out of bounds there. */
#include <string.h>
#include "sync.h"
#include "vpriv.h"

#define MAXTERM 16
#define MAXFACT 24
#define PROVE_BUDGET 200000   /* prove() steps per access: the search is exponential in the
                                 facts and the min/max/division atoms; past it, unproved */
#define MAXOPAQUE 32
#define MAXGMOD 5   /* congruences of dims beyond the assumes: 4 from guards, 1 for the help's hypothesis */

enum { A_NODE = 0, A_SPEC = 1 };

typedef struct { uint32_t atom; int64_t c; } Term;  /* atom: node id, or 0x80000000 | SpecialReg */
typedef struct { int64_t c0, den; Term t[MAXTERM]; int n, ok; } Lin;

typedef struct {
    SyK *s;
    NodeId role;                    /* of the access */
    Lin facts[MAXFACT]; int nfacts;
    /* D % m == 0 beyond the assumes: the `if D % m == 0` guards at the access, and the
       help's hypothetical `assume D % m == 0` (last, while it is tried) */
    NodeId gdim[MAXGMOD]; int64_t gmod[MAXGMOD]; int ngmod;
    int cong_pass;                  /* facts_of gathers only the guards' congruences */
    int depth;
    NodeId opaque[MAXOPAQUE]; int nopaque; /* subterm atoms, one per structure */
    const ShapeDefault *at; uint32_t nat; /* dims at concrete sizes (the verdict at a shape), or none */
    int guarded;                    /* facts beyond the assumes hold at the access (if, mask, guard) */
    NodeId access;                  /* the access statement */
    NodeId since;                   /* facts_of: the statement whose condition it reads (0: at the access) */
    long steps;                     /* prove() calls for this access (PROVE_BUDGET) */
} Bx;

#define SPEC(sr) (0x80000000u | (uint32_t)(sr))

static Lin lconst(int64_t c)
{
    Lin l;
    memset(&l, 0, sizeof l);
    l.c0 = c;
    l.den = 1;
    l.ok = 1;
    return l;
}

static Lin latom(uint32_t atom)
{
    Lin l = lconst(0);
    l.t[0].atom = atom;
    l.t[0].c = 1;
    l.n = 1;
    return l;
}

static void lnorm(Lin *l)
{
    int64_t g = l->den;
    g = ce_gcd(g, l->c0);
    int w = 0;
    for (int i = 0; i < l->n; i++)
        if (l->t[i].c)
            l->t[w++] = l->t[i];
    l->n = w;
    for (int i = 0; i < l->n; i++)
        g = ce_gcd(g, l->t[i].c);
    if (g > 1) {
        l->den /= g;
        l->c0 /= g;
        for (int i = 0; i < l->n; i++)
            l->t[i].c /= g;
    }
}

/* a*x + b*y over a common denominator */
static Lin lcomb(int64_t a, Lin x, int64_t b, Lin y)
{
    Lin r = lconst(0);
    if (!x.ok || !y.ok)
        return r.ok = 0, r;
    int64_t ax, by, t;
    if (__builtin_mul_overflow(x.den, y.den, &r.den) || __builtin_mul_overflow(a, y.den, &ax) ||
        __builtin_mul_overflow(b, x.den, &by))
        return r.ok = 0, r;
    int64_t u, v;
    if (__builtin_mul_overflow(ax, x.c0, &u) || __builtin_mul_overflow(by, y.c0, &v) ||
        __builtin_add_overflow(u, v, &r.c0))
        return r.ok = 0, r;
    for (int pass = 0; pass < 2; pass++) {
        const Lin *src = pass ? &y : &x;
        int64_t m = pass ? by : ax;
        for (int i = 0; i < src->n; i++) {
            if (__builtin_mul_overflow(m, src->t[i].c, &t))
                return r.ok = 0, r;
            int j = 0;
            while (j < r.n && r.t[j].atom != src->t[i].atom)
                j++;
            if (j == r.n) {
                if (r.n == MAXTERM)
                    return r.ok = 0, r;
                r.t[r.n].atom = src->t[i].atom;
                r.t[r.n++].c = 0;
            }
            if (__builtin_add_overflow(r.t[j].c, t, &r.t[j].c))
                return r.ok = 0, r;
        }
    }
    lnorm(&r);
    return r;
}

static Lin ldiv(Lin x, int64_t d) /* x / d, d > 0 */
{
    if (__builtin_mul_overflow(x.den, d, &x.den))
        x.ok = 0;
    lnorm(&x);
    return x;
}

/* ---- values that may have changed ------------------------------------------ */

/* 1 when e, evaluated at statement p, reads a var that may have changed by
 * the access (lets are followed where they are used: lin) */
static int stale(Bx *b, NodeId e, NodeId p, int depth)
{
    SyK *s = b->s;
    if (!e || !p || depth > 32)
        return depth > 32;
    Node *n = sy_node(s, e);
    if (n->op == OP_NAME) {
        NodeId d = sy_decl(s, e);
        uint16_t op = d ? sy_node(s, d)->op : OP_NONE;
        return (op == OP_VAR || op == OP_REG) && sy_set_since(s, d, p, b->access);
    }
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        if (stale(b, kids[i], p, depth + 1))
            return 1;
    for (uint32_t i = 0; i < n->n; i++)
        if (stale(b, ir_list_at(s->k, n, i), p, depth + 1))
            return 1;
    return 0;
}

/* ---- expressions to linear forms ---------------------------------------- */

/* the atom of subterm e: the first structurally equal subterm seen, so that the
 * grid's `cdiv(M, BM) * cdiv(N, BN)` and a loop bound written the same way cancel */
static Lin lsubterm(Bx *b, NodeId e)
{
    for (int i = 0; i < b->nopaque; i++)
        if (vt_same_expr(b->s->k, b->opaque[i], e))
            return latom(b->opaque[i]);
    if (b->nopaque < MAXOPAQUE)
        b->opaque[b->nopaque++] = e;
    return latom(e);
}

static Lin lin(Bx *b, NodeId e, int depth)
{
    SyK *s = b->s;
    Lin bad = lconst(0);
    bad.ok = 0;
    int64_t c;
    if (!e || depth > 64)
        return bad;
    Node *n = sy_node(s, e);
    if (n->op != OP_NAME && sy_const(s, e, &c))
        return lconst(c);
    switch (n->op) {
    case OP_SPECIAL:
        if (n->sub == SR_NTHREADS) {
            int64_t first, count;
            return sy_role_range(s, b->role, &first, &count) ? lconst(count) : bad;
        }
        if (n->sub >= SR_GRID_X && n->sub <= SR_GRID_Z && n->sub - SR_GRID_X >= (int)s->k->ngrid)
            return lconst(1); /* an extent the grid clause leaves out */
        return latom(SPEC(n->sub));
    case OP_NAME: {
        NodeId d = sy_decl(s, e);
        if (!d)
            return bad;
        Node *dn = sy_node(s, d);
        if (dn->op == OP_PARAM)
            return sy_const(s, e, &c) ? lconst(c) : bad;
        if (dn->op == OP_LET && sy_token_kind(s, d) == OP_NONE && !stale(b, dn->b, d, 0))
            return lin(b, dn->b, depth + 1); /* else: the let's own value, an atom */
        for (uint32_t i = 0; dn->op == OP_DIM && i < b->nat; i++)
            if (b->at[i].name == dn->name)
                return lconst(b->at[i].value);
        return latom(d);
    }
    case OP_CAST: return lin(b, n->a, depth + 1);
    case OP_NEG: return lcomb(-1, lin(b, n->a, depth + 1), 0, lconst(0));
    case OP_ADD: return lcomb(1, lin(b, n->a, depth + 1), 1, lin(b, n->b, depth + 1));
    case OP_SUB: return lcomb(1, lin(b, n->a, depth + 1), -1, lin(b, n->b, depth + 1));
    case OP_MUL:
        if (sy_const(s, n->b, &c))
            return lcomb(c, lin(b, n->a, depth + 1), 0, lconst(0));
        if (sy_const(s, n->a, &c))
            return lcomb(c, lin(b, n->b, depth + 1), 0, lconst(0));
        return lsubterm(b, e);
    case OP_SHL:
        if (sy_const(s, n->b, &c) && c >= 0 && c < 40)
            return lcomb((int64_t)1 << c, lin(b, n->a, depth + 1), 0, lconst(0));
        return lsubterm(b, e);
    default:
        return lsubterm(b, e);
    }
}

/* ---- congruences: value ≡ r (mod m); m == 0: exactly r ------------------- */

typedef struct { int64_t r, m; } Cong;

static Cong cong_lin(Bx *b, const Lin *l, int depth);

static Cong cong_atom(Bx *b, uint32_t atom, int depth)
{
    SyK *s = b->s;
    Cong none = {0, 1};
    if (atom & 0x80000000u || depth > 16)
        return none;
    Node *n = sy_node(s, atom);
    int64_t step = 1;
    if (n->op == OP_DIM) {
        int64_t mod = 1, lo = 0, hi = INT64_MAX;
        sy_dim_facts(s, atom, &mod, &lo, &hi);
        for (int i = 0; i < b->ngmod; i++)
            if (b->gdim[i] == atom)
                mod = mod / ce_gcd(mod, b->gmod[i]) * b->gmod[i];
        return (Cong){0, mod};
    }
    if (n->op == OP_FOR) {
        if (n->c && !sy_const(s, n->c, &step)) {
            /* a step known only up to a congruence (`threads * 8`): every step is a
               multiple of gcd(r, m) where step = r (mod m), and so is var - lo */
            Lin ls = lin(b, n->c, 0);
            if (!ls.ok || ls.den != 1)
                return none;
            Cong cs = cong_lin(b, &ls, depth + 1);
            step = ce_gcd(cs.r, cs.m);
            if (step <= 1)
                return none;
        }
        Lin lo = lin(b, n->a, 0);
        if (!lo.ok || lo.den != 1)
            return none;
        Cong c = cong_lin(b, &lo, depth + 1);
        c.m = ce_gcd(c.m, step);
        if (c.m)
            c.r = ((c.r % c.m) + c.m) % c.m;
        return c;
    }
    return none;
}

static Cong cong_lin(Bx *b, const Lin *l, int depth)
{
    Cong c = {l->c0, 0};
    if (l->den != 1)
        return (Cong){0, 1};
    for (int i = 0; i < l->n; i++) {
        Cong a = cong_atom(b, l->t[i].atom, depth);
        int64_t m;
        if (__builtin_mul_overflow(a.m, l->t[i].c, &m))
            return (Cong){0, 1};
        c.m = ce_gcd(c.m, m);
        c.r += l->t[i].c * a.r;
    }
    if (c.m)
        c.r = ((c.r % c.m) + c.m) % c.m;
    return c;
}

/* ---- atom bounds ---------------------------------------------------------- */

/* the extent of the tile dim an implicit index variable (its declaring NAME)
 * stands for: `T[r, c] = ...` binds r to T's dim 0 and c to its dim 1 */
static int64_t implicit_extent(SyK *s, NodeId name)
{
    const Kernel *k = s->k;
    for (NodeId i = 1; i < k->nnodes; i++) {
        const Node *x = &k->nodes[i];
        if (x->op != OP_INDEX)
            continue;
        for (uint32_t j = 0; j < x->n; j++)
            if (k->lists[x->list + j] == name) {
                TypeId t = k->nodes[x->a].type;
                if (!t || t >= k->ntypes || (int)j >= k->types[t].rank)
                    return 0;
                return k->types[t].shape[j];
            }
    }
    return 0;
}

static Lin upper(Bx *b, Lin l, int depth);

/* the grid's bounds: block.x <= grid[0] - 1 (alt 1: grid.x - 1), grid.x == grid[0]
 * (below also >= 1, alt 0), sm.count >= 1 */
static Lin bound_grid(Bx *b, uint32_t sr, int up, int alt)
{
    SyK *s = b->s;
    Lin bad = lconst(0);
    bad.ok = 0;
    if (sr == SR_SM_COUNT)
        return up ? bad : lconst(1);
    if (sr >= SR_BLOCK_X && sr <= SR_BLOCK_Z) {
        uint32_t dim = sr - SR_BLOCK_X;
        if (!up || dim >= s->k->ngrid)
            return lconst(0);
        if (alt)
            return lcomb(1, latom(SPEC(SR_GRID_X + dim)), 1, lconst(-1));
        return lcomb(1, lin(b, s->k->grid[dim], 0), 1, lconst(-1));
    }
    uint32_t dim = sr - SR_GRID_X;
    if (dim >= s->k->ngrid)
        return lconst(1);
    if (!up && !alt)
        return lconst(1);
    return lin(b, s->k->grid[dim], 0);
}

static int grid_special(uint32_t atom)
{
    uint32_t sr = atom & 0xffffu;
    return (atom & 0x80000000u) && ((sr >= SR_BLOCK_X && sr <= SR_BLOCK_Z) ||
                                    (sr >= SR_GRID_X && sr <= SR_GRID_Z) || sr == SR_SM_COUNT);
}

/* how many bounds (alt 0, 1) bound() offers for atom a, upper when up */
static int alternatives(SyK *s, uint32_t a, int up)
{
    uint32_t sr = a & 0xffffu;
    if (a & 0x80000000u)
        return (up && sr >= SR_BLOCK_X && sr <= SR_BLOCK_Z) || (!up && sr >= SR_GRID_X && sr <= SR_GRID_Z) ? 2 : 1;
    uint16_t op = sy_node(s, a)->op; /* min from above, max from below: either argument */
    return (op == OP_MIN && up) || (op == OP_MAX && !up) || (op == OP_MOD && up) ||
           (op == OP_DIV && !up) ? 2 : 1;
}

static int prove(Bx *b, Lin f, int depth);

/* x / d with d not a constant: 0 <= x / d <= x when x >= 0 and d >= 1 (the
 * tile decomposition `t / tn` of a persistent loop) */
static Lin bound_div(Bx *b, const Node *n, int up)
{
    Lin x = lin(b, n->a, 0), d = lin(b, n->b, 0), bad = lconst(0);
    bad.ok = 0;
    if (!x.ok || !d.ok || b->depth >= 8)
        return bad;
    b->depth++;
    int ok = prove(b, lcomb(-1, x, 0, lconst(0)), 0) && prove(b, lcomb(-1, d, 1, lconst(1)), 0);
    b->depth--;
    if (!ok)
        return bad;
    return up ? x : lconst(0);
}

/* the value of comparison e when both sides are constants (dims at a
 * concrete shape): 1 and *out, else 0 */
static int cond_value(Bx *b, NodeId e, int64_t *out)
{
    Node *n = sy_node(b->s, e);
    if (!(n->op == OP_LT || n->op == OP_LE || n->op == OP_GT || n->op == OP_GE || n->op == OP_EQ ||
          n->op == OP_NE))
        return 0;
    Lin x = lin(b, n->a, 0), y = lin(b, n->b, 0);
    if (!x.ok || !y.ok || x.n || y.n || x.den != 1 || y.den != 1)
        return 0;
    int64_t u = x.c0, v = y.c0;
    *out = n->op == OP_LT ? u < v : n->op == OP_LE ? u <= v : n->op == OP_GT ? u > v
         : n->op == OP_GE ? u >= v : n->op == OP_EQ ? u == v : u != v;
    return 1;
}

/* the bound of max from above, min from below or select either way (prove
 * splits them into cases instead): the arm a constant condition picks, or
 * the larger (smaller) of the arms' bounds when both are constants */
static Lin bound_split(Bx *b, const Node *n, int up)
{
    SyK *s = b->s;
    Lin bad = lconst(0), r = lconst(0);
    bad.ok = 0;
    int sel = n->op == OP_SELECT;
    int64_t cv;
    if (sel && cond_value(b, ir_list_at(s->k, n, 0), &cv))
        return lin(b, ir_list_at(s->k, n, cv ? 1 : 2), 0);
    if (b->depth >= 8)
        return bad;
    b->depth++;
    for (uint32_t arm = 0; arm < 2 && r.ok; arm++) {
        Lin x = lin(b, ir_list_at(s->k, n, (uint32_t)sel + arm), 0);
        Lin u = up ? upper(b, x, 0) : upper(b, lcomb(-1, x, 0, lconst(0)), 0);
        if (!u.ok || u.n) {
            r = bad;
            break;
        }
        int64_t v = up ? u.c0 / u.den : -(u.c0 / u.den);   /* floor of an upper bound: still one */
        if (up && u.c0 < 0 && u.c0 % u.den)
            v--;
        if (arm == 0 || (up ? v > r.c0 : v < r.c0))
            r = lconst(v);
    }
    b->depth--;
    return r;
}

static int prove_facts(Bx *b, Lin f);

/* x >= 0 provably, under the facts at the access (within the prover's depth) */
static int nonneg(Bx *b, Lin x)
{
    if (!x.ok || b->depth >= 8)
        return 0;
    b->depth++;
    int ok = prove_facts(b, lcomb(-1, x, 0, lconst(0)));
    b->depth--;
    return ok;
}

/* the least value of x % c (c > 0 constant): 0 for x >= 0; else the remainder
 * has the sign of x: at least -(c - 1), and at least x's own lower bound */
static int64_t mod_low(Bx *b, Lin x, int64_t c)
{
    if (nonneg(b, x) || b->depth >= 8)
        return 0;
    b->depth++;
    Lin u = upper(b, lcomb(-1, x, 0, lconst(0)), 0);   /* -x <= u */
    b->depth--;
    int64_t lo = -(c - 1);
    if (u.ok && !u.n && u.c0 >= 0 && u.c0 / u.den < c - 1)
        lo = -(u.c0 / u.den);
    return lo;
}

/* x % d <= x when x >= 0 and d >= 1: where x has a constant bound below d's
 * (`j % 64` with j < 8) that bound, else x itself (`V - V % CH >= 0`) */
static Lin bound_mod_self(Bx *b, const Node *n)
{
    Lin x = lin(b, n->a, 0), d = lin(b, n->b, 0), bad = lconst(0);
    bad.ok = 0;
    if (!x.ok || !d.ok || b->depth >= 8)
        return bad;
    b->depth++;
    Lin ux = upper(b, x, 0), ud = upper(b, lcomb(-1, d, 0, lconst(0)), 0); /* -d <= ud */
    int ok = prove(b, lcomb(-1, x, 0, lconst(0)), 0) && prove(b, lcomb(-1, d, 1, lconst(1)), 0);
    int below = ux.ok && !ux.n && ud.ok && !ud.n && ux.c0 / ux.den < -ud.c0 / ud.den - 1;
    b->depth--;
    return !ok ? bad : below ? ux : x;
}

/* the bound of atom (upper when up), as a linear form; ok = 0 when unbounded */
static Lin bound(Bx *b, uint32_t atom, int up, int alt)
{
    SyK *s = b->s;
    Lin bad = lconst(0);
    bad.ok = 0;
    int64_t c, first, count;
    if (atom & 0x80000000u) {
        uint32_t sr = atom & 0xffffu;
        if (grid_special(atom))
            return bound_grid(b, sr, up, alt);
        if (!sy_role_range(s, b->role, &first, &count))
            return bad;
        int64_t wg = tg_unit_threads(s->tg, UNIT_WARPGROUPS); /* threads per warpgroup */
        switch (sr) {
        case SR_THREAD_X: {
            int64_t hi = count - 1; /* role-relative; tightened by facts on warp or wg */
            for (int i = 0; up && i < b->nfacts; i++) {
                const Lin *g = &b->facts[i];
                if (g->n != 1 || g->t[0].c <= 0 || !(g->t[0].atom & 0x80000000u))
                    continue;
                uint32_t fs = g->t[0].atom & 0xffffu;
                int64_t unit = fs == SR_WARP ? s->warp : fs == SR_WG ? wg : fs == SR_THREAD_X ? 1 : 0;
                if (!unit || -g->c0 < 0)
                    continue;
                int64_t lim = (-g->c0) / g->t[0].c; /* atom <= lim */
                if (lim * unit + unit - 1 < hi)
                    hi = lim * unit + unit - 1;
            }
            return lconst(up ? hi : 0);
        }
        case SR_THREAD_Y: case SR_THREAD_Z: return lconst(0);
        case SR_LANE: return lconst(up ? s->warp - 1 : 0);
        case SR_WARP: return lconst(up ? (count + s->warp - 1) / s->warp - 1 : 0);
        case SR_WG: return lconst(up ? (count + wg - 1) / wg - 1 : 0);
        default: return bad;
        }
    }
    Node *n = sy_node(s, atom);
    switch (n->op) {
    case OP_NAME: { /* an implicit index: 0 .. the extent of the dim it indexes */
        int64_t ext = (n->flags & NF_IMPLICIT) ? implicit_extent(s, atom) : 0;
        return ext > 0 ? lconst(up ? ext - 1 : 0) : bad;
    }
    case OP_FOR: {
        if (stale(b, n->a, atom, 0) || stale(b, n->b, atom, 0)) /* `for i in k .. k + 4 { k = ... }` */
            return bad;
        if (!up)
            return lin(b, n->a, 0);
        Lin hi = lcomb(1, lin(b, n->b, 0), 1, lconst(-1));
        Lin lo = lin(b, n->a, 0);
        if (!hi.ok || hi.den != 1)
            return hi;
        Cong ci = cong_atom(b, atom, 0), ch = cong_lin(b, &hi, 0);
        int64_t g = ce_gcd(ci.m, ch.m);
        if (g > 1) { /* i <= hi and i ≡ r (mod g): i <= hi - ((hi - r) mod g) */
            int64_t d = (((ch.r - ci.r) % g) + g) % g;
            hi = lcomb(1, hi, 1, lconst(-d));
        }
        (void)lo;
        return hi;
    }
    case OP_LET: case OP_VAR: { /* a stage token, or a token variable */
        NodeId pipe = sy_token_pipe(s, atom);
        if (!pipe || !sy_const(s, sy_node(s, pipe)->a, &c))
            return bad;
        return lconst(up ? c - 1 : 0);
    }
    case OP_DIV: case OP_SHR: {
        if (n->op == OP_DIV && !sy_const(s, n->b, &c))
            return bound_div(b, n, up);
        if (alt) /* x / d >= 0 for x >= 0 (d > 0): `V / CH * CH >= 0` */
            return c > 0 && nonneg(b, lin(b, n->a, 0)) ? lconst(0) : bad;
        if (!sy_const(s, n->b, &c) || c <= 0 || (n->op == OP_SHR && c > 40))
            return bad;
        int64_t d = n->op == OP_SHR ? (int64_t)1 << c : c;
        Lin x = lin(b, n->a, 0);
        Lin xb = lconst(0);
        xb.ok = 0;
        if (b->depth < 8) {
            b->depth++;
            xb = up ? upper(b, x, 0) : lcomb(-1, upper(b, lcomb(-1, x, 0, lconst(0)), 0), 0, lconst(0));
            b->depth--;
        }
        if (xb.ok && !xb.n) { /* a constant numerator bound: divide it exactly (monotone) */
            int64_t xi = xb.c0 / xb.den; /* the integer bound: floor from above, ceil from below */
            if (xb.c0 % xb.den && (xb.c0 < 0) == (up != 0))
                xi += up ? -1 : 1;
            return lconst(n->op == OP_SHR ? xi >> c : xi / d);
        }
        /* `/` truncates: x / d is at most x / d only for x >= 0 (-1 / 4 is 0);
           (x + d - 1) / d holds for every x, and (x - d + 1) / d from below */
        if (up && (n->op == OP_SHR || nonneg(b, x)))
            return ldiv(x, d);
        return ldiv(lcomb(1, x, 1, lconst(up ? d - 1 : -(d - 1))), d);
    }
    case OP_MOD:
        if (alt) /* x % d <= x for x >= 0 (d > 0): `i % 64` with i < 8 stays below 8 */
            return up ? bound_mod_self(b, n) : bad;
        if (sy_const(s, n->b, &c)) /* the remainder has the sign of x: -(c - 1) .. c - 1 */
            return c <= 0 ? bad : up ? lconst(c - 1) : lconst(mod_low(b, lin(b, n->a, 0), c));
        /* x % D with a symbolic divisor (a dim): 0 .. D - 1 for x >= 0 */
        if (up)
            return lcomb(1, lin(b, n->b, 0), 1, lconst(-1));
        return nonneg(b, lin(b, n->a, 0)) ? lconst(0) : lcomb(-1, lin(b, n->b, 0), 1, lconst(1));
    case OP_BAND:
        if (sy_const(s, n->b, &c) && c >= 0)
            return lconst(up ? c : 0);
        return bad;
    case OP_CDIV: {
        if (n->n != 2 || !sy_const(s, ir_list_at(s->k, n, 1), &c) || c <= 0)
            return bad;
        Lin x = lin(b, ir_list_at(s->k, n, 0), 0);
        if (x.ok && !x.n && x.den == 1 && x.c0 >= 0) /* a constant (a dim at a concrete shape) */
            return lconst((x.c0 + c - 1) / c);
        Cong cx = x.ok ? cong_lin(b, &x, 0) : (Cong){0, 1};
        if (up && !(cx.m && cx.m % c == 0 && cx.r % c == 0))
            x = lcomb(1, x, 1, lconst(c - 1));
        return ldiv(x, c);
    }
    case OP_LOAD: { /* from an argument declared `values LO .. HI`: LO .. HI - 1 */
        NodeId decl = sy_ref_decl(s, n->a);
        Node *d = decl ? sy_node(s, decl) : NULL;
        Node *t = d && d->op == OP_ARG && d->a ? sy_node(s, d->a) : NULL;
        if (!t || t->op != OP_GTYPE || !t->b || !t->c)
            return bad;
        return up ? lcomb(1, lin(b, t->c, 0), 1, lconst(-1)) : lin(b, t->b, 0);
    }
    case OP_MIN: case OP_MAX:
        if (n->n == 2 && (n->op == OP_MIN) != up)
            return bound_split(b, n, up);
        if (n->n != 2)
            return bad;
        return lin(b, ir_list_at(s->k, n, alt ? 1 : 0), 0);
    case OP_SELECT:
        return n->n == 3 ? bound_split(b, n, up) : bad;
    default:
        return bad;
    }
}

/* the order atoms are replaced in, highest first: an atom before the atoms its
 * bound mentions (nodes by position, then block.x, whose bound names grid.x,
 * then the other special registers) */
static uint64_t rank(SyK *s, uint32_t atom)
{
    if (atom & 0x80000000u) {
        uint32_t sr = atom & 0xffffu;
        return sr >= SR_BLOCK_X && sr <= SR_BLOCK_Z ? 1 : 0;
    }
    Node *n = sy_node(s, atom);
    if (n->op == OP_FOR)
        return (uint64_t)n->a + 2;
    if (n->op == OP_LET)
        return (uint64_t)n->b + 2;
    return (uint64_t)atom + 2;
}

/* f <= 0 once only dims are left: dims at their bounds from the assumes */
static int prove_dims(Bx *b, Lin f)
{
    SyK *s = b->s;
    for (int i = 0; i < f.n; i++) {
        uint32_t a = f.t[i].atom;
        if (a & 0x80000000u || sy_node(s, a)->op != OP_DIM)
            return 0;
        int64_t mod = 1, lo = 1, hi = INT64_MAX, v; /* a dim is at least 1 (no empty tensors) */
        sy_dim_facts(s, a, &mod, &lo, &hi);
        if (mod > 1 && lo % mod) /* a positive multiple of mod: N % 256 == 0 gives N >= 256 */
            lo = lo > INT64_MAX - mod ? lo : (lo / mod + 1) * mod;
        v = f.t[i].c > 0 ? hi : lo;
        if (v == INT64_MAX || __builtin_mul_overflow(v, f.t[i].c, &v) || __builtin_add_overflow(f.c0, v, &f.c0))
            return 0;
    }
    return f.c0 < f.den; /* f is an integer: f < 1 means f <= 0 */
}

static void facts_of(Bx *b, NodeId e, int neg, int depth);

/* f <= 0 with the facts of condition cond (negated when neg) added */
static int prove_under(Bx *b, Lin f, NodeId cond, int neg, int depth)
{
    if (prove(b, f, depth + 1))
        return 1;
    if (!cond || b->depth >= 8)
        return 0;
    int nf = b->nfacts, ok = 0;
    facts_of(b, cond, neg, 0);
    b->depth++;
    for (int i = nf; i < b->nfacts && !ok; i++)
        ok = prove(b, lcomb(1, f, -1, b->facts[i]), depth + 1);
    b->depth--;
    b->nfacts = nf;
    return ok;
}

/* atoms whose bound in the needed direction is a conjunction: max(x, y) <= U
 * needs x <= U and y <= U (likewise min from below, and select(c, x, y)
 * either way, each arm under its condition). 1 or 0 when a is one of them
 * (both cases proven or not), -1 otherwise. */
static int prove_split(Bx *b, Lin f, uint32_t a, int64_t c, int depth)
{
    SyK *s = b->s;
    if (a & 0x80000000u)
        return -1;
    Node *n = sy_node(s, a);
    int sel = n->op == OP_SELECT && n->n == 3;
    if (!sel && !(n->n == 2 && ((n->op == OP_MAX && c > 0) || (n->op == OP_MIN && c < 0))))
        return -1;
    NodeId cond = sel ? ir_list_at(s->k, n, 0) : 0;
    Lin g = lcomb(1, f, -c, ldiv(latom(a), f.den));
    for (uint32_t arm = 0; arm < 2; arm++) {
        Lin x = lin(b, ir_list_at(s->k, n, sel + arm), 0);
        if (!x.ok || !prove_under(b, lcomb(1, g, c, ldiv(x, f.den)), cond, (int)arm, depth))
            return 0;
    }
    return 1;
}

/* f <= 0: the newest atom is replaced by its bound (each alternative in turn).
 * An atom with no bound in the needed direction (a product of two unknowns, a
 * var) is left for later: it may still cancel out once the others are
 * replaced (block.x <= min(sm.count, X) - 1 <= X - 1 against an extent X). */
static int prove(Bx *b, Lin f, int depth)
{
    SyK *s = b->s;
    if (!f.ok || depth > 48 || ++b->steps > PROVE_BUDGET)
        return 0;
    uint32_t skipped = 0; /* bit i: f.t[i] has no bound */
    for (;;) {
        int pick = -1;
        for (int i = 0; i < f.n; i++) {
            uint32_t a = f.t[i].atom;
            if ((skipped >> i & 1) || (!(a & 0x80000000u) && sy_node(s, a)->op == OP_DIM))
                continue;
            if (pick < 0 || rank(s, a) > rank(s, f.t[pick].atom))
                pick = i;
        }
        if (pick < 0)
            return prove_dims(b, f);
        uint32_t a = f.t[pick].atom;
        int64_t c = f.t[pick].c;
        int split = prove_split(b, f, a, c, depth);
        if (split >= 0)
            return split;
        int alts = alternatives(s, a, c > 0), bounded = 0;
        for (int alt = 0; alt < alts; alt++) {
            Lin bd = bound(b, a, c > 0, alt);
            if (!bd.ok)
                continue;
            bounded = 1;
            Lin g = lcomb(1, f, -c, ldiv(latom(a), f.den)); /* c is over f's denominator */
            if (prove(b, lcomb(1, g, c, ldiv(bd, f.den)), depth + 1))
                return 1;
        }
        if (bounded)
            return 0;
        skipped |= 1u << pick;
    }
}

/* f <= 0 directly, or f - m*g <= 0 for a fact g <= 0 scaled to cancel a shared atom */
static int prove_facts(Bx *b, Lin f)
{
    if (prove(b, f, 0))
        return 1;
    for (int i = 0; i < b->nfacts; i++) {
        const Lin *g = &b->facts[i];
        if (prove(b, lcomb(1, f, -1, *g), 0))
            return 1;
        for (int j = 0; j < g->n; j++)
            for (int h = 0; h < f.n; h++) {
                if (f.t[h].atom != g->t[j].atom || (f.t[h].c > 0) != (g->t[j].c > 0))
                    continue;
                /* m = (fc / fden) / (gc / gden) as a rational: scale f by gc*fden, g by fc*gden */
                int64_t sf, sg;
                if (__builtin_mul_overflow(g->t[j].c, f.den, &sf) || __builtin_mul_overflow(f.t[h].c, g->den, &sg))
                    continue;
                if (sf < 0) {
                    sf = -sf;
                    sg = -sg;
                }
                if (prove(b, lcomb(sf, f, -sg, *g), 0))
                    return 1;
            }
    }
    return 0;
}

/* ---- facts --------------------------------------------------------------- */

/* g <= 0 with g ≡ r (mod m) tightens to g + ((m - r) mod m) <= 0:
 * i < N with i % 8 == 0 and N % 8 == 0 gives i + 8 <= N */
static void add_fact(Bx *b, Lin g)
{
    if (!g.ok || b->nfacts == MAXFACT)
        return;
    Cong c = cong_lin(b, &g, 0);
    if (c.m > 1)
        g = lcomb(1, g, 1, lconst((c.m - c.r % c.m) % c.m));
    b->facts[b->nfacts++] = g;
}

/* `D % m == 0` (either side) with D a dim and 1 < m <= 2^20: the guard's
   congruence, as an assume's would be (tir.md 7.5) */
static void guard_cong(Bx *b, NodeId x, NodeId y)
{
    SyK *s = b->s;
    int64_t zero, m;
    if (!sy_const(s, y, &zero) || zero != 0 || sy_node(s, x)->op != OP_MOD ||
        !sy_const(s, sy_node(s, x)->b, &m) || m < 2 || m > (1 << 20) || b->ngmod >= MAXGMOD - 1)
        return;
    Lin d = lin(b, sy_node(s, x)->a, 0);
    if (d.ok && d.n == 1 && d.c0 == 0 && d.den == 1 && d.t[0].c == 1 && !(d.t[0].atom & 0x80000000u) &&
        sy_node(s, d.t[0].atom)->op == OP_DIM) {
        b->gdim[b->ngmod] = d.t[0].atom;
        b->gmod[b->ngmod++] = m;
    }
}

static void facts_of(Bx *b, NodeId e, int neg, int depth)
{
    SyK *s = b->s;
    if (!e || depth > 16)
        return;
    Node *n = sy_node(s, e);
    if (n->op == OP_NOT) {
        facts_of(b, n->a, !neg, depth + 1);
        return;
    }
    NodeId d = n->op == OP_NAME ? sy_decl(s, e) : 0;
    if (d && sy_node(s, d)->op == OP_LET) { /* `let ok = i < N` ... `if ok`, `mask ok` */
        NodeId since = b->since;
        b->since = d; /* evaluated where the let is */
        facts_of(b, sy_node(s, d)->b, neg, depth + 1);
        b->since = since;
        return;
    }
    if ((n->op == OP_AND && !neg) || (n->op == OP_OR && neg)) {
        facts_of(b, n->a, neg, depth + 1);
        facts_of(b, n->b, neg, depth + 1);
        return;
    }
    uint16_t op = n->op;
    if (neg)
        op = op == OP_LT ? OP_GE : op == OP_GE ? OP_LT : op == OP_GT ? OP_LE : op == OP_LE ? OP_GT
           : op == OP_EQ ? OP_NE : op == OP_NE ? OP_EQ : OP_NONE;
    if (b->cong_pass) {
        if (op == OP_EQ) {
            guard_cong(b, n->a, n->b);
            guard_cong(b, n->b, n->a);
        }
        return;
    }
    if (stale(b, e, b->since, 0)) /* `if k < N { k = k + 64 ... }` */
        return;
    Lin x = lin(b, n->a, 0), y = lin(b, n->b, 0);
    switch (op) {
    case OP_LT: add_fact(b, lcomb(1, lcomb(1, x, -1, y), 1, lconst(1))); break;
    case OP_LE: add_fact(b, lcomb(1, x, -1, y)); break;
    case OP_GT: add_fact(b, lcomb(1, lcomb(1, y, -1, x), 1, lconst(1))); break;
    case OP_GE: add_fact(b, lcomb(1, y, -1, x)); break;
    case OP_EQ: add_fact(b, lcomb(1, x, -1, y)); add_fact(b, lcomb(1, y, -1, x)); break;
    default: break;
    }
}

/* 1 when block blk holds an early-return guard (`if c { ... return }`); cached */
static int has_guard(SyK *s, NodeId blk)
{
    if (!s->guards[blk]) {
        Node *bn = sy_node(s, blk);
        s->guards[blk] = 1;
        for (uint32_t i = 0; bn->op == OP_BLOCK && i < bn->n; i++)
            if (sy_is_return_guard(s, ir_list_at(s->k, bn, i)))
                s->guards[blk] = 2;
    }
    return s->guards[blk] == 2;
}

/* the facts that hold at statement st: enclosing ifs, earlier return guards
   (their congruences on dims first, so that every fact is tightened by them) */
static void context_facts(Bx *b, NodeId st)
{
    SyK *s = b->s;
    if (!b->cong_pass) {
        b->cong_pass = 1;
        context_facts(b, st);
        b->cong_pass = 0;
        b->guarded = 0;
    }
    for (uint32_t i = 0; i < s->k->nassumes; i++)
        facts_of(b, s->k->assumes[i], 0, 0);
    for (NodeId cur = st; cur; cur = s->up[cur]) {
        if (s->up[cur] && sy_node(s, s->up[cur])->op == OP_IF)
            b->guarded = 1;
        NodeId blk = sy_block_of(s, cur);
        Node *bn = sy_node(s, blk);
        for (uint32_t i = 0; bn->op == OP_BLOCK && has_guard(s, blk) && i < bn->n; i++) {
            NodeId x = ir_list_at(s->k, bn, i);
            if (x == cur)
                break;
            if (sy_is_return_guard(s, x)) {
                b->since = x;
                facts_of(b, sy_node(s, x)->a, 1, 0);
                b->since = 0;
                b->guarded = 1;
            }
        }
        NodeId up = s->up[cur];
        if (up && sy_node(s, up)->op == OP_IF) {
            b->since = up;
            facts_of(b, sy_node(s, up)->a, s->in_else[cur], 0);
            b->since = 0;
        }
    }
}

/* ---- printing a bound --------------------------------------------------- */

/* the upper bound of l with every non-dim atom replaced by its bound */
static Lin upper(Bx *b, Lin l, int depth)
{
    SyK *s = b->s;
    for (int it = 0; it < 48 && l.ok; it++) {
        int pick = -1;
        for (int i = 0; i < l.n; i++) {
            uint32_t a = l.t[i].atom;
            if (!(a & 0x80000000u) && sy_node(s, a)->op == OP_DIM)
                continue;
            if (pick < 0 || rank(s, a) > rank(s, l.t[pick].atom))
                pick = i;
        }
        if (pick < 0)
            return l;
        uint32_t a = l.t[pick].atom;
        int64_t c = l.t[pick].c;
        Lin rest = lcomb(1, l, -c, ldiv(latom(a), l.den)); /* c is over l's denominator */
        if (alternatives(s, a, c > 0) > 1 && depth < 4) { /* the first bounded: min(sm.count, T) <= T */
            for (int alt = 0; alt < 2; alt++) {
                Lin bd = bound(b, a, c > 0, alt);
                Lin r = bd.ok ? upper(b, lcomb(1, rest, c, ldiv(bd, l.den)), depth + 1) : bd;
                if (r.ok)
                    return r;
            }
            l.ok = 0;
            return l;
        }
        Lin bd = bound(b, a, c > 0, 0);
        if (!bd.ok)
            return bd;
        l = lcomb(1, rest, c, ldiv(bd, l.den));
    }
    l.ok = 0;
    return l;
}

static const char *lin_str(SyK *s, Lin l)
{
    if (!l.ok)
        return "an unbounded value";
    char *out = "";
    for (int i = 0; i < l.n; i++) {
        const char *name = ir_symstr(s->ctx, sy_node(s, l.t[i].atom)->name);
        int64_t c = l.t[i].c;
        out = ir_fmt(s->ctx, "%s%s%s%s%s", out, *out ? (c < 0 ? " - " : " + ") : (c < 0 ? "-" : ""),
                     c == 1 || c == -1 ? "" : ir_fmt(s->ctx, "%lld*", (long long)(c < 0 ? -c : c)), name, "");
    }
    if (l.c0 || !*out)
        out = ir_fmt(s->ctx, "%s%s%lld", out, *out ? (l.c0 < 0 ? " - " : " + ") : "",
                     (long long)(*out && l.c0 < 0 ? -l.c0 : l.c0));
    if (l.den != 1)
        out = ir_fmt(s->ctx, "(%s) / %lld", out, (long long)l.den);
    return out;
}

/* ---- the check of one index -------------------------------------------- */

typedef struct {
    NodeId ref, ix;      /* the reference and the index expression (or SLICE) */
    NodeId dim_expr;     /* the extent's expression (0: constant ext) */
    int64_t ext;         /* constant extent, or -1 */
    int dim;             /* which dimension */
    int global;
    NodeId elem;         /* a per-element tile store: the implicit index of this slice, or 0 */
} Idx;

/* start and inclusive end of an index; with elem, the element `start + elem`
 * of a slice (elem is an implicit index, 0 .. the slice's extent - 1) */
static void index_range(Bx *b, NodeId ix, NodeId elem, Lin *lo, Lin *hi, int64_t *vec)
{
    Node *n = sy_node(b->s, ix);
    int64_t e = 1;
    *vec = 1;
    if (n->op == OP_SLICE && elem) {
        *lo = lcomb(1, lin(b, n->a, 0), 1, latom(elem));
        *hi = *lo;
    } else if (n->op == OP_SLICE) {
        *lo = lin(b, n->a, 0);
        if (!sy_const(b->s, n->b, &e))
            e = -1;
        *vec = e;
        *hi = e > 0 ? lcomb(1, *lo, 1, lconst(e - 1)) : lcomb(1, *lo, 1, lin(b, n->b, 0));
        if (e <= 0)
            *hi = lcomb(1, *hi, 1, lconst(-1));
    } else {
        *lo = lin(b, ix, 0);
        *hi = *lo;
    }
}

/* the first atom of l (replaced newest first, as upper does) that has no
 * bound in the direction its coefficient needs; 0 when every one has */
static uint32_t unbounded_atom(Bx *b, Lin l)
{
    SyK *s = b->s;
    if (upper(b, l, 0).ok)
        return 0;
    for (int it = 0; it < 48 && l.ok; it++) {
        int pick = -1;
        for (int i = 0; i < l.n; i++) {
            uint32_t a = l.t[i].atom;
            if ((a & 0x80000000u) || sy_node(s, a)->op != OP_DIM)
                if (pick < 0 || rank(s, a) > rank(s, l.t[pick].atom))
                    pick = i;
        }
        if (pick < 0)
            return 0;
        uint32_t a = l.t[pick].atom;
        int64_t c = l.t[pick].c;
        Lin rest = lcomb(1, l, -c, ldiv(latom(a), l.den)), next = lconst(0);
        next.ok = 0;
        for (int alt = 0; alt < alternatives(s, a, c > 0); alt++) { /* a bounded one first */
            Lin bd = bound(b, a, c > 0, alt);
            Lin t = bd.ok ? lcomb(1, rest, c, ldiv(bd, l.den)) : bd;
            if (t.ok && (!next.ok || upper(b, t, 0).ok))
                next = t;
        }
        Node *an = (a & 0x80000000u) ? NULL : sy_node(s, a);
        int sel = an && an->op == OP_SELECT && an->n == 3;
        if (!next.ok && an && (sel || ((an->op == OP_MAX || an->op == OP_MIN) && an->n == 2))) {
            for (uint32_t arm = 0; arm < 2; arm++) { /* a case split: what in its arms is unknown */
                Lin x = lin(b, ir_list_at(s->k, an, (uint32_t)sel + arm), 0);
                uint32_t u = x.ok ? unbounded_atom(b, c > 0 ? x : lcomb(-1, x, 0, lconst(0))) : 0;
                if (u)
                    return u;
            }
            return 0;
        }
        if (!next.ok)
            return a;
        l = next;
    }
    return 0;
}

/* "`idx` (loaded from `targets`)": what an atom with no bound is, for the help */
static const char *atom_text(Bx *b, uint32_t a)
{
    SyK *s = b->s;
    if (a & 0x80000000u)
        return ir_fmt(s->ctx, "`%s`", ir_special_names[a & 0xffffu]);
    const Node *n = sy_node(s, a);
    const char *name = NULL;
    for (NodeId i = 1; i < s->k->nnodes && !name; i++) /* the let that holds it */
        if (s->k->nodes[i].op == OP_LET && s->k->nodes[i].b == a)
            name = ir_symstr(s->ctx, s->k->nodes[i].name);
    if (n->op == OP_VAR)
        return ir_fmt(s->ctx, "`%s` (a `var`: the checker does not follow its assignments)",
                      ir_symstr(s->ctx, n->name));
    if (n->op == OP_LOAD)
        return ir_fmt(s->ctx, "`%s` (loaded from `%s`)", name ? name : sy_text(s, a),
                      sy_text(s, sy_ref_base(s, n->a)));
    if (n->op == OP_INDEX)
        return ir_fmt(s->ctx, "`%s` (read from `%s`)", name ? name : sy_text(s, a),
                      sy_text(s, sy_ref_base(s, a)));
    return ir_fmt(s->ctx, "`%s`", name ? name : sy_text(s, a));
}

/* the granule every tile size divides: the lcm of 4096 and of the constant
 * divisors of cdiv, / and % and of the loop steps; 0 past 2^24, or when the
 * grid depends on sm.count (a persistent grid's size is the device's) */
static int64_t tile_granule(const Kernel *k)
{
    int64_t g = 4096;
    for (NodeId i = 1; i < k->nnodes; i++) {
        const Node *n = &k->nodes[i];
        int64_t c = 0;
        if (n->op == OP_SPECIAL && n->sub == SR_SM_COUNT)
            return 0;
        NodeId dv = n->op == OP_CDIV && n->n == 2 ? k->lists[n->list + 1]
                  : n->op == OP_DIV || n->op == OP_MOD ? n->b : n->op == OP_FOR ? n->c : 0;
        if (!dv || k->nodes[dv].op != OP_INT || (c = k->nodes[dv].v.i) <= 1)
            continue;
        g = g / ce_gcd(g, c) * c;
        if (g > ((int64_t)1 << 24))
            return 0;
    }
    return g;
}

/* the dims at a shape where every tile of the kernel is full: the `shape`
 * clause (or 4096) rounded up to a multiple of tile_granule and of the
 * assumed divisors, a dim fixed by the assumes at its value; 0 when that
 * breaks an assumed bound */
static int full_shape(Bx *b, ShapeDefault *out)
{
    SyK *s = b->s;
    const Kernel *k = s->k;
    int64_t gran = tile_granule(k);
    if (!gran)
        return 0;
    for (uint32_t j = 0; j < k->ndims; j++) {
        NodeId d = k->dims[j];
        int64_t mod = 1, lo = 1, hi = INT64_MAX, v = 4096;
        sy_dim_facts(s, d, &mod, &lo, &hi);
        for (uint32_t h = 0; h < k->nshapes; h++)
            if (k->shapes[h].name == sy_node(s, d)->name)
                v = k->shapes[h].value;
        v = (v + gran - 1) / gran * gran;
        if (mod > 1 && v % mod)
            v = (v / mod + 1) * mod;
        if (lo == hi)
            v = lo;
        if (v < lo || v > hi)
            return 0;
        out[j] = (ShapeDefault){sy_node(s, d)->name, v, k->span};
    }
    return 1;
}

/* at a full shape (full_shape), the index's bound passes the extent: the
 * index is wrong, not ragged. *reach: the bound; *ext: the extent there */
static int wrong_at_shape(Bx *b, const Idx *x, int low_fails, int64_t *reach, int64_t *ext, const char **at)
{
    SyK *s = b->s;
    if (b->guarded || !x->global || s->k->ndims > 16)
        return 0;
    ShapeDefault sh[16];
    if (!full_shape(b, sh))
        return 0;
    Bx c = *b;
    c.at = sh;
    c.nat = s->k->ndims;
    c.nopaque = 0;
    Lin lo, hi;
    int64_t vec;
    index_range(&c, x->ix, x->elem, &lo, &hi, &vec);
    Lin e = x->dim_expr ? lin(&c, x->dim_expr, 0) : lconst(x->ext);
    Lin u = low_fails ? upper(&c, lcomb(-1, lo, 0, lconst(0)), 0) : upper(&c, hi, 0);
    if (!u.ok || u.n || !e.ok || e.n || e.den != 1)
        return 0;
    int64_t r = low_fails ? -(u.c0 / u.den) : u.c0 / u.den;
    if (low_fails ? r >= 0 : r <= e.c0 - 1)
        return 0;
    *reach = r;
    *ext = e.c0;
    const char *t = "";
    for (uint32_t j = 0; j < s->k->ndims; j++)
        t = ir_fmt(s->ctx, "%s%s%s = %lld", t, j ? ", " : "", ir_symstr(s->ctx, sh[j].name),
                   (long long)sh[j].value);
    *at = t;
    return 1;
}

/* a comparison in the AND-chain of cond that lets the index reach the extent
 * by one: `X <= EXT` or `EXT >= X` (EXT as the extent is written) */
static NodeId off_by_one_cmp(SyK *s, NodeId cond, const char *ext, int depth)
{
    if (!cond || depth > 16)
        return 0;
    const Node *n = sy_node(s, cond);
    if (n->op == OP_AND) {
        NodeId c = off_by_one_cmp(s, n->a, ext, depth + 1);
        return c ? c : off_by_one_cmp(s, n->b, ext, depth + 1);
    }
    if (n->op == OP_LE && !strcmp(sy_text(s, n->b), ext))
        return cond;
    if (n->op == OP_GE && !strcmp(sy_text(s, n->a), ext))
        return cond;
    return 0;
}

static void report(Bx *b, const Idx *x, Lin hi, Lin extent, int low_fails, int64_t vec, NodeId mask)
{
    SyK *s = b->s;
    int64_t reach, ext_at;
    const char *at;
    if (wrong_at_shape(b, x, low_fails, &reach, &ext_at, &at)) {
        Diag *d = sy_report(s, E0801, x->ix, "index %d of `%s` is out of bounds at %s: it reaches %lld, but "
                            "the extent is %lld", x->dim, sy_text(s, sy_ref_base(s, x->ref)), at,
                            (long long)reach, (long long)ext_at);
        if (!d)
            return;
        diag_note(s->ctx, d, sy_span(s, x->ref), "the index covers %s", sy_text(s, x->ix));
        diag_help(s->ctx, d, "the index itself looks wrong: it passes the %s at a shape where every tile "
                  "is full, unguarded; check its arithmetic (a mask would hide the bug)",
                  low_fails ? "start" : "end");
        return;
    }
    const char *name = sy_text(s, sy_ref_base(s, x->ref));
    const char *ext = x->dim_expr ? sy_text(s, x->dim_expr) : ir_fmt(s->ctx, "%lld", (long long)x->ext);
    Lin hib = upper(b, hi, 0);
    Diag *d = sy_report(s, x->global ? E0801 : E0802, x->ix, "index %d of `%s` may be out of bounds: %s", x->dim,
                        name, low_fails ? "it can be negative" : ir_fmt(s->ctx, "it can reach %s, but the extent "
                        "is %s", lin_str(s, hib), ext));
    if (!d)
        return;
    Node *ixn = sy_node(s, x->ix);
    const char *elem = x->elem ? ir_symstr(s->ctx, sy_node(s, x->elem)->name) : NULL;
    if (elem)
        diag_note(s->ctx, d, sy_span(s, x->ref), "dimension %d of `%s` has extent %s; element `%s` of the "
                  "tile is stored at %s + %s", x->dim, name, ext, elem, sy_text(s, ixn->a), elem);
    else
        diag_note(s->ctx, d, sy_span(s, x->ref), "dimension %d of `%s` has extent %s; the index covers %s%s",
                  x->dim, name, ext, sy_text(s, x->ix), vec > 1 ? ir_fmt(s->ctx, " (%lld elements)", (long long)vec) : "");
    NodeId guard = 0;
    for (NodeId up = s->up[s->stmt_of[x->ix]]; up; up = s->up[up]) /* the guard that lets it through */
        if (sy_node(s, up)->op == OP_IF) {
            guard = sy_node(s, up)->a;
            diag_note(s->ctx, d, sy_span(s, guard), "the guard here does not keep the index in bounds");
            break;
        }
    NodeId cmp = low_fails ? 0 : off_by_one_cmp(s, mask, ext, 0);
    cmp = cmp ? cmp : low_fails ? 0 : off_by_one_cmp(s, guard, ext, 0);
    if (cmp) { /* `i + r <= N`: the test admits the element one past the end */
        const Node *c = sy_node(s, cmp);
        const char *fixed = c->op == OP_LE ? ir_fmt(s->ctx, "%s < %s", sy_text(s, c->a), sy_text(s, c->b))
                                           : ir_fmt(s->ctx, "%s > %s", sy_text(s, c->a), sy_text(s, c->b));
        diag_note(s->ctx, d, sy_span(s, cmp), "this test admits the element at %s itself, one past the last", ext);
        diag_help(s->ctx, d, "the valid elements are 0 .. %s - 1: write `%s`", ext, fixed);
        diag_fixit(s->ctx, d, sy_span(s, cmp), fixed);
        return;
    }
    Lin lo, hi2;
    int64_t v2;
    index_range(b, x->ix, x->elem, &lo, &hi2, &v2);
    uint32_t unk = unbounded_atom(b, low_fails ? lcomb(-1, lo, 0, lconst(0)) : hi);
    if (unk && x->global) { /* the test as an expression: a slice `i : +n` is its last element `i + n - 1` */
        const char *first = elem ? ir_fmt(s->ctx, "%s + %s", sy_text(s, ixn->a), elem)
                            : ixn->op == OP_SLICE ? sy_text(s, ixn->a) : sy_text(s, x->ix);
        const char *last = elem ? first
                           : ixn->op == OP_SLICE ? ir_fmt(s->ctx, "%s + %s - 1", sy_text(s, ixn->a), sy_text(s, ixn->b))
                           : sy_text(s, x->ix);
        diag_help(s->ctx, d, "the %s bound of %s is unknown: the checker cannot see what it holds; if it can "
                  "be out of range, test it before the access: %s",
                  low_fails ? "lower" : "upper", atom_text(b, unk),
                  elem ? ir_fmt(s->ctx, "`mask %s >= 0 && %s < %s`", first, last, ext)
                       : ir_fmt(s->ctx, "`if %s >= 0 && %s < %s { ... }`", first, last, ext));
        return;
    }
    if (low_fails || !x->global) {
        diag_help(s->ctx, d, "keep the index within 0 .. %s, or guard the access with `if`", ext);
        return;
    }
    /* the mask that always works, and an assume that would make it provable */
    const char *want = elem ? ir_fmt(s->ctx, "`mask %s + %s < %s`", sy_text(s, ixn->a), elem, ext)
        : ixn->op == OP_SLICE
        ? ir_fmt(s->ctx, "`mask %s + %s <= %s`", sy_text(s, ixn->a), sy_text(s, ixn->b), ext)
        : ir_fmt(s->ctx, "`mask %s < %s`", sy_text(s, x->ix), ext);
    const char *mask_join = mask ? ir_fmt(s->ctx, ", joined to the access's mask with `&&` (`mask %s && ...`)",
                                          sy_text(s, mask)) : "";
    NodeId dim = sy_decl(s, x->dim_expr);
    int64_t cands[6] = {vec, 0, 0, 0, 0, 0};
    int nc = vec > 1 ? 1 : 0;
    for (uint32_t g = 0; g < s->k->ngrid; g++) {
        Node *gn = sy_node(s, s->k->grid[g]);
        int64_t c;
        if (gn->op == OP_CDIV && gn->n == 2 && sy_const(s, ir_list_at(s->k, gn, 1), &c) && nc < 6)
            cands[nc++] = c;
    }
    for (NodeId l = sy_loop_of(s, s->stmt_of[x->ix]); l && nc < 6; l = sy_loop_of(s, l)) {
        int64_t c;
        if (sy_node(s, l)->c && sy_const(s, sy_node(s, l)->c, &c) && c > 1)
            cands[nc++] = c;
    }
    for (int i = 0; dim && sy_node(s, dim)->op == OP_DIM && i < nc && b->ngmod < MAXGMOD; i++) {
        if (cands[i] <= 1)
            continue;
        b->gdim[b->ngmod] = dim;   /* the hypothesis, for this proof only */
        b->gmod[b->ngmod++] = cands[i];
        int ok = prove_facts(b, lcomb(1, hi, -1, lcomb(1, extent, 1, lconst(-1))));
        b->ngmod--;
        if (ok) {
            diag_help(s->ctx, d, "mask the access: %s%s (or guard it with `if`); only if every %s is a multiple "
                      "of %lld, say so instead: `assume %s %% %lld == 0` (then a ragged %s is refused)", want,
                      mask_join, ext, (long long)cands[i], ext, (long long)cands[i], ext);
            return;
        }
    }
    diag_help(s->ctx, d, "mask the access: %s%s (or guard it with `if`)", want, mask_join);
}

static void check_index(Bx *b, Idx *x, NodeId mask)
{
    SyK *s = b->s;
    Node *ixn = sy_node(s, x->ix);
    if (ixn->op == OP_COLON || (ixn->flags & NF_ERROR))
        return;
    Lin lo, hi, extent;
    int64_t vec;
    index_range(b, x->ix, x->elem, &lo, &hi, &vec);
    extent = x->dim_expr ? lin(b, x->dim_expr, 0) : lconst(x->ext);
    if (!lo.ok || !hi.ok || !extent.ok)
        return;
    int nf = b->nfacts;
    facts_of(b, mask, 0, 0);
    for (int i = 0; i < b->nfacts; i++)
        if (!b->facts[i].n && b->facts[i].c0 > 0) { /* a false condition holds: dead code */
            b->nfacts = nf;
            return;
        }
    int low = prove_facts(b, lcomb(-1, lo, 0, lconst(0)));
    int high = prove_facts(b, lcomb(1, hi, -1, lcomb(1, extent, 1, lconst(-1))));
    if (!x->global) { /* tiles: only where the bound is a constant that is out of the shape */
        Lin u = upper(b, hi, 0), v = upper(b, lcomb(-1, lo, 0, lconst(0)), 0);
        high = high || !u.ok || u.n || u.c0 / u.den <= x->ext - 1;
        low = low || !v.ok || v.n || v.c0 <= 0;
    }
    if (!low || !high)
        report(b, x, hi, extent, !low, vec, mask);
    b->nfacts = nf;
}

/* ---- references ------------------------------------------------------------ */

/* elem: for a per-element tile store, the implicit index of each slice of the
 * outermost index (NULL otherwise) */
static void check_ref(SyK *s, NodeId st, NodeId ref, NodeId mask, const NodeId *elem)
{
    NodeId decl = sy_ref_decl(s, ref);
    if (!decl)
        return;
    Node *d = sy_node(s, decl);
    NodeId ty = d->a;
    int global = d->op == OP_ARG && ty && sy_node(s, ty)->op == OP_GTYPE;
    if (!global && !((d->op == OP_SHARED || d->op == OP_REG) && ty && sy_node(s, ty)->op == OP_TYPE))
        return;
    Node *t = sy_node(s, ty);
    uint32_t rank = global ? t->sub : t->n;
    if (!rank || rank > 8)
        return;
    NodeId dims[8];
    uint32_t nd = rank;
    for (uint32_t i = 0; i < rank; i++)
        dims[i] = ir_list_at(s->k, t, i);
    NodeId chain[SY_REF_CHAIN];
    int nc = sy_ref_chain(s, ref, chain);
    if (nc < 0)
        return;
    Bx b;
    memset(&b, 0, sizeof b);
    b.s = s;
    b.role = s->role[st];
    b.access = st;
    context_facts(&b, st);
    int dimno[8];
    for (uint32_t i = 0; i < nd; i++)
        dimno[i] = (int)i;
    while (nc--) {
        Node *ix = sy_node(s, chain[nc]);
        NodeId out[8];
        int outno[8];
        uint32_t no = 0, j = 0;
        for (; j < ix->n && j < nd; j++) {
            NodeId e = ir_list_at(s->k, ix, j);
            Idx x = {ref, e, dims[j], -1, dimno[j], global, 0};
            if (elem && nc == 0 && no < IR_MAX_RANK && sy_node(s, e)->op == OP_SLICE)
                x.elem = elem[no];
            int64_t c;
            if (!global || sy_const(s, dims[j], &c)) {
                if (!sy_const(s, dims[j], &x.ext))
                    return; /* symbolic tile extents: left to the type checker */
                x.dim_expr = global ? dims[j] : 0;
            }
            check_index(&b, &x, mask);
            Node *en = sy_node(s, e);
            if (en->op == OP_COLON) {
                outno[no] = dimno[j];
                out[no++] = dims[j];
            } else if (en->op == OP_SLICE) {
                outno[no] = dimno[j];
                out[no++] = en->b;
            }
        }
        for (; j < nd; j++) {
            outno[no] = dimno[j];
            out[no++] = dims[j];
        }
        memcpy(dims, out, sizeof out);
        memcpy(dimno, outno, sizeof outno);
        nd = no;
    }
}

typedef struct { NodeId st, skip; NodeId covered[32]; uint32_t ncovered; const NodeId *elem; } RefCx;

/* checks the chain rooted at ref once; its inner INDEX nodes are then covered */
static void ref_once(SyK *s, RefCx *c, NodeId ref, NodeId mask)
{
    for (uint32_t i = 0; i < c->ncovered; i++)
        if (c->covered[i] == ref)
            return;
    for (NodeId r = ref; r && c->ncovered < 32; r = sy_node(s, r)->a) {
        uint16_t op = sy_node(s, r)->op;
        if (op == OP_INDEX)
            c->covered[c->ncovered++] = r;
        else if (op != OP_TRANS && op != OP_CAST)
            break;
    }
    check_ref(s, c->st, ref, mask, c->elem);
    c->elem = NULL;
}

static void ref_expr(SyK *s, NodeId e, void *u)
{
    RefCx *c = u;
    Node *n = sy_node(s, e);
    if (n->op == OP_LOAD) {
        ref_once(s, c, n->a, n->b);
        return;
    }
    /* a plain element or view of a shared/register tile: T[i, j] */
    if (n->op == OP_INDEX) {
        NodeId d = sy_ref_decl(s, e);
        if (d && (sy_node(s, d)->op == OP_SHARED || sy_node(s, d)->op == OP_REG))
            ref_once(s, c, e, 0);
    }
}

static void ref_top(SyK *s, RefCx *c, NodeId e, NodeId mask)
{
    if (e)
        ref_once(s, c, e, mask);
}

/* a per-element tile store (`store C[i : +R, j : +C] <- bf16(acc[r, c]) mask
 * i + r < M`): the implicit indices its value declares, in order, into imp
 * (IR_MAX_RANK entries); 0 when the store has none */
static int store_elems(SyK *s, NodeId e, NodeId *imp, int depth)
{
    if (!e || depth > 200)
        return 0;
    Node *n = sy_node(s, e);
    if (n->op == OP_INDEX && n->n <= IR_MAX_RANK) {
        int found = 0;
        memset(imp, 0, IR_MAX_RANK * sizeof *imp);
        for (uint32_t i = 0; i < n->n; i++) {
            NodeId ix = ir_list_at(s->k, n, i);
            Node *x = sy_node(s, ix);
            imp[i] = x->op == OP_NAME && (x->flags & NF_IMPLICIT) ? x->decl : 0;
            found |= imp[i] == ix;
        }
        if (found)
            return 1;
    }
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        if (store_elems(s, kids[i], imp, depth + 1))
            return 1;
    for (uint32_t i = 0; i < n->n; i++)
        if (store_elems(s, ir_list_at(s->k, n, i), imp, depth + 1))
            return 1;
    return 0;
}

static void stmt_refs(SyK *s, NodeId st, void *u)
{
    Node *n = sy_node(s, st);
    (void)u;
    if (n->op == OP_REFERENCE || n->op == OP_ROLE || n->op == OP_FOR)
        return;
    RefCx c = {.st = st};
    NodeId imp[IR_MAX_RANK] = {0};
    switch (n->op) {
    case OP_STORE:
        if (sy_node(s, n->a)->op == OP_INDEX && store_elems(s, n->b, imp, 0))
            c.elem = imp;
        ref_top(s, &c, n->a, n->c);
        c.skip = n->a;
        break;
    case OP_CP_ASYNC: ref_top(s, &c, n->b, n->c); ref_top(s, &c, n->a, 0); c.skip = n->a; break;
    case OP_TMA_LOAD: case OP_TMA_STORE: return; /* the hardware bounds-checks TMA */
    case OP_ASSIGN: case OP_STMATRIX: ref_top(s, &c, n->a, 0); c.skip = n->a; break;
    default: break;
    }
    if (n->op == OP_IF) {
        sy_each_expr(s, n->a, ref_expr, &c);
        return;
    }
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        if (kids[i] && kids[i] != c.skip)
            sy_each_expr(s, kids[i], ref_expr, &c);
    for (uint32_t i = 0; i < n->n; i++)
        sy_each_expr(s, ir_list_at(s->k, n, i), ref_expr, &c);
}

uint32_t sy_check_bounds(SyK *s)
{
    uint32_t before = s->ctx->nerrors;
    for (NodeId i = 1; i < s->k->nnodes; i++) /* earlier errors: indices may be ill-typed; fix those first */
        if (s->k->nodes[i].flags & NF_ERROR)
            return 0;
    sy_each_stmt(s, s->k->body, stmt_refs, NULL);
    return s->ctx->nerrors - before;
}

uint32_t ver_bounds(CakeCtx *ctx, Kernel *k)
{
    return sy_run(ctx, k, sy_check_bounds);
}
