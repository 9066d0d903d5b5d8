/* launch_probe.c — where a tiny kernel's device time goes. An empty kernel
 * timed the way `cakec lib bench` times (runtime/timing.c: the L2 flushed by
 * cuMemsetD32Async, the cuStreamWaitValue32 gate, events around the launch)
 * and the way the peers are timed (bench/device/gated.py: the flush, then a
 * spin kernel holding the stream, events around the launch), and what a
 * kernel brings itself: its parameter size (a tensor map by value is 128 B),
 * its dynamic shared memory after the flush (the L1/shared carve-out), the
 * carve-out attribute, a cuLaunchKernelEx attribute. The kernels are PTX
 * (JIT-compiled here: nothing to build with nvcc). One JSON line per case:
 * the median device microseconds of RUNS timed runs.
 *
 *   cc -O2 launch_probe.c -I/usr/local/cuda/include -lcuda -o launch_probe && ./launch_probe [RUNS]
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_ = ""; \
    cuGetErrorString(r_, &s_); fprintf(stderr, "launch_probe: %s failed (%s) at line %d\n", #x, s_, \
    __LINE__); exit(3); } } while (0)

static const char ptx[] =
    ".version 7.8\n.target sm_90\n.address_size 64\n"
    ".visible .entry empty0() { ret; }\n"
    ".visible .entry empty64(.param .align 8 .b8 p[64]) { ret; }\n"
    ".visible .entry empty384(.param .align 64 .b8 p[384]) { ret; }\n"
    ".visible .entry empty512(.param .align 64 .b8 p[512]) { ret; }\n"
    ".visible .entry empty768(.param .align 64 .b8 p[768]) { ret; }\n"
    ".visible .entry empty1024(.param .align 64 .b8 p[1024]) { ret; }\n"
    ".extern .shared .align 16 .b8 dyn[];\n"
    ".visible .entry empty_smem(.param .u32 n) {\n"
    "  .reg .u32 %r<3>; .reg .pred %p;\n"
    "  ld.param.u32 %r1, [n]; setp.gt.u32 %p, %r1, 1000000000; @!%p bra done;\n"
    "  mov.u32 %r2, dyn; st.shared.u32 [%r2], %r1;\n"
    "done: ret; }\n"
    /* one block per row copies 8 KB (512 threads x 16 B): a small row op's traffic */
    ".visible .entry rows(.param .u64 x, .param .u64 y) {\n"
    "  .reg .u64 %a<6>; .reg .u32 %r<4>; .reg .b32 %v<4>;\n"
    "  ld.param.u64 %a1, [x]; ld.param.u64 %a2, [y];\n"
    "  mov.u32 %r1, %ctaid.x; mov.u32 %r2, %tid.x; mad.lo.u32 %r3, %r1, 512, %r2;\n"
    "  mul.wide.u32 %a3, %r3, 16; add.u64 %a4, %a1, %a3; add.u64 %a5, %a2, %a3;\n"
    "  ld.global.v4.b32 {%v0, %v1, %v2, %v3}, [%a4]; st.global.v4.b32 [%a5], {%v0, %v1, %v2, %v3};\n"
    "  ret; }\n"
    ".visible .entry spin(.param .u64 ns) {\n"
    "  .reg .u64 %t<4>; .reg .pred %p;\n"
    "  ld.param.u64 %t3, [ns]; mov.u64 %t0, %globaltimer;\n"
    "again: mov.u64 %t1, %globaltimer; sub.u64 %t2, %t1, %t0; setp.lt.u64 %p, %t2, %t3; @%p bra again;\n"
    "  ret; }\n";

enum Hold { NONE, GATE, SPIN, GATE_SPIN };
static const char *hold_name[] = {"none", "gate", "spin", "gate+spin"};

typedef struct {
    CUstream st;
    CUdeviceptr flush;
    size_t flush_bytes;
    volatile unsigned *gate;
    CUdeviceptr gate_dev;
    unsigned gate_v;
    CUevent e0, e1;
    CUfunction spin;
} Ctx;

typedef struct {
    CUfunction fn;
    unsigned grid, block, smem;
    void **params;
    int ex;            /* through cuLaunchKernelEx with a cluster-dimension attribute of 1 */
} Launch;

