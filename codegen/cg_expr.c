/* cg_expr.c — lowering of expressions: literals, names, special registers,
 * operators, casts, select, loads, builtins and cross-thread operations. Every
 * value is produced in its node's type (cg_ty); operands arrive in the types
 * their operation computes in (passes/legalize.c), so the only conversion is
 * OP_CAST. */
#include "cg_int.h"

static LLVMValueRef undef_of(Cg *cg, CgTy t)
{
    return LLVMGetUndef(cg_llvm_type(cg, t));
}

/* a literal: the constant of its type (an INT in a float type is its value converted) */
static LLVMValueRef lit(Cg *cg, const Node *n, CgTy ty)
{
    CgTy s = cg_scalar((DType)ty.dt);
    LLVMTypeRef t = cg_llvm_type(cg, s);
    LLVMValueRef c;
    double f = n->op == OP_FLOAT ? n->v.f : (double)n->v.i;
    if (cg_is_fp8((DType)ty.dt)) /* an i8 bit pattern (ir/numfmt.c) */
        c = LLVMConstInt(t, ir_float_bits((DType)ty.dt, f), 0);
    else if (cg_is_float(ty))
        c = LLVMConstReal(t, f);
    else if (ty.dt == DT_BOOL)
        c = LLVMConstInt(t, n->v.i != 0, 0);
    else
        c = LLVMConstInt(t, (unsigned long long)n->v.i, 1);
    return ty.lanes > 1 ? cg_splat(cg, c, ty.lanes) : c;
}

/* f32/f64 `a * b + c` may become one fma (tir.md 9.1): the `contract` flag on the
 * multiply and the add lets LLVM and ptxas fuse them. 16-bit floats never get here
 * (they compute in f32 and round after each operation, cg_binop below) */
static LLVMValueRef contract(Cg *cg, LLVMValueRef v)
{
    if (!cg->no_contract && LLVMIsAInstruction(v))
        LLVMSetFastMathFlags(v, LLVMFastMathAllowContract);
    return v;
}

