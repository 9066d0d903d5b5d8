/* sync_pipe.c — pipelines (`pipeline ring: STAGES stages from role P to role C`).
 *
 * Per role, a dataflow over stage tokens (`let s = ring.acquire()` in the
 * producer, `let s = ring.wait()` in the consumer): each token is held until
 * it is handed on — filled by TMA loads `on ring.full(s)` or committed in the
 * producer, released in the consumer. A token still held when its scope ends
 * (or at a `return`) leaks a stage (E0701, E0704); handing it on twice (E0702)
 * or touching it afterwards (E0708, also through the name it was moved from:
 * `var held = s` ... `ring.release(held)` ... `As[s]`) breaks the phase protocol; members called
 * from the wrong role (E0703) or with a token of another pipeline or the wrong
 * side (E0706) are rejected. Then a concrete count of acquires and waits per
 * kernel run, on sample shapes that satisfy the assumes, must agree (E0705). */
#include <string.h>
#include "sync.h"

#define MAXTOK 48
enum { T_HELD = 1, T_FILLED = 2, T_DONE = 4 };

typedef struct {
    SyK *s;
    NodeId role;
    NodeId tok[MAXTOK]; uint32_t ntok;
} Pipes;

/* moved[t]: 1 + the token variable t was last moved into (its stage now goes
   by that name too: released through it, t is dead as well); 0 none;
   done_at[t]: the statement that last handed t on */
typedef struct { uint8_t st[MAXTOK]; uint8_t moved[MAXTOK]; NodeId done_at[MAXTOK]; } PState;

static int tok_index(Pipes *p, NodeId let)
{
    for (uint32_t i = 0; i < p->ntok; i++)
        if (p->tok[i] == let)
            return (int)i;
    return -1;
}

static const char *pname(SyK *s, NodeId pipe)
{
    return ir_symstr(s->ctx, sy_node(s, pipe)->name);
}

static NodeId producer(SyK *s, NodeId pipe) { return sy_role_named(s, sy_node(s, pipe)->b); }
static NodeId consumer(SyK *s, NodeId pipe) { return sy_role_named(s, sy_node(s, pipe)->c); }

static int64_t stages(SyK *s, NodeId pipe)
{
    int64_t n;
    return sy_const(s, sy_node(s, pipe)->a, &n) ? n : -1;
}

/* the first member of pipe `pipe` with op `op` in the kernel (for notes) */
typedef struct { NodeId pipe; uint16_t op; NodeId found; } FindMember;

static void find_member_expr(SyK *s, NodeId e, void *u)
{
    FindMember *f = u;
    if (!f->found && sy_node(s, e)->op == f->op && sy_pipe_of(s, e) == f->pipe)
        f->found = e;
}

static void find_member(SyK *s, NodeId st, void *u)
{
    sy_stmt_exprs(s, st, find_member_expr, u);
}

static NodeId member_site(SyK *s, NodeId pipe, Op op)
{
    FindMember f = {pipe, (uint16_t)op, 0};
    sy_each_stmt(s, s->k->body, find_member, &f);
    return f.found;
}

/* a member already reported (here or by the type checker) */
static int bad_member(SyK *s, NodeId member)
{
    if (sy_node(s, member)->flags & NF_ERROR)
        return 1;
    for (uint32_t i = 0; i < s->nreported; i++)
        if (s->reported[i] == ((uint64_t)E0703 << 32 | member))
            return 1;
    return 0;
}

