/* sync_util.c — what the synchronization and bounds checks share: the kernel's
 * statement tables (enclosing statement, role, program order), references,
 * stage tokens, thread counting under guards, a forward dataflow over
 * structured statements, and a small concrete interpreter for simulations. */
#include <stdarg.h>
#include <string.h>
#include "consteval.h"
#include "sync.h"

#define MAX_DEPTH 200

/* ---- tables ------------------------------------------------------------- */

typedef struct { SyK *s; uint32_t npos; } Builder;

static void add_decl(SyK *s, NodeId **arr, uint32_t *n, NodeId id)
{
    ir_push_node_list(s->ctx, arr, n, id);
}

static void mark_expr(SyK *s, NodeId e, void *u)
{
    s->stmt_of[e] = (NodeId)(uintptr_t)u;
}

static void build_block(Builder *b, NodeId block, NodeId up, uint8_t in_else, NodeId role);

static void build_stmt(Builder *b, NodeId st, NodeId up, uint8_t in_else, NodeId role)
{
    SyK *s = b->s;
    if (!st || st >= s->k->nnodes)
        return;
    Node *n = sy_node(s, st);
    s->up[st] = up;
    s->in_else[st] = in_else;
    s->role[st] = role;
    s->pos[st] = ++b->npos;
    s->stmt_of[st] = st;
    sy_stmt_exprs(s, st, mark_expr, (void *)(uintptr_t)st);
    switch (n->op) {
    case OP_PIPELINE: add_decl(s, &s->pipes, &s->npipes, st); break;
    case OP_MBARRIER: add_decl(s, &s->mbars, &s->nmbars, st); break;
    case OP_SHARED: add_decl(s, &s->tiles, &s->ntiles, st); break;
    case OP_ROLE:
        add_decl(s, &s->roles, &s->nroles, st);
        build_block(b, n->d, st, 0, st);
        break;
    case OP_FOR: build_block(b, n->d, st, 0, role); break;
    case OP_IF:
        build_block(b, n->b, st, 0, role);
        if (n->c && sy_node(s, n->c)->op == OP_IF)
            build_stmt(b, n->c, st, 1, role);
        else
            build_block(b, n->c, st, 1, role);
        break;
    default: break;
    }
}

static void build_block(Builder *b, NodeId block, NodeId up, uint8_t in_else, NodeId role)
{
    if (!block || block >= b->s->k->nnodes)
        return;
    Node *n = sy_node(b->s, block);
    if (n->op != OP_BLOCK)
        return;
    b->s->up[block] = up;
    b->s->in_else[block] = in_else;
    b->s->role[block] = role;
    for (uint32_t i = 0; i < n->n; i++)
        build_stmt(b, ir_list_at(b->s->k, n, i), up, in_else, role);
}

static void find_tokvars(SyK *s, NodeId st, void *u)
{
    Node *n = sy_node(s, st);
    NodeId var = 0, src = 0;
    (void)u;
    if (n->op == OP_VAR && n->b) {
        var = st;
        src = sy_decl(s, n->b);
    } else if (n->op == OP_ASSIGN && n->sub == OP_NONE) {
        var = sy_decl(s, n->a);
        src = sy_decl(s, n->b);
    }
    if (!var || !src || sy_node(s, var)->op != OP_VAR || s->tok_src[var])
        return;
    if (sy_node(s, src)->op == OP_LET && sy_token_kind(s, src) != OP_NONE)
        s->tok_src[var] = src;
    else if (sy_node(s, src)->op == OP_VAR && s->tok_src[src])
        s->tok_src[var] = s->tok_src[src];
}

