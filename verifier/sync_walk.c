/* sync_walk.c — walks over the structured IR for the synchronization and
 * bounds checks (sync.h): statements in pre-order, the expressions of a
 * statement, whether an expression names a declaration, and a forward
 * dataflow over structured statements (loops iterated toward a fixpoint,
 * the two sides of an if joined). */
#include <string.h>
#include "sync.h"

/* ---- visiting ---------------------------------------------------------- */

static void each_stmt(SyK *s, NodeId block, SyVisit fn, void *u, int depth);

static void visit_stmt(SyK *s, NodeId st, SyVisit fn, void *u, int depth)
{
    Node *n = sy_node(s, st);
    fn(s, st, u);
    switch (n->op) {
    case OP_ROLE: case OP_FOR: each_stmt(s, n->d, fn, u, depth + 1); break;
    case OP_IF:
        each_stmt(s, n->b, fn, u, depth + 1);
        if (n->c && sy_node(s, n->c)->op == OP_IF)
            visit_stmt(s, n->c, fn, u, depth + 1);
        else
            each_stmt(s, n->c, fn, u, depth + 1);
        break;
    default: break;
    }
}

static void each_stmt(SyK *s, NodeId block, SyVisit fn, void *u, int depth)
{
    if (!block || depth > SY_MAX_DEPTH || sy_node(s, block)->op != OP_BLOCK)
        return;
    Node *b = sy_node(s, block);
    for (uint32_t i = 0; i < b->n; i++)
        visit_stmt(s, ir_list_at(s->k, b, i), fn, u, depth);
}

void sy_each_stmt(SyK *s, NodeId block, SyVisit fn, void *u)
{
    each_stmt(s, block, fn, u, 0);
}

static void each_expr(SyK *s, NodeId e, SyVisit fn, void *u, int depth)
{
    if (!e || e >= s->k->nnodes || depth > SY_MAX_DEPTH)
        return;
    Node *n = sy_node(s, e);
    if (ir_ops[n->op].cls == OC_STMT || n->op == OP_ROLE)
        return;
    fn(s, e, u);
    if (n->op == OP_NAME || n->op == OP_INT || n->op == OP_FLOAT || n->op == OP_BOOL)
        return;
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        each_expr(s, kids[i], fn, u, depth + 1);
    for (uint32_t i = 0; i < n->n; i++)
        each_expr(s, ir_list_at(s->k, n, i), fn, u, depth + 1);
}

void sy_each_expr(SyK *s, NodeId e, SyVisit fn, void *u)
{
    each_expr(s, e, fn, u, 0);
}

void sy_stmt_exprs(SyK *s, NodeId st, SyVisit fn, void *u)
{
    Node *n = sy_node(s, st);
    switch (n->op) {
    case OP_BLOCK: case OP_REFERENCE: return;
    case OP_FOR: case OP_ROLE:
        each_expr(s, n->a, fn, u, 0);
        each_expr(s, n->b, fn, u, 0);
        each_expr(s, n->c, fn, u, 0);
        return;
    case OP_IF: each_expr(s, n->a, fn, u, 0); return;
    default: break;
    }
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        each_expr(s, kids[i], fn, u, 0);
    for (uint32_t i = 0; i < n->n; i++)
        each_expr(s, ir_list_at(s->k, n, i), fn, u, 0);
}

/* ---- dataflow ------------------------------------------------------------ */

static void *dup(SyFlow *f, const void *state)
{
    void *p = arena_alloc(&f->s->ctx->arena, f->size);
    memcpy(p, state, f->size);
    return p;
}

static int flow_stmt(SyFlow *f, NodeId st, void *state, int depth);

int sy_same_expr(const SyK *s, NodeId a, NodeId b)
{
    if (a == b)
        return 1;
    if (!a || !b)
        return 0;
    const Node *x = sy_node(s, a), *y = sy_node(s, b);
    if (x->op != y->op || x->n != y->n || x->sub != y->sub)
        return 0;
    switch (x->op) {
    case OP_INT: case OP_BOOL: return x->v.i == y->v.i;
    case OP_FLOAT: return x->v.f == y->v.f;
    case OP_NAME: return x->decl && x->decl == y->decl;
    case OP_SPECIAL: return 1;
    default: break;
    }
    if (x->op == OP_CAST && (x->dtype != y->dtype || x->lanes != y->lanes))
        return 0;
    if (!sy_same_expr(s, x->a, y->a) || !sy_same_expr(s, x->b, y->b) || !sy_same_expr(s, x->c, y->c))
        return 0;
    for (uint32_t i = 0; i < x->n; i++)
        if (!sy_same_expr(s, ir_list_at(s->k, x, i), ir_list_at(s->k, y, i)))
            return 0;
    return 1;
}

