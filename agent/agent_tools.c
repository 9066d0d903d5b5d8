/* agent_tools.c — the tools an agent works through, shared by `cakec mcp` and
 * `cakec agent`: check, compile, cost (with sweeps), run, docs, submit. Each
 * runs `cakec COMMAND ... --json` as a child through the runner and answers
 * with that command's JSON document; a child that faulted, hung or died adds
 * "runner": {status, exit_code, signal, stderr}. With a task, `run` checks on
 * the task's visible shapes against its trusted reference, and `submit` adds
 * the verdict on the held-out shapes without naming them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agent.h"
#include "agent_space.h"

#define MAX_SWEEP 256

int ag_tools_init(AgTools *t, ArRunner *r, const AgTask *task, const char *docs_dir)
{
    memset(t, 0, sizeof *t);
    t->runner = r;
    t->cakec = ag_cakec_path(t->cakec_buf, sizeof t->cakec_buf);
    t->task = task;
    t->docs_dir = docs_dir;
    const char *to = getenv("CAKE_AGENT_TIMEOUT");
    t->timeout_s = to && atof(to) > 0 ? atof(to) : 300;
    snprintf(t->workdir, sizeof t->workdir, "%s/cake_agent_XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(t->workdir) != NULL;
}

void ag_tools_free(AgTools *t)
{
    for (int i = 1; i <= t->ncand; i++) {
        char p[400];
        snprintf(p, sizeof p, "%s/cand_%d.tir", t->workdir, i);
        unlink(p);
        snprintf(p, sizeof p, "%s/cand_%d.out", t->workdir, i);
        unlink(p);
    }
    if (t->workdir[0])
        rmdir(t->workdir);
    cJSON_Delete(t->submitted);
    t->submitted = NULL;
}

/* ---- the tool list ------------------------------------------------------------ */

static const char tools_json[] =
    "["
    "{\"name\":\"check\",\"description\":\"Parse, resolve and verify a TIR kernel (cakec check "
    "--json): every diagnostic with its code, place, help and fix-its. Spans name `file` (also "
    "when the text comes as `source`).\",\"inputSchema\":{"
    "\"type\":\"object\",\"properties\":{\"source\":{\"type\":\"string\",\"description\":\"the "
    "kernel's TIR text\"},\"file\":{\"type\":\"string\",\"description\":\"or the path of a .tir "
    "file (with `source`: the name spans use)\"},\"shape\":{\"type\":\"string\",\"description\":"
    "\"also evaluate the concrete checks at this shape, e.g. M=4096,N=4096\"},\"set\":{\"type\":"
    "\"string\",\"description\":\"bind parameters, e.g. BM=128,STAGES=3 (unbound ones: every "
    "declared value)\"},\"kernel\":{\"type\":\"string\"}}}},"
    "{\"name\":\"compile\",\"description\":\"Compile a kernel (cakec FILE --emit ptx|tirl --json) "
    "and return an excerpt of the PTX or of the lowered TIR-L (the first 200 lines; `full` for "
    "all of it), with each kernel's registers, spills and local memory (`kernels`, from ptxas or "
    "nvJitLink; W0901/W0902 warn).\",\"inputSchema\":{\"type\":"
    "\"object\",\"properties\":{\"source\":{\"type\":\"string\"},\"file\":{\"type\":\"string\"},"
    "\"emit\":{\"type\":\"string\",\"enum\":[\"ptx\",\"tirl\"]},\"target\":{\"type\":\"string\"},"
    "\"set\":{\"type\":\"string\",\"description\":\"parameters, e.g. BM=128,STAGES=3\"},"
    "\"shape\":{\"type\":\"string\",\"description\":\"check at this shape first (cakec check "
    "--shape); a failing check is the answer\"},"
    "\"full\":{\"type\":\"boolean\",\"description\":\"return the whole output as `output` "
    "instead of an excerpt\"},"
    "\"grep\":{\"type\":\"string\",\"description\":\"keep only lines containing this\"},"
    "\"max_lines\":{\"type\":\"integer\",\"description\":\"the excerpt's length (200)\"}}}},"
    "{\"name\":\"cost\",\"description\":\"Predict time, bottleneck and roofline fraction with "
    "the cost model (cakec cost --json), no GPU; `sweep` (e.g. \\\"BM=64,128 STAGES=2,3\\\") "
    "evaluates every combination, sorted by predicted time.\",\"inputSchema\":{\"type\":"
    "\"object\",\"properties\":{\"source\":{\"type\":\"string\"},\"file\":{\"type\":\"string\"},"
    "\"shape\":{\"type\":\"string\",\"description\":\"e.g. M=4096,N=4096\"},\"set\":{\"type\":"
    "\"string\"},\"target\":{\"type\":\"string\"},\"sweep\":{\"type\":\"string\"}}}},"
    "{\"name\":\"run\",\"description\":\"Run the kernel on the GPU (cakec run --json): check it "
    "against the reference in fp64 and/or time it. With a task, checks on the task's shapes "
    "against its trusted reference.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"source\":{\"type\":\"string\"},\"file\":{\"type\":\"string\"},\"check\":{\"type\":"
    "\"boolean\"},\"bench\":{\"type\":\"boolean\"},\"shape\":{\"type\":\"string\"},\"set\":{"
    "\"type\":\"string\"}}}},"
    "{\"name\":\"docs\",\"description\":\"The documentation section for a diagnostic code "
    "(E0801) or a language construct (mbarrier, cp.async, pipeline).\",\"inputSchema\":{"
    "\"type\":\"object\",\"properties\":{\"topic\":{\"type\":\"string\"}},\"required\":["
    "\"topic\"]}},"
    "{\"name\":\"submit\",\"description\":\"Submit the final kernel: checked on every shape "
    "including held-out ones (only the verdict is shown) and timed.\",\"inputSchema\":{\"type\":"
    "\"object\",\"properties\":{\"source\":{\"type\":\"string\"},\"file\":{\"type\":"
    "\"string\"}}}}"
    "]";

