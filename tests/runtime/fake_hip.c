/* fake_hip.c — a stand-in for libamdhip64 that the HIP backend (runtime/hip.c)
 * dlopens through $CAKE_LIBHIP in tests: one "AMD Instinct MI300X" (gfx942)
 * whose memory is host memory, whose launches run nothing, and which writes
 * what it was asked to do, one line per call, to $FAKE_HIP_LOG:
 *
 *   malloc ID BYTES                  hipMalloc: allocation ID (0, 1, ...)
 *   module BYTES MACHINE             hipModuleLoadData: the ELF's size and e_machine
 *   function NAME                    hipModuleGetFunction
 *   launch NAME GX GY GZ BX BY BZ SHARED NPARAMS
 *   param I buf ID OFFSET            a parameter holding an address inside allocation ID
 *   param I int VALUE                 ... or the integer of its SIZE bytes (little endian)
 *
 * The sizes of the parameters are the kernel's explicit arguments: the code
 * object's metadata (.args, .size) lists them; the test reads them with
 * llvm-readelf and passes them in $FAKE_HIP_ARG_SIZES ("8,8,8,4"), so the fake
 * reads exactly what hip.c passed in kernelParams. A launch without that list
 * logs only its geometry. Every function answers hipSuccess (0). */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int hipError_t;
enum { OK = 0, NOT_FOUND = 500, INVALID_VALUE = 1 };

#define MAXBUF 256
static struct { char *p; size_t n; } bufs[MAXBUF];
static int nbufs;
static char fn_name[128];

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    const char *path = getenv("FAKE_HIP_LOG");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (!f)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fclose(f);
}

hipError_t hipInit(unsigned flags) { (void)flags; return OK; }
hipError_t hipDriverGetVersion(int *v) { *v = 60200000; return OK; }
hipError_t hipGetDeviceCount(int *n) { *n = 1; return OK; }
hipError_t hipDeviceGet(int *d, int ordinal) { *d = ordinal; return OK; }
hipError_t hipSetDevice(int d) { (void)d; return OK; }

hipError_t hipDeviceGetName(char *name, int len, int dev)
{
    (void)dev;
    snprintf(name, (size_t)len, "AMD Instinct MI300X");
    return OK;
}

hipError_t hipDeviceGetAttribute(int *v, int attr, int dev)
{
    (void)dev;
    switch (attr) {
    case 5: *v = 2100000; break;      /* clock, kHz */
    case 19: *v = 4 << 20; break;     /* L2 */
    case 23: *v = 9; break;           /* gfx9 */
    case 56: *v = 1024; break;
    case 59: *v = 8192; break;
    case 60: *v = 2600000; break;
    case 61: *v = 4; break;
    case 63: *v = 304; break;         /* CUs */
    case 72: *v = 131072; break;
    case 74: case 75: case 76: *v = 65536; break;
    case 87: *v = 64; break;          /* wavefront */
    default: *v = 0; break;
    }
    return OK;
}

hipError_t hipDeviceTotalMem(size_t *b, int dev) { (void)dev; *b = (size_t)192 << 30; return OK; }

/* the R0600 hipDeviceProp_t: gcnArchName at byte 1160 (runtime/hip_api.h) */
hipError_t hipGetDevicePropertiesR0600(void *props, int dev)
{
    (void)dev;
    strcpy((char *)props + 1160, "gfx942:sramecc+:xnack-");
    return OK;
}

hipError_t hipStreamCreateWithFlags(void **s, unsigned f) { (void)f; *s = (void *)&bufs; return OK; }
hipError_t hipStreamDestroy(void *s) { (void)s; return OK; }
hipError_t hipStreamQuery(void *s) { (void)s; return OK; }
hipError_t hipEventCreate(void **e) { static int ev; *e = &ev; return OK; }
hipError_t hipEventDestroy(void *e) { (void)e; return OK; }
hipError_t hipEventRecord(void *e, void *s) { (void)e, (void)s; return OK; }
hipError_t hipEventQuery(void *e) { (void)e; return OK; }
hipError_t hipEventElapsedTime(float *ms, void *a, void *b) { (void)a, (void)b; *ms = 1.0f; return OK; }

