/* lib_instance.c — the one seam between the library and kernel compilation:
 * a variant (file, kernel, bindings, target) becomes a compiled or lowered
 * kernel here and nowhere else: a kernel instance (cake.h, cake_instance),
 * cached in the context and built on a copy of the read-only module. */
#include <string.h>
#include "lib_priv.h"
#include "protect.h"

static int instance(CakeCtx *ctx, const CakeLib *lib, const LibVariant *v, int emit, CakeKernel *out)
{
    const LibSource *s = &lib->srcs[v->src];
    uint32_t file = ctx_add_file(ctx, s->path, s->text, s->len);
    Module *m;
    int rc = cake_verify_source(ctx, file, NULL, &m);
    if (rc)
        return rc;
    const char *set = v->pub.set[0] ? v->pub.set : NULL;
    if (emit)
        return cake_compile_module(ctx, m, v->pub.kernel, v->tg, set, out);
    /* lowered only (TIR-L and its launch plan): the instance, not the module */
    const CakeInstance *inst;
    if ((rc = cake_instance(ctx, m, v->pub.kernel, v->tg, set, CAKE_INST_LOWERED, &inst)))
        return rc;
    memset(out, 0, sizeof *out);
    out->m = m;
    out->k = inst->k;
    out->tg = v->tg;
    return 0;
}

int lib_instance(CakeCtx *ctx, const CakeLib *lib, const LibVariant *v, int emit, CakeKernel *out)
{
    int rc;
    CAKE_PROTECTED(ctx, rc, instance(ctx, lib, v, emit, out));
    return rc;
}
