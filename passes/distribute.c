/* distribute.c — the distribute pass: register tiles become per-thread
 * fragment arrays and every tile statement becomes per-element code
 * (distribute.h explains the base coordinates that match operands).
 *
 *   reg T: dt[R, C] layout L [= x]   → reg T: dt[n] [= x]  (n = ly_elems)
 *   T = expr,  T op= expr             → T[e] = expr at e's coordinates, for each e
 *   T[r, c] = expr (implicit indices) → the same, r and c bound to the element's
 *                                       coordinates (thread part included)
 *   rowmax/rowsum/rowmin(T), col*     → hoisted: a thread-local reduction per row,
 *                                       then shuffles across the lanes that share
 *                                       the row (the layout's column thread part)
 *   row vector V[R] in T op V         → broadcast along the row (by base row)
 *   store X[r : +R, c : +C] <- T      → per thread, runs of elements adjacent in a
 *                                       row stored as one vector
 *   store X[..] <- f(T[r, c]) mask m  → per element, under m at its coordinates
 *   mma / wgmma / ldmatrix / stmatrix → distribute_tc.c
 * Fragment slices (T[:, j * 64 : +64]) need constant offsets: loops over them
 * are unrolled first (passes/unroll.c). */
#include <string.h>
#include <stdlib.h>
#include "distribute.h"

void dist_error(Lw *w, NodeId at, const char *what)
{
    lw_unsupported(w, at, what, "see docs/tirl.md for what the distribute pass handles");
}

static Dist *dist(Lw *w)
{
    return w->user;
}

int dist_is_frag_type(Lw *w, NodeId n)
{
    const Type *t = irb_type(&w->b, n);
    return t->kind == TK_TILE && t->space == SP_REG && t->layout != LY_NONE;
}

LyTile dist_ly_of(Lw *w, NodeId n)
{
    const Type *t = irb_type(&w->b, n);
    LyTile ly;
    memset(&ly, 0, sizeof ly);
    ly.layout = (Layout)t->layout;
    ly.dtype = (DType)t->dtype;
    ly.warp_size = tg_warp(w->tg);
    if (t->rank == 1) {
        ly.rows = (int)t->shape[0];
        ly.cols = 0;
    } else {
        ly.rows = (int)t->shape[0];
        ly.cols = (int)t->shape[1];
        ly.colvec = ly.rows == 1 && ly.layout != LY_MMA_B;
    }
    return ly;
}

static int key(const LyTile *t, int r, int c)
{
    int cols = t->cols ? t->cols : 1;
    if (r < 0 || c < 0 || r >= (t->rows ? t->rows : 1) || c >= cols)
        return -1;
    return r * cols + c;
}

Frag *dist_frag(Lw *w, NodeId decl)
{
    Dist *d = dist(w);
    for (uint32_t i = 0; i < d->nfrags; i++)
        if (d->frags[i].src == decl)
            return &d->frags[i];
    return NULL;
}

static Frag *new_frag(Lw *w, NodeId decl)
{
    Dist *d = dist(w);
    d->frags = arena_grow(&w->b.ctx->arena, d->frags, &d->capfrags, d->nfrags + 1, sizeof *d->frags);
    Frag *f = &d->frags[d->nfrags++];
    memset(f, 0, sizeof *f);
    f->src = decl;
    f->ly = dist_ly_of(w, decl);
    int n = ly_elems(&f->ly);
    int cells = (f->ly.rows ? f->ly.rows : 1) * (f->ly.cols ? f->ly.cols : 1);
    f->index = arena_alloc(&w->b.ctx->arena, (size_t)cells * sizeof *f->index);
    for (int e = 0; e < n; e++) {
        int r, c;
        ly_elem_base(&f->ly, e, &r, &c);
        int kk = key(&f->ly, r, c);
        if (kk >= 0)
            f->index[kk] = e + 1;
    }
    return f;
}

/* ---- views ----------------------------------------------------------------- */

int dist_view(Lw *w, NodeId ref, FView *v)
{
    Node *n = lw_node(w, ref);
    memset(v, 0, sizeof *v);
    if (n->op == OP_NAME) {
        v->f = dist_frag(w, n->decl);
        if (!v->f)
            return 0;
        v->rows = v->f->ly.rows;
        v->cols = v->f->ly.cols;
        v->rowvec = v->f->ly.cols == 0;
        v->colvec = v->f->ly.colvec;
        return 1;
    }
    if (n->op != OP_INDEX || !dist_view(w, n->a, v))
        return 0;
    if (v->rowvec) {
        if (n->n != 1)
            return 0;
        NodeId ix = ir_list_at(w->b.k, n, 0);
        Node *x = lw_node(w, ix);
        int64_t s = 0, e = 0;
        if (x->op == OP_COLON)
            return 1;
        if (x->op != OP_SLICE || !lw_const(w, x->a, &s) || !lw_const(w, x->b, &e))
            return 0;
        v->r0 += (int)s;
        v->rows = (int)e;
        return 1;
    }
    if (n->n != 2)
        return 0;
    for (uint32_t i = 0; i < 2; i++) {
        Node *x = lw_node(w, ir_list_at(w->b.k, n, i));
        int64_t s = 0, e = 0;
        if (x->op == OP_COLON)
            continue;
        if (x->op != OP_SLICE || !lw_const(w, x->a, &s) || !lw_const(w, x->b, &e))
            return 0;
        if (i == 0) {
            v->r0 += (int)s;
            v->rows = (int)e;
        } else {
            v->c0 += (int)s;
            v->cols = (int)e;
        }
    }
    return 1;
}

