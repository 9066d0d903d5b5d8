/* lib_select_speed.c — how long one dispatch takes (issue 13: <= 1 us per
 * cake_lib_select). Opens a library artifact, then for each op times
 * batches of selects at shapes spread over its range (log-uniform, seeded:
 * tuned hits, cost-model cells and ragged sizes alike; those some variant
 * covers) and prints the median
 * nanoseconds per select of each op and the worst. Exit 1 when the worst
 * median is over the limit.
 *
 *     build/cake_lib_select_speed FILE.cakelib [N] [LIMIT_NS]   (N default 20000, limit 1000)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cake_lib.h"

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* xorshift: the shapes are the same every run */
static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

enum { SHAPES = 64, BATCHES = 9 };

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE.cakelib [N] [LIMIT_NS]\n", argv[0]);
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 20000;
    double limit = argc > 3 ? atof(argv[3]) : 1000;
    CakeCtx *ctx = ctx_new();
    CakeLib *lib;
    if (cake_lib_open(ctx, argv[1], &lib)) {
        diag_print_text(ctx, stderr, 0);
        return 1;
    }
    double worst = 0;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (uint32_t op = 0; op < cake_lib_nops(lib); op++) {
        CakeLibOp o;
        cake_lib_op(lib, op, &o);
        CakeLibDim dims[SHAPES][16];
        CakeLibChoice ch;
        int ok = 0;
        for (int s = 0; s < SHAPES; s++) {
            for (uint32_t d = 0; d < o.ndims; d++) {
                /* 1 .. 2^15, log-uniform; even values half the time, multiples of 8 a quarter */
                double e = (double)(next(&seed) % 15000) / 1000.0;
                int64_t v = (int64_t)pow(2.0, e) + 1;
                uint64_t r = next(&seed) % 4;
                v = r == 0 ? v : r == 1 ? (v + 1) / 2 * 2 : (v + 7) / 8 * 8;
                dims[s][d] = (CakeLibDim){o.dims[d], v};
            }
            ctx->ndiags = ctx->nerrors = 0;
            if (cake_lib_select(ctx, lib, op, dims[s], o.ndims, &ch) == 0)
                memcpy(dims[ok++], dims[s], sizeof dims[s]);   /* time the covered ones */
        }
        if (!ok)
            continue;
        double med[BATCHES];
        for (int b = 0; b < BATCHES; b++) {
            double t0 = now_ns();
            for (int i = 0; i < n; i++)
                cake_lib_select(ctx, lib, op, dims[i % ok], o.ndims, &ch);
            med[b] = (now_ns() - t0) / n;
        }
        qsort(med, BATCHES, sizeof *med, cmp);
        printf("%-20s %7.1f ns per select  (%d of %d shapes covered)\n", o.name, med[BATCHES / 2],
               ok, SHAPES);
        if (med[BATCHES / 2] > worst)
            worst = med[BATCHES / 2];
    }
    printf("worst %.1f ns per select (limit %.0f)\n", worst, limit);
    cake_lib_close(lib);
    ctx_free(ctx);
    return worst > limit;
}
