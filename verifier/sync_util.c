/* sync_util.c — what the synchronization and bounds checks share: the kernel's
 * statement tables (enclosing statement, role, program order), diagnostics,
 * references, stage tokens and roles. Visiting and the forward dataflow are in
 * sync_walk.c; thread counting under guards in sync_threads.c (the concrete
 * interpreter for simulations is analysis/exec.c). */
#include <stdarg.h>
#include <string.h>
#include "consteval.h"
#include "sync.h"

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

/* analysis/exec.h's hooks: the memoized constants, stage tokens left unvalued */
static int ax_konst(const AxKernel *kf, NodeId e, int64_t *out)
{
    return sy_const(kf->owner, e, out);
}

static int ax_opaque(const AxKernel *kf, NodeId let)
{
    return sy_token_kind(kf->owner, let) != OP_NONE;
}

void sy_init(SyK *s, CakeCtx *ctx, Kernel *k, Target tg)
{
    memset(s, 0, sizeof *s);
    s->ctx = ctx;
    s->k = k;
    s->tg = tg;
    s->warp = tg_warp(tg);
    size_t nn = k->nnodes;
    s->up = arena_alloc(&ctx->arena, nn * sizeof *s->up);
    s->in_else = arena_alloc(&ctx->arena, nn);
    s->guards = arena_alloc(&ctx->arena, nn);
    s->role = arena_alloc(&ctx->arena, nn * sizeof *s->role);
    s->pos = arena_alloc(&ctx->arena, nn * sizeof *s->pos);
    s->stmt_of = arena_alloc(&ctx->arena, nn * sizeof *s->stmt_of);
    s->cknown = arena_alloc(&ctx->arena, nn);
    s->cval = arena_alloc(&ctx->arena, nn * sizeof *s->cval);
    s->ncmemo = (uint32_t)nn;
    s->block_threads = ce_block_threads(ctx, k, tg);
    Builder b = {s, 0};
    build_block(&b, k->body, 0, 0, 0);
    s->tok_src = arena_alloc(&ctx->arena, nn * sizeof *s->tok_src);
    for (int it = 0; it < 3; it++) /* var prev: i32 = s0; prev = s */
        sy_each_stmt(s, k->body, find_tokvars, NULL);
    s->ax = (AxKernel){ctx, k, tg, s->warp, s->block_threads, s->role, s->stmt_of, ax_konst, ax_opaque, s};
}

/* ---- one run per warp width -------------------------------------------- */

/* what the runs reported: per (code, node) key, the diagnostic it made (its
 * index in ctx->diags; UINT32_MAX: none) and which runs found it (bit = run) */
typedef struct { uint64_t key; uint32_t diag, found; } SyRunDiag;
struct SyRuns {
    SyRunDiag *d; uint32_t n, cap;
    uint32_t run;
};

static int runs_seen(SyRuns *r, uint64_t key)
{
    for (uint32_t i = 0; i < r->n; i++)
        if (r->d[i].key == key) {
            r->d[i].found |= 1u << r->run;
            return 1;
        }
    return 0;
}

static void runs_add(CakeCtx *ctx, SyRuns *r, uint64_t key, uint32_t diag)
{
    r->d = arena_grow(&ctx->arena, r->d, &r->cap, r->n + 1, sizeof *r->d);
    r->d[r->n++] = (SyRunDiag){key, diag, 1u << r->run};
}

/* a problem some warp widths have and others not: notes naming the targets that have it */
static void runs_annotate(CakeCtx *ctx, Kernel *k, const SyRuns *r, const Target *first, uint32_t nruns)
{
    for (uint32_t i = 0; i < r->n; i++) {
        if (r->d[i].diag == UINT32_MAX || r->d[i].found == (1u << nruns) - 1)
            continue;
        Diag *d = &ctx->diags[r->d[i].diag];
        for (int t = 0; t < TG__COUNT; t++) {
            uint32_t run = 0;
            while (run < nruns && tg_warp(first[run]) != tg_warp((Target)t))
                run++;
            if (!k->targets[t] || run == nruns || !(r->d[i].found & 1u << run))
                continue;
            int64_t th = ce_block_threads(ctx, k, (Target)t);
            diag_note(ctx, d, k->target_spans[t], "on %s: %d-lane %ss%s", ir_target_names[t],
                      tg_warp((Target)t), tg_info((Target)t)->warp_word,
                      th > 0 ? ir_fmt(ctx, ", %lld threads per block", (long long)th) : "");
        }
    }
}

/* 1 when the checks can see the warp width in k: a block size or roles in
 * warps, the `lane`, `warp` or `wg` registers, named barriers (whole warps) */
static int width_matters(const Kernel *k)
{
    if (k->block_unit != UNIT_THREADS)
        return 1;
    for (NodeId n = 1; n < k->nnodes; n++) {
        const Node *x = &k->nodes[n];
        if (x->op == OP_ROLE || x->op == OP_BAR_SYNC || x->op == OP_BAR_ARRIVE ||
            (x->op == OP_SPECIAL && (x->sub == SR_LANE || x->sub == SR_WARP || x->sub == SR_WG)))
            return 1;
    }
    return 0;
}

