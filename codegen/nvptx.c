/* nvptx.c — the NVPTX hooks: sm_80 / sm_90a, PTX ISA 8.5, kernels marked
 * through nvvm.annotations (kernel + reqntid), special registers, barriers,
 * shuffles and math through NVVM intrinsics (no libdevice). */
#include <stdlib.h>
#include <string.h>
#include "cg_int.h"
#include "nvptx_tc.h"

static LLVMValueRef sreg(Cg *cg, const char *name)
{
    return cg_call(cg, name, cg->ti32, NULL, 0);
}

static LLVMValueRef nv_tid_x(Cg *cg)
{
    return sreg(cg, "llvm.nvvm.read.ptx.sreg.tid.x");
}

/* thread.x through an asm LLVM cannot hoist: an element's coordinates in a register tile
 * (thread part + a constant per element) would otherwise become one loop-invariant
 * register per element across the loop (64 per thread in a 64 x 128 wgmma tile) */
static LLVMValueRef nv_tid_x_fresh(Cg *cg)
{
    const char *e = getenv("CAKE_FRESH");   /* 1: plain asm; se: volatile; conv: convergent */
    LLVMValueRef v = cg_asm(cg, cg->ti32, "mov.u32 $0, %tid.x;", "=r", NULL, 0, e && !strcmp(e, "se"));
    if (e && !strcmp(e, "conv")) {
        unsigned kind = LLVMGetEnumAttributeKindForName("convergent", 10);
        LLVMAddCallSiteAttribute(v, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cg->lc, kind, 0));
    }
    return v;
}

static LLVMValueRef nv_ctaid(Cg *cg, int dim)
{
    static const char *const n[3] = {"llvm.nvvm.read.ptx.sreg.ctaid.x",
                                     "llvm.nvvm.read.ptx.sreg.ctaid.y",
                                     "llvm.nvvm.read.ptx.sreg.ctaid.z"};
    return sreg(cg, n[dim]);
}

static LLVMValueRef nv_nctaid(Cg *cg, int dim)
{
    static const char *const n[3] = {"llvm.nvvm.read.ptx.sreg.nctaid.x",
                                     "llvm.nvvm.read.ptx.sreg.nctaid.y",
                                     "llvm.nvvm.read.ptx.sreg.nctaid.z"};
    return sreg(cg, n[dim]);
}

static LLVMValueRef nv_uniform(Cg *cg, LLVMValueRef v)
{
    (void)cg;
    return v;
}

static void nv_barrier(Cg *cg)
{
    cg_call(cg, "llvm.nvvm.barrier0", cg->tvoid, NULL, 0);
}

static void nv_named_barrier(Cg *cg, LLVMValueRef id, LLVMValueRef count, int arrive, Span sp)
{
    (void)sp;
    LLVMValueRef a[2] = {id, count};
    if (arrive)
        cg_asm(cg, cg->tvoid, "barrier.arrive $0, $1;", "r,r,~{memory}", a, 2, 1);
    else
        cg_call(cg, "llvm.nvvm.barrier.sync.cnt", cg->tvoid, a, 2);
}

static void nv_fence(Cg *cg)
{
    cg_asm(cg, cg->tvoid, "fence.acq_rel.cta;", "~{memory}", NULL, 0, 1);
}

static void nv_fence_gpu(Cg *cg)
{
    cg_asm(cg, cg->tvoid, "fence.acq_rel.gpu;", "~{memory}", NULL, 0, 1);
}

static LLVMValueRef nv_shfl(Cg *cg, int kind, LLVMValueRef v, LLVMValueRef arg)
{
    static const char *const names[4] = {"llvm.nvvm.shfl.sync.bfly.i32", "llvm.nvvm.shfl.sync.down.i32",
                                         "llvm.nvvm.shfl.sync.up.i32", "llvm.nvvm.shfl.sync.idx.i32"};
    LLVMValueRef a[4] = {cg_i32(cg, -1), v, arg, cg_i32(cg, kind == SHFL_UP ? 0 : 0x1f)};
    return cg_call(cg, names[kind], cg->ti32, a, 4);
}

