/* lib_cmd.c — `cakec lib ...`: the kernel library's commands on cake_lib.h
 * (docs/library.md).
 *
 *   cakec lib check DIR                       the manifest and every variant check
 *   cakec lib build DIR -o FILE [-j N] [--table T] [--ptx] [--no-model] [--device D] [-v]
 *   cakec lib build FILE -o OUT [--table T]   the artifact again with another table
 *   cakec lib ops FILE|DIR                    the ops, signatures and variants
 *   cakec lib select FILE|DIR --op OP --shape M=..,N=.. [--device NAME]
 *   cakec lib run FILE --op OP --shape ... [--check] [--bench] [--seed S]
 *   cakec lib bench FILE --op OP --shape ... [--runs N]
 *   cakec lib tune DIR --shapes FILE [-o TABLE] [--runner local|slurm] ...
 * Every one takes --json (one document on stdout). Exit codes as cakec's. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "agent.h"
#include <cjson/cJSON.h>
#include "cake_lib.h"
#include "driver.h"
#include "lib_cmd.h"

static const char *const why_names[] = {"tuned", "cost-model", "manifest-order", "tuned-near", "tuned-fit",
                                        "measured", "measured-near"};

static int is_dir(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- options --------------------------------------------------------------------- */

static int take(int argc, char **argv, int *i, const char *name, const char **dst)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n))
        return 0;
    if (argv[*i][n] == '=') {
        *dst = argv[*i] + n + 1;
        return 1;
    }
    if (argv[*i][n] || *i + 1 >= argc)
        return 0;
    *dst = argv[++*i];
    return 1;
}

static const char *parse(int argc, char **argv, LibOptions *o)
{
    if (argc < 2)
        return "`cakec lib` needs a command: check, build, ops, select, run, bench, tune";
    o->sub = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) o->opt.json = 1;
        else if (!strcmp(a, "--check")) o->opt.check = 1;
        else if (!strcmp(a, "--bench")) o->opt.bench = 1;
        else if (!strcmp(a, "--ptx")) o->ptx = 1;
        else if (!strcmp(a, "--no-model")) o->no_model = 1;
        else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) o->verbose = 1;
        else if (take(argc, argv, &i, "-o", &o->opt.out)) continue;
        else if (take(argc, argv, &i, "--op", &o->op)) continue;
        else if (take(argc, argv, &i, "--shape", &o->opt.shape)) continue;
        else if (take(argc, argv, &i, "--table", &o->table)) continue;
        else if (take(argc, argv, &i, "--device", &o->opt.device)) continue;
        else if (take(argc, argv, &i, "--runs", &o->opt.runs)) continue;
        else if (take(argc, argv, &i, "--seed", &o->opt.seed)) continue;
        else if (take(argc, argv, &i, "--shapes", &o->shapes)) continue;
        else if (take(argc, argv, &i, "--runner", &o->runner)) continue;
        else if (take(argc, argv, &i, "--workers", &o->workers)) continue;
        else if (take(argc, argv, &i, "--fake-measure", &o->fake)) continue;
        else if (take(argc, argv, &i, "--slurm-dir", &o->slurm_dir)) continue;
        else if (take(argc, argv, &i, "--partition", &o->partition)) continue;
        else if (take(argc, argv, &i, "--devices", &o->devices)) continue;
        else if (take(argc, argv, &i, "--gres", &o->gres)) continue;
        else if (take(argc, argv, &i, "--child-timeout", &o->child_timeout)) continue;
        else if (take(argc, argv, &i, "--timeout", &o->opt.timeout)) continue;
        else if (take(argc, argv, &i, "--repeat", &o->repeat)) continue;
        else if (take(argc, argv, &i, "--variant", &o->variant)) continue;
        else if (take(argc, argv, &i, "--skip", &o->skip)) continue;
        else if (take(argc, argv, &i, "-j", &o->jobs)) continue;
        else if (!strcmp(a, "--overhead")) o->overhead = 1;
        else if (!strcmp(a, "--all")) o->all = 1;
        else if (!strcmp(a, "--sample")) o->sample = 1;
        else if (take(argc, argv, &i, "--per-task", &o->per_task)) continue;
        else if (a[0] == '-' && a[1]) {
            o->bad_option = a;
            return "unknown option for `cakec lib`, or an option without its value";
        }
        else if (o->opt.file)
            return "`cakec lib` takes one library file or folder";
        else
            o->opt.file = a;
    }
    if (!o->opt.file)
        return "`cakec lib` needs a library file or folder";
    static const char *const subs[] = {"check", "build", "ops", "select", "run", "bench", "tune", NULL};
    for (int i = 0; subs[i]; i++)
        if (!strcmp(o->sub, subs[i]))
            return NULL;
    return "unknown `cakec lib` command (check, build, ops, select, run, bench, tune)";
}

