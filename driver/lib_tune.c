/* lib_tune.c — `cakec lib tune DIR|FILE --shapes FILE [-o TABLE] [--runner local|slurm]`:
 * measures every variant whose domain holds at each shape of the shapes file
 * and writes the tuned table that `lib build --table` folds into the artifact
 * (docs/library.md, "Tuning"). Each candidate is one child `cakec lib bench
 * ART --op OP --shape S --variant V --json`, run by the batch runner of
 * agent.h: here one after another (a fault or a hang ends that candidate
 * only), or as one Slurm job array. --fake-measure DEVICE makes the children
 * answer with the cost model's time instead of a GPU's (the Slurm test). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <sys/stat.h>
#include "agent.h"
#include "lib_cmd.h"

typedef struct {
    const char *op, *shape;   /* as written */
    uint32_t line;
    CakeLibChoice ch;
} TuneShape;

typedef struct {
    uint32_t shape;           /* index into the shapes */
    const char *variant;
    char *argv[24];
} Cand;

static int tune_bad(CakeCtx *ctx, Span at, const char *msg)
{
    Diag *d = diag_report(ctx, E1211, at, "%s", msg);
    diag_help(ctx, d, "a shapes file has one `OP DIM=V,DIM=V` per line (# starts a comment)");
    return 0;
}

/* reads the shapes file into sh (at most max); the number read, or -1 */
static int read_shapes(CakeCtx *ctx, const LibOptions *o, CakeLib *lib, TuneShape *sh, int max)
{
    size_t len;
    char *text = ag_read_file(o->shapes, &len);
    if (!text) {
        Diag *d = diag_report(ctx, E0001, IR_NOSPAN, "cannot read the shapes file `%s`", o->shapes);
        diag_help(ctx, d, "--shapes FILE: one `OP DIM=V,...` per line");
        return -1;
    }
    uint32_t file = ctx_add_file(ctx, o->shapes, text, (uint32_t)len);
    const char *base = ctx->files[file].text;
    free(text);
    int n = 0, bad = 0;
    uint32_t lineno = 0;
    for (const char *p = base; *p && n < max;) {
        const char *eol = strchr(p, '\n');
        size_t ll = eol ? (size_t)(eol - p) : strlen(p);
        lineno++;
        char *line = ir_fmt(ctx, "%.*s", (int)ll, p);
        Span at = {file, (uint32_t)(p - base), (uint32_t)(p - base + ll)};
        p += ll + (eol != NULL);
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *op = strtok(line, " \t\r"), *shape = op ? strtok(NULL, " \t\r") : NULL;
        if (!op)
            continue;
        uint32_t opi, nd;
        CakeLibDim dims[16];
        if (!shape || strtok(NULL, " \t\r")) {
            bad |= !tune_bad(ctx, at, "expected `OP DIM=V,...`");
            continue;
        }
        uint32_t ne = ctx->nerrors;
        if (cake_lib_find_op(ctx, lib, op, &opi) || !lib_parse_dims(ctx, shape, dims, &nd, 16) ||
            cake_lib_explain(ctx, lib, opi, dims, nd, &sh[n].ch)) {
            if (ctx->nerrors > ne)
                diag_note(ctx, &ctx->diags[ctx->ndiags - 1], at, "in the shapes file");
            bad = 1;
            continue;
        }
        sh[n].op = op;
        sh[n].shape = shape;
        sh[n++].line = lineno;
    }
    return bad ? -1 : n;
}

/* the child command line of candidate k (variant NULL: the shape's batch, --all) */
static void cand_argv(const LibOptions *o, const char *cakec, const char *art, const TuneShape *sh,
                      Cand *k)
{
    int a = 0;
    const char *args[] = {cakec, "lib", "bench", art, "--op", sh->op, "--shape", sh->shape, "--json"};
    for (size_t j = 0; j < sizeof args / sizeof args[0]; j++)
        k->argv[a++] = (char *)args[j];
    if (k->variant) { k->argv[a++] = "--variant"; k->argv[a++] = (char *)k->variant; }
    else k->argv[a++] = "--all";
    if (o->opt.runs) { k->argv[a++] = "--runs"; k->argv[a++] = (char *)o->opt.runs; }
    if (o->fake) { k->argv[a++] = "--fake-measure"; k->argv[a++] = (char *)o->fake; }
    if (o->opt.timeout) { k->argv[a++] = "--timeout"; k->argv[a++] = (char *)o->opt.timeout; }
    k->argv[a] = NULL;
}

