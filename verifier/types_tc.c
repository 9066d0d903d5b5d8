/* types_tc.c — the type check of tensor-core and tile operations (part of
 * types.c's pass): mma / wgmma / mfma operand shapes, dtypes and layouts,
 * ldmatrix and stmatrix. */
#include "types_priv.h"
#include "layout.h"
#include "tcfamily.h"

static void wgmma_layout(Ver *v, NodeId at, const Type *t, int is_a);

/* ---- tensor cores -------------------------------------------------- */


void ty_tc_stmt(Ver *v, NodeId s)
{
    Node *n = N(v, s);
    TypeId tc = ty_expr(v, n->a), ta = ty_expr(v, n->b), tb = ty_expr(v, n->c);
    if (!tc || !ta || !tb || v_err(v, n->a) || v_err(v, n->b) || v_err(v, n->c))
        return;
    const Type *C = vt(v, tc), *A = vt(v, ta), *B = vt(v, tb);
    Op op = (Op)n->op;
    const TcFamilyInfo *fam = tc_family(tc_family_of(op));
    const char *nm = ir_ops[op].spelling;   /* the source keyword: mma, wgmma, mfma */
    uint8_t acc_ly = fam->c, a_ly = fam->a, b_ly = fam->b;
    NodeId ops3[3] = {n->a, n->b, n->c};
    const Type *ty3[3] = {C, A, B};
    static const char *const role3[3] = {"accumulator", "A operand", "B operand"};
    for (int i = 0; i < 3; i++) {
        if (ty3[i]->kind != TK_TILE || ty3[i]->rank != 2) {
            Diag *d = v_report(v, E0315, ops3[i], "the %s of `%s` must be a 2-D tile, found %s",
                               role3[i], nm, vt_str(v, vt_of(v, ops3[i])));
            v_note_decl(v, d, v_root_decl(v, ops3[i]), NULL);
            return;
        }
    }
    /* operand placement and layouts */
    int ok = 1;
    if (n->sub == 1 && !fam->fresh) {
        Diag *d = v_report(v, E0341, s, "`%s acc = a * b` (D = A * B) needs an instruction that can ignore "
                           "its accumulator; %s always adds to it", nm, fam->name);
        diag_help(v->ctx, d, "clear the accumulator and accumulate: `%s = 0`, then `%s %s += ...`",
                  v_text(v, n->a), nm, v_text(v, n->a));
        ok = 0;
    }
    if (C->space != SP_REG || C->layout != acc_ly || C->transposed) {
        Diag *d = v_report(v, E0317, n->a, "the accumulator of `%s` must be a register tile with "
                           "layout %s, found %s", nm, ir_layout_names[acc_ly], vt_str(v, tc));
        v_note_decl(v, d, v_root_decl(v, n->a), NULL);
        diag_help(v->ctx, d, "declare it `reg %s: f32[M, N] layout %s = 0`", v_text(v, n->a),
                  ir_layout_names[acc_ly]);
        ok = 0;
    }
    if (fam->b_src == TCO_SMEM_DESC) {   /* wgmma */
        if (!(A->space == SP_SHARED || (A->space == SP_REG && A->layout == LY_WGMMA_A))) {
            Diag *d = v_report(v, E0317, n->b, "the A operand of `wgmma` must be a shared tile or a "
                               "register tile with layout wgmma_a, found %s", vt_str(v, ta));
            v_note_decl(v, d, v_root_decl(v, n->b), NULL);
            ok = 0;
        }
        if (B->space != SP_SHARED) {
            Diag *d = v_report(v, E0317, n->c, "the B operand of `wgmma` must be in shared memory, "
                               "found %s", vt_str(v, tb));
            v_note_decl(v, d, v_root_decl(v, n->c), NULL);
            ok = 0;
        }
    } else {
        if (A->space != SP_REG || A->layout != a_ly) {
            Diag *d = v_report(v, E0317, n->b, "the A operand of `%s` must be a register fragment "
                               "with layout %s, found %s", nm, ir_layout_names[a_ly], vt_str(v, ta));
            v_note_decl(v, d, v_root_decl(v, n->b), NULL);
            if (A->space == SP_SHARED && op == OP_MMA)
                diag_help(v->ctx, d, "load it first: `reg a: %s[..] layout mma_a` and `a = ldmatrix(%s)`",
                          ir_dtypes[A->dtype].spelling, v_text(v, n->b));
            ok = 0;
        }
        if (B->space != SP_REG || B->layout != b_ly) {
            Diag *d = v_report(v, E0317, n->c, "the B operand of `%s` must be a register fragment "
                               "with layout %s, found %s", nm, ir_layout_names[b_ly], vt_str(v, tb));
            v_note_decl(v, d, v_root_decl(v, n->c), NULL);
            ok = 0;
        }
    }
    if (op == OP_WGMMA) {
        const char *why = NULL;
        if (!ty_warpgroup_ctx(v, s, &why)) {
            Diag *d = v_report(v, E0318, s, "`wgmma` runs on a whole warpgroup, but %s", why);
            diag_help(v->ctx, d, "issue it from a role of whole warpgroups (`role R: warpgroup N`)");
            ok = 0;
        }
    }
    if (!ok)
        return;
    /* shapes: acc [M, N], A [M, K], B logically [K, N] (B^T of an [N, K] tile) */
    int64_t M = ext(C, 0), Nn = ext(C, 1), Ka = ext(A, 1), Kb = ext(B, 0);
    if (!vt_same_extent(v, C, lx(C, 0), A, lx(A, 0))) {
        Diag *d = v_report(v, E0315, n->b, "`%s`: A has %s rows but the accumulator has %s",
                           nm, ty_ext_str(v, A, 0), ty_ext_str(v, C, 0));
        diag_note(v->ctx, d, v_span(v, n->a), "accumulator is %s", vt_str(v, tc));
        diag_help(v->ctx, d, "A is [M, K], B is [K, N] (or `X^T` of an [N, K] tile), the "
                             "accumulator [M, N]");
        return;
    }
    if (!vt_same_extent(v, C, lx(C, 1), B, lx(B, 1))) {
        Diag *d = v_report(v, E0315, n->c, "`%s`: B has N = %s but the accumulator has N = %s%s", nm,
                           ty_ext_str(v, B, 1), ty_ext_str(v, C, 1),
                           !B->transposed && vt_same_extent(v, C, lx(C, 1), B, 0)
                               ? " (B looks like [N, K]: transpose it)" : "");
        diag_note(v->ctx, d, v_span(v, n->a), "accumulator is %s", vt_str(v, tc));
        if (!B->transposed && vt_same_extent(v, C, lx(C, 1), B, 0)) {
            diag_help(v->ctx, d, "write `%s^T`", v_text(v, n->c));
            diag_fixit(v->ctx, d, v_span(v, n->c), ir_fmt(v->ctx, "%s^T", v_source(v, n->c)));
        } else {
            diag_help(v->ctx, d, "B is [K, N], or `X^T` of an [N, K] tile");
        }
        return;
    }
    if (!vt_same_extent(v, A, lx(A, 1), B, lx(B, 0))) {
        Diag *d = v_report(v, E0315, n->c, "`%s`: A has K = %s but B has K = %s", nm,
                           ty_ext_str(v, A, 1), ty_ext_str(v, B, 0));
        diag_note(v->ctx, d, v_span(v, n->b), "A is %s", vt_str(v, ta));
        return;
    }
    (void)Ka;
    (void)Kb;
    /* dtypes: A and B agree; the accumulator is f32/f16/i32/f64 */
    int fp8_mix = (A->dtype == DT_E4M3 || A->dtype == DT_E5M2) && (B->dtype == DT_E4M3 || B->dtype == DT_E5M2);
    if (A->dtype != B->dtype && !fp8_mix) {
        Diag *d = v_report(v, E0316, s, "`%s` operands differ: A is %s, B is %s", nm,
                           ir_dtypes[A->dtype].spelling, ir_dtypes[B->dtype].spelling);
        diag_note(v->ctx, d, v_span(v, n->b), "A is %s", vt_str(v, ta));
        diag_note(v->ctx, d, v_span(v, n->c), "B is %s", vt_str(v, tb));
        return;
    }
    DType acc = (DType)C->dtype, ab = (DType)A->dtype;
    int acc_ok = acc == DT_F32 || acc == DT_F16 || acc == DT_I32 || acc == DT_F64;
    int int_ab = vt_is_int_dt(ab);
    if (!acc_ok || (int_ab != (acc == DT_I32)) || (ab == DT_F64) != (acc == DT_F64) ||
        (acc == DT_F16 && ab != DT_F16 && ab != DT_E4M3 && ab != DT_E5M2)) {
        Diag *d = v_report(v, E0316, n->a, "`%s` with %s inputs cannot accumulate into %s", nm,
                           ir_dtypes[ab].spelling, ir_dtypes[acc].spelling);
        v_note_decl(v, d, v_root_decl(v, n->a), NULL);
        diag_help(v->ctx, d, "accumulate %s inputs in %s", ir_dtypes[ab].spelling,
                  int_ab ? "i32" : ab == DT_F64 ? "f64" : "f32");
        return;
    }
    /* wgmma: 64 rows per warpgroup; N = 8..256; K-major operands for non-16-bit types */
    if (op == OP_WGMMA) {
        if (M > 0 && M % 64) {
            Diag *d = v_report(v, E0315, n->a, "`wgmma` computes 64 rows per instruction; the "
                               "accumulator has %lld", (long long)M);
            diag_help(v->ctx, d, "give each warpgroup [64, N] (or [64·a, N])");
            return;
        }
        if (Nn > 0 && (Nn % 8 || Nn > 256)) {
            v_report(v, E0315, n->a, "`wgmma` has N = 8..256 in steps of 8; the accumulator has "
                     "N = %lld", (long long)Nn);
            return;
        }
        if (ir_dtypes[ab].bits != 16 && A->space == SP_SHARED && A->transposed) {
            v_report(v, E0317, n->b, "`wgmma` with %s reads A K-major only: give an [M, K] tile, "
                     "not a transposed one", ir_dtypes[ab].spelling);
            return;
        }
        if (ir_dtypes[ab].bits != 16 && !B->transposed) {
            Diag *d = v_report(v, E0317, n->c, "`wgmma` with %s reads B K-major only: give `X^T` "
                               "of an [N, K] tile", ir_dtypes[ab].spelling);
            (void)d;
            return;
        }
        wgmma_layout(v, n->b, A, 1);
        wgmma_layout(v, n->c, B, 0);
    }
}

