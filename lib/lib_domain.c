/* lib_domain.c — a variant's assumes, compiled once (when the library is
 * opened) into small expression trees over the op's dims: every parameter is
 * replaced by its value at the variant's bindings and every subtree without a
 * dim folded to its constant, so that testing a domain at select time walks a
 * handful of nodes and looks nothing up by name. The semantics are the one
 * integer evaluator's (analysis/consteval.h): ce_binop for the operators, a
 * decided side of && and || decides, an evaluation that fails (overflow,
 * division by zero) leaves the assume undecided, which counts as holding, as
 * in shape_env_assumes_hold. An assume with a construct not compiled here
 * (a cast of a dim, say) is evaluated with ce_eval_int instead. */
#include <string.h>
#include "lib_priv.h"

enum { X_CONST, X_DIM, X_FAIL, X_UN, X_BIN, X_LOGIC, X_SELECT };

typedef struct {
    CakeCtx *ctx;
    const LibOp *op;
    LibVariant *v;
    CeEnv params;             /* the variant's bindings */
    LibX *xs; uint32_t n, cap;
    int unsupported;
} Comp;

static int32_t push(Comp *c, LibX x)
{
    if (c->n == c->cap)
        c->xs = arena_grow(&c->ctx->arena, c->xs, &c->cap, c->n + 1, sizeof *c->xs);
    c->xs[c->n] = x;
    return (int32_t)c->n++;
}

/* does e name a dim (directly or through its subtree)? */
static int has_dim(const Kernel *k, NodeId e, int depth)
{
    if (!e || e >= k->nnodes || depth > 64)
        return 0;
    const Node *n = &k->nodes[e];
    if (n->op == OP_NAME)
        return n->decl && n->decl < k->nnodes && k->nodes[n->decl].op == OP_DIM;
    if (n->op == OP_INT || n->op == OP_BOOL)
        return 0;
    if (has_dim(k, n->a, depth + 1) || has_dim(k, n->b, depth + 1))
        return 1;
    for (uint32_t i = 0; i < n->n && n->list + i < k->nlists; i++)
        if (has_dim(k, k->lists[n->list + i], depth + 1))
            return 1;
    return 0;
}

static int32_t comp(Comp *c, NodeId e, int depth);

static int32_t comp_arg(Comp *c, const Node *n, uint32_t i, int depth)
{
    return comp(c, c->v->k->lists[n->list + i], depth + 1);
}

static int32_t comp(Comp *c, NodeId e, int depth)
{
    const Kernel *k = c->v->k;
    if (!e || e >= k->nnodes || depth > 64) {
        c->unsupported = 1;
        return -1;
    }
    const Node *n = &k->nodes[e];
    if (!has_dim(k, e, 0)) {
        int64_t x;
        return ce_eval_int(c->ctx, k, e, &c->params, &x) ? push(c, (LibX){.kind = X_CONST, .v = x})
                                                         : push(c, (LibX){.kind = X_FAIL});
    }
    switch (n->op) {
    case OP_NAME: {
        const Node *d = &k->nodes[n->decl];
        for (uint32_t i = 0; i < c->op->pub.ndims; i++)
            if (c->op->dsym[i] == d->name)
                return push(c, (LibX){.kind = X_DIM, .dim = (uint8_t)i});
        c->unsupported = 1;   /* a dim of the kernel the op does not have */
        return -1;
    }
    case OP_NEG: case OP_NOT:
        return push(c, (LibX){.kind = X_UN, .op = n->op, .a = comp(c, n->a, depth + 1)});
    case OP_AND: case OP_OR:
        return push(c, (LibX){.kind = X_LOGIC, .op = n->op, .a = comp(c, n->a, depth + 1),
                              .b = comp(c, n->b, depth + 1)});
    case OP_CDIV: case OP_MAX: case OP_MIN:
        if (n->n != 2)
            break;
        return push(c, (LibX){.kind = X_BIN, .op = n->op, .a = comp_arg(c, n, 0, depth),
                              .b = comp_arg(c, n, 1, depth)});
    case OP_SELECT:
        if (n->n != 3)
            break;
        return push(c, (LibX){.kind = X_SELECT, .a = comp_arg(c, n, 0, depth),
                              .b = comp_arg(c, n, 1, depth), .c = comp_arg(c, n, 2, depth)});
    default:
        if (ir_ops[n->op].cls == OC_BIN)
            return push(c, (LibX){.kind = X_BIN, .op = n->op, .a = comp(c, n->a, depth + 1),
                                  .b = comp(c, n->b, depth + 1)});
        break;
    }
    c->unsupported = 1;
    return -1;
}

