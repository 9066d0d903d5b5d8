/* layout_smem.c — shared memory: the swizzle, panel offsets of shared tiles (docs/tir.md
 * §5.2, PTX 5.5.7), wgmma matrix descriptors (PTX 9.7.15.5.1.2) and TMA boxes and
 * swizzle modes (cuda.h CUtensorMapSwizzle). See layout.h for the derivations. */
#include <stdio.h>
#include "layout_geo.h"

static int ok_swizzle(int s) { return s == 0 || s == 32 || s == 64 || s == 128; }

static int64_t elem_size(DType dt)
{
    int bits = ir_dtypes[dt].bits;
    return bits >= 8 ? bits / 8 : 1;
}

uint32_t ly_swizzle(uint32_t o, int swizzle)
{
    if (swizzle != 32 && swizzle != 64 && swizzle != 128)
        return o;
    uint32_t mask = (uint32_t)swizzle / 16 - 1;
    return o ^ (((o >> 7) & mask) << 4);
}

uint32_t ly_smem_align(int swizzle)
{
    return swizzle == 32 || swizzle == 64 || swizzle == 128 ? 8u * (uint32_t)swizzle : 128u;
}

typedef LySmemGeom Mat;

LySmemGeom ly_smem_geom(const int64_t *dims, int rank, int64_t elem_bytes, int swizzle)
{
    Mat m;
    m.e = elem_bytes;
    m.cols = rank >= 1 ? dims[rank - 1] : 1;
    m.rows = rank >= 2 ? dims[rank - 2] : 1;
    m.panel = swizzle && m.cols * m.e > swizzle ? swizzle / m.e : m.cols;
    m.bytes = m.rows * m.cols * m.e;
    return m;
}

static Mat mat_of(const int64_t *dims, int rank, DType dt, int swizzle)
{
    return ly_smem_geom(dims, rank, elem_size(dt), swizzle);
}

/* offset of (row, col) inside one matrix: panel, row in the panel, column in the row */
static uint64_t mat_offset(const Mat *m, int64_t row, int64_t col)
{
    int64_t p = col / m->panel;
    return (uint64_t)(p * m->rows * m->panel * m->e + row * m->panel * m->e + col % m->panel * m->e);
}

uint64_t ly_smem_linear(const int64_t *dims, int rank, DType dt, int swizzle, const int64_t *idx)
{
    Mat m = mat_of(dims, rank, dt, swizzle);
    int64_t lead = 0;
    for (int i = 0; i + 2 < rank; i++)
        lead = lead * dims[i] + idx[i];
    int64_t row = rank >= 2 ? idx[rank - 2] : 0, col = rank >= 1 ? idx[rank - 1] : 0;
    return (uint64_t)(lead * m.bytes) + mat_offset(&m, row, col);
}

uint64_t ly_smem_offset(const int64_t *dims, int rank, DType dt, int swizzle, const int64_t *idx)
{
    uint64_t o = ly_smem_linear(dims, rank, dt, swizzle, idx);
    /* the XOR touches bits 4..6 only: apply it to the low 32 bits */
    return (o & ~(uint64_t)0xffffffffu) | ly_swizzle((uint32_t)o, swizzle);
}

/* ---- wgmma descriptors ----------------------------------------------------- */

static uint64_t desc_field(uint32_t x) { return (uint64_t)((x & 0x3FFFFu) >> 4); }

/* layout type of the descriptor: 0 interleave / none, 1 128B, 2 64B, 3 32B */
static uint64_t desc_layout(int swizzle)
{
    return swizzle == 128 ? 1 : swizzle == 64 ? 2 : swizzle == 32 ? 3 : 0;
}

uint64_t ly_wgmma_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes, int swizzle,
                       uint32_t base_offset)
{
    return desc_field(smem_addr) | desc_field(lbo_bytes) << 16 | desc_field(sbo_bytes) << 32 |
           (uint64_t)(base_offset & 7u) << 49 | desc_layout(swizzle) << 62;
}

int ly_wgmma_kstep(DType dt)
{
    return (int)(32 / elem_size(dt));
}

/* the operand's extents over the stored matrix must be whole 8-row groups and stay
 * inside it; mn0 of an MN-major operand must start a panel (an S-byte MN block) */
static int operand_fits(const Mat *m, int mn_major, int64_t row0, int64_t col0, int mn_extent,
                        int kstep, char *why, size_t n)
{
    int64_t nrows = mn_major ? kstep : mn_extent, ncols = mn_major ? mn_extent : kstep;
    if (m->rows % 8 || row0 % 8)
        return ly_refuse(why, n, "the operand's rows must be whole groups of 8 (tile rows %lld, first %lld)",
                    (long long)m->rows, (long long)row0);
    if (row0 < 0 || col0 < 0 || row0 + nrows > m->rows || col0 + ncols > m->cols)
        return ly_refuse(why, n, "the operand [%lld.., %lld..] + [%lld, %lld] leaves the [%lld, %lld] tile",
                    (long long)row0, (long long)col0, (long long)nrows, (long long)ncols,
                    (long long)m->rows, (long long)m->cols);
    if (!mn_major && (col0 * m->e) % 32)
        return ly_refuse(why, n, "a K-major k-step starts at a multiple of 32 bytes of K");
    if (mn_major && col0 % m->panel)
        return ly_refuse(why, n, "an MN-major operand starts at a multiple of %lld elements of MN",
                    (long long)m->panel);
    if (mn_extent < 8 || mn_extent % 8)
        return ly_refuse(why, n, "the operand's M or N extent must be a multiple of 8, not %d", mn_extent);
    return 1;
}