/* the candidates: every variant whose domain holds at each shape, one task each
   (--per-task candidate, the default), or one task per shape (--per-task shape) */
static int make_cands(const LibOptions *o, const CakeLib *lib, const char *cakec, const char *art,
                      const TuneShape *sh, int nsh, int per_shape, Cand **out)
{
    int cap = 0, n = 0;
    for (int i = 0; i < nsh; i++)
        cap += (int)sh[i].ch.ntested;
    Cand *c = calloc((size_t)cap + 1, sizeof *c);
    for (int i = 0; c && i < nsh; i++) {
        if (per_shape) {
            c[n].shape = (uint32_t)i;
            cand_argv(o, cakec, art, &sh[i], &c[n++]);
            continue;
        }
        for (uint32_t t = 0; t < sh[i].ch.ntested; t++) {
            if (!sh[i].ch.held[t])
                continue;
            CakeLibVariant v;
            cake_lib_variant(lib, sh[i].ch.op, sh[i].ch.tested[t], &v);
            c[n].shape = (uint32_t)i;
            c[n].variant = v.name;
            cand_argv(o, cakec, art, &sh[i], &c[n++]);
        }
    }
    *out = c;
    return c ? n : -1;
}

/* one result into its entry of the table: the time, or why it failed */
/* where a measurement ran (lib bench's measured_on) into the entry's measured_on */
static void record_on(cJSON *on, const char *variant, const cJSON *m)
{
    if (on && cJSON_IsObject(m))
        cJSON_AddItemToObject(on, variant, cJSON_Duplicate(m, 1));
}

static void record(const ArResult *r, cJSON *times, cJSON *failed, cJSON *on, const char *variant,
                   char *device, size_t devcap)
{
    cJSON *doc = cJSON_Parse(r->out);
    const cJSON *bench = cJSON_GetObjectItemCaseSensitive(doc, "bench");
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(bench, "median_ms");
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(doc, "device");
    if (r->status == AR_OK && cJSON_IsNumber(ms) && ms->valuedouble > 0) {
        cJSON_AddNumberToObject(times, variant, ms->valuedouble);
        record_on(on, variant, cJSON_GetObjectItemCaseSensitive(doc, "measured_on"));
        if (cJSON_IsString(dev) && !device[0])
            snprintf(device, devcap, "%s", dev->valuestring);
    } else {
        cJSON_AddStringToObject(failed, variant, ar_status_name(r->status));
    }
    cJSON_Delete(doc);
}

/* a shape batch's result: every held variant timed or failed */
static void record_batch(const CakeLib *lib, const TuneShape *sh, const ArResult *r, cJSON *times,
                         cJSON *failed, cJSON *on, char *device, size_t devcap)
{
    cJSON *doc = cJSON_Parse(r->out);
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(doc, "bench_all");
    const cJSON *all_on = cJSON_GetObjectItemCaseSensitive(doc, "measured_on_all");
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(doc, "failed_all");
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(doc, "device");
    for (uint32_t t = 0; t < sh->ch.ntested; t++) {
        if (!sh->ch.held[t])
            continue;
        CakeLibVariant v;
        cake_lib_variant(lib, sh->ch.op, sh->ch.tested[t], &v);
        const cJSON *ms = cJSON_GetObjectItemCaseSensitive(all, v.name);
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(why, v.name);
        if (cJSON_IsNumber(ms) && ms->valuedouble > 0) {
            cJSON_AddNumberToObject(times, v.name, ms->valuedouble);
            record_on(on, v.name, cJSON_GetObjectItemCaseSensitive(all_on, v.name));
        } else
            cJSON_AddStringToObject(failed, v.name, cJSON_IsString(w) ? w->valuestring : ar_status_name(r->status));
    }
    if (cJSON_IsString(dev) && cJSON_GetArraySize(all) > 0 && !device[0])
        snprintf(device, devcap, "%s", dev->valuestring);
    cJSON_Delete(doc);
}

/* A shape batch ends at a variant that hangs or faults the device: the
 * variants after it ("device broken by an earlier variant") run again, one
 * task each, so that one bad variant costs only itself. */
