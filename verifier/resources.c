/* resources.c — resource budgets per declared target: the role table, threads
 * per block, role placement (inside the block, disjoint, warpgroup-aligned),
 * setmaxnreg budgets (64K registers per SM), shared memory per block, and grid
 * extents. Reports E05xx (and W05xx). */
#include <stdlib.h>
#include <string.h>
#include "vpriv.h"
#include "smem.h"
#include "layout.h"

static Node *N(Ver *v, NodeId n) { return &v->k->nodes[n]; }

/* ---- the role table ----------------------------------------------------- */

static void collect_role(Ver *v, NodeId n, void *arg)
{
    (void)arg;
    const Node *x = N(v, n);
    if (x->op != OP_ROLE)
        return;
    VRole r;
    memset(&r, 0, sizeof r);
    r.node = n;
    r.unit = x->sub;
    int64_t a, b = 0, c = 0;
    int per = x->sub == UNIT_WARPGROUPS ? 4 : 1;
    if (v_const(v, x->a, &a) && (!x->b || v_const(v, x->b, &b)) && a >= 0 && a < (1 << 20) &&
        b < (1 << 20)) {
        r.first = a * per;
        r.end = (x->b ? b : a + 1) * per;
    } else {
        r.first = r.end = -1;
    }
    if (x->c && v_const(v, x->c, &c))
        r.regs = c;
    v->roles = arena_realloc(&v->ctx->arena, v->roles, v->nroles * sizeof *v->roles,
                             (v->nroles + 1) * sizeof *v->roles);
    v->roles[v->nroles++] = r;
}

void ver_roles(Ver *v)
{
    v_walk(v, v->k->body, collect_role, NULL);
}

/* ---- shared memory ------------------------------------------------------ */

static int64_t align_up(int64_t x, int64_t a) { return a > 1 ? (x + a - 1) / a * a : x; }

/* tiles are aligned to 128 bytes, swizzled ones to the swizzle repeat 8 x S (5.2) */
static int64_t shared_align(const Kernel *k, NodeId decl)
{
    const Node *n = &k->nodes[decl];
    int64_t al = n->v.attr.swizzle ? 8 * (int64_t)n->v.attr.swizzle : 128;
    return n->v.attr.align > al ? n->v.attr.align : al;
}

/* bytes of a SHARED declaration under bindings env (NULL: defaults) */
static int64_t shared_bytes_env(const CakeCtx *ctx, const Kernel *k, NodeId decl, const CeEnv *env)
{
    const Node *n = &k->nodes[decl];
    if (n->op != OP_SHARED || !n->a)
        return -1;
    const Node *t = &k->nodes[n->a];
    int64_t bytes = (int64_t)ir_dtype_bytes((DType)t->dtype) * (t->lanes ? t->lanes : 1);
    if (t->dtype == DT_BOOL)
        bytes = 1;
    for (uint32_t i = 0; i < t->n; i++) {
        int64_t d;
        if (!ce_eval_int(ctx, k, k->lists[t->list + i], env, &d) || d < 0)
            return -1;
        if (__builtin_mul_overflow(bytes, d, &bytes) || bytes > SMEM_HUGE)
            bytes = SMEM_HUGE;
    }
    return align_up(bytes, shared_align(k, decl));
}

int64_t ver_shared_bytes(const CakeCtx *ctx, const Kernel *k, NodeId decl)
{
    return shared_bytes_env(ctx, k, decl, NULL);
}

static int by_bytes_desc(const void *a, const void *b)
{
    const SmemItem *x = a, *y = b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : (x->decl > y->decl) - (x->decl < y->decl);
}

/* params that appear in shared extents: candidates to shrink */
static int mentions_param(const Kernel *k, NodeId e, NodeId param, int depth)
{
    if (!e || depth > 64)
        return 0;
    const Node *n = &k->nodes[e];
    if (n->op == OP_NAME && n->decl == param)
        return 1;
    if (mentions_param(k, n->a, param, depth + 1) || mentions_param(k, n->b, param, depth + 1))
        return 1;
    for (uint32_t i = 0; i < n->n; i++)
        if (mentions_param(k, k->lists[n->list + i], param, depth + 1))
            return 1;
    return 0;
}

