/* layout.c — register-tile fragment maps: legality, the canonical element order,
 * ownership and its inverse, register packing and the affine split. The facts and
 * their sources (PTX ISA, CDNA3 ISA) are listed in layout.h; each atom below cites
 * the figure it follows. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "layout_geo.h"

#define LY_MAX_ELEMS (1 << 24)   /* tiles larger than this are not register tiles */

/* writes the reason for a refusal into why (when given) and answers 0 */
int ly_refuse(char *why, size_t n, const char *fmt, ...)
{
    if (why && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, n, fmt, ap);
        va_end(ap);
    }
    return 0;
}

static int elem_bytes(int bits) { return bits >= 8 ? bits / 8 : 1; }

/* threads of the owning scope of a fragment layout (ir_layout_scope) */
static int scope_size(Layout l)
{
    return l == LY_WGMMA || l == LY_WGMMA_A ? 128 : l >= LY_MFMA && l <= LY_MFMA_B ? 64 : 32;
}

/* the atom grid: rows and cols must be whole multiples of the atom */
static int grid(const LyTile *t, LyGeo *g, char *why, size_t n)
{
    int r = t->rows, c = t->cols ? t->cols : 1;   /* a row vector is [R, 1] */
    if (r % g->fr || c % g->fc)
        return ly_refuse(why, n, "%s tile [%d, %d] is not a grid of %dx%d fragments",
                   ir_layout_names[t->layout], t->rows, t->cols, g->fr, g->fc);
    g->nfr = r / g->fr;
    g->nfc = c / g->fc;
    if ((int64_t)g->nfr * g->nfc * g->ept > LY_MAX_ELEMS)
        return ly_refuse(why, n, "tile too large for registers");
    return 1;
}

/* elements per 32-bit register of an NVIDIA A/B fragment: 16-bit 2, 8-bit 4, tf32 1 */
static int nv_operand_pack(DType dt, int bits)
{
    return bits == 16 ? 2 : bits == 8 ? 4 : dt == DT_TF32 ? 1 : 0;
}

/* mma, mma_a, mma_b (warp), wgmma, wgmma_a (warpgroup): PTX 9.7.14.5, 9.7.15.5.1.1 */
static int geo_nv(const LyTile *t, LyGeo *g, char *why, size_t n)
{
    const char *name = ir_layout_names[t->layout];
    int acc = t->layout == LY_MMA || t->layout == LY_WGMMA;
    g->wg = t->layout == LY_WGMMA || t->layout == LY_WGMMA_A;
    g->threads = g->wg ? 128 : 32;
    int mrows = g->wg ? 64 : 16;
    if (t->warp_size != 32)
        return ly_refuse(why, n, "%s is an NVIDIA layout: the warp size must be 32, not %d", name, t->warp_size);
    if (!acc && (t->colvec || !t->cols))
        return ly_refuse(why, n, "only accumulator layouts have row and column vectors, not %s", name);
    if (acc) {
        if (g->bits > 32)
            return ly_refuse(why, n, "%s has no layout for %d-bit elements", name, g->bits);
        int ncols = t->cols ? t->cols : 8;   /* a row vector has no N */
        if (g->wg && (ncols > 256 || ncols % 8))
            return ly_refuse(why, n, "wgmma tiles have N a multiple of 8 up to 256, not %d", ncols);
        if (!t->cols)
            g->atom = AT_NV_ROWV, g->fr = mrows, g->fc = 1, g->ept = 2;
        else if (t->colvec)
            g->atom = AT_NV_COLV, g->fr = 1, g->fc = 8, g->ept = 2;
        else
            g->atom = AT_NV_C, g->fr = mrows, g->fc = g->wg ? t->cols : 8,
            g->ept = g->fr * g->fc / g->threads;
        return grid(t, g, why, n);
    }
    g->pack = nv_operand_pack(t->dtype, g->bits);
    if (!g->pack)
        return ly_refuse(why, n, "%s fragments hold 16-bit, 8-bit or tf32 elements, not %s", name,
                   ir_dtypes[t->dtype].spelling);
    int k = 8 * g->pack;   /* the instruction's K: 16, 32 or 8 */
    if (t->layout == LY_MMA_B)
        g->atom = AT_NV_B, g->fr = k, g->fc = 8, g->ept = 2 * g->pack;
    else
        g->atom = AT_NV_A, g->fr = mrows, g->fc = k, g->ept = 4 * g->pack;
    return grid(t, g, why, n);
}

