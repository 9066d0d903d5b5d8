/* parser.c — the TIR parser: token access, error reporting and recovery, the
 * file and the kernel header (docs/tir.md section 2). Items and statements
 * are in parser_stmt.c, expressions in parser_expr.c.
 *
 * Recovery (Wren style): the first error sets `panic`; while it is set no
 * further error is reported. The enclosing statement loop (or the header
 * loop, or the file loop) then skips to a separator at its own nesting depth
 * and clears it, so N independent mistakes give exactly N diagnostics. */
#include <stdarg.h>
#include <string.h>
#include "parser.h"

/* ---- tokens ------------------------------------------------------------- */

Token *fe_peek(Parser *p) { return &p->toks[p->pos]; }

Token *fe_peek_at(Parser *p, uint32_t ahead)
{
    uint32_t i = p->pos + ahead;
    return &p->toks[i < p->ntoks ? i : p->ntoks - 1];
}

Token *fe_prev(Parser *p) { return &p->toks[p->pos ? p->pos - 1 : 0]; }

Token *fe_advance(Parser *p)
{
    Token *t = &p->toks[p->pos];
    if (t->kind != T_EOF)
        p->pos++;
    return t;
}

int fe_check(Parser *p, TokKind k) { return fe_peek(p)->kind == k; }

int fe_accept(Parser *p, TokKind k)
{
    if (!fe_check(p, k))
        return 0;
    fe_advance(p);
    return 1;
}

uint32_t fe_line(Parser *p, uint32_t offset)
{
    uint32_t line, col, el, ec;
    span_linecol(p->ctx, (Span){p->file, offset, offset}, &line, &col, &el, &ec);
    return line;
}

const char *fe_describe(Parser *p, const Token *t)
{
    switch (t->kind) {
    case T_EOF: return "end of file";
    case T_NEWLINE: return "end of line";
    default: break;
    }
    const char *text = p->ctx->files[p->file].text + t->span.lo;
    uint32_t n = t->span.hi - t->span.lo;
    if (n > 40)
        n = 40;
    return ir_fmt(p->ctx, "`%.*s`", (int)n, text);
}

/* ---- errors ------------------------------------------------------------- */

Diag *fe_error(Parser *p, DiagCode code, Span span, const char *fmt, ...)
{
    if (p->panic)
        return NULL;
    p->panic = 1;
    if (fe_peek(p)->kind == T_ERROR && fe_peek(p)->span.lo == span.lo)
        return NULL;  /* the lexer already reported this place */
    va_list ap;
    va_start(ap, fmt);
    char *msg = ir_vfmt(p->ctx, fmt, ap);
    va_end(ap);
    return diag_report(p->ctx, code, span, "%s", msg);
}

/* "expected WHAT, found X" at the current token */
Diag *fe_error_here(Parser *p, DiagCode code, const char *what)
{
    Token *t = fe_peek(p);
    if (t->kind == T_NEWLINE && t->v.i > 0 && (uint64_t)t->v.i <= p->ntoks) {
        Token *open = &p->toks[t->v.i - 1];
        TokKind close = open->kind == T_LBRACK ? T_RBRACK : T_RPAREN;
        Diag *d = fe_error(p, E0106, open->span, "`%s` expected (to close `%s` at line %u)",
                           fe_tok_name(close), fe_tok_name(open->kind), fe_line(p, open->span.lo));
        if (d)
            diag_note(p->ctx, d, t->span, "the next statement starts here");
        return d;
    }
    return fe_error(p, code, t->span, "expected %s, found %s", what, fe_describe(p, t));
}

/* Keywords that mean something only at one place of the grammar (a header
 * clause, a clause of a declaration or statement) are names everywhere
 * else: `arg target: global i32[B]`, `let count = 4`, `store out[i] <- mask`.
 * Reserved for good: the words that start a statement or an expression. */
int fe_is_contextual(TokKind k)
{
    switch (k) {
    case T_TARGET: case T_ARG: case T_GRID: case T_WARPS: case T_WARPGROUPS: case T_ASSUME:
    case T_SHAPE: case T_STEP: case T_UNROLL: case T_NOHOIST: case T_FRESH: case T_AS: case T_MASK: case T_ON: case T_FROM:
    case T_TO: case T_STAGES: case T_COUNT: case T_REGS: case T_SWIZZLE: case T_LAYOUT:
    case T_SCOPE: case T_ALIGN: case T_STRIDES:
        return 1;
    default:
        return 0;
    }
}

