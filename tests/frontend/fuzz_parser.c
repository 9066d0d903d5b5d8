/* fuzz_parser.c — libFuzzer entry: lex, parse, resolve and (when clean)
 * print any byte string; then print again and compare (the round trip).
 * Build: see tests/frontend/README.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fe.h"
#include "cake.h" /* cake_diags_json */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *print_to_string(CakeCtx *ctx, Module *m, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    ir_print_module(ctx, m, f);
    fclose(f);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    CakeCtx *ctx = ctx_new();
    uint32_t file = ctx_add_file(ctx, "fuzz.tir", (const char *)data, (uint32_t)size);
    Module *m = fe_parse(ctx, file);
    if (!ctx->nerrors)
        fe_resolve(ctx, m);
    char *json = cake_diags_json(ctx, "check", ctx->nerrors == 0);
    free(json);
    FILE *null = fopen("/dev/null", "w");
    diag_print_text(ctx, null, 0);
    fclose(null);
    if (!ctx->nerrors) {
        size_t n1 = 0, n2 = 0;
        char *p1 = print_to_string(ctx, m, &n1);
        CakeCtx *c2 = ctx_new();
        uint32_t f2 = ctx_add_file(c2, "p1.tir", p1, (uint32_t)n1);
        Module *m2 = fe_parse(c2, f2);
        if (c2->nerrors) {
            fprintf(stderr, "round trip: printed IR does not parse:\n%s\n", p1);
            diag_print_text(c2, stderr, 0);
            abort();
        }
        char *p2 = print_to_string(c2, m2, &n2);
        if (n1 != n2 || memcmp(p1, p2, n1) != 0) {
            fprintf(stderr, "round trip: not a fixed point:\n%s\n----\n%s\n", p1, p2);
            abort();
        }
        free(p1);
        free(p2);
        ctx_free(c2);
    }
    ctx_free(ctx);
    return 0;
}
