/* test_runner.c — the local child-process runner (agent/agent_runner.c): a
 * child that exits 0, 1 or 3, one that segfaults, one that hangs (killed with
 * its whole process group at the timeout), one that cannot be started, and
 * large output on both pipes. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "agent.h"

static ArResult sh(const char *script, double timeout)
{
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    ArJob job = {.argv = argv, .timeout_s = timeout};
    ArRunner r = ar_local_runner();
    ArResult res;
    assert_int_equal(ar_run(&r, &job, &res), 0);
    return res;
}

static void test_ok_captures_output(void **state)
{
    (void)state;
    ArResult r = sh("echo out; echo err >&2", 10);
    assert_int_equal(r.status, AR_OK);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, "out\n");
    assert_string_equal(r.err, "err\n");
    ar_result_free(&r);
}

static void test_exit_codes(void **state)
{
    (void)state;
    ArResult r = sh("exit 1", 10);
    assert_int_equal(r.status, AR_USER_ERROR);
    assert_int_equal(r.exit_code, 1);
    assert_string_equal(ar_status_name(r.status), "user_error");
    ar_result_free(&r);
    r = sh("exit 2", 10);
    assert_int_equal(r.status, AR_INTERNAL);
    ar_result_free(&r);
    r = sh("echo '{\"ok\":false}'; exit 3", 10);   /* cakec's device fault */
    assert_int_equal(r.status, AR_FAULT);
    assert_string_equal(r.out, "{\"ok\":false}\n");
    ar_result_free(&r);
}

static void test_segfault_is_a_fault(void **state)
{
    (void)state;
    ArResult r = sh("echo before; kill -SEGV $$", 10);
    assert_int_equal(r.status, AR_FAULT);
    assert_int_equal(r.signal, SIGSEGV);
    assert_int_equal(r.exit_code, -1);
    assert_string_equal(r.out, "before\n");
    ar_result_free(&r);
}

static void test_hang_times_out_with_its_group(void **state)
{
    (void)state;
    char flag[] = "/tmp/cake_runner_XXXXXX";
    int fd = mkstemp(flag);
    assert_true(fd >= 0);
    close(fd);
    unlink(flag);
    /* a grandchild that would touch the flag after the timeout: killed with the group */
    char script[256];
    snprintf(script, sizeof script, "(sleep 2; touch %s) & sleep 60", flag);
    double t0 = ag_now();
    ArResult r = sh(script, 0.5);
    double took = ag_now() - t0;
    assert_int_equal(r.status, AR_TIMEOUT);
    assert_true(took < 5);
    ar_result_free(&r);
    sleep(3);
    assert_int_not_equal(access(flag, F_OK), 0);
}

static void test_sigkill_reads_as_oom(void **state)
{
    (void)state;
    ArResult r = sh("kill -KILL $$", 10);
    assert_int_equal(r.status, AR_OOM);
    ar_result_free(&r);
}

static void test_cannot_start(void **state)
{
    (void)state;
    const char *argv[] = {"/nonexistent/cakec", "check", NULL};
    ArJob job = {.argv = argv, .timeout_s = 5};
    ArRunner run = ar_local_runner();
    ArResult r;
    ar_run(&run, &job, &r);
    assert_int_equal(r.status, AR_SPAWN);
    assert_non_null(strstr(r.err, "cannot start"));
    ar_result_free(&r);
}

static void test_large_output_on_both_pipes(void **state)
{
    (void)state;
    ArResult r = sh("i=0; while [ $i -lt 3000 ]; do echo 0123456789012345678901234567890123456789; "
                    "echo abcdefghijabcdefghijabcdefghijabcdefghij >&2; i=$((i+1)); done", 30);
    assert_int_equal(r.status, AR_OK);
    assert_int_equal(r.outlen, 3000 * 41);
    assert_int_equal(r.errlen, 3000 * 41);
    ar_result_free(&r);
}

static void test_env_is_added(void **state)
{
    (void)state;
    const char *argv[] = {"/bin/sh", "-c", "echo $CAKE_RUNNER_TEST", NULL};
    const char *env[] = {"CAKE_RUNNER_TEST=hello", NULL};
    ArJob job = {.argv = argv, .env = env, .timeout_s = 5};
    ArRunner run = ar_local_runner();
    ArResult r;
    ar_run(&run, &job, &r);
    assert_string_equal(r.out, "hello\n");
    ar_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ok_captures_output),
        cmocka_unit_test(test_exit_codes),
        cmocka_unit_test(test_segfault_is_a_fault),
        cmocka_unit_test(test_hang_times_out_with_its_group),
        cmocka_unit_test(test_sigkill_reads_as_oom),
        cmocka_unit_test(test_cannot_start),
        cmocka_unit_test(test_large_output_on_both_pipes),
        cmocka_unit_test(test_env_is_added),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
