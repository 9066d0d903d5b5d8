/* hip.c — the HIP backend, for AMD GPUs, behind the same interface as
 * cuda.c.
 *
 * libamdhip64 is never linked: rt_open dlopens libamdhip64.so (or .so.6, .so.5,
 * or $CAKE_LIBHIP) and resolves each function with dlsym; the types and
 * constants come from hip_api.h. Modules are AMDGPU code objects (no JIT, so
 * no JIT log). Notes: the HSA runtime aborts the whole process on a GPU
 * memory fault, so RT_FAULT is rare here; HIP has no thread-block clusters and
 * no tensor maps (RT_UNSUPPORTED).
 */
#define _POSIX_C_SOURCE 200809L
#include "backend.h"
#include "hip_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    HipError (*Init)(unsigned);
    HipError (*DriverGetVersion)(int *);
    HipError (*GetDeviceCount)(int *);
    HipError (*DeviceGet)(HipDevice *, int);
    HipError (*DeviceGetName)(char *, int, HipDevice);
    HipError (*DeviceGetAttribute)(int *, HipDeviceAttr, int);
    HipError (*DeviceTotalMem)(size_t *, HipDevice);
    HipError (*SetDevice)(int);
    HipError (*GetDevicePropertiesR0600)(void *, int);
    HipError (*GetDeviceProperties)(void *, int);
    HipError (*StreamCreateWithFlags)(HipStream *, unsigned);
    HipError (*StreamDestroy)(HipStream);
    HipError (*StreamQuery)(HipStream);
    HipError (*EventCreate)(HipEvent *);
    HipError (*EventDestroy)(HipEvent);
    HipError (*EventRecord)(HipEvent, HipStream);
    HipError (*EventQuery)(HipEvent);
    HipError (*EventElapsedTime)(float *, HipEvent, HipEvent);
    HipError (*ModuleLoadData)(HipModule *, const void *);
    HipError (*ModuleUnload)(HipModule);
    HipError (*ModuleGetFunction)(HipFunction *, HipModule, const char *);
    HipError (*FuncGetAttribute)(int *, HipFuncAttr, HipFunction);
    HipError (*Malloc)(void **, size_t);
    HipError (*Free)(void *);
    HipError (*MemGetInfo)(size_t *, size_t *);
    HipError (*MemsetD8Async)(void *, unsigned char, size_t, HipStream);
    HipError (*MemsetD32Async)(void *, int, size_t, HipStream);
    HipError (*MemcpyHtoDAsync)(void *, void *, size_t, HipStream);
    HipError (*MemcpyDtoHAsync)(void *, void *, size_t, HipStream);
    HipError (*MemcpyDtoDAsync)(void *, void *, size_t, HipStream);
    HipError (*ModuleLaunchKernel)(HipFunction, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, unsigned, HipStream, void **, void **);
    HipError (*HostMalloc)(void **, size_t, unsigned);
    HipError (*HostGetDevicePointer)(void **, void *, unsigned);
    HipError (*HostFree)(void *);
    HipError (*StreamWaitValue32)(HipStream, void *, uint32_t, unsigned, uint32_t);
    const char *(*GetErrorName)(HipError);
    const char *(*GetErrorString)(HipError);
} HipApi;