void lib_domain_compile(CakeCtx *ctx, const LibOp *op, LibVariant *v)
{
    Comp c = {ctx, op, v, {v->pb, v->npb, NULL, NULL, NULL}, NULL, 0, 0, 0};
    v->as = arena_alloc(&ctx->arena, (v->k->nassumes + 1) * sizeof *v->as);
    v->nas = v->k->nassumes;
    for (uint32_t i = 0; i < v->k->nassumes; i++) {
        c.unsupported = 0;
        int32_t root = comp(&c, v->k->assumes[i], 0);
        v->as[i] = (LibAssume){v->k->assumes[i], c.unsupported ? -1 : root};
    }
    v->xs = c.xs;
}

/* 1 and *out, or 0: the evaluation fails */
static int eval(const LibX *xs, int32_t i, const int64_t *dimv, int64_t *out)
{
    const LibX *x = &xs[i];
    int64_t a, b;
    switch (x->kind) {
    case X_CONST: *out = x->v; return 1;
    case X_DIM: *out = dimv[x->dim]; return 1;
    case X_UN:
        if (!eval(xs, x->a, dimv, &a) || (x->op == OP_NEG && a == INT64_MIN))
            return 0;
        *out = x->op == OP_NEG ? -a : !a;
        return 1;
    case X_LOGIC: {
        int64_t stop = x->op == OP_OR;
        int ka = eval(xs, x->a, dimv, &a), kb;
        if (ka && (a != 0) == stop) {
            *out = stop;
            return 1;
        }
        kb = eval(xs, x->b, dimv, &b);
        if (kb && (b != 0) == stop) {
            *out = stop;
            return 1;
        }
        *out = !stop;
        return ka && kb;
    }
    case X_SELECT:
        return eval(xs, x->a, dimv, &a) && eval(xs, a ? x->b : x->c, dimv, out);
    case X_BIN:
        return eval(xs, x->a, dimv, &a) && eval(xs, x->b, dimv, &b) && ce_binop((Op)x->op, a, b, out);
    default:
        return 0;
    }
}

/* assume i of v at dimv: 1 holds (or undecided), 0 fails */
int lib_assume_holds(const CakeLib *lib, const LibOp *op, const LibVariant *v, uint32_t i,
                     const int64_t *dimv)
{
    int64_t x;
    if (v->as && v->as[i].root >= 0)
        return !eval(v->xs, v->as[i].root, dimv, &x) || x != 0;
    CeBinding b[SHAPE_ENV_MAX];
    uint32_t n = 0;
    for (uint32_t j = 0; j < v->npb && n < SHAPE_ENV_MAX; j++)
        b[n++] = v->pb[j];
    for (uint32_t j = 0; j < op->pub.ndims && n < SHAPE_ENV_MAX; j++)
        b[n++] = (CeBinding){op->dsym[j], dimv[j]};
    CeEnv env = {b, n, NULL, NULL, NULL};
    return !ce_eval_int(lib->ctx, v->k, v->k->assumes[i], &env, &x) || x != 0;
}

/* ---- the plan: bounds per dim ------------------------------------------------------ */

/* x is a comparison of a dim with a constant (either side), or a conjunction of such:
   bounds (and `dim % c == r`) the plan can hold as data */