/* f32 math. Approximations (PTX ISA, "Floating-point instructions"):
 *   exp2  ex2.approx.ftz.f32    max rel. error 2^-22 (subnormal results flushed)
 *   exp   ex2.approx.ftz(x * log2 e)
 *   log2  lg2.approx.f32        max abs. error 2^-22 in [0.5, 2], else rel. 2^-22
 *   log   lg2.approx(x) * ln 2
 *   rsqrt rsqrt.approx.f32      max rel. error 2^-22.9
 *   rcp   rcp.approx.ftz.f32    max rel. error 2^-23
 *   sqrt  sqrt.rn.f32           correctly rounded (llvm.sqrt)
 *   sin, cos  sin/cos.approx.f32  max abs. error 2^-20.9 in [-pi, pi]
 *   tanh  tanh.approx.f32       max rel. error 2^-10.987 (sm_75+)
 *   x / y div.rn.f32 (IEEE); with CgOptions.fast_div div.approx.f32: max 2 ulp
 *         for |y| in [2^-126, 2^126] */
static LLVMValueRef nv_math(Cg *cg, Op op, LLVMValueRef x)
{
    const char *name = NULL;
    LLVMValueRef a[1] = {x};
    switch (op) {
    case OP_EXP2: name = "llvm.nvvm.ex2.approx.ftz.f"; break;
    case OP_EXP:
        a[0] = LLVMBuildFMul(cg->b, x, LLVMConstReal(cg->tf32, 1.4426950408889634), "");
        name = "llvm.nvvm.ex2.approx.ftz.f";
        break;
    case OP_LOG2: name = "llvm.nvvm.lg2.approx.f"; break;
    case OP_LOG: {
        LLVMValueRef l = cg_call(cg, "llvm.nvvm.lg2.approx.f", cg->tf32, a, 1);
        return LLVMBuildFMul(cg->b, l, LLVMConstReal(cg->tf32, 0.6931471805599453), "");
    }
    case OP_RSQRT: name = "llvm.nvvm.rsqrt.approx.f"; break;
    case OP_RCP: name = "llvm.nvvm.rcp.approx.ftz.f"; break;
    case OP_SIN: name = "llvm.nvvm.sin.approx.f"; break;
    case OP_COS: name = "llvm.nvvm.cos.approx.f"; break;
    case OP_TANH: return cg_asm(cg, cg->tf32, "tanh.approx.f32 $0, $1;", "=f,f", a, 1, 0);
    default: return NULL;
    }
    return cg_call(cg, name, cg->tf32, a, 1);
}

static LLVMValueRef nv_fdiv(Cg *cg, LLVMValueRef a, LLVMValueRef b)
{
    LLVMValueRef args[2] = {a, b};
    return cg_call(cg, "llvm.nvvm.div.approx.f", cg->tf32, args, 2);
}

/* cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b (PTX ISA 9.7.9.21, sm_89+):
 * d[15:8] = a, d[7:0] = b; LLVM 19 has no intrinsic for it */
static LLVMValueRef nv_cvt_f32x2_fp8x2(Cg *cg, DType to, LLVMValueRef lo, LLVMValueRef hi)
{
    LLVMValueRef a[2] = {hi, lo};
    return cg_asm(cg, cg->ti16, to == DT_E4M3 ? "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;"
                                              : "cvt.rn.satfinite.e5m2x2.f32 $0, $1, $2;",
                  "=h,f,f", a, 2, 0);
}

/* cvt.rn.f16x2.{e4m3x2,e5m2x2} d, a (sm_89+): exact */
static LLVMValueRef nv_cvt_fp8x2_f16x2(Cg *cg, DType from, LLVMValueRef pair)
{
    LLVMValueRef a[1] = {pair};
    return cg_asm(cg, cg->ti32, from == DT_E4M3 ? "cvt.rn.f16x2.e4m3x2 $0, $1;" : "cvt.rn.f16x2.e5m2x2 $0, $1;",
                  "=r,h", a, 1, 0);
}

