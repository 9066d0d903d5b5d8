/* fixit_verify.c — a fix-it is shown only when it works: before `check`
 * returns, every error's fix-its are applied to a copy of the source and the
 * copy is checked again, in a context of its own, at the same bindings
 * (--kernel, --set, --shape) as the check that reported it. A fix-it whose edit leaves
 * the error in place (same code, same line) or brings more errors than it
 * removes is withdrawn, with the help lines that spell its replacement. */
#include <stdio.h>
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

static int newlines(const char *s, size_t n)
{
    int k = 0;
    for (size_t i = 0; i < n && s[i]; i++)
        k += s[i] == '\n';
    return k;
}

/* how many lines d's fix-its add above d's span (an inserted `assume` line) */
static int fixit_shift(const CakeCtx *ctx, const Diag *d)
{
    const char *t = ctx->files[d->span.file].text;
    int k = 0;
    for (uint32_t i = 0; i < d->nfixits; i++) {
        const DiagFixit *f = &d->fixits[i];
        if (f->span.hi <= d->span.lo)
            k += newlines(f->replacement, strlen(f->replacement)) - newlines(t + f->span.lo, f->span.hi - f->span.lo);
    }
    return k;
}

static uint32_t line_of(const CakeCtx *ctx, Span s)
{
    uint32_t line, col, el, ec;
    span_linecol(ctx, s, &line, &col, &el, &ec);
    return line;
}

/* 1 when the edited copy clears d (no error of d's code on d's line) and has
 * fewer errors than the original; 0 when it does not; -1 when the copy does
 * not parse (E01xx: the edit was not read right, nothing learnt) and parse_ok
 * is asked for */
static int works(const CakeCtx *ctx, const LibFixitBind *bind, const Diag *d, const char *text,
                 uint32_t len, int parse_ok, int shift)
{
    CakeCtx *c2 = ctx_new();
    if (!c2)
        return 1; /* out of memory: nothing learnt, keep it */
    uint32_t f2 = ctx_add_file(c2, ctx->files[d->span.file].path, text, len);
    Module *m;
    /* at the bindings the check ran with (--kernel, --set, --shape): an edit
       that works at the defaults may not at the point the user asked about */
    int rc = bind && (bind->kernel || bind->set || bind->shape)
                 ? cake_check_source(c2, f2, bind->kernel, bind->set, bind->shape, &m)
                 : cake_verify_source(c2, f2, NULL, &m);
    int ok = rc != 2 && c2->nerrors < ctx->nerrors;
    for (uint32_t i = 0; parse_ok && i < c2->ndiags; i++)
        if (c2->diags[i].severity == SEV_ERROR && c2->diags[i].code >= E0101 && c2->diags[i].code < E0201) {
            ctx_free(c2);
            return -1;
        }
    uint32_t line = line_of(ctx, d->span) + (uint32_t)shift; /* d's line in the copy */
    for (uint32_t i = 0; ok && i < c2->ndiags; i++) {
        const Diag *e = &c2->diags[i];
        if (e->severity == SEV_ERROR && e->code == d->code && line_of(c2, e->span) == line)
            ok = 0;
    }
    ctx_free(c2);
    return ok;
}

/* does help h spell replacement r (leading and trailing blanks aside)? */
static int spells(const char *h, const char *r)
{
    while (*r == ' ' || *r == '\n' || *r == '\t')
        r++;
    size_t n = strlen(r);
    while (n && (r[n - 1] == ' ' || r[n - 1] == '\n' || r[n - 1] == '\t'))
        n--;
    for (const char *p = h; n && *p; p++)
        if (!strncmp(p, r, n))
            return 1;
    return 0;
}

static void withdraw(Diag *d)
{
    uint32_t w = 0;
    for (uint32_t h = 0; h < d->nhelps; h++) {
        int spells_one = 0;
        for (uint32_t i = 0; i < d->nfixits; i++)
            spells_one |= spells(d->helps[h], d->fixits[i].replacement);
        if (!spells_one)
            d->helps[w++] = d->helps[h];
    }
    d->nhelps = w;
    d->nfixits = 0;
}

/* ---- prose helps that propose an edit --------------------------------------
 * A help is prose, but many spell the code to write: "add `assume N % 8 ==
 * 0`", "use `wgmma.wait 1`", "write `barrier 1, 256`". Such a help proposes an
 * edit as surely as a fix-it does, so it is re-checked the same way, with the
 * edit read from it: a header line it says to add (`assume ...`) goes before
 * the body's `{`; a statement it says to use or write replaces the statement
 * on the diagnostic's line that starts with the same word (`wgmma.wait 2` ->
 * `wgmma.wait 1`); a statement to insert "before this use" goes on a line of
 * its own before the diagnostic's line. A help whose edit does not clear the error, or brings more
 * errors, is withdrawn; one whose edit cannot be read (placeholders such as
 * `...` or TYPE, no statement of that word on the line) or does not parse is
 * kept as the prose it is. */

static const char *const EDIT_VERBS[] = {"add `", "use `", "write `", "replace it with `",
                                         "change it to `", "make it `", "insert `", NULL};

/* the first code snippet after an edit verb in help h, copied into buf */
static int help_snippet(const char *h, char *buf, size_t cap)
{
    for (const char *const *v = EDIT_VERBS; *v; v++) {
        const char *at = strstr(h, *v);
        if (!at)
            continue;
        at += strlen(*v);
        const char *end = strchr(at, '`');
        size_t n = end ? (size_t)(end - at) : 0;
        if (!n || n + 1 > cap)
            continue;
        memcpy(buf, at, n);
        buf[n] = 0;
        if (strstr(buf, "...") || strstr(buf, "TYPE") || strstr(buf, "EXPR") || strchr(buf, '\n'))
            continue;
        return 1;
    }
    return 0;
}