/* "M=4096,N=8192" */
int lib_parse_dims(CakeCtx *ctx, const char *spec, CakeLibDim *dims, uint32_t *n, uint32_t max)
{
    *n = 0;
    const char *p = spec ? spec : "";
    while (*p) {
        while (*p == ',' || *p == ' ' || *p == ';')
            p++;
        if (!*p)
            break;
        const char *eq = strchr(p, '=');
        char *end;
        long long v = eq ? strtoll(eq + 1, &end, 0) : 0;
        if (!eq || eq == p || end == eq + 1 || (*end && *end != ',' && *end != ' ' && *end != ';') ||
            *n == max) {
            Diag *d = diag_report(ctx, E0002, IR_NOSPAN, "--shape: cannot read `%s`", spec);
            diag_help(ctx, d, "write --shape M=4096,N=8192 with the op's dims");
            return 0;
        }
        dims[*n].name = ir_fmt(ctx, "%.*s", (int)(eq - p), p);
        dims[(*n)++].value = v;
        p = end;
    }
    return 1;
}

/* ---- opening -------------------------------------------------------------------------- */

int lib_open_any(CakeCtx *ctx, const char *path, CakeLib **lib)
{
    return is_dir(path) ? cake_lib_read_dir(ctx, path, lib) : cake_lib_open(ctx, path, lib);
}

static int finish(CakeCtx *ctx, const LibOptions *o, int rc, CakeLib *lib, cJSON *extra)
{
    cake_lib_close(lib);
    return drv_finish_with(ctx, &o->opt, rc, extra);
}

static int code_of(int rc)
{
    return rc == 2 ? EXIT_BUG : rc == 3 ? EXIT_DEVICE : rc ? EXIT_USER : EXIT_OK;
}

/* ---- ops ------------------------------------------------------------------------------- */

static cJSON *op_json(const CakeLib *lib, uint32_t i)
{
    CakeLibOp op;
    cake_lib_op(lib, i, &op);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "op", op.name);
    cJSON_AddStringToObject(j, "doc", op.doc);
    cJSON *dims = cJSON_AddArrayToObject(j, "dims");
    for (uint32_t d = 0; d < op.ndims; d++)
        cJSON_AddItemToArray(dims, cJSON_CreateString(op.dims[d]));
    cJSON *args = cJSON_AddArrayToObject(j, "args");
    for (uint32_t a = 0; a < op.nargs; a++) {
        const CakeLibArg *g = &op.args[a];
        cJSON *aj = cJSON_CreateObject();
        cJSON_AddStringToObject(aj, "name", g->name);
        cJSON_AddStringToObject(aj, "kind", g->kind == CAKE_ARG_TENSOR ? "tensor" : "scalar");
        cJSON_AddStringToObject(aj, "dtype", g->dtype);
        cJSON *sh = cJSON_AddArrayToObject(aj, "dims");
        for (int d = 0; d < g->rank; d++)
            cJSON_AddItemToArray(sh, g->dims[d] ? cJSON_CreateString(g->dims[d])
                                                : cJSON_CreateNumber((double)g->extent[d]));
        cJSON_AddItemToArray(args, aj);
    }
    cJSON *vars = cJSON_AddArrayToObject(j, "variants");
    for (uint32_t v = 0; v < op.nvariants; v++) {
        CakeLibVariant lv;
        cake_lib_variant(lib, i, v, &lv);
        cJSON *vj = cJSON_CreateObject();
        cJSON_AddStringToObject(vj, "name", lv.name);
        cJSON_AddStringToObject(vj, "file", lv.file);
        cJSON_AddStringToObject(vj, "kernel", lv.kernel);
        cJSON_AddStringToObject(vj, "set", lv.set);
        cJSON_AddStringToObject(vj, "target", lv.target);
        cJSON_AddItemToArray(vars, vj);
    }
    return j;
}

