/* hostcheck.c — cake_hostcheck [--set S] [--shape D] [--only] [--list] FILE: the host half of
 * `run --check` without a GPU. It picks the shapes the default check picks (with
 * --shape/--set applied; --only: that one shape, as `run --check --shape` does) and
 * evaluates the reference on each with a device that runs nothing (the outputs stay
 * poisoned), printing one line per shape: the shape, the sm.count the launch would
 * get, whether it was sampled, the reference's estimated flops and its host time.
 * Without --set, every combination of declared parameter values is checked, and
 * without --set and --shape every kernel of the file, as `run --check` does. The check-speed and oracle-reach tests read it. Exit 1 when a
 * reference does not evaluate (a report with status error) or no shape fits. --list: the
 * shapes and their estimated flops only (the reference is stopped at its first step). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "cake.h"
#include "check.h"
#include "interp.h"
#include "verify.h"

static int no_device(void *user, CakeCtx *ctx, CheckLaunch *l)
{
    (void)user;
    (void)ctx;
    (void)l;
    return 0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double estimated_flops(CakeCtx *ctx, const Kernel *k, const ShapeEnv *env)
{
    Interp *I = interp_new(ctx, k);
    InterpCost c = {0};
    if (I && !interp_cost(I, env, &c))
        c.flops = -1;
    interp_free(I);
    return c.flops;
}

static int one_set(CakeCtx *ctx, Kernel *k, const char *set, const char *shape, int only,
                   int list)
{
    ShapeEnv base;
    if (!cake_parse_bindings(ctx, k, set, shape, &base))
        return 1;
    CheckReport reps[CHECK_SUITE_MAX];
    CheckOptions opt;
    memset(&opt, 0, sizeof opt);
    opt.no_diags = 1;
    if (list) {
        ShapeEnv shapes[CHECK_SUITE_MAX];
        uint32_t n = only ? 1 : check_suite_shapes(ctx, k, &base, &opt, shapes, CHECK_DEFAULT_SHAPES);
        if (only)
            shapes[0] = base;
        for (uint32_t i = 0; i < n; i++) {
            char buf[256];
            printf("%-14s %-44s flops %.3g\n", set ? set : "-",
                   shape_env_format(ctx, k, &shapes[i], buf, sizeof buf),
                   estimated_flops(ctx, k, &shapes[i]));
        }
        return n == 0;
    }
    uint32_t n = 1;
    if (only)
        check_run_ex(ctx, k, &base, no_device, NULL, &opt, &reps[0]);
    else
        n = check_suite(ctx, k, &base, &opt, no_device, NULL, reps, CHECK_DEFAULT_SHAPES);
    int bad = n == 0;
    for (uint32_t i = 0; i < n; i++) {
        const CheckReport *r = &reps[i];
        char smc[32] = "device";
        if (shape_env_sm_count(ctx, &r->env))
            snprintf(smc, sizeof smc, "%lld", (long long)shape_env_sm_count(ctx, &r->env));
        printf("%-14s %-44s sm.count=%-6s %-22s flops %.3g ref %.3f s%s%s\n", set ? set : "-",
               r->shape, smc,
               r->sample.on ? (r->sample.tiles ? "sampled(tiles)" : "sampled(rows)") : "full",
               r->cost.flops, r->ref_seconds, r->status == CHECK_ERROR ? "  ERROR: " : "",
               r->status == CHECK_ERROR ? r->message : "");
        bad |= r->status == CHECK_ERROR;
    }
    return bad;
}

int main(int argc, char **argv)
{
    const char *set = NULL, *shape = NULL, *file = NULL;
    int only = 0, list = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--set") && i + 1 < argc)
            set = argv[++i];
        else if (!strcmp(argv[i], "--shape") && i + 1 < argc)
            shape = argv[++i];
        else if (!strcmp(argv[i], "--only"))
            only = 1;
        else if (!strcmp(argv[i], "--list"))
            list = 1;
        else
            file = argv[i];
    }
    if (!file) {
        fprintf(stderr, "usage: cake_hostcheck [--set S] [--shape D] [--only] [--list] FILE\n");
        return 2;
    }
    CakeCtx *ctx = ctx_new();
    Module *m = NULL;
    double t0 = now();
    int bad = cake_verify_file(ctx, file, NULL, &m) != 0 || ctx->nerrors || !m || !m->nkernels;
    for (uint32_t j = 0; !bad && j < m->nkernels; j++) { /* every kernel with a reference, as run --check */
        Kernel *k = m->kernels[j];
        if (j && (!k->reference || set || shape))
            continue;
        if (m->nkernels > 1)
            printf("kernel %s\n", ir_symstr(ctx, k->name));
        const char *sets[64];
        uint32_t ns = set ? 0 : ver_param_combos(ctx, k, sets, 64);
        if (!ns)
            bad |= one_set(ctx, k, set, shape, only, list);
        for (uint32_t i = 0; i < ns; i++)
            bad |= one_set(ctx, k, sets[i], shape, only, list);
    }
    diag_print_text(ctx, stderr, 0);
    printf("total %.3f s\n", now() - t0);
    ctx_free(ctx);
    return bad;
}
