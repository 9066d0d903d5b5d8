/* lib_build.c — `cakec lib build DIR -o FILE` (cake_lib_build): reads and
 * checks the manifest and every variant, compiles each variant (a cubin
 * through nvJitLink where it is present, PTX otherwise), ranks the variants
 * with the cost model on a grid of shape classes, folds in a tuned table,
 * and writes the artifact (lib_artifact.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "lib_priv.h"
#include "protect.h"

static size_t blob_add(CakeCtx *ctx, CakeLib *lib, const void *data, size_t len)
{
    size_t off = lib->blob_len;
    uint8_t *nb = realloc(lib->blob, off + len + 1);
    if (!nb)
        ir_bug(ctx, "out of memory building the library");
    lib->blob = nb;
    memcpy(nb + off, data, len);
    lib->blob_len += len;
    return off;
}

/* A cubin's SASS runs only on GPUs of its own major version (an sm_80 cubin
 * does not load on an sm_90 H200: RT_LOAD_ERROR), PTX on any later one
 * through the driver's JIT. So a variant is stored as a cubin where its code
 * runs only on its own family anyway (`a` targets) or where that family is
 * the build device's (`--device`, default h200); else as PTX. */
/* the device the cost model's grid is ranked for (the options' or the H200) */
static const char *grid_device(const CakeLibBuildOptions *o)
{
    return o && o->device ? o->device : "h200";
}

int lib_cubin_fits(Target t, const char *device)
{
    const TgDevice *d = tg_device_find(device ? device : "h200");
    const TargetInfo *ti = &tg_table[t];
    if (ti->vendor != VENDOR_NVIDIA)
        return 0;
    return ti->family_only || (d && tg_table[d->target].vendor == VENDOR_NVIDIA &&
                               tg_table[d->target].sm / 10 == ti->sm / 10);
}

/* compiles variant v for a build for `device`: its image (malloc'd, *len bytes;
   v->image_kind set), or NULL with the diagnostics */
static void *make_image(CakeCtx *ctx, CakeLib *lib, LibVariant *v, RtJitLinker *jl, const char *device,
                        size_t *len, int *rc)
{
    CakeKernel ck;
    *rc = lib_instance(ctx, lib, v, CAKE_INST_COMPILED, &ck);
    if (*rc) {
        Diag *d = diag_report(ctx, E1207, v->at, "variant `%s`: kernel `%s` does not compile for %s",
                              v->pub.name, v->pub.kernel, v->pub.target);
        diag_help(ctx, d, "`cakec %s --target %s%s%s` shows why", v->pub.file, v->pub.target,
                  v->pub.set[0] ? " --set " : "", v->pub.set);
        return NULL;
    }
    void *cubin = NULL;
    size_t clen = 0;
    char log[2048];
    if (jl && lib_cubin_fits(v->tg, device) &&
        rt_jitlink_ptx(jl, v->pub.target, ck.image, ck.len, &cubin, &clen, log, sizeof log) == RT_OK) {
        strcpy(v->image_kind, "cubin");
        snprintf(v->image_tool, sizeof v->image_tool, "%.11s", log);
        free(ck.image);
        *len = clen;
        return cubin;
    }
    strcpy(v->image_kind, tg_vendor(v->tg) == VENDOR_NVIDIA ? "ptx" : "hsaco");
    *len = ck.len;
    return ck.image;
}

/* `lib build -v`: one line per image put into the blob */
static void say_image(const LibVariant *v, int verbose)
{
    if (verbose)
        fprintf(stderr, "lib build: %-28s %-8s %8zu bytes %s%s%s\n", v->pub.name, v->pub.target,
                v->image_len, v->image_kind, v->image_tool[0] ? " by " : "", v->image_tool);
}

/* puts an image of v into the blob (and frees it) */
static void take_image(CakeCtx *ctx, CakeLib *lib, LibVariant *v, void *img, size_t len, int verbose)
{
    v->image_off = blob_add(ctx, lib, img, len);
    v->image_len = len;
    free(img);
    say_image(v, verbose);
}

