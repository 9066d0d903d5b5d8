/* sync_wgmma.c — wgmma groups.
 *
 * Each `wgmma` is one group (the compiler commits after it); `wgmma.wait N`
 * retires all but the N most recent. A dataflow per role keeps, per
 * accumulator and per stage token read by a pending wgmma, the age of the
 * newest such group. Touching an accumulator (reading it, storing it, doing
 * math on it, assigning it) while a wgmma that writes it may be in flight is
 * E0740; releasing a stage (`ring.release(s)`) while a wgmma reading it may be
 * in flight is E0741. Both say the `wgmma.wait N` that would be right. A
 * fresh `wgmma acc = a * b` issued while a wgmma that writes acc is pending
 * throws that one's result away unread: W0742. */
#include <string.h>
#include "sync.h"

#define MAXW 32

typedef struct {
    uint8_t acc_age[MAXW]; NodeId acc_at[MAXW];
    uint8_t tok_age[MAXW]; NodeId tok_at[MAXW];
    NodeId last_wait;    /* the last `wgmma.wait` on the path (0: none) */
} WState;

typedef struct {
    SyK *s;
    NodeId accs[MAXW]; uint32_t nacc;
    NodeId toks[MAXW]; uint32_t ntok;
} Wg;

static int find(const NodeId *arr, uint32_t n, NodeId d)
{
    for (uint32_t i = 0; d && i < n; i++)
        if (arr[i] == d)
            return (int)i;
    return -1;
}

static void add(NodeId *arr, uint32_t *n, NodeId d)
{
    if (d && find(arr, *n, d) < 0 && *n < MAXW)
        arr[(*n)++] = d;
}

static void collect(SyK *s, NodeId st, void *u)
{
    Wg *w = u;
    Node *n = sy_node(s, st);
    if (sy_is_token_var(s, st))
        add(w->toks, &w->ntok, st);
    if (n->op != OP_WGMMA)
        return;
    add(w->accs, &w->nacc, sy_ref_decl(s, n->a));
    NodeId ops[2] = {n->b, n->c};
    for (int i = 0; i < 2; i++) {
        NodeId d = sy_ref_decl(s, ops[i]);
        if (d && sy_node(s, d)->op == OP_REG) /* a register operand (wgmma_a) */
            add(w->accs, &w->nacc, d);
        add(w->toks, &w->ntok, sy_token_let(s, sy_ref_index0(s, ops[i])));
    }
}

/* read_only: the use is a wgmma operand (it only reads): a pending wgmma
   that only reads the register too is no conflict */
typedef struct { Wg *w; WState *x; NodeId st, skip; int done, read_only; } UseCx;

/* the fix-it that inserts `wgmma.wait n` on a line of its own before statement st
   (check verifies it before showing it: lib/fixit_verify.c) */
static void wait_fixit(SyK *s, Diag *d, NodeId st, int n)
{
    Span sp = sy_span(s, st);
    uint32_t line, col, el, ec;
    span_linecol(s->ctx, sp, &line, &col, &el, &ec);
    sp.hi = sp.lo;
    diag_fixit(s->ctx, d, sp, ir_fmt(s->ctx, "wgmma.wait %d\n%*s", n, (int)(col - 1), ""));
}

static void acc_use(SyK *s, NodeId e, void *u)
{
    UseCx *c = u;
    int a = find(c->w->accs, c->w->nacc, sy_decl(s, e));
    if (a < 0 || !c->x->acc_age[a] || e == c->skip || c->done)
        return;
    c->done = 1; /* once per statement */
    const char *name = ir_symstr(s->ctx, sy_node(s, c->w->accs[a])->name);
    int n = c->x->acc_age[a] - 1;
    int acc = sy_ref_decl(s, sy_node(s, c->x->acc_at[a])->a) == c->w->accs[a];
    if (c->read_only && !acc) {
        c->done = 0;
        return;
    }
    Diag *d = sy_report(s, E0740, e, "`%s` is used while a wgmma that %s it may still be running", name,
                        acc ? "accumulates into" : "reads");
    if (!d)
        return;
    diag_note(s->ctx, d, sy_span(s, c->x->acc_at[a]), "this wgmma %s `%s` asynchronously", acc ? "writes" : "reads",
              name);
    if (c->x->last_wait)
        diag_note(s->ctx, d, sy_span(s, c->x->last_wait), "the last wait before it leaves %d group%s in flight",
                  n + 1, n ? "s" : "");
    diag_help(s->ctx, d, "insert `wgmma.wait %d` before this use (it retires all but the %d most recent wgmma groups)",
              n, n);
    if (c->st && sy_node(s, c->st)->op != OP_IF && sy_node(s, c->st)->op != OP_FOR)
        wait_fixit(s, d, c->st, n);
}

/* `wgmma acc = a * b` while a wgmma that writes acc is in flight: the pending
   result is overwritten before anything reads it (W0742) */
static void fresh_over_pending(Wg *w, WState *x, NodeId st)
{
    SyK *s = w->s;
    NodeId acc = sy_ref_decl(s, sy_node(s, st)->a);
    int a = find(w->accs, w->nacc, acc);
    if (a < 0 || !x->acc_age[a] || sy_ref_decl(s, sy_node(s, x->acc_at[a])->a) != acc)
        return;
    const char *name = ir_symstr(s->ctx, sy_node(s, acc)->name);
    Diag *d = sy_report(s, W0742, st, "this fresh wgmma overwrites `%s` while the wgmma that last wrote it is "
                        "still pending: that result is never read", name);
    if (!d)
        return;
    diag_note(s->ctx, d, sy_span(s, x->acc_at[a]), "this wgmma's result is discarded");
    diag_help(s->ctx, d, "accumulate (`wgmma %s += ...`) if both products count, or remove the first wgmma", name);
}

