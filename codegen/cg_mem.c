/* cg_mem.c — memory references: element addresses of global tensors, shared
 * arrays and thread-private arrays (x[i, j : +8]), loads and stores of
 * scalars and vectors, and masks. Shared tiles are slots of the launch plan's
 * buffer, addressed with their panels and swizzle (cg_lower.c).
 *
 * Addressing: each index is an integer of its own type (legalize keeps it),
 * extended to i64 (sign for signed types, zero for unsigned) and combined with
 * i64 strides (row-major from the dims, or the type's `strides`); extents and
 * element types come from the declaration's Node.type.
 * A vector access x[.., i : +E] reads E consecutive elements along the last
 * dim (stride 1) as one access aligned to its size (at most 16 bytes): the
 * language requires vector accesses to be naturally aligned (the verifier
 * proves it from `assume`s; a misaligned one faults). With a non-unit last
 * stride it becomes E scalar accesses. A masked global access of 1 to 16
 * bytes is one predicated instruction on NVPTX (`@p ld.global`, the value
 * zeroed first; `@p st.global`); other masked accesses (shared, strided, AMD,
 * or CAKE_NO_PREDICATE set) branch around the access. A masked-off load
 * yields 0. */
#include <string.h>
#include "cg_int.h"

LLVMValueRef cg_index64(Cg *cg, NodeId ix)
{
    CgTy t = cg_ty(cg, ix);
    LLVMValueRef v = cg_expr(cg, ix);
    if (ir_dtypes[t.dt].bits >= 64)
        return v;
    return cg_is_signed(t) ? LLVMBuildSExt(cg->b, v, cg->ti64, "") : LLVMBuildZExt(cg->b, v, cg->ti64, "");
}

static uint32_t pow2_floor(uint32_t x)
{
    uint32_t p = 1;
    while (p * 2 <= x)
        p *= 2;
    return p;
}

/* an index as i32: shared-memory offsets are 32-bit */
static LLVMValueRef index32(Cg *cg, NodeId ix)
{
    return LLVMBuildTrunc(cg->b, cg_index64(cg, ix), cg->ti32, "");
}

/* a shared tile element (or a vector along its last dim): the plan's slot,
 * panels and swizzle (cg_smem_offset) */
static int shared_ref(Cg *cg, NodeId refid, Node *r, NodeId decl, CgTy value, CgRef *out)
{
    Kernel *k = cg->k;
    const Type *t = &k->types[ir_get(k, decl)->type];
    LLVMValueRef idx[IR_MAX_RANK];
    int64_t lanes = 1;
    if (r->n != t->rank || r->n > IR_MAX_RANK) {
        cg_unsupported(cg, refid, ir_fmt(cg->ctx, "indexing %u of the %u dims (tile views)", r->n, t->rank));
        return 0;
    }
    for (uint32_t i = 0; i < r->n; i++) {
        NodeId ix = ir_list_at(k, r, i);
        Node *xn = ir_get(k, ix);
        NodeId start = ix;
        if (xn->op == OP_COLON || (xn->op == OP_SLICE && i + 1 != r->n)) {
            cg_unsupported(cg, ix, "a tile view here (a slice other than the last dim's)");
            return 0;
        }
        if (xn->op == OP_SLICE) {
            if (!cg_const_int(cg, xn->b, &lanes) || lanes < 1 || lanes > 64) {
                cg_unsupported(cg, ix, "a slice whose extent is not a constant in 1..64");
                return 0;
            }
            start = xn->a;
        }
        idx[i] = index32(cg, start);
    }
    CgTy elem = {t->dtype, (uint8_t)(t->lanes > 1 ? t->lanes : lanes)};
    if (value.dt != elem.dt || value.lanes != elem.lanes)
        ir_bug(cg->ctx, "code generation: a shared access of %u %s element(s) moves a %s x%u value",
               elem.lanes, ir_dtypes[elem.dt].spelling, ir_dtypes[value.dt].spelling, value.lanes);
    out->ptr = cg_smem_ptr(cg, cg_smem_offset(cg, decl, idx, r->n, 0));
    out->elem = elem;
    out->space = SP_SHARED;
    out->contiguous = 1;
    uint32_t eb = (uint32_t)(ir_dtypes[elem.dt].bits + 7) / 8;
    uint32_t al = pow2_floor((eb ? eb : 1) * elem.lanes);
    out->align = al > 16 ? 16 : al;
    return 1;
}

