/* cost_query.c — the questions the cost model's walk (cost_walk.h) asks of
 * the kernel: the bindings of loop variables and special registers at the
 * sampled block and thread, notes, the sizes of types per block, the fraction
 * of sampled threads a condition holds for, the arguments read and written,
 * the reuse of a global read across a wave and shared-memory bank ways. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "cost_walk.h"

static const Walk *walk_of(const CeEnv *env) { return (const Walk *)env->u; }

int cw_hook_decl(const CeEnv *env, NodeId decl, int64_t *out)
{
    const Walk *w = walk_of(env);
    for (int i = w->nloops - 1; i >= 0; i--)
        if (w->loop_decl[i] == decl) {
            *out = w->loop_val[i];
            return 1;
        }
    return 0;
}

int cw_hook_special(const CeEnv *env, NodeId at, int64_t *out)
{
    const Walk *w = walk_of(env);
    int64_t warp = tg_warp(w->tg);
    SpecialReg sr = (SpecialReg)w->k->nodes[at].sub;
    if (sr == SR_THREAD_X || sr == SR_WG || sr == SR_LANE || sr == SR_WARP)
        ((Walk *)env->u)->thread_reads++;
    if (sr == SR_BLOCK_X || sr == SR_BLOCK_Y || sr == SR_BLOCK_Z)
        ((Walk *)env->u)->block_reads++;
    switch (sr) {
    case SR_THREAD_X: *out = w->thread; return 1;
    case SR_THREAD_Y: case SR_THREAD_Z: *out = 0; return 1;
    case SR_WG:   /* source: role-relative, as thread.x; TIR-L: the real one */
        *out = (w->lowered ? w->thread : w->thread - w->group_first) / (4 * warp);
        return 1;
    case SR_BLOCK_X: *out = w->block[0]; return 1;
    case SR_BLOCK_Y: *out = w->block[1]; return 1;
    case SR_BLOCK_Z: *out = w->block[2]; return 1;
    case SR_LANE: *out = w->thread % warp; return 1;
    case SR_WARP: *out = w->thread / warp; return 1;
    case SR_NTHREADS: *out = w->lowered ? w->block_threads : w->role_threads; return 1;
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

void cw_note(Walk *w, const char *fmt, const char *what, uint32_t line)
{
    if (w->first)
        cost_note(w->p->notes, &w->p->nnotes, fmt, what, line);
}

uint32_t cw_line_of(const Walk *w, NodeId id)
{
    uint32_t line = 0, col, el, ec;
    Span s = w->k->nodes[id].span;
    if (s.file < w->ctx->nfiles)
        span_linecol(w->ctx, s, &line, &col, &el, &ec);
    return line;
}

int cw_eval(Walk *w, NodeId e, int64_t *out)
{
    return e && ce_eval_int(w->ctx, w->k, e, &w->env, out);
}

/* ---- types: elements, bytes, copies per block ---------------------------------- */

const Type *cw_type_of(const Walk *w, NodeId id)
{
    TypeId t = id ? w->k->nodes[id].type : 0;
    return t && t < w->k->ntypes ? &w->k->types[t] : NULL;
}

double cw_extent(Walk *w, const Type *t, int i)
{
    int64_t v;
    if (t->dims[i] && cw_eval(w, t->dims[i], &v) && v >= 0)
        return (double)v;
    return t->shape[i] >= 0 ? (double)t->shape[i] : 1.0;
}

double cw_elems(Walk *w, const Type *t)
{
    if (!t)
        return 1;
    if (t->kind == TK_TILE || t->kind == TK_TENSOR) {
        double e = t->lanes > 1 ? t->lanes : 1;   /* a tile of vectors: f32x8[ITERS] */
        for (int i = 0; i < t->rank; i++)
            e *= cw_extent(w, t, i);
        return e;
    }
    return t->kind == TK_VECTOR ? t->lanes : 1;
}

double cw_dt_bytes(const Type *t)
{
    int b = t ? ir_dtype_bytes((DType)t->dtype) : 4;
    return b ? b : 1;
}

double cw_bytes_of(Walk *w, const Type *t) { return cw_elems(w, t) * cw_dt_bytes(t); }

double cw_scope_threads(const Walk *w, const Type *t)
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
double cw_copies(const Walk *w, const Type *t)
{
    double c = (double)w->role_threads / cw_scope_threads(w, t);
    return c < 1 ? 1 : c;
}

/* ---- conditions at sampled threads ----------------------------------------------- */

