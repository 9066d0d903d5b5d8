/* ly_min.c — TEMPORARY subset of ir/layout.c (see ly_min.h). */
#include "ly_min.h"

static int is_rowvec(const LyTile *t) { return t->cols == 0; }

int ly_threads(const LyTile *t)
{
    switch (t->layout) {
    case LY_WGMMA: case LY_WGMMA_A: return 128;
    case LY_ROWS: return t->scope_threads;
    default: return t->warp_size ? t->warp_size : 32;
    }
}

int ly_elems(const LyTile *t)
{
    if (is_rowvec(t))
        return t->layout == LY_WGMMA ? t->rows / 64 * 2 : t->rows / 16 * 2;
    if (t->colvec)
        return t->cols / 4;
    switch (t->layout) {
    case LY_MMA: case LY_MMA_B: return t->rows * t->cols / 32;
    case LY_MMA_A: return t->rows * t->cols / 32;
    case LY_WGMMA: case LY_WGMMA_A: return t->rows * t->cols / 128;
    default: return 0;
    }
}

void ly_elem_base(const LyTile *t, int e, int *r, int *c)
{
    *r = *c = 0;
    if (is_rowvec(t)) { /* element 2b + h: row 16b (+16w) + 8h + g */
        int blk = e / 2, h = e % 2;
        *r = (t->layout == LY_WGMMA ? 64 : 16) * blk + 8 * h;
        return;
    }
    if (t->colvec) { /* element 2j + h: column 8j + 2t + h */
        *c = 8 * (e / 2) + e % 2;
        return;
    }
    switch (t->layout) {
    case LY_MMA: { /* (mi, ni) fragments of 4: (g, 2t) (g, 2t+1) (g+8, 2t) (g+8, 2t+1) */
        int nb = t->cols / 8, f = e / 4, q = e % 4;
        *r = 16 * (f / nb) + 8 * (q / 2);
        *c = 8 * (f % nb) + q % 2;
        return;
    }
    case LY_MMA_A: { /* (mi, ki) fragments of 8: a0 (g, 2t..) a1 (g+8, ..) a2 (g, 2t+8..) a3 (g+8, 2t+8..) */
        int kb = t->cols / 16, f = e / 8, q = e % 8, reg = q / 2;
        *r = 16 * (f / kb) + 8 * (reg % 2);
        *c = 16 * (f % kb) + 8 * (reg / 2) + q % 2;
        return;
    }
    case LY_MMA_B: { /* (ki, ni) fragments of 4: b0 (k 2t.., n g) b1 (k 2t+8.., n g) */
        int nb = t->cols / 8, f = e / 4, q = e % 4;
        *r = 16 * (f / nb) + 8 * (q / 2) + q % 2;
        *c = 8 * (f % nb);
        return;
    }
    case LY_WGMMA: { /* slab * N/2 + 4j + q: (16w + g [+8], 8j + 2t [+1]) */
        int per = t->cols / 2, slab = e / per, x = e % per, j = x / 4, q = x % 4;
        *r = 64 * slab + 8 * (q / 2);
        *c = 8 * j + q % 2;
        return;
    }
    case LY_WGMMA_A: { /* (slab, ki) fragments of 8, as mma_a per warp */
        int kb = t->cols / 16, f = e / 8, q = e % 8, reg = q / 2;
        *r = 64 * (f / kb) + 8 * (reg % 2);
        *c = 16 * (f % kb) + 8 * (reg / 2) + q % 2;
        return;
    }
    default:
        return;
    }
}

void ly_thread_part(const LyTile *t, LyThreadPart *o)
{
    LyTerm g = {4, 8, 1}, t2 = {1, 4, 2}, w16 = {32, 4, 16};
    o->nrow = o->ncol = 0;
    int wg = t->layout == LY_WGMMA || t->layout == LY_WGMMA_A;
    if (t->layout == LY_MMA_B && !t->colvec && !is_rowvec(t)) {
        o->row[o->nrow++] = t2;
        o->col[o->ncol++] = g;
        return;
    }
    if (!t->colvec) {
        o->row[o->nrow++] = g;
        if (wg)
            o->row[o->nrow++] = w16;
    }
    if (!is_rowvec(t))
        o->col[o->ncol++] = t2;
}

void ly_coord(const LyTile *t, int thr, int e, int *row, int *col)
{
    LyThreadPart p;
    ly_elem_base(t, e, row, col);
    ly_thread_part(t, &p);
    for (int i = 0; i < p.nrow; i++)
        *row += p.row[i].coef * ((thr / p.row[i].div) % p.row[i].mod);
    for (int i = 0; i < p.ncol; i++)
        *col += p.col[i].coef * ((thr / p.col[i].div) % p.col[i].mod);
}
