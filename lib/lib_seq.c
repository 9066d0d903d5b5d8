/* lib_seq.c — variants of several launches (docs/library.md, "Variants of
 * several launches"): a partial kernel and a combine kernel, say, run in
 * order on the op's arguments and on workspace tensors the library
 * allocates (one buffer per sequence variant, kept for the next call and
 * grown when a shape needs more). Each launch is a hidden variant of the op
 * (part_of), prepared like any other; an argument of a launch is the op's
 * argument of the same name or a workspace tensor, whose size is its type in
 * the launch that declares it, at the shape and the launch's bindings.
 *
 * A sequence checks against the op's reference (the reference block of
 * lib_op_reference's kernel, the launches' own assumes having held at
 * select) and times as one sample of all its launches (rt_time). */
#include <stdlib.h>
#include <string.h>
#include "lib_priv.h"
#include "cake_priv.h"
#include "check.h"

#define WS_ALIGN 256

typedef struct {
    uint32_t n;
    LibVariant *step[LIB_MAX_STEPS];
    ShapeEnv env[LIB_MAX_STEPS];
    int16_t map[LIB_MAX_STEPS][64];   /* per argument of the launch: the op's argument, or -1 - ws */
    size_t ws_off[LIB_MAX_WS], ws_total;
} Seq;

const LibVariant *lib_op_reference(const LibOp *op)
{
    for (uint32_t i = 0; op->reference && i < op->pub.nvariants; i++)
        if (!strcmp(op->v[i].pub.name, op->reference) && !op->v[i].nsteps && op->v[i].part_of < 0)
            return &op->v[i];
    for (uint32_t i = 0; i < op->pub.nvariants; i++)
        if (!op->v[i].nsteps && op->v[i].part_of < 0 && op->v[i].k)
            return &op->v[i];
    return NULL;
}

static void step_env(const LibOp *op, const LibVariant *v, const int64_t *dimv, ShapeEnv *env)
{
    shape_env_clear(env);
    for (uint32_t i = 0; i < v->npb; i++)
        shape_env_set(env, v->pb[i].name, v->pb[i].value);
    for (uint32_t i = 0; i < op->pub.ndims; i++)
        shape_env_set(env, op->dsym[i], dimv[i]);
}

/* the launches of sequence v at dimv prepared on dev, their arguments mapped, the
   workspace laid out: 0, or 1/3 (diagnostics) */
static int seq_setup(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, const LibOp *op, LibVariant *v,
                     const int64_t *dimv, Seq *q)
{
    memset(q, 0, sizeof *q);
    int found[LIB_MAX_WS] = {0};
    for (uint32_t s = 0; s < v->nsteps; s++) {
        LibVariant *st = &lib->ops[op - lib->ops].v[v->steps[s]];
        int rc = dev ? lib_variant_prepare(ctx, lib, dev, st) : 0;
        if (rc)
            return rc;
        q->step[q->n] = st;
        step_env(op, st, dimv, &q->env[q->n]);
        const Kernel *k = st->k;
        for (uint32_t i = 0; i < k->nargs && i < 64; i++) {
            const char *name = ir_symstr(ctx, k->nodes[k->args[i]].name);
            int16_t m = INT16_MIN;
            for (uint32_t a = 0; a < op->pub.nargs; a++)
                if (!strcmp(op->args[a].name, name))
                    m = (int16_t)a;
            for (uint32_t w = 0; m == INT16_MIN && w < v->nws; w++) {
                if (strcmp(v->ws[w], name))
                    continue;
                m = (int16_t)(-1 - (int)w);
                if (found[w]++)
                    break;
                DType dt;
                int rank;
                int64_t shape[IR_MAX_RANK], stride[IR_MAX_RANK], span = 1;
                if (!shape_arg_geometry(ctx, k, i, &q->env[q->n], &dt, &rank, shape, stride)) {
                    diag_report(ctx, E1203, IR_NOSPAN, "variant `%s`: workspace `%s` has no size at this "
                                "shape", v->pub.name, name);
                    return 1;
                }
                for (int d = 0; d < rank; d++)
                    span += (shape[d] - 1) * stride[d];
                q->ws_off[w] = q->ws_total;
                q->ws_total += ((size_t)span * (size_t)interp_elem_bytes(dt) + WS_ALIGN - 1) / WS_ALIGN * WS_ALIGN;
            }
            IR_ASSERT(ctx, m != INT16_MIN);   /* lib_manifest.c checked the names */
            q->map[q->n][i] = m;
        }
        q->n++;
    }
    return 0;
}

