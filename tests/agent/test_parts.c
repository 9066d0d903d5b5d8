/* test_parts.c — the agent's pieces without a child: parameter spaces, the
 * ```tir block of a reply, the tool list, docs sections, the lessons file and
 * its prompt text, task files and what of them the model sees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "agent.h"
#include "agent_space.h"

static void test_space(void **state)
{
    (void)state;
    AgSpace s = {0};
    char err[200], p[200];
    assert_true(ag_space_add(&s, "BM=64,128,256 STAGES=2,3", err, sizeof err));
    assert_int_equal(ag_space_size(&s), 6);
    ag_space_point(&s, 0, p, sizeof p);
    assert_string_equal(p, "BM=64,STAGES=2");
    ag_space_point(&s, 1, p, sizeof p);
    assert_string_equal(p, "BM=64,STAGES=3");
    ag_space_point(&s, 5, p, sizeof p);
    assert_string_equal(p, "BM=256,STAGES=3");
    assert_false(ag_space_add(&s, "VEC", err, sizeof err));
    assert_non_null(strstr(err, "NAME=v1,v2"));
    assert_false(ag_space_add(&s, "VEC=4,,8", err, sizeof err));
}

static void test_extract_tir(void **state)
{
    (void)state;
    char *k = ag_extract_tir("Here:\n```tir\nkernel k\n{\n}\n```\nand more ```tir\nother\n```");
    assert_string_equal(k, "kernel k\n{\n}\n");
    free(k);
    assert_null(ag_extract_tir("no code here"));
    assert_null(ag_extract_tir("```c\nint x;\n```"));
    assert_null(ag_extract_tir("```tir\nunterminated"));
}

static void test_tool_list(void **state)
{
    (void)state;
    cJSON *l = ag_tools_list();
    assert_int_equal(cJSON_GetArraySize(l), 6);
    const cJSON *t;
    cJSON_ArrayForEach(t, l) {
        assert_true(cJSON_IsString(cJSON_GetObjectItem(t, "name")));
        assert_true(cJSON_IsObject(cJSON_GetObjectItem(t, "inputSchema")));
    }
    cJSON_Delete(l);
}

static void test_docs(void **state)
{
    (void)state;
    const char *dir = CAKE_SOURCE_DIR "/docs";
    cJSON *j = ag_docs_lookup(dir, "E0801", 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "ok")));
    const char *text = cJSON_GetObjectItem(j, "text")->valuestring;
    assert_int_equal(strncmp(text, "### E0801 — ", strlen("### E0801 — ")), 0);
    assert_null(strstr(text + 4, "\n### "));          /* one section only */
    cJSON_Delete(j);
    j = ag_docs_lookup(dir, "e0801", 0);                /* case does not matter */
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "ok")));
    cJSON_Delete(j);
    j = ag_docs_lookup(dir, "E0800", 0);                /* E0800 is not E08001 or E0801 */
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "ok")));
    cJSON_Delete(j);
    j = ag_docs_lookup(dir, "Pipelines", 100);
    assert_string_equal(cJSON_GetObjectItem(j, "file")->valuestring, "tir.md");
    assert_non_null(strstr(cJSON_GetObjectItem(j, "heading")->valuestring, "Pipelines"));
    assert_non_null(strstr(cJSON_GetObjectItem(j, "text")->valuestring, "[... cut"));
    cJSON_Delete(j);
}

static void test_lessons(void **state)
{
    (void)state;
    char path[] = "/tmp/cake_lessons_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    cJSON *l = ag_lessons_load(path);                   /* missing: empty */
    assert_non_null(l);
    char *p = ag_lessons_prompt(l, "gemm");
    assert_string_equal(p, "");
    free(p);
    ag_lessons_note(l, "gemm", "E0801", NULL, NULL);
    ag_lessons_note(l, "gemm", "E0801", NULL, NULL);
    ag_lessons_note(l, "gemm", "E0501", NULL, NULL);
    ag_lessons_note(l, "gemm", "E0801", "load A[i]", "load A[i] mask i < M");
    assert_true(ag_lessons_save(path, l));
    cJSON_Delete(l);
    l = ag_lessons_load(path);
    p = ag_lessons_prompt(l, "gemm");
    const char *first = strstr(p, "- E0801: seen 2 times, fixed 1 times");
    assert_non_null(first);
    assert_true(first < strstr(p, "- E0501: seen 1 times"));   /* most seen first */
    assert_non_null(strstr(p, "load A[i] mask i < M"));
    free(p);
    p = ag_lessons_prompt(l, "softmax");
    assert_string_equal(p, "");
    free(p);
    cJSON_Delete(l);
    unlink(path);
}

static void test_task(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    AgTask t;
    assert_int_equal(ag_task_load(ctx, CAKE_SOURCE_DIR "/tests/agent/task_vector_add.json", &t), 0);
    assert_string_equal(t.family, "elementwise");
    assert_int_equal(t.nshapes, 2);
    assert_int_equal(t.nheld_out, 1);
    assert_non_null(strstr(t.reference, "tests/agent/../../examples/vector_add.tir"));
    assert_true(t.baseline_ms == 1.25 && t.rtol == 1e-6);
    cJSON *pub = ag_task_public_json(&t);
    char *s = cJSON_PrintUnformatted(pub);
    assert_null(strstr(s, "12345"));                   /* the held-out shape */
    assert_non_null(strstr(s, "\"held_out_shapes\":1"));
    free(s);
    cJSON_Delete(pub);
    ag_task_free(&t);
    ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_space),     cmocka_unit_test(test_extract_tir),
        cmocka_unit_test(test_tool_list), cmocka_unit_test(test_docs),
        cmocka_unit_test(test_lessons),   cmocka_unit_test(test_task),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
