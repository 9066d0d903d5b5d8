/* test_json.c — the `--json` diagnostics document, checked field by field with
 * cJSON against the schema of DESIGN.md "Diagnostics (JSON)" and
 * docs/diagnostics.md:
 *
 *   { "command": str, "ok": bool, "errors": int, "warnings": int,
 *     "diagnostics": [ { "code": "E0123", "severity": "error"|"warning"|"note",
 *        "message": str, "span": SPAN|null, "snippet": str|null,
 *        "notes": [ { "message": str, "span"?: SPAN } ], "help": [ str ],
 *        "fixits": [ { "span": SPAN, "replacement": str, "applicability": str } ] } ] }
 *   SPAN = { "file": str, "line": int, "col": int, "end_line": int, "end_col": int }
 *
 * Also: exactly one document on stdout, whatever happens; the snippet is the
 * source text under the span; machine-applicable fix-its really fix the file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>
#include <cjson/cJSON.h>
#include "run.h"

/* ---- helpers ------------------------------------------------------------ */

static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    if (len)
        *len = (size_t)n;
    return s;
}

/* parses r->out as exactly one JSON document (trailing whitespace allowed) */
static cJSON *parse_one(const Run *r)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(r->out, &end, 0);
    if (!root)
        fail_msg("stdout is not JSON near: %.60s\nstdout: %s", end ? end : "", r->out);
    while (end && *end && isspace((unsigned char)*end))
        end++;
    if (end && *end)
        fail_msg("more than one JSON document on stdout; trailing: %.60s", end);
    return root;
}

static const cJSON *field(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v)
        fail_msg("missing field \"%s\" in %s", k, cJSON_PrintUnformatted(o));
    return v;
}

static int is_int(const cJSON *v)
{
    return cJSON_IsNumber(v) && v->valuedouble == (double)(long long)v->valuedouble;
}

/* the 1-based line `line` of text, without its newline (static buffer) */
static const char *line_of(const char *text, int line)
{
    static char buf[4096];
    const char *p = text;
    for (int i = 1; i < line && p; i++) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    if (!p)
        return "";
    size_t n = strcspn(p, "\r\n");
    if (n >= sizeof buf)
        n = sizeof buf - 1;
    memcpy(buf, p, n);
    buf[n] = 0;
    return buf;
}

static void check_span(const cJSON *s, const char *file)
{
    assert_true(cJSON_IsObject(s));
    const cJSON *f = field(s, "file");
    assert_true(cJSON_IsString(f));
    if (file)
        assert_string_equal(f->valuestring, file);
    const char *keys[] = {"line", "col", "end_line", "end_col"};
    for (int i = 0; i < 4; i++) {
        const cJSON *v = field(s, keys[i]);
        assert_true(is_int(v));
        assert_true(v->valueint >= 1);
    }
    int l = field(s, "line")->valueint, c = field(s, "col")->valueint;
    int el = field(s, "end_line")->valueint, ec = field(s, "end_col")->valueint;
    assert_true(el >= l);
    if (el == l)
        assert_true(ec >= c);
    assert_int_equal(cJSON_GetArraySize(s), 5); /* nothing else in a span */
}

static int valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 0 : (*p >> 5) == 6 ? 1 : (*p >> 4) == 14 ? 2 : (*p >> 3) == 30 ? 3 : -1;
        if (n < 0)
            return 0;
        p++;
        for (int i = 0; i < n; i++, p++)
            if ((*p & 0xc0) != 0x80)
                return 0;
    }
    return 1;
}

/* checks one diagnostic object against the schema; `text` is the file's
 * source (NULL when the diagnostic may have no span) */