static void op_text(const CakeLib *lib, uint32_t i)
{
    CakeLibOp op;
    cake_lib_op(lib, i, &op);
    printf("%s(", op.name);
    for (uint32_t a = 0; a < op.nargs; a++) {
        const CakeLibArg *g = &op.args[a];
        printf("%s%s: %s", a ? ", " : "", g->name, g->dtype);
        for (int d = 0; d < g->rank; d++)
            if (g->dims[d])
                printf("%s%s", d ? ", " : "[", g->dims[d]);
            else
                printf("%s%lld", d ? ", " : "[", (long long)g->extent[d]);
        printf("%s", g->rank ? "]" : "");
    }
    printf(")%s%s\n", op.doc[0] ? "  # " : "", op.doc);
    for (uint32_t v = 0; v < op.nvariants; v++) {
        CakeLibVariant lv;
        cake_lib_variant(lib, i, v, &lv);
        printf("    %-26s %-8s %s %s%s%s\n", lv.name, lv.target, lv.file, lv.kernel,
               lv.set[0] ? " --set " : "", lv.set);
    }
}

static int cmd_ops(CakeCtx *ctx, const LibOptions *o)
{
    CakeLib *lib;
    int rc = lib_open_any(ctx, o->opt.file, &lib);
    if (rc)
        return finish(ctx, o, code_of(rc), NULL, NULL);
    cJSON *extra = cJSON_CreateObject();
    cJSON *ops = cJSON_AddArrayToObject(extra, "ops");
    cJSON_AddStringToObject(extra, "tuned_device", cake_lib_tuned_device(lib));
    for (uint32_t i = 0; i < cake_lib_nops(lib); i++) {
        cJSON_AddItemToArray(ops, op_json(lib, i));
        if (!o->opt.json)
            op_text(lib, i);
    }
    return finish(ctx, o, EXIT_OK, lib, extra);
}

/* ---- select ------------------------------------------------------------------------------ */

/* --variant V: that variant instead of the table's, if its domain holds */
static int force_variant(CakeCtx *ctx, const CakeLib *lib, const char *name, CakeLibChoice *ch)
{
    CakeLibOp op;
    cake_lib_op(lib, ch->op, &op);
    for (uint32_t v = 0; v < op.nvariants; v++) {
        CakeLibVariant lv;
        cake_lib_variant(lib, ch->op, v, &lv);
        if (strcmp(lv.name, name))
            continue;
        const char *why = cake_lib_failed_cond(lib, ch, v);
        if (why) {
            Diag *d = diag_report(ctx, E1203, IR_NOSPAN, "variant `%s` of op `%s` does not cover "
                                  "this shape: it requires `%s`", name, op.name, why);
            diag_help(ctx, d, "leave out --variant to let the library choose");
            return 1;
        }
        ch->variant = v;
        return 0;
    }
    Diag *d = diag_report(ctx, E1201, IR_NOSPAN, "op `%s` has no variant `%s`", op.name, name);
    diag_help(ctx, d, "`cakec lib ops FILE` lists the variants");
    return 1;
}

/* the op and its choice at --shape, with every domain tested: 0, or the exit code */
int lib_choose(CakeCtx *ctx, const LibOptions *o, CakeLib *lib, CakeLibChoice *ch)
{
    uint32_t op, n;
    CakeLibDim dims[16];
    if (!o->op) {
        Diag *d = diag_report(ctx, E0002, IR_NOSPAN, "`cakec lib %s` needs --op OP", o->sub);
        diag_help(ctx, d, "`cakec lib ops FILE` lists the ops");
        return EXIT_USER;
    }
    int rc = cake_lib_find_op(ctx, lib, o->op, &op);
    if (!rc && !lib_parse_dims(ctx, o->opt.shape, dims, &n, 16))
        rc = 1;
    if (!rc)
        rc = cake_lib_explain(ctx, lib, op, dims, n, ch);
    if (!rc && o->variant)
        rc = force_variant(ctx, lib, o->variant, ch);
    return code_of(rc);
}

/* the measured shape a choice was made from (why measured or measured-near): its dims,
   the chosen variant's time there, and for measured-near the fit's pick it replaced */
