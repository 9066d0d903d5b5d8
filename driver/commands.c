/* commands.c — the cakec commands past `check`: `cakec FILE` (compile and
 * emit) and `cakec run` (check against the reference, bench), on libcake. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "cake.h"
#include "passes.h"
#include "verify.h"
#include "driver.h"
#include "lib_cmd.h"

/* ---- target selection ------------------------------------------------------ */

static int pick_target(CakeCtx *ctx, const Options *o, const Module *m, Target *tg)
{
    if (!o->target) {
        *tg = tg_first_of(m);   /* the first target the file's kernels list */
        return 1;
    }
    if (ir_lookup_target(o->target, strlen(o->target), tg))
        return 1;
    Diag *d = diag_report(ctx, E0112, IR_NOSPAN, "unknown target `%s`", o->target);
    diag_help(ctx, d, "targets: sm_80, sm_90a, gfx90a, gfx942; sm_100a is checked but not compiled "
                   "yet (code generation reports E0902)");
    return 0;
}

/* the target for running kernel k on the device (tg_pick_for_arch): sm_90
   runs sm_90a code, or sm_80 code. When none of k's targets runs there, the
   device's own target (then no kernel lists it: E0970 names it) */
static Target device_target(const Kernel *k, const RtDeviceInfo *info)
{
    Target tg = info->backend == RT_HIP ? TG_GFX942 : TG_SM80;
    if (!tg_pick_for_arch(k, info->arch, &tg))
        tg_pick_for_arch(NULL, info->arch, &tg);
    return tg;
}

/* ---- cakec FILE [-o OUT] [--target T] [--emit E] ------------------------------ */

static int emit_kind(CakeCtx *ctx, const char *emit, Target tg, CgEmit *what)
{
    int amd = tg_vendor(tg) == VENDOR_AMD;
    if (!emit)
        *what = amd ? CG_EMIT_HSACO : CG_EMIT_PTX;
    else if (!strcmp(emit, "ptx") || !strcmp(emit, "asm"))
        *what = CG_EMIT_PTX;
    else if (!strcmp(emit, "llvm"))
        *what = CG_EMIT_LLVM;
    else if (!strcmp(emit, "hsaco") && amd)
        *what = CG_EMIT_HSACO;
    else if (!strcmp(emit, "obj"))
        *what = CG_EMIT_OBJ;
    else {
        Diag *d = diag_report(ctx, E0002, IR_NOSPAN, "cannot emit `%s` for target %s", emit,
                              ir_target_names[tg]);
        diag_help(ctx, d, "--emit ptx|llvm|ir for NVIDIA targets, --emit hsaco|obj|ptx|llvm|ir for AMD");
        return 0;
    }
    return 1;
}

static int write_output(CakeCtx *ctx, const char *path, const char *data, size_t len)
{
    FILE *f = path ? fopen(path, "wb") : stdout;
    if (!f || fwrite(data, 1, len, f) != len) {
        diag_report(ctx, E0001, IR_NOSPAN, "cannot write `%s`", path ? path : "<stdout>");
        if (f && f != stdout)
            fclose(f);
        return 0;
    }
    if (f != stdout)
        fclose(f);
    return 1;
}

/* *low: m with every kernel that lists tg replaced by its lowered instance at
   the bindings of env (each kernel takes those that name its params) */
static int lower_all(CakeCtx *ctx, Module *m, Target tg, const ShapeEnv *env, Module *low)
{
    *low = *m;
    low->kernels = arena_alloc(&ctx->arena, (m->nkernels + 1) * sizeof *low->kernels);
    int rc = 0;
    for (uint32_t i = 0; i < m->nkernels; i++) {
        Kernel *k = m->kernels[i];
        const CakeInstance *inst;
        low->kernels[i] = k;
        if (!ir_kernel_targets(k, tg))
            continue;
        int r = cake_instance_env(ctx, m, k, tg, env, CAKE_INST_LOWERED, &inst);
        if (r == 0)
            low->kernels[i] = inst->k;
        else if (r != 1)
            return r;   /* a bug, or the code generator plugin */
        else
            rc = EXIT_USER;   /* the next kernels' diagnostics too */
    }
    return rc;
}

/* registers, spills and local memory of each compiled kernel (nvJitLink or
 * ptxas; lib/cake_res.c adds W0901/W0902): "kernels" in the JSON document, a
 * line per kernel on stderr in text mode. Returns 2 on an internal error. */
