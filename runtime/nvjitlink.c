/* nvjitlink.c — PTX to a cubin in process through libnvJitLink, loaded with
 * dlopen like the drivers (rt.h): the library build (`cakec lib build`)
 * stores cubins where the toolkit's nvJitLink is present, so a launch loads
 * machine code without a JIT. PTX with setmaxnreg or wgmma goes to the ptxas
 * program instead: separate compilation would drop its register budgets and
 * serialize its wgmma (rt.h). One RtJitLinker holds the loaded library for
 * many links (no global state). $CAKE_NVJITLINK names the library to try
 * first; then libnvJitLink.so.13, .so.12, .so and the toolkit's lib64.
 *
 * The cubin cache: a link is a pure function of (nvJitLink's version, the
 * options, the PTX), so its cubin is kept on disk under a 128-bit hash of
 * them ($CAKE_CACHE_DIR/cubin, else $XDG_CACHE_HOME/cake/cubin, else
 * ~/.cache/cake/cubin; CAKE_CACHE_DIR=none turns it off) and a second link
 * of the same PTX reads it instead of running the assembler (most of a
 * library build's time). An entry is a header (magic, the key, the PTX's
 * length, the cubin's length) and the cubin, written to a temporary name and
 * renamed, so a reader sees a whole entry or none; one that does not match
 * its key is ignored and overwritten. */
#include "rt.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*CreateFn)(void **, uint32_t, const char **);
typedef int (*DestroyFn)(void **);
typedef int (*AddDataFn)(void *, int, const void *, size_t, const char *);
typedef int (*CompleteFn)(void *);
typedef int (*SizeFn)(void *, size_t *);
typedef int (*GetFn)(void *, void *);
typedef int (*VersionFn)(unsigned *, unsigned *);

/* libnvJitLink dlopen'd ($CAKE_NVJITLINK first), NULL when there is none */
void *rt_nvjitlink_dlopen(void)
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
    unsigned major, minor;    /* nvJitLink's version: part of the cache key */
    char cache[1024];         /* the cubin cache's folder, "" for none */
};

/* ---- the cubin cache ------------------------------------------------------------- */

typedef struct {
    char magic[8];            /* "CAKECUBN" */
    uint64_t key[2];
    uint64_t ptx_len, cubin_len;
} CacheHead;

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* mkdir -p of path (which it may change and restore) */
static int make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            int bad = mkdir(path, 0755) && errno != EEXIST;
            *p = '/';
            if (bad)
                return 0;
        }
    return !mkdir(path, 0755) || errno == EEXIST;
}

