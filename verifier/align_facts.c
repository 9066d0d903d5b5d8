/* align_facts.c — the alignment prover's model of an access (align.h): the
 * facts that hold at a statement (assumes, enclosing ifs, earlier return
 * guards, the mask), the access's declaration, strides and chain of views,
 * and the proof that its byte offset is a multiple of its width in the
 * congruence lattice of analysis/divis.h. */
#include <string.h>
#include "align.h"
#include "verify.h"
#include "layout.h"

/* ---- facts at a statement --------------------------------------------------- */

int al_special(const DvEnv *env, NodeId at, int64_t *out)
{
    const Al *a = env->u;
    int64_t first;
    return al_node(a, at)->sub == SR_NTHREADS && sy_role_range(a->s, a->role, &first, out);
}

/* the facts of condition cond of statement p, less those about a var assigned
 * since p, before the access at (`if k % 8 == 0 { k = k + 1 ... }`) */
static void cond_facts(Al *a, NodeId cond, int negated, NodeId p, NodeId at)
{
    SyK *s = a->s;
    uint32_t from = a->env.nfacts, w = from;
    dv_add_facts(&a->env, cond, negated);
    for (uint32_t i = from; i < a->env.nfacts; i++) {
        NodeId d = a->env.facts[i].decl;
        if (!(sy_node(s, d)->op == OP_VAR && sy_set_since(s, d, p, at)))
            a->env.facts[w++] = a->env.facts[i];
    }
    a->env.nfacts = w;
}

void al_context_facts(Al *a, NodeId st, NodeId mask)
{
    SyK *s = a->s;
    a->env.nfacts = 0;
    a->role = s->role[st];
    for (uint32_t i = 0; i < s->k->nassumes; i++)
        dv_add_facts(&a->env, s->k->assumes[i], 0);
    for (NodeId cur = st; cur; cur = s->up[cur]) {
        Node *bn = sy_node(s, sy_block_of(s, cur));
        for (uint32_t i = 0; bn->op == OP_BLOCK && i < bn->n; i++) {
            NodeId x = ir_list_at(s->k, bn, i);
            if (x == cur)
                break;
            if (sy_is_return_guard(s, x))
                cond_facts(a, sy_node(s, x)->a, 1, x, st);
        }
        NodeId up = s->up[cur];
        if (up && sy_node(s, up)->op == OP_IF)
            cond_facts(a, sy_node(s, up)->a, s->in_else[cur], up, st);
    }
    if (mask)
        dv_add_facts(&a->env, mask, 0);
}

/* ---- the access: declaration, strides, the starts of a chain of views -------- */

static const char *paren(Al *a, NodeId e)
{
    const Node *n = al_node(a, e);
    const char *t = sy_text(a->s, e);
    int simple = n->op == OP_NAME || n->op == OP_INT || n->op == OP_SPECIAL || n->op == OP_MUL ||
                 (n->flags & NF_PAREN) || n->op == OP_CAST || ir_ops[n->op].cls == OC_BUILTIN;
    return simple ? t : ir_fmt(a->s->ctx, "(%s)", t);
}

/* the strides of a global tensor, in elements, under the facts in force */
void al_global_strides(Al *a, Acc *x)
{
    Node *g = al_node(a, al_node(a, x->decl)->a);
    DvCong st = dv_const(1);
    const char *text = "";
    for (int i = x->rank - 1; i >= 0; i--) {
        if (g->n == 2 * g->sub) { /* explicit strides */
            NodeId se = ir_list_at(a->s->k, g, g->sub + (uint32_t)i);
            x->stride[i] = dv_expr(&a->env, se);
            x->stride_text[i] = paren(a, se);
            continue;
        }
        x->stride[i] = st;
        x->stride_text[i] = text;
        NodeId de = ir_list_at(a->s->k, g, (uint32_t)i);
        st = dv_mul(st, dv_expr(&a->env, de));
        text = *text ? ir_fmt(a->s->ctx, "%s * %s", paren(a, de), text) : paren(a, de);
    }
}

/* the declaration's dims and strides; 0 when this is not a global tensor or a
 * shared tile of constant shape */
