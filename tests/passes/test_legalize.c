/* test_legalize.c — the legalize pass: the rewritten kernel printed back (casts
 * where conversions were implicit, settled and folded literals, converting
 * loads split, 16-bit hsum/dot in f32), the invariant at the top of
 * passes/legalize.c checked node by node on every example and test case, and a
 * `--set` instance verified again so that its types hold for what is compiled. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "fe.h"
#include "verify.h"
#include "passes.h"

static const char *SRC =
    "kernel lg<BM = 64, T = 128>\n"
    "  target sm_90a\n"
    "  arg xb: global bf16[N] align 16\n"
    "  arg xf: global f32[N] align 16\n"
    "  arg o: global f32[N] align 16\n"
    "  arg ob: global bf16[N] align 16\n"
    "  arg k: i32\n"
    "  arg s: f32\n"
    "  grid [cdiv(N, T)]\n"
    "  threads T\n"
    "  assume N % 8 == 0\n"
    "{\n"
    "  let H = BM / 2\n"
    "  let i = block.x * T + thread.x\n"
    "  let sh = shfl.idx(s, N - 1)\n"
    "  if i * 8 + 8 <= N {\n"
    "    let vb = load xb[i * 8 : +8]\n"
    "    let vf = load xb[i * 8 : +8] as f32x8\n"
    "    let a = hsum(vb) + dot(vb, vb) + hmax(vf)\n"
    "    let b = f32(load xb[i]) * s * (BM / 3) + s * H + s * cdiv(BM, 3)\n"
    "    let c = vf * 2.0 + vf * s\n"
    "    store o[i] <- a + b + hsum(c) + sh\n"
    "    store ob[i * 8 : +8] <- bf16x8(c)\n"
    "  }\n"
    "  var j: i32 = 0\n"
    "  for t in k .. N step 4 {\n"
    "    j += i32(t)\n"
    "  }\n"
    "  if i < N {\n"
    "    store o[i] <- f32(j) + f32(load xb[i]) * load xf[i]\n"
    "  }\n"
    "}\n";

typedef struct { CakeCtx *ctx; Module *m; } Fix;

/* parses, resolves and verifies `text`; NULL module on an error */
static Fix *load_text(const char *path, const char *text, uint32_t len)
{
    Fix *f = calloc(1, sizeof *f);
    f->ctx = ctx_new();
    uint32_t file = ctx_add_file(f->ctx, path, text, len);
    f->m = fe_parse(f->ctx, file);
    if (!f->ctx->nerrors)
        fe_resolve(f->ctx, f->m);
    if (!f->ctx->nerrors)
        ver_verify(f->ctx, f->m);
    if (f->ctx->nerrors)
        diag_print_text(f->ctx, stderr, 0);
    assert_int_equal(f->ctx->nerrors, 0);
    return f;
}

static void done(Fix *f)
{
    ctx_free(f->ctx);
    free(f);
}

static char *printed(Fix *f, Kernel *k)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    ir_print_kernel(f->ctx, k, out);
    fclose(out);
    return buf;
}

static void legalize(Fix *f, Kernel *k)
{
    assert_int_equal(pass_bind_params(f->ctx, k, NULL), 0);
    assert_int_equal(pass_legalize(f->ctx, k, TG_SM90A), 0);
}

/* ---- the invariant, node by node ----------------------------------------- */

typedef struct { const Kernel *k; int bad; } Chk;

static const Type *ty(const Kernel *k, NodeId n) { return &k->types[k->nodes[n].type]; }
static int is_val(const Type *t) { return t->kind == TK_SCALAR || t->kind == TK_VECTOR; }

/* same dtype and lanes (both values), or nothing to say (a tile, a token) */
static int same(const Kernel *k, NodeId a, NodeId b)
{
    const Type *x = ty(k, a), *y = ty(k, b);
    if (!is_val(x) || !is_val(y))
        return 1;
    return x->dtype == y->dtype && x->lanes == y->lanes;
}

static void broke(Chk *c, NodeId n, const char *rule)
{
    const Node *x = &c->k->nodes[n];
    fprintf(stderr, "invariant broken at node %u (%s, type %s x%u): %s\n", n, ir_ops[x->op].name,
            ir_dtypes[c->k->types[x->type].dtype].spelling, c->k->types[x->type].lanes, rule);
    c->bad++;
}

static void expect(Chk *c, NodeId n, int ok, const char *rule)
{
    if (!ok)
        broke(c, n, rule);
}

