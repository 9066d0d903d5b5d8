/* protect.h — how libcake's entry points catch compiler bugs, the way Lua's
 * protected calls do: an internal error unwinds to the entry point and
 * becomes a status, never an exit in the caller's process.
 *
 * ir_bug (ir/ctx.c) longjmps to ctx->bug_jmp when it is set. Every cake_*
 * entry point runs its body through CAKE_PROTECTED:
 *
 *     int cake_compile_file(CakeCtx *ctx, ...)
 *     {
 *         int rc;
 *         CAKE_PROTECTED(ctx, rc, compile_file(ctx, ...));
 *         return rc;
 *     }
 *
 * which points bug_jmp at its own frame for the call and gives the caller's
 * back after it. A bug anywhere below unwinds there; cake_bug_caught records
 * it (E0005, with ctx->bug_msg) and rc becomes 2. Entry points may call each
 * other: the innermost one catches. The compilation's memory is the arena, so
 * unwinding loses nothing that ctx_free does not free; code that holds malloc'd
 * state across calls that may fail (codegen's LLVM objects) catches the bug
 * itself, frees, and returns 2. The driver guards its own code the same way
 * (CAKE_PROTECTED_OR: a bug there still has a JSON document to print). */
#ifndef CAKE_PROTECT_H
#define CAKE_PROTECT_H
#include "ir.h"

#define CAKE_PROTECTED(ctx, rc, call) CAKE_PROTECTED_OR(ctx, rc, call, 2)

/* the same with another value than 2 for rc after a bug */
#define CAKE_PROTECTED_OR(ctx, rc, call, bug_rc)       \
    do {                                               \
        jmp_buf cake_jb_;                              \
        jmp_buf *cake_outer_ = (ctx)->bug_jmp;         \
        (ctx)->bug_jmp = &cake_jb_;                    \
        if (setjmp(cake_jb_) == 0) {                   \
            (rc) = (call);                             \
        } else {                                       \
            (ctx)->bug_jmp = cake_outer_;              \
            cake_bug_caught(ctx);                      \
            (rc) = (bug_rc);                           \
        }                                              \
        (ctx)->bug_jmp = cake_outer_;                  \
    } while (0)

/* Records the bug ir_bug just raised (ctx->bug_msg) as diagnostic E0005. */
void cake_bug_caught(CakeCtx *ctx);

#endif