/* is param p the stage count of a pipeline or the leading dim of a staged tile? */
static int stage_param(Ver *v, NodeId p)
{
    for (NodeId id = 1; id < v->k->nnodes; id++) {
        const Node *x = N(v, id);
        if (x->op == OP_PIPELINE && mentions_param(v->k, x->a, p, 0))
            return 1;
        if (x->op == OP_SHARED && x->a && N(v, x->a)->n >= 3 &&
            mentions_param(v->k, ir_list_at(v->k, N(v, x->a), 0), p, 0))
            return 1;
    }
    return 0;
}

/* finds a smaller value of one parameter that brings the total under limit:
 * stage counts first (one less at a time), then tile sizes (halved) */
static void smem_suggest(Ver *v, Diag *d, Target tg, int64_t limit)
{
    Kernel *k = v->k;
    int said = 0;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < k->nparams && said < 2; i++) {
            NodeId p = k->params[i];
            int stage = stage_param(v, p);
            if (stage != (pass == 0))
                continue;
            int used = stage;
            for (NodeId id = 1; id < k->nnodes && !used; id++)
                used = N(v, id)->op == OP_SHARED && mentions_param(k, N(v, id)->a, p, 0);
            int64_t cur;
            if (!used || !v_const(v, N(v, p)->a, &cur) || cur <= 1)
                continue;
            for (int64_t val = stage ? cur - 1 : cur / 2; val >= 1; val = stage ? val - 1 : val / 2) {
                CeBinding b = {N(v, p)->name, val};
                CeEnv env = {.b = &b, .n = 1};
                SmemPlan plan;
                an_smem_plan(v->ctx, k, tg, &env, &plan);
                int64_t total = plan.total;
                if (total <= limit) {
                    diag_help(v->ctx, d, "%s`%s = %lld` (now %lld): %lld bytes", said ? "or " :
                              "reduce ", v_name(v, p), (long long)val, (long long)cur, (long long)total);
                    said++;
                    break;
                }
                if (cur - val > 64)
                    break;
            }
        }
    if (!said)
        diag_help(v->ctx, d, "reduce the number of stages or the tile sizes");
}

/* the kernel's shared-memory plan (analysis/smem.h: the same count the abi
 * pass lays the buffer out with) against each target's limit */
static void check_smem(Ver *v)
{
    int tg = -1;
    SmemPlan plan = {0};
    for (int t = 0; t < TG__COUNT; t++) { /* the tightest limit exceeded */
        if (!v->k->targets[t])
            continue;
        SmemPlan p;
        an_smem_plan(v->ctx, v->k, (Target)t, NULL, &p);
        if (p.total > tg_info((Target)t)->max_smem_per_block &&
            (tg < 0 || tg_info((Target)t)->max_smem_per_block < tg_info((Target)tg)->max_smem_per_block)) {
            tg = t;
            plan = p;
        }
    }
    if (tg < 0 || !plan.n)
        return;
    SmemItem *items = plan.items;
    uint32_t n = plan.n;
    int64_t total = plan.total;
    qsort(items, n, sizeof *items, by_bytes_desc);
    const TargetInfo *ti = tg_info((Target)tg);
    Diag *d = total >= SMEM_HUGE
        ? v_report(v, E0501, items[0].decl, "shared memory per block is over %lld bytes, far over the "
                   "limit of %lld bytes on %s", (long long)SMEM_HUGE, (long long)ti->max_smem_per_block,
                   ti->name)
        : v_report(v, E0501, items[0].decl, "shared memory per block is %lld bytes, %lld over "
                   "the limit of %lld bytes on %s", (long long)total,
                   (long long)(total - ti->max_smem_per_block), (long long)ti->max_smem_per_block,
                   ti->name);
    for (uint32_t i = 0; i < n; i++) {
        const Node *x = N(v, items[i].decl);
        const char *what = x->op == OP_SHARED ? "shared tile" : x->op == OP_MBARRIER ? "mbarrier"
                         : x->op == OP_PIPELINE ? "pipeline barriers of" : NULL;
        if (!what)
            diag_note(v->ctx, d, x->span, "block-reduction scratch (`%s`): %lld bytes",
                      ir_ops[x->op].spelling, (long long)items[i].bytes);
        else if (x->op == OP_SHARED)
            diag_note(v->ctx, d, x->span, "%s `%s` (%s): %lld bytes", what, v_name(v, items[i].decl),
                      vt_str(v, x->type), (long long)items[i].bytes);
        else
            diag_note(v->ctx, d, x->span, "%s `%s`: %lld bytes", what, v_name(v, items[i].decl),
                      (long long)items[i].bytes);
    }
    diag_note(v->ctx, d, v->k->target_spans[tg], "%s allows %lld bytes of shared memory per block",
              ti->name, (long long)ti->max_smem_per_block);
    smem_suggest(v, d, (Target)tg, ti->max_smem_per_block);
}

