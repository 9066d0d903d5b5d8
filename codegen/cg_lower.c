/* cg_lower.c — emitting TIR-L (docs/tirl.md): the lowered statements and
 * expressions the passes produce, through the target's hooks, and the
 * shared-memory buffer of the launch plan with its swizzled addressing.
 *
 * Shared memory: one buffer per kernel (cg_declare_smem); a declaration's
 * base is its plan offset. An element's byte offset inside a tile follows
 * docs/tir.md §5.2: row-major, or, when the innermost extent is wider than
 * the swizzle span S, panels of S bytes (per leading index: panel, row,
 * column), then the 16-byte chunk XOR (o >> 7) & (S/16 - 1) unless raw.
 * Fragments: a lowered op's element operands are INDEX refs into per-thread
 * arrays (allocas that SROA turns into registers); 16-bit pairs and 8-bit
 * quads are packed into the 32-bit registers the instructions take. */
#include <string.h>
#include "cg_int.h"
#include "layout.h"

/* ---- the shared-memory buffer ----------------------------------------------- */

void cg_declare_smem(Cg *cg)
{
    KPlan *p = cg->k->plan;
    uint32_t bytes = p ? p->smem_bytes : 0;
    const char *name = "cake_smem";
    if (cg->t == &cg_nvptx) { /* dynamic shared memory: sized at launch (the plan's bytes) */
        LLVMTypeRef at = LLVMArrayType2(cg->ti8, 0);
        cg->smem = LLVMGetNamedGlobal(cg->mod, name);
        if (!cg->smem) {
            cg->smem = LLVMAddGlobalInAddressSpace(cg->mod, at, name, cg->t->shared_as);
            LLVMSetLinkage(cg->smem, LLVMExternalLinkage);
            LLVMSetAlignment(cg->smem, 1024);
        }
        return;
    }
    char nm[64];
    snprintf(nm, sizeof nm, "cake_smem_%s", ir_symstr(cg->ctx, cg->k->name));
    cg->smem = cg_shared_global(cg, LLVMArrayType2(cg->ti8, bytes ? bytes : 16), nm, 1024);
}

uint32_t cg_smem_slot(Cg *cg, NodeId decl, int *found)
{
    KPlan *p = cg->k->plan;
    *found = 0;
    for (uint32_t i = 0; p && i < p->nsmem; i++)
        if (p->smem[i].decl == decl) {
            *found = 1;
            return p->smem[i].offset;
        }
    return 0;
}

LLVMValueRef cg_smem_ptr(Cg *cg, LLVMValueRef offset)
{
    LLVMValueRef ix[1] = {offset};
    return LLVMBuildGEP2(cg->b, cg->ti8, cg->smem, ix, 1, "");
}

static LLVMValueRef imul(Cg *cg, LLVMValueRef a, int64_t c)
{
    return c == 1 ? a : LLVMBuildMul(cg->b, a, cg_i32(cg, c), "");
}

static LLVMValueRef iadd(Cg *cg, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildAdd(cg->b, a, b, "");
}

