/* gpu_smoke.c — runs the PTX cakec emits for the SIMT examples on a CUDA GPU
 * through the driver API (dlopen'd libcuda) and checks the results against a
 * CPU reference; prints bandwidth for the large shapes. Exits 77 (skip) with
 * no GPU. A check of the codegen ABI and lowering, not the product harness
 * (that is `cakec run --check`).
 *   gpu_smoke DIR    (DIR holds vector_add.ptx copy.ptx rmsnorm.ptx softmax.ptx layernorm.ptx) */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUevent, *CUstream;
typedef unsigned long long CUdeviceptr;
static CUresult (*cuInit)(unsigned);
static CUresult (*cuDeviceGet)(CUdevice *, int);
static CUresult (*cuCtxCreate)(CUcontext *, unsigned, CUdevice);
static CUresult (*cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*cuMemFree)(CUdeviceptr);
static CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
static CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
static CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
static CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, CUstream, void **, void **);
static CUresult (*cuCtxSynchronize)(void);
static CUresult (*cuEventCreate)(CUevent *, unsigned);
static CUresult (*cuEventRecord)(CUevent, CUstream);
static CUresult (*cuEventSynchronize)(CUevent);
static CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
static CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);

#define CK(x) do { CUresult r_ = (x); if (r_) { fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_); exit(1); } } while (0)

static int load_cuda(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h)
        return 0;
#define L(f, n) *(void **)&f = dlsym(h, n)
    L(cuInit, "cuInit"); L(cuDeviceGet, "cuDeviceGet"); L(cuCtxCreate, "cuCtxCreate_v2");
    L(cuModuleLoadData, "cuModuleLoadData"); L(cuModuleGetFunction, "cuModuleGetFunction");
    L(cuMemAlloc, "cuMemAlloc_v2"); L(cuMemFree, "cuMemFree_v2"); L(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    L(cuMemcpyDtoH, "cuMemcpyDtoH_v2"); L(cuMemsetD8, "cuMemsetD8_v2"); L(cuLaunchKernel, "cuLaunchKernel");
    L(cuCtxSynchronize, "cuCtxSynchronize"); L(cuEventCreate, "cuEventCreate");
    L(cuEventRecord, "cuEventRecord"); L(cuEventSynchronize, "cuEventSynchronize");
    L(cuEventElapsedTime, "cuEventElapsedTime_v2"); L(cuFuncGetAttribute, "cuFuncGetAttribute");
    if (!cuEventElapsedTime)
        L(cuEventElapsedTime, "cuEventElapsedTime");
#undef L
    return cuInit && cuInit(0) == 0;
}

static char *slurp(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s.ptx", dir, name);
    FILE *f = fopen(p, "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", p); exit(1); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    b[fread(b, 1, (size_t)n, f)] = 0;
    fclose(f);
    return b;
}

static CUfunction get(const char *dir, const char *file, const char *kernel)
{
    CUmodule m;
    CUfunction fn;
    char *ptx = slurp(dir, file);
    CK(cuModuleLoadData(&m, ptx));
    CK(cuModuleGetFunction(&fn, m, kernel));
    int regs = 0, local = 0;
    cuFuncGetAttribute(&regs, 4 /* NUM_REGS */, fn);
    cuFuncGetAttribute(&local, 3 /* LOCAL_SIZE_BYTES */, fn);
    printf("  %-12s regs %d, local bytes %d\n", kernel, regs, local);
    return fn;
}

