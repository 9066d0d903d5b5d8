/* nvptx_tc.c — NVPTX emission of TIR-L's asynchronous and tensor-core
 * instructions, one helper per PTX instruction (PTX ISA 8.5 section named at
 * each). Where LLVM 19 has an intrinsic that takes registers only, it is used
 * (mma.sync for bf16 and f16 with an f32 accumulator, cp.async commit/wait
 * groups). LLVM 19 has no intrinsics for wgmma, the bulk tensor copies,
 * fence.proxy.async, mbarrier expect_tx / try_wait.parity, stmatrix or
 * setmaxnreg, so these are inline PTX. ldmatrix and cp.async have intrinsics,
 * but they take a shared pointer, 64 bits wide in NVPTX's default data layout,
 * where every shared operand here is a 32-bit address in the shared window (the
 * `r` constraint, `.shared::cta`): they stay inline PTX too. */
#include <stdio.h>
#include <string.h>
#include "nvptx_tc.h"

static void asm0(Cg *cg, const char *text)
{
    cg_asm(cg, cg->tvoid, text, "~{memory}", NULL, 0, 1);
}

/* §9.7.13.15.9 mbarrier.init */
void nv_mbar_init(Cg *cg, LLVMValueRef bar, LLVMValueRef count)
{
    LLVMValueRef a[2] = {bar, count};
    cg_asm(cg, cg->tvoid, "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r,~{memory}", a, 2, 1);
}

/* §9.7.12.4 membar/fence: fence.mbarrier_init (makes the inits visible to the
 * async proxy before the first TMA completes on them) */
void nv_mbar_fence_init(Cg *cg)
{
    asm0(cg, "fence.mbarrier_init.release.cluster;");
}

/* §9.7.13.15.12 mbarrier.arrive (.expect_tx with a byte count) */
void nv_mbar_arrive(Cg *cg, LLVMValueRef bar, LLVMValueRef tx)
{
    if (tx) {
        LLVMValueRef a[2] = {bar, tx};
        cg_asm(cg, cg->tvoid, "{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [$0], $1; }",
               "r,r,~{memory}", a, 2, 1);
        return;
    }
    cg_asm(cg, cg->tvoid, "{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [$0]; }", "r,~{memory}",
           &bar, 1, 1);
}

/* §9.7.13.15.16 mbarrier.try_wait.parity: 1 when the phase with `parity` has
 * completed (the caller loops) */
LLVMValueRef nv_mbar_try_wait(Cg *cg, LLVMValueRef bar, LLVMValueRef parity)
{
    LLVMValueRef a[2] = {bar, parity};
    LLVMValueRef r = cg_asm(cg, cg->ti32,
                            "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2; "
                            "selp.u32 $0, 1, 0, p; }",
                            "=r,r,r,~{memory}", a, 2, 1);
    return LLVMBuildICmp(cg->b, LLVMIntNE, r, cg_i32(cg, 0), "");
}

/* §9.7.9.25.3 cp.async.mbarrier.arrive.noinc: arrives when this thread's
 * earlier cp.async copies have landed (counted as one expected arrival) */
void nv_cp_mbar_arrive(Cg *cg, LLVMValueRef bar)
{
    cg_asm(cg, cg->tvoid, "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [$0];", "r,~{memory}", &bar, 1, 1);
}

/* §9.7.13.3 bar.warp.sync */
void nv_syncwarp(Cg *cg)
{
    LLVMValueRef m = cg_i32(cg, -1);
    cg_call(cg, "llvm.nvvm.bar.warp.sync", cg->tvoid, &m, 1);
}

/* §9.7.9.27.1.2 cp.async.bulk.tensor: global -> shared, completing on an
 * mbarrier with complete_tx of the box bytes; coordinates innermost first */
void nv_tma_load(Cg *cg, LLVMValueRef map, LLVMValueRef smem, LLVMValueRef bar, LLVMValueRef *c, unsigned n)
{
    char text[256], cons[64];
    LLVMValueRef a[8] = {smem, map, bar};
    int at = snprintf(text, sizeof text,
                      "cp.async.bulk.tensor.%ud.shared::cluster.global.mbarrier::complete_tx::bytes "
                      "[$0], [$1, {", n);
    for (unsigned i = 0; i < n; i++) {
        at += snprintf(text + at, sizeof text - (size_t)at, "%s$%u", i ? ", " : "", 3 + i);
        a[3 + i] = c[i];
    }
    snprintf(text + at, sizeof text - (size_t)at, "}], [$2];");
    snprintf(cons, sizeof cons, "r,l,r%s,~{memory}", n == 1 ? ",r" : n == 2 ? ",r,r" : n == 3 ? ",r,r,r"
                                                     : n == 4 ? ",r,r,r,r" : ",r,r,r,r,r");
    cg_asm(cg, cg->tvoid, text, cons, a, 3 + n, 1);
}

