/* test_prepare_align.c — a launch is prepared only on tensor bases the kernel
 * ABI allows (every base 16-byte aligned, more where an `align` clause asks):
 * cake_prepare and cake_prepared_rebind refuse a misaligned base with exit 1
 * and E0975 at the tensor argument, and a refused rebind keeps the launch's
 * earlier binding. Runs on the stand-in HIP runtime (CAKE_FAKE_HIP, set by
 * ctest), so it needs no GPU; skips without it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "cake.h"

#define RMSNORM CAKE_SOURCE_DIR "/examples/rmsnorm.tir"

static const Diag *find_diag(const CakeCtx *ctx, DiagCode code)
{
    for (uint32_t i = 0; i < ctx->ndiags; i++)
        if (ctx->diags[i].code == code)
            return &ctx->diags[i];
    return NULL;
}

static void clear_diags(CakeCtx *ctx)
{
    ctx->ndiags = ctx->nerrors = ctx->nwarnings = 0;
}

static void test_misaligned_base_refused(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    CakeKernel ck;
    assert_int_equal(cake_compile_file(ctx, RMSNORM, NULL, TG_GFX942, NULL, &ck), 0);
    RtDevice *dev = NULL;
    char err[256];
    assert_int_equal(rt_open(RT_HIP, 0, &dev, err, sizeof err), RT_OK);
    assert_int_equal(cake_load(ctx, dev, &ck), 0);
    ShapeEnv env;
    assert_int_equal(cake_parse_bindings(ctx, ck.k, NULL, "M=64,N=1024", &env), 1);
    float eps = 1e-6f;
    const void *scalars[] = {&eps};
    RtPtr good[] = {0x10000, 0x50000, 0x90000}, bad[] = {0x10000, 0x50002, 0x90000};

    CakePrepared p;
    clear_diags(ctx);
    assert_int_equal(cake_prepare(ctx, &ck, &env, bad, scalars, &p), 1);
    const Diag *d = find_diag(ctx, E0975);
    assert_non_null(d);
    assert_non_null(strstr(d->msg, "`w`"));
    assert_non_null(strstr(d->msg, "0x50002"));
    assert_non_null(strstr(d->msg, "16 bytes"));

    clear_diags(ctx);
    assert_int_equal(cake_prepare(ctx, &ck, &env, good, scalars, &p), 0);
    assert_int_equal(ctx->nerrors, 0);
    assert_int_equal(cake_prepared_rebind(ctx, &ck, &p, bad, scalars), 1);
    assert_non_null(find_diag(ctx, E0975));
    assert_int_equal(p.ptrs[1], 0x50000);   /* the earlier binding stands */
    cake_prepared_free(&p);
    cake_unload(&ck);
    rt_close(dev);
    ctx_free(ctx);
}

int main(void)
{
    const char *fake = getenv("CAKE_FAKE_HIP");
    if (!fake || !*fake) {
        printf("skip: the stand-in HIP runtime is not built (CAKE_FAKE_HIP)\n");
        return 77;
    }
    setenv("CAKE_LIBHIP", fake, 1);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_misaligned_base_refused)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
