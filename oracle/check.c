/* check.c — `run --check`: random inputs, poisoned outputs, the fp64
 * reference, the device run through a callback, and the comparison with a
 * per-dtype error bound (see check.h and docs/checking.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include "check.h"

int check_arg_values(CakeCtx *ctx, const Kernel *k, uint32_t i, const ShapeEnv *env,
                     int64_t *lo, int64_t *hi)
{
    const Node *a = &k->nodes[k->args[i]];
    const Node *t = a->a ? &k->nodes[a->a] : NULL;
    if (!t || t->op != OP_GTYPE || !t->b || !t->c)
        return -1;
    char buf[256];
    if (!shape_eval_int(ctx, k, t->b, env, lo) || !shape_eval_int(ctx, k, t->c, env, hi) ||
        *hi <= *lo) {
        Diag *d = diag_report(ctx, E0124, k->nodes[t->b].span,
                              "the value range of argument '%s' is empty at %s",
                              ir_symstr(ctx, a->name), shape_env_format(ctx, k, env, buf, sizeof buf));
        diag_help(ctx, d, "`values LO .. HI` holds LO <= v < HI: HI must exceed LO at every "
                          "checked shape (add an `assume`)");
        return 0;
    }
    return 1;
}

/* ---- tolerances and poison ------------------------------------------------ */

void check_tolerance(DType dt, double sum_len, double scale, double *rtol, double *atol_rel)
{
    double r, a;
    switch (dt) {
    case DT_F64: r = a = 1e-12; break;
    case DT_F32: r = a = 1e-5; break;
    case DT_TF32: r = a = 0x1p-9; break;
    case DT_F16: r = 0x1p-9; a = 0x1p-10; break;
    case DT_BF16: r = 0x1p-6; a = 0x1p-7; break;
    case DT_E4M3: r = 0x1p-2; a = 0x1p-3; break;
    case DT_E5M2: r = 0x1p-1; a = 0x1p-2; break;
    default: r = a = 0; break; /* integers and bool: exact */
    }
    if (ir_dtypes[dt].kind == 'f' && sum_len > 1)
        a += 0x1p-22 * sqrt(sum_len); /* f32 accumulation over sum_len terms on the device */
    if (scale <= 0)
        scale = 1;
    *rtol = r * scale;
    *atol_rel = a * scale;
}

uint8_t check_poison_byte(DType dt)
{
    return ir_dtypes[dt].kind == 'f' ? 0xFF : 0xAB;
}

static int is_poison(const uint8_t *p, int eb, uint8_t poison)
{
    for (int i = 0; i < eb; i++)
        if (p[i] != poison)
            return 0;
    return 1;
}

/* ---- comparing ------------------------------------------------------------- */

/* walks the logical elements of a tensor in row-major order */
typedef struct { int64_t idx[IR_MAX_RANK]; int64_t off; int done; } Iter;

static void it_begin(Iter *it, const HostTensor *t)
{
    memset(it, 0, sizeof *it);
    it->done = t->n == 0;
}

static void it_next(Iter *it, const HostTensor *t)
{
    for (int j = t->rank - 1; j >= 0; j--) {
        it->off += t->stride[j];
        if (++it->idx[j] < t->shape[j])
            return;
        it->off -= it->idx[j] * t->stride[j];
        it->idx[j] = 0;
    }
    it->done = 1;
}

