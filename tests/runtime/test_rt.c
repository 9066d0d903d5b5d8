/* test_rt.c — tests of runtime/ that need no GPU: status names, timing
 * statistics, the JIT-log reader, tensor-map checks, and opening CUDA and HIP
 * where there may be no driver (RT_NO_DEVICE with a reason, never a crash).
 * The GPU smoke tests are in test_rt_gpu.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend.h" /* rt__jit_spills */
#include "rt.h"

static bool contains(const char *s, const char *part) { return s && strstr(s, part); }

/* ---- without a GPU ------------------------------------------------------ */

static void test_status_names(void **state)
{
    (void)state;
    assert_string_equal(rt_status_name(RT_OK), "RT_OK");
    assert_string_equal(rt_status_name(RT_NO_DEVICE), "RT_NO_DEVICE");
    assert_string_equal(rt_status_name(RT_LOAD_ERROR), "RT_LOAD_ERROR");
    assert_string_equal(rt_status_name(RT_LAUNCH_ERROR), "RT_LAUNCH_ERROR");
    assert_string_equal(rt_status_name(RT_FAULT), "RT_FAULT");
    assert_string_equal(rt_status_name(RT_TIMEOUT), "RT_TIMEOUT");
    assert_string_equal(rt_status_name(RT_OOM), "RT_OOM");
    assert_string_equal(rt_status_name(RT_INVALID), "RT_INVALID");
    assert_string_equal(rt_status_name(RT_UNSUPPORTED), "RT_UNSUPPORTED");
    assert_string_equal(rt_status_name(RT_ERROR), "RT_ERROR");
    assert_string_equal(rt_status_name((RtStatus)99), "RT_?");
    assert_string_equal(rt_backend_name(RT_CUDA), "cuda");
    assert_string_equal(rt_backend_name(RT_HIP), "hip");
    assert_string_equal(rt_backend_name(RT_AUTO), "auto");
}

static void test_median(void **state)
{
    (void)state;
    double odd[] = {5, 1, 4, 2, 3};
    assert_true(rt_median(odd, 5) == 3);
    assert_true(odd[0] == 1 && odd[4] == 5); /* sorted in place */
    double even[] = {4, 1, 3, 2};
    assert_true(rt_median(even, 4) == 2.5);
    double one[] = {7};
    assert_true(rt_median(one, 1) == 7);
    assert_true(rt_median(NULL, 0) == 0);
    double dup[] = {2, 2, 9, 2};
    assert_true(rt_median(dup, 4) == 2);
}

static void test_stats(void **state)
{
    (void)state;
    double ms[] = {3.0, 1.0, 2.0, 10.0};
    RtTiming t;
    rt_stats(ms, 4, &t);
    assert_int_equal(t.runs, 4);
    assert_true(t.median_ms == 2.5);
    assert_true(t.min_ms == 1.0);
    assert_true(t.max_ms == 10.0);
    assert_true(fabs(t.mean_ms - 4.0) < 1e-12);
    rt_stats(ms, 0, &t);
    assert_int_equal(t.runs, 0);
}

static void test_jit_log(void **state)
{
    (void)state;
    const char *log =
        "ptxas application ptx input, line 7; error   : Arguments mismatch for "
        "instruction 'mov'\n"
        "ptxas info    : 0 bytes gmem\n"
        "ptxas application ptx input, line 12; warning : Unknown pragma 'x'\r\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas fatal   : Ptx assembly aborted due to errors";
    const char *cur = log;
    RtJitMsg m;
    assert_true(rt_jit_log_next(&cur, &m));
    assert_int_equal(m.line, 7);
    assert_true(m.error);
    assert_int_equal(m.len, (int)strlen("Arguments mismatch for instruction 'mov'"));
    assert_memory_equal(m.text, "Arguments mismatch", 18);
    assert_true(rt_jit_log_next(&cur, &m));
    assert_int_equal(m.line, 12);
    assert_false(m.error);
    assert_int_equal(m.len, (int)strlen("Unknown pragma 'x'"));
    assert_true(rt_jit_log_next(&cur, &m));
    assert_int_equal(m.line, 0);
    assert_true(m.error);
    assert_memory_equal(m.text, "Ptx assembly aborted", 20);
    assert_false(rt_jit_log_next(&cur, &m));
    cur = "";
    assert_false(rt_jit_log_next(&cur, &m));
}

static void test_jit_spills(void **state)
{
    (void)state;
    const char *log =
        "ptxas info    : Compiling entry function 'k2' for 'sm_90a'\n"
        "ptxas info    : Function properties for k2\n"
        "ptxas         .     48 bytes stack frame, 40 bytes spill stores, 36 bytes spill "
        "loads\n"
        "ptxas info    : Used 255 registers, used 0 barriers\n"
        "ptxas info    : Function properties for k\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
    int sp[3] = {-1, -1, -1};
    assert_true(rt__jit_spills(log, "k2", sp));
    assert_int_equal(sp[0], 48);
    assert_int_equal(sp[1], 40);
    assert_int_equal(sp[2], 36);
    assert_true(rt__jit_spills(log, "k", sp)); /* not a prefix match on "k2" */
    assert_int_equal(sp[0], 0);
    assert_int_equal(sp[1], 0);
    assert_int_equal(sp[2], 0);
    assert_false(rt__jit_spills(log, "nosuch", sp));
    assert_false(rt__jit_spills("", "k", sp));
}

