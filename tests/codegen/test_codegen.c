/* test_codegen.c — unit tests of the code generator (cmocka) on small kernels
 * parsed, verified and run through the passes as cakec does: launch dims (with
 * `sm.count` in the grid), PTX and code object emission, the kernel ABI
 * (parameter list), E0902 for an op outside the SIMT subset, the types codegen
 * emits (it reads Node.type: hsum over bf16 lanes accumulates in f32; i32 + u32
 * is a verifier error, not a codegen rule), and the internal error when the
 * legalize invariant is missing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "cg_int.h"
#include "fe.h"
#include "verify.h"
#include "passes.h"

/* `scale`: x[i] *= s over a 1-D tensor, T threads per block */
static const char *SCALE =
    "kernel scale<T = 64>\n"
    "  target sm_90a, gfx942\n"
    "  arg x: global f32[N]\n"
    "  arg s: f32\n"
    "  grid [cdiv(N, T)]\n"
    "  threads T\n"
    "{\n"
    "  let i = block.x * T + thread.x\n"
    "  store x[i] <- (load x[i] mask i < N) * s mask i < N\n"
    "%s"
    "}\n";

typedef struct {
    CakeCtx *ctx;
    Module *m;
    Kernel *k;
    char *src;
} Fixture;

/* parses and verifies SCALE with `extra` statements, then runs the passes unless raw */
static Fixture *build_with(const char *extra, int raw)
{
    Fixture *f = calloc(1, sizeof *f);
    f->ctx = ctx_new();
    size_t n = strlen(SCALE) + strlen(extra) + 1;
    f->src = malloc(n);
    snprintf(f->src, n, SCALE, extra);
    uint32_t file = ctx_add_file(f->ctx, "scale.tir", f->src, (uint32_t)strlen(f->src));
    f->m = fe_parse(f->ctx, file);
    fe_resolve(f->ctx, f->m);
    ver_verify(f->ctx, f->m);
    assert_int_equal(f->ctx->nerrors, 0);
    f->k = f->m->kernels[0];
    if (!raw)
        pass_run_all(f->ctx, f->m, NULL, TG_SM90A, NULL);
    return f;
}

static Fixture *build(const char *extra)
{
    return build_with(extra, 0);
}

static void destroy(Fixture *f)
{
    ctx_free(f->ctx);
    free(f->src);
    free(f);
}

/* i32 + u32: the language rejects mixing signedness of one width (tir.md 3.5);
 * the verifier reports it, so code generation never sees it */
static void test_mixed_signedness(void **state)
{
    (void)state;
    static const char *src =
        "kernel mix\n  target sm_90a\n  arg o: global i32[N]\n  arg a: i32\n  arg b: u32\n"
        "  grid [1]\n  threads 32\n{\n  store o[thread.x] <- a + b mask thread.x < N\n}\n";
    CakeCtx *ctx = ctx_new();
    Module *m = fe_parse(ctx, ctx_add_file(ctx, "mix.tir", src, (uint32_t)strlen(src)));
    fe_resolve(ctx, m);
    assert_int_equal(ver_verify(ctx, m), 1);
    assert_int_equal(ctx->diags[0].code, E0302);
    ctx_free(ctx);
}

static void test_launch(void **state)
{
    (void)state;
    Fixture *f = build("");
    int64_t dims[1] = {1000};
    CgLaunch l;
    assert_int_equal(cg_launch_dims(f->ctx, f->k, TG_SM90A, dims, 0, &l), 0);
    assert_int_equal(l.grid[0], 16);
    assert_int_equal(l.grid[1], 1);
    assert_int_equal(l.block[0], 64);
    assert_int_equal(l.dyn_shared_bytes, 0);
    assert_int_equal(cg_block_threads(f->ctx, f->k, TG_GFX942), 64);
    destroy(f);
}

/* `grid [min(sm.count, cdiv(N, T))]`: sm.count is the launch's SM count, 132
 * (TG_DEFAULT_SM_COUNT) when no device is known; grid.x reads it back */
static void test_launch_sm_count(void **state)
{
    (void)state;
    static const char *src =
        "kernel persist<T = 64>\n  target sm_90a, gfx942\n  arg x: global f32[N]\n"
        "  grid [min(sm.count, cdiv(N, T))]\n  threads T\n{\n"
        "  for b in block.x .. cdiv(N, T) step grid.x {\n"
        "    let i = b * T + thread.x\n    store x[i] <- 1.0 mask i < N\n  }\n}\n";
    CakeCtx *ctx = ctx_new();
    Module *m = fe_parse(ctx, ctx_add_file(ctx, "persist.tir", src, (uint32_t)strlen(src)));
    fe_resolve(ctx, m);
    assert_int_equal(ver_verify(ctx, m), 0);
    Kernel *k = m->kernels[0];
    assert_int_equal(pass_run_all(ctx, m, NULL, TG_SM90A, NULL), 0);
    CgLaunch l;
    int64_t big[1] = {1 << 20}, small[1] = {100};
    assert_int_equal(cg_launch_dims(ctx, k, TG_SM90A, big, 0, &l), 0);
    assert_int_equal(l.grid[0], TG_DEFAULT_SM_COUNT);
    assert_int_equal(cg_launch_dims(ctx, k, TG_SM90A, big, 8, &l), 0);
    assert_int_equal(l.grid[0], 8);
    assert_int_equal(cg_launch_dims(ctx, k, TG_SM90A, small, 8, &l), 0);
    assert_int_equal(l.grid[0], 2);
    assert_int_equal(l.grid[1], 1);
    char *ptx = NULL;
    size_t len = 0;
    assert_int_equal(cg_emit(ctx, m, NULL, TG_SM90A, CG_EMIT_PTX, NULL, &ptx, &len), 0);
    assert_non_null(strstr(ptx, "%nctaid.x"));
    free(ptx);
    ctx_free(ctx);
}

