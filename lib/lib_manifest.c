/* lib_manifest.c — reads a library folder's manifest.json (docs/library.md)
 * into the in-memory library, and checks each variant like a kernel: its
 * kernel must check at its bindings and its arguments must be the op's
 * signature. Diagnostics point at the manifest's line: cJSON keeps no
 * positions, so the place of an op or variant is found again in the text
 * by its `"name": "value"` pair (names are unique, which is checked). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "cake_priv.h"
#include "lib_priv.h"

typedef struct {
    CakeCtx *ctx;
    CakeLib *lib;
    const char *dir;
    const char *text; uint32_t len;
    uint32_t file;            /* the manifest as a source file of ctx */
    int bad;
    uint32_t op_pos;          /* the place of the op being read (its "op" pair) */
} Reader;

/* ---- places in the text ------------------------------------------------------ */

static uint32_t skip_ws(const char *t, uint32_t len, uint32_t i)
{
    while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
        i++;
    return i;
}

/* the offset of the first `"key": "value"` (value NULL: any) at or after from,
   or UINT32_MAX */
static uint32_t find_pair(const Reader *r, uint32_t from, const char *key, const char *value)
{
    size_t kl = strlen(key), vl = value ? strlen(value) : 0;
    for (uint32_t i = from; i + kl + 2 <= r->len; i++) {
        if (r->text[i] != '"' || memcmp(r->text + i + 1, key, kl) || r->text[i + 1 + kl] != '"')
            continue;
        uint32_t j = skip_ws(r->text, r->len, i + (uint32_t)kl + 2);
        if (j >= r->len || r->text[j] != ':')
            continue;
        j = skip_ws(r->text, r->len, j + 1);
        if (!value || (j + vl + 2 <= r->len && r->text[j] == '"' &&
                       !memcmp(r->text + j + 1, value, vl) && r->text[j + 1 + vl] == '"'))
            return i;
    }
    return UINT32_MAX;
}

static Span pair_span(const Reader *r, uint32_t at)
{
    if (at == UINT32_MAX)
        return (Span){r->file, 0, 0};
    uint32_t end = at;
    while (end < r->len && r->text[end] != '\n' && r->text[end] != ',')
        end++;
    return (Span){r->file, at, end};
}

/* the place of op `op` (its "op" pair), and of its variant `v` after it */
static uint32_t op_at(const Reader *r, const char *op)
{
    uint32_t at = find_pair(r, 0, "op", op);
    return at == UINT32_MAX ? 0 : at;
}

/* the place of variant v of the op being read (after its "op" pair) */
static uint32_t variant_at(const Reader *r, const char *v)
{
    uint32_t at = find_pair(r, r->op_pos, "name", v);
    return at == UINT32_MAX ? r->op_pos : at;
}

static Diag *bad(Reader *r, uint32_t at, const char *msg)
{
    r->bad = 1;
    return diag_report(r->ctx, E1209, pair_span(r, at), "%s", msg);
}

/* ---- fields ------------------------------------------------------------------- */

static const char *str_field(Reader *r, const cJSON *obj, const char *key, int required,
                             uint32_t at)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsString(it))
        return arena_strndup(&r->ctx->arena, it->valuestring, strlen(it->valuestring));
    if (it || required) {
        Diag *d = bad(r, at, ir_fmt(r->ctx, "field `%s` %s", key, it ? "must be a string" : "is missing"));
        diag_help(r->ctx, d, "docs/library.md, \"The manifest\", lists every field");
    }
    return NULL;
}

/* file `path` in ctx's arena (its length in *len); NULL when it cannot be read */
static char *read_text(CakeCtx *ctx, const char *path, uint32_t *len)
{
    size_t n = 0;
    char *buf = cake_read_text(path, (size_t)1 << 30, &n);
    if (!buf)
        return NULL;
    char *out = arena_strndup(&ctx->arena, buf, n);
    free(buf);
    *len = (uint32_t)n;
    return out;
}

/* the index of source `path` (relative to the folder unless absolute), read on first use;
   UINT32_MAX */
static uint32_t source_of(Reader *r, const char *path, uint32_t at)
{
    CakeLib *lib = r->lib;
    for (uint32_t i = 0; i < lib->nsrcs; i++)
        if (!strcmp(lib->srcs[i].path, path))
            return i;
    int absolute = path[0] == '/';
    char *full = absolute ? arena_strndup(&r->ctx->arena, path, strlen(path))
                          : ir_fmt(r->ctx, "%s/%s", r->dir ? r->dir : "?", path);
    uint32_t len = 0;
    char *text = absolute || r->dir ? read_text(r->ctx, full, &len) : NULL;
    if (!text) {
        Diag *d = diag_report(r->ctx, E0001, pair_span(r, find_pair(r, at, "file", NULL)),
                              "cannot read `%s`: %s", full,
                              strerror(errno ? errno : ENOENT));
        diag_help(r->ctx, d, "a variant's `file` is relative to the library folder (or absolute)");
        r->bad = 1;
        return UINT32_MAX;
    }
    lib->srcs = arena_realloc(&r->ctx->arena, lib->srcs, lib->nsrcs * sizeof *lib->srcs,
                              (lib->nsrcs + 1) * sizeof *lib->srcs);
    lib->srcs[lib->nsrcs] = (LibSource){path, text, len, full, UINT32_MAX, NULL, 0, 0};
    return lib->nsrcs++;
}

