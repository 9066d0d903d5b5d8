/* tma.c — TMA (cp.async.bulk.tensor) and cp.async rules: the box is the shared
 * tile's shape (each dim <= 256, inner extent a multiple of 16 bytes and within
 * the swizzle span), the global tensor (inner stride 1, other strides
 * multiples of 16 bytes, proven from constants and `assume`s), a 128-byte aligned
 * shared destination, completion on an mbarrier or a pipeline's full(s); the
 * per-thread sizes of cp.async. Code the parameters' values make dead is not
 * checked (it is never compiled). Reports E06xx. */
#include "vpriv.h"
#include "layout.h"

static Node *N(Ver *v, NodeId n) { return &v->k->nodes[n]; }

/* the chain of INDEX nodes from the declaration outwards */
static int index_chain(Ver *v, NodeId ref, NodeId *chain, int cap)
{
    int n = 0;
    while (ref && N(v, ref)->op == OP_INDEX && n < cap) {
        chain[n++] = ref;
        ref = N(v, ref)->a;
    }
    for (int i = 0; i < n / 2; i++) {
        NodeId t = chain[i];
        chain[i] = chain[n - 1 - i];
        chain[n - 1 - i] = t;
    }
    return ref && N(v, ref)->op == OP_NAME ? n : -1;
}

/* is the byte offset of view `ref` within its shared declaration a multiple of
 * `align`? Reports the index that is not provably aligned through *culprit. */
static int offset_aligned(Ver *v, NodeId ref, NodeId decl, int64_t align, NodeId *culprit,
                          int64_t *need)
{
    const Type *d = ver_type(v->k, decl);
    if (d->kind != TK_TILE)
        return 1;
    int64_t stride[IR_MAX_RANK];
    int64_t s = ir_dtype_bytes((DType)d->dtype);
    for (int i = d->rank - 1; i >= 0; i--) {
        stride[i] = s;
        if (d->shape[i] < 0 || __builtin_mul_overflow(s, d->shape[i], &s))
            return 1; /* unknown, or a tile too large for memory (E0501 says so) */
    }
    NodeId chain[8];
    int nc = index_chain(v, ref, chain, 8);
    if (nc < 0)
        return 1;
    int cur[IR_MAX_RANK], ncur = d->rank;  /* current view dims -> declaration dims */
    for (int i = 0; i < ncur; i++)
        cur[i] = i;
    for (int c = 0; c < nc; c++) {
        const Node *ix = N(v, chain[c]);
        int next[IR_MAX_RANK], nn = 0;
        for (int j = 0; j < ncur; j++) {
            NodeId e = j < (int)ix->n ? ir_list_at(v->k, ix, (uint32_t)j) : 0;
            NodeId start = !e ? 0 : N(v, e)->op == OP_SLICE ? N(v, e)->a : N(v, e)->op == OP_COLON ? 0 : e;
            if (start) {
                int64_t m = align / ce_gcd(align, stride[cur[j]]);
                if (m > 1 && !ce_is_multiple(v->ctx, v->k, start, m)) {
                    *culprit = start;
                    *need = m;
                    return 0;
                }
            }
            if (!e || N(v, e)->op == OP_SLICE || N(v, e)->op == OP_COLON)
                next[nn++] = cur[j];
        }
        for (int j = 0; j < nn; j++)
            cur[j] = next[j];
        ncur = nn;
    }
    return 1;
}

/* the global side's tensor declaration (ARG) and its GTYPE node */
static NodeId gtype_of(Ver *v, NodeId decl)
{
    if (!decl || N(v, decl)->op != OP_ARG)
        return 0;
    NodeId t = N(v, decl)->a;
    return t && N(v, t)->op == OP_GTYPE ? t : 0;
}

