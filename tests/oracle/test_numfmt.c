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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