void sy_init(SyK *s, CakeCtx *ctx, Kernel *k)
{
    memset(s, 0, sizeof *s);
    s->ctx = ctx;
    s->k = k;
    size_t nn = k->nnodes;
    s->up = arena_alloc(&ctx->arena, nn * sizeof *s->up);
    s->in_else = arena_alloc(&ctx->arena, nn);
    s->guards = arena_alloc(&ctx->arena, nn);
    s->role = arena_alloc(&ctx->arena, nn * sizeof *s->role);
    s->pos = arena_alloc(&ctx->arena, nn * sizeof *s->pos);
    s->stmt_of = arena_alloc(&ctx->arena, nn * sizeof *s->stmt_of);
    s->block_threads = ver_block_threads(ctx, k, 32);
    Builder b = {s, 0};
    build_block(&b, k->body, 0, 0, 0);
    s->tok_src = arena_alloc(&ctx->arena, nn * sizeof *s->tok_src);
    for (int it = 0; it < 3; it++) /* var prev: i32 = s0; prev = s */
        sy_each_stmt(s, k->body, find_tokvars, NULL);
}

uint32_t sy_run(CakeCtx *ctx, Kernel *k, uint32_t (*check)(SyK *s))
{
    if (!k || !k->body)
        return 0;
    SyK s;
    sy_init(&s, ctx, k);
    return check(&s);
}

/* ---- diagnostics --------------------------------------------------------- */

Diag *sy_report(SyK *s, DiagCode code, NodeId at, const char *fmt, ...)
{
    uint64_t key = (uint64_t)code << 32 | at;
    for (uint32_t i = 0; i < s->nreported; i++)
        if (s->reported[i] == key)
            return NULL;
    if (s->nreported == s->capreported) {
        uint32_t cap = s->capreported ? s->capreported * 2 : 16;
        s->reported = arena_realloc(&s->ctx->arena, s->reported, s->capreported * sizeof *s->reported,
                                    cap * sizeof *s->reported);
        s->capreported = cap;
    }
    s->reported[s->nreported++] = key;
    /* an earlier check reported this node: no follow-on error, but the problem is recorded, so
       that checks which step back after it (sy_reported_in) step back here too */
    if (at && (sy_node(s, at)->flags & NF_ERROR))
        return NULL;
    va_list ap;
    va_start(ap, fmt);
    char *msg = ir_vfmt(s->ctx, fmt, ap);
    va_end(ap);
    Diag *d = diag_report(s->ctx, code, sy_span(s, at), "%s", msg);
    return d->msg ? d : NULL;
}

int sy_reported_in(const SyK *s, DiagCode code, NodeId role)
{
    for (uint32_t i = 0; i < s->nreported; i++)
        if ((s->reported[i] >> 32) == (uint64_t)code && s->role[s->stmt_of[(NodeId)s->reported[i]]] == role)
            return 1;
    return 0;
}

uint32_t sy_line(const SyK *s, NodeId id)
{
    uint32_t line = 0, col, el, ec;
    Span sp = sy_span(s, id);
    if (sp.file < s->ctx->nfiles)
        span_linecol(s->ctx, sp, &line, &col, &el, &ec);
    return line;
}

const char *sy_text(SyK *s, NodeId id)
{
    Span sp = sy_span(s, id);
    if (sp.file >= s->ctx->nfiles || sp.hi <= sp.lo || sp.hi > s->ctx->files[sp.file].len)
        return "?";
    return arena_strndup(&s->ctx->arena, s->ctx->files[sp.file].text + sp.lo, sp.hi - sp.lo);
}

/* ---- names and references ---------------------------------------------- */

int sy_const(const SyK *s, NodeId e, int64_t *out)
{
    return e && ver_const_int(s->ctx, s->k, e, out);
}

NodeId sy_decl(const SyK *s, NodeId e)
{
    if (!e || e >= s->k->nnodes)
        return 0;
    const Node *n = sy_node(s, e);
    return n->op == OP_NAME && n->decl < s->k->nnodes ? n->decl : 0;
}

