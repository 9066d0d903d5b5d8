/* launch.c — the launch configuration the kernel ABI promises (cg.h): grid
 * from the `grid` clause on the dims, block from the block-size clause, and
 * the static shared memory a kernel uses. */
#include <string.h>
#include "cg_int.h"
#include "targets.h"

uint32_t cg_threads_of(const CakeCtx *ctx, const Kernel *k, Target tg)
{
    int64_t th = ce_block_threads(ctx, k, tg);
    return th >= 1 && th <= tg_info(tg)->max_threads_per_block ? (uint32_t)th : 0;
}

/* what the host knows at launch beyond the dims: the device's SM count */
typedef struct { const Kernel *k; int64_t sm_count; } LaunchConsts;

static int launch_special(const CeEnv *env, NodeId at, int64_t *out)
{
    const LaunchConsts *lc = env->u;
    if (lc->k->nodes[at].sub != SR_SM_COUNT)
        return 0;
    *out = lc->sm_count;
    return 1;
}

/* the grid extent e with the dims at their launch values (NULL: none known) */
static int grid_extent(CakeCtx *ctx, const Kernel *k, NodeId e, const int64_t *dim_values,
                       int64_t sm_count, int64_t *out)
{
    /* on the stack for the usual few dims: a launch is called millions of times
       in one context, and the context's arena never gives memory back */
    CeBinding local[16];
    CeBinding *b = k->ndims < 16 ? local : arena_alloc(&ctx->arena, (k->ndims + 1) * sizeof *b);
    for (uint32_t i = 0; dim_values && i < k->ndims; i++)
        b[i] = (CeBinding){k->nodes[k->dims[i]].name, dim_values[i]};
    LaunchConsts lc = {k, sm_count > 0 ? sm_count : TG_DEFAULT_SM_COUNT};
    CeEnv env = {b, dim_values ? k->ndims : 0, NULL, launch_special, &lc};
    return ce_eval_int(ctx, k, e, &env, out);
}

uint32_t cg_block_threads(CakeCtx *ctx, const Kernel *k, Target tg)
{
    uint32_t t = cg_threads_of(ctx, k, tg);
    if (!t) {
        diag_report(ctx, E0904, k->block_span.hi ? k->block_span : k->span,
                    "the block size must be a compile-time constant in 1..1024");
        return 0;
    }
    return t;
}

int cg_launch_dims(CakeCtx *ctx, const Kernel *k, Target tg, const int64_t *dim_values,
                   int64_t sm_count, CgLaunch *out)
{
    memset(out, 0, sizeof *out);
    out->grid[0] = out->grid[1] = out->grid[2] = 1;
    out->block[1] = out->block[2] = 1;
    out->block[0] = cg_block_threads(ctx, k, tg);
    if (!out->block[0])
        return 1;
    for (uint32_t i = 0; i < k->ngrid && i < 3; i++) {
        int64_t v = 0;
        if (!grid_extent(ctx, k, k->grid[i], dim_values, sm_count, &v) || v < 0 || v > tg_info(tg)->max_grid[i]) {
            diag_report(ctx, E0904, k->nodes[k->grid[i]].span,
                        "grid extent %u is not computable from the dims, or out of range", i);
            return 1;
        }
        out->grid[i] = (uint32_t)v;
    }
    out->shared_bytes = cg_shared_bytes(ctx, k, tg);
    /* NVIDIA: the plan's buffer is dynamic shared memory (sized at launch) */
    if (k->plan && tg_vendor(tg) == VENDOR_NVIDIA)
        out->dyn_shared_bytes = k->plan->smem_bytes;
    return 0;
}

uint32_t cg_shared_bytes(CakeCtx *ctx, const Kernel *k, Target tg)
{
    (void)ctx;
    if (k->plan) /* the launch plan (passes/abi.c) is the one count */
        return k->plan->smem_bytes;
    uint32_t threads = cg_threads_of(ctx, k, tg);
    uint32_t ws = (uint32_t)tg_warp(tg);
    uint32_t nw = threads ? (threads + ws - 1) / ws : 1;
    uint64_t total = 0;
    for (uint32_t i = 1; i < k->nnodes; i++) {
        const Node *n = &k->nodes[i];
        if (n->op == OP_SHARED && n->a) {
            const Node *t = &k->nodes[n->a];
            uint64_t c = (uint64_t)(ir_dtype_bytes((DType)t->dtype) ? ir_dtype_bytes((DType)t->dtype) : 1) *
                         (t->lanes ? t->lanes : 1);
            for (uint32_t j = 0; j < t->n; j++) {
                int64_t e = 0;
                if (ce_const_int(ctx, k, k->lists[t->list + j], &e) && e > 0)
                    c *= (uint64_t)e;
            }
            total = (total + 15) / 16 * 16 + c;
        } else if ((n->op == OP_BLOCK_ADD || n->op == OP_BLOCK_MAX || n->op == OP_BLOCK_MIN) && nw > 1) {
            total = (total + 15) / 16 * 16 + 8 * nw; /* scratch: NW partials of up to 8 bytes */
        }
    }
    return (uint32_t)total;
}
