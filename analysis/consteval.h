/* consteval.h — the one integer evaluator: integer expressions over compile-time
 * parameters (their defaults, or `--set` overrides), dims bound to sizes
 * (`--shape`, launch dims), lets with constant initializers and, through two
 * hooks, the state of a concrete interpreter (the sync checks' executor: loop
 * variables, vars, thread indices). Also divisibility facts drawn from
 * `assume`s and the block size in threads per target. The verifier, the sync
 * and bounds checks, the passes, codegen and the runtime's shape environments
 * all evaluate through it, so an expression has one value everywhere.
 *
 * Semantics (docs/tir.md 3.4): 64-bit signed integers; an evaluation that
 * would overflow fails (it never wraps). `/` and `%` truncate toward zero, as
 * in C; division or remainder by zero fails, and so does INT64_MIN / -1.
 * `cdiv(a, b)` is the ceiling of a / b on the language's domain a >= 0, b > 0;
 * outside it (a negative operand, b = 0) the evaluation fails: the language
 * gives such a cdiv no value, so no stage may assume one. `<<` fails for a
 * negative left side, a count outside 0..62 or a result that overflows; `>>`
 * is arithmetic, count 0..63. `^` (power) fails for a negative exponent or on
 * overflow. Comparisons and `&&`, `||`, `!` give 0 or 1; `a && b` is 0 when
 * either side is known to be 0, even if the other fails (`||` likewise with 1).
 * A cast to an integer or bool scalar type keeps the value if the type holds
 * it (bool: != 0) and fails otherwise; a cast to a float or vector fails.
 * Floats, loads, calls other than cdiv/max/min/select and tiles fail. */
#ifndef CAKE_CONSTEVAL_H
#define CAKE_CONSTEVAL_H
#include "ir.h"
#include "targets.h"

/* A binding of a parameter (overriding its default) or of a symbolic dim. */
typedef struct { Sym name; int64_t value; } CeBinding;

typedef struct CeEnv CeEnv;
struct CeEnv {
    const CeBinding *b; uint32_t n;   /* looked up by name: params, dims */
    /* Optional hooks for an interpreter (NULL: none). decl gives the current value
     * of declaration `decl` (a loop variable, var, let or dim): 1 and *out, or 0
     * to fall back to the rules above. special gives the value of the special
     * register node `at` (thread.x, lane, warp, ...; grid.x or sm.count where the
     * launch is known): 1 and *out, or 0 (fails). */
    int (*decl)(const CeEnv *env, NodeId decl, int64_t *out);
    int (*special)(const CeEnv *env, NodeId at, int64_t *out);
    void *u;                          /* the hooks' state */
};

/* The value env binds to name: 1 and *out, or 0 (env may be NULL). */
int ce_env_get(const CeEnv *env, Sym name, int64_t *out);

/* Evaluates integer expression e with parameters at their defaults and dims
 * unknown. Returns 1 and sets *out when e is a compile-time constant; 0 when it
 * is not (it names a dim, a loop variable, a special register, ...) or when the
 * evaluation fails (see the semantics above). Booleans evaluate to 0/1. */
int ce_const_int(const CakeCtx *ctx, const Kernel *k, NodeId e, int64_t *out);

/* The default of parameter `param` (its OP_PARAM node) when it is a constant of
 * its own: 1 and *out; 0 when it names another parameter (`STAGES = 1 + 128 /
 * HD`: its value depends on HD's binding, so a `--set STAGES=2` equal to the
 * value at HD's default is still a binding) or is not a constant. */
int ce_param_own_default(const CakeCtx *ctx, const Kernel *k, NodeId param, int64_t *out);

/* The same with bindings: env overrides parameter defaults (`--set BM=64`) and
 * gives dims their sizes (`--shape M=4096`). env may be NULL. */
int ce_eval_int(const CakeCtx *ctx, const Kernel *k, NodeId e, const CeEnv *env, int64_t *out);

/* One binary integer operation with the semantics above (op: OP_ADD .. OP_OR,
 * OP_POW, OP_MAX, OP_MIN, OP_CDIV): 1 and *out, or 0 when it fails. Compound
 * assignments (`x += e`) use it too. */
int ce_binop(Op op, int64_t a, int64_t b, int64_t *out);

/* A known divisor of integer expression e (>= 1), from constants, products,
 * sums and `assume D % c == 0` / `assume D == c` facts; 0 when e is the
 * constant 0 (divisible by everything). */
int64_t ce_known_divisor(const CakeCtx *ctx, const Kernel *k, NodeId e);

/* The greatest common divisor of |a| and |b|; 0 when both are 0. */
int64_t ce_gcd(int64_t a, int64_t b);

/* 1 when e is provably a multiple of m (m >= 1). */
int ce_is_multiple(const CakeCtx *ctx, const Kernel *k, NodeId e, int64_t m);

/* The block size in threads on target t (the threads/warps/warpgroups clause
 * times tg_unit_threads); 0 when absent, not constant or not positive; past
 * every limit it may saturate at INT64_MAX / 2 (tg_block_threads). */
int64_t ce_block_threads(const CakeCtx *ctx, const Kernel *k, Target t);

#endif
