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