LLVMValueRef cg_smem_offset(Cg *cg, NodeId decl, LLVMValueRef *idx, uint32_t rank, int raw)
{
    LLVMBuilderRef b = cg->b;
    Kernel *k = cg->k;
    Node *d = ir_get(k, decl);
    int found = 0;
    uint32_t base = cg_smem_slot(cg, decl, &found);
    if (!found)
        ir_bug(cg->ctx, "shared declaration '%s' has no slot in the launch plan", ir_symstr(cg->ctx, d->name));
    if (d->op == OP_MBARRIER) {
        LLVMValueRef o = rank ? imul(cg, idx[0], 8) : cg_i32(cg, 0);
        return iadd(cg, o, cg_i32(cg, base));
    }
    const Type *t = &k->types[d->type];
    int64_t eb = ir_dtype_bytes((DType)t->dtype) ? ir_dtype_bytes((DType)t->dtype) : 1;
    eb *= t->lanes ? t->lanes : 1;
    int S = d->v.attr.swizzle;
    int r = t->rank;
    if ((int)rank != r)
        ir_bug(cg->ctx, "shared access with %u indices on a rank-%d tile", rank, r);
    /* ir/layout's geometry; the offset ly_smem_linear computes, as LLVM values */
    LySmemGeom g = ly_smem_geom(t->shape, r, eb, S);
    LLVMValueRef off;
    if (r >= 2 && g.panel != g.cols) { /* panels */
        LLVMValueRef lead = cg_i32(cg, 0);
        for (int i = 0; i < r - 2; i++)
            lead = iadd(cg, imul(cg, lead, t->shape[i]), idx[i]);
        LLVMValueRef col = idx[r - 1], row = idx[r - 2];
        LLVMValueRef panel = LLVMBuildUDiv(b, col, cg_i32(cg, g.panel), "");
        LLVMValueRef inner = LLVMBuildURem(b, col, cg_i32(cg, g.panel), "");
        off = imul(cg, lead, g.bytes);
        off = iadd(cg, off, imul(cg, panel, g.rows * g.panel * g.e));
        off = iadd(cg, off, imul(cg, row, g.panel * g.e));
        off = iadd(cg, off, imul(cg, inner, g.e));
    } else {
        off = cg_i32(cg, 0);
        for (int i = 0; i < r; i++)
            off = i ? iadd(cg, imul(cg, off, t->shape[i]), idx[i]) : idx[i];
        off = imul(cg, off, eb);
    }
    if (S && !raw) { /* o ^ (((o >> 7) & (S/16 - 1)) << 4) */
        LLVMValueRef line = LLVMBuildLShr(b, off, cg_i32(cg, 7), "");
        LLVMValueRef x = LLVMBuildAnd(b, line, cg_i32(cg, S / 16 - 1), "");
        off = LLVMBuildXor(b, off, LLVMBuildShl(b, x, cg_i32(cg, 4), ""), "");
    }
    return iadd(cg, off, cg_i32(cg, base));
}

/* the shared address (i32, in the shared window) of an element ref */
static LLVMValueRef saddr(Cg *cg, NodeId ref, int raw)
{
    Kernel *k = cg->k;
    Node *r = ir_get(k, ref);
    NodeId base = r->op == OP_INDEX ? r->a : ref;
    NodeId decl = ir_get(k, base)->decl;
    LLVMValueRef idx[IR_MAX_RANK];
    uint32_t n = r->op == OP_INDEX ? r->n : 0;
    for (uint32_t i = 0; i < n && i < IR_MAX_RANK; i++) {
        NodeId x = ir_list_at(k, r, i);
        if (ir_get(k, x)->op == OP_SLICE) /* a vector's first element */
            x = ir_get(k, x)->a;
        idx[i] = LLVMBuildTrunc(cg->b, cg_index64(cg, x), cg->ti32, "");
    }
    LLVMValueRef off = cg_smem_offset(cg, decl, idx, n, raw);
    LLVMValueRef p = cg_smem_ptr(cg, off);
    return LLVMBuildPtrToInt(cg->b, p, cg->ti32, "");
}

/* ---- fragments --------------------------------------------------------------- */

/* is pack n (of type ty) a pack of f32 values each narrowed to bf16/f16 (OP_CAST)? */
static int pack_of_narrowed(Cg *cg, const Node *n, CgTy ty)
{
    if ((ty.dt != DT_BF16 && ty.dt != DT_F16) || n->n < 2 || n->n % 2 || n->n != ty.lanes)
        return 0;
    for (uint32_t i = 0; i < n->n; i++) {
        const Node *c = ir_get(cg->k, ir_list_at(cg->k, n, i));
        if (c->op != OP_CAST || !c->a || !cg_same(cg_ty(cg, c->a), cg_scalar(DT_F32)))
            return 0;
    }
    return 1;
}

