/* cost_profile.c — the cost model's counts (cost.h, cost_profile): walks the
 * verified kernel once per sampled block and counts what each block asks of
 * each unit. Loops multiply their body by their trip count (unrolled ones are
 * walked per iteration, so masks and branches are evaluated per iteration);
 * an `if` or a mask that depends on the thread is evaluated at four sampled
 * threads and counts with the fraction that takes it. */
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include "cost.h"
#include "smem.h"

#define NSAMPLE_THREADS 4
#define MAX_LOOPS 24
#define UNROLL_WALK_MAX 64

typedef struct {
    CakeCtx *ctx;
    const Kernel *k;
    Target tg;
    CeEnv env;                    /* base bindings plus the hooks below */
    int64_t block[3], grid[3];
    int64_t thread;               /* the sampled thread.x */
    int sm_count;
    NodeId loop_decl[MAX_LOOPS]; int64_t loop_val[MAX_LOOPS]; int nloops;
    int64_t block_threads, role_threads;
    CostWork *w;                  /* the current role's counts (or the block's) */
    CostProfile *p;
    int first;                    /* the first sample: notes and registers are taken once */
    int unrolled;                 /* inside an unrolled loop */
    double batch;                 /* per-thread global load bytes of the current unrolled batch */
    double inflight_thread;
    double stage[MAX_LOOPS]; int nstage;   /* per-iteration async bytes, per non-unrolled loop */
    double async_stage;           /* the largest per-iteration async bytes of a loop */
    int cp_wait;                  /* the largest cp.async.wait count (-1: none) */
    double regs_tile;             /* per-thread registers of the reg declarations */
    uint8_t *arg_rw;              /* per argument: 1 read, 2 written */
    NodeId reuse_node[64]; double reuse[64]; int nreuse;   /* per global read, by node */
} Walk;

static const Walk *walk_of(const CeEnv *env) { return (const Walk *)env->u; }

static int hook_decl(const CeEnv *env, NodeId decl, int64_t *out)
{
    const Walk *w = walk_of(env);
    for (int i = w->nloops - 1; i >= 0; i--)
        if (w->loop_decl[i] == decl) {
            *out = w->loop_val[i];
            return 1;
        }
    return 0;
}

static int hook_special(const CeEnv *env, NodeId at, int64_t *out)
{
    const Walk *w = walk_of(env);
    int64_t warp = tg_warp(w->tg);
    switch ((SpecialReg)w->k->nodes[at].sub) {
    case SR_THREAD_X: *out = w->thread; return 1;
    case SR_THREAD_Y: case SR_THREAD_Z: case SR_WG: *out = 0; return 1;
    case SR_BLOCK_X: *out = w->block[0]; return 1;
    case SR_BLOCK_Y: *out = w->block[1]; return 1;
    case SR_BLOCK_Z: *out = w->block[2]; return 1;
    case SR_LANE: *out = w->thread % warp; return 1;
    case SR_WARP: *out = w->thread / warp; return 1;
    case SR_NTHREADS: *out = w->role_threads; return 1;
    case SR_GRID_X: *out = w->grid[0]; return 1;
    case SR_GRID_Y: *out = w->grid[1]; return 1;
    case SR_GRID_Z: *out = w->grid[2]; return 1;
    case SR_SM_COUNT: *out = w->sm_count; return 1;
    default: return 0;
    }
}

