/* amdgpu.c — the AMDGPU hooks: gfx90a / gfx942 (wave64), amdgpu_kernel
 * calling convention, work-item intrinsics, LDS in addrspace(3), s_barrier, MFMA,
 * cross-lane moves through ds_swizzle / ds_bpermute, math through the
 * llvm.amdgcn.* hardware intrinsics. The object is linked by lld.c. */
#include <string.h>
#include "cg_int.h"

static LLVMValueRef amd_tid_x(Cg *cg)
{
    return cg_call(cg, "llvm.amdgcn.workitem.id.x", cg->ti32, NULL, 0);
}

static LLVMValueRef amd_ctaid(Cg *cg, int dim)
{
    static const char *const n[3] = {"llvm.amdgcn.workgroup.id.x", "llvm.amdgcn.workgroup.id.y",
                                     "llvm.amdgcn.workgroup.id.z"};
    return cg_call(cg, n[dim], cg->ti32, NULL, 0);
}

/* Blocks in the launch: the HSA dispatch packet holds the grid size in work-items
 * (grid_size_x/y/z, u32 at bytes 12, 16, 20) and the workgroup size. The
 * workgroup is (block_threads, 1, 1) and the launch is uniform
 * (uniform-work-group-size), so grid.x = grid_size_x / block_threads exactly,
 * and grid.y, grid.z are the packet's values. */
static LLVMValueRef amd_nctaid(Cg *cg, int dim)
{
    LLVMTypeRef cptr = LLVMPointerTypeInContext(cg->lc, 4); /* the constant address space */
    LLVMValueRef pkt = cg_call(cg, "llvm.amdgcn.dispatch.ptr", cptr, NULL, 0);
    LLVMValueRef off[1] = {cg_i64(cg, 12 + 4 * dim)};
    LLVMValueRef at = LLVMBuildInBoundsGEP2(cg->b, cg->ti8, pkt, off, 1, "");
    LLVMValueRef v = LLVMBuildLoad2(cg->b, cg->ti32, at, dim == 0 ? "grid_size_x" : "grid_size");
    LLVMSetAlignment(v, 4);
    unsigned inv = LLVMGetMDKindIDInContext(cg->lc, "invariant.load", 14);
    LLVMSetMetadata(v, inv, LLVMMetadataAsValue(cg->lc, LLVMMDNodeInContext2(cg->lc, NULL, 0)));
    if (dim == 0)
        v = LLVMBuildExactUDiv(cg->b, v, cg_i32(cg, cg->block_threads), "nblocks");
    return v;
}

/* the wave index is the same in every lane: say so, so it lives in an SGPR */
static LLVMValueRef amd_uniform(Cg *cg, LLVMValueRef v)
{
    LLVMTypeRef ov[1] = {cg->ti32};
    LLVMValueRef a[1] = {v};
    return cg_intrin(cg, "llvm.amdgcn.readfirstlane", ov, 1, a, 1);
}

/* A workgroup barrier with workgroup-scope release/acquire: on gfx90a/gfx942
 * (not in threadgroup-split mode) that is s_waitcnt 0 then s_barrier (the
 * AMDGPU memory model). The empty asm statements with a memory clobber keep
 * LLVM from moving memory accesses across it (s_barrier itself is IntrNoMem). */
static void amd_barrier(Cg *cg)
{
    cg_asm(cg, cg->tvoid, "", "~{memory}", NULL, 0, 1);
    LLVMValueRef z[1] = {cg_i32(cg, 0)};
    cg_call(cg, "llvm.amdgcn.s.waitcnt", cg->tvoid, z, 1);
    cg_call(cg, "llvm.amdgcn.s.barrier", cg->tvoid, NULL, 0);
    cg_asm(cg, cg->tvoid, "", "~{memory}", NULL, 0, 1);
}

static void amd_named_barrier(Cg *cg, LLVMValueRef id, LLVMValueRef count, int arrive, Span sp)
{
    (void)id;
    if (!arrive && LLVMIsAConstantInt(count) &&
        LLVMConstIntGetZExtValue(count) == cg->block_threads) {
        amd_barrier(cg);
        return;
    }
    cg->failed = 1;
    Diag *d = diag_report(cg->ctx, E0902, sp, "named barriers over part of the block are not "
                                             "supported on %s (gfx9 has only s_barrier)",
                          ir_target_names[cg->tg]);
    diag_help(cg->ctx, d, "use `sync`, or `barrier ID, %u` (the whole block)", cg->block_threads);
}

static void amd_fence(Cg *cg)
{
    cg_asm(cg, cg->tvoid, "", "~{memory}", NULL, 0, 1);
    LLVMValueRef z[1] = {cg_i32(cg, 0)};
    cg_call(cg, "llvm.amdgcn.s.waitcnt", cg->tvoid, z, 1);
    cg_asm(cg, cg->tvoid, "", "~{memory}", NULL, 0, 1);
}

