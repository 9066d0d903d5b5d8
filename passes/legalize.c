/* legalize.c — the legalize pass: settles the type of every expression of the
 * kernel body and turns every implicit conversion into an explicit OP_CAST, so
 * that code generation reads Node.type and converts only at casts.
 *
 * THE INVARIANT. After legalize, for every node reachable from the kernel body
 * and from the extents and strides of the tensor arguments (not the reference
 * block: it is the oracle's), code generation and every later pass may assume:
 *  1. Node.type is set and final. A value is TK_SCALAR or TK_VECTOR (TK_TILE for
 *     register tiles and views, TK_STAGE for pipeline tokens). No type is
 *     untyped; no param is left (bind-params made them literals).
 *  2. An INT literal has an integer type, a FLOAT literal a float type, a BOOL
 *     literal bool; Node.dtype of a literal is its type's dtype. A literal is a
 *     scalar: a vector of it is a CAST.
 *  3. A NAME has the type of its declaration (LET, VAR, REG, SHARED, ARG, DIM,
 *     FOR: the declaration's Node.type). A dim is i64 (the verifier's type); it
 *     is passed as i32 and extended once, at the kernel's entry.
 *  4. An operand has exactly the type its consumer computes in, lanes included
 *     (a scalar operand of a vector operation is broadcast by a CAST):
 *       + - * / % << >> & | ~ && || unary - ! abs min max fma cdiv, the math
 *       builtins, select's two values, shfl's value, reduce.warp/block.*: the
 *       node's type;
 *       comparisons: both operands have one type (their common widening), the
 *       result is bool (boolxL for vectors);
 *       x ^ e: x has the node's type, e is a constant integer;
 *       dot(a, b): a and b are vectors of the result's dtype; hsum(v), hmax(v), hmin(v):
 *       v is a vector of the result's dtype (so 16-bit lanes are cast to f32
 *       before hsum and dot: that is their f32 accumulation, tir.md 3.2);
 *       shfl's lane or offset, barrier ids and counts: i32;
 *       conditions of if and select, masks: bool (select: a scalar, or boolxL
 *       for L-lane values);
 *       for: lo, hi and step have the FOR node's type, which its variable has;
 *       let, var and reg initializers: the declared type (an array's: its
 *       element type, scalar or vector);
 *       assignments (x = y and x op= y): y has the type of the place x;
 *       store: the value has the destination's value type (its element, or a
 *       vector of the slice's extent).
 *  5. A LOAD has no `as` type: it yields the elements as memory holds them (a
 *     scalar, or a vector of the slice's extent); a converting load is
 *     CAST(LOAD). A float node over integer constants (`x * (BM / 2)`) is a
 *     FLOAT literal: the constant was folded with integer arithmetic.
 *  6. Indices, slice starts, tensor extents and strides are integers of their
 *     own type (i32, i64, ...): addressing extends each to i64 (sign-extends a
 *     signed type, zero-extends an unsigned one). That is addressing, not a
 *     conversion of a value.
 *  7. Every other change of type is an OP_CAST node: its operand's type -> its
 *     own type.
 * Tiles (register tiles with a layout, shared and global views) keep only the
 * dtype part of rule 4: an operand's element dtype is cast, but a scalar or row
 * vector operand of a tile operation still broadcasts as tir.md 9.3 says; the
 * tile passes (distribute) make that explicit.
 * A pass that creates or rewrites nodes after legalize keeps the invariant:
 * it types new nodes with ir_type_scalar / ir_type_intern and inserts a CAST
 * where a value changes type. New nodes take the span of the node they come
 * from. */
#include "passes.h"

typedef struct {
    CakeCtx *ctx;
    Kernel *k;
    uint32_t nold;    /* nodes before the pass: the ones to legalize */
    uint8_t *done;    /* per old node: legalized already */
} Lg;

static void stmt(Lg *l, NodeId s);
static NodeId expr(Lg *l, NodeId e);

static Node *N(Lg *l, NodeId n) { return &l->k->nodes[n]; }
static const Type *T(Lg *l, NodeId n) { return &l->k->types[l->k->nodes[n].type]; }
static NodeId arg(Lg *l, NodeId n, uint32_t i) { return ir_list_at(l->k, N(l, n), i); }
static void set_arg(Lg *l, NodeId n, uint32_t i, NodeId v) { l->k->lists[N(l, n)->list + i] = v; }

