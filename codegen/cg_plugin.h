/* cg_plugin.h — the code generator as a plugin: codegen/ and LLVM built into
 * one shared object, libcake-llvm.so, that libcake (lib/codegen.c) dlopens the
 * first time a kernel is compiled. `cakec check` and `cakec print` never load
 * it, so they start in about a millisecond (loading LLVM costs 5 to 15 ms);
 * compile and run parse and verify once, in cakec, and hand the verified
 * module to the plugin in the same process.
 *
 * The interface is one exported function, CG_PLUGIN_SYMBOL, returning a
 * versioned table. The plugin carries its own copy of ir/ (LLVM, cake_ir and
 * cake_codegen are linked into it with every symbol but that one hidden), so
 * it loads into any process that uses libcake. Host and plugin share data,
 * not code: the CakeCtx, its arena and diagnostics, the Module. Their layouts
 * must agree, which `layout` (the IR's struct sizes and enum counts) and
 * `cake_version` check at load; a mismatch is E0974.
 *
 * Building it statically against LLVM (CAKE_STATIC_LLVM=ON) makes it
 * self-contained: what runs on a machine without LLVM is cakec,
 * libcake-llvm.so and libcjson.so.1. */
#ifndef CAKE_CG_PLUGIN_H
#define CAKE_CG_PLUGIN_H

#include "cg.h"

#define CG_PLUGIN_FILE "libcake-llvm.so"
#define CG_PLUGIN_SYMBOL "cake_codegen_plugin"
#define CG_PLUGIN_VERSION 2u   /* bump when the table below changes (2: launch_dims takes sm_count) */

/* the layouts host and plugin share: struct sizes and enum counts of ir.h */
#define CG_LAYOUT_N 13
#define CG_PLUGIN_LAYOUT                                                                  \
    {sizeof(CakeCtx), sizeof(Arena), sizeof(Interner), sizeof(SourceFile), sizeof(Diag), \
     sizeof(Module), sizeof(Kernel), sizeof(Node), sizeof(Type), OP__COUNT, DIAG__COUNT,   \
     DT__COUNT, TG__COUNT}

typedef struct CgPlugin {
    /* these two never move, so that any plugin can say what it is */
    uint32_t version;               /* CG_PLUGIN_VERSION */
    const char *cake_version;       /* CAKE_VERSION */
    uint32_t layout[CG_LAYOUT_N];   /* CG_PLUGIN_LAYOUT as the plugin was compiled */
    /* cg_emit and cg_launch_dims of cg.h */
    int (*emit)(CakeCtx *ctx, Module *m, Kernel *k, Target tg, CgEmit what,
                const CgOptions *opt, char **out, size_t *len);
    int (*launch_dims)(CakeCtx *ctx, const Kernel *k, Target tg, const int64_t *dim_values,
                       int64_t sm_count, CgLaunch *out);
} CgPlugin;

/* the type of CG_PLUGIN_SYMBOL */
typedef const CgPlugin *(*CgPluginEntry)(void);

#endif
