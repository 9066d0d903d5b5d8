/* sync_named.c — named-barrier protocols, simulated warp by warp.
 *
 * Each warp of the block runs its role's statements with the concrete
 * interpreter (sync_exec.c) at a sample shape, one representative thread per
 * warp (E0750 makes barriers warp-uniform), and records the barrier
 * statements it reaches with their ids and counts (which may depend on `wg`
 * or `warp`: `barrier 1 + wg, 128`). A scheduler then runs the warps against
 * the hardware's rule: `barrier ID, N` arrives with the warp's threads and
 * waits until N threads have arrived at ID in this phase; `barrier.arrive ID,
 * N` arrives without waiting; the phase completes at N arrivals and the
 * barrier starts the next. Found:
 *   E0751 a phase whose arrivals use different counts; a wait that never
 *         opens (deadlock: the arrivals that reach it, and who waits);
 *   E0754 a phase that completes with nobody waiting on it: every arrival is a
 *         `barrier.arrive`, so the turn it hands over is never taken (a missing
 *         `barrier` in a ping-pong).
 * A correct turn-taking between two warpgroups (FA3 ping-pong: each waits on
 * its own barrier, count 256, and arrives on the other's) passes whatever the
 * order of the warps. When the simulation decides (every warp's control
 * evaluated), sync_diverge.c's static count check of E0751 stands down
 * (SyK.named_decided); the help of a count error is re-simulated with the
 * proposed count before it is shown. */
#include <string.h>
#include "sync.h"

#define MAX_WARPS 64
#define MAX_EVENTS 4096
#define MAX_IDS 16

typedef struct { NodeId st; int16_t id; uint8_t wait; int64_t count; } Ev;

typedef struct {
    SyK *s;
    uint32_t nw;
    Ev *ev[MAX_WARPS]; uint32_t nev[MAX_WARPS];
    NodeId role[MAX_WARPS];
    int bad;                     /* a warp's control or a barrier did not evaluate */
    uint32_t cur;                /* the warp being recorded */
} Named;

typedef struct {
    int64_t arrived, count;
    uint32_t waiters; uint64_t waitmask; /* warps blocked in this phase */
    NodeId first;                /* the first arrival of this phase */
    NodeId last_arrive;
    NodeId arr[4]; uint32_t narr; /* the distinct statements that arrived in this phase */
    int has_wait;
} Bar;

typedef struct {
    DiagCode code;               /* 0: the protocol runs through */
    NodeId at;
    int kind;                    /* 1 count mismatch, 2 deadlock, 4 no waiter */
    int64_t id, count, arrived, other;
    uint64_t waitmask;
    NodeId first;                /* count mismatch: the phase's first arrival */
    NodeId arr[4]; uint32_t narr; /* deadlock: the statements that arrived in the stuck phase */
} Verdict;

static void record(SyExec *x, NodeId st)
{
    Named *nm = x->u;
    const Node *n = sy_node(sy_xk(x), st);
    if (n->op != OP_BAR_SYNC && n->op != OP_BAR_ARRIVE)
        return;
    int64_t id, count;
    uint32_t w = nm->cur;
    if (!sy_eval(x, n->a, &id) || !sy_eval(x, n->b, &count) || id < 0 || id >= MAX_IDS || count <= 0 ||
        count % sy_xk(x)->warp || nm->nev[w] == MAX_EVENTS) {
        nm->bad = 1;
        return;
    }
    nm->ev[w][nm->nev[w]++] = (Ev){st, (int16_t)id, n->op == OP_BAR_SYNC, count};
}

static NodeId role_of_thread(SyK *s, int64_t t)
{
    for (uint32_t r = 0; r < s->nroles; r++) {
        int64_t first, count;
        if (sy_role_range(s, s->roles[r], &first, &count) && t >= first && t < first + count)
            return s->roles[r];
    }
    return 0;
}

/* every warp's barrier events at the first sample shape that satisfies the assumes */
static int record_all(Named *nm)
{
    SyK *s = nm->s;
    int sample = -1;
    for (int i = 0; i < SY_NSAMPLES && sample < 0; i++) {
        SyExec x;
        sy_exec_init(&x, s, 0);
        if (sy_sample_dims(&x, i))
            sample = i;
    }
    if (sample < 0)
        return 0;
    for (uint32_t w = 0; w < nm->nw && !nm->bad; w++) {
        SyExec x;
        sy_exec_init(&x, s, 200000);
        sy_sample_dims(&x, sample);
        nm->role[w] = role_of_thread(s, (int64_t)w * s->warp);
        sy_exec_thread(&x, nm->role[w], (int64_t)w * s->warp);
        x.role = nm->role[w];
        x.stmt = record;
        x.u = nm;
        nm->cur = w;
        nm->ev[w] = arena_alloc(&s->ctx->arena, MAX_EVENTS * sizeof(Ev));
        sy_exec(&x, s->k->body);
        if (x.unknown || x.budget < 0)
            nm->bad = 1;
    }
    return !nm->bad;
}

