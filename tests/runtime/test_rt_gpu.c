/* test_rt_gpu.c — GPU smoke tests of runtime/ on a CUDA device: a PTX
 * vector add (results, registers, timing with and without L2 flush), load and
 * launch errors, a TMA copy on sm_90+, and, in child processes, a kernel that
 * faults (RT_FAULT naming it, then recovery by a fresh open) and one that
 * never ends (RT_TIMEOUT within the timeout, then exit without waiting).
 * Without a CUDA device it prints "SKIP: no CUDA device (reason)" and exits
 * 77, which ctest counts as skipped.
 *
 * The binary re-executes itself as `--child fault|timeout` for the child
 * processes, so that a broken context never touches this one.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rt.h"

/* ---- kernels (PTX for sm_80; the driver JITs them for the device) ------ */

static const char *const kernels_ptx =
    ".version 7.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry vadd(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)\n"
    "{\n"
    "    .reg .pred %p;\n"
    "    .reg .b32 %r<6>;\n"
    "    .reg .f32 %f<4>;\n"
    "    .reg .b64 %rd<10>;\n"
    "    ld.param.u64 %rd1, [a];\n"
    "    ld.param.u64 %rd2, [b];\n"
    "    ld.param.u64 %rd3, [c];\n"
    "    ld.param.u32 %r1, [n];\n"
    "    mov.u32 %r2, %ctaid.x;\n"
    "    mov.u32 %r3, %ntid.x;\n"
    "    mov.u32 %r4, %tid.x;\n"
    "    mad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "    setp.ge.u32 %p, %r5, %r1;\n"
    "    @%p bra DONE;\n"
    "    cvta.to.global.u64 %rd1, %rd1;\n"
    "    cvta.to.global.u64 %rd2, %rd2;\n"
    "    cvta.to.global.u64 %rd3, %rd3;\n"
    "    mul.wide.u32 %rd4, %r5, 4;\n"
    "    add.s64 %rd5, %rd1, %rd4;\n"
    "    add.s64 %rd6, %rd2, %rd4;\n"
    "    add.s64 %rd7, %rd3, %rd4;\n"
    "    ld.global.f32 %f1, [%rd5];\n"
    "    ld.global.f32 %f2, [%rd6];\n"
    "    add.f32 %f3, %f1, %f2;\n"
    "    st.global.f32 [%rd7], %f3;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n"
    "\n"
    "// writes 1 TiB past its argument\n"
    ".visible .entry oob(.param .u64 p)\n"
    "{\n"
    "    .reg .b64 %rd<3>;\n"
    "    .reg .b32 %r<2>;\n"
    "    ld.param.u64 %rd1, [p];\n"
    "    add.s64 %rd2, %rd1, 1099511627776;\n"
    "    mov.u32 %r1, 1;\n"
    "    st.global.u32 [%rd2], %r1;\n"
    "    ret;\n"
    "}\n"
    "\n"
    "// waits for a flag no one sets\n"
    ".visible .entry spin(.param .u64 flag)\n"
    "{\n"
    "    .reg .pred %p;\n"
    "    .reg .b32 %r<2>;\n"
    "    .reg .b64 %rd<2>;\n"
    "    ld.param.u64 %rd1, [flag];\n"
    "LOOP:\n"
    "    ld.volatile.global.u32 %r1, [%rd1];\n"
    "    setp.eq.u32 %p, %r1, 0;\n"
    "    @%p bra LOOP;\n"
    "    ret;\n"
    "}\n";

/* Lines 7 and 8 are wrong. */
static const char *const bad_ptx =
    ".version 7.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    ".visible .entry bad(.param .u64 p)\n"
    "{\n"
    "  .reg .u32 %r<3>;\n"
    "  mov.u32 %r1, %nosuch;\n"
    "  add.u32 %r2, %r1, %q;\n"
    "  ret;\n"
    "}\n";

/* Copies the box at (x0, y0) of a 2D f32 tensor map into out[0..256) with
 * TMA, through shared memory and an mbarrier: a box of 32 x 8 elements. */
