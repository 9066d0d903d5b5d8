/* cg_types.c — the one place code generation decides the type of an
 * expression. It uses the verifier's Node.type when present (scalar and
 * vector types) and otherwise infers locally with these rules:
 *   literals and params are "weak": 2 * x has x's type; 0.5 * n (n: i32) is f32
 *   int op float → the float; f16/bf16 op f32 → f32; f16 op bf16 → f32
 *   i32 op i64 → i64; i32 op u32 → u32; bool op int → the int
 *   a scalar op a vector → the vector (the scalar is broadcast)
 *   comparisons → bool (lanes of the operands); dot → f32 (f64 if an operand is)
 *   hsum/hmax of f16/bf16 lanes → f32, else the element type
 *   math builtins of an integer → f32; loads → the element dtype, lanes = the
 *   slice extent, or the `as` type. */
#include "cg_int.h"

CgTy cg_scalar(DType d)
{
    return (CgTy){(uint8_t)d, 1, 0};
}

int cg_is_float(CgTy t)
{
    return ir_dtypes[t.dt].kind == 'f';
}

int cg_is_signed(CgTy t)
{
    return ir_dtypes[t.dt].kind == 'i';
}

int cg_is_int(CgTy t)
{
    char c = ir_dtypes[t.dt].kind;
    return c == 'i' || c == 'u' || c == 'b';
}

static int frank(uint8_t dt)
{
    switch (dt) {
    case DT_F64: return 4;
    case DT_F32: case DT_TF32: return 3;
    case DT_F16: case DT_BF16: return 2;
    default: return 1;
    }
}

CgTy cg_unify(CgTy a, CgTy b)
{
    uint8_t lanes = a.lanes > b.lanes ? a.lanes : b.lanes;
    CgTy r;
    if (a.weak && b.weak) {
        r = (CgTy){(cg_is_float(a) || cg_is_float(b)) ? DT_F32 : DT_I32, lanes, 1};
        if (a.dt == b.dt)
            r.dt = a.dt;
        return r;
    }
    if (a.weak || b.weak) {
        CgTy w = a.weak ? a : b, s = a.weak ? b : a;
        r = s;
        if (cg_is_float(w) && !cg_is_float(s))
            r.dt = DT_F32;
        r.lanes = lanes;
        r.weak = 0;
        return r;
    }
    r = a;
    r.lanes = lanes;
    if (a.dt == b.dt)
        return r;
    int fa = cg_is_float(a), fb = cg_is_float(b);
    if (fa && fb) {
        int ra = frank(a.dt), rb = frank(b.dt);
        r.dt = ra > rb ? a.dt : rb > ra ? b.dt : DT_F32;
    } else if (fa || fb) {
        r.dt = fa ? a.dt : b.dt;
    } else if (a.dt == DT_BOOL || b.dt == DT_BOOL) {
        r.dt = a.dt == DT_BOOL ? b.dt : a.dt;
    } else {
        int ba = ir_dtypes[a.dt].bits, bb = ir_dtypes[b.dt].bits;
        if (ba != bb)
            r.dt = ba > bb ? a.dt : b.dt;
        else
            r.dt = ir_dtypes[a.dt].kind == 'u' ? a.dt : b.dt;
    }
    return r;
}

static CgTy type_node_ty(const Node *t)
{
    return (CgTy){t->dtype, t->lanes ? t->lanes : 1, 0};
}

CgTy cg_decl_ty(Cg *cg, NodeId decl)
{
    Kernel *k = cg->k;
    Node *d = ir_get(k, decl);
    switch ((Op)d->op) {
    case OP_PARAM: return (CgTy){DT_I32, 1, 1};
    case OP_DIM: case OP_FOR: return cg_scalar(DT_I32);
    case OP_ARG: case OP_SHARED: return d->a ? type_node_ty(ir_get(k, d->a)) : cg_scalar(DT_I32);
    case OP_VAR: case OP_REG: return d->a ? type_node_ty(ir_get(k, d->a)) : cg_ty(cg, d->b);
    case OP_LET: {
        if (d->a)
            return type_node_ty(ir_get(k, d->a));
        CgTy t = cg_ty(cg, d->b);
        t.weak = 0;
        return t;
    }
    default: return cg_scalar(DT_I32);
    }
}

/* the extent of the last index of x[.., i : +E] (1 when it is not a slice) */
static uint8_t ref_lanes(Cg *cg, NodeId ref)
{
    Node *r = ir_get(cg->k, ref);
    if (r->op != OP_INDEX || !r->n)
        return 1;
    Node *last = ir_get(cg->k, ir_list_at(cg->k, r, r->n - 1));
    int64_t e = 1;
    if (last->op == OP_SLICE && (!cg_const_int(cg, last->b, &e) || e < 1 || e > 64))
        e = 1;
    return (uint8_t)e;
}

int cg_is_lane_ref(Cg *cg, NodeId ref)
{
    Node *r = ir_get(cg->k, ref);
    if (r->op != OP_INDEX || r->n != 1)
        return 0;
    Node *b = ir_get(cg->k, r->a);
    if (b->op != OP_NAME || !b->decl)
        return 1; /* an expression value: (v * 2)[0] */
    Node *d = ir_get(cg->k, b->decl);
    if (d->op == OP_LET)
        return 1;
    if ((d->op == OP_VAR || d->op == OP_REG) && !(d->a && ir_get(cg->k, d->a)->n))
        return 1;
    return d->op == OP_ARG && d->a && ir_get(cg->k, d->a)->op != OP_GTYPE;
}

