/* layout.h — the one home of "which thread and register hold which tile element":
 * register-tile fragment maps (mma, mma_a, mma_b, wgmma, wgmma_a, mfma*, rows), the
 * ldmatrix / stmatrix address maps, the shared-memory swizzle and panel layout, the
 * wgmma matrix descriptor and the TMA box and swizzle mode. Plain C over ir.h: the
 * verifier, the passes, codegen, the cost model and the runtime all read it.
 *
 * Sources (section names of the PTX ISA 8.x/9.0, "PTX" below; the AMD Instinct CDNA3
 * ISA guide and AMD's matrix instruction calculator for MFMA, "CDNA3" below):
 *   PTX 9.7.14.5.7  "Matrix Fragments for mma.m16n8k8"            (tf32 A/B)
 *   PTX 9.7.14.5.8  "Matrix Fragments for mma.m16n8k16 with floating point type"
 *   PTX 9.7.14.5.10 "Matrix Fragments for mma.m16n8k32"           (8-bit A/B)
 *   PTX 9.7.14.5.15 "Warp-level matrix load instruction: ldmatrix"
 *   PTX 9.7.14.5.16 "Warp-level matrix store instruction: stmatrix"
 *   PTX 9.7.15.5.1.1 "Register Fragments" (wgmma m64nNk16 / k8 / k32, Figures 148-153)
 *   PTX 9.7.15.5.1.2 "Shared Memory Matrix Layout", its "Leading / Stride Dimension
 *                   Byte Offset", "Canonical Layouts" and "Matrix Descriptor Format"
 *   PTX 5.5.7       "Swizzling Modes" (the tensor-copy / TMA patterns)
 *   CUDA driver API cuda.h: enum CUtensorMapSwizzle
 *   CDNA3 "Matrix layouts" of v_mfma_f32_32x32x8_{f16,bf16}, v_mfma_f32_16x16x16_*,
 *         v_mfma_f32_32x32x2_f32, v_mfma_f32_16x16x4_f32 (also gfx90a's *_bf16_1k)
 * The maps follow docs/tir.md §5.3; the shared-memory layout follows docs/tir.md §5.2.
 *
 * Notation: thr = thread index in the owning scope (0 .. ly_threads-1), lane = thr % 32
 * (NVIDIA) or thr (AMD, a 64-lane wavefront), w = thr / 32 (warp in a warpgroup),
 * g = lane / 4 ("groupID"), t = lane % 4 ("threadID_in_group").
 *
 * ---- Fragment maps and the canonical element order ---------------------------------
 * A distributed tile is a row-major grid of instruction fragments ("atoms"); element
 * e of a thread is e = f * EPT + i with f the atom's index in row-major order and i
 * its element within the atom in the instruction's register order (low to high).
 *
 *  mma  [16a, 8b], any dtype of 32 bits or less (f32/f16/i32 accumulators, or a dtype
 *       converted from one): atom m16n8, EPT 4, i = 0:(g, 2t) 1:(g, 2t+1)
 *       2:(g+8, 2t) 3:(g+8, 2t+1) = c0..c3 / d0..d3 of mma.sync.m16n8k{8,16,32}
 *       (PTX 9.7.14.5.8 Figure 83). An f16 accumulator packs {c0,c1} and {c2,c3} into
 *       one .f16x2 register each (ly_pack = 2).
 *  mma_a 16-bit [16a, 16c]: atom 16x16, EPT 8, i = 2*reg + h, reg a0:(g, 2t+h)
 *       a1:(g+8, 2t+h) a2:(g, 2t+8+h) a3:(g+8, 2t+8+h)  (PTX 9.7.14.5.8 Figure 79).
 *       8-bit [16a, 32c] (m16n8k32, PTX 9.7.14.5.10 Figure 88): EPT 16, i = 4*reg + q,
 *       reg a0:(g, 4t+q) a1:(g+8, 4t+q) a2:(g, 16+4t+q) a3:(g+8, 16+4t+q).
 *       tf32 [16a, 8c] (m16n8k8, PTX 9.7.14.5.7 Figure 72): EPT 4, i = reg,
 *       a0:(g, t) a1:(g+8, t) a2:(g, t+4) a3:(g+8, t+4).
 *       In one formula, with P = ly_pack (2, 4, 1) and K = 8P the atom's K:
 *       reg r, slot q: (g + 8*(r&1), P*t + q + (K/2)*(r>>1)).
 *  mma_b (K x N) 16-bit [16c, 8b]: atom 16x8, EPT 4, i = 2*reg + h, b0:(k=2t+h, n=g)
 *       b1:(k=2t+8+h, n=g) (Figure 81). 8-bit [32c, 8b]: EPT 8, b0:(4t+q, g)
 *       b1:(16+4t+q, g) (Figures 90/91). tf32 [8c, 8b]: EPT 2, b0:(t, g) b1:(t+4, g)
 *       (Figure 75). One formula: reg r, slot q: (P*t + q + (K/2)*r, g).
 *  wgmma [64a, N], N % 8 == 0, N <= 256, any dtype of 32 bits or less, 128 threads:
 *       atom = one m64nN slab, EPT N/2, i = 4j + r, r = 0:(16w+g, 8j+2t)
 *       1:(16w+g, 8j+2t+1) 2:(16w+g+8, 8j+2t) 3:(16w+g+8, 8j+2t+1) = d0..d(N/2-1) of
 *       wgmma.mma_async.m64nNk* (PTX 9.7.15.5.1.1 Figure 149; CUTLASS CLayout_64xN).
 *  wgmma_a [64a, K*c]: the mma_a atom of warp w on rows 16w .. 16w+15 of each
 *       64-row slab, all three element sizes (Figures 148, 150, 152); atoms (slab, ki).
 *  Row vector [R] (cols = 0) of mma (R = 16a) / wgmma (R = 64a): atom = 16 / 64 rows,
 *       EPT 2, e = 2*block + h holds row 16*block + g + 8h (mma) or
 *       64*block + 16w + g + 8h (wgmma): the rows of the thread's accumulator elements
 *       in the order they occur. Held by the 4 threads of a quad.
 *  Column vector [1, C] (colvec) of mma / wgmma (C % 8 == 0): e = 2j + h holds column
 *       8j + 2t + h; held by 8 threads (mma) or 32 (wgmma).
 *  mfma (CDNA3, 64 lanes) [32a, 32b] with 32x32 atoms, else [16a, 16b] with 16x16 atoms
 *       (LyTile.mfma_shape may force one): 32x32: EPT 16, register v of lane l holds
 *       D[8*(v/4) + 4*(l/32) + v%4][l%32]; 16x16: EPT 4, D[4*(l/16) + v][l%16].
 *  mfma_a: 16-bit, 4 elements per lane (2 VGPRs, low half first): 32x8 atom
 *       A[l%32][4*(l/32) + i], 16x16 atom A[l%16][4*(l/16) + i]; f32: one element per
 *       lane: 32x2 atom A[l%32][l/32], 16x4 atom A[l%16][l/16].
 *  mfma_b: the transpose: 16-bit B[4*(l/32) + i][l%32] (8x32), B[4*(l/16) + i][l%16]
 *       (16x16); f32 B[l/32][l%32] (2x32), B[l/16][l%16] (4x16). (ly_pack of a 16-bit
 *       mfma_a / mfma_b tile is 2: elements 2v, 2v+1 share VGPR v.)
 *       The MFMA shape of an mfma_a tile follows its rows (32 if rows % 32 == 0), of an
 *       mfma_b tile its cols, of an mfma tile both dims (docs/tir.md §5.3.3).
 *  mfma row vector [R]: e = 16*block + v holds row 32*block + 8*(v/4) + 4*(l/32) + v%4
 *       (32 owners), or e = 4*block + v: row 16*block + 4*(l/16) + v (16 owners).
 *       Column vector [1, C]: e = block: column M*block + l%M (64/M owners).
 *  rows [R, C] over T = scope_threads threads: V = max(1, 16 / elem bytes) elements per
 *       16-byte chunk, element (r, c) is in chunk q = (r*C + c) / V, held by thread
 *       q % T as element e = (q / T) * V + (r*C + c) % V (docs/tir.md §5.3.4).
 *       ly_elems = ceil(chunks / T) * V; slots past the tile are empty (ly_coord gives
 *       -1, -1). A row vector [R] of `rows` (cols = 0) is replicated: every thread holds
 *       all R, e = r. A plain 1-D [C] tile in `rows` is described as rows = 1, cols = C.
 *
 * ---- Affine split ------------------------------------------------------------------
 * Every fragment layout (and `rows` when ly_has_affine) satisfies, for every (thr, e):
 *     row = row0(e) + sum_i coef_i * ((thr / div_i) % mod_i), col likewise,
 * with row0(e), col0(e) = ly_coord(thread 0, e) (= ly_elem_base). For `rows` the empty
 * slots come out of the formula as a coordinate outside the tile (row >= rows or
 * col >= cols), so the generated code guards them with that bound.
 *
 * ---- ldmatrix / stmatrix (PTX 9.7.14.5.15 / .16) -----------------------------------
 * An 8x8 b16 matrix m of ldmatrix.x{1,2,4} takes its row r from the shared address
 * lane 8m + r supplies; lane l then receives, in its register m, the 4 bytes at
 * [4*(l%4), 4*(l%4) + 4) of row l/4 (16-bit: columns 2*(l%4), +1), or with .trans the
 * 16-bit elements (row 2*(l%4) + h, column l/4). stmatrix is the same in reverse.
 * "frag" of an ldmatrix:
 *   mma_a / wgmma_a: the atom index f (the 16 x K instruction fragment (mi, ki), and
 *     for wgmma_a (slab, ki), the rows of the calling warp): one .x4; matrix m -> the
 *     fragment's register a_m. Without .trans the tile is K-contiguous in shared memory
 *     (any element size: 8-bit and tf32 rows are 16 bytes of K too); with .trans
 *     (16-bit only) it is M-contiguous (stored [K, M]).
 *   mma_b: f = ki * ceil(b/2) + p covers K rows ki*K .. +K and the two n8 fragments
 *     ni = 2p, 2p+1: one .x4 (an .x2 for the last p when b is odd); matrix m -> the
 *     register b_(m&1) of fragment ni = 2p + (m>>1). Without .trans the shared tile is
 *     [N, K] (K contiguous, the view is Bs^T); with .trans (16-bit only) it is [K, N].
 * "group" of an stmatrix.x4 (16-bit mma / wgmma tiles): a 16-row x 16-column piece of
 *   the calling warp: mma: g = mi * ceil(b/2) + p covers fragments (mi, 2p), (mi, 2p+1);
 *   wgmma: g = slab * ceil(N/16) + p covers columns 16p .. 16p+15 of the warp's rows
 *   64*slab + 16w .. +15 (an .x2 when the last p has only 8 columns). Matrix m is rows
 *   8*(m&1) .. +7 of columns 8*(2p + (m>>1)) .. +7.
 * The row functions return the tile coordinate of the first element the lane's address
 * points at; the 8 (b16) elements of that row run along the tile's contiguous dim in
 * shared memory. Register numbers (ly_ldmatrix_dst / ly_stmatrix_src) index the
 * thread's 32-bit registers of the whole tile in canonical order: register k holds
 * elements k*P .. k*P+P-1 (P = ly_pack). Lanes past 8 * nmat repeat matrix m % nmat.
 *
 * ---- Shared memory: swizzle and panels (docs/tir.md §5.2, PTX 5.5.7) ----------------
 * phys(o) = o ^ (((o >> 7) & (S/16 - 1)) << 4): the 16-byte chunk index (bits 4..6) is
 * XORed with the 128-byte line index mod S/16. That is the TMA SWIZZLE_32B/64B/128B
 * pattern (PTX 5.5.7 tables) and CuTe's Swizzle<log2(S/16), 4, 3>. The pattern repeats
 * every 8*S bytes; tiles are aligned to that (ly_smem_align), so the XOR may be taken
 * of the offset from the tile base, as TMA and wgmma take it of the address.
 * A shared tile [d0, .., R, C] is a stack of [R, C] matrices (the leading dims, e.g.
 * pipeline stages, index whole matrices). A matrix whose row (C * e bytes) is wider
 * than S is stored as panels of S bytes: panel p holds columns [p*S/e, (p+1)*S/e) of
 * all R rows, R*S bytes, panels follow each other. ly_smem_offset applies phys to the
 * whole offset from the tile base; that equals §5.2's "per stage, per panel" swizzle
 * whenever R*S (and so each matrix) is a multiple of 8*S bytes, i.e. R % 8 == 0.
 *
 * ---- wgmma matrix descriptors (PTX 9.7.15.5.1.2) -----------------------------------
 * Descriptor bits: [0,14) start address >> 4, [16,30) LBO >> 4, [32,46) SBO >> 4 (each
 * of (x & 0x3FFFF) >> 4), [49,52) base offset, [62,64) layout: 0 none (interleave),
 * 1 128B, 2 64B, 3 32B swizzle. The canonical layouts (PTX "Canonical Layouts", CUTLASS
 * make_gmma_desc), T = 16 / elem bytes elements per 16-byte chunk, in elements:
 *   K-major,  swizzle S: ((8, m), (T, 2k)) : ((S/16*T, SBO), (1, T))
 *       rows (M or N) are S bytes apart inside a group of 8, groups of 8 rows are SBO
 *       apart, K runs along the S-byte row. LBO is unused ("assumed 1": we put 16).
 *       A k-step (32 bytes of K: k16 for 16-bit, k32 for 8-bit, k8 for tf32) lies in
 *       one row; the step's start address is the row's base + its byte offset in the
 *       row. With our panels: SBO = 8*S; start = panel base + row0*S + (k0 % (S/e))*e.
 *   MN-major, swizzle S: ((T, S/16, m), (8, k)) : ((1, T, LBO), (S/16*T, SBO))
 *       MN runs along the S-byte row (S/e elements), the next S/e MN elements are LBO
 *       away, K rows are S bytes apart inside a group of 8, groups of 8 K are SBO apart.
 *       With our panels (the stored tile is [K, MN], MN contiguous): LBO = panel size
 *       R*S (R = the K extent of the stored matrix), SBO = 8*S; start = panel base of
 *       mn0 + k0*S. Set imm-trans (tnsp) = 1. 16-bit dtypes only (PTX: .tf32, 8-bit
 *       must be K-major).
 *   base offset: 0, because tiles are aligned to 8*S and every start lies in a pattern
 *       that begins at a multiple of 8*S ((pattern start >> 7) & 7 = 0).
 * Worked examples (bf16, S = 128, e = 2, T = 8; k-step ks covers 16 elements of K):
 *   As[s]: bf16[ST, 128, 64], A K-major, slab wg*64: one panel (64 * 2 = 128 bytes),
 *     matrix 16384 B; start = s*16384 + wg*64*128 + 32*ks (ks 0..3), SBO 1024, LBO 16.
 *   Bs[s]: bf16[ST, 256, 64], B = Bs^T K-major, N = 256: start = s*32768 + 32*ks,
 *     SBO 1024, LBO 16.
 *   Qs: bf16[128, 128], A K-major, K = 128 crosses the two 64-column panels (16384 B
 *     each): start = (ks/4)*16384 + wg*8192 + 32*(ks%4) (ks 0..7), SBO 1024, LBO 16.
 *   Ks[s]: bf16[ST, 128, 128], B = Ks^T K-major, N = 128: start = s*32768 +
 *     (ks/4)*16384 + 32*(ks%4), SBO 1024, LBO 16.
 *   Vs[s]: bf16[ST, 128, 128], B = V ([K, N], N contiguous): MN-major, tnsp = 1,
 *     N = 128 = two 64-element MN blocks = the two panels: LBO = 128*128 = 16384,
 *     SBO = 8*128 = 1024, start = s*32768 + ks*16*128 = s*32768 + 2048*ks.
 *
 * ---- TMA ---------------------------------------------------------------------------
 * CUtensorMapSwizzle: NONE 0, 32B 1, 64B 2, 128B 3 (cuda.h). One TMA per panel: the box
 * is the tile's shape with the inner extent cut to S/e elements; panel p goes to
 * shared offset p * R*S (per matrix) from global inner coordinate c0 + p*S/e.
 */