#define SYM(f, opt) {offsetof(HipApi, f), "hip" #f, NULL, opt}
static const RtSym hip_syms[] = {
    SYM(Init, false), SYM(DriverGetVersion, false), SYM(GetDeviceCount, false),
    SYM(DeviceGet, false), SYM(DeviceGetName, false), SYM(DeviceGetAttribute, false),
    SYM(DeviceTotalMem, false), SYM(SetDevice, false),
    SYM(GetDevicePropertiesR0600, true), SYM(GetDeviceProperties, true),
    SYM(StreamCreateWithFlags, false), SYM(StreamDestroy, false), SYM(StreamQuery, false),
    SYM(EventCreate, false), SYM(EventDestroy, false), SYM(EventRecord, false),
    SYM(EventQuery, false), SYM(EventElapsedTime, false), SYM(ModuleLoadData, false), SYM(ModuleUnload, false),
    SYM(ModuleGetFunction, false), SYM(FuncGetAttribute, false), SYM(Malloc, false),
    SYM(Free, false), SYM(MemGetInfo, false), SYM(MemsetD8Async, false),
    SYM(MemsetD32Async, false), SYM(MemcpyHtoDAsync, false), SYM(MemcpyDtoHAsync, false),
    SYM(MemcpyDtoDAsync, false), SYM(ModuleLaunchKernel, false), SYM(HostMalloc, true),
    SYM(HostGetDevicePointer, true), SYM(HostFree, true), SYM(StreamWaitValue32, true),
    SYM(GetErrorName, false), SYM(GetErrorString, false),
};
#undef SYM

static const RtLibSpec hip_lib = {
    .what = "HIP runtime",
    .env = "CAKE_LIBHIP",
    .names = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", NULL},
    .too_old = "",
    .syms = hip_syms,
    .nsyms = sizeof hip_syms / sizeof hip_syms[0],
};

typedef struct {
    RtLib lib; /* lib.inited: hipInit was called */
    HipApi api;
    int ordinal;
    HipDevice device;
    HipStream stream;
} HipState;

static HipState *st_of(RtDevice *dev) { return dev->be; }

/* ---- errors ------------------------------------------------------------- */

static RtStatus classify(HipError e, RtStatus dflt)
{
    if (e == HIP_ERR_OUT_OF_MEMORY)
        return RT_OOM;
    if (e == HIP_ERR_ILLEGAL_ADDRESS || e == HIP_ERR_LAUNCH_FAILURE ||
        e == HIP_ERR_ASSERT)
        return RT_FAULT;
    return dflt;
}

/* "what: hipErrorX (text)"; what may be NULL. */
static RtStatus hip_fail(RtDevice *dev, HipError e, RtStatus st, const char *what)
{
    HipState *s = st_of(dev);
    const char *name = s->api.GetErrorName(e), *text = s->api.GetErrorString(e);
    if (text && name && strcmp(text, name) == 0)
        text = NULL; /* older HIPs answer the name again */
    return rt__fail_driver(dev, st, what, name, text, "hipError_t", e);
}

#define HIP_TRY(dev, call, st, what)                                   \
    do {                                                               \
        HipError e_ = (call);                                          \
        if (e_ != HIP_OK)                                         \
            return hip_fail((dev), e_, classify(e_, (st)), (what));    \
    } while (0)

/* ---- loading the runtime ------------------------------------------------ */

static RtStatus load_lib(RtDevice *dev, int ordinal)
{
    (void)ordinal;
    return rt__load_lib(dev, &st_of(dev)->lib, &hip_lib, &st_of(dev)->api);
}

static RtStatus init_runtime(RtDevice *dev, int ordinal)
{
    HipState *s = st_of(dev);
    s->lib.inited = true; /* even a failed init leaves the library in use */
    HipError e = s->api.Init(0);
    if (e != HIP_OK)
        return hip_fail(dev, e, RT_NO_DEVICE, "no HIP device: hipInit");
    int count = 0;
    e = s->api.GetDeviceCount(&count);
    if (e != HIP_OK && e != HIP_ERR_NO_DEVICE)
        return hip_fail(dev, e, RT_NO_DEVICE, "no HIP device: hipGetDeviceCount");
    if (ordinal < 0 || ordinal >= count)
        return rt__fail(dev, RT_NO_DEVICE, "no HIP device %d: the runtime sees %d", ordinal,
                        count);
    s->ordinal = ordinal;
    HIP_TRY(dev, s->api.DeviceGet(&s->device, ordinal), RT_NO_DEVICE, "hipDeviceGet");
    HIP_TRY(dev, s->api.SetDevice(ordinal), RT_NO_DEVICE, "hipSetDevice");
    HIP_TRY(dev, s->api.StreamCreateWithFlags(&s->stream, HIP_STREAM_NON_BLOCKING), RT_ERROR,
            "hipStreamCreateWithFlags");
    return RT_OK;
}