static int resource_report(CakeCtx *ctx, const Options *o, Module *m, Target tg, const char *ptx,
                           size_t len, cJSON *extra)
{
    RtPtxRes res[32];
    int n;
    const char *tool;
    if (cake_ptx_report(ctx, m, tg, ptx, len, res, 32, &n, &tool))
        return 2;
    cJSON *arr = cJSON_AddArrayToObject(extra, "kernels");
    cJSON_AddStringToObject(extra, "resources_from", tool ? tool : "none (no nvJitLink or ptxas here)");
    for (int i = 0; i < n; i++) {
        cJSON *k = cJSON_CreateObject();
        cJSON_AddStringToObject(k, "name", res[i].name);
        cJSON_AddStringToObject(k, "target", ir_target_names[tg]);
        cJSON_AddNumberToObject(k, "registers", res[i].regs);
        cJSON_AddNumberToObject(k, "spill_store_bytes", res[i].spill_store_bytes);
        cJSON_AddNumberToObject(k, "spill_load_bytes", res[i].spill_load_bytes);
        cJSON_AddNumberToObject(k, "local_bytes", res[i].stack_bytes);
        if (res[i].separate)
            cJSON_AddStringToObject(k, "note", "assembled as a separate unit (nvJitLink): setmaxnreg ignored");
        cJSON_AddItemToArray(arr, k);
        if (!o->json)
            fprintf(stderr, "%s: %s: %d registers, %d bytes spill stores, %d bytes spill loads, "
                    "%d bytes local memory (%s, %s)\n", o->file, res[i].name, res[i].regs,
                    res[i].spill_store_bytes, res[i].spill_load_bytes, res[i].stack_bytes, tool,
                    ir_target_names[tg]);
    }
    return 0;
}

int drv_cmd_compile(CakeCtx *ctx, const Options *o, Module *m)
{
    Target tg;
    CgEmit what = CG_EMIT_PTX;
    if (!pick_target(ctx, o, m, &tg))
        return drv_finish(ctx, o, EXIT_USER);
    int emit_ir = o->emit && (!strcmp(o->emit, "ir") || !strcmp(o->emit, "tirl"));
    if (!emit_ir && !emit_kind(ctx, o->emit, tg, &what))
        return drv_finish(ctx, o, EXIT_USER);
    ShapeEnv env;
    shape_env_clear(&env);
    if (o->set && m->nkernels && !cake_parse_bindings(ctx, m->kernels[0], o->set, NULL, &env))
        return drv_finish(ctx, o, EXIT_USER);
    Module low;
    int rc = lower_all(ctx, m, tg, &env, &low);
    if (rc)
        return drv_finish(ctx, o, rc);
    if (emit_ir) {
        FILE *f = o->out ? fopen(o->out, "w") : stdout;
        if (!f)
            return drv_finish(ctx, o, EXIT_USER);
        ir_print_module(ctx, &low, f);
        if (f != stdout)
            fclose(f);
        return drv_finish(ctx, o, EXIT_OK);
    }
    if ((what == CG_EMIT_HSACO || what == CG_EMIT_OBJ) && !o->out && isatty(fileno(stdout))) {
        Diag *d = diag_report(ctx, E0002, IR_NOSPAN, "a binary code object needs `-o FILE`");
        diag_help(ctx, d, "write it to a file: `-o kernel.hsaco`");
        return drv_finish(ctx, o, EXIT_USER);
    }
    CgOptions opt = {.opt_level = 3};
    char *out = NULL;
    size_t len = 0;
    rc = cake_emit(ctx, &low, NULL, tg, what, &opt, &out, &len);
    if (rc == 0 && !write_output(ctx, o->out, out, len))
        rc = 1;
    cJSON *extra = cJSON_CreateObject();
    int report = !o->no_report && !getenv("CAKE_NO_REPORT");   /* fuzzers and scripts opt out */
    if (rc == 0 && what == CG_EMIT_PTX && report && resource_report(ctx, o, &low, tg, out, len, extra))
        rc = EXIT_BUG;
    free(out);
    return drv_finish_with(ctx, o, rc, extra); /* cake_emit's codes are the exit codes */
}

/* ---- cakec run ------------------------------------------------------------------ */

