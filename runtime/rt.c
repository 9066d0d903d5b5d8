/* rt.c — backend selection and the backend-neutral half of the runtime:
 * opening and closing devices, the broken-device state, waiting with a
 * timeout, and argument checks in front of the backends' operations.
 */
#define _POSIX_C_SOURCE 200809L
#include "backend.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RT_DEFAULT_TIMEOUT_S 10.0

const char *rt_status_name(RtStatus s)
{
    switch (s) {
    case RT_OK: return "RT_OK";
    case RT_NO_DEVICE: return "RT_NO_DEVICE";
    case RT_LOAD_ERROR: return "RT_LOAD_ERROR";
    case RT_LAUNCH_ERROR: return "RT_LAUNCH_ERROR";
    case RT_FAULT: return "RT_FAULT";
    case RT_TIMEOUT: return "RT_TIMEOUT";
    case RT_OOM: return "RT_OOM";
    case RT_INVALID: return "RT_INVALID";
    case RT_UNSUPPORTED: return "RT_UNSUPPORTED";
    case RT_ERROR: return "RT_ERROR";
    }
    return "RT_?";
}

const char *rt_backend_name(RtBackend b)
{
    switch (b) {
    case RT_AUTO: return "auto";
    case RT_CUDA: return "cuda";
    case RT_HIP: return "hip";
    }
    return "?";
}

void rt__copystr(char *dst, size_t n, const char *src)
{
    if (!dst || n == 0)
        return;
    size_t k = src ? strnlen(src, n - 1) : 0;
    if (k)
        memcpy(dst, src, k);
    dst[k] = '\0';
}

/* A fault names the kernel that caused it and breaks the device. */
static void mark_fault(RtDevice *dev)
{
    char drv[1536]; /* leaves room for the prefix */
    rt__copystr(drv, sizeof drv, dev->err);
    if (dev->pending > 1)
        snprintf(dev->err, sizeof dev->err,
                 "kernel '%s' (or one of the %d launched before it) faulted: %s", dev->kernel,
                 dev->pending - 1, drv);
    else if (dev->kernel[0])
        snprintf(dev->err, sizeof dev->err, "kernel '%s' faulted: %s", dev->kernel, drv);
    dev->health = RT_FAULT;
}

RtStatus rt__fail(RtDevice *dev, RtStatus st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dev->err, sizeof dev->err, fmt, ap);
    va_end(ap);
    if (st == RT_FAULT && dev->health == RT_OK)
        mark_fault(dev);
    return st;
}

double rt__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- open and close ----------------------------------------------------- */

static RtStatus open_one(const RtOps *ops, int ordinal, RtDevice **out, char *err,
                         size_t errlen)
{
    RtDevice *dev = calloc(1, sizeof *dev);
    if (!dev) {
        rt__copystr(err, errlen, "out of host memory");
        return RT_ERROR;
    }
    dev->ops = ops;
    dev->timeout_s = RT_DEFAULT_TIMEOUT_S;
    RtStatus st = ops->open(dev, ordinal);
    if (st != RT_OK) {
        rt__copystr(err, errlen, dev->err);
        free(dev);
        return st;
    }
    *out = dev;
    return RT_OK;
}

RtStatus rt_open(RtBackend which, int ordinal, RtDevice **out, char *err, size_t errlen)
{
    rt__copystr(err, errlen, "");
    if (!out)
        return RT_INVALID;
    *out = NULL;
    if (which == RT_CUDA)
        return open_one(&rt__cuda_ops, ordinal, out, err, errlen);
    if (which == RT_HIP)
        return open_one(&rt__hip_ops, ordinal, out, err, errlen);
    char cerr[512], herr[512];
    RtStatus st = open_one(&rt__cuda_ops, ordinal, out, cerr, sizeof cerr);
    if (st == RT_OK || st != RT_NO_DEVICE) {
        rt__copystr(err, errlen, cerr);
        return st;
    }
    st = open_one(&rt__hip_ops, ordinal, out, herr, sizeof herr);
    if (st == RT_OK)
        return st;
    if (err && errlen)
        snprintf(err, errlen, "%s; %s", cerr, herr);
    return st;
}