static NodeId argn(const Kernel *k, NodeId n, uint32_t i) { return ir_list_at(k, &k->nodes[n], i); }

static void check_expr(Chk *c, NodeId e)
{
    const Kernel *k = c->k;
    const Node *n = &k->nodes[e];
    uint16_t fl = ir_ops[n->op].flags;
    if (n->op == OP_COLON || n->op == OP_SLICE || n->op == OP_FIELD || ir_ops[n->op].cls == OC_PIPE)
        return;
    expect(c, e, n->type != 0, "1: every expression has a type");
    if (!n->type)
        return;
    const Type *t = ty(k, e);
    char kind = ir_dtypes[t->dtype].kind;
    switch ((Op)n->op) {
    case OP_INT: expect(c, e, (kind == 'i' || kind == 'u') && n->dtype == t->dtype, "2: INT literal"); return;
    case OP_FLOAT: expect(c, e, kind == 'f' && n->dtype == t->dtype, "2: FLOAT literal"); return;
    case OP_NAME:
        if (n->decl && n->decl != e)
            expect(c, e, n->type == k->nodes[n->decl].type, "3: a name has its declaration's type");
        return;
    case OP_LOAD:
        expect(c, e, n->dtype == DT_NONE && t->dtype == ty(k, n->a)->dtype, "5: a load has no `as`");
        return;
    case OP_NEG: case OP_NOT: expect(c, e, same(k, e, n->a), "4: unary operand"); return;
    case OP_POW: expect(c, e, same(k, e, n->a), "4: x ^ e"); return;
    default: break;
    }
    if (ir_ops[n->op].cls == OC_BIN && (fl & OF_CMP))
        expect(c, e, same(k, n->a, n->b), "4: comparison operands in one type");
    else if (ir_ops[n->op].cls == OC_BIN)
        expect(c, e, same(k, e, n->a) && same(k, e, n->b), "4: operands in the node's type");
    if (ir_ops[n->op].cls != OC_BUILTIN || !is_val(t))
        return;
    switch ((Op)n->op) {
    case OP_DOT: case OP_HSUM: case OP_HMAX:
        for (uint32_t i = 0; i < n->n; i++)
            expect(c, e, ty(k, argn(k, e, i))->dtype == t->dtype, "4: dot/hsum/hmax lanes in the result's dtype");
        return;
    case OP_SHFL_XOR: case OP_SHFL_DOWN: case OP_SHFL_UP: case OP_SHFL_IDX:
        expect(c, e, same(k, e, argn(k, e, 0)) && ty(k, argn(k, e, 1))->dtype == DT_I32, "4: shfl");
        return;
    case OP_SELECT:
        expect(c, e, same(k, e, argn(k, e, 1)) && same(k, e, argn(k, e, 2)), "4: select values");
        return;
    default: break;
    }
    if ((fl & (OF_MATH | OF_WARP | OF_BLOCK)) || n->op == OP_CDIV)
        for (uint32_t i = 0; i < n->n; i++)
            expect(c, e, same(k, e, argn(k, e, i)), "4: builtin arguments in the node's type");
}

static void check_stmt(Chk *c, NodeId s)
{
    const Kernel *k = c->k;
    const Node *n = &k->nodes[s];
    switch ((Op)n->op) {
    case OP_LET: expect(c, s, same(k, s, n->b), "4: let initializer"); return;
    case OP_VAR: case OP_REG:
        if (n->b && ty(k, s)->kind != TK_TILE)
            expect(c, s, same(k, s, n->b), "4: var initializer");
        return;
    case OP_FOR:
        expect(c, s, same(k, s, n->a) && same(k, s, n->b) && (!n->c || same(k, s, n->c)), "4: loop bounds");
        return;
    case OP_ASSIGN: expect(c, s, same(k, n->a, n->b), "4: assigned value"); return;
    case OP_STORE:
        if (ty(k, n->a)->kind == TK_SCALAR)
            expect(c, s, same(k, n->a, n->b), "4: stored element");
        else if (ty(k, n->b)->kind == TK_VECTOR)
            expect(c, s, ty(k, n->b)->dtype == ty(k, n->a)->dtype &&
                   ty(k, n->b)->lanes == ty(k, n->a)->shape[0], "4: stored vector");
        return;
    case OP_BAR_SYNC: case OP_BAR_ARRIVE:
        expect(c, s, ty(k, n->a)->dtype == DT_I32 && (!n->b || ty(k, n->b)->dtype == DT_I32), "4: barrier");
        return;
    default: return;
    }
}

