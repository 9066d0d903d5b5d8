/* agent_tune.c — `cakec tune FILE --space BM=64,128 STAGES=2,3 ... --shape ...`:
 * enumerate the parameter space, predict every point with `cakec cost --json`,
 * keep the top k, measure those (and the file's own defaults) with
 * `cakec run --bench --json` in child processes, and write the fastest
 * variant and a table. When the cost model cannot rank (it answers no
 * prediction), tune says so and measures every point up to --cap. A variant
 * that faults, hangs or fails its check is a row of the table, never the end
 * of the run. No LLM is involved. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "agent.h"
#include "agent_space.h"

#define MAX_VARIANTS 4096

typedef struct {
    char set[400];             /* the point; "" for the file's defaults */
    double predicted;          /* ms, NAN if none */
    double measured;           /* ms, NAN if not measured or failed */
    const char *status;        /* pruned-cost, invalid, ok, check-failed, fault, ... */
    char why[200];
    int rank_pred;             /* 1-based among the predicted, 0 if none */
    cJSON *on;                 /* the child's measured_on: where it ran (NULL: not said) */
    int unsure;                /* the cost model's verdict is "measure" */
} Variant;

typedef struct {
    const char *file, *shape, *fixed, *target, *out, *runs;
    const char *runner, *fake, *slurm_dir, *partition;   /* --runner local|slurm, --fake-measure D */
    const char *workers, *devices, *gres;                /* --workers N, --devices LIST, --gres G */
    double kernel_timeout, child_timeout;
    int top, cap, check, json;
    AgSpace space;
} TuneOpts;

typedef struct {
    Variant *v;
    int n;                     /* v[0] is the defaults, v[1..n-1] the space */
    int cost_used, pruned, measured, failed;
    char cost_note[300];
} Tune;

/* ---- options ------------------------------------------------------------------ */

static int parse_opts(CakeCtx *ctx, int argc, char **argv, TuneOpts *o)
{
    *o = (TuneOpts){.top = 8, .cap = 64, .kernel_timeout = 10, .child_timeout = 600};
    char err[200];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--json")) o->json = 1;
        else if (!strcmp(a, "--check")) o->check = 1;
        else if (!strcmp(a, "--space")) {
            int any = 0;
            while (i + 1 < argc && argv[i + 1][0] != '-') {
                if (!ag_space_add(&o->space, argv[++i], err, sizeof err)) {
                    Diag *d = diag_report(ctx, E1103, IR_NOSPAN, "--space: %s", err);
                    diag_help(ctx, d, "write `--space BM=64,128,256 STAGES=2,3,4`");
                    return 0;
                }
                any = 1;
            }
            if (!any)
                goto needs_value;
        } else if (more && !strcmp(a, "--shape")) o->shape = argv[++i];
        else if (more && !strcmp(a, "--set")) o->fixed = argv[++i];
        else if (more && !strcmp(a, "--target")) o->target = argv[++i];
        else if (more && !strcmp(a, "--runs")) o->runs = argv[++i];
        else if (more && !strcmp(a, "--runner")) o->runner = argv[++i];
        else if (more && !strcmp(a, "--fake-measure")) o->fake = argv[++i];
        else if (more && !strcmp(a, "--slurm-dir")) o->slurm_dir = argv[++i];
        else if (more && !strcmp(a, "--partition")) o->partition = argv[++i];
        else if (more && !strcmp(a, "--workers")) o->workers = argv[++i];
        else if (more && !strcmp(a, "--devices")) o->devices = argv[++i];
        else if (more && !strcmp(a, "--gres")) o->gres = argv[++i];
        else if (more && (!strcmp(a, "-o") || !strcmp(a, "--out"))) o->out = argv[++i];
        else if (more && !strcmp(a, "--top")) o->top = atoi(argv[++i]);
        else if (more && !strcmp(a, "--cap")) o->cap = atoi(argv[++i]);
        else if (more && !strcmp(a, "--timeout")) o->kernel_timeout = atof(argv[++i]);
        else if (more && !strcmp(a, "--child-timeout")) o->child_timeout = atof(argv[++i]);
        else if (a[0] != '-' && !o->file) o->file = a;
        else if (a[0] == '-' && !more) goto needs_value;
        else {
            diag_report(ctx, E0002, IR_NOSPAN, "tune: unexpected argument `%s`", a);
            return 0;
        }
    }
    ArBatchKind kind;
    if (!ar_batch_kind(o->runner, &kind)) {
        Diag *d = diag_report(ctx, E0002, IR_NOSPAN, "tune: --runner `%s`: local or slurm", o->runner);
        diag_help(ctx, d, "the local runner is the default");
        return 0;
    }
    ArBatchOpts probe = {0};
    if (o->workers && !ar_batch_spread(&probe, o->workers, o->devices, 0, err, sizeof err)) {
        diag_report(ctx, E0002, IR_NOSPAN, "tune: %s", err);
        return 0;
    }
    if (!o->file || !o->space.nparams || o->top <= 0 || o->cap <= 0 || o->kernel_timeout <= 0) {
        Diag *d = diag_report(ctx, E1103, IR_NOSPAN, "tune needs a file and a --space%s",
                              o->top <= 0 || o->cap <= 0 ? " (and positive --top, --cap)" : "");
        diag_help(ctx, d, "cakec tune FILE --space BM=64,128 STAGES=2,3 --shape M=4096,N=4096,K=4096");
        return 0;
    }
    return 1;