NodeId dist_at(Lw *w, const FView *v, int r, int c)
{
    const LyTile *t = &v->f->ly;
    int rr = v->rowvec ? r + v->r0 : v->colvec ? 0 : r + v->r0;
    int cc = v->rowvec ? 0 : c + v->c0;
    int kk = key(t, rr, cc);
    if (kk < 0 || !v->f->index[kk])
        return 0;
    return irb_elem(&w->b, v->f->arr, v->f->index[kk] - 1);
}

static NodeId thread_part(Lw *w, const LyTile *t, int col, int fresh)
{
    IrB *b = &w->b;
    LyThreadPart p;
    ly_thread_part(t, &p);
    NodeId sum = irb_i32(b, 0);
    int n = col ? p.ncol : p.nrow;
    for (int i = 0; i < n; i++) {
        LyTerm tm = col ? p.col[i] : p.row[i];
        NodeId tid = irb_special(b, SR_THREAD_X);
        if (fresh)
            lw_node(w, tid)->flags |= NF_FRESH;
        NodeId x = irb_divmod_c(b, tid, tm.div, tm.mod);
        sum = irb_add(b, sum, irb_mul_c(b, x, tm.coef));
    }
    return sum;
}

NodeId dist_thread_part(Lw *w, const LyTile *t, int col)
{
    return thread_part(w, t, col, 0);
}

/* the thread part of an element's implicit coordinates (T[r, c] = ..., store_implicit):
 * thread.x read where the statement stands (NF_FRESH) in the body of a `fresh` loop, and
 * everywhere when CAKE_FRESH is set (an experiment switch: docs/tir.md 10.1) */
static NodeId implicit_part(Lw *w, const LyTile *t, int col)
{
    return thread_part(w, t, col, w->fresh > 0 || dist(w)->fresh_all);
}

/* an element access T[r, c] with the statement's implicit indices */
static int implicit_elem(Lw *w, NodeId ref)
{
    Node *n = lw_node(w, ref);
    if (n->op != OP_INDEX || !n->n)
        return 0;
    for (uint32_t i = 0; i < n->n; i++) {
        Node *x = lw_node(w, ir_list_at(w->b.k, n, i));
        if (x->op != OP_NAME || !x->decl || !(lw_node(w, x->decl)->flags & NF_IMPLICIT))
            return 0;
    }
    return 1;
}

/* does e read a tile element through the statement's implicit indices? */
static int has_implicit_elem(Lw *w, NodeId e, int depth)
{
    if (!e || depth > 200)
        return 0;
    if (implicit_elem(w, e))
        return 1;
    Node *n = lw_node(w, e);
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        if (has_implicit_elem(w, kids[i], depth + 1))
            return 1;
    for (uint32_t i = 0; i < n->n; i++)
        if (has_implicit_elem(w, ir_list_at(w->b.k, n, i), depth + 1))
            return 1;
    return 0;
}

/* ---- reductions -------------------------------------------------------------- */

static Op red_combine(Op op)
{
    switch (op) {
    case OP_ROWSUM: case OP_COLSUM: return OP_ADD;
    case OP_ROWMAX: case OP_COLMAX: return OP_MAX;
    default: return OP_MIN;
    }
}

static NodeId combine(Lw *w, Op op, NodeId a, NodeId b2)
{
    if (op == OP_ADD)
        return irb_bin(&w->b, OP_ADD, a, b2);
    NodeId args[2] = {a, b2};
    return irb_call(&w->b, op, args, 2, lw_node(w, a)->type);
}

/* x[0] . x[1] . ... . x[n-1]: four interleaved chains (x[j], x[j+4], ...), then a
 * tree of the four: n/4 + 2 dependent steps with four partials live, where a full
 * tree would keep n/2 of them in a register-tight tile kernel; (chain) in order */
static NodeId tree(Lw *w, Op op, NodeId *x, int n, int chain)
{
    enum { WAYS = 4 };
    if (chain) {
        for (int i = 1; i < n; i++)
            x[0] = combine(w, op, x[0], x[i]);
        return x[0];
    }
    for (int i = WAYS; i < n; i++)
        x[i % WAYS] = combine(w, op, x[i % WAYS], x[i]);
    int m = n < WAYS ? n : WAYS;
    for (int step = 1; step < m; step *= 2)
        for (int i = 0; i + step < m; i += 2 * step)
            x[i] = combine(w, op, x[i], x[i + step]);
    return x[0];
}