/* compiles variant v into the blob */
static int compile_variant(CakeCtx *ctx, CakeLib *lib, LibVariant *v, RtJitLinker *jl, int verbose,
                           const char *device)
{
    size_t len = 0;
    int rc;
    void *img = make_image(ctx, lib, v, jl, device, &len, &rc);
    if (img)
        take_image(ctx, lib, v, img, len, verbose);
    return rc;
}

/* ---- the cost model's grid ------------------------------------------------------- */

typedef struct { double ms; uint8_t v; } Ranked;

static int ranked_cmp(const void *a, const void *b)
{
    double x = ((const Ranked *)a)->ms, y = ((const Ranked *)b)->ms;
    return x < y ? -1 : x > y;
}

double lib_variant_cost(CakeCtx *ctx, const LibOp *op, const LibVariant *v, Module *m,
                        const int64_t *dimv, const char *device, CostResult *res)
{
    if (v->nsteps) {   /* a sequence: the sum of its launches (res: the first one's) */
        double sum = 0;
        for (uint32_t s = 0; s < v->nsteps; s++) {
            const LibVariant *st = &op->v[v->steps[s]];
            double t = st->m ? lib_variant_cost(ctx, op, st, NULL, dimv, device, s ? NULL : res) : -1;
            if (t <= 0)
                return -1;
            sum += t;
        }
        return sum;
    }
    char shape[256];
    size_t at = 0;
    for (uint32_t i = 0; i < op->pub.ndims; i++)
        at += (size_t)snprintf(shape + at, sizeof shape - at, "%s%s=%lld", i ? "," : "", op->dims[i],
                               (long long)dimv[i]);
    CakeCostOptions co = {.kernel = v->pub.kernel, .target = v->tg, .has_target = 1, .device = device,
                          .shape = shape, .set = v->pub.set[0] ? v->pub.set : NULL};
    CostResult own, *r = res ? res : &own;
    uint32_t nd = ctx->ndiags, ne = ctx->nerrors, nw = ctx->nwarnings;
    int rc = cake_cost(ctx, m ? m : v->m, &co, r);
    ctx->ndiags = nd;
    ctx->nerrors = ne;
    ctx->nwarnings = nw;
    return rc == 0 && r->time_ms > 0 ? r->time_ms : -1;
}

/* the ranking of op's variants at dimv by predicted time (domains holding only) */
static uint8_t rank_at(CakeCtx *ctx, const CakeLib *lib, const LibOp *op, const int64_t *dimv,
                       const char *device, uint8_t *rank)
{
    Ranked r[CAKE_LIB_MAX_VARIANTS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < op->pub.nvariants; i++) {
        const LibVariant *v = &op->v[i];
        if (!lib_domain_holds(lib, op, v, dimv, NULL, NULL))
            continue;
        double ms = lib_variant_cost(ctx, op, v, NULL, dimv, device, NULL);
        if (ms > 0)
            r[n++] = (Ranked){ms, (uint8_t)i};
    }
    qsort(r, n, sizeof *r, ranked_cmp);
    if (n > LIB_MAX_RANK)
        n = LIB_MAX_RANK;
    for (uint32_t i = 0; i < n; i++)
        rank[i] = r[i].v;
    return (uint8_t)n;
}

/* the number of cells of op's model grid, or 0 where it has none (one variant, or
   more than 20000 cells) */
static uint32_t grid_total(const LibOp *op)
{
    uint32_t total = 1;
    for (uint32_t i = 0; i < op->pub.ndims; i++)
        total *= (uint32_t)((op->ghi[i] - op->glo[i]) / op->gstep[i] + 1);
    return op->pub.nvariants < 2 || total > 20000 ? 0 : total;
}

/* cell number c of op's grid, at its bucket's power of two: its variants ranked; the
   number ranked */
static uint8_t grid_cell(CakeCtx *ctx, const CakeLib *lib, const LibOp *op, uint32_t c,
                         const char *device, LibCell *cell)
{
    uint32_t rest = c;
    int64_t dimv[LIB_MAX_DIMS];
    for (uint32_t i = 0; i < op->pub.ndims; i++) {
        uint32_t span = (uint32_t)((op->ghi[i] - op->glo[i]) / op->gstep[i] + 1);
        unsigned b = op->glo[i] + rest % span * op->gstep[i];
        rest /= span;
        int64_t x = (int64_t)1 << (b - 1);
        dimv[i] = x < op->lo[i] ? op->lo[i] : x > op->hi[i] ? op->hi[i] : x;
    }
    cell->key = lib_grid_key(op, dimv);
    cell->n = rank_at(ctx, lib, op, dimv, device, cell->rank);
    return cell->n;
}

