/* test_fastmath.c — exp2.fma's reference (ir/fastmath.c), the f32 steps the
 * generated code runs: its error bound over the whole domain, the edges (0 below
 * -125, NaN stays NaN, -inf gives 0, +inf and large x give 2^127), and exactness
 * at integers up to the polynomial's value at 0. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>
#include "fastmath.h"

static void test_error_bound(void **state)
{
    (void)state;
    double worst = 0;
    for (int i = -125 * 4096; i <= 127 * 4096; i++) {
        float x = (float)i / 4096.0f;
        double rel = fabs(ir_exp2_fma(x) / exp2((double)x) - 1.0);
        if (rel > worst)
            worst = rel;
    }
    assert_true(worst <= 1.05e-4);
    assert_true(worst >= 5e-5);   /* a degree-3 polynomial: the bound is not loose */
}

static void test_edges(void **state)
{
    (void)state;
    assert_true(ir_exp2_fma(-125.5f) == 0.0f);
    assert_true(ir_exp2_fma(-INFINITY) == 0.0f);
    assert_true(isnan(ir_exp2_fma(NAN)));
    assert_true(fabs(ir_exp2_fma(INFINITY) / exp2(127.0) - 1.0) <= 1.05e-4);
    assert_true(fabs(ir_exp2_fma(1e30f) / exp2(127.0) - 1.0) <= 1.05e-4);
    assert_true(ir_exp2_fma(-125.0f) > 0.0f && isnormal(ir_exp2_fma(-125.0f)));
    for (int j = -120; j <= 120; j += 7)   /* f = 0 at integers: 2^j * p(0) */
        assert_true(ir_exp2_fma((float)j) == ldexpf(ir_exp2_fma_c[0], j));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_bound),
        cmocka_unit_test(test_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
