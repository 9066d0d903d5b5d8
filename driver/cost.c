/* cost.c — `cakec cost`: the cost model's prediction as text or JSON, a
 * what-if sweep over params (--sweep), two kernels side by side (--compare)
 * and the roofline as an SVG picture (--svg). The model is libcake's
 * cake_cost (docs/cost-model.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "cake.h"
#include "driver.h"
#include "targets.h"

static int cost_options(CakeCtx *ctx, const Options *o, const char *set, CakeCostOptions *co)
{
    memset(co, 0, sizeof *co);
    co->kernel = o->kernel;
    co->device = o->device;
    co->shape = o->shape;
    co->set = set;
    if (o->target) {
        if (!ir_lookup_target(o->target, strlen(o->target), &co->target)) {
            Diag *d = diag_report(ctx, E0112, IR_NOSPAN, "unknown target `%s`", o->target);
            diag_help(ctx, d, "targets: sm_80, sm_90a, gfx90a, gfx942");
            return 0;
        }
        co->has_target = 1;
    }
    return 1;
}

/* ---- text ------------------------------------------------------------------------ */

static void text_result(const CostResult *r)
{
    printf("%s on %s (%s)  %s\n", r->kernel, r->device_full, r->target, r->shape);
    printf("  predicted   %.4f ms  [%.4f .. %.4f]  %s\n", r->time_ms, r->lo_ms, r->hi_ms,
           r->measure ? "measure: outside what the model knows" : "model");
    printf("  rates       %.1f TFLOP/s  %.0f GB/s DRAM  (%.3g FLOP/byte)\n", r->tflops, r->gbps, r->intensity);
    printf("  roofline    %.4f ms = %.0f%% of the prediction (peaks %.0f TFLOP/s, %.0f GB/s)\n",
           r->roofline_ms, 100 * r->roofline_fraction, r->peak_tflops, r->peak_gbps);
    printf("  bottleneck  %s\n", cost_resource_names[r->bottleneck]);
    printf("  resources  ");
    for (int i = 0; i < CR__N; i++)
        printf(" %s %.4f", cost_resource_names[i], r->res_ms[i]);
    printf(" (ms, each alone)\n");
    printf("  occupancy   %lld threads x %lld blocks, %d block%s/SM (limit: %s), %d registers%s, "
           "%lld B shared, %.2f waves (%.0f%% efficient)\n",
           (long long)r->threads, (long long)r->nblocks, r->blocks_per_sm, r->blocks_per_sm == 1 ? "" : "s",
           r->occ_limiter, r->regs, r->regs_estimated ? " (estimated)" : " (role budgets)",
           (long long)r->smem_bytes, r->waves, 100 * r->wave_efficiency);
    printf("  in flight   %.2f MB from DRAM (Little's law needs %.2f MB)\n", r->inflight_bytes / 1e6,
           r->inflight_needed / 1e6);
    for (uint32_t i = 0; i < r->nroles; i++)
        printf("  role        %-10s %lld threads, %d registers, critical path %.4f ms\n", r->roles[i].name,
               (long long)r->roles[i].threads, r->roles[i].regs, r->roles[i].ms);
    printf("  assumptions\n");
    for (uint32_t i = 0; i < r->nnotes; i++)
        printf("    - %s\n", r->notes[i]);
}

/* ---- --explain: which term bounds the time, per resource and role ------------------ */

