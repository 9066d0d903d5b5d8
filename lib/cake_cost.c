/* cake_cost.c — libcake's cost model entry (cake.h, cake_cost): binds the
 * shape, picks the device and its calibration file, runs the model of
 * analysis/cost.h on the kernel's instance (cake_instance, bound) and reports
 * what it cannot model as diagnostics. */
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "cake_priv.h"
#include "cost.h"
#include "passes.h"

static const TgDevice *cost_device(CakeCtx *ctx, const char *name, Target tg)
{
    const TgDevice *d = name ? tg_device_find(name) : tg_device_default(tg);
    if (!d) {
        Diag *g = name ? diag_report(ctx, E1001, IR_NOSPAN, "unknown device `%s`", name)
                       : diag_report(ctx, E1001, IR_NOSPAN, "the cost model has no device for target %s",
                                     ir_target_names[tg]);
        char list[256] = "";
        for (uint32_t i = 0; i < tg_ndevices; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     tg_devices[i].name);
        diag_help(ctx, g, "devices: %s", list);
        return NULL;
    }
    if (!tg_device_runs(d, tg)) {
        Diag *g = diag_report(ctx, E1002, IR_NOSPAN, "device %s does not run code built for %s",
                              d->name, ir_target_names[tg]);
        diag_help(ctx, g, "pick a device of the target's vendor and generation, or another --target");
        return NULL;
    }
    return d;
}

/* ---- calibration files ---------------------------------------------------------- */

static void take(const cJSON *o, const char *name, double *dst)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (cJSON_IsNumber(v) && v->valuedouble >= 0)
        *dst = v->valuedouble;
}

/* the calibration files compiled in (CMakeLists.txt: bench/cost/DEVICE.json) */
typedef struct { const char *device, *json; } CalibFile;
extern const CalibFile cake_calib_files[];

static const char *builtin_calib(const char *device)
{
    for (int i = 0; cake_calib_files[i].device; i++)
        if (!strcmp(cake_calib_files[i].device, device))
            return cake_calib_files[i].json;
    return NULL;
}

/* the fit's families (cakec calibrate): "calibrated": [{pattern, n, err80, time_ms}] */
static void take_patterns(const cJSON *j, CostCalib *c)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, "calibrated"), *x;
    take(j, "pattern_err", &c->pat_err);
    cJSON_ArrayForEach(x, arr) {
        const cJSON *key = cJSON_GetObjectItemCaseSensitive(x, "pattern");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(x, "time_ms");
        if (c->npat >= COST_MAX_PATTERNS || !cJSON_IsString(key) || cJSON_GetArraySize(t) != 2)
            continue;
        CostPattern *f = &c->pat[c->npat++];
        snprintf(f->key, sizeof f->key, "%s", key->valuestring);
        double n = 0;
        take(x, "n", &n);
        f->n = (int)n;
        double kn = 0;
        take(x, "kernels", &kn);
        f->kernels = (int)kn;
        take(x, "err80", &f->err);
        take(x, "in_flight_min", &f->mlp_lo);
        take(x, "waves_min", &f->waves_lo);
        f->t_lo = cJSON_GetArrayItem(t, 0)->valuedouble;
        f->t_hi = cJSON_GetArrayItem(t, 1)->valuedouble;
    }
}

