/* calibrate.c — `cakec calibrate MEASURED.jsonl [--device D] [-o FILE] [--json]`:
 * fits the cost model's constants on the training cases of a measurement
 * (bench/cost/measure.py writes one JSON object per line: file, kernel_arg,
 * set, shape, split, family, meas_ms, registers) and predicts every case with
 * them (cake_cost_fit). -o writes the constants file (bench/cost/DEVICE.json:
 * the constants, the calibrated families, the command, the date and the
 * training and held-out errors); stdout gets the per-case predictions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cjson/cJSON.h>
#include "cake.h"
#include "driver.h"

static const char *str_or_null(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) && strcmp(v->valuestring, "-") ? v->valuestring : NULL;
}

/* the measured cases: one object per line; lines without meas_ms are not cases */
static uint32_t read_cases(CakeCtx *ctx, char *text, CakeFitCase **out, cJSON ***objs)
{
    uint32_t cap = 64, n = 0;
    CakeFitCase *cs = calloc(cap, sizeof *cs);
    cJSON **js = calloc(cap, sizeof *js);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *j = cJSON_Parse(line);
        const cJSON *ms = j ? cJSON_GetObjectItemCaseSensitive(j, "meas_ms") : NULL;
        const char *file = j ? str_or_null(j, "file") : NULL;
        if (!cJSON_IsNumber(ms) || !file) {
            cJSON_Delete(j);
            continue;
        }
        if (n == cap) {
            cap *= 2;
            cs = realloc(cs, cap * sizeof *cs);
            js = realloc(js, cap * sizeof *js);
        }
        CakeFitCase *c = &cs[n];
        memset(c, 0, sizeof *c);
        c->file = ir_fmt(ctx, "%s", file);
        const char *k = str_or_null(j, "kernel_arg"), *st = str_or_null(j, "set"), *sh = str_or_null(j, "shape");
        c->kernel = k ? ir_fmt(ctx, "%s", k) : NULL;
        c->set = st ? ir_fmt(ctx, "%s", st) : NULL;
        c->shape = sh ? ir_fmt(ctx, "%s", sh) : NULL;
        c->meas_ms = ms->valuedouble;
        const char *split = str_or_null(j, "split");
        c->train = split && !strcmp(split, "train");
        c->outside = !split ? 0 : !strcmp(split, "outside") ? 1 : !strcmp(split, "fresh") ? 2 : 0;
        const cJSON *regs = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "registers"), "regs");
        c->regs = cJSON_IsNumber(regs) ? regs->valueint : 0;
        const cJSON *local = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "registers"),
                                                              "local_bytes");
        c->spill_bytes = cJSON_IsNumber(local) ? local->valueint : 0;
        js[n++] = j;
    }
    *out = cs;
    *objs = js;
    return n;
}

/* whether a case of group g (CakeFitCase.outside: 1 outside, 2 fresh) is among cs */
static int has_group(const CakeFitCase *cs, uint32_t n, int g)
{
    for (uint32_t i = 0; i < n; i++)
        if (cs[i].outside == g)
            return 1;
    return 0;
}

