/* roles.c — the roles pass: warp roles become one dispatch on the warp index.
 *
 *   role A: warpgroup 0, regs 40 { … }        if thread.x / 32 in [0, 4) {
 *   role B: warpgroups 1 .. 3, regs 232 { … }   setmaxnreg.dec 40; … }
 *                                             else if thread.x / 32 in [4, 12) {
 *                                               setmaxnreg.inc 232; … }
 * Inside a role body the special registers are role-relative (docs/tir.md §6):
 * thread.x, warp and wg have the role's first thread / warp / warpgroup
 * subtracted, `threads` is the role's size; `lane` is unchanged. Threads in no
 * role skip the dispatch. A block reduction inside a role reduces over the
 * role's warps and synchronizes them with a named barrier of its own: the
 * roles get ids 15, 14, ... in order (ir.h IrRoleRed); a kernel's own
 * `barrier` with one of those ids is reported (E0902). The kernel's register cap at entry (the launch
 * budget that setmaxnreg moves from) is recorded for the launch plan. */
#include <string.h>
#include "lower.h"
#include "targets.h"

typedef struct {
    int64_t first_warp, nwarps;
    int64_t warp;           /* lanes per warp (ir/targets) */
    int64_t group_warps;    /* warps per warpgroup (ir/targets) */
    uint8_t *seen;          /* nodes already rewritten (shared subtrees) */
    uint32_t red_barrier;   /* the named barrier of this role's block reductions (0: none yet) */
    uint32_t next_barrier;  /* the next one to hand out, from 15 down */
} Roles;

/* a `barrier ID, N` of the kernel whose constant ID the role reductions took */
static void taken_barriers(Lw *w, NodeId id, uint32_t lowest, int depth)
{
    Kernel *k = w->b.k;
    if (!id || depth > 400)
        return;
    Node *n = &k->nodes[id];
    int64_t bid;
    if ((n->op == OP_BAR_SYNC || n->op == OP_BAR_ARRIVE) && lw_const(w, n->a, &bid) && bid >= lowest &&
        bid <= 15 && !(n->flags & NF_ERROR)) {
        n->flags |= NF_ERROR;
        Diag *d = diag_report(w->b.ctx, E0902, n->span, "named barrier %lld is used by the block "
                              "reductions inside roles (ids %u .. 15)", (long long)bid, lowest);
        diag_help(w->b.ctx, d, "use an id below %u for this barrier", lowest);
        w->errors++;
    }
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        taken_barriers(w, kids[i], lowest, depth + 1);
    for (uint32_t i = 0; i < k->nodes[id].n; i++)
        taken_barriers(w, k->lists[k->nodes[id].list + i], lowest, depth + 1);
}

static int64_t warps_per_unit(const Roles *rs, const Node *r)
{
    return r->sub == UNIT_WARPGROUPS ? rs->group_warps : 1;
}

/* rewrites the specials of one role body in place */
static void relative(Lw *w, Roles *rs, NodeId id, uint32_t limit, int depth)
{
    Kernel *k = w->b.k;
    IrB *b = &w->b;
    if (!id || id >= limit || rs->seen[id] || depth > 400)
        return;
    rs->seen[id] = 1;
    Node n = k->nodes[id];
    if (n.op == OP_SPECIAL) {
        int64_t sub;
        switch (n.sub) {
        case SR_THREAD_X: sub = rs->first_warp * rs->warp; break;
        case SR_WARP: sub = rs->first_warp; break;
        case SR_WG: sub = rs->first_warp / rs->group_warps; break;
        case SR_NTHREADS: {
            NodeId c = irb_i32(b, rs->nwarps * rs->warp);
            irb_replace(b, id, c);
            return;
        }
        default: return;
        }
        if (!sub)
            return;
        NodeId raw = irb_special(b, (SpecialReg)n.sub);
        k->nodes[raw].flags |= n.flags & NF_FRESH;   /* an element's coordinates stay fresh */
        NodeId x = irb_bin(b, OP_SUB, raw, irb_i32(b, sub));
        irb_replace(b, id, x);
        return;
    }
    if (n.op == OP_BLOCK_ADD || n.op == OP_BLOCK_MAX || n.op == OP_BLOCK_MIN) {
        if (!rs->red_barrier)
            rs->red_barrier = rs->next_barrier--;
        IrRoleRed rr = {(uint32_t)rs->first_warp, (uint32_t)rs->nwarps, rs->red_barrier};
        k->nodes[id].v.i = ir_role_red_pack(rr);
    }
    /* the children that need a visit only (most are none, or seen) */
    NodeId kids[4] = {n.a, n.b, n.c, n.d};
    for (int i = 0; i < 4; i++)
        if (kids[i] < limit && !rs->seen[kids[i]] && ir_walk_child(k, kids[i]))
            relative(w, rs, kids[i], limit, depth + 1);
    for (uint32_t i = 0; i < n.n; i++) {
        NodeId c = k->lists[n.list + i];
        if (c < limit && !rs->seen[c] && ir_walk_child(k, c))
            relative(w, rs, c, limit, depth + 1);
    }
}