/* is v a pointer parameter marked readonly (builder.c: never stored to)? */
static int param_readonly(Cg *cg, LLVMValueRef v)
{
    unsigned ro = LLVMGetEnumAttributeKindForName("readonly", 8);
    for (unsigned i = 0, n = LLVMCountParams(cg->fn); i < n; i++)
        if (LLVMGetParam(cg->fn, i) == v)
            return LLVMGetEnumAttributeAtIndex(cg->fn, i + 1, ro) != NULL;
    return 0;
}

int cg_ref(Cg *cg, NodeId refid, CgTy value, CgRef *out)
{
    Kernel *k = cg->k;
    Node *r = ir_get(k, refid);
    memset(out, 0, sizeof *out);
    if (r->op != OP_INDEX || ir_get(k, r->a)->op != OP_NAME || !ir_get(k, r->a)->decl) {
        cg_unsupported(cg, refid, "this memory reference (only name[indices] is supported)");
        return 0;
    }
    NodeId decl = ir_get(k, r->a)->decl;
    Node *d = ir_get(k, decl);
    Node *t = d->a ? ir_get(k, d->a) : NULL;
    const Type *bt = &k->types[d->type];   /* the tensor, shared tile or array */
    uint32_t rank = bt->rank, strides_at = 0;
    int has_strides = 0;
    LLVMValueRef base = NULL;
    CgTy elem = {bt->dtype, 1};
    uint8_t elem_lanes = bt->lanes;   /* arrays of vectors: reg xs: f32x4[4] */
    if (d->op == OP_ARG && t && t->op == OP_GTYPE) {
        has_strides = t->n > rank;
        strides_at = t->list + rank;
        base = cg->val[decl];
        out->space = SP_GLOBAL;
        out->readonly = param_readonly(cg, base);
    } else if (d->op == OP_SHARED && bt->kind == TK_TILE) {
        return shared_ref(cg, refid, r, decl, value, out);
    } else if ((d->op == OP_VAR || d->op == OP_REG) && bt->kind == TK_TILE) {
        base = cg->val[decl];
        out->space = SP_REG;
    } else {
        cg_unsupported(cg, refid, ir_fmt(cg->ctx, "indexing '%s'", ir_symstr(cg->ctx, d->name)));
        return 0;
    }
    if (!base) {
        if (d->flags & NF_ERROR) { /* its declaration was reported: no follow-on error per use */
            cg->failed = 1;
            return 0;
        }
        cg_unsupported(cg, refid, "a reference to a declaration not lowered yet");
        return 0;
    }
    if (r->n != rank) {
        cg_unsupported(cg, refid, ir_fmt(cg->ctx, "indexing %u of the %u dims (tile views)", r->n, rank));
        return 0;
    }
    int64_t lanes = 1;
    LLVMValueRef off = NULL, last_stride = NULL;
    for (uint32_t i = 0; i < rank; i++) {
        NodeId ix = ir_list_at(k, r, i);
        Node *xn = ir_get(k, ix);
        NodeId start = ix;
        if (xn->op == OP_COLON) {
            cg_unsupported(cg, ix, "a whole-dimension index ':' (tiles)");
            return 0;
        }
        if (xn->op == OP_SLICE) {
            int64_t e = 0;
            if (!cg_const_int(cg, xn->b, &e) || e < 1 || e > 64) {
                cg_unsupported(cg, ix, "a slice whose extent is not a constant in 1..64");
                return 0;
            }
            if (e > 1 && elem_lanes > 1) {
                cg_unsupported(cg, ix, "a slice of an array of vectors");
                return 0;
            }
            if (e > 1 && i + 1 != rank) {
                cg_unsupported(cg, ix, "a slice over a dim other than the last (tiles)");
                return 0;
            }
            lanes = e;
            start = xn->a;
        }
        LLVMValueRef iv = cg_index64(cg, start);
        if (has_strides) {
            LLVMValueRef st = cg_index64(cg, k->lists[strides_at + i]);
            LLVMValueRef term = LLVMBuildMul(cg->b, iv, st, "");
            off = off ? LLVMBuildAdd(cg->b, off, term, "") : term;
            if (i + 1 == rank)
                last_stride = st;
        } else if (!off) {
            off = iv;
        } else { /* Horner: off = off * dim_i + i_i */
            LLVMValueRef dim = out->space == SP_GLOBAL ? cg_index64(cg, ir_list_at(k, t, i))
                                                       : cg_i64(cg, bt->shape[i]);
            off = LLVMBuildAdd(cg->b, LLVMBuildMul(cg->b, off, dim, ""), iv, "");
        }
    }
    if (elem_lanes > 1) {
        elem.lanes = elem_lanes;
        lanes = elem_lanes;
    }
    if (value.dt != elem.dt || value.lanes != lanes)
        ir_bug(cg->ctx, "code generation: an access of %lld %s element(s) moves a %s x%u value: "
               "the legalize invariant (passes/legalize.c) does not hold", (long long)lanes,
               ir_dtypes[elem.dt].spelling, ir_dtypes[value.dt].spelling, value.lanes);
    LLVMTypeRef elt = elem.dt == DT_BOOL ? cg->ti8 : cg_llvm_type(cg, elem);
    elem.lanes = 1;
    if (!off)
        off = cg_i64(cg, 0);
    LLVMValueRef idx[1] = {off};
    out->ptr = LLVMBuildGEP2(cg->b, elt, base, idx, 1, "");
    out->elem = elem;
    out->elem.lanes = (uint8_t)lanes;
    out->contiguous = 1;
    if (last_stride && !(LLVMIsAConstantInt(last_stride) && LLVMConstIntGetSExtValue(last_stride) == 1)) {
        out->contiguous = lanes == 1;
        out->stride = last_stride;
    }
    uint32_t eb = (uint32_t)(ir_dtypes[elem.dt].bits + 7) / 8;
    if (elem.dt == DT_BOOL)
        eb = 1;
    uint32_t al = out->contiguous ? pow2_floor(eb * (uint32_t)lanes) : eb;
    out->align = al > 16 ? 16 : al;
    return 1;
}

