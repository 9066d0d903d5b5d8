/* pipeline.c — the pass pipeline before code generation, as one readable
 * function, and the shared IR dump. */
#include <string.h>
#include "passes.h"

void pass_dump(CakeCtx *ctx, const Kernel *k, const char *pass)
{
    const char *want = ctx->dump_after;
    if (!want || (strcmp(want, pass) && strcmp(want, "all")))
        return;
    FILE *out = ctx->dump_out ? ctx->dump_out : stderr;
    fprintf(out, "# IR after %s\n", pass);
    ir_print_kernel(ctx, k, out);
}

uint32_t pass_run_all(CakeCtx *ctx, Module *m, Kernel *k, Target tg, const VerEnv *env)
{
    uint32_t before = ctx->nerrors;
    for (uint32_t i = 0; i < m->nkernels; i++) {
        Kernel *kk = m->kernels[i];
        if (k ? kk != k : (kk->ntargets && !kk->targets[tg]))
            continue;
        if (pass_bind_params(ctx, kk, env))
            continue;   /* a --set instance that does not verify: nothing to lower */
        pass_dump(ctx, kk, "bind-params");
        pass_legalize(ctx, kk, tg);
        pass_dump(ctx, kk, "legalize");
        pass_simt_subset(ctx, kk, tg);
        pass_dump(ctx, kk, "simt-subset");
    }
    return ctx->nerrors - before;
}
