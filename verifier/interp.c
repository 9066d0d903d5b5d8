/* interp.c — the fp64 reference interpreter (see interp.h).
 *
 * interp_new compiles the reference block once into a compact tree of XNodes
 * (its own array, with every name resolved to a variable slot or an argument
 * index and every operation specialized by kind: int or float), so evaluation
 * is a switch over small structs plus array indexing, with no allocation per
 * element. Implicit indices of `C[m, n] = e` become loops over C's extents.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "interp.h"

enum { K_INT, K_FLT, K_BOOL };

enum {
    X_NONE, X_CONST, X_VAR, X_READ, X_READV, X_EXTENT,
    X_ADD, X_SUB, X_MUL, X_FDIV, X_IDIV, X_FMOD, X_IMOD, X_POW,
    X_SHL, X_SHR, X_BAND, X_BOR, X_BXOR,
    X_LT, X_LE, X_GT, X_GE, X_EQ, X_NE, X_AND, X_OR, X_NEG, X_NOT,
    X_CONV, X_MATH, X_MAX2, X_MIN2, X_ABS, X_FMA, X_CDIV, X_SELECT,
    X_SUM, X_RMAX, X_RMIN,
    /* statements */
    X_SEQ, X_FOR, X_IF, X_SETVAR, X_STORE, X_LOCAL
};

enum { M_EXP, M_EXP2, M_LOG, M_LOG2, M_SQRT, M_RSQRT, M_RCP, M_TANH, M_SIN, M_COS };

typedef struct {
    uint8_t op;      /* X_* */
    uint8_t kind;    /* K_* of the value */
    uint8_t dt;      /* X_CONV / X_SETVAR: target dtype; X_STORE: tensor dtype */
    uint8_t cnt;     /* flops one evaluation of this node adds */
    uint8_t sub;     /* X_MATH: M_*; X_SETVAR/X_STORE: compound X_ op or 0; X_CONV: source kind;
                        X_EXTENT: dim */
    uint32_t a, b, c, d;
    uint32_t slot;   /* variable slot, or tensor index (X_READ, X_STORE, X_EXTENT, X_LOCAL):
                        arguments first, then local arrays */
    uint32_t list, n;
    NodeId src;      /* for diagnostics */
    double v;        /* X_CONST */
} XNode;

struct Interp {
    CakeCtx *ctx;
    const Kernel *k;
    XNode *x; uint32_t nx, capx;
    uint32_t *xl; uint32_t nxl, capxl;
    uint32_t root;
    uint32_t *slot_of;          /* NodeId -> slot + 1 */
    uint8_t *slot_kind; uint8_t *slot_dt; uint32_t nslots, capslots;
    uint8_t *role;              /* per argument */
    int8_t *arg_rank;           /* per argument: declared rank (-1 not a tensor) */
    uint32_t *tens_of;          /* NodeId of an ARG or local VAR -> tensor index + 1 */
    uint32_t nlocal, caplocal;  /* local arrays: `var a: f64[N]` in the reference */
    NodeId *local_decl;
    HostTensor *tt;             /* arguments then locals, during an evaluation */
    int64_t *local_cap;         /* allocated elements of each local */
    int bad;
    /* evaluation state */
    double *vars;
    HostTensor *t;
    uint64_t flops;
    uint64_t steps, max_steps;
    int costmode;
    double sum_len;
    jmp_buf jb;
};

/* ---- dtype conversions ------------------------------------------------- */

static double round_fmt(double v, int p, int emin, double maxf, int sat)
{
    if (isnan(v) || v == 0)
        return v;
    double a = fabs(v);
    if (isinf(a))
        return sat ? copysign(maxf, v) : v;
    int e;
    frexp(a, &e);
    e -= 1;
    if (e < emin)
        e = emin;
    double q = ldexp(1.0, e - (p - 1));
    double r = nearbyint(a / q) * q;
    if (r > maxf)
        r = sat ? maxf : INFINITY;
    return copysign(r, v);
}

static double wrap_int(DType dt, double v)
{
    int bits = ir_dtypes[dt].bits;
    if (bits >= 64)
        return v;
    int64_t x = (int64_t)v;
    uint64_t mask = (UINT64_C(1) << bits) - 1, u = (uint64_t)x & mask;
    if (ir_dtypes[dt].kind == 'u')
        return (double)u;
    if (u >> (bits - 1))
        return (double)(int64_t)(u | ~mask);
    return (double)u;
}

/* float -> int: truncate toward zero, saturate, NaN -> 0 (PTX cvt.rzi.sat) */
static double sat_int(DType dt, double v)
{
    if (isnan(v))
        return 0;
    int bits = ir_dtypes[dt].bits;
    double lo, hi;
    if (ir_dtypes[dt].kind == 'u') {
        lo = 0;
        hi = ldexp(1.0, bits) - 1;
    } else {
        lo = -ldexp(1.0, bits - 1);
        hi = ldexp(1.0, bits - 1) - 1;
    }
    v = trunc(v);
    return v < lo ? lo : v > hi ? hi : v;
}

double interp_round(DType dt, double v)
{
    switch (dt) {
    case DT_F64: return v;
    case DT_F32: return (double)(float)v;
    case DT_TF32: return round_fmt(v, 11, -126, ldexp(2.0 - ldexp(1, -10), 127), 0);
    case DT_BF16: return round_fmt(v, 8, -126, ldexp(2.0 - ldexp(1, -7), 127), 0);
    case DT_F16: return round_fmt(v, 11, -14, 65504.0, 0);
    case DT_E4M3: return round_fmt(v, 4, -6, 448.0, 1);
    case DT_E5M2: return round_fmt(v, 3, -14, 57344.0, 1);
    case DT_BOOL: return v != 0;
    case DT_NONE: case DT__COUNT: return v;
    default: return wrap_int(dt, isnan(v) ? 0 : trunc(v));
    }
}

/* a conversion inside an expression: f32/f64 are exact (fp64 reference) */
static double conv(DType dt, int from, double v)
{
    switch (dt) {
    case DT_F64: case DT_F32: case DT_NONE: return v;
    case DT_BOOL: return v != 0;
    default:
        if (ir_dtypes[dt].kind == 'f')
            return interp_round(dt, v);
        return from == K_FLT ? sat_int(dt, v) : wrap_int(dt, v);
    }
}

/* into a tensor element: everything rounds, f32 included */
static double conv_store(DType dt, int from, double v)
{
    if (dt == DT_F32)
        return (double)(float)v;
    return conv(dt, from, v);
}

static uint32_t enc_small(double r, int eb, int mb, int bias, int has_inf)
{
    uint32_t sign = signbit(r) ? 1u << (eb + mb) : 0, emax = (1u << eb) - 1;
    if (isnan(r))
        return has_inf ? (emax << mb) | (1u << (mb - 1)) : sign | ((1u << (eb + mb)) - 1);
    double a = fabs(r);
    if (isinf(a))
        return sign | (emax << mb);
    if (a == 0)
        return sign;
    int e;
    frexp(a, &e);
    e -= 1;
    int emin = 1 - bias;
    if (e < emin)
        return sign | (uint32_t)ldexp(a, mb - emin);
    uint32_t m = (uint32_t)(ldexp(a, mb - e) - ldexp(1.0, mb));
    return sign | ((uint32_t)(e + bias) << mb) | m;
}

