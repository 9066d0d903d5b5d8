/* test_layout_smem.c — ir/layout's shared-memory half: the swizzle against the PTX
 * "Swizzling Modes" tables and CuTe's Swizzle<B,4,3>, panel offsets, the wgmma
 * descriptor bits, a software model of how the wgmma unit reads a K-major or MN-major
 * operand through a descriptor (the PTX ISA's canonical layouts), and TMA boxes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "layout.h"

/* ---- swizzle ---------------------------------------------------------------- */

/* PTX 5.5.7 "Swizzling Modes": destination 16-byte chunk order of each 128-byte line,
 * the pattern repeating every 2 (32B), 4 (64B) or 8 (128B) lines */
static const int SW32[2][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}};
static const int SW64[4][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6},
    {2, 3, 0, 1, 6, 7, 4, 5}, {3, 2, 1, 0, 7, 6, 5, 4}};
static const int SW128[8][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}, {2, 3, 0, 1, 6, 7, 4, 5},
    {3, 2, 1, 0, 7, 6, 5, 4}, {4, 5, 6, 7, 0, 1, 2, 3}, {5, 4, 7, 6, 1, 0, 3, 2},
    {6, 7, 4, 5, 2, 3, 0, 1}, {7, 6, 5, 4, 3, 2, 1, 0}};

static int table_chunk(int s, int line, int pos)
{
    return s == 32 ? SW32[line % 2][pos] : s == 64 ? SW64[line % 4][pos] : SW128[line % 8][pos];
}

static void test_swizzle_tables(void **state)
{
    (void)state;
    const int modes[3] = {32, 64, 128};
    for (int m = 0; m < 3; m++)
        for (int line = 0; line < 40; line++)
            for (int pos = 0; pos < 8; pos++)
                for (uint32_t b = 0; b < 16; b += 5) {
                    /* chunk table[line][pos] of the line lands at position pos */
                    uint32_t src = (uint32_t)(line * 128 + table_chunk(modes[m], line, pos) * 16) + b;
                    uint32_t dst = (uint32_t)(line * 128 + pos * 16) + b;
                    assert_int_equal(ly_swizzle(src, modes[m]), dst);
                }
}

/* CuTe Swizzle<B, 4, 3>: XOR bits [7, 7+B) into bits [4, 4+B) */
static uint32_t cute_swizzle(uint32_t x, int s)
{
    int b = s == 128 ? 3 : s == 64 ? 2 : s == 32 ? 1 : 0;
    uint32_t yyy = ((1u << b) - 1u) << 7;
    return x ^ ((x & yyy) >> 3);
}

static void test_swizzle_properties(void **state)
{
    (void)state;
    const int modes[3] = {32, 64, 128};
    for (int m = 0; m < 3; m++) {
        int s = modes[m];
        uint32_t block = 8u * (uint32_t)s;
        assert_int_equal(ly_smem_align(s), block);
        for (uint32_t base = 0; base < 4 * block; base += block) {
            unsigned char *seen = calloc(block, 1);
            for (uint32_t o = base; o < base + block; o++) {
                uint32_t p = ly_swizzle(o, s);
                assert_int_equal(p, cute_swizzle(o, s));
                assert_true(p >= base && p < base + block);    /* stays in its 8*S block */
                assert_int_equal(p & 15u, o & 15u);             /* chunks stay whole */
                assert_int_equal(p & ~127u, o & ~127u);         /* and in their 128-byte line */
                assert_int_equal(ly_swizzle(p, s), o);          /* an involution */
                seen[p - base]++;
            }
            for (uint32_t i = 0; i < block; i++)
                assert_int_equal(seen[i], 1);                  /* a bijection */
            free(seen);
        }
    }
    for (uint32_t o = 0; o < 4096; o += 7)
        assert_int_equal(ly_swizzle(o, 0), o);
    assert_int_equal(ly_smem_align(0), 128);
}

/* ---- shared tile offsets ------------------------------------------------------- */

static uint64_t off2(int64_t r, int64_t c, int64_t rows, int64_t cols, DType dt, int s)
{
    int64_t dims[2] = {rows, cols}, idx[2] = {r, c};
    return ly_smem_offset(dims, 2, dt, s, idx);
}