LLVMValueRef cg_pack_i32(Cg *cg, LLVMValueRef *v, unsigned n, DType dt)
{
    LLVMTypeRef et = cg_scalar_type(cg, dt);
    LLVMTypeRef vt = LLVMVectorType(et, n);
    LLVMValueRef x = LLVMGetUndef(vt);
    for (unsigned i = 0; i < n; i++)
        x = LLVMBuildInsertElement(cg->b, x, v[i], cg_i32(cg, i), "");
    return LLVMBuildBitCast(cg->b, x, cg->ti32, "");
}

void cg_unpack_i32(Cg *cg, LLVMValueRef w, DType dt, LLVMValueRef *out)
{
    unsigned n = ir_dtype_bytes(dt) == 1 ? 4 : 2;
    LLVMTypeRef vt = LLVMVectorType(cg_scalar_type(cg, dt), n);
    LLVMValueRef x = LLVMBuildBitCast(cg->b, w, vt, "");
    for (unsigned i = 0; i < n; i++)
        out[i] = LLVMBuildExtractElement(cg->b, x, cg_i32(cg, i), "");
}

static LLVMValueRef elem_value(Cg *cg, NodeId ref, DType dt)
{
    return cg_expr_of(cg, ref, cg_scalar(dt));
}

static void elem_store(Cg *cg, NodeId ref, LLVMValueRef v)
{
    CgRef r;
    if (cg_ref(cg, ref, cg_ty(cg, ref), &r))
        cg_store(cg, &r, v, 0, ir_get(cg->k, ref)->span);
}

static DType elem_dtype(Cg *cg, NodeId ref)
{
    return (DType)cg_ty(cg, ref).dt;
}

/* CAKE_CVT_PAIRS: operands x and y both bf16/f16 casts of f32 values: the pair narrowed by
 * one vector conversion (cvt.rn.bf16x2.f32) into the packed register; NULL otherwise */
static LLVMValueRef pack_narrowed_pair(Cg *cg, NodeId x, NodeId y, DType dt)
{
    const Node *a = ir_get(cg->k, x), *b = ir_get(cg->k, y);
    if (!cg->cvt_pairs || (dt != DT_BF16 && dt != DT_F16) || a->op != OP_CAST || b->op != OP_CAST || !a->a ||
        !b->a || !cg_same(cg_ty(cg, a->a), cg_scalar(DT_F32)) || !cg_same(cg_ty(cg, b->a), cg_scalar(DT_F32)))
        return NULL;
    CgTy wide = {DT_F32, 2}, narrow = {dt, 2};
    LLVMValueRef w = LLVMGetUndef(cg_llvm_type(cg, wide));
    w = LLVMBuildInsertElement(cg->b, w, cg_expr_of(cg, a->a, cg_scalar(DT_F32)), cg_i32(cg, 0), "");
    w = LLVMBuildInsertElement(cg->b, w, cg_expr_of(cg, b->a, cg_scalar(DT_F32)), cg_i32(cg, 1), "");
    return LLVMBuildBitCast(cg->b, cg_convert(cg, w, wide, narrow), cg->ti32, "");
}

/* n registers packed from the element operands list[at ..] (16-bit: pairs) */
static unsigned pack_regs(Cg *cg, const Node *n, uint32_t at, uint32_t count, DType dt, LLVMValueRef *regs)
{
    int per = ir_dtype_bytes(dt) == 1 ? 4 : ir_dtype_bytes(dt) == 2 ? 2 : 1;
    unsigned nr = 0;
    for (uint32_t i = 0; i < count; i += (uint32_t)per) {
        LLVMValueRef pr = per == 2 ? pack_narrowed_pair(cg, ir_list_at(cg->k, n, at + i), ir_list_at(cg->k, n, at + i + 1), dt)
                                   : NULL;
        if (pr) {
            regs[nr++] = pr;
            continue;
        }
        LLVMValueRef v[4];
        for (int j = 0; j < per; j++)
            v[j] = elem_value(cg, ir_list_at(cg->k, n, at + i + (uint32_t)j), dt);
        regs[nr++] = per == 1 ? LLVMBuildBitCast(cg->b, v[0], cg->ti32, "") : cg_pack_i32(cg, v, (unsigned)per, dt);
    }
    return nr;
}

