/* ctx.c — the compilation context: arena, names, source files, spans, bugs. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "ir.h"

CakeCtx *ctx_new(void)
{
    return ctx_new_pooled(NULL);
}

CakeCtx *ctx_new_pooled(ArenaPool *pool)
{
    CakeCtx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return NULL;
    ctx->arena.owner = ctx;
    ctx->arena.pool = pool;
    ctx->max_errors = 200;
    return ctx;
}

void ctx_free(CakeCtx *ctx)
{
    if (!ctx)
        return;
    arena_free(&ctx->arena);
    free(ctx);
}

uint32_t ctx_add_file(CakeCtx *ctx, const char *path, const char *text, uint32_t len)
{
    uint32_t cap = ctx->nfiles + 1;
    ctx->files = arena_realloc(&ctx->arena, ctx->files, ctx->nfiles * sizeof *ctx->files,
                               cap * sizeof *ctx->files);
    SourceFile *f = &ctx->files[ctx->nfiles];
    f->path = arena_strndup(&ctx->arena, path, strlen(path));
    f->text = arena_strndup(&ctx->arena, text, len);
    f->len = len;
    uint32_t nlines = 1;
    for (uint32_t i = 0; i < len; i++)
        nlines += text[i] == '\n';
    f->line_starts = arena_alloc(&ctx->arena, (nlines + 1) * sizeof *f->line_starts);
    uint32_t l = 0;
    f->line_starts[l++] = 0;
    for (uint32_t i = 0; i < len; i++)
        if (text[i] == '\n')
            f->line_starts[l++] = i + 1;
    f->nlines = nlines;
    return ctx->nfiles++;
}

static void offset_linecol(const SourceFile *f, uint32_t off, uint32_t *line, uint32_t *col)
{
    uint32_t lo = 0, hi = f->nlines;  /* find the last line start <= off */
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (f->line_starts[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    *line = lo + 1;
    *col = off - f->line_starts[lo] + 1;
}

void span_linecol(const CakeCtx *ctx, Span s, uint32_t *line, uint32_t *col,
                  uint32_t *end_line, uint32_t *end_col)
{
    if (s.file >= ctx->nfiles) {
        *line = *col = *end_line = *end_col = 0;
        return;
    }
    const SourceFile *f = &ctx->files[s.file];
    uint32_t lo = s.lo > f->len ? f->len : s.lo;
    uint32_t hi = s.hi > f->len ? f->len : s.hi;
    if (hi < lo)
        hi = lo;
    offset_linecol(f, lo, line, col);
    offset_linecol(f, hi, end_line, end_col);
}

Span span_join(Span a, Span b)
{
    Span s = a;
    if (b.lo < s.lo)
        s.lo = b.lo;
    if (b.hi > s.hi)
        s.hi = b.hi;
    return s;
}

char *ir_vfmt(CakeCtx *ctx, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        n = 0;
    char *p = arena_alloc(&ctx->arena, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *ir_fmt(CakeCtx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = ir_vfmt(ctx, fmt, ap);
    va_end(ap);
    return p;
}

_Noreturn void ir_bug(CakeCtx *ctx, const char *fmt, ...)
{
    char buf[sizeof ctx->bug_text];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (ctx && ctx->bug_jmp) {
        memcpy(ctx->bug_text, buf, sizeof buf);
        ctx->bug_msg = ctx->bug_text;
        longjmp(*ctx->bug_jmp, 1);
    }
    fprintf(stderr, "cakec: internal error (a compiler bug, please report it): %s\n", buf);
    exit(2); /* unguarded: see ir.h; libcake and the driver never get here */
}