static void launch(Ctx *c, const Launch *l)
{
    if (!l->ex) {
        CK(cuLaunchKernel(l->fn, l->grid, 1, 1, l->block, 1, 1, l->smem, c->st, l->params, NULL));
        return;
    }
    CUlaunchAttribute at;
    memset(&at, 0, sizeof at);
    at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at.value.clusterDim.x = at.value.clusterDim.y = at.value.clusterDim.z = 1;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = l->grid;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = l->block;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = l->smem;
    cfg.hStream = c->st;
    cfg.attrs = &at;
    cfg.numAttrs = 1;
    CK(cuLaunchKernelEx(&cfg, l->fn, l->params, NULL));
}

static void hold_spin(Ctx *c, unsigned long long ns)
{
    void *p[] = {&ns};
    CK(cuLaunchKernel(c->spin, 1, 1, 1, 1, 1, 1, 0, c->st, p, NULL));
}

static int cmp(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static double time_case(Ctx *c, enum Hold h, int flush, const Launch *l, int runs)
{
    float ms[256];
    for (int w = 0; w < 3; w++)
        launch(c, l);
    CK(cuStreamSynchronize(c->st));
    for (int r = 0; r < runs; r++) {
        if (flush)
            CK(cuMemsetD32Async(c->flush, r * 2654435761u, c->flush_bytes / 4, c->st));
        if (h == GATE || h == GATE_SPIN)
            CK(cuStreamWaitValue32(c->st, c->gate_dev, ++c->gate_v, CU_STREAM_WAIT_VALUE_GEQ));
        if (h == SPIN)
            hold_spin(c, 40000);
        if (h == GATE_SPIN)
            hold_spin(c, 8000);
        CK(cuEventRecord(c->e0, c->st));
        launch(c, l);
        CK(cuEventRecord(c->e1, c->st));
        if (h == GATE || h == GATE_SPIN)
            __atomic_store_n(c->gate, c->gate_v, __ATOMIC_SEQ_CST);
        CK(cuStreamSynchronize(c->st));
        CK(cuEventElapsedTime(&ms[r], c->e0, c->e1));
    }
    qsort(ms, (size_t)runs, sizeof *ms, cmp);
    return ms[runs / 2];
}

static void line(const char *name, enum Hold h, int flush, double ms, const char *extra)
{
    printf("{\"case\":\"%s\",\"hold\":\"%s\",\"flush\":%s,\"median_us\":%.3f%s}\n", name, hold_name[h],
           flush ? "true" : "false", ms * 1e3, extra ? extra : "");
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 30;
    runs = runs < 1 ? 1 : runs > 256 ? 256 : runs;
    CUdevice dev;
    CUcontext cx;
    CUmodule mod;
    Ctx c;
    memset(&c, 0, sizeof c);
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&cx, dev));
    CK(cuCtxSetCurrent(cx));
    CK(cuModuleLoadData(&mod, ptx));
    CUfunction f0, f64, f384, f512, f768, f1024, fsm, frows;
    CK(cuModuleGetFunction(&f0, mod, "empty0"));
    CK(cuModuleGetFunction(&f64, mod, "empty64"));
    CK(cuModuleGetFunction(&f384, mod, "empty384"));
    CK(cuModuleGetFunction(&f512, mod, "empty512"));
    CK(cuModuleGetFunction(&f768, mod, "empty768"));
    CK(cuModuleGetFunction(&f1024, mod, "empty1024"));
    CK(cuModuleGetFunction(&fsm, mod, "empty_smem"));
    CK(cuModuleGetFunction(&frows, mod, "rows"));
    CK(cuModuleGetFunction(&c.spin, mod, "spin"));
    CK(cuStreamCreate(&c.st, CU_STREAM_NON_BLOCKING));
    c.flush_bytes = (size_t)128 << 20;
    CK(cuMemAlloc(&c.flush, c.flush_bytes));
    void *hp;
    CK(cuMemHostAlloc(&hp, 4, CU_MEMHOSTALLOC_DEVICEMAP));
    c.gate = hp;
    *c.gate = 0;
    CK(cuMemHostGetDevicePointer(&c.gate_dev, hp, 0));
    CK(cuEventCreate(&c.e0, CU_EVENT_DEFAULT));
    CK(cuEventCreate(&c.e1, CU_EVENT_DEFAULT));
    hold_spin(&c, 300000000ull);   /* 0.3 s: the clock up from idle */
    CK(cuStreamSynchronize(c.st));

    char big[1024];
    memset(big, 0, sizeof big);
    void *pbig[] = {big};
    /* 1. the timing method: an empty kernel, each hold, with and without the flush */
    Launch e1 = {f0, 1, 128, 0, NULL, 0}, e132 = {f0, 132, 128, 0, NULL, 0};
    for (int f = 1; f >= 0; f--)
        for (int h = NONE; h <= GATE_SPIN; h++)
            line("empty 1x128", (enum Hold)h, f, time_case(&c, (enum Hold)h, f, &e1, runs), NULL);
    for (int h = GATE; h <= GATE_SPIN; h++)
        line("empty 132x128", (enum Hold)h, 1, time_case(&c, (enum Hold)h, 1, &e132, runs), NULL);
    /* 2. the parameter size; a launch attribute */
    Launch p64 = {f64, 1, 128, 0, pbig, 0}, p384 = {f384, 1, 128, 0, pbig, 0};
    Launch p512 = {f512, 1, 128, 0, pbig, 0}, p768 = {f768, 1, 128, 0, pbig, 0};
    Launch p1k = {f1024, 1, 128, 0, pbig, 0}, ex = {f0, 1, 128, 0, NULL, 1};
    for (int h = GATE; h <= GATE_SPIN; h++) {
        line("params 64 B", (enum Hold)h, 1, time_case(&c, (enum Hold)h, 1, &p64, runs), NULL);
        line("params 384 B", (enum Hold)h, 1, time_case(&c, (enum Hold)h, 1, &p384, runs), NULL);
        line("params 512 B", (enum Hold)h, 1, time_case(&c, (enum Hold)h, 1, &p512, runs), NULL);
        line("params 768 B", (enum Hold)h, 1, time_case(&c, (enum Hold)h, 1, &p768, runs), NULL);
        line("params 1024 B", (enum Hold)h, 1, time_case(&c, (enum Hold)h, 1, &p1k, runs), NULL);
        line("cuLaunchKernelEx cluster 1", (enum Hold)h, 1, time_case(&c, (enum Hold)h, 1, &ex, runs), NULL);
    }
    if (getenv("PROBE_QUICK"))   /* the rest measured no difference (bench/RESULTS.md) */
        return 0;
    /* 3. dynamic shared memory after the flush, the carve-out attribute unset and at 100% */
    CK(cuFuncSetAttribute(fsm, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 227 * 1024));
    static const unsigned sizes[] = {0, 16 << 10, 64 << 10, 128 << 10, 200 << 10, 227 << 10};
    unsigned n = 1;
    void *pn[] = {&n};
    for (int carve = 0; carve < 2; carve++) {
        if (carve)
            CK(cuFuncSetAttribute(fsm, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100));
        for (unsigned i = 0; i < sizeof sizes / sizeof *sizes; i++)
            for (int f = 1; f >= 0; f--) {
                Launch l = {fsm, 132, 128, sizes[i], pn, 0};
                char x[80];
                snprintf(x, sizeof x, ",\"smem\":%u,\"carveout\":%s", sizes[i], carve ? "100" : "null");
                line("empty 132x128 +smem", GATE, f, time_case(&c, GATE, f, &l, runs), x);
            }
    }
    /* 4. a tiny row kernel: 8 KB per row, per hold */
    CUdeviceptr x, y;
    CK(cuMemAlloc(&x, 16 << 20));
    CK(cuMemAlloc(&y, 16 << 20));
    CK(cuMemsetD8(x, 0, 16 << 20));
    void *pr[] = {&x, &y};
    static const unsigned nrows[] = {1, 64, 1024};
    for (unsigned i = 0; i < 3; i++)
        for (int h = GATE; h <= GATE_SPIN; h++) {
            Launch l = {frows, nrows[i], 512, 0, pr, 0};
            char xx[32];
            snprintf(xx, sizeof xx, ",\"rows\":%u", nrows[i]);
            line("copy rows of 8 KB", (enum Hold)h, 1, time_case(&c, (enum Hold)h, 1, &l, runs), xx);
        }
    return 0;
}
