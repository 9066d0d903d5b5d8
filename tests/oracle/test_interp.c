/* test_interp.c — the fp64 reference interpreter on hand-written TIR. */
#include <time.h>
#include "oracle_util.h"

static double val_small(uint32_t arg, int64_t j)
{
    return (double)((j * 7 + arg * 3) % 11) / 8.0 - 0.625;
}

static void test_vector_add(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx,
        "kernel vadd\n  arg x: global f32[N]\n  arg y: global f32[N]\n  arg z: global f32[N]\n"
        "  grid [cdiv(N, 256)]\n  threads 256\n{\n  reference { z[i] = x[i] + y[i] }\n}\n");
    Interp *I = interp_new(ctx, k);
    assert_non_null(I);
    assert_int_equal(interp_arg_role(I, 0), INTERP_READ);
    assert_int_equal(interp_arg_role(I, 1), INTERP_READ);
    assert_int_equal(interp_arg_role(I, 2), INTERP_WRITTEN);
    ShapeEnv e = shape_of(ctx, k, "N=37");
    HostTensor *t = make_args(ctx, k, &e, val_small);
    InterpCost c;
    assert_true(interp_run(I, &e, t, &c));
    for (int64_t j = 0; j < 37; j++)
        assert_true(t[2].data[j] == (double)(float)(t[0].data[j] + t[1].data[j]));
    assert_true(c.flops == 37);
    assert_true(c.bytes == 3 * 37 * 4);
    InterpCost est;
    assert_true(interp_cost(I, &e, &est));
    assert_true(est.flops == 37 && est.bytes == c.bytes);
    free_args(k, t);
    interp_free(I);
    ctx_free(ctx);
}

static void test_gemm_bf16(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx,
        "kernel gemm\n  arg A: global bf16[M, K]\n  arg B: global bf16[N, K]\n"
        "  arg C: global bf16[M, N]\n  grid [M]\n  threads 128\n{\n"
        "  reference { C[m, n] = bf16(sum(k in 0 .. K, f32(A[m, k]) * f32(B[n, k]))) }\n}\n");
    Interp *I = interp_new(ctx, k);
    assert_non_null(I);
    ShapeEnv e = shape_of(ctx, k, "M=5, N=7, K=33");
    HostTensor *t = make_args(ctx, k, &e, val_small);
    InterpCost c;
    assert_true(interp_run(I, &e, t, &c));
    for (int m = 0; m < 5; m++)
        for (int n = 0; n < 7; n++) {
            double s = 0;
            for (int kk = 0; kk < 33; kk++)
                s += t[0].data[m * 33 + kk] * t[1].data[n * 33 + kk];
            assert_true(t[2].data[m * 7 + n] == interp_round(DT_BF16, s));
        }
    assert_true(c.flops == 2.0 * 5 * 7 * 33);
    assert_true(c.sum_len == 33);
    assert_true(c.bytes == 2.0 * (5 * 33 + 7 * 33 + 5 * 7));
    free_args(k, t);

    /* speed: 256^3 well under a second (generous bound for loaded CI machines) */
    e = shape_of(ctx, k, "M=256, N=256, K=256");
    t = make_args(ctx, k, &e, val_small);
    clock_t t0 = clock();
    assert_true(interp_run(I, &e, t, NULL));
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    printf("# gemm 256^3 reference: %.3f s cpu\n", secs);
    if (!getenv("CAKE_NO_TIMING")) /* set it under valgrind */
        assert_true(secs < 3.0);
    free_args(k, t);
    interp_free(I);
    ctx_free(ctx);
}

