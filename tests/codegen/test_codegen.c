/* test_codegen.c — unit tests of the code generator's helpers (cmocka), on
 * kernels built by hand (no parser): type unification, compile-time
 * evaluation and launch dims, PTX and code object emission, E0902 for an op
 * outside the SIMT subset, and the kernel ABI (parameter list). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "cg_int.h"

/* kernel scale<T = 64> threads T, arg x: global f32[N], arg s: f32, grid [cdiv(N, T)]
 *   { let i = block.x * T + thread.x ; store x[i] <- load x[i] * s mask i < N } */
typedef struct {
    CakeCtx *ctx;
    Module m;
    Kernel *k;
    Kernel *karr[1];
} Fixture;

static NodeId node(Fixture *f, Op op)
{
    return ir_node(f->ctx, f->k, op, IR_NOSPAN);
}

static NodeId name_of(Fixture *f, NodeId decl)
{
    NodeId n = node(f, OP_NAME);
    ir_get(f->k, n)->decl = decl;
    ir_get(f->k, n)->name = ir_get(f->k, decl)->name;
    return n;
}

static NodeId bin(Fixture *f, Op op, NodeId a, NodeId b)
{
    NodeId n = node(f, op);
    ir_get(f->k, n)->a = a;
    ir_get(f->k, n)->b = b;
    return n;
}

static NodeId lit(Fixture *f, int64_t v)
{
    NodeId n = node(f, OP_INT);
    ir_get(f->k, n)->v.i = v;
    return n;
}

static NodeId special(Fixture *f, SpecialReg r)
{
    NodeId n = node(f, OP_SPECIAL);
    ir_get(f->k, n)->sub = (uint16_t)r;
    return n;
}

static NodeId index1(Fixture *f, NodeId base, NodeId ix)
{
    NodeId n = node(f, OP_INDEX);
    ir_get(f->k, n)->a = base;
    ir_get(f->k, n)->list = ir_list(f->ctx, f->k, &ix, 1);
    ir_get(f->k, n)->n = 1;
    return n;
}

static Fixture *build(Op extra_stmt)
{
    Fixture *f = calloc(1, sizeof *f);
    f->ctx = ctx_new();
    CakeCtx *ctx = f->ctx;
    f->k = ir_kernel_new(ctx);
    Kernel *k = f->k;
    k->name = ir_intern_cstr(ctx, "scale");
    NodeId T = node(f, OP_PARAM);
    ir_get(k, T)->name = ir_intern_cstr(ctx, "T");
    NodeId t64 = lit(f, 64);
    ir_get(k, T)->a = t64;
    ir_push_node_list(ctx, &k->params, &k->nparams, T);
    NodeId N = node(f, OP_DIM);
    ir_get(k, N)->name = ir_intern_cstr(ctx, "N");
    ir_push_node_list(ctx, &k->dims, &k->ndims, N);
    NodeId gt = node(f, OP_GTYPE);
    NodeId ndim = name_of(f, N);
    ir_get(k, gt)->dtype = DT_F32;
    ir_get(k, gt)->lanes = 1;
    ir_get(k, gt)->list = ir_list(ctx, k, &ndim, 1);
    ir_get(k, gt)->n = 1;
    ir_get(k, gt)->sub = 1;
    NodeId x = node(f, OP_ARG);
    ir_get(k, x)->name = ir_intern_cstr(ctx, "x");
    ir_get(k, x)->a = gt;
    ir_push_node_list(ctx, &k->args, &k->nargs, x);
    NodeId st = node(f, OP_TYPE);
    ir_get(k, st)->dtype = DT_F32;
    ir_get(k, st)->lanes = 1;
    NodeId s = node(f, OP_ARG);
    ir_get(k, s)->name = ir_intern_cstr(ctx, "s");
    ir_get(k, s)->a = st;
    ir_push_node_list(ctx, &k->args, &k->nargs, s);
    NodeId cd = node(f, OP_CDIV);
    NodeId cargs[2] = {name_of(f, N), name_of(f, T)};
    ir_get(k, cd)->list = ir_list(ctx, k, cargs, 2);
    ir_get(k, cd)->n = 2;
    k->grid[0] = cd;
    k->ngrid = 1;
    k->block_size = name_of(f, T);
    k->block_unit = UNIT_THREADS;
    k->targets[TG_SM90A] = k->targets[TG_GFX942] = 1;
    k->ntargets = 2;

    NodeId let = node(f, OP_LET);
    ir_get(k, let)->name = ir_intern_cstr(ctx, "i");
    NodeId e = bin(f, OP_ADD, bin(f, OP_MUL, special(f, SR_BLOCK_X), name_of(f, T)), special(f, SR_THREAD_X));
    ir_get(k, let)->b = e;
    NodeId ld = node(f, OP_LOAD);
    NodeId ref1 = index1(f, name_of(f, x), name_of(f, let));
    ir_get(k, ld)->a = ref1;
    NodeId val = bin(f, OP_MUL, ld, name_of(f, s));
    NodeId store = node(f, OP_STORE);
    NodeId ref2 = index1(f, name_of(f, x), name_of(f, let));
    NodeId mask = bin(f, OP_LT, name_of(f, let), name_of(f, N));
    ir_get(k, store)->a = ref2;
    ir_get(k, store)->b = val;
    ir_get(k, store)->c = mask;
    NodeId stmts[3] = {let, store, 0};
    uint32_t ns = 2;
    if (extra_stmt != OP_NONE)
        stmts[ns++] = node(f, extra_stmt);
    NodeId body = node(f, OP_BLOCK);
    ir_get(k, body)->list = ir_list(ctx, k, stmts, ns);
    ir_get(k, body)->n = ns;
    k->body = body;
    f->karr[0] = k;
    f->m.kernels = f->karr;
    f->m.nkernels = 1;
    return f;
}