needs_value:
    diag_report(ctx, E0002, IR_NOSPAN, "tune: option `%s` needs a value", argv[argc - 1]);
    return 0;
}

/* the full --set of a variant: the fixed parameters, then the point */
static void full_set(const TuneOpts *o, const Variant *v, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s%s", o->fixed ? o->fixed : "", o->fixed && v->set[0] ? "," : "", v->set);
}

/* ---- predicting ---------------------------------------------------------------- */

static void first_error(const cJSON *doc, char *why, size_t cap)
{
    const cJSON *d = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "diagnostics"), 0);
    const char *code = ag_json_find_string(d, "code"), *msg = ag_json_find_string(d, "message");
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(doc, "runner");
    static const char *const wall[] = {"wall_s", NULL}, *const sig[] = {"signal", NULL};
    const char *st = ag_json_find_string(run, "status");
    if (run && !code)
        snprintf(why, cap, "the child ended after %.1f s (%s%s)", ag_json_find_number(run, wall), st,
                 ag_json_find_number(run, sig) > 0 && strcmp(st, "timeout") ? ", by a signal" : "");
    else
        snprintf(why, cap, "%s%s%s", code ? code : "no prediction", msg ? ": " : "", msg ? msg : "");
}

/* every point compiles to TIR-L (the verifier and the lowering passes with
 * the parameters bound: shared memory, bounds, layouts), or it is invalid */
static void validate(AgTools *t, const TuneOpts *o, Tune *tu)
{
    for (int i = 1; i < tu->n; i++) {
        Variant *v = &tu->v[i];
        char set[512];
        full_set(o, v, set, sizeof set);
        const char *argv[12] = {o->file, "--set", set, "--emit", "tirl", "-o", "/dev/null"};
        int n = 7;
        if (o->target) { argv[n++] = "--target"; argv[n++] = o->target; }
        argv[n] = NULL;
        cJSON *doc = ag_cakec_json(t, argv);
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "ok"))) {
            v->status = "invalid";
            first_error(doc, v->why, sizeof v->why);
            tu->pruned++;
            fprintf(stderr, "tune: invalid %-40s %s\n", v->set, v->why);
        }
        cJSON_Delete(doc);
    }
}

static void predict(AgTools *t, const TuneOpts *o, Tune *tu)
{
    int any = 0;
    for (int i = 1; i < tu->n; i++) {
        Variant *v = &tu->v[i];
        if (v->status)
            continue;
        char set[512];
        full_set(o, v, set, sizeof set);
        const char *argv[12] = {"cost", o->file, "--set", set};
        int n = 4;
        if (o->shape) { argv[n++] = "--shape"; argv[n++] = o->shape; }
        if (o->target) { argv[n++] = "--target"; argv[n++] = o->target; }
        argv[n] = NULL;
        cJSON *doc = ag_cakec_json(t, argv);
        v->predicted = ag_cost_ms(doc);
        const char *verdict = ag_json_find_string(doc, "verdict");
        v->unsure = verdict && !strcmp(verdict, "measure");
        if (isnan(v->predicted))
            first_error(doc, v->why, sizeof v->why);
        any |= !isnan(v->predicted);
        int unavailable = strstr(v->why, "E0004") != NULL;
        cJSON_Delete(doc);
        if (unavailable && !any) {           /* the first answer says it all */
            snprintf(tu->cost_note, sizeof tu->cost_note,
                     "the cost model is unavailable (%s): measuring every variant up to --cap %d",
                     v->why, o->cap);
            return;
        }
        fprintf(stderr, "tune: cost %-40s %s\n", v->set,
                isnan(v->predicted) ? v->why : "predicted");
    }
    tu->cost_used = any;
    if (!any)
        snprintf(tu->cost_note, sizeof tu->cost_note,
                 "the cost model predicted no variant: measuring every variant up to --cap %d", o->cap);
}

