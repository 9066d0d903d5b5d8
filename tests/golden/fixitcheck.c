/* fixitcheck.c — fix-its are applied by machines: each one must work.
 *
 *   cake_fixitcheck CAKEC FILE...
 *
 * For every FILE it runs `CAKEC check --json FILE`; for every diagnostic that
 * carries machine-applicable fix-its it applies them (only that diagnostic's,
 * to the original text, as a tool would), writes the result to a temporary
 * file and runs `CAKEC check --json` on it. The fix-it works when the result
 * still parses (no new E01xx syntax error) and reports the diagnostic's code
 * fewer times than the original. Prints one line per failing fix-it, then
 * `N passed, N failed` (fix-its tried); exits 1 when any failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>

typedef struct { long lo, hi; const char *text; } Edit;

static char *slurp(FILE *f, size_t *len)
{
    size_t cap = 4096, n = 0, r;
    char *s = malloc(cap);
    while (s && (r = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n < 2) {
            char *t = realloc(s, cap *= 2);
            if (!t) {
                free(s);
                return NULL;
            }
            s = t;
        }
    }
    if (s)
        s[n] = 0;
    *len = n;
    return s;
}

static cJSON *check_json(const char *cakec, const char *file)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' check --json '%s' 2>/dev/null", cakec, file);
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    size_t n;
    char *out = slurp(p, &n);
    pclose(p);
    cJSON *j = out ? cJSON_Parse(out) : NULL;
    free(out);
    return j;
}

/* how many diagnostics have this code; *syntax counts the E01xx ones */
static int count_code(cJSON *j, const char *code, int *syntax)
{
    int n = 0;
    *syntax = 0;
    cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItem(j, "diagnostics")) {
        const char *c = cJSON_GetStringValue(cJSON_GetObjectItem(d, "code"));
        if (!c)
            continue;
        n += !strcmp(c, code);
        *syntax += !strncmp(c, "E01", 3);
    }
    return n;
}

/* byte offset of (line, col), both 1-based, col in bytes; -1 outside the text */
static long offset_of(const char *src, size_t len, int line, int col)
{
    size_t i = 0;
    for (int l = 1; l < line; l++) {
        const char *nl = memchr(src + i, '\n', len - i);
        if (!nl)
            return -1;
        i = (size_t)(nl - src) + 1;
    }
    return i + (size_t)(col - 1) <= len ? (long)(i + (size_t)(col - 1)) : -1;
}

static int num(cJSON *o, const char *k)
{
    return (int)cJSON_GetNumberValue(cJSON_GetObjectItem(o, k));
}

/* the text with d's fix-its applied (NULL when a span is malformed) */
static char *apply(const char *src, size_t len, cJSON *fixits)
{
    Edit e[16];
    int ne = 0;
    cJSON *f;
    cJSON_ArrayForEach(f, fixits) {
        cJSON *sp = cJSON_GetObjectItem(f, "span");
        const char *rep = cJSON_GetStringValue(cJSON_GetObjectItem(f, "replacement"));
        if (!sp || !rep || ne == 16)
            return NULL;
        e[ne].lo = offset_of(src, len, num(sp, "line"), num(sp, "col"));
        e[ne].hi = offset_of(src, len, num(sp, "end_line"), num(sp, "end_col"));
        e[ne].text = rep;
        if (e[ne].lo < 0 || e[ne].hi < e[ne].lo)
            return NULL;
        ne++;
    }
    for (int i = 1; i < ne; i++) /* by position, then applied back to front */
        for (int k = i; k > 0 && e[k - 1].lo > e[k].lo; k--) {
            Edit t = e[k];
            e[k] = e[k - 1];
            e[k - 1] = t;
        }
    size_t cap = len + 1;
    for (int i = 0; i < ne; i++)
        cap += strlen(e[i].text);
    char *out = malloc(cap);
    size_t n = 0;
    long at = 0;
    for (int i = 0; i < ne; i++) {
        if (e[i].lo < at) { /* overlapping edits */
            free(out);
            return NULL;
        }
        memcpy(out + n, src + at, (size_t)(e[i].lo - at));
        n += (size_t)(e[i].lo - at);
        memcpy(out + n, e[i].text, strlen(e[i].text));
        n += strlen(e[i].text);
        at = e[i].hi;
    }
    memcpy(out + n, src + at, len - (size_t)at);
    n += len - (size_t)at;
    out[n] = 0;
    return out;
}

/* tries one diagnostic's fix-its; returns 1 when they work */
static int try_fix(const char *cakec, const char *file, const char *src, size_t len, cJSON *orig,
                   cJSON *d, const char *tmp)
{
    const char *code = cJSON_GetStringValue(cJSON_GetObjectItem(d, "code"));
    char *fixed = apply(src, len, cJSON_GetObjectItem(d, "fixits"));
    int line = num(cJSON_GetObjectItem(d, "span"), "line");
    if (!fixed) {
        printf("FAIL %s:%d [%s]: a fix-it span is malformed or overlaps\n", file, line, code);
        return 0;
    }
    FILE *o = fopen(tmp, "w");
    if (!o) {
        free(fixed);
        return 0;
    }
    fputs(fixed, o);
    fclose(o);
    int syn0, syn1;
    int before = count_code(orig, code, &syn0);
    cJSON *after = check_json(cakec, tmp);
    int ok = 0;
    if (!after) {
        printf("FAIL %s:%d [%s]: cakec gave no JSON on the fixed file\n", file, line, code);
    } else {
        int now = count_code(after, code, &syn1);
        if (syn1 > syn0 - (strncmp(code, "E01", 3) ? 0 : 1))
            printf("FAIL %s:%d [%s]: the fixed file no longer parses\n", file, line, code);
        else if (now >= before)
            printf("FAIL %s:%d [%s]: still reported after the fix-it\n", file, line, code);
        else
            ok = 1;
        if (!ok)
            fprintf(stdout, "---- fixed text:\n%s----\n", fixed);
    }
    cJSON_Delete(after);
    free(fixed);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s CAKEC FILE...\n", argv[0]);
        return 2;
    }
    char tmp[] = "/tmp/cake_fixit_XXXXXX.tir";
    int fd = mkstemps(tmp, 4);
    if (fd < 0)
        return 2;
    close(fd);
    int pass = 0, fail = 0;
    for (int i = 2; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f)
            continue;
        size_t len;
        char *src = slurp(f, &len);
        fclose(f);
        cJSON *orig = src ? check_json(argv[1], argv[i]) : NULL;
        cJSON *d;
        cJSON *diags = orig ? cJSON_GetObjectItem(orig, "diagnostics") : NULL;
        cJSON_ArrayForEach(d, diags) {
            cJSON *fx = cJSON_GetObjectItem(d, "fixits");
            if (!cJSON_GetArraySize(fx))
                continue;
            cJSON *first = cJSON_GetArrayItem(fx, 0);
            const char *app = cJSON_GetStringValue(cJSON_GetObjectItem(first, "applicability"));
            if (!app || strcmp(app, "machine-applicable"))
                continue;
            if (try_fix(argv[1], argv[i], src, len, orig, d, tmp))
                pass++;
            else
                fail++;
        }
        cJSON_Delete(orig);
        free(src);
    }
    unlink(tmp);
    printf("%d passed, %d failed\n", pass, fail);
    return fail ? 1 : 0;
}