static LLVMValueRef load_plain(Cg *cg, const CgRef *r)
{
    CgTy t = r->elem;
    int isbool = t.dt == DT_BOOL;
    CgTy mt = t;
    LLVMTypeRef lt = isbool ? (t.lanes > 1 ? LLVMVectorType(cg->ti8, t.lanes) : cg->ti8) : cg_llvm_type(cg, mt);
    LLVMValueRef v;
    if (r->contiguous) {
        v = LLVMBuildLoad2(cg->b, lt, r->ptr, "");
        LLVMSetAlignment(v, r->align);
    } else {
        LLVMTypeRef st = isbool ? cg->ti8 : cg_scalar_type(cg, (DType)t.dt);
        v = LLVMGetUndef(lt);
        for (unsigned i = 0; i < t.lanes; i++) {
            LLVMValueRef o[1] = {LLVMBuildMul(cg->b, r->stride, cg_i64(cg, i), "")};
            LLVMValueRef p = LLVMBuildGEP2(cg->b, st, r->ptr, o, 1, "");
            LLVMValueRef x = LLVMBuildLoad2(cg->b, st, p, "");
            LLVMSetAlignment(x, r->align);
            v = LLVMBuildInsertElement(cg->b, v, x, cg_i32(cg, i), "");
        }
    }
    if (isbool)
        v = LLVMBuildICmp(cg->b, LLVMIntNE, v, LLVMConstNull(lt), "");
    return v;
}