static int is_float(DType d) { return ir_dtypes[d].kind == 'f'; }
static int is_int(DType d) { return ir_dtypes[d].kind == 'i' || ir_dtypes[d].kind == 'u'; }
static int is_value(const Type *t) { return t->kind == TK_SCALAR || t->kind == TK_VECTOR; }

/* ---- types ------------------------------------------------------------ */

static TypeId scalar(Lg *l, DType dt, int lanes) { return ir_type_scalar(l->ctx, l->k, dt, lanes); }

/* the tile (or view) type t with element dtype dt, as a register value */
static TypeId tile_of(Lg *l, const Type *t, DType dt)
{
    Type r = *t;
    r.dtype = (uint8_t)dt;
    r.space = SP_REG;
    r.transposed = 0;
    r.swizzle = 0;
    r.align = 0;
    return ir_type_intern(l->ctx, l->k, &r);
}

/* the type operand x takes in an operation computing in type `to`: `to` itself
 * for scalars and vectors (a scalar is broadcast), only `to`'s dtype for tiles */
static TypeId like(Lg *l, NodeId x, TypeId to)
{
    const Type *t = &l->k->types[to], *xt = T(l, x);
    if (t->kind == TK_TILE || xt->kind == TK_TILE)
        return xt->kind == TK_TILE ? tile_of(l, xt, (DType)t->dtype) : scalar(l, (DType)t->dtype, 1);
    return scalar(l, (DType)t->dtype, t->lanes);
}

/* the value a place of type t holds or a memory view reads as: the element, a
 * vector of a 1-D slice of 2..16 elements, or a register tile */
static TypeId value_of(Lg *l, const Type *t)
{
    if (t->kind == TK_SCALAR || t->kind == TK_VECTOR || t->kind == TK_STAGE)
        return scalar(l, (DType)t->dtype, t->lanes);
    int64_t n = t->shape[0];
    if (t->rank == 1 && t->lanes == 1 && (n == 1 || n == 2 || n == 4 || n == 8 || n == 16))
        return scalar(l, (DType)t->dtype, (int)n);
    return tile_of(l, t, (DType)t->dtype);
}

/* one element of an array type (reg xs: f32x8[4] -> f32x8) */
static TypeId elem_of(Lg *l, const Type *t)
{
    return scalar(l, (DType)t->dtype, t->lanes);
}

/* the common dtype of two operands the verifier accepted: the wider one */
static DType common(Lg *l, DType a, DType b, NodeId at)
{
    if (a == b)
        return a;
    if (is_float(a) != is_float(b) || a == DT_BOOL || b == DT_BOOL ||
        ir_dtypes[a].bits == ir_dtypes[b].bits)
        ir_bug(l->ctx, "legalize: node %u mixes %s and %s (the verifier rejects that)", at,
               ir_dtypes[a].spelling, ir_dtypes[b].spelling);
    return ir_dtypes[a].bits > ir_dtypes[b].bits ? a : b;
}

/* does x already have type want (for tiles: its dtype)? */
static int same(Lg *l, NodeId x, TypeId want)
{
    const Type *a = T(l, x), *b = &l->k->types[want];
    if (a->kind == TK_TILE || b->kind == TK_TILE)
        return a->dtype == b->dtype;
    if (a->kind == TK_STAGE)   /* a stage token is an i32 */
        return b->kind == TK_SCALAR && b->dtype == DT_I32;
    return a->dtype == b->dtype && a->lanes == b->lanes && a->kind == b->kind;
}

/* ---- casts and literals ------------------------------------------------ */

/* a literal node of type t holding integer value c (t float: the value converted) */
static void make_literal(Lg *l, NodeId n, TypeId t, int64_t c)
{
    Node *x = N(l, n);
    DType dt = (DType)l->k->types[t].dtype;
    x->op = (uint16_t)(is_float(dt) ? OP_FLOAT : dt == DT_BOOL ? OP_BOOL : OP_INT);
    if (is_float(dt))
        x->v.f = (double)c;
    else
        x->v.i = dt == DT_BOOL ? c != 0 : c;
    x->a = x->b = x->c = x->d = 0;
    x->list = x->n = 0;
    x->decl = 0;
    x->name = 0;
    x->dtype = (uint8_t)dt;
    x->lanes = 1;
    x->type = t;
}

