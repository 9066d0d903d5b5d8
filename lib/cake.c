/* cake.c — libcake: compile (an instance, instance.c), load and launch a TIR
 * kernel (cake.h). The CLI's `cakec run` is built on it. */
#include <stdlib.h>
#include <string.h>
#include "cake_priv.h"

static int compile_module(CakeCtx *ctx, Module *m, const char *kernel, Target tg,
                          const char *set, CakeKernel *out)
{
    const CakeInstance *inst;
    int rc = cake_instance(ctx, m, kernel, tg, set, CAKE_INST_COMPILED, &inst);
    if (rc)
        return rc;
    out->image = malloc(inst->len + 1);
    if (!out->image)
        ir_bug(ctx, "out of memory for a copy of the image of kernel '%s'", ir_symstr(ctx, inst->k->name));
    memcpy(out->image, inst->image, inst->len + 1);
    out->len = inst->len;
    out->m = m;
    out->k = inst->k;
    out->tg = tg;
    return 0;
}

static void kernel_free(CakeKernel *ck)
{
    free(ck->image);
    memset(ck, 0, sizeof *ck);
}

int cake_compile_module(CakeCtx *ctx, Module *m, const char *kernel, Target tg,
                        const char *set, CakeKernel *out)
{
    int rc;
    memset(out, 0, sizeof *out);
    CAKE_PROTECTED(ctx, rc, compile_module(ctx, m, kernel, tg, set, out));
    if (rc)
        kernel_free(out);
    return rc;
}

int cake_compile_file(CakeCtx *ctx, const char *path, const char *kernel, Target tg,
                      const char *set, CakeKernel *out)
{
    Module *m;
    memset(out, 0, sizeof *out);
    int rc = cake_verify_file(ctx, path, NULL, &m);
    return rc ? rc : cake_compile_module(ctx, m, kernel, tg, set, out);
}

/* the JIT log's messages become notes of one diagnostic */
static void report_load_error(CakeCtx *ctx, CakeKernel *ck, RtStatus st, const char *log)
{
    Diag *d = diag_report(ctx, E0971, ck->k->span, "the device rejected kernel `%s`: %s",
                          ir_symstr(ctx, ck->k->name), rt_status_name(st));
    const char *cur = log;
    RtJitMsg msg;
    int n = 0;
    while (rt_jit_log_next(&cur, &msg) && n++ < 20)
        diag_note(ctx, d, IR_NOSPAN, "JIT line %d: %.*s", msg.line, msg.len, msg.text);
    if (!n && log[0])
        diag_note(ctx, d, IR_NOSPAN, "%s", log);
    diag_help(ctx, d, "this is a code generation bug if `cakec check` passes: please report it");
}

/* $CAKE_SMEM_CARVEOUT (-1, or 0..100 percent of L1 as shared memory; unset:
   nothing set): every kernel's preferred carve-out as it is loaded, a measurement
   knob (bench/device/run_dispatch.sh times small kernels both ways) */
static int carveout_knob(void)
{
    const char *e = getenv("CAKE_SMEM_CARVEOUT");
    long v = e && *e ? strtol(e, NULL, 10) : -2;
    return v >= -1 && v <= 100 ? (int)v : -2;
}

static int load(CakeCtx *ctx, RtDevice *dev, CakeKernel *ck)
{
    char log[8192] = "";
    RtStatus st = rt_module_load(dev, ck->image, ck->len, &ck->mod, log, sizeof log);
    if (st == RT_OK)
        st = rt_function(ck->mod, ir_symstr(ctx, ck->k->name), &ck->fn);
    if (st != RT_OK) {
        if (!log[0])
            snprintf(log, sizeof log, "%s", rt_error(dev));
        report_load_error(ctx, ck, st, log);
        return rt_health(dev) != RT_OK ? 3 : 1;
    }
    ck->dev = dev;
    uint32_t smem = ck->k->plan ? ck->k->plan->smem_bytes : 0;
    if (smem > 48 * 1024 && (st = rt_func_set_shared(ck->fn, smem)) != RT_OK) {
        report_load_error(ctx, ck, st, rt_error(dev));
        return rt_health(dev) != RT_OK ? 3 : 1;
    }
    int carve = carveout_knob();
    if (carve >= -1 && rt_func_set_carveout(ck->fn, carve) != RT_OK && rt_health(dev) != RT_OK)
        return 3;
    rt_func_info(ck->fn, &ck->info);
    return 0;
}

