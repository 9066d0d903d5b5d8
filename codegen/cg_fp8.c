/* cg_fp8.c — conversions to and from the OCP fp8 formats (e4m3 = E4M3FN,
 * e5m2), which LLVM holds as i8 bit patterns. Into fp8: the source goes to
 * f32 first (exact from f16, bf16, fp8 and the integers up to 2^24, which is
 * all that does not saturate), then lane pairs go through the target's
 * f32x2 → fp8x2 hook (cvt.rn.satfinite: nearest even, ±inf and overflow to
 * the largest finite value, NaN to NaN). Out of fp8: lane pairs go through
 * the fp8x2 → f16x2 hook (exact: every fp8 value is an f16), then the f16
 * lanes convert on as any f16 does. The hooks are NULL where the target has
 * no OCP fp8 conversion (gfx942's are the FNUZ variant): the verifier has
 * reported E0902 at check time there (verifier/caps.c). */
#include "cg_int.h"

static LLVMValueRef lane(Cg *cg, LLVMValueRef v, unsigned lanes, unsigned i)
{
    return lanes > 1 ? LLVMBuildExtractElement(cg->b, v, cg_i32(cg, i), "") : v;
}

static LLVMValueRef to_fp8(Cg *cg, LLVMValueRef v, CgTy from, CgTy to)
{
    CgTy f32 = {DT_F32, from.lanes};
    LLVMValueRef w = cg_convert(cg, v, from, f32);
    unsigned n = to.lanes;
    LLVMValueRef zero = LLVMConstReal(cg->tf32, 0.0);
    if (n == 1)
        return LLVMBuildTrunc(cg->b, cg->t->cvt_f32x2_fp8x2(cg, (DType)to.dt, w, zero), cg->ti8, "");
    LLVMValueRef pairs = LLVMGetUndef(LLVMVectorType(cg->ti16, n / 2));
    for (unsigned i = 0; i + 1 < n; i += 2) {
        LLVMValueRef p = cg->t->cvt_f32x2_fp8x2(cg, (DType)to.dt, lane(cg, w, n, i), lane(cg, w, n, i + 1));
        pairs = LLVMBuildInsertElement(cg->b, pairs, p, cg_i32(cg, i / 2), "");
    }
    return LLVMBuildBitCast(cg->b, pairs, cg_llvm_type(cg, to), "");
}

static LLVMValueRef from_fp8(Cg *cg, LLVMValueRef v, CgTy from, CgTy to)
{
    unsigned n = from.lanes;
    CgTy f16 = {DT_F16, (uint8_t)n};
    LLVMTypeRef h2 = LLVMVectorType(cg->tf16, 2);
    LLVMValueRef h;
    if (n == 1) {
        LLVMValueRef p = cg->t->cvt_fp8x2_f16x2(cg, (DType)from.dt, LLVMBuildZExt(cg->b, v, cg->ti16, ""));
        h = LLVMBuildExtractElement(cg->b, LLVMBuildBitCast(cg->b, p, h2, ""), cg_i32(cg, 0), "");
    } else {
        LLVMValueRef pairs = LLVMBuildBitCast(cg->b, v, LLVMVectorType(cg->ti16, n / 2), "");
        h = LLVMGetUndef(cg_llvm_type(cg, f16));
        for (unsigned i = 0; i + 1 < n; i += 2) {
            LLVMValueRef p = cg->t->cvt_fp8x2_f16x2(cg, (DType)from.dt,
                                                    LLVMBuildExtractElement(cg->b, pairs, cg_i32(cg, i / 2), ""));
            LLVMValueRef hv = LLVMBuildBitCast(cg->b, p, h2, "");
            for (unsigned j = 0; j < 2; j++)
                h = LLVMBuildInsertElement(cg->b, h, LLVMBuildExtractElement(cg->b, hv, cg_i32(cg, j), ""),
                                           cg_i32(cg, i + j), "");
        }
    }
    return cg_convert(cg, h, f16, to);
}

int cg_is_fp8(DType dt)
{
    return dt == DT_E4M3 || dt == DT_E5M2;
}

LLVMValueRef cg_fp8_convert(Cg *cg, LLVMValueRef v, CgTy from, CgTy to)
{
    if (!cg->t->cvt_f32x2_fp8x2 || !cg->t->cvt_fp8x2_f16x2 || (from.lanes > 1 && from.lanes % 2)) {
        cg_unsupported(cg, cg->at, ir_fmt(cg->ctx, "conversion from %s to %s on %s",
                                          ir_dtypes[from.dt].spelling, ir_dtypes[to.dt].spelling,
                                          ir_target_names[cg->tg]));
        return LLVMGetUndef(cg_llvm_type(cg, to));
    }
    if (cg_is_fp8((DType)from.dt)) {
        if (cg_is_fp8((DType)to.dt)) { /* e4m3 <-> e5m2: exactly to f32, then one rounding */
            CgTy f32 = {DT_F32, from.lanes};
            return to_fp8(cg, from_fp8(cg, v, from, f32), f32, to);
        }
        return from_fp8(cg, v, from, to);
    }
    return to_fp8(cg, v, from, to);
}