/* x as a value of type want: x itself, x retyped (a scalar literal), or CAST(x) */
static NodeId coerce(Lg *l, NodeId x, TypeId want)
{
    if (!x || !N(l, x)->type || !want || same(l, x, want))
        return x;
    const Type *w = &l->k->types[want];
    Node *n = N(l, x);
    if (w->kind == TK_SCALAR && (n->op == OP_INT || (n->op == OP_FLOAT && is_float((DType)w->dtype)))) {
        if (n->op == OP_INT)
            make_literal(l, x, want, n->v.i);
        else
            n->type = want, n->dtype = w->dtype;
        return x;
    }
    NodeId c = ir_node(l->ctx, l->k, OP_CAST, N(l, x)->span);
    Node *cn = N(l, c);
    cn->a = x;
    cn->dtype = w->dtype;
    cn->lanes = w->kind == TK_TILE ? T(l, x)->lanes : w->lanes;
    cn->type = want;
    return c;
}

/* a node of float type over integer-typed children is an untyped integer
 * constant used as a float (verify.h): fold it into a FLOAT literal */
static int fold_int_constant(Lg *l, NodeId e)
{
    Node *n = N(l, e);
    const Type *t = T(l, e);
    if (t->kind != TK_SCALAR || !is_float((DType)t->dtype) || n->op == OP_CAST || n->op == OP_LOAD)
        return 0;
    NodeId kid = n->a;
    if (!kid && n->n && ir_ops[n->op].cls == OC_BUILTIN)   /* cdiv(BM, 3), max(..) */
        kid = arg(l, e, 0);
    if (!kid || !N(l, kid)->type || !is_int((DType)T(l, kid)->dtype) || T(l, kid)->kind != TK_SCALAR)
        return 0;
    int64_t c;
    if (!ce_const_int(l->ctx, l->k, e, &c)) {
        Diag *d = diag_report(l->ctx, E0904, n->span, "this integer constant cannot be "
                              "evaluated at compile time (division by zero or overflow)");
        diag_help(l->ctx, d, "check the parameters it uses");
        return 1;
    }
    make_literal(l, e, n->type, c);
    return 1;
}

/* the value of a constant expression of literals (+ - * / and negation), exact in fp64 */
static int float_constant(Lg *l, NodeId e, double *v, int depth)
{
    const Node *n = N(l, e);
    double a, b;
    if (n->op == OP_FLOAT || n->op == OP_INT)
        return *v = n->op == OP_FLOAT ? n->v.f : (double)n->v.i, 1;
    if (depth > 64 || !n->a || !float_constant(l, n->a, &a, depth + 1))
        return 0;
    if (n->op == OP_NEG)
        return *v = -a, 1;
    if (!n->b || !float_constant(l, n->b, &b, depth + 1))
        return 0;
    switch (n->op) {
    case OP_ADD: *v = a + b; return 1;
    case OP_SUB: *v = a - b; return 1;
    case OP_MUL: *v = a * b; return 1;
    case OP_DIV: *v = a / b; return 1;
    default: return 0;
    }
}

/* e4m3, e5m2 and tf32 have no arithmetic (tir.md 3.1): a constant expression
 * of float literals typed as one of them (`e5m2(-2.0)`, `let c: e4m3 = 1.0 / 4.0`)
 * is evaluated exactly and becomes one literal of the type, rounded once */
static int fold_storage_constant(Lg *l, NodeId e)
{
    Node *n = N(l, e);
    const Type *t = T(l, e);
    DType dt = (DType)t->dtype;
    double v;
    if (t->kind != TK_SCALAR || (dt != DT_E4M3 && dt != DT_E5M2 && dt != DT_TF32) ||
        n->op == OP_FLOAT || n->op == OP_INT || !float_constant(l, e, &v, 0))
        return 0;
    TypeId ty = n->type;
    make_literal(l, e, ty, 0);
    N(l, e)->v.f = v;
    return 1;
}

/* a NAME takes its declaration's type; a constant `let` used at another type
 * (an untyped constant, tir.md 3.5) becomes a literal of that type */
static NodeId name(Lg *l, NodeId e)
{
    Node *n = N(l, e);
    NodeId d = n->decl;
    if (!d || d == e || !N(l, d)->type || !n->type || n->type == N(l, d)->type)
        return e;
    TypeId use = n->type;
    int64_t c;
    if (N(l, d)->op == OP_LET && T(l, e)->kind == TK_SCALAR && ce_const_int(l->ctx, l->k, e, &c)) {
        make_literal(l, e, use, c);
        return e;
    }
    n->type = N(l, d)->type;
    return coerce(l, e, use);
}

