/* abi.c — the abi pass: the launch plan of a lowered kernel (ir.h KPlan).
 *
 * Shared memory is one buffer (dynamic shared memory on NVIDIA, so a block may
 * use more than 48 KiB; a static LDS array on AMD) laid out by the shared-
 * memory plan of analysis/smem.h, the same count the resource check (E0501)
 * judged: every SHARED tile, every MBARRIER and every block reduction's
 * scratch gets a slot. Tensor maps (L_TMAP) become parameters after the
 * arguments and dims, in order of declaration; the whole parameter order is
 * written down once, as KPlan.params. The register cap at entry
 * comes from the roles pass. */
#include <string.h>
#include "lower.h"
#include "smem.h"

/* the tensor maps (L_TMAP), in order of declaration; the walk calls itself for
   the children that need a visit only (ir_walk_child) */
static void tensor_maps(CakeCtx *ctx, const Kernel *k, NodeId id, NodeId **maps, uint32_t *n, int depth)
{
    if (depth > 400)
        return;
    const Node *x = &k->nodes[id];
    if (x->op == OP_L_TMAP) {
        ir_push_node_list(ctx, maps, n, id);
        return;
    }
    if (x->op == OP_REFERENCE)
        return;
    NodeId kids[4] = {x->a, x->b, x->c, x->d};
    for (int i = 0; i < 4; i++)
        if (ir_walk_child(k, kids[i]))
            tensor_maps(ctx, k, kids[i], maps, n, depth + 1);
    for (uint32_t i = 0, l = x->list, e = x->n; i < e; i++)
        if (ir_walk_child(k, k->lists[l + i]))
            tensor_maps(ctx, k, k->lists[l + i], maps, n, depth + 1);
}

/* the kernel ABI's parameter order (ir.h KParam): args, dims, tensor maps */
static void abi_params(CakeCtx *ctx, const Kernel *k, KPlan *p)
{
    p->params = arena_alloc(&ctx->arena, (k->nargs + k->ndims + p->ntmaps + 1) * sizeof *p->params);
    uint32_t n = 0, tensors = 0, scalars = 0;
    for (uint32_t i = 0; i < k->nargs; i++) {
        int tensor = k->nodes[k->nodes[k->args[i]].a].op == OP_GTYPE;
        p->params[n++] = (KParam){tensor ? KP_TENSOR : KP_SCALAR, tensor ? tensors++ : scalars++,
                                  k->args[i]};
    }
    for (uint32_t i = 0; i < k->ndims; i++)
        p->params[n++] = (KParam){KP_DIM, i, k->dims[i]};
    for (uint32_t i = 0; i < p->ntmaps; i++)
        p->params[n++] = (KParam){KP_TMAP, i, p->tmaps[i]};
    p->nparams = n;
}

uint32_t pass_abi(CakeCtx *ctx, Kernel *k, Target tg, uint32_t maxnreg)
{
    SmemPlan sp;
    an_smem_plan(ctx, k, tg, NULL, &sp); /* the plan the resource check counted (E0501) */
    if (sp.unknown || sp.total > UINT32_MAX)
        ir_bug(ctx, "abi: the shared-memory plan of a verified kernel is not constant");
    KPlan *p = arena_alloc(&ctx->arena, sizeof *p);
    p->smem = arena_alloc(&ctx->arena, (sp.n + 1) * sizeof *p->smem);
    for (uint32_t i = 0; i < sp.n; i++)
        p->smem[i] = (SmemSlot){sp.items[i].decl, (uint32_t)sp.items[i].offset,
                                (uint32_t)sp.items[i].bytes, (uint32_t)sp.items[i].align};
    p->nsmem = sp.n;
    p->smem_bytes = (uint32_t)sp.total;
    if (k->body)
        tensor_maps(ctx, k, k->body, &p->tmaps, &p->ntmaps, 0);
    abi_params(ctx, k, p);
    p->block_threads = (uint32_t)ce_block_threads(ctx, k, tg);
    p->maxnreg = maxnreg;
    k->plan = p;
    k->level = IR_LEVEL_LOWERED;
    return 0;
}