/* ---- threads, roles, registers ------------------------------------- */

/* does the kernel use roles, warp-scope ops or block reductions (4.4)? */
static int uses_warps(Ver *v)
{
    if (v->nroles)
        return 1;
    for (NodeId n = 1; n < v->k->nnodes; n++) {
        const Node *x = N(v, n);
        if (v->in_ref[n])
            continue;
        if ((ir_ops[x->op].flags & (OF_WARP | OF_TC)) || (ir_ops[x->op].flags & OF_BLOCK && x->op != OP_SYNC))
            return 1;
        if (x->op == OP_REG && x->type && vt(v, x->type)->scope >= SC_WARP)
            return 1;
    }
    return 0;
}

static void check_block(Ver *v)
{
    Kernel *k = v->k;
    if (!k->block_size || v_err(v, k->block_size))
        return;
    int over = 0, warned = 0;
    for (int t = 0; t < TG__COUNT; t++) {
        if (!k->targets[t] || !v->block_threads[t])
            continue;
        const TargetInfo *ti = tg_info((Target)t);
        int64_t th = v->block_threads[t];
        if (th > ti->max_threads_per_block) {
            if (over)
                continue;
            Diag *d = v_report(v, E0502, k->block_size, "%s%lld threads per block on %s; the limit "
                               "is %d", th == INT64_MAX / 2 ? "over " : "", (long long)th, ti->name,
                               ti->max_threads_per_block);
            diag_note(v->ctx, d, k->target_spans[t], "%s: at most %d threads per block (%d %ss)",
                      ti->name, ti->max_threads_per_block, ti->max_threads_per_block / ti->warp_size,
                      ti->warp_word);
            if (k->block_unit == UNIT_WARPGROUPS)
                diag_help(v->ctx, d, "use at most %lld warpgroups",
                          (long long)(ti->max_threads_per_block / tg_unit_threads((Target)t, UNIT_WARPGROUPS)));
            else
                diag_help(v->ctx, d, "use at most %d threads and give each more work",
                          ti->max_threads_per_block);
            over = 1;
            continue; /* the warp-multiple checks would only repeat the problem */
        }
        if (th % ti->warp_size && !warned && uses_warps(v)) {
            Diag *d = v_report(v, E0510, k->block_size, "%lld threads is not a multiple of the %s "
                               "width %d on %s, but the kernel uses %s", (long long)th,
                               ti->warp_word, ti->warp_size, ti->name,
                               v->nroles ? "roles" : "warp-level operations");
            diag_note(v->ctx, d, k->target_spans[t], "%s declared here", ti->name);
            diag_help(v->ctx, d, "use a multiple of %d, e.g. %lld", ti->warp_size,
                      (long long)align_up(th, ti->warp_size));
            warned = 1;
        }
        if (th % ti->warp_size && !warned) {
            Diag *d = v_report(v, W0501, k->block_size, "%lld threads is not a multiple of the %s "
                               "size %d on %s: the last %s runs partly empty", (long long)th,
                               ti->warp_word, ti->warp_size, ti->name, ti->warp_word);
            diag_help(v->ctx, d, "use a multiple of %d, e.g. %lld", ti->warp_size,
                      (long long)align_up(th, ti->warp_size));
            warned = 1;
        }
    }
}

static int role_uses_warpgroup(Ver *v, NodeId role)
{
    for (NodeId n = 1; n < v->k->nnodes; n++) {
        if (v->role_of[n] != role)
            continue;
        const Node *x = N(v, n);
        if (x->op == OP_WGMMA || x->op == OP_WGMMA_WAIT)
            return 1;
        if (x->op == OP_REG && x->type && vt(v, x->type)->scope == SC_WARPGROUP)
            return 1;
    }
    return 0;
}