static cJSON *constants_json(const CostCalib *c)
{
    cJSON *k = cJSON_CreateObject();
    const struct { const char *name; double v; } rows[] = {
        {"eff_wgmma", c->eff_wgmma}, {"eff_mma", c->eff_mma}, {"eff_mfma", c->eff_mfma},
        {"eff_hbm", c->eff_hbm}, {"eff_l2", c->eff_l2}, {"eff_alu", c->eff_alu},
        {"eff_sfu", c->eff_sfu}, {"eff_smem", c->eff_smem}, {"overlap", c->overlap},
        {"l2_miss", c->l2_miss}, {"rel_err", c->rel_err}, {"launch_us", c->launch_us},
        {"pipe_lat", c->pipe_lat}, {"loop_mlp", c->loop_mlp}, {"lat_block", c->lat_block},
        {"req_rate", c->req_rate}, {"lat_mem", c->lat_mem}, {"res_exposed", c->res_exposed},
        {"mlp_knee", c->mlp_knee}, {"pipe_knee", c->pipe_knee}, {"body_knee", c->body_knee},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        cJSON_AddNumberToObject(k, rows[i].name, round(rows[i].v * 1e4) / 1e4);
    return k;
}

/* median |error| and the share within 25%, of one split (train 1 / held out 0 /
   written outside the project 2 / new shapes of the held-out kernels 3) */
static cJSON *errors_json(const CakeFitCase *cs, uint32_t n, int which)
{
    int train = which == 1, outside = which == 2 ? 1 : which == 3 ? 2 : 0;
    double *e = malloc(sizeof(double) * (n + 1));
    uint32_t m = 0, within = 0, model = 0, model_within = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (cs[i].train != train || cs[i].outside != outside || !cs[i].ok)
            continue;
        double x = fabs(cs[i].r.time_ms / cs[i].meas_ms - 1);
        e[m++] = x;
        within += x <= 0.25;
        if (!cs[i].r.measure) {
            model++;
            model_within += x <= 0.25;
        }
    }
    for (uint32_t i = 1; i < m; i++)   /* insertion sort: a few hundred cases */
        for (uint32_t j = i; j > 0 && e[j - 1] > e[j]; j--) {
            double t = e[j]; e[j] = e[j - 1]; e[j - 1] = t;
        }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "cases", m);
    cJSON_AddNumberToObject(o, "median_abs_err", m ? round(e[m / 2] * 1e4) / 1e4 : 0);
    cJSON_AddNumberToObject(o, "within_25", m ? round((double)within / m * 1e4) / 1e4 : 0);
    cJSON_AddNumberToObject(o, "model_cases", model);
    cJSON_AddNumberToObject(o, "model_within_25", model ? round((double)model_within / model * 1e4) / 1e4 : 0);
    free(e);
    return o;
}

static cJSON *families_json(const CostCalib *c)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < c->npat; i++) {
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "pattern", c->pat[i].key);
        cJSON_AddNumberToObject(f, "n", c->pat[i].n);
        cJSON_AddNumberToObject(f, "kernels", c->pat[i].kernels);
        cJSON_AddNumberToObject(f, "err80", round(c->pat[i].err * 1e4) / 1e4);
        cJSON *t = cJSON_AddArrayToObject(f, "time_ms");
        cJSON_AddItemToArray(t, cJSON_CreateNumber(c->pat[i].t_lo));
        cJSON_AddItemToArray(t, cJSON_CreateNumber(c->pat[i].t_hi));
        /* the low ends of the ranges a prediction must stay inside to say `model` */
        cJSON_AddNumberToObject(f, "in_flight_min", round(c->pat[i].mlp_lo * 1e4) / 1e4);
        cJSON_AddNumberToObject(f, "waves_min", round(c->pat[i].waves_lo * 1e4) / 1e4);
        cJSON_AddItemToArray(arr, f);
    }
    return arr;
}

static int write_constants(CakeCtx *ctx, const char *path, const char *device, const CostCalib *c,
                           const CakeFitCase *cs, uint32_t n, const char *input)
{
    cJSON *j = cJSON_CreateObject();
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    cJSON_AddStringToObject(j, "device", device);
    cJSON_AddStringToObject(j, "date", date);
    const char *base = strrchr(input, '/');   /* no folder of the machine it ran on */
    cJSON_AddStringToObject(j, "command", ir_fmt(ctx, "bash bench/device/run_cost.sh (cakec calibrate %s)",
                                                 base ? base + 1 : input));
    cJSON_AddItemToObject(j, "constants", constants_json(c));
    cJSON_AddNumberToObject(j, "pattern_err", c->pat_err);
    cJSON_AddItemToObject(j, "calibrated", families_json(c));
    cJSON_AddItemToObject(j, "train", errors_json(cs, n, 1));
    cJSON_AddItemToObject(j, "heldout", errors_json(cs, n, 0));
    if (has_group(cs, n, 1))
        cJSON_AddItemToObject(j, "outside", errors_json(cs, n, 2));
    if (has_group(cs, n, 2))
        cJSON_AddItemToObject(j, "fresh", errors_json(cs, n, 3));
    char *s = cJSON_Print(j);
    cJSON_Delete(j);
    FILE *f = fopen(path, "w");
    int ok = f && s && fputs(s, f) >= 0 && fputc('\n', f) != EOF;
    if (f)
        ok &= fclose(f) == 0;
    free(s);
    if (!ok)
        diag_report(ctx, E1006, IR_NOSPAN, "cannot write `%s`", path);
    return ok;
}

