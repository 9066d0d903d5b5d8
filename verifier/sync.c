/* sync.c — the synchronization-protocol checker: builds the kernel's tables
 * once and runs each check in order (docs/tir.md sections 6-8 give the rules;
 * tests/diag/sync/CODES.md lists the codes with a wrong and a fixed example). */
#include "sync.h"

uint32_t sy_check_all(SyK *s)
{
    uint32_t before = s->ctx->nerrors;
    sy_check_named(s);
    sy_check_diverge(s);
    sy_check_pipes(s);
    sy_check_mbars(s);
    sy_check_races(s);
    sy_check_proxy(s);
    sy_check_intra(s);
    sy_check_writers(s);
    sy_check_cpasync(s);
    sy_check_wgmma(s);
    sy_check_init(s);
    return s->ctx->nerrors - before;
}

uint32_t ver_sync(CakeCtx *ctx, Kernel *k)
{
    return sy_run(ctx, k, sy_check_all);
}
