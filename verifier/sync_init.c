/* sync_init.c — accumulators and variables read before anything is written to
 * them (E0764).
 *
 * A `reg` tile or `var` declared without an initial value holds garbage until
 * a statement writes it. A forward dataflow keeps, per such declaration,
 * whether some path from the declaration has written it ("may be written",
 * joined by union). Accumulating where no path has written it — a `wgmma`,
 * `mma` or `mfma` into it, a compound assignment (`+=`, `max=`), or a
 * reduction `x = x + ...` — reads garbage on every path. Writes through a slice
 * or an element count as writes (partial initialisation is not tracked), so
 * the check only reports what is certainly uninitialised. */
#include <string.h>
#include "sync.h"

#define MAXD 64

typedef struct { uint64_t wrote; } InitState;

typedef struct {
    SyK *s;
    NodeId decls[MAXD]; uint32_t ndecls;
    InitState *x;
} Init;

static int decl_ix(Init *in, NodeId d)
{
    for (uint32_t i = 0; d && i < in->ndecls; i++)
        if (in->decls[i] == d)
            return (int)i;
    return -1;
}

static void collect(SyK *s, NodeId st, void *u)
{
    Init *in = u;
    Node *n = sy_node(s, st);
    if ((n->op == OP_REG || n->op == OP_VAR) && !n->b && in->ndecls < MAXD)
        in->decls[in->ndecls++] = st;
}

/* the outermost loop around statement st that does not hold declaration decl */
static NodeId loop_between(SyK *s, NodeId st, NodeId decl)
{
    NodeId out = 0;
    for (NodeId l = sy_loop_of(s, st); l && !sy_encloses(s, l, decl); l = sy_loop_of(s, l))
        out = l;
    return out;
}

typedef struct { int effect; } Effect;

static void effect_of(SyK *s, NodeId e, void *u)
{
    ((Effect *)u)->effect |= (ir_ops[sy_node(s, e)->op].flags & (OF_MEM | OF_SYNC | OF_ASYNC | OF_WARP | OF_BLOCK)) != 0;
}

/* the last of the `let`s that open loop's body and only compute (a tile's
 * indices: no load, no pipeline or barrier), where a per-iteration clear goes;
 * 0 when the body opens otherwise */
static NodeId last_leading_let(SyK *s, NodeId loop)
{
    const Node *body = sy_node(s, sy_node(s, loop)->d);
    NodeId last = 0;
    for (uint32_t i = 0; body->op == OP_BLOCK && i < body->n; i++) {
        NodeId st = ir_list_at(s->k, body, i);
        if (sy_node(s, st)->op != OP_LET)
            break;
        Effect e = {0};
        sy_each_expr(s, sy_node(s, st)->b, effect_of, &e);
        if (e.effect)
            break;
        last = st;
    }
    return last;
}

static void report(Init *in, NodeId at, NodeId st, int d, const char *how)
{
    SyK *s = in->s;
    const char *name = ir_symstr(s->ctx, sy_node(s, in->decls[d])->name);
    Diag *r = sy_report(s, E0764, at, "%s `%s` before anything is written to it: it holds garbage", how, name);
    if (!r)
        return;
    diag_note(s->ctx, r, sy_span(s, in->decls[d]), "`%s` is declared here without a value", name);
    NodeId loop = loop_between(s, st, in->decls[d]);
    if (loop) { /* a value at the declaration is given once, not per iteration of this loop */
        uint32_t line, col, el, ec;
        span_linecol(s->ctx, sy_span(s, loop), &line, &col, &el, &ec);
        diag_note(s->ctx, r, sy_span(s, loop), "`%s` is declared outside this loop, which runs the use again "
                  "each iteration", name);
        diag_help(s->ctx, r, "if each iteration of the loop at line %u must start from zero (a persistent "
                  "kernel's tile loop), assign `%s = 0` in it before this first use: a value given at the "
                  "declaration is set once, and every later iteration would add to the last one's; if it "
                  "accumulates once for the whole kernel, initialise it where it is declared (`= 0`, or "
                  "`= -inf` for a running max)", line, name);
        NodeId let = last_leading_let(s, loop);
        if (let)
            diag_note(s->ctx, r, sy_span(s, let), "the iteration's indices are computed by here: the place for "
                      "`%s = 0` is after this line, before the first wait or load", name);
    } else {
        diag_help(s->ctx, r, "initialise it where it is declared (`= 0`, or `= -inf` for a running max) or "
                  "assign it before the first use");
    }
    in->x->wrote |= (uint64_t)1 << d; /* once per path */
}

