/* cost_count.c — the cost model's counts (cost_walk.h): what each expression
 * and statement asks of each unit, per block. Loops multiply their body by
 * their trip count (unrolled ones are walked per iteration, so masks and
 * branches are evaluated per iteration); an `if` or a mask that depends on
 * the thread counts with the fraction of sampled threads that takes it. */
#include <string.h>
#include "cost_walk.h"
#include "tcfamily.h"

/* ---- expressions ------------------------------------------------------------------ */

/* the 128-byte lines a warp instruction of global access `at` touches; notes
   an access that touches more than twice the lines its bytes need (scattered) */
static double access_lines(Walk *w, NodeId at, NodeId ref, double bytes, NodeId mask)
{
    double fewest, lines = cw_lines(w, at, ref, bytes, mask, &fewest);
    if (lines > 2 * fewest && !w->p->scatter) {
        w->p->scatter = 1;
        cw_note(w, "global access `%s` (line %u) is scattered: a warp instruction touches more "
                "128-byte lines than its bytes fill", ir_symstr(w->ctx, w->k->nodes[w->k->nodes[ref].a].name),
                cw_line_of(w, at));
    }
    return lines;
}

static void count_mem_load(Walk *w, const Node *n, double m)
{
    const Type *rt = cw_type_of(w, n->a);
    double f = cw_cond_frac(w, n->b);
    double per_thread = cw_bytes_of(w, rt) * (f < 0 ? 1 : f);
    double total = per_thread * (double)w->role_threads * m;
    if (cw_space_of(w, n->a) == SP_SHARED) {
        w->w->srd += total;
        return;
    }
    w->w->gld += total;
    w->w->greq += (f < 0 ? 1 : f) * (double)w->role_threads * m / tg_warp(w->tg) *
                  access_lines(w, (NodeId)(n - w->k->nodes), n->a, cw_bytes_of(w, rt), n->b);
    w->w->dram_rd += total / cw_wave_reuse(w, (NodeId)(n - w->k->nodes), n->a);
    cw_mark_arg(w, n->a, 1);
    if (cw_bytes_of(w, rt) < 8)
        w->p->narrow = 1;
    if (w->unrolled)
        w->batch += per_thread;
    else if (per_thread > w->inflight_thread)
        w->inflight_thread = per_thread;
    if (!w->unrolled && w->nstage > 1 && per_thread > w->inflight_loop)
        w->inflight_loop = per_thread;   /* inside a loop that is not unrolled */
}

static void expr(Walk *w, NodeId e, double m);

static void expr_list(Walk *w, const Node *n, double m)
{
    for (uint32_t i = 0; i < n->n; i++)
        expr(w, w->k->lists[n->list + i], m);
}

static void count_arith(Walk *w, const Node *n, const Type *t, double m)
{
    double c = cw_elems(w, t) * cw_copies(w, t) * m;
    int fp = t && ir_dtypes[t->dtype].kind == 'f';
    switch (ir_ops[n->op].cost) {
    case CC_SFU:
        w->w->sfu += c;
        w->w->alu += c;            /* range reduction / scaling around the MUFU op */
        if (fp) w->w->flops_simt += c;
        break;
    case CC_DIV:
        w->w->alu += 8 * c;
        w->w->sfu += fp ? c : 0;
        if (fp) w->w->flops_simt += c;
        break;
    case CC_ALU: case CC_INT: case CC_CVT:
        w->w->alu += c;
        if (fp) w->w->flops_simt += n->op == OP_FMA ? 2 * c : c;
        break;
    case CC_SHFL:   /* shuffles the lowered level spells out (row reductions) */
        if (w->lowered)
            w->w->shfl += c;
        break;
    default:
        break;
    }
}

/* e has no memory access, reduction, barrier or pipeline op: its counts are
   SIMT work that depends on its types only (cached per node in w->arith->pure) */