/* the word a statement starts with: letters, digits, `_` and `.` */
static size_t word_len(const char *p)
{
    size_t n = 0;
    while (p[n] == '_' || p[n] == '.' || (p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z') ||
           (p[n] >= '0' && p[n] <= '9'))
        n++;
    return n;
}

/* the text of d's file with help snippet `snip` applied as an edit, or NULL */
static char *help_edit(const CakeCtx *ctx, const Diag *d, const char *help, const char *snip, uint32_t *len,
                       int *shift)
{
    const SourceFile *sf = &ctx->files[d->span.file];
    const char *t = sf->text;
    uint32_t lo, hi;
    const char *ins = NULL;
    if (strstr(help, "` before this")) { /* a statement before the one on d's line */
        uint32_t ls = d->span.lo;
        while (ls > 0 && t[ls - 1] != '\n')
            ls--;
        uint32_t ind = ls;
        while (t[ind] == ' ' || t[ind] == '\t')
            ind++;
        size_t sn = strlen(snip), il = ind - ls;
        char *out = malloc(sf->len + il + sn + 2);
        if (!out)
            return NULL;
        memcpy(out, t, ind);
        memcpy(out + ind, snip, sn);
        out[ind + sn] = '\n';
        memcpy(out + ind + sn + 1, t + ls, il);
        memcpy(out + ind + sn + 1 + il, t + ind, sf->len - ind);
        *len = (uint32_t)(sf->len + il + sn + 1);
        out[*len] = 0;
        *shift = 1;
        return out;
    }
    if (!strncmp(snip, "assume ", 7)) { /* a header line: before the body's `{` */
        const char *body = NULL; /* the last body opened before d: d's kernel */
        for (const char *p = strstr(t, "\n{"); p && p < t + d->span.lo; p = strstr(p + 1, "\n{"))
            body = p + 1;
        if (!body)
            return NULL;
        lo = hi = (uint32_t)(body - t);
        ins = "\n";
        *shift = 1; /* one line more above d */
    } else { /* the statement on d's line that starts with the snippet's word */
        size_t w = word_len(snip);
        if (w < 2)
            return NULL;
        uint32_t ls = d->span.lo;
        while (ls > 0 && t[ls - 1] != '\n')
            ls--;
        const char *p = t + ls, *hit = NULL;
        for (; *p && *p != '\n' && *p != '#'; p++)
            if ((p == t + ls || !word_len(p - 1) || p[-1] == ' ') && !strncmp(p, snip, w) && word_len(p) == w) {
                hit = p;
                break;
            }
        if (!hit)
            return NULL;
        const char *e = hit;
        while (*e && *e != '\n' && *e != '#' && *e != ';' && *e != '}')
            e++;
        while (e > hit && e[-1] == ' ')
            e--;
        lo = (uint32_t)(hit - t);
        hi = (uint32_t)(e - t);
    }
    size_t sn = strlen(snip), pre = ins ? 2 : 0;
    char *out = malloc(sf->len + sn + pre + 2);
    if (!out)
        return NULL;
    size_t n = 0;
    memcpy(out, t, lo);
    n = lo;
    if (ins) {
        memcpy(out + n, "  ", 2);
        n += 2;
    }
    memcpy(out + n, snip, sn);
    n += sn;
    if (ins)
        out[n++] = '\n';
    memcpy(out + n, t + hi, sf->len - hi);
    n += sf->len - hi;
    out[n] = 0;
    *len = (uint32_t)n;
    return out;
}

/* d's prose helps that propose an edit: re-checked, withdrawn when the edit fails */
static void verify_helps(CakeCtx *ctx, const LibFixitBind *bind, Diag *d)
{
    uint32_t w = 0;
    for (uint32_t h = 0; h < d->nhelps; h++) {
        char snip[256];
        int keep = 1, covered = 0;
        for (uint32_t i = 0; i < d->nfixits; i++)
            covered |= spells(d->helps[h], d->fixits[i].replacement);
        if (covered && getenv("CAKE_HELP_AUDIT") && help_snippet(d->helps[h], snip, sizeof snip))
            fprintf(stderr, "help-audit\t%s\tfixit\t%s\n", ir_diag_info[d->code].code, snip);
        if (!covered && help_snippet(d->helps[h], snip, sizeof snip)) {
            uint32_t len;
            int shift = 0;
            char *text = help_edit(ctx, d, d->helps[h], snip, &len, &shift);
            int r = text ? works(ctx, bind, d, text, len, 1, shift) : -2;
            keep = r != 0;
            if (getenv("CAKE_HELP_AUDIT")) /* tests/corpus/score.py counts these */
                fprintf(stderr, "help-audit\t%s\t%s\t%s\n", ir_diag_info[d->code].code,
                        r == 1 ? "works" : r == 0 ? "withdrawn" : r == -1 ? "no-parse" : "unread", snip);
            free(text);
        }
        if (keep)
            d->helps[w++] = d->helps[h];
    }
    d->nhelps = w;
}

void lib_verify_fixits(CakeCtx *ctx, const LibFixitBind *bind)
{
    uint32_t tried = 0, n = ctx->ndiags;
    for (uint32_t i = 0; i < n && tried < MAX_VERIFIED; i++) {
        Diag *d = &ctx->diags[i];
        if (d->severity != SEV_ERROR || (!d->nfixits && !d->nhelps) || d->span.file >= ctx->nfiles)
            continue;
        tried++;
        uint32_t len;
        char *text = d->nfixits ? apply(ctx, d, d->span.file, &len) : NULL;
        if (text && !works(ctx, bind, d, text, len, 0, fixit_shift(ctx, d)))
            withdraw(d);
        free(text);
        verify_helps(ctx, bind, d);
    }
}
