/* cg_types.c — what code generation knows of types: nothing of its own. The
 * type of a node is its Node.type, settled by the verifier and made explicit by
 * the legalize pass (the invariant is at the top of passes/legalize.c): every
 * operand already has the type its consumer computes in, so codegen converts
 * only at OP_CAST nodes. cg_ty turns a Type into the dtype and lanes codegen
 * emits; for an array, a tensor or a tile, that is its element. */
#include "cg_int.h"

CgTy cg_scalar(DType d)
{
    return (CgTy){(uint8_t)d, 1};
}

int cg_is_float(CgTy t)
{
    return ir_dtypes[t.dt].kind == 'f';
}

int cg_is_signed(CgTy t)
{
    return ir_dtypes[t.dt].kind == 'i';
}

int cg_is_int(CgTy t)
{
    char c = ir_dtypes[t.dt].kind;
    return c == 'i' || c == 'u' || c == 'b';
}

int cg_same(CgTy a, CgTy b)
{
    return a.dt == b.dt && a.lanes == b.lanes;
}

CgTy cg_ty(Cg *cg, NodeId e)
{
    const Node *n = ir_get(cg->k, e);
    if (!e || !n->type || n->type >= cg->k->ntypes || cg->k->types[n->type].kind == TK_UNKNOWN)
        ir_bug(cg->ctx, "code generation: node %u (%s) has no type; run pass_run_all (legalize) "
               "on a verified kernel first", e, ir_ops[n->op].name);
    const Type *t = &cg->k->types[n->type];
    return (CgTy){t->dtype, t->lanes ? t->lanes : 1};
}