static int by_prediction(const void *a, const void *b)
{
    const Variant *x = *(Variant *const *)a, *y = *(Variant *const *)b;
    if (isnan(x->predicted) || isnan(y->predicted))
        return isnan(x->predicted) - isnan(y->predicted);
    return (x->predicted > y->predicted) - (x->predicted < y->predicted);
}

/* ranks the predictions and marks what is not measured */
static void prune(const TuneOpts *o, Tune *tu)
{
    Variant **order = malloc(sizeof *order * (size_t)tu->n);
    int n = 0;
    for (int i = 1; i < tu->n; i++)
        if (!tu->v[i].status)                /* not invalid already */
            order[n++] = &tu->v[i];
    if (tu->cost_used)
        qsort(order, (size_t)n, sizeof *order, by_prediction);
    /* the top k; past them, what the model is unsure of ("measure"), up to --cap */
    int kept = 0;
    for (int i = 0; i < n; i++) {
        Variant *v = order[i];
        if (tu->cost_used && !isnan(v->predicted))
            v->rank_pred = i + 1;
        if (tu->cost_used && isnan(v->predicted)) {
            v->status = "invalid";
            tu->pruned++;
        } else if (tu->cost_used ? i >= o->top && !(v->unsure && kept < o->cap) : i >= o->cap) {
            v->status = tu->cost_used ? "pruned-cost" : "over-cap";
            tu->pruned++;
        } else {
            kept++;
        }
    }
    free(order);
}

/* ---- measuring ----------------------------------------------------------------- */

static const char *failure_status(const cJSON *doc)
{
    const char *rs = ag_json_find_string(cJSON_GetObjectItemCaseSensitive(doc, "runner"), "status");
    for (int s = AR_OK; rs && s <= AR_SPAWN; s++)
        if (!strcmp(rs, ar_status_name((ArStatus)s)))
            return ar_status_name((ArStatus)s);   /* fault, timeout, oom: static names */
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(doc, "diagnostics")) {
        const char *code = ag_json_find_string(d, "code");
        const char *msg = ag_json_find_string(d, "message");
        if (code && (!strcmp(code, "E0957") || !strcmp(code, "E0958") || !strcmp(code, "E0959")))
            return "check-failed";
        if (code && !strcmp(code, "E0972"))
            return msg && (strstr(msg, "still running") || strstr(msg, "timed out")) ? "timeout" : "fault";
        if (code && !strcmp(code, "E0973"))
            return "no-gpu";
    }
    return "error";
}

/* the child command line that measures a variant: `run --bench` (with
   --check first: `run --check --bench`), or with --fake-measure D the cost
   model's prediction on D as the measurement (`cost`) */
static int measure_args(const TuneOpts *o, const char *set, const char **argv, char *to, size_t tocap)
{
    int n = 0;
    snprintf(to, tocap, "%g", o->kernel_timeout);
    if (o->fake) {
        argv[n++] = "cost";
        argv[n++] = o->file;
        argv[n++] = "--device";
        argv[n++] = o->fake;
    } else {
        argv[n++] = "run";
        argv[n++] = o->file;
        argv[n++] = "--bench";
        if (o->check)
            argv[n++] = "--check";
        argv[n++] = "--timeout";
        argv[n++] = to;
        if (o->runs) { argv[n++] = "--runs"; argv[n++] = o->runs; }
    }
    if (set[0]) { argv[n++] = "--set"; argv[n++] = set; }
    if (o->shape) { argv[n++] = "--shape"; argv[n++] = o->shape; }
    if (o->target) { argv[n++] = "--target"; argv[n++] = o->target; }
    argv[n] = NULL;
    return n;
}

