/* types_expr.c — the type check of expressions (part of types.c's pass):
 * dtype widening and the adaptation of untyped constants, elementwise shapes,
 * operators, casts, builtins, reductions and names; ty_expr is the entry point
 * for any expression. */
#include "types_priv.h"

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
DType ty_widen(DType a, DType b)
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
void ty_settle(Ver *v, NodeId e, DType dt)
{
    if (!e || !vt_is_untyped(T(v, e)))
        return;
    Node *n = N(v, e);
    set(v, e, vt_scalar(v, dt));
    ty_settle(v, n->a, dt);
    ty_settle(v, n->b, dt);
    ty_settle(v, n->c, dt);
    for (uint32_t i = 0; i < n->n; i++)
        ty_settle(v, arg(v, e, i), dt);
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
DType ty_default_for(Ver *v, NodeId e)
{
    const Type *t = T(v, e);
    int64_t c;
    if (t->layout == VT_UNTYPED_FLOAT)
        return DT_F32;
    return v_const(v, e, &c) && !fits(c, DT_I32) ? DT_I64 : DT_I32;
}

/* makes untyped e take dtype dt; reports when it cannot. Returns 0 on error. */
int ty_adapt(Ver *v, NodeId e, DType dt)
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
         * then converted (the code generator folds it: ce_const_int) */
        ty_settle(v, e, DT_I64);
        set(v, e, vt_scalar(v, dt));
        return 1;
    }
    ty_settle(v, e, dt);
    return 1;
}

/* integer operand (index, bound, count): settles untyped to i32 */
int ty_want_int(Ver *v, NodeId e, const char *what)
{
    if (!known(v, e))
        return 0;
    const Type *t = T(v, e);
    if (vt_is_int(t)) {
        if (vt_is_untyped(t))
            ty_settle(v, e, ty_default_for(v, e));
        return 1;
    }
    Diag *d = v_report(v, E0308, e, "%s must be an integer, found %s", what, vt_str(v, vt_of(v, e)));
    if (t->kind == TK_SCALAR && vt_is_float_dt(t->dtype))
        diag_help(v->ctx, d, "convert it: `i32(%s)`", v_text(v, e));
    return 0;
}

int ty_want_bool(Ver *v, NodeId e, const char *what, int lanes)
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

