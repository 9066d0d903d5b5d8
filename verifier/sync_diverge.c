/* sync_diverge.c — collectives under divergent control, and named barriers.
 *
 * A uniformity analysis gives every value a level: uniform over the role (or
 * block), per warpgroup, per warp, or per thread (thread.x, lane, shuffles,
 * loads from per-thread addresses, vars assigned under such control). Walking
 * the statements with the level of the control that reaches them (enclosing
 * ifs, loop bounds, earlier conditional returns), a collective whose scope is
 * wider than that level is an error (E0750): `sync` and block reductions need
 * block-uniform control, pipeline members role-uniform control, wgmma
 * warpgroup-uniform control, named barriers, mma.sync, ldmatrix and shuffles
 * warp-uniform control. `sync` inside one of several roles deadlocks (E0753).
 * Named barriers need ids 1..15 (0 is `sync`'s) and thread counts that are
 * multiples of the warp width matching the threads that reach them (E0751, E0752). */
#include <string.h>
#include "sync.h"

enum { U_UNI, U_WG, U_WARP, U_THREAD };
static const char *const lvl_name[] = {"uniform", "warpgroup", "warp", "thread"};

typedef struct {
    SyK *s;
    uint8_t *lvl;      /* per declaration: level of its value (fixpoint) */
    int changed;
    int has_sync;
} Uni;

/* `warp` is uniform in a role (or block) of one warp, `wg` in one of one warpgroup */
static int special_level(SyK *s, NodeId role, uint16_t sr)
{
    int64_t first, count;
    if (!sy_role_range(s, role, &first, &count))
        count = 1 << 20;
    switch (sr) {
    case SR_THREAD_X: case SR_THREAD_Y: case SR_THREAD_Z: case SR_LANE: return U_THREAD;
    case SR_WARP: return count <= s->warp ? U_UNI : U_WARP;
    case SR_WG: return count <= tg_unit_threads(s->tg, UNIT_WARPGROUPS) ? U_UNI : U_WG;
    default: return U_UNI;
    }
}

static int level(Uni *u, NodeId e, int depth)
{
    SyK *s = u->s;
    if (!e || depth > 100)
        return U_UNI;
    Node *n = sy_node(s, e);
    switch (n->op) {
    case OP_INT: case OP_FLOAT: case OP_BOOL: case OP_COLON: return U_UNI;
    case OP_SPECIAL: return special_level(s, s->role[s->stmt_of[e]], n->sub);
    case OP_NAME: return sy_decl(s, e) ? u->lvl[sy_decl(s, e)] : U_UNI;
    case OP_SHFL_XOR: case OP_SHFL_DOWN: case OP_SHFL_UP: case OP_SHFL_IDX:
    case OP_LDMATRIX: case OP_LDMATRIX_T:
        return U_THREAD;
    case OP_WARP_ADD: case OP_WARP_MAX: case OP_WARP_MIN: {
        int l = level(u, ir_list_at(s->k, n, 0), depth + 1);
        return l > U_WARP ? U_WARP : l;
    }
    case OP_BLOCK_ADD: case OP_BLOCK_MAX: case OP_BLOCK_MIN: return U_UNI;
    default: break;
    }
    int l = U_UNI;
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++) {
        int k = level(u, kids[i], depth + 1);
        if (k > l)
            l = k;
    }
    for (uint32_t i = 0; i < n->n; i++) {
        int k = level(u, ir_list_at(s->k, n, i), depth + 1);
        if (k > l)
            l = k;
    }
    return l;
}

static void raise(Uni *u, NodeId decl, int l)
{
    if (decl && l > u->lvl[decl]) {
        u->lvl[decl] = (uint8_t)l;
        u->changed = 1;
    }
}

/* ---- the walk ---------------------------------------------------------- */

typedef struct { int lvl; NodeId src; } Ctl;

static void walk_block(Uni *u, NodeId block, Ctl *c, int report);

static const char *why(Uni *u, Ctl c)
{
    SyK *s = u->s;
    Node *n = sy_node(s, c.src);
    const char *what = n->op == OP_FOR ? "the bounds of this loop" : n->op == OP_RETURN ? "this early `return`"
                                                                                         : "this condition";
    return ir_fmt(s->ctx, "%s %s per %s", what, n->op == OP_FOR ? "differ" : "differs", lvl_name[c.lvl]);
}

static void need(Uni *u, NodeId at, Ctl c, int max, const char *what, const char *help)
{
    SyK *s = u->s;
    if (c.lvl <= max)
        return;
    Diag *d = sy_report(s, E0750, at, "%s is reached under control that differs per %s: threads that skip it "
                        "leave the others waiting (deadlock or undefined behavior)", what, lvl_name[c.lvl]);
    if (d) {
        diag_note(s->ctx, d, sy_span(s, c.src), "%s", why(u, c));
        diag_help(s->ctx, d, "%s", help);
    }
}

