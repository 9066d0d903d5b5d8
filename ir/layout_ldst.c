/* layout_ldst.c — ldmatrix / stmatrix address maps (PTX 9.7.14.5.15, 9.7.14.5.16):
 * which tile element each lane's row address points at, and which fragment register
 * each 8x8 matrix fills or comes from. "frag" and "group" are defined in layout.h. */
#include "layout_geo.h"

/* ---- ldmatrix: mma_a, wgmma_a (one .x4 per atom), mma_b (one .x4 per 2 atoms) ---- */

static int ld_geo(const LyTile *t, LyGeo *g)
{
    return ly_geo(t, g, NULL, 0) && (g->atom == AT_NV_A || g->atom == AT_NV_B);
}

static int pairs(int n) { return (n + 1) / 2; }   /* n8 fragments per .x4 of mma_b */

int ly_ldmatrix_frags(const LyTile *t)
{
    LyGeo g;
    if (!ld_geo(t, &g))
        return 0;
    return g.atom == AT_NV_A ? g.nfr * g.nfc : g.nfr * pairs(g.nfc);
}

int ly_ldmatrix_plan(const LyTile *t, int frag, int trans, LyLdm *how)
{
    LyGeo g;
    if (!ld_geo(t, &g) || frag < 0 || frag >= ly_ldmatrix_frags(t) || (trans && g.bits != 16))
        return 0;
    how->trans = trans != 0;
    how->nmat = 4;
    if (g.atom == AT_NV_B && g.nfc % 2 && frag % pairs(g.nfc) == pairs(g.nfc) - 1)
        how->nmat = 2;   /* the last, lone n8 fragment */
    return 1;
}

/* matrix m of frag for an A atom: rows 8(m&1).., 16-byte K chunk (m>>1) */
static void ld_row_a(const LyGeo *g, int frag, int trans, int thr, int m, int r, int *row, int *col)
{
    int chunk = 4 * g->pack;   /* elements of K in 16 bytes */
    int r0 = frag / g->nfc * g->fr + (g->wg ? 16 * (thr / 32) : 0) + 8 * (m & 1);
    int c0 = frag % g->nfc * g->fc + chunk * (m >> 1);
    /* plain: row r of the matrix is tile row r0 + r, its 16 bytes run along K;
       .trans: row r is K index c0 + r, its 8 elements run along M */
    *row = trans ? r0 : r0 + r;
    *col = trans ? c0 + r : c0;
}

/* matrix m of frag for B: n8 fragment 2p + (m>>1), register b_(m&1) */
static void ld_row_b(const LyGeo *g, int frag, int trans, int m, int r, int *row, int *col)
{
    int ki = frag / pairs(g->nfc), ni = 2 * (frag % pairs(g->nfc)) + (m >> 1);
    int k0 = ki * g->fr + 4 * g->pack * (m & 1), n0 = 8 * ni;
    /* plain: shared [N, K], row r is n0 + r, its bytes run along K;
       .trans: shared [K, N], row r is k0 + r, its 8 elements run along N */
    *row = trans ? k0 + r : k0;
    *col = trans ? n0 : n0 + r;
}

void ly_ldmatrix_row(const LyTile *t, int frag, int trans, int thr, int *row, int *col)
{
    LyGeo g;
    LyLdm how;
    *row = *col = -1;
    if (!ly_ldmatrix_plan(t, frag, trans, &how) || !ld_geo(t, &g) || thr < 0 || thr >= g.threads)
        return;
    int lane = thr % 32, m = lane / 8 % how.nmat, r = lane % 8;
    if (g.atom == AT_NV_A)
        ld_row_a(&g, frag, trans, thr, m, r, row, col);
    else
        ld_row_b(&g, frag, trans, m, r, row, col);
}

int ly_ldmatrix_dst(const LyTile *t, int frag, int trans, int mat)
{
    LyGeo g;
    LyLdm how;
    if (!ly_ldmatrix_plan(t, frag, trans, &how) || !ld_geo(t, &g) || mat < 0 || mat >= how.nmat)
        return -1;
    if (g.atom == AT_NV_A)   /* 4 registers per atom, a0..a3 */
        return 4 * frag + mat;
    int ki = frag / pairs(g.nfc), ni = 2 * (frag % pairs(g.nfc)) + (mat >> 1);
    return 2 * (ki * g.nfc + ni) + (mat & 1);   /* 2 registers per atom, b0, b1 */
}

/* ---- stmatrix: 16-bit mma / wgmma accumulator tiles, 16 x 16 per .x4 --------------- */

static int st_geo(const LyTile *t, LyGeo *g, int *chunks)
{
    if (!ly_geo(t, g, NULL, 0) || g->atom != AT_NV_C || g->bits != 16)
        return 0;
    *chunks = g->fc / 8;   /* 8-column chunks per atom: 1 (mma) or N/8 (wgmma) */
    return 1;
}

/* 16-column pieces of one atom row: mma pairs atoms, wgmma splits its wide atom */
static int st_per_row(const LyGeo *g, int chunks)
{
    return g->wg ? pairs(chunks) : pairs(g->nfc);
}

int ly_stmatrix_groups(const LyTile *t)
{
    LyGeo g;
    int chunks;
    return st_geo(t, &g, &chunks) ? g.nfr * st_per_row(&g, chunks) : 0;
}

int ly_stmatrix_plan(const LyTile *t, int group, LyLdm *how)
{
    LyGeo g;
    int chunks;
    if (!st_geo(t, &g, &chunks) || group < 0 || group >= ly_stmatrix_groups(t))
        return 0;
    int per = st_per_row(&g, chunks), total = g.wg ? chunks : g.nfc;
    how->trans = 0;
    how->nmat = total % 2 && group % per == per - 1 ? 2 : 4;
    return 1;
}

/* the 8-column chunk (over the whole tile width) and atom row of matrix m of group */
static void st_piece(const LyGeo *g, int chunks, int group, int m, int *arow, int *chunk)
{
    int per = st_per_row(g, chunks);
    *arow = group / per;
    *chunk = 2 * (group % per) + (m >> 1);
}

void ly_stmatrix_row(const LyTile *t, int group, int thr, int *row, int *col)
{
    LyGeo g;
    LyLdm how;
    int chunks, arow, chunk;
    *row = *col = -1;
    if (!ly_stmatrix_plan(t, group, &how) || !st_geo(t, &g, &chunks) || thr < 0 || thr >= g.threads)
        return;
    int lane = thr % 32, m = lane / 8 % how.nmat;
    st_piece(&g, chunks, group, m, &arow, &chunk);
    *row = arow * g.fr + (g.wg ? 16 * (thr / 32) : 0) + 8 * (m & 1) + lane % 8;
    *col = 8 * chunk;
}

int ly_stmatrix_src(const LyTile *t, int group, int mat)
{
    LyGeo g;
    LyLdm how;
    int chunks, arow, chunk;
    if (!ly_stmatrix_plan(t, group, &how) || !st_geo(t, &g, &chunks) || mat < 0 || mat >= how.nmat)
        return -1;
    st_piece(&g, chunks, group, mat, &arow, &chunk);
    /* element (g or g+8, 8*chunk + 2t) is d[4j + 2h] of its atom; two per register */
    int e = g.wg ? arow * g.ept + 4 * chunk + 2 * (mat & 1)
                 : (arow * g.nfc + chunk) * g.ept + 2 * (mat & 1);
    return e / 2;
}