void rt_close(RtDevice *dev)
{
    if (!dev)
        return;
    if (dev->flush && rt__enter(dev) == RT_OK)
        dev->ops->free(dev, dev->flush);
    dev->ops->close(dev, dev->health == RT_TIMEOUT);
    free(dev);
}

const RtDeviceInfo *rt_info(const RtDevice *dev) { return &dev->info; }
const char *rt_error(const RtDevice *dev) { return dev->err; }
RtStatus rt_health(const RtDevice *dev) { return dev->health; }
void rt_set_timeout(RtDevice *dev, double seconds) { dev->timeout_s = seconds; }
double rt_timeout(const RtDevice *dev) { return dev->timeout_s; }

_Noreturn void rt_exit_now(int code)
{
    fflush(stdout);
    fflush(stderr);
    _exit(code);
}

/* ---- the broken-device state and waiting ------------------------------- */

RtStatus rt__enter(RtDevice *dev)
{
    if (!dev)
        return RT_INVALID;
    if (dev->health != RT_OK)
        return dev->health; /* dev->err still holds the fault's or hang's message */
    return dev->ops->bind(dev);
}

static RtStatus mark_timeout(RtDevice *dev, double waited)
{
    dev->health = RT_TIMEOUT;
    if (dev->kernel[0])
        return rt__fail(dev, RT_TIMEOUT,
                        "kernel '%s' still running after %.1f s; the process will exit "
                        "without waiting", dev->kernel, waited);
    return rt__fail(dev, RT_TIMEOUT,
                    "device work still running after %.1f s; the process will exit "
                    "without waiting", waited);
}

/* Polls the stream with sleeps growing from 10 us to 1 ms, so that short
 * kernels return fast and long ones do not burn a CPU. */
RtStatus rt__wait_event(RtDevice *dev, void *ev)
{
    double start = rt__now();
    long sleep_ns = 10000;
    for (;;) {
        RtStatus st = ev ? dev->ops->event_query(dev, ev) : dev->ops->query(dev);
        if (st == RT_OK)
            return RT_OK;
        if (st != RT__PENDING)
            return st; /* a fault has marked the device already (rt__fail) */
        double waited = rt__now() - start;
        if (dev->timeout_s > 0 && waited >= dev->timeout_s)
            return mark_timeout(dev, waited);
        struct timespec ts = {0, sleep_ns};
        nanosleep(&ts, NULL);
        if (sleep_ns < 1000000)
            sleep_ns *= 2;
    }
}

RtStatus rt_wait(RtDevice *dev)
{
    RtStatus st = rt__enter(dev);
    return st != RT_OK ? st : rt__sync(dev);
}

RtStatus rt__sync(RtDevice *dev)
{
    RtStatus st = rt__wait_event(dev, NULL);
    if (st == RT_OK) {
        dev->kernel[0] = '\0';
        dev->pending = 0;
    }
    return st;
}

/* ---- modules and functions --------------------------------------------- */

RtStatus rt_module_load(RtDevice *dev, const void *image, size_t len, RtModule **out,
                        char *log, size_t loglen)
{
    rt__copystr(log, loglen, "");
    if (!out || !image)
        return dev ? rt__fail(dev, RT_INVALID, "rt_module_load: no image") : RT_INVALID;
    *out = NULL;
    RtStatus st = rt__enter(dev);
    if (st != RT_OK)
        return st;
    RtModule *mod = calloc(1, sizeof *mod);
    char *buf = calloc(1, RT__LOG_BYTES);
    if (!mod || !buf) {
        free(mod);
        free(buf);
        return rt__fail(dev, RT_ERROR, "out of host memory");
    }
    st = dev->ops->module_load(dev, image, len, &mod->handle, buf, RT__LOG_BYTES);
    rt__copystr(log, loglen, buf);
    if (st == RT_OK && buf[0])
        mod->jitlog = strdup(buf);
    free(buf);
    if (st != RT_OK) {
        free(mod);
        return st;
    }
    mod->dev = dev;
    *out = mod;
    return RT_OK;
}