/* every grid point of the op's range (buckets glo, glo + gstep, ...): one cell each */
static void model_grid(CakeCtx *ctx, CakeLib *lib, LibOp *op, const char *device)
{
    uint32_t total = grid_total(op);
    if (!total)
        return;
    op->model = arena_alloc(&ctx->arena, total * sizeof *op->model);
    for (uint32_t c = 0; c < total; c++)
        if (grid_cell(ctx, lib, op, c, device, &op->model[op->nmodel]))
            op->nmodel++;
    lib_cells_sort(op->model, op->nmodel);
}

/* the share of worker w of n of every op's grid (the cells numbered across all ops,
   every n-th one), written to f as (op index, cell) records */
static void grid_share(CakeCtx *ctx, const CakeLib *lib, const char *device, int w, int n, FILE *f)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < lib->nops; i++) {
        uint32_t total = grid_total(&lib->ops[i]);
        for (uint32_t c = 0; c < total; c++, k++) {
            LibCell cell;
            if (k % (uint32_t)n == (uint32_t)w && grid_cell(ctx, lib, &lib->ops[i], c, device, &cell)) {
                fwrite(&i, sizeof i, 1, f);
                fwrite(&cell, sizeof cell, 1, f);
            }
        }
    }
}

/* the grid cells n workers wrote to dir/grid.W, into every op's grid; 0 where a file
   is missing or short (a worker failed: the caller ranks the grids here) */
static int grids_from_dir(CakeCtx *ctx, CakeLib *lib, const char *dir, int n)
{
    for (uint32_t i = 0; i < lib->nops; i++) {
        uint32_t total = grid_total(&lib->ops[i]);
        lib->ops[i].nmodel = 0;
        lib->ops[i].model = total ? arena_alloc(&ctx->arena, total * sizeof *lib->ops[i].model) : NULL;
    }
    int ok = 1;
    for (int w = 0; w < n; w++) {   /* every file removed, read while all are good */
        char path[600];
        snprintf(path, sizeof path, "%s/grid.%d", dir, w);
        FILE *f = ok ? fopen(path, "rb") : NULL;
        uint32_t i;
        LibCell cell;
        ok = f != NULL;
        while (ok && fread(&i, sizeof i, 1, f) == 1) {
            ok = fread(&cell, sizeof cell, 1, f) == 1 && i < lib->nops
                 && lib->ops[i].nmodel < grid_total(&lib->ops[i]);
            if (ok)
                lib->ops[i].model[lib->ops[i].nmodel++] = cell;
        }
        if (f) {
            ok = ok && fgetc(f) == EOF && !ferror(f);
            fclose(f);
        }
        unlink(path);
        snprintf(path, sizeof path, "%s/grid.%d.tmp", dir, w);
        unlink(path);
    }
    for (uint32_t i = 0; i < lib->nops; i++) {
        if (!ok)
            lib->ops[i].nmodel = 0;
        lib_cells_sort(lib->ops[i].model, lib->ops[i].nmodel);
    }
    return ok;
}

/* worker w's grid share into dir/grid.W (complete, or not there) */
static void grid_write(CakeCtx *ctx, const CakeLib *lib, const char *device, int w, int n, const char *dir)
{
    char path[600], tmp[610];
    snprintf(path, sizeof path, "%s/grid.%d", dir, w);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return;
    grid_share(ctx, lib, device, w, n, f);
    if (fclose(f) == 0)
        rename(tmp, path);
    else
        unlink(tmp);
}

/* ---- the tuned table (`lib tune -o TABLE`) -------------------------------------------- */

typedef struct { uint64_t key; double sum[CAKE_LIB_MAX_VARIANTS]; uint32_t cnt[CAKE_LIB_MAX_VARIANTS]; } Acc;

static int table_bad(CakeCtx *ctx, const char *path, const char *why)
{
    Diag *d = diag_report(ctx, E1211, IR_NOSPAN, "tuned table `%s`: %s", path, why);
    diag_help(ctx, d, "write it with `cakec lib tune DIR --shapes FILE -o TABLE` (docs/library.md)");
    return 1;
}

