/* exec.c — the concrete interpreter of integer control (exec.h): expressions
 * evaluate with the one integer evaluator (consteval.c) through its hooks,
 * statements execute under a budget; dim samples that satisfy the assumes;
 * role ranges and the thread numbering (thread.x, lane, warp, wg). Moved here
 * from the verifier's sync checks, which simulate protocols with it. */
#include <string.h>
#include "exec.h"

int ax_const(const AxKernel *kf, NodeId e, int64_t *out)
{
    if (!e)
        return 0;
    return kf->konst ? kf->konst(kf, e, out) : ce_const_int(kf->ctx, kf->k, e, out);
}

NodeId ax_decl(const AxKernel *kf, NodeId e)
{
    if (!e || e >= kf->k->nnodes)
        return 0;
    const Node *n = &kf->k->nodes[e];
    return n->op == OP_NAME && n->decl < kf->k->nnodes ? n->decl : 0;
}

int ax_role_range(const AxKernel *kf, NodeId role, int64_t *first, int64_t *count)
{
    if (!role) {
        *first = 0;
        *count = kf->block_threads;
        return kf->block_threads > 0;
    }
    const Node *r = &kf->k->nodes[role];
    int64_t unit = tg_unit_threads(kf->tg, (Unit)r->sub), a, b;
    if (!ax_const(kf, r->a, &a))
        return 0;
    if (!r->b)
        b = a + 1;
    else if (!ax_const(kf, r->b, &b))
        return 0;
    if (b <= a)
        return 0;
    *first = a * unit;
    *count = (b - a) * unit;
    return 1;
}

static inline const Node *ax_node(const AxExec *x, NodeId id) { return &x->kf->k->nodes[id]; }

/* ---- concrete interpreter -------------------------------------------------- */

/* the evaluator's hooks: what the interpreter knows */
static int exec_decl(const CeEnv *env, NodeId d, int64_t *out)
{
    const AxExec *x = env->u;
    if (!x->has[d])
        return 0;
    *out = x->val[d];
    return 1;
}

static int exec_special(const CeEnv *env, NodeId at, int64_t *out)
{
    AxExec *x = env->u;
    uint16_t sr = ax_node(x, at)->sub;
    if (sr == SR_NTHREADS) {
        int64_t first, count;
        if (!ax_role_range(x->kf, x->kf->role[x->kf->stmt_of[at]], &first, &count))
            return 0;
        *out = count;
        return 1;
    }
    if (sr == SR_SM_COUNT) { /* a representative device, or the sample's */
        *out = x->sm_count > 0 ? x->sm_count : TG_DEFAULT_SM_COUNT;
        return 1;
    }
    if (sr >= SR_GRID_X && sr <= SR_GRID_Z) { /* the grid clause at this sample's dims */
        uint32_t dim = sr - SR_GRID_X;
        if (dim >= x->kf->k->ngrid) {
            *out = 1;
            return 1;
        }
        if (x->in_grid) /* `grid [grid.x]`: E0329 */
            return 0;
        x->in_grid = 1;
        int ok = ce_eval_int(x->kf->ctx, x->kf->k, x->kf->k->grid[dim], env, out) && *out >= 1;
        x->in_grid = 0;
        return ok;
    }
    if (sr >= SR__COUNT || !x->has_spec[sr])
        return 0;
    *out = x->spec[sr];
    return 1;
}

void ax_exec_init(AxExec *x, const AxKernel *kf, long budget)
{
    memset(x, 0, sizeof *x);
    x->kf = kf;
    const Kernel *k = kf->k;
    x->val = arena_alloc(&kf->ctx->arena, k->nnodes * sizeof *x->val);
    x->has = arena_alloc(&kf->ctx->arena, k->nnodes);
    x->budget = budget;
    x->env = (CeEnv){NULL, 0, exec_decl, exec_special, x};
    /* parameters whose value is a constant are known up front: the evaluator
       would otherwise re-evaluate `T = BM / WM * (BN / WN) * 32` at every use */
    for (uint32_t i = 0; i < k->nparams; i++) {
        NodeId p = k->params[i];
        if (p && p < k->nnodes && k->nodes[p].op == OP_PARAM && ax_const(kf, k->nodes[p].a, &x->val[p]))
            x->has[p] = 1;
    }
}

int ax_eval(AxExec *x, NodeId e, int64_t *out)
{
    const Kernel *k = x->kf->k;
    if (e && e < k->nnodes) { /* the commonest leaves, as the evaluator would answer them, without its call chain */
        const Node *n = &k->nodes[e];
        if (n->op == OP_INT || n->op == OP_BOOL) {
            *out = n->v.i;
            return 1;
        }
        if (n->op == OP_NAME && n->decl && n->decl < k->nnodes && x->has[n->decl]) {
            *out = x->val[n->decl];
            return 1;
        }
    }
    return ce_eval_int(x->kf->ctx, k, e, &x->env, out);
}

