/* sync_writers.c — shared tiles written by every warpgroup of a role alike
 * (E0766).
 *
 * A tile store that a warpgroup issues together (`stmatrix Os[w] <- bf16(o)`,
 * `store Ts[0 : +64, :] <- acc`) writes the same elements from each
 * warpgroup of its role when nothing in the reference tells the warpgroups
 * apart (no `wg`, `warp`, `thread.x` or `lane`, through its `let`s) and no
 * enclosing `if` lets only some of them through: two warpgroups write one
 * tile with nothing ordering them (a write-write race), and what each was
 * meant to write elsewhere is never written. The planted form: `stmatrix
 * Os[0]` for `Os[wg]` in flash_attn_fwd_pp's epilogue. */
#include "sync.h"

/* 1 when e (through its lets) reads a register that differs between the
 * warpgroups of a role */
static int per_thread(SyK *s, NodeId e, int depth)
{
    if (!e || depth > 48)
        return 0;
    Node *n = sy_node(s, e);
    if (n->op == OP_SPECIAL)
        return n->sub == SR_THREAD_X || n->sub == SR_WARP || n->sub == SR_WG || n->sub == SR_LANE;
    if (n->op == OP_NAME) {
        NodeId d = sy_decl(s, e);
        if (!d)
            return 0;
        const Node *dn = sy_node(s, d);
        if (dn->op == OP_LET)
            return per_thread(s, dn->b, depth + 1);
        if (dn->op == OP_FOR) /* the same in every warpgroup when its range is */
            return per_thread(s, dn->a, depth + 1) || per_thread(s, dn->b, depth + 1) ||
                   per_thread(s, dn->c, depth + 1);
        return dn->op == OP_VAR; /* a `var`: assigned anywhere (taken as per thread) */
    }
    if (ir_ops[n->op].cls == OC_STMT)
        return 0;
    if (per_thread(s, n->a, depth + 1) || per_thread(s, n->b, depth + 1) || per_thread(s, n->c, depth + 1) ||
        per_thread(s, n->d, depth + 1))
        return 1;
    for (uint32_t i = 0; i < n->n; i++)
        if (per_thread(s, ir_list_at(s->k, n, i), depth + 1))
            return 1;
    return 0;
}

/* 1 when ref selects a tile view (a slice or `:` in some index): a store of a register tile */
static int tile_view(SyK *s, NodeId ref, int depth)
{
    if (!ref || depth > 16)
        return 0;
    Node *n = sy_node(s, ref);
    if (n->op == OP_NAME)
        return 1; /* the whole tile */
    if (n->op != OP_INDEX && n->op != OP_TRANS)
        return 0;
    for (uint32_t i = 0; i < n->n; i++) {
        uint16_t op = sy_node(s, ir_list_at(s->k, n, i))->op;
        if (op == OP_SLICE || op == OP_COLON)
            return 1;
    }
    return tile_view(s, n->a, depth + 1);
}

static void each_stmt(SyK *s, NodeId st, void *u)
{
    (void)u;
    Node *n = sy_node(s, st);
    NodeId role = s->role[st];
    int64_t first, count;
    int64_t wgt = tg_unit_threads(s->tg, UNIT_WARPGROUPS);
    if (role ? !sy_role_range(s, role, &first, &count) : !(count = s->block_threads))
        return;
    if (count <= wgt)
        return;
    int collective = n->op == OP_STMATRIX ||
                     (n->op == OP_STORE && sy_is_shared_ref(s, n->a) && tile_view(s, n->a, 0) &&
                      !per_thread(s, n->b, 0));
    if (!collective || !sy_is_shared_ref(s, n->a) || per_thread(s, n->a, 0))
        return;
    for (NodeId up = s->up[st]; up; up = s->up[up])
        if (sy_node(s, up)->op == OP_IF && per_thread(s, sy_node(s, up)->a, 0))
            return; /* only some warpgroups pass */
    Diag *d = sy_report(s, E0766, n->a, "every warpgroup of %s (%lld of them) writes `%s` here: nothing in the "
                        "reference tells them apart, so they write the same elements with nothing ordering "
                        "them (a write-write race), and the rows each meant to write elsewhere stay unwritten",
                        role ? sy_role_name(s, role) : "the block", (long long)(count / wgt), sy_text(s, n->a));
    if (d)
        diag_help(s->ctx, d, "index the tile by the warpgroup (as `%s[wg]`), or guard the store so that one "
                  "warpgroup writes it", ir_symstr(s->ctx, sy_node(s, sy_ref_base(s, n->a))->name));
}

void sy_check_writers(SyK *s)
{
    sy_each_stmt(s, s->k->body, each_stmt, NULL);
}
