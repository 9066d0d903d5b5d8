/* coverage.c — do the grid and the per-thread tiling write every output
 * element the reference writes, and each exactly once?
 *
 * Decided concretely, at one sample shape of the dims that satisfies the
 * assumes (sync_exec.c's samples, and the same skewed so that no two dims are
 * equal; the one with two blocks or more per grid dimension, unequal extents,
 * the least work): every block of the grid is run with the interpreter, only
 * the slice of the kernel the stores depend on (one thread per issuing unit
 * for tile and TMA stores; for per-thread stores the first, second and last
 * thread of the role, or else of each warp, extrapolated when their boxes move
 * by a constant step, else every thread), and each store to an output marks
 * the box it writes
 * (element, `i : +VEC` slice, tile box, or the shared source's box for a
 * `tma.store`), clipped to the tensor (clipping and masks are the bounds
 * check's concern). The reference block's assignments mark what it writes
 * (implicit indices, constant indices, indices affine in one loop variable:
 * `y[m, q * 4]`; not those under an `if`, which may not happen).
 *   E0820  an element the reference writes that no block writes;
 *   E0821  an element two different threads (or blocks) write (not for
 *          `tma.store.add`, whose writers add);
 *   E0822  a note: coverage could not be decided (too large, an index the
 *          interpreter cannot evaluate, a reference target it cannot follow).
 * Outputs are the arguments the reference assigns to, except those atomics
 * add to (several writers by design, docs/tir.md 7.7); a store whose mask or
 * guard reads an atomic's old value is elected by it (one writer at run time,
 * whichever thread the static maps name). Then, where no error
 * was found, what only runs at scale: a persistent kernel (grid reads
 * `sm.count`) with 2 blocks resident, so that a grid-stride loop whose stride
 * is not the grid size shows; a scale sample with many row tiles (a grouped
 * rasterization's partial last group, every warpgroup of a role); and the
 * largest shape the upper-bound assumes admit (a row longer than the
 * registers hold). */
#include <string.h>
#include "sync.h"
#include "verify.h"

#define COV_MAX_ELEMS ((int64_t)1 << 18)   /* per output */
#define COV_SCALE_ELEMS ((int64_t)1 << 20) /* per output, at the scale sample */
#define SCALE_TILES 19                     /* row tiles at the scale sample: a partial last group of 3 for groups of 4, 8, 16 */
#define COV_MAX_RUNS 4096        /* blocks x threads run at one sample */
#define COV_BUDGET 400000L       /* interpreted statements at one sample */
#define COV_MAXOUT 8

typedef struct {
    NodeId arg;
    int rank;
    int64_t ext[IR_MAX_RANK];
    int64_t n;
    uint32_t *writer;            /* 0: never written, else 1 + writer id */
    uint8_t *ref;                /* the reference writes it */
    uint8_t *by_elected;         /* written by a store an atomic elects (elected_stores) */
    NodeId dup_at;               /* the first store that wrote an element twice */
    int dup_elected;             /* ... against a store an atomic elects (or it is one) */
    int64_t dup_elem;
    uint32_t dup_a, dup_b;
    int ref_known;
    int ref_all;                 /* the reference writes every element (ref left unmarked) */
    int64_t covered;             /* elements some store writes */
} Out;

#define COV_MAXREC 256           /* stores one probed thread may record */

typedef struct {
    NodeId st;
    int out;
    int64_t lo[IR_MAX_RANK], len[IR_MAX_RANK];
} Rec;

typedef struct {
    SyK *s;
    Out out[COV_MAXOUT]; int nout;
    Rec *rec; int nrec, overflow; /* probing a thread: its stores, not marked */
    Rec *recs;                    /* 3 x COV_MAXREC: the probes of one warp */
    NodeId roles[65]; int64_t step[65]; uint32_t nr; /* roles with output stores, threads between runs */
    NodeId ref_block;
    int64_t *unit;               /* per store statement: store_unit, 0 = not yet known */
    NodeId role;
    int64_t first;               /* the role's first thread */
    int64_t thread;              /* block thread being run */
    uint32_t writer_base;
    int undecided;               /* a store box the interpreter could not evaluate */
    int64_t max_elems;           /* per output at the current sample */
    NodeId max_at;               /* the max sample: an assume that bounds a dim (0: another sample) */
    int quiet;                   /* an extra sample (run_at_scale): no E0822 when it cannot run */
    NodeId undecided_at;
    uint8_t *elected;            /* per node: a store an atomic's result elects (elected_stores) */
} Cov;

/* ---- outputs and what the reference writes -------------------------------- */

static NodeId target_arg(SyK *s, NodeId ref, NodeId *index)
{
    *index = 0;
    Node *n = sy_node(s, ref);
    if (n->op == OP_INDEX) {
        *index = ref;
        ref = n->a;
    }
    NodeId d = sy_decl(s, ref);
    return d && sy_node(s, d)->op == OP_ARG && sy_node(s, sy_node(s, d)->a)->op == OP_GTYPE ? d : 0;
}

static Out *out_of(Cov *c, NodeId arg)
{
    for (int i = 0; i < c->nout; i++)
        if (c->out[i].arg == arg)
            return &c->out[i];
    return NULL;
}

static void find_outputs(SyK *s, NodeId e, void *u)
{
    Cov *c = u;
    NodeId ix, arg;
    if (sy_node(s, e)->op != OP_ASSIGN || !(arg = target_arg(s, sy_node(s, e)->a, &ix)) || out_of(c, arg) ||
        c->nout == COV_MAXOUT)
        return;
    c->out[c->nout++].arg = arg;
}

/* Outputs that atomics accumulate into (docs/tir.md 7.7) are no one's single
 * writes: several threads add to one element by design, and which of them
 * comes last is not a property of the index maps. Coverage leaves them out. */
static void drop_atomic_outputs(Cov *c)
{
    SyK *s = c->s;
    for (NodeId i = 1; i < s->k->nnodes; i++) {
        Node *n = sy_node(s, i);
        NodeId ix, arg;
        if ((n->op != OP_STORE && n->op != OP_LOAD) || !n->sub || !(arg = target_arg(s, n->a, &ix)))
            continue;
        Out *o = out_of(c, arg);
        if (o)
            *o = c->out[--c->nout];
    }
}

/* 1 when e reads the old value of an atomic, itself or through `let`s */
static int reads_atomic(SyK *s, NodeId e, int depth)
{
    if (!e || depth > 64)
        return 0;
    Node *n = sy_node(s, e);
    if (n->op == OP_LOAD && n->sub)
        return 1;
    if (n->op == OP_NAME) {
        NodeId d = sy_decl(s, e);
        return d && sy_node(s, d)->op == OP_LET && reads_atomic(s, sy_node(s, d)->b, depth + 1);
    }
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        if (reads_atomic(s, kids[i], depth + 1))
            return 1;
    for (uint32_t i = 0; i < n->n; i++)
        if (reads_atomic(s, ir_list_at(s->k, n, i), depth + 1))
            return 1;
    return 0;
}

