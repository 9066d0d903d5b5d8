/* parser.h — internals shared by the parser files (parser.c: tokens, errors,
 * recovery, the file and kernel header; parser_stmt.c: items and statements;
 * parser_expr.c: expressions, references, types). Not a public header. */
#ifndef CAKE_PARSER_H
#define CAKE_PARSER_H
#include "fe.h"
#include "lexer.h"

typedef struct {
    CakeCtx *ctx;
    uint32_t file;
    Token *toks; uint32_t ntoks, pos;
    Kernel *k;
    int panic;          /* an error was reported; quiet until resynchronized */
    int comment_error;  /* the lexer swallowed the rest of the file */
    NodeId *stk; uint32_t nstk, capstk;   /* scratch stack for operand lists */
    int in_ref;         /* inside the reference block */
    uint32_t depth;
    int store_value;    /* parsing the value of `store ... <- v`: a bare `mask` belongs to the store */
    uint32_t nops;      /* binary operators in the current statement (bounded) */     /* recursion depth, bounded by fe_enter */
} Parser;

enum { BLK_KERNEL, BLK_NESTED, BLK_REFERENCE, BLK_ROLE };

/* parser.c */
Token *fe_peek(Parser *p);
Token *fe_peek_at(Parser *p, uint32_t ahead);
Token *fe_prev(Parser *p);
Token *fe_advance(Parser *p);
int fe_check(Parser *p, TokKind k);
int fe_accept(Parser *p, TokKind k);
int fe_enter(Parser *p);
int fe_expect(Parser *p, TokKind k, const char *context);
int fe_is_contextual(TokKind k);
int fe_as_name(Token *t);
int fe_expect_close(Parser *p, TokKind k, const Token *open);
Diag *fe_error(Parser *p, DiagCode code, Span span, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
Diag *fe_error_here(Parser *p, DiagCode code, const char *what);
const char *fe_describe(Parser *p, const Token *t);
NodeId fe_node(Parser *p, Op op, Span span);
void fe_finish(Parser *p, NodeId id, uint32_t lo);
uint32_t fe_mark(Parser *p);
void fe_push(Parser *p, NodeId id);
void fe_pop_list(Parser *p, uint32_t mark, NodeId id);
uint32_t fe_line(Parser *p, uint32_t offset);
const char *fe_suggest(const char *name, const char *const *cands, uint32_t n);
int fe_edit_distance(const char *a, const char *b);

/* parser_expr.c */
NodeId fe_expr(Parser *p);
NodeId fe_expr_prec(Parser *p, int minprec);
NodeId fe_unary(Parser *p);
NodeId fe_ref(Parser *p);
NodeId fe_type(Parser *p, int need_dims);
int fe_dtype(Parser *p, uint8_t *dt, uint8_t *lanes);
int fe_int_lit(Parser *p, int64_t *v, int64_t max, const char *what);
NodeId fe_index_list(Parser *p, NodeId base);
uint32_t fe_expr_list(Parser *p, TokKind close, const Token *open);
int fe_starts_expr(TokKind k);

/* parser_stmt.c */
NodeId fe_block(Parser *p, int kind);

#endif