static const char *role_units(Ver *v, const VRole *r)
{
    int64_t w = r->end - r->first;
    if (r->unit == UNIT_WARPGROUPS)
        return ir_fmt(v->ctx, "warpgroup%s %lld..%lld (warps %lld..%lld)", w > 4 ? "s" : "",
                      (long long)r->first / 4, (long long)r->end / 4, (long long)r->first, (long long)r->end);
    return ir_fmt(v->ctx, "warp%s %lld..%lld", w > 1 ? "s" : "", (long long)r->first, (long long)r->end);
}

static void check_roles(Ver *v)
{
    Kernel *k = v->k;
    /* the block in warps, per target (warp = wavefront on AMD) */
    int64_t block_warps = -1;
    int tg_used = -1;
    for (int t = 0; t < TG__COUNT; t++)
        if (k->targets[t] && v->block_threads[t]) {
            int64_t w = v->block_threads[t] / tg_warp((Target)t);
            if (block_warps < 0 || w < block_warps) {
                block_warps = w;
                tg_used = t;
            }
        }
    for (uint32_t i = 0; i < v->nroles; i++) {
        VRole *r = &v->roles[i];
        const Node *x = N(v, r->node);
        if (r->first < 0 || v_err(v, r->node))
            continue;
        r->uses_warpgroup = role_uses_warpgroup(v, r->node);
        if (r->end <= r->first) {
            Diag *d = v_report(v, E0503, x->b ? x->b : x->a, "role `%s` covers no %s: the range "
                               "%s .. %s is empty", v_name(v, r->node),
                               r->unit == UNIT_WARPGROUPS ? "warpgroup" : "warp", v_text(v, x->a),
                               v_text(v, x->b));
            diag_help(v->ctx, d, "ranges are half-open: `1..3` is units 1 and 2");
            r->first = -1;
            continue;
        }
        if (block_warps >= 0 && r->end > block_warps) {
            const TargetInfo *ti = tg_info((Target)tg_used);
            Diag *d = v_report(v, E0503, x->b ? x->b : x->a, "role `%s` covers %s, but the block has "
                               "%lld %ss%s", v_name(v, r->node), role_units(v, r), (long long)block_warps,
                               ti->warp_word,
                               ti->vendor == VENDOR_AMD ? ir_fmt(v->ctx, " on %s", ti->name) : "");
            diag_note(v->ctx, d, k->block_span, "the block size is given here");
            diag_help(v->ctx, d, "grow the block to %lld warps (%lld threads), or move the role",
                      (long long)r->end, (long long)r->end * ti->warp_size);
            r->first = -1;
            continue;
        }
        int aligned = r->first % 4 == 0 && (r->end - r->first) % 4 == 0;
        if (!aligned && (r->regs || r->uses_warpgroup)) {
            v_mark(v, r->node);
            int64_t start = r->first / 4 * 4, n4 = ((r->end - start) + 3) / 4;
            Diag *d = v_report(v, E0505, x->a, "warpgroup roles must be aligned to 4 warps: role `%s` "
                               "covers %s%s", v_name(v, r->node), role_units(v, r),
                               r->regs ? " and sets `regs` (setmaxnreg acts on whole warpgroups)"
                                       : " and holds warpgroup state (wgmma)");
            diag_help(v->ctx, d, "cover whole warpgroups: `warpgroup%s %lld%s`", n4 > 1 ? "s" : "",
                      (long long)(start / 4),
                      n4 > 1 ? ir_fmt(v->ctx, "..%lld", (long long)(start / 4 + n4)) : "");
        }
    }
    /* overlaps */
    for (uint32_t i = 0; i < v->nroles; i++)
        for (uint32_t j = i + 1; j < v->nroles; j++) {
            VRole *a = &v->roles[i], *b = &v->roles[j];
            if (a->first < 0 || b->first < 0 || a->end <= b->first || b->end <= a->first)
                continue;
            int64_t lo = a->first > b->first ? a->first : b->first;
            int64_t hi = a->end < b->end ? a->end : b->end;
            Diag *d = v_report(v, E0504, N(v, b->node)->a, "role `%s` overlaps role `%s` on warp%s "
                               "%lld..%lld", v_name(v, b->node), v_name(v, a->node), hi - lo > 1 ? "s" : "",
                               (long long)lo, (long long)hi);
            diag_note(v->ctx, d, N(v, a->node)->span, "role `%s` covers %s", v_name(v, a->node),
                      role_units(v, a));
            diag_help(v->ctx, d, "give each warp to one role");
            b->first = -1;
        }
}