/* ---- device info -------------------------------------------------------- */

/* optional: a hint some HIP versions do not answer; 0 then */
#define ATTR(a, f, opt) RT__ATTR(RtDeviceInfo, HIP_ATTR_##a, f, opt)
static const RtAttr hip_attrs[] = {
    ATTR(CC_MAJOR, cc_major, false),
    ATTR(CC_MINOR, cc_minor, false),
    ATTR(MULTIPROCESSOR_COUNT, sm_count, false),
    ATTR(WARP_SIZE, warp_size, false),
    ATTR(MAX_THREADS_PER_BLOCK, max_threads_per_block, false),
    ATTR(MAX_REGS_PER_MULTIPROCESSOR, regs_per_sm, true),
    ATTR(CLOCK_RATE, clock_khz, true),
    ATTR(MEMORY_CLOCK_RATE, mem_clock_khz, true),
    ATTR(MEMORY_BUS_WIDTH, mem_bus_bits, true),
    ATTR(L2_CACHE_SIZE, l2_bytes, false),
    ATTR(MAX_SHARED_PER_BLOCK, shared_per_block, false),
    ATTR(SHARED_PER_BLOCK_OPTIN, shared_per_block_optin, true),
    ATTR(SHARED_PER_MULTIPROCESSOR, shared_per_sm, true),
};
#undef ATTR

static RtStatus get_attr(RtDevice *dev, void *obj, int a, bool optional, int *out)
{
    (void)obj;
    HipState *s = st_of(dev);
    HipError e = s->api.DeviceGetAttribute(out, (HipDeviceAttr)a, s->ordinal);
    if (e == HIP_OK)
        return RT_OK;
    *out = 0;
    return optional ? RT_OK : hip_fail(dev, e, RT_ERROR, "hipDeviceGetAttribute");
}

/* gcnArchName ("gfx90a:sramecc+:xnack-") without its feature suffix. */
static void read_arch(RtDevice *dev)
{
    HipState *s = st_of(dev);
    char *props = calloc(1, HIP_PROPS_BUFFER_BYTES);
    if (!props)
        return;
    const char *arch = NULL;
    if (s->api.GetDevicePropertiesR0600 &&
        s->api.GetDevicePropertiesR0600(props, s->ordinal) == HIP_OK)
        arch = props + HIP_PROPS_R0600_ARCH_OFFSET;
    else if (s->api.GetDeviceProperties &&
             s->api.GetDeviceProperties(props, s->ordinal) == HIP_OK)
        arch = props + HIP_PROPS_R0000_ARCH_OFFSET;
    if (arch) {
        size_t n = strnlen(arch, HIP_ARCH_NAME_BYTES - 1);
        size_t colon = strcspn(arch, ":");
        rt__copystr(dev->info.arch, sizeof dev->info.arch, arch);
        if (colon < n && colon < sizeof dev->info.arch)
            dev->info.arch[colon] = '\0';
    }
    free(props);
}

static RtStatus read_info(RtDevice *dev, int ordinal)
{
    (void)ordinal;
    HipState *s = st_of(dev);
    RtDeviceInfo *in = &dev->info;
    in->backend = RT_HIP;
    HIP_TRY(dev, s->api.DeviceGetName(in->name, (int)sizeof in->name, s->device), RT_ERROR,
            "hipDeviceGetName");
    RtStatus st = rt__read_attrs(dev, get_attr, NULL, hip_attrs,
                                 sizeof hip_attrs / sizeof hip_attrs[0], in);
    if (st != RT_OK)
        return st;
    if (in->shared_per_block_optin < in->shared_per_block)
        in->shared_per_block_optin = in->shared_per_block;
    HIP_TRY(dev, s->api.DeviceTotalMem(&in->global_bytes, s->device), RT_ERROR,
            "hipDeviceTotalMem");
    HIP_TRY(dev, s->api.DriverGetVersion(&in->driver_version), RT_ERROR,
            "hipDriverGetVersion");
    read_arch(dev);
    return RT_OK;
}