LLVMValueRef cg_binop(Cg *cg, Op op, LLVMValueRef a, LLVMValueRef b, CgTy ty, Span sp)
{
    (void)sp;
    LLVMBuilderRef B = cg->b;
    if (ty.dt == DT_F16 || ty.dt == DT_BF16) { /* in f32, rounded once */
        CgTy w = ty;
        w.dt = DT_F32;
        int nc = cg->no_contract;
        cg->no_contract = 1;   /* rounded to 16 bits after each operation: never fused */
        LLVMValueRef r = cg_binop(cg, op, cg_convert(cg, a, ty, w), cg_convert(cg, b, ty, w), w, sp);
        cg->no_contract = nc;
        return ir_ops[op].flags & OF_CMP ? r : cg_convert(cg, r, w, ty);
    }
    int f = cg_is_float(ty), s = cg_is_signed(ty);
    switch (op) {
    case OP_ADD: return f ? contract(cg, LLVMBuildFAdd(B, a, b, "")) : LLVMBuildAdd(B, a, b, "");
    case OP_SUB: return f ? contract(cg, LLVMBuildFSub(B, a, b, "")) : LLVMBuildSub(B, a, b, "");
    case OP_MUL: return f ? contract(cg, LLVMBuildFMul(B, a, b, "")) : LLVMBuildMul(B, a, b, "");
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

/* x ^ e: e is a constant integer 0..16 (the verifier's rule in kernel code): multiplies */
static LLVMValueRef power(Cg *cg, Node *n, CgTy ty)
{
    int64_t e;
    if (!cg_const_int(cg, n->b, &e) || e < 0 || e > 16) {
        cg_unsupported(cg, cg->at, "a power whose exponent is not a constant 0..16");
        return undef_of(cg, ty);
    }
    LLVMValueRef x = cg_expr_of(cg, n->a, ty), r = NULL;
    for (int64_t i = 0; i < e; i++)
        r = r ? cg_binop(cg, OP_MUL, r, x, ty, n->span) : x;
    if (r)
        return r;
    LLVMValueRef one = cg_is_float(ty) ? LLVMConstReal(cg_scalar_type(cg, (DType)ty.dt), 1.0)
                                       : LLVMConstInt(cg_scalar_type(cg, (DType)ty.dt), 1, 0);
    return cg_splat(cg, one, ty.lanes);
}

/* a && b, a || b on scalars: short-circuit (the right side may load) */
static LLVMValueRef logic(Cg *cg, Node *n, CgTy ty)
{
    if (ty.lanes > 1)
        return cg_binop(cg, (Op)n->op, cg_expr_of(cg, n->a, ty), cg_expr_of(cg, n->b, ty), ty, n->span);
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
    case SR_GRID_X: return cg->t->nctaid(cg, 0);
    case SR_GRID_Y: return cg->t->nctaid(cg, 1);
    case SR_GRID_Z: return cg->t->nctaid(cg, 2);
    case SR_LANE: return cg_lane(cg);
    case SR_WARP: return cg_warp_id(cg);
    case SR_WG: {
        uint32_t per = (uint32_t)tg_unit_threads(cg->tg, UNIT_WARPGROUPS);
        return cg->t->uniform(cg, LLVMBuildUDiv(cg->b, cg->t->tid_x(cg), cg_i32(cg, per), ""));
    }
    case SR_NTHREADS: return cg_i32(cg, cg->block_threads);
    case SR_SM_COUNT: /* the verifier allows it in the grid clause only (E0338) */
        ir_bug(cg->ctx, "`sm.count` reached code generation");
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
        if (ct.lanes > 1 && ct.lanes != ty.lanes) {
            cg_unsupported(cg, e, "select with a condition of another lane count");
            return undef_of(cg, ty);
        }
        LLVMValueRef cv = ct.lanes > 1 ? cg_expr_of(cg, c, (CgTy){DT_BOOL, ct.lanes}) : cg_cond(cg, c);
        LLVMValueRef a = cg_expr_of(cg, arg_at(cg, n, 1), ty), b = cg_expr_of(cg, arg_at(cg, n, 2), ty);
        return LLVMBuildSelect(cg->b, cv, a, b, "");
    }
    case OP_CDIV: {
        LLVMValueRef a = cg_expr_of(cg, arg_at(cg, n, 0), ty), b = cg_expr_of(cg, arg_at(cg, n, 1), ty);
        LLVMValueRef one = cg_splat(cg, LLVMConstInt(cg_scalar_type(cg, (DType)ty.dt), 1, 0), ty.lanes);
        LLVMValueRef s = LLVMBuildSub(cg->b, LLVMBuildAdd(cg->b, a, b, ""), one, "");
        return cg_binop(cg, OP_DIV, s, b, ty, n->span);
    }
    case OP_DOT: {
        NodeId a = arg_at(cg, n, 0);
        CgTy vt = cg_ty(cg, a);
        vt.dt = ty.dt;
        return cg_dot(cg, cg_expr_of(cg, a, vt), cg_expr_of(cg, arg_at(cg, n, 1), vt), vt);
    }
    case OP_HSUM: case OP_HMAX: case OP_HMIN: {
        NodeId a = arg_at(cg, n, 0);
        CgTy vt = cg_ty(cg, a);
        vt.dt = ty.dt;
        return cg_horizontal(cg, op, cg_expr_of(cg, a, vt), vt);
    }
    case OP_SHFL_XOR: case OP_SHFL_DOWN: case OP_SHFL_UP: case OP_SHFL_IDX: {
        LLVMValueRef v = cg_expr_of(cg, arg_at(cg, n, 0), ty);
        LLVMValueRef a = cg_expr_of(cg, arg_at(cg, n, 1), cg_scalar(DT_I32));
        int kind = op == OP_SHFL_XOR ? SHFL_XOR : op == OP_SHFL_DOWN ? SHFL_DOWN
                 : op == OP_SHFL_UP ? SHFL_UP : SHFL_IDX;
        return cg_shuffle(cg, kind, v, ty, a);
    }
    case OP_WARP_ADD: case OP_WARP_MAX: case OP_WARP_MIN:
        return cg_warp_reduce(cg, op, cg_expr_of(cg, arg_at(cg, n, 0), ty), ty);
    case OP_BLOCK_ADD: case OP_BLOCK_MAX: case OP_BLOCK_MIN:
        return cg_block_reduce(cg, op, cg_expr_of(cg, arg_at(cg, n, 0), ty), ty);
    default: break;
    }
    if (ir_ops[op].flags & OF_MATH) {
        LLVMValueRef a[3];
        uint32_t cnt = n->n > 3 ? 3 : n->n;
        for (uint32_t i = 0; i < cnt; i++)
            a[i] = cg_expr_of(cg, arg_at(cg, n, i), ty);
        return cg_math(cg, op, a, cnt, ty, e);
    }
    cg_unsupported(cg, e, ir_fmt(cg->ctx, "'%s'", ir_ops[op].spelling));
    return undef_of(cg, ty);
}

/* a name's value: the SSA value or the alloca its declaration binds (rule 3 of
 * legalize: the name has its declaration's type) */
