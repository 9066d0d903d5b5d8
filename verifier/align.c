/* align.c — alignment proofs: every access that code generation emits as one
 * wide instruction is proved to sit at an address that is a multiple of its
 * width, for every shape the kernel's facts allow (docs/tir.md §7.6).
 *
 *   vector load/store  x[.., c : +L] (global or shared, masked or not): the
 *                      L * e bytes as one access (at most 16: codegen aligns
 *                      it to the largest power of two <= L * e, capped at 16)
 *   cp.async           both addresses, L * e = 4, 8 or 16 bytes
 *   fragment stores    store X[r : +R, c : +C] <- T: the runs of a thread's
 *                      elements adjacent in a row, stored as one vector (the
 *                      distribute pass); the thread's column offset is the
 *                      layout's (2t for mma/wgmma), its row anything
 *   ldmatrix/stmatrix  each lane's 16-byte row of an 8x8 matrix: the view's
 *   wgmma operands     start, plus any row, plus multiples of 16 bytes along
 *                      the contiguous dim (a descriptor's start address is in
 *                      16-byte units too)
 * TMA is tma.c's (base `align 16`, strides multiples of 16 bytes, a 128-byte
 * aligned shared box; box coordinates need no alignment).
 *
 * The address is base + Σ_d index_d * stride_d * e. Bases: a tensor is at
 * least 16-byte aligned (the kernel ABI, codegen/cg.h; its `align` when
 * larger), a shared tile at least 128 (ly_smem_align; swizzle permutes whole
 * 16-byte chunks, so it keeps every alignment up to 16). The offset is
 * evaluated in the congruence lattice of analysis/divis.h under the facts
 * that hold at the access: the `assume`s, enclosing `if` conditions (the
 * negation in `else`), earlier `if c { ... return }` guards, and the mask.
 * E0810: a vector access or cp.async not proved; E0811: a matrix row
 * address (ldmatrix, stmatrix, wgmma) not proved. The message gives the byte
 * offset and what was proved; the help names the `assume` that would prove
 * it (with a fix-it inserting it) or the narrower access that is aligned. */
#include <string.h>
#include "sync.h"
#include "verify.h"
#include "divis.h"
#include "layout.h"

#define AL_FACTS 64
#define AL_PARTS 4          /* index expressions summed into one dim's start */

/* one access: the declaration, and per declaration dim the index (the sum of
 * the starts the chain of views gives it, plus `extra`, what the instruction
 * adds: a row of a tile, a lane's column) and its stride */
enum { AK_VECTOR, AK_CP_ASYNC, AK_FRAGMENT, AK_MATRIX };

typedef struct {
    NodeId at;                       /* where to report (the reference) */
    NodeId decl;
    int global, rank, esz;
    int64_t base;                    /* proven base alignment in bytes */
    NodeId part[IR_MAX_RANK][AL_PARTS]; int nparts[IR_MAX_RANK];
    int kept[IR_MAX_RANK];           /* the dim is still a dim of the final view */
    int64_t last_extent;             /* a slice's constant extent on the last dim (1: element) */
    DvCong extra[IR_MAX_RANK];
    DvCong stride[IR_MAX_RANK];      /* in elements */
    const char *stride_text[IR_MAX_RANK];
    int kind;                        /* AK_* */
    int64_t width;                   /* bytes the instruction needs */
    const char *what;                /* "a 16-byte vector load", ... */
} Acc;

typedef struct {
    SyK *s;
    DvEnv env;
    DvFact facts[AL_FACTS];
    NodeId role;
} Al;

static Node *N(const Al *a, NodeId n) { return sy_node(a->s, n); }

/* ---- facts at a statement --------------------------------------------------- */

static int special(const DvEnv *env, NodeId at, int64_t *out)
{
    const Al *a = env->u;
    int64_t first;
    return N(a, at)->sub == SR_NTHREADS && sy_role_range(a->s, a->role, &first, out);
}

static NodeId block_of(SyK *s, NodeId st)
{
    NodeId up = s->up[st];
    if (!up)
        return s->k->body;
    Node *u = sy_node(s, up);
    if (u->op == OP_IF)
        return s->in_else[st] ? u->c : u->b;
    return u->d;
}

