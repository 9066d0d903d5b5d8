/* sync_exec.c — a small concrete interpreter for integer control, used by the
 * synchronization checks' simulations (sync.h): expressions evaluate with the
 * one integer evaluator (analysis/consteval.c) through its hooks, statements
 * execute under a budget, dim samples that satisfy the assumes,
 * and, built on it, how many threads of a role execute a statement under its
 * enclosing guards. */
#include <string.h>
#include "sync.h"

/* ---- concrete interpreter -------------------------------------------------- */

/* the evaluator's hooks: what the interpreter knows */
static int exec_decl(const CeEnv *env, NodeId d, int64_t *out)
{
    const SyExec *x = env->u;
    if (!x->has[d])
        return 0;
    *out = x->val[d];
    return 1;
}

static int exec_special(const CeEnv *env, NodeId at, int64_t *out)
{
    SyExec *x = env->u;
    uint16_t sr = sy_node(x->s, at)->sub;
    if (sr == SR_NTHREADS) {
        int64_t first, count;
        if (!sy_role_range(x->s, x->s->role[x->s->stmt_of[at]], &first, &count))
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
        if (dim >= x->s->k->ngrid) {
            *out = 1;
            return 1;
        }
        if (x->in_grid) /* `grid [grid.x]`: E0329 */
            return 0;
        x->in_grid = 1;
        int ok = ce_eval_int(x->s->ctx, x->s->k, x->s->k->grid[dim], env, out) && *out >= 1;
        x->in_grid = 0;
        return ok;
    }
    if (sr >= SR__COUNT || !x->has_spec[sr])
        return 0;
    *out = x->spec[sr];
    return 1;
}

void sy_exec_init(SyExec *x, SyK *s, long budget)
{
    memset(x, 0, sizeof *x);
    x->s = s;
    x->val = arena_alloc(&s->ctx->arena, s->k->nnodes * sizeof *x->val);
    x->has = arena_alloc(&s->ctx->arena, s->k->nnodes);
    x->budget = budget;
    x->env = (CeEnv){NULL, 0, exec_decl, exec_special, x};
    /* parameters whose value is a constant are known up front: the evaluator
       would otherwise re-evaluate `T = BM / WM * (BN / WN) * 32` at every use */
    for (uint32_t i = 0; i < s->k->nparams; i++) {
        NodeId p = s->k->params[i];
        if (p && p < s->k->nnodes && sy_node(s, p)->op == OP_PARAM && sy_const(s, sy_node(s, p)->a, &x->val[p]))
            x->has[p] = 1;
    }
}

int sy_eval(SyExec *x, NodeId e, int64_t *out)
{
    const Kernel *k = x->s->k;
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
    return ce_eval_int(x->s->ctx, k, e, &x->env, out);
}

static void exec_block(SyExec *x, NodeId block, int depth);

