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

static int flow_block(SyFlow *f, NodeId block, void *state, int depth)
{
    if (!block || depth > SY_MAX_DEPTH || sy_node(f->s, block)->op != OP_BLOCK)
        return 1;
    Node *b = sy_node(f->s, block);
    for (uint32_t i = 0; i < b->n; i++)
        if (!flow_stmt(f, ir_list_at(f->s->k, b, i), state, depth))
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