static void exec_block(AxExec *x, NodeId block, int depth);

static void exec_assign(AxExec *x, const Node *n)
{
    NodeId d = ax_decl(x->kf, n->a);
    if (!d)
        return;
    int64_t v, old;
    if (!ax_eval(x, n->b, &v)) {
        x->has[d] = 0;
        return;
    }
    if (n->sub != OP_NONE) {
        if (!x->has[d]) return;
        old = x->val[d];
        if (!ce_binop((Op)n->sub, old, v, &v)) {
            x->has[d] = 0;
            return;
        }
    }
    x->val[d] = v;
    x->has[d] = 1;
}

static void exec_stmt(AxExec *x, NodeId st, int depth)
{
    const Node *n = ax_node(x, st);
    int64_t lo, hi, step = 1, c;
    if (x->stopped || x->unknown || x->budget < 0 || (x->skip && x->skip[st]))
        return;
    x->budget--;
    switch (n->op) {
    case OP_ROLE:
        if (x->role == st)
            exec_block(x, n->d, depth + 1);
        return;
    case OP_REFERENCE: return;
    case OP_RETURN: x->stopped = 1; return;
    case OP_FOR:
        if (!ax_eval(x, n->a, &lo) || !ax_eval(x, n->b, &hi) || (n->c && !ax_eval(x, n->c, &step)) ||
            step <= 0) {
            x->unknown = 1;
            return;
        }
        for (int64_t i = lo; i < hi && !x->stopped && !x->unknown && x->budget >= 0; i += step) {
            x->val[st] = i;
            x->has[st] = 1;
            exec_block(x, n->d, depth + 1);
        }
        x->has[st] = 0;
        return;
    case OP_IF:
        if (x->stmt)
            x->stmt(x, st);
        if (!ax_eval(x, n->a, &c)) {
            x->unknown = 1;
            return;
        }
        if (c)
            exec_block(x, n->b, depth + 1);
        else if (n->c && ax_node(x, n->c)->op == OP_IF)
            exec_stmt(x, n->c, depth + 1);
        else
            exec_block(x, n->c, depth + 1);
        return;
    case OP_LET:
        x->has[st] = !(x->kf->opaque_let && x->kf->opaque_let(x->kf, st)) && ax_eval(x, n->b, &x->val[st]);
        break;
    case OP_VAR:
        x->has[st] = n->b && ax_eval(x, n->b, &x->val[st]);
        break;
    case OP_ASSIGN:
        if (ax_node(x, n->a)->op == OP_NAME)
            exec_assign(x, n);
        break;
    default: break;
    }
    if (x->stmt)
        x->stmt(x, st);
}

static void exec_block(AxExec *x, NodeId block, int depth)
{
    if (!block || depth > AX_MAX_DEPTH || ax_node(x, block)->op != OP_BLOCK)
        return;
    const Node *b = ax_node(x, block);
    for (uint32_t i = 0; i < b->n && !x->stopped && !x->unknown && x->budget >= 0; i++)
        exec_stmt(x, ir_list_at(x->kf->k, b, i), depth);
}

void ax_exec(AxExec *x, NodeId block)
{
    exec_block(x, block, 0);
}

/* ---- shape samples ---------------------------------------------------------- */

/* divisor c and bounds of dim d from the assumes */
static void dim_facts(const AxKernel *s, NodeId e, NodeId d, int64_t *mod, int64_t *lo, int64_t *hi, int depth)
{
    if (!e || depth > 32)
        return;
    const Node *n = &s->k->nodes[e];
    int64_t c;
    if (n->op == OP_AND) {
        dim_facts(s, n->a, d, mod, lo, hi, depth + 1);
        dim_facts(s, n->b, d, mod, lo, hi, depth + 1);
        return;
    }
    if (n->op == OP_EQ && ax_const(s, n->b, &c) && c == 0 && s->k->nodes[n->a].op == OP_MOD &&
        ax_decl(s, s->k->nodes[n->a].a) == d && ax_const(s, s->k->nodes[n->a].b, &c) && c > 0) {
        int64_t g = ce_gcd(*mod, c);
        if (*mod / g <= ((int64_t)1 << 30) / c)
            *mod = *mod / g * c;
        return;
    }
    int flip = 0;
    NodeId lhs = n->a, rhs = n->b;
    if (ax_decl(s, rhs) == d) {
        NodeId t = lhs;
        lhs = rhs;
        rhs = t;
        flip = 1;
    }
    if (ax_decl(s, lhs) != d || !ax_const(s, rhs, &c))
        return;
    uint16_t op = n->op;
    if (flip)
        op = op == OP_LT ? OP_GT : op == OP_GT ? OP_LT : op == OP_LE ? OP_GE : op == OP_GE ? OP_LE : op;
    switch (op) {
    case OP_GE: if (c > *lo) *lo = c; break;
    case OP_GT: if (c + 1 > *lo) *lo = c + 1; break;
    case OP_LE: if (c < *hi) *hi = c; break;
    case OP_LT: if (c - 1 < *hi) *hi = c - 1; break;
    case OP_EQ: *lo = *hi = c; break;
    default: break;
    }
}