uint32_t sy_run(CakeCtx *ctx, Kernel *k, uint32_t (*check)(SyK *s))
{
    if (!k || !k->body)
        return 0;
    Target first[TG__COUNT]; /* per warp width: the first target that has it */
    uint32_t nruns = 0, errors = 0;
    for (int t = 0; t < TG__COUNT; t++) {
        uint32_t i = 0;
        while (i < nruns && tg_warp(first[i]) != tg_warp((Target)t))
            i++;
        if (k->targets[t] && i == nruns)
            first[nruns++] = (Target)t;
    }
    if (!nruns)
        first[nruns++] = tg_first(k);
    if (nruns > 1 && !width_matters(k))
        nruns = 1;
    SyRuns runs = {0};
    for (uint32_t i = 0; i < nruns; i++) {
        SyK s;
        sy_init(&s, ctx, k, first[i]);
        runs.run = i;
        s.runs = nruns > 1 ? &runs : NULL;
        errors += check(&s);
    }
    if (nruns > 1)
        runs_annotate(ctx, k, &runs, first, nruns);
    return errors;
}

/* ---- diagnostics --------------------------------------------------------- */

Diag *sy_report(SyK *s, DiagCode code, NodeId at, const char *fmt, ...)
{
    uint64_t key = (uint64_t)code << 32 | at;
    for (uint32_t i = 0; i < s->nreported; i++)
        if (s->reported[i] == key)
            return NULL;
    s->reported = arena_grow(&s->ctx->arena, s->reported, &s->capreported, s->nreported + 1,
                             sizeof *s->reported);
    s->reported[s->nreported++] = key;
    /* an earlier check reported this node: no follow-on error, but the problem is recorded, so
       that checks which step back after it (sy_reported_in) step back here too */
    if (at && (sy_node(s, at)->flags & NF_ERROR))
        return NULL;
    if (s->runs && runs_seen(s->runs, key)) /* the run for another warp width reported it */
        return NULL;
    va_list ap;
    va_start(ap, fmt);
    char *msg = ir_vfmt(s->ctx, fmt, ap);
    va_end(ap);
    Diag *d = diag_report(s->ctx, code, sy_span(s, at), "%s", msg);
    if (s->runs)
        runs_add(s->ctx, s->runs, key, d->msg ? s->ctx->ndiags - 1 : UINT32_MAX);
    return d->msg ? d : NULL;
}

int sy_reported_in(const SyK *s, DiagCode code, NodeId role)
{
    for (uint32_t i = 0; i < s->nreported; i++)
        if ((s->reported[i] >> 32) == (uint64_t)code && s->role[s->stmt_of[(NodeId)s->reported[i]]] == role)
            return 1;
    return 0;
}

const char *sy_text(SyK *s, NodeId id)
{
    Span sp = sy_span(s, id);
    if (sp.file >= s->ctx->nfiles || sp.hi <= sp.lo || sp.hi > s->ctx->files[sp.file].len)
        return "?";
    return arena_strndup(&s->ctx->arena, s->ctx->files[sp.file].text + sp.lo, sp.hi - sp.lo);
}

/* ---- notes at the lets an expression reads ----------------------------------- */

typedef struct { SyK *s; Diag *d; int left, deep; NodeId seen[8]; int nseen; NodeId next[8]; int nnext; } LetNotes;

static void note_let(SyK *s, NodeId e, void *u)
{
    LetNotes *ln = u;
    NodeId d = sy_node(s, e)->op == OP_NAME ? sy_node(s, e)->decl : 0;
    if (!ln->left || !d || sy_node(s, d)->op != OP_LET || sy_token_kind(s, d) != OP_NONE)
        return;
    for (int i = 0; i < ln->nseen; i++)
        if (ln->seen[i] == d)
            return;
    if (ln->nseen < 8)
        ln->seen[ln->nseen++] = d;
    if (ln->nnext < 8)
        ln->next[ln->nnext++] = d;
    ln->left--;
    diag_note(s->ctx, ln->d, sy_span(s, d), "`%s` is computed here", ir_symstr(s->ctx, sy_node(s, d)->name));
}

void sy_note_lets(SyK *s, Diag *d, NodeId e, int max)
{
    if (!d || !e)
        return;
    LetNotes ln = {.s = s, .d = d, .left = max};
    sy_each_expr(s, e, note_let, &ln);
    /* then the lets those lets read (a tile map: bm from first and gm) */
    int n = ln.nnext;
    NodeId lets[8];
    memcpy(lets, ln.next, sizeof lets);
    for (int i = 0; i < n && ln.left; i++)
        sy_each_expr(s, sy_node(s, lets[i])->b, note_let, &ln);
}

/* ---- names and references ---------------------------------------------- */

/* memoised per SyK: the checks ask about the same dims and extents thousands
 * of times, and the kernel (its parameter values included) is fixed for a run */