/* turns a contextual keyword at a place that wants a name into T_IDENT */
int fe_as_name(Token *t)
{
    if (fe_is_contextual((TokKind)t->kind))
        t->kind = T_IDENT;
    return t->kind == T_IDENT;
}

/* a name being declared is one identifier: a dotted builtin (`thread.x`,
 * `reduce.block.add`) lexes as one T_IDENT but names something already (and
 * cannot be a PTX or AMDGPU symbol: a kernel named `thread.x` reached ptxas) */
static int dotted_decl(Parser *p, const char *context)
{
    Token *t = fe_peek(p);
    const char *s = p->ctx->files[p->file].text + t->span.lo;
    size_t n = t->span.hi - t->span.lo;
    if (t->kind != T_IDENT || !memchr(s, '.', n))
        return 0;
    Diag *d = fe_error(p, E0205, t->span, "`%.*s` is a builtin, not a name that can be declared%s%s",
                       (int)n, s, context ? " " : "", context ? context : "");
    char *plain = ir_fmt(p->ctx, "%.*s", (int)n, s);
    for (char *c = plain; *c; c++)
        if (*c == '.')
            *c = '_';
    if (d)
        diag_help(p->ctx, d, "declare a plain identifier (letters, digits, `_`), e.g. `%s`", plain);
    fe_advance(p);
    return 1;
}

int fe_expect(Parser *p, TokKind k, const char *context)
{
    if (k == T_IDENT)
        fe_as_name(fe_peek(p));
    if (k == T_IDENT && dotted_decl(p, context))
        return 0;
    if (fe_accept(p, k))
        return 1;
    const char *what = ir_fmt(p->ctx, k <= T_DTYPE ? "%s%s%s" : "`%s`%s%s",
                              k == T_IDENT ? "a name" : k == T_INT ? "an integer" : fe_tok_name(k),
                              context ? " " : "", context ? context : "");
    fe_error_here(p, E0104, what);
    return 0;
}

/* a closing delimiter; when the line changed since the opener, Lua style
 * "`)` expected (to close `(` at line 12)" with a note at the opener */
int fe_expect_close(Parser *p, TokKind k, const Token *open)
{
    if (fe_accept(p, k))
        return 1;
    Token *t = fe_peek(p);
    uint32_t oline = fe_line(p, open->span.lo);
    if (t->kind != T_EOF && fe_line(p, t->span.lo) == oline) {
        fe_error_here(p, E0104, ir_fmt(p->ctx, "`%s`", fe_tok_name(k)));
        return 0;
    }
    Diag *d = fe_error(p, E0106, t->span, "`%s` expected (to close `%s` at line %u), found %s",
                       fe_tok_name(k), fe_tok_name(open->kind), oline, fe_describe(p, t));
    if (d)
        diag_note(p->ctx, d, open->span, "unclosed `%s` opened here", fe_tok_name(open->kind));
    return 0;
}

/* bounds the recursion (expressions and blocks nested too deeply) */
int fe_enter(Parser *p)
{
    if (p->depth < 200) {
        p->depth++;
        return 1;
    }
    fe_error(p, E0105, fe_peek(p)->span, "nesting too deep (more than 200 levels)");
    return 0;
}

/* ---- nodes and lists ---------------------------------------------------- */

NodeId fe_node(Parser *p, Op op, Span span)
{
    return ir_node(p->ctx, p->k, op, span);
}

/* extends node id's span from lo to the end of the previous token */
void fe_finish(Parser *p, NodeId id, uint32_t lo)
{
    Node *n = ir_get(p->k, id);
    n->span.lo = lo;
    uint32_t hi = fe_prev(p)->span.hi;
    n->span.hi = hi > lo ? hi : lo;
}

uint32_t fe_mark(Parser *p) { return p->nstk; }

void fe_push(Parser *p, NodeId id)
{
    p->stk = arena_grow(&p->ctx->arena, p->stk, &p->capstk, p->nstk + 1, sizeof *p->stk);
    p->stk[p->nstk++] = id;
}

void fe_pop_list(Parser *p, uint32_t mark, NodeId id)
{
    uint32_t n = p->nstk - mark;
    uint32_t list = ir_list(p->ctx, p->k, n ? p->stk + mark : NULL, n);
    Node *node = ir_get(p->k, id);
    node->list = list;
    node->n = n;
    p->nstk = mark;
}