int cake_cost_calib(CakeCtx *ctx, const char *dir, const TgDevice *d, CostCalib *c)
{
    cost_calib_default(c);
    if (!dir)
        dir = getenv("CAKE_COST_DIR");
    if (dir && !*dir)
        dir = NULL;
    if (dir && !strcmp(dir, "none"))
        return 0;
    char path[512];
    char *text = NULL;
    const char *json = NULL;
    if (dir) {
        snprintf(path, sizeof path, "%s/%s.json", dir, d->name);
        json = text = cake_read_text(path, (size_t)1 << 20, NULL);
    } else {   /* no directory named: the file compiled in, from any working directory */
        snprintf(path, sizeof path, "bench/cost/%s.json (compiled in)", d->name);
        json = builtin_calib(d->name);
    }
    if (!json)
        return 0;   /* no file: the built-in defaults */
    cJSON *j = cJSON_Parse(json);
    free(text);
    const cJSON *k = j ? cJSON_GetObjectItemCaseSensitive(j, "constants") : NULL;
    if (!cJSON_IsObject(k)) {
        Diag *g = diag_report(ctx, W1001, IR_NOSPAN, "calibration file `%s` is not a JSON object with "
                              "\"constants\": the built-in defaults are used", path);
        diag_help(ctx, g, "see docs/cost-model.md, \"Calibration\", for the file's format");
        cJSON_Delete(j);
        return 0;
    }
    take(k, "eff_wgmma", &c->eff_wgmma); take(k, "eff_mma", &c->eff_mma);
    take(k, "eff_mfma", &c->eff_mfma); take(k, "eff_hbm", &c->eff_hbm);
    take(k, "eff_l2", &c->eff_l2); take(k, "eff_alu", &c->eff_alu);
    take(k, "eff_sfu", &c->eff_sfu); take(k, "eff_smem", &c->eff_smem);
    take(k, "overlap", &c->overlap); take(k, "l2_miss", &c->l2_miss);
    take(k, "rel_err", &c->rel_err); take(k, "launch_us", &c->launch_us);
    take(k, "pipe_lat", &c->pipe_lat); take(k, "loop_mlp", &c->loop_mlp);
    take(k, "lat_block", &c->lat_block); take(k, "req_rate", &c->req_rate);
    take(k, "lat_mem", &c->lat_mem); take(k, "res_exposed", &c->res_exposed);
    take(k, "mlp_knee", &c->mlp_knee); take(k, "pipe_knee", &c->pipe_knee);
    take(k, "body_knee", &c->body_knee);
    take_patterns(j, c);
    const cJSON *date = cJSON_GetObjectItemCaseSensitive(j, "date");
    snprintf(c->source, sizeof c->source, "%.100s (%.40s)", path,
             cJSON_IsString(date) ? date->valuestring : "undated");
    cJSON_Delete(j);
    /* a zero efficiency would divide by zero: keep the default for it */
    CostCalib def;
    cost_calib_default(&def);
    double *x = &c->eff_wgmma, *y = &def.eff_wgmma;
    for (int i = 0; i < 8; i++)
        if (x[i] <= 0)
            x[i] = y[i];
    return 1;
}

/* ---- the entry point --------------------------------------------------------------- */

static int bind_shape(CakeCtx *ctx, Kernel *k, const CakeCostOptions *o, ShapeEnv *env)
{
    char err[256];
    shape_env_clear(env);
    if ((o->set && !shape_env_parse(ctx, k, env, o->set, err, sizeof err)) ||
        (o->shape && !shape_env_parse(ctx, k, env, o->shape, err, sizeof err))) {
        Diag *d = diag_report(ctx, E0002, IR_NOSPAN, "--shape/--set: %s", err);
        diag_help(ctx, d, "write `--shape M=4096,N=8192` for dims and `--set BM=64` for params");
        return 0;
    }
    shape_env_add_defaults(k, env);
    if (!shape_env_bind_params(ctx, k, env))
        return 0;
    int ok = 1;
    for (uint32_t i = 0; i < k->ndims; i++) {
        const Node *dn = &k->nodes[k->dims[i]];
        int64_t v;
        if (!shape_env_get(env, dn->name, &v)) {
            Diag *d = diag_report(ctx, E1003, dn->span, "dim `%s` has no value: the cost depends on it",
                                  ir_symstr(ctx, dn->name));
            diag_help(ctx, d, "give it with `--shape %s=4096`, or add a `shape` clause to the kernel",
                      ir_symstr(ctx, dn->name));
            ok = 0;
        }
    }
    return ok;
}

/* the kernel's target a named device runs best, as `run` picks on that device
 * (tg_pick_for_arch); the first target when the name is unknown (cost_device
 * then reports it) or none runs there (E1002) */
static Target device_target(const Kernel *k, const char *name)
{
    const TgDevice *d = tg_device_find(name);
    Target tg = tg_first(k);
    char arch[16];
    if (d)
        tg_pick_for_arch(k, tg_device_arch(d, arch, sizeof arch), &tg);
    return tg;
}

