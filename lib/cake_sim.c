/* cake_sim.c — libcake's `run --sim`: the lowered instance of a kernel, run by
 * the CPU executor of TIR-L (sim/sim.h) as the device callback of the
 * oracle's check (oracle/check.h), at the same shapes and seeded inputs as
 * `run --check`. */
#include "cake_priv.h"

typedef struct { const SimOptions *opt; } SimState;

static int sim_device(void *user, CakeCtx *ctx, CheckLaunch *l)
{
    const SimState *st = user;
    SimOptions o = st->opt ? *st->opt : (SimOptions){0};
    int64_t sm = shape_env_sm_count(ctx, l->env);
    if (sm > 0)
        o.sm_count = sm;
    return sim_launch(ctx, &o, l) != 0;
}

static int sim_check(CakeCtx *ctx, const Module *m, const char *kernel, Target tg, const char *set,
                     const ShapeEnv *env, int only_env, const CheckOptions *copt, const SimOptions *sopt,
                     CheckReport *reps, uint32_t max, uint32_t *n)
{
    const CakeInstance *in;
    int rc = cake_instance(ctx, m, kernel, tg, set, CAKE_INST_LOWERED, &in);
    if (rc)
        return rc;
    SimState st = {sopt};
    ShapeEnv base;
    shape_env_clear(&base);
    if (env)
        base = *env;
    if (only_env && max) {
        check_run_ex(ctx, in->k, &base, sim_device, &st, copt, &reps[0]);
        *n = 1;
    } else if (!only_env) {
        *n = check_suite(ctx, in->k, &base, copt, sim_device, &st, reps, max);
    }
    return 0;
}

int cake_sim_check(CakeCtx *ctx, const Module *m, const char *kernel, Target tg, const char *set,
                   const ShapeEnv *env, int only_env, const CheckOptions *copt, const SimOptions *sopt,
                   CheckReport *reps, uint32_t max, uint32_t *n)
{
    int rc;
    *n = 0;
    CAKE_PROTECTED(ctx, rc, sim_check(ctx, m, kernel, tg, set, env, only_env, copt, sopt, reps, max, n));
    return rc;
}
