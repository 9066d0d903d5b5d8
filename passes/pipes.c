/* pipes.c — the pipes pass: pipelines and mbarriers become explicit.
 *
 *   pipeline P: S stages from role A to role B
 *     → mbarrier P.full[S] count (1 for a TMA producer, else A's threads)
 *       mbarrier P.empty[S] count (B's warps)
 *       and in A and B a (stage, phase) pair of vars, counting from 0
 *   let s = P.acquire()   → let s = P.stage;  wait empty[s] with parity phase ^ 1
 *                           (TMA producer: single-issue, then arrive.expect_tx
 *                           full[s] with the bytes of the stage's TMA loads)
 *   P.commit(s)           → every producer thread arrives on full[s] (after its
 *                           cp.async copies, when the role issues any)
 *   let s = P.wait()      → let s = P.stage;  wait full[s] with parity phase
 *   P.release(s)          → __syncwarp; lane 0 of each warp arrives on empty[s]
 *   P.full(s), P.empty(s) → P.full[s], P.empty[s]
 * After each acquire/wait the role's counters advance: the stage wraps at S
 * and the phase flips when it does (docs/tir.md §8.5).
 *
 * Plain mbarriers: every one is initialized at kernel entry by thread 0
 * (mbarrier.init with its count, fence.mbarrier_init), then the block
 * synchronizes; mbarrier.arrive / .wait become L_MBAR_ARRIVE / L_MBAR_WAIT,
 * and mbarrier.expect_tx is a single-issue L_MBAR_ARRIVE_TX. */
#include <string.h>
#include "lower.h"
#include "targets.h"
#include "verify.h"

#define MAX_PIPES 16

typedef struct {
    NodeId decl;                 /* PIPELINE */
    NodeId full, empty;          /* the MBARRIER arrays */
    NodeId prod, cons;           /* ROLE declarations */
    int64_t stages;
    int tma;                     /* the producer fills stages with TMA */
    int cp_async;                /* the producer role issues cp.async */
    NodeId stage[2], phase[2];   /* VARs of the producer [0] and the consumer [1] */
} Pipe;

typedef struct {
    Pipe pipes[MAX_PIPES];
    uint32_t npipes;
    NodeId *mbars; uint32_t nmbars;   /* every MBARRIER, for the initialization */
} Pipes;

static Pipe *pipe_of(Lw *w, NodeId name)
{
    Pipes *ps = w->user;
    NodeId d = lw_decl_of(w, name);
    for (uint32_t i = 0; i < ps->npipes; i++)
        if (ps->pipes[i].decl == d)
            return &ps->pipes[i];
    return NULL;
}

static int contains_op(Kernel *k, NodeId id, Op op, int depth)
{
    if (!id || depth > 200)
        return 0;
    Node *n = &k->nodes[id];
    if (n->op == op)
        return 1;
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        if (contains_op(k, kids[i], op, depth + 1))
            return 1;
    for (uint32_t i = 0; i < n->n; i++)
        if (contains_op(k, k->lists[n->list + i], op, depth + 1))
            return 1;
    return 0;
}

/* is some `tma … on P.full(…)` in the kernel? */
static int tma_fills(Lw *w, Pipe *p, NodeId id, int depth)
{
    Kernel *k = w->b.k;
    if (!id || depth > 200)
        return 0;
    Node *n = &k->nodes[id];
    if (n->op == OP_TMA_LOAD && n->c && k->nodes[n->c].op == OP_P_FULL &&
        lw_decl_of(w, k->nodes[n->c].a) == p->decl)
        return 1;
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        if (tma_fills(w, p, kids[i], depth + 1))
            return 1;
    for (uint32_t i = 0; i < n->n; i++)
        if (tma_fills(w, p, k->lists[n->list + i], depth + 1))
            return 1;
    return 0;
}

/* the token s of `P.full(s)` (or of P.full[s] once rewritten), else 0 */
static NodeId full_token(Lw *w, NodeId bar)
{
    Kernel *k = w->b.k;
    Node *n = &k->nodes[bar];
    if ((n->op == OP_P_FULL || n->op == OP_INDEX) && n->n == 1)
        return lw_decl_of(w, ir_list_at(k, n, 0));
    return 0;
}

/* bytes the TMA loads on P.full(s) carry, s being the token `let` acq */
static int64_t stage_bytes(Lw *w, NodeId acq, NodeId id, int depth)
{
    Kernel *k = w->b.k;
    if (!id || depth > 200)
        return 0;
    Node *n = &k->nodes[id];
    int64_t sum = 0;
    if (n->op == OP_TMA_LOAD && n->c && full_token(w, n->c) == acq) {
        int64_t b = ver_tma_bytes(w->b.ctx, k, id);
        return b > 0 ? b : 0;
    }
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        sum += stage_bytes(w, acq, kids[i], depth + 1);
    for (uint32_t i = 0; i < n->n; i++)
        sum += stage_bytes(w, acq, k->lists[n->list + i], depth + 1);
    return sum;
}

