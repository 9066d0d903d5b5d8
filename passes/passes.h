/* passes.h — analyses and lowerings between the verified IR and codegen.
 * One pass per file, one entry point each; pass_run_all is the pipeline.
 * Each pass dumps the IR after it when ctx->dump_after is its name or "all". */
#ifndef CAKE_PASSES_H
#define CAKE_PASSES_H
#include "ir.h"
#include "../verifier/consteval.h" /* until cake_passes gets verifier/ as an include dir */

/* The pipeline for code generation of kernel k (NULL: every kernel of m that
 * lists tg) on target tg, after ver_verify found no error: bind-params (with
 * the --set bindings in env, may be NULL), legalize, then simt-subset.
 * Returns the number of errors. */
uint32_t pass_run_all(CakeCtx *ctx, Module *m, Kernel *k, Target tg, const VerEnv *env);

/* bind-params: every use of a compile-time param becomes an integer literal
 * holding its value: its default, or its binding in env (`--set BM=64`; env
 * may be NULL). Reports E0904 when a param's value is not a compile-time
 * integer. */
uint32_t pass_bind_params(CakeCtx *ctx, Kernel *k, const VerEnv *env);

/* legalize: every expression of k's body gets its final type in Node.type
 * and every implicit conversion becomes an explicit OP_CAST (the invariant
 * later passes and codegen rely on is at the top of legalize.c). Reports
 * E0904 for an integer constant used as a float that cannot be evaluated. */
uint32_t pass_legalize(CakeCtx *ctx, Kernel *k, Target tg);

/* simt-subset: reports E0902 at every op of k's body that code generation does
 * not handle yet (tiles, tensor cores, TMA, mbarriers, pipelines, roles, ...),
 * so that all of them are listed before lowering starts. */
uint32_t pass_simt_subset(CakeCtx *ctx, Kernel *k, Target tg);

/* dumps k after `pass` when ctx->dump_after asks for it */
void pass_dump(CakeCtx *ctx, const Kernel *k, const char *pass);

#endif
