/* lexer.h — TIR tokens (docs/tir.md section 1). The whole file is lexed at
 * once into an array of tokens; newlines appear as T_NEWLINE only where they
 * end a statement. */
#ifndef CAKE_LEXER_H
#define CAKE_LEXER_H
#include "ir.h"

/* punctuation: TOK(id, spelling) */
#define FE_PUNCTS(X) \
    X(LPAREN, "(") X(RPAREN, ")") X(LBRACK, "[") X(RBRACK, "]") X(LBRACE, "{") \
    X(RBRACE, "}") X(COMMA, ",") X(SEMI, ";") X(COLON, ":") X(DOT, ".") \
    X(DOTDOT, "..") X(ARROW, "<-") X(TRANS, "^T") X(PLUS, "+") X(MINUS, "-") \
    X(STAR, "*") X(SLASH, "/") X(PERCENT, "%") X(CARET, "^") X(SHL, "<<") \
    X(SHR, ">>") X(AMP, "&") X(PIPE, "|") X(TILDE, "~") X(BANG, "!") X(LT, "<") \
    X(LE, "<=") X(GT, ">") X(GE, ">=") X(EQEQ, "==") X(NE, "!=") X(ANDAND, "&&") \
    X(OROR, "||") X(EQ, "=") X(PLUSEQ, "+=") X(MINUSEQ, "-=") X(STAREQ, "*=") \
    X(SLASHEQ, "/=") X(MAXEQ, "max=") X(MINEQ, "min=")

/* reserved words: KW(id, spelling) */
#define FE_KEYWORDS(X) \
    X(KERNEL, "kernel") X(TARGET, "target") X(ARG, "arg") X(GRID, "grid") \
    X(THREADS, "threads") X(WARPS, "warps") X(WARPGROUPS, "warpgroups") \
    X(ASSUME, "assume") X(SHAPE, "shape") X(REFERENCE, "reference") X(LET, "let") \
    X(VAR, "var") X(SHARED, "shared") X(REG, "reg") X(MBARRIER, "mbarrier") \
    X(PIPELINE, "pipeline") X(ROLE, "role") X(FOR, "for") X(IN, "in") X(STEP, "step") \
    X(UNROLL, "unroll") X(NOHOIST, "nohoist") X(FRESH, "fresh") X(IF, "if") X(ELSE, "else") X(STORE, "store") X(LOAD, "load") \
    X(AS, "as") X(MASK, "mask") X(ON, "on") X(FROM, "from") X(TO, "to") \
    X(STAGES, "stages") X(COUNT, "count") X(REGS, "regs") X(SWIZZLE, "swizzle") \
    X(LAYOUT, "layout") X(SCOPE, "scope") X(ALIGN, "align") X(STRIDES, "strides") \
    X(GLOBAL, "global") X(TRUE, "true") X(FALSE, "false") X(INF, "inf") X(NAN, "nan") \
    X(RETURN, "return") X(SYNC, "sync") X(FENCE, "fence")

typedef enum {
    T_EOF, T_NEWLINE, T_ERROR, T_IDENT, T_INT, T_FLOAT, T_DTYPE,
#define X(id, sp) T_##id,
    FE_PUNCTS(X)
    FE_KEYWORDS(X)
#undef X
    T__COUNT
} TokKind;

typedef struct {
    uint8_t kind;       /* TokKind */
    uint8_t dtype;      /* T_DTYPE */
    uint8_t lanes;      /* T_DTYPE */
    uint8_t pad;
    Span span;
    Sym sym;            /* T_IDENT (dotted builtins included), keywords, T_DTYPE */
    union { int64_t i; double f; } v;
} Token;

typedef struct {
    Token *toks; uint32_t ntoks;
    int comment_error;  /* an unterminated block comment swallowed the rest */
} TokenList;

/* Lexes source file `file` of ctx; reports E0101-E0103, E0114. */
TokenList fe_lex(CakeCtx *ctx, uint32_t file);
const char *fe_tok_name(TokKind k);          /* "`(`", "identifier", ... */
int fe_is_dotted_builtin(const char *s, size_t n);

#endif