int check_compare(const HostTensor *want, const void *got, double rtol, double atol_rel,
                  double atol_abs, CheckOutput *o)
{
    const uint8_t *g8 = got;
    int eb = interp_elem_bytes(want->dtype);
    uint8_t poison = check_poison_byte(want->dtype);
    uint8_t pbytes[8];
    memset(pbytes, poison, sizeof pbytes);
    double poison_value = interp_decode(want->dtype, pbytes);

    o->dtype = want->dtype;
    o->rank = want->rank;
    memcpy(o->shape, want->shape, sizeof o->shape);
    o->n_compared = o->n_bad = o->n_nan = o->n_unwritten = o->n_skipped = 0;
    o->max_abs_err = o->max_rel_err = o->mean_abs_err = o->max_ratio = o->want_max_abs = 0;
    o->bad = CHECK_BAD_NONE;
    o->worst_got = o->worst_want = o->first_bad_got = o->first_bad_want = 0;
    memset(o->worst, 0, sizeof o->worst);
    memset(o->first_bad, 0, sizeof o->first_bad);

    double m = 0;
    Iter it;
    for (it_begin(&it, want); !it.done; it_next(&it, want)) {
        if (!want->written || want->written[it.off]) {
            double w = fabs(want->data[it.off]);
            if (isfinite(w) && w > m)
                m = w;
        }
    }
    o->want_max_abs = m;
    o->rtol = rtol;
    o->atol = fmax(atol_rel * m, atol_abs);

    double sum = 0;
    int64_t nfinite = 0;
    for (it_begin(&it, want); !it.done; it_next(&it, want)) {
        int64_t off = it.off;
        const int64_t *idx = it.idx;
        if (want->written && !want->written[off]) {
            o->n_skipped++;
        } else {
            const uint8_t *p = g8 + off * eb;
            double w = want->data[off], gv = interp_decode(want->dtype, p);
            CheckBad b = CHECK_BAD_NONE;
            double err = 0, ratio = 0;
            o->n_compared++;
            if (is_poison(p, eb, poison) && !(w == poison_value)) {
                b = CHECK_BAD_UNWRITTEN;
                o->n_unwritten++;
            } else if (isnan(gv) || isnan(w)) {
                b = CHECK_BAD_NAN;
                o->n_nan++;
            } else if (isinf(gv) || isinf(w)) {
                if (gv != w)
                    b = CHECK_BAD_INF;
            } else {
                err = fabs(gv - w);
                double bound = rtol * fabs(w) + o->atol;
                ratio = err == 0 ? 0 : bound > 0 ? err / bound : 1 + err;
                if (err > bound)
                    b = CHECK_BAD_VALUE;
                sum += err;
                nfinite++;
                if (err > o->max_abs_err)
                    o->max_abs_err = err;
                double rel = err / (fabs(w) + o->atol + 1e-300);
                if (rel > o->max_rel_err)
                    o->max_rel_err = rel;
            }
            if (ratio > o->max_ratio || o->n_compared == 1) {
                if (ratio > o->max_ratio)
                    o->max_ratio = ratio;
                memcpy(o->worst, idx, sizeof o->worst);
                o->worst_got = gv;
                o->worst_want = w;
            }
            if (b != CHECK_BAD_NONE) {
                if (o->n_bad == 0) {
                    o->bad = b;
                    memcpy(o->first_bad, idx, sizeof o->first_bad);
                    o->first_bad_got = gv;
                    o->first_bad_want = w;
                }
                o->n_bad++;
            }
        }
    }
    o->mean_abs_err = nfinite ? sum / (double)nfinite : 0;
    o->ok = o->n_bad == 0;
    return o->ok;
}

/* ---- one shape --------------------------------------------------------------- */

const char *check_status_name(CheckStatus s)
{
    static const char *const names[] = {"pass", "fail", "error", "device_error"};
    return (unsigned)s < 4 ? names[s] : "?";
}