static void check_global(Ver *v, NodeId stmt, NodeId gref, int esz)
{
    NodeId decl = v_root_decl(v, gref);
    NodeId gt = gtype_of(v, decl);
    if (!gt)
        return;
    const Node *g = N(v, gt);
    uint32_t rank = g->sub;
    /* without a clause the kernel ABI's 16 bytes hold (the runtime refuses less); a clause
       below 16 says the caller passes less */
    if (g->v.attr.align && g->v.attr.align < 16) {
        Diag *d = v_report(v, E0612, gref, "TMA needs a 16-byte aligned global base; `%s` is declared "
                           "`align %u`", v_name(v, decl), g->v.attr.align);
        v_note_decl(v, d, decl, NULL);
        diag_help(v->ctx, d, "declare it `align 16` (or leave the clause out: every tensor base is 16-byte "
                  "aligned by the kernel ABI)");
        return;
    }
    int64_t m = 16 / ce_gcd(16, esz);  /* a stride in elements must be a multiple of m */
    if (g->n == 2 * rank && rank > 0) {
        NodeId inner = ir_list_at(v->k, g, 2 * rank - 1);
        int64_t c;
        if (!v_const(v, inner, &c) || c != 1) {
            Diag *d = v_report(v, E0605, inner, "TMA needs the innermost stride of `%s` to be 1, "
                               "found `%s`", v_name(v, decl), v_text(v, inner));
            diag_help(v->ctx, d, "transpose the tile instead (`^T`), or copy with `load`/`store`");
            return;
        }
        for (uint32_t i = 0; i + 1 < rank; i++) {
            NodeId st = ir_list_at(v->k, g, rank + i);
            if (ce_is_multiple(v->ctx, v->k, st, m))
                continue;
            Diag *d = v_report(v, E0606, st, "TMA needs strides that are multiples of 16 bytes: "
                               "stride `%s` of `%s` (%d-byte elements) is not provably a multiple "
                               "of %lld", v_text(v, st), v_name(v, decl), esz, (long long)m);
            diag_help(v->ctx, d, "add `assume %s %% %lld == 0`", v_text(v, st), (long long)m);
            return;
        }
        return;
    }
    if (rank < 2)
        return;
    /* row-major: every outer stride is a multiple of the innermost extent */
    NodeId inner = ir_list_at(v->k, g, rank - 1);
    if (ce_is_multiple(v->ctx, v->k, inner, m))
        return;
    int64_t c;
    Diag *d = v_report(v, E0606, gref, "TMA needs row strides that are multiples of 16 bytes: rows "
                       "of `%s` are `%s` elements of %d bytes, not provably a multiple of %lld elements",
                       v_name(v, decl), v_text(v, inner), esz, (long long)m);
    v_note_decl(v, d, decl, NULL);
    if (v_const(v, inner, &c))
        diag_help(v->ctx, d, "pad the rows to a multiple of %lld elements (`strides [...]`)", (long long)m);
    else
        diag_help(v->ctx, d, "add `assume %s %% %lld == 0` to the kernel header", v_text(v, inner),
                  (long long)m);
    (void)stmt;
}

/* the element types cp.reduce.async.bulk.tensor .add takes (PTX ISA §9.7.9.27.1.3) */
static int reduce_add_dtype(DType t)
{
    return t == DT_F32 || t == DT_F16 || t == DT_BF16 || t == DT_I32 || t == DT_U32 || t == DT_U64;
}

