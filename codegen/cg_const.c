/* cg_const.c — compile-time integer evaluation for code generation: params
 * (their defaults), literals, and dims when their values are given (launch
 * dims). To be replaced by the verifier's ver_const_int once it exists. */
#include "cg_int.h"

static int dim_index(const Kernel *k, NodeId decl)
{
    for (uint32_t i = 0; i < k->ndims; i++)
        if (k->dims[i] == decl)
            return (int)i;
    return -1;
}

static int eval(const Kernel *k, NodeId e, const int64_t *dv, int64_t *out, int depth)
{
    if (!e || depth > 64)
        return 0;
    const Node *n = &k->nodes[e];
    int64_t a = 0, b = 0;
    switch ((Op)n->op) {
    case OP_INT:
    case OP_BOOL:
        *out = n->v.i;
        return 1;
    case OP_NAME: {
        if (!n->decl)
            return 0;
        const Node *d = &k->nodes[n->decl];
        if (d->op == OP_PARAM)
            return eval(k, d->a, dv, out, depth + 1);
        if (d->op == OP_DIM && dv) {
            int i = dim_index(k, n->decl);
            if (i < 0)
                return 0;
            *out = dv[i];
            return 1;
        }
        return 0;
    }
    case OP_NEG:
        if (!eval(k, n->a, dv, &a, depth + 1))
            return 0;
        *out = -a;
        return 1;
    case OP_CDIV:
    case OP_MAX:
    case OP_MIN:
        if (n->n != 2 || !eval(k, k->lists[n->list], dv, &a, depth + 1) ||
            !eval(k, k->lists[n->list + 1], dv, &b, depth + 1))
            return 0;
        if (n->op == OP_CDIV) {
            if (b == 0)
                return 0;
            *out = (a + b - 1) / b;
        } else {
            *out = n->op == OP_MAX ? (a > b ? a : b) : (a < b ? a : b);
        }
        return 1;
    default:
        break;
    }
    if (ir_ops[n->op].cls != OC_BIN)
        return 0;
    if (!eval(k, n->a, dv, &a, depth + 1) || !eval(k, n->b, dv, &b, depth + 1))
        return 0;
    switch ((Op)n->op) {
    case OP_ADD: *out = a + b; return 1;
    case OP_SUB: *out = a - b; return 1;
    case OP_MUL: *out = a * b; return 1;
    case OP_DIV: if (!b) return 0; *out = a / b; return 1;
    case OP_MOD: if (!b) return 0; *out = a % b; return 1;
    case OP_SHL: if (b < 0 || b > 62) return 0; *out = a << b; return 1;
    case OP_SHR: if (b < 0 || b > 62) return 0; *out = a >> b; return 1;
    case OP_BAND: *out = a & b; return 1;
    case OP_BOR: *out = a | b; return 1;
    case OP_BXOR: *out = a ^ b; return 1;
    case OP_LT: *out = a < b; return 1;
    case OP_LE: *out = a <= b; return 1;
    case OP_GT: *out = a > b; return 1;
    case OP_GE: *out = a >= b; return 1;
    case OP_EQ: *out = a == b; return 1;
    case OP_NE: *out = a != b; return 1;
    case OP_AND: *out = a && b; return 1;
    case OP_OR: *out = a || b; return 1;
    default: return 0;
    }
}

int cg_eval_int(const Kernel *k, NodeId e, const int64_t *dim_values, int64_t *out)
{
    return eval(k, e, dim_values, out, 0);
}

uint32_t cg_threads_of(const Kernel *k, Target tg, int *ok)
{
    int64_t v = 0;
    *ok = 0;
    if (!k->block_size || !cg_eval_int(k, k->block_size, NULL, &v))
        return 0;
    uint32_t warp = ir_target_names[tg][0] == 'g' ? 64 : 32;
    if (k->block_unit == UNIT_WARPS)
        v *= warp;
    else if (k->block_unit == UNIT_WARPGROUPS)
        v *= 128;
    if (v <= 0 || v > 1024)
        return 0;
    *ok = 1;
    return (uint32_t)v;
}