NodeId sy_ref_base(const SyK *s, NodeId ref)
{
    for (int d = 0; ref && d < MAX_DEPTH; d++) {
        const Node *n = sy_node(s, ref);
        switch (n->op) {
        case OP_NAME: return ref;
        case OP_INDEX: case OP_TRANS: case OP_CAST: case OP_LOAD: ref = n->a; break;
        default: return 0;
        }
    }
    return 0;
}

NodeId sy_ref_decl(const SyK *s, NodeId ref)
{
    return sy_decl(s, sy_ref_base(s, ref));
}

NodeId sy_ref_index0(const SyK *s, NodeId ref)
{
    NodeId last = 0;
    for (int d = 0; ref && d < MAX_DEPTH; d++) {
        const Node *n = sy_node(s, ref);
        if (n->op == OP_INDEX)
            last = ref;
        else if (n->op == OP_NAME)
            break;
        else if (n->op != OP_TRANS && n->op != OP_CAST && n->op != OP_LOAD)
            return 0;
        ref = n->a;
    }
    if (!last || !sy_node(s, last)->n)
        return 0;
    return ir_list_at(s->k, sy_node(s, last), 0);
}

int sy_ref_chain(const SyK *s, NodeId ref, NodeId chain[SY_REF_CHAIN])
{
    int nc = 0;
    for (NodeId r = ref; r && nc < SY_REF_CHAIN; r = sy_node(s, r)->a) {
        uint16_t op = sy_node(s, r)->op;
        if (op == OP_INDEX)
            chain[nc++] = r;
        else if (op == OP_NAME)
            break;
        else if (op != OP_TRANS && op != OP_CAST && op != OP_LOAD)
            return -1;
    }
    return nc;
}

static NodeId decl_type(const SyK *s, NodeId decl)
{
    const Node *d = sy_node(s, decl);
    if (d->op == OP_SHARED || d->op == OP_REG || d->op == OP_ARG)
        return d->a;
    return 0;
}

int sy_is_shared_ref(const SyK *s, NodeId ref)
{
    NodeId d = sy_ref_decl(s, ref);
    return d && sy_node(s, d)->op == OP_SHARED;
}

int sy_is_global_ref(const SyK *s, NodeId ref)
{
    NodeId d = sy_ref_decl(s, ref);
    return d && sy_node(s, d)->op == OP_ARG && decl_type(s, d) &&
           sy_node(s, decl_type(s, d))->op == OP_GTYPE;
}

int64_t sy_ref_bytes(const SyK *s, NodeId ref)
{
    NodeId decl = sy_ref_decl(s, ref), ty = decl ? decl_type(s, decl) : 0;
    if (!ty)
        return -1;
    const Node *t = sy_node(s, ty);
    uint32_t rank = t->op == OP_GTYPE ? t->sub : t->n;
    if (rank > 8)
        return -1;
    int64_t dims[8];
    uint32_t nd = 0;
    for (uint32_t i = 0; i < rank; i++)
        if (!sy_const(s, ir_list_at(s->k, t, i), &dims[nd++]))
            return -1;
    NodeId chain[SY_REF_CHAIN];
    int nc = sy_ref_chain(s, ref, chain);
    if (nc < 0)
        return -1;
    while (nc--) { /* innermost index first */
        const Node *ix = sy_node(s, chain[nc]);
        int64_t out[8];
        uint32_t no = 0, j = 0;
        for (; j < ix->n && j < nd; j++) {
            const Node *e = sy_node(s, ir_list_at(s->k, ix, j));
            int64_t ext;
            if (e->op == OP_COLON)
                out[no++] = dims[j];
            else if (e->op == OP_SLICE) {
                if (!sy_const(s, e->b, &ext))
                    return -1;
                out[no++] = ext;
            }
        }
        for (; j < nd; j++)
            out[no++] = dims[j];
        memcpy(dims, out, sizeof out);
        nd = no;
    }
    int64_t elems = 1;
    for (uint32_t i = 0; i < nd; i++)
        if (__builtin_mul_overflow(elems, dims[i], &elems))
            return -1;
    int bytes = ir_dtype_bytes((DType)t->dtype);
    return bytes ? elems * bytes * (t->lanes ? t->lanes : 1) : -1;
}

