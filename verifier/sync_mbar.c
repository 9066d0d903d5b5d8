/* sync_mbar.c — explicit mbarriers (`mbarrier bar[N] count C`).
 *
 * Sites are gathered per barrier: arrivals (`mbarrier.arrive`, and
 * `mbarrier.expect_tx`, which arrives once and announces bytes), waits and the
 * TMA loads that complete on it. Checks: arrivals per phase vs the declared
 * count, counted per thread under thread-index guards (E0710); a wait nobody
 * arrives for (E0711) or that precedes every arrival in its own role (E0713);
 * a parity that does not alternate with the barrier's reuse, in one loop or over
 * a loop nest such as a persistent kernel's tile loop (E0712), or outside
 * loops, where the n-th wait must wait on parity n % 2 (E0765); expect_tx
 * bytes vs the TMA loads of the same iteration (E0707) and TMA loads on a
 * barrier no expect_tx announces (E0714). */
#include <string.h>
#include "sync.h"

#define MAXSITE 64

typedef struct {
    NodeId decl;
    NodeId arr[MAXSITE]; uint32_t narr;   /* MB_ARRIVE and MB_EXPECT statements */
    NodeId wait[MAXSITE]; uint32_t nwait;
    NodeId tma[MAXSITE]; uint32_t ntma;
    NodeId exp[MAXSITE]; uint32_t nexp;
} Bar;

typedef struct { Bar *bars; uint32_t n; } Bars;

static NodeId bar_expr(SyK *s, NodeId st)
{
    Node *n = sy_node(s, st);
    switch (n->op) {
    case OP_MB_ARRIVE: case OP_MB_EXPECT: case OP_MB_WAIT: return n->a;
    case OP_TMA_LOAD: return n->c;
    default: return 0;
    }
}

static void push(NodeId *arr, uint32_t *n, NodeId id)
{
    if (*n < MAXSITE)
        arr[(*n)++] = id;
}

static void gather(SyK *s, NodeId st, void *u)
{
    Bars *b = u;
    NodeId e = bar_expr(s, st), d = e ? sy_ref_decl(s, e) : 0;
    for (uint32_t i = 0; d && i < b->n; i++) {
        Bar *r = &b->bars[i];
        if (r->decl != d)
            continue;
        switch (sy_node(s, st)->op) {
        case OP_MB_ARRIVE: push(r->arr, &r->narr, st); break;
        case OP_MB_EXPECT: push(r->arr, &r->narr, st); push(r->exp, &r->nexp, st); break;
        case OP_MB_WAIT: push(r->wait, &r->nwait, st); break;
        case OP_TMA_LOAD: push(r->tma, &r->ntma, st); break;
        default: break;
        }
    }
}

static const char *bname(SyK *s, Bar *b) { return ir_symstr(s->ctx, sy_node(s, b->decl)->name); }

/* the index of a barrier reference as source text ("" for a whole barrier) */
static const char *index_key(SyK *s, NodeId e)
{
    NodeId ix = sy_ref_index0(s, e);
    if (!ix)
        return "";
    char *t = (char *)sy_text(s, ix), *w = t;
    for (char *r = t; *r; r++)
        if (*r != ' ' && *r != '\t')
            *w++ = *r;
    *w = 0;
    return t;
}

/* ---- arrival counts (E0710) ------------------------------------------------ */

