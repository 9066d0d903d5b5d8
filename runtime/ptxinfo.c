/* ptxinfo.c — the resources of each kernel of a PTX module, without a GPU:
 * the PTX is assembled for its target by the ptxas program ($CAKE_PTXAS,
 * PATH, /usr/local/cuda/bin/ptxas, "-v"), or else by nvJitLink in process
 * (dlopen'd, "-verbose"; it compiles the module as a separate unit and ignores
 * setmaxnreg, so *separate is set), and the verbose log is read:
 *   ptxas info    : Compiling entry function 'k' for 'sm_90a'
 *   ptxas info    : Function properties for k
 *   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *   ptxas info    : Used 59 registers, used 1 barriers
 * Used by `cakec FILE` (and MCP `compile`) to report registers, spills and
 * local memory; no state is kept between calls. */
#include "backend.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*JlCreate)(void **h, uint32_t n, const char **opts);
typedef int (*JlAddData)(void *h, int kind, const void *data, size_t size, const char *name);
typedef int (*JlComplete)(void *h);
typedef int (*JlLogSize)(void *h, size_t *size);
typedef int (*JlLog)(void *h, char *log);
typedef int (*JlDestroy)(void **h);

enum { JL_INPUT_PTX = 2 };   /* nvJitLinkInputType: NONE, CUBIN, PTX, ... */

/* the verbose log of assembling ptx with nvJitLink (malloc'd), or NULL */
static char *log_jitlink(const char *ptx, size_t len, const char *arch)
{
    void *lib = rt_nvjitlink_dlopen();
    if (!lib)
        return NULL;
    JlCreate create = (JlCreate)dlsym(lib, "nvJitLinkCreate");
    JlAddData add = (JlAddData)dlsym(lib, "nvJitLinkAddData");
    JlComplete complete = (JlComplete)dlsym(lib, "nvJitLinkComplete");
    JlLogSize info_size = (JlLogSize)dlsym(lib, "nvJitLinkGetInfoLogSize");
    JlLog info = (JlLog)dlsym(lib, "nvJitLinkGetInfoLog");
    JlDestroy destroy = (JlDestroy)dlsym(lib, "nvJitLinkDestroy");
    char *log = NULL;
    void *h = NULL;
    char archopt[64];
    snprintf(archopt, sizeof archopt, "-arch=%s", arch);
    const char *opts[2] = {archopt, "-verbose"};
    size_t n = 0;
    if (create && add && complete && info_size && info && destroy && create(&h, 2, opts) == 0) {
        if (add(h, JL_INPUT_PTX, ptx, len, "cake.ptx") == 0 && complete(h) == 0 &&
            info_size(h, &n) == 0 && n > 0 && (log = malloc(n + 1))) {
            if (info(h, log) != 0)
                log[0] = 0;
            log[n] = 0;
        }
        destroy(&h);
    }
    dlclose(lib);
    return log;
}

static const char *find_ptxas(char *buf, size_t cap)
{
    const char *env = getenv("CAKE_PTXAS");
    if (env && *env)
        return access(env, X_OK) == 0 ? env : NULL;
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        snprintf(buf, cap, "%.*s/ptxas", (int)n, path);
        if (n && access(buf, X_OK) == 0)
            return buf;
        path = colon ? colon + 1 : NULL;
    }
    return access("/usr/local/cuda/bin/ptxas", X_OK) == 0 ? "/usr/local/cuda/bin/ptxas" : NULL;
}

/* reads the whole file at path (malloc'd, *n bytes), or NULL */
static void *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    void *buf = NULL;
    long sz;
    if (f && fseek(f, 0, SEEK_END) == 0 && (sz = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)sz)) && fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        *n = (size_t)sz;
    if (f)
        fclose(f);
    return buf;
}

/* `ptxas -v` on ptx: its verbose log (malloc'd), or NULL when there is no ptxas
   or it refused; with cubin, the assembled cubin too (malloc'd, *cubin_len) */