/* `if c { ... return }` without else: what follows it in the block has !c */
static int is_guard(SyK *s, NodeId x)
{
    Node *xn = sy_node(s, x);
    if (xn->op != OP_IF || xn->c || !xn->b)
        return 0;
    Node *b = sy_node(s, xn->b);
    return b->op == OP_BLOCK && b->n && sy_node(s, ir_list_at(s->k, b, b->n - 1))->op == OP_RETURN;
}

/* the facts of condition cond of statement p, less those about a var assigned
 * since p, before the access at (`if k % 8 == 0 { k = k + 1 ... }`) */
static void cond_facts(Al *a, NodeId cond, int negated, NodeId p, NodeId at)
{
    SyK *s = a->s;
    uint32_t from = a->env.nfacts, w = from;
    dv_add_facts(&a->env, cond, negated);
    for (uint32_t i = from; i < a->env.nfacts; i++) {
        NodeId d = a->env.facts[i].decl;
        if (!(sy_node(s, d)->op == OP_VAR && sy_set_since(s, d, p, at)))
            a->env.facts[w++] = a->env.facts[i];
    }
    a->env.nfacts = w;
}

static void context_facts(Al *a, NodeId st, NodeId mask)
{
    SyK *s = a->s;
    a->env.nfacts = 0;
    a->role = s->role[st];
    for (uint32_t i = 0; i < s->k->nassumes; i++)
        dv_add_facts(&a->env, s->k->assumes[i], 0);
    for (NodeId cur = st; cur; cur = s->up[cur]) {
        Node *bn = sy_node(s, block_of(s, cur));
        for (uint32_t i = 0; bn->op == OP_BLOCK && i < bn->n; i++) {
            NodeId x = ir_list_at(s->k, bn, i);
            if (x == cur)
                break;
            if (is_guard(s, x))
                cond_facts(a, sy_node(s, x)->a, 1, x, st);
        }
        NodeId up = s->up[cur];
        if (up && sy_node(s, up)->op == OP_IF)
            cond_facts(a, sy_node(s, up)->a, s->in_else[cur], up, st);
    }
    if (mask)
        dv_add_facts(&a->env, mask, 0);
}

/* ---- the access: declaration, strides, the starts of a chain of views -------- */

static const char *paren(Al *a, NodeId e)
{
    const Node *n = N(a, e);
    const char *t = sy_text(a->s, e);
    int simple = n->op == OP_NAME || n->op == OP_INT || n->op == OP_SPECIAL || n->op == OP_MUL ||
                 (n->flags & NF_PAREN) || n->op == OP_CAST || ir_ops[n->op].cls == OC_BUILTIN;
    return simple ? t : ir_fmt(a->s->ctx, "(%s)", t);
}

/* the strides of a global tensor, in elements, under the facts in force */
static void global_strides(Al *a, Acc *x)
{
    Node *g = N(a, N(a, x->decl)->a);
    DvCong st = dv_const(1);
    const char *text = "";
    for (int i = x->rank - 1; i >= 0; i--) {
        if (g->n == 2 * g->sub) { /* explicit strides */
            NodeId se = ir_list_at(a->s->k, g, g->sub + (uint32_t)i);
            x->stride[i] = dv_expr(&a->env, se);
            x->stride_text[i] = paren(a, se);
            continue;
        }
        x->stride[i] = st;
        x->stride_text[i] = text;
        NodeId de = ir_list_at(a->s->k, g, (uint32_t)i);
        st = dv_mul(st, dv_expr(&a->env, de));
        text = *text ? ir_fmt(a->s->ctx, "%s * %s", paren(a, de), text) : paren(a, de);
    }
}

/* the declaration's dims and strides; 0 when this is not a global tensor or a
 * shared tile of constant shape */