/* E0703: a member used outside the side of the pipeline it belongs to */
static int check_side(SyK *s, NodeId role, NodeId member)
{
    NodeId pipe = sy_pipe_of(s, member);
    if (!pipe)
        return 0;
    uint16_t op = sy_node(s, member)->op;
    int prod_side = op == OP_P_ACQUIRE || op == OP_P_COMMIT;
    NodeId want = prod_side ? producer(s, pipe) : consumer(s, pipe);
    if (op != OP_P_ACQUIRE && op != OP_P_COMMIT && op != OP_P_WAIT && op != OP_P_RELEASE)
        return 1;
    if (role == want)
        return 1;
    const char *call = ir_ops[op].spelling;
    Diag *d = sy_report(s, E0703, member, "`%s.%s` called in %s, but only the %s role `%s` may call it",
                        pname(s, pipe), call, sy_role_name(s, role), prod_side ? "producer" : "consumer",
                        want ? ir_symstr(s->ctx, sy_node(s, want)->name) : "?");
    if (d) {
        diag_note(s->ctx, d, sy_span(s, pipe), "pipeline `%s` runs from role `%s` to role `%s`", pname(s, pipe),
                  sy_text(s, sy_node(s, pipe)->b), sy_text(s, sy_node(s, pipe)->c));
        diag_help(s->ctx, d, "%s", prod_side
                  ? "the producer acquires empty stages and fills them (`tma ... on ring.full(s)` or `ring.commit(s)`)"
                  : "the consumer waits for full stages (`let s = ring.wait()`) and releases them (`ring.release(s)`)");
    }
    return 0;
}

/* the token LET named by expression e, checked against pipe and side */
static int want_token(Pipes *p, NodeId at, NodeId e, NodeId pipe, Op side, const char *use)
{
    SyK *s = p->s;
    NodeId let = sy_token_let(s, e);
    NodeId tpipe = let ? sy_token_pipe(s, let) : 0;
    if (let && tpipe == pipe && sy_token_kind(s, let) == side)
        return tok_index(p, let);
    if (let && sy_node(s, let)->op == OP_LET && bad_member(s, sy_node(s, let)->b))
        return -1; /* its acquire/wait was already reported */
    Diag *d;
    if (!let)
        d = sy_report(s, E0706, e ? e : at, "%s needs the stage token of `%s.%s()`, but `%s` is not a stage token",
                      use, pname(s, pipe), ir_ops[side].spelling, e ? sy_text(s, e) : "");
    else if (tpipe != pipe)
        d = sy_report(s, E0706, e, "%s is given a stage of pipeline `%s`, not of `%s`", use, pname(s, tpipe),
                      pname(s, pipe));
    else
        d = sy_report(s, E0706, e, "%s is given a token from `%s.%s()`; it needs one from `%s.%s()`", use,
                      pname(s, pipe), ir_ops[sy_token_kind(s, let)].spelling, pname(s, pipe),
                      ir_ops[side].spelling);
    if (d && let)
        diag_note(s->ctx, d, sy_span(s, let), "`%s` comes from here", sy_text(s, e));
    if (d)
        diag_help(s->ctx, d, "use the token this role got from `%s.%s()` in the same iteration", pname(s, pipe),
                  ir_ops[side].spelling);
    return -1;
}

typedef struct { Pipes *p; PState *ps; NodeId st; int done; } UseCx;

static void check_use(SyK *s, NodeId e, void *u)
{
    UseCx *c = u;
    int t = tok_index(c->p, sy_token_let(s, e));
    if (t < 0 || c->done)
        return;
    int via = c->ps->moved[t] ? c->ps->moved[t] - 1 : -1; /* released under the name it was moved to */
    if (!(c->ps->st[t] & T_DONE) && (via < 0 || !(c->ps->st[via] & T_DONE)))
        return;
    c->done = 1; /* once per statement */
    NodeId let = c->p->tok[t];
    int prod = sy_token_kind(s, let) == OP_P_ACQUIRE;
    uint8_t bits = c->ps->st[t] & T_DONE ? c->ps->st[t] : c->ps->st[via];
    Diag *d = sy_report(s, E0708, e, "stage `%s` is used after it was %s%s%s", sy_text(s, e),
                        prod ? "committed" : "released",
                        c->ps->st[t] & T_DONE ? "" : ir_fmt(s->ctx, " (as `%s`, the variable it was moved to)",
                                                            ir_symstr(s->ctx, sy_node(s, c->p->tok[via])->name)),
                        bits & T_HELD ? " on some path" : "");
    if (d) {
        diag_note(s->ctx, d, sy_span(s, let), "the stage was %s here", prod ? "acquired" : "waited for");
        NodeId done = c->ps->done_at[c->ps->st[t] & T_DONE ? t : via];
        if (done)
            diag_note(s->ctx, d, sy_span(s, done), "and %s here", prod ? "committed" : "released");
        diag_help(s->ctx, d, prod ? "fill the stage completely before `commit`: the consumer may read it as soon as it is committed"
                                  : "release the stage only after its last use (and after the `wgmma.wait` that covers it)");
    }
}