static int dtype_ok(const char *s)
{
    DType dt;
    uint8_t lanes;
    return s && ir_lookup_dtype(s, strlen(s), &dt, &lanes) && lanes == 1;
}

/* the fields each object of the manifest may have (docs/library.md, "The manifest") */
static const char *const root_fields[] = {"library", "ops", "gaps", NULL};
static const char *const op_fields[] = {"op", "doc", "args", "range", "reference", "variants", NULL};
static const char *const arg_fields[] = {"name", "tensor", "scalar", "dims", NULL};
static const char *const variant_fields[] = {"name", "file", "kernel", "set", "target", "when", "fit", "launches",
                                             "workspace", NULL};
static const char *const launch_fields[] = {"kernel", "file", "set", NULL};
static const char *const gap_fields[] = {"op", "why", NULL};

/* 1 when every field of obj is one of known; else E1209 at the first that is not
   (a misspelled `when` would otherwise widen the variant's domain without a word).
   A manifest only: an artifact's meta document (no dir) carries the build's fields too. */
static int fields_known(Reader *r, const cJSON *obj, const char *const *known, uint32_t at, const char *what)
{
    for (const cJSON *c = r->dir && cJSON_IsObject(obj) ? obj->child : NULL; c; c = c->next) {
        const char *const *k = known;
        while (*k && strcmp(*k, c->string))
            k++;
        if (*k)
            continue;
        char list[200] = "";
        for (k = known; *k; k++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k == known ? "" : ", ", *k);
        Diag *d = bad(r, find_pair(r, at, c->string, NULL), ir_fmt(r->ctx, "%s: unknown field `%s`", what, c->string));
        diag_help(r->ctx, d, "the fields of %s are %s (docs/library.md, \"The manifest\")", what, list);
        return 0;
    }
    return 1;
}

/* one argument of the signature: {"name", "tensor": DT, "dims": [...]} or {"name", "scalar": DT} */
static int read_arg(Reader *r, LibOp *op, const cJSON *j, CakeLibArg *a, uint32_t at)
{
    a->name = str_field(r, j, "name", 1, at);
    if (!fields_known(r, j, arg_fields, at, ir_fmt(r->ctx, "op `%s`: argument `%s`", op->pub.name,
                                                   a->name ? a->name : "?")))
        return 0;
    const char *tensor = str_field(r, j, "tensor", 0, at);
    const char *scalar = str_field(r, j, "scalar", 0, at);
    a->kind = tensor ? CAKE_ARG_TENSOR : CAKE_ARG_SCALAR;
    a->dtype = tensor ? tensor : scalar;
    if (!a->name || !dtype_ok(a->dtype)) {
        bad(r, at, ir_fmt(r->ctx, "op `%s`: argument %s needs `\"tensor\": DTYPE` or "
                                  "`\"scalar\": DTYPE` with a known dtype",
                          op->pub.name, a->name ? a->name : "?"));
        return 0;
    }
    if (!tensor)
        return 1;
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(j, "dims"), *d;
    int n = cJSON_GetArraySize(dims);
    if (!cJSON_IsArray(dims) || n < 1 || n > 8) {
        bad(r, at, ir_fmt(r->ctx, "op `%s`: tensor %s needs `dims`, 1 to 8 dim names or sizes",
                          op->pub.name, a->name));
        return 0;
    }
    cJSON_ArrayForEach(d, dims) {
        int i = a->rank++;
        if (cJSON_IsNumber(d) && d->valuedouble >= 1) {
            a->extent[i] = (int64_t)d->valuedouble;
            continue;
        }
        if (!cJSON_IsString(d)) {
            bad(r, at, ir_fmt(r->ctx, "op `%s`: a dim of %s is neither a name nor a size",
                              op->pub.name, a->name));
            return 0;
        }
        a->dims[i] = arena_strndup(&r->ctx->arena, d->valuestring, strlen(d->valuestring));
        uint32_t k = 0;
        while (k < op->pub.ndims && strcmp(op->dims[k], a->dims[i]))
            k++;
        if (k == op->pub.ndims) {
            if (k == LIB_MAX_DIMS) {
                bad(r, at, ir_fmt(r->ctx, "op `%s` has more than %d dims", op->pub.name, LIB_MAX_DIMS));
                return 0;
            }
            op->dims[op->pub.ndims++] = a->dims[i];
        }
    }
    return 1;
}

static void read_range(Reader *r, LibOp *op, const cJSON *j)
{
    const cJSON *range = cJSON_GetObjectItemCaseSensitive(j, "range");
    for (uint32_t i = 0; i < op->pub.ndims; i++) {
        op->lo[i] = 1;
        op->hi[i] = 65536;
        const cJSON *lh = cJSON_GetObjectItemCaseSensitive(range, op->dims[i]);
        if (cJSON_GetArraySize(lh) == 2 && cJSON_IsNumber(cJSON_GetArrayItem(lh, 0)) &&
            cJSON_IsNumber(cJSON_GetArrayItem(lh, 1))) {
            op->lo[i] = (int64_t)cJSON_GetArrayItem(lh, 0)->valuedouble;
            op->hi[i] = (int64_t)cJSON_GetArrayItem(lh, 1)->valuedouble;
            op->has_range[i] = 1;
        } else if (lh) {
            bad(r, op_at(r, op->pub.name),
                ir_fmt(r->ctx, "op `%s`: range of %s must be [LO, HI]", op->pub.name, op->dims[i]));
        }
        if (op->lo[i] < 1 || op->hi[i] < op->lo[i] || op->hi[i] > INT32_MAX)
            op->lo[i] = 1, op->hi[i] = 65536, op->has_range[i] = 0;
        op->glo[i] = (uint8_t)lib_bucket(op->lo[i]);
        unsigned span = lib_bucket(op->hi[i]) - op->glo[i] + 1;
        op->gstep[i] = (uint8_t)((span + LIB_GRID_POINTS - 1) / LIB_GRID_POINTS);
        op->ghi[i] = (uint8_t)(op->glo[i] + (span - 1) / op->gstep[i] * op->gstep[i]);
    }
}