/* The instance's kernel lowered (TIR-L and its launch plan), the level the
 * model counts on: the instance's own when it was lowered already, else a copy
 * of its bound kernel through the pass pipeline, made once per instance
 * (CakeInstance.cost_low: the params fix TIR-L, the dims stay symbolic) while
 * the instance stays at its stage (its deferred coverage check untouched). NULL where
 * lowering has no rule yet (E0902, or any other error of the passes): its
 * diagnostics are dropped and the source level is counted (a note says so). */
enum { COST_LOW_GROWTH = 48 };

static const Kernel *lowered(CakeCtx *ctx, const CakeInstance *cinst)
{
    CakeInstance *inst = (CakeInstance *)cinst;   /* its cost_low cache only */
    if (inst->stage >= CAKE_INST_LOWERED && inst->bound)
        return inst->k;
    if (inst->cost_low || inst->cost_low_failed)   /* the params fix it: once per instance */
        return inst->cost_low;
    uint32_t nd = ctx->ndiags, ne = ctx->nerrors, nw = ctx->nwarnings;
    Kernel *low = ir_kernel_clone(ctx, inst->k);
    /* lowering grows the kernel 20-40x (distribute's per-element code: gemm_persistent
       386 -> 7466 nodes, flash_attn_fwd_pp 929 -> 24493, flash_attn_fwd 547 -> 19454:
       at 24x its arrays were copied once more as they doubled): reserved at once, its node
       and list arrays are not copied at every doubling, and pages never touched cost
       nothing: a fresh block's pages are untouched and a pool's reused block is not
       cleared for them (raw: ir_node clears each node it appends) */
    low->nodes = arena_grow_raw(&ctx->arena, low->nodes, &low->capnodes, low->nnodes * COST_LOW_GROWTH,
                                sizeof *low->nodes);
    low->lists = arena_grow_raw(&ctx->arena, low->lists, &low->caplists, low->nlists * COST_LOW_GROWTH,
                                sizeof *low->lists);
    Module one = {&low, 1, inst->m->file};
    CeEnv view = shape_env_view(&inst->set);
    if (pass_run_all(ctx, &one, low, inst->tg, &view) || ctx->nerrors > ne) {
        ctx->ndiags = nd;
        ctx->nerrors = ne;
        ctx->nwarnings = nw;
        inst->cost_low_failed = 1;
        return NULL;
    }
    inst->cost_low = low;
    return low;
}

/* the profile of the launch o names, its device, and out's header (kernel,
   target, shape); the registers ptxas reported (o->regs) replace the estimate */
static int cost_prepare(CakeCtx *ctx, Module *m, const CakeCostOptions *o, CostProfile *p,
                        const TgDevice **devp, CostResult *out)
{
    memset(out, 0, sizeof *out);
    Kernel *k = lib_find_kernel(ctx, m, o->kernel, TG__COUNT);
    if (!k)
        return 1;
    const char *devname = o->device ? o->device : getenv("CAKE_COST_DEVICE");
    if (devname && !*devname)
        devname = NULL;
    Target tg = o->has_target ? o->target : devname ? device_target(k, devname) : tg_first(k);
    if (!ir_kernel_targets(k, tg)) {
        Diag *d = diag_report(ctx, E0970, k->span, "kernel `%s` does not list target %s",
                              ir_symstr(ctx, k->name), ir_target_names[tg]);
        diag_help(ctx, d, "pick one of the kernel's targets with --target");
        return 1;
    }
    const TgDevice *dev = cost_device(ctx, devname, tg);
    if (!dev)
        return 1;
    ShapeEnv env;
    if (!bind_shape(ctx, k, o, &env))
        return 1;
    NodeId failed;
    if (!shape_env_assumes_hold(ctx, k, &env, 1, &failed))
        return 1;   /* E0961 at the assume: the variant is not a valid launch */
    /* the model counts the instance at its bound level: the kernel typed (and,
       for a binding `check` did not cover, verified) at the bindings — the same
       copy whether or not the instance was lowered or compiled since */
    const CakeInstance *inst;
    int rc = cake_instance_env(ctx, m, k, tg, &env, CAKE_INST_BOUND, &inst);
    if (rc)
        return rc;
    if (o->cover && (rc = cake_instance_cover(ctx, inst)) != 0)
        return rc;
    const char *lvl = getenv("CAKE_COST_LEVEL");   /* "source": the comparison of bench/device/run_cost.sh */
    int source = o->source_level || (lvl && !strcmp(lvl, "source"));
    const Kernel *low = source ? NULL : lowered(ctx, inst);
    k = inst->bound ? inst->bound : inst->k;
    CeEnv view = shape_env_view(&env);
    char why[160];
    if (!cost_profile(ctx, k, low, tg, &view, dev->sm_count, p, why, sizeof why)) {
        Diag *d = diag_report(ctx, E1004, k->span, "cannot cost kernel `%s`: %s",
                              ir_symstr(ctx, k->name), why);
        diag_help(ctx, d, "the grid and the block size must evaluate at the given shape and params");
        return 1;
    }
    if (o->regs > 0 && !p->regs_from_roles) {
        for (uint32_t i = 0; i < p->nnotes; i++)
            if (strstr(p->notes[i], "registers per thread estimated")) {
                memmove(p->notes[i], p->notes[i + 1], sizeof p->notes[0] * (p->nnotes - i - 1));
                p->nnotes--;
                break;
            }
        p->regs_est = o->regs;
        p->regs_from_roles = 1;   /* known, not estimated */
        cost_note(p->notes, &p->nnotes, "registers per thread: %d, as the code generator reported", o->regs);
    }
    if (!low)
        cost_note(p->notes, &p->nnotes, "counted on the source level: %s",
                  source ? "asked for (source_level, CAKE_COST_LEVEL=source)" : "the kernel does not lower yet");
    p->spill_bytes = o->spill_bytes;
    snprintf(out->kernel, sizeof out->kernel, "%s", ir_symstr(ctx, k->name));
    snprintf(out->target, sizeof out->target, "%s", ir_target_names[tg]);
    shape_env_format(ctx, k, &env, out->shape, sizeof out->shape);
    *devp = dev;
    return 0;
}

