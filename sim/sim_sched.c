/* sim_sched.c — the executor's threads and synchronization (sim.h): one green
 * thread (ucontext) per thread of the block, run until it blocks; a round
 * robin over the runnable ones; when none can go on, the TMA loads in
 * flight complete, and when none are left either, the block is deadlocked
 * and the waiting threads are reported, grouped by where they wait.
 * Collectives (warp shuffles, tensor-core ops, reductions), block and named
 * barriers and mbarriers are here, and the race detector: a vector clock
 * per thread, released into a barrier, a collective or an mbarrier phase by
 * the threads that arrive and acquired by those that leave it; each shared
 * byte remembers its last writer and reader (thread, clock), and an access
 * that is not ordered after them is a race. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "sim_priv.h"

void sim_fail(Sim *s, int how, DiagCode code, NodeId at, const char *fmt, ...)
{
    if (s->failed)
        return;
    s->failed = how;
    va_list ap;
    va_start(ap, fmt);
    char *msg = ir_vfmt(s->ctx, fmt, ap);
    va_end(ap);
    Span sp = at ? sim_node(s, at)->span : s->k->span;
    Diag *d = diag_report(s->ctx, code, sp, "run --sim: %s", msg);
    if (code == E0983)
        diag_help(s->ctx, d, "the CPU executor does not model this yet (docs/sim.md lists what it runs); "
                             "`run --check` on a GPU checks the kernel");
    snprintf(s->L->err, s->L->errlen, "%s: %s", ir_diag_info[code].code, msg);
}

const char *sim_smem_name(Sim *s, uint32_t off)
{
    const KPlan *p = s->k->plan;
    for (uint32_t i = 0; i < p->nsmem; i++)
        if (off >= p->smem[i].offset && off < p->smem[i].offset + p->smem[i].bytes)
            return ir_fmt(s->ctx, "shared byte %u of `%s`", off - p->smem[i].offset,
                          ir_symstr(s->ctx, sim_node(s, p->smem[i].decl)->name));
    return ir_fmt(s->ctx, "shared byte %u", off);
}

/* "mbarrier `ring.full[2]`" */
static const char *mbar_name(Sim *s, uint32_t addr)
{
    const KPlan *p = s->k->plan;
    for (uint32_t i = 0; i < p->nsmem; i++) {
        const Node *d = sim_node(s, p->smem[i].decl);
        if (d->op == OP_MBARRIER && addr >= p->smem[i].offset && addr < p->smem[i].offset + p->smem[i].bytes)
            return d->a ? ir_fmt(s->ctx, "mbarrier `%s[%u]`", ir_symstr(s->ctx, d->name), (addr - p->smem[i].offset) / 8)
                        : ir_fmt(s->ctx, "mbarrier `%s`", ir_symstr(s->ctx, d->name));
    }
    return ir_fmt(s->ctx, "the mbarrier at shared byte %u", addr);
}

/* ---- vector clocks ------------------------------------------------------------ */

void sim_vc_join(Sim *s, uint32_t *dst, const uint32_t *src)
{
    if (!s->race_on)
        return;
    for (int i = 0; i < s->nthreads; i++)
        if (src[i] > dst[i])
            dst[i] = src[i];
}

/* t releases what it did so far into vc: later accesses are a new epoch */
static void release(Sim *s, SimThread *t, uint32_t *vc)
{
    if (!s->race_on)
        return;
    sim_vc_join(s, vc, t->vc);
    t->vc[t->tid]++;
}

static const char *ordered_by(void)
{
    return "no barrier, mbarrier phase or warp collective orders them";
}

