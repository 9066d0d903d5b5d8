/* diag.c — collecting diagnostics and rendering them as text with a caret.
 * (The JSON rendering lives in frontend/, which may use cJSON.) */
#include <stdarg.h>
#include <string.h>
#include "ir.h"

const DiagInfo ir_diag_info[DIAG__COUNT] = {
#define DIAG(code, sev, title) {#code, sev, title},
#include "diagcodes.h"
#undef DIAG
};

Diag *diag_report(CakeCtx *ctx, DiagCode code, Span span, const char *fmt, ...)
{
    uint8_t sev = ir_diag_info[code].severity;
    uint32_t limit = ctx->max_errors ? ctx->max_errors : 200;
    if (sev == SEV_ERROR && ctx->nerrors >= limit) {
        memset(&ctx->diag_sink, 0, sizeof ctx->diag_sink); /* collected nowhere, never read */
        ctx->nerrors++;
        return &ctx->diag_sink;
    }
    ctx->diags = arena_grow(&ctx->arena, ctx->diags, &ctx->capdiags, ctx->ndiags + 1, sizeof *ctx->diags);
    Diag *d = &ctx->diags[ctx->ndiags++];
    memset(d, 0, sizeof *d);
    d->code = (uint16_t)code;
    d->severity = sev;
    d->span = span;
    va_list ap;
    va_start(ap, fmt);
    d->msg = ir_vfmt(ctx, fmt, ap);
    va_end(ap);
    if (sev == SEV_ERROR)
        ctx->nerrors++;
    else if (sev == SEV_WARNING)
        ctx->nwarnings++;
    return d;
}

void diag_note(CakeCtx *ctx, Diag *d, Span span, const char *fmt, ...)
{
    if (!d->msg)
        return;
    d->notes = arena_realloc(&ctx->arena, d->notes, d->nnotes * sizeof *d->notes,
                             (d->nnotes + 1) * sizeof *d->notes);
    va_list ap;
    va_start(ap, fmt);
    d->notes[d->nnotes].span = span;
    d->notes[d->nnotes].msg = ir_vfmt(ctx, fmt, ap);
    va_end(ap);
    d->nnotes++;
}

void diag_help(CakeCtx *ctx, Diag *d, const char *fmt, ...)
{
    if (!d->msg)
        return;
    d->helps = arena_realloc(&ctx->arena, d->helps, d->nhelps * sizeof *d->helps,
                             (d->nhelps + 1) * sizeof *d->helps);
    va_list ap;
    va_start(ap, fmt);
    d->helps[d->nhelps++] = ir_vfmt(ctx, fmt, ap);
    va_end(ap);
}

void diag_fixit(CakeCtx *ctx, Diag *d, Span span, const char *replacement)
{
    if (!d->msg)
        return;
    d->fixits = arena_realloc(&ctx->arena, d->fixits, d->nfixits * sizeof *d->fixits,
                              (d->nfixits + 1) * sizeof *d->fixits);
    DiagFixit *f = &d->fixits[d->nfixits++];
    f->span = span;
    f->replacement = arena_strndup(&ctx->arena, replacement, strlen(replacement));
    f->applicability = "machine-applicable";
}

/* a and b are in the same source: one file, or two loads of one path (a library loads a
   kernel's file once per variant) */
static int same_source(const CakeCtx *ctx, uint32_t a, uint32_t b)
{
    if (a == b)
        return 1;
    if (a >= ctx->nfiles || b >= ctx->nfiles || !ctx->files[a].path || !ctx->files[b].path)
        return 0;
    return !strcmp(ctx->files[a].path, ctx->files[b].path);
}

static int same_place(const CakeCtx *ctx, Span a, Span b)
{
    return a.lo == b.lo && a.hi == b.hi && same_source(ctx, a.file, b.file);
}

static int same_diag(const CakeCtx *ctx, const Diag *a, const Diag *b)
{
    if (a->code != b->code || !same_place(ctx, a->span, b->span) || strcmp(a->msg, b->msg) ||
        a->nnotes != b->nnotes)
        return 0;
    for (uint32_t i = 0; i < a->nnotes; i++)
        if (!same_place(ctx, a->notes[i].span, b->notes[i].span) || strcmp(a->notes[i].msg, b->notes[i].msg))
            return 0;
    return 1;
}