static int pure_expr(Walk *w, NodeId e, int depth)
{
    if (!e)
        return 1;
    uint8_t *pure = w->arith->pure;
    if (pure[e])
        return pure[e] == 1;
    const Node *n = &w->k->nodes[e];
    int ok = depth < 64;
    switch (n->op) {
    case OP_LOAD: case OP_LDMATRIX: case OP_LDMATRIX_T: case OP_DOT: case OP_HSUM: case OP_HMAX:
    case OP_ROWSUM: case OP_ROWMAX: case OP_ROWMIN: case OP_COLSUM: case OP_COLMAX: case OP_COLMIN:
    case OP_WARP_ADD: case OP_WARP_MAX: case OP_WARP_MIN: case OP_BLOCK_ADD: case OP_BLOCK_MAX:
    case OP_BLOCK_MIN: case OP_P_ACQUIRE: case OP_P_WAIT:
        ok = 0;
        break;
    default:
        break;
    }
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4 && ok; i++)
        ok = pure_expr(w, kids[i], depth + 1);
    for (uint32_t i = 0; i < n->n && ok; i++)
        ok = pure_expr(w, w->k->lists[n->list + i], depth + 1);
    pure[e] = ok ? 1 : 2;
    return ok;
}

static void expr_count(Walk *w, NodeId e, double m);

/* counts expression e executed m times: a pure one from the memo (its work per
   execution, counted at the first visit), the rest node by node */
static void expr(Walk *w, NodeId e, double m)
{
    if (!e || m <= 0)
        return;
    const Node *n = &w->k->nodes[e];
    if (n->op == OP_INT || n->op == OP_FLOAT || n->op == OP_BOOL || n->op == OP_NAME || n->op == OP_COLON ||
        n->op == OP_SPECIAL)
        return;
    if (ir_plain_index(w->k, n))
        return;   /* acc[3]: an element of an array, no work (expr_count: the name, then the
                     indices, all free; the memo's counts would be zeros) */
    ExprMemo *x = w->arith;
    if (!x || !pure_expr(w, e, 0)) {
        expr_count(w, e, m);
        return;
    }
    uint64_t key = ((uint64_t)e << 32 | (uint64_t)w->role_threads) * 0x9E3779B97F4A7C15ull | 1;
    uint32_t at = (uint32_t)(key >> 40) & (EXPR_MEMO - 1);
    for (int probe = 0; probe < 4; probe++, at = (at + 1) & (EXPR_MEMO - 1))
        if (x->key[at] == key) {
            const ExprWork *c = &x->work[at];
            w->w->alu += c->alu * m;
            w->w->sfu += c->sfu * m;
            w->w->shfl += c->shfl * m;
            w->w->flops_simt += c->flops * m;
            return;
        } else if (!x->key[at])
            break;
    CostWork *real = w->w, once;
    memset(&once, 0, sizeof once);
    w->w = &once;
    expr_count(w, e, 1);
    w->w = real;
    real->alu += once.alu * m;
    real->sfu += once.sfu * m;
    real->shfl += once.shfl * m;
    real->flops_simt += once.flops_simt * m;
    if (!x->key[at]) {
        x->key[at] = key;
        x->work[at] = (ExprWork){once.alu, once.sfu, once.shfl, once.flops_simt};
    }
}

