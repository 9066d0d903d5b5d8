/* lexer.c — turns a TIR source file into tokens with exact byte spans.
 *
 * Newline significance is decided here: a newline becomes T_NEWLINE only
 * when it can end a statement (not inside ( ) or [ ], not after a binary
 * operator, `,`, `=`, `<-` or `..`). Errors never stop the lexer: a bad
 * character becomes T_ERROR so the parser can resynchronize silently. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lexer.h"

static const char *const tok_spell[T__COUNT] = {
    [T_EOF] = "end of file", [T_NEWLINE] = "newline", [T_ERROR] = "invalid token",
    [T_IDENT] = "identifier", [T_INT] = "integer", [T_FLOAT] = "number",
    [T_DTYPE] = "data type",
#define X(id, sp) [T_##id] = sp,
    FE_PUNCTS(X)
    FE_KEYWORDS(X)
#undef X
};

static const char *const kw_spell[] = {
#define X(id, sp) sp,
    FE_KEYWORDS(X)
#undef X
};

const char *fe_tok_name(TokKind k)
{
    return k < T__COUNT ? tok_spell[k] : "?";
}

typedef struct {
    CakeCtx *ctx;
    const char *src;
    uint32_t len, pos, file;
    TokenList out;
    uint32_t cap;
    struct Delim { char c; uint32_t tok; } *delims;   /* open ( [ { for newline rules */
    uint32_t ndelims, capdelims;
    int nl_pending;     /* a newline was swallowed inside ( ) or [ ] */
} Lexer;