/* ---- open, close, bind -------------------------------------------------- */

static void hip_close(RtDevice *dev, bool hung)
{
    HipState *s = st_of(dev);
    if (!s)
        return;
    if (!hung && s->lib.inited && s->stream)
        s->api.StreamDestroy(s->stream);
    rt__free_state(dev);
}

static RtStatus hip_open(RtDevice *dev, int ordinal)
{
    static const RtOpenStep steps[] = {load_lib, init_runtime, read_info};
    return rt__open_steps(dev, ordinal, sizeof(HipState), steps, sizeof steps / sizeof *steps);
}

static RtStatus hip_bind(RtDevice *dev)
{
    HipState *s = st_of(dev);
    HIP_TRY(dev, s->api.SetDevice(s->ordinal), RT_ERROR, "hipSetDevice");
    return RT_OK;
}

/* ---- modules ------------------------------------------------------------ */

static RtStatus hip_module_load(RtDevice *dev, const void *image, size_t len, void **mod,
                                char *log, size_t loglen)
{
    (void)len, (void)log, (void)loglen; /* code objects carry their size; no JIT log */
    HipModule m = NULL;
    HIP_TRY(dev, st_of(dev)->api.ModuleLoadData(&m, image), RT_LOAD_ERROR,
            "module load failed");
    *mod = m;
    return RT_OK;
}

static void hip_module_unload(RtDevice *dev, void *mod)
{
    st_of(dev)->api.ModuleUnload(mod); /* nothing to do about a failure here */
}

static RtStatus hip_function(RtDevice *dev, void *mod, const char *name, void **fn)
{
    HipFunction f = NULL;
    HipError e = st_of(dev)->api.ModuleGetFunction(&f, mod, name);
    if (e == HIP_ERR_NOT_FOUND)
        return rt__fail(dev, RT_INVALID, "no kernel '%s' in the module", name);
    if (e != HIP_OK)
        return hip_fail(dev, e, classify(e, RT_ERROR), "hipModuleGetFunction");
    *fn = f;
    return RT_OK;
}

#define ATTR(a, f) RT__ATTR(RtFuncInfo, HIP_FUNC_ATTR_##a, f, false)
static const RtAttr hip_func_attrs[] = {
    ATTR(NUM_REGS, regs),
    ATTR(LOCAL_SIZE_BYTES, local_bytes),
    ATTR(SHARED_SIZE_BYTES, static_shared_bytes),
    ATTR(CONST_SIZE_BYTES, const_bytes),
    ATTR(MAX_THREADS_PER_BLOCK, max_threads),
};
#undef ATTR

static RtStatus get_func_attr(RtDevice *dev, void *fn, int a, bool optional, int *out)
{
    (void)optional;
    HIP_TRY(dev, st_of(dev)->api.FuncGetAttribute(out, (HipFuncAttr)a, fn), RT_ERROR,
            "hipFuncGetAttribute");
    return RT_OK;
}

static RtStatus hip_func_info(RtDevice *dev, void *fn, RtFuncInfo *out)
{
    RtStatus st = rt__read_attrs(dev, get_func_attr, fn, hip_func_attrs,
                                 sizeof hip_func_attrs / sizeof hip_func_attrs[0], out);
    if (st != RT_OK)
        return st;
    out->max_dyn_shared_bytes = (int)dev->info.shared_per_block_optin;
    return RT_OK;
}

/* AMD GPUs need no opt-in for dynamic LDS; rt.c checked the device limit. */
static RtStatus hip_func_set_shared(RtDevice *dev, void *fn, unsigned bytes)
{
    (void)dev, (void)fn, (void)bytes;
    return RT_OK;
}

/* ---- buffers ------------------------------------------------------------ */

