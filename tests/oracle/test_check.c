/* test_check.c — the comparison, and check_run / check_suite with fake devices. */
#include "oracle_util.h"

static const char *VADD =
    "kernel vadd<VEC = 4>\n  arg x: global f32[N]\n  arg y: global f32[N]\n  arg z: global f32[N]\n"
    "  grid [cdiv(N, 256 * VEC)]\n  threads 256\n  assume N % VEC == 0\n  shape N = 1048576\n{\n"
    "  reference { z[i] = x[i] + y[i] }\n}\n";

static const char *NORM =
    "kernel norm\n  arg x: global bf16[M, N]\n  arg w: global bf16[N]\n  arg y: global bf16[M, N]\n"
    "  arg eps: f32\n  grid [M]\n  threads 256\n  assume N % 8 == 0\n{\n"
    "  reference {\n    for m in 0 .. M {\n"
    "      let r = rsqrt(sum(n in 0 .. N, f32(x[m, n])^2) / N + eps)\n"
    "      for n in 0 .. N { y[m, n] = bf16(f32(x[m, n]) * r * f32(w[n])) }\n    }\n  }\n}\n";

/* a 2x3 f32 tensor and its encoded device copy */
static void mk(HostTensor *t, float *got, const double *want)
{
    memset(t, 0, sizeof *t);
    t->dtype = DT_F32;
    t->rank = 2;
    t->shape[0] = 2;
    t->shape[1] = 3;
    t->stride[0] = 3;
    t->stride[1] = 1;
    t->n = t->span = 6;
    t->data = (double *)want;
    for (int i = 0; i < 6; i++)
        got[i] = (float)want[i];
}

static void test_compare(void **state)
{
    (void)state;
    double want[6] = {1, -2, 3, 0.5, 4, -8};
    float got[6];
    HostTensor t;
    CheckOutput o;
    double rtol, atol;
    check_tolerance(DT_F32, 0, 1, &rtol, &atol);
    assert_true(rtol == 1e-5 && atol == 1e-5);

    mk(&t, got, want);
    assert_true(check_compare(&t, got, rtol, atol, 0, &o));
    assert_int_equal(o.n_compared, 6);
    assert_true(o.max_abs_err == 0 && o.want_max_abs == 8);

    got[4] = 4.00003f; /* err 3e-5 <= 1e-5*4 + 1e-5*8: within the bound */
    assert_true(check_compare(&t, got, rtol, atol, 0, &o));
    assert_true(o.max_ratio > 0 && o.max_ratio <= 1);

    got[4] = 4.001f;   /* over the bound */
    assert_false(check_compare(&t, got, rtol, atol, 0, &o));
    assert_int_equal(o.bad, CHECK_BAD_VALUE);
    assert_int_equal(o.first_bad[0], 1);
    assert_int_equal(o.first_bad[1], 1);
    assert_int_equal(o.n_bad, 1);

    mk(&t, got, want);
    got[2] = NAN;      /* NaN never passes */
    assert_false(check_compare(&t, got, rtol, atol, 0, &o));
    assert_int_equal(o.bad, CHECK_BAD_NAN);
    assert_int_equal(o.first_bad[0], 0);
    assert_int_equal(o.first_bad[1], 2);

    mk(&t, got, want);
    memset(&got[5], check_poison_byte(DT_F32), 4); /* still the poison: unwritten */
    assert_false(check_compare(&t, got, rtol, atol, 0, &o));
    assert_int_equal(o.bad, CHECK_BAD_UNWRITTEN);
    assert_int_equal(o.n_unwritten, 1);

    /* NaN in the reference fails too */
    double wnan[6] = {1, 2, NAN, 4, 5, 6};
    mk(&t, got, wnan);
    assert_false(check_compare(&t, got, rtol, atol, 0, &o));

    /* elements the reference never wrote are skipped */
    mk(&t, got, want);
    uint8_t written[6] = {1, 1, 1, 1, 1, 0};
    t.written = written;
    got[5] = 123;
    assert_true(check_compare(&t, got, rtol, atol, 0, &o));
    assert_int_equal(o.n_skipped, 1);

    /* integers are exact */
    int32_t gi[3] = {1, 2, 4};
    double wi[3] = {1, 2, 3};
    HostTensor ti = {DT_I32, 1, {3}, {1}, 3, 3, wi, NULL, NULL};
    check_tolerance(DT_I32, 100, 1, &rtol, &atol);
    assert_false(check_compare(&ti, gi, rtol, atol, 0, &o));
    gi[2] = 3;
    assert_true(check_compare(&ti, gi, rtol, atol, 0, &o));
    /* an approximate cosine near its zero (difftest seed 810): 2e-7 off a value of
       5.5e-4 fails the relative f32 bound and passes the 2^-20 absolute floor */
    double wc[1] = {-5.5374e-4};
    float gc[1] = {-5.5354e-4f};
    HostTensor tc = {DT_F32, 1, {1}, {1}, 1, 1, wc, NULL, NULL};
    check_tolerance(DT_F32, 0, 1, &rtol, &atol);
    assert_false(check_compare(&tc, gc, rtol, atol, 0, &o));
    assert_true(check_compare(&tc, gc, rtol, atol, 0x1p-20, &o));

    /* bf16 bound: 2 ulps relative plus 2^-7 of the largest */
    check_tolerance(DT_BF16, 0, 1, &rtol, &atol);
    assert_true(rtol == 0x1p-6 && atol == 0x1p-7);
}

