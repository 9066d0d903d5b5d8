/* sync_proxy.c — ordering between the generic proxy and the async proxy.
 *
 * A dataflow per role tracks, per shared tile: a generic-proxy write (store,
 * stmatrix, assignment, cp.async) not yet followed by `fence.proxy.async`, and
 * wgmma operand reads still in flight (until a `wgmma.wait` retires them). An
 * async read (tma.store source, wgmma operand) of a tile with an unfenced
 * generic write, in the same role or in another role the write escapes from,
 * is E0725; a generic write to a tile an async read may still be reading is
 * E0726. Bulk stores are tracked by a concrete run of each role (buffers such
 * as `Cs[j % 2]` differ per iteration): `tma.store.wait N` keeps the N most
 * recent stores pending, and a generic write into the source of a pending store
 * is E0726, as is a role that ends with a store still pending (its block's
 * shared memory outlives it only until the block exits). */
#include <string.h>
#include "sync.h"

#define MAXT 64

typedef struct {
    uint8_t gen[MAXT];        /* 1: unfenced generic write */
    NodeId gen_at[MAXT];
    uint8_t mma_age[MAXT];    /* 0: none; n: n-1 wgmma groups were issued after it */
    NodeId mma_at[MAXT];
} XState;

typedef struct {
    SyK *s;
    NodeId role;
    NodeId escape_at[MAXT];   /* per tile: an unfenced write that escapes its role */
    NodeId escape_role[MAXT];
    int report_cross;
} Proxy;

static int tile_ix(SyK *s, NodeId ref) { return sy_tile_index(s, ref, MAXT); }

static void age(uint8_t *ages, NodeId *at, int t, NodeId st)
{
    for (int i = 0; i < MAXT; i++)
        if (ages[i] && ages[i] < 250)
            ages[i]++;
    if (t >= 0) {
        ages[t] = 1;
        at[t] = st;
    }
}

static void retire(uint8_t *ages, NodeId *at, int64_t n)
{
    for (int i = 0; i < MAXT; i++)
        if (ages[i] && ages[i] - 1 >= n) {
            ages[i] = 0;
            at[i] = 0;
        }
}

static void async_read(Proxy *p, XState *x, NodeId st, NodeId ref, const char *what)
{
    SyK *s = p->s;
    int t = tile_ix(s, ref);
    if (t < 0)
        return;
    NodeId w = x->gen[t] ? x->gen_at[t] : 0;
    if (!w && p->report_cross && p->escape_at[t] && p->escape_role[t] != p->role)
        w = p->escape_at[t];
    if (!w)
        return;
    const char *tile = ir_symstr(s->ctx, sy_node(s, s->tiles[t])->name);
    Diag *d = sy_report(s, E0725, st, "%s reads shared `%s` through the async proxy, but a generic-proxy write to "
                        "it is not followed by `fence.proxy.async`: the read may see stale data", what, tile);
    if (!d)
        return;
    diag_note(s->ctx, d, sy_span(s, w), "the generic write (%s)", sy_role_name(s, s->role[w]));
    diag_help(s->ctx, d, "insert `fence.proxy.async` after the write (in the writing threads), then a barrier so "
              "all writers are done before %s", what);
}

static void generic_write(Proxy *p, XState *x, NodeId st, NodeId ref)
{
    SyK *s = p->s;
    int t = tile_ix(s, ref);
    if (t < 0)
        return;
    const char *tile = ir_symstr(s->ctx, sy_node(s, s->tiles[t])->name);
    NodeId pend = x->mma_age[t] ? x->mma_at[t] : 0;
    if (pend) {
        Diag *d = sy_report(s, E0726, st, "this overwrites shared `%s` while a `wgmma` may still be reading it",
                            tile);
        if (d) {
            diag_note(s->ctx, d, sy_span(s, pend), "the async read is issued here");
            diag_help(s->ctx, d, "retire the wgmma first: `wgmma.wait 0` before the overwrite");
        }
    }
    x->gen[t] = 1;
    x->gen_at[t] = st;
}

