/* parser_stmt.c — blocks, items (declarations, roles, the reference block)
 * and statements. */
#include <string.h>
#include "parser.h"

static NodeId stmt(Parser *p);

static NodeId named(Parser *p, Op op, Token *kw, Token *name)
{
    NodeId id = fe_node(p, op, kw->span);
    ir_get(p->k, id)->name = name->sym;
    return id;
}

/* IDENT for a declaration; returns its token or NULL */
static Token *decl_name(Parser *p, const char *what)
{
    Token *t = fe_peek(p);
    if (fe_expect(p, T_IDENT, what))
        return t;
    return NULL;
}

/* 'shared' IDENT ':' DTYPE '[' expr (',' expr)* ']' ('swizzle' INT)? ('align' INT)? */
static NodeId shared_decl(Parser *p, Token *kw)
{
    Token *name = decl_name(p, "(the shared tile's name)");
    if (!name || !fe_expect(p, T_COLON, NULL))
        return 0;
    NodeId type = fe_type(p, 1);
    int64_t swz = 0, align = 0;
    if (!type || (fe_accept(p, T_SWIZZLE) && !fe_int_lit(p, &swz, 65535, "swizzle")) ||
        (fe_accept(p, T_ALIGN) && !fe_int_lit(p, &align, 65535, "alignment")))
        return 0;
    NodeId id = named(p, OP_SHARED, kw, name);
    Node *n = ir_get(p->k, id);
    n->a = type;
    n->v.attr.swizzle = (uint16_t)swz;
    n->v.attr.align = (uint16_t)align;
    return id;
}

static int enum_word(Parser *p, DiagCode code, const char *what, const char *const *names,
                     int count, int *out)
{
    Token *t = fe_peek(p);
    const char *s = t->kind == T_IDENT ? ir_symstr(p->ctx, t->sym) : "";
    for (int i = 1; i < count; i++)
        if (t->kind == T_IDENT && !strcmp(s, names[i])) {
            fe_advance(p);
            *out = i;
            return 1;
        }
    Diag *d = t->kind == T_IDENT ? fe_error(p, code, t->span, "unknown %s `%s`", what, s)
                                  : fe_error_here(p, code, ir_fmt(p->ctx, "a %s", what));
    if (!d)
        return 0;
    const char *near = t->kind == T_IDENT ? fe_suggest(s, names + 1, (uint32_t)count - 1) : NULL;
    if (near) {
        diag_help(p->ctx, d, "did you mean `%s`?", near);
        diag_fixit(p->ctx, d, t->span, near);
    }
    char buf[256] = "";
    for (int i = 1; i < count; i++) {
        strcat(buf, i > 1 ? ", " : "");
        strcat(buf, names[i]);
    }
    diag_help(p->ctx, d, "valid %ss: %s", what, buf);
    return 0;
}

/* 'reg' IDENT ':' DTYPE ('[' expr (',' expr)* ']')? ('layout' LAYOUT)? ('scope' SCOPE)?
 *       ('=' expr)? */
static NodeId reg_decl(Parser *p, Token *kw)
{
    Token *name = decl_name(p, "(the register tile's name)");
    if (!name || !fe_expect(p, T_COLON, NULL))
        return 0;
    NodeId type = fe_type(p, 0);
    if (!type)
        return 0;
    int layout = 0, scope = 0;
    uint8_t flags = 0;
    if (fe_accept(p, T_LAYOUT)) {
        if (!enum_word(p, E0113, "layout", ir_layout_names, LY__COUNT, &layout))
            return 0;
        flags |= NF_HAS_LAYOUT;
    }
    if (fe_accept(p, T_SCOPE)) {
        if (!enum_word(p, E0113, "scope", ir_scope_names, SC_BLOCK + 1, &scope))
            return 0;
        flags |= NF_HAS_SCOPE;
    }
    NodeId init = 0;
    if (fe_accept(p, T_EQ) && !(init = fe_expr(p)))
        return 0;
    NodeId id = named(p, OP_REG, kw, name);
    Node *n = ir_get(p->k, id);
    n->a = type;
    n->b = init;
    n->flags = flags;
    n->v.attr.layout = (uint8_t)layout;
    n->v.attr.scope = (uint8_t)scope;
    return id;
}

