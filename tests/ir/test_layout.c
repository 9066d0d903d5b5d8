/* test_layout.c — ir/layout fragment maps, element by element: against the PTX ISA's
 * fragment formulas and figures, CUTLASS's CuTe thread-value layouts for wgmma, the
 * AMD matrix calculator's CDNA3 tables; bijection, owners, affine split, packing, and
 * ldmatrix / stmatrix simulated on a fake shared memory. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "layout.h"

/* ---- tiles ----------------------------------------------------------------- */

static LyTile nv(Layout l, DType dt, int r, int c)
{
    return (LyTile){.layout = l, .dtype = dt, .rows = r, .cols = c, .warp_size = 32};
}

static LyTile amd(Layout l, DType dt, int r, int c)
{
    return (LyTile){.layout = l, .dtype = dt, .rows = r, .cols = c, .warp_size = 64};
}

static LyTile colvec(LyTile t)
{
    t.colvec = 1;
    return t;
}

static LyTile shape16(LyTile t)
{
    t.mfma_shape = 16;
    return t;
}

static LyTile rows_t(DType dt, int r, int c, int threads)
{
    return (LyTile){.layout = LY_ROWS, .dtype = dt, .rows = r, .cols = c, .scope_threads = threads};
}

/* every layout, several shapes and dtypes each */
static LyTile *all_tiles(int *n)
{
    static LyTile t[128];
    int k = 0;
    t[k++] = nv(LY_MMA, DT_F32, 16, 8);
    t[k++] = nv(LY_MMA, DT_F32, 64, 64);
    t[k++] = nv(LY_MMA, DT_F16, 48, 24);
    t[k++] = nv(LY_MMA, DT_I32, 32, 16);
    t[k++] = nv(LY_MMA, DT_BF16, 16, 40);
    t[k++] = nv(LY_MMA, DT_F32, 32, 0);           /* row vector */
    t[k++] = colvec(nv(LY_MMA, DT_F32, 1, 24));   /* column vector */
    t[k++] = nv(LY_MMA_A, DT_BF16, 16, 16);
    t[k++] = nv(LY_MMA_A, DT_F16, 48, 32);
    t[k++] = nv(LY_MMA_A, DT_I8, 16, 32);
    t[k++] = nv(LY_MMA_A, DT_E4M3, 32, 64);
    t[k++] = nv(LY_MMA_A, DT_TF32, 16, 8);
    t[k++] = nv(LY_MMA_A, DT_TF32, 32, 24);
    t[k++] = nv(LY_MMA_B, DT_BF16, 16, 8);
    t[k++] = nv(LY_MMA_B, DT_F16, 32, 24);
    t[k++] = nv(LY_MMA_B, DT_U8, 32, 8);
    t[k++] = nv(LY_MMA_B, DT_E5M2, 64, 16);
    t[k++] = nv(LY_MMA_B, DT_TF32, 8, 8);
    t[k++] = nv(LY_MMA_B, DT_TF32, 16, 24);
    t[k++] = nv(LY_WGMMA, DT_F32, 64, 8);
    t[k++] = nv(LY_WGMMA, DT_F32, 64, 256);
    t[k++] = nv(LY_WGMMA, DT_F32, 128, 64);
    t[k++] = nv(LY_WGMMA, DT_BF16, 128, 72);
    t[k++] = nv(LY_WGMMA, DT_F32, 128, 0);
    t[k++] = colvec(nv(LY_WGMMA, DT_F32, 1, 128));
    t[k++] = nv(LY_WGMMA_A, DT_BF16, 64, 16);
    t[k++] = nv(LY_WGMMA_A, DT_BF16, 128, 64);
    t[k++] = nv(LY_WGMMA_A, DT_U8, 64, 64);
    t[k++] = nv(LY_WGMMA_A, DT_TF32, 128, 16);
    t[k++] = amd(LY_MFMA, DT_F32, 32, 32);
    t[k++] = amd(LY_MFMA, DT_F32, 64, 96);
    t[k++] = amd(LY_MFMA, DT_I32, 16, 16);
    t[k++] = amd(LY_MFMA, DT_F32, 48, 32);
    t[k++] = amd(LY_MFMA, DT_F32, 64, 0);
    t[k++] = shape16(amd(LY_MFMA, DT_F32, 32, 0));
    t[k++] = colvec(amd(LY_MFMA, DT_F32, 1, 64));
    t[k++] = colvec(amd(LY_MFMA, DT_F32, 1, 48));
    t[k++] = amd(LY_MFMA_A, DT_F16, 32, 8);
    t[k++] = amd(LY_MFMA_A, DT_BF16, 64, 32);
    t[k++] = amd(LY_MFMA_A, DT_F16, 16, 16);
    t[k++] = amd(LY_MFMA_A, DT_BF16, 48, 32);
    t[k++] = amd(LY_MFMA_A, DT_F32, 32, 2);
    t[k++] = amd(LY_MFMA_A, DT_F32, 16, 8);
    t[k++] = amd(LY_MFMA_B, DT_BF16, 8, 32);
    t[k++] = amd(LY_MFMA_B, DT_F16, 32, 64);
    t[k++] = amd(LY_MFMA_B, DT_BF16, 16, 16);
    t[k++] = amd(LY_MFMA_B, DT_F32, 2, 32);
    t[k++] = amd(LY_MFMA_B, DT_F32, 4, 16);
    t[k++] = rows_t(DT_BF16, 64, 64, 128);     /* 8 chunks a row, T % 8 == 0 */
    t[k++] = rows_t(DT_F32, 4, 2048, 128);     /* 512 chunks a row, multiple of T */
    t[k++] = rows_t(DT_F32, 3, 24, 128);       /* 6 chunks a row: no affine split */
    t[k++] = rows_t(DT_BF16, 1, 100, 64);      /* a partial last chunk */
    t[k++] = rows_t(DT_U8, 5, 64, 8);          /* 20 chunks over 8 threads: empty slots */
    t[k++] = rows_t(DT_F64, 16, 16, 256);
    t[k++] = rows_t(DT_F32, 32, 0, 96);        /* replicated row vector */
    *n = k;
    return t;
}

/* ---- reference maps, written from the sources ---------------------------------- */