/* Stores whose mask or guard reads an atomic's old value — the "last
 * arriver" of docs/tir.md 7.7 (`store C[..] <- .. mask old == SPLIT - 1`):
 * the atomic elects one writer per element at run time, so the threads and
 * blocks that may take such a store are not two writers. Their writes still
 * count for coverage (some thread is elected), and a second store writing the
 * same element is still a race. */
static void elected_stores(Cov *c)
{
    SyK *s = c->s;
    for (NodeId i = 1; i < s->k->nnodes; i++) {
        Node *n = sy_node(s, i);
        if (n->op != OP_STORE || n->sub)
            continue;
        int el = reads_atomic(s, n->c, 0);
        for (NodeId p = s->up[i]; p && !el; p = s->up[p])
            el = sy_node(s, p)->op == OP_IF && reads_atomic(s, sy_node(s, p)->a, 0);
        if (!el)
            continue;
        if (!c->elected)
            c->elected = arena_alloc(&s->ctx->arena, s->k->nnodes);
        c->elected[i] = 1;
    }
}

static int out_shape(SyExec *x, Out *o, int64_t max_elems)
{
    Node *g = sy_node(sy_xk(x), sy_node(sy_xk(x), o->arg)->a);
    o->rank = g->sub;
    o->n = 1;
    if (o->rank < 1 || o->rank > IR_MAX_RANK)
        return 0;
    for (int i = 0; i < o->rank; i++) {
        if (!sy_eval(x, ir_list_at(sy_xk(x)->k, g, (uint32_t)i), &o->ext[i]) || o->ext[i] < 1)
            return 0;
        o->n *= o->ext[i];
        if (o->n > max_elems)
            return 0;
    }
    return 1;
}

/* marks box [lo, lo + len) per dimension, clipped to the tensor */
static void mark_box(Cov *c, Out *o, const int64_t *lo, const int64_t *len, int is_ref, NodeId at, uint32_t who)
{
    int elected = !is_ref && c->elected && c->elected[at];
    int64_t a[IR_MAX_RANK], b[IR_MAX_RANK], i[IR_MAX_RANK];
    for (int d = 0; d < o->rank; d++) {
        a[d] = lo[d] < 0 ? 0 : lo[d];
        b[d] = lo[d] + len[d] > o->ext[d] ? o->ext[d] : lo[d] + len[d];
        if (a[d] >= b[d])
            return;
        i[d] = a[d];
    }
    int r = o->rank - 1, all = 1;
    for (int d = 0; d < o->rank; d++)
        all &= a[d] == 0 && b[d] == o->ext[d];
    if (is_ref && all) { /* the whole tensor: counted, not marked */
        o->ref_all = 1;
        return;
    }
    uint32_t *w = o->writer;     /* locals: the stores below cannot move them */
    int64_t covered = 0;
    /* `tma.store.add` accumulates: many writers of one element are its point */
    int adds = !is_ref && at && sy_node(c->s, at)->op == OP_TMA_STORE && sy_node(c->s, at)->sub == 1;
    for (;;) {
        int64_t e = 0;
        for (int d = 0; d < r; d++)
            e = e * o->ext[d] + i[d];
        e = e * o->ext[r];
        if (is_ref) {
            memset(o->ref + e + a[r], 1, (size_t)(b[r] - a[r]));
        } else {
            for (int64_t j = e + a[r]; j < e + b[r]; j++) {
                if (!w[j]) {
                    w[j] = who;
                    o->by_elected[j] = (uint8_t)elected;
                    covered++;
                } else if (!adds && !o->dup_at && (elected != o->by_elected[j] || /* elected: not known to be this thread */
                                                   (w[j] != who && !elected))) {
                    o->dup_at = at;
                    o->dup_elem = j;
                    o->dup_a = w[j];
                    o->dup_b = who;
                    o->dup_elected = elected != o->by_elected[j];
                    if (o->dup_elected && elected)   /* dup_b: the plain store's writer */
                        o->dup_b = w[j];
                }
            }
        }
        int d = r - 1;
        while (d >= 0 && ++i[d] == b[d]) {
            i[d] = a[d];
            d--;
        }
        if (d < 0)
            break;
    }
    o->covered += covered;
    (void)c;
}

/* What the reference writes along one dimension: count runs of len
 * elements, stride apart, from lo. */
typedef struct { int64_t lo, len, stride, count; } RefDim;

/* 1 when e reads loop variable q */
static int ref_reads(SyK *s, NodeId e, NodeId q, int depth)
{
    Node *n = e ? sy_node(s, e) : NULL;
    if (!n || depth > 32)
        return depth > 32;
    if (n->op == OP_NAME)
        return sy_decl(s, e) == q;
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        if (ref_reads(s, kids[i], q, depth + 1))
            return 1;
    for (uint32_t i = 0; i < n->n; i++)
        if (ref_reads(s, ir_list_at(s->k, n, i), q, depth + 1))
            return 1;
    return 0;
}

/* 1 when e is affine in loop variable q: q, terms without q (evaluated
 * later: they must not depend on q through a `let` or another loop, which the
 * evaluator does not know here), + - and * by a term without q */
static int ref_affine(SyK *s, NodeId e, NodeId q, int depth)
{
    Node *n = sy_node(s, e);
    if (depth > 32)
        return 0;
    if (!ref_reads(s, e, q, 0))
        return 1;
    switch (n->op) {
    case OP_NAME: return 1;
    case OP_CAST: case OP_NEG: return ref_affine(s, n->a, q, depth + 1);
    case OP_ADD: case OP_SUB: return ref_affine(s, n->a, q, depth + 1) && ref_affine(s, n->b, q, depth + 1);
    case OP_MUL:
        return (!ref_reads(s, n->a, q, 0) && ref_affine(s, n->b, q, depth + 1)) ||
               (!ref_reads(s, n->b, q, 0) && ref_affine(s, n->a, q, depth + 1));
    default: return 0;
    }
}

/* the reference loop whose variable index e reads (the first name of a `for`
 * met); 0 when none */
static NodeId ref_loop_of(SyK *s, NodeId e, int depth)
{
    Node *n = sy_node(s, e);
    if (!e || depth > 32)
        return 0;
    if (n->op == OP_NAME) {
        NodeId d = sy_decl(s, e);
        return d && sy_node(s, d)->op == OP_FOR ? d : 0;
    }
    NodeId kids[4] = {n->a, n->b, n->c, n->d}, q;
    for (int i = 0; i < 4; i++)
        if (kids[i] && (q = ref_loop_of(s, kids[i], depth + 1)))
            return q;
    return 0;
}

/* the reference: implicit indices (the whole dimension), integer constants,
 * and indices affine in one loop variable (`q * 4 + 1` for q in lo .. hi
 * step st: the loop's values, evaluated at its first two iterations) */