static int file_is(const LibVariant *a, const LibVariant *b)
{
    return !strcmp(a->pub.file, b->pub.file);
}

/* ---- sequence variants --------------------------------------------------------------- */

/* the names of a JSON array of strings into out (at most max): the count, or -1 */
static int names_of(Reader *r, const cJSON *arr, const char **out, int max)
{
    const cJSON *it;
    int n = 0;
    cJSON_ArrayForEach(it, arr) {
        if (!cJSON_IsString(it) || n == max)
            return -1;
        out[n++] = arena_strndup(&r->ctx->arena, it->valuestring, strlen(it->valuestring));
    }
    return n;
}

/* a variant of several launches. In a manifest: `"launches": [KERNEL, ...]` (or
   objects {"kernel", "file", "set"}, the variant's file and set by default) and
   `"workspace": [NAME, ...]`; each launch becomes a hidden variant of the op, appended
   after the manifest's (read_op). In an artifact's meta document the hidden ones are
   there already: the sequence says `"steps": [INDEX, ...]`, each launch `"part_of"`. */
static int read_sequence(Reader *r, LibOp *op, const cJSON *j, LibVariant *v, uint32_t at)
{
    (void)op;
    const cJSON *ws = cJSON_GetObjectItemCaseSensitive(j, "workspace");
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(j, "steps"), *it;
    const cJSON *launches = cJSON_GetObjectItemCaseSensitive(j, "launches");
    const cJSON *part = cJSON_GetObjectItemCaseSensitive(j, "part_of");
    if (cJSON_IsNumber(part))
        v->part_of = (int16_t)part->valuedouble;
    if (!ws && !steps && !launches)
        return 1;
    int nws = ws ? names_of(r, ws, v->ws, LIB_MAX_WS) : 0;
    int nl = cJSON_GetArraySize(launches);
    if (nws < 0 || (launches && (!cJSON_IsArray(launches) || nl < 1 || nl > LIB_MAX_STEPS))) {
        Diag *d = bad(r, at, ir_fmt(r->ctx, "variant `%s`: `launches` is 1 to %d kernels and `workspace` "
                                            "at most %d tensor names", v->pub.name, LIB_MAX_STEPS, LIB_MAX_WS));
        diag_help(r->ctx, d, "docs/library.md, \"Variants of several launches\"");
        return 0;
    }
    v->nws = (uint8_t)nws;
    cJSON_ArrayForEach(it, steps) {
        if (!cJSON_IsNumber(it) || v->nsteps == LIB_MAX_STEPS)
            return 0;
        v->steps[v->nsteps++] = (uint8_t)it->valuedouble;
    }
    return 1;
}

/* the hidden variant of launch `l` of sequence variant `seq` (manifest form) */
static int read_launch(Reader *r, LibOp *op, const cJSON *l, uint32_t seqi, uint32_t li, LibVariant *v)
{
    const LibVariant *seq = &op->v[seqi];
    uint32_t at = variant_at(r, seq->pub.name);
    memset(v, 0, sizeof *v);
    v->part_of = (int16_t)seqi;
    v->at = seq->at;
    v->pub = seq->pub;
    v->tg = seq->tg;
    v->pub.name = ir_fmt(r->ctx, "%s:%u", seq->pub.name, li + 1);
    v->pub.kernel = cJSON_IsString(l) ? arena_strndup(&r->ctx->arena, l->valuestring, strlen(l->valuestring))
                                      : str_field(r, l, "kernel", 1, at);
    if (!v->pub.kernel)
        return 0;
    if (cJSON_IsObject(l)) {
        if (!fields_known(r, l, launch_fields, at, ir_fmt(r->ctx, "a launch of variant `%s`", seq->pub.name)))
            return 0;
        const char *file = str_field(r, l, "file", 0, at), *set = str_field(r, l, "set", 0, at);
        v->pub.file = file ? file : v->pub.file;
        v->pub.set = set ? set : v->pub.set;
    }
    v->src = file_is(seq, v) ? seq->src : source_of(r, v->pub.file, at);
    return v->src != UINT32_MAX;
}