/* a child's document into the variant: its time, or why it failed */
static void take_result(Tune *tu, Variant *v, cJSON *doc, int fake)
{
    static const char *const keys[] = {"median_ms", NULL};
    static const char *const cost_keys[] = {"time_ms", NULL};
    const cJSON *check = cJSON_GetObjectItemCaseSensitive(doc, "check"), *c;
    int check_ok = 1;
    cJSON_ArrayForEach(c, check)
        check_ok &= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ok"));
    v->measured = fake ? ag_json_find_number(cJSON_GetObjectItemCaseSensitive(doc, "cost"), cost_keys)
                       : ag_json_find_number(cJSON_GetObjectItemCaseSensitive(doc, "bench"), keys);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "ok")) && check_ok && !isnan(v->measured)) {
        v->status = "ok";
        const cJSON *on = cJSON_GetObjectItemCaseSensitive(doc, "measured_on");
        v->on = cJSON_IsObject(on) ? cJSON_Duplicate(on, 1) : NULL;
        tu->measured++;
        return;
    }
    v->measured = NAN;
    v->status = check_ok ? failure_status(doc) : "check-failed";
    first_error(doc, v->why, sizeof v->why);
    tu->failed++;
}

static void log_variant(int k, int total, const Variant *v)
{
    fprintf(stderr, "tune: [%d/%d] %-40s %s", k, total, v->set[0] ? v->set : "(defaults)", v->status);
    if (!isnan(v->measured))
        fprintf(stderr, " %.4f ms", v->measured);
    else
        fprintf(stderr, " (%s)", v->why);
    fputc('\n', stderr);
}

/* every variant not pruned, as one batch (local: one child after another; slurm: one array) */
static void measure(AgTools *t, const TuneOpts *o, Tune *tu)
{
    ArBatchOpts bo = {.dir = o->slurm_dir, .partition = o->partition, .timeout_s = 0, .gres = o->gres};
    char why[200];
    ar_batch_kind(o->runner, &bo.kind);
    /* one worker per visible GPU unless told (parse_opts checked --workers) */
    ar_batch_spread(&bo, o->workers, o->devices, bo.kind == AR_BATCH_LOCAL && !o->fake, why, sizeof why);
    if (bo.kind == AR_BATCH_LOCAL && bo.workers > 1)
        fprintf(stderr, "tune: %d workers over %d GPUs\n", bo.workers, bo.ndevices ? bo.ndevices : 1);
    int total = 0;
    for (int i = 0; i < tu->n; i++)
        total += !tu->v[i].status;
    typedef struct { const char *argv[40]; char set[512], to[32]; int v; } Cmd;
    Cmd *cmds = calloc((size_t)total + 1, sizeof *cmds);
    ArJob *jobs = calloc((size_t)total + 1, sizeof *jobs);
    ArResult *res = calloc((size_t)total + 1, sizeof *res);
    int k = 0;
    for (int i = 0; cmds && jobs && res && i < tu->n; i++) {
        if (tu->v[i].status)
            continue;
        Cmd *c = &cmds[k];
        full_set(o, &tu->v[i], c->set, sizeof c->set);
        c->argv[0] = t->cakec;
        int n = 1 + measure_args(o, c->set, c->argv + 1, c->to, sizeof c->to);
        c->argv[n++] = "--json";
        c->argv[n] = NULL;
        c->v = i;
        jobs[k++] = (ArJob){.argv = c->argv, .timeout_s = t->timeout_s};
    }
    char err[600] = "";
    int rc = k == total ? ar_batch(&bo, jobs, k, res, err, sizeof err) : -1;
    for (int j = 0; j < k; j++) {
        Variant *v = &tu->v[cmds[j].v];
        if (rc) {
            v->status = "runner-failed";
            snprintf(v->why, sizeof v->why, "%s", err[0] ? err : "out of memory");
            tu->failed++;
        } else {
            cJSON *doc = cJSON_Parse(res[j].out);
            if (!cJSON_IsObject(doc)) {
                cJSON_Delete(doc);
                doc = cJSON_CreateObject();
                cJSON *run = cJSON_AddObjectToObject(doc, "runner");
                cJSON_AddStringToObject(run, "status", ar_status_name(res[j].status));
            }
            take_result(tu, v, doc, o->fake != NULL);
            cJSON_Delete(doc);
            ar_result_free(&res[j]);
        }
        log_variant(j + 1, k, v);
    }
    free(cmds);
    free(jobs);
    free(res);
}

/* ---- the result ---------------------------------------------------------------- */

