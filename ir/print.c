/* print.c — prints the IR as canonical TIR source, and lowered kernels as
 * TIR-L (docs/tirl.md).
 *
 * TIR output re-parses to the same IR, and printing that again gives the
 * same text (the round trip of tests/roundtrip/); TIR-L (@ops, the plan as
 * comments) is for reading only. Parentheses are derived
 * from precedence (the levels of frontend/parser_expr.c), NF_PAREN is not
 * consulted: the minimal set is a fixed point. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir.h"

typedef struct {
    const CakeCtx *ctx;
    const Kernel *k;
    FILE *out;
    int indent;
} Printer;

enum { PREC_TOP = 0, PREC_UNARY = 11, PREC_POW = 12, PREC_LOAD = 13, PREC_POSTFIX = 14 };

static int bin_prec(Op op)
{
    switch (op) {
    case OP_OR: return 1;
    case OP_AND: return 2;
    case OP_BOR: return 3;
    case OP_BXOR: return 4;
    case OP_BAND: return 5;
    case OP_EQ: case OP_NE: return 6;
    case OP_LT: case OP_LE: case OP_GT: case OP_GE: return 7;
    case OP_SHL: case OP_SHR: return 8;
    case OP_ADD: case OP_SUB: return 9;
    case OP_MUL: case OP_DIV: case OP_MOD: return 10;
    case OP_POW: return PREC_POW;
    default: return 0;
    }
}

static int prec_of(const Node *n)
{
    if (n->op == OP_POW)
        return PREC_POW;
    if (ir_ops[n->op].cls == OC_BIN)
        return bin_prec((Op)n->op);
    if (n->op == OP_NEG || n->op == OP_NOT)
        return PREC_UNARY;
    if (n->op == OP_LOAD)
        return n->b ? PREC_TOP : n->sub ? PREC_POSTFIX : PREC_LOAD;   /* sub: atomic.add(..) */
    return PREC_POSTFIX;
}

static void expr(Printer *p, NodeId id, int need);

static const char *sym(Printer *p, Sym s)
{
    const char *str = ir_symstr(p->ctx, s);
    return str[0] ? str : "<?>";
}

static void print_float(FILE *out, double f)
{
    if (isnan(f)) {
        fputs("nan", out);
        return;
    }
    if (isinf(f)) {
        fputs(f < 0 ? "-inf" : "inf", out);
        return;
    }
    char buf[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, f);
        if (strtod(buf, NULL) == f)
            break;
    }
    fputs(buf, out);
    if (!strpbrk(buf, ".eEn"))
        fputs(".0", out);
}

static void dtype(Printer *p, uint8_t dt, uint8_t lanes)
{
    fputs(dt < DT__COUNT && dt ? ir_dtypes[dt].spelling : "<?>", p->out);
    if (lanes > 1)
        fprintf(p->out, "x%u", lanes);
}

/* comma-separated list items [from, to) of node n */
static void items(Printer *p, const Node *n, uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; i++) {
        if (i > from)
            fputs(", ", p->out);
        expr(p, ir_list_at(p->k, n, i), PREC_TOP);
    }
}

static void call(Printer *p, const char *name, const Node *n)
{
    fprintf(p->out, "%s(", name);
    items(p, n, 0, n->n);
    fputc(')', p->out);
}