/* A shared wgmma operand's layout is one the descriptor can describe (ir/layout's
 * ly_wgmma_operand, the rules code generation uses): a 32-, 64- or 128-byte
 * swizzle whose span divides the rows, 16-bit types for MN-major operands,
 * whole 8-row groups. E0339 with the layout's reason and the swizzle to declare. */
static void wgmma_layout(Ver *v, NodeId at, const Type *t, int is_a)
{
    if (t->space != SP_SHARED || t->rank < 2 || t->rank > IR_MAX_RANK)
        return;
    int64_t dims[IR_MAX_RANK], origin[IR_MAX_RANK] = {0}; /* the stored matrix (X of X^T) */
    for (int i = 0; i < t->rank; i++) {
        if (t->shape[i] <= 0)
            return;
        dims[i] = t->shape[i];
    }
    int kmajor = is_a ? !t->transposed : t->transposed;
    int mn = (int)(kmajor ? dims[t->rank - 2] : dims[t->rank - 1]);
    LyDescGeom g;
    char why[200];
    if (ly_wgmma_operand(dims, t->rank, (DType)t->dtype, t->swizzle, !kmajor, origin, mn, &g, why, sizeof why))
        return;
    NodeId decl = v_root_decl(v, at);
    Diag *d = v_report(v, E0339, at, "`wgmma` cannot read its %s operand from this shared tile: %s",
                       is_a ? "A" : "B", why);
    if (!d)
        return;
    v_note_decl(v, d, decl, NULL);
    int64_t row = dims[t->rank - 1] * (ir_dtypes[t->dtype].bits / 8);
    int sw = row % 128 == 0 ? 128 : row % 64 == 0 ? 64 : row % 32 == 0 ? 32 : 0;
    if (sw && t->swizzle != sw)
        diag_help(v->ctx, d, "declare the tile `swizzle %d` (its rows are %lld bytes); the TMA copies into it "
                  "take the tile's swizzle", sw, (long long)row);
    else if (!sw)
        diag_help(v->ctx, d, "make the tile's contiguous extent a multiple of 32 bytes (%lld now) and swizzle it",
                  (long long)row);
}

