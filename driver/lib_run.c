/* lib_run.c — `cakec lib run FILE --op OP --shape ... --check` (the chosen
 * variant through the oracle) and `cakec lib bench ...` (through the timer,
 * the output of `cakec run --bench`), on cake_lib.h. */
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

static int do_check(CakeCtx *ctx, const LibOptions *o, RtDevice *dev, CakeKernel *ck,
                    const ShapeEnv *env, cJSON *extra)
{
    CheckOptions copt = {0};
    if (o->opt.seed)
        copt.seed = strtoull(o->opt.seed, NULL, 0);
    CheckReport reps[8];
    uint32_t n = 0;
    if (cake_check(ctx, dev, ck, env, 1, &copt, reps, 8, &n) == 2)
        return EXIT_BUG;
    cJSON *arr = cJSON_AddArrayToObject(extra, "check");
    int ok = n > 0;
    for (uint32_t i = 0; i < n; i++) {
        cJSON_AddItemToArray(arr, drv_check_json(&reps[i]));
        if (!o->opt.json)
            drv_check_text(&reps[i]);
        ok &= reps[i].ok;
    }
    if (broken(ctx, dev, "failed during the check"))
        return EXIT_DEVICE;
    return ok ? EXIT_OK : EXIT_USER;
}

static int do_bench(CakeCtx *ctx, const LibOptions *o, RtDevice *dev, CakeKernel *ck,
                    const ShapeEnv *env, cJSON *extra)
{
    CakeBench b;
    int rc = cake_bench(ctx, dev, ck, env, o->opt.runs ? atoi(o->opt.runs) : 0, &b);
    if (rc == 2)
        return EXIT_BUG;
    if (rc) {
        if (!broken(ctx, dev, "failed during the bench"))
            diag_report(ctx, E0972, ck->k->span, "bench failed: %s", b.message);
        return EXIT_DEVICE;
    }
    cJSON_AddItemToObject(extra, "bench", drv_bench_json(&b));
    if (!o->opt.json)
        drv_bench_text(&b, NULL);
    return EXIT_OK;
}

int lib_cmd_run(CakeCtx *ctx, const LibOptions *o)
{
    CakeLib *lib = NULL;
    RtDevice *dev = NULL;
    cJSON *extra = cJSON_CreateObject();
    CakeLibChoice ch;
    int code = lib_open_any(ctx, o->opt.file, &lib);
    code = code == 2 ? EXIT_BUG : code ? EXIT_USER : lib_choose(ctx, o, lib, &ch);
    if (!code && !open_dev(ctx, o, &dev))
        code = EXIT_DEVICE;
    CakeKernel *ck = NULL;
    if (!code) {
        int rc = cake_lib_kernel(ctx, lib, dev, &ch, &ck);
        code = rc == 2 ? EXIT_BUG : rc == 3 ? EXIT_DEVICE : rc ? EXIT_USER : EXIT_OK;
    }
    if (!code) {
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
        if (!strcmp(o->sub, "run") && (o->opt.check || !o->opt.runs))
            code = do_check(ctx, o, dev, ck, &env, extra);
        else
            code = do_bench(ctx, o, dev, ck, &env, extra);
    }
    if (dev && rt_health(dev) == RT_TIMEOUT) {
        drv_finish_with(ctx, &o->opt, EXIT_DEVICE, extra);
        rt_exit_now(EXIT_DEVICE);
    }
    if (dev && rt_health(dev) == RT_OK)
        cake_lib_close(lib);
    rt_close(dev);
    return drv_finish_with(ctx, &o->opt, code, extra);
}
