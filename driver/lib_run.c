/* lib_run.c — `cakec lib run FILE --op OP --shape ... --check` (the chosen
 * variant through the oracle) and `cakec lib bench ...` (through the timer,
 * the output of `cakec run --bench`; `lib run --check --bench` does both, in
 * one process), on cake_lib.h. */
#include <stdlib.h>
#include <string.h>
#include "lib_cmd.h"

static int open_dev(CakeCtx *ctx, const LibOptions *o, RtDevice **dev)
{
    char err[512];
    if (rt_open(RT_AUTO, 0, dev, err, sizeof err) != RT_OK) {
        Diag *d = diag_report(ctx, E0973, IR_NOSPAN, "no GPU to run on: %s", err);
        diag_help(ctx, d, "`cakec lib select` works without a GPU");
        return 0;
    }
    if (o->opt.timeout)
        rt_set_timeout(*dev, atof(o->opt.timeout));
    return 1;
}

static int broken(CakeCtx *ctx, RtDevice *dev, const char *what)
{
    if (rt_health(dev) == RT_OK)
        return 0;
    diag_report(ctx, E0972, IR_NOSPAN, "the library's kernel %s: %s", what, rt_error(dev));
    return 1;
}

static int do_check(CakeCtx *ctx, const LibOptions *o, RtDevice *dev, CakeLib *lib,
                    const CakeLibChoice *ch, cJSON *extra)
{
    CheckOptions copt = {0};
    if (o->opt.seed)
        copt.seed = strtoull(o->opt.seed, NULL, 0);
    if (o->sample)
        copt.sample = 1;   /* a seeded sample of rows or tiles, at every shape (docs/checking.md) */
    CheckReport rep;
    uint32_t n = 0;
    int rc = cake_lib_check(ctx, lib, dev, ch, &copt, &rep, &n);
    if (rc == 2)
        return EXIT_BUG;
    if (rc)
        return rc == 3 ? EXIT_DEVICE : EXIT_USER;
    cJSON *arr = cJSON_AddArrayToObject(extra, "check");
    int ok = n > 0;
    for (uint32_t i = 0; i < n; i++) {
        cJSON_AddItemToArray(arr, drv_check_json(&rep));
        if (!o->opt.json)
            drv_check_text(&rep);
        ok &= rep.ok;
    }
    if (broken(ctx, dev, "failed during the check"))
        return EXIT_DEVICE;
    return ok ? EXIT_OK : EXIT_USER;
}

/* the cost model's prediction beside the measurement, as `run --bench` prints it;
   its diagnostics are not the run's */
static int bench_cost(CakeCtx *ctx, CakeLib *lib, const CakeLibChoice *ch, RtDevice *dev, CostResult *c)
{
    CakeLibVariant v;
    cake_lib_variant(lib, ch->op, ch->variant, &v);
    Target tg;
    const TgDevice *d = tg_device_match(rt_info(dev)->name);
    if (!d || !ir_lookup_target(v.target, strlen(v.target), &tg) || !tg_device_runs(d, tg))
        return 0;
    uint32_t nd = ctx->ndiags, ne = ctx->nerrors, nw = ctx->nwarnings;
    int ok = cake_lib_cost(ctx, lib, ch, d->name, c) == 0;
    ctx->ndiags = nd;
    ctx->nerrors = ne;
    ctx->nwarnings = nw;
    return ok;
}

static int do_bench(CakeCtx *ctx, const LibOptions *o, RtDevice *dev, cJSON *extra, CakeLib *lib,
                    const CakeLibChoice *ch)
{
    CakeBench b;
    RtClock *clk = rt_clock_open(dev);
    int mhz0 = rt_clock_sm_mhz(clk);
    int rc = cake_lib_bench(ctx, lib, dev, ch, o->opt.runs ? atoi(o->opt.runs) : 0, &b);
    int mhz1 = rt_clock_sm_mhz(clk);
    rt_clock_close(clk);
    cJSON_AddItemToObject(extra, "measured_on", drv_measured_on(ctx, dev, o->fake, mhz0, mhz1));
    if (rc == 2)
        return EXIT_BUG;
    if (rc == 1)
        return EXIT_USER;
    if (rc) {
        if (!broken(ctx, dev, "failed during the bench"))
            diag_report(ctx, E0972, IR_NOSPAN, "bench failed: %s", b.message);
        return EXIT_DEVICE;
    }
    CostResult c;
    int have = bench_cost(ctx, lib, ch, dev, &c);
    drv_bench_report(&b, have ? &c : NULL, extra, o->opt.json);
    return EXIT_OK;
}

