/* parser_expr.c — expressions, references, index lists and types.
 *
 * Precedence, lowest first (docs/tir.md):
 *   1 ||   2 &&   3 |   4 ~   5 &   6 == !=   7 < <= > >=   8 << >>
 *   9 + -   10 * / %   11 unary - !   12 ^ (right assoc)   13 postfix
 * ir/print.c uses the same levels to put back exactly the needed parens. */
#include <math.h>
#include <ctype.h>
#include <string.h>
#include "parser.h"

static const char *const dtype_names[] = {
#define DT(id, sp, bits, kind) sp,
    IR_DTYPES(DT)
#undef DT
};

/* binary operator of token k and its precedence; 0 if k is none */
static int binop(TokKind k, Op *op)
{
    switch (k) {
    case T_OROR: *op = OP_OR; return 1;
    case T_ANDAND: *op = OP_AND; return 2;
    case T_PIPE: *op = OP_BOR; return 3;
    case T_TILDE: *op = OP_BXOR; return 4;
    case T_AMP: *op = OP_BAND; return 5;
    case T_EQEQ: *op = OP_EQ; return 6;
    case T_NE: *op = OP_NE; return 6;
    case T_LT: *op = OP_LT; return 7;
    case T_LE: *op = OP_LE; return 7;
    case T_GT: *op = OP_GT; return 7;
    case T_GE: *op = OP_GE; return 7;
    case T_SHL: *op = OP_SHL; return 8;
    case T_SHR: *op = OP_SHR; return 8;
    case T_PLUS: *op = OP_ADD; return 9;
    case T_MINUS: *op = OP_SUB; return 9;
    case T_STAR: *op = OP_MUL; return 10;
    case T_SLASH: *op = OP_DIV; return 10;
    case T_PERCENT: *op = OP_MOD; return 10;
    default: return 0;
    }
}

int fe_starts_expr(TokKind k)
{
    switch (k) {
    case T_INT: case T_FLOAT: case T_TRUE: case T_FALSE: case T_INF: case T_NAN:
    case T_IDENT: case T_DTYPE: case T_LPAREN: case T_LOAD: case T_MINUS: case T_BANG:
    case T_THREADS:
        return 1;
    default:
        return fe_is_contextual(k);
    }
}

static NodeId binary(Parser *p, Op op, NodeId a, NodeId b)
{
    Span s = span_join(ir_get(p->k, a)->span, ir_get(p->k, b)->span);
    NodeId id = fe_node(p, op, s);
    ir_get(p->k, id)->a = a;
    ir_get(p->k, id)->b = b;
    return id;
}

/* expr := binary expression over unary (precedence climbing) */
NodeId fe_expr_prec(Parser *p, int minprec)
{
    if (!fe_enter(p))
        return 0;
    NodeId lhs = fe_unary(p);
    Op op;
    int prec;
    while (lhs && (prec = binop(fe_peek(p)->kind, &op)) >= minprec && prec) {
        if (++p->nops > 4000) {
            fe_error(p, E0105, fe_peek(p)->span, "statement too long (more than 4000 operators)");
            p->depth--;
            return 0;
        }
        fe_advance(p);
        NodeId rhs = fe_expr_prec(p, prec + 1);
        if (!rhs) {
            p->depth--;
            return 0;
        }
        lhs = binary(p, op, lhs, rhs);
    }
    p->depth--;
    return lhs;
}

NodeId fe_expr(Parser *p) { return fe_expr_prec(p, 1); }

static NodeId postfix(Parser *p);

/* power := postfix ('^' unary)? */
static NodeId power(Parser *p)
{
    NodeId base = postfix(p);
    if (!base || !fe_accept(p, T_CARET))
        return base;
    NodeId e = fe_unary(p);
    return e ? binary(p, OP_POW, base, e) : 0;
}

/* unary := ('-' | '!') unary | power */
NodeId fe_unary(Parser *p)
{
    Token *t = fe_peek(p);
    if (t->kind != T_MINUS && t->kind != T_BANG)
        return power(p);
    if (!fe_enter(p))
        return 0;
    fe_advance(p);
    NodeId a = fe_unary(p);
    p->depth--;
    if (!a)
        return 0;
    NodeId id = fe_node(p, t->kind == T_MINUS ? OP_NEG : OP_NOT, t->span);
    ir_get(p->k, id)->a = a;
    fe_finish(p, id, t->span.lo);
    return id;
}

