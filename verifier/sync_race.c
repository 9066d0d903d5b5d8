/* sync_race.c — cross-role shared-memory ordering.
 *
 * Every access to a shared tile is recorded with its role and program
 * position; every synchronization statement becomes a release (arrive, TMA
 * completion, commit, named barrier) or an acquire (mbarrier wait, pipeline
 * wait, named barrier) on a key (an mbarrier, a pipeline, a barrier id). A
 * read in role R of a tile that role W writes needs an edge W -> R: both
 * accesses indexed by stage tokens of one pipeline, or a key W releases after
 * the write and R acquires before the read (a shared loop counts either way).
 * When W writes inside a loop it overwrites the tile again, so R -> W is needed
 * too. The bytes of a TMA load are published only by the barrier it completes
 * on: a read ordered after it by any other edge only is E0763. Top-level code (outside roles) orders against roles by a top-level
 * `sync` between them. Missing edges are E0720, reported once per tile and
 * pair of roles, at the read, with a note at the write. */
#include <string.h>
#include "sync.h"

#define MAXACC 512
#define MAXEV 256

typedef struct {
    NodeId tile, st, role, pipe;  /* pipe: the pipeline of a stage-token index, else 0 */
    uint8_t write;
} Acc;

typedef struct {
    NodeId st, role;
    uint8_t kind;      /* 'm' mbarrier, 'p' pipeline, 'n' named barrier */
    uint8_t acquire;   /* 1: waits, 0: releases */
    int64_t key;       /* decl or barrier id */
} Ev;

typedef struct {
    SyK *s;
    Acc acc[MAXACC]; uint32_t nacc;
    Ev ev[MAXEV]; uint32_t nev;
    NodeId cur;
    NodeId done[MAXEV][3]; uint32_t ndone;
} Race;

static void add_acc(Race *r, NodeId tile, NodeId idx0, int write)
{
    SyK *s = r->s;
    for (uint32_t i = 0; i < r->nacc; i++)
        if (r->acc[i].st == r->cur && r->acc[i].tile == tile && r->acc[i].write == write)
            return;
    if (r->nacc == MAXACC)
        return;
    NodeId let = sy_token_let(s, idx0);
    Acc a = {tile, r->cur, s->role[r->cur], let ? sy_token_pipe(s, let) : 0, (uint8_t)write};
    r->acc[r->nacc++] = a;
}

static int shared_decl(SyK *s, NodeId e)
{
    NodeId d = sy_decl(s, e);
    return d && sy_node(s, d)->op == OP_SHARED ? (int)d : 0;
}

static void read_expr(SyK *s, NodeId e, void *u)
{
    Race *r = u;
    Node *n = sy_node(s, e);
    NodeId t;
    if (n->op == OP_INDEX && (t = (NodeId)shared_decl(s, n->a)))
        add_acc(r, t, n->n ? ir_list_at(s->k, n, 0) : 0, 0);
    else if (n->op == OP_NAME && (t = (NodeId)shared_decl(s, e)))
        add_acc(r, t, 0, 0);
}

static void add_ev(Race *r, NodeId st, uint8_t kind, int acquire, int64_t key)
{
    if (r->nev == MAXEV || !key)
        return;
    Ev e = {st, r->s->role[st], kind, (uint8_t)acquire, key};
    r->ev[r->nev++] = e;
}