static void expr_count(Walk *w, NodeId e, double m)
{
    if (!e || m <= 0)
        return;
    const Kernel *k = w->k;
    const Node *n = &k->nodes[e];
    if (n->op == OP_INT || n->op == OP_FLOAT || n->op == OP_BOOL || n->op == OP_NAME || n->op == OP_COLON ||
        n->op == OP_SPECIAL)
        return;   /* the leaves (most operands of a lowered op: acc[i]) cost nothing */
    const Type *t = cw_type_of(w, e);
    switch (n->op) {
    case OP_LOAD:
        count_mem_load(w, n, m);
        expr(w, n->a, m);
        return;
    case OP_INDEX:
        expr(w, n->a, m);
        expr_list(w, n, m);
        return;
    case OP_SLICE:
        expr(w, n->a, m);
        return;
    case OP_LDMATRIX: case OP_LDMATRIX_T:
        if (n->n)
            w->w->srd += cw_bytes_of(w, cw_type_of(w, k->lists[n->list])) * cw_copies(w, t) * m *
                         cw_bank_ways(w, k->lists[n->list]);
        return;
    case OP_DOT: case OP_HSUM: case OP_HMAX:
        expr_list(w, n, m);
        if (n->n) {
            double c = cw_elems(w, cw_type_of(w, k->lists[n->list])) * (double)w->role_threads * m;
            w->w->alu += c;
            w->w->flops_simt += n->op == OP_DOT ? 2 * c : c;
        }
        return;
    case OP_ROWSUM: case OP_ROWMAX: case OP_ROWMIN: case OP_COLSUM: case OP_COLMAX: case OP_COLMIN:
        expr_list(w, n, m);
        if (n->n) {
            const Type *at = cw_type_of(w, k->lists[n->list]);
            double c = cw_elems(w, at) * cw_copies(w, at) * m;
            w->w->alu += c;
            w->w->flops_simt += c;
            w->w->shfl += 2 * cw_elems(w, t) * cw_copies(w, t) * m;   /* a quad exchange per row */
        }
        return;
    case OP_WARP_ADD: case OP_WARP_MAX: case OP_WARP_MIN:
        expr_list(w, n, m);
        w->w->shfl += 5 * (double)w->role_threads * m;
        w->w->alu += 5 * (double)w->role_threads * m;
        return;
    case OP_BLOCK_ADD: case OP_BLOCK_MAX: case OP_BLOCK_MIN:
        expr_list(w, n, m);
        w->w->shfl += 10 * (double)w->role_threads * m;
        w->w->alu += 10 * (double)w->role_threads * m;
        w->w->barriers += 2 * m;
        return;
    case OP_P_ACQUIRE: case OP_P_WAIT:
        w->w->barriers += m;
        return;
    default:
        break;
    }
    expr(w, n->a, m);
    expr(w, n->b, m);
    expr(w, n->c, m);
    if (ir_ops[n->op].cls == OC_BUILTIN || ir_ops[n->op].cls == OC_LOW)
        expr_list(w, n, m);
    count_arith(w, n, t, m);
}

/* ---- statements ------------------------------------------------------------------- */

static void stmt(Walk *w, NodeId id, double m);

void cw_block_stmts(Walk *w, NodeId b, double m)
{
    if (!b)
        return;
    const Node *n = &w->k->nodes[b];
    if (n->op != OP_BLOCK) {
        stmt(w, b, m);
        return;
    }
    for (uint32_t i = 0; i < n->n; i++)
        stmt(w, w->k->lists[n->list + i], m);
}

static void loop_push(Walk *w, NodeId decl, int64_t v)
{
    if (w->nloops < MAX_LOOPS) {
        w->loop_decl[w->nloops] = decl;
        w->loop_val[w->nloops++] = v;
    }
}

void cw_stage_push(Walk *w)
{
    if (w->nstage < MAX_LOOPS)
        w->stage[w->nstage] = 0;
    w->nstage++;
}

/* the async bytes one iteration of the loop being left issued: a stage */
void cw_stage_pop(Walk *w)
{
    w->nstage--;
    if (w->nstage < MAX_LOOPS && w->nstage >= 0 && w->stage[w->nstage] > w->async_stage)
        w->async_stage = w->stage[w->nstage];
}

static void stage_add(Walk *w, double bytes)
{
    if (w->nstage > 0 && w->nstage <= MAX_LOOPS)
        w->stage[w->nstage - 1] += bytes;
}

