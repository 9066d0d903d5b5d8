/* passes.h — analyses and lowerings between the verified IR and codegen.
 * One pass per file, one entry point each; pass_run_all is the pipeline.
 * Each pass dumps the IR after it when ctx->dump_after is its name or "all". */
#ifndef CAKE_PASSES_H
#define CAKE_PASSES_H
#include "ir.h"
#include "consteval.h"

/* The pipeline for code generation of kernel k (NULL: every kernel of m that
 * lists tg) on target tg, in this order (docs/tirl.md):
 *   bind-params   params become literals (their defaults, or env's `--set`)
 *   legalize      every expression gets its final type; implicit conversions
 *                 become explicit casts (the invariant is in legalize.c)
 *   unroll        full unrolling of loops over tile statements
 *   pipes         pipelines and mbarriers become explicit mbarrier ops
 *   async         TMA through tensor maps; wgmma fence/commit/wait
 *   distribute    register tiles become per-thread fragments
 *   roles         warp-role dispatch, setmaxnreg, role-relative specials
 *   abi           the launch plan (shared-memory slots, tensor-map params)
 *   unsupported   E0902 for whatever is left without a lowering
 * The lowered IR is checked after each pass when pass_lcheck_enabled().
 * Returns the number of errors. */
uint32_t pass_run_all(CakeCtx *ctx, Module *m, Kernel *k, Target tg, const CeEnv *env);

/* bind-params: every use of a compile-time param becomes an integer literal
 * holding its value: its default, or its binding in env (`--set BM=64`; env
 * may be NULL). k must already be typed at those values: build instances
 * (lib/cake.h, cake_instance) rather than calling the pipeline with a --set
 * env on a kernel verified at its defaults. Reports E0904 when a param's
 * value is not a compile-time integer. */
uint32_t pass_bind_params(CakeCtx *ctx, Kernel *k, const CeEnv *env);
/* after bind-params: an `if` on a constant becomes the block it takes (bind_params.c) */
uint32_t pass_fold_dead(CakeCtx *ctx, Kernel *k);

/* legalize: every expression of k's body gets its final type in Node.type
 * and every implicit conversion becomes an explicit OP_CAST (the invariant
 * later passes and codegen rely on is at the top of legalize.c). Reports
 * E0904 for an integer constant used as a float that cannot be evaluated. */
uint32_t pass_legalize(CakeCtx *ctx, Kernel *k, Target tg);

uint32_t pass_unroll(CakeCtx *ctx, Kernel *k, Target tg);
uint32_t pass_pipes(CakeCtx *ctx, Kernel *k, Target tg);
uint32_t pass_async(CakeCtx *ctx, Kernel *k, Target tg);
uint32_t pass_distribute(CakeCtx *ctx, Kernel *k, Target tg);
/* *maxnreg: the register cap at entry when roles set their budgets, else 0 */
uint32_t pass_roles(CakeCtx *ctx, Kernel *k, Target tg, uint32_t *maxnreg);
uint32_t pass_abi(CakeCtx *ctx, Kernel *k, Target tg, uint32_t maxnreg);
uint32_t pass_unsupported(CakeCtx *ctx, Kernel *k, Target tg);

/* the lowered-level checker (lcheck.c): after `pass`, a violated invariant
 * is a compiler bug (ir_bug) */
int pass_lcheck_enabled(const CakeCtx *ctx);
/* Test-only planted lowering bugs (docs/sim.md): 1 when the environment's
 * CAKE_PLANT_BUG names `bug` (a comma-separated list). `run --sim` must catch
 * each in CI: distribute-frag (distribute swaps the first two accumulator
 * operands of every @wgmma), async-no-wait (async drops every `wgmma.wait N`
 * with N > 0), pipes-parity (pipes makes the producer wait on the empty
 * barrier's current phase instead of the previous one: a deadlock). */
int pass_planted(const char *bug);
void pass_lcheck(CakeCtx *ctx, Kernel *k, Target tg, const char *pass);

/* dumps k after `pass` when ctx->dump_after asks for it */
void pass_dump(CakeCtx *ctx, const Kernel *k, const char *pass);

#endif