/* a TIR-L op: @spelling.attributes(operands) */
static void lowered(Printer *p, const Node *n)
{
    FILE *out = p->out;
    fprintf(out, "@%s", ir_ops[n->op].spelling);
    switch ((Op)n->op) {
    case OP_L_MMA: case OP_L_WGMMA: case OP_L_MFMA: {
        IrTc t = ir_tc_unpack(n->v.i);
        fprintf(out, ".m%un%uk%u.%s.%s", t.m, t.n, t.k, ir_dtypes[t.acc].spelling,
                ir_dtypes[t.ab].spelling);
        if (t.b_dt)
            fprintf(out, ".%s", ir_dtypes[t.b_dt].spelling);
        if (t.a_regs)
            fputs(".areg", out);
        if (t.tnsp_a)
            fputs(".ta", out);
        if (t.tnsp_b)
            fputs(".tb", out);
        if (t.fresh)
            fputs(".fresh", out);
        break;
    }
    case OP_L_LDMATRIX: case OP_L_STMATRIX:
        fprintf(out, ".x%u%s", n->sub, n->v.i ? ".trans" : "");
        break;
    case OP_L_LANE:
        fprintf(out, ".%lld", (long long)n->v.i);
        break;
    case OP_L_SETMAXNREG:
        fprintf(out, ".%s.%lld", n->sub ? "inc" : "dec", (long long)n->v.i);
        break;
    case OP_L_SADDR:
        if (n->sub)
            fputs(".raw", out);
        break;
    case OP_L_TMA_STORE:
        if (n->sub)
            fputs(".add", out);
        break;
    case OP_L_WGDESC:
        fprintf(out, ".lbo%lld.sbo%lld.sw%lld", (long long)(n->v.i & 0xfffff),
                (long long)(n->v.i >> 20 & 0xfffff), (long long)(n->v.i >> 40));
        break;
    case OP_L_TMAP:
        fprintf(out, " %s = ", sym(p, n->name));
        expr(p, n->a, PREC_POSTFIX);
        fprintf(out, " box [");
        items(p, n, 0, n->n);
        fprintf(out, "] swizzle %u", n->v.attr.swizzle);
        return;
    default:
        break;
    }
    fputc('(', out);
    items(p, n, 0, n->n);
    fputc(')', out);
}

static void expr_inner(Printer *p, const Node *n)
{
    FILE *out = p->out;
    switch ((Op)n->op) {
    case OP_INT: fprintf(out, "%lld", (long long)n->v.i); return;
    case OP_FLOAT: print_float(out, n->v.f); return;
    case OP_BOOL: fputs(n->v.i ? "true" : "false", out); return;
    case OP_NAME: fputs(sym(p, n->name), out); return;
    case OP_SPECIAL: fputs(n->sub < SR__COUNT ? ir_special_names[n->sub] : "<?>", out); return;
    case OP_COLON: fputc(':', out); return;
    case OP_NEG: case OP_NOT:
        fputc(n->op == OP_NEG ? '-' : '!', out);
        expr(p, n->a, PREC_UNARY);
        return;
    case OP_TRANS:
        expr(p, n->a, PREC_POSTFIX);
        fputs("^T", out);
        return;
    case OP_INDEX:
        expr(p, n->a, PREC_POSTFIX);
        fputc('[', out);
        items(p, n, 0, n->n);
        fputc(']', out);
        return;
    case OP_SLICE:
        expr(p, n->a, PREC_TOP);
        fputs(" : +", out);
        expr(p, n->b, PREC_TOP);
        return;
    case OP_FIELD:
        expr(p, n->a, PREC_POSTFIX);
        fprintf(out, ".%s", sym(p, n->name));
        return;
    case OP_CAST:
        dtype(p, n->dtype, n->lanes);
        fputc('(', out);
        expr(p, n->a, PREC_TOP);
        fputc(')', out);
        return;
    case OP_LOAD:
        if (n->sub) { /* atomic.add(ref, v) / atomic.exch(ref, v) */
            fprintf(out, "%s(", ir_ops[n->sub].spelling);
            expr(p, n->a, PREC_TOP);
            fputs(", ", out);
            expr(p, n->c, PREC_TOP);
            fputc(')', out);
            if (n->b) {
                fputs(" mask ", out);
                expr(p, n->b, PREC_TOP);
            }
            return;
        }
        fputs("load ", out);
        expr(p, n->a, PREC_POSTFIX);
        if (n->dtype) {
            fputs(" as ", out);
            dtype(p, n->dtype, n->lanes);
        }
        if (n->b) {
            fputs(" mask ", out);
            expr(p, n->b, PREC_TOP);
        }
        return;
    case OP_SUM: case OP_RMAX: case OP_RMIN:
        fprintf(out, "%s(%s in ", ir_ops[n->op].spelling, sym(p, n->name));
        expr(p, n->a, PREC_TOP);
        fputs(" .. ", out);
        expr(p, n->b, PREC_TOP);
        fputs(", ", out);
        expr(p, n->c, PREC_TOP);
        fputc(')', out);
        return;
    default: break;
    }
    const OpInfo *info = &ir_ops[n->op];
    if (info->cls == OC_BIN) {
        int prec = prec_of(n);
        int right_assoc = n->op == OP_POW;
        expr(p, n->a, right_assoc ? PREC_LOAD : prec);
        fprintf(out, " %s ", n->op == OP_BXOR ? "~" : info->spelling);
        expr(p, n->b, right_assoc ? PREC_UNARY : prec + 1);
    } else if (info->cls == OC_BUILTIN) {
        call(p, info->spelling, n);
    } else if (info->cls == OC_PIPE) {
        expr(p, n->a, PREC_POSTFIX);
        fputc('.', out);
        call(p, info->spelling, n);
    } else if (info->cls == OC_LOW) {
        lowered(p, n);
    } else {
        fprintf(out, "<%s>", info->name);
    }
}