/* ---- suggestions -------------------------------------------------------- */

/* optimal string alignment distance: edits and adjacent transpositions */
int fe_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 99;
    int d[65][65];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

/* the closest candidate within a third of the name's length (at least 1);
 * on a tie, one that extends the name (`sm_90` -> `sm_90a`) wins */
const char *fe_suggest(const char *name, const char *const *cands, uint32_t n)
{
    int limit = (int)strlen(name) / 3;
    if (limit < 1)
        limit = 1;
    const char *best = NULL;
    int bestd = limit + 1, best_prefix = 0;
    size_t len = strlen(name);
    for (uint32_t i = 0; i < n; i++) {
        if (!cands[i] || !cands[i][0] || !strcmp(cands[i], name))
            continue;
        int d = fe_edit_distance(name, cands[i]);
        int prefix = !strncmp(cands[i], name, len);
        if ((size_t)d >= len)
            continue;
        if (d < bestd || (d == bestd && prefix && !best_prefix)) {
            bestd = d;
            best = cands[i];
            best_prefix = prefix;
        }
    }
    return best;
}

/* ---- recovery ----------------------------------------------------------- */

/* skips to the end of the line, the next header clause keyword, `{`,
 * `kernel` or end of file */
static void sync_header(Parser *p)
{
    for (;;) {
        switch (fe_peek(p)->kind) {
        case T_NEWLINE: case T_SEMI:
            fe_advance(p);
            p->panic = 0;
            return;
        case T_EOF: case T_KERNEL: case T_LBRACE: case T_TARGET: case T_ARG:
        case T_GRID: case T_THREADS: case T_WARPS: case T_WARPGROUPS: case T_ASSUME:
        case T_SHAPE:
            p->panic = 0;
            return;
        default:
            fe_advance(p);
        }
    }
}

/* ---- the kernel header -------------------------------------------------- */

enum { SEEN_TARGET = 1, SEEN_GRID = 2, SEEN_BLOCK = 4 };

static const char *const clause_names[] = {
    "target", "arg", "grid", "threads", "warps", "warpgroups", "assume", "shape"
};

static int duplicate_clause(Parser *p, unsigned *seen, unsigned bit, Span first, const Token *t)
{
    if (!(*seen & bit)) {
        *seen |= bit;
        return 0;
    }
    Diag *d = fe_error(p, E0110, t->span, "duplicate %s clause", fe_describe(p, t));
    if (d)
        diag_note(p->ctx, d, first, "first given here");
    fe_advance(p);
    return 1;
}

/* values := 'in' '{' expr (',' expr)* '}' | 'in' expr '..' expr
 * the values a parameter may take: a set (list) or a half-open range (b .. c) */
static int parse_param_values(Parser *p, NodeId id)
{
    if (!fe_accept(p, T_IN))
        return 1;
    Token *open = fe_peek(p);
    if (fe_accept(p, T_LBRACE)) {
        uint32_t mark = fe_mark(p);
        do {
            NodeId v = fe_expr_prec(p, 8);
            if (!v)
                return 0;
            fe_push(p, v);
        } while (fe_accept(p, T_COMMA));
        fe_pop_list(p, mark, id);
        return fe_expect_close(p, T_RBRACE, open);
    }
    NodeId lo = fe_expr_prec(p, 8);
    if (!lo || !fe_expect(p, T_DOTDOT, "(a parameter's values: `in {0, 1}` or `in 1 .. 9`)"))
        return 0;
    NodeId hi = fe_expr_prec(p, 8);
    if (!hi)
        return 0;
    Node *n = ir_get(p->k, id);
    n->b = lo;
    n->c = hi;
    return 1;
}

/* params := '<' param (',' param)* '>'
 * param  := IDENT '=' expr values?   (values: see parse_param_values) */