static RtStatus hip_alloc(RtDevice *dev, size_t bytes, RtPtr *out)
{
    HipState *s = st_of(dev);
    void *p = NULL;
    HipError e = s->api.Malloc(&p, bytes);
    if (e == HIP_ERR_OUT_OF_MEMORY) {
        size_t freeb = 0, total = 0;
        s->api.MemGetInfo(&freeb, &total);
        return rt__fail_oom(dev, bytes, freeb, total);
    }
    if (e != HIP_OK)
        return hip_fail(dev, e, classify(e, RT_ERROR), "hipMalloc");
    *out = (RtPtr)(uintptr_t)p;
    return RT_OK;
}

static RtStatus hip_free(RtDevice *dev, RtPtr p)
{
    HIP_TRY(dev, st_of(dev)->api.Free((void *)(uintptr_t)p), RT_ERROR, "hipFree");
    return RT_OK;
}

static RtStatus hip_memset(RtDevice *dev, RtPtr p, uint32_t v, size_t count, int width)
{
    HipState *s = st_of(dev);
    void *d = (void *)(uintptr_t)p;
    if (width == 1)
        HIP_TRY(dev, s->api.MemsetD8Async(d, (unsigned char)v, count, s->stream), RT_ERROR,
                "hipMemsetD8Async");
    else
        HIP_TRY(dev, s->api.MemsetD32Async(d, (int)v, count, s->stream), RT_ERROR,
                "hipMemsetD32Async");
    return RT_OK;
}

static RtStatus hip_copy(RtDevice *dev, RtCopyDir dir, void *dst, const void *src,
                         size_t bytes)
{
    HipState *s = st_of(dev);
    void *from = (void *)(uintptr_t)src; /* HIP's copies take non-const sources */
    if (dir == RT_H2D)
        HIP_TRY(dev, s->api.MemcpyHtoDAsync(dst, from, bytes, s->stream), RT_ERROR,
                "hipMemcpyHtoDAsync");
    else if (dir == RT_D2H)
        HIP_TRY(dev, s->api.MemcpyDtoHAsync(dst, from, bytes, s->stream), RT_ERROR,
                "hipMemcpyDtoHAsync");
    else
        HIP_TRY(dev, s->api.MemcpyDtoDAsync(dst, from, bytes, s->stream), RT_ERROR,
                "hipMemcpyDtoDAsync");
    return RT_OK;
}

/* ---- launches, the stream, events --------------------------------------- */

static RtStatus hip_launch(RtDevice *dev, const RtLaunch *l, void *fn)
{
    HipState *s = st_of(dev);
    if (l->cluster[0] || l->cluster[1] || l->cluster[2])
        return rt__fail(dev, RT_UNSUPPORTED, "kernel '%s': HIP has no thread-block clusters",
                        l->fn->name);
    HipError e = s->api.ModuleLaunchKernel(fn, rt__dim1(l->grid[0]), rt__dim1(l->grid[1]),
                                           rt__dim1(l->grid[2]), rt__dim1(l->block[0]),
                                           rt__dim1(l->block[1]), rt__dim1(l->block[2]),
                                           l->shared_bytes, l->stream ? (HipStream)l->stream : s->stream,
                                           l->params, NULL);
    if (e == HIP_OK)
        return RT_OK;
    char what[200];
    snprintf(what, sizeof what, "launch of kernel '%s' failed", l->fn->name);
    return hip_fail(dev, e, classify(e, RT_LAUNCH_ERROR), what);
}

/* A query's answer: done, still running, or the error. */
static RtStatus hip_poll(RtDevice *dev, HipError e)
{
    if (e == HIP_OK)
        return RT_OK;
    if (e == HIP_ERR_NOT_READY)
        return RT__PENDING;
    return hip_fail(dev, e, classify(e, RT_ERROR), NULL);
}

static RtStatus hip_query(RtDevice *dev)
{
    return hip_poll(dev, st_of(dev)->api.StreamQuery(st_of(dev)->stream));
}

