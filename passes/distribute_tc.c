/* distribute_tc.c — the tensor-core half of the distribute pass: mma and
 * wgmma statements split into one lowered instruction per fragment, and
 * ldmatrix / stmatrix into one 8x8-matrix move per group of 32-bit
 * registers (distribute.h).
 *
 * Operands of one instruction are listed in the canonical register order of
 * the instruction's fragment layout (ir/layout): element q of the
 * instruction fragment at base (fr, fc) is the tile element at base
 * (origin + (fr, fc)), so any fragment-aligned view of a larger tile feeds
 * the instruction directly. */
#include <string.h>
#include "distribute.h"


/* an instruction fragment's element bases (ly_elem_base), derived once per statement */
typedef struct { int n, *r, *c; } FBase;

static void fbase(Lw *w, const LyTile *ft, FBase *fb)
{
    int ne = ly_elems(ft);
    size_t size = (size_t)(ne > 0 ? ne : 1) * sizeof(int);
    fb->n = ne;
    fb->r = arena_alloc(&w->b.ctx->arena, size);
    fb->c = arena_alloc(&w->b.ctx->arena, size);
    ly_elem_bases(ft, ne, fb->r, fb->c);
}

/* appends the elements of view v for instruction fragment fb at (r0, c0) */
static int operands(Lw *w, const FView *v, const FBase *fb, int r0, int c0, NodeId *ops, uint32_t *n)
{
    for (int q = 0; q < fb->n; q++) {
        NodeId x = dist_at(w, v, r0 + fb->r[q], c0 + fb->c[q]);
        if (!x)
            return 0;
        ops[(*n)++] = x;
    }
    return 1;
}

static int tc_k(DType ab)
{
    switch (ab) {
    case DT_TF32: return 8;
    case DT_E4M3: case DT_E5M2: case DT_I8: case DT_U8: return 32;
    default: return 16;
    }
}

/* ---- mma.sync ------------------------------------------------------------------ */

static void dist_mma(Lw *w, NodeId s, IrList *out)
{
    IrB *b = &w->b;
    Node *n = lw_node(w, s);
    FView d, a, bb;
    if (!dist_view(w, n->a, &d) || !dist_view(w, n->b, &a) || !dist_view(w, n->c, &bb)) {
        dist_error(w, s, "mma operands that are not register tile views");
        return;
    }
    DType ab = a.f->ly.dtype, acc = d.f->ly.dtype;
    int k = tc_k(ab);
    const TcFamilyInfo *fam = tc_family(TCF_MMA_SYNC);
    IrTc tc = {16, 8, (uint16_t)k, (uint8_t)ab, (uint8_t)acc, 0, 0, 0, DT_NONE, 0};
    if (bb.f->ly.dtype != ab)
        tc.b_dt = (uint8_t)bb.f->ly.dtype;
    LyTile fd, fa, fb;   /* the instruction's fragments (ir/tcfamily.h) */
    tc_fragment(w->tg, TCF_MMA_SYNC, TC_C, tc, &fd);
    tc_fragment(w->tg, TCF_MMA_SYNC, TC_A, tc, &fa);
    tc_fragment(w->tg, TCF_MMA_SYNC, TC_B, tc, &fb);
    FBase bd, ba, bb_;
    fbase(w, &fd, &bd);
    fbase(w, &fa, &ba);
    fbase(w, &fb, &bb_);
    for (int ki = 0; ki < a.cols / k; ki++)
        for (int mi = 0; mi < d.rows / 16; mi++)
            for (int ni = 0; ni < d.cols / 8; ni++) {
                NodeId ops[64];
                uint32_t no = 0;
                if (!operands(w, &d, &bd, 16 * mi, 8 * ni, ops, &no) ||
                    !operands(w, &a, &ba, 16 * mi, k * ki, ops, &no) ||
                    !operands(w, &bb, &bb_, k * ki, 8 * ni, ops, &no)) {
                    dist_error(w, s, "mma operands whose fragments do not line up with the instruction");
                    return;
                }
                if (pass_planted("distribute-frag")) { /* test-only: a wrong fragment index */
                    NodeId x0 = ops[0];
                    ops[0] = ops[1];
                    ops[1] = x0;
                }
                NodeId m = irb_stmt(b, fam->lowered, ops, no);
                lw_node(w, m)->v.i = ir_tc_pack(tc);
                irb_push(b, out, m);
            }
}

/* ---- wgmma ----------------------------------------------------------------------- */

