/* cost_speed.c — how long one cost-model evaluation takes (issues 8 and 18: <= 1 ms
 * per variant on the 2-core dev machine, lowering included). Two modes:
 *
 *     build/cake_cost_speed [N] [OPTIONS] FILE.tir ...          every kernel of each file
 *     build/cake_cost_speed [N] [OPTIONS] --library MANIFEST    every variant of the library
 *
 * OPTIONS (in any order): --digest, --no-pool. Every context of the run
 * draws its arena's blocks from one pool (ctx_new_pooled), as a process that evaluates
 * variant after variant keeps it: a fresh context reuses the warm pages of the one
 * before. --no-pool gives each context blocks of its own (fresh pages from the system,
 * ~2 us each on the 2-core machine: what a process's first evaluation pays).
 *
 * Per kernel (a library variant: its file, kernel or launches, set and target; a
 * variant of several launches sums them):
 *   first   one cake_cost in a fresh context after parse and verify (untimed): the
 *           instance bound, its copy lowered to TIR-L, counted, predicted — what a
 *           new variant costs; the median over max(3, N/10) fresh contexts;
 *   bind    of that, the instance's binding alone (cake_instance, timed first);
 *   again   N more calls in one context (the bound instance and its lowered copy
 *           cached; the count and the prediction run every time), the median.
 * The library mode ends with min / median / max over the variants of each column and
 * the number over 1 ms, for every variant and apart for the tensor-core ones (a
 * prediction with tensor-unit time) and the SIMT ones. Exit 1 when a first or again
 * median is over 1 ms. With --digest (N defaults to 1 then), each line also carries a
 * hash of every number and string of the prediction at full precision (the same at
 * every evaluation of the variant, else `DIGEST MOVED`), for a before/after diff of a
 * change that must not change any prediction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cjson/cJSON.h>
#include "cake.h"

typedef struct {
    double first, bind, again;
    int tc;              /* the prediction has tensor-unit time */
    uint64_t digest;     /* the prediction at full precision (hashed) */
    int moved;           /* evaluations of one variant that disagreed */
} Speed;

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* every number (%a: exact) and string of a prediction, hashed */
static uint64_t digest(const CostResult *r)
{
    char b[512];
    uint64_t h = fnv(14695981039346656037u, r->kernel);
    h = fnv(fnv(fnv(fnv(h, r->target), r->device), r->shape), r->pattern);
    h = fnv(fnv(h, r->infeasible), r->occ_limiter ? r->occ_limiter : "-");
    snprintf(b, sizeof b, "%a %a %a %a %a %a %a %a %a %a %a %a %a %d", r->time_ms, r->lo_ms, r->hi_ms,
             r->flops, r->tflops, r->dram_bytes, r->l2_bytes, r->gbps, r->intensity, r->peak_tflops,
             r->peak_gbps, r->roofline_ms, r->roofline_fraction, r->bottleneck);
    h = fnv(h, b);
    for (int i = 0; i < CR__N; i++) {
        snprintf(b, sizeof b, " %a", r->res_ms[i]);
        h = fnv(h, b);
    }
    for (int i = 0; i < 4; i++) {
        snprintf(b, sizeof b, " %a", r->body_ms[i]);
        h = fnv(h, b);
    }
    snprintf(b, sizeof b, "%lld %lld %lld %d %d %d %a %a %a %a %a %a %a %d", (long long)r->threads,
             (long long)r->nblocks, (long long)r->smem_bytes, r->regs, r->regs_estimated, r->blocks_per_sm,
             r->occupancy, r->waves, r->wave_efficiency, r->inflight_bytes, r->inflight_needed,
             r->inflight_block, r->pipeline_ms, r->measure);
    h = fnv(h, b);
    for (uint32_t i = 0; i < r->nroles; i++) {
        snprintf(b, sizeof b, "%s %lld %d %a %a %a %a %a", r->roles[i].name, (long long)r->roles[i].threads,
                 r->roles[i].regs, r->roles[i].ms, r->roles[i].tensor_ms, r->roles[i].simt_ms,
                 r->roles[i].mufu_ms, r->roles[i].shared_ms);
        h = fnv(h, b);
    }
    for (uint32_t i = 0; i < r->nnotes; i++)
        h = fnv(h, r->notes[i]);
    return h;
}

