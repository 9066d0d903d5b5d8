/* test_cost_levels.c — the cost model counts an instance at its bound level:
 * the prediction of a launch is the same before and after the instance was
 * lowered to TIR-L (cake_instance CAKE_INST_LOWERED, as `run` and the library
 * do before they cost), for every example kernel and a held-out one; and the
 * calibration is found without a calibration directory (compiled in). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "cake.h"

static void same_before_and_after_lowering(const char *path, const char *kernel)
{
    CakeCtx *ctx = ctx_new();
    Module *m = NULL;
    assert_int_equal(cake_verify_file(ctx, path, NULL, &m), 0);
    CostCalib cal;
    cost_calib_default(&cal);
    CakeCostOptions co = {.kernel = kernel, .device = "h200", .calib = &cal};
    CostResult a, b;
    assert_int_equal(cake_cost(ctx, m, &co, &a), 0);
    const CakeInstance *inst;
    int rc = cake_instance(ctx, m, kernel, TG_SM90A, NULL, CAKE_INST_LOWERED, &inst);
    if (rc == 0) {
        assert_non_null(inst->bound);
        assert_true(inst->bound != inst->k);
    }
    assert_int_equal(cake_cost(ctx, m, &co, &b), 0);
    if (a.time_ms != b.time_ms)
        fail_msg("%s: %.6f ms before lowering, %.6f after", path, a.time_ms, b.time_ms);
    assert_int_equal(a.measure, b.measure);
    ctx_free(ctx);
}

static void test_examples(void **state)
{
    (void)state;
    static const char *const files[][2] = {
        {"examples/gemm_sm90.tir", NULL}, {"examples/gemm_sm90_persistent.tir", NULL},
        {"examples/flash_attn_fwd_d64.tir", NULL}, {"examples/rmsnorm.tir", NULL},
        {"examples/softmax.tir", "softmax_warp"}, {"examples/copy.tir", NULL},
        {"tests/cost/heldout/gemm_pingpong.tir", NULL}, {"tests/cost/heldout/lse_warp.tir", NULL},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", CAKE_SOURCE_DIR, files[i][0]);
        same_before_and_after_lowering(path, files[i][1]);
    }
}

static void test_calibration_compiled_in(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    CostCalib c;
    unsetenv("CAKE_COST_DIR");
    assert_int_equal(cake_cost_calib(ctx, NULL, tg_device_find("h200"), &c), 1);
    assert_non_null(strstr(c.source, "compiled in"));
    assert_int_equal(cake_cost_calib(ctx, "none", tg_device_find("h200"), &c), 0);
    ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_calibration_compiled_in),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