uint32_t pass_roles(CakeCtx *ctx, Kernel *k, Target tg, uint32_t *maxnreg)
{
    Lw w;
    lw_init(&w, ctx, k, tg, NULL);
    IrB *b = &w.b;
    Roles rs;
    memset(&rs, 0, sizeof rs);
    rs.next_barrier = 15;
    rs.warp = tg_warp(tg);
    rs.group_warps = tg_info(tg)->group_warps;
    uint32_t limit = k->nnodes;
    rs.seen = arena_alloc(&ctx->arena, limit);
    Node *body = lw_node(&w, k->body);
    IrList out = {0};
    NodeId chain_first = 0, chain_last = 0;
    int any_regs = 0;
    int64_t threads = ce_block_threads(ctx, k, tg);
    int64_t budget = tg_launch_regs(tg_info(tg), threads);
    *maxnreg = 0;
    for (uint32_t i = 0; i < body->n; i++) {
        NodeId s = ir_list_at(k, lw_node(&w, k->body), i);
        Node *r = lw_node(&w, s);
        if (r->op != OP_ROLE) {
            irb_push(b, &out, s);
            chain_first = chain_last = 0;
            continue;
        }
        b->span = r->span;
        int64_t a = 0, e = 0, regs = 0;
        lw_const(&w, r->a, &a);
        if (!r->b || !lw_const(&w, r->b, &e))
            e = a + 1;
        rs.first_warp = a * warps_per_unit(&rs, r);
        rs.nwarps = (e - a) * warps_per_unit(&rs, r);
        rs.red_barrier = 0;
        relative(&w, &rs, r->d, limit, 0);
        IrList rb = {0};
        if (r->c && lw_const(&w, r->c, &regs) && regs != budget) {
            NodeId sm = irb_stmt(b, OP_L_SETMAXNREG, NULL, 0);
            lw_node(&w, sm)->sub = regs > budget;
            lw_node(&w, sm)->v.i = regs;
            irb_push(b, &rb, sm);
        }
        if (r->c)
            any_regs = 1;
        Node *rbody = lw_node(&w, lw_node(&w, s)->d);
        for (uint32_t j = 0; j < rbody->n; j++)
            irb_push(b, &rb, ir_list_at(k, rbody, j));
        NodeId warp = irb_divmod_c(b, irb_special(b, SR_THREAD_X), (int)rs.warp, 0);
        NodeId lo = irb_bin(b, OP_GE, warp, irb_i32(b, rs.first_warp));
        NodeId hi = irb_bin(b, OP_LT, irb_clone(b, warp), irb_i32(b, rs.first_warp + rs.nwarps));
        NodeId cond = irb_bin(b, OP_AND, lo, hi);
        NodeId iff = irb_if(b, cond, irb_list_block(b, &rb), 0);
        if (chain_last) {
            Node *prev = lw_node(&w, chain_last);
            prev->c = iff;
            lw_node(&w, iff)->flags |= NF_ELSEIF;
        } else {
            chain_first = iff;
            irb_push(b, &out, chain_first);
        }
        chain_last = iff;
    }
    body = lw_node(&w, k->body);
    body->list = ir_list(ctx, k, out.v, out.n);
    body->n = out.n;
    if (rs.next_barrier < 15)
        taken_barriers(&w, k->body, rs.next_barrier + 1, 0);
    if (any_regs)
        *maxnreg = (uint32_t)budget;
    return w.errors;
}