/* ---- statements --------------------------------------------------------------- */

/* operand i as an i32 (shared addresses are u32, counts and coordinates i32) */
static LLVMValueRef op_i32(Cg *cg, const Node *n, uint32_t i)
{
    NodeId x = ir_list_at(cg->k, n, i);
    LLVMValueRef v = cg_expr(cg, x);
    if (ir_dtypes[cg_ty(cg, x).dt].bits > 32)
        v = LLVMBuildTrunc(cg->b, v, cg->ti32, "");
    return v;
}

static int op_const(Cg *cg, const Node *n, uint32_t i)
{
    int64_t v = 0;
    NodeId x = ir_list_at(cg->k, n, i);
    if (ir_get(cg->k, x)->op == OP_INT)
        return (int)ir_get(cg->k, x)->v.i;
    if (!cg_const_int(cg, x, &v))
        cg_unsupported(cg, x, "a wait count that is not a constant");
    return (int)v;
}

static void mbar_wait(Cg *cg, const Node *n)
{
    LLVMBuilderRef b = cg->b;
    LLVMValueRef bar = op_i32(cg, n, 0), par = op_i32(cg, n, 1);
    LLVMBasicBlockRef loop = cg_block(cg, "mbar.wait"), done = cg_block(cg, "mbar.done");
    LLVMBuildBr(b, loop);
    LLVMPositionBuilderAtEnd(b, loop);
    LLVMValueRef ok = cg->t->mbar_try_wait(cg, bar, par);
    LLVMBuildCondBr(b, ok, done, loop);
    LLVMPositionBuilderAtEnd(b, done);
}

static LLVMValueRef tmap_addr(Cg *cg, NodeId name)
{
    NodeId decl = ir_get(cg->k, name)->decl;
    LLVMValueRef p = decl < cg->nval ? cg->val[decl] : NULL;
    if (!p)
        ir_bug(cg->ctx, "tensor map without a kernel parameter");
    return LLVMBuildPtrToInt(cg->b, p, cg->ti64, "");
}

static void tma(Cg *cg, const Node *n, int load)
{
    uint32_t first = load ? 3 : 2;
    LLVMValueRef c[5];
    unsigned nc = 0;
    for (uint32_t i = first; i < n->n && nc < 5; i++)
        c[nc++] = op_i32(cg, n, i);
    LLVMValueRef map = tmap_addr(cg, ir_list_at(cg->k, n, 0));
    LLVMValueRef smem = op_i32(cg, n, 1);
    if (load)
        cg->t->tma_load(cg, map, smem, op_i32(cg, n, 2), c, nc);
    else
        cg->t->tma_store(cg, map, smem, c, nc, n->sub == 1);
}

/* a register-A wgmma's operands, packed before its group's wgmma.fence: packed between the
 * fence and the instruction (LLVM sinks the bf16 pairs' packing to their use), ptxas must
 * inject another warpgroup.arrive before each such k-step (C7519). Each packed register goes
 * through an empty volatile asm, so it is defined there and never rematerialized later. In
 * the fence's basic block only (else where the wgmma is); 0 when it cannot */
