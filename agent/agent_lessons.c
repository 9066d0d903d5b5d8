/* agent_lessons.c — the lessons file: per task family, the diagnostic codes
 * that candidates ran into and the edits after which they went away.
 * `cakec agent` adds to it after each run and puts the family's lessons into
 * the next prompts; `cakec lessons` prints a summary. The file is one JSON
 * object (docs/agent.md):
 *   {"version": 1, "families": {"rmsnorm": {"runs": 3, "codes": {
 *      "E0801": {"seen": 5, "fixed": 2, "fixes": [{"before": "...", "after": "..."}]}}}}} */
#include <stdlib.h>
#include <string.h>
#include "agent.h"

#define MAX_FIXES 3

const char *ag_lessons_path(const char *flag)
{
    if (flag)
        return flag;
    const char *env = getenv("CAKE_LESSONS");
    return env && *env ? env : "cake_lessons.json";
}

cJSON *ag_lessons_load(const char *path)
{
    char *text = ag_read_file(path, NULL);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!cJSON_IsObject(j) && text) {
        cJSON_Delete(j);
        return NULL;                    /* there but unreadable: the caller says so */
    }
    if (!j) {
        j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "version", 1);
    }
    if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "families")))
        cJSON_AddObjectToObject(j, "families");
    return j;
}

int ag_lessons_save(const char *path, const cJSON *lessons)
{
    char *s = cJSON_Print(lessons);
    int ok = s && ag_write_file(path, s, strlen(s));
    free(s);
    return ok;
}

static cJSON *child_object(cJSON *parent, const char *key)
{
    cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key);
    return cJSON_IsObject(o) ? o : cJSON_AddObjectToObject(parent, key);
}

static void bump(cJSON *o, const char *key)
{
    cJSON *n = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsNumber(n))
        cJSON_SetNumberValue(n, n->valuedouble + 1);
    else
        cJSON_AddNumberToObject(o, key, 1);
}

cJSON *ag_lessons_family(cJSON *lessons, const char *family)
{
    return child_object(child_object(lessons, "families"), family);
}

void ag_lessons_note(cJSON *lessons, const char *family, const char *code,
                     const char *fix_before, const char *fix_after)
{
    cJSON *c = child_object(child_object(ag_lessons_family(lessons, family), "codes"), code);
    if (!fix_before) {
        bump(c, "seen");
        return;
    }
    bump(c, "fixed");
    cJSON *fixes = cJSON_GetObjectItemCaseSensitive(c, "fixes");
    if (!cJSON_IsArray(fixes))
        fixes = cJSON_AddArrayToObject(c, "fixes");
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "before", fix_before);
    cJSON_AddStringToObject(f, "after", fix_after);
    cJSON_AddItemToArray(fixes, f);
    while (cJSON_GetArraySize(fixes) > MAX_FIXES)
        cJSON_DeleteItemFromArray(fixes, 0);
}

static int count(const cJSON *c, const char *key)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(c, key);
    return cJSON_IsNumber(n) ? n->valueint : 0;
}

/* the family's codes, most seen first, as text; NULL when none */
static char *family_text(const cJSON *fam, int with_fixes)
{
    const cJSON *codes = cJSON_GetObjectItemCaseSensitive(fam, "codes");
    int n = cJSON_GetArraySize(codes);
    if (n <= 0)
        return NULL;
    const cJSON **order = malloc(sizeof *order * (size_t)n);
    int k = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, codes)
        order[k++] = c;
    for (int i = 1; i < k; i++)              /* insertion sort by seen, descending */
        for (int j = i; j > 0 && count(order[j], "seen") > count(order[j - 1], "seen"); j--) {
            const cJSON *t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    char *out = ag_strdup("");
    for (int i = 0; i < k && i < 8 && out; i++) {
        const cJSON *fixes = cJSON_GetObjectItemCaseSensitive(order[i], "fixes");
        const cJSON *last = cJSON_GetArrayItem(fixes, cJSON_GetArraySize(fixes) - 1);
        char *line = ag_printf("- %s: seen %d times, fixed %d times\n", order[i]->string,
                               count(order[i], "seen"), count(order[i], "fixed"));
        char *fix = with_fixes && last
                        ? ag_printf("  an edit that fixed it:\n  before:\n%s\n  after:\n%s\n",
                                    ag_json_find_string(last, "before"), ag_json_find_string(last, "after"))
                        : ag_strdup("");
        char *next = ag_printf("%s%s%s", out, line ? line : "", fix ? fix : "");
        free(line);
        free(fix);
        free(out);
        out = next;
    }
    free(order);
    return out;
}

char *ag_lessons_prompt(const cJSON *lessons, const char *family)
{
    const cJSON *fam = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(lessons, "families"), family);
    char *body = fam ? family_text(fam, 1) : NULL;
    if (!body)
        return ag_strdup("");
    char *s = ag_printf("Lessons from earlier runs on `%s` kernels (recurring diagnostics and "
                        "edits that removed them):\n%s", family, body);
    free(body);
    return s;
}

/* cakec lessons [FILE] [--family F] [--json] */
int ag_cmd_lessons(CakeCtx *ctx, int argc, char **argv)
{
    const char *file = NULL, *family = NULL;
    int json = 0;
    if (!ag_simple_args(ctx, "lessons", "--family", argc, argv, &file, &family, &json))
        return ag_finish(ctx, "lessons", json, 1, NULL);
    const char *path = ag_lessons_path(file);
    cJSON *l = ag_lessons_load(path);
    if (!l) {
        Diag *d = diag_report(ctx, E1110, IR_NOSPAN, "lessons file `%s` is not a JSON object", path);
        diag_help(ctx, d, "fix or delete it: `cakec agent` starts a new one");
        return ag_finish(ctx, "lessons", json, 1, NULL);
    }
    const cJSON *fams = cJSON_GetObjectItemCaseSensitive(l, "families");
    if (json) {
        cJSON *extra = cJSON_CreateObject();
        cJSON_AddStringToObject(extra, "file", path);
        const cJSON *pick = family ? cJSON_GetObjectItemCaseSensitive(fams, family) : fams;
        cJSON_AddItemToObject(extra, "families", pick ? cJSON_Duplicate(pick, 1) : cJSON_CreateObject());
        cJSON_Delete(l);
        return ag_finish(ctx, "lessons", 1, 0, extra);
    }
    printf("lessons in %s\n", path);
    const cJSON *fam;
    cJSON_ArrayForEach(fam, fams) {
        if (family && strcmp(fam->string, family))
            continue;
        char *t = family_text(fam, 0);
        printf("%s (%d runs)\n%s", fam->string, count(fam, "runs"), t ? t : "  no diagnostics yet\n");
        free(t);
    }
    cJSON_Delete(l);
    return ag_finish(ctx, "lessons", 0, 0, NULL);
}
