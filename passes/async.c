/* async.c — the async pass: the asynchronous proxies made explicit.
 *
 *   tma T <- X[c..] on B   → single-issue: one L_TMA_LOAD per panel of T
 *                            (docs/tir.md §5.2, §7.3) through a tensor map
 *                            (L_TMAP: tensor, box, swizzle; one per distinct
 *                            triple, passed as a kernel parameter), completing
 *                            on B's address
 *   tma.store X[c..] <- T  → single-issue: L_TMA_STORE per panel (sub 1 for
 *                            tma.store.add, the reduction), then
 *                            L_BULK_COMMIT (each statement is one bulk group)
 *   tma.store.wait N       → single-issue L_BULK_WAIT N
 *   wgmma D += A * B       → L_WG_FENCE; the wgmma (split by distribute);
 *                            L_WG_COMMIT (each statement is one group, §8.4)
 *   wgmma.wait N           → L_WG_WAIT N
 *   (the fence / commit / wait ops are read from the family row, ir/tcfamily.h)
 * Box coordinates are element indices, innermost first; the box covers the
 * tile view's dims mapped onto the tensor's last dims (leading dims 1). */
#include <string.h>
#include "lower.h"
#include "layout.h"
#include "tcfamily.h"

typedef struct {
    NodeId *maps; uint32_t nmaps;   /* L_TMAP declarations made so far */
} Async;

static NodeId tensor_map(Lw *w, NodeId tensor, const int64_t *box, int rank, int swizzle)
{
    Async *as = w->user;
    IrB *b = &w->b;
    for (uint32_t i = 0; i < as->nmaps; i++) {
        Node *m = lw_node(w, as->maps[i]);
        if (lw_node(w, m->a)->decl != tensor || m->n != (uint32_t)rank || m->v.attr.swizzle != swizzle)
            continue;
        int same = 1;
        for (int d = 0; d < rank; d++)
            same &= lw_node(w, ir_list_at(b->k, m, (uint32_t)d))->v.i == box[d];
        if (same)
            return as->maps[i];
    }
    NodeId dims[IR_MAX_RANK];
    for (int d = 0; d < rank; d++)
        dims[d] = irb_i32(b, box[d]);
    NodeId m = irb_call(b, OP_L_TMAP, dims, (uint32_t)rank, 0);
    NodeId tname = irb_name(b, tensor);
    Node *mn = lw_node(w, m); /* no node is made while mn is held */
    mn->a = tname;
    mn->name = ir_intern_cstr(b->ctx, ir_fmt(b->ctx, "%s.tmap%u", ir_symstr(b->ctx, lw_node(w, tensor)->name), as->nmaps));
    mn->v.attr.swizzle = (uint16_t)swizzle;
    ir_push_node_list(b->ctx, &as->maps, &as->nmaps, m);
    return m;
}

/* the start index of each dim of a global tensor ref X[i, j : +n, ...] */
static int tensor_starts(Lw *w, NodeId ref, NodeId *tensor, NodeId *start, int *rank)
{
    Node *n = lw_node(w, ref);
    if (n->op != OP_INDEX || lw_node(w, n->a)->op != OP_NAME)
        return 0;
    *tensor = lw_node(w, n->a)->decl;
    Node *d = lw_node(w, *tensor);
    if (d->op != OP_ARG)
        return 0;
    *rank = irb_type(&w->b, *tensor)->rank;
    if ((int)n->n != *rank)
        return 0;
    for (uint32_t i = 0; i < n->n; i++) {
        NodeId ix = ir_list_at(w->b.k, n, i);
        Node *x = lw_node(w, ix);
        start[i] = x->op == OP_SLICE ? x->a : x->op == OP_COLON ? irb_i32(&w->b, 0) : ix;
        start[i] = irb_cast(&w->b, start[i], DT_I32, 1);
    }
    return 1;
}

static const char ASYNC_HELP[] = "see docs/tirl.md for what the lowering passes handle";

