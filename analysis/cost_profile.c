/* cost_profile.c — the cost model's counts (cost.h, cost_profile): walks the
 * verified kernel once per sampled block and counts what each block asks of
 * each unit. Loops multiply their body by their trip count (unrolled ones are
 * walked per iteration, so masks and branches are evaluated per iteration);
 * an `if` or a mask that depends on the thread is evaluated at four sampled
 * threads and counts with the fraction that takes it.
 *
 * This file: the profile (five sampled blocks, weighted) and its entry point;
 * cost_count.c the counts, cost_query.c the walk's questions (cost_walk.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cost_walk.h"
#include "smem.h"

/* ---- the profile ------------------------------------------------------------------- */

static void work_add(CostWork *dst, const CostWork *src, double f)
{
    double *d = (double *)dst;
    const double *s = (const double *)src;
    for (size_t i = 0; i < sizeof *dst / sizeof(double); i++)
        d[i] += f * s[i];
}

static void work_max(CostWork *dst, const CostWork *src)
{
    double *d = (double *)dst;
    const double *s = (const double *)src;
    for (size_t i = 0; i < sizeof *dst / sizeof(double); i++)
        if (s[i] > d[i])
            d[i] = s[i];
}

static int header(Walk *w, CostProfile *p, char *why, size_t whylen)
{
    const Kernel *k = w->k;
    int64_t bs;
    if (!k->block_size || !cw_eval(w, k->block_size, &bs) || bs <= 0) {
        snprintf(why, whylen, "the block size does not evaluate");
        return 0;
    }
    p->threads = tg_block_threads(w->tg, (Unit)k->block_unit, bs);
    p->nblocks = 1;
    for (int i = 0; i < 3; i++) {
        p->grid[i] = 1;
        if ((uint32_t)i < k->ngrid && (!cw_eval(w, k->grid[i], &p->grid[i]) || p->grid[i] < 0)) {
            snprintf(why, whylen, "grid dimension %d does not evaluate", i);
            return 0;
        }
        p->nblocks *= p->grid[i];
    }
    memcpy(w->grid, p->grid, sizeof w->grid);
    w->block_threads = w->role_threads = p->threads;
    return 1;
}

static void unique_bytes(Walk *w, CostProfile *p)
{
    const Kernel *k = w->k;
    for (uint32_t i = 0; i < k->nargs; i++) {
        const Node *a = &k->nodes[k->args[i]];
        const Node *gt = &k->nodes[a->a];
        if (!w->arg_rw[i] || gt->op != OP_GTYPE)
            continue;
        double bytes = ir_dtype_bytes((DType)gt->dtype) * (gt->lanes ? gt->lanes : 1);
        for (uint32_t d = 0; d < gt->sub && d < gt->n; d++) {
            int64_t v;
            if (!cw_eval(w, k->lists[gt->list + d], &v))
                v = 0;
            bytes *= (double)v;
        }
        if (w->arg_rw[i] & 1) p->unique_read += bytes;
        if (w->arg_rw[i] & 2) p->unique_write += bytes;
    }
}

/* the roles of the bound kernel k (its top-level `role` statements): names,
   first thread, threads and register budgets into p; the walk of the lowered
   kernel runs once per role over its threads. Returns the roles found. */
static uint32_t bound_roles(Walk *w, const Kernel *k, CostProfile *p, int64_t *first)
{
    const Node *b = &k->nodes[k->body];
    for (uint32_t i = 0; b->op == OP_BLOCK && i < b->n; i++) {
        const Node *n = &k->nodes[k->lists[b->list + i]];
        int64_t v;
        if (n->op == OP_PIPELINE && cw_eval(w, n->a, &v) && v > p->stages)
            p->stages = (int)v;
        if (n->op != OP_ROLE || p->nroles >= COST_MAX_ROLES)
            continue;
        int64_t lo = 0, end = 0, regs = 0;
        cw_eval(w, n->a, &lo);
        if (!n->b || !cw_eval(w, n->b, &end))
            end = lo + 1;
        if (n->c)
            cw_eval(w, n->c, &regs);
        CostRole *r = &p->roles[p->nroles];
        snprintf(r->name, sizeof r->name, "%s", ir_symstr(w->ctx, n->name));
        r->threads = tg_block_threads(w->tg, (Unit)n->sub, end - lo);
        r->regs = (int)regs;
        first[p->nroles++] = tg_block_threads(w->tg, (Unit)n->sub, lo);
    }
    return p->nroles;
}

/* one sampled block of the lowered kernel: a walk per role (or one over the block) */
static void walk_lowered_block(Walk *w, const Kernel *low, CostProfile *p, const int64_t *first,
                               CostWork *block)
{
    uint32_t groups = p->nroles ? p->nroles : 1;
    for (uint32_t r = 0; r < groups; r++) {
        w->group_first = p->nroles ? first[r] : 0;
        w->role_threads = p->nroles ? p->roles[r].threads : p->threads;
        w->thread = w->group_first;
        w->cond_f = 1;
        w->conds->cur++;   /* another group of threads: conditions anew */
        w->group = r;
        w->w = p->nroles ? &p->roles[r].w : block;
        cw_stage_push(w);
        cw_block_stmts(w, low->body, 1);
        cw_stage_pop(w);
    }
    w->w = block;
    w->role_threads = p->threads;
}