static int acc_decl(Al *a, Acc *x, NodeId ref)
{
    SyK *s = a->s;
    x->decl = sy_ref_decl(s, ref);
    if (!x->decl)
        return 0;
    Node *d = N(a, x->decl);
    const Type *t = ver_type(s->k, x->decl);
    x->esz = t->dtype == DT_BOOL ? 1 : ir_dtype_bytes((DType)t->dtype);
    if (x->esz <= 0 || t->lanes > 1)
        return 0;
    if (d->op == OP_ARG && d->a && N(a, d->a)->op == OP_GTYPE) {
        Node *g = N(a, d->a);
        x->global = 1;
        x->rank = g->sub;
        if (x->rank < 1 || x->rank > IR_MAX_RANK || (g->n != g->sub && g->n != 2 * g->sub))
            return 0;
        x->base = g->v.attr.align > 16 ? g->v.attr.align : 16;
        global_strides(a, x);
        return 1;
    }
    if (d->op != OP_SHARED || t->kind != TK_TILE || t->rank < 1)
        return 0;
    x->rank = t->rank;
    uint32_t al = ly_smem_align(d->v.attr.swizzle);
    x->base = d->v.attr.align > al ? d->v.attr.align : al;
    int64_t st = 1;
    for (int i = x->rank - 1; i >= 0; i--) {
        x->stride[i] = dv_const(st);
        x->stride_text[i] = ir_fmt(s->ctx, "%lld", (long long)st);
        if (t->shape[i] < 1 || __builtin_mul_overflow(st, t->shape[i], &st))
            return 0;
    }
    return 1;
}

/* the starts of ref's chain of views, per declaration dim; 0 when the way down
 * is not a chain of INDEX nodes */
static int acc_chain(Al *a, Acc *x, NodeId ref)
{
    SyK *s = a->s;
    NodeId chain[SY_REF_CHAIN];
    int nc = sy_ref_chain(s, ref, chain);
    if (nc < 1)
        return 0;
    int cur[IR_MAX_RANK], ncur = x->rank;
    for (int i = 0; i < x->rank; i++) {
        cur[i] = i;
        x->kept[i] = 1;
        x->nparts[i] = 0;
        x->extra[i] = dv_const(0);
    }
    x->last_extent = -1;
    while (nc--) {
        Node *ix = N(a, chain[nc]);
        int next[IR_MAX_RANK], nn = 0;
        for (int j = 0; j < ncur; j++) {
            NodeId e = j < (int)ix->n ? ir_list_at(s->k, ix, (uint32_t)j) : 0;
            int d = cur[j];
            Node *en = e ? N(a, e) : NULL;
            NodeId start = !e || en->op == OP_COLON ? 0 : en->op == OP_SLICE ? en->a : e;
            if (start) {
                if (x->nparts[d] == AL_PARTS)
                    return 0;
                x->part[d][x->nparts[d]++] = start;
            }
            if (!e || en->op == OP_COLON || en->op == OP_SLICE) {
                next[nn++] = d;
                if (d == x->rank - 1 && en && en->op == OP_SLICE && !sy_const(s, en->b, &x->last_extent))
                    x->last_extent = -1;
            } else {
                x->kept[d] = 0;
            }
        }
        memcpy(cur, next, sizeof next);
        ncur = nn;
    }
    if (!x->kept[x->rank - 1])
        x->last_extent = 1;
    return 1;
}

static int kept_dims(const Acc *x)
{
    int n = 0;
    for (int i = 0; i < x->rank; i++)
        n += x->kept[i];
    return n;
}

/* ---- the proof ---------------------------------------------------------------- */

static DvCong dim_index(Al *a, const Acc *x, int d)
{
    DvCong c = x->extra[d];
    for (int i = 0; i < x->nparts[d]; i++)
        c = dv_add(c, dv_expr(&a->env, x->part[d][i]));
    return c;
}

static DvCong term(Al *a, const Acc *x, int d)
{
    return dv_mul(dv_mul(dim_index(a, x, d), x->stride[d]), dv_const(x->esz));
}

static DvCong offset(Al *a, const Acc *x)
{
    DvCong c = dv_const(0);
    for (int d = 0; d < x->rank; d++)
        c = dv_add(c, term(a, x, d));
    return c;
}

static int proved(Al *a, const Acc *x)
{
    return x->base % x->width == 0 && dv_multiple(offset(a, x), x->width);
}

/* ---- the diagnostic ----------------------------------------------------------- */