int ly_wgmma_operand(const int64_t *dims, int rank, DType dt, int swizzle, int mn_major,
                     const int64_t *origin, int mn_extent, LyDescGeom *out, char *why, size_t n)
{
    if (rank < 2)
        return ly_refuse(why, n, "a wgmma operand is a shared matrix of rank 2 or more");
    if (swizzle != 32 && swizzle != 64 && swizzle != 128)
        return ly_refuse(why, n, "wgmma reads swizzled tiles (32, 64, 128); swizzle %d is not supported", swizzle);
    Mat m = mat_of(dims, rank, dt, swizzle);
    if ((m.cols * m.e) % swizzle)
        return ly_refuse(why, n, "rows of %lld bytes are not a multiple of the %d-byte swizzle",
                    (long long)(m.cols * m.e), swizzle);
    if (mn_major && ir_dtypes[dt].bits != 16)
        return ly_refuse(why, n, "MN-major wgmma operands must be 16-bit (tf32, 8-bit: K-major only)");
    int kstep = ly_wgmma_kstep(dt);
    int64_t row0 = origin[rank - 2], col0 = origin[rank - 1];
    if (!operand_fits(&m, mn_major, row0, col0, mn_extent, kstep, why, n))
        return 0;
    uint64_t start = ly_smem_linear(dims, rank, dt, swizzle, origin);
    if (start > UINT32_MAX)
        return ly_refuse(why, n, "the operand lies beyond 4 GB of shared memory");
    out->start = (uint32_t)start;
    out->swizzle = swizzle;
    out->tnsp = mn_major != 0;
    out->sbo = 8u * (uint32_t)swizzle;   /* 8 rows (K-major) or 8 K rows (MN-major) */
    /* K-major: unused, "assumed 1" (16 bytes); MN-major: the next S-byte MN block = the
       next panel */
    out->lbo = mn_major ? (uint32_t)(m.rows * swizzle) : 16u;
    if (out->lbo > 0x3FFF0u || out->sbo > 0x3FFF0u)
        return ly_refuse(why, n, "a stride of %u bytes does not fit the descriptor's 14 bits", out->lbo);
    return 1;
}

/* ---- TMA ------------------------------------------------------------------------ */

int ly_tma_swizzle_enum(int swizzle)
{
    return swizzle == 0 ? 0 : swizzle == 32 ? 1 : swizzle == 64 ? 2 : swizzle == 128 ? 3 : -1;
}

int ly_tma_box(const int64_t *dims, int rank, DType dt, int swizzle, int64_t *box, int64_t *panel_bytes)
{
    if (rank < 1 || !ok_swizzle(swizzle))
        return 0;
    Mat m = mat_of(dims, rank, dt, swizzle);
    if (m.panel <= 0 || m.cols % m.panel)
        return 0;
    int64_t lead = 1;
    for (int i = 0; i < rank; i++)
        box[i] = dims[i];
    for (int i = 0; i + 2 < rank; i++)
        lead *= dims[i];
    int npanels = (int)(m.cols / m.panel);
    /* a box is written densely: with several panels it must be one matrix */
    if (npanels > 1 && lead > 1)
        return 0;
    box[rank - 1] = m.panel;
    *panel_bytes = m.rows * m.panel * m.e;
    return npanels;
}

/* ---- LDS bank conflicts (AMD CDNA2/CDNA3) -------------------------------------
 * 32 banks of 4 bytes, 128 bytes per clock: a wavefront's access of w bytes per
 * lane is served 128 / w lanes at a time (ds_read_b32: 32, b64: 16, b128: 8;
 * AMD CK-Tile "Understanding AMD GPU LDS and Bank Conflicts"). Within one such
 * group, lanes that touch different 4-byte words of one bank serialize; the same
 * word is a broadcast. */
int ly_lds_ways(const uint32_t *addr, int lanes, int bytes)
{
    enum { BANKS = 32 };
    if (bytes < 4 || bytes > 16 || lanes < 1)
        return 0;
    int group = 128 / bytes, worst = 1;
    for (int g0 = 0; g0 < lanes; g0 += group) {
        uint32_t words[BANKS][16];
        int nw[BANKS] = {0};
        for (int l = g0; l < g0 + group && l < lanes; l++)
            for (int b = 0; b < bytes; b += 4) {
                uint32_t w = (addr[l] + (uint32_t)b) / 4, bank = w % BANKS;
                int seen = 0;
                for (int i = 0; i < nw[bank]; i++)
                    seen |= words[bank][i] == w;
                if (!seen && nw[bank] < 16)
                    words[bank][nw[bank]++] = w;
                if (nw[bank] > worst)
                    worst = nw[bank];
            }
    }
    return worst;
}
