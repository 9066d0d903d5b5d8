/* consteval.h — constant evaluation of integer expressions over compile-time
 * parameters (their defaults, or overrides), symbolic dims bound to sizes, and
 * lets with constant initializers; and divisibility facts drawn from `assume`s.
 * Used by the verifier, the sync/bounds checks, the cost model and codegen. */
#ifndef CAKE_CONSTEVAL_H
#define CAKE_CONSTEVAL_H
#include "ir.h"

/* A binding of a parameter (overriding its default) or of a symbolic dim. */
typedef struct { Sym name; int64_t value; } VerBinding;
typedef struct { const VerBinding *b; uint32_t n; } VerEnv;

/* The value env binds to name: 1 and *out, or 0 (env may be NULL). */
int ver_env_get(const VerEnv *env, Sym name, int64_t *out);

/* Evaluates integer expression e with parameters at their defaults and dims
 * unknown. Returns 1 and sets *out when e is a compile-time constant; 0 when it
 * is not (it names a dim, a loop variable, a special register, ...) or when the
 * evaluation fails (division by zero, overflow). Booleans evaluate to 0/1. */
int ver_const_int(const CakeCtx *ctx, const Kernel *k, NodeId e, int64_t *out);

/* The same with bindings: env overrides parameter defaults (`--set BM=64`) and
 * gives dims their sizes (`--shape M=4096`). env may be NULL. */
int ver_eval_int(const CakeCtx *ctx, const Kernel *k, NodeId e, const VerEnv *env, int64_t *out);

/* A known divisor of integer expression e (>= 1), from constants, products,
 * sums and `assume D % c == 0` / `assume D == c` facts; 0 when e is the
 * constant 0 (divisible by everything). */
int64_t ver_known_divisor(const CakeCtx *ctx, const Kernel *k, NodeId e);

/* The greatest common divisor of |a| and |b|; 0 when both are 0. */
int64_t ver_gcd(int64_t a, int64_t b);

/* 1 when e is provably a multiple of m (m >= 1). */
int ver_is_multiple(const CakeCtx *ctx, const Kernel *k, NodeId e, int64_t m);

/* The block size in threads (threads/warps/warpgroups clause × unit size with
 * warp size ws); 0 when absent or not constant. */
int64_t ver_block_threads(const CakeCtx *ctx, const Kernel *k, int ws);

#endif
