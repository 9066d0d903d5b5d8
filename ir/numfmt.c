/* numfmt.c — the small float formats as numbers: rounding a double to bf16,
 * f16, tf32, e4m3 and e5m2 (to nearest even; the fp8 formats saturate to
 * their largest finite value, as PTX's cvt.rn.satfinite does), and the bit
 * patterns of f16, e4m3 and e5m2 values. One home for these facts: the
 * oracle rounds and encodes with them, code generation encodes literals. */
#include <math.h>
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

/* v rounded to nearest even with p significant bits and minimum exponent emin */
static double round_to(double v, int p, int emin, double maxf, int sat)
{
    if (isnan(v) || v == 0)
        return v;
    double a = fabs(v);
    if (isinf(a))
        return sat ? copysign(maxf, v) : v;
    int e;
    frexp(a, &e);
    e -= 1;
    if (e < emin)
        e = emin;
    double q = ldexp(1.0, e - (p - 1));
    double r = nearbyint(a / q) * q;
    if (r > maxf)
        r = sat ? maxf : INFINITY;
    return copysign(r, v);
}

double ir_float_round(DType dt, double v)
{
    switch (dt) {
    case DT_F32: return (double)(float)v;
    case DT_TF32: return round_to(v, 11, -126, ldexp(2.0 - ldexp(1, -10), 127), 0);
    case DT_BF16: return round_to(v, 8, -126, ldexp(2.0 - ldexp(1, -7), 127), 0);
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
    int e;
    frexp(a, &e);
    e -= 1;
    int emin = 1 - f->bias;
    if (e < emin)
        return sign | (uint32_t)ldexp(a, mb - emin);
    uint32_t m = (uint32_t)(ldexp(a, mb - e) - ldexp(1.0, mb));
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
    else if (ef == 0)
        v = ldexp((double)m, 1 - f->bias - mb);
    else
        v = ldexp((double)(mmask + 1 + m), (int)ef - f->bias - mb);
    return s ? -v : v;
}