static void expr(Printer *p, NodeId id, int need)
{
    if (!id || id >= p->k->nnodes) {
        fputs("<?>", p->out);
        return;
    }
    const Node *n = &p->k->nodes[id];
    int paren = prec_of(n) < need;
    if (paren)
        fputc('(', p->out);
    expr_inner(p, n);
    if (paren)
        fputc(')', p->out);
}

void ir_print_expr(const CakeCtx *ctx, const Kernel *k, NodeId e, FILE *out)
{
    Printer p = {ctx, k, out, 0};
    expr(&p, e, PREC_TOP);
}

/* ---- types and declarations ---------------------------------------------- */

static void type(Printer *p, NodeId id)
{
    if (!id) {
        fputs("<?>", p->out);
        return;
    }
    const Node *n = &p->k->nodes[id];
    if (n->op == OP_GTYPE) {
        fputs("global ", p->out);
        dtype(p, n->dtype, n->lanes);
        fputc('[', p->out);
        items(p, n, 0, n->sub);
        fputc(']', p->out);
        if (n->n > n->sub) {
            fputs(" strides [", p->out);
            items(p, n, n->sub, n->n);
            fputc(']', p->out);
        }
        if (n->v.attr.align)
            fprintf(p->out, " align %u", n->v.attr.align);
        if (n->b && n->c) {
            fputs(n->flags & NF_OFFSETS ? " offsets " : " values ", p->out);
            expr(p, n->b, PREC_TOP);
            fputs(" .. ", p->out);
            expr(p, n->c, PREC_TOP);
        }
        if (n->flags & NF_WORKSPACE)
            fputs(" workspace", p->out);
        if (n->d) {
            fputs(" tolerance ", p->out);
            expr(p, n->d, PREC_TOP);
        }
        return;
    }
    dtype(p, n->dtype, n->lanes);
    if (n->n) {
        fputc('[', p->out);
        items(p, n, 0, n->n);
        fputc(']', p->out);
    }
}

static void block(Printer *p, NodeId id);

static void line_start(Printer *p)
{
    for (int i = 0; i < p->indent; i++)
        fputs("  ", p->out);
}

static const char *assign_op(uint16_t sub)
{
    switch (sub) {
    case OP_ADD: return "+=";
    case OP_SUB: return "-=";
    case OP_MUL: return "*=";
    case OP_DIV: return "/=";
    case OP_MAX: return "max=";
    case OP_MIN: return "min=";
    default: return "=";
    }
}