/* one TMA per panel; load: bar != 0 */
static void tma(Lw *w, NodeId s, NodeId shared_ref, NodeId global_ref, NodeId bar, IrList *out)
{
    IrB *b = &w->b;
    LwView v;
    NodeId tensor, start[IR_MAX_RANK];
    int trank = 0;
    uint16_t adds = lw_node(w, s)->sub; /* tma.store.add: the reduction form */
    if (!lw_view(w, shared_ref, &v) || v.transposed || !tensor_starts(w, global_ref, &tensor, start, &trank)) {
        lw_unsupported(w, s, "this TMA operand (a shared tile view and a global tensor ref are expected)", ASYNC_HELP);
        return;
    }
    int64_t shape[IR_MAX_RANK];
    int r = 0;
    for (int d = 0; d < v.rank; d++)
        if (v.kept[d])
            shape[r++] = v.extent[d];
    if (r > trank) {
        lw_unsupported(w, s, "a TMA box of higher rank than its tensor", ASYNC_HELP);
        return;
    }
    int64_t vbox[IR_MAX_RANK], panel_bytes = 0;   /* ir/layout: panels of the view */
    int npanels = ly_tma_box(shape, r, v.dt, v.swizzle, vbox, &panel_bytes);
    if (!npanels) {
        lw_unsupported(w, s, "a TMA box of this shape and swizzle (several panels under a leading dim)", ASYNC_HELP);
        return;
    }
    int64_t inner = shape[r - 1], panel = vbox[r - 1];
    int64_t box[IR_MAX_RANK];
    for (int d = 0; d < trank; d++) /* innermost first */
        box[d] = d < r ? vbox[r - 1 - d] : 1;
    NodeId map = tensor_map(w, tensor, box, trank, v.swizzle);
    IrList issued = {0};
    for (int64_t p = 0; p * panel < inner; p++) {
        NodeId rel[IR_MAX_RANK] = {0};
        rel[r - 1] = irb_i32(b, p * panel);
        NodeId ops[3 + IR_MAX_RANK];
        uint32_t n = 0;
        ops[n++] = irb_name(b, map);
        ops[n++] = lw_saddr(w, lw_elem_ref(w, &v, rel), 1);
        if (bar)
            ops[n++] = lw_mbar_addr(w, irb_clone(b, bar));
        for (int d = trank - 1; d >= 0; d--) {
            NodeId c = irb_clone(b, start[d]);
            ops[n++] = d == trank - 1 ? irb_add_c(b, c, p * panel) : c;
        }
        NodeId is = irb_stmt(b, bar ? OP_L_TMA_LOAD : OP_L_TMA_STORE, ops, n);
        b->k->nodes[is].sub = adds;
        irb_push(b, &issued, is);
    }
    if (!bar)
        irb_push(b, &issued, irb_stmt(b, OP_L_BULK_COMMIT, NULL, 0));
    irb_push(b, out, lw_single_issue(w, issued.v, issued.n));
}

static void stmt(Lw *w, NodeId s, IrList *out)
{
    IrB *b = &w->b;
    Node *n = lw_node(w, s);
    switch ((Op)n->op) {
    case OP_TMA_LOAD:
        tma(w, s, n->a, n->b, n->c, out);
        return;
    case OP_TMA_STORE:
        tma(w, s, n->b, n->a, 0, out);
        return;
    case OP_TMA_WAIT: {
        NodeId c = irb_cast(b, n->a, DT_I32, 1);
        NodeId st = irb_stmt(b, OP_L_BULK_WAIT, &c, 1);
        irb_push(b, out, lw_single_issue(w, &st, 1));
        return;
    }
    default:
        break;
    }
    /* a tensor-core family with the fence / commit / wait protocol (ir/tcfamily.h) */
    const TcFamilyInfo *f = tc_family(tc_family_of((Op)n->op));
    if (f->async == TCA_FENCE_COMMIT_WAIT && n->op == f->op) {
        irb_push(b, out, irb_stmt(b, (Op)f->l_fence, NULL, 0));
        irb_push(b, out, s);
        irb_push(b, out, irb_stmt(b, (Op)f->l_commit, NULL, 0));
        return;
    }
    if (f->async == TCA_FENCE_COMMIT_WAIT && n->op == f->wait) {
        int64_t nw;
        if (pass_planted("async-no-wait") && ce_const_int(b->ctx, b->k, n->a, &nw) && nw > 0)
            return;
        NodeId c = irb_cast(b, n->a, DT_I32, 1);
        irb_push(b, out, irb_stmt(b, (Op)f->l_wait, &c, 1));
        return;
    }
    irb_push(b, out, s);
}

uint32_t pass_async(CakeCtx *ctx, Kernel *k, Target tg)
{
    Async as;
    memset(&as, 0, sizeof as);
    Lw w;
    lw_init(&w, ctx, k, tg, &as);
    lw_rewrite(&w, k->body, stmt);
    /* the tensor maps are declarations at the top of the body */
    if (as.nmaps) {
        Node *body = lw_node(&w, k->body);
        NodeId *items = arena_alloc(&ctx->arena, (as.nmaps + body->n) * sizeof *items);
        memcpy(items, as.maps, as.nmaps * sizeof *items);
        for (uint32_t i = 0; i < body->n; i++)
            items[as.nmaps + i] = ir_list_at(k, body, i);
        NodeId nb = irb_block(&w.b, items, as.nmaps + body->n);
        k->body = nb;
    }
    return w.errors;
}