static char *emit(Fixture *f, Target tg, CgEmit what, int *rc, size_t *len)
{
    char *out = NULL;
    *rc = cg_emit(f->ctx, f->m, NULL, tg, what, NULL, &out, len);
    return out;
}

static void test_ptx(void **state)
{
    (void)state;
    Fixture *f = build("");
    int rc;
    size_t len;
    char *ptx = emit(f, TG_SM90A, CG_EMIT_PTX, &rc, &len);
    assert_int_equal(rc, 0);
    assert_non_null(ptx);
    assert_non_null(strstr(ptx, ".target sm_90a"));
    assert_non_null(strstr(ptx, ".entry scale("));
    assert_non_null(strstr(ptx, ".reqntid 64, 1, 1"));
    /* ABI: x (pointer), s (f32 by value), N (i32) */
    assert_non_null(strstr(ptx, ".param .u64 scale_param_0"));
    assert_non_null(strstr(ptx, ".param .f32 scale_param_1"));
    assert_non_null(strstr(ptx, ".param .u32 scale_param_2"));
    free(ptx);
    destroy(f);
}

static void test_llvm_and_hsaco(void **state)
{
    (void)state;
    Fixture *f = build("");
    int rc;
    size_t len;
    char *ll = emit(f, TG_GFX942, CG_EMIT_LLVM, &rc, &len);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(ll, "amdgpu_kernel void @scale("));
    assert_non_null(strstr(ll, "\"amdgpu-flat-work-group-size\"=\"64,64\""));
    free(ll);
    char *obj = emit(f, TG_GFX942, CG_EMIT_OBJ, &rc, &len);
    assert_int_equal(rc, 0);
    assert_true(len > 4 && memcmp(obj, "\177ELF", 4) == 0);
    free(obj);
    char *co = emit(f, TG_GFX942, CG_EMIT_HSACO, &rc, &len);
    if (rc == 3) { /* no ld.lld here */
        free(co);
        destroy(f);
        skip();
    }
    assert_int_equal(rc, 0);
    assert_true(len > 4 && memcmp(co, "\177ELF", 4) == 0);
    free(co);
    destroy(f);
}

static void test_unsupported(void **state)
{
    (void)state;
    Fixture *f = build("  reg t: f32[4, 4] = 0\n  let r = rowsum(t)\n");   /* listed by simt-subset */
    assert_int_equal(f->ctx->nerrors, 1);
    assert_int_equal(f->ctx->diags[0].code, E0902);
    int rc;
    size_t len;
    char *out = emit(f, TG_SM90A, CG_EMIT_PTX, &rc, &len);
    assert_int_equal(rc, 1);   /* and codegen refuses it too (once: NF_ERROR) */
    assert_null(out);
    assert_int_equal(f->ctx->ndiags, 1);
    destroy(f);
}

/* hsum over bf16 lanes is f32 (tir.md 3.2): legalize widens the lanes, codegen adds
 * in f32 and never rounds a partial sum to bf16 */
static void test_hsum_bf16(void **state)
{
    (void)state;
    static const char *src =
        "kernel hs\n  target sm_90a\n  arg x: global bf16[N] align 16\n  arg o: global f32[N]\n"
        "  grid [1]\n  threads 32\n  assume N % 8 == 0\n{\n  let i = thread.x * 8\n"
        "  if i + 8 <= N {\n    store o[thread.x] <- hsum(load x[i : +8])\n  }\n}\n";
    CakeCtx *ctx = ctx_new();
    Module *m = fe_parse(ctx, ctx_add_file(ctx, "hs.tir", src, (uint32_t)strlen(src)));
    fe_resolve(ctx, m);
    assert_int_equal(ver_verify(ctx, m), 0);
    assert_int_equal(pass_run_all(ctx, m, NULL, TG_SM90A, NULL), 0);
    CgOptions o = {.opt_level = 3, .llvm_before_passes = 1};
    char *ll = NULL;
    size_t len;
    assert_int_equal(cg_emit(ctx, m, NULL, TG_SM90A, CG_EMIT_LLVM, &o, &ll, &len), 0);
    assert_non_null(strstr(ll, "fpext <8 x bfloat>"));
    assert_non_null(strstr(ll, "fadd contract float"));
    assert_null(strstr(ll, "fptrunc"));
    free(ll);
    ctx_free(ctx);
}

/* codegen reads Node.type and converts only at casts: a kernel that skipped
 * legalize (bf16 * f32 with no cast) is an internal error, not silent code */
static void test_needs_legalize(void **state)
{
    (void)state;
    Fixture *f = build_with("  let h = load x[0] mask N > 0\n  let b = bf16(h) * h\n", 1);
    pass_bind_params(f->ctx, f->k, NULL);   /* but no legalize */
    pass_abi(f->ctx, f->k, TG_SM90A, 0);    /* (the launch plan codegen reads) */
    int rc;
    size_t len;
    char *out = emit(f, TG_SM90A, CG_EMIT_PTX, &rc, &len);
    assert_int_equal(rc, 2);
    assert_null(out);
    assert_non_null(strstr(f->ctx->bug_msg, "legalize"));
    destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mixed_signedness),
        cmocka_unit_test(test_launch),
        cmocka_unit_test(test_launch_sm_count),
        cmocka_unit_test(test_ptx),
        cmocka_unit_test(test_llvm_and_hsaco),
        cmocka_unit_test(test_unsupported),
        cmocka_unit_test(test_hsum_bf16),
        cmocka_unit_test(test_needs_legalize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
