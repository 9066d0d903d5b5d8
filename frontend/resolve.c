/* resolve.c — name resolution: sets NAME.decl, reports E0201-E0206.
 *
 * Scopes nest: the kernel scope holds params, dims, args, roles (visible
 * kernel-wide, so pipelines may name roles declared later) and the body's
 * top-level declarations in order; blocks and role bodies nest. The
 * reference block sees only params, dims and args. An undeclared name used
 * as a whole index on the left of an assignment is an implicit index
 * (NF_IMPLICIT): in reference blocks, and in the schedule for tile-wide
 * elementwise assignments like `sacc[r, c] = select(c < S, sacc[r, c], -inf)`.
 * The value of a tile store declares them the same way, for its mask:
 * `store C[i : +R, j : +C] <- bf16(acc[r, c]) mask i + r < M`. Bindings shadow
 * through a per-name chain, so every lookup is O(1). */
#include <string.h>
#include "parser.h"

typedef struct { Sym name; NodeId decl; uint32_t prev; } Binding;

typedef struct {
    CakeCtx *ctx;
    Kernel *k;
    Binding *b; uint32_t nb, capb;
    uint32_t *head; uint32_t nsyms;   /* per name: innermost binding + 1 */
    uint32_t scope;                   /* index of the current scope's first binding */
    int in_ref;
} Resolver;

static void rexpr(Resolver *r, NodeId id);
static void rstmt(Resolver *r, NodeId id);

static Node *N(Resolver *r, NodeId id) { return ir_get(r->k, id); }

static const char *kind_name(Op op)
{
    switch (op) {
    case OP_PARAM: return "a compile-time parameter";
    case OP_DIM: return "a symbolic dim";
    case OP_ARG: return "a kernel argument";
    case OP_LET: return "a `let` binding";
    case OP_VAR: return "a variable";
    case OP_SHARED: return "a shared tile";
    case OP_REG: return "a register tile";
    case OP_MBARRIER: return "an mbarrier";
    case OP_PIPELINE: return "a pipeline";
    case OP_ROLE: return "a role";
    case OP_FOR: return "a loop variable";
    case OP_SUM: case OP_RMAX: case OP_RMIN: return "a reduction index";
    case OP_NAME: return "an implicit index";
    default: return "a name";
    }
}

/* ---- scopes ------------------------------------------------------------- */

static uint32_t scope_open(Resolver *r)
{
    uint32_t saved = r->scope;
    r->scope = r->nb;
    return saved;
}

static void scope_close(Resolver *r, uint32_t saved)
{
    while (r->nb > r->scope) {
        Binding *b = &r->b[--r->nb];
        r->head[b->name] = b->prev;
    }
    r->scope = saved;
}

static NodeId lookup(Resolver *r, Sym s)
{
    if (s >= r->nsyms || !r->head[s])
        return 0;
    return r->b[r->head[s] - 1].decl;
}

static void bind(Resolver *r, Sym s, NodeId decl)
{
    if (!s || s >= r->nsyms)
        return;
    uint32_t h = r->head[s];
    if (h && h - 1 >= r->scope) {
        NodeId first = r->b[h - 1].decl;
        Diag *d = diag_report(r->ctx, E0202, N(r, decl)->span, "`%s` is defined twice in this scope",
                              ir_symstr(r->ctx, s));
        diag_note(r->ctx, d, N(r, first)->span, "first defined here (as %s)",
                  kind_name((Op)N(r, first)->op));
        N(r, decl)->flags |= NF_ERROR;
        return;
    }
    r->b = arena_grow(&r->ctx->arena, r->b, &r->capb, r->nb + 1, sizeof *r->b);
    r->b[r->nb] = (Binding){s, decl, h};
    r->head[s] = ++r->nb;
}

static void declare(Resolver *r, NodeId id) { bind(r, N(r, id)->name, id); }

/* ---- unknown names ------------------------------------------------------ */