/* ---- pipelines ------------------------------------------------------------ */

NodeId sy_pipe_of(const SyK *s, NodeId member)
{
    if (!member || ir_ops[sy_node(s, member)->op].cls != OC_PIPE)
        return 0;
    NodeId d = sy_decl(s, sy_node(s, member)->a);
    return d && sy_node(s, d)->op == OP_PIPELINE ? d : 0;
}

NodeId sy_pipe_arg(const SyK *s, NodeId member)
{
    const Node *n = sy_node(s, member);
    return n->n ? ir_list_at(s->k, n, 0) : 0;
}

NodeId sy_token_let(const SyK *s, NodeId e)
{
    NodeId d = sy_decl(s, e);
    return d && sy_token_kind(s, d) != OP_NONE ? d : 0;
}

/* the LET a token (LET, or token VAR) comes from */
static NodeId token_origin(const SyK *s, NodeId tok)
{
    if (!tok)
        return 0;
    const Node *n = sy_node(s, tok);
    if (n->op == OP_VAR)
        return s->tok_src ? s->tok_src[tok] : 0;
    return n->op == OP_LET ? tok : 0;
}

Op sy_token_kind(const SyK *s, NodeId tok)
{
    NodeId let = token_origin(s, tok);
    const Node *n = let ? sy_node(s, let) : NULL;
    if (!n || !n->b)
        return OP_NONE;
    uint16_t op = sy_node(s, n->b)->op;
    return op == OP_P_ACQUIRE || op == OP_P_WAIT ? (Op)op : OP_NONE;
}

NodeId sy_token_pipe(const SyK *s, NodeId tok)
{
    NodeId let = token_origin(s, tok);
    return let && sy_token_kind(s, let) != OP_NONE ? sy_pipe_of(s, sy_node(s, let)->b) : 0;
}

int sy_is_token_var(const SyK *s, NodeId decl)
{
    return decl && sy_node(s, decl)->op == OP_VAR && s->tok_src && s->tok_src[decl];
}

NodeId sy_role_named(const SyK *s, NodeId name)
{
    NodeId d = sy_decl(s, name);
    if (d && sy_node(s, d)->op == OP_ROLE)
        return d;
    for (uint32_t i = 0; name && i < s->nroles; i++) /* unresolved: match by name */
        if (sy_node(s, s->roles[i])->name == sy_node(s, name)->name)
            return s->roles[i];
    return 0;
}

/* ---- roles and threads ---------------------------------------------------- */

int sy_role_range(const SyK *s, NodeId role, int64_t *first, int64_t *count)
{
    if (!role) {
        *first = 0;
        *count = s->block_threads;
        return s->block_threads > 0;
    }
    const Node *r = sy_node(s, role);
    int64_t unit = r->sub == UNIT_WARPGROUPS ? 128 : r->sub == UNIT_WARPS ? 32 : 1, a, b;
    if (!sy_const(s, r->a, &a))
        return 0;
    if (!r->b)
        b = a + 1;
    else if (!sy_const(s, r->b, &b))
        return 0;
    if (b <= a)
        return 0;
    *first = a * unit;
    *count = (b - a) * unit;
    return 1;
}

const char *sy_role_name(const SyK *s, NodeId role)
{
    if (!role)
        return "the kernel body";
    return ir_fmt(s->ctx, "role `%s`", ir_symstr(s->ctx, sy_node(s, role)->name));
}

int sy_encloses(const SyK *s, NodeId anc, NodeId st)
{
    for (int d = 0; st && d < MAX_DEPTH; d++) {
        st = s->up[st];
        if (st == anc)
            return 1;
    }
    return 0;
}