static void test_softmax_lets_reductions(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx,
        "kernel sm\n  arg x: global f32[M, N]\n  arg y: global f32[M, N]\n  grid [M]\n  threads 32\n{\n"
        "  reference {\n    for m in 0 .. M {\n      let mx = max(n in 0 .. N, x[m, n])\n"
        "      let mn = min(n in 0 .. N, x[m, n])\n"
        "      let l = sum(n in 0 .. N, exp(x[m, n] - mx))\n"
        "      for n in 0 .. N { y[m, n] = select(mn < mx, exp(x[m, n] - mx) / l, 0.0) }\n"
        "    }\n  }\n}\n");
    Interp *I = interp_new(ctx, k);
    assert_non_null(I);
    ShapeEnv e = shape_of(ctx, k, "M=3, N=10");
    HostTensor *t = make_args(ctx, k, &e, val_small);
    assert_true(interp_run(I, &e, t, NULL));
    for (int m = 0; m < 3; m++) {
        double s = 0, mx = -INFINITY;
        for (int n = 0; n < 10; n++)
            mx = fmax(mx, t[0].data[m * 10 + n]);
        for (int n = 0; n < 10; n++)
            s += exp(t[0].data[m * 10 + n] - mx);
        double rowsum = 0;
        for (int n = 0; n < 10; n++) {
            double want = (double)(float)(exp(t[0].data[m * 10 + n] - mx) / s);
            assert_true(t[1].data[m * 10 + n] == want);
            rowsum += t[1].data[m * 10 + n];
        }
        assert_true(fabs(rowsum - 1) < 1e-6);
    }
    free_args(k, t);
    interp_free(I);
    ctx_free(ctx);
}

static void test_ints_casts_if_pow(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx,
        "kernel misc<D = 3>\n  arg a: global i32[N]\n  arg h: global f16[N]\n  arg o: global f32[N]\n"
        "  arg q: global i32[N]\n  grid [N]\n  threads 32\n{\n"
        "  reference {\n    for i in 0 .. N {\n"
        "      var acc: f32 = 0\n"
        "      if i % 2 == 0 { acc += f32(a[i]) ^ 2 } else { acc -= 1.5 }\n"
        "      o[i] = acc + f32(h[i])\n"
        "      q[i] = a[i] / D + (-7) % D + i32(2.9) + i32(-2.9)\n"
        "    }\n  }\n}\n");
    Interp *I = interp_new(ctx, k);
    assert_non_null(I);
    ShapeEnv e = shape_of(ctx, k, "N=6");
    HostTensor *t = make_args(ctx, k, &e, NULL);
    int av[6] = {-7, 5, 4, -3, 10, 0};
    for (int i = 0; i < 6; i++) {
        t[0].data[i] = av[i];
        t[1].data[i] = interp_round(DT_F16, 0.1 * i);
    }
    assert_true(interp_run(I, &e, t, NULL));
    for (int i = 0; i < 6; i++) {
        double acc = i % 2 == 0 ? (double)av[i] * av[i] : -1.5;
        assert_true(t[2].data[i] == (double)(float)(acc + t[1].data[i]));
        /* C semantics: -7 / 3 = -2, -7 % 3 = -1; i32(2.9) = 2, i32(-2.9) = -2 */
        assert_true(t[3].data[i] == (double)(av[i] / 3 + (-7) % 3 + 2 - 2));
    }
    free_args(k, t);
    interp_free(I);
    ctx_free(ctx);
}

static void test_store_rounds_to_dtype(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx,
        "kernel r\n  arg x: global f32[N]\n  arg y: global bf16[N]\n  arg z: global f32[N]\n"
        "  grid [N]\n  threads 32\n{\n"
        "  reference {\n    y[i] = x[i] * 3.0\n    z[i] = f32(bf16(x[i] / 3.0))\n  }\n}\n");
    Interp *I = interp_new(ctx, k);
    assert_non_null(I);
    ShapeEnv e = shape_of(ctx, k, "N=9");
    HostTensor *t = make_args(ctx, k, &e, val_small);
    assert_true(interp_run(I, &e, t, NULL));
    for (int i = 0; i < 9; i++) {
        assert_true(t[1].data[i] == interp_round(DT_BF16, t[0].data[i] * 3.0));
        assert_true(t[2].data[i] == interp_round(DT_BF16, t[0].data[i] / 3.0));
    }
    free_args(k, t);
    interp_free(I);
    ctx_free(ctx);
}