/* 'mbarrier' IDENT ('[' expr ']')? 'count' expr */
static NodeId mbarrier_decl(Parser *p, Token *kw)
{
    Token *name = decl_name(p, "(the mbarrier's name)");
    if (!name)
        return 0;
    NodeId len = 0;
    if (fe_check(p, T_LBRACK)) {
        Token *open = fe_advance(p);
        if (!(len = fe_expr(p)) || !fe_expect_close(p, T_RBRACK, open))
            return 0;
    }
    if (!fe_expect(p, T_COUNT, "(an mbarrier needs its arrival count: `count 1`)"))
        return 0;
    NodeId count = fe_expr(p);
    if (!count)
        return 0;
    NodeId id = named(p, OP_MBARRIER, kw, name);
    ir_get(p->k, id)->a = len;
    ir_get(p->k, id)->b = count;
    return id;
}

/* a role's name; reserved words are accepted too (`role load`): a role name
 * only ever follows the keyword `role` */
static Token *role_word(Parser *p, const char *what)
{
    Token *t = fe_peek(p);
    if (t->kind >= T_KERNEL && t->kind < T__COUNT) {
        fe_advance(p);
        return t;
    }
    return decl_name(p, what);
}

static NodeId role_name(Parser *p)
{
    if (!fe_expect(p, T_ROLE, NULL))
        return 0;
    Token *t = role_word(p, "(a role name)");
    if (!t)
        return 0;
    NodeId id = fe_node(p, OP_NAME, t->span);
    ir_get(p->k, id)->name = t->sym;
    return id;
}

/* 'pipeline' IDENT ':' expr 'stages' 'from' 'role' IDENT 'to' 'role' IDENT */
static NodeId pipeline_decl(Parser *p, Token *kw)
{
    Token *name = decl_name(p, "(the pipeline's name)");
    if (!name || !fe_expect(p, T_COLON, NULL))
        return 0;
    NodeId stages = fe_expr(p);
    if (!stages || !fe_expect(p, T_STAGES, "(`pipeline NAME: N stages from role P to role C`)") ||
        !fe_expect(p, T_FROM, NULL))
        return 0;
    NodeId from = role_name(p);
    if (!from || !fe_expect(p, T_TO, NULL))
        return 0;
    NodeId to = role_name(p);
    if (!to)
        return 0;
    NodeId id = named(p, OP_PIPELINE, kw, name);
    Node *n = ir_get(p->k, id);
    n->a = stages;
    n->b = from;
    n->c = to;
    return id;
}

/* block, after a construct that must be followed by one: `expected` says what */
static NodeId body_block(Parser *p, int kind, const char *expected)
{
    if (!fe_check(p, T_LBRACE)) {
        fe_error_here(p, E0104, expected);
        return 0;
    }
    return fe_block(p, kind);
}

