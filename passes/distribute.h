/* distribute.h — the distribute pass's internals, shared by distribute.c
 * (register tiles, element-wise tile statements, row/column reductions,
 * tile stores) and distribute_tc.c (mma, wgmma, ldmatrix, stmatrix).
 *
 * A register tile with a layout becomes a per-thread array of the elements
 * its layout gives each thread (ir/layout: ly_elems, in the canonical
 * element order). Every tile value is then addressed by *base coordinates*:
 * the coordinates an element has in lane 0 of its scope; the coordinates in
 * another thread add the layout's thread part, which is the same for every
 * tile of one layout family, so operands of one statement are matched by
 * base coordinates and no thread needs another thread's element except
 * through the explicit shuffles of a reduction. */
#ifndef CAKE_DISTRIBUTE_H
#define CAKE_DISTRIBUTE_H
#include "lower.h"
#include "layout.h"
#include "targets.h"

typedef struct {
    NodeId src;        /* the source REG declaration */
    NodeId arr;        /* its per-thread array (REG dt[n]) */
    LyTile ly;
    int *index;        /* base (row, col) -> element + 1; rows x max(cols, 1) */
} Frag;

/* a view of a distributed tile: rows [r0, r0 + rows) x cols [c0, c0 + cols) */
typedef struct {
    Frag *f;
    int r0, c0, rows, cols;
    int rowvec, colvec;   /* a [R] row vector / [1, C] column vector */
} FView;

typedef struct {
    NodeId node;       /* a rowmax/rowsum/... (or colmax ...) node of the statement */
    NodeId arr;        /* the per-thread array holding its result */
    int *slot;         /* base row (or column) -> element + 1 */
    int len;
} Red;

typedef struct {
    Frag *frags; uint32_t nfrags, capfrags;
    Red reds[16]; uint32_t nreds;   /* reductions of the current statement */
    IrList *pre;                     /* statements hoisted before it */
    NodeId thr_row, thr_col;         /* thread parts of the statement's layout (i32) */
    NodeId imp_r, imp_c;             /* implicit index declarations of the statement */
    uint32_t ntemps;
    int cvt_pairs;                   /* CAKE_CVT_PAIRS: f32 -> 16-bit element pairs converted as one */
    int fresh_all;                   /* CAKE_FRESH (not "0"): every statement as in a `fresh` loop */
    uint8_t *implicit;               /* per node the pass started with: 0 not yet known, 1 reads no
                                        element through implicit indices, 2 does (has_implicit_elem) */
    uint32_t nimplicit;
} Dist;

Frag *dist_frag(Lw *w, NodeId decl);
int dist_view(Lw *w, NodeId ref, FView *v);               /* a register tile view, or 0 */
NodeId dist_at(Lw *w, const FView *v, int r, int c);      /* the element at view coords, or 0 */
int dist_is_frag_type(Lw *w, NodeId n);                    /* n's type is a distributed tile */
LyTile dist_ly_of(Lw *w, NodeId n);                        /* the layout tile of n's type */
NodeId dist_elem(Lw *w, NodeId e, int r, int c);           /* scalar value of tile expr e at (r, c) */
NodeId dist_thread_part(Lw *w, const LyTile *t, int col);  /* Σ coef ((thread.x / div) % mod) */
void dist_error(Lw *w, NodeId at, const char *what);

/* distribute_tc.c: the distribute hook of each tensor-core family
 * (ir/tcfamily.h); NULL: the family is not lowered (unsupported.c reports it) */
typedef void (*DistTcFn)(Lw *w, NodeId s, IrList *out);
extern const DistTcFn dist_tc[TCF__COUNT];
void dist_ldmatrix(Lw *w, NodeId s, NodeId dst, NodeId call, IrList *out);
void dist_stmatrix(Lw *w, NodeId s, IrList *out);

#endif
