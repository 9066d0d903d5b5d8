/* simt_subset.c — the simt-subset pass: lists every op of a kernel's body that
 * code generation does not lower yet (E0902), before lowering starts, so the
 * user sees all of them at once. The reference block is the oracle's and is
 * not checked. Codegen reports the same ops if they reach it (once: NF_ERROR). */
#include "passes.h"

static int unsupported(const Kernel *k, const Node *n, const char **what)
{
    uint16_t fl = ir_ops[n->op].flags;
    switch ((Op)n->op) {
    case OP_REG:
        if (((n->flags & NF_HAS_LAYOUT) && n->v.attr.layout != LY_NONE) ||
            ((n->flags & NF_HAS_SCOPE) && n->v.attr.scope != SC_THREAD)) {
            *what = "a register tile with a layout or a scope wider than the thread";
            return 1;
        }
        return 0;
    case OP_MBARRIER: *what = "mbarriers"; return 1;
    case OP_PIPELINE: *what = "pipelines"; return 1;
    case OP_ROLE: *what = "roles"; return 1;
    case OP_TRANS: *what = "transposed views (^T)"; return 1;
    case OP_COLON: *what = "whole-dimension indices (tiles)"; return 1;
    case OP_SUM: case OP_RMAX: case OP_RMIN: *what = "reductions over a range (reference only)"; return 1;
    case OP_CP_COMMIT: *what = "cp.async.commit"; return 1;
    case OP_FENCE_PROXY: *what = "fence.proxy.async"; return 1;
    case OP_FIELD: *what = "member access"; return 1;
    default: break;
    }
    (void)k;
    if (ir_ops[n->op].cls == OC_PIPE || (fl & (OF_TILE | OF_TC | OF_ASYNC)) ||
        n->op == OP_LDMATRIX || n->op == OP_LDMATRIX_T || n->op == OP_STMATRIX ||
        n->op == OP_MB_ARRIVE || n->op == OP_MB_EXPECT || n->op == OP_MB_WAIT) {
        *what = NULL;
        return 1;
    }
    return 0;
}

static void walk(CakeCtx *ctx, Kernel *k, NodeId id, int depth)
{
    if (!id || id >= k->nnodes || depth > 4096)
        return;
    Node *n = ir_get(k, id);
    if (n->op == OP_REFERENCE)
        return;
    const char *what = NULL;
    if (unsupported(k, n, &what)) {
        if (!(n->flags & NF_ERROR)) {
            n->flags |= NF_ERROR;
            const char *sp = ir_ops[n->op].spelling;
            Diag *d = diag_report(ctx, E0902, n->span, "not supported by code generation yet: %s",
                                  what ? what : *sp ? ir_fmt(ctx, "'%s'", sp) : ir_ops[n->op].name);
            diag_help(ctx, d, "code generation covers the SIMT subset for now (scalars, vectors, "
                              "global and shared memory, barriers, shuffles, reductions); "
                              "see codegen/README.md");
        }
        return;
    }
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        walk(ctx, k, kids[i], depth + 1);
    for (uint32_t i = 0; i < n->n; i++)
        walk(ctx, k, k->lists[n->list + i], depth + 1);
}

uint32_t pass_simt_subset(CakeCtx *ctx, Kernel *k, Target tg)
{
    (void)tg;
    uint32_t before = ctx->nerrors;
    walk(ctx, k, k->body, 0);
    return ctx->nerrors - before;
}