#ifndef CAKE_LAYOUT_H
#define CAKE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include "ir.h"

/* A register tile's distribution: which thread of the owning scope holds which element. */
typedef struct {
    Layout layout;      /* LY_MMA .. LY_ROWS (ir.h) */
    DType dtype;        /* element dtype: decides k and register packing of A/B fragments */
    int rows, cols;     /* logical shape. A row vector [R] of an accumulator layout
                           (docs/tir.md §5.3.5): rows = R, cols = 0.
                           A column vector [1, C]: rows = 1, cols = C (flag below). */
    int colvec;         /* 1: the [1, C] column vector of an accumulator layout */
    int scope_threads;  /* rows layout only: T threads of the block/role; others: 0 (derived) */
    int warp_size;      /* 32 (NVIDIA) or 64 (AMD) */
    int mfma_shape;     /* mfma family: 32 or 16 forces the MFMA atom (a row vector must
                           name its accumulator's); 0: derived from the shape (§5.3.3) */
} LyTile;

/* 1 when the tile's shape, dtype and thread counts are legal for its layout; else 0
 * with the reason in why (n bytes, may be NULL). The other functions assume a valid
 * tile and return 0 (or do nothing) for an invalid one. */
int ly_valid(const LyTile *t, char *why, size_t n);
int ly_threads(const LyTile *t);      /* threads of the owning scope: 32, 64, 128, or T */
/* the instruction fragment ("atom") of a fragment layout: rows x cols (mfma [32, 32]
 * or [16, 16], mfma_a [32, 8] for 16-bit ...); 0 for rows tiles or an invalid tile */