int cake_load(CakeCtx *ctx, RtDevice *dev, CakeKernel *ck)
{
    int rc;
    CAKE_PROTECTED(ctx, rc, load(ctx, dev, ck));
    return rc;
}

void cake_unload(CakeKernel *ck)
{
    rt_module_unload(ck->mod);
    ck->mod = NULL;
    ck->fn = NULL;
    free(ck->image);
    ck->image = NULL;
}

/* ---- launching ------------------------------------------------------------ */

/* fills the parameters in the ABI order of the plan (ir.h KParam); tensor
 * maps are maps_fill's */
static void params_fill(const Kernel *k, const int64_t *dimv, const RtPtr *tensors,
                        const void *const *scalars, CakePrepared *p)
{
    const KPlan *pl = k->plan;
    for (uint32_t i = 0; i < pl->nparams; i++) {
        const KParam *kp = &pl->params[i];
        if (kp->kind == KP_TENSOR) {
            p->ptrs[kp->index] = tensors[kp->index];
            p->params[i] = &p->ptrs[kp->index];
        } else if (kp->kind == KP_SCALAR) {
            p->params[i] = (void *)scalars[kp->index];
        } else if (kp->kind == KP_DIM) {
            p->dims[kp->index] = (int32_t)dimv[kp->index];
            p->params[i] = &p->dims[kp->index];
        }
    }
}

/* 1 when every tensor base has the alignment its type promises (ir_tensor_align);
   otherwise 0 with an E0975 at the first that does not */
static int tensors_aligned(CakeCtx *ctx, const Kernel *k, const RtPtr *tensors)
{
    const KPlan *pl = k->plan;
    for (uint32_t i = 0; i < pl->nparams; i++) {
        if (pl->params[i].kind != KP_TENSOR)
            continue;
        const Node *arg = &k->nodes[pl->params[i].decl];
        uint32_t align = ir_tensor_align(&k->nodes[arg->a]);
        RtPtr at = tensors[pl->params[i].index];
        if (at % align == 0)
            continue;
        Diag *d = diag_report(ctx, E0975, arg->span, "tensor argument `%s` of kernel `%s`: its base 0x%llx "
                              "is not a multiple of %u bytes", ir_symstr(ctx, arg->name),
                              ir_symstr(ctx, k->name), (unsigned long long)at, align);
        diag_help(ctx, d, align == IR_ABI_TENSOR_ALIGN
                  ? "the kernel ABI: every tensor's base is 16-byte aligned (a view that starts inside an "
                    "allocation needs a copy)"
                  : "its `align` clause promises this alignment");
        return 0;
    }
    return 1;
}

static RtTmaDtype tma_dtype(DType dt)
{
    switch (dt) {
    case DT_F16: return RT_TMA_F16;
    case DT_BF16: return RT_TMA_BF16;
    case DT_F32: return RT_TMA_F32;
    case DT_F64: return RT_TMA_F64;
    case DT_I32: return RT_TMA_I32;
    case DT_U32: return RT_TMA_U32;
    case DT_I64: return RT_TMA_I64;
    case DT_U64: return RT_TMA_U64;
    case DT_I16: case DT_U16: return RT_TMA_U16;
    default: return RT_TMA_U8; /* i8, u8, fp8, bool */
    }
}

