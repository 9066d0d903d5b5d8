/* lib_launch.c — a library variant on a device: prepared on first use (its
 * launch plan from its embedded source through the seam of lib_instance.c,
 * its prebuilt image loaded), then launched on the caller's stream. */
#include <stdlib.h>
#include <string.h>
#include "lib_priv.h"
#include "cake_priv.h"

static int device_ok(CakeCtx *ctx, const CakeLib *lib, const LibVariant *v, RtDevice *dev)
{
    const RtDeviceInfo *info = rt_info(dev);
    if (lib->tuned_device && lib->tuned_device[0] && strcmp(lib->tuned_device, info->name)) {
        Diag *d = diag_report(ctx, E1206, IR_NOSPAN, "the library's dispatch table was tuned on %s, "
                              "this device is %s", lib->tuned_device, info->name);
        diag_help(ctx, d, "tune it here (`cakec lib tune DIR --shapes FILE -o TABLE`, then `lib build "
                          "--table TABLE`), or build it without a table");
        return 0;
    }
    if (!tg_device_fit(v->tg, info->arch)) {
        Diag *d = diag_report(ctx, E1204, IR_NOSPAN, "variant `%s` is built for %s, which does not "
                              "run on %s (%s)", v->pub.name, v->pub.target, info->name, info->arch);
        diag_help(ctx, d, "add a variant for this device's target to the manifest");
        return 0;
    }
    return 1;
}

int lib_variant_prepare(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, LibVariant *v)
{
    if (v->ck && v->ck_dev == dev)
        return 0;
    if (!device_ok(ctx, lib, v, dev))
        return 1;
    lib_cache_free(v);   /* its launches name the old kernel */
    if (v->ck) {
        cake_unload(v->ck);
        free(v->ck);
        v->ck = NULL;
    }
    CakeKernel *ck = calloc(1, sizeof *ck);
    if (!ck)
        ir_bug(ctx, "out of memory preparing a library variant");
    int rc = lib_instance(ctx, lib, v, v->image_len ? CAKE_INST_LOWERED : CAKE_INST_COMPILED, ck);
    if (!rc && v->image_len) {
        ck->image = malloc(v->image_len + 1);
        if (!ck->image)
            ir_bug(ctx, "out of memory loading a library variant");
        memcpy(ck->image, lib->blob + v->image_off, v->image_len);
        ck->image[v->image_len] = 0;
        ck->len = v->image_len;
    }
    if (!rc)
        rc = cake_load(ctx, dev, ck);
    if (rc) {
        free(ck->image);
        free(ck);
        return rc;
    }
    v->ck = ck;
    v->ck_dev = dev;
    return 0;
}

static LibVariant *variant_of(CakeCtx *ctx, CakeLib *lib, const CakeLibChoice *ch)
{
    IR_ASSERT(ctx, lib->ctx == ctx);
    IR_ASSERT(ctx, ch->op < lib->nops && ch->variant < lib->ops[ch->op].pub.nvariants);
    return &lib->ops[ch->op].v[ch->variant];
}

static int kernel_of(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, const CakeLibChoice *ch, CakeKernel **out)
{
    LibVariant *v = variant_of(ctx, lib, ch);
    if (v->nsteps) {
        Diag *d = diag_report(ctx, E1204, IR_NOSPAN, "variant `%s` is a sequence of %u launches, not "
                              "one kernel", v->pub.name, v->nsteps);
        diag_help(ctx, d, "launch it with cake_lib_launch; check and time it with cake_lib_check and "
                          "cake_lib_bench");
        return 1;
    }
    int rc = lib_variant_prepare(ctx, lib, dev, v);
    *out = rc ? NULL : v->ck;
    return rc;
}

int cake_lib_kernel(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, const CakeLibChoice *choice,
                    CakeKernel **out)
{
    int rc;
    *out = NULL;
    CAKE_PROTECTED(ctx, rc, kernel_of(ctx, lib, dev, choice, out));
    return rc;
}