/* mfma, mfma_a, mfma_b (64-lane wavefront): CDNA3 matrix layouts, docs/tir.md §5.3.3 */
static int geo_mf(const LyTile *t, LyGeo *g, char *why, size_t n)
{
    const char *name = ir_layout_names[t->layout];
    g->threads = 64;
    if (t->warp_size != 64)
        return ly_refuse(why, n, "%s is an AMD layout: the wavefront size must be 64, not %d", name, t->warp_size);
    if (t->mfma_shape && t->mfma_shape != 16 && t->mfma_shape != 32)
        return ly_refuse(why, n, "MFMA atoms are 32x32 or 16x16, not %d", t->mfma_shape);
    int vec = t->colvec || !t->cols;
    if (t->layout != LY_MFMA && vec)
        return ly_refuse(why, n, "only accumulator layouts have row and column vectors, not %s", name);
    /* the dims that decide the atom: M and N of mfma, M of mfma_a, N of mfma_b */
    int d0 = t->layout == LY_MFMA_B || t->colvec ? t->cols : t->rows;
    int d1 = t->layout == LY_MFMA && !vec ? t->cols : d0;
    g->m = t->mfma_shape ? t->mfma_shape : d0 % 32 == 0 && d1 % 32 == 0 ? 32 : 16;
    if (t->layout == LY_MFMA) {
        if (g->bits > 32)
            return ly_refuse(why, n, "%s has no layout for %d-bit elements", name, g->bits);
        int ept = g->m * g->m / 64;
        if (!t->cols)
            g->atom = AT_MF_ROWV, g->fr = g->m, g->fc = 1, g->ept = ept;
        else if (t->colvec)
            g->atom = AT_MF_COLV, g->fr = 1, g->fc = g->m, g->ept = 1;
        else
            g->atom = AT_MF_C, g->fr = g->fc = g->m, g->ept = ept;
        return grid(t, g, why, n);
    }
    g->pack = g->bits == 16 ? 4 : t->dtype == DT_F32 ? 1 : 0;
    if (!g->pack)
        return ly_refuse(why, n, "%s fragments hold 16-bit or f32 elements in v1, not %s", name,
                   ir_dtypes[t->dtype].spelling);
    int k = g->pack * 64 / g->m;   /* 16-bit: 8 (32x32) or 16 (16x16); f32: 2 or 4 */
    g->ept = g->pack;
    if (t->layout == LY_MFMA_A)
        g->atom = AT_MF_A, g->fr = g->m, g->fc = k;
    else
        g->atom = AT_MF_B, g->fr = k, g->fc = g->m;
    return grid(t, g, why, n);
}

/* rows: 16-byte chunks round-robin over the T threads, docs/tir.md §5.3.4 */
static int geo_rows(const LyTile *t, LyGeo *g, char *why, size_t n)
{
    if (t->scope_threads < 1)
        return ly_refuse(why, n, "a rows tile needs the thread count of its scope");
    if (t->colvec)
        return ly_refuse(why, n, "rows tiles have no column vectors");
    if ((int64_t)t->rows * (t->cols ? t->cols : 1) > LY_MAX_ELEMS)
        return ly_refuse(why, n, "tile too large for registers");
    g->threads = t->scope_threads;
    g->rows = t->rows;
    g->cols = t->cols;
    g->vec = 16 / elem_bytes(g->bits) > 1 ? 16 / elem_bytes(g->bits) : 1;
    if (!t->cols) {
        g->atom = AT_ROWS_VEC;
        g->ept = t->rows;
        return 1;
    }
    int64_t chunks = ((int64_t)t->rows * t->cols + g->vec - 1) / g->vec;
    g->atom = AT_ROWS;
    g->ept = (int)((chunks + g->threads - 1) / g->threads) * g->vec;
    return 1;
}

