/* test_sync.c — the synchronization and bounds checks through their C API:
 * thread counting under guards, TMA byte counts, stage tokens, the grid size
 * in the simulations and the bounds, and a few kernels that must (or must not)
 * draw a given code. The golden files in
 * tests/diag/sync/ cover every code end to end. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "fe.h"
#include "verify.h"
#include "sync.h"

typedef struct { CakeCtx *ctx; Kernel *k; SyK s; } Fix;

/* parses and type-checks src, then builds the sync tables */
static Fix *load(const char *src)
{
    Fix *f = calloc(1, sizeof *f);
    f->ctx = ctx_new();
    uint32_t file = ctx_add_file(f->ctx, "t.tir", src, (uint32_t)strlen(src));
    Module *m = fe_parse(f->ctx, file);
    fe_resolve(f->ctx, m);
    ver_verify(f->ctx, m);
    assert_true(m->nkernels >= 1);
    f->k = m->kernels[0];
    sy_init(&f->s, f->ctx, f->k, tg_first(f->k));
    return f;
}

static void done(Fix *f)
{
    ctx_free(f->ctx);
    free(f);
}

static int has_code(const CakeCtx *ctx, DiagCode code)
{
    for (uint32_t i = 0; i < ctx->ndiags; i++)
        if (ctx->diags[i].code == code)
            return 1;
    return 0;
}

/* the first statement with op */
static NodeId find_op(const Kernel *k, Op op, uint32_t nth)
{
    for (NodeId n = 1; n < k->nnodes; n++)
        if (k->nodes[n].op == op && nth-- == 0)
            return n;
    return 0;
}

static const char *GUARDS =
    "kernel g\n"
    "  target sm_90a\n"
    "  arg X: global f32[N]\n"
    "  grid [1]\n"
    "  threads 128\n"
    "{\n"
    "  mbarrier a count 1\n"
    "  if thread.x == 0 { mbarrier.arrive a }\n"
    "  if lane == 0 { mbarrier.arrive a }\n"
    "  if warp < 2 { mbarrier.arrive a }\n"
    "  mbarrier.arrive a\n"
    "}\n";

static void test_threads_at(void **state)
{
    (void)state;
    Fix *f = load(GUARDS);
    int exact;
    assert_int_equal(sy_threads_at(&f->s, find_op(f->k, OP_MB_ARRIVE, 0), &exact), 1);
    assert_true(exact);
    assert_int_equal(sy_threads_at(&f->s, find_op(f->k, OP_MB_ARRIVE, 1), &exact), 4);
    assert_int_equal(sy_threads_at(&f->s, find_op(f->k, OP_MB_ARRIVE, 2), &exact), 64);
    assert_int_equal(sy_threads_at(&f->s, find_op(f->k, OP_MB_ARRIVE, 3), &exact), 128);
    done(f);
}

/* `warps 2` is 64 threads on sm_90a and 128 (two wavefronts) on gfx942 */
static const char *WARPS2 =
    "kernel w\n"
    "  target sm_90a, gfx942\n"
    "  arg X: global f32[N]\n"
    "  grid [1]\n"
    "  warps 2\n"
    "{\n"
    "  mbarrier a count 1\n"
    "  if lane == 0 { mbarrier.arrive a }\n"
    "  if warp < 1 { mbarrier.arrive a }\n"
    "  if lane >= 32 { mbarrier.arrive a }\n"
    "  mbarrier.arrive a\n"
    "}\n";