typedef struct { Uni *u; Ctl c; } ExprCx;

static void expr_colls(SyK *s, NodeId e, void *p)
{
    ExprCx *x = p;
    uint16_t op = sy_node(s, e)->op;
    if (op == OP_BLOCK_ADD || op == OP_BLOCK_MAX || op == OP_BLOCK_MIN) {
        x->u->has_sync = 1;
        need(x->u, e, x->c, U_UNI, ir_fmt(s->ctx, "`%s` (a block-wide reduction with barriers)", ir_ops[op].spelling),
             "compute the reduction where every thread of the block gets, and branch on its result afterwards");
    } else if (ir_ops[op].flags & OF_WARP) {
        need(x->u, e, x->c, U_WARP, ir_fmt(s->ctx, "`%s` (a warp-collective operation)", ir_ops[op].spelling),
             "let whole warps take the branch (condition on `warp`, not `lane` or `thread.x`), or hoist the operation");
    } else if (op == OP_P_ACQUIRE || op == OP_P_WAIT || op == OP_P_COMMIT || op == OP_P_RELEASE) {
        need(x->u, e, x->c, U_UNI, ir_fmt(s->ctx, "`%s`", sy_text(s, e)),
             "pipeline members are called by the whole role: guard only the work around them");
    }
}

static void check_stmt(Uni *u, NodeId st, Ctl c)
{
    SyK *s = u->s;
    Node *n = sy_node(s, st);
    switch (n->op) {
    case OP_SYNC:
        u->has_sync = 1;
        need(u, st, c, U_UNI, "`sync` (a block-wide barrier)",
             "move `sync` out of the branch, or synchronize only the threads that take it with a named barrier "
             "(`barrier 1, N`)");
        if (s->role[st]) {
            Diag *d = sy_report(s, E0753, st, "`sync` inside %s waits for every thread of the block, but the other "
                                "roles never reach it (deadlock)", sy_role_name(s, s->role[st]));
            int64_t first, count;
            if (d && sy_role_range(s, s->role[st], &first, &count))
                diag_help(s->ctx, d, "synchronize the role's own threads with a named barrier: `barrier 1, %lld`",
                          (long long)count);
        }
        break;
    case OP_BAR_SYNC: case OP_BAR_ARRIVE:
        need(u, st, c, U_WARP, "a named barrier", "named barriers count whole warps: let whole warps take the branch");
        break;
    case OP_TMA_LOAD: case OP_TMA_STORE: case OP_TMA_WAIT: case OP_MB_EXPECT: {
        int64_t unit = sy_unit_size(s, s->role[st]), wg = tg_unit_threads(s->tg, UNIT_WARPGROUPS);
        int lvl = !s->role[st] ? U_UNI : unit == wg ? U_WG : unit == s->warp ? U_WARP : U_UNI;
        need(u, st, c, lvl, ir_fmt(s->ctx, "`%s` (single-issue: its %s's first thread issues it)", ir_ops[n->op].spelling,
                                  !s->role[st] ? "block" : unit == wg ? "warpgroup" : "warp"),
             "single-issue statements need control that is uniform over the issuing unit: drop the thread "
             "condition (the compiler elects the issuing thread)");
        break;
    }
    case OP_WGMMA: case OP_WGMMA_WAIT:
        need(u, st, c, U_WG, ir_fmt(s->ctx, "`%s` (a warpgroup-collective operation)", ir_ops[n->op].spelling),
             "let whole warpgroups take the branch (condition on `wg` or uniform values)");
        break;
    case OP_MMA: case OP_MFMA: case OP_STMATRIX:
        need(u, st, c, U_WARP, ir_fmt(s->ctx, "`%s` (a warp-collective operation)", ir_ops[n->op].spelling),
             "let whole warps take the branch (condition on `warp`, not `lane` or `thread.x`)");
        break;
    default: break;
    }
    ExprCx x = {u, c};
    if (n->op != OP_FOR && n->op != OP_IF && n->op != OP_ROLE)
        sy_stmt_exprs(s, st, expr_colls, &x);
}

/* contains a `return` somewhere below */
static int has_return(SyK *s, NodeId block, int depth)
{
    if (!block || depth > 100)
        return 0;
    Node *n = sy_node(s, block);
    if (n->op == OP_RETURN)
        return 1;
    if (n->op == OP_IF)
        return has_return(s, n->b, depth + 1) || has_return(s, n->c, depth + 1);
    if (n->op == OP_FOR)
        return has_return(s, n->d, depth + 1);
    if (n->op != OP_BLOCK)
        return 0;
    for (uint32_t i = 0; i < n->n; i++)
        if (has_return(s, ir_list_at(s->k, n, i), depth + 1))
            return 1;
    return 0;
}