int cost_profile(CakeCtx *ctx, const Kernel *k, const Kernel *low, Target tg, const CeEnv *env,
                 int sm_count, CostProfile *p, char *why, size_t whylen)
{
    memset(p, 0, sizeof *p);
    p->tg = tg;
    Walk w = {.ctx = ctx, .k = low ? low : k, .tg = tg, .sm_count = sm_count, .p = p, .cp_wait = -1,
              .lowered = low != NULL, .cond_f = 1};
    w.env = env ? *env : (CeEnv){0};
    w.env.decl = cw_hook_decl;
    w.env.special = cw_hook_special;
    w.env.u = &w;
    if (!header(&w, p, why, whylen))
        return 0;
    w.arg_rw = arena_alloc(&ctx->arena, w.k->nargs + 1);
    /* freed below, not the arena's (one per call); only what marks an entry empty
       is cleared (a generation, a key): the rest is written before it is read */
    CostMemo *memo = malloc(4 * sizeof *memo);
    if (!memo) {
        snprintf(why, whylen, "out of memory");
        return 0;
    }
    for (int i = 0; i < 4; i++) {
        memset(memo[i].gen, 0, sizeof memo[i].gen);
        memo[i].cur = 1;
    }
    w.reuse = &memo[0];
    w.lines = &memo[1];
    w.conds = &memo[2];
    w.conds_blocks = &memo[3];
    ExprMemo *arith = malloc(sizeof *arith);   /* optional: without it every node is counted */
    uint8_t *pure = arith ? calloc(w.k->nnodes + 1, 1) : NULL;
    if (arith)
        memset(arith->key, 0, sizeof arith->key);
    if (arith && pure) {
        arith->pure = pure;
        w.arith = arith;
    }
    p->wave = p->nblocks < sm_count ? p->nblocks : sm_count;
    int64_t first[COST_MAX_ROLES] = {0};
    if (low) {
        const Kernel *keep = w.k;
        w.k = k;   /* the roles and pipelines as the source declares them */
        bound_roles(&w, k, p, first);
        w.k = keep;
        p->lowered = 1;
    }
    static const double weight[5] = {0.125, 0.25, 0.25, 0.25, 0.125};
    CostRole roles_mean[COST_MAX_ROLES];
    memset(roles_mean, 0, sizeof roles_mean);
    /* the five samples; a walk whose counts read no block index (w.block_reads)
       counts the same at every block: its first sample stands for all five */
    for (int s = 0, same = 0; s < 5 && !same; s++) {
        for (int i = 0; i < 3; i++)   /* the same quantile of every grid dimension */
            w.block[i] = p->grid[i] > 1 ? (int64_t)((double)s * (double)(p->grid[i] - 1) / 4.0) : 0;
        w.first = s == 0;
        w.block_reads = 0;
        w.thread = 0;
        CostWork block = {0};
        w.w = &block;
        for (uint32_t r = 0; r < p->nroles; r++)
            memset(&p->roles[r].w, 0, sizeof p->roles[r].w);
        if (low)
            walk_lowered_block(&w, low, p, first, &block);
        else {
            cw_stage_push(&w);
            cw_block_stmts(&w, k->body, 1);
            cw_stage_pop(&w);
        }
        same = s == 0 && w.block_reads == 0;
        double wt = same ? 1.0 : weight[s];
        for (uint32_t r = 0; r < p->nroles; r++) {
            work_add(&block, &p->roles[r].w, 1);
            work_add(&roles_mean[r].w, &p->roles[r].w, wt);
        }
        work_add(&p->w, &block, wt);
        work_max(&p->wmax, &block);
    }
    for (uint32_t r = 0; r < p->nroles; r++)
        p->roles[r].w = roles_mean[r].w;
    /* the bytes in flight per block: unrolled batches of loads, or the async stages */
    double stage = w.async_stage;
    p->stage_bytes = stage;
    if (w.cp_wait >= 0 && p->stages == 0)
        p->stages = w.cp_wait + 2;
    double async = p->stages > 1 ? (p->stages - 1) * stage : stage;
    double simt = w.inflight_thread * (double)p->threads;
    p->inflight_block = async > simt ? async : simt;
    p->inflight_loop = w.inflight_loop * (double)p->threads;
    for (uint32_t r = 0; r < p->nroles; r++)
        p->tc_roles += p->roles[r].w.tc_work[0] + p->roles[r].w.tc_work[1] + p->roles[r].w.tc_work[2] > 0;
    /* TIR-L: a role (or a kernel) that does tensor-core work and stores to global
       memory from its threads stores its register tiles element by element */
    if (low) {
        uint32_t groups = p->nroles ? p->nroles : 1;
        for (uint32_t r = 0; r < groups; r++) {
            const CostWork *x = p->nroles ? &p->roles[r].w : &p->w;
            if (x->tc_work[0] + x->tc_work[1] + x->tc_work[2] > 0 && x->gst > 0)
                p->tile_stores = 1;
        }
    }
    /* registers: the roles' budgets when every role has one, else an estimate */
    int all_regs = p->nroles > 0;
    int maxr = 0;
    for (uint32_t r = 0; r < p->nroles; r++) {
        all_regs &= p->roles[r].regs > 0;
        if (p->roles[r].regs > maxr) maxr = p->roles[r].regs;
    }
    if (all_regs && tg_has(tg, TF_SETMAXNREG)) {
        p->regs_est = (int)tg_launch_regs(tg_info(tg), p->threads);
        p->regs_from_roles = 1;
    } else {
        double est = 32 + 1.15 * w.regs_tile;
        int r = (int)ceil(est / 8) * 8;
        p->regs_est = r;
        cost_note(p->notes, &p->nnotes, "registers per thread estimated at %d from the register "
                  "declarations (ptxas decides the real count)", r);
    }
    if (low && low->plan)   /* the launch plan: the shared memory the launch asks for */
        p->smem_bytes = low->plan->smem_bytes;
    else {
        SmemPlan sp;
        an_smem_plan(ctx, k, tg, env, &sp);
        p->smem_bytes = sp.unknown ? 0 : sp.total;
    }
    unique_bytes(&w, p);
    free(memo);
    free(pure);
    free(arith);
    return 1;
}
