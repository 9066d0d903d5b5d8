/* types.c — the type and shape check: fills Node.type for every expression and
 * declaration of a kernel and reports E03xx (dtype agreement, vector lanes,
 * tile shapes, indexing, slices, loads and stores, reductions, tensor-core
 * operand shapes/dtypes/layouts, pipeline member placement).
 *
 * Untyped constants (literals, params, dims) carry an internal "untyped" type
 * while their expression is checked and take the type their context gives them
 * (adapt); whatever is left untyped settles to i32 / f32. Once a node has an
 * error or an unknown type, nothing derived from it is reported again.
 *
 * This file walks the kernel: the header, declarations, pipeline members and
 * statements. Expressions are in types_expr.c, memory references, loads and
 * stores in types_mem.c, tensor-core operations in types_tc.c; they share
 * types_priv.h. */
#include <math.h>
#include "types_priv.h"
#include "layout.h"
#include "tcfamily.h"

static void block(Ver *v, NodeId b);

/* ---- pipelines --------------------------------------------------------- */

TypeId ty_pipe_member(Ver *v, NodeId e)
{
    Node *n = N(v, e);
    TypeId tp = ty_expr(v, n->a);
    for (uint32_t i = 0; i < n->n; i++)
        ty_expr(v, arg(v, e, i));
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
            ty_want_int(v, s, "a pipeline stage");
    }
    if (n->op == OP_P_FULL || n->op == OP_P_EMPTY) {
        Type mb = blank(TK_MBARRIER);
        return vt_intern(v, &mb);
    }
    return v->t_void;
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
        ty_expr(v, d);
        if (!ty_want_int(v, d, "a tile extent")) {
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
/* 2-D register tiles whose layouts put every element in the same lane (ir/layout
 * ly_same_owners): an mfma accumulator becomes an mfma_b operand in place */
static int same_owners(const Type *s, const Type *d)
{
    if (s->rank != 2 || d->rank != 2 || s->transposed || d->transposed ||
        tc_family_of_layout((Layout)s->layout) != TCF_MFMA || tc_family_of_layout((Layout)d->layout) != TCF_MFMA)
        return 0;
    LyTile a, b;
    memset(&a, 0, sizeof a);
    a.layout = (Layout)s->layout;
    a.dtype = (DType)d->dtype;
    a.rows = (int)s->shape[0];
    a.cols = (int)s->shape[1];
    a.warp_size = 64;   /* the MFMA layouts are 64-lane wavefront layouts (ir/layout geo_mf) */
    b = a;
    b.layout = (Layout)d->layout;
    return a.rows > 0 && a.cols > 0 && ly_same_owners(&a, &b);
}

static int assignable(Ver *v, NodeId val, TypeId tdst, NodeId decl, const char *what)
{
    if (!known(v, val) || !tdst)
        return 0;
    if (!ty_value_ok(v, val))
        return 0;
    const Type *d = vt(v, tdst), *s = T(v, val);
    DType dd = (DType)d->dtype;
    if (vt_is_untyped(s))   /* constants adapt and fill vectors and tiles */
        return ty_adapt(v, val, dd);
    int shape_ok;
    if (d->kind == TK_SCALAR)
        shape_ok = s->kind == TK_SCALAR || s->kind == TK_STAGE;
    else if (d->kind == TK_VECTOR)
        shape_ok = s->kind == TK_VECTOR && s->lanes == d->lanes;
    else if (d->kind == TK_TILE)
        shape_ok = (s->kind == TK_TILE && s->lanes == d->lanes && ty_same_shape(v, d, s)) ||
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
                                       (s->layout == LY_WGMMA && d->layout == LY_WGMMA_A) ||
                                       same_owners(s, d)))) {
        Diag *dg = v_report(v, E0335, val, "%s: layout %s cannot become layout %s in registers",
                            what, ir_layout_names[s->layout], ir_layout_names[d->layout]);
        v_note_decl(v, dg, decl, NULL);
        diag_help(v->ctx, dg, "only mma -> mma_a, wgmma -> wgmma_a and mfma -> mfma_b (16-bit results) "
                              "stay in registers; otherwise go through shared memory (store, a barrier, load)");
        return 0;
    }
    DType sd = s->kind == TK_STAGE ? DT_I32 : (DType)s->dtype;
    if (sd == dd || ty_widen(sd, dd) == dd)
        return 1;
    int narrowing = sd != DT_BOOL && dd != DT_BOOL && ir_dtypes[sd].kind == ir_dtypes[dd].kind;
    int numeric = sd != DT_BOOL && dd != DT_BOOL;
    const char *to = d->kind == TK_VECTOR ? ir_fmt(v->ctx, "%sx%u", ir_dtypes[dd].spelling, d->lanes)
                                          : ir_dtypes[dd].spelling;
    Diag *dg = v_report(v, narrowing ? E0303 : E0301, val, "%s: expected %s, found %s%s", what,
                        ir_dtypes[dd].spelling, ir_dtypes[sd].spelling,
                        narrowing ? " (no implicit narrowing)" : "");
    v_note_decl(v, dg, decl, NULL);
    if (numeric && dd == DT_F32 && v->in_ref && v->in_ref[val]) /* f32() is exact there (tir.md 11.1) */
        diag_help(v->ctx, dg, "a reference computes in f64, where `f32(...)` does not round: leave the type out "
                  "(`let x = ...`), or round it by storing it into an f32 argument (a store rounds)");
    else if (numeric) {
        diag_help(v->ctx, dg, "convert explicitly: `%s(%s)`", to, v_text(v, val));
        diag_fixit(v->ctx, dg, v_span(v, val), ir_fmt(v->ctx, "%s(%s)", to, v_source(v, val)));
    }
    return 0;
}

