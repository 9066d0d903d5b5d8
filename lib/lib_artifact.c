/* lib_artifact.c — the library artifact file that `cakec lib build` writes
 * and cake_lib_open reads (docs/library.md, "The artifact"):
 *
 *   offset  size  what
 *   0       8     magic "CAKELIB\n"
 *   8       4     format version (LIB_FORMAT_VERSION), little-endian
 *   12      4     0 (reserved)
 *   16      8     meta_len: bytes of the meta document
 *   24      8     blob_len: bytes of the blob
 *   32      8     FNV-1a 64 of the meta document and the blob
 *   40      meta_len   the meta document: JSON, the manifest's ops with each
 *                      variant's image and source places, the dispatch table
 *   40+meta_len blob_len  the blob: every source text, then every image
 *
 * Anything off (magic, version, sizes, checksum, the meta document) is
 * E1205: a truncated or corrupted file is a diagnostic, never a crash. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "lib_priv.h"
#include "protect.h"

#define HEADER_BYTES 40u

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* ---- writing ------------------------------------------------------------------ */

static cJSON *cells_json(const LibCell *c, uint32_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (uint32_t i = 0; i < n; i++) {
        cJSON *cell = cJSON_CreateArray();
        char key[32];
        snprintf(key, sizeof key, "%016llx", (unsigned long long)c[i].key);
        cJSON_AddItemToArray(cell, cJSON_CreateString(key));
        cJSON *rank = cJSON_CreateArray();
        for (uint32_t r = 0; r < c[i].n; r++)
            cJSON_AddItemToArray(rank, cJSON_CreateNumber(c[i].rank[r]));
        cJSON_AddItemToArray(cell, rank);
        cJSON_AddItemToArray(arr, cell);
    }
    return arr;
}

/* the measured shapes: [[dims...], [variants, fastest first], [their ms]] each */
static cJSON *meas_json(const LibOp *op)
{
    cJSON *arr = cJSON_CreateArray();
    for (uint32_t i = 0; i < op->nmeas; i++) {
        const LibMeas *m = &op->meas[i];
        cJSON *e = cJSON_CreateArray(), *d = cJSON_CreateArray(), *v = cJSON_CreateArray(),
              *t = cJSON_CreateArray();
        for (uint32_t k = 0; k < op->pub.ndims; k++)
            cJSON_AddItemToArray(d, cJSON_CreateNumber((double)m->dimv[k]));
        for (uint32_t k = 0; k < m->n; k++) {
            cJSON_AddItemToArray(v, cJSON_CreateNumber(m->var[k]));
            cJSON_AddItemToArray(t, cJSON_CreateNumber(m->ms[k]));
        }
        cJSON_AddItemToArray(e, d);
        cJSON_AddItemToArray(e, v);
        cJSON_AddItemToArray(e, t);
        cJSON_AddItemToArray(arr, e);
    }
    return arr;
}

static cJSON *arg_json(const CakeLibArg *a)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", a->name);
    cJSON_AddStringToObject(j, a->kind == CAKE_ARG_TENSOR ? "tensor" : "scalar", a->dtype);
    if (a->kind == CAKE_ARG_TENSOR) {
        cJSON *dims = cJSON_AddArrayToObject(j, "dims");
        for (int i = 0; i < a->rank; i++)
            cJSON_AddItemToArray(dims, a->dims[i] ? cJSON_CreateString(a->dims[i])
                                                  : cJSON_CreateNumber((double)a->extent[i]));
    }
    return j;
}