static int64_t role_threads(Lw *w, NodeId role)
{
    Node *r = lw_node(w, role);
    int64_t a = 0, b = 0;
    lw_const(w, r->a, &a);
    if (!r->b || !lw_const(w, r->b, &b))
        b = a + 1;
    return (b - a) * tg_unit_threads(w->tg, (Unit)r->sub);
}

static NodeId mbar_decl(Lw *w, const char *name, int64_t n, int64_t count)
{
    IrB *b = &w->b;
    NodeId len = irb_i32(b, n), cnt = irb_i32(b, count);
    NodeId id = ir_node(b->ctx, b->k, OP_MBARRIER, b->span);
    Node *m = lw_node(w, id); /* no node is made while m is held: the array may move */
    m->name = ir_intern_cstr(b->ctx, name);
    m->a = len;
    m->b = cnt;
    Type t = {0};
    t.kind = TK_MBARRIER;
    t.rank = 1;
    t.shape[0] = n;
    lw_node(w, id)->type = ir_type_add(b->ctx, b->k, &t);
    return id;
}

static NodeId bar_elem(Lw *w, NodeId arr, NodeId s)
{
    Type t = {0};
    t.kind = TK_MBARRIER;
    return irb_index(&w->b, arr, &s, 1, ir_type_add(w->b.ctx, w->b.k, &t));
}

/* ---- the pipeline declarations ------------------------------------------- */

static void declare_pipe(Lw *w, NodeId s, IrList *out)
{
    Pipes *ps = w->user;
    Node *n = lw_node(w, s);
    if (ps->npipes == MAX_PIPES) {
        ir_bug(w->b.ctx, "more than %d pipelines", MAX_PIPES);
    }
    Pipe *p = &ps->pipes[ps->npipes++];
    memset(p, 0, sizeof *p);
    p->decl = s;
    lw_const(w, n->a, &p->stages);
    p->prod = lw_node(w, n->b)->decl;
    p->cons = lw_node(w, n->c)->decl;
    p->tma = tma_fills(w, p, w->b.k->body, 0);
    p->cp_async = p->prod && contains_op(w->b.k, lw_node(w, p->prod)->d, OP_CP_ASYNC, 0);
    const char *nm = ir_symstr(w->b.ctx, n->name);
    int64_t cons_warps = p->cons ? role_threads(w, p->cons) / tg_warp(w->tg) : 1;
    int64_t full_count = p->tma ? 1 : (p->prod ? role_threads(w, p->prod) : 1);
    p->full = mbar_decl(w, ir_fmt(w->b.ctx, "%s.full", nm), p->stages, full_count);
    p->empty = mbar_decl(w, ir_fmt(w->b.ctx, "%s.empty", nm), p->stages, cons_warps);
    irb_push(&w->b, out, p->full);
    irb_push(&w->b, out, p->empty);
}

/* the role counters, declared at the top of each role body */
static void declare_counters(Lw *w, Pipe *p, int side)
{
    NodeId role = side ? p->cons : p->prod;
    if (!role)
        return;
    const char *nm = ir_symstr(w->b.ctx, lw_node(w, p->decl)->name);
    p->stage[side] = irb_var(&w->b, ir_fmt(w->b.ctx, "%s.stage", nm), DT_I32, irb_i32(&w->b, 0));
    p->phase[side] = irb_var(&w->b, ir_fmt(w->b.ctx, "%s.phase", nm), DT_I32, irb_i32(&w->b, 0));
    Node *r = lw_node(w, role);
    Node *body = lw_node(w, r->d);
    NodeId *items = arena_alloc(&w->b.ctx->arena, (body->n + 2) * sizeof *items);
    items[0] = p->stage[side];
    items[1] = p->phase[side];
    for (uint32_t i = 0; i < body->n; i++)
        items[i + 2] = ir_list_at(w->b.k, body, i);
    NodeId nb = irb_block(&w->b, items, body->n + 2);
    lw_node(w, role)->d = nb;
}

/* stage = stage + 1 wrapping at S; the phase flips on the wrap */
static void advance(Lw *w, Pipe *p, int side, NodeId s, IrList *out)
{
    IrB *b = &w->b;
    NodeId next = irb_add_c(b, irb_name(b, s), 1);
    NodeId wrap = irb_bin(b, OP_EQ, next, irb_i32(b, p->stages));
    NodeId st = irb_select(b, wrap, irb_i32(b, 0), irb_add_c(b, irb_name(b, s), 1));
    irb_push(b, out, irb_assign(b, irb_name(b, p->stage[side]), st));
    NodeId flip = irb_bin(b, OP_BXOR, irb_name(b, p->phase[side]), irb_i32(b, 1));
    NodeId wrap2 = irb_bin(b, OP_EQ, irb_add_c(b, irb_name(b, s), 1), irb_i32(b, p->stages));
    irb_push(b, out, irb_assign(b, irb_name(b, p->phase[side]), irb_select(b, wrap2, flip, irb_name(b, p->phase[side]))));
}

