/* test_cli.c — the cakec command line (DESIGN.md "CLI"): --help, --version,
 * bad usage, unreadable files, exit codes, the text rendering of a
 * diagnostic (location, source line, caret, note, help), and the internal-error
 * path (exit 2) through the driver's test hook. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/stat.h>
#include "run.h"
#include "ir.h" /* CAKE_VERSION */

static void test_help(void **state)
{
    (void)state;
    const char *forms[] = {"--help", "-h"};
    for (int i = 0; i < 2; i++) {
        Run r = run_cakec(forms[i]);
        assert_int_equal(r.status, 0);
        assert_non_null(strstr(r.out, "usage: cakec"));
        assert_non_null(strstr(r.out, "cakec check FILE"));
        assert_non_null(strstr(r.out, "--json"));
        assert_non_null(strstr(r.out, "exit codes"));
        assert_int_equal(r.errlen, 0);
        run_free(&r);
    }
    Run r = run_cakec("check", "--help"); /* --help wins anywhere */
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "usage: cakec"));
    run_free(&r);
}

static void test_version(void **state)
{
    (void)state;
    Run r = run_cakec("--version");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "cakec " CAKE_VERSION "\n");
    assert_int_equal(r.errlen, 0);
    run_free(&r);
}

/* bad usage: exit 1 and an E0002 message that points at --help */
static void test_bad_usage(void **state)
{
    (void)state;
    const char *const cases[][4] = {
        {"check", NULL},                                   /* no input file */
        {"check", "--frobnicate", "x.tir", NULL},          /* unknown option */
        {"check", "a.tir", "b.tir", NULL},                 /* two inputs */
        {"cost", "x.tir", "--shape", NULL},                /* option without its value */
        {"check", "--dump-after", "lexing", "x.tir"},      /* unknown stage */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *args[6] = {0};
        for (int j = 0; j < 4 && cases[i][j]; j++)
            args[j] = cases[i][j];
        Run r = run_cakec_env(NULL, args);
        if (r.status != 1 || !strstr(r.err, "error[E0002]") || !strstr(r.err, "--help"))
            fail_msg("case %zu (%s %s): exit %d, stderr:\n%s", i, args[0], args[1] ? args[1] : "",
                     r.status, r.err);
        assert_int_equal(r.outlen, 0);
        run_free(&r);
    }
    Run r = run_cakec_env(NULL, (const char *const[]){NULL}); /* nothing at all */
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "E0002"));
    run_free(&r);
}

/* a file that cannot be read: E0001 naming the path, exit 1 */
static void test_unreadable(void **state)
{
    (void)state;
    Run r = run_cakec("check", "/nonexistent/kernel.tir");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "error[E0001]"));
    assert_non_null(strstr(r.err, "/nonexistent/kernel.tir"));
    run_free(&r);

    Run d = run_cakec("check", CAKE_SOURCE_DIR "/examples"); /* a directory */
    assert_int_equal(d.status, 1);
    assert_non_null(strstr(d.err, "error[E0001]"));
    run_free(&d);
}

/* exit codes: 0 clean, 1 broken (diagnostics on stderr, nothing on stdout) */
static void test_exit_codes(void **state)
{
    (void)state;
    Run ok = run_cakec("check", CAKE_SOURCE_DIR "/tests/diag/syntax/ok_lexical.tir");
    assert_int_equal(ok.status, 0);
    assert_int_equal(ok.outlen, 0);
    assert_int_equal(ok.errlen, 0);
    run_free(&ok);

    Run bad = run_cakec("check", CAKE_SOURCE_DIR "/tests/diag/syntax/store_with_equals.tir");
    assert_int_equal(bad.status, 1);
    assert_int_equal(bad.outlen, 0);
    assert_non_null(strstr(bad.err, "error[E0104]"));
    run_free(&bad);

    static const char garbage[] = "\x7f" "ELF\x02\x01\x01\0\0\0kernel {{{ ]]] \xff\xfe <- <- ^T^T";
    char *path = temp_file(garbage, sizeof garbage - 1);
    Run g = run_cakec("check", path);
    assert_int_equal(g.status, 1);
    assert_non_null(strstr(g.err, "error[E01"));
    run_free(&g);
    unlink(path);
    free(path);

    char *empty = temp_file("", 0);
    Run e = run_cakec("check", empty);
    assert_int_equal(e.status, 1);
    assert_non_null(strstr(e.err, "error[E0117]"));
    run_free(&e);
    unlink(empty);
    free(empty);
}

/* the text rendering: location, message, source line, caret under the span,
 * the note with its own location and caret, help lines; no colour off a tty */