void diag_drop_repeated_notes(CakeCtx *ctx, uint32_t first)
{
    uint32_t n = first;
    for (uint32_t i = first; i < ctx->ndiags; i++) {
        const Diag *d = &ctx->diags[i];
        uint32_t j = 0;
        if (d->severity == SEV_NOTE)
            while (j < n && !same_diag(ctx, &ctx->diags[j], d))
                j++;
        if (d->severity != SEV_NOTE || j == n)
            ctx->diags[n++] = *d;
    }
    ctx->ndiags = n;
}

static const char *sev_name(uint8_t sev)
{
    return sev == SEV_ERROR ? "error" : sev == SEV_WARNING ? "warning" : "note";
}

/* prints the source line of span s and a caret run under it */
static void print_snippet(const CakeCtx *ctx, FILE *out, Span s, int color)
{
    uint32_t line, col, eline, ecol;
    if (s.file >= ctx->nfiles)
        return;
    span_linecol(ctx, s, &line, &col, &eline, &ecol);
    const SourceFile *f = &ctx->files[s.file];
    uint32_t start = f->line_starts[line - 1], end = start;
    while (end < f->len && f->text[end] != '\n' && f->text[end] != '\r')
        end++;
    /* control bytes (a NUL would end the line early) print as '?'; UTF-8 passes through, and
       the caret line counts one column per character, not per byte */
    fprintf(out, "%5u | ", line);
    for (uint32_t i = start; i < end; i++) {
        unsigned char c = (unsigned char)f->text[i];
        fputc(c == '\t' || (c >= 0x20 && c != 0x7f) ? c : '?', out);
    }
    fputs("\n      | ", out);
    for (uint32_t i = 1; i < col; i++) {
        unsigned char c = start + i - 1 < f->len ? (unsigned char)f->text[start + i - 1] : ' ';
        if ((c & 0xc0) != 0x80) /* a UTF-8 continuation byte takes no column */
            fputc(c == '\t' ? '\t' : ' ', out);
    }
    uint32_t linelen = end - start; /* a span may start past a '\r' that ends the shown line */
    uint32_t bytes = eline == line ? (ecol > col ? ecol - col : 1)
                                   : (col - 1 <= linelen ? linelen + 1 - (col - 1) : 1);
    uint32_t width = 0;
    for (uint32_t i = 0; i < bytes; i++) {
        uint32_t at = start + col - 1 + i;
        if (at >= end || ((unsigned char)f->text[at] & 0xc0) != 0x80)
            width++;
    }
    if (width == 0)
        width = 1;
    if (color)
        fputs("\033[1;31m", out);
    for (uint32_t i = 0; i < width; i++)
        fputc('^', out);
    if (color)
        fputs("\033[0m", out);
    fputc('\n', out);
}

static void print_loc(const CakeCtx *ctx, FILE *out, Span s)
{
    uint32_t line, col, eline, ecol;
    if (s.file >= ctx->nfiles) {
        fputs("cakec: ", out);
        return;
    }
    span_linecol(ctx, s, &line, &col, &eline, &ecol);
    fprintf(out, "%s:%u:%u: ", ctx->files[s.file].path, line, col);
}

void diag_print_text(const CakeCtx *ctx, FILE *out, int color)
{
    for (uint32_t i = 0; i < ctx->ndiags; i++) {
        const Diag *d = &ctx->diags[i];
        print_loc(ctx, out, d->span);
        fprintf(out, "%s%s[%s]%s: %s\n", color ? "\033[1m" : "", sev_name(d->severity),
                ir_diag_info[d->code].code, color ? "\033[0m" : "", d->msg);
        print_snippet(ctx, out, d->span, color);
        for (uint32_t j = 0; j < d->nnotes; j++) {
            const DiagNote *n = &d->notes[j];
            if (n->span.file >= ctx->nfiles) { /* IR_NOSPAN */
                fprintf(out, "      = note: %s\n", n->msg);
                continue;
            }
            print_loc(ctx, out, n->span);
            fprintf(out, "note: %s\n", n->msg);
            print_snippet(ctx, out, n->span, color);
        }
        for (uint32_t j = 0; j < d->nhelps; j++)
            fprintf(out, "      = help: %s\n", d->helps[j]);
    }
    uint32_t limit = ctx->max_errors ? ctx->max_errors : 200;
    if (ctx->nerrors > limit)
        fprintf(out, "cakec: %u more errors not shown\n", ctx->nerrors - limit);
}
