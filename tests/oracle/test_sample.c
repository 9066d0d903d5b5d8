/* test_sample.c — `run --check` at large shapes: the reference evaluated for
 * a seeded sample of rows (or output tiles) only, inputs kept in their device
 * encoding, host memory bounded. */
#include <sys/resource.h>
#include "oracle_util.h"

static const char *NORM =
    "kernel norm\n  arg x: global bf16[M, N]\n  arg w: global bf16[N]\n  arg y: global bf16[M, N]\n"
    "  arg eps: f32\n  grid [M]\n  threads 256\n  assume N % 8 == 0\n{\n"
    "  reference {\n    for m in 0 .. M {\n"
    "      let r = rsqrt(sum(n in 0 .. N, f32(x[m, n])^2) / N + eps)\n"
    "      for n in 0 .. N { y[m, n] = bf16(f32(x[m, n]) * r * f32(w[n])) }\n    }\n  }\n}\n";

static const char *MM =
    "kernel mm\n  arg a: global f32[M, K]\n  arg b: global f32[K, N]\n  arg c: global f32[M, N]\n"
    "  grid [M]\n  threads 32\n{\n  reference { c[m, n] = sum(k in 0 .. K, a[m, k] * b[k, n]) }\n}\n";

/* a global sum: rows are not independent */
static const char *TOTAL =
    "kernel total\n  arg x: global f32[M, N]\n  arg y: global f32[M, N]\n  grid [M]\n  threads 32\n{\n"
    "  reference {\n    var s: f64 = 0\n    for m in 0 .. M { s += x[m, 0] }\n"
    "    for m in 0 .. M { for n in 0 .. N { y[m, n] = f32(x[m, n] / s) } }\n  }\n}\n";

/* ruins every element of every output in one row (storage element row * N) */
typedef struct { int64_t row, n; int calls; } RowSpoiler;

static int spoil_row(void *user, CakeCtx *ctx, CheckLaunch *l)
{
    RowSpoiler *rs = user;
    FakeDev good = {0, 0, -1, 0, 0};
    int rc = fake_device(&good, ctx, l);
    rs->calls++;
    for (uint32_t i = 0; i < l->nbufs; i++)
        if ((l->bufs[i].role & INTERP_WRITTEN) && l->bufs[i].is_tensor)
            for (int64_t j = 0; j < rs->n; j++)
                interp_encode(l->bufs[i].dtype, 1000.0,
                              (char *)l->bufs[i].host +
                                  (rs->row * rs->n + j) * interp_elem_bytes(l->bufs[i].dtype));
    return rc;
}

static CheckOptions sampled(double flops)
{
    CheckOptions o;
    memset(&o, 0, sizeof o);
    o.sample = 1;
    o.sample_flops = flops;
    o.no_diags = 1;
    return o;
}

static void test_rows(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx, NORM);
    ShapeEnv e = shape_of(ctx, k, "M=300, N=64");
    CheckOptions o = sampled(64 * 5 * 10); /* about 10 rows' work */
    CheckReport r;
    FakeDev good = {0, 0, -1, 0, 0};
    assert_int_equal(check_run_ex(ctx, k, &e, fake_device, &good, &o, &r), CHECK_PASS);
    assert_true(r.sample.on && !r.sample.tiles);
    assert_int_equal(r.sample.of, 300);
    assert_true(r.sample.count >= 2 && r.sample.count <= 20);
    assert_int_equal(r.out[0].n_compared, r.sample.count * 64); /* whole rows */
    assert_non_null(strstr(r.message, "sampled"));
    uint64_t seed = r.sample.seed;
    int64_t count = r.sample.count;
    /* the same seed samples the same rows; the last row is always among them */
    RowSpoiler last = {299, 64, 0};
    assert_int_equal(check_run_ex(ctx, k, &e, spoil_row, &last, &o, &r), CHECK_FAIL);
    assert_int_equal(r.out[0].first_bad[0], 299);
    assert_true(r.sample.seed == seed && r.sample.count == count);
    /* a bad row outside the sample is not seen (that is what sampling means) */
    RowSpoiler mid = {0, 64, 0};
    for (int64_t row = 1; row < 299; row++) {
        mid.row = row;
        if (check_run_ex(ctx, k, &e, spoil_row, &mid, &o, &r) == CHECK_PASS)
            break;
    }
    assert_true(mid.row < 299);
    /* another --seed, another sample */
    o.seed = 12345;
    assert_int_equal(check_run_ex(ctx, k, &e, fake_device, &good, &o, &r), CHECK_PASS);
    assert_true(r.sample.seed != seed);
    ctx_free(ctx);
}