void rt_module_unload(RtModule *mod)
{
    if (!mod)
        return;
    RtDevice *dev = mod->dev;
    if (rt__enter(dev) == RT_OK)
        dev->ops->module_unload(dev, mod->handle);
    for (RtFunction *f = mod->funcs, *next; f; f = next) {
        next = f->next;
        free(f);
    }
    free(mod->jitlog);
    free(mod);
}

RtStatus rt_function(RtModule *mod, const char *name, RtFunction **out)
{
    if (!mod || !name || !out)
        return RT_INVALID;
    *out = NULL;
    RtDevice *dev = mod->dev;
    for (RtFunction *f = mod->funcs; f; f = f->next)
        if (strcmp(f->name, name) == 0) {
            *out = f;
            return RT_OK;
        }
    RtStatus st = rt__enter(dev);
    if (st != RT_OK)
        return st;
    void *h = NULL;
    st = dev->ops->function(dev, mod->handle, name, &h);
    if (st != RT_OK)
        return st;
    size_t n = strlen(name) + 1;
    RtFunction *f = malloc(sizeof *f + n);
    if (!f)
        return rt__fail(dev, RT_ERROR, "out of host memory");
    memcpy(f->name, name, n);
    f->mod = mod;
    f->handle = h;
    f->next = mod->funcs;
    mod->funcs = f;
    *out = f;
    return RT_OK;
}

const char *rt_function_name(const RtFunction *fn) { return fn->name; }

RtStatus rt_func_set_carveout(RtFunction *fn, int percent)
{
    RtDevice *dev = fn->mod->dev;
    RtStatus st = rt__enter(dev);
    if (st != RT_OK)
        return st;
    if (!dev->ops->func_set_carveout)
        return rt__fail(dev, RT_UNSUPPORTED, "this backend has no shared-memory carve-out");
    if (percent < -1 || percent > 100)
        return rt__fail(dev, RT_INVALID, "carve-out %d%%: it must be -1 or 0..100", percent);
    return dev->ops->func_set_carveout(dev, fn->handle, percent);
}

RtStatus rt_func_info(RtFunction *fn, RtFuncInfo *out)
{
    RtDevice *dev = fn->mod->dev;
    memset(out, 0, sizeof *out);
    RtStatus st = rt__enter(dev);
    if (st != RT_OK || (st = dev->ops->func_info(dev, fn->handle, out)) != RT_OK)
        return st;
    int sp[3] = {-1, -1, -1};
    if (fn->mod->jitlog)
        rt__jit_spills(fn->mod->jitlog, fn->name, sp);
    out->stack_bytes = sp[0];
    out->spill_store_bytes = sp[1];
    out->spill_load_bytes = sp[2];
    return RT_OK;
}

RtStatus rt_func_set_shared(RtFunction *fn, unsigned bytes)
{
    RtDevice *dev = fn->mod->dev;
    RtStatus st = rt__enter(dev);
    if (st != RT_OK)
        return st;
    if (bytes > dev->info.shared_per_block_optin)
        return rt__fail(dev, RT_INVALID,
                        "kernel '%s' asks for %u bytes of dynamic shared memory; the "
                        "device allows at most %zu per block", fn->name, bytes,
                        dev->info.shared_per_block_optin);
    return dev->ops->func_set_shared(dev, fn->handle, bytes);
}

/* ---- buffers ------------------------------------------------------------ */

RtStatus rt_alloc(RtDevice *dev, size_t bytes, RtPtr *out)
{
    *out = 0;
    RtStatus st = rt__enter(dev);
    if (st != RT_OK)
        return st;
    return dev->ops->alloc(dev, bytes ? bytes : 1, out);
}

