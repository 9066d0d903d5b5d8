/* oracle_bits.c — the oracle's side of the bit-exact fp8 test (bitexact.py):
 * writes the inputs the GPU converts and the bits the oracle's rounding
 * (ir/numfmt.c, which oracle/interp_fmt.c rounds and encodes with) gives for
 * each of them. Built from ir/numfmt.c alone, so it compiles anywhere:
 *     cc -O1 -Iir tests/gpu/fp8/oracle_bits.c ir/numfmt.c -lm -o oracle_bits
 *     oracle_bits DIR
 * DIR/<src>_in.bin (f32 only: the dense sample), DIR/<src>_<dst>.bin. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir.h"

static double from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float f32_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void put(const char *dir, const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

/* the 16-bit sources: every pattern */
static void sixteen(const char *dir, const char *src, int is_bf16)
{
    static uint8_t e4[65536], e5[65536];
    for (uint32_t i = 0; i < 65536; i++) {
        double v = is_bf16 ? from_bf16((uint16_t)i) : ir_float_value(DT_F16, i);
        e4[i] = (uint8_t)ir_float_bits(DT_E4M3, v);
        e5[i] = (uint8_t)ir_float_bits(DT_E5M2, v);
    }
    char n[64];
    snprintf(n, sizeof n, "%s_e4m3", src);
    put(dir, n, e4, sizeof e4);
    snprintf(n, sizeof n, "%s_e5m2", src);
    put(dir, n, e5, sizeof e5);
}

static uint32_t *add(uint32_t *v, size_t *n, float f)
{
    v[(*n)++] = f32_bits(f);
    v[(*n)++] = f32_bits(-f);
    return v;
}

/* f32: every fp8 value, every midpoint between neighbours (the ties) and the
 * f32 neighbours of both, the saturation edges, f32 subnormals, then random
 * patterns; a multiple of 4 elements */
static void f32_sample(const char *dir)
{
    size_t cap = 1u << 21, n = 0;
    uint32_t *v = malloc(cap * sizeof *v);
    DType fmts[2] = {DT_E4M3, DT_E5M2};
    for (int k = 0; k < 2; k++)
        for (uint32_t b = 0; b < 0x7F; b++) {
            double x = ir_float_value(fmts[k], b), y = ir_float_value(fmts[k], b + 1);
            if (isnan(x))
                continue;
            double mid = isnan(y) || isinf(y) ? x + (x - ir_float_value(fmts[k], b - 1)) / 2 : (x + y) / 2;
            float fx = (float)x, fm = (float)mid;
            add(v, &n, fx);
            add(v, &n, nextafterf(fx, INFINITY));
            add(v, &n, nextafterf(fx, 0));
            add(v, &n, fm);
            add(v, &n, nextafterf(fm, INFINITY));
            add(v, &n, nextafterf(fm, 0));
        }
    float edges[] = {448.0f, 464.0f, 480.0f, 57344.0f, 61440.0f, 65536.0f, 1e30f, 3.4028235e38f,
                     INFINITY, 0.0f, 1e-45f, 1e-40f, 1.17549435e-38f, 0x1p-10f, 0x1p-17f, 0x1p-16f};
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++)
        add(v, &n, edges[i]);
    uint64_t s = 0x9E3779B97F4A7C15ull;
    while (n < cap) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        uint32_t u = (uint32_t)(s >> 16);
        if (isnan(f32_of(u)))
            continue;
        v[n++] = u;
    }
    static uint8_t e4[1u << 21], e5[1u << 21];
    for (size_t i = 0; i < n; i++) {
        e4[i] = (uint8_t)ir_float_bits(DT_E4M3, f32_of(v[i]));
        e5[i] = (uint8_t)ir_float_bits(DT_E5M2, f32_of(v[i]));
    }
    put(dir, "f32_in", v, n * 4);
    put(dir, "f32_e4m3", e4, n);
    put(dir, "f32_e5m2", e5, n);
    free(v);
}

/* every e4m3 / e5m2 pattern to f32, f16, bf16 and the other fp8 format */
static void wide(const char *dir, DType from, const char *src, DType other, const char *oname)
{
    uint32_t f[256];
    uint16_t h[256], b[256];
    uint8_t o[256];
    for (uint32_t i = 0; i < 256; i++) {
        double x = ir_float_value(from, i);
        f[i] = f32_bits((float)x);
        h[i] = (uint16_t)ir_float_bits(DT_F16, x);
        b[i] = (uint16_t)(isnan(x) ? 0x7FC0 : f[i] >> 16);
        o[i] = (uint8_t)ir_float_bits(other, x);
    }
    char n[64];
    snprintf(n, sizeof n, "%s_f32", src);
    put(dir, n, f, sizeof f);
    snprintf(n, sizeof n, "%s_f16", src);
    put(dir, n, h, sizeof h);
    snprintf(n, sizeof n, "%s_bf16", src);
    put(dir, n, b, sizeof b);
    snprintf(n, sizeof n, "%s_%s", src, oname);
    put(dir, n, o, sizeof o);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: oracle_bits DIR\n");
        return 2;
    }
    sixteen(argv[1], "bf16", 1);
    sixteen(argv[1], "f16", 0);
    f32_sample(argv[1]);
    wide(argv[1], DT_E4M3, "e4m3", DT_E5M2, "e5m2");
    wide(argv[1], DT_E5M2, "e5m2", DT_E4M3, "e4m3");
    return 0;
}