typedef struct { Init *in; int d; NodeId hit; } SelfRead;

static void self_read(SyK *s, NodeId e, void *u)
{
    SelfRead *r = u;
    if (!r->hit && sy_node(s, e)->op == OP_NAME && decl_ix(r->in, sy_decl(s, e)) == r->d)
        r->hit = e;
}

static NodeId base_name(SyK *s, NodeId ref)
{
    for (int i = 0; ref && i < SY_MAX_DEPTH; i++) {
        Node *n = sy_node(s, ref);
        if (n->op == OP_NAME)
            return ref;
        if (n->op != OP_INDEX && n->op != OP_TRANS && n->op != OP_CAST)
            return 0;
        ref = n->a;
    }
    return 0;
}

static void written(Init *in, NodeId target)
{
    int d = decl_ix(in, sy_decl(in->s, base_name(in->s, target)));
    if (d >= 0)
        in->x->wrote |= (uint64_t)1 << d;
}

static int unwritten(Init *in, NodeId target)
{
    int d = decl_ix(in, sy_decl(in->s, base_name(in->s, target)));
    return d >= 0 && !(in->x->wrote >> d & 1) ? d : -1;
}

/* Reported: an accumulating tensor-core op into the declaration, a compound
 * assignment to it, and an assignment whose value reads its own target. */
static void init_stmt(SyFlow *f, NodeId st, void *state)
{
    Init *in = f->u;
    SyK *s = in->s;
    Node *n = sy_node(s, st);
    int d;
    in->x = state;
    switch (n->op) {
    case OP_REG: case OP_VAR:
        if ((d = decl_ix(in, st)) >= 0)
            in->x->wrote &= ~((uint64_t)1 << d);
        return;
    case OP_ASSIGN:
        if ((d = unwritten(in, n->a)) >= 0) {
            SelfRead r = {in, d, 0};
            sy_each_expr(s, n->b, self_read, &r);
            if (n->sub != OP_NONE)
                report(in, st, st, d, "this accumulates into");
            else if (r.hit)
                report(in, r.hit, st, d, "this reduces into");
        }
        written(in, n->a);
        return;
    case OP_WGMMA: case OP_MMA: case OP_MFMA:
        if (n->sub != 1 && (d = unwritten(in, n->a)) >= 0) /* `acc = a * b` only writes */
            report(in, st, st, d, "this accumulates into");
        written(in, n->a);
        return;
    default:
        return;
    }
}

static void init_join(SyFlow *f, void *dst, const void *src)
{
    (void)f;
    ((InitState *)dst)->wrote |= ((const InitState *)src)->wrote;
}

void sy_check_init(SyK *s)
{
    Init *in = arena_alloc(&s->ctx->arena, sizeof *in);
    memset(in, 0, sizeof *in);
    in->s = s;
    sy_each_stmt(s, s->k->body, collect, in);
    if (!in->ndecls)
        return;
    InitState top = {0}, x;
    SyFlow f = {.s = s, .size = sizeof top, .join = init_join, .stmt = init_stmt, .u = in};
    sy_flow(&f, s->k->body, &top);
    for (uint32_t i = 0; i < s->nroles; i++) {
        x = top;
        sy_flow(&f, sy_node(s, s->roles[i])->d, &x);
    }
}
