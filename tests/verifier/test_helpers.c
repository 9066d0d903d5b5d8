/* test_helpers.c — constant evaluation and divisibility facts on a verified
 * kernel, and the verifier's helpers for other stages (ver_tma_bytes,
 * ver_shared_bytes). The evaluator's own rules: tests/analysis/test_consteval.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "fe.h"
#include "verify.h"
#include "consteval.h"

static const char *SRC =
    "kernel k<BM = 128, BK = 64, STAGES = 3, SH = BM * 2>\n"
    "  target sm_90a\n"
    "  arg A: global bf16[M, K] align 16\n"
    "  grid [cdiv(M, BM)]\n"
    "  warpgroups 1\n"
    "  assume K % BK == 0 && M % 16 == 0\n"
    "{\n"
    "  shared As: bf16[STAGES, BM, BK] swizzle 128\n"
    "  let c = (BM + BK) / 3 - (1 << 2) % 3\n"
    "  let q = cdiv(SH, 100) + max(BM, BK) - min(BM, BK)\n"
    "  let r = select(BM > BK, 1, 2)\n"
    "  let kk = K * 2 + BK\n"
    "  let zz = BM / 0\n"
    "  mbarrier bar count 1\n"
    "  mbarrier.expect_tx bar, BM * BK * 2\n"
    "  tma As[0] <- A[0, 0] on bar\n"
    "  mbarrier.wait bar, 0\n"
    "}\n";

typedef struct { CakeCtx *ctx; Module *m; Kernel *k; } Fix;

static int setup(void **state)
{
    Fix *f = calloc(1, sizeof *f);
    f->ctx = ctx_new();
    uint32_t file = ctx_add_file(f->ctx, "t.tir", SRC, (uint32_t)strlen(SRC));
    f->m = fe_parse(f->ctx, file);
    fe_resolve(f->ctx, f->m);
    ver_verify(f->ctx, f->m);
    f->k = f->m->kernels[0];
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fix *f = *state;
    ctx_free(f->ctx);
    free(f);
    return 0;
}

/* the init of the let named `name` */
static NodeId let_init(const Kernel *k, CakeCtx *ctx, const char *name)
{
    Sym s = ir_intern_cstr(ctx, name);
    for (NodeId n = 1; n < k->nnodes; n++)
        if (k->nodes[n].op == OP_LET && k->nodes[n].name == s)
            return k->nodes[n].b;
    return 0;
}

static void no_errors(void **state)
{
    Fix *f = *state;
    assert_int_equal(f->ctx->nerrors, 0);
}

static void constants(void **state)
{
    Fix *f = *state;
    int64_t v;
    assert_true(ce_const_int(f->ctx, f->k, let_init(f->k, f->ctx, "c"), &v));
    assert_int_equal(v, (128 + 64) / 3 - (1 << 2) % 3);
    assert_true(ce_const_int(f->ctx, f->k, let_init(f->k, f->ctx, "q"), &v));
    assert_int_equal(v, 3 + 128 - 64);                     /* SH = 256 from a later param default */
    assert_true(ce_const_int(f->ctx, f->k, let_init(f->k, f->ctx, "r"), &v));
    assert_int_equal(v, 1);
    assert_false(ce_const_int(f->ctx, f->k, let_init(f->k, f->ctx, "kk"), &v));   /* K is a dim */
    assert_false(ce_const_int(f->ctx, f->k, let_init(f->k, f->ctx, "zz"), &v));   /* / 0 */
    assert_false(ce_const_int(f->ctx, f->k, 0, &v));
}

static void bindings(void **state)
{
    Fix *f = *state;
    int64_t v;
    CeBinding b[] = {{ir_intern_cstr(f->ctx, "K"), 4096}, {ir_intern_cstr(f->ctx, "BM"), 64}};
    CeEnv env = {.b = b, .n = 2};
    assert_true(ce_eval_int(f->ctx, f->k, let_init(f->k, f->ctx, "kk"), &env, &v));
    assert_int_equal(v, 4096 * 2 + 64);
    assert_true(ce_eval_int(f->ctx, f->k, let_init(f->k, f->ctx, "q"), &env, &v));
    assert_int_equal(v, 2 + 64 - 64);                      /* SH = BM * 2 = 128 follows the override */
}

static void divisibility(void **state)
{
    Fix *f = *state;
    NodeId kk = let_init(f->k, f->ctx, "kk");              /* K * 2 + BK, K % 64 == 0 */
    assert_true(ce_is_multiple(f->ctx, f->k, kk, 64));
    assert_true(ce_is_multiple(f->ctx, f->k, kk, 128) == 0);
    assert_int_equal(ce_known_divisor(f->ctx, f->k, kk) % 64, 0);
}

static void helpers(void **state)
{
    Fix *f = *state;
    NodeId tma = 0, sh = 0;
    for (NodeId n = 1; n < f->k->nnodes; n++) {
        if (f->k->nodes[n].op == OP_TMA_LOAD)
            tma = n;
        if (f->k->nodes[n].op == OP_SHARED)
            sh = n;
    }
    assert_int_equal(ver_tma_bytes(f->ctx, f->k, tma), 128 * 64 * 2);
    assert_int_equal(ver_tma_bytes(f->ctx, f->k, sh), -1);
    assert_int_equal(ver_shared_bytes(f->ctx, f->k, sh), 3 * 128 * 64 * 2);
    assert_int_equal(ce_block_threads(f->ctx, f->k, TG_SM90A), 128);
    const Type *t = ver_type(f->k, sh);
    assert_int_equal(t->kind, TK_TILE);
    assert_int_equal(t->rank, 3);
    assert_int_equal(t->shape[1], 128);
    assert_int_equal(t->swizzle, 128);
    assert_int_equal(ver_type(f->k, 0)->kind, TK_UNKNOWN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(no_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(constants, setup, teardown),
        cmocka_unit_test_setup_teardown(bindings, setup, teardown),
        cmocka_unit_test_setup_teardown(divisibility, setup, teardown),
        cmocka_unit_test_setup_teardown(helpers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