/* §9.7.9.15 prefetch.tensormap: the descriptor at a generic address (the
 * __grid_constant__ parameter's) into the cache the bulk tensor copies read it from */
void nv_tmap_prefetch(Cg *cg, LLVMValueRef map)
{
    cg_asm(cg, cg->tvoid, "prefetch.tensormap [$0];", "l,~{memory}", &map, 1, 1);
}

/* §9.7.9.27.1.2 cp.async.bulk.tensor: shared -> global, one bulk group; with add,
 * §9.7.9.27.1.3 cp.reduce.async.bulk.tensor .add: the box is added to global memory
 * element by element (atomically per element, in the L2) */
void nv_tma_store(Cg *cg, LLVMValueRef map, LLVMValueRef smem, LLVMValueRef *c, unsigned n, int add)
{
    char text[256], cons[64];
    LLVMValueRef a[8] = {map, smem};
    int at = add ? snprintf(text, sizeof text,
                            "cp.reduce.async.bulk.tensor.%ud.global.shared::cta.add.tile.bulk_group [$0, {", n)
                 : snprintf(text, sizeof text, "cp.async.bulk.tensor.%ud.global.shared::cta.bulk_group [$0, {", n);
    for (unsigned i = 0; i < n; i++) {
        at += snprintf(text + at, sizeof text - (size_t)at, "%s$%u", i ? ", " : "", 2 + i);
        a[2 + i] = c[i];
    }
    snprintf(text + at, sizeof text - (size_t)at, "}], [$1];");
    snprintf(cons, sizeof cons, "l,r%s,~{memory}", n == 1 ? ",r" : n == 2 ? ",r,r" : n == 3 ? ",r,r,r"
                                                  : n == 4 ? ",r,r,r,r" : ",r,r,r,r,r");
    cg_asm(cg, cg->tvoid, text, cons, a, 2 + n, 1);
}

/* §9.7.9.27.2 cp.async.bulk.commit_group / wait_group.read */
void nv_bulk_commit(Cg *cg)
{
    asm0(cg, "cp.async.bulk.commit_group;");
}

void nv_bulk_wait(Cg *cg, int n)
{
    char text[64];
    snprintf(text, sizeof text, "cp.async.bulk.wait_group.read %d;", n);
    asm0(cg, text);
}

/* §9.7.12.4 fence.proxy.async: generic-proxy writes of this thread become
 * visible to the async proxy (TMA, wgmma) */
void nv_fence_proxy(Cg *cg)
{
    asm0(cg, "fence.proxy.async.shared::cta;");
}

/* §9.7.15.6 wgmma.fence / commit_group / wait_group */
void nv_wg_fence(Cg *cg)
{
    asm0(cg, "wgmma.fence.sync.aligned;");
}

void nv_wg_commit(Cg *cg)
{
    asm0(cg, "wgmma.commit_group.sync.aligned;");
}

void nv_wg_wait(Cg *cg, int n)
{
    char text[64];
    snprintf(text, sizeof text, "wgmma.wait_group.sync.aligned %d;", n);
    asm0(cg, text);
}

static const char *ptx_type(DType dt)
{
    switch (dt) {
    case DT_BF16: return "bf16";
    case DT_F16: return "f16";
    case DT_F32: return "f32";
    case DT_TF32: return "tf32";
    case DT_E4M3: return "e4m3";
    case DT_E5M2: return "e5m2";
    case DT_I8: return "s8";
    case DT_U8: return "u8";
    case DT_I32: return "s32";
    default: return "?";
    }
}

/* appends "{$first, ..., $(first+n-1)}" */
static int reg_list(char *buf, size_t size, unsigned first, unsigned n)
{
    int at = snprintf(buf, size, "{");
    for (unsigned i = 0; i < n; i++)
        at += snprintf(buf + at, size - (size_t)at, "%s$%u", i ? ", " : "", first + i);
    at += snprintf(buf + at, size - (size_t)at, "}");
    return at;
}

