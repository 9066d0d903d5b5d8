/* lower.c — the lowering passes' shared toolbox (lower.h): the block
 * rewriter, single-issue conditions, views of shared tiles and their
 * element references and addresses. */
#include <string.h>
#include "lower.h"
#include "targets.h"

void lw_init(Lw *w, CakeCtx *ctx, Kernel *k, Target tg, void *user)
{
    memset(w, 0, sizeof *w);
    irb_init(&w->b, ctx, k);
    w->tg = tg;
    w->user = user;
}

Node *lw_node(Lw *w, NodeId n)
{
    return ir_get(w->b.k, n);
}

void lw_unsupported(Lw *w, NodeId at, const char *what, const char *help)
{
    Node *n = lw_node(w, at);
    if (n->flags & NF_ERROR)
        return;
    n->flags |= NF_ERROR;
    Diag *d = diag_report(w->b.ctx, E0902, n->span, "not supported by code generation yet: %s", what);
    diag_help(w->b.ctx, d, "%s", help);
    w->errors++;
}

static void rewrite_children(Lw *w, NodeId s, LwStmtFn fn)
{
    Node *n = lw_node(w, s);
    switch ((Op)n->op) {
    case OP_BLOCK:
        lw_rewrite(w, s, fn);
        return;
    case OP_FOR: {
        uint32_t fresh = (n->flags & NF_FRESH_LOOP) != 0;
        w->fresh += fresh;
        lw_rewrite(w, n->d, fn);
        w->fresh -= fresh;
        return;
    }
    case OP_IF: {
        NodeId then = n->b, els = n->c;
        lw_rewrite(w, then, fn);
        if (els && lw_node(w, els)->op == OP_IF)
            rewrite_children(w, els, fn);
        else if (els)
            lw_rewrite(w, els, fn);
        return;
    }
    case OP_ROLE: {
        NodeId saved = w->role, body = n->d;
        w->role = s;
        lw_rewrite(w, body, fn);
        w->role = saved;
        return;
    }
    default:
        return;
    }
}

void lw_rewrite(Lw *w, NodeId block, LwStmtFn fn)
{
    Kernel *k = w->b.k;
    if (!block || k->nodes[block].op != OP_BLOCK)
        return;
    IrList out = {0};
    uint32_t n = k->nodes[block].n;
    for (uint32_t i = 0; i < n; i++) {
        NodeId s = k->lists[k->nodes[block].list + i];
        if (k->nodes[s].op == OP_REFERENCE) {
            irb_push(&w->b, &out, s);
            continue;
        }
        rewrite_children(w, s, fn);
        w->b.span = k->nodes[s].span;
        fn(w, s, &out);
    }
    Node *b = &k->nodes[block];
    b->list = ir_list(w->b.ctx, k, out.v, out.n);
    b->n = out.n;
}

NodeId lw_issuer(Lw *w)
{
    IrB *b = &w->b;
    if (!w->role)
        return irb_bin(b, OP_EQ, irb_special(b, SR_THREAD_X), irb_i32(b, 0));
    if (lw_node(w, w->role)->sub == UNIT_WARPGROUPS)
        return irb_bin(b, OP_EQ, irb_divmod_c(b, irb_special(b, SR_THREAD_X), 1, (int)tg_unit_threads(w->tg, UNIT_WARPGROUPS)), irb_i32(b, 0));
    return irb_bin(b, OP_EQ, irb_special(b, SR_LANE), irb_i32(b, 0));
}

NodeId lw_single_issue(Lw *w, const NodeId *stmts, uint32_t n)
{
    return irb_if(&w->b, lw_issuer(w), irb_block(&w->b, stmts, n), 0);
}

NodeId lw_decl_of(Lw *w, NodeId ref)
{
    for (int depth = 0; ref && depth < 16; depth++) {
        Node *n = lw_node(w, ref);
        if (n->op == OP_NAME)
            return n->decl;
        if (n->op != OP_INDEX && n->op != OP_TRANS)
            return 0;
        ref = n->a;
    }
    return 0;
}

int lw_const(Lw *w, NodeId e, int64_t *v)
{
    if (lw_node(w, e)->op == OP_INT) {
        *v = lw_node(w, e)->v.i;
        return 1;
    }
    return ce_const_int(w->b.ctx, w->b.k, e, v);
}

/* ---- views of shared tiles ------------------------------------------------ */

static int view_of(Lw *w, NodeId ref, LwView *v)
{
    Node *n = lw_node(w, ref);
    if (n->op == OP_NAME) {
        Node *d = lw_node(w, n->decl);
        if (d->op != OP_SHARED)
            return 0;
        const Type *t = irb_type(&w->b, n->decl);
        memset(v, 0, sizeof *v);
        v->decl = n->decl;
        v->rank = t->rank;
        v->dt = (DType)t->dtype;
        v->swizzle = d->v.attr.swizzle;
        for (int i = 0; i < t->rank; i++) {
            v->dims[i] = t->shape[i];
            v->start[i] = irb_i32(&w->b, 0);
            v->kept[i] = 1;
            v->extent[i] = t->shape[i];
        }
        return 1;
    }
    if (n->op == OP_TRANS) {
        if (!view_of(w, n->a, v))
            return 0;
        v->transposed = !v->transposed;
        return 1;
    }
    if (n->op != OP_INDEX || !view_of(w, n->a, v))
        return 0;
    /* the indices apply to the kept dims of the inner view, leading first */
    uint32_t used = 0;
    for (int d = 0; d < v->rank && used < n->n; d++) {
        if (!v->kept[d])
            continue;
        NodeId ix = ir_list_at(w->b.k, n, used++);
        Node *x = lw_node(w, ix);
        if (x->op == OP_COLON)
            continue;
        if (x->op == OP_SLICE) {
            int64_t e = 0;
            if (!lw_const(w, x->b, &e))
                return 0;
            v->start[d] = irb_add(&w->b, v->start[d], irb_cast(&w->b, x->a, DT_I32, 1));
            v->extent[d] = e;
            continue;
        }
        v->start[d] = irb_add(&w->b, v->start[d], irb_cast(&w->b, ix, DT_I32, 1));
        v->kept[d] = 0;
        v->extent[d] = 1;
    }
    return used == n->n;
}

int lw_view(Lw *w, NodeId ref, LwView *v)
{
    return view_of(w, ref, v);
}

NodeId lw_elem_ref(Lw *w, const LwView *v, const NodeId *rel)
{
    NodeId idx[IR_MAX_RANK];
    int r = 0;
    for (int d = 0; d < v->rank; d++) {
        NodeId x = v->start[d];
        if (v->kept[d]) {
            if (rel && rel[r])
                x = irb_add(&w->b, x, rel[r]);
            r++;
        }
        idx[d] = x;
    }
    return irb_index(&w->b, v->decl, idx, (uint32_t)v->rank, irb_scalar_type(&w->b, v->dt, 1));
}

NodeId lw_saddr(Lw *w, NodeId ref, int raw)
{
    NodeId id = irb_call(&w->b, OP_L_SADDR, &ref, 1, irb_scalar_type(&w->b, DT_U32, 1));
    lw_node(w, id)->sub = raw ? 1 : 0;
    return id;
}

NodeId lw_mbar_addr(Lw *w, NodeId bar_ref)
{
    return lw_saddr(w, bar_ref, 0);
}