/* a condition whose value cannot change inside the block that tests it */
static int stable_cond(const SyK *s, NodeId e, int depth)
{
    if (!e || depth > 32)
        return 0;
    const Node *n = sy_node(s, e);
    switch (n->op) {
    case OP_INT: case OP_BOOL: case OP_FLOAT: case OP_SPECIAL: return 1;
    case OP_NAME: return n->decl && sy_node(s, n->decl)->op != OP_VAR;
    case OP_CAST: case OP_NEG: case OP_NOT: return stable_cond(s, n->a, depth + 1);
    case OP_SELECT:
        return stable_cond(s, ir_list_at(s->k, n, 0), depth + 1) &&
               stable_cond(s, ir_list_at(s->k, n, 1), depth + 1) &&
               stable_cond(s, ir_list_at(s->k, n, 2), depth + 1);
    default:
        return ir_ops[n->op].cls == OC_BIN && stable_cond(s, n->a, depth + 1) &&
               stable_cond(s, n->b, depth + 1);
    }
}

/* the known value of condition c on this path: 0 or 1, -1 unknown */
static int known_value(const SyFlow *f, NodeId c)
{
    for (uint32_t i = 0; i < f->nknown; i++)
        if (sy_same_expr(f->s, f->known[i], c))
            return f->kval[i];
    return -1;
}

/* the IF at statement i of block b whose condition a later IF of b tests
 * again; 0: none */
static NodeId correlated_if(const SyFlow *f, const Node *b, uint32_t i)
{
    const SyK *s = f->s;
    NodeId st = ir_list_at(s->k, b, i);
    const Node *n = sy_node(s, st);
    if (n->op != OP_IF || f->nknown == SY_MAX_KNOWN || known_value(f, n->a) >= 0 ||
        !stable_cond(s, n->a, 0))
        return 0;
    for (uint32_t j = i + 1; j < b->n; j++) {
        const Node *m = sy_node(s, ir_list_at(s->k, b, j));
        if (m->op == OP_IF && sy_same_expr(s, m->a, n->a))
            return st;
    }
    return 0;
}

static int flow_rest(SyFlow *f, const Node *b, uint32_t from, void *state, int depth);

/* the statements from i on, once with the condition of IF st true and once false */
static int flow_split(SyFlow *f, const Node *b, uint32_t i, NodeId st, void *state, int depth)
{
    void *other = dup(f, state);
    uint32_t k = f->nknown++;
    f->known[k] = sy_node(f->s, st)->a;
    f->kval[k] = 1;
    int lt = flow_rest(f, b, i, state, depth);
    f->kval[k] = 0;
    int le = flow_rest(f, b, i, other, depth);
    f->nknown = k;
    if (lt && le)
        f->join(f, state, other);
    else if (le)
        memcpy(state, other, f->size);
    return lt || le;
}

static int flow_rest(SyFlow *f, const Node *b, uint32_t from, void *state, int depth)
{
    for (uint32_t i = from; i < b->n; i++) {
        NodeId split = correlated_if(f, b, i);
        if (split)
            return flow_split(f, b, i, split, state, depth);
        if (!flow_stmt(f, ir_list_at(f->s->k, b, i), state, depth))
            return 0;
    }
    return 1;
}

static int flow_block(SyFlow *f, NodeId block, void *state, int depth)
{
    if (!block || depth > SY_MAX_DEPTH || sy_node(f->s, block)->op != OP_BLOCK)
        return 1;
    if (!flow_rest(f, sy_node(f->s, block), 0, state, depth))
        return 0;
    if (f->leave)
        f->leave(f, block, state);
    return 1;
}

static int flow_stmt(SyFlow *f, NodeId st, void *state, int depth)
{
    Node *n = sy_node(f->s, st);
    switch (n->op) {
    case OP_ROLE: case OP_REFERENCE: return 1;
    case OP_RETURN:
        if (f->exit)
            f->exit(f, st, state);
        return 0;
    case OP_FOR: {
        f->stmt(f, st, state);
        void *entry = dup(f, state), *head = dup(f, state), *body = dup(f, state), *next = dup(f, state);
        for (int it = 0; it < 12; it++) {
            memcpy(body, head, f->size);
            int live = flow_block(f, n->d, body, depth + 1);
            memcpy(next, entry, f->size);
            if (live)
                f->join(f, next, body);
            f->join(f, next, head);
            if (!memcmp(next, head, f->size))
                break;
            memcpy(head, next, f->size);
        }
        memcpy(state, head, f->size);
        return 1;
    }
    case OP_IF: {
        f->stmt(f, st, state);
        int kv = known_value(f, n->a);
        if (kv == 1)
            return flow_block(f, n->b, state, depth + 1);
        if (kv == 0 && n->c && sy_node(f->s, n->c)->op == OP_IF)
            return flow_stmt(f, n->c, state, depth + 1);
        if (kv == 0)
            return flow_block(f, n->c, state, depth + 1);
        void *els = dup(f, state);
        int lt = flow_block(f, n->b, state, depth + 1), le = 1;
        if (n->c && sy_node(f->s, n->c)->op == OP_IF)
            le = flow_stmt(f, n->c, els, depth + 1);
        else if (n->c)
            le = flow_block(f, n->c, els, depth + 1);
        if (lt && le)
            f->join(f, state, els);
        else if (le)
            memcpy(state, els, f->size);
        return lt || le;
    }
    default:
        f->stmt(f, st, state);
        return 1;
    }
}

int sy_flow(SyFlow *f, NodeId block, void *state)
{
    return flow_block(f, block, state, 0);
}