/* §9.7.15.5 wgmma.mma_async: D (nd f32 registers, in and out) += A * B; A from
 * a shared-memory descriptor or from registers, B from a descriptor. Scale-d
 * (a predicate operand, here an immediate) is 1, accumulate, or 0 when t.fresh:
 * D = A * B, the input registers unread; the immediate scales are 1; the
 * transpose bits select MN-major shared operands. */
void nv_wgmma(Cg *cg, IrTc t, LLVMValueRef da, LLVMValueRef db, LLVMValueRef *a, unsigned na,
              LLVMValueRef *d, unsigned nd)
{
    size_t size = 8192;
    char *text = arena_alloc(&cg->ctx->arena, size), *cons = arena_alloc(&cg->ctx->arena, size);
    DType bdt = t.b_dt ? (DType)t.b_dt : (DType)t.ab;
    int at = snprintf(text, size, "wgmma.mma_async.sync.aligned.m%un%uk%u.%s.%s.%s ", t.m, t.n, t.k,
                      ptx_type((DType)t.acc), ptx_type((DType)t.ab), ptx_type(bdt));
    at += reg_list(text + at, size - (size_t)at, 0, nd);
    unsigned in = nd; /* inputs after the outputs */
    int16_t bits = ir_dtype_bytes((DType)t.ab) == 2; /* transposes exist for 16-bit inputs only */
    if (a) {
        at += snprintf(text + at, size - (size_t)at, ", ");
        at += reg_list(text + at, size - (size_t)at, in, na);
        at += snprintf(text + at, size - (size_t)at, ", $%u, %d, 1, 1%s;", in + na, !t.fresh,
                       bits ? (t.tnsp_b ? ", 1" : ", 0") : "");
    } else {
        at += snprintf(text + at, size - (size_t)at, ", $%u, $%u, %d, 1, 1%s;", in, in + 1, !t.fresh,
                       bits ? (t.tnsp_a ? (t.tnsp_b ? ", 1, 1" : ", 1, 0") : (t.tnsp_b ? ", 0, 1" : ", 0, 0")) : "");
    }
    /* constraints: outputs =f (=r for f16x2 / s32), inputs: A regs, descs, then the tied accumulators */
    const char *oc = t.acc == DT_F32 ? "=f" : "=r";
    int cat = 0;
    for (unsigned i = 0; i < nd; i++)
        cat += snprintf(cons + cat, size - (size_t)cat, "%s%s", i ? "," : "", oc);
    unsigned nin = (a ? na + 1 : 2) + nd;
    LLVMValueRef *args = arena_alloc(&cg->ctx->arena, nin * sizeof *args);
    unsigned k = 0;
    if (a) {
        for (unsigned i = 0; i < na; i++) {
            args[k++] = a[i];
            cat += snprintf(cons + cat, size - (size_t)cat, ",r");
        }
        args[k++] = db;
        cat += snprintf(cons + cat, size - (size_t)cat, ",l");
    } else {
        args[k++] = da;
        args[k++] = db;
        cat += snprintf(cons + cat, size - (size_t)cat, ",l,l");
    }
    for (unsigned i = 0; i < nd; i++) {
        args[k++] = d[i];
        cat += snprintf(cons + cat, size - (size_t)cat, ",%u", i);
    }
    snprintf(cons + cat, size - (size_t)cat, ",~{memory}");
    LLVMTypeRef *fields = arena_alloc(&cg->ctx->arena, nd * sizeof *fields);
    for (unsigned i = 0; i < nd; i++)
        fields[i] = LLVMTypeOf(d[i]);
    LLVMTypeRef st = LLVMStructTypeInContext(cg->lc, fields, nd, 0);
    LLVMValueRef r = cg_asm(cg, st, text, cons, args, k, 1);
    for (unsigned i = 0; i < nd; i++)
        d[i] = LLVMBuildExtractValue(cg->b, r, i, "");
}

/* the LLVM intrinsic for mma.sync of shape t, or NULL where there is none
 * (IntrinsicsNVVM.td: bf16 and f16 A/B with f32 C/D, m16n8k8 and m16n8k16) */