static const char *index_text(Al *a, const Acc *x, int d)
{
    const char *t = "";
    int64_t c;
    for (int i = 0; i < x->nparts[d]; i++)
        if (!sy_const(a->s, x->part[d][i], &c) || c)
            t = ir_fmt(a->s->ctx, "%s%s%s", t, *t ? " + " : "", sy_text(a->s, x->part[d][i]));
    if (x->extra[d].k < 64 || x->extra[d].r)
        t = ir_fmt(a->s->ctx, "%s%s%s", t, *t ? " + " : "", d == x->rank - 1 ? "col" : "row");
    return *t ? t : "0";
}

static const char *offset_text(Al *a, const Acc *x)
{
    const char *out = "";
    for (int d = 0; d < x->rank; d++) {
        DvCong ix = dim_index(a, x, d);
        if (ix.k == 64 && ix.r == 0)
            continue;
        const char *it = index_text(a, x, d);
        if (strcspn(it, "+-") < strlen(it))
            it = ir_fmt(a->s->ctx, "(%s)", it);
        const char *st = x->stride_text[d];
        int one = !*st || !strcmp(st, "1");
        out = ir_fmt(a->s->ctx, "%s%s%s%s%s * %d", out, *out ? " + " : "", it, one ? "" : " * ", one ? "" : st,
                     x->esz);
    }
    return *out ? out : "0";
}

/* the names an expression depends on (through lets) that an `assume` may
 * constrain: dims and scalar arguments */
static void symbols(Al *a, NodeId e, NodeId *out, int *n, int cap, int depth)
{
    if (!e || depth > 32 || *n >= cap)
        return;
    Node *x = N(a, e);
    if (x->op == OP_NAME) {
        NodeId d = x->decl;
        if (!d)
            return;
        Node *dn = N(a, d);
        if (dn->op == OP_LET && dn->b)
            symbols(a, dn->b, out, n, cap, depth + 1);
        else if (dn->op == OP_FOR) {
            symbols(a, dn->a, out, n, cap, depth + 1);
            symbols(a, dn->c, out, n, cap, depth + 1);
        } else if (dn->op == OP_DIM || (dn->op == OP_ARG && dn->a && N(a, dn->a)->op == OP_TYPE)) {
            for (int i = 0; i < *n; i++)
                if (out[i] == d)
                    return;
            out[(*n)++] = d;
        }
        return;
    }
    NodeId kids[4] = {x->a, x->b, x->c, x->d};
    for (int i = 0; i < 4; i++)
        symbols(a, kids[i], out, n, cap, depth + 1);
    for (uint32_t i = 0; i < x->n; i++)
        symbols(a, ir_list_at(a->s->k, x, i), out, n, cap, depth + 1);
}

/* a symbol and modulus whose `assume SYM % m == 0` proves the access (0: none) */
static NodeId hypothesis(Al *a, const Acc *x, int64_t *mod)
{
    NodeId syms[16];
    int n = 0;
    Node *g = x->global ? N(a, N(a, x->decl)->a) : NULL;
    for (int d = 0; d < x->rank; d++) {
        for (int i = 0; i < x->nparts[d]; i++)
            symbols(a, x->part[d][i], syms, &n, 16, 0);
        for (uint32_t j = 0; g && j < g->n; j++) { /* dim d's stride: as written, or the dims after d */
            int strided = g->n == 2 * g->sub;
            if ((strided && j == g->sub + (uint32_t)d) || (!strided && j > (uint32_t)d && j < g->sub))
                symbols(a, ir_list_at(a->s->k, g, j), syms, &n, 16, 0);
        }
    }
    if (a->env.nfacts >= AL_FACTS)
        return 0;
    for (int64_t m = 2; m <= x->width; m *= 2)
        for (int i = 0; i < n; i++) {
            a->env.facts[a->env.nfacts++] = (DvFact){syms[i], dv_mul(dv_const(m), dv_top())};
            Acc y = *x;
            if (y.global) /* strides mention dims: derive them under the hypothesis */
                global_strides(a, &y);
            int ok = proved(a, &y);
            a->env.nfacts--;
            if (ok) {
                *mod = m;
                return syms[i];
            }
        }
    return 0;
}