static int ref_index(SyExec *x, NodeId e, int64_t ext, RefDim *r, NodeId *loop)
{
    SyK *s = sy_xk(x);
    Node *n = sy_node(s, e);
    *loop = 0;
    r->stride = 1;
    r->count = 1;
    if (n->op == OP_NAME) {
        NodeId d = sy_decl(s, e);
        if (d == e || (n->flags & NF_IMPLICIT)) {
            r->lo = 0;
            r->len = ext;
            return 1;
        }
    }
    if (sy_const(s, e, &r->lo)) {
        r->len = 1;
        return 1;
    }
    NodeId q = ref_loop_of(s, e, 0);
    Node *f = q ? sy_node(s, q) : NULL;
    int64_t a, b, st = 1, i0, i1;
    if (!f || !ref_affine(s, e, q, 0) || !sy_eval(x, f->a, &a) || !sy_eval(x, f->b, &b) ||
        (f->c && !sy_eval(x, f->c, &st)) || st <= 0)
        return 0;
    *loop = q;
    x->has[q] = 1;
    x->val[q] = a;
    int ok = sy_eval(x, e, &i0);
    x->val[q] = a + st;
    ok = ok && sy_eval(x, e, &i1);
    x->has[q] = 0;
    if (!ok)
        return 0;
    int64_t count = b > a ? (b - a + st - 1) / st : 0, step = i1 - i0;
    if (count > ((int64_t)1 << 30) || step > ((int64_t)1 << 30) || step < -((int64_t)1 << 30)) /* no overflow below */
        return 0;
    if (step < 0) { /* the same elements, from the lowest */
        i0 += (count - 1) * step;
        step = -step;
    }
    r->lo = i0;
    r->len = 1;
    if (step <= 1) { /* one run (a constant index written count times counts once) */
        r->len = step ? count : count > 0;
        return 1;
    }
    r->stride = step;
    r->count = count;
    return 1;
}

/* marks the runs of each dimension of the reference's assignment, clipped
 * to the tensor by mark_box */
static void ref_mark(Cov *c, Out *o, RefDim *r, NodeId st)
{
    int64_t lo[IR_MAX_RANK], len[IR_MAX_RANK], k[IR_MAX_RANK] = {0};
    for (int d = 0; d < o->rank; d++) {
        if (r[d].count < 1 || r[d].len < 1)
            return;
        int64_t stop = (o->ext[d] - r[d].lo + r[d].stride - 1) / r[d].stride; /* runs starting inside */
        if (stop < 1)
            return;
        if (r[d].count > stop) /* the rest start past the tensor */
            r[d].count = stop;
        len[d] = r[d].len;
    }
    for (;;) {
        for (int d = 0; d < o->rank; d++)
            lo[d] = r[d].lo + k[d] * r[d].stride;
        mark_box(c, o, lo, len, 1, st, 0);
        int d = o->rank - 1;
        while (d >= 0 && ++k[d] >= r[d].count)
            k[d--] = 0;
        if (d < 0)
            return;
    }
}

static void ref_assign(SyK *s, NodeId st, void *u)
{
    SyExec *x = u;
    Cov *c = x->u;
    NodeId ix, arg;
    if (sy_node(s, st)->op != OP_ASSIGN || !(arg = target_arg(s, sy_node(s, st)->a, &ix)))
        return;
    Out *o = out_of(c, arg);
    if (!o || !o->ref)
        return;
    RefDim r[IR_MAX_RANK];
    NodeId loops[IR_MAX_RANK];
    Node *in = ix ? sy_node(s, ix) : NULL;
    if (!in || (int)in->n != o->rank) {
        o->ref_known = 0;
        return;
    }
    for (int d = 0; d < o->rank; d++) {
        int ok = ref_index(x, ir_list_at(s->k, in, (uint32_t)d), o->ext[d], &r[d], &loops[d]);
        for (int e = 0; ok && loops[d] && e < d; e++) /* one loop per dimension: a box of runs */
            ok = loops[e] != loops[d];
        if (!ok) {
            o->ref_known = 0;
            return;
        }
    }
    ref_mark(c, o, r, st);
}

/* the reference's assignments; those under an `if` may not happen, so the
 * elements they write are not required of the kernel (not marked) */
static void ref_walk(SyK *s, NodeId st, SyExec *x)
{
    Node *n = st ? sy_node(s, st) : NULL;
    if (!n)
        return;
    switch (n->op) {
    case OP_BLOCK:
        for (uint32_t i = 0; i < n->n; i++)
            ref_walk(s, ir_list_at(s->k, n, i), x);
        break;
    case OP_FOR: ref_walk(s, n->d, x); break;
    case OP_ASSIGN: ref_assign(s, st, x); break;
    default: break;
    }
}

/* ---- the kernel's stores ------------------------------------------------------ */

static void widest_layout(SyK *s, NodeId e, void *u)
{
    uint8_t *ly = u;
    NodeId d = sy_node(s, e)->op == OP_NAME ? sy_decl(s, e) : 0;
    if (!d || sy_node(s, d)->op != OP_REG || !(sy_node(s, d)->flags & NF_HAS_LAYOUT))
        return;
    uint8_t l = sy_node(s, d)->v.attr.layout;
    if (l < LY__COUNT && ir_layout_scope[l] > ir_layout_scope[*ly])
        *ly = l;
}

/* threads per unit that issues statement st once (1: every thread); a value
 * that reads a distributed register tile element-wise (`bf16(acc[r, c])`) is
 * stored by the tile's owners, in its layout */
static int64_t store_unit(SyK *s, NodeId st, NodeId role)
{
    Node *n = sy_node(s, st);
    if (n->op == OP_TMA_STORE)
        return sy_unit_size(s, role);
    Node *v = sy_node(s, n->b);
    uint8_t ly = v->type && v->type < s->k->ntypes ? s->k->types[v->type].layout : (uint8_t)LY_NONE;
    if (ly == LY_NONE)
        sy_each_expr(s, n->b, widest_layout, &ly);
    int64_t first, count;
    switch (ir_layout_scope[ly]) {
    case SC_WARP: return s->warp;
    case SC_WARPGROUP: return tg_unit_threads(s->tg, UNIT_WARPGROUPS);
    case SC_BLOCK: return sy_role_range(s, role, &first, &count) ? count : 0;
    default: return 1;
    }
}

/* the loops whose variable a store's index names (a tail loop that starts one
 * element late), noted once each */
typedef struct {
    Diag *d;
    int n;
    NodeId seen[4];
} LoopNotes;

static void note_loop(SyK *s, NodeId e, void *u)
{
    LoopNotes *ln = u;
    NodeId f = sy_node(s, e)->op == OP_NAME ? sy_node(s, e)->decl : 0;
    if (!f || sy_node(s, f)->op != OP_FOR || ln->n == 4)
        return;
    for (int i = 0; i < ln->n; i++)
        if (ln->seen[i] == f)
            return;
    ln->seen[ln->n++] = f;
    diag_note(s->ctx, ln->d, sy_span(s, f), "`%s` runs over this loop's range",
              ir_symstr(s->ctx, sy_node(s, f)->name));
}

static int out_of_bounds(const Out *o, const int64_t *lo, const int64_t *len)
{
    for (int d = 0; d < o->rank; d++)
        if (lo[d] + len[d] <= 0 || lo[d] >= o->ext[d])
            return 1;
    return 0;
}

/* Marks the box a store writes (or, while probing, records it: a store
 * masked off entirely outside the tensor is recorded too, so that the lanes of
 * a ragged edge still extrapolate; one masked off inside it stops the probe) */
