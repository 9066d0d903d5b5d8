/* consteval.c — constant evaluation of integer expressions and divisibility
 * facts from `assume`s (see consteval.h). */
#include "consteval.h"

#define MAX_DEPTH 64

static const Node *node(const Kernel *k, NodeId id) { return &k->nodes[id]; }

int ver_env_get(const VerEnv *env, Sym name, int64_t *out)
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

static int eval(const Kernel *k, NodeId e, const VerEnv *env, int depth, int64_t *out);

static int eval_name(const Kernel *k, const Node *n, const VerEnv *env, int depth, int64_t *out)
{
    if (!n->decl || n->decl >= k->nnodes)
        return 0;
    const Node *d = node(k, n->decl);
    switch (d->op) {
    case OP_PARAM:
        return ver_env_get(env, d->name, out) || (d->a && eval(k, d->a, env, depth + 1, out));
    case OP_DIM:
        return ver_env_get(env, d->name, out);
    case OP_LET: /* a let of a constant is a constant */
        return d->b && eval(k, d->b, env, depth + 1, out);
    default:
        return 0;
    }
}

static int arg2(const Kernel *k, const Node *n, const VerEnv *env, int depth, int64_t *x, int64_t *y)
{
    return n->n == 2 && eval(k, k->lists[n->list], env, depth + 1, x) &&
           eval(k, k->lists[n->list + 1], env, depth + 1, y);
}

static int eval(const Kernel *k, NodeId e, const VerEnv *env, int depth, int64_t *out)
{
    if (!e || e >= k->nnodes || depth > MAX_DEPTH)
        return 0;
    const Node *n = node(k, e);
    int64_t x = 0, y = 0, r = 0;
    switch (n->op) {
    case OP_INT: case OP_BOOL:
        *out = n->v.i;
        return 1;
    case OP_NAME:
        return eval_name(k, n, env, depth, out);
    case OP_NEG:
        if (!eval(k, n->a, env, depth + 1, &x) || x == INT64_MIN)
            return 0;
        *out = -x;
        return 1;
    case OP_NOT:
        if (!eval(k, n->a, env, depth + 1, &x))
            return 0;
        *out = !x;
        return 1;
    case OP_CDIV:
        if (!arg2(k, n, env, depth, &x, &y) || y == 0)
            return 0;
        if (y > 0 && x >= 0) {
            *out = x / y + (x % y != 0);
            return 1;
        }
        return 0;
    case OP_MAX: case OP_MIN:
        if (!arg2(k, n, env, depth, &x, &y))
            return 0;
        *out = (n->op == OP_MAX) == (x > y) ? x : y;
        return 1;
    case OP_SELECT:
        if (n->n != 3 || !eval(k, k->lists[n->list], env, depth + 1, &x))
            return 0;
        return eval(k, k->lists[n->list + (x ? 1 : 2)], env, depth + 1, out);
    default:
        break;
    }
    if (ir_ops[n->op].cls != OC_BIN)
        return 0;
    if (!eval(k, n->a, env, depth + 1, &x) || !eval(k, n->b, env, depth + 1, &y))
        return 0;
    switch (n->op) {
    case OP_ADD: if (__builtin_add_overflow(x, y, &r)) return 0; break;
    case OP_SUB: if (__builtin_sub_overflow(x, y, &r)) return 0; break;
    case OP_MUL: if (__builtin_mul_overflow(x, y, &r)) return 0; break;
    case OP_DIV: if (y == 0 || (x == INT64_MIN && y == -1)) return 0; r = x / y; break;
    case OP_MOD: if (y == 0 || (x == INT64_MIN && y == -1)) return 0; r = x % y; break;
    case OP_POW:
        if (y < 0 || y > 62)
            return 0;
        r = 1;
        for (int64_t i = 0; i < y; i++)
            if (__builtin_mul_overflow(r, x, &r))
                return 0;
        break;
    case OP_SHL: if (y < 0 || y > 62 || x < 0 || x > (INT64_MAX >> y)) return 0; r = x << y; break;
    case OP_SHR: if (y < 0 || y > 63) return 0; r = x >> y; break;
    case OP_BAND: r = x & y; break;
    case OP_BOR: r = x | y; break;
    case OP_BXOR: r = x ^ y; break;
    case OP_LT: r = x < y; break;
    case OP_LE: r = x <= y; break;
    case OP_GT: r = x > y; break;
    case OP_GE: r = x >= y; break;
    case OP_EQ: r = x == y; break;
    case OP_NE: r = x != y; break;
    case OP_AND: r = x && y; break;
    case OP_OR: r = x || y; break;
    default: return 0;
    }
    *out = r;
    return 1;
}

int ver_eval_int(const CakeCtx *ctx, const Kernel *k, NodeId e, const VerEnv *env, int64_t *out)
{
    (void)ctx;
    int64_t v;
    if (!eval(k, e, env, 0, &v))
        return 0;
    *out = v;
    return 1;
}

int ver_const_int(const CakeCtx *ctx, const Kernel *k, NodeId e, int64_t *out)
{
    return ver_eval_int(ctx, k, e, NULL, out);
}

/* ---- divisibility ------------------------------------------------------ */

int64_t ver_gcd(int64_t a, int64_t b)
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
    int64_t g = ver_gcd(a, b), r;
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
    if (ver_const_int(ctx, k, lhs, &c)) { /* 0 == D % c */
        NodeId t = lhs;
        lhs = rhs;
        rhs = t;
    }
    if (!ver_const_int(ctx, k, rhs, &c))
        return 1;
    if (names(k, lhs, d)) /* D == c */
        return c ? (c < 0 ? -c : c) : 1;
    const Node *l = node(k, lhs);
    int64_t m;
    if (c == 0 && l->op == OP_MOD && names(k, l->a, d) && ver_const_int(ctx, k, l->b, &m) && m > 0)
        return m;
    return 1;
}

static int64_t divisor(const CakeCtx *ctx, const Kernel *k, NodeId e, int depth)
{
    int64_t c;
    if (!e || depth > MAX_DEPTH)
        return 1;
    if (ver_const_int(ctx, k, e, &c))
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
        return ver_gcd(a, b) ? ver_gcd(a, b) : 0;
    }
    case OP_SHL:
        if (ver_const_int(ctx, k, n->b, &c) && c >= 0 && c < 40) {
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

int64_t ver_known_divisor(const CakeCtx *ctx, const Kernel *k, NodeId e)
{
    return divisor(ctx, k, e, 0);
}

int ver_is_multiple(const CakeCtx *ctx, const Kernel *k, NodeId e, int64_t m)
{
    int64_t d = ver_known_divisor(ctx, k, e);
    return m >= 1 && (d == 0 || d % m == 0);
}

int64_t ver_block_threads(const CakeCtx *ctx, const Kernel *k, int ws)
{
    int64_t v;
    if (!k->block_size || !ver_const_int(ctx, k, k->block_size, &v) || v <= 0)
        return 0;
    int64_t per = k->block_unit == UNIT_WARPS ? ws : k->block_unit == UNIT_WARPGROUPS ? 4 * ws : 1;
    int64_t th;
    if (__builtin_mul_overflow(v, per, &th))
        return INT64_MAX / 2; /* far over every limit; halved so that rounding up cannot overflow */
    return th;
}