int ly_atom(const LyTile *t, int *rows, int *cols);
int ly_elems(const LyTile *t);        /* elements held per thread */
/* elements per 32-bit register in canonical order: consecutive groups of ly_pack
 * elements share one register (2 for 16-bit, 4 for 8-bit A/B, 1 for 32-bit; row and
 * column vectors 1; `rows` 32/bits for narrow dtypes) */
int ly_pack(const LyTile *t);
int ly_regs(const LyTile *t);         /* 32-bit registers per thread */
/* element e (0 <= e < ly_elems) of thread thr (0 <= thr < ly_threads); -1, -1 for an
 * empty slot of a `rows` tile; the column of a row vector is 0, the row of a column
 * vector 0 */
void ly_coord(const LyTile *t, int thr, int e, int *row, int *col);
/* the (thread, element) pairs holding (row, col) (col 0 for a row vector): returns how
 * many (1, or the replication of a vector); fills up to max pairs in thread order */
int ly_owners(const LyTile *t, int row, int col, int *thr, int *e, int max);

/* 1 when every element of tile a lies, in layout b (same shape), in the same thread:
 * a register-to-register conversion between the two needs no data movement (an
 * mfma accumulator [K, N] is the mfma_b operand [K, N]: CDNA3 32x32 and 16x16
 * atoms) */