cJSON *drv_check_json(const CheckReport *r)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "shape", r->shape);
    cJSON_AddStringToObject(j, "status", check_status_name(r->status));
    cJSON_AddBoolToObject(j, "ok", r->ok);
    cJSON_AddNumberToObject(j, "seed", (double)r->seed);
    cJSON_AddNumberToObject(j, "max_abs_err", r->max_abs_err);
    cJSON_AddNumberToObject(j, "max_rel_err", r->max_rel_err);
    cJSON_AddNumberToObject(j, "mean_abs_err", r->mean_abs_err);
    cJSON_AddNumberToObject(j, "bad_elements", (double)r->n_bad);
    cJSON_AddBoolToObject(j, "unwritten", r->unwritten);
    cJSON_AddBoolToObject(j, "nan", r->has_nan);
    if (r->first_bad_output >= 0) {
        const CheckOutput *out = &r->out[r->first_bad_output];
        cJSON *fb = cJSON_AddObjectToObject(j, "first_bad");
        cJSON_AddStringToObject(fb, "output", out->name);
        cJSON *idx = cJSON_AddArrayToObject(fb, "index");
        for (int d = 0; d < out->rank; d++)
            cJSON_AddItemToArray(idx, cJSON_CreateNumber((double)out->first_bad[d]));
        cJSON_AddNumberToObject(fb, "got", out->first_bad_got);
        cJSON_AddNumberToObject(fb, "want", out->first_bad_want);
        cJSON_AddStringToObject(fb, "why", check_bad_name(out->bad));
    }
    if (r->sample.on) { /* a large shape: only these rows/tiles were compared */
        cJSON *sm = cJSON_AddObjectToObject(j, "sample");
        cJSON_AddStringToObject(sm, "kind", r->sample.tiles ? "tiles" : "rows");
        cJSON_AddNumberToObject(sm, "count", (double)r->sample.count);
        cJSON_AddNumberToObject(sm, "of", (double)r->sample.of);
        if (r->sample.tiles) {
            cJSON *tl = cJSON_AddArrayToObject(sm, "tile");
            cJSON_AddItemToArray(tl, cJSON_CreateNumber((double)r->sample.tile[0]));
            cJSON_AddItemToArray(tl, cJSON_CreateNumber((double)r->sample.tile[1]));
        }
        cJSON_AddNumberToObject(sm, "seed", (double)r->sample.seed);
    }
    cJSON_AddNumberToObject(j, "ref_seconds", r->ref_seconds);       /* host: the fp64 reference */
    cJSON_AddNumberToObject(j, "device_seconds", r->device_seconds); /* the launch, copies included */
    cJSON_AddStringToObject(j, "message", r->message);
    return j;
}

cJSON *drv_bench_json(const CakeBench *b)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "shape", b->shape);
    cJSON_AddNumberToObject(j, "median_ms", b->t.median_ms);
    cJSON_AddNumberToObject(j, "min_ms", b->t.min_ms);
    cJSON_AddNumberToObject(j, "mean_ms", b->t.mean_ms);
    cJSON_AddNumberToObject(j, "runs", b->t.runs);
    cJSON_AddNumberToObject(j, "bytes", b->bytes);
    cJSON_AddNumberToObject(j, "flops", b->flops);
    cJSON_AddNumberToObject(j, "gbps", b->gbps);
    cJSON_AddNumberToObject(j, "tflops", b->tflops);
    cJSON_AddNumberToObject(j, "peak_gbps", b->peak_gbps);
    cJSON_AddNumberToObject(j, "roofline_fraction", b->roofline);
    cJSON_AddNumberToObject(j, "registers", b->regs);
    cJSON_AddNumberToObject(j, "local_bytes", b->local_bytes);
    cJSON_AddNumberToObject(j, "shared_bytes", b->shared_bytes);
    cJSON *g = cJSON_AddArrayToObject(j, "grid"), *bl = cJSON_AddArrayToObject(j, "block");
    for (int i = 0; i < 3; i++) {
        cJSON_AddItemToArray(g, cJSON_CreateNumber(b->grid[i]));
        cJSON_AddItemToArray(bl, cJSON_CreateNumber(b->block[i]));
    }
    return j;
}

void drv_check_text(const CheckReport *r)
{
    printf("check %-28s %-5s max_rel_err %.3g  bad %lld%s%s\n", r->shape,
           check_status_name(r->status), r->max_rel_err, (long long)r->n_bad,
           r->unwritten ? "  UNWRITTEN" : "", r->has_nan ? "  NaN" : "");
    if (r->sample.on && r->sample.tiles)
        printf("      sampled %lld of %lld output tiles of %lld x %lld (seed %#llx)\n",
               (long long)r->sample.count, (long long)r->sample.of, (long long)r->sample.tile[0],
               (long long)r->sample.tile[1], (unsigned long long)r->sample.seed);
    else if (r->sample.on)
        printf("      sampled %lld of %lld rows (seed %#llx)\n", (long long)r->sample.count,
               (long long)r->sample.of, (unsigned long long)r->sample.seed);
    if (!r->ok && r->message[0])
        printf("      %s\n", r->message);
}

