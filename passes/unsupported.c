/* unsupported.c — the unsupported pass: after the lowering passes, every op
 * that is still in the kernel's body and has no lowering yet is reported
 * (E0902), all of them at once, before code generation starts. A lowering
 * pass that meets a form it cannot take apart (a tile view that is not
 * fragment-aligned, say) reports E0902 at that construct itself; codegen
 * reports it only for the few SIMT forms it still refuses. The reference
 * block is the oracle's and is not checked. */
#include "passes.h"
#include "targets.h"

/* the TIR-L ops AMD code generation emits: lane moves, and the lowered
 * instruction of a tensor-core family the target has (ir/tcfamily.h: MFMA) */
static int amd_lowered(const Node *n, Target tg)
{
    if (n->op == OP_L_PACK || n->op == OP_L_LANE)
        return 1;
    const TcFamilyInfo *f = tc_family(tc_family_of((Op)n->op));
    return f->id != TCF_NONE && n->op == f->lowered && tg_has(tg, f->feature);
}

static const char *unsupported(const Kernel *k, const Node *n, Target tg)
{
    uint16_t fl = ir_ops[n->op].flags;
    switch ((Op)n->op) {
    case OP_REG:
        if (((n->flags & NF_HAS_LAYOUT) && n->v.attr.layout != LY_NONE) ||
            ((n->flags & NF_HAS_SCOPE) && n->v.attr.scope != SC_THREAD && n->v.attr.scope != SC_NONE))
            return "a register tile with this layout or scope";
        return NULL;
    case OP_PIPELINE: return "pipelines here";
    case OP_ROLE: return "roles here";
    case OP_TRANS: return "transposed views (^T) outside tensor-core operands";
    case OP_COLON: return "whole-dimension indices outside tile operands";
    case OP_SUM: case OP_RMAX: case OP_RMIN: return "reductions over a range (reference only)";
    case OP_FIELD: return "member access";
    case OP_MB_ARRIVE: case OP_MB_EXPECT: case OP_MB_WAIT: return "mbarrier statements here";
    default: break;
    }
    (void)k;
    if (tg_vendor(tg) == VENDOR_AMD && ((ir_ops[n->op].cls == OC_LOW && !amd_lowered(n, tg)) ||
                                          n->op == OP_CP_ASYNC ||
                                          n->op == OP_CP_COMMIT || n->op == OP_CP_WAIT ||
                                          n->op == OP_FENCE_PROXY))
        return "tile and async operations on AMD targets";
    if (ir_ops[n->op].cls == OC_PIPE || (fl & OF_TILE) || (ir_ops[n->op].cls != OC_LOW && (fl & OF_TC)) ||
        n->op == OP_LDMATRIX || n->op == OP_LDMATRIX_T || n->op == OP_STMATRIX ||
        n->op == OP_TMA_LOAD || n->op == OP_TMA_STORE || n->op == OP_TMA_WAIT)
        return "";
    return NULL;
}

typedef struct {
    CakeCtx *ctx;
    Kernel *k;
    Target tg;
} Uw;

/* the walk calls itself for the children that need a visit only (ir_walk_child) */
static void walk(Uw *u, NodeId id, int depth)
{
    Kernel *k = u->k;
    if (id >= k->nnodes || depth > 4096)
        return;
    Node *n = ir_get(k, id);
    if (n->op == OP_REFERENCE)
        return;
    const char *what = unsupported(k, n, u->tg);
    if (what) {
        if (!(n->flags & NF_ERROR)) {
            n->flags |= NF_ERROR;
            const char *sp = ir_ops[n->op].spelling;
            Diag *d = diag_report(u->ctx, E0902, n->span, "not supported by code generation yet: %s",
                                  *what ? what : *sp ? ir_fmt(u->ctx, "'%s'", sp) : ir_ops[n->op].name);
            diag_help(u->ctx, d, "docs/tirl.md lists what the lowering passes and code generation cover");
        }
        return;
    }
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        if (ir_walk_child(k, kids[i]))
            walk(u, kids[i], depth + 1);
    for (uint32_t i = 0, l = n->list, e = n->n; i < e; i++)
        if (ir_walk_child(k, k->lists[l + i]))
            walk(u, k->lists[l + i], depth + 1);
}

uint32_t pass_unsupported(CakeCtx *ctx, Kernel *k, Target tg)
{
    uint32_t before = ctx->nerrors;
    Uw u = {ctx, k, tg};
    if (k->body)
        walk(&u, k->body, 0);
    return ctx->nerrors - before;
}