/* The descriptor geometry of a shared operand (ir/layout.h ly_wgmma_operand, the
 * one home of the LBO/SBO rules): K-major when K is the tile's contiguous dim,
 * else MN-major (the transpose bit). The start address is the instruction's
 * element's unswizzled shared address, computed per instruction (wg_desc). */
typedef struct { int kmajor; uint32_t lbo, sbo; int swizzle; } WgGeom;

static int wg_geom(Lw *w, const LwView *v, int is_a, int mn_extent, WgGeom *g, char *why, size_t n)
{
    int contiguous_is_k = is_a ? !v->transposed : v->transposed;
    int64_t origin[IR_MAX_RANK] = {0};
    LyDescGeom dg;
    (void)w;
    if (!ly_wgmma_operand(v->dims, v->rank, v->dt, v->swizzle, !contiguous_is_k, origin, mn_extent, &dg,
                          why, n))
        return 0;
    g->kmajor = contiguous_is_k;
    g->lbo = dg.lbo;
    g->sbo = dg.sbo;
    g->swizzle = dg.swizzle;
    return 1;
}

static NodeId wg_desc(Lw *w, const LwView *v, const WgGeom *g, NodeId rel0, NodeId rel1)
{
    NodeId rel[2] = {rel0, rel1};
    if (v->transposed) {
        rel[0] = rel1;
        rel[1] = rel0;
    }
    NodeId addr = lw_saddr(w, lw_elem_ref(w, v, rel), 1);
    NodeId d = irb_call(&w->b, OP_L_WGDESC, &addr, 1, irb_scalar_type(&w->b, DT_U64, 1));
    int code = g->swizzle == 128 ? 1 : g->swizzle == 64 ? 2 : 3;
    lw_node(w, d)->v.i = (int64_t)g->lbo | (int64_t)g->sbo << 20 | (int64_t)code << 40;
    return d;
}

static void dist_wgmma(Lw *w, NodeId s, IrList *out)
{
    IrB *b = &w->b;
    Node *n = lw_node(w, s);
    FView d, areg;
    LwView as, bs;
    if (!dist_view(w, n->a, &d)) {
        dist_error(w, s, "a wgmma accumulator that is not a register tile view");
        return;
    }
    int a_regs = dist_view(w, n->b, &areg);
    if ((!a_regs && !lw_view(w, n->b, &as)) || !lw_view(w, n->c, &bs)) {
        dist_error(w, s, "wgmma operands (A: a shared view or a wgmma_a tile; B: a shared view)");
        return;
    }
    DType ab = a_regs ? areg.f->ly.dtype : as.dt, acc = d.f->ly.dtype;
    int k = tc_k(ab);
    if (acc == DT_F16) { /* ptxas wants f16x2 pairs per register; the fragment has one per element */
        dist_error(w, s, "a wgmma with an f16 accumulator (its registers hold f16x2 pairs): accumulate in f32");
        return;
    }
    WgGeom ga = {0}, gb = {0};
    char why[160] = "";
    int nchunk0 = d.cols > 256 ? 256 : d.cols;
    if ((!a_regs && !wg_geom(w, &as, 1, 64, &ga, why, sizeof why)) ||
        !wg_geom(w, &bs, 0, nchunk0, &gb, why, sizeof why)) {
        dist_error(w, s, ir_fmt(b->ctx, "this wgmma operand in shared memory: %s", why[0] ? why :
                                "use a tile with swizzle 32, 64 or 128"));
        return;
    }
    int K = 0;
    for (int i = 0, kept = 0; i < bs.rank; i++)
        if (bs.kept[i] && kept++ == (bs.transposed ? 1 : 0))
            K = (int)bs.extent[i];
    int nchunk = d.cols > 256 ? 256 : d.cols;
    IrTc tc = {64, (uint16_t)nchunk, (uint16_t)k, (uint8_t)ab, (uint8_t)acc, (uint8_t)a_regs,
               (uint8_t)(!a_regs && !ga.kmajor), (uint8_t)!gb.kmajor, DT_NONE, 0};
    if (bs.dt != ab)
        tc.b_dt = (uint8_t)bs.dt;
    const TcFamilyInfo *fam = tc_family(TCF_WGMMA);
    LyTile fd, fa;
    tc_fragment(w->tg, TCF_WGMMA, TC_C, tc, &fd);
    tc_fragment(w->tg, TCF_WGMMA, TC_A, tc, &fa);   /* 0 (unused) when A is a descriptor */
    FBase bd, ba;
    fbase(w, &fd, &bd);
    fbase(w, &fa, &ba);
    for (int slab = 0; slab < d.rows / 64; slab++)
        for (int ks = 0; ks < K / k; ks++)
            for (int n0 = 0; n0 < d.cols; n0 += nchunk) {
                NodeId ops[300];   /* copied into the kernel's lists by irb_stmt */
                uint32_t no = 0;
                if (!a_regs)
                    ops[no++] = wg_desc(w, &as, &ga, irb_i32(b, 64 * slab), irb_i32(b, k * ks));
                ops[no++] = wg_desc(w, &bs, &gb, irb_i32(b, k * ks), irb_i32(b, n0));
                if (!operands(w, &d, &bd, 64 * slab, n0, ops, &no) ||
                    (a_regs && !operands(w, &areg, &ba, 64 * slab, k * ks, ops, &no))) {
                    dist_error(w, s, "wgmma operands whose fragments do not line up with the instruction");
                    return;
                }
                if (pass_planted("distribute-frag")) { /* test-only: a wrong fragment index */
                    uint32_t d0 = a_regs ? 1 : 2;
                    NodeId x = ops[d0];
                    ops[d0] = ops[d0 + 1];
                    ops[d0 + 1] = x;
                }
                NodeId m = irb_stmt(b, fam->lowered, ops, no);
                tc.fresh = (uint8_t)(n->sub == 1 && ks == 0); /* `acc = a * b`: the first k-step overwrites */
                lw_node(w, m)->v.i = ir_tc_pack(tc);
                irb_push(b, out, m);
            }
}

