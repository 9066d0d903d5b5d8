/* types_priv.h — what the files of the type check share (types.c,
 * types_expr.c, types_mem.c, types_tc.c): small node/type accessors and the
 * functions one file calls in another. Not used outside the type check. */
#ifndef CAKE_TYPES_PRIV_H
#define CAKE_TYPES_PRIV_H
#include <string.h>
#include "vpriv.h"

static inline Node *N(Ver *v, NodeId n) { return &v->k->nodes[n]; }
static inline TypeId set(Ver *v, NodeId n, TypeId t) { N(v, n)->type = t; return t; }
static inline const Type *T(Ver *v, NodeId n) { return vt(v, vt_of(v, n)); }
static inline int known(Ver *v, NodeId n) { return n && vt_of(v, n) && !v_err(v, n); }
static inline NodeId arg(Ver *v, NodeId call, uint32_t i) { return ir_list_at(v->k, N(v, call), i); }

static inline Type blank(uint8_t kind)
{
    Type t;
    memset(&t, 0, sizeof t);
    t.kind = kind;
    t.lanes = 1;
    return t;
}

/* logical extent i of a (possibly transposed) 2-D view */
static inline int lx(const Type *t, int i) { return t->transposed && t->rank == 2 ? 1 - i : i; }

static inline int64_t ext(const Type *t, int i) { return t->shape[lx(t, i)]; }

/* types.c */
TypeId ty_pipe_member(Ver *v, NodeId e);
/* the warpgroup-capable context of node n: a warpgroup role, or the block */
int ty_warpgroup_ctx(Ver *v, NodeId n, const char **why);

/* types_expr.c */
/* the common dtype of a and b under implicit widening; DT_NONE if none */
DType ty_widen(DType a, DType b);
/* gives every untyped node of e's expression the scalar dtype dt */
void ty_settle(Ver *v, NodeId e, DType dt);
/* the type an untyped constant takes alone: f32, or i32 when it fits, else i64 */
DType ty_default_for(Ver *v, NodeId e);
/* makes untyped e take dtype dt; reports when it cannot. Returns 0 on error. */
int ty_adapt(Ver *v, NodeId e, DType dt);
/* integer operand (index, bound, count): settles untyped to i32 */
int ty_want_int(Ver *v, NodeId e, const char *what);
int ty_want_bool(Ver *v, NodeId e, const char *what, int lanes);
int ty_same_shape(Ver *v, const Type *a, const Type *b);
const char *ty_ext_str(Ver *v, const Type *t, int i);
/* a value (not a memory view) of a tile/vector/scalar type */
int ty_value_ok(Ver *v, NodeId e);
/* the shape part of an elementwise result from operands a and b (dtype filled later) */
int ty_merge_shape(Ver *v, NodeId e, NodeId a, NodeId b, Type *out);
TypeId ty_expr(Ver *v, NodeId e);
/* a value expression whose untyped constants take their default type */
TypeId ty_value(Ver *v, NodeId e);

/* types_mem.c */
int64_t ty_const_or(Ver *v, NodeId e, int64_t dflt);
TypeId ty_index_expr(Ver *v, NodeId e);
TypeId ty_trans_expr(Ver *v, NodeId e);
/* the value a memory view reads as: element -> scalar, 1-D of 2/4/8/16 -> vector, else tile */
Type ty_view_value(const Type *r);
/* bytes of one element in memory: bool is stored as a byte (ir_dtype_bytes says 0) */
int ty_mem_bytes(int dt);
TypeId ty_load_expr(Ver *v, NodeId e);
/* the value of a store/stmatrix against its destination reference */
void ty_store_stmt(Ver *v, NodeId s);
/* cp.async dst(shared) <- src(global): per thread 4, 8 or 16 bytes, or a whole tile */
void ty_cp_async_stmt(Ver *v, NodeId s);

/* types_tc.c */
void ty_tc_stmt(Ver *v, NodeId s);
/* `f = ldmatrix(view)`: the target layout decides which dim must be contiguous (7.4) */
void ty_ldmatrix_form(Ver *v, NodeId val, TypeId tdst);
void ty_stmatrix_stmt(Ver *v, NodeId s);

#endif
