/* test_consteval.c — the one integer evaluator (analysis/consteval.h): 64-bit
 * arithmetic that fails instead of wrapping, C division, cdiv on its domain,
 * shifts, powers, casts, short-circuit logic, `--set`/`--shape` bindings, the
 * interpreter hooks, and block sizes per target. */
#include "analysis_util.h"
#include "consteval.h"

static const char *SRC =
    "kernel k<BM = 128, BK = 64, BIG = 4611686018427387904, NEG = 0 - 7>\n"
    "  target sm_90a, gfx942\n"
    "  arg A: global f32[M, K]\n"
    "  grid [cdiv(M, BM)]\n"
    "  warps 4\n"
    "{\n"
    "  let add_max = BIG - 1 + BIG\n"
    "  let add_ovf = BIG + BIG\n"
    "  let sub_ovf = 0 - BIG - BIG - 1\n"
    "  let mul_ovf = BIG * 2\n"
    "  let neg_ovf = -(0 - BIG - BIG)\n"
    "  let div_neg = NEG / 2\n"
    "  let mod_neg = NEG % 2\n"
    "  let div_negb = 7 / (0 - 2)\n"
    "  let mod_negb = 7 % (0 - 2)\n"
    "  let div_zero = BM / 0\n"
    "  let mod_zero = BM % (BK - 64)\n"
    "  let cd_up = cdiv(BM + 1, BK)\n"
    "  let cd_exact = cdiv(BM, BK)\n"
    "  let cd_zero = cdiv(0, BK)\n"
    "  let cd_neg = cdiv(NEG, 2)\n"
    "  let cd_negb = cdiv(7, 0 - 2)\n"
    "  let cd_div0 = cdiv(7, 0)\n"
    "  let shl_max = 1 << 62\n"
    "  let shl_ovf = 3 << 62\n"
    "  let shl_far = 1 << 63\n"
    "  let shr_neg = NEG >> 1\n"
    "  let pow_max = 2 ^ 62\n"
    "  let pow_ovf = 2 ^ 63\n"
    "  let pow_one = 1 ^ 1000\n"
    "  let pow_negexp = 2 ^ (0 - 1)\n"
    "  let and_short = BM < 100 && 1 / 0 == 0\n"
    "  let or_short = BM > 100 || M > 0\n"
    "  let and_unknown = BM > 100 && M > 0\n"
    "  let cast_ok = i8(100)\n"
    "  let cast_over = i8(200)\n"
    "  let cast_u8 = u8(BM * 2)\n"
    "  let cast_u16 = u16(BM * 2)\n"
    "  let cast_neg = u32(NEG)\n"
    "  let cast_bool = bool(BK)\n"
    "  let sel = select(BM > BK, BM, BK) + max(BM, BK) - min(BM, BK)\n"
    "  let chain = add_max - BIG\n"
    "  let dims = M * 2 + K\n"
    "  let grid0 = cdiv(M, BM)\n"
    "  let idx = thread.x * 2 + lane\n"
    "}\n";

typedef struct { CakeCtx *ctx; Module *m; Kernel *k; } Fix;

