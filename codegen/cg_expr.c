/* cg_expr.c — lowering of expressions: literals, names, special registers,
 * operators, casts, select, loads, builtins and cross-thread operations. */
#include "cg_int.h"

static LLVMValueRef undef_of(Cg *cg, CgTy t)
{
    return LLVMGetUndef(cg_llvm_type(cg, t));
}

static LLVMValueRef lit(Cg *cg, const Node *n, CgTy want)
{
    CgTy s = want;
    s.lanes = 1;
    LLVMTypeRef t = cg_llvm_type(cg, s);
    LLVMValueRef c;
    if (cg_is_float(want))
        c = LLVMConstReal(t, n->op == OP_FLOAT ? n->v.f : (double)n->v.i);
    else if (n->op == OP_FLOAT)
        c = LLVMConstInt(t, (unsigned long long)(int64_t)n->v.f, 1);
    else if (want.dt == DT_BOOL)
        c = LLVMConstInt(t, n->v.i != 0, 0);
    else
        c = LLVMConstInt(t, (unsigned long long)n->v.i, 1);
    return want.lanes > 1 ? cg_splat(cg, c, want.lanes) : c;
}

LLVMValueRef cg_binop(Cg *cg, Op op, LLVMValueRef a, LLVMValueRef b, CgTy ty, Span sp)
{
    (void)sp;
    LLVMBuilderRef B = cg->b;
    if (ty.dt == DT_F16 || ty.dt == DT_BF16) { /* in f32, rounded once */
        CgTy w = ty;
        w.dt = DT_F32;
        LLVMValueRef r = cg_binop(cg, op, cg_convert(cg, a, ty, w), cg_convert(cg, b, ty, w), w, sp);
        return ir_ops[op].flags & OF_CMP ? r : cg_convert(cg, r, w, ty);
    }
    int f = cg_is_float(ty), s = cg_is_signed(ty);
    switch (op) {
    case OP_ADD: return f ? LLVMBuildFAdd(B, a, b, "") : LLVMBuildAdd(B, a, b, "");
    case OP_SUB: return f ? LLVMBuildFSub(B, a, b, "") : LLVMBuildSub(B, a, b, "");
    case OP_MUL: return f ? LLVMBuildFMul(B, a, b, "") : LLVMBuildMul(B, a, b, "");
    case OP_DIV: return f ? cg_fdiv(cg, a, b, ty) : s ? LLVMBuildSDiv(B, a, b, "") : LLVMBuildUDiv(B, a, b, "");
    case OP_MOD: return f ? LLVMBuildFRem(B, a, b, "") : s ? LLVMBuildSRem(B, a, b, "") : LLVMBuildURem(B, a, b, "");
    case OP_SHL: return LLVMBuildShl(B, a, b, "");
    case OP_SHR: return s ? LLVMBuildAShr(B, a, b, "") : LLVMBuildLShr(B, a, b, "");
    case OP_BAND: case OP_AND: return LLVMBuildAnd(B, a, b, "");
    case OP_BOR: case OP_OR: return LLVMBuildOr(B, a, b, "");
    case OP_BXOR: return LLVMBuildXor(B, a, b, "");
    case OP_MAX: return cg_minmax(cg, 1, a, b, ty);
    case OP_MIN: return cg_minmax(cg, 0, a, b, ty);
    case OP_LT: return f ? LLVMBuildFCmp(B, LLVMRealOLT, a, b, "") : LLVMBuildICmp(B, s ? LLVMIntSLT : LLVMIntULT, a, b, "");
    case OP_LE: return f ? LLVMBuildFCmp(B, LLVMRealOLE, a, b, "") : LLVMBuildICmp(B, s ? LLVMIntSLE : LLVMIntULE, a, b, "");
    case OP_GT: return f ? LLVMBuildFCmp(B, LLVMRealOGT, a, b, "") : LLVMBuildICmp(B, s ? LLVMIntSGT : LLVMIntUGT, a, b, "");
    case OP_GE: return f ? LLVMBuildFCmp(B, LLVMRealOGE, a, b, "") : LLVMBuildICmp(B, s ? LLVMIntSGE : LLVMIntUGE, a, b, "");
    case OP_EQ: return f ? LLVMBuildFCmp(B, LLVMRealOEQ, a, b, "") : LLVMBuildICmp(B, LLVMIntEQ, a, b, "");
    case OP_NE: return f ? LLVMBuildFCmp(B, LLVMRealUNE, a, b, "") : LLVMBuildICmp(B, LLVMIntNE, a, b, "");
    default: ir_bug(cg->ctx, "cg_binop: op %s", ir_ops[op].name);
    }
}