static void parse_params(Parser *p)
{
    Kernel *k = p->k;
    Token *open = fe_advance(p);
    do {
        Token *name = fe_peek(p);
        if (!fe_expect(p, T_IDENT, "(a parameter name)"))
            return;
        if (!fe_expect(p, T_EQ, "(parameters have a default: `BM = 128`)"))
            return;
        NodeId def = fe_expr_prec(p, 8);   /* above `<`/`>`: the list ends with `>` */
        if (!def)
            return;
        NodeId id = fe_node(p, OP_PARAM, name->span);
        Node *n = ir_get(k, id);
        n->name = name->sym;
        n->a = def;
        if (!parse_param_values(p, id))
            return;
        fe_finish(p, id, name->span.lo);
        ir_push_node_list(p->ctx, &k->params, &k->nparams, id);
    } while (fe_accept(p, T_COMMA));
    fe_expect_close(p, T_GT, open);
}

/* 'target' TARGET (',' TARGET)* */
static void parse_target(Parser *p)
{
    Kernel *k = p->k;
    uint32_t lo = fe_advance(p)->span.lo;
    do {
        Token *t = fe_peek(p);
        const char *s = ir_symstr(p->ctx, t->sym);
        Target tg;
        if (t->kind != T_IDENT || !ir_lookup_target(s, strlen(s), &tg)) {
            Diag *d = t->kind == T_IDENT
                ? fe_error(p, E0112, t->span, "unknown target `%s`", s)
                : fe_error(p, E0112, t->span, "expected a target, found %s", fe_describe(p, t));
            const char *near = t->kind == T_IDENT ? fe_suggest(s, ir_target_names, TG__COUNT) : NULL;
            if (d && near) {
                diag_help(p->ctx, d, "did you mean `%s`?", near);
                diag_fixit(p->ctx, d, t->span, near);
            }
            if (d)
                diag_help(p->ctx, d, "valid targets: sm_80, sm_90a, gfx90a, gfx942; sm_100a is checked "
                          "but not compiled yet (code generation reports E0902)");
            return;
        }
        fe_advance(p);
        if (k->targets[tg]) {
            Diag *d = fe_error(p, E0110, t->span, "target `%s` listed twice", s);
            if (d)
                diag_note(p->ctx, d, k->target_spans[tg], "first listed here");
            return;
        }
        k->targets[tg] = 1;
        k->target_spans[tg] = t->span;
        k->ntargets++;
    } while (fe_accept(p, T_COMMA));
    k->target_span = (Span){p->file, lo, fe_prev(p)->span.hi};
}

static NodeId find_dim(Parser *p, Sym name)
{
    for (uint32_t i = 0; i < p->k->ndims; i++)
        if (ir_get(p->k, p->k->dims[i])->name == name)
            return p->k->dims[i];
    return 0;
}

static int is_param(Parser *p, Sym name)
{
    for (uint32_t i = 0; i < p->k->nparams; i++)
        if (ir_get(p->k, p->k->params[i])->name == name)
            return 1;
    return 0;
}

/* dim := IDENT | INT | expr      (a new IDENT declares a symbolic dim) */
static NodeId parse_dim(Parser *p)
{
    Token *t = fe_peek(p);
    TokKind next = fe_peek_at(p, 1)->kind;
    if (next == T_COMMA || next == T_RBRACK)
        fe_as_name(t);
    if (t->kind != T_IDENT || (next != T_COMMA && next != T_RBRACK) || is_param(p, t->sym))
        return fe_expr(p);
    fe_advance(p);
    NodeId dim = find_dim(p, t->sym);
    if (!dim) {
        dim = fe_node(p, OP_DIM, t->span);
        ir_get(p->k, dim)->name = t->sym;
        ir_push_node_list(p->ctx, &p->k->dims, &p->k->ndims, dim);
    }
    NodeId id = fe_node(p, OP_NAME, t->span);
    ir_get(p->k, id)->name = t->sym;
    ir_get(p->k, id)->decl = dim;
    return id;
}

/* (('values' | 'offsets') expr '..' expr)?: the range of an integer tensor's
 * elements, lower bound included, upper excluded (`values 0 .. V`: class ids
 * of V classes; `offsets 0 .. T + 1`: the offsets of sequences packed in T
 * rows, *offsets set). Neither word is a keyword: a name anywhere else. */
static int parse_values(Parser *p, NodeId *lo, NodeId *hi, int *offsets)
{
    Token *t = fe_peek(p);
    const char *w = t->kind == T_IDENT ? ir_symstr(p->ctx, t->sym) : "";
    *offsets = strcmp(w, "offsets") == 0;
    if (strcmp(w, "values") != 0 && !*offsets)
        return 1;
    fe_advance(p);
    *lo = fe_expr(p);
    if (!*lo || !fe_expect(p, T_DOTDOT, *offsets ? "(offsets are written `offsets 0 .. T + 1`)"
                                                  : "(a value range is written `values 0 .. V`)"))
        return 0;
    *hi = fe_expr(p);
    return *hi != 0;
}