/* hoists reduction node rn (rowmax(T) ...) before the statement */
static Red *reduce(Lw *w, NodeId rn)
{
    Dist *d = dist(w);
    IrB *b = &w->b;
    for (uint32_t i = 0; i < d->nreds; i++)
        if (d->reds[i].node == rn)
            return &d->reds[i];
    if (d->nreds == 16)
        return NULL;
    Node *n = lw_node(w, rn);
    int by_col = n->op == OP_COLSUM || n->op == OP_COLMAX || n->op == OP_COLMIN;
    Op op = red_combine((Op)n->op);
    NodeId src = ir_list_at(b->k, n, 0);
    if (!dist_is_frag_type(w, src))
        return NULL;
    LyTile lt = dist_ly_of(w, src);
    if (lt.cols == 0 || lt.colvec)
        return NULL;
    int len = by_col ? lt.cols : lt.rows;
    Red *r = &d->reds[d->nreds++];
    r->node = rn;
    r->slot = arena_alloc(&b->ctx->arena, (size_t)len * sizeof *r->slot);
    NodeId acc[256];
    int nslots = 0;
    int ne = ly_elems(&lt);
    /* each slot's elements, combined in one chain in element order; with
       CAKE_ROW_TREE set, in four interleaved chains and a tree (tree() below),
       which measured 3.5% slower on flash_attn_fwd on the H200 (more partials
       live in a register-tight kernel: bench/RESULTS.md), so it is opt-in */
    NodeId *elems = arena_alloc(&b->ctx->arena, (size_t)(ne ? ne : 1) * sizeof *elems);
    int *slot_of = arena_alloc(&b->ctx->arena, (size_t)(ne ? ne : 1) * sizeof *slot_of);
    for (int e = 0; e < ne; e++) {
        int vr, vc;
        ly_elem_base(&lt, e, &vr, &vc);
        int kk = by_col ? vc : vr;
        NodeId x = dist_elem(w, src, vr, vc);
        if (!x)
            return NULL;
        if (kk >= len)
            return NULL;
        if (!r->slot[kk]) {
            if (nslots == 256)
                return NULL;
            r->slot[kk] = ++nslots;
        }
        elems[e] = x;
        slot_of[e] = r->slot[kk] - 1;
    }
    int chain = getenv("CAKE_ROW_TREE") == NULL || getenv("CAKE_NO_TREE") != NULL;
    NodeId *mine = arena_alloc(&b->ctx->arena, (size_t)(ne ? ne : 1) * sizeof *mine);
    for (int s = 0; s < nslots; s++) {
        int m = 0;
        for (int e = 0; e < ne; e++)
            if (slot_of[e] == s)
                mine[m++] = elems[e];
        acc[s] = tree(w, op, mine, m, chain);
    }
    /* lanes that share a row: the column thread part's lane bits (rows: the row's) */
    LyThreadPart tp;
    ly_thread_part(&lt, &tp);
    DType dt = (DType)irb_type(b, src)->dtype;
    r->arr = irb_array(b, ir_fmt(b->ctx, "red%u", d->ntemps++), dt, nslots, 0);
    irb_push(b, d->pre, r->arr);
    int nt = by_col ? tp.nrow : tp.ncol;
    for (int s = 0; s < nslots; s++) {
        NodeId part = irb_let(b, ir_fmt(b->ctx, "red%u", d->ntemps++), acc[s]); /* thread-local */
        irb_push(b, d->pre, part);
        NodeId v = irb_name(b, part);
        for (int i = 0; i < nt; i++) {
            LyTerm tm = by_col ? tp.row[i] : tp.col[i];
            if (tm.div * tm.mod > tg_warp(w->tg))
                return NULL; /* across warps: needs shared memory */
            for (int m = tm.div; m < tm.div * tm.mod; m *= 2) {
                NodeId sargs[2] = {v, irb_i32(b, m)};
                NodeId sh = irb_call(b, OP_SHFL_XOR, sargs, 2, lw_node(w, v)->type);
                NodeId t = irb_let(b, ir_fmt(b->ctx, "red%u", d->ntemps++), combine(w, op, v, sh));
                irb_push(b, d->pre, t);
                v = irb_name(b, t);
            }
        }
        irb_push(b, d->pre, irb_assign(b, irb_elem(b, r->arr, s), v));
    }
    r->len = len;
    return r;
}

/* ---- element expressions -------------------------------------------------------- */

/* has_implicit_elem(e) once per node of the kernel as the pass found it (the source
   nodes dist_elem meets at every element: the answer depends on e's subtree and the
   declarations' NF_IMPLICIT only, and the pass does not change either) */
