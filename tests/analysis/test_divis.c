/* test_divis.c — the congruence lattice modulo powers of two and the
 * evaluator of index expressions over it (analysis/divis.h): the lattice
 * operations on their own, then expressions of a parsed kernel under facts
 * drawn from conditions. */
#include "analysis_util.h"
#include "divis.h"

static DvCong mult(int64_t m) { return dv_mul(dv_const(m), dv_top()); }

static void lattice(void **state)
{
    (void)state;
    assert_int_equal(dv_pow2(dv_top()), 1);
    assert_int_equal(dv_pow2(dv_const(24)), 8);
    assert_int_equal(dv_pow2(dv_const(0)), (int64_t)1 << 62);
    assert_int_equal(dv_pow2(mult(8)), 8);
    assert_int_equal(dv_pow2(dv_add(mult(8), dv_const(4))), 4);   /* 8i + 4 */
    assert_int_equal(dv_pow2(dv_add(mult(8), mult(16))), 8);
    assert_int_equal(dv_pow2(dv_mul(mult(8), mult(4))), 32);       /* 8i * 4j */
    assert_int_equal(dv_pow2(dv_mul(mult(8), dv_top())), 8);
    assert_int_equal(dv_pow2(dv_mul(dv_add(mult(4), dv_const(2)), dv_const(2))), 4); /* (4i + 2) * 2 */
    assert_int_equal(dv_pow2(dv_mul(dv_add(mult(4), dv_const(1)), dv_add(mult(4), dv_const(1)))), 1);
    assert_int_equal(dv_pow2(dv_neg(mult(16))), 16);
    /* exact constants stay exact, modulo 2^64 without overflow traps */
    DvCong big = dv_mul(dv_const((int64_t)1 << 40), dv_const((int64_t)1 << 30));
    assert_int_equal(big.k, 64);
    assert_int_equal(dv_pow2(big), (int64_t)1 << 62);
    /* join: either value; meet: both facts */
    assert_int_equal(dv_pow2(dv_join(dv_const(16), dv_const(48))), 16);
    assert_int_equal(dv_pow2(dv_join(dv_const(8), mult(32))), 8);
    DvCong m = dv_meet(dv_top(), mult(8));
    assert_int_equal(dv_pow2(m), 8);
    assert_int_equal(dv_pow2(dv_meet(mult(16), mult(4))), 16);
    /* shifts */
    assert_int_equal(dv_pow2(dv_shr(mult(32), 3)), 4);
    assert_int_equal(dv_pow2(dv_shr(mult(4), 3)), 1);
    assert_true(dv_multiple(mult(16), 8));
    assert_false(dv_multiple(mult(4), 8));
}

static const char *SRC =
    "kernel k<VEC = 8, T = 128>\n"
    "  target sm_80\n"
    "  arg x: global bf16[M, N]\n"
    "  arg ld: i32\n"
    "  grid [M]\n"
    "  threads T\n"
    "  assume N % 8 == 0 && (ld & 3) == 0\n"
    "{\n"
    "  let q = thread.x\n"
    "  let col = (q % 8) * VEC\n"
    "  let row = q / 8\n"
    "  let pitch = row * N * 2\n"
    "  let odd = col + 4\n"
    "  let sel = select(q < 4, col, col + 16)\n"
    "  let low = (col + 24) % 16\n"
    "  let masked = (q * 4) & 12\n"
    "  let sh = (q << 3) >> 1\n"
    "  let cd = cdiv(col, 8)\n"
    "  let byld = row * ld\n"
    "  let byN = N\n"
    "  for i in thread.x * VEC .. N step T * VEC {\n"
    "    let ii = i\n"
    "  }\n"
    "  for j in 2 .. N step 4 {\n"
    "    let jj = j\n"
    "  }\n"
    "}\n";

typedef struct { CakeCtx *ctx; Module *m; Kernel *k; DvFact facts[16]; DvEnv env; } Fix;

