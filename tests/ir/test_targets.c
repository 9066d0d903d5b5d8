/* test_targets.c — the one target table (ir/targets.h): limits, vendors and warp
 * widths, block sizes per target, the choice of a target for a device, LLVM
 * names, features and tensor-core shape lookup. */
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

static void vendors_and_warps(void **state)
{
    (void)state;
    for (int t = 0; t < TG__COUNT; t++) {
        const TargetInfo *ti = tg_info((Target)t);
        int amd = ti->vendor == VENDOR_AMD;
        assert_int_equal(tg_vendor((Target)t), ti->vendor);
        assert_int_equal(tg_warp((Target)t), amd ? 64 : 32);
        assert_string_equal(ti->warp_word, amd ? "wavefront" : "warp");
        assert_string_equal(ti->llvm_triple, amd ? "amdgcn-amd-amdhsa" : "nvptx64-nvidia-cuda");
        assert_int_equal(ti->sm == 0, amd);
        assert_int_equal(tg_unit_threads((Target)t, UNIT_THREADS), 1);
        assert_int_equal(tg_unit_threads((Target)t, UNIT_WARPS), ti->warp_size);
        assert_int_equal(tg_unit_threads((Target)t, UNIT_WARPGROUPS), 4 * ti->warp_size);
    }
    assert_int_equal(tg_vendor(TG_SM90A), VENDOR_NVIDIA);
    assert_int_equal(tg_vendor(TG_GFX942), VENDOR_AMD);
    assert_string_equal(tg_info(TG_SM90A)->llvm_cpu, "sm_90a");
    assert_string_equal(tg_info(TG_GFX90A)->llvm_cpu, "gfx90a");
    assert_null(tg_info(TG_SM100A)->llvm_cpu);   /* LLVM 19 cannot generate sm_100a code */
}

static void block_threads(void **state)
{
    (void)state;
    assert_int_equal(tg_block_threads(TG_SM90A, UNIT_WARPS, 4), 128);
    assert_int_equal(tg_block_threads(TG_GFX942, UNIT_WARPS, 4), 256);
    assert_int_equal(tg_block_threads(TG_SM90A, UNIT_WARPGROUPS, 3), 384);
    assert_int_equal(tg_block_threads(TG_GFX942, UNIT_THREADS, 96), 96);
    assert_int_equal(tg_block_threads(TG_SM80, UNIT_WARPS, 0), 0);
    assert_int_equal(tg_block_threads(TG_SM80, UNIT_WARPS, -2), 0);
    assert_int_equal(tg_block_threads(TG_SM80, UNIT_THREADS, INT64_MAX), INT64_MAX);
    assert_int_equal(tg_block_threads(TG_GFX942, UNIT_WARPS, INT64_MAX / 8), INT64_MAX / 2);
}

static void device_fit(void **state)
{
    (void)state;
    assert_int_equal(tg_device_fit(TG_SM90A, "sm_90"), 2);
    assert_int_equal(tg_device_fit(TG_SM80, "sm_90"), 1);     /* sm_80 code runs on newer GPUs */
    assert_int_equal(tg_device_fit(TG_SM80, "sm_86"), 2);
    assert_int_equal(tg_device_fit(TG_SM80, "sm_75"), 0);
    assert_int_equal(tg_device_fit(TG_SM90A, "sm_100"), 0);   /* `a` targets: their family only */
    assert_int_equal(tg_device_fit(TG_SM100A, "sm_100"), 2);
    assert_int_equal(tg_device_fit(TG_SM90A, "gfx942"), 0);
    assert_int_equal(tg_device_fit(TG_GFX942, "gfx942"), 2);
    assert_int_equal(tg_device_fit(TG_GFX90A, "gfx942"), 0);
    assert_int_equal(tg_device_fit(TG_GFX942, "sm_90"), 0);
}

static void first_target(void **state)
{
    (void)state;
    Kernel k;
    memset(&k, 0, sizeof k);
    assert_int_equal(tg_first(&k), TG_SM90A);   /* no target clause */
    k.targets[TG_GFX942] = 1;
    assert_int_equal(tg_first(&k), TG_GFX942);
    k.targets[TG_SM80] = 1;
    assert_int_equal(tg_first(&k), TG_SM80);
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
    /* gfx942's fp8 MFMA reads FNUZ encodings, not OCP e4m3: no row (ir/targets.c) */
    assert_null(tg_tc_find(TG_GFX942, OP_MFMA, 16, 16, 32, DT_E4M3, DT_F32));
    assert_non_null(tg_tc_find(TG_GFX942, OP_MFMA, 16, 16, 16, DT_BF16, DT_F32));
    assert_null(tg_tc_find(TG_GFX90A, OP_MFMA, 16, 16, 32, DT_E4M3, DT_F32));
    assert_non_null(tg_tc_find(TG_GFX90A, OP_MFMA, 32, 32, 8, DT_I8, DT_I32));
    assert_null(tg_tc_find(TG_GFX942, OP_MFMA, 32, 32, 8, DT_I8, DT_I32));   /* k = 16 on gfx942 */
    assert_null(tg_tc_find(TG_SM90A, OP_MFMA, 32, 32, 8, DT_BF16, DT_F32));
}

