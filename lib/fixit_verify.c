/* fixit_verify.c — a fix-it is shown only when it works: before `check`
 * returns, every error's fix-its are applied to a copy of the source and the
 * copy is verified again, in a context of its own. A fix-it whose edit leaves
 * the error in place (same code, same line) or brings more errors than it
 * removes is withdrawn, with the help lines that spell its replacement. */
#include <stdlib.h>
#include <string.h>
#include "cake_priv.h"

#define MAX_VERIFIED 16   /* diagnostics whose fix-its are tried, per check */

/* the text of file f with d's fix-its applied (spans in f), malloc'd */
static char *apply(const CakeCtx *ctx, const Diag *d, uint32_t f, uint32_t *len)
{
    const SourceFile *sf = &ctx->files[f];
    size_t extra = 0;
    for (uint32_t i = 0; i < d->nfixits; i++) {
        const Span *sp = &d->fixits[i].span;
        if (sp->file != f || sp->lo > sp->hi || sp->hi > sf->len)
            return NULL;
        for (uint32_t j = 0; j < i; j++) /* overlapping edits: not tried */
            if (d->fixits[j].span.lo < sp->hi && sp->lo < d->fixits[j].span.hi)
                return NULL;
        extra += strlen(d->fixits[i].replacement);
    }
    char *out = malloc(sf->len + extra + 1);
    if (!out)
        return NULL;
    size_t n = 0;
    for (uint32_t pos = 0; pos <= sf->len;) {
        const DiagFixit *at = NULL;
        for (uint32_t i = 0; i < d->nfixits; i++)
            if (d->fixits[i].span.lo == pos)
                at = &d->fixits[i];
        if (at) {
            size_t r = strlen(at->replacement);
            memcpy(out + n, at->replacement, r);
            n += r;
            if (at->span.hi > pos) {
                pos = at->span.hi;
                continue;
            }
        }
        if (pos == sf->len)
            break;
        out[n++] = sf->text[pos++];
    }
    out[n] = 0;
    *len = (uint32_t)n;
    return out;
}

static uint32_t line_of(const CakeCtx *ctx, Span s)
{
    uint32_t line, col, el, ec;
    span_linecol(ctx, s, &line, &col, &el, &ec);
    return line;
}

/* 1 when the edited copy clears d (no error of d's code on d's line) and has
 * fewer errors than the original */
static int works(const CakeCtx *ctx, const Diag *d, const char *text, uint32_t len)
{
    CakeCtx *c2 = ctx_new();
    if (!c2)
        return 1; /* out of memory: nothing learnt, keep it */
    uint32_t f2 = ctx_add_file(c2, ctx->files[d->span.file].path, text, len);
    Module *m;
    int rc = cake_verify_source(c2, f2, NULL, &m);
    int ok = rc != 2 && c2->nerrors < ctx->nerrors;
    uint32_t line = line_of(ctx, d->span);
    for (uint32_t i = 0; ok && i < c2->ndiags; i++) {
        const Diag *e = &c2->diags[i];
        if (e->severity == SEV_ERROR && e->code == d->code && line_of(c2, e->span) == line)
            ok = 0;
    }
    ctx_free(c2);
    return ok;
}

static void withdraw(Diag *d)
{
    uint32_t w = 0;
    for (uint32_t h = 0; h < d->nhelps; h++) {
        int spells = 0;
        for (uint32_t i = 0; i < d->nfixits; i++)
            spells |= d->fixits[i].replacement[0] && strstr(d->helps[h], d->fixits[i].replacement) != NULL;
        if (!spells)
            d->helps[w++] = d->helps[h];
    }
    d->nhelps = w;
    d->nfixits = 0;
}

void lib_verify_fixits(CakeCtx *ctx)
{
    uint32_t tried = 0, n = ctx->ndiags;
    for (uint32_t i = 0; i < n && tried < MAX_VERIFIED; i++) {
        Diag *d = &ctx->diags[i];
        if (d->severity != SEV_ERROR || !d->nfixits || d->span.file >= ctx->nfiles)
            continue;
        tried++;
        uint32_t len;
        char *text = apply(ctx, d, d->span.file, &len);
        if (text && !works(ctx, d, text, len))
            withdraw(d);
        free(text);
    }
}