static const char *mma_intrinsic(IrTc t, int *half_ab)
{
    DType bdt = t.b_dt ? (DType)t.b_dt : (DType)t.ab;
    *half_ab = t.ab == DT_F16;
    if (t.m != 16 || t.n != 8 || (t.k != 8 && t.k != 16) || t.acc != DT_F32 || bdt != t.ab)
        return NULL;
    if (t.ab == DT_BF16)
        return t.k == 16 ? "llvm.nvvm.mma.m16n8k16.row.col.bf16" : "llvm.nvvm.mma.m16n8k8.row.col.bf16";
    if (t.ab == DT_F16)
        return t.k == 16 ? "llvm.nvvm.mma.m16n8k16.row.col.f32.f32" : "llvm.nvvm.mma.m16n8k8.row.col.f32.f32";
    return NULL;
}

/* mma.sync through its intrinsic: A and B registers (i32, or <2 x half> for
 * f16), then C; the result struct is D */
static int mma_by_intrinsic(Cg *cg, IrTc t, LLVMValueRef *a, unsigned na, LLVMValueRef *b, unsigned nb,
                            LLVMValueRef *d, unsigned nd)
{
    int half_ab;
    const char *name = mma_intrinsic(t, &half_ab);
    if (!name || na + nb + nd > 24 || nd > 8)
        return 0;
    LLVMTypeRef h2 = LLVMVectorType(LLVMHalfTypeInContext(cg->lc), 2);
    LLVMValueRef args[24];
    unsigned k = 0;
    for (unsigned i = 0; i < na + nb; i++, k++) {
        LLVMValueRef x = i < na ? a[i] : b[i - na];
        args[k] = half_ab ? LLVMBuildBitCast(cg->b, x, h2, "") : x;
    }
    LLVMTypeRef fields[8];
    for (unsigned i = 0; i < nd; i++, k++) {
        args[k] = d[i];
        fields[i] = LLVMTypeOf(d[i]);
    }
    LLVMTypeRef st = LLVMStructTypeInContext(cg->lc, fields, nd, 0);
    LLVMValueRef r = cg_call(cg, name, st, args, k);
    for (unsigned i = 0; i < nd; i++)
        d[i] = LLVMBuildExtractValue(cg->b, r, i, "");
    return 1;
}

/* §9.7.14.5 mma.sync.aligned (row.col): D += A * B, warp-collective; inline PTX
 * for the shapes LLVM 19 has no intrinsic for (fp8, tf32, integer, f16 C/D) */
void nv_mma(Cg *cg, IrTc t, LLVMValueRef *a, unsigned na, LLVMValueRef *b, unsigned nb,
            LLVMValueRef *d, unsigned nd)
{
    if (mma_by_intrinsic(cg, t, a, na, b, nb, d, nd))
        return;
    char text[512], cons[256];
    DType bdt = t.b_dt ? (DType)t.b_dt : (DType)t.ab;
    int at = snprintf(text, sizeof text, "mma.sync.aligned.m%un%uk%u.row.col.%s.%s.%s.%s ", t.m, t.n, t.k,
                      ptx_type((DType)t.acc), ptx_type((DType)t.ab), ptx_type(bdt), ptx_type((DType)t.acc));
    at += reg_list(text + at, sizeof text - (size_t)at, 0, nd);
    at += snprintf(text + at, sizeof text - (size_t)at, ", ");
    at += reg_list(text + at, sizeof text - (size_t)at, nd, na);
    at += snprintf(text + at, sizeof text - (size_t)at, ", ");
    at += reg_list(text + at, sizeof text - (size_t)at, nd + na, nb);
    at += snprintf(text + at, sizeof text - (size_t)at, ", ");
    reg_list(text + at, sizeof text - (size_t)at, nd + na + nb, nd);
    strncat(text, ";", sizeof text - strlen(text) - 1);
    const char *oc = t.acc == DT_F32 ? "=f" : "=r";
    int cat = 0;
    for (unsigned i = 0; i < nd; i++)
        cat += snprintf(cons + cat, sizeof cons - (size_t)cat, "%s%s", i ? "," : "", oc);
    LLVMValueRef args[24];
    unsigned k = 0;
    for (unsigned i = 0; i < na; i++, k++) {
        args[k] = a[i];
        cat += snprintf(cons + cat, sizeof cons - (size_t)cat, ",r");
    }
    for (unsigned i = 0; i < nb; i++, k++) {
        args[k] = b[i];
        cat += snprintf(cons + cat, sizeof cons - (size_t)cat, ",r");
    }
    for (unsigned i = 0; i < nd; i++, k++) {
        args[k] = d[i];
        cat += snprintf(cons + cat, sizeof cons - (size_t)cat, ",%u", i);
    }
    LLVMTypeRef fields[8];
    for (unsigned i = 0; i < nd; i++)
        fields[i] = LLVMTypeOf(d[i]);
    LLVMTypeRef st = LLVMStructTypeInContext(cg->lc, fields, nd, 0);
    LLVMValueRef r = cg_asm(cg, st, text, cons, args, k, 0);
    for (unsigned i = 0; i < nd; i++)
        d[i] = LLVMBuildExtractValue(cg->b, r, i, "");
}