int ly_geo(const LyTile *t, LyGeo *g, char *why, size_t n)
{
    memset(g, 0, sizeof *g);
    if (!t || t->layout <= LY_NONE || t->layout >= LY__COUNT)
        return ly_refuse(why, n, "not a distributed layout");
    if (t->dtype <= DT_NONE || t->dtype >= DT__COUNT)
        return ly_refuse(why, n, "no element dtype");
    if (t->rows < 1 || t->cols < 0 || (t->colvec && (t->rows != 1 || t->cols < 1)))
        return ly_refuse(why, n, "bad shape [%d, %d]%s", t->rows, t->cols, t->colvec ? " (column vector)" : "");
    if (t->layout != LY_ROWS && t->scope_threads && t->scope_threads != scope_size(t->layout))
        return ly_refuse(why, n, "%s is held by %d threads, not %d", ir_layout_names[t->layout],
                   scope_size(t->layout), t->scope_threads);
    g->bits = ir_dtypes[t->dtype].bits;
    switch (t->layout) {
    case LY_ROWS: return geo_rows(t, g, why, n);
    case LY_MFMA: case LY_MFMA_A: case LY_MFMA_B: return geo_mf(t, g, why, n);
    default: return geo_nv(t, g, why, n);
    }
}

/* ---- queries ------------------------------------------------------------- */

int ly_valid(const LyTile *t, char *why, size_t n)
{
    LyGeo g;
    return ly_geo(t, &g, why, n);
}

int ly_atom(const LyTile *t, int *rows, int *cols)
{
    LyGeo g;
    if (!ly_geo(t, &g, NULL, 0) || g.atom == AT_ROWS || g.atom == AT_ROWS_VEC)
        return 0;
    *rows = g.fr;
    *cols = g.fc;
    return 1;
}

int ly_threads(const LyTile *t)
{
    LyGeo g;
    return ly_geo(t, &g, NULL, 0) ? g.threads : 0;
}

static int geo_elems(const LyGeo *g)
{
    return g->atom == AT_ROWS || g->atom == AT_ROWS_VEC ? g->ept : g->nfr * g->nfc * g->ept;
}

int ly_elems(const LyTile *t)
{
    LyGeo g;
    return ly_geo(t, &g, NULL, 0) ? geo_elems(&g) : 0;
}

static int geo_pack(const LyGeo *g)
{
    switch (g->atom) {
    case AT_NV_C: case AT_MF_C: return g->bits == 16 ? 2 : 1;   /* .f16x2 accumulators */
    case AT_NV_A: case AT_NV_B: return g->pack;
    case AT_MF_A: case AT_MF_B: return g->bits == 16 ? 2 : 1;   /* v.[15:0], v.[31:16] */
    case AT_ROWS: return elem_bytes(g->bits) < 4 ? 4 / elem_bytes(g->bits) : 1;
    default: return 1;                                          /* vectors */
    }
}

int ly_pack(const LyTile *t)
{
    LyGeo g;
    return ly_geo(t, &g, NULL, 0) ? geo_pack(&g) : 0;
}

int ly_regs(const LyTile *t)
{
    LyGeo g;
    if (!ly_geo(t, &g, NULL, 0))
        return 0;
    int pack = geo_pack(&g), wide = elem_bytes(g.bits) > 4 ? elem_bytes(g.bits) / 4 : 1;
    return (geo_elems(&g) + pack - 1) / pack * wide;
}

/* ---- the atoms ------------------------------------------------------------- */