static void check_regs(Ver *v)
{
    Kernel *k = v->k;
    int any_regs = 0;
    for (uint32_t i = 0; i < v->nroles; i++) {
        VRole *r = &v->roles[i];
        const Node *x = N(v, r->node);
        int64_t written;
        if (!x->c || v_err(v, x->c) || (!r->regs && !(v_const(v, x->c, &written) && written == 0)))
            continue; /* `regs 0` is checked too (the fuzzer found setmaxnreg 0 reaching ptxas) */
        any_regs = 1;
        if (r->regs < 24 || r->regs > 256 || r->regs % 8) {
            int64_t fix = r->regs < 24 ? 24 : r->regs > 256 ? 256 : r->regs / 8 * 8;
            Diag *d = v_report(v, E0506, x->c, "regs %lld: setmaxnreg takes a multiple of 8 from "
                               "24 to 256", (long long)r->regs);
            diag_help(v->ctx, d, "use regs %lld", (long long)fix);
            diag_fixit(v->ctx, d, v_span(v, x->c), ir_fmt(v->ctx, "%lld", (long long)fix));
            r->regs = 0;
        }
    }
    if (!any_regs)
        return;
    int broken = 0;   /* a role with an error of its own: no budget on top of it */
    for (uint32_t i = 0; i < v->nroles; i++)
        broken |= v->roles[i].first < 0 || v_err(v, v->roles[i].node);
    /* if one role has regs, every role must (6) */
    for (uint32_t i = 0; i < v->nroles; i++) {
        VRole *r = &v->roles[i];
        const Node *x = N(v, r->node);
        if (x->c || v_err(v, r->node))
            continue;
        NodeId other = 0;
        for (uint32_t j = 0; j < v->nroles && !other; j++)
            if (v->roles[j].regs)
                other = v->roles[j].node;
        Diag *d = v_report(v, E0509, r->node, "role `%s` has no `regs`, but role `%s` has: with "
                           "setmaxnreg every role needs a budget", v_name(v, r->node), v_name(v, other));
        diag_note(v->ctx, d, N(v, other)->span, "role `%s` sets regs %lld", v_name(v, other),
                  (long long)v_role(v, other)->regs);
        diag_help(v->ctx, d, "add `, regs R` to role `%s` (e.g. regs 40 for a TMA producer)",
                  v_name(v, r->node));
        r->first = -1;
        broken = 1;
    }
    if (broken)
        return;
    /* regs on targets without setmaxnreg: ignored there */
    char names[128] = "";
    size_t used = 0;
    int ncap = 0;
    for (int t = 0; t < TG__COUNT; t++) {
        if (!k->targets[t])
            continue;
        if (!tg_has((Target)t, TF_SETMAXNREG)) {
            int w = snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", ir_target_names[t]);
            used += w > 0 ? (size_t)w : 0;
            continue;
        }
        ncap++;
        const TargetInfo *ti = tg_info((Target)t);
        int64_t th = v->block_threads[t];
        if (!th)
            continue;
        int64_t dflt = tg_launch_regs(ti, th); /* the launch budget (6) */
        int64_t limit = th * dflt;
        int64_t sum = 0, role_threads = 0, worst = -1, worst_val = 0;
        for (uint32_t i = 0; i < v->nroles; i++) {
            VRole *r = &v->roles[i];
            if (r->first < 0)
                continue;
            int64_t threads = (r->end - r->first) * ti->warp_size;
            int64_t regs = r->regs ? r->regs : dflt;
            role_threads += threads;
            sum += threads * regs;
            if (r->regs && threads * regs > worst_val) {
                worst_val = threads * regs;
                worst = i;
            }
        }
        sum += (th > role_threads ? th - role_threads : 0) * dflt;
        if (sum <= limit || worst < 0)
            continue;
        VRole *w = &v->roles[worst];
        Diag *d = v_report(v, E0507, N(v, w->node)->c, "the roles need %lld registers, %lld over "
                           "the block's %lld (%lld threads x the launch budget of %lld) on %s",
                           (long long)sum, (long long)(sum - limit), (long long)limit, (long long)th,
                           (long long)dflt, ti->name);
        for (uint32_t i = 0; i < v->nroles; i++) {
            VRole *r = &v->roles[i];
            if (r->first < 0)
                continue;
            int64_t threads = (r->end - r->first) * ti->warp_size;
            diag_note(v->ctx, d, N(v, r->node)->span, "role `%s`: %lld threads x %lld registers = %lld%s",
                      v_name(v, r->node), (long long)threads, (long long)(r->regs ? r->regs : dflt),
                      (long long)(threads * (r->regs ? r->regs : dflt)), r->regs ? "" : " (launch default)");
        }
        if (th > role_threads)
            diag_note(v->ctx, d, k->block_span, "%lld threads outside roles x %lld registers",
                      (long long)(th - role_threads), (long long)dflt);
        int64_t wt = (w->end - w->first) * ti->warp_size;
        int64_t fit = (w->regs - ((sum - limit) + wt - 1) / wt) / 8 * 8;
        if (fit >= 24)
            diag_help(v->ctx, d, "lower role `%s` to regs %lld (then %lld registers)", v_name(v, w->node),
                      (long long)fit, (long long)(sum - (w->regs - fit) * wt));
        else
            diag_help(v->ctx, d, "lower the roles' register budgets so that the sum of regs x threads "
                                 "stays within %lld", (long long)limit);
        break;
    }
    if (used) {
        NodeId at = 0;
        for (uint32_t i = 0; i < v->nroles && !at; i++)
            if (v->roles[i].regs)
                at = N(v, v->roles[i].node)->c;
        if (at) {
            Diag *d = v_report(v, W0502, at, "`regs` is ignored on %s: %s no setmaxnreg", names,
                               strchr(names, ',') ? "they have" : "it has");
            diag_help(v->ctx, d, "%s", ncap ? "the budget applies on the other targets only"
                                            : "drop `regs`, or target sm_90a");
        }
    }
}