cJSON *ag_tools_list(void)
{
    return cJSON_Parse(tools_json);
}

/* ---- running cakec ------------------------------------------------------------ */

static cJSON *error_doc(const char *command, const char *msg)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "command", command);
    cJSON_AddBoolToObject(j, "ok", 0);
    cJSON_AddStringToObject(j, "error", msg);
    return j;
}

static const char *tail(const char *s, size_t len, size_t keep)
{
    return len > keep ? s + len - keep : s;
}

cJSON *ag_cakec_json(AgTools *t, const char *const *args)
{
    const char *argv[48];
    int n = 0;
    argv[n++] = t->cakec;
    for (const char *const *a = args; *a && n < 46; a++)
        argv[n++] = *a;
    argv[n++] = "--json";
    argv[n] = NULL;
    ArJob job = {.argv = argv, .timeout_s = t->timeout_s};
    ArResult r;
    ar_run(t->runner, &job, &r);
    cJSON *j = cJSON_Parse(r.out);
    int answered = cJSON_IsObject(j);
    if (!answered) {
        cJSON_Delete(j);
        int word = !strcmp(args[0], "check") || !strcmp(args[0], "cost") || !strcmp(args[0], "run");
        j = error_doc(word ? args[0] : "compile", "the child printed no JSON document");
    }
    /* a child that answered says itself what went wrong (E0972 for a fault it caught) */
    if (!answered || r.signal || r.status == AR_TIMEOUT || r.status == AR_OOM || r.status == AR_SPAWN) {
        cJSON *run = cJSON_AddObjectToObject(j, "runner");
        cJSON_AddStringToObject(run, "status", ar_status_name(r.status));
        cJSON_AddNumberToObject(run, "exit_code", r.exit_code);
        cJSON_AddNumberToObject(run, "signal", r.signal);
        cJSON_AddNumberToObject(run, "wall_s", r.wall_s);
        cJSON_AddStringToObject(run, "stderr", tail(r.err, r.errlen, 2000));
        cJSON_ReplaceItemInObject(j, "ok", cJSON_CreateFalse());
    }
    ar_result_free(&r);
    return j;
}

/* ---- arguments ----------------------------------------------------------------- */

static const char *arg_str(const cJSON *args, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, key);
    return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

static int arg_bool(const cJSON *args, const char *key, int dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, key);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

char *ag_tools_source_file(AgTools *t, const cJSON *args)
{
    const char *src = arg_str(args, "source"), *file = arg_str(args, "file");
    if (!src)
        return ag_strdup(file);
    char *path = ag_printf("%s/cand_%d.tir", t->workdir, ++t->ncand);
    if (path && !ag_write_file(path, src, strlen(src))) {
        free(path);
        return NULL;
    }
    return path;
}

/* appends "--opt value" pairs for the string arguments present */
static int add_opts(const char **argv, int n, const cJSON *args, const char *const *keys)
{
    for (const char *const *k = keys; *k; k += 2) {
        const char *v = arg_str(args, k[0]);
        if (v) {
            argv[n++] = k[1];
            argv[n++] = v;
        }
    }
    return n;
}

/* ---- the tools ------------------------------------------------------------------ */

static int doc_ok(const cJSON *j);