static int is_decl_op(Op op)
{
    return ir_ops[op].cls == OC_DECL || op == OP_FOR || op == OP_SUM || op == OP_RMAX ||
           op == OP_RMIN;
}

/* a declaration of s anywhere in the kernel (for "used before" and reference) */
static NodeId find_anywhere(Resolver *r, Sym s)
{
    for (NodeId i = 1; i < r->k->nnodes; i++) {
        Node *n = N(r, i);
        if (n->name == s && is_decl_op((Op)n->op))
            return i;
    }
    return 0;
}

static void suggest(Resolver *r, Diag *d, Node *use)
{
    const char *s = ir_symstr(r->ctx, use->name);
    const char **cands = arena_alloc(&r->ctx->arena, (r->nb + 1) * sizeof *cands);
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->nb; i++)
        if (r->head[r->b[i].name] == i + 1)  /* not shadowed */
            cands[n++] = ir_symstr(r->ctx, r->b[i].name);
    const char *best = fe_suggest(s, cands, n);
    if (best) {
        diag_help(r->ctx, d, "did you mean `%s`?", best);
        diag_fixit(r->ctx, d, use->span, best);
    }
}

/* names a CUDA or HIP programmer reaches for */
static void cuda_hint(Resolver *r, Diag *d, const char *s)
{
    static const char *const hints[][2] = {
        {"blockIdx", "CUDA's `blockIdx.x` is `block.x` in TIR (and `block.y`, `block.z`)"},
        {"threadIdx", "CUDA's `threadIdx.x` is `thread.x` in TIR (and `thread.y`, `thread.z`)"},
        {"blockDim", "the block size in threads is `threads` in TIR"},
        {"laneid", "the lane index is `lane` in TIR"},
        {"lane_id", "the lane index is `lane` in TIR"},
        {"warpid", "the warp index is `warp` in TIR (`wg` for the warpgroup)"},
        {"warp_id", "the warp index is `warp` in TIR (`wg` for the warpgroup)"},
        {"__syncthreads", "a block barrier is the statement `sync` in TIR"},
    };
    for (size_t i = 0; i < sizeof hints / sizeof *hints; i++)
        if (!strcmp(s, hints[i][0]))
            diag_help(r->ctx, d, "%s", hints[i][1]);
}

static void unknown(Resolver *r, NodeId id)
{
    Node *use = N(r, id);
    const char *s = ir_symstr(r->ctx, use->name);
    uint32_t limit = r->ctx->max_errors ? r->ctx->max_errors : 200;
    NodeId later = r->ctx->nerrors < limit ? find_anywhere(r, use->name) : 0;
    Diag *d;
    if (later && r->in_ref) {
        d = diag_report(r->ctx, E0201, use->span, "`%s` is not visible in the reference block", s);
        diag_note(r->ctx, d, N(r, later)->span, "`%s` is declared here, in the schedule", s);
        diag_help(r->ctx, d, "a reference block sees only the kernel's parameters, dims and "
                             "arguments (and its own names)");
    } else if (later && N(r, later)->span.lo > use->span.lo) {
        d = diag_report(r->ctx, E0204, use->span, "`%s` is used before its declaration", s);
        diag_note(r->ctx, d, N(r, later)->span, "`%s` is declared here", s);
        diag_help(r->ctx, d, "move the declaration above its first use");
    } else {
        d = diag_report(r->ctx, E0201, use->span, "unknown name `%s`", s);
        cuda_hint(r, d, s);
        if (later)
            diag_note(r->ctx, d, N(r, later)->span, "`%s` is declared here, out of scope", s);
        suggest(r, d, use);
    }
    use->flags |= NF_ERROR;
}

