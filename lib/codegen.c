/* codegen.c — libcake's code generator: codegen/ and LLVM live in a plugin,
 * libcake-llvm.so (codegen/cg_plugin.h), dlopened here the first time a
 * kernel is emitted, so that verifying never loads LLVM.
 *
 * Where: $CAKE_LLVM_PLUGIN when set, else libcake-llvm.so in the folder of
 * the running executable (cakec's build folder, or wherever cakec is
 * installed with it). The library is opened RTLD_NODELETE: it stays mapped
 * after the dlclose that balances each dlopen, so the table stays valid and
 * no state is kept here; opening it again costs a lookup. */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cake_priv.h"

static void plugin_path(char *buf, size_t size)
{
    const char *env = getenv("CAKE_LLVM_PLUGIN");
    if (env && *env) {
        snprintf(buf, size, "%s", env);
        return;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char *slash = NULL;
    if (n > 0) {
        self[n] = 0;
        slash = strrchr(self, '/');
    }
    if (slash)
        slash[1] = 0;
    snprintf(buf, size, "%s%s", slash ? self : "./", CG_PLUGIN_FILE);
}

static const CgPlugin *not_found(CakeCtx *ctx, const char *path, const char *why)
{
    Diag *d = diag_report(ctx, E0974, IR_NOSPAN, "cannot load the code generator `%s`: %s", path,
                          why);
    diag_help(ctx, d, "install " CG_PLUGIN_FILE " from cakec's own build next to the cakec "
                      "executable, or set CAKE_LLVM_PLUGIN to its path");
    return NULL;
}

const CgPlugin *lib_codegen(CakeCtx *ctx)
{
    char path[PATH_MAX + 32];
    plugin_path(path, sizeof path);
    void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) {
        const char *err = dlerror();
        return not_found(ctx, path, err ? err : "dlopen failed");
    }
    CgPluginEntry entry;
    *(void **)&entry = dlsym(h, CG_PLUGIN_SYMBOL);
    const CgPlugin *p = entry ? entry() : NULL;
    dlclose(h);
    if (!p)
        return not_found(ctx, path, "it has no " CG_PLUGIN_SYMBOL);
    static const uint32_t layout[CG_LAYOUT_N] = CG_PLUGIN_LAYOUT;
    if (p->version != CG_PLUGIN_VERSION || memcmp(p->layout, layout, sizeof layout) != 0 ||
        strcmp(p->cake_version, CAKE_VERSION) != 0)
        return not_found(ctx, path, ir_fmt(ctx, "it was built for another cakec (%s, interface "
                                                "%u; this cakec: %s, interface %u)%s",
                                           p->cake_version, p->version, CAKE_VERSION,
                                           CG_PLUGIN_VERSION,
                                           p->version == CG_PLUGIN_VERSION ? ", IR layouts differ"
                                                                           : ""));
    return p;
}

static int emit(CakeCtx *ctx, Module *m, Kernel *k, Target tg, CgEmit what, const CgOptions *opt,
                char **out, size_t *len)
{
    const CgPlugin *cg = lib_codegen(ctx);
    if (!cg)
        return 3;
    int rc = cg->emit(ctx, m, k, tg, what, opt, out, len);
    if (rc == 2) /* cg_emit caught a bug itself, to free its LLVM objects */
        cake_bug_caught(ctx);
    return rc;
}

int cake_emit(CakeCtx *ctx, Module *m, Kernel *k, Target tg, CgEmit what, const CgOptions *opt,
              char **out, size_t *len)
{
    int rc;
    *out = NULL;
    *len = 0;
    CAKE_PROTECTED(ctx, rc, emit(ctx, m, k, tg, what, opt, out, len));
    return rc;
}
