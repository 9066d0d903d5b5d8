/* bind_params.c — the bind-params pass: every use of a compile-time param
 * becomes an integer literal holding its value, so later passes and codegen
 * see constants (and `--set BM=64` is applied in one place). The kernel comes
 * typed at these values: an instance (lib/instance.c) is a copy of the
 * verified kernel whose bound params read as literals of their values, typed
 * (and, for a combination `check` did not cover, verified) before this pass;
 * the pass only rewrites the uses, it never verifies. */
#include "passes.h"
#include "consteval.h"

uint32_t pass_bind_params(CakeCtx *ctx, Kernel *k, const CeEnv *env)
{
    uint32_t before = ctx->nerrors;
    int64_t *val = arena_alloc(&ctx->arena, (k->nparams + 1) * sizeof *val);
    uint8_t *ok = arena_alloc(&ctx->arena, k->nparams + 1);
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
    return ctx->nerrors - before;
}