static cJSON *variant_json(const LibVariant *v)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", v->pub.name);
    cJSON_AddStringToObject(j, "file", v->pub.file);
    cJSON_AddStringToObject(j, "kernel", v->pub.kernel);
    cJSON_AddStringToObject(j, "set", v->pub.set);
    cJSON_AddStringToObject(j, "target", v->pub.target);
    cJSON *when = cJSON_AddArrayToObject(j, "when");
    for (uint32_t i = 0; i < v->nconds; i++)
        cJSON_AddItemToArray(when, cJSON_CreateString(v->conds[i].text));
    if (v->part_of >= 0)
        cJSON_AddNumberToObject(j, "part_of", v->part_of);
    if (v->nsteps) {
        cJSON *steps = cJSON_AddArrayToObject(j, "steps");
        for (uint32_t i = 0; i < v->nsteps; i++)
            cJSON_AddItemToArray(steps, cJSON_CreateNumber(v->steps[i]));
        cJSON *ws = cJSON_AddArrayToObject(j, "workspace");
        for (uint32_t i = 0; i < v->nws; i++)
            cJSON_AddItemToArray(ws, cJSON_CreateString(v->ws[i]));
    }
    if (v->fit.family)
        cJSON_AddStringToObject(j, "fit", lib_fit_family_name(v->fit.family));
    if (v->fit.geo[0]) {   /* the fitted model (lib_fit.c): the geometry, the coefficients */
        cJSON *geo = cJSON_AddArrayToObject(j, "fit_geo");
        for (int i = 0; i < LIB_GEO__COUNT; i++)
            cJSON_AddItemToArray(geo, cJSON_CreateNumber((double)v->fit.geo[i]));
    }
    if (v->fit.ok) {
        cJSON *coef = cJSON_AddArrayToObject(j, "fit_coef");
        for (int i = 0; i < LIB_FIT_TERMS; i++)
            cJSON_AddItemToArray(coef, cJSON_CreateNumber(v->fit.coef[i]));
    }
    if (v->fit.ok && v->fit.span[0][1]) {   /* the least and greatest M, N, K it was fitted at */
        cJSON *span = cJSON_AddArrayToObject(j, "fit_span");
        for (int i = 0; i < 6; i++)
            cJSON_AddItemToArray(span, cJSON_CreateNumber((double)v->fit.span[i / 2][i % 2]));
    }
    cJSON *img = cJSON_AddObjectToObject(j, "image");
    cJSON_AddStringToObject(img, "kind", v->image_kind);
    cJSON_AddNumberToObject(img, "off", (double)v->image_off);
    cJSON_AddNumberToObject(img, "len", (double)v->image_len);
    return j;
}

static cJSON *op_json(const LibOp *op)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "op", op->pub.name);
    cJSON_AddStringToObject(j, "doc", op->pub.doc);
    cJSON *args = cJSON_AddArrayToObject(j, "args");
    for (uint32_t i = 0; i < op->pub.nargs; i++)
        cJSON_AddItemToArray(args, arg_json(&op->args[i]));
    if (op->reference)
        cJSON_AddStringToObject(j, "reference", op->reference);
    cJSON *range = cJSON_AddObjectToObject(j, "range");
    for (uint32_t i = 0; i < op->pub.ndims; i++) {
        if (!op->has_range[i])
            continue;
        cJSON *lh = cJSON_AddArrayToObject(range, op->dims[i]);
        cJSON_AddItemToArray(lh, cJSON_CreateNumber((double)op->lo[i]));
        cJSON_AddItemToArray(lh, cJSON_CreateNumber((double)op->hi[i]));
    }
    cJSON *vars = cJSON_AddArrayToObject(j, "variants");
    for (uint32_t i = 0; i < op->pub.nvariants; i++)
        cJSON_AddItemToArray(vars, variant_json(&op->v[i]));
    if (op->nfit)
        cJSON_AddNumberToObject(j, "fit_sms", (double)op->fit_sms);
    cJSON_AddItemToObject(j, "tuned", cells_json(op->tuned, op->ntuned));
    cJSON_AddItemToObject(j, "model", cells_json(op->model, op->nmodel));
    cJSON_AddItemToObject(j, "measured", meas_json(op));
    return j;
}

