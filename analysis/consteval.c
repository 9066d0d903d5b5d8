/* consteval.c — the one integer evaluator (semantics in consteval.h),
 * divisibility facts from `assume`s, and block sizes per target. */
#include "consteval.h"

#define MAX_DEPTH 200

static const Node *node(const Kernel *k, NodeId id) { return &k->nodes[id]; }

int ce_env_get(const CeEnv *env, Sym name, int64_t *out)
{
    if (!env)
        return 0;
    for (uint32_t i = 0; i < env->n; i++)
        if (env->b[i].name == name) {
            *out = env->b[i].value;
            return 1;
        }
    return 0;
}

/* ---- arithmetic ------------------------------------------------------------ */

static int power(int64_t x, int64_t y, int64_t *out)
{
    int64_t r = 1;
    if (y < 0)
        return 0;
    while (y) {   /* by squaring: the base is squared only while bits remain */
        if ((y & 1) && __builtin_mul_overflow(r, x, &r))
            return 0;
        y >>= 1;
        if (y && __builtin_mul_overflow(x, x, &x))
            return 0;
    }
    *out = r;
    return 1;
}

int ce_binop(Op op, int64_t a, int64_t b, int64_t *r)
{
    switch (op) {
    case OP_ADD: return !__builtin_add_overflow(a, b, r);
    case OP_SUB: return !__builtin_sub_overflow(a, b, r);
    case OP_MUL: return !__builtin_mul_overflow(a, b, r);
    case OP_DIV: if (!b || (a == INT64_MIN && b == -1)) return 0; *r = a / b; return 1;
    case OP_MOD: if (!b || (a == INT64_MIN && b == -1)) return 0; *r = a % b; return 1;
    case OP_CDIV: if (b <= 0 || a < 0) return 0; *r = a / b + (a % b != 0); return 1;
    case OP_POW: return power(a, b, r);
    case OP_SHL: if (b < 0 || b > 62 || a < 0 || a > (INT64_MAX >> b)) return 0; *r = a << b; return 1;
    case OP_SHR: if (b < 0 || b > 63) return 0; *r = a >> b; return 1;
    case OP_BAND: *r = a & b; return 1;
    case OP_BOR: *r = a | b; return 1;
    case OP_BXOR: *r = a ^ b; return 1;
    case OP_LT: *r = a < b; return 1;
    case OP_LE: *r = a <= b; return 1;
    case OP_GT: *r = a > b; return 1;
    case OP_GE: *r = a >= b; return 1;
    case OP_EQ: *r = a == b; return 1;
    case OP_NE: *r = a != b; return 1;
    case OP_AND: *r = a && b; return 1;
    case OP_OR: *r = a || b; return 1;
    case OP_MAX: *r = a > b ? a : b; return 1;
    case OP_MIN: *r = a < b ? a : b; return 1;
    default: return 0;
    }
}

/* a cast keeps a value its integer (or bool) type can hold */
static int cast(const Node *n, int64_t v, int64_t *out)
{
    DType dt = (DType)n->dtype;
    int bits = ir_dtypes[dt].bits;
    char kind = ir_dtypes[dt].kind;
    if (n->lanes > 1)
        return 0;
    if (kind == 'b') {
        *out = v != 0;
        return 1;
    }
    if ((kind != 'i' && kind != 'u') || bits <= 0 || bits > 64)
        return 0;
    int fits = kind == 'u' ? v >= 0 && (bits == 64 || v < (int64_t)1 << bits)
                           : bits == 64 || (v >= -((int64_t)1 << (bits - 1)) && v < (int64_t)1 << (bits - 1));
    if (!fits)
        return 0;
    *out = v;
    return 1;
}

/* ---- expressions ------------------------------------------------------------- */

typedef struct { const Kernel *k; const CeEnv *env; } Ev;

static int eval(const Ev *x, NodeId e, int depth, int64_t *out);

static int eval_name(const Ev *x, const Node *n, int depth, int64_t *out)
{
    const Kernel *k = x->k;
    if (!n->decl || n->decl >= k->nnodes)
        return 0;
    if (x->env && x->env->decl && x->env->decl(x->env, n->decl, out))
        return 1;
    const Node *d = node(k, n->decl);
    switch (d->op) {
    case OP_PARAM:
        return ce_env_get(x->env, d->name, out) || (d->a && eval(x, d->a, depth + 1, out));
    case OP_DIM:
        return ce_env_get(x->env, d->name, out);
    case OP_LET: /* a let of a constant is a constant */
        return d->b && eval(x, d->b, depth + 1, out);
    default:
        return 0;
    }
}