/* the tensor-core family rows (ir/tcfamily.h): every row's ops map back to it,
 * its layouts belong to it, and its scope width comes from the target table */
static void families(void **state)
{
    (void)state;
    for (int f = TCF_MMA_SYNC; f < TCF__COUNT; f++) {
        const TcFamilyInfo *r = tc_family((TcFamily)f);
        assert_int_equal(r->id, f);
        if (r->op != OP_NONE) {
            assert_int_equal(tc_family_of((Op)r->op), f);
            assert_int_equal(tc_family_of((Op)r->lowered), f);
            assert_int_equal(tc_family_of_layout((Layout)r->c), f);
            assert_int_equal(tg_op_feature((Op)r->op), r->feature);
        }
        if (r->async == TCA_FENCE_COMMIT_WAIT)
            assert_true(r->l_fence && r->l_commit && r->l_wait && r->wait);
    }
    assert_int_equal(tg_tc_scope_threads(TG_SM90A, TCF_WGMMA), 128);
    assert_int_equal(tg_tc_scope_threads(TG_SM80, TCF_MMA_SYNC), 32);
    assert_int_equal(tg_tc_scope_threads(TG_GFX942, TCF_MFMA), 64);
    assert_int_equal(tg_unit_threads(TG_SM90A, UNIT_WARPGROUPS), 128);
    assert_int_equal(tc_family_of(OP_ADD), TCF_NONE);
    assert_int_equal(tc_family_of_layout(LY_ROWS), TCF_NONE);
    assert_int_equal(tc_family_of_layout(LY_MFMA_B), TCF_MFMA);
    assert_int_equal(tg_info(TG_GFX942)->tc[TCF_WGMMA].n, 0);
    assert_true(tg_info(TG_SM90A)->tc[TCF_WGMMA].n > 0);
}

/* the instruction fragments an executor reads (tc_fragment + ly_coord): MFMA
 * 32x32x8 bf16 (CDNA3 ISA matrix layouts), mma.sync m16n8k16 (PTX Figure 83),
 * wgmma's shared operands have none */
static void fragments(void **state)
{
    (void)state;
    IrTc t = {32, 32, 8, DT_BF16, DT_F32, 0, 0, 0, DT_NONE, 0};
    LyTile c, a, b;
    assert_true(tc_fragment(TG_GFX942, TCF_MFMA, TC_C, t, &c));
    assert_true(tc_fragment(TG_GFX942, TCF_MFMA, TC_A, t, &a));
    assert_true(tc_fragment(TG_GFX942, TCF_MFMA, TC_B, t, &b));
    assert_int_equal(ly_elems(&c), 16);
    assert_int_equal(ly_elems(&a), 4);
    for (int l = 0; l < 64; l++)
        for (int q = 0; q < 16; q++) {
            int r, col;
            ly_coord(&c, l, q, &r, &col);
            assert_int_equal(r, 8 * (q / 4) + 4 * (l / 32) + q % 4);
            assert_int_equal(col, l % 32);
            if (q < 4) {
                ly_coord(&a, l, q, &r, &col);
                assert_int_equal(r, l % 32);
                assert_int_equal(col, 4 * (l / 32) + q);
                ly_coord(&b, l, q, &r, &col);
                assert_int_equal(r, 4 * (l / 32) + q);
                assert_int_equal(col, l % 32);
            }
        }
    IrTc m = {16, 8, 16, DT_BF16, DT_F32, 0, 0, 0, DT_NONE, 0};
    assert_true(tc_fragment(TG_SM80, TCF_MMA_SYNC, TC_C, m, &c));
    assert_int_equal(ly_threads(&c), 32);
    int r, col;
    ly_coord(&c, 5, 3, &r, &col);               /* lane 5: g = 1, t = 1; d3 = (g + 8, 2t + 1) */
    assert_int_equal(r, 9);
    assert_int_equal(col, 3);
    IrTc w = {64, 128, 16, DT_BF16, DT_F32, 0, 0, 0, DT_NONE, 0};
    assert_true(tc_fragment(TG_SM90A, TCF_WGMMA, TC_C, w, &c));
    assert_int_equal(ly_threads(&c), 128);
    assert_false(tc_fragment(TG_SM90A, TCF_WGMMA, TC_A, w, &a));   /* a descriptor */
    assert_false(tc_fragment(TG_SM90A, TCF_WGMMA, TC_B, w, &b));
    w.a_regs = 1;
    assert_true(tc_fragment(TG_SM90A, TCF_WGMMA, TC_A, w, &a));
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
        cmocka_unit_test(limits), cmocka_unit_test(vendors_and_warps), cmocka_unit_test(block_threads),
        cmocka_unit_test(device_fit), cmocka_unit_test(first_target), cmocka_unit_test(features), cmocka_unit_test(mma_shapes),
        cmocka_unit_test(wgmma_shapes), cmocka_unit_test(mfma_shapes), cmocka_unit_test(families), cmocka_unit_test(fragments), cmocka_unit_test(describe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
