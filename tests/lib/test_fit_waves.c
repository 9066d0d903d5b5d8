/* test_fit_waves.c — the tiles family's fitted model (lib/lib_fit.c, docs/library.md
 * "The fitted model"): its f3 is the waves ceil(T / S), so a time made of a fixed cost
 * per wave is fitted exactly; where every tuned shape is one wave, f3 repeats the
 * constant and the fit drops f3 (not f1, the k-tiles) and still ranks by K; a fit predicts
 * only within LIB_FIT_SPAN of the dims it was fitted at (its span), a row variant within
 * LIB_FIT_SPAN_ROWS of its M and N. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "lib_priv.h"

/* a gemm op of dims M, N, K on 132 SMs and one tiles variant of 64 x 64 x 64 tiles */
static void setup(LibOp *op, LibVariant *v)
{
    memset(op, 0, sizeof *op);
    memset(v, 0, sizeof *v);
    op->fit_dim[0] = 0, op->fit_dim[1] = 1, op->fit_dim[2] = 2;
    lib_fit_set_sms(op, 132);
    v->fit.family = LIB_FIT_TILES;
    int64_t geo[LIB_GEO__COUNT] = {64, 64, 64, 1, 1, 1, 1};
    lib_fit_set_geometry(&v->fit, geo);
}

/* the time the test's device takes: 3 us, 0.1 us a k-tile of a wave, 1.5 us a wave */
static double made_up(const int64_t *d)
{
    double m = (double)d[0], n = (double)d[1], k = (double)d[2];
    double waves = ceil(ceil(m / 64.0) * ceil(n / 64.0) / 132.0 - 1e-12);
    return 0.003 + 1e-4 * waves * ceil(k / 64.0) + 0.0015 * waves;
}

static void test_waves_fitted(void **state)
{
    (void)state;
    LibOp op;
    LibVariant v;
    setup(&op, &v);
    static const int64_t at[][3] = {{64, 64, 640}, {8448, 64, 64}, {8448, 128, 1280}, {4096, 4096, 512},
                                    {1000, 3000, 2048}, {12000, 600, 832}, {64, 8448, 4096},
                                    {3000, 3000, 64}, {20000, 20, 4000}, {640, 6400, 128}};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        lib_fit_add(&op, &v, at[i], made_up(at[i]));
    lib_fit_solve(&v);
    assert_true(v.fit.ok);
    assert_true(fabs(v.fit.coef[3] - 0.0015) < 1e-7);   /* a wave's own cost */
    /* a shape it was not fitted at: 2.6 waves of 17 k-tiles */
    int64_t q[3] = {9000, 144, 1088};
    double t = lib_fit_predict(&op, &v, q);
    assert_true(fabs(t - made_up(q)) < 1e-3 * made_up(q));
}

static void test_one_wave_keeps_ktiles(void **state)
{
    (void)state;
    LibOp op;
    LibVariant v;
    setup(&op, &v);
    /* every shape one wave (at most 132 tiles): f3 is 1 everywhere, the constant's twin */
    static const int64_t at[][3] = {{64, 64, 64}, {64, 640, 640}, {640, 64, 1280}, {128, 512, 2048},
                                    {704, 704, 4096}, {64, 2048, 8192}, {300, 300, 320}, {100, 900, 6000}};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        lib_fit_add(&op, &v, at[i], made_up(at[i]));
    lib_fit_solve(&v);
    assert_true(v.fit.ok);
    assert_true(v.fit.coef[1] > 0);       /* the k-tiles kept */
    assert_true(v.fit.coef[3] == 0);      /* the waves dropped */
    int64_t a[3] = {256, 256, 1024}, b[3] = {256, 256, 8192};
    assert_true(lib_fit_predict(&op, &v, a) < lib_fit_predict(&op, &v, b));
}

/* a fit predicts only within LIB_FIT_SPAN of the dims it was fitted at (docs/library.md,
   "The fit's span"): fitted at N of 8 .. 88 only (as the narrow-N variants were), it does
   not rank itself at N = 8192, where it was never timed */