static void store_box(SyExec *x, NodeId st)
{
    Cov *c = x->u;
    SyK *s = c->s;
    Node *n = sy_node(s, st);
    if (n->op != OP_STORE && n->op != OP_TMA_STORE)
        return;
    NodeId ix, arg = target_arg(s, n->a, &ix);
    Out *o = arg ? out_of(c, arg) : NULL;
    if (!o || !o->writer)
        return;
    if (!c->unit[st])
        c->unit[st] = store_unit(s, st, c->role);
    int64_t unit = c->unit[st], m;
    if (unit < 1 || (c->thread - c->first) % unit)
        return;
    int masked = n->op == OP_STORE && n->c && sy_eval(x, n->c, &m) && !m;
    if (masked && !c->rec)
        return;
    Node *in = ix ? sy_node(s, ix) : NULL;
    int64_t lo[IR_MAX_RANK] = {0}, len[IR_MAX_RANK] = {0};
    const Type *src = NULL;
    if (n->op == OP_TMA_STORE) {
        Node *b = sy_node(s, n->b);
        src = b->type && b->type < s->k->ntypes ? &s->k->types[b->type] : NULL;
        if (!src || src->rank < 1 || src->rank > o->rank || src->transposed)
            goto undecided;
    }
    if (!in || (int)in->n != o->rank)
        goto undecided;
    for (int d = 0; d < o->rank; d++) {
        Node *e = sy_node(s, ir_list_at(s->k, in, (uint32_t)d));
        NodeId start = e->op == OP_SLICE ? e->a : ir_list_at(s->k, in, (uint32_t)d);
        if (e->op == OP_COLON) {
            lo[d] = 0;
            len[d] = o->ext[d];
        } else if (!sy_eval(x, start, &lo[d])) {
            goto undecided;
        } else if (e->op == OP_SLICE && !sy_eval(x, e->b, &len[d])) {
            goto undecided;
        } else if (e->op != OP_SLICE) {
            len[d] = 1;
        }
        if (src) { /* the box of the shared source, innermost dimensions aligned */
            int sd = d - (o->rank - src->rank);
            len[d] = sd >= 0 ? src->shape[sd] : 1;
            if (len[d] < 1)
                goto undecided;
        }
    }
    if (c->rec) { /* probing: recorded, marked by run_warp */
        if (c->nrec == COV_MAXREC) {
            c->overflow = 1;
            return;
        }
        if (masked && !out_of_bounds(o, lo, len)) { /* a mask that drops in-bounds elements */
            c->overflow = 1;
            return;
        }
        Rec *r = &c->rec[c->nrec++];
        r->st = st;
        r->out = (int)(o - c->out);
        memcpy(r->lo, lo, sizeof r->lo);
        memcpy(r->len, len, sizeof r->len);
        return;
    }
    mark_box(c, o, lo, len, 0, st, c->writer_base + (uint32_t)(c->thread + 1));
    return;
undecided:
    if (!c->undecided) {
        c->undecided = 1;
        c->undecided_at = st;
    }
}

typedef struct { NodeId role; int64_t unit; int any; } Units;

static void role_units(SyK *s, NodeId st, void *u)
{
    Units *r = u;
    Node *n = sy_node(s, st);
    NodeId ix;
    if ((n->op != OP_STORE && n->op != OP_TMA_STORE) || s->role[st] != r->role || !target_arg(s, n->a, &ix))
        return;
    int64_t unit = store_unit(s, st, r->role);
    r->unit = !r->any || unit < r->unit ? unit : r->unit;
    r->any = 1;
}

static const char *elem_text(SyK *s, Out *o, int64_t e)
{
    int64_t idx[IR_MAX_RANK];
    for (int d = o->rank - 1; d >= 0; d--) {
        idx[d] = e % o->ext[d];
        e /= o->ext[d];
    }
    char *t = ir_fmt(s->ctx, "%s[", ir_symstr(s->ctx, sy_node(s, o->arg)->name));
    for (int d = 0; d < o->rank; d++)
        t = ir_fmt(s->ctx, "%s%s%lld", t, d ? ", " : "", (long long)idx[d]);
    return ir_fmt(s->ctx, "%s]", t);
}

static const char *writer_text(SyK *s, uint32_t w, int64_t bt, const int64_t *grid)
{
    int64_t t = (int64_t)(w - 1) % bt, b = (int64_t)(w - 1) / bt;
    int64_t bx = b % grid[0], by = b / grid[0] % grid[1], bz = b / grid[0] / grid[1];
    return ir_fmt(s->ctx, "block (%lld, %lld, %lld), thread %lld", (long long)bx, (long long)by, (long long)bz,
                  (long long)t);
}

static void note_undecided(SyK *s, NodeId at, const char *why)
{
    Diag *d = sy_report(s, E0822, at, "the coverage of the outputs is not decided: %s", why);
    (void)d;
}

/* ---- the slice of the kernel the stores depend on ----------------------------
 * Only the output stores, the control around them and the integer values their
 * indices, masks, guards and loop bounds use are run: the rest (loads, math,
 * synchronization) cannot change which elements a thread stores. */
typedef struct { SyK *s; Cov *c; uint8_t *need, *rel; int changed; } Slice;

static void need_names(SyK *s, NodeId e, void *u)
{
    Slice *sl = u;
    NodeId d = sy_node(s, e)->op == OP_NAME ? sy_decl(s, e) : 0;
    if (d && !sl->need[d]) {
        sl->need[d] = 1;
        sl->changed = 1;
    }
}

static void relevant(Slice *sl, NodeId st)
{
    SyK *s = sl->s;
    for (NodeId p = st; p && !sl->rel[p]; p = s->up[p]) {
        Node *n = sy_node(s, p);
        sl->rel[p] = 1;
        sl->changed = 1;
        if (n->op == OP_IF)
            sy_each_expr(s, n->a, need_names, sl);
        if (n->op == OP_FOR) {
            sy_each_expr(s, n->a, need_names, sl);
            sy_each_expr(s, n->b, need_names, sl);
            sy_each_expr(s, n->c, need_names, sl);
        }
    }
}

static void slice_stmt(SyK *s, NodeId st, void *u)
{
    Slice *sl = u;
    Node *n = sy_node(s, st);
    NodeId ix;
    switch (n->op) {
    case OP_STORE: case OP_TMA_STORE:
        if (target_arg(s, n->a, &ix) && out_of(sl->c, target_arg(s, n->a, &ix))) {
            relevant(sl, st);
            sy_each_expr(s, n->a, need_names, sl);
            sy_each_expr(s, n->c, need_names, sl);
        }
        break;
    case OP_LET: case OP_VAR:
        if (sl->need[st]) {
            relevant(sl, st);
            sy_each_expr(s, n->b, need_names, sl);
        }
        break;
    case OP_ASSIGN:
        if (sy_node(s, n->a)->op == OP_NAME && sl->need[sy_decl(s, n->a)]) {
            relevant(sl, st);
            sy_each_expr(s, n->b, need_names, sl);
        }
        break;
    case OP_RETURN: relevant(sl, st); break;
    default: break;
    }
}