static void exec_assign(SyExec *x, const Node *n)
{
    NodeId d = sy_decl(x->s, n->a);
    if (!d)
        return;
    int64_t v, old;
    if (!sy_eval(x, n->b, &v)) {
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

static void exec_stmt(SyExec *x, NodeId st, int depth)
{
    const Node *n = sy_node(x->s, st);
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
        if (!sy_eval(x, n->a, &lo) || !sy_eval(x, n->b, &hi) || (n->c && !sy_eval(x, n->c, &step)) ||
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
        if (!sy_eval(x, n->a, &c)) {
            x->unknown = 1;
            return;
        }
        if (c)
            exec_block(x, n->b, depth + 1);
        else if (n->c && sy_node(x->s, n->c)->op == OP_IF)
            exec_stmt(x, n->c, depth + 1);
        else
            exec_block(x, n->c, depth + 1);
        return;
    case OP_LET:
        x->has[st] = sy_token_kind(x->s, st) == OP_NONE && sy_eval(x, n->b, &x->val[st]);
        break;
    case OP_VAR:
        x->has[st] = n->b && sy_eval(x, n->b, &x->val[st]);
        break;
    case OP_ASSIGN:
        if (sy_node(x->s, n->a)->op == OP_NAME)
            exec_assign(x, n);
        break;
    default: break;
    }
    if (x->stmt)
        x->stmt(x, st);
}

static void exec_block(SyExec *x, NodeId block, int depth)
{
    if (!block || depth > SY_MAX_DEPTH || sy_node(x->s, block)->op != OP_BLOCK)
        return;
    const Node *b = sy_node(x->s, block);
    for (uint32_t i = 0; i < b->n && !x->stopped && !x->unknown && x->budget >= 0; i++)
        exec_stmt(x, ir_list_at(x->s->k, b, i), depth);
}

void sy_exec(SyExec *x, NodeId block)
{
    exec_block(x, block, 0);
}

/* ---- shape samples ---------------------------------------------------------- */

/* divisor c and bounds of dim d from the assumes */
static void dim_facts(SyK *s, NodeId e, NodeId d, int64_t *mod, int64_t *lo, int64_t *hi, int depth)
{
    if (!e || depth > 32)
        return;
    const Node *n = sy_node(s, e);
    int64_t c;
    if (n->op == OP_AND) {
        dim_facts(s, n->a, d, mod, lo, hi, depth + 1);
        dim_facts(s, n->b, d, mod, lo, hi, depth + 1);
        return;
    }
    if (n->op == OP_EQ && sy_const(s, n->b, &c) && c == 0 && sy_node(s, n->a)->op == OP_MOD &&
        sy_decl(s, sy_node(s, n->a)->a) == d && sy_const(s, sy_node(s, n->a)->b, &c) && c > 0) {
        int64_t g = ce_gcd(*mod, c);
        if (*mod / g <= ((int64_t)1 << 30) / c)
            *mod = *mod / g * c;
        return;
    }
    int flip = 0;
    NodeId lhs = n->a, rhs = n->b;
    if (sy_decl(s, rhs) == d) {
        NodeId t = lhs;
        lhs = rhs;
        rhs = t;
        flip = 1;
    }
    if (sy_decl(s, lhs) != d || !sy_const(s, rhs, &c))
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

void sy_dim_facts(SyK *s, NodeId dim, int64_t *mod, int64_t *lo, int64_t *hi)
{
    for (uint32_t a = 0; a < s->k->nassumes; a++)
        dim_facts(s, s->k->assumes[a], dim, mod, lo, hi, 0);
}

enum { SY_SAMPLE_MAX = 1024 };

int sy_sample_dims(SyExec *x, int i)
{
    static const int64_t mults[SY_NSAMPLES] = {1, 2, 3, 5, 8, 17, 4, 64};
    static const int64_t raws[SY_NSAMPLES] = {100, 1, 257, 1000, 4096, 33, 2, 12345};
    SyK *s = x->s;
    Kernel *k = s->k;
    for (uint32_t j = 0; j < k->ndims; j++) {
        NodeId d = k->dims[j];
        int64_t mod = 1, lo = 1, hi = (int64_t)1 << 40, v;
        for (uint32_t a = 0; a < k->nassumes; a++)
            dim_facts(s, k->assumes[a], d, &mod, &lo, &hi, 0);
        v = mod > 1 ? mod * mults[i] : raws[i];
        if (i == 0) /* the kernel's `shape`, scaled down past SY_SAMPLE_MAX: the protocols are
                       periodic in the loop counts, and `check` must stay fast (4096^3 GEMMs) */
            for (uint32_t h = 0; h < k->nshapes; h++)
                if (k->shapes[h].name == sy_node(s, d)->name) {
                    v = k->shapes[h].value;
                    if (v > SY_SAMPLE_MAX)
                        v = mod > 1 && mod <= SY_SAMPLE_MAX ? SY_SAMPLE_MAX / mod * mod : SY_SAMPLE_MAX;
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
        if (sy_eval(x, k->assumes[a], &ok) && !ok)
            return 0;
    }
    return 1;
}

const char *sy_sample_text(SyExec *x)
{
    SyK *s = x->s;
    char *buf = "";
    for (uint32_t j = 0; j < s->k->ndims; j++) {
        NodeId d = s->k->dims[j];
        buf = ir_fmt(s->ctx, "%s%s%s = %lld", buf, j ? ", " : "", ir_symstr(s->ctx, sy_node(s, d)->name),
                     (long long)x->val[d]);
    }
    if (x->sm_count > 0)
        buf = ir_fmt(s->ctx, "%s, sm.count = %lld", buf, (long long)x->sm_count);
    return buf;
}

/* ---- threads ------------------------------------------------------------ */

void sy_exec_thread(SyExec *x, NodeId role, int64_t t)
{
    int64_t first = 0, count;
    if (!sy_role_range(x->s, role, &first, &count))
        first = 0;
    /* inside a role thread.x, warp and wg are role-relative (docs/tir.md section 6) */
    x->spec[SR_THREAD_X] = t - first;
    x->spec[SR_LANE] = t % x->s->warp;
    x->spec[SR_WARP] = (t - first) / x->s->warp;
    x->spec[SR_WG] = (t - first) / tg_unit_threads(x->s->tg, UNIT_WARPGROUPS);
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

int64_t sy_unit_size(const SyK *s, NodeId role)
{
    int64_t first, count;
    if (!sy_role_range(s, role, &first, &count))
        return 0;
    if (!role)
        return count;
    Unit unit = (Unit)sy_node(s, role)->sub;
    return unit == UNIT_WARPGROUPS || unit == UNIT_WARPS ? tg_unit_threads(s->tg, unit) : count;
}

int sy_single_issue(const SyK *s, NodeId st)
{
    uint16_t op = sy_node(s, st)->op;
    return op == OP_TMA_LOAD || op == OP_TMA_STORE || op == OP_TMA_WAIT || op == OP_MB_EXPECT;
}

int64_t sy_threads_at(const SyK *s, NodeId st, int *exact)
{
    int64_t first, count, n = 0, stride = 1;
    *exact = 1;
    NodeId role = s->role[st];
    if (!sy_role_range(s, role, &first, &count) || count > 4096)
        return 0;
    if (sy_single_issue(s, st) && (stride = sy_unit_size(s, role)) <= 0)
        return 0;
    NodeId guards[64];
    uint8_t neg[64];
    uint32_t ng = 0;
    for (NodeId cur = st; cur && s->up[cur] && s->up[cur] != role && ng < 64; cur = s->up[cur]) {
        NodeId p = s->up[cur];
        if (sy_node(s, p)->op == OP_IF) {
            guards[ng] = sy_node(s, p)->a;
            neg[ng++] = s->in_else[cur];
        }
    }
    SyExec x;
    sy_exec_init(&x, (SyK *)s, 0);
    for (int64_t t = first; t < first + count; t += stride) {
        sy_exec_thread(&x, role, t);
        int taken = 1;
        for (uint32_t g = 0; g < ng && taken; g++) {
            int64_t v;
            if (!sy_eval(&x, guards[g], &v))
                *exact = 0;
            else if ((v != 0) == neg[g])
                taken = 0;
        }
        n += taken;
    }
    return n;
}