static void test_random_inputs(void **state)
{
    (void)state;
    double d[4096];
    HostTensor t = {DT_BF16, 1, {4096}, {1}, 4096, 4096, d, NULL, NULL};
    check_fill_random(&t, 42, NULL);
    double lo = 1, hi = -1;
    for (int i = 0; i < 4096; i++) {
        assert_true(d[i] != 0);
        assert_true(d[i] >= -1 && d[i] <= 1);
        assert_true(interp_round(DT_BF16, d[i]) == d[i]);
        lo = fmin(lo, d[i]);
        hi = fmax(hi, d[i]);
    }
    assert_true(lo < -0.9 && hi > 0.9);
    double e[4096];
    HostTensor t2 = t;
    t2.data = e;
    check_fill_random(&t2, 42, NULL);
    assert_memory_equal(d, e, sizeof d); /* same seed, same data */
    t.dtype = DT_I8;
    check_fill_random(&t, 7, NULL);
    for (int i = 0; i < 4096; i++)
        assert_true(d[i] != 0 && d[i] >= -8 && d[i] <= 8);
}

static void test_check_run(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx, NORM);
    ShapeEnv e = shape_of(ctx, k, "M=3, N=1000");
    CheckReport r;
    FakeDev good = {0, 0, -1, 0, 0};
    assert_int_equal(check_run(ctx, k, &e, fake_device, &good, &r), CHECK_PASS);
    assert_true(r.ok);
    assert_int_equal(good.calls, 1);
    assert_int_equal(r.noutputs, 1);
    assert_string_equal(r.out[0].name, "y");
    assert_int_equal(r.out[0].n_compared, 3000);
    assert_true(r.cost.flops > 0 && r.cost.bytes == 2.0 * (3000 + 1000 + 3000));
    assert_string_equal(r.shape, "M=3, N=1000");
    assert_int_equal(ctx->nerrors, 0);

    FakeDev off = {0.05, 0, -1, 0, 0};
    assert_int_equal(check_run(ctx, k, &e, fake_device, &off, &r), CHECK_FAIL);
    assert_int_equal(r.out[0].bad, CHECK_BAD_VALUE);
    assert_int_equal(r.first_bad_output, 0);
    assert_true(has_diag(ctx, E0957));

    FakeDev tail = {0, 8, -1, 0, 0}; /* a kernel that misses the ragged edge */
    assert_int_equal(check_run(ctx, k, &e, fake_device, &tail, &r), CHECK_FAIL);
    assert_true(r.unwritten);
    assert_int_equal(r.out[0].n_unwritten, 8);
    assert_int_equal(r.out[0].first_bad[0], 2);
    assert_int_equal(r.out[0].first_bad[1], 992);
    assert_true(has_diag(ctx, E0958));

    FakeDev nan = {0, 0, 17, 0, 0};
    assert_int_equal(check_run(ctx, k, &e, fake_device, &nan, &r), CHECK_FAIL);
    assert_true(r.has_nan);
    assert_true(has_diag(ctx, E0959));

    FakeDev dead = {0, 0, -1, 1, 0};
    assert_int_equal(check_run(ctx, k, &e, fake_device, &dead, &r), CHECK_DEVICE_ERROR);
    assert_non_null(strstr(r.message, "ILLEGAL_ADDRESS"));
    assert_true(has_diag(ctx, E0962));

    /* a shape that violates an assume */
    ShapeEnv bad = shape_of(ctx, k, "M=3, N=1001");
    assert_int_equal(check_run(ctx, k, &bad, fake_device, &good, &r), CHECK_ERROR);
    assert_true(has_diag(ctx, E0961));
    /* a missing dim */
    ShapeEnv part = shape_of(ctx, k, "M=3");
    assert_int_equal(check_run(ctx, k, &part, fake_device, &good, &r), CHECK_ERROR);
    assert_true(has_diag(ctx, E0953));
    ctx_free(ctx);
}