static void test_span_bounds_prediction(void **state)
{
    (void)state;
    LibOp op;
    LibVariant v;
    setup(&op, &v);
    static const int64_t at[][3] = {{400, 8, 96}, {900, 16, 256}, {2000, 24, 512}, {4000, 40, 1024},
                                    {8000, 48, 2048}, {12000, 64, 4096}, {600, 80, 7952}, {14870, 88, 128}};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        lib_fit_add(&op, &v, at[i], made_up(at[i]));
    lib_fit_solve(&v);
    assert_true(v.fit.ok);
    assert_int_equal(v.fit.span[0][0], 400);
    assert_int_equal(v.fit.span[0][1], 14870);
    assert_int_equal(v.fit.span[1][0], 8);
    assert_int_equal(v.fit.span[1][1], 88);
    int64_t inside[3] = {3000, 56, 900}, near[3] = {200, 176, 15904};
    int64_t wide[3] = {3000, 177, 900}, few[3] = {199, 56, 900}, short_k[3] = {3000, 56, 47};
    assert_true(lib_fit_predict(&op, &v, inside) > 0);
    assert_true(lib_fit_predict(&op, &v, near) > 0);     /* within the factor in every dim */
    assert_true(lib_fit_predict(&op, &v, wide) < 0);     /* N past 2 x 88 */
    assert_true(lib_fit_predict(&op, &v, few) < 0);      /* M under 400 / 2 */
    assert_true(lib_fit_predict(&op, &v, short_k) < 0);  /* K under 96 / 2 */
    /* a fit read from an artifact without a span (0) is unbounded */
    memset(v.fit.span, 0, sizeof v.fit.span);
    assert_true(lib_fit_predict(&op, &v, wide) > 0);
}

/* the row family's span (LIB_FIT_SPAN_ROWS, M and N): a block-per-row variant timed at M of 13
   .. 45 only (all one wave, as layernorm's leanb1024_v1_n8192 was in session 9's fold) has no
   prediction at M = 16384, where its waves were never seen */
static void test_rows_span(void **state)
{
    (void)state;
    LibOp op;
    LibVariant v;
    memset(&op, 0, sizeof op);
    memset(&v, 0, sizeof v);
    op.fit_dim[0] = 0, op.fit_dim[1] = op.fit_dim[2] = 1;
    lib_fit_set_sms(&op, 132);
    v.fit.family = LIB_FIT_ROWS;
    v.fit.wins = 1;
    int64_t geo[LIB_GEO__COUNT] = {1, 1, 1024, 1, 2, 1, 1};   /* rows, chunk, TPR, parts, resident */
    lib_fit_set_geometry(&v.fit, geo);
    static const int64_t at[][2] = {{13, 2600}, {20, 3300}, {28, 4100}, {37, 5000}, {45, 5800}};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        lib_fit_add(&op, &v, at[i], 0.004 + 1e-7 * (double)at[i][1]);
    lib_fit_solve(&v);
    assert_true(v.fit.ok);
    assert_int_equal(v.fit.span[0][0], 13);
    assert_int_equal(v.fit.span[0][1], 45);
    int64_t inside[2] = {180, 4000}, long_m[2] = {16384, 4096}, past[2] = {181, 4000};
    int64_t long_n[2] = {30, 23201}, short_n[2] = {30, 649};
    assert_true(lib_fit_predict(&op, &v, inside) > 0);    /* 4 x 45 */
    assert_true(lib_fit_predict(&op, &v, long_m) < 0);
    assert_true(lib_fit_predict(&op, &v, past) < 0);
    assert_true(lib_fit_predict(&op, &v, long_n) < 0);    /* N past 4 x 5800 */
    assert_true(lib_fit_predict(&op, &v, short_n) < 0);   /* N under 2600 / 4 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_waves_fitted),
        cmocka_unit_test(test_one_wave_keeps_ktiles),
        cmocka_unit_test(test_span_bounds_prediction),
        cmocka_unit_test(test_rows_span),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