static unsigned pack_before_fence(Cg *cg, const Node *n, uint32_t at, uint32_t count, DType dt,
                                  LLVMValueRef *a)
{
    LLVMBasicBlockRef here = LLVMGetInsertBlock(cg->b);
    if (!cg->wg_hoist || !cg->wg_fence_at || LLVMGetInstructionParent(cg->wg_fence_at) != here)
        return 0;
    LLVMPositionBuilderBefore(cg->b, cg->wg_fence_at);
    unsigned na = pack_regs(cg, n, at, count, dt, a);
    for (unsigned i = 0; i < na; i++)
        a[i] = cg_asm(cg, cg->ti32, "", "=r,0", &a[i], 1, 1);
    LLVMPositionBuilderAtEnd(cg->b, here);
    return na;
}

static void wgmma(Cg *cg, const Node *n)
{
    IrTc t = ir_tc_unpack(n->v.i);
    uint32_t at = 0;
    LLVMValueRef da = NULL;
    if (!t.a_regs)
        da = cg_expr_of(cg, ir_list_at(cg->k, n, at++), cg_scalar(DT_U64));
    LLVMValueRef db = cg_expr_of(cg, ir_list_at(cg->k, n, at++), cg_scalar(DT_U64));
    unsigned nd = (unsigned)t.m * t.n / 128;
    LLVMValueRef d[256], a[8];
    for (unsigned i = 0; i < nd; i++) /* fresh (scale-d 0): the old accumulator is not an input */
        d[i] = t.fresh ? LLVMGetUndef(cg_scalar_type(cg, (DType)t.acc))
                       : elem_value(cg, ir_list_at(cg->k, n, at + i), (DType)t.acc);
    unsigned na = 0;
    if (t.a_regs && !(na = pack_before_fence(cg, n, at + nd, (uint32_t)t.m * t.k / 128, (DType)t.ab, a)))
        na = pack_regs(cg, n, at + nd, (uint32_t)t.m * t.k / 128, (DType)t.ab, a);
    cg->t->wgmma(cg, t, da, db, t.a_regs ? a : NULL, na, d, nd);
    for (unsigned i = 0; i < nd; i++)
        elem_store(cg, ir_list_at(cg->k, n, at + i), d[i]);
}

/* a register-operand tensor-core instruction (mma.sync, MFMA): the operands are
 * the elements of the C, A and B fragments over the T threads of the family's
 * scope (ir/tcfamily.h), A and B packed into 32-bit registers */
static void mma(Cg *cg, const Node *n)
{
    IrTc t = ir_tc_unpack(n->v.i);
    uint32_t T = (uint32_t)tg_tc_scope_threads(cg->tg, tc_family_of((Op)n->op));
    uint32_t nd = (uint32_t)t.m * t.n / T, na = (uint32_t)t.m * t.k / T, nb = (uint32_t)t.k * t.n / T;
    LLVMValueRef d[64], a[16], bb[16];
    if (nd > 64 || na > 32 || nb > 32)
        ir_bug(cg->ctx, "a tensor-core instruction with more operands than its shape allows");
    for (uint32_t i = 0; i < nd; i++)
        d[i] = elem_value(cg, ir_list_at(cg->k, n, i), (DType)t.acc);
    unsigned ra = pack_regs(cg, n, nd, na, (DType)t.ab, a);
    unsigned rb = pack_regs(cg, n, nd + na, nb, t.b_dt ? (DType)t.b_dt : (DType)t.ab, bb);
    cg->t->mma(cg, t, a, ra, bb, rb, d, nd);
    for (uint32_t i = 0; i < nd; i++)
        elem_store(cg, ir_list_at(cg->k, n, i), d[i]);
}

static void ldmatrix(Cg *cg, const Node *n)
{
    LLVMValueRef regs[4], v[2];
    cg->t->ldmatrix(cg, n->sub, (int)n->v.i, op_i32(cg, n, 0), regs);
    DType dt = elem_dtype(cg, ir_list_at(cg->k, n, 1));
    for (unsigned m = 0; m < n->sub; m++) {
        cg_unpack_i32(cg, regs[m], dt, v);
        elem_store(cg, ir_list_at(cg->k, n, 1 + 2 * m), v[0]);
        elem_store(cg, ir_list_at(cg->k, n, 2 + 2 * m), v[1]);
    }
}