static int read_variant(Reader *r, LibOp *op, const cJSON *j, LibVariant *v)
{
    memset(v, 0, sizeof *v);
    v->part_of = -1;
    CakeLibVariant *p = &v->pub;
    p->name = str_field(r, j, "name", 1, r->op_pos);
    if (!p->name)
        return 0;
    uint32_t at = variant_at(r, p->name);
    v->at = pair_span(r, at);
    if (!fields_known(r, j, variant_fields, at, ir_fmt(r->ctx, "variant `%s`", p->name)))
        return 0;
    p->file = str_field(r, j, "file", 1, at);
    p->kernel = str_field(r, j, "kernel", 0, at);
    p->set = str_field(r, j, "set", 0, at);
    p->target = str_field(r, j, "target", 1, at);
    v->set_at = p->set ? pair_span(r, find_pair(r, at, "set", NULL)) : IR_NOSPAN;
    if (!p->set)
        p->set = "";
    if (!p->file || !p->target)
        return 0;
    if (!ir_lookup_target(p->target, strlen(p->target), &v->tg) ||
        strlen(ir_target_names[v->tg]) != strlen(p->target)) {
        Diag *d = bad(r, find_pair(r, at, "target", NULL), ir_fmt(r->ctx, "unknown target `%s`", p->target));
        diag_help(r->ctx, d, "targets: sm_80, sm_90a, gfx90a, gfx942");
        return 0;
    }
    v->src = source_of(r, p->file, at);
    if (!read_sequence(r, op, j, v, at))
        return 0;
    const char *fit = str_field(r, j, "fit", 0, at);
    if (fit && !(v->fit.family = (uint8_t)lib_fit_family(fit))) {
        Diag *d = bad(r, find_pair(r, at, "fit", NULL), ir_fmt(r->ctx, "variant `%s`: unknown `fit` "
                                                              "family `%s`", p->name, fit));
        diag_help(r->ctx, d, "the fitted model's families: tiles, splitk, gemv, rows (docs/library.md, "
                             "\"The fitted model\")");
        return 0;
    }
    const cJSON *when = cJSON_GetObjectItemCaseSensitive(j, "when"), *c;
    v->nconds = 0;
    v->conds = arena_alloc(&r->ctx->arena, (size_t)(cJSON_GetArraySize(when) + 1) * sizeof *v->conds);
    cJSON_ArrayForEach(c, when) {
        LibCond *lc = &v->conds[v->nconds];
        if (!cJSON_IsString(c) || !lib_cond_parse(op, c->valuestring, lc)) {
            uint32_t w = find_pair(r, at, "when", NULL);
            Diag *d = diag_report(r->ctx, E1210, pair_span(r, w),
                                  "variant `%s`: cannot read condition `%s`", p->name,
                                  cJSON_IsString(c) ? c->valuestring : "?");
            diag_help(r->ctx, d, "a condition is `DIM < N` (<, <=, >, >=, ==, !=), `DIM %% N == R` "
                                 "or a tile count `DIM * cdiv(DIM, N) >= C`, over the op's dims");
            r->bad = 1;
            continue;
        }
        lc->text = arena_strndup(&r->ctx->arena, c->valuestring, strlen(c->valuestring));
        v->nconds++;
    }
    return v->src != UINT32_MAX;
}

static int read_op(Reader *r, const cJSON *j, LibOp *op)
{
    memset(op, 0, sizeof *op);   /* the slot of an op that failed before is reused */
    op->pub.name = str_field(r, j, "op", 1, 0);
    if (!op->pub.name)
        return 0;
    uint32_t at = op_at(r, op->pub.name);
    r->op_pos = at;
    if (!fields_known(r, j, op_fields, at, ir_fmt(r->ctx, "op `%s`", op->pub.name)))
        return 0;
    op->pub.doc = str_field(r, j, "doc", 0, at);
    if (!op->pub.doc)
        op->pub.doc = "";
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(j, "args"), *a;
    const cJSON *vars = cJSON_GetObjectItemCaseSensitive(j, "variants"), *v;
    if (!cJSON_IsArray(args) || !cJSON_GetArraySize(args) || !cJSON_IsArray(vars) ||
        !cJSON_GetArraySize(vars)) {
        bad(r, at, ir_fmt(r->ctx, "op `%s` needs `args` and `variants`, non-empty arrays",
                          op->pub.name));
        return 0;
    }
    Arena *ar = &r->ctx->arena;
    op->args = arena_alloc(ar, (size_t)cJSON_GetArraySize(args) * sizeof *op->args);
    op->dims = arena_alloc(ar, LIB_MAX_DIMS * sizeof *op->dims);
    op->dsym = arena_alloc(ar, LIB_MAX_DIMS * sizeof *op->dsym);
    cJSON_ArrayForEach(a, args)
        if (!read_arg(r, op, a, &op->args[op->pub.nargs++], at))
            return 0;
    for (uint32_t i = 0; i < op->pub.ndims; i++)
        op->dsym[i] = ir_intern_cstr(r->ctx, op->dims[i]);
    op->pub.args = op->args;
    op->pub.dims = op->dims;
    read_range(r, op, j);
    uint32_t nv = (uint32_t)cJSON_GetArraySize(vars);
    cJSON_ArrayForEach(v, vars)
        nv += (uint32_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(v, "launches"));
    op->reference = str_field(r, j, "reference", 0, at);
    if (nv > CAKE_LIB_MAX_VARIANTS) {
        bad(r, at, ir_fmt(r->ctx, "op `%s` has more than %d variants", op->pub.name,
                          CAKE_LIB_MAX_VARIANTS));
        return 0;
    }
    op->v = arena_alloc(ar, nv * sizeof *op->v);
    cJSON_ArrayForEach(v, vars) {
        LibVariant *lv = &op->v[op->pub.nvariants];
        if (!read_variant(r, op, v, lv))
            continue;
        for (uint32_t i = 0; i < op->pub.nvariants; i++)
            if (!strcmp(op->v[i].pub.name, lv->pub.name))
                bad(r, variant_at(r, lv->pub.name),
                    ir_fmt(r->ctx, "op `%s` has two variants named `%s`", op->pub.name, lv->pub.name));
        op->pub.nvariants++;
    }
    uint32_t nmanifest = op->pub.nvariants;
    cJSON_ArrayForEach(v, vars) {   /* the launches of sequence variants, hidden, after them */
        const cJSON *ls = cJSON_GetObjectItemCaseSensitive(v, "launches"), *l;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(v, "name");
        uint32_t li = 0, vi = 0;
        while (ls && cJSON_IsString(name) && vi < nmanifest && strcmp(op->v[vi].pub.name, name->valuestring))
            vi++;
        if (!ls || !cJSON_IsString(name) || vi == nmanifest)
            continue;
        cJSON_ArrayForEach(l, ls) {
            LibVariant *seq = &op->v[vi];
            if (!read_launch(r, op, l, vi, li++, &op->v[op->pub.nvariants]))
                return 0;
            seq->steps[seq->nsteps++] = (uint8_t)op->pub.nvariants++;
        }
    }
    return !r->bad;
}