static uint32_t variant_named(const LibOp *op, const char *name)
{
    uint32_t v = 0;
    while (v < op->pub.nvariants && strcmp(op->v[v].pub.name, name))
        v++;
    return v;
}

/* the entry's exact shape and its times (docs/library.md, "Measured shapes"), fastest
   first, appended to meas[o] (malloc'd while the table is folded) */
static void meas_add(CakeCtx *ctx, const LibOp *op, const int64_t *dimv, const cJSON *times,
                     LibMeas **meas, uint32_t *nmeas)
{
    Ranked r[CAKE_LIB_MAX_VARIANTS];
    uint32_t n = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, times) {
        uint32_t v = variant_named(op, t->string);
        if (v < op->pub.nvariants && cJSON_IsNumber(t) && t->valuedouble > 0 && n < CAKE_LIB_MAX_VARIANTS)
            r[n++] = (Ranked){t->valuedouble, (uint8_t)v};
    }
    if (!n)
        return;
    qsort(r, n, sizeof *r, ranked_cmp);
    LibMeas *grown = realloc(*meas, (*nmeas + 1) * sizeof **meas);
    if (!grown)
        ir_bug(ctx, "out of memory reading the tuned table");
    *meas = grown;
    int64_t *d = arena_alloc(&ctx->arena, op->pub.ndims * sizeof *d);
    uint8_t *var = arena_alloc(&ctx->arena, n * sizeof *var);
    float *ms = arena_alloc(&ctx->arena, n * sizeof *ms);
    memcpy(d, dimv, op->pub.ndims * sizeof *d);
    for (uint32_t i = 0; i < n; i++)
        var[i] = r[i].v, ms[i] = (float)r[i].ms;
    grown[(*nmeas)++] = (LibMeas){lib_class_key(op, dimv), d, n, var, ms};
}

static int fold_entry(CakeCtx *ctx, CakeLib *lib, const cJSON *e, Acc **accs, uint32_t *nacc,
                      LibMeas **meas, uint32_t *nmeas)
{
    const cJSON *opn = cJSON_GetObjectItemCaseSensitive(e, "op");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *times = cJSON_GetObjectItemCaseSensitive(e, "times_ms"), *t;
    uint32_t o = 0;
    while (cJSON_IsString(opn) && o < lib->nops && strcmp(lib->ops[o].pub.name, opn->valuestring))
        o++;
    if (!cJSON_IsString(opn) || o == lib->nops || !cJSON_IsObject(times))
        return 0;   /* an op this library no longer has: skipped */
    LibOp *op = &lib->ops[o];
    int64_t dimv[LIB_MAX_DIMS];
    for (uint32_t i = 0; i < op->pub.ndims; i++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(shape, op->dims[i]);
        if (!cJSON_IsNumber(x) || x->valuedouble < 1)
            return -1;
        dimv[i] = (int64_t)x->valuedouble;
    }
    meas_add(ctx, op, dimv, times, &meas[o], &nmeas[o]);
    uint64_t key = lib_class_key(op, dimv);
    Acc *a = NULL;
    for (uint32_t i = 0; i < nacc[o] && !a; i++)
        if (accs[o][i].key == key)
            a = &accs[o][i];
    if (!a) {
        accs[o] = realloc(accs[o], (nacc[o] + 1) * sizeof *accs[o]);
        if (!accs[o])
            ir_bug(ctx, "out of memory reading the tuned table");
        a = &accs[o][nacc[o]++];
        memset(a, 0, sizeof *a);
        a->key = key;
    }
    cJSON_ArrayForEach(t, times) {   /* the fitted model's data: every time, as measured */
        uint32_t v = variant_named(op, t->string);
        if (v < op->pub.nvariants && cJSON_IsNumber(t))
            lib_fit_add(op, &op->v[v], dimv, t->valuedouble);
    }
    /* each variant's time relative to the fastest of this library's variants at this
       shape, in logs: a class's ranking is by the geometric mean over its shapes, so
       its largest shape does not outweigh the others */
    double best = 0;
    cJSON_ArrayForEach(t, times)
        if (variant_named(op, t->string) < op->pub.nvariants && cJSON_IsNumber(t) && t->valuedouble > 0 &&
            (best == 0 || t->valuedouble < best))
            best = t->valuedouble;
    cJSON_ArrayForEach(t, times) {   /* the fastest and those within LIB_FIT_NEAR_BEST of it */
        uint32_t v = variant_named(op, t->string);
        if (v < op->pub.nvariants && cJSON_IsNumber(t) && t->valuedouble > 0 &&
            t->valuedouble <= best * LIB_FIT_NEAR_BEST)
            op->v[v].fit.wins++;
    }
    cJSON_ArrayForEach(t, times) {
        uint32_t v = variant_named(op, t->string);
        if (v < op->pub.nvariants && cJSON_IsNumber(t) && t->valuedouble > 0) {
            a->sum[v] += log(t->valuedouble / best);
            a->cnt[v]++;
        }
    }
    return 0;
}