static uint8_t *store_slice(Cov *c)
{
    SyK *s = c->s;
    uint32_t nn = s->k->nnodes;
    Slice sl = {s, c, arena_alloc(&s->ctx->arena, nn), arena_alloc(&s->ctx->arena, nn), 1};
    for (int it = 0; it < 32 && sl.changed; it++) {
        sl.changed = 0;
        sy_each_stmt(s, s->k->body, slice_stmt, &sl);
    }
    for (NodeId i = 1; i < nn; i++) /* the slice's complement */
        sl.rel[i] = !sl.rel[i];
    return sl.rel;
}

typedef struct {
    int64_t grid[3], blocks, runs;
    NodeId roles[65]; int64_t step[65]; uint32_t nr;
} Plan;

/* the grid, the threads to run and the outputs' sizes at the current sample;
 * 0 when it cannot be run (unknown, or too large) */
static int plan_sample(Cov *c, SyExec *x, Plan *p)
{
    SyK *s = c->s;
    Kernel *k = s->k;
    memset(p, 0, sizeof *p);
    p->grid[0] = p->grid[1] = p->grid[2] = 1;
    for (uint32_t d = 0; d < k->ngrid && d < 3; d++)
        if (!sy_eval(x, k->grid[d], &p->grid[d]) || p->grid[d] < 1)
            return 0;
    p->blocks = p->grid[0] * p->grid[1] * p->grid[2];
    if (s->block_threads < 1 || p->blocks > COV_MAX_RUNS)
        return 0;
    for (uint32_t i = 0; i < c->nr; i++) {
        int64_t first, count;
        sy_role_range(s, c->roles[i], &first, &count);
        p->roles[i] = c->roles[i];
        p->step[i] = c->step[i];
        /* per-thread stores: at most three probes per warp, unless they do not extrapolate */
        p->runs += p->blocks * (c->step[i] == 1 ? 3 * ((count + s->warp - 1) / s->warp) : count / c->step[i]);
    }
    p->nr = c->nr;
    if (!p->nr || p->runs > COV_MAX_RUNS)
        return 0;
    for (int i = 0; i < c->nout; i++)
        if (!out_shape(x, &c->out[i], c->max_elems))
            return 0;
    return 1;
}

/* runs block thread t of c->role; with rec, its stores are recorded into rec
 * (c->nrec of them) instead of marked; 0 when the run was not decided */
static int run_thread(Cov *c, SyExec *x, int64_t t, Rec *rec)
{
    c->thread = t;
    c->rec = rec;
    c->nrec = c->overflow = 0;
    sy_exec_thread(x, c->role, t);
    x->role = c->role;
    x->stopped = x->unknown = 0;
    sy_exec(x, c->s->k->body);
    c->rec = NULL;
    return !x->unknown && x->budget >= 0 && !c->undecided && !c->overflow;
}

static int run_lanes(Cov *c, SyExec *x, int64_t t0, int64_t tl)
{
    for (int64_t t = t0; t <= tl; t++)
        if (!run_thread(c, x, t, NULL))
            return 0;
    return 1;
}