static void read_gaps(Reader *r, const cJSON *root)
{
    const cJSON *gaps = cJSON_GetObjectItemCaseSensitive(root, "gaps"), *g;
    CakeLib *lib = r->lib;
    lib->gaps = arena_alloc(&r->ctx->arena, (size_t)(cJSON_GetArraySize(gaps) + 1) * sizeof *lib->gaps);
    cJSON_ArrayForEach(g, gaps) {
        if (!fields_known(r, g, gap_fields, find_pair(r, 0, "gaps", NULL), "a gap"))
            continue;
        const char *op = str_field(r, g, "op", 1, find_pair(r, 0, "gaps", NULL));
        const char *why = str_field(r, g, "why", 0, find_pair(r, 0, "gaps", NULL));
        if (op)
            lib->gaps[lib->ngaps++] = (LibGap){op, why ? why : ""};
    }
}

static int read_manifest(Reader *r)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(r->text, r->len, &end, 0);
    if (!root) {
        uint32_t at = end ? (uint32_t)(end - r->text) : 0;
        Diag *d = diag_report(r->ctx, E1209, (Span){r->file, at, at + (at < r->len)},
                              "manifest.json is not valid JSON here");
        diag_help(r->ctx, d, "a missing comma or quote is the usual cause");
        return 1;
    }
    CakeLib *lib = r->lib;
    lib->name = str_field(r, root, "library", 1, 0);
    fields_known(r, root, root_fields, 0, "the manifest");
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(root, "ops"), *o;
    if (!cJSON_IsArray(ops)) {
        bad(r, 0, "the manifest needs `ops`, an array of ops");
        cJSON_Delete(root);
        return 1;
    }
    lib->ops = arena_alloc(&r->ctx->arena, (size_t)(cJSON_GetArraySize(ops) + 1) * sizeof *lib->ops);
    cJSON_ArrayForEach(o, ops) {
        LibOp *op = &lib->ops[lib->nops];
        if (!read_op(r, o, op))
            continue;
        for (uint32_t i = 0; i < lib->nops; i++)
            if (!strcmp(lib->ops[i].pub.name, op->pub.name))
                bad(r, op_at(r, op->pub.name), ir_fmt(r->ctx, "two ops named `%s`", op->pub.name));
        lib->nops++;
    }
    read_gaps(r, root);
    cJSON_Delete(root);
    return r->bad || r->ctx->nerrors;
}

static int manifest_read(CakeCtx *ctx, const char *dir, CakeLib **out)
{
    CakeLib *lib = arena_alloc(&ctx->arena, sizeof *lib);
    lib->ctx = ctx;
    lib->tuned_device = "";
    *out = lib;
    const char *path = ir_fmt(ctx, "%s/manifest.json", dir);
    uint32_t len = 0;
    const char *text = read_text(ctx, path, &len);
    if (!text) {
        Diag *d = diag_report(ctx, E0001, IR_NOSPAN, "cannot read `%s`: %s", path, strerror(errno));
        diag_help(ctx, d, "a library folder holds manifest.json and the .tir files it names");
        return 1;
    }
    return lib_manifest_parse(ctx, lib, dir, path, text, len);
}

int lib_manifest_parse(CakeCtx *ctx, CakeLib *lib, const char *dir, const char *path,
                       const char *text, uint32_t len)
{
    Reader r = {ctx, lib, dir, text, len, 0, 0, 0};
    r.file = ctx_add_file(ctx, path, text, len);
    return read_manifest(&r);
}

int lib_manifest_read(CakeCtx *ctx, const char *dir, CakeLib **out)
{
    return manifest_read(ctx, dir, out);
}

/* ---- conditions -------------------------------------------------------------------- */

/* the index of the op's dim `name`, -1 if none */
static int dim_index(const LibOp *op, const char *name)
{
    for (uint32_t i = 0; i < op->pub.ndims; i++)
        if (!strcmp(op->dims[i], name))
            return (int)i;
    return -1;
}