/* pushes expr (',' expr)* onto the stack and eats the closing token */
static uint32_t expr_list(Parser *p, TokKind close, const Token *open);
static NodeId index_list(Parser *p, NodeId base);

uint32_t fe_expr_list(Parser *p, TokKind close, const Token *open)
{
    int saved = p->store_value;
    p->store_value = 0;
    uint32_t r = expr_list(p, close, open);
    p->store_value = saved;
    return r;
}

static uint32_t expr_list(Parser *p, TokKind close, const Token *open)
{
    uint32_t n = 0;
    if (!fe_check(p, close)) {
        do {
            NodeId e = fe_expr(p);
            if (!e)
                return 0;
            fe_push(p, e);
            n++;
        } while (fe_accept(p, T_COMMA));
    }
    if (!fe_expect_close(p, close, open))
        return 0;
    return n ? n : 1;  /* nonzero means success */
}

/* index := expr | expr ':' '+' expr | ':' */
static NodeId index_item(Parser *p)
{
    Token *t = fe_peek(p);
    TokKind next = fe_peek_at(p, 1)->kind;
    if (t->kind == T_COLON && (next == T_COMMA || next == T_RBRACK)) {
        fe_advance(p);
        return fe_node(p, OP_COLON, t->span);
    }
    NodeId start = fe_expr(p);
    if (!start || !fe_check(p, T_COLON))
        return start;
    fe_advance(p);
    if (!fe_check(p, T_PLUS)) {
        Diag *d = fe_error_here(p, E0104, "`+` (a slice is written `start : +extent`)");
        if (d)
            diag_fixit(p->ctx, d, (Span){p->file, fe_peek(p)->span.lo, fe_peek(p)->span.lo}, "+");
        return 0;
    }
    fe_advance(p);
    NodeId ext = fe_expr(p);
    if (!ext)
        return 0;
    NodeId id = fe_node(p, OP_SLICE, t->span);
    ir_get(p->k, id)->a = start;
    ir_get(p->k, id)->b = ext;
    fe_finish(p, id, t->span.lo);
    return id;
}

/* '[' index (',' index)* ']' applied to base */
NodeId fe_index_list(Parser *p, NodeId base)
{
    int saved = p->store_value;
    p->store_value = 0;
    NodeId r = index_list(p, base);
    p->store_value = saved;
    return r;
}

static NodeId index_list(Parser *p, NodeId base)
{
    Token *open = fe_advance(p);
    uint32_t mark = fe_mark(p);
    do {
        NodeId e = index_item(p);
        if (!e)
            return 0;
        fe_push(p, e);
    } while (fe_accept(p, T_COMMA));
    if (!fe_expect_close(p, T_RBRACK, open))
        return 0;
    NodeId id = fe_node(p, OP_INDEX, ir_get(p->k, base)->span);
    ir_get(p->k, id)->a = base;
    fe_pop_list(p, mark, id);
    fe_finish(p, id, ir_get(p->k, base)->span.lo);
    return id;
}

static NodeId unary_post(Parser *p, Op op, NodeId a)
{
    NodeId id = fe_node(p, op, ir_get(p->k, a)->span);
    ir_get(p->k, id)->a = a;
    fe_finish(p, id, ir_get(p->k, a)->span.lo);
    return id;
}

static Op lookup_op(const char *s, OpClass cls)
{
    for (int i = 1; i < OP__COUNT; i++)
        if (ir_ops[i].cls == cls && strcmp(ir_ops[i].spelling, s) == 0)
            return (Op)i;
    return OP_NONE;
}

static void arity_check(Parser *p, NodeId call, const char *name)
{
    Node *n = ir_get(p->k, call);
    int want = ir_ops[n->op].nargs;
    if (want < 0 || (uint32_t)want == n->n)
        return;
    Diag *d = fe_error(p, E0207, n->span, "`%s` takes %d argument%s, but %u %s given", name, want,
                       want == 1 ? "" : "s", n->n, n->n == 1 ? "was" : "were");
    (void)d;
}

/* '(' args ')' into node id's list */
static int call_args(Parser *p, NodeId id)
{
    Token *open = fe_advance(p);
    uint32_t mark = fe_mark(p);
    if (!fe_expr_list(p, T_RPAREN, open))
        return 0;
    fe_pop_list(p, mark, id);
    return 1;
}