static void check_diag(const cJSON *d, const char *file, const char *text)
{
    assert_true(cJSON_IsObject(d));
    const cJSON *code = field(d, "code");
    assert_true(cJSON_IsString(code));
    const char *c = code->valuestring;
    assert_int_equal(strlen(c), 5);
    assert_true(c[0] == 'E' || c[0] == 'W');
    for (int i = 1; i < 5; i++)
        assert_true(isdigit((unsigned char)c[i]));
    const cJSON *sev = field(d, "severity");
    assert_true(cJSON_IsString(sev));
    assert_true(!strcmp(sev->valuestring, "error") || !strcmp(sev->valuestring, "warning") ||
                !strcmp(sev->valuestring, "note"));
    assert_true((c[0] == 'W') == !strcmp(sev->valuestring, "warning"));
    const cJSON *msg = field(d, "message");
    assert_true(cJSON_IsString(msg));
    assert_true(strlen(msg->valuestring) > 0);
    assert_true(valid_utf8(msg->valuestring));

    const cJSON *span = field(d, "span"), *snip = field(d, "snippet");
    if (cJSON_IsNull(span)) {
        assert_true(cJSON_IsNull(snip));
    } else {
        check_span(span, file);
        assert_true(cJSON_IsString(snip));
        assert_true(valid_utf8(snip->valuestring));
        if (text) { /* the snippet starts with the span's first source line */
            int line = field(span, "line")->valueint;
            const char *src = line_of(text, line);
            int ascii = 1;
            for (const char *q = src; *q; q++)
                ascii &= (unsigned char)*q < 0x80;
            if (ascii && strncmp(snip->valuestring, src, strlen(src)) != 0)
                fail_msg("snippet \"%s\" is not line %d \"%s\"", snip->valuestring, line, src);
        }
    }

    const cJSON *notes = field(d, "notes"), *n;
    assert_true(cJSON_IsArray(notes));
    cJSON_ArrayForEach(n, notes) {
        assert_true(cJSON_IsObject(n));
        assert_true(cJSON_IsString(field(n, "message")));
        const cJSON *ns = cJSON_GetObjectItemCaseSensitive(n, "span");
        if (ns && !cJSON_IsNull(ns))
            check_span(ns, NULL);
    }
    const cJSON *help = field(d, "help"), *h;
    assert_true(cJSON_IsArray(help));
    cJSON_ArrayForEach(h, help) {
        assert_true(cJSON_IsString(h));
        assert_true(strlen(h->valuestring) > 0);
    }
    const cJSON *fixits = field(d, "fixits"), *f;
    assert_true(cJSON_IsArray(fixits));
    cJSON_ArrayForEach(f, fixits) {
        check_span(field(f, "span"), file);
        assert_true(cJSON_IsString(field(f, "replacement")));
        const char *a = field(f, "applicability")->valuestring;
        assert_non_null(a);
        assert_true(!strcmp(a, "machine-applicable") || !strcmp(a, "maybe-incorrect") ||
                    !strcmp(a, "has-placeholders") || !strcmp(a, "unspecified"));
    }
}

/* checks the whole document; returns the diagnostics array */
static const cJSON *check_doc(const cJSON *root, const char *command, int ok, const char *file,
                              const char *text)
{
    assert_true(cJSON_IsObject(root));
    const cJSON *cmd = field(root, "command");
    assert_true(cJSON_IsString(cmd));
    assert_string_equal(cmd->valuestring, command);
    const cJSON *okv = field(root, "ok");
    assert_true(cJSON_IsBool(okv));
    assert_int_equal(cJSON_IsTrue(okv), ok);
    const cJSON *ne = field(root, "errors"), *nw = field(root, "warnings");
    assert_true(is_int(ne));
    assert_true(is_int(nw));
    const cJSON *diags = field(root, "diagnostics"), *d;
    assert_true(cJSON_IsArray(diags));
    int errors = 0, warnings = 0;
    cJSON_ArrayForEach(d, diags) {
        check_diag(d, file, text);
        const char *sev = field(d, "severity")->valuestring;
        errors += !strcmp(sev, "error");
        warnings += !strcmp(sev, "warning");
    }
    assert_int_equal(ne->valueint, errors);
    assert_int_equal(nw->valueint, warnings);
    assert_int_equal(ok, errors == 0);
    return diags;
}

static const cJSON *find_code(const cJSON *diags, const char *code)
{
    const cJSON *d;
    cJSON_ArrayForEach(d, diags)
        if (!strcmp(cJSON_GetObjectItemCaseSensitive(d, "code")->valuestring, code))
            return d;
    fail_msg("no %s diagnostic in %s", code, cJSON_PrintUnformatted(diags));
    return NULL;
}

/* ---- tests -------------------------------------------------------------- */

/* a broken file: an error with a note at another place */
static void test_broken_file(void **state)
{
    (void)state;
    const char *rel = "tests/diag/syntax/unclosed_paren.tir";
    char path[1024];
    src_path(path, sizeof path, rel);
    char *text = read_text(path, NULL);
    Run r = run_cakec("check", "--json", path);
    assert_int_equal(r.status, 1);
    cJSON *root = parse_one(&r);
    const cJSON *diags = check_doc(root, "check", 0, path, text);
    assert_int_equal(cJSON_GetArraySize(diags), 1);
    const cJSON *d = find_code(diags, "E0106");
    assert_string_equal(field(d, "severity")->valuestring, "error");
    assert_int_equal(field(field(d, "span"), "line")->valueint, 26);
    assert_int_equal(field(field(d, "span"), "col")->valueint, 3);
    const cJSON *notes = field(d, "notes");
    assert_int_equal(cJSON_GetArraySize(notes), 1);
    const cJSON *ns = field(cJSON_GetArrayItem(notes, 0), "span");
    check_span(ns, path);
    assert_int_equal(field(ns, "line")->valueint, 25);
    assert_int_equal(field(ns, "col")->valueint, 16);
    assert_int_equal(field(ns, "end_col")->valueint, 17); /* exactly the `(` */
    cJSON_Delete(root);
    run_free(&r);
    free(text);
}