static void decl(Printer *p, const Node *n)
{
    FILE *out = p->out;
    switch ((Op)n->op) {
    case OP_LET: case OP_VAR:
        fprintf(out, "%s %s", n->op == OP_LET ? "let" : "var", sym(p, n->name));
        if (n->a) {
            fputs(": ", out);
            type(p, n->a);
        }
        if (n->b) {
            fputs(" = ", out);
            expr(p, n->b, PREC_TOP);
        }
        return;
    case OP_SHARED:
        fprintf(out, "shared %s: ", sym(p, n->name));
        type(p, n->a);
        if (n->v.attr.swizzle)
            fprintf(out, " swizzle %u", n->v.attr.swizzle);
        if (n->v.attr.align)
            fprintf(out, " align %u", n->v.attr.align);
        return;
    case OP_REG:
        fprintf(out, "reg %s: ", sym(p, n->name));
        type(p, n->a);
        if ((n->flags & NF_HAS_LAYOUT) && n->v.attr.layout < LY__COUNT)
            fprintf(out, " layout %s", ir_layout_names[n->v.attr.layout]);
        if ((n->flags & NF_HAS_SCOPE) && n->v.attr.scope <= SC_BLOCK)
            fprintf(out, " scope %s", ir_scope_names[n->v.attr.scope]);
        if (n->b) {
            fputs(" = ", out);
            expr(p, n->b, PREC_TOP);
        }
        return;
    case OP_MBARRIER:
        fprintf(out, "mbarrier %s", sym(p, n->name));
        if (n->a) {
            fputc('[', out);
            expr(p, n->a, PREC_TOP);
            fputc(']', out);
        }
        fputs(" count ", out);
        expr(p, n->b, PREC_TOP);
        return;
    case OP_PIPELINE:
        fprintf(out, "pipeline %s: ", sym(p, n->name));
        expr(p, n->a, PREC_TOP);
        fputs(" stages from role ", out);
        expr(p, n->b, PREC_TOP);
        fputs(" to role ", out);
        expr(p, n->c, PREC_TOP);
        return;
    case OP_ROLE: {
        int plural = n->b != 0;
        const char *unit = n->sub == UNIT_WARPGROUPS ? (plural ? "warpgroups" : "warpgroup")
                                                     : (plural ? "warps" : "warp");
        fprintf(out, "role %s: %s ", sym(p, n->name), unit);
        expr(p, n->a, PREC_TOP);
        if (n->b) {
            fputs(" .. ", out);
            expr(p, n->b, PREC_TOP);
        }
        if (n->c) {
            fputs(", regs ", out);
            expr(p, n->c, PREC_TOP);
        }
        fputc(' ', out);
        block(p, n->d);
        return;
    }
    default:
        return;
    }
}

/* dst <- src  (and the optional trailer) */
static void move(Printer *p, const Node *n, const char *trailer)
{
    Op op = (Op)n->op;
    if (n->sub && op == OP_STORE)
        op = (Op)n->sub;
    else if (n->sub && op == OP_TMA_STORE)
        op = OP_TMA_STORE_ADD;
    fprintf(p->out, "%s ", ir_ops[op].spelling);
    expr(p, n->a, PREC_POSTFIX);
    fputs(" <- ", p->out);
    /* in a store's value a bare `mask` is the store's: a masked load is parenthesized */
    const Node *v = &p->k->nodes[n->b];
    int wrap = n->op == OP_STORE && v->op == OP_LOAD && v->b;
    expr(p, n->b, wrap ? PREC_POSTFIX + 1 : PREC_TOP);
    if (n->c) {
        fprintf(p->out, " %s ", trailer);
        expr(p, n->c, PREC_TOP);
    }
}

static void if_stmt(Printer *p, const Node *n)
{
    fputs("if ", p->out);
    expr(p, n->a, PREC_TOP);
    fputc(' ', p->out);
    block(p, n->b);
    if (!n->c)
        return;
    fputs(" else ", p->out);
    const Node *e = &p->k->nodes[n->c];
    if (e->op == OP_IF)
        if_stmt(p, e);
    else
        block(p, n->c);
}

