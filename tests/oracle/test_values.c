/* test_values.c — `values LO .. HI` on integer arguments: `run --check` draws
 * them in [LO, HI), so a reference that indexes with them stays in bounds;
 * `offsets LO .. HI`: sequence boundaries with long, short, empty and unsorted
 * sequences; `tolerance X` on an output. */
#include "oracle_util.h"

/* cross-entropy: loads target[b] and indexes logits[b, target[b]] */
#define XENT(RANGE, ASSUME)                                                                       \
    "kernel xent\n  arg logits: global f32[B, V]\n  arg target: global i32[B]" RANGE "\n"         \
    "  arg loss: global f32[B]\n  grid [B]\n  threads 32\n" ASSUME "{\n  reference {\n"           \
    "    for b in 0 .. B {\n      let mx = max(v in 0 .. V, logits[b, v])\n"                     \
    "      loss[b] = f32(mx + log(sum(v in 0 .. V, exp(logits[b, v] - mx))) - logits[b, target[b]])\n" \
    "    }\n  }\n}\n"

static void test_fill_range(void **state)
{
    (void)state;
    double d[4096];
    HostTensor t = {DT_I32, 1, {4096}, {1}, 4096, 4096, d, NULL, NULL};
    check_fill_range(&t, 5, 0, 7);
    int seen[7] = {0};
    for (int i = 0; i < 4096; i++) {
        assert_true(d[i] >= 0 && d[i] < 7 && d[i] == floor(d[i]));
        seen[(int)d[i]]++;
    }
    for (int v = 0; v < 7; v++)
        assert_true(seen[v] > 0); /* zero and the last value HI - 1 included */
    check_fill_range(&t, 5, -3, -2);
    for (int i = 0; i < 4096; i++)
        assert_true(d[i] == -3);
}

/* B = 6 sequences in 1000 rows: short first, long ones at the odd places, short at
 * 2, the boundary of place 4 stepping back (unsorted), the last one ending at 1000;
 * B = 9: an empty one at 8 */
static void test_fill_offsets(void **state)
{
    (void)state;
    double d[7];
    HostTensor t = {DT_I32, 1, {7}, {1}, 7, 7, d, NULL, NULL};
    check_fill_offsets(&t, 9, 0, 1001);
    assert_true(d[0] == 0 && d[6] == 1000);
    int64_t len[6];
    for (int b = 0; b < 6; b++) {
        assert_true(d[b + 1] >= 0 && d[b + 1] <= 1000 && d[b + 1] == floor(d[b + 1]));
        len[b] = (int64_t)(d[b + 1] - d[b]);
    }
    assert_true(len[0] >= 1 && len[0] <= 1000 / 24);        /* short, not at row 0 long */
    assert_true(len[1] >= 128 && len[3] >= 128 && len[5] >= 128); /* long: several blocks */
    assert_true(len[2] >= 1 && len[2] <= 1000 / 24);        /* short after a long one */
    assert_true(len[4] < 0);                                 /* unsorted: steps back */
    double f[10];
    HostTensor v = {DT_I32, 1, {10}, {1}, 10, 10, f, NULL, NULL};
    check_fill_offsets(&v, 9, 0, 1001);
    assert_true(f[9] == f[8] && f[0] == 0);                  /* place 8 empty, ends the rows */
    double e[3];
    HostTensor u = {DT_I32, 1, {3}, {1}, 3, 3, e, NULL, NULL};
    check_fill_offsets(&u, 9, 0, 301);                       /* B = 2: short, long */
    assert_true(e[0] == 0 && e[1] >= 1 && e[1] < 40 && e[2] == 300);
}

#define SEQS                                                                                      \
    "kernel seqsum\n  arg x: global f32[T]\n  arg cu: global i32[B1] offsets 0 .. T + 1\n"      \
    "  arg y: global f32[B1]\n  grid [B1]\n  threads 32\n  assume B1 >= 2\n{\n"                 \
    "  reference {\n    for b in 0 .. B1 - 1 {\n"                                               \
    "      y[b] = f32(sum(i in cu[b] .. max(cu[b + 1], cu[b]), x[i]))\n    }\n  }\n}\n"

/* the cost estimate reads offsets as evenly spaced boundaries: (T / B) rows each */
static void test_offsets_cost(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx, SEQS);
    ShapeEnv e = shape_of(ctx, k, "T=1000, B1=5");
    Interp *I = interp_new(ctx, k);
    InterpCost c;
    assert_true(interp_cost(I, &e, &c));
    assert_true(c.flops >= 900 && c.flops <= 1100);          /* 4 sequences of 250 */
    interp_free(I);
    CheckReport reps[8];
    FakeDev good = {0, 0, -1, 0, 0};
    suite_expect(ctx, k, &good, reps, 8, 1, CHECK_PASS);
    assert_int_equal(ctx->nerrors, 0);
    ctx_free(ctx);
}