static void gather(SyK *s, NodeId st, void *u)
{
    Race *r = u;
    Node *n = sy_node(s, st);
    NodeId target = 0, call = n->op == OP_EXPRSTMT ? n->a : 0;
    int64_t id;
    r->cur = st;
    switch (n->op) {
    case OP_STORE: case OP_CP_ASYNC: case OP_TMA_LOAD: case OP_STMATRIX: case OP_ASSIGN: target = n->a; break;
    default: break;
    }
    if (target && sy_is_shared_ref(s, target))
        add_acc(r, sy_ref_decl(s, target), sy_ref_index0(s, target), 1);
    else
        target = 0;
    /* reads: every other expression of the statement */
    if (n->op != OP_FOR && n->op != OP_IF && n->op != OP_ROLE) {
        NodeId kids[4] = {n->a, n->b, n->c, n->d};
        for (int i = 0; i < 4; i++)
            if (kids[i] && kids[i] != target)
                sy_each_expr(s, kids[i], read_expr, r);
        for (uint32_t i = 0; i < n->n; i++)
            sy_each_expr(s, ir_list_at(s->k, n, i), read_expr, r);
    }
    /* synchronization events */
    switch (n->op) {
    case OP_MB_ARRIVE: case OP_MB_EXPECT: add_ev(r, st, 'm', 0, sy_ref_decl(s, n->a)); break;
    case OP_MB_WAIT: add_ev(r, st, 'm', 1, sy_ref_decl(s, n->a)); break;
    case OP_TMA_LOAD:
        if (sy_pipe_of(s, n->c))
            add_ev(r, st, 'p', 0, sy_pipe_of(s, n->c));
        else
            add_ev(r, st, 'm', 0, sy_ref_decl(s, n->c));
        break;
    case OP_BAR_SYNC:
        if (sy_const(s, n->a, &id)) {
            add_ev(r, st, 'n', 0, id + 1);
            add_ev(r, st, 'n', 1, id + 1);
        }
        break;
    case OP_BAR_ARRIVE:
        if (sy_const(s, n->a, &id))
            add_ev(r, st, 'n', 0, id + 1);
        break;
    case OP_LET:
        if (sy_token_kind(s, st) == OP_P_WAIT)
            add_ev(r, st, 'p', 1, sy_pipe_of(s, n->b));
        if (sy_token_kind(s, st) == OP_P_ACQUIRE) /* acquire waits for the consumer's release */
            add_ev(r, st, 'p', 1, -(int64_t)sy_pipe_of(s, n->b));
        break;
    case OP_EXPRSTMT:
        if (call && sy_node(s, call)->op == OP_P_COMMIT)
            add_ev(r, st, 'p', 0, sy_pipe_of(s, call));
        if (call && sy_node(s, call)->op == OP_P_RELEASE)
            add_ev(r, st, 'p', 0, -(int64_t)sy_pipe_of(s, call));
        break;
    default: break;
    }
}

/* a before b in program order, or both in one loop (the next iteration) */
static int before(SyK *s, NodeId a, NodeId b)
{
    return s->pos[a] < s->pos[b] || sy_common_loop(s, a, b);
}

static int tma_write(SyK *s, const Acc *w)
{
    return w->write && sy_node(s, w->st)->op == OP_TMA_LOAD;
}

/* an edge from access w (in role W) to access x (in role X) */
static int ordered(Race *r, const Acc *w, const Acc *x)
{
    SyK *s = r->s;
    if (w->pipe && w->pipe == x->pipe)
        return 1;
    for (uint32_t i = 0; i < r->nev; i++) {
        const Ev *rel = &r->ev[i];
        if (rel->acquire || rel->role != w->role || !(rel->st == w->st || before(s, w->st, rel->st)))
            continue;
        if (tma_write(s, w) && rel->st != w->st) /* TMA data is published by its own barrier only */
            continue;
        for (uint32_t j = 0; j < r->nev; j++) {
            const Ev *acq = &r->ev[j];
            if (acq->acquire && acq->role == x->role && acq->kind == rel->kind && acq->key == rel->key &&
                before(s, acq->st, x->st))
                return 1;
        }
    }
    return 0;
}

/* top-level code against a role: a top-level `sync` between them */
static int top_sync_between(SyK *s, NodeId a, NodeId b)
{
    Node *body = sy_node(s, s->k->body);
    uint32_t lo = s->pos[a] < s->pos[b] ? s->pos[a] : s->pos[b];
    uint32_t hi = s->pos[a] < s->pos[b] ? s->pos[b] : s->pos[a];
    for (uint32_t i = 0; i < body->n; i++) {
        NodeId st = ir_list_at(s->k, body, i);
        if (sy_node(s, st)->op == OP_SYNC && s->pos[st] > lo && s->pos[st] < hi)
            return 1;
    }
    return 0;
}

