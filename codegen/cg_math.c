/* cg_math.c — conversions and math: casts with correct rounding (f32→bf16 and
 * f32→f16 round to nearest even, float→int saturates with NaN → 0), 16-bit
 * float arithmetic carried out in f32 and rounded once, math builtins through
 * the target's hooks, dot products and horizontal reductions. */
#include "cg_int.h"
#include "fastmath.h"

LLVMValueRef cg_splat(Cg *cg, LLVMValueRef s, unsigned lanes)
{
    if (lanes <= 1)
        return s;
    LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(s), lanes);
    LLVMValueRef v = LLVMBuildInsertElement(cg->b, LLVMGetUndef(vt), s, cg_i32(cg, 0), "");
    LLVMValueRef mask = LLVMConstNull(LLVMVectorType(cg->ti32, lanes));
    return LLVMBuildShuffleVector(cg->b, v, LLVMGetUndef(vt), mask, "");
}

static int is_small_float(uint8_t dt)
{
    return dt == DT_F16 || dt == DT_BF16;
}


/* an f32 vector to bf16/f16 two lanes per instruction (cvt.rn.bf16x2.f32): LLVM 19
 * narrows <N x float> lane by lane */
static LLVMValueRef packed_narrow(Cg *cg, LLVMValueRef v, CgTy to)
{
    LLVMValueRef r = LLVMGetUndef(cg_llvm_type(cg, to));
    for (unsigned i = 0; i < to.lanes; i += 2) {
        LLVMValueRef lo = LLVMBuildExtractElement(cg->b, v, cg_i32(cg, i), "");
        LLVMValueRef hi = LLVMBuildExtractElement(cg->b, v, cg_i32(cg, i + 1), "");
        LLVMValueRef p = cg->t->cvt_f32x2_16x2(cg, (DType)to.dt, lo, hi);
        for (unsigned j = 0; j < 2; j++)
            r = LLVMBuildInsertElement(cg->b, r, LLVMBuildExtractElement(cg->b, p, cg_i32(cg, j), ""),
                                       cg_i32(cg, i + j), "");
    }
    return r;
}