static int reads_implicit(Lw *w, NodeId e)
{
    Dist *d = dist(w);
    if (e >= d->nimplicit)
        return has_implicit_elem(w, e, 0);
    if (!d->implicit[e])
        d->implicit[e] = has_implicit_elem(w, e, 0) ? 2 : 1;
    return d->implicit[e] == 2;
}

/* the scalar value of tile expression e at base coordinates (r, c) of the
 * statement's layout; 0 when e is not something distribute can take apart */
NodeId dist_elem(Lw *w, NodeId e, int r, int c)
{
    IrB *b = &w->b;
    Dist *d = dist(w);
    Node *n = lw_node(w, e);
    const Type *t = irb_type(b, e);
    if (implicit_elem(w, e)) { /* T[r, c]: this element of T */
        FView v;
        if (!dist_view(w, n->a, &v))
            return 0;
        return dist_at(w, &v, r, c);
    }
    if (t->kind != TK_TILE && !reads_implicit(w, e)) /* a uniform scalar (implicit indices substituted) */
        return irb_clone(b, e);
    DType dt = (DType)t->dtype;
    TypeId st = irb_scalar_type(b, dt, 1);
    FView v;
    if ((n->op == OP_NAME || n->op == OP_INDEX) && dist_view(w, e, &v))
        return dist_at(w, &v, r, c);
    switch ((Op)n->op) {
    case OP_CAST: {
        NodeId a = dist_elem(w, n->a, r, c);
        return a ? irb_cast(b, a, dt, 1) : 0;
    }
    case OP_NEG: case OP_NOT: {
        NodeId a = dist_elem(w, n->a, r, c);
        if (!a)
            return 0;
        NodeId x = irb_un(b, (Op)n->op, a);
        lw_node(w, x)->type = st;
        return x;
    }
    case OP_ROWSUM: case OP_ROWMAX: case OP_ROWMIN:
    case OP_COLSUM: case OP_COLMAX: case OP_COLMIN: {
        Red *rd = reduce(w, e);
        int by_col = n->op >= OP_COLSUM;
        int kk = by_col ? c : r;
        if (!rd || kk < 0 || kk >= rd->len || !rd->slot[kk])
            return 0;
        return irb_elem(b, rd->arr, rd->slot[kk] - 1);
    }
    default:
        break;
    }
    const OpInfo *info = &ir_ops[n->op];
    if (info->cls == OC_BIN) {
        NodeId x = dist_elem(w, n->a, r, c), y = dist_elem(w, n->b, r, c);
        if (!x || !y)
            return 0;
        NodeId z = irb_bin(b, (Op)n->op, x, y);
        lw_node(w, z)->type = st;
        return z;
    }
    if (info->cls == OC_BUILTIN && ((info->flags & OF_MATH) || n->op == OP_SELECT)) {
        NodeId args[4];
        if (n->n > 4)
            return 0;
        for (uint32_t i = 0; i < n->n; i++)
            if (!(args[i] = dist_elem(w, ir_list_at(b->k, n, i), r, c)))
                return 0;
        return irb_call(b, (Op)n->op, args, n->n, st);
    }
    (void)d;
    return 0;
}

/* ---- statements ---------------------------------------------------------------- */

static void reg_decl(Lw *w, NodeId s, IrList *out)
{
    IrB *b = &w->b;
    Frag *f = new_frag(w, s);
    Node *n = lw_node(w, s);
    int ne = ly_elems(&f->ly);
    if (ne <= 0) {
        dist_error(w, s, "a register tile of this layout and shape");
        return;
    }
    NodeId init = n->b ? irb_cast(b, n->b, f->ly.dtype, 1) : 0;
    f->arr = irb_array(b, ir_symstr(b->ctx, n->name), f->ly.dtype, ne, init);
    irb_push(b, out, f->arr);
}

/* binds the statement's implicit indices to the element's coordinates */
static void bind_implicit(Lw *w, int r, int c)
{
    Dist *d = dist(w);
    if (d->imp_r)
        irb_map(&w->b, d->imp_r, irb_add_c(&w->b, irb_name(&w->b, d->thr_row), r));
    if (d->imp_c)
        irb_map(&w->b, d->imp_c, irb_add_c(&w->b, irb_name(&w->b, d->thr_col), c));
}

/* T = load S[view]: a register tile filled from a shared view at its elements'
 * coordinates (base + thread part); elements adjacent along the view's
 * contiguous dim (up to 16 bytes, a power of two) are one vector load, its
 * lanes split with @lane (MFMA operands: 4 x 16-bit per lane, one ds_read_b64) */