void sim_race_access(Sim *s, SimThread *t, uint32_t off, uint32_t n, int write, NodeId at)
{
    if (!s->race_on || s->failed)
        return;
    uint32_t me = (uint32_t)t->tid + 1, clk = t->vc[t->tid];
    for (uint32_t b = off; b < off + n && b < s->smem_bytes; b++) {
        uint32_t w = s->sh_wt[b], r = s->sh_rt[b];
        if (w && w != me && s->sh_wc[b] > t->vc[w - 1]) {
            sim_fail(s, 1, E0981, at, "thread %d %s %s that thread %u wrote: %s",
                     t->tid, write ? "writes" : "reads", sim_smem_name(s, b), w - 1, ordered_by());
            return;
        }
        if (write && r && r != me && s->sh_rc[b] > t->vc[r - 1]) {
            sim_fail(s, 1, E0981, at, "thread %d writes %s that thread %u read: %s",
                     t->tid, sim_smem_name(s, b), r - 1, ordered_by());
            return;
        }
        if (write) {
            s->sh_wt[b] = me;
            s->sh_wc[b] = clk;
        } else {
            s->sh_rt[b] = me;
            s->sh_rc[b] = clk;
        }
    }
}

/* ---- blocking ------------------------------------------------------------------ */

void sim_block_on(Sim *s, SimThread *t, int (*ready)(Sim *, SimThread *))
{
    if (s->failed)
        return;
    t->ready = ready;
    t->state = TS_BLOCKED;
    swapcontext(&t->uc, &s->sched);
}

int sim_live_in(Sim *s, int first, int count)
{
    int n = 0;
    for (int i = first; i < first + count && i < s->nthreads; i++)
        n += s->th[i].state != TS_DONE;
    return n;
}

static int coll_ready(Sim *s, SimThread *t)
{
    (void)s;
    return ((const SimColl *)t->wobj)->gen != t->wgen;
}

int sim_coll(Sim *s, SimThread *t, SimColl *c, NodeId node, int expected)
{
    if (c->arrived == 0) {
        c->node = node;
    } else if (c->node != node) {
        uint32_t l1, c1, l2, c2;
        span_linecol(s->ctx, sim_node(s, c->node)->span, &l1, &c1, &l2, &c2);
        sim_fail(s, 1, E0984, node, "thread %d reaches this collective while others of its group wait "
                 "at the one on line %u", t->tid, l1);
        return 0;
    }
    c->arrived++;
    if (s->race_on)
        sim_vc_join(s, c->vc, t->vc);
    if (c->arrived >= expected)
        return 1;
    t->wobj = c;
    t->wgen = c->gen;
    t->wnode = node;
    sim_block_on(s, t, coll_ready);
    return 0;
}

void sim_coll_done(Sim *s, SimThread *t, SimColl *c)
{
    if (s->race_on)
        for (int i = 0; i < s->nthreads; i++) {
            SimThread *u = &s->th[i];
            if (u == t || (u->state == TS_BLOCKED && u->wobj == c && u->wgen == c->gen)) {
                sim_vc_join(s, u->vc, c->vc);
                u->vc[u->tid]++;
            }
        }
    c->arrived = 0;
    c->gen++;
    if (s->race_on)
        memset(c->vc, 0, (size_t)s->nthreads * sizeof *c->vc);
}

/* named barrier `id` with `count` threads (wait 0: barrier.arrive) */
void sim_barrier(Sim *s, SimThread *t, int id, int64_t count, int wait, NodeId at)
{
    if (id < 0 || id >= 16) {
        sim_fail(s, 1, E0982, at, "barrier id %d is outside 0 .. 15", id);
        return;
    }
    SimColl *c = &s->bars[id];
    if (c->arrived == 0)
        c->count = count;
    else if (c->count != count) {
        sim_fail(s, 1, E0984, at, "thread %d arrives at barrier %d with count %lld while the round "
                 "started with count %lld", t->tid, id, (long long)count, (long long)c->count);
        return;
    }
    c->arrived++;
    if (s->race_on)
        sim_vc_join(s, c->vc, t->vc);
    if (c->arrived >= count) {
        sim_coll_done(s, t, c);
        return;
    }
    if (!wait) {
        if (s->race_on)
            t->vc[t->tid]++;
        return;
    }
    t->wobj = c;
    t->wgen = c->gen;
    t->wnode = at;
    t->warg = id;
    sim_block_on(s, t, coll_ready);
}

