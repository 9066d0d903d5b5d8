/* numfmt.c — the small float formats as numbers: rounding a double to bf16,
 * f16, tf32, e4m3 and e5m2 (to nearest even; the fp8 formats saturate to
 * their largest finite value, as PTX's cvt.rn.satfinite does), and the bit
 * patterns of f16, e4m3 and e5m2 values. One home for these facts: the
 * oracle rounds and encodes with them, code generation encodes literals. */
#include <math.h>
#include <string.h>
#include "ir.h"

typedef struct {
    int ebits, mbits, bias, has_inf; /* has_inf 0: E4M3FN (no inf, one NaN per sign) */
    double maxf;
    int sat;                         /* out of range rounds to ±maxf, not ±inf */
} Fmt;

static const Fmt *fmt_of(DType dt)
{
    static const Fmt f16 = {5, 10, 15, 1, 65504.0, 0};
    static const Fmt e4m3 = {4, 3, 7, 0, 448.0, 1};
    static const Fmt e5m2 = {5, 2, 15, 1, 57344.0, 1};
    switch (dt) {
    case DT_F16: return &f16;
    case DT_E4M3: return &e4m3;
    case DT_E5M2: return &e5m2;
    default: return NULL;
    }
}

/* the bits of a double and back */
static uint64_t dbits(double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    return u;
}

static double dvalue(uint64_t u)
{
    double v;
    memcpy(&v, &u, 8);
    return v;
}

/* the unbiased exponent of a positive normal double (a subnormal gives -1023) */
static int dexp(double a)
{
    return (int)(dbits(a) >> 52) - 1023;
}

/* v rounded to nearest even with p significant bits and minimum exponent emin.
 * A value at or above 2^emin rounds on its bits (the fraction's low 53 - p
 * bits, ties to even, a carry into the exponent included); a smaller one, to
 * the fixed quantum 2^(emin - p + 1). The sampled check rounds every input
 * element through here (hundreds of millions at a 16384^3 GEMM). */
static double round_to(double v, int p, int emin, double maxf, int sat)
{
    if (isnan(v) || v == 0)
        return v;
    double a = fabs(v), r;
    if (isinf(a))
        return sat ? copysign(maxf, v) : v;
    if (dexp(a) >= emin) {
        int drop = 53 - p;
        uint64_t u = dbits(a), low = (UINT64_C(1) << drop) - 1;
        u = (u + (low >> 1) + ((u >> drop) & 1)) & ~low;
        r = dvalue(u);
    } else {
        double q = ldexp(1.0, emin - (p - 1));
        r = nearbyint(a / q) * q;
    }
    if (r > maxf)
        r = sat ? maxf : INFINITY;
    return copysign(r, v);
}

double ir_float_round(DType dt, double v)
{
    switch (dt) {
    case DT_F32: return (double)(float)v;
    case DT_TF32: return round_to(v, 11, -126, 0x1.FFCp127, 0);   /* (2 - 2^-10) 2^127 */
    case DT_BF16: return round_to(v, 8, -126, 0x1.FEp127, 0);     /* (2 - 2^-7) 2^127 */
    default: break;
    }
    const Fmt *f = fmt_of(dt);
    if (!f)
        return v;
    return round_to(v, f->mbits + 1, 1 - f->bias, f->maxf, f->sat);
}

uint32_t ir_float_bits(DType dt, double v)
{
    const Fmt *f = fmt_of(dt);
    if (!f)
        return 0;
    double r = ir_float_round(dt, v);
    int eb = f->ebits, mb = f->mbits;
    uint32_t sign = signbit(r) ? 1u << (eb + mb) : 0, emax = (1u << eb) - 1;
    if (isnan(r)) /* the canonical NaN: f16 0x7E00, e5m2 0x7E, e4m3 0x7F (positive) */
        return f->has_inf ? (emax << mb) | (1u << (mb - 1)) : (1u << (eb + mb)) - 1;
    double a = fabs(r);
    if (isinf(a))
        return sign | (emax << mb);
    if (a == 0)
        return sign;
    int e = dexp(a), emin = 1 - f->bias;
    if (e < emin)
        return sign | (uint32_t)ldexp(a, mb - emin);
    uint32_t m = (uint32_t)(dbits(a) >> (52 - mb)) & ((1u << mb) - 1);
    return sign | ((uint32_t)(e + f->bias) << mb) | m;
}

double ir_float_value(DType dt, uint32_t bits)
{
    const Fmt *f = fmt_of(dt);
    if (!f)
        return 0;
    int eb = f->ebits, mb = f->mbits;
    uint32_t s = (bits >> (eb + mb)) & 1, emax = (1u << eb) - 1, mmask = (1u << mb) - 1;
    uint32_t ef = (bits >> mb) & emax, m = bits & mmask;
    double v;
    if (f->has_inf && ef == emax)
        v = m ? NAN : INFINITY;
    else if (!f->has_inf && ef == emax && m == mmask)
        v = NAN;
    else if (ef == 0) /* subnormal: m quanta of 2^(1 - bias - mb) */
        v = (double)m * dvalue((uint64_t)(1023 + 1 - f->bias - mb) << 52);
    else
        v = dvalue((uint64_t)((int)ef - f->bias + 1023) << 52 | (uint64_t)m << (52 - mb));
    return s ? -v : v;
}