static const Variant *best_measured(const Tune *tu)
{
    const Variant *best = NULL;
    for (int i = 0; i < tu->n; i++)
        if (!isnan(tu->v[i].measured) && (!best || tu->v[i].measured < best->measured))
            best = &tu->v[i];
    return best;
}

static const Variant *best_predicted(const Tune *tu)
{
    for (int i = 0; i < tu->n; i++)
        if (tu->v[i].rank_pred == 1)
            return &tu->v[i];
    return NULL;
}

/* the kernel's `<P = v, ...>` header with the set's values; NULL if a name is missing */
static char *with_params(const char *src, const char *set)
{
    const char *k = strstr(src, "kernel ");
    const char *lt = k ? strchr(k, '<') : NULL, *nl = k ? strchr(k, '\n') : NULL;
    const char *gt = lt ? strchr(lt, '>') : NULL;
    if (!lt || !gt || (nl && lt > nl))
        return NULL;
    char *head = ag_printf("%.*s", (int)(gt - lt - 1), lt + 1);
    char *out = ag_printf("%.*s<", (int)(lt - src), src);
    char *save = NULL;
    int first = 1, replaced = 0, wanted = 1;
    for (const char *c = set; *c; c++)
        wanted += *c == ',';
    for (char *item = strtok_r(head, ",", &save); item && out; item = strtok_r(NULL, ",", &save)) {
        while (*item == ' ')
            item++;
        char *eq = strchr(item, '=');
        size_t nlen = eq ? (size_t)(eq - item) : strlen(item);
        while (nlen && item[nlen - 1] == ' ')
            nlen--;
        const char *val = NULL;
        for (const char *p = set; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
            if (!strncmp(p, item, nlen) && p[nlen] == '=')
                val = p + nlen + 1;
        char *next;
        if (val) {
            replaced++;
            next = ag_printf("%s%s%.*s = %.*s", out, first ? "" : ", ", (int)nlen, item,
                             (int)strcspn(val, ","), val);
        } else {
            next = ag_printf("%s%s%s", out, first ? "" : ", ", item);
        }
        free(out);
        out = next;
        first = 0;
    }
    free(head);
    char *res = out && replaced == wanted ? ag_printf("%s%s", out, gt) : NULL;
    free(out);
    return res;
}

static char *write_best(const TuneOpts *o, const Variant *best)
{
    char set[512];
    full_set(o, best, set, sizeof set);
    if (!set[0])
        return NULL;
    char *src = ag_read_file(o->file, NULL);
    char *text = src ? with_params(src, set) : NULL;
    char *path = NULL;
    if (text) {
        const char *base = strrchr(o->file, '/') ? strrchr(o->file, '/') + 1 : o->file;
        path = o->out ? ag_strdup(o->out) : ag_printf("%.*s.tuned.tir", (int)strcspn(base, "."), base);
        if (!ag_write_file(path, text, strlen(text))) {
            free(path);
            path = NULL;
        }
    }
    free(src);
    free(text);
    return path;
}

/* 1-based rank of x among the n values (ties: the mean rank) */
static double rank_of(const double *v, int n, double x)
{
    int less = 0, equal = 0;
    for (int i = 0; i < n; i++) {
        less += v[i] < x;
        equal += v[i] == x;
    }
    return less + (equal + 1) / 2.0;
}

/* Spearman's rank correlation of predicted and measured times over the
 * variants that have both; NAN with fewer than 3 */
static double spearman(const Tune *tu)
{
    double *p = malloc(sizeof *p * (size_t)tu->n), *m = malloc(sizeof *m * (size_t)tu->n);
    int n = 0;
    for (int i = 0; i < tu->n; i++)
        if (!isnan(tu->v[i].predicted) && !isnan(tu->v[i].measured)) {
            p[n] = tu->v[i].predicted;
            m[n++] = tu->v[i].measured;
        }
    double rho = NAN;
    if (n >= 3) {
        double d2 = 0;
        for (int i = 0; i < n; i++) {
            double d = rank_of(p, n, p[i]) - rank_of(m, n, m[i]);
            d2 += d * d;
        }
        rho = 1 - 6 * d2 / ((double)n * ((double)n * n - 1));
    }
    free(p);
    free(m);
    return rho;
}

static cJSON *num_or_null(double d)
{
    return isnan(d) ? cJSON_CreateNull() : cJSON_CreateNumber(d);
}

static void print_table(const Tune *tu)
{
    printf("%-40s %12s %6s %12s  %s\n", "variant", "predicted", "rank", "measured", "status");
    for (int i = 0; i < tu->n; i++) {
        const Variant *v = &tu->v[i];
        char p[32] = "-", m[32] = "-", r[16] = "-";
        if (!isnan(v->predicted)) snprintf(p, sizeof p, "%.4f ms", v->predicted);
        if (!isnan(v->measured)) snprintf(m, sizeof m, "%.4f ms", v->measured);
        if (v->rank_pred) snprintf(r, sizeof r, "%d", v->rank_pred);
        printf("%-40s %12s %6s %12s  %s%s%s\n", v->set[0] ? v->set : "(defaults)", p, r, m,
               v->status ? v->status : "-", v->why[0] && isnan(v->measured) ? "  " : "",
               isnan(v->measured) ? v->why : "");
    }
}

/* 1 with "NAME1 and NAME2" in both when the measurements name two kinds of device */
static int mixed_devices(const Tune *tu, char *both, size_t cap)
{
    const char *first = NULL;
    for (int i = 0; i < tu->n; i++) {
        const char *d = tu->v[i].on ? ag_json_find_string(tu->v[i].on, "device") : NULL;
        if (!d)
            continue;
        if (!first)
            first = d;
        else if (strcmp(first, d)) {
            snprintf(both, cap, "%s and %s", first, d);
            return 1;
        }
    }
    return 0;
}

static cJSON *report(const TuneOpts *o, const Tune *tu, const char *written)
{
    const Variant *best = best_measured(tu), *pred = best_predicted(tu), *def = &tu->v[0];
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "file", o->file);
    cJSON_AddStringToObject(j, "shape", o->shape ? o->shape : "");
    cJSON_AddNumberToObject(j, "variants", tu->n - 1);
    cJSON_AddStringToObject(j, "cost_model", tu->cost_used ? "used" : "unavailable");
    if (tu->cost_note[0])
        cJSON_AddStringToObject(j, "cost_note", tu->cost_note);
    cJSON_AddNumberToObject(j, "pruned", tu->pruned);
    cJSON_AddNumberToObject(j, "measured", tu->measured);
    cJSON_AddNumberToObject(j, "failed", tu->failed);
    cJSON *tab = cJSON_AddArrayToObject(j, "table");
    for (int i = 0; i < tu->n; i++) {
        const Variant *v = &tu->v[i];
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "set", v->set);
        cJSON_AddItemToObject(row, "predicted_ms", num_or_null(v->predicted));
        cJSON_AddNumberToObject(row, "predicted_rank", v->rank_pred);
        cJSON_AddItemToObject(row, "measured_ms", num_or_null(v->measured));
        cJSON_AddStringToObject(row, "status", v->status ? v->status : "not-run");
        if (v->why[0] && isnan(v->measured))
            cJSON_AddStringToObject(row, "why", v->why);
        if (v->on)
            cJSON_AddItemToObject(row, "measured_on", cJSON_Duplicate(v->on, 1));
        cJSON_AddItemToArray(tab, row);
    }
    if (best) {
        cJSON *b = cJSON_AddObjectToObject(j, "best");
        char set[512];
        full_set(o, best, set, sizeof set);
        cJSON_AddStringToObject(b, "set", set);
        cJSON_AddNumberToObject(b, "measured_ms", best->measured);
        cJSON_AddItemToObject(b, "speedup_vs_defaults",
                              num_or_null(isnan(def->measured) ? NAN : def->measured / best->measured));
        if (written)
            cJSON_AddStringToObject(b, "written", written);
    }
    if (pred) {
        cJSON *p = cJSON_AddObjectToObject(j, "predicted_best");
        cJSON_AddStringToObject(p, "set", pred->set);
        cJSON_AddItemToObject(p, "measured_ms", num_or_null(pred->measured));
        cJSON_AddItemToObject(p, "gap_to_best", num_or_null(
            best && !isnan(pred->measured) ? pred->measured / best->measured - 1 : NAN));
        cJSON_AddItemToObject(p, "spearman", num_or_null(spearman(tu)));
    }
    return j;
}

