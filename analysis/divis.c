/* divis.c — the congruence lattice modulo powers of two and the evaluator of
 * index expressions over it (divis.h says what each rule means). */
#include "divis.h"
#include "consteval.h"

#define DV_MAX_DEPTH 64

static uint64_t low_mask(int k)
{
    return k >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << k) - 1;
}

static DvCong mk(uint64_t r, int k)
{
    if (k < 0)
        k = 0;
    if (k > 64)
        k = 64;
    return (DvCong){r & low_mask(k), k};
}

/* trailing zeros of r, 64 for 0 */
static int tz(uint64_t r)
{
    return r ? __builtin_ctzll(r) : 64;
}

static int imin(int a, int b)
{
    return a < b ? a : b;
}

DvCong dv_const(int64_t c) { return mk((uint64_t)c, 64); }
DvCong dv_top(void) { return mk(0, 0); }
DvCong dv_add(DvCong a, DvCong b) { return mk(a.r + b.r, imin(a.k, b.k)); }
DvCong dv_neg(DvCong a) { return mk((uint64_t)0 - a.r, a.k); }

/* (ra + 2^ka i)(rb + 2^kb j) = ra rb + ra 2^kb j + rb 2^ka i + 2^(ka+kb) ij */
DvCong dv_mul(DvCong a, DvCong b)
{
    int k = imin(imin(tz(a.r) + b.k, tz(b.r) + a.k), a.k + b.k);
    return mk(a.r * b.r, k);
}

DvCong dv_join(DvCong a, DvCong b)
{
    int k = imin(imin(a.k, b.k), tz((a.r ^ b.r) & low_mask(imin(a.k, b.k))));
    return mk(a.r, k);
}

DvCong dv_meet(DvCong a, DvCong b)
{
    int k = imin(a.k, b.k);
    if ((a.r ^ b.r) & low_mask(k))
        return a; /* contradictory facts: dead code; keep what the expression says */
    return a.k >= b.k ? a : b;
}

DvCong dv_shr(DvCong a, int c)
{
    if (c <= 0)
        return a;
    if (c > 63)
        return dv_top();
    if (a.k == 64)
        return mk((uint64_t)((int64_t)a.r >> c), 64);
    if (a.k < c)
        return dv_top();
    return mk(a.r >> c, a.k - c);
}

int64_t dv_pow2(DvCong a)
{
    int t = imin(imin(a.k, tz(a.r)), 62);
    return (int64_t)1 << t;
}

int dv_multiple(DvCong a, int64_t m)
{
    return m >= 1 && dv_pow2(a) % m == 0;
}

/* ---- expressions -------------------------------------------------------- */

static const Node *node(const DvEnv *env, NodeId n)
{
    return &env->k->nodes[n];
}

static int cst(const DvEnv *env, NodeId e, int64_t *out)
{
    return e && ce_const_int(env->ctx, env->k, e, out);
}

static DvCong expr(const DvEnv *env, NodeId e, int depth);

static NodeId arg(const DvEnv *env, const Node *n, uint32_t i)
{
    return i < n->n ? env->k->lists[n->list + i] : 0;
}

static DvCong name(const DvEnv *env, const Node *n, int depth)
{
    NodeId d = n->decl;
    DvCong c = dv_top();
    if (!d || d >= env->k->nnodes)
        return c;
    const Node *dn = node(env, d);
    if (dn->op == OP_LET && dn->b)
        c = expr(env, dn->b, depth + 1);
    else if (dn->op == OP_FOR) { /* lo + step * t, t >= 0 */
        DvCong step = dn->c ? expr(env, dn->c, depth + 1) : dv_const(1);
        c = dv_add(expr(env, dn->a, depth + 1), dv_mul(step, dv_top()));
    }
    for (uint32_t i = 0; i < env->nfacts; i++)
        if (env->facts[i].decl == d)
            c = dv_meet(c, env->facts[i].c);
    return c;
}

static DvCong binary(const DvEnv *env, const Node *n, int depth)
{
    int64_t c;
    DvCong a = expr(env, n->a, depth + 1);
    switch (n->op) {
    case OP_ADD: return dv_add(a, expr(env, n->b, depth + 1));
    case OP_SUB: return dv_add(a, dv_neg(expr(env, n->b, depth + 1)));
    case OP_MUL: return dv_mul(a, expr(env, n->b, depth + 1));
    case OP_SHL:
        if (cst(env, n->b, &c) && c >= 0 && c < 63)
            return dv_mul(a, dv_const((int64_t)1 << c));
        return dv_top();
    case OP_SHR:
        return cst(env, n->b, &c) && c >= 0 ? dv_shr(a, (int)(c > 63 ? 64 : c)) : dv_top();
    case OP_DIV: /* by 2^j: a shift of the non-negative index (docs/tir.md §3.4) */
        if (cst(env, n->b, &c) && c > 0 && !(c & (c - 1)))
            return dv_shr(a, tz((uint64_t)c));
        return dv_top();
    case OP_MOD: /* a - d * q: congruent to a modulo any power of two dividing d (any sign) */
        if (cst(env, n->b, &c) && c > 0)
            return mk(a.r, imin(a.k, tz((uint64_t)c)));
        return dv_add(a, dv_mul(dv_neg(expr(env, n->b, depth + 1)), dv_top()));
    case OP_BAND: {
        if (!cst(env, n->b, &c))
            return dv_top();
        /* bits below a.k are known; the first set bit of c at or above a.k is not */
        uint64_t m = (uint64_t)c & ~low_mask(a.k);
        int k = m ? tz(m) : 64;
        return mk(a.r & (uint64_t)c, k);
    }
    default:
        return dv_top();
    }
}