/* "a.b.c" when base is a chain of names and fields, else NULL */
static const char *dotted_text(Parser *p, NodeId base, const char *member)
{
    Node *n = ir_get(p->k, base);
    if (n->op == OP_NAME)
        return ir_fmt(p->ctx, "%s.%s", ir_symstr(p->ctx, n->name), member);
    if (n->op != OP_FIELD)
        return NULL;
    const char *inner = dotted_text(p, n->a, ir_symstr(p->ctx, n->name));
    return inner ? ir_fmt(p->ctx, "%s.%s", inner, member) : NULL;
}

/* the whole dotted word written at lo (`reduce.warp.sum`), whatever its
 * tokens: a fix-it replaces all of it, never only its first part */
static Span dotted_word(Parser *p, uint32_t lo)
{
    const SourceFile *f = &p->ctx->files[p->file];
    uint32_t hi = lo;
    while (hi < f->len && (isalnum((unsigned char)f->text[hi]) || f->text[hi] == '_' ||
                           (f->text[hi] == '.' && hi + 1 < f->len &&
                            (isalpha((unsigned char)f->text[hi + 1]) || f->text[hi + 1] == '_'))))
        hi++;
    return (Span){p->file, lo, hi};
}

/* `reduce.warp.sum(x)`: a misspelled dotted builtin, reported whole */
static int bad_dotted(Parser *p, NodeId base, Token *m)
{
    const char *word = dotted_text(p, base, ir_symstr(p->ctx, m->sym));
    if (!word)
        return 0;
    size_t first = strcspn(word, ".");
    const char *cands[(int)OP__COUNT + (int)SR__COUNT];
    uint32_t n = 0, known_prefix = 0;
    for (int i = 0; i < (int)OP__COUNT + (int)SR__COUNT; i++) {
        const char *sp = i < OP__COUNT ? ir_ops[i].spelling : ir_special_names[i - OP__COUNT];
        if (!strchr(sp, '.'))
            continue;
        cands[n++] = sp;
        if (!strncmp(sp, word, first + 1))
            known_prefix = 1;
    }
    if (!known_prefix)
        return 0;
    Span s = {p->file, ir_get(p->k, base)->span.lo, m->span.hi};
    Span whole = dotted_word(p, s.lo);
    word = ir_fmt(p->ctx, "%.*s", (int)(whole.hi - whole.lo), p->ctx->files[p->file].text + whole.lo);
    Diag *d = fe_error(p, E0203, s, "unknown builtin `%s`", word);
    const char *near = fe_suggest(word, cands, n);
    if (d && near) {
        diag_help(p->ctx, d, "did you mean `%s`?", near);
        diag_fixit(p->ctx, d, whole, near);
    }
    return 1;
}

/* member call: NAME '.' IDENT '(' args ')' -> OP_P_* (pipeline members) */
static NodeId member(Parser *p, NodeId base)
{
    fe_advance(p);
    Token *m = fe_peek(p);
    if (!fe_expect(p, T_IDENT, "(a member name)"))
        return 0;
    if (bad_dotted(p, base, m))
        return 0;
    const char *s = ir_symstr(p->ctx, m->sym);
    if (!fe_check(p, T_LPAREN)) {
        NodeId id = unary_post(p, OP_FIELD, base);
        ir_get(p->k, id)->name = m->sym;
        return id;
    }
    Op op = lookup_op(s, OC_PIPE);
    if (!op || ir_get(p->k, base)->op != OP_NAME) {
        static const char *const members[] = {"acquire", "commit", "wait", "release", "full", "empty"};
        Diag *d = fe_error(p, E0203, m->span, "unknown member `%s`", s);
        const char *near = fe_suggest(s, members, 6);
        if (d && near) {
            diag_help(p->ctx, d, "did you mean `%s`?", near);
            diag_fixit(p->ctx, d, m->span, near);
        }
        if (d)
            diag_help(p->ctx, d, "pipelines have acquire(), commit(s), wait(), release(s), "
                                 "full(s) and empty(s)");
        return 0;
    }
    NodeId id = fe_node(p, op, ir_get(p->k, base)->span);
    ir_get(p->k, id)->a = base;
    if (!call_args(p, id))
        return 0;
    fe_finish(p, id, ir_get(p->k, base)->span.lo);
    arity_check(p, id, ir_fmt(p->ctx, "%s.%s", ir_symstr(p->ctx, ir_get(p->k, base)->name), s));
    return id;
}