static void check_count(SyK *s, Bar *b)
{
    int64_t count;
    if (!b->narr || !sy_const(s, sy_node(s, b->decl)->b, &count))
        return;
    int64_t per_site[MAXSITE];
    for (uint32_t i = 0; i < b->narr; i++) {
        int exact;
        per_site[i] = sy_threads_at(s, b->arr[i], &exact);
        if (!exact || per_site[i] <= 0)
            return;
        NodeId ix = sy_ref_index0(s, bar_expr(s, b->arr[i]));
        int64_t c;
        if (ix && sy_const(s, ix, &c))
            return; /* element-wise protocols: left to the simulator */
    }
    /* per role: sum the sites of one loop context, take the largest context */
    int64_t total = 0, best_site = 0;
    NodeId best = 0;
    for (uint32_t i = 0; i < b->narr; i++) {
        int first_of_role = 1;
        for (uint32_t j = 0; j < i; j++)
            if (s->role[b->arr[j]] == s->role[b->arr[i]])
                first_of_role = 0;
        if (!first_of_role)
            continue;
        int64_t role_max = 0;
        for (uint32_t j = i; j < b->narr; j++) {
            if (s->role[b->arr[j]] != s->role[b->arr[i]])
                continue;
            int64_t ctx = 0;
            for (uint32_t h = i; h < b->narr; h++)
                if (s->role[b->arr[h]] == s->role[b->arr[i]] &&
                    sy_loop_of(s, b->arr[h]) == sy_loop_of(s, b->arr[j]))
                    ctx += per_site[h];
            if (ctx > role_max)
                role_max = ctx;
        }
        total += role_max;
    }
    for (uint32_t i = 0; i < b->narr; i++)
        if (per_site[i] > best_site) {
            best_site = per_site[i];
            best = b->arr[i];
        }
    if (total == count)
        return;
    Diag *d;
    if (total > count)
        d = sy_report(s, E0710, best, "%lld threads arrive on `%s` per phase, but it is declared with count %lld: "
                      "the extra arrivals complete phases early", (long long)total, bname(s, b), (long long)count);
    else
        d = sy_report(s, E0710, sy_node(s, b->decl)->b, "`%s` waits for %lld arrivals per phase, but only %lld "
                      "arrive%s: its phase never completes (deadlock)", bname(s, b), (long long)count,
                      (long long)total, total == 1 ? "s" : "");
    if (!d)
        return;
    diag_note(s->ctx, d, sy_span(s, b->decl), "`%s` is declared with count %lld here", bname(s, b), (long long)count);
    for (uint32_t i = 0; i < b->narr; i++)
        diag_note(s->ctx, d, sy_span(s, b->arr[i]), "%lld thread%s of %s arrive%s here", (long long)per_site[i],
                  per_site[i] == 1 ? "" : "s", sy_role_name(s, s->role[b->arr[i]]), per_site[i] == 1 ? "s" : "");
    if (total > count && best_site > 1)
        diag_help(s->ctx, d, "let one thread arrive (`if thread.x %% %lld == 0 { ... }`) or declare `count %lld`",
                  (long long)best_site, (long long)total);
    else
        diag_help(s->ctx, d, "declare `count %lld`, or make %lld threads arrive per phase", (long long)total,
                  (long long)count);
}

/* ---- waits (E0711, E0713) ----------------------------------------------------- */

static void check_waits(SyK *s, Bar *b)
{
    if (!b->nwait)
        return;
    if (!b->narr) {
        NodeId w = b->wait[0];
        Diag *d = sy_report(s, E0711, w, "nobody arrives on `%s`: this wait never returns (deadlock)", bname(s, b));
        if (!d)
            return;
        diag_note(s->ctx, d, sy_span(s, b->decl), "`%s` is declared here", bname(s, b));
        if (b->ntma)
            diag_note(s->ctx, d, sy_span(s, b->tma[0]), "this TMA load completes bytes on `%s`, but a phase also "
                      "needs its arrivals", bname(s, b));
        diag_help(s->ctx, d, "arrive on it: `mbarrier.expect_tx %s, BYTES` from one thread before the TMA loads, or "
                  "`mbarrier.arrive %s`", sy_text(s, bar_expr(s, w)), sy_text(s, bar_expr(s, w)));
        return;
    }
    for (uint32_t i = 0; i < b->nwait; i++) {
        NodeId w = b->wait[i], role = s->role[w], before = 0, after = 0;
        int other = 0, guarded = 0;
        for (uint32_t j = 0; j < b->narr; j++) {
            NodeId a = b->arr[j];
            if (s->role[a] != role)
                other = 1;
            else if (s->pos[a] < s->pos[w])
                before = a;
            else if (!after)
                after = a;
        }
        for (NodeId u = s->up[w]; u && u != role; u = s->up[u])
            if (sy_node(s, u)->op == OP_IF)
                guarded = 1;
        if (other || before || !after || guarded)
            continue;
        Diag *d = sy_report(s, E0713, w, "`%s` is waited on before anyone arrives on it: the only arrivals come later "
                            "in %s, which never gets there (deadlock)", bname(s, b), sy_role_name(s, role));
        if (d) {
            diag_note(s->ctx, d, sy_span(s, after), "the first arrival is here, after the wait");
            diag_help(s->ctx, d, "arrive (and issue the TMA loads) before waiting, or let another role arrive");
        }
    }
}

