/* lcheck.c — the checker of the lowered level. Run after every lowering pass
 * in debug and sanitizer builds, and in tests (pass_lcheck_enabled): each pass promises that the source constructs it lowers
 * are gone, and every lowered op must be well formed. A violation is a
 * compiler bug (ir_bug: exit 2, naming the pass), never a user error. */
#include <stdlib.h>
#include <string.h>
#include "passes.h"
#include "build.h"
#include "targets.h"

typedef struct {
    CakeCtx *ctx;
    Kernel *k;
    const char *pass;
    Target tg;      /* the target being lowered for (warp width, family scopes) */
    int stage;      /* how far the lowering got: LC_* */
} LCheck;

enum { LC_UNROLL, LC_PIPES, LC_ASYNC, LC_DISTRIBUTE, LC_ROLES, LC_ABI };

static const char *const stage_names[] = {"unroll", "pipes", "async", "distribute", "roles", "abi"};

static void bad(LCheck *c, NodeId id, const char *what)
{
    ir_bug(c->ctx, "lowered IR after pass '%s': node %u (%s): %s", c->pass, id,
           ir_ops[c->k->nodes[id].op].name, what);
}

static int frag_type(const Kernel *k, NodeId id)
{
    TypeId t = k->nodes[id].type;
    return t && t < k->ntypes && k->types[t].kind == TK_TILE && k->types[t].space == SP_REG &&
           k->types[t].layout != LY_NONE;
}

/* the lcheck hook of every tensor-core family, read from its row: one
 * operand per element of the register fragments (m*n / T of C, m*k / T of A,
 * k*n / T of B over the T threads of the family's scope), one descriptor per
 * shared operand. Checked where every element is one operand: 16-bit A/B or
 * an f32 accumulator. */
static void tc_operands(LCheck *c, NodeId id, const Node *n, TcFamily fam)
{
    const TcFamilyInfo *f = tc_family(fam);
    IrTc t = ir_tc_unpack(n->v.i);
    uint32_t T = (uint32_t)tg_tc_scope_threads(c->tg, fam);
    int a_reg = f->a_src == TCO_REG || (f->a_src == TCO_REG_OR_SMEM && t.a_regs);
    int b_reg = f->b_src == TCO_REG;
    uint32_t need = t.m * t.n / T + (a_reg ? t.m * t.k / T : 1) + (b_reg ? t.k * t.n / T : 1);
    int checked = fam == TCF_WGMMA ? t.acc == DT_F32 : ir_dtype_bytes((DType)t.ab) == 2;
    if (checked && n->n != need)
        bad(c, id, ir_fmt(c->ctx, "%s operand count does not match its shape", f->name));
}

static void lowered(LCheck *c, NodeId id, const Node *n)
{
    int want = ir_ops[n->op].nargs;
    if (want >= 0 && n->n != (uint32_t)want)
        bad(c, id, "wrong operand count");
    TcFamily fam = tc_family_of((Op)n->op);
    if (fam && n->op == tc_family(fam)->lowered)
        tc_operands(c, id, n, fam);
    if (n->op == OP_L_LDMATRIX || n->op == OP_L_STMATRIX) {
        if ((n->sub != 1 && n->sub != 2 && n->sub != 4) || n->n != 1u + 2u * n->sub)
            bad(c, id, "ldmatrix/stmatrix with a wrong matrix count");
    }
    if (!(ir_ops[n->op].flags & OF_LSTMT) && !n->type)
        bad(c, id, "a lowered expression without a type");
}

/* the operands an op cannot do without */
static int structured(const Node *n)
{
    switch (ir_ops[n->op].cls) {
    case OC_BIN: case OC_SLICE: return n->a && n->b;
    case OC_UN: case OC_CAST: return n->a != 0;
    default: break;
    }
    switch ((Op)n->op) {
    case OP_INDEX: case OP_TRANS: case OP_LET: return n->a || n->op == OP_LET ? (n->op != OP_LET || n->b) : 0;
    case OP_ASSIGN: case OP_STORE: case OP_IF: return n->a && n->b;
    case OP_FOR: return n->a && n->b && n->d;
    default: return 1;
    }
}

static void walk(LCheck *c, NodeId id, int depth)
{
    Kernel *k = c->k;
    if (!id)
        return;
    if (id >= k->nnodes)
        ir_bug(c->ctx, "lowered IR after pass '%s': node id %u out of range", c->pass, id);
    if (depth > 4096)
        return;
    Node *n = &k->nodes[id];
    if (n->op >= OP__COUNT)
        bad(c, id, "unknown op");
    if (n->op == OP_REFERENCE)
        return;
    Op op = (Op)n->op;
    if (c->stage >= LC_PIPES && (ir_ops[op].cls == OC_PIPE || op == OP_PIPELINE || op == OP_MB_ARRIVE ||
                                 op == OP_MB_EXPECT || op == OP_MB_WAIT))
        bad(c, id, "a pipeline or mbarrier statement survived the pipes pass");
    if (c->stage >= LC_ASYNC && (op == OP_TMA_LOAD || op == OP_TMA_STORE || op == OP_TMA_WAIT ||
                                 op == OP_WGMMA_WAIT))
        bad(c, id, "a TMA or wgmma.wait statement survived the async pass");
    if (c->stage >= LC_DISTRIBUTE && !(n->flags & NF_ERROR) &&
        ((tc_family_of(op) && op == tc_family(tc_family_of(op))->op) || op == OP_STMATRIX ||
         op == OP_LDMATRIX || frag_type(k, id)))
        bad(c, id, "a tile operation survived the distribute pass");
    if (c->stage >= LC_ROLES && op == OP_ROLE)
        bad(c, id, "a role survived the roles pass");
    if (ir_ops[op].cls == OC_LOW)
        lowered(c, id, n);
    if (!structured(n))
        bad(c, id, "a required operand is missing (a pass wrote through a stale node pointer?)");
    if (op == OP_MBARRIER && (!n->b || k->nodes[n->b].op != OP_INT || k->nodes[n->b].v.i < 1 ||
                              (n->a && k->nodes[n->a].op != OP_INT)))
        bad(c, id, "an mbarrier whose length or arrival count is not a positive literal");
    NodeId kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        walk(c, kids[i], depth + 1);
    for (uint32_t i = 0; i < n->n; i++)
        walk(c, k->lists[n->list + i], depth + 1);
}

/* on in debug and sanitizer builds (CAKE_DEBUG_CHECKS), with CAKE_LCHECK=1 in
 * the environment (the test scripts set it), or through CakeCtx.lcheck;
 * CAKE_LCHECK=0 turns it off */
int pass_lcheck_enabled(const CakeCtx *ctx)
{
    const char *e = getenv("CAKE_LCHECK");
    if (e && *e)
        return strcmp(e, "0") != 0;
#ifdef CAKE_DEBUG_CHECKS
    return 1;
#else
    return ctx->lcheck;
#endif
}

void pass_lcheck(CakeCtx *ctx, Kernel *k, Target tg, const char *pass)
{
    if (!pass_lcheck_enabled(ctx) || ctx->nerrors)
        return;
    LCheck c = {ctx, k, pass, tg, -1};
    for (int i = 0; i < (int)(sizeof stage_names / sizeof *stage_names); i++)
        if (!strcmp(pass, stage_names[i]))
            c.stage = i;
    walk(&c, k->body, 0);
    if (c.stage == LC_ABI && !k->plan)
        ir_bug(ctx, "lowered IR after pass 'abi': no launch plan");
}