/* element i of thread thr inside one atom (the instruction's register order) */
static void atom_coord(const LyGeo *g, int thr, int i, int *r, int *c)
{
    int lane = thr % 32, gi = lane / 4, ti = lane % 4, w = g->wg ? thr / 32 : 0;
    int p = g->pack, m = g->m;
    switch (g->atom) {
    case AT_NV_C: /* PTX Fig. 83 (mma C/D), Fig. 149 (wgmma D): d[4j + 2h + b] */
        *r = 16 * w + gi + 8 * ((i % 4) >> 1);
        *c = 8 * (i / 4) + 2 * ti + (i & 1);
        break;
    case AT_NV_A: /* PTX Fig. 72, 79, 88 (mma A), 148, 150, 152 (wgmma A): a[P*reg + q] */
        *r = 16 * w + gi + 8 * ((i / p) & 1);
        *c = p * ti + i % p + 4 * p * ((i / p) >> 1);
        break;
    case AT_NV_B: /* PTX Fig. 75, 81, 90/91 (mma B): b[P*reg + q], K x N */
        *r = p * ti + i % p + 4 * p * (i / p);
        *c = gi;
        break;
    case AT_NV_ROWV: /* the rows of the accumulator elements: g, g + 8 */
        *r = 16 * w + gi + 8 * i;
        *c = 0;
        break;
    case AT_NV_COLV: /* the columns of the accumulator elements: 2t, 2t + 1 */
        *r = 0;
        *c = 2 * ti + i;
        break;
    case AT_MF_C: /* CDNA3: D[8(v/4) + 4(l/32) + v%4][l%32], D[4(l/16) + v][l%16] */
    case AT_MF_ROWV:
        *r = m == 32 ? 8 * (i / 4) + 4 * (thr / 32) + i % 4 : 4 * (thr / 16) + i;
        *c = g->atom == AT_MF_C ? thr % m : 0;
        break;
    case AT_MF_COLV:
        *r = 0;
        *c = thr % m;
        break;
    case AT_MF_A: /* CDNA3: A[l%M][P(l/M) + i] */
        *r = thr % m;
        *c = p * (thr / m) + i;
        break;
    case AT_MF_B: /* CDNA3: B[P(l/M) + i][l%M] */
        *r = p * (thr / m) + i;
        *c = thr % m;
        break;
    default:
        *r = *c = -1;
        break;
    }
}

/* rows: element e of thread thr is chunk q = (e / V) * T + thr, slot e % V */
static void rows_index(const LyGeo *g, int thr, int e, int64_t *idx)
{
    *idx = ((int64_t)(e / g->vec) * g->threads + thr) * g->vec + e % g->vec;
}

/* ly_coord on a valid geometry */
static void coord_geo(const LyGeo *g, int thr, int e, int *row, int *col)
{
    *row = *col = -1;
    if (thr < 0 || thr >= g->threads || e < 0 || e >= geo_elems(g))
        return;
    if (g->atom == AT_ROWS_VEC) {
        *row = e;
        *col = 0;
        return;
    }
    if (g->atom == AT_ROWS) {
        int64_t idx;
        rows_index(g, thr, e, &idx);
        if (idx < (int64_t)g->rows * g->cols)
            *row = (int)(idx / g->cols), *col = (int)(idx % g->cols);
        return;
    }
    int f = e / g->ept, r, c;
    atom_coord(g, thr, e % g->ept, &r, &c);
    *row = f / g->nfc * g->fr + r;
    *col = f % g->nfc * g->fc + c;
}

void ly_coord(const LyTile *t, int thr, int e, int *row, int *col)
{
    LyGeo g;
    *row = *col = -1;
    if (ly_geo(t, &g, NULL, 0))
        coord_geo(&g, thr, e, row, col);
}

/* ---- owners: the inverse of each atom ------------------------------------------ */

typedef struct { int *thr, *e; int max, n, base; } Owners;

static void own(Owners *o, int thr, int i)
{
    if (o->n < o->max) {
        o->thr[o->n] = thr;
        o->e[o->n] = o->base + i;
    }
    o->n++;
}