static void acc_cells(CakeCtx *ctx, LibOp *op, const Acc *a, uint32_t n)
{
    op->tuned = arena_alloc(&ctx->arena, (n + 1) * sizeof *op->tuned);
    for (uint32_t i = 0; i < n; i++) {
        Ranked r[CAKE_LIB_MAX_VARIANTS];
        uint32_t m = 0;
        for (uint32_t v = 0; v < op->pub.nvariants; v++)
            if (a[i].cnt[v])
                r[m++] = (Ranked){a[i].sum[v] / a[i].cnt[v], (uint8_t)v};
        qsort(r, m, sizeof *r, ranked_cmp);
        LibCell *c = &op->tuned[op->ntuned];
        c->key = a[i].key;
        for (uint32_t j = 0; j < m && j < LIB_MAX_RANK; j++)
            c->rank[c->n++] = r[j].v;
        op->ntuned += c->n > 0;
    }
    lib_cells_sort(op->tuned, op->ntuned);
}

/* the fitted model (lib_fit.c) before a table is folded: each fit variant's geometry,
   its normal equations cleared, the SMs of the table's device */
static void fit_prepare(CakeCtx *ctx, CakeLib *lib)
{
    const TgDevice *d = tg_device_match(lib->tuned_device);
    for (uint32_t o = 0; o < lib->nops; o++) {
        LibOp *op = &lib->ops[o];
        lib_fit_set_sms(op, d ? d->sm_count : TG_DEFAULT_SM_COUNT);
        lib_fit_unplan(op);
        op->nfit = 0;
        int dims = lib_fit_dims(op);
        for (uint32_t i = 0; i < op->pub.nvariants; i++) {
            LibFit *f = &op->v[i].fit;
            /* an op without M, N, K: the row family's fits only; one of fewer than two dims: none */
            uint8_t family = dims == 1 || (dims == 2 && f->family == LIB_FIT_ROWS) ? f->family : 0;
            memset(f, 0, sizeof *f);
            f->family = family;
            lib_fit_geometry(ctx, op, &op->v[i]);
        }
    }
}

static void fit_finish(LibOp *op)
{
    for (uint32_t i = 0; i < op->pub.nvariants; i++) {
        lib_fit_solve(&op->v[i]);
        op->nfit += op->v[i].fit.ok;
    }
}

