/* sim_stmt.c — statements of TIR-L for one thread (sim.h): control flow,
 * declarations into the thread's frame, assignments, stores, barriers, and
 * the lowered synchronization ops (mbarriers, syncwarp, wgmma groups); the
 * tensor-core and bulk-copy ops are in sim_tc.c. */
#include <math.h>
#include <string.h>
#include "sim_priv.h"

static void stmt(Sim *s, SimThread *t, NodeId st);

void sim_block_run(Sim *s, SimThread *t, NodeId block)
{
    if (!block)
        return;
    const Node *b = sim_node(s, block);
    if (b->op != OP_BLOCK) {
        stmt(s, t, block);
        return;
    }
    for (uint32_t i = 0; i < b->n && !s->failed && !t->stopped; i++)
        stmt(s, t, sim_arg(s, block, i));
}

static void write_value(Sim *s, SimThread *t, uint32_t slot, int lanes, const SV *v, NodeId at)
{
    for (int j = 0; j < lanes && j < SIM_LANES; j++)
        sim_slot_write(s, t, slot + (uint32_t)j, v->l[v->n > 1 ? j : 0], at);
}

static void decl_stmt(Sim *s, SimThread *t, NodeId st)
{
    const Node *n = sim_node(s, st);
    const Type *ty = sim_type(s, st);
    if ((ty->kind == TK_UNKNOWN || ty->kind == TK_VOID) && n->op != OP_LET && n->a)
        ty = sim_type(s, n->a);
    if ((ty->kind == TK_UNKNOWN || ty->kind == TK_VOID) && n->b)
        ty = sim_type(s, n->b);
    uint8_t dt = ty->dtype ? ty->dtype : DT_I64;
    int lanes = ty->lanes > 1 ? ty->lanes : 1;
    int64_t elems = 1;
    for (int i = 0; n->op == OP_REG && i < ty->rank; i++)
        elems *= ty->shape[i] > 0 ? ty->shape[i] : 1;
    uint32_t slot = s->slot[st] - 1;
    SV v;
    if (n->b) {
        sim_eval(s, t, n->b, &v);
        sim_convert(&v, dt, lanes);
    } else { /* an uninitialized var/reg: zero for vars, NaN for float registers */
        memset(&v, 0, sizeof v);
        v.dt = dt;
        v.n = (uint8_t)lanes;
        for (int j = 0; j < lanes; j++) {
            if (sv_isf(dt))
                v.l[j].f = n->op == OP_REG ? NAN : 0.0;
            else
                v.l[j].i = 0;
        }
    }
    for (int64_t e = 0; e < elems && !s->failed; e++)
        write_value(s, t, slot + (uint32_t)(e * lanes), lanes, &v, st);
}

static void assign_stmt(Sim *s, SimThread *t, NodeId st)
{
    const Node *n = sim_node(s, st);
    int lanes;
    uint8_t dt;
    uint32_t slot = sim_lvalue(s, t, n->a, &lanes, &dt);
    SV v;
    sim_eval(s, t, n->b, &v);
    if (s->failed)
        return;
    if (n->sub != OP_NONE) {
        SV old = {dt, (uint8_t)lanes, {{0}}};
        for (int j = 0; j < lanes; j++)
            sim_slot_read(s, t, slot + (uint32_t)j, &old.l[j]);
        sim_convert(&v, dt, lanes);
        for (int j = 0; j < lanes; j++) {
            Op op = (Op)n->sub;
            if (sv_isf(dt)) {
                double a = old.l[j].f, b = v.l[j].f, r;
                r = op == OP_ADD ? a + b : op == OP_SUB ? a - b : op == OP_MUL ? a * b : op == OP_DIV ? a / b
                  : op == OP_MAX ? (a > b || isnan(b) ? a : b) : (a < b || isnan(b) ? a : b);
                v.l[j].f = interp_round((DType)dt, r);
            } else {
                int64_t a = old.l[j].i, b = v.l[j].i, r;
                r = op == OP_ADD ? a + b : op == OP_SUB ? a - b : op == OP_MUL ? a * b
                  : op == OP_DIV ? (b ? a / b : 0) : op == OP_MAX ? (a > b ? a : b) : (a < b ? a : b);
                v.l[j].i = r;
            }
        }
        SV w = v;
        w.dt = dt;
        v = w;
    }
    sim_convert(&v, dt, lanes);
    write_value(s, t, slot, lanes, &v, st);
}