/* v's workspace of at least `bytes` on dev: 0, or 3 */
static int workspace(CakeCtx *ctx, RtDevice *dev, LibVariant *v, size_t bytes)
{
    if (v->ws_ptr && v->ck_dev == dev && v->ws_bytes >= bytes)
        return 0;
    if (v->ws_ptr && v->ck_dev && rt_health(v->ck_dev) == RT_OK)
        rt_free(v->ck_dev, v->ws_ptr);
    v->ws_ptr = 0;
    v->ws_bytes = 0;
    if (rt_alloc(dev, bytes ? bytes : WS_ALIGN, &v->ws_ptr) != RT_OK) {
        diag_report(ctx, E0972, IR_NOSPAN, "variant `%s`: no %zu bytes of workspace: %s", v->pub.name,
                    bytes, rt_error(dev));
        v->ws_ptr = 0;
        return 3;
    }
    v->ws_bytes = bytes ? bytes : WS_ALIGN;
    v->ck_dev = dev;
    /* zero-filled once: a kernel's `workspace` arguments (docs/tir.md 4.2) come zero and
       are left zero by every launch, so the buffer stays zero from call to call */
    if (rt_memset_d8(dev, v->ws_ptr, 0, v->ws_bytes) != RT_OK) {
        diag_report(ctx, E0972, IR_NOSPAN, "variant `%s`: zeroing its workspace: %s", v->pub.name,
                    rt_error(dev));
        return 3;
    }
    return 0;
}

/* launch s of q's tensors and scalars from the op's arguments (optr: per op
   argument, its buffer; oscal: per op argument, its value) and the workspace at ws */
static void step_args(const Seq *q, uint32_t s, const RtPtr *optr, const void *const *oscal, RtPtr ws,
                      RtPtr *tensors, const void **scalars)
{
    const Kernel *k = q->step[s]->k;
    uint32_t nt = 0, ns = 0;
    for (uint32_t i = 0; i < k->nargs && i < 64; i++) {
        int m = q->map[s][i];
        int tensor = k->nodes[k->nodes[k->args[i]].a].op == OP_GTYPE;
        if (m < 0)
            tensors[nt++] = ws + q->ws_off[-1 - m];
        else if (tensor)
            tensors[nt++] = optr[m];
        else
            scalars[ns++] = oscal[m];
    }
}

/* launch s of q prepared on the op's arguments and the workspace at ws */
static RtStatus step_prepare(CakeCtx *ctx, const Seq *q, uint32_t s, const RtPtr *optr,
                             const void *const *oscal, RtPtr ws, CakePrepared *p)
{
    RtPtr tensors[64];
    const void *scalars[64];
    step_args(q, s, optr, oscal, ws, tensors, scalars);
    return lib_prepare(ctx, q->step[s]->ck, &q->env[s], tensors, scalars, p);
}

/* per op argument: its buffer (tensors, in order) or its value (scalars, in order) */
static void by_op_arg(const LibOp *op, const RtPtr *tensors, const void *const *scalars, RtPtr *optr,
                      const void **oscal)
{
    uint32_t t = 0, s = 0;
    for (uint32_t a = 0; a < op->pub.nargs; a++) {
        optr[a] = 0;
        oscal[a] = NULL;
        if (op->args[a].kind == CAKE_ARG_TENSOR)
            optr[a] = tensors[t++];
        else
            oscal[a] = scalars[s++];
    }
}