/* the dims and the variant's parameters of a choice, as a ShapeEnv */
static void choice_env(const LibOp *op, const LibVariant *v, const CakeLibChoice *ch, ShapeEnv *env)
{
    shape_env_clear(env);
    for (uint32_t i = 0; i < v->npb; i++)
        shape_env_set(env, v->pb[i].name, v->pb[i].value);
    for (uint32_t i = 0; i < op->pub.ndims; i++)
        shape_env_set(env, op->dsym[i], ch->dimv[i]);
}

/* the kept launch of ch on v (made now at a new shape) bound to the call's
   buffers and scalars, queued on stream */
static int launch(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, const CakeLibChoice *ch,
                  const RtPtr *tensors, const void *const *scalars, void *stream)
{
    LibVariant *v = variant_of(ctx, lib, ch);
    if (v->nsteps)
        return lib_seq_launch(ctx, lib, dev, ch, tensors, scalars, stream);
    int rc = lib_variant_prepare(ctx, lib, dev, v);
    if (rc)
        return rc;
    uint32_t nd = lib->ops[ch->op].pub.ndims;
    LibRec *r = lib_rec_find(v, ch->dimv, nd);
    LibPrep *kp;
    RtStatus st;
    if (r) {
        kp = lib_rec_step(r, 0);
        st = lib_prep_bind(ctx, kp, tensors, scalars);
    } else {
        ShapeEnv env;
        choice_env(&lib->ops[ch->op], v, ch, &env);
        r = lib_rec_claim(ctx, v, ch->dimv, nd);
        kp = lib_rec_step(r, 0);
        st = lib_prep_make(ctx, v->ck, &env, tensors, scalars, kp);
        if (st == RT_OK)
            lib_rec_done(r, 1);
        else
            lib_rec_drop(r);
    }
    if (st == RT_OK) {
        kp->p.rl.stream = stream;
        st = rt_launch(dev, &kp->p.rl);
    }
    return st == RT_OK ? 0 : st == RT_INVALID ? 1 : 3;
}

int cake_lib_launch(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, const CakeLibChoice *choice,
                    const RtPtr *tensors, const void *const *scalars, void *stream)
{
    int rc;
    CAKE_PROTECTED(ctx, rc, launch(ctx, lib, dev, choice, tensors, scalars, stream));
    return rc;
}

void lib_choice_env(const CakeLib *lib, const CakeLibChoice *ch, ShapeEnv *env)
{
    const LibOp *op = &lib->ops[ch->op];
    choice_env(op, &op->v[ch->variant], ch, env);
}

int cake_lib_choice_env(CakeCtx *ctx, const CakeLib *lib, const CakeLibChoice *choice, ShapeEnv *env)
{
    if (!lib || choice->op >= lib->nops || choice->variant >= lib->ops[choice->op].pub.nvariants) {
        diag_report(ctx, E1201, IR_NOSPAN, "no such op or variant in the library");
        return 1;
    }
    lib_choice_env(lib, choice, env);
    return 0;
}

static int predict(CakeCtx *ctx, const CakeLib *lib, const CakeLibChoice *ch, const char *device,
                   double *ms, CostResult *res)
{
    const LibOp *op = &lib->ops[ch->op];
    const LibVariant *v = variant_of(ctx, (CakeLib *)lib, ch);
    Module *m;
    if (lib_source_module(ctx, lib, v->src, &m))
        return 1;
    *ms = lib_variant_cost(ctx, op, v, m, ch->dimv, device, res);
    if (*ms > 0)
        return 0;
    diag_report(ctx, E1211, IR_NOSPAN, "the cost model has no time for variant `%s`", v->pub.name);
    return 1;
}

int cake_lib_predict(CakeCtx *ctx, const CakeLib *lib, const CakeLibChoice *choice,
                     const char *device, double *ms)
{
    int rc;
    *ms = -1;
    CAKE_PROTECTED(ctx, rc, predict(ctx, lib, choice, device, ms, NULL));
    return rc;
}

int cake_lib_cost(CakeCtx *ctx, const CakeLib *lib, const CakeLibChoice *choice, const char *device,
                  CostResult *out)
{
    int rc;
    double ms;
    CAKE_PROTECTED(ctx, rc, predict(ctx, lib, choice, device, &ms, out));
    return rc;
}
