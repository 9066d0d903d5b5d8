/* fastmath.h — math builtins computed without the special-function unit, as
 * data and a reference: the coefficients codegen emits and the f32 steps the
 * executors (run --sim) evaluate, so that both give the same bits. */
#ifndef CAKE_FASTMATH_H
#define CAKE_FASTMATH_H

/* exp2.fma (ir/ops.h): 2^x = 2^j * p(f), j = round(min(x, 127)) by the
 * 1.5 * 2^23 trick, f = x - j in [-1/2, 1/2], p the degree-3 polynomial below
 * (Chebyshev interpolation of 2^f at 4 nodes; max rel. error 1.0e-4), lowest
 * degree first; 0 below -125. */
#define IR_EXP2_FMA_BIG 12582912.0f       /* 1.5 * 2^23 */
#define IR_EXP2_FMA_LO (-125.0f)
#define IR_EXP2_FMA_HI 127.0f
extern const float ir_exp2_fma_c[4];

/* the f32 value codegen's instruction sequence computes */
float ir_exp2_fma(float x);

#endif