static void tile_load(Lw *w, NodeId s, const FView *v, NodeId load, IrList *out)
{
    IrB *b = &w->b;
    Dist *d = dist(w);
    Node *ld = lw_node(w, load);
    LwView sv;
    if (ld->b || ld->dtype != DT_NONE || !lw_view(w, ld->a, &sv) || sv.rank < 2) {
        dist_error(w, s, "a whole-tile load into a register tile from this reference (an unmasked "
                         "load of a shared-memory view is lowered)");
        return;
    }
    LyTile lv = v->f->ly;
    lv.rows = v->rows;
    lv.cols = v->cols;
    int contig = sv.transposed ? 0 : 1;   /* the logical dim that is contiguous in memory */
    int bytes = ir_dtype_bytes(sv.dt);
    NodeId tr = irb_let(b, ir_fmt(b->ctx, "row%u", d->ntemps++), dist_thread_part(w, &lv, 0));
    NodeId tc = irb_let(b, ir_fmt(b->ctx, "col%u", d->ntemps++), dist_thread_part(w, &lv, 1));
    irb_push(b, out, tr);
    irb_push(b, out, tc);
    int ne = ly_elems(&lv);
    for (int e = 0; e < ne;) {
        int r, c, run = 1;
        ly_elem_base(&lv, e, &r, &c);
        while (e + run < ne && (run + 1) * bytes <= 16) {
            int r2, c2;
            ly_elem_base(&lv, e + run, &r2, &c2);
            if (r2 != r + (contig ? 0 : run) || c2 != c + (contig ? run : 0))
                break;
            run++;
        }
        while (run & (run - 1))
            run--;
        NodeId rel[2] = {irb_add_c(b, irb_name(b, tr), r), irb_add_c(b, irb_name(b, tc), c)};
        if (sv.transposed) {
            NodeId t = rel[0];
            rel[0] = rel[1];
            rel[1] = t;
        }
        NodeId idx[IR_MAX_RANK];
        for (int dd = 0, k = 0; dd < sv.rank; dd++) {
            idx[dd] = sv.start[dd];
            if (sv.kept[dd] && k < 2)
                idx[dd] = irb_add(b, idx[dd], rel[k++]);
        }
        if (run > 1) {
            NodeId ext = irb_i32(b, run); /* made before: a new node may move the array */
            NodeId sl = ir_node(b->ctx, b->k, OP_SLICE, b->span);
            lw_node(w, sl)->a = idx[sv.rank - 1];
            lw_node(w, sl)->b = ext;
            idx[sv.rank - 1] = sl;
        }
        TypeId vt = irb_scalar_type(b, sv.dt, run);
        NodeId ref = irb_index(b, sv.decl, idx, (uint32_t)sv.rank, vt);
        NodeId x = ir_node(b->ctx, b->k, OP_LOAD, b->span);
        lw_node(w, x)->a = ref;
        lw_node(w, x)->type = vt;
        if (run > 1) {
            NodeId t = irb_let(b, ir_fmt(b->ctx, "ld%u", d->ntemps++), x);
            irb_push(b, out, t);
        }
        NodeId vec = run > 1 ? out->v[out->n - 1] : 0;
        for (int i = 0; i < run; i++) {
            int r2, c2;
            ly_elem_base(&lv, e + i, &r2, &c2);
            NodeId dst = dist_at(w, v, r2, c2);
            if (!dst) {
                dist_error(w, s, "a load into a view that does not line up with its fragments");
                return;
            }
            NodeId val = x;
            if (run > 1) {
                NodeId nm = irb_name(b, vec);
                val = irb_call(b, OP_L_LANE, &nm, 1, irb_scalar_type(b, sv.dt, 1));
                lw_node(w, val)->v.i = i;
            }
            irb_push(b, out, irb_assign(b, dst, irb_cast(b, val, irb_dtype(b, dst), 1)));
        }
        e += run;
    }
}

/* CAKE_CVT_PAIRS: elements e and e + 1 of one thread, (r, c) and (r, c + 1), narrowed from
 * f32 to bf16/f16 by one conversion (a pack of the two casts: cvt.rn.bf16x2.f32) whose
 * lanes are assigned; 0 (nothing emitted) where they are not such a pair */
static int pair_assign(Lw *w, const Node *n, const FView *v, const LyTile *lv, int e, IrList *body)
{
    IrB *b = &w->b;
    int r, c, r2, c2;
    if (e + 1 >= ly_elems(lv))
        return 0;
    ly_elem_base(lv, e, &r, &c);
    ly_elem_base(lv, e + 1, &r2, &c2);
    if (r2 != r || c2 != c + 1)
        return 0;
    NodeId dst[2], val[2];
    for (int i = 0; i < 2; i++)
        if (!(dst[i] = dist_at(w, v, r, c + i)))
            return 0;
    DType dt = irb_dtype(b, dst[0]);
    const Node *rhs = lw_node(w, n->b);   /* bf16(x) of an f32 tile x, or an f32 tile expression */
    DType from = rhs->op == OP_CAST && rhs->a ? irb_dtype(b, rhs->a) : irb_dtype(b, n->b);
    if ((dt != DT_BF16 && dt != DT_F16) || irb_dtype(b, dst[1]) != dt || from != DT_F32)
        return 0;
    NodeId casts[2];
    for (int i = 0; i < 2; i++) {
        bind_implicit(w, r, c + i);
        val[i] = dist_elem(w, rhs->op == OP_CAST && rhs->a ? rhs->a : n->b, r, c + i);
        if (!val[i] || irb_dtype(b, val[i]) != DT_F32)
            return 0;
        casts[i] = irb_cast(b, val[i], dt, 1);
    }
    NodeId pk = irb_call(b, OP_L_PACK, casts, 2, irb_scalar_type(b, dt, 2));
    NodeId t = irb_let(b, ir_fmt(b->ctx, "cv%u", dist(w)->ntemps++), pk);
    irb_push(b, body, t);
    for (int i = 0; i < 2; i++) {
        NodeId nm = irb_name(b, t);
        NodeId lane = irb_call(b, OP_L_LANE, &nm, 1, irb_scalar_type(b, dt, 1));
        lw_node(w, lane)->v.i = i;
        irb_push(b, body, irb_assign(b, dst[i], lane));
    }
    return 1;
}