static void test_smem_offsets(void **state)
{
    (void)state;
    /* one panel: [64, 64] bf16, swizzle 128 */
    assert_int_equal(off2(0, 0, 64, 64, DT_BF16, 128), 0);
    assert_int_equal(off2(0, 8, 64, 64, DT_BF16, 128), 16);
    assert_int_equal(off2(1, 0, 64, 64, DT_BF16, 128), 128 + 16);
    assert_int_equal(off2(1, 8, 64, 64, DT_BF16, 128), 128);
    assert_int_equal(off2(7, 63, 64, 64, DT_BF16, 128), 7 * 128 + 14);
    assert_int_equal(off2(8, 0, 64, 64, DT_BF16, 128), 1024);
    /* two panels: [128, 128] bf16 */
    assert_int_equal(off2(0, 64, 128, 128, DT_BF16, 128), 16384);
    assert_int_equal(off2(3, 70, 128, 128, DT_BF16, 128), 16384 + 3 * 128 + 3 * 16 + 12);
    /* stages index whole matrices */
    int64_t dims[3] = {2, 128, 128}, idx[3] = {1, 0, 0};
    assert_int_equal(ly_smem_offset(dims, 3, DT_BF16, 128, idx), 32768);
    idx[1] = 5, idx[2] = 17;
    assert_int_equal(ly_smem_linear(dims, 3, DT_BF16, 128, idx), 32768 + 5 * 128 + 34);
    assert_int_equal(ly_smem_offset(dims, 3, DT_BF16, 128, idx), 32768 + 5 * 128 + (34 ^ (5 << 4)));
    /* no swizzle: plain row-major, whatever the width */
    assert_int_equal(off2(2, 5, 4, 30, DT_F32, 0), (2 * 30 + 5) * 4);
    /* 32-byte panels of a 64-byte row of u8 */
    assert_int_equal(off2(1, 40, 8, 64, DT_U8, 32), 8 * 32 + (32 + 8) + 0);
    int64_t d1[1] = {64}, i1[1] = {9};
    assert_int_equal(ly_smem_offset(d1, 1, DT_F32, 0, i1), 36);
}

/* every element of a tile at a distinct, element-aligned offset inside the tile;
 * 16 bytes of a row inside one panel stay contiguous */
static void check_tile_offsets(const int64_t *dims, int rank, DType dt, int s)
{
    int64_t e = ir_dtype_bytes(dt), total = e;
    for (int i = 0; i < rank; i++)
        total *= dims[i];
    unsigned char *seen = calloc((size_t)total, 1);
    int64_t idx[4] = {0, 0, 0, 0}, n = total / e;
    for (int64_t k = 0; k < n; k++) {
        int64_t rest = k;
        for (int i = rank - 1; i >= 0; i--)
            idx[i] = rest % dims[i], rest /= dims[i];
        uint64_t o = ly_smem_offset(dims, rank, dt, s, idx);
        assert_true(o % (uint64_t)e == 0 && o + (uint64_t)e <= (uint64_t)total);
        assert_int_equal(seen[o], 0);
        seen[o] = 1;
        assert_int_equal(o, ly_swizzle((uint32_t)ly_smem_linear(dims, rank, dt, s, idx), s));
        if (idx[rank - 1] * e % 16 && idx[rank - 1] > 0) {   /* inside a chunk: next to its left neighbour */
            int64_t left[4];
            memcpy(left, idx, sizeof left);
            left[rank - 1]--;
            assert_int_equal(o, ly_smem_offset(dims, rank, dt, s, left) + (uint64_t)e);
        }
    }
    free(seen);
}

static void test_smem_bijection(void **state)
{
    (void)state;
    int64_t a[3] = {2, 16, 128}, b[2] = {8, 96}, c[3] = {3, 24, 64}, d[2] = {16, 40};
    check_tile_offsets(a, 3, DT_BF16, 128);
    check_tile_offsets(b, 2, DT_F32, 128);   /* three 128-byte panels */
    check_tile_offsets(c, 3, DT_U8, 32);     /* two 32-byte panels */
    check_tile_offsets(a, 3, DT_F16, 64);
    check_tile_offsets(d, 2, DT_F16, 0);
}

/* ---- wgmma descriptors ---------------------------------------------------------- */

typedef struct { uint32_t start, lbo, sbo, base; int layout; } Desc;

/* PTX "Matrix Descriptor Format", read back field by field */
static Desc decode(uint64_t d)
{
    Desc x;
    x.start = (uint32_t)(d & 0x3FFF) << 4;
    x.lbo = (uint32_t)((d >> 16) & 0x3FFF) << 4;
    x.sbo = (uint32_t)((d >> 32) & 0x3FFF) << 4;
    x.base = (uint32_t)((d >> 49) & 7);
    x.layout = (int)(d >> 62);
    assert_int_equal((d >> 14) & 3, 0);
    assert_int_equal((d >> 30) & 3, 0);
    assert_int_equal((d >> 46) & 7, 0);
    assert_int_equal((d >> 52) & 0x3FF, 0);
    return x;
}