/* PTX 9.7.14.5.7 / .8 / .10: "row = groupID for ai where ..." transcribed as written */
static void ptx_atom(Layout l, int bits, DType dt, int lane, int i, int *r, int *c)
{
    int g = lane >> 2, t = lane % 4;
    if (l == LY_MMA || l == LY_WGMMA) {             /* Figure 83: c0..c3 */
        *r = i < 2 ? g : g + 8;
        *c = t * 2 + (i & 1);
    } else if (l == LY_MMA_A && bits == 16) {       /* Figure 79 */
        *r = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
        *c = i < 4 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
    } else if (l == LY_MMA_A && bits == 8) {        /* Figure 88 */
        *r = (i < 4 || (i >= 8 && i < 12)) ? g : g + 8;
        *c = i < 8 ? t * 4 + (i & 3) : t * 4 + (i & 3) + 16;
    } else if (l == LY_MMA_A && dt == DT_TF32) {    /* Figure 72 */
        *r = (i == 0 || i == 2) ? g : g + 8;
        *c = i < 2 ? t : t + 4;
    } else if (l == LY_MMA_B && bits == 16) {       /* Figure 81 */
        *r = i < 2 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
        *c = g;
    } else if (l == LY_MMA_B && bits == 8) {        /* Figures 90, 91 */
        *r = i < 4 ? t * 4 + (i & 3) : t * 4 + (i & 3) + 16;
        *c = g;
    } else {                                        /* Figure 75: tf32 B */
        *r = i == 0 ? t : t + 4;
        *c = g;
    }
}

/* CUTLASS cute/atom/mma_traits_sm90_gmma.hpp: (thread, value) -> m + 64 * k */
typedef struct { int ts[3], tst[3], vs[3], vst[3]; } CuteTV;

static int cute_eval(const CuteTV *l, int thr, int v)
{
    int x = 0;
    for (int i = 0; i < 3; i++) {
        x += thr % l->ts[i] * l->tst[i];
        thr /= l->ts[i];
    }
    for (int i = 0; i < 3 && l->vs[i]; i++) {
        x += v % l->vs[i] * l->vst[i];
        v /= l->vs[i];
    }
    return x;
}

static void cute_wgmma(Layout l, int bits, int n, int thr, int i, int *r, int *c)
{
    static const CuteTV A8 = {{4, 8, 4}, {256, 1, 16}, {4, 2, 2}, {64, 8, 1024}};   /* ALayout_64x32 */
    static const CuteTV A16 = {{4, 8, 4}, {128, 1, 16}, {2, 2, 2}, {64, 8, 512}};   /* ALayout_64x16 */
    static const CuteTV A32 = {{4, 8, 4}, {64, 1, 16}, {2, 2, 0}, {8, 256, 0}};     /* ALayout_64x8 */
    CuteTV cl = {{4, 8, 4}, {128, 1, 16}, {2, 2, n / 8}, {64, 8, 512}};            /* CLayout_64xN */
    const CuteTV *lay = l == LY_WGMMA ? &cl : bits == 8 ? &A8 : bits == 16 ? &A16 : &A32;
    int x = cute_eval(lay, thr, i);
    *r = x % 64;
    *c = x / 64;
}

/* docs/tir.md §5.3.3 and the CDNA3 matrix calculator (checked against its tables) */
static void cdna3_atom(Layout l, int m, int p, int lane, int v, int *r, int *c)
{
    if (l == LY_MFMA) {
        *r = m == 32 ? 8 * (v / 4) + 4 * (lane / 32) + v % 4 : 4 * (lane / 16) + v;
        *c = lane % m;
    } else if (l == LY_MFMA_A) {
        *r = lane % m;
        *c = p * (lane / m) + v;
    } else {
        *r = p * (lane / m) + v;
        *c = lane % m;
    }
}

/* the reference coordinate of (thr, e) of a 2-D fragment tile in the canonical order:
 * atoms row-major, each atom's elements in the instruction's register order */
static void ref_coord(const LyTile *t, int thr, int e, int *row, int *col)
{
    int bits = ir_dtypes[t->dtype].bits, m = 0, p = 0, ar, ac, ept;
    int k = bits == 16 ? 16 : bits == 8 ? 32 : 8;
    switch (t->layout) {
    case LY_MMA: ar = 16, ac = 8; break;
    case LY_MMA_A: ar = 16, ac = k; break;
    case LY_MMA_B: ar = k, ac = 8; break;
    case LY_WGMMA: ar = 64, ac = t->cols; break;
    case LY_WGMMA_A: ar = 64, ac = k; break;
    default:
        p = bits == 16 ? 4 : 1;
        m = t->mfma_shape ? t->mfma_shape
          : t->layout == LY_MFMA ? (t->rows % 32 == 0 && t->cols % 32 == 0 ? 32 : 16)
          : t->layout == LY_MFMA_A ? (t->rows % 32 == 0 ? 32 : 16) : (t->cols % 32 == 0 ? 32 : 16);
        ar = t->layout == LY_MFMA_B ? p * 64 / m : m;
        ac = t->layout == LY_MFMA_A ? p * 64 / m : m;
        break;
    }
    ept = ar * ac / (t->layout == LY_WGMMA || t->layout == LY_WGMMA_A ? 128 : m ? 64 : 32);
    int f = e / ept, i = e % ept, r, c;
    if (t->layout == LY_WGMMA || t->layout == LY_WGMMA_A)
        cute_wgmma(t->layout, bits, t->cols, thr, i, &r, &c);
    else if (m)
        cdna3_atom(t->layout, m, p, thr, i, &r, &c);
    else
        ptx_atom(t->layout, bits, t->dtype, thr, i, &r, &c);
    *row = f / (t->cols / ac) * ar + r;
    *col = f % (t->cols / ac) * ac + c;
}

static void test_against_sources(void **state)
{
    (void)state;
    int n, checked = 0;
    LyTile *tiles = all_tiles(&n);
    for (int k = 0; k < n; k++) {
        const LyTile *t = &tiles[k];
        if (t->layout == LY_ROWS || !t->cols || t->colvec)
            continue;
        for (int thr = 0; thr < ly_threads(t); thr++)
            for (int e = 0; e < ly_elems(t); e++) {
                int r, c, rr, rc;
                ly_coord(t, thr, e, &r, &c);
                ref_coord(t, thr, e, &rr, &rc);
                if (r != rr || c != rc)
                    fail_msg("tile %d (%s %s [%d, %d]) thread %d element %d: (%d, %d), source says (%d, %d)",
                             k, ir_layout_names[t->layout], ir_dtypes[t->dtype].spelling, t->rows,
                             t->cols, thr, e, r, c, rr, rc);
                checked++;
            }
    }
    assert_true(checked > 50000);
}