static void test_local_array_and_triangle_cost(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx,
        "kernel tri\n  arg x: global f32[S, 4]\n  arg y: global f32[S]\n  grid [S]\n  threads 32\n{\n"
        "  reference {\n    for i in 0 .. S {\n      var sc: f64[S]\n"
        "      for j in 0 .. i + 1 { sc[j] = sum(d in 0 .. 4, x[i, d] * x[j, d]) }\n"
        "      y[i] = sum(j in 0 .. i + 1, sc[j])\n    }\n  }\n}\n");
    Interp *I = interp_new(ctx, k);
    assert_non_null(I);
    ShapeEnv e = shape_of(ctx, k, "S=13");
    HostTensor *t = make_args(ctx, k, &e, val_small);
    InterpCost c, est;
    assert_true(interp_run(I, &e, t, &c));
    for (int i = 0; i < 13; i++) {
        double s = 0;
        for (int j = 0; j <= i; j++)
            for (int d = 0; d < 4; d++)
                s += t[0].data[i * 4 + d] * t[0].data[j * 4 + d];
        assert_true(fabs(t[1].data[i] - s) < 1e-6 * (1 + fabs(s)));
    }
    /* triangular loops: the estimate (loop variables at mid-range) is exact */
    assert_true(interp_cost(I, &e, &est));
    assert_true(est.flops == c.flops);
    free_args(k, t);
    interp_free(I);
    ctx_free(ctx);
}

static void test_errors(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx,
        "kernel oob\n  arg x: global f32[N]\n  arg y: global f32[N]\n  grid [N]\n  threads 32\n{\n"
        "  reference { y[i] = x[i + 1] }\n}\n");
    Interp *I = interp_new(ctx, k);
    assert_non_null(I);
    ShapeEnv e = shape_of(ctx, k, "N=4");
    HostTensor *t = make_args(ctx, k, &e, val_small);
    assert_false(interp_run(I, &e, t, NULL));
    assert_true(has_diag(ctx, E0952));
    free_args(k, t);
    interp_free(I);
    ctx_free(ctx);

    ctx = ctx_new();
    k = parse_kernel(ctx,
        "kernel bad\n  arg x: global f32[N]\n  arg y: global f32[N]\n  grid [N]\n  threads 32\n{\n"
        "  reference { y[i] = x[i] + f32(thread.x) }\n}\n");
    assert_null(interp_new(ctx, k));
    assert_true(has_diag(ctx, E0951));
    ctx_free(ctx);

    ctx = ctx_new();
    k = parse_kernel(ctx,
        "kernel noref\n  arg x: global f32[N]\n  grid [N]\n  threads 32\n{\n  sync\n}\n");
    assert_null(interp_new(ctx, k));
    assert_true(has_diag(ctx, E0950));
    ctx_free(ctx);

    ctx = ctx_new();
    k = parse_kernel(ctx,
        "kernel div0\n  arg x: global i32[N]\n  arg y: global i32[N]\n  grid [N]\n  threads 32\n{\n"
        "  reference { y[i] = x[i] / (i - i) }\n}\n");
    I = interp_new(ctx, k);
    e = shape_of(ctx, k, "N=2");
    t = make_args(ctx, k, &e, val_small);
    assert_false(interp_run(I, &e, t, NULL));
    assert_true(has_diag(ctx, E0954));
    free_args(k, t);
    interp_free(I);
    ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vector_add),
        cmocka_unit_test(test_gemm_bf16),
        cmocka_unit_test(test_softmax_lets_reductions),
        cmocka_unit_test(test_ints_casts_if_pow),
        cmocka_unit_test(test_store_rounds_to_dtype),
        cmocka_unit_test(test_local_array_and_triangle_cost),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
