/* sync_cpasync.c — cp.async groups (sm_80 multistage pipelines).
 *
 * The group queue depends on loop counts, so this check runs the schedule:
 * a concrete simulation of one thread of each role that issues cp.async, on
 * sample shapes that satisfy the assumes. It tracks, per shared tile and
 * stage (the first index, when it is the same for every thread), the group of
 * the last cp.async into it; commits; `cp.async.wait N` (all but the N most
 * recent committed groups are complete); and `sync`s (completion becomes
 * visible to the other threads). A read of a stage whose group may be in
 * flight is E0730 (with the `N` that would be right), a read after the wait
 * but before a `sync` is E0731, and a cp.async into a stage that was read
 * since the last `sync` is E0732. */
#include <string.h>
#include "sync.h"

#define MAXSLOT 128

typedef struct {
    int tile;          /* index into SyK.tiles */
    int64_t stage;     /* -1: the whole tile */
    long group;        /* group of the last cp.async into it */
    NodeId write;      /* that cp.async */
    long read_epoch;   /* sync epoch of the last read (-1: none) */
    NodeId read;
} Slot;

typedef struct {
    SyK *s;
    SyExec *x;
    Slot slot[MAXSLOT]; uint32_t nslot;
    long ncommit, done, visible, epoch;
    int open;          /* copies issued since the last commit */
    NodeId last_wait, last_sync;
    int64_t last_wait_n;
    long commit_at_wait;   /* groups committed when the last wait ran */
    int found;
    uint8_t *reads;        /* statement -> 0 not looked at, 1 reads no shared tile, 2 may read one */
} Cp;

static int tile_of(SyK *s, NodeId ref) { return sy_tile_index(s, ref, UINT32_MAX); }

/* the stage a reference selects: its first index when it is thread-uniform */
static int64_t stage_of(Cp *c, NodeId ref)
{
    SyExec *x = c->x;
    NodeId ix = sy_ref_index0(c->s, ref);
    uint8_t saved[SR__COUNT];
    int64_t v;
    if (!ix || sy_node(c->s, ix)->op == OP_SLICE || sy_node(c->s, ix)->op == OP_COLON)
        return -1;
    memcpy(saved, x->has_spec, sizeof saved);
    memset(x->has_spec, 0, sizeof x->has_spec);
    int ok = sy_eval(x, ix, &v);
    memcpy(x->has_spec, saved, sizeof saved);
    return ok ? v : -1;
}

static Slot *slot_at(Cp *c, int tile, int64_t stage)
{
    for (uint32_t i = 0; i < c->nslot; i++)
        if (c->slot[i].tile == tile && c->slot[i].stage == stage)
            return &c->slot[i];
    if (c->nslot == MAXSLOT)
        return NULL;
    Slot *s = &c->slot[c->nslot++];
    memset(s, 0, sizeof *s);
    s->tile = tile;
    s->stage = stage;
    s->group = -1;
    s->read_epoch = -1;
    return s;
}

static const char *stage_text(Cp *c, const Slot *sl)
{
    const char *t = ir_symstr(c->s->ctx, sy_node(c->s, c->s->tiles[sl->tile])->name);
    return sl->stage < 0 ? ir_fmt(c->s->ctx, "`%s`", t) : ir_fmt(c->s->ctx, "stage %lld of `%s`",
                                                                     (long long)sl->stage, t);
}