/* TIR-L: the fraction of the group's threads for which cond holds, sampled at
   lanes {0, 1, 16, 31} of warps {0, 1, W/2, W-1} of the group, each sample
   weighted by the threads it stands for (lane 0 and the last lane for one each,
   so a single-issue `lane == 0` or `thread.x % 128 == 0` counts right) */
static double cond_frac_lowered(Walk *w, NodeId cond)
{
    int64_t warp = tg_warp(w->tg), keep = w->thread, v;
    int64_t nw = (w->role_threads + warp - 1) / warp;
    int64_t lane[4] = {0, 1, warp / 2, warp - 1};
    double lw[4] = {1, (double)warp / 2 - 1, (double)warp / 2 - 1, 1};
    int64_t wi[4] = {0, 1, nw / 2, nw - 1};
    double ww[4] = {1, (double)nw / 2 - 1, (double)nw / 2 - 1, 1};
    if (nw < 4) {   /* 1 to 3 warps: each its own sample */
        for (int j = 0; j < 4; j++) { wi[j] = j < nw ? j : 0; ww[j] = j < nw ? 1 : 0; }
    }
    double yes = 0, all = 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            if (ww[a] <= 0 || lw[b] <= 0)
                continue;
            w->thread = w->group_first + wi[a] * warp + lane[b];
            uint32_t reads = w->thread_reads;
            if (!cw_eval(w, cond, &v)) {
                w->thread = keep;
                return -1;
            }
            if (a == 0 && b == 0 && w->thread_reads == reads) {   /* uniform: one value for all */
                w->thread = keep;
                return v != 0;
            }
            all += ww[a] * lw[b];
            yes += v ? ww[a] * lw[b] : 0;
        }
    w->thread = keep;
    return all > 0 ? yes / all : 0;
}

/* the fraction of sampled threads for which cond holds; -1 when it does not evaluate */
double cw_cond_frac(Walk *w, NodeId cond)
{
    if (!cond)
        return 1;
    if (w->lowered) {   /* once per statement (its copies) and loop values in a role's walk */
        uint64_t key = cw_memo_key(w, cond, 1);
        uint64_t by_role = (key ^ ((uint64_t)w->group + 1)) * 1099511628211ull;
        double f;
        if (cw_memo_get(w->conds, key, &f, NULL))
            return f;
        /* one that read no block index at an earlier sampled block: its value */
        if (!cw_memo_get(w->conds_blocks, by_role, &f, NULL)) {
            uint32_t reads = w->block_reads;
            f = cond_frac_lowered(w, cond);
            if (w->block_reads == reads)
                cw_memo_put(w->conds_blocks, by_role, f, 0);
        }
        cw_memo_put(w->conds, key, f, 0);
        return f;
    }
    int64_t keep = w->thread, v;
    int yes = 0;
    for (int s = 0; s < NSAMPLE_THREADS; s++) {
        w->thread = (2 * s + 1) * w->role_threads / (2 * NSAMPLE_THREADS);
        if (!cw_eval(w, cond, &v)) {
            w->thread = keep;
            return -1;
        }
        yes += v != 0;
    }
    w->thread = keep;
    return (double)yes / NSAMPLE_THREADS;
}

/* ---- arguments: what the kernel reads and writes once ---------------------------- */

void cw_mark_arg(Walk *w, NodeId ref, uint8_t how)
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
uint64_t cw_memo_key(const Walk *w, NodeId at, int with_loops)
{
    const Node *n = &w->k->nodes[at];
    uint64_t h = 1469598103934665603ull;
    if (!w->lowered || n->span.hi <= n->span.lo)
        h = (h ^ at) * 1099511628211ull;
    else {
        uint64_t parts[3] = {n->span.file, n->span.lo, (uint64_t)n->span.hi << 16 | n->op};
        for (int i = 0; i < 3; i++)
            h = (h ^ parts[i]) * 1099511628211ull;
    }
    for (int i = 0; with_loops && i < w->nloops; i++)
        h = (h ^ (uint64_t)w->loop_val[i]) * 1099511628211ull;
    return h ? h : 1;
}

int cw_memo_get(const CostMemo *m, uint64_t key, double *a, double *b)
{
    for (uint32_t i = (uint32_t)key & (COST_MEMO - 1), n = 0; n < COST_MEMO && m->gen[i] == m->cur;
         i = (i + 1) & (COST_MEMO - 1), n++)
        if (m->key[i] == key) {
            *a = m->a[i];
            if (b) *b = m->b[i];
            return 1;
        }
    return 0;
}

