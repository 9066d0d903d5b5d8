/* layout_geo.h — private to ir/layout*.c: a valid LyTile reduced to its atom (the
 * instruction fragment it repeats) and the row-major grid of atoms (layout.h). */
#ifndef CAKE_LAYOUT_GEO_H
#define CAKE_LAYOUT_GEO_H

#include "layout.h"

/* layout.c: writes a refusal's reason into why (when given) and answers 0 */
int ly_refuse(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

typedef enum {
    AT_NV_C,     /* mma m16n8 / wgmma m64nN accumulator */
    AT_NV_A,     /* mma / wgmma A fragment (16 x 8P) */
    AT_NV_B,     /* mma B fragment (8P x 8) */
    AT_NV_ROWV,  /* row vector of mma / wgmma */
    AT_NV_COLV,  /* column vector of mma / wgmma */
    AT_MF_C,     /* MFMA accumulator M x M */
    AT_MF_A,     /* MFMA A (M x K) */
    AT_MF_B,     /* MFMA B (K x M) */
    AT_MF_ROWV,
    AT_MF_COLV,
    AT_ROWS,     /* rows layout, 16-byte chunks round-robin */
    AT_ROWS_VEC  /* row vector of rows: replicated */
} LyAtom;

typedef struct {
    LyAtom atom;
    int wg;          /* NVIDIA warpgroup layouts: atom rows start at 16 * warp */
    int pack;        /* NVIDIA A/B: elements per register P; MFMA A/B: elements per lane */
    int m;           /* MFMA atom: 32 or 16 */
    int fr, fc;      /* atom shape */
    int nfr, nfc;    /* atom grid, row-major */
    int ept;         /* elements per thread per atom (rows: per thread) */
    int threads;     /* of the owning scope */
    int bits;        /* of the dtype */
    int rows, cols, vec;   /* rows layout: shape, V elements per 16-byte chunk */
} LyGeo;

/* fills g for a valid tile and returns 1; else 0 with the reason in why */
int ly_geo(const LyTile *t, LyGeo *g, char *why, size_t n);

#endif