/* fence.gpu: an acquire-release fence at device (agent) scope; the C API
 * builds it at system scope, which is stronger */
static void amd_fence_gpu(Cg *cg)
{
    LLVMBuildFence(cg->b, LLVMAtomicOrderingAcquireRelease, 0, "");
}

static LLVMValueRef bpermute(Cg *cg, LLVMValueRef v, LLVMValueRef src_lane)
{
    LLVMValueRef a[2] = {LLVMBuildShl(cg->b, src_lane, cg_i32(cg, 2), ""), v};
    return cg_call(cg, "llvm.amdgcn.ds.bpermute", cg->ti32, a, 2);
}

/* CUDA semantics on a 64-lane wavefront: a lane whose source is out of
 * range keeps its own value (down, up); idx wraps modulo 64. */
static LLVMValueRef amd_shfl(Cg *cg, int kind, LLVMValueRef v, LLVMValueRef arg)
{
    LLVMBuilderRef b = cg->b;
    if (kind == SHFL_XOR && LLVMIsAConstantInt(arg)) {
        uint64_t m = LLVMConstIntGetZExtValue(arg);
        if (m >= 1 && m < 32) { /* ds_swizzle bitmask mode: and 0x1f, or 0, xor m */
            LLVMValueRef a[2] = {v, cg_i32(cg, (int64_t)((m << 10) | 0x1f))};
            return cg_call(cg, "llvm.amdgcn.ds.swizzle", cg->ti32, a, 2);
        }
    }
    LLVMValueRef lane = cg_lane(cg), src;
    int64_t ws = tg_warp(cg->tg);
    switch (kind) {
    case SHFL_XOR: src = LLVMBuildXor(b, lane, arg, ""); break;
    case SHFL_DOWN: {
        LLVMValueRef t = LLVMBuildAdd(b, lane, arg, "");
        src = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntULT, t, cg_i32(cg, ws), ""), t, lane, "");
        break;
    }
    case SHFL_UP: {
        LLVMValueRef t = LLVMBuildSub(b, lane, arg, "");
        src = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGE, t, cg_i32(cg, 0), ""), t, lane, "");
        break;
    }
    default: src = LLVMBuildAnd(b, arg, cg_i32(cg, ws - 1), ""); break;
    }
    return bpermute(cg, v, src);
}

/* f32 math on the hardware transcendental unit:
 *   exp2 v_exp_f32 (1 ulp; subnormal results flushed on gfx9), exp = exp2(x log2 e)
 *   log2 v_log_f32 (1 ulp), log = log2(x) ln 2
 *   rsqrt v_rsq_f32 (1 ulp), rcp v_rcp_f32 (1 ulp), sqrt v_sqrt_f32 (1 ulp)
 *   sin/cos v_sin/v_cos_f32 on x/(2 pi) (accurate in [-256, 256] revolutions)
 *   tanh: generic 1 - 2/(exp2(2x log2 e) + 1); x / y = x * v_rcp_f32(y) (2 ulp) */
static LLVMValueRef hw(Cg *cg, const char *name, LLVMValueRef x)
{
    LLVMTypeRef ov[1] = {cg->tf32};
    LLVMValueRef a[1] = {x};
    return cg_intrin(cg, name, ov, 1, a, 1);
}

static LLVMValueRef amd_math(Cg *cg, Op op, LLVMValueRef x)
{
    LLVMBuilderRef b = cg->b;
    switch (op) {
    case OP_EXP2: return hw(cg, "llvm.amdgcn.exp2", x);
    case OP_EXP:
        return hw(cg, "llvm.amdgcn.exp2", LLVMBuildFMul(b, x, LLVMConstReal(cg->tf32, 1.4426950408889634), ""));
    case OP_LOG2: return hw(cg, "llvm.amdgcn.log", x);
    case OP_LOG:
        return LLVMBuildFMul(b, hw(cg, "llvm.amdgcn.log", x), LLVMConstReal(cg->tf32, 0.6931471805599453), "");
    case OP_RSQRT: return hw(cg, "llvm.amdgcn.rsq", x);
    case OP_RCP: return hw(cg, "llvm.amdgcn.rcp", x);
    case OP_SQRT: return hw(cg, "llvm.amdgcn.sqrt", x);
    case OP_SIN:
        return hw(cg, "llvm.amdgcn.sin", LLVMBuildFMul(b, x, LLVMConstReal(cg->tf32, 0.15915494309189535), ""));
    case OP_COS:
        return hw(cg, "llvm.amdgcn.cos", LLVMBuildFMul(b, x, LLVMConstReal(cg->tf32, 0.15915494309189535), ""));
    default: return NULL;
    }
}