void cw_memo_put(CostMemo *m, uint64_t key, double a, double b)
{
    for (uint32_t i = (uint32_t)key & (COST_MEMO - 1), n = 0; n < COST_MEMO; i = (i + 1) & (COST_MEMO - 1), n++)
        if (m->gen[i] != m->cur || m->key[i] == key) {
            m->key[i] = key;
            m->gen[i] = m->cur;
            m->a[i] = a;
            m->b[i] = b;
            return;
        }
}

static double reuse_cached(Walk *w, NodeId at, int *hit)
{
    double r = 1;
    *hit = cw_memo_get(w->reuse, cw_memo_key(w, at, 0), &r, NULL);
    return r;
}

static double reuse_keep(Walk *w, NodeId at, double r)
{
    cw_memo_put(w->reuse, cw_memo_key(w, at, 0), r, 0);
    return r;
}

static int cmp_tuple(const void *a, const void *b)
{
    return memcmp(a, b, 4 * sizeof(int64_t));
}

/* the first wave's blocks / the distinct tuples of the n index expressions ix
   (OP_COLON: any; OP_SLICE: its start) */
static double reuse_of(Walk *w, const NodeId *ix, uint32_t n)
{
    const Kernel *k = w->k;
    int64_t wave = w->p->wave;
    if (n > 4 || wave <= 1 || wave > 1024)
        return 1;
    int64_t keep[3] = {w->block[0], w->block[1], w->block[2]}, kt = w->thread;
    uint32_t reads = w->block_reads;   /* memoized per profile: no sampled block's count */
    int64_t tup[1024][4];
    int64_t distinct = 0, ok = 1, nt = 0;
    w->thread = w->group_first;
    for (int64_t b = 0; b < wave && ok; b++) {
        w->block[0] = b % w->grid[0];
        w->block[1] = b / w->grid[0] % (w->grid[1] ? w->grid[1] : 1);
        w->block[2] = 0;
        int64_t t[4] = {0, 0, 0, 0};
        for (uint32_t d = 0; d < n && ok; d++) {
            NodeId e = ix[d];
            if (k->nodes[e].op == OP_SLICE)
                e = k->nodes[e].a;
            ok = k->nodes[e].op == OP_COLON || cw_eval(w, e, &t[d]);
        }
        memcpy(tup[nt++], t, sizeof t);
    }
    memcpy(w->block, keep, sizeof keep);
    w->thread = kt;
    w->block_reads = reads;
    qsort(tup, (size_t)nt, sizeof tup[0], cmp_tuple);   /* the distinct tuples, by sorting */
    for (int64_t j = 0; j < nt; j++)
        distinct += j == 0 || memcmp(tup[j], tup[j - 1], sizeof tup[0]);
    return ok && distinct > 0 ? (double)wave / (double)distinct : 1;
}

double cw_wave_reuse(Walk *w, NodeId at, NodeId ref)
{
    int hit;
    double r = reuse_cached(w, at, &hit);
    if (hit)
        return r;
    const Kernel *k = w->k;
    while (ref && k->nodes[ref].op == OP_TRANS)
        ref = k->nodes[ref].a;
    const Node *ix = &k->nodes[ref];
    r = ix->op == OP_INDEX ? reuse_of(w, &k->lists[ix->list], ix->n) : 1;
    return reuse_keep(w, at, r);
}

double cw_wave_reuse_list(Walk *w, NodeId at, const NodeId *ix, uint32_t n)
{
    int hit;
    double r = reuse_cached(w, at, &hit);
    return hit ? r : reuse_keep(w, at, reuse_of(w, ix, n));
}

/* The bank-conflict ways of an 8-row matrix access (ldmatrix, stmatrix) to
   shared ref: each phase reads 16 bytes of 8 consecutive rows; with a row
   pitch of P bytes they fall into 8 / gcd(P / 16, 8) distinct 16-byte bank
   groups, and a swizzle of S bytes spreads them over S / 16 more. */
double cw_bank_ways(Walk *w, NodeId ref)
{
    const Kernel *k = w->k;
    while (ref && (k->nodes[ref].op == OP_INDEX || k->nodes[ref].op == OP_TRANS))
        ref = k->nodes[ref].a;
    if (!ref || k->nodes[ref].op != OP_NAME || !k->nodes[ref].decl)
        return 1;
    const Node *d = &k->nodes[k->nodes[ref].decl];
    const Node *t = d->op == OP_SHARED ? &k->nodes[d->a] : NULL;
    int64_t cols;
    if (!t || !t->n || !cw_eval(w, k->lists[t->list + t->n - 1], &cols) || cols <= 0)
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
                  ir_symstr(w->ctx, d->name), cw_line_of(w, k->nodes[ref].decl), (long long)ways,
                  (long long)pitch, d->v.attr.swizzle, (long long)ways);
    return (double)ways;
}