/* ---- figures and tables, row by row -------------------------------------------- */

/* "T<thread>:<reg letter><element>" of each (row, col) on a line of the tile */
static void owners_line(const LyTile *t, int row, int col, int drow, int dcol, int count, char letter,
                        char *out, size_t n)
{
    size_t len = 0;
    out[0] = 0;
    for (int i = 0; i < count; i++) {
        int thr[4], e[4];
        int k = ly_owners(t, row + i * drow, col + i * dcol, thr, e, 4);
        assert_int_equal(k, 1);
        len += (size_t)snprintf(out + len, n - len, "%sT%d:%c%d", i ? " " : "", thr[0], letter, e[0]);
    }
}

static void expect_line(const LyTile *t, int row, int col, int drow, int dcol, int count, char letter,
                        const char *want)
{
    char got[1024];
    owners_line(t, row, col, drow, dcol, count, letter, got, sizeof got);
    if (strcmp(got, want))
        fail_msg("%s line at (%d, %d):\n got  %s\n want %s", ir_layout_names[t->layout], row, col, got, want);
}

static void test_ptx_figures(void **state)
{
    (void)state;
    LyTile a = nv(LY_MMA_A, DT_BF16, 16, 16), c = nv(LY_MMA, DT_F32, 16, 8);
    LyTile b = nv(LY_MMA_B, DT_F16, 16, 8), a8 = nv(LY_MMA_A, DT_I8, 16, 32);
    LyTile atf = nv(LY_MMA_A, DT_TF32, 16, 8), d = nv(LY_WGMMA, DT_F32, 64, 16);
    LyTile wa = nv(LY_WGMMA_A, DT_BF16, 64, 16);
    /* PTX Figure 79, MMA .m16n8k16 A, rows 0, 8 and 15 */
    expect_line(&a, 0, 0, 0, 1, 16, 'a', "T0:a0 T0:a1 T1:a0 T1:a1 T2:a0 T2:a1 T3:a0 T3:a1 "
                                         "T0:a4 T0:a5 T1:a4 T1:a5 T2:a4 T2:a5 T3:a4 T3:a5");
    expect_line(&a, 8, 0, 0, 1, 16, 'a', "T0:a2 T0:a3 T1:a2 T1:a3 T2:a2 T2:a3 T3:a2 T3:a3 "
                                         "T0:a6 T0:a7 T1:a6 T1:a7 T2:a6 T2:a7 T3:a6 T3:a7");
    expect_line(&a, 15, 0, 0, 1, 16, 'a', "T28:a2 T28:a3 T29:a2 T29:a3 T30:a2 T30:a3 T31:a2 T31:a3 "
                                          "T28:a6 T28:a7 T29:a6 T29:a7 T30:a6 T30:a7 T31:a6 T31:a7");
    /* Figure 79, column 0 downwards: groups g = 0..7 then the same lanes' a2 */
    expect_line(&a, 0, 0, 1, 0, 16, 'a', "T0:a0 T4:a0 T8:a0 T12:a0 T16:a0 T20:a0 T24:a0 T28:a0 "
                                         "T0:a2 T4:a2 T8:a2 T12:a2 T16:a2 T20:a2 T24:a2 T28:a2");
    /* Figure 83, accumulator C/D, rows 0 and 9 */
    expect_line(&c, 0, 0, 0, 1, 8, 'c', "T0:c0 T0:c1 T1:c0 T1:c1 T2:c0 T2:c1 T3:c0 T3:c1");
    expect_line(&c, 9, 0, 0, 1, 8, 'c', "T4:c2 T4:c3 T5:c2 T5:c3 T6:c2 T6:c3 T7:c2 T7:c3");
    /* Figure 81, B (K x N): column 0 downwards and row 0 across */
    expect_line(&b, 0, 0, 1, 0, 16, 'b', "T0:b0 T0:b1 T1:b0 T1:b1 T2:b0 T2:b1 T3:b0 T3:b1 "
                                         "T0:b2 T0:b3 T1:b2 T1:b3 T2:b2 T2:b3 T3:b2 T3:b3");
    expect_line(&b, 0, 0, 0, 1, 8, 'b', "T0:b0 T4:b0 T8:b0 T12:b0 T16:b0 T20:b0 T24:b0 T28:b0");
    /* Figure 88, m16n8k32 A with 8-bit elements, row 0 */
    expect_line(&a8, 0, 0, 0, 1, 32, 'a',
                "T0:a0 T0:a1 T0:a2 T0:a3 T1:a0 T1:a1 T1:a2 T1:a3 T2:a0 T2:a1 T2:a2 T2:a3 "
                "T3:a0 T3:a1 T3:a2 T3:a3 T0:a8 T0:a9 T0:a10 T0:a11 T1:a8 T1:a9 T1:a10 T1:a11 "
                "T2:a8 T2:a9 T2:a10 T2:a11 T3:a8 T3:a9 T3:a10 T3:a11");
    /* Figure 72, m16n8k8 A with tf32, rows 0 and 8 */
    expect_line(&atf, 0, 0, 0, 1, 8, 'a', "T0:a0 T1:a0 T2:a0 T3:a0 T0:a2 T1:a2 T2:a2 T3:a2");
    expect_line(&atf, 8, 0, 0, 1, 8, 'a', "T0:a1 T1:a1 T2:a1 T3:a1 T0:a3 T1:a3 T2:a3 T3:a3");
    /* Figure 149, WGMMA .m64nNk16 D (N = 16): rows 0, 8 (warp 0), 16 (warp 1), 63 */
    expect_line(&d, 0, 0, 0, 1, 16, 'd', "T0:d0 T0:d1 T1:d0 T1:d1 T2:d0 T2:d1 T3:d0 T3:d1 "
                                         "T0:d4 T0:d5 T1:d4 T1:d5 T2:d4 T2:d5 T3:d4 T3:d5");
    expect_line(&d, 8, 0, 0, 1, 16, 'd', "T0:d2 T0:d3 T1:d2 T1:d3 T2:d2 T2:d3 T3:d2 T3:d3 "
                                         "T0:d6 T0:d7 T1:d6 T1:d7 T2:d6 T2:d7 T3:d6 T3:d7");
    expect_line(&d, 16, 0, 0, 1, 8, 'd', "T32:d0 T32:d1 T33:d0 T33:d1 T34:d0 T34:d1 T35:d0 T35:d1");
    expect_line(&d, 63, 8, 0, 1, 8, 'd', "T124:d6 T124:d7 T125:d6 T125:d7 T126:d6 T126:d7 T127:d6 T127:d7");
    /* Figure 148, WGMMA A from registers: warp 1 holds rows 16..31 */
    expect_line(&wa, 16, 0, 0, 1, 16, 'a', "T32:a0 T32:a1 T33:a0 T33:a1 T34:a0 T34:a1 T35:a0 T35:a1 "
                                           "T32:a4 T32:a5 T33:a4 T33:a5 T34:a4 T34:a5 T35:a4 T35:a5");
}

