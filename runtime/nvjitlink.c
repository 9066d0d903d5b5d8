/* nvjitlink.c — PTX to a cubin in process through libnvJitLink, loaded with
 * dlopen like the drivers (rt.h): the library build (`cakec lib build`)
 * stores cubins where the toolkit's nvJitLink is present, so a launch loads
 * machine code without a JIT. One RtJitLinker holds the loaded library for
 * many links (no global state). $CAKE_NVJITLINK names the library to try
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

struct RtJitLinker {
    void *h;
    CreateFn create;
    DestroyFn destroy;
    AddDataFn add;
    CompleteFn complete;
    SizeFn cubin_size, err_size;
    GetFn cubin, err_log;
};

RtJitLinker *rt_jitlink_open(void)
{
    void *h = open_lib();
    RtJitLinker *l = h ? calloc(1, sizeof *l) : NULL;
    if (!l) {
        if (h)
            dlclose(h);
        return NULL;
    }
    l->h = h;
    l->create = (CreateFn)dlsym(h, "nvJitLinkCreate");
    l->destroy = (DestroyFn)dlsym(h, "nvJitLinkDestroy");
    l->add = (AddDataFn)dlsym(h, "nvJitLinkAddData");
    l->complete = (CompleteFn)dlsym(h, "nvJitLinkComplete");
    l->cubin_size = (SizeFn)dlsym(h, "nvJitLinkGetLinkedCubinSize");
    l->cubin = (GetFn)dlsym(h, "nvJitLinkGetLinkedCubin");
    l->err_size = (SizeFn)dlsym(h, "nvJitLinkGetErrorLogSize");
    l->err_log = (GetFn)dlsym(h, "nvJitLinkGetErrorLog");
    if (!l->create || !l->destroy || !l->add || !l->complete || !l->cubin_size || !l->cubin) {
        rt_jitlink_close(l);
        return NULL;
    }
    return l;
}

void rt_jitlink_close(RtJitLinker *l)
{
    if (!l)
        return;
    /* the library stays mapped for the life of the process: nvJitLink keeps
       allocations of its own past the last handle (~72 KB), which unmapping
       would orphan (the leak checker of the sanitizer build reports them) */
    free(l);
}

RtStatus rt_jitlink_ptx(RtJitLinker *l, const char *arch, const char *ptx, size_t len, void **out,
                        size_t *out_len, char *log, size_t loglen)
{
    *out = NULL;
    *out_len = 0;
    if (log && loglen)
        log[0] = 0;
    if (!l) {
        if (log && loglen)
            snprintf(log, loglen, "libnvJitLink not found");
        return RT_UNSUPPORTED;
    }
    char opt[64];
    snprintf(opt, sizeof opt, "-arch=%s", arch);
    const char *opts[] = {opt, "-O3"};
    void *link = NULL;
    RtStatus st = RT_LOAD_ERROR;
    size_t n = 0;
    if (l->create(&link, 2, opts) != 0)
        return st;
    /* NVJITLINK_INPUT_PTX is 2; the text need not be NUL-terminated */
    if (l->add(link, 2, ptx, len ? len : strlen(ptx), "kernel.ptx") == 0 && l->complete(link) == 0 &&
        l->cubin_size(link, &n) == 0 && n && (*out = malloc(n)) && l->cubin(link, *out) == 0) {
        *out_len = n;
        st = RT_OK;
    } else {
        size_t el = 0;
        if (log && loglen && l->err_size && l->err_log && l->err_size(link, &el) == 0 && el) {
            char *e = malloc(el + 1);
            if (e && l->err_log(link, e) == 0)
                snprintf(log, loglen, "%s", e);
            free(e);
        }
        free(*out);
        *out = NULL;
    }
    l->destroy(&link);
    return st;
}