/* every launch of q queued on stream (NULL: the runtime's), or the first
   failure; r's steps made at the first call, bound at the next */
static RtStatus run_all(CakeCtx *ctx, RtDevice *dev, const Seq *q, LibRec *r, int made,
                        const RtPtr *optr, const void *const *oscal, RtPtr ws, void *stream)
{
    RtStatus st = RT_OK;
    for (uint32_t s = 0; s < q->n && st == RT_OK; s++) {
        RtPtr tensors[64];
        const void *scalars[64];
        step_args(q, s, optr, oscal, ws, tensors, scalars);
        LibPrep *kp = lib_rec_step(r, s);
        st = made ? lib_prep_bind(ctx, kp, tensors, scalars)
                  : lib_prep_make(ctx, q->step[s]->ck, &q->env[s], tensors, scalars, kp);
        if (st == RT_OK) {
            kp->p.rl.stream = stream;
            st = rt_launch(dev, &kp->p.rl);
        }
    }
    return st;
}

/* every launch of q prepared, queued and freed (the check's runs) */
static RtStatus run_fresh(CakeCtx *ctx, RtDevice *dev, const Seq *q, const RtPtr *optr,
                          const void *const *oscal, RtPtr ws, void *stream)
{
    RtStatus st = RT_OK;
    for (uint32_t s = 0; s < q->n && st == RT_OK; s++) {
        CakePrepared p;
        st = step_prepare(ctx, q, s, optr, oscal, ws, &p);
        if (st == RT_OK) {
            p.rl.stream = stream;
            st = rt_launch(dev, &p.rl);
        }
        cake_prepared_free(&p);
    }
    return st;
}

/* whether r's launches are of the kernels v's steps have on dev now */
static int rec_current(LibRec *r, const Seq *q, RtDevice *dev)
{
    for (uint32_t s = 0; s < q->n; s++)
        if (q->step[s]->ck_dev != dev || !q->step[s]->ck || lib_rec_step(r, s)->ck != q->step[s]->ck ||
            lib_rec_step(r, s)->p.rl.fn != q->step[s]->ck->fn)
            return 0;
    return 1;
}

int lib_seq_launch(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, const CakeLibChoice *ch,
                   const RtPtr *tensors, const void *const *scalars, void *stream)
{
    const LibOp *op = &lib->ops[ch->op];
    LibVariant *v = &lib->ops[ch->op].v[ch->variant];
    LibRec *r = lib_rec_find(v, ch->dimv, op->pub.ndims);
    if (r && !rec_current(r, *lib_rec_aux(r), dev)) {
        lib_rec_drop(r);
        r = NULL;
    }
    int made = r != NULL, rc = 0;
    if (!r) {
        Seq *q = malloc(sizeof *q);
        if (!q)
            ir_bug(ctx, "out of memory for the launches of variant `%s`", v->pub.name);
        rc = seq_setup(ctx, lib, dev, op, v, ch->dimv, q);
        if (rc) {
            free(q);
            return rc;
        }
        r = lib_rec_claim(ctx, v, ch->dimv, op->pub.ndims);
        *lib_rec_aux(r) = q;
    }
    const Seq *q = *lib_rec_aux(r);
    rc = workspace(ctx, dev, v, q->ws_total);
    if (rc) {
        if (!made)
            lib_rec_drop(r);
        return rc;
    }
    RtPtr optr[64];
    const void *oscal[64];
    by_op_arg(op, tensors, scalars, optr, oscal);
    RtStatus st = run_all(ctx, dev, q, r, made, optr, oscal, v->ws_ptr, stream);
    if (!made && st == RT_OK)
        lib_rec_done(r, q->n);
    else if (!made)
        lib_rec_drop(r);
    return st == RT_OK ? 0 : st == RT_INVALID ? 1 : 3;
}