static int plain(const LibX *xs, int32_t i, int depth)
{
    const LibX *x = &xs[i], *a, *b;
    if (depth > 16)
        return 0;
    if (x->kind == X_CONST)
        return 1;
    if (x->kind == X_LOGIC && x->op == OP_AND)
        return plain(xs, x->a, depth + 1) && plain(xs, x->b, depth + 1);
    if (x->kind != X_BIN)
        return 0;
    a = &xs[x->a];
    b = &xs[x->b];
    switch (x->op) {
    case OP_LT: case OP_LE: case OP_GT: case OP_GE: case OP_NE: case OP_EQ:
        if ((a->kind == X_DIM && b->kind == X_CONST) || (a->kind == X_CONST && b->kind == X_DIM))
            return 1;
        return x->op == OP_EQ && b->kind == X_CONST && a->kind == X_BIN && a->op == OP_MOD &&
               xs[a->a].kind == X_DIM && xs[a->b].kind == X_CONST && xs[a->b].v > 0;
    default:
        return 0;
    }
}

typedef struct {
    LibOp *op;
    uint32_t v;
    int64_t *lo, *hi;
    LibCheck *checks; uint32_t n, cap;
} Plan;

static void check_add(CakeCtx *ctx, Plan *p, LibCheck c)
{
    if (c.kind == LP_MOD && !(c.a & (c.a - 1)))
        c.kind = LP_MOD2;   /* a power of two: a mask where the dim is not negative */
    if (p->n == p->cap)
        p->checks = arena_grow(&ctx->arena, p->checks, &p->cap, p->n + 1, sizeof *p->checks);
    p->checks[p->n++] = c;
}

/* dim `d REL c` into the bounds (a relation that holds nowhere empties them) */
static void bound(CakeCtx *ctx, Plan *p, uint8_t d, int rel, int64_t c)
{
    int64_t *lo = &p->lo[d], *hi = &p->hi[d];
    switch (rel) {
    case OP_LT: if (c == INT64_MIN) *lo = 1, *hi = 0; else if (c - 1 < *hi) *hi = c - 1; break;
    case OP_LE: if (c < *hi) *hi = c; break;
    case OP_GT: if (c == INT64_MAX) *lo = 1, *hi = 0; else if (c + 1 > *lo) *lo = c + 1; break;
    case OP_GE: if (c > *lo) *lo = c; break;
    case OP_EQ: if (c < *hi) *hi = c; if (c > *lo) *lo = c; break;
    default: check_add(ctx, p, (LibCheck){.kind = LP_NE, .dim = d, .a = c}); break;
    }
}

static int flipped(int rel)
{
    return rel == OP_LT ? OP_GT : rel == OP_GT ? OP_LT : rel == OP_LE ? OP_GE : rel == OP_GE ? OP_LE : rel;
}

static void absorb(CakeCtx *ctx, Plan *p, const LibX *xs, int32_t i)
{
    const LibX *x = &xs[i], *a, *b;
    if (x->kind == X_CONST) {
        if (!x->v)
            p->lo[0] = 1, p->hi[0] = 0;   /* an assume that fails at every shape */
        return;
    }
    if (x->kind == X_LOGIC) {
        absorb(ctx, p, xs, x->a);
        absorb(ctx, p, xs, x->b);
        return;
    }
    a = &xs[x->a];
    b = &xs[x->b];
    if (a->kind == X_DIM)
        bound(ctx, p, a->dim, x->op, b->v);
    else if (b->kind == X_DIM)
        bound(ctx, p, b->dim, flipped(x->op), a->v);
    else
        check_add(ctx, p, (LibCheck){.kind = LP_MOD, .dim = xs[a->a].dim, .a = xs[a->b].v, .b = b->v});
}