static void acquire_or_wait(Lw *w, NodeId let, Pipe *p, int side, IrList *out)
{
    IrB *b = &w->b;
    NodeId stage = irb_name(b, p->stage[side]);
    lw_node(w, let)->b = stage;
    irb_push(b, out, let);
    NodeId par = irb_name(b, p->phase[side]);
    if (!side && !pass_planted("pipes-parity"))
        par = irb_bin(b, OP_BXOR, par, irb_i32(b, 1));
    NodeId bar = bar_elem(w, side ? p->full : p->empty, irb_name(b, let));
    NodeId wargs[2] = {lw_mbar_addr(w, bar), par};
    NodeId wait = irb_stmt(b, OP_L_MBAR_WAIT, wargs, 2);
    if (!side && p->tma) {
        int64_t bytes = stage_bytes(w, let, w->b.k->body, 0);
        NodeId targs[2] = {lw_mbar_addr(w, bar_elem(w, p->full, irb_name(b, let))), irb_i32(b, bytes)};
        NodeId st[2] = {wait, irb_stmt(b, OP_L_MBAR_ARRIVE_TX, targs, 2)};
        irb_push(b, out, lw_single_issue(w, st, 2));
    } else {
        irb_push(b, out, wait);
    }
    advance(w, p, side, let, out);
}

static void release(Lw *w, Pipe *p, NodeId tok, IrList *out)
{
    IrB *b = &w->b;
    irb_push(b, out, irb_stmt(b, OP_L_SYNCWARP, NULL, 0));
    NodeId a = lw_mbar_addr(w, bar_elem(w, p->empty, irb_clone(b, tok)));
    NodeId arrive = irb_stmt(b, OP_L_MBAR_ARRIVE, &a, 1);
    NodeId lane0 = irb_bin(b, OP_EQ, irb_special(b, SR_LANE), irb_i32(b, 0));
    irb_push(b, out, irb_if(b, lane0, irb_block(b, &arrive, 1), 0));
}

static void commit(Lw *w, Pipe *p, NodeId tok, IrList *out)
{
    IrB *b = &w->b;
    NodeId a = lw_mbar_addr(w, bar_elem(w, p->full, irb_clone(b, tok)));
    irb_push(b, out, irb_stmt(b, p->cp_async ? OP_L_CP_MBAR_ARRIVE : OP_L_MBAR_ARRIVE, &a, 1));
}

/* ---- expressions: P.full(s) / P.empty(s) → P.full[s] ------------------------ */

static void members(Lw *w, NodeId id, int depth)
{
    Kernel *k = w->b.k;
    if (!id || depth > 200)
        return;
    Node *n = &k->nodes[id];
    if ((n->op == OP_P_FULL || n->op == OP_P_EMPTY) && n->n == 1) {
        Pipe *p = pipe_of(w, n->a);
        if (p) {
            NodeId r = bar_elem(w, n->op == OP_P_FULL ? p->full : p->empty, ir_list_at(k, n, 0));
            irb_replace(&w->b, id, r);
        }
        return;
    }
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        members(w, kids[i], depth + 1);
    for (uint32_t i = 0; i < k->nodes[id].n; i++)
        members(w, k->lists[k->nodes[id].list + i], depth + 1);
}

/* ---- statements ------------------------------------------------------------ */

static void stmt(Lw *w, NodeId s, IrList *out)
{
    IrB *b = &w->b;
    Node *n = lw_node(w, s);
    switch ((Op)n->op) {
    case OP_MBARRIER:
        ir_push_node_list(b->ctx, &((Pipes *)w->user)->mbars, &((Pipes *)w->user)->nmbars, s);
        irb_push(b, out, s);
        return;
    case OP_LET: {
        Node *init = n->b ? lw_node(w, n->b) : NULL;
        if (init && (init->op == OP_P_ACQUIRE || init->op == OP_P_WAIT)) {
            Pipe *p = pipe_of(w, init->a);
            if (p) {
                acquire_or_wait(w, s, p, init->op == OP_P_WAIT, out);
                return;
            }
        }
        break;
    }
    case OP_EXPRSTMT: {
        Node *c = lw_node(w, n->a);
        Pipe *p = (c->op == OP_P_RELEASE || c->op == OP_P_COMMIT) ? pipe_of(w, c->a) : NULL;
        if (p && c->n == 1) {
            NodeId tok = ir_list_at(b->k, c, 0);
            if (c->op == OP_P_RELEASE)
                release(w, p, tok, out);
            else
                commit(w, p, tok, out);
            return;
        }
        break;
    }
    case OP_MB_ARRIVE: {
        NodeId a = lw_mbar_addr(w, n->a);
        irb_push(b, out, irb_stmt(b, OP_L_MBAR_ARRIVE, &a, 1));
        return;
    }
    case OP_MB_WAIT: {
        NodeId args[2] = {lw_mbar_addr(w, n->a), irb_cast(b, n->b, DT_I32, 1)};
        irb_push(b, out, irb_stmt(b, OP_L_MBAR_WAIT, args, 2));
        return;
    }
    case OP_MB_EXPECT: {
        NodeId args[2] = {lw_mbar_addr(w, n->a), irb_cast(b, n->b, DT_I32, 1)};
        NodeId st = irb_stmt(b, OP_L_MBAR_ARRIVE_TX, args, 2);
        irb_push(b, out, lw_single_issue(w, &st, 1));
        return;
    }
    default:
        break;
    }
    irb_push(b, out, s);
}