const char *check_bad_name(CheckBad b)
{
    static const char *const names[] = {"none", "value", "nan", "unwritten", "inf"};
    return (unsigned)b < 5 ? names[b] : "?";
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t shape_seed(const Kernel *k, const ShapeEnv *env, uint64_t seed, uint32_t arg)
{
    uint64_t h = seed ^ (UINT64_C(0x100000001B3) * (arg + 1));
    for (uint32_t i = 0; i < k->ndims; i++) {
        int64_t v = 0;
        shape_env_get(env, k->nodes[k->dims[i]].name, &v);
        h = (h ^ (uint64_t)v) * UINT64_C(0x100000001B3);
    }
    return check_rand(&h);
}

static int fmt_index(char *buf, size_t len, int rank, const int64_t *idx)
{
    int w = snprintf(buf, len, "[");
    for (int j = 0; j < rank; j++)
        w += snprintf(buf + w, len - (size_t)w, "%s%lld", j ? ", " : "", (long long)idx[j]);
    return w + snprintf(buf + w, len - (size_t)w, "]");
}

static int args_match(CakeCtx *ctx, const Kernel *k, const Kernel *rk)
{
    if (k->nargs != rk->nargs) {
        Diag *d = diag_report(ctx, E0956, k->span,
                              "kernel '%s' has %u arguments but the reference kernel has %u",
                              ir_symstr(ctx, k->name), k->nargs, rk->nargs);
        diag_note(ctx, d, rk->span, "the reference kernel");
        return 0;
    }
    for (uint32_t i = 0; i < k->nargs; i++) {
        const Node *a = &k->nodes[k->args[i]], *b = &rk->nodes[rk->args[i]];
        const Node *ta = a->a ? &k->nodes[a->a] : NULL, *tb = b->a ? &rk->nodes[b->a] : NULL;
        int ra = ta && ta->op == OP_GTYPE ? (int)(ta->sub ? ta->sub : ta->n) : 0;
        int rb = tb && tb->op == OP_GTYPE ? (int)(tb->sub ? tb->sub : tb->n) : 0;
        const char *why = NULL;
        if (a->name != b->name)
            why = "its name differs";
        else if (!ta || !tb || ta->dtype != tb->dtype)
            why = "its dtype differs";
        else if (ra != rb || (ta->op == OP_GTYPE) != (tb->op == OP_GTYPE))
            why = "its rank differs";
        if (why) {
            Diag *d = diag_report(ctx, E0956, a->span,
                                  "argument %u ('%s') does not match the reference kernel's: %s",
                                  i + 1, ir_symstr(ctx, a->name), why);
            diag_note(ctx, d, b->span, "the reference kernel's argument '%s'",
                      ir_symstr(ctx, b->name));
            return 0;
        }
    }
    return 1;
}

static void report_output(CakeCtx *ctx, const Kernel *k, const CheckReport *rep,
                          const CheckOutput *o)
{
    char at[96], msg[256];
    fmt_index(at, sizeof at, o->rank, o->first_bad);
    Span sp = k->nodes[k->args[o->arg]].span;
    Diag *d;
    switch (o->bad) {
    case CHECK_BAD_UNWRITTEN:
        d = diag_report(ctx, E0958, sp,
                        "output '%s' has %lld element%s never written, first at %s (shape %s)",
                        o->name, (long long)o->n_unwritten, o->n_unwritten == 1 ? "" : "s", at,
                        rep->shape);
        diag_help(ctx, d, "every element the reference writes must be written by the kernel: "
                          "round the grid up (cdiv) and mask the ragged edge");
        break;
    case CHECK_BAD_NAN:
        d = diag_report(ctx, E0959, sp, "output '%s' holds NaN at %s (shape %s): got %g, want %g",
                        o->name, at, rep->shape, o->first_bad_got, o->first_bad_want);
        break;
    default:
        snprintf(msg, sizeof msg, "got %.9g, want %.9g", o->first_bad_got, o->first_bad_want);
        d = diag_report(ctx, E0957, sp,
                        "output '%s' differs from the reference at %s (shape %s): %s; "
                        "%lld of %lld elements bad, max abs error %.3g",
                        o->name, at, rep->shape, msg, (long long)o->n_bad,
                        (long long)o->n_compared, o->max_abs_err);
        diag_note(ctx, d, IR_NOSPAN, "bound: |got - want| <= %.3g * |want| + %.3g (%s)", o->rtol,
                  o->atol, ir_dtypes[o->dtype].spelling);
        break;
    }
    diag_note(ctx, d, IR_NOSPAN, "seed %#llx; rerun with the same seed and shape to reproduce",
              (unsigned long long)rep->seed);
}

typedef struct {
    HostTensor *t;
    CheckBuffer *b;
    uint32_t n;
} Bufs;

/* A `workspace` argument must come back zero (docs/tir.md 4.2): the next
 * launch relies on it. 1 (and the report filled, E0963) when it did not. */
static int workspace_dirty(CakeCtx *ctx, const Kernel *k, const Bufs *B, const CheckOptions *opt,
                           CheckReport *out)
{
    for (uint32_t i = 0; i < B->n; i++) {
        const CheckBuffer *b = &B->b[i];
        if (!b->workspace)
            continue;
        const uint8_t *h = b->host;
        size_t at = 0;
        while (at < b->bytes && !h[at])
            at++;
        if (at == b->bytes)
            continue;
        long long elem = (long long)(at / (size_t)interp_elem_bytes(b->dtype));
        snprintf(out->message, sizeof out->message,
                 "FAIL at %s: workspace '%s' is not zero after the run (first at element %lld)",
                 out->shape, b->name, elem);
        if (!opt->no_diags) {
            Diag *d = diag_report(ctx, E0963, k->nodes[k->args[b->arg]].span,
                                  "workspace '%s' is not zero after the run, first at element %lld "
                                  "(shape %s)", b->name, elem, out->shape);
            diag_help(ctx, d, "the kernel that accumulates into a workspace resets what it used: "
                              "the last arriver reads it with `atomic.exch(W[i], 0.0)` and stores 0 "
                              "to its counter");
        }
        return 1;
    }
    return 0;
}

static void free_bufs(Bufs *B)
{
    for (uint32_t i = 0; i < B->n; i++) {
        free(B->t[i].data);
        free(B->t[i].written);
        free(B->b[i].host);
    }
    free(B->t);
    free(B->b);
}

static CheckStatus finish(CheckReport *out, CheckStatus st)
{
    out->status = st;
    out->ok = st == CHECK_PASS;
    return st;
}

static double scalar_value(const CheckOptions *opt, const ShapeEnv *env, const Node *a, DType dt,
                           uint64_t seed)
{
    for (uint32_t i = 0; i < opt->nscalars; i++)
        if (opt->scalars[i].name == a->name)
            return interp_round(dt, opt->scalars[i].value);
    int64_t v;
    if (shape_env_get(env, a->name, &v))
        return interp_round(dt, (double)v);
    return check_random_scalar(dt, seed);
}

/* the value range of input i: k's `values`, else the reference kernel's */
static int input_range(CakeCtx *ctx, const Kernel *k, const Kernel *rk, uint32_t i,
                       const ShapeEnv *env, int64_t *lo, int64_t *hi)
{
    int vr = check_arg_values(ctx, k, i, env, lo, hi);
    if (vr < 0 && rk != k)
        vr = check_arg_values(ctx, rk, i, env, lo, hi);
    return vr;
}

/* a sampled check still holds every argument on the host in its device
 * encoding (and in/out arguments in fp64): refuse beyond max_host_bytes */
static int sample_fits(CakeCtx *ctx, const Kernel *k, const Bufs *B, const char *shape,
                       const CheckOptions *opt)
{
    double bytes = 0, limit = opt->max_host_bytes > 0 ? opt->max_host_bytes : 0x1p36;
    for (uint32_t i = 0; i < B->n; i++)
        bytes += (double)B->t[i].span * interp_elem_bytes(B->t[i].dtype);
    if (bytes <= limit)
        return 1;
    diag_report(ctx, E0960, k->span,
                "shape %s needs %.0f bytes of host buffers even sampled (limit %.0f)", shape,
                bytes, limit);
    return 0;
}

/* CheckOptions.dump_dir: the written tensors of one device run, raw */
static void dump_outputs(const char *dir, const char *shape, const CheckBuffer *b, uint32_t n)
{
    char name[512], sh[256];
    size_t j = 0;
    for (const char *c = shape; *c && j + 1 < sizeof sh; c++)
        if (*c != ' ')
            sh[j++] = *c == ',' ? '_' : *c;
    sh[j] = 0;
    char path[512];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++) /* mkdir -p */
        if (*p == '/') {
            *p = 0;
            mkdir(path, 0777);
            *p = '/';
        }
    mkdir(path, 0777);
    for (uint32_t i = 0; i < n; i++) {
        if (!(b[i].role & INTERP_WRITTEN) || !b[i].is_tensor)
            continue;
        snprintf(name, sizeof name, "%s/%s.%s.%s.bin", dir, b[i].name, sh, ir_dtypes[b[i].dtype].spelling);
        FILE *f = fopen(name, "wb");
        if (!f)
            continue;
        fwrite(b[i].host, 1, b[i].bytes, f);
        fclose(f);
    }
}

