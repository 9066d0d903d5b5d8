/* align.c — alignment proofs: every access that code generation emits as one
 * wide instruction is proved to sit at an address that is a multiple of its
 * width, for every shape the kernel's facts allow (docs/tir.md §7.6).
 *
 *   vector load/store  x[.., c : +L] (global or shared, masked or not): the
 *                      L * e bytes as one access (at most 16: codegen aligns
 *                      it to the largest power of two <= L * e, capped at 16)
 *   cp.async           both addresses, L * e = 4, 8 or 16 bytes
 *   fragment stores    store X[r : +R, c : +C] <- T: the runs of a thread's
 *                      elements adjacent in a row, stored as one vector (the
 *                      distribute pass); the thread's column offset is the
 *                      layout's (2t for mma/wgmma), its row anything
 *   ldmatrix/stmatrix  each lane's 16-byte row of an 8x8 matrix: the view's
 *   wgmma operands     start, plus any row, plus multiples of 16 bytes along
 *                      the contiguous dim (a descriptor's start address is in
 *                      16-byte units too)
 * TMA is tma.c's (base `align 16`, strides multiples of 16 bytes, a 128-byte
 * aligned shared box; box coordinates need no alignment).
 *
 * The address is base + Σ_d index_d * stride_d * e. Bases: a tensor is at
 * least 16-byte aligned (the kernel ABI, codegen/cg.h; its `align` when
 * larger), a shared tile at least 128 (ly_smem_align; swizzle permutes whole
 * 16-byte chunks, so it keeps every alignment up to 16). The offset is
 * evaluated in the congruence lattice of analysis/divis.h under the facts
 * that hold at the access: the `assume`s, enclosing `if` conditions (the
 * negation in `else`), earlier `if c { ... return }` guards, and the mask.
 * E0810: a vector access or cp.async not proved; E0811: a matrix row
 * address (ldmatrix, stmatrix, wgmma) not proved. The message gives the byte
 * offset and what was proved; the help names the `assume` that would prove
 * it (with a fix-it inserting it) or the narrower access that is aligned.
 *
 * This file: the accesses (vector, cp.async, fragment stores, matrix rows)
 * and the entry point; align_facts.c the facts and the proof;
 * align_report.c the diagnostics. */
#include <string.h>
#include "align.h"
#include "verify.h"
#include "layout.h"

static void check(Al *a, Acc *x)
{
    if (x->width <= x->esz && x->base % x->width == 0)
        return; /* element-sized: aligned as the base is */
    if (!al_proved(a, x))
        al_report(a, x);
}

/* ---- the accesses -------------------------------------------------------------- */

static int64_t pow2_floor(int64_t v)
{
    int64_t p = 1;
    while (p * 2 <= v)
        p *= 2;
    return p;
}

/* a vector access x[.., c : +L] of a global tensor or a shared tile (all other
 * dims element indices): L * e bytes; cp.async moves exactly that many */
static void vector_access(Al *a, NodeId st, NodeId ref, NodeId mask, int cp_async, const char *verb)
{
    Acc x;
    memset(&x, 0, sizeof x);
    x.at = ref;
    al_context_facts(a, st, mask);
    if (!ref || !al_acc_decl(a, &x, ref) || !al_acc_chain(a, &x, ref) || al_kept_dims(&x) != 1 ||
        !x.kept[x.rank - 1] || x.last_extent < 2)
        return;
    if (x.global) { /* a non-unit innermost stride is element accesses */
        Node *g = al_node(a, al_node(a, x.decl)->a);
        int64_t c;
        if (g->n == 2 * g->sub && (!sy_const(a->s, ir_list_at(a->s->k, g, 2 * g->sub - 1), &c) || c != 1))
            return;
    }
    int64_t bytes = x.last_extent * x.esz;
    x.width = cp_async ? bytes : pow2_floor(bytes > 16 ? 16 : bytes);
    x.kind = cp_async ? AK_CP_ASYNC : AK_VECTOR;
    x.what = ir_fmt(a->s->ctx, "the %lld-byte %s%s", (long long)x.width, cp_async ? "cp.async " : "vector ",
                    cp_async ? (x.global ? "source" : "destination") : verb);
    check(a, &x);
}

/* the lane part of a matrix row: any row of the view; the contiguous dim
 * advances in 16-byte pieces */
static void matrix_access(Al *a, NodeId st, NodeId ref, const char *what)
{
    Acc x;
    memset(&x, 0, sizeof x);
    x.at = ref;
    al_context_facts(a, st, 0);
    if (!ref || !al_acc_decl(a, &x, ref) || x.global || !al_acc_chain(a, &x, ref))
        return;
    for (int d = 0; d < x.rank; d++)
        if (x.kept[d])
            x.extra[d] = d == x.rank - 1 ? dv_mul(dv_const(16 / x.esz > 1 ? 16 / x.esz : 1), dv_top()) : dv_top();
    x.width = 16;
    x.kind = AK_MATRIX;
    x.what = what;
    check(a, &x);
}

/* store X[.., r : +R, c : +C] <- T of a distributed tile: each thread's runs of
 * row-adjacent elements as one vector (passes/distribute.c tile_store) */