/* lines of the AMD matrix instruction calculator (CDNA3, --matrix-layout --csv):
 * "lane,entries of v0, v1, ..." with A[i][k] / B[k][j] / D[i][j] */
static void expect_calc(const LyTile *t, const char *line)
{
    int lane = atoi(line);
    const char *s = strchr(line, ',');
    for (int e = 0; s; e++, s = strchr(s + 1, ',')) {
        int r, c, wr, wc;
        assert_int_equal(sscanf(s + 1, "%*c[%d][%d]", &wr, &wc), 2);
        ly_coord(t, lane, e, &r, &c);
        if (r != wr || c != wc)
            fail_msg("%s lane %d v%d: (%d, %d), the calculator says (%d, %d)", ir_layout_names[t->layout],
                     lane, e, r, c, wr, wc);
    }
}

static void test_cdna3_tables(void **state)
{
    (void)state;
    LyTile d32 = amd(LY_MFMA, DT_F32, 32, 32), d16 = amd(LY_MFMA, DT_F32, 16, 16);
    LyTile a32 = amd(LY_MFMA_A, DT_F16, 32, 8), a16 = amd(LY_MFMA_A, DT_F16, 16, 16);
    LyTile b32 = amd(LY_MFMA_B, DT_F16, 8, 32), b16 = amd(LY_MFMA_B, DT_F16, 16, 16);
    LyTile a32f = amd(LY_MFMA_A, DT_F32, 32, 2), b16f = amd(LY_MFMA_B, DT_F32, 4, 16);
    /* v_mfma_f32_32x32x8_f16 */
    expect_calc(&d32, "0,D[0][0],D[1][0],D[2][0],D[3][0],D[8][0],D[9][0],D[10][0],D[11][0],"
                      "D[16][0],D[17][0],D[18][0],D[19][0],D[24][0],D[25][0],D[26][0],D[27][0]");
    expect_calc(&d32, "33,D[4][1],D[5][1],D[6][1],D[7][1],D[12][1],D[13][1],D[14][1],D[15][1],"
                      "D[20][1],D[21][1],D[22][1],D[23][1],D[28][1],D[29][1],D[30][1],D[31][1]");
    expect_calc(&a32, "40,A[8][4],A[8][5],A[8][6],A[8][7]");
    expect_calc(&b32, "40,B[4][8],B[5][8],B[6][8],B[7][8]");
    /* v_mfma_f32_16x16x16_f16 */
    expect_calc(&d16, "50,D[12][2],D[13][2],D[14][2],D[15][2]");
    expect_calc(&a16, "50,A[2][12],A[2][13],A[2][14],A[2][15]");
    expect_calc(&a16, "31,A[15][4],A[15][5],A[15][6],A[15][7]");
    expect_calc(&b16, "50,B[12][2],B[13][2],B[14][2],B[15][2]");
    /* v_mfma_f32_32x32x2_f32 A, v_mfma_f32_16x16x4_f32 B */
    expect_calc(&a32f, "37,A[5][1]");
    expect_calc(&b16f, "37,B[2][5]");
}

/* ---- bijection, owners, affine split ---------------------------------------------- */

static int replication(const LyTile *t)
{
    if (t->layout == LY_ROWS)
        return t->cols ? 1 : t->scope_threads;
    if (t->colvec)
        return t->layout == LY_MMA ? 8 : t->layout == LY_WGMMA ? 32 : 64 / (t->mfma_shape ? t->mfma_shape
                                                                        : t->cols % 32 ? 16 : 32);
    if (!t->cols)
        return t->layout == LY_MFMA ? (t->mfma_shape ? t->mfma_shape : t->rows % 32 ? 16 : 32) : 4;
    return 1;
}

static void check_tile_bijection(const LyTile *t, int k)
{
    int nthr = ly_threads(t), ne = ly_elems(t), cols = t->cols ? t->cols : 1;
    int *count = calloc((size_t)t->rows * (size_t)cols, sizeof *count);
    int want = replication(t), empty = 0;
    for (int thr = 0; thr < nthr; thr++)
        for (int e = 0; e < ne; e++) {
            int r, c;
            ly_coord(t, thr, e, &r, &c);
            if (r == -1 && c == -1 && t->layout == LY_ROWS) {
                empty++;
                continue;
            }
            if (r < 0 || r >= t->rows || c < 0 || c >= cols)
                fail_msg("tile %d thread %d element %d at (%d, %d) is outside", k, thr, e, r, c);
            count[r * cols + c]++;
            /* the owners of (r, c) include (thr, e), in thread order */
            int othr[256], oe[256], n = ly_owners(t, r, c, othr, oe, 256), found = 0;
            assert_int_equal(n, want);
            for (int i = 0; i < n; i++) {
                found += othr[i] == thr && oe[i] == e;
                if (i)
                    assert_true(othr[i] > othr[i - 1]);
            }
            if (found != 1)
                fail_msg("tile %d: owners of (%d, %d) miss thread %d element %d", k, r, c, thr, e);
        }
    for (int i = 0; i < t->rows * cols; i++)
        if (count[i] != want)
            fail_msg("tile %d (%s [%d, %d]): element (%d, %d) held %d times, want %d", k,
                     ir_layout_names[t->layout], t->rows, t->cols, i / cols, i % cols, count[i], want);
    assert_int_equal(nthr * ne - empty, t->rows * cols * want);
    free(count);
}