/* §9.7.9.26 ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16 */
void nv_ldmatrix(Cg *cg, int n, int trans, LLVMValueRef addr, LLVMValueRef *out)
{
    char text[160], cons[64];
    int at = snprintf(text, sizeof text, "ldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 ", n, trans ? ".trans" : "");
    at += reg_list(text + at, sizeof text - (size_t)at, 0, (unsigned)n);
    snprintf(text + at, sizeof text - (size_t)at, ", [$%d];", n);
    snprintf(cons, sizeof cons, "%s,r,~{memory}", n == 1 ? "=r" : n == 2 ? "=r,=r" : "=r,=r,=r,=r");
    LLVMTypeRef fields[4] = {cg->ti32, cg->ti32, cg->ti32, cg->ti32};
    LLVMTypeRef st = LLVMStructTypeInContext(cg->lc, fields, (unsigned)n, 0);
    LLVMValueRef r = cg_asm(cg, st, text, cons, &addr, 1, 1);
    for (int i = 0; i < n; i++)
        out[i] = n == 1 ? r : LLVMBuildExtractValue(cg->b, r, (unsigned)i, "");
}

/* §9.7.9.28 stmatrix.sync.aligned.m8n8.xN[.trans].shared.b16 */
void nv_stmatrix(Cg *cg, int n, int trans, LLVMValueRef addr, LLVMValueRef *in)
{
    char text[160], cons[64];
    int at = snprintf(text, sizeof text, "stmatrix.sync.aligned.m8n8.x%d%s.shared.b16 [$0], ", n, trans ? ".trans" : "");
    reg_list(text + at, sizeof text - (size_t)at, 1, (unsigned)n);
    strncat(text, ";", sizeof text - strlen(text) - 1);
    snprintf(cons, sizeof cons, "r,%s,~{memory}", n == 1 ? "r" : n == 2 ? "r,r" : "r,r,r,r");
    LLVMValueRef a[5] = {addr, in[0], n > 1 ? in[1] : NULL, n > 2 ? in[2] : NULL, n > 2 ? in[3] : NULL};
    cg_asm(cg, cg->tvoid, text, cons, a, 1 + (unsigned)n, 1);
}

/* §9.7.17.1 setmaxnreg */
void nv_setmaxnreg(Cg *cg, int inc, int regs)
{
    char text[64];
    snprintf(text, sizeof text, "setmaxnreg.%s.sync.aligned.u32 %d;", inc ? "inc" : "dec", regs);
    asm0(cg, text);
}

/* §9.7.9.25.3 cp.async (16 bytes: .cg, L1 bypass; 4 and 8: .ca); a false
 * mask reads nothing and zero-fills (src-size 0) */
void nv_cp_async(Cg *cg, LLVMValueRef dst, LLVMValueRef src, int bytes, LLVMValueRef ok)
{
    char text[128];
    snprintf(text, sizeof text, "cp.async.%s.shared.global [$0], [$1], %d, $2;", bytes == 16 ? "cg" : "ca", bytes);
    LLVMValueRef size = ok ? LLVMBuildSelect(cg->b, ok, cg_i32(cg, bytes), cg_i32(cg, 0), "") : cg_i32(cg, bytes);
    LLVMValueRef a[3] = {dst, src, size};
    cg_asm(cg, cg->tvoid, text, "r,l,r,~{memory}", a, 3, 1);
}

/* §9.7.9.25.4 cp.async.commit_group / wait_group (intrinsics) */
void nv_cp_commit(Cg *cg)
{
    cg_call(cg, "llvm.nvvm.cp.async.commit.group", cg->tvoid, NULL, 0);
}

void nv_cp_wait(Cg *cg, int n)
{
    LLVMValueRef a[1] = {cg_i32(cg, n)};
    cg_call(cg, "llvm.nvvm.cp.async.wait.group", cg->tvoid, a, 1);
}