/* what a run shares: the contexts' block pool (NULL: --no-pool) */
typedef struct {
    ArenaPool *pool;
} Run;

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

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp);
    return t[n / 2];
}

static int target_of(const char *name, Target *tg)
{
    for (int i = 0; i < TG__COUNT; i++)
        if (name && !strcmp(name, ir_target_names[i])) {
            *tg = (Target)i;
            return 1;
        }
    return 0;
}

/* kernel ki of file (or the one named) at set on tg (has_tg): n calls; 0 or the failure */
static int time_kernel(const Run *run, const char *file, const char *kname, const char *set,
                       const char *tgname, const char *shape, int n, Speed *s)
{
    int nf = n / 10 > 3 ? n / 10 : 3, rc = 0;
    double *tf = calloc((size_t)nf, sizeof *tf), *tb = calloc((size_t)nf, sizeof *tb);
    double *ta = calloc((size_t)(n > 0 ? n : 1), sizeof *ta);
    Target tg = TG__COUNT;
    int has_tg = target_of(tgname, &tg);
    CostCalib cal;
    cost_calib_default(&cal);
    CostResult r;
    s->moved = 0;
    for (int i = 0; i <= nf && rc == 0; i++) {   /* fresh contexts: a new variant each; the last one stays */
        CakeCtx *c = ctx_new_pooled(run->pool);
        Module *m;
        rc = cake_verify_file(c, file, NULL, &m) || !m->nkernels;
        const char *kn = rc ? NULL : kname ? kname : ir_symstr(c, m->kernels[0]->name);
        CakeCostOptions co = {.kernel = kn, .target = tg, .has_target = has_tg, .set = set,
                             .shape = shape, .calib = &cal};
        const CakeInstance *inst;
        double t0 = now_us();
        if (!rc && has_tg)
            rc = cake_instance(c, m, kn, tg, set, CAKE_INST_BOUND, &inst);
        double t1 = now_us();
        if (!rc)
            rc = cake_cost(c, m, &co, &r);
        double t2 = now_us();
        if (!rc && i == 0) {
            s->digest = digest(&r);
            s->tc = r.res_ms[CR_TENSOR] > 0;
        }
        s->moved |= !rc && digest(&r) != s->digest;
        if (i < nf) {
            tb[i] = t1 - t0;
            tf[i] = t2 - t0;
        } else {
            for (int j = 0; j < n && rc == 0; j++) {
                double t3 = now_us();
                rc = cake_cost(c, m, &co, &r);
                ta[j] = now_us() - t3;
                s->moved |= !rc && digest(&r) != s->digest;
            }
        }
        ctx_free(c);
    }
    if (!rc) {
        s->first = median(tf, nf);
        s->bind = median(tb, nf);
        s->again = median(ta, n);
    }
    free(tf);
    free(tb);
    free(ta);
    return rc;
}

static int files(const Run *run, int n, char **names, int count, int show_digest)
{
    int over = 0;
    for (int f = 0; f < count; f++) {
        CakeCtx *ctx = ctx_new();
        Module *m;
        if (cake_verify_file(ctx, names[f], NULL, &m) || !m->nkernels) {
            printf("%-36s does not verify\n", names[f]);
            ctx_free(ctx);
            continue;
        }
        for (uint32_t ki = 0; ki < m->nkernels; ki++) {
            const char *kn = ir_symstr(ctx, m->kernels[ki]->name);
            Speed s;
            if (time_kernel(run, names[f], kn, NULL, NULL, NULL, n, &s)) {
                printf("%-36s %s: cost failed\n", names[f], kn);
                continue;
            }
            double worst = s.first > s.again ? s.first : s.again;
            printf("%-36s %-20s first %7.1f us  again %7.1f us  %s", names[f], kn, s.first, s.again,
                   worst <= 1000 ? "ok" : "OVER 1 ms");
            if (show_digest)
                printf("  digest %016llx%s", (unsigned long long)s.digest, s.moved ? " DIGEST MOVED" : "");
            printf("\n");
            over |= worst > 1000 || s.moved;
        }
        ctx_free(ctx);
    }
    return over;
}

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(j) ? j->valuestring : NULL;
}