static void test_threads_per_warp_width(void **state)
{
    (void)state;
    Fix *f = load(WARPS2);
    int exact;
    static const struct { Target tg; int64_t block, lane0, warp0, upper; } want[] = {
        {TG_SM90A, 64, 2, 32, 0}, {TG_SM80, 64, 2, 32, 0}, {TG_GFX942, 128, 2, 64, 64},
        {TG_GFX90A, 128, 2, 64, 64}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        SyK s;
        sy_init(&s, f->ctx, f->k, want[i].tg);
        assert_int_equal(s.warp, tg_warp(want[i].tg));
        assert_int_equal(s.block_threads, want[i].block);
        assert_int_equal(sy_threads_at(&s, find_op(f->k, OP_MB_ARRIVE, 0), &exact), want[i].lane0);
        assert_true(exact);
        assert_int_equal(sy_threads_at(&s, find_op(f->k, OP_MB_ARRIVE, 1), &exact), want[i].warp0);
        assert_int_equal(sy_threads_at(&s, find_op(f->k, OP_MB_ARRIVE, 2), &exact), want[i].upper);
        assert_int_equal(sy_threads_at(&s, find_op(f->k, OP_MB_ARRIVE, 3), &exact), want[i].block);
    }
    done(f);
}

static const char *GEMM =
    "kernel p<BM = 64, BN = 128, BK = 64, STAGES = 4>\n"
    "  target sm_90a\n"
    "  arg A: global bf16[M, K] align 16\n"
    "  arg B: global bf16[N, K] align 16\n"
    "  grid [cdiv(M, BM), cdiv(N, BN)]\n"
    "  warpgroups 2\n"
    "  assume K % BK == 0\n"
    "{\n"
    "  shared As: bf16[STAGES, BM, BK] swizzle 128\n"
    "  shared Bs: bf16[STAGES, BN, BK] swizzle 128\n"
    "  pipeline ring: STAGES stages from role load to role mma\n"
    "  role load: warpgroup 0, regs 40 {\n"
    "    for k in 0 .. K / BK {\n"
    "      let s = ring.acquire()\n"
    "      tma As[s] <- A[block.x * BM, k * BK] on ring.full(s)\n"
    "      tma Bs[s] <- B[block.y * BN, k * BK] on ring.full(s)\n"
    "    }\n"
    "  }\n"
    "  role mma: warpgroup 1, regs 232 {\n"
    "    reg acc: f32[BM, BN] layout wgmma = 0\n"
    "    for k in 0 .. K / BK {\n"
    "      let s = ring.wait()\n"
    "      wgmma acc += As[s] * Bs[s]^T\n"
    "      wgmma.wait 0\n"
    "      RELEASE\n"
    "    }\n"
    "  }\n"
    "}\n";

static char *with_release(const char *rel)
{
    static char buf[4096];
    const char *at = strstr(GEMM, "RELEASE");
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - GEMM), GEMM, rel, at + strlen("RELEASE"));
    return buf;
}

static void test_tokens_and_bytes(void **state)
{
    (void)state;
    Fix *f = load(with_release("ring.release(s)"));
    NodeId tma = find_op(f->k, OP_TMA_LOAD, 0);
    assert_int_equal(sy_ref_bytes(&f->s, f->k->nodes[tma].a), 64 * 64 * 2);
    NodeId let = sy_token_let(&f->s, sy_ref_index0(&f->s, f->k->nodes[tma].a));
    assert_int_equal(sy_token_kind(&f->s, let), OP_P_ACQUIRE);
    assert_int_equal(sy_token_pipe(&f->s, let), find_op(f->k, OP_PIPELINE, 0));
    int exact;
    assert_int_equal(sy_threads_at(&f->s, tma, &exact), 1); /* single-issue: one warpgroup */
    assert_int_equal(sy_check_all(&f->s), 0);
    done(f);
}

static void test_pipeline_errors(void **state)
{
    (void)state;
    Fix *f = load(with_release(""));
    sy_check_all(&f->s);
    assert_true(has_code(f->ctx, E0704));
    done(f);
    f = load(with_release("ring.release(s); ring.release(s)"));
    sy_check_all(&f->s);
    assert_true(has_code(f->ctx, E0702));
    done(f);
}

static const char *VEC =
    "kernel v<VEC = 8>\n"
    "  target sm_80\n"
    "  arg x: global bf16[M, N] align 16\n"
    "  arg y: global bf16[M, N] align 16\n"
    "  grid [M]\n"
    "  threads 256\n"
    "  ASSUME\n"
    "{\n"
    "  for i in thread.x * VEC .. N step 256 * VEC {\n"
    "    store y[block.x, i : +VEC] <- load x[block.x, i : +VEC]\n"
    "  }\n"
    "}\n";