/* cvt.rn.{bf16x2,f16x2}.f32 d, a, b (sm_80+; d.hi = a): llvm.nvvm.ff2{bf16,f16}x2.rn */
static LLVMValueRef nv_cvt_f32x2_16x2(Cg *cg, DType to, LLVMValueRef lo, LLVMValueRef hi)
{
    LLVMValueRef a[2] = {hi, lo};
    LLVMTypeRef t = LLVMVectorType(to == DT_BF16 ? cg->tbf16 : cg->tf16, 2);
    return cg_call(cg, to == DT_BF16 ? "llvm.nvvm.ff2bf16x2.rn" : "llvm.nvvm.ff2f16x2.rn", t, a, 2);
}

/* the registers of a predicated access of `bytes`: 16 -> v4.b32, 8 -> v2.b32,
 * 4 -> b32, 2 -> b16, 1 -> u8 in a 16-bit register */
static unsigned pred_regs(unsigned bytes, const char **sfx, char *con)
{
    *sfx = bytes == 16 ? ".v4.b32" : bytes == 8 ? ".v2.b32" : bytes == 4 ? ".b32" : bytes == 2 ? ".b16" : ".u8";
    *con = bytes >= 4 ? 'r' : 'h';
    return bytes >= 4 ? bytes / 4 : 1;
}

static const char *reg_list(Cg *cg, unsigned first, unsigned n)
{
    char buf[64] = "";
    size_t at = 0;
    for (unsigned i = 0; i < n; i++)
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s$%u", i ? ", " : "", first + i);
    return n > 1 ? ir_fmt(cg->ctx, "{%s}", buf) : ir_fmt(cg->ctx, "%s", buf);
}

/* @p ld.global[.nc] (PTX ISA 9.7.9.8) under the mask, the destination zeroed first:
 * a masked load without a branch */
static void nv_pred_load(Cg *cg, LLVMValueRef cond, LLVMValueRef ptr, unsigned bytes, int nc, LLVMValueRef *out)
{
    const char *sfx;
    char con;
    unsigned n = pred_regs(bytes, &sfx, &con);
    char zero[160] = "", cons[64] = "";
    size_t at = 0, ca = 0;
    for (unsigned i = 0; i < n; i++) {
        at += (size_t)snprintf(zero + at, sizeof zero - at, "mov.b%d $%u, 0; ", con == 'r' ? 32 : 16, i);
        ca += (size_t)snprintf(cons + ca, sizeof cons - ca, "=%c,", con);
    }
    snprintf(cons + ca, sizeof cons - ca, "l,b");
    const char *text = ir_fmt(cg->ctx, "%s@$%u ld.global%s%s %s, [$%u];",
                              zero, n + 1, nc ? ".nc" : "", sfx, reg_list(cg, 0, n), n);
    LLVMTypeRef rt = con == 'r' ? cg->ti32 : cg->ti16;
    LLVMTypeRef elts[4] = {rt, rt, rt, rt};
    LLVMTypeRef ret = n > 1 ? LLVMStructTypeInContext(cg->lc, elts, n, 0) : rt;
    LLVMValueRef a[2] = {ptr, cond};
    LLVMValueRef r = cg_asm(cg, ret, text, cons, a, 2, 0);
    /* it only reads memory: `memory(read)` (MemoryEffects: Ref for argmem, inaccessible
       and other memory, 0b010101), so LLVM may schedule and combine it like a load */
    unsigned mem = LLVMGetEnumAttributeKindForName("memory", 6);
    LLVMAddCallSiteAttribute(r, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cg->lc, mem, 21));
    unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddCallSiteAttribute(r, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cg->lc, nounwind, 0));
    for (unsigned i = 0; i < n; i++)
        out[i] = n > 1 ? LLVMBuildExtractValue(cg->b, r, i, "") : r;
}

