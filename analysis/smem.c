/* smem.c — the shared-memory plan (smem.h). */
#include <string.h>
#include "smem.h"

typedef struct {
    CakeCtx *ctx;
    const Kernel *k;
    const CeEnv *env;
    int64_t warps;
    SmemPlan *p;
    uint32_t cap;
} Walk;

static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) || r > SMEM_HUGE ? SMEM_HUGE : r;
}

static void add(Walk *w, NodeId decl, int64_t bytes, int64_t align)
{
    SmemPlan *p = w->p;
    for (uint32_t i = 0; i < p->n; i++)
        if (p->items[i].decl == decl)
            return;
    p->items = arena_grow(&w->ctx->arena, p->items, &w->cap, p->n + 1, sizeof *p->items);
    p->items[p->n++] = (SmemItem){decl, bytes, align, 0};
}

static int64_t count(Walk *w, NodeId e, int64_t per)
{
    int64_t c;
    if (!ce_eval_int(w->ctx, w->k, e, w->env, &c) || c <= 0) {
        w->p->unknown = 1;
        return -1;
    }
    return sat_mul(c, per);
}

static void shared(Walk *w, NodeId id, const Node *n)
{
    const Kernel *k = w->k;
    const Node *t = &k->nodes[n->a];
    int64_t bytes = t->dtype == DT_BOOL ? 1 : (int64_t)ir_dtype_bytes((DType)t->dtype) * (t->lanes ? t->lanes : 1);
    for (uint32_t i = 0; i < t->n; i++) {
        int64_t d;
        if (!ce_eval_int(w->ctx, k, k->lists[t->list + i], w->env, &d) || d < 0) {
            w->p->unknown = 1;
            return;
        }
        bytes = sat_mul(bytes, d);
    }
    int64_t al = n->v.attr.swizzle ? 8 * (int64_t)n->v.attr.swizzle : 128;
    if (n->v.attr.align > al)
        al = n->v.attr.align;
    add(w, id, bytes, al);
}

/* the walk calls itself for the children that need a visit only (ir_walk_child) */
static void walk(Walk *w, NodeId id, int depth)
{
    const Kernel *k = w->k;
    if (id >= k->nnodes || depth > 4096)
        return;
    const Node *n = &k->nodes[id];
    int64_t b;
    switch ((Op)n->op) {
    case OP_REFERENCE:
        return;
    case OP_SHARED:
        if (n->a)
            shared(w, id, n);
        break;
    case OP_MBARRIER:
        if ((b = n->a ? count(w, n->a, 8) : 8) > 0)
            add(w, id, b, 8);
        break;
    case OP_PIPELINE:
        if ((b = count(w, n->a, 16)) > 0)
            add(w, id, b, 8);
        break;
    case OP_BLOCK_ADD: case OP_BLOCK_MAX: case OP_BLOCK_MIN:
        if (w->warps > 1)
            add(w, id, 8 * w->warps, 16);
        break;
    default:
        break;
    }
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        if (ir_walk_child(k, kids[i]))
            walk(w, kids[i], depth + 1);
    for (uint32_t i = 0, l = n->list, e = n->n; i < e; i++)
        if (ir_walk_child(k, k->lists[l + i]))
            walk(w, k->lists[l + i], depth + 1);
}

void an_smem_plan(CakeCtx *ctx, const Kernel *k, Target tg, const CeEnv *env, SmemPlan *out)
{
    memset(out, 0, sizeof *out);
    int64_t threads = ce_block_threads(ctx, k, tg), ws = tg_warp(tg);
    if (threads > tg_info(tg)->max_threads_per_block) /* reported (E0502); no scratch for it */
        threads = 0;
    Walk w = {ctx, k, env, threads > 0 ? (threads + ws - 1) / ws : 0, out, 0};
    if (k->body)
        walk(&w, k->body, 0);
    SmemItem *it = out->items;
    for (uint32_t i = 1; i < out->n; i++) /* largest alignment first (stable) */
        for (uint32_t j = i; j > 0 && it[j].align > it[j - 1].align; j--) {
            SmemItem t = it[j];
            it[j] = it[j - 1];
            it[j - 1] = t;
        }
    int64_t off = 0;
    for (uint32_t i = 0; i < out->n; i++) {
        off = off >= SMEM_HUGE ? SMEM_HUGE : (off + it[i].align - 1) / it[i].align * it[i].align;
        it[i].offset = off;
        off = off >= SMEM_HUGE - it[i].bytes ? SMEM_HUGE : off + it[i].bytes;
    }
    out->total = off >= SMEM_HUGE ? SMEM_HUGE : (off + 15) / 16 * 16;
}