int lib_table_fold(CakeCtx *ctx, CakeLib *lib, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return table_bad(ctx, path, "cannot be read");
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            char *nb = realloc(text, cap = cap * 2 + 65536);
            if (!nb)
                break;
            text = nb;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (!got)
            break;
    }
    fclose(f);
    cJSON *root = text ? cJSON_ParseWithLength(text, len) : NULL;
    free(text);
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(root, "device");
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(root, "entries"), *e;
    if (!cJSON_IsString(dev) || !cJSON_IsArray(entries)) {
        cJSON_Delete(root);
        return table_bad(ctx, path, root ? "it needs `device` and `entries`" : "not valid JSON");
    }
    if (lib->tuned_device && lib->tuned_device[0] && strcmp(lib->tuned_device, dev->valuestring)) {
        Diag *d = diag_report(ctx, E1206, IR_NOSPAN, "tuned table `%s` was measured on %s, the "
                              "library's table on %s", path, dev->valuestring, lib->tuned_device);
        diag_help(ctx, d, "tune every table of one library on one kind of device");
        cJSON_Delete(root);
        return 1;
    }
    lib->tuned_device = arena_strndup(&ctx->arena, dev->valuestring, strlen(dev->valuestring));
    fit_prepare(ctx, lib);
    Acc **accs = calloc(lib->nops + 1, sizeof *accs);
    uint32_t *nacc = calloc(lib->nops + 1, sizeof *nacc);
    LibMeas **meas = calloc(lib->nops + 1, sizeof *meas);
    uint32_t *nmeas = calloc(lib->nops + 1, sizeof *nmeas);
    int bad = !accs || !nacc || !meas || !nmeas;
    cJSON_ArrayForEach(e, entries)
        if (!bad && fold_entry(ctx, lib, e, accs, nacc, meas, nmeas) < 0)
            bad = 1;
    for (uint32_t o = 0; !bad && o < lib->nops; o++) {
        LibOp *op = &lib->ops[o];
        acc_cells(ctx, op, accs[o], nacc[o]);
        op->meas = arena_alloc(&ctx->arena, (nmeas[o] + 1) * sizeof *op->meas);
        if (nmeas[o])
            memcpy(op->meas, meas[o], nmeas[o] * sizeof *op->meas);
        op->nmeas = nmeas[o];
        lib_meas_sort(ctx, op);
        fit_finish(op);
        lib_fit_plan(ctx, op);
    }
    for (uint32_t o = 0; accs && meas && o < lib->nops; o++)
        free(accs[o]), free(meas[o]);
    free(accs);
    free(nacc);
    free(meas);
    free(nmeas);
    cJSON_Delete(root);
    return bad ? table_bad(ctx, path, "an entry's shape does not bind its op's dims") : 0;
}

/* ---- the build ---------------------------------------------------------------------------- */

/* the image of variant number idx written by a forked worker, into the blob: 1, or 0 */
static int image_from_dir(CakeCtx *ctx, CakeLib *lib, LibVariant *v, const char *dir, uint32_t idx)
{
    static const char *const kinds[] = {"cubin", "ptx", "hsaco"};
    for (int i = 0; i < 3; i++) {
        FILE *f = fopen(ir_fmt(ctx, "%s/%u.%s", dir, idx, kinds[i]), "rb");
        if (!f)
            continue;
        size_t cap = 1 << 16, n = 0;
        uint8_t *buf = malloc(cap);
        while (buf) {
            n += fread(buf + n, 1, cap - n, f);
            if (n < cap)
                break;
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
        fclose(f);
        if (!buf || !n) {
            free(buf);
            return 0;
        }
        strcpy(v->image_kind, kinds[i]);
        v->image_off = blob_add(ctx, lib, buf, n);
        v->image_len = n;
        free(buf);
        return 1;
    }
    return 0;
}

static int write_image(CakeCtx *ctx, const char *dir, uint32_t idx, const char *kind, const void *data,
                       size_t len)
{
    const char *path = ir_fmt(ctx, "%s/%u.%s", dir, idx, kind);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, len, f) == len;
    if (f && fclose(f))
        ok = 0;
    if (!ok)
        diag_report(ctx, E0001, IR_NOSPAN, "cannot write `%s`", path);
    return ok;
}

/* takes v's image from dir/IDX.KIND (a forked worker wrote it) when it is
   there, and lowers v too: the cost model's grid reads the instance; *rc its status */
static int image_taken_from_dir(CakeCtx *ctx, CakeLib *lib, LibVariant *v, const char *dir, uint32_t idx,
                                int verbose, int *rc)
{
    if (!image_from_dir(ctx, lib, v, dir, idx))
        return 0;
    CakeKernel ck;
    *rc = lib_instance(ctx, lib, v, CAKE_INST_LOWERED, &ck);
    say_image(v, verbose);
    return 1;
}

/* ---- a build in forked workers (o->workers) ------------------------------------------ */

static uint32_t count_variants(const CakeLib *lib)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < lib->nops; i++)
        n += lib->ops[i].pub.nvariants;
    return n;
}