static void pipe_stmt(SyFlow *f, NodeId st, void *state)
{
    Pipes *p = f->u;
    SyK *s = p->s;
    PState *ps = state;
    Node *n = sy_node(s, st);
    NodeId call = n->op == OP_EXPRSTMT ? n->a : 0;
    uint16_t cop = call ? sy_node(s, call)->op : OP_NONE;
    if (n->op == OP_LET && sy_token_kind(s, st) != OP_NONE) {
        int t = tok_index(p, st);
        if (check_side(s, p->role, n->b) && t >= 0) {
            ps->st[t] = T_HELD;
            ps->moved[t] = 0;
        }
        return;
    }
    /* a token moved into a token variable: `var prev: i32 = s0`, `prev = s` */
    NodeId mv_to = n->op == OP_VAR ? st : n->op == OP_ASSIGN ? sy_decl(s, n->a) : 0;
    NodeId mv_from = n->op == OP_VAR || n->op == OP_ASSIGN ? sy_token_let(s, n->b) : 0;
    if (mv_to && sy_is_token_var(s, mv_to) && (mv_from || n->op == OP_VAR)) {
        int to = tok_index(p, mv_to), from = tok_index(p, mv_from);
        if (to < 0)
            return;
        if (ps->st[to] & T_HELD && n->op == OP_ASSIGN) {
            int prod = sy_token_kind(s, mv_to) == OP_P_ACQUIRE;
            Diag *d = sy_report(s, prod ? E0701 : E0704, st, "this overwrites `%s` while it still holds a stage "
                                "that was not %s%s: that stage is lost", sy_text(s, n->a), prod ? "committed"
                                : "released", ps->st[to] & (T_DONE | T_FILLED) ? " on some path" : "");
            if (d)
                diag_help(s->ctx, d, "hand the held stage on first (`%s.%s(%s)`), then move the new token in",
                          ir_symstr(s->ctx, sy_node(s, sy_token_pipe(s, mv_to))->name), prod ? "commit" : "release",
                          sy_text(s, n->a));
        }
        ps->st[to] = from >= 0 ? ps->st[from] : 0;
        ps->done_at[to] = from >= 0 ? ps->done_at[from] : 0;
        for (uint32_t i = 0; i < p->ntok; i++) /* `to` names another stage now */
            if (ps->moved[i] == to + 1)
                ps->moved[i] = 0;
        ps->moved[to] = 0;
        if (from >= 0) {
            ps->st[from] = 0;
            ps->moved[from] = (uint8_t)(to + 1);
        }
        return;
    }
    if (cop == OP_P_ACQUIRE || cop == OP_P_WAIT) {
        if (!check_side(s, p->role, call))
            return;
        NodeId pipe = sy_pipe_of(s, call);
        Diag *d = sy_report(s, cop == OP_P_ACQUIRE ? E0701 : E0704, call,
                            "the stage of `%s` is dropped: it is never %s", sy_text(s, call),
                            cop == OP_P_ACQUIRE ? "filled or committed" : "released");
        if (d)
            diag_help(s->ctx, d, "bind the stage and hand it on: `let s = %s.%s()` ... `%s.%s(s)`", pname(s, pipe),
                      ir_ops[cop].spelling, pname(s, pipe), cop == OP_P_ACQUIRE ? "commit" : "release");
        return;
    }
    if (cop == OP_P_COMMIT || cop == OP_P_RELEASE) {
        if (!check_side(s, p->role, call))
            return;
        NodeId pipe = sy_pipe_of(s, call);
        int prod = cop == OP_P_COMMIT;
        int t = want_token(p, call, sy_pipe_arg(s, call), pipe, prod ? OP_P_ACQUIRE : OP_P_WAIT,
                           ir_fmt(s->ctx, "`%s.%s`", pname(s, pipe), ir_ops[cop].spelling));
        if (t < 0)
            return;
        if (ps->st[t] & (T_DONE | T_FILLED)) {
            int twice = !(ps->st[t] & T_HELD);
            Diag *d = sy_report(s, E0702, call, "stage `%s` is %s twice%s", sy_text(s, sy_pipe_arg(s, call)),
                                ps->st[t] & T_FILLED && prod ? "completed" : prod ? "committed" : "released",
                                twice ? "" : " on some path");
            if (d) {
                diag_note(s->ctx, d, sy_span(s, p->tok[t]), "the stage comes from here");
                diag_help(s->ctx, d, "%s", ps->st[t] & T_FILLED && prod
                          ? "a stage filled by TMA `on ring.full(s)` completes by itself: drop the `commit`"
                          : "hand each stage on exactly once per acquire/wait");
            }
        }
        ps->st[t] = T_DONE;
        ps->done_at[t] = st;
        return;
    }
    UseCx c = {p, ps, st, 0};
    if (n->op == OP_STORE || n->op == OP_ASSIGN || n->op == OP_STMATRIX || n->op == OP_CP_ASYNC ||
        n->op == OP_TMA_LOAD) {
        NodeId ix = sy_ref_index0(s, n->a), tok = sy_token_let(s, ix);
        if (tok && sy_token_kind(s, tok) == OP_P_WAIT && sy_is_shared_ref(s, n->a)) {
            Diag *d = sy_report(s, E0703, n->a, "the consumer writes stage `%s` of pipeline `%s`: the producer may "
                                "refill it at any time after the release", sy_text(s, ix),
                                pname(s, sy_token_pipe(s, tok)));
            if (d)
                diag_help(s->ctx, d, "write results to a tile of the consumer's own (not a pipeline stage)");
        }
    }
    if (n->op == OP_TMA_LOAD && n->c && sy_pipe_of(s, n->c) && sy_node(s, n->c)->op == OP_P_FULL) {
        NodeId pipe = sy_pipe_of(s, n->c), arg = sy_pipe_arg(s, n->c);
        if (p->role != producer(s, pipe)) {
            Diag *d = sy_report(s, E0703, n->c, "TMA loads complete on `%s.full(...)` only in the producer role `%s`",
                                pname(s, pipe), sy_text(s, sy_node(s, pipe)->b));
            if (d)
                diag_help(s->ctx, d, "issue the stage's loads from the producer, after `let s = %s.acquire()`",
                          pname(s, pipe));
            return;
        }
        int t = want_token(p, n->c, arg, pipe, OP_P_ACQUIRE, ir_fmt(s->ctx, "`%s.full`", pname(s, pipe)));
        NodeId ix = sy_ref_index0(s, n->a), ixlet = sy_token_let(s, ix);
        uint16_t ixop = ix ? sy_node(s, ix)->op : OP_NONE;
        if (t >= 0 && ix && ixop != OP_SLICE && ixop != OP_COLON && ixlet != p->tok[t]) {
            Diag *d = sy_report(s, E0706, ix, "the TMA writes `%s[%s]`, which is not stage `%s`, but completes on "
                                "`%s.full(%s)`", sy_text(s, sy_ref_base(s, n->a)), sy_text(s, ix), sy_text(s, arg),
                                pname(s, pipe), sy_text(s, arg));
            if (d) {
                diag_note(s->ctx, d, sy_span(s, p->tok[t]), "`%s` was acquired here", sy_text(s, arg));
                diag_help(s->ctx, d, "write the stage you complete: `%s[%s]` with `on %s.full(%s)`",
                          sy_text(s, sy_ref_base(s, n->a)), sy_text(s, arg), pname(s, pipe), sy_text(s, arg));
            }
        }
        if (t < 0)
            return;
        sy_stmt_exprs(s, st, check_use, &c);
        ps->st[t] = (uint8_t)((ps->st[t] & ~T_HELD) | T_FILLED);
        return;
    }
    if (n->op != OP_IF && n->op != OP_FOR)
        sy_stmt_exprs(s, st, check_use, &c);
    else if (n->op == OP_IF)
        sy_each_expr(s, n->a, check_use, &c);
}