static void for_stmt(Walk *w, NodeId id, const Node *n, double m)
{
    int64_t lo, hi, step = 1;
    int ok = cw_eval(w, n->a, &lo) && cw_eval(w, n->b, &hi) && (!n->c || cw_eval(w, n->c, &step)) && step > 0;
    expr(w, n->a, m);
    expr(w, n->b, m);
    if (!ok) {
        w->p->unknown_trips += w->first;
        cw_note(w, "the trip count of the loop over `%s` (line %u) does not evaluate: counted once",
             ir_symstr(w->ctx, n->name), cw_line_of(w, id));
        loop_push(w, id, 0);
        cw_block_stmts(w, n->d, m);
        w->nloops--;
        return;
    }
    int64_t trips = hi > lo ? (hi - lo + step - 1) / step : 0;
    if (n->v.attr.unroll && trips <= UNROLL_WALK_MAX) {
        int outer = !w->unrolled;
        if (outer) { w->unrolled = 1; w->batch = 0; }
        for (int64_t i = 0; i < trips; i++) {
            loop_push(w, id, lo + i * step);
            cw_block_stmts(w, n->d, m);
            w->nloops--;
        }
        if (outer) {
            w->unrolled = 0;
            if (w->batch > w->inflight_thread)
                w->inflight_thread = w->batch;
        }
        return;
    }
    /* a representative iteration: the second (the first is often peeled work) */
    loop_push(w, id, trips > 1 ? lo + step : lo);
    cw_stage_push(w);
    cw_block_stmts(w, n->d, m * (double)trips);
    cw_stage_pop(w);
    w->nloops--;
}

static void if_stmt(Walk *w, const Node *n, double m)
{
    expr(w, n->a, m);
    double f = cw_cond_frac(w, n->a);
    if (f < 0)
        f = 1;   /* data-dependent: the then-branch, as if always taken */
    double keep = w->cond_f;
    w->cond_f = keep * f;
    cw_block_stmts(w, n->b, m * f);
    w->cond_f = keep * (1 - f);
    cw_block_stmts(w, n->c, m * (1 - f));
    w->cond_f = keep;
}

static void role_stmt(Walk *w, const Node *n, double m)
{
    int64_t first = 0, end = 0, regs = 0;
    cw_eval(w, n->a, &first);
    if (!n->b || !cw_eval(w, n->b, &end))
        end = first + 1;
    if (n->c)
        cw_eval(w, n->c, &regs);
    int64_t th = tg_block_threads(w->tg, (Unit)n->sub, end - first);
    CostProfile *p = w->p;
    uint32_t r = 0;
    while (r < p->nroles && strcmp(p->roles[r].name, ir_symstr(w->ctx, n->name)))
        r++;
    if (r == p->nroles && r < COST_MAX_ROLES) {
        snprintf(p->roles[r].name, sizeof p->roles[r].name, "%s", ir_symstr(w->ctx, n->name));
        p->roles[r].threads = th;
        p->roles[r].regs = (int)regs;
        p->nroles++;
    }
    if (r >= COST_MAX_ROLES)
        return;
    CostWork *keep = w->w;
    int64_t keep_th = w->role_threads;
    w->w = &p->roles[r].w;   /* the sample's role counts; merged into the block after */
    w->role_threads = th;
    cw_block_stmts(w, n->d, m);
    w->w = keep;
    w->role_threads = keep_th;
}

/* the cost unit of each tensor-core family (ir/tcfamily.h): the cost hook */
static const int tc_family_unit[TCF__COUNT] = {
    [TCF_MMA_SYNC] = COST_TC_MMA, [TCF_WGMMA] = COST_TC_WGMMA, [TCF_MFMA] = COST_TC_MFMA,
    [TCF_TCGEN05] = COST_TC_WGMMA,
};

static void tc_stmt(Walk *w, const Node *n, double m)
{
    const Type *acc = cw_type_of(w, n->a), *a = cw_type_of(w, n->b), *b = cw_type_of(w, n->c);
    if (!acc || !a || acc->rank < 2 || a->rank < 2)
        return;
    double M = cw_extent(w, acc, 0), N = cw_extent(w, acc, 1);
    double K = cw_extent(w, a, a->transposed ? 0 : 1);
    double inst = cw_copies(w, acc) * m;
    double flops = 2 * M * N * K * inst;
    DType ab = (DType)a->dtype;
    double scale = ir_dtype_bytes(ab) == 1 ? 0.5 : ab == DT_TF32 || ab == DT_F32 ? 2 : ab == DT_F64 ? 16 : 1;
    TcFamily fam = tc_family_of((Op)n->op);
    int unit = tc_family_unit[fam];
    w->w->tc_flops[unit] += flops;
    w->w->tc_work[unit] += flops * scale;
    w->p->uses_tc[unit] = 1;
    if (tc_family(fam)->b_src == TCO_SMEM_DESC) {   /* the tensor cores read their shared operands */
        if (a->space == SP_SHARED) w->w->srd += M * K * cw_dt_bytes(a) * inst;
        if (b && b->space == SP_SHARED) w->w->srd += N * K * cw_dt_bytes(b) * inst;
    }
}