/* ---- mbarriers ---------------------------------------------------------------------- */

SimMbar *sim_mbar(Sim *s, uint32_t addr, NodeId at, int create)
{
    for (uint32_t i = 0; i < s->nmbars; i++)
        if (s->mbars[i].addr == addr)
            return &s->mbars[i];
    if (!create) {
        sim_fail(s, 1, E0982, at, "%s is used before @mbar_init", mbar_name(s, addr));
        return NULL;
    }
    s->mbars = arena_grow(&s->ctx->arena, s->mbars, &s->capmbars, s->nmbars + 1, sizeof *s->mbars);
    SimMbar *m = &s->mbars[s->nmbars++];
    memset(m, 0, sizeof *m);
    m->vc = arena_alloc(&s->ctx->arena, (size_t)SIM_MAX_THREADS * 4);
    m->vc_done = arena_alloc(&s->ctx->arena, (size_t)SIM_MAX_THREADS * 4);
    m->addr = addr;
    return m;
}

static void mbar_check(Sim *s, SimMbar *m, NodeId at)
{
    if (m->pending < 0) {
        sim_fail(s, 1, E0981, at, "%s gets more arrivals than its count %lld in "
                 "phase %u", mbar_name(s, m->addr), (long long)m->count, m->phase);
        return;
    }
    if (m->pending == 0 && m->tx == 0) {
        m->phase++;
        m->pending = m->count;
        if (s->race_on) {
            memcpy(m->vc_done, m->vc, (size_t)s->nthreads * sizeof *m->vc);
            memset(m->vc, 0, (size_t)s->nthreads * sizeof *m->vc);
        }
    }
}

void sim_mbar_arrive(Sim *s, SimThread *t, SimMbar *m, int64_t tx)
{
    if (!m->init) {
        sim_fail(s, 1, E0982, t->wnode, "thread %d arrives on %s before "
                 "@mbar_init", t->tid, mbar_name(s, m->addr));
        return;
    }
    m->tx += tx;
    m->pending--;
    release(s, t, m->vc);
    mbar_check(s, m, t->wnode);
}

void sim_mbar_tx_done(Sim *s, SimMbar *m, int64_t bytes, const uint32_t *vc)
{
    m->tx -= bytes;
    if (vc)
        sim_vc_join(s, m->vc, vc);
    mbar_check(s, m, 0);
}

/* ---- the asynchronous engine ----------------------------------------------------------- */

void sim_async_drain(Sim *s)
{
    uint32_t n = s->ntmas;
    SimTma *copy = NULL;
    if (n) {
        copy = malloc(n * sizeof *copy);
        memcpy(copy, s->tmas, n * sizeof *copy);
    }
    s->ntmas = 0;
    for (uint32_t i = 0; i < n && !s->failed; i++)
        sim_tma_complete(s, &copy[i]);
    free(copy);
}

/* ---- deadlock report ----------------------------------------------------------------------- */

static const char *wait_text(Sim *s, SimThread *t)
{
    const Node *n = sim_node(s, t->wnode);
    if (n->op == OP_L_MBAR_WAIT) {
        const SimMbar *m = t->wobj;
        return ir_fmt(s->ctx, "%s, parity %lld: %u phases completed, "
                      "%lld of %lld arrivals and %lld transaction bytes still missing in phase %u",
                      mbar_name(s, m->addr), (long long)t->warg, m->phase, (long long)m->pending, (long long)m->count,
                      (long long)m->tx, m->phase);
    }
    if (n->op == OP_BAR_SYNC || n->op == OP_SYNC) {
        const SimColl *c = t->wobj;
        return ir_fmt(s->ctx, "barrier %lld: %d of %lld threads arrived", (long long)t->warg, c->arrived,
                      (long long)c->count);
    }
    const SimColl *c = t->wobj;
    return ir_fmt(s->ctx, "a collective of its warp or group: %d threads arrived", c ? c->arrived : 0);
}