/* the first part of e that nothing is known about (through lets and sums),
 * described for the message; NULL when there is none to name */
static const char *unknown_part(Al *a, NodeId e, int depth)
{
    if (!e || depth > 32 || dv_expr(&a->env, e).k > 0)
        return NULL;
    Node *n = N(a, e);
    CakeCtx *ctx = a->s->ctx;
    const char *t = sy_text(a->s, e);
    switch (n->op) {
    case OP_ADD: case OP_SUB: case OP_MUL: {
        const char *r = unknown_part(a, n->a, depth + 1);
        return r ? r : unknown_part(a, n->b, depth + 1);
    }
    case OP_CAST: case OP_NEG: return unknown_part(a, n->a, depth + 1);
    case OP_LOAD: return ir_fmt(ctx, "`%s` is a value loaded at run time", t);
    case OP_SPECIAL: return ir_fmt(ctx, "`%s` is a thread, block or lane index", t);
    case OP_NAME: {
        Node *d = n->decl ? N(a, n->decl) : NULL;
        if (!d)
            return NULL;
        if (d->op == OP_LET && d->b) {
            const char *r = unknown_part(a, d->b, depth + 1);
            return r ? r : ir_fmt(ctx, "`%s` is `%s`", t, sy_text(a->s, d->b));
        }
        if (d->op == OP_VAR)
            return ir_fmt(ctx, "`%s` is a `var`, assigned at run time", t);
        if (d->op == OP_DIM)
            return ir_fmt(ctx, "nothing is assumed about the dim `%s`", t);
        if (d->op == OP_ARG)
            return ir_fmt(ctx, "nothing is assumed about the scalar argument `%s`", t);
        if (d->op == OP_FOR)
            return ir_fmt(ctx, "the loop variable `%s` starts at `%s`", t, sy_text(a->s, d->a));
        return NULL;
    }
    default:
        return ir_fmt(ctx, "`%s` has no known divisibility", t);
    }
}

/* why the offset is not a multiple of the width: the first term that is not,
 * blamed on its stride (a row pitch) or on its index */
static const char *why_not(Al *a, const Acc *x, int *pitch)
{
    CakeCtx *ctx = a->s->ctx;
    for (int d = 0; d < x->rank; d++) {
        if (dv_multiple(term(a, x, d), x->width))
            continue;
        DvCong ix = dim_index(a, x, d);
        int64_t pi = dv_pow2(ix) < x->width ? dv_pow2(ix) : x->width;
        int64_t pb = dv_pow2(dv_mul(x->stride[d], dv_const(x->esz)));
        const char *st = x->stride_text[d];
        int unit = !*st || !strcmp(st, "1");
        if (!unit && pb * pi < x->width) {
            int64_t need = x->width / (pi * x->esz < x->width ? pi * x->esz : x->width);
            *pitch = x->stride[d].k == 64 && !x->global && d == x->rank - 2;
            if (x->stride[d].k == 64)
                return ir_fmt(ctx, "dim %d advances %s elements of %d bytes (%lld bytes), not a multiple of %lld",
                              d, st, x->esz, (long long)((int64_t)x->stride[d].r * x->esz),
                              (long long)(x->width / pi));
            return ir_fmt(ctx, "dim %d advances %s elements of %d bytes, and %s is not known to be a multiple of "
                          "%lld", d, st, x->esz, st, (long long)(need > 1 ? need : 2));
        }
        if (ix.k == 0) {
            const char *why = NULL;
            for (int i = 0; !why && i < x->nparts[d]; i++)
                why = unknown_part(a, x->part[d][i], 0);
            return ir_fmt(ctx, "nothing is known about the divisibility of index `%s` of dim %d%s%s%s",
                          index_text(a, x, d), d, why ? " (" : "", why ? why : "", why ? ")" : "");
        }
        return ir_fmt(ctx, "index `%s` of dim %d is known to be a multiple of %lld only (it needs %lld)",
                      index_text(a, x, d), d, (long long)pi,
                      (long long)(x->width / pb > 1 ? x->width / pb : 1));
    }
    return ir_fmt(ctx, "the base is only %lld-byte aligned", (long long)x->base);
}