/* role := 'role' IDENT ':' UNIT expr ('..' expr)? (',' 'regs' expr)? block */
static NodeId role_decl(Parser *p, Token *kw)
{
    Token *name = role_word(p, "(the role's name)");
    if (!name || !fe_expect(p, T_COLON, NULL))
        return 0;
    Token *u = fe_peek(p);
    const char *us = u->kind == T_IDENT ? ir_symstr(p->ctx, u->sym) : "";
    Unit unit;
    if (u->kind == T_WARPS || !strcmp(us, "warp"))
        unit = UNIT_WARPS;
    else if (u->kind == T_WARPGROUPS || !strcmp(us, "warpgroup"))
        unit = UNIT_WARPGROUPS;
    else {
        fe_error_here(p, E0104, "`warp`, `warps`, `warpgroup` or `warpgroups`");
        return 0;
    }
    fe_advance(p);
    NodeId first = fe_expr(p), end = 0, regs = 0;
    if (!first || (fe_accept(p, T_DOTDOT) && !(end = fe_expr(p))))
        return 0;
    if (fe_accept(p, T_COMMA) && (!fe_expect(p, T_REGS, NULL) || !(regs = fe_expr(p))))
        return 0;
    NodeId body = body_block(p, BLK_ROLE, "`{` to start the role's body");
    if (!body)
        return 0;
    NodeId id = named(p, OP_ROLE, kw, name);
    Node *n = ir_get(p->k, id);
    n->sub = (uint16_t)unit;
    n->a = first;
    n->b = end;
    n->c = regs;
    n->d = body;
    return id;
}

/* reference := 'reference' block */
static NodeId reference(Parser *p, Token *kw)
{
    if (p->k->reference) {
        Diag *d = fe_error(p, E0110, kw->span, "a kernel has one `reference` block");
        if (d)
            diag_note(p->ctx, d, ir_get(p->k, p->k->reference)->span, "the first one is here");
        return 0;
    }
    p->in_ref = 1;
    NodeId body = body_block(p, BLK_REFERENCE, "`{` after `reference`");
    p->in_ref = 0;
    if (!body)
        return 0;
    p->k->reference = body;
    NodeId id = fe_node(p, OP_REFERENCE, kw->span);
    ir_get(p->k, id)->a = body;
    return id;
}

/* 'let' IDENT (':' type)? '=' expr  |  'var' IDENT ':' type ('=' expr)? */
static NodeId let_var(Parser *p, Token *kw)
{
    int is_let = kw->kind == T_LET;
    Token *name = decl_name(p, "(the variable's name)");
    if (!name)
        return 0;
    NodeId type = 0, init = 0;
    if (fe_accept(p, T_COLON)) {
        if (!(type = fe_type(p, 0)))
            return 0;
    } else if (!is_let) {
        fe_error_here(p, E0104, "`:` and a type (`var x: f32 = 0`)");
        return 0;
    }
    if (fe_accept(p, T_EQ)) {
        if (!(init = fe_expr(p)))
            return 0;
    } else if (is_let) {
        fe_error_here(p, E0104, "`=` (a `let` needs a value; use `var` for a mutable variable)");
        return 0;
    }
    NodeId id = named(p, is_let ? OP_LET : OP_VAR, kw, name);
    ir_get(p->k, id)->a = type;
    ir_get(p->k, id)->b = init;
    return id;
}

/* 'for' IDENT 'in' expr '..' expr ('step' expr)? ('unroll' INT?)? 'nohoist'? 'fresh'? block */
static NodeId for_stmt(Parser *p, Token *kw)
{
    Token *var = decl_name(p, "(the loop variable)");
    if (!var || !fe_expect(p, T_IN, NULL))
        return 0;
    NodeId lo = fe_expr(p), hi = 0, step = 0;
    if (!lo || !fe_expect(p, T_DOTDOT, "(a range is `lo .. hi`)") || !(hi = fe_expr(p)))
        return 0;
    if (fe_accept(p, T_STEP) && !(step = fe_expr(p)))
        return 0;
    int64_t unroll = 0;
    if (fe_accept(p, T_UNROLL)) {
        unroll = 255;
        if (fe_check(p, T_INT) && !fe_int_lit(p, &unroll, 255, "unroll factor"))
            return 0;
    }
    int nohoist = fe_accept(p, T_NOHOIST);
    int fresh = fe_accept(p, T_FRESH);
    NodeId body = body_block(p, BLK_NESTED, "`{` to start the loop body");
    if (!body)
        return 0;
    NodeId id = named(p, OP_FOR, kw, var);
    Node *n = ir_get(p->k, id);
    n->a = lo;
    n->b = hi;
    n->c = step;
    n->d = body;
    n->flags = (uint16_t)((step ? NF_HAS_STEP : 0) | (nohoist ? NF_NOHOIST : 0) |
                          (fresh ? NF_FRESH_LOOP : 0));
    n->v.attr.unroll = (uint8_t)unroll;
    return id;
}