static int arg(const Ev *x, const Node *n, uint32_t i, int depth, int64_t *out)
{
    return eval(x, x->k->lists[n->list + i], depth + 1, out);
}

/* a && b, a || b: a side known to decide the result decides it */
static int logic(const Ev *x, const Node *n, int depth, int64_t *out)
{
    int64_t a = 0, b = 0, stop = n->op == OP_OR;
    int ka = eval(x, n->a, depth + 1, &a);
    if (ka && (a != 0) == stop) {
        *out = stop;
        return 1;
    }
    int kb = eval(x, n->b, depth + 1, &b);
    if (kb && (b != 0) == stop) {
        *out = stop;
        return 1;
    }
    if (!ka || !kb)
        return 0;
    *out = !stop;
    return 1;
}

static int eval(const Ev *x, NodeId e, int depth, int64_t *out)
{
    const Kernel *k = x->k;
    if (!e || e >= k->nnodes || depth > MAX_DEPTH)
        return 0;
    const Node *n = node(k, e);
    int64_t a = 0, b = 0;
    switch (n->op) {
    case OP_INT: case OP_BOOL:
        *out = n->v.i;
        return 1;
    case OP_NAME:
        return eval_name(x, n, depth, out);
    case OP_SPECIAL:
        return x->env && x->env->special && x->env->special(x->env, e, out);
    case OP_CAST:
        return eval(x, n->a, depth + 1, &a) && cast(n, a, out);
    case OP_NEG:
        if (!eval(x, n->a, depth + 1, &a) || a == INT64_MIN)
            return 0;
        *out = -a;
        return 1;
    case OP_NOT:
        if (!eval(x, n->a, depth + 1, &a))
            return 0;
        *out = !a;
        return 1;
    case OP_AND: case OP_OR:
        return logic(x, n, depth, out);
    case OP_CDIV: case OP_MAX: case OP_MIN:
        return n->n == 2 && arg(x, n, 0, depth, &a) && arg(x, n, 1, depth, &b) &&
               ce_binop((Op)n->op, a, b, out);
    case OP_SELECT:
        if (n->n != 3 || !arg(x, n, 0, depth, &a))
            return 0;
        return arg(x, n, a ? 1 : 2, depth, out);
    default:
        break;
    }
    if (ir_ops[n->op].cls != OC_BIN)
        return 0;
    return eval(x, n->a, depth + 1, &a) && eval(x, n->b, depth + 1, &b) && ce_binop((Op)n->op, a, b, out);
}

int ce_eval_int(const CakeCtx *ctx, const Kernel *k, NodeId e, const CeEnv *env, int64_t *out)
{
    (void)ctx;
    Ev x = {k, env};
    int64_t v;
    if (!eval(&x, e, 0, &v))
        return 0;
    *out = v;
    return 1;
}

int ce_const_int(const CakeCtx *ctx, const Kernel *k, NodeId e, int64_t *out)
{
    return ce_eval_int(ctx, k, e, NULL, out);
}

/* does e name a parameter (directly or through a let)? */
static int names_param(const Kernel *k, NodeId e, int depth)
{
    if (!e || e >= k->nnodes || depth > MAX_DEPTH)
        return depth > MAX_DEPTH;
    const Node *n = node(k, e);
    if (n->op == OP_NAME && n->decl && n->decl < k->nnodes) {
        const Node *d = node(k, n->decl);
        return d->op == OP_PARAM || (d->op == OP_LET && names_param(k, d->b, depth + 1));
    }
    if (names_param(k, n->a, depth + 1) || names_param(k, n->b, depth + 1) ||
        names_param(k, n->c, depth + 1) || names_param(k, n->d, depth + 1))
        return 1;
    for (uint32_t i = 0; i < n->n; i++)
        if (names_param(k, k->lists[n->list + i], depth + 1))
            return 1;
    return 0;
}

int ce_param_own_default(const CakeCtx *ctx, const Kernel *k, NodeId param, int64_t *out)
{
    NodeId e = param && param < k->nnodes ? node(k, param)->a : 0;
    return e && !names_param(k, e, 0) && ce_const_int(ctx, k, e, out);
}

