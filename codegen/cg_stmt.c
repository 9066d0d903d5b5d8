/* cg_stmt.c — lowering of statements: let/var, assignments, stores, for
 * loops (unroll metadata), if/else, return, barriers, fences, and the kernel
 * body. `let` binds an SSA value; `var` is an alloca that SROA/mem2reg
 * promote. A loop's bounds and step are evaluated once, before it starts;
 * its variable has the FOR node's type (legalize gives the bounds that type)
 * and counts up while var < hi (signed or unsigned as the type). */
#include <string.h>
#include <llvm-c/DebugInfo.h>
#include "cg_int.h"

static void stmt(Cg *cg, NodeId s);

static int terminated(Cg *cg)
{
    return LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(cg->b)) != NULL;
}

void cg_block_stmts(Cg *cg, NodeId blk)
{
    Kernel *k = cg->k;
    Node *b = ir_get(k, blk);
    if (b->op != OP_BLOCK) {
        stmt(cg, blk);
        return;
    }
    for (uint32_t i = 0; i < b->n; i++) {
        if (terminated(cg)) /* code after `return`: unreachable */
            LLVMPositionBuilderAtEnd(cg->b, cg_block(cg, "dead"));
        stmt(cg, ir_list_at(k, b, i));
    }
}

static void var_decl(Cg *cg, NodeId s, Node *n)
{
    const Type *tt = &cg->k->types[n->type];
    CgTy ty = cg_ty(cg, s);   /* an array's: its element */
    if (tt->kind == TK_TILE) { /* a thread-private array: var a: f32[8] */
        uint64_t count = 1;
        for (int i = 0; i < tt->rank; i++) {
            int64_t e = tt->shape[i];
            if (e <= 0) {
                cg_unsupported(cg, s, "a private array whose extents are not constants");
                return;
            }
            /* checked per factor: the product of four extents could wrap around 64 bits */
            if ((uint64_t)e > 65536 || (count *= (uint64_t)e) > 65536) {
                cg_unsupported(cg, s, "a private array of more than 65536 elements");
                return;
            }
        }
        LLVMTypeRef et = ty.dt == DT_BOOL ? cg->ti8 : cg_llvm_type(cg, ty);
        cg->val[s] = cg_alloca(cg, LLVMArrayType2(et, count), ir_symstr(cg->ctx, n->name));
        if (n->b) { /* every element = the initializer */
            LLVMValueRef v = cg_expr_of(cg, n->b, ty);
            if (ty.dt == DT_BOOL)
                v = LLVMBuildZExt(cg->b, v, et, "");
            for (uint64_t i = 0; i < count; i++) {
                LLVMValueRef ix[1] = {cg_i64(cg, (int64_t)i)};
                LLVMBuildStore(cg->b, v, LLVMBuildGEP2(cg->b, et, cg->val[s], ix, 1, ""));
            }
        }
        return;
    }
    LLVMTypeRef lt = cg_llvm_type(cg, ty);
    cg->val[s] = cg_alloca(cg, lt, ir_symstr(cg->ctx, n->name));
    LLVMValueRef init = n->b ? cg_expr_of(cg, n->b, ty) : LLVMConstNull(lt);
    LLVMBuildStore(cg->b, init, cg->val[s]);
}

/* the value assignment n stores into a place of type vt: its right side, or
 * for `x op= e` the old value `old` op e (e has the place's type: legalize) */
static LLVMValueRef assigned(Cg *cg, NodeId s, Node *n, LLVMValueRef old, CgTy vt)
{
    LLVMValueRef v = cg_expr_of(cg, n->b, vt);
    if (n->sub == OP_NONE)
        return v;
    cg->at = s;
    return cg_binop(cg, (Op)n->sub, old, v, vt, n->span);
}

static void assign(Cg *cg, NodeId s, Node *n)
{
    Kernel *k = cg->k;
    Node *lv = ir_get(k, n->a);
    CgTy vt = cg_ty(cg, n->a);
    if (lv->op == OP_NAME) {
        Node *d = lv->decl ? ir_get(k, lv->decl) : NULL;
        if (!d || d->op != OP_VAR || !cg->val[lv->decl]) {
            cg_unsupported(cg, s, "assignment to this name");
            return;
        }
        LLVMTypeRef lt = cg_llvm_type(cg, vt);
        LLVMValueRef old = n->sub == OP_NONE ? NULL : LLVMBuildLoad2(cg->b, lt, cg->val[lv->decl], "");
        LLVMBuildStore(cg->b, assigned(cg, s, n, old, vt), cg->val[lv->decl]);
        return;
    }
    CgRef ref;
    if (!cg_ref(cg, n->a, vt, &ref))
        return;
    LLVMValueRef old = n->sub == OP_NONE ? NULL : cg_load(cg, &ref, 0, n->span);
    cg_store(cg, &ref, assigned(cg, s, n, old, vt), 0, n->span);
}