/* a factor at text + *at: DIM or cdiv(DIM, N) (N >= 1); its dim and divisor */
static int cond_factor(const LibOp *op, const char *text, int *at, uint8_t *dim, int64_t *div)
{
    char name[64];
    long long d = 1;
    int n = 0, i;
    if (sscanf(text + *at, " cdiv ( %63[A-Za-z0-9_] , %lld )%n", name, &d, &n) == 2 && n > 0) {
        if (d < 1)
            return 0;
    } else if (sscanf(text + *at, " %63[A-Za-z0-9_]%n", name, &n) != 1 || !strcmp(name, "cdiv")) {
        return 0;
    }
    if ((i = dim_index(op, name)) < 0)
        return 0;
    *at += n;
    *dim = (uint8_t)i;
    *div = d;
    return 1;
}

/* TERM REL N (TERM: a factor or FACTOR * FACTOR), or DIM % N == R */
int lib_cond_parse(const LibOp *op, const char *text, LibCond *out)
{
    static const char *const rels[] = {"<", "<=", ">", ">=", "==", "!="};
    char rel[3] = {0};
    long long a = 0, b = 0;
    int at = 0, n = 0, r = 0;
    memset(out, 0, sizeof *out);
    if (!cond_factor(op, text, &at, &out->dim, &out->div))
        return 0;
    out->nfac = 1;
    if (out->div == 1 && sscanf(text + at, " %% %lld == %lld %n", &a, &b, &n) == 2 && !text[at + n]) {
        if (a < 1 || b < 0 || b >= a)
            return 0;
        out->rel = LC_MOD;
        out->mod = a;
        out->value = b;
        return 1;
    }
    if (sscanf(text + at, " *%n", &n) == 0 && n > 0) {
        at += n;
        if (!cond_factor(op, text, &at, &out->dim2, &out->div2))
            return 0;
        out->nfac = 2;
    }
    n = 0;
    if (sscanf(text + at, " %2[<>=!] %lld %n", rel, &a, &n) != 2 || text[at + n])
        return 0;
    while (r < 6 && strcmp(rels[r], rel))
        r++;
    if (r == 6)
        return 0;
    out->rel = (uint8_t)r;
    out->value = a;
    return 1;
}

/* ---- checking the variants ---------------------------------------------------------- */

static Kernel *kernel_of(CakeCtx *ctx, Module *m, const LibVariant *v)
{
    return lib_kernel(ctx, m, v->pub.kernel, v->tg);   /* the one lookup (instance.c) */
}

/* the text of an extent expression of k: a dim's name, or its constant at the
   variant's bindings (`bf16[BH, S, D]` with `D=64` set is the op's 64) */
static int axis_matches(CakeCtx *ctx, const Kernel *k, NodeId e, const CakeLibArg *a, int i,
                        const CeEnv *set)
{
    const Node *n = &k->nodes[e];
    if (a->dims[i])
        return n->op == OP_NAME && !strcmp(ir_symstr(ctx, n->name), a->dims[i]);
    int64_t c;
    return ce_eval_int(ctx, k, e, set, &c) && c == a->extent[i];
}

/* the variant's parameter bindings, for the extents that depend on them */
static void variant_env(CakeCtx *ctx, const LibVariant *v, Kernel *k, ShapeEnv *env)
{
    env->n = 0;
    if (v->pub.set[0] && !cake_parse_bindings(ctx, k, v->pub.set, NULL, env))
        env->n = 0;
}

static const char *arg_mismatch(CakeCtx *ctx, const LibOp *op, const LibVariant *v, Kernel *k)
{
    ShapeEnv env;
    variant_env(ctx, v, k, &env);
    CeEnv set = {env.b, env.n, NULL, NULL, NULL};
    if (k->nargs != op->pub.nargs)
        return ir_fmt(ctx, "the kernel has %u arguments, the op %u", k->nargs, op->pub.nargs);
    for (uint32_t i = 0; i < k->nargs; i++) {
        const CakeLibArg *a = &op->args[i];
        const Node *arg = &k->nodes[k->args[i]];
        const Node *t = &k->nodes[arg->a];
        const char *name = ir_symstr(ctx, arg->name);
        int tensor = t->op == OP_GTYPE;
        if (strcmp(name, a->name))
            return ir_fmt(ctx, "argument %u is `%s` in the kernel, `%s` in the op", i + 1, name, a->name);
        if (tensor != (a->kind == CAKE_ARG_TENSOR))
            return ir_fmt(ctx, "`%s` is a %s in the kernel, a %s in the op", name,
                          tensor ? "tensor" : "scalar", tensor ? "scalar" : "tensor");
        if (strcmp(ir_dtypes[t->dtype].spelling, a->dtype))
            return ir_fmt(ctx, "`%s` is %s in the kernel, %s in the op", name,
                          ir_dtypes[t->dtype].spelling, a->dtype);
        if (!tensor)
            continue;
        if ((int)t->sub != a->rank)
            return ir_fmt(ctx, "`%s` has rank %u in the kernel, %d in the op", name, t->sub, a->rank);
        for (int d = 0; d < a->rank; d++)
            if (!axis_matches(ctx, k, k->lists[t->list + d], a, d, &set))
                return ir_fmt(ctx, "axis %d of `%s` is not `%s` in the kernel", d + 1, name,
                              a->dims[d] ? a->dims[d] : ir_fmt(ctx, "%lld", (long long)a->extent[d]));
    }
    return NULL;
}

