/* test_lexer.c — token kinds and exact spans. */
#include "helpers.h"
#include "lexer.h"

static TokenList lex(CakeCtx *ctx, const char *src)
{
    uint32_t f = ctx_add_file(ctx, "t.tir", src, (uint32_t)strlen(src));
    return fe_lex(ctx, f);
}

static void expect_kinds(const char *src, const TokKind *kinds, size_t n)
{
    CakeCtx *ctx = ctx_new();
    TokenList tl = lex(ctx, src);
    assert_int_equal(ctx->nerrors, 0);
    assert_int_equal(tl.ntoks, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tl.toks[i].kind, kinds[i]);
    ctx_free(ctx);
}

static void test_dotted(void **state)
{
    (void)state;
    const TokKind k[] = {T_IDENT, T_INT, T_NEWLINE, T_IDENT, T_DOT, T_IDENT, T_LPAREN, T_RPAREN,
                         T_NEWLINE, T_EOF};
    expect_kinds("cp.async.wait 0\nring.acquire()", k, sizeof k / sizeof *k);
    CakeCtx *ctx = ctx_new();
    TokenList tl = lex(ctx, "reduce.block.add(thread.x) fence.proxy.async tma.store.wait");
    assert_string_equal(ir_symstr(ctx, tl.toks[0].sym), "reduce.block.add");
    assert_string_equal(ir_symstr(ctx, tl.toks[2].sym), "thread.x");
    assert_int_equal(tl.toks[2].span.lo, 17);
    assert_int_equal(tl.toks[2].span.hi, 25);
    assert_string_equal(ir_symstr(ctx, tl.toks[4].sym), "fence.proxy.async");
    assert_string_equal(ir_symstr(ctx, tl.toks[5].sym), "tma.store.wait");
    ctx_free(ctx);
}

/* grid.x and sm.count are one token each, although `grid` is a keyword; a
 * longer word is not (grid.xy is `grid` `.` `xy`) */
static void test_grid_specials(void **state)
{
    (void)state;
    const TokKind k[] = {T_GRID, T_LBRACK, T_IDENT, T_LPAREN, T_IDENT, T_COMMA, T_IDENT, T_RPAREN,
                         T_RBRACK, T_IDENT, T_GRID, T_DOT, T_IDENT, T_IDENT, T_DOT, T_IDENT,
                         T_NEWLINE, T_EOF};
    const char *src = "grid [min(sm.count, N)] grid.z grid.xy sm.counts";
    expect_kinds(src, k, sizeof k / sizeof *k);
    CakeCtx *ctx = ctx_new();
    TokenList tl = lex(ctx, src);
    assert_string_equal(ir_symstr(ctx, tl.toks[4].sym), "sm.count");
    assert_int_equal(tl.toks[4].span.lo, 10);
    assert_int_equal(tl.toks[4].span.hi, 18);
    assert_string_equal(ir_symstr(ctx, tl.toks[9].sym), "grid.z");
    ctx_free(ctx);
}

static void test_numbers(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    TokenList tl = lex(ctx, "0x7f 4_096 1.5e-3 .5 0..N 3e+2");
    assert_int_equal(ctx->nerrors, 0);
    assert_int_equal(tl.toks[0].kind, T_INT);
    assert_int_equal(tl.toks[0].v.i, 127);
    assert_int_equal(tl.toks[1].v.i, 4096);
    assert_int_equal(tl.toks[2].kind, T_FLOAT);
    assert_true(tl.toks[2].v.f == 1.5e-3);
    assert_true(tl.toks[3].v.f == 0.5);
    assert_int_equal(tl.toks[4].kind, T_INT);
    assert_int_equal(tl.toks[5].kind, T_DOTDOT);
    assert_int_equal(tl.toks[6].kind, T_IDENT);
    assert_true(tl.toks[7].v.f == 300.0);
    ctx_free(ctx);
}

