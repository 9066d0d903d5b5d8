/* lower.h — what the lowering passes share: a block rewriter that knows the
 * enclosing role, the single-issue condition of a role, shared-memory
 * address expressions for views of shared tiles, and small node queries.
 * Each pass (pipes.c, async.c, distribute.c, roles.c, abi.c) is one file with
 * one entry point in passes.h; this is their common toolbox. */
#ifndef CAKE_PASSES_LOWER_H
#define CAKE_PASSES_LOWER_H
#include "passes.h"
#include "build.h"

typedef struct Lw Lw;
/* appends the statements that replace s (possibly s itself) to out */
typedef void (*LwStmtFn)(Lw *w, NodeId s, IrList *out);

struct Lw {
    IrB b;
    Target tg;
    NodeId role;        /* the ROLE whose body is being rewritten, 0 outside roles */
    uint32_t fresh;     /* `fresh` loops around the statement being rewritten (NF_FRESH_LOOP) */
    void *user;         /* the pass's own state */
    uint32_t errors;
};

void lw_init(Lw *w, CakeCtx *ctx, Kernel *k, Target tg, void *user);

/* Rewrites every block reachable from `block` (nested blocks first, role
 * bodies with w->role set, the bodies of `fresh` loops with w->fresh counting
 * them) by calling fn on each of its statements. The reference block is not
 * visited. */
void lw_rewrite(Lw *w, NodeId block, LwStmtFn fn);

/* the condition under which the issuing thread of the current unit runs a
 * single-issue statement (docs/tir.md §6): thread 0 of each warpgroup in a
 * warpgroup role, lane 0 of each warp in a warp role, thread 0 outside roles */
NodeId lw_issuer(Lw *w);
/* `if issuer { stmts }` */
NodeId lw_single_issue(Lw *w, const NodeId *stmts, uint32_t n);

/* E0902 at `at` (once per node: a node already in error is skipped): the
 * lowering cannot handle `what` yet; help points the user at docs/tirl.md */
void lw_unsupported(Lw *w, NodeId at, const char *what, const char *help);

/* node queries */
Node *lw_node(Lw *w, NodeId n);
NodeId lw_decl_of(Lw *w, NodeId ref);          /* the declaration a NAME / INDEX / ^T ref names */
int lw_const(Lw *w, NodeId e, int64_t *v);      /* compile-time integer (params bound) */

/* A view of a shared tile: ref = NAME, INDEX (elements, slices, ':'), ^T.
 * Fills the tile's declaration, the view's shape (its kept dims) and, per
 * tile dim, the start index expression of the view (i32; INT 0 for ':'). */
typedef struct {
    NodeId decl;                 /* SHARED */
    int rank;                    /* tile rank */
    int64_t dims[IR_MAX_RANK];   /* tile extents */
    NodeId start[IR_MAX_RANK];   /* start index per tile dim */
    int kept[IR_MAX_RANK];       /* the dim is a slice or ':' (part of the view) */
    int64_t extent[IR_MAX_RANK]; /* extent of the view along each tile dim (1 if not kept) */
    int transposed;
    DType dt;
    int swizzle;
} LwView;
int lw_view(Lw *w, NodeId ref, LwView *v);

/* An element of the tile: tile indices = the view's start + rel (rel given
 * per view dim, in the view's order, i.e. over the kept dims; NULL = 0). The
 * result is an INDEX ref with one element index per tile dim. */
NodeId lw_elem_ref(Lw *w, const LwView *v, const NodeId *rel);
/* the u32 shared address of an element ref: swizzled (the element's place),
 * or raw (the unswizzled offset: TMA boxes and wgmma descriptors, whose
 * hardware applies the swizzle itself) */
NodeId lw_saddr(Lw *w, NodeId ref, int raw);
/* the shared address of an mbarrier element ref (NAME or NAME[i]) */
NodeId lw_mbar_addr(Lw *w, NodeId bar_ref);

#endif
