/* cg_reduce.c — cross-thread operations: lane and warp ids, shuffles of any
 * scalar or vector type (moved as 32-bit pieces), butterfly warp reductions
 * and block reductions.
 *
 * reduce.warp.OP(x): log2(W) xor-butterfly steps (W = 32 on NVPTX, 64 on
 *   AMDGPU); every lane gets the result. f16/bf16 are reduced in f32 and
 *   rounded once at the end.
 * reduce.block.OP(x): warp reduction; lane 0 of each warp writes its partial
 *   to the reduction's scratch slot of the launch plan (one per call site, NW
 *   = threads / W entries); barrier; every warp reads the NW partials (lane l
 *   reads entry l mod NW) and reduces them with log2(NW) butterfly steps, so
 *   every thread of the block gets the result. Inside a loop a second barrier
 *   follows so the next iteration's writes cannot overtake slow readers. All
 *   threads of the block must reach it (like `sync`). Inside a role (the roles
 *   pass marks the node, ir.h IrRoleRed) the same with the role's warps, its
 *   warp index, and a named barrier over the role's threads. */
#include "cg_int.h"

LLVMValueRef cg_lane(Cg *cg)
{
    return LLVMBuildAnd(cg->b, cg->t->tid_x(cg), cg_i32(cg, (uint32_t)tg_warp(cg->tg) - 1), "lane");
}

LLVMValueRef cg_warp_id(Cg *cg)
{
    unsigned sh = (unsigned)__builtin_ctz((unsigned)tg_warp(cg->tg)); /* log2 of the warp width */
    return cg->t->uniform(cg, LLVMBuildLShr(cg->b, cg->t->tid_x(cg), cg_i32(cg, sh), "warp"));
}

static LLVMValueRef shfl_scalar(Cg *cg, int kind, LLVMValueRef v, CgTy t, LLVMValueRef arg)
{
    LLVMBuilderRef b = cg->b;
    unsigned bits = ir_dtypes[t.dt].bits;
    LLVMTypeRef ty = LLVMTypeOf(v);
    if (bits == 64) {
        LLVMTypeRef v2 = LLVMVectorType(cg->ti32, 2);
        LLVMValueRef p = LLVMBuildBitCast(b, v, v2, "");
        for (unsigned i = 0; i < 2; i++) {
            LLVMValueRef x = LLVMBuildExtractElement(b, p, cg_i32(cg, i), "");
            p = LLVMBuildInsertElement(b, p, cg->t->shfl(cg, kind, x, arg), cg_i32(cg, i), "");
        }
        return LLVMBuildBitCast(b, p, ty, "");
    }
    LLVMValueRef x = v;
    if (bits == 32) {
        if (ty != cg->ti32)
            x = LLVMBuildBitCast(b, v, cg->ti32, "");
        x = cg->t->shfl(cg, kind, x, arg);
        return ty != cg->ti32 ? LLVMBuildBitCast(b, x, ty, "") : x;
    }
    LLVMTypeRef it = LLVMIntTypeInContext(cg->lc, bits);
    if (ty != it)
        x = LLVMBuildBitCast(b, v, it, "");
    x = cg->t->shfl(cg, kind, LLVMBuildZExt(b, x, cg->ti32, ""), arg);
    x = LLVMBuildTrunc(b, x, it, "");
    return ty != it ? LLVMBuildBitCast(b, x, ty, "") : x;
}

LLVMValueRef cg_shuffle(Cg *cg, int kind, LLVMValueRef v, CgTy t, LLVMValueRef arg)
{
    if (t.lanes == 1)
        return shfl_scalar(cg, kind, v, t, arg);
    CgTy s = t;
    s.lanes = 1;
    LLVMValueRef r = v;
    for (unsigned i = 0; i < t.lanes; i++) {
        LLVMValueRef ix = cg_i32(cg, i);
        LLVMValueRef x = shfl_scalar(cg, kind, LLVMBuildExtractElement(cg->b, v, ix, ""), s, arg);
        r = LLVMBuildInsertElement(cg->b, r, x, ix, "");
    }
    return r;
}

static LLVMValueRef combine(Cg *cg, Op op, LLVMValueRef a, LLVMValueRef b, CgTy t)
{
    if (op == OP_WARP_ADD || op == OP_BLOCK_ADD)
        return cg_binop(cg, OP_ADD, a, b, t, IR_NOSPAN);
    return cg_minmax(cg, op == OP_WARP_MAX || op == OP_BLOCK_MAX, a, b, t);
}

static CgTy compute_ty(CgTy t)
{
    if (t.dt == DT_F16 || t.dt == DT_BF16)
        t.dt = DT_F32;
    if (t.dt == DT_BOOL)
        t.dt = DT_I32;
    return t;
}

static LLVMValueRef butterfly(Cg *cg, Op op, LLVMValueRef v, CgTy ct, unsigned width)
{
    for (unsigned m = width / 2; m >= 1; m /= 2)
        v = combine(cg, op, v, cg_shuffle(cg, SHFL_XOR, v, ct, cg_i32(cg, m)), ct);
    return v;
}