static void proxy_stmt(SyFlow *f, NodeId st, void *state)
{
    Proxy *p = f->u;
    SyK *s = p->s;
    XState *x = state;
    Node *n = sy_node(s, st);
    int64_t v;
    switch (n->op) {
    case OP_FENCE_PROXY:
        memset(x->gen, 0, sizeof x->gen);
        memset(x->gen_at, 0, sizeof x->gen_at);
        break;
    case OP_STORE: case OP_STMATRIX: case OP_CP_ASYNC: case OP_ASSIGN:
        if (sy_is_shared_ref(s, n->a))
            generic_write(p, x, st, n->a);
        break;
    case OP_TMA_STORE:
        async_read(p, x, st, n->b, "`tma.store`");
        break;
    case OP_WGMMA: {
        int tb = sy_is_shared_ref(s, n->b) ? tile_ix(s, n->b) : -1;
        int tc = sy_is_shared_ref(s, n->c) ? tile_ix(s, n->c) : -1;
        if (tb >= 0)
            async_read(p, x, st, n->b, "`wgmma`");
        if (tc >= 0)
            async_read(p, x, st, n->c, "`wgmma`");
        age(x->mma_age, x->mma_at, tb, st);
        if (tc >= 0) {
            x->mma_age[tc] = 1;
            x->mma_at[tc] = st;
        }
        break;
    }
    case OP_WGMMA_WAIT:
        retire(x->mma_age, x->mma_at, sy_const(s, n->a, &v) ? v : 0);
        break;
    case OP_MB_ARRIVE: case OP_BAR_ARRIVE: case OP_BAR_SYNC: case OP_SYNC: case OP_EXPRSTMT:
        for (int t = 0; t < MAXT; t++) /* an unfenced write handed to other threads */
            if (x->gen[t] && !p->escape_at[t] && p->role) {
                p->escape_at[t] = x->gen_at[t];
                p->escape_role[t] = p->role;
            }
        break;
    default: break;
    }
}

static void join_age(uint8_t *a, NodeId *aa, const uint8_t *b, const NodeId *ba)
{
    for (int i = 0; i < MAXT; i++)
        if (b[i] && (!a[i] || b[i] < a[i])) {
            a[i] = b[i];
            aa[i] = ba[i];
        }
}

static void proxy_join(SyFlow *f, void *dst, const void *src)
{
    XState *a = dst;
    const XState *b = src;
    for (int i = 0; i < MAXT; i++)
        if (b->gen[i] && (!a->gen[i] || b->gen_at[i] > a->gen_at[i])) { /* the last write: the fence goes after it */
            a->gen[i] = 1;
            a->gen_at[i] = b->gen_at[i];
        }
    join_age(a->mma_age, a->mma_at, b->mma_age, b->mma_at);
}

static void run(Proxy *p, NodeId role, NodeId body)
{
    XState x;
    memset(&x, 0, sizeof x);
    p->role = role;
    SyFlow f = {.s = p->s, .size = sizeof x, .join = proxy_join, .stmt = proxy_stmt, .u = p};
    sy_flow(&f, body, &x);
    for (int t = 0; role && t < MAXT; t++)
        if (x.gen[t] && !p->escape_at[t]) {
            p->escape_at[t] = x.gen_at[t];
            p->escape_role[t] = role;
        }
}

/* ---- bulk stores: a concrete run ------------------------------------------ */

#define MAXPEND 32
#define KEYS 6

typedef struct { int tile; int64_t key[KEYS]; NodeId at; } Pend;

typedef struct {
    SyK *s;
    Pend pend[MAXPEND]; int npend;
    int found;
    NodeId last_wait;   /* the last tma.store.wait run */
} Bulk;

/* the values of a ref's indices (innermost INDEX first): -1 whole, -2 unknown */
static void ref_key(SyExec *x, NodeId ref, int64_t *key)
{
    SyK *s = sy_xk(x);
    NodeId chain[8];
    int nc = 0, nk = 0;
    for (int i = 0; i < KEYS; i++)
        key[i] = -1;
    for (NodeId r = ref; r && nc < 8; r = sy_node(s, r)->a) {
        uint16_t op = sy_node(s, r)->op;
        if (op == OP_INDEX)
            chain[nc++] = r;
        else if (op != OP_TRANS && op != OP_CAST)
            break;
    }
    while (nc-- && nk < KEYS) {
        Node *ix = sy_node(s, chain[nc]);
        for (uint32_t j = 0; j < ix->n && nk < KEYS; j++) {
            Node *e = sy_node(s, ir_list_at(s->k, ix, j));
            int64_t v;
            NodeId ve = e->op == OP_SLICE ? e->a : ir_list_at(s->k, ix, j);
            if (e->op == OP_COLON)
                key[nk++] = -1;
            else
                key[nk++] = sy_eval(x, ve, &v) && v >= 0 ? v : -2;
        }
    }
}

static int overlap(const int64_t *a, const int64_t *b)
{
    for (int i = 0; i < KEYS; i++)
        if (a[i] >= 0 && b[i] >= 0 && a[i] != b[i])
            return 0;
    return 1;
}