/* postfix := primary ('[' index (',' index)* ']' | '^T' | '.' IDENT ('(' args ')')?)* */
static NodeId primary(Parser *p);

static NodeId postfix(Parser *p)
{
    NodeId e = primary(p);
    while (e) {
        switch (fe_peek(p)->kind) {
        case T_LBRACK: e = fe_index_list(p, e); break;
        case T_TRANS: fe_advance(p); e = unary_post(p, OP_TRANS, e); break;
        case T_DOT: e = member(p, e); break;
        default: return e;
        }
    }
    return e;
}

/* ref := IDENT ('[' index (',' index)* ']')* ('^T')? */
NodeId fe_ref(Parser *p)
{
    Token *t = fe_peek(p);
    if (!fe_as_name(t)) {
        fe_error_here(p, E0104, "a tensor or tile name");
        return 0;
    }
    fe_advance(p);
    NodeId e = fe_node(p, OP_NAME, t->span);
    ir_get(p->k, e)->name = t->sym;
    while (e && fe_check(p, T_LBRACK))
        e = fe_index_list(p, e);
    if (e && fe_accept(p, T_TRANS))
        e = unary_post(p, OP_TRANS, e);
    return e;
}

/* DTYPE; reports E0111 for an unknown one */
int fe_dtype(Parser *p, uint8_t *dt, uint8_t *lanes)
{
    Token *t = fe_peek(p);
    if (t->kind == T_DTYPE) {
        fe_advance(p);
        *dt = t->dtype;
        *lanes = t->lanes;
        return 1;
    }
    if (t->kind != T_IDENT) {
        fe_error_here(p, E0104, "a data type");
        return 0;
    }
    const char *s = ir_symstr(p->ctx, t->sym);
    Diag *d = fe_error(p, E0111, t->span, "unknown data type `%s`", s);
    const char *near = fe_suggest(s, dtype_names + 1, DT__COUNT - 1);
    if (d && near) {
        diag_help(p->ctx, d, "did you mean `%s`?", near);
        diag_fixit(p->ctx, d, t->span, near);
    }
    if (d)
        diag_help(p->ctx, d, "data types: bool i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 tf32 f32 "
                             "f64 e4m3 e5m2, and vectors of 2, 4, 8 or 16 lanes like `f32x4`");
    return 0;
}

/* type := DTYPE ('[' expr (',' expr)* ']')? */
NodeId fe_type(Parser *p, int need_dims)
{
    uint32_t lo = fe_peek(p)->span.lo;
    uint8_t dt, lanes;
    if (!fe_dtype(p, &dt, &lanes))
        return 0;
    NodeId id = fe_node(p, OP_TYPE, fe_prev(p)->span);
    if (fe_check(p, T_LBRACK)) {
        Token *open = fe_advance(p);
        uint32_t mark = fe_mark(p);
        if (!fe_expr_list(p, T_RBRACK, open))
            return 0;
        if (p->nstk == mark) {
            fe_error(p, E0107, fe_prev(p)->span, "a tile needs at least one extent");
            return 0;
        }
        fe_pop_list(p, mark, id);
        ir_get(p->k, id)->sub = 1;
    } else if (need_dims) {
        fe_error_here(p, E0104, "`[` and the tile's extents");
        return 0;
    }
    ir_get(p->k, id)->dtype = dt;
    ir_get(p->k, id)->lanes = lanes;
    fe_finish(p, id, lo);
    return id;
}

int fe_int_lit(Parser *p, int64_t *v, int64_t max, const char *what)
{
    Token *t = fe_peek(p);
    if (t->kind != T_INT) {
        fe_error_here(p, E0104, ir_fmt(p->ctx, "an integer (%s)", what));
        return 0;
    }
    fe_advance(p);
    if (t->v.i > max) {
        fe_error(p, E0114, t->span, "%s %lld out of range (at most %lld)", what,
                 (long long)t->v.i, (long long)max);
        return 0;
    }
    *v = t->v.i;
    return 1;
}