/* ---- MFMA ------------------------------------------------------------------------ */

/* mfma D += A * B: the instruction is the accumulator's MFMA atom (m x m, ir/layout:
 * 32 when both dims are multiples of 32, else 16) with K the A atom's columns (16-bit:
 * 8 for 32x32, 16 for 16x16; f32: 2 or 4); one @mfma per (k-step, row block, column
 * block), k-step outermost, so consecutive instructions use different accumulators */
static void dist_mfma(Lw *w, NodeId s, IrList *out)
{
    IrB *b = &w->b;
    Node *n = lw_node(w, s);
    FView d, a, bb;
    if (!dist_view(w, n->a, &d) || !dist_view(w, n->b, &a) || !dist_view(w, n->c, &bb)) {
        dist_error(w, s, "mfma operands that are not register tile views");
        return;
    }
    const TcFamilyInfo *fam = tc_family(TCF_MFMA);
    DType ab = a.f->ly.dtype, acc = d.f->ly.dtype;
    int m, m2, am, k, bk, bn;
    if (!ly_atom(&d.f->ly, &m, &m2) || !ly_atom(&a.f->ly, &am, &k) || !ly_atom(&bb.f->ly, &bk, &bn) ||
        m != m2 || am != m || bn != m || bk != k) {
        dist_error(w, s, "mfma operands whose MFMA atoms differ (the accumulator's rows and columns, "
                         "A's rows and B's columns must all be multiples of 32, or all use 16)");
        return;
    }
    if (!tg_tc_find(w->tg, OP_MFMA, m, m, k, ab, acc)) {
        char have[256];
        tg_tc_describe(w->tg, OP_MFMA, ab, have, sizeof have);
        dist_error(w, s, ir_fmt(b->ctx, "an MFMA %dx%dx%d %s->%s on %s (it has: %s)", m, m, k,
                                ir_dtypes[ab].spelling, ir_dtypes[acc].spelling, ir_target_names[w->tg],
                                have[0] ? have : "none for these inputs"));
        return;
    }
    IrTc tc = {(uint16_t)m, (uint16_t)m, (uint16_t)k, (uint8_t)ab, (uint8_t)acc, 0, 0, 0, DT_NONE, 0};
    LyTile fd, fa, fb;
    tc_fragment(w->tg, TCF_MFMA, TC_C, tc, &fd);
    tc_fragment(w->tg, TCF_MFMA, TC_A, tc, &fa);
    tc_fragment(w->tg, TCF_MFMA, TC_B, tc, &fb);
    FBase bd, ba, bb_;
    fbase(w, &fd, &bd);
    fbase(w, &fa, &ba);
    fbase(w, &fb, &bb_);
    for (int ki = 0; ki < a.cols / k; ki++)
        for (int mi = 0; mi < d.rows / m; mi++)
            for (int ni = 0; ni < d.cols / m; ni++) {
                NodeId ops[64];
                uint32_t no = 0;
                if (!operands(w, &d, &bd, m * mi, m * ni, ops, &no) ||
                    !operands(w, &a, &ba, m * mi, k * ki, ops, &no) ||
                    !operands(w, &bb, &bb_, k * ki, m * ni, ops, &no)) {
                    dist_error(w, s, "mfma operands whose fragments do not line up with the instruction");
                    return;
                }
                if (pass_planted("distribute-frag")) { /* test-only: a wrong fragment index */
                    NodeId x0 = ops[0];
                    ops[0] = ops[1];
                    ops[1] = x0;
                }
                NodeId x = irb_stmt(b, fam->lowered, ops, no);
                lw_node(w, x)->v.i = ir_tc_pack(tc);
                irb_push(b, out, x);
            }
}

