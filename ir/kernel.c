/* kernel.c — building kernels: appending nodes, operand lists and types, and
 * interning types (one id per distinct type). */
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

int ir_arg_workspace(const Kernel *k, uint32_t i)
{
    if (i >= k->nargs)
        return 0;
    const Node *a = &k->nodes[k->args[i]];
    return a->a && k->nodes[a->a].op == OP_GTYPE && (k->nodes[a->a].flags & NF_WORKSPACE);
}

int ir_arg_offsets(const Kernel *k, uint32_t i)
{
    if (i >= k->nargs)
        return 0;
    const Node *a = &k->nodes[k->args[i]];
    return a->a && k->nodes[a->a].op == OP_GTYPE && (k->nodes[a->a].flags & NF_OFFSETS);
}

double ir_arg_tolerance(const Kernel *k, uint32_t i)
{
    if (i >= k->nargs)
        return 0;
    const Node *a = &k->nodes[k->args[i]];
    if (!a->a || k->nodes[a->a].op != OP_GTYPE || !k->nodes[a->a].d)
        return 0;
    const Node *t = &k->nodes[k->nodes[a->a].d];
    return t->op == OP_FLOAT ? t->v.f : t->op == OP_INT ? (double)t->v.i : 0;
}

NodeId ir_node(CakeCtx *ctx, Kernel *k, Op op, Span span)
{
    if (k->nnodes + 1 > k->capnodes)   /* the call only when it grows (lowering appends ~20k nodes) */
        k->nodes = arena_grow_raw(&ctx->arena, k->nodes, &k->capnodes, k->nnodes + 1, sizeof *k->nodes);
    Node *n = &k->nodes[k->nnodes];   /* the room past nnodes is not zeroed: cleared here */
    memset(n, 0, sizeof *n);
    n->op = (uint16_t)op;
    n->span = span;
    n->lanes = 1;
    return k->nnodes++;
}