/* (r, c) inside the atom -> its owners */
static void atom_owners(const LyGeo *g, int r, int c, Owners *o)
{
    int p = g->pack, m = g->m, w = g->wg ? r / 16 : 0, rr = r % 16;
    switch (g->atom) {
    case AT_NV_C:
        own(o, 32 * w + 4 * (rr % 8) + (c % 8) / 2, 4 * (c / 8) + 2 * (rr / 8) + c % 2);
        break;
    case AT_NV_A: {
        int reg = rr / 8 + 2 * (c / (4 * p)), cc = c % (4 * p);
        own(o, 32 * w + 4 * (rr % 8) + cc / p, p * reg + cc % p);
        break;
    }
    case AT_NV_B: {
        int kk = r % (4 * p);
        own(o, 4 * c + kk / p, p * (r / (4 * p)) + kk % p);
        break;
    }
    case AT_NV_ROWV:
        for (int ti = 0; ti < 4; ti++)
            own(o, 32 * w + 4 * (rr % 8) + ti, rr / 8);
        break;
    case AT_NV_COLV:
        for (int thr = c / 2; thr < g->threads; thr += 4)
            own(o, thr, c % 2);
        break;
    case AT_MF_C:
        if (m == 32)
            own(o, 32 * ((r / 4) % 2) + c, 4 * (r / 8) + r % 4);
        else
            own(o, 16 * (r / 4) + c, r % 4);
        break;
    case AT_MF_ROWV:
        for (int l = 0; l < m; l++)
            own(o, m == 32 ? 32 * ((r / 4) % 2) + l : 16 * (r / 4) + l,
                m == 32 ? 4 * (r / 8) + r % 4 : r % 4);
        break;
    case AT_MF_COLV:
        for (int thr = c; thr < 64; thr += m)
            own(o, thr, 0);
        break;
    case AT_MF_A:
        own(o, r + m * (c / p), c % p);
        break;
    case AT_MF_B:
        own(o, c + m * (r / p), r % p);
        break;
    default:
        break;
    }
}

int ly_same_owners(const LyTile *a, const LyTile *b)
{
    int ne = ly_elems(a), T = ly_threads(a);
    if (!ne || !ly_elems(b) || T != ly_threads(b) || a->rows != b->rows || a->cols != b->cols)
        return 0;
    for (int t = 0; t < T; t++)
        for (int e = 0; e < ne; e++) {
            int r, c, thr[64], el[64], found = 0;
            ly_coord(a, t, e, &r, &c);
            if (r < 0)
                continue;
            int n = ly_owners(b, r, c, thr, el, 64);
            for (int i = 0; i < n && i < 64; i++)
                found |= thr[i] == t;
            if (!found)
                return 0;
        }
    return 1;
}

int ly_owners(const LyTile *t, int row, int col, int *thr, int *e, int max)
{
    LyGeo g;
    Owners o = {thr, e, max, 0, 0};
    if (!ly_geo(t, &g, NULL, 0) || row < 0 || row >= t->rows || col < 0 ||
        col >= (t->cols ? t->cols : 1))
        return 0;
    if (g.atom == AT_ROWS_VEC) {
        for (int i = 0; i < g.threads; i++)
            own(&o, i, row);
        return o.n;
    }
    if (g.atom == AT_ROWS) {
        int64_t idx = (int64_t)row * g.cols + col, q = idx / g.vec;
        own(&o, (int)(q % g.threads), (int)(q / g.threads) * g.vec + (int)(idx % g.vec));
        return o.n;
    }
    o.base = (row / g.fr * g.nfc + col / g.fc) * g.ept;
    atom_owners(&g, row % g.fr, col % g.fc, &o);
    return o.n;
}

/* ---- the affine split ------------------------------------------------------------ */

static void term(LyTerm *terms, int *n, int div, int mod, int coef)
{
    terms[*n] = (LyTerm){div, mod, coef};
    (*n)++;
}

/* rows: returns 0 when no split exists (chunks of a row and threads do not nest) */
static int rows_part(const LyGeo *g, LyThreadPart *tp)
{
    if (g->atom == AT_ROWS_VEC)
        return 1;
    int t = g->threads, v = g->vec;
    if (g->rows == 1) {
        term(tp->col, &tp->ncol, 1, t, v);
        return 1;
    }
    if (g->cols % v)
        return 0;
    int cpr = g->cols / v;   /* chunks per row */
    if (t % cpr == 0) {
        term(tp->row, &tp->nrow, cpr, t / cpr, 1);
        term(tp->col, &tp->ncol, 1, cpr, v);
        return 1;
    }
    if (cpr % t == 0) {
        term(tp->col, &tp->ncol, 1, t, v);
        return 1;
    }
    return 0;
}