static void store_plain(Cg *cg, const CgRef *r, LLVMValueRef v)
{
    CgTy t = r->elem;
    if (t.dt == DT_BOOL)
        v = LLVMBuildZExt(cg->b, v, t.lanes > 1 ? LLVMVectorType(cg->ti8, t.lanes) : cg->ti8, "");
    if (r->contiguous) {
        LLVMValueRef s = LLVMBuildStore(cg->b, v, r->ptr);
        LLVMSetAlignment(s, r->align);
        return;
    }
    LLVMTypeRef st = t.dt == DT_BOOL ? cg->ti8 : cg_scalar_type(cg, (DType)t.dt);
    for (unsigned i = 0; i < t.lanes; i++) {
        LLVMValueRef o[1] = {LLVMBuildMul(cg->b, r->stride, cg_i64(cg, i), "")};
        LLVMValueRef p = LLVMBuildGEP2(cg->b, st, r->ptr, o, 1, "");
        LLVMValueRef s = LLVMBuildStore(cg->b, LLVMBuildExtractElement(cg->b, v, cg_i32(cg, i), ""), p);
        LLVMSetAlignment(s, r->align);
    }
}

/* the bytes of a masked access that can be one predicated instruction, else 0:
 * a contiguous global access of 1, 2, 4, 8 or 16 bytes (not bool), on a target
 * with the hooks, unless CAKE_NO_PREDICATE is set */
static unsigned pred_bytes(Cg *cg, const CgRef *r)
{
    unsigned eb = (unsigned)(ir_dtypes[r->elem.dt].bits / 8) * r->elem.lanes;
    if (cg->no_predicate || !cg->t->pred_load || r->space != SP_GLOBAL || !r->contiguous ||
        r->elem.dt == DT_BOOL || r->align < (eb > 16 ? 16 : eb))
        return 0;
    return eb == 1 || eb == 2 || eb == 4 || eb == 8 || eb == 16 ? eb : 0;
}

/* v (the access's type) as the registers of a predicated access, or back */
static LLVMTypeRef reg_type(Cg *cg, unsigned bytes)
{
    return bytes <= 2 ? cg->ti16 : bytes == 4 ? cg->ti32 : LLVMVectorType(cg->ti32, bytes / 4);
}

static LLVMValueRef from_regs(Cg *cg, const CgRef *r, unsigned bytes, LLVMValueRef *regs)
{
    LLVMTypeRef vt = cg_llvm_type(cg, r->elem);
    if (bytes == 1)
        return LLVMBuildBitCast(cg->b, LLVMBuildTrunc(cg->b, regs[0], cg->ti8, ""), vt, "");
    if (bytes <= 4)
        return LLVMBuildBitCast(cg->b, regs[0], vt, "");
    LLVMValueRef w = LLVMGetUndef(reg_type(cg, bytes));
    for (unsigned i = 0; i < bytes / 4; i++)
        w = LLVMBuildInsertElement(cg->b, w, regs[i], cg_i32(cg, i), "");
    return LLVMBuildBitCast(cg->b, w, vt, "");
}

static void to_regs(Cg *cg, LLVMValueRef v, unsigned bytes, LLVMValueRef *regs)
{
    if (bytes == 1) {
        regs[0] = LLVMBuildZExt(cg->b, LLVMBuildBitCast(cg->b, v, cg->ti8, ""), cg->ti16, "");
        return;
    }
    LLVMValueRef w = LLVMBuildBitCast(cg->b, v, reg_type(cg, bytes), "");
    if (bytes <= 4) {
        regs[0] = w;
        return;
    }
    for (unsigned i = 0; i < bytes / 4; i++)
        regs[i] = LLVMBuildExtractElement(cg->b, w, cg_i32(cg, i), "");
}