static int is_workspace(CakeCtx *ctx, const LibVariant *seq, Sym name)
{
    for (uint32_t w = 0; w < seq->nws; w++)
        if (!strcmp(seq->ws[w], ir_symstr(ctx, name)))
            return 1;
    return 0;
}

/* a launch of a sequence: each argument is an argument of the op by name (with its
   dtype and dims) or a workspace tensor of the sequence */
static const char *launch_mismatch(CakeCtx *ctx, const LibOp *op, const LibVariant *seq,
                                   const LibVariant *v, Kernel *k)
{
    ShapeEnv env;
    variant_env(ctx, v, k, &env);
    CeEnv set = {env.b, env.n, NULL, NULL, NULL};
    for (uint32_t i = 0; i < k->nargs; i++) {
        const Node *arg = &k->nodes[k->args[i]];
        const Node *t = &k->nodes[arg->a];
        const char *name = ir_symstr(ctx, arg->name);
        uint32_t a = 0;
        while (a < op->pub.nargs && strcmp(op->args[a].name, name))
            a++;
        if (a == op->pub.nargs) {
            if (!is_workspace(ctx, seq, arg->name))
                return ir_fmt(ctx, "`%s` is neither an argument of the op nor a workspace tensor of "
                                   "the sequence", name);
            if (t->op != OP_GTYPE)
                return ir_fmt(ctx, "workspace `%s` is a scalar", name);
            continue;
        }
        const CakeLibArg *oa = &op->args[a];
        int tensor = t->op == OP_GTYPE;
        if (tensor != (oa->kind == CAKE_ARG_TENSOR) || strcmp(ir_dtypes[t->dtype].spelling, oa->dtype) ||
            (tensor && (int)t->sub != oa->rank))
            return ir_fmt(ctx, "`%s` is not the op's %s %s", name, oa->dtype,
                          oa->kind == CAKE_ARG_TENSOR ? "tensor of its rank" : "scalar");
        for (int d = 0; tensor && d < oa->rank; d++)
            if (!axis_matches(ctx, k, k->lists[t->list + d], oa, d, &set))
                return ir_fmt(ctx, "axis %d of `%s` is not `%s` in the kernel", d + 1, name,
                              oa->dims[d] ? oa->dims[d] : ir_fmt(ctx, "%lld", (long long)oa->extent[d]));
    }
    return NULL;
}

/* a sequence variant, once its launches checked: every argument of the op and every
   workspace tensor is some launch's; the sequence takes the last launch's kernel and
   bindings for its environment */
static int check_sequence(CakeCtx *ctx, LibOp *op, LibVariant *v)
{
    const char *why = v->nsteps ? NULL : "it has no launches";
    for (uint32_t s = 0; s < v->nsteps && !why; s++)
        if (v->steps[s] >= op->pub.nvariants || op->v[v->steps[s]].part_of != (int16_t)(v - op->v))
            why = "its launches are not its own";
        else if (!op->v[v->steps[s]].k)
            return 1;   /* the launch's own diagnostic said why */
    for (uint32_t a = 0; a < op->pub.nargs + v->nws && !why; a++) {
        const char *name = a < op->pub.nargs ? op->args[a].name : v->ws[a - op->pub.nargs];
        int used = 0;
        for (uint32_t s = 0; s < v->nsteps && !used; s++) {
            const Kernel *k = op->v[v->steps[s]].k;
            for (uint32_t i = 0; i < k->nargs && !used; i++)
                used = !strcmp(ir_symstr(ctx, k->nodes[k->args[i]].name), name);
        }
        if (!used)
            why = ir_fmt(ctx, "`%s` is no launch's argument", name);
    }
    if (why) {
        Diag *d = diag_report(ctx, E1208, v->at, "sequence variant `%s` of op `%s`: %s", v->pub.name,
                              op->pub.name, why);
        diag_help(ctx, d, "docs/library.md, \"Variants of several launches\"");
        return 1;
    }
    const LibVariant *last = &op->v[v->steps[v->nsteps - 1]];
    v->k = last->k;
    v->m = last->m;
    v->pb = last->pb;
    v->npb = last->npb;
    char *names = ir_fmt(ctx, "%s", op->v[v->steps[0]].pub.kernel);
    for (uint32_t s = 1; s < v->nsteps; s++)
        names = ir_fmt(ctx, "%s+%s", names, op->v[v->steps[s]].pub.kernel);
    v->pub.kernel = names;
    v->pub.nconds = v->nconds;
    for (uint32_t s = 0; s < v->nsteps; s++)
        v->pub.nconds += op->v[v->steps[s]].pub.nconds;
    return 0;
}

int lib_variant_bind(CakeCtx *ctx, LibVariant *v)
{
    ShapeEnv env;
    if (!cake_parse_bindings(ctx, v->k, v->pub.set[0] ? v->pub.set : NULL, NULL, &env))
        return 0;
    v->pb = arena_alloc(&ctx->arena, (env.n + 1) * sizeof *v->pb);
    v->npb = env.n;
    memcpy(v->pb, env.b, env.n * sizeof *v->pb);
    return 1;
}

/* 1 when every name of v's `set` is one kernel k binds; otherwise an E1207 at the
   `set`, with the parser's reason (the CLI's E0002 would have no place in the manifest) */