/* the measured shape of choice ch: its dims in dimv, the chosen variant's time there in
   *t (0 when it was not timed there); the number of variants timed there (0: none) */
static uint32_t measured_at(const CakeLib *lib, const CakeLibChoice *ch, int64_t *dimv, double *t)
{
    uint32_t var[CAKE_LIB_MAX_VARIANTS];
    double ms[CAKE_LIB_MAX_VARIANTS];
    uint32_t n = ch->measured < 0 ? 0 : cake_lib_measured(lib, ch->op, (uint32_t)ch->measured, dimv, var, ms,
                                                          CAKE_LIB_MAX_VARIANTS);
    *t = 0;
    for (uint32_t i = 0; i < n; i++)
        if (var[i] == ch->variant)
            *t = ms[i];
    return n;
}

static void measured_json(const CakeLib *lib, const CakeLibOp *op, const CakeLibChoice *ch, cJSON *j)
{
    int64_t dimv[16];
    double t;
    uint32_t n = measured_at(lib, ch, dimv, &t);
    if (!n)
        return;
    cJSON *m = cJSON_AddObjectToObject(j, "measured");
    cJSON_AddStringToObject(m, "why", ch->why == CAKE_SEL_MEASURED ? "measured at this shape"
                                      : "measured at the nearest measured shape of this class, where "
                                        "the fit's pick was slower");
    cJSON *sh = cJSON_AddObjectToObject(m, "shape");
    for (uint32_t i = 0; i < op->ndims; i++)
        cJSON_AddNumberToObject(sh, op->dims[i], (double)dimv[i]);
    if (t > 0)
        cJSON_AddNumberToObject(m, "ms", t);
    if (ch->why == CAKE_SEL_MEASURED_NEAR) {
        CakeLibVariant f;
        cake_lib_variant(lib, ch->op, ch->fit_variant, &f);
        cJSON_AddStringToObject(m, "fit_pick", f.name);
        cJSON_AddNumberToObject(m, "fit_pick_slowdown", ch->fit_slowdown);
    }
}

static cJSON *choice_json(const CakeLib *lib, const CakeLibChoice *ch)
{
    CakeLibOp op;
    CakeLibVariant v;
    cake_lib_op(lib, ch->op, &op);
    cake_lib_variant(lib, ch->op, ch->variant, &v);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "op", op.name);
    cJSON *sh = cJSON_AddObjectToObject(j, "shape");
    for (uint32_t i = 0; i < op.ndims; i++)
        cJSON_AddNumberToObject(sh, op.dims[i], (double)ch->dimv[i]);
    cJSON_AddStringToObject(j, "variant", v.name);
    cJSON_AddStringToObject(j, "kernel", v.kernel);
    cJSON_AddStringToObject(j, "file", v.file);
    cJSON_AddStringToObject(j, "set", v.set);
    cJSON_AddStringToObject(j, "target", v.target);
    cJSON_AddStringToObject(j, "why", why_names[ch->why]);
    cJSON_AddNumberToObject(j, "rank", ch->rank);
    measured_json(lib, &op, ch, j);
    char key[32];
    snprintf(key, sizeof key, "%016llx", (unsigned long long)ch->class_key);
    cJSON_AddStringToObject(j, "class", key);
    cJSON_AddStringToObject(j, "tuned_device", cake_lib_tuned_device(lib));
    cJSON *tested = cJSON_AddArrayToObject(j, "domains");
    for (uint32_t i = 0; i < ch->ntested; i++) {
        CakeLibVariant t;
        cake_lib_variant(lib, ch->op, ch->tested[i], &t);
        cJSON *tj = cJSON_CreateObject();
        cJSON_AddStringToObject(tj, "variant", t.name);
        cJSON_AddBoolToObject(tj, "holds", ch->held[i]);
        const char *why = cake_lib_failed_cond(lib, ch, ch->tested[i]);
        if (why)
            cJSON_AddStringToObject(tj, "fails", why);
        cJSON_AddItemToArray(tested, tj);
    }
    return j;
}