static int setup(void **state)
{
    Fix *f = calloc(1, sizeof *f);
    f->ctx = ctx_new();
    f->k = parse_resolved(f->ctx, SRC, &f->m);
    f->env.ctx = f->ctx;
    f->env.k = f->k;
    f->env.facts = f->facts;
    f->env.capfacts = 16;
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

static NodeId init_of(const Fix *f, const char *name) { return let_init(f->ctx, f->k, name); }

static int64_t pow2_of(Fix *f, const char *name)
{
    return dv_pow2(dv_expr(&f->env, init_of(f, name)));
}

static void expressions(void **state)
{
    Fix *f = *state;
    assert_int_equal(pow2_of(f, "q"), 1);
    assert_int_equal(pow2_of(f, "col"), 8);          /* (q % 8) * VEC */
    assert_int_equal(pow2_of(f, "row"), 1);
    assert_int_equal(pow2_of(f, "pitch"), 2);        /* no facts yet: N unknown */
    assert_int_equal(pow2_of(f, "odd"), 4);
    assert_int_equal(pow2_of(f, "sel"), 8);          /* either side */
    DvCong low = dv_expr(&f->env, init_of(f, "low"));/* (8a + 24) % 16 is 0 or 8 */
    assert_int_equal(dv_pow2(low), 8);
    assert_int_equal(pow2_of(f, "masked"), 4);       /* (4q) & 12 */
    assert_int_equal(pow2_of(f, "sh"), 4);           /* (q << 3) >> 1 */
    assert_int_equal(pow2_of(f, "cd"), 1);           /* cdiv(8a, 8) = a */
    assert_int_equal(pow2_of(f, "ii"), 8);           /* thread.x * VEC + T * VEC * t */
    assert_int_equal(pow2_of(f, "jj"), 2);           /* 2 + 4t */
    DvCong jj = dv_expr(&f->env, init_of(f, "jj"));
    assert_int_equal(jj.k, 2);
    assert_int_equal(jj.r, 2);
}

static void facts(void **state)
{
    Fix *f = *state;
    for (uint32_t i = 0; i < f->k->nassumes; i++)
        dv_add_facts(&f->env, f->k->assumes[i], 0);
    assert_int_equal(f->env.nfacts, 2);
    assert_int_equal(pow2_of(f, "byN"), 8);          /* N % 8 == 0 */
    assert_int_equal(pow2_of(f, "pitch"), 16);       /* row * N * 2 */
    assert_int_equal(pow2_of(f, "byld"), 4);         /* row * ld, (ld & 3) == 0 */
}

/* an `if` condition and its negation: `!(N % 16 != 0 || ld == 3)` gives
 * N % 16 == 0 (and ld != 3, which says nothing about divisibility) */
static void negated_conditions(void **state)
{
    Fix *f = *state;
    Sym n = ir_intern_cstr(f->ctx, "N");
    NodeId dimN = 0;
    for (uint32_t i = 0; i < f->k->ndims; i++)
        if (f->k->nodes[f->k->dims[i]].name == n)
            dimN = f->k->dims[i];
    assert_true(dimN != 0);
    /* the assume `N % 8 == 0 && ...` negated: N % 8 != 0 || ... holds, no fact */
    dv_add_facts(&f->env, f->k->assumes[0], 1);
    assert_int_equal(f->env.nfacts, 0);
    /* its first conjunct alone, negated twice through NOT */
    NodeId conj = f->k->nodes[f->k->assumes[0]].a;
    NodeId notnot = ir_node(f->ctx, f->k, OP_NOT, IR_NOSPAN);
    f->k->nodes[notnot].a = conj;
    dv_add_facts(&f->env, notnot, 1);
    assert_int_equal(f->env.nfacts, 1);
    assert_int_equal(f->env.facts[0].decl, dimN);
    assert_int_equal(dv_pow2(f->env.facts[0].c), 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lattice),
        cmocka_unit_test_setup_teardown(expressions, setup, teardown),
        cmocka_unit_test_setup_teardown(facts, setup, teardown),
        cmocka_unit_test_setup_teardown(negated_conditions, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
