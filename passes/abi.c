/* abi.c — the abi pass: the launch plan of a lowered kernel (ir.h KPlan).
 *
 * Shared memory is one buffer (dynamic shared memory on NVIDIA, so a block may
 * use more than 48 KiB; a static LDS array on AMD). Every SHARED tile, every
 * MBARRIER and every block reduction's scratch gets a slot: swizzled tiles
 * aligned to their swizzle repeat (8 × S bytes, docs/tir.md §5.2), other
 * tiles to 128 bytes or their `align`, mbarriers to 8; the largest
 * alignments first so padding stays small. Tensor maps (L_TMAP) become
 * parameters after the arguments and dims, in order of declaration. The
 * register cap at entry comes from the roles pass. */
#include <string.h>
#include "lower.h"
#include "targets.h"

typedef struct {
    SmemSlot *slots; uint32_t n, cap;
    NodeId *maps; uint32_t nmaps;
    uint32_t warps;
} Abi;

static void add_slot(CakeCtx *ctx, Abi *a, NodeId decl, uint64_t bytes, uint32_t align)
{
    for (uint32_t i = 0; i < a->n; i++)
        if (a->slots[i].decl == decl)
            return;
    a->slots = arena_grow(&ctx->arena, a->slots, &a->cap, a->n + 1, sizeof *a->slots);
    a->slots[a->n++] = (SmemSlot){decl, 0, (uint32_t)bytes, align};
}

static uint64_t tile_bytes(Lw *w, NodeId decl)
{
    const Type *t = irb_type(&w->b, decl);
    uint64_t n = (uint64_t)(ir_dtype_bytes((DType)t->dtype) ? ir_dtype_bytes((DType)t->dtype) : 1) *
                 (t->lanes ? t->lanes : 1);
    for (int i = 0; i < t->rank; i++)
        n *= (uint64_t)(t->shape[i] > 0 ? t->shape[i] : 1);
    return n;
}

static void collect(Lw *w, Abi *a, NodeId id, int depth)
{
    Kernel *k = w->b.k;
    CakeCtx *ctx = w->b.ctx;
    if (!id || depth > 400)
        return;
    Node *n = &k->nodes[id];
    switch ((Op)n->op) {
    case OP_SHARED: {
        uint32_t al = n->v.attr.swizzle ? 8u * n->v.attr.swizzle : 128;
        if (n->v.attr.align > al)
            al = n->v.attr.align;
        add_slot(ctx, a, id, tile_bytes(w, id), al);
        break;
    }
    case OP_MBARRIER: {
        int64_t cnt = 1;
        if (n->a && !lw_const(w, n->a, &cnt))
            cnt = 1;
        add_slot(ctx, a, id, 8 * (uint64_t)cnt, 8);
        break;
    }
    case OP_BLOCK_ADD: case OP_BLOCK_MAX: case OP_BLOCK_MIN:
        if (a->warps > 1)
            add_slot(ctx, a, id, 8 * (uint64_t)a->warps, 16);
        break;
    case OP_L_TMAP:
        ir_push_node_list(ctx, &a->maps, &a->nmaps, id);
        return;
    case OP_REFERENCE:
        return;
    default:
        break;
    }
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        collect(w, a, kids[i], depth + 1);
    for (uint32_t i = 0; i < k->nodes[id].n; i++)
        collect(w, a, k->lists[k->nodes[id].list + i], depth + 1);
}

uint32_t pass_abi(CakeCtx *ctx, Kernel *k, Target tg, uint32_t maxnreg)
{
    Lw w;
    lw_init(&w, ctx, k, tg, NULL);
    Abi a;
    memset(&a, 0, sizeof a);
    int ws = tg_warp(tg);
    int64_t threads = ce_block_threads(ctx, k, tg);
    a.warps = (uint32_t)((threads + ws - 1) / ws);
    collect(&w, &a, k->body, 0);
    /* largest alignment first (stable) */
    for (uint32_t i = 1; i < a.n; i++)
        for (uint32_t j = i; j > 0 && a.slots[j].align > a.slots[j - 1].align; j--) {
            SmemSlot t = a.slots[j];
            a.slots[j] = a.slots[j - 1];
            a.slots[j - 1] = t;
        }
    uint64_t off = 0;
    for (uint32_t i = 0; i < a.n; i++) {
        off = (off + a.slots[i].align - 1) / a.slots[i].align * a.slots[i].align;
        a.slots[i].offset = (uint32_t)off;
        off += a.slots[i].bytes;
    }
    KPlan *p = arena_alloc(&ctx->arena, sizeof *p);
    p->smem = a.slots;
    p->nsmem = a.n;
    p->smem_bytes = (uint32_t)((off + 15) / 16 * 16);
    p->tmaps = a.maps;
    p->ntmaps = a.nmaps;
    p->block_threads = (uint32_t)threads;
    p->maxnreg = maxnreg;
    k->plan = p;
    k->level = IR_LEVEL_LOWERED;
    return 0;
}