hipError_t hipModuleLoadData(void **m, const void *image)
{
    const unsigned char *e = image;
    if (memcmp(e, "\177ELF", 4) != 0)
        return 200;   /* hipErrorInvalidImage */
    uint64_t shoff, size;
    uint16_t machine, shentsize, shnum;
    memcpy(&machine, e + 18, 2);
    memcpy(&shoff, e + 40, 8);
    memcpy(&shentsize, e + 58, 2);
    memcpy(&shnum, e + 60, 2);
    size = shoff + (uint64_t)shentsize * shnum;   /* the section headers end the file */
    logf_("module %llu %u\n", (unsigned long long)size, machine);
    *m = (void *)image;
    return OK;
}

hipError_t hipModuleUnload(void *m) { (void)m; return OK; }

hipError_t hipModuleGetFunction(void **f, void *m, const char *name)
{
    (void)m;
    snprintf(fn_name, sizeof fn_name, "%s", name);
    logf_("function %s\n", name);
    *f = fn_name;
    return OK;
}

hipError_t hipFuncGetAttribute(int *v, int attr, void *f)
{
    (void)f;
    *v = attr == 0 ? 1024 : attr == 4 ? 128 : 0;
    return OK;
}

hipError_t hipMalloc(void **p, size_t n)
{
    if (nbufs == MAXBUF)
        return 2;     /* hipErrorOutOfMemory */
    bufs[nbufs].p = calloc(1, n ? n : 1);
    bufs[nbufs].n = n;
    logf_("malloc %d %zu\n", nbufs, n);
    *p = bufs[nbufs++].p;
    return *p ? OK : 2;
}

hipError_t hipFree(void *p)
{
    for (int i = 0; i < nbufs; i++)
        if (bufs[i].p == p) {
            free(p);
            bufs[i].p = NULL;
        }
    return OK;
}

hipError_t hipMemGetInfo(size_t *f, size_t *t) { *f = *t = (size_t)192 << 30; return OK; }
hipError_t hipMemsetD8Async(void *d, unsigned char v, size_t n, void *s) { (void)s; memset(d, v, n); return OK; }

hipError_t hipMemsetD32Async(void *d, int v, size_t n, void *s)
{
    (void)s;
    for (size_t i = 0; i < n; i++)
        memcpy((char *)d + 4 * i, &v, 4);
    return OK;
}

hipError_t hipMemcpyHtoDAsync(void *d, void *h, size_t n, void *s) { (void)s; memcpy(d, h, n); return OK; }
hipError_t hipMemcpyDtoHAsync(void *h, void *d, size_t n, void *s) { (void)s; memcpy(h, d, n); return OK; }
hipError_t hipMemcpyDtoDAsync(void *a, void *b, size_t n, void *s) { (void)s; memmove(a, b, n); return OK; }

static void log_param(int i, const void *at, int size)
{
    uint64_t v = 0;
    memcpy(&v, at, (size_t)size);   /* little endian, as on the GPU */
    for (int b = 0; size == 8 && b < nbufs; b++)
        if (bufs[b].p && v >= (uintptr_t)bufs[b].p && v <= (uintptr_t)bufs[b].p + bufs[b].n) {
            logf_("param %d buf %d %llu\n", i, b, (unsigned long long)(v - (uintptr_t)bufs[b].p));
            return;
        }
    logf_("param %d int %llu\n", i, (unsigned long long)v);
}

hipError_t hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                 unsigned by, unsigned bz, unsigned shared, void *stream,
                                 void **params, void **extra)
{
    (void)stream, (void)extra;
    const char *sizes = getenv("FAKE_HIP_ARG_SIZES");
    int n = 0, size[64];
    for (const char *c = sizes; c && *c && n < 64;) {
        size[n++] = atoi(c);
        c = strchr(c, ',');
        c = c ? c + 1 : NULL;
    }
    logf_("launch %s %u %u %u %u %u %u %u %d\n", (const char *)f, gx, gy, gz, bx, by, bz, shared, n);
    for (int i = 0; i < n; i++)
        if (size[i] == 4 || size[i] == 8)
            log_param(i, params[i], size[i]);
    return OK;
}

hipError_t hipHostMalloc(void **p, size_t n, unsigned f) { (void)f; *p = calloc(1, n); return *p ? OK : 2; }
hipError_t hipHostGetDevicePointer(void **d, void *h, unsigned f) { (void)f; *d = h; return OK; }
hipError_t hipHostFree(void *p) { free(p); return OK; }
const char *hipGetErrorName(hipError_t e) { return e ? "hipErrorFake" : "hipSuccess"; }
const char *hipGetErrorString(hipError_t e) { return e ? "fake error" : "no error"; }