static double dec_small(uint32_t bits, int eb, int mb, int bias, int has_inf)
{
    uint32_t s = (bits >> (eb + mb)) & 1, emax = (1u << eb) - 1, mmask = (1u << mb) - 1;
    uint32_t ef = (bits >> mb) & emax, m = bits & mmask;
    double v;
    if (has_inf && ef == emax)
        v = m ? NAN : INFINITY;
    else if (!has_inf && ef == emax && m == mmask)
        v = NAN;
    else if (ef == 0)
        v = ldexp((double)m, 1 - bias - mb);
    else
        v = ldexp((double)(mmask + 1 + m), (int)ef - bias - mb);
    return s ? -v : v;
}

int interp_elem_bytes(DType dt)
{
    return dt == DT_BOOL ? 1 : ir_dtype_bytes(dt);
}

void interp_encode(DType dt, double v, void *dst)
{
    v = interp_round(dt, v);
    switch (dt) {
    case DT_F64: memcpy(dst, &v, 8); return;
    case DT_F32: case DT_TF32: { float f = (float)v; memcpy(dst, &f, 4); return; }
    case DT_BF16: {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        uint16_t h = (uint16_t)(isnan(v) ? 0x7FC0 : u >> 16);
        memcpy(dst, &h, 2);
        return;
    }
    case DT_F16: { uint16_t h = (uint16_t)enc_small(v, 5, 10, 15, 1); memcpy(dst, &h, 2); return; }
    case DT_E4M3: *(uint8_t *)dst = (uint8_t)enc_small(v, 4, 3, 7, 0); return;
    case DT_E5M2: *(uint8_t *)dst = (uint8_t)enc_small(v, 5, 2, 15, 1); return;
    case DT_BOOL: *(uint8_t *)dst = v != 0; return;
    default: {
        int n = ir_dtype_bytes(dt);
        uint64_t u = v >= 9223372036854775808.0 ? (uint64_t)v : (uint64_t)(int64_t)v;
        memcpy(dst, &u, (size_t)n); /* little-endian host */
        return;
    }
    }
}