static void measured_text(const CakeLib *lib, const CakeLibOp *op, const CakeLibChoice *ch, const char *dev)
{
    int64_t dimv[16];
    double t;
    uint32_t n = measured_at(lib, ch, dimv, &t);
    if (ch->why == CAKE_SEL_MEASURED) {
        printf("  why: measured at this shape (on %s): %.4f ms, rank %u of %u timed there\n", dev, t,
               ch->rank, n);
        return;
    }
    CakeLibVariant f;
    cake_lib_variant(lib, ch->op, ch->fit_variant, &f);
    printf("  why: measured at the nearest measured shape of class %016llx,", (unsigned long long)ch->class_key);
    for (uint32_t i = 0; i < op->ndims; i++)
        printf("%s%s=%lld", i ? "," : " ", op->dims[i], (long long)dimv[i]);
    printf(" (on %s): %.4f ms there, rank %u; the fit's pick %s was %.2fx slower there\n", dev, t, ch->rank,
           f.name, ch->fit_slowdown);
}

static void choice_text(const CakeLib *lib, const CakeLibChoice *ch)
{
    CakeLibOp op;
    CakeLibVariant v;
    cake_lib_op(lib, ch->op, &op);
    cake_lib_variant(lib, ch->op, ch->variant, &v);
    printf("%s", op.name);
    for (uint32_t i = 0; i < op.ndims; i++)
        printf("%s%s=%lld", i ? "," : " ", op.dims[i], (long long)ch->dimv[i]);
    printf(" -> %s (%s %s%s%s, %s)\n", v.name, v.kernel, v.target, v.set[0] ? " " : "", v.set, v.file);
    const char *dev = cake_lib_tuned_device(lib);
    if (ch->why == CAKE_SEL_TUNED)
        printf("  why: tuned table hit (class %016llx, measured on %s), rank %u\n",
               (unsigned long long)ch->class_key, dev, ch->rank);
    else if (ch->why == CAKE_SEL_NEAR)
        printf("  why: no tuned point for class %016llx: the nearest tuned class's ranking (measured on "
               "%s), rank %u\n", (unsigned long long)ch->class_key, dev, ch->rank);
    else if (ch->why == CAKE_SEL_FIT)
        printf("  why: the fitted wave model's ranking at this shape (from the tuned times on %s), "
               "rank %u\n", dev, ch->rank);
    else if (ch->why == CAKE_SEL_MEASURED || ch->why == CAKE_SEL_MEASURED_NEAR)
        measured_text(lib, &op, ch, dev);
    else if (ch->why == CAKE_SEL_MODEL)
        printf("  why: no tuned point for class %016llx: the cost model's ranking, rank %u\n",
               (unsigned long long)ch->class_key, ch->rank);
    else
        printf("  why: no ranking covers a variant whose domain holds: the first in manifest order\n");
    for (uint32_t i = 0; i < ch->ntested; i++) {
        CakeLibVariant t;
        cake_lib_variant(lib, ch->op, ch->tested[i], &t);
        const char *why = cake_lib_failed_cond(lib, ch, ch->tested[i]);
        printf("  %-5s %-26s%s%s\n", ch->held[i] ? "holds" : "fails", t.name, why ? " " : "",
               why ? why : "");
    }
}

double lib_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* the time of one cake_lib_select at the choice's shape, averaged over n calls */
double lib_select_ns(CakeCtx *ctx, const CakeLib *lib, const CakeLibChoice *ch, int n)
{
    CakeLibOp op;
    CakeLibDim dims[16];
    cake_lib_op(lib, ch->op, &op);
    for (uint32_t i = 0; i < op.ndims; i++)
        dims[i] = (CakeLibDim){op.dims[i], ch->dimv[i]};
    CakeLibChoice c;
    n = n > 0 ? n : 100000;
    double t0 = lib_now_ns();
    for (int i = 0; i < n; i++)
        cake_lib_select(ctx, lib, ch->op, dims, op.ndims, &c);
    return (lib_now_ns() - t0) / n;
}

static int tuned_device_matches(CakeCtx *ctx, const CakeLib *lib, const char *device)
{
    const char *dev = cake_lib_tuned_device(lib);
    if (!device || !dev[0] || !strcmp(dev, device))
        return 1;
    Diag *d = diag_report(ctx, E1206, IR_NOSPAN, "the library's dispatch table was tuned on %s, not %s",
                          dev, device);
    diag_help(ctx, d, "tune it on this device (`cakec lib tune`), or build it without --table");
    return 0;
}