const DistTcFn dist_tc[TCF__COUNT] = {
    [TCF_MMA_SYNC] = dist_mma,
    [TCF_WGMMA] = dist_wgmma,
    [TCF_MFMA] = dist_mfma,
};

/* ---- ldmatrix / stmatrix ----------------------------------------------------------- */

/* which logical dim of the layout varies with g = lane / 4 (the 8 rows of an
 * 8x8 matrix) and which with t = lane % 4 (the register's element pair) */
static void matrix_dims(const LyTile *t, int *gdim, int *pdim)
{
    LyThreadPart p;
    ly_thread_part(t, &p);
    *gdim = 0;
    *pdim = 1;
    for (int i = 0; i < p.ncol; i++)
        if (p.col[i].div == 4)
            *gdim = 1, *pdim = 0;
}

/* lane's row address within a group of nreg registers whose matrices start
 * at origins org[m] (view coords); `row_dim` is the dim along which the 8
 * stored rows of a matrix advance */
static NodeId lane_row_ref(Lw *w, const LwView *sv, const LyTile *lt, const int org[][2], int nreg,
                           int row_dim)
{
    IrB *b = &w->b;
    int warp = tg_warp(w->tg);
    NodeId lane = irb_divmod_c(b, irb_special(b, SR_THREAD_X), 1, warp);
    NodeId m = irb_divmod_c(b, lane, 8, nreg);
    NodeId co[2];
    for (int d = 0; d < 2; d++) {
        /* origin(m) as a select chain (folded by LLVM); usually affine in m */
        NodeId x = irb_i32(b, org[nreg - 1][d]);
        for (int i = nreg - 2; i >= 0; i--)
            x = irb_select(b, irb_bin(b, OP_EQ, irb_clone(b, m), irb_i32(b, i)), irb_i32(b, org[i][d]), x);
        co[d] = x;
    }
    co[row_dim] = irb_add(b, co[row_dim], irb_divmod_c(b, irb_clone(b, lane), 1, 8));
    /* the part of the layout's thread part above the lane (wgmma: 16 rows per warp) */
    LyThreadPart tp;
    ly_thread_part(lt, &tp);
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < (d ? tp.ncol : tp.nrow); i++) {
            LyTerm t = d ? tp.col[i] : tp.row[i];
            if (t.div >= warp)
                co[d] = irb_add(b, co[d], irb_mul_c(b, irb_divmod_c(b, irb_special(b, SR_THREAD_X), t.div, t.mod), t.coef));
        }
    NodeId rel[2] = {co[0], co[1]};
    if (sv->transposed) {
        rel[0] = co[1];
        rel[1] = co[0];
    }
    return lw_saddr(w, lw_elem_ref(w, sv, rel), 0);
}

/* the registers (element pairs) of a 16-bit fragment view, in canonical order */
static int registers(const LyTile *lv, int org[][2], int max)
{
    int ne = ly_elems(lv), n = 0;
    for (int e = 0; e + 1 < ne && n < max; e += 2, n++)
        ly_elem_base(lv, e, &org[n][0], &org[n][1]);
    return n;
}

/* how the registers of a 16-bit fragment view map onto 8x8 matrices of a shared
 * view: transposed or not, the dim the stored rows advance along, the registers */
typedef struct {
    int pdim;         /* the dim of a register's element pair */
    int trans;        /* .trans: the pair runs across stored rows */
    int row_dim;      /* the dim along which a matrix's 8 stored rows advance */
    int nreg;
    int (*org)[2];    /* each register's first element (view coords) */
} MatPlan;