static void reg_decl(Walk *w, NodeId id, const Node *n, double m)
{
    const Type *t = cw_type_of(w, id);
    if (!t)
        t = cw_type_of(w, n->a);
    if (w->first && t)
        w->regs_tile += cw_elems(w, t) / cw_scope_threads(w, t) * cw_dt_bytes(t) / 4;
    if (n->b)
        w->w->alu += cw_elems(w, t) * cw_copies(w, t) * m;
}

/* the distributed tile an implicit-index value reads (`store C[..] <- bf16(acc[r, c])`:
   acc), or NULL: its elements are the store's, once per copy of the tile */
static const Type *implicit_tile(const Walk *w, NodeId e, int depth)
{
    if (!e || depth > 32)
        return NULL;
    const Kernel *k = w->k;
    const Node *n = &k->nodes[e];
    if (n->op == OP_INDEX && n->n) {
        const Node *i0 = &k->nodes[k->lists[n->list]];
        if (i0->op == OP_NAME && ((i0->flags & NF_IMPLICIT) || (i0->decl && (k->nodes[i0->decl].flags & NF_IMPLICIT))))
            return cw_type_of(w, n->a);
    }
    const Type *t;
    if ((t = implicit_tile(w, n->a, depth + 1)) || (t = implicit_tile(w, n->b, depth + 1)) ||
        (t = implicit_tile(w, n->c, depth + 1)))
        return t;
    if (ir_ops[n->op].cls == OC_BUILTIN)
        for (uint32_t i = 0; i < n->n; i++)
            if ((t = implicit_tile(w, k->lists[n->list + i], depth + 1)))
                return t;
    return NULL;
}

static void mem_stmt(Walk *w, const Node *n, double m)
{
    const Type *dst = cw_type_of(w, n->a), *src = cw_type_of(w, n->b);
    switch (n->op) {
    case OP_STORE: {
        double f = cw_cond_frac(w, n->c);
        const Type *tile = implicit_tile(w, n->b, 0);
        if (tile) {   /* a per-element tile store: the slice once per copy of the tile, the value per element */
            w->p->tile_stores = 1;
            double per = cw_elems(w, tile) * cw_copies(w, tile) / (double)w->role_threads;
            w->w->gst += cw_bytes_of(w, dst) * cw_copies(w, tile) * m;
            w->w->greq += cw_elems(w, tile) * cw_copies(w, tile) * m / tg_warp(w->tg);   /* element by element */
            cw_mark_arg(w, n->a, 2);
            expr(w, n->b, m * per);
            break;
        }
        double bytes = cw_bytes_of(w, dst) * cw_copies(w, src) * m * (f < 0 ? 1 : f);
        if (cw_space_of(w, n->a) != SP_SHARED && cw_bytes_of(w, dst) < 8)
            w->p->narrow = 1;
        if (cw_space_of(w, n->a) == SP_SHARED)
            w->w->swr += bytes;
        else {
            w->w->gst += bytes;
            w->w->greq += cw_copies(w, src) * m * (f < 0 ? 1 : f) / tg_warp(w->tg) *
                          access_lines(w, (NodeId)(n - w->k->nodes), n->a, cw_bytes_of(w, dst), n->c);
            cw_mark_arg(w, n->a, 2);
        }
        expr(w, n->b, m);
        break;
    }
    case OP_CP_ASYNC: {
        double f = cw_cond_frac(w, n->c);
        double bytes = cw_bytes_of(w, dst) * (double)w->role_threads * (f < 0 ? 1 : f);
        w->w->cpasync += bytes * m;
        w->w->dram_rd += bytes * m / cw_wave_reuse(w, (NodeId)(n - w->k->nodes), n->b);
        w->w->swr += bytes * m;
        stage_add(w, bytes);
        cw_mark_arg(w, n->b, 1);
        break;
    }
    case OP_TMA_LOAD: {
        double bytes = cw_bytes_of(w, dst);   /* one elected thread of the role issues it */
        w->w->tma_ld += bytes * m;
        w->w->dram_rd += bytes * m / cw_wave_reuse(w, (NodeId)(n - w->k->nodes), n->b);
        w->w->swr += bytes * m;
        stage_add(w, bytes);
        cw_mark_arg(w, n->b, 1);
        break;
    }
    case OP_TMA_STORE: {
        double inst = (double)w->role_threads / (4.0 * tg_warp(w->tg));
        double bytes = cw_bytes_of(w, src) * (inst < 1 ? 1 : inst) * m;
        w->w->tma_st += bytes;
        w->w->srd += bytes;
        cw_mark_arg(w, n->a, 2);
        break;
    }
    case OP_STMATRIX:
        w->w->swr += cw_bytes_of(w, dst) * cw_copies(w, src) * m * cw_bank_ways(w, n->a);
        expr(w, n->b, m);
        break;
    default:
        break;
    }
}