static void test_text_rendering(void **state)
{
    (void)state;
    const char *path = CAKE_SOURCE_DIR "/tests/diag/syntax/unclosed_paren.tir";
    Run r = run_cakec("check", path);
    assert_int_equal(r.status, 1);
    assert_null(strchr(r.err, '\033'));
    char head[1200];
    snprintf(head, sizeof head, "%s:26:3: error[E0106]: ", path);
    const char *p = strstr(r.err, head);
    if (!p)
        fail_msg("no \"%s\" in:\n%s", head, r.err);
    p = strchr(p, '\n') + 1;          /* the source line */
    assert_non_null(strstr(p, "   26 |   for i in thread.x"));
    p = strchr(p, '\n') + 1;          /* the caret line */
    assert_memory_equal(p, "      |   ^", 11);
    snprintf(head, sizeof head, "%s:25:16: note: ", path);
    const char *n = strstr(r.err, head);
    if (!n)
        fail_msg("no note \"%s\" in:\n%s", head, r.err);
    n = strchr(n, '\n') + 1;
    n = strchr(n, '\n') + 1;
    assert_memory_equal(n, "      |                ^\n", 24); /* exactly one caret under `(` */
    run_free(&r);

    Run h = run_cakec("check", CAKE_SOURCE_DIR "/tests/diag/syntax/target_sm90.tir");
    assert_non_null(strstr(h.err, "      |          ^^^^^\n")); /* the whole `sm_90` */
    assert_non_null(strstr(h.err, "= help: did you mean `sm_90a`?"));
    run_free(&h);
}

/* `cakec FILE` compiles; until code generation exists it says so (E0004) */
static void test_compile_command(void **state)
{
    (void)state;
    Run r = run_cakec(CAKE_SOURCE_DIR "/tests/diag/syntax/ok_lexical.tir");
    if (r.status == 1)
        assert_true(strstr(r.err, "E0004") || strstr(r.err, "error[E09"));
    else
        assert_int_equal(r.status, 0);
    run_free(&r);
}

/* an internal error (ir_bug) exits 2 and says it is a compiler bug (E0005);
 * with --json stdout still holds one JSON document. Needs libcake's test hook:
 * CAKE_TEST_BUG=1 in the environment makes the pipeline call ir_bug. */
static void test_internal_error(void **state)
{
    (void)state;
    const char *path = CAKE_SOURCE_DIR "/tests/diag/syntax/ok_lexical.tir";
    Run r = run_cakec_env("CAKE_TEST_BUG=1", (const char *const[]){"check", path, NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "internal error"));
    run_free(&r);

    Run j = run_cakec_env("CAKE_TEST_BUG=1", (const char *const[]){"check", "--json", path, NULL});
    assert_int_equal(j.status, 2);
    assert_non_null(strstr(j.out, "\"ok\":false"));
    assert_non_null(strstr(j.out, "\"internal_error\":true"));
    assert_non_null(strstr(j.out, "\"code\":\"E0005\""));
    run_free(&j);
}

/* compile and run load the code generator plugin (libcake-llvm.so, next to
 * cakec); without it they exit 3 with E0974 naming the file, and check and
 * print never load it */
static void test_missing_plugin(void **state)
{
    (void)state;
    const char *path = CAKE_SOURCE_DIR "/examples/copy.tir";
    const char *env = "CAKE_LLVM_PLUGIN=/nonexistent/libcake-llvm.so";
    Run r = run_cakec_env(env, (const char *const[]){path, "--target", "sm_80", NULL});
    assert_int_equal(r.status, 3);
    assert_non_null(strstr(r.err, "error[E0974]"));
    assert_non_null(strstr(r.err, "/nonexistent/libcake-llvm.so"));
    run_free(&r);

    Run j = run_cakec_env(env, (const char *const[]){path, "--json", "-o", "/dev/null", NULL});
    assert_int_equal(j.status, 3);
    assert_non_null(strstr(j.out, "\"code\":\"E0974\""));
    run_free(&j);

    Run c = run_cakec_env(env, (const char *const[]){"check", path, NULL});
    assert_int_equal(c.status, 0);
    run_free(&c);
    Run p = run_cakec_env(env, (const char *const[]){"print", path, NULL});
    assert_int_equal(p.status, 0);
    run_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_bad_usage),
        cmocka_unit_test(test_unreadable),
        cmocka_unit_test(test_exit_codes),
        cmocka_unit_test(test_text_rendering),
        cmocka_unit_test(test_compile_command),
        cmocka_unit_test(test_internal_error),
        cmocka_unit_test(test_missing_plugin),
    };
    return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
