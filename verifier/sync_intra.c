/* sync_intra.c — shared-memory ordering between the threads of one role (or of
 * the block outside roles), and the single-issue operations that order only
 * the thread that issues them.
 *
 * A dataflow per role keeps, per shared tile:
 *   wr   a generic write (store, stmatrix, assignment) no barrier has followed;
 *   unf  ... not yet followed by `fence.proxy.async` either;
 *   bad  a write that was barriered before it was fenced; late: ... and then fenced;
 *   rd   a generic read (load, ldmatrix) no barrier has followed;
 *   tma  a TMA load into the tile no `mbarrier.wait` on its barrier has followed;
 *   st   a `tma.store` from the tile;  stw  ... a `tma.store.wait` (issued by the
 *        elected thread only) since, with no barrier after it.
 * A barrier (`sync`, `barrier`, a block reduction, an mbarrier wait the role
 * itself arrives on) clears wr, rd and stw. Reported:
 *   E0760  a read of a pending write by other threads: different threads may
 *          read what others wrote (same-thread accesses are exempt: the same
 *          reference indexed by `thread.x`, or the same register layout);
 *   E0761  an overwrite (a generic write or a single-issue TMA load) while
 *          other threads may still read the old contents: a pending read, or a
 *          `tma.store` waited for by the elected thread but no barrier since;
 *   E0762  a `tma.store` (one elected thread) of a tile all threads wrote, with
 *          no barrier after their writes, or with the barrier before the fence;
 *   E0763  a read of a tile a TMA load writes before a wait on the mbarrier the
 *          load completes on (here; across roles sync_race.c reports it).
 * cp.async copies are the cp.async check's (sync_cpasync.c). */
#include <string.h>
#include "sync.h"

#define MAXT 64

typedef struct {
    NodeId wr[MAXT], rd[MAXT], bad[MAXT], late[MAXT], st[MAXT], stw[MAXT], tma[MAXT], tmab[MAXT];
    uint8_t unf[MAXT];
} IState;

typedef struct {
    SyK *s;
    NodeId role;
    IState *x;      /* the state of the statement being visited */
    NodeId cur;
} Intra;

static int tile_ix(SyK *s, NodeId ref) { return sy_tile_index(s, ref, MAXT); }

static const char *who(const Intra *in)
{
    return in->role ? sy_role_name(in->s, in->role) : "the block";
}

static const char *tname(SyK *s, int t) { return ir_symstr(s->ctx, sy_node(s, s->tiles[t])->name); }

/* ---- same-thread accesses ------------------------------------------------- */

static NodeId unlet(SyK *s, NodeId e, int *depth)
{
    while (e && sy_node(s, e)->op == OP_NAME && *depth < 32) {
        NodeId d = sy_decl(s, e);
        if (!d || sy_node(s, d)->op != OP_LET || !sy_node(s, d)->b)
            break;
        e = sy_node(s, d)->b;
        (*depth)++;
    }
    return e;
}

static int same_expr(SyK *s, NodeId a, NodeId b, int depth)
{
    if (depth > 64)
        return 0;
    a = unlet(s, a, &depth);
    b = unlet(s, b, &depth);
    if (a == b)
        return 1;
    if (!a || !b)
        return 0;
    Node *x = sy_node(s, a), *y = sy_node(s, b);
    if (x->op != y->op || x->sub != y->sub || x->n != y->n)
        return 0;
    if (x->op == OP_NAME) {
        NodeId da = sy_decl(s, a), db = sy_decl(s, b);
        if (da == db)
            return da != 0;
        Node *fa = da ? sy_node(s, da) : NULL, *fb = db ? sy_node(s, db) : NULL;
        /* two loop variables over the same range */
        return fa && fb && fa->op == OP_FOR && fb->op == OP_FOR && same_expr(s, fa->a, fb->a, depth + 1) &&
               same_expr(s, fa->b, fb->b, depth + 1) && same_expr(s, fa->c, fb->c, depth + 1);
    }
    if (x->op == OP_INT || x->op == OP_SPECIAL || x->op == OP_BOOL)
        return x->v.i == y->v.i;
    if (x->op == OP_FLOAT)
        return x->v.f == y->v.f;
    if (!same_expr(s, x->a, y->a, depth + 1) || !same_expr(s, x->b, y->b, depth + 1) ||
        !same_expr(s, x->c, y->c, depth + 1) || !same_expr(s, x->d, y->d, depth + 1))
        return 0;
    for (uint32_t i = 0; i < x->n; i++)
        if (!same_expr(s, ir_list_at(s->k, x, i), ir_list_at(s->k, y, i), depth + 1))
            return 0;
    return 1;
}