static void check_grid(Ver *v)
{
    Kernel *k = v->k;
    if (k->ngrid == 0 && k->block_size) {
        Diag *d = diag_report(v->ctx, E0508, k->span, "the grid has no extents");
        diag_help(v->ctx, d, "write `grid [X]`, `grid [X, Y]` or `grid [X, Y, Z]`");
        return;
    }
    for (uint32_t i = 0; i < k->ngrid; i++) {
        int64_t c;
        NodeId e = k->grid[i];
        if (v_err(v, e) || !v_const(v, e, &c))
            continue;
        if (c < 1) {
            v_report(v, E0508, e, "grid extent %u is %lld; it must be at least 1", i, (long long)c);
            continue;
        }
        for (int t = 0; t < TG__COUNT; t++)
            if (k->targets[t] && c > tg_info((Target)t)->max_grid[i]) {
                v_report(v, E0508, e, "grid extent %u is %lld; %s allows at most %lld", i, (long long)c,
                         ir_target_names[t], (long long)tg_info((Target)t)->max_grid[i]);
                break;
            }
    }
}

/* ---- per-thread register arrays ------------------------------------------ */

/* more 32-bit registers in one per-thread array than this is a mistake: a thread
   has at most 255 (256 VGPRs on AMD, 512 with AGPRs), the rest would spill, and
   code generation unrolls every element (a 4096-way unroll ran for minutes) */
#define MAX_THREAD_REGS 2048

static void check_thread_regs(Ver *v)
{
    if (v->ctx->nerrors) /* a tile that misses its layout was reported: not a second error */
        return;
    for (NodeId n = 1; n < v->k->nnodes; n++) {
        if (N(v, n)->op != OP_REG || v_err(v, n))
            continue;
        const Type *t = ver_type(v->k, n);
        if (t->kind != TK_TILE && t->kind != TK_VECTOR && t->kind != TK_SCALAR)
            continue;
        if (t->kind == TK_TILE && (t->layout || t->scope != SC_THREAD))
            continue;
        int bits = ir_dtypes[t->dtype].bits;
        double regs = (double)(t->lanes ? t->lanes : 1) * bits / 32.0; /* 16-bit pairs pack */
        for (int i = 0; t->kind == TK_TILE && i < t->rank; i++)
            regs *= t->shape[i] > 0 ? (double)t->shape[i] : 1;
        if (regs <= MAX_THREAD_REGS)
            continue;
        Diag *d = v_report(v, E0511, n, "`reg %s` holds %.0f 32-bit registers per thread; a thread has at most 255: "
                           "the rest would spill to local memory, and code generation unrolls every element",
                           v_name(v, n), regs);
        diag_help(v->ctx, d, "keep per-thread arrays within the register file: fewer elements (a smaller unroll "
                  "or tile per thread), or stage the data in shared memory");
    }
}

