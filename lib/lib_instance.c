/* lib_instance.c — the one seam between the library and kernel compilation:
 * a variant (file, kernel, bindings, target) becomes a kernel instance here
 * and nowhere else (cake_instance, cake.h). Each source of the library is
 * parsed and verified once per context (its module is read-only from then
 * on); each variant is an instance of it, cached by the instance cache, so
 * checking, compiling and preparing a variant for a launch share the work. */
#include <stdlib.h>
#include <string.h>
#include "lib_priv.h"
#include "protect.h"

/* the verified module of source s (once per library) */
static int source_module(CakeCtx *ctx, const CakeLib *lib, uint32_t src, Module **out)
{
    LibSource *s = &lib->srcs[src];
    if (s->vm) {
        *out = s->vm;
        return 0;
    }
    if (s->failed) {
        *out = NULL;
        return 1;
    }
    if (s->file == UINT32_MAX)
        s->file = ctx_add_file(ctx, s->shown ? s->shown : s->path, s->text, s->len);
    int rc = cake_verify_source(ctx, s->file, NULL, out);
    if (!rc)
        s->vm = *out;
    else
        s->failed = rc == 1;
    return rc;
}

static int instance(CakeCtx *ctx, const CakeLib *lib, const LibVariant *v, CakeInstStage stage,
                    CakeKernel *out)
{
    Module *m;
    int rc = source_module(ctx, lib, v->src, &m);
    if (rc)
        return rc;
    const CakeInstance *inst;
    rc = cake_instance(ctx, m, v->pub.kernel, v->tg, v->pub.set[0] ? v->pub.set : NULL, stage, &inst);
    if (rc)
        return rc;
    memset(out, 0, sizeof *out);
    out->m = m;
    out->k = inst->k;
    out->tg = v->tg;
    if (stage == CAKE_INST_COMPILED) {
        out->image = malloc(inst->len + 1);
        if (!out->image)
            ir_bug(ctx, "out of memory copying the image of variant `%s`", v->pub.name);
        memcpy(out->image, inst->image, inst->len);
        out->image[inst->len] = 0;
        out->len = inst->len;
    }
    return 0;
}

int lib_instance(CakeCtx *ctx, const CakeLib *lib, const LibVariant *v, CakeInstStage stage,
                 CakeKernel *out)
{
    int rc;
    CAKE_PROTECTED(ctx, rc, instance(ctx, lib, v, stage, out));
    return rc;
}

int lib_source_module(CakeCtx *ctx, const CakeLib *lib, uint32_t src, Module **out)
{
    int rc;
    *out = NULL;
    CAKE_PROTECTED(ctx, rc, source_module(ctx, lib, src, out));
    return rc;
}
