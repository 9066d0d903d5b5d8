/* bind_params.c — the bind-params pass: every use of a compile-time param
 * becomes an integer literal holding its value, so later passes and codegen
 * see constants (and `--set BM=64` is applied in one place). The verifier
 * checked the kernel with the params' defaults; when a bound value differs
 * (a `--set`), the kernel is verified again with the bound values, so that its
 * types (tile shapes, vector lanes, array sizes, which codegen reads) and every
 * check hold for the instance that is compiled. */
#include "passes.h"
#include "consteval.h"
#include "verify.h"

/* verifies k again from scratch: types are recomputed from the bound literals */
static void reverify(CakeCtx *ctx, Kernel *k)
{
    for (NodeId id = 1; id < k->nnodes; id++)
        k->nodes[id].type = 0;
    ver_kernel(ctx, k);
}

uint32_t pass_bind_params(CakeCtx *ctx, Kernel *k, const CeEnv *env)
{
    uint32_t before = ctx->nerrors;
    int64_t *val = arena_alloc(&ctx->arena, (k->nparams + 1) * sizeof *val);
    uint8_t *ok = arena_alloc(&ctx->arena, k->nparams + 1);
    int rebound = 0;
    for (uint32_t i = 0; i < k->nparams; i++) {
        Node *p = ir_get(k, k->params[i]);
        int found = 0;
        for (uint32_t j = 0; env && j < env->n; j++)
            if (env->b[j].name == p->name) {
                val[i] = env->b[j].value;
                found = ok[i] = 1;
            }
        if (!found && ce_eval_int(ctx, k, p->a, env, &val[i]))
            ok[i] = 1;
        int64_t dflt;
        if (ok[i] && (!ce_const_int(ctx, k, p->a, &dflt) || dflt != val[i]))
            rebound = 1;
        if (!ok[i]) {
            Diag *d = diag_report(ctx, E0904, p->span, "the value of param '%s' is not a "
                                  "compile-time integer", ir_symstr(ctx, p->name));
            diag_help(ctx, d, "give it an integer default, e.g. `<%s = 4>`", ir_symstr(ctx, p->name));
        }
    }
    for (NodeId id = 1; id < k->nnodes; id++) {
        Node *n = ir_get(k, id);
        if (n->op != OP_NAME || !n->decl || ir_get(k, n->decl)->op != OP_PARAM)
            continue;
        for (uint32_t i = 0; i < k->nparams; i++) {
            if (k->params[i] != n->decl || !ok[i])
                continue;
            n->op = OP_INT;
            n->v.i = val[i];
            n->decl = 0;
            break;
        }
    }
    /* the param declarations now read as the bound values */
    for (uint32_t i = 0; i < k->nparams; i++) {
        Node *p = ir_get(k, k->params[i]);
        if (ok[i] && p->a) {
            Node *d = ir_get(k, p->a);
            if (d->op != OP_INT || d->v.i != val[i]) {
                NodeId lit = ir_node(ctx, k, OP_INT, d->span);
                k->nodes[lit].v.i = val[i];
                p = ir_get(k, k->params[i]); /* nodes may have moved */
                p->a = lit;
            }
        }
    }
    if (rebound && ctx->nerrors == before)
        reverify(ctx, k);
    return ctx->nerrors - before;
}
