/* types.c — the type and shape check: fills Node.type for every expression and
 * declaration of a kernel and reports E03xx (dtype agreement, vector lanes,
 * tile shapes, indexing, slices, loads and stores, reductions, tensor-core
 * operand shapes/dtypes/layouts, pipeline member placement).
 *
 * Untyped constants (literals, params, dims) carry an internal "untyped" type
 * while their expression is checked and take the type their context gives them
 * (adapt); whatever is left untyped settles to i32 / f32. Once a node has an
 * error or an unknown type, nothing derived from it is reported again. */
#include <string.h>
#include "vpriv.h"

static TypeId expr(Ver *v, NodeId e);
static void block(Ver *v, NodeId b);

static Node *N(Ver *v, NodeId n) { return &v->k->nodes[n]; }
static TypeId set(Ver *v, NodeId n, TypeId t) { N(v, n)->type = t; return t; }
static const Type *T(Ver *v, NodeId n) { return vt(v, vt_of(v, n)); }
static int known(Ver *v, NodeId n) { return n && vt_of(v, n) && !v_err(v, n); }
static NodeId arg(Ver *v, NodeId call, uint32_t i) { return ir_list_at(v->k, N(v, call), i); }

static Type blank(uint8_t kind)
{
    Type t;
    memset(&t, 0, sizeof t);
    t.kind = kind;
    t.lanes = 1;
    return t;
}

/* ---- dtypes ---------------------------------------------------------- */

static int float_rank(DType d)
{
    switch (d) {
    case DT_E4M3: case DT_E5M2: return 1;
    case DT_F16: case DT_BF16: return 2;
    case DT_TF32: case DT_F32: return 3;
    case DT_F64: return 4;
    default: return 0;
    }
}

/* does `from` widen losslessly to `to` (tir.md 3.5)? iN -> iM, uN -> uM and
 * uN -> iM for M > N; f16/bf16 -> f32 -> f64 */
static int widens(DType from, DType to)
{
    if (from == to)
        return 1;
    char kf = ir_dtypes[from].kind, kt = ir_dtypes[to].kind;
    int bf = ir_dtypes[from].bits, bt = ir_dtypes[to].bits;
    if ((kf == 'i' || kf == 'u') && (kt == 'i' || kt == 'u'))
        return bt > bf && (kf == kt || (kf == 'u' && kt == 'i'));
    if (kf == 'f' && kt == 'f')
        return (from == DT_F16 || from == DT_BF16 || from == DT_F32) && (to == DT_F32 || to == DT_F64) &&
               float_rank(to) > float_rank(from);
    return 0;
}

/* the common dtype of a and b under implicit widening; DT_NONE if none */
static DType widen(DType a, DType b)
{
    return widens(a, b) ? b : widens(b, a) ? a : DT_NONE;
}

/* tf32, e4m3 and e5m2 have no arithmetic of their own */
static int storage_only(DType d) { return d == DT_TF32 || d == DT_E4M3 || d == DT_E5M2; }

/* does an untyped-int expression keep its value when computed in a float type? */
static int exact_in_float(Ver *v, NodeId e)
{
    const Node *n = N(v, e);
    switch (n->op) {
    case OP_INT: case OP_NAME: return 1;
    case OP_ADD: case OP_SUB: case OP_MUL: return exact_in_float(v, n->a) && exact_in_float(v, n->b);
    case OP_NEG: return exact_in_float(v, n->a);
    case OP_MAX: case OP_MIN:
        return exact_in_float(v, arg(v, e, 0)) && exact_in_float(v, arg(v, e, 1));
    default: return 0;
    }
}

/* gives every untyped node of e's expression the scalar dtype dt */
static void settle(Ver *v, NodeId e, DType dt)
{
    if (!e || !vt_is_untyped(T(v, e)))
        return;
    Node *n = N(v, e);
    set(v, e, vt_scalar(v, dt));
    settle(v, n->a, dt);
    settle(v, n->b, dt);
    settle(v, n->c, dt);
    for (uint32_t i = 0; i < n->n; i++)
        settle(v, arg(v, e, i), dt);
}

static DType default_dt(const Type *t)
{
    return t->layout == VT_UNTYPED_FLOAT ? DT_F32 : DT_I32;
}


/* can the constant c be represented exactly in dt? */
static int fits(int64_t c, DType dt)
{
    int bits = ir_dtypes[dt].bits;
    switch (ir_dtypes[dt].kind) {
    case 'i': return bits >= 64 || (c >= -((int64_t)1 << (bits - 1)) && c < ((int64_t)1 << (bits - 1)));
    case 'u': return c >= 0 && (bits >= 64 || c < ((int64_t)1 << bits));
    case 'f': {
        int mant = dt == DT_F64 ? 53 : dt == DT_F32 || dt == DT_TF32 ? 24 : dt == DT_F16 ? 11
                 : dt == DT_BF16 ? 8 : dt == DT_E4M3 ? 4 : 3;
        int64_t a = c < 0 ? -c : c;
        while (a && (a & 1) == 0)
            a >>= 1;
        return a < ((int64_t)1 << mant);
    }
    default: return 0;
    }
}

/* the type an untyped constant takes alone: f32, or i32 when it fits, else i64 */
static DType default_for(Ver *v, NodeId e)
{
    const Type *t = T(v, e);
    int64_t c;
    if (t->layout == VT_UNTYPED_FLOAT)
        return DT_F32;
    return v_const(v, e, &c) && !fits(c, DT_I32) ? DT_I64 : DT_I32;
}

/* makes untyped e take dtype dt; reports when it cannot. Returns 0 on error. */
static int adapt(Ver *v, NodeId e, DType dt)
{
    const Type *t = T(v, e);
    if (!vt_is_untyped(t))
        return 1;
    if (t->layout == VT_UNTYPED_FLOAT && !vt_is_float_dt(dt)) {
        Diag *d = v_report(v, E0302, e, "float constant `%s` used as %s", v_text(v, e),
                           ir_dtypes[dt].spelling);
        diag_help(v->ctx, d, "write an integer, or convert the other side with f32(...)");
        return 0;
    }
    if (dt == DT_BOOL) {
        Diag *d = v_report(v, E0302, e, "number `%s` used as bool", v_text(v, e));
        diag_help(v->ctx, d, "compare it: `%s != 0`", v_text(v, e));
        return 0;
    }
    int64_t c;
    if (t->layout == VT_UNTYPED_INT && v_const(v, e, &c) && !fits(c, dt)) {
        Diag *d = v_report(v, E0302, e, "constant `%s` = %lld does not fit %s exactly",
                           v_text(v, e), (long long)c, ir_dtypes[dt].spelling);
        diag_help(v->ctx, d, "use a wider type, or convert explicitly: `%s(%s)`",
                  ir_dtypes[dt].spelling, v_text(v, e));
        return 0;
    }
    if (t->layout == VT_UNTYPED_INT && vt_is_float_dt(dt) && !exact_in_float(v, e)) {
        /* integer division or bit operations: computed as an integer constant,
         * then converted (the code generator folds it: ver_const_int) */
        settle(v, e, DT_I64);
        set(v, e, vt_scalar(v, dt));
        return 1;
    }
    settle(v, e, dt);
    return 1;
}

/* integer operand (index, bound, count): settles untyped to i32 */
static int want_int(Ver *v, NodeId e, const char *what)
{
    if (!known(v, e))
        return 0;
    const Type *t = T(v, e);
    if (vt_is_int(t)) {
        if (vt_is_untyped(t))
            settle(v, e, default_for(v, e));
        return 1;
    }
    Diag *d = v_report(v, E0308, e, "%s must be an integer, found %s", what, vt_str(v, vt_of(v, e)));
    if (t->kind == TK_SCALAR && vt_is_float_dt(t->dtype))
        diag_help(v->ctx, d, "convert it: `i32(%s)`", v_text(v, e));
    return 0;
}

static int want_bool(Ver *v, NodeId e, const char *what, int lanes)
{
    if (!known(v, e))
        return 0;
    const Type *t = T(v, e);
    if (t->dtype == DT_BOOL && (t->kind == TK_SCALAR || (t->kind == TK_VECTOR && t->lanes == lanes)))
        return 1;
    Diag *d = v_report(v, E0307, e, "%s must be bool, found %s", what, vt_str(v, vt_of(v, e)));
    if (vt_is_int(t))
        diag_help(v->ctx, d, "compare it: `%s != 0`", v_text(v, e));
    return 0;
}

/* ---- shapes ---------------------------------------------------------- */