static int cmd_select(CakeCtx *ctx, const LibOptions *o)
{
    CakeLib *lib;
    int rc = lib_open_any(ctx, o->opt.file, &lib);
    if (rc)
        return finish(ctx, o, code_of(rc), NULL, NULL);
    if (!tuned_device_matches(ctx, lib, o->opt.device))
        return finish(ctx, o, EXIT_USER, lib, NULL);
    CakeLibChoice ch;
    int code = lib_choose(ctx, o, lib, &ch);
    if (code)
        return finish(ctx, o, code, lib, NULL);
    cJSON *extra = cJSON_CreateObject();
    cJSON *sj = choice_json(lib, &ch);
    cJSON_AddItemToObject(extra, "select", sj);
    if (!o->opt.json)
        choice_text(lib, &ch);
    if (o->repeat) {
        double ns = lib_select_ns(ctx, lib, &ch, atoi(o->repeat));
        cJSON_AddNumberToObject(sj, "select_ns", ns);
        if (!o->opt.json)
            printf("  select: %.1f ns per call (%d calls)\n", ns, atoi(o->repeat));
    }
    return finish(ctx, o, EXIT_OK, lib, extra);
}

/* ---- check, build -------------------------------------------------------------------------- */

static int cmd_check(CakeCtx *ctx, const LibOptions *o)
{
    return drv_finish(ctx, &o->opt, code_of(cake_lib_check_dir(ctx, o->opt.file)));
}

/* -j's default: the processors online, at most 8 (1 where that is unknown) */
static int default_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

static int cmd_build(CakeCtx *ctx, const LibOptions *o)
{
    if (!o->opt.out) {
        Diag *d = diag_report(ctx, E0002, IR_NOSPAN, "`cakec lib build` needs -o FILE");
        diag_help(ctx, d, "cakec lib build library -o cake.cakelib");
        return drv_finish(ctx, &o->opt, EXIT_USER);
    }
    if (!is_dir(o->opt.file))   /* an artifact: only its table changes */
        return drv_finish(ctx, &o->opt, code_of(cake_lib_retable(ctx, o->opt.file, o->table, o->opt.out)));
    CakeLibBuildOptions bo = {.table = o->table, .no_model = o->no_model, .ptx_only = o->ptx,
                              .device = o->opt.device, .verbose = o->verbose};
    int jn = o->jobs ? atoi(o->jobs) : default_jobs();
    if (jn > 1)
        bo.workers = jn;   /* forked after the check (lib_build.c) */
    int rc = cake_lib_build(ctx, o->opt.file, o->opt.out, &bo);
    return drv_finish(ctx, &o->opt, code_of(rc));
}

int drv_cmd_lib(CakeCtx *ctx, int argc, char **argv)
{
    LibOptions o;
    memset(&o, 0, sizeof o);
    for (int i = 1; i < argc; i++)
        o.opt.json |= !strcmp(argv[i], "--json");
    const char *err = parse(argc, argv, &o);
    o.opt.command = o.sub ? ir_fmt(ctx, "lib %s", o.sub) : "lib";
    if (err) {
        Diag *d = o.bad_option ? diag_report(ctx, E0002, IR_NOSPAN, "%s: `%s`", err, o.bad_option)
                               : diag_report(ctx, E0002, IR_NOSPAN, "%s", err);
        diag_help(ctx, d, o.bad_option && !strcmp(o.bad_option, "--sim")
                              ? "a variant runs on the CPU executor as a kernel: `cakec run FILE --sim --set ... "
                                "--reference REF.tir` (docs/library.md lists the `cakec lib` options)"
                              : "docs/library.md lists the `cakec lib` commands and options (`cakec --help`)");
        return drv_finish(ctx, &o.opt, EXIT_USER);
    }
    if (!strcmp(o.sub, "check"))
        return cmd_check(ctx, &o);
    if (!strcmp(o.sub, "build"))
        return cmd_build(ctx, &o);
    if (!strcmp(o.sub, "ops"))
        return cmd_ops(ctx, &o);
    if (!strcmp(o.sub, "select"))
        return cmd_select(ctx, &o);
    if (!strcmp(o.sub, "tune"))
        return lib_cmd_tune(ctx, &o);
    return lib_cmd_run(ctx, &o);   /* run, bench */
}