/* ---- parity (E0712) ----------------------------------------------------------- */

typedef struct { NodeId loop; int found; } Varies;

static void varies_expr(SyK *s, NodeId e, void *u)
{
    Varies *v = u;
    NodeId d = sy_decl(s, e);
    if (!d)
        return;
    Node *dn = sy_node(s, d);
    if (dn->op == OP_VAR || (dn->op == OP_FOR && sy_encloses(s, d, v->loop) ) || d == v->loop)
        v->found = 1;
    else if (dn->op == OP_LET && dn->b && sy_token_kind(s, d) == OP_NONE)
        sy_each_expr(s, dn->b, varies_expr, u);
}

static int loop_trips_le1(SyK *s, NodeId loop)
{
    int64_t lo, hi;
    Node *n = sy_node(s, loop);
    return sy_const(s, n->a, &lo) && sy_const(s, n->b, &hi) && hi - lo <= 1 && !n->c;
}

static int any_in_loop(SyK *s, Bar *b)
{
    for (uint32_t i = 0; i < b->narr; i++)
        if (sy_loop_of(s, b->arr[i]))
            return 1;
    for (uint32_t i = 0; i < b->ntma; i++)
        if (sy_loop_of(s, b->tma[i]))
            return 1;
    return 0;
}

static const char *parity_help(SyK *s, Bar *b, NodeId w, NodeId loop)
{
    const char *k = ir_symstr(s->ctx, sy_node(s, loop)->name);
    const char *n = sy_node(s, b->decl)->a ? sy_text(s, sy_node(s, b->decl)->a) : NULL;
    NodeId ix = sy_ref_index0(s, bar_expr(s, w));
    if (n && ix && !sy_const(s, ix, &(int64_t){0}))
        return ir_fmt(s->ctx, "the parity must alternate with each reuse of an element: use `(%s / %s) %% 2` "
                      "when the element is `%s %% %s`", k, n, k, n);
    return ir_fmt(s->ctx, "the parity must alternate with each reuse: use `%s %% 2` (or keep a `var phase` and "
                  "flip it after each wait)", k);
}

/* ---- parity over a loop nest: a tile loop around the k loop ---------------- */

#define NEST_WAITS 4096      /* waits simulated per sample */
#define NEST_BUDGET 200000   /* statements executed per sample */

typedef struct {
    NodeId w, ix, par;
    int64_t nelem;
    int uses[64];
    long seen;
    NodeId outer;            /* the loop around the wait's loop */
    int64_t outer_first;     /* its value at the first wait */
    int bad;                 /* 1: the wait below disagrees with the barrier's phase */
    int crossed;             /* ... in a later iteration of `outer` than the first wait */
    int64_t e, p;
    const char *where;       /* "t = 1, k = 0" at the bad wait */
} Nest;