static void explain_text(const CostResult *r)
{
    static const char *const tn[4] = {"compute (the busiest SM's blocks x a block's critical path)",
                                      "pipeline (stage fills x (latency + transfer) / stages in flight)",
                                      "shared memory (bytes / the SM's shared bandwidth)",
                                      "memory (max of DRAM and L2 traffic / bandwidth)"};
    int top = 0;
    for (int i = 1; i < 4; i++)
        if (r->body_ms[i] > r->body_ms[top])
            top = i;
    double lat = r->res_ms[CR_LATENCY], launch = r->res_ms[CR_LAUNCH];
    printf("explain\n  time %.4f ms = max of the terms below %.4f + latency %.4f + launch %.4f\n",
           r->time_ms, r->body_ms[top], lat, launch);
    for (int i = 0; i < 4; i++)
        printf("  %s %-66s %9.4f ms\n", i == top ? "*" : " ", tn[i], r->body_ms[i]);
    printf("  bound by: %s (bottleneck resource: %s)\n",
           lat + launch > r->body_ms[top] ? "latency and launch, which exceed the body" : tn[top],
           cost_resource_names[r->bottleneck]);
    printf("  resources alone (ms):");
    for (int i = 0; i < CR__N; i++)
        printf(" %s %.4f", cost_resource_names[i], r->res_ms[i]);
    printf("\n");
    for (uint32_t i = 0; i < r->nroles; i++) {
        const char *u = "tensor";
        double m = r->roles[i].tensor_ms;
        if (r->roles[i].simt_ms > m) { u = "simt"; m = r->roles[i].simt_ms; }
        if (r->roles[i].mufu_ms > m) { u = "mufu"; m = r->roles[i].mufu_ms; }
        if (r->roles[i].shared_ms > m) { u = "shared"; m = r->roles[i].shared_ms; }
        printf("  role %-10s critical path %.4f ms (tensor %.4f, simt %.4f, mufu %.4f, shared %.4f): %s-bound\n",
               r->roles[i].name, r->roles[i].ms, r->roles[i].tensor_ms, r->roles[i].simt_ms,
               r->roles[i].mufu_ms, r->roles[i].shared_ms, m > 0 ? u : "idle");
    }
    printf("  occupancy %d block%s/SM (limit: %s), %.2f waves (%.0f%% efficient)\n", r->blocks_per_sm,
           r->blocks_per_sm == 1 ? "" : "s", r->occ_limiter, r->waves, 100 * r->wave_efficiency);
    printf("  verdict %s (family %s)\n", r->measure ? "measure" : "model", r->pattern);
    for (uint32_t i = 0; i < r->nnotes; i++)
        if (!strncmp(r->notes[i], "measure:", 8))
            printf("    %s\n", r->notes[i]);
}

/* ---- --svg: the roofline and the breakdown ----------------------------------------- */

static double lx(double x) { return 60 + (log10(x) + 1) / 5 * 520; }      /* 0.1 .. 1e4 FLOP/B */
static double ly(double y, double top) { return 40 + (log10(top) - log10(y)) / 4 * 300; }