/* @p st.global: a masked store without a branch */
static void nv_pred_store(Cg *cg, LLVMValueRef cond, LLVMValueRef ptr, unsigned bytes, LLVMValueRef *in)
{
    const char *sfx;
    char con;
    unsigned n = pred_regs(bytes, &sfx, &con);
    char cons[64] = "b,l";
    size_t ca = strlen(cons);
    for (unsigned i = 0; i < n; i++)
        ca += (size_t)snprintf(cons + ca, sizeof cons - ca, ",%c", con);
    snprintf(cons + ca, sizeof cons - ca, ",~{memory}");
    const char *text = ir_fmt(cg->ctx, "@$0 st.global%s [$1], %s;", sfx, reg_list(cg, 2, n));
    LLVMValueRef a[6] = {cond, ptr};
    for (unsigned i = 0; i < n; i++)
        a[2 + i] = in[i];
    cg_asm(cg, cg->tvoid, text, cons, a, 2 + n, 1);
}

static void annotate(Cg *cg, LLVMValueRef fn, const char *key, uint32_t v)
{
    LLVMMetadataRef md[3] = {LLVMValueAsMetadata(fn), LLVMMDStringInContext2(cg->lc, key, strlen(key)),
                             LLVMValueAsMetadata(cg_i32(cg, v))};
    LLVMAddNamedMetadataOperand(cg->mod, "nvvm.annotations",
                                LLVMMetadataAsValue(cg->lc, LLVMMDNodeInContext2(cg->lc, md, 3)));
}

/* kernel + reqntid; with a launch plan, the register cap at entry (setmaxnreg
 * moves from it; ptxas honours .maxnreg) and the tensor-map parameters as
 * __grid_constant__ (their address is taken: cvta.param) */
static void nv_mark_kernel(Cg *cg, LLVMValueRef fn, uint32_t threads)
{
    annotate(cg, fn, "kernel", 1);
    annotate(cg, fn, "reqntidx", threads);
    KPlan *p = cg->k->plan;
    if (!p)
        return;
    if (p->maxnreg)
        annotate(cg, fn, "maxnreg", p->maxnreg);
    if (!p->ntmaps)
        return;
    LLVMMetadataRef idx[64];
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->nparams && n < 64; i++) /* the ABI order (ir.h KParam) */
        if (p->params[i].kind == KP_TMAP)
            idx[n++] = LLVMValueAsMetadata(cg_i32(cg, i + 1)); /* 1-based parameter numbers */
    const char *key = "grid_constant";
    LLVMMetadataRef md[3] = {LLVMValueAsMetadata(fn), LLVMMDStringInContext2(cg->lc, key, strlen(key)),
                             LLVMMDNodeInContext2(cg->lc, idx, n)};
    LLVMAddNamedMetadataOperand(cg->mod, "nvvm.annotations",
                                LLVMMetadataAsValue(cg->lc, LLVMMDNodeInContext2(cg->lc, md, 3)));
}

const CgTarget cg_nvptx = {
    .shared_as = 3,
    .tid_x = nv_tid_x,
    .tid_x_fresh = nv_tid_x_fresh,
    .ctaid = nv_ctaid,
    .nctaid = nv_nctaid,
    .uniform = nv_uniform,
    .barrier = nv_barrier,
    .named_barrier = nv_named_barrier,
    .fence = nv_fence,
    .fence_gpu = nv_fence_gpu,
    .shfl = nv_shfl,
    .math_f32 = nv_math,
    .fdiv_f32 = nv_fdiv,
    .mark_kernel = nv_mark_kernel,
    .cvt_f32x2_fp8x2 = nv_cvt_f32x2_fp8x2,
    .cvt_fp8x2_f16x2 = nv_cvt_fp8x2_f16x2,
    .cvt_f32x2_16x2 = nv_cvt_f32x2_16x2,
    .pred_load = nv_pred_load,
    .pred_store = nv_pred_store,
    NV_TC_HOOKS
};