/* the op's tensor arguments at the choice's shape, each in a zeroed buffer of
   4 bytes per element (more than any dtype of the library needs): 1, or 0 */
static int op_buffers(RtDevice *dev, const CakeLibOp *op, const CakeLibChoice *ch, RtPtr *ptrs,
                      size_t *bytes, uint32_t *nt)
{
    int ok = 1;
    *nt = 0;
    for (uint32_t i = 0; i < op->nargs; i++) {
        const CakeLibArg *a = &op->args[i];
        if (a->kind == CAKE_ARG_SCALAR)
            continue;
        int64_t n = 1;
        for (int d = 0; d < a->rank; d++) {
            int64_t x = a->extent[d];
            for (uint32_t k = 0; a->dims[d] && k < op->ndims; k++)
                if (!strcmp(op->dims[k], a->dims[d]))
                    x = ch->dimv[k];
            n *= x;
        }
        bytes[*nt] = (size_t)n * 4 + 256;
        ok &= rt_alloc(dev, bytes[*nt], &ptrs[*nt]) == RT_OK;
        ok &= rt_memset_d8(dev, ptrs[*nt], 0, bytes[*nt]) == RT_OK;
        (*nt)++;
    }
    return ok;
}

/* the op's tensors refilled: floating-point ones with the byte 0x3c (bf16 0.0115,
   f32 0.0115, e4m3 1.5), integer ones with zeros (indices in range) */
static int refill(RtDevice *dev, const CakeLibOp *op, const RtPtr *ptrs, const size_t *bytes)
{
    int ok = 1;
    for (uint32_t i = 0, t = 0; i < op->nargs; i++) {
        const CakeLibArg *a = &op->args[i];
        if (a->kind == CAKE_ARG_SCALAR)
            continue;
        int integer = a->dtype[0] == 'i' || a->dtype[0] == 'u';
        ok &= rt_memset_d8(dev, ptrs[t], integer ? 0 : 0x3c, bytes[t]) == RT_OK;
        t++;
    }
    return ok;
}

/* whether a launch through the library on buffers other than those its kept
   launch was made on (b1; the kept launch is b0's) writes what the same launch
   on b0 writes: -1 when it could not be run, else the bytes that differ */
static long rebind_check(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, const CakeLibOp *op,
                         const CakeLibChoice *ch, RtPtr *b0, RtPtr *b1, const size_t *bytes,
                         uint32_t nt, const void **scalars)
{
    if (!refill(dev, op, b0, bytes) || !refill(dev, op, b1, bytes))
        return -1;
    cake_lib_forget_launches(lib);
    if (cake_lib_launch(ctx, lib, dev, ch, b0, scalars, NULL) ||
        cake_lib_launch(ctx, lib, dev, ch, b1, scalars, NULL) || rt_wait(dev) != RT_OK)
        return -1;
    long diff = 0;
    for (uint32_t i = 0; i < nt && diff >= 0; i++) {
        unsigned char *h0 = malloc(bytes[i]), *h1 = malloc(bytes[i]);
        if (!h0 || !h1 || rt_copy_d2h(dev, h0, b0[i], bytes[i]) != RT_OK ||
            rt_copy_d2h(dev, h1, b1[i], bytes[i]) != RT_OK)
            diff = -1;
        for (size_t j = 0; diff >= 0 && j < bytes[i]; j++)
            diff += h0[j] != h1[j];
        free(h0);
        free(h1);
    }
    return diff;
}

enum { OV_N = 300, OV_REPS = 3 };

/* host ns per call of what: the least mean of OV_REPS rounds of OV_N calls, the
   queue drained before each round (and after, outside the timing) */
typedef struct {
    CakeCtx *ctx; CakeLib *lib; RtDevice *dev; const CakeLibChoice *ch;
    const CakeLibDim *dims; uint32_t ndims;
    RtPtr *bufs[2]; const void **scalars; CakePrepared *raw;
} Overhead;

enum { OV_RAW, OV_LIB, OV_LAUNCH, OV_MOVED, OV_FIRST };