static void report_held(Pipes *p, int t, NodeId where, uint8_t bits)
{
    SyK *s = p->s;
    NodeId let = p->tok[t], pipe = sy_token_pipe(s, let);
    int prod = sy_token_kind(s, let) == OP_P_ACQUIRE;
    const char *name = ir_symstr(s->ctx, sy_node(s, let)->name);
    Diag *d;
    if (!pipe || sy_reported_in(s, E0750, p->role))
        return; /* divergent control in this role was reported: paths are not meaningful */
    if (prod) {
        d = sy_report(s, E0701, let, "stage `%s` of pipeline `%s` is acquired but never filled or committed%s",
                      name, pname(s, pipe), bits & (T_DONE | T_FILLED) ? " on some path" : "");
        if (d) {
            NodeId w = member_site(s, pipe, OP_P_WAIT);
            if (w)
                diag_note(s->ctx, d, sy_span(s, w), "the consumer waits for it here forever");
            diag_help(s->ctx, d, "on every path, fill the stage with `tma ... on %s.full(%s)` or call `%s.commit(%s)`",
                      pname(s, pipe), name, pname(s, pipe), name);
        }
    } else {
        int64_t n = stages(s, pipe);
        d = sy_report(s, E0704, let, "stage `%s` of pipeline `%s` is waited for but never released%s: after %lld "
                      "iterations the producer blocks in `%s.acquire()` forever (deadlock)", name, pname(s, pipe),
                      bits & T_DONE ? " on some path" : "", (long long)(n > 0 ? n : 0), pname(s, pipe));
        if (d) {
            NodeId a = member_site(s, pipe, OP_P_ACQUIRE);
            if (a)
                diag_note(s->ctx, d, sy_span(s, a), "the producer waits for a released stage here");
            diag_help(s->ctx, d, "call `%s.release(%s)` on every path once the stage's data is consumed",
                      pname(s, pipe), name);
            for (uint32_t i = 0; i < p->ntok; i++) { /* a carried token that starts from no stage */
                NodeId tv = p->tok[i];
                Node *vn = sy_node(s, tv);
                if (vn->op == OP_VAR && vn->b && !sy_token_let(s, vn->b))
                    diag_note(s->ctx, d, sy_span(s, tv), "`%s` starts from `%s`, not from a stage token: "
                              "the stage of `%s` is never handed to it", ir_symstr(s->ctx, vn->name),
                              sy_text(s, vn->b), name);
            }
        }
    }
    if (d && where)
        diag_note(s->ctx, d, sy_span(s, where), "this `return` leaves the stage held");
}