static void on_read(Cp *c, NodeId st, NodeId ref)
{
    NodeId stmt = st;
    st = ref; /* diagnostics point at the read itself */
    SyK *s = c->s;
    int t = tile_of(s, ref);
    if (t < 0)
        return;
    int64_t stage = stage_of(c, ref);
    for (uint32_t i = 0; i < c->nslot; i++) {
        Slot *sl = &c->slot[i];
        if (sl->tile != t || (stage >= 0 && sl->stage >= 0 && sl->stage != stage))
            continue;
        sl->read_epoch = c->epoch;
        sl->read = stmt;
        if (sl->group < 0 || c->found)
            continue;
        Diag *d = NULL;
        if (sl->group >= c->ncommit) {
            d = sy_report(s, E0730, st, "this reads %s, whose cp.async was never committed to a group: no "
                          "`cp.async.wait` covers it (on %s)", stage_text(c, sl), sy_sample_text(c->x));
            if (d)
                diag_help(s->ctx, d, "close the group with `cp.async.commit` after the copies, then wait for it");
        } else if (sl->group >= c->done && (!c->last_wait || sl->group >= c->commit_at_wait)) {
            d = sy_report(s, E0730, st, "this reads %s, written by cp.async group %ld, but no `cp.async.wait` "
                          "after that group's commit covers it (on %s)", stage_text(c, sl), sl->group,
                          sy_sample_text(c->x));
            NodeId lw = sy_loop_of(s, sl->write);
            while (lw && sy_loop_of(s, lw) && !sy_encloses(s, lw, stmt))
                lw = sy_loop_of(s, lw);
            int refill = d && c->last_wait && sl->group >= c->commit_at_wait && lw && sy_encloses(s, lw, stmt) &&
                         sy_encloses(s, lw, c->last_wait);
            if (refill) /* the copy was issued after this iteration's wait: a refill of the stage being read */
                diag_help(s->ctx, d, "the copy that writes this stage was issued in this iteration, after its "
                          "`cp.async.wait`: a refill of the stage the iteration reads. A refill goes to the "
                          "stage read STAGES - 1 iterations later: check its stage index (a wait here would "
                          "read the refilled data, not this k-tile's)");
            else if (d)
                diag_help(s->ctx, d, "wait for the group (`cp.async.wait N`, then `sync`) between its commit and "
                          "this read");
        } else if (sl->group >= c->done) {
            long need = c->commit_at_wait - 1 - sl->group;
            d = sy_report(s, E0730, st, "this reads %s, written by cp.async group %ld, but only groups before %ld "
                          "are complete: %ld groups were committed at the last wait, which lets %lld stay in flight "
                          "(on %s)", stage_text(c, sl), sl->group, c->done, c->commit_at_wait,
                          (long long)(c->last_wait ? c->last_wait_n : c->ncommit), sy_sample_text(c->x));
            if (d && c->last_wait)
                diag_note(s->ctx, d, sy_span(s, c->last_wait), "this wait is too lax here");
            if (d)
                diag_help(s->ctx, d, "use `cp.async.wait %ld` (then `sync`) before reading this stage", need);
        } else if (sl->group >= c->visible) {
            if (!strcmp(sy_text(s, ref), sy_text(s, sy_node(s, sl->write)->a)))
                continue; /* the thread reads back its own copy */
            d = sy_report(s, E0731, st, "this reads %s, which other threads copied with cp.async; `cp.async.wait` "
                          "only completes this thread's own copies, and no `sync` follows it", stage_text(c, sl));
            if (d && c->last_wait)
                diag_note(s->ctx, d, sy_span(s, c->last_wait), "the wait");
            if (d)
                diag_help(s->ctx, d, "add `sync` after `cp.async.wait` so every thread's copies are visible");
        }
        if (d) {
            diag_note(s->ctx, d, sy_span(s, sl->write), "the cp.async that writes it");
            sy_note_lets(s, d, sy_node(s, sl->write)->a, 2); /* where its stage index is computed */
            c->found = 1;
        }
    }
}

typedef struct { Cp *c; NodeId st; NodeId based[16]; uint32_t nbased; } ReadCx;

static void read_expr(SyK *s, NodeId e, void *u)
{
    ReadCx *r = u;
    Node *n = sy_node(s, e);
    if (n->op == OP_INDEX && sy_node(s, n->a)->op == OP_NAME && sy_is_shared_ref(s, e)) {
        if (r->nbased < 16)
            r->based[r->nbased++] = n->a;
        on_read(r->c, r->st, e);
    } else if (n->op == OP_NAME && sy_is_shared_ref(s, e)) {
        for (uint32_t i = 0; i < r->nbased; i++)
            if (r->based[i] == e)
                return;
        on_read(r->c, r->st, e);
    }
}

static void on_write(Cp *c, NodeId st, NodeId ref)
{
    SyK *s = c->s;
    int t = tile_of(s, ref);
    if (t < 0)
        return;
    int64_t stage = stage_of(c, ref);
    for (uint32_t i = 0; i < c->nslot && !c->found; i++) {
        Slot *sl = &c->slot[i];
        if (sl->tile != t || (stage >= 0 && sl->stage >= 0 && sl->stage != stage) || sl->read_epoch != c->epoch)
            continue;
        Diag *d = sy_report(s, E0732, st, "this cp.async overwrites %s, which was read with no `sync` since: other "
                            "threads may still be reading it (on %s)", stage_text(c, sl), sy_sample_text(c->x));
        if (d) {
            diag_note(s->ctx, d, sy_span(s, sl->read), "the last read of it");
            diag_help(s->ctx, d, "put a `sync` between the last read of a stage and the next cp.async into it (in a "
                      "multistage loop: `cp.async.wait`, `sync` at the top of the iteration, then compute, then "
                      "issue the next stage)");
            c->found = 1;
        }
    }
    Slot *sl = slot_at(c, t, stage);
    if (stage < 0) /* a whole-tile write replaces every stage */
        for (uint32_t i = 0; i < c->nslot; i++)
            if (c->slot[i].tile == t && c->slot[i].stage >= 0)
                c->slot[i].group = -1;
    if (sl) {
        sl->group = c->ncommit;
        sl->write = st;
    }
    c->open = 1;
}