/* runs the warps, lowest first (or highest first: rev), until all finish or
 * none can move; the barrier statement `ost` counts `ocount` instead (a help's
 * edit; 0: none) */
static void simulate(const Named *nm, int rev, NodeId ost, int64_t ocount, Verdict *v)
{
    Bar bar[MAX_IDS];
    uint32_t pos[MAX_WARPS] = {0};
    int blocked[MAX_WARPS];
    memset(bar, 0, sizeof bar);
    memset(v, 0, sizeof *v);
    for (uint32_t w = 0; w < nm->nw; w++)
        blocked[w] = -1;
    int64_t warp = nm->s->warp;
    for (int progress = 1; progress;) {
        progress = 0;
        for (uint32_t i = 0; i < nm->nw; i++) {
            uint32_t w = rev ? nm->nw - 1 - i : i;
            while (blocked[w] < 0 && pos[w] < nm->nev[w]) {
                const Ev *e = &nm->ev[w][pos[w]++];
                Bar *b = &bar[e->id];
                int64_t count = ost && e->st == ost ? ocount : e->count;
                progress = 1;
                if (!b->arrived) {
                    b->count = count;
                    b->first = e->st;
                } else if (b->count != count) {
                    *v = (Verdict){E0751, e->st, 1, e->id, count, b->arrived, b->count, 0, b->first, {0}, 0};
                    return;
                }
                b->arrived += warp;
                uint32_t k = 0;
                while (k < b->narr && b->arr[k] != e->st)
                    k++;
                if (k == b->narr && b->narr < 4)
                    b->arr[b->narr++] = e->st;
                if (e->wait) {
                    b->has_wait = 1;
                    b->waiters++;
                    b->waitmask |= (uint64_t)1 << w;
                    blocked[w] = e->id;
                } else {
                    b->last_arrive = e->st;
                }
                if (b->arrived < b->count)
                    continue;
                if (!b->has_wait) {
                    *v = (Verdict){E0754, b->last_arrive, 4, e->id, b->count, b->arrived, 0, 0, 0, {0}, 0};
                    return;
                }
                for (uint32_t u = 0; u < nm->nw; u++)
                    if (b->waitmask >> u & 1)
                        blocked[u] = -1;
                memset(b, 0, sizeof *b);
            }
        }
    }
    for (int id = 0; id < MAX_IDS; id++) {
        Bar *b = &bar[id];
        if (b->waiters) {
            NodeId at = 0;
            for (uint32_t w = 0; w < nm->nw && !at; w++)
                if (b->waitmask >> w & 1)
                    at = nm->ev[w][pos[w] - 1].st;
            *v = (Verdict){E0751, at, 2, id, b->count, b->arrived, 0, b->waitmask, 0, {0}, b->narr};
            memcpy(v->arr, b->arr, sizeof v->arr);
            return;
        }
        /* arrivals left over when the block exits are harmless (a ping-pong's last
           hand-over; a persistent kernel carries the turn to its next tile) */
    }
}

/* "warps 4..7 (role `mma`)" for the warps of mask */
static const char *warps_text(const Named *nm, uint64_t mask)
{
    const char *t = "";
    uint32_t w = 0;
    while (w < nm->nw) {
        if (!(mask >> w & 1)) {
            w++;
            continue;
        }
        uint32_t e = w;
        while (e + 1 < nm->nw && (mask >> (e + 1) & 1) && nm->role[e + 1] == nm->role[w])
            e++;
        t = ir_fmt(nm->s->ctx, "%s%s%s %u%s%.0u (%s)", t, *t ? ", " : "", e > w ? "warps" : "warp", w,
                   e > w ? ".." : "", e > w ? e : 0, sy_role_name(nm->s, nm->role[w]));
        w = e + 1;
    }
    return t;
}

/* 1 when every order of the warps tried runs through with statement st counting count */
static int fixed_by(const Named *nm, NodeId st, int64_t count)
{
    Verdict a, b;
    simulate(nm, 0, st, count, &a);
    simulate(nm, 1, st, count, &b);
    return !a.code && !b.code;
}