static void pipe_leave(SyFlow *f, NodeId block, void *state)
{
    Pipes *p = f->u;
    PState *ps = state;
    Node *b = sy_node(p->s, block);
    for (uint32_t i = 0; i < b->n; i++) {
        int t = tok_index(p, ir_list_at(p->s->k, b, i));
        if (t < 0)
            continue;
        if (ps->st[t] & T_HELD)
            report_held(p, t, 0, ps->st[t]);
        ps->st[t] = 0;
        ps->moved[t] = 0;
        for (uint32_t j = 0; j < p->ntok; j++) /* moved into a variable that ends here */
            if (ps->moved[j] == t + 1)
                ps->moved[j] = 0;
    }
}

static void pipe_exit(SyFlow *f, NodeId ret, void *state)
{
    Pipes *p = f->u;
    PState *ps = state;
    for (uint32_t t = 0; t < p->ntok; t++)
        if (ps->st[t] & T_HELD)
            report_held(p, (int)t, ret, ps->st[t]);
}

static void pipe_join(SyFlow *f, void *dst, const void *src)
{
    PState *a = dst;
    const PState *b = src;
    for (int i = 0; i < MAXTOK; i++) {
        a->st[i] |= b->st[i];
        if (!a->moved[i])
            a->moved[i] = b->moved[i];
        if (!a->done_at[i])
            a->done_at[i] = b->done_at[i];
    }
}

