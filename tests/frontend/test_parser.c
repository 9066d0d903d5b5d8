/* test_parser.c — node shapes and spans of a few constructs, and recovery. */
#include "helpers.h"

static Kernel *parse_ok(CakeCtx *ctx, const char *body)
{
    char *src = ir_fmt(ctx, KHEAD "%s\n}\n", body);
    Module *m = parse_str(ctx, src);
    if (ctx->nerrors)
        diag_print_text(ctx, stderr, 0);
    assert_int_equal(ctx->nerrors, 0);
    assert_int_equal(m->nkernels, 1);
    return m->kernels[0];
}

static void test_header(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_ok(ctx, "");
    assert_string_equal(ir_symstr(ctx, k->name), "k");
    assert_int_equal(k->nparams, 1);
    assert_int_equal(k->nargs, 2);
    assert_int_equal(k->ndims, 2);                    /* M and N */
    Node *gt = &k->nodes[k->nodes[k->args[0]].a];
    assert_int_equal(gt->op, OP_GTYPE);
    assert_int_equal(gt->sub, 2);
    NodeId d0 = k->lists[gt->list];
    assert_int_equal(k->nodes[d0].op, OP_NAME);
    assert_int_equal(k->nodes[d0].decl, k->dims[0]);  /* the dim list names the DIM */
    assert_int_equal(k->ngrid, 1);
    assert_int_equal(k->block_unit, UNIT_THREADS);
    assert_string_equal(span_text(ctx, k->nodes[k->args[0]].span), "arg x: global f32[M, N]");
    ctx_free(ctx);
}

static void test_wgmma(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_ok(ctx, "  wgmma x += x[0 : +64, :] * x^T");
    NodeId w = find_op(k, OP_WGMMA, 0);
    Node *n = &k->nodes[w];
    assert_int_equal(k->nodes[n->a].op, OP_NAME);
    assert_int_equal(k->nodes[n->b].op, OP_INDEX);
    assert_int_equal(k->nodes[n->c].op, OP_TRANS);
    Node *ix = &k->nodes[n->b];
    assert_int_equal(ix->n, 2);
    assert_int_equal(k->nodes[k->lists[ix->list]].op, OP_SLICE);
    assert_int_equal(k->nodes[k->lists[ix->list + 1]].op, OP_COLON);
    assert_string_equal(span_text(ctx, n->span), "wgmma x += x[0 : +64, :] * x^T");
    assert_string_equal(span_text(ctx, ix->span), "x[0 : +64, :]");
    ctx_free(ctx);
}

static void test_load_and_precedence(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_ok(ctx, "  let v = -a ^ 2 * load x[0, 1] as f32x4 mask b < 3");
    Node *let = &k->nodes[find_op(k, OP_LET, 0)];
    Node *mul = &k->nodes[let->b];
    assert_int_equal(mul->op, OP_MUL);
    assert_int_equal(k->nodes[mul->a].op, OP_NEG);     /* -(a ^ 2) */
    assert_int_equal(k->nodes[k->nodes[mul->a].a].op, OP_POW);
    Node *ld = &k->nodes[mul->b];
    assert_int_equal(ld->op, OP_LOAD);
    assert_int_equal(ld->dtype, DT_F32);
    assert_int_equal(ld->lanes, 4);
    assert_int_equal(k->nodes[ld->b].op, OP_LT);       /* the mask takes the rest */
    ctx_free(ctx);
}

static void test_pipeline_and_roles(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_ok(ctx,
        "  pipeline ring: 2 stages from role load to role mma\n"
        "  role load: warpgroup 0, regs 40 { let s = ring.acquire(); ring.commit(s) }\n"
        "  role mma: warpgroups 1 .. 3 { let s = ring.wait()\n ring.release(s) }\n");
    Node *pl = &k->nodes[find_op(k, OP_PIPELINE, 0)];
    assert_int_equal(k->nodes[pl->b].op, OP_NAME);
    NodeId r1 = find_op(k, OP_ROLE, 0), r2 = find_op(k, OP_ROLE, r1);
    assert_int_equal(k->nodes[r1].sub, UNIT_WARPGROUPS);
    assert_int_equal(k->nodes[r1].b, 0);
    assert_int_not_equal(k->nodes[r1].c, 0);
    assert_int_not_equal(k->nodes[r2].b, 0);
    Node *acq = &k->nodes[find_op(k, OP_P_ACQUIRE, 0)];
    assert_int_equal(k->nodes[acq->a].op, OP_NAME);
    assert_int_equal(acq->n, 0);
    assert_int_not_equal(find_op(k, OP_P_COMMIT, 0), 0);
    assert_int_not_equal(find_op(k, OP_P_RELEASE, 0), 0);
    ctx_free(ctx);
}

static void test_reference(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Kernel *k = parse_ok(ctx, "  reference { x[m, n] = max(j in 0 .. N, f32(x[m, j])) }");
    assert_int_not_equal(k->reference, 0);
    assert_int_equal(k->nodes[k->reference].op, OP_BLOCK);
    Node *red = &k->nodes[find_op(k, OP_RMAX, 0)];
    assert_string_equal(ir_symstr(ctx, red->name), "j");
    assert_int_equal(k->nodes[red->c].op, OP_CAST);
    ctx_free(ctx);
}

static int count_errors(const char *body)
{
    CakeCtx *ctx = ctx_new();
    parse_str(ctx, ir_fmt(ctx, KHEAD "%s\n}\n", body));
    int n = (int)ctx->nerrors;
    ctx_free(ctx);
    return n;
}

static void test_recovery(void **state)
{
    (void)state;
    /* five independent mistakes in five statements: exactly five diagnostics */
    assert_int_equal(count_errors("  let a = 1 +* 2\n  let b = (3\n  var c = 1\n"
                                  "  for i in 0 N { }\n  let d = frob(1)\n  let e = 2"), 5);
    assert_int_equal(count_errors("  if a { let b = ) }\n  let c = ]\n"), 2);
    assert_int_equal(count_errors("  let a = exp(1, 2)"), 1);   /* E0207 */
}

static void test_unclosed(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    parse_str(ctx, KHEAD "  for i in 0 .. 4 {\n    let a = 1\n");
    assert_int_equal(ctx->nerrors, 1);
    assert_true(first_code(ctx, "E0106"));
    assert_int_equal(ctx->diags[0].nnotes, 1);
    assert_true(strstr(ctx->diags[0].msg, "line 7") != NULL);
    ctx_free(ctx);
}

static void test_missing_clauses(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    parse_str(ctx, "kernel k\n  target sm_90a\n{\n}\n");
    assert_int_equal(ctx->nerrors, 2);
    assert_true(first_code(ctx, "E0115"));
    ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header),
        cmocka_unit_test(test_wgmma),
        cmocka_unit_test(test_load_and_precedence),
        cmocka_unit_test(test_pipeline_and_roles),
        cmocka_unit_test(test_reference),
        cmocka_unit_test(test_recovery),
        cmocka_unit_test(test_unclosed),
        cmocka_unit_test(test_missing_clauses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