CheckStatus check_run_ex(CakeCtx *ctx, Kernel *k, const ShapeEnv *env_in, CheckLaunchFn launch,
                         void *user, const CheckOptions *opt, CheckReport *out)
{
    CheckOptions dflt;
    memset(&dflt, 0, sizeof dflt);
    if (!opt)
        opt = &dflt;
    memset(out, 0, sizeof *out);
    out->first_bad_output = -1;
    out->seed = opt->seed ? opt->seed : CHECK_DEFAULT_SEED;
    const Kernel *rk = opt->reference ? opt->reference : k;

    ShapeEnv env = *env_in;
    int bound = shape_env_bind_params(ctx, k, &env);
    shape_env_format(ctx, k, &env, out->shape, sizeof out->shape);   /* not a reference's own params */
    if (!bound || (rk != k && !shape_env_bind_params(ctx, rk, &env)) ||
        !shape_env_complete(ctx, k, &env, 1)) {
        snprintf(out->message, sizeof out->message, "the shape is incomplete");
        return finish(out, CHECK_ERROR);
    }
    out->env = env;
    if (!opt->skip_assumes && (!shape_env_assumes_hold(ctx, k, &env, 1, NULL) ||
                               (rk != k && !shape_env_assumes_hold(ctx, rk, &env, 1, NULL)))) {
        snprintf(out->message, sizeof out->message, "shape %s violates an assume", out->shape);
        return finish(out, CHECK_ERROR);
    }
    if (rk != k && !args_match(ctx, k, rk)) {
        snprintf(out->message, sizeof out->message, "the reference kernel's arguments differ");
        return finish(out, CHECK_ERROR);
    }
    Interp *I = interp_new(ctx, rk);
    if (!I) {
        snprintf(out->message, sizeof out->message, "the reference cannot be evaluated");
        return finish(out, CHECK_ERROR);
    }
    if (opt->max_steps)
        interp_set_max_steps(I, opt->max_steps);

    Bufs B = {calloc(k->nargs + 1, sizeof *B.t), calloc(k->nargs + 1, sizeof *B.b), k->nargs};
    CheckStatus st = CHECK_ERROR;
    double total = 0, max_elems = opt->max_elems > 0 ? opt->max_elems : 0x1p27;
    for (uint32_t i = 0; i < k->nargs; i++) {
        HostTensor rt;
        memset(&rt, 0, sizeof rt);
        if (!interp_arg_tensor(ctx, k, i, &env, &B.t[i]) ||
            (rk != k && !interp_arg_tensor(ctx, rk, i, &env, &rt)))
            goto done;
        if (rk != k && (rt.rank != B.t[i].rank ||
                        memcmp(rt.shape, B.t[i].shape, (size_t)rt.rank * sizeof *rt.shape) != 0)) {
            diag_report(ctx, E0956, k->nodes[k->args[i]].span,
                        "argument '%s' has another shape in the reference kernel at %s",
                        ir_symstr(ctx, k->nodes[k->args[i]].name), out->shape);
            snprintf(out->message, sizeof out->message, "the reference kernel's arguments differ");
            goto done;
        }
        total += (double)B.t[i].span;
    }
    /* sampled when the arguments or the reference's work are too large to evaluate in full */
    InterpCost work;
    double full_flops = opt->full_flops > 0 ? opt->full_flops : CHECK_FULL_FLOPS;
    int heavy = interp_cost(I, &env, &work) && work.flops > full_flops;
    int sampled = opt->sample > 0 || (opt->sample == 0 && (total > max_elems || heavy));
    if (heavy && opt->sample < 0 && total <= max_elems) {
        diag_report(ctx, E0960, k->span,
                    "shape %s needs about %.3g flops of reference work (limit %.3g)",
                    out->shape, work.flops, full_flops);
        snprintf(out->message, sizeof out->message, "shape %s is too large to check", out->shape);
        goto done;
    }
    if (total > max_elems && opt->sample < 0) {
        diag_report(ctx, E0960, k->span,
                    "shape %s needs %.0f host elements for the reference (limit %.0f)",
                    out->shape, total, max_elems);
        snprintf(out->message, sizeof out->message, "shape %s is too large to check", out->shape);
        goto done;
    }
    if (sampled && !sample_fits(ctx, k, &B, out->shape, opt)) {
        snprintf(out->message, sizeof out->message, "shape %s is too large to check", out->shape);
        goto done;
    }
    if (sampled && !check_sample_choose(ctx, k, I, &env, opt,
                                        shape_seed(k, &env, out->seed, 0xFFFFu), &out->sample)) {
        snprintf(out->message, sizeof out->message,
                 "shape %s is too large to check and the reference cannot be sampled", out->shape);
        goto done;
    }
    for (uint32_t i = 0; i < k->nargs; i++) {
        HostTensor *t = &B.t[i];
        CheckBuffer *b = &B.b[i];
        const Node *a = &k->nodes[k->args[i]];
        int eb = interp_elem_bytes(t->dtype);
        b->arg = i;
        b->name = ir_symstr(ctx, a->name);
        b->dtype = t->dtype;
        b->is_tensor = a->a && k->nodes[a->a].op == OP_GTYPE;
        b->role = (uint8_t)interp_arg_role(I, i);
        b->workspace = (uint8_t)(b->is_tensor && !b->role && ir_arg_workspace(k, i));
        b->rank = (uint8_t)t->rank;
        memcpy(b->shape, t->shape, sizeof b->shape);
        memcpy(b->stride, t->stride, sizeof b->stride);
        uint64_t seed = shape_seed(k, &env, out->seed, i);
        size_t span = (size_t)(t->span ? t->span : 1);
        b->bytes = (size_t)eb * (b->is_tensor ? (size_t)t->span : 1);
        b->host = malloc(b->bytes ? b->bytes : 1);
        int offsets = ir_arg_offsets(k, i) || (rk != k && ir_arg_offsets(rk, i));
        if (sampled && b->is_tensor && !(b->role & INTERP_WRITTEN) && !b->workspace &&
            !offsets) {
            /* an input of a sampled check: the reference decodes it from b->host (a
               workspace is no input: it comes zero, below, sampled or not) */
            int64_t lo, hi;
            int vr = b->host ? input_range(ctx, k, rk, i, &env, &lo, &hi) : 1;
            if (vr == 0) {
                snprintf(out->message, sizeof out->message,
                         "argument '%s' has an empty value range at %s", b->name, out->shape);
                goto done;
            }
            if (b->host)
                check_fill_encoded(b->host, t->span, t->dtype, seed, opt, vr > 0, lo, hi);
            t->enc = b->host;
            if (!b->host)
                goto oom;
            continue;
        }
        /* a sampled output: zero pages until the reference writes its rows */
        t->data = (sampled && b->is_tensor && b->role == INTERP_WRITTEN) || b->workspace
                      ? calloc(span, sizeof *t->data) : malloc(span * sizeof *t->data);
        if (!t->data || !b->host) {
oom:
            snprintf(out->message, sizeof out->message, "out of host memory at shape %s",
                     out->shape);
            goto done;
        }
        if (!b->is_tensor) {
            t->data[0] = scalar_value(opt, &env, a, t->dtype, seed);
            interp_encode(t->dtype, t->data[0], b->host);
        } else if (b->workspace) { /* zero in; checked zero after the run */
            memset(b->host, 0, b->bytes);
        } else if (b->role == INTERP_WRITTEN) {
            t->written = calloc(span, 1);
            for (size_t j = 0; !sampled && j < span; j++)
                t->data[j] = NAN;
            memset(b->host, check_poison_byte(t->dtype), b->bytes);
        } else {
            int64_t lo, hi;
            int vr = input_range(ctx, k, rk, i, &env, &lo, &hi);
            if (sampled && (b->role & INTERP_WRITTEN))
                t->written = calloc(span, 1); /* in/out: compare the sampled rows only */
            if (vr == 0) {
                snprintf(out->message, sizeof out->message,
                         "argument '%s' has an empty value range at %s", b->name, out->shape);
                goto done;
            }
            if (vr > 0 && offsets)
                check_fill_offsets(t, seed, lo, hi);
            else if (vr > 0)
                check_fill_range(t, seed, lo, hi);
            else
                check_fill_random(t, seed, opt);
            uint8_t *h = b->host;
            for (int64_t j = 0; j < t->span; j++)
                interp_encode(t->dtype, t->data[j], h + j * eb);
        }
    }

    double t0 = now();
    if (!interp_run(I, &env, B.t, &out->cost)) {
        snprintf(out->message, sizeof out->message, "the reference failed at shape %s", out->shape);
        goto done;
    }
    out->ref_seconds = now() - t0;
    if (!launch) {
        snprintf(out->message, sizeof out->message, "reference only at %s", out->shape);
        st = CHECK_PASS;
        goto done;
    }

    int64_t dims[64];
    uint32_t nd = k->ndims < 64 ? k->ndims : 64;
    for (uint32_t i = 0; i < nd; i++)
        shape_env_get(&env, k->nodes[k->dims[i]].name, &dims[i]);
    char err[400] = "";
    CheckLaunch l = {k, &env, B.b, k->nargs, dims, nd, err, sizeof err};
    t0 = now();
    int rc = launch(user, ctx, &l);
    out->device_seconds = now() - t0;
    if (rc) {
        snprintf(out->message, sizeof out->message, "device run failed at %s: %s", out->shape,
                 err[0] ? err : "(no message)");
        if (!opt->no_diags)
            diag_report(ctx, E0962, k->span, "%s", out->message);
        st = CHECK_DEVICE_ERROR;
        goto done;
    }

    if (opt->dump_dir)
        dump_outputs(opt->dump_dir, out->shape, B.b, k->nargs);
    st = CHECK_PASS;
    if (workspace_dirty(ctx, k, &B, opt, out)) {
        st = CHECK_FAIL;
        goto done;
    }
    double sum_err = 0, ncmp = 0;
    for (uint32_t i = 0; i < k->nargs; i++) {
        if (!(B.b[i].role & INTERP_WRITTEN) || !B.b[i].is_tensor)
            continue;
        if (out->noutputs == CHECK_MAX_OUTPUTS)
            break;
        CheckOutput *o = &out->out[out->noutputs];
        o->arg = i;
        o->name = B.b[i].name;
        double rtol, atol, scale = opt->tol_scale > 0 ? opt->tol_scale : 1;
        double declared = ir_arg_tolerance(rk, i); /* the reference's own: a task's, never
                                                      the checked kernel's */
        if (declared > 0)
            scale *= declared;
        check_tolerance(B.t[i].dtype, out->cost.sum_len, scale, &rtol, &atol);
        if ((B.b[i].role & INTERP_READ) && !sampled) { /* in/out: compare every element */
            free(B.t[i].written);
            B.t[i].written = NULL;
        }
        /* the GPU's sin/cos are approximate: 2^-20.9 absolute in [-pi, pi], which near a
           zero of the result is far more than the f32 bound relative to the output */
        double floor = out->cost.trig && ir_dtypes[B.t[i].dtype].kind == 'f'
                           ? 0x1p-20 * scale : 0;
        check_compare(&B.t[i], B.b[i].host, rtol, atol, floor, o);
        out->n_bad += o->n_bad;
        out->unwritten |= o->n_unwritten > 0;
        out->has_nan |= o->n_nan > 0;
        if (o->max_abs_err > out->max_abs_err)
            out->max_abs_err = o->max_abs_err;
        if (o->max_rel_err > out->max_rel_err)
            out->max_rel_err = o->max_rel_err;
        if (o->max_ratio > out->max_ratio)
            out->max_ratio = o->max_ratio;
        sum_err += o->mean_abs_err * (double)(o->n_compared - o->n_bad);
        ncmp += (double)(o->n_compared - o->n_bad);
        if (!o->ok) {
            st = CHECK_FAIL;
            if (out->first_bad_output < 0)
                out->first_bad_output = (int)out->noutputs;
        }
        out->noutputs++;
    }
    out->mean_abs_err = ncmp > 0 ? sum_err / ncmp : 0;
    if (st == CHECK_FAIL) {
        const CheckOutput *o = &out->out[out->first_bad_output];
        char at[96];
        fmt_index(at, sizeof at, o->rank, o->first_bad);
        snprintf(out->message, sizeof out->message,
                 "FAIL at %s: output '%s' %s at %s (got %.6g, want %.6g); %lld bad elements",
                 out->shape, o->name, check_bad_name(o->bad), at, o->first_bad_got,
                 o->first_bad_want, (long long)out->n_bad);
        if (!opt->no_diags)
            for (uint32_t i = 0; i < out->noutputs; i++)
                if (!out->out[i].ok)
                    report_output(ctx, k, out, &out->out[i]);
    } else {
        snprintf(out->message, sizeof out->message,
                 "pass at %s: max abs error %.3g, %.3g of the bound", out->shape,
                 out->max_abs_err, out->max_ratio);
    }
    if (out->sample.on) {
        size_t w = strlen(out->message);
        snprintf(out->message + w, sizeof out->message - w, " (sampled %lld of %lld %s, seed %#llx)",
                 (long long)out->sample.count, (long long)out->sample.of,
                 out->sample.tiles ? "tiles" : "rows", (unsigned long long)out->sample.seed);
    }
done:
    free_bufs(&B);
    interp_free(I);
    return finish(out, st);
}

