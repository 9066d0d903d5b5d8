/* protect.c — the bug an entry point caught, as a diagnostic (protect.h). */
#include "protect.h"

void cake_bug_caught(CakeCtx *ctx)
{
    jmp_buf jb;
    jmp_buf *outer = ctx->bug_jmp;
    const char *msg = ctx->bug_msg ? ctx->bug_msg : "?";
    ctx->bug_jmp = &jb;
    if (setjmp(jb) == 0) { /* out of memory: no diagnostic, bug_msg says it */
        Diag *d = diag_report(ctx, E0005, IR_NOSPAN,
                              "internal error (a compiler bug, please report it): %s", msg);
        diag_help(ctx, d, "the kernel may be fine: this is a bug in cakec; please report it "
                          "with the input file");
    }
    ctx->bug_jmp = outer;
}
