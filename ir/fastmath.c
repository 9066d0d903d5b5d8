/* fastmath.c — the reference of the SFU-free math builtins (fastmath.h). */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "fastmath.h"

const float ir_exp2_fma_c[4] = {0.9999245405197144f, 0.6931367516517639f, 0.2426394820213318f,
                                0.05583828315138817f};

float ir_exp2_fma(float x)
{
    if (x != x)
        return x;
    if (x < IR_EXP2_FMA_LO)
        return 0.0f;
    volatile float xc = x < IR_EXP2_FMA_HI ? x : IR_EXP2_FMA_HI, big = IR_EXP2_FMA_BIG;
    volatile float t = xc + big, j = t - big;
    float f = xc - j, p = ir_exp2_fma_c[3], r;
    for (int k = 2; k >= 0; k--)
        p = fmaf(p, f, ir_exp2_fma_c[k]);
    float tt = t;
    uint32_t ti, pi;
    memcpy(&ti, &tt, sizeof ti);
    memcpy(&pi, &p, sizeof pi);
    pi += ti << 23;
    memcpy(&r, &pi, sizeof r);
    return r;
}
