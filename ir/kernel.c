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

NodeId ir_node(CakeCtx *ctx, Kernel *k, Op op, Span span)
{
    if (k->nnodes == k->capnodes) {
        uint32_t cap = k->capnodes * 2;
        k->nodes = arena_realloc(&ctx->arena, k->nodes, k->capnodes * sizeof *k->nodes,
                                 cap * sizeof *k->nodes);
        k->capnodes = cap;
    }
    Node *n = &k->nodes[k->nnodes];
    memset(n, 0, sizeof *n);
    n->op = (uint16_t)op;
    n->span = span;
    n->lanes = 1;
    return k->nnodes++;
}

uint32_t ir_list(CakeCtx *ctx, Kernel *k, const NodeId *items, uint32_t n)
{
    if (k->nlists + n > k->caplists) {
        uint32_t cap = k->caplists * 2;
        while (cap < k->nlists + n)
            cap *= 2;
        k->lists = arena_realloc(&ctx->arena, k->lists, k->caplists * sizeof *k->lists,
                                 cap * sizeof *k->lists);
        k->caplists = cap;
    }
    uint32_t start = k->nlists;
    if (n)
        memcpy(k->lists + start, items, n * sizeof *items);
    k->nlists += n;
    return start;
}

TypeId ir_type_add(CakeCtx *ctx, Kernel *k, const Type *t)
{
    if (k->ntypes == k->captypes) {
        uint32_t cap = k->captypes * 2;
        k->types = arena_realloc(&ctx->arena, k->types, k->captypes * sizeof *k->types,
                                 cap * sizeof *k->types);
        k->captypes = cap;
    }
    k->types[k->ntypes] = *t;
    return k->ntypes++;
}

void ir_push_node_list(CakeCtx *ctx, NodeId **arr, uint32_t *n, NodeId id)
{
    /* grows by powers of two: capacity is implied by n */
    uint32_t cap = 4;
    while (cap < *n)
        cap *= 2;
    if (*n == 0 || *n == cap) {
        uint32_t newcap = *n == 0 ? 4 : cap * 2;
        *arr = arena_realloc(&ctx->arena, *arr, *n * sizeof **arr, newcap * sizeof **arr);
    }
    (*arr)[(*n)++] = id;
}