static void wg_stmt(SyFlow *f, NodeId st, void *state)
{
    Wg *w = f->u;
    SyK *s = w->s;
    WState *x = state;
    Node *n = sy_node(s, st);
    int64_t v;
    if (n->op == OP_WGMMA) {
        /* its operands are read before it joins the groups: the ages (and the
           wait a help proposes) count the groups pending before it */
        UseCx c = {w, x, st, n->a, 0, 1};
        sy_each_expr(s, n->b, acc_use, &c);
        sy_each_expr(s, n->c, acc_use, &c);
        if (n->sub == 1)
            fresh_over_pending(w, x, st);
        for (int i = 0; i < MAXW; i++) {
            if (x->acc_age[i] && x->acc_age[i] < 250) x->acc_age[i]++;
            if (x->tok_age[i] && x->tok_age[i] < 250) x->tok_age[i]++;
        }
        NodeId ops[2] = {n->b, n->c};
        NodeId regs[3] = {sy_ref_decl(s, n->a), sy_ref_decl(s, n->b), sy_ref_decl(s, n->c)};
        for (int i = 0; i < 3; i++) {
            int a = find(w->accs, w->nacc, regs[i]);
            if (a >= 0) {
                x->acc_age[a] = 1;
                x->acc_at[a] = st;
            }
        }
        for (int i = 0; i < 2; i++) {
            int t = find(w->toks, w->ntok, sy_token_let(s, sy_ref_index0(s, ops[i])));
            if (t >= 0) {
                x->tok_age[t] = 1;
                x->tok_at[t] = st;
            }
        }
        return;
    }
    if (n->op == OP_WGMMA_WAIT) {
        int64_t keep = sy_const(s, n->a, &v) ? v : 0;
        x->last_wait = st;
        for (int i = 0; i < MAXW; i++) {
            if (x->acc_age[i] && x->acc_age[i] - 1 >= keep) x->acc_age[i] = 0;
            if (x->tok_age[i] && x->tok_age[i] - 1 >= keep) x->tok_age[i] = 0;
        }
        return;
    }
    if (n->op == OP_LET) {
        int t = find(w->toks, w->ntok, st);
        if (t >= 0)
            x->tok_age[t] = 0;
    }
    NodeId mv_to = n->op == OP_VAR ? st : n->op == OP_ASSIGN ? sy_decl(s, n->a) : 0;
    if (mv_to && sy_is_token_var(s, mv_to)) {
        int to = find(w->toks, w->ntok, mv_to), from = find(w->toks, w->ntok, sy_token_let(s, n->b));
        if (to >= 0) {
            x->tok_age[to] = from >= 0 ? x->tok_age[from] : 0;
            x->tok_at[to] = from >= 0 ? x->tok_at[from] : 0;
        }
        return;
    }
    NodeId call = n->op == OP_EXPRSTMT ? n->a : 0;
    if (call && sy_node(s, call)->op == OP_P_RELEASE) {
        NodeId arg = sy_pipe_arg(s, call);
        int t = find(w->toks, w->ntok, sy_token_let(s, arg));
        if (t >= 0 && x->tok_age[t]) {
            int keep = x->tok_age[t] - 1;
            Diag *d = sy_report(s, E0741, call, "stage `%s` is released while a wgmma reading it may still be "
                                "running: the producer can overwrite the operands under it", sy_text(s, arg));
            if (d) {
                diag_note(s->ctx, d, sy_span(s, x->tok_at[t]), "this wgmma reads the stage asynchronously");
                if (x->last_wait)
                    diag_note(s->ctx, d, sy_span(s, x->last_wait), "the last wait before the release leaves it "
                              "in flight");
                diag_help(s->ctx, d, "wait for it before the release: `wgmma.wait %d`", keep);
                wait_fixit(s, d, st, keep);
            }
        }
    }
    UseCx c = {w, x, st, 0, 0, 0};
    if (n->op == OP_IF)
        sy_each_expr(s, n->a, acc_use, &c);
    else if (n->op != OP_FOR)
        sy_stmt_exprs(s, st, acc_use, &c);
}

static void wg_join(SyFlow *f, void *dst, const void *src)
{
    WState *a = dst;
    const WState *b = src;
    if (!a->last_wait)
        a->last_wait = b->last_wait;
    for (int i = 0; i < MAXW; i++) {
        if (b->acc_age[i] && (!a->acc_age[i] || b->acc_age[i] < a->acc_age[i])) {
            a->acc_age[i] = b->acc_age[i];
            a->acc_at[i] = b->acc_at[i];
        }
        if (b->tok_age[i] && (!a->tok_age[i] || b->tok_age[i] < a->tok_age[i])) {
            a->tok_age[i] = b->tok_age[i];
            a->tok_at[i] = b->tok_at[i];
        }
    }
}

void sy_check_wgmma(SyK *s)
{
    Wg *w = arena_alloc(&s->ctx->arena, sizeof *w);
    w->s = s;
    sy_each_stmt(s, s->k->body, collect, w);
    if (!w->nacc)
        return;
    SyFlow f = {.s = s, .size = sizeof(WState), .join = wg_join, .stmt = wg_stmt, .u = w};
    for (uint32_t i = 0; i <= s->nroles; i++) {
        WState x;
        memset(&x, 0, sizeof x);
        sy_flow(&f, i ? sy_node(s, s->roles[i - 1])->d : s->k->body, &x);
    }
}
