/* test_instance.c — kernel instances (lib/cake.h, cake_instance): the cache
 * gives the same instance for the same (source, kernel, target, bindings) and
 * another for other bindings or another target; building instances never
 * changes the verified module; an instance is typed at its own bindings, and
 * a binding `check` did not cover is verified once, with a "with --set" note. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "cake.h"
#include "verify.h"

#define EX(name) CAKE_SOURCE_DIR "/examples/" name ".tir"

static Module *verified(CakeCtx *ctx, const char *path)
{
    Module *m = NULL;
    assert_int_equal(cake_verify_file(ctx, path, NULL, &m), 0);
    assert_non_null(m);
    return m;
}

static const CakeInstance *inst(CakeCtx *ctx, Module *m, const char *kernel, Target tg,
                                const char *set, CakeInstStage stage)
{
    const CakeInstance *i = NULL;
    int rc = cake_instance(ctx, m, kernel, tg, set, stage, &i);
    if (rc)
        diag_print_text(ctx, stderr, 0);
    assert_int_equal(rc, 0);
    assert_non_null(i);
    assert_true(i->stage >= stage);
    return i;
}

/* the module as TIR text, and its kernels' node and type arrays, to compare */
static char *snapshot(CakeCtx *ctx, const Module *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ir_print_module(ctx, m, f);
    for (uint32_t i = 0; i < m->nkernels; i++) {
        const Kernel *k = m->kernels[i];
        fwrite(k->nodes, sizeof *k->nodes, k->nnodes, f);
        fwrite(k->lists, sizeof *k->lists, k->nlists, f);
        fwrite(k->types, sizeof *k->types, k->ntypes, f);
        fprintf(f, "%u %u %u %u %p %u\n", k->nnodes, k->nlists, k->ntypes, k->level,
                (void *)k->plan, k->types_bound);
    }
    fclose(f);
    return buf;
}

static void test_cache_key(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Module *m = verified(ctx, EX("gemm_sm90"));
    const CakeInstance *a = inst(ctx, m, NULL, TG_SM90A, NULL, CAKE_INST_LOWERED);
    assert_int_equal(cake_instance_count(ctx), 1);
    assert_ptr_equal(inst(ctx, m, NULL, TG_SM90A, NULL, CAKE_INST_LOWERED), a);
    assert_ptr_equal(inst(ctx, m, "gemm_sm90", TG_SM90A, "BN=256", CAKE_INST_BOUND), a); /* the default */
    assert_ptr_equal(inst(ctx, m, NULL, TG_SM90A, "", CAKE_INST_LOWERED), a);
    assert_int_equal(cake_instance_count(ctx), 1);
    assert_non_null(a->k->plan);
    assert_int_equal(a->k->level, IR_LEVEL_LOWERED);

    const CakeInstance *b = inst(ctx, m, NULL, TG_SM90A, "BN=128,STAGES=3", CAKE_INST_LOWERED);
    assert_ptr_not_equal(b, a);
    assert_int_not_equal(b->key, a->key);
    assert_ptr_equal(inst(ctx, m, NULL, TG_SM90A, "STAGES=3,BN=128", CAKE_INST_LOWERED), b);
    assert_ptr_not_equal(inst(ctx, m, NULL, TG_SM90A, "BN=128", CAKE_INST_LOWERED), b);
    assert_int_equal(cake_instance_count(ctx), 3);
    assert_ptr_not_equal(a->k, m->kernels[0]);
    assert_ptr_equal(a->source, m->kernels[0]);

    /* the same source text parsed again in the same context: the same instance */
    Module *m2 = verified(ctx, EX("gemm_sm90"));
    assert_ptr_equal(inst(ctx, m2, NULL, TG_SM90A, "BN=128,STAGES=3", CAKE_INST_BOUND), b);
    assert_int_equal(cake_instance_count(ctx), 3);
    ctx_free(ctx);
}