static int is_ident_start(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_ident_char(int c) { return is_ident_start(c) || is_digit(c); }
static int is_hex(int c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

static Span span_of(Lexer *lx, uint32_t lo, uint32_t hi)
{
    return (Span){lx->file, lo, hi};
}

static Token *push(Lexer *lx, TokKind kind, uint32_t lo, uint32_t hi)
{
    lx->out.toks = arena_grow(&lx->ctx->arena, lx->out.toks, &lx->cap, lx->out.ntoks + 1, sizeof(Token));
    Token *t = &lx->out.toks[lx->out.ntoks++];
    memset(t, 0, sizeof *t);
    if (kind != T_NEWLINE)
        lx->nl_pending = 0;
    t->kind = (uint8_t)kind;
    t->span = span_of(lx, lo, hi);
    return t;
}

static void delim_push(Lexer *lx, char c)
{
    lx->delims = arena_grow(&lx->ctx->arena, lx->delims, &lx->capdelims, lx->ndelims + 1,
                            sizeof *lx->delims);
    lx->delims[lx->ndelims++] = (struct Delim){c, lx->out.ntoks};
}

/* closes the innermost matching opener; '}' also closes unclosed ( and [ */
static void delim_pop(Lexer *lx, char open)
{
    uint32_t i = lx->ndelims;
    while (i > 0 && lx->delims[i - 1].c != open) {
        if (lx->delims[i - 1].c == '{')
            return;  /* a stray ) or ] inside braces: ignore it */
        i--;
    }
    if (i > 0)
        lx->ndelims = i - 1;
}

/* the previous token lets the expression continue on the next line */
static int continues(TokKind k)
{
    switch (k) {
    case T_PLUS: case T_MINUS: case T_STAR: case T_SLASH: case T_PERCENT: case T_CARET:
    case T_SHL: case T_SHR: case T_AMP: case T_PIPE: case T_TILDE: case T_LT: case T_LE:
    case T_GT: case T_GE: case T_EQEQ: case T_NE: case T_ANDAND: case T_OROR:
    case T_COMMA: case T_EQ: case T_PLUSEQ: case T_MINUSEQ: case T_STAREQ:
    case T_SLASHEQ: case T_MAXEQ: case T_MINEQ: case T_ARROW: case T_DOTDOT:
    case T_NEWLINE: case T_LBRACE: case T_SEMI:
        return 1;
    default:
        return 0;
    }
}

static void newline(Lexer *lx, uint32_t at)
{
    if (lx->ndelims > 0 && lx->delims[lx->ndelims - 1].c != '{') {
        lx->nl_pending = 1;
        return;
    }
    if (lx->out.ntoks == 0 || continues(lx->out.toks[lx->out.ntoks - 1].kind))
        return;
    push(lx, T_NEWLINE, at, at + 1);
}

/* skips whitespace and comments; returns 0 at end of input */
static int skip_space(Lexer *lx)
{
    while (lx->pos < lx->len) {
        char c = lx->src[lx->pos];
        if (c == '\n') {
            newline(lx, lx->pos);
            lx->pos++;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            lx->pos++;
        } else if (c == '#' && lx->pos + 1 < lx->len && lx->src[lx->pos + 1] == '[') {
            uint32_t start = lx->pos;
            lx->pos += 2;
            while (lx->pos + 1 < lx->len && !(lx->src[lx->pos] == ']' && lx->src[lx->pos + 1] == '#'))
                lx->pos++;
            if (lx->pos + 1 >= lx->len) {
                Diag *d = diag_report(lx->ctx, E0103, span_of(lx, start, start + 2),
                                      "unterminated block comment");
                diag_help(lx->ctx, d, "close it with `]#`");
                lx->out.comment_error = 1;
                lx->pos = lx->len;
                return 0;
            }
            lx->pos += 2;
        } else if (c == '#') {
            while (lx->pos < lx->len && lx->src[lx->pos] != '\n')
                lx->pos++;
        } else {
            return 1;
        }
    }
    return 0;
}

/* --- identifiers, keywords, dotted builtins ---------------------------- */

static int dotted_name(const char *sp)
{
    return sp[0] && strchr(sp, '.') != NULL;
}

int fe_is_dotted_builtin(const char *s, size_t n)
{
    for (int i = 0; i < OP__COUNT; i++) {
        const char *sp = ir_ops[i].spelling;
        if (sp[0] == s[0] && dotted_name(sp) && strlen(sp) == n && memcmp(sp, s, n) == 0)
            return 1;
    }
    for (int i = 0; i < SR__COUNT; i++) {
        const char *sp = ir_special_names[i];
        if (dotted_name(sp) && strlen(sp) == n && memcmp(sp, s, n) == 0)
            return 1;
    }
    return 0;
}

/* the longest known dotted name that is a prefix of s ending at a word boundary */
static size_t match_dotted(const char *s, size_t avail)
{
    size_t best = 0;
    for (int pass = 0; pass < 2; pass++) {
        int n = pass == 0 ? (int)OP__COUNT : (int)SR__COUNT;
        for (int i = 0; i < n; i++) {
            const char *sp = pass == 0 ? ir_ops[i].spelling : ir_special_names[i];
            if (sp[0] != s[0] || !dotted_name(sp)) /* the first letter first: most words stop here */
                continue;
            size_t len = strlen(sp);
            if (len > best && len <= avail && memcmp(sp, s, len) == 0 &&
                (len == avail || !is_ident_char((unsigned char)s[len])))
                best = len;
        }
    }
    return best;
}

static int keyword(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof kw_spell / sizeof *kw_spell; i++)
        if (kw_spell[i][0] == s[0] && strlen(kw_spell[i]) == n && memcmp(kw_spell[i], s, n) == 0)
            return T_KERNEL + (int)i;
    return -1;
}

static int starts_statement(TokKind k)
{
    switch (k) {
    case T_LET: case T_VAR: case T_FOR: case T_IF: case T_STORE: case T_REG: case T_SHARED:
    case T_MBARRIER: case T_PIPELINE: case T_ROLE: case T_REFERENCE: case T_RETURN:
    case T_SYNC: case T_FENCE: case T_KERNEL: case T_TARGET: case T_ARG: case T_GRID:
    case T_WARPS: case T_WARPGROUPS: case T_ASSUME: case T_SHAPE:
        return 1;
    default:
        return 0;
    }
}

/* header clause words (also names, see fe_is_contextual) */
static int is_header_word(TokKind k)
{
    return k == T_TARGET || k == T_ARG || k == T_GRID || k == T_WARPS || k == T_WARPGROUPS ||
           k == T_ASSUME || k == T_SHAPE;
}

/* inside a kernel body: no header clause can start here */
static int in_body(const Lexer *lx)
{
    for (uint32_t i = 0; i < lx->ndelims; i++)
        if (lx->delims[i].c == '{')
            return 1;
    return 0;
}

/* A statement keyword starts a line inside ( ) or [ ]: the bracket was left
 * open. Close it here so the statement ends; the newline token remembers
 * the opener (v.i = its token index + 1) for the parser's E0106. */
static void close_unclosed(Lexer *lx, uint32_t at)
{
    uint32_t i = lx->ndelims, opener = 0;
    while (i > 0 && lx->delims[i - 1].c != '{') {
        if (!opener)
            opener = lx->delims[i - 1].tok + 1;
        i--;
    }
    lx->ndelims = i;
    Token *t = push(lx, T_NEWLINE, at, at);
    t->v.i = opener;
}

static void lex_ident(Lexer *lx)
{
    uint32_t lo = lx->pos, hi = lo;
    while (hi < lx->len && is_ident_char((unsigned char)lx->src[hi]))
        hi++;
    if (hi < lx->len && lx->src[hi] == '.') {
        size_t n = match_dotted(lx->src + lo, lx->len - lo);
        if (n > hi - lo)
            hi = lo + (uint32_t)n;
    }
    const char *s = lx->src + lo;
    size_t n = hi - lo;
    int eq_follows = hi < lx->len && lx->src[hi] == '=' && !(hi + 1 < lx->len && lx->src[hi + 1] == '=');
    if (eq_follows && n == 3 && (memcmp(s, "max", 3) == 0 || memcmp(s, "min", 3) == 0)) {
        push(lx, s[1] == 'a' ? T_MAXEQ : T_MINEQ, lo, hi + 1);
        lx->pos = hi + 1;
        return;
    }
    lx->pos = hi;
    int kw = keyword(s, n);
    if (kw >= 0 && lx->nl_pending && starts_statement((TokKind)kw) &&
        !(is_header_word((TokKind)kw) && in_body(lx)))
        close_unclosed(lx, lo);
    DType dt;
    uint8_t lanes;
    Token *t;
    if (kw >= 0) {
        t = push(lx, (TokKind)kw, lo, hi);
    } else if (ir_lookup_dtype(s, n, &dt, &lanes)) {
        t = push(lx, T_DTYPE, lo, hi);
        t->dtype = (uint8_t)dt;
        t->lanes = lanes;
    } else {
        t = push(lx, T_IDENT, lo, hi);
    }
    t->sym = ir_intern(lx->ctx, s, n);
}

/* --- numbers ------------------------------------------------------------ */

/* scans digits with `_` separators; returns 0 if a separator is misplaced */
static int scan_digits(Lexer *lx, int hex)
{
    int ok = 1, prev_us = 1;
    while (lx->pos < lx->len) {
        int c = (unsigned char)lx->src[lx->pos];
        if (c == '_') {
            if (prev_us)
                ok = 0;
            prev_us = 1;
        } else if (hex ? is_hex(c) : is_digit(c)) {
            prev_us = 0;
        } else {
            break;
        }
        lx->pos++;
    }
    return ok && !prev_us;
}

static void number_error(Lexer *lx, uint32_t lo, const char *why)
{
    Diag *d = diag_report(lx->ctx, E0102, span_of(lx, lo, lx->pos), "malformed number: %s", why);
    diag_help(lx->ctx, d, "numbers are written like `123`, `4_096`, `0x7f`, `1.0`, `.5` or `1e-6`");
}

static void lex_number(Lexer *lx)
{
    uint32_t lo = lx->pos;
    int hex = lx->src[lo] == '0' && lo + 1 < lx->len && (lx->src[lo + 1] | 0x20) == 'x';
    int isfloat = 0, ok = 1;
    const char *why = "misplaced `_`";
    if (hex) {
        lx->pos += 2;
        if (!scan_digits(lx, 1)) {
            ok = 0;
            why = "`0x` needs hex digits";
        }
    } else {
        if (lx->src[lo] != '.')
            ok = scan_digits(lx, 0);
        if (lx->pos + 1 < lx->len && lx->src[lx->pos] == '.' && is_digit((unsigned char)lx->src[lx->pos + 1])) {
            isfloat = 1;
            lx->pos++;
            ok &= scan_digits(lx, 0);
        }
        if (lx->pos < lx->len && (lx->src[lx->pos] | 0x20) == 'e') {
            uint32_t e = lx->pos + 1;
            if (e < lx->len && (lx->src[e] == '+' || lx->src[e] == '-'))
                e++;
            if (e < lx->len && is_digit((unsigned char)lx->src[e])) {
                isfloat = 1;
                lx->pos = e;
                ok &= scan_digits(lx, 0);
            }
        }
    }
    if (lx->pos < lx->len && is_ident_char((unsigned char)lx->src[lx->pos])) {
        while (lx->pos < lx->len && (is_ident_char((unsigned char)lx->src[lx->pos])))
            lx->pos++;
        ok = 0;
        why = "unexpected letters after the digits";
    }
    Token *t = push(lx, isfloat ? T_FLOAT : T_INT, lo, lx->pos);
    if (!ok) {
        number_error(lx, lo, why);
        return;
    }
    if (isfloat) {
        uint32_t n = lx->pos - lo;
        char small[64];
        char *buf = n < sizeof small ? small : arena_alloc(&lx->ctx->arena, n + 1);
        uint32_t m = 0;
        for (uint32_t i = lo; i < lx->pos; i++)
            if (lx->src[i] != '_')
                buf[m++] = lx->src[i];
        buf[m] = 0;
        t->v.f = strtod(buf, NULL);
        if (isinf(t->v.f))
            diag_report(lx->ctx, E0114, t->span, "number out of range: it overflows f64");
        return;
    }
    uint64_t v = 0;
    int over = 0;
    for (uint32_t i = lo + (hex ? 2 : 0); i < lx->pos; i++) {
        int c = (unsigned char)lx->src[i];
        if (c == '_')
            continue;
        uint64_t d = is_digit(c) ? (uint64_t)(c - '0') : (uint64_t)((c | 0x20) - 'a' + 10);
        uint64_t base = hex ? 16 : 10;
        if (v > (UINT64_C(0x7fffffffffffffff) - d) / base)
            over = 1;
        else
            v = v * base + d;
    }
    if (over) {
        Diag *d = diag_report(lx->ctx, E0114, t->span, "integer literal out of range");
        diag_help(lx->ctx, d, "integers range from 0 to 2^63-1 (9223372036854775807)");
    }
    t->v.i = (int64_t)v;
}

/* --- punctuation --------------------------------------------------------- */

static void bad_char(Lexer *lx)
{
    uint32_t lo = lx->pos;
    unsigned char c = (unsigned char)lx->src[lo];
    lx->pos++;
    if (c >= 0x80) {
        while (lx->pos < lx->len && (unsigned char)lx->src[lx->pos] >= 0x80)
            lx->pos++;
        Diag *d = diag_report(lx->ctx, E0101, span_of(lx, lo, lx->pos),
                              "non-ASCII character outside a comment");
        diag_help(lx->ctx, d, "only ASCII may appear outside comments");
    } else if (c >= 0x21 && c < 0x7f) {
        diag_report(lx->ctx, E0101, span_of(lx, lo, lx->pos), "unexpected character `%c`", c);
    } else {
        diag_report(lx->ctx, E0101, span_of(lx, lo, lx->pos), "unexpected byte 0x%02x", c);
    }
    push(lx, T_ERROR, lo, lx->pos);
}

static int lex_punct(Lexer *lx)
{
    const char *s = lx->src + lx->pos;
    uint32_t rest = lx->len - lx->pos;
    char c = s[0], c1 = rest > 1 ? s[1] : 0;
    TokKind k;
    uint32_t n = 2;
    switch (c) {
    case '(': k = T_LPAREN; n = 1; delim_push(lx, '('); break;
    case ')': k = T_RPAREN; n = 1; delim_pop(lx, '('); break;
    case '[': k = T_LBRACK; n = 1; delim_push(lx, '['); break;
    case ']': k = T_RBRACK; n = 1; delim_pop(lx, '['); break;
    case '{': k = T_LBRACE; n = 1; delim_push(lx, '{'); break;
    case '}': k = T_RBRACE; n = 1; delim_pop(lx, '{'); break;
    case ',': k = T_COMMA; n = 1; break;
    case ';': k = T_SEMI; n = 1; break;
    case ':': k = T_COLON; n = 1; break;
    case '.': if (c1 == '.') k = T_DOTDOT; else { k = T_DOT; n = 1; } break;
    case '+': if (c1 == '=') k = T_PLUSEQ; else { k = T_PLUS; n = 1; } break;
    case '-': if (c1 == '=') k = T_MINUSEQ; else { k = T_MINUS; n = 1; } break;
    case '*': if (c1 == '=') k = T_STAREQ; else { k = T_STAR; n = 1; } break;
    case '/': if (c1 == '=') k = T_SLASHEQ; else { k = T_SLASH; n = 1; } break;
    case '%': k = T_PERCENT; n = 1; break;
    case '^':
        if (c1 == 'T' && (rest < 3 || !is_ident_char((unsigned char)s[2])))
            k = T_TRANS;
        else { k = T_CARET; n = 1; }
        break;
    case '<':
        if (c1 == '-') k = T_ARROW;
        else if (c1 == '<') k = T_SHL;
        else if (c1 == '=') k = T_LE;
        else { k = T_LT; n = 1; }
        break;
    case '>':
        if (c1 == '>') k = T_SHR;
        else if (c1 == '=') k = T_GE;
        else { k = T_GT; n = 1; }
        break;
    case '=': if (c1 == '=') k = T_EQEQ; else { k = T_EQ; n = 1; } break;
    case '!': if (c1 == '=') k = T_NE; else { k = T_BANG; n = 1; } break;
    case '&': if (c1 == '&') k = T_ANDAND; else { k = T_AMP; n = 1; } break;
    case '|': if (c1 == '|') k = T_OROR; else { k = T_PIPE; n = 1; } break;
    case '~': k = T_TILDE; n = 1; break;
    default: return 0;
    }
    push(lx, k, lx->pos, lx->pos + n);
    lx->pos += n;
    return 1;
}

TokenList fe_lex(CakeCtx *ctx, uint32_t file)
{
    Lexer lx = {0};
    lx.ctx = ctx;
    lx.file = file;
    lx.src = ctx->files[file].text;
    lx.len = ctx->files[file].len;
    while (skip_space(&lx)) {
        int c = (unsigned char)lx.src[lx.pos];
        int c1 = lx.pos + 1 < lx.len ? (unsigned char)lx.src[lx.pos + 1] : 0;
        if (is_ident_start(c))
            lex_ident(&lx);
        else if (is_digit(c) || (c == '.' && is_digit(c1)))
            lex_number(&lx);
        else if (!lex_punct(&lx))
            bad_char(&lx);
    }
    if (lx.out.comment_error)
        push(&lx, T_ERROR, lx.len, lx.len);
    else
        newline(&lx, lx.len);
    push(&lx, T_EOF, lx.len, lx.len);
    return lx.out;
}