static cJSON *tool_check(AgTools *t, const char *file, const cJSON *args)
{
    const char *argv[12] = {"check", file};
    static const char *const keys[] = {"shape", "--shape", "set", "--set", "kernel", "--kernel", NULL};
    int n = add_opts(argv, 2, args, keys);
    argv[n] = NULL;
    return ag_cakec_json(t, argv);
}

/* the lines of `text` that contain `grep` (all when NULL), at most max */
static char *excerpt(const char *text, const char *grep, int max, int *total)
{
    size_t cap = strlen(text) + 1, len = 0;
    char *out = malloc(cap);
    int kept = 0;
    *total = 0;
    for (const char *p = text; out && *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p + 1) : strlen(p);
        (*total)++;
        char line[4096];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
        if (kept < max && (!grep || strstr(line, grep))) {
            memcpy(out + len, p, n);
            len += n;
            kept++;
        }
        p += n;
    }
    if (out)
        out[len] = 0;
    return out;
}

static cJSON *tool_compile(AgTools *t, const char *file, const cJSON *args)
{
    if (arg_str(args, "shape")) { /* the concrete checks at the shape first */
        cJSON *c = tool_check(t, file, args);
        if (!doc_ok(c))
            return c;
        cJSON_Delete(c);
    }
    const char *emit = arg_str(args, "emit") ? arg_str(args, "emit") : "ptx";
    char *outp = ag_printf("%s/cand_%d.out", t->workdir, t->ncand ? t->ncand : ++t->ncand);
    const char *argv[16] = {"compile", file, "--emit", emit, "-o", outp};
    int n = 6;
    static const char *const keys[] = {"target", "--target", "set", "--set", NULL};
    n = add_opts(argv, n, args, keys);
    argv[n] = NULL;
    /* `cakec FILE` is the compile command: drop the word */
    cJSON *j = ag_cakec_json(t, argv + 1);
    char *text = ag_read_file(outp, NULL);
    if (text && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok")) && arg_bool(args, "full", 0)) {
        int total = 0;
        for (const char *p = text; *p; p++)
            total += *p == '\n';
        cJSON_AddStringToObject(j, "emit", emit);
        cJSON_AddNumberToObject(j, "lines", total);
        cJSON_AddStringToObject(j, "output", text);
    } else if (text && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok"))) {
        const cJSON *ml = cJSON_GetObjectItemCaseSensitive(args, "max_lines");
        int max = cJSON_IsNumber(ml) && ml->valueint > 0 ? ml->valueint : 200, total;
        char *ex = excerpt(text, arg_str(args, "grep"), max, &total);
        cJSON_AddStringToObject(j, "emit", emit);
        cJSON_AddNumberToObject(j, "lines", total);
        cJSON_AddStringToObject(j, "excerpt", ex ? ex : "");
        free(ex);
    }
    free(text);
    unlink(outp);
    free(outp);
    return j;
}

static cJSON *cost_one(AgTools *t, const char *file, const cJSON *args, const char *set)
{
    const char *argv[16] = {"cost", file};
    int n = 2;
    static const char *const keys[] = {"shape", "--shape", "target", "--target", NULL};
    n = add_opts(argv, n, args, keys);
    if (set) {
        argv[n++] = "--set";
        argv[n++] = set;
    }
    argv[n] = NULL;
    return ag_cakec_json(t, argv);
}

/* no block of the point fits on an SM (cakec cost's occupancy.blocks_per_sm 0) */
static int infeasible(const cJSON *cost)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cost, "cost"), "occupancy");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "blocks_per_sm");
    return cJSON_IsNumber(b) && b->valueint == 0;
}

/* feasible points by predicted time, then the infeasible ones */
static int by_predicted(const void *a, const void *b)
{
    int ia = infeasible(*(cJSON *const *)a), ib = infeasible(*(cJSON *const *)b);
    if (ia != ib)
        return ia - ib;
    double x = ag_cost_ms(*(cJSON *const *)a), y = ag_cost_ms(*(cJSON *const *)b);
    if (isnan(x) || isnan(y))
        return isnan(x) - isnan(y);
    return (x > y) - (x < y);
}

/* `cakec cost --sweep P=a,b Q=x,y`: the CLI's own sweep document; NULL when
 * this cakec's cost has no --sweep (E0002) or no model (E0004) */