int ly_same_owners(const LyTile *a, const LyTile *b);

/* ---- affine split -------------------------------------------------------- */
typedef struct { int div, mod, coef; } LyTerm;      /* coef * ((thr / div) % mod) */
typedef struct { LyTerm row[4], col[4]; int nrow, ncol; } LyThreadPart;
int ly_has_affine(const LyTile *t);   /* 0 only for `rows` tiles with no split */
void ly_thread_part(const LyTile *t, LyThreadPart *out);
void ly_elem_base(const LyTile *t, int e, int *row0, int *col0);
/* ly_elem_base of elements 0 .. n-1 at once (the geometry derived once); 0 when t is not valid */
int ly_elem_bases(const LyTile *t, int n, int *row0, int *col0);

/* ---- ldmatrix / stmatrix --------------------------------------------------- */
typedef struct { int nmat; int trans; } LyLdm;
int ly_ldmatrix_frags(const LyTile *t);   /* ldmatrix instructions to fill the tile */
/* 1 and *how (nmat 4 or 2) when frag can be loaded (trans: .trans); 0 if not */
int ly_ldmatrix_plan(const LyTile *t, int frag, int trans, LyLdm *how);
/* thr: thread of the owning scope (wgmma_a: 0..127, the warp is thr / 32) */
void ly_ldmatrix_row(const LyTile *t, int frag, int trans, int thr, int *row, int *col);
/* the thread's register (canonical, over the whole tile) that matrix mat lands in */
int ly_ldmatrix_dst(const LyTile *t, int frag, int trans, int mat);
int ly_stmatrix_groups(const LyTile *t);  /* stmatrix instructions to store the tile */
int ly_stmatrix_plan(const LyTile *t, int group, LyLdm *how);
void ly_stmatrix_row(const LyTile *t, int group, int thr, int *row, int *col);
int ly_stmatrix_src(const LyTile *t, int group, int mat);

