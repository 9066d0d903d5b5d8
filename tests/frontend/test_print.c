/* test_print.c — the printer: canonical text, minimal parentheses, and the
 * structural round trip parse -> print -> parse over every example. */
#include <dirent.h>
#include <math.h>
#include "helpers.h"

#ifndef CAKE_SOURCE_DIR
#define CAKE_SOURCE_DIR "."
#endif

static char *reprint(const char *src, CakeCtx **out_ctx, Module **out_m)
{
    CakeCtx *ctx = ctx_new();
    Module *m = parse_str(ctx, src);
    if (ctx->nerrors)
        diag_print_text(ctx, stderr, 0);
    assert_int_equal(ctx->nerrors, 0);
    char *s = print_str(ctx, m);
    if (out_ctx) {
        *out_ctx = ctx;
        *out_m = m;
    } else {
        ctx_free(ctx);
    }
    return s;
}

/* the body statement of a one-statement kernel, printed */
static void expect_stmt(const char *in, const char *want)
{
    char *src = malloc(strlen(in) + 256);
    sprintf(src, KHEAD "  %s\n}\n", in);
    char *out = reprint(src, NULL, NULL);
    char *line = strstr(out, "{\n  ");
    assert_non_null(line);
    line += 4;
    *strchr(line, '\n') = 0;
    assert_string_equal(line, want);
    free(out);
    free(src);
}

static void test_parens(void **state)
{
    (void)state;
    expect_stmt("let a = ((1 + 2)) * 3", "let a = (1 + 2) * 3");
    expect_stmt("let a = 1 + (2 * 3)", "let a = 1 + 2 * 3");
    expect_stmt("let a = 1 - (2 - 3)", "let a = 1 - (2 - 3)");
    expect_stmt("let a = (2 ^ 3) ^ 4", "let a = (2 ^ 3) ^ 4");
    expect_stmt("let a = 2^3^4", "let a = 2 ^ 3 ^ 4");
    expect_stmt("let a = (-2)^2 + -2^2", "let a = (-2) ^ 2 + -2 ^ 2");
    expect_stmt("let a = (load x[0, 0] mask true) * 2", "let a = (load x[0, 0] mask true) * 2");
    /* in a store's value a bare mask is the store's; a masked load keeps its parentheses */
    expect_stmt("store x[0, 0] <- (load x[1, 1]) mask s > 0", "store x[0, 0] <- load x[1, 1] mask s > 0");
    expect_stmt("store x[0, 0] <- (load x[1, 1] mask s > 0)", "store x[0, 0] <- (load x[1, 1] mask s > 0)");
    expect_stmt("let a=x[0,1:+4]^T", "let a = x[0, 1 : +4]^T");
    expect_stmt("let a = 1.0 + 2.5e-3 + .5 + 1e20 + inf", "let a = 1.0 + 0.0025 + 0.5 + 1e+20 + inf");
    expect_stmt("for i in 0..4 step 2 unroll { }", "for i in 0 .. 4 step 2 unroll {");
    expect_stmt("s max= 3", "s max= 3");
    expect_stmt("let a = 1 ~ 2 | 3 & 4", "let a = 1 ~ 2 | 3 & 4");
}

/* compares two nodes of two kernels structurally (ignoring spans and NF_PAREN) */
static int same(const Kernel *k1, NodeId a, const Kernel *k2, NodeId b, const CakeCtx *c1,
                const CakeCtx *c2)
{
    if (!a || !b)
        return a == b;
    const Node *x = &k1->nodes[a], *y = &k2->nodes[b];
    if (x->op != y->op || x->sub != y->sub || x->dtype != y->dtype || x->lanes != y->lanes ||
        (x->flags & ~NF_PAREN) != (y->flags & ~NF_PAREN) || x->n != y->n ||
        strcmp(ir_symstr(c1, x->name), ir_symstr(c2, y->name)))
        return 0;
    if (x->op == OP_FLOAT ? !(x->v.f == y->v.f || (isnan(x->v.f) && isnan(y->v.f)))
                          : memcmp(&x->v, &y->v, sizeof x->v) != 0)
        return 0;
    if (!same(k1, x->a, k2, y->a, c1, c2) || !same(k1, x->b, k2, y->b, c1, c2) ||
        !same(k1, x->c, k2, y->c, c1, c2) || !same(k1, x->d, k2, y->d, c1, c2))
        return 0;
    for (uint32_t i = 0; i < x->n; i++)
        if (!same(k1, ir_list_at(k1, x, i), k2, ir_list_at(k2, y, i), c1, c2))
            return 0;
    return 1;
}

static void roundtrip_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *src = calloc(1, 1 << 20);
    size_t n = fread(src, 1, (1 << 20) - 1, f);
    fclose(f);
    src[n] = 0;
    CakeCtx *c1, *c2;
    Module *m1, *m2;
    char *p1 = reprint(src, &c1, &m1);
    char *p2 = reprint(p1, &c2, &m2);
    if (strcmp(p1, p2))
        fprintf(stderr, "%s: print is not a fixed point\n", path);
    assert_string_equal(p1, p2);
    assert_int_equal(m1->nkernels, m2->nkernels);
    for (uint32_t i = 0; i < m1->nkernels; i++) {
        const Kernel *k1 = m1->kernels[i], *k2 = m2->kernels[i];
        assert_int_equal(k1->nargs, k2->nargs);
        assert_int_equal(k1->ndims, k2->ndims);
        for (uint32_t j = 0; j < k1->nargs; j++)
            assert_true(same(k1, k1->args[j], k2, k2->args[j], c1, c2));
        if (!same(k1, k1->body, k2, k2->body, c1, c2))
            fprintf(stderr, "%s: the printed IR parses to a different tree\n", path);
        assert_true(same(k1, k1->body, k2, k2->body, c1, c2));
    }
    free(p1);
    free(p2);
    free(src);
    ctx_free(c1);
    ctx_free(c2);
}

static void roundtrip_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".tir"))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        CakeCtx *ctx = ctx_new();
        FILE *f = fopen(path, "rb");
        char buf[1 << 16];
        size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[len] = 0;
        parse_str(ctx, buf);
        int clean = ctx->nerrors == 0;
        ctx_free(ctx);
        if (clean) {  /* files with syntax errors are diagnostics tests */
            roundtrip_file(path);
            (*count)++;
        }
    }
    closedir(d);
}

static void test_roundtrip_examples(void **state)
{
    (void)state;
    int count = 0;
    roundtrip_dir(CAKE_SOURCE_DIR "/examples", &count);
    roundtrip_dir(CAKE_SOURCE_DIR "/tests/frontend/inputs", &count);
    roundtrip_dir(CAKE_SOURCE_DIR "/tests/frontend/corpus", &count);
    assert_true(count > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parens),
        cmocka_unit_test(test_roundtrip_examples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