/* the loop variables around st and their values, innermost last */
static const char *loop_values(SyExec *x, NodeId st)
{
    SyK *s = sy_xk(x);
    const char *out = "";
    for (NodeId l = sy_loop_of(s, st); l; l = sy_loop_of(s, l))
        if (x->has[l])
            out = ir_fmt(s->ctx, "%s = %lld%s%s", ir_symstr(s->ctx, sy_node(s, l)->name), (long long)x->val[l],
                         *out ? ", " : "", out);
    return out;
}

static void nest_stmt(SyExec *x, NodeId st)
{
    Nest *n = x->u;
    int64_t e = 0, p;
    if (st != n->w)
        return;
    if ((n->ix && !sy_eval(x, n->ix, &e)) || !sy_eval(x, n->par, &p) || e < 0 || e >= n->nelem) {
        x->stopped = 1;
        return;
    }
    if (!n->seen)
        n->outer_first = x->val[n->outer];
    if ((p & 1) != (n->uses[e] & 1)) {
        n->bad = 1;
        n->crossed = x->val[n->outer] != n->outer_first;
        n->e = e;
        n->p = p;
        n->where = loop_values(x, st);
        x->stopped = 1;
        return;
    }
    n->uses[e]++;
    if (++n->seen >= NEST_WAITS)
        x->stopped = 1;
}

/* Runs the wait's role on block 0 for each sample shape: every execution of
 * wait w is one phase of its element, so its parity must be the element's use
 * count mod 2. This sees what the one-loop simulation below cannot: a parity
 * `k % 2` that restarts with each tile of a persistent loop when the k loop
 * runs an odd number of times. Returns 1 when it reported. */
static int simulate_parity_nest(SyK *s, Bar *b, NodeId w, NodeId loop, int64_t nelem)
{
    NodeId role = s->role[w];
    int64_t first, count;
    if (!sy_role_range(s, role, &first, &count))
        return 0;
    for (int i = 0; i < SY_NSAMPLES; i++) {
        Nest n;
        memset(&n, 0, sizeof n);
        n.w = w;
        n.ix = sy_ref_index0(s, bar_expr(s, w));
        n.par = sy_node(s, w)->b;
        n.nelem = nelem;
        n.outer = sy_loop_of(s, loop);
        SyExec x;
        sy_exec_init(&x, s, NEST_BUDGET);
        if (!sy_sample_dims(&x, i))
            continue;
        sy_exec_thread(&x, role, first);
        x.role = role;
        x.stmt = nest_stmt;
        x.u = &n;
        sy_exec(&x, s->k->body);
        if (!n.bad)
            continue;
        Diag *d = sy_report(s, E0712, n.par, "at %s this waits on parity %lld, but `%s` is then in its phase %d "
                            "(parity %d): the wait %s (for %s)", n.where, (long long)n.p, sy_text(s, bar_expr(s, w)),
                            n.uses[n.e], n.uses[n.e] & 1,
                            (n.p & 1) ? "blocks for a phase that has not begun (deadlock)"
                                      : "returns at once on an old phase (a race)", sy_sample_text(&x));
        if (d && n.crossed) {
            diag_note(s->ctx, d, sy_span(s, n.outer), "the barrier's phases carry on across the iterations of "
                      "this loop");
            diag_help(s->ctx, d, "count the uses over the whole loop nest: keep a `var phase: i32 = 0` outside "
                      "the outer loop and flip it after each wait (`phase = phase ~ 1`)");
        } else if (d) {
            diag_note(s->ctx, d, sy_span(s, loop), "the barrier is reused on each iteration of this loop");
            diag_help(s->ctx, d, "%s", parity_help(s, b, w, loop));
        }
        return 1;
    }
    return 0;
}

/* simulates the first iterations of `loop`: element and parity of each wait;
 * 1 when it reported */