static float bf2f(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
static uint16_t f2bf(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}
static uint64_t rng = 88172645463325252ull;
static float frand(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (float)((rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

static CUdeviceptr dalloc(size_t n)
{
    CUdeviceptr p;
    CK(cuMemAlloc(&p, n));
    CK(cuMemsetD8(p, 0xff, n)); /* poison: NaN for floats */
    return p;
}

static float launch(CUfunction f, unsigned gx, unsigned threads, void **args, int reps)
{
    CUevent a, b;
    CK(cuEventCreate(&a, 0));
    CK(cuEventCreate(&b, 0));
    CK(cuLaunchKernel(f, gx, 1, 1, threads, 1, 1, 0, 0, args, 0)); /* warm-up */
    CK(cuEventRecord(a, 0));
    for (int i = 0; i < reps; i++)
        CK(cuLaunchKernel(f, gx, 1, 1, threads, 1, 1, 0, 0, args, 0));
    CK(cuEventRecord(b, 0));
    CK(cuEventSynchronize(b));
    float ms = 0;
    CK(cuEventElapsedTime(&ms, a, b));
    return ms / (float)reps;
}

static int fails;
static void report(const char *what, double maxerr, double tol, double gbps)
{
    int ok = maxerr <= tol;
    fails += !ok;
    printf("%s %-34s max rel err %.3g (tol %.3g)", ok ? "PASS" : "FAIL", what, maxerr, tol);
    if (gbps > 0)
        printf("  %.0f GB/s", gbps);
    printf("\n");
}

static double relerr(double got, double want)
{
    if (isnan(got))
        return INFINITY;
    return fabs(got - want) / fmax(fabs(want), 1e-3);
}

static void t_vector_add(const char *dir, int n, int bench)
{
    CUfunction f = get(dir, "vector_add", "vector_add");
    size_t bytes = (size_t)n * 4;
    float *x = malloc(bytes), *y = malloc(bytes), *z = malloc(bytes);
    for (int i = 0; i < n; i++) { x[i] = frand(); y[i] = frand(); }
    CUdeviceptr dx = dalloc(bytes), dy = dalloc(bytes), dz = dalloc(bytes);
    CK(cuMemcpyHtoD(dx, x, bytes)); CK(cuMemcpyHtoD(dy, y, bytes));
    void *args[] = {&dx, &dy, &dz, &n};
    unsigned grid = (unsigned)((n + 4095) / 4096);
    float ms = launch(f, grid, 256, args, bench ? 20 : 1);
    CK(cuMemcpyDtoH(z, dz, bytes));
    double e = 0;
    for (int i = 0; i < n; i++) e = fmax(e, relerr(z[i], (double)x[i] + y[i]));
    char w[64]; snprintf(w, sizeof w, "vector_add N=%d", n);
    report(w, e, 1e-6, bench ? 3.0 * bytes / ms / 1e6 : 0);
    cuMemFree(dx); cuMemFree(dy); cuMemFree(dz); free(x); free(y); free(z);
}

static void t_copy(const char *dir, int n, int bench)
{
    CUfunction f = get(dir, "copy", "copy");
    size_t bytes = (size_t)n * 4;
    uint32_t *x = malloc(bytes), *z = malloc(bytes);
    for (int i = 0; i < n; i++) x[i] = (uint32_t)(rng = rng * 6364136223846793005ull + 1) ;
    CUdeviceptr dx = dalloc(bytes), dz = dalloc(bytes);
    CK(cuMemcpyHtoD(dx, x, bytes));
    void *args[] = {&dx, &dz, &n};
    float ms = launch(f, 528, 256, args, bench ? 20 : 1);
    CK(cuMemcpyDtoH(z, dz, bytes));
    double e = memcmp(x, z, bytes) ? 1 : 0;
    char w[64]; snprintf(w, sizeof w, "copy N=%d", n);
    report(w, e, 0, bench ? 2.0 * bytes / ms / 1e6 : 0);
    cuMemFree(dx); cuMemFree(dz); free(x); free(z);
}

/* rmsnorm / layernorm: bf16 [M, N] */
static void t_norm(const char *dir, int layer, int m, int n, int bench)
{
    CUfunction f = get(dir, layer ? "layernorm" : "rmsnorm", layer ? "layernorm" : "rmsnorm");
    size_t cnt = (size_t)m * n;
    uint16_t *x = malloc(cnt * 2), *y = malloc(cnt * 2), *w = malloc((size_t)n * 2), *b = malloc((size_t)n * 2);
    for (size_t i = 0; i < cnt; i++) x[i] = f2bf(frand() * 3);
    for (int i = 0; i < n; i++) { w[i] = f2bf(frand()); b[i] = f2bf(frand()); }
    CUdeviceptr dx = dalloc(cnt * 2), dy = dalloc(cnt * 2), dw = dalloc((size_t)n * 2), db = dalloc((size_t)n * 2);
    CK(cuMemcpyHtoD(dx, x, cnt * 2)); CK(cuMemcpyHtoD(dw, w, (size_t)n * 2)); CK(cuMemcpyHtoD(db, b, (size_t)n * 2));
    float eps = 1e-5f;
    void *a1[] = {&dx, &dw, &dy, &eps, &m, &n};
    void *a2[] = {&dx, &dw, &db, &dy, &eps, &m, &n};
    float ms = launch(f, (unsigned)m, 256, layer ? a2 : a1, bench ? 20 : 1);
    CK(cuMemcpyDtoH(y, dy, cnt * 2));
    double e = 0;
    for (int r = 0; r < m; r++) {
        double s1 = 0, s2 = 0;
        for (int c = 0; c < n; c++) { double v = bf2f(x[(size_t)r * n + c]); s1 += v; s2 += v * v; }
        double mu = s1 / n, rs;
        if (layer) {
            double va = 0;
            for (int c = 0; c < n; c++) { double d = bf2f(x[(size_t)r * n + c]) - mu; va += d * d; }
            rs = 1 / sqrt(va / n + eps);
        } else {
            rs = 1 / sqrt(s2 / n + eps);
        }
        for (int c = 0; c < n; c++) {
            double v = bf2f(x[(size_t)r * n + c]);
            double want = layer ? (v - mu) * rs * bf2f(w[c]) + bf2f(b[c]) : v * rs * bf2f(w[c]);
            double got = bf2f(y[(size_t)r * n + c]);
            double err = isnan(got) ? INFINITY : fabs(got - want) / fmax(fabs(want), 0.05);
            e = fmax(e, err);
        }
    }
    char wh[64]; snprintf(wh, sizeof wh, "%s M=%d N=%d", layer ? "layernorm" : "rmsnorm", m, n);
    report(wh, e, 1.6e-2, bench ? 2.0 * cnt * 2 / ms / 1e6 : 0);
    cuMemFree(dx); cuMemFree(dy); cuMemFree(dw); cuMemFree(db); free(x); free(y); free(w); free(b);
}

static void t_softmax(const char *dir, int warp, int m, int n, int bench)
{
    CUfunction f = get(dir, "softmax", warp ? "softmax_warp" : "softmax");
    size_t cnt = (size_t)m * n;
    float *x = malloc(cnt * 4), *y = malloc(cnt * 4);
    for (size_t i = 0; i < cnt; i++) x[i] = frand() * 8;
    CUdeviceptr dx = dalloc(cnt * 4), dy = dalloc(cnt * 4);
    CK(cuMemcpyHtoD(dx, x, cnt * 4));
    void *args[] = {&dx, &dy, &m, &n};
    unsigned grid = warp ? (unsigned)((m + 7) / 8) : (unsigned)m;
    float ms = launch(f, grid, 256, args, bench ? 20 : 1);
    CK(cuMemcpyDtoH(y, dy, cnt * 4));
    double e = 0;
    for (int r = 0; r < m; r++) {
        double mx = -INFINITY, l = 0;
        for (int c = 0; c < n; c++) mx = fmax(mx, x[(size_t)r * n + c]);
        for (int c = 0; c < n; c++) l += exp(x[(size_t)r * n + c] - mx);
        for (int c = 0; c < n; c++) {
            double want = exp(x[(size_t)r * n + c] - mx) / l, got = y[(size_t)r * n + c];
            e = fmax(e, isnan(got) ? INFINITY : fabs(got - want) / fmax(want, 1e-6 / n));
        }
    }
    char wh[64]; snprintf(wh, sizeof wh, "%s M=%d N=%d", warp ? "softmax_warp" : "softmax", m, n);
    report(wh, e, 2e-5 * 64, bench ? 2.0 * cnt * 4 / ms / 1e6 : 0);
    cuMemFree(dx); cuMemFree(dy); free(x); free(y);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    if (!load_cuda()) {
        printf("skip: no CUDA driver/GPU\n");
        return 77;
    }
    CUdevice d;
    CUcontext c;
    CK(cuDeviceGet(&d, 0));
    CK(cuCtxCreate(&c, 0, d));
    t_vector_add(dir, 1000003, 0);
    t_vector_add(dir, 4099, 0);
    t_copy(dir, 1 << 20, 0);
    t_norm(dir, 0, 37, 8192, 0);
    t_norm(dir, 0, 19, 4104, 0);
    t_norm(dir, 1, 37, 8192, 0);
    t_norm(dir, 1, 19, 1000, 0);
    t_softmax(dir, 0, 33, 8192, 0);
    t_softmax(dir, 0, 17, 1004, 0);
    t_softmax(dir, 1, 41, 1024, 0);
    t_softmax(dir, 1, 13, 500, 0);
    if (argc > 2) { /* bench shapes */
        t_vector_add(dir, 1 << 28, 1);
        t_copy(dir, 1 << 28, 1);
        t_norm(dir, 0, 32768, 8192, 1);
        t_norm(dir, 0, 32768, 4096, 1);
        t_norm(dir, 1, 32768, 8192, 1);
        t_norm(dir, 1, 32768, 4096, 1);
        t_softmax(dir, 0, 32768, 8192, 1);
    }
    printf("%d failed\n", fails);
    return fails ? 1 : 0;
}