static void store_stmt(Sim *s, SimThread *t, NodeId st)
{
    const Node *n = sim_node(s, st);
    if (n->c && !sim_int(s, t, n->c))
        return;
    SimRef r;
    SV v;
    sim_eval(s, t, n->b, &v);
    if (s->failed || !sim_ref(s, t, n->a, &r))
        return;
    if (n->sub == OP_ATOMIC_ADD)
        sim_atomic_add(s, t, &r, &v, st);
    else
        sim_mem_store(s, t, &r, &v, st);
}

static void for_stmt(Sim *s, SimThread *t, NodeId st)
{
    const Node *n = sim_node(s, st);
    int64_t lo = sim_int(s, t, n->a), hi = sim_int(s, t, n->b), step = n->c ? sim_int(s, t, n->c) : 1;
    if (step <= 0) {
        sim_fail(s, 1, E0980, st, "a loop with step %lld never ends", (long long)step);
        return;
    }
    uint32_t slot = s->slot[st] - 1;
    for (int64_t i = lo; i < hi && !s->failed && !t->stopped; i += step) {
        t->frame[slot].i = i;
        sim_block_run(s, t, n->d);
    }
}

static void stmt(Sim *s, SimThread *t, NodeId st)
{
    const Node *n = sim_node(s, st);
    if (--s->steps < 0) {
        sim_fail(s, 1, E0980, st, "the block does not finish within %ld statements (a loop that never "
                 "ends, or a wait that spins)", s->opt->max_steps > 0 ? s->opt->max_steps : (long)1 << 31);
        return;
    }
    t->wnode = st;
    switch ((Op)n->op) {
    case OP_BLOCK: sim_block_run(s, t, st); return;
    case OP_IF:
        if (sim_int(s, t, n->a))
            sim_block_run(s, t, n->b);
        else if (n->c)
            sim_block_run(s, t, n->c);
        return;
    case OP_FOR: for_stmt(s, t, st); return;
    case OP_LET: case OP_VAR: case OP_REG: decl_stmt(s, t, st); return;
    case OP_ASSIGN: assign_stmt(s, t, st); return;
    case OP_EXPRSTMT: {
        SV v;
        sim_eval(s, t, n->a, &v);
        return;
    }
    case OP_STORE: store_stmt(s, t, st); return;
    case OP_CP_ASYNC: sim_cp_async(s, t, st); return;
    case OP_CP_COMMIT: t->cp_groups++; return;
    case OP_CP_WAIT: sim_cp_wait(s, t, sim_int(s, t, n->a)); return;
    case OP_SYNC: sim_barrier(s, t, 0, sim_live_in(s, 0, s->nthreads), 1, st); return;
    case OP_BAR_SYNC: case OP_BAR_ARRIVE:
        sim_barrier(s, t, (int)sim_int(s, t, n->a), sim_int(s, t, n->b), n->op == OP_BAR_SYNC, st);
        return;
    case OP_FENCE: case OP_FENCE_PROXY: return;
    case OP_FENCE_GPU: return;                  /* one thread runs at a time: memory is ordered */
    case OP_RETURN: t->stopped = 1; return;
    case OP_REFERENCE: case OP_SHARED: case OP_MBARRIER: case OP_L_TMAP: return;
    default: break;
    }
    if (ir_ops[n->op].cls == OC_LOW) {
        sim_lowered(s, t, st);
        return;
    }
    sim_fail(s, 2, E0983, st, "the executor does not run `%s` statements", ir_ops[n->op].name);
}