CheckStatus check_run(CakeCtx *ctx, Kernel *k, const ShapeEnv *env, CheckLaunchFn launch,
                      void *user, CheckReport *out)
{
    return check_run_ex(ctx, k, env, launch, user, NULL, out);
}

static int reads_sm_count(const Kernel *k, NodeId e, int depth)
{
    if (!e || e >= k->nnodes || depth > 64)
        return 0;
    const Node *n = &k->nodes[e];
    if (n->op == OP_SPECIAL && n->sub == SR_SM_COUNT)
        return 1;
    if (reads_sm_count(k, n->a, depth + 1) || reads_sm_count(k, n->b, depth + 1) ||
        reads_sm_count(k, n->c, depth + 1))
        return 1;
    if (ir_ops[n->op].cls == OC_BUILTIN)
        for (uint32_t i = 0; i < n->n; i++)
            if (reads_sm_count(k, ir_list_at(k, n, i), depth + 1))
                return 1;
    return 0;
}

/* 1 when k's grid clause reads `sm.count` */
static int grid_reads_sm_count(const Kernel *k)
{
    for (uint32_t i = 0; i < k->ngrid; i++)
        if (reads_sm_count(k, k->grid[i], 0))
            return 1;
    return 0;
}

uint32_t check_suite_shapes(CakeCtx *ctx, Kernel *k, const ShapeEnv *base,
                            const CheckOptions *opt, ShapeEnv *shapes, uint32_t max)
{
    const Kernel *rk = opt && opt->reference ? opt->reference : k;
    Interp *I = interp_new(ctx, rk);
    if (!I)
        return 0;
    if (max > CHECK_SUITE_MAX)
        max = CHECK_SUITE_MAX;
    PickOptions po = {0, 0, 0};
    po.max_shapes = max;
    uint32_t n = shapes_pick(ctx, k, I, base, &po, shapes, max);
    interp_free(I);
    if (!n) {
        Diag *d = diag_report(ctx, E0955, k->span,
                              "no test shape of kernel '%s' satisfies its assumes within the "
                              "check's size limits",
                              ir_symstr(ctx, k->name));
        for (uint32_t i = 0; i < k->nassumes; i++)
            diag_note(ctx, d, k->nodes[k->assumes[i]].span, "assume here");
        diag_help(ctx, d, "give a shape: --shape NAME=VALUE,...");
        return 0;
    }
    if (grid_reads_sm_count(k) && !shape_env_sm_count(ctx, base)) {
        static const int64_t smc[] = {2, 0, 3}; /* 0: the device's */
        for (uint32_t i = 0; i < n; i++)
            if (smc[i % 3])
                shape_env_set(&shapes[i], ir_intern_cstr(ctx, SHAPE_SM_COUNT), smc[i % 3]);
    }
    return n;
}

uint32_t check_suite(CakeCtx *ctx, Kernel *k, const ShapeEnv *base, const CheckOptions *opt,
                     CheckLaunchFn launch, void *user, CheckReport *reps, uint32_t max)
{
    ShapeEnv shapes[CHECK_SUITE_MAX];
    uint32_t n = check_suite_shapes(ctx, k, base, opt, shapes, max);
    for (uint32_t i = 0; i < n; i++) {
        CheckStatus st = check_run_ex(ctx, k, &shapes[i], launch, user, opt, &reps[i]);
        if (st == CHECK_ERROR || st == CHECK_DEVICE_ERROR)
            return i + 1;
    }
    return n;
}
