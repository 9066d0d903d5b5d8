/* cost_speed.c — how long one cost-model evaluation takes (issues 8 and 18: <= 1 ms
 * per variant on the 2-core dev machine, lowering included). Per file and kernel:
 *   first   one cake_cost in a fresh context after parse and verify (untimed): the
 *           instance bound, its copy lowered to TIR-L, counted, predicted — what a
 *           new variant costs; the median over N/10 fresh contexts;
 *   again   N more calls in one context (the bound instance cached; the lowering
 *           and the count run every time), the median.
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
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);   /* CPU time: the machine is shared */
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
            int rc = 0, nf = n / 10 > 3 ? n / 10 : 3;
            double *tf = malloc(sizeof(double) * (size_t)nf);
            for (int i = 0; i < nf && rc == 0; i++) {   /* fresh contexts: a new variant each */
                CakeCtx *c2 = ctx_new();
                Module *m2;
                rc = cake_verify_file(c2, argv[f], NULL, &m2);
                CakeCostOptions c2o = co;
                c2o.kernel = ir_symstr(c2, m2->kernels[ki]->name);
                double t0 = now_us();
                if (!rc)
                    rc = cake_cost(c2, m2, &c2o, &r);
                tf[i] = now_us() - t0;
                ctx_free(c2);
            }
            for (int i = 0; i < n && rc == 0; i++) {
                double t0 = now_us();
                rc = cake_cost(ctx, m, &co, &r);
                t[i] = now_us() - t0;
            }
            if (rc) {
                printf("%-36s %s: cost failed\n", argv[f], co.kernel);
                free(tf);
                continue;
            }
            qsort(t, (size_t)n, sizeof *t, cmp);
            qsort(tf, (size_t)nf, sizeof *tf, cmp);
            double worst = tf[nf / 2] > t[n / 2] ? tf[nf / 2] : t[n / 2];
            printf("%-36s %-20s first %7.1f us  again %7.1f us  %s\n", argv[f], co.kernel, tf[nf / 2],
                   t[n / 2], worst <= 1000 ? "ok" : "OVER 1 ms");
            worst_over |= worst > 1000;
            free(tf);
        }
        ctx_free(ctx);
    }
    free(t);
    return worst_over;
}