static void walk_stmt(Uni *u, NodeId st, Ctl *c, int report)
{
    SyK *s = u->s;
    Node *n = sy_node(s, st);
    Ctl inner = *c;
    int l;
    switch (n->op) {
    case OP_ROLE: {
        Ctl rc = {U_UNI, 0};
        walk_block(u, n->d, &rc, report);
        return;
    }
    case OP_LET: raise(u, st, level(u, n->b, 0)); break;
    case OP_VAR: case OP_REG: raise(u, st, n->b ? level(u, n->b, 0) : U_UNI); raise(u, st, c->lvl); break;
    case OP_ASSIGN:
        if (sy_node(s, n->a)->op == OP_NAME) {
            raise(u, sy_decl(s, n->a), level(u, n->b, 0));
            raise(u, sy_decl(s, n->a), c->lvl);
        }
        break;
    case OP_FOR:
        l = level(u, n->a, 0);
        if (level(u, n->b, 0) > l) l = level(u, n->b, 0);
        if (level(u, n->c, 0) > l) l = level(u, n->c, 0);
        raise(u, st, l > c->lvl ? l : c->lvl);
        if (l > inner.lvl) {
            inner.lvl = l;
            inner.src = st;
        }
        walk_block(u, n->d, &inner, report);
        break;
    case OP_IF:
        l = level(u, n->a, 0);
        if (l > inner.lvl) {
            inner.lvl = l;
            inner.src = n->a;
        }
        walk_block(u, n->b, &inner, report);
        if (n->c && sy_node(s, n->c)->op == OP_IF)
            walk_stmt(u, n->c, &inner, report);
        else
            walk_block(u, n->c, &inner, report);
        if (l > c->lvl && has_return(s, st, 0)) { /* later statements see the divergence */
            c->lvl = l;
            c->src = n->a;
        }
        break;
    default: break;
    }
    if (report)
        check_stmt(u, st, *c);
}

static void walk_block(Uni *u, NodeId block, Ctl *c, int report)
{
    if (!block || sy_node(u->s, block)->op != OP_BLOCK)
        return;
    Node *b = sy_node(u->s, block);
    Ctl local = *c;
    for (uint32_t i = 0; i < b->n; i++)
        walk_stmt(u, ir_list_at(u->s->k, b, i), &local, report);
}

/* ---- named barriers (E0751, E0752) --------------------------------------- */

typedef struct { NodeId sites[64]; uint32_t n; } NamedBars;

static void gather_named(SyK *s, NodeId st, void *p)
{
    NamedBars *nb = p;
    uint16_t op = sy_node(s, st)->op;
    if ((op == OP_BAR_SYNC || op == OP_BAR_ARRIVE) && nb->n < 64)
        nb->sites[nb->n++] = st;
}

static int span_in(Span in, Span out)
{
    return in.file == out.file && in.lo >= out.lo && in.hi <= out.hi;
}

/* 1 when statements a and b lie on different arms of one if/else */
static int other_arms(SyK *s, NodeId a, NodeId b)
{
    for (NodeId f = s->up[a]; f; f = s->up[f]) {
        Node *n = sy_node(s, f);
        if (n->op != OP_IF || !n->c || !sy_encloses(s, f, b))
            continue;
        Span then_s = sy_node(s, n->b)->span, else_s = sy_node(s, n->c)->span;
        Span sa = sy_node(s, a)->span, sb = sy_node(s, b)->span;
        return (span_in(sa, then_s) && span_in(sb, else_s)) ||
               (span_in(sa, else_s) && span_in(sb, then_s));
    }
    return 0;
}