LLVMValueRef cg_warp_reduce(Cg *cg, Op op, LLVMValueRef v, CgTy t)
{
    CgTy ct = compute_ty(t);
    v = cg_convert(cg, v, t, ct);
    v = butterfly(cg, op, v, ct, (uint32_t)tg_warp(cg->tg));
    return cg_convert(cg, v, ct, t);
}

/* the barrier of a block reduction: the block's (barrier 0), or inside a role
 * the role-scoped named barrier the roles pass chose (Node.v.i, ir.h) */
static void red_barrier(Cg *cg, uint32_t bar, uint32_t nw, uint32_t ws)
{
    if (!bar) {
        cg->t->barrier(cg);
        return;
    }
    cg->t->named_barrier(cg, cg_i32(cg, bar), cg_i32(cg, nw * ws), 0, ir_get(cg->k, cg->at)->span);
}

LLVMValueRef cg_block_reduce(Cg *cg, Op op, LLVMValueRef v, CgTy t)
{
    uint32_t ws = (uint32_t)tg_warp(cg->tg);
    uint32_t nw = (cg->block_threads + ws - 1) / ws;
    IrRoleRed rr = ir_role_red_unpack(ir_get(cg->k, cg->at)->v.i);
    if (rr.barrier) /* inside a role: its warps only */
        nw = rr.nwarps;
    Op wop = op == OP_BLOCK_ADD ? OP_WARP_ADD : op == OP_BLOCK_MAX ? OP_WARP_MAX : OP_WARP_MIN;
    if (nw <= 1)
        return cg_warp_reduce(cg, wop, v, t);
    CgTy ct = compute_ty(t);
    LLVMBuilderRef b = cg->b;
    v = cg_convert(cg, v, t, ct);
    v = butterfly(cg, op, v, ct, ws);

    LLVMTypeRef et = cg_llvm_type(cg, ct);
    int found = 0;
    uint32_t slot = cg_smem_slot(cg, cg->at, &found); /* the plan's scratch of this reduction */
    if (!found)
        ir_bug(cg->ctx, "block reduction without scratch in the launch plan");
    LLVMValueRef scratch = cg_smem_ptr(cg, cg_i32(cg, slot));
    LLVMValueRef lane = cg_lane(cg), warp = cg_warp_id(cg);
    if (rr.barrier)
        warp = LLVMBuildSub(b, warp, cg_i32(cg, rr.first_warp), "");

    LLVMBasicBlockRef wr = cg_block(cg, "red.write"), after = cg_block(cg, "red.read");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, lane, cg_i32(cg, 0), ""), wr, after);
    LLVMPositionBuilderAtEnd(b, wr);
    LLVMValueRef wi[1] = {warp};
    LLVMBuildStore(b, v, LLVMBuildGEP2(b, et, scratch, wi, 1, ""));
    LLVMBuildBr(b, after);
    LLVMPositionBuilderAtEnd(b, after);
    red_barrier(cg, rr.barrier, nw, ws);

    LLVMValueRef x;
    unsigned width;
    if ((nw & (nw - 1)) == 0) { /* lane l reads partial l mod NW: log2(NW) steps */
        LLVMValueRef ri[1] = {LLVMBuildAnd(b, lane, cg_i32(cg, nw - 1), "")};
        x = LLVMBuildLoad2(b, et, LLVMBuildGEP2(b, et, scratch, ri, 1, ""), "");
        width = nw;
    } else { /* lanes past NW contribute the identity: a full butterfly */
        LLVMValueRef inr = LLVMBuildICmp(b, LLVMIntULT, lane, cg_i32(cg, nw), "");
        LLVMValueRef ri[1] = {LLVMBuildSelect(b, inr, lane, cg_i32(cg, 0), "")};
        x = LLVMBuildLoad2(b, et, LLVMBuildGEP2(b, et, scratch, ri, 1, ""), "");
        LLVMValueRef id;
        CgTy s = ct;
        s.lanes = 1;
        if (op == OP_BLOCK_ADD) {
            id = LLVMConstNull(cg_llvm_type(cg, s));
        } else if (cg_is_float(ct)) {
            id = LLVMConstReal(cg_llvm_type(cg, s), op == OP_BLOCK_MAX ? -__builtin_inf() : __builtin_inf());
        } else {
            unsigned bits = ir_dtypes[ct.dt].bits;
            uint64_t all = bits == 64 ? ~0ull : ((1ull << bits) - 1);
            uint64_t smin = 1ull << (bits - 1);
            uint64_t val = cg_is_signed(ct) ? (op == OP_BLOCK_MAX ? smin : smin - 1)
                                            : (op == OP_BLOCK_MAX ? 0 : all);
            id = LLVMConstInt(cg_llvm_type(cg, s), val, 0);
        }
        x = LLVMBuildSelect(b, ct.lanes > 1 ? cg_splat(cg, inr, ct.lanes) : inr, x,
                            cg_splat(cg, id, ct.lanes), "");
        width = ws;
    }
    x = butterfly(cg, op, x, ct, width);
    if (cg->loop_depth)
        red_barrier(cg, rr.barrier, nw, ws);
    return cg_convert(cg, x, ct, t);
}