static const char *rname(SyK *s, NodeId role) { return sy_role_name(s, role); }

static void report(Race *r, const Acc *w, const Acc *x, int war)
{
    SyK *s = r->s;
    const char *tile = ir_symstr(s->ctx, sy_node(s, w->tile)->name);
    for (uint32_t i = 0; i < r->ndone; i++) /* once per tile and pair of roles */
        if (r->done[i][0] == w->tile && r->done[i][1] == w->role && r->done[i][2] == x->role)
            return;
    if (r->ndone < MAXEV) {
        r->done[r->ndone][0] = w->tile;
        r->done[r->ndone][1] = w->role;
        r->done[r->ndone++][2] = x->role;
    }
    Diag *d;
    if (!war && tma_write(s, w)) {
        NodeId bar = sy_node(s, w->st)->c;
        d = sy_report(s, E0763, x->st, "%s reads shared `%s`, which a TMA load of %s writes, without waiting on "
                      "`%s`, the mbarrier the load completes on: a later, unrelated barrier or pipeline edge does "
                      "not say the bytes have landed", rname(s, x->role), tile, rname(s, w->role), sy_text(s, bar));
        if (d) {
            diag_note(s->ctx, d, sy_span(s, w->st), "the TMA load");
            diag_help(s->ctx, d, "`mbarrier.wait %s, PARITY` in %s before the first read", sy_text(s, bar),
                      rname(s, x->role));
        }
        return;
    }
    if (!war)
        d = sy_report(s, E0720, x->st, "%s reads shared `%s`, which %s writes, with no barrier or pipeline "
                      "ordering the write before the read (a race)", rname(s, x->role), tile, rname(s, w->role));
    else
        d = sy_report(s, E0720, w->st, "%s overwrites shared `%s` on its next iteration while %s may still read "
                      "it: nothing orders the read before the next write (a race)", rname(s, w->role), tile,
                      rname(s, x->role));
    if (!d)
        return;
    diag_note(s->ctx, d, sy_span(s, war ? x->st : w->st), war ? "the read in %s" : "the write in %s",
              rname(s, war ? x->role : w->role));
    diag_note(s->ctx, d, sy_span(s, w->tile), "`%s` is declared here", tile);
    if (s->npipes)
        diag_help(s->ctx, d, "put `%s` in the pipeline's stages: declare it `[STAGES, ...]` and index it with the "
                  "stage token (`%s[s]`) in both roles", tile, tile);
    else
        diag_help(s->ctx, d, "order the roles: an mbarrier (`mbarrier.arrive` after the write, `mbarrier.wait` "
                  "before the read), a named barrier both roles pass, or a pipeline whose stages hold `%s`", tile);
}

void sy_check_races(SyK *s)
{
    if (!s->nroles || !s->ntiles)
        return;
    Race *r = arena_alloc(&s->ctx->arena, sizeof *r);
    r->s = s;
    sy_each_stmt(s, s->k->body, gather, r);
    for (uint32_t i = 0; i < r->nacc; i++) {
        const Acc *w = &r->acc[i];
        if (!w->write)
            continue;
        for (uint32_t j = 0; j < r->nacc; j++) {
            const Acc *x = &r->acc[j];
            if (x->write || x->tile != w->tile || x->role == w->role)
                continue;
            if (!w->role || !x->role) {
                if (!top_sync_between(s, w->st, x->st))
                    report(r, w, x, 0);
                continue;
            }
            if (!ordered(r, w, x))
                report(r, w, x, 0);
            else if (sy_loop_of(s, w->st) && !ordered(r, x, w))
                report(r, w, x, 1);
        }
    }
}