static void test_targets_and_stages(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Module *m = verified(ctx, EX("copy"));
    const CakeInstance *b = inst(ctx, m, NULL, TG_SM90A, NULL, CAKE_INST_BOUND);
    assert_null(b->image);
    assert_null(b->k->plan);
    const CakeInstance *c = inst(ctx, m, NULL, TG_SM90A, NULL, CAKE_INST_COMPILED);
    assert_ptr_equal(c, b);   /* advanced, not built again */
    assert_non_null(c->image);
    assert_non_null(strstr(c->image, ".entry copy"));
    assert_non_null(strstr(c->image, ".target sm_90a"));
    const CakeInstance *s80 = inst(ctx, m, NULL, TG_SM80, NULL, CAKE_INST_COMPILED);
    assert_ptr_not_equal(s80, c);
    assert_non_null(strstr(s80->image, ".target sm_80"));
    /* the ABI order of the plan: the args (tensors, then the scalar), the dim */
    const KPlan *p = c->k->plan;
    assert_int_equal(p->nparams, c->k->nargs + c->k->ndims);
    assert_int_equal(p->params[p->nparams - 1].kind, KP_DIM);
    assert_int_equal(p->params[0].kind, KP_TENSOR);
    assert_int_equal(p->params[0].index, 0);
    assert_int_equal(p->params[1].index, 1);

    /* a kernel the file does not have, a target the kernel does not list */
    const CakeInstance *none = (const CakeInstance *)1;
    assert_int_equal(cake_instance(ctx, m, "nope", TG_SM90A, NULL, CAKE_INST_BOUND, &none), 1);
    assert_null(none);
    assert_int_equal(ctx->diags[ctx->ndiags - 1].code, E0970);
    ctx_free(ctx);
    ctx = ctx_new();
    Module *g = verified(ctx, EX("gemm_sm90"));
    assert_int_equal(cake_instance(ctx, g, "gemm_sm90", TG_SM80, NULL, CAKE_INST_BOUND, &none), 1);
    assert_int_equal(ctx->diags[ctx->ndiags - 1].code, E0970);
    ctx_free(ctx);
}

/* building instances leaves the verified module as `check` left it */
static void test_module_untouched(void **state)
{
    (void)state;
    const char *files[] = {EX("gemm_sm90"), EX("flash_attn_fwd"), EX("rmsnorm"), EX("softmax"),
                           EX("gemm_sm80")};
    const char *sets[] = {"BN=128", "CAUSAL=1", "THREADS=64,ITERS=2", "ITERS=4", "STAGES=3"};
    for (int f = 0; f < 5; f++) {
        CakeCtx *ctx = ctx_new();
        Module *m = verified(ctx, files[f]);
        char *before = snapshot(ctx, m);
        Target tg = tg_first(m->kernels[0]);
        inst(ctx, m, NULL, tg, NULL, CAKE_INST_COMPILED);
        inst(ctx, m, NULL, tg, sets[f], CAKE_INST_COMPILED);
        char *after = snapshot(ctx, m);
        assert_string_equal(before, after);
        free(before);
        free(after);
        ctx_free(ctx);
    }
}

/* an instance's types are its own bindings'; the module keeps the defaults' */
static void test_typed_at_bindings(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Module *m = verified(ctx, EX("rmsnorm"));
    const CakeInstance *i8 = inst(ctx, m, NULL, TG_SM90A, "ITERS=8", CAKE_INST_BOUND);
    int seen = 0;
    for (NodeId n = 1; n < i8->k->nnodes; n++)
        if (i8->k->nodes[n].op == OP_REG) {   /* reg xs: f32x8[ITERS] */
            assert_int_equal(ver_type(i8->k, n)->shape[0], 8);
            assert_int_equal(ver_type(m->kernels[0], n)->shape[0], 4);
            seen = 1;
        }
    assert_true(seen);
    /* lowered and compiled at ITERS=8 too */
    assert_non_null(inst(ctx, m, NULL, TG_SM90A, "ITERS=8", CAKE_INST_COMPILED)->image);
    ctx_free(ctx);

    /* `check --set ITERS=8` leaves the module typed at ITERS=8: the instance at
       the defaults is typed again at its own values */
    ctx = ctx_new();
    m = NULL;
    assert_int_equal(cake_check_file(ctx, EX("rmsnorm"), NULL, "ITERS=8", NULL, &m), 0);
    assert_true(m->kernels[0]->types_bound);
    const CakeInstance *d = inst(ctx, m, NULL, TG_SM90A, NULL, CAKE_INST_BOUND);
    for (NodeId n = 1; n < d->k->nnodes; n++)
        if (d->k->nodes[n].op == OP_REG) {
            assert_int_equal(ver_type(m->kernels[0], n)->shape[0], 8);
            assert_int_equal(ver_type(d->k, n)->shape[0], 4);
        }
    ctx_free(ctx);
}