static int ov_call(Overhead *o, int what, int i)
{
    CakeLibChoice c = *o->ch;
    if (what == OV_RAW)
        return rt_launch(o->dev, &o->raw->rl) != RT_OK;
    if (what == OV_FIRST)
        cake_lib_forget_launches(o->lib);
    if (what != OV_LAUNCH && cake_lib_select(o->ctx, o->lib, o->ch->op, o->dims, o->ndims, &c))
        return 1;
    RtPtr *t = o->bufs[what == OV_MOVED ? i & 1 : 0];
    return cake_lib_launch(o->ctx, o->lib, o->dev, &c, t, o->scalars, NULL) != 0;
}

static double ov_time(Overhead *o, int what)
{
    double best = -1;
    for (int r = 0; r < OV_REPS; r++) {
        rt_wait(o->dev);
        double t0 = lib_now_ns();
        for (int i = 0; i < OV_N; i++)
            if (ov_call(o, what, i))
                return -1;
        double ns = (lib_now_ns() - t0) / OV_N;
        best = best < 0 || ns < best ? ns : best;
    }
    rt_wait(o->dev);
    return best;
}

/* The host time a launch through the library adds: select + cake_lib_launch
 * against rt_launch of the same launch prepared once (ck: the one kernel; NULL
 * for a sequence, which has no raw side), on the runtime's stream; beside it
 * the launch alone, a launch on buffers that alternate between two sets (every
 * tensor map encoded again), and a launch with the kept launches dropped
 * first (each call prepares, as before the launch cache). */
static void overhead(CakeCtx *ctx, const LibOptions *o, CakeLib *lib, RtDevice *dev,
                     const CakeLibChoice *ch, CakeKernel *ck, const ShapeEnv *env, cJSON *extra)
{
    CakeLibOp op;
    cake_lib_op(lib, ch->op, &op);
    RtPtr b0[16] = {0}, b1[16] = {0};
    static const uint32_t zero[4];
    const void *scalars[16];
    for (uint32_t i = 0; i < 16; i++)
        scalars[i] = zero;
    uint32_t nt, nt1;
    size_t bytes[16];
    int ok = op_buffers(dev, &op, ch, b0, bytes, &nt) & op_buffers(dev, &op, ch, b1, bytes, &nt1);
    CakePrepared p;
    memset(&p, 0, sizeof p);
    if (ok && ck)
        ok = cake_prepare(ctx, ck, env, b0, scalars, &p) == 0;
    CakeLibDim dims[16];
    for (uint32_t i = 0; i < op.ndims; i++)
        dims[i] = (CakeLibDim){op.dims[i], ch->dimv[i]};
    Overhead ov = {ctx, lib, dev, ch, dims, op.ndims, {b0, b1}, scalars, &p};
    double t[5] = {-1, -1, -1, -1, -1};
    for (int w = ck ? OV_RAW : OV_LIB; ok && w <= OV_FIRST; w++)
        if (!ov_call(&ov, w, 0))   /* warm: the first call at the shape prepares */
            t[w] = ov_time(&ov, w);
    rt_wait(dev);
    long diff = ok ? rebind_check(ctx, lib, dev, &op, ch, b0, b1, bytes, nt, scalars) : -1;
    cake_prepared_free(&p);
    for (uint32_t i = 0; i < nt; i++)
        rt_free(dev, b0[i]);
    for (uint32_t i = 0; i < nt1; i++)
        rt_free(dev, b1[i]);
    if (!ok)
        return;
    double sel = lib_select_ns(ctx, lib, ch, 20000);
    cJSON *j = cJSON_AddObjectToObject(extra, "dispatch");
    cJSON_AddNumberToObject(j, "select_ns", sel);
    static const char *names[] = {"raw_launch_us", "lib_launch_us", "launch_only_us", "moved_us",
                                  "first_us"};
    for (int w = 0; w <= OV_FIRST; w++)
        if (t[w] >= 0)
            cJSON_AddNumberToObject(j, names[w], t[w] / 1e3);
    if (t[OV_RAW] >= 0 && t[OV_LIB] >= 0)
        cJSON_AddNumberToObject(j, "added_us", (t[OV_LIB] - t[OV_RAW]) / 1e3);
    cJSON_AddNumberToObject(j, "rebind_bytes_differ", (double)diff);
    if (o->opt.json)
        return;
    printf("dispatch: select %.0f ns; host us per launch: %.2f through the library", sel, t[OV_LIB] / 1e3);
    if (t[OV_RAW] >= 0)
        printf(", %.2f raw (%.2f added)", t[OV_RAW] / 1e3, (t[OV_LIB] - t[OV_RAW]) / 1e3);
    printf(", %.2f without select, %.2f on moved buffers, %.2f preparing each; a launch rebound to "
           "other buffers: %ld bytes differ\n", t[OV_LAUNCH] / 1e3, t[OV_MOVED] / 1e3, t[OV_FIRST] / 1e3,
           diff);
}