static int same_shape(Ver *v, const Type *a, const Type *b)
{
    if (a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (!vt_same_extent(v, a, i, b, i))
            return 0;
    return 1;
}

/* logical extent i of a (possibly transposed) 2-D view */
static int lx(const Type *t, int i) { return t->transposed && t->rank == 2 ? 1 - i : i; }

static int64_t ext(const Type *t, int i) { return t->shape[lx(t, i)]; }

static const char *ext_str(Ver *v, const Type *t, int i)
{
    int j = lx(t, i);
    if (t->shape[j] >= 0)
        return ir_fmt(v->ctx, "%lld", (long long)t->shape[j]);
    return t->dims[j] ? v_text(v, t->dims[j]) : "?";
}

/* a value (not a memory view) of a tile/vector/scalar type */
static int value_ok(Ver *v, NodeId e)
{
    const Type *t = T(v, e);
    if (t->kind == TK_TILE && t->space == SP_REG)
        return 1;
    if ((t->kind == TK_SCALAR || t->kind == TK_VECTOR) && t->space == SP_GLOBAL && !v->in_ref[e]) {
        Diag *d = v_report(v, E0323, e, "`%s` names a global memory location, not a value",
                           v_text(v, e));
        diag_help(v->ctx, d, "read it with `load %s`", v_text(v, e));
        diag_fixit(v->ctx, d, v_span(v, e), ir_fmt(v->ctx, "load %s", v_text(v, e)));
        return 0;
    }
    if (t->kind == TK_SCALAR || t->kind == TK_VECTOR || t->kind == TK_STAGE)
        return 1;
    if (t->kind == TK_TILE || t->kind == TK_TENSOR) {
        Diag *d = v_report(v, E0323, e, "`%s` is a %s view, not a value", v_text(v, e),
                           t->space == SP_GLOBAL ? "global" : "shared-memory");
        diag_help(v->ctx, d, "read it into registers with `load %s`", v_text(v, e));
        return 0;
    }
    Diag *d = v_report(v, E0306, e, "`%s` (%s) is not a number", v_text(v, e), vt_str(v, vt_of(v, e)));
    (void)d;
    return 0;
}

/* the shape part of an elementwise result from operands a and b (dtype filled later) */
static int merge_shape(Ver *v, NodeId e, NodeId a, NodeId b, Type *out)
{
    const Type *ta = T(v, a), *tb = T(v, b);
    if (ta->kind == TK_STAGE || ta->kind == TK_SCALAR) {
        if (tb->kind == TK_STAGE || tb->kind == TK_SCALAR) {
            *out = blank(TK_SCALAR);
            return 1;
        }
        *out = *tb;
        return 1;
    }
    if (tb->kind == TK_STAGE || tb->kind == TK_SCALAR) {
        *out = *ta;
        return 1;
    }
    if (ta->kind == TK_VECTOR && tb->kind == TK_VECTOR) {
        if (ta->lanes == tb->lanes) {
            *out = *ta;
            return 1;
        }
        Diag *d = v_report(v, E0304, e, "vector lanes differ: %s and %s", vt_str(v, vt_of(v, a)),
                           vt_str(v, vt_of(v, b)));
        diag_note(v->ctx, d, v_span(v, a), "%u lanes", ta->lanes);
        diag_note(v->ctx, d, v_span(v, b), "%u lanes", tb->lanes);
        return 0;
    }
    if (ta->kind == TK_TILE && tb->kind == TK_TILE && ta->lanes == tb->lanes) {
        if (ta->layout && tb->layout && ta->layout != tb->layout) {
            Diag *d = v_report(v, E0305, e, "layouts differ: %s and %s", vt_str(v, vt_of(v, a)),
                               vt_str(v, vt_of(v, b)));
            diag_note(v->ctx, d, v_span(v, a), "this is %s", vt_str(v, vt_of(v, a)));
            diag_note(v->ctx, d, v_span(v, b), "this is %s", vt_str(v, vt_of(v, b)));
            diag_help(v->ctx, d, "element-wise operations combine tiles of one layout; change "
                                 "layouts through shared memory (store, a barrier, load)");
            return 0;
        }
        const Type *big = ta->rank >= tb->rank ? ta : tb, *small = big == ta ? tb : ta;
        *out = *big;
        if (!out->layout)
            out->layout = small->layout, out->scope = small->scope;
        if (same_shape(v, ta, tb))
            return 1;
        /* row broadcast T[R, C] op V[R]; column broadcast T[R, C] op W[1, C] */
        if (big->rank == 2 && small->rank == 1 && vt_same_extent(v, big, 0, small, 0))
            return 1;
        if (big->rank == 2 && small->rank == 2 && small->shape[0] == 1 &&
            vt_same_extent(v, big, 1, small, 1))
            return 1;
    }
    Diag *d = v_report(v, E0305, e, "shapes differ: %s and %s", vt_str(v, vt_of(v, a)),
                       vt_str(v, vt_of(v, b)));
    diag_note(v->ctx, d, v_span(v, a), "this is %s", vt_str(v, vt_of(v, a)));
    diag_note(v->ctx, d, v_span(v, b), "this is %s", vt_str(v, vt_of(v, b)));
    diag_help(v->ctx, d, "elementwise operations need equal shapes, a scalar, or a row vector "
                         "T[R] with a tile T[R, C] (one value per row)");
    return 0;
}

/* the common dtype of operands a and b of e; adapts untyped ones */
static int unify(Ver *v, NodeId e, NodeId a, NodeId b, DType *out, int *untyped)
{
    const Type *ta = T(v, a), *tb = T(v, b);
    int ua = vt_is_untyped(ta), ub = vt_is_untyped(tb);
    *untyped = 0;
    if (ua && ub) {
        *untyped = ta->layout == VT_UNTYPED_FLOAT || tb->layout == VT_UNTYPED_FLOAT ? 'f' : 'i';
        *out = DT_NONE;
        return 1;
    }
    DType da = ta->kind == TK_STAGE ? DT_I32 : (DType)ta->dtype;
    DType db = tb->kind == TK_STAGE ? DT_I32 : (DType)tb->dtype;
    if (ua) {
        *out = db;
        return adapt(v, a, db);
    }
    if (ub) {
        *out = da;
        return adapt(v, b, da);
    }
    DType w = widen(da, db);
    if (w != DT_NONE) {
        *out = w;
        return 1;
    }
    /* reference code: integers convert to float where a float is expected (11.1) */
    if (v->in_ref[e] && da != DT_BOOL && db != DT_BOOL && vt_is_float_dt(da) != vt_is_float_dt(db)) {
        *out = vt_is_float_dt(da) ? da : db;
        return 1;
    }
    Diag *d = v_report(v, E0302, e, "operands have different types: %s and %s",
                       ir_dtypes[da].spelling, ir_dtypes[db].spelling);
    diag_note(v->ctx, d, v_span(v, a), "this is %s", vt_str(v, vt_of(v, a)));
    diag_note(v->ctx, d, v_span(v, b), "this is %s", vt_str(v, vt_of(v, b)));
    if (da != DT_BOOL && db != DT_BOOL) {
        DType to = vt_is_float_dt(da) ? da : db;
        NodeId other = to == da ? b : a;
        diag_help(v->ctx, d, "there is no implicit conversion between %s and %s; convert one "
                  "side, e.g. `%s(%s)`", ir_dtypes[da].spelling, ir_dtypes[db].spelling,
                  ir_dtypes[to].spelling, v_text(v, other));
    }
    return 0;
}

static TypeId untyped_id(Ver *v, int kind) { return kind == 'f' ? v->t_ufloat : v->t_uint; }

static TypeId with_dtype(Ver *v, Type t, DType dt)
{
    t.dtype = (uint8_t)dt;
    if (t.kind == TK_TILE || t.kind == TK_TENSOR)
        t.space = SP_REG;
    if (t.kind == TK_SCALAR)
        t.space = SP_NONE;
    t.transposed = 0;
    t.swizzle = 0;
    t.align = 0;
    return vt_intern(v, &t);
}

/* binary operators */
static TypeId binary(Ver *v, NodeId e)
{
    Node *n = N(v, e);
    TypeId ta = expr(v, n->a), tb = expr(v, n->b);
    if (!ta || !tb || v_err(v, n->a) || v_err(v, n->b))
        return 0;
    if (!value_ok(v, n->a) || !value_ok(v, n->b))
        return 0;
    uint16_t fl = ir_ops[n->op].flags;
    for (int i = 0; i < 2; i++) {
        NodeId x = i ? n->b : n->a;
        if (T(v, x)->kind == TK_STAGE) {
            Diag *d = v_report(v, E0306, x, "`%s` is a pipeline stage token: no arithmetic on "
                               "tokens", v_text(v, x));
            diag_help(v->ctx, d, "use the token only to index stage tiles and in pipeline calls; "
                                 "keep a separate counter for arithmetic");
            return 0;
        }
        if (storage_only((DType)T(v, x)->dtype) && !v->in_ref[e]) {
            Diag *d = v_report(v, E0306, x, "%s has no arithmetic: convert it first, e.g. `f32(%s)`",
                               ir_dtypes[T(v, x)->dtype].spelling, v_text(v, x));
            (void)d;
            return 0;
        }
    }
    if (n->op == OP_POW) { /* x ^ e: in kernel code a small constant integer exponent */
        int64_t c;
        if (!v->in_ref[e] && (!v_const(v, n->b, &c) || c < 0 || c > 16)) {
            Diag *d = v_report(v, E0306, n->b, "in kernel code `^` takes a constant integer "
                               "exponent 0..16, found `%s`", v_text(v, n->b));
            diag_help(v->ctx, d, "write `exp2(%s * log2(x))` or multiply out", v_text(v, n->b));
            return 0;
        }
        const Type *tb0 = T(v, n->a);
        if (vt_is_untyped(T(v, n->b)))
            settle(v, n->b, v->in_ref[e] && !vt_is_int(T(v, n->b)) ? DT_F64 : DT_I32);
        if (vt_is_untyped(tb0))
            return vt_of(v, n->a);
        return with_dtype(v, *tb0, (DType)tb0->dtype);
    }
    Type shape;
    if (!merge_shape(v, e, n->a, n->b, &shape))
        return 0;
    DType dt;
    int untyped;
    if (!unify(v, e, n->a, n->b, &dt, &untyped))
        return 0;
    if (untyped) { /* both untyped */
        if (fl & OF_CMP)
            return v->t_bool;
        if ((fl & (OF_INTONLY | OF_LOGIC)) && untyped == 'f') {
            v_report(v, E0306, e, "`%s` needs integers, found a float constant", ir_ops[n->op].spelling);
            return 0;
        }
        if (fl & OF_LOGIC) {
            v_report(v, E0306, e, "`%s` needs bool operands", ir_ops[n->op].spelling);
            return 0;
        }
        return untyped_id(v, untyped);
    }
    const char *sp = n->op == OP_BXOR ? "~" : ir_ops[n->op].spelling;
    if (fl & OF_LOGIC) {
        if (dt != DT_BOOL) {
            Diag *d = v_report(v, E0306, e, "`%s` needs bool operands, found %s", sp,
                               ir_dtypes[dt].spelling);
            diag_help(v->ctx, d, "compare the operands first, e.g. `x != 0`");
            return 0;
        }
    } else if (fl & OF_INTONLY) {
        if (!vt_is_int_dt(dt)) {
            Diag *d = v_report(v, E0306, e, "`%s` needs integer operands, found %s", sp,
                               ir_dtypes[dt].spelling);
            (void)d;
            return 0;
        }
    } else if (fl & (OF_ARITH | OF_CMP)) {
        if (dt == DT_BOOL && !(n->op == OP_EQ || n->op == OP_NE)) {
            v_report(v, E0306, e, "`%s` is not defined on bool", sp);
            return 0;
        }
        if (n->op == OP_MOD && vt_is_float_dt(dt)) {
            Diag *d = v_report(v, E0306, e, "`%%` is not defined on %s", ir_dtypes[dt].spelling);
            diag_help(v->ctx, d, "use integers, or `x - y * f32(i32(x / y))`");
            return 0;
        }
    }
    if (fl & OF_CMP)
        dt = DT_BOOL;
    return with_dtype(v, shape, dt);
}

static TypeId unary(Ver *v, NodeId e)
{
    Node *n = N(v, e);
    TypeId ta = expr(v, n->a);
    if (!ta || v_err(v, n->a) || !value_ok(v, n->a))
        return 0;
    const Type *t = vt(v, ta);
    if (vt_is_untyped(t)) {
        if (n->op == OP_NOT) {
            v_report(v, E0306, e, "`!` needs a bool operand, found %s", vt_str(v, ta));
            return 0;
        }
        return ta;
    }
    if (n->op == OP_NOT && t->dtype != DT_BOOL) {
        Diag *d = v_report(v, E0306, e, "`!` needs a bool operand, found %s", vt_str(v, ta));
        diag_help(v->ctx, d, "compare it: `%s == 0`", v_text(v, n->a));
        return 0;
    }
    if (n->op == OP_NEG && (t->dtype == DT_BOOL || ir_dtypes[t->dtype].kind == 'u')) {
        v_report(v, E0306, e, "unary `-` is not defined on %s", ir_dtypes[t->dtype].spelling);
        return 0;
    }
    return with_dtype(v, *t, (DType)t->dtype);
}

/* ---- references and indexing --------------------------------------- */

static int64_t const_or(Ver *v, NodeId e, int64_t dflt)
{
    int64_t x;
    return v_const(v, e, &x) ? x : dflt;
}

static TypeId index_expr(Ver *v, NodeId e)
{
    Node *n = N(v, e);
    TypeId tb = expr(v, n->a);
    if (!tb || v_err(v, n->a))
        return 0;
    Type b = *vt(v, tb);
    for (uint32_t i = 0; i < n->n; i++) { /* type the indices first */
        NodeId ix = arg(v, e, i);
        const Node *x = N(v, ix);
        if (x->op == OP_COLON)
            continue;
        if (x->op == OP_SLICE) {
            expr(v, x->a);
            expr(v, x->b);
            want_int(v, x->a, "a slice start");
            if (want_int(v, x->b, "a slice extent")) {
                int64_t c;
                if (!v_const(v, x->b, &c)) {
                    Diag *d = v_report(v, E0310, x->b, "slice extent `%s` is not a compile-time "
                                       "constant", v_text(v, x->b));
                    diag_help(v->ctx, d, "extents are integers or expressions of kernel "
                                         "parameters, e.g. `i : +VEC`");
                } else if (c < 1) {
                    v_report(v, E0310, x->b, "slice extent must be at least 1, found %lld",
                             (long long)c);
                }
            }
            continue;
        }
        expr(v, ix);
        want_int(v, ix, "an index");
    }
    if (b.kind == TK_MBARRIER && b.rank == 1) {
        if (n->n != 1) {
            v_report(v, E0309, e, "mbarrier array `%s` takes 1 index, found %u", v_text(v, n->a), n->n);
            return 0;
        }
        b.rank = 0;
        b.shape[0] = 0;
        b.dims[0] = 0;
        return vt_intern(v, &b);
    }
    if ((b.kind != TK_TILE && b.kind != TK_TENSOR) || b.rank == 0) {
        Diag *d = v_report(v, E0311, n->a, "`%s` (%s) cannot be indexed", v_text(v, n->a), vt_str(v, tb));
        v_note_decl(v, d, v_root_decl(v, n->a), NULL);
        return 0;
    }
    if (b.transposed) {
        Diag *d = v_report(v, E0311, e, "a transposed view `%s` cannot be indexed", v_text(v, n->a));
        diag_help(v->ctx, d, "index first, then transpose: `X[...]^T`");
        return 0;
    }
    if (n->n > b.rank) {
        Diag *d = v_report(v, E0309, e, "%u indices for `%s` of rank %u", n->n, v_text(v, n->a), b.rank);
        v_note_decl(v, d, v_root_decl(v, n->a), NULL);
        return 0;
    }
    Type r = b;
    int rank = 0;
    for (uint32_t i = 0; i < b.rank; i++) {
        NodeId ix = i < n->n ? arg(v, e, i) : 0;
        const Node *x = ix ? N(v, ix) : NULL;
        if (x && v_err(v, ix))
            return 0;
        if (x && x->op == OP_SLICE) {
            if (v_err(v, x->a) || v_err(v, x->b))
                return 0;
            int64_t c = const_or(v, x->b, -1);
            int64_t full = b.shape[i];
            if (c > 0 && full > 0 && c > full) {
                Diag *d = v_report(v, E0310, x->b, "slice of %lld elements of a dimension of %lld",
                                   (long long)c, (long long)full);
                v_note_decl(v, d, v_root_decl(v, n->a), NULL);
                return 0;
            }
            r.shape[rank] = c;
            r.dims[rank] = x->b;
            rank++;
        } else if (!x || x->op == OP_COLON) {
            r.shape[rank] = b.shape[i];
            r.dims[rank] = b.dims[i];
            rank++;
        } else if (i == 0 && T(v, ix)->kind == TK_STAGE) {
            /* As[s]: the stage count must match the indexed dimension */
            NodeId pipe = T(v, ix)->dims[0];
            const Type *pt = T(v, pipe);
            if (pt->shape[0] > 0 && b.shape[0] > 0 && pt->shape[0] != b.shape[0]) {
                Diag *d = v_report(v, E0322, ix, "stage of pipeline `%s` (%lld stages) indexes "
                                   "a dimension of %lld", v_name(v, pipe), (long long)pt->shape[0],
                                   (long long)b.shape[0]);
                v_note_decl(v, d, v_root_decl(v, n->a), NULL);
                diag_note(v->ctx, d, v_span(v, pipe), "`%s` declared here with %lld stages",
                          v_name(v, pipe), (long long)pt->shape[0]);
                diag_help(v->ctx, d, "give the tile as many stages as the pipeline");
                return 0;
            }
        }
    }
    for (int i = rank; i < IR_MAX_RANK; i++) {
        r.shape[i] = 0;
        r.dims[i] = 0;
    }
    r.rank = (uint8_t)rank;
    if (rank == 0) {
        Type s = blank(b.lanes > 1 ? TK_VECTOR : TK_SCALAR);
        s.dtype = b.dtype;
        s.lanes = b.lanes;
        s.space = b.space;
        return vt_intern(v, &s);
    }
    if (rank != b.rank || r.shape[0] != b.shape[0])
        r.align = 0;
    return vt_intern(v, &r);
}

static TypeId trans_expr(Ver *v, NodeId e)
{
    Node *n = N(v, e);
    TypeId ta = expr(v, n->a);
    if (!ta || v_err(v, n->a))
        return 0;
    Type t = *vt(v, ta);
    if ((t.kind != TK_TILE && t.kind != TK_TENSOR) || t.rank != 2) {
        Diag *d = v_report(v, E0331, e, "`^T` needs a 2-D tile, found %s", vt_str(v, ta));
        (void)d;
        return 0;
    }
    t.transposed ^= 1;
    return vt_intern(v, &t);
}

/* the value a memory view reads as: element -> scalar, 1-D of 2/4/8/16 -> vector, else tile */
static Type view_value(const Type *r)
{
    Type t = *r;
    if (r->kind == TK_SCALAR || r->kind == TK_VECTOR) {
        t.space = SP_NONE;
        return t;
    }
    int64_t n = r->shape[0];
    if (r->rank == 1 && r->lanes == 1 && (n == 1 || n == 2 || n == 4 || n == 8 || n == 16)) {
        t = blank(n == 1 ? TK_SCALAR : TK_VECTOR);
        t.dtype = r->dtype;
        t.lanes = (uint8_t)n;
        return t;
    }
    t.kind = TK_TILE;
    t.space = SP_REG;
    t.swizzle = 0;
    t.align = 0;
    t.layout = 0;
    t.scope = 0;
    t.transposed = 0;
    return t;
}

/* bytes of one element in memory: bool is stored as a byte (ir_dtype_bytes says 0) */
static int mem_bytes(int dt)
{
    return dt == DT_BOOL ? 1 : ir_dtype_bytes((DType)dt);
}

static int is_memory(const Type *t)
{
    return t->space == SP_GLOBAL || t->space == SP_SHARED;
}

/* a vector access slices only the innermost dim and moves 2, 4, 8 or 16 bytes */
static int vector_access_ok(Ver *v, NodeId ref, const Type *val)
{
    if (val->kind != TK_VECTOR)
        return 1;
    const Node *n = N(v, ref);
    if (val->dtype == DT_BOOL) {
        Diag *d = v_report(v, E0330, ref, "a vector access moves numbers; `%s` is %s",
                           v_text(v, ref), vt_str(v, vt_intern(v, val)));
        diag_help(v->ctx, d, "access the bool elements one at a time, or keep them as u8 lanes");
        return 0;
    }
    int bytes = val->lanes * ir_dtype_bytes((DType)val->dtype);
    if (bytes != 2 && bytes != 4 && bytes != 8 && bytes != 16) {
        Diag *d = v_report(v, E0330, ref, "a vector access moves 2, 4, 8 or 16 bytes; `%s` is %u x "
                           "%d = %d bytes", v_text(v, ref), val->lanes, ir_dtype_bytes((DType)val->dtype),
                           bytes);
        diag_help(v->ctx, d, "split it into accesses of %d elements",
                  16 / ir_dtype_bytes((DType)val->dtype));
        return 0;
    }
    if (n->op != OP_INDEX)
        return 1;
    const Type *b = T(v, n->a);
    for (uint32_t i = 0; i + 1 < b->rank; i++) {
        NodeId ix = i < n->n ? arg(v, ref, i) : 0;
        if (!ix || N(v, ix)->op == OP_SLICE || N(v, ix)->op == OP_COLON) {
            Diag *d = v_report(v, E0330, ix ? ix : ref, "a vector access slices the innermost "
                               "dimension only; `%s` slices dimension %u of %u", v_text(v, ref), i,
                               b->rank);
            diag_help(v->ctx, d, "index the other dimensions with elements: `X[i, j : +L]`");
            return 0;
        }
    }
    return 1;
}

static TypeId load_expr(Ver *v, NodeId e)
{
    Node *n = N(v, e);
    TypeId tr = expr(v, n->a);
    if (n->b) {
        expr(v, n->b);
    }
    if (!tr || v_err(v, n->a))
        return 0;
    const Type *r = vt(v, tr);
    if (!is_memory(r) || (r->kind != TK_SCALAR && r->kind != TK_VECTOR && r->kind != TK_TILE &&
                          r->kind != TK_TENSOR)) {
        Diag *d = v_report(v, E0324, n->a, "`load` reads global or shared memory; `%s` is %s",
                           v_text(v, n->a), vt_str(v, tr));
        diag_help(v->ctx, d, "registers are read directly: drop `load`");
        return 0;
    }
    if (r->rank > 0 && r->shape[0] < 0) {
        v_report(v, E0310, n->a, "`load %s` reads a dimension of unknown extent", v_text(v, n->a));
        return 0;
    }
    Type val = view_value(r);
    if (!vector_access_ok(v, n->a, &val))
        return 0;
    int lanes = val.kind == TK_VECTOR ? val.lanes : 1;
    if (n->b && known(v, n->b)) {
        const Type *mt = T(v, n->b);
        if (val.kind == TK_TILE)
            want_bool(v, n->b, "a tile load's mask (whole tile)", 1);
        else
            want_bool(v, n->b, "a load mask", mt->kind == TK_VECTOR ? lanes : 1);
    }
    if (n->dtype == DT_NONE)
        return vt_intern(v, &val);
    /* load ... as T converts each element; the lane count stays */
    if (val.kind == TK_TILE) {
        if (n->lanes != 1) {
            v_report(v, E0312, e, "`load ... as %sx%u` of a tile: give a scalar dtype to convert "
                     "each element", ir_dtypes[n->dtype].spelling, n->lanes);
            return 0;
        }
        val.dtype = n->dtype;
        return vt_intern(v, &val);
    }
    if (n->lanes == lanes && (n->dtype == DT_BOOL) == (val.dtype == DT_BOOL)) {
        Type t = blank(lanes > 1 ? TK_VECTOR : TK_SCALAR);
        t.dtype = n->dtype;
        t.lanes = (uint8_t)lanes;
        return vt_intern(v, &t);
    }
    const char *as = n->lanes > 1 ? ir_fmt(v->ctx, "%sx%u", ir_dtypes[n->dtype].spelling, n->lanes)
                                  : ir_dtypes[n->dtype].spelling;
    Diag *d = v_report(v, E0312, e, "`load ... as %s` converts %d element%s of %s: %s has %u lane%s",
                       as, lanes, lanes == 1 ? "" : "s", ir_dtypes[val.dtype].spelling, as, n->lanes,
                       n->lanes == 1 ? "" : "s");
    const char *fix = lanes > 1 ? ir_fmt(v->ctx, "%sx%d", ir_dtypes[n->dtype].spelling, lanes)
                                : ir_dtypes[n->dtype].spelling;
    diag_help(v->ctx, d, "a converting load keeps the lane count: `as %s`", fix);
    return 0;
}

/* ---- casts and builtins ---------------------------------------------- */

static TypeId cast_expr(Ver *v, NodeId e)
{
    Node *n = N(v, e);
    TypeId ta = expr(v, n->a);
    if (!ta || v_err(v, n->a) || !value_ok(v, n->a))
        return 0;
    const Type *t = vt(v, ta);
    const char *to = n->lanes > 1 ? ir_fmt(v->ctx, "%sx%u", ir_dtypes[n->dtype].spelling, n->lanes)
                                  : ir_dtypes[n->dtype].spelling;
    if (vt_is_untyped(t)) {
        if (n->dtype == DT_BOOL) {
            v_report(v, E0326, e, "a number cannot be converted to bool");
            return 0;
        }
        if (!vt_is_float_dt((DType)n->dtype) && t->layout == VT_UNTYPED_FLOAT) {
            settle(v, n->a, DT_F32);
        } else if (vt_is_float_dt((DType)n->dtype) && !exact_in_float(v, n->a)) {
            settle(v, n->a, DT_I32);
        } else {
            settle(v, n->a, (DType)n->dtype);
        }
        return vt_vector(v, (DType)n->dtype, n->lanes);
    }
    if (n->dtype == DT_BOOL && t->dtype != DT_BOOL) {
        Diag *d = v_report(v, E0326, e, "%s cannot be converted to bool", vt_str(v, ta));
        diag_help(v->ctx, d, "compare instead: `%s != 0`", v_text(v, n->a));
        return 0;
    }
    if (t->kind == TK_TILE) {
        if (n->lanes != t->lanes) {
            v_report(v, E0326, e, "`%s(...)` of a tile of %s: tile conversions keep the element "
                     "lanes", to, vt_str(v, ta));
            return 0;
        }
        return with_dtype(v, *t, (DType)n->dtype);
    }
    if (t->kind == TK_VECTOR && n->lanes != t->lanes) {
        const char *fix = ir_fmt(v->ctx, "%sx%u", ir_dtypes[n->dtype].spelling, t->lanes);
        Diag *d = v_report(v, E0326, e, "`%s(...)` of %s: the lane counts differ", to, vt_str(v, ta));
        diag_help(v->ctx, d, "convert all lanes with `%s(...)`", fix);
        Span s = v_span(v, e);
        s.hi = v_span(v, n->a).lo;
        diag_fixit(v->ctx, d, s, ir_fmt(v->ctx, "%s(", fix));
        return 0;
    }
    return vt_vector(v, (DType)n->dtype, n->lanes);
}

/* elementwise builtin over its args (math, max/min, fma, select operands) */
static TypeId elementwise(Ver *v, NodeId e, uint32_t first, uint32_t count)
{
    NodeId a = arg(v, e, first);
    TypeId acc = vt_of(v, a);
    if (!value_ok(v, a))
        return 0;
    for (uint32_t i = first + 1; i < first + count; i++) {
        NodeId b = arg(v, e, i);
        if (!value_ok(v, b))
            return 0;
        Type shape;
        DType dt;
        int untyped;
        /* compare against a representative node of the accumulated type */
        NodeId rep = arg(v, e, first);
        TypeId save = vt_of(v, rep);
        set(v, rep, acc);
        int ok = merge_shape(v, e, rep, b, &shape) && unify(v, e, rep, b, &dt, &untyped);
        if (vt_of(v, rep) == acc)
            set(v, rep, save);
        if (!ok)
            return 0;
        acc = untyped ? untyped_id(v, untyped) : with_dtype(v, shape, dt);
    }
    /* settle untyped args to the common dtype */
    const Type *r = vt(v, acc);
    if (!vt_is_untyped(r))
        for (uint32_t i = first; i < first + count; i++)
            if (!adapt(v, arg(v, e, i), (DType)r->dtype))
                return 0;
    return acc;
}

static TypeId builtin(Ver *v, NodeId e)
{
    Node *n = N(v, e);
    int want = ir_ops[n->op].nargs;
    int bad = 0;
    for (uint32_t i = 0; i < n->n; i++) {
        expr(v, arg(v, e, i));
        bad |= !known(v, arg(v, e, i));
    }
    if ((want >= 0 && n->n != (uint32_t)want) || bad)
        return 0;
    const char *name = ir_ops[n->op].spelling;
    NodeId a0 = n->n ? arg(v, e, 0) : 0;
    const Type *t0 = a0 ? T(v, a0) : NULL;
    uint16_t fl = ir_ops[n->op].flags;
    switch (n->op) {
    case OP_ABS: case OP_MAX: case OP_MIN: case OP_FMA:
        return elementwise(v, e, 0, n->n);
    case OP_CDIV: {
        TypeId r = elementwise(v, e, 0, 2);
        if (r && !vt_is_int(vt(v, r))) {
            v_report(v, E0320, e, "`cdiv` needs integers, found %s", vt_str(v, r));
            return 0;
        }
        return r;
    }
    case OP_SELECT: {
        if (!value_ok(v, a0))
            return 0;
        TypeId r = elementwise(v, e, 1, 2);
        if (!r)
            return 0;
        const Type *rt = vt(v, r);
        if (vt_is_untyped(rt)) {
            settle(v, arg(v, e, 1), default_dt(rt));
            settle(v, arg(v, e, 2), default_dt(rt));
            r = vt_scalar(v, default_dt(rt));
            rt = vt(v, r);
        }
        if (!want_bool(v, a0, "the condition of select", rt->kind == TK_VECTOR ? rt->lanes : 1)) {
            if (!(t0->kind == TK_TILE && t0->dtype == DT_BOOL))
                return 0;
        }
        return r;
    }
    case OP_DOT: {
        NodeId a1 = arg(v, e, 1);
        const Type *t1 = T(v, a1);
        if (t0->kind != TK_VECTOR || t1->kind != TK_VECTOR) {
            NodeId bad_arg = t0->kind != TK_VECTOR ? a0 : a1;
            v_report(v, E0320, bad_arg, "`dot` takes two vectors, found %s", vt_str(v, vt_of(v, bad_arg)));
            return 0;
        }
        TypeId r = elementwise(v, e, 0, 2);
        if (!r)
            return 0;
        if (!vt_is_float_dt((DType)vt(v, r)->dtype)) {
            v_report(v, E0320, e, "`dot` needs float vectors, found %s", vt_str(v, r));
            return 0;
        }
        return vt_scalar(v, vt(v, r)->dtype == DT_F64 ? DT_F64 : DT_F32);
    }
    case OP_HSUM: case OP_HMAX:
        if (t0->kind != TK_VECTOR) {
            Diag *d = v_report(v, E0320, a0, "`%s` takes a vector, found %s", name, vt_str(v, vt_of(v, a0)));
            if (t0->kind == TK_TILE)
                diag_help(v->ctx, d, "reduce tiles with rowsum/rowmax or colsum/colmax");
            return 0;
        }
        return vt_scalar(v, (DType)t0->dtype);
    case OP_LDMATRIX: case OP_LDMATRIX_T: {
        if (t0->kind != TK_TILE || t0->space != SP_SHARED || t0->rank != 2) {
            Diag *d = v_report(v, E0324, a0, "`%s` reads a 2-D shared-memory tile, found %s",
                               name, vt_str(v, vt_of(v, a0)));
            v_note_decl(v, d, v_root_decl(v, a0), NULL);
            return 0;
        }
        if (ir_dtypes[t0->dtype].bits != 16) {
            v_report(v, E0320, a0, "`%s` moves 16-bit elements, found %s", name,
                     ir_dtypes[t0->dtype].spelling);
            return 0;
        }
        for (int i = 0; i < 2; i++)
            if (ext(t0, i) > 0 && ext(t0, i) % 8) {
                v_report(v, E0305, a0, "`%s` moves 8x8 matrices: %s is not a multiple of 8 in "
                         "dimension %d", name, vt_str(v, vt_of(v, a0)), i);
                return 0;
            }
        Type r = *t0;   /* the view's logical shape; the target's layout decides (7.4) */
        r.space = SP_REG;
        r.swizzle = 0;
        r.align = 0;
        r.scope = SC_WARP;
        if (t0->transposed) {
            int64_t s = r.shape[0];
            NodeId d = r.dims[0];
            r.shape[0] = r.shape[1], r.dims[0] = r.dims[1];
            r.shape[1] = s, r.dims[1] = d;
        }
        r.transposed = 0;
        return vt_intern(v, &r);
    }
    case OP_SHFL_XOR: case OP_SHFL_DOWN: case OP_SHFL_UP: case OP_SHFL_IDX:
        if (!value_ok(v, a0) || t0->kind == TK_TILE) {
            if (t0->kind == TK_TILE)
                v_report(v, E0314, a0, "`%s` moves scalars or vectors between lanes, found %s",
                         name, vt_str(v, vt_of(v, a0)));
            return 0;
        }
        if (!want_int(v, arg(v, e, 1), "a lane or lane offset"))
            return 0;
        if (vt_is_untyped(t0))
            settle(v, a0, default_dt(t0));
        return vt_of(v, a0);
    default:
        break;
    }
    if (fl & OF_TILE) { /* rowsum .. colmin */
        if (t0->kind != TK_TILE || t0->rank != 2 || t0->space != SP_REG) {
            Diag *d = v_report(v, E0314, a0, "`%s` reduces a 2-D register tile, found %s", name,
                               vt_str(v, vt_of(v, a0)));
            if (t0->kind == TK_VECTOR)
                diag_help(v->ctx, d, "reduce a vector with hsum/hmax");
            else if (t0->kind == TK_SCALAR)
                diag_help(v->ctx, d, "reduce across threads with reduce.warp.* or reduce.block.*");
            return 0;
        }
        Type r = *t0;
        if (n->op == OP_ROWSUM || n->op == OP_ROWMAX || n->op == OP_ROWMIN) { /* -> [R] */
            r.rank = 1;
            r.shape[1] = 0;
            r.dims[1] = 0;
        } else { /* -> [1, C] */
            r.shape[0] = 1;
            r.dims[0] = 0;
        }
        return vt_intern(v, &r);
    }
    if (fl & (OF_WARP | OF_BLOCK)) { /* reduce.warp.*, reduce.block.* */
        if (t0->kind != TK_SCALAR) {
            Diag *d = v_report(v, E0314, a0, "`%s` reduces one scalar per thread, found %s", name,
                               vt_str(v, vt_of(v, a0)));
            if (t0->kind == TK_VECTOR)
                diag_help(v->ctx, d, "reduce the vector first: `%s(hsum(%s))`", name, v_text(v, a0));
            else if (t0->kind == TK_TILE)
                diag_help(v->ctx, d, "reduce tiles with rowsum/rowmax/colsum/colmax");
            return 0;
        }
        if (vt_is_untyped(t0))
            settle(v, a0, default_dt(t0));
        if (T(v, a0)->dtype == DT_BOOL) {
            v_report(v, E0314, a0, "`%s` reduces numbers, found bool", name);
            return 0;
        }
        return vt_scalar(v, (DType)T(v, a0)->dtype);
    }
    if (fl & OF_MATH) { /* exp .. cos: floats */
        if (!value_ok(v, a0))
            return 0;
        if (vt_is_untyped(t0)) {
            settle(v, a0, DT_F32);
            return vt_scalar(v, DT_F32);
        }
        if (!vt_is_float_dt((DType)t0->dtype)) {
            Diag *d = v_report(v, E0320, a0, "`%s` needs a float operand, found %s", name,
                               vt_str(v, vt_of(v, a0)));
            diag_help(v->ctx, d, "convert it: `%s(f32(%s))`", name, v_text(v, a0));
            return 0;
        }
        return with_dtype(v, *t0, (DType)t0->dtype);
    }
    return 0;
}

/* sum/max/min(k in lo .. hi, body): reference blocks only */
static TypeId reduction(Ver *v, NodeId e)
{
    Node *n = N(v, e);
    expr(v, n->a);
    expr(v, n->b);
    TypeId tc = expr(v, n->c);
    want_int(v, n->a, "a reduction bound");
    want_int(v, n->b, "a reduction bound");
    if (!v->in_ref[e]) {
        Diag *d = v_report(v, E0325, e, "`%s(k in ...)` is only allowed in a reference block",
                           ir_ops[n->op].spelling);
        diag_help(v->ctx, d, "in the kernel body, reduce with reduce.warp.*, reduce.block.* or "
                             "rowsum/rowmax");
        return 0;
    }
    if (!tc || v_err(v, n->c) || !value_ok(v, n->c))
        return 0;
    const Type *t = vt(v, tc);
    if (t->kind != TK_SCALAR || t->dtype == DT_BOOL) {
        v_report(v, E0314, n->c, "a reduction body must be a number, found %s", vt_str(v, tc));
        return 0;
    }
    return tc;
}

/* ---- pipelines --------------------------------------------------------- */

static TypeId pipe_member(Ver *v, NodeId e)
{
    Node *n = N(v, e);
    TypeId tp = expr(v, n->a);
    for (uint32_t i = 0; i < n->n; i++)
        expr(v, arg(v, e, i));
    if (!tp || v_err(v, n->a))
        return 0;
    NodeId pipe = N(v, n->a)->decl;
    if (vt(v, tp)->kind != TK_PIPELINE || !pipe) {
        v_report(v, E0332, n->a, "`%s` is %s, not a pipeline", v_text(v, n->a), vt_str(v, tp));
        return 0;
    }
    const char *member = ir_ops[n->op].spelling;
    const Node *pd = N(v, pipe);
    /* role placement: acquire/commit in the producer role, wait/release in the consumer */
    NodeId want = 0;
    const char *side = NULL;
    if (n->op == OP_P_ACQUIRE || n->op == OP_P_COMMIT)
        want = pd->b, side = "producer";
    else if (n->op == OP_P_WAIT || n->op == OP_P_RELEASE)
        want = pd->c, side = "consumer";
    NodeId want_role = want ? N(v, want)->decl : 0;
    NodeId here = v->role_of[e];
    if (want_role && here != want_role && N(v, want_role)->op == OP_ROLE) {
        const char *rn = v_name(v, want_role);
        Diag *d = here
            ? v_report(v, E0321, e, "`%s.%s` in role `%s`: only the %s role `%s` may call it",
                       v_name(v, pipe), member, v_name(v, here), side, rn)
            : v_report(v, E0321, e, "`%s.%s` outside any role: only the %s role `%s` may call it",
                       v_name(v, pipe), member, side, rn);
        diag_note(v->ctx, d, pd->span, "pipeline `%s` goes from role `%s` to role `%s`",
                  v_name(v, pipe), v_name(v, pd->b), v_name(v, pd->c));
        diag_help(v->ctx, d, "move this call into role `%s`", rn);
    }
    if (n->op == OP_P_ACQUIRE || n->op == OP_P_WAIT) {
        Type st = blank(TK_STAGE);
        st.dtype = DT_I32;
        st.dims[0] = pipe;
        return vt_intern(v, &st);
    }
    if (n->n == 1) {  /* whose token it is: the sync check (E0706) */
        NodeId s = arg(v, e, 0);
        if (known(v, s) && T(v, s)->kind != TK_STAGE)
            want_int(v, s, "a pipeline stage");
    }
    if (n->op == OP_P_FULL || n->op == OP_P_EMPTY) {
        Type mb = blank(TK_MBARRIER);
        return vt_intern(v, &mb);
    }
    return v->t_void;
}

/* ---- names and expressions ------------------------------------------ */

static TypeId name_expr(Ver *v, NodeId e)
{
    Node *n = N(v, e);
    NodeId d = n->decl;
    if (!d || d >= v->k->nnodes)
        return 0;
    if (d == e && (n->flags & NF_IMPLICIT))
        return v->t_i32;
    const Node *dn = N(v, d);
    switch (dn->op) {
    case OP_PARAM: return v->t_uint;
    case OP_DIM: return vt_scalar(v, DT_I64);
    case OP_LET: return (dn->flags & NF_ERROR) ? 0 : dn->type;
    case OP_SUM: case OP_RMAX: case OP_RMIN: return v->t_i32;
    case OP_NAME: return dn->type ? dn->type : v->t_i32;   /* an implicit reference index */
    default: return (dn->flags & NF_ERROR) ? 0 : dn->type;
    }
}

static TypeId expr(Ver *v, NodeId e)
{
    if (!e)
        return 0;
    Node *n = N(v, e);
    if (n->type)
        return n->type;  /* typed already (shared subexpressions, re-visits) */
    TypeId t = 0;
    switch (n->op) {
    case OP_INT:
        t = n->dtype ? vt_scalar(v, (DType)n->dtype) : v->t_uint;
        break;
    case OP_FLOAT:
        t = n->dtype ? vt_scalar(v, (DType)n->dtype) : v->t_ufloat;
        break;
    case OP_BOOL: t = v->t_bool; break;
    case OP_NAME: t = name_expr(v, e); break;
    case OP_SPECIAL: t = v->t_i32; break;
    case OP_COLON: case OP_SLICE: break;   /* typed by their INDEX */
    case OP_INDEX: t = index_expr(v, e); break;
    case OP_TRANS: t = trans_expr(v, e); break;
    case OP_NEG: case OP_NOT: t = unary(v, e); break;
    case OP_CAST: t = cast_expr(v, e); break;
    case OP_LOAD: t = load_expr(v, e); break;
    case OP_SUM: case OP_RMAX: case OP_RMIN: t = reduction(v, e); break;
    case OP_FIELD: expr(v, n->a); break;   /* unknown member: reported by resolution */
    default:
        switch (ir_ops[n->op].cls) {
        case OC_BIN: t = binary(v, e); break;
        case OC_BUILTIN: t = builtin(v, e); break;
        case OC_PIPE: t = pipe_member(v, e); break;
        default: break;
        }
    }
    return set(v, e, t);
}

/* a value expression whose untyped constants take their default type */
static TypeId value(Ver *v, NodeId e)
{
    TypeId t = expr(v, e);
    if (t && vt_is_untyped(vt(v, t))) {
        settle(v, e, default_for(v, e));
        t = vt_of(v, e);
    }
    return t;
}

/* ---- declarations and types ---------------------------------------- */

/* the type a TYPE node spells; space/layout/scope from the declaration */
static TypeId type_node(Ver *v, NodeId tn, uint8_t space, NodeId decl)
{
    if (!tn)
        return 0;
    Node *n = N(v, tn);
    if (n->op != OP_TYPE)
        return 0;
    if (n->n == 0) {
        if (space == SP_SHARED) {
            Type t = blank(n->lanes > 1 ? TK_VECTOR : TK_SCALAR);
            t.dtype = n->dtype;
            t.lanes = n->lanes;
            t.space = SP_SHARED;
            return set(v, tn, vt_intern(v, &t));
        }
        return set(v, tn, vt_vector(v, (DType)n->dtype, n->lanes));
    }
    if (n->n > IR_MAX_RANK) {
        v_report(v, E0328, tn, "tiles have at most %d dimensions, found %u", IR_MAX_RANK, n->n);
        return 0;
    }
    Type t = blank(TK_TILE);
    t.dtype = n->dtype;
    t.lanes = n->lanes;
    t.space = space;
    t.rank = (uint8_t)n->n;
    int ok = 1;
    for (uint32_t i = 0; i < n->n; i++) {
        NodeId d = arg(v, tn, i);
        expr(v, d);
        if (!want_int(v, d, "a tile extent")) {
            ok = 0;
            continue;
        }
        int64_t c;
        if (!v_const(v, d, &c) && v->in_ref[decl]) {
            t.shape[i] = -1;   /* reference arrays may have symbolic extents (11.1) */
            t.dims[i] = d;
            continue;
        }
        if (!v_const(v, d, &c)) {
            Diag *dg = v_report(v, E0328, d, "extent `%s` of `%s` is not a compile-time constant",
                                v_text(v, d), v_name(v, decl));
            diag_help(v->ctx, dg, "%s tiles have sizes fixed at compile time: use kernel "
                      "parameters (`<BM = 128>`), not dims", space == SP_SHARED ? "shared" : "register");
            ok = 0;
            continue;
        }
        if (c < 1) {
            v_report(v, E0328, d, "extent of `%s` must be at least 1, found %lld", v_name(v, decl),
                     (long long)c);
            ok = 0;
            continue;
        }
        t.shape[i] = c;
        t.dims[i] = d;
    }
    if (!ok)
        return 0;
    return set(v, tn, vt_intern(v, &t));
}

/* can value node `val` of type tv go where a tvd-typed thing lives? reports at val */
static int assignable(Ver *v, NodeId val, TypeId tdst, NodeId decl, const char *what)
{
    if (!known(v, val) || !tdst)
        return 0;
    if (!value_ok(v, val))
        return 0;
    const Type *d = vt(v, tdst), *s = T(v, val);
    DType dd = (DType)d->dtype;
    if (vt_is_untyped(s))   /* constants adapt and fill vectors and tiles */
        return adapt(v, val, dd);
    int shape_ok;
    if (d->kind == TK_SCALAR)
        shape_ok = s->kind == TK_SCALAR || s->kind == TK_STAGE;
    else if (d->kind == TK_VECTOR)
        shape_ok = s->kind == TK_VECTOR && s->lanes == d->lanes;
    else if (d->kind == TK_TILE)
        shape_ok = (s->kind == TK_TILE && s->lanes == d->lanes && same_shape(v, d, s)) ||
                   (s->kind == TK_SCALAR && d->lanes == 1);
    else
        shape_ok = 0;
    if (!shape_ok) {
        DiagCode code = d->kind == TK_VECTOR && s->kind == TK_VECTOR ? E0304
                      : d->kind == TK_TILE && s->kind == TK_TILE ? E0305 : E0301;
        Diag *dg = v_report(v, code, val, "%s: expected %s, found %s", what, vt_str(v, tdst),
                            vt_str(v, vt_of(v, val)));
        v_note_decl(v, dg, decl, NULL);
        return 0;
    }
    if (d->kind == TK_TILE && s->kind == TK_TILE && d->layout && s->layout && d->layout != s->layout &&
        !(ir_dtypes[dd].bits == 16 && ((s->layout == LY_MMA && d->layout == LY_MMA_A) ||
                                       (s->layout == LY_WGMMA && d->layout == LY_WGMMA_A)))) {
        Diag *dg = v_report(v, E0335, val, "%s: layout %s cannot become layout %s in registers",
                            what, ir_layout_names[s->layout], ir_layout_names[d->layout]);
        v_note_decl(v, dg, decl, NULL);
        diag_help(v->ctx, dg, "only mma -> mma_a and wgmma -> wgmma_a (16-bit results) stay in "
                              "registers; otherwise go through shared memory (store, a barrier, load)");
        return 0;
    }
    DType sd = s->kind == TK_STAGE ? DT_I32 : (DType)s->dtype;
    if (sd == dd || widen(sd, dd) == dd)
        return 1;
    int narrowing = sd != DT_BOOL && dd != DT_BOOL && ir_dtypes[sd].kind == ir_dtypes[dd].kind;
    int numeric = sd != DT_BOOL && dd != DT_BOOL;
    const char *to = d->kind == TK_VECTOR ? ir_fmt(v->ctx, "%sx%u", ir_dtypes[dd].spelling, d->lanes)
                                          : ir_dtypes[dd].spelling;
    Diag *dg = v_report(v, narrowing ? E0303 : E0301, val, "%s: expected %s, found %s%s", what,
                        ir_dtypes[dd].spelling, ir_dtypes[sd].spelling,
                        narrowing ? " (no implicit narrowing)" : "");
    v_note_decl(v, dg, decl, NULL);
    if (numeric) {
        diag_help(v->ctx, dg, "convert explicitly: `%s(%s)`", to, v_text(v, val));
        diag_fixit(v->ctx, dg, v_span(v, val), ir_fmt(v->ctx, "%s(%s)", to, v_text(v, val)));
    }
    return 0;
}

/* the warpgroup-capable context of node n: a warpgroup role, or the block */
static int warpgroup_ctx(Ver *v, NodeId n, const char **why)
{
    NodeId r = v->role_of[n];
    if (r) {
        const VRole *ro = v_role(v, r);
        if (!ro || ro->first < 0)
            return 1;
        if ((ro->end - ro->first) % 4 == 0 && ro->first % 4 == 0)
            return 1;
        *why = ir_fmt(v->ctx, "role `%s` holds %lld warp%s", v_name(v, r),
                      (long long)(ro->end - ro->first), ro->end - ro->first == 1 ? "" : "s");
        return 0;
    }
    for (int t = 0; t < TG__COUNT; t++)
        if (v->k->targets[t] && v->block_threads[t] && v->block_threads[t] % 128) {
            *why = ir_fmt(v->ctx, "the block has %lld threads", (long long)v->block_threads[t]);
            return 0;
        }
    return 1;
}

static void reg_decl(Ver *v, NodeId s)
{
    Node *n = N(v, s);
    TypeId t = type_node(v, n->a, SP_REG, s);
    if (!t) {
        v_mark(v, s);
        if (n->b)
            expr(v, n->b);
        return;
    }
    Type ty = *vt(v, t);
    uint8_t layout = (n->flags & NF_HAS_LAYOUT) ? n->v.attr.layout : 0;
    uint8_t scope = (n->flags & NF_HAS_SCOPE) ? n->v.attr.scope : (uint8_t)ir_layout_scope[layout];
    if (layout && ty.kind != TK_TILE) {
        v_report(v, E0319, s, "layout `%s` is for tiles; `%s` is %s", ir_layout_names[layout],
                 v_name(v, s), vt_str(v, t));
        return;
    }
    if (layout && (n->flags & NF_HAS_SCOPE) && scope != ir_layout_scope[layout]) {
        Diag *d = v_report(v, E0318, s, "layout `%s` is owned by a %s, but `%s` says scope %s",
                           ir_layout_names[layout], ir_scope_names[ir_layout_scope[layout]],
                           v_name(v, s), ir_scope_names[scope]);
        diag_help(v->ctx, d, "drop `scope %s` (the layout implies scope %s)", ir_scope_names[scope],
                  ir_scope_names[ir_layout_scope[layout]]);
        return;
    }
    if (ty.kind == TK_TILE) {
        ty.layout = layout;
        ty.scope = scope ? scope : SC_THREAD;
        int64_t m0 = ty.rank >= 1 ? ty.shape[0] : 0, n0 = ty.rank == 2 ? ty.shape[1] : 0;
        int acc = layout == LY_WGMMA || layout == LY_MMA || layout == LY_MFMA;
        const char *bad = NULL;
        if (layout && layout != LY_ROWS && ty.rank != 2 && !(acc && ty.rank == 1))
            bad = ir_fmt(v->ctx, "layout `%s` is for 2-D tiles (or [R] row vectors of an "
                         "accumulator layout)", ir_layout_names[layout]);
        else if (ty.rank == 2 && (layout == LY_WGMMA || layout == LY_WGMMA_A) && m0 % 64)
            bad = ir_fmt(v->ctx, "a %s tile has 64 rows per instruction: [64·a, N]; `%s` has %lld "
                         "rows", ir_layout_names[layout], v_name(v, s), (long long)m0);
        else if (ty.rank == 2 && layout == LY_WGMMA && (n0 % 8 || n0 > 256))
            bad = ir_fmt(v->ctx, "a wgmma accumulator has N = 8..256 in steps of 8; `%s` has "
                         "N = %lld", v_name(v, s), (long long)n0);
        else if (ty.rank == 2 && layout == LY_MMA && (m0 % 16 || n0 % 8))
            bad = ir_fmt(v->ctx, "an mma accumulator is made of 16x8 fragments: [16·a, 8·b]; `%s` "
                         "is [%lld, %lld]", v_name(v, s), (long long)m0, (long long)n0);
        else if (ty.rank == 2 && layout == LY_MMA_A && m0 % 16)
            bad = ir_fmt(v->ctx, "an mma_a fragment has 16·a rows; `%s` has %lld", v_name(v, s),
                         (long long)m0);
        else if (ty.rank == 2 && layout == LY_MMA_B && n0 % 8)
            bad = ir_fmt(v->ctx, "an mma_b fragment is [K, 8·b]; `%s` has N = %lld", v_name(v, s),
                         (long long)n0);
        else if (ty.rank == 2 && layout == LY_MFMA && !((m0 % 32 == 0 && n0 % 32 == 0) ||
                                                        (m0 % 16 == 0 && n0 % 16 == 0)))
            bad = ir_fmt(v->ctx, "an mfma accumulator is [32·a, 32·b] or [16·a, 16·b]; `%s` is "
                         "[%lld, %lld]", v_name(v, s), (long long)m0, (long long)n0);
        if (bad) {
            v_report(v, E0319, n->a, "%s", bad);
            return;
        }
        const char *why = NULL;
        if (ty.scope == SC_WARPGROUP && !warpgroup_ctx(v, s, &why)) {
            Diag *d = v_report(v, E0318, s, "`%s` (layout %s) is owned by a warpgroup, but %s",
                               v_name(v, s), ir_layout_names[layout], why);
            diag_help(v->ctx, d, "declare it in a role of whole warpgroups (`role R: warpgroup N`)");
        }
        t = vt_intern(v, &ty);
    }
    set(v, s, t);
    if (n->b) {
        expr(v, n->b);
        assignable(v, n->b, t, s, ir_fmt(v->ctx, "initial value of `%s`", v_name(v, s)));
    }
}

static void shared_decl(Ver *v, NodeId s)
{
    Node *n = N(v, s);
    TypeId t = type_node(v, n->a, SP_SHARED, s);
    uint16_t sw = n->v.attr.swizzle, al = n->v.attr.align;
    if (sw != 0 && sw != 32 && sw != 64 && sw != 128) {
        Diag *d = v_report(v, E0334, s, "swizzle %u: the swizzle modes are 32, 64 and 128 bytes", sw);
        diag_help(v->ctx, d, "use `swizzle 128` for tiles whose rows are 128 bytes or more");
        return;
    }
    if (al && (al & (al - 1))) {
        v_report(v, E0334, s, "alignment %u is not a power of two", al);
        return;
    }
    if (!t) {
        v_mark(v, s);
        return;
    }
    Type ty = *vt(v, t);
    ty.swizzle = sw;
    ty.align = al;
    if (sw && ty.rank >= 1 && ty.shape[ty.rank - 1] > 0) {
        int64_t ib = ty.shape[ty.rank - 1] * mem_bytes(ty.dtype);
        if (ib % sw) {
            Diag *d = v_report(v, E0334, s, "`swizzle %u` needs rows of a multiple of %u bytes; `%s` "
                               "has rows of %lld bytes", sw, sw, v_name(v, s), (long long)ib);
            int64_t fit = ib >= 128 ? 128 : ib >= 64 ? 64 : ib >= 32 ? 32 : 0;
            if (fit && ib % fit == 0)
                diag_help(v->ctx, d, "use `swizzle %lld`", (long long)fit);
            else
                diag_help(v->ctx, d, "make the innermost extent a multiple of %u elements",
                          sw / mem_bytes(ty.dtype));
            return;
        }
    }
    if (ty.kind == TK_TILE && ty.lanes > 1) {
        Diag *d = v_report(v, E0328, n->a, "shared tiles hold scalars; `%s` has vector elements "
                           "%sx%u", v_name(v, s), ir_dtypes[ty.dtype].spelling, ty.lanes);
        diag_help(v->ctx, d, "declare the scalars and read vectors with slices: `load %s[i : +%u]`",
                  v_name(v, s), ty.lanes);
        return;
    }
    set(v, s, vt_intern(v, &ty));
}

static void mbarrier_decl(Ver *v, NodeId s)
{
    Node *n = N(v, s);
    Type t = blank(TK_MBARRIER);
    if (n->a) {
        expr(v, n->a);
        int64_t c;
        if (want_int(v, n->a, "an mbarrier array length")) {
            if (!v_const(v, n->a, &c) || c < 1) {
                v_report(v, E0327, n->a, "mbarrier array length `%s` must be a constant >= 1",
                         v_text(v, n->a));
            } else {
                t.rank = 1;
                t.shape[0] = c;
                t.dims[0] = n->a;
            }
        }
    }
    if (n->b) {
        expr(v, n->b);
        int64_t c;
        if (want_int(v, n->b, "an arrival count") && v_const(v, n->b, &c) && c < 1)
            v_report(v, E0327, n->b, "an mbarrier's arrival count must be at least 1, found %lld",
                     (long long)c);
    }
    set(v, s, vt_intern(v, &t));
}

static void pipeline_decl(Ver *v, NodeId s)
{
    Node *n = N(v, s);
    Type t = blank(TK_PIPELINE);
    expr(v, n->a);
    int64_t c;
    if (want_int(v, n->a, "a stage count")) {
        if (!v_const(v, n->a, &c) || c < 1) {
            v_report(v, E0327, n->a, "pipeline stage count `%s` must be a constant >= 1",
                     v_text(v, n->a));
        } else {
            t.shape[0] = c;
            t.dims[0] = n->a;
        }
    }
    for (int i = 0; i < 2; i++) {
        NodeId r = i ? n->c : n->b;
        if (!r)
            continue;
        NodeId d = N(v, r)->decl;
        if (d && N(v, d)->op != OP_ROLE && !v_err(v, r))
            v_report(v, E0332, r, "`%s` is not a role", v_text(v, r));
    }
    if (n->b && n->c && N(v, n->b)->decl && N(v, n->b)->decl == N(v, n->c)->decl) {
        Diag *d = v_report(v, E0321, n->c, "pipeline `%s` goes from role `%s` to itself",
                           v_name(v, s), v_text(v, n->b));
        diag_help(v->ctx, d, "a pipeline connects a producer role to a different consumer role");
    }
    set(v, s, vt_intern(v, &t));
}

static void role_decl(Ver *v, NodeId s)
{
    Node *n = N(v, s);
    NodeId parts[3] = {n->a, n->b, n->c};
    for (int i = 0; i < 3; i++) {
        if (!parts[i])
            continue;
        expr(v, parts[i]);
        if (want_int(v, parts[i], i == 2 ? "a register count" : "a role unit")) {
            int64_t c;
            if (!v_const(v, parts[i], &c))
                v_report(v, E0327, parts[i], "`%s` must be a compile-time constant", v_text(v, parts[i]));
        }
    }
    Type t = blank(TK_ROLE);
    set(v, s, vt_intern(v, &t));
    block(v, n->d);
}

/* ---- tensor cores -------------------------------------------------- */

static const char *tc_name(Op op)
{
    return op == OP_WGMMA ? "wgmma" : op == OP_MMA ? "mma" : "mfma";
}

static void tc_stmt(Ver *v, NodeId s)
{
    Node *n = N(v, s);
    TypeId tc = expr(v, n->a), ta = expr(v, n->b), tb = expr(v, n->c);
    if (!tc || !ta || !tb || v_err(v, n->a) || v_err(v, n->b) || v_err(v, n->c))
        return;
    const Type *C = vt(v, tc), *A = vt(v, ta), *B = vt(v, tb);
    Op op = (Op)n->op;
    const char *nm = tc_name(op);
    uint8_t acc_ly = op == OP_WGMMA ? LY_WGMMA : op == OP_MMA ? LY_MMA : LY_MFMA;
    uint8_t a_ly = op == OP_WGMMA ? LY_WGMMA_A : op == OP_MMA ? LY_MMA_A : LY_MFMA_A;
    uint8_t b_ly = op == OP_MMA ? LY_MMA_B : LY_MFMA_B;
    NodeId ops3[3] = {n->a, n->b, n->c};
    const Type *ty3[3] = {C, A, B};
    static const char *const role3[3] = {"accumulator", "A operand", "B operand"};
    for (int i = 0; i < 3; i++) {
        if (ty3[i]->kind != TK_TILE || ty3[i]->rank != 2) {
            Diag *d = v_report(v, E0315, ops3[i], "the %s of `%s` must be a 2-D tile, found %s",
                               role3[i], nm, vt_str(v, vt_of(v, ops3[i])));
            v_note_decl(v, d, v_root_decl(v, ops3[i]), NULL);
            return;
        }
    }
    /* operand placement and layouts */
    int ok = 1;
    if (C->space != SP_REG || C->layout != acc_ly || C->transposed) {
        Diag *d = v_report(v, E0317, n->a, "the accumulator of `%s` must be a register tile with "
                           "layout %s, found %s", nm, ir_layout_names[acc_ly], vt_str(v, tc));
        v_note_decl(v, d, v_root_decl(v, n->a), NULL);
        diag_help(v->ctx, d, "declare it `reg %s: f32[M, N] layout %s = 0`", v_text(v, n->a),
                  ir_layout_names[acc_ly]);
        ok = 0;
    }
    if (op == OP_WGMMA) {
        if (!(A->space == SP_SHARED || (A->space == SP_REG && A->layout == LY_WGMMA_A))) {
            Diag *d = v_report(v, E0317, n->b, "the A operand of `wgmma` must be a shared tile or a "
                               "register tile with layout wgmma_a, found %s", vt_str(v, ta));
            v_note_decl(v, d, v_root_decl(v, n->b), NULL);
            ok = 0;
        }
        if (B->space != SP_SHARED) {
            Diag *d = v_report(v, E0317, n->c, "the B operand of `wgmma` must be in shared memory, "
                               "found %s", vt_str(v, tb));
            v_note_decl(v, d, v_root_decl(v, n->c), NULL);
            ok = 0;
        }
    } else {
        if (A->space != SP_REG || A->layout != a_ly) {
            Diag *d = v_report(v, E0317, n->b, "the A operand of `%s` must be a register fragment "
                               "with layout %s, found %s", nm, ir_layout_names[a_ly], vt_str(v, ta));
            v_note_decl(v, d, v_root_decl(v, n->b), NULL);
            if (A->space == SP_SHARED && op == OP_MMA)
                diag_help(v->ctx, d, "load it first: `reg a: %s[..] layout mma_a` and `a = ldmatrix(%s)`",
                          ir_dtypes[A->dtype].spelling, v_text(v, n->b));
            ok = 0;
        }
        if (B->space != SP_REG || B->layout != b_ly) {
            Diag *d = v_report(v, E0317, n->c, "the B operand of `%s` must be a register fragment "
                               "with layout %s, found %s", nm, ir_layout_names[b_ly], vt_str(v, tb));
            v_note_decl(v, d, v_root_decl(v, n->c), NULL);
            ok = 0;
        }
    }
    if (op == OP_WGMMA) {
        const char *why = NULL;
        if (!warpgroup_ctx(v, s, &why)) {
            Diag *d = v_report(v, E0318, s, "`wgmma` runs on a whole warpgroup, but %s", why);
            diag_help(v->ctx, d, "issue it from a role of whole warpgroups (`role R: warpgroup N`)");
            ok = 0;
        }
    }
    if (!ok)
        return;
    /* shapes: acc [M, N], A [M, K], B logically [K, N] (B^T of an [N, K] tile) */
    int64_t M = ext(C, 0), Nn = ext(C, 1), Ka = ext(A, 1), Kb = ext(B, 0);
    if (!vt_same_extent(v, C, lx(C, 0), A, lx(A, 0))) {
        Diag *d = v_report(v, E0315, n->b, "`%s`: A has %s rows but the accumulator has %s",
                           nm, ext_str(v, A, 0), ext_str(v, C, 0));
        diag_note(v->ctx, d, v_span(v, n->a), "accumulator is %s", vt_str(v, tc));
        diag_help(v->ctx, d, "A is [M, K], B is [K, N] (or `X^T` of an [N, K] tile), the "
                             "accumulator [M, N]");
        return;
    }
    if (!vt_same_extent(v, C, lx(C, 1), B, lx(B, 1))) {
        Diag *d = v_report(v, E0315, n->c, "`%s`: B has N = %s but the accumulator has N = %s%s", nm,
                           ext_str(v, B, 1), ext_str(v, C, 1),
                           !B->transposed && vt_same_extent(v, C, lx(C, 1), B, 0)
                               ? " (B looks like [N, K]: transpose it)" : "");
        diag_note(v->ctx, d, v_span(v, n->a), "accumulator is %s", vt_str(v, tc));
        if (!B->transposed && vt_same_extent(v, C, lx(C, 1), B, 0)) {
            diag_help(v->ctx, d, "write `%s^T`", v_text(v, n->c));
            diag_fixit(v->ctx, d, v_span(v, n->c), ir_fmt(v->ctx, "%s^T", v_text(v, n->c)));
        } else {
            diag_help(v->ctx, d, "B is [K, N], or `X^T` of an [N, K] tile");
        }
        return;
    }
    if (!vt_same_extent(v, A, lx(A, 1), B, lx(B, 0))) {
        Diag *d = v_report(v, E0315, n->c, "`%s`: A has K = %s but B has K = %s", nm,
                           ext_str(v, A, 1), ext_str(v, B, 0));
        diag_note(v->ctx, d, v_span(v, n->b), "A is %s", vt_str(v, ta));
        return;
    }
    (void)Ka;
    (void)Kb;
    /* dtypes: A and B agree; the accumulator is f32/f16/i32/f64 */
    int fp8_mix = (A->dtype == DT_E4M3 || A->dtype == DT_E5M2) && (B->dtype == DT_E4M3 || B->dtype == DT_E5M2);
    if (A->dtype != B->dtype && !fp8_mix) {
        Diag *d = v_report(v, E0316, s, "`%s` operands differ: A is %s, B is %s", nm,
                           ir_dtypes[A->dtype].spelling, ir_dtypes[B->dtype].spelling);
        diag_note(v->ctx, d, v_span(v, n->b), "A is %s", vt_str(v, ta));
        diag_note(v->ctx, d, v_span(v, n->c), "B is %s", vt_str(v, tb));
        return;
    }
    DType acc = (DType)C->dtype, ab = (DType)A->dtype;
    int acc_ok = acc == DT_F32 || acc == DT_F16 || acc == DT_I32 || acc == DT_F64;
    int int_ab = vt_is_int_dt(ab);
    if (!acc_ok || (int_ab != (acc == DT_I32)) || (ab == DT_F64) != (acc == DT_F64) ||
        (acc == DT_F16 && ab != DT_F16 && ab != DT_E4M3 && ab != DT_E5M2)) {
        Diag *d = v_report(v, E0316, n->a, "`%s` with %s inputs cannot accumulate into %s", nm,
                           ir_dtypes[ab].spelling, ir_dtypes[acc].spelling);
        v_note_decl(v, d, v_root_decl(v, n->a), NULL);
        diag_help(v->ctx, d, "accumulate %s inputs in %s", ir_dtypes[ab].spelling,
                  int_ab ? "i32" : ab == DT_F64 ? "f64" : "f32");
        return;
    }
    /* wgmma: 64 rows per warpgroup; N = 8..256; K-major operands for non-16-bit types */
    if (op == OP_WGMMA) {
        if (M > 0 && M % 64) {
            Diag *d = v_report(v, E0315, n->a, "`wgmma` computes 64 rows per instruction; the "
                               "accumulator has %lld", (long long)M);
            diag_help(v->ctx, d, "give each warpgroup [64, N] (or [64·a, N])");
            return;
        }
        if (Nn > 0 && (Nn % 8 || Nn > 256)) {
            v_report(v, E0315, n->a, "`wgmma` has N = 8..256 in steps of 8; the accumulator has "
                     "N = %lld", (long long)Nn);
            return;
        }
        if (ir_dtypes[ab].bits != 16 && A->space == SP_SHARED && A->transposed) {
            v_report(v, E0317, n->b, "`wgmma` with %s reads A K-major only: give an [M, K] tile, "
                     "not a transposed one", ir_dtypes[ab].spelling);
            return;
        }
        if (ir_dtypes[ab].bits != 16 && !B->transposed) {
            Diag *d = v_report(v, E0317, n->c, "`wgmma` with %s reads B K-major only: give `X^T` "
                               "of an [N, K] tile", ir_dtypes[ab].spelling);
            (void)d;
            return;
        }
    }
}

/* ---- statements ------------------------------------------------------ */

static int lvalue_ok(Ver *v, NodeId lv)
{
    NodeId d = v_root_decl(v, lv);
    if (!d)
        return 1;
    const Type *t = T(v, lv);
    if (t->space == SP_GLOBAL && !v->in_ref[lv]) {
        Diag *dg = v_report(v, E0323, lv, "global memory is written with `store`");
        diag_help(v->ctx, dg, "write `store %s <- ...`", v_text(v, lv));
        return 0;
    }
    if (t->kind == TK_TILE && t->space == SP_SHARED) {
        Diag *dg = v_report(v, E0323, lv, "`%s` is a shared-memory view; write it with `store`",
                            v_text(v, lv));
        (void)dg;
        return 0;
    }
    return 1;
}

/* `f = ldmatrix(view)`: the target layout decides which dim must be contiguous (7.4) */
static void ldmatrix_form(Ver *v, NodeId val, TypeId tdst)
{
    const Node *n = N(v, val);
    if ((n->op != OP_LDMATRIX && n->op != OP_LDMATRIX_T) || n->n != 1)
        return;
    const Type *d = vt(v, tdst);
    NodeId view = arg(v, val, 0);
    int trans_view = T(v, view)->transposed;
    if (d->layout != LY_MMA_A && d->layout != LY_WGMMA_A && d->layout != LY_MMA_B) {
        Diag *dg = v_report(v, E0317, val, "`ldmatrix` fills mma_a, mma_b or wgmma_a fragments; "
                            "the destination is %s", vt_str(v, tdst));
        (void)dg;
        return;
    }
    /* plain ldmatrix needs K contiguous: A [M, K] not transposed, B [K, N] a ^T view */
    int k_contig = d->layout == LY_MMA_B ? trans_view : !trans_view;
    int plain = n->op == OP_LDMATRIX;
    if (plain == k_contig)
        return;
    const char *other = plain ? "ldmatrix.trans" : "ldmatrix";
    Diag *dg = v_report(v, E0336, val, "`%s` into %s layout needs %s contiguous, but `%s` has %s "
                        "contiguous", plain ? "ldmatrix" : "ldmatrix.trans", ir_layout_names[d->layout],
                        plain ? "K" : (d->layout == LY_MMA_B ? "N" : "M"), v_text(v, view),
                        k_contig ? "K" : (d->layout == LY_MMA_B ? "N" : "M"));
    diag_help(v->ctx, dg, "use `%s(%s)`", other, v_text(v, view));
    Span sp = v_span(v, val);
    const SourceFile *f = sp.file < v->ctx->nfiles ? &v->ctx->files[sp.file] : NULL;
    uint32_t len = plain ? 8 : 14;
    if (f && sp.lo + len <= f->len && !strncmp(f->text + sp.lo, plain ? "ldmatrix" : "ldmatrix.trans", len))
        diag_fixit(v->ctx, dg, (Span){sp.file, sp.lo, sp.lo + len}, other);
}

static void assign_stmt(Ver *v, NodeId s)
{
    Node *n = N(v, s);
    TypeId tl = expr(v, n->a);
    expr(v, n->b);
    if (!tl || v_err(v, n->a) || !known(v, n->b))
        return;
    if (!lvalue_ok(v, n->a))
        return;
    NodeId decl = v_root_decl(v, n->a);
    const char *what = ir_fmt(v->ctx, "assignment to `%s`", v_text(v, n->a));
    if (n->sub == OP_NONE || n->sub == 0) {
        if (assignable(v, n->b, tl, decl, what))
            ldmatrix_form(v, n->b, tl);
        return;
    }
    /* compound: x op= y is x = x op y with the same result type as x */
    if (!value_ok(v, n->b))
        return;
    const Type *L = vt(v, tl), *R = T(v, n->b);
    if (vt_is_untyped(R)) {
        adapt(v, n->b, (DType)L->dtype);
        return;
    }
    Type shape;
    if (!merge_shape(v, s, n->a, n->b, &shape))
        return;
    if (shape.kind != L->kind || shape.rank != L->rank) {
        v_report(v, E0305, n->b, "%s: %s does not fit %s", what, vt_str(v, vt_of(v, n->b)), vt_str(v, tl));
        return;
    }
    DType w = widen((DType)R->dtype, (DType)L->dtype);
    if (w != L->dtype) {
        Diag *d = v_report(v, w == DT_NONE ? E0302 : E0303, n->b, "%s: %s %s %s%s", what,
                           ir_dtypes[L->dtype].spelling, ir_ops[n->sub].spelling,
                           ir_dtypes[R->dtype].spelling,
                           w == DT_NONE ? " mixes types" : " would narrow");
        v_note_decl(v, d, decl, NULL);
        diag_help(v->ctx, d, "convert explicitly: `%s(%s)`", ir_dtypes[L->dtype].spelling,
                  v_text(v, n->b));
        diag_fixit(v->ctx, d, v_span(v, n->b), ir_fmt(v->ctx, "%s(%s)", ir_dtypes[L->dtype].spelling,
                                                      v_text(v, n->b)));
        return;
    }
    uint16_t fl = ir_ops[n->sub].flags;
    if ((fl & OF_INTONLY) && !vt_is_int_dt((DType)L->dtype))
        v_report(v, E0306, s, "`%s=` needs integers", ir_ops[n->sub].spelling);
    if (L->dtype == DT_BOOL)
        v_report(v, E0306, s, "compound assignment on bool");
}

/* the value of a store/stmatrix against its destination reference */
static void store_stmt(Ver *v, NodeId s)
{
    Node *n = N(v, s);
    TypeId td = expr(v, n->a);
    expr(v, n->b);
    if (n->c)
        expr(v, n->c);
    if (!td || v_err(v, n->a) || !known(v, n->b))
        return;
    const Type *D = vt(v, td);
    if (!is_memory(D)) {
        Diag *d = v_report(v, E0324, n->a, "`store` writes global or shared memory; `%s` is %s",
                           v_text(v, n->a), vt_str(v, td));
        diag_help(v->ctx, d, "assign registers directly: `%s = ...`", v_text(v, n->a));
        return;
    }
    if (!value_ok(v, n->b))
        return;
    const Type *V = T(v, n->b);
    NodeId decl = v_root_decl(v, n->a);
    if (n->c && known(v, n->c))
        want_bool(v, n->c, "a store mask", V->kind == TK_VECTOR ? V->lanes : 1);
    if (vt_is_untyped(V)) {
        adapt(v, n->b, (DType)D->dtype);
        return;
    }
    /* shapes: an element takes a scalar, a vector slice a vector, a tile view a tile */
    const char *what = ir_fmt(v->ctx, "store to `%s`", v_text(v, n->a));
    Type dv = view_value(D);
    if (!vector_access_ok(v, n->a, &dv))
        return;
    int ok = dv.kind == V->kind && (dv.kind != TK_VECTOR || dv.lanes == V->lanes) &&
             (dv.kind != TK_TILE || same_shape(v, &dv, V));
    if (!ok) {
        Diag *d = v_report(v, V->kind == TK_VECTOR && dv.kind == TK_VECTOR ? E0304 : E0313, n->b,
                           "%s: the destination holds %s, the value is %s", what,
                           vt_str(v, vt_intern(v, &dv)), vt_str(v, vt_of(v, n->b)));
        v_note_decl(v, d, decl, NULL);
        if (dv.kind == TK_SCALAR && V->kind == TK_VECTOR)
            diag_help(v->ctx, d, "store a vector to a slice: `X[..., i : +%u]`", V->lanes);
        else if (dv.kind == TK_SCALAR && V->kind == TK_TILE)
            diag_help(v->ctx, d, "store a tile to a view of its shape: `X[r : +R, c : +C]`");
        return;
    }
    DType sd = (DType)V->dtype, dd = (DType)D->dtype;
    if (sd != dd) { /* a store converts nothing (7.1) */
        const char *to = V->kind == TK_VECTOR ? ir_fmt(v->ctx, "%sx%u", ir_dtypes[dd].spelling, V->lanes)
                                             : ir_dtypes[dd].spelling;
        Diag *d = v_report(v, E0313, n->b, "%s: the destination holds %s, the value is %s (a store "
                           "converts nothing)", what, ir_dtypes[dd].spelling, vt_str(v, vt_of(v, n->b)));
        v_note_decl(v, d, decl, NULL);
        if (sd != DT_BOOL && dd != DT_BOOL) {
            diag_help(v->ctx, d, "convert it: `%s(%s)`", to, v_text(v, n->b));
            diag_fixit(v->ctx, d, v_span(v, n->b), ir_fmt(v->ctx, "%s(%s)", to, v_text(v, n->b)));
        }
    }
}

static void stmatrix_stmt(Ver *v, NodeId s)
{
    Node *n = N(v, s);
    TypeId td = expr(v, n->a), tv = expr(v, n->b);
    if (!td || !tv || v_err(v, n->a) || v_err(v, n->b))
        return;
    const Type *D = vt(v, td), *V = vt(v, tv);
    if (D->space != SP_SHARED || D->kind != TK_TILE || D->rank != 2) {
        v_report(v, E0324, n->a, "`stmatrix` writes a 2-D shared-memory tile, found %s", vt_str(v, td));
        return;
    }
    if (V->kind != TK_TILE || V->space != SP_REG || V->rank != 2) {
        v_report(v, E0313, n->b, "`stmatrix` stores a 2-D register fragment, found %s", vt_str(v, tv));
        return;
    }
    if (ir_dtypes[V->dtype].bits != 16 || V->dtype != D->dtype) {
        v_report(v, E0313, n->b, "`stmatrix` moves 16-bit elements of the tile's type: the tile "
                 "holds %s, the value is %s", ir_dtypes[D->dtype].spelling, vt_str(v, tv));
        return;
    }
    Type dv = view_value(D);
    if (!same_shape(v, &dv, V) || (D->shape[0] > 0 && D->shape[0] % 8) || (D->shape[1] > 0 && D->shape[1] % 8))
        v_report(v, E0305, n->b, "`stmatrix`: the destination is %s, the value is %s (8x8 blocks)",
                 vt_str(v, td), vt_str(v, tv));
}

/* cp.async dst(shared) <- src(global): per thread 4, 8 or 16 bytes, or a whole tile */
static void cp_async_stmt(Ver *v, NodeId s)
{
    Node *n = N(v, s);
    TypeId td = expr(v, n->a), ts = expr(v, n->b);
    if (n->c) {
        expr(v, n->c);
        want_bool(v, n->c, "a cp.async mask", 1);
    }
    if (!td || !ts || v_err(v, n->a) || v_err(v, n->b))
        return;
    const Type *D = vt(v, td), *S = vt(v, ts);
    if (D->space != SP_SHARED) {
        Diag *d = v_report(v, E0324, n->a, "`cp.async` writes shared memory; `%s` is %s",
                           v_text(v, n->a), vt_str(v, td));
        v_note_decl(v, d, v_root_decl(v, n->a), NULL);
        return;
    }
    if (S->space != SP_GLOBAL) {
        Diag *d = v_report(v, E0324, n->b, "`cp.async` reads global memory; `%s` is %s",
                           v_text(v, n->b), vt_str(v, ts));
        v_note_decl(v, d, v_root_decl(v, n->b), NULL);
        return;
    }
    if (D->dtype != S->dtype) {
        Diag *d = v_report(v, E0301, n->b, "`cp.async` copies bytes: the destination holds %s, "
                           "the source %s", ir_dtypes[D->dtype].spelling, ir_dtypes[S->dtype].spelling);
        v_note_decl(v, d, v_root_decl(v, n->a), NULL);
        return;
    }
    /* per thread: an element or a vector slice on both sides, of the same size */
    Type a = view_value(D), b = view_value(S);
    if (a.kind == TK_TILE || b.kind == TK_TILE) {
        NodeId at = a.kind == TK_TILE ? n->a : n->b;
        Diag *d = v_report(v, E0611, at, "`cp.async` copies 4, 8 or 16 bytes per thread; `%s` is "
                           "%s", v_text(v, at), vt_str(v, vt_of(v, at)));
        diag_help(v->ctx, d, "give each thread its 16-byte piece: `cp.async Xs[r, c : +%d] <- "
                  "X[gr, gc : +%d]`", 16 / mem_bytes(D->dtype), 16 / mem_bytes(D->dtype));
        return;
    }
    if (a.kind != b.kind || a.lanes != b.lanes) {
        v_report(v, E0305, n->b, "`cp.async`: the destination is %s, the source %s",
                 vt_str(v, vt_intern(v, &a)), vt_str(v, vt_intern(v, &b)));
        return;
    }
    if (!vector_access_ok(v, n->a, &a) || !vector_access_ok(v, n->b, &b))
        return;
}

static void const_count(Ver *v, NodeId e, const char *what)
{
    expr(v, e);
    if (!want_int(v, e, what))
        return;
    int64_t c;
    if (!v_const(v, e, &c))
        v_report(v, E0327, e, "%s `%s` must be a compile-time constant", what, v_text(v, e));
    else if (c < 0)
        v_report(v, E0327, e, "%s must not be negative, found %lld", what, (long long)c);
}

static void mbarrier_operand(Ver *v, NodeId e, const char *stmt)
{
    TypeId t = expr(v, e);
    if (!t || v_err(v, e))
        return;
    const Type *b = vt(v, t);
    if (b->kind == TK_MBARRIER && b->rank == 0)
        return;
    Diag *d = b->kind == TK_MBARRIER
        ? v_report(v, E0332, e, "`%s` is an array of mbarriers: index it, e.g. `%s[0]`",
                   v_text(v, e), v_text(v, e))
        : v_report(v, E0332, e, "`%s` needs an mbarrier, found `%s` (%s)", stmt, v_text(v, e),
                   vt_str(v, t));
    v_note_decl(v, d, v_root_decl(v, e), NULL);
}

static void stmt(Ver *v, NodeId s)
{
    if (!s)
        return;
    Node *n = N(v, s);
    switch (n->op) {
    case OP_BLOCK: block(v, s); break;
    case OP_LET: {
        TypeId t = n->a ? type_node(v, n->a, SP_REG, s) : 0;
        TypeId ti = expr(v, n->b);
        if (n->a) {
            if (t)
                assignable(v, n->b, t, s, ir_fmt(v->ctx, "initial value of `%s`", v_name(v, s)));
            set(v, s, t);
        } else if (ti && !v_err(v, n->b)) {
            const Type *it = vt(v, ti);
            int64_t c;
            if (vt_is_untyped(it) && !v_const(v, n->b, &c))
                ti = value(v, n->b);
            set(v, s, ti);   /* a let of an untyped constant is an untyped constant (3.5) */
        }
        break;
    }
    case OP_VAR: {
        TypeId t = type_node(v, n->a, SP_REG, s);
        if (n->b) {
            expr(v, n->b);
            if (t)
                assignable(v, n->b, t, s, ir_fmt(v->ctx, "initial value of `%s`", v_name(v, s)));
        }
        if (t && vt(v, t)->kind == TK_TILE) { /* var x: f32[4]: a thread's register array */
            Type ty = *vt(v, t);
            ty.scope = SC_THREAD;
            t = vt_intern(v, &ty);
        }
        set(v, s, t);
        break;
    }
    case OP_SHARED: shared_decl(v, s); break;
    case OP_REG: reg_decl(v, s); break;
    case OP_MBARRIER: mbarrier_decl(v, s); break;
    case OP_PIPELINE: pipeline_decl(v, s); break;
    case OP_ROLE: role_decl(v, s); break;
    case OP_REFERENCE: v->ref_seen = 1; block(v, n->a); break;
    case OP_ASSIGN: assign_stmt(v, s); break;
    case OP_FOR: {
        NodeId b3[3] = {n->a, n->b, n->c};
        int ok = 1;
        DType dt = DT_NONE;
        for (int i = 0; i < 3; i++) {
            if (!b3[i])
                continue;
            expr(v, b3[i]);
            if (!known(v, b3[i]))
                ok = 0;
            else if (!vt_is_int(T(v, b3[i]))) {
                want_int(v, b3[i], i == 2 ? "a loop step" : "a loop bound");
                ok = 0;
            } else if (!vt_is_untyped(T(v, b3[i]))) {
                DType d = T(v, b3[i])->kind == TK_STAGE ? DT_I32 : (DType)T(v, b3[i])->dtype;
                DType w = dt == DT_NONE ? d : widen(dt, d);
                if (w == DT_NONE) {
                    v_report(v, E0302, b3[i], "loop bounds mix %s and %s", ir_dtypes[dt].spelling,
                             ir_dtypes[d].spelling);
                    ok = 0;
                } else {
                    dt = w;
                }
            }
        }
        if (dt == DT_NONE)
            dt = DT_I32;
        for (int i = 0; i < 3; i++)
            if (b3[i] && known(v, b3[i]))
                settle(v, b3[i], dt);
        set(v, s, ok ? vt_scalar(v, dt) : 0);
        if (!ok)
            v_mark(v, s);
        int64_t st;
        if (n->c && v_const(v, n->c, &st) && st <= 0)
            v_report(v, E0308, n->c, "loop step must be positive, found %lld", (long long)st);
        block(v, n->d);
        break;
    }
    case OP_IF:
        expr(v, n->a);
        want_bool(v, n->a, "an `if` condition", 1);
        block(v, n->b);
        if (n->c)
            stmt(v, n->c);
        break;
    case OP_EXPRSTMT: value(v, n->a); break;
    case OP_STORE: store_stmt(v, s); break;
    case OP_CP_ASYNC: cp_async_stmt(v, s); break;
    case OP_CP_WAIT: const_count(v, n->a, "cp.async.wait's group count"); break;
    case OP_TMA_WAIT: const_count(v, n->a, "tma.store.wait's group count"); break;
    case OP_WGMMA_WAIT: const_count(v, n->a, "wgmma.wait's group count"); break;
    case OP_TMA_LOAD: case OP_TMA_STORE:
        expr(v, n->a);
        expr(v, n->b);
        if (n->c)
            expr(v, n->c);  /* the rest is tma.c's */
        break;
    case OP_STMATRIX: stmatrix_stmt(v, s); break;
    case OP_BAR_SYNC: case OP_BAR_ARRIVE:
        expr(v, n->a);
        want_int(v, n->a, "a named barrier id");
        expr(v, n->b);
        want_int(v, n->b, "a barrier thread count");
        break;
    case OP_MB_ARRIVE: mbarrier_operand(v, n->a, "mbarrier.arrive"); break;
    case OP_MB_EXPECT:
        mbarrier_operand(v, n->a, "mbarrier.expect_tx");
        expr(v, n->b);
        want_int(v, n->b, "a transaction byte count");
        break;
    case OP_MB_WAIT:
        mbarrier_operand(v, n->a, "mbarrier.wait");
        expr(v, n->b);
        want_int(v, n->b, "a phase parity");
        break;
    case OP_MMA: case OP_WGMMA: case OP_MFMA: tc_stmt(v, s); break;
    default:
        if (ir_ops[n->op].cls != OC_STMT)
            value(v, s);  /* an expression where a statement was expected: type it anyway */
        break;
    }
}

static void block(Ver *v, NodeId b)
{
    if (!b)
        return;
    Node *n = N(v, b);
    if (n->op != OP_BLOCK) {
        stmt(v, b);
        return;
    }
    for (uint32_t i = 0; i < n->n; i++)
        stmt(v, arg(v, b, i));
}

/* ---- the kernel header --------------------------------------------- */

static void header(Ver *v)
{
    Kernel *k = v->k;
    for (uint32_t i = 0; i < k->nparams; i++) {
        NodeId p = k->params[i];
        expr(v, N(v, p)->a);
        if (want_int(v, N(v, p)->a, "a parameter default")) {
            int64_t c;
            if (!v_const(v, N(v, p)->a, &c))
                v_report(v, E0327, N(v, p)->a, "parameter `%s` needs a constant default",
                         v_name(v, p));
        }
        set(v, p, v->t_i32);
    }
    for (uint32_t i = 0; i < k->ndims; i++)
        set(v, k->dims[i], vt_scalar(v, DT_I64));
    for (uint32_t i = 0; i < k->nargs; i++) {
        NodeId a = k->args[i];
        NodeId tn = N(v, a)->a;
        if (!tn)
            continue;
        Node *t = N(v, tn);
        if (t->op == OP_TYPE) {
            set(v, a, type_node(v, tn, SP_PARAM, a));
            continue;
        }
        Type g = blank(TK_TENSOR);
        g.dtype = t->dtype;
        g.lanes = t->lanes;
        g.space = SP_GLOBAL;
        g.align = t->v.attr.align;
        uint32_t nd = t->sub;
        if (nd > IR_MAX_RANK) {
            v_report(v, E0328, tn, "global tensors have at most %d dimensions here, found %u",
                     IR_MAX_RANK, nd);
            v_mark(v, a);
            continue;
        }
        g.rank = (uint8_t)nd;
        for (uint32_t j = 0; j < t->n; j++) {
            NodeId d = arg(v, tn, j);
            expr(v, d);
            want_int(v, d, j < nd ? "a tensor extent" : "a tensor stride");
            if (j < nd) {
                g.dims[j] = d;
                g.shape[j] = const_or(v, d, -1);
            }
        }
        if (t->n > nd && t->n != 2 * nd)
            v_report(v, E0328, tn, "%u strides for a tensor of rank %u", t->n - nd, nd);
        if (g.align && (g.align & (g.align - 1)))
            v_report(v, E0334, tn, "alignment %u is not a power of two", g.align);
        set(v, tn, vt_intern(v, &g));
        set(v, a, vt_intern(v, &g));
    }
    for (uint32_t i = 0; i < k->nassumes; i++) {
        NodeId e = k->assumes[i];
        expr(v, e);
        want_bool(v, e, "an assume", 1);
    }
    for (uint32_t i = 0; i < k->ngrid; i++) {
        NodeId e = k->grid[i];
        expr(v, e);
        want_int(v, e, "a grid extent");
    }
    if (k->block_size) {
        expr(v, k->block_size);
        if (want_int(v, k->block_size, "the block size")) {
            int64_t c;
            if (!v_const(v, k->block_size, &c))
                v_report(v, E0329, k->block_size, "the block size `%s` must be a compile-time "
                         "constant", v_text(v, k->block_size));
            else if (c < 1)
                v_report(v, E0329, k->block_size, "the block size must be at least 1, found %lld",
                         (long long)c);
        }
    }
}

/* grid extents: only dims, params and constants (they are evaluated on the host) */
static void host_only(Ver *v, NodeId e, void *arg_)
{
    NodeId *bad = arg_;
    const Node *n = N(v, e);
    if (*bad)
        return;
    if (n->op == OP_SPECIAL || n->op == OP_LOAD ||
        (n->op == OP_NAME && n->decl && N(v, n->decl)->op != OP_PARAM &&
         N(v, n->decl)->op != OP_DIM && N(v, n->decl)->op != OP_ARG))
        *bad = e;
    if (n->op == OP_NAME && n->decl && N(v, n->decl)->op == OP_ARG &&
        vt(v, vt_of(v, n->decl))->kind == TK_TENSOR)
        *bad = e;
}

static void settle_all(Ver *v, NodeId e, void *arg_)
{
    (void)arg_;
    if (vt_is_untyped(T(v, e)))
        settle(v, e, default_for(v, e));
}

void ver_types(Ver *v)
{
    Kernel *k = v->k;
    Type t = blank(TK_SCALAR);
    t.layout = VT_UNTYPED_INT;
    v->t_uint = vt_intern(v, &t);
    t.layout = VT_UNTYPED_FLOAT;
    v->t_ufloat = vt_intern(v, &t);
    v->t_bool = vt_scalar(v, DT_BOOL);
    v->t_i32 = vt_scalar(v, DT_I32);
    Type vd = blank(TK_VOID);
    v->t_void = vt_intern(v, &vd);
    header(v);
    for (uint32_t i = 0; i < k->ngrid; i++) {
        NodeId bad = 0;
        v_walk(v, k->grid[i], host_only, &bad);
        if (bad && !v_err(v, k->grid[i])) {
            Diag *d = v_report(v, E0329, bad, "grid extents are computed at launch from dims and "
                               "parameters; `%s` is not one", v_text(v, bad));
            diag_help(v->ctx, d, "write the grid from tensor dims and kernel parameters, e.g. "
                                 "`grid [cdiv(M, BM)]`");
        }
    }
    block(v, k->body);
    if (k->reference && !v->ref_seen)
        block(v, k->reference);
    for (NodeId n = 1; n < k->nnodes; n++)
        settle_all(v, n, NULL);
}