/* a loop's llvm.loop hints: its unroll count, else (`nohoist`, or every loop with
 * CAKE_NOLICM) llvm.licm.disable, which keeps LICM from hoisting per-thread values
 * (addresses, column indices) out of a tile loop, where ptxas would hold them in
 * registers across it (attn_bwd, HD = 128: about 64 of them, and spills) */
static void set_loop_md(Cg *cg, LLVMValueRef br, uint8_t unroll, int nohoist)
{
    int nolicm = !unroll && (nohoist || cg->no_licm);
    if (!unroll && !nolicm)
        return;
    LLVMContextRef lc = cg->lc;
    LLVMMetadataRef tmp = LLVMTemporaryMDNode(lc, NULL, 0);
    LLVMMetadataRef hint;
    if (nolicm) {
        const char *s = "llvm.licm.disable";
        LLVMMetadataRef m[1] = {LLVMMDStringInContext2(lc, s, strlen(s))};
        hint = LLVMMDNodeInContext2(lc, m, 1);
    } else if (unroll == 255) {
        const char *s = "llvm.loop.unroll.full";
        LLVMMetadataRef m[1] = {LLVMMDStringInContext2(lc, s, strlen(s))};
        hint = LLVMMDNodeInContext2(lc, m, 1);
    } else {
        const char *s = "llvm.loop.unroll.count";
        LLVMMetadataRef m[2] = {LLVMMDStringInContext2(lc, s, strlen(s)),
                                LLVMValueAsMetadata(cg_i32(cg, unroll))};
        hint = LLVMMDNodeInContext2(lc, m, 2);
    }
    LLVMMetadataRef ops[2] = {tmp, hint};
    LLVMMetadataRef loop = LLVMMDNodeInContext2(lc, ops, 2);
    LLVMMetadataReplaceAllUsesWith(tmp, loop);
    unsigned kind = LLVMGetMDKindIDInContext(lc, "llvm.loop", 9);
    LLVMSetMetadata(br, kind, LLVMMetadataAsValue(lc, loop));
}

static void for_stmt(Cg *cg, NodeId s, Node *n)
{
    LLVMBuilderRef b = cg->b;
    CgTy ty = cg_ty(cg, s);
    LLVMTypeRef lt = cg_llvm_type(cg, ty);
    LLVMValueRef lo = cg_expr_of(cg, n->a, ty), hi = cg_expr_of(cg, n->b, ty);
    LLVMValueRef step = n->c ? cg_expr_of(cg, n->c, ty) : LLVMConstInt(lt, 1, 0);
    LLVMValueRef iv = cg_alloca(cg, lt, ir_symstr(cg->ctx, n->name));
    LLVMBuildStore(b, lo, iv);
    LLVMBasicBlockRef cond = cg_block(cg, "for.cond"), body = cg_block(cg, "for.body");
    LLVMBasicBlockRef latch = cg_block(cg, "for.latch"), exit = cg_block(cg, "for.end");
    LLVMBuildBr(b, cond);
    LLVMPositionBuilderAtEnd(b, cond);
    LLVMValueRef i = LLVMBuildLoad2(b, lt, iv, "");
    LLVMIntPredicate below = cg_is_signed(ty) ? LLVMIntSLT : LLVMIntULT;
    LLVMBuildCondBr(b, LLVMBuildICmp(b, below, i, hi, ""), body, exit);
    LLVMPositionBuilderAtEnd(b, body);
    cg->val[s] = LLVMBuildLoad2(b, lt, iv, ir_symstr(cg->ctx, n->name));
    cg->loop_depth++;
    cg_block_stmts(cg, n->d);
    cg->loop_depth--;
    if (!terminated(cg))
        LLVMBuildBr(b, latch);
    LLVMPositionBuilderAtEnd(b, latch);
    LLVMBuildStore(b, LLVMBuildAdd(b, LLVMBuildLoad2(b, lt, iv, ""), step, ""), iv);
    LLVMValueRef back = LLVMBuildBr(b, cond);
    set_loop_md(cg, back, n->v.attr.unroll, (n->flags & NF_NOHOIST) != 0);
    LLVMPositionBuilderAtEnd(b, exit);
}

