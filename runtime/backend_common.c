/* backend_common.c — the driver-neutral half of a backend (cuda.c, hip.c):
 * loading the driver library and its symbols, the open/close skeleton,
 * reading tables of attributes, and the shape of a driver error's message.
 * The backends keep only their driver calls and their error codes.
 */
#define _POSIX_C_SOURCE 200809L
#include "backend.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

RtStatus rt__load_lib(RtDevice *dev, RtLib *lib, const RtLibSpec *spec, void *api)
{
    const char *env = getenv(spec->env);
    const char *const *names = spec->names;
    const char *one[] = {env, NULL};
    if (env && *env)
        names = one;
    char why[512] = "";
    for (int i = 0; names[i] && !lib->lib; i++) {
        lib->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        lib->libname = names[i];
        const char *e = dlerror();
        if (!lib->lib && i == 0)
            rt__copystr(why, sizeof why, e ? e : "dlopen failed");
    }
    if (!lib->lib)
        return rt__fail(dev, RT_NO_DEVICE, "no %s: %s not found (%s)", spec->what, names[0],
                        why);
    for (size_t i = 0; i < spec->nsyms; i++) {
        const RtSym *sym = &spec->syms[i];
        void *p = dlsym(lib->lib, sym->name);
        if (!p && sym->alt)
            p = dlsym(lib->lib, sym->alt);
        if (!p && !sym->optional)
            return rt__fail(dev, RT_NO_DEVICE, "no usable %s: %s has no %s%s", spec->what,
                            lib->libname, sym->name, spec->too_old);
        memcpy((char *)api + sym->off, &p, sizeof p);
    }
    return RT_OK;
}

RtStatus rt__open_steps(RtDevice *dev, int ordinal, size_t state_bytes,
                        const RtOpenStep *steps, size_t nsteps)
{
    dev->be = calloc(1, state_bytes);
    if (!dev->be)
        return rt__fail(dev, RT_ERROR, "out of host memory");
    RtStatus st = RT_OK;
    for (size_t i = 0; i < nsteps && st == RT_OK; i++)
        st = steps[i](dev, ordinal);
    if (st != RT_OK) {
        dev->ops->close(dev, false);
        return st;
    }
    RtDeviceInfo *in = &dev->info;
    in->peak_gbps = 2.0 * in->mem_clock_khz * 1e3 * (in->mem_bus_bits / 8) / 1e9;
    return RT_OK;
}

void rt__free_state(RtDevice *dev)
{
    RtLib *lib = dev->be;
    if (lib->lib && !lib->inited)
        dlclose(lib->lib); /* a driver that started stays loaded */
    free(dev->be);
    dev->be = NULL;
}

RtStatus rt__read_attrs(RtDevice *dev, RtAttrGet get, void *obj, const RtAttr *tab, size_t n,
                        void *base)
{
    for (size_t i = 0; i < n; i++) {
        int v = 0;
        RtStatus st = get(dev, obj, tab[i].attr, tab[i].optional, &v);
        if (st != RT_OK)
            return st;
        char *field = (char *)base + tab[i].off;
        if (tab[i].wide) {
            size_t w = (size_t)v;
            memcpy(field, &w, sizeof w);
        } else {
            memcpy(field, &v, sizeof v);
        }
    }
    return RT_OK;
}

RtStatus rt__fail_driver(RtDevice *dev, RtStatus st, const char *what, const char *name,
                         const char *text, const char *kind, int code)
{
    char num[32];
    if (!name) {
        snprintf(num, sizeof num, "%s %d", kind, code);
        name = num;
    }
    return rt__fail(dev, st, "%s%s%s%s%s%s", what ? what : "", what ? ": " : "", name,
                    text ? " (" : "", text ? text : "", text ? ")" : "");
}

RtStatus rt__fail_oom(RtDevice *dev, size_t bytes, size_t freeb, size_t total)
{
    return rt__fail(dev, RT_OOM,
                    "out of device memory allocating %zu bytes (%zu MiB free of %zu MiB)",
                    bytes, freeb >> 20, total >> 20);
}