static void print_summary(const cJSON *j)
{
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(j, "best");
    const cJSON *pred = cJSON_GetObjectItemCaseSensitive(j, "predicted_best");
    const char *note = ag_json_find_string(j, "cost_note");
    if (note)
        printf("note: %s\n", note);
    printf("%d variants and the file's defaults: %d pruned by the cost model (or over --cap), "
           "%d measured, %d failed\n",
           cJSON_GetObjectItemCaseSensitive(j, "variants")->valueint,
           cJSON_GetObjectItemCaseSensitive(j, "pruned")->valueint,
           cJSON_GetObjectItemCaseSensitive(j, "measured")->valueint,
           cJSON_GetObjectItemCaseSensitive(j, "failed")->valueint);
    if (best) {
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(best, "speedup_vs_defaults");
        printf("best: --set %s  %.4f ms", ag_json_find_string(best, "set"),
               cJSON_GetObjectItemCaseSensitive(best, "measured_ms")->valuedouble);
        if (cJSON_IsNumber(sp))
            printf("  (%.3fx the file's defaults)", sp->valuedouble);
        const char *w = ag_json_find_string(best, "written");
        printf("%s%s\n", w ? "  written to " : "", w ? w : "");
    }
    if (pred) {
        const cJSON *gap = cJSON_GetObjectItemCaseSensitive(pred, "gap_to_best");
        const cJSON *rho = cJSON_GetObjectItemCaseSensitive(pred, "spearman");
        if (cJSON_IsNumber(gap))
            printf("predicted best: %s, %.1f%% slower than the measured best\n",
                   ag_json_find_string(pred, "set"), 100 * gap->valuedouble);
        else
            printf("predicted best: %s, not measured successfully\n", ag_json_find_string(pred, "set"));
        if (cJSON_IsNumber(rho))
            printf("rank correlation of predicted and measured times (Spearman): %.2f\n", rho->valuedouble);
    }
}