void cost_note(char notes[][COST_NOTE_LEN], uint32_t *n, const char *fmt, ...)
{
    if (*n >= COST_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(notes[*n], COST_NOTE_LEN, fmt, ap);
    va_end(ap);
    for (uint32_t i = 0; i < *n; i++)
        if (!strcmp(notes[i], notes[*n]))
            return;   /* said already */
    (*n)++;
}

static void note(Walk *w, const char *fmt, const char *what, uint32_t line)
{
    if (w->first)
        cost_note(w->p->notes, &w->p->nnotes, fmt, what, line);
}

static uint32_t line_of(const Walk *w, NodeId id)
{
    uint32_t line = 0, col, el, ec;
    Span s = w->k->nodes[id].span;
    if (s.file < w->ctx->nfiles)
        span_linecol(w->ctx, s, &line, &col, &el, &ec);
    return line;
}

static int eval(Walk *w, NodeId e, int64_t *out)
{
    return e && ce_eval_int(w->ctx, w->k, e, &w->env, out);
}

/* ---- types: elements, bytes, copies per block ---------------------------------- */

static const Type *type_of(const Walk *w, NodeId id)
{
    TypeId t = id ? w->k->nodes[id].type : 0;
    return t && t < w->k->ntypes ? &w->k->types[t] : NULL;
}

static double extent(Walk *w, const Type *t, int i)
{
    int64_t v;
    if (t->dims[i] && eval(w, t->dims[i], &v) && v >= 0)
        return (double)v;
    return t->shape[i] >= 0 ? (double)t->shape[i] : 1.0;
}

static double elems(Walk *w, const Type *t)
{
    if (!t)
        return 1;
    if (t->kind == TK_TILE || t->kind == TK_TENSOR) {
        double e = t->lanes > 1 ? t->lanes : 1;   /* a tile of vectors: f32x8[ITERS] */
        for (int i = 0; i < t->rank; i++)
            e *= extent(w, t, i);
        return e;
    }
    return t->kind == TK_VECTOR ? t->lanes : 1;
}

static double dt_bytes(const Type *t)
{
    int b = t ? ir_dtype_bytes((DType)t->dtype) : 4;
    return b ? b : 1;
}

static double bytes_of(Walk *w, const Type *t) { return elems(w, t) * dt_bytes(t); }

static double scope_threads(const Walk *w, const Type *t)
{
    if (!t || t->kind != TK_TILE || t->space != SP_REG)
        return 1;
    switch (t->scope) {
    case SC_WARP: return tg_warp(w->tg);
    case SC_WARPGROUP: return 4.0 * tg_warp(w->tg);
    case SC_BLOCK: return (double)w->block_threads;
    default: return 1;
    }
}

/* how many instances of a value of type t one execution of the role makes */
static double copies(const Walk *w, const Type *t)
{
    double c = (double)w->role_threads / scope_threads(w, t);
    return c < 1 ? 1 : c;
}

/* ---- conditions at sampled threads ----------------------------------------------- */

/* the fraction of sampled threads for which cond holds; -1 when it does not evaluate */
static double cond_frac(Walk *w, NodeId cond)
{
    if (!cond)
        return 1;
    int64_t keep = w->thread, v;
    int yes = 0;
    for (int s = 0; s < NSAMPLE_THREADS; s++) {
        w->thread = (2 * s + 1) * w->role_threads / (2 * NSAMPLE_THREADS);
        if (!eval(w, cond, &v)) {
            w->thread = keep;
            return -1;
        }
        yes += v != 0;
    }
    w->thread = keep;
    return (double)yes / NSAMPLE_THREADS;
}

/* ---- arguments: what the kernel reads and writes once ---------------------------- */

static void mark_arg(Walk *w, NodeId ref, uint8_t how)
{
    const Kernel *k = w->k;
    while (ref && (k->nodes[ref].op == OP_INDEX || k->nodes[ref].op == OP_TRANS))
        ref = k->nodes[ref].a;
    if (!ref || k->nodes[ref].op != OP_NAME)
        return;
    for (uint32_t i = 0; i < k->nargs; i++)
        if (k->args[i] == k->nodes[ref].decl)
            w->arg_rw[i] |= how;
}

/* How many blocks of the first wave (one block per SM, in launch order) read
   the same tile as each other at global read `ref`: the blocks' index tuples
   (every index of ref evaluated with that block's block.x/y/z, the current
   loop values and thread 0) are compared; blocks / distinct tuples. 1 when an
   index does not evaluate. Measured on the first sample, cached by node. */
static double wave_reuse(Walk *w, NodeId at, NodeId ref)
{
    for (int i = 0; i < w->nreuse; i++)
        if (w->reuse_node[i] == at)
            return w->reuse[i];
    const Kernel *k = w->k;
    while (ref && k->nodes[ref].op == OP_TRANS)
        ref = k->nodes[ref].a;
    const Node *ix = &k->nodes[ref];
    double r = 1;
    int64_t wave = w->p->wave;
    if (ix->op == OP_INDEX && ix->n <= 4 && wave > 1 && wave <= 1024) {
        int64_t keep[3] = {w->block[0], w->block[1], w->block[2]}, kt = w->thread;
        int64_t tup[1024][4];
        int64_t distinct = 0, ok = 1;
        w->thread = 0;
        for (int64_t b = 0; b < wave && ok; b++) {
            w->block[0] = b % w->grid[0];
            w->block[1] = b / w->grid[0] % (w->grid[1] ? w->grid[1] : 1);
            w->block[2] = 0;
            int64_t t[4] = {0, 0, 0, 0};
            for (uint32_t d = 0; d < ix->n && ok; d++) {
                NodeId e = k->lists[ix->list + d];
                if (k->nodes[e].op == OP_SLICE)
                    e = k->nodes[e].a;
                ok = k->nodes[e].op == OP_COLON || eval(w, e, &t[d]);
            }
            int64_t j = 0;
            while (j < distinct && memcmp(tup[j], t, sizeof t))
                j++;
            if (j == distinct)
                memcpy(tup[distinct++], t, sizeof t);
        }
        memcpy(w->block, keep, sizeof keep);
        w->thread = kt;
        if (ok && distinct > 0)
            r = (double)wave / (double)distinct;
    }
    if (w->nreuse < 64) {
        w->reuse_node[w->nreuse] = at;
        w->reuse[w->nreuse++] = r;
    }
    return r;
}

/* The bank-conflict ways of an 8-row matrix access (ldmatrix, stmatrix) to
   shared ref: each phase reads 16 bytes of 8 consecutive rows; with a row
   pitch of P bytes they fall into 8 / gcd(P / 16, 8) distinct 16-byte bank
   groups, and a swizzle of S bytes spreads them over S / 16 more. */
static double bank_ways(Walk *w, NodeId ref)
{
    const Kernel *k = w->k;
    while (ref && (k->nodes[ref].op == OP_INDEX || k->nodes[ref].op == OP_TRANS))
        ref = k->nodes[ref].a;
    if (!ref || k->nodes[ref].op != OP_NAME || !k->nodes[ref].decl)
        return 1;
    const Node *d = &k->nodes[k->nodes[ref].decl];
    const Node *t = d->op == OP_SHARED ? &k->nodes[d->a] : NULL;
    int64_t cols;
    if (!t || !t->n || !eval(w, k->lists[t->list + t->n - 1], &cols) || cols <= 0)
        return 1;
    int64_t pitch = cols * ir_dtype_bytes((DType)t->dtype) * (t->lanes ? t->lanes : 1);
    if (pitch % 16)
        return 1;
    int64_t ways = ce_gcd(pitch / 16, 8);
    int64_t spread = d->v.attr.swizzle / 16;
    if (spread > 1)
        ways = ways / spread > 1 ? ways / spread : 1;
    if (ways > 1 && w->first)
        cost_note(w->p->notes, &w->p->nnotes, "shared tile `%s` (line %u): ldmatrix/stmatrix rows "
                  "conflict %lld-way on the banks (pitch %lld bytes, swizzle %u): counted as %lld times the bytes",
                  ir_symstr(w->ctx, d->name), line_of(w, k->nodes[ref].decl), (long long)ways,
                  (long long)pitch, d->v.attr.swizzle, (long long)ways);
    return (double)ways;
}

static Space space_of(const Walk *w, NodeId ref)
{
    const Type *t = type_of(w, ref);
    return t ? (Space)t->space : SP_NONE;
}

/* ---- expressions ------------------------------------------------------------------ */

static void count_mem_load(Walk *w, const Node *n, double m)
{
    const Type *rt = type_of(w, n->a);
    double f = cond_frac(w, n->b);
    double per_thread = bytes_of(w, rt) * (f < 0 ? 1 : f);
    double total = per_thread * (double)w->role_threads * m;
    if (space_of(w, n->a) == SP_SHARED) {
        w->w->srd += total;
        return;
    }
    w->w->gld += total;
    w->w->dram_rd += total / wave_reuse(w, (NodeId)(n - w->k->nodes), n->a);
    mark_arg(w, n->a, 1);
    if (w->unrolled)
        w->batch += per_thread;
    else if (per_thread > w->inflight_thread)
        w->inflight_thread = per_thread;
}

static void expr(Walk *w, NodeId e, double m);

static void expr_list(Walk *w, const Node *n, double m)
{
    for (uint32_t i = 0; i < n->n; i++)
        expr(w, w->k->lists[n->list + i], m);
}

static void count_arith(Walk *w, const Node *n, const Type *t, double m)
{
    double c = elems(w, t) * copies(w, t) * m;
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
    default:
        break;
    }
}