int al_acc_decl(Al *a, Acc *x, NodeId ref)
{
    SyK *s = a->s;
    x->decl = sy_ref_decl(s, ref);
    if (!x->decl)
        return 0;
    Node *d = al_node(a, x->decl);
    const Type *t = ver_type(s->k, x->decl);
    x->esz = t->dtype == DT_BOOL ? 1 : ir_dtype_bytes((DType)t->dtype);
    if (x->esz <= 0 || t->lanes > 1)
        return 0;
    if (d->op == OP_ARG && d->a && al_node(a, d->a)->op == OP_GTYPE) {
        Node *g = al_node(a, d->a);
        x->global = 1;
        x->rank = g->sub;
        if (x->rank < 1 || x->rank > IR_MAX_RANK || (g->n != g->sub && g->n != 2 * g->sub))
            return 0;
        x->base = ir_tensor_align(g);
        al_global_strides(a, x);
        return 1;
    }
    if (d->op != OP_SHARED || t->kind != TK_TILE || t->rank < 1)
        return 0;
    x->rank = t->rank;
    uint32_t al = ly_smem_align(d->v.attr.swizzle);
    x->base = d->v.attr.align > al ? d->v.attr.align : al;
    int64_t st = 1;
    for (int i = x->rank - 1; i >= 0; i--) {
        x->stride[i] = dv_const(st);
        x->stride_text[i] = ir_fmt(s->ctx, "%lld", (long long)st);
        if (t->shape[i] < 1 || __builtin_mul_overflow(st, t->shape[i], &st))
            return 0;
    }
    return 1;
}

/* the starts of ref's chain of views, per declaration dim; 0 when the way down
 * is not a chain of INDEX nodes */
int al_acc_chain(Al *a, Acc *x, NodeId ref)
{
    SyK *s = a->s;
    NodeId chain[SY_REF_CHAIN];
    int nc = sy_ref_chain(s, ref, chain);
    if (nc < 1)
        return 0;
    int cur[IR_MAX_RANK], ncur = x->rank;
    for (int i = 0; i < x->rank; i++) {
        cur[i] = i;
        x->kept[i] = 1;
        x->nparts[i] = 0;
        x->extra[i] = dv_const(0);
    }
    x->last_extent = -1;
    while (nc--) {
        Node *ix = al_node(a, chain[nc]);
        int next[IR_MAX_RANK], nn = 0;
        for (int j = 0; j < ncur; j++) {
            NodeId e = j < (int)ix->n ? ir_list_at(s->k, ix, (uint32_t)j) : 0;
            int d = cur[j];
            Node *en = e ? al_node(a, e) : NULL;
            NodeId start = !e || en->op == OP_COLON ? 0 : en->op == OP_SLICE ? en->a : e;
            if (start) {
                if (x->nparts[d] == AL_PARTS)
                    return 0;
                x->part[d][x->nparts[d]++] = start;
            }
            if (!e || en->op == OP_COLON || en->op == OP_SLICE) {
                next[nn++] = d;
                if (d == x->rank - 1 && en && en->op == OP_SLICE && !sy_const(s, en->b, &x->last_extent))
                    x->last_extent = -1;
            } else {
                x->kept[d] = 0;
            }
        }
        memcpy(cur, next, sizeof next);
        ncur = nn;
    }
    if (!x->kept[x->rank - 1])
        x->last_extent = 1;
    return 1;
}

int al_kept_dims(const Acc *x)
{
    int n = 0;
    for (int i = 0; i < x->rank; i++)
        n += x->kept[i];
    return n;
}

/* ---- the proof ---------------------------------------------------------------- */

DvCong al_dim_index(Al *a, const Acc *x, int d)
{
    DvCong c = x->extra[d];
    for (int i = 0; i < x->nparts[d]; i++)
        c = dv_add(c, dv_expr(&a->env, x->part[d][i]));
    return c;
}

DvCong al_term(Al *a, const Acc *x, int d)
{
    return dv_mul(dv_mul(al_dim_index(a, x, d), x->stride[d]), dv_const(x->esz));
}

DvCong al_offset(Al *a, const Acc *x)
{
    DvCong c = dv_const(0);
    for (int d = 0; d < x->rank; d++)
        c = dv_add(c, al_term(a, x, d));
    return c;
}

int al_proved(Al *a, const Acc *x)
{
    return x->base % x->width == 0 && dv_multiple(al_offset(a, x), x->width);
}
