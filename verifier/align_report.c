/* align_report.c — the alignment prover's diagnostics: E0810 (a vector access
 * or cp.async) and E0811 (a matrix row address) with the byte offset and what
 * was proved, why not (the term, stride or index to blame), a note on the
 * base, and a help naming the `assume` that would prove it (with a fix-it) or
 * the narrower access that is aligned. */
#include <string.h>
#include "align.h"
#include "verify.h"

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
        DvCong ix = al_dim_index(a, x, d);
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
    Node *x = al_node(a, e);
    if (x->op == OP_NAME) {
        NodeId d = x->decl;
        if (!d)
            return;
        Node *dn = al_node(a, d);
        if (dn->op == OP_LET && dn->b)
            symbols(a, dn->b, out, n, cap, depth + 1);
        else if (dn->op == OP_FOR) {
            symbols(a, dn->a, out, n, cap, depth + 1);
            symbols(a, dn->c, out, n, cap, depth + 1);
        } else if (dn->op == OP_DIM || (dn->op == OP_ARG && dn->a && al_node(a, dn->a)->op == OP_TYPE)) {
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
    Node *g = x->global ? al_node(a, al_node(a, x->decl)->a) : NULL;
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
                al_global_strides(a, &y);
            int ok = al_proved(a, &y);
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
    Node *n = al_node(a, e);
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
        Node *d = n->decl ? al_node(a, n->decl) : NULL;
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
        if (dv_multiple(al_term(a, x, d), x->width))
            continue;
        DvCong ix = al_dim_index(a, x, d);
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

void al_report(Al *a, const Acc *x)
{
    SyK *s = a->s;
    DvCong off = al_offset(a, x);
    int64_t got = dv_pow2(off);
    if (got > x->base)
        got = x->base;
    int64_t mod = 0;
    NodeId sym = hypothesis(a, x, &mod);
    int pitch = 0;
    const char *why = sym ? NULL : why_not(a, x, &pitch);
    const char *name = sym ? ir_symstr(s->ctx, al_node(a, sym)->name) : NULL;
    int matrix = x->kind == AK_MATRIX;
    Diag *dg = sy_report(s, matrix ? E0811 : E0810, x->at,
                         "%s of `%s` needs an address that is a multiple of %lld bytes, but its byte offset `%s` "
                         "is provably a multiple of %lld only: %s", x->what, sy_text(s, x->at),
                         (long long)x->width, offset_text(a, x), (long long)got,
                         sym ? ir_fmt(s->ctx, "%s is not known to be a multiple of %lld", name, (long long)mod)
                             : why);
    if (!dg)
        return;
    sy_note_lets(s, dg, x->at, 2);
    diag_note(s->ctx, dg, sy_span(s, x->decl), "`%s` is %s; its base is %lld-byte aligned%s",
              ir_symstr(s->ctx, al_node(a, x->decl)->name), x->global ? "a global tensor" : "a shared tile",
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
                  "%lld%s", ir_symstr(s->ctx, al_node(a, x->decl)->name), (long long)w,
                  (long long)((row + w - 1) / w * w / x->esz), (long long)t->shape[x->rank - 1], alt);
    } else if (matrix)
        diag_help(s->ctx, dg, "start the view at a multiple of %lld elements along the tile's last dim, and keep "
                  "the tile's rows a multiple of 16 bytes", (long long)elems);
    else
        diag_help(s->ctx, dg, "make the index a multiple of %lld elements (e.g. `thread.x * %lld`), or prove it "
                  "with an `assume` or an enclosing `if`%s", (long long)elems, (long long)elems, alt);
}