/* if_stmt := 'if' expr block ('else' (block | if_stmt))? */
static NodeId if_stmt(Parser *p, Token *kw)
{
    NodeId cond = fe_expr(p);
    if (!cond)
        return 0;
    if (!fe_check(p, T_LBRACE)) {
        fe_error_here(p, E0104, "`{` after the condition");
        return 0;
    }
    NodeId then = fe_block(p, BLK_NESTED), els = 0;
    if (!then)
        return 0;
    if (fe_check(p, T_NEWLINE) && fe_peek_at(p, 1)->kind == T_ELSE)
        fe_advance(p);
    if (fe_accept(p, T_ELSE)) {
        Token *t = fe_peek(p);
        if (t->kind == T_IF) {
            fe_advance(p);
            if (!(els = if_stmt(p, t)))
                return 0;
            ir_get(p->k, els)->flags |= NF_ELSEIF;
        } else if (t->kind == T_LBRACE) {
            if (!(els = fe_block(p, BLK_NESTED)))
                return 0;
        } else {
            fe_error_here(p, E0104, "`{` or `if` after `else`");
            return 0;
        }
    }
    NodeId id = fe_node(p, OP_IF, kw->span);
    Node *n = ir_get(p->k, id);
    n->a = cond;
    n->b = then;
    n->c = els;
    fe_finish(p, id, kw->span.lo);
    return id;
}

static NodeId with_ab(Parser *p, Op op, Token *kw, NodeId a, NodeId b, NodeId c)
{
    NodeId id = fe_node(p, op, kw->span);
    Node *n = ir_get(p->k, id);
    n->a = a;
    n->b = b;
    n->c = c;
    return id;
}

/* 'store' ref '<-' expr ('mask' expr)?  |  'cp.async' ref '<-' ref ('mask' expr)?
 * 'tma' ref '<-' ref 'on' expr  |  'tma.store' ref '<-' ref  |  'tma.store.add' ref '<-' ref
 *  |  'stmatrix' ref '<-' expr */
static NodeId move_stmt(Parser *p, Op op, Token *kw)
{
    NodeId dst = fe_ref(p), src = 0, extra = 0;
    if (!dst || !fe_expect(p, T_ARROW, "(memory moves are written `dst <- src`)"))
        return 0;
    int src_is_ref = op == OP_CP_ASYNC || op == OP_TMA_LOAD || op == OP_TMA_STORE;
    p->store_value = op == OP_STORE;
    src = src_is_ref ? fe_ref(p) : fe_expr(p);
    p->store_value = 0;
    if (!src)
        return 0;
    if ((op == OP_STORE || op == OP_CP_ASYNC) && fe_accept(p, T_MASK) && !(extra = fe_expr(p)))
        return 0;
    if (op == OP_TMA_LOAD && (!fe_expect(p, T_ON, "(a TMA load completes `on` an mbarrier)") ||
                              !(extra = fe_expr(p))))
        return 0;
    return with_ab(p, op, kw, dst, src, extra);
}

/* 'mma' | 'wgmma' | 'mfma'  expr '+=' unary '*' expr */
/* mma_stmt -> ("mma" | "wgmma" | "mfma") lvalue ("+=" | "=") unary "*" expr
 * `=` (sub 1) is the fresh form D = A * B; the verifier allows it on wgmma only */
