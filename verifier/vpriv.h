/* vpriv.h — what the verifier's passes share: the per-kernel state (type
 * interning, the role table), type constructors and message helpers. Not a
 * public header: other stages use verify.h (and ir/targets.h, analysis/consteval.h). */
#ifndef CAKE_VPRIV_H
#define CAKE_VPRIV_H
#include "verify.h"
#include "targets.h"
#include "consteval.h"

/* untyped constants while checking (never left on a node afterwards) */
#define VT_UNTYPED_INT 'i'
#define VT_UNTYPED_FLOAT 'f'

typedef struct {
    NodeId node;            /* OP_ROLE */
    int64_t first, end;     /* warps [first, end) in units of warps; -1 if unknown */
    int64_t regs;           /* 0: no budget */
    int unit;               /* Unit as written */
    int uses_warpgroup;     /* holds wgmma / warpgroup-scope state */
} VRole;

typedef struct Ver {
    CakeCtx *ctx;
    Kernel *k;
    TypeId t_uint, t_ufloat, t_bool, t_void, t_i32;
    VRole *roles; uint32_t nroles;
    NodeId *role_of;                 /* per node: the enclosing ROLE (0: none) */
    uint8_t *in_ref;                 /* per node: inside the reference block */
    int64_t block_threads[TG__COUNT];/* per declared target; 0 when not constant */
    int ref_seen;                    /* the body holds the OP_REFERENCE item */
} Ver;

/* The part of ver_kernel no parameter value changes, done once for all the
 * combinations params.c checks: every node's role and whether it is
 * reference code (the tree's shape: binding a combination only repoints
 * parameter declarations, which lie outside the body), and the E0337 check of
 * the reference block (it looks at ops, never at values), whose marked nodes
 * (NF_ERROR) each run gets back after its reset. */
typedef struct VerTree {
    NodeId *role_of;
    uint8_t *in_ref;
    NodeId *marked; uint32_t nmarked;
    uint32_t errors;                 /* E0337s it reported (no coverage check then) */
} VerTree;

void ver_tree(CakeCtx *ctx, Kernel *k, VerTree *t);
/* ver_kernel on the shared part t (ver_tree of k, then k rebound and reset) */
uint32_t ver_kernel_tree(CakeCtx *ctx, Kernel *k, const VerTree *t);

/* calls fn on n and every node below it, parents first */
void v_walk(Ver *v, NodeId n, void (*fn)(Ver *, NodeId, void *), void *arg);

/* ---- types ------------------------------------------------------------ */
TypeId vt_intern(Ver *v, const Type *t);
TypeId vt_scalar(Ver *v, DType dt);
TypeId vt_vector(Ver *v, DType dt, int lanes);
static inline const Type *vt(const Ver *v, TypeId t) { return &v->k->types[t]; }
static inline TypeId vt_of(const Ver *v, NodeId n) { return n ? v->k->nodes[n].type : 0; }
int vt_is_untyped(const Type *t);
int vt_is_int(const Type *t);      /* integer dtype or untyped int (scalar) */
int vt_is_float_dt(DType dt);
int vt_is_int_dt(DType dt);
/* "bf16[128, 64]", "f32x8", "mbarrier", ...: an arena string for messages */
const char *vt_str(Ver *v, TypeId t);
int vt_same_extent(const Ver *v, const Type *a, int i, const Type *b, int j);
int vt_same_expr(const Kernel *k, NodeId a, NodeId b);
int64_t vt_elems(const Type *t);   /* product of the constant extents, -1 if symbolic */

/* ---- messages -------------------------------------------------------- */
const char *v_text(Ver *v, NodeId n);         /* the source text of a node (arena) */
const char *v_source(Ver *v, NodeId n);       /* exact (never shortened): for fix-its */
Span v_span(const Ver *v, NodeId n);
const char *v_name(const Ver *v, NodeId n);   /* the declared/referenced name of n */
int v_err(const Ver *v, NodeId n);            /* the node already carries an error */
void v_mark(Ver *v, NodeId n);                /* sets NF_ERROR */
Diag *v_report(Ver *v, DiagCode code, NodeId at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void v_note_decl(Ver *v, Diag *d, NodeId decl, const char *what);
/* the declaration a reference expression names (through INDEX/TRANS), or 0 */
NodeId v_root_decl(const Ver *v, NodeId e);
static inline NodeId v_role_of(const Ver *v, NodeId n) { return v->role_of[n]; }
const VRole *v_role(const Ver *v, NodeId role_node);
int v_const(const Ver *v, NodeId e, int64_t *out);

/* ---- passes (one file each) ---------------------------------------- */
void ver_roles(Ver *v);       /* resources.c: the role table (before types) */
void ver_types(Ver *v);       /* types.c */
void ver_caps(Ver *v);        /* caps.c: op legality per declared target */
uint8_t *ver_dead_nodes(Ver *v); /* caps.c: 1 under a branch the parameters' values make dead */
void ver_resources(Ver *v);   /* resources.c */
void ver_tma_check(Ver *v);   /* tma.c */

#endif