static cJSON *cli_sweep(AgTools *t, const char *file, const cJSON *args, const AgSpace *sp)
{
    const char *argv[16 + AG_SPACE_MAX_PARAMS] = {"cost", file};
    char words[AG_SPACE_MAX_PARAMS][AG_SPACE_MAX_VALUES * 25 + 40];
    int n = 2;
    static const char *const keys[] = {"shape", "--shape", "target", "--target", "set", "--set", NULL};
    n = add_opts(argv, n, args, keys);
    argv[n++] = "--sweep";
    for (int i = 0; i < sp->nparams; i++) {
        int len = snprintf(words[i], sizeof words[i], "%s=", sp->params[i].name);
        for (int v = 0; v < sp->params[i].nvalues; v++)
            len += snprintf(words[i] + len, sizeof words[i] - (size_t)len, "%s%s", v ? "," : "",
                            sp->params[i].values[v]);
        argv[n++] = words[i];
    }
    argv[n] = NULL;
    cJSON *j = ag_cakec_json(t, argv);
    const char *code = ag_json_find_string(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "diagnostics"), 0), "code");
    if (!cJSON_GetObjectItemCaseSensitive(j, "sweep") && code &&
        (!strcmp(code, "E0002") || !strcmp(code, "E0004"))) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

/* a sweep: the CLI's document when it has sweeps; else one cost document per
 * point, each with its "set", sorted by predicted time */
static cJSON *tool_cost(AgTools *t, const char *file, const cJSON *args)
{
    const char *sweep = arg_str(args, "sweep"), *fixed = arg_str(args, "set");
    if (!sweep)
        return cost_one(t, file, args, fixed);
    AgSpace sp = {0};
    char err[200];
    if (!ag_space_add(&sp, sweep, err, sizeof err))
        return error_doc("cost", err);
    cJSON *cli = cli_sweep(t, file, args, &sp);
    if (cli)
        return cli;
    long npts = ag_space_size(&sp);
    if (npts > MAX_SWEEP)
        return error_doc("cost", "the sweep has more than 256 points");
    cJSON *pts[MAX_SWEEP];
    for (long i = 0; i < npts; i++) {
        char set[512], point[400];
        ag_space_point(&sp, i, point, sizeof point);
        snprintf(set, sizeof set, "%s%s%s", fixed ? fixed : "", fixed ? "," : "", point);
        pts[i] = cost_one(t, file, args, set);
        cJSON_AddStringToObject(pts[i], "set", point);
        cJSON_AddBoolToObject(pts[i], "feasible", !infeasible(pts[i]));
    }
    qsort(pts, (size_t)npts, sizeof pts[0], by_predicted);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "command", "cost");
    int any = 0;
    cJSON *arr = cJSON_CreateArray();
    for (long i = 0; i < npts; i++) {
        any |= !isnan(ag_cost_ms(pts[i]));
        cJSON_AddItemToArray(arr, pts[i]);
    }
    cJSON_AddBoolToObject(j, "ok", any);
    cJSON_AddItemToObject(j, "sweep", arr);
    return j;
}

static cJSON *run_one(AgTools *t, const char *file, const cJSON *args, const char *shape,
                      int check, int bench)
{
    const char *argv[20] = {"run", file};
    int n = 2;
    if (check)
        argv[n++] = "--check";
    if (bench)
        argv[n++] = "--bench";
    if (shape) {
        argv[n++] = "--shape";
        argv[n++] = shape;
    }
    static const char *const keys[] = {"set", "--set", NULL};
    n = add_opts(argv, n, args, keys);
    if (t->task) {
        argv[n++] = "--reference";
        argv[n++] = t->task->reference;
        if (t->task->target) {
            argv[n++] = "--target";
            argv[n++] = t->task->target;
        }
    }
    argv[n] = NULL;
    return ag_cakec_json(t, argv);
}

static int doc_ok(const cJSON *j)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok"));
}

/* the task's tolerance on top of the check's own bound */
static int within_tolerance(const AgTask *task, const cJSON *run)
{
    if (!task || task->rtol <= 0)
        return 1;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(run, "check")) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(c, "max_rel_err");
        if (cJSON_IsNumber(e) && e->valuedouble > task->rtol)
            return 0;
    }
    return 1;
}

/* with a task and no shape: check on each visible shape, bench at its bench shape */
static cJSON *tool_run(AgTools *t, const char *file, const cJSON *args)
{
    int check = arg_bool(args, "check", 1), bench = arg_bool(args, "bench", 0);
    const char *shape = arg_str(args, "shape");
    if (!t->task || shape)
        return run_one(t, file, args, shape, check, bench);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "command", "run");
    cJSON *runs = cJSON_CreateArray();
    int ok = 1;
    for (int i = 0; check && i < t->task->nshapes; i++) {
        cJSON *r = run_one(t, file, args, t->task->shapes[i], 1, 0);
        ok &= doc_ok(r) && within_tolerance(t->task, r);
        cJSON_AddItemToArray(runs, r);
        if (!doc_ok(r))
            break;   /* the first failing shape says enough */
    }
    if (bench && ok) {
        cJSON *r = run_one(t, file, args, t->task->bench_shape, 0, 1);
        ok &= doc_ok(r);
        cJSON_AddItemToArray(runs, r);
    }
    cJSON_AddBoolToObject(j, "ok", ok);
    cJSON_AddItemToObject(j, "runs", runs);
    return j;
}