static const char *const tma_ptx =
    ".version 8.0\n"
    ".target sm_90a\n"
    ".address_size 64\n"
    ".visible .entry tma_copy(.param .align 64 .b8 tmap[128], .param .u64 out,\n"
    "                         .param .u32 x0, .param .u32 y0)\n"
    "{\n"
    "    .reg .pred %p<3>;\n"
    "    .reg .b32 %r<8>;\n"
    "    .reg .f32 %f1;\n"
    "    .reg .b64 %rd<6>;\n"
    "    .shared .align 128 .b8 tile[1024];\n"
    "    .shared .align 8 .b64 bar;\n"
    "    mov.u32 %r1, %tid.x;\n"
    "    mov.u32 %r2, bar;\n"
    "    mov.u32 %r3, tile;\n"
    "    setp.ne.u32 %p1, %r1, 0;\n"
    "    @%p1 bra SYNC;\n"
    "    mbarrier.init.shared::cta.b64 [%r2], 1;\n"
    "    fence.proxy.async.shared::cta;\n"
    "SYNC:\n"
    "    bar.sync 0;\n"
    "    @%p1 bra WAIT;\n"
    "    ld.param.u32 %r4, [x0];\n"
    "    ld.param.u32 %r5, [y0];\n"
    "    mov.b64 %rd1, tmap;\n"
    "    cvta.param.u64 %rd2, %rd1;\n"
    "    mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 1024;\n"
    "    cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
    " [%r3], [%rd2, {%r4, %r5}], [%r2];\n"
    "WAIT:\n"
    "    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;\n"
    "    @!%p2 bra WAIT;\n"
    "    shl.b32 %r6, %r1, 2;\n"
    "    add.u32 %r7, %r3, %r6;\n"
    "    ld.shared.f32 %f1, [%r7];\n"
    "    ld.param.u64 %rd3, [out];\n"
    "    cvta.to.global.u64 %rd3, %rd3;\n"
    "    mul.wide.u32 %rd4, %r1, 4;\n"
    "    add.s64 %rd5, %rd3, %rd4;\n"
    "    st.global.f32 [%rd5], %f1;\n"
    "    ret;\n"
    "}\n";

/* ---- helpers ------------------------------------------------------------ */

static bool contains(const char *s, const char *part) { return s && strstr(s, part); }

/* Opens the CUDA device, or skips the test saying why. */
static RtDevice *open_cuda_or_skip(void)
{
    char err[1024];
    RtDevice *dev = NULL;
    RtStatus st = rt_open(RT_CUDA, 0, &dev, err, sizeof err);
    if (st == RT_NO_DEVICE) {
        printf("SKIP: no CUDA device (%s)\n", err);
        skip();
    }
    if (st != RT_OK)
        fail_msg("rt_open: %s: %s", rt_status_name(st), err);
    return dev;
}

static RtModule *load_or_fail(RtDevice *dev, const char *ptx)
{
    char log[8192];
    RtModule *mod = NULL;
    RtStatus st = rt_module_load(dev, ptx, 0, &mod, log, sizeof log);
    if (st != RT_OK)
        fail_msg("rt_module_load: %s: %s\n%s", rt_status_name(st), rt_error(dev), log);
    return mod;
}

static RtFunction *func_or_fail(RtModule *mod, const char *name)
{
    RtFunction *fn = NULL;
    assert_int_equal(rt_function(mod, name, &fn), RT_OK);
    assert_string_equal(rt_function_name(fn), name);
    return fn;
}

