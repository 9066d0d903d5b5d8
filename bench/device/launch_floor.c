/* launch_floor.c — the host time of a bare cuLaunchKernel, the floor a library
 * launch is compared with (bench/device/run_norms.sh; `cakec lib bench --overhead`
 * gives the library's side). Loads CUBIN, launches its kernel KERNEL (four pointer
 * arguments, an int and a float: the shape of a norm kernel's parameters) N times
 * on one stream, timing the host side of the calls only (the queue drained before
 * and after, outside the timing), and prints one JSON line.
 *
 *   cc -O2 launch_floor.c -lcuda -o launch_floor && ./launch_floor CUBIN KERNEL [N]
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
    fprintf(stderr, "launch_floor: %s failed (%d)\n", #x, (int)r_); return 3; } } while (0)

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: launch_floor CUBIN KERNEL [N]\n");
        return 1;
    }
    int n = argc > 3 ? atoi(argv[3]) : 2000;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUstream st;
    CUdeviceptr buf;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoad(&mod, argv[1]));
    CK(cuModuleGetFunction(&fn, mod, argv[2]));
    CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&buf, 1 << 20));
    CUdeviceptr a = buf, b = buf + 4096, c = buf + 8192, d = buf + 12288;
    int m = 1;
    float eps = 1e-6f;
    void *args[] = {&a, &b, &c, &d, &m, &eps};
    CK(cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, st, args, NULL));
    CK(cuStreamSynchronize(st));
    double best = 1e30, sum = 0;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_ns();
        for (int i = 0; i < n; i++)
            CK(cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, st, args, NULL));
        double t = (now_ns() - t0) / n;
        CK(cuStreamSynchronize(st));
        sum += t;
        if (t < best)
            best = t;
    }
    printf("{\"bare_launch_us\": %.3f, \"bare_launch_mean_us\": %.3f, \"launches\": %d}\n",
           best / 1e3, sum / 5 / 1e3, n);
    return 0;
}
