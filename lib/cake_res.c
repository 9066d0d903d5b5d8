/* cake_res.c — what the PTX assembler gave each compiled kernel: registers,
 * spills and local memory (runtime/ptxinfo.c: nvJitLink or ptxas, no GPU),
 * and the warnings they call for: W0901 when a kernel spills, W0902 when a
 * role's `regs` budget is not what the kernel got. */
#include <string.h>
#include "cake_priv.h"
#include "targets.h"


/* the roles' register budgets: the lowered kernel's setmaxnreg statements (passes/roles.c) */
static void role_warnings(CakeCtx *ctx, Kernel *k, const RtPtxRes *r)
{
    uint32_t cap = k->plan ? k->plan->maxnreg : 0;
    int spills = r->spill_store_bytes + r->spill_load_bytes > 0;
    for (NodeId i = 1; i < k->nnodes; i++) {
        const Node *n = &k->nodes[i];
        if (n->op != OP_L_SETMAXNREG)
            continue;
        int inc = n->sub, regs = (int)n->v.i;
        if (cap && (uint32_t)r->regs != cap && !r->separate) {
            Diag *d = diag_report(ctx, W0902, n->span, "role register budget %d: the kernel got %d "
                                  "registers at entry, not the %u the roles' budgets assume",
                                  regs, r->regs, cap);
            diag_help(ctx, d, "the setmaxnreg steps are computed from %u; report this with the "
                              "kernel (ptxas did not honour .maxnreg)", cap);
        } else if (inc && spills && r->separate) {
            Diag *d = diag_report(ctx, W0902, n->span, "role budget of %d registers, but kernel `%s` "
                                  "spills %d bytes: the assembler ignored setmaxnreg (a separate "
                                  "unit), so its code was allocated within %d registers",
                                  regs, ir_symstr(ctx, k->name), r->spill_store_bytes, r->regs);
            diag_help(ctx, d, "assemble it with ptxas (CAKE_PTXAS) for the roles' own budgets");
        } else if (inc && spills) {
            /* ptxas allocates the code after setmaxnreg.inc within the raised budget, not
             * within the entry count it reports (tests/codegen/test_setmaxnreg_budget.sh:
             * the spills shrink as the budget grows), so such a role needs more than `regs` */
            Diag *d = diag_report(ctx, W0902, n->span, "role budget of %d registers, and kernel `%s` "
                                  "still spills %d bytes: ptxas allocated the role's code within its "
                                  "%d (the %d it reports is the entry count), and it needs more",
                                  regs, ir_symstr(ctx, k->name), r->spill_store_bytes, regs, r->regs);
            diag_help(ctx, d, "keep fewer values live in this role (smaller tiles, fewer stages "
                              "of registers, fewer per-thread values hoisted out of its loops), "
                              "or move registers to it from the other roles");
        }
    }
}

static int report(CakeCtx *ctx, Module *m, Target tg, const char *ptx, size_t len,
                  RtPtxRes *res, int max, const char **tool)
{
    *tool = NULL;
    if (tg_vendor(tg) != VENDOR_NVIDIA || !tg_info(tg)->llvm_cpu)
        return 0;
    int n = rt_ptx_resources(ptx, len, tg_info(tg)->llvm_cpu, res, max, tool);
    if (n < 0) {
        *tool = NULL;
        return 0;
    }
    for (int i = 0; i < n; i++) {
        Kernel *k = lib_kernel(ctx, m, res[i].name, TG__COUNT);
        if (!k)
            continue;
        if (res[i].spill_store_bytes + res[i].spill_load_bytes > 0) {
            Diag *d = diag_report(ctx, W0901, k->span, "kernel `%s` spills to local memory on %s: %d bytes "
                                  "of spill stores, %d of spill loads, a %d-byte stack frame, %d "
                                  "registers (%s)", res[i].name, ir_target_names[tg],
                                  res[i].spill_store_bytes, res[i].spill_load_bytes,
                                  res[i].stack_bytes, res[i].regs, *tool);
            diag_help(ctx, d, "every spill is a round trip to local memory (L1, then HBM): keep fewer "
                              "values live, or give the kernel more registers (fewer threads, a larger "
                              "role `regs`)");
        }
        role_warnings(ctx, k, &res[i]);
    }
    return n;
}

int cake_ptx_report(CakeCtx *ctx, Module *m, Target tg, const char *ptx, size_t len,
                    RtPtxRes *res, int max, int *n, const char **tool)
{
    int rc;
    *n = 0;
    *tool = NULL;
    CAKE_PROTECTED_OR(ctx, rc, report(ctx, m, tg, ptx, len, res, max, tool), -1);
    if (rc < 0)
        return 2;
    *n = rc;
    return 0;
}