/* --fake-measure DEVICE: the cost model's time on DEVICE, times a deterministic
 * factor in [0.95, 1.05] drawn from the variant and the shape, as if measured
 * (the Slurm test's candidates, on machines without a GPU) */
static int fake_ms(CakeCtx *ctx, const LibOptions *o, CakeLib *lib, const CakeLibChoice *ch,
                   double *ms)
{
    if (cake_lib_predict(ctx, lib, ch, o->fake, ms))
        return 0;
    CakeLibVariant v;
    cake_lib_variant(lib, ch->op, ch->variant, &v);
    uint64_t h = 1469598103934665603ull;
    for (const char *p = v.name; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    for (uint32_t i = 0; i < 16; i++)
        h = (h ^ (uint64_t)ch->dimv[i]) * 1099511628211ull;
    *ms *= 0.95 + 0.1 * (double)(h >> 11) / (double)(1ull << 53);
    return 1;
}

static int fake_bench(CakeCtx *ctx, const LibOptions *o, CakeLib *lib, const CakeLibChoice *ch,
                      cJSON *extra)
{
    double ms;
    if (!fake_ms(ctx, o, lib, ch, &ms))
        return EXIT_USER;
    CakeLibVariant v;
    cake_lib_variant(lib, ch->op, ch->variant, &v);
    cJSON_AddStringToObject(extra, "variant", v.name);
    cJSON_AddStringToObject(extra, "device", ir_fmt(ctx, "fake:%s", o->fake));
    cJSON_AddItemToObject(extra, "measured_on", drv_measured_on(ctx, NULL, o->fake, 0, 0));
    cJSON *b = cJSON_AddObjectToObject(extra, "bench");
    cJSON_AddNumberToObject(b, "median_ms", ms);
    cJSON_AddBoolToObject(b, "fake", 1);
    if (!o->opt.json)
        printf("bench %-28s median %.4f ms (fake: the cost model on %s)\n", v.name, ms, o->fake);
    return EXIT_OK;
}

/* whether `name` is one of the comma-separated names of `list` (NULL: none) */
static int named_in(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        if (strcspn(p, ",") == n && !strncmp(p, name, n))
            return 1;
    }
    return 0;
}

/* `lib bench --all`: every variant whose domain holds at the shape, in this
 * process (a shape batch of `lib tune --per-task shape`): "bench_all" maps
 * each to its median, "failed_all" to why it could not be timed. A device
 * that breaks ends the batch. */
static int bench_all(CakeCtx *ctx, const LibOptions *o, CakeLib *lib, RtDevice *dev,
                     CakeLibChoice *ch, cJSON *extra)
{
    cJSON *times = cJSON_AddObjectToObject(extra, "bench_all");
    cJSON *failed = cJSON_AddObjectToObject(extra, "failed_all");
    cJSON *on = cJSON_AddObjectToObject(extra, "measured_on_all");
    RtClock *clk = o->fake ? NULL : rt_clock_open(dev);
    int timed = 0;
    for (uint32_t i = 0; i < ch->ntested; i++) {
        if (!ch->held[i])
            continue;
        CakeLibVariant v;
        cake_lib_variant(lib, ch->op, ch->tested[i], &v);
        ch->variant = ch->tested[i];
        double ms = -1;
        const char *why = NULL;
        if (named_in(o->skip, v.name)) {
            why = "skipped";
        } else if (o->fake) {
            why = fake_ms(ctx, o, lib, ch, &ms) ? NULL : "no prediction";
        } else if (dev && rt_health(dev) != RT_OK) {
            why = "device broken by an earlier variant";
        } else {
            CakeBench b;
            int mhz0 = rt_clock_sm_mhz(clk);
            int rc = cake_lib_bench(ctx, lib, dev, ch, o->opt.runs ? atoi(o->opt.runs) : 0, &b);
            if (!rc)
                cJSON_AddItemToObject(on, v.name, drv_measured_on(ctx, dev, o->fake, mhz0, rt_clock_sm_mhz(clk)));
            if (rc)
                why = rc == 1 ? "user_error" : rc == 2 ? "internal_error" : "fault";
            else
                ms = b.t.median_ms;
        }
        if (!why && o->fake)
            cJSON_AddItemToObject(on, v.name, drv_measured_on(ctx, NULL, o->fake, 0, 0));
        if (why) {
            cJSON_AddStringToObject(failed, v.name, why);
        } else {
            cJSON_AddNumberToObject(times, v.name, ms);
            timed++;
        }
        if (!o->opt.json)
            printf("bench %-28s %s%.4f%s\n", v.name, why ? why : "median ", why ? 0.0 : ms, why ? "" : " ms");
    }
    rt_clock_close(clk);
    cJSON_AddStringToObject(extra, "device", o->fake ? ir_fmt(ctx, "fake:%s", o->fake) : rt_info(dev)->name);
    return timed ? EXIT_OK : EXIT_DEVICE;
}