static void stmt(Printer *p, NodeId id)
{
    const Node *n = &p->k->nodes[id];
    FILE *out = p->out;
    const char *sp = ir_ops[n->op].spelling;
    switch ((Op)n->op) {
    case OP_REFERENCE: fputs("reference ", out); block(p, n->a); return;
    case OP_ASSIGN:
        expr(p, n->a, PREC_TOP);
        fprintf(out, " %s ", assign_op(n->sub));
        expr(p, n->b, PREC_TOP);
        return;
    case OP_FOR:
        fprintf(out, "for %s in ", sym(p, n->name));
        expr(p, n->a, PREC_TOP);
        fputs(" .. ", out);
        expr(p, n->b, PREC_TOP);
        if (n->c) {
            fputs(" step ", out);
            expr(p, n->c, PREC_TOP);
        }
        if (n->v.attr.unroll == 255)
            fputs(" unroll", out);
        else if (n->v.attr.unroll)
            fprintf(out, " unroll %u", n->v.attr.unroll);
        if (n->flags & NF_NOHOIST)
            fputs(" nohoist", out);
        if (n->flags & NF_FRESH_LOOP)
            fputs(" fresh", out);
        fputc(' ', out);
        block(p, n->d);
        return;
    case OP_IF: if_stmt(p, n); return;
    case OP_BLOCK: block(p, id); return;    /* a nested block (TIR-L: an unrolled iteration) */
    case OP_EXPRSTMT: expr(p, n->a, PREC_TOP); return;
    case OP_STORE: case OP_CP_ASYNC: move(p, n, "mask"); return;
    case OP_TMA_LOAD: move(p, n, "on"); return;
    case OP_TMA_STORE: case OP_STMATRIX: move(p, n, ""); return;
    case OP_CP_COMMIT: case OP_SYNC: case OP_FENCE_PROXY: case OP_FENCE: case OP_FENCE_GPU: case OP_RETURN:
        fputs(sp, out);
        return;
    case OP_CP_WAIT: case OP_TMA_WAIT: case OP_WGMMA_WAIT: case OP_MB_ARRIVE:
        fprintf(out, "%s ", sp);
        expr(p, n->a, PREC_TOP);
        return;
    case OP_BAR_SYNC: case OP_BAR_ARRIVE: case OP_MB_EXPECT: case OP_MB_WAIT:
        fprintf(out, "%s ", sp);
        expr(p, n->a, PREC_TOP);
        fputs(", ", out);
        expr(p, n->b, PREC_TOP);
        return;
    case OP_MMA: case OP_WGMMA: case OP_MFMA:
        fprintf(out, "%s ", sp);
        expr(p, n->a, PREC_TOP);
        fputs(n->sub == 1 ? " = " : " += ", out);
        expr(p, n->b, PREC_UNARY);
        fputs(" * ", out);
        expr(p, n->c, PREC_TOP);
        return;
    default:
        if (ir_ops[n->op].cls == OC_DECL)
            decl(p, n);
        else if (ir_ops[n->op].cls == OC_LOW)
            lowered(p, n);
        else
            fprintf(out, "<%s>", ir_ops[n->op].name);
        return;
    }
}

static void block(Printer *p, NodeId id)
{
    if (!id || id >= p->k->nnodes) {
        fputs("{ <?> }", p->out);
        return;
    }
    const Node *n = &p->k->nodes[id];
    fputs("{\n", p->out);
    p->indent++;
    for (uint32_t i = 0; i < n->n; i++) {
        line_start(p);
        stmt(p, ir_list_at(p->k, n, i));
        fputc('\n', p->out);
    }
    p->indent--;
    line_start(p);
    fputc('}', p->out);
}

/* ---- kernels ------------------------------------------------------------- */