static NodeId mma_stmt(Parser *p, Op op, Token *kw)
{
    NodeId acc = fe_expr(p);
    int fresh = acc && fe_accept(p, T_EQ);
    if (!fresh && (!acc || !fe_expect(p, T_PLUSEQ, "(`acc += a * b` or `acc = a * b`)")))
        return 0;
    NodeId a = fe_unary(p);
    if (!a || !fe_expect(p, T_STAR, "(`acc += a * b`)"))
        return 0;
    NodeId b = fe_expr(p);
    NodeId id = b ? with_ab(p, op, kw, acc, a, b) : 0;
    if (id && fresh)
        ir_get(p->k, id)->sub = 1;
    return id;
}

/* builtin statements spelled by the ops table (class OC_STMT) */
static NodeId op_stmt(Parser *p, Op op, Token *kw)
{
    NodeId a = 0, b = 0;
    switch (op) {
    case OP_CP_COMMIT: case OP_FENCE_PROXY: case OP_SYNC: case OP_FENCE: case OP_FENCE_GPU:
    case OP_RETURN:
        return with_ab(p, op, kw, 0, 0, 0);
    case OP_CP_WAIT: case OP_TMA_WAIT: case OP_WGMMA_WAIT: case OP_MB_ARRIVE:
        return (a = fe_expr(p)) ? with_ab(p, op, kw, a, 0, 0) : 0;
    case OP_BAR_SYNC: case OP_BAR_ARRIVE: case OP_MB_EXPECT: case OP_MB_WAIT:
        if (!(a = fe_expr(p)) || !fe_expect(p, T_COMMA, NULL) || !(b = fe_expr(p)))
            return 0;
        return with_ab(p, op, kw, a, b, 0);
    case OP_STORE: case OP_CP_ASYNC: case OP_TMA_LOAD: case OP_TMA_STORE: case OP_STMATRIX:
        return move_stmt(p, op, kw);
    case OP_TMA_STORE_ADD: { /* tma.store that adds: TMA_STORE with sub 1 */
        NodeId id = move_stmt(p, OP_TMA_STORE, kw);
        if (id)
            ir_get(p->k, id)->sub = 1;
        return id;
    }
    case OP_MMA: case OP_WGMMA: case OP_MFMA:
        return mma_stmt(p, op, kw);
    default:
        ir_bug(p->ctx, "op_stmt: %s", ir_ops[op].name);
    }
}

static Op stmt_op(Parser *p, Token *t)
{
    const char *s = ir_symstr(p->ctx, t->sym);
    for (int i = 1; i < OP__COUNT; i++)
        if (ir_ops[i].cls == OC_STMT && ir_ops[i].spelling[0] && strcmp(ir_ops[i].spelling, s) == 0)
            return i == OP_ASSIGN || i == OP_FOR || i == OP_IF ? OP_NONE : (Op)i;
    return OP_NONE;
}

static int is_assign_op(TokKind k, uint16_t *sub)
{
    switch (k) {
    case T_EQ: *sub = OP_NONE; return 1;
    case T_PLUSEQ: *sub = OP_ADD; return 1;
    case T_MINUSEQ: *sub = OP_SUB; return 1;
    case T_STAREQ: *sub = OP_MUL; return 1;
    case T_SLASHEQ: *sub = OP_DIV; return 1;
    case T_MAXEQ: *sub = OP_MAX; return 1;
    case T_MINEQ: *sub = OP_MIN; return 1;
    default: return 0;
    }
}

