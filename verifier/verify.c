/* verify.c — the verifier's entry point: runs each check in order, per kernel:
 * the role table, types and shapes, target capabilities, resources, TMA, then
 * the synchronization protocol and bounds (sync.c, bounds.c). */
#include "vpriv.h"

const Type *ver_type(const Kernel *k, NodeId n)
{
    if (!n || n >= k->nnodes || k->nodes[n].type >= k->ntypes)
        return &k->types[0];
    return &k->types[k->nodes[n].type];
}

/* records, for every node, its enclosing role and whether it is reference code */
static void mark(Ver *v, NodeId n, NodeId role, uint8_t ref, int depth)
{
    if (!n || n >= v->k->nnodes || depth > 4096)
        return;
    const Node *x = &v->k->nodes[n];
    v->role_of[n] = role;
    v->in_ref[n] = ref;
    if (x->op == OP_REFERENCE)
        ref = 1;
    NodeId kids[4] = {x->a, x->b, x->c, x->d};
    for (int i = 0; i < 4; i++)
        mark(v, kids[i], x->op == OP_ROLE && i == 3 ? n : role, ref, depth + 1);
    for (uint32_t i = 0; i < x->n; i++)
        mark(v, v->k->lists[x->list + i], role, ref, depth + 1);
}

uint32_t ver_kernel(CakeCtx *ctx, Kernel *k)
{
    uint32_t errors = ctx->nerrors;
    Ver v = {0};
    v.ctx = ctx;
    v.k = k;
    v.role_of = arena_alloc(&ctx->arena, (k->nnodes + 1) * sizeof *v.role_of);
    v.in_ref = arena_alloc(&ctx->arena, k->nnodes + 1);
    mark(&v, k->body, 0, 0, 0);
    if (k->reference && !v.in_ref[k->reference])
        mark(&v, k->reference, 0, 1, 0);
    v.ws_min = 64;
    v.ws_max = 32;
    for (int t = 0; t < TG__COUNT; t++) {
        if (!k->targets[t])
            continue;
        int ws = ver_target((Target)t)->warp_size;
        v.ws_min = ws < v.ws_min ? ws : v.ws_min;
        v.ws_max = ws > v.ws_max ? ws : v.ws_max;
        v.block_threads[t] = ver_block_threads(ctx, k, ws);
    }
    if (v.ws_min > v.ws_max)
        v.ws_min = v.ws_max = 32;
    ver_roles(&v);
    ver_types(&v);
    ver_caps(&v);
    ver_resources(&v);
    ver_tma_check(&v);
    ver_sync(ctx, k);
    ver_bounds(ctx, k);
    return ctx->nerrors - errors;
}

uint32_t ver_verify(CakeCtx *ctx, Module *m)
{
    uint32_t errors = ctx->nerrors;
    for (uint32_t i = 0; i < m->nkernels; i++)
        ver_kernel(ctx, m->kernels[i]);
    return ctx->nerrors - errors;
}