static RtStatus hip_event_create(RtDevice *dev, void **ev)
{
    HipEvent e = NULL;
    HIP_TRY(dev, st_of(dev)->api.EventCreate(&e), RT_ERROR, "hipEventCreate");
    *ev = e;
    return RT_OK;
}

static void hip_event_destroy(RtDevice *dev, void *ev)
{
    st_of(dev)->api.EventDestroy(ev); /* nothing to do about a failure here */
}

static RtStatus hip_event_record(RtDevice *dev, void *ev)
{
    HipState *s = st_of(dev);
    HIP_TRY(dev, s->api.EventRecord(ev, s->stream), RT_ERROR, "hipEventRecord");
    return RT_OK;
}

static RtStatus hip_event_query(RtDevice *dev, void *ev)
{
    return hip_poll(dev, st_of(dev)->api.EventQuery(ev));
}

static RtStatus hip_event_elapsed(RtDevice *dev, void *start, void *stop, float *ms)
{
    HIP_TRY(dev, st_of(dev)->api.EventElapsedTime(ms, start, stop), RT_ERROR,
            "hipEventElapsedTime");
    return RT_OK;
}

/* ---- the timing gate ----------------------------------------------------- */

static RtStatus hip_gate_create(RtDevice *dev, volatile uint32_t **host, RtPtr *dptr)
{
    HipState *s = st_of(dev);
    if (!s->api.HostMalloc || !s->api.HostGetDevicePointer || !s->api.HostFree ||
        !s->api.StreamWaitValue32)
        return rt__fail(dev, RT_UNSUPPORTED, "this HIP runtime has no hipStreamWaitValue32");
    void *p = NULL, *d = NULL;
    HIP_TRY(dev, s->api.HostMalloc(&p, sizeof(uint32_t), HIP_HOST_MALLOC_MAPPED), RT_ERROR,
            "hipHostMalloc");
    HipError e = s->api.HostGetDevicePointer(&d, p, 0);
    if (e != HIP_OK) {
        s->api.HostFree(p);
        return hip_fail(dev, e, classify(e, RT_ERROR), "hipHostGetDevicePointer");
    }
    *host = p;
    **host = 0;
    *dptr = (RtPtr)(uintptr_t)d;
    return RT_OK;
}

static void hip_gate_free(RtDevice *dev, volatile uint32_t *host)
{
    st_of(dev)->api.HostFree((void *)(uintptr_t)host); /* nothing to do about a failure */
}

static RtStatus hip_wait_value(RtDevice *dev, RtPtr dptr, uint32_t value)
{
    HipState *s = st_of(dev);
    HIP_TRY(dev,
            s->api.StreamWaitValue32(s->stream, (void *)(uintptr_t)dptr, value,
                                     HIP_STREAM_WAIT_VALUE_GTE, 0xffffffffu),
            RT_ERROR, "hipStreamWaitValue32");
    return RT_OK;
}

static RtStatus hip_tma_encode(RtDevice *dev, const RtTmaDesc *d, RtTensorMap *out)
{
    (void)d, (void)out;
    return rt__fail(dev, RT_UNSUPPORTED, "tensor maps (TMA) are NVIDIA-only; %s has none",
                    dev->info.arch[0] ? dev->info.arch : "this HIP device");
}

const RtOps rt__hip_ops = {
    .open = hip_open,
    .close = hip_close,
    .bind = hip_bind,
    .module_load = hip_module_load,
    .module_unload = hip_module_unload,
    .function = hip_function,
    .func_info = hip_func_info,
    .func_set_shared = hip_func_set_shared,
    .alloc = hip_alloc,
    .free = hip_free,
    .memset = hip_memset,
    .copy = hip_copy,
    .launch = hip_launch,
    .query = hip_query,
    .event_create = hip_event_create,
    .event_destroy = hip_event_destroy,
    .event_record = hip_event_record,
    .event_query = hip_event_query,
    .event_elapsed = hip_event_elapsed,
    .tma_encode = hip_tma_encode,
    .gate_create = hip_gate_create,
    .gate_free = hip_gate_free,
    .wait_value = hip_wait_value,
};