static void walk(Chk *c, NodeId id, int depth)
{
    const Kernel *k = c->k;
    if (!id || depth > 1000)
        return;
    const Node *n = &k->nodes[id];
    if (n->op == OP_REFERENCE)
        return;
    uint8_t cls = ir_ops[n->op].cls;
    if (cls == OC_STMT || cls == OC_DECL)
        check_stmt(c, id);
    else if (cls != OC_TYPE)
        check_expr(c, id);
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    int decl = cls == OC_DECL && n->op != OP_ROLE;   /* a declaration: only its initializer */
    for (int i = 0; i < 4; i++)
        if (!decl || (i == 1 && (n->op == OP_LET || n->op == OP_VAR || n->op == OP_REG)))
            walk(c, kids[i], depth + 1);
    if (cls != OC_TYPE)
        for (uint32_t i = 0; i < n->n; i++)
            walk(c, argn(k, id, i), depth + 1);
}

static int broken(const Kernel *k)
{
    Chk c = {k, 0};
    walk(&c, k->body, 0);
    return c.bad;
}

/* ---- tests ------------------------------------------------------------------ */

static void test_rewrite(void **state)
{
    (void)state;
    Fix *f = load_text("lg.tir", SRC, (uint32_t)strlen(SRC));
    Kernel *k = f->m->kernels[0];
    legalize(f, k);
    char *p = printed(f, k);
    const char *want[] = {
        "let sh = shfl.idx(s, i32(N - 1))",             /* a shuffle's lane is i32 */
        "if i64(i * 8 + 8) <= N {",                     /* i32 < i64: the i32 side widened */
        "let vf = f32x8(load xb[i * 8 : +8])",          /* `load .. as` is a cast of the load */
        "let a = hsum(f32x8(vb)) + dot(f32x8(vb), f32x8(vb)) + hmax(vf)", /* 16-bit: in f32 */
        "s * 21.0 + s * 32.0 + s * 22.0",                /* integer constants folded, then converted */
        "let c = vf * f32x8(2.0) + vf * f32x8(s)",       /* scalars broadcast by a cast */
        "for t in i64(k) .. N step 4 {",                 /* a loop and its bounds agree */
        "store o[i] <- f32(j) + f32(load xb[i]) * load xf[i]",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(p, want[i]))
            fail_msg("no `%s` in\n%s", want[i], p);
    assert_int_equal(broken(k), 0);
    free(p);
    done(f);
}

static void test_hsum_f32(void **state)
{
    (void)state;
    Fix *f = load_text("lg.tir", SRC, (uint32_t)strlen(SRC));
    Kernel *k = f->m->kernels[0];
    int seen = 0;
    for (NodeId n = 1; n < k->nnodes; n++)
        if (k->nodes[n].op == OP_HSUM || k->nodes[n].op == OP_DOT) {
            assert_int_equal(ty(k, n)->kind, TK_SCALAR);
            assert_int_equal(ty(k, n)->dtype, DT_F32);   /* over bf16x8 and f32x8 alike */
            seen++;
        }
    assert_int_equal(seen, 3);
    done(f);
}

static char *slurp(const char *path, uint32_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    *len = (uint32_t)fread(b, 1, (size_t)n, f);
    b[*len] = 0;
    fclose(f);
    return b;
}

static void test_examples(void **state)
{
    (void)state;
    const char *files[] = {
        "examples/vector_add.tir", "examples/copy.tir", "examples/rmsnorm.tir",
        "examples/softmax.tir", "examples/layernorm.tir", "examples/gemm_sm80.tir",
        "examples/gemm_sm90.tir", "examples/flash_attn_fwd.tir",
        "tests/codegen/cases/features.tir", "tests/codegen/cases/features_nv.tir",
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", CAKE_SOURCE_DIR, files[i]);
        uint32_t len;
        char *text = slurp(path, &len);
        Fix *f = load_text(path, text, len);
        for (uint32_t j = 0; j < f->m->nkernels; j++) {
            Kernel *k = f->m->kernels[j];
            legalize(f, k);
            if (broken(k))
                fail_msg("%s: kernel %s breaks the legalize invariant", files[i],
                         ir_symstr(f->ctx, k->name));
        }
        done(f);
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rewrite),
        cmocka_unit_test(test_hsum_f32),
        cmocka_unit_test(test_examples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