static int mentions_tid(SyK *s, NodeId e, int depth)
{
    if (!e || depth > 64)
        return 0;
    e = unlet(s, e, &depth);
    Node *n = sy_node(s, e);
    if (n->op == OP_SPECIAL)
        return n->v.i == SR_THREAD_X;
    if (n->op == OP_NAME || ir_ops[n->op].cls == OC_STMT)
        return 0;
    if (mentions_tid(s, n->a, depth + 1) || mentions_tid(s, n->b, depth + 1) || mentions_tid(s, n->c, depth + 1))
        return 1;
    for (uint32_t i = 0; i < n->n; i++)
        if (mentions_tid(s, ir_list_at(s->k, n, i), depth + 1))
            return 1;
    return 0;
}

static uint8_t layout_of(SyK *s, NodeId e)
{
    Node *n = sy_node(s, e);
    return n->type && n->type < s->k->ntypes ? s->k->types[n->type].layout : (uint8_t)LY_NONE;
}

/* The shared reference an access statement or LOAD/LDMATRIX expression uses,
 * and the layout of its register side (LY_NONE for per-thread values). */
static NodeId access_ref(SyK *s, NodeId at, uint8_t *layout, int *collective)
{
    Node *n = sy_node(s, at);
    *collective = n->op == OP_STMATRIX || n->op == OP_LDMATRIX || n->op == OP_LDMATRIX_T;
    switch (n->op) {
    case OP_STORE: case OP_STMATRIX: *layout = layout_of(s, n->b); return n->a;
    case OP_ASSIGN: *layout = LY_NONE; return n->a;
    case OP_LOAD: *layout = layout_of(s, at); return n->a;
    case OP_LDMATRIX: case OP_LDMATRIX_T: *layout = layout_of(s, at); return n->n ? ir_list_at(s->k, n, 0) : 0;
    default: *layout = LY_NONE; return 0;
    }
}

/* 1 when every thread reads only what it wrote itself: the same reference,
 * indexed by the thread (per-thread values) or owned through the same
 * register layout (tile values); warp-collective moves never count. */
static int same_thread(SyK *s, NodeId w, NodeId r)
{
    uint8_t lw, lr;
    int cw, cr;
    NodeId rw = access_ref(s, w, &lw, &cw), rr = access_ref(s, r, &lr, &cr);
    if (!rw || !rr || cw || cr || lw != lr || !same_expr(s, rw, rr, 0))
        return 0;
    return lw != LY_NONE || mentions_tid(s, rw, 0);
}

/* ---- the dataflow -------------------------------------------------------------- */

static void barrier(IState *x)
{
    for (int t = 0; t < MAXT; t++) {
        if (x->wr[t] && x->unf[t])
            x->bad[t] = x->wr[t];
        x->wr[t] = x->rd[t] = x->stw[t] = 0;
    }
}

/* an earlier check already reported a problem at this statement */
static int reported_at(const SyK *s, NodeId at)
{
    for (uint32_t i = 0; i < s->nreported; i++)
        if ((NodeId)s->reported[i] == at)
            return 1;
    return 0;
}

static void report_raw(Intra *in, int t, NodeId at, const char *what)
{
    SyK *s = in->s;
    NodeId w = in->x->wr[t];
    if (reported_at(s, at) || reported_at(s, in->cur))
        return;
    Diag *d = sy_report(s, E0760, at, "%s reads shared `%s`, which other threads of %s wrote, with no barrier "
                        "between the write and the read (a race)", what, tname(s, t), who(in));
    if (!d)
        return;
    diag_note(s->ctx, d, sy_span(s, w), "the write, by other threads");
    diag_help(s->ctx, d, "put a barrier between them: `%s` (after a `fence.proxy.async` when an async operation "
              "reads)", in->role ? "barrier ID, THREADS" : "sync");
}