/* a deadlock: every other barrier statement some warp reaches with the stuck id
 * (the arrival that should open it may be there, under another id or count) */
static void note_other_uses(const Named *nm, const Verdict *v, Diag *d)
{
    NodeId seen[8];
    uint32_t ns = 0;
    for (uint32_t w = 0; w < nm->nw; w++)
        for (uint32_t i = 0; i < nm->nev[w] && ns < 8; i++) {
            const Ev *e = &nm->ev[w][i];
            int dup = e->st == v->at;
            for (uint32_t k = 0; k < v->narr; k++)
                dup |= v->arr[k] == e->st;
            for (uint32_t k = 0; k < ns; k++)
                dup |= seen[k] == e->st;
            if (dup || e->id != v->id)
                continue;
            seen[ns++] = e->st;
            diag_note(nm->s->ctx, d, sy_span(nm->s, e->st), "%s also reaches barrier %lld (warp %u, %s)",
                      e->wait ? "this wait" : "this arrival", (long long)v->id, w, sy_role_name(nm->s, nm->role[w]));
        }
}

/* how many barrier events on id use count */
static uint32_t tally(const Named *nm, int64_t id, int64_t count)
{
    uint32_t n = 0;
    for (uint32_t w = 0; w < nm->nw; w++)
        for (uint32_t i = 0; i < nm->nev[w]; i++)
            n += nm->ev[w][i].id == id && nm->ev[w][i].count == count;
    return n;
}

static void report(const Named *nm, const Verdict *vin)
{
    SyK *s = nm->s;
    Verdict sw = *vin;
    const Verdict *v = vin;
    int swapped = 0;
    if (v->kind == 1 && v->first && tally(nm, v->id, v->count) > tally(nm, v->id, v->other)) {
        /* the phase's first arrival is the odd one (its count the minority on this id): report it there */
        sw.at = vin->first;
        sw.first = vin->at;
        sw.count = vin->other;
        sw.other = vin->count;
        v = &sw;
        swapped = 1;
    }
    const Node *n = sy_node(s, v->at);
    NodeId at = v->kind == 4 ? v->at : n->b;
    Diag *d = NULL;
    switch (v->kind) {
    case 1:
        d = swapped ? sy_report(s, E0751, at, "named barrier %lld is given count %lld here, but the other arrivals "
                                "of its phase count %lld: every arrival of a phase must use one count",
                                (long long)v->id, (long long)v->count, (long long)v->other)
                    : sy_report(s, E0751, at, "named barrier %lld is given count %lld here, but %lld threads already "
                                "arrived in this phase with count %lld: every arrival of a phase must use one count",
                                (long long)v->id, (long long)v->count, (long long)v->arrived, (long long)v->other);
        break;
    case 2:
        d = sy_report(s, E0751, at, "named barrier %lld waits for %lld threads, but only %lld arrive in this "
                      "phase: it never opens (deadlock); waiting: %s", (long long)v->id, (long long)v->count,
                      (long long)v->arrived, warps_text(nm, v->waitmask));
        break;
    default:
        d = sy_report(s, E0754, at, "named barrier %lld completes a phase (%lld arrivals) with no thread "
                      "waiting on it: the turn this `barrier.arrive` hands over is never taken (a `barrier %lld, "
                      "%lld` is missing on the side that should wait)", (long long)v->id, (long long)v->arrived,
                      (long long)v->id, (long long)v->count);
        break;
    }
    if (!d)
        return;
    diag_note(s->ctx, d, IR_NOSPAN, "simulated warp by warp at the sample shape, ids and counts evaluated per warp");
    if (v->kind == 1 && v->first && v->first != v->at)
        diag_note(s->ctx, d, sy_span(s, sy_node(s, v->first)->b), swapped ? "an arrival of the same phase, with "
                  "count %lld" : "the phase's first arrival, with count %lld", (long long)v->other);
    for (uint32_t i = 0; v->kind == 2 && i < v->narr; i++)
        if (v->arr[i] != v->at)
            diag_note(s->ctx, d, sy_span(s, v->arr[i]), "an arrival of the phase that never opens");
    if (v->kind == 2)
        note_other_uses(nm, v, d);
    int64_t want = v->kind == 2 ? v->arrived : v->kind == 1 ? v->other : 0;
    if (want && fixed_by(nm, v->at, want)) { /* the edit, simulated: it runs through */
        diag_help(s->ctx, d, "count the threads that take part: `%s %s, %lld`", ir_ops[n->op].spelling,
                  sy_text(s, n->a), (long long)want);
        diag_fixit(s->ctx, d, sy_span(s, n->b), ir_fmt(s->ctx, "%lld", (long long)want));
    }
    else if (v->kind == 1 && v->first) {
        uint32_t line, col, el, ec;
        span_linecol(s->ctx, sy_span(s, v->first), &line, &col, &el, &ec);
        diag_help(s->ctx, d, "barrier %lld is also used with count %lld (line %u), and that count here does not "
                  "run through either: if this barrier orders another set of threads, give it an id no other "
                  "barrier uses", (long long)v->id, (long long)v->other, line);
    }
    else if (v->kind == 4) {
        /* the wait as the kernel writes it elsewhere (`barrier 1 + wg, 256`): a literal id would be one
           warpgroup's in code both run */
        const Ev *w = NULL;
        for (uint32_t u = 0; u < nm->nw && !w; u++)
            for (uint32_t i = 0; i < nm->nev[u] && !w; i++)
                if (nm->ev[u][i].wait && nm->ev[u][i].id == v->id)
                    w = &nm->ev[u][i];
        if (w) {
            const Node *wn = sy_node(s, w->st);
            uint32_t line, col, el, ec;
            span_linecol(s->ctx, sy_span(s, w->st), &line, &col, &el, &ec);
            diag_help(s->ctx, d, "the side that takes the turn waits on the barrier the other side arrives on: "
                      "`barrier %s, %s` (as at line %u) before its turn", sy_text(s, wn->a), sy_text(s, wn->b), line);
        } else {
            diag_help(s->ctx, d, "the side that takes the turn waits on the barrier the other side arrives on: "
                      "`barrier %lld, %lld` before its turn", (long long)v->id, (long long)v->count);
        }
    }
}