int ag_cmd_tune(CakeCtx *ctx, int argc, char **argv)
{
    TuneOpts o;
    int json = ag_wants_json(argc, argv);
    if (!parse_opts(ctx, argc, argv, &o))
        return ag_finish(ctx, "tune", json, 1, NULL);
    long npts = ag_space_size(&o.space);
    if (npts >= MAX_VARIANTS) {
        diag_report(ctx, E1103, IR_NOSPAN, "the space has %ld points (at most %d)", npts, MAX_VARIANTS - 1);
        return ag_finish(ctx, "tune", json, 1, NULL);
    }
    Tune tu = {.n = (int)npts + 1};
    tu.v = calloc((size_t)tu.n, sizeof *tu.v);
    for (int i = 0; i < tu.n; i++) {
        tu.v[i].predicted = tu.v[i].measured = NAN;
        if (i)
            ag_space_point(&o.space, i - 1, tu.v[i].set, sizeof tu.v[i].set);
    }
    ArRunner runner = ar_local_runner();
    AgTools t;
    ag_tools_init(&t, &runner, NULL, NULL);
    t.timeout_s = o.child_timeout;
    validate(&t, &o, &tu);
    predict(&t, &o, &tu);
    if (tu.cost_note[0])
        fprintf(stderr, "tune: %s\n", tu.cost_note);
    prune(&o, &tu);
    measure(&t, &o, &tu);
    ag_tools_free(&t);
    char mixed[300];
    if (mixed_devices(&tu, mixed, sizeof mixed)) { /* times from two kinds of GPU decide nothing */
        Diag *d = diag_report(ctx, E1213, IR_NOSPAN, "the measurements ran on different kinds of device: "
                              "%s; no best is chosen", mixed);
        diag_help(ctx, d, "give --devices the GPUs of one kind (or a Slurm partition of one kind)");
        for (int i = 0; i < tu.n; i++)
            tu.v[i].measured = NAN;
    }
    const Variant *best = best_measured(&tu);
    char *written = best ? write_best(&o, best) : NULL;
    cJSON *j = report(&o, &tu, written);
    free(written);
    int code = 0;
    if (!best) {
        Diag *d = diag_report(ctx, E1104, IR_NOSPAN, "no variant of `%s` could be measured (%d failed)",
                              o.file, tu.failed);
        diag_help(ctx, d, "the table says why each failed; `cakec run FILE --bench` needs a GPU");
        code = 1;
    }
    if (!json) {
        print_table(&tu);
        cJSON_AddBoolToObject(j, "ok", code == 0);
        print_summary(j);
        cJSON_Delete(j);
        j = NULL;
    }
    for (int i = 0; i < tu.n; i++)
        cJSON_Delete(tu.v[i].on);
    free(tu.v);
    return ag_finish(ctx, "tune", json, code, j);
}