static LLVMValueRef name_value(Cg *cg, NodeId e, Node *n, CgTy ty)
{
    Node *d = ir_get(cg->k, n->decl);
    switch ((Op)d->op) {
    case OP_PARAM:
        ir_bug(cg->ctx, "code generation: param '%s' is not bound; run pass_run_all first",
               ir_symstr(cg->ctx, d->name));
    case OP_VAR: case OP_REG:
        if (cg->k->types[d->type].kind == TK_TILE) {
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

/* a binary operator: the operands have the type it computes in (a comparison's:
 * their common type, the result bool) */
static LLVMValueRef binary(Cg *cg, NodeId e, Node *n, CgTy ty)
{
    CgTy ot = ir_ops[n->op].flags & OF_CMP ? cg_ty(cg, n->a) : ty;
    if ((n->op == OP_SHL || n->op == OP_SHR) && !cg_is_int(ot)) {
        cg_unsupported(cg, e, "a shift of a float");
        return undef_of(cg, ty);
    }
    LLVMValueRef a = cg_expr_of(cg, n->a, ot), b = cg_expr_of(cg, n->b, ot);
    return cg_binop(cg, (Op)n->op, a, b, ot, n->span);
}

LLVMValueRef cg_expr(Cg *cg, NodeId e)
{
    Kernel *k = cg->k;
    Node *n = ir_get(k, e);
    CgTy ty = cg_ty(cg, e);
    NodeId saved = cg->at;
    cg->at = e;
    LLVMValueRef r = NULL;
    switch ((Op)n->op) {
    case OP_INT: case OP_FLOAT: case OP_BOOL: r = lit(cg, n, ty); break;
    case OP_NAME:
        if (!n->decl) {
            cg_unsupported(cg, e, "an unresolved name");
            r = undef_of(cg, ty);
        } else {
            r = name_value(cg, e, n, ty);
        }
        break;
    case OP_SPECIAL:
        r = (n->flags & NF_FRESH) && n->sub == SR_THREAD_X && cg->t->tid_x_fresh ? cg->t->tid_x_fresh(cg)
                                                                              : special(cg, (SpecialReg)n->sub);
        break;
    case OP_NEG: {
        LLVMValueRef a = cg_expr_of(cg, n->a, ty);
        r = cg_is_float(ty) ? LLVMBuildFNeg(cg->b, a, "") : LLVMBuildNeg(cg->b, a, "");
        break;
    }
    case OP_NOT:
        r = LLVMBuildNot(cg->b, cg_expr_of(cg, n->a, ty), "");
        break;
    case OP_CAST: /* the one conversion: its operand's type -> its own */
        r = cg_convert(cg, cg_expr(cg, n->a), cg_ty(cg, n->a), ty);
        break;
    case OP_LOAD: case OP_INDEX: { /* a load yields the memory's elements (no `as`) */
        CgRef ref;
        NodeId at = n->op == OP_LOAD ? n->a : e;
        if (!cg_ref(cg, at, ty, &ref)) {
            r = undef_of(cg, ty);
            break;
        }
        if (n->op == OP_LOAD && n->sub) /* atomic.add(ref, v) / atomic.exch(ref, v): the old element */
            r = cg_atomic(cg, &ref, (Op)n->sub, cg_expr_of(cg, n->c, ty), n->b);
        else
            r = cg_load(cg, &ref, n->op == OP_LOAD ? n->b : 0, n->span);
        break;
    }
    case OP_POW: r = power(cg, n, ty); break;
    case OP_AND: case OP_OR: r = logic(cg, n, ty); break;
    default:
        if (ir_ops[n->op].cls == OC_BIN) {
            r = binary(cg, e, n, ty);
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

LLVMValueRef cg_expr_of(Cg *cg, NodeId e, CgTy expect)
{
    CgTy t = cg_ty(cg, e);
    if (!cg_same(t, expect))
        ir_bug(cg->ctx, "code generation: node %u (%s) is %s x%u where %s x%u is expected: the "
               "legalize invariant (passes/legalize.c) does not hold", e, ir_ops[ir_get(cg->k, e)->op].name,
               ir_dtypes[t.dt].spelling, t.lanes, ir_dtypes[expect.dt].spelling, expect.lanes);
    return cg_expr(cg, e);
}

LLVMValueRef cg_cond(Cg *cg, NodeId e)
{
    if (cg_ty(cg, e).lanes > 1) { /* a per-lane mask (boolxL) */
        cg_unsupported(cg, e, "a vector condition here");
        return LLVMConstInt(cg->ti1, 0, 0);
    }
    return cg_expr_of(cg, e, cg_scalar(DT_BOOL));
}