/* min / median / max of the variants of one class (tc: 1 tensor core, 0 SIMT, -1 all) */
static void summary(const char *what, const double *col, const int *cls, int tc, int n)
{
    double *t = calloc((size_t)n, sizeof *t);
    int over = 0, m = 0;
    for (int i = 0; i < n; i++)
        if (tc < 0 || cls[i] == tc) {
            t[m++] = col[i];
            over += col[i] > 1000;
        }
    if (m) {
        qsort(t, (size_t)m, sizeof *t, cmp);
        printf("%-6s %-11s min %7.1f us  median %7.1f us  max %8.1f us  over 1 ms: %d of %d\n", what,
               tc < 0 ? "all" : tc ? "tensor core" : "SIMT", t[0], t[m / 2], t[m - 1], over, m);
    }
    free(t);
}

/* a shape the variant costs at: the file's own, else every dim of the op's range at the
   same power of two (clamped to the range), largest first; NULL when none does */
static int shape_for(const Run *run, const cJSON *op, const char *file, const char *kname,
                     const char *set, const char *tgname, char *shape, size_t cap)
{
    Target tg = TG__COUNT;
    int has_tg = target_of(tgname, &tg);
    CakeCtx *c = ctx_new_pooled(run->pool);
    Module *m;
    int ok = 0;
    if (!cake_verify_file(c, file, NULL, &m) && m->nkernels) {
        CostCalib cal;
        cost_calib_default(&cal);
        CostResult r;
        const cJSON *range = cJSON_GetObjectItemCaseSensitive(op, "range"), *d;
        for (int e = -1; e <= 20 && !ok; e++) {
            shape[0] = 0;
            size_t at = 0;
            if (e >= 0)
                cJSON_ArrayForEach(d, range) {
                    double lo = cJSON_GetArrayItem(d, 0)->valuedouble, hi = cJSON_GetArrayItem(d, 1)->valuedouble;
                    double v = (double)(1L << (20 - e));
                    v = v < lo ? lo : v > hi ? hi : v;
                    at += (size_t)snprintf(shape + at, cap - at, "%s%s=%.0f", at ? "," : "", d->string, v);
                }
            CakeCostOptions co = {.kernel = kname ? kname : ir_symstr(c, m->kernels[0]->name), .target = tg,
                                  .has_target = has_tg, .set = set, .shape = e >= 0 ? shape : NULL,
                                  .calib = &cal};
            ok = cake_cost(c, m, &co, &r) == 0;
        }
    }
    ctx_free(c);
    return ok;
}

/* one variant: its launches summed (a variant of several launches; a launch names
   its kernel, or {kernel, file, set} of another file); 0 or the failure */
static int time_variant(const Run *run, int n, const cJSON *op, const cJSON *v, const char *dir,
                        Speed *sum)
{
    const cJSON *ls = cJSON_GetObjectItemCaseSensitive(v, "launches"), *l;
    const cJSON *one[16] = {v};
    int nk = 1;
    if (cJSON_IsArray(ls)) {
        nk = 0;
        cJSON_ArrayForEach(l, ls) if (nk < 16) one[nk++] = l;
    }
    memset(sum, 0, sizeof *sum);
    for (int i = 0; i < nk; i++) {
        const cJSON *o = cJSON_IsObject(one[i]) ? one[i] : v;
        const char *kn = cJSON_IsString(one[i]) ? one[i]->valuestring : str_of(o, "kernel");
        const char *set = str_of(o, "set") ? str_of(o, "set") : str_of(v, "set");
        const char *fn = str_of(o, "file") ? str_of(o, "file") : str_of(v, "file");
        char file[1024], shape[256];
        snprintf(file, sizeof file, "%s%s", dir, fn ? fn : "");
        Speed s;
        if (!shape_for(run, op, file, kn, set, str_of(v, "target"), shape, sizeof shape) ||
            time_kernel(run, file, kn, set, str_of(v, "target"), shape[0] ? shape : NULL, n, &s))
            return 1;
        sum->first += s.first;
        sum->bind += s.bind;
        sum->again += s.again;
        sum->tc |= s.tc;
        sum->moved |= s.moved;
        sum->digest = sum->digest * 31 + s.digest;
    }
    return 0;
}