/* where a new header line `assume ...` goes: before the body's `{` */
static void assume_fixit(Al *a, Diag *dg, const char *line)
{
    SyK *s = a->s;
    Span body = sy_span(s, s->k->body);
    if (body.file >= s->ctx->nfiles || body.lo > s->ctx->files[body.file].len)
        return;
    const char *text = s->ctx->files[body.file].text;
    int at_line_start = body.lo == 0 || text[body.lo - 1] == '\n';
    Span at = {body.file, body.lo, body.lo};
    diag_fixit(s->ctx, dg, at, ir_fmt(s->ctx, at_line_start ? "  %s\n" : "\n  %s\n", line));
}

/* what to write instead when no fact is at hand: a narrower access that is
 * aligned by what was proved */
static const char *narrower(Al *a, const Acc *x, int64_t got)
{
    CakeCtx *ctx = a->s->ctx;
    int64_t lanes = got / x->esz;
    switch (x->kind) {
    case AK_VECTOR:
        return lanes >= 2 ? ir_fmt(ctx, "; or narrow the access to `: +%lld` (%lld bytes), which is aligned",
                                   (long long)lanes, (long long)got)
                          : "; or access the elements one by one (scalar loads and stores)";
    case AK_CP_ASYNC:
        return got >= 4 ? ir_fmt(ctx, "; or copy %lld elements (`: +%lld`, %lld bytes) per cp.async",
                                 (long long)lanes, (long long)lanes, (long long)got)
                        : "; or copy with `load` and `store` instead of cp.async";
    case AK_FRAGMENT:
        return "; or store the elements one by one: `<- T[r, c]` with implicit indices (and a per-element mask)";
    default:
        return "";
    }
}

static void report(Al *a, const Acc *x)
{
    SyK *s = a->s;
    DvCong off = offset(a, x);
    int64_t got = dv_pow2(off);
    if (got > x->base)
        got = x->base;
    int64_t mod = 0;
    NodeId sym = hypothesis(a, x, &mod);
    int pitch = 0;
    const char *why = sym ? NULL : why_not(a, x, &pitch);
    const char *name = sym ? ir_symstr(s->ctx, N(a, sym)->name) : NULL;
    int matrix = x->kind == AK_MATRIX;
    Diag *dg = sy_report(s, matrix ? E0811 : E0810, x->at,
                         "%s of `%s` needs an address that is a multiple of %lld bytes, but its byte offset `%s` "
                         "is provably a multiple of %lld only: %s", x->what, sy_text(s, x->at),
                         (long long)x->width, offset_text(a, x), (long long)got,
                         sym ? ir_fmt(s->ctx, "%s is not known to be a multiple of %lld", name, (long long)mod)
                             : why);
    if (!dg)
        return;
    diag_note(s->ctx, dg, sy_span(s, x->decl), "`%s` is %s; its base is %lld-byte aligned%s",
              ir_symstr(s->ctx, N(a, x->decl)->name), x->global ? "a global tensor" : "a shared tile",
              (long long)x->base, x->global && x->base == 16 ? " (the kernel ABI's minimum)" : "");
    const char *alt = narrower(a, x, got);
    if (sym) {
        const char *line = ir_fmt(s->ctx, "assume %s %% %lld == 0", name, (long long)mod);
        diag_help(s->ctx, dg, "if every %s is a multiple of %lld, say so: add `%s` to the kernel header; or guard the "
                  "access with `if %s %% %lld == 0 { ... }`%s", name, (long long)mod, line, name, (long long)mod, alt);
        assume_fixit(a, dg, line);
        return;
    }
    int64_t elems = x->width / x->esz > 1 ? x->width / x->esz : 1;
    const Type *t = ver_type(s->k, x->decl);
    if (pitch && t->rank == x->rank) {
        int64_t row = t->shape[x->rank - 1] * x->esz, w = x->width;
        diag_help(s->ctx, dg, "pad the rows of `%s` to a multiple of %lld bytes: a last extent of %lld instead of "
                  "%lld%s", ir_symstr(s->ctx, N(a, x->decl)->name), (long long)w,
                  (long long)((row + w - 1) / w * w / x->esz), (long long)t->shape[x->rank - 1], alt);
    } else if (matrix)
        diag_help(s->ctx, dg, "start the view at a multiple of %lld elements along the tile's last dim, and keep "
                  "the tile's rows a multiple of 16 bytes", (long long)elems);
    else
        diag_help(s->ctx, dg, "make the index a multiple of %lld elements (e.g. `thread.x * %lld`), or prove it "
                  "with an `assume` or an enclosing `if`%s", (long long)elems, (long long)elems, alt);
}