static void if_stmt(Cg *cg, NodeId s, Node *n)
{
    (void)s;
    LLVMBuilderRef b = cg->b;
    LLVMValueRef c = cg_cond(cg, n->a);
    LLVMBasicBlockRef then = cg_block(cg, "if.then"), join = cg_block(cg, "if.end");
    LLVMBasicBlockRef els = n->c ? cg_block(cg, "if.else") : join;
    LLVMBuildCondBr(b, c, then, els);
    LLVMPositionBuilderAtEnd(b, then);
    cg_block_stmts(cg, n->b);
    if (!terminated(cg))
        LLVMBuildBr(b, join);
    if (n->c) {
        LLVMPositionBuilderAtEnd(b, els);
        cg_block_stmts(cg, n->c); /* a BLOCK, or an IF (else if) */
        if (!terminated(cg))
            LLVMBuildBr(b, join);
    }
    LLVMPositionBuilderAtEnd(b, join);
}

static void store_stmt(Cg *cg, NodeId s, Node *n)
{
    (void)s;
    CgRef ref;
    CgTy vt = cg_ty(cg, n->b);   /* the destination's value type (legalize) */
    if (!cg_ref(cg, n->a, vt, &ref))
        return;
    if (n->sub) /* atomic.add ref <- v: a `red` (the old value unused) */
        (void)cg_atomic(cg, &ref, (Op)n->sub, cg_expr(cg, n->b), n->c);
    else
        cg_store(cg, &ref, cg_expr(cg, n->b), n->c, n->span);
}

static void stmt(Cg *cg, NodeId s)
{
    Kernel *k = cg->k;
    Node *n = ir_get(k, s);
    cg->at = s;
    switch ((Op)n->op) {
    case OP_BLOCK: cg_block_stmts(cg, s); return;
    case OP_REFERENCE: return; /* the oracle's, not the GPU's */
    case OP_LET: cg->val[s] = cg_expr_of(cg, n->b, cg_ty(cg, s)); return;
    case OP_VAR: var_decl(cg, s, n); return;
    case OP_REG:
        if (((n->flags & NF_HAS_LAYOUT) && n->v.attr.layout != LY_NONE) ||
            ((n->flags & NF_HAS_SCOPE) && n->v.attr.scope != SC_THREAD)) {
            cg_unsupported(cg, s, "a register tile with a layout or a scope wider than the thread");
            return;
        }
        var_decl(cg, s, n);
        return;
    case OP_SHARED: case OP_MBARRIER: return; /* slots of the plan's buffer (cg_lower.c) */
    case OP_CP_ASYNC: cg_cp_async(cg, s); return;
    case OP_CP_COMMIT:
        if (!cg->t->cp_commit)
            break;
        cg->t->cp_commit(cg);
        return;
    case OP_CP_WAIT: {
        int64_t v = 0;
        if (!cg->t->cp_wait || !cg_const_int(cg, n->a, &v))
            break;
        cg->t->cp_wait(cg, (int)v);
        return;
    }
    case OP_FENCE_PROXY:
        if (!cg->t->fence_proxy)
            break;
        cg->t->fence_proxy(cg);
        return;
    case OP_ASSIGN: assign(cg, s, n); return;
    case OP_STORE: store_stmt(cg, s, n); return;
    case OP_FOR: for_stmt(cg, s, n); return;
    case OP_IF: if_stmt(cg, s, n); return;
    case OP_EXPRSTMT: (void)cg_expr(cg, n->a); return;
    case OP_RETURN: LLVMBuildRetVoid(cg->b); return;
    case OP_SYNC: cg->t->barrier(cg); return;
    case OP_FENCE: cg->t->fence(cg); return;
    case OP_FENCE_GPU: cg->t->fence_gpu(cg); return;
    case OP_BAR_SYNC: case OP_BAR_ARRIVE: {
        LLVMValueRef id = cg_expr_of(cg, n->a, cg_scalar(DT_I32));
        LLVMValueRef cnt = n->b ? cg_expr_of(cg, n->b, cg_scalar(DT_I32)) : cg_i32(cg, cg->block_threads);
        cg->t->named_barrier(cg, id, cnt, n->op == OP_BAR_ARRIVE, n->span);
        return;
    }
    default:
        if (ir_ops[n->op].cls == OC_LOW) {
            cg_lowered_stmt(cg, s);
            return;
        }
        break;
    }
    const char *sp = ir_ops[n->op].spelling;
    if (n->op == OP_REG)
        sp = "a register tile (reg)";
    cg_unsupported(cg, s, *sp ? ir_fmt(cg->ctx, "'%s'", sp) : ir_fmt(cg->ctx, "this statement (%s)", ir_ops[n->op].name));
}

void cg_kernel(Cg *cg)
{
    Kernel *k = cg->k;
    cg_declare_smem(cg); /* every shared declaration is a slot of the plan's buffer */
    cg_block_stmts(cg, k->body);
}