/* ---- shared memory ----------------------------------------------------------- */
uint32_t ly_swizzle(uint32_t byte_offset, int swizzle);   /* S = 0: identity */
/* byte offset from the tile base of element idx[] of a shared tile dims[rank] (panels
 * and swizzle included); ly_smem_linear: the same offset before the swizzle (what an
 * address computation adds to the tile base when the hardware swizzles: wgmma, TMA) */
uint64_t ly_smem_offset(const int64_t *dims, int rank, DType dt, int swizzle, const int64_t *idx);
uint64_t ly_smem_linear(const int64_t *dims, int rank, DType dt, int swizzle, const int64_t *idx);
uint32_t ly_smem_align(int swizzle);   /* base alignment: 8*S (256/512/1024), else 128 */
/* the matrix geometry behind those offsets, for code that computes them at run time:
 * R rows of C elements of e bytes, stored as panels of `panel` elements (C when a
 * row fits in the swizzle span S), `bytes` per matrix (the stride of the leading dims) */
typedef struct { int64_t rows, cols, panel, e, bytes; } LySmemGeom;
LySmemGeom ly_smem_geom(const int64_t *dims, int rank, int64_t elem_bytes, int swizzle);

/* The bank conflicts of one LDS access of a 64-lane wavefront on AMD: lane l
 * accesses `bytes` (4, 8 or 16) at byte address addr[l]; returns the worst number of
 * distinct 4-byte words one bank serves in one clock (1: conflict-free), 0 for a
 * width it does not model. */