/* the element offset of global ref (X[i, j : +n]) at the current thread: row-major,
   or the strides the argument declares; 0 when an index does not evaluate */
static int elem_offset(Walk *w, NodeId ref, int64_t *off)
{
    const Kernel *k = w->k;
    const Node *ix = &k->nodes[ref];
    if (ix->op != OP_INDEX || k->nodes[ix->a].op != OP_NAME)
        return 0;
    NodeId d = k->nodes[ix->a].decl;
    if (!d || k->nodes[d].op != OP_ARG || !k->nodes[d].a || k->nodes[k->nodes[d].a].op != OP_GTYPE)
        return 0;
    const Node *gt = &k->nodes[k->nodes[d].a];
    uint32_t rank = gt->sub;
    if (ix->n != rank || rank > IR_MAX_RANK)
        return 0;
    int64_t stride[IR_MAX_RANK], acc = 1;
    for (int i = (int)rank - 1; i >= 0; i--) {
        int64_t v;
        if (gt->n >= 2 * rank) {
            if (!cw_eval(w, k->lists[gt->list + rank + (uint32_t)i], &v))
                return 0;
            stride[i] = v;
        } else {
            stride[i] = acc;
            if (!cw_eval(w, k->lists[gt->list + (uint32_t)i], &v))
                return 0;
            acc *= v;
        }
    }
    int64_t o = 0;
    for (uint32_t i = 0; i < rank; i++) {
        NodeId e = k->lists[ix->list + i];
        if (k->nodes[e].op == OP_SLICE)
            e = k->nodes[e].a;
        int64_t v;
        if (k->nodes[e].op == OP_COLON)
            v = 0;
        else if (!cw_eval(w, e, &v))
            return 0;
        o += v * stride[i];
    }
    *off = o;
    return 1;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

double cw_lines(Walk *w, NodeId at, NodeId ref, double bytes, NodeId mask, double *min_lines)
{
    int64_t warp = tg_warp(w->tg);
    double fewest = ceil(bytes * (double)warp / 128.0);
    *min_lines = fewest > 1 ? fewest : 1;
    double cached;
    uint64_t key = cw_memo_key(w, at, 0);
    if (cw_memo_get(w->lines, key, &cached, min_lines))
        return cached;
    const Kernel *k = w->k;
    while (ref && k->nodes[ref].op == OP_TRANS)
        ref = k->nodes[ref].a;
    int64_t line[64 * 4], keep = w->thread, nl = 0, active = 0;
    uint32_t reads = w->block_reads;   /* memoized per profile: no sampled block's count */
    int ok = bytes > 0 && bytes <= 256 && warp <= 64;
    int64_t dtb = (int64_t)cw_dt_bytes(cw_type_of(w, ref));
    for (int64_t l = 0; l < warp && ok; l++) {
        w->thread = (w->lowered ? w->group_first : 0) + l;
        int64_t v, off;
        if (mask && cw_eval(w, mask, &v) && !v)
            continue;
        if (!elem_offset(w, ref, &off)) {
            ok = 0;
            break;
        }
        int64_t b0 = off * dtb, b1 = b0 + (int64_t)bytes - 1;
        for (int64_t x = b0 >> 7; x <= b1 >> 7 && nl < 64 * 4; x++)
            line[nl++] = x;
        active++;
    }
    w->thread = keep;
    w->block_reads = reads;
    double r = *min_lines;
    if (ok && active > 0) {
        qsort(line, (size_t)nl, sizeof *line, cmp_i64);
        int64_t distinct = 0;
        for (int64_t i = 0; i < nl; i++)
            distinct += i == 0 || line[i] != line[i - 1];
        r = (double)distinct;
        double need = ceil(bytes * (double)active / 128.0);
        *min_lines = need > 1 ? need : 1;
    }
    cw_memo_put(w->lines, key, r, *min_lines);
    return r;
}

Space cw_space_of(const Walk *w, NodeId ref)
{
    const Type *t = cw_type_of(w, ref);
    return t ? (Space)t->space : SP_NONE;
}