static void collect_tok(SyK *s, NodeId st, void *u)
{
    Pipes *p = u;
    if ((sy_node(s, st)->op == OP_LET || sy_is_token_var(s, st)) && sy_token_kind(s, st) != OP_NONE &&
        p->ntok < MAXTOK)
        p->tok[p->ntok++] = st;
}

static void check_role(SyK *s, NodeId role, NodeId body)
{
    Pipes p = {.s = s, .role = role};
    sy_each_stmt(s, body, collect_tok, &p);
    SyFlow f = {.s = s, .size = sizeof(PState), .join = pipe_join, .stmt = pipe_stmt, .leave = pipe_leave, .exit = pipe_exit, .u = &p};
    PState st;
    memset(&st, 0, sizeof st);
    sy_flow(&f, body, &st);
}

/* ---- trip counts: acquires in the producer vs waits in the consumer ---- */

/* One run of a role at one sample counts the acquires and waits of every
 * pipeline at once (a run of a persistent kernel is most of the check's
 * time); the runs are kept per (role, sample). TRIP_BUDGET: the statements one
 * run may take (a persistent kernel's consumer at the largest sample needs
 * more: it gives up, and the sample is not compared). */
#define TRIP_BUDGET 1000000

typedef struct {
    NodeId role;
    int sample;
    int ok;           /* 0: the run gave up (unknown condition or budget) */
    long *acq, *wait; /* per pipeline index */
} TripRun;

typedef struct {
    TripRun *runs; uint32_t nruns, cap;
} Trips;

static int pipe_index(SyK *s, NodeId pipe)
{
    for (uint32_t i = 0; i < s->npipes; i++)
        if (s->pipes[i] == pipe)
            return (int)i;
    return -1;
}

static void count_stmt(SyExec *x, NodeId st)
{
    TripRun *r = x->u;
    SyK *s = sy_xk(x);
    Node *n = sy_node(s, st);
    if (n->op != OP_LET || !n->b)
        return;
    Op op = sy_node(s, n->b)->op;
    if (op != OP_P_ACQUIRE && op != OP_P_WAIT)
        return;
    int i = pipe_index(s, sy_pipe_of(s, n->b));
    if (i >= 0)
        (op == OP_P_ACQUIRE ? r->acq : r->wait)[i]++;
}

/* runs role at sample into r */
static void run_role(SyK *s, NodeId role, int sample, TripRun *r)
{
    SyExec x;
    int64_t first, n;
    sy_exec_init(&x, s, TRIP_BUDGET);
    memset(r->acq, 0, s->npipes * sizeof *r->acq);
    memset(r->wait, 0, s->npipes * sizeof *r->wait);
    r->ok = 0;
    if (!sy_sample_dims(&x, sample) || !sy_role_range(s, role, &first, &n))
        return;
    sy_exec_thread(&x, role, first);
    x.role = role;
    x.stmt = count_stmt;
    x.u = r;
    sy_exec(&x, s->k->body);
    r->ok = !x.unknown && x.budget >= 0;
}