/* thread 0 initializes every mbarrier; then the block synchronizes */
static void init_mbarriers(Lw *w, Pipes *ps)
{
    IrB *b = &w->b;
    if (!ps->nmbars)
        return;
    b->span = w->b.k->span;
    IrList init = {0};
    for (uint32_t i = 0; i < ps->nmbars; i++) {
        Node *m = lw_node(w, ps->mbars[i]);
        int64_t n = 1, count = 1;
        if (m->a && !lw_const(w, m->a, &n))
            n = 1;
        lw_const(w, m->b, &count);
        for (int64_t e = 0; e < n; e++) {
            NodeId ref = m->a ? bar_elem(w, ps->mbars[i], irb_i32(b, e)) : irb_name(b, ps->mbars[i]);
            NodeId args[2] = {lw_mbar_addr(w, ref), irb_i32(b, count)};
            irb_push(b, &init, irb_stmt(b, OP_L_MBAR_INIT, args, 2));
        }
    }
    irb_push(b, &init, irb_stmt(b, OP_L_MBAR_FENCE, NULL, 0));
    NodeId t0 = irb_bin(b, OP_EQ, irb_special(b, SR_THREAD_X), irb_i32(b, 0));
    NodeId guarded = irb_if(b, t0, irb_list_block(b, &init), 0);
    NodeId sync = ir_node(b->ctx, b->k, OP_SYNC, b->span);
    Node *body = lw_node(w, b->k->body);
    /* after the leading declarations: the mbarriers must be declared first */
    IrList out = {0};
    uint32_t i = 0;
    for (; i < body->n; i++) {
        Node *s = lw_node(w, ir_list_at(b->k, body, i));
        if (s->op != OP_SHARED && s->op != OP_MBARRIER && s->op != OP_REFERENCE)
            break;
        irb_push(b, &out, ir_list_at(b->k, body, i));
    }
    irb_push(b, &out, guarded);
    irb_push(b, &out, sync);
    for (; i < body->n; i++)
        irb_push(b, &out, ir_list_at(b->k, body, i));
    body = lw_node(w, b->k->body);
    body->list = ir_list(b->ctx, b->k, out.v, out.n);
    body->n = out.n;
}

uint32_t pass_pipes(CakeCtx *ctx, Kernel *k, Target tg)
{
    Pipes ps;
    memset(&ps, 0, sizeof ps);
    Lw w;
    lw_init(&w, ctx, k, tg, &ps);
    uint32_t before = ctx->nerrors;
    /* declarations first (top level), so the roles know their pipelines */
    Node *body = lw_node(&w, k->body);
    IrList top = {0};
    for (uint32_t i = 0; i < body->n; i++) {
        NodeId s = ir_list_at(k, body, i);
        if (lw_node(&w, s)->op == OP_PIPELINE)
            declare_pipe(&w, s, &top);
        else
            irb_push(&w.b, &top, s);
    }
    body = lw_node(&w, k->body);
    body->list = ir_list(ctx, k, top.v, top.n);
    body->n = top.n;
    for (uint32_t i = 0; i < ps.npipes; i++) {
        declare_counters(&w, &ps.pipes[i], 0);
        declare_counters(&w, &ps.pipes[i], 1);
    }
    members(&w, k->body, 0);
    lw_rewrite(&w, k->body, stmt);
    init_mbarriers(&w, &ps);
    /* stage tokens are plain stage indices now */
    TypeId i32 = irb_scalar_type(&w.b, DT_I32, 1);
    for (NodeId i = 1; i < k->nnodes; i++)
        if (k->nodes[i].type && k->types[k->nodes[i].type].kind == TK_STAGE)
            k->nodes[i].type = i32;
    return ctx->nerrors - before;
}