double interp_decode(DType dt, const void *src)
{
    switch (dt) {
    case DT_F64: { double d; memcpy(&d, src, 8); return d; }
    case DT_F32: case DT_TF32: { float f; memcpy(&f, src, 4); return f; }
    case DT_BF16: {
        uint16_t h;
        memcpy(&h, src, 2);
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    case DT_F16: { uint16_t h; memcpy(&h, src, 2); return dec_small(h, 5, 10, 15, 1); }
    case DT_E4M3: return dec_small(*(const uint8_t *)src, 4, 3, 7, 0);
    case DT_E5M2: return dec_small(*(const uint8_t *)src, 5, 2, 15, 1);
    case DT_BOOL: return *(const uint8_t *)src;
    default: {
        int n = ir_dtype_bytes(dt);
        uint64_t u = 0;
        memcpy(&u, src, (size_t)n);
        if (ir_dtypes[dt].kind == 'u')
            return (double)u;
        if (n < 8 && (u >> (n * 8 - 1)) & 1)
            u |= ~((UINT64_C(1) << (n * 8)) - 1);
        return (double)(int64_t)u;
    }
    }
}

/* ---- compiling the reference ------------------------------------------- */

static const Node *nd(const Interp *I, NodeId id) { return &I->k->nodes[id]; }

static void *grow(void *p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    uint32_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(p, c * elem);
    if (!q) {
        fputs("cakec: internal error: out of memory\n", stderr);
        exit(2);
    }
    *cap = c;
    return q;
}

static uint32_t xnew(Interp *I, uint8_t op, uint8_t kind, NodeId src)
{
    I->x = grow(I->x, &I->capx, I->nx + 1, sizeof *I->x);
    XNode *x = &I->x[I->nx];
    memset(x, 0, sizeof *x);
    x->op = op;
    x->kind = kind;
    x->src = src;
    return I->nx++;
}

static uint32_t xlist(Interp *I, const uint32_t *items, uint32_t n)
{
    I->xl = grow(I->xl, &I->capxl, I->nxl + n + 1, sizeof *I->xl);
    memcpy(I->xl + I->nxl, items, n * sizeof *items);
    uint32_t at = I->nxl;
    I->nxl += n;
    return at;
}

static uint32_t xconst(Interp *I, double v, uint8_t kind, NodeId src)
{
    uint32_t x = xnew(I, X_CONST, kind, src);
    I->x[x].v = v;
    return x;
}

static uint32_t new_slot(Interp *I, NodeId decl, uint8_t kind, uint8_t dt)
{
    uint32_t cap = I->capslots;
    I->slot_kind = grow(I->slot_kind, &I->capslots, I->nslots + 1, 1);
    if (cap != I->capslots || !I->slot_dt)
        I->slot_dt = grow(I->slot_dt, &cap, I->capslots, 1);
    I->slot_kind[I->nslots] = kind;
    I->slot_dt[I->nslots] = dt;
    if (decl)
        I->slot_of[decl] = I->nslots + 1;
    return I->nslots++;
}

static uint8_t dt_kind(DType dt)
{
    char c = ir_dtypes[dt].kind;
    return c == 'f' ? K_FLT : c == 'b' ? K_BOOL : K_INT;
}

static uint32_t bad(Interp *I, NodeId at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static uint32_t bad(Interp *I, NodeId at, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    Diag *d = diag_report(I->ctx, E0951, nd(I, at)->span, "%s", buf);
    diag_help(I->ctx, d, "a reference is per-element math over the arguments: for, let, var, if, "
                         "assignments, sum/max/min(k in a..b, e), casts and math builtins");
    I->bad = 1;
    return xconst(I, 0, K_INT, at);
}

static int arg_index(const Interp *I, NodeId decl)
{
    for (uint32_t i = 0; i < I->k->nargs; i++)
        if (I->k->args[i] == decl)
            return (int)i;
    return -1;
}

static const char *opname(Op op)
{
    if (op == OP_SPECIAL)
        return "a thread or block index";
    const char *s = ir_ops[op].spelling;
    return s && *s ? s : ir_ops[op].name;
}

static uint32_t cx(Interp *I, NodeId e);

static int tensor_rank(const Interp *I, uint32_t t)
{
    if (t < I->k->nargs)
        return I->arg_rank[t];
    return (int)nd(I, nd(I, I->local_decl[t - I->k->nargs])->a)->n;
}

/* the dtype of tensor t (an argument or a local array) */
static DType tensor_dtype(const Interp *I, uint32_t t)
{
    NodeId decl = t < I->k->nargs ? I->k->args[t] : I->local_decl[t - I->k->nargs];
    return (DType)nd(I, nd(I, decl)->a)->dtype;
}

static uint32_t cname(Interp *I, NodeId e)
{
    const Node *n = nd(I, e);
    if (!n->decl)
        return bad(I, e, "'%s' is not declared", ir_symstr(I->ctx, n->name));
    const Node *d = nd(I, n->decl);
    if (I->tens_of[n->decl])
        return bad(I, e, "array '%s' used without indices; index it: %s[...]",
                   ir_symstr(I->ctx, n->name), ir_symstr(I->ctx, n->name));
    if (d->op == OP_ARG) {
        int i = arg_index(I, n->decl);
        if (i >= 0 && I->arg_rank[i] >= 0)
            return bad(I, e, "tensor '%s' used without indices; index it: %s[...]",
                       ir_symstr(I->ctx, n->name), ir_symstr(I->ctx, n->name));
        if (i >= 0)
            I->role[i] |= INTERP_READ;
    }
    uint32_t s = I->slot_of[n->decl];
    if (!s)
        return bad(I, e, "'%s' (a %s) cannot be used in a reference block",
                   ir_symstr(I->ctx, n->name), opname((Op)d->op));
    uint32_t x = xnew(I, X_VAR, I->slot_kind[s - 1], e);
    I->x[x].slot = s - 1;
    return x;
}

/* an INDEX of a tensor argument: the argument index and the compiled indices */
static int cref(Interp *I, NodeId e, uint32_t *arg, uint32_t idx[IR_MAX_RANK], uint32_t *n,
                int implicit_ok)
{
    const Node *r = nd(I, e);
    const Node *base = nd(I, r->a);
    if (base->op != OP_NAME || !base->decl || !I->tens_of[base->decl]) {
        if (base->op == OP_NAME && base->decl && nd(I, base->decl)->op == OP_ARG)
            bad(I, e, "'%s' is a scalar; it takes no indices", ir_symstr(I->ctx, base->name));
        else
            bad(I, e, "a reference indexes kernel arguments and its own arrays only");
        return 0;
    }
    uint32_t i = I->tens_of[base->decl] - 1;
    int rank = tensor_rank(I, i);
    if (r->n != (uint32_t)rank) {
        bad(I, e, "'%s' has rank %d but is indexed with %u indices", ir_symstr(I->ctx, base->name),
            rank, r->n);
        return 0;
    }
    for (uint32_t j = 0; j < r->n; j++) {
        NodeId ie = ir_list_at(I->k, r, j);
        const Node *in = nd(I, ie);
        if (in->op == OP_SLICE || in->op == OP_COLON) {
            bad(I, ie, "a reference reads and writes one element at a time (no slices)");
            return 0;
        }
        if (implicit_ok && in->op == OP_NAME && (in->flags & NF_IMPLICIT) && in->decl == ie)
            new_slot(I, ie, K_INT, DT_NONE);
        idx[j] = cx(I, ie);
        if (I->x[idx[j]].kind == K_FLT)
            bad(I, ie, "an index must be an integer; convert it: i32(...)");
    }
    *arg = i;
    *n = r->n;
    return 1;
}

static uint32_t cread(Interp *I, NodeId e)
{
    uint32_t arg, idx[IR_MAX_RANK], n;
    if (!cref(I, e, &arg, idx, &n, 0))
        return xconst(I, 0, K_INT, e);
    if (arg < I->k->nargs)
        I->role[arg] |= INTERP_READ;
    DType dt = tensor_dtype(I, arg);
    int allvars = 1;
    for (uint32_t j = 0; j < n; j++)
        allvars &= I->x[idx[j]].op == X_VAR;
    uint32_t x = xnew(I, allvars ? X_READV : X_READ, dt_kind(dt), e);
    if (allvars)
        for (uint32_t j = 0; j < n; j++)
            idx[j] = I->x[idx[j]].slot;
    I->x[x].list = xlist(I, idx, n);
    I->x[x].n = n;
    I->x[x].slot = arg;
    return x;
}

static uint8_t join(uint8_t a, uint8_t b)
{
    return a == K_FLT || b == K_FLT ? K_FLT : K_INT;
}

static uint32_t cbin(Interp *I, NodeId e)
{
    const Node *n = nd(I, e);
    uint32_t a = cx(I, n->a), b = cx(I, n->b);
    uint8_t ka = I->x[a].kind, kb = I->x[b].kind, k = join(ka, kb), op;
    switch (n->op) {
    case OP_ADD: op = X_ADD; break;
    case OP_SUB: op = X_SUB; break;
    case OP_MUL: op = X_MUL; break;
    case OP_DIV: op = k == K_FLT ? X_FDIV : X_IDIV; break;
    case OP_MOD: op = k == K_FLT ? X_FMOD : X_IMOD; break;
    case OP_POW: op = X_POW; break;
    case OP_SHL: op = X_SHL; break;
    case OP_SHR: op = X_SHR; break;
    case OP_BAND: op = X_BAND; break;
    case OP_BOR: op = X_BOR; break;
    case OP_BXOR: op = X_BXOR; break;
    case OP_LT: op = X_LT; break;
    case OP_LE: op = X_LE; break;
    case OP_GT: op = X_GT; break;
    case OP_GE: op = X_GE; break;
    case OP_EQ: op = X_EQ; break;
    case OP_NE: op = X_NE; break;
    case OP_AND: op = X_AND; break;
    case OP_OR: op = X_OR; break;
    default: return bad(I, e, "operator '%s' is not allowed in a reference", opname((Op)n->op));
    }
    if (ir_ops[n->op].flags & OF_INTONLY && k == K_FLT)
        return bad(I, e, "operator '%s' needs integer operands", opname((Op)n->op));
    if (ir_ops[n->op].flags & (OF_CMP | OF_LOGIC))
        k = K_BOOL;
    uint32_t x = xnew(I, op, k, e);
    I->x[x].a = a;
    I->x[x].b = b;
    I->x[x].cnt = (uint8_t)(k == K_FLT);
    return x;
}

static uint32_t cbuiltin(Interp *I, NodeId e)
{
    const Node *n = nd(I, e);
    int want = ir_ops[n->op].nargs;
    if (want >= 0 && n->n != (uint32_t)want)
        return bad(I, e, "%s takes %d arguments, not %u", opname((Op)n->op), want, n->n);
    uint32_t args[3] = {0, 0, 0};
    for (uint32_t i = 0; i < n->n && i < 3; i++)
        args[i] = cx(I, ir_list_at(I->k, n, i));
    uint8_t op, sub = 0, kind = K_FLT, cnt = 1;
    switch (n->op) {
    case OP_EXP: op = X_MATH; sub = M_EXP; break;
    case OP_EXP2: op = X_MATH; sub = M_EXP2; break;
    case OP_LOG: op = X_MATH; sub = M_LOG; break;
    case OP_LOG2: op = X_MATH; sub = M_LOG2; break;
    case OP_SQRT: op = X_MATH; sub = M_SQRT; break;
    case OP_RSQRT: op = X_MATH; sub = M_RSQRT; break;
    case OP_RCP: op = X_MATH; sub = M_RCP; break;
    case OP_TANH: op = X_MATH; sub = M_TANH; break;
    case OP_SIN: op = X_MATH; sub = M_SIN; break;
    case OP_COS: op = X_MATH; sub = M_COS; break;
    case OP_ABS: op = X_ABS; kind = I->x[args[0]].kind; cnt = 0; break;
    case OP_MAX: case OP_MIN:
        op = n->op == OP_MAX ? X_MAX2 : X_MIN2;
        kind = join(I->x[args[0]].kind, I->x[args[1]].kind);
        cnt = kind == K_FLT;
        break;
    case OP_FMA: op = X_FMA; cnt = 2; break;
    case OP_CDIV:
        op = X_CDIV; kind = K_INT; cnt = 0;
        if (I->x[args[0]].kind == K_FLT || I->x[args[1]].kind == K_FLT)
            return bad(I, e, "cdiv needs integer operands");
        break;
    case OP_SELECT:
        op = X_SELECT; cnt = 0;
        kind = join(I->x[args[1]].kind, I->x[args[2]].kind);
        break;
    default:
        return bad(I, e, "%s is not allowed in a reference block", opname((Op)n->op));
    }
    uint32_t x = xnew(I, op, kind, e);
    XNode *p = &I->x[x];
    p->sub = sub;
    p->cnt = cnt;
    p->a = args[0];
    p->b = args[1];
    p->c = args[2];
    return x;
}

static uint32_t creduce(Interp *I, NodeId e)
{
    const Node *n = nd(I, e);
    uint32_t lo = cx(I, n->a), hi = cx(I, n->b);
    if (I->x[lo].kind == K_FLT || I->x[hi].kind == K_FLT)
        return bad(I, e, "the bounds of a reduction must be integers");
    uint32_t slot = new_slot(I, e, K_INT, DT_NONE);
    uint32_t body = cx(I, n->c);
    uint8_t kind = I->x[body].kind == K_BOOL ? K_INT : I->x[body].kind;
    uint32_t x = xnew(I, n->op == OP_SUM ? X_SUM : n->op == OP_RMAX ? X_RMAX : X_RMIN, kind, e);
    XNode *p = &I->x[x];
    p->a = lo;
    p->b = hi;
    p->c = body;
    p->slot = slot;
    p->cnt = (uint8_t)(kind == K_FLT);
    return x;
}

static uint32_t cx(Interp *I, NodeId e)
{
    if (!e)
        return bad(I, 0, "missing expression");
    const Node *n = nd(I, e);
    switch (n->op) {
    case OP_INT: return xconst(I, (double)n->v.i, K_INT, e);
    case OP_BOOL: return xconst(I, (double)(n->v.i != 0), K_BOOL, e);
    case OP_FLOAT: return xconst(I, n->v.f, K_FLT, e);
    case OP_NAME: return cname(I, e);
    case OP_INDEX: return cread(I, e);
    case OP_SUM: case OP_RMAX: case OP_RMIN: return creduce(I, e);
    case OP_NEG: case OP_NOT: {
        uint32_t a = cx(I, n->a);
        uint8_t k = n->op == OP_NOT ? K_BOOL : I->x[a].kind == K_BOOL ? K_INT : I->x[a].kind;
        uint32_t x = xnew(I, n->op == OP_NEG ? X_NEG : X_NOT, k, e);
        I->x[x].a = a;
        return x;
    }
    case OP_CAST: {
        if (n->lanes > 1)
            return bad(I, e, "a reference computes on scalars; no vector types");
        uint32_t a = cx(I, n->a);
        uint8_t from = I->x[a].kind, to = dt_kind((DType)n->dtype);
        if ((n->dtype == DT_F32 || n->dtype == DT_F64) && from == K_FLT)
            return a; /* exact in the fp64 reference */
        uint32_t x = xnew(I, X_CONV, to, e);
        I->x[x].a = a;
        I->x[x].dt = n->dtype;
        I->x[x].sub = from;
        return x;
    }
    default:
        break;
    }
    if (ir_ops[n->op].cls == OC_BIN)
        return cbin(I, e);
    if (ir_ops[n->op].cls == OC_BUILTIN)
        return cbuiltin(I, e);
    return bad(I, e, "%s is not allowed in a reference block", opname((Op)n->op));
}

static uint32_t cstmt(Interp *I, NodeId s);

static uint32_t cblock(Interp *I, NodeId b)
{
    const Node *n = nd(I, b);
    if (n->op != OP_BLOCK)
        return cstmt(I, b);
    uint32_t *items = malloc((n->n + 1) * sizeof *items);
    for (uint32_t i = 0; i < n->n; i++)
        items[i] = cstmt(I, ir_list_at(I->k, nd(I, b), i));
    uint32_t x = xnew(I, X_SEQ, K_INT, b);
    I->x[x].list = xlist(I, items, n->n);
    I->x[x].n = n->n;
    free(items);
    return x;
}

static uint8_t compound(uint16_t sub, uint8_t kind)
{
    switch (sub) {
    case OP_ADD: return X_ADD;
    case OP_SUB: return X_SUB;
    case OP_MUL: return X_MUL;
    case OP_DIV: return kind == K_FLT ? X_FDIV : X_IDIV;
    case OP_MAX: return X_MAX2;
    case OP_MIN: return X_MIN2;
    default: return 0;
    }
}

static uint32_t cassign(Interp *I, NodeId s)
{
    const Node *n = nd(I, s);
    const Node *lv = nd(I, n->a);
    if (lv->op == OP_NAME) {
        const Node *d = lv->decl ? nd(I, lv->decl) : NULL;
        if (!d || (d->op != OP_VAR && d->op != OP_LET) || !I->slot_of[lv->decl])
            return bad(I, n->a, "a reference assigns to its vars and to tensor elements only");
        uint32_t slot = I->slot_of[lv->decl] - 1;
        uint32_t v = cx(I, n->b);
        uint32_t x = xnew(I, X_SETVAR, I->slot_kind[slot], s);
        XNode *p = &I->x[x];
        p->slot = slot;
        p->a = v;
        p->dt = I->slot_dt[slot];
        p->sub = compound(n->sub, join(I->slot_kind[slot], I->x[v].kind));
        p->cnt = (uint8_t)(p->sub && join(I->slot_kind[slot], I->x[v].kind) == K_FLT);
        return x;
    }
    if (lv->op != OP_INDEX)
        return bad(I, n->a, "cannot assign to this");
    uint32_t first_slot = I->nslots;
    uint32_t arg, idx[IR_MAX_RANK], rank;
    if (!cref(I, n->a, &arg, idx, &rank, 1))
        return xconst(I, 0, K_INT, s);
    if (arg < I->k->nargs)
        I->role[arg] |= INTERP_WRITTEN | (n->sub ? INTERP_READ : 0);
    uint32_t v = cx(I, n->b);
    DType dt = tensor_dtype(I, arg);
    uint32_t x = xnew(I, X_STORE, I->x[v].kind, s);
    XNode *p = &I->x[x];
    p->slot = arg;
    p->list = xlist(I, idx, rank);
    p->n = rank;
    p->a = v;
    p->dt = (uint8_t)dt;
    p->sub = compound(n->sub, join(dt_kind(dt), I->x[v].kind));
    p->cnt = (uint8_t)(p->sub && join(dt_kind(dt), I->x[v].kind) == K_FLT);
    /* implicit indices: loops over the extents, the first index outermost */
    for (uint32_t j = rank; j-- > 0;) {
        NodeId ie = ir_list_at(I->k, lv, j);
        const Node *in = nd(I, ie);
        if (!(in->op == OP_NAME && (in->flags & NF_IMPLICIT) && in->decl == ie))
            continue;
        uint32_t slot = I->slot_of[ie] - 1;
        if (slot < first_slot)
            continue;
        uint32_t hi = xnew(I, X_EXTENT, K_INT, ie);
        I->x[hi].slot = arg;
        I->x[hi].sub = (uint8_t)j;
        uint32_t f = xnew(I, X_FOR, K_INT, s);
        I->x[f].slot = slot;
        I->x[f].a = xconst(I, 0, K_INT, ie);
        I->x[f].b = hi;
        I->x[f].d = x;
        x = f;
    }
    return x;
}

/* var a: f64[N, ...] — a local array, zeroed where it is declared */
static uint32_t clocal(Interp *I, NodeId s)
{
    const Node *n = nd(I, s), *t = nd(I, n->a);
    if (t->n > IR_MAX_RANK || t->lanes > 1)
        return bad(I, n->a, "a reference array has at most %d dims of scalars", IR_MAX_RANK);
    if (n->b)
        return bad(I, n->b, "a reference array starts zeroed; it takes no initializer");
    uint32_t dims[IR_MAX_RANK];
    for (uint32_t j = 0; j < t->n; j++) {
        dims[j] = cx(I, ir_list_at(I->k, t, j));
        if (I->x[dims[j]].kind == K_FLT)
            return bad(I, ir_list_at(I->k, t, j), "an array extent must be an integer");
    }
    uint32_t li = I->nlocal;
    I->local_decl = grow(I->local_decl, &I->caplocal, li + 1, sizeof *I->local_decl);
    I->local_decl[li] = s;
    I->nlocal++;
    uint32_t ti = I->k->nargs + li;
    I->tens_of[s] = ti + 1;
    uint32_t x = xnew(I, X_LOCAL, K_INT, s);
    I->x[x].slot = ti;
    I->x[x].list = xlist(I, dims, t->n);
    I->x[x].n = t->n;
    I->x[x].dt = t->dtype;
    return x;
}

static uint32_t clet(Interp *I, NodeId s)
{
    const Node *n = nd(I, s);
    if (n->op == OP_VAR && n->a && nd(I, n->a)->op == OP_TYPE && nd(I, n->a)->n)
        return clocal(I, s);
    uint32_t v = n->b ? cx(I, n->b) : xconst(I, 0, K_INT, s);
    uint8_t kind = I->x[v].kind, dt = DT_NONE;
    if (n->a) {
        const Node *t = nd(I, n->a);
        if (t->op != OP_TYPE || t->n || t->lanes > 1)
            return bad(I, n->a, "a reference declares scalars and arrays of scalars only");
        dt = t->dtype;
        kind = dt_kind((DType)dt);
    } else if (n->op == OP_VAR) {
        return bad(I, s, "var needs a type: var NAME: f32 = ...");
    }
    uint32_t slot = new_slot(I, s, kind, dt);
    uint32_t x = xnew(I, X_SETVAR, kind, s);
    I->x[x].slot = slot;
    I->x[x].a = v;
    I->x[x].dt = dt;
    return x;
}

static uint32_t cstmt(Interp *I, NodeId s)
{
    const Node *n = nd(I, s);
    switch (n->op) {
    case OP_BLOCK: return cblock(I, s);
    case OP_LET: case OP_VAR: return clet(I, s);
    case OP_ASSIGN: return cassign(I, s);
    case OP_FOR: {
        uint32_t lo = cx(I, n->a), hi = cx(I, n->b), st = n->c ? cx(I, n->c) : 0;
        if (I->x[lo].kind == K_FLT || I->x[hi].kind == K_FLT || (st && I->x[st].kind == K_FLT))
            return bad(I, s, "loop bounds must be integers");
        uint32_t slot = new_slot(I, s, K_INT, DT_NONE);
        uint32_t body = cblock(I, n->d);
        uint32_t x = xnew(I, X_FOR, K_INT, s);
        XNode *p = &I->x[x];
        p->slot = slot;
        p->a = lo;
        p->b = hi;
        p->c = st;
        p->d = body;
        return x;
    }
    case OP_IF: {
        uint32_t c = cx(I, n->a), t = cblock(I, n->b), e = n->c ? cblock(I, n->c) : 0;
        uint32_t x = xnew(I, X_IF, K_INT, s);
        I->x[x].a = c;
        I->x[x].b = t;
        I->x[x].c = e;
        return x;
    }
    default:
        return bad(I, s, "%s is not allowed in a reference block", opname((Op)n->op));
    }
}

Interp *interp_new(CakeCtx *ctx, const Kernel *k)
{
    if (!k->reference) {
        Diag *d = diag_report(ctx, E0950, k->span, "kernel '%s' has no reference block",
                              ir_symstr(ctx, k->name));
        diag_help(ctx, d, "add one: reference { C[m, n] = ... } (or pass --reference FILE)");
        return NULL;
    }
    Interp *I = calloc(1, sizeof *I);
    I->ctx = ctx;
    I->k = k;
    I->max_steps = UINT64_C(1) << 32;
    I->slot_of = calloc(k->nnodes + 1, sizeof *I->slot_of);
    I->role = calloc(k->nargs + 1, 1);
    I->arg_rank = calloc(k->nargs + 1, 1);
    I->tens_of = calloc(k->nnodes + 1, sizeof *I->tens_of);
    xnew(I, X_NONE, K_INT, 0); /* x 0 = none */
    for (uint32_t i = 0; i < k->ndims; i++)
        new_slot(I, k->dims[i], K_INT, DT_NONE);
    for (uint32_t i = 0; i < k->nparams; i++)
        new_slot(I, k->params[i], K_INT, DT_NONE);
    for (uint32_t i = 0; i < k->nargs; i++) {
        const Node *a = &k->nodes[k->args[i]];
        const Node *t = a->a ? &k->nodes[a->a] : NULL;
        if (t && t->op == OP_GTYPE) {
            uint32_t r = t->sub ? t->sub : t->n;
            I->arg_rank[i] = (int8_t)(r > IR_MAX_RANK ? IR_MAX_RANK : r);
            I->tens_of[k->args[i]] = i + 1;
        } else {
            I->arg_rank[i] = -1;
            DType dt = t ? (DType)t->dtype : DT_F32;
            new_slot(I, k->args[i], dt_kind(dt), (uint8_t)dt);
        }
    }
    const Node *r = &k->nodes[k->reference];
    I->root = cblock(I, r->op == OP_REFERENCE ? r->a : k->reference);
    if (I->bad) {
        interp_free(I);
        return NULL;
    }
    I->vars = calloc(I->nslots + 1, sizeof *I->vars);
    I->tt = calloc(k->nargs + I->nlocal + 1, sizeof *I->tt);
    I->local_cap = calloc(I->nlocal + 1, sizeof *I->local_cap);
    for (uint32_t i = 0; i < I->nlocal; i++) {
        I->tt[k->nargs + i].dtype = (DType)nd(I, nd(I, I->local_decl[i])->a)->dtype;
        I->tt[k->nargs + i].rank = tensor_rank(I, k->nargs + i);
    }
    return I;
}

void interp_free(Interp *I)
{
    if (!I)
        return;
    free(I->x);
    free(I->xl);
    free(I->slot_of);
    free(I->slot_kind);
    free(I->slot_dt);
    free(I->role);
    free(I->arg_rank);
    free(I->vars);
    for (uint32_t i = 0; I->tt && i < I->nlocal; i++)
        free(I->tt[I->k->nargs + i].data);
    free(I->tt);
    free(I->local_cap);
    free(I->tens_of);
    free(I->local_decl);
    free(I);
}

const Kernel *interp_kernel(const Interp *I) { return I->k; }

int interp_arg_role(const Interp *I, uint32_t i)
{
    return i < I->k->nargs ? I->role[i] : 0;
}

void interp_set_max_steps(Interp *I, uint64_t steps)
{
    I->max_steps = steps ? steps : UINT64_MAX;
}

/* ---- evaluation -------------------------------------------------------- */

static _Noreturn void fail(Interp *I, DiagCode code, NodeId at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static _Noreturn void fail(Interp *I, DiagCode code, NodeId at, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    diag_report(I->ctx, code, I->k->nodes[at].span, "%s", buf);
    longjmp(I->jb, 1);
}

static double ev(Interp *I, uint32_t xi);

static _Noreturn void oob(Interp *I, const XNode *x, uint32_t j, double v)
{
    const HostTensor *t = &I->t[x->slot];
    const char *name = ir_symstr(I->ctx, I->k->nodes[I->k->args[x->slot]].name);
    NodeId at = x->op == X_READV ? x->src : I->x[I->xl[x->list + j]].src;
    if (v != trunc(v))
        fail(I, E0952, at, "index %u of '%s' is %g, not an integer", j, name, v);
    fail(I, E0952, at, "index %u of '%s' is %.0f, outside 0..%lld", j, name, v,
         (long long)t->shape[j]);
}

/* Index values are integers (int-kind values are always integral), so a
 * truncating conversion and one unsigned compare check the bounds. */
static int64_t offset(Interp *I, const XNode *x)
{
    const HostTensor *t = &I->t[x->slot];
    const uint32_t *l = &I->xl[x->list];
    int64_t off = 0;
    for (uint32_t j = 0; j < x->n; j++) {
        double v = x->op == X_READV ? I->vars[l[j]] : ev(I, l[j]);
        int64_t i = (int64_t)v;
        if ((uint64_t)i >= (uint64_t)t->shape[j] || !(v > -1.0))
            oob(I, x, j, v);
        off += i * t->stride[j];
    }
    return off;
}

/* counts n loop iterations against the limit */
static void steps(Interp *I, const XNode *x, uint64_t n)
{
    I->steps += n;
    if (I->steps > I->max_steps)
        fail(I, E0960, x->src, "the reference ran more than %llu loop iterations",
             (unsigned long long)I->max_steps);
}

static double fmax_nan(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }
static double fmin_nan(double a, double b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }

static double idiv(Interp *I, const XNode *x, double a, double b, int mod)
{
    int64_t p = (int64_t)a, q = (int64_t)b;
    if (q == 0)
        fail(I, E0954, x->src, "integer %s by zero", mod ? "remainder" : "division");
    if (q == -1)
        return mod ? 0 : (double)-p;
    return (double)(mod ? p % q : p / q);
}

static double combine(Interp *I, const XNode *x, uint8_t op, double a, double b)
{
    switch (op) {
    case X_ADD: return a + b;
    case X_SUB: return a - b;
    case X_MUL: return a * b;
    case X_FDIV: return a / b;
    case X_IDIV: return idiv(I, x, a, b, 0);
    case X_MAX2: return fmax_nan(a, b);
    case X_MIN2: return fmin_nan(a, b);
    default: return b;
    }
}

static double reduce(Interp *I, const XNode *x)
{
    double lo = ev(I, x->a), hi = ev(I, x->b);
    double acc = x->op == X_SUM ? 0 : x->op == X_RMAX ? -INFINITY : INFINITY;
    if (I->costmode)
        return 0;
    if (hi > lo)
        steps(I, x, (uint64_t)(hi - lo));
    double *var = &I->vars[x->slot];
    if (x->op == X_SUM)
        for (double i = lo; i < hi; i++) {
            *var = i;
            acc += ev(I, x->c);
        }
    else
        for (double i = lo; i < hi; i++) {
            *var = i;
            double v = ev(I, x->c);
            acc = x->op == X_RMAX ? fmax_nan(acc, v) : fmin_nan(acc, v);
        }
    if (hi > lo)
        I->flops += (uint64_t)(hi - lo) * x->cnt;
    return acc;
}

static double math1(uint8_t sub, double a)
{
    switch (sub) {
    case M_EXP: return exp(a);
    case M_EXP2: return exp2(a);
    case M_LOG: return log(a);
    case M_LOG2: return log2(a);
    case M_SQRT: return sqrt(a);
    case M_RSQRT: return 1.0 / sqrt(a);
    case M_RCP: return 1.0 / a;
    case M_TANH: return tanh(a);
    case M_SIN: return sin(a);
    default: return cos(a);
    }
}

static double ev(Interp *I, uint32_t xi)
{
    const XNode *x = &I->x[xi];
    switch (x->op) {
    case X_CONST: return x->v;
    case X_VAR: return I->vars[x->slot];
    case X_READV: {
        if (I->costmode)
            return 0;
        const HostTensor *t = &I->t[x->slot];
        const uint32_t *l = &I->xl[x->list];
        int64_t off = 0;
        for (uint32_t j = 0; j < x->n; j++) {
            double v = I->vars[l[j]];
            int64_t i = (int64_t)v;
            if ((uint64_t)i >= (uint64_t)t->shape[j] || !(v > -1.0))
                oob(I, x, j, v);
            off += i * t->stride[j];
        }
        return t->data[off];
    }
    case X_READ:
        if (I->costmode)
            return 0;
        return I->t[x->slot].data[offset(I, x)];
    case X_EXTENT: return (double)I->t[x->slot].shape[x->sub];
    case X_ADD: I->flops += x->cnt; return ev(I, x->a) + ev(I, x->b);
    case X_SUB: I->flops += x->cnt; return ev(I, x->a) - ev(I, x->b);
    case X_MUL: I->flops += x->cnt; return ev(I, x->a) * ev(I, x->b);
    case X_FDIV: I->flops += x->cnt; return ev(I, x->a) / ev(I, x->b);
    case X_IDIV: { double a = ev(I, x->a), b = ev(I, x->b); return idiv(I, x, a, b, 0); }
    case X_FMOD: I->flops += x->cnt; return fmod(ev(I, x->a), ev(I, x->b));
    case X_IMOD: { double a = ev(I, x->a), b = ev(I, x->b); return idiv(I, x, a, b, 1); }
    case X_POW: {
        I->flops += x->cnt;
        double p = pow(ev(I, x->a), ev(I, x->b));
        return x->kind == K_FLT ? p : trunc(p);
    }
    case X_SHL: return (double)((int64_t)ev(I, x->a) << ((int64_t)ev(I, x->b) & 63));
    case X_SHR: return (double)((int64_t)ev(I, x->a) >> ((int64_t)ev(I, x->b) & 63));
    case X_BAND: return (double)((int64_t)ev(I, x->a) & (int64_t)ev(I, x->b));
    case X_BOR: return (double)((int64_t)ev(I, x->a) | (int64_t)ev(I, x->b));
    case X_BXOR: return (double)((int64_t)ev(I, x->a) ^ (int64_t)ev(I, x->b));
    case X_LT: return ev(I, x->a) < ev(I, x->b);
    case X_LE: return ev(I, x->a) <= ev(I, x->b);
    case X_GT: return ev(I, x->a) > ev(I, x->b);
    case X_GE: return ev(I, x->a) >= ev(I, x->b);
    case X_EQ: return ev(I, x->a) == ev(I, x->b);
    case X_NE: return ev(I, x->a) != ev(I, x->b);
    case X_AND: return ev(I, x->a) != 0 && ev(I, x->b) != 0;
    case X_OR: return ev(I, x->a) != 0 || ev(I, x->b) != 0;
    case X_NEG: return -ev(I, x->a);
    case X_NOT: return ev(I, x->a) == 0;
    case X_CONV: return conv((DType)x->dt, x->sub, ev(I, x->a));
    case X_MATH: I->flops += x->cnt; return math1(x->sub, ev(I, x->a));
    case X_MAX2: I->flops += x->cnt; return fmax_nan(ev(I, x->a), ev(I, x->b));
    case X_MIN2: I->flops += x->cnt; return fmin_nan(ev(I, x->a), ev(I, x->b));
    case X_ABS: return fabs(ev(I, x->a));
    case X_FMA: I->flops += x->cnt; return fma(ev(I, x->a), ev(I, x->b), ev(I, x->c));
    case X_CDIV: {
        double a = ev(I, x->a), b = ev(I, x->b);
        if (b == 0)
            fail(I, E0954, x->src, "cdiv by zero");
        return ceil(a / b);
    }
    case X_SELECT: return ev(I, x->a) != 0 ? ev(I, x->b) : ev(I, x->c);
    case X_SUM: case X_RMAX: case X_RMIN: return reduce(I, x);
    default: return 0;
    }
}

static void exec(Interp *I, uint32_t xi)
{
    const XNode *x = &I->x[xi];
    switch (x->op) {
    case X_SEQ:
        for (uint32_t i = 0; i < x->n; i++)
            exec(I, I->xl[x->list + i]);
        return;
    case X_FOR: {
        double lo = ev(I, x->a), hi = ev(I, x->b), st = x->c ? ev(I, x->c) : 1;
        if (st <= 0)
            fail(I, E0951, x->src, "loop step must be positive (it is %g)", st);
        for (double i = lo; i < hi; i += st) {
            steps(I, x, 1);
            I->vars[x->slot] = i;
            exec(I, x->d);
        }
        return;
    }
    case X_IF:
        if (ev(I, x->a) != 0)
            exec(I, x->b);
        else if (x->c)
            exec(I, x->c);
        return;
    case X_SETVAR: {
        double v = ev(I, x->a);
        if (x->sub) {
            I->flops += x->cnt;
            v = combine(I, x, x->sub, I->vars[x->slot], v);
        }
        I->vars[x->slot] = x->dt ? conv((DType)x->dt, I->x[x->a].kind, v) : v;
        return;
    }
    case X_STORE: {
        HostTensor *t = &I->t[x->slot];
        int64_t off = offset(I, x);
        double v = ev(I, x->a);
        if (x->sub) {
            I->flops += x->cnt;
            v = combine(I, x, x->sub, t->data[off], v);
        }
        t->data[off] = conv_store((DType)x->dt, I->x[x->a].kind, v);
        if (t->written)
            t->written[off] = 1;
        return;
    }
    case X_LOCAL: {
        HostTensor *t = &I->t[x->slot];
        int64_t n = 1;
        for (uint32_t j = 0; j < x->n; j++) {
            double v = ev(I, I->xl[x->list + j]);
            if (!(v >= 0 && v < 0x1p40))
                fail(I, E0960, x->src, "array extent %g is out of range", v);
            t->shape[j] = (int64_t)v;
            n *= t->shape[j];
        }
        if (n > (INT64_C(1) << 32))
            fail(I, E0960, x->src, "array of %lld elements is too large", (long long)n);
        int64_t s = 1;
        for (uint32_t j = x->n; j-- > 0;) {
            t->stride[j] = s;
            s *= t->shape[j];
        }
        t->n = t->span = n;
        if (I->costmode)
            return;
        int64_t *cap = &I->local_cap[x->slot - I->k->nargs];
        if (n > *cap) {
            double *d = realloc(t->data, (size_t)n * sizeof *d);
            if (!d)
                fail(I, E0960, x->src, "out of memory for an array of %lld elements", (long long)n);
            t->data = d;
            *cap = n;
        }
        memset(t->data, 0, (size_t)n * sizeof *t->data);
        return;
    }
    default:
        (void)ev(I, xi);
        return;
    }
}

int interp_arg_tensor(CakeCtx *ctx, const Kernel *k, uint32_t i, const ShapeEnv *env,
                      HostTensor *t)
{
    DType dt;
    int rank;
    int64_t shape[IR_MAX_RANK], stride[IR_MAX_RANK];
    if (!shape_arg_geometry(ctx, k, i, env, &dt, &rank, shape, stride)) {
        if (shape_env_complete(ctx, k, env, 1))
            diag_report(ctx, E0953, k->nodes[k->args[i]].span,
                        "the shape of '%s' does not evaluate for this shape",
                        ir_symstr(ctx, k->nodes[k->args[i]].name));
        return 0;
    }
    t->dtype = dt;
    t->rank = rank;
    t->n = 1;
    t->span = 1;
    for (int j = 0; j < rank; j++) {
        t->shape[j] = shape[j];
        t->stride[j] = stride[j];
        t->n *= shape[j];
        t->span += (shape[j] - 1) * stride[j];
    }
    if (t->n == 0)
        t->span = 0;
    return 1;
}

static int bind(Interp *I, const ShapeEnv *env, HostTensor *args)
{
    const Kernel *k = I->k;
    for (uint32_t i = 0; i < k->ndims; i++) {
        int64_t v;
        if (!shape_env_get(env, k->nodes[k->dims[i]].name, &v)) {
            shape_env_complete(I->ctx, k, env, 1);
            return 0;
        }
        I->vars[I->slot_of[k->dims[i]] - 1] = (double)v;
    }
    for (uint32_t i = 0; i < k->nparams; i++) {
        const Node *p = &k->nodes[k->params[i]];
        int64_t v;
        if (!shape_env_get(env, p->name, &v) && !shape_eval_int(I->ctx, k, p->a, env, &v)) {
            diag_report(I->ctx, E0953, p->span, "parameter '%s' has no value",
                        ir_symstr(I->ctx, p->name));
            return 0;
        }
        I->vars[I->slot_of[k->params[i]] - 1] = (double)v;
    }
    for (uint32_t i = 0; i < k->nargs; i++) {
        if (I->arg_rank[i] >= 0) {
            if (args && args[i].rank != I->arg_rank[i])
                ir_bug(I->ctx, "interp: argument %u has rank %d, expected %d", i, args[i].rank,
                       I->arg_rank[i]);
            continue;
        }
        int64_t v;
        double val = 1;
        if (args && args[i].data)
            val = args[i].data[0];
        else if (shape_env_get(env, k->nodes[k->args[i]].name, &v))
            val = (double)v;
        I->vars[I->slot_of[k->args[i]] - 1] = val;
    }
    for (uint32_t i = 0; args && i < k->nargs; i++)
        I->tt[i] = args[i];
    I->t = I->tt;
    I->flops = 0;
    I->steps = 0;
    I->sum_len = 0;
    return 1;
}

static double arg_bytes(const Interp *I, const HostTensor *args)
{
    double b = 0;
    for (uint32_t i = 0; i < I->k->nargs; i++) {
        if (I->arg_rank[i] < 0)
            continue; /* scalars travel as kernel parameters */
        double n = (double)args[i].n * interp_elem_bytes(args[i].dtype);
        b += ((I->role[i] & INTERP_READ) ? n : 0) + ((I->role[i] & INTERP_WRITTEN) ? n : 0);
    }
    return b;
}

int interp_run(Interp *I, const ShapeEnv *env, HostTensor *args, InterpCost *cost)
{
    if (!bind(I, env, args))
        return 0;
    for (uint32_t i = 0; i < I->k->nargs; i++)
        if (I->arg_rank[i] >= 0 && I->role[i] && args[i].n && !args[i].data)
            ir_bug(I->ctx, "interp: argument %u has no data", i);
    I->costmode = 0;
    if (setjmp(I->jb)) {
        I->t = NULL;
        return 0;
    }
    exec(I, I->root);
    if (cost) {
        cost->flops = (double)I->flops;
        cost->bytes = arg_bytes(I, args);
        cost->sum_len = 0;
        cost->exact = 1;
        InterpCost est;
        HostTensor *save = I->t;
        if (interp_cost(I, env, &est))
            cost->sum_len = est.sum_len;
        I->t = save;
    }
    I->t = NULL;
    return 1;
}

/* ---- the cost estimate -------------------------------------------------- */

static double ce(Interp *I, uint32_t xi, double chain);

static double trips(Interp *I, const XNode *x, double *lo, double *st)
{
    *lo = ev(I, x->a);
    double hi = ev(I, x->b);
    *st = x->op == X_FOR && x->c ? ev(I, x->c) : 1;
    if (!(*st > 0) || !(hi > *lo))
        return 0;
    return ceil((hi - *lo) / *st);
}

static double ce(Interp *I, uint32_t xi, double chain)
{
    if (!xi)
        return 0;
    const XNode *x = &I->x[xi];
    switch (x->op) {
    case X_CONST: case X_VAR: case X_EXTENT: return 0;
    case X_READ: {
        double c = 0;
        for (uint32_t j = 0; j < x->n; j++)
            c += ce(I, I->xl[x->list + j], chain);
        return c;
    }
    case X_READV: return 0;
    case X_SUM: case X_RMAX: case X_RMIN: {
        double lo, st, n = trips(I, x, &lo, &st);
        if (n <= 0)
            return 0;
        if (x->op == X_SUM && chain * n > I->sum_len)
            I->sum_len = chain * n;
        I->vars[x->slot] = lo + st * (n - 1) / 2;
        return n * (ce(I, x->c, x->op == X_SUM ? chain * n : chain) + x->cnt);
    }
    case X_SELECT: {
        double b = ce(I, x->b, chain), c = ce(I, x->c, chain);
        return ce(I, x->a, chain) + (b > c ? b : c);
    }
    case X_SEQ: {
        double c = 0;
        for (uint32_t i = 0; i < x->n; i++)
            c += ce(I, I->xl[x->list + i], chain);
        return c;
    }
    case X_FOR: {
        double lo, st, n = trips(I, x, &lo, &st);
        if (n <= 0)
            return 0;
        I->vars[x->slot] = lo + st * (n - 1) / 2;
        return n * ce(I, x->d, chain);
    }
    case X_IF: {
        double t = ce(I, x->b, chain), e = ce(I, x->c, chain);
        return ce(I, x->a, chain) + (t > e ? t : e);
    }
    case X_LOCAL:
        exec(I, xi); /* its extents, for the implicit loops over it */
        return 0;
    case X_SETVAR:
        I->vars[x->slot] = ev(I, x->a); /* bounds may use lets; reads and sums give 0 here */
        return ce(I, x->a, chain) + x->cnt;
    case X_STORE: {
        double c = ce(I, x->a, chain) + x->cnt;
        for (uint32_t j = 0; j < x->n; j++)
            c += ce(I, I->xl[x->list + j], chain);
        return c;
    }
    default:
        return x->cnt + ce(I, x->a, chain) + ce(I, x->b, chain) + ce(I, x->c, chain);
    }
}

int interp_cost(Interp *I, const ShapeEnv *env, InterpCost *cost)
{
    const Kernel *k = I->k;
    HostTensor *geo = calloc(k->nargs + 1, sizeof *geo);
    for (uint32_t i = 0; i < k->nargs; i++)
        if (!interp_arg_tensor(I->ctx, k, i, env, &geo[i])) {
            free(geo);
            return 0;
        }
    if (!bind(I, env, geo)) {
        free(geo);
        return 0;
    }
    I->costmode = 1;
    if (setjmp(I->jb)) {
        I->costmode = 0;
        I->t = NULL;
        free(geo);
        return 0;
    }
    cost->flops = ce(I, I->root, 1);
    cost->bytes = arg_bytes(I, geo);
    cost->sum_len = I->sum_len;
    cost->exact = 0;
    I->costmode = 0;
    I->t = NULL;
    free(geo);
    return 1;
}