static void report_deadlock(Sim *s)
{
    Diag *d = NULL;
    int groups = 0;
    char *first_msg = NULL;
    for (int i = 0; i < s->nthreads; i++) {
        SimThread *t = &s->th[i];
        if (t->state != TS_BLOCKED)
            continue;
        int j = i;
        while (j + 1 < s->nthreads && s->th[j + 1].state == TS_BLOCKED && s->th[j + 1].wnode == t->wnode &&
               s->th[j + 1].wobj == t->wobj && s->th[j + 1].warg == t->warg)
            j++;
        const char *who = i == j ? ir_fmt(s->ctx, "thread %d (warp %d)", i, i / s->warp)
                                 : ir_fmt(s->ctx, "threads %d .. %d (warps %d .. %d)", i, j, i / s->warp,
                                          j / s->warp);
        const char *what = ir_fmt(s->ctx, "%s wait%s here for %s", who, i == j ? "s" : "", wait_text(s, t));
        if (!d) {
            first_msg = ir_fmt(s->ctx, "deadlock in block (%lld, %lld, %lld): no thread can go on and no "
                               "asynchronous copy is in flight; %s", (long long)s->block[0],
                               (long long)s->block[1], (long long)s->block[2], what);
            sim_fail(s, 1, E0980, t->wnode, "%s", first_msg);
            d = &s->ctx->diags[s->ctx->ndiags - 1];
        } else if (groups < 8) {
            diag_note(s->ctx, d, sim_node(s, t->wnode)->span, "%s", what);
        }
        groups++;
        i = j;
    }
    int done = 0;
    for (int i = 0; i < s->nthreads; i++)
        done += s->th[i].state == TS_DONE;
    if (d) {
        if (done)
            diag_note(s->ctx, d, IR_NOSPAN, "%d threads have finished", done);
        diag_help(s->ctx, d, "compare each wait's parity and each barrier's count with the arrivals "
                             "that reach it (`--emit tirl` shows them); a phase needs every arrival "
                             "of its count and all its transaction bytes");
    }
}

/* ---- running a block -------------------------------------------------------------------- */

static void thread_main(unsigned lo, unsigned hi)
{
    Sim *s = (Sim *)(uintptr_t)((uint64_t)hi << 32 | lo);
    SimThread *t = s->cur;
    sim_block_run(s, t, s->k->body);
    if (!s->failed) {
        sim_cp_wait(s, t, 0);
        sim_bulk_wait(s, t, 0);
    }
    t->state = TS_DONE;
}

static void start_thread(Sim *s, SimThread *t)
{
    getcontext(&t->uc);
    t->uc.uc_stack.ss_sp = t->stack;
    t->uc.uc_stack.ss_size = SIM_STACK;
    t->uc.uc_link = &s->sched;
    uint64_t p = (uint64_t)(uintptr_t)s;
    makecontext(&t->uc, (void (*)(void))thread_main, 2, (unsigned)(p & 0xffffffffu), (unsigned)(p >> 32));
    t->state = TS_READY;
}