/* ('sum' | 'max' | 'min') '(' IDENT 'in' expr '..' expr ',' expr ')' */
static NodeId reduction(Parser *p, Op op, Token *kw)
{
    Token *open = fe_advance(p);
    Token *var = fe_advance(p);
    fe_advance(p); /* in */
    NodeId lo = fe_expr(p);
    if (!lo || !fe_expect(p, T_DOTDOT, "(a reduction range is `k in lo .. hi`)"))
        return 0;
    NodeId hi = fe_expr(p);
    if (!hi || !fe_expect(p, T_COMMA, "(before the reduced expression)"))
        return 0;
    NodeId body = fe_expr(p);
    if (!body || !fe_expect_close(p, T_RPAREN, open))
        return 0;
    NodeId id = fe_node(p, op, kw->span);
    Node *n = ir_get(p->k, id);
    n->name = var->sym;
    n->a = lo;
    n->b = hi;
    n->c = body;
    fe_finish(p, id, kw->span.lo);
    return id;
}

static void unknown_builtin(Parser *p, Token *t, const char *s)
{
    const char *cands[OP__COUNT];
    uint32_t n = 0;
    for (int i = 1; i < OP__COUNT; i++)
        if (ir_ops[i].cls == OC_BUILTIN || ir_ops[i].cls == OC_RED)
            cands[n++] = ir_ops[i].spelling;
    Diag *d = fe_error(p, E0203, t->span, "unknown builtin `%s`", s);
    const char *near = fe_suggest(s, cands, n);
    if (d && near) {
        diag_help(p->ctx, d, "did you mean `%s`?", near);
        diag_fixit(p->ctx, d, dotted_word(p, t->span.lo), near);
    }
}

/* IDENT '(' ... : a builtin call or a reduction */
static NodeId call(Parser *p, Token *t)
{
    const char *s = ir_symstr(p->ctx, t->sym);
    int red = (fe_peek_at(p, 1)->kind == T_IDENT || fe_is_contextual(fe_peek_at(p, 1)->kind)) &&
              fe_peek_at(p, 2)->kind == T_IN;
    if (red && (!strcmp(s, "sum") || !strcmp(s, "max") || !strcmp(s, "min")))
        return reduction(p, s[0] == 's' ? OP_SUM : s[1] == 'a' ? OP_RMAX : OP_RMIN, t);
    Op op = lookup_op(s, OC_BUILTIN);
    if (!op) {
        if (!strcmp(s, "sum"))
            fe_error_here(p, E0104, "`sum(k in lo .. hi, expr)`");
        else
            unknown_builtin(p, t, s);
        return 0;
    }
    NodeId id = fe_node(p, op, t->span);
    if (!call_args(p, id))
        return 0;
    fe_finish(p, id, t->span.lo);
    arity_check(p, id, s);
    return id;
}

static int special_of(const char *s)
{
    for (int i = 0; i < SR__COUNT; i++)
        if (!strcmp(ir_special_names[i], s))
            return i;
    return -1;
}

/* 'load' ref ('as' DTYPE)? ('mask' expr)? */
static NodeId load(Parser *p, Token *kw)
{
    NodeId ref = fe_ref(p);
    if (!ref)
        return 0;
    uint8_t dt = DT_NONE, lanes = 1;
    if (fe_accept(p, T_AS) && !fe_dtype(p, &dt, &lanes))
        return 0;
    NodeId mask = 0; /* in a store's value a bare `mask` is the store's: (load x mask c) */
    if (!p->store_value && fe_accept(p, T_MASK) && !(mask = fe_expr(p)))
        return 0;
    NodeId id = fe_node(p, OP_LOAD, kw->span);
    Node *n = ir_get(p->k, id);
    n->a = ref;
    n->b = mask;
    n->dtype = dt;
    n->lanes = lanes;
    fe_finish(p, id, kw->span.lo);
    return id;
}

/* 'atomic.add' | 'atomic.exch'  '(' ref ',' expr ')' ('mask' expr)?  (docs/tir.md 7.7):
 * a LOAD whose sub is the atomic op and c the value; its result is the old element */