LLVMValueRef cg_convert(Cg *cg, LLVMValueRef v, CgTy from, CgTy to)
{
    LLVMBuilderRef b = cg->b;
    if (from.lanes == 1 && to.lanes > 1) {
        CgTy s = to;
        s.lanes = 1;
        return cg_splat(cg, cg_convert(cg, v, from, s), to.lanes);
    }
    if (from.lanes != to.lanes) {
        if (cg->at)
            cg_unsupported(cg, cg->at, ir_fmt(cg->ctx, "a vector of %u lanes where %u are expected",
                                              from.lanes, to.lanes));
        return LLVMGetUndef(cg_llvm_type(cg, to));
    }
    if (from.dt == to.dt)
        return v;
    LLVMTypeRef tt = cg_llvm_type(cg, to);
    if (cg_is_fp8((DType)from.dt) || cg_is_fp8((DType)to.dt))
        return cg_fp8_convert(cg, v, from, to);
    if ((from.dt == DT_TF32 || to.dt == DT_TF32) && cg->at) {
        cg_unsupported(cg, cg->at, ir_fmt(cg->ctx, "conversion from %s to %s",
                                          ir_dtypes[from.dt].spelling, ir_dtypes[to.dt].spelling));
        return LLVMGetUndef(tt);
    }
    int ff = cg_is_float(from), tf = cg_is_float(to);
    if (to.dt == DT_BOOL) {
        if (ff)
            return LLVMBuildFCmp(b, LLVMRealUNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
        return LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
    }
    if (ff && tf) {
        int fb = ir_dtypes[from.dt].bits, tb = ir_dtypes[to.dt].bits;
        if (fb == tb) { /* f16 <-> bf16 through f32 (exact, then one rounding) */
            CgTy mid = to;
            mid.dt = DT_F32;
            return cg_convert(cg, cg_convert(cg, v, from, mid), mid, to);
        }
        if (fb > tb && from.dt == DT_F32 && to.lanes > 1 && to.lanes % 2 == 0 && cg->t->cvt_f32x2_16x2 &&
            !cg->no_packed)
            return packed_narrow(cg, v, to);
        return fb < tb ? LLVMBuildFPExt(b, v, tt, "") : LLVMBuildFPTrunc(b, v, tt, "");
    }
    if (ff) { /* float → int: saturating, NaN → 0 */
        LLVMTypeRef ov[2] = {tt, LLVMTypeOf(v)};
        LLVMValueRef a[1] = {v};
        if (is_small_float(from.dt)) {
            CgTy mid = from;
            mid.dt = DT_F32;
            a[0] = cg_convert(cg, v, from, mid);
            ov[1] = LLVMTypeOf(a[0]);
        }
        return cg_intrin(cg, cg_is_signed(to) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", ov, 2, a, 1);
    }
    if (tf) /* int → float: round to nearest even */
        return cg_is_signed(from) ? LLVMBuildSIToFP(b, v, tt, "") : LLVMBuildUIToFP(b, v, tt, "");
    int fb = ir_dtypes[from.dt].bits, tb = ir_dtypes[to.dt].bits;
    if (fb == tb)
        return v;
    if (fb > tb)
        return LLVMBuildTrunc(b, v, tt, "");
    return cg_is_signed(from) ? LLVMBuildSExt(b, v, tt, "") : LLVMBuildZExt(b, v, tt, "");
}

static CgTy wide(CgTy t)
{
    if (is_small_float(t.dt))
        t.dt = DT_F32;
    return t;
}

LLVMValueRef cg_fdiv(Cg *cg, LLVMValueRef a, LLVMValueRef b, CgTy ty)
{
    if (!cg->fast_div || ty.dt != DT_F32 || LLVMIsConstant(b))
        return LLVMBuildFDiv(cg->b, a, b, "");
    if (ty.lanes == 1)
        return cg->t->fdiv_f32(cg, a, b);
    LLVMValueRef r = LLVMGetUndef(LLVMTypeOf(a));
    for (unsigned i = 0; i < ty.lanes; i++) {
        LLVMValueRef ix = cg_i32(cg, i);
        LLVMValueRef x = cg->t->fdiv_f32(cg, LLVMBuildExtractElement(cg->b, a, ix, ""),
                                         LLVMBuildExtractElement(cg->b, b, ix, ""));
        r = LLVMBuildInsertElement(cg->b, r, x, ix, "");
    }
    return r;
}

/* v when it is an integer negation `0 - x` (lane-wise, as LLVM builds `-x`): x; else
 * NULL (always with CAKE_NO_MINMAX_FOLD in the environment: the unfolded form, to
 * reproduce the ptxas bug described at cg_horizontal) */
static LLVMValueRef negated_operand(Cg *cg, LLVMValueRef v)
{
    if (cg->no_minmax_fold || !LLVMIsAInstruction(v) || LLVMGetInstructionOpcode(v) != LLVMSub)
        return NULL;
    LLVMValueRef z = LLVMGetOperand(v, 0);
    return LLVMIsNull(z) ? LLVMGetOperand(v, 1) : NULL;
}

/* min/max of two values of type ty (NaN-propagating for floats). Two negated signed
 * integers are folded, max(-a, -b) = -min(a, b), for the ptxas bug described at
 * cg_horizontal: a chain of them must not reach ptxas as neg.s32 feeding max.s32. */
LLVMValueRef cg_minmax(Cg *cg, int is_max, LLVMValueRef a, LLVMValueRef b, CgTy ty)
{
    LLVMValueRef na = NULL, nb = NULL;
    if (!cg_is_float(ty) && cg_is_signed(ty) && (na = negated_operand(cg, a)) && (nb = negated_operand(cg, b)))
        return LLVMBuildNeg(cg->b, cg_minmax(cg, !is_max, na, nb, ty), "");
    LLVMValueRef args[2] = {a, b};
    if (cg_is_float(ty)) {
        if (is_small_float(ty.dt)) {
            CgTy w = wide(ty);
            LLVMValueRef r = cg_minmax(cg, is_max, cg_convert(cg, a, ty, w), cg_convert(cg, b, ty, w), w);
            return cg_convert(cg, r, w, ty);
        }
        LLVMTypeRef ov[1] = {LLVMTypeOf(a)};
        return cg_intrin(cg, is_max ? "llvm.maximum" : "llvm.minimum", ov, 1, args, 2); /* NaN-propagating */
    }
    LLVMTypeRef ov[1] = {LLVMTypeOf(a)};
    const char *n = cg_is_signed(ty) ? (is_max ? "llvm.smax" : "llvm.smin")
                                     : (is_max ? "llvm.umax" : "llvm.umin");
    return cg_intrin(cg, n, ov, 1, args, 2);
}

/* exp2.fma (ir/ops.h, the constants in ir/fastmath.h): 2^x without the MUFU.
 * xc = minimum(x, 127) (NaN stays); t = xc + 1.5 * 2^23 rounds xc to the
 * integer j in t's low mantissa bits; f = xc - (t - 1.5 * 2^23) in [-1/2, 1/2];
 * p = 2^f by Horner (fma), degree 3; the result's bits are bits(p) +
 * (bits(t) << 23) (the shift drops the 1.5 * 2^23 and leaves j in the exponent
 * field), and 0 below -125, where the exponent field would underflow.
 * ir_exp2_fma is the same steps in C (run --sim). */
static LLVMValueRef exp2_fma(Cg *cg, LLVMValueRef x)
{
    LLVMBuilderRef b = cg->b;
    LLVMTypeRef ov[1] = {cg->tf32};
    LLVMValueRef mm[2] = {x, LLVMConstReal(cg->tf32, IR_EXP2_FMA_HI)};
    LLVMValueRef xc = cg_intrin(cg, "llvm.minimum", ov, 1, mm, 2);
    LLVMValueRef big = LLVMConstReal(cg->tf32, IR_EXP2_FMA_BIG);
    LLVMValueRef t = LLVMBuildFAdd(b, xc, big, "");
    LLVMValueRef f = LLVMBuildFSub(b, xc, LLVMBuildFSub(b, t, big, ""), "");
    LLVMValueRef p = LLVMConstReal(cg->tf32, ir_exp2_fma_c[3]);
    for (int k = 2; k >= 0; k--) {
        LLVMValueRef fa[3] = {p, f, LLVMConstReal(cg->tf32, ir_exp2_fma_c[k])};
        p = cg_intrin(cg, "llvm.fma", ov, 1, fa, 3);
    }
    LLVMValueRef ti = LLVMBuildBitCast(b, t, cg->ti32, ""), pi = LLVMBuildBitCast(b, p, cg->ti32, "");
    LLVMValueRef r = LLVMBuildAdd(b, pi, LLVMBuildShl(b, ti, cg_i32(cg, 23), ""), "");
    LLVMValueRef lo = LLVMBuildFCmp(b, LLVMRealOLT, x, LLVMConstReal(cg->tf32, IR_EXP2_FMA_LO), "");
    return LLVMBuildSelect(b, lo, LLVMConstReal(cg->tf32, 0.0), LLVMBuildBitCast(b, r, cg->tf32, ""), "");
}

/* one f32 lane of a unary math builtin */
static LLVMValueRef math_f32(Cg *cg, Op op, LLVMValueRef x)
{
    LLVMValueRef r = cg->t->math_f32(cg, op, x);
    if (r)
        return r;
    LLVMBuilderRef b = cg->b;
    LLVMTypeRef ov[1] = {cg->tf32};
    LLVMValueRef a[1] = {x};
    switch (op) {
    case OP_SQRT: return cg_intrin(cg, "llvm.sqrt", ov, 1, a, 1);
    case OP_EXP2_FMA: return exp2_fma(cg, x);
    case OP_TANH: { /* 1 - 2 / (exp2(2 x log2 e) + 1) */
        LLVMValueRef e = math_f32(cg, OP_EXP2, LLVMBuildFMul(b, x, LLVMConstReal(cg->tf32, 2.8853900817779268), ""));
        LLVMValueRef d = LLVMBuildFAdd(b, e, LLVMConstReal(cg->tf32, 1.0), "");
        LLVMValueRef q = cg->t->fdiv_f32(cg, LLVMConstReal(cg->tf32, 2.0), d);
        return LLVMBuildFSub(b, LLVMConstReal(cg->tf32, 1.0), q, "");
    }
    case OP_RSQRT:
        return cg->t->fdiv_f32(cg, LLVMConstReal(cg->tf32, 1.0), cg_intrin(cg, "llvm.sqrt", ov, 1, a, 1));
    case OP_RCP: return cg->t->fdiv_f32(cg, LLVMConstReal(cg->tf32, 1.0), x);
    default: return NULL;
    }
}

static LLVMValueRef math_f64(Cg *cg, Op op, LLVMValueRef x)
{
    LLVMTypeRef ov[1] = {cg->tf64};
    LLVMValueRef a[1] = {x};
    switch (op) {
    case OP_SQRT: return cg_intrin(cg, "llvm.sqrt", ov, 1, a, 1);
    case OP_RSQRT:
        return LLVMBuildFDiv(cg->b, LLVMConstReal(cg->tf64, 1.0), cg_intrin(cg, "llvm.sqrt", ov, 1, a, 1), "");
    case OP_RCP: return LLVMBuildFDiv(cg->b, LLVMConstReal(cg->tf64, 1.0), x, "");
    default: return NULL;
    }
}

static LLVMValueRef per_lane(Cg *cg, Op op, LLVMValueRef v, CgTy ty, NodeId at)
{
    LLVMValueRef (*f)(Cg *, Op, LLVMValueRef) = ty.dt == DT_F64 ? math_f64 : math_f32;
    if (ty.lanes == 1) {
        LLVMValueRef r = f(cg, op, v);
        if (!r) {
            cg_unsupported(cg, at, ir_fmt(cg->ctx, "%s on %s", ir_ops[op].spelling, ir_dtypes[ty.dt].spelling));
            return LLVMGetUndef(LLVMTypeOf(v));
        }
        return r;
    }
    LLVMValueRef r = LLVMGetUndef(LLVMTypeOf(v));
    CgTy s = ty;
    s.lanes = 1;
    for (unsigned i = 0; i < ty.lanes; i++) {
        LLVMValueRef ix = cg_i32(cg, i);
        LLVMValueRef x = per_lane(cg, op, LLVMBuildExtractElement(cg->b, v, ix, ""), s, at);
        r = LLVMBuildInsertElement(cg->b, r, x, ix, "");
    }
    return r;
}

/* args are already converted to ty (the builtin's result type) */
LLVMValueRef cg_math(Cg *cg, Op op, LLVMValueRef *args, unsigned n, CgTy ty, NodeId at)
{
    if (is_small_float(ty.dt) && op != OP_ABS) {
        CgTy w = wide(ty);
        LLVMValueRef wa[3];
        for (unsigned i = 0; i < n && i < 3; i++)
            wa[i] = cg_convert(cg, args[i], ty, w);
        return cg_convert(cg, cg_math(cg, op, wa, n, w, at), w, ty);
    }
    LLVMTypeRef ov[1] = {LLVMTypeOf(args[0])};
    switch (op) {
    case OP_ABS:
        if (cg_is_float(ty))
            return cg_intrin(cg, "llvm.fabs", ov, 1, args, 1);
        if (!cg_is_signed(ty))
            return args[0];
        {
            LLVMValueRef a[2] = {args[0], LLVMConstInt(cg->ti1, 0, 0)};
            return cg_intrin(cg, "llvm.abs", ov, 1, a, 2);
        }
    case OP_MAX: return cg_minmax(cg, 1, args[0], args[1], ty);
    case OP_MIN: return cg_minmax(cg, 0, args[0], args[1], ty);
    case OP_FMA:
        if (cg_is_float(ty))
            return cg_intrin(cg, "llvm.fma", ov, 1, args, 3);
        return LLVMBuildAdd(cg->b, LLVMBuildMul(cg->b, args[0], args[1], ""), args[2], "");
    default: break;
    }
    if (!cg_is_float(ty)) {
        cg_unsupported(cg, at, ir_fmt(cg->ctx, "%s of an integer", ir_ops[op].spelling));
        return LLVMGetUndef(LLVMTypeOf(args[0]));
    }
    return per_lane(cg, op, args[0], ty, at);
}

/* hsum / hmax / hmin of a vector, in its lane type (legalize casts 16-bit lanes
 * to f32 before hsum: that is hsum's f32 accumulation), as a pairwise tree of
 * log2(lanes) dependent steps (tir.md 3.2; CAKE_NO_TREE: lane order).
 *
 * Workaround for a ptxas miscompile (CUDA 13 ptxas and the r580 driver's JIT,
 * sm_90a): `-hmax(-v)` on i32x4 was emitted as four neg.s32, three max.s32 and
 * one neg.s32 — correct PTX — and ptxas fused the chain into its 3-input
 * integer min/max (VIMNMX3), folding the negations into operand modifiers and
 * dropping two of them, so the result was wrong (tests/gpu/hmax_neg.tir). An
 * integer min/max reduction of a negated vector is therefore emitted with the
 * negation folded out: hmax(-x) = -hmin(x) and hmin(-x) = -hmax(x), so the
 * chain's operands are never negations (and `-hmax(-v)` becomes hmin(v) once
 * LLVM cancels the two outer negations). The identity holds for every value
 * but the type's most negative one (its negation wraps to itself): a lane
 * holding INT_MIN gives INT_MIN where the wrapping `-` would have ranked it
 * last. cg_minmax folds two negated operands the same way. */
static LLVMValueRef combine_lanes(Cg *cg, Op op, LLVMValueRef a, LLVMValueRef b, CgTy s)
{
    if (op == OP_HMAX || op == OP_HMIN)
        return cg_minmax(cg, op == OP_HMAX, a, b, s);
    return cg_binop(cg, OP_ADD, a, b, s, IR_NOSPAN);
}

LLVMValueRef cg_horizontal(Cg *cg, Op op, LLVMValueRef v, CgTy vty)
{
    CgTy s = cg_scalar((DType)vty.dt);
    LLVMValueRef inner = op != OP_HSUM && !cg_is_float(vty) && cg_is_signed(vty) && vty.lanes > 1
                       ? negated_operand(cg, v) : NULL;
    if (inner) {
        LLVMValueRef r = cg_horizontal(cg, op == OP_HMAX ? OP_HMIN : OP_HMAX, inner, vty);
        return LLVMBuildNeg(cg->b, r, "");
    }
    LLVMValueRef x[16] = {0};
    unsigned n = vty.lanes > 16 ? 16 : vty.lanes ? vty.lanes : 1;
    for (unsigned i = 0; i < n; i++)
        x[i] = vty.lanes > 1 ? LLVMBuildExtractElement(cg->b, v, cg_i32(cg, i), "") : v;
    if (cg->no_tree) { /* CAKE_NO_TREE: the linear chain, lane by lane */
        for (unsigned i = 1; i < n; i++)
            x[0] = combine_lanes(cg, op, x[0], x[i], s);
        return x[0];
    }
    /* a tree: log2(lanes) dependent steps, ((x0 . x1) . (x2 . x3)) . ... */
    for (unsigned w = 1; w < n; w *= 2)
        for (unsigned i = 0; i + w < n; i += 2 * w)
            x[i] = combine_lanes(cg, op, x[i], x[i + w], s);
    return x[0];
}

/* dot(a, b) of two vectors of type vty: the sum of lane products with fused
 * multiply-adds in lane order, in the lane type (f32 or f64; legalize casts
 * 16-bit lanes to f32) */
LLVMValueRef cg_dot(Cg *cg, LLVMValueRef a, LLVMValueRef b, CgTy vty)
{
    LLVMTypeRef ov[1] = {cg_scalar_type(cg, (DType)vty.dt)};
    LLVMValueRef acc = NULL;
    for (unsigned i = 0; i < vty.lanes; i++) {
        LLVMValueRef ix = cg_i32(cg, i);
        LLVMValueRef x = vty.lanes > 1 ? LLVMBuildExtractElement(cg->b, a, ix, "") : a;
        LLVMValueRef y = vty.lanes > 1 ? LLVMBuildExtractElement(cg->b, b, ix, "") : b;
        if (!acc) {
            acc = LLVMBuildFMul(cg->b, x, y, "");
        } else {
            LLVMValueRef args[3] = {x, y, acc};
            acc = cg_intrin(cg, "llvm.fma", ov, 1, args, 3);
        }
    }
    return acc;
}