static void tile_assign(Lw *w, NodeId s, IrList *out)
{
    IrB *b = &w->b;
    Dist *d = dist(w);
    Node *n = lw_node(w, s);
    NodeId lhs = n->a;
    int implicit = implicit_elem(w, lhs);
    FView v;
    if (!dist_view(w, implicit ? lw_node(w, lhs)->a : lhs, &v)) {
        dist_error(w, s, "an assignment to this tile view (constant slices of a register tile are expected)");
        return;
    }
    Node *rhs = lw_node(w, n->b);
    if (rhs->op == OP_LDMATRIX || rhs->op == OP_LDMATRIX_T) {
        dist_ldmatrix(w, s, lhs, n->b, out);
        return;
    }
    if (rhs->op == OP_LOAD && !implicit) {
        tile_load(w, s, &v, n->b, out);
        return;
    }
    IrList pre = {0};
    d->pre = &pre;
    d->nreds = 0;
    d->imp_r = d->imp_c = 0;
    LyTile lv = v.f->ly;
    lv.rows = v.rows;
    lv.cols = v.cols;
    if (implicit) {
        Node *ix = lw_node(w, lhs);
        d->imp_r = lw_node(w, ir_list_at(b->k, ix, 0))->decl;
        d->imp_c = ix->n > 1 ? lw_node(w, ir_list_at(b->k, ix, 1))->decl : 0;
        d->thr_row = irb_let(b, ir_fmt(b->ctx, "row%u", d->ntemps++), implicit_part(w, &lv, 0));
        d->thr_col = irb_let(b, ir_fmt(b->ctx, "col%u", d->ntemps++), implicit_part(w, &lv, 1));
        irb_push(b, &pre, d->thr_row);
        irb_push(b, &pre, d->thr_col);
    }
    IrList body = {0};
    int ne = ly_elems(&lv);
    for (int e = 0; e < ne; e++) {
        int r, c;
        ly_elem_base(&lv, e, &r, &c);
        if (n->sub == OP_NONE && d->cvt_pairs && pair_assign(w, n, &v, &lv, e, &body)) {
            e++;
            continue;
        }
        bind_implicit(w, r, c);
        NodeId dst = dist_at(w, &v, r, c);
        NodeId val = dist_elem(w, n->b, r, c);
        if (!dst || !val) {
            dist_error(w, s, "this tile expression (operands of one layout family, element-wise "
                             "ops, row/column reductions and broadcasts are supported)");
            return;
        }
        if (n->sub != OP_NONE) {
            NodeId old = dist_at(w, &v, r, c);
            Op op = (Op)n->sub;
            if (op == OP_MAX || op == OP_MIN) {
                NodeId args[2] = {old, val};
                val = irb_call(b, op, args, 2, lw_node(w, old)->type);
            } else {
                val = irb_bin(b, op, old, irb_cast(b, val, irb_dtype(b, old), 1));
            }
        }
        irb_push(b, &body, irb_assign(b, dst, irb_cast(b, val, irb_dtype(b, dst), 1)));
    }
    for (uint32_t i = 0; i < pre.n; i++)
        irb_push(b, out, pre.v[i]);
    for (uint32_t i = 0; i < body.n; i++)
        irb_push(b, out, body.v[i]);
}

/* the element access in e that declares the implicit indices (`acc[r, c]`), or 0 */
static NodeId implicit_source(Lw *w, NodeId e, int depth)
{
    if (!e || depth > 200)
        return 0;
    if (implicit_elem(w, e)) {
        NodeId first = ir_list_at(w->b.k, lw_node(w, e), 0);
        if (lw_node(w, first)->decl == first)
            return e;
    }
    Node *n = lw_node(w, e);
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++) {
        NodeId x = implicit_source(w, kids[i], depth + 1);
        if (x)
            return x;
    }
    for (uint32_t i = 0; i < lw_node(w, e)->n; i++) {
        NodeId x = implicit_source(w, ir_list_at(w->b.k, lw_node(w, e), i), depth + 1);
        if (x)
            return x;
    }
    return 0;
}