static void fragment_store(Al *a, NodeId st, NodeId ref, NodeId value, NodeId mask)
{
    const Type *vt = ver_type(a->s->k, value);
    if (vt->kind != TK_TILE || vt->space != SP_REG || vt->layout == LY_NONE || vt->layout == LY_ROWS ||
        vt->rank != 2)
        return;
    Acc x;
    memset(&x, 0, sizeof x);
    x.at = ref;
    al_context_facts(a, st, mask);
    if (!al_acc_decl(a, &x, ref) || !al_acc_chain(a, &x, ref) || al_kept_dims(&x) != 2 || !x.kept[x.rank - 1])
        return;
    LyTile lv;
    memset(&lv, 0, sizeof lv);
    lv.layout = (Layout)vt->layout;
    lv.dtype = (DType)vt->dtype;
    lv.warp_size = 32;
    lv.rows = (int)vt->shape[0];
    lv.cols = (int)vt->shape[1];
    lv.colvec = lv.rows == 1 && lv.layout != LY_MMA_B;
    if (!ly_valid(&lv, NULL, 0) || lv.colvec)
        return;
    LyThreadPart tp;
    ly_thread_part(&lv, &tp);
    DvCong thr_col = dv_const(0);
    for (int i = 0; i < tp.ncol; i++)
        if (tp.col[i].mod > 1)
            thr_col = dv_add(thr_col, dv_mul(dv_const(tp.col[i].coef), dv_top()));
    int ne = ly_elems(&lv);
    for (int d = 0; d < x.rank; d++)
        if (x.kept[d] && d != x.rank - 1)
            x.extra[d] = dv_top(); /* the thread's row */
    for (int e = 0; e < ne;) { /* the same runs as the distribute pass */
        int r, c, run = 1;
        ly_elem_base(&lv, e, &r, &c);
        while (e + run < ne && run < 16 && (run + 1) * x.esz <= 16) {
            int r2, c2;
            ly_elem_base(&lv, e + run, &r2, &c2);
            if (r2 != r || c2 != c + run)
                break;
            run++;
        }
        while (run & (run - 1))
            run--;
        e += run;
        if (run < 2)
            continue;
        x.extra[x.rank - 1] = dv_add(thr_col, dv_const(c));
        x.width = run * x.esz;
        x.kind = AK_FRAGMENT;
        x.what = ir_fmt(a->s->ctx, "the %lld-byte vector store of %d fragment elements", (long long)x.width, run);
        if (!al_proved(a, &x)) {
            al_report(a, &x);
            return;
        }
    }
}

static void each_load(SyK *s, NodeId e, void *u)
{
    Al *a = u;
    Node *n = sy_node(s, e);
    if (n->op == OP_LOAD)
        vector_access(a, s->stmt_of[e], n->a, n->b, 0, "load");
    else if ((n->op == OP_LDMATRIX || n->op == OP_LDMATRIX_T) && n->n >= 1)
        matrix_access(a, s->stmt_of[e], ir_list_at(s->k, n, 0), "a matrix row of the ldmatrix");
}

static void each_stmt(SyK *s, NodeId st, void *u)
{
    Al *a = u;
    Node *n = sy_node(s, st);
    switch (n->op) {
    case OP_STORE:
        if (ver_type(s->k, n->b)->kind == TK_TILE)
            fragment_store(a, st, n->a, n->b, n->c);
        else if (ver_type(s->k, n->b)->kind != TK_SCALAR) /* a scalar into a slice: per element */
            vector_access(a, st, n->a, n->c, 0, "store");
        break;
    case OP_CP_ASYNC: /* a false mask still writes zeros: not a fact about the addresses */
        vector_access(a, st, n->b, 0, 1, "");
        vector_access(a, st, n->a, 0, 1, "");
        break;
    case OP_STMATRIX:
        matrix_access(a, st, n->a, "a matrix row of the stmatrix");
        break;
    case OP_WGMMA:
        if (ver_type(s->k, n->b)->space == SP_SHARED)
            matrix_access(a, st, n->b, "a matrix of the wgmma descriptor (A)");
        if (ver_type(s->k, n->c)->space == SP_SHARED)
            matrix_access(a, st, n->c, "a matrix of the wgmma descriptor (B)");
        break;
    default:
        break;
    }
    if (n->op != OP_FOR && n->op != OP_ROLE && n->op != OP_REFERENCE)
        sy_stmt_exprs(s, st, each_load, a);
}

static uint32_t check_align(SyK *s)
{
    uint32_t before = s->ctx->nerrors;
    for (NodeId i = 1; i < s->k->nnodes; i++) /* earlier errors: types may be missing */
        if (s->k->nodes[i].flags & NF_ERROR)
            return 0;
    Al a;
    memset(&a, 0, sizeof a);
    a.s = s;
    a.env.ctx = s->ctx;
    a.env.k = s->k;
    a.env.facts = a.facts;
    a.env.capfacts = AL_FACTS;
    a.env.special = al_special;
    a.env.u = &a;
    sy_each_stmt(s, s->k->body, each_stmt, &a);
    return s->ctx->nerrors - before;
}

uint32_t ver_align(CakeCtx *ctx, Kernel *k)
{
    return sy_run(ctx, k, check_align);
}
