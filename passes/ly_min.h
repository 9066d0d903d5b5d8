/* ly_min.h — TEMPORARY: the subset of ir/layout.h (being written on the
 * `layout` branch) that distribute needs; replaced at the merge. */
#ifndef CAKE_LY_MIN_H
#define CAKE_LY_MIN_H
#include "ir.h"

typedef struct {
    Layout layout;
    DType dtype;
    int rows, cols;
    int colvec;
    int scope_threads;
    int warp_size;
} LyTile;

typedef struct { int div, mod, coef; } LyTerm;
typedef struct { LyTerm row[4], col[4]; int nrow, ncol; } LyThreadPart;

int ly_threads(const LyTile *t);
int ly_elems(const LyTile *t);
void ly_elem_base(const LyTile *t, int e, int *row0, int *col0);
void ly_thread_part(const LyTile *t, LyThreadPart *out);
void ly_coord(const LyTile *t, int thr, int e, int *row, int *col);
#endif