static char *meta_text(const CakeLib *lib)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "format", "cake-library");
    cJSON_AddNumberToObject(j, "version", LIB_FORMAT_VERSION);
    cJSON_AddStringToObject(j, "library", lib->name ? lib->name : "");
    cJSON_AddStringToObject(j, "built_with", "cakec " CAKE_VERSION);
    cJSON_AddStringToObject(j, "tuned_device", lib->tuned_device ? lib->tuned_device : "");
    cJSON *srcs = cJSON_AddArrayToObject(j, "sources");
    for (uint32_t i = 0; i < lib->nsrcs; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "path", lib->srcs[i].path);
        cJSON_AddNumberToObject(s, "off", (double)lib->srcs[i].off);
        cJSON_AddNumberToObject(s, "len", lib->srcs[i].len);
        cJSON_AddItemToArray(srcs, s);
    }
    cJSON *gaps = cJSON_AddArrayToObject(j, "gaps");
    for (uint32_t i = 0; i < lib->ngaps; i++) {
        cJSON *g = cJSON_CreateObject();
        cJSON_AddStringToObject(g, "op", lib->gaps[i].op);
        cJSON_AddStringToObject(g, "why", lib->gaps[i].why);
        cJSON_AddItemToArray(gaps, g);
    }
    cJSON *ops = cJSON_AddArrayToObject(j, "ops");
    for (uint32_t i = 0; i < lib->nops; i++)
        cJSON_AddItemToArray(ops, op_json(&lib->ops[i]));
    char *s = cJSON_Print(j);
    cJSON_Delete(j);
    return s;
}

int lib_artifact_write(CakeCtx *ctx, const CakeLib *lib, const char *path)
{
    char *meta = meta_text(lib);
    if (!meta)
        ir_bug(ctx, "out of memory writing the library's meta document");
    size_t mlen = strlen(meta);
    uint8_t head[HEADER_BYTES] = {0};
    memcpy(head, LIB_MAGIC, 8);
    head[8] = LIB_FORMAT_VERSION;
    put64(head + 16, mlen);
    put64(head + 24, lib->blob_len);
    uint64_t h = fnv1a(1469598103934665603ull, (const uint8_t *)meta, mlen);
    put64(head + 32, fnv1a(h, lib->blob, lib->blob_len));
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(head, 1, sizeof head, f) == sizeof head &&
             fwrite(meta, 1, mlen, f) == mlen &&
             fwrite(lib->blob, 1, lib->blob_len, f) == lib->blob_len;
    if (f && fclose(f))
        ok = 0;
    free(meta);
    if (!ok) {
        Diag *d = diag_report(ctx, E0001, IR_NOSPAN, "cannot write `%s`: %s", path, strerror(errno));
        diag_help(ctx, d, "check that the folder of -o exists and is writable");
        return 1;
    }
    return 0;
}

/* ---- reading ------------------------------------------------------------------ */

static int corrupt(CakeCtx *ctx, const char *path, const char *why)
{
    Diag *d = diag_report(ctx, E1205, IR_NOSPAN, "`%s` is not a usable library file: %s", path, why);
    diag_help(ctx, d, "rebuild it with `cakec lib build DIR -o %s`", path);
    return 1;
}

static int num_field(const cJSON *j, const char *key, double max, double *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!cJSON_IsNumber(it) || it->valuedouble < 0 || it->valuedouble > max)
        return 0;
    *out = it->valuedouble;
    return 1;
}