static void check_named(Uni *u)
{
    SyK *s = u->s;
    NamedBars nb = {.n = 0};
    sy_each_stmt(s, s->k->body, gather_named, &nb);
    int64_t nbars = tg_info(s->tg)->max_named_barriers; /* 0: none (caps.c reports the barrier) */
    for (uint32_t i = 0; i < nb.n; i++) {
        Node *n = sy_node(s, nb.sites[i]);
        int64_t id, count;
        if (nbars && sy_const(s, n->a, &id) && (id <= 0 || id >= nbars)) {
            Diag *d = id == 0
                ? sy_report(s, E0752, n->a, "named barrier 0 is reserved for `sync` and the compiler's block "
                            "reductions: sharing it miscounts arrivals")
                : sy_report(s, E0752, n->a, "named barrier id %lld is out of range: there are %lld hardware "
                            "barriers, 0 to %lld", (long long)id, (long long)nbars, (long long)nbars - 1);
            if (d)
                diag_help(s->ctx, d, "use an id from 1 to %lld (0 belongs to `sync`)", (long long)nbars - 1);
        }
        if (!sy_const(s, n->b, &count))
            continue;
        if (count <= 0 || count % s->warp || (s->block_threads && count > s->block_threads)) {
            Diag *d = count % s->warp || count <= 0
                ? sy_report(s, E0751, n->b, "named barrier count %lld is not a positive multiple of %lld (barriers "
                            "count whole warps)", (long long)count, (long long)s->warp)
                : sy_report(s, E0751, n->b, "named barrier count %lld is larger than the block (%lld threads)",
                            (long long)count, (long long)s->block_threads);
            if (d)
                diag_help(s->ctx, d, "count the threads of the warps that take part: a multiple of %lld",
                          (long long)s->warp);
            continue;
        }
        if (!sy_const(s, n->a, &id) || s->named_decided) /* the simulation counted them */
            continue;
        /* threads that reach barrier `id`: per role, the largest site */
        int64_t total = 0;
        int exact_all = 1, first_site = 1;
        for (uint32_t j = 0; j < nb.n; j++) {
            int64_t jd, jc;
            Node *m = sy_node(s, nb.sites[j]);
            if (!sy_const(s, m->a, &jd) || jd != id)
                continue;
            if (j < i)
                first_site = 0;
            if (!sy_const(s, m->b, &jc) || jc != count)
                exact_all = 0;
        }
        if (!first_site || !exact_all)
            continue;
        for (uint32_t j = 0; j < nb.n && exact_all; j++) {
            int64_t jd, best = 0;
            if (!sy_const(s, sy_node(s, nb.sites[j])->a, &jd) || jd != id)
                continue;
            int seen = 0;
            for (uint32_t h = 0; h < j; h++) {
                int64_t hd;
                if (sy_const(s, sy_node(s, nb.sites[h])->a, &hd) && hd == id &&
                    s->role[nb.sites[h]] == s->role[nb.sites[j]])
                    seen = 1;
            }
            if (seen)
                continue;
            NodeId chosen[64];
            uint32_t nchosen = 0;
            int64_t disjoint = 0;
            for (uint32_t h = j; h < nb.n; h++) {
                int64_t hd, t;
                int ex;
                if (!sy_const(s, sy_node(s, nb.sites[h])->a, &hd) || hd != id ||
                    s->role[nb.sites[h]] != s->role[nb.sites[j]])
                    continue;
                t = sy_threads_at(s, nb.sites[h], &ex);
                if (!ex || t <= 0)
                    exact_all = 0;
                if (t > best)
                    best = t;
                int excl = 1; /* sites on other arms of an if: different threads, they add up */
                for (uint32_t c = 0; c < nchosen; c++)
                    excl &= other_arms(s, chosen[c], nb.sites[h]);
                if (excl) {
                    chosen[nchosen++] = nb.sites[h];
                    disjoint += t;
                }
            }
            total += disjoint > best ? disjoint : best;
        }
        if (!exact_all || total == count)
            continue;
        int dynamic_ids = 0; /* an id like `1 + wg` may be this one: it may bring the threads missing */
        for (uint32_t j = 0; j < nb.n; j++) {
            int64_t jd;
            dynamic_ids |= !sy_const(s, sy_node(s, nb.sites[j])->a, &jd);
        }
        if (dynamic_ids && total < count) /* undecided (the simulation could not run): no false alarm */
            continue;
        Diag *d = sy_report(s, E0751, n->b, "named barrier %lld waits for %lld threads, but %lld reach it: %s",
                            (long long)id, (long long)count, (long long)total,
                            total < count ? "it never opens (deadlock)" : "it opens before all of them arrive");
        if (d) {
            for (uint32_t j = 0; j < nb.n; j++) {
                int64_t jd;
                int ex;
                if (sy_const(s, sy_node(s, nb.sites[j])->a, &jd) && jd == id)
                    diag_note(s->ctx, d, sy_span(s, nb.sites[j]), "%lld threads of %s reach it here",
                              (long long)sy_threads_at(s, nb.sites[j], &ex),
                              sy_role_name(s, s->role[nb.sites[j]]));
            }
            if (!dynamic_ids)
                diag_help(s->ctx, d, "count the threads of every role that passes the barrier: `barrier %lld, %lld`",
                          (long long)id, (long long)total);
        }
    }
}

void sy_check_diverge(SyK *s)
{
    Uni u = {s, arena_alloc(&s->ctx->arena, s->k->nnodes), 0, 0};
    for (int it = 0; it < 6; it++) { /* levels of lets and vars to a fixpoint */
        u.changed = 0;
        Ctl c = {U_UNI, 0};
        walk_block(&u, s->k->body, &c, 0);
        if (!u.changed)
            break;
    }
    Ctl c = {U_UNI, 0};
    walk_block(&u, s->k->body, &c, 1);
    check_named(&u);
}