/* a tensor argument's dims (innermost first) and byte strides, at this shape */
static int tensor_geometry(CakeCtx *ctx, const Kernel *k, NodeId arg, const CeEnv *env,
                           RtTmaDesc *d)
{
    const Node *t = &k->nodes[k->nodes[arg].a];
    uint32_t rank = t->sub;
    int64_t eb = ir_dtype_bytes((DType)t->dtype) ? ir_dtype_bytes((DType)t->dtype) : 1;
    int64_t ext[IR_MAX_RANK], st[IR_MAX_RANK];
    if (rank < 1 || rank > IR_MAX_RANK)
        return 0;
    for (uint32_t i = 0; i < rank; i++)
        if (!ce_eval_int(ctx, k, k->lists[t->list + i], env, &ext[i]))
            return 0;
    if (t->n > rank) {
        for (uint32_t i = 0; i < rank; i++)
            if (!ce_eval_int(ctx, k, k->lists[t->list + rank + i], env, &st[i]))
                return 0;
    } else {
        st[rank - 1] = 1;
        for (int i = (int)rank - 2; i >= 0; i--)
            st[i] = st[i + 1] * ext[i + 1];
    }
    d->dtype = tma_dtype((DType)t->dtype);
    d->rank = rank;
    for (uint32_t i = 0; i < rank; i++) {
        d->dims[i] = (uint64_t)ext[rank - 1 - i];
        if (i)
            d->strides[i - 1] = (uint64_t)(st[rank - 1 - i] * eb);
    }
    return 1;
}

/* the tensor maps' L2 promotion: 128 bytes, or $CAKE_TMA_L2_PROMOTE (0, 64, 128
   or 256) where set: a measurement knob (bench/device/glarge_bench.py times a
   ragged row pitch both ways), read when a launch is prepared */
static unsigned l2_promote_bytes(void)
{
    const char *e = getenv("CAKE_TMA_L2_PROMOTE");
    long v = e && *e ? strtol(e, NULL, 10) : 128;
    return v == 0 || v == 64 || v == 256 ? (unsigned)v : 128;
}

/* the descriptor of map i of the plan (L_TMAP: tensor, box, swizzle) at env,
   *tensor the index of the tensor argument it is of: 0 when it has none */
static int map_desc(CakeCtx *ctx, const Kernel *k, uint32_t i, const CeEnv *env, const RtPtr *tensors,
                    RtTmaDesc *d, uint32_t *tensor)
{
    const KPlan *pl = k->plan;
    const Node *m = &k->nodes[pl->tmaps[i]];
    NodeId arg = k->nodes[m->a].decl;
    const KParam *tp = NULL;   /* the tensor argument the map is of */
    for (uint32_t j = 0; j < pl->nparams && !tp; j++)
        if (pl->params[j].kind == KP_TENSOR && pl->params[j].decl == arg)
            tp = &pl->params[j];
    memset(d, 0, sizeof *d);
    if (!tp || !tensor_geometry(ctx, k, arg, env, d))
        return 0;
    d->base = tensors[tp->index];
    for (uint32_t j = 0; j < m->n && j < 5; j++)
        d->box[j] = (uint32_t)k->nodes[k->lists[m->list + j]].v.i;
    d->swizzle = m->v.attr.swizzle;
    d->l2_promote = l2_promote_bytes();
    *tensor = tp->index;
    return 1;
}

/* map i of ck's plan encoded from d into *out */
static RtStatus map_encode(CakeCtx *ctx, CakeKernel *ck, uint32_t i, const RtTmaDesc *d, RtTensorMap *out)
{
    const Kernel *k = ck->k;
    RtStatus st = ck->dev ? rt_tma_encode(ck->dev, d, out) : RT_UNSUPPORTED;
    if (st != RT_OK) {
        const Node *m = &k->nodes[k->plan->tmaps[i]];
        NodeId arg = k->nodes[m->a].decl;
        Diag *dg = diag_report(ctx, E0962, m->span, "cannot build the tensor map of `%s` for TMA",
                               ir_symstr(ctx, k->nodes[arg].name));
        if (ck->dev)
            diag_note(ctx, dg, IR_NOSPAN, "%s", rt_error(ck->dev));
    }
    return st;
}