void lib_seq_free(CakeLib *lib)
{
    for (uint32_t i = 0; i < lib->nops; i++)
        for (uint32_t j = 0; j < lib->ops[i].pub.nvariants; j++) {
            LibVariant *v = &lib->ops[i].v[j];
            if (v->ws_ptr && v->ck_dev && rt_health(v->ck_dev) == RT_OK)
                rt_free(v->ck_dev, v->ws_ptr);
            v->ws_ptr = 0;
            v->ws_bytes = 0;
        }
}

/* ---- check ------------------------------------------------------------------------ */

typedef struct {
    CakeLib *lib;
    RtDevice *dev;
    LibVariant *v;
    const LibOp *op;
    Seq *q;
} SeqCheck;

/* the CheckLaunchFn of a sequence: the oracle's buffers are the op's arguments */
static int seq_check_launch(void *user, CakeCtx *ctx, CheckLaunch *l)
{
    SeqCheck *sc = user;
    RtDevice *dev = sc->dev;
    RtPtr optr[64] = {0};
    const void *oscal[64] = {0};
    RtStatus rs = l->nbufs == sc->op->pub.nargs && l->nbufs <= 64 ? RT_OK : RT_INVALID;
    for (uint32_t i = 0; i < l->nbufs && rs == RT_OK; i++) {
        CheckBuffer *b = &l->bufs[i];
        if (!b->is_tensor) {
            oscal[i] = b->host;
            continue;
        }
        rs = rt_alloc(dev, b->bytes ? b->bytes : 16, &optr[i]);
        if (rs == RT_OK && b->bytes)
            rs = rt_copy_h2d(dev, optr[i], b->host, b->bytes);
    }
    if (rs == RT_OK && workspace(ctx, dev, sc->v, sc->q->ws_total))
        rs = RT_FAULT;
    if (rs == RT_OK)
        rs = run_fresh(ctx, dev, sc->q, optr, oscal, sc->v->ws_ptr, NULL);
    if (rs == RT_OK)
        rs = rt_wait(dev);
    for (uint32_t i = 0; i < l->nbufs && rs == RT_OK; i++) {
        CheckBuffer *b = &l->bufs[i];
        if (b->is_tensor && (b->role & INTERP_WRITTEN) && b->bytes)
            rs = rt_copy_d2h(dev, b->host, optr[i], b->bytes);
    }
    if (rs != RT_OK)
        snprintf(l->err, l->errlen, "sequence variant `%s`: %s: %s", sc->v->pub.name, rt_status_name(rs),
                 rt_error(dev));
    for (uint32_t i = 0; i < l->nbufs && rt_health(dev) == RT_OK; i++)
        if (optr[i])
            rt_free(dev, optr[i]);
    return rs != RT_OK;
}

/* the op's reference kernel at ch's dims (the reference variant's bindings) */
static const LibVariant *reference_env(CakeCtx *ctx, const LibOp *op, const CakeLibChoice *ch, ShapeEnv *env)
{
    const LibVariant *ref = lib_op_reference(op);
    if (!ref) {
        diag_report(ctx, E1207, IR_NOSPAN, "op `%s` has no variant of one launch whose reference "
                    "could check a sequence", op->pub.name);
        return NULL;
    }
    step_env(op, ref, ch->dimv, env);
    return ref;
}

static int check_impl(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, const CakeLibChoice *ch,
                      const CheckOptions *opt, CheckReport *rep, uint32_t *n)
{
    LibOp *op = &lib->ops[ch->op];
    LibVariant *v = &op->v[ch->variant];
    ShapeEnv env;
    if (!v->nsteps) {
        CakeKernel *ck;
        int rc = cake_lib_kernel(ctx, lib, dev, ch, &ck);
        if (rc)
            return rc;
        lib_choice_env(lib, ch, &env);
        return cake_check(ctx, dev, ck, &env, 1, opt, rep, 1, n);
    }
    Seq q;
    int rc = seq_setup(ctx, lib, dev, op, v, ch->dimv, &q);
    const LibVariant *ref = rc ? NULL : reference_env(ctx, op, ch, &env);
    if (rc || !ref)
        return rc ? rc : 1;
    CheckOptions o = opt ? *opt : (CheckOptions){0};
    o.reference = NULL;
    o.skip_assumes = 1;   /* the launches' domains held at select; the reference's are its schedule's */
    SeqCheck sc = {lib, dev, v, op, &q};
    check_run_ex(ctx, ref->k, &env, seq_check_launch, &sc, &o, rep);
    *n = 1;
    return 0;
}

