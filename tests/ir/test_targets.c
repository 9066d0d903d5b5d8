/* test_targets.c — the target capability table and tensor-core shape lookup. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "targets.h"

static void limits(void **state)
{
    (void)state;
    assert_int_equal(tg_info(TG_SM80)->max_smem_per_block, 166912);
    assert_int_equal(tg_info(TG_SM90A)->max_smem_per_block, 232448);
    assert_int_equal(tg_info(TG_SM100A)->max_smem_per_block, 232448);
    assert_int_equal(tg_info(TG_GFX90A)->max_smem_per_block, 65536);
    assert_int_equal(tg_info(TG_GFX942)->max_smem_per_block, 65536);
    for (int t = 0; t < TG__COUNT; t++) {
        const TargetInfo *ti = tg_info((Target)t);
        assert_int_equal(ti->id, t);
        assert_string_equal(ti->name, ir_target_names[t]);
        assert_int_equal(ti->max_threads_per_block, 1024);
        assert_int_equal(ti->warp_size, ti->vendor == VENDOR_AMD ? 64 : 32);
        assert_int_equal(ti->max_regs_per_thread, ti->vendor == VENDOR_AMD ? 512 : 255);
    }
    assert_int_equal(tg_info(TG_SM90A)->setmaxnreg_min, 24);
    assert_int_equal(tg_info(TG_SM90A)->setmaxnreg_max, 256);
}

static void features(void **state)
{
    (void)state;
    assert_true(tg_has(TG_SM90A, TF_WGMMA | TF_TMA | TF_MBARRIER_TX | TF_SETMAXNREG));
    assert_false(tg_has(TG_SM80, TF_WGMMA));
    assert_false(tg_has(TG_SM80, TF_TMA));
    assert_false(tg_has(TG_SM80, TF_STMATRIX));
    assert_true(tg_has(TG_SM80, TF_CP_ASYNC | TF_LDMATRIX | TF_MMA_SYNC | TF_MBARRIER));
    assert_false(tg_has(TG_SM100A, TF_WGMMA));          /* wgmma is sm_90a only */
    assert_true(tg_has(TG_SM100A, TF_TMA | TF_SETMAXNREG | TF_STMATRIX));
    assert_true(tg_has(TG_GFX942, TF_MFMA | TF_FP8));
    assert_false(tg_has(TG_GFX90A, TF_FP8));
    assert_false(tg_has(TG_GFX942, TF_MMA_SYNC));
    assert_false(tg_has(TG_GFX942, TF_ROLES));
    assert_int_equal(tg_op_feature(OP_WGMMA), TF_WGMMA);
    assert_int_equal(tg_op_feature(OP_TMA_LOAD), TF_TMA);
    assert_int_equal(tg_op_feature(OP_ADD), 0);
}

static void mma_shapes(void **state)
{
    (void)state;
    assert_non_null(tg_tc_find(TG_SM80, OP_MMA, 16, 8, 16, DT_BF16, DT_F32));
    assert_null(tg_tc_find(TG_SM80, OP_MMA, 16, 8, 16, DT_BF16, DT_F16));   /* bf16 -> f32 only */
    assert_non_null(tg_tc_find(TG_SM80, OP_MMA, 16, 8, 8, DT_TF32, DT_F32));
    assert_null(tg_tc_find(TG_SM80, OP_MMA, 16, 8, 32, DT_E4M3, DT_F32));   /* fp8 needs sm_89+ */
    assert_non_null(tg_tc_find(TG_SM90A, OP_MMA, 16, 8, 32, DT_E4M3, DT_F32));
    /* tiles made of instruction shapes */
    assert_non_null(tg_tc_tile(TG_SM80, OP_MMA, 64, 64, 16, DT_BF16, DT_F32));
    assert_null(tg_tc_tile(TG_SM80, OP_MMA, 64, 60, 16, DT_BF16, DT_F32));
}

static void wgmma_shapes(void **state)
{
    (void)state;
    assert_non_null(tg_tc_find(TG_SM90A, OP_WGMMA, 64, 256, 16, DT_BF16, DT_F32));
    assert_non_null(tg_tc_find(TG_SM90A, OP_WGMMA, 64, 8, 16, DT_F16, DT_F16));
    assert_null(tg_tc_find(TG_SM90A, OP_WGMMA, 64, 264, 16, DT_BF16, DT_F32));
    assert_null(tg_tc_find(TG_SM90A, OP_WGMMA, 64, 12, 16, DT_BF16, DT_F32));
    assert_null(tg_tc_find(TG_SM90A, OP_WGMMA, 128, 64, 16, DT_BF16, DT_F32));
    assert_non_null(tg_tc_find(TG_SM90A, OP_WGMMA, 64, 128, 32, DT_E4M3, DT_F32));
    assert_non_null(tg_tc_find(TG_SM90A, OP_WGMMA, 64, 24, 32, DT_I8, DT_I32));
    assert_null(tg_tc_find(TG_SM90A, OP_WGMMA, 64, 40, 32, DT_I8, DT_I32));  /* 8,16,24 then step 16 */
    assert_non_null(tg_tc_find(TG_SM90A, OP_WGMMA, 64, 48, 32, DT_I8, DT_I32));
    assert_null(tg_tc_find(TG_SM80, OP_WGMMA, 64, 64, 16, DT_BF16, DT_F32));
    assert_non_null(tg_tc_tile(TG_SM90A, OP_WGMMA, 64, 256, 64, DT_BF16, DT_F32));
}

static void mfma_shapes(void **state)
{
    (void)state;
    assert_non_null(tg_tc_find(TG_GFX942, OP_MFMA, 32, 32, 8, DT_BF16, DT_F32));
    assert_non_null(tg_tc_find(TG_GFX90A, OP_MFMA, 16, 16, 16, DT_F16, DT_F32));
    assert_non_null(tg_tc_find(TG_GFX942, OP_MFMA, 16, 16, 32, DT_E4M3, DT_F32));
    assert_null(tg_tc_find(TG_GFX90A, OP_MFMA, 16, 16, 32, DT_E4M3, DT_F32));
    assert_non_null(tg_tc_find(TG_GFX90A, OP_MFMA, 32, 32, 8, DT_I8, DT_I32));
    assert_null(tg_tc_find(TG_GFX942, OP_MFMA, 32, 32, 8, DT_I8, DT_I32));   /* k = 16 on gfx942 */
    assert_null(tg_tc_find(TG_SM90A, OP_MFMA, 32, 32, 8, DT_BF16, DT_F32));
}

static void describe(void **state)
{
    (void)state;
    char buf[512];
    assert_int_equal(tg_tc_describe(TG_SM80, OP_MMA, DT_BF16, buf, sizeof buf), 2);
    assert_non_null(strstr(buf, "m16n8k16 bf16->f32"));
    assert_int_equal(tg_tc_describe(TG_SM80, OP_MMA, DT_E4M3, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    char tiny[8];
    tg_tc_describe(TG_GFX942, OP_MFMA, DT_NONE, tiny, sizeof tiny);  /* truncates safely */
    assert_true(strlen(tiny) < sizeof tiny);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(limits), cmocka_unit_test(features), cmocka_unit_test(mma_shapes),
        cmocka_unit_test(wgmma_shapes), cmocka_unit_test(mfma_shapes), cmocka_unit_test(describe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