#define SCALED(TOL)                                                                               \
    "kernel scaled\n  arg x: global f32[N]\n  arg y: global f32[N]" TOL "\n  grid [N]\n"         \
    "  threads 32\n{\n  reference { y[n] = x[n] * 2.0 }\n}\n"

/* an error of 1e-4 of the largest output: over the f32 bound (2e-5 in all), within
 * it times `tolerance 256`; a whole wrong value still fails at 256 */
static void test_tolerance(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *plain = parse_kernel(ctx, SCALED(""));
    Kernel *tol = parse_kernel(ctx, SCALED(" tolerance 256"));
    assert_true(ir_arg_tolerance(tol, 1) == 256 && ir_arg_tolerance(tol, 0) == 0);
    ShapeEnv e = shape_of(ctx, plain, "N=1000");
    CheckReport r;
    FakeDev off = {2e-4, 0, -1, 0, 0}, wrong = {0.5, 0, -1, 0, 0};
    assert_int_equal(check_run(ctx, plain, &e, fake_device, &off, &r), CHECK_FAIL);
    ctx->nerrors = ctx->ndiags = 0;
    e = shape_of(ctx, tol, "N=1000");
    assert_int_equal(check_run(ctx, tol, &e, fake_device, &off, &r), CHECK_PASS);
    assert_int_equal(check_run(ctx, tol, &e, fake_device, &wrong, &r), CHECK_FAIL);
    ctx_free(ctx);
}

static void test_check_uses_range(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx, XENT(" values 0 .. V", "  assume V >= 1\n"));
    ShapeEnv e = shape_of(ctx, k, "B=64, V=37");
    int64_t lo, hi;
    assert_int_equal(check_arg_values(ctx, k, 1, &e, &lo, &hi), 1);
    assert_true(lo == 0 && hi == 37);
    assert_int_equal(check_arg_values(ctx, k, 0, &e, &lo, &hi), -1);
    CheckReport r;
    FakeDev good = {0, 0, -1, 0, 0};
    assert_int_equal(check_run(ctx, k, &e, fake_device, &good, &r), CHECK_PASS);
    assert_int_equal(ctx->nerrors, 0);
    /* the whole suite of picked shapes too */
    CheckReport reps[8];
    suite_expect(ctx, k, &good, reps, 8, 1, CHECK_PASS);
    assert_int_equal(ctx->nerrors, 0);
    ctx_free(ctx);
}

static void test_without_range_the_reference_fails(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx, XENT("", ""));
    ShapeEnv e = shape_of(ctx, k, "B=64, V=37");
    CheckReport r;
    FakeDev good = {0, 0, -1, 0, 0};
    assert_int_equal(check_run(ctx, k, &e, fake_device, &good, &r), CHECK_ERROR);
    assert_true(has_diag(ctx, E0952)); /* target drawn in [-8, 8]: negative indices */
    ctx_free(ctx);
}

static void test_empty_range(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx, XENT(" values 0 .. V", ""));
    ShapeEnv e = shape_of(ctx, k, "B=4, V=0");
    CheckReport r;
    FakeDev good = {0, 0, -1, 0, 0};
    assert_int_equal(check_run(ctx, k, &e, fake_device, &good, &r), CHECK_ERROR);
    assert_true(has_diag(ctx, E0124));
    assert_int_equal(good.calls, 0);
    ctx_free(ctx);
}

/* examples/cross_entropy.tir: its reference runs on the drawn targets at the
 * picked shapes and at a sampled large one */
static void test_example(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/examples/cross_entropy.tir", CAKE_SOURCE_DIR);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char src[1 << 16];
    size_t n = fread(src, 1, sizeof src - 1, f);
    fclose(f);
    src[n] = 0;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx, src);
    CheckReport reps[8];
    FakeDev good = {0, 0, -1, 0, 0};
    suite_expect(ctx, k, &good, reps, 8, 3, CHECK_PASS);
    ShapeEnv big = shape_of(ctx, k, "B=64, V=1000");
    CheckOptions o;
    memset(&o, 0, sizeof o);
    o.sample = 1;
    o.sample_flops = 20000; /* a few rows */
    assert_int_equal(check_run_ex(ctx, k, &big, fake_device, &good, &o, &reps[0]), CHECK_PASS);
    assert_true(reps[0].sample.on && reps[0].sample.count < 64);
    assert_int_equal(ctx->nerrors, 0);
    ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_range),
        cmocka_unit_test(test_fill_offsets),
        cmocka_unit_test(test_offsets_cost),
        cmocka_unit_test(test_tolerance),
        cmocka_unit_test(test_check_uses_range),
        cmocka_unit_test(test_without_range_the_reference_fails),
        cmocka_unit_test(test_empty_range),
        cmocka_unit_test(test_example),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
