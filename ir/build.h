/* build.h — building typed IR for the lowering passes.
 *
 * A pass that rewrites the tree makes its new nodes through an IrB: every node
 * it returns carries a span (the builder's current one) and a concrete type
 * (Node.type), so the invariant the legalize pass establishes ("every
 * expression has its final type; codegen converts only at CAST nodes") holds
 * for the nodes the later passes add too. Scalar types are interned per
 * builder; tile types are added as they come.
 *
 * Cloning copies a subtree with substitutions: a NAME whose declaration has a
 * replacement becomes a copy of the replacement (a loop variable becomes its
 * value when a loop is unrolled), and declarations inside a cloned block get
 * fresh nodes (so each unrolled iteration has its own `let`s). */
#ifndef CAKE_IR_BUILD_H
#define CAKE_IR_BUILD_H
#include "ir.h"

typedef struct IrB {
    CakeCtx *ctx;
    Kernel *k;
    Span span;                       /* span given to new nodes */
    TypeId scalar[DT__COUNT][5];     /* interned scalar/vector types: lanes 1, 2, 4, 8, 16 */
    TypeId boolean;
    /* cloning: decl -> its replacement (expressions) or its copy (declarations) */
    NodeId *remap; uint32_t nremap;
} IrB;

void irb_init(IrB *b, CakeCtx *ctx, Kernel *k);

/* types */
TypeId irb_scalar_type(IrB *b, DType dt, int lanes);
const Type *irb_type(const IrB *b, NodeId n);      /* Node.type's record (kind TK_UNKNOWN if none) */
DType irb_dtype(const IrB *b, NodeId n);            /* element dtype of n's type */

/* leaves */
NodeId irb_int(IrB *b, int64_t v, DType dt);        /* integer literal of type dt */
NodeId irb_i32(IrB *b, int64_t v);
NodeId irb_special(IrB *b, SpecialReg r);            /* i32 */
NodeId irb_name(IrB *b, NodeId decl);                /* a use of decl, typed as decl */

/* expressions (the result type is given or follows the operands) */
NodeId irb_bin(IrB *b, Op op, NodeId x, NodeId y);   /* x, y of one type; comparisons give bool */
NodeId irb_un(IrB *b, Op op, NodeId x);
NodeId irb_cast(IrB *b, NodeId x, DType dt, int lanes);   /* no node when already of that type */
NodeId irb_call(IrB *b, Op op, const NodeId *args, uint32_t n, TypeId t);  /* builtins, lowered ops */
NodeId irb_select(IrB *b, NodeId c, NodeId x, NodeId y);
NodeId irb_index(IrB *b, NodeId base_decl, const NodeId *ix, uint32_t n, TypeId t);
NodeId irb_elem(IrB *b, NodeId array_decl, int64_t i);    /* array[i] of a per-thread array */
/* i32 helpers that fold constants: a + b, a * c, (a / d) % m */
NodeId irb_add(IrB *b, NodeId x, NodeId y);
NodeId irb_mul_c(IrB *b, NodeId x, int64_t c);
NodeId irb_add_c(IrB *b, NodeId x, int64_t c);
NodeId irb_divmod_c(IrB *b, NodeId x, int64_t div, int64_t mod);  /* (x / div) % mod, mod 0: none */
int irb_is_int(const IrB *b, NodeId x, int64_t *v);           /* an integer literal? */

/* statements and declarations */
NodeId irb_stmt(IrB *b, Op op, const NodeId *ops, uint32_t n);  /* a lowered statement (list = ops) */
NodeId irb_block(IrB *b, const NodeId *stmts, uint32_t n);
NodeId irb_if(IrB *b, NodeId cond, NodeId then_block, NodeId else_block);
NodeId irb_assign(IrB *b, NodeId lvalue, NodeId value);
NodeId irb_let(IrB *b, const char *name, NodeId init);          /* typed as init */
NodeId irb_var(IrB *b, const char *name, DType dt, NodeId init);
/* reg NAME: dt[n] (a per-thread array; n elements), optional initializer */
NodeId irb_array(IrB *b, const char *name, DType dt, int64_t n, NodeId init);
NodeId irb_decl_type(IrB *b, DType dt, int lanes, const int64_t *dims, uint32_t rank);

/* a growing statement list (arena-backed) */
typedef struct { NodeId *v; uint32_t n, cap; } IrList;
void irb_push(IrB *b, IrList *l, NodeId s);
NodeId irb_list_block(IrB *b, const IrList *l);

/* cloning */
void irb_map(IrB *b, NodeId decl, NodeId replacement);   /* uses of decl clone replacement */
NodeId irb_clone(IrB *b, NodeId n);                        /* deep copy with the substitutions */

/* replaces the contents of node `at` by a copy of node `from` (keeps at's id) */
void irb_replace(IrB *b, NodeId at, NodeId from);

#endif