static void stmatrix(Cg *cg, const Node *n)
{
    LLVMValueRef regs[4];
    DType dt = elem_dtype(cg, ir_list_at(cg->k, n, 1));
    pack_regs(cg, n, 1, 2u * n->sub, dt, regs);
    cg->t->stmatrix(cg, n->sub, (int)n->v.i, op_i32(cg, n, 0), regs);
}

void cg_lowered_stmt(Cg *cg, NodeId s)
{
    Node *n = ir_get(cg->k, s);
    const CgTarget *t = cg->t;
    TcFamily fam = tc_family_of((Op)n->op);
    if (fam && n->op == tc_family(fam)->lowered && tc_family(fam)->a_src == TCO_REG) {
        if (!t->mma || !tg_has(cg->tg, tc_family(fam)->feature))   /* the family's codegen hook */
            cg_unsupported(cg, s, ir_fmt(cg->ctx, "'%s' on this target", ir_ops[n->op].spelling));
        else
            mma(cg, n);
        return;
    }
    if (!t->mbar_init) {
        cg_unsupported(cg, s, ir_fmt(cg->ctx, "'%s' on this target", ir_ops[n->op].spelling));
        return;
    }
    switch ((Op)n->op) {
    case OP_L_MBAR_INIT: t->mbar_init(cg, op_i32(cg, n, 0), op_i32(cg, n, 1)); return;
    case OP_L_MBAR_FENCE: t->mbar_fence_init(cg); return;
    case OP_L_MBAR_ARRIVE: t->mbar_arrive(cg, op_i32(cg, n, 0), NULL); return;
    case OP_L_MBAR_ARRIVE_TX: t->mbar_arrive(cg, op_i32(cg, n, 0), op_i32(cg, n, 1)); return;
    case OP_L_MBAR_WAIT: mbar_wait(cg, n); return;
    case OP_L_CP_MBAR_ARRIVE: t->cp_mbar_arrive(cg, op_i32(cg, n, 0)); return;
    case OP_L_SYNCWARP: t->syncwarp(cg); return;
    case OP_L_TMA_LOAD: tma(cg, n, 1); return;
    case OP_L_TMA_STORE: tma(cg, n, 0); return;
    case OP_L_BULK_COMMIT: t->bulk_commit(cg); return;
    case OP_L_BULK_WAIT: t->bulk_wait(cg, op_const(cg, n, 0)); return;
    case OP_L_WG_FENCE:
        t->wg_fence(cg);
        cg->wg_fence_at = LLVMGetLastInstruction(LLVMGetInsertBlock(cg->b));
        return;
    case OP_L_WG_COMMIT: t->wg_commit(cg); cg->wg_fence_at = NULL; return;
    case OP_L_WG_WAIT: t->wg_wait(cg, op_const(cg, n, 0)); return;
    case OP_L_WGMMA: wgmma(cg, n); return;
    case OP_L_LDMATRIX: ldmatrix(cg, n); return;
    case OP_L_STMATRIX: stmatrix(cg, n); return;
    case OP_L_SETMAXNREG: t->setmaxnreg(cg, n->sub, (int)n->v.i); return;
    case OP_L_TMAP: return; /* a kernel parameter (builder.c) */
    default:
        cg_unsupported(cg, s, ir_fmt(cg->ctx, "the lowered op '%s'", ir_ops[n->op].spelling));
        return;
    }
}

/* the value a ref moves: its element dtype, lanes = the last slice's extent */
static CgTy ref_value_ty(Cg *cg, NodeId ref)
{
    Kernel *k = cg->k;
    Node *r = ir_get(k, ref);
    NodeId decl = ir_get(k, r->a)->decl;
    CgTy t = {k->types[ir_get(k, decl)->type].dtype, 1};
    Node *last = r->n ? ir_get(k, ir_list_at(k, r, r->n - 1)) : NULL;
    int64_t e = 1;
    if (last && last->op == OP_SLICE && cg_const_int(cg, last->b, &e) && e > 1 && e <= 16)
        t.lanes = (uint8_t)e;
    return t;
}

