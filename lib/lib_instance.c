/* lib_instance.c — the one seam between the library and kernel compilation:
 * a variant (file, kernel, bindings, target) becomes a compiled or lowered
 * kernel here and nowhere else, so moving the library onto kernel instances
 * (cached, cloned from a read-only module) is a change to this file only. */
#include <string.h>
#include "lib_priv.h"
#include "passes.h"
#include "protect.h"

static int instance(CakeCtx *ctx, const CakeLib *lib, const LibVariant *v, int emit, CakeKernel *out)
{
    const LibSource *s = &lib->srcs[v->src];
    uint32_t file = ctx_add_file(ctx, s->path, s->text, s->len);
    Module *m;
    int rc = cake_verify_source(ctx, file, NULL, &m);
    if (rc)
        return rc;
    if (emit)
        return cake_compile_module(ctx, m, v->pub.kernel, v->tg, v->pub.set[0] ? v->pub.set : NULL, out);
    Kernel *k = NULL;
    for (uint32_t i = 0; i < m->nkernels; i++)
        if (!strcmp(ir_symstr(ctx, m->kernels[i]->name), v->pub.kernel))
            k = m->kernels[i];
    if (!k)
        return 1;
    ShapeEnv env;
    if (!cake_parse_bindings(ctx, k, v->pub.set[0] ? v->pub.set : NULL, NULL, &env))
        return 1;
    CeEnv view = shape_env_view(&env);
    if (pass_run_all(ctx, m, k, v->tg, &view))
        return 1;
    memset(out, 0, sizeof *out);
    out->m = m;
    out->k = k;
    out->tg = v->tg;
    return 0;
}

int lib_instance(CakeCtx *ctx, const CakeLib *lib, const LibVariant *v, int emit, CakeKernel *out)
{
    int rc;
    CAKE_PROTECTED(ctx, rc, instance(ctx, lib, v, emit, out));
    return rc;
}