static void wrong_kind(Resolver *r, NodeId use, NodeId decl, const char *what)
{
    Node *u = N(r, use);
    Diag *d = diag_report(r->ctx, E0205, u->span, "`%s` is %s, not %s", ir_symstr(r->ctx, u->name),
                          kind_name((Op)N(r, decl)->op), what);
    diag_note(r->ctx, d, N(r, decl)->span, "`%s` is declared here", ir_symstr(r->ctx, u->name));
    u->flags |= NF_ERROR;
}

/* resolves NAME id; returns its declaration or 0 */
static NodeId rname(Resolver *r, NodeId id)
{
    Node *n = N(r, id);
    NodeId decl = lookup(r, n->name);
    if (!decl) {
        unknown(r, id);
        return 0;
    }
    n->decl = decl;
    return decl;
}

/* ---- expressions -------------------------------------------------------- */

static void rlist(Resolver *r, NodeId id)
{
    Node *n = N(r, id);
    for (uint32_t i = 0; i < n->n; i++)
        rexpr(r, ir_list_at(r->k, n, i));
}

static void rvalue_name(Resolver *r, NodeId id)
{
    NodeId decl = rname(r, id);
    if (!decl)
        return;
    Op op = (Op)N(r, decl)->op;
    if (op == OP_ROLE)
        wrong_kind(r, id, decl, "a value");
    else if (op == OP_PIPELINE)
        wrong_kind(r, id, decl, "a value (use its members: `.acquire()`, `.wait()`, ...)");
}

static void rexpr(Resolver *r, NodeId id)
{
    if (!id)
        return;
    Node *n = N(r, id);
    switch ((Op)n->op) {
    case OP_NAME:
        if (!(n->flags & NF_IMPLICIT))
            rvalue_name(r, id);
        return;
    case OP_SUM: case OP_RMAX: case OP_RMIN: {
        rexpr(r, n->a);
        rexpr(r, n->b);
        uint32_t saved = scope_open(r);
        declare(r, id);
        rexpr(r, N(r, id)->c);
        scope_close(r, saved);
        return;
    }
    case OP_P_ACQUIRE: case OP_P_COMMIT: case OP_P_WAIT: case OP_P_RELEASE: case OP_P_FULL:
    case OP_P_EMPTY: {
        NodeId decl = N(r, n->a)->op == OP_NAME ? rname(r, n->a) : 0;
        if (decl && N(r, decl)->op != OP_PIPELINE)
            wrong_kind(r, N(r, id)->a, decl, "a pipeline");
        rlist(r, id);
        return;
    }
    default:
        break;
    }
    NodeId a = n->a, b = n->b, c = n->c, d = n->d;
    rexpr(r, a);
    rexpr(r, b);
    rexpr(r, c);
    rexpr(r, d);
    if (N(r, id)->n)
        rlist(r, id);
}

/* ---- statements --------------------------------------------------------- */

static void rblock(Resolver *r, NodeId id)
{
    if (!id)
        return;
    uint32_t saved = scope_open(r);
    Node *n = N(r, id);
    for (uint32_t i = 0; i < n->n; i++)
        rstmt(r, ir_list_at(r->k, n, i));
    scope_close(r, saved);
}

/* `lhs = ...`: the target must be mutable */
static void check_target(Resolver *r, NodeId lhs)
{
    Node *n = N(r, lhs);
    int indexed = n->op == OP_INDEX;
    NodeId base = indexed ? n->a : lhs;
    NodeId decl = N(r, base)->decl;
    if (!decl || N(r, base)->op != OP_NAME)
        return;
    Op op = (Op)N(r, decl)->op;
    Node *dn = N(r, decl);
    if (op == OP_VAR || op == OP_REG || op == OP_SHARED)
        return;
    if (op == OP_ARG && indexed && N(r, dn->a)->op == OP_GTYPE)
        return;
    if (op == OP_MBARRIER || op == OP_PIPELINE || op == OP_ROLE) {
        wrong_kind(r, base, decl, "something that can be assigned");
        return;
    }
    const char *s = ir_symstr(r->ctx, dn->name);
    Diag *d = diag_report(r->ctx, E0206, N(r, base)->span, "cannot assign to `%s`: it is %s", s,
                          kind_name(op));
    diag_note(r->ctx, d, dn->span, "`%s` is declared here", s);
    if (op == OP_LET)
        diag_help(r->ctx, d, "declare it with `var %s: TYPE = ...` to make it mutable", s);
}