/* a binding `check` did not verify is verified once, noted "with --set" */
static void test_unchecked_binding(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Module *m = verified(ctx, EX("rmsnorm"));
    const CakeInstance *i = NULL;
    assert_int_equal(cake_instance(ctx, m, NULL, TG_SM90A, "VEC=4", CAKE_INST_LOWERED, &i), 1);
    assert_null(i);
    assert_true(ctx->ndiags > 0);
    const Diag *d = &ctx->diags[0];
    assert_int_equal(d->code, E0312);   /* `as f32x8` of a 4-element slice */
    int noted = 0;
    for (uint32_t j = 0; j < d->nnotes; j++)
        noted |= strstr(d->notes[j].msg, "with --set VEC=4") != NULL;
    assert_true(noted);
    assert_int_equal(cake_instance_count(ctx), 0);   /* a failed instance is not cached */
    ctx_free(ctx);

    /* declared values `check` covered are only typed; others are verified */
    ctx = ctx_new();
    m = verified(ctx, EX("flash_attn_fwd"));
    Kernel *k = m->kernels[0];
    CeBinding causal = {ir_intern_cstr(ctx, "CAUSAL"), 1}, bn = {ir_intern_cstr(ctx, "BN"), 64};
    CeEnv e1 = {.b = &causal, .n = 1}, e2 = {.b = &bn, .n = 1};
    assert_true(ver_binding_checked(ctx, k, &e1));
    assert_false(ver_binding_checked(ctx, k, &e2));
    assert_true(ver_binding_checked(ctx, k, NULL));
    uint32_t nd = ctx->ndiags;
    inst(ctx, m, NULL, TG_SM90A, "CAUSAL=1", CAKE_INST_LOWERED);
    inst(ctx, m, NULL, TG_SM90A, "BN=64", CAKE_INST_LOWERED);
    assert_int_equal(ctx->ndiags, nd);
    ctx_free(ctx);
}

/* the CakeKernel entry points are instances underneath */
static void test_compile_module(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Module *m = verified(ctx, EX("vector_add"));
    CakeKernel a, b;
    assert_int_equal(cake_compile_module(ctx, m, NULL, TG_SM90A, "UNROLL=2", &a), 0);
    assert_int_equal(cake_compile_module(ctx, m, NULL, TG_SM90A, "UNROLL=2", &b), 0);
    assert_int_equal(cake_instance_count(ctx), 1);
    assert_ptr_equal(a.k, b.k);
    assert_ptr_equal(a.m, m);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.image, b.image, a.len);
    assert_ptr_not_equal(a.image, b.image);   /* each CakeKernel owns its copy */
    cake_unload(&a);
    cake_unload(&b);
    Kernel *k = NULL;
    assert_int_equal(cake_find_kernel(ctx, m, "vector_add", TG__COUNT, &k), 0);
    assert_ptr_equal(k, m->kernels[0]);
    assert_int_equal(cake_find_kernel(ctx, m, NULL, TG_GFX942, &k), 0);
    assert_int_equal(cake_find_kernel(ctx, m, "nope", TG__COUNT, &k), 1);
    assert_null(k);
    ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_key),
        cmocka_unit_test(test_targets_and_stages),
        cmocka_unit_test(test_module_untouched),
        cmocka_unit_test(test_typed_at_bindings),
        cmocka_unit_test(test_unchecked_binding),
        cmocka_unit_test(test_compile_module),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