int cake_lib_check(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, const CakeLibChoice *choice,
                   const CheckOptions *opt, CheckReport *rep, uint32_t *n)
{
    int rc;
    *n = 0;
    CAKE_PROTECTED(ctx, rc, check_impl(ctx, lib, dev, choice, opt, rep, n));
    return rc;
}

/* ---- bench ------------------------------------------------------------------------ */

static RtStatus seq_time(CakeCtx *ctx, RtDevice *dev, Seq *q, LibVariant *v, const LibOp *op,
                         const BenchArgs *a, int runs, CakeBench *out)
{
    RtPtr optr[64];
    const void *oscal[64];
    by_op_arg(op, a->ptr, a->scalp, optr, oscal);
    CakePrepared p[LIB_MAX_STEPS];
    RtLaunch rl[LIB_MAX_STEPS];
    uint32_t np = 0;
    RtStatus st = RT_OK;
    for (uint32_t s = 0; s < q->n && st == RT_OK; s++, np++) {
        st = step_prepare(ctx, q, s, optr, oscal, v->ws_ptr, &p[s]);
        rl[s] = p[s].rl;
    }
    for (uint32_t s = 0; s < q->n && st == RT_OK; s++)   /* a smoke run: a fault shows here */
        st = rt_launch(dev, &rl[s]);
    if (st == RT_OK)
        st = rt_wait(dev);
    if (st == RT_OK) {
        RtTimeOpts to = {.warmup = 5, .runs = runs ? runs : 50};
        st = rt_time(dev, rl, (int)q->n, &to, &out->t, NULL);
        memcpy(out->grid, rl[q->n - 1].grid, sizeof out->grid);
        memcpy(out->block, rl[q->n - 1].block, sizeof out->block);
    }
    for (uint32_t s = 0; s < np; s++)
        cake_prepared_free(&p[s]);
    return st;
}

static int bench_impl(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, const CakeLibChoice *ch, int runs,
                      CakeBench *out)
{
    LibOp *op = &lib->ops[ch->op];
    LibVariant *v = &op->v[ch->variant];
    ShapeEnv env;
    if (!v->nsteps) {
        CakeKernel *ck;
        int rc = cake_lib_kernel(ctx, lib, dev, ch, &ck);
        if (rc)
            return rc;
        lib_choice_env(lib, ch, &env);
        return cake_bench(ctx, dev, ck, &env, runs, out);
    }
    memset(out, 0, sizeof *out);
    Seq q;
    int rc = seq_setup(ctx, lib, dev, op, v, ch->dimv, &q);
    const LibVariant *ref = rc ? NULL : reference_env(ctx, op, ch, &env);
    if (rc || !ref)
        return rc ? rc : 1;
    shape_env_format(ctx, ref->k, &env, out->shape, sizeof out->shape);
    rc = workspace(ctx, dev, v, q.ws_total);
    if (rc)
        return rc;
    BenchArgs a = {0};
    double bytes = 0;
    RtStatus st = lib_bench_args(ctx, dev, ref->k, &env, &a, &bytes);
    if (st == RT_OK)
        st = seq_time(ctx, dev, &q, v, op, &a, runs, out);
    lib_bench_finish(ctx, dev, ref->k, &env, bytes, st, out);
    if (st == RT_OK)
        out->regs = q.step[0]->ck->info.regs;
    lib_bench_args_free(dev, &a);
    return st == RT_OK ? 0 : 3;
}

int cake_lib_bench(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, const CakeLibChoice *choice, int runs,
                   CakeBench *out)
{
    int rc;
    CAKE_PROTECTED(ctx, rc, bench_impl(ctx, lib, dev, choice, runs, out));
    return rc;
}