/* x ^ y: small constant integer exponents multiply; otherwise exp2(y log2 x) */
static LLVMValueRef power(Cg *cg, Node *n, CgTy ty)
{
    int64_t e;
    Node *bn = ir_get(cg->k, n->b);
    if (bn->op == OP_INT && cg_const_int(cg, n->b, &e) && e >= 0 && e <= 16) {
        LLVMValueRef x = cg_expr(cg, n->a, ty), r = NULL;
        for (int64_t i = 0; i < e; i++)
            r = r ? cg_binop(cg, OP_MUL, r, x, ty, n->span) : x;
        if (r)
            return r;
        return cg_is_float(ty) ? cg_convert(cg, LLVMConstReal(cg->tf32, 1.0), cg_scalar(DT_F32), ty)
                               : cg_convert(cg, cg_i32(cg, 1), cg_scalar(DT_I32), ty);
    }
    if (!cg_is_float(ty)) {
        cg_unsupported(cg, cg->at, "integer power with a non-constant exponent");
        return undef_of(cg, ty);
    }
    LLVMValueRef x = cg_expr(cg, n->a, ty), y = cg_expr(cg, n->b, ty);
    LLVMValueRef l = cg_math(cg, OP_LOG2, &x, 1, ty, cg->at);
    LLVMValueRef p = cg_binop(cg, OP_MUL, y, l, ty, n->span);
    return cg_math(cg, OP_EXP2, &p, 1, ty, cg->at);
}

/* a && b, a || b on scalars: short-circuit (the right side may load) */
static LLVMValueRef logic(Cg *cg, Node *n, CgTy ty)
{
    if (ty.lanes > 1)
        return cg_binop(cg, (Op)n->op, cg_expr(cg, n->a, ty), cg_expr(cg, n->b, ty), ty, n->span);
    LLVMValueRef a = cg_cond(cg, n->a);
    LLVMBasicBlockRef from = LLVMGetInsertBlock(cg->b);
    LLVMBasicBlockRef rhs = cg_block(cg, "rhs"), join = cg_block(cg, "join");
    if (n->op == OP_AND)
        LLVMBuildCondBr(cg->b, a, rhs, join);
    else
        LLVMBuildCondBr(cg->b, a, join, rhs);
    LLVMPositionBuilderAtEnd(cg->b, rhs);
    LLVMValueRef bv = cg_cond(cg, n->b);
    LLVMBasicBlockRef rhs_end = LLVMGetInsertBlock(cg->b);
    LLVMBuildBr(cg->b, join);
    LLVMPositionBuilderAtEnd(cg->b, join);
    LLVMValueRef phi = LLVMBuildPhi(cg->b, cg->ti1, "");
    LLVMValueRef vals[2] = {LLVMConstInt(cg->ti1, n->op == OP_OR, 0), bv};
    LLVMBasicBlockRef bbs[2] = {from, rhs_end};
    LLVMAddIncoming(phi, vals, bbs, 2);
    return phi;
}