static void test_bounds(void **state)
{
    (void)state;
    char buf[2048];
    const char *at = strstr(VEC, "ASSUME");
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - VEC), VEC, "assume N % VEC == 0", at + 6);
    Fix *f = load(buf);
    assert_int_equal(sy_check_bounds(&f->s), 0);
    done(f);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - VEC), VEC, "assume N >= 1", at + 6);
    f = load(buf);
    assert_int_equal(sy_check_bounds(&f->s), 2);
    assert_true(has_code(f->ctx, E0801));
    int helped = 0;
    for (uint32_t i = 0; i < f->ctx->ndiags; i++)
        for (uint32_t j = 0; j < f->ctx->diags[i].nhelps; j++)
            helped |= strstr(f->ctx->diags[i].helps[j], "assume N % 8 == 0") != NULL;
    assert_true(helped);
    done(f);
}

/* a persistent grid: min(sm.count, T) blocks; IDX indexes a T-element tensor */
static const char *PERSIST =
    "kernel p\n"
    "  target sm_90a\n"
    "  arg f: global i32[T]\n"
    "  grid [min(sm.count, T)]\n"
    "  threads 32\n"
    "  shape T = SIZE\n"
    "{\n"
    "  store f[IDX] <- 1\n"
    "}\n";

static Fix *load_persist(const char *size, const char *idx)
{
    static char buf[1024];
    const char *s = strstr(PERSIST, "SIZE"), *i = strstr(PERSIST, "IDX");
    snprintf(buf, sizeof buf, "%.*s%s%.*s%s%s", (int)(s - PERSIST), PERSIST, size, (int)(i - s - 4), s + 4,
             idx, i + 3);
    return load(buf);
}

static NodeId find_special(const Kernel *k, SpecialReg sr)
{
    for (NodeId n = 1; n < k->nnodes; n++)
        if (k->nodes[n].op == OP_SPECIAL && k->nodes[n].sub == sr)
            return n;
    return 0;
}

/* the simulations run block 0 with grid.x = the grid clause at the sample's dims,
 * sm.count at TG_DEFAULT_SM_COUNT */
static void test_exec_grid(void **state)
{
    (void)state;
    const char *sizes[2] = {"1000", "100"};
    int64_t want[2] = {TG_DEFAULT_SM_COUNT, 100};
    for (int i = 0; i < 2; i++) {
        Fix *f = load_persist(sizes[i], "grid.x - 1");
        SyExec x;
        sy_exec_init(&x, &f->s, 0);
        assert_true(sy_sample_dims(&x, 0)); /* sample 0: the `shape` defaults */
        int64_t v = 0;
        assert_true(sy_eval(&x, find_special(f->k, SR_GRID_X), &v));
        assert_int_equal(v, want[i]);
        done(f);
    }
}

/* block.x < grid.x <= grid[0], grid.x >= 1, and the min's bounded side */
static void test_bounds_grid(void **state)
{
    (void)state;
    static const struct { const char *idx; uint32_t errors; } cases[] = {
        {"block.x", 0}, {"grid.x - 1", 0}, {"grid.x - block.x - 1", 0},
        {"grid.x", 1}, {"block.x + 1", 1}, {"block.x - 1", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        Fix *f = load_persist("1000", cases[i].idx); /* ver_verify runs the bounds check */
        if (f->ctx->nerrors != cases[i].errors || (cases[i].errors && !has_code(f->ctx, E0801)))
            fail_msg("f[%s]: %u errors, expected %u E0801", cases[i].idx, f->ctx->nerrors, cases[i].errors);
        done(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_at),
        cmocka_unit_test(test_threads_per_warp_width),
        cmocka_unit_test(test_tokens_and_bytes),
        cmocka_unit_test(test_pipeline_errors),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_exec_grid),
        cmocka_unit_test(test_bounds_grid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