/* the diagnostics reported since `from` as one line ("E0931: no variant ..."),
   then forgotten: one shape's failure is its row of the batch, not the run's */
static const char *take_diags(CakeCtx *ctx, uint32_t from, uint32_t ne, uint32_t nw)
{
    const char *text = NULL;
    for (uint32_t i = from; i < ctx->ndiags; i++) {
        const Diag *d = &ctx->diags[i];
        const char *one = ir_fmt(ctx, "%s: %s", ir_diag_info[d->code].code, d->msg);
        text = text ? ir_fmt(ctx, "%s; %s", text, one) : one;
    }
    ctx->ndiags = from;
    ctx->nerrors = ne;
    ctx->nwarnings = nw;
    return text;
}

/* one line of a --shapes file ("OP DIM=V,..."): the choice, the check, the
   bench (and every variant's time with --all) as one JSON object; 0 ok, else
   the exit code of the line */
static int batch_line(CakeCtx *ctx, const LibOptions *o, CakeLib *lib, RtDevice *dev,
                      const char *line, cJSON *row)
{
    char opname[64], shape[256], variant[64];
    int n = sscanf(line, "%63s %255s %63s", opname, shape, variant);
    if (n < 2) {
        diag_report(ctx, E0002, IR_NOSPAN, "--shapes: cannot read `%s`", line);
        return EXIT_USER;
    }
    LibOptions one = *o;
    one.op = opname;
    one.opt.shape = shape;
    if (n == 3)   /* "OP SHAPE VARIANT": that variant at this line, as --variant */
        one.variant = variant;
    one.opt.json = 1;
    one.sub = "bench";
    cJSON_AddStringToObject(row, "op", opname);
    cJSON_AddStringToObject(row, "shape", one.opt.shape);
    CakeLibChoice ch;
    int code = lib_choose(ctx, &one, lib, &ch);
    if (code)
        return code;
    if (o->fake)   /* no device: the cost model's time, as `lib bench --fake-measure` */
        return fake_bench(ctx, &one, lib, &ch, row);
    CakeLibVariant v;
    cake_lib_variant(lib, ch.op, ch.variant, &v);
    cJSON_AddStringToObject(row, "variant", v.name);
    int checked = o->opt.check ? do_check(ctx, &one, dev, lib, &ch, row) : EXIT_OK;
    cJSON_AddBoolToObject(row, "check_ok", checked == EXIT_OK);
    if (checked == EXIT_DEVICE || checked == EXIT_BUG)
        return checked;
    code = named_in(o->skip, v.name) ? EXIT_OK : do_bench(ctx, &one, dev, row, lib, &ch);
    if (!code && o->all) {
        CakeLibChoice all = ch;
        bench_all(ctx, &one, lib, dev, &all, row);
    }
    return code ? code : checked;
}

/* `lib bench FILE --shapes F [--check] [--all]`: every line of F in this one
   process (the artifact opened and the device set up once), one JSON object
   per line on stdout as soon as it is known ("error" where the line failed);
   a device that breaks ends the batch. Exit 0 when every line ran and checked. */
static int batch(CakeCtx *ctx, const LibOptions *o, CakeLib *lib, RtDevice *dev)
{
    FILE *f = fopen(o->shapes, "r");
    if (!f) {
        diag_report(ctx, E0001, IR_NOSPAN, "cannot read the shapes file %s", o->shapes);
        return EXIT_USER;
    }
    char line[512];
    int worst = EXIT_OK, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        const char *p = line + strspn(line, " \t");
        if (!*p || *p == '#')
            continue;
        uint32_t nd = ctx->ndiags, ne = ctx->nerrors, nw = ctx->nwarnings;
        cJSON *row = cJSON_CreateObject();
        cJSON_AddNumberToObject(row, "line", lineno);
        int code = batch_line(ctx, o, lib, dev, p, row);
        cJSON_AddNumberToObject(row, "exit", code);
        const char *why = take_diags(ctx, nd, ne, nw);
        if (why)
            cJSON_AddStringToObject(row, "error", why);
        char *text = cJSON_PrintUnformatted(row);
        printf("%s\n", text);
        fflush(stdout);
        cJSON_free(text);
        cJSON_Delete(row);
        if (code > worst)
            worst = code;
        if (dev && rt_health(dev) != RT_OK)
            break;
    }
    fclose(f);
    return worst;
}