/* 1 when lhs writes a distributed register tile (a `reg` with a layout):
 * outside reference blocks only those take implicit indices, so that a
 * misspelled loop variable indexing a per-thread array is an unknown name */
static int tile_target(Resolver *r, const Node *lhs)
{
    const Node *base = N(r, lhs->a);
    NodeId d = base->op == OP_NAME ? lookup(r, base->name) : 0;
    const Node *decl = d ? N(r, d) : NULL;
    return decl && decl->op == OP_REG && (decl->flags & NF_HAS_LAYOUT) && decl->v.attr.layout != LY_NONE;
}

/* bare unknown names indexing the left side are implicit indices */
static void implicit_indices(Resolver *r, NodeId lhs)
{
    Node *n = N(r, lhs);
    if (n->op != OP_INDEX || (!r->in_ref && !tile_target(r, n)))
        return;
    for (uint32_t i = 0; i < n->n; i++) {
        NodeId ix = ir_list_at(r->k, n, i);
        Node *x = N(r, ix);
        if (x->op != OP_NAME || lookup(r, x->name))
            continue;
        x->decl = ix;
        x->flags |= NF_IMPLICIT;
        bind(r, x->name, ix);
    }
}

static void rassign(Resolver *r, NodeId id)
{
    Node *n = N(r, id);
    NodeId lhs = n->a, rhs = n->b;
    uint32_t saved = scope_open(r);
    implicit_indices(r, lhs);
    rexpr(r, rhs);
    Node *l = N(r, lhs);
    if (l->op == OP_INDEX) {
        rname(r, l->a);
        rlist(r, lhs);
    } else {
        rname(r, lhs);
    }
    check_target(r, lhs);
    scope_close(r, saved);
}

/* the register tiles indexed by bare unknown names in a store's value, with
 * at least min_rank indices */
static void value_implicit(Resolver *r, NodeId e, uint32_t min_rank, int depth)
{
    if (!e || depth > 200)
        return;
    Node *n = N(r, e);
    if (n->op == OP_INDEX && n->n >= min_rank && N(r, n->a)->op == OP_NAME && tile_target(r, n))
        implicit_indices(r, e);
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        value_implicit(r, kids[i], min_rank, depth + 1);
    for (uint32_t i = 0; i < N(r, e)->n; i++)
        value_implicit(r, ir_list_at(r->k, N(r, e), i), min_rank, depth + 1);
}

/* `store ref <- value mask m`: implicit indices of the value reach the mask,
 * not the reference (its start is one per tile). A 2-D access declares them
 * before a row vector's (`bf16(m[r] + acc[r, c])`: acc's), so that the access
 * that declares them is the tile the store writes. */
static void rstore(Resolver *r, NodeId id)
{
    rexpr(r, N(r, id)->a);
    uint32_t saved = scope_open(r);
    value_implicit(r, N(r, id)->b, 2, 0);
    value_implicit(r, N(r, id)->b, 1, 0);
    rexpr(r, N(r, id)->b);
    rexpr(r, N(r, id)->c);
    scope_close(r, saved);
}

static void role_ref(Resolver *r, NodeId name)
{
    NodeId decl = rname(r, name);
    if (decl && N(r, decl)->op != OP_ROLE)
        wrong_kind(r, name, decl, "a role");
}