static void test_number_errors(void **state)
{
    (void)state;
    const char *bad[] = {"0x", "12abc", "1__0", "99999999999999999999", "1e999"};
    const char *codes[] = {"E0102", "E0102", "E0102", "E0114", "E0114"};
    for (int i = 0; i < 5; i++) {
        CakeCtx *ctx = ctx_new();
        lex(ctx, bad[i]);
        assert_int_equal(ctx->nerrors, 1);
        assert_string_equal(ir_diag_info[ctx->diags[0].code].code, codes[i]);
        assert_int_equal(ctx->diags[0].span.lo, 0);
        assert_int_equal(ctx->diags[0].span.hi, strlen(bad[i]));
        ctx_free(ctx);
    }
}

static void test_operators(void **state)
{
    (void)state;
    const TokKind k[] = {T_IDENT, T_TRANS, T_IDENT, T_ARROW, T_IDENT, T_IDENT, T_MAXEQ, T_INT,
                         T_IDENT, T_CARET, T_IDENT, T_SHL, T_LE, T_NE, T_EOF}; /* ends with an operator: no newline */
    expect_kinds("B^T a <- b m max= 1 x ^ T << <= !=", k, sizeof k / sizeof *k);
}

static void test_newlines(void **state)
{
    (void)state;
    /* no newline inside brackets, after a binary operator or `,`; one after `x` */
    const TokKind k[] = {T_IDENT, T_LPAREN, T_IDENT, T_COMMA, T_IDENT, T_RPAREN, T_PLUS, T_IDENT,
                         T_NEWLINE, T_IDENT, T_NEWLINE, T_EOF};
    expect_kinds("f(a,\n b) +\n c\n\n# comment\n #[ block\n ]# x", k, sizeof k / sizeof *k);
}

static void test_bad_bytes(void **state)
{
    (void)state;
    const char src[] = "let \xc3\xa9 = $\0x";
    CakeCtx *ctx = ctx_new();
    uint32_t f = ctx_add_file(ctx, "t.tir", src, sizeof src - 1);
    TokenList tl = fe_lex(ctx, f);
    assert_int_equal(ctx->nerrors, 3);           /* é, $, NUL */
    assert_int_equal(ctx->diags[0].span.lo, 4);
    assert_int_equal(ctx->diags[0].span.hi, 6);  /* the whole UTF-8 sequence */
    assert_int_equal(tl.toks[1].kind, T_ERROR);
    ctx_free(ctx);
}

static void test_unterminated_comment(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    TokenList tl = lex(ctx, "x #[ never closed");
    assert_int_equal(ctx->nerrors, 1);
    assert_string_equal(ir_diag_info[ctx->diags[0].code].code, "E0103");
    assert_int_equal(ctx->diags[0].span.lo, 2);
    assert_int_equal(ctx->diags[0].span.hi, 4);
    assert_true(tl.comment_error);
    ctx_free(ctx);
}

static void test_keywords_and_dtypes(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    TokenList tl = lex(ctx, "kernel bf16x8 f32x3 load mbarrier.arrive mbarrier");
    assert_int_equal(tl.toks[0].kind, T_KERNEL);
    assert_int_equal(tl.toks[1].kind, T_DTYPE);
    assert_int_equal(tl.toks[1].dtype, DT_BF16);
    assert_int_equal(tl.toks[1].lanes, 8);
    assert_int_equal(tl.toks[2].kind, T_IDENT);   /* 3 lanes: not a dtype */
    assert_int_equal(tl.toks[3].kind, T_LOAD);
    assert_int_equal(tl.toks[4].kind, T_IDENT);
    assert_int_equal(tl.toks[5].kind, T_MBARRIER);
    ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dotted),
        cmocka_unit_test(test_grid_specials),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_number_errors),
        cmocka_unit_test(test_operators),
        cmocka_unit_test(test_newlines),
        cmocka_unit_test(test_bad_bytes),
        cmocka_unit_test(test_unterminated_comment),
        cmocka_unit_test(test_keywords_and_dtypes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