static int cost_run(CakeCtx *ctx, Module *m, const CakeCostOptions *o, CostResult *out)
{
    CostProfile *p = arena_alloc(&ctx->arena, sizeof *p);
    const TgDevice *dev;
    int rc = cost_prepare(ctx, m, o, p, &dev, out);
    if (rc)
        return rc;
    CostCalib *cal = arena_alloc(&ctx->arena, sizeof *cal);
    if (o->calib)
        *cal = *o->calib;
    else
        cake_cost_calib(ctx, o->calib_dir, dev, cal);
    cost_predict(p, dev, cal, out);
    return 0;
}

int cake_cost_profile(CakeCtx *ctx, Module *m, const CakeCostOptions *o, CostProfile *p,
                      const TgDevice **dev, CostResult *out)
{
    int rc;
    CAKE_PROTECTED(ctx, rc, cost_prepare(ctx, m, o, p, dev, out));
    return rc;
}

int cake_cost(CakeCtx *ctx, Module *m, const CakeCostOptions *o, CostResult *out)
{
    int rc;
    CAKE_PROTECTED(ctx, rc, cost_run(ctx, m, o, out));
    return rc;
}

/* ---- JSON ------------------------------------------------------------------------------ */

static double r4(double x)
{
    /* 4 significant digits: golden files stay stable across libm versions */
    if (x == 0)
        return 0;
    char b[32];
    snprintf(b, sizeof b, "%.4g", x);
    return strtod(b, NULL);
}

