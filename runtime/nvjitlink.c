/* nvjitlink.c — PTX to a cubin in process through libnvJitLink, loaded with
 * dlopen like the drivers (rt.h): the library build (`cakec lib build`)
 * stores cubins where the toolkit's nvJitLink is present, so a launch loads
 * machine code without a JIT. $CAKE_NVJITLINK names the library to try
 * first; then libnvJitLink.so.13, .so.12, .so and the toolkit's lib64. */
#include "rt.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*CreateFn)(void **, uint32_t, const char **);
typedef int (*DestroyFn)(void **);
typedef int (*AddDataFn)(void *, int, const void *, size_t, const char *);
typedef int (*CompleteFn)(void *);
typedef int (*SizeFn)(void *, size_t *);
typedef int (*GetFn)(void *, void *);

static void *open_lib(void)
{
    static const char *const names[] = {"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so",
                                        "/usr/local/cuda/lib64/libnvJitLink.so"};
    const char *env = getenv("CAKE_NVJITLINK");
    void *h = env && *env ? dlopen(env, RTLD_NOW | RTLD_LOCAL) : NULL;
    for (size_t i = 0; !h && i < sizeof names / sizeof names[0]; i++)
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    return h;
}

bool rt_nvjitlink_available(void)
{
    void *h = open_lib();
    if (h)
        dlclose(h);
    return h != NULL;
}

RtStatus rt_ptx_to_cubin(const char *arch, const char *ptx, size_t len, void **out, size_t *out_len,
                         char *log, size_t loglen)
{
    *out = NULL;
    *out_len = 0;
    if (log && loglen)
        log[0] = 0;
    void *h = open_lib();
    if (!h) {
        if (log && loglen)
            snprintf(log, loglen, "libnvJitLink not found");
        return RT_UNSUPPORTED;
    }
    CreateFn create = (CreateFn)dlsym(h, "nvJitLinkCreate");
    DestroyFn destroy = (DestroyFn)dlsym(h, "nvJitLinkDestroy");
    AddDataFn add = (AddDataFn)dlsym(h, "nvJitLinkAddData");
    CompleteFn complete = (CompleteFn)dlsym(h, "nvJitLinkComplete");
    SizeFn cubin_size = (SizeFn)dlsym(h, "nvJitLinkGetLinkedCubinSize");
    GetFn cubin = (GetFn)dlsym(h, "nvJitLinkGetLinkedCubin");
    SizeFn err_size = (SizeFn)dlsym(h, "nvJitLinkGetErrorLogSize");
    GetFn err_log = (GetFn)dlsym(h, "nvJitLinkGetErrorLog");
    if (!create || !destroy || !add || !complete || !cubin_size || !cubin) {
        dlclose(h);
        if (log && loglen)
            snprintf(log, loglen, "libnvJitLink lacks the nvJitLink entry points");
        return RT_UNSUPPORTED;
    }
    char opt[64];
    snprintf(opt, sizeof opt, "-arch=%s", arch);
    const char *opts[] = {opt, "-O3"};
    void *link = NULL;
    RtStatus st = RT_LOAD_ERROR;
    size_t n = 0;
    if (create(&link, 2, opts) == 0) {
        /* NVJITLINK_INPUT_PTX is 2; the text need not be NUL-terminated */
        if (add(link, 2, ptx, len ? len : strlen(ptx), "kernel.ptx") == 0 && complete(link) == 0 &&
            cubin_size(link, &n) == 0 && n && (*out = malloc(n)) && cubin(link, *out) == 0) {
            *out_len = n;
            st = RT_OK;
        } else {
            size_t el = 0;
            if (log && loglen && err_size && err_log && err_size(link, &el) == 0 && el) {
                char *e = malloc(el + 1);
                if (e && err_log(link, e) == 0)
                    snprintf(log, loglen, "%s", e);
                free(e);
            }
            free(*out);
            *out = NULL;
        }
        destroy(&link);
    }
    dlclose(h);
    return st;
}
