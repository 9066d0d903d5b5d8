/* test_protect.c — libcake's entry points are protected (lib/protect.h): a
 * compiler bug below them returns 2 with diagnostic E0005 and ctx->bug_msg,
 * in this process, again and again, and the library keeps working after it.
 * CAKE_TEST_BUG in the environment makes the pipeline fail an invariant
 * (lib/source.c). Also: compiling loads the code generator plugin in process
 * (CAKE_LLVM_PLUGIN, set by ctest), and a missing plugin is E0974, code 3. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "cake.h"

#define COPY CAKE_SOURCE_DIR "/examples/copy.tir"

static const Diag *find_diag(const CakeCtx *ctx, DiagCode code)
{
    for (uint32_t i = 0; i < ctx->ndiags; i++)
        if (ctx->diags[i].code == code)
            return &ctx->diags[i];
    return NULL;
}

/* the bug came back as 2, E0005 and bug_msg, and the caller's guard is back */
static void assert_bug_caught(CakeCtx *ctx, int rc, jmp_buf *outer)
{
    assert_int_equal(rc, 2);
    assert_non_null(ctx->bug_msg);
    assert_non_null(strstr(ctx->bug_msg, "CAKE_TEST_BUG"));
    const Diag *d = find_diag(ctx, E0005);
    assert_non_null(d);
    assert_non_null(strstr(d->msg, "internal error"));
    assert_non_null(strstr(d->msg, ctx->bug_msg));
    assert_ptr_equal(ctx->bug_jmp, outer);
}

static int set_test_bug(void **state)
{
    (void)state;
    return setenv("CAKE_TEST_BUG", "1", 1);
}

static int clear_test_bug(void **state)
{
    (void)state;
    return unsetenv("CAKE_TEST_BUG");
}

static void test_verify_file_bug(void **state)
{
    (void)state;
    for (int i = 0; i < 50; i++) {
        CakeCtx *ctx = ctx_new();
        Module *m = (Module *)1;
        assert_bug_caught(ctx, cake_verify_file(ctx, COPY, NULL, &m), NULL);
        assert_null(m);
        ctx_free(ctx);
    }
}

static void test_compile_file_bug(void **state)
{
    (void)state;
    for (int i = 0; i < 20; i++) {
        CakeCtx *ctx = ctx_new();
        CakeKernel ck;
        assert_bug_caught(ctx, cake_compile_file(ctx, COPY, NULL, TG_SM80, NULL, &ck), NULL);
        assert_null(ck.image);
        assert_null(ck.k);
        ctx_free(ctx);
    }
}

/* a caller that guards its own code keeps its guard: the entry point
 * catches, and restores bug_jmp to the caller's */
static void test_nested_guard(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    jmp_buf outer;
    ctx->bug_jmp = &outer;
    static const char src[] = "kernel k(x: f32[N]) threads 32 grid [1] {}\n";
    uint32_t file = ctx_add_file(ctx, "k.tir", src, (uint32_t)strlen(src));
    Module *m;
    assert_bug_caught(ctx, cake_verify_source(ctx, file, NULL, &m), &outer);
    ctx->bug_jmp = NULL;
    ctx_free(ctx);
}

static void test_json_says_bug(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    Module *m;
    assert_int_equal(cake_verify_file(ctx, COPY, NULL, &m), 2);
    char *json = cake_diags_json(ctx, "check", 0);
    assert_non_null(strstr(json, "\"code\":\"E0005\""));
    free(json);
    ctx_free(ctx);
}

/* after the bugs, the same process verifies and compiles as usual */
static void test_works_after_bugs(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++) {
        CakeCtx *ctx = ctx_new();
        CakeKernel ck;
        int rc = cake_compile_file(ctx, COPY, NULL, TG_SM80, NULL, &ck);
        if (rc)
            diag_print_text(ctx, stderr, 0);
        assert_int_equal(rc, 0);
        assert_null(ctx->bug_msg);
        assert_non_null(ck.image);
        assert_non_null(strstr(ck.image, ".entry copy"));
        free(ck.image);
        ctx_free(ctx);
    }
}

static void test_missing_plugin(void **state)
{
    (void)state;
    const char *saved = getenv("CAKE_LLVM_PLUGIN");
    char *keep = saved ? strdup(saved) : NULL;
    setenv("CAKE_LLVM_PLUGIN", "/nonexistent/libcake-llvm.so", 1);
    CakeCtx *ctx = ctx_new();
    CakeKernel ck;
    assert_int_equal(cake_compile_file(ctx, COPY, NULL, TG_SM80, NULL, &ck), 3);
    const Diag *d = find_diag(ctx, E0974);
    assert_non_null(d);
    assert_non_null(strstr(d->msg, "/nonexistent/libcake-llvm.so"));
    ctx_free(ctx);
    if (keep)
        setenv("CAKE_LLVM_PLUGIN", keep, 1);
    else
        unsetenv("CAKE_LLVM_PLUGIN");
    free(keep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_verify_file_bug, set_test_bug, clear_test_bug),
        cmocka_unit_test_setup_teardown(test_compile_file_bug, set_test_bug, clear_test_bug),
        cmocka_unit_test_setup_teardown(test_nested_guard, set_test_bug, clear_test_bug),
        cmocka_unit_test_setup_teardown(test_json_says_bug, set_test_bug, clear_test_bug),
        cmocka_unit_test(test_works_after_bugs),
        cmocka_unit_test(test_missing_plugin),
    };
    return cmocka_run_group_tests_name("protect", tests, NULL, NULL);
}
