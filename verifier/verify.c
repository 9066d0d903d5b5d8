/* verify.c — the verifier's entry point: runs each check in order, per kernel:
 * the role table, types and shapes, target capabilities, resources, TMA, then
 * the synchronization protocol, bounds and alignment (sync.c, bounds.c,
 * align.c). */
#include <string.h>
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

/* E0337: a reference block is per-element math over the arguments, evaluated
 * on the CPU (docs/tir.md §11). Reports, at check time, the schedule-only
 * constructs that `run --check` would otherwise reject as E0951: thread and
 * block indices, memory moves, synchronization, collectives, tile and
 * tensor-core operations, vectors, `return`. The outermost offending node is
 * reported; what lies below it is not looked at again. */
static const char *schedule_only(const Ver *v, NodeId n)
{
    const Node *x = &v->k->nodes[n];
    Op op = (Op)x->op;
    if (op == OP_SPECIAL && x->sub == SR_SM_COUNT)
        return "the device's SM count, known only at launch";
    if (op == OP_SPECIAL && x->sub >= SR_GRID_X && x->sub <= SR_GRID_Z)
        return "the launch's grid size";
    if (op == OP_SPECIAL)
        return "a thread or block index";
    if (op == OP_LOAD)
        return "a memory load (a reference reads an argument element directly: `x[i]`)";
    if (op == OP_STORE)
        return "a memory store (a reference assigns an element: `y[i] = ...`)";
    if (op == OP_RETURN)
        return "kernel control flow (a reference has no threads to end)";
    if (op == OP_SLICE || op == OP_COLON || op == OP_TRANS)
        return "a tile view (a reference reads and writes one element at a time)";
    if (op == OP_DOT || op == OP_HSUM || op == OP_HMAX || op == OP_HMIN || (op == OP_CAST && x->lanes > 1))
        return "a vector operation (a reference computes on scalars)";
    if (op == OP_REG)
        return "a register tile (declare a `var` instead)";
    if (ir_ops[op].cls == OC_PIPE)
        return "a pipeline member";
    if (ir_ops[op].flags & (OF_SYNC | OF_BLOCK))
        return "synchronization";
    if (ir_ops[op].flags & OF_TC)
        return "a tensor-core operation";
    if (ir_ops[op].flags & OF_TILE)
        return "a tile reduction";
    if (ir_ops[op].flags & OF_WARP)
        return "a warp collective";
    if (ir_ops[op].flags & (OF_MEM | OF_ASYNC | OF_SMEM))
        return "a memory move";
    return NULL;
}

static void check_ref(Ver *v, NodeId n, int depth)
{
    if (!n || n >= v->k->nnodes || depth > 4096)
        return;
    const Node *x = &v->k->nodes[n];
    const char *what = schedule_only(v, n);
    if (what) {
        if (v_err(v, n))
            return;
        const char *text = x->op == OP_SPECIAL || x->op == OP_CAST ? v_text(v, n) : ir_ops[x->op].spelling;
        Diag *d = v_report(v, E0337, n, "%s%s%s is not allowed in a reference block: it is %s",
                           text && *text ? "`" : "", text && *text ? text : "this", text && *text ? "`" : "",
                           what);
        diag_help(v->ctx, d, "a reference is per-element math over the arguments, run on the CPU: let, var, "
                  "for, if, assignments, sum/max/min(k in a..b, e), casts and math builtins");
        return;
    }
    NodeId kids[4] = {x->a, x->b, x->c, x->d};
    for (int i = 0; i < 4; i++)
        check_ref(v, kids[i], depth + 1);
    for (uint32_t i = 0; i < x->n; i++)
        check_ref(v, v->k->lists[x->list + i], depth + 1);
}

static void ver_reference(Ver *v)
{
    for (NodeId n = 1; n < v->k->nnodes; n++)
        if (v->k->nodes[n].op == OP_REFERENCE)
            check_ref(v, v->k->nodes[n].a, 0);
    check_ref(v, v->k->reference, 0);   /* reported nodes are not reported twice */
}

/* the verifier's state for k: roles and reference code marked (or taken
 * from the shared tree), block sizes */
static void ver_begin(Ver *v, CakeCtx *ctx, Kernel *k, const VerTree *tree)
{
    memset(v, 0, sizeof *v);
    v->ctx = ctx;
    v->k = k;
    if (tree) {
        v->role_of = tree->role_of;
        v->in_ref = tree->in_ref;
        for (uint32_t i = 0; i < tree->nmarked; i++)
            k->nodes[tree->marked[i]].flags |= NF_ERROR;
    } else {
        v->role_of = arena_alloc(&ctx->arena, (k->nnodes + 1) * sizeof *v->role_of);
        v->in_ref = arena_alloc(&ctx->arena, k->nnodes + 1);
        mark(v, k->body, 0, 0, 0);
        if (k->reference && !v->in_ref[k->reference])
            mark(v, k->reference, 0, 1, 0);
    }
    for (int t = 0; t < TG__COUNT; t++)
        if (k->targets[t])
            v->block_threads[t] = ce_block_threads(ctx, k, (Target)t);
}

void ver_tree(CakeCtx *ctx, Kernel *k, VerTree *t)
{
    Ver v;
    uint32_t errors = ctx->nerrors;
    ver_begin(&v, ctx, k, NULL);
    ver_reference(&v);
    t->errors = ctx->nerrors - errors;
    t->role_of = v.role_of;
    t->in_ref = v.in_ref;
    t->marked = NULL;
    t->nmarked = 0;
    for (NodeId n = 1; n < k->nnodes; n++)
        if (k->nodes[n].flags & NF_ERROR)
            ir_push_node_list(ctx, &t->marked, &t->nmarked, n);
}

uint32_t ver_kernel_types(CakeCtx *ctx, Kernel *k)
{
    uint32_t errors = ctx->nerrors;
    Ver v;
    ver_begin(&v, ctx, k, NULL);
    ver_roles(&v);
    ver_types(&v);
    return ctx->nerrors - errors;
}

/* the checks of ver_kernel after the reference check, which found `before`
 * errors (a broken kernel's coverage says nothing) */
static uint32_t ver_checks(Ver *v, uint32_t before)
{
    CakeCtx *ctx = v->ctx;
    Kernel *k = v->k;
    uint32_t errors = ctx->nerrors;
    ver_roles(v);
    ver_types(v);
    ver_caps(v);
    ver_resources(v);
    ver_tma_check(v);
    ver_sync(ctx, k);
    ver_bounds(ctx, k);
    ver_align(ctx, k);
    if (ctx->nerrors == errors && !before && !ctx->defer_coverage)
        ver_coverage(ctx, k);
    return ctx->nerrors - errors;
}

uint32_t ver_kernel_tree(CakeCtx *ctx, Kernel *k, const VerTree *t)
{
    Ver v;
    ver_begin(&v, ctx, k, t);
    return ver_checks(&v, t->errors);
}

uint32_t ver_kernel(CakeCtx *ctx, Kernel *k)
{
    uint32_t errors = ctx->nerrors;
    Ver v;
    ver_begin(&v, ctx, k, NULL);
    ver_reference(&v);
    ver_checks(&v, ctx->nerrors - errors);
    return ctx->nerrors - errors;
}

uint32_t ver_verify(CakeCtx *ctx, Module *m)
{
    uint32_t errors = ctx->nerrors;
    for (uint32_t i = 0; i < m->nkernels; i++)
        ver_kernel_bound(ctx, m->kernels[i], NULL);
    return ctx->nerrors - errors;
}