cJSON *ag_held_out_verdict(AgTools *t, const char *file)
{
    cJSON *j = cJSON_CreateObject();
    int passed = 0, total = t->task ? t->task->nheld_out : 0, device = 1;
    for (int i = 0; i < total; i++) {
        cJSON *r = run_one(t, file, NULL, t->task->held_out[i], 1, 0);
        passed += doc_ok(r) && within_tolerance(t->task, r);
        device &= !cJSON_GetObjectItemCaseSensitive(r, "runner");
        cJSON_Delete(r);
    }
    cJSON_AddStringToObject(j, "held_out", total == 0 ? "none" : passed == total ? "pass"
                                           : device ? "fail" : "error");
    cJSON_AddNumberToObject(j, "passed", passed);
    cJSON_AddNumberToObject(j, "total", total);
    return j;
}

static cJSON *tool_submit(AgTools *t, const char *file, const cJSON *args)
{
    cJSON *j = tool_check(t, file, args);
    cJSON_ReplaceItemInObject(j, "command", cJSON_CreateString("submit"));
    if (doc_ok(j)) {
        cJSON *bench = cJSON_CreateObject();
        cJSON_AddBoolToObject(bench, "bench", 1);
        cJSON *run = tool_run(t, file, bench);
        cJSON_Delete(bench);
        int ok = doc_ok(run);
        cJSON_AddItemToObject(j, "run", run);
        if (ok && t->task)
            cJSON_AddItemToObject(j, "verdict", ag_held_out_verdict(t, file));
        cJSON_ReplaceItemInObject(j, "ok", cJSON_CreateBool(ok));
    }
    cJSON_Delete(t->submitted);
    t->submitted = cJSON_Duplicate(j, 1);
    return j;
}

/* every string of j that names the temporary `tmp` names `shown` instead: the
 * spans, snippets and messages of an answer name the user's file (or
 * "<source>"), never the candidate file the text was written to */
static void rename_file(cJSON *j, const char *tmp, const char *shown, int depth)
{
    size_t tl = strlen(tmp), sl = strlen(shown);
    for (cJSON *c = j ? j->child : NULL; c && depth < 64; c = c->next) {
        if (cJSON_IsString(c) && c->valuestring && strstr(c->valuestring, tmp)) {
            size_t cap = strlen(c->valuestring) * (sl / (tl ? tl : 1) + 2) + sl + 1;
            char *out = malloc(cap), *o = out;
            for (const char *p = c->valuestring; out && *p;) {
                if (!strncmp(p, tmp, tl)) {
                    memcpy(o, shown, sl);
                    o += sl;
                    p += tl;
                } else {
                    *o++ = *p++;
                }
            }
            if (out) {
                *o = 0;
                cJSON_SetValuestring(c, out);
                free(out);
            }
        }
        rename_file(c, tmp, shown, depth + 1);
    }
}

cJSON *ag_tools_call(AgTools *t, const char *name, const cJSON *args)
{
    if (!strcmp(name, "docs")) {
        const char *topic = arg_str(args, "topic");
        if (!topic)
            return error_doc("docs", "`topic` is required");
        if (!t->docs_dir)
            return error_doc("docs", "the docs folder was not found (set CAKE_DOCS or --docs)");
        return ag_docs_lookup(t->docs_dir, topic, 12000);
    }
    static const struct {
        const char *name;
        cJSON *(*fn)(AgTools *, const char *, const cJSON *);
    } tools[] = {{"check", tool_check}, {"compile", tool_compile}, {"cost", tool_cost},
                 {"run", tool_run}, {"submit", tool_submit}};
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        if (strcmp(name, tools[i].name))
            continue;
        char *file = ag_tools_source_file(t, args);
        if (!file)
            return error_doc(name, "give the kernel as `source` (TIR text) or `file` (a path)");
        cJSON *j = tools[i].fn(t, file, args);
        if (arg_str(args, "source"))
            rename_file(j, file, arg_str(args, "file") ? arg_str(args, "file") : "<source>", 0);
        free(file);
        return j;
    }
    return error_doc(name, "no such tool (check, compile, cost, run, docs, submit)");
}
