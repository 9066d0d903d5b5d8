/* test_shapes.c — test shapes: assumes honoured, ragged ones, small enough. */
#include "oracle_util.h"

static int64_t get(CakeCtx *ctx, const ShapeEnv *e, const char *name)
{
    int64_t v = -1;
    assert_true(shape_env_get(e, ir_intern_cstr(ctx, name), &v));
    return v;
}

static void test_assume_divisible(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx,
        "kernel rows<VEC = 8, THREADS = 256>\n  arg x: global bf16[M, N]\n  arg y: global bf16[M, N]\n"
        "  grid [M]\n  threads THREADS\n  assume N % 8 == 0\n  assume N <= THREADS * VEC * 4\n"
        "  shape M = 16384, N = 8192\n{\n  reference { y[m, n] = x[m, n] }\n}\n");
    Interp *I = interp_new(ctx, k);
    ShapeEnv base, out[8];
    shape_env_clear(&base);
    uint32_t n = shapes_pick(ctx, k, I, &base, NULL, out, 8);
    assert_true(n >= 5);
    int ragged = 0, big = 0;
    for (uint32_t i = 0; i < n; i++) {
        int64_t M = get(ctx, &out[i], "M"), N = get(ctx, &out[i], "N");
        assert_true(M >= 1 && N >= 8);
        assert_int_equal(N % 8, 0);
        assert_true(N <= 8192);
        assert_true((double)M * (double)N * 2 <= 0x1p22);
        assert_true(shape_env_assumes_hold(ctx, k, &out[i], 0, NULL));
        ragged |= N % 2048 != 0;   /* not a multiple of THREADS * VEC */
        big |= N > 2048;           /* more than one pass of the block over the row */
        for (uint32_t j = 0; j < i; j++)
            assert_false(get(ctx, &out[j], "M") == M && get(ctx, &out[j], "N") == N);
    }
    assert_true(ragged && big);
    /* parameters are bound too */
    assert_int_equal(get(ctx, &out[0], "VEC"), 8);
    interp_free(I);
    ctx_free(ctx);
}

static void test_tiles_and_pins(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx,
        "kernel gemm<BM = 128, BN = 128, BK = 32>\n  arg A: global bf16[M, K]\n  arg B: global bf16[N, K]\n"
        "  arg C: global bf16[M, N]\n  grid [cdiv(N, BN), cdiv(M, BM)]\n  warps 4\n  assume K % BK == 0\n{\n"
        "  reference { C[m, n] = bf16(sum(k in 0 .. K, f32(A[m, k]) * f32(B[n, k]))) }\n}\n");
    Interp *I = interp_new(ctx, k);
    ShapeEnv base = shape_of(ctx, k, "BM=64"), out[8];
    uint32_t n = shapes_pick(ctx, k, I, &base, NULL, out, 8);
    assert_true(n >= 5);
    int ragged_m = 0, many = 0;
    for (uint32_t i = 0; i < n; i++) {
        int64_t M = get(ctx, &out[i], "M"), N = get(ctx, &out[i], "N"), K = get(ctx, &out[i], "K");
        assert_int_equal(K % 32, 0);
        assert_int_equal(get(ctx, &out[i], "BM"), 64);   /* --set stays */
        /* one shape (many row tiles: grouped rasterization's partial last group) may
           cost four times the others' budget */
        int is_many = M > 16 * 64;
        many |= is_many;
        assert_true(2.0 * (double)M * (double)N * (double)K <= (is_many ? 0x1p28 : 0x1p26));
        ragged_m |= M % 64 != 0;
    }
    assert_true(ragged_m && many);
    /* a pinned dim stays */
    ShapeEnv pinned = shape_of(ctx, k, "K=64");
    n = shapes_pick(ctx, k, I, &pinned, NULL, out, 8);
    assert_true(n >= 3);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(get(ctx, &out[i], "K"), 64);
    interp_free(I);
    ctx_free(ctx);
}

static void test_impossible(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx,
        "kernel no\n  arg x: global f32[N]\n  grid [N]\n  threads 32\n  assume N > 10\n  assume N < 5\n{\n"
        "  reference { x[i] = 1.0 }\n}\n");
    ShapeEnv base, out[4];
    shape_env_clear(&base);
    assert_int_equal(shapes_pick(ctx, k, NULL, &base, NULL, out, 4), 0);
    CheckReport reps[4];
    FakeDev good = {0, 0, -1, 0, 0};
    assert_int_equal(check_suite(ctx, k, &base, NULL, fake_device, &good, reps, 4), 0);
    assert_true(has_diag(ctx, E0955));
    ctx_free(ctx);
}

static void test_env(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx,
        "kernel e<BM = 64, BN = BM * 2>\n  arg x: global f32[M, N] strides [1, M]\n  arg s: i32\n"
        "  grid [cdiv(M, BM)]\n  threads 128\n  shape M = 100, N = 7\n{\n  reference { x[m, n] = 1.0 }\n}\n");
    ShapeEnv e;
    char err[200];
    shape_env_clear(&e);
    assert_false(shape_env_parse(ctx, k, &e, "Q=3", err, sizeof err));
    assert_false(shape_env_parse(ctx, k, &e, "M", err, sizeof err));
    assert_true(shape_env_parse(ctx, k, &e, "M = 4_096; s=3", err, sizeof err));
    assert_int_equal(get(ctx, &e, "M"), 4096);
    shape_env_add_defaults(k, &e);
    assert_int_equal(get(ctx, &e, "M"), 4096);
    assert_int_equal(get(ctx, &e, "N"), 7);
    assert_true(shape_env_bind_params(ctx, k, &e));
    assert_int_equal(get(ctx, &e, "BN"), 128);
    int64_t g;
    assert_true(shape_eval_int(ctx, k, k->grid[0], &e, &g));
    assert_int_equal(g, 64);
    DType dt;
    int rank;
    int64_t shape[4], stride[4];
    assert_true(shape_arg_geometry(ctx, k, 0, &e, &dt, &rank, shape, stride));
    assert_int_equal(rank, 2);
    assert_int_equal(stride[0], 1);
    assert_int_equal(stride[1], 4096);
    char buf[128];
    assert_string_equal(shape_env_format(ctx, k, &e, buf, sizeof buf), "M=4096, N=7, s=3");
    ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_assume_divisible),
        cmocka_unit_test(test_tiles_and_pins),
        cmocka_unit_test(test_impossible),
        cmocka_unit_test(test_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
