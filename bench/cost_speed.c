/* cost_speed.c — how long one cost-model evaluation takes (issue 8: <= 1 ms per
 * example on the 2-core dev machine). Parses and verifies each file once, then
 * times N calls of cake_cost (profile + prediction, the calibration constants
 * given, so no file is read) and prints the median microseconds per call.
 *
 *     build/cake_cost_speed [N] FILE.tir ...     (N default 200; e.g. every examples file)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cake.h"

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int first = 1, n = 200, worst_over = 0;
    if (argc > 1 && strspn(argv[1], "0123456789") == strlen(argv[1])) {
        n = atoi(argv[1]);
        first = 2;
    }
    double *t = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int f = first; f < argc; f++) {
        CakeCtx *ctx = ctx_new();
        Module *m;
        if (cake_verify_file(ctx, argv[f], NULL, &m) || !m->nkernels) {
            printf("%-36s does not verify\n", argv[f]);
            ctx_free(ctx);
            continue;
        }
        CostCalib cal;
        cost_calib_default(&cal);
        for (uint32_t ki = 0; ki < m->nkernels; ki++) {
            CakeCostOptions co = {.kernel = ir_symstr(ctx, m->kernels[ki]->name), .calib = &cal};
            CostResult r;
            int rc = 0;
            for (int i = 0; i < n && rc == 0; i++) {
                double t0 = now_us();
                rc = cake_cost(ctx, m, &co, &r);
                t[i] = now_us() - t0;
            }
            if (rc) {
                printf("%-36s %s: cost failed\n", argv[f], co.kernel);
                continue;
            }
            qsort(t, (size_t)n, sizeof *t, cmp);
            printf("%-36s %-16s median %7.1f us  max %7.1f us  %s\n", argv[f], co.kernel, t[n / 2], t[n - 1],
                   t[n / 2] <= 1000 ? "ok" : "OVER 1 ms");
            worst_over |= t[n / 2] > 1000;
        }
        ctx_free(ctx);
    }
    free(t);
    return worst_over;
}