int lib_cmd_run(CakeCtx *ctx, const LibOptions *o)
{
    CakeLib *lib = NULL;
    RtDevice *dev = NULL;
    cJSON *extra = cJSON_CreateObject();
    CakeLibChoice ch;
    int code = lib_open_any(ctx, o->opt.file, &lib);
    int batched = o->shapes && !strcmp(o->sub, "bench");
    code = code == 2 ? EXIT_BUG : code ? EXIT_USER : batched ? EXIT_OK : lib_choose(ctx, o, lib, &ch);
    if (!code && batched) {
        if (!o->fake && !open_dev(ctx, o, &dev))
            return drv_finish_with(ctx, &o->opt, EXIT_DEVICE, extra);
        code = batch(ctx, o, lib, dev);
        if (dev && rt_health(dev) == RT_TIMEOUT)
            rt_exit_now(EXIT_DEVICE);
        if (!dev || rt_health(dev) == RT_OK)
            cake_lib_close(lib);
        rt_close(dev);
        if (ctx->ndiags)   /* the file's own failure; each line's are in its row */
            return drv_finish_with(ctx, &o->opt, code, extra);
        cJSON_Delete(extra);
        return code;
    }
    if (!code && o->fake && !strcmp(o->sub, "bench")) {
        if (o->all)
            code = bench_all(ctx, o, lib, NULL, &ch, extra);
        else
            code = fake_bench(ctx, o, lib, &ch, extra);
        cake_lib_close(lib);
        return drv_finish_with(ctx, &o->opt, code, extra);
    }
    if (!code && !open_dev(ctx, o, &dev))
        code = EXIT_DEVICE;
    CakeKernel *ck = NULL;
    int all = o->all && !strcmp(o->sub, "bench");
    if (!code && all) {
        code = bench_all(ctx, o, lib, dev, &ch, extra);
    } else if (!code && o->overhead) {   /* the raw launch beside: one kernel */
        CakeLibVariant ov;
        cake_lib_variant(lib, ch.op, ch.variant, &ov);
        int rc = ov.launches ? 0 : cake_lib_kernel(ctx, lib, dev, &ch, &ck);
        code = rc == 2 ? EXIT_BUG : rc == 3 ? EXIT_DEVICE : rc ? EXIT_USER : EXIT_OK;
    }
    if (!code && !all) {
        CakeLibVariant v;
        cake_lib_variant(lib, ch.op, ch.variant, &v);
        cJSON_AddStringToObject(extra, "variant", v.name);
        cJSON_AddStringToObject(extra, "kernel", v.kernel);
        cJSON_AddStringToObject(extra, "target", v.target);
        cJSON_AddStringToObject(extra, "device", rt_info(dev)->name);
        if (!o->opt.json)
            printf("variant %s (%s %s)\n", v.name, v.kernel, v.set);
        ShapeEnv env;
        cake_lib_choice_env(ctx, lib, &ch, &env);
        int check = !strcmp(o->sub, "run") && (o->opt.check || !o->opt.bench);
        int bench = !strcmp(o->sub, "bench") || o->opt.bench;
        if (check)
            code = do_check(ctx, o, dev, lib, &ch, extra);
        if (bench && code != EXIT_DEVICE && code != EXIT_BUG) {
            int bc = do_bench(ctx, o, dev, extra, lib, &ch);
            code = bc ? bc : code;
        }
        if (!code && o->overhead)
            overhead(ctx, o, lib, dev, &ch, ck, &env, extra);
    }
    if (dev && rt_health(dev) == RT_TIMEOUT) {
        drv_finish_with(ctx, &o->opt, EXIT_DEVICE, extra);
        rt_exit_now(EXIT_DEVICE);
    }
    if (!dev || rt_health(dev) == RT_OK)   /* a broken device: its modules cannot be unloaded */
        cake_lib_close(lib);
    rt_close(dev);
    return drv_finish_with(ctx, &o->opt, code, extra);
}