/* "M = 100, K = 64" of sample i, for a report (the dims alone: nothing is run) */
static const char *sample_text(SyK *s, int sample)
{
    SyExec x;
    sy_exec_init(&x, s, 0);
    return sy_sample_dims(&x, sample) ? sy_sample_text(&x) : "";
}

static TripRun *trip_run(SyK *s, Trips *t, NodeId role, int sample)
{
    for (uint32_t i = 0; i < t->nruns; i++)
        if (t->runs[i].role == role && t->runs[i].sample == sample)
            return &t->runs[i];
    t->runs = arena_grow(&s->ctx->arena, t->runs, &t->cap, t->nruns + 1, sizeof *t->runs);
    TripRun *r = &t->runs[t->nruns++];
    r->role = role;
    r->sample = sample;
    r->acq = arena_alloc(&s->ctx->arena, s->npipes * sizeof *r->acq);
    r->wait = arena_alloc(&s->ctx->arena, s->npipes * sizeof *r->wait);
    run_role(s, role, sample, r);
    return r;
}

/* op's members of pipe run by role at sample; -1 when the run gave up */
static long count_runs(SyK *s, Trips *t, NodeId pipe, NodeId role, Op op, int sample)
{
    TripRun *r = trip_run(s, t, role, sample);
    int i = pipe_index(s, pipe);
    if (!r->ok || i < 0)
        return -1;
    return (op == OP_P_ACQUIRE ? r->acq : r->wait)[i];
}

static NodeId first_member_let(SyK *s, NodeId pipe, Op op)
{
    NodeId m = member_site(s, pipe, op);
    return m ? s->stmt_of[m] : 0;
}