static void cache_open(RtJitLinker *l)
{
    const char *dir = getenv("CAKE_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    l->cache[0] = 0;
    if (dir && (!*dir || !strcmp(dir, "none")))
        return;
    if (dir)
        snprintf(l->cache, sizeof l->cache, "%s/cubin", dir);
    else if (xdg && *xdg)
        snprintf(l->cache, sizeof l->cache, "%s/cake/cubin", xdg);
    else if (home && *home)
        snprintf(l->cache, sizeof l->cache, "%s/.cache/cake/cubin", home);
    if (l->cache[0] && !make_dirs(l->cache))
        l->cache[0] = 0;
}

static void cache_key(const RtJitLinker *l, const char *opts, const char *ptx, size_t len, uint64_t key[2])
{
    unsigned ver[2] = {l->major, l->minor};
    for (int k = 0; k < 2; k++) {
        uint64_t h = k ? 0x84222325cbf29ce4ull : 0xcbf29ce484222325ull;
        h = fnv(h, ver, sizeof ver);
        h = fnv(h, opts, strlen(opts) + 1);
        key[k] = fnv(h, ptx, len);
    }
}

static void cache_path(const RtJitLinker *l, const uint64_t key[2], char *out, size_t n)
{
    snprintf(out, n, "%s/%016llx%016llx.cubin", l->cache, (unsigned long long)key[0],
             (unsigned long long)key[1]);
}

/* the cached cubin of key, malloc'd; NULL when there is none */
static void *cache_get(const RtJitLinker *l, const uint64_t key[2], size_t ptx_len, size_t *out_len)
{
    char path[1200];
    cache_path(l, key, path, sizeof path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    CacheHead h;
    void *buf = NULL;
    if (fread(&h, sizeof h, 1, f) == 1 && !memcmp(h.magic, "CAKECUBN", 8) && h.key[0] == key[0] &&
        h.key[1] == key[1] && h.ptx_len == ptx_len && h.cubin_len && h.cubin_len < (1ull << 30) &&
        (buf = malloc(h.cubin_len)) && fread(buf, 1, h.cubin_len, f) == h.cubin_len && fgetc(f) == EOF) {
        *out_len = h.cubin_len;
    } else {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

static void cache_put(const RtJitLinker *l, const uint64_t key[2], size_t ptx_len, const void *cubin,
                      size_t n)
{
    char path[1200], tmp[1300];
    cache_path(l, key, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    CacheHead h = {.magic = "CAKECUBN", .key = {key[0], key[1]}, .ptx_len = ptx_len, .cubin_len = n};
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return;
    int ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(cubin, 1, n, f) == n;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path))
        unlink(tmp);
}

RtJitLinker *rt_jitlink_open(void)
{
    void *h = rt_nvjitlink_dlopen();
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
    VersionFn version = (VersionFn)dlsym(h, "nvJitLinkVersion");
    if (version && version(&l->major, &l->minor) == 0)
        cache_open(l);   /* no version, no cache: the key would not name the assembler */
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

int rt_ptx_needs_whole_program(const char *ptx, size_t len)
{
    len = len ? len : strlen(ptx);
    return memmem(ptx, len, "setmaxnreg.", 11) || memmem(ptx, len, "wgmma.mma_async", 15);
}

/* ptx assembled whole by the ptxas program, through the cubin cache */
static RtStatus whole_program(RtJitLinker *l, const char *arch, const char *ptx, size_t len, void **out,
                              size_t *out_len, char *log, size_t loglen)
{
    char id[1400], key_opts[1500];
    if (!rt_ptxas_id(id, sizeof id)) {
        if (log && loglen)
            snprintf(log, loglen, "the PTX uses setmaxnreg or wgmma, which nvJitLink's separate "
                                  "compilation degrades, and there is no ptxas to assemble it whole");
        return RT_UNSUPPORTED;
    }
    snprintf(key_opts, sizeof key_opts, "-arch=%s whole program by %s", arch, id);
    uint64_t key[2];
    cache_key(l, key_opts, ptx, len, key);
    if (l->cache[0] && (*out = cache_get(l, key, len, out_len)))
        return RT_OK;
    if (!(*out = rt_ptxas_cubin(ptx, len, arch, out_len))) {
        if (log && loglen)
            snprintf(log, loglen, "ptxas refused the PTX (`ptxas -arch=%s` shows why)", arch);
        return RT_LOAD_ERROR;
    }
    if (l->cache[0])
        cache_put(l, key, len, *out, *out_len);
    return RT_OK;
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
    len = len ? len : strlen(ptx);
    if (rt_ptx_needs_whole_program(ptx, len)) {
        RtStatus w = whole_program(l, arch, ptx, len, out, out_len, log, loglen);
        if (w == RT_OK && log && loglen)
            snprintf(log, loglen, "ptxas");
        return w;
    }
    uint64_t key[2];
    char all_opts[80];
    snprintf(all_opts, sizeof all_opts, "%s %s", opts[0], opts[1]);
    cache_key(l, all_opts, ptx, len, key);
    if (l->cache[0] && (*out = cache_get(l, key, len, out_len))) {
        if (log && loglen)
            snprintf(log, loglen, "nvJitLink");
        return RT_OK;
    }
    if (l->create(&link, 2, opts) != 0)
        return st;
    /* NVJITLINK_INPUT_PTX is 2; the text need not be NUL-terminated */
    if (l->add(link, 2, ptx, len, "kernel.ptx") == 0 && l->complete(link) == 0 &&
        l->cubin_size(link, &n) == 0 && n && (*out = malloc(n)) && l->cubin(link, *out) == 0) {
        *out_len = n;
        st = RT_OK;
        if (log && loglen)
            snprintf(log, loglen, "nvJitLink");
        if (l->cache[0])
            cache_put(l, key, len, *out, n);
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