static void mat_plan(Lw *w, const LwView *sv, const LyTile *lv, MatPlan *p)
{
    int gdim;
    matrix_dims(lv, &gdim, &p->pdim);
    int contiguous = sv->transposed ? 0 : 1;  /* the logical dim contiguous in memory */
    p->trans = p->pdim != contiguous;
    p->row_dim = p->trans ? p->pdim : gdim;
    p->org = arena_alloc(&w->b.ctx->arena, 512 * sizeof *p->org);
    p->nreg = registers(lv, p->org, 512);
}

/* registers per instruction from g0 on: 4, else 2, else 1 */
static int mat_count(const MatPlan *p, int g0)
{
    return p->nreg - g0 >= 4 ? 4 : p->nreg - g0 >= 2 ? 2 : 1;
}

/* the value of the fragment element at view coords (r, c), or 0 */
typedef NodeId (*MatElemFn)(Lw *w, const void *src, int r, int c);

/* one ldmatrix/stmatrix (op) per group of up to 4 registers: operands are the
 * lane's row address, then the element pairs elem() gives; 0 when one is missing */
static int mat_emit(Lw *w, const LwView *sv, const LyTile *lv, int op, MatElemFn elem, const void *src,
                    IrList *out)
{
    IrB *b = &w->b;
    MatPlan p;
    mat_plan(w, sv, lv, &p);
    for (int g0 = 0; g0 < p.nreg;) {
        int cnt = mat_count(&p, g0);
        NodeId ops[1 + 8];
        uint32_t no = 0;
        ops[no++] = lane_row_ref(w, sv, lv, (const int (*)[2])&p.org[g0], cnt, p.row_dim);
        for (int g = g0; g < g0 + cnt; g++)
            for (int h = 0; h < 2; h++) {
                int r = p.org[g][0] + (p.pdim == 1 ? 0 : h);
                int c = p.org[g][1] + (p.pdim == 1 ? h : 0);
                if (!(ops[no++] = elem(w, src, r, c)))
                    return 0;
            }
        NodeId st = irb_stmt(b, (Op)op, ops, no);
        lw_node(w, st)->sub = (uint16_t)cnt;
        lw_node(w, st)->v.i = p.trans;
        irb_push(b, out, st);
        g0 += cnt;
    }
    return 1;
}

static NodeId ld_elem(Lw *w, const void *src, int r, int c)
{
    return dist_at(w, (const FView *)src, r, c);
}

/* stmatrix stores the tile's element type (an fp32 accumulator narrows) */
static NodeId st_elem(Lw *w, const void *src, int r, int c)
{
    NodeId tile = *(const NodeId *)src;
    NodeId x = dist_elem(w, tile, r, c);
    return x ? irb_cast(&w->b, x, (DType)irb_type(&w->b, tile)->dtype, 1) : 0;
}

void dist_ldmatrix(Lw *w, NodeId s, NodeId dst, NodeId call, IrList *out)
{
    IrB *b = &w->b;
    FView v;
    LwView sv;
    Node *c = lw_node(w, call);
    if (!dist_view(w, dst, &v) || !lw_view(w, ir_list_at(b->k, c, 0), &sv) || ir_dtype_bytes(v.f->ly.dtype) != 2) {
        dist_error(w, s, "ldmatrix into this tile (a 16-bit mma_a, mma_b or wgmma_a view from a shared view)");
        return;
    }
    LyTile lv = v.f->ly;
    lv.rows = v.rows;
    lv.cols = v.cols;
    if (!mat_emit(w, &sv, &lv, OP_L_LDMATRIX, ld_elem, &v, out))
        dist_error(w, s, "ldmatrix into a view that does not line up with 8x8 matrices");
}

void dist_stmatrix(Lw *w, NodeId s, IrList *out)
{
    IrB *b = &w->b;
    Node *n = lw_node(w, s);
    LwView sv;
    if (!lw_view(w, n->a, &sv) || !dist_is_frag_type(w, n->b)) {
        dist_error(w, s, "stmatrix from this value (a 16-bit mma or wgmma tile into a shared view)");
        return;
    }
    Dist *d = w->user;
    IrList pre = {0};
    d->pre = &pre;
    d->nreds = 0;
    d->imp_r = d->imp_c = 0;
    LyTile lv = dist_ly_of(w, n->b);
    IrList body = {0};
    if (!mat_emit(w, &sv, &lv, OP_L_STMATRIX, st_elem, &n->b, &body)) {
        dist_error(w, s, "this stmatrix value");
        return;
    }
    for (uint32_t i = 0; i < pre.n; i++)
        irb_push(b, out, pre.v[i]);
    for (uint32_t i = 0; i < body.n; i++)
        irb_push(b, out, body.v[i]);
}