static void test_bijection_and_owners(void **state)
{
    (void)state;
    int n;
    LyTile *tiles = all_tiles(&n);
    for (int k = 0; k < n; k++) {
        char why[128];
        if (!ly_valid(&tiles[k], why, sizeof why))
            fail_msg("tile %d: %s", k, why);
        check_tile_bijection(&tiles[k], k);
    }
    LyTile t = nv(LY_MMA, DT_F32, 16, 8);
    int thr[1], e[1];
    assert_int_equal(ly_owners(&t, 16, 0, thr, e, 1), 0);       /* outside */
    t = nv(LY_MMA, DT_F32, 16, 0);
    assert_int_equal(ly_owners(&t, 3, 0, thr, e, 1), 4);        /* counts past max */
    assert_int_equal(thr[0], 12);
    assert_int_equal(e[0], 0);
}

static int apply_terms(const LyTerm *terms, int n, int thr)
{
    int v = 0;
    for (int i = 0; i < n; i++)
        v += terms[i].coef * (thr / terms[i].div % terms[i].mod);
    return v;
}

static void test_affine_split(void **state)
{
    (void)state;
    int n, without = 0;
    LyTile *tiles = all_tiles(&n);
    for (int k = 0; k < n; k++) {
        const LyTile *t = &tiles[k];
        if (!ly_has_affine(t)) {
            assert_int_equal(t->layout, LY_ROWS);
            without++;
            continue;
        }
        LyThreadPart tp;
        ly_thread_part(t, &tp);
        for (int thr = 0; thr < ly_threads(t); thr++)
            for (int e = 0; e < ly_elems(t); e++) {
                int r, c, r0, c0;
                ly_coord(t, thr, e, &r, &c);
                ly_elem_base(t, e, &r0, &c0);
                int ar = r0 + apply_terms(tp.row, tp.nrow, thr), ac = c0 + apply_terms(tp.col, tp.ncol, thr);
                if (r == -1 && c == -1) {   /* an empty rows slot: the formula lands outside */
                    assert_true(ar >= t->rows || ac >= t->cols);
                    continue;
                }
                if (r != ar || c != ac)
                    fail_msg("tile %d thread %d element %d: (%d, %d), affine (%d, %d)", k, thr, e, r, c, ar, ac);
            }
    }
    assert_int_equal(without, 1);   /* rows f32 [3, 24] over 128 threads */
}

static void test_thread_parts(void **state)
{
    (void)state;
    LyThreadPart tp;
    LyTile t = nv(LY_WGMMA, DT_F32, 64, 64);
    ly_thread_part(&t, &tp);
    /* row = 16 w + g, col = 2 t */
    assert_int_equal(tp.nrow, 2);
    assert_int_equal(tp.row[0].div, 4), assert_int_equal(tp.row[0].mod, 8), assert_int_equal(tp.row[0].coef, 1);
    assert_int_equal(tp.row[1].div, 32), assert_int_equal(tp.row[1].mod, 4), assert_int_equal(tp.row[1].coef, 16);
    assert_int_equal(tp.ncol, 1);
    assert_int_equal(tp.col[0].div, 1), assert_int_equal(tp.col[0].mod, 4), assert_int_equal(tp.col[0].coef, 2);
    t = nv(LY_MMA_B, DT_I8, 32, 8);   /* k = 4 t, n = g */
    ly_thread_part(&t, &tp);
    assert_int_equal(tp.row[0].coef, 4);
    assert_int_equal(tp.col[0].div, 4);
    t = rows_t(DT_BF16, 64, 64, 128);   /* 8 chunks a row: row + thr / 8, col + 8 (thr % 8) */
    ly_thread_part(&t, &tp);
    assert_int_equal(tp.nrow, 1), assert_int_equal(tp.row[0].div, 8), assert_int_equal(tp.row[0].mod, 16);
    assert_int_equal(tp.ncol, 1), assert_int_equal(tp.col[0].mod, 8), assert_int_equal(tp.col[0].coef, 8);
    int r0, c0;
    ly_elem_base(&t, 9, &r0, &c0);   /* second chunk of thread 0: chunk 128, row 16 */
    assert_int_equal(r0, 16), assert_int_equal(c0, 1);
}

/* ---- vectors, counts, packing, validity ------------------------------------------- */

static void test_vectors(void **state)
{
    (void)state;
    int r, c;
    LyTile t = nv(LY_WGMMA, DT_F32, 128, 0);   /* e = 2 block + h: row 64 block + 16 w + g + 8 h */
    assert_int_equal(ly_elems(&t), 4);
    ly_coord(&t, 32 * 2 + 4 * 5 + 1, 3, &r, &c);
    assert_int_equal(r, 64 + 32 + 5 + 8), assert_int_equal(c, 0);
    t = nv(LY_MMA, DT_F32, 32, 0);             /* row 16 block + g + 8 h */
    ly_coord(&t, 4 * 3 + 2, 2, &r, &c);
    assert_int_equal(r, 19);
    t = colvec(nv(LY_WGMMA, DT_F32, 1, 64));   /* e = 2 j + h: column 8 j + 2 t + h */
    assert_int_equal(ly_elems(&t), 16);
    ly_coord(&t, 99, 7, &r, &c);
    assert_int_equal(r, 0), assert_int_equal(c, 24 + 6 + 1);
    /* the row vector holds the rows of the accumulator's elements, in their order */
    LyTile acc = nv(LY_WGMMA, DT_F32, 128, 32), rv = nv(LY_WGMMA, DT_F32, 128, 0);
    for (int thr = 0; thr < 128; thr++)
        for (int e = 0; e < ly_elems(&acc); e++) {
            int ar, ac, vr, vc;
            ly_coord(&acc, thr, e, &ar, &ac);
            ly_coord(&rv, thr, 2 * (e / 16) + (e % 4) / 2, &vr, &vc);
            assert_int_equal(ar, vr);
        }
    t = amd(LY_MFMA, DT_F32, 64, 0);
    assert_int_equal(ly_elems(&t), 32);
    ly_coord(&t, 40, 5, &r, &c);   /* block 0, v 5: 8 + 4 + 1 */
    assert_int_equal(r, 13);
    t = shape16(amd(LY_MFMA, DT_F32, 32, 0));
    assert_int_equal(ly_elems(&t), 8);
}