/* is e a read of a shared tile, as read_expr sees one (whether or not it is a
 * plain name inside an indexed one) */
static void any_read(SyK *s, NodeId e, void *u)
{
    Node *n = sy_node(s, e);
    if ((n->op == OP_INDEX && sy_node(s, n->a)->op == OP_NAME && sy_is_shared_ref(s, e)) ||
        (n->op == OP_NAME && sy_is_shared_ref(s, e)))
        *(int *)u = 1;
}

/* fn over the expressions of statement st that read (not its store target) */
static void each_read(SyK *s, NodeId st, void (*fn)(SyK *, NodeId, void *), void *u)
{
    Node *n = sy_node(s, st);
    NodeId target = (n->op == OP_STORE || n->op == OP_ASSIGN || n->op == OP_STMATRIX) ? n->a : 0;
    if (n->op == OP_IF) {
        sy_each_expr(s, n->a, fn, u);
        return;
    }
    if (n->op == OP_FOR)
        return;
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        if (kids[i] && kids[i] != target)
            sy_each_expr(s, kids[i], fn, u);
    for (uint32_t i = 0; i < n->n; i++)
        sy_each_expr(s, ir_list_at(s->k, n, i), fn, u);
}

static void cp_stmt(SyExec *x, NodeId st)
{
    Cp *c = x->u;
    SyK *s = c->s;
    Node *n = sy_node(s, st);
    int64_t v;
    switch (n->op) {
    case OP_CP_ASYNC:
        if (sy_is_shared_ref(s, n->a))
            on_write(c, st, n->a);
        return;
    case OP_CP_COMMIT:
        c->ncommit++;
        c->open = 0;
        return;
    case OP_CP_WAIT:
        if (!sy_eval(x, n->a, &v) || v < 0)
            v = 0;
        if (c->ncommit - v > c->done)
            c->done = c->ncommit - v;
        c->last_wait = st;
        c->last_wait_n = v;
        c->commit_at_wait = c->ncommit;
        return;
    case OP_SYNC: case OP_BAR_SYNC:
        c->visible = c->done;
        c->epoch++;
        c->last_sync = st;
        return;
    default: break;
    }
    if (c->reads && st < s->k->nnodes && !c->reads[st]) { /* static: looked at once per role */
        int any = 0;
        each_read(s, st, any_read, &any);
        c->reads[st] = any ? 2 : 1;
    }
    if (c->reads && st < s->k->nnodes && c->reads[st] == 1)
        return;
    ReadCx r = {.c = c, .st = st};
    each_read(s, st, read_expr, &r);
}

typedef struct { NodeId role; int any; } HasCp;

static void has_cp(SyK *s, NodeId st, void *u)
{
    HasCp *h = u;
    if (sy_node(s, st)->op == OP_CP_ASYNC && s->role[st] == h->role)
        h->any = 1;
}

static void simulate(SyK *s, NodeId role)
{
    HasCp h = {role, 0};
    sy_each_stmt(s, s->k->body, has_cp, &h);
    if (!h.any)
        return;
    int64_t first = 0, count;
    if (!sy_role_range(s, role, &first, &count))
        first = 0;
    int runs = 0;
    uint8_t *reads = arena_alloc(&s->ctx->arena, s->k->nnodes);
    for (int i = 0; i < SY_NSAMPLES && runs < 3; i++) {
        SyExec x;
        Cp *c = arena_alloc(&s->ctx->arena, sizeof *c);
        c->reads = reads;
        sy_exec_init(&x, s, 400000);
        if (!sy_sample_dims(&x, i))
            continue;
        sy_exec_thread(&x, role, first);
        c->s = s;
        c->x = &x;
        x.role = role;
        x.stmt = cp_stmt;
        x.u = c;
        sy_exec(&x, s->k->body);
        runs++;
        if (c->found)
            return;
    }
}

void sy_check_cpasync(SyK *s)
{
    simulate(s, 0);
    for (uint32_t i = 0; i < s->nroles; i++)
        simulate(s, s->roles[i]);
}
