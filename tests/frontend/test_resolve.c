/* test_resolve.c — scopes, implicit indices, kinds and the E02xx codes. */
#include "helpers.h"

static Kernel *resolve_str(CakeCtx *ctx, const char *body)
{
    Module *m = parse_str(ctx, ir_fmt(ctx, KHEAD "%s\n}\n", body));
    assert_int_equal(ctx->nerrors, 0);
    fe_resolve(ctx, m);
    return m->kernels[0];
}

static const char *code_of(const char *body)
{
    static char code[8];
    CakeCtx *ctx = ctx_new();
    resolve_str(ctx, body);
    snprintf(code, sizeof code, "%s", ctx->ndiags ? ir_diag_info[ctx->diags[0].code].code : "-");
    ctx_free(ctx);
    return code;
}

static void test_implicit_indices(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = resolve_str(ctx, "  reference { x[m, n] = f32(m + n) * s }");
    assert_int_equal(ctx->nerrors, 0);
    NodeId as = find_op(k, OP_ASSIGN, 0);
    Node *lhs = &k->nodes[k->nodes[as].a];
    NodeId m = k->lists[lhs->list];
    assert_true(k->nodes[m].flags & NF_IMPLICIT);
    assert_int_equal(k->nodes[m].decl, m);
    /* the use of m on the right resolves to the implicit index */
    NodeId cast = find_op(k, OP_CAST, 0);
    Node *add = &k->nodes[k->nodes[cast].a];
    assert_int_equal(k->nodes[add->a].decl, m);
    assert_int_equal(k->nodes[lhs->a].decl, k->args[0]);
    ctx_free(ctx);
}

static void test_scopes(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = resolve_str(ctx, "  let a = 1\n  for i in 0 .. M { let a = i }\n  let b = a");
    assert_int_equal(ctx->nerrors, 0);
    NodeId a1 = find_op(k, OP_LET, 0), a2 = find_op(k, OP_LET, a1), b = find_op(k, OP_LET, a2);
    NodeId f = find_op(k, OP_FOR, 0);
    assert_int_equal(k->nodes[k->nodes[a2].b].decl, f);   /* i */
    assert_int_equal(k->nodes[k->nodes[b].b].decl, a1);   /* the inner `a` is gone */
    ctx_free(ctx);
}

static void test_roles_visible_kernel_wide(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = resolve_str(ctx, "  pipeline p: 2 stages from role a to role b\n"
                                 "  role a: warp 0 { let s = p.acquire() }\n"
                                 "  role b: warp 1 { let s = p.wait() }");
    assert_int_equal(ctx->nerrors, 0);
    Node *pl = &k->nodes[find_op(k, OP_PIPELINE, 0)];
    assert_int_equal(k->nodes[pl->b].decl, find_op(k, OP_ROLE, 0));
    ctx_free(ctx);
}

static void test_codes(void **state)
{
    (void)state;
    assert_string_equal(code_of("  let a = bb"), "E0201");
    assert_string_equal(code_of("  let a = 1\n  let a = 2"), "E0202");
    assert_string_equal(code_of("  let a = b\n  let b = 1"), "E0204");
    assert_string_equal(code_of("  let r = 1\n  r.acquire()"), "E0205");
    assert_string_equal(code_of("  let a = 1\n  a = 2"), "E0206");
    assert_string_equal(code_of("  s = 2"), "E0206");
    assert_string_equal(code_of("  let q = 1\n  reference { x[m, n] = q }"), "E0201");
    assert_string_equal(code_of("  var v: f32 = 0\n  v += 1\n  x[0, 0] = v"), "-");
}

static void test_did_you_mean(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    resolve_str(ctx, "  let alpha = 1\n  let b = alpah + 1");
    assert_int_equal(ctx->nerrors, 1);
    Diag *d = &ctx->diags[0];
    assert_int_equal(d->nfixits, 1);
    assert_string_equal(d->fixits[0].replacement, "alpha");
    assert_string_equal(span_text(ctx, d->fixits[0].span), "alpah");
    ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_implicit_indices),
        cmocka_unit_test(test_scopes),
        cmocka_unit_test(test_roles_visible_kernel_wide),
        cmocka_unit_test(test_codes),
        cmocka_unit_test(test_did_you_mean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