static int set_names_ok(CakeCtx *ctx, const LibOp *op, const LibVariant *v, Kernel *k)
{
    ShapeEnv env;
    char err[256];
    shape_env_clear(&env);
    if (!v->pub.set[0] || shape_env_parse(ctx, k, &env, v->pub.set, err, sizeof err))
        return 1;
    Diag *d = diag_report(ctx, E1207, v->set_at.hi ? v->set_at : v->at, "variant `%s` of op `%s`: its "
                          "`set`: %s", v->pub.name, op->pub.name, err);
    diag_note(ctx, d, k->span, "the kernel");
    diag_help(ctx, d, "a variant's `set` binds the kernel's `param`s (and dims), as `--set` does");
    return 0;
}

/* checks variant v of op: its kernel at its bindings (an instance of the
   source's verified module, bound), then its signature */
static int check_variant(CakeCtx *ctx, CakeLib *lib, LibOp *op, LibVariant *v, Span at)
{
    LibSource *s = &lib->srcs[v->src];
    const char *shown = s->shown ? s->shown : s->path;
    uint32_t before = ctx->nerrors;
    Module *m = NULL;
    int rc = lib_source_module(ctx, lib, v->src, &m);
    int source_ok = rc == 0;   /* a failed source is "does not check" for each of its variants */
    Kernel *k = rc ? NULL : kernel_of(ctx, m, v);
    if (k && !rc && !set_names_ok(ctx, op, v, k))
        return 1;
    if (k && !rc) {
        CakeKernel ck;
        v->pub.kernel = ir_symstr(ctx, k->name);
        rc = ir_kernel_targets(k, v->tg) ? lib_instance(ctx, lib, v, CAKE_INST_BOUND, &ck) : 0;
    }
    if (rc || !k || ctx->nerrors != before) {
        int missing = !k && source_ok && ctx->nerrors == before;
        Diag *d = diag_report(ctx, E1207, at, "variant `%s` of op `%s`: %s", v->pub.name, op->pub.name,
                              missing ? ir_fmt(ctx, "`%s` has no kernel %s%s", shown,
                                               v->pub.kernel ? "named " : "for target ",
                                               v->pub.kernel ? v->pub.kernel : v->pub.target)
                                      : ir_fmt(ctx, "its kernel in `%s` does not check%s%s", shown,
                                               v->pub.set[0] ? " at " : "", v->pub.set));
        if (missing && v->pub.kernel)   /* nothing for `check` to show: the manifest names what the file lacks */
            diag_help(ctx, d, "set the variant's \"kernel\" to one of the kernels of `%s` (its `kernel NAME` "
                      "lines)", shown);
        else if (missing)
            diag_help(ctx, d, "give the variant a target one of the file's kernels lists, or name the kernel");
        else
            diag_help(ctx, d, "`cakec check %s%s%s` shows why", shown, v->pub.set[0] ? " --set " : "",
                      v->pub.set);
        return rc == 2 ? 2 : 1;
    }
    v->m = m;
    v->k = k;
    v->pub.nconds = k->nassumes + v->nconds;
    if (!ir_kernel_targets(k, v->tg)) {
        Diag *d = diag_report(ctx, E1207, at, "variant `%s`: kernel `%s` does not list target %s",
                              v->pub.name, v->pub.kernel, v->pub.target);
        diag_note(ctx, d, k->target_span, "its targets");
        return 1;
    }
    const char *why = v->part_of >= 0 ? launch_mismatch(ctx, op, &op->v[v->part_of], v, k)
                                      : arg_mismatch(ctx, op, v, k);
    if (why) {
        Diag *d = diag_report(ctx, E1208, at, "variant `%s`: kernel `%s` does not have the signature "
                                              "of op `%s`: %s", v->pub.name, v->pub.kernel,
                              op->pub.name, why);
        diag_note(ctx, d, k->span, "the kernel");
        if (v->part_of >= 0)
            diag_help(ctx, d, "a launch of a sequence takes the op's arguments by name (same dtypes "
                              "and dims) and the sequence's `workspace` tensors");
        else
            diag_help(ctx, d, "every variant takes the op's arguments in the op's order, with the "
                              "same names, dtypes and dims");
        return 1;
    }
    if (!lib_variant_bind(ctx, v))
        return 1;
    lib_domain_compile(ctx, op, v);
    return 0;
}

/* every variant, then the sequences once their launches checked */
int lib_variants_check(CakeCtx *ctx, CakeLib *lib)
{
    int worst = 0;
    for (uint32_t i = 0; i < lib->nops; i++)
        for (uint32_t j = 0; j < lib->ops[i].pub.nvariants; j++) {
            LibVariant *v = &lib->ops[i].v[j];
            uint32_t nd = ctx->ndiags;
            int rc = v->nsteps ? 0 : check_variant(ctx, lib, &lib->ops[i], v, v->at);
            diag_drop_repeated_notes(ctx, nd);   /* a kernel's notes once, not once per variant */
            if (rc > worst)
                worst = rc;
        }
    for (uint32_t i = 0; i < lib->nops; i++)
        for (uint32_t j = 0; j < lib->ops[i].pub.nvariants; j++)
            if (lib->ops[i].v[j].nsteps && check_sequence(ctx, &lib->ops[i], &lib->ops[i].v[j]) && !worst)
                worst = 1;
    return worst;
}