/* ---- expressions --------------------------------------------------------- */

enum { KID_A, KID_B, KID_C };

static NodeId *kid(Lg *l, NodeId n, int which)
{
    Node *x = N(l, n);
    return which == KID_A ? &x->a : which == KID_B ? &x->b : &x->c;
}

/* legalizes child `which` of e, then makes it a value of type want (0: as it is) */
static void child(Lg *l, NodeId e, int which, TypeId want)
{
    NodeId x = expr(l, *kid(l, e, which));
    if (want)
        x = coerce(l, x, want);
    *kid(l, e, which) = x;   /* re-fetched: expr and coerce may move the nodes */
}

static void list_arg(Lg *l, NodeId e, uint32_t i, TypeId want)
{
    NodeId x = expr(l, arg(l, e, i));
    set_arg(l, e, i, want ? coerce(l, x, want) : x);
}

/* the expressions of a memory reference (indices, slices) and its base */
static void reference(Lg *l, NodeId r)
{
    if (!r || N(l, r)->op != OP_INDEX) {
        if (r)
            (void)expr(l, r);
        return;
    }
    child(l, r, KID_A, 0);
    for (uint32_t i = 0; i < N(l, r)->n; i++) {
        NodeId ix = arg(l, r, i);
        if (N(l, ix)->op == OP_SLICE) {
            child(l, ix, KID_A, 0);
            child(l, ix, KID_B, 0);
        } else if (N(l, ix)->op != OP_COLON) {
            list_arg(l, r, i, 0);
        }
    }
}

static void binary(Lg *l, NodeId e)
{
    Node *n = N(l, e);
    uint16_t fl = ir_ops[n->op].flags;
    child(l, e, KID_A, 0);   /* the operands first, then their types */
    child(l, e, KID_B, 0);
    n = N(l, e);
    if (!T(l, n->a)->kind || !T(l, n->b)->kind)
        return;
    if (n->op == OP_POW) {   /* the exponent stays a constant integer */
        child(l, e, KID_A, like(l, n->a, n->type));
        return;
    }
    TypeId to = n->type;
    if (fl & OF_CMP) {   /* both sides in their common type */
        const Type *ta = T(l, n->a), *tb = T(l, n->b);
        DType dt = common(l, (DType)ta->dtype, (DType)tb->dtype, e);
        if (ta->kind == TK_TILE || tb->kind == TK_TILE) {
            child(l, e, KID_A, like(l, n->a, scalar(l, dt, 1)));
            child(l, e, KID_B, like(l, N(l, e)->b, scalar(l, dt, 1)));
            return;
        }
        to = scalar(l, dt, ta->lanes > tb->lanes ? ta->lanes : tb->lanes);
    }
    child(l, e, KID_A, like(l, N(l, e)->a, to));
    child(l, e, KID_B, like(l, N(l, e)->b, to));
}

/* a builtin call: its arguments in the types its result says (rule 4) */
static void builtin(Lg *l, NodeId e)
{
    Node *n = N(l, e);
    Op op = (Op)n->op;
    TypeId t = n->type;
    uint32_t cnt = n->n;
    for (uint32_t i = 0; i < cnt; i++)
        list_arg(l, e, i, 0);
    if (!t || !is_value(&l->k->types[t]))
        return;
    DType dt = (DType)l->k->types[t].dtype;
    switch (op) {
    case OP_SELECT:
        for (uint32_t i = 1; i < cnt; i++)
            list_arg(l, e, i, like(l, arg(l, e, i), t));
        return;
    case OP_DOT: case OP_HSUM: case OP_HMAX: case OP_HMIN: { /* vectors of the result's dtype */
        int lanes = 1;
        for (uint32_t i = 0; i < cnt; i++)
            if (T(l, arg(l, e, i))->lanes > lanes)
                lanes = T(l, arg(l, e, i))->lanes;
        for (uint32_t i = 0; i < cnt; i++)
            set_arg(l, e, i, coerce(l, arg(l, e, i), scalar(l, dt, lanes)));
        return;
    }
    case OP_SHFL_XOR: case OP_SHFL_DOWN: case OP_SHFL_UP: case OP_SHFL_IDX:
        if (cnt == 2) {
            set_arg(l, e, 0, coerce(l, arg(l, e, 0), t));
            set_arg(l, e, 1, coerce(l, arg(l, e, 1), scalar(l, DT_I32, 1)));
        }
        return;
    default: break;
    }
    if (ir_ops[op].flags & (OF_MATH | OF_WARP | OF_BLOCK) || op == OP_CDIV)
        for (uint32_t i = 0; i < cnt; i++)
            set_arg(l, e, i, coerce(l, arg(l, e, i), like(l, arg(l, e, i), t)));
}