static void check_tma(Ver *v, NodeId s)
{
    const Node *x = N(v, s);
    int load = x->op == OP_TMA_LOAD;
    NodeId sref = load ? x->a : x->b, gref = load ? x->b : x->a;
    if (!sref || !gref || v_err(v, sref) || v_err(v, gref) || !x->a || !vt_of(v, sref) || !vt_of(v, gref))
        return;
    const Type *S = ver_type(v->k, sref), *G = ver_type(v->k, gref);
    NodeId sdecl = v_root_decl(v, sref), gdecl = v_root_decl(v, gref);
    const char *kw = load ? "tma" : x->sub ? "tma.store.add" : "tma.store";
    if (S->kind != TK_TILE || S->space != SP_SHARED) {
        Diag *d = v_report(v, E0609, sref, "`%s` %s a shared-memory tile; `%s` is %s", kw,
                           load ? "writes" : "reads", v_text(v, sref), vt_str(v, vt_of(v, sref)));
        v_note_decl(v, d, sdecl, NULL);
        return;
    }
    if (G->space != SP_GLOBAL || (G->kind != TK_TENSOR && G->kind != TK_SCALAR)) {
        Diag *d = v_report(v, E0609, gref, "`%s` %s a global tensor; `%s` is %s", kw,
                           load ? "reads" : "writes", v_text(v, gref), vt_str(v, vt_of(v, gref)));
        v_note_decl(v, d, gdecl, NULL);
        return;
    }
    if (S->transposed || G->transposed) {
        v_report(v, E0610, S->transposed ? sref : gref, "`%s` copies boxes as they are stored: "
                 "drop `^T` (transpose when the tile is used)", kw);
        return;
    }
    if (S->dtype != G->dtype) {
        Diag *d = v_report(v, E0610, gref, "`%s` copies bytes: the tile holds %s, the tensor %s", kw,
                           ir_dtypes[S->dtype].spelling, ir_dtypes[G->dtype].spelling);
        v_note_decl(v, d, sdecl, NULL);
        return;
    }
    if (x->sub && !reduce_add_dtype((DType)G->dtype)) {
        Diag *d = v_report(v, E0613, gref, "`tma.store.add` adds %s elements, which the TMA unit's "
                           "reduction does not: it adds f32, f16, bf16, i32, u32 and u64",
                           ir_dtypes[G->dtype].spelling);
        v_note_decl(v, d, gdecl, NULL);
        diag_help(v->ctx, d, "accumulate in an f32 tensor and convert it afterwards");
        return;
    }
    /* the global side gives the box's start in every dim (7.3); the box maps onto the
     * last r dims, the leading dims have extent 1; a slice must equal the box extent */
    const Type *GD = ver_type(v->k, gdecl);
    const Node *gi = N(v, gref);
    if (GD->rank < S->rank) {
        Diag *d = v_report(v, E0610, gref, "`%s`: a %u-D box from a tensor of rank %u", kw, S->rank,
                           GD->rank);
        v_note_decl(v, d, gdecl, NULL);
        return;
    }
    if (gi->op != OP_INDEX || gi->n != GD->rank || N(v, gi->a)->op != OP_NAME) {
        Diag *d = v_report(v, E0610, gref, "`%s` needs the box's start in each of the %u dims of "
                           "`%s`: `%s[i0, ...]`", kw, GD->rank, v_name(v, gdecl), v_name(v, gdecl));
        v_note_decl(v, d, gdecl, NULL);
        return;
    }
    for (uint32_t j = 0; j < gi->n; j++) {
        NodeId ix = ir_list_at(v->k, gi, j);
        const Node *xn = N(v, ix);
        if (xn->op == OP_COLON) {
            v_report(v, E0610, ix, "`%s` takes a start (or a slice) per dim, not `:`", kw);
            return;
        }
        if (xn->op != OP_SLICE)
            continue;
        int bj = (int)j - (GD->rank - S->rank);
        int64_t want = bj >= 0 ? S->shape[bj] : 1, got;
        if (v_const(v, xn->b, &got) && want > 0 && got != want) {
            Diag *dg = v_report(v, E0610, xn->b, "`%s`: the slice has %lld elements but the box "
                                "extent in this dim is %lld", kw, (long long)got, (long long)want);
            v_note_decl(v, dg, sdecl, NULL);
            return;
        }
    }
    int esz = ir_dtype_bytes((DType)S->dtype);
    int r = S->rank;
    for (int i = 0; i < r; i++) {
        if (S->shape[i] > 256) {
            Diag *d = v_report(v, E0601, sref, "TMA box dimension %d is %lld elements; the limit is "
                               "256", i, (long long)S->shape[i]);
            v_note_decl(v, d, sdecl, NULL);
            diag_help(v->ctx, d, "split the copy into boxes of at most 256 (e.g. two `%s` of %lld)",
                      kw, (long long)(S->shape[i] / 2 + S->shape[i] % 2));
            return;
        }
    }
    int64_t inner = S->shape[r - 1], ib = inner * esz;
    if (inner > 0 && ib % 16) {
        Diag *d = v_report(v, E0602, sref, "the TMA box's inner extent is %lld x %d bytes = %lld "
                           "bytes, not a multiple of 16", (long long)inner, esz, (long long)ib);
        v_note_decl(v, d, sdecl, NULL);
        diag_help(v->ctx, d, "make the inner extent a multiple of %lld elements",
                  (long long)(16 / ce_gcd(16, esz)));
        return;
    }
    /* with swizzle S a wider box is issued as one TMA per S-byte panel (5.2, 7.3) */
    uint16_t sw = sdecl ? N(v, sdecl)->v.attr.swizzle : 0;
    if (sw && inner > 0 && ib > sw && ib % sw) {
        Diag *d = v_report(v, E0603, sref, "the TMA box's inner extent is %lld bytes: not one "
                           "%u-byte swizzle panel nor a whole number of them", (long long)ib, sw);
        v_note_decl(v, d, sdecl, NULL);
        diag_help(v->ctx, d, "use an inner extent of %lld elements (one panel) or a multiple",
                  (long long)(sw / esz));
        return;
    }
    /* the layout code generation issues the box with (ir/layout ly_tma_box): a box of
     * several panels must be one matrix, no leading dims above it */
    int known = 1;
    for (int i = 0; i < r; i++)
        known &= S->shape[i] > 0;
    int64_t box[IR_MAX_RANK], panel_bytes;
    if (known && sw && !ly_tma_box(S->shape, r, (DType)S->dtype, sw, box, &panel_bytes)) {
        Diag *d = v_report(v, E0603, sref, "the TMA box is %lld bytes wide in rows of a %u-byte swizzle: "
                           "it takes several panels, which TMA copies one box each, and that needs the box "
                           "to be a single matrix (its leading dims 1)", (long long)ib, sw);
        v_note_decl(v, d, sdecl, NULL);
        diag_help(v->ctx, d, "copy one [rows, %lld] panel at a time, or make the leading dims of the box 1",
                  (long long)(sw / esz));
        return;
    }
    /* the shared destination must be 128-byte aligned */
    uint16_t al = sdecl ? N(v, sdecl)->v.attr.align : 0;
    if (al && al < 128) {
        Diag *d = v_report(v, E0607, sref, "TMA needs a 128-byte aligned shared tile; `%s` is "
                           "declared `align %u`", v_name(v, sdecl), al);
        v_note_decl(v, d, sdecl, NULL);
        diag_help(v->ctx, d, "drop the `align` clause (TMA tiles are aligned to 128) or use align 128");
        return;
    }
    NodeId culprit = 0;
    int64_t need = 0;
    if (!offset_aligned(v, sref, sdecl, 128, &culprit, &need)) {
        Diag *d = v_report(v, E0607, culprit, "TMA needs a 128-byte aligned shared address: index "
                           "`%s` of `%s` must be a multiple of %lld, which it is not provably",
                           v_text(v, culprit), v_name(v, sdecl), (long long)need);
        v_note_decl(v, d, sdecl, NULL);
        diag_help(v->ctx, d, "start the box at a multiple of %lld (rows of the tile)", (long long)need);
        return;
    }
    check_global(v, s, gref, esz);
    if (!load || !x->c || v_err(v, x->c))
        return;
    /* completion: an mbarrier (element) or the pipeline's full(s) */
    const Node *c = N(v, x->c);
    const Type *ct = ver_type(v->k, x->c);
    if (c->op == OP_P_EMPTY) {
        Diag *d = v_report(v, E0608, x->c, "TMA completes on the stage's full barrier, not its "
                           "empty one");
        diag_help(v->ctx, d, "write `on %s.full(...)`", v_text(v, c->a));
        diag_fixit(v->ctx, d, v_span(v, x->c), ir_fmt(v->ctx, "%s.full(%s)", v_source(v, c->a),
                   c->n ? v_source(v, ir_list_at(v->k, c, 0)) : ""));
        return;
    }
    if (ct->kind != TK_MBARRIER || ct->rank != 0) {
        Diag *d = v_report(v, E0608, x->c, "`tma ... on` needs an mbarrier or a pipeline's full(s); "
                           "`%s` is %s", v_text(v, x->c), vt_str(v, vt_of(v, x->c)));
        v_note_decl(v, d, v_root_decl(v, x->c), NULL);
    }
}