static int simulate_parity(SyK *s, Bar *b, NodeId w, NodeId loop)
{
    Node *l = sy_node(s, loop);
    NodeId bar = bar_expr(s, w), ix = sy_ref_index0(s, bar), par = sy_node(s, w)->b;
    int64_t lo, hi, step = 1, nelem = 1;
    if (sy_node(s, b->decl)->a && !sy_const(s, sy_node(s, b->decl)->a, &nelem))
        return 0;
    if (nelem <= 0 || nelem > 64)
        return 0;
    SyExec x;
    sy_exec_init(&x, s, 0);
    if (!sy_sample_dims(&x, 0) || !sy_eval(&x, l->a, &lo) || (l->c && !sy_eval(&x, l->c, &step)) || step <= 0)
        return 0;
    if (!sy_const(s, l->b, &hi) && /* a dynamic loop: check the pattern, whatever the trip count */
        (__builtin_mul_overflow(step, 64, &hi) || __builtin_add_overflow(lo, hi, &hi)))
        hi = INT64_MAX;
    int uses[64] = {0};
    for (int64_t k = lo, it = 0; k < hi && it < 4 * nelem + 4; it++) {
        int64_t e = 0, p;
        x.val[loop] = k;
        x.has[loop] = 1;
        if ((ix && !sy_eval(&x, ix, &e)) || !sy_eval(&x, par, &p) || e < 0 || e >= nelem)
            return 0;
        if ((p & 1) != (uses[e] & 1)) {
            Diag *d = sy_report(s, E0712, par, "at %s = %lld this waits on parity %lld, but `%s` is then in its "
                                "phase %d (parity %d): the wait %s", ir_symstr(s->ctx, l->name), (long long)k,
                                (long long)p, sy_text(s, bar), uses[e], uses[e] & 1,
                                (p & 1) ? "blocks for a phase that has not begun (deadlock)"
                                        : "returns at once on an old phase (a race)");
            if (d) {
                diag_note(s->ctx, d, sy_span(s, loop), "the barrier is reused on each iteration of this loop");
                diag_help(s->ctx, d, "%s", parity_help(s, b, w, loop));
            }
            return 1;
        }
        uses[e]++;
        if (__builtin_add_overflow(k, step, &k))
            break;
    }
    return 0;
}

static void check_parity(SyK *s, Bar *b)
{
    for (uint32_t i = 0; i < b->nwait; i++) {
        NodeId w = b->wait[i], loop = sy_loop_of(s, w);
        if (!loop || !any_in_loop(s, b) || loop_trips_le1(s, loop))
            continue;
        int same_role_waits = 0;
        for (uint32_t j = 0; j < b->nwait; j++)
            if (s->role[b->wait[j]] == s->role[w])
                same_role_waits++;
        Varies v = {loop, 0};
        sy_each_expr(s, sy_node(s, w)->b, varies_expr, &v);
        if (!v.found) {
            Diag *d = sy_report(s, E0712, sy_node(s, w)->b, "the parity `%s` is the same on every iteration, but "
                                "`%s` completes a new phase each time: from the second use on, the wait returns at "
                                "once (a race)", sy_text(s, sy_node(s, w)->b), sy_text(s, bar_expr(s, w)));
            if (d) {
                diag_note(s->ctx, d, sy_span(s, loop), "the barrier is reused on each iteration of this loop");
                diag_help(s->ctx, d, "%s", parity_help(s, b, w, loop));
            }
            continue;
        }
        NodeId outer = sy_loop_of(s, loop);
        int64_t nelem = 1;
        if (same_role_waits == 1 && !simulate_parity(s, b, w, loop) && outer && s->role[outer] == s->role[w] &&
            (!sy_node(s, b->decl)->a || sy_const(s, sy_node(s, b->decl)->a, &nelem)) && nelem >= 1 && nelem <= 64)
            simulate_parity_nest(s, b, w, loop, nelem);
    }
}

/* ---- parity outside loops (E0765) ------------------------------------------------
 * A barrier none of whose sites is in a loop completes its phases in program
 * order: the n-th wait (in its role, on one element) must wait on parity n % 2.
 * On a fresh barrier parity 1 names the phase "before" phase 0, which counts
 * as complete: `mbarrier.wait bar, 1` first returns at once (a race). */