void *cake_cost_json(const CostResult *r)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "kernel", r->kernel);
    cJSON_AddStringToObject(j, "target", r->target);
    cJSON_AddStringToObject(j, "device", r->device);
    cJSON_AddStringToObject(j, "shape", r->shape);
    cJSON_AddNumberToObject(j, "time_ms", r4(r->time_ms));
    cJSON *iv = cJSON_AddArrayToObject(j, "interval_ms");
    cJSON_AddItemToArray(iv, cJSON_CreateNumber(r4(r->lo_ms)));
    cJSON_AddItemToArray(iv, cJSON_CreateNumber(r4(r->hi_ms)));
    cJSON_AddStringToObject(j, "verdict", r->measure ? "measure" : "model");
    cJSON_AddStringToObject(j, "bottleneck", cost_resource_names[r->bottleneck]);
    cJSON_AddNumberToObject(j, "flops", r4(r->flops));
    cJSON_AddNumberToObject(j, "tflops", r4(r->tflops));
    cJSON_AddNumberToObject(j, "dram_bytes", r4(r->dram_bytes));
    cJSON_AddNumberToObject(j, "l2_bytes", r4(r->l2_bytes));
    cJSON_AddNumberToObject(j, "gbps", r4(r->gbps));
    cJSON_AddNumberToObject(j, "intensity", r4(r->intensity));
    cJSON *rf = cJSON_AddObjectToObject(j, "roofline");
    cJSON_AddNumberToObject(rf, "peak_tflops", r4(r->peak_tflops));
    cJSON_AddNumberToObject(rf, "peak_gbps", r4(r->peak_gbps));
    cJSON_AddNumberToObject(rf, "ms", r4(r->roofline_ms));
    cJSON_AddNumberToObject(rf, "fraction", r4(r->roofline_fraction));
    cJSON *res = cJSON_AddObjectToObject(j, "resources_ms");
    for (int i = 0; i < CR__N; i++)
        cJSON_AddNumberToObject(res, cost_resource_names[i], r4(r->res_ms[i]));
    cJSON *oc = cJSON_AddObjectToObject(j, "occupancy");
    cJSON_AddNumberToObject(oc, "threads", (double)r->threads);
    cJSON_AddNumberToObject(oc, "blocks", (double)r->nblocks);
    cJSON_AddNumberToObject(oc, "blocks_per_sm", r->blocks_per_sm);
    cJSON_AddStringToObject(oc, "limiter", r->occ_limiter ? r->occ_limiter : "");
    cJSON_AddNumberToObject(oc, "registers", r->regs);
    cJSON_AddBoolToObject(oc, "registers_estimated", r->regs_estimated);
    cJSON_AddNumberToObject(oc, "shared_bytes", (double)r->smem_bytes);
    cJSON_AddNumberToObject(oc, "occupancy", r4(r->occupancy));
    cJSON_AddNumberToObject(oc, "waves", r4(r->waves));
    cJSON_AddNumberToObject(oc, "wave_efficiency", r4(r->wave_efficiency));
    cJSON *lit = cJSON_AddObjectToObject(j, "in_flight");
    cJSON_AddNumberToObject(lit, "bytes", r4(r->inflight_bytes));
    cJSON_AddNumberToObject(lit, "block_bytes", r4(r->inflight_block));
    cJSON_AddNumberToObject(lit, "pipeline_ms", r4(r->pipeline_ms));
    cJSON_AddNumberToObject(lit, "needed_bytes", r4(r->inflight_needed));
    cJSON *roles = cJSON_AddArrayToObject(j, "roles");
    for (uint32_t i = 0; i < r->nroles; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "name", r->roles[i].name);
        cJSON_AddNumberToObject(x, "threads", (double)r->roles[i].threads);
        cJSON_AddNumberToObject(x, "registers", r->roles[i].regs);
        cJSON_AddNumberToObject(x, "critical_path_ms", r4(r->roles[i].ms));
        cJSON_AddNumberToObject(x, "tensor_ms", r4(r->roles[i].tensor_ms));
        cJSON_AddNumberToObject(x, "simt_ms", r4(r->roles[i].simt_ms));
        cJSON_AddNumberToObject(x, "mufu_ms", r4(r->roles[i].mufu_ms));
        cJSON_AddNumberToObject(x, "shared_ms", r4(r->roles[i].shared_ms));
        cJSON_AddItemToArray(roles, x);
    }
    cJSON_AddStringToObject(j, "pattern", r->pattern);
    cJSON_AddBoolToObject(j, "feasible", !r->infeasible[0]);
    if (r->infeasible[0])
        cJSON_AddStringToObject(j, "infeasible", r->infeasible);
    cJSON *terms = cJSON_AddObjectToObject(j, "terms_ms");   /* time = max(terms) + latency + launch */
    static const char *const tn[4] = {"compute", "pipeline", "shared", "memory"};
    for (int i = 0; i < 4; i++)
        cJSON_AddNumberToObject(terms, tn[i], r4(r->body_ms[i]));
    cJSON *notes = cJSON_AddArrayToObject(j, "assumptions");
    for (uint32_t i = 0; i < r->nnotes; i++)
        cJSON_AddItemToArray(notes, cJSON_CreateString(r->notes[i]));
    return j;
}