NodeId sy_loop_of(const SyK *s, NodeId st)
{
    for (int d = 0; st && d < MAX_DEPTH; d++) {
        st = s->up[st];
        if (st && sy_node(s, st)->op == OP_FOR)
            return st;
    }
    return 0;
}

NodeId sy_common_loop(const SyK *s, NodeId a, NodeId b)
{
    for (NodeId l = sy_loop_of(s, a); l; l = sy_loop_of(s, l))
        if (sy_encloses(s, l, b))
            return l;
    return 0;
}

void sy_exec_thread(SyExec *x, NodeId role, int64_t t)
{
    int64_t first = 0, count;
    if (!sy_role_range(x->s, role, &first, &count))
        first = 0;
    /* inside a role thread.x, warp and wg are role-relative (docs/tir.md section 6) */
    x->spec[SR_THREAD_X] = t - first;
    x->spec[SR_LANE] = t % 32;
    x->spec[SR_WARP] = (t - first) / 32;
    x->spec[SR_WG] = (t - first) / 128;
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
    return sy_node(s, role)->sub == UNIT_WARPGROUPS ? 128 : sy_node(s, role)->sub == UNIT_WARPS ? 32 : count;
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
    if (!block || depth > MAX_DEPTH || sy_node(s, block)->op != OP_BLOCK)
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
    if (!e || e >= s->k->nnodes || depth > MAX_DEPTH)
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

typedef struct { NodeId decl; int found; } Mention;

static void mention(SyK *s, NodeId e, void *u)
{
    Mention *m = u;
    if (sy_decl(s, e) == m->decl)
        m->found = 1;
}

int sy_mentions(const SyK *s, NodeId e, NodeId decl)
{
    Mention m = {decl, 0};
    each_expr((SyK *)s, e, mention, &m, 0);
    return m.found;
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
    if (!block || depth > MAX_DEPTH || sy_node(f->s, block)->op != OP_BLOCK)
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

/* ---- concrete interpreter -------------------------------------------------- */

void sy_exec_init(SyExec *x, SyK *s, long budget)
{
    memset(x, 0, sizeof *x);
    x->s = s;
    x->val = arena_alloc(&s->ctx->arena, s->k->nnodes * sizeof *x->val);
    x->has = arena_alloc(&s->ctx->arena, s->k->nnodes);
    x->budget = budget;
}

static int eval(SyExec *x, NodeId e, int depth, int64_t *out);

static int eval_args(SyExec *x, const Node *n, int depth, int64_t *v, uint32_t want)
{
    if (n->n != want)
        return 0;
    for (uint32_t i = 0; i < want; i++)
        if (!eval(x, ir_list_at(x->s->k, n, i), depth + 1, &v[i]))
            return 0;
    return 1;
}

static int binop(uint16_t op, int64_t a, int64_t b, int64_t *r)
{
    switch (op) {
    case OP_ADD: return !__builtin_add_overflow(a, b, r);
    case OP_SUB: return !__builtin_sub_overflow(a, b, r);
    case OP_MUL: return !__builtin_mul_overflow(a, b, r);
    case OP_DIV: if (!b || (a == INT64_MIN && b == -1)) return 0; *r = a / b; return 1;
    case OP_MOD: if (!b || (a == INT64_MIN && b == -1)) return 0; *r = a % b; return 1;
    case OP_SHL: if (b < 0 || b > 62 || a < 0 || a > (INT64_MAX >> b)) return 0; *r = a << b; return 1;
    case OP_SHR: if (b < 0 || b > 63) return 0; *r = a >> b; return 1;
    case OP_BAND: *r = a & b; return 1;
    case OP_BOR: *r = a | b; return 1;
    case OP_BXOR: *r = a ^ b; return 1;
    case OP_LT: *r = a < b; return 1;
    case OP_LE: *r = a <= b; return 1;
    case OP_GT: *r = a > b; return 1;
    case OP_GE: *r = a >= b; return 1;
    case OP_EQ: *r = a == b; return 1;
    case OP_NE: *r = a != b; return 1;
    case OP_MAX: *r = a > b ? a : b; return 1;
    case OP_MIN: *r = a < b ? a : b; return 1;
    case OP_CDIV: if (b <= 0 || a < 0) return 0; *r = a / b + (a % b != 0); return 1;
    default: return 0;
    }
}

static int eval(SyExec *x, NodeId e, int depth, int64_t *out)
{
    if (!e || e >= x->s->k->nnodes || depth > MAX_DEPTH)
        return 0;
    const Node *n = sy_node(x->s, e);
    int64_t a, b, v[3];
    switch (n->op) {
    case OP_INT: case OP_BOOL: *out = n->v.i; return 1;
    case OP_SPECIAL:
        if (n->sub >= SR__COUNT)
            return 0;
        if (n->sub == SR_NTHREADS) {
            int64_t first, count;
            if (!sy_role_range(x->s, x->s->role[x->s->stmt_of[e]], &first, &count))
                return 0;
            *out = count;
            return 1;
        }
        if (!x->has_spec[n->sub])
            return 0;
        *out = x->spec[n->sub];
        return 1;
    case OP_NAME: {
        NodeId d = n->decl;
        if (!d || d >= x->s->k->nnodes)
            return 0;
        if (x->has[d]) {
            *out = x->val[d];
            return 1;
        }
        const Node *dn = sy_node(x->s, d);
        if (dn->op == OP_PARAM)
            return eval(x, dn->a, depth + 1, out);
        if (dn->op == OP_LET && sy_token_kind(x->s, d) == OP_NONE)
            return eval(x, dn->b, depth + 1, out);
        return 0;
    }
    case OP_CAST: return eval(x, n->a, depth + 1, out);
    case OP_NEG: if (!eval(x, n->a, depth + 1, &a) || a == INT64_MIN) return 0; *out = -a; return 1;
    case OP_NOT: if (!eval(x, n->a, depth + 1, &a)) return 0; *out = !a; return 1;
    case OP_AND: case OP_OR: {
        int ka = eval(x, n->a, depth + 1, &a);
        if (ka && (n->op == OP_AND ? !a : a)) {
            *out = n->op == OP_OR;
            return 1;
        }
        int kb = eval(x, n->b, depth + 1, &b);
        if (kb && (n->op == OP_AND ? !b : b)) {
            *out = n->op == OP_OR;
            return 1;
        }
        if (!ka || !kb)
            return 0;
        *out = n->op == OP_AND ? (a && b) : (a || b);
        return 1;
    }
    case OP_CDIV: case OP_MAX: case OP_MIN:
        return eval_args(x, n, depth, v, 2) && binop(n->op, v[0], v[1], out);
    case OP_SELECT:
        if (n->n != 3 || !eval(x, ir_list_at(x->s->k, n, 0), depth + 1, &a))
            return 0;
        return eval(x, ir_list_at(x->s->k, n, a ? 1 : 2), depth + 1, out);
    default: break;
    }
    if (ir_ops[n->op].cls != OC_BIN || n->op == OP_POW)
        return 0;
    return eval(x, n->a, depth + 1, &a) && eval(x, n->b, depth + 1, &b) && binop(n->op, a, b, out);
}

int sy_eval(SyExec *x, NodeId e, int64_t *out)
{
    return eval(x, e, 0, out);
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
        uint16_t op = n->sub;
        if (!binop(op, old, v, &v)) {
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
    if (x->stopped || x->unknown || x->budget < 0)
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
    if (!block || depth > MAX_DEPTH || sy_node(x->s, block)->op != OP_BLOCK)
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
        int64_t g = *mod, b = c;
        while (b) { int64_t t = g % b; g = b; b = t; }
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
        if (i == 0)
            for (uint32_t h = 0; h < k->nshapes; h++)
                if (k->shapes[h].name == sy_node(s, d)->name)
                    v = k->shapes[h].value;
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
    return buf;
}