uint32_t ir_list(CakeCtx *ctx, Kernel *k, const NodeId *items, uint32_t n)
{
    if (k->nlists + n > k->caplists)
        k->lists = arena_grow_raw(&ctx->arena, k->lists, &k->caplists, k->nlists + n, sizeof *k->lists);
    uint32_t start = k->nlists;
    if (n == 1)
        k->lists[start] = items[0];   /* most lists of lowered code: one index */
    else if (n)
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

/* a copy of *t with every byte outside the fields zero, so that memcmp compares fields */
static Type type_key(const Type *t)
{
    Type key;
    memset(&key, 0, sizeof key);
    key.kind = t->kind; key.dtype = t->dtype; key.lanes = t->lanes; key.space = t->space;
    key.layout = t->layout; key.scope = t->scope; key.rank = t->rank;
    key.transposed = t->transposed; key.swizzle = t->swizzle; key.align = t->align;
    for (int i = 0; i < IR_MAX_RANK; i++) {
        key.shape[i] = t->shape[i];
        key.dims[i] = t->dims[i];
    }
    return key;
}

/* FNV-style over 8-byte words (a Type is ~100 bytes, hashed at every intern),
 * the high half folded down after each so that every byte reaches the low bits */
static uint32_t type_hash(const Type *t)
{
    const unsigned char *p = (const unsigned char *)t;
    uint64_t h = 14695981039346656037u, w;
    size_t i = 0;
    for (; i + 8 <= sizeof *t; i += 8) {
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 1099511628211u;
        h ^= h >> 32;
    }
    for (; i < sizeof *t; i++)
        h = (h ^ p[i]) * 1099511628211u;
    return (uint32_t)(h ^ (h >> 32));
}

/* puts type id into the open-addressing index (keeps the first of duplicates) */
static void map_put(Kernel *k, TypeId id)
{
    uint32_t mask = k->type_cap - 1, h = type_hash(&k->types[id]) & mask;
    while (k->type_map[h]) {
        if (!memcmp(&k->types[k->type_map[h]], &k->types[id], sizeof(Type)))
            return;
        h = (h + 1) & mask;
    }
    k->type_map[h] = id;
}

/* indexes the types appended since the last call, growing the index to stay half empty */
static void map_sync(CakeCtx *ctx, Kernel *k)
{
    if ((k->ntypes + 1) * 2 > k->type_cap) {
        uint32_t cap = k->type_cap ? k->type_cap : 256;
        while ((k->ntypes + 1) * 2 > cap)
            cap *= 2;
        k->type_map = arena_alloc(&ctx->arena, cap * sizeof *k->type_map);
        k->type_cap = cap;
        k->type_mapped = 1;
    }
    for (; k->type_mapped < k->ntypes; k->type_mapped++)
        map_put(k, k->type_mapped);
}

TypeId ir_type_intern(CakeCtx *ctx, Kernel *k, const Type *t)
{
    Type key = type_key(t);
    map_sync(ctx, k);
    uint32_t mask = k->type_cap - 1, h = type_hash(&key) & mask;
    while (k->type_map[h]) {
        if (!memcmp(&k->types[k->type_map[h]], &key, sizeof key))
            return k->type_map[h];
        h = (h + 1) & mask;
    }
    TypeId id = ir_type_add(ctx, k, &key);
    map_sync(ctx, k);
    return id;
}

TypeId ir_type_scalar(CakeCtx *ctx, Kernel *k, DType dt, int lanes)
{
    Type t;
    memset(&t, 0, sizeof t);
    t.kind = lanes > 1 ? TK_VECTOR : TK_SCALAR;
    t.dtype = (uint8_t)dt;
    t.lanes = (uint8_t)(lanes > 1 ? lanes : 1);
    return ir_type_intern(ctx, k, &t);
}

void ir_push_node_list(CakeCtx *ctx, NodeId **arr, uint32_t *n, NodeId id)
{
    /* the capacity is implied by n: 4, doubled whenever n reaches a power of two */
    uint32_t n0 = *n;
    if (n0 == 0 || (n0 >= 4 && !(n0 & (n0 - 1))))
        *arr = arena_realloc(&ctx->arena, *arr, n0 * sizeof **arr, (n0 ? n0 * 2 : 4) * sizeof **arr);
    (*arr)[(*n)++] = id;
}

/* n ids in a fresh array with the capacity ir_push_node_list implies for n */
static NodeId *copy_ids(CakeCtx *ctx, const NodeId *src, uint32_t n)
{
    uint32_t cap = 4;
    while (cap < n)
        cap *= 2;
    NodeId *dst = arena_alloc(&ctx->arena, cap * sizeof *dst);
    if (n)
        memcpy(dst, src, n * sizeof *dst);
    return dst;
}

/* raw: the room past `used` is not zeroed (nodes and lists: written before they are read) */
static void *copy_bytes(CakeCtx *ctx, const void *src, size_t used, size_t cap, int raw)
{
    void *dst = raw ? arena_alloc_raw(&ctx->arena, cap ? cap : 1) : arena_alloc(&ctx->arena, cap ? cap : 1);
    if (used)
        memcpy(dst, src, used);
    return dst;
}

Kernel *ir_kernel_clone(CakeCtx *ctx, const Kernel *src)
{
    Kernel *k = arena_alloc(&ctx->arena, sizeof *k);
    *k = *src;
    k->params = copy_ids(ctx, src->params, src->nparams);
    k->args = copy_ids(ctx, src->args, src->nargs);
    k->dims = copy_ids(ctx, src->dims, src->ndims);
    k->assumes = copy_ids(ctx, src->assumes, src->nassumes);
    k->shapes = copy_bytes(ctx, src->shapes, src->nshapes * sizeof *k->shapes,
                           (src->nshapes + 1) * sizeof *k->shapes, 0);
    k->nodes = copy_bytes(ctx, src->nodes, src->nnodes * sizeof *k->nodes,
                          src->capnodes * sizeof *k->nodes, 1);
    k->lists = copy_bytes(ctx, src->lists, src->nlists * sizeof *k->lists,
                          src->caplists * sizeof *k->lists, 1);
    k->types = copy_bytes(ctx, src->types, src->ntypes * sizeof *k->types,
                          src->captypes * sizeof *k->types, 0);
    k->type_map = NULL;   /* rebuilt over the copied types on the next intern */
    k->type_cap = k->type_mapped = 0;
    return k;
}
