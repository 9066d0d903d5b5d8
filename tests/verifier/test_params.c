/* test_params.c — ver_kernel_bound (verifier/params.c): a kernel verified
 * under every combination of its parameters' declared values, the runs'
 * diagnostics merged (one per code, place and message) with a note naming
 * the values a diagnostic occurs under; --set bindings; the declarations
 * restored afterwards. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "fe.h"
#include "verify.h"
#include "consteval.h"

/* E0802 with N0 = 2 and with N0 = 4 (two messages), under C = 0 and C = 1 alike */
static const char *SRC =
    "kernel k<N0 = 4 in {2, 4}, C = 0 in 0 .. 2>\n"
    "  target sm_90a\n"
    "  arg x: global f32[M]\n"
    "  grid [cdiv(M, 128)]\n"
    "  threads 128\n"
    "{\n"
    "  shared t: f32[128 * N0]\n"
    "  t[thread.x + 128 * N0] = 1.0\n"
    "}\n";

static Kernel *parse(CakeCtx *ctx, const char *src)
{
    uint32_t file = ctx_add_file(ctx, "t.tir", src, (uint32_t)strlen(src));
    Module *m = fe_parse(ctx, file);
    fe_resolve(ctx, m);
    assert_int_equal(ctx->nerrors, 0);
    return m->kernels[0];
}

static int has_note(const Diag *d, const char *text)
{
    for (uint32_t i = 0; i < d->nnotes; i++)
        if (strstr(d->notes[i].msg, text))
            return 1;
    return 0;
}

static void merges_and_names_the_values(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse(ctx, SRC);
    NodeId dflt = k->nodes[k->params[0]].a;
    assert_int_equal(ver_kernel_bound(ctx, k, NULL), 2);   /* 4 runs, 2 distinct */
    assert_int_equal(ctx->ndiags, 2);
    int n2 = 0, n4 = 0;
    for (uint32_t i = 0; i < ctx->ndiags; i++) {
        assert_int_equal(ctx->diags[i].code, E0802);
        n2 += has_note(&ctx->diags[i], "only with N0=2");
        n4 += has_note(&ctx->diags[i], "only with N0=4");
        assert_false(has_note(&ctx->diags[i], "C="));        /* under every C: not named */
    }
    assert_int_equal(n2, 1);
    assert_int_equal(n4, 1);
    assert_int_equal(k->nodes[k->params[0]].a, dflt);       /* the default is restored */
    int64_t v;
    assert_true(ce_const_int(ctx, k, k->nodes[k->params[0]].a, &v));
    assert_int_equal(v, 4);
    ctx_free(ctx);
}

static void set_binds_one_instance(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse(ctx, SRC);
    CeBinding b = {ir_intern_cstr(ctx, "N0"), 2};
    CeEnv set = {.b = &b, .n = 1};
    VerBind vb = {.set = &set};
    assert_int_equal(ver_kernel_bound(ctx, k, &vb), 1);
    assert_true(strstr(ctx->diags[0].msg, "extent is 256") != NULL);
    assert_true(has_note(&ctx->diags[0], "with --set N0=2"));
    ctx_free(ctx);
}

static void set_outside_the_values_is_E0006(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse(ctx, SRC);
    CeBinding b = {ir_intern_cstr(ctx, "C"), 2};   /* the range 0 .. 2 excludes 2 */
    CeEnv set = {.b = &b, .n = 1};
    assert_int_equal(ver_set_allowed(ctx, k, &set), 0);
    assert_int_equal(ctx->ndiags, 1);
    assert_int_equal(ctx->diags[0].code, E0006);
    b.value = 1;
    assert_int_equal(ver_set_allowed(ctx, k, &set), 1);
    ctx_free(ctx);
}

/* a derived default: `--set S=2` with H = 64 binds S to 2, although S's default
 * gives 2 at H's default (128) and 3 at H = 64: the tile is S x 80 KiB, over the
 * shared limit at S = 3 only, so the bound instance is clean */
static const char *DERIVED =
    "kernel k<H = 128 in {64, 128}, S = 1 + 128 / H>\n"
    "  target sm_90a\n"
    "  arg x: global f32[M]\n"
    "  grid [cdiv(M, 128)]\n"
    "  threads 128\n"
    "{\n"
    "  shared t: f32[S * 256 * 80]\n"
    "  t[thread.x] = 1.0\n"
    "}\n";

static void set_binds_a_derived_param_at_its_default_value(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse(ctx, DERIVED);
    int64_t v;
    assert_false(ce_param_own_default(ctx, k, k->params[1], &v));   /* it names H */
    assert_true(ce_param_own_default(ctx, k, k->params[0], &v));
    assert_int_equal(v, 128);
    CeBinding b[2] = {{ir_intern_cstr(ctx, "H"), 64}, {ir_intern_cstr(ctx, "S"), 2}};
    CeEnv set = {.b = b, .n = 2};
    VerBind vb = {.set = &set};
    assert_int_equal(ver_kernel_bound(ctx, k, &vb), 0);   /* S = 2: 160 KiB, within the limit */
    assert_int_equal(ctx->nerrors, 0);
    assert_false(ver_binding_checked(ctx, k, &set));        /* check ran H = 64 at S = 3 only */
    b[1].value = 3;
    assert_true(ver_kernel_bound(ctx, k, &vb) > 0);         /* S = 3: 240 KiB, E0501 */
    assert_int_equal(ctx->diags[0].code, E0501);
    ctx_free(ctx);
}

static void clean_kernel_without_values_runs_once(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse(ctx, "kernel k<BM = 128>\n  target sm_90a\n  arg x: global f32[M]\n"
                           "  grid [cdiv(M, BM)]\n  threads 128\n{\n"
                           "  let i = block.x * BM + thread.x\n  store x[i] <- 1.0 mask i < M\n}\n");
    assert_int_equal(ver_kernel_bound(ctx, k, NULL), 0);
    assert_int_equal(ctx->ndiags, 0);
    ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(merges_and_names_the_values),
        cmocka_unit_test(set_binds_one_instance),
        cmocka_unit_test(set_outside_the_values_is_E0006),
        cmocka_unit_test(set_binds_a_derived_param_at_its_default_value),
        cmocka_unit_test(clean_kernel_without_values_runs_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