static NodeId atomic_call(Parser *p, Token *kw, Op op)
{
    Token *open = fe_advance(p);
    int saved = p->store_value;
    p->store_value = 0;
    NodeId ref = fe_ref(p), val = 0;
    if (ref && fe_expect(p, T_COMMA, "(`atomic.add(x[i], value)`)"))
        val = fe_expr(p);
    p->store_value = saved;
    if (!val || !fe_expect_close(p, T_RPAREN, open))
        return 0;
    NodeId mask = 0; /* as for `load`: in a store's value a bare `mask` is the store's */
    if (!p->store_value && fe_accept(p, T_MASK) && !(mask = fe_expr(p)))
        return 0;
    NodeId id = fe_node(p, OP_LOAD, kw->span);
    Node *n = ir_get(p->k, id);
    n->sub = (uint16_t)op;
    n->a = ref;
    n->b = mask;
    n->c = val;
    fe_finish(p, id, kw->span.lo);
    return id;
}

/* DTYPE '(' expr ')' */
static NodeId cast(Parser *p, Token *t)
{
    Token *open = fe_peek(p);
    if (!fe_check(p, T_LPAREN)) {
        fe_error(p, E0107, t->span, "expected an expression, found data type `%s`",
                 ir_symstr(p->ctx, t->sym));
        return 0;
    }
    fe_advance(p);
    NodeId a = fe_expr(p);
    if (!a || !fe_expect_close(p, T_RPAREN, open))
        return 0;
    NodeId id = fe_node(p, OP_CAST, t->span);
    Node *n = ir_get(p->k, id);
    n->dtype = t->dtype;
    n->lanes = t->lanes;
    n->a = a;
    fe_finish(p, id, t->span.lo);
    return id;
}

static NodeId literal(Parser *p, Op op, Token *t)
{
    NodeId id = fe_node(p, op, t->span);
    Node *n = ir_get(p->k, id);
    switch (t->kind) {
    case T_INT: n->v.i = t->v.i; break;
    case T_FLOAT: n->v.f = t->v.f; break;
    case T_TRUE: n->v.i = 1; break;
    case T_INF: n->v.f = INFINITY; break;
    case T_NAN: n->v.f = NAN; break;
    default: break;
    }
    return id;
}

/* ( expr ) */
static NodeId paren(Parser *p, Token *open)
{
    int saved = p->store_value;
    p->store_value = 0;
    NodeId e = fe_expr(p);
    p->store_value = saved;
    if (!e || !fe_expect_close(p, T_RPAREN, open))
        return 0;
    Node *n = ir_get(p->k, e);
    n->flags |= NF_PAREN;
    n->span = (Span){p->file, open->span.lo, fe_prev(p)->span.hi};
    return e;
}

/* primary := INT | FLOAT | 'true' | 'false' | 'inf' | 'nan' | IDENT | SPECIAL | '(' expr ')'
 *          | DTYPE '(' expr ')' | BUILTIN '(' args ')' | reduction | load | select */
static NodeId primary(Parser *p)
{
    Token *t = fe_peek(p);
    fe_as_name(t);
    switch (t->kind) {
    case T_INT: fe_advance(p); return literal(p, OP_INT, t);
    case T_FLOAT: case T_INF: case T_NAN: fe_advance(p); return literal(p, OP_FLOAT, t);
    case T_TRUE: case T_FALSE: fe_advance(p); return literal(p, OP_BOOL, t);
    case T_LPAREN: fe_advance(p); return paren(p, t);
    case T_DTYPE: fe_advance(p); return cast(p, t);
    case T_LOAD: fe_advance(p); return load(p, t);
    case T_THREADS: {
        fe_advance(p);
        NodeId id = fe_node(p, OP_SPECIAL, t->span);
        ir_get(p->k, id)->sub = SR_NTHREADS;
        return id;
    }
    case T_IDENT: break;
    default:
        fe_error_here(p, E0107, "an expression");
        return 0;
    }
    const char *s = ir_symstr(p->ctx, t->sym);
    fe_advance(p);
    if (fe_check(p, T_LPAREN)) {
        Op at = lookup_op(s, OC_MEM);
        return at ? atomic_call(p, t, at) : call(p, t);
    }
    int sr = special_of(s);
    NodeId id = fe_node(p, sr >= 0 ? OP_SPECIAL : OP_NAME, t->span);
    if (sr >= 0)
        ir_get(p->k, id)->sub = (uint16_t)sr;
    else
        ir_get(p->k, id)->name = t->sym;
    return id;
}
