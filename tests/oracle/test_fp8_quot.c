/* test_fp8_quot.c — the fp8 row quantizers' division (examples/fp8_quant.tir,
 * library/kernels/fp8_quant_warp.tir): Markstein's q = RN(q0 + (x - q0 s) r) with
 * r = RN(1 / s), q0 = RN(x r), and a zero q taking the sign of x, gives the e4m3
 * code of the IEEE quotient x / s for every bf16 x and every bf16 amax >= |x|
 * (s = RN(max(amax, 1e-12) * RN(1 / 448)), as the kernels compute it; a row with an
 * infinity has s = inf, r = 0, and takes x * r). Every amax
 * with every seventh x of each sign by default; CAKE_FP8_QUOT_FULL=1 tries every
 * x (about 10 s). */
#include <stdlib.h>
#include "oracle_util.h"

static float bf16_value(uint32_t bits)
{
    uint32_t u = bits << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* the kernels' quotient, step for step (each operation rounded once) */
static float markstein(float x, float s, float r)
{
    volatile float q0 = x * r;
    float q = fmaf(fmaf(-q0, s, x), r, q0);
    if (r == 0.0f)
        return x * r;
    return q == 0.0f ? x * 0.0f : q;
}

/* the number of (amax, x) pairs whose e4m3 codes differ */
static long count_differences(uint32_t step)
{
    long bad = 0;
    const float inv448 = 1.0f / 448.0f;
    for (uint32_t a = 0; a <= 0x7F80; a++) {       /* every bf16 amax >= 0, inf too */
        float amax = bf16_value(a);
        volatile float s = (amax > 1e-12f ? amax : 1e-12f) * inv448;
        float r = 1.0f / s;
        for (uint32_t xb = a % step; xb <= a; xb += step) {
            for (uint32_t sign = 0; sign < 2; sign++) {
                float x = bf16_value(xb | sign << 15);
                float want = x / s, got = markstein(x, s, r);
                if (isnan(want) && isnan(got))
                    continue;
                if (f32_bits(want) != f32_bits(got) &&
                    ir_float_bits(DT_E4M3, want) != ir_float_bits(DT_E4M3, got))
                    bad++;
            }
        }
    }
    return bad;
}

static void test_markstein_is_ieee_in_e4m3(void **state)
{
    (void)state;
    const char *full = getenv("CAKE_FP8_QUOT_FULL");
    assert_int_equal(count_differences(full && *full == '1' ? 1 : 7), 0);
}

/* the cases the sign rule is for: a zero dividend of either sign */
static void test_zero_keeps_its_sign(void **state)
{
    (void)state;
    float s = 3.0f * (1.0f / 448.0f), r = 1.0f / s;
    assert_int_equal(f32_bits(markstein(-0.0f, s, r)), f32_bits(-0.0f / s));
    assert_int_equal(f32_bits(markstein(0.0f, s, r)), f32_bits(0.0f / s));
    assert_int_equal(ir_float_bits(DT_E4M3, markstein(-0.0f, s, r)), 0x80);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_markstein_is_ieee_in_e4m3),
        cmocka_unit_test(test_zero_keeps_its_sign),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