/* 1 when the stores of thread a + k * (b - a) extrapolate to those of thread l */
static int affine(const Rec *a, const Rec *b, const Rec *l, int n, int64_t k, int rank)
{
    for (int i = 0; i < n; i++) {
        if (a[i].st != b[i].st || a[i].st != l[i].st || a[i].out != b[i].out || a[i].out != l[i].out)
            return 0;
        for (int d = 0; d < rank && d < IR_MAX_RANK; d++)
            if (a[i].len[d] != b[i].len[d] || a[i].len[d] != l[i].len[d] ||
                l[i].lo[d] != a[i].lo[d] + k * (b[i].lo[d] - a[i].lo[d]))
                return 0;
    }
    return 1;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* marks record a of lanes t0 + k, k = 0 .. kn, moving by (b - a) per lane;
 * only the lanes whose box meets the tensor are visited. A lane whose box
 * straddles the tensor's edge (part inside, part outside) is not marked but
 * listed in edge[] (at most 8): its store is masked there, and what it writes
 * instead (a tail loop, or nothing) is only known by running it */
static void mark_lanes(Cov *c, const Rec *a, const Rec *b, int64_t t0, int64_t kn,
                       int64_t *edge, int *nedge)
{
    Out *o = &c->out[a->out];
    int64_t klo = 0, khi = kn, lo[IR_MAX_RANK];
    for (int d = 0; d < o->rank; d++) {
        int64_t dl = b->lo[d] - a->lo[d], l0 = a->lo[d], len = a->len[d];
        if (!dl) {
            if (l0 + len <= 0 || l0 >= o->ext[d])
                return;
            continue;
        }
        /* l0 + k dl + len > 0 and l0 + k dl < ext, widened by one lane (mark_box clips) */
        int64_t k1 = floor_div(-len - l0, dl), k2 = floor_div(o->ext[d] - l0, dl);
        int64_t kmin = k1 < k2 ? k1 : k2, kmax = k1 < k2 ? k2 : k1;
        klo = kmin > klo ? kmin : klo;
        khi = kmax < khi ? kmax : khi;
    }
    for (int64_t k = klo; k <= khi; k++) {
        int straddles = 0;
        for (int d = 0; d < IR_MAX_RANK; d++) {
            lo[d] = a->lo[d] + k * (b->lo[d] - a->lo[d]);
            if (d < o->rank && b->lo[d] != a->lo[d])
                straddles |= (lo[d] < o->ext[d] && lo[d] + a->len[d] > o->ext[d]) ||
                             (lo[d] < 0 && lo[d] + a->len[d] > 0);
        }
        if (straddles && *nedge < 8) {
            edge[(*nedge)++] = t0 + k;
            continue;
        }
        mark_box(c, o, lo, a->len, 0, a->st, c->writer_base + (uint32_t)(t0 + k + 1));
    }
}

static void mark_recs(Cov *c, const Rec *r, int n, int64_t t, int64_t k, const Rec *b)
{
    for (int i = 0; i < n; i++) {
        Out *o = &c->out[r[i].out];
        int64_t lo[IR_MAX_RANK];
        for (int d = 0; d < IR_MAX_RANK; d++)
            lo[d] = b ? r[i].lo[d] + k * (b[i].lo[d] - r[i].lo[d]) : r[i].lo[d];
        mark_box(c, o, lo, r[i].len, 0, r[i].st, c->writer_base + (uint32_t)(t + 1));
    }
}

/* Threads t0 .. tl of a role whose stores are per-thread: the first, second
 * and last are run; when their stores are the same statements with the same
 * boxes moving by a constant step per thread, the others are extrapolated and
 * marked (1). -1: they are not (nothing marked); 0: a run was not decided. */
static int probe(Cov *c, SyExec *x, int64_t t0, int64_t tl)
{
    SyK *s = c->s;
    if (!c->recs)
        c->recs = arena_alloc(&s->ctx->arena, 3 * COV_MAXREC * sizeof *c->recs);
    Rec *ra = c->recs, *rb = ra + COV_MAXREC, *rl = rb + COV_MAXREC;
    if (!run_thread(c, x, t0, ra))
        return c->overflow ? -1 : 0;
    int na = c->nrec, rank = 0;
    if (tl == t0) {
        mark_recs(c, ra, na, t0, 0, NULL);
        return 1;
    }
    if (!run_thread(c, x, t0 + 1, rb))
        return c->overflow ? -1 : 0;
    int nb = c->nrec;
    if (!run_thread(c, x, tl, rl))
        return c->overflow ? -1 : 0;
    int nl = c->nrec;
    for (int i = 0; i < c->nout; i++)
        rank = c->out[i].rank > rank ? c->out[i].rank : rank;
    if (na != nb || na != nl || !affine(ra, rb, rl, na, tl - t0, rank))
        return -1;
    int64_t edge[8];
    int nedge = 0;
    for (int i = 0; i < na; i++)
        mark_lanes(c, &ra[i], &rb[i], t0, tl - t0, edge, &nedge);
    for (int i = 0; i < nedge; i++) /* the ragged edge's lanes: what they really store */
        if (!run_thread(c, x, edge[i], NULL))
            return 0;
    return 1;
}

/* The threads of a role with per-thread stores (first .. end - 1): probed as a
 * whole (indices affine in thread.x), else warp by warp (affine in lane), else
 * thread by thread. 0 when a run was not decided. */
static int run_role_threads(Cov *c, SyExec *x, int64_t first, int64_t end)
{
    int r = probe(c, x, first, end - 1);
    if (r >= 0)
        return r;
    for (int64_t t0 = first; t0 < end; t0 += c->s->warp) {
        int64_t tl = t0 + c->s->warp < end ? t0 + c->s->warp - 1 : end - 1;
        r = probe(c, x, t0, tl);
        if (r == 0 || (r < 0 && !run_lanes(c, x, t0, tl)))
            return 0;
    }
    return 1;
}

static int mentions_block_x(SyK *s, NodeId e, int depth)
{
    if (!e || depth > 32)
        return 0;
    const Node *n = sy_node(s, e);
    if (n->op == OP_SPECIAL)
        return n->sub == SR_BLOCK_X;
    return mentions_block_x(s, n->a, depth + 1) || mentions_block_x(s, n->b, depth + 1);
}

/* at a sample with fewer blocks than SMs: a grid-stride loop over tiles
   (`for t in block.x .. NT step S`) whose step is a constant */
static void note_literal_stride(SyK *s, Diag *d)
{
    for (NodeId e = 1; e < s->k->nnodes; e++) {
        const Node *n = sy_node(s, e);
        int64_t c;
        if (n->op != OP_FOR || !n->c || !s->pos[e] || !mentions_block_x(s, n->a, 0) || !sy_const(s, n->c, &c))
            continue;
        diag_note(s->ctx, d, sy_span(s, n->c), "this grid-stride loop steps by %lld, not by the grid size: with "
                  "fewer blocks than that (a GPU with fewer SMs; sm.count here) tiles are skipped", (long long)c);
        diag_help(s->ctx, d, "step a persistent tile loop by `grid.x`: `for t in block.x .. NT step grid.x`");
        return;
    }
}

/* runs every block at the current sample (planned by plan_sample) */
static void run_sample(Cov *c, SyExec *x, const Plan *p)
{
    SyK *s = c->s;
    int64_t bt = s->block_threads, blocks = p->blocks;
    const int64_t *grid = p->grid;
    uint32_t nr = p->nr;
    const NodeId *roles = p->roles;
    const int64_t *step = p->step;
    for (int i = 0; i < c->nout; i++) {
        Out *o = &c->out[i];
        out_shape(x, o, c->max_elems);
        o->writer = arena_alloc(&s->ctx->arena, (size_t)o->n * sizeof *o->writer);
        o->ref = arena_alloc(&s->ctx->arena, (size_t)o->n);
        o->by_elected = arena_alloc(&s->ctx->arena, (size_t)o->n);
        /* arena_alloc zeroes */
        o->ref_known = 1;
        o->ref_all = 0;
        o->covered = 0;
        o->dup_at = 0;
        o->dup_elected = 0;
    }
    x->u = c;
    ref_walk(s, c->ref_block, x);
    x->budget = c->quiet ? COV_BUDGET / 4 : COV_BUDGET; /* extra samples: a quarter, or nothing */
    x->stmt = store_box;
    x->skip = store_slice(c);
    c->unit = arena_alloc(&s->ctx->arena, s->k->nnodes * sizeof *c->unit);
    for (int64_t b = 0; b < blocks; b++) {
        x->spec[SR_BLOCK_X] = b % grid[0];
        x->spec[SR_BLOCK_Y] = b / grid[0] % grid[1];
        x->spec[SR_BLOCK_Z] = b / grid[0] / grid[1];
        c->writer_base = (uint32_t)(b * bt);
        for (uint32_t r = 0; r < nr; r++) {
            int64_t first, count;
            sy_role_range(s, roles[r], &first, &count);
            c->role = roles[r];
            c->first = first;
            for (int64_t t = first; t < first + count; t += step[r] == 1 ? count : step[r]) {
                int ok = step[r] == 1 ? run_role_threads(c, x, t, first + count) : run_thread(c, x, t, NULL);
                if (!ok) {
                    if (c->quiet) /* an extra sample that cannot run: nothing learnt, nothing said */
                        return;
                    note_undecided(s, c->undecided ? c->undecided_at : s->k->body,
                                   c->undecided ? "the interpreter cannot evaluate the box this store writes"
                                   : x->unknown ? "a condition or loop bound the interpreter cannot evaluate"
                                   : "too much work to simulate every block");
                    return;
                }
            }
        }
    }
    for (int i = 0; i < c->nout; i++) {
        Out *o = &c->out[i];
        if (o->dup_at && o->dup_elected) {
            Diag *d = sy_report(s, E0821, o->dup_at, "at %s, %s is written by a store an atomic elects (the last "
                                "arriver, whichever thread that is at run time) and by a plain store of %s",
                                sy_sample_text(x), elem_text(s, o, o->dup_elem), writer_text(s, o->dup_b, bt, grid));
            if (d)
                diag_help(s->ctx, d, "the elected store is the element's only writer: drop the other store, or "
                          "mask it off where the elected one writes");
        } else if (o->dup_at) {
            Diag *d = sy_report(s, E0821, o->dup_at, "at %s, %s is written by two threads: %s and %s (a write-write "
                                "race: a block->tile or thread->element map sends two writers to one element)", sy_sample_text(x),
                                elem_text(s, o, o->dup_elem), writer_text(s, o->dup_a, bt, grid),
                                writer_text(s, o->dup_b, bt, grid));
            if (d)
                diag_help(s->ctx, d, "check the block and thread index maps: each output element must have one "
                          "writer (grid %lld x %lld x %lld)", (long long)grid[0], (long long)grid[1],
                          (long long)grid[2]);
            if (d)
                sy_note_lets(s, d, sy_node(s, o->dup_at)->a, 2);
            for (NodeId up = d ? s->up[o->dup_at] : 0; up; up = s->up[up])
                if (sy_node(s, up)->op == OP_IF) {
                    diag_note(s->ctx, d, sy_span(s, sy_node(s, up)->a), "both writers pass this condition");
                    break;
                }
        }
        if (!o->ref_known) {
            if (c->quiet)
                continue;
            note_undecided(s, o->arg, ir_fmt(s->ctx, "the reference writes `%s` through an index the checker "
                                              "cannot follow", ir_symstr(s->ctx, sy_node(s, o->arg)->name)));
            continue;
        }
        int64_t missing = 0, first = -1;
        if (o->ref_all && o->covered == o->n) /* every element is written */
            continue;
        for (int64_t e = 0; e < o->n; e++)
            if ((o->ref_all || o->ref[e]) && !o->writer[e] && missing++ == 0)
                first = e;
        if (!missing)
            continue;
        Diag *d = sy_report(s, E0820, o->arg, "at %s, %lld of the %lld elements of `%s` the reference writes are "
                            "written by no block (first: %s)", sy_sample_text(x), (long long)missing, (long long)o->n,
                            ir_symstr(s->ctx, sy_node(s, o->arg)->name), elem_text(s, o, first));
        if (d)
            diag_help(s->ctx, d, "check the grid (%lld x %lld x %lld blocks here) and the block->tile and "
                      "thread->element maps of the stores", (long long)grid[0], (long long)grid[1],
                      (long long)grid[2]);
        if (d && s->k->ngrid)
            diag_note(s->ctx, d, span_join(sy_span(s, s->k->grid[0]), sy_span(s, s->k->grid[s->k->ngrid - 1])),
                      "the grid: %lld x %lld x %lld blocks at this shape", (long long)grid[0], (long long)grid[1],
                      (long long)grid[2]);
        if (d && c->max_at)
            diag_note(s->ctx, d, sy_span(s, c->max_at), "this assume admits the shape");
        for (uint32_t r = 0; d && r < p->nr; r++) /* the roles whose threads store it */
            if (p->roles[r]) {
                int64_t rfirst, rcount;
                sy_role_range(s, p->roles[r], &rfirst, &rcount);
                diag_note(s->ctx, d, sy_span(s, p->roles[r]), "%s stores it: threads %lld .. %lld of the block",
                          sy_role_name(s, p->roles[r]), (long long)rfirst, (long long)(rfirst + rcount - 1));
            }
        if (d && x->sm_count > 0)
            note_literal_stride(s, d);
        int nst = 0;
        for (NodeId st = 1; d && st < s->k->nnodes && nst < 3; st++) { /* the stores into it, the first's lets */
            uint16_t op = sy_node(s, st)->op;
            if ((op == OP_STORE || op == OP_TMA_STORE) && s->pos[st] && sy_ref_decl(s, sy_node(s, st)->a) == o->arg) {
                diag_note(s->ctx, d, sy_span(s, sy_node(s, st)->a), "a store into `%s`: its index",
                          ir_symstr(s->ctx, sy_node(s, o->arg)->name));
                LoopNotes ln = {d, 0, {0}};
                sy_each_expr(s, sy_node(s, st)->a, note_loop, &ln);
                if (nst++ == 0)
                    sy_note_lets(s, d, sy_node(s, st)->a, 5);
            }
        }
    }
}

/* Sample i of the dims: the checker's samples (sync_exec.c), then the same
 * skewed so that no two dims are equal (dim j grows by j / 2 of its value,
 * kept a multiple of what the assumes ask): a swapped block->tile map is
 * invisible when M == N. 0 when the assumes reject it. */
static int sample(SyExec *x, int i)
{
    SyK *s = sy_xk(x);
    if (!sy_sample_dims(x, i % SY_NSAMPLES))
        return 0;
    if (i < SY_NSAMPLES)
        return 1;
    for (uint32_t j = 0; j < s->k->ndims; j++) {
        NodeId d = s->k->dims[j];
        int64_t mod = 1, lo = 1, hi = (int64_t)1 << 40;
        sy_dim_facts(s, d, &mod, &lo, &hi);
        int64_t v = x->val[d] + x->val[d] * (int64_t)j / 2;
        v = mod > 1 ? (v + mod - 1) / mod * mod : v;
        x->val[d] = v < lo ? x->val[d] : v > hi ? x->val[d] : v;
    }
    for (uint32_t a = 0; a < s->k->nassumes; a++) {
        int64_t ok;
        if (sy_eval(x, s->k->assumes[a], &ok) && !ok)
            return 0;
    }
    return 1;
}

/* the largest constant dim d is divided by (`cdiv(M, BM)`, `K / BK`); 1: none */
static int64_t dim_tile(SyK *s, NodeId d)
{
    int64_t t = 1, c;
    for (NodeId e = 1; e < s->k->nnodes; e++) {
        const Node *n = sy_node(s, e);
        NodeId num = n->op == OP_DIV ? n->a : n->op == OP_CDIV && n->n == 2 ? ir_list_at(s->k, n, 0) : 0;
        NodeId den = n->op == OP_DIV ? n->b : n->op == OP_CDIV && n->n == 2 ? ir_list_at(s->k, n, 1) : 0;
        if (num && sy_decl(s, num) == d && sy_const(s, den, &c) && c > t && c <= (1 << 16))
            t = c;
    }
    return t;
}

static int reads_sm_count(SyK *s, NodeId e, int depth)
{
    if (!e || depth > 64)
        return 0;
    const Node *n = sy_node(s, e);
    if (n->op == OP_SPECIAL && n->sub == SR_SM_COUNT)
        return 1;
    if (reads_sm_count(s, n->a, depth + 1) || reads_sm_count(s, n->b, depth + 1) ||
        reads_sm_count(s, n->c, depth + 1))
        return 1;
    for (uint32_t i = 0; ir_ops[n->op].cls == OC_BUILTIN && i < n->n; i++)
        if (reads_sm_count(s, ir_list_at(s->k, n, i), depth + 1))
            return 1;
    return 0;
}

/* The scale sample, after sample `base`: what only runs at scale. The first
 * dim divided by a tile size at about `tiles` - 0.5 tiles (a grouped
 * rasterization of 2 .. 16 row tiles per group gets a partial last group; a
 * role that leaves a warpgroup out leaves rows of every tile unwritten), the
 * other tiled dims at about 1.5 tiles (two tiles, the second ragged). 0 when
 * the assumes reject it or no dim is tiled. */
static int scale_sample(SyExec *x, int base, int tiles)
{
    SyK *s = sy_xk(x);
    if (!sample(x, base))
        return 0;
    int first = 1, any = 0;
    for (uint32_t j = 0; j < s->k->ndims; j++) {
        NodeId d = s->k->dims[j];
        int64_t t = dim_tile(s, d), mod = 1, lo = 1, hi = (int64_t)1 << 40;
        if (t <= 1)
            continue;
        sy_dim_facts(s, d, &mod, &lo, &hi);
        int64_t v = (first ? tiles - 1 : 1) * t + t / 2;
        v = (v + mod - 1) / mod * mod;
        if (v < lo || v > hi)
            continue;
        x->val[d] = v;
        first = 0;
        any = 1;
    }
    for (uint32_t a = 0; a < s->k->nassumes; a++) {
        int64_t ok;
        if (sy_eval(x, s->k->assumes[a], &ok) && !ok)
            return 0;
    }
    return any;
}

/* the max sample, after sample `base`: every dim an assume bounds from above
 * (`assume N <= THREADS * VEC * ITERS`) at that bound, so that a schedule
 * shorter than the largest shape it admits shows. 0 when no dim is bounded. */
static int max_sample(SyExec *x, int base, NodeId *max_at)
{
    SyK *s = sy_xk(x);
    *max_at = 0;
    if (!sample(x, base))
        return 0;
    int any = 0;
    for (uint32_t j = 0; j < s->k->ndims; j++) {
        NodeId d = s->k->dims[j];
        int64_t mod = 1, lo = 1, hi = (int64_t)1 << 40;
        sy_dim_facts(s, d, &mod, &lo, &hi);
        if (hi >= ((int64_t)1 << 40) || hi / mod * mod < lo)
            continue;
        x->val[d] = hi / mod * mod;
        any = 1;
    }
    for (uint32_t a = 0; a < s->k->nassumes && any; a++) /* the first upper-bound assume */
        if (sy_node(s, s->k->assumes[a])->op == OP_LE || sy_node(s, s->k->assumes[a])->op == OP_LT) {
            *max_at = s->k->assumes[a];
            break;
        }
    for (uint32_t a = 0; a < s->k->nassumes; a++) {
        int64_t ok;
        if (sy_eval(x, s->k->assumes[a], &ok) && !ok)
            return 0;
    }
    return any;
}

/* SCALE_TILES row tiles are for what only shows with many tiles: warp-specialized
 * roles, a persistent kernel, or a tile map with a `min` (a grouped
 * rasterization's partial last group); a plain SIMT kernel gets 4 (several
 * blocks: a grid sized too small shows), many tiles of it cost a lot to simulate */
static int scale_worth(SyK *s, int persistent)
{
    if (persistent || s->nroles)
        return 1;
    for (NodeId e = 1; e < s->k->nnodes; e++)
        if (sy_node(s, e)->op == OP_MIN && s->stmt_of[e] && s->pos[s->stmt_of[e]])
            return 1;
    return 0;
}

/* a persistent kernel (its grid reads sm.count) at sample i with 2 blocks
 * resident: each walks several tiles, so a stride that is not the grid size
 * (`step 132`) leaves tiles unwritten; then the scale sample with 3 */
static void run_at_scale(Cov *c, SyExec *x, int best, uint32_t before)
{
    SyK *s = c->s;

    Plan p;
    int persistent = 0;
    for (uint32_t i = 0; i < s->k->ngrid; i++)
        persistent |= reads_sm_count(s, s->k->grid[i], 0);
    c->quiet = 1;
    if (persistent && s->ctx->nerrors == before) {
        x->sm_count = 2;
        if (sample(x, best) && plan_sample(c, x, &p))
            run_sample(c, x, &p);
    }
    c->max_elems = COV_SCALE_ELEMS;
    x->sm_count = persistent ? 3 : 0;
    if (s->ctx->nerrors == before && scale_sample(x, best, scale_worth(s, persistent) ? SCALE_TILES : 4) &&
        plan_sample(c, x, &p))
        run_sample(c, x, &p);
    x->sm_count = 0;
    if (s->ctx->nerrors == before && max_sample(x, best, &c->max_at) && plan_sample(c, x, &p))
        run_sample(c, x, &p);
    c->max_at = 0;
    c->max_elems = COV_MAX_ELEMS;
    x->sm_count = 0;
    c->quiet = 0;
}

static uint32_t check_coverage(SyK *s)
{
    uint32_t before = s->ctx->nerrors;
    Cov *c = arena_alloc(&s->ctx->arena, sizeof *c);
    c->s = s;
    c->max_elems = COV_MAX_ELEMS;
    if (!s->k->reference)
        return 0;
    c->ref_block = sy_node(s, s->k->reference)->op == OP_REFERENCE ? sy_node(s, s->k->reference)->a
                   : s->k->reference;
    sy_each_stmt(s, c->ref_block, find_outputs, c);
    drop_atomic_outputs(c);
    elected_stores(c);
    if (!c->nout)
        return 0;
    /* which threads run: one per unit when every output store of the role is a unit store */
    for (uint32_t i = 0; i <= s->nroles && c->nr < 65; i++) {
        Units u = {i ? s->roles[i - 1] : 0, 0, 0};
        sy_each_stmt(s, s->k->body, role_units, &u);
        int64_t first, count;
        if (!u.any || !sy_role_range(s, u.role, &first, &count))
            continue;
        c->roles[c->nr] = u.role;
        c->step[c->nr++] = u.unit < 1 ? 1 : u.unit;
    }
    /* among the samples cheap enough to run: the most grid dimensions with two
       blocks or more, then grid extents that differ from each other, then the
       most blocks (up to 2) — enough to see a wrong or swapped block->tile
       map — then the least work (elements, runs) */
    SyExec x;
    Plan p;
    int best = -1, widest = -1;
    int64_t best_score = -1, best_work = 0, widest_elems = -1;
    int64_t work[2 * SY_NSAMPLES] = {0}, nelems[2 * SY_NSAMPLES] = {0};
    sy_exec_init(&x, s, COV_BUDGET);
    for (int i = 0; i < 2 * SY_NSAMPLES; i++) {
        if (!sample(&x, i) || !plan_sample(c, &x, &p))
            continue;
        int64_t elems = 0, multi = 0, distinct = 0;
        for (int o = 0; o < c->nout; o++)
            elems += c->out[o].n;
        for (uint32_t d = 0; d < s->k->ngrid && d < 3; d++) {
            multi += p.grid[d] >= 2;
            for (uint32_t e = d + 1; e < s->k->ngrid && e < 3; e++)
                distinct += p.grid[d] != p.grid[e];
        }
        int64_t score = (multi * 64 + distinct * 16 + (p.blocks < 2 ? p.blocks : 2)) * ((int64_t)1 << 40) -
                        (elems + 64 * p.runs);
        work[i] = elems + 64 * p.runs;
        nelems[i] = elems;
        if (score > best_score) {
            best_score = score;
            best = i;
            best_work = work[i];
        }
    }
    for (int i = 0; best >= 0 && i < 2 * SY_NSAMPLES; i++)
        if (work[i] && work[i] <= 4 * best_work + 4096 && nelems[i] > widest_elems) {
            widest_elems = nelems[i];
            widest = i;
        }
    if (best < 0) {
        note_undecided(s, s->k->body, "no sample shape is small enough to run every block, or the grid or an "
                       "output's shape cannot be evaluated");
        return 0;
    }
    /* the cheapest telling sample, then the largest one of at most about four times
       its work: at a
       small sample a tile larger than what its block writes (BM = 256 over a
       schedule that writes 128 rows) can cover every row there is */
    sample(&x, best);
    plan_sample(c, &x, &p);
    run_sample(c, &x, &p);
    if (s->ctx->nerrors == before && widest != best) {
        sample(&x, widest);
        plan_sample(c, &x, &p);
        run_sample(c, &x, &p);
    }
    run_at_scale(c, &x, best, before);
    return s->ctx->nerrors - before;
}

uint32_t ver_coverage(CakeCtx *ctx, Kernel *k)
{
    if (!k || !k->body || !k->reference)
        return 0;
    SyK s; /* thread counts of the first target: the tiling does not depend on the warp width */
    sy_init(&s, ctx, k, tg_first(k));
    return check_coverage(&s);
}
