/* fuzz_lower.c — libFuzzer entry for the lowering passes: whatever `cakec
 * check` accepts goes through pass_run_all (legalize .. abi, unsupported) for
 * the first target of each kernel, with the lowered-level checker on, and is
 * printed as TIR-L. A crash, a leak, undefined behaviour or an internal error
 * (a pass or lcheck calling ir_bug) is a finding; user errors (E0902 for what
 * has no lowering) are not. No LLVM: code generation is not reached. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include "cake.h"
#include "passes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    CakeCtx *ctx = ctx_new();
    ctx->lcheck = 1;
    uint32_t file = ctx_add_file(ctx, "fuzz.tir", (const char *)data, (uint32_t)size);
    Module *m;
    int rc = cake_verify_source(ctx, file, "verify", &m);
    if (rc == 2) {
        fprintf(stderr, "fuzz_lower: internal error in check: %s\n", ctx->bug_msg);
        abort();
    }
    if (rc == 0 && !ctx->nerrors) {
        jmp_buf jb;
        ctx->bug_jmp = &jb;
        if (setjmp(jb)) {
            fprintf(stderr, "fuzz_lower: internal error in the passes: %s\n", ctx->bug_msg);
            abort();
        }
        for (uint32_t i = 0; i < m->nkernels; i++) {
            Kernel *k = m->kernels[i];
            Target tg = TG_SM90A;
            for (int t = 0; t < TG__COUNT; t++)
                if (k->targets[t]) {
                    tg = (Target)t;
                    break;
                }
            if (tg == TG_SM100A)
                continue;
            if (!pass_run_all(ctx, m, k, tg, NULL)) {
                FILE *null = fopen("/dev/null", "w");
                if (null) {
                    ir_print_kernel(ctx, k, null);
                    fclose(null);
                }
            }
        }
        ctx->bug_jmp = NULL;
    }
    ctx_free(ctx);
    return 0;
}