static int read_sources(CakeCtx *ctx, CakeLib *lib, const cJSON *root)
{
    const cJSON *srcs = cJSON_GetObjectItemCaseSensitive(root, "sources"), *s;
    int n = cJSON_GetArraySize(srcs);
    lib->srcs = arena_alloc(&ctx->arena, (size_t)(n + 1) * sizeof *lib->srcs);
    cJSON_ArrayForEach(s, srcs) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(s, "path");
        double off, len;
        if (!cJSON_IsString(p) || !num_field(s, "off", (double)lib->blob_len, &off) ||
            !num_field(s, "len", (double)lib->blob_len - off, &len))
            return 0;
        LibSource *ls = &lib->srcs[lib->nsrcs++];
        ls->path = arena_strndup(&ctx->arena, p->valuestring, strlen(p->valuestring));
        ls->text = arena_strndup(&ctx->arena, (const char *)lib->blob + (size_t)off, (size_t)len);
        ls->len = (uint32_t)len;
        ls->off = (size_t)off;
        ls->file = UINT32_MAX;
    }
    return 1;
}

static int read_cells(CakeCtx *ctx, const cJSON *arr, uint32_t nvar, LibCell **out, uint32_t *n)
{
    const cJSON *c;
    *out = arena_alloc(&ctx->arena, (size_t)(cJSON_GetArraySize(arr) + 1) * sizeof **out);
    *n = 0;
    cJSON_ArrayForEach(c, arr) {
        const cJSON *key = cJSON_GetArrayItem(c, 0), *rank = cJSON_GetArrayItem(c, 1), *r;
        char *end;
        if (!cJSON_IsString(key) || !cJSON_IsArray(rank))
            return 0;
        LibCell *cell = &(*out)[(*n)++];
        cell->key = strtoull(key->valuestring, &end, 16);
        if (*end)
            return 0;
        cJSON_ArrayForEach(r, rank) {
            if (!cJSON_IsNumber(r) || r->valuedouble < 0 || r->valuedouble >= nvar ||
                cell->n == LIB_MAX_RANK)
                return 0;
            cell->rank[cell->n++] = (uint8_t)r->valuedouble;
        }
    }
    lib_cells_sort(*out, *n);
    return 1;
}

/* the measured shapes (meas_json's form; none in an artifact of an older build): 1, or 0
   when they are malformed */
static int read_meas(CakeCtx *ctx, const cJSON *arr, LibOp *op)
{
    op->meas = arena_alloc(&ctx->arena, (size_t)(cJSON_GetArraySize(arr) + 1) * sizeof *op->meas);
    op->nmeas = 0;
    if (!arr)
        return 1;
    if (!cJSON_IsArray(arr))
        return 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) {
        const cJSON *d = cJSON_GetArrayItem(e, 0), *v = cJSON_GetArrayItem(e, 1), *t = cJSON_GetArrayItem(e, 2);
        int n = cJSON_GetArraySize(v);
        if (cJSON_GetArraySize(d) != (int)op->pub.ndims || n < 1 || n > CAKE_LIB_MAX_VARIANTS ||
            cJSON_GetArraySize(t) != n)
            return 0;
        int64_t *dimv = arena_alloc(&ctx->arena, op->pub.ndims * sizeof *dimv);
        uint8_t *var = arena_alloc(&ctx->arena, (size_t)n * sizeof *var);
        float *ms = arena_alloc(&ctx->arena, (size_t)n * sizeof *ms);
        for (uint32_t k = 0; k < op->pub.ndims; k++) {
            const cJSON *x = cJSON_GetArrayItem(d, (int)k);
            if (!cJSON_IsNumber(x) || x->valuedouble < 1 || x->valuedouble > INT32_MAX)
                return 0;
            dimv[k] = (int64_t)x->valuedouble;
        }
        for (int k = 0; k < n; k++) {
            const cJSON *x = cJSON_GetArrayItem(v, k), *y = cJSON_GetArrayItem(t, k);
            if (!cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble >= op->pub.nvariants ||
                !cJSON_IsNumber(y) || !(y->valuedouble > 0) || y->valuedouble > 1e9 ||
                (k && (float)y->valuedouble < ms[k - 1]))   /* as written: floats */
                return 0;
            var[k] = (uint8_t)x->valuedouble;
            ms[k] = (float)y->valuedouble;
        }
        op->meas[op->nmeas++] = (LibMeas){lib_class_key(op, dimv), dimv, (uint32_t)n, var, ms};
    }
    lib_meas_sort(ctx, op);
    return 1;
}

