/* lib_tune.c — `cakec lib tune DIR --shapes FILE [-o TABLE] [--runner local|slurm]`. */
#include "lib_cmd.h"

int lib_cmd_tune(CakeCtx *ctx, const LibOptions *o)
{
    diag_report(ctx, E1212, IR_NOSPAN, "lib tune: not built yet");
    return drv_finish(ctx, &o->opt, EXIT_USER);
}
