/* agent_task.c — task files: what `cakec agent` and `cakec mcp --task` search
 * for (docs/agent.md has the schema). Paths in a task file are relative to
 * the task file. The held-out shapes stay here: ag_task_public_json, what the
 * model sees, leaves them out. */
#include <stdlib.h>
#include <string.h>
#include "agent.h"

static char *resolve_path(const char *task_path, const char *p)
{
    if (p[0] == '/')
        return ag_strdup(p);
    const char *slash = strrchr(task_path, '/');
    if (!slash)
        return ag_strdup(p);
    return ag_printf("%.*s/%s", (int)(slash - task_path), task_path, p);
}

static int bad_field(CakeCtx *ctx, const char *path, const char *field, const char *want)
{
    Diag *d = diag_report(ctx, E1102, IR_NOSPAN, "task file `%s`: `%s` %s", path, field, want);
    diag_help(ctx, d, "docs/agent.md lists the fields of a task file");
    return 1;
}

static const char *opt_string(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* an array of shape strings ("M=4096,N=4096") into out; -1 when malformed */
static int shape_list(const cJSON *j, const char *key, char **out)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!a)
        return 0;
    if (!cJSON_IsArray(a))
        return -1;
    int n = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, a) {
        if (!cJSON_IsString(s) || n == AG_MAX_SHAPES)
            return -1;
        out[n++] = ag_strdup(s->valuestring);
    }
    return n;
}

static int load_fields(CakeCtx *ctx, const char *path, const cJSON *j, AgTask *t)
{
    const char *name = opt_string(j, "name"), *ref = opt_string(j, "reference");
    if (!name)
        return bad_field(ctx, path, "name", "is missing (a string)");
    if (!ref)
        return bad_field(ctx, path, "reference", "is missing (the path of the trusted .tir)");
    t->name = ag_strdup(name);
    t->family = ag_strdup(opt_string(j, "family") ? opt_string(j, "family") : name);
    t->description = ag_strdup(opt_string(j, "description") ? opt_string(j, "description") : "");
    t->reference = resolve_path(path, ref);
    if (opt_string(j, "start"))
        t->start = resolve_path(path, opt_string(j, "start"));
    t->target = ag_strdup(opt_string(j, "target"));
    t->nshapes = shape_list(j, "shapes", t->shapes);
    if (t->nshapes <= 0)
        return bad_field(ctx, path, "shapes", "must be a non-empty array of strings like \"M=4096,N=4096\"");
    t->nheld_out = shape_list(j, "held_out", t->held_out);
    if (t->nheld_out < 0)
        return bad_field(ctx, path, "held_out", "must be an array of shape strings");
    t->bench_shape = ag_strdup(opt_string(j, "bench_shape") ? opt_string(j, "bench_shape")
                                                            : t->shapes[0]);
    const cJSON *tol = cJSON_GetObjectItemCaseSensitive(j, "tolerance");
    if (tol && !cJSON_IsObject(tol))
        return bad_field(ctx, path, "tolerance", "must be an object {\"rtol\": ..., \"atol\": ...}");
    const cJSON *v;
    if ((v = cJSON_GetObjectItemCaseSensitive(tol, "rtol")) && cJSON_IsNumber(v))
        t->rtol = v->valuedouble;
    if ((v = cJSON_GetObjectItemCaseSensitive(tol, "atol")) && cJSON_IsNumber(v))
        t->atol = v->valuedouble;
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(j, "inputs");
    if (inputs)
        t->inputs = cJSON_Duplicate(inputs, 1);
    const cJSON *base = cJSON_GetObjectItemCaseSensitive(j, "baseline");
    if (base && !cJSON_IsObject(base))
        return bad_field(ctx, path, "baseline", "must be an object {\"ms\": ..., \"command\": ...}");
    if ((v = cJSON_GetObjectItemCaseSensitive(base, "ms")) && cJSON_IsNumber(v))
        t->baseline_ms = v->valuedouble;
    t->baseline_command = ag_strdup(opt_string(base, "command"));
    return 0;
}

int ag_task_load(CakeCtx *ctx, const char *path, AgTask *t)
{
    memset(t, 0, sizeof *t);
    char *text = ag_read_file(path, NULL);
    if (!text) {
        Diag *d = diag_report(ctx, E1101, IR_NOSPAN, "cannot read task file `%s`", path);
        diag_help(ctx, d, "`cakec agent TASK.json` takes a task file (docs/agent.md)");
        return 1;
    }
    cJSON *j = cJSON_Parse(text);
    free(text);
    if (!cJSON_IsObject(j)) {
        Diag *d = diag_report(ctx, E1101, IR_NOSPAN, "task file `%s` is not a JSON object", path);
        diag_help(ctx, d, "a task file is one JSON object (docs/agent.md)");
        cJSON_Delete(j);
        return 1;
    }
    int rc = load_fields(ctx, path, j, t);
    cJSON_Delete(j);
    return rc;
}

void ag_task_free(AgTask *t)
{
    free(t->name);
    free(t->family);
    free(t->description);
    free(t->reference);
    free(t->start);
    free(t->target);
    for (int i = 0; i < t->nshapes; i++)
        free(t->shapes[i]);
    for (int i = 0; i < t->nheld_out; i++)
        free(t->held_out[i]);
    free(t->bench_shape);
    cJSON_Delete(t->inputs);
    free(t->baseline_command);
    memset(t, 0, sizeof *t);
}

cJSON *ag_task_public_json(const AgTask *t)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", t->name);
    cJSON_AddStringToObject(j, "family", t->family);
    cJSON_AddStringToObject(j, "description", t->description);
    if (t->target)
        cJSON_AddStringToObject(j, "target", t->target);
    cJSON *s = cJSON_AddArrayToObject(j, "shapes");
    for (int i = 0; i < t->nshapes; i++)
        cJSON_AddItemToArray(s, cJSON_CreateString(t->shapes[i]));
    cJSON_AddStringToObject(j, "bench_shape", t->bench_shape);
    cJSON_AddNumberToObject(j, "held_out_shapes", t->nheld_out);  /* how many, never which */
    if (t->rtol > 0 || t->atol > 0) {
        cJSON *tol = cJSON_AddObjectToObject(j, "tolerance");
        cJSON_AddNumberToObject(tol, "rtol", t->rtol);
        cJSON_AddNumberToObject(tol, "atol", t->atol);
    }
    if (t->inputs)
        cJSON_AddItemToObject(j, "inputs", cJSON_Duplicate(t->inputs, 1));
    if (t->baseline_ms > 0)
        cJSON_AddNumberToObject(j, "baseline_ms", t->baseline_ms);
    return j;
}