/* worker w of n, in a forked process: compiles every n-th variant (number idx,
   idx % n == w) into dir/IDX.KIND and ends the process; what fails is left out
   (the parent compiles it again and reports) */
static void worker_run(CakeCtx *ctx, CakeLib *lib, const CakeLibBuildOptions *o, int w, int n,
                       const char *dir)
{
    RtJitLinker *jl = o->ptx_only ? NULL : rt_jitlink_open();
    uint32_t idx = 0;
    for (uint32_t i = 0; i < lib->nops; i++)
        for (uint32_t j = 0; j < lib->ops[i].pub.nvariants; j++, idx++) {
            LibVariant *v = &lib->ops[i].v[j];
            if (v->nsteps || idx % (uint32_t)n != (uint32_t)w)
                continue;
            size_t len = 0;
            int rc;
            void *img = make_image(ctx, lib, v, jl, o->device, &len, &rc);
            if (img)
                write_image(ctx, dir, idx, v->image_kind, img, len);
            free(img);
        }
    rt_jitlink_close(jl);
    if (!o->no_model)
        grid_write(ctx, lib, grid_device(o), w, n, dir);
    _exit(0);
}

static void remove_images(const char *dir, uint32_t total)
{
    static const char *const kinds[] = {"cubin", "ptx", "hsaco"};
    char path[600];
    for (uint32_t idx = 0; idx < total; idx++)
        for (int k = 0; k < 3; k++) {
            snprintf(path, sizeof path, "%s/%u.%s", dir, idx, kinds[k]);
            unlink(path);
        }
    rmdir(dir);
}

/* the images by n processes: n - 1 forked workers and this one (worker 0), then
   put into the blob in variant order, as a build in one process does */
static int images_forked(CakeCtx *ctx, CakeLib *lib, const CakeLibBuildOptions *o, int n, const char *dir,
                         int *grids)
{
    pid_t kids[64];
    int nk = 0;
    fflush(NULL);   /* nothing buffered is written twice */
    for (int w = 1; w < n; w++) {
        pid_t p = fork();
        if (p == 0)
            worker_run(ctx, lib, o, w, n, dir);
        if (p > 0)
            kids[nk++] = p;
    }
    uint32_t total = count_variants(lib), idx = 0;
    void **mine = calloc(total ? total : 1, sizeof *mine);
    size_t *lens = calloc(total ? total : 1, sizeof *lens);
    if (!mine || !lens)
        ir_bug(ctx, "out of memory for the images of %u variants", total);
    RtJitLinker *jl = o->ptx_only ? NULL : rt_jitlink_open();
    int rc = 0;
    for (uint32_t i = 0; i < lib->nops; i++)
        for (uint32_t j = 0; j < lib->ops[i].pub.nvariants; j++, idx++) {
            LibVariant *v = &lib->ops[i].v[j];
            int r = 0;
            if (!v->nsteps && idx % (uint32_t)n == 0)
                mine[idx] = make_image(ctx, lib, v, jl, o->device, &lens[idx], &r);
            rc = r > rc ? r : rc;
        }
    if (!o->no_model)
        grid_write(ctx, lib, grid_device(o), 0, n, dir);
    for (int k = 0; k < nk; k++) {
        int status;
        while (waitpid(kids[k], &status, 0) < 0 && errno == EINTR)
            ;
    }
    idx = 0;
    for (uint32_t i = 0; i < lib->nops && rc != 2; i++)
        for (uint32_t j = 0; j < lib->ops[i].pub.nvariants && rc != 2; j++, idx++) {
            LibVariant *v = &lib->ops[i].v[j];
            int r = 0;
            if (v->nsteps || (idx % (uint32_t)n == 0 && !mine[idx]))
                continue;
            if (mine[idx]) {
                take_image(ctx, lib, v, mine[idx], lens[idx], o->verbose);
                mine[idx] = NULL;
            } else if (!image_taken_from_dir(ctx, lib, v, dir, idx, o->verbose, &r)) {
                r = compile_variant(ctx, lib, v, jl, o->verbose, o->device);   /* a worker's failure: here again */
            }
            rc = r > rc ? r : rc;
        }
    for (uint32_t k = 0; k < total; k++)
        free(mine[k]);
    free(mine);
    free(lens);
    rt_jitlink_close(jl);
    if (!o->no_model)
        *grids = grids_from_dir(ctx, lib, dir, n);
    remove_images(dir, total);
    return rc;
}