/* A phase of `barrier ID, N` completes with the first N threads to arrive:
 * when more warps than N / 32 reach one id, which of them form a phase is
 * decided by timing, not by the program (two warpgroups' `barrier 3, 128`
 * mix: the phase can complete with warps of both, and a store after it may
 * read what the other half of its own warpgroup has not written yet). */
static int mixed_phases(const Named *nm)
{
    SyK *s = nm->s;
    for (int id = 0; id < MAX_IDS; id++) {
        uint64_t warps = 0;
        int64_t count = 0;
        NodeId at[4];
        uint32_t nat = 0;
        for (uint32_t w = 0; w < nm->nw; w++)
            for (uint32_t i = 0; i < nm->nev[w]; i++) {
                const Ev *e = &nm->ev[w][i];
                if (e->id != id)
                    continue;
                warps |= (uint64_t)1 << w;
                count = count ? count : e->count;
                uint32_t k = 0;
                while (k < nat && at[k] != e->st)
                    k++;
                if (k == nat && nat < 4)
                    at[nat++] = e->st;
            }
        int64_t n = __builtin_popcountll(warps) * s->warp;
        if (!count || n <= count)
            continue;
        Diag *d = sy_report(s, E0751, sy_node(s, at[nat - 1])->a, "named barrier %d takes %lld threads a phase, "
                            "but %lld reach it (%s): which of them form a phase is decided by timing, so it "
                            "orders no particular set of threads", id, (long long)count, (long long)n,
                            warps_text(nm, warps));
        if (!d)
            return 1;
        for (uint32_t k = 0; k < nat; k++)
            diag_note(s->ctx, d, sy_span(s, at[k]), "reaches barrier %d", id);
        diag_help(s->ctx, d, "give each group of %lld threads its own barrier id (as `barrier 3 + wg, 128` per "
                  "warpgroup), or count every thread that reaches it", (long long)count);
        return 1;
    }
    return 0;
}

void sy_check_named(SyK *s)
{
    s->named_decided = 0;
    if (!s->block_threads || s->block_threads / s->warp > MAX_WARPS)
        return;
    Named *nm = arena_alloc(&s->ctx->arena, sizeof *nm);
    memset(nm, 0, sizeof *nm);
    nm->s = s;
    nm->nw = (uint32_t)(s->block_threads / s->warp);
    int any = 0;
    for (NodeId st = 1; st < s->k->nnodes && !any; st++)
        any = s->pos[st] && (sy_node(s, st)->op == OP_BAR_SYNC || sy_node(s, st)->op == OP_BAR_ARRIVE);
    if (!any || !record_all(nm))
        return;
    s->named_decided = 1;
    Verdict v;
    simulate(nm, 0, 0, 0, &v);
    if (!v.code)
        simulate(nm, 1, 0, 0, &v);
    if (v.code)
        report(nm, &v);
    else
        mixed_phases(nm);
}
