/* divis.h — divisibility of integer expressions: a congruence lattice modulo
 * powers of two, and an evaluator of index expressions over it. The alignment
 * proofs of the verifier (verifier/align.c) ask "is this byte offset a
 * multiple of 16?"; every width they ask about is a power of two, so a value
 * is described by its residue modulo 2^k:
 *
 *   DvCong {r, k}: every value v the expression can take has v ≡ r (mod 2^k).
 *   k = 0 knows nothing; k = 64 is an exact constant (the arithmetic is modulo
 *   2^64, which agrees with every smaller power of two, so it never overflows).
 *
 * The evaluator follows the index arithmetic of docs/tir.md §3.4: `+ - *`,
 * `<<`, `>>`, `%` by a constant or a name (a - d * q is congruent to a modulo
 * every power of two dividing d, whatever the signs), `/` by a power of two
 * (a shift: indices are non-negative, docs/tir.md §3.4), `&` with a
 * constant, `cdiv` by a power of two, min/max/select (either side), casts;
 * names through their declarations: a `let` is its initializer, a loop
 * variable is lo + step * t for an unknown t >= 0, a parameter is its value;
 * dims, scalar arguments, `var`s, thread and block indices and loaded
 * values are unknown unless a fact says more. Facts are `e % c == r`,
 * `e & (2^j - 1) == r` and `e == c` on a name e, from `assume`s, enclosing
 * `if`s and masks (the caller collects them: dv_add_facts). */
#ifndef CAKE_DIVIS_H
#define CAKE_DIVIS_H
#include <stdint.h>
#include "ir.h"

typedef struct { uint64_t r; int k; } DvCong;

DvCong dv_const(int64_t c);
DvCong dv_top(void);                       /* nothing known */
DvCong dv_add(DvCong a, DvCong b);
DvCong dv_neg(DvCong a);
DvCong dv_mul(DvCong a, DvCong b);
DvCong dv_join(DvCong a, DvCong b);        /* a value that is one or the other */
DvCong dv_meet(DvCong a, DvCong b);        /* a value that satisfies both (a wins a conflict) */
DvCong dv_shr(DvCong a, int c);            /* floor(v / 2^c) */
/* the largest power of two (at most 2^62) that divides every value: 2^min(k, tz(r)) */
int64_t dv_pow2(DvCong a);
/* 1 when every value is a multiple of m (a power of two) */
int dv_multiple(DvCong a, int64_t m);

/* A fact: every value of declaration `decl` (a DIM, ARG, LET, FOR, ...) has
 * the congruence c. */
typedef struct { NodeId decl; DvCong c; } DvFact;

typedef struct DvEnv DvEnv;
struct DvEnv {
    const CakeCtx *ctx;
    const Kernel *k;
    DvFact *facts; uint32_t nfacts, capfacts;   /* caller-owned storage */
    /* optional: the value of special register node `at` (e.g. `threads` in a
     * role); 1 and *out, or 0 (unknown) */
    int (*special)(const DvEnv *env, NodeId at, int64_t *out);
    void *u;
};

/* the congruence of integer expression e under env's facts */
DvCong dv_expr(const DvEnv *env, NodeId e);

/* Adds the facts that condition `cond` implies when it holds (negated = 0) or
 * when it fails (negated = 1): the conjuncts of `&&` (of `||` when negated,
 * through `!`). Facts past capfacts are dropped. */
void dv_add_facts(DvEnv *env, NodeId cond, int negated);

#endif