static void report_war(Intra *in, int t, NodeId at, NodeId prev, int waited)
{
    SyK *s = in->s;
    Diag *d;
    if (waited)
        d = sy_report(s, E0761, at, "this overwrites shared `%s`, but only the elected thread that issued "
                      "`tma.store.wait` knows the store has read it: the other threads may overwrite it too early",
                      tname(s, t));
    else
        d = sy_report(s, E0761, at, "%s overwrites shared `%s` while other threads of %s may still read its "
                      "previous contents: no barrier since their read (a race)",
                      sy_node(s, at)->op == OP_TMA_LOAD ? "this TMA load, issued by one elected thread,"
                      : "this", tname(s, t), who(in));
    if (!d)
        return;
    diag_note(s->ctx, d, sy_span(s, prev), waited ? "the wait, in one thread" : "the read");
    diag_help(s->ctx, d, "put a barrier (`%s`) between the %s and the overwrite",
              in->role ? "barrier ID, THREADS" : "sync", waited ? "wait" : "last read");
}

static void check_tma(Intra *in, int t, NodeId at)
{
    SyK *s = in->s;
    if (!in->x->tma[t])
        return;
    Diag *d = sy_report(s, E0763, at, "this reads shared `%s` before waiting on `%s`, the mbarrier its TMA load "
                        "completes on: the bytes may not have landed", tname(s, t),
                        ir_symstr(s->ctx, sy_node(s, in->x->tmab[t])->name));
    if (d) {
        diag_note(s->ctx, d, sy_span(s, in->x->tma[t]), "the TMA load");
        diag_help(s->ctx, d, "`mbarrier.wait %s, PARITY` before the first read",
                  ir_symstr(s->ctx, sy_node(s, in->x->tmab[t])->name));
    }
    in->x->tma[t] = 0;
}

static void generic_read(SyK *s, NodeId e, void *u)
{
    Intra *in = u;
    uint16_t op = sy_node(s, e)->op;
    if (op != OP_LOAD && op != OP_LDMATRIX && op != OP_LDMATRIX_T)
        return;
    uint8_t layout;
    int collective;
    NodeId ref = access_ref(s, e, &layout, &collective);
    int t = ref && sy_is_shared_ref(s, ref) ? tile_ix(s, ref) : -1;
    if (t < 0)
        return;
    check_tma(in, t, e);
    if (in->x->wr[t] && !same_thread(s, in->x->wr[t], e))
        report_raw(in, t, e, "this");
    if (!in->x->rd[t])
        in->x->rd[t] = e;
}

static void async_read(Intra *in, NodeId st, NodeId ref, const char *what)
{
    SyK *s = in->s;
    int t = ref && sy_is_shared_ref(s, ref) ? tile_ix(s, ref) : -1;
    if (t < 0)
        return;
    IState *x = in->x;
    check_tma(in, t, st);
    if (sy_node(s, st)->op != OP_TMA_STORE) {
        if (x->wr[t])
            report_raw(in, t, st, what);
        return;
    }
    NodeId w = x->wr[t] ? x->wr[t] : x->late[t];
    if (w) {
        Diag *d = sy_report(s, E0762, st, x->wr[t] ? "`tma.store` is issued by one elected thread, but other threads "
                            "wrote `%s` and no barrier follows their writes: it may copy unwritten data"
                            : "`tma.store` is issued by one elected thread, but the writes to `%s` were fenced only "
                            "after the barrier: the fence of the elected thread does not cover the other threads' "
                            "writes", tname(s, t));
        if (d) {
            diag_note(s->ctx, d, sy_span(s, w), "the write by all threads");
            diag_help(s->ctx, d, "in this order: the write, `fence.proxy.async` (by every writer), a barrier over "
                      "the writers, then `tma.store`");
        }
    }
    x->bad[t] = x->late[t] = 0;
    x->st[t] = st;
}

static void write_tile(Intra *in, NodeId st, NodeId ref, int single)
{
    SyK *s = in->s;
    int t = tile_ix(s, ref);
    if (t < 0)
        return;
    IState *x = in->x;
    if (x->stw[t] && !single)
        report_war(in, t, st, x->stw[t], 1);
    else if (x->rd[t] && !same_thread(s, st, x->rd[t]))
        report_war(in, t, st, x->rd[t], 0);
    if (single)
        return;
    x->wr[t] = st;
    x->unf[t] = 1;
    x->bad[t] = x->late[t] = 0;
}

static int role_arrives(SyK *s, NodeId role, NodeId bar)
{
    for (NodeId i = 1; i < s->k->nnodes; i++)
        if (s->pos[i] && sy_node(s, i)->op == OP_MB_ARRIVE && s->role[i] == role &&
            sy_ref_decl(s, sy_node(s, i)->a) == bar)
            return 1;
    return 0;
}