static void test_tiles(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx, MM);
    ShapeEnv e = shape_of(ctx, k, "M=100, N=200, K=50");
    CheckOptions o = sampled(4 * 16 * 16 * 100); /* a row costs 200 * 100: < 8 rows fit */
    CheckReport r;
    FakeDev good = {0, 0, -1, 0, 0};
    assert_int_equal(check_run_ex(ctx, k, &e, fake_device, &good, &o, &r), CHECK_PASS);
    assert_true(r.sample.on && r.sample.tiles);
    assert_true(r.sample.tile[0] == 16 && r.sample.tile[1] == 16);
    assert_int_equal(r.sample.of, 7 * 13);
    assert_true(r.sample.count >= 2 && r.sample.count <= 7);
    /* the last tile is the ragged corner: rows 96..99, columns 192..199 */
    int64_t corner = 0;
    corner = r.out[0].n_compared;
    assert_true(corner <= r.sample.count * 256);
    RowSpoiler last = {99, 200, 0};
    assert_int_equal(check_run_ex(ctx, k, &e, spoil_row, &last, &o, &r), CHECK_FAIL);
    assert_int_equal(r.out[0].first_bad[0], 99);
    assert_true(r.out[0].first_bad[1] >= 192);
    /* with room for rows, whole rows */
    o.sample_flops = 1e9;
    assert_int_equal(check_run_ex(ctx, k, &e, fake_device, &good, &o, &r), CHECK_PASS);
    assert_false(r.sample.tiles);
    assert_int_equal(r.sample.count, 100);
    ctx_free(ctx);
}

static void test_not_sampleable(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx, TOTAL);
    ShapeEnv e = shape_of(ctx, k, "M=10, N=8");
    CheckOptions o = sampled(100);
    o.no_diags = 0;
    CheckReport r;
    FakeDev good = {0, 0, -1, 0, 0};
    assert_int_equal(check_run_ex(ctx, k, &e, fake_device, &good, &o, &r), CHECK_ERROR);
    assert_true(has_diag(ctx, E0960));
    assert_non_null(strstr(ctx->diags[ctx->ndiags - 1].msg, "sets a variable declared outside"));
    assert_int_equal(good.calls, 0);
    ctx_free(ctx);
}

/* over max_elems the check samples by itself; sample = -1 refuses as before */
static void test_auto(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx, NORM);
    ShapeEnv e = shape_of(ctx, k, "M=64, N=64");
    CheckOptions o;
    memset(&o, 0, sizeof o);
    o.max_elems = 1000;
    CheckReport r;
    FakeDev good = {0, 0, -1, 0, 0};
    assert_int_equal(check_run_ex(ctx, k, &e, fake_device, &good, &o, &r), CHECK_PASS);
    assert_true(r.sample.on);
    o.max_elems = 1e9;
    assert_int_equal(check_run_ex(ctx, k, &e, fake_device, &good, &o, &r), CHECK_PASS);
    assert_false(r.sample.on);
    o.max_elems = 1000;
    o.sample = -1;
    assert_int_equal(check_run_ex(ctx, k, &e, fake_device, &good, &o, &r), CHECK_ERROR);
    assert_true(has_diag(ctx, E0960));
    ctx_free(ctx);
}

/* a real size on the CPU (reference only): 16384 x 4096 bf16 was refused
 * (2^27 elements in all); now the reference's work is the sample's and
 * the host keeps the device encoding, not an fp64 copy (that alone would be
 * 1 GiB) */
static void test_large_bounded(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_kernel(ctx, NORM);
    ShapeEnv e = shape_of(ctx, k, "M=16384, N=4096");
    CheckReport r;
    assert_int_equal(check_run_ex(ctx, k, &e, NULL, NULL, NULL, &r), CHECK_PASS);
    assert_true(r.sample.on);
    assert_int_equal(r.sample.of, 16384);
    assert_true(r.cost.flops < 0x1p29); /* the sample's work, not 16384 rows' */
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    assert_true(ru.ru_maxrss < 450 * 1024); /* KiB: the bf16 buffers are 2 x 128 MiB */
    ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_tiles),
        cmocka_unit_test(test_not_sampleable),
        cmocka_unit_test(test_auto),
        cmocka_unit_test(test_large_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