/* every file of the golden suites renders a schema-valid document */
static void test_all_golden_files(void **state)
{
    (void)state;
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "find %s/tests/diag %s/examples -name '*.tir' | sort", CAKE_SOURCE_DIR,
             CAKE_SOURCE_DIR);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char path[1024];
    int n = 0;
    while (fgets(path, sizeof path, p)) {
        path[strcspn(path, "\n")] = 0;
        char *text = read_text(path, NULL);
        Run r = run_cakec("check", "--json", path);
        if (r.status != 0 && r.status != 1)
            fail_msg("%s: exit %d\n%s", path, r.status, r.err);
        cJSON *root = parse_one(&r);
        check_doc(root, "check", r.status == 0, path, text);
        cJSON_Delete(root);
        run_free(&r);
        free(text);
        n++;
    }
    pclose(p);
    assert_true(n > 0);
}

/* a clean file: ok, no diagnostics */
static void test_clean_file(void **state)
{
    (void)state;
    char path[1024];
    src_path(path, sizeof path, "tests/diag/syntax/ok_lexical.tir");
    Run r = run_cakec("check", "--json", path);
    assert_int_equal(r.status, 0);
    cJSON *root = parse_one(&r);
    const cJSON *diags = check_doc(root, "check", 1, path, NULL);
    assert_int_equal(cJSON_GetArraySize(diags), 0);
    assert_int_equal(field(root, "errors")->valueint, 0);
    assert_int_equal(field(root, "warnings")->valueint, 0);
    cJSON_Delete(root);
    run_free(&r);
}

/* a diagnostic with no place: the span and snippet are null */
static void test_spanless(void **state)
{
    (void)state;
    Run r = run_cakec("check", "--json", "/nonexistent/dir/kernel.tir");
    assert_int_equal(r.status, 1);
    cJSON *root = parse_one(&r);
    const cJSON *diags = check_doc(root, "check", 0, NULL, NULL);
    const cJSON *d = find_code(diags, "E0001");
    assert_true(cJSON_IsNull(field(d, "span")));
    assert_true(cJSON_IsNull(field(d, "snippet")));
    assert_non_null(strstr(field(d, "message")->valuestring, "/nonexistent/dir/kernel.tir"));
    cJSON_Delete(root);
    run_free(&r);
}

/* bad usage still prints one JSON document */
static void test_usage_json(void **state)
{
    (void)state;
    Run r = run_cakec("check", "--json");
    assert_int_equal(r.status, 1);
    cJSON *root = parse_one(&r);
    const cJSON *diags = check_doc(root, "check", 0, NULL, NULL);
    find_code(diags, "E0002");
    cJSON_Delete(root);
    run_free(&r);

    Run r2 = run_cakec("check", "--json", "--no-such-option", "x.tir");
    assert_int_equal(r2.status, 1);
    cJSON *root2 = parse_one(&r2);
    find_code(check_doc(root2, "check", 0, NULL, NULL), "E0002");
    cJSON_Delete(root2);
    run_free(&r2);
}

/* non-ASCII and control bytes in the source come out as valid UTF-8 JSON */
static void test_non_ascii(void **state)
{
    (void)state;
    static const char src[] = "kernel k\n  target sm_80\n  grid [1]\n  threads 32\n"
                              "{\n  let a = 1 \xe2\x89\xa4 2 \x01 \xff\xfe\n}\n";
    char *path = temp_file(src, sizeof src - 1);
    assert_non_null(path);
    Run r = run_cakec("check", "--json", path);
    assert_int_equal(r.status, 1);
    assert_true(valid_utf8(r.out));
    cJSON *root = parse_one(&r);
    const cJSON *diags = check_doc(root, "check", 0, path, NULL);
    find_code(diags, "E0101");
    cJSON_Delete(root);
    run_free(&r);
    unlink(path);
    free(path);
}