static void check_trips(SyK *s, Trips *t, NodeId pipe)
{
    NodeId prod = producer(s, pipe), cons = consumer(s, pipe);
    NodeId bad_a = member_site(s, pipe, OP_P_ACQUIRE), bad_w = member_site(s, pipe, OP_P_WAIT);
    if (!prod || !cons || (bad_a && bad_member(s, bad_a)) || (bad_w && bad_member(s, bad_w)))
        return; /* members in the wrong role were reported already */
    for (int i = 0; i < SY_NSAMPLES; i++) {
        long a = count_runs(s, t, pipe, prod, OP_P_ACQUIRE, i);
        long w = a < 0 ? -1 : count_runs(s, t, pipe, cons, OP_P_WAIT, i); /* no consumer run to compare with nothing */
        if (a < 0 || w < 0 || a == w)
            continue;
        const char *shape = sample_text(s, i);
        NodeId wl = first_member_let(s, pipe, OP_P_WAIT), al = first_member_let(s, pipe, OP_P_ACQUIRE);
        NodeId at = wl && sy_loop_of(s, wl) ? sy_loop_of(s, wl) : wl;
        NodeId pat = al && sy_loop_of(s, al) ? sy_loop_of(s, al) : al;
        if (!at)
            return;
        Diag *d = sy_report(s, E0705, at, "role `%s` waits for %ld stages of pipeline `%s` but role `%s` fills %ld "
                            "(for %s): %s", ir_symstr(s->ctx, sy_node(s, cons)->name), w, pname(s, pipe),
                            ir_symstr(s->ctx, sy_node(s, prod)->name), a, *shape ? shape : "every shape",
                            w > a ? "the consumer waits forever (deadlock)"
                                  : "stages are filled that nobody consumes (a hang or lost data)");
        if (d) {
            if (pat)
                diag_note(s->ctx, d, sy_span(s, pat), "the producer's loop runs %ld time%s here", a, a == 1 ? "" : "s");
            NodeId bound = pat && sy_node(s, pat)->op == OP_FOR ? sy_decl(s, sy_node(s, pat)->b) : 0;
            if (bound && sy_node(s, bound)->op == OP_LET) /* where its trip count is computed */
                diag_note(s->ctx, d, sy_span(s, bound), "its trip count `%s` is computed here",
                          ir_symstr(s->ctx, sy_node(s, bound)->name));
            /* the consumer's loop compares with the producer's only at the same depth (a peeled first
               wait sits in the tile loop around the k loop) */
            int dp = 0, dc = 0;
            for (NodeId l = pat; l; l = sy_loop_of(s, l))
                dp++;
            for (NodeId l = at; l; l = sy_loop_of(s, l))
                dc++;
            NodeId cbound = dp == dc && sy_node(s, at)->op == OP_FOR ? sy_decl(s, sy_node(s, at)->b) : 0;
            const Node *bl = bound && sy_node(s, bound)->op == OP_LET ? sy_node(s, bound) : NULL;
            const Node *cl = cbound && sy_node(s, cbound)->op == OP_LET ? sy_node(s, cbound) : NULL;
            if (cl && cbound != bound)
                diag_note(s->ctx, d, sy_span(s, cbound), "the consumer's trip count `%s` is computed here",
                          ir_symstr(s->ctx, cl->name));
            if (bl && sy_node(s, bl->b)->op == OP_DIV && a == 0 && w > 0)
                diag_help(s->ctx, d, "`%s` rounds down, to 0 at this shape, while the consumer still waits for a "
                          "stage: round it up, `cdiv(%s, %s)` (the last stage partial), or skip the consumer's waits "
                          "when it is 0", sy_text(s, bl->b), sy_text(s, sy_node(s, bl->b)->a),
                          sy_text(s, sy_node(s, bl->b)->b));
            else if (bl && cl && cbound != bound && strcmp(sy_text(s, bl->b), sy_text(s, cl->b)))
                diag_help(s->ctx, d, "the producer computes its count as `%s`, the consumer as `%s`: compute both "
                          "with one expression", sy_text(s, bl->b), sy_text(s, cl->b));
            else if (pat && at && sy_node(s, pat)->op == OP_FOR && sy_node(s, at)->op == OP_FOR &&
                     !strcmp(sy_text(s, sy_node(s, pat)->b), sy_text(s, sy_node(s, at)->b)))
                diag_help(s->ctx, d, "both loops run to `%s`, so the difference is outside them: a stage the "
                          "consumer waits for before or after its loop (a peeled first k-tile) must be filled by "
                          "the producer at every shape too (guard both alike)", sy_text(s, sy_node(s, pat)->b));
            else if (pat && sy_node(s, pat)->op == OP_FOR && dp == dc && sy_node(s, at)->op == OP_FOR)
                diag_help(s->ctx, d, "the producer's loop runs to `%s`, the consumer's to `%s`: give both loops the "
                          "bound of the one that is right", sy_text(s, sy_node(s, pat)->b), sy_text(s, sy_node(s, at)->b));
            else if (pat && sy_node(s, pat)->op == OP_FOR)
                diag_help(s->ctx, d, "the producer's loop (to `%s`) fills %ld stage%s here and the consumer waits %ld "
                          "time%s (its waits before, in and after its loops): correct the side that is wrong so both "
                          "count the same k-tiles", sy_text(s, sy_node(s, pat)->b), a, a == 1 ? "" : "s", w,
                          w == 1 ? "" : "s");
            else
                diag_help(s->ctx, d, "the producer fills %ld stages here and the consumer waits %ld times: make both "
                          "count the same k-tiles (one trip-count expression for both)", a, w);
        }
        return;
    }
}

void sy_check_pipes(SyK *s)
{
    check_role(s, 0, s->k->body);
    for (uint32_t i = 0; i < s->nroles; i++)
        check_role(s, s->roles[i], sy_node(s, s->roles[i])->d);
    Trips t = {0};
    for (uint32_t i = 0; i < s->npipes; i++)
        check_trips(s, &t, s->pipes[i]);
}