/* `f = ldmatrix(view)`: the target layout decides which dim must be contiguous (7.4) */
void ty_ldmatrix_form(Ver *v, NodeId val, TypeId tdst)
{
    const Node *n = N(v, val);
    if ((n->op != OP_LDMATRIX && n->op != OP_LDMATRIX_T) || n->n != 1)
        return;
    const Type *d = vt(v, tdst);
    NodeId view = arg(v, val, 0);
    int trans_view = T(v, view)->transposed;
    if (d->layout != LY_MMA_A && d->layout != LY_WGMMA_A && d->layout != LY_MMA_B) {
        Diag *dg = v_report(v, E0317, val, "`ldmatrix` fills mma_a, mma_b or wgmma_a fragments; "
                            "the destination is %s", vt_str(v, tdst));
        (void)dg;
        return;
    }
    /* plain ldmatrix needs K contiguous: A [M, K] not transposed, B [K, N] a ^T view */
    int k_contig = d->layout == LY_MMA_B ? trans_view : !trans_view;
    int plain = n->op == OP_LDMATRIX;
    if (plain == k_contig)
        return;
    const char *other = plain ? "ldmatrix.trans" : "ldmatrix";
    Diag *dg = v_report(v, E0336, val, "`%s` into %s layout needs %s contiguous, but `%s` has %s "
                        "contiguous", plain ? "ldmatrix" : "ldmatrix.trans", ir_layout_names[d->layout],
                        plain ? "K" : (d->layout == LY_MMA_B ? "N" : "M"), v_text(v, view),
                        k_contig ? "K" : (d->layout == LY_MMA_B ? "N" : "M"));
    diag_help(v->ctx, dg, "use `%s(%s)`", other, v_text(v, view));
    Span sp = v_span(v, val);
    const SourceFile *f = sp.file < v->ctx->nfiles ? &v->ctx->files[sp.file] : NULL;
    uint32_t len = plain ? 8 : 14;
    if (f && sp.lo + len <= f->len && !strncmp(f->text + sp.lo, plain ? "ldmatrix" : "ldmatrix.trans", len))
        diag_fixit(v->ctx, dg, (Span){sp.file, sp.lo, sp.lo + len}, other);
}