/* the warpgroup-capable context of node n: a warpgroup role, or the block */
int ty_warpgroup_ctx(Ver *v, NodeId n, const char **why)
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
        if (v->k->targets[t] && v->block_threads[t] &&
            v->block_threads[t] % tg_unit_threads((Target)t, UNIT_WARPGROUPS)) {
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
            ty_expr(v, n->b);
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
        /* a [1, C] column vector of an accumulator layout (docs/tir.md §5.3.5) */
        int colvec = acc && ty.rank == 2 && m0 == 1;
        int colstep = layout == LY_MFMA ? 16 : 8;   /* an mfma column vector: whole 16- or 32-column atoms */
        const char *bad = NULL;
        if (layout && layout != LY_ROWS && ty.rank != 2 && !(acc && ty.rank == 1))
            bad = ir_fmt(v->ctx, "layout `%s` is for 2-D tiles (or [R] row vectors of an "
                         "accumulator layout)", ir_layout_names[layout]);
        else if (colvec && n0 % colstep)
            bad = ir_fmt(v->ctx, "a [1, C] column vector of layout `%s` has C a multiple of %d; `%s` "
                         "has C = %lld", ir_layout_names[layout], colstep, v_name(v, s), (long long)n0);
        else if (colvec)
            ;
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
        if (ty.scope == SC_WARPGROUP && !ty_warpgroup_ctx(v, s, &why)) {
            Diag *d = v_report(v, E0318, s, "`%s` (layout %s) is owned by a warpgroup, but %s",
                               v_name(v, s), ir_layout_names[layout], why);
            diag_help(v->ctx, d, "declare it in a role of whole warpgroups (`role R: warpgroup N`)");
        }
        t = vt_intern(v, &ty);
    }
    set(v, s, t);
    if (n->b) {
        ty_expr(v, n->b);
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
        int64_t ib = ty.shape[ty.rank - 1] * ty_mem_bytes(ty.dtype);
        if (ib % sw) {
            Diag *d = v_report(v, E0334, s, "`swizzle %u` needs rows of a multiple of %u bytes; `%s` "
                               "has rows of %lld bytes", sw, sw, v_name(v, s), (long long)ib);
            int64_t fit = ib >= 128 ? 128 : ib >= 64 ? 64 : ib >= 32 ? 32 : 0;
            if (fit && ib % fit == 0)
                diag_help(v->ctx, d, "use `swizzle %lld`", (long long)fit);
            else
                diag_help(v->ctx, d, "make the innermost extent a multiple of %u elements",
                          sw / ty_mem_bytes(ty.dtype));
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
        ty_expr(v, n->a);
        int64_t c;
        if (ty_want_int(v, n->a, "an mbarrier array length")) {
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
        ty_expr(v, n->b);
        int64_t c;
        if (ty_want_int(v, n->b, "an arrival count") && v_const(v, n->b, &c) && c < 1)
            v_report(v, E0327, n->b, "an mbarrier's arrival count must be at least 1, found %lld",
                     (long long)c);
    }
    set(v, s, vt_intern(v, &t));
}

static void pipeline_decl(Ver *v, NodeId s)
{
    Node *n = N(v, s);
    Type t = blank(TK_PIPELINE);
    ty_expr(v, n->a);
    int64_t c;
    if (ty_want_int(v, n->a, "a stage count")) {
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
        ty_expr(v, parts[i]);
        if (ty_want_int(v, parts[i], i == 2 ? "a register count" : "a role unit")) {
            int64_t c;
            if (!v_const(v, parts[i], &c))
                v_report(v, E0327, parts[i], "`%s` must be a compile-time constant", v_text(v, parts[i]));
        }
    }
    Type t = blank(TK_ROLE);
    set(v, s, vt_intern(v, &t));
    block(v, n->d);
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

/* In the reference, a float value stored into a float argument element
 * rounds to the element's dtype (docs/tir.md §11.1): `y[m, n] = x * r` into
 * a bf16 `y` needs no `bf16(...)`. Elsewhere narrowing stays explicit. */
static int ref_rounding_store(Ver *v, NodeId lv, NodeId val)
{
    const Type *L = T(v, lv), *R = T(v, val);
    if (!v->in_ref[lv] || L->space != SP_GLOBAL || L->kind != TK_SCALAR ||
        R->kind != TK_SCALAR || !vt_is_float_dt((DType)L->dtype))
        return 0;
    if (vt_is_untyped(R)) {
        ty_adapt(v, val, (DType)L->dtype);
        return 1;
    }
    return vt_is_float_dt((DType)R->dtype);
}

static void assign_stmt(Ver *v, NodeId s)
{
    Node *n = N(v, s);
    TypeId tl = ty_expr(v, n->a);
    ty_expr(v, n->b);
    if (!tl || v_err(v, n->a) || !known(v, n->b))
        return;
    if (!lvalue_ok(v, n->a))
        return;
    NodeId decl = v_root_decl(v, n->a);
    const char *what = ir_fmt(v->ctx, "assignment to `%s`", v_text(v, n->a));
    if (n->sub == OP_NONE || n->sub == 0) {
        if (ref_rounding_store(v, n->a, n->b))
            return;
        if (assignable(v, n->b, tl, decl, what))
            ty_ldmatrix_form(v, n->b, tl);
        return;
    }
    /* compound: x op= y is x = x op y with the same result type as x */
    if (!ty_value_ok(v, n->b))
        return;
    const Type *L = vt(v, tl), *R = T(v, n->b);
    if (vt_is_untyped(R)) {
        ty_adapt(v, n->b, (DType)L->dtype);
        return;
    }
    Type shape;
    if (!ty_merge_shape(v, s, n->a, n->b, &shape))
        return;
    if (shape.kind != L->kind || shape.rank != L->rank) {
        v_report(v, E0305, n->b, "%s: %s does not fit %s", what, vt_str(v, vt_of(v, n->b)), vt_str(v, tl));
        return;
    }
    DType w = ty_widen((DType)R->dtype, (DType)L->dtype);
    if (w != L->dtype) {
        Diag *d = v_report(v, w == DT_NONE ? E0302 : E0303, n->b, "%s: %s %s %s%s", what,
                           ir_dtypes[L->dtype].spelling, ir_ops[n->sub].spelling,
                           ir_dtypes[R->dtype].spelling,
                           w == DT_NONE ? " mixes types" : " would narrow");
        v_note_decl(v, d, decl, NULL);
        diag_help(v->ctx, d, "convert explicitly: `%s(%s)`", ir_dtypes[L->dtype].spelling,
                  v_text(v, n->b));
        diag_fixit(v->ctx, d, v_span(v, n->b), ir_fmt(v->ctx, "%s(%s)", ir_dtypes[L->dtype].spelling,
                                                      v_source(v, n->b)));
        return;
    }
    uint16_t fl = ir_ops[n->sub].flags;
    if ((fl & OF_INTONLY) && !vt_is_int_dt((DType)L->dtype))
        v_report(v, E0306, s, "`%s=` needs integers", ir_ops[n->sub].spelling);
    if (L->dtype == DT_BOOL)
        v_report(v, E0306, s, "compound assignment on bool");
}

/* a factorless `unroll` asks for every iteration: only a loop whose bounds are
 * compile-time and whose trip count is at most 1024 can have that (docs/tir.md §10.1) */
static void full_unroll_check(Ver *v, NodeId s)
{
    const Node *n = &v->k->nodes[s];
    int64_t lo, hi, st = 1;
    const char *why = NULL;
    NodeId at = 0;
    if (!v_const(v, n->a, &lo))
        why = "its start", at = n->a;
    else if (!v_const(v, n->b, &hi))
        why = "its end", at = n->b;
    else if (n->c && !v_const(v, n->c, &st))
        why = "its step", at = n->c;
    if (why) {
        Diag *d = v_report(v, W0301, at, "`unroll` without a factor on a loop whose bound `%s` (%s) "
                           "is not known at compile time: the loop stays rolled", v_text(v, at), why);
        diag_help(v->ctx, d, "give a factor (`unroll 2`), or loop over a compile-time range and "
                             "compute the index from it (`for it in 0 .. 2 unroll { let i = lo + it * st ... }`)");
        return;
    }
    int64_t trips = hi > lo ? (hi - lo + st - 1) / st : 0;
    if (trips > 1024) {
        Diag *d = v_report(v, W0301, n->b, "`unroll` without a factor on a loop of %lld iterations: "
                           "full unrolling stops at 1024, the loop stays rolled", (long long)trips);
        diag_help(v->ctx, d, "give a factor (`unroll 8`)");
    }
}

static void const_count(Ver *v, NodeId e, const char *what)
{
    ty_expr(v, e);
    if (!ty_want_int(v, e, what))
        return;
    int64_t c;
    if (!v_const(v, e, &c))
        v_report(v, E0327, e, "%s `%s` must be a compile-time constant", what, v_text(v, e));
    else if (c < 0)
        v_report(v, E0327, e, "%s must not be negative, found %lld", what, (long long)c);
}

static void mbarrier_operand(Ver *v, NodeId e, const char *stmt)
{
    TypeId t = ty_expr(v, e);
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
        TypeId ti = ty_expr(v, n->b);
        if (n->a) {
            if (t)
                assignable(v, n->b, t, s, ir_fmt(v->ctx, "initial value of `%s`", v_name(v, s)));
            set(v, s, t);
        } else if (ti && !v_err(v, n->b)) {
            const Type *it = vt(v, ti);
            int64_t c;
            if (vt_is_untyped(it) && !v_const(v, n->b, &c))
                ti = ty_value(v, n->b);
            set(v, s, ti);   /* a let of an untyped constant is an untyped constant (3.5) */
        }
        break;
    }
    case OP_VAR: {
        TypeId t = type_node(v, n->a, SP_REG, s);
        if (n->b) {
            ty_expr(v, n->b);
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
            ty_expr(v, b3[i]);
            if (!known(v, b3[i]))
                ok = 0;
            else if (!vt_is_int(T(v, b3[i]))) {
                ty_want_int(v, b3[i], i == 2 ? "a loop step" : "a loop bound");
                ok = 0;
            } else if (!vt_is_untyped(T(v, b3[i]))) {
                DType d = T(v, b3[i])->kind == TK_STAGE ? DT_I32 : (DType)T(v, b3[i])->dtype;
                DType w = dt == DT_NONE ? d : ty_widen(dt, d);
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
                ty_settle(v, b3[i], dt);
        set(v, s, ok ? vt_scalar(v, dt) : 0);
        if (!ok)
            v_mark(v, s);
        int64_t st;
        if (n->c && v_const(v, n->c, &st) && st <= 0)
            v_report(v, E0308, n->c, "loop step must be positive, found %lld", (long long)st);
        else if (ok && n->v.attr.unroll == 255)
            full_unroll_check(v, s);
        block(v, n->d);
        break;
    }
    case OP_IF:
        ty_expr(v, n->a);
        ty_want_bool(v, n->a, "an `if` condition", 1);
        block(v, n->b);
        if (n->c)
            stmt(v, n->c);
        break;
    case OP_EXPRSTMT: ty_value(v, n->a); break;
    case OP_STORE: ty_store_stmt(v, s); break;
    case OP_CP_ASYNC: ty_cp_async_stmt(v, s); break;
    case OP_CP_WAIT: const_count(v, n->a, "cp.async.wait's group count"); break;
    case OP_TMA_WAIT: const_count(v, n->a, "tma.store.wait's group count"); break;
    case OP_WGMMA_WAIT: const_count(v, n->a, "wgmma.wait's group count"); break;
    case OP_TMA_LOAD: case OP_TMA_STORE:
        ty_expr(v, n->a);
        ty_expr(v, n->b);
        if (n->c)
            ty_expr(v, n->c);  /* the rest is tma.c's */
        break;
    case OP_STMATRIX: ty_stmatrix_stmt(v, s); break;
    case OP_BAR_SYNC: case OP_BAR_ARRIVE:
        ty_expr(v, n->a);
        ty_want_int(v, n->a, "a named barrier id");
        ty_expr(v, n->b);
        ty_want_int(v, n->b, "a barrier thread count");
        break;
    case OP_MB_ARRIVE: mbarrier_operand(v, n->a, "mbarrier.arrive"); break;
    case OP_MB_EXPECT:
        mbarrier_operand(v, n->a, "mbarrier.expect_tx");
        ty_expr(v, n->b);
        ty_want_int(v, n->b, "a transaction byte count");
        break;
    case OP_MB_WAIT:
        mbarrier_operand(v, n->a, "mbarrier.wait");
        ty_expr(v, n->b);
        ty_want_int(v, n->b, "a phase parity");
        break;
    case OP_MMA: case OP_WGMMA: case OP_MFMA: ty_tc_stmt(v, s); break;
    default:
        if (ir_ops[n->op].cls != OC_STMT)
            ty_value(v, s);  /* an expression where a statement was expected: type it anyway */
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

/* `values LO .. HI` of an integer tensor argument: both ends integer header
 * expressions (dims, parameters, constants), on an integer dtype (E0123);
 * `offsets LO .. HI` likewise, on a one-dimensional tensor (E0125) */
static void arg_values(Ver *v, Node *t)
{
    if (!t->b)
        return;
    for (int i = 0; i < 2; i++) {
        NodeId e = i ? t->c : t->b;
        ty_expr(v, e);
        ty_want_int(v, e, i ? "the upper end of a value range" : "the lower end of a value range");
    }
    char kind = ir_dtypes[t->dtype].kind;
    if ((kind != 'i' && kind != 'u') || t->lanes != 1) {
        Diag *d = v_report(v, E0123, t->b, "a value range needs an integer tensor, not %s",
                           ir_dtypes[t->dtype].spelling);
        if (d)
            diag_help(v->ctx, d, "`values LO .. HI` declares the range of indices held in an "
                                 "integer tensor (class ids, gather rows, expert ids)");
    }
    if ((t->flags & NF_OFFSETS) && t->sub != 1) {
        Diag *d = v_report(v, E0125, t->b, "sequence offsets need a one-dimensional tensor, "
                                           "not one of rank %u", t->sub);
        if (d)
            diag_help(v->ctx, d, "`offsets LO .. HI` declares B + 1 boundaries of sequences "
                                 "packed in one dim (`arg cu: global i32[B1] offsets 0 .. T + 1`); "
                                 "for other index tensors write `values LO .. HI`");
    }
}

/* 1 when the reference assigns an element of argument a (an output, or in/out) */
static int reference_writes(const Kernel *k, NodeId a)
{
    if (!k->reference)
        return 0;
    for (NodeId e = 1; e < k->nnodes; e++) {
        const Node *n = &k->nodes[e];
        if (n->op != OP_ASSIGN || !n->a || k->nodes[n->a].op != OP_INDEX)
            continue;
        const Node *base = &k->nodes[k->nodes[n->a].a];
        if (base->op == OP_NAME && base->decl == a)
            return 1;
    }
    return 0;
}

/* `tolerance X` of an argument: a positive number (E0127) on an output of the
 * reference (E0126), the factor on the check's error bound of that output */
static void arg_tolerance(Ver *v, NodeId a, Node *t)
{
    if (!t->d)
        return;
    const Node *x = N(v, t->d);
    double f = x->op == OP_FLOAT ? x->v.f : x->op == OP_INT ? (double)x->v.i : 0;
    if (!(f > 0) || !isfinite(f)) {
        Diag *d = v_report(v, E0127, t->d, "a tolerance is a positive number literal");
        if (d)
            diag_help(v->ctx, d, "write the factor on the dtype's error bound: `tolerance 256`");
    }
    if (!reference_writes(v->k, a)) {
        Diag *d = v_report(v, E0126, t->d, "`%s` is not an output of the reference: "
                                           "no element of it is compared", v_name(v, a));
        if (d)
            diag_help(v->ctx, d, "put `tolerance` on an argument the reference assigns "
                                 "(`%s[...] = ...`), or drop it", v_name(v, a));
    }
}

static void header(Ver *v)
{
    Kernel *k = v->k;
    for (uint32_t i = 0; i < k->nparams; i++) {
        NodeId p = k->params[i];
        ty_expr(v, N(v, p)->a);
        if (ty_want_int(v, N(v, p)->a, "a parameter default")) {
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
            ty_expr(v, d);
            ty_want_int(v, d, j < nd ? "a tensor extent" : "a tensor stride");
            if (j < nd) {
                g.dims[j] = d;
                g.shape[j] = ty_const_or(v, d, -1);
            }
        }
        if (t->n > nd && t->n != 2 * nd)
            v_report(v, E0328, tn, "%u strides for a tensor of rank %u", t->n - nd, nd);
        arg_values(v, t);
        arg_tolerance(v, a, t);
        if (g.align && (g.align & (g.align - 1)))
            v_report(v, E0334, tn, "alignment %u is not a power of two", g.align);
        set(v, tn, vt_intern(v, &g));
        set(v, a, vt_intern(v, &g));
    }
    for (uint32_t i = 0; i < k->nassumes; i++) {
        NodeId e = k->assumes[i];
        ty_expr(v, e);
        ty_want_bool(v, e, "an assume", 1);
    }
    for (uint32_t i = 0; i < k->ngrid; i++) {
        NodeId e = k->grid[i];
        ty_expr(v, e);
        ty_want_int(v, e, "a grid extent");
    }
    if (k->block_size) {
        ty_expr(v, k->block_size);
        if (ty_want_int(v, k->block_size, "the block size")) {
            int64_t c;
            if (!v_const(v, k->block_size, &c) && !v_err(v, k->block_size))
                v_report(v, E0329, k->block_size, "the block size `%s` must be a compile-time "
                         "constant", v_text(v, k->block_size));
            else if (c < 1)
                v_report(v, E0329, k->block_size, "the block size must be at least 1, found %lld",
                         (long long)c);
        }
    }
}

/* grid extents: only dims, params, constants and `sm.count` (they are evaluated
 * on the host at launch) */
static void host_only(Ver *v, NodeId e, void *arg_)
{
    NodeId *bad = arg_;
    const Node *n = N(v, e);
    if (*bad)
        return;
    if ((n->op == OP_SPECIAL && n->sub != SR_SM_COUNT) || n->op == OP_LOAD ||
        (n->op == OP_NAME && n->decl && N(v, n->decl)->op != OP_PARAM &&
         N(v, n->decl)->op != OP_DIM && N(v, n->decl)->op != OP_ARG))
        *bad = e;
    if (n->op == OP_NAME && n->decl && N(v, n->decl)->op == OP_ARG &&
        vt(v, vt_of(v, n->decl))->kind == TK_TENSOR)
        *bad = e;
}

/* E0338: `sm.count` is a launch-time value: the host knows it when it evaluates
 * the grid, the kernel does not (it reads `grid.x`). Nodes already reported
 * (in a reference block: E0337) are skipped. */
static void mark_grid_sm_count(Ver *v, NodeId e, void *arg_)
{
    uint8_t *in_grid = arg_;
    if (N(v, e)->op == OP_SPECIAL && N(v, e)->sub == SR_SM_COUNT)
        in_grid[e] = 1;
}

static void check_sm_count(Ver *v)
{
    Kernel *k = v->k;
    uint8_t *in_grid = NULL;
    for (NodeId n = 1; n < k->nnodes; n++) {
        const Node *x = N(v, n);
        if (x->op != OP_SPECIAL || x->sub != SR_SM_COUNT)
            continue;
        if (!in_grid) {
            in_grid = arena_alloc(&v->ctx->arena, k->nnodes);
            for (uint32_t i = 0; i < k->ngrid; i++)
                v_walk(v, k->grid[i], mark_grid_sm_count, in_grid);
        }
        if (in_grid[n] || v_err(v, n))
            continue;
        Diag *d = v_report(v, E0338, n, "`sm.count` is known only at launch, where the `grid` clause is "
                           "evaluated; the kernel cannot read it");
        diag_help(v->ctx, d, "size the grid with it (`grid [min(sm.count, TILES)]`) and read the number of "
                             "blocks in the kernel with `grid.x`");
    }
}

static void settle_all(Ver *v, NodeId e, void *arg_)
{
    (void)arg_;
    if (vt_is_untyped(T(v, e)))
        ty_settle(v, e, ty_default_for(v, e));
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
    check_sm_count(v);
    header(v);
    for (uint32_t i = 0; i < k->ngrid; i++) {
        NodeId bad = 0;
        v_walk(v, k->grid[i], host_only, &bad);
        if (bad && !v_err(v, k->grid[i])) {
            Diag *d = v_report(v, E0329, bad, "grid extents are computed at launch from dims, "
                               "parameters and `sm.count`; `%s` is not one", v_text(v, bad));
            diag_help(v->ctx, d, "write the grid from tensor dims and kernel parameters, e.g. "
                                 "`grid [cdiv(M, BM)]` (persistent: `grid [min(sm.count, cdiv(M, BM))]`)");
        }
    }
    block(v, k->body);
    if (k->reference && !v->ref_seen)
        block(v, k->reference);
    for (NodeId n = 1; n < k->nnodes; n++)
        settle_all(v, n, NULL);
}