static void bulk_stmt(SyExec *x, NodeId st)
{
    Bulk *bk = x->u;
    SyK *s = bk->s;
    Node *n = sy_node(s, st);
    int64_t v, key[KEYS];
    if (n->op == OP_TMA_STORE && sy_is_shared_ref(s, n->b)) {
        if (bk->npend == MAXPEND) {
            memmove(bk->pend, bk->pend + 1, (MAXPEND - 1) * sizeof *bk->pend);
            bk->npend--;
        }
        Pend *p = &bk->pend[bk->npend++];
        p->tile = tile_ix(s, n->b);
        p->at = st;
        ref_key(x, n->b, p->key);
    } else if (n->op == OP_TMA_WAIT) {
        bk->last_wait = st;
        if (!sy_eval(x, n->a, &v) || v < 0)
            v = 0;
        if (bk->npend > v) {
            memmove(bk->pend, bk->pend + (bk->npend - v), (size_t)v * sizeof *bk->pend);
            bk->npend = (int)v;
        }
    } else if ((n->op == OP_STORE || n->op == OP_STMATRIX || n->op == OP_ASSIGN || n->op == OP_CP_ASYNC) &&
               sy_is_shared_ref(s, n->a) && !bk->found) {
        int t = tile_ix(s, n->a);
        ref_key(x, n->a, key);
        for (int i = bk->npend - 1; i >= 0; i--) {
            Pend *p = &bk->pend[i];
            if (p->tile != t || !overlap(p->key, key))
                continue;
            int newer = bk->npend - 1 - i;
            Diag *d = sy_report(s, E0726, st, "this overwrites shared `%s` while a `tma.store` from it may still be "
                                "reading it (%d newer store%s issued since, on %s)",
                                ir_symstr(s->ctx, sy_node(s, s->tiles[t])->name), newer, newer == 1 ? "" : "s",
                                sy_sample_text(x));
            if (d) {
                diag_note(s->ctx, d, sy_span(s, p->at), "the store that reads it");
                if (bk->last_wait)
                    diag_note(s->ctx, d, sy_span(s, bk->last_wait), "the last `tma.store.wait` before the "
                              "overwrite leaves it pending");
                diag_help(s->ctx, d, "wait until that store has read its source: `tma.store.wait %d` before the "
                          "overwrite (then a barrier if other threads write)", newer);
            }
            bk->found = 1;
            break;
        }
    }
}

typedef struct { NodeId role; int any; } HasStore;

static void has_store(SyK *s, NodeId st, void *u)
{
    HasStore *h = u;
    if (sy_node(s, st)->op == OP_TMA_STORE && s->role[st] == h->role)
        h->any = 1;
}

static void simulate_bulk(SyK *s, NodeId role)
{
    HasStore h = {role, 0};
    sy_each_stmt(s, s->k->body, has_store, &h);
    if (!h.any)
        return;
    int64_t first = 0, count;
    if (!sy_role_range(s, role, &first, &count))
        first = 0;
    for (int i = 0, runs = 0; i < SY_NSAMPLES && runs < 2; i++) {
        SyExec x;
        Bulk *bk = arena_alloc(&s->ctx->arena, sizeof *bk);
        bk->s = s;
        sy_exec_init(&x, s, 400000);
        if (!sy_sample_dims(&x, i))
            continue;
        sy_exec_thread(&x, role, first);
        x.role = role;
        x.stmt = bulk_stmt;
        x.u = bk;
        sy_exec(&x, s->k->body);
        runs++;
        if (bk->found)
            return;
        if (bk->npend && !x.unknown && x.budget >= 0) { /* the role ends with stores in flight */
            Pend *p = &bk->pend[bk->npend - 1];
            Diag *d = sy_report(s, E0726, p->at, "%s can end while this `tma.store` still reads shared `%s` (on "
                                "%s): the block's shared memory may be handed to the next block under it",
                                sy_role_name(s, role), ir_symstr(s->ctx, sy_node(s, s->tiles[p->tile])->name),
                                sy_sample_text(&x));
            if (d && role) { /* where the role ends: the wait goes there */
                Span end = sy_span(s, role);
                end.lo = end.hi > end.lo ? end.hi - 1 : end.lo;
                diag_note(s->ctx, d, end, "%s ends here", sy_role_name(s, role));
            }
            if (d)
                diag_help(s->ctx, d, "wait for every bulk store to read its source before the end: "
                          "`tma.store.wait 0` after the last `tma.store`");
            return;
        }
    }
}

void sy_check_proxy(SyK *s)
{
    Proxy *p = arena_alloc(&s->ctx->arena, sizeof *p);
    p->s = s;
    for (int pass = 0; pass < 2; pass++) { /* pass 0 finds escaping writes, pass 1 reports across roles */
        p->report_cross = pass;
        run(p, 0, s->k->body);
        for (uint32_t i = 0; i < s->nroles; i++)
            run(p, s->roles[i], sy_node(s, s->roles[i])->d);
    }
    simulate_bulk(s, 0);
    for (uint32_t i = 0; i < s->nroles; i++)
        simulate_bulk(s, s->roles[i]);
}