/* cp.async X[...] <- Y[...] mask ok: the shared destination swizzled */
void cg_cp_async(Cg *cg, NodeId s)
{
    Node *n = ir_get(cg->k, s);
    if (!cg->t->cp_async) {
        cg_unsupported(cg, s, "cp.async on this target");
        return;
    }
    CgRef src;
    if (!cg_ref(cg, n->b, ref_value_ty(cg, n->b), &src))
        return;
    int bytes = ir_dtype_bytes((DType)src.elem.dt) * src.elem.lanes;
    LLVMValueRef dst = saddr(cg, n->a, 0);
    LLVMValueRef ok = n->c ? cg_cond(cg, n->c) : NULL;
    cg->t->cp_async(cg, dst, src.ptr, bytes, ok);
}

/* ---- expressions ------------------------------------------------------------ */

LLVMValueRef cg_lowered_expr(Cg *cg, NodeId e, CgTy ty)
{
    Node *n = ir_get(cg->k, e);
    LLVMBuilderRef b = cg->b;
    switch ((Op)n->op) {
    case OP_L_SADDR:
        return saddr(cg, ir_list_at(cg->k, n, 0), n->sub);
    case OP_L_WGDESC: { /* PTX ISA "Matrix Descriptor Format" */
        LLVMValueRef a = LLVMBuildZExt(b, op_i32(cg, n, 0), cg->ti64, "");
        uint64_t lbo = (uint64_t)n->v.i & 0xfffff, sbo = (uint64_t)n->v.i >> 20 & 0xfffff;
        uint64_t mode = (uint64_t)n->v.i >> 40 & 3;
        LLVMValueRef start = LLVMBuildLShr(b, LLVMBuildAnd(b, a, cg_i64(cg, 0x3ffff), ""), cg_i64(cg, 4), "");
        uint64_t rest = ((lbo >> 4) & 0x3fff) << 16 | ((sbo >> 4) & 0x3fff) << 32 | mode << 62;
        return LLVMBuildOr(b, start, LLVMConstInt(cg->ti64, rest, 0), "");
    }
    case OP_L_LANE: {
        NodeId v = ir_list_at(cg->k, n, 0);
        return LLVMBuildExtractElement(b, cg_expr_of(cg, v, cg_ty(cg, v)), cg_i32(cg, n->v.i), "");
    }
    case OP_L_PACK: {
        LLVMTypeRef vt = cg_llvm_type(cg, ty);
        LLVMValueRef v = LLVMGetUndef(vt);
        CgTy et = ty;
        et.lanes = 1;
        if (pack_of_narrowed(cg, n, ty)) { /* @pack(bf16(a), bf16(b)): one cvt.rn.bf16x2.f32 */
            CgTy wide = {DT_F32, ty.lanes};
            LLVMValueRef w = LLVMGetUndef(cg_llvm_type(cg, wide));
            for (uint32_t i = 0; i < n->n; i++)
                w = LLVMBuildInsertElement(b, w, cg_expr_of(cg, ir_get(cg->k, ir_list_at(cg->k, n, i))->a,
                                                            cg_scalar(DT_F32)), cg_i32(cg, i), "");
            return cg_convert(cg, w, wide, ty);
        }
        for (uint32_t i = 0; i < n->n; i++)
            v = LLVMBuildInsertElement(b, v, cg_expr_of(cg, ir_list_at(cg->k, n, i), et), cg_i32(cg, i), "");
        return v;
    }
    default:
        cg_unsupported(cg, e, ir_fmt(cg->ctx, "the lowered op '%s'", ir_ops[n->op].spelling));
        return LLVMGetUndef(cg_llvm_type(cg, ty));
    }
}