/* load ref [as T] [mask c]: the load yields the memory's elements; `as T` is a CAST */
static NodeId load(Lg *l, NodeId e)
{
    reference(l, N(l, e)->a);
    if (N(l, e)->b)
        child(l, e, KID_B, 0);
    if (N(l, e)->sub && N(l, e)->c) /* an atomic's value: the element type */
        child(l, e, KID_C, N(l, e)->type);
    Node *n = N(l, e);
    if (n->dtype == DT_NONE || !n->type || !N(l, n->a)->type)
        return e;
    TypeId as = n->type;
    const Type *r = T(l, n->a);
    const Type *v = &l->k->types[as];
    TypeId raw = v->kind == TK_TILE ? tile_of(l, v, (DType)r->dtype) : scalar(l, (DType)r->dtype, v->lanes);
    n->dtype = DT_NONE;
    n->lanes = 1;
    n->type = raw;
    return coerce(l, e, as);
}

static NodeId expr(Lg *l, NodeId e)
{
    if (!e || e >= l->nold || l->done[e])
        return e;
    l->done[e] = 1;
    Node *n = N(l, e);
    if (!n->type && n->op != OP_FIELD && ir_ops[n->op].cls != OC_PIPE)
        return e;   /* an untyped node (COLON, SLICE) is its parent's business */
    if (fold_int_constant(l, e) || fold_storage_constant(l, e))
        return e;
    switch ((Op)n->op) {
    case OP_INT:
        if (n->type && is_float((DType)T(l, e)->dtype))
            make_literal(l, e, n->type, n->v.i);
        else if (n->type)
            n->dtype = T(l, e)->dtype;
        return e;
    case OP_FLOAT: case OP_BOOL:
        if (n->op == OP_FLOAT && n->type && !is_float((DType)T(l, e)->dtype))
            ir_bug(l->ctx, "legalize: float literal %u has type %s (tir.md 3.5: a float literal "
                   "never adapts to an integer type)", e, ir_dtypes[T(l, e)->dtype].spelling);
        if (n->type)
            n->dtype = T(l, e)->dtype;
        return e;
    case OP_NAME: return name(l, e);
    case OP_SPECIAL: case OP_COLON: return e;
    case OP_NEG: case OP_NOT:
        child(l, e, KID_A, 0);
        if (N(l, N(l, e)->a)->type)
            child(l, e, KID_A, like(l, N(l, e)->a, N(l, e)->type));
        return e;
    case OP_CAST: case OP_TRANS: case OP_FIELD:
        child(l, e, KID_A, 0);
        return e;
    case OP_INDEX: reference(l, e); return e;
    case OP_LOAD: return load(l, e);
    default: break;
    }
    switch (ir_ops[n->op].cls) {
    case OC_BIN: binary(l, e); break;
    case OC_BUILTIN: builtin(l, e); break;
    default:   /* pipeline members and anything else: their operands as they are */
        child(l, e, KID_A, 0);
        for (uint32_t i = 0; i < N(l, e)->n; i++)
            list_arg(l, e, i, 0);
        break;
    }
    return e;
}

/* ---- statements ------------------------------------------------------------ */

static void block(Lg *l, NodeId b)
{
    if (!b)
        return;
    if (N(l, b)->op != OP_BLOCK) {
        stmt(l, b);
        return;
    }
    for (uint32_t i = 0; i < N(l, b)->n; i++)
        stmt(l, arg(l, b, i));
}

/* let / var / reg: the initializer in the declared type (an array: its element's) */
static void decl_init(Lg *l, NodeId s)
{
    Node *n = N(l, s);
    if (!n->b)
        return;
    child(l, s, KID_B, 0);
    n = N(l, s);
    if (!n->type)
        return;
    const Type *t = T(l, s);
    if (t->kind == TK_TILE)
        child(l, s, KID_B, T(l, n->b)->kind == TK_TILE ? tile_of(l, T(l, n->b), (DType)t->dtype)
                                                          : elem_of(l, t));
    else
        child(l, s, KID_B, scalar(l, (DType)t->dtype, t->lanes));
}