static LLVMValueRef special(Cg *cg, SpecialReg r)
{
    switch (r) {
    case SR_THREAD_X: return cg->t->tid_x(cg);
    case SR_THREAD_Y: case SR_THREAD_Z: return cg_i32(cg, 0); /* blocks are 1-D */
    case SR_BLOCK_X: return cg->t->ctaid(cg, 0);
    case SR_BLOCK_Y: return cg->t->ctaid(cg, 1);
    case SR_BLOCK_Z: return cg->t->ctaid(cg, 2);
    case SR_LANE: return cg_lane(cg);
    case SR_WARP: return cg_warp_id(cg);
    case SR_WG: {
        uint32_t per = (uint32_t)tg_unit_threads(cg->tg, UNIT_WARPGROUPS);
        return cg->t->uniform(cg, LLVMBuildUDiv(cg->b, cg->t->tid_x(cg), cg_i32(cg, per), ""));
    }
    case SR_NTHREADS: return cg_i32(cg, cg->block_threads);
    default: return cg_i32(cg, 0);
    }
}

static NodeId arg_at(Cg *cg, const Node *n, uint32_t i)
{
    return i < n->n ? ir_list_at(cg->k, n, i) : 0;
}

static LLVMValueRef builtin(Cg *cg, NodeId e, Node *n, CgTy ty)
{
    Op op = (Op)n->op;
    int nargs = ir_ops[op].nargs;
    if (nargs >= 0 && n->n != (uint32_t)nargs) {
        cg_unsupported(cg, e, ir_fmt(cg->ctx, "%s with %u arguments", ir_ops[op].spelling, n->n));
        return undef_of(cg, ty);
    }
    switch (op) {
    case OP_SELECT: {
        NodeId c = arg_at(cg, n, 0);
        CgTy ct = cg_ty(cg, c);
        LLVMValueRef cv = ct.lanes > 1 ? cg_expr(cg, c, (CgTy){DT_BOOL, ct.lanes, 0}) : cg_cond(cg, c);
        if (ct.lanes > 1 && ct.lanes != ty.lanes) {
            cg_unsupported(cg, e, "select with a condition of another lane count");
            return undef_of(cg, ty);
        }
        LLVMValueRef a = cg_expr(cg, arg_at(cg, n, 1), ty), b = cg_expr(cg, arg_at(cg, n, 2), ty);
        return LLVMBuildSelect(cg->b, cv, a, b, "");
    }
    case OP_CDIV: {
        LLVMValueRef a = cg_expr(cg, arg_at(cg, n, 0), ty), b = cg_expr(cg, arg_at(cg, n, 1), ty);
        LLVMValueRef one = cg_convert(cg, cg_i32(cg, 1), cg_scalar(DT_I32), ty);
        LLVMValueRef s = LLVMBuildSub(cg->b, LLVMBuildAdd(cg->b, a, b, ""), one, "");
        return cg_binop(cg, OP_DIV, s, b, ty, n->span);
    }
    case OP_DOT: {
        CgTy ta, tb;
        LLVMValueRef a = cg_expr_nat(cg, arg_at(cg, n, 0), &ta);
        LLVMValueRef b = cg_expr_nat(cg, arg_at(cg, n, 1), &tb);
        return cg_dot(cg, a, ta, b, tb, ty);
    }
    case OP_HSUM: case OP_HMAX: {
        CgTy ta;
        LLVMValueRef a = cg_expr_nat(cg, arg_at(cg, n, 0), &ta);
        return cg_horizontal(cg, op, a, ta, ty);
    }
    case OP_SHFL_XOR: case OP_SHFL_DOWN: case OP_SHFL_UP: case OP_SHFL_IDX: {
        LLVMValueRef v = cg_expr(cg, arg_at(cg, n, 0), ty);
        LLVMValueRef a = cg_expr(cg, arg_at(cg, n, 1), cg_scalar(DT_I32));
        int kind = op == OP_SHFL_XOR ? SHFL_XOR : op == OP_SHFL_DOWN ? SHFL_DOWN
                 : op == OP_SHFL_UP ? SHFL_UP : SHFL_IDX;
        return cg_shuffle(cg, kind, v, ty, a);
    }
    case OP_WARP_ADD: case OP_WARP_MAX: case OP_WARP_MIN:
        return cg_warp_reduce(cg, op, cg_expr(cg, arg_at(cg, n, 0), ty), ty);
    case OP_BLOCK_ADD: case OP_BLOCK_MAX: case OP_BLOCK_MIN:
        return cg_block_reduce(cg, op, cg_expr(cg, arg_at(cg, n, 0), ty), ty);
    default: break;
    }
    if (ir_ops[op].flags & OF_MATH) {
        LLVMValueRef a[3];
        uint32_t cnt = n->n > 3 ? 3 : n->n;
        for (uint32_t i = 0; i < cnt; i++)
            a[i] = cg_expr(cg, arg_at(cg, n, i), ty);
        return cg_math(cg, op, a, cnt, ty, e);
    }
    cg_unsupported(cg, e, ir_fmt(cg->ctx, "'%s'", ir_ops[op].spelling));
    return undef_of(cg, ty);
}