/* many errors: still one valid document, the counts agree */
static void test_many_errors(void **state)
{
    (void)state;
    size_t cap = 1 << 16, n = 0;
    char *src = malloc(cap);
    n += (size_t)snprintf(src + n, cap - n, "kernel k\n  target sm_80\n  grid [1]\n  threads 32\n{\n");
    for (int i = 0; i < 400; i++)
        n += (size_t)snprintf(src + n, cap - n, "  let v%d = 1.0f\n", i);
    n += (size_t)snprintf(src + n, cap - n, "}\n");
    char *path = temp_file(src, n);
    Run r = run_cakec("check", "--json", path);
    assert_int_equal(r.status, 1);
    cJSON *root = parse_one(&r);
    const cJSON *diags = field(root, "diagnostics");
    assert_true(cJSON_GetArraySize(diags) >= 1);
    assert_true(cJSON_GetArraySize(diags) <= 201); /* capped, plus one "too many" */
    assert_true(cJSON_IsFalse(field(root, "ok")));
    assert_true(field(root, "errors")->valueint >= cJSON_GetArraySize(diags) - 1);
    cJSON_Delete(root);
    run_free(&r);
    unlink(path);
    free(path);
    free(src);
}

/* byte offset of 1-based line:col in text */
static size_t offset_of(const char *text, int line, int col)
{
    size_t off = 0;
    for (int l = 1; l < line; l++) {
        const char *nl = strchr(text + off, '\n');
        assert_non_null(nl);
        off = (size_t)(nl - text) + 1;
    }
    return off + (size_t)col - 1;
}

/* applying the machine-applicable fix-its of a file makes it check clean */
static void test_fixits_fix(void **state)
{
    (void)state;
    static const char *const files[] = {
        "tests/diag/syntax/target_sm90.tir",      "tests/diag/syntax/target_gfx940.tir",
        "tests/diag/syntax/dtype_typo_reg.tir",   "tests/diag/syntax/header_thread.tir",
        "tests/diag/syntax/slice_missing_plus.tir", "tests/diag/names/builtin_expf.tir",
        "tests/diag/names/pipeline_member_typo.tir", "tests/diag/names/unknown_name_typo.tir",
        "tests/diag/names/unknown_name_grid.tir", "tests/diag/names/pipeline_unknown_role.tir",
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[1024];
        src_path(path, sizeof path, files[i]);
        size_t len;
        char *text = read_text(path, &len);
        Run r = run_cakec("check", "--json", path);
        cJSON *root = parse_one(&r);
        const cJSON *diags = check_doc(root, "check", 0, path, text), *d, *f;
        /* collect the edits, then apply them from the end of the file backwards */
        struct { size_t lo, hi; const char *rep; } ed[16];
        int ned = 0;
        cJSON_ArrayForEach(d, diags) {
            cJSON_ArrayForEach(f, field(d, "fixits")) {
                if (strcmp(field(f, "applicability")->valuestring, "machine-applicable") || ned == 16)
                    continue;
                const cJSON *s = field(f, "span");
                ed[ned].lo = offset_of(text, field(s, "line")->valueint, field(s, "col")->valueint);
                ed[ned].hi = offset_of(text, field(s, "end_line")->valueint, field(s, "end_col")->valueint);
                ed[ned].rep = field(f, "replacement")->valuestring;
                ned++;
            }
        }
        if (ned == 0)
            fail_msg("%s: no machine-applicable fix-it", files[i]);
        for (int a = 0; a < ned; a++) /* sort by start, descending */
            for (int b = a + 1; b < ned; b++)
                if (ed[b].lo > ed[a].lo) {
                    __typeof__(ed[0]) t = ed[a];
                    ed[a] = ed[b];
                    ed[b] = t;
                }
        size_t cap = len + 1024;
        char *out = malloc(cap);
        memcpy(out, text, len + 1);
        size_t olen = len;
        for (int a = 0; a < ned; a++) {
            size_t rl = strlen(ed[a].rep), cut = ed[a].hi - ed[a].lo;
            memmove(out + ed[a].lo + rl, out + ed[a].hi, olen - ed[a].hi + 1);
            memcpy(out + ed[a].lo, ed[a].rep, rl);
            olen = olen - cut + rl;
        }
        char *fixed = temp_file(out, olen);
        Run r2 = run_cakec("check", fixed);
        if (r2.status != 0)
            fail_msg("%s: after applying %d fix-it(s) the file still fails:\n%s", files[i], ned, r2.err);
        run_free(&r2);
        unlink(fixed);
        free(fixed);
        free(out);
        cJSON_Delete(root);
        run_free(&r);
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_broken_file),
        cmocka_unit_test(test_clean_file),
        cmocka_unit_test(test_spanless),
        cmocka_unit_test(test_usage_json),
        cmocka_unit_test(test_non_ascii),
        cmocka_unit_test(test_many_errors),
        cmocka_unit_test(test_fixits_fix),
        cmocka_unit_test(test_all_golden_files),
    };
    return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