RtStatus rt_free(RtDevice *dev, RtPtr p)
{
    if (!p)
        return RT_OK;
    RtStatus st = rt__enter(dev);
    return st != RT_OK ? st : dev->ops->free(dev, p);
}

static RtStatus memset_sync(RtDevice *dev, RtPtr p, uint32_t v, size_t count, int width)
{
    RtStatus st = rt__enter(dev);
    if (st != RT_OK)
        return st;
    if (count == 0)
        return RT_OK;
    st = dev->ops->memset(dev, p, v, count, width);
    return st != RT_OK ? st : rt__sync(dev);
}

RtStatus rt_memset_d8(RtDevice *dev, RtPtr p, uint8_t value, size_t count)
{
    return memset_sync(dev, p, value, count, 1);
}

RtStatus rt_memset_d32(RtDevice *dev, RtPtr p, uint32_t value, size_t count)
{
    return memset_sync(dev, p, value, count, 4);
}

/* Device-to-host copies into pageable memory block the host inside the
 * driver, so the stream is drained first (with the timeout) in every
 * direction; the copy itself then cannot hang behind a kernel. */
static RtStatus copy_sync(RtDevice *dev, RtCopyDir dir, void *dst, const void *src,
                          size_t bytes)
{
    RtStatus st = rt__enter(dev);
    if (st != RT_OK)
        return st;
    if (bytes == 0)
        return RT_OK;
    if ((st = rt__sync(dev)) != RT_OK)
        return st;
    st = dev->ops->copy(dev, dir, dst, src, bytes);
    return st != RT_OK ? st : rt__sync(dev);
}

RtStatus rt_copy_h2d(RtDevice *dev, RtPtr dst, const void *src, size_t bytes)
{
    return copy_sync(dev, RT_H2D, (void *)(uintptr_t)dst, src, bytes);
}

RtStatus rt_copy_d2h(RtDevice *dev, void *dst, RtPtr src, size_t bytes)
{
    return copy_sync(dev, RT_D2H, dst, (const void *)(uintptr_t)src, bytes);
}

RtStatus rt_copy_d2d(RtDevice *dev, RtPtr dst, RtPtr src, size_t bytes)
{
    return copy_sync(dev, RT_D2D, (void *)(uintptr_t)dst, (const void *)(uintptr_t)src,
                     bytes);
}

/* ---- launches ----------------------------------------------------------- */

static RtStatus check_launch(RtDevice *dev, const RtLaunch *l)
{
    if (!l || !l->fn)
        return rt__fail(dev, RT_INVALID, "launch without a kernel");
    if (l->fn->mod->dev != dev)
        return rt__fail(dev, RT_INVALID, "kernel '%s' belongs to another device",
                        l->fn->name);
    unsigned long threads = (unsigned long)rt__dim1(l->block[0]) * rt__dim1(l->block[1]) *
                            rt__dim1(l->block[2]);
    if (threads > (unsigned long)dev->info.max_threads_per_block)
        return rt__fail(dev, RT_LAUNCH_ERROR,
                        "kernel '%s': %lu threads per block; the device allows %d",
                        l->fn->name, threads, dev->info.max_threads_per_block);
    return RT_OK;
}

RtStatus rt_launch(RtDevice *dev, const RtLaunch *l)
{
    RtStatus st = rt__enter(dev);
    if (st != RT_OK || (st = check_launch(dev, l)) != RT_OK)
        return st;
    st = dev->ops->launch(dev, l, l->fn->handle);
    if (st == RT_OK) {
        rt__copystr(dev->kernel, sizeof dev->kernel, l->fn->name);
        dev->pending++;
    }
    return st;
}

RtStatus rt_run(RtDevice *dev, const RtLaunch *l)
{
    RtStatus st = rt_launch(dev, l);
    return st != RT_OK ? st : rt__sync(dev);
}