static LLVMValueRef name_value(Cg *cg, NodeId e, Node *n, CgTy ty)
{
    Node *d = ir_get(cg->k, n->decl);
    switch ((Op)d->op) {
    case OP_PARAM: {
        int64_t v = 0;
        if (!cg_const_int(cg, n->decl, &v) && !ce_const_int(cg->ctx, cg->k, d->a, &v)) {
            diag_report(cg->ctx, E0904, n->span, "the value of param '%s' is not a compile-time "
                        "integer", ir_symstr(cg->ctx, d->name));
            cg->failed = 1;
        }
        return cg_i32(cg, v);
    }
    case OP_VAR: case OP_REG:
        if (d->a && ir_get(cg->k, d->a)->n) {
            cg_unsupported(cg, e, "an array variable used as a value");
            return undef_of(cg, ty);
        }
        return LLVMBuildLoad2(cg->b, cg_llvm_type(cg, ty), cg->val[n->decl], "");
    case OP_DIM: case OP_LET: case OP_FOR:
        if (cg->val[n->decl])
            return cg->val[n->decl];
        break;
    case OP_ARG:
        if (ir_get(cg->k, d->a)->op != OP_GTYPE && cg->val[n->decl])
            return cg->val[n->decl];
        cg_unsupported(cg, e, "a tensor used as a value (index it, or load from it)");
        return undef_of(cg, ty);
    default: break;
    }
    cg_unsupported(cg, e, ir_fmt(cg->ctx, "the name '%s' here", ir_symstr(cg->ctx, n->name)));
    return undef_of(cg, ty);
}

