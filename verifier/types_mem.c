/* types_mem.c — the type check of memory (part of types.c's pass): references,
 * indexing and slices, transposed views, loads, stores and cp.async, with the
 * vector-access widths they allow. */
#include "types_priv.h"

/* ---- references and indexing --------------------------------------- */

int64_t ty_const_or(Ver *v, NodeId e, int64_t dflt)
{
    int64_t x;
    return v_const(v, e, &x) ? x : dflt;
}

TypeId ty_index_expr(Ver *v, NodeId e)
{
    Node *n = N(v, e);
    TypeId tb = ty_expr(v, n->a);
    if (!tb || v_err(v, n->a))
        return 0;
    Type b = *vt(v, tb);
    for (uint32_t i = 0; i < n->n; i++) { /* type the indices first */
        NodeId ix = arg(v, e, i);
        const Node *x = N(v, ix);
        if (x->op == OP_COLON)
            continue;
        if (x->op == OP_SLICE) {
            ty_expr(v, x->a);
            ty_expr(v, x->b);
            ty_want_int(v, x->a, "a slice start");
            if (ty_want_int(v, x->b, "a slice extent")) {
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
        ty_expr(v, ix);
        ty_want_int(v, ix, "an index");
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
            int64_t c = ty_const_or(v, x->b, -1);
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

TypeId ty_trans_expr(Ver *v, NodeId e)
{
    Node *n = N(v, e);
    TypeId ta = ty_expr(v, n->a);
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
Type ty_view_value(const Type *r)
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
    if (r->transposed && r->rank == 2) {   /* the value of X^T is the logical [C, R] tile (lx) */
        int a = r->rank - 2, c = r->rank - 1;
        t.shape[a] = r->shape[c];
        t.shape[c] = r->shape[a];
        t.dims[a] = r->dims[c];
        t.dims[c] = r->dims[a];
    }
    t.swizzle = 0;
    t.align = 0;
    t.layout = 0;
    t.scope = 0;
    t.transposed = 0;
    return t;
}

/* bytes of one element in memory: bool is stored as a byte (ir_dtype_bytes says 0) */
int ty_mem_bytes(int dt)
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

/* An atomic (docs/tir.md 7.7) of `op` on the memory `D`, whose accessed view
 * is `view`: global memory, a 4-byte element (f32, i32, u32), one element per
 * access (a tile takes the per-element or whole-tile store form; no vector
 * slice). 1 when it fits; E0324 / E0340 otherwise. */
static int atomic_ok(Ver *v, NodeId ref, const Type *D, const Type *view, Op op)
{
    const char *sp = ir_ops[op].spelling;
    NodeId decl = v_root_decl(v, ref);
    if (D->space != SP_GLOBAL) {
        Diag *d = v_report(v, E0324, ref, "`%s` works on global memory; `%s` is in %s memory", sp,
                           v_text(v, ref), D->space == SP_SHARED ? "shared" : "register");
        v_note_decl(v, d, decl, NULL);
        diag_help(v->ctx, d, "shared memory and registers are combined with barriers and reductions "
                             "(`reduce.block.add`); atomics order work between blocks");
        return 0;
    }
    DType dt = (DType)D->dtype;
    if (dt != DT_F32 && dt != DT_I32 && dt != DT_U32) {
        Diag *d = v_report(v, E0340, ref, "`%s` of %s elements: atomics take f32, i32 or u32", sp,
                           ir_dtypes[dt].spelling);
        v_note_decl(v, d, decl, NULL);
        diag_help(v->ctx, d, "accumulate in an f32 workspace and convert once at the end");
        return 0;
    }
    if (view->kind == TK_VECTOR) {
        Diag *d = v_report(v, E0340, ref, "`%s` of a %u-lane slice: an atomic accesses one element", sp,
                           view->lanes);
        diag_help(v->ctx, d, "index the element: `%s[..., i]` (a tile of elements takes the "
                             "per-element store form, `atomic.add X[r0 : +R, c0 : +C] <- acc[r, c]`)",
                  v_text(v, N(v, ref)->a));
        return 0;
    }
    return 1;
}

/* atomic.add(ref, v) / atomic.exch(ref, v) [mask c]: the old element */
static TypeId atomic_expr(Ver *v, NodeId e)
{
    Node *n = N(v, e);
    TypeId tr = ty_expr(v, n->a);
    ty_expr(v, n->c);
    if (n->b)
        ty_expr(v, n->b);
    if (!tr || v_err(v, n->a) || !known(v, n->c))
        return 0;
    const Type *r = vt(v, tr);
    if (!is_memory(r)) {
        v_report(v, E0324, n->a, "`%s` works on global memory; `%s` is %s", ir_ops[n->sub].spelling,
                 v_text(v, n->a), vt_str(v, tr));
        return 0;
    }
    Type val = ty_view_value(r);
    if (val.kind == TK_TILE) {
        Diag *d = v_report(v, E0340, n->a, "`%s(%s, ...)` reads a whole tile: the expression form "
                           "returns one old element", ir_ops[n->sub].spelling, v_text(v, n->a));
        diag_help(v->ctx, d, "index one element, or add a tile with the statement form "
                             "`atomic.add X[r0 : +R, c0 : +C] <- acc[r, c]`");
        return 0;
    }
    if (!vector_access_ok(v, n->a, &val) || !atomic_ok(v, n->a, r, &val, (Op)n->sub))
        return 0;
    if (n->b && known(v, n->b))
        ty_want_bool(v, n->b, "an atomic's mask", 1);
    if (!ty_value_ok(v, n->c))
        return 0;
    const Type *V = T(v, n->c);
    if (vt_is_untyped(V)) {
        ty_adapt(v, n->c, (DType)val.dtype);
    } else if (V->kind != TK_SCALAR || V->dtype != val.dtype) {
        Diag *d = v_report(v, E0301, n->c, "`%s` on %s elements takes a value of that type, found %s "
                           "(an atomic converts nothing)", ir_ops[n->sub].spelling, ir_dtypes[val.dtype].spelling,
                           vt_str(v, vt_of(v, n->c)));
        if (V->kind == TK_SCALAR)
            diag_help(v->ctx, d, "convert it: `%s(%s)`", ir_dtypes[val.dtype].spelling, v_text(v, n->c));
        return 0;
    }
    return vt_intern(v, &val);
}

TypeId ty_load_expr(Ver *v, NodeId e)
{
    Node *n = N(v, e);
    if (n->sub)
        return atomic_expr(v, e);
    TypeId tr = ty_expr(v, n->a);
    if (n->b) {
        ty_expr(v, n->b);
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
    Type val = ty_view_value(r);
    if (!vector_access_ok(v, n->a, &val))
        return 0;
    int lanes = val.kind == TK_VECTOR ? val.lanes : 1;
    if (n->b && known(v, n->b)) {
        const Type *mt = T(v, n->b);
        if (val.kind == TK_TILE)
            ty_want_bool(v, n->b, "a tile load's mask (whole tile)", 1);
        else
            ty_want_bool(v, n->b, "a load mask", mt->kind == TK_VECTOR ? lanes : 1);
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

/* the element access that declares a store's implicit indices: `acc[r, c]` in
 * `store C[i : +R, j : +C] <- bf16(acc[r, c]) mask i + r < M`; 0 when none */
static NodeId implicit_source(Ver *v, NodeId e, int depth)
{
    if (!e || depth > 200)
        return 0;
    Node *n = N(v, e);
    if (n->op == OP_INDEX)
        for (uint32_t i = 0; i < n->n; i++) {
            NodeId ix = arg(v, e, i);
            if (N(v, ix)->op == OP_NAME && (N(v, ix)->flags & NF_IMPLICIT) && N(v, ix)->decl == ix)
                return e;
        }
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++) {
        NodeId x = implicit_source(v, kids[i], depth + 1);
        if (x)
            return x;
    }
    for (uint32_t i = 0; i < n->n; i++) {
        NodeId x = implicit_source(v, arg(v, e, i), depth + 1);
        if (x)
            return x;
    }
    return 0;
}

/* a per-element tile store: the value is one element, at the implicit indices
 * of `src`, of a tile with the destination view's shape; 1 when it fits */
static int element_store_ok(Ver *v, NodeId s, NodeId src, const Type *dv, const char *what)
{
    Node *n = N(v, s), *x = N(v, src);
    NodeId decl = v_root_decl(v, n->a);
    for (uint32_t i = 0; i < x->n; i++) {
        const Node *ix = N(v, arg(v, src, i));
        if (ix->op != OP_NAME || !ix->decl || !(N(v, ix->decl)->flags & NF_IMPLICIT)) {
            Diag *d = v_report(v, E0313, src, "%s: `%s` declares implicit indices, so each of its "
                               "indices must be one", what, v_text(v, src));
            diag_help(v->ctx, d, "index the tile with new names only: `%s[r, c]`", v_text(v, x->a));
            return 0;
        }
    }
    const Type *V = T(v, n->b);
    if (dv->kind != TK_TILE || V->kind != TK_SCALAR) {
        Diag *d = v_report(v, E0313, n->b, "%s: a value with implicit indices stores a tile element by "
                           "element; the destination holds %s, the value is %s", what,
                           vt_str(v, vt_intern(v, dv)), vt_str(v, vt_of(v, n->b)));
        v_note_decl(v, d, decl, NULL);
        if (dv->kind != TK_TILE)
            diag_help(v->ctx, d, "store to a view of the tile's shape: `X[r0 : +R, c0 : +C]`");
        return 0;
    }
    if (!known(v, x->a) || !ty_same_shape(v, T(v, x->a), dv)) {
        if (!known(v, x->a))
            return 0;
        Diag *d = v_report(v, E0305, src, "%s: the destination view is %s, but `%s` is %s", what,
                           vt_str(v, vt_intern(v, dv)), v_text(v, x->a), vt_str(v, vt_of(v, x->a)));
        v_note_decl(v, d, decl, NULL);
        diag_help(v->ctx, d, "the implicit indices run over `%s`: store to a view of its shape",
                  v_text(v, x->a));
        return 0;
    }
    return 1;
}

/* the value of a store/stmatrix against its destination reference */
void ty_store_stmt(Ver *v, NodeId s)
{
    Node *n = N(v, s);
    TypeId td = ty_expr(v, n->a);
    ty_expr(v, n->b);
    if (n->c)
        ty_expr(v, n->c);
    if (!td || v_err(v, n->a) || !known(v, n->b))
        return;
    const Type *D = vt(v, td);
    if (!is_memory(D)) {
        Diag *d = v_report(v, E0324, n->a, "`store` writes global or shared memory; `%s` is %s",
                           v_text(v, n->a), vt_str(v, td));
        diag_help(v->ctx, d, "assign registers directly: `%s = ...`", v_text(v, n->a));
        return;
    }
    if (!ty_value_ok(v, n->b))
        return;
    const Type *V = T(v, n->b);
    NodeId decl = v_root_decl(v, n->a);
    if (n->c && known(v, n->c))
        ty_want_bool(v, n->c, "a store mask", V->kind == TK_VECTOR ? V->lanes : 1);
    if (vt_is_untyped(V)) {
        ty_adapt(v, n->b, (DType)D->dtype);
        return;
    }
    /* shapes: an element takes a scalar, a vector slice a vector, a tile view a tile */
    const char *what = ir_fmt(v->ctx, "store to `%s`", v_text(v, n->a));
    Type dv = ty_view_value(D);
    if (!vector_access_ok(v, n->a, &dv))
        return;
    if (n->sub && !atomic_ok(v, n->a, D, &dv, (Op)n->sub))
        return;
    NodeId src = implicit_source(v, n->b, 0);
    if (src && !element_store_ok(v, s, src, &dv, what))
        return;
    int ok = src || (dv.kind == V->kind && (dv.kind != TK_VECTOR || dv.lanes == V->lanes) &&
                     (dv.kind != TK_TILE || ty_same_shape(v, &dv, V)));
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
            diag_fixit(v->ctx, d, v_span(v, n->b), ir_fmt(v->ctx, "%s(%s)", to, v_source(v, n->b)));
        }
    }
}

/* cp.async dst(shared) <- src(global): per thread 4, 8 or 16 bytes, or a whole tile */
void ty_cp_async_stmt(Ver *v, NodeId s)
{
    Node *n = N(v, s);
    TypeId td = ty_expr(v, n->a), ts = ty_expr(v, n->b);
    if (n->c) {
        ty_expr(v, n->c);
        ty_want_bool(v, n->c, "a cp.async mask", 1);
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
    Type a = ty_view_value(D), b = ty_view_value(S);
    if (a.kind == TK_TILE || b.kind == TK_TILE) {
        NodeId at = a.kind == TK_TILE ? n->a : n->b;
        Diag *d = v_report(v, E0611, at, "`cp.async` copies 4, 8 or 16 bytes per thread; `%s` is "
                           "%s", v_text(v, at), vt_str(v, vt_of(v, at)));
        diag_help(v->ctx, d, "give each thread its 16-byte piece: `cp.async Xs[r, c : +%d] <- "
                  "X[gr, gc : +%d]`", 16 / ty_mem_bytes(D->dtype), 16 / ty_mem_bytes(D->dtype));
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