static void check(Al *a, Acc *x)
{
    if (x->width <= x->esz && x->base % x->width == 0)
        return; /* element-sized: aligned as the base is */
    if (!proved(a, x))
        report(a, x);
}

/* ---- the accesses -------------------------------------------------------------- */

static int64_t pow2_floor(int64_t v)
{
    int64_t p = 1;
    while (p * 2 <= v)
        p *= 2;
    return p;
}

/* a vector access x[.., c : +L] of a global tensor or a shared tile (all other
 * dims element indices): L * e bytes; cp.async moves exactly that many */
static void vector_access(Al *a, NodeId st, NodeId ref, NodeId mask, int cp_async, const char *verb)
{
    Acc x;
    memset(&x, 0, sizeof x);
    x.at = ref;
    context_facts(a, st, mask);
    if (!ref || !acc_decl(a, &x, ref) || !acc_chain(a, &x, ref) || kept_dims(&x) != 1 || !x.kept[x.rank - 1] ||
        x.last_extent < 2)
        return;
    if (x.global) { /* a non-unit innermost stride is element accesses */
        Node *g = N(a, N(a, x.decl)->a);
        int64_t c;
        if (g->n == 2 * g->sub && (!sy_const(a->s, ir_list_at(a->s->k, g, 2 * g->sub - 1), &c) || c != 1))
            return;
    }
    int64_t bytes = x.last_extent * x.esz;
    x.width = cp_async ? bytes : pow2_floor(bytes > 16 ? 16 : bytes);
    x.kind = cp_async ? AK_CP_ASYNC : AK_VECTOR;
    x.what = ir_fmt(a->s->ctx, "the %lld-byte %s%s", (long long)x.width, cp_async ? "cp.async " : "vector ",
                    cp_async ? (x.global ? "source" : "destination") : verb);
    check(a, &x);
}

/* the lane part of a matrix row: any row of the view; the contiguous dim
 * advances in 16-byte pieces */
static void matrix_access(Al *a, NodeId st, NodeId ref, const char *what)
{
    Acc x;
    memset(&x, 0, sizeof x);
    x.at = ref;
    context_facts(a, st, 0);
    if (!ref || !acc_decl(a, &x, ref) || x.global || !acc_chain(a, &x, ref))
        return;
    for (int d = 0; d < x.rank; d++)
        if (x.kept[d])
            x.extra[d] = d == x.rank - 1 ? dv_mul(dv_const(16 / x.esz > 1 ? 16 / x.esz : 1), dv_top()) : dv_top();
    x.width = 16;
    x.kind = AK_MATRIX;
    x.what = what;
    check(a, &x);
}

/* store X[.., r : +R, c : +C] <- T of a distributed tile: each thread's runs of
 * row-adjacent elements as one vector (passes/distribute.c tile_store) */