/* argtype := 'global' DTYPE '[' dim (',' dim)* ']' ('strides' '[' expr (',' expr)* ']')?
 *            ('align' INT)? (('values' | 'offsets') expr '..' expr)? ('workspace')?
 *            ('tolerance' expr)?
 *          | DTYPE */
static NodeId parse_argtype(Parser *p)
{
    uint32_t lo = fe_peek(p)->span.lo;
    uint8_t dt, lanes;
    if (!fe_accept(p, T_GLOBAL)) {
        if (!fe_dtype(p, &dt, &lanes))
            return 0;
        NodeId id = fe_node(p, OP_TYPE, fe_prev(p)->span);
        ir_get(p->k, id)->dtype = dt;
        ir_get(p->k, id)->lanes = lanes;
        return id;
    }
    if (!fe_dtype(p, &dt, &lanes))
        return 0;
    Token *open = fe_peek(p);
    if (!fe_expect(p, T_LBRACK, "(a global tensor has a shape: `global f32[M, N]`)"))
        return 0;
    uint32_t mark = fe_mark(p);
    do {
        NodeId d = parse_dim(p);
        if (!d)
            return 0;
        fe_push(p, d);
    } while (fe_accept(p, T_COMMA));
    if (!fe_expect_close(p, T_RBRACK, open))
        return 0;
    uint32_t ndims = p->nstk - mark;
    if (fe_check(p, T_STRIDES)) {
        fe_advance(p);
        Token *o2 = fe_peek(p);
        if (!fe_expect(p, T_LBRACK, NULL) || !fe_expr_list(p, T_RBRACK, o2))
            return 0;
    }
    int64_t align = 0;
    if (fe_accept(p, T_ALIGN) && !fe_int_lit(p, &align, 65535, "alignment"))
        return 0;
    NodeId vlo = 0, vhi = 0;
    int offsets = 0;
    if (!parse_values(p, &vlo, &vhi, &offsets))
        return 0;
    Token *w = fe_peek(p); /* `workspace` is not a keyword either */
    int workspace = w->kind == T_IDENT && strcmp(ir_symstr(p->ctx, w->sym), "workspace") == 0;
    if (workspace)
        fe_advance(p);
    NodeId tol = 0;
    Token *tw = fe_peek(p); /* nor is `tolerance` */
    if (tw->kind == T_IDENT && strcmp(ir_symstr(p->ctx, tw->sym), "tolerance") == 0) {
        fe_advance(p);
        if (!(tol = fe_expr(p)))
            return 0;
    }
    NodeId id = fe_node(p, OP_GTYPE, fe_prev(p)->span);
    Node *n = ir_get(p->k, id);
    if (workspace)
        n->flags |= NF_WORKSPACE;
    if (offsets)
        n->flags |= NF_OFFSETS;
    n->b = vlo;
    n->c = vhi;
    n->d = tol;
    n->dtype = dt;
    n->lanes = lanes;
    n->sub = (uint16_t)ndims;
    n->v.attr.align = (uint16_t)align;
    fe_pop_list(p, mark, id);
    fe_finish(p, id, lo);
    return id;
}

/* 'arg' IDENT ':' argtype */
static void parse_arg(Parser *p)
{
    uint32_t lo = fe_advance(p)->span.lo;
    Token *name = fe_peek(p);
    if (!fe_expect(p, T_IDENT, "(an argument name)") || !fe_expect(p, T_COLON, NULL))
        return;
    NodeId type = parse_argtype(p);
    if (!type)
        return;
    NodeId id = fe_node(p, OP_ARG, name->span);
    ir_get(p->k, id)->name = name->sym;
    ir_get(p->k, id)->a = type;
    fe_finish(p, id, lo);
    ir_push_node_list(p->ctx, &p->k->args, &p->k->nargs, id);
}