int ly_lds_ways(const uint32_t *addr, int lanes, int bytes);

/* ---- wgmma descriptors --------------------------------------------------------- */
uint64_t ly_wgmma_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes, int swizzle,
                       uint32_t base_offset);
/* One wgmma operand read from a shared tile dims[rank] (dtype dt, swizzle S): the
 * stored matrix is the tile's last two dims [R, C]. mn_major = 0: K-major, the operand's
 * M (A) or N (B) runs over stored rows and K over stored columns (A = As[..], B = Bs^T);
 * mn_major = 1: K over stored rows, MN over stored columns (A = As^T, B = Bs[..]).
 * origin[rank] is the stored index of the operand element (mn 0, k 0) of this
 * instruction (the stage, the slab / N offset, and the k-step's first K), mn_extent
 * its M (64) or N. Fills the descriptor fields: start = unswizzled byte offset of the
 * origin from the tile base (add the tile's shared address), lbo, sbo, tnsp. */
typedef struct { uint32_t start, lbo, sbo; int tnsp; int swizzle; } LyDescGeom;
int ly_wgmma_operand(const int64_t *dims, int rank, DType dt, int swizzle, int mn_major,
                     const int64_t *origin, int mn_extent, LyDescGeom *out, char *why, size_t n);
int ly_wgmma_kstep(DType dt);          /* K elements of one instruction: 32 bytes of K */

/* ---- TMA ------------------------------------------------------------------------ */
int ly_tma_swizzle_enum(int swizzle);  /* CUtensorMapSwizzle value; -1 if not 0/32/64/128 */
/* The box of one TMA into the shared view dims[rank]: box[] = dims with the innermost
 * extent cut to one panel (S / e elements) when the row is wider than S; returns the
 * number of TMAs (panels), panel p going to shared offset p * *panel_bytes (R*S) from
 * global inner coordinate + p * S/e; 0 when impossible (bad swizzle, or several panels
 * under leading dims > 1: a box is written densely, so issue one per matrix) */
int ly_tma_box(const int64_t *dims, int rank, DType dt, int swizzle, int64_t *box,
               int64_t *panel_bytes);

#endif