LLVMValueRef cg_load(Cg *cg, const CgRef *r, NodeId mask, Span sp)
{
    (void)sp;
    if (!mask)
        return load_plain(cg, r);
    LLVMValueRef c = cg_cond(cg, mask);
    unsigned pb = pred_bytes(cg, r);
    if (pb) {
        LLVMValueRef regs[4];
        cg->t->pred_load(cg, c, r->ptr, pb, r->readonly, regs);
        return from_regs(cg, r, pb, regs);
    }
    LLVMBasicBlockRef from = LLVMGetInsertBlock(cg->b);
    LLVMBasicBlockRef then = cg_block(cg, "mload"), join = cg_block(cg, "mjoin");
    LLVMBuildCondBr(cg->b, c, then, join);
    LLVMPositionBuilderAtEnd(cg->b, then);
    LLVMValueRef v = load_plain(cg, r);
    LLVMBasicBlockRef then_end = LLVMGetInsertBlock(cg->b);
    LLVMBuildBr(cg->b, join);
    LLVMPositionBuilderAtEnd(cg->b, join);
    LLVMValueRef phi = LLVMBuildPhi(cg->b, LLVMTypeOf(v), "");
    LLVMValueRef vals[2] = {LLVMConstNull(LLVMTypeOf(v)), v};
    LLVMBasicBlockRef bbs[2] = {from, then_end};
    LLVMAddIncoming(phi, vals, bbs, 2);
    return phi;
}

void cg_store(Cg *cg, const CgRef *r, LLVMValueRef v, NodeId mask, Span sp)
{
    (void)sp;
    if (!mask) {
        store_plain(cg, r, v);
        return;
    }
    LLVMValueRef c = cg_cond(cg, mask);
    unsigned pb = pred_bytes(cg, r);
    if (pb) {
        LLVMValueRef regs[4];
        to_regs(cg, v, pb, regs);
        cg->t->pred_store(cg, c, r->ptr, pb, regs);
        return;
    }
    LLVMBasicBlockRef then = cg_block(cg, "mstore"), join = cg_block(cg, "mjoin");
    LLVMBuildCondBr(cg->b, c, then, join);
    LLVMPositionBuilderAtEnd(cg->b, then);
    store_plain(cg, r, v);
    LLVMBuildBr(cg->b, join);
    LLVMPositionBuilderAtEnd(cg->b, join);
}

/* atomicrmw, monotonic (PTX: relaxed, gpu scope: atom / red); ordering with
 * other accesses is `fence.gpu`'s (docs/tir.md 7.7) */
static LLVMValueRef atomic_plain(Cg *cg, const CgRef *r, Op op, LLVMValueRef v)
{
    int fl = cg_is_float(r->elem);
    LLVMAtomicRMWBinOp bop = op == OP_ATOMIC_EXCH ? LLVMAtomicRMWBinOpXchg
                             : fl ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd;
    LLVMValueRef x = LLVMBuildAtomicRMW(cg->b, bop, r->ptr, v, LLVMAtomicOrderingMonotonic, 0);
    LLVMSetAlignment(x, r->align);
    return x;
}

LLVMValueRef cg_atomic(Cg *cg, const CgRef *r, Op op, LLVMValueRef v, NodeId mask)
{
    if (r->space != SP_GLOBAL || r->elem.lanes != 1)
        ir_bug(cg->ctx, "code generation: an atomic on a %s access of %u lanes: the verifier's "
               "E0324/E0340 invariant does not hold", r->space == SP_GLOBAL ? "global" : "non-global",
               r->elem.lanes);
    if (!mask)
        return atomic_plain(cg, r, op, v);
    LLVMValueRef c = cg_cond(cg, mask);
    LLVMBasicBlockRef from = LLVMGetInsertBlock(cg->b);
    LLVMBasicBlockRef then = cg_block(cg, "matomic"), join = cg_block(cg, "mjoin");
    LLVMBuildCondBr(cg->b, c, then, join);
    LLVMPositionBuilderAtEnd(cg->b, then);
    LLVMValueRef x = atomic_plain(cg, r, op, v);
    LLVMBasicBlockRef then_end = LLVMGetInsertBlock(cg->b);
    LLVMBuildBr(cg->b, join);
    LLVMPositionBuilderAtEnd(cg->b, join);
    LLVMValueRef phi = LLVMBuildPhi(cg->b, LLVMTypeOf(x), "");
    LLVMValueRef vals[2] = {LLVMConstNull(LLVMTypeOf(x)), x};
    LLVMBasicBlockRef bbs[2] = {from, then_end};
    LLVMAddIncoming(phi, vals, bbs, 2);
    return phi;
}