/* 'grid' '[' expr (',' expr)* ']' */
static void parse_grid(Parser *p)
{
    Token *kw = fe_advance(p);
    Token *open = fe_peek(p);
    if (!fe_expect(p, T_LBRACK, "(a grid is written `grid [X, Y]`)"))
        return;
    p->k->ngrid = 0;
    do {
        NodeId e = fe_expr(p);
        if (!e)
            return;
        if (p->k->ngrid == 3) {
            fe_error(p, E0105, span_join(kw->span, ir_get(p->k, e)->span),
                     "a grid has at most 3 extents");
            return;
        }
        p->k->grid[p->k->ngrid++] = e;
    } while (fe_accept(p, T_COMMA));
    fe_expect_close(p, T_RBRACK, open);
}

/* ('threads' | 'warps' | 'warpgroups') expr */
static void parse_block_size(Parser *p)
{
    Token *kw = fe_advance(p);
    NodeId e = fe_expr(p);
    if (!e)
        return;
    p->k->block_size = e;
    p->k->block_unit = kw->kind == T_THREADS ? UNIT_THREADS
                     : kw->kind == T_WARPS ? UNIT_WARPS : UNIT_WARPGROUPS;
    p->k->block_span = (Span){p->file, kw->span.lo, fe_prev(p)->span.hi};
}

/* 'shape' IDENT '=' INT (',' IDENT '=' INT)* */
static void parse_shape(Parser *p)
{
    Kernel *k = p->k;
    fe_advance(p);
    do {
        Token *name = fe_peek(p);
        int64_t v;
        if (!fe_expect(p, T_IDENT, "(a dim name)") || !fe_expect(p, T_EQ, NULL) ||
            !fe_int_lit(p, &v, INT64_MAX, "shape"))
            return;
        for (uint32_t i = 0; i < k->nshapes; i++) {
            if (k->shapes[i].name != name->sym)
                continue;
            Diag *d = fe_error(p, E0110, name->span, "duplicate default shape for `%s`",
                               ir_symstr(p->ctx, name->sym));
            if (d)
                diag_note(p->ctx, d, k->shapes[i].span, "first given here");
            return;
        }
        k->shapes = arena_realloc(&p->ctx->arena, k->shapes, k->nshapes * sizeof *k->shapes,
                                  (k->nshapes + 1) * sizeof *k->shapes);
        k->shapes[k->nshapes++] = (ShapeDefault){name->sym, v,
                                                 {p->file, name->span.lo, fe_prev(p)->span.hi}};
    } while (fe_accept(p, T_COMMA));
}

static void unknown_clause(Parser *p)
{
    Token *t = fe_peek(p);
    if (t->kind != T_IDENT) {
        fe_error_here(p, E0104, "a header clause or `{`");
        return;
    }
    const char *s = ir_symstr(p->ctx, t->sym);
    Diag *d = fe_error(p, E0109, t->span, "unknown kernel header clause `%s`", s);
    const char *near = fe_suggest(s, clause_names, sizeof clause_names / sizeof *clause_names);
    if (d && near) {
        diag_help(p->ctx, d, "did you mean `%s`?", near);
        diag_fixit(p->ctx, d, t->span, near);
    }
    if (d)
        diag_help(p->ctx, d, "header clauses: target, arg, grid, threads, warps, warpgroups, "
                             "assume, shape; the body starts with `{`");
}

/* header := target | arg | grid | threads/warps/warpgroups | assume | shape */
static void parse_header(Parser *p, unsigned *seen, Span *first)
{
    Kernel *k = p->k;
    for (;;) {
        Token *t = fe_peek(p);
        p->nops = 0;
        switch (t->kind) {
        case T_NEWLINE: case T_SEMI: fe_advance(p); continue;
        case T_LBRACE: case T_EOF: case T_KERNEL: return;
        case T_TARGET:
            if (!duplicate_clause(p, seen, SEEN_TARGET, first[0], t)) {
                first[0] = t->span;
                parse_target(p);
            }
            break;
        case T_GRID:
            if (!duplicate_clause(p, seen, SEEN_GRID, first[1], t)) {
                first[1] = t->span;
                parse_grid(p);
            }
            break;
        case T_THREADS: case T_WARPS: case T_WARPGROUPS:
            if (!duplicate_clause(p, seen, SEEN_BLOCK, first[2], t)) {
                first[2] = t->span;
                parse_block_size(p);
            }
            break;
        case T_ARG: parse_arg(p); break;
        case T_SHAPE: parse_shape(p); break;
        case T_ASSUME: {
            fe_advance(p);
            NodeId e = fe_expr(p);
            if (e)
                ir_push_node_list(p->ctx, &k->assumes, &k->nassumes, e);
            break;
        }
        default:
            unknown_clause(p);
            break;
        }
        if (!p->panic && !fe_check(p, T_NEWLINE) && !fe_check(p, T_SEMI) &&
            !fe_check(p, T_LBRACE) && !fe_check(p, T_EOF))
            fe_error_here(p, E0105, "end of line after the header clause");
        if (p->panic)
            sync_header(p);
    }
}