static void fragment_store(Al *a, NodeId st, NodeId ref, NodeId value, NodeId mask)
{
    const Type *vt = ver_type(a->s->k, value);
    if (vt->kind != TK_TILE || vt->space != SP_REG || vt->layout == LY_NONE || vt->layout == LY_ROWS ||
        vt->rank != 2)
        return;
    Acc x;
    memset(&x, 0, sizeof x);
    x.at = ref;
    context_facts(a, st, mask);
    if (!acc_decl(a, &x, ref) || !acc_chain(a, &x, ref) || kept_dims(&x) != 2 || !x.kept[x.rank - 1])
        return;
    LyTile lv;
    memset(&lv, 0, sizeof lv);
    lv.layout = (Layout)vt->layout;
    lv.dtype = (DType)vt->dtype;
    lv.warp_size = 32;
    lv.rows = (int)vt->shape[0];
    lv.cols = (int)vt->shape[1];
    lv.colvec = lv.rows == 1 && lv.layout != LY_MMA_B;
    if (!ly_valid(&lv, NULL, 0) || lv.colvec)
        return;
    LyThreadPart tp;
    ly_thread_part(&lv, &tp);
    DvCong thr_col = dv_const(0);
    for (int i = 0; i < tp.ncol; i++)
        if (tp.col[i].mod > 1)
            thr_col = dv_add(thr_col, dv_mul(dv_const(tp.col[i].coef), dv_top()));
    int ne = ly_elems(&lv);
    for (int d = 0; d < x.rank; d++)
        if (x.kept[d] && d != x.rank - 1)
            x.extra[d] = dv_top(); /* the thread's row */
    for (int e = 0; e < ne;) { /* the same runs as the distribute pass */
        int r, c, run = 1;
        ly_elem_base(&lv, e, &r, &c);
        while (e + run < ne && run < 16 && (run + 1) * x.esz <= 16) {
            int r2, c2;
            ly_elem_base(&lv, e + run, &r2, &c2);
            if (r2 != r || c2 != c + run)
                break;
            run++;
        }
        while (run & (run - 1))
            run--;
        e += run;
        if (run < 2)
            continue;
        x.extra[x.rank - 1] = dv_add(thr_col, dv_const(c));
        x.width = run * x.esz;
        x.kind = AK_FRAGMENT;
        x.what = ir_fmt(a->s->ctx, "the %lld-byte vector store of %d fragment elements", (long long)x.width, run);
        if (!proved(a, &x)) {
            report(a, &x);
            return;
        }
    }
}

static void each_load(SyK *s, NodeId e, void *u)
{
    Al *a = u;
    Node *n = sy_node(s, e);
    if (n->op == OP_LOAD)
        vector_access(a, s->stmt_of[e], n->a, n->b, 0, "load");
    else if ((n->op == OP_LDMATRIX || n->op == OP_LDMATRIX_T) && n->n >= 1)
        matrix_access(a, s->stmt_of[e], ir_list_at(s->k, n, 0), "a matrix row of the ldmatrix");
}

static void each_stmt(SyK *s, NodeId st, void *u)
{
    Al *a = u;
    Node *n = sy_node(s, st);
    switch (n->op) {
    case OP_STORE:
        if (ver_type(s->k, n->b)->kind == TK_TILE)
            fragment_store(a, st, n->a, n->b, n->c);
        else
            vector_access(a, st, n->a, n->c, 0, "store");
        break;
    case OP_CP_ASYNC: /* a false mask still writes zeros: not a fact about the addresses */
        vector_access(a, st, n->b, 0, 1, "");
        vector_access(a, st, n->a, 0, 1, "");
        break;
    case OP_STMATRIX:
        matrix_access(a, st, n->a, "a matrix row of the stmatrix");
        break;
    case OP_WGMMA:
        if (ver_type(s->k, n->b)->space == SP_SHARED)
            matrix_access(a, st, n->b, "a matrix of the wgmma descriptor (A)");
        if (ver_type(s->k, n->c)->space == SP_SHARED)
            matrix_access(a, st, n->c, "a matrix of the wgmma descriptor (B)");
        break;
    default:
        break;
    }
    if (n->op != OP_FOR && n->op != OP_ROLE && n->op != OP_REFERENCE)
        sy_stmt_exprs(s, st, each_load, a);
}

static uint32_t check_align(SyK *s)
{
    uint32_t before = s->ctx->nerrors;
    for (NodeId i = 1; i < s->k->nnodes; i++) /* earlier errors: types may be missing */
        if (s->k->nodes[i].flags & NF_ERROR)
            return 0;
    Al a;
    memset(&a, 0, sizeof a);
    a.s = s;
    a.env.ctx = s->ctx;
    a.env.k = s->k;
    a.env.facts = a.facts;
    a.env.capfacts = AL_FACTS;
    a.env.special = special;
    a.env.u = &a;
    sy_each_stmt(s, s->k->body, each_stmt, &a);
    return s->ctx->nerrors - before;
}

uint32_t ver_align(CakeCtx *ctx, Kernel *k)
{
    return sy_run(ctx, k, check_align);
}