static void test_reference_from_other_kernel(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *task = parse_kernel(ctx, VADD);
    /* the agent's kernel claims z = x - y; the task's reference says x + y */
    Kernel *mine = parse_kernel(ctx,
        "kernel vadd2\n  arg x: global f32[N]\n  arg y: global f32[N]\n  arg z: global f32[N]\n"
        "  grid [cdiv(N, 256)]\n  threads 256\n{\n  reference { z[i] = x[i] - y[i] }\n}\n");
    ShapeEnv e = shape_of(ctx, mine, "N=100");
    CheckOptions opt;
    memset(&opt, 0, sizeof opt);
    opt.reference = task;
    opt.no_diags = 1;
    FakeDev dev = {0, 0, -1, 0, 0}; /* runs mine's own (wrong) reference as the "device" */
    CheckReport r;
    assert_int_equal(check_run_ex(ctx, mine, &e, fake_device, &dev, &opt, &r), CHECK_FAIL);
    assert_int_equal(check_run(ctx, mine, &e, fake_device, &dev, &r), CHECK_PASS);

    Kernel *other = parse_kernel(ctx,
        "kernel v3\n  arg x: global f32[N]\n  arg y: global f16[N]\n  arg z: global f32[N]\n"
        "  grid [N]\n  threads 32\n{\n  reference { z[i] = x[i] }\n}\n");
    assert_int_equal(check_run_ex(ctx, other, &e, fake_device, &dev, &opt, &r), CHECK_ERROR);
    assert_true(has_diag(ctx, E0956));
    ctx_free(ctx);
}

static void test_suite(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx, VADD);
    CheckReport reps[8];
    FakeDev good = {0, 0, -1, 0, 0};
    uint32_t n = suite_expect(ctx, k, &good, reps, 8, 5, CHECK_PASS);
    int ragged = 0;
    for (uint32_t i = 0; i < n; i++) {
        int64_t N = 0;
        assert_true(shape_env_get(&reps[i].env, ir_intern_cstr(ctx, "N"), &N));
        assert_int_equal(N % 4, 0);
        ragged |= N % 1024 != 0;
    }
    assert_true(ragged);
    FakeDev tail = {0, 4, -1, 0, 0};
    suite_expect(ctx, k, &tail, reps, 8, 5, CHECK_FAIL);
    ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_random_inputs),
        cmocka_unit_test(test_check_run),
        cmocka_unit_test(test_reference_from_other_kernel),
        cmocka_unit_test(test_suite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
