/* test_numfmt.c — rounding to bf16/f16/tf32/fp8 and the device encodings. */
#include "oracle_util.h"

static void test_bf16_rounding(void **state)
{
    (void)state;
    assert_true(interp_round(DT_BF16, 1.0) == 1.0);
    /* 1 + 2^-8 is the midpoint between 1 and 1 + 2^-7: ties to even -> 1 */
    assert_true(interp_round(DT_BF16, 1.0 + 0x1p-8) == 1.0);
    /* 1 + 3*2^-8 is the midpoint between 1+2^-7 and 1+2^-6: even is 1+2^-6 */
    assert_true(interp_round(DT_BF16, 1.0 + 3 * 0x1p-8) == 1.0 + 0x1p-6);
    assert_true(interp_round(DT_BF16, 1.0 + 0x1p-8 + 0x1p-20) == 1.0 + 0x1p-7);
    assert_true(interp_round(DT_BF16, -3.14159265) == -3.140625);
    assert_true(isinf(interp_round(DT_BF16, 1e39)));
    assert_true(interp_round(DT_BF16, 0x1p-133) == 0x1p-133); /* smallest subnormal */
    assert_true(isnan(interp_round(DT_BF16, NAN)));
    uint16_t h;
    interp_encode(DT_BF16, 1.0, &h);
    assert_int_equal(h, 0x3F80);
    interp_encode(DT_BF16, -2.0, &h);
    assert_int_equal(h, 0xC000);
    h = 0x4049;
    assert_true(interp_decode(DT_BF16, &h) == 3.140625);
}

static void test_f16_rounding(void **state)
{
    (void)state;
    assert_true(interp_round(DT_F16, 1.0 + 0x1p-11) == 1.0);                 /* tie to even */
    assert_true(interp_round(DT_F16, 1.0 + 3 * 0x1p-11) == 1.0 + 0x1p-9);    /* tie to even */
    assert_true(interp_round(DT_F16, 65504.0) == 65504.0);
    assert_true(interp_round(DT_F16, 65519.0) == 65504.0);
    assert_true(isinf(interp_round(DT_F16, 65520.0)));                        /* rounds up to 2^16 */
    assert_true(interp_round(DT_F16, 0x1p-24) == 0x1p-24);                    /* smallest subnormal */
    assert_true(interp_round(DT_F16, 0x1p-26) == 0.0);
    uint16_t h;
    interp_encode(DT_F16, 1.0, &h);
    assert_int_equal(h, 0x3C00);
    interp_encode(DT_F16, -0.5, &h);
    assert_int_equal(h, 0xB800);
    interp_encode(DT_F16, 0x1p-24, &h);
    assert_int_equal(h, 0x0001);
    interp_encode(DT_F16, INFINITY, &h);
    assert_int_equal(h, 0x7C00);
    h = 0x7BFF;
    assert_true(interp_decode(DT_F16, &h) == 65504.0);
    h = 0x0200;
    assert_true(interp_decode(DT_F16, &h) == 0x1p-15);
    /* every f16 bit pattern round-trips */
    for (uint32_t b = 0; b < 0x10000; b++) {
        uint16_t x = (uint16_t)b, y;
        double v = interp_decode(DT_F16, &x);
        if (isnan(v))
            continue;
        assert_true(interp_round(DT_F16, v) == v);
        interp_encode(DT_F16, v, &y);
        assert_int_equal(x, y);
    }
}