static void test_counts_and_packing(void **state)
{
    (void)state;
    LyTile t = nv(LY_WGMMA, DT_F32, 64, 256);
    assert_int_equal(ly_threads(&t), 128), assert_int_equal(ly_elems(&t), 128);
    assert_int_equal(ly_pack(&t), 1), assert_int_equal(ly_regs(&t), 128);
    t.dtype = DT_F16;   /* .f16x2 accumulator: d0 d1 share a register */
    assert_int_equal(ly_pack(&t), 2), assert_int_equal(ly_regs(&t), 64);
    t = nv(LY_MMA_A, DT_BF16, 16, 16);
    assert_int_equal(ly_elems(&t), 8), assert_int_equal(ly_pack(&t), 2), assert_int_equal(ly_regs(&t), 4);
    t = nv(LY_MMA_A, DT_E4M3, 16, 32);
    assert_int_equal(ly_elems(&t), 16), assert_int_equal(ly_pack(&t), 4), assert_int_equal(ly_regs(&t), 4);
    t = nv(LY_MMA_A, DT_TF32, 16, 8);
    assert_int_equal(ly_elems(&t), 4), assert_int_equal(ly_pack(&t), 1), assert_int_equal(ly_regs(&t), 4);
    t = nv(LY_MMA_B, DT_F16, 16, 8);
    assert_int_equal(ly_elems(&t), 4), assert_int_equal(ly_regs(&t), 2);
    t = nv(LY_MMA_B, DT_I8, 32, 8);
    assert_int_equal(ly_elems(&t), 8), assert_int_equal(ly_regs(&t), 2);
    t = amd(LY_MFMA_A, DT_BF16, 32, 8);
    assert_int_equal(ly_threads(&t), 64), assert_int_equal(ly_elems(&t), 4), assert_int_equal(ly_regs(&t), 2);
    t = amd(LY_MFMA, DT_F32, 32, 32);
    assert_int_equal(ly_elems(&t), 16);
    t = rows_t(DT_BF16, 64, 64, 128);
    assert_int_equal(ly_elems(&t), 32), assert_int_equal(ly_pack(&t), 2), assert_int_equal(ly_regs(&t), 16);
    t = rows_t(DT_F64, 16, 16, 256);
    assert_int_equal(ly_elems(&t), 2), assert_int_equal(ly_regs(&t), 4);
    t = nv(LY_MMA, DT_F32, 32, 0);
    assert_int_equal(ly_pack(&t), 1);
}

static void expect_invalid(LyTile t, const char *needle)
{
    char why[160] = "";
    assert_false(ly_valid(&t, why, sizeof why));
    if (!strstr(why, needle))
        fail_msg("reason '%s' does not mention '%s'", why, needle);
    assert_int_equal(ly_elems(&t), 0);
}

static void test_invalid(void **state)
{
    (void)state;
    expect_invalid(nv(LY_MMA, DT_F32, 24, 8), "grid of 16x8");
    expect_invalid(nv(LY_MMA_A, DT_BF16, 16, 8), "grid of 16x16");
    expect_invalid(nv(LY_MMA_A, DT_F32, 16, 8), "not f32");
    expect_invalid(nv(LY_WGMMA, DT_F32, 64, 264), "up to 256");
    expect_invalid(nv(LY_WGMMA, DT_F32, 64, 12), "multiple of 8");
    expect_invalid(nv(LY_WGMMA, DT_F64, 64, 8), "64-bit");
    expect_invalid(nv(LY_MMA_A, DT_BF16, 16, 0), "vectors");
    expect_invalid(amd(LY_MMA, DT_F32, 16, 8), "warp size must be 32");
    expect_invalid(nv(LY_MFMA, DT_F32, 32, 32), "wavefront size must be 64");
    expect_invalid(amd(LY_MFMA_A, DT_I8, 32, 8), "not i8");
    expect_invalid(amd(LY_MFMA, DT_F32, 48, 40), "grid of 16x16");
    LyTile t = amd(LY_MFMA, DT_F32, 32, 32);
    t.mfma_shape = 8;
    expect_invalid(t, "32x32 or 16x16");
    expect_invalid(rows_t(DT_F32, 4, 4, 0), "thread count");
    t = nv(LY_MMA, DT_F32, 16, 8);
    t.scope_threads = 128;
    expect_invalid(t, "held by 32 threads");
    expect_invalid(colvec(nv(LY_MMA, DT_F32, 2, 8)), "column vector");
    t.layout = LY_NONE;
    expect_invalid(t, "not a distributed layout");
}

/* ---- ldmatrix / stmatrix on a fake shared memory ---------------------------------- */

typedef struct { int elem, byte; } SByte;   /* which tile element a shared byte holds */

typedef struct {
    int64_t dims[3];
    DType dt;
    int swizzle, transposed;   /* stored[r][c] = tile[c][r] */
    SByte *mem;
    size_t size;
} Smem;

static int64_t es_of(DType dt) { return ir_dtype_bytes(dt); }

static uint64_t stored_offset(const Smem *s, int row, int col)
{
    int64_t idx[3] = {1, s->transposed ? col : row, s->transposed ? row : col};   /* stage 1 */
    return ly_smem_offset(s->dims, 3, s->dt, s->swizzle, idx);
}

/* a shared tile [2, SR, SC] holding the logical tile in its stage 1 */
static void smem_fill(Smem *s, const LyTile *t, int filled)
{
    int64_t e = es_of(s->dt);
    s->size = (size_t)(s->dims[0] * s->dims[1] * s->dims[2] * e);
    s->mem = malloc(s->size * sizeof *s->mem);
    for (size_t i = 0; i < s->size; i++)
        s->mem[i] = (SByte){-1, -1};
    if (!filled)
        return;
    for (int r = 0; r < t->rows; r++)
        for (int c = 0; c < t->cols; c++) {
            uint64_t o = stored_offset(s, r, c);
            for (int b = 0; b < e; b++) {
                assert_true(o + (uint64_t)b < s->size);
                assert_int_equal(s->mem[o + (uint64_t)b].elem, -1);
                s->mem[o + (uint64_t)b] = (SByte){r * t->cols + c, b};
            }
        }
}