/* a fit's span (optional: absent, the fit is unbounded): 1, or 0 when it is malformed */
static int read_span(const cJSON *span, LibFit *f)
{
    if (!span)
        return 1;
    if (cJSON_GetArraySize(span) != 6)
        return 0;
    for (int i = 0; i < 6; i++) {
        const cJSON *x = cJSON_GetArrayItem(span, i);
        if (!cJSON_IsNumber(x) || x->valuedouble < 1 || x->valuedouble > 9.0e15)
            return 0;
        f->span[i / 2][i % 2] = (int64_t)x->valuedouble;
    }
    for (int i = 0; i < 3; i++)
        if (f->span[i][0] > f->span[i][1])
            return 0;
    return 1;
}

/* a variant's fitted model, where the artifact has one: 1, or 0 when it is malformed */
static int read_fit(const cJSON *vj, LibOp *op, LibVariant *v)
{
    const cJSON *geo = cJSON_GetObjectItemCaseSensitive(vj, "fit_geo");
    const cJSON *coef = cJSON_GetObjectItemCaseSensitive(vj, "fit_coef");
    if (!geo && !coef)
        return 1;
    if (!v->fit.family || cJSON_GetArraySize(geo) != LIB_GEO__COUNT ||
        (coef && cJSON_GetArraySize(coef) != LIB_FIT_TERMS))
        return 0;
    int64_t gv[LIB_GEO__COUNT];
    for (int i = 0; i < LIB_GEO__COUNT; i++) {
        const cJSON *g = cJSON_GetArrayItem(geo, i);
        if (!cJSON_IsNumber(g) || g->valuedouble < 1 || g->valuedouble > LIB_FIT_GEO_MAX)
            return 0;
        gv[i] = (int64_t)g->valuedouble;
    }
    lib_fit_set_geometry(&v->fit, gv);
    if (!coef)
        return 1;
    for (int i = 0; i < LIB_FIT_TERMS; i++) {
        const cJSON *c = cJSON_GetArrayItem(coef, i);
        if (!cJSON_IsNumber(c) || !(c->valuedouble >= 0) || c->valuedouble > 1e9)
            return 0;
        v->fit.coef[i] = c->valuedouble;
    }
    if (!read_span(cJSON_GetObjectItemCaseSensitive(vj, "fit_span"), &v->fit))
        return 0;
    v->fit.ok = 1;
    op->nfit++;
    return 1;
}

/* what the manifest reader does not read: images and the table */
static int read_extras(CakeCtx *ctx, CakeLib *lib, const cJSON *root)
{
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(root, "ops");
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(root, "tuned_device");
    if (cJSON_GetArraySize(ops) != (int)lib->nops || !cJSON_IsString(dev))
        return 0;
    lib->tuned_device = arena_strndup(&ctx->arena, dev->valuestring, strlen(dev->valuestring));
    for (uint32_t i = 0; i < lib->nops; i++) {
        LibOp *op = &lib->ops[i];
        const cJSON *oj = cJSON_GetArrayItem(ops, (int)i);
        const cJSON *vars = cJSON_GetObjectItemCaseSensitive(oj, "variants");
        if (cJSON_GetArraySize(vars) != (int)op->pub.nvariants)
            return 0;
        for (uint32_t v = 0; v < op->pub.nvariants; v++) {
            const cJSON *img = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(vars, (int)v), "image");
            const cJSON *kind = cJSON_GetObjectItemCaseSensitive(img, "kind");
            double off, len;
            if (!cJSON_IsString(kind) || strlen(kind->valuestring) >= sizeof op->v[v].image_kind ||
                !num_field(img, "off", (double)lib->blob_len, &off) ||
                !num_field(img, "len", (double)lib->blob_len - off, &len))
                return 0;
            strcpy(op->v[v].image_kind, kind->valuestring);
            op->v[v].image_off = (size_t)off;
            op->v[v].image_len = (size_t)len;
            if (!read_fit(cJSON_GetArrayItem(vars, (int)v), op, &op->v[v]))
                return 0;
        }
        double sms = 0;
        if (op->nfit && (!num_field(oj, "fit_sms", 256, &sms) || sms < 1 || !lib_fit_dims(op)))
            return 0;
        lib_fit_set_sms(op, (int64_t)sms);
        if (!read_cells(ctx, cJSON_GetObjectItemCaseSensitive(oj, "tuned"), op->pub.nvariants,
                        &op->tuned, &op->ntuned) ||
            !read_cells(ctx, cJSON_GetObjectItemCaseSensitive(oj, "model"), op->pub.nvariants,
                        &op->model, &op->nmodel) ||
            !read_meas(ctx, cJSON_GetObjectItemCaseSensitive(oj, "measured"), op))
            return 0;
    }
    return 1;
}