static void rstmt(Resolver *r, NodeId id)
{
    Node *n = N(r, id);
    switch ((Op)n->op) {
    case OP_REFERENCE:
        return;  /* resolved first, in the header scope */
    case OP_LET: case OP_VAR: case OP_SHARED: case OP_REG: case OP_MBARRIER:
        rexpr(r, n->a);
        rexpr(r, n->b);
        declare(r, id);
        return;
    case OP_PIPELINE:
        rexpr(r, n->a);
        role_ref(r, n->b);
        role_ref(r, N(r, id)->c);
        declare(r, id);
        return;
    case OP_ROLE:
        rexpr(r, n->a);
        rexpr(r, n->b);
        rexpr(r, n->c);
        rblock(r, N(r, id)->d);
        return;
    case OP_ASSIGN: rassign(r, id); return;
    case OP_STORE: rstore(r, id); return;
    case OP_FOR: {
        rexpr(r, n->a);
        rexpr(r, n->b);
        rexpr(r, n->c);
        uint32_t saved = scope_open(r);
        declare(r, id);
        rblock(r, N(r, id)->d);
        scope_close(r, saved);
        return;
    }
    case OP_IF: {
        NodeId c = n->c;
        rexpr(r, n->a);
        rblock(r, n->b);
        if (c && N(r, c)->op == OP_IF)
            rstmt(r, c);
        else
            rblock(r, c);
        return;
    }
    case OP_BLOCK: rblock(r, id); return;
    default: {
        NodeId a = n->a, b = n->b, c = n->c;
        rexpr(r, a);
        rexpr(r, b);
        rexpr(r, c);
        return;
    }
    }
}

/* ---- kernels ------------------------------------------------------------ */

static void resolve_header(Resolver *r)
{
    Kernel *k = r->k;
    for (uint32_t i = 0; i < k->nparams; i++)
        declare(r, k->params[i]);
    for (uint32_t i = 0; i < k->ndims; i++)
        declare(r, k->dims[i]);
    for (uint32_t i = 0; i < k->nargs; i++)
        declare(r, k->args[i]);
    for (uint32_t i = 0; i < k->nparams; i++) {
        rexpr(r, N(r, k->params[i])->a);
        rexpr(r, N(r, k->params[i])->b);   /* the values it may take: `in lo .. hi` */
        rexpr(r, N(r, k->params[i])->c);
        for (uint32_t j = 0; j < N(r, k->params[i])->n; j++)   /* `in {v, ...}` */
            rexpr(r, ir_list_at(k, N(r, k->params[i]), j));
    }
    for (uint32_t i = 0; i < k->nargs; i++)
        rexpr(r, N(r, k->args[i])->a);
    for (uint32_t i = 0; i < k->ngrid; i++)
        rexpr(r, k->grid[i]);
    rexpr(r, k->block_size);
    for (uint32_t i = 0; i < k->nassumes; i++)
        rexpr(r, k->assumes[i]);
}

static void resolve_kernel(Resolver *r)
{
    Kernel *k = r->k;
    resolve_header(r);
    if (k->reference) {
        r->in_ref = 1;
        rblock(r, k->reference);
        r->in_ref = 0;
    }
    if (!k->body)
        return;
    Node *body = N(r, k->body);
    for (uint32_t i = 0; i < body->n; i++) {
        NodeId s = ir_list_at(k, body, i);
        if (N(r, s)->op == OP_ROLE)
            declare(r, s);
    }
    for (uint32_t i = 0; i < body->n; i++)
        rstmt(r, ir_list_at(k, body, i));
}

uint32_t fe_resolve(CakeCtx *ctx, Module *m)
{
    uint32_t before = ctx->nerrors;
    for (uint32_t i = 0; i < m->nkernels; i++) {
        Resolver r = {0};
        r.ctx = ctx;
        r.k = m->kernels[i];
        r.nsyms = ctx->names.n + 1;
        r.head = arena_alloc(&ctx->arena, r.nsyms * sizeof *r.head);
        resolve_kernel(&r);
    }
    return ctx->nerrors - before;
}