int ty_same_shape(Ver *v, const Type *a, const Type *b)
{
    if (a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (!vt_same_extent(v, a, i, b, i))
            return 0;
    return 1;
}

const char *ty_ext_str(Ver *v, const Type *t, int i)
{
    int j = lx(t, i);
    if (t->shape[j] >= 0)
        return ir_fmt(v->ctx, "%lld", (long long)t->shape[j]);
    return t->dims[j] ? v_text(v, t->dims[j]) : "?";
}

/* a ty_value (not a memory view) of a tile/vector/scalar type */
int ty_value_ok(Ver *v, NodeId e)
{
    const Type *t = T(v, e);
    if (t->kind == TK_TILE && t->space == SP_REG)
        return 1;
    if ((t->kind == TK_SCALAR || t->kind == TK_VECTOR) && t->space == SP_GLOBAL && !v->in_ref[e]) {
        Diag *d = v_report(v, E0323, e, "`%s` names a global memory location, not a value",
                           v_text(v, e));
        diag_help(v->ctx, d, "read it with `load %s`", v_text(v, e));
        diag_fixit(v->ctx, d, v_span(v, e), ir_fmt(v->ctx, "load %s", v_source(v, e)));
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
int ty_merge_shape(Ver *v, NodeId e, NodeId a, NodeId b, Type *out)
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
        if (ty_same_shape(v, ta, tb))
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
        return ty_adapt(v, a, db);
    }
    if (ub) {
        *out = da;
        return ty_adapt(v, b, da);
    }
    DType w = ty_widen(da, db);
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
    TypeId ta = ty_expr(v, n->a), tb = ty_expr(v, n->b);
    if (!ta || !tb || v_err(v, n->a) || v_err(v, n->b))
        return 0;
    if (!ty_value_ok(v, n->a) || !ty_value_ok(v, n->b))
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
            ty_settle(v, n->b, v->in_ref[e] && !vt_is_int(T(v, n->b)) ? DT_F64 : DT_I32);
        if (vt_is_untyped(tb0))
            return vt_of(v, n->a);
        return with_dtype(v, *tb0, (DType)tb0->dtype);
    }
    Type shape;
    if (!ty_merge_shape(v, e, n->a, n->b, &shape))
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
    TypeId ta = ty_expr(v, n->a);
    if (!ta || v_err(v, n->a) || !ty_value_ok(v, n->a))
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

/* ---- casts and builtins ---------------------------------------------- */

static TypeId cast_expr(Ver *v, NodeId e)
{
    Node *n = N(v, e);
    TypeId ta = ty_expr(v, n->a);
    if (!ta || v_err(v, n->a) || !ty_value_ok(v, n->a))
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
            ty_settle(v, n->a, DT_F32);
        } else if (vt_is_float_dt((DType)n->dtype) && t->layout == VT_UNTYPED_INT &&
                   !exact_in_float(v, n->a)) {   /* f32(BM / 3): integer arithmetic first */
            ty_settle(v, n->a, DT_I32);
        } else {
            ty_settle(v, n->a, (DType)n->dtype);
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
    if (!ty_value_ok(v, a))
        return 0;
    for (uint32_t i = first + 1; i < first + count; i++) {
        NodeId b = arg(v, e, i);
        if (!ty_value_ok(v, b))
            return 0;
        Type shape;
        DType dt;
        int untyped;
        /* compare against a representative node of the accumulated type */
        NodeId rep = arg(v, e, first);
        TypeId save = vt_of(v, rep);
        set(v, rep, acc);
        int ok = ty_merge_shape(v, e, rep, b, &shape) && unify(v, e, rep, b, &dt, &untyped);
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
            if (!ty_adapt(v, arg(v, e, i), (DType)r->dtype))
                return 0;
    return acc;
}

static TypeId builtin(Ver *v, NodeId e)
{
    Node *n = N(v, e);
    int want = ir_ops[n->op].nargs;
    int bad = 0;
    for (uint32_t i = 0; i < n->n; i++) {
        ty_expr(v, arg(v, e, i));
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
        if (!ty_value_ok(v, a0))
            return 0;
        TypeId r = elementwise(v, e, 1, 2);
        if (!r)
            return 0;
        const Type *rt = vt(v, r);
        if (vt_is_untyped(rt)) {
            ty_settle(v, arg(v, e, 1), default_dt(rt));
            ty_settle(v, arg(v, e, 2), default_dt(rt));
            r = vt_scalar(v, default_dt(rt));
            rt = vt(v, r);
        }
        if (!ty_want_bool(v, a0, "the condition of select", rt->kind == TK_VECTOR ? rt->lanes : 1)) {
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
    case OP_HSUM: case OP_HMAX: case OP_HMIN:
        if (t0->kind != TK_VECTOR) {
            Diag *d = v_report(v, E0320, a0, "`%s` takes a vector, found %s", name, vt_str(v, vt_of(v, a0)));
            if (t0->kind == TK_TILE)
                diag_help(v->ctx, d, "reduce tiles with rowsum/rowmax or colsum/colmax");
            return 0;
        }
        /* hsum of 16-bit float lanes accumulates in f32 and returns f32 (tir.md 3.2, 9.4);
           hmax and hmin are exact in the lane type */
        if (n->op == OP_HSUM && (t0->dtype == DT_F16 || t0->dtype == DT_BF16))
            return vt_scalar(v, DT_F32);
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
        if (!ty_value_ok(v, a0) || t0->kind == TK_TILE) {
            if (t0->kind == TK_TILE)
                v_report(v, E0314, a0, "`%s` moves scalars or vectors between lanes, found %s",
                         name, vt_str(v, vt_of(v, a0)));
            return 0;
        }
        if (!ty_want_int(v, arg(v, e, 1), "a lane or lane offset"))
            return 0;
        if (vt_is_untyped(t0))
            ty_settle(v, a0, default_dt(t0));
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
            ty_settle(v, a0, default_dt(t0));
        if (T(v, a0)->dtype == DT_BOOL) {
            v_report(v, E0314, a0, "`%s` reduces numbers, found bool", name);
            return 0;
        }
        return vt_scalar(v, (DType)T(v, a0)->dtype);
    }
    if (fl & OF_MATH) { /* exp .. cos: floats */
        if (!ty_value_ok(v, a0))
            return 0;
        if (vt_is_untyped(t0)) {
            ty_settle(v, a0, DT_F32);
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
    ty_expr(v, n->a);
    ty_expr(v, n->b);
    TypeId tc = ty_expr(v, n->c);
    ty_want_int(v, n->a, "a reduction bound");
    ty_want_int(v, n->b, "a reduction bound");
    if (!v->in_ref[e]) {
        Diag *d = v_report(v, E0325, e, "`%s(k in ...)` is only allowed in a reference block",
                           ir_ops[n->op].spelling);
        diag_help(v->ctx, d, "in the kernel body, reduce with reduce.warp.*, reduce.block.* or "
                             "rowsum/rowmax");
        return 0;
    }
    if (!tc || v_err(v, n->c) || !ty_value_ok(v, n->c))
        return 0;
    const Type *t = vt(v, tc);
    if (t->kind != TK_SCALAR || t->dtype == DT_BOOL) {
        v_report(v, E0314, n->c, "a reduction body must be a number, found %s", vt_str(v, tc));
        return 0;
    }
    return tc;
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

TypeId ty_expr(Ver *v, NodeId e)
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
    case OP_INDEX: t = ty_index_expr(v, e); break;
    case OP_TRANS: t = ty_trans_expr(v, e); break;
    case OP_NEG: case OP_NOT: t = unary(v, e); break;
    case OP_CAST: t = cast_expr(v, e); break;
    case OP_LOAD: t = ty_load_expr(v, e); break;
    case OP_SUM: case OP_RMAX: case OP_RMIN: t = reduction(v, e); break;
    case OP_FIELD: ty_expr(v, n->a); break;   /* unknown member: reported by resolution */
    default:
        switch (ir_ops[n->op].cls) {
        case OC_BIN: t = binary(v, e); break;
        case OC_BUILTIN: t = builtin(v, e); break;
        case OC_PIPE: t = ty_pipe_member(v, e); break;
        default: break;
        }
    }
    return set(v, e, t);
}

/* a value expression whose untyped constants take their default type */
TypeId ty_value(Ver *v, NodeId e)
{
    TypeId t = ty_expr(v, e);
    if (t && vt_is_untyped(vt(v, t))) {
        ty_settle(v, e, ty_default_for(v, e));
        t = vt_of(v, e);
    }
    return t;
}