/* ---- the lowered level (TIR-L) ----------------------------------------------------- */

/* the bytes of one box of the tensor map `map` (a NAME of an L_TMAP) and its
   tensor argument's NAME */
static double tma_box(Walk *w, NodeId map, NodeId *tensor)
{
    const Kernel *k = w->k;
    *tensor = 0;
    NodeId d = map ? k->nodes[map].decl : 0;
    if (!d || k->nodes[d].op != OP_L_TMAP)
        return 0;
    const Node *tm = &k->nodes[d];
    *tensor = tm->a;
    double b = cw_dt_bytes(cw_type_of(w, tm->a));
    for (uint32_t i = 0; i < tm->n; i++) {
        int64_t v;
        b *= cw_eval(w, k->lists[tm->list + i], &v) ? (double)v : 1;
    }
    return b;
}

/* one lowered tensor-core instruction, issued by `issues` warps / warpgroups */
static void tc_lowered(Walk *w, const Node *n, int unit, double issues)
{
    IrTc t = ir_tc_unpack(n->v.i);
    double flops = 2.0 * t.m * t.n * t.k * issues;
    int ab = ir_dtype_bytes((DType)t.ab);
    double scale = ab == 1 ? 0.5 : t.ab == DT_TF32 || t.ab == DT_F32 ? 2 : t.ab == DT_F64 ? 16 : 1;
    w->w->tc_flops[unit] += flops;
    w->w->tc_work[unit] += flops * scale;
    w->p->uses_tc[unit] = 1;
    if (unit == COST_TC_WGMMA) {   /* the tensor cores read their shared operands */
        int bb = t.b_dt != DT_NONE ? ir_dtype_bytes((DType)t.b_dt) : ab;
        if (!t.a_regs) w->w->srd += (double)t.m * t.k * ab * issues;
        w->w->srd += (double)t.n * t.k * bb * issues;
    }
}

/* ldmatrix / stmatrix .xN: N 8x8 matrices of 16-bit elements per warp, 4N bytes a thread */
static double matrix_bytes(Walk *w, const Node *n, double m)
{
    double ways = n->n ? cw_bank_ways(w, w->k->lists[n->list]) : 1;
    NodeId addr = n->n ? w->k->lists[n->list] : 0;
    if (addr && w->k->nodes[addr].op == OP_L_SADDR && w->k->nodes[addr].n)
        ways = cw_bank_ways(w, w->k->lists[w->k->nodes[addr].list]);
    return 4.0 * (n->sub ? n->sub : 1) * (double)w->role_threads * m * ways;
}