static void test_desc_bits(void **state)
{
    (void)state;
    uint64_t d = ly_wgmma_desc(0x21470, 16, 1024, 128, 0);
    assert_true(d == (0x2147ull | 1ull << 16 | 64ull << 32 | 1ull << 62));
    Desc x = decode(ly_wgmma_desc(0x3FFF0, 16384, 1024, 64, 5));
    assert_int_equal(x.start, 0x3FFF0), assert_int_equal(x.lbo, 16384), assert_int_equal(x.sbo, 1024);
    assert_int_equal(x.base, 5), assert_int_equal(x.layout, 2);
    assert_int_equal(decode(ly_wgmma_desc(0, 0, 0, 32, 0)).layout, 3);
    assert_int_equal(decode(ly_wgmma_desc(0, 0, 0, 0, 0)).layout, 0);
    /* "matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4": bits above 18 are dropped */
    assert_int_equal(decode(ly_wgmma_desc(0x40010, 0, 0, 128, 0)).start, 0x10);
    assert_int_equal(ly_wgmma_kstep(DT_BF16), 16);
    assert_int_equal(ly_wgmma_kstep(DT_TF32), 8);
    assert_int_equal(ly_wgmma_kstep(DT_E4M3), 32);
}

/* the wgmma unit as the PTX ISA's "Canonical Layouts" describe it: the byte address of
 * operand element (mn, k), before the unit swizzles it; T = 16 / e, W = S / 16:
 *   K-major  ((8, m), (T, 2k)) : ((W T, SBO), (1, T))
 *   MN-major ((T, W, m), (8, k)) : ((1, T, LBO), (W T, SBO))   (in elements; SBO, LBO bytes) */
static uint32_t unit_address(const Desc *d, int tnsp, int e, int mn, int k)
{
    int s = d->layout == 1 ? 128 : d->layout == 2 ? 64 : 32, t = 16 / e, w = s / 16;
    uint32_t a;
    if (!tnsp)
        a = (uint32_t)((mn % 8) * w * t * e + (k % t) * e + (k / t) * t * e) + (uint32_t)(mn / 8) * d->sbo;
    else
        a = (uint32_t)((mn % t) * e + (mn / t % w) * t * e + (k % 8) * w * t * e) +
            (uint32_t)(mn / (t * w)) * d->lbo + (uint32_t)(k / 8) * d->sbo;
    return cute_swizzle(d->start + a, s);
}

typedef struct {
    int64_t dims[3];
    int rank;
    DType dt;
    int swizzle, mn_major;
    int64_t origin[3];   /* stored index of (mn 0, k 0) */
    int mn;              /* M (64) or N */
} Operand;

#define TILE_BASE 0x1C00u   /* a shared address aligned to 1024 */

/* every element of the instruction read by the model lands where ly_smem_offset put it */
static LyDescGeom check_operand(const Operand *op)
{
    LyDescGeom g;
    char why[160];
    if (!ly_wgmma_operand(op->dims, op->rank, op->dt, op->swizzle, op->mn_major, op->origin, op->mn, &g,
                          why, sizeof why))
        fail_msg("operand refused: %s", why);
    assert_int_equal(g.tnsp, op->mn_major);
    Desc d = decode(ly_wgmma_desc(TILE_BASE + g.start, g.lbo, g.sbo, g.swizzle, 0));
    assert_int_equal(d.base, 0);
    int e = ir_dtype_bytes(op->dt), ks = ly_wgmma_kstep(op->dt), r = op->rank;
    for (int mn = 0; mn < op->mn; mn++)
        for (int k = 0; k < ks; k++) {
            int64_t idx[3];
            memcpy(idx, op->origin, sizeof idx);
            idx[r - 2] += op->mn_major ? k : mn;
            idx[r - 1] += op->mn_major ? mn : k;
            uint32_t want = TILE_BASE + (uint32_t)ly_smem_offset(op->dims, r, op->dt, op->swizzle, idx);
            uint32_t got = unit_address(&d, op->mn_major, e, mn, k);
            if (got != want)
                fail_msg("operand element (mn %d, k %d): the unit reads %#x, the tile has it at %#x", mn, k,
                         got, want);
        }
    return g;
}

/* the five operands of docs/tir.md's GEMM and attention examples, every stage, slab
 * and k-step, with the numbers layout.h states */
