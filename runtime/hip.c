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

#include <dlfcn.h>
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

typedef struct {
    size_t off;
    const char *name;
    bool optional;
} HipSym;

#define SYM(f, opt) {offsetof(HipApi, f), "hip" #f, opt}
static const HipSym hip_syms[] = {
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

typedef struct {
    void *lib;
    const char *libname;
    bool inited; /* hipInit was called: the library stays loaded */
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
    char num[32];
    if (!name) {
        snprintf(num, sizeof num, "hipError_t %d", e);
        name = num;
    }
    if (text && strcmp(text, name) == 0)
        text = NULL; /* older HIPs answer the name again */
    return rt__fail(dev, st, "%s%s%s%s%s%s", what ? what : "", what ? ": " : "", name,
                    text ? " (" : "", text ? text : "", text ? ")" : "");
}

#define HIP_TRY(dev, call, st, what)                                   \
    do {                                                               \
        HipError e_ = (call);                                          \
        if (e_ != HIP_OK)                                         \
            return hip_fail((dev), e_, classify(e_, (st)), (what));    \
    } while (0)

/* ---- loading the runtime ------------------------------------------------ */

static RtStatus load_lib(RtDevice *dev, HipState *s)
{
    const char *env = getenv("CAKE_LIBHIP");
    const char *names[] = {env && *env ? env : "libamdhip64.so", "libamdhip64.so.6",
                           "libamdhip64.so.5"};
    int n = env && *env ? 1 : 3;
    char why[512] = "";
    for (int i = 0; i < n && !s->lib; i++) {
        s->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        s->libname = names[i];
        const char *e = dlerror();
        if (!s->lib && i == 0)
            rt__copystr(why, sizeof why, e ? e : "dlopen failed");
    }
    if (!s->lib)
        return rt__fail(dev, RT_NO_DEVICE, "no HIP runtime: %s not found (%s)", names[0], why);
    for (size_t i = 0; i < sizeof hip_syms / sizeof hip_syms[0]; i++) {
        void *p = dlsym(s->lib, hip_syms[i].name);
        if (!p && !hip_syms[i].optional)
            return rt__fail(dev, RT_NO_DEVICE, "no usable HIP runtime: %s has no %s",
                            s->libname, hip_syms[i].name);
        memcpy((char *)&s->api + hip_syms[i].off, &p, sizeof p);
    }
    return RT_OK;
}

static RtStatus init_runtime(RtDevice *dev, HipState *s, int ordinal)
{
    s->inited = true; /* even a failed init leaves the library in use */
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

typedef struct {
    HipDeviceAttr attr;
    size_t off;    /* an int field of RtDeviceInfo */
    bool optional; /* a hint some HIP versions do not answer: 0 then */
} HipAttrField;

#define ATTR(a, f, opt) {a, offsetof(RtDeviceInfo, f), opt}
static const HipAttrField hip_attrs[] = {
    ATTR(HIP_ATTR_CC_MAJOR, cc_major, false),
    ATTR(HIP_ATTR_CC_MINOR, cc_minor, false),
    ATTR(HIP_ATTR_MULTIPROCESSOR_COUNT, sm_count, false),
    ATTR(HIP_ATTR_WARP_SIZE, warp_size, false),
    ATTR(HIP_ATTR_MAX_THREADS_PER_BLOCK, max_threads_per_block, false),
    ATTR(HIP_ATTR_MAX_REGS_PER_MULTIPROCESSOR, regs_per_sm, true),
    ATTR(HIP_ATTR_CLOCK_RATE, clock_khz, true),
    ATTR(HIP_ATTR_MEMORY_CLOCK_RATE, mem_clock_khz, true),
    ATTR(HIP_ATTR_MEMORY_BUS_WIDTH, mem_bus_bits, true),
};
#undef ATTR

static RtStatus get_attr(RtDevice *dev, HipDeviceAttr a, bool optional, int *out)
{
    HipState *s = st_of(dev);
    HipError e = s->api.DeviceGetAttribute(out, a, s->ordinal);
    if (e == HIP_OK)
        return RT_OK;
    *out = 0;
    return optional ? RT_OK : hip_fail(dev, e, RT_ERROR, "hipDeviceGetAttribute");
}

static RtStatus get_sizes(RtDevice *dev, RtDeviceInfo *in)
{
    static const HipDeviceAttr a[] = {
        HIP_ATTR_L2_CACHE_SIZE, HIP_ATTR_MAX_SHARED_PER_BLOCK,
        HIP_ATTR_SHARED_PER_BLOCK_OPTIN, HIP_ATTR_SHARED_PER_MULTIPROCESSOR,
    };
    static const bool optional[] = {false, false, true, true};
    size_t *dst[] = {&in->l2_bytes, &in->shared_per_block, &in->shared_per_block_optin,
                     &in->shared_per_sm};
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        int v = 0;
        RtStatus st = get_attr(dev, a[i], optional[i], &v);
        if (st != RT_OK)
            return st;
        *dst[i] = (size_t)v;
    }
    if (in->shared_per_block_optin < in->shared_per_block)
        in->shared_per_block_optin = in->shared_per_block;
    return RT_OK;
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

static RtStatus read_info(RtDevice *dev)
{
    HipState *s = st_of(dev);
    RtDeviceInfo *in = &dev->info;
    in->backend = RT_HIP;
    HIP_TRY(dev, s->api.DeviceGetName(in->name, (int)sizeof in->name, s->device), RT_ERROR,
            "hipDeviceGetName");
    for (size_t i = 0; i < sizeof hip_attrs / sizeof hip_attrs[0]; i++) {
        const HipAttrField *f = &hip_attrs[i];
        RtStatus st = get_attr(dev, f->attr, f->optional, (int *)((char *)in + f->off));
        if (st != RT_OK)
            return st;
    }
    RtStatus st = get_sizes(dev, in);
    if (st != RT_OK)
        return st;
    HIP_TRY(dev, s->api.DeviceTotalMem(&in->global_bytes, s->device), RT_ERROR,
            "hipDeviceTotalMem");
    HIP_TRY(dev, s->api.DriverGetVersion(&in->driver_version), RT_ERROR,
            "hipDriverGetVersion");
    read_arch(dev);
    in->peak_gbps = 2.0 * in->mem_clock_khz * 1e3 * (in->mem_bus_bits / 8) / 1e9;
    return RT_OK;
}

/* ---- open, close, bind -------------------------------------------------- */

static void hip_close(RtDevice *dev, bool hung)
{
    HipState *s = st_of(dev);
    if (!s)
        return;
    if (!hung && s->inited && s->stream)
        s->api.StreamDestroy(s->stream);
    if (s->lib && !s->inited)
        dlclose(s->lib); /* a runtime that started stays loaded */
    free(s);
    dev->be = NULL;
}

static RtStatus hip_open(RtDevice *dev, int ordinal)
{
    HipState *s = calloc(1, sizeof *s);
    if (!s)
        return rt__fail(dev, RT_ERROR, "out of host memory");
    dev->be = s;
    RtStatus st = load_lib(dev, s);
    if (st == RT_OK)
        st = init_runtime(dev, s, ordinal);
    if (st == RT_OK)
        st = read_info(dev);
    if (st != RT_OK)
        hip_close(dev, false);
    return st;
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

static RtStatus hip_func_info(RtDevice *dev, void *fn, RtFuncInfo *out)
{
    static const HipFuncAttr a[] = {
        HIP_FUNC_ATTR_NUM_REGS, HIP_FUNC_ATTR_LOCAL_SIZE_BYTES,
        HIP_FUNC_ATTR_SHARED_SIZE_BYTES, HIP_FUNC_ATTR_CONST_SIZE_BYTES,
        HIP_FUNC_ATTR_MAX_THREADS_PER_BLOCK,
    };
    int *dst[] = {&out->regs, &out->local_bytes, &out->static_shared_bytes,
                  &out->const_bytes, &out->max_threads};
    HipState *s = st_of(dev);
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
        HIP_TRY(dev, s->api.FuncGetAttribute(dst[i], a[i], fn), RT_ERROR,
                "hipFuncGetAttribute");
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
        return rt__fail(dev, RT_OOM,
                        "out of device memory allocating %zu bytes (%zu MiB free of %zu MiB)",
                        bytes, freeb >> 20, total >> 20);
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

static unsigned d1(unsigned v) { return v ? v : 1; }

static RtStatus hip_launch(RtDevice *dev, const RtLaunch *l, void *fn)
{
    HipState *s = st_of(dev);
    if (l->cluster[0] || l->cluster[1] || l->cluster[2])
        return rt__fail(dev, RT_UNSUPPORTED, "kernel '%s': HIP has no thread-block clusters",
                        l->fn->name);
    HipError e = s->api.ModuleLaunchKernel(fn, d1(l->grid[0]), d1(l->grid[1]), d1(l->grid[2]),
                                           d1(l->block[0]), d1(l->block[1]), d1(l->block[2]),
                                           l->shared_bytes, s->stream, l->params, NULL);
    if (e == HIP_OK)
        return RT_OK;
    char what[200];
    snprintf(what, sizeof what, "launch of kernel '%s' failed", l->fn->name);
    return hip_fail(dev, e, classify(e, RT_LAUNCH_ERROR), what);
}

static RtStatus hip_query(RtDevice *dev)
{
    HipError e = st_of(dev)->api.StreamQuery(st_of(dev)->stream);
    if (e == HIP_OK)
        return RT_OK;
    if (e == HIP_ERR_NOT_READY)
        return RT__PENDING;
    return hip_fail(dev, e, classify(e, RT_ERROR), NULL);
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
    HipError e = st_of(dev)->api.EventQuery(ev);
    if (e == HIP_OK)
        return RT_OK;
    if (e == HIP_ERR_NOT_READY)
        return RT__PENDING;
    return hip_fail(dev, e, classify(e, RT_ERROR), NULL);
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