void drv_bench_text(const CakeBench *b, const CostResult *c)
{
    /* the model's line first: scripts take the last line as the measurement */
    if (c)
        printf("model %-28s predicted %.4f ms [%.4f .. %.4f] %s, %s-bound; roofline %.4f ms = %.0f%% "
               "of the measured time\n", c->device, c->time_ms, c->lo_ms, c->hi_ms,
               c->measure ? "measure" : "model", cost_resource_names[c->bottleneck], c->roofline_ms,
               100 * c->roofline_ms / b->t.median_ms);
    printf("bench %-28s median %.4f ms  %.1f GB/s  %.2f TFLOP/s  %.0f%% of %.0f GB/s  regs %d\n",
           b->shape, b->t.median_ms, b->gbps, b->tflops, 100 * b->roofline, b->peak_gbps, b->regs);
}


typedef struct {
    RtDevice *dev;
    CakeKernel ck;
    cJSON *extra;
    Kernel *reference;
    int code;
} RunState;

static int open_device(CakeCtx *ctx, const Options *o, RunState *rs)
{
    char err[512];
    RtStatus st = rt_open(RT_AUTO, 0, &rs->dev, err, sizeof err);
    if (st != RT_OK) {
        Diag *d = diag_report(ctx, E0973, IR_NOSPAN, "no GPU to run on: %s", err);
        diag_help(ctx, d, "`cakec run FILE --sim` checks on the CPU (docs/sim.md); `cakec check FILE` "
                          "and `cakec FILE --emit ptx` also work without a GPU");
        return 0;
    }
    if (o->timeout)
        rt_set_timeout(rs->dev, atof(o->timeout));
    return 1;
}

/* The shape `run` will check (--shape) or time (--bench: --shape over the
 * kernel's `shape` defaults) must satisfy every assume (E0961 at the assume:
 * outside them the kernel may compute only part of its output, and a bench
 * would time that) and leave every `values` range non-empty (E0124). Checked
 * before any GPU is opened; a shape not complete yet is left to the check. */
static int shape_in_contract(CakeCtx *ctx, const Options *o, const Kernel *k, const ShapeEnv *given)
{
    if (!o->shape && !o->bench)
        return 1;
    ShapeEnv env = *given;
    if (o->bench)
        shape_env_add_defaults(k, &env);
    if (!shape_env_bind_params(ctx, k, &env) || !shape_env_complete(ctx, k, &env, 0))
        return 1;
    NodeId failed = 0;
    if (!shape_env_assumes_hold(ctx, k, &env, 0, &failed)) {
        char buf[256];
        Diag *d = diag_report(ctx, E0961, k->nodes[failed].span,
                              "this assume does not hold for %s: refusing to %s the kernel there",
                              shape_env_format(ctx, k, &env, buf, sizeof buf),
                              o->bench ? "time" : "check");
        diag_help(ctx, d, "outside its assumes a kernel may compute only part of its output "
                          "(a bench there measures the wrong work): pick a shape the assumes allow");
        return 0;
    }
    for (uint32_t i = 0; i < k->nargs; i++) {
        int64_t lo, hi;
        if (!check_arg_values(ctx, k, i, &env, &lo, &hi))
            return 0;
    }
    return 1;
}

/* the options of `run` that need no device: wrong ones are exit 1, before any GPU */
static int run_options_ok(CakeCtx *ctx, const Options *o, const Module *m)
{
    const char *bad = NULL;
    char *end;
    if (o->runs && (strtol(o->runs, &end, 10) <= 0 || *end))
        bad = "--runs takes a positive whole number";
    else if (o->timeout && (strtod(o->timeout, &end) <= 0 || *end))
        bad = "--timeout takes a positive number of seconds";
    else if (o->seed && (strtoull(o->seed, &end, 0), *end))
        bad = "--seed takes a whole number";
    else if (o->tol_scale && (strtod(o->tol_scale, &end) < 1 || *end))
        bad = "--tol-scale takes a number >= 1 (it only widens the tolerances)";
    if (bad) {
        diag_report(ctx, E0002, IR_NOSPAN, "%s", bad);
        return 0;
    }
    Kernel *k = NULL;
    if ((o->kernel || m->nkernels) && cake_find_kernel(ctx, m, o->kernel, TG__COUNT, &k))
        return 0;
    ShapeEnv env;
    return !k || (cake_parse_bindings(ctx, k, o->set, o->shape, &env) &&
                  shape_in_contract(ctx, o, k, &env));
}

