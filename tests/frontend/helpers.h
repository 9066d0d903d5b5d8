/* helpers.h — shared by the frontend unit tests: parse a string, find nodes. */
#ifndef CAKE_TEST_HELPERS_H
#define CAKE_TEST_HELPERS_H
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "fe.h"

/* a minimal kernel header around a body */
#define KHEAD "kernel k<P = 2>\n  arg x: global f32[M, N]\n  arg s: f32\n  grid [M]\n  threads 128\n{\n"

static inline Module *parse_str(CakeCtx *ctx, const char *src)
{
    uint32_t f = ctx_add_file(ctx, "t.tir", src, (uint32_t)strlen(src));
    return fe_parse(ctx, f);
}

/* the first node with op `op` after node `from` */
static inline NodeId find_op(const Kernel *k, Op op, NodeId from)
{
    for (NodeId i = from + 1; i < k->nnodes; i++)
        if (k->nodes[i].op == op)
            return i;
    return 0;
}

/* the text a span covers */
static inline char *span_text(const CakeCtx *ctx, Span s)
{
    static char buf[256];
    size_t n = s.hi - s.lo;
    if (n >= sizeof buf)
        n = sizeof buf - 1;
    memcpy(buf, ctx->files[s.file].text + s.lo, n);
    buf[n] = 0;
    return buf;
}

static inline char *print_str(const CakeCtx *ctx, const Module *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ir_print_module(ctx, m, f);
    fclose(f);
    return buf;
}

static inline int first_code(const CakeCtx *ctx, const char *code)
{
    for (uint32_t i = 0; i < ctx->ndiags; i++)
        if (!strcmp(ir_diag_info[ctx->diags[i].code].code, code))
            return 1;
    return 0;
}
#endif