/* the thread terms of each atom, read off atom_coord */
static void atom_part(const LyGeo *g, LyThreadPart *tp)
{
    int p = g->pack, m = g->m;
    int nv = g->atom <= AT_NV_COLV;
    if (nv && g->atom != AT_NV_B && g->atom != AT_NV_COLV)
        term(tp->row, &tp->nrow, 4, 8, 1);                 /* g */
    if (nv && g->wg && g->atom != AT_NV_COLV)
        term(tp->row, &tp->nrow, 32, 4, 16);               /* 16 w */
    switch (g->atom) {
    case AT_NV_C: case AT_NV_COLV: term(tp->col, &tp->ncol, 1, 4, 2); break;     /* 2t */
    case AT_NV_A: term(tp->col, &tp->ncol, 1, 4, p); break;                     /* P t */
    case AT_NV_B:
        term(tp->row, &tp->nrow, 1, 4, p);                                       /* P t */
        term(tp->col, &tp->ncol, 4, 8, 1);                                       /* g */
        break;
    case AT_MF_C: case AT_MF_ROWV:
        term(tp->row, &tp->nrow, m, 64 / m, 4);                                  /* 4 (l/M) */
        if (g->atom == AT_MF_C)
            term(tp->col, &tp->ncol, 1, m, 1);
        break;
    case AT_MF_COLV: term(tp->col, &tp->ncol, 1, m, 1); break;
    case AT_MF_A:
        term(tp->row, &tp->nrow, 1, m, 1);
        term(tp->col, &tp->ncol, m, 64 / m, p);
        break;
    case AT_MF_B:
        term(tp->row, &tp->nrow, m, 64 / m, p);
        term(tp->col, &tp->ncol, 1, m, 1);
        break;
    default: break;
    }
}

int ly_has_affine(const LyTile *t)
{
    LyGeo g;
    LyThreadPart tp;
    memset(&tp, 0, sizeof tp);
    if (!ly_geo(t, &g, NULL, 0))
        return 0;
    return g.atom == AT_ROWS || g.atom == AT_ROWS_VEC ? rows_part(&g, &tp) : 1;
}

void ly_thread_part(const LyTile *t, LyThreadPart *out)
{
    LyGeo g;
    memset(out, 0, sizeof *out);
    if (!ly_geo(t, &g, NULL, 0))
        return;
    if (g.atom == AT_ROWS || g.atom == AT_ROWS_VEC) {
        if (!rows_part(&g, out))
            memset(out, 0, sizeof *out);
        return;
    }
    atom_part(&g, out);
}

/* ly_elem_base on a valid geometry */
static void elem_base_geo(const LyGeo *g, int e, int *row0, int *col0)
{
    *row0 = *col0 = -1;
    if (e < 0 || e >= geo_elems(g))
        return;
    if (g->atom == AT_ROWS) {   /* thread 0's slot, empty or not: the formula's base */
        int64_t idx;
        rows_index(g, 0, e, &idx);
        int cpr = g->cols / g->vec;
        if (g->rows == 1 || !cpr)
            *row0 = 0, *col0 = (int)idx;
        else
            *row0 = (int)(idx / g->vec / cpr), *col0 = (int)(idx / g->vec % cpr) * g->vec + e % g->vec;
        return;
    }
    coord_geo(g, 0, e, row0, col0);
}

void ly_elem_base(const LyTile *t, int e, int *row0, int *col0)
{
    LyGeo g;
    *row0 = *col0 = -1;
    if (ly_geo(t, &g, NULL, 0))
        elem_base_geo(&g, e, row0, col0);
}

int ly_elem_bases(const LyTile *t, int n, int *row0, int *col0)
{
    LyGeo g;
    int ok = ly_geo(t, &g, NULL, 0);
    for (int e = 0; e < n; e++) {
        row0[e] = col0[e] = -1;
        if (ok)
            elem_base_geo(&g, e, &row0[e], &col0[e]);
    }
    return ok;
}