int drv_cmd_calibrate(CakeCtx *ctx, int argc, char **argv)
{
    Options o = {.command = "calibrate"};
    const char *device = "h200";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            o.json = 1;
        else if (!strcmp(argv[i], "--device") && i + 1 < argc)
            device = argv[++i];
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            o.out = argv[++i];
        else if (argv[i][0] != '-' && !o.file)
            o.file = argv[i];
        else {
            Diag *d = diag_report(ctx, E0002, IR_NOSPAN, "calibrate: unexpected argument `%s`", argv[i]);
            diag_help(ctx, d, "usage: cakec calibrate MEASURED.jsonl [--device D] [-o CONSTANTS.json] [--json]");
            return drv_finish(ctx, &o, EXIT_USER);
        }
    }
    char *text = o.file ? cake_read_text(o.file, (size_t)64 << 20, NULL) : NULL;
    if (!text) {
        Diag *d = diag_report(ctx, E0002, IR_NOSPAN, "calibrate: cannot read `%s`", o.file ? o.file : "(none)");
        diag_help(ctx, d, "give the measurement bench/cost/measure.py wrote (measured.jsonl)");
        return drv_finish(ctx, &o, EXIT_USER);
    }
    CakeFitCase *cs;
    cJSON **objs;
    uint32_t n = read_cases(ctx, text, &cs, &objs);
    free(text);
    CostCalib cal;
    int rc = cake_cost_fit(ctx, device, cs, n, &cal);
    cJSON *extra = cJSON_CreateObject();
    if (rc == 0) {
        cJSON_AddItemToObject(extra, "constants", constants_json(&cal));
        cJSON_AddItemToObject(extra, "calibrated", families_json(&cal));
        cJSON_AddItemToObject(extra, "train", errors_json(cs, n, 1));
        cJSON_AddItemToObject(extra, "heldout", errors_json(cs, n, 0));
        if (has_group(cs, n, 1))
            cJSON_AddItemToObject(extra, "outside", errors_json(cs, n, 2));
        if (has_group(cs, n, 2))
            cJSON_AddItemToObject(extra, "fresh", errors_json(cs, n, 3));
        cJSON *arr = cJSON_AddArrayToObject(extra, "cases");
        for (uint32_t i = 0; i < n; i++) {
            cJSON *c = objs[i];
            objs[i] = NULL;
            if (cs[i].ok) {
                cJSON_AddItemToObject(c, "cost", cake_cost_json(&cs[i].r));
                cJSON_AddNumberToObject(c, "pred_ms", cs[i].r.time_ms);
            } else
                cJSON_AddStringToObject(c, "cost_error", cs[i].err);
            cJSON_AddItemToArray(arr, c);
        }
        if (o.out && !write_constants(ctx, o.out, device, &cal, cs, n, o.file))
            rc = 1;
        if (!o.json)
            for (uint32_t i = 0; i < n; i++)
                printf("%-8s %-40s %-20s %-26s meas %9.4f  pred %9.4f  %s\n", cs[i].train ? "train" : cs[i].outside == 1 ? "outside" : cs[i].outside ? "fresh" : "heldout",
                       cs[i].file, cs[i].set ? cs[i].set : "-", cs[i].shape ? cs[i].shape : "-", cs[i].meas_ms,
                       cs[i].ok ? cs[i].r.time_ms : NAN, cs[i].ok ? (cs[i].r.measure ? "measure" : "model") : cs[i].err);
    }
    for (uint32_t i = 0; i < n; i++)
        cJSON_Delete(objs[i]);
    free(objs);
    free(cs);
    return drv_finish_with(ctx, &o, rc == 2 ? EXIT_BUG : rc ? EXIT_USER : EXIT_OK, extra);
}