#define CHECK_RT(dev, call)                                                        \
    do {                                                                           \
        RtStatus st_ = (call);                                                     \
        if (st_ != RT_OK)                                                          \
            fail_msg("%s: %s: %s", #call, rt_status_name(st_), rt_error(dev));     \
    } while (0)

/* ---- with a CUDA GPU ---------------------------------------------------- */

static void print_info(const RtDeviceInfo *in)
{
    printf("device: %s %s, %d SMs, L2 %zu KiB, smem/block %zu (opt-in %zu), "
           "%.0f GB/s peak, driver %d\n",
           in->name, in->arch, in->sm_count, in->l2_bytes >> 10, in->shared_per_block,
           in->shared_per_block_optin, in->peak_gbps, in->driver_version);
}

typedef struct {
    RtDevice *dev;
    RtPtr a, b, c;
    unsigned n;
    float *ha, *hb, *hc;
} Vadd;

static void vadd_setup(Vadd *v, RtDevice *dev, unsigned n)
{
    v->dev = dev;
    v->n = n;
    size_t bytes = (size_t)n * sizeof(float);
    v->ha = malloc(bytes), v->hb = malloc(bytes), v->hc = malloc(bytes);
    assert_true(v->ha && v->hb && v->hc);
    for (unsigned i = 0; i < n; i++)
        v->ha[i] = (float)(i % 1000), v->hb[i] = 0.5f * (float)(i % 77);
    CHECK_RT(dev, rt_alloc(dev, bytes, &v->a));
    CHECK_RT(dev, rt_alloc(dev, bytes, &v->b));
    CHECK_RT(dev, rt_alloc(dev, bytes, &v->c));
    CHECK_RT(dev, rt_copy_h2d(dev, v->a, v->ha, bytes));
    CHECK_RT(dev, rt_copy_h2d(dev, v->b, v->hb, bytes));
    CHECK_RT(dev, rt_memset_d32(dev, v->c, 0x7fc00000u, n)); /* NaN poison */
}

static RtLaunch vadd_launch(Vadd *v, RtFunction *fn, void **params)
{
    params[0] = &v->a, params[1] = &v->b, params[2] = &v->c, params[3] = &v->n;
    RtLaunch l = {.fn = fn, .grid = {(v->n + 255) / 256}, .block = {256}, .params = params};
    return l;
}

static void vadd_check(Vadd *v)
{
    CHECK_RT(v->dev, rt_copy_d2h(v->dev, v->hc, v->c, (size_t)v->n * sizeof(float)));
    for (unsigned i = 0; i < v->n; i++)
        if (v->hc[i] != v->ha[i] + v->hb[i])
            fail_msg("c[%u] = %g, expected %g", i, (double)v->hc[i],
                     (double)(v->ha[i] + v->hb[i]));
}

static void vadd_free(Vadd *v)
{
    CHECK_RT(v->dev, rt_free(v->dev, v->a));
    CHECK_RT(v->dev, rt_free(v->dev, v->b));
    CHECK_RT(v->dev, rt_free(v->dev, v->c));
    free(v->ha), free(v->hb), free(v->hc);
}

static void check_func_info(RtDevice *dev, RtFunction *fn)
{
    RtFuncInfo fi;
    CHECK_RT(dev, rt_func_info(fn, &fi));
    printf("vadd: %d registers, %d local bytes, %d static smem, max %d threads, "
           "ptx %d, sass %d\n", fi.regs, fi.local_bytes, fi.static_shared_bytes,
           fi.max_threads, fi.ptx_version, fi.binary_version);
    assert_in_range(fi.regs, 1, 255);
    assert_int_equal(fi.local_bytes, 0);
    /* read from the JIT log; -1 when the driver's JIT cache served the module */
    printf("vadd: spill stores %d, spill loads %d, stack %d bytes\n", fi.spill_store_bytes,
           fi.spill_load_bytes, fi.stack_bytes);
    assert_in_range(fi.spill_store_bytes + 1, 0, 1);
    assert_in_range(fi.spill_load_bytes + 1, 0, 1);
    assert_in_range(fi.stack_bytes + 1, 0, 1);
    assert_int_equal(fi.ptx_version, 80); /* .target sm_80 */
    const RtDeviceInfo *in = rt_info(dev);
    assert_int_equal(fi.binary_version, in->cc_major * 10 + in->cc_minor);
    unsigned big = (unsigned)in->shared_per_block_optin;
    CHECK_RT(dev, rt_func_set_shared(fn, big));
    CHECK_RT(dev, rt_func_info(fn, &fi));
    assert_int_equal(fi.max_dyn_shared_bytes, (int)big);
    assert_int_equal(rt_func_set_shared(fn, big + 1), RT_INVALID);
    assert_true(contains(rt_error(dev), "vadd"));
}

static void time_vadd(RtDevice *dev, Vadd *v, RtFunction *fn)
{
    void *params[4];
    RtLaunch l = vadd_launch(v, fn, params);
    double samples[10];
    RtTiming t;
    RtTimeOpts opts = {.runs = 10};
    CHECK_RT(dev, rt_time(dev, &l, 1, &opts, &t, samples));
    double gbps = 3.0 * v->n * sizeof(float) / (t.median_ms * 1e-3) / 1e9;
    printf("vadd n=%u: median %.4f ms (min %.4f, mean %.4f, max %.4f), %.0f GB/s\n", v->n,
           t.median_ms, t.min_ms, t.mean_ms, t.max_ms, gbps);
    assert_int_equal(t.runs, 10);
    assert_true(t.min_ms > 0 && t.min_ms <= t.median_ms && t.median_ms <= t.max_ms);
    for (int i = 0; i < 10; i++)
        assert_true(samples[i] >= t.min_ms && samples[i] <= t.max_ms);
    RtTiming warm;
    opts.no_flush = true;
    CHECK_RT(dev, rt_time(dev, &l, 1, &opts, &warm, NULL));
    printf("vadd without L2 flush: median %.4f ms\n", warm.median_ms);
}

/* 12 MiB fit in L2: the flush should show. Printed, not asserted. */
static void time_small_vadd(RtDevice *dev, RtFunction *fn)
{
    Vadd v;
    vadd_setup(&v, dev, 1u << 20);
    void *params[4];
    RtLaunch l = vadd_launch(&v, fn, params);
    RtTiming cold, warm;
    RtTimeOpts opts = {.runs = 50};
    CHECK_RT(dev, rt_time(dev, &l, 1, &opts, &cold, NULL));
    opts.no_flush = true;
    CHECK_RT(dev, rt_time(dev, &l, 1, &opts, &warm, NULL));
    printf("vadd n=2^20: median %.4f ms with L2 flushed, %.4f ms with L2 warm\n",
           cold.median_ms, warm.median_ms);
    RtLaunch two[2] = {l, l}; /* two variants of a one-launch sequence */
    opts.variants = 2;
    CHECK_RT(dev, rt_time(dev, two, 1, &opts, &warm, NULL));
    l.grid[0] = 1; /* one block: the events must not time the host */
    opts.variants = 0;
    CHECK_RT(dev, rt_time(dev, &l, 1, &opts, &warm, NULL));
    printf("vadd, one block: median %.4f ms, min %.4f ms\n", warm.median_ms, warm.min_ms);
    assert_true(warm.median_ms < 0.05);
    vadd_free(&v);
}

static void check_load_errors(RtDevice *dev, RtModule *mod)
{
    char log[8192];
    RtModule *bad = NULL;
    assert_int_equal(rt_module_load(dev, bad_ptx, 0, &bad, log, sizeof log), RT_LOAD_ERROR);
    assert_null(bad);
    printf("bad PTX: %s\nJIT log:\n%s\n", rt_error(dev), log);
    const char *cur = log;
    RtJitMsg m;
    assert_true(rt_jit_log_next(&cur, &m));
    assert_true(m.error);
    assert_in_range(m.line, 7, 8);
    assert_true(contains(rt_error(dev), "line"));
    RtFunction *fn = NULL;
    assert_int_equal(rt_function(mod, "nosuch", &fn), RT_INVALID);
    assert_true(contains(rt_error(dev), "no kernel 'nosuch'"));
}

static void check_launch_errors(RtDevice *dev, RtFunction *fn, Vadd *v)
{
    void *params[4];
    RtLaunch l = vadd_launch(v, fn, params);
    l.block[0] = 2048;
    assert_int_equal(rt_launch(dev, &l), RT_LAUNCH_ERROR);
    printf("too many threads: %s\n", rt_error(dev));
    l.block[0] = 256;
    l.shared_bytes = 1u << 30;
    RtStatus st = rt_launch(dev, &l);
    printf("too much shared memory: %s: %s\n", rt_status_name(st), rt_error(dev));
    assert_int_equal(st, RT_LAUNCH_ERROR);
    assert_true(contains(rt_error(dev), "vadd"));
    RtPtr huge = 0;
    assert_int_equal(rt_alloc(dev, (size_t)1 << 50, &huge), RT_OOM);
    printf("1 PiB: %s\n", rt_error(dev));
    assert_true(contains(rt_error(dev), "out of device memory"));
    assert_int_equal(rt_health(dev), RT_OK);
}

/* The same vadd over clusters of 2 blocks (cuLaunchKernelEx), waited for
 * with rt_wait. */
static void check_cluster_launch(RtDevice *dev, RtFunction *fn)
{
    Vadd v;
    vadd_setup(&v, dev, 4096);
    void *params[4];
    RtLaunch l = vadd_launch(&v, fn, params);
    l.cluster[0] = 2;
    CHECK_RT(dev, rt_launch(dev, &l));
    CHECK_RT(dev, rt_wait(dev));
    vadd_check(&v);
    vadd_free(&v);
}

static void test_gpu_vadd(void **state)
{
    (void)state;
    RtDevice *dev = open_cuda_or_skip();
    print_info(rt_info(dev));
    char log[8192];
    RtModule *mod = NULL;
    CHECK_RT(dev, rt_module_load(dev, kernels_ptx, strlen(kernels_ptx), &mod, log, sizeof log));
    printf("JIT info log:\n%s\n", log);
    RtFunction *fn = func_or_fail(mod, "vadd");
    check_func_info(dev, fn);
    Vadd v;
    vadd_setup(&v, dev, (1u << 24) + 3); /* ragged: not a multiple of the block */
    void *params[4];
    RtLaunch l = vadd_launch(&v, fn, params);
    CHECK_RT(dev, rt_run(dev, &l));
    vadd_check(&v);
    time_vadd(dev, &v, fn);
    time_small_vadd(dev, fn);
    check_load_errors(dev, mod);
    check_launch_errors(dev, fn, &v);
    CHECK_RT(dev, rt_memset_d8(dev, v.c, 0xff, (size_t)v.n * 4));
    CHECK_RT(dev, rt_run(dev, &l)); /* still healthy after the refused ones */
    vadd_check(&v);
    CHECK_RT(dev, rt_copy_d2d(dev, v.a, v.c, (size_t)v.n * 4));
    vadd_free(&v);
    rt_module_unload(mod);
    rt_close(dev);
}

/* A 64 x 128 f32 tensor, element (r, c) = r * 1000 + c. */
static void tma_run(RtDevice *dev, RtFunction *fn, RtPtr src, unsigned x0, unsigned y0)
{
    RtTmaDesc d = {.dtype = RT_TMA_F32, .rank = 2, .base = src, .dims = {128, 64},
                   .strides = {128 * 4}, .box = {32, 8}};
    RtTensorMap map;
    CHECK_RT(dev, rt_tma_encode(dev, &d, &map));
    RtPtr out;
    CHECK_RT(dev, rt_alloc(dev, 256 * 4, &out));
    void *params[] = {&map, &out, &x0, &y0};
    RtLaunch l = {.fn = fn, .grid = {1}, .block = {256}, .params = params};
    CHECK_RT(dev, rt_run(dev, &l));
    float got[256];
    CHECK_RT(dev, rt_copy_d2h(dev, got, out, sizeof got));
    for (unsigned t = 0; t < 256; t++) {
        unsigned r = y0 + t / 32, c = x0 + t % 32;
        float want = r < 64 && c < 128 ? (float)(r * 1000 + c) : 0.0f; /* OOB: zeros */
        if (got[t] != want)
            fail_msg("tma (%u, %u) element %u = %g, expected %g", x0, y0, t, (double)got[t],
                     (double)want);
    }
    CHECK_RT(dev, rt_free(dev, out));
}

static void test_gpu_hopper(void **state)
{
    (void)state;
    RtDevice *dev = open_cuda_or_skip();
    if (rt_info(dev)->cc_major < 9) {
        printf("SKIP: TMA needs sm_90, this is %s\n", rt_info(dev)->arch);
        rt_close(dev);
        skip();
    }
    RtModule *kmod = load_or_fail(dev, kernels_ptx);
    check_cluster_launch(dev, func_or_fail(kmod, "vadd"));
    rt_module_unload(kmod);
    RtModule *mod = load_or_fail(dev, tma_ptx);
    RtFunction *fn = func_or_fail(mod, "tma_copy");
    float *h = malloc(64 * 128 * sizeof *h);
    assert_non_null(h);
    for (unsigned r = 0; r < 64; r++)
        for (unsigned c = 0; c < 128; c++)
            h[r * 128 + c] = (float)(r * 1000 + c);
    RtPtr src;
    CHECK_RT(dev, rt_alloc(dev, 64 * 128 * sizeof *h, &src));
    CHECK_RT(dev, rt_copy_h2d(dev, src, h, 64 * 128 * sizeof *h));
    tma_run(dev, fn, src, 32, 16);
    tma_run(dev, fn, src, 112, 60); /* partly out of bounds */
    RtTmaDesc bad = {.dtype = RT_TMA_F32, .rank = 2, .base = src, .dims = {128, 64},
                     .strides = {128 * 4}, .box = {32, 512}};
    RtTensorMap map;
    assert_int_equal(rt_tma_encode(dev, &bad, &map), RT_INVALID);
    assert_true(contains(rt_error(dev), "box dim 1"));
    CHECK_RT(dev, rt_free(dev, src));
    free(h);
    rt_module_unload(mod);
    rt_close(dev);
}

/* ---- child processes ---------------------------------------------------- */

/* Runs this binary as `--child mode`; returns its exit status, its output in
 * out and its wall time in *secs. Kills it after `limit` seconds. */
static int spawn_child(const char *mode, char *out, size_t outlen, double limit, double *secs)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        execl("/proc/self/exe", "test_rt", "--child", mode, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t used = 0;
    struct pollfd p = {.fd = fds[0], .events = POLLIN};
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        if (el > limit) {
            kill(pid, SIGKILL);
            break;
        }
        if (poll(&p, 1, 100) <= 0)
            continue;
        ssize_t k = read(fds[0], out + used, outlen - 1 - used);
        if (k <= 0)
            break;
        used += (size_t)k;
    }
    out[used] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void test_gpu_fault(void **state)
{
    (void)state;
    rt_close(open_cuda_or_skip());
    char out[8192];
    double secs;
    int code = spawn_child("fault", out, sizeof out, 120, &secs);
    printf("child 'fault' (exit %d, %.1f s):\n%s", code, secs, out);
    assert_int_equal(code, 0);
    assert_true(contains(out, "RT_FAULT: kernel 'oob' faulted: CUDA_ERROR_ILLEGAL_ADDRESS"));
    assert_true(contains(out, "reopen: "));
}

static void test_gpu_timeout(void **state)
{
    (void)state;
    rt_close(open_cuda_or_skip());
    char out[8192];
    double secs;
    int code = spawn_child("timeout", out, sizeof out, 120, &secs);
    printf("child 'timeout' (exit %d, %.1f s):\n%s", code, secs, out);
    assert_int_equal(code, 0);
    assert_true(contains(out, "RT_TIMEOUT: kernel 'spin' still running after 2.0 s"));
    assert_true(secs < 60);
}

/* In the child: a kernel writes out of bounds; the device reports it with the
 * kernel's name and stays broken; rt_close is safe, and a fresh open in the
 * same process says why it cannot work (CUDA faults are sticky). */
static int child_fault(void)
{
    char err[1024];
    RtDevice *dev = NULL;
    if (rt_open(RT_CUDA, 0, &dev, err, sizeof err) != RT_OK)
        return printf("open: %s\n", err), 1;
    RtModule *mod = NULL;
    RtFunction *fn = NULL;
    if (rt_module_load(dev, kernels_ptx, 0, &mod, NULL, 0) != RT_OK ||
        rt_function(mod, "oob", &fn) != RT_OK)
        return printf("load: %s\n", rt_error(dev)), 1;
    RtPtr p;
    if (rt_alloc(dev, 4096, &p) != RT_OK)
        return printf("alloc: %s\n", rt_error(dev)), 1;
    void *params[] = {&p};
    RtLaunch l = {.fn = fn, .grid = {1}, .block = {1}, .params = params};
    RtStatus st = rt_run(dev, &l);
    printf("%s: %s\n", rt_status_name(st), rt_error(dev));
    if (st != RT_FAULT || rt_health(dev) != RT_FAULT || rt_alloc(dev, 16, &p) != RT_FAULT)
        return 1;
    if (!strstr(rt_error(dev), "kernel 'oob' faulted"))
        return printf("the message changed: %s\n", rt_error(dev)), 1;
    rt_module_unload(mod);
    rt_close(dev);
    st = rt_open(RT_CUDA, 0, &dev, err, sizeof err);
    printf("reopen: %s: %s\n", rt_status_name(st), err);
    if (st == RT_OK)
        rt_close(dev);
    return 0;
}

/* In the child: a kernel never ends; the wait gives up after 2 s, and the
 * process exits without destroying the context. */
static int child_timeout(void)
{
    char err[1024];
    RtDevice *dev = NULL;
    if (rt_open(RT_CUDA, 0, &dev, err, sizeof err) != RT_OK)
        return printf("open: %s\n", err), 1;
    RtModule *mod = NULL;
    RtFunction *fn = NULL;
    if (rt_module_load(dev, kernels_ptx, 0, &mod, NULL, 0) != RT_OK ||
        rt_function(mod, "spin", &fn) != RT_OK)
        return printf("load: %s\n", rt_error(dev)), 1;
    RtPtr flag;
    if (rt_alloc(dev, 4, &flag) != RT_OK || rt_memset_d32(dev, flag, 0, 1) != RT_OK)
        return printf("alloc: %s\n", rt_error(dev)), 1;
    rt_set_timeout(dev, 2.0);
    void *params[] = {&flag};
    RtLaunch l = {.fn = fn, .grid = {1}, .block = {32}, .params = params};
    double t0 = (double)clock() / CLOCKS_PER_SEC;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    RtStatus st = rt_run(dev, &l);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double waited = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    double cpu = (double)clock() / CLOCKS_PER_SEC - t0;
    printf("%s: %s\nwaited %.2f s, %.2f s of CPU\n", rt_status_name(st), rt_error(dev), waited,
           cpu);
    bool ok = st == RT_TIMEOUT && waited >= 2.0 && waited < 3.0 &&
              rt_memset_d32(dev, flag, 1, 1) == RT_TIMEOUT;
    rt_close(dev); /* host memory only: a hung context is left alone */
    rt_exit_now(ok ? 0 : 1);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--child") == 0)
        return strcmp(argv[2], "fault") == 0 ? child_fault() : child_timeout();
    char err[1024];
    RtDevice *dev = NULL;
    RtStatus st = rt_open(RT_CUDA, 0, &dev, err, sizeof err);
    if (st == RT_NO_DEVICE) {
        printf("SKIP: no CUDA device (%s)\n", err);
        return 77;
    }
    rt_close(dev);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_vadd),
        cmocka_unit_test(test_gpu_hopper),
        cmocka_unit_test(test_gpu_fault),
        cmocka_unit_test(test_gpu_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