static char *run_ptxas(const char *ptx, size_t len, const char *arch, void **cubin, size_t *cubin_len)
{
    char tool[1024], dir[1024], file[1100], out[1100], cmd[4400];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/cake_ptxinfo.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    const char *ptxas = find_ptxas(tool, sizeof tool);
    if (!ptxas || !mkdtemp(dir))
        return NULL;
    snprintf(file, sizeof file, "%s/k.ptx", dir);
    snprintf(out, sizeof out, "%s/k.cubin", dir);
    FILE *f = fopen(file, "wb");
    char *log = NULL;
    if (f && fwrite(ptx, 1, len, f) == len && fclose(f) == 0) {
        f = NULL;
        snprintf(cmd, sizeof cmd, "'%s' -arch=%s -v '%s' -o '%s' 2>&1", ptxas, arch, file, out);
        FILE *p = popen(cmd, "r");
        size_t cap = 1 << 16, n = 0;
        log = p ? malloc(cap) : NULL;
        while (log && p && n + 1 < cap) {
            size_t got = fread(log + n, 1, cap - 1 - n, p);
            if (!got)
                break;
            n += got;
        }
        if (log)
            log[n] = 0;
        if (p && pclose(p) != 0 && log) { /* ptxas rejected it: no resources to report */
            free(log);
            log = NULL;
        }
        if (log && cubin && !(*cubin = read_file(out, cubin_len))) {
            free(log);
            log = NULL;
        }
    }
    if (f)
        fclose(f);
    remove(out);
    remove(file);
    rmdir(dir);
    return log;
}

static char *log_ptxas(const char *ptx, size_t len, const char *arch)
{
    return run_ptxas(ptx, len, arch, NULL, NULL);
}

int rt_ptxas_id(char *buf, size_t cap)
{
    char tool[1024];
    struct stat st;
    const char *ptxas = find_ptxas(tool, sizeof tool);
    if (!ptxas || stat(ptxas, &st))
        return 0;
    snprintf(buf, cap, "ptxas %s %lld %lld", ptxas, (long long)st.st_size, (long long)st.st_mtime);
    return 1;
}

void *rt_ptxas_cubin(const char *ptx, size_t len, const char *arch, size_t *cubin_len)
{
    void *cubin = NULL;
    char *log = run_ptxas(ptx, len, arch, &cubin, cubin_len);
    free(log);
    return log ? cubin : NULL;
}

/* reads every "Compiling entry function 'NAME'" block of the log */
static int parse_log(const char *log, RtPtxRes *out, int max)
{
    static const char key[] = "Compiling entry function '";
    int n = 0;
    for (const char *p = strstr(log, key); p && n < max; p = strstr(p, key)) {
        p += sizeof key - 1;
        const char *q = strchr(p, '\'');
        if (!q)
            break;
        RtPtxRes *r = &out[n++];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%.*s", (int)(q - p), p);
        int sp[3] = {0, 0, 0};
        if (rt__jit_spills(log, r->name, sp)) {
            r->stack_bytes = sp[0] > 0 ? sp[0] : 0;
            r->spill_store_bytes = sp[1] > 0 ? sp[1] : 0;
            r->spill_load_bytes = sp[2] > 0 ? sp[2] : 0;
        }
        const char *next = strstr(q, key), *used = strstr(q, "Used ");
        if (used && (!next || used < next))
            r->regs = (int)strtol(used + 5, NULL, 10);
    }
    return n;
}

int rt_ptx_resources(const char *ptx, size_t len, const char *arch, RtPtxRes *out, int max,
                     const char **tool)
{
    /* ptxas first: it assembles the module whole, as the driver's JIT does; nvJitLink
       links separately compiled units and ignores setmaxnreg (ptxas info C7504), so
       its counts can differ for kernels with register budgets */
    *tool = "ptxas";
    char *log = log_ptxas(ptx, len, arch);
    if (!log || !strstr(log, "Compiling entry function")) {
        free(log);
        *tool = "nvJitLink";
        log = log_jitlink(ptx, len, arch);
    }
    if (!log) {
        *tool = NULL;
        return -1;
    }
    int n = parse_log(log, out, max);
    for (int i = 0; i < n; i++)
        out[i].separate = strstr(log, "C7504") != NULL;
    free(log);
    return n;
}