static void test_worked_examples(void **state)
{
    (void)state;
    for (int s = 0; s < 3; s++)
        for (int wg = 0; wg < 2; wg++)
            for (int ks = 0; ks < 4; ks++) {   /* As[s]: bf16[3, 128, 64], A K-major, slab wg */
                Operand a = {{3, 128, 64}, 3, DT_BF16, 128, 0, {s, 64 * wg, 16 * ks}, 64};
                LyDescGeom g = check_operand(&a);
                assert_int_equal(g.start, s * 16384 + wg * 8192 + 32 * ks);
                assert_int_equal(g.lbo, 16), assert_int_equal(g.sbo, 1024);
            }
    for (int s = 0; s < 3; s++)
        for (int ks = 0; ks < 4; ks++) {       /* Bs[s]: bf16[3, 256, 64], B = Bs^T, N = 256 */
            Operand b = {{3, 256, 64}, 3, DT_BF16, 128, 0, {s, 0, 16 * ks}, 256};
            LyDescGeom g = check_operand(&b);
            assert_int_equal(g.start, s * 32768 + 32 * ks);
            assert_int_equal(g.sbo, 1024);
        }
    for (int wg = 0; wg < 2; wg++)
        for (int ks = 0; ks < 8; ks++) {       /* Qs: bf16[128, 128], A K-major across panels */
            Operand q = {{128, 128}, 2, DT_BF16, 128, 0, {64 * wg, 16 * ks}, 64};
            LyDescGeom g = check_operand(&q);
            assert_int_equal(g.start, ks / 4 * 16384 + wg * 8192 + 32 * (ks % 4));
            assert_int_equal(g.sbo, 1024);
        }
    for (int s = 0; s < 2; s++)
        for (int ks = 0; ks < 8; ks++) {
            /* Ks[s]: bf16[2, 128, 128], B = Ks^T K-major, N = 128 */
            Operand kk = {{2, 128, 128}, 3, DT_BF16, 128, 0, {s, 0, 16 * ks}, 128};
            LyDescGeom g = check_operand(&kk);
            assert_int_equal(g.start, s * 32768 + ks / 4 * 16384 + 32 * (ks % 4));
            assert_int_equal(g.sbo, 1024), assert_int_equal(g.tnsp, 0);
            /* Vs[s]: bf16[2, 128, 128], B = V (K x N, N contiguous): MN-major, N = 128 */
            Operand v = {{2, 128, 128}, 3, DT_BF16, 128, 1, {s, 16 * ks, 0}, 128};
            g = check_operand(&v);
            assert_int_equal(g.start, s * 32768 + 2048 * ks);
            assert_int_equal(g.lbo, 16384), assert_int_equal(g.sbo, 1024), assert_int_equal(g.tnsp, 1);
            /* and its second 64 columns alone (an n64 instruction) */
            Operand v2 = {{2, 128, 128}, 3, DT_BF16, 128, 1, {s, 16 * ks, 64}, 64};
            g = check_operand(&v2);
            assert_int_equal(g.start, s * 32768 + 16384 + 2048 * ks);
        }
}

static void test_descriptor_model(void **state)
{
    (void)state;
    for (int ks = 0; ks < 4; ks++) {
        Operand ops[] = {
            /* K-major, 64- and 32-byte swizzles: several panels along K */
            {{2, 64, 64}, 3, DT_BF16, 64, 0, {1, 0, 16 * ks}, 64},
            {{64, 64}, 2, DT_F16, 32, 0, {0, 16 * ks}, 64},
            /* K-major tf32 (k8) and fp8 (k32) */
            {{64, 32}, 2, DT_TF32, 128, 0, {0, 8 * ks}, 64},
            {{128, 128}, 2, DT_E4M3, 128, 0, {0, 32 * ks}, 128},
            {{2, 64, 64}, 3, DT_I8, 64, 0, {1, 0, 32 * (ks % 2)}, 64},
            /* MN-major: 64-, 32- and 128-byte swizzles, several MN blocks */
            {{2, 64, 128}, 3, DT_F16, 64, 1, {1, 16 * ks, 0}, 128},
            {{64, 64}, 2, DT_BF16, 32, 1, {16 * ks, 0}, 64},
            {{64, 128}, 2, DT_BF16, 128, 1, {16 * ks, 64}, 64},   /* A = As^T, slab 1 */
            {{64, 256}, 2, DT_BF16, 128, 1, {16 * ks, 0}, 256},
        };
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
            check_operand(&ops[i]);
    }
    /* MN-major strides: LBO = panel (K rows x S), SBO = 8 x S */
    Operand m = {{2, 64, 128}, 3, DT_F16, 64, 1, {0, 0, 0}, 128};
    LyDescGeom g = check_operand(&m);
    assert_int_equal(g.lbo, 64 * 64), assert_int_equal(g.sbo, 512);
}