static int load_reference(CakeCtx *ctx, const Options *o, RunState *rs, Sym name)
{
    if (!o->reference)
        return 1;
    Module *rm;
    int rc = cake_verify_file(ctx, o->reference, NULL, &rm);
    if (rc == 2)
        rs->code = EXIT_BUG;
    if (rc || ctx->nerrors || !rm->nkernels)
        return 0;
    rs->reference = rm->kernels[0];
    for (uint32_t i = 0; i < rm->nkernels; i++)
        if (rm->kernels[i]->name == name)
            rs->reference = rm->kernels[i];
    return 1;
}

static int device_broken(CakeCtx *ctx, RunState *rs, const char *what)
{
    RtStatus h = rt_health(rs->dev);
    if (h == RT_OK)
        return 0;
    Diag *d = diag_report(ctx, E0972, rs->ck.k->span, "kernel `%s` %s: %s",
                          ir_symstr(ctx, rs->ck.k->name), what, rt_error(rs->dev));
    diag_help(ctx, d, h == RT_TIMEOUT ? "the kernel may never finish: look for a wait nobody signals"
                                      : "an out-of-bounds access or a misaligned vector access is "
                                        "the usual cause; run compute-sanitizer on the kernel");
    rs->code = EXIT_DEVICE;
    return 1;
}

/* checks ck; `set` names the parameter combination ("CAUSAL=1") when the run
   checks several, and is appended to each report's shape */
/* appends n check reports to the document's "check" array (each shape labelled with
 * `label`, the bindings, when given) and prints them; 1 when there are some and all pass */
static int add_reports(const Options *o, RunState *rs, CheckReport *reps, uint32_t n, const char *label)
{
    cJSON *arr = cJSON_GetObjectItem(rs->extra, "check");
    if (!arr)
        arr = cJSON_AddArrayToObject(rs->extra, "check");
    int ok = n > 0;
    for (uint32_t i = 0; i < n; i++) {
        if (label) {
            size_t w = strlen(reps[i].shape);
            snprintf(reps[i].shape + w, sizeof reps[i].shape - w, "%s%s", w ? ", " : "", label);
        }
        cJSON_AddItemToArray(arr, drv_check_json(&reps[i]));
        if (!o->json)
            drv_check_text(&reps[i]);
        ok &= reps[i].ok;
    }
    return ok;
}

static void do_check(CakeCtx *ctx, const Options *o, RunState *rs, CakeKernel *ck,
                     const ShapeEnv *base, const char *set)
{
    CheckOptions copt = {0};
    copt.reference = rs->reference;
    if (o->seed)
        copt.seed = strtoull(o->seed, NULL, 0);
    copt.dump_dir = o->dump_outputs;
    if (o->tol_scale)
        copt.tol_scale = strtod(o->tol_scale, NULL);
    if (o->sample)
        copt.sample = 1;   /* the sampled check of large shapes, at every shape */
    CheckReport reps[CHECK_DEFAULT_SHAPES];
    uint32_t n;
    if (cake_check(ctx, rs->dev, ck, base, o->shape != NULL, &copt, reps, CHECK_DEFAULT_SHAPES, &n) == 2) {
        rs->code = EXIT_BUG;
        return;
    }
    int ok = add_reports(o, rs, reps, n, set);
    if (device_broken(ctx, rs, "failed during the check"))
        return;
    if (!ok && rs->code == EXIT_OK)
        rs->code = EXIT_USER;
}

/* checks the parameter combination `set` (not the one rs->ck was compiled
   with): its instance of the run's verified module (which compiling left as
   it was); the diagnostics of a compilation that succeeds are dropped
   (check reported them), those of one that fails are the run's */
static void check_combo(CakeCtx *ctx, const Options *o, Target tg, RunState *rs, const char *kernel,
                        const char *set)
{
    uint32_t nd = ctx->ndiags, ne = ctx->nerrors, nw = ctx->nwarnings;
    CakeKernel ck = {0};
    ShapeEnv base;
    int rc = cake_compile_module(ctx, rs->ck.m, kernel, tg, set, &ck);
    if (rc == 0)
        rc = cake_load(ctx, rs->dev, &ck);
    if (rc) {
        if (rs->code == EXIT_OK || rc != EXIT_USER)
            rs->code = rc;
        free(ck.image);
        return;
    }
    ctx->ndiags = nd;
    ctx->nerrors = ne;
    ctx->nwarnings = nw;
    const char *label = kernel && set ? ir_fmt(ctx, "%s, %s", kernel, set) : kernel ? kernel : set;
    if (cake_parse_bindings(ctx, ck.k, set, NULL, &base))
        do_check(ctx, o, rs, &ck, &base, label);
    if (rt_health(rs->dev) == RT_OK)
        cake_unload(&ck);
    else
        free(ck.image);
}