void ty_stmatrix_stmt(Ver *v, NodeId s)
{
    Node *n = N(v, s);
    TypeId td = ty_expr(v, n->a), tv = ty_expr(v, n->b);
    if (!td || !tv || v_err(v, n->a) || v_err(v, n->b))
        return;
    const Type *D = vt(v, td), *V = vt(v, tv);
    if (D->space != SP_SHARED || D->kind != TK_TILE || D->rank != 2) {
        v_report(v, E0324, n->a, "`stmatrix` writes a 2-D shared-memory tile, found %s", vt_str(v, td));
        return;
    }
    if (V->kind != TK_TILE || V->space != SP_REG || V->rank != 2) {
        v_report(v, E0313, n->b, "`stmatrix` stores a 2-D register fragment, found %s", vt_str(v, tv));
        return;
    }
    if (ir_dtypes[V->dtype].bits != 16 || V->dtype != D->dtype) {
        v_report(v, E0313, n->b, "`stmatrix` moves 16-bit elements of the tile's type: the tile "
                 "holds %s, the value is %s", ir_dtypes[D->dtype].spelling, vt_str(v, tv));
        return;
    }
    Type dv = ty_view_value(D);
    if (!ty_same_shape(v, &dv, V) || (D->shape[0] > 0 && D->shape[0] % 8) || (D->shape[1] > 0 && D->shape[1] % 8))
        v_report(v, E0305, n->b, "`stmatrix`: the destination is %s, the value is %s (8x8 blocks)",
                 vt_str(v, td), vt_str(v, tv));
}