static void reset_block(Sim *s)
{
    memset(s->smem, 0xff, s->smem_bytes);   /* NaN in every float type: unwritten reads show */
    memset(s->async_w, 0, s->smem_bytes);
    memset(s->async_r, 0, s->smem_bytes);
    if (s->race_on) {
        memset(s->sh_wt, 0, s->smem_bytes * sizeof *s->sh_wt);
        memset(s->sh_rt, 0, s->smem_bytes * sizeof *s->sh_rt);
    }
    s->nmbars = 0;
    s->ntmas = s->nwgmma = s->nbulks = 0;
    SimColl *all[] = {&s->block_coll};
    (void)all;
    memset(s->warps, 0, sizeof s->warps);
    memset(s->wgs, 0, sizeof s->wgs);
    memset(s->bars, 0, sizeof s->bars);
    memset(&s->block_coll, 0, sizeof s->block_coll);
    uint32_t *vcs = arena_alloc(&s->ctx->arena, (SIM_MAX_THREADS / 32 + SIM_MAX_THREADS / 128 + 17) *
                                (size_t)s->nthreads * sizeof(uint32_t));
    uint32_t v = 0;
    for (int i = 0; i < SIM_MAX_THREADS / 32; i++)
        s->warps[i].vc = vcs + (size_t)(v++) * (size_t)s->nthreads;
    for (int i = 0; i < SIM_MAX_THREADS / 128; i++)
        s->wgs[i].vc = vcs + (size_t)(v++) * (size_t)s->nthreads;
    for (int i = 0; i < 16; i++)
        s->bars[i].vc = vcs + (size_t)(v++) * (size_t)s->nthreads;
    s->block_coll.vc = vcs + (size_t)v * (size_t)s->nthreads;
    for (int i = 0; i < s->nthreads; i++) {
        SimThread *t = &s->th[i];
        memset(t->frame, 0, s->nslots * sizeof *t->frame);
        memset(t->inflight, 0, s->nslots);
        memset(t->vc, 0, (size_t)s->nthreads * sizeof *t->vc);
        t->vc[i] = 1;
        t->wg_commits = t->bulk_commits = t->cp_groups = 0;
        t->ncopies = 0;
        t->wobj = NULL;
        start_thread(s, t);
    }
}

/* runs one block to its end; 0 on success */
static int run_block(Sim *s)
{
    reset_block(s);
    for (;;) {
        int progress = 0, alive = 0;
        for (int i = 0; i < s->nthreads && !s->failed; i++) {
            SimThread *t = &s->th[i];
            if (t->state == TS_DONE)
                continue;
            alive++;
            if (t->state == TS_BLOCKED && !t->ready(s, t))
                continue;
            t->state = TS_READY;
            s->cur = t;
            swapcontext(&s->sched, &t->uc);
            progress = 1;
        }
        if (s->failed)
            return 1;
        if (!alive)
            break;
        if (!progress) {
            if (s->ntmas) {
                sim_async_drain(s);
                continue;
            }
            report_deadlock(s);
            return 1;
        }
    }
    sim_wgmma_retire_all(s);
    sim_async_drain(s);
    return s->failed;
}

/* ---- the launch ------------------------------------------------------------------------- */

static uint32_t decl_size(Sim *s, NodeId d)
{
    const Node *n = sim_node(s, d);
    const Type *t = sim_type(s, d);
    if (n->op == OP_FOR)
        return 1;
    if ((t->kind == TK_UNKNOWN || t->kind == TK_VOID) && n->a)
        t = sim_type(s, n->a);
    if ((t->kind == TK_UNKNOWN || t->kind == TK_VOID) && n->b)
        t = sim_type(s, n->b);
    int64_t e = 1;
    for (int i = 0; i < t->rank; i++)
        e *= t->shape[i] > 0 ? t->shape[i] : 1;
    int64_t lanes = t->lanes > 1 ? t->lanes : 1;
    if (t->kind == TK_UNKNOWN)
        lanes = SIM_LANES;
    return (uint32_t)(e * lanes);
}

static void plan_slots(Sim *s)
{
    Kernel *k = s->k;
    s->slot = arena_alloc(&s->ctx->arena, k->nnodes * sizeof *s->slot);
    uint32_t n = 0;
    for (NodeId i = 1; i < k->nnodes; i++) {
        uint16_t op = k->nodes[i].op;
        if (op == OP_LET || op == OP_VAR || op == OP_FOR || op == OP_REG) {
            s->slot[i] = n + 1;
            n += decl_size(s, i);
        }
    }
    s->nslots = n + 1;
}

/* sm.count for the grid clause, through the evaluator's hook */
static int grid_special(const CeEnv *env, NodeId at, int64_t *out)
{
    const Sim *s = env->u;
    if (s->k->nodes[at].sub == SR_SM_COUNT) {
        *out = s->sm_count;
        return 1;
    }
    return 0;
}