static int write_svg(CakeCtx *ctx, const char *path, const CostResult *r)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        diag_report(ctx, E1006, IR_NOSPAN, "cannot write `%s`", path);
        return 0;
    }
    double top = pow(10, ceil(log10(r->peak_tflops * 1.5)));
    double knee = r->peak_tflops * 1e12 / (r->peak_gbps * 1e9);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"400\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"900\" height=\"400\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"60\" y=\"22\" font-size=\"14\">%s on %s: %.4f ms predicted, %s-bound, "
               "%.0f%% of the roofline</text>\n", r->kernel, r->device, r->time_ms,
            cost_resource_names[r->bottleneck], 100 * r->roofline_fraction);
    fprintf(f, "<rect x=\"60\" y=\"40\" width=\"520\" height=\"300\" fill=\"none\" stroke=\"#888\"/>\n");
    for (int e = -1; e <= 4; e++)
        fprintf(f, "<text x=\"%.0f\" y=\"356\" text-anchor=\"middle\">1e%d</text>\n", lx(pow(10, e)), e);
    for (int e = 0; e <= 4; e++) {
        double y = top / pow(10, e);
        fprintf(f, "<text x=\"55\" y=\"%.0f\" text-anchor=\"end\">%g</text>\n", ly(y, top) + 4, y);
    }
    fprintf(f, "<text x=\"320\" y=\"375\" text-anchor=\"middle\">FLOP per DRAM byte</text>\n"
               "<text x=\"15\" y=\"190\" transform=\"rotate(-90 15 190)\" text-anchor=\"middle\">TFLOP/s</text>\n");
    double ymin = top / 1e4;   /* the bandwidth line enters the frame at its bottom or left edge */
    double x0 = fmax(0.1, ymin * 1e12 / (r->peak_gbps * 1e9)), y0 = r->peak_gbps * 1e9 * x0 / 1e12;
    fprintf(f, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
            lx(x0), ly(y0, top), lx(knee), ly(r->peak_tflops, top), lx(1e4), ly(r->peak_tflops, top));
    double ix = fmin(fmax(r->intensity, 0.1), 1e4), iy = fmin(fmax(r->tflops, top / 1e4), top);
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"#d62728\"/>\n<text x=\"%.1f\" y=\"%.1f\">%s %.1f TFLOP/s</text>\n",
            lx(ix), ly(iy, top), lx(ix) + 9, ly(iy, top) - 6, r->kernel, r->tflops);
    double maxms = 0;
    for (int i = 0; i < CR__N; i++)
        maxms = fmax(maxms, r->res_ms[i]);
    fprintf(f, "<text x=\"620\" y=\"52\">time each resource needs alone (ms)</text>\n");
    for (int i = 0; i < CR__N; i++) {
        double w = maxms > 0 ? r->res_ms[i] / maxms * 180 : 0;
        double y = 64 + i * 32;
        fprintf(f, "<text x=\"620\" y=\"%.0f\">%s</text><rect x=\"680\" y=\"%.0f\" width=\"%.1f\" height=\"18\" "
                   "fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\">%.3g</text>\n",
                y + 13, cost_resource_names[i], y, w, i == r->bottleneck ? "#d62728" : "#9ecae1",
                685 + w, y + 13, r->res_ms[i]);
    }
    fprintf(f, "</svg>\n");
    fclose(f);
    return 1;
}

/* ---- --sweep ------------------------------------------------------------------------ */

typedef struct { char set[256]; CostResult r; char why[160]; } SweepRow;

/* a point that cannot launch (no block fits on an SM: shared memory, registers
 * or threads over the limit) is infeasible: why says which, else why is "" */
static void feasibility(SweepRow *row)
{
    const CostResult *r = &row->r;
    row->why[0] = 0;
    if (r->blocks_per_sm > 0) {
        snprintf(row->why, sizeof row->why, "%s", r->infeasible);   /* spills, or "" */
        return;
    }
    Target tg = TG_SM90A;
    ir_lookup_target(r->target, strlen(r->target), &tg);
    const char *lim = r->occ_limiter ? r->occ_limiter : "";
    if (!strcmp(lim, "shared memory"))
        snprintf(row->why, sizeof row->why, "cannot launch: %lld bytes of shared memory per block, over "
                 "the %lld of %s", (long long)r->smem_bytes, (long long)tg_info(tg)->max_smem_per_block,
                 ir_target_names[tg]);
    else if (!strcmp(lim, "registers"))
        snprintf(row->why, sizeof row->why, "cannot launch: %d registers x %lld threads, over the %lld "
                 "registers of an SM", r->regs, (long long)r->threads, (long long)tg_info(tg)->regs_per_sm);
    else
        snprintf(row->why, sizeof row->why, "cannot launch: no block fits on an SM (limit: %s)",
                 *lim ? lim : "unknown");
}

/* feasible points by predicted time, then the infeasible ones */
static int by_time(const void *a, const void *b)
{
    const SweepRow *p = a, *q = b;
    if (!p->why[0] != !q->why[0])
        return p->why[0] ? 1 : -1;
    double x = p->r.time_ms, y = q->r.time_ms;
    return (x > y) - (x < y);
}

/* the values of item i ("BN=128,256"): name length and up to 16 values */
static int sweep_item(const char *item, size_t *namelen, char vals[16][32], int *nv)
{
    const char *eq = strchr(item, '=');
    if (!eq || eq == item)
        return 0;
    *namelen = (size_t)(eq - item);
    *nv = 0;
    const char *s = eq + 1;
    while (*s && *nv < 16) {
        size_t n = strcspn(s, ",");
        if (n == 0 || n >= 32)
            return 0;
        memcpy(vals[*nv], s, n);
        vals[(*nv)++][n] = 0;
        s += n + (s[n] == ',');
    }
    return *nv > 0 && !*s;
}