static void expr(Walk *w, NodeId e, double m)
{
    if (!e || m <= 0)
        return;
    const Kernel *k = w->k;
    const Node *n = &k->nodes[e];
    const Type *t = type_of(w, e);
    switch (n->op) {
    case OP_INT: case OP_FLOAT: case OP_BOOL: case OP_NAME: case OP_COLON: case OP_SPECIAL:
        return;
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
            w->w->srd += bytes_of(w, type_of(w, k->lists[n->list])) * copies(w, t) * m *
                         bank_ways(w, k->lists[n->list]);
        return;
    case OP_DOT: case OP_HSUM: case OP_HMAX:
        expr_list(w, n, m);
        if (n->n) {
            double c = elems(w, type_of(w, k->lists[n->list])) * (double)w->role_threads * m;
            w->w->alu += c;
            w->w->flops_simt += n->op == OP_DOT ? 2 * c : c;
        }
        return;
    case OP_ROWSUM: case OP_ROWMAX: case OP_ROWMIN: case OP_COLSUM: case OP_COLMAX: case OP_COLMIN:
        expr_list(w, n, m);
        if (n->n) {
            const Type *at = type_of(w, k->lists[n->list]);
            double c = elems(w, at) * copies(w, at) * m;
            w->w->alu += c;
            w->w->flops_simt += c;
            w->w->shfl += 2 * elems(w, t) * copies(w, t) * m;   /* a quad exchange per row */
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
    if (ir_ops[n->op].cls == OC_BUILTIN)
        expr_list(w, n, m);
    count_arith(w, n, t, m);
}

/* ---- statements ------------------------------------------------------------------- */

static void stmt(Walk *w, NodeId id, double m);

static void block_stmts(Walk *w, NodeId b, double m)
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

static void stage_push(Walk *w)
{
    if (w->nstage < MAX_LOOPS)
        w->stage[w->nstage] = 0;
    w->nstage++;
}

/* the async bytes one iteration of the loop being left issued: a stage */
static void stage_pop(Walk *w)
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
    int ok = eval(w, n->a, &lo) && eval(w, n->b, &hi) && (!n->c || eval(w, n->c, &step)) && step > 0;
    expr(w, n->a, m);
    expr(w, n->b, m);
    if (!ok) {
        w->p->unknown_trips += w->first;
        note(w, "the trip count of the loop over `%s` (line %u) does not evaluate: counted once",
             ir_symstr(w->ctx, n->name), line_of(w, id));
        loop_push(w, id, 0);
        block_stmts(w, n->d, m);
        w->nloops--;
        return;
    }
    int64_t trips = hi > lo ? (hi - lo + step - 1) / step : 0;
    if (n->v.attr.unroll && trips <= UNROLL_WALK_MAX) {
        int outer = !w->unrolled;
        if (outer) { w->unrolled = 1; w->batch = 0; }
        for (int64_t i = 0; i < trips; i++) {
            loop_push(w, id, lo + i * step);
            block_stmts(w, n->d, m);
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
    stage_push(w);
    block_stmts(w, n->d, m * (double)trips);
    stage_pop(w);
    w->nloops--;
}

static void if_stmt(Walk *w, const Node *n, double m)
{
    expr(w, n->a, m);
    double f = cond_frac(w, n->a);
    if (f < 0)
        f = 1;   /* data-dependent: the then-branch, as if always taken */
    block_stmts(w, n->b, m * f);
    block_stmts(w, n->c, m * (1 - f));
}

static void role_stmt(Walk *w, const Node *n, double m)
{
    int64_t first = 0, end = 0, regs = 0;
    eval(w, n->a, &first);
    if (!n->b || !eval(w, n->b, &end))
        end = first + 1;
    if (n->c)
        eval(w, n->c, &regs);
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
    block_stmts(w, n->d, m);
    w->w = keep;
    w->role_threads = keep_th;
}

static void tc_stmt(Walk *w, const Node *n, double m)
{
    const Type *acc = type_of(w, n->a), *a = type_of(w, n->b), *b = type_of(w, n->c);
    if (!acc || !a || acc->rank < 2 || a->rank < 2)
        return;
    double M = extent(w, acc, 0), N = extent(w, acc, 1);
    double K = extent(w, a, a->transposed ? 0 : 1);
    double inst = copies(w, acc) * m;
    double flops = 2 * M * N * K * inst;
    DType ab = (DType)a->dtype;
    double scale = ir_dtype_bytes(ab) == 1 ? 0.5 : ab == DT_TF32 || ab == DT_F32 ? 2 : ab == DT_F64 ? 16 : 1;
    int unit = n->op == OP_WGMMA ? COST_TC_WGMMA : n->op == OP_MMA ? COST_TC_MMA : COST_TC_MFMA;
    w->w->tc_flops[unit] += flops;
    w->w->tc_work[unit] += flops * scale;
    w->p->uses_tc[unit] = 1;
    if (n->op == OP_WGMMA) {   /* the tensor cores read their shared operands */
        if (a->space == SP_SHARED) w->w->srd += M * K * dt_bytes(a) * inst;
        if (b && b->space == SP_SHARED) w->w->srd += N * K * dt_bytes(b) * inst;
    }
}

static void reg_decl(Walk *w, NodeId id, const Node *n, double m)
{
    const Type *t = type_of(w, id);
    if (!t)
        t = type_of(w, n->a);
    if (w->first && t)
        w->regs_tile += elems(w, t) / scope_threads(w, t) * dt_bytes(t) / 4;
    if (n->b)
        w->w->alu += elems(w, t) * copies(w, t) * m;
}

static void mem_stmt(Walk *w, const Node *n, double m)
{
    const Type *dst = type_of(w, n->a), *src = type_of(w, n->b);
    switch (n->op) {
    case OP_STORE: {
        double f = cond_frac(w, n->c);
        double bytes = bytes_of(w, dst) * copies(w, src) * m * (f < 0 ? 1 : f);
        if (space_of(w, n->a) == SP_SHARED)
            w->w->swr += bytes;
        else {
            w->w->gst += bytes;
            mark_arg(w, n->a, 2);
        }
        expr(w, n->b, m);
        break;
    }
    case OP_CP_ASYNC: {
        double f = cond_frac(w, n->c);
        double bytes = bytes_of(w, dst) * (double)w->role_threads * (f < 0 ? 1 : f);
        w->w->cpasync += bytes * m;
        w->w->dram_rd += bytes * m / wave_reuse(w, (NodeId)(n - w->k->nodes), n->b);
        w->w->swr += bytes * m;
        stage_add(w, bytes);
        mark_arg(w, n->b, 1);
        break;
    }
    case OP_TMA_LOAD: {
        double bytes = bytes_of(w, dst);   /* one elected thread of the role issues it */
        w->w->tma_ld += bytes * m;
        w->w->dram_rd += bytes * m / wave_reuse(w, (NodeId)(n - w->k->nodes), n->b);
        w->w->swr += bytes * m;
        stage_add(w, bytes);
        mark_arg(w, n->b, 1);
        break;
    }
    case OP_TMA_STORE: {
        double inst = (double)w->role_threads / (4.0 * tg_warp(w->tg));
        double bytes = bytes_of(w, src) * (inst < 1 ? 1 : inst) * m;
        w->w->tma_st += bytes;
        w->w->srd += bytes;
        mark_arg(w, n->a, 2);
        break;
    }
    case OP_STMATRIX:
        w->w->swr += bytes_of(w, dst) * copies(w, src) * m * bank_ways(w, n->a);
        expr(w, n->b, m);
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
    case OP_BLOCK: block_stmts(w, id, m); break;
    case OP_LET: case OP_VAR: expr(w, n->b, m); break;
    case OP_REG: reg_decl(w, id, n, m); break;
    case OP_PIPELINE:
        if (eval(w, n->a, &v) && v > w->p->stages)
            w->p->stages = (int)v;
        break;
    case OP_ROLE: role_stmt(w, n, m); break;
    case OP_ASSIGN: {
        double per = 1;
        const Node *lv = &w->k->nodes[n->a];
        if (lv->op == OP_INDEX && lv->n && (w->k->nodes[w->k->lists[lv->list]].flags & NF_IMPLICIT)) {
            const Type *bt = type_of(w, lv->a);
            per = elems(w, bt) * copies(w, bt) / (double)w->role_threads;
        }
        expr(w, n->b, m * per);
        if (n->sub != OP_NONE)
            w->w->alu += elems(w, type_of(w, n->a)) * copies(w, type_of(w, n->a)) * m * per;
        break;
    }
    case OP_FOR: for_stmt(w, id, n, m); break;
    case OP_IF: if_stmt(w, n, m); break;
    case OP_EXPRSTMT: expr(w, n->a, m); break;
    case OP_STORE: case OP_CP_ASYNC: case OP_TMA_LOAD: case OP_TMA_STORE: case OP_STMATRIX:
        mem_stmt(w, n, m);
        break;
    case OP_CP_WAIT:
        if (eval(w, n->a, &v) && v > w->cp_wait)
            w->cp_wait = (int)v;
        w->w->barriers += m;
        break;
    case OP_SYNC: case OP_BAR_SYNC: case OP_MB_WAIT: case OP_WGMMA_WAIT: case OP_TMA_WAIT:
        w->w->barriers += m;
        break;
    case OP_MMA: case OP_WGMMA: case OP_MFMA: tc_stmt(w, n, m); break;
    default: break;
    }
}

/* ---- the profile ------------------------------------------------------------------- */

static void work_add(CostWork *dst, const CostWork *src, double f)
{
    double *d = (double *)dst;
    const double *s = (const double *)src;
    for (size_t i = 0; i < sizeof *dst / sizeof(double); i++)
        d[i] += f * s[i];
}

static void work_max(CostWork *dst, const CostWork *src)
{
    double *d = (double *)dst;
    const double *s = (const double *)src;
    for (size_t i = 0; i < sizeof *dst / sizeof(double); i++)
        if (s[i] > d[i])
            d[i] = s[i];
}

static int header(Walk *w, CostProfile *p, char *why, size_t whylen)
{
    const Kernel *k = w->k;
    int64_t bs;
    if (!k->block_size || !eval(w, k->block_size, &bs) || bs <= 0) {
        snprintf(why, whylen, "the block size does not evaluate");
        return 0;
    }
    p->threads = tg_block_threads(w->tg, (Unit)k->block_unit, bs);
    p->nblocks = 1;
    for (int i = 0; i < 3; i++) {
        p->grid[i] = 1;
        if ((uint32_t)i < k->ngrid && (!eval(w, k->grid[i], &p->grid[i]) || p->grid[i] < 0)) {
            snprintf(why, whylen, "grid dimension %d does not evaluate", i);
            return 0;
        }
        p->nblocks *= p->grid[i];
    }
    memcpy(w->grid, p->grid, sizeof w->grid);
    w->block_threads = w->role_threads = p->threads;
    return 1;
}

static void unique_bytes(Walk *w, CostProfile *p)
{
    const Kernel *k = w->k;
    for (uint32_t i = 0; i < k->nargs; i++) {
        const Node *a = &k->nodes[k->args[i]];
        const Node *gt = &k->nodes[a->a];
        if (!w->arg_rw[i] || gt->op != OP_GTYPE)
            continue;
        double bytes = ir_dtype_bytes((DType)gt->dtype) * (gt->lanes ? gt->lanes : 1);
        for (uint32_t d = 0; d < gt->sub && d < gt->n; d++) {
            int64_t v;
            if (!eval(w, k->lists[gt->list + d], &v))
                v = 0;
            bytes *= (double)v;
        }
        if (w->arg_rw[i] & 1) p->unique_read += bytes;
        if (w->arg_rw[i] & 2) p->unique_write += bytes;
    }
}

int cost_profile(CakeCtx *ctx, const Kernel *k, Target tg, const CeEnv *env, int sm_count,
                 CostProfile *p, char *why, size_t whylen)
{
    memset(p, 0, sizeof *p);
    p->tg = tg;
    Walk w = {.ctx = ctx, .k = k, .tg = tg, .sm_count = sm_count, .p = p, .cp_wait = -1};
    w.env = env ? *env : (CeEnv){0};
    w.env.decl = hook_decl;
    w.env.special = hook_special;
    w.env.u = &w;
    if (!header(&w, p, why, whylen))
        return 0;
    w.arg_rw = arena_alloc(&ctx->arena, k->nargs + 1);
    p->wave = p->nblocks < sm_count ? p->nblocks : sm_count;
    static const double weight[5] = {0.125, 0.25, 0.25, 0.25, 0.125};
    CostRole roles_mean[COST_MAX_ROLES];
    memset(roles_mean, 0, sizeof roles_mean);
    for (int s = 0; s < 5; s++) {
        for (int i = 0; i < 3; i++)   /* the same quantile of every grid dimension */
            w.block[i] = p->grid[i] > 1 ? (int64_t)((double)s * (double)(p->grid[i] - 1) / 4.0) : 0;
        w.first = s == 0;
        w.thread = 0;
        CostWork block = {0};
        w.w = &block;
        for (uint32_t r = 0; r < p->nroles; r++)
            memset(&p->roles[r].w, 0, sizeof p->roles[r].w);
        stage_push(&w);
        block_stmts(&w, k->body, 1);
        stage_pop(&w);
        for (uint32_t r = 0; r < p->nroles; r++) {
            work_add(&block, &p->roles[r].w, 1);
            work_add(&roles_mean[r].w, &p->roles[r].w, weight[s]);
        }
        work_add(&p->w, &block, weight[s]);
        work_max(&p->wmax, &block);
    }
    for (uint32_t r = 0; r < p->nroles; r++)
        p->roles[r].w = roles_mean[r].w;
    /* the bytes in flight per block: unrolled batches of loads, or the async stages */
    double stage = w.async_stage;
    p->stage_bytes = stage;
    if (w.cp_wait >= 0 && p->stages == 0)
        p->stages = w.cp_wait + 2;
    double async = p->stages > 1 ? (p->stages - 1) * stage : stage;
    double simt = w.inflight_thread * (double)p->threads;
    p->inflight_block = async > simt ? async : simt;
    /* registers: the roles' budgets when every role has one, else an estimate */
    int all_regs = p->nroles > 0;
    int maxr = 0;
    for (uint32_t r = 0; r < p->nroles; r++) {
        all_regs &= p->roles[r].regs > 0;
        if (p->roles[r].regs > maxr) maxr = p->roles[r].regs;
    }
    if (all_regs && tg_has(tg, TF_SETMAXNREG)) {
        p->regs_est = (int)tg_launch_regs(tg_info(tg), p->threads);
        p->regs_from_roles = 1;
    } else {
        double est = 32 + 1.15 * w.regs_tile;
        int r = (int)ceil(est / 8) * 8;
        p->regs_est = r;
        cost_note(p->notes, &p->nnotes, "registers per thread estimated at %d from the register "
                  "declarations (ptxas decides the real count)", r);
    }
    SmemPlan sp;
    an_smem_plan(ctx, k, tg, env, &sp);
    p->smem_bytes = sp.unknown ? 0 : sp.total;
    unique_bytes(&w, p);
    return 1;
}