/* encodes the plan's tensor maps, their descriptors and tensors kept in p */
static RtStatus maps_fill(CakeCtx *ctx, CakeKernel *ck, const CeEnv *env, const RtPtr *tensors,
                          CakePrepared *p)
{
    const KPlan *pl = ck->k->plan;
    for (uint32_t pi = 0; pi < pl->nparams; pi++) {
        if (pl->params[pi].kind != KP_TMAP)
            continue;
        uint32_t i = pl->params[pi].index, t;
        RtTmaDesc d;
        if (!map_desc(ctx, ck->k, i, env, tensors, &d, &t))
            return RT_INVALID;
        RtStatus st = map_encode(ctx, ck, i, &d, &p->maps[i]);
        if (st != RT_OK)
            return st;
        p->map_desc[i] = d;
        p->map_tensor[i] = t;
        p->params[pi] = &p->maps[i];
    }
    return RT_OK;
}

static int dims_of(CakeCtx *ctx, const Kernel *k, const ShapeEnv *env, int64_t *dimv)
{
    for (uint32_t j = 0; j < k->ndims; j++)
        if (!shape_env_get(env, k->nodes[k->dims[j]].name, &dimv[j])) {
            diag_report(ctx, E0953, k->nodes[k->dims[j]].span, "no value for dim `%s`",
                        ir_symstr(ctx, k->nodes[k->dims[j]].name));
            return 0;
        }
    return 1;
}

RtStatus lib_prepare(CakeCtx *ctx, CakeKernel *ck, const ShapeEnv *env, const RtPtr *tensors,
                     const void *const *scalars, CakePrepared *p)
{
    const Kernel *k = ck->k;
    memset(p, 0, sizeof *p);
    int64_t dimv[SHAPE_ENV_MAX];
    CgLaunch L;
    const CgPlugin *cg = lib_codegen(ctx);
    if (!cg || k->ndims > SHAPE_ENV_MAX || !dims_of(ctx, k, env, dimv) ||
        cg->launch_dims(ctx, k, ck->tg, dimv, shape_env_sm_count(ctx, env) ? shape_env_sm_count(ctx, env)
                        : ck->dev ? rt_info(ck->dev)->sm_count : 0, &L))
        return RT_INVALID;
    if (!k->plan)
        ir_bug(ctx, "launching kernel '%s' without its launch plan", ir_symstr(ctx, k->name));
    if (!tensors_aligned(ctx, k, tensors))
        return RT_INVALID;
    uint32_t nmaps = k->plan->ntmaps;
    p->params = calloc(k->plan->nparams + 1, sizeof *p->params);
    p->ptrs = calloc(k->nargs + 1, sizeof *p->ptrs);
    p->dims = calloc(k->ndims + 1, sizeof *p->dims);
    p->maps = nmaps ? aligned_alloc(64, nmaps * sizeof *p->maps) : NULL;
    p->nmaps = nmaps;
    p->map_desc = nmaps ? calloc(nmaps, sizeof *p->map_desc) : NULL;
    p->map_tensor = nmaps ? calloc(nmaps, sizeof *p->map_tensor) : NULL;
    if (!p->params || !p->ptrs || !p->dims || (nmaps && (!p->maps || !p->map_desc || !p->map_tensor)))
        ir_bug(ctx, "out of memory preparing a launch");
    params_fill(k, dimv, tensors, scalars, p);
    CeEnv view = shape_env_view(env);
    RtStatus mst = maps_fill(ctx, ck, &view, tensors, p);
    if (mst != RT_OK) {
        cake_prepared_free(p);
        return mst;
    }
    p->rl.fn = ck->fn;
    memcpy(p->rl.grid, L.grid, sizeof p->rl.grid);
    memcpy(p->rl.block, L.block, sizeof p->rl.block);
    p->rl.shared_bytes = L.dyn_shared_bytes;
    p->rl.params = p->params;
    return RT_OK;
}