/* the variants' kernels, for their domains: each source parsed once */
static int resolve_variants(CakeCtx *ctx, CakeLib *lib)
{
    Module **mods = arena_alloc(&ctx->arena, (lib->nsrcs + 1) * sizeof *mods);
    for (uint32_t i = 0; i < lib->nops; i++)
        for (uint32_t j = 0; j < lib->ops[i].pub.nvariants; j++) {
            LibVariant *v = &lib->ops[i].v[j];
            LibSource *s = &lib->srcs[v->src];
            if (!v->pub.kernel)   /* an artifact names every variant's kernel */
                return 0;
            if (v->nsteps)        /* a sequence: from its launches, below */
                continue;
            if (s->file == UINT32_MAX)
                s->file = ctx_add_file(ctx, s->path, s->text, s->len);
            if (!mods[v->src] && cake_verify_source(ctx, s->file, "resolve", &mods[v->src]))
                return 0;
            for (uint32_t k = 0; k < mods[v->src]->nkernels && !v->k; k++)
                if (!strcmp(ir_symstr(ctx, mods[v->src]->kernels[k]->name), v->pub.kernel))
                    v->k = mods[v->src]->kernels[k];
            if (!v->k || !lib_variant_bind(ctx, v))
                return 0;
            v->m = mods[v->src];
            v->pub.nconds = v->k->nassumes + v->nconds;
            lib_domain_compile(ctx, &lib->ops[i], v);
        }
    for (uint32_t i = 0; i < lib->nops; i++)
        for (uint32_t j = 0; j < lib->ops[i].pub.nvariants; j++) {
            LibOp *op = &lib->ops[i];
            LibVariant *v = &op->v[j];
            if (!v->nsteps)
                continue;
            for (uint32_t s = 0; s < v->nsteps; s++)
                if (v->steps[s] >= op->pub.nvariants || op->v[v->steps[s]].part_of != (int16_t)j)
                    return 0;
            const LibVariant *last = &op->v[v->steps[v->nsteps - 1]];
            v->k = last->k;
            v->m = last->m;
            v->pb = last->pb;
            v->npb = last->npb;
            v->pub.nconds = v->nconds;
            for (uint32_t s = 0; s < v->nsteps; s++)
                v->pub.nconds += op->v[v->steps[s]].pub.nconds;
        }
    return 1;
}