static int has_block_collective(SyK *s, NodeId e, int depth)
{
    if (!e || depth > 64)
        return 0;
    Node *n = sy_node(s, e);
    if (n->op == OP_BLOCK_ADD || n->op == OP_BLOCK_MAX || n->op == OP_BLOCK_MIN)
        return 1;
    if (ir_ops[n->op].cls == OC_STMT && depth)
        return 0;
    if (has_block_collective(s, n->a, depth + 1) || has_block_collective(s, n->b, depth + 1) ||
        has_block_collective(s, n->c, depth + 1))
        return 1;
    for (uint32_t i = 0; i < n->n; i++)
        if (has_block_collective(s, ir_list_at(s->k, n, i), depth + 1))
            return 1;
    return 0;
}

static void intra_stmt(SyFlow *f, NodeId st, void *state)
{
    Intra *in = f->u;
    SyK *s = in->s;
    IState *x = state;
    Node *n = sy_node(s, st);
    in->x = x;
    in->cur = st;
    if (n->op != OP_FOR && n->op != OP_IF && has_block_collective(s, st, 0))
        barrier(x);
    if (n->op != OP_WGMMA && n->op != OP_TMA_STORE && n->op != OP_CP_ASYNC && n->op != OP_TMA_LOAD)
        sy_stmt_exprs(s, st, generic_read, in);
    switch (n->op) {
    case OP_SYNC: case OP_BAR_SYNC: barrier(x); break;
    case OP_MB_WAIT: {
        NodeId bar = sy_ref_decl(s, n->a);
        for (int t = 0; t < MAXT; t++)
            if (x->tmab[t] == bar)
                x->tma[t] = x->tmab[t] = 0;
        if (bar && role_arrives(s, in->role, bar))
            barrier(x);
        break;
    }
    case OP_FENCE_PROXY:
        memset(x->unf, 0, sizeof x->unf);
        for (int t = 0; t < MAXT; t++)
            if (x->bad[t])
                x->late[t] = x->bad[t];
        break;
    case OP_STORE: case OP_STMATRIX: case OP_ASSIGN:
        if (sy_is_shared_ref(s, n->a))
            write_tile(in, st, n->a, 0);
        break;
    case OP_TMA_LOAD: {
        int t = tile_ix(s, n->a);
        write_tile(in, st, n->a, 1);
        if (t >= 0 && !sy_pipe_of(s, n->c) && sy_ref_decl(s, n->c)) {
            x->tma[t] = st;
            x->tmab[t] = sy_ref_decl(s, n->c);
        }
        break;
    }
    case OP_TMA_STORE: async_read(in, st, n->b, "`tma.store`"); break;
    case OP_TMA_WAIT:
        for (int t = 0; t < MAXT; t++)
            if (x->st[t]) {
                x->stw[t] = st;
                x->st[t] = 0;
            }
        break;
    case OP_WGMMA:
        async_read(in, st, n->b, "`wgmma`");
        async_read(in, st, n->c, "`wgmma`");
        break;
    default: break;
    }
}

static void join_ids(NodeId *a, const NodeId *b)
{
    for (int i = 0; i < MAXT; i++)
        if (!a[i])
            a[i] = b[i];
}

static void intra_join(SyFlow *f, void *dst, const void *src)
{
    (void)f;
    IState *a = dst;
    const IState *b = src;
    join_ids(a->wr, b->wr);
    join_ids(a->rd, b->rd);
    join_ids(a->bad, b->bad);
    join_ids(a->late, b->late);
    join_ids(a->st, b->st);
    join_ids(a->stw, b->stw);
    join_ids(a->tma, b->tma);
    join_ids(a->tmab, b->tmab);
    for (int i = 0; i < MAXT; i++)
        a->unf[i] |= b->unf[i];
}

void sy_check_intra(SyK *s)
{
    if (!s->ntiles)
        return;
    Intra in = {s, 0, NULL, 0};
    IState *x = arena_alloc(&s->ctx->arena, sizeof *x);
    SyFlow f = {.s = s, .size = sizeof *x, .join = intra_join, .stmt = intra_stmt, .u = &in};
    memset(x, 0, sizeof *x);
    sy_flow(&f, s->k->body, x);
    for (uint32_t i = 0; i < s->nroles; i++) {
        in.role = s->roles[i];
        memset(x, 0, sizeof *x);
        sy_flow(&f, sy_node(s, s->roles[i])->d, x);
    }
}