LLVMValueRef cg_expr_nat(Cg *cg, NodeId e, CgTy *out)
{
    Kernel *k = cg->k;
    Node *n = ir_get(k, e);
    CgTy ty = cg_ty(cg, e);
    *out = ty;
    NodeId saved = cg->at;
    cg->at = e;
    LLVMValueRef r = NULL;
    switch ((Op)n->op) {
    case OP_INT: case OP_FLOAT: case OP_BOOL: r = lit(cg, n, ty); break;
    case OP_NAME:
        if (!n->decl) {
            cg_unsupported(cg, e, "an unresolved name");
            r = undef_of(cg, ty);
        } else { /* the verifier may have typed the use wider than its declaration */
            CgTy dt = cg_decl_ty(cg, n->decl);
            dt.weak = 0;
            if (ir_get(k, n->decl)->op == OP_PARAM)
                dt = cg_scalar(DT_I32);
            r = cg_convert(cg, name_value(cg, e, n, dt), dt, ty);
        }
        break;
    case OP_SPECIAL: r = special(cg, (SpecialReg)n->sub); break;
    case OP_NEG: {
        LLVMValueRef a = cg_expr(cg, n->a, ty);
        if (ty.dt == DT_F16 || ty.dt == DT_BF16 || cg_is_float(ty))
            r = LLVMBuildFNeg(cg->b, a, "");
        else
            r = LLVMBuildNeg(cg->b, a, "");
        break;
    }
    case OP_NOT: {
        CgTy at = cg_ty(cg, n->a);
        if (ty.dt == DT_BOOL && at.lanes == 1)
            r = LLVMBuildNot(cg->b, cg_cond(cg, n->a), "");
        else
            r = LLVMBuildNot(cg->b, cg_expr(cg, n->a, ty), "");
        break;
    }
    case OP_CAST: {
        CgTy at;
        LLVMValueRef a = cg_expr_nat(cg, n->a, &at);
        cg->at = e;
        r = cg_convert(cg, a, at, ty);
        break;
    }
    case OP_LOAD: {
        CgRef ref;
        if (!cg_ref(cg, n->a, &ref)) {
            r = undef_of(cg, ty);
            break;
        }
        LLVMValueRef v = cg_load(cg, &ref, n->b, n->span);
        cg->at = e;
        r = cg_convert(cg, v, ref.elem, ty);
        break;
    }
    case OP_INDEX: {
        if (cg_is_lane_ref(cg, e)) { /* one lane of a vector value */
            CgTy vt;
            LLVMValueRef v = cg_expr_nat(cg, n->a, &vt);
            LLVMValueRef ix = cg_expr(cg, ir_list_at(k, n, 0), cg_scalar(DT_I32));
            CgTy st = vt;
            st.lanes = 1;
            r = vt.lanes > 1 ? LLVMBuildExtractElement(cg->b, v, ix, "") : v;
            cg->at = e;
            r = cg_convert(cg, r, st, ty);
            break;
        }
        CgRef ref;
        r = cg_ref(cg, e, &ref) ? cg_convert(cg, cg_load(cg, &ref, 0, n->span), ref.elem, ty) : undef_of(cg, ty);
        break;
    }
    case OP_POW: r = power(cg, n, ty); break;
    case OP_AND: case OP_OR: r = logic(cg, n, ty); break;
    default:
        if (ir_ops[n->op].cls == OC_BIN) {
            CgTy ot = ty;
            if (ir_ops[n->op].flags & OF_CMP) {
                ot = cg_unify(cg_ty(cg, n->a), cg_ty(cg, n->b));
                if (ot.weak && ot.dt == DT_I32)
                    ot.weak = 0;
            }
            if ((n->op == OP_SHL || n->op == OP_SHR) && !cg_is_int(ot)) {
                cg_unsupported(cg, e, "a shift of a float");
                r = undef_of(cg, ty);
                break;
            }
            LLVMValueRef a = cg_expr(cg, n->a, ot), b = cg_expr(cg, n->b, ot);
            r = cg_binop(cg, (Op)n->op, a, b, ot, n->span);
        } else if (ir_ops[n->op].cls == OC_BUILTIN) {
            r = builtin(cg, e, n, ty);
        } else if (ir_ops[n->op].cls == OC_LOW) {
            r = cg_lowered_expr(cg, e, ty);
        } else {
            const char *sp = ir_ops[n->op].spelling;
            cg_unsupported(cg, e, *sp ? ir_fmt(cg->ctx, "'%s'", sp) : ir_fmt(cg->ctx, "this expression (%s)", ir_ops[n->op].name));
            r = undef_of(cg, ty);
        }
    }
    cg->at = saved;
    return r;
}

LLVMValueRef cg_expr(Cg *cg, NodeId e, CgTy want)
{
    Node *n = ir_get(cg->k, e);
    want.weak = 0;
    if (n->op == OP_INT || n->op == OP_FLOAT)
        return lit(cg, n, want);
    CgTy t;
    LLVMValueRef v = cg_expr_nat(cg, e, &t);
    NodeId saved = cg->at;
    cg->at = e;
    v = cg_convert(cg, v, t, want);
    cg->at = saved;
    return v;
}

LLVMValueRef cg_cond(Cg *cg, NodeId e)
{
    CgTy t = cg_ty(cg, e);
    if (t.lanes > 1) {
        cg_unsupported(cg, e, "a vector condition here");
        return LLVMConstInt(cg->ti1, 0, 0);
    }
    return cg_expr(cg, e, cg_scalar(DT_BOOL));
}