static void check_cp_async(Ver *v, NodeId s)
{
    const Node *x = N(v, s);
    if (v_err(v, s) || v_err(v, x->a) || v_err(v, x->b) || !vt_of(v, x->a) || !vt_of(v, x->b))
        return;
    const Type *D = ver_type(v->k, x->a);
    if (D->space != SP_SHARED)
        return;
    int esz = D->dtype == DT_BOOL ? 1 : ir_dtype_bytes((DType)D->dtype); /* bool: a byte */
    if (D->kind == TK_SCALAR || (D->kind == TK_TILE && D->rank == 1)) {
        int64_t n = D->kind == TK_SCALAR ? 1 : D->shape[0], bytes;
        if (__builtin_mul_overflow(n, esz, &bytes))
            bytes = INT64_MAX;
        if (n > 0 && bytes != 4 && bytes != 8 && bytes != 16) {
            Diag *d = v_report(v, E0611, x->a, "`cp.async` copies 4, 8 or 16 bytes per thread; "
                               "this copies %lld x %d = %lld bytes", (long long)n, esz, (long long)bytes);
            diag_help(v->ctx, d, "copy %lld elements (`i : +%lld`) per thread",
                      (long long)(16 / esz), (long long)(16 / esz));
        }
        return;
    }
    if (D->kind == TK_TILE && D->rank >= 2) {
        int64_t ib;
        if (__builtin_mul_overflow(D->shape[D->rank - 1], esz, &ib))
            ib = 0; /* absurd: E0501 reports the tile */
        if (ib > 0 && ib % 4) {
            Diag *d = v_report(v, E0611, x->a, "`cp.async` of a tile moves rows in 4-, 8- or 16-byte "
                               "pieces; a row here is %lld bytes", (long long)ib);
            diag_help(v->ctx, d, "make the inner extent a multiple of %lld elements",
                      (long long)(16 / ce_gcd(16, esz)));
        }
    }
}

void ver_tma_check(Ver *v)
{
    const uint8_t *dead = ver_dead_nodes(v); /* `if LSM == 1 { tma ... }` under LSM = 0 */
    for (NodeId n = 1; n < v->k->nnodes; n++) {
        if (v->in_ref[n] || dead[n])
            continue;
        switch (N(v, n)->op) {
        case OP_TMA_LOAD: case OP_TMA_STORE: check_tma(v, n); break;
        case OP_CP_ASYNC: check_cp_async(v, n); break;
        default: break;
        }
    }
}

int64_t ver_tma_bytes(const CakeCtx *ctx, const Kernel *k, NodeId s)
{
    (void)ctx;
    if (!s || s >= k->nnodes)
        return -1;
    const Node *x = &k->nodes[s];
    if (x->op != OP_TMA_LOAD && x->op != OP_TMA_STORE)
        return -1;
    const Type *t = ver_type(k, x->op == OP_TMA_LOAD ? x->a : x->b);
    if (t->kind != TK_TILE)
        return -1;
    int64_t n = vt_elems(t);
    return n < 0 ? -1 : n * ir_dtype_bytes((DType)t->dtype);
}