/* the register's bytes hold elements reg*P .. reg*P+P-1 of the thread */
static void check_reg(const LyTile *t, int thr, int reg, const SByte *bytes)
{
    int p = ly_pack(t), e = (int)es_of(t->dtype);
    for (int k = 0; k < p; k++) {
        int r, c;
        ly_coord(t, thr, reg * p + k, &r, &c);
        for (int b = 0; b < e; b++) {
            const SByte *x = &bytes[k * e + b];
            if (x->elem != r * t->cols + c || x->byte != b)
                fail_msg("thread %d register %d byte %d: element %d byte %d, want (%d, %d) = %d", thr, reg,
                         k * e + b, x->elem, x->byte, r, c, r * t->cols + c);
        }
    }
}

/* ldmatrix as PTX 9.7.14.5.15 defines it, then every thread's registers checked */
static void sim_ldmatrix(const LyTile *t, const Smem *s, int trans)
{
    int nthr = ly_threads(t), nregs = ly_regs(t);
    int *loaded = calloc((size_t)(nthr * nregs), sizeof *loaded);
    for (int f = 0; f < ly_ldmatrix_frags(t); f++) {
        LyLdm how;
        assert_true(ly_ldmatrix_plan(t, f, trans, &how));
        for (int w = 0; w < nthr / 32; w++) {
            uint64_t addr[32];
            for (int l = 0; l < 32; l++) {
                int r, c;
                ly_ldmatrix_row(t, f, trans, 32 * w + l, &r, &c);
                addr[l] = stored_offset(s, r, c);
                assert_int_equal(addr[l] % 16, 0);   /* rows are naturally aligned */
            }
            for (int l = 0; l < 32; l++)
                for (int m = 0; m < how.nmat; m++) {
                    SByte reg[4];
                    for (int b = 0; b < 4; b++) {
                        uint64_t a = trans ? addr[8 * m + 2 * (l % 4) + b / 2] + (uint64_t)(2 * (l / 4) + b % 2)
                                           : addr[8 * m + l / 4] + (uint64_t)(4 * (l % 4) + b);
                        reg[b] = s->mem[a];
                    }
                    int dst = ly_ldmatrix_dst(t, f, trans, m);
                    assert_true(dst >= 0 && dst < nregs);
                    check_reg(t, 32 * w + l, dst, reg);
                    loaded[(32 * w + l) * nregs + dst]++;
                }
        }
    }
    for (int i = 0; i < nthr * nregs; i++)
        assert_int_equal(loaded[i], 1);   /* every register filled once */
    free(loaded);
}

static void ldmatrix_case(LyTile t, int trans, int swizzle, int64_t srows, int64_t scols)
{
    Smem s = {{2, srows, scols}, t.dtype, swizzle, 0, NULL, 0};
    /* mma_b without .trans reads an [N, K] tile; mma_a with .trans a [K, M] tile */
    s.transposed = t.layout == LY_MMA_B ? !trans : trans;
    smem_fill(&s, &t, 1);
    sim_ldmatrix(&t, &s, trans);
    free(s.mem);
}

static void test_ldmatrix(void **state)
{
    (void)state;
    /* mma_a from K-contiguous [M, K] tiles: plain, swizzled, panelled */
    ldmatrix_case(nv(LY_MMA_A, DT_BF16, 64, 32), 0, 0, 64, 32);
    ldmatrix_case(nv(LY_MMA_A, DT_BF16, 64, 64), 0, 128, 64, 64);
    ldmatrix_case(nv(LY_MMA_A, DT_F16, 32, 128), 0, 128, 32, 128);
    ldmatrix_case(nv(LY_MMA_A, DT_BF16, 16, 64), 0, 32, 16, 64);
    ldmatrix_case(nv(LY_MMA_A, DT_I8, 32, 64), 0, 64, 32, 64);
    ldmatrix_case(nv(LY_MMA_A, DT_TF32, 32, 16), 0, 64, 32, 16);
    /* mma_a with .trans from M-contiguous [K, M] tiles */
    ldmatrix_case(nv(LY_MMA_A, DT_BF16, 64, 32), 1, 128, 32, 64);
    ldmatrix_case(nv(LY_MMA_A, DT_F16, 32, 16), 1, 0, 16, 32);
    /* mma_b from [N, K] (plain) and [K, N] (.trans), odd fragment counts included */
    ldmatrix_case(nv(LY_MMA_B, DT_BF16, 64, 64), 0, 128, 64, 64);
    ldmatrix_case(nv(LY_MMA_B, DT_BF16, 16, 24), 0, 32, 24, 16);
    ldmatrix_case(nv(LY_MMA_B, DT_BF16, 64, 64), 1, 128, 64, 64);
    ldmatrix_case(nv(LY_MMA_B, DT_F16, 16, 8), 1, 0, 16, 8);
    ldmatrix_case(nv(LY_MMA_B, DT_U8, 64, 40), 0, 64, 40, 64);
    ldmatrix_case(nv(LY_MMA_B, DT_TF32, 16, 16), 0, 64, 16, 16);
    /* wgmma_a per warp, both ways */
    ldmatrix_case(nv(LY_WGMMA_A, DT_BF16, 128, 64), 0, 128, 128, 64);
    ldmatrix_case(nv(LY_WGMMA_A, DT_BF16, 64, 128), 1, 128, 128, 64);
    ldmatrix_case(nv(LY_WGMMA_A, DT_E4M3, 64, 64), 0, 64, 64, 64);
    /* what ldmatrix cannot do */
    LyLdm how;
    LyTile t = nv(LY_MMA_A, DT_I8, 16, 32);
    assert_false(ly_ldmatrix_plan(&t, 0, 1, &how));   /* .trans moves 16-bit elements */
    assert_false(ly_ldmatrix_plan(&t, 1, 0, &how));   /* one fragment */
    t = nv(LY_MMA, DT_BF16, 16, 8);
    assert_int_equal(ly_ldmatrix_frags(&t), 0);
    t = nv(LY_MMA_B, DT_BF16, 32, 24);   /* 2 K fragments x (one x4 + one x2) */
    assert_int_equal(ly_ldmatrix_frags(&t), 4);
    assert_true(ly_ldmatrix_plan(&t, 1, 0, &how));
    assert_int_equal(how.nmat, 2);
    assert_true(ly_ldmatrix_plan(&t, 2, 0, &how));
    assert_int_equal(how.nmat, 4);
}

