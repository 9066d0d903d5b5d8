/* pipeline.c — the pass pipeline before code generation, as one readable
 * function, and the shared IR dump. */
#include <stdlib.h>
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

/* one pass: run it, dump after it when asked, check the lowered IR */
#define PASS(name, call)                                         \
    do {                                                         \
        if (ctx->nerrors == before) {                            \
            (void)(call);                                        \
            pass_dump(ctx, kk, name);                            \
            pass_lcheck(ctx, kk, tg, name);                          \
        }                                                        \
    } while (0)

uint32_t pass_run_all(CakeCtx *ctx, Module *m, Kernel *k, Target tg, const CeEnv *env)
{
    uint32_t before = ctx->nerrors;
    for (uint32_t i = 0; i < m->nkernels; i++) {
        Kernel *kk = m->kernels[i];
        if (k ? kk != k : (kk->ntargets && !kk->targets[tg]))
            continue;
        uint32_t maxnreg = 0;
        if (pass_bind_params(ctx, kk, env))
            continue;   /* a --set instance that does not verify: nothing to lower */
        pass_fold_dead(ctx, kk);
        pass_dump(ctx, kk, "bind-params");
        PASS("legalize", pass_legalize(ctx, kk, tg));
        PASS("unroll", pass_unroll(ctx, kk, tg));
        PASS("pipes", pass_pipes(ctx, kk, tg));
        PASS("async", pass_async(ctx, kk, tg));
        PASS("distribute", pass_distribute(ctx, kk, tg));
        PASS("roles", pass_roles(ctx, kk, tg, &maxnreg));
        PASS("abi", pass_abi(ctx, kk, tg, maxnreg));
        PASS("unsupported", pass_unsupported(ctx, kk, tg));
    }
    return ctx->nerrors - before;
}

int pass_planted(const char *bug)
{
    const char *e = getenv("CAKE_PLANT_BUG");
    size_t n = strlen(bug);
    for (const char *p = e; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, bug, n) && (p[n] == 0 || p[n] == ','))
            return 1;
    return 0;
}
