/* eval.h — shape environments: concrete values for a kernel's compile-time
 * parameters, symbolic dims and integer scalar args, and integer evaluation of
 * header expressions (grid, block size, tensor dims and strides, assumes) over
 * them. Used by the reference interpreter, `run --check`, shape picking and
 * the runtime launch.
 *
 * A ShapeEnv is a small value (copy it freely): bindings name -> int64,
 * looked up by interned name (Sym), so one env serves a kernel and the task's
 * reference kernel (`--reference FILE`) when both were parsed into the same
 * CakeCtx. The evaluation itself is consteval.c's ce_eval_int (parameters
 * not bound take their defaults); shape_eval_int adds the cases a header
 * needs on top (a DIM declaration node, an integer scalar arg by its name,
 * also inside an expression: `assume n <= N`).
 */
#ifndef CAKE_EVAL_H
#define CAKE_EVAL_H
#include "ir.h"
#include "consteval.h"

#define SHAPE_ENV_MAX 48

typedef struct ShapeEnv {
    uint32_t n;
    CeBinding b[SHAPE_ENV_MAX];   /* {Sym name, int64_t value} */
} ShapeEnv;

void shape_env_clear(ShapeEnv *env);
/* Binds (or rebinds) name; 0 when the env is full. */
int shape_env_set(ShapeEnv *env, Sym name, int64_t value);
int shape_env_get(const ShapeEnv *env, Sym name, int64_t *out);
/* A CeEnv view of env (valid while env lives), for ce_eval_int. */
CeEnv shape_env_view(const ShapeEnv *env);

/* Evaluates integer expression e of k. Returns 1 and sets *out, or 0 when e
 * cannot be evaluated (an unbound dim, a float, division by zero, overflow). */
int shape_eval_int(const CakeCtx *ctx, const Kernel *k, NodeId e, const ShapeEnv *env,
                   int64_t *out);

/* Parses "M=4096,N=4096" (also ';' or spaces between items) into env. Each
 * name must be a dim, a parameter or an integer scalar arg of k, or sm.count
 * (SHAPE_SM_COUNT below). Returns 1, or 0 with the reason in err. */
int shape_env_parse(CakeCtx *ctx, const Kernel *k, ShapeEnv *env, const char *spec,
                    char *err, size_t errlen);

/* `sm.count=N` in a spec binds the value the grid clause reads as `sm.count`
 * (the launching device's SM count otherwise): a persistent kernel checked
 * with fewer blocks than SMs gives its blocks several tiles each. */
#define SHAPE_SM_COUNT "sm.count"
/* the value env binds to sm.count; 0: none (the device's) */
int64_t shape_env_sm_count(CakeCtx *ctx, const ShapeEnv *env);

/* Binds the kernel's `shape` clause defaults for names not bound yet. */
void shape_env_add_defaults(const Kernel *k, ShapeEnv *env);

/* Binds every parameter not bound yet to its default value. Returns 1, or 0
 * with E0953 when a default does not evaluate. */
int shape_env_bind_params(CakeCtx *ctx, const Kernel *k, ShapeEnv *env);

/* 1 when every symbolic dim of k is bound; otherwise 0, and with report set
 * one E0953 per missing dim (at its declaration). */
int shape_env_complete(CakeCtx *ctx, const Kernel *k, const ShapeEnv *env, int report);

/* 1 when every assume of k that evaluates holds (assumes that do not evaluate
 * are skipped). Otherwise 0; *failed (may be NULL) gets the first assume that
 * fails, and with report set E0961 is reported there. */
int shape_env_assumes_hold(CakeCtx *ctx, const Kernel *k, const ShapeEnv *env, int report,
                           NodeId *failed);

/* "M=37, N=65" (dims of k in order, then other bound names that are not
 * parameters); returns buf. */
char *shape_env_format(const CakeCtx *ctx, const Kernel *k, const ShapeEnv *env, char *buf,
                       size_t len);

/* Geometry of argument i of k under env: rank (0 for a scalar), extents and
 * element strides (the `strides` clause, or row-major). Returns 1, or 0 when
 * an extent or stride does not evaluate or is negative (no diagnostic). */
int shape_arg_geometry(const CakeCtx *ctx, const Kernel *k, uint32_t i, const ShapeEnv *env,
                       DType *dtype, int *rank, int64_t shape[IR_MAX_RANK],
                       int64_t stride[IR_MAX_RANK]);

#endif
