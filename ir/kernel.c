/* kernel.c — building kernels: appending nodes, operand lists and types. */
#include <string.h>
#include "ir.h"

Kernel *ir_kernel_new(CakeCtx *ctx)
{
    Kernel *k = arena_alloc(&ctx->arena, sizeof *k);
    k->capnodes = 256;
    k->nodes = arena_alloc(&ctx->arena, k->capnodes * sizeof *k->nodes);
    k->nnodes = 1; /* node 0 is "none" */
    k->caplists = 256;
    k->lists = arena_alloc(&ctx->arena, k->caplists * sizeof *k->lists);
    k->captypes = 64;
    k->types = arena_alloc(&ctx->arena, k->captypes * sizeof *k->types);
    k->ntypes = 1; /* type 0 is "unknown" */
    return k;
}

int ir_kernel_targets(const Kernel *k, Target tg)
{
    return !k->ntargets || k->targets[tg];
}

NodeId ir_node(CakeCtx *ctx, Kernel *k, Op op, Span span)
{
    k->nodes = arena_grow(&ctx->arena, k->nodes, &k->capnodes, k->nnodes + 1, sizeof *k->nodes);
    Node *n = &k->nodes[k->nnodes];
    memset(n, 0, sizeof *n);
    n->op = (uint16_t)op;
    n->span = span;
    n->lanes = 1;
    return k->nnodes++;
}

uint32_t ir_list(CakeCtx *ctx, Kernel *k, const NodeId *items, uint32_t n)
{
    k->lists = arena_grow(&ctx->arena, k->lists, &k->caplists, k->nlists + n, sizeof *k->lists);
    uint32_t start = k->nlists;
    if (n)
        memcpy(k->lists + start, items, n * sizeof *items);
    k->nlists += n;
    return start;
}

TypeId ir_type_add(CakeCtx *ctx, Kernel *k, const Type *t)
{
    k->types = arena_grow(&ctx->arena, k->types, &k->captypes, k->ntypes + 1, sizeof *k->types);
    k->types[k->ntypes] = *t;
    return k->ntypes++;
}

void ir_push_node_list(CakeCtx *ctx, NodeId **arr, uint32_t *n, NodeId id)
{
    /* the capacity is implied by n: 4, doubled whenever n reaches a power of two */
    uint32_t n0 = *n;
    if (n0 == 0 || (n0 >= 4 && !(n0 & (n0 - 1))))
        *arr = arena_realloc(&ctx->arena, *arr, n0 * sizeof **arr, (n0 ? n0 * 2 : 4) * sizeof **arr);
    (*arr)[(*n)++] = id;
}