/* ---- lowered synchronization --------------------------------------------------------- */

static int mbar_ready(Sim *s, SimThread *t)
{
    (void)s;
    const SimMbar *m = t->wobj;
    return (int64_t)(m->phase & 1) != t->warg;
}

static void mbar_wait(Sim *s, SimThread *t, NodeId st)
{
    SimMbar *m = sim_mbar(s, (uint32_t)sim_int(s, t, sim_arg(s, st, 0)), st, 0);
    int64_t parity = sim_int(s, t, sim_arg(s, st, 1)) & 1;
    if (!m)
        return;
    if (!m->init) {
        sim_fail(s, 1, E0982, st, "thread %d waits on an mbarrier (shared byte %u) before @mbar_init",
                 t->tid, m->addr);
        return;
    }
    t->wobj = m;
    t->warg = parity;
    if (!mbar_ready(s, t))
        sim_block_on(s, t, mbar_ready);
    sim_vc_join(s, t->vc, m->vc_done);
}

void sim_lowered(Sim *s, SimThread *t, NodeId st)
{
    const Node *n = sim_node(s, st);
    switch ((Op)n->op) {
    case OP_L_MBAR_INIT: {
        SimMbar *m = sim_mbar(s, (uint32_t)sim_int(s, t, sim_arg(s, st, 0)), st, 1);
        m->count = m->pending = sim_int(s, t, sim_arg(s, st, 1));
        m->tx = 0;
        m->phase = 0;
        m->init = 1;
        if (m->count < 1)
            sim_fail(s, 1, E0982, st, "@mbar_init with count %lld", (long long)m->count);
        return;
    }
    case OP_L_MBAR_FENCE: case OP_L_WG_FENCE: case OP_L_SETMAXNREG: case OP_L_TMAP: return;
    case OP_L_MBAR_ARRIVE: case OP_L_MBAR_ARRIVE_TX: case OP_L_CP_MBAR_ARRIVE: {
        SimMbar *m = sim_mbar(s, (uint32_t)sim_int(s, t, sim_arg(s, st, 0)), st, 0);
        int64_t tx = n->op == OP_L_MBAR_ARRIVE_TX ? sim_int(s, t, sim_arg(s, st, 1)) : 0;
        if (n->op == OP_L_CP_MBAR_ARRIVE)
            sim_cp_wait(s, t, -1);
        if (m && !s->failed)
            sim_mbar_arrive(s, t, m, tx);
        return;
    }
    case OP_L_MBAR_WAIT: mbar_wait(s, t, st); return;
    case OP_L_SYNCWARP: {
        int w = t->tid / s->warp;
        SimColl *c = &s->warps[w];
        if (sim_coll(s, t, c, st, sim_live_in(s, w * s->warp, s->warp)))
            sim_coll_done(s, t, c);
        return;
    }
    case OP_L_TMA_LOAD: sim_tma_load(s, t, st); return;
    case OP_L_TMA_STORE: sim_tma_store(s, t, st); return;
    case OP_L_BULK_COMMIT: t->bulk_commits++; return;
    case OP_L_BULK_WAIT: sim_bulk_wait(s, t, sim_int(s, t, sim_arg(s, st, 0))); return;
    case OP_L_WG_COMMIT: t->wg_commits++; return;
    case OP_L_WG_WAIT: sim_wgmma_wait(s, t, sim_int(s, t, sim_arg(s, st, 0)), st); return;
    case OP_L_WGMMA: sim_wgmma_issue(s, t, st); return;
    case OP_L_MMA: case OP_L_MFMA: sim_mma(s, t, st); return;
    case OP_L_LDMATRIX: sim_ldmatrix(s, t, st, 0); return;
    case OP_L_STMATRIX: sim_ldmatrix(s, t, st, 1); return;
    default: break;
    }
    sim_fail(s, 2, E0983, st, "the executor does not run `@%s`", ir_ops[n->op].spelling);
}
