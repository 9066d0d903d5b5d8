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

/* an `if` whose condition the bound params make a constant keeps only the
 * branch it takes, as `if true { taken }` (an empty block when nothing is
 * taken), so no later pass, nor code generation, lowers (or reports E0902 for)
 * code a parameter value makes dead; the kernel still prints as TIR */
static void make_true(Kernel *k, NodeId cond)
{
    Node *c = ir_get(k, cond);
    c->op = OP_BOOL;
    c->v.i = 1;
    c->a = c->b = c->c = c->d = 0;
    c->list = c->n = 0;
    c->decl = 0;
}

uint32_t pass_fold_dead(CakeCtx *ctx, Kernel *k)
{
    uint32_t folded = 0;
    for (NodeId id = 1; id < k->nnodes; id++) {
        Node *n = ir_get(k, id);
        int64_t c;
        while (n->op == OP_IF && n->a && ir_get(k, n->a)->op != OP_BOOL && ce_const_int(ctx, k, n->a, &c)) {
            folded++;
            if (c) {                               /* the then-block */
                n->c = 0;
                make_true(k, n->a);
                break;
            }
            Node *e = n->c ? ir_get(k, n->c) : NULL;
            if (e && e->op == OP_IF) {             /* else if: this `if` becomes that one */
                n->a = e->a, n->b = e->b, n->c = e->c;
                continue;
            }
            if (e)                                 /* the else-block */
                n->b = n->c;
            else                                   /* nothing */
                ir_get(k, n->b)->n = 0;
            n->c = 0;
            make_true(k, n->a);
            break;
        }
    }
    return folded;
}