/* variant u's own conditions and assumes into p (the variant p->v's plan) */
static void plan_own(CakeCtx *ctx, Plan *p, uint32_t u)
{
    const LibVariant *w = &p->op->v[u];
    for (uint32_t i = 0; i < w->nconds; i++) {
        const LibCond *c = &w->conds[i];
        static const int rels[] = {[LC_LT] = OP_LT, [LC_LE] = OP_LE, [LC_GT] = OP_GT,
                                   [LC_GE] = OP_GE, [LC_EQ] = OP_EQ, [LC_NE] = OP_NE};
        if (c->rel == LC_MOD && c->mod > 0)
            check_add(ctx, p, (LibCheck){.kind = LP_MOD, .dim = c->dim, .a = c->mod, .b = c->value});
        else if (c->rel == LC_MOD || c->nfac != 1 || c->div != 1)   /* a tile count */
            check_add(ctx, p, (LibCheck){.kind = LP_COND, .var = (uint16_t)u, .i = i});
        else
            bound(ctx, p, c->dim, rels[c->rel], c->value);
    }
    for (uint32_t i = 0; i < w->nas; i++)
        if (w->as && w->as[i].root >= 0 && plain(w->xs, w->as[i].root, 0))
            absorb(ctx, p, w->xs, w->as[i].root);
        else
            check_add(ctx, p, (LibCheck){.kind = LP_ASSUME, .var = (uint16_t)u, .i = i});
}

void lib_domain_plan(CakeCtx *ctx, LibOp *op)
{
    uint32_t nv = op->pub.nvariants, nd = op->pub.ndims;
    LibPlan *lp = &op->plan;
    lp->ready = 0;
    if (!nd || nv > CAKE_LIB_MAX_VARIANTS)
        return;
    lp->lo = arena_alloc(&ctx->arena, nv * nd * sizeof *lp->lo);
    lp->hi = arena_alloc(&ctx->arena, nv * nd * sizeof *lp->hi);
    lp->never = arena_alloc(&ctx->arena, nv);
    lp->rest = arena_alloc(&ctx->arena, (nv + 1) * sizeof *lp->rest);
    Plan p = {op, 0, NULL, NULL, NULL, 0, 0};
    for (uint32_t v = 0; v < nv; v++) {
        const LibVariant *w = &op->v[v];
        p.v = v;
        p.lo = lp->lo + v * nd;
        p.hi = lp->hi + v * nd;
        for (uint32_t d = 0; d < nd; d++)
            p.lo[d] = INT64_MIN, p.hi[d] = INT64_MAX;
        lp->rest[v] = p.n;
        lp->never[v] = w->part_of >= 0 && !w->nsteps;
        if (!w->k && !w->nsteps)
            return;   /* not resolved: no plan */
        for (uint32_t s = 0; s < w->nsteps; s++)
            plan_own(ctx, &p, w->steps[s]);
        plan_own(ctx, &p, v);
    }
    lp->rest[nv] = p.n;
    lp->checks = p.checks;
    lp->ready = 1;
}

int lib_domain_fast(const CakeLib *lib, const LibOp *op, uint32_t v, const int64_t *dimv)
{
    const LibPlan *p = &op->plan;
    uint32_t nd = op->pub.ndims;
    const int64_t *lo = p->lo + v * nd, *hi = p->hi + v * nd;
    if (p->never[v])
        return 0;
    for (uint32_t d = 0; d < nd; d++)
        if (dimv[d] < lo[d] || dimv[d] > hi[d])
            return 0;
    for (uint32_t i = p->rest[v]; i < p->rest[v + 1]; i++) {
        const LibCheck *c = &p->checks[i];
        int ok;
        switch (c->kind) {
        case LP_MOD: ok = dimv[c->dim] % c->a == c->b; break;
        case LP_MOD2: ok = (dimv[c->dim] >= 0 ? dimv[c->dim] & (c->a - 1) : dimv[c->dim] % c->a) == c->b; break;
        case LP_NE: ok = dimv[c->dim] != c->a; break;
        case LP_COND: ok = lib_cond_holds(&op->v[c->var].conds[c->i], dimv); break;
        default: ok = lib_assume_holds(lib, op, &op->v[c->var], c->i, dimv); break;
        }
        if (!ok)
            return 0;
    }
    return 1;
}