static LLVMValueRef amd_fdiv(Cg *cg, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildFMul(cg->b, a, hw(cg, "llvm.amdgcn.rcp", b), "");
}

/* ---- MFMA (the register-operand tensor-core family, ir/tcfamily.h) -------------
 * llvm.amdgcn.mfma.f32.MxNxK<type>(A, B, C, cbsz 0, abid 0, blgp 0) -> C (LLVM
 * AMDGPUUsage "MFMA intrinsics"; CDNA3 ISA "Matrix arithmetic instructions"):
 * 16-bit A/B are <4 x i16> (bf16, the _1k variants gfx90a and gfx942 have) or
 * <4 x half> (f16), four elements per lane low first (the mfma_a / mfma_b
 * register order); f32 A/B one float; C is <16 x float> (32x32) or <4 x float>
 * (16x16) in the mfma layout's register order. Other inputs (xf32, i8, f64):
 * E0902 for now. */
static LLVMValueRef mfma_operand(Cg *cg, IrTc t, LLVMValueRef *regs, unsigned nregs)
{
    if (t.ab == DT_F32)
        return LLVMBuildBitCast(cg->b, regs[0], cg->tf32, "");
    LLVMTypeRef v2 = LLVMVectorType(cg->ti32, 2);
    LLVMValueRef v = LLVMGetUndef(v2);
    for (unsigned i = 0; i < nregs && i < 2; i++)
        v = LLVMBuildInsertElement(cg->b, v, regs[i], cg_i32(cg, i), "");
    LLVMTypeRef el = t.ab == DT_F16 ? LLVMHalfTypeInContext(cg->lc) : LLVMInt16TypeInContext(cg->lc);
    return LLVMBuildBitCast(cg->b, v, LLVMVectorType(el, 4), "");
}

static void amd_mfma(Cg *cg, IrTc t, LLVMValueRef *a, unsigned na, LLVMValueRef *b, unsigned nb,
                     LLVMValueRef *d, unsigned nd)
{
    const char *ty = t.ab == DT_BF16 ? "bf16.1k" : t.ab == DT_F16 ? "f16" : t.ab == DT_F32 ? "f32" : NULL;
    unsigned want_regs = t.ab == DT_F32 ? 1 : 2;
    if (!ty || t.acc != DT_F32 || t.b_dt || na != want_regs || nb != want_regs ||
        nd != (unsigned)t.m * t.n / 64) {
        cg_unsupported(cg, cg->at, ir_fmt(cg->ctx, "an MFMA with %s inputs and a %s accumulator "
                       "(bf16, f16 and f32 inputs into f32 are compiled)", ir_dtypes[t.ab].spelling,
                       ir_dtypes[t.acc].spelling));
        return;
    }
    char name[64];
    snprintf(name, sizeof name, "llvm.amdgcn.mfma.f32.%ux%ux%u%s", t.m, t.n, t.k, ty);
    LLVMTypeRef cv = LLVMVectorType(cg->tf32, nd);
    LLVMValueRef c = LLVMGetUndef(cv);
    for (unsigned i = 0; i < nd; i++)
        c = LLVMBuildInsertElement(cg->b, c, d[i], cg_i32(cg, i), "");
    LLVMValueRef args[6] = {mfma_operand(cg, t, a, na), mfma_operand(cg, t, b, nb), c, cg_i32(cg, 0),
                            cg_i32(cg, 0), cg_i32(cg, 0)};
    LLVMValueRef r = cg_call(cg, name, cv, args, 6);
    for (unsigned i = 0; i < nd; i++)
        d[i] = LLVMBuildExtractElement(cg->b, r, cg_i32(cg, i), "");
}

static void amd_mark_kernel(Cg *cg, LLVMValueRef fn, uint32_t threads)
{
    LLVMSetFunctionCallConv(fn, LLVMAMDGPUKERNELCallConv);
    char v[32];
    snprintf(v, sizeof v, "%u,%u", threads, threads);
    const char *k1 = "amdgpu-flat-work-group-size", *k2 = "uniform-work-group-size";
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(cg->lc, k1, (unsigned)strlen(k1), v, (unsigned)strlen(v)));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(cg->lc, k2, (unsigned)strlen(k2), "true", 4));
}

const CgTarget cg_amdgpu = {
    .shared_as = 3,
    .tid_x = amd_tid_x,
    .ctaid = amd_ctaid,
    .nctaid = amd_nctaid,
    .uniform = amd_uniform,
    .barrier = amd_barrier,
    .named_barrier = amd_named_barrier,
    .fence = amd_fence,
    .fence_gpu = amd_fence_gpu,
    .shfl = amd_shfl,
    .math_f32 = amd_math,
    .fdiv_f32 = amd_fdiv,
    .mma = amd_mfma,
    .mark_kernel = amd_mark_kernel,
};