static int under_if(SyK *s, NodeId st)
{
    for (NodeId p = s->up[st]; p && sy_node(s, p)->op != OP_ROLE; p = s->up[p])
        if (sy_node(s, p)->op == OP_IF)
            return 1;
    return 0;
}

static void check_parity_straight(SyK *s, Bar *b)
{
    for (uint32_t i = 0; i < b->nwait; i++)
        if (sy_loop_of(s, b->wait[i]) || under_if(s, b->wait[i]))
            return;
    if (any_in_loop(s, b))
        return;
    for (uint32_t i = 0; i < b->nwait; i++) {
        NodeId w = b->wait[i];
        const char *key = index_key(s, bar_expr(s, w));
        int64_t par, n = 0;
        if (!sy_const(s, sy_node(s, w)->b, &par))
            continue;
        for (uint32_t j = 0; j < i; j++)
            if (s->role[b->wait[j]] == s->role[w] && !strcmp(index_key(s, bar_expr(s, b->wait[j])), key))
                n++;
        if ((par & 1) == (n & 1))
            continue;
        Diag *d = sy_report(s, E0765, sy_node(s, w)->b, "this is wait number %lld on `%s`, which then waits for "
                            "its phase %lld (parity %lld), but it waits on parity %lld: %s", (long long)n + 1,
                            sy_text(s, bar_expr(s, w)), (long long)n, (long long)(n & 1), (long long)par,
                            n == 0 ? "on a fresh barrier parity 1 counts as already complete, so the wait returns "
                            "at once (a race)" : "it waits for a phase nobody completes (deadlock) or returns at once");
        if (d) {
            diag_help(s->ctx, d, "wait on parity %lld", (long long)(n & 1));
            diag_fixit(s->ctx, d, sy_span(s, sy_node(s, w)->b), ir_fmt(s->ctx, "%lld", (long long)(n & 1)));
        }
    }
}

/* ---- expect_tx (E0707, E0714) ---------------------------------------------------- */

static int same_bar(SyK *s, NodeId a, NodeId b)
{
    return s->role[a] == s->role[b] && sy_loop_of(s, a) == sy_loop_of(s, b) &&
           !strcmp(index_key(s, bar_expr(s, a)), index_key(s, bar_expr(s, b)));
}