/* ---- divisibility ------------------------------------------------------ */

int64_t ce_gcd(int64_t a, int64_t b)
{
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int64_t lcm_capped(int64_t a, int64_t b)
{
    int64_t g = ce_gcd(a, b), r;
    if (!g)
        return a ? a : b;
    if (__builtin_mul_overflow(a / g, b, &r) || r > ((int64_t)1 << 40))
        return a > b ? a : b;
    return r;
}

/* is e the name of declaration d? */
static int names(const Kernel *k, NodeId e, NodeId d)
{
    return e && node(k, e)->op == OP_NAME && node(k, e)->decl == d;
}

/* collects divisibility facts of declaration d from an assume expression */
static int64_t fact(const CakeCtx *ctx, const Kernel *k, NodeId e, NodeId d, int depth)
{
    if (!e || depth > MAX_DEPTH)
        return 1;
    const Node *n = node(k, e);
    int64_t c;
    if (n->op == OP_AND)
        return lcm_capped(fact(ctx, k, n->a, d, depth + 1), fact(ctx, k, n->b, d, depth + 1));
    if (n->op != OP_EQ)
        return 1;
    NodeId lhs = n->a, rhs = n->b;
    if (ce_const_int(ctx, k, lhs, &c)) { /* 0 == D % c */
        NodeId t = lhs;
        lhs = rhs;
        rhs = t;
    }
    if (!ce_const_int(ctx, k, rhs, &c))
        return 1;
    if (names(k, lhs, d)) /* D == c */
        return c ? (c < 0 ? -c : c) : 1;
    const Node *l = node(k, lhs);
    int64_t m;
    if (c == 0 && l->op == OP_MOD && names(k, l->a, d) && ce_const_int(ctx, k, l->b, &m) && m > 0)
        return m;
    return 1;
}

static int64_t divisor(const CakeCtx *ctx, const Kernel *k, NodeId e, int depth)
{
    int64_t c;
    if (!e || depth > MAX_DEPTH)
        return 1;
    if (ce_const_int(ctx, k, e, &c))
        return c < 0 ? -c : c;
    const Node *n = node(k, e);
    switch (n->op) {
    case OP_MUL: {
        int64_t a = divisor(ctx, k, n->a, depth + 1), b = divisor(ctx, k, n->b, depth + 1), r;
        if (!a || !b)
            return 0;
        if (__builtin_mul_overflow(a, b, &r) || r > ((int64_t)1 << 40))
            return a > b ? a : b;
        return r;
    }
    case OP_ADD: case OP_SUB: {
        int64_t a = divisor(ctx, k, n->a, depth + 1), b = divisor(ctx, k, n->b, depth + 1);
        return ce_gcd(a, b) ? ce_gcd(a, b) : 0;
    }
    case OP_SHL:
        if (ce_const_int(ctx, k, n->b, &c) && c >= 0 && c < 40) {
            int64_t a = divisor(ctx, k, n->a, depth + 1);
            return a ? lcm_capped(a << c, (int64_t)1 << c) : 0;
        }
        return 1;
    case OP_NAME: {
        if (!n->decl || n->decl >= k->nnodes)
            return 1;
        const Node *d = node(k, n->decl);
        if (d->op == OP_LET && d->b)
            return divisor(ctx, k, d->b, depth + 1);
        if (d->op != OP_DIM)
            return 1;
        int64_t f = 1;
        for (uint32_t i = 0; i < k->nassumes; i++)
            f = lcm_capped(f, fact(ctx, k, k->assumes[i], n->decl, depth + 1));
        return f;
    }
    default:
        return 1;
    }
}

int64_t ce_known_divisor(const CakeCtx *ctx, const Kernel *k, NodeId e)
{
    return divisor(ctx, k, e, 0);
}

int ce_is_multiple(const CakeCtx *ctx, const Kernel *k, NodeId e, int64_t m)
{
    int64_t d = ce_known_divisor(ctx, k, e);
    return m >= 1 && (d == 0 || d % m == 0);
}

int64_t ce_block_threads(const CakeCtx *ctx, const Kernel *k, Target t)
{
    int64_t v;
    if (!k->block_size || !ce_const_int(ctx, k, k->block_size, &v))
        return 0;
    return tg_block_threads(t, (Unit)k->block_unit, v);
}