static int open_mem(CakeCtx *ctx, const char *path, const uint8_t *data, size_t len, CakeLib **out)
{
    *out = NULL;
    if (len < HEADER_BYTES || memcmp(data, LIB_MAGIC, 8))
        return corrupt(ctx, path, len < HEADER_BYTES ? "shorter than its header" : "no library magic");
    uint32_t version = data[8] | (uint32_t)data[9] << 8 | (uint32_t)data[10] << 16 | (uint32_t)data[11] << 24;
    if (version != LIB_FORMAT_VERSION)
        return corrupt(ctx, path, ir_fmt(ctx, "format version %u, this cakec reads %u", version,
                                         LIB_FORMAT_VERSION));
    uint64_t mlen = get64(data + 16), blen = get64(data + 24);
    if (mlen > len || blen > len || HEADER_BYTES + mlen + blen != len)
        return corrupt(ctx, path, HEADER_BYTES + mlen + blen > len
                                      ? "it is shorter than its header says (truncated)"
                                      : "it is longer than its header says");
    const uint8_t *meta = data + HEADER_BYTES;
    uint64_t h = fnv1a(fnv1a(1469598103934665603ull, meta, mlen), meta + mlen, blen);
    if (h != get64(data + 32))
        return corrupt(ctx, path, "its checksum does not match (the file was changed or damaged)");
    CakeLib *lib = arena_alloc(&ctx->arena, sizeof *lib);
    lib->ctx = ctx;
    lib->blob_len = blen;
    lib->blob = malloc(blen ? blen : 1);
    if (!lib->blob)
        ir_bug(ctx, "out of memory reading a library of %llu bytes", (unsigned long long)blen);
    memcpy(lib->blob, meta + mlen, blen);
    cJSON *root = cJSON_ParseWithLength((const char *)meta, mlen);
    uint32_t before = ctx->nerrors, ndiags = ctx->ndiags;
    int ok = root && read_sources(ctx, lib, root) &&
             !lib_manifest_parse(ctx, lib, NULL, ir_fmt(ctx, "%s(meta)", path),
                                 arena_strndup(&ctx->arena, (const char *)meta, mlen), (uint32_t)mlen) &&
             read_extras(ctx, lib, root) && resolve_variants(ctx, lib);
    cJSON_Delete(root);
    if (!ok) {
        ctx->nerrors = before;   /* one diagnostic says it: the meta document is off */
        ctx->ndiags = ndiags;
        free(lib->blob);
        return corrupt(ctx, path, "its meta document does not read");
    }
    lib_plan(ctx, lib);
    *out = lib;
    return 0;
}

int cake_lib_open_mem(CakeCtx *ctx, const void *data, size_t len, CakeLib **out)
{
    int rc;
    *out = NULL;
    CAKE_PROTECTED(ctx, rc, open_mem(ctx, "<memory>", data, len, out));
    return rc;
}

static int open_file(CakeCtx *ctx, const char *path, CakeLib **out)
{
    FILE *f = fopen(path, "rb");
    *out = NULL;
    if (!f) {
        Diag *d = diag_report(ctx, E0001, IR_NOSPAN, "cannot read `%s`: %s", path, strerror(errno));
        diag_help(ctx, d, "build a library file with `cakec lib build DIR -o FILE`");
        return 1;
    }
    size_t cap = 1 << 20, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        uint8_t *nb = cap < ((size_t)1 << 32) ? realloc(buf, cap * 2) : NULL;
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    if (!buf)
        return corrupt(ctx, path, "too large to read");
    int rc = open_mem(ctx, path, buf, n, out);
    free(buf);
    return rc;
}

int cake_lib_open(CakeCtx *ctx, const char *path, CakeLib **out)
{
    int rc;
    *out = NULL;
    CAKE_PROTECTED(ctx, rc, open_file(ctx, path, out));
    return rc;
}

void cake_lib_close(CakeLib *lib)
{
    if (!lib)
        return;
    lib_cache_forget(lib);
    for (uint32_t i = 0; i < lib->nops; i++)
        for (uint32_t j = 0; j < lib->ops[i].pub.nvariants; j++) {
            LibVariant *v = &lib->ops[i].v[j];
            if (v->ck) {
                if (v->ck_dev && rt_health(v->ck_dev) == RT_OK)
                    cake_unload(v->ck);
                free(v->ck);
                v->ck = NULL;
            }
        }
    lib_seq_free(lib);
    free(lib->blob);
    lib->blob = NULL;
}