/* `run --check`: without --set and --shape every combination of the declared
   parameter values (`CAUSAL = 0 in {0, 1}`), the default's first; without
   --kernel also the file's other kernels for the target (each at its combinations) */
static void check_all(CakeCtx *ctx, const Options *o, Module *m, Target tg, RunState *rs, const ShapeEnv *base)
{
    const char *sets[16];
    int all = !o->set && !o->shape;
    uint32_t n = all ? ver_param_combos(ctx, rs->ck.k, sets, 16) : 0;
    do_check(ctx, o, rs, &rs->ck, base, n ? sets[n - 1] : NULL);
    for (uint32_t i = 0; i + 1 < n && rs->code != EXIT_DEVICE && rs->code != EXIT_BUG; i++)
        check_combo(ctx, o, tg, rs, o->kernel, sets[i]);
    for (uint32_t j = 0; all && !o->kernel && j < m->nkernels; j++) {
        Kernel *k = m->kernels[j];
        if (k == rs->ck.k || k->name == rs->ck.k->name || !k->targets[tg] || !k->reference)
            continue;
        const char *name = ir_symstr(ctx, k->name);
        uint32_t nk = ver_param_combos(ctx, k, sets, 16);
        for (uint32_t i = 0; i < (nk ? nk : 1) && rs->code != EXIT_DEVICE && rs->code != EXIT_BUG; i++)
            check_combo(ctx, o, tg, rs, name, nk ? sets[nk - 1 - i] : NULL);
    }
}

/* the cost model's prediction for the benched launch, on the verified module
   (compiling left it as it was); its diagnostics are not the run's */
static int bench_cost(CakeCtx *ctx, const Options *o, RunState *rs, CostResult *c)
{
    const TgDevice *d = tg_device_match(rt_info(rs->dev)->name);
    if (!d || !tg_device_runs(d, rs->ck.tg))
        return 0;
    uint32_t nd = ctx->ndiags, ne = ctx->nerrors, nw = ctx->nwarnings;
    CakeCostOptions co = {.kernel = ir_symstr(ctx, rs->ck.k->name), .target = rs->ck.tg, .has_target = 1,
                          .device = d->name, .shape = o->shape, .set = o->set, .regs = rs->ck.info.regs,
                          .spill_bytes = rs->ck.info.local_bytes};
    int ok = cake_cost(ctx, rs->ck.m, &co, c) == 0;
    ctx->ndiags = nd;
    ctx->nerrors = ne;
    ctx->nwarnings = nw;
    return ok;
}

static void do_bench(CakeCtx *ctx, const Options *o, RunState *rs, const ShapeEnv *base)
{
    ShapeEnv env = *base;
    shape_env_add_defaults(rs->ck.k, &env);
    if (!shape_env_bind_params(ctx, rs->ck.k, &env) || !shape_env_complete(ctx, rs->ck.k, &env, 1)) {
        rs->code = EXIT_USER;
        return;
    }
    CakeBench b;
    RtClock *clk = rt_clock_open(rs->dev);
    int mhz0 = rt_clock_sm_mhz(clk);
    int rc = cake_bench(ctx, rs->dev, &rs->ck, &env, o->runs ? atoi(o->runs) : 0, &b);
    cJSON_AddItemToObject(rs->extra, "measured_on", drv_measured_on(ctx, rs->dev, NULL, mhz0, rt_clock_sm_mhz(clk)));
    rt_clock_close(clk);
    if (rc == 2) {
        rs->code = EXIT_BUG;
        return;
    }
    if (rc) {
        if (!device_broken(ctx, rs, "failed during the bench")) {
            diag_report(ctx, E0972, rs->ck.k->span, "bench failed: %s", b.message);
            rs->code = EXIT_DEVICE;
        }
        return;
    }
    CostResult c;
    int have = bench_cost(ctx, o, rs, &c);
    drv_bench_report(&b, have ? &c : NULL, rs->extra, o->json);
}

/* what a measurement ran on (docs/library.md, "Tuning on every GPU"): the
 * device's name, its PCI address, the CUDA_VISIBLE_DEVICES it was given, and
 * the SM clock before and after (0: unknown, left out); dev NULL: the fake
 * device of --fake-measure */