static CgTy ref_elem(Cg *cg, NodeId ref)
{
    Node *r = ir_get(cg->k, ref);
    NodeId base = r->op == OP_INDEX ? r->a : ref;
    Node *b = ir_get(cg->k, base);
    if (cg_is_lane_ref(cg, ref)) {
        CgTy t = cg_ty(cg, base);
        t.lanes = 1;
        t.weak = 0;
        return t;
    }
    CgTy t = b->op == OP_NAME && b->decl ? cg_decl_ty(cg, b->decl) : cg_scalar(DT_F32);
    if (t.lanes <= 1) /* an array of vectors (reg xs: f32x4[4]) keeps its lanes */
        t.lanes = ref_lanes(cg, ref);
    t.weak = 0;
    return t;
}

static CgTy arg_ty(Cg *cg, const Node *n, uint32_t i)
{
    return i < n->n ? cg_ty(cg, ir_list_at(cg->k, n, i)) : cg_scalar(DT_F32);
}

static CgTy infer(Cg *cg, NodeId e)
{
    Kernel *k = cg->k;
    Node *n = ir_get(k, e);
    switch ((Op)n->op) {
    case OP_INT: return (CgTy){DT_I32, 1, 1};
    case OP_FLOAT: return (CgTy){DT_F32, 1, 1};
    case OP_BOOL: return cg_scalar(DT_BOOL);
    case OP_NAME: return n->decl ? cg_decl_ty(cg, n->decl) : cg_scalar(DT_I32);
    case OP_SPECIAL: return cg_scalar(DT_I32);
    case OP_CAST: return (CgTy){n->dtype, n->lanes ? n->lanes : 1, 0};
    case OP_NEG: return cg_ty(cg, n->a);
    case OP_NOT: {
        CgTy t = cg_ty(cg, n->a);
        return t.dt == DT_BOOL || !cg_is_int(t) ? (CgTy){DT_BOOL, t.lanes, 0} : t;
    }
    case OP_SELECT: return cg_unify(arg_ty(cg, n, 1), arg_ty(cg, n, 2));
    case OP_LOAD: {
        CgTy t = ref_elem(cg, n->a);
        if (n->dtype != DT_NONE) {
            t.dt = n->dtype;
            if (n->lanes > 1)
                t.lanes = n->lanes;
        }
        return t;
    }
    case OP_INDEX: return ref_elem(cg, e);
    case OP_EXP: case OP_EXP2: case OP_LOG: case OP_LOG2: case OP_SQRT: case OP_RSQRT:
    case OP_RCP: case OP_TANH: case OP_SIN: case OP_COS: {
        CgTy t = arg_ty(cg, n, 0);
        if (!cg_is_float(t))
            t.dt = DT_F32;
        t.weak = 0;
        return t;
    }
    case OP_ABS: return arg_ty(cg, n, 0);
    case OP_MAX: case OP_MIN: case OP_CDIV: return cg_unify(arg_ty(cg, n, 0), arg_ty(cg, n, 1));
    case OP_FMA: return cg_unify(cg_unify(arg_ty(cg, n, 0), arg_ty(cg, n, 1)), arg_ty(cg, n, 2));
    case OP_DOT: {
        CgTy a = arg_ty(cg, n, 0), b = arg_ty(cg, n, 1);
        return cg_scalar(a.dt == DT_F64 || b.dt == DT_F64 ? DT_F64 : DT_F32);
    }
    case OP_HSUM: case OP_HMAX: {
        CgTy t = arg_ty(cg, n, 0);
        t.lanes = 1;
        t.weak = 0;
        if (t.dt == DT_F16 || t.dt == DT_BF16)
            t.dt = DT_F32;
        return t;
    }
    case OP_SHFL_XOR: case OP_SHFL_DOWN: case OP_SHFL_UP: case OP_SHFL_IDX:
    case OP_WARP_ADD: case OP_WARP_MAX: case OP_WARP_MIN:
    case OP_BLOCK_ADD: case OP_BLOCK_MAX: case OP_BLOCK_MIN: {
        CgTy t = arg_ty(cg, n, 0);
        t.weak = 0;
        return t;
    }
    default: break;
    }
    if (ir_ops[n->op].cls == OC_BIN) {
        CgTy t = cg_unify(cg_ty(cg, n->a), cg_ty(cg, n->b));
        if (ir_ops[n->op].flags & (OF_CMP | OF_LOGIC))
            return (CgTy){DT_BOOL, t.lanes, 0};
        if (n->op == OP_SHL || n->op == OP_SHR) {
            CgTy l = cg_ty(cg, n->a);
            if (!l.weak)
                return l;
        }
        return t;
    }
    return cg_scalar(DT_I32);
}

CgTy cg_ty(Cg *cg, NodeId e)
{
    if (!e)
        return cg_scalar(DT_I32);
    if (cg->tys[e].lanes)
        return cg->tys[e];
    Node *n = ir_get(cg->k, e);
    CgTy t;
    /* the verifier's type wins, except for literals (they stay weak) */
    if (n->type && n->type < cg->k->ntypes && n->op != OP_INT && n->op != OP_FLOAT &&
        (cg->k->types[n->type].kind == TK_SCALAR || cg->k->types[n->type].kind == TK_VECTOR)) {
        const Type *vt = &cg->k->types[n->type];
        t = (CgTy){vt->dtype, vt->lanes ? vt->lanes : 1, 0};
        if (n->op == OP_NAME && n->decl && ir_get(cg->k, n->decl)->op == OP_PARAM)
            t.weak = 1;
    } else {
        t = infer(cg, e);
    }
    if (!t.lanes)
        t.lanes = 1;
    cg->tys[e] = t;
    return t;
}