static void missing_clauses(Parser *p, unsigned seen)
{
    Kernel *k = p->k;
    const char *name = ir_symstr(p->ctx, k->name);
    if (!(seen & SEEN_GRID)) {
        Diag *d = diag_report(p->ctx, E0115, k->span, "kernel `%s` has no `grid` clause", name);
        diag_help(p->ctx, d, "say how many blocks to launch, e.g. `grid [cdiv(M, 128)]`");
    }
    if (!(seen & SEEN_BLOCK)) {
        Diag *d = diag_report(p->ctx, E0115, k->span, "kernel `%s` has no block size", name);
        diag_help(p->ctx, d, "add `threads N`, `warps N` or `warpgroups N`");
    }
}

/* kernel := 'kernel' IDENT params? header* '{' item* '}' */
static Kernel *parse_kernel(Parser *p)
{
    Kernel *k = ir_kernel_new(p->ctx);
    p->k = k;
    Token *kw = fe_advance(p);
    Token *name = fe_peek(p);
    k->span = kw->span;
    if (!fe_expect(p, T_IDENT, "(the kernel's name)")) {
        sync_header(p);
    } else {
        k->name = name->sym;
        k->span = span_join(kw->span, name->span);
    }
    if (fe_check(p, T_LT)) {
        parse_params(p);
        if (p->panic)
            sync_header(p);
    }
    unsigned seen = 0;
    Span first[3];
    uint32_t errors = p->ctx->nerrors;
    parse_header(p, &seen, first);
    if (k->name && p->ctx->nerrors == errors)
        missing_clauses(p, seen);
    if (!fe_check(p, T_LBRACE)) {
        if (!p->comment_error)
            fe_error_here(p, E0104, "`{` to start the kernel body");
        return k;
    }
    k->body = fe_block(p, BLK_KERNEL);
    k->end_span = fe_prev(p)->span;
    return k;
}

static int is_blank_file(Parser *p)
{
    for (uint32_t i = 0; i < p->ntoks; i++)
        if (p->toks[i].kind != T_EOF && p->toks[i].kind != T_NEWLINE && p->toks[i].kind != T_SEMI)
            return 0;
    return 1;
}

/* file := kernel+ */
Module *fe_parse(CakeCtx *ctx, uint32_t file)
{
    Module *m = arena_alloc(&ctx->arena, sizeof *m);
    m->file = file;
    if (file >= ctx->nfiles)
        ir_bug(ctx, "fe_parse: no source file %u", file);
    TokenList tl = fe_lex(ctx, file);
    Parser p = {0};
    p.ctx = ctx;
    p.file = file;
    p.toks = tl.toks;
    p.ntoks = tl.ntoks;
    p.comment_error = tl.comment_error;
    if (is_blank_file(&p) && !tl.comment_error) {
        Diag *d = diag_report(ctx, E0117, (Span){file, 0, 0}, "empty file: no kernel");
        diag_help(ctx, d, "a file holds one or more `kernel NAME ... { ... }`");
        return m;
    }
    for (;;) {
        TokKind t = fe_peek(&p)->kind;
        if (t == T_EOF)
            break;
        if (t == T_NEWLINE || t == T_SEMI) {
            fe_advance(&p);
            continue;
        }
        if (t != T_KERNEL) {
            fe_error_here(&p, E0105, "`kernel`");
            while (!fe_check(&p, T_KERNEL) && !fe_check(&p, T_EOF))
                fe_advance(&p);
            p.panic = 0;
            continue;
        }
        Kernel *k = parse_kernel(&p);
        p.panic = 0;
        m->kernels = arena_realloc(&ctx->arena, m->kernels, m->nkernels * sizeof *m->kernels,
                                   (m->nkernels + 1) * sizeof *m->kernels);
        m->kernels[m->nkernels++] = k;
    }
    return m;
}
