/* source.c — libcake's front half: reading a source file and the pipeline
 * that parses, resolves and verifies it, one line per stage. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cake_priv.h"
#include "fe.h"
#include "verify.h"
#include "protect.h"

/* dumps the IR after `stage` if asked; returns 1 when the pipeline stops here
   (errors past `base`, the count before this file: one context checks many
   files in a library, and an earlier file's errors are not this one's) */
static int stage_done(CakeCtx *ctx, Module *m, const char *stage, const char *last, uint32_t base)
{
    const char *want = ctx->dump_after;
    int failed = ctx->nerrors != base;
    if (want && !failed && (!strcmp(want, stage) || !strcmp(want, "all"))) {
        FILE *out = ctx->dump_out ? ctx->dump_out : stderr;
        fprintf(out, "# IR after %s\n", stage);
        ir_print_module(ctx, m, out);
    }
    return failed || (last && !strcmp(last, stage));
}

/* what `check --set/--shape` binds, before the verifier runs */
typedef struct {
    const char *kernel, *set, *shape;
} Bindings;

/* the VerBind of the bindings for kernel *which; 0 after E0002/E0006/E0970 */
static int bind_kernel(CakeCtx *ctx, Module *m, const Bindings *bs, Kernel **which, VerBind *vb)
{
    Kernel *k = lib_find_kernel(ctx, m, bs->kernel, TG__COUNT);
    if (!k)
        return 0;
    ShapeEnv *env = arena_alloc(&ctx->arena, sizeof *env);
    if (!cake_parse_bindings(ctx, k, bs->set, bs->shape, env) ||
        !shape_env_assumes_hold(ctx, k, env, 1, NULL))   /* as `run` refuses such a shape */
        return 0;
    CeBinding *params = arena_alloc(&ctx->arena, (env->n + 1) * sizeof *params);
    CeBinding *dims = arena_alloc(&ctx->arena, (env->n + 1) * sizeof *dims);
    CeEnv *set = arena_alloc(&ctx->arena, sizeof *set);
    memset(set, 0, sizeof *set);
    set->b = params;
    vb->set = set;
    vb->shape = dims;
    vb->nshape = 0;
    for (uint32_t i = 0; i < env->n; i++) {
        int is_dim = 0;
        for (uint32_t j = 0; j < k->ndims; j++)
            is_dim |= k->nodes[k->dims[j]].name == env->b[i].name;
        if (is_dim)
            dims[vb->nshape++] = env->b[i];
        else
            params[set->n++] = env->b[i];   /* integer scalar args: no parameter matches */
    }
    *which = k;
    return 1;
}

static Module *pipeline(CakeCtx *ctx, uint32_t file, const char *last, const Bindings *bs)
{
    uint32_t base = ctx->nerrors;
    Module *m = fe_parse(ctx, file);
    if (getenv("CAKE_TEST_BUG")) /* tests reach the internal-error path through this */
        ir_bug(ctx, "CAKE_TEST_BUG is set: a simulated compiler bug");
    if (stage_done(ctx, m, "parse", last, base))
        return m;
    fe_resolve(ctx, m);
    if (stage_done(ctx, m, "resolve", last, base))
        return m;
    Kernel *which = NULL;
    VerBind vb = {0};
    if (bs && !bind_kernel(ctx, m, bs, &which, &vb))
        return m;
    ver_verify_bound(ctx, m, which, bs ? &vb : NULL);
    stage_done(ctx, m, "verify", last, base);
    /* next: passes (legalize, layouts, pipelines, fences), then codegen, one line each */
    return m;
}

static int verify_source(CakeCtx *ctx, uint32_t file, const char *last, Module **out)
{
    uint32_t before = ctx->nerrors;
    *out = pipeline(ctx, file, last, NULL);
    return ctx->nerrors != before;
}

char *cake_read_text(const char *path, size_t max_bytes, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    char *s = n >= 0 && (size_t)n <= max_bytes && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) == (size_t)n) {
        s[n] = 0;
        if (len)
            *len = (size_t)n;
    } else {
        free(s);
        s = NULL;
    }
    fclose(f);
    return s;
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
    int rc = verify_source(ctx, file, last, out);
    if (rc && !last) /* `cakec check FILE`: only fix-its and edit helps that work are shown */
        lib_verify_fixits(ctx, NULL);
    return rc;
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

int cake_parse_bindings(CakeCtx *ctx, Kernel *k, const char *set, const char *shape, ShapeEnv *env)
{
    char err[256];
    shape_env_clear(env);
    if ((set && !shape_env_parse(ctx, k, env, set, err, sizeof err)) ||
        (shape && !shape_env_parse(ctx, k, env, shape, err, sizeof err))) {
        Diag *d = diag_report(ctx, E0002, IR_NOSPAN, "--shape/--set: %s", err);
        diag_help(ctx, d, "write `--shape M=4096,N=8192` for dims and `--set BM=64` for params");
        return 0;
    }
    CeEnv view = shape_env_view(env);
    return ver_set_allowed(ctx, k, &view);
}

static int check_file(CakeCtx *ctx, const char *path, const Bindings *bs, Module **out)
{
    uint32_t file = load_file(ctx, path);
    if (file == UINT32_MAX)
        return 1;
    *out = pipeline(ctx, file, NULL, bs);
    if (ctx->nerrors)
        lib_verify_fixits(ctx, &(LibFixitBind){bs->kernel, bs->set, bs->shape}); /* fixit_verify.c: only
                                                                       fix-its that work are shown */
    return ctx->nerrors != 0;
}

int cake_check_file(CakeCtx *ctx, const char *path, const char *kernel, const char *set,
                    const char *shape, Module **out)
{
    int rc;
    Bindings bs = {kernel, set, shape};
    *out = NULL;
    CAKE_PROTECTED(ctx, rc, check_file(ctx, path, &bs, out));
    if (rc == 2)
        *out = NULL;
    return rc;
}

static int check_source(CakeCtx *ctx, uint32_t file, const Bindings *bs, Module **out)
{
    *out = pipeline(ctx, file, NULL, bs);
    return ctx->nerrors != 0;
}

int cake_check_source(CakeCtx *ctx, uint32_t file, const char *kernel, const char *set,
                      const char *shape, Module **out)
{
    int rc;
    Bindings bs = {kernel, set, shape};
    *out = NULL;
    CAKE_PROTECTED(ctx, rc, check_source(ctx, file, &bs, out));
    if (rc == 2)
        *out = NULL;
    return rc;
}