static void expect_refused(Operand op, const char *needle)
{
    LyDescGeom g;
    char why[160] = "";
    assert_false(ly_wgmma_operand(op.dims, op.rank, op.dt, op.swizzle, op.mn_major, op.origin, op.mn, &g,
                                  why, sizeof why));
    if (!strstr(why, needle))
        fail_msg("reason '%s' does not mention '%s'", why, needle);
}

static void test_operand_refusals(void **state)
{
    (void)state;
    expect_refused((Operand){{64, 64}, 2, DT_BF16, 0, 0, {0, 0}, 64}, "swizzle 0");
    expect_refused((Operand){{64, 32}, 2, DT_TF32, 128, 1, {0, 0}, 32}, "16-bit");
    expect_refused((Operand){{64, 64}, 2, DT_BF16, 128, 0, {4, 0}, 32}, "groups of 8");
    expect_refused((Operand){{64, 64}, 2, DT_BF16, 128, 0, {0, 8}, 64}, "32 bytes");
    expect_refused((Operand){{64, 64}, 2, DT_BF16, 128, 0, {8, 0}, 64}, "leaves");
    expect_refused((Operand){{64, 128}, 2, DT_BF16, 128, 1, {0, 32}, 64}, "multiple of 64");
    expect_refused((Operand){{64, 48}, 2, DT_BF16, 128, 0, {0, 0}, 64}, "not a multiple");
    expect_refused((Operand){{64, 64}, 2, DT_BF16, 128, 0, {0, 0}, 12}, "multiple of 8");
    expect_refused((Operand){{64}, 1, DT_BF16, 128, 0, {0}, 64}, "rank 2");
}

/* ---- TMA -------------------------------------------------------------------------- */

static void test_tma(void **state)
{
    (void)state;
    /* cuda.h: CU_TENSOR_MAP_SWIZZLE_NONE, _32B, _64B, _128B = 0, 1, 2, 3 */
    assert_int_equal(ly_tma_swizzle_enum(0), 0);
    assert_int_equal(ly_tma_swizzle_enum(32), 1);
    assert_int_equal(ly_tma_swizzle_enum(64), 2);
    assert_int_equal(ly_tma_swizzle_enum(128), 3);
    assert_int_equal(ly_tma_swizzle_enum(96), -1);
    int64_t box[3], pb = 0;
    int64_t q[2] = {128, 128};
    assert_int_equal(ly_tma_box(q, 2, DT_BF16, 128, box, &pb), 2);   /* Qs: two panels */
    assert_int_equal(box[0], 128), assert_int_equal(box[1], 64), assert_int_equal(pb, 16384);
    int64_t a[2] = {128, 64};
    assert_int_equal(ly_tma_box(a, 2, DT_BF16, 128, box, &pb), 1);
    assert_int_equal(box[1], 64);
    int64_t f[2] = {64, 64};
    assert_int_equal(ly_tma_box(f, 2, DT_F32, 64, box, &pb), 4);     /* 256-byte rows, 64-byte panels */
    assert_int_equal(box[1], 16), assert_int_equal(pb, 64 * 64);
    int64_t n[2] = {32, 200};
    assert_int_equal(ly_tma_box(n, 2, DT_BF16, 0, box, &pb), 1);     /* no swizzle: one box */
    assert_int_equal(box[1], 200);
    int64_t st[3] = {2, 64, 128};
    assert_int_equal(ly_tma_box(st, 3, DT_BF16, 128, box, &pb), 0);  /* panels under stages */
    int64_t st1[3] = {2, 64, 64};
    assert_int_equal(ly_tma_box(st1, 3, DT_BF16, 128, box, &pb), 1);
    assert_int_equal(box[0], 2);
    /* the panels the boxes fill are where ly_smem_offset puts the columns */
    int64_t idx[2] = {5, 64 + 3};
    assert_int_equal(ly_smem_linear(q, 2, DT_BF16, 128, idx), 1 * 16384 + 5 * 128 + 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_swizzle_tables),
        cmocka_unit_test(test_swizzle_properties),
        cmocka_unit_test(test_smem_offsets),
        cmocka_unit_test(test_smem_bijection),
        cmocka_unit_test(test_desc_bits),
        cmocka_unit_test(test_worked_examples),
        cmocka_unit_test(test_descriptor_model),
        cmocka_unit_test(test_operand_refusals),
        cmocka_unit_test(test_tma),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