void ax_dim_facts(const AxKernel *s, NodeId dim, int64_t *mod, int64_t *lo, int64_t *hi)
{
    for (uint32_t a = 0; a < s->k->nassumes; a++)
        dim_facts(s, s->k->assumes[a], dim, mod, lo, hi, 0);
}

enum { AX_SAMPLE_MAX = 1024 };

int ax_sample_dims(AxExec *x, int i)
{
    static const int64_t mults[AX_NSAMPLES] = {1, 2, 3, 5, 8, 17, 4, 64};
    static const int64_t raws[AX_NSAMPLES] = {100, 1, 257, 1000, 4096, 33, 2, 12345};
    const AxKernel *s = x->kf;
    Kernel *k = s->k;
    for (uint32_t j = 0; j < k->ndims; j++) {
        NodeId d = k->dims[j];
        int64_t mod = 1, lo = 1, hi = (int64_t)1 << 40, v;
        for (uint32_t a = 0; a < k->nassumes; a++)
            dim_facts(s, k->assumes[a], d, &mod, &lo, &hi, 0);
        v = mod > 1 ? mod * mults[i] : raws[i];
        if (i == 0) /* the kernel's `shape`, scaled down past AX_SAMPLE_MAX: the protocols are
                       periodic in the loop counts, and `check` must stay fast (4096^3 GEMMs) */
            for (uint32_t h = 0; h < k->nshapes; h++)
                if (k->shapes[h].name == k->nodes[d].name) {
                    v = k->shapes[h].value;
                    if (v > AX_SAMPLE_MAX)
                        v = mod > 1 && mod <= AX_SAMPLE_MAX ? AX_SAMPLE_MAX / mod * mod : AX_SAMPLE_MAX;
                }
        if (v < lo)
            v = mod > 1 ? (lo + mod - 1) / mod * mod : lo;
        if (v > hi)
            v = mod > 1 ? hi / mod * mod : hi;
        x->val[d] = v;
        x->has[d] = 1;
    }
    for (uint32_t a = 0; a < k->nassumes; a++) {
        int64_t ok;
        if (ax_eval(x, k->assumes[a], &ok) && !ok)
            return 0;
    }
    return 1;
}

const char *ax_sample_text(AxExec *x)
{
    const AxKernel *s = x->kf;
    char *buf = "";
    for (uint32_t j = 0; j < s->k->ndims; j++) {
        NodeId d = s->k->dims[j];
        buf = ir_fmt(s->ctx, "%s%s%s = %lld", buf, j ? ", " : "", ir_symstr(s->ctx, s->k->nodes[d].name),
                     (long long)x->val[d]);
    }
    if (x->sm_count > 0)
        buf = ir_fmt(s->ctx, "%s, sm.count = %lld", buf, (long long)x->sm_count);
    return buf;
}

/* ---- threads ------------------------------------------------------------ */

void ax_exec_thread(AxExec *x, NodeId role, int64_t t)
{
    int64_t first = 0, count;
    if (!ax_role_range(x->kf, role, &first, &count))
        first = 0;
    /* inside a role thread.x, warp and wg are role-relative (docs/tir.md section 6) */
    x->spec[SR_THREAD_X] = t - first;
    x->spec[SR_LANE] = t % x->kf->warp;
    x->spec[SR_WARP] = (t - first) / x->kf->warp;
    x->spec[SR_WG] = (t - first) / tg_unit_threads(x->kf->tg, UNIT_WARPGROUPS);
    x->has_spec[SR_THREAD_X] = x->has_spec[SR_LANE] = 1;
    x->has_spec[SR_WARP] = x->has_spec[SR_WG] = 1;
    x->has_spec[SR_THREAD_Y] = x->has_spec[SR_THREAD_Z] = 1;
    x->spec[SR_THREAD_Y] = x->spec[SR_THREAD_Z] = 0;
    for (int b = SR_BLOCK_X; b <= SR_BLOCK_Z; b++) /* a representative block */
        if (!x->has_spec[b]) {
            x->spec[b] = 0;
            x->has_spec[b] = 1;
        }
}