static void header(Printer *p)
{
    const Kernel *k = p->k;
    FILE *out = p->out;
    if (k->ntargets) {
        fputs("  target ", out);
        for (int t = 0, first = 1; t < TG__COUNT; t++)
            if (k->targets[t]) {
                fprintf(out, "%s%s", first ? "" : ", ", ir_target_names[t]);
                first = 0;
            }
        fputc('\n', out);
    }
    for (uint32_t i = 0; i < k->nargs; i++) {
        const Node *a = &k->nodes[k->args[i]];
        fprintf(out, "  arg %s: ", sym(p, a->name));
        type(p, a->a);
        fputc('\n', out);
    }
    if (k->ngrid) {
        fputs("  grid [", out);
        for (uint32_t i = 0; i < k->ngrid; i++) {
            fputs(i ? ", " : "", out);
            expr(p, k->grid[i], PREC_TOP);
        }
        fputs("]\n", out);
    }
    if (k->block_size) {
        static const char *const units[] = {"threads", "warps", "warpgroups"};
        fprintf(out, "  %s ", units[k->block_unit < 3 ? k->block_unit : 0]);
        expr(p, k->block_size, PREC_TOP);
        fputc('\n', out);
    }
    for (uint32_t i = 0; i < k->nassumes; i++) {
        fputs("  assume ", out);
        expr(p, k->assumes[i], PREC_TOP);
        fputc('\n', out);
    }
    if (k->nshapes) {
        fputs("  shape ", out);
        for (uint32_t i = 0; i < k->nshapes; i++)
            fprintf(out, "%s%s = %lld", i ? ", " : "", sym(p, k->shapes[i].name),
                    (long long)k->shapes[i].value);
        fputc('\n', out);
    }
}

/* the launch plan of a lowered kernel, as comments */
static void plan(Printer *p, const KPlan *pl)
{
    FILE *out = p->out;
    fprintf(out, "  # plan: %u threads, %u bytes of shared memory", pl->block_threads, pl->smem_bytes);
    if (pl->maxnreg)
        fprintf(out, ", maxnreg %u", pl->maxnreg);
    fputc('\n', out);
    for (uint32_t i = 0; i < pl->nsmem; i++) {
        const Node *d = &p->k->nodes[pl->smem[i].decl];
        fprintf(out, "  #   smem %-12s offset %6u bytes %6u align %4u\n",
                d->name ? sym(p, d->name) : ir_ops[d->op].spelling, pl->smem[i].offset,
                pl->smem[i].bytes, pl->smem[i].align);
    }
    for (uint32_t i = 0; i < pl->ntmaps; i++) {
        fputs("  #   param ", out);
        lowered(p, &p->k->nodes[pl->tmaps[i]]);
        fputc('\n', out);
    }
}

/* a parameter's values: ` in {0, 1}` or ` in 1 .. 9` (nothing when it has none) */
static void param_values(Printer *p, const Node *n)
{
    if (n->b) {
        fputs(" in ", p->out);
        expr(p, n->b, 8);
        fputs(" .. ", p->out);
        expr(p, n->c, 8);
        return;
    }
    for (uint32_t i = 0; i < n->n; i++) {
        fputs(i ? ", " : " in {", p->out);
        expr(p, ir_list_at(p->k, n, i), 8);
    }
    if (n->n)
        fputc('}', p->out);
}

void ir_print_kernel(const CakeCtx *ctx, const Kernel *k, FILE *out)
{
    Printer p = {ctx, k, out, 0};
    fprintf(out, "kernel %s", sym(&p, k->name));
    if (k->nparams) {
        fputc('<', out);
        for (uint32_t i = 0; i < k->nparams; i++) {
            const Node *n = &k->nodes[k->params[i]];
            fprintf(out, "%s%s = ", i ? ", " : "", sym(&p, n->name));
            expr(&p, n->a, 8);
            param_values(&p, n);
        }
        fputc('>', out);
    }
    fputc('\n', out);
    header(&p);
    if (k->plan)
        plan(&p, k->plan);
    block(&p, k->body);
    fputc('\n', out);
}

void ir_print_module(const CakeCtx *ctx, const Module *m, FILE *out)
{
    for (uint32_t i = 0; i < m->nkernels; i++) {
        if (i)
            fputc('\n', out);
        ir_print_kernel(ctx, m->kernels[i], out);
    }
}