static DvCong expr(const DvEnv *env, NodeId e, int depth)
{
    int64_t c;
    if (!e || e >= env->k->nnodes || depth > DV_MAX_DEPTH)
        return dv_top();
    const Node *n = node(env, e);
    if (n->op != OP_NAME && cst(env, e, &c))
        return dv_const(c);
    switch (n->op) {
    case OP_NAME: return cst(env, e, &c) ? dv_const(c) : name(env, n, depth);
    case OP_NEG: return dv_neg(expr(env, n->a, depth + 1));
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_SHL: case OP_SHR: case OP_DIV: case OP_MOD: case OP_BAND:
        return binary(env, n, depth);
    case OP_CAST: {
        if (n->lanes > 1 || n->dtype >= DT__COUNT || !ir_dtypes[n->dtype].bits ||
            (ir_dtypes[n->dtype].kind != 'i' && ir_dtypes[n->dtype].kind != 'u'))
            return dv_top();
        DvCong a = expr(env, n->a, depth + 1);
        return mk(a.r, imin(a.k, ir_dtypes[n->dtype].bits)); /* wraps modulo 2^bits */
    }
    case OP_MIN: case OP_MAX:
        return n->n == 2 ? dv_join(expr(env, arg(env, n, 0), depth + 1), expr(env, arg(env, n, 1), depth + 1))
                         : dv_top();
    case OP_SELECT:
        return n->n == 3 ? dv_join(expr(env, arg(env, n, 1), depth + 1), expr(env, arg(env, n, 2), depth + 1))
                         : dv_top();
    case OP_CDIV: { /* exact when the divisor 2^j divides the numerator */
        DvCong a = expr(env, arg(env, n, 0), depth + 1);
        if (n->n == 2 && cst(env, arg(env, n, 1), &c) && c > 0 && !(c & (c - 1))) {
            int j = tz((uint64_t)c);
            if (a.k >= j && !(a.r & low_mask(j)))
                return dv_shr(a, j);
        }
        return dv_top();
    }
    case OP_SPECIAL:
        return env->special && env->special(env, e, &c) ? dv_const(c) : dv_top();
    default:
        return dv_top();
    }
}

DvCong dv_expr(const DvEnv *env, NodeId e)
{
    return expr(env, e, 0);
}

/* ---- facts ------------------------------------------------------------------ */

static void push(DvEnv *env, NodeId decl, DvCong c)
{
    if (decl && c.k > 0 && env->nfacts < env->capfacts)
        env->facts[env->nfacts++] = (DvFact){decl, c};
}

static NodeId decl_of(const DvEnv *env, NodeId e)
{
    return e && node(env, e)->op == OP_NAME ? node(env, e)->decl : 0;
}

/* lhs == rhs with rhs a constant: `X % c == r`, `X & (2^j - 1) == r`, `X == c` */
static void equality(DvEnv *env, NodeId lhs, NodeId rhs)
{
    int64_t r, c;
    if (cst(env, lhs, &r) && !cst(env, rhs, &c)) {
        NodeId t = lhs;
        lhs = rhs;
        rhs = t;
    }
    if (!cst(env, rhs, &r) || !lhs)
        return;
    const Node *l = node(env, lhs);
    if (l->op == OP_NAME) {
        push(env, decl_of(env, lhs), dv_const(r));
        return;
    }
    if (l->op == OP_MOD && cst(env, l->b, &c) && c > 0 && r >= 0 && r < c) {
        push(env, decl_of(env, l->a), mk((uint64_t)r, tz((uint64_t)c)));
        return;
    }
    if (l->op == OP_BAND && cst(env, l->b, &c) && c > 0 && !((uint64_t)c & ((uint64_t)c + 1)) && r >= 0 && r <= c)
        push(env, decl_of(env, l->a), mk((uint64_t)r, 64 - __builtin_clzll((uint64_t)c)));
}

/* 1 when e reads a `var` (directly or through `let`s): a let-bound condition
 * over one may be stale where it is used (the var assigned since) */
static int reads_var(const DvEnv *env, NodeId e, int depth)
{
    if (!e || e >= env->k->nnodes || depth > DV_MAX_DEPTH)
        return 1;
    const Node *n = node(env, e);
    if (n->op == OP_NAME) {
        const Node *d = n->decl && n->decl < env->k->nnodes ? node(env, n->decl) : NULL;
        return d && (d->op == OP_VAR || (d->op == OP_LET && reads_var(env, d->b, depth + 1)));
    }
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        if (kids[i] && reads_var(env, kids[i], depth + 1))
            return 1;
    for (uint32_t i = 0; i < n->n; i++)
        if (reads_var(env, arg(env, n, i), depth + 1))
            return 1;
    return 0;
}

static void facts(DvEnv *env, NodeId e, int neg, int depth)
{
    if (!e || e >= env->k->nnodes || depth > DV_MAX_DEPTH)
        return;
    const Node *n = node(env, e);
    if (n->op == OP_NOT) {
        facts(env, n->a, !neg, depth + 1);
        return;
    }
    const Node *d = n->op == OP_NAME && n->decl && n->decl < env->k->nnodes ? node(env, n->decl) : NULL;
    if (d && d->op == OP_LET && d->b && !reads_var(env, d->b, depth + 1)) { /* `let al = N % 8 == 0` ... `if al` */
        facts(env, d->b, neg, depth + 1);
        return;
    }
    if ((n->op == OP_AND && !neg) || (n->op == OP_OR && neg)) {
        facts(env, n->a, neg, depth + 1);
        facts(env, n->b, neg, depth + 1);
        return;
    }
    if ((n->op == OP_EQ && !neg) || (n->op == OP_NE && neg))
        equality(env, n->a, n->b);
}

void dv_add_facts(DvEnv *env, NodeId cond, int negated)
{
    facts(env, cond, negated, 0);
}
