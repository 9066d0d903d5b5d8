/* test_cost.c — properties of the cost model (analysis/cost.h) on synthetic
 * profiles and on the examples: more bytes, more FLOPs or more blocks never
 * predict a faster launch; more stages never keep less data in flight; the
 * interval holds the prediction; a profile nothing models is marked `measure`. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "cake.h"

static uint64_t rng = 88172645463325252ull;
static double urand(void)   /* xorshift64: a fixed sequence, so failures reproduce */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static void random_profile(CostProfile *p)
{
    memset(p, 0, sizeof *p);
    p->tg = TG_SM90A;
    p->threads = 128 << (int)(urand() * 3);
    p->grid[0] = 1 + (int64_t)(urand() * 20000);
    p->grid[1] = p->grid[2] = 1;
    p->nblocks = p->grid[0];
    p->smem_bytes = (int64_t)(urand() * 200000);
    p->regs_est = 32 + 8 * (int)(urand() * 20);
    p->w.tc_flops[COST_TC_WGMMA] = p->w.tc_work[COST_TC_WGMMA] = urand() < 0.5 ? urand() * 1e9 : 0;
    p->w.alu = urand() * 1e6;
    p->w.sfu = urand() * 1e5;
    p->w.gld = urand() * 1e6;
    p->w.gst = urand() * 1e6;
    p->w.srd = urand() * 1e6;
    p->w.barriers = urand() * 100;
    p->inflight_block = urand() * 1e5;
    p->unique_read = (double)p->nblocks * p->w.gld * urand();
    p->unique_write = (double)p->nblocks * p->w.gst;
}

static double predict(const CostProfile *p)
{
    CostCalib c;
    cost_calib_default(&c);
    CostResult r;
    memset(&r, 0, sizeof r);
    cost_predict(p, tg_device_find("h200"), &c, &r);
    assert_true(r.lo_ms <= r.time_ms && r.time_ms <= r.hi_ms);
    return r.time_ms;
}

static void more_work_never_faster(void **state)
{
    (void)state;
    for (int i = 0; i < 2000; i++) {
        CostProfile p, q;
        random_profile(&p);
        double t = predict(&p);
        double f = 1 + urand() * 3;
        q = p; q.w.gld *= f; q.unique_read *= f;                   /* more bytes read */
        assert_true(predict(&q) >= t * (1 - 1e-12));
        q = p; q.w.gst *= f; q.unique_write *= f;                  /* more bytes written */
        assert_true(predict(&q) >= t * (1 - 1e-12));
        q = p; q.w.tc_flops[0] *= f; q.w.tc_work[0] *= f;          /* more tensor FLOPs */
        assert_true(predict(&q) >= t * (1 - 1e-12));
        q = p; q.w.alu *= f; q.w.sfu *= f; q.w.srd *= f;           /* more SIMT work */
        assert_true(predict(&q) >= t * (1 - 1e-12));
        q = p; q.grid[0] = q.nblocks = p.nblocks * 2;              /* more blocks of the same work */
        q.unique_read *= 2; q.unique_write *= 2;
        assert_true(predict(&q) >= t * (1 - 1e-12));
        q = p; q.inflight_block *= f;                              /* more bytes in flight: not slower */
        assert_true(predict(&q) <= t * (1 + 1e-12));
    }
}

static void stages_never_less_in_flight(void **state)
{
    (void)state;
    static const char *const ex[] = {"gemm_sm90", "gemm_sm80", "gemm_sm90_persistent", "flash_attn_fwd_d64"};
    for (size_t e = 0; e < sizeof ex / sizeof ex[0]; e++) {
        char path[512], set[32];
        snprintf(path, sizeof path, "%s/examples/%s.tir", CAKE_SOURCE_DIR, ex[e]);
        CakeCtx *ctx = ctx_new();
        Module *m;
        assert_int_equal(cake_verify_file(ctx, path, NULL, &m), 0);
        CostCalib c;
        cost_calib_default(&c);
        double prev = 0;
        for (int s = 2; s <= 4; s++) {
            snprintf(set, sizeof set, "STAGES=%d", s);
            CakeCostOptions o = {.set = set, .calib = &c, .device = "h200"};
            CostResult r;
            assert_int_equal(cake_cost(ctx, m, &o, &r), 0);
            assert_true(r.inflight_block >= prev);
            assert_true(r.inflight_block > 0);
            prev = r.inflight_block;
        }
        ctx_free(ctx);
    }
}

static void unknown_hardware_says_measure(void **state)
{
    (void)state;
    CostProfile p;
    random_profile(&p);
    p.regs_est = 300;   /* past 255: spills the model does not know */
    p.regs_from_roles = 0;
    CostCalib c;
    cost_calib_default(&c);
    CostResult r;
    memset(&r, 0, sizeof r);
    cost_predict(&p, tg_device_find("h200"), &c, &r);
    assert_int_equal(r.measure, 1);
    assert_true(r.hi_ms >= 2 * r.time_ms);
}

/* registers ptxas reported (run --bench) replace the estimate and set occupancy */
static void known_registers(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/examples/gemm_sm80.tir", CAKE_SOURCE_DIR);
    CakeCtx *ctx = ctx_new();
    Module *m;
    assert_int_equal(cake_verify_file(ctx, path, NULL, &m), 0);
    CostCalib c;
    cost_calib_default(&c);
    CakeCostOptions o = {.calib = &c, .device = "h200"};
    CostResult est, known;
    assert_int_equal(cake_cost(ctx, m, &o, &est), 0);
    assert_int_equal(est.regs_estimated, 1);
    o.regs = 255;
    assert_int_equal(cake_cost(ctx, m, &o, &known), 0);
    assert_int_equal(known.regs, 255);
    assert_int_equal(known.regs_estimated, 0);
    assert_int_equal(known.blocks_per_sm, 2);   /* 128 threads x 256 registers: 2 blocks of 64 KiB */
    for (uint32_t i = 0; i < known.nnotes; i++)
        assert_null(strstr(known.notes[i], "estimated at"));
    ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(more_work_never_faster),
        cmocka_unit_test(stages_never_less_in_flight),
        cmocka_unit_test(unknown_hardware_says_measure),
        cmocka_unit_test(known_registers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