/* every variant's image: compiled here, or by forked workers (o->workers), which also
   rank the cost model's grids (*grids = 1 where they did) */
static int images(CakeCtx *ctx, CakeLib *lib, const CakeLibBuildOptions *o, int *grids)
{
    if (o && o->workers > 1) {
        const char *tmp = getenv("TMPDIR");
        char dir[512];
        snprintf(dir, sizeof dir, "%s/cake-build.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (mkdtemp(dir))
            return images_forked(ctx, lib, o, o->workers > 64 ? 64 : o->workers, dir, grids);
    }
    int rc = 0;
    RtJitLinker *jl = o && o->ptx_only ? NULL : rt_jitlink_open();
    for (uint32_t i = 0; i < lib->nops && rc != 2; i++)
        for (uint32_t j = 0; j < lib->ops[i].pub.nvariants && rc != 2; j++) {
            LibVariant *v = &lib->ops[i].v[j];
            if (v->nsteps)   /* a sequence: its launches have the images */
                continue;
            int r = compile_variant(ctx, lib, v, jl, o && o->verbose, o ? o->device : NULL);
            rc = r > rc ? r : rc;
        }
    rt_jitlink_close(jl);
    return rc;
}

static int build(CakeCtx *ctx, const char *dir, const char *out, const CakeLibBuildOptions *o)
{
    CakeLib *lib;
    int rc = lib_manifest_read(ctx, dir, &lib);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < lib->nsrcs; i++)
        lib->srcs[i].off = blob_add(ctx, lib, lib->srcs[i].text, lib->srcs[i].len);
    rc = lib_variants_check(ctx, lib);
    int grids = 0;
    if (!rc)
        rc = images(ctx, lib, o, &grids);
    for (uint32_t i = 0; i < lib->nops && !rc && !grids && !(o && o->no_model); i++)
        model_grid(ctx, lib, &lib->ops[i], grid_device(o));
    if (!rc && o && o->table)
        rc = lib_table_fold(ctx, lib, o->table);
    if (!rc)
        rc = lib_artifact_write(ctx, lib, out);
    free(lib->blob);
    lib->blob = NULL;
    return rc;
}

int cake_lib_build(CakeCtx *ctx, const char *dir, const char *out, const CakeLibBuildOptions *o)
{
    int rc;
    CAKE_PROTECTED(ctx, rc, build(ctx, dir, out, o));
    return rc;
}

/* an artifact with another tuned table: the images, sources and the cost
   model's grid as they are */
static int retable(CakeCtx *ctx, const char *in, const char *table, const char *out)
{
    CakeLib *lib;
    int rc = cake_lib_open(ctx, in, &lib);
    if (rc)
        return rc;
    lib->tuned_device = "";
    for (uint32_t i = 0; i < lib->nops; i++)
        lib->ops[i].ntuned = lib->ops[i].nmeas = 0;
    rc = table ? lib_table_fold(ctx, lib, table) : 0;
    if (!rc)
        rc = lib_artifact_write(ctx, lib, out);
    cake_lib_close(lib);
    return rc;
}

int cake_lib_retable(CakeCtx *ctx, const char *in, const char *table, const char *out)
{
    int rc;
    CAKE_PROTECTED(ctx, rc, retable(ctx, in, table, out));
    return rc;
}

static int check_dir(CakeCtx *ctx, const char *dir, CakeLib **out)
{
    int rc = lib_manifest_read(ctx, dir, out);
    if (!rc && !(rc = lib_variants_check(ctx, *out)))
        lib_plan(ctx, *out);
    return rc;
}

int cake_lib_check_dir(CakeCtx *ctx, const char *dir)
{
    int rc;
    CakeLib *lib = NULL;
    CAKE_PROTECTED(ctx, rc, check_dir(ctx, dir, &lib));
    return rc;
}

int cake_lib_read_dir(CakeCtx *ctx, const char *dir, CakeLib **out)
{
    int rc;
    *out = NULL;
    CAKE_PROTECTED(ctx, rc, check_dir(ctx, dir, out));
    if (rc)
        *out = NULL;
    return rc;
}