static void check_expect(SyK *s, Bar *b)
{
    if (!b->nexp && b->ntma) {
        NodeId t = b->tma[0];
        Diag *d = sy_report(s, E0714, sy_node(s, t)->c, "this TMA load completes on `%s`, but no "
                            "`mbarrier.expect_tx` announces its bytes: the phase can complete before the data lands",
                            bname(s, b));
        if (d) {
            int64_t by = sy_ref_bytes(s, sy_node(s, t)->a);
            diag_help(s->ctx, d, "before the load, from the thread that issues it: `mbarrier.expect_tx %s, %lld`",
                      sy_text(s, sy_node(s, t)->c), (long long)by);
        }
        return;
    }
    for (uint32_t i = 0; i < b->nexp; i++) {
        NodeId e = b->exp[i];
        int dup = 0;
        for (uint32_t j = 0; j < i; j++)
            if (same_bar(s, b->exp[j], e))
                dup = 1;
        if (dup)
            continue;
        int64_t want = 0, have = 0, v;
        for (uint32_t j = 0; j < b->nexp; j++) {
            if (!same_bar(s, b->exp[j], e))
                continue;
            if (!sy_const(s, sy_node(s, b->exp[j])->b, &v))
                return;
            want += v;
        }
        uint32_t nt = 0;
        for (uint32_t j = 0; j < b->ntma; j++) {
            NodeId t = b->tma[j];
            if (!same_bar(s, t, e))
                continue;
            int exact;
            int64_t by = sy_ref_bytes(s, sy_node(s, t)->a), th = sy_threads_at(s, t, &exact);
            if (by < 0 || !exact || th <= 0)
                return;
            have += by * th;
            nt++;
        }
        if (want == have)
            continue;
        Diag *d = sy_report(s, E0707, sy_node(s, e)->b, "`mbarrier.expect_tx` announces %lld bytes, but the TMA loads "
                            "that complete on `%s` in the same iteration carry %lld bytes", (long long)want,
                            sy_text(s, sy_node(s, e)->a), (long long)have);
        if (!d)
            continue;
        for (uint32_t j = 0; j < b->ntma; j++) {
            NodeId t = b->tma[j];
            int exact;
            if (!same_bar(s, t, e))
                continue;
            int64_t th = sy_threads_at(s, t, &exact);
            diag_note(s->ctx, d, sy_span(s, t), "this load carries %lld bytes (`%s`)%s",
                      (long long)sy_ref_bytes(s, sy_node(s, t)->a), sy_text(s, sy_node(s, t)->a),
                      th > 1 ? ir_fmt(s->ctx, ", issued by %lld threads", (long long)th) : "");
        }
        if (!nt)
            diag_note(s->ctx, d, IR_NOSPAN, "no TMA load completes on `%s` in this iteration",
                      sy_text(s, sy_node(s, e)->a));
        /* one load by one thread: the bytes as the kernel writes the tile's extents, which hold at
           every parameter binding (a literal holds at this one only) */
        const char *expr = NULL;
        for (uint32_t j = 0; j < b->ntma && nt == 1; j++) {
            int exact;
            if (same_bar(s, b->tma[j], e) && sy_threads_at(s, b->tma[j], &exact) == 1)
                expr = sy_ref_bytes_text(s, sy_node(s, b->tma[j])->a);
        }
        if (expr && strspn(expr, "0123456789 *") != strlen(expr)) {
            diag_help(s->ctx, d, "announce exactly the bytes that land: `mbarrier.expect_tx %s, %s` (%lld at "
                      "this binding)", sy_text(s, sy_node(s, e)->a), expr, (long long)have);
            diag_fixit(s->ctx, d, sy_span(s, sy_node(s, e)->b), expr);
        } else {
            diag_help(s->ctx, d, "announce exactly the bytes that land: `mbarrier.expect_tx %s, %lld`",
                      sy_text(s, sy_node(s, e)->a), (long long)have);
            diag_fixit(s->ctx, d, sy_span(s, sy_node(s, e)->b), ir_fmt(s->ctx, "%lld", (long long)have));
        }
    }
}

/* expect_tx on a pipeline barrier: the compiler derives it */
static void pipe_expect(SyK *s, NodeId st, void *u)
{
    Node *n = sy_node(s, st);
    (void)u;
    if (n->op != OP_MB_EXPECT || !sy_pipe_of(s, n->a))
        return;
    Diag *d = sy_report(s, E0707, st, "pipeline stages get their expect_tx from the compiler: this adds %s bytes "
                        "that no load delivers (the stage never completes)", sy_text(s, n->b));
    if (d)
        diag_help(s->ctx, d, "drop this statement; TMA loads `on %s` are counted automatically", sy_text(s, n->a));
}

void sy_check_mbars(SyK *s)
{
    sy_each_stmt(s, s->k->body, pipe_expect, NULL);
    if (!s->nmbars)
        return;
    Bars b = {arena_alloc(&s->ctx->arena, s->nmbars * sizeof(Bar)), s->nmbars};
    for (uint32_t i = 0; i < s->nmbars; i++)
        b.bars[i].decl = s->mbars[i];
    sy_each_stmt(s, s->k->body, gather, &b);
    for (uint32_t i = 0; i < b.n; i++) {
        check_count(s, &b.bars[i]);
        check_waits(s, &b.bars[i]);
        check_parity(s, &b.bars[i]);
        check_parity_straight(s, &b.bars[i]);
        check_expect(s, &b.bars[i]);
    }
}