static void lowered_stmt(Walk *w, NodeId id, const Node *n, double m)
{
    const Kernel *k = w->k;
    double threads = (double)w->role_threads * m;   /* thread executions */
    double warp = tg_warp(w->tg);
    NodeId tensor;
    switch (n->op) {
    case OP_L_TMA_LOAD: {
        double box = tma_box(w, n->n ? k->lists[n->list] : 0, &tensor);
        w->w->tma_ld += box * threads;
        w->w->swr += box * threads;
        w->w->dram_rd += box * threads /
            (n->n > 3 ? cw_wave_reuse_list(w, id, &k->lists[n->list + 3], n->n - 3) : 1);
        stage_add(w, box * (double)w->role_threads * w->cond_f);
        cw_mark_arg(w, tensor, 1);
        break;
    }
    case OP_L_TMA_STORE: {
        double box = tma_box(w, n->n ? k->lists[n->list] : 0, &tensor);
        w->w->tma_st += box * threads;
        w->w->srd += box * threads;
        cw_mark_arg(w, tensor, 2);
        break;
    }
    case OP_L_WGMMA: tc_lowered(w, n, COST_TC_WGMMA, threads / (4 * warp)); expr_list(w, n, m); break;
    case OP_L_MMA: tc_lowered(w, n, COST_TC_MMA, threads / warp); break;
    case OP_L_MFMA: tc_lowered(w, n, COST_TC_MFMA, threads / warp); break;
    case OP_L_LDMATRIX: w->w->srd += matrix_bytes(w, n, m); expr_list(w, n, m); break;
    case OP_L_STMATRIX: w->w->swr += matrix_bytes(w, n, m); expr_list(w, n, m); break;
    case OP_L_MBAR_WAIT: case OP_L_BULK_WAIT: case OP_L_WG_WAIT:
        /* a wait of the group (issued by one thread or all): once per execution */
        w->w->barriers += w->cond_f > 0 ? m / w->cond_f : 0;
        break;
    default:
        break;
    }
}

static void stmt(Walk *w, NodeId id, double m)
{
    if (!id || m <= 0)
        return;
    const Node *n = &w->k->nodes[id];
    int64_t v;
    switch (n->op) {
    case OP_BLOCK: cw_block_stmts(w, id, m); break;
    case OP_LET: case OP_VAR: expr(w, n->b, m); break;
    case OP_REG: reg_decl(w, id, n, m); break;
    case OP_PIPELINE:
        if (cw_eval(w, n->a, &v) && v > w->p->stages)
            w->p->stages = (int)v;
        break;
    case OP_ROLE: role_stmt(w, n, m); break;
    case OP_ASSIGN: {
        double per = 1;
        const Node *lv = &w->k->nodes[n->a];
        if (lv->op == OP_INDEX && lv->n && (w->k->nodes[w->k->lists[lv->list]].flags & NF_IMPLICIT)) {
            const Type *bt = cw_type_of(w, lv->a);
            per = cw_elems(w, bt) * cw_copies(w, bt) / (double)w->role_threads;
        }
        expr(w, n->b, m * per);
        if (n->sub != OP_NONE)
            w->w->alu += cw_elems(w, cw_type_of(w, n->a)) * cw_copies(w, cw_type_of(w, n->a)) * m * per;
        break;
    }
    case OP_FOR: for_stmt(w, id, n, m); break;
    case OP_IF: if_stmt(w, n, m); break;
    case OP_EXPRSTMT: expr(w, n->a, m); break;
    case OP_STORE: case OP_CP_ASYNC: case OP_TMA_LOAD: case OP_TMA_STORE: case OP_STMATRIX:
        mem_stmt(w, n, m);
        break;
    case OP_CP_WAIT:
        if (cw_eval(w, n->a, &v) && v > w->cp_wait)
            w->cp_wait = (int)v;
        w->w->barriers += m;
        break;
    case OP_SYNC: case OP_BAR_SYNC: case OP_MB_WAIT: case OP_WGMMA_WAIT: case OP_TMA_WAIT:
        w->w->barriers += m;
        break;
    default:
        if (ir_ops[n->op].cls == OC_LOW)
            lowered_stmt(w, id, n, m);
        else if (tc_is_source((Op)n->op))
            tc_stmt(w, n, m);
        break;
    }
}

