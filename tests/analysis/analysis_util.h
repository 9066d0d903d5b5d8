/* analysis_util.h — helpers shared by the unit tests of analysis/: a kernel
 * parsed and resolved from a string (the fixture of a test file), and the
 * initializer of a `let` by name (the expression a test evaluates). */
#ifndef ANALYSIS_UTIL_H
#define ANALYSIS_UTIL_H
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "fe.h"

/* the first kernel of src, parsed and resolved into ctx (its module at *m);
 * fails the test on front-end errors */
static inline Kernel *parse_resolved(CakeCtx *ctx, const char *src, Module **m)
{
    uint32_t file = ctx_add_file(ctx, "t.tir", src, (uint32_t)strlen(src));
    *m = fe_parse(ctx, file);
    fe_resolve(ctx, *m);
    assert_int_equal(ctx->nerrors, 0);
    return (*m)->kernels[0];
}

/* the initializer of the let named `name` in k */
static inline NodeId let_init(CakeCtx *ctx, const Kernel *k, const char *name)
{
    Sym s = ir_intern_cstr(ctx, name);
    for (NodeId n = 1; n < k->nnodes; n++)
        if (k->nodes[n].op == OP_LET && k->nodes[n].name == s)
            return k->nodes[n].b;
    fail_msg("no let %s", name);
    return 0;
}

#endif
