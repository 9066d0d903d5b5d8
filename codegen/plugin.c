/* plugin.c — the one symbol libcake-llvm.so exports: the code generator's
 * function table (cg_plugin.h). Built only into the plugin, not into
 * cake_codegen. */
#include "cg_plugin.h"

const CgPlugin *cake_codegen_plugin(void) __attribute__((visibility("default")));

const CgPlugin *cake_codegen_plugin(void)
{
    static const CgPlugin table = {
        .version = CG_PLUGIN_VERSION,
        .layout = CG_PLUGIN_LAYOUT,
        .cake_version = CAKE_VERSION,
        .emit = cg_emit,
        .launch_dims = cg_launch_dims,
    };
    return &table;
}