/* x = y, x op= y: y in the type of the place x */
static void assign(Lg *l, NodeId s)
{
    Node *n = N(l, s);
    if (N(l, n->a)->op == OP_INDEX)
        reference(l, n->a);
    else
        child(l, s, KID_A, 0);
    child(l, s, KID_B, 0);
    n = N(l, s);
    if (!N(l, n->a)->type || !N(l, n->b)->type)
        return;
    const Type *place = T(l, n->a);
    TypeId want = T(l, n->b)->kind == TK_TILE || place->kind == TK_TILE
        ? like(l, n->b, value_of(l, place)) : value_of(l, place);
    child(l, s, KID_B, want);
}

/* store ref <- value [mask c]: the value in the destination's value type */
static void store(Lg *l, NodeId s)
{
    reference(l, N(l, s)->a);
    child(l, s, KID_B, 0);
    if (N(l, s)->c)
        child(l, s, KID_C, 0);
    Node *n = N(l, s);
    if (!N(l, n->a)->type || !N(l, n->b)->type)
        return;
    TypeId want = value_of(l, T(l, n->a));
    if (T(l, n->b)->kind == TK_TILE || l->k->types[want].kind == TK_TILE)
        want = like(l, n->b, want);
    child(l, s, KID_B, want);
}

static void for_stmt(Lg *l, NodeId s)
{
    TypeId t = N(l, s)->type;
    child(l, s, KID_A, t);
    child(l, s, KID_B, t);
    if (N(l, s)->c)
        child(l, s, KID_C, t);
    block(l, N(l, s)->d);
}

static void stmt(Lg *l, NodeId s)
{
    if (!s || s >= l->nold || l->done[s])
        return;
    if (N(l, s)->op == OP_BLOCK) {
        block(l, s);
        return;
    }
    l->done[s] = 1;
    Node *n = N(l, s);
    switch ((Op)n->op) {
    case OP_REFERENCE: return;   /* the oracle's */
    case OP_LET: case OP_VAR: case OP_REG: decl_init(l, s); return;
    case OP_ASSIGN: assign(l, s); return;
    case OP_STORE: store(l, s); return;
    case OP_FOR: for_stmt(l, s); return;
    case OP_IF:
        child(l, s, KID_A, 0);
        block(l, N(l, s)->b);
        stmt(l, N(l, s)->c);
        return;
    case OP_BAR_SYNC: case OP_BAR_ARRIVE:   /* id and thread count: i32 */
        child(l, s, KID_A, scalar(l, DT_I32, 1));
        if (N(l, s)->b)
            child(l, s, KID_B, scalar(l, DT_I32, 1));
        return;
    case OP_ROLE:
        child(l, s, KID_A, 0);
        child(l, s, KID_B, 0);
        child(l, s, KID_C, 0);
        block(l, N(l, s)->d);
        return;
    case OP_SHARED: case OP_MBARRIER: case OP_PIPELINE: return;
    default: break;
    }
    /* statements with only expression operands (exprstmt, cp.async, tma, mbarrier
       ops, mma, ...): their expressions, references and masks as they are */
    for (int i = KID_A; i <= KID_C; i++) {
        NodeId x = *kid(l, s, i);
        if (x && N(l, x)->op == OP_INDEX)
            reference(l, x);
        else if (x)
            child(l, s, i, 0);
    }
}

/* the extents and strides of tensor arguments (addressing reads them) */
static void arg_types(Lg *l)
{
    for (uint32_t i = 0; i < l->k->nargs; i++) {
        NodeId t = N(l, l->k->args[i])->a;
        if (!t || N(l, t)->op != OP_GTYPE)
            continue;
        for (uint32_t j = 0; j < N(l, t)->n; j++)
            list_arg(l, t, j, 0);
    }
}

uint32_t pass_legalize(CakeCtx *ctx, Kernel *k, Target tg)
{
    (void)tg;
    uint32_t before = ctx->nerrors;
    Lg l = {ctx, k, k->nnodes, arena_alloc(&ctx->arena, k->nnodes + 1)};
    arg_types(&l);
    block(&l, k->body);
    return ctx->nerrors - before;
}