RtStatus lib_prepared_rebind(CakeCtx *ctx, CakeKernel *ck, CakePrepared *p, const RtPtr *tensors,
                            const void *const *scalars)
{
    const KPlan *pl = ck->k->plan;
    if (!tensors_aligned(ctx, ck->k, tensors))
        return RT_INVALID;   /* the launch keeps its earlier, valid binding */
    for (uint32_t i = 0; i < pl->nparams; i++) {
        const KParam *q = &pl->params[i];
        if (q->kind == KP_TENSOR)
            p->ptrs[q->index] = tensors[q->index];
        else if (q->kind == KP_SCALAR)
            p->params[i] = (void *)scalars[q->index];
    }
    for (uint32_t i = 0; i < p->nmaps; i++) {
        RtPtr at = tensors[p->map_tensor[i]];
        if (p->map_desc[i].base == at)
            continue;
        p->map_desc[i].base = at;
        RtStatus st = map_encode(ctx, ck, i, &p->map_desc[i], &p->maps[i]);
        if (st != RT_OK) {
            p->map_desc[i].base = 0;   /* encoded again next time */
            return st;
        }
    }
    return RT_OK;
}

RtStatus lib_prep_make(CakeCtx *ctx, CakeKernel *ck, const ShapeEnv *env, const RtPtr *tensors,
                       const void *const *scalars, LibPrep *kp)
{
    kp->ck = ck;
    RtStatus st = lib_prepare(ctx, ck, env, tensors, scalars, &kp->p);
    if (st != RT_OK)
        lib_prep_free(kp);
    return st;
}

RtStatus lib_prep_bind(CakeCtx *ctx, LibPrep *kp, const RtPtr *tensors, const void *const *scalars)
{
    return lib_prepared_rebind(ctx, kp->ck, &kp->p, tensors, scalars);
}

void lib_prep_free(LibPrep *kp)
{
    cake_prepared_free(&kp->p);
    kp->ck = NULL;
}

void cake_prepared_free(CakePrepared *p)
{
    free(p->params);
    free(p->ptrs);
    free(p->dims);
    free(p->maps);
    free(p->map_desc);
    free(p->map_tensor);
    memset(p, 0, sizeof *p);
}

RtStatus lib_launch(CakeCtx *ctx, RtDevice *dev, CakeKernel *ck, const ShapeEnv *env,
                    const RtPtr *tensors, const void *const *scalars)
{
    CakePrepared p;
    RtStatus st = lib_prepare(ctx, ck, env, tensors, scalars, &p);
    if (st == RT_OK)
        st = rt_run(dev, &p.rl);
    cake_prepared_free(&p);
    return st;
}

/* the runtime's status as a return code: the request was wrong, or the device failed */
static int status_code(RtStatus st)
{
    return st == RT_OK ? 0 : st == RT_INVALID ? 1 : 3;
}

int cake_prepare(CakeCtx *ctx, CakeKernel *ck, const ShapeEnv *env, const RtPtr *tensors,
                 const void *const *scalars, CakePrepared *p)
{
    RtStatus st = RT_OK;
    int rc;
    memset(p, 0, sizeof *p);
    CAKE_PROTECTED(ctx, rc, (st = lib_prepare(ctx, ck, env, tensors, scalars, p), 0));
    return rc ? rc : status_code(st);
}

int cake_prepared_rebind(CakeCtx *ctx, CakeKernel *ck, CakePrepared *p, const RtPtr *tensors,
                         const void *const *scalars)
{
    RtStatus st = RT_OK;
    int rc;
    CAKE_PROTECTED(ctx, rc, (st = lib_prepared_rebind(ctx, ck, p, tensors, scalars), 0));
    return rc ? rc : status_code(st);
}

int cake_launch(CakeCtx *ctx, RtDevice *dev, CakeKernel *ck, const ShapeEnv *env,
                const RtPtr *tensors, const void *const *scalars)
{
    RtStatus st = RT_OK;
    int rc;
    CAKE_PROTECTED(ctx, rc, (st = lib_launch(ctx, dev, ck, env, tensors, scalars), 0));
    return rc ? rc : status_code(st);
}