int sy_const(const SyK *s, NodeId e, int64_t *out)
{
    if (!e)
        return 0;
    if (e >= s->ncmemo)
        return ce_const_int(s->ctx, s->k, e, out);
    if (!s->cknown[e]) {
        int64_t v = 0;
        s->cknown[e] = ce_const_int(s->ctx, s->k, e, &v) ? 1 : 2;
        s->cval[e] = v;
    }
    if (s->cknown[e] != 1)
        return 0;
    *out = s->cval[e];
    return 1;
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
    for (int d = 0; ref && d < SY_MAX_DEPTH; d++) {
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
    for (int d = 0; ref && d < SY_MAX_DEPTH; d++) {
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

int sy_tile_index(const SyK *s, NodeId ref, uint32_t cap)
{
    NodeId d = sy_ref_decl(s, ref);
    for (uint32_t i = 0; d && i < s->ntiles && i < cap; i++)
        if (s->tiles[i] == d)
            return (int)i;
    return -1;
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

/* the bytes of a shared tile reference as the kernel writes its extents
 * (`BM * D * 2` for `Qs: bf16[BM, D]`, `Ks[s]` of bf16[STAGES, BN, D]:
 * `BN * D * 2`); NULL when the tile's type is not known */
const char *sy_ref_bytes_text(SyK *s, NodeId ref)
{
    NodeId decl = sy_ref_decl(s, ref), ty = decl ? decl_type(s, decl) : 0;
    if (!ty)
        return NULL;
    const Node *t = sy_node(s, ty);
    uint32_t rank = t->op == OP_GTYPE ? t->sub : t->n;
    if (rank > 8)
        return NULL;
    const char *dims[8];
    uint32_t nd = 0;
    for (uint32_t i = 0; i < rank; i++)
        dims[nd++] = sy_text(s, ir_list_at(s->k, t, i));
    NodeId chain[SY_REF_CHAIN];
    int nc = sy_ref_chain(s, ref, chain);
    if (nc < 0)
        return NULL;
    while (nc--) {
        const Node *ix = sy_node(s, chain[nc]);
        const char *out[8];
        uint32_t no = 0, j = 0;
        for (; j < ix->n && j < nd; j++) {
            const Node *e = sy_node(s, ir_list_at(s->k, ix, j));
            if (e->op == OP_COLON)
                out[no++] = dims[j];
            else if (e->op == OP_SLICE)
                out[no++] = sy_text(s, e->b);
            /* any other index: one element of this dim */
        }
        for (; j < nd; j++)
            out[no++] = dims[j];
        memcpy(dims, out, sizeof out);
        nd = no;
    }
    int bytes = ir_dtype_bytes((DType)t->dtype) * (t->lanes ? t->lanes : 1);
    if (!bytes)
        return NULL;
    const char *txt = "";
    for (uint32_t i = 0; i < nd; i++) {
        int compound = strpbrk(dims[i], "+-") != NULL;
        txt = ir_fmt(s->ctx, "%s%s%s%s%s", txt, i ? " * " : "", compound ? "(" : "", dims[i], compound ? ")" : "");
    }
    return ir_fmt(s->ctx, "%s%s%d", txt, nd ? " * " : "", bytes);
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
    return ax_role_range(&s->ax, role, first, count);
}

const char *sy_role_name(const SyK *s, NodeId role)
{
    if (!role)
        return "the kernel body";
    return ir_fmt(s->ctx, "role `%s`", ir_symstr(s->ctx, sy_node(s, role)->name));
}

int sy_encloses(const SyK *s, NodeId anc, NodeId st)
{
    for (int d = 0; st && d < SY_MAX_DEPTH; d++) {
        st = s->up[st];
        if (st == anc)
            return 1;
    }
    return 0;
}

NodeId sy_block_of(const SyK *s, NodeId st)
{
    NodeId up = s->up[st];
    if (!up)
        return s->k->body;
    const Node *u = sy_node(s, up);
    if (u->op == OP_IF)
        return s->in_else[st] ? u->c : u->b;
    return u->d;
}

int sy_is_return_guard(const SyK *s, NodeId x)
{
    const Node *xn = sy_node(s, x);
    if (xn->op != OP_IF || xn->c || !xn->b)
        return 0;
    const Node *b = sy_node(s, xn->b);
    return b->op == OP_BLOCK && b->n && sy_node(s, ir_list_at(s->k, b, b->n - 1))->op == OP_RETURN;
}

NodeId sy_loop_of(const SyK *s, NodeId st)
{
    for (int d = 0; st && d < SY_MAX_DEPTH; d++) {
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

int sy_set_since(const SyK *s, NodeId v, NodeId p, NodeId at)
{
    for (NodeId a = 1; a < s->k->nnodes; a++) {
        const Node *n = sy_node(s, a);
        if (n->op != OP_ASSIGN || !s->pos[a] || s->pos[a] <= s->pos[p])
            continue;
        if ((sy_node(s, n->a)->op == OP_NAME ? sy_decl(s, n->a) : sy_ref_decl(s, n->a)) != v)
            continue;
        if (s->pos[a] < s->pos[at])
            return 1;
        for (NodeId l = s->up[a]; l && s->pos[l] >= s->pos[p]; l = s->up[l])
            if (sy_node(s, l)->op == OP_FOR && (l == at || sy_encloses(s, l, at)))
                return 1;
    }
    return 0;
}