static void destroy(Fixture *f)
{
    ctx_free(f->ctx);
    free(f);
}

static void test_unify(void **state)
{
    (void)state;
    CgTy i32 = cg_scalar(DT_I32), f32 = cg_scalar(DT_F32), bf16 = cg_scalar(DT_BF16);
    CgTy weak_int = {DT_I32, 1, 1}, weak_float = {DT_F32, 1, 1}, f32x8 = {DT_F32, 8, 0};
    assert_int_equal(cg_unify(i32, f32).dt, DT_F32);
    assert_int_equal(cg_unify(bf16, f32).dt, DT_F32);
    assert_int_equal(cg_unify(bf16, cg_scalar(DT_F16)).dt, DT_F32);
    assert_int_equal(cg_unify(weak_int, bf16).dt, DT_BF16);
    assert_int_equal(cg_unify(weak_float, i32).dt, DT_F32);
    assert_int_equal(cg_unify(i32, cg_scalar(DT_U32)).dt, DT_U32);
    assert_int_equal(cg_unify(i32, cg_scalar(DT_I64)).dt, DT_I64);
    assert_int_equal(cg_unify(f32x8, f32).lanes, 8);
    assert_int_equal(cg_unify(weak_int, weak_int).weak, 1);
    assert_int_equal(cg_unify(weak_int, i32).weak, 0);
}

static void test_launch(void **state)
{
    (void)state;
    Fixture *f = build(OP_NONE);
    int64_t dims[1] = {1000};
    CgLaunch l;
    assert_int_equal(cg_launch_dims(f->ctx, f->k, TG_SM90A, dims, &l), 0);
    assert_int_equal(l.grid[0], 16);
    assert_int_equal(l.grid[1], 1);
    assert_int_equal(l.block[0], 64);
    assert_int_equal(l.dyn_shared_bytes, 0);
    assert_int_equal(cg_block_threads(f->ctx, f->k, TG_GFX942), 64);
    destroy(f);
}

static char *emit(Fixture *f, Target tg, CgEmit what, int *rc, size_t *len)
{
    char *out = NULL;
    *rc = cg_emit(f->ctx, &f->m, NULL, tg, what, NULL, &out, len);
    return out;
}

static void test_ptx(void **state)
{
    (void)state;
    Fixture *f = build(OP_NONE);
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
    Fixture *f = build(OP_NONE);
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
    Fixture *f = build(OP_WGMMA_WAIT);
    int rc;
    size_t len;
    char *out = emit(f, TG_SM90A, CG_EMIT_PTX, &rc, &len);
    assert_int_equal(rc, 1);
    assert_null(out);
    assert_int_equal(f->ctx->ndiags, 1);
    assert_int_equal(f->ctx->diags[0].code, E0902);
    destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unify),
        cmocka_unit_test(test_launch),
        cmocka_unit_test(test_ptx),
        cmocka_unit_test(test_llvm_and_hsaco),
        cmocka_unit_test(test_unsupported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