/* a per-element tile store: binds its implicit indices (those of src) to the
 * thread parts of the layout, lets tr / tc = start + thread part */
static void store_implicit(Lw *w, NodeId src, const LyTile *lv, NodeId r0, NodeId c0, NodeId *tr,
                           NodeId *tc, IrList *pre)
{
    IrB *b = &w->b;
    Dist *d = dist(w);
    Node *ix = lw_node(w, src);
    d->imp_r = lw_node(w, ir_list_at(b->k, ix, 0))->decl;
    d->imp_c = ix->n > 1 ? lw_node(w, ir_list_at(b->k, lw_node(w, src), 1))->decl : 0;
    d->thr_row = irb_let(b, ir_fmt(b->ctx, "row%u", d->ntemps++), implicit_part(w, lv, 0));
    d->thr_col = irb_let(b, ir_fmt(b->ctx, "col%u", d->ntemps++), implicit_part(w, lv, 1));
    *tr = irb_let(b, ir_fmt(b->ctx, "row%u", d->ntemps++), irb_add(b, r0, irb_name(b, d->thr_row)));
    *tc = irb_let(b, ir_fmt(b->ctx, "col%u", d->ntemps++), irb_add(b, c0, irb_name(b, d->thr_col)));
    irb_push(b, pre, d->thr_row);
    irb_push(b, pre, d->thr_col);
    irb_push(b, pre, *tr);
    irb_push(b, pre, *tc);
}

/* store X[.., r : +R, c : +C] <- T: runs of elements adjacent in a row stored
 * as one vector, under the whole-tile mask. With implicit indices
 * (`<- bf16(acc[r, c]) mask bm + r < M`) every element is stored alone, under
 * the mask evaluated at its coordinates: a vector could straddle the edge,
 * and its alignment is not known when the row pitch is ragged. An atomic
 * tile store (`atomic.add X[..] <- acc[r, c]`, sub = OP_ATOMIC_ADD) is one
 * atomic per element. */
