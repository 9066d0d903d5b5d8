/* cgtool.c — a stand-in for `cakec FILE --emit ...` while the driver is being
 * wired: parse, resolve, verify, pass_run_all, cg_emit.
 *   cgtool FILE [-o OUT] [--target T] [--emit ptx|llvm|llvm-raw|obj|hsaco] [-n REPEAT]
 * Exit codes as cakec's. -n REPEAT compiles REPEAT times (for bench) and
 * prints the mean milliseconds per compile to stdout. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ir.h"
#include "fe.h"
#include "verify.h"
#include "passes.h"
#include "cg.h"

static char *slurp(const char *path, uint32_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    *len = (uint32_t)fread(b, 1, (size_t)n, f);
    b[*len] = 0;
    fclose(f);
    return b;
}

static int compile_once(const char *file, const char *text, uint32_t len, Target tg, CgEmit what,
                        int raw, char **out, size_t *outlen, int print)
{
    CakeCtx *ctx = ctx_new();
    uint32_t fid = ctx_add_file(ctx, file, text, len);
    Module *m = fe_parse(ctx, fid);
    if (!ctx->nerrors)
        fe_resolve(ctx, m);
    if (!ctx->nerrors)   /* codegen reads the types the verifier fills */
        ver_verify(ctx, m);
    int rc = ctx->nerrors ? 1 : 0;
    if (!rc) {
        Kernel *k = NULL;
        if (pass_run_all(ctx, m, NULL, tg, NULL))
            rc = 1;
        if (!rc) {
            CgOptions o = {.opt_level = getenv("CGTOOL_OPT") ? atoi(getenv("CGTOOL_OPT")) : 3,
                           .llvm_before_passes = raw};
            rc = cg_emit(ctx, m, k, tg, what, &o, out, outlen);
            if (rc == 2)
                fprintf(stderr, "cakec: internal error (a compiler bug): %s\n", ctx->bug_msg);
        }
    }
    if (print || rc)
        diag_print_text(ctx, stderr, 0);
    ctx_free(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    const char *file = NULL, *outp = NULL, *tname = "sm_90a", *emit = "ptx";
    int repeat = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) outp = argv[++i];
        else if (!strcmp(argv[i], "--target") && i + 1 < argc) tname = argv[++i];
        else if (!strcmp(argv[i], "--emit") && i + 1 < argc) emit = argv[++i];
        else if (!strcmp(argv[i], "-n") && i + 1 < argc) repeat = atoi(argv[++i]);
        else file = argv[i];
    }
    Target tg;
    if (!file || !ir_lookup_target(tname, strlen(tname), &tg)) {
        fprintf(stderr, "usage: cgtool FILE [-o OUT] [--target T] [--emit ptx|llvm|llvm-raw|obj|hsaco]\n");
        return 1;
    }
    CgEmit what = !strcmp(emit, "llvm") || !strcmp(emit, "llvm-raw") ? CG_EMIT_LLVM
                : !strcmp(emit, "obj") ? CG_EMIT_OBJ : !strcmp(emit, "hsaco") ? CG_EMIT_HSACO : CG_EMIT_PTX;
    uint32_t len = 0;
    char *text = slurp(file, &len);
    if (!text) {
        fprintf(stderr, "cgtool: cannot read %s\n", file);
        return 1;
    }
    char *out = NULL;
    size_t outlen = 0;
    if (repeat > 0) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int i = 0; i < repeat; i++) {
            if (compile_once(file, text, len, tg, what, 0, &out, &outlen, 0)) {
                free(text);
                return 1;
            }
            free(out);
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        free(text);
        printf("%.2f\n", ((double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6) / repeat);
        return 0;
    }
    int rc = compile_once(file, text, len, tg, what, !strcmp(emit, "llvm-raw"), &out, &outlen, 1);
    free(text);
    if (rc)
        return rc;
    FILE *f = outp && strcmp(outp, "-") ? fopen(outp, "wb") : stdout;
    fwrite(out, 1, outlen, f);
    if (f != stdout)
        fclose(f);
    free(out);
    return 0;
}