/* ---- register tiles on AMD: the VGPR and AGPR files -------------------------
 * gfx90a / gfx942 give a lane 512 registers at one wavefront per SIMD (CDNA2/3
 * ISA "VGPRs and AccVGPRs"): max_regs_per_thread - max_agprs architectural VGPRs
 * and max_agprs AGPRs, which hold MFMA accumulators (LLVM allocates them there).
 * The kernel's register tiles are counted before code generation, in 32-bit
 * registers per lane (ir/layout ly_regs): `mfma` accumulators against the AGPRs,
 * A/B fragments and per-thread arrays against the VGPRs. Over either is E0512: the
 * rest would spill to scratch memory. */
static double tile_regs(const Type *t, Layout *ly)
{
    *ly = (Layout)t->layout;
    if (t->kind == TK_TILE && t->layout != LY_NONE) {
        LyTile lt;
        memset(&lt, 0, sizeof lt);
        lt.layout = (Layout)t->layout;
        lt.dtype = (DType)t->dtype;
        lt.warp_size = 64;
        lt.rows = (int)t->shape[0];
        lt.cols = t->rank > 1 ? (int)t->shape[1] : 0;
        lt.colvec = t->rank > 1 && lt.rows == 1 && lt.layout == LY_MFMA;
        return ly_valid(&lt, NULL, 0) ? ly_regs(&lt) : 0;
    }
    if (t->kind != TK_TILE && t->kind != TK_VECTOR && t->kind != TK_SCALAR)
        return 0;
    double regs = (double)(t->lanes ? t->lanes : 1) * ir_dtypes[t->dtype].bits / 32.0;
    for (int i = 0; t->kind == TK_TILE && i < t->rank; i++)
        regs *= t->shape[i] > 0 ? (double)t->shape[i] : 1;
    return regs < 1 ? 1 : regs;
}

static void check_amd_regs(Ver *v)
{
    if (v->ctx->nerrors)
        return;
    for (int tg = 0; tg < TG__COUNT; tg++) {
        const TargetInfo *ti = tg_info((Target)tg);
        if (!v->k->targets[tg] || !ti->max_agprs)
            continue;
        double acc = 0, other = 0;
        NodeId big_acc = 0, big_other = 0;
        double max_acc = 0, max_other = 0;
        for (NodeId n = 1; n < v->k->nnodes; n++) {
            if (N(v, n)->op != OP_REG || v_err(v, n))
                continue;
            Layout ly;
            double r = tile_regs(ver_type(v->k, n), &ly);
            int is_acc = ly == LY_MFMA && ir_dtypes[ver_type(v->k, n)->dtype].bits == 32;
            *(is_acc ? &acc : &other) += r;
            if (is_acc && r > max_acc)
                max_acc = r, big_acc = n;
            if (!is_acc && r > max_other)
                max_other = r, big_other = n;
        }
        int vgprs = ti->max_regs_per_thread - ti->max_agprs;
        int over_acc = acc > ti->max_agprs, over_v = other > vgprs;
        if (!over_acc && !over_v)
            continue;
        NodeId at = over_acc ? big_acc : big_other;
        Diag *d = v_report(v, E0512, at, "the register tiles need %.0f %s per lane on %s, which has %d: "
                           "the rest would spill to scratch memory", over_acc ? acc : other,
                           over_acc ? "AGPRs (MFMA accumulators)" : "VGPRs (fragments and arrays)",
                           ti->name, over_acc ? ti->max_agprs : vgprs);
        diag_note(v->ctx, d, N(v, at)->span, "`reg %s` alone holds %.0f", v_name(v, at),
                  over_acc ? max_acc : max_other);
        diag_help(v->ctx, d, "use a smaller tile per wavefront (more wavefronts per block), or fewer "
                  "fragments live at once");
        return;
    }
}

void ver_resources(Ver *v)
{
    check_block(v);
    check_roles(v);
    check_regs(v);
    check_thread_regs(v);
    check_amd_regs(v);
    check_smem(v);
    check_grid(v);
}