/* lvalue assignop expr  |  call */
static NodeId expr_stmt(Parser *p)
{
    NodeId e = fe_expr(p);
    if (!e)
        return 0;
    Node *n = ir_get(p->k, e);
    uint16_t sub;
    if (!is_assign_op(fe_peek(p)->kind, &sub)) {
        OpClass cls = (OpClass)ir_ops[n->op].cls;
        if ((cls == OC_BUILTIN || cls == OC_PIPE || (n->op == OP_LOAD && n->sub)) &&
            !(n->flags & NF_PAREN)) {
            NodeId id = fe_node(p, OP_EXPRSTMT, n->span);
            ir_get(p->k, id)->a = e;
            return id;
        }
        Diag *d = fe_error(p, E0108, n->span, "expected a statement, found an expression");
        if (d)
            diag_help(p->ctx, d, "only calls stand alone; did you mean to assign it (`x = ...`)?");
        return 0;
    }
    int ok = n->op == OP_NAME ||
             (n->op == OP_INDEX && ir_get(p->k, n->a)->op == OP_NAME && !(n->flags & NF_PAREN));
    if (!ok || (n->flags & NF_PAREN)) {
        Diag *d = fe_error(p, E0118, n->span, "invalid assignment target");
        if (d)
            diag_help(p->ctx, d, "assign to a name or an indexed name: `x = ...`, `t[i, j] = ...`");
        return 0;
    }
    fe_advance(p);
    NodeId v = fe_expr(p);
    if (!v)
        return 0;
    NodeId id = fe_node(p, OP_ASSIGN, n->span);
    Node *as = ir_get(p->k, id);
    as->a = e;
    as->b = v;
    as->sub = sub;
    return id;
}

static NodeId not_here(Parser *p, Token *kw, const char *what)
{
    fe_error(p, E0116, kw->span, "%s", what);
    return 0;
}

/* item := decl | role | reference | stmt   (roles, pipelines and the reference
 * block only at the kernel's top level) */
static NodeId item(Parser *p, int blk)
{
    Token *t = fe_peek(p);
    int top = blk == BLK_KERNEL, ref = p->in_ref;
    switch (t->kind) {
    case T_ROLE:
        return top ? (fe_advance(p), role_decl(p, t))
                   : not_here(p, t, "roles are declared at the kernel's top level");
    case T_PIPELINE:
        return top ? (fe_advance(p), pipeline_decl(p, t))
                   : not_here(p, t, "pipelines are declared at the kernel's top level");
    case T_REFERENCE:
        return top ? (fe_advance(p), reference(p, t))
                   : not_here(p, t, "the `reference` block belongs at the kernel's top level");
    case T_SHARED: case T_MBARRIER:
        if (ref)
            return not_here(p, t, "a reference block describes results, not memory: "
                                  "no shared tiles or mbarriers in it");
        fe_advance(p);
        return t->kind == T_SHARED ? shared_decl(p, t) : mbarrier_decl(p, t);
    default:
        return stmt(p);
    }
}

/* A header clause word at the start of a statement in the body is a name
 * when the kernel declares it (argument, parameter, dim) or when an
 * assignment follows it; otherwise it is a misplaced header clause (E0116). */
static int header_word_is_name(Parser *p, const Token *t)
{
    const Kernel *k = p->k;
    for (uint32_t i = 0; i < k->nargs; i++)
        if (k->nodes[k->args[i]].name == t->sym)
            return 1;
    for (uint32_t i = 0; i < k->nparams; i++)
        if (k->nodes[k->params[i]].name == t->sym)
            return 1;
    for (uint32_t i = 0; i < k->ndims; i++)
        if (k->nodes[k->dims[i]].name == t->sym)
            return 1;
    switch (fe_peek_at(p, 1)->kind) {
    case T_EQ: case T_PLUSEQ: case T_MINUSEQ: case T_STAREQ: case T_SLASHEQ: case T_MAXEQ:
    case T_MINEQ: case T_DOT:
        return 1;
    default:
        return 0;
    }
}