static int setup(void **state)
{
    Fix *f = calloc(1, sizeof *f);
    f->ctx = ctx_new();
    f->k = parse_resolved(f->ctx, SRC, &f->m);
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

/* the initializer of the let named `name` */
static NodeId init_of(const Fix *f, const char *name) { return let_init(f->ctx, f->k, name); }

/* 1 and the value of let `name` with parameters at their defaults */
static int value(const Fix *f, const char *name, int64_t *v)
{
    return ce_const_int(f->ctx, f->k, init_of(f, name), v);
}

static void expect(const Fix *f, const char *name, int64_t want)
{
    int64_t v = 0;
    if (!value(f, name, &v))
        fail_msg("%s does not evaluate", name);
    if (v != want)
        fail_msg("%s = %lld, expected %lld", name, (long long)v, (long long)want);
}

static void expect_fail(const Fix *f, const char *name)
{
    int64_t v = 12345;
    if (value(f, name, &v))
        fail_msg("%s evaluates to %lld, expected a failure", name, (long long)v);
    assert_int_equal(v, 12345); /* *out untouched on failure */
}

static void overflow_fails(void **state)
{
    Fix *f = *state;
    expect(f, "add_max", INT64_MAX);
    expect(f, "chain", INT64_MAX - ((int64_t)1 << 62)); /* lets of constants are constants */
    expect_fail(f, "add_ovf");
    expect_fail(f, "sub_ovf");
    expect_fail(f, "mul_ovf");
    expect_fail(f, "neg_ovf");
}

static void division_truncates(void **state)
{
    Fix *f = *state;
    expect(f, "div_neg", -3);   /* -7 / 2: toward zero, as in C */
    expect(f, "mod_neg", -1);   /* the sign of the dividend */
    expect(f, "div_negb", -3);
    expect(f, "mod_negb", 1);
    expect_fail(f, "div_zero");
    expect_fail(f, "mod_zero");
}

static void cdiv_on_its_domain(void **state)
{
    Fix *f = *state;
    expect(f, "cd_up", 3);      /* ceil(129 / 64) */
    expect(f, "cd_exact", 2);
    expect(f, "cd_zero", 0);
    expect_fail(f, "cd_neg");   /* a < 0: no value in the language */
    expect_fail(f, "cd_negb");  /* b < 0 */
    expect_fail(f, "cd_div0");
}

static void shifts_and_powers(void **state)
{
    Fix *f = *state;
    expect(f, "shl_max", (int64_t)1 << 62);
    expect_fail(f, "shl_ovf");
    expect_fail(f, "shl_far");
    expect(f, "shr_neg", -4);   /* arithmetic: -7 >> 1 */
    expect(f, "pow_max", (int64_t)1 << 62);
    expect_fail(f, "pow_ovf");
    expect(f, "pow_one", 1);
    expect_fail(f, "pow_negexp");
}

static void logic_and_casts(void **state)
{
    Fix *f = *state;
    expect(f, "and_short", 0);  /* BM < 100 is false: 1 / 0 is never needed */
    expect(f, "or_short", 1);   /* M is a dim, unknown, but BM > 100 decides */
    expect_fail(f, "and_unknown");
    expect(f, "cast_ok", 100);
    expect_fail(f, "cast_over");
    expect_fail(f, "cast_u8");
    expect(f, "cast_u16", 256);
    expect_fail(f, "cast_neg");
    expect(f, "cast_bool", 1);
    expect(f, "sel", 128 + 128 - 64);
}

static void bindings(void **state)
{
    Fix *f = *state;
    int64_t v;
    expect_fail(f, "dims");     /* dims are unknown without bindings */
    CeBinding b[] = {{ir_intern_cstr(f->ctx, "M"), 4096}, {ir_intern_cstr(f->ctx, "K"), 96},
                     {ir_intern_cstr(f->ctx, "BM"), 64}};  /* `--shape M=4096,K=96 --set BM=64` */
    CeEnv env = {.b = b, .n = 3};
    assert_true(ce_eval_int(f->ctx, f->k, init_of(f, "dims"), &env, &v));
    assert_int_equal(v, 4096 * 2 + 96);
    assert_true(ce_eval_int(f->ctx, f->k, init_of(f, "grid0"), &env, &v));
    assert_int_equal(v, 64);    /* cdiv(4096, 64): the binding overrides BM = 128 */
    assert_true(ce_eval_int(f->ctx, f->k, init_of(f, "cd_up"), &env, &v));
    assert_int_equal(v, 2);     /* cdiv(65, 64) */
    assert_true(ce_env_get(&env, ir_intern_cstr(f->ctx, "K"), &v) && v == 96);
    assert_false(ce_env_get(&env, ir_intern_cstr(f->ctx, "N"), &v));
    assert_false(ce_env_get(NULL, ir_intern_cstr(f->ctx, "K"), &v));
    CeEnv some = {.b = b, .n = 1};  /* K unbound */
    assert_false(ce_eval_int(f->ctx, f->k, init_of(f, "dims"), &some, &v));
}

/* the hooks of an interpreter: thread 70 of a 64-lane machine, M known */
static int hook_decl(const CeEnv *env, NodeId decl, int64_t *out)
{
    const Fix *f = env->u;
    if (f->k->nodes[decl].op != OP_DIM || f->k->nodes[decl].name != ir_intern_cstr(f->ctx, "M"))
        return 0;
    *out = 1000;
    return 1;
}

static int hook_special(const CeEnv *env, NodeId at, int64_t *out)
{
    const Fix *f = env->u;
    switch (f->k->nodes[at].sub) {
    case SR_THREAD_X: *out = 70; return 1;
    case SR_LANE: *out = 6; return 1;
    default: return 0;
    }
}

static void hooks(void **state)
{
    Fix *f = *state;
    int64_t v;
    expect_fail(f, "idx");      /* special registers have no constant value */
    CeEnv env = {.decl = hook_decl, .special = hook_special, .u = f};
    assert_true(ce_eval_int(f->ctx, f->k, init_of(f, "idx"), &env, &v));
    assert_int_equal(v, 70 * 2 + 6);
    assert_true(ce_eval_int(f->ctx, f->k, init_of(f, "and_unknown"), &env, &v));
    assert_int_equal(v, 1);     /* M = 1000 through the hook */
    assert_true(ce_eval_int(f->ctx, f->k, init_of(f, "grid0"), &env, &v));
    assert_int_equal(v, 8);     /* cdiv(1000, 128): params keep their defaults */
    assert_false(ce_eval_int(f->ctx, f->k, init_of(f, "dims"), &env, &v)); /* K unknown */
}

static void binop_table(void **state)
{
    (void)state;
    int64_t r;
    assert_true(ce_binop(OP_ADD, 2, 3, &r) && r == 5);
    assert_false(ce_binop(OP_ADD, INT64_MAX, 1, &r));
    assert_false(ce_binop(OP_SUB, INT64_MIN, 1, &r));
    assert_false(ce_binop(OP_MUL, INT64_MIN, -1, &r));
    assert_false(ce_binop(OP_DIV, INT64_MIN, -1, &r));
    assert_false(ce_binop(OP_MOD, INT64_MIN, -1, &r));
    assert_true(ce_binop(OP_DIV, -9, 4, &r) && r == -2);
    assert_true(ce_binop(OP_MOD, -9, 4, &r) && r == -1);
    assert_true(ce_binop(OP_CDIV, 9, 4, &r) && r == 3);
    assert_true(ce_binop(OP_CDIV, INT64_MAX, 1, &r) && r == INT64_MAX); /* no a + b - 1 overflow */
    assert_true(ce_binop(OP_CDIV, INT64_MAX, 2, &r) && r == ((int64_t)1 << 62));
    assert_false(ce_binop(OP_CDIV, -9, 4, &r));
    assert_true(ce_binop(OP_POW, -3, 3, &r) && r == -27);
    assert_true(ce_binop(OP_POW, 0, 0, &r) && r == 1);
    assert_true(ce_binop(OP_POW, -1, INT64_MAX, &r) && r == -1);
    assert_false(ce_binop(OP_POW, 3, 40, &r));
    assert_false(ce_binop(OP_SHL, -1, 3, &r));
    assert_true(ce_binop(OP_SHR, -1, 63, &r) && r == -1);
    assert_false(ce_binop(OP_SHR, 1, 64, &r));
    assert_true(ce_binop(OP_MAX, -1, -2, &r) && r == -1);
    assert_true(ce_binop(OP_MIN, -1, -2, &r) && r == -2);
    assert_true(ce_binop(OP_AND, 2, 3, &r) && r == 1);
    assert_true(ce_binop(OP_BXOR, 6, 3, &r) && r == 5);
    assert_true(ce_binop(OP_LE, 3, 3, &r) && r == 1);
    assert_false(ce_binop(OP_LOAD, 1, 1, &r)); /* not an integer operation */
}

static void divisibility(void **state)
{
    Fix *f = *state;
    assert_int_equal(ce_gcd(-12, 18), 6);
    assert_int_equal(ce_gcd(0, 0), 0);
    assert_true(ce_is_multiple(f->ctx, f->k, init_of(f, "cd_up"), 3));
    assert_false(ce_is_multiple(f->ctx, f->k, init_of(f, "dims"), 2)); /* K: no assume */
}

static void block_threads_per_target(void **state)
{
    Fix *f = *state;
    assert_int_equal(ce_block_threads(f->ctx, f->k, TG_SM90A), 128);  /* warps 4 */
    assert_int_equal(ce_block_threads(f->ctx, f->k, TG_SM80), 128);
    assert_int_equal(ce_block_threads(f->ctx, f->k, TG_GFX942), 256); /* four wavefronts */
    assert_int_equal(ce_block_threads(f->ctx, f->k, TG_GFX90A), 256);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(overflow_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(division_truncates, setup, teardown),
        cmocka_unit_test_setup_teardown(cdiv_on_its_domain, setup, teardown),
        cmocka_unit_test_setup_teardown(shifts_and_powers, setup, teardown),
        cmocka_unit_test_setup_teardown(logic_and_casts, setup, teardown),
        cmocka_unit_test_setup_teardown(bindings, setup, teardown),
        cmocka_unit_test_setup_teardown(hooks, setup, teardown),
        cmocka_unit_test(binop_table),
        cmocka_unit_test_setup_teardown(divisibility, setup, teardown),
        cmocka_unit_test_setup_teardown(block_threads_per_target, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
