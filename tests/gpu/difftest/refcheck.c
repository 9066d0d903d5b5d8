/* refcheck.c — cake_refcheck FILE...: the reference half of `run --check` without a GPU.
 * For each kernel it picks the checker's shapes and evaluates the reference on each
 * (oracle/check.c's check_suite) with a device that runs nothing: the outputs stay
 * poisoned, so every report is a failure (unwritten) — but never an error, which would
 * mean the reference cannot be evaluated (E0951..E0961: an unsupported construct, an
 * index out of bounds, no shape that fits the assumes). tests/gpu/test_difftest.sh runs
 * it on kernels from tirgen.py, so a generator bug in a reference shows on the host,
 * not on the device. Prints the diagnostics of each file that errs; exit 1 if any. */
#include <stdio.h>
#include "cake.h"
#include "check.h"

static int no_device(void *user, CakeCtx *ctx, CheckLaunch *l)
{
    (void)user;
    (void)ctx;
    (void)l;
    return 0;
}

/* 0 when every shape's reference evaluates; 1 otherwise (printed) */
static int refcheck_file(const char *path)
{
    CakeCtx *ctx = ctx_new();
    if (!ctx)
        return 1;
    Module *m = NULL;
    int bad = cake_verify_file(ctx, path, NULL, &m) != 0 || ctx->nerrors || !m || !m->nkernels;
    uint32_t n = 0;
    if (!bad) {
        ShapeEnv base;
        shape_env_clear(&base);
        CheckReport reps[8];
        n = check_suite(ctx, m->kernels[0], &base, NULL, no_device, NULL, reps, 8);
        bad = n == 0;
        for (uint32_t i = 0; i < n; i++)
            if (reps[i].status == CHECK_ERROR) {
                fprintf(stderr, "%s: shape %s: %s\n", path, reps[i].shape, reps[i].message);
                bad = 1;
            }
    }
    if (bad) {
        fprintf(stderr, "%s: the reference does not evaluate (%u shapes)\n", path, n);
        diag_print_text(ctx, stderr, 0);
    }
    ctx_free(ctx);
    return bad;
}

int main(int argc, char **argv)
{
    int bad = 0;
    for (int i = 1; i < argc; i++)
        bad |= refcheck_file(argv[i]);
    return bad;
}