/* stmatrix as PTX 9.7.14.5.16 defines it; then the shared tile must hold the tile */
static void stmatrix_case(LyTile t, int swizzle)
{
    Smem s = {{2, t.rows, t.cols}, t.dtype, swizzle, 0, NULL, 0};
    smem_fill(&s, &t, 0);
    for (int gp = 0; gp < ly_stmatrix_groups(&t); gp++) {
        LyLdm how;
        assert_true(ly_stmatrix_plan(&t, gp, &how));
        for (int w = 0; w < ly_threads(&t) / 32; w++) {
            uint64_t addr[32];
            for (int l = 0; l < 32; l++) {
                int r, c;
                ly_stmatrix_row(&t, gp, 32 * w + l, &r, &c);
                addr[l] = stored_offset(&s, r, c);
                assert_int_equal(addr[l] % 16, 0);
            }
            for (int l = 0; l < 32; l++)
                for (int m = 0; m < how.nmat; m++) {
                    int src = ly_stmatrix_src(&t, gp, m);
                    for (int k = 0; k < 2; k++) {
                        int r, c;
                        ly_coord(&t, 32 * w + l, 2 * src + k, &r, &c);
                        for (int b = 0; b < 2; b++) {
                            uint64_t a = addr[8 * m + l / 4] + (uint64_t)(4 * (l % 4) + 2 * k + b);
                            assert_int_equal(s.mem[a].elem, -1);   /* written once */
                            s.mem[a] = (SByte){r * t.cols + c, b};
                        }
                    }
                }
        }
    }
    for (int r = 0; r < t.rows; r++)
        for (int c = 0; c < t.cols; c++) {
            uint64_t o = stored_offset(&s, r, c);
            for (int b = 0; b < 2; b++)
                if (s.mem[o + (uint64_t)b].elem != r * t.cols + c || s.mem[o + (uint64_t)b].byte != b)
                    fail_msg("%s [%d, %d]: shared (%d, %d) byte %d holds element %d", ir_layout_names[t.layout],
                             t.rows, t.cols, r, c, b, s.mem[o + (uint64_t)b].elem);
        }
    free(s.mem);
}

static void test_stmatrix(void **state)
{
    (void)state;
    stmatrix_case(nv(LY_MMA, DT_BF16, 32, 64), 128);
    stmatrix_case(nv(LY_MMA, DT_F16, 32, 24), 0);      /* odd: an .x2 at the end */
    stmatrix_case(nv(LY_WGMMA, DT_BF16, 128, 128), 128);
    stmatrix_case(nv(LY_WGMMA, DT_BF16, 64, 72), 0);   /* N / 8 = 9 */
    stmatrix_case(nv(LY_WGMMA, DT_F16, 64, 64), 64);
    LyTile t = nv(LY_WGMMA, DT_F32, 64, 64);
    LyLdm how;
    assert_int_equal(ly_stmatrix_groups(&t), 0);       /* b16 only: convert first */
    assert_false(ly_stmatrix_plan(&t, 0, &how));
    t = nv(LY_WGMMA, DT_BF16, 128, 72);
    assert_int_equal(ly_stmatrix_groups(&t), 10);
    assert_true(ly_stmatrix_plan(&t, 4, &how));
    assert_int_equal(how.nmat, 2);
}

/* the LDS byte addresses of one ds_read_b64 per lane filling an mfma_a atom [m, 8]
 * (or [16, 16]) of bf16 from a K-contiguous shared matrix with rows `pitch` elements
 * apart: lane l reads its 4 consecutive K elements starting at its first element */
static void mfma_a_addrs(int m, int k, int pitch, uint32_t *addr)
{
    LyTile t = amd(LY_MFMA_A, DT_BF16, m, k);
    for (int l = 0; l < 64; l++) {
        int r, c;
        ly_coord(&t, l, 0, &r, &c);
        addr[l] = (uint32_t)((r * pitch + c) * 2);
    }
}

/* examples/gemm_gfx942.tir's LDS layout: rows of 36 bf16 (72 bytes) make the MFMA
 * operand reads conflict-free; unpadded rows of 32 or 64 bf16 do not */
static void test_lds_banks(void **state)
{
    (void)state;
    uint32_t addr[64];
    mfma_a_addrs(32, 8, 36, addr);
    assert_int_equal(ly_lds_ways(addr, 64, 8), 1);
    mfma_a_addrs(16, 16, 36, addr);
    assert_int_equal(ly_lds_ways(addr, 64, 8), 1);
    mfma_a_addrs(32, 8, 68, addr);                   /* BK = 64 with the same padding */
    assert_int_equal(ly_lds_ways(addr, 64, 8), 1);
    mfma_a_addrs(32, 8, 32, addr);                   /* 64-byte rows: rows r, r+2, ... share banks */
    assert_int_equal(ly_lds_ways(addr, 64, 8), 8);
    mfma_a_addrs(32, 8, 64, addr);                   /* 128-byte rows: every row the same banks */
    assert_int_equal(ly_lds_ways(addr, 64, 8), 16);
    for (int l = 0; l < 64; l++)                     /* contiguous 16-byte chunks */
        addr[l] = (uint32_t)(16 * l);
    assert_int_equal(ly_lds_ways(addr, 64, 16), 1);
    for (int l = 0; l < 64; l++)                     /* one word for all: a broadcast */
        addr[l] = 64;
    assert_int_equal(ly_lds_ways(addr, 64, 4), 1);
    assert_int_equal(ly_lds_ways(addr, 64, 2), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_sources),
        cmocka_unit_test(test_ptx_figures),
        cmocka_unit_test(test_cdna3_tables),
        cmocka_unit_test(test_bijection_and_owners),
        cmocka_unit_test(test_affine_split),
        cmocka_unit_test(test_thread_parts),
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_counts_and_packing),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_ldmatrix),
        cmocka_unit_test(test_stmatrix),
        cmocka_unit_test(test_lds_banks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