static void test_fp8_and_tf32(void **state)
{
    (void)state;
    assert_true(interp_round(DT_E4M3, 448.0) == 448.0);
    assert_true(interp_round(DT_E4M3, 1000.0) == 448.0);   /* satfinite */
    assert_true(interp_round(DT_E4M3, -1e9) == -448.0);
    assert_true(interp_round(DT_E4M3, 1.0625) == 1.0);     /* tie to even (ulp 1/8) */
    assert_true(interp_round(DT_E4M3, 0x1p-9) == 0x1p-9);  /* smallest subnormal */
    assert_true(interp_round(DT_E5M2, 1e6) == 57344.0);
    assert_true(interp_round(DT_E5M2, 1.125) == 1.0);      /* tie to even (ulp 1/4) */
    for (uint32_t b = 0; b < 256; b++) {
        uint8_t x = (uint8_t)b, y;
        for (int f = 0; f < 2; f++) {
            DType dt = f ? DT_E5M2 : DT_E4M3;
            double v = interp_decode(dt, &x);
            if (isnan(v) || isinf(v))
                continue;
            interp_encode(dt, v, &y);
            assert_int_equal(x, y);
        }
    }
    uint8_t n = 0xFF;
    assert_true(isnan(interp_decode(DT_E4M3, &n)));
    n = 0x7E;
    assert_true(interp_decode(DT_E4M3, &n) == 448.0);
    /* the encodings cvt.rn.satfinite gives (tests/gpu/test_fp8_bitexact.sh compares them all) */
    assert_int_equal(ir_float_bits(DT_E4M3, 1.5), 0x3C);
    assert_int_equal(ir_float_bits(DT_E4M3, 464.0), 0x7E);        /* the tie above 448 saturates */
    assert_int_equal(ir_float_bits(DT_E4M3, INFINITY), 0x7E);     /* satfinite: inf -> 448 */
    assert_int_equal(ir_float_bits(DT_E4M3, -INFINITY), 0xFE);
    assert_int_equal(ir_float_bits(DT_E4M3, NAN), 0x7F);
    assert_int_equal(ir_float_bits(DT_E4M3, -0.0), 0x80);
    assert_int_equal(ir_float_bits(DT_E4M3, 0x1p-10), 0x00);      /* half the smallest subnormal: to even */
    assert_int_equal(ir_float_bits(DT_E4M3, 0x1.8p-10), 0x01);
    assert_int_equal(ir_float_bits(DT_E5M2, INFINITY), 0x7B);     /* satfinite: inf -> 57344 */
    assert_int_equal(ir_float_bits(DT_E5M2, 61440.0), 0x7B);
    assert_int_equal(ir_float_bits(DT_E5M2, NAN), 0x7E);
    assert_int_equal(ir_float_bits(DT_E5M2, -2.0), 0xC0);
    assert_int_equal(ir_float_bits(DT_E5M2, 0x1p-17), 0x00);
    assert_int_equal(ir_float_bits(DT_F16, 65520.0), 0x7C00);     /* f16 overflows to inf */
    assert_true(ir_float_value(DT_E5M2, 0x01) == 0x1p-16);
    assert_true(interp_round(DT_TF32, 1.0 + 0x1p-11) == 1.0);
    assert_true(interp_round(DT_TF32, 1.0 + 0x1p-10) == 1.0 + 0x1p-10);
}

/* the rounding by frexp/ldexp/nearbyint (the definition ir/numfmt.c's bit
 * arithmetic must agree with) */
static double slow_round(double v, int p, int emin, double maxf, int sat)
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

static uint64_t mix(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* the fast rounding, bits and values equal the slow definition: random
 * doubles over every binade the formats meet, ties and their neighbours */
static void test_fast_paths_agree(void **state)
{
    (void)state;
    static const struct { DType dt; int p, emin; double maxf; int sat; } F[] = {
        {DT_BF16, 8, -126, 0x1.FEp127, 0}, {DT_TF32, 11, -126, 0x1.FFCp127, 0},
        {DT_F16, 11, -14, 65504.0, 0},      {DT_E4M3, 4, -6, 448.0, 1},
        {DT_E5M2, 3, -14, 57344.0, 1},
    };
    uint64_t st = 7;
    for (int i = 0; i < 400000; i++) {
        uint64_t r = mix(&st);
        int e = (int)(r % 300) - 150;
        double v = ldexp(1.0 + (double)(mix(&st) >> 11) * 0x1p-53, e);
        if (r & (1u << 20)) /* a tie or a neighbour of one at some precision */
            v = ldexp(1.0 + (double)(mix(&st) % 1024) * 0x1p-11, e) + (double)((int)(r >> 24 & 3) - 1) * ldexp(1.0, e - 52);
        if (r & (1u << 21))
            v = -v;
        for (unsigned f = 0; f < sizeof F / sizeof F[0]; f++) {
            double want = slow_round(v, F[f].p, F[f].emin, F[f].maxf, F[f].sat);
            double got = interp_round(F[f].dt, v);
            if (!(got == want) || signbit(got) != signbit(want))
                fail_msg("%s of %a: %a, want %a", ir_dtypes[F[f].dt].spelling, v, got, want);
            if (F[f].dt == DT_BF16 || F[f].dt == DT_TF32 || isinf(want))
                continue;
            assert_true(ir_float_value(F[f].dt, ir_float_bits(F[f].dt, v)) == want);
        }
    }
}

static void test_ints(void **state)
{
    (void)state;
    assert_true(interp_round(DT_I8, 130.0) == -126.0);   /* int -> int wraps */
    assert_true(interp_round(DT_U8, 257.0) == 1.0);
    assert_true(interp_round(DT_I32, -7.9) == -7.0);     /* truncates */
    int8_t c;
    interp_encode(DT_I8, -85.0, &c);
    assert_int_equal((uint8_t)c, 0xAB);
    uint16_t u = 0xFFFF;
    assert_true(interp_decode(DT_U16, &u) == 65535.0);
    assert_true(interp_decode(DT_I16, &u) == -1.0);
    uint8_t b = 1;
    assert_true(interp_decode(DT_BOOL, &b) == 1.0);
    assert_int_equal(interp_elem_bytes(DT_BOOL), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bf16_rounding),
        cmocka_unit_test(test_f16_rounding),
        cmocka_unit_test(test_fp8_and_tf32),
        cmocka_unit_test(test_ints),
        cmocka_unit_test(test_fast_paths_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
