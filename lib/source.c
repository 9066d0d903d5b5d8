/* source.c — libcake's front half: reading a source file and the pipeline
 * that parses, resolves and verifies it, one line per stage. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cake.h"
#include "fe.h"
#include "verify.h"
#include "protect.h"

/* dumps the IR after `stage` if asked; returns 1 when the pipeline stops here */
static int stage_done(CakeCtx *ctx, Module *m, const char *stage, const char *last)
{
    const char *want = ctx->dump_after;
    if (want && !ctx->nerrors && (!strcmp(want, stage) || !strcmp(want, "all"))) {
        FILE *out = ctx->dump_out ? ctx->dump_out : stderr;
        fprintf(out, "# IR after %s\n", stage);
        ir_print_module(ctx, m, out);
    }
    return ctx->nerrors != 0 || (last && !strcmp(last, stage));
}

static Module *pipeline(CakeCtx *ctx, uint32_t file, const char *last)
{
    Module *m = fe_parse(ctx, file);
    if (getenv("CAKE_TEST_BUG")) /* tests reach the internal-error path through this */
        ir_bug(ctx, "CAKE_TEST_BUG is set: a simulated compiler bug");
    if (stage_done(ctx, m, "parse", last))
        return m;
    fe_resolve(ctx, m);
    if (stage_done(ctx, m, "resolve", last))
        return m;
    ver_verify(ctx, m);
    stage_done(ctx, m, "verify", last);
    /* next: passes (legalize, layouts, pipelines, fences), then codegen, one line each */
    return m;
}

static int verify_source(CakeCtx *ctx, uint32_t file, const char *last, Module **out)
{
    *out = pipeline(ctx, file, last);
    return ctx->nerrors != 0;
}

/* reads `path` into ctx as a source file; E0001 and UINT32_MAX if it cannot */
static uint32_t load_file(CakeCtx *ctx, const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int err = f ? 0 : errno;
    while (f) {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            char *nb = cap < UINT32_MAX ? realloc(buf, cap) : NULL;
            if (!nb) {
                err = EFBIG;
                break;
            }
            buf = nb;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) {
            if (ferror(f))
                err = errno ? errno : EIO;
            break;
        }
    }
    if (f)
        fclose(f);
    if (err) {
        free(buf);
        Diag *d = diag_report(ctx, E0001, IR_NOSPAN, "cannot read `%s`: %s", path, strerror(err));
        diag_help(ctx, d, "check the path and the file's permissions");
        return UINT32_MAX;
    }
    uint32_t id = ctx_add_file(ctx, path, buf ? buf : "", (uint32_t)len);
    free(buf);
    return id;
}

static int verify_file(CakeCtx *ctx, const char *path, const char *last, Module **out)
{
    uint32_t file = load_file(ctx, path);
    if (file == UINT32_MAX)
        return 1;
    return verify_source(ctx, file, last, out);
}

int cake_verify_source(CakeCtx *ctx, uint32_t file, const char *last, Module **out)
{
    int rc;
    *out = NULL;
    CAKE_PROTECTED(ctx, rc, verify_source(ctx, file, last, out));
    if (rc == 2)
        *out = NULL;
    return rc;
}

int cake_verify_file(CakeCtx *ctx, const char *path, const char *last, Module **out)
{
    int rc;
    *out = NULL;
    CAKE_PROTECTED(ctx, rc, verify_file(ctx, path, last, out));
    if (rc == 2)
        *out = NULL;
    return rc;
}