static void retry_broken(const LibOptions *o, const ArBatchOpts *bo, const char *cakec, const char *art,
                         const TuneShape *sh, int nsh, cJSON **times, cJSON **failed, cJSON **on,
                         char *device, size_t devcap)
{
    int n = 0;
    for (int i = 0; i < nsh; i++)
        n += cJSON_GetArraySize(failed[i]);
    Cand *c = calloc((size_t)n + 1, sizeof *c);
    ArJob *jobs = calloc((size_t)n + 1, sizeof *jobs);
    ArResult *res = calloc((size_t)n + 1, sizeof *res);
    int k = 0;
    for (int i = 0; c && jobs && res && i < nsh; i++) {
        const cJSON *f;
        cJSON_ArrayForEach(f, failed[i]) {
            if (!cJSON_IsString(f) || strcmp(f->valuestring, "device broken by an earlier variant"))
                continue;
            c[k].shape = (uint32_t)i;
            c[k].variant = f->string;
            cand_argv(o, cakec, art, &sh[i], &c[k]);
            jobs[k] = (ArJob){.argv = (const char *const *)c[k].argv,
                              .timeout_s = o->child_timeout ? atof(o->child_timeout) : 120};
            k++;
        }
    }
    char err[600];
    if (k) {
        fprintf(stderr, "lib tune: %d variants again, one task each (their batch broke the device)\n", k);
        if (ar_batch(bo, jobs, k, res, err, sizeof err) == 0)
            for (int j = 0; j < k; j++) {
                char *name = strdup(c[j].variant);   /* the key goes with its item */
                if (!name)
                    break;
                cJSON_DeleteItemFromObjectCaseSensitive(failed[c[j].shape], name);
                record(&res[j], times[c[j].shape], failed[c[j].shape], on[c[j].shape], name, device,
                       devcap);
                fprintf(stderr, "lib tune: %s %s %-26s %s\n", sh[c[j].shape].op, sh[c[j].shape].shape,
                        name, ar_status_name(res[j].status));
                ar_result_free(&res[j]);
                free(name);
            }
    }
    free(c);
    free(jobs);
    free(res);
}

/* the artifact the candidates run: FILE itself, or DIR built into the work folder */
static const char *artifact(CakeCtx *ctx, const LibOptions *o, char *buf, size_t cap)
{
    if (!o->opt.file || access(ir_fmt(ctx, "%s/manifest.json", o->opt.file), R_OK))
        return o->opt.file;
    const char *dir = o->slurm_dir;
    if (dir && mkdir(dir, 0755) && errno != EEXIST)
        dir = NULL;
    else if (!dir) {
        const char *tmp = getenv("TMPDIR");
        snprintf(buf, cap, "%s/cake-tune.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        dir = mkdtemp(buf);
    }
    if (!dir)
        return NULL;
    const char *art = ir_fmt(ctx, "%s/tune.cakelib", dir);
    CakeLibBuildOptions bo = {.no_model = 1, .ptx_only = o->ptx};
    return cake_lib_build(ctx, o->opt.file, art, &bo) ? NULL : art;
}

/* the kinds of device the measurements of the table ran on: one, or E1213
 * (a table is for one kind of GPU: its times decide between variants). Adds
 * the table's "devices": each GPU seen (name, PCI address or the
 * CUDA_VISIBLE_DEVICES it was given), its candidates and SM clock range. */
static int one_kind(CakeCtx *ctx, cJSON *table)
{
    cJSON *devs = cJSON_AddArrayToObject(table, "devices");
    const cJSON *e, *m;
    const char *kinds[8] = {0};
    int nkinds = 0, count[8] = {0};
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(table, "entries"))
        cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(e, "measured_on")) {
            const char *name = ag_json_find_string(m, "device");
            const char *where = ag_json_find_string(m, "pci_bus_id");
            if (!where)
                where = ag_json_find_string(m, "visible_devices");
            if (!name)
                continue;
            int k = 0;
            while (k < nkinds && strcmp(kinds[k], name))
                k++;
            if (k == nkinds && nkinds < 8)
                kinds[nkinds++] = name;
            if (k < 8)
                count[k]++;
            cJSON *d = NULL, *x;
            cJSON_ArrayForEach(x, devs)
                if (!strcmp(ag_json_find_string(x, "device"), name) &&
                    !strcmp(ag_json_find_string(x, "where"), where ? where : "")) d = x;
            if (!d) {
                d = cJSON_CreateObject();
                cJSON_AddStringToObject(d, "device", name);
                cJSON_AddStringToObject(d, "where", where ? where : "");
                cJSON_AddNumberToObject(d, "candidates", 0);
                cJSON_AddItemToArray(devs, d);
            }
            cJSON *n = cJSON_GetObjectItemCaseSensitive(d, "candidates");
            cJSON_SetNumberValue(n, n->valuedouble + 1);
            const cJSON *clk = cJSON_GetObjectItemCaseSensitive(m, "sm_clock_mhz"), *c;
            cJSON_ArrayForEach(c, clk) {
                cJSON *lo = cJSON_GetObjectItemCaseSensitive(d, "sm_clock_min_mhz");
                cJSON *hi = cJSON_GetObjectItemCaseSensitive(d, "sm_clock_max_mhz");
                if (!lo || c->valuedouble < lo->valuedouble) {
                    cJSON_DeleteItemFromObjectCaseSensitive(d, "sm_clock_min_mhz");
                    cJSON_AddNumberToObject(d, "sm_clock_min_mhz", c->valuedouble);
                }
                if (!hi || c->valuedouble > hi->valuedouble) {
                    cJSON_DeleteItemFromObjectCaseSensitive(d, "sm_clock_max_mhz");
                    cJSON_AddNumberToObject(d, "sm_clock_max_mhz", c->valuedouble);
                }
            }
        }
    if (nkinds <= 1)
        return 1;
    char list[512] = "";
    for (int k = 0; k < nkinds; k++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s (%d candidates)", k ? ", " : "",
                 kinds[k], count[k]);
    Diag *d = diag_report(ctx, E1213, IR_NOSPAN, "the measurements ran on %d kinds of device: %s; "
                          "the table is not written", nkinds, list);
    diag_help(ctx, d, "a table is for one kind of GPU: give --devices the GPUs of one kind (or a "
                      "Slurm partition of one kind: --partition, CAKE_SBATCH_ARGS=--constraint=...) "
                      "and tune once per kind");
    return 0;
}

