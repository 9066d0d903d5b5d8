/* cuda.c — the CUDA Driver API backend.
 *
 * libcuda is never linked: rt_open dlopens libcuda.so.1 (or libcuda.so, or
 * $CAKE_LIBCUDA) and resolves each entry point by its versioned symbol name
 * (cuMemAlloc_v2, ...), the ABI the prototypes in cuda.h describe; cuda.h is
 * used for types and enum values only. The device runs in its primary context
 * (shared with any runtime-API user in the process, e.g. PyTorch) on a
 * non-blocking stream of its own.
 */
#define _POSIX_C_SOURCE 200809L
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if __has_include(<cuda.h>)
#include <cuda.h>

typedef struct {
    CUresult (*Init)(unsigned);
    CUresult (*DriverGetVersion)(int *);
    CUresult (*DeviceGetCount)(int *);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetName)(char *, int, CUdevice);
    CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*DeviceTotalMem)(size_t *, CUdevice);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*StreamCreate)(CUstream *, unsigned);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*StreamQuery)(CUstream);
    CUresult (*EventCreate)(CUevent *, unsigned);
    CUresult (*EventDestroy)(CUevent);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventQuery)(CUevent);
    CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*ModuleLoadDataEx)(CUmodule *, const void *, unsigned, CUjit_option *, void **);
    CUresult (*ModuleUnload)(CUmodule);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*FuncGetAttribute)(int *, CUfunction_attribute, CUfunction);
    CUresult (*FuncSetAttribute)(CUfunction, CUfunction_attribute, int);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemGetInfo)(size_t *, size_t *);
    CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
    CUresult (*MemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **);
    CUresult (*LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
    CUresult (*MemHostAlloc)(void **, size_t, unsigned);
    CUresult (*MemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned);
    CUresult (*MemFreeHost)(void *);
    CUresult (*StreamWaitValue32)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
    CUresult (*GetErrorName)(CUresult, const char **);
    CUresult (*GetErrorString)(CUresult, const char **);
    CUresult (*TensorMapEncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                     const cuuint64_t *, const cuuint64_t *,
                                     const cuuint32_t *, const cuuint32_t *,
                                     CUtensorMapInterleave, CUtensorMapSwizzle,
                                     CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
} CuApi;

#define SYM(f, name, alt, opt) {offsetof(CuApi, f), name, alt, opt}
static const RtSym cu_syms[] = {
    SYM(Init, "cuInit", NULL, false),
    SYM(DriverGetVersion, "cuDriverGetVersion", NULL, false),
    SYM(DeviceGetCount, "cuDeviceGetCount", NULL, false),
    SYM(DeviceGet, "cuDeviceGet", NULL, false),
    SYM(DeviceGetName, "cuDeviceGetName", NULL, false),
    SYM(DeviceGetAttribute, "cuDeviceGetAttribute", NULL, false),
    SYM(DeviceTotalMem, "cuDeviceTotalMem_v2", NULL, false),
    SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL, false),
    SYM(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease",
        false),
    SYM(CtxSetCurrent, "cuCtxSetCurrent", NULL, false),
    SYM(StreamCreate, "cuStreamCreate", NULL, false),
    SYM(StreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy", false),
    SYM(StreamQuery, "cuStreamQuery", NULL, false),
    SYM(EventCreate, "cuEventCreate", NULL, false),
    SYM(EventDestroy, "cuEventDestroy_v2", "cuEventDestroy", false),
    SYM(EventRecord, "cuEventRecord", NULL, false),
    SYM(EventQuery, "cuEventQuery", NULL, false),
    SYM(EventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime", false),
    SYM(ModuleLoadDataEx, "cuModuleLoadDataEx", NULL, false),
    SYM(ModuleUnload, "cuModuleUnload", NULL, false),
    SYM(ModuleGetFunction, "cuModuleGetFunction", NULL, false),
    SYM(FuncGetAttribute, "cuFuncGetAttribute", NULL, false),
    SYM(FuncSetAttribute, "cuFuncSetAttribute", NULL, false),
    SYM(MemAlloc, "cuMemAlloc_v2", NULL, false),
    SYM(MemFree, "cuMemFree_v2", NULL, false),
    SYM(MemGetInfo, "cuMemGetInfo_v2", NULL, false),
    SYM(MemsetD8Async, "cuMemsetD8Async", NULL, false),
    SYM(MemsetD32Async, "cuMemsetD32Async", NULL, false),
    SYM(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", NULL, false),
    SYM(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", NULL, false),
    SYM(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", NULL, false),
    SYM(LaunchKernel, "cuLaunchKernel", NULL, false),
    SYM(LaunchKernelEx, "cuLaunchKernelEx", NULL, true),
    SYM(MemHostAlloc, "cuMemHostAlloc", NULL, false),
    SYM(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", NULL, false),
    SYM(MemFreeHost, "cuMemFreeHost", NULL, false),
    SYM(StreamWaitValue32, "cuStreamWaitValue32_v2", "cuStreamWaitValue32", true),
    SYM(GetErrorName, "cuGetErrorName", NULL, false),
    SYM(GetErrorString, "cuGetErrorString", NULL, false),
    SYM(TensorMapEncodeTiled, "cuTensorMapEncodeTiled", NULL, true),
};
#undef SYM

static const RtLibSpec cu_lib = {
    .what = "CUDA driver",
    .env = "CAKE_LIBCUDA",
    .names = {"libcuda.so.1", "libcuda.so", NULL},
    .too_old = " (driver too old?)",
    .syms = cu_syms,
    .nsyms = sizeof cu_syms / sizeof cu_syms[0],
};

typedef struct {
    RtLib lib;     /* lib.inited: cuInit was called */
    bool retained; /* the primary context is retained */
    CuApi api;
    CUdevice device;
    CUcontext ctx;
    CUstream stream;
    CUmodule spin_mod;     /* the timing's spin kernel, loaded on first use */
    CUfunction spin_fn;
} CudaState;

_Static_assert(sizeof(CUtensorMap) == sizeof(RtTensorMap), "RtTensorMap is a CUtensorMap");
_Static_assert(sizeof(CUdeviceptr) == sizeof(RtPtr), "RtPtr is a CUdeviceptr");
_Static_assert((int)RT_TMA_BF16 == (int)CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 &&
                   (int)RT_TMA_TF32_FTZ == (int)CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ,
               "RtTmaDtype follows CUtensorMapDataType");

static CudaState *st_of(RtDevice *dev) { return dev->be; }

/* ---- errors ------------------------------------------------------------- */

/* Errors after which the context is unusable. */
static bool is_sticky(CUresult r)
{
    switch ((int)r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS: case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT: case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION: case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE: case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED: case CUDA_ERROR_ECC_UNCORRECTABLE:
    case 721: /* CUDA_ERROR_TENSOR_MEMORY_LEAK (CUDA 12.8+) */
    case 226: /* CUDA_ERROR_CONTAINED (CUDA 12.8+) */
        return true;
    default:
        return false;
    }
}

static RtStatus classify(CUresult r, RtStatus dflt)
{
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
        return RT_OOM;
    return is_sticky(r) ? RT_FAULT : dflt;
}

/* Names for the errors a driver may return before cuGetErrorName works
 * (the toolkit's stub libcuda answers nothing else). */
static const char *early_name(CUresult r)
{
    switch ((int)r) {
    case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY (the toolkit's stub libcuda, not a driver)";
    case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER (the driver is older than the runtime)";
    case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_UNKNOWN: return "CUDA_ERROR_UNKNOWN";
    default: return NULL;
    }
}

/* "what: CUDA_ERROR_X (text)"; what may be NULL. */
static RtStatus cu_fail(RtDevice *dev, CUresult r, RtStatus st, const char *what)
{
    CudaState *s = st_of(dev);
    const char *name = NULL, *text = NULL;
    if (s->api.GetErrorName(r, &name) != CUDA_SUCCESS || !name)
        name = early_name(r);
    if (s->api.GetErrorString(r, &text) != CUDA_SUCCESS || !text)
        text = NULL;
    return rt__fail_driver(dev, st, what, name, text, "CUresult", (int)r);
}

#define CU_TRY(dev, call, st, what)                                    \
    do {                                                               \
        CUresult r_ = (call);                                          \
        if (r_ != CUDA_SUCCESS)                                        \
            return cu_fail((dev), r_, classify(r_, (st)), (what));     \
    } while (0)

/* ---- loading the driver ------------------------------------------------- */

static RtStatus load_lib(RtDevice *dev, int ordinal)
{
    (void)ordinal;
    return rt__load_lib(dev, &st_of(dev)->lib, &cu_lib, &st_of(dev)->api);
}

static RtStatus init_driver(RtDevice *dev, int ordinal)
{
    CudaState *s = st_of(dev);
    s->lib.inited = true; /* even a failed init leaves the library in use */
    CUresult r = s->api.Init(0);
    if (r != CUDA_SUCCESS)
        return cu_fail(dev, r, RT_NO_DEVICE, "no CUDA device: cuInit");
    int count = 0;
    CU_TRY(dev, s->api.DeviceGetCount(&count), RT_NO_DEVICE, "no CUDA device: cuDeviceGetCount");
    if (ordinal < 0 || ordinal >= count)
        return rt__fail(dev, RT_NO_DEVICE, "no CUDA device %d: the driver sees %d", ordinal,
                        count);
    CU_TRY(dev, s->api.DeviceGet(&s->device, ordinal), RT_NO_DEVICE, "cuDeviceGet");
    r = s->api.DevicePrimaryCtxRetain(&s->ctx, s->device);
    if (is_sticky(r))
        return cu_fail(dev, r, RT_FAULT,
                       "CUDA cannot be used again in this process after a kernel fault: "
                       "cuDevicePrimaryCtxRetain");
    if (r != CUDA_SUCCESS)
        return cu_fail(dev, r, classify(r, RT_NO_DEVICE), "cuDevicePrimaryCtxRetain");
    s->retained = true;
    CU_TRY(dev, s->api.CtxSetCurrent(s->ctx), RT_ERROR, "cuCtxSetCurrent");
    CU_TRY(dev, s->api.StreamCreate(&s->stream, CU_STREAM_NON_BLOCKING), RT_ERROR,
           "cuStreamCreate");
    return RT_OK;
}

/* ---- device info -------------------------------------------------------- */

#define ATTR(a, f) RT__ATTR(RtDeviceInfo, CU_DEVICE_ATTRIBUTE_##a, f, false)
static const RtAttr cu_attrs[] = {
    ATTR(COMPUTE_CAPABILITY_MAJOR, cc_major),
    ATTR(COMPUTE_CAPABILITY_MINOR, cc_minor),
    ATTR(MULTIPROCESSOR_COUNT, sm_count),
    ATTR(WARP_SIZE, warp_size),
    ATTR(MAX_THREADS_PER_BLOCK, max_threads_per_block),
    ATTR(MAX_REGISTERS_PER_MULTIPROCESSOR, regs_per_sm),
    ATTR(CLOCK_RATE, clock_khz),
    ATTR(MEMORY_CLOCK_RATE, mem_clock_khz),
    ATTR(GLOBAL_MEMORY_BUS_WIDTH, mem_bus_bits),
    ATTR(L2_CACHE_SIZE, l2_bytes),
    ATTR(MAX_SHARED_MEMORY_PER_BLOCK, shared_per_block),
    ATTR(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, shared_per_block_optin),
    ATTR(MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, shared_per_sm),
    ATTR(PCI_DOMAIN_ID, pci_domain),
    ATTR(PCI_BUS_ID, pci_bus),
    ATTR(PCI_DEVICE_ID, pci_device),
};
#undef ATTR

static RtStatus get_attr(RtDevice *dev, void *obj, int a, bool optional, int *out)
{
    (void)obj, (void)optional;
    CudaState *s = st_of(dev);
    CU_TRY(dev, s->api.DeviceGetAttribute(out, (CUdevice_attribute)a, s->device), RT_ERROR,
           "cuDeviceGetAttribute");
    return RT_OK;
}

static RtStatus read_info(RtDevice *dev, int ordinal)
{
    (void)ordinal;
    CudaState *s = st_of(dev);
    RtDeviceInfo *in = &dev->info;
    in->backend = RT_CUDA;
    CU_TRY(dev, s->api.DeviceGetName(in->name, (int)sizeof in->name, s->device), RT_ERROR,
           "cuDeviceGetName");
    RtStatus st = rt__read_attrs(dev, get_attr, NULL, cu_attrs,
                                 sizeof cu_attrs / sizeof cu_attrs[0], in);
    if (st != RT_OK)
        return st;
    CU_TRY(dev, s->api.DeviceTotalMem(&in->global_bytes, s->device), RT_ERROR,
           "cuDeviceTotalMem");
    CU_TRY(dev, s->api.DriverGetVersion(&in->driver_version), RT_ERROR, "cuDriverGetVersion");
    snprintf(in->arch, sizeof in->arch, "sm_%d%d", in->cc_major, in->cc_minor);
    return RT_OK;
}

/* ---- open, close, bind -------------------------------------------------- */

static void cu_close(RtDevice *dev, bool hung)
{
    CudaState *s = st_of(dev);
    if (!s)
        return;
    if (!hung && s->lib.inited) {
        if (s->spin_mod)
            s->api.ModuleUnload(s->spin_mod);
        if (s->stream)
            s->api.StreamDestroy(s->stream);
        if (s->retained)
            s->api.DevicePrimaryCtxRelease(s->device);
    }
    rt__free_state(dev);
}

static RtStatus cu_open(RtDevice *dev, int ordinal)
{
    static const RtOpenStep steps[] = {load_lib, init_driver, read_info};
    return rt__open_steps(dev, ordinal, sizeof(CudaState), steps, sizeof steps / sizeof *steps);
}

static RtStatus cu_bind(RtDevice *dev)
{
    CudaState *s = st_of(dev);
    CU_TRY(dev, s->api.CtxSetCurrent(s->ctx), RT_ERROR, "cuCtxSetCurrent");
    return RT_OK;
}

/* ---- modules ------------------------------------------------------------ */

enum { JIT_LOG_BYTES = RT__LOG_BYTES / 2 - 1 };

/* len 0: NUL-terminated, which an ELF or fatbin header is not within 4 bytes */
static bool is_binary(const unsigned char *p, size_t len)
{
    static const unsigned char elf[4] = {0x7f, 'E', 'L', 'F'};
    static const unsigned char fatbin[4] = {0x50, 0xed, 0x55, 0xba}; /* 0xba55ed50 LE */
    if ((len ? len : strnlen((const char *)p, 4)) < 4)
        return false;
    return memcmp(p, elf, 4) == 0 || memcmp(p, fatbin, 4) == 0;
}

/* PTX must reach the driver NUL-terminated: copy it when it is not. */
static const void *terminated(const void *image, size_t len, char **copy)
{
    *copy = NULL;
    if (len == 0 || is_binary(image, len) || memchr(image, '\0', len))
        return image;
    *copy = malloc(len + 1);
    if (*copy) {
        memcpy(*copy, image, len);
        (*copy)[len] = '\0';
    }
    return *copy;
}

/* Copies the JIT's error log (on failure) and info log into the caller's. */
static void give_log(char *log, size_t loglen, const char *errlog, const char *infolog,
                     bool failed)
{
    if (!log || !loglen)
        return;
    if (failed && errlog[0])
        snprintf(log, loglen, "%s%s%s", errlog, infolog[0] ? "\n" : "", infolog);
    else
        rt__copystr(log, loglen, infolog);
}

static RtStatus load_failed(RtDevice *dev, CUresult r, const char *errlog)
{
    RtStatus st = classify(r, RT_LOAD_ERROR);
    cu_fail(dev, r, st, "module load failed");
    const char *cur = errlog;
    RtJitMsg m;
    while (rt_jit_log_next(&cur, &m))
        if (m.error) {
            size_t n = strlen(dev->err);
            snprintf(dev->err + n, sizeof dev->err - n, "; first JIT error: line %d: %.*s",
                     m.line, m.len, m.text);
            break;
        }
    return st;
}

static RtStatus cu_module_load(RtDevice *dev, const void *image, size_t len, void **mod,
                               char *log, size_t loglen)
{
    CudaState *s = st_of(dev);
    char *copy, *logs = calloc(2, JIT_LOG_BYTES);
    const void *img = terminated(image, len, &copy);
    if (!logs || !img) {
        free(logs);
        free(copy);
        return rt__fail(dev, RT_ERROR, "out of host memory");
    }
    char *errlog = logs, *infolog = logs + JIT_LOG_BYTES;
    CUjit_option opt[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                          CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                          CU_JIT_LOG_VERBOSE};
    void *val[] = {errlog, (void *)(uintptr_t)(JIT_LOG_BYTES - 1), infolog,
                   (void *)(uintptr_t)(JIT_LOG_BYTES - 1), (void *)(uintptr_t)1};
    CUmodule m = NULL;
    CUresult r = s->api.ModuleLoadDataEx(&m, img, 5, opt, val);
    give_log(log, loglen, errlog, infolog, r != CUDA_SUCCESS);
    RtStatus st = r == CUDA_SUCCESS ? RT_OK : load_failed(dev, r, errlog);
    free(logs);
    free(copy);
    *mod = m;
    return st;
}

static void cu_module_unload(RtDevice *dev, void *mod)
{
    st_of(dev)->api.ModuleUnload(mod); /* nothing to do about a failure here */
}

static RtStatus cu_function(RtDevice *dev, void *mod, const char *name, void **fn)
{
    CudaState *s = st_of(dev);
    CUfunction f = NULL;
    CUresult r = s->api.ModuleGetFunction(&f, mod, name);
    if (r == CUDA_ERROR_NOT_FOUND)
        return rt__fail(dev, RT_INVALID, "no kernel '%s' in the module", name);
    if (r != CUDA_SUCCESS)
        return cu_fail(dev, r, classify(r, RT_ERROR), "cuModuleGetFunction");
    *fn = f;
    return RT_OK;
}

#define ATTR(a, f) RT__ATTR(RtFuncInfo, CU_FUNC_ATTRIBUTE_##a, f, false)
static const RtAttr cu_func_attrs[] = {
    ATTR(NUM_REGS, regs),
    ATTR(LOCAL_SIZE_BYTES, local_bytes),
    ATTR(SHARED_SIZE_BYTES, static_shared_bytes),
    ATTR(CONST_SIZE_BYTES, const_bytes),
    ATTR(MAX_THREADS_PER_BLOCK, max_threads),
    ATTR(MAX_DYNAMIC_SHARED_SIZE_BYTES, max_dyn_shared_bytes),
    ATTR(PTX_VERSION, ptx_version),
    ATTR(BINARY_VERSION, binary_version),
};
#undef ATTR

static RtStatus get_func_attr(RtDevice *dev, void *fn, int a, bool optional, int *out)
{
    (void)optional;
    CU_TRY(dev, st_of(dev)->api.FuncGetAttribute(out, (CUfunction_attribute)a, fn), RT_ERROR,
           "cuFuncGetAttribute");
    return RT_OK;
}

static RtStatus cu_func_info(RtDevice *dev, void *fn, RtFuncInfo *out)
{
    return rt__read_attrs(dev, get_func_attr, fn, cu_func_attrs,
                          sizeof cu_func_attrs / sizeof cu_func_attrs[0], out);
}

static RtStatus cu_func_set_shared(RtDevice *dev, void *fn, unsigned bytes)
{
    CudaState *s = st_of(dev);
    CU_TRY(dev,
           s->api.FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   (int)bytes),
           RT_INVALID, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    return RT_OK;
}

static RtStatus cu_func_set_carveout(RtDevice *dev, void *fn, int percent)
{
    CudaState *s = st_of(dev);
    CU_TRY(dev, s->api.FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, percent),
           RT_INVALID, "cuFuncSetAttribute(PREFERRED_SHARED_MEMORY_CARVEOUT)");
    return RT_OK;
}

/* ---- buffers ------------------------------------------------------------ */

static RtStatus cu_alloc(RtDevice *dev, size_t bytes, RtPtr *out)
{
    CudaState *s = st_of(dev);
    CUdeviceptr p = 0;
    CUresult r = s->api.MemAlloc(&p, bytes);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
        size_t freeb = 0, total = 0;
        s->api.MemGetInfo(&freeb, &total);
        return rt__fail_oom(dev, bytes, freeb, total);
    }
    if (r != CUDA_SUCCESS)
        return cu_fail(dev, r, classify(r, RT_ERROR), "cuMemAlloc");
    *out = p;
    return RT_OK;
}

static RtStatus cu_free(RtDevice *dev, RtPtr p)
{
    CU_TRY(dev, st_of(dev)->api.MemFree(p), RT_ERROR, "cuMemFree");
    return RT_OK;
}

static RtStatus cu_memset(RtDevice *dev, RtPtr p, uint32_t v, size_t count, int width)
{
    CudaState *s = st_of(dev);
    if (width == 1)
        CU_TRY(dev, s->api.MemsetD8Async(p, (unsigned char)v, count, s->stream), RT_ERROR,
               "cuMemsetD8Async");
    else
        CU_TRY(dev, s->api.MemsetD32Async(p, v, count, s->stream), RT_ERROR,
               "cuMemsetD32Async");
    return RT_OK;
}

static RtStatus cu_copy(RtDevice *dev, RtCopyDir dir, void *dst, const void *src, size_t bytes)
{
    CudaState *s = st_of(dev);
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)dst, sp = (CUdeviceptr)(uintptr_t)src;
    if (dir == RT_H2D)
        CU_TRY(dev, s->api.MemcpyHtoDAsync(d, src, bytes, s->stream), RT_ERROR,
               "cuMemcpyHtoDAsync");
    else if (dir == RT_D2H)
        CU_TRY(dev, s->api.MemcpyDtoHAsync(dst, sp, bytes, s->stream), RT_ERROR,
               "cuMemcpyDtoHAsync");
    else
        CU_TRY(dev, s->api.MemcpyDtoDAsync(d, sp, bytes, s->stream), RT_ERROR,
               "cuMemcpyDtoDAsync");
    return RT_OK;
}

/* ---- launches, the stream, events --------------------------------------- */

static CUresult launch_cluster(CudaState *s, const RtLaunch *l, CUfunction f)
{
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = rt__dim1(l->cluster[0]);
    attr.value.clusterDim.y = rt__dim1(l->cluster[1]);
    attr.value.clusterDim.z = rt__dim1(l->cluster[2]);
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = rt__dim1(l->grid[0]);
    cfg.gridDimY = rt__dim1(l->grid[1]);
    cfg.gridDimZ = rt__dim1(l->grid[2]);
    cfg.blockDimX = rt__dim1(l->block[0]);
    cfg.blockDimY = rt__dim1(l->block[1]);
    cfg.blockDimZ = rt__dim1(l->block[2]);
    cfg.sharedMemBytes = l->shared_bytes;
    cfg.hStream = l->stream ? (CUstream)l->stream : s->stream;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    return s->api.LaunchKernelEx(&cfg, f, l->params, NULL);
}

static RtStatus cu_launch(RtDevice *dev, const RtLaunch *l, void *fn)
{
    CudaState *s = st_of(dev);
    bool cluster = l->cluster[0] || l->cluster[1] || l->cluster[2];
    if (cluster && !s->api.LaunchKernelEx)
        return rt__fail(dev, RT_UNSUPPORTED,
                        "kernel '%s': cluster launch needs cuLaunchKernelEx (CUDA 12)",
                        l->fn->name);
    CUresult r = cluster ? launch_cluster(s, l, fn)
                         : s->api.LaunchKernel(fn, rt__dim1(l->grid[0]), rt__dim1(l->grid[1]),
                                               rt__dim1(l->grid[2]), rt__dim1(l->block[0]),
                                               rt__dim1(l->block[1]), rt__dim1(l->block[2]),
                                               l->shared_bytes, l->stream ? (CUstream)l->stream : s->stream,
                                               l->params, NULL);
    if (r == CUDA_SUCCESS)
        return RT_OK;
    char what[200];
    snprintf(what, sizeof what, "launch of kernel '%s' failed", l->fn->name);
    return cu_fail(dev, r, classify(r, RT_LAUNCH_ERROR), what);
}

/* A query's answer: done, still running, or the error. */
static RtStatus cu_poll(RtDevice *dev, CUresult r)
{
    if (r == CUDA_SUCCESS)
        return RT_OK;
    if (r == CUDA_ERROR_NOT_READY)
        return RT__PENDING;
    return cu_fail(dev, r, classify(r, RT_ERROR), NULL);
}

static RtStatus cu_query(RtDevice *dev)
{
    return cu_poll(dev, st_of(dev)->api.StreamQuery(st_of(dev)->stream));
}

static RtStatus cu_event_create(RtDevice *dev, void **ev)
{
    CUevent e = NULL;
    CU_TRY(dev, st_of(dev)->api.EventCreate(&e, CU_EVENT_DEFAULT), RT_ERROR, "cuEventCreate");
    *ev = e;
    return RT_OK;
}

static void cu_event_destroy(RtDevice *dev, void *ev)
{
    st_of(dev)->api.EventDestroy(ev); /* nothing to do about a failure here */
}

static RtStatus cu_event_record(RtDevice *dev, void *ev)
{
    CudaState *s = st_of(dev);
    CU_TRY(dev, s->api.EventRecord(ev, s->stream), RT_ERROR, "cuEventRecord");
    return RT_OK;
}

static RtStatus cu_event_query(RtDevice *dev, void *ev)
{
    return cu_poll(dev, st_of(dev)->api.EventQuery(ev));
}

static RtStatus cu_event_elapsed(RtDevice *dev, void *start, void *stop, float *ms)
{
    CU_TRY(dev, st_of(dev)->api.EventElapsedTime(ms, start, stop), RT_ERROR,
           "cuEventElapsedTime");
    return RT_OK;
}

/* ---- the timing gate ----------------------------------------------------- */

static RtStatus cu_gate_create(RtDevice *dev, volatile uint32_t **host, RtPtr *dptr)
{
    CudaState *s = st_of(dev);
    if (!s->api.StreamWaitValue32)
        return rt__fail(dev, RT_UNSUPPORTED, "this CUDA driver has no cuStreamWaitValue32");
    void *p = NULL;
    CUdeviceptr d = 0;
    CU_TRY(dev, s->api.MemHostAlloc(&p, sizeof(uint32_t), CU_MEMHOSTALLOC_DEVICEMAP),
           RT_ERROR, "cuMemHostAlloc");
    CUresult r = s->api.MemHostGetDevicePointer(&d, p, 0);
    if (r != CUDA_SUCCESS) {
        s->api.MemFreeHost(p);
        return cu_fail(dev, r, classify(r, RT_ERROR), "cuMemHostGetDevicePointer");
    }
    *host = p;
    **host = 0;
    *dptr = d;
    return RT_OK;
}

static void cu_gate_free(RtDevice *dev, volatile uint32_t *host)
{
    st_of(dev)->api.MemFreeHost((void *)(uintptr_t)host); /* nothing to do about a failure */
}

static RtStatus cu_wait_value(RtDevice *dev, RtPtr dptr, uint32_t value)
{
    CudaState *s = st_of(dev);
    CU_TRY(dev, s->api.StreamWaitValue32(s->stream, dptr, value, CU_STREAM_WAIT_VALUE_GEQ),
           RT_ERROR, "cuStreamWaitValue32");
    return RT_OK;
}

/* A kernel of one thread that spins for ns nanoseconds of the global timer:
 * the hold the peers' timer uses (bench/device/gated.py), queued after the
 * gate when RtTimeOpts.spin_us asks for it. */
static const char spin_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry cake_spin(.param .u64 ns) {\n"
    "  .reg .u64 %t<4>; .reg .pred %p;\n"
    "  ld.param.u64 %t3, [ns]; mov.u64 %t0, %globaltimer;\n"
    "again: mov.u64 %t1, %globaltimer; sub.u64 %t2, %t1, %t0; setp.lt.u64 %p, %t2, %t3;\n"
    "  @%p bra again;\n  ret; }\n";

static RtStatus cu_spin(RtDevice *dev, uint64_t ns)
{
    CudaState *s = st_of(dev);
    if (!s->spin_fn) {
        CU_TRY(dev, s->api.ModuleLoadDataEx(&s->spin_mod, spin_ptx, 0, NULL, NULL), RT_ERROR,
               "cuModuleLoadDataEx (the spin kernel)");
        CU_TRY(dev, s->api.ModuleGetFunction(&s->spin_fn, s->spin_mod, "cake_spin"), RT_ERROR,
               "cuModuleGetFunction (the spin kernel)");
    }
    void *p[] = {&ns};
    CU_TRY(dev, s->api.LaunchKernel(s->spin_fn, 1, 1, 1, 1, 1, 1, 0, s->stream, p, NULL), RT_ERROR,
           "cuLaunchKernel (the spin kernel)");
    return RT_OK;
}

/* ---- tensor maps -------------------------------------------------------- */

static CUtensorMapSwizzle swizzle_of(unsigned bytes)
{
    return bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
         : bytes == 64  ? CU_TENSOR_MAP_SWIZZLE_64B
         : bytes == 32  ? CU_TENSOR_MAP_SWIZZLE_32B
                        : CU_TENSOR_MAP_SWIZZLE_NONE;
}

static CUtensorMapL2promotion l2_of(unsigned bytes)
{
    return bytes == 256 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
         : bytes == 128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
         : bytes == 64  ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
                        : CU_TENSOR_MAP_L2_PROMOTION_NONE;
}

static RtStatus cu_tma_encode(RtDevice *dev, const RtTmaDesc *d, RtTensorMap *out)
{
    CudaState *s = st_of(dev);
    if (!s->api.TensorMapEncodeTiled)
        return rt__fail(dev, RT_UNSUPPORTED,
                        "this CUDA driver has no cuTensorMapEncodeTiled (CUDA 12.0+)");
    if (dev->info.cc_major < 9)
        return rt__fail(dev, RT_UNSUPPORTED, "tensor maps need sm_90 or newer; this is %s",
                        dev->info.arch);
    cuuint32_t es[5];
    for (unsigned i = 0; i < 5; i++)
        es[i] = d->elem_strides[i] ? d->elem_strides[i] : 1;
    memset(out, 0, sizeof *out);
    CU_TRY(dev,
           s->api.TensorMapEncodeTiled((CUtensorMap *)out, (CUtensorMapDataType)d->dtype,
                                       d->rank, (void *)(uintptr_t)d->base, d->dims,
                                       d->strides, d->box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                       swizzle_of(d->swizzle), l2_of(d->l2_promote),
                                       d->oob_nan
                                           ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                                           : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
           RT_INVALID, "cuTensorMapEncodeTiled");
    return RT_OK;
}

const RtOps rt__cuda_ops = {
    .open = cu_open,
    .close = cu_close,
    .bind = cu_bind,
    .module_load = cu_module_load,
    .module_unload = cu_module_unload,
    .function = cu_function,
    .func_info = cu_func_info,
    .func_set_shared = cu_func_set_shared,
    .func_set_carveout = cu_func_set_carveout,
    .alloc = cu_alloc,
    .free = cu_free,
    .memset = cu_memset,
    .copy = cu_copy,
    .launch = cu_launch,
    .query = cu_query,
    .event_create = cu_event_create,
    .event_destroy = cu_event_destroy,
    .event_record = cu_event_record,
    .event_query = cu_event_query,
    .event_elapsed = cu_event_elapsed,
    .tma_encode = cu_tma_encode,
    .gate_create = cu_gate_create,
    .gate_free = cu_gate_free,
    .wait_value = cu_wait_value,
    .spin = cu_spin,
};

#else /* no cuda.h: a backend that only says so */

static RtStatus nocuda_open(RtDevice *dev, int ordinal)
{
    (void)ordinal;
    return rt__fail(dev, RT_NO_DEVICE, "no CUDA support: cakec was built without cuda.h");
}

static void nocuda_close(RtDevice *dev, bool hung)
{
    (void)dev, (void)hung;
}

const RtOps rt__cuda_ops = {.open = nocuda_open, .close = nocuda_close};

#endif