cJSON *drv_measured_on(CakeCtx *ctx, const RtDevice *dev, const char *fake, int mhz0, int mhz1)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "device", dev ? rt_info(dev)->name : ir_fmt(ctx, "fake:%s", fake ? fake : "?"));
    if (dev) {
        char bus[32];
        rt_pci_bus_id(dev, bus, sizeof bus);
        cJSON_AddStringToObject(m, "pci_bus_id", bus);
    }
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (vis)
        cJSON_AddStringToObject(m, "visible_devices", vis);
    if (mhz0 > 0 && mhz1 > 0) {
        int both[2] = {mhz0, mhz1};
        cJSON_AddItemToObject(m, "sm_clock_mhz", cJSON_CreateIntArray(both, 2));
    }
    return m;
}

/* the bench document of b into extra ("bench", with the prediction c beside it
   when there is one: "cost"), and its text on stdout unless json */
void drv_bench_report(const CakeBench *b, const CostResult *c, cJSON *extra, int json)
{
    cJSON *bj = drv_bench_json(b);
    if (c) {
        cJSON_AddNumberToObject(bj, "predicted_ms", c->time_ms);
        cJSON *iv = cJSON_AddArrayToObject(bj, "predicted_interval_ms");
        cJSON_AddItemToArray(iv, cJSON_CreateNumber(c->lo_ms));
        cJSON_AddItemToArray(iv, cJSON_CreateNumber(c->hi_ms));
        cJSON_AddNumberToObject(bj, "model_roofline_ms", c->roofline_ms);
        cJSON_AddNumberToObject(bj, "model_roofline_fraction", c->roofline_ms / b->t.median_ms);
        cJSON_AddItemToObject(extra, "cost", cake_cost_json(c));
    }
    cJSON_AddItemToObject(extra, "bench", bj);
    if (!json)
        drv_bench_text(b, c);
}

static void add_kernel_info(CakeCtx *ctx, RunState *rs)
{
    const RtDeviceInfo *info = rt_info(rs->dev);
    cJSON_AddStringToObject(rs->extra, "device", info->name);
    cJSON_AddStringToObject(rs->extra, "kernel", ir_symstr(ctx, rs->ck.k->name));
    cJSON_AddStringToObject(rs->extra, "target", ir_target_names[rs->ck.tg]);
    cJSON_AddNumberToObject(rs->extra, "registers", rs->ck.info.regs);
    cJSON_AddNumberToObject(rs->extra, "local_bytes", rs->ck.info.local_bytes);
    const RtFuncInfo *fi = &rs->ck.info;
    cJSON_AddNumberToObject(rs->extra, "spill_store_bytes", fi->spill_store_bytes);
    cJSON_AddNumberToObject(rs->extra, "spill_load_bytes", fi->spill_load_bytes);
    if (fi->spill_store_bytes > 0 || fi->spill_load_bytes > 0) {
        Diag *d = diag_report(ctx, W0901, rs->ck.k->span, "kernel `%s` spills to local memory on %s: %d bytes "
                              "of spill stores, %d of spill loads, %d registers (the driver's JIT)",
                              ir_symstr(ctx, rs->ck.k->name), ir_target_names[rs->ck.tg],
                              fi->spill_store_bytes, fi->spill_load_bytes, fi->regs);
        diag_help(ctx, d, "every spill is a round trip to local memory: keep fewer values live, or give "
                          "the kernel more registers (fewer threads, a larger role `regs`)");
    }
}

/* `run --sim`: the check of do_check/check_all with the CPU executor as the
   device (lib cake_sim_check); no GPU is opened, nothing is compiled to PTX */
static int sim_one(CakeCtx *ctx, const Options *o, Module *m, Target tg, const char *kernel,
                   const char *set, const char *label, RunState *rs)
{
    CheckOptions copt = {0};
    copt.reference = rs->reference;
    if (o->seed)
        copt.seed = strtoull(o->seed, NULL, 0);
    copt.dump_dir = o->dump_outputs;
    if (o->tol_scale)
        copt.tol_scale = strtod(o->tol_scale, NULL);
    if (o->sample)
        copt.sample = 1;   /* the sampled check of large shapes, at every shape */
    SimOptions sopt = {0};
    sopt.no_race = o->no_race;
    if (o->sm_count)
        sopt.sm_count = atoll(o->sm_count);
    Kernel *k = NULL;
    if (cake_find_kernel(ctx, m, kernel, tg, &k))
        return EXIT_USER;
    ShapeEnv base;
    if (!cake_parse_bindings(ctx, k, set, o->shape, &base))
        return EXIT_USER;
    CheckReport reps[CHECK_DEFAULT_SHAPES];
    uint32_t n = 0;
    int rc = cake_sim_check(ctx, m, kernel, tg, set, &base, o->shape != NULL, &copt, &sopt, reps, CHECK_DEFAULT_SHAPES, &n);
    if (rc)
        return rc == 2 ? EXIT_BUG : EXIT_USER;
    int ok = add_reports(o, rs, reps, n, label);
    return ok ? EXIT_OK : EXIT_USER;
}