static void tile_store(Lw *w, NodeId s, IrList *out)
{
    IrB *b = &w->b;
    Dist *d = dist(w);
    Node *n = lw_node(w, s);
    NodeId value = n->b, mask = n->c;
    uint16_t atomic = n->sub;
    Node *ref = lw_node(w, n->a);
    if (ref->op == OP_NAME) { /* the whole tile: the lowering takes its slices */
        dist_error(w, s, ir_fmt(b->ctx, "a tile store to the whole tile `%s` without indices (write its slices, "
                                "`%s[0 : +ROWS, 0 : +COLS]`, which compile)", ir_symstr(b->ctx, ref->name),
                                ir_symstr(b->ctx, ref->name)));
        return;
    }
    if (ref->op != OP_INDEX || lw_node(w, ref->a)->op != OP_NAME) {
        dist_error(w, s, "a tile store to this memory reference (a tile or tensor indexed by slices, "
                   "`X[i : +R, j : +C]`, compiles)");
        return;
    }
    NodeId tensor = lw_node(w, ref->a)->decl;
    NodeId start[IR_MAX_RANK];
    int slice_dims[2], nslices = 0;
    for (uint32_t i = 0; i < ref->n && i < IR_MAX_RANK; i++) {
        NodeId ix = ir_list_at(b->k, ref, i);
        Node *x = lw_node(w, ix);
        start[i] = x->op == OP_SLICE ? x->a : x->op == OP_COLON ? irb_i32(b, 0) : ix;
        start[i] = irb_cast(b, start[i], DT_I32, 1);
        if ((x->op == OP_SLICE || x->op == OP_COLON) && nslices < 2)
            slice_dims[nslices++] = (int)i;
    }
    NodeId src = dist_is_frag_type(w, value) ? 0 : implicit_source(w, value, 0);
    LyTile lv = dist_ly_of(w, src ? lw_node(w, src)->a : value);
    int rowvec = src && nslices == 1 && lv.cols == 0 && !lv.colvec; /* L[b, r0 : +R] <- m[r] */
    if (!rowvec && (nslices != 2 || lv.cols == 0 || lv.colvec)) {
        dist_error(w, s, "a tile store that is not a 2-D tile into two sliced dims, or a row vector into one");
        return;
    }
    IrList pre = {0};
    d->pre = &pre;
    d->nreds = 0;
    d->imp_r = d->imp_c = 0;
    NodeId tr, tc;
    if (rowvec) {
        store_implicit(w, src, &lv, start[slice_dims[0]], irb_i32(b, 0), &tr, &tc, &pre);
    } else if (src) {
        store_implicit(w, src, &lv, start[slice_dims[0]], start[slice_dims[1]], &tr, &tc, &pre);
    } else {
        tr = irb_let(b, ir_fmt(b->ctx, "row%u", d->ntemps++), irb_add(b, start[slice_dims[0]], dist_thread_part(w, &lv, 0)));
        tc = irb_let(b, ir_fmt(b->ctx, "col%u", d->ntemps++), irb_add(b, start[slice_dims[1]], dist_thread_part(w, &lv, 1)));
        irb_push(b, &pre, tr);
        irb_push(b, &pre, tc);
    }
    uint32_t rank = ref->n;
    IrList body = {0};
    DType xdt = (DType)irb_type(b, tensor)->dtype;
    int ne = ly_elems(&lv);
    for (int e = 0; e < ne;) {
        int r, c, run = 1;
        ly_elem_base(&lv, e, &r, &c);
        while (!src && !atomic && e + run < ne && run < 16 && (run + 1) * ir_dtype_bytes(xdt) <= 16) {
            int r2, c2;
            ly_elem_base(&lv, e + run, &r2, &c2);
            if (r2 != r || c2 != c + run)
                break;
            run++;
        }
        while (run & (run - 1)) /* a power of two */
            run--;
        bind_implicit(w, r, c);
        NodeId vals[16];
        for (int i = 0; i < run; i++) {
            int r2, c2;
            ly_elem_base(&lv, e + i, &r2, &c2);
            NodeId x = dist_elem(w, value, r2, c2);
            if (!x) {
                dist_error(w, s, "this tile expression");
                return;
            }
            vals[i] = irb_cast(b, x, xdt, 1);
        }
        NodeId val = run == 1 ? vals[0] : irb_call(b, OP_L_PACK, vals, (uint32_t)run, irb_scalar_type(b, xdt, run));
        NodeId idx[IR_MAX_RANK];
        for (uint32_t i = 0; i < rank; i++)
            idx[i] = irb_clone(b, start[i]);
        idx[slice_dims[0]] = irb_add_c(b, irb_name(b, tr), r);
        NodeId col = irb_add_c(b, irb_name(b, tc), c);
        if (run > 1) {
            NodeId ext = irb_i32(b, run); /* made before: a new node may move the array */
            NodeId sl = ir_node(b->ctx, b->k, OP_SLICE, b->span);
            lw_node(w, sl)->a = col;
            lw_node(w, sl)->b = ext;
            col = sl;
        }
        if (!rowvec)
            idx[slice_dims[1]] = col;
        NodeId dst = irb_index(b, tensor, idx, rank, irb_scalar_type(b, xdt, run));
        NodeId st = ir_node(b->ctx, b->k, OP_STORE, b->span);
        lw_node(w, st)->a = dst;
        lw_node(w, st)->b = val;
        lw_node(w, st)->sub = atomic;
        if (src && mask) { /* the mask at this element's coordinates */
            IrList one = {0};
            irb_push(b, &one, st);
            st = irb_if(b, irb_clone(b, mask), irb_list_block(b, &one), 0);
        }
        irb_push(b, &body, st);
        e += run;
    }
    for (uint32_t i = 0; i < pre.n; i++)
        irb_push(b, out, pre.v[i]);
    NodeId blk = irb_list_block(b, &body);
    irb_push(b, out, mask && !src ? irb_if(b, mask, blk, 0) : blk);
}

static void stmt(Lw *w, NodeId s, IrList *out)
{
    Node *n = lw_node(w, s);
    switch ((Op)n->op) {
    case OP_REG:
        if (dist_is_frag_type(w, s)) {
            reg_decl(w, s, out);
            return;
        }
        break;
    case OP_ASSIGN:
        if (dist_is_frag_type(w, n->a) || implicit_elem(w, n->a)) {
            tile_assign(w, s, out);
            return;
        }
        break;
    case OP_STORE:
        if (dist_is_frag_type(w, n->b) || implicit_source(w, n->b, 0)) {
            tile_store(w, s, out);
            return;
        }
        break;
    case OP_STMATRIX:
        dist_stmatrix(w, s, out);
        return;
    default:
        if (tc_is_source((Op)n->op) && dist_tc[tc_family_of((Op)n->op)]) {   /* the family's hook */
            dist_tc[tc_family_of((Op)n->op)](w, s, out);
            return;
        }
        break;
    }
    irb_push(&w->b, out, s);
}

uint32_t pass_distribute(CakeCtx *ctx, Kernel *k, Target tg)
{
    Dist d;
    memset(&d, 0, sizeof d);
    d.cvt_pairs = getenv("CAKE_CVT_PAIRS") != NULL;
    const char *fresh = getenv("CAKE_FRESH");
    d.fresh_all = fresh && *fresh && strcmp(fresh, "0") != 0;
    d.nimplicit = k->nnodes;
    d.implicit = arena_alloc(&ctx->arena, k->nnodes + 1);
    Lw w;
    lw_init(&w, ctx, k, tg, &d);
    lw_rewrite(&w, k->body, stmt);
    return w.errors;
}