/* stmt := let | var | decl | lvalue assignop expr | for | if | store | ... | call */
static NodeId stmt(Parser *p)
{
    Token *t = fe_peek(p);
    switch (t->kind) {
    case T_LET: case T_VAR: fe_advance(p); return let_var(p, t);
    case T_REG: fe_advance(p); return reg_decl(p, t);
    case T_FOR: fe_advance(p); return for_stmt(p, t);
    case T_IF: fe_advance(p); return if_stmt(p, t);
    case T_STORE: fe_advance(p); return op_stmt(p, OP_STORE, t);
    case T_SYNC: fe_advance(p); return op_stmt(p, OP_SYNC, t);
    case T_FENCE: fe_advance(p); return op_stmt(p, OP_FENCE, t);
    case T_RETURN: fe_advance(p); return op_stmt(p, OP_RETURN, t);
    case T_ARG: case T_TARGET: case T_GRID: case T_WARPS: case T_WARPGROUPS: case T_ASSUME:
    case T_SHAPE:
        if (!header_word_is_name(p, t)) {
            Diag *d = fe_error(p, E0116, t->span, "%s is a kernel header clause, not a statement",
                               fe_describe(p, t));
            if (d)
                diag_help(p->ctx, d, "header clauses go between the kernel's name and its `{`");
            return 0;
        }
        fe_as_name(t);
        return expr_stmt(p);
    case T_IDENT: {
        Op op = stmt_op(p, t);
        if (op) {
            fe_advance(p);
            return op_stmt(p, op, t);
        }
        if (t->sym == ir_intern_cstr(p->ctx, ir_ops[OP_ATOMIC_ADD].spelling) &&
            fe_peek_at(p, 1)->kind != T_LPAREN) {
            fe_advance(p);   /* atomic.add ref <- value [mask c]: a STORE that adds (7.7) */
            NodeId id = move_stmt(p, OP_STORE, t);
            if (id)
                ir_get(p->k, id)->sub = OP_ATOMIC_ADD;
            return id;
        }
        return expr_stmt(p);
    }
    default:
        if (fe_starts_expr(t->kind))
            return expr_stmt(p);
        fe_error_here(p, E0108, "a statement");
        return 0;
    }
}

/* skips to the end of the statement: a separator or `}` at this depth */
static void sync_stmt(Parser *p)
{
    uint32_t depth = 0;
    for (;;) {
        switch (fe_peek(p)->kind) {
        case T_EOF: case T_KERNEL:
            return;
        case T_NEWLINE: case T_SEMI:
            if (depth == 0) {
                p->panic = 0;
                return;
            }
            break;
        case T_LBRACE: depth++; break;
        case T_RBRACE:
            if (depth == 0) {
                p->panic = 0;
                return;
            }
            depth--;
            break;
        default: break;
        }
        fe_advance(p);
    }
}

static void statement_end(Parser *p)
{
    switch (fe_peek(p)->kind) {
    case T_NEWLINE: case T_SEMI: case T_RBRACE: case T_EOF: return;
    default: break;
    }
    fe_error_here(p, E0105, "end of line or `;` after the statement");
}

/* block := '{' (stmt sep)* '}'  (the last statement may end at the `}`) */
NodeId fe_block(Parser *p, int blk)
{
    Token *open = fe_advance(p);
    if (!fe_enter(p))
        return 0;
    uint32_t mark = fe_mark(p);
    for (;;) {
        Token *t = fe_peek(p);
        if (t->kind == T_NEWLINE || t->kind == T_SEMI) {
            fe_advance(p);
            continue;
        }
        if (t->kind == T_RBRACE || t->kind == T_EOF || t->kind == T_KERNEL)
            break;
        uint32_t lo = t->span.lo;
        p->nops = 0;
        NodeId s = item(p, blk);
        if (s) {
            fe_finish(p, s, lo);
            fe_push(p, s);
            statement_end(p);
        }
        if (p->panic)
            sync_stmt(p);
    }
    p->depth--;
    if (!fe_check(p, T_RBRACE)) {
        if (!p->comment_error)
            fe_expect_close(p, T_RBRACE, open);
        p->panic = 1;
        p->nstk = mark;
        return 0;
    }
    fe_advance(p);
    NodeId id = fe_node(p, OP_BLOCK, open->span);
    fe_pop_list(p, mark, id);
    fe_finish(p, id, open->span.lo);
    return id;
}