static int run_sim(CakeCtx *ctx, const Options *o, Module *m, RunState *rs)
{
    Target tg = TG_SM90A;
    if (o->target && !pick_target(ctx, o, m, &tg))
        return EXIT_USER;
    Kernel *k = NULL;
    if (!o->target && m->nkernels) {
        cake_find_kernel(ctx, m, o->kernel, TG__COUNT, &k);
        static const Target pref[] = {TG_SM90A, TG_SM80, TG_GFX942, TG_GFX90A};
        for (int i = 3; k && i >= 0; i--) /* the first of these the kernel lists */
            if (ir_kernel_targets(k, pref[i]))
                tg = pref[i];
    }
    cJSON_AddStringToObject(rs->extra, "device", "sim");
    cJSON_AddStringToObject(rs->extra, "target", ir_target_names[tg]);
    const char *sets[16];
    int all = !o->set && !o->shape;
    if (!k && cake_find_kernel(ctx, m, o->kernel, tg, &k))
        return EXIT_USER;
    uint32_t nsets = all ? ver_param_combos(ctx, k, sets, 16) : 0;
    int code = sim_one(ctx, o, m, tg, o->kernel, o->set, nsets ? sets[nsets - 1] : NULL, rs);
    for (uint32_t i = 0; i + 1 < nsets && code != EXIT_BUG; i++) {
        int c = sim_one(ctx, o, m, tg, o->kernel, sets[i], sets[i], rs);
        if (code == EXIT_OK)
            code = c;
    }
    return code;
}

int drv_cmd_run(CakeCtx *ctx, const Options *o, Module *m)
{
    RunState rs = {0};
    rs.extra = cJSON_CreateObject();
    Target tg;
    if (o->target && !pick_target(ctx, o, m, &tg))
        return drv_finish_with(ctx, o, EXIT_USER, rs.extra);
    Sym name = o->kernel ? ir_intern_cstr(ctx, o->kernel) : m->nkernels ? m->kernels[0]->name : 0;
    if (!run_options_ok(ctx, o, m) || !load_reference(ctx, o, &rs, name))
        return drv_finish_with(ctx, o, rs.code == EXIT_BUG ? EXIT_BUG : EXIT_USER, rs.extra);
    if (o->sim)
        return drv_finish_with(ctx, o, run_sim(ctx, o, m, &rs), rs.extra);
    if (!open_device(ctx, o, &rs))
        return drv_finish_with(ctx, o, EXIT_DEVICE, rs.extra);
    if (!o->target) {
        Kernel *k = NULL;
        if (m->nkernels)
            cake_find_kernel(ctx, m, o->kernel, TG__COUNT, &k);   /* run_options_ok found it */
        tg = device_target(k, rt_info(rs.dev));
    }
    int rc = cake_compile_module(ctx, m, o->kernel, tg, o->set, &rs.ck);
    if (rc == 0)
        rc = cake_load(ctx, rs.dev, &rs.ck);
    if (rc) { /* 1 the input, 2 a bug, 3 the device or the code generator plugin */
        rs.code = rc;
        goto done;
    }
    add_kernel_info(ctx, &rs);
    ShapeEnv base;
    if (!cake_parse_bindings(ctx, rs.ck.k, o->set, o->shape, &base)) {
        rs.code = EXIT_USER;
        goto done;
    }
    if (o->check || !o->bench)
        check_all(ctx, o, m, tg, &rs, &base);
    if (o->bench && rs.code != EXIT_DEVICE && rs.code != EXIT_BUG)
        do_bench(ctx, o, &rs, &base);
done:
    if (rs.dev && rt_health(rs.dev) == RT_TIMEOUT) {
        drv_finish_with(ctx, o, EXIT_DEVICE, rs.extra);
        rt_exit_now(EXIT_DEVICE);
    }
    if (rs.dev && rt_health(rs.dev) == RT_OK)
        cake_unload(&rs.ck);
    else
        free(rs.ck.image);
    rt_close(rs.dev);
    return drv_finish_with(ctx, o, rs.code, rs.extra);
}