static RtTmaDesc good_tma(void)
{
    RtTmaDesc d = {
        .dtype = RT_TMA_BF16, .rank = 2, .base = 0x10000,
        .dims = {4096, 1024}, .strides = {8192}, .box = {64, 128},
        .swizzle = 128, .l2_promote = 128,
    };
    return d;
}

static void expect_tma_error(RtTmaDesc d, const char *part)
{
    char err[256];
    assert_int_equal(rt_tma_check(&d, err, sizeof err), RT_INVALID);
    if (!contains(err, part))
        fail_msg("expected '%s' in: %s", part, err);
}

static void test_tma_check(void **state)
{
    (void)state;
    char err[256];
    RtTmaDesc d = good_tma();
    assert_int_equal(rt_tma_check(&d, err, sizeof err), RT_OK);
    assert_string_equal(err, "");
    d = good_tma(), d.box[1] = 300;
    expect_tma_error(d, "1..256");
    d = good_tma(), d.box[0] = 6, d.swizzle = 0; /* 12 bytes */
    expect_tma_error(d, "multiple of 16");
    d = good_tma(), d.box[0] = 128; /* 256 bytes under a 128-byte swizzle */
    expect_tma_error(d, "swizzle");
    d = good_tma(), d.swizzle = 96;
    expect_tma_error(d, "swizzle 96");
    d = good_tma(), d.base = 0x10008;
    expect_tma_error(d, "aligned");
    d = good_tma(), d.rank = 0;
    expect_tma_error(d, "rank");
    d = good_tma(), d.strides[0] = 8200;
    expect_tma_error(d, "stride");
    d = good_tma(), d.dtype = RT_TMA_I32, d.oob_nan = true, d.box[0] = 32;
    expect_tma_error(d, "NaN");
    d = good_tma(), d.elem_strides[1] = 9;
    expect_tma_error(d, "element stride");
    d = good_tma(), d.dims[0] = 0;
    expect_tma_error(d, "dim 0");
}

/* With a driver present, open succeeds; without, RT_NO_DEVICE says why. */
static void expect_open(RtBackend b, const char *what)
{
    char err[1024];
    RtDevice *dev = (RtDevice *)(uintptr_t)1; /* must be reset to NULL on failure */
    RtStatus st = rt_open(b, 0, &dev, err, sizeof err);
    if (st == RT_OK) {
        assert_non_null(dev);
        assert_int_equal(rt_info(dev)->backend, b == RT_AUTO ? rt_info(dev)->backend : b);
        rt_close(dev);
        return;
    }
    printf("%s: %s: %s\n", rt_backend_name(b), rt_status_name(st), err);
    assert_int_equal(st, RT_NO_DEVICE);
    assert_null(dev);
    if (!contains(err, what))
        fail_msg("expected '%s' in: %s", what, err);
}

static void test_open_cuda(void **state)
{
    (void)state;
    expect_open(RT_CUDA, "CUDA");
}

static void test_open_hip(void **state)
{
    (void)state;
    expect_open(RT_HIP, "HIP");
}

static void test_open_auto(void **state)
{
    (void)state;
    expect_open(RT_AUTO, "HIP"); /* both reasons, the HIP one last */
}

static void test_open_missing_library(void **state)
{
    (void)state;
    char err[1024];
    RtDevice *dev = NULL;
    setenv("CAKE_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    assert_int_equal(rt_open(RT_CUDA, 0, &dev, err, sizeof err), RT_NO_DEVICE);
    assert_true(contains(err, "no CUDA driver: /nonexistent/libcuda.so.1 not found"));
    unsetenv("CAKE_LIBCUDA");
    setenv("CAKE_LIBHIP", "/nonexistent/libamdhip64.so", 1);
    assert_int_equal(rt_open(RT_HIP, 0, &dev, err, sizeof err), RT_NO_DEVICE);
    assert_true(contains(err, "no HIP runtime: /nonexistent/libamdhip64.so not found"));
    unsetenv("CAKE_LIBHIP");
    assert_null(dev);
    rt_close(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_names),
        cmocka_unit_test(test_median),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_jit_log),
        cmocka_unit_test(test_jit_spills),
        cmocka_unit_test(test_tma_check),
        cmocka_unit_test(test_open_cuda),
        cmocka_unit_test(test_open_hip),
        cmocka_unit_test(test_open_auto),
        cmocka_unit_test(test_open_missing_library),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