static int tune(CakeCtx *ctx, const LibOptions *o, cJSON **table)
{
    ArBatchOpts bo = {.dir = o->slurm_dir, .partition = o->partition, .gres = o->gres};
    char why[200];
    if (!ar_batch_kind(o->runner, &bo.kind)) {
        Diag *d = diag_report(ctx, E0002, IR_NOSPAN, "--runner `%s`: local or slurm", o->runner);
        diag_help(ctx, d, "the local runner is the default");
        return EXIT_USER;
    }
    /* one worker per visible GPU unless told (--fake-measure needs none) */
    if (!ar_batch_spread(&bo, o->workers, o->devices, bo.kind == AR_BATCH_LOCAL && !o->fake, why,
                         sizeof why)) {
        diag_report(ctx, E0002, IR_NOSPAN, "%s", why);
        return EXIT_USER;
    }
    if (!o->shapes) {
        diag_report(ctx, E0002, IR_NOSPAN, "`cakec lib tune` needs --shapes FILE");
        return EXIT_USER;
    }
    char buf[512], cakec[4096];
    const char *art = artifact(ctx, o, buf, sizeof buf);
    CakeLib *lib = NULL;
    if (!art || cake_lib_open(ctx, art, &lib))
        return EXIT_USER;
    enum { MAX_SHAPES = 4096 };
    TuneShape *sh = calloc(MAX_SHAPES, sizeof *sh);
    int nsh = sh ? read_shapes(ctx, o, lib, sh, MAX_SHAPES) : -1;
    Cand *c = NULL;
    int per_shape = o->per_task && !strcmp(o->per_task, "shape");
    if (o->per_task && !per_shape && strcmp(o->per_task, "candidate")) {
        diag_report(ctx, E0002, IR_NOSPAN, "--per-task `%s`: candidate or shape", o->per_task);
        nsh = -1;
    }
    const char *self = ag_cakec_path(cakec, sizeof cakec);   /* $CAKE_RUN_CMD, or this cakec */
    int nc = nsh < 0 ? -1 : make_cands(o, lib, self, art, sh, nsh, per_shape, &c);
    if (nc < 0) {
        free(sh);
        free(c);
        cake_lib_close(lib);
        return EXIT_USER;
    }
    ArJob *jobs = calloc((size_t)nc + 1, sizeof *jobs);
    ArResult *res = calloc((size_t)nc + 1, sizeof *res);
    for (int i = 0; i < nc; i++)
        jobs[i] = (ArJob){.argv = (const char *const *)c[i].argv,
                          .timeout_s = o->child_timeout ? atof(o->child_timeout) : 120};
    char err[600];
    fprintf(stderr, "lib tune: %d %s at %d shapes, %s runner", nc, per_shape ? "tasks" : "candidates", nsh,
            bo.kind == AR_BATCH_SLURM ? "slurm" : "local");
    if (bo.kind == AR_BATCH_LOCAL && bo.workers > 1)
        fprintf(stderr, ", %d workers over %d GPUs", bo.workers, bo.ndevices ? bo.ndevices : 1);
    fputc('\n', stderr);
    int rc = ar_batch(&bo, jobs, nc, res, err, sizeof err);
    int code = EXIT_OK;
    if (rc) {
        Diag *d = diag_report(ctx, E1212, IR_NOSPAN, "the %s runner failed: %s", o->runner ? o->runner : "local", err);
        diag_help(ctx, d, "`sinfo` shows whether the cluster is up; --runner local runs here");
        code = EXIT_USER;
    } else {
        char device[256] = "";
        cJSON *j = cJSON_CreateObject(), *entries = cJSON_CreateArray();
        cJSON **times = calloc((size_t)nsh + 1, sizeof *times), **failed = calloc((size_t)nsh + 1, sizeof *failed);
        cJSON **on = calloc((size_t)nsh + 1, sizeof *on);
        for (int i = 0; i < nsh; i++) {
            cJSON *e = cJSON_CreateObject();
            CakeLibOp op;
            cake_lib_op(lib, sh[i].ch.op, &op);
            cJSON_AddStringToObject(e, "op", op.name);
            cJSON *s = cJSON_AddObjectToObject(e, "shape");
            for (uint32_t d = 0; d < op.ndims; d++)
                cJSON_AddNumberToObject(s, op.dims[d], (double)sh[i].ch.dimv[d]);
            times[i] = cJSON_AddObjectToObject(e, "times_ms");
            failed[i] = cJSON_AddObjectToObject(e, "failed");
            on[i] = cJSON_AddObjectToObject(e, "measured_on");
            cJSON_AddItemToArray(entries, e);
        }
        for (int i = 0; i < nc; i++) {
            if (c[i].variant)
                record(&res[i], times[c[i].shape], failed[c[i].shape], on[c[i].shape], c[i].variant, device,
                       sizeof device);
            else
                record_batch(lib, &sh[c[i].shape], &res[i], times[c[i].shape], failed[c[i].shape],
                             on[c[i].shape], device, sizeof device);
            fprintf(stderr, "lib tune: %s %s %-26s %s\n", sh[c[i].shape].op, sh[c[i].shape].shape,
                    c[i].variant ? c[i].variant : "(every variant)", ar_status_name(res[i].status));
            ar_result_free(&res[i]);
        }
        if (per_shape)
            retry_broken(o, &bo, self, art, sh, nsh, times, failed, on, device, sizeof device);
        cJSON_AddStringToObject(j, "device", device[0] ? device : "unknown");
        cJSON_AddStringToObject(j, "runner", bo.kind == AR_BATCH_SLURM ? "slurm" : "local");
        cJSON_AddItemToObject(j, "entries", entries);
        free(times);
        free(failed);
        free(on);
        *table = j;
        if (!one_kind(ctx, j)) {
            cJSON_Delete(j);
            *table = NULL;
            code = EXIT_USER;
        }
        if (!device[0]) {
            Diag *d = diag_report(ctx, E1212, IR_NOSPAN, "no candidate could be measured");
            diag_help(ctx, d, "`cakec lib bench` needs a GPU (or --fake-measure DEVICE)");
            code = EXIT_USER;
        }
    }
    free(jobs);
    free(res);
    free(c);
    free(sh);
    cake_lib_close(lib);
    return code;
}

int lib_cmd_tune(CakeCtx *ctx, const LibOptions *o)
{
    cJSON *table = NULL;
    int code = tune(ctx, o, &table);
    if (table && o->opt.out) {
        char *s = cJSON_Print(table);
        if (!s || !ag_write_file(o->opt.out, s, strlen(s))) {
            diag_report(ctx, E0001, IR_NOSPAN, "cannot write `%s`", o->opt.out);
            code = EXIT_USER;
        }
        free(s);
    }
    cJSON *extra = cJSON_CreateObject();
    if (table)
        cJSON_AddItemToObject(extra, "table", table);
    if (table && !o->opt.json && !o->opt.out) {
        char *s = cJSON_Print(table);
        puts(s ? s : "");
        free(s);
    }
    return drv_finish_with(ctx, &o->opt, code, extra);
}