/* why a variant of the sweep is skipped, from the first diagnostic its cost
   reported: an assume that does not hold at the shape (E0961), or a check of
   the verifier (its codes are E0100 .. E0899) failing at those params; NULL
   for any other error (a bad --set, an unknown device), which ends the sweep */
static const char *skip_reason(CakeCtx *ctx, const Diag *d)
{
    const char *code = ir_diag_info[d->code].code;
    if (d->code == E0961)
        return "an assume does not hold";
    if (strcmp(code, "E0100") >= 0 && strcmp(code, "E0900") < 0)
        return ir_fmt(ctx, "it does not verify with these params (%s: %s)", code, d->msg);
    return NULL;
}

static int do_sweep(CakeCtx *ctx, const Options *o, Module *m)
{
    char vals[8][16][32];
    int nv[8], total = 1;
    size_t nl[8];
    for (int i = 0; i < o->nsweep; i++) {
        if (!sweep_item(o->sweep[i], &nl[i], vals[i], &nv[i])) {
            Diag *d = diag_report(ctx, E1005, IR_NOSPAN, "--sweep item `%s` is not NAME=v1,v2,...", o->sweep[i]);
            diag_help(ctx, d, "write `--sweep BN=128,256 STAGES=2,3,4` (at most 16 values each)");
            return drv_finish(ctx, o, EXIT_USER);
        }
        total *= nv[i];
    }
    if (total > 4096) {
        Diag *d = diag_report(ctx, E1005, IR_NOSPAN, "--sweep makes %d variants (at most 4096)", total);
        diag_help(ctx, d, "sweep fewer values at once");
        return drv_finish(ctx, o, EXIT_USER);
    }
    SweepRow *rows = calloc((size_t)total, sizeof *rows);
    cJSON *extra = cJSON_CreateObject();
    cJSON *skipped = cJSON_AddArrayToObject(extra, "skipped");
    int n = 0, rc = 0;
    for (int v = 0; v < total && !rc; v++) {
        char set[256] = "";
        int x = v;
        if (o->set)
            snprintf(set, sizeof set, "%s", o->set);
        for (int i = 0; i < o->nsweep; i++) {
            snprintf(set + strlen(set), sizeof set - strlen(set), "%s%.*s=%s", set[0] ? "," : "", (int)nl[i],
                     o->sweep[i], vals[i][x % nv[i]]);
            x /= nv[i];
        }
        CakeCostOptions co;
        if (!cost_options(ctx, o, set, &co)) { rc = 1; break; }
        snprintf(rows[n].set, sizeof rows[n].set, "%s", set);
        uint32_t nd = ctx->ndiags, ne = ctx->nerrors;
        rc = cake_cost(ctx, m, &co, &rows[n].r);
        const char *why = rc == 1 && ctx->ndiags > nd ? skip_reason(ctx, &ctx->diags[nd]) : NULL;
        if (why) {
            /* a variant its assumes exclude, or one that does not verify, is no
               launch: listed, not an error */
            ctx->ndiags = nd;
            ctx->nerrors = ne;
            cJSON_AddItemToArray(skipped, cJSON_CreateString(set));
            if (!o->json)
                fprintf(stderr, "skipped %s: %s\n", set, why);
            rc = 0;
            continue;
        }
        if (rc == 0)
            feasibility(&rows[n]);
        n += rc == 0;
    }
    qsort(rows, (size_t)n, sizeof *rows, by_time);
    cJSON *arr = cJSON_AddArrayToObject(extra, "sweep");
    if (!o->json && n)
        printf("%-40s %10s %21s %9s %8s %-9s %s\n", "params", "ms", "interval", "TFLOP/s", "GB/s",
               "bound", "verdict");
    for (int i = 0; i < n; i++) {
        const CostResult *r = &rows[i].r;
        cJSON *j = cake_cost_json(r);
        cJSON_AddStringToObject(j, "set", rows[i].set);
        cJSON_DeleteItemFromObject(j, "feasible");   /* the sweep's reason, which adds the limits */
        cJSON_DeleteItemFromObject(j, "infeasible");
        cJSON_AddBoolToObject(j, "feasible", !rows[i].why[0]);
        if (rows[i].why[0])
            cJSON_AddStringToObject(j, "infeasible", rows[i].why);
        cJSON_AddItemToArray(arr, j);
        if (!o->json)
            printf("%-40s %10.4f [%8.4f .. %8.4f] %9.1f %8.0f %-9s %s\n", rows[i].set, r->time_ms, r->lo_ms,
                   r->hi_ms, r->tflops, r->gbps, cost_resource_names[r->bottleneck],
                   rows[i].why[0] ? rows[i].why : r->measure ? "measure" : "model");
    }
    free(rows);
    return drv_finish_with(ctx, o, rc == 2 ? EXIT_BUG : rc ? EXIT_USER : EXIT_OK, extra);
}