static int launch_dims(Sim *s)
{
    CeBinding b[64];
    uint32_t nb = 0;
    for (uint32_t i = 0; i < s->k->ndims && i < s->L->ndims && nb < 64; i++)
        b[nb++] = (CeBinding){s->k->nodes[s->k->dims[i]].name, s->L->dims[i]};
    CeEnv env = {b, nb, NULL, grid_special, s};
    for (int i = 0; i < 3; i++) {
        s->grid[i] = 1;
        if ((uint32_t)i < s->k->ngrid && !ce_eval_int(s->ctx, s->k, s->k->grid[i], &env, &s->grid[i])) {
            sim_fail(s, 2, E0983, s->k->grid[i], "the grid clause does not evaluate at this shape");
            return 0;
        }
    }
    return 1;
}

static int bug_of(const char *b)
{
    if (!b || !*b)
        return 0;
    if (!strcmp(b, "wgmma-swap-k"))
        return 1;
    return -1;
}

int sim_launch(CakeCtx *ctx, const SimOptions *opt, CheckLaunch *l)
{
    static const SimOptions none = {0};
    Sim *s = arena_alloc(&ctx->arena, sizeof *s);
    s->ctx = ctx;
    s->k = (Kernel *)l->k;
    s->opt = opt ? opt : &none;
    s->L = l;
    s->sm_count = s->opt->sm_count > 0 ? s->opt->sm_count : 2;
    s->bug = bug_of(s->opt->bug);
    s->race_on = !s->opt->no_race;
    if (!s->k->plan || s->k->level != IR_LEVEL_LOWERED) {
        sim_fail(s, 2, E0983, 0, "kernel `%s` is not lowered (no launch plan)", ir_symstr(ctx, s->k->name));
        return 2;
    }
    s->warp = (int)tg_warp(TG_SM90A);
    s->nthreads = (int)s->k->plan->block_threads;
    if (s->nthreads < 1 || s->nthreads > SIM_MAX_THREADS || !launch_dims(s)) {
        if (!s->failed)
            sim_fail(s, 2, E0983, 0, "a block of %d threads", s->nthreads);
        return s->failed;
    }
    plan_slots(s);
    s->smem_bytes = s->k->plan->smem_bytes + 16;
    s->smem = malloc(s->smem_bytes);
    s->async_w = calloc(s->smem_bytes, 1);
    s->async_r = calloc(s->smem_bytes, 1);
    if (s->race_on) {
        s->sh_wt = calloc(s->smem_bytes, 4);
        s->sh_wc = calloc(s->smem_bytes, 4);
        s->sh_rt = calloc(s->smem_bytes, 4);
        s->sh_rc = calloc(s->smem_bytes, 4);
    }
    s->th = calloc((size_t)s->nthreads, sizeof *s->th);
    for (int i = 0; i < s->nthreads; i++) {
        SimThread *t = &s->th[i];
        t->tid = i;
        t->stack = malloc(SIM_STACK);
        t->frame = malloc(s->nslots * sizeof *t->frame);
        t->inflight = malloc(s->nslots);
        t->vc = calloc((size_t)s->nthreads, sizeof *t->vc);
    }
    long max = s->opt->max_steps > 0 ? s->opt->max_steps : (long)1 << 31;
    for (int64_t z = 0; z < s->grid[2] && !s->failed; z++)
        for (int64_t y = 0; y < s->grid[1] && !s->failed; y++)
            for (int64_t x = 0; x < s->grid[0] && !s->failed; x++) {
                s->block[0] = x;
                s->block[1] = y;
                s->block[2] = z;
                s->steps = max;
                run_block(s);
            }
    for (int i = 0; i < s->nthreads; i++) {
        free(s->th[i].stack);
        free(s->th[i].frame);
        free(s->th[i].inflight);
        free(s->th[i].vc);
        free(s->th[i].copies);
        free(s->th[i].depv);
        free(s->th[i].deps);
    }
    free(s->th);
    free(s->smem);
    free(s->async_w);
    free(s->async_r);
    free(s->sh_wt);
    free(s->sh_wc);
    free(s->sh_rt);
    free(s->sh_rc);
    free(s->tmas);
    free(s->wgmma);
    free(s->bulks);
    return s->failed;
}
