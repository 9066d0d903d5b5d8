/* interp_fmt.c — the fp64 reference interpreter (see interp.h): numeric
 * formats on the host. Rounding to each dtype (floats to nearest even, fp8
 * saturating; ints wrapping or saturating from floats), the conversions
 * expressions and stores apply, and the encoding and decoding of elements in
 * each dtype's bytes. */
#include <math.h>
#include <string.h>
#include "interp_priv.h"

/* ---- dtype conversions ------------------------------------------------- */

static double wrap_int(DType dt, double v)
{
    int bits = ir_dtypes[dt].bits;
    if (bits >= 64)
        return v;
    int64_t x = (int64_t)v;
    uint64_t mask = (UINT64_C(1) << bits) - 1, u = (uint64_t)x & mask;
    if (ir_dtypes[dt].kind == 'u')
        return (double)u;
    if (u >> (bits - 1))
        return (double)(int64_t)(u | ~mask);
    return (double)u;
}

/* float -> int: truncate toward zero, saturate, NaN -> 0 (PTX cvt.rzi.sat) */
static double sat_int(DType dt, double v)
{
    if (isnan(v))
        return 0;
    int bits = ir_dtypes[dt].bits;
    double lo, hi;
    if (ir_dtypes[dt].kind == 'u') {
        lo = 0;
        hi = ldexp(1.0, bits) - 1;
    } else {
        lo = -ldexp(1.0, bits - 1);
        hi = ldexp(1.0, bits - 1) - 1;
    }
    v = trunc(v);
    return v < lo ? lo : v > hi ? hi : v;
}

double interp_round(DType dt, double v)
{
    switch (dt) {
    case DT_F64: return v;
    case DT_F32: case DT_TF32: case DT_BF16: case DT_F16: case DT_E4M3: case DT_E5M2:
        return ir_float_round(dt, v);      /* ir/numfmt.c */
    case DT_BOOL: return v != 0;
    case DT_NONE: case DT__COUNT: return v;
    default: return wrap_int(dt, isnan(v) ? 0 : trunc(v));
    }
}

/* a conversion inside an expression: f32/f64 are exact (fp64 reference) */
double ip_conv(DType dt, int from, double v)
{
    switch (dt) {
    case DT_F64: case DT_F32: case DT_NONE: return v;
    case DT_BOOL: return v != 0;
    default:
        if (ir_dtypes[dt].kind == 'f')
            return interp_round(dt, v);
        return from == K_FLT ? sat_int(dt, v) : wrap_int(dt, v);
    }
}

/* into a tensor element: everything rounds, f32 included */
double ip_conv_store(DType dt, int from, double v)
{
    if (dt == DT_F32)
        return (double)(float)v;
    return ip_conv(dt, from, v);
}

int interp_elem_bytes(DType dt)
{
    return dt == DT_BOOL ? 1 : ir_dtype_bytes(dt);
}

void interp_encode(DType dt, double v, void *dst)
{
    v = interp_round(dt, v);
    switch (dt) {
    case DT_F64: memcpy(dst, &v, 8); return;
    case DT_F32: case DT_TF32: { float f = (float)v; memcpy(dst, &f, 4); return; }
    case DT_BF16: {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        uint16_t h = (uint16_t)(isnan(v) ? 0x7FC0 : u >> 16);
        memcpy(dst, &h, 2);
        return;
    }
    case DT_F16: { uint16_t h = (uint16_t)ir_float_bits(dt, v); memcpy(dst, &h, 2); return; }
    case DT_E4M3: case DT_E5M2: *(uint8_t *)dst = (uint8_t)ir_float_bits(dt, v); return;
    case DT_BOOL: *(uint8_t *)dst = v != 0; return;
    default: {
        int n = ir_dtype_bytes(dt);
        uint64_t u = v >= 9223372036854775808.0 ? (uint64_t)v : (uint64_t)(int64_t)v;
        memcpy(dst, &u, (size_t)n); /* little-endian host */
        return;
    }
    }
}

double interp_decode(DType dt, const void *src)
{
    switch (dt) {
    case DT_F64: { double d; memcpy(&d, src, 8); return d; }
    case DT_F32: case DT_TF32: { float f; memcpy(&f, src, 4); return f; }
    case DT_BF16: {
        uint16_t h;
        memcpy(&h, src, 2);
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    case DT_F16: { uint16_t h; memcpy(&h, src, 2); return ir_float_value(dt, h); }
    case DT_E4M3: case DT_E5M2: return ir_float_value(dt, *(const uint8_t *)src);
    case DT_BOOL: return *(const uint8_t *)src;
    default: {
        int n = ir_dtype_bytes(dt);
        uint64_t u = 0;
        memcpy(&u, src, (size_t)n);
        if (ir_dtypes[dt].kind == 'u')
            return (double)u;
        if (n < 8 && (u >> (n * 8 - 1)) & 1)
            u |= ~((UINT64_C(1) << (n * 8)) - 1);
        return (double)(int64_t)u;
    }
    }
}