/* ---- --compare ----------------------------------------------------------------------- */

static void compare_text(const CostResult *a, const CostResult *b)
{
    printf("%-14s %-28s %-28s\n", "", a->kernel, b->kernel);
    printf("%-14s %-28.4f %-28.4f\n", "ms", a->time_ms, b->time_ms);
    printf("%-14s [%.4f .. %.4f]%*s [%.4f .. %.4f]\n", "interval", a->lo_ms, a->hi_ms, 6, "", b->lo_ms, b->hi_ms);
    printf("%-14s %-28.1f %-28.1f\n", "TFLOP/s", a->tflops, b->tflops);
    printf("%-14s %-28.0f %-28.0f\n", "GB/s", a->gbps, b->gbps);
    printf("%-14s %-28.2f %-28.2f\n", "roofline", a->roofline_fraction, b->roofline_fraction);
    printf("%-14s %-28s %-28s\n", "bottleneck", cost_resource_names[a->bottleneck], cost_resource_names[b->bottleneck]);
    printf("%-14s %-28d %-28d\n", "blocks/SM", a->blocks_per_sm, b->blocks_per_sm);
    printf("%-14s %-28s %-28s\n", "verdict", a->measure ? "measure" : "model", b->measure ? "measure" : "model");
    double ra = a->time_ms, rb = b->time_ms;
    printf("%s is predicted %.2fx faster\n", ra <= rb ? a->kernel : b->kernel, ra <= rb ? rb / ra : ra / rb);
}

int drv_cmd_cost(CakeCtx *ctx, const Options *o, Module *m)
{
    if (o->nsweep)
        return do_sweep(ctx, o, m);
    CakeCostOptions co;
    if (!cost_options(ctx, o, o->set, &co))
        return drv_finish(ctx, o, EXIT_USER);
    CostResult r, r2;
    int rc = cake_cost(ctx, m, &co, &r);
    if (rc)
        return drv_finish(ctx, o, rc == 2 ? EXIT_BUG : EXIT_USER);
    cJSON *extra = cJSON_CreateObject();
    cJSON_AddItemToObject(extra, "cost", cake_cost_json(&r));
    if (o->compare) {
        Module *m2;
        int vr = cake_verify_file(ctx, o->compare, NULL, &m2);
        CakeCostOptions c2 = co;
        c2.kernel = NULL;
        c2.set = NULL;
        if (vr || (rc = cake_cost(ctx, m2, &c2, &r2)) != 0)
            return drv_finish_with(ctx, o, vr == 2 || rc == 2 ? EXIT_BUG : EXIT_USER, extra);
        cJSON_AddItemToObject(extra, "compare", cake_cost_json(&r2));
        if (!o->json)
            compare_text(&r, &r2);
    } else if (!o->json) {
        text_result(&r);
        if (o->explain)
            explain_text(&r);
    }
    if (o->svg && !write_svg(ctx, o->svg, &r))
        return drv_finish_with(ctx, o, EXIT_USER, extra);
    return drv_finish_with(ctx, o, EXIT_OK, extra);
}
