/* unroll.c — the unroll pass: a fully unrolled loop (`for i in a .. b unroll`)
 * over tile statements is unrolled here, not left to LLVM, so that the
 * fragment slices and shared views it indexes with `i` become constants the
 * distribute pass can resolve (docs/tir.md §10.1: full unrolling is what makes
 * fragment slices compile-time). Each iteration is a copy of the body with
 * `i` replaced by its value and fresh copies of the body's declarations.
 * Other loops (SIMT code) keep their unroll request for LLVM. */
#include "lower.h"
#include "tcfamily.h"

/* does the subtree hold a tile operation (register tiles, tensor cores, ...)? */
static int tiled(Lw *w, NodeId id, int depth)
{
    Kernel *k = w->b.k;
    if (!id || depth > 400)
        return 0;
    Node *n = &k->nodes[id];
    if (tc_is_source((Op)n->op))
        return 1;
    switch ((Op)n->op) {
    case OP_STMATRIX: case OP_LDMATRIX: case OP_LDMATRIX_T:
    case OP_TMA_LOAD: case OP_TMA_STORE:
        return 1;
    default:
        break;
    }
    const Type *t = irb_type(&w->b, id);
    if (t->kind == TK_TILE && t->space == SP_REG && t->layout != LY_NONE)
        return 1;
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        if (tiled(w, kids[i], depth + 1))
            return 1;
    for (uint32_t i = 0; i < n->n; i++)
        if (tiled(w, k->lists[n->list + i], depth + 1))
            return 1;
    return 0;
}

static void stmt(Lw *w, NodeId s, IrList *out)
{
    IrB *b = &w->b;
    Node *n = lw_node(w, s);
    int64_t lo, hi, step = 1;
    if (n->op != OP_FOR || n->v.attr.unroll != 255 || !lw_const(w, n->a, &lo) || !lw_const(w, n->b, &hi) ||
        (n->c && !lw_const(w, n->c, &step)) || step <= 0 || (hi - lo + step - 1) / step > 1024 ||
        !tiled(w, n->d, 0)) {
        irb_push(b, out, s);
        return;
    }
    DType dt = irb_dtype(b, s);
    if (!dt)
        dt = DT_I32;
    NodeId body = n->d;
    IrList iters = {0};
    for (int64_t i = lo; i < hi; i += step) {
        irb_map(b, s, irb_int(b, i, dt));
        irb_push(b, &iters, irb_clone(b, body));
    }
    irb_map(b, s, 0);
    irb_push(b, out, irb_list_block(b, &iters));
}

uint32_t pass_unroll(CakeCtx *ctx, Kernel *k, Target tg)
{
    Lw w;
    lw_init(&w, ctx, k, tg, NULL);
    lw_rewrite(&w, k->body, stmt);
    return w.errors;
}