/* every variant of the manifest's ops, then min / median / max per column and class */
static int library(const Run *run, int n, const char *manifest, int show_digest)
{
    char *text = cake_read_text(manifest, (size_t)64 << 20, NULL);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    if (!doc) {
        fprintf(stderr, "cake_cost_speed: cannot read %s\n", manifest);
        free(text);
        return 2;
    }
    char dir[512];
    snprintf(dir, sizeof dir, "%s", manifest);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[1] = 0;
    else
        strcpy(dir, "./");
    double *col[3];
    int cap = 1024, nv = 0, over = 0, *cls = calloc((size_t)cap, sizeof *cls);
    for (int i = 0; i < 3; i++)
        col[i] = calloc((size_t)cap, sizeof(double));
    const cJSON *op, *v;
    cJSON_ArrayForEach(op, cJSON_GetObjectItemCaseSensitive(doc, "ops"))
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(op, "variants")) {
        Speed sum;
        const char *name = str_of(v, "name"), *opname = str_of(op, "op");
        if (time_variant(run, n, op, v, dir, &sum)) {
            printf("%-18s %-22s cost failed\n", opname, name);
            continue;
        }
        double worst = sum.first > sum.again ? sum.first : sum.again;
        printf("%-18s %-22s %-4s first %7.1f us (bind %6.1f)  again %7.1f us  %s", opname, name,
               sum.tc ? "tc" : "simt", sum.first, sum.bind, sum.again, worst <= 1000 ? "ok" : "OVER 1 ms");
        if (show_digest)
            printf("  digest %016llx%s", (unsigned long long)sum.digest, sum.moved ? " DIGEST MOVED" : "");
        printf("\n");
        over |= worst > 1000 || sum.moved;
        if (nv < cap) {
            col[0][nv] = sum.first;
            col[1][nv] = sum.bind;
            col[2][nv] = sum.again;
            cls[nv++] = sum.tc;
        }
    }
    if (nv) {
        printf("%d variants (CPU time per evaluation):\n", nv);
        static const char *const what[3] = {"first", "bind", "again"};
        for (int tc = 1; tc >= -1; tc--)
            for (int i = 0; i < 3; i++)
                summary(what[i], col[i], cls, tc, nv);
    }
    for (int i = 0; i < 3; i++)
        free(col[i]);
    free(cls);
    cJSON_Delete(doc);
    free(text);
    return over;
}

int main(int argc, char **argv)
{
    int first = 1, n = 0, show_digest = 0, pooled = 1;
    if (argc > 1 && strspn(argv[1], "0123456789") == strlen(argv[1])) {
        n = atoi(argv[1]);
        first = 2;
    }
    for (;;) {
        if (argc > first && !strcmp(argv[first], "--digest"))
            show_digest = 1;
        else if (argc > first && !strcmp(argv[first], "--no-pool"))
            pooled = 0;
        else
            break;
        first++;
    }
    if (n < 1)
        n = show_digest ? 1 : 200;
    /* one pool for every context of the run, as a tuner's process keeps it */
    Run run = {pooled ? arena_pool_new(0) : NULL};
    int rc = argc > first + 1 && !strcmp(argv[first], "--library")
                 ? library(&run, n, argv[first + 1], show_digest)
                 : files(&run, n, argv + first, argc - first, show_digest);
    arena_pool_free(run.pool);
    return rc;
}
