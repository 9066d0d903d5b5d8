/* interp_compile.c — the fp64 reference interpreter (see interp.h): compiling.
 *
 * interp_new compiles the reference block once into a compact tree of XNodes
 * (its own array, with every name resolved to a variable slot or an argument
 * index and every operation specialized by kind: int or float), so evaluation
 * (interp.c) is a switch over small structs plus array indexing, with no
 * allocation per element. Implicit indices of `C[m, n] = e` become loops over
 * C's extents. Constructs the reference may not use are reported here (E0951).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "interp_priv.h"

/* ---- compiling the reference ------------------------------------------- */

static const Node *nd(const Interp *I, NodeId id) { return &I->k->nodes[id]; }

static void *grow(Interp *I, void *p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    uint32_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(p, c * elem);
    if (!q)
        ir_bug(I->ctx, "out of memory (the reference interpreter's arrays)");
    *cap = c;
    return q;
}

static uint32_t xnew(Interp *I, uint8_t op, uint8_t kind, NodeId src)
{
    I->x = grow(I, I->x, &I->capx, I->nx + 1, sizeof *I->x);
    XNode *x = &I->x[I->nx];
    memset(x, 0, sizeof *x);
    x->op = op;
    x->kind = kind;
    x->src = src;
    return I->nx++;
}

static uint32_t xlist(Interp *I, const uint32_t *items, uint32_t n)
{
    I->xl = grow(I, I->xl, &I->capxl, I->nxl + n + 1, sizeof *I->xl);
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
    I->slot_kind = grow(I, I->slot_kind, &I->capslots, I->nslots + 1, 1);
    if (cap != I->capslots || !I->slot_dt)
        I->slot_dt = grow(I, I->slot_dt, &cap, I->capslots, 1);
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
    case OP_EXP2: case OP_EXP2_FMA: op = X_MATH; sub = M_EXP2; break;
    case OP_LOG: op = X_MATH; sub = M_LOG; break;
    case OP_LOG2: op = X_MATH; sub = M_LOG2; break;
    case OP_SQRT: op = X_MATH; sub = M_SQRT; break;
    case OP_RSQRT: op = X_MATH; sub = M_RSQRT; break;
    case OP_RCP: op = X_MATH; sub = M_RCP; break;
    case OP_TANH: op = X_MATH; sub = M_TANH; break;
    case OP_SIN: op = X_MATH; sub = M_SIN; I->trig = 1; break;
    case OP_COS: op = X_MATH; sub = M_COS; I->trig = 1; break;
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
    I->local_decl = grow(I, I->local_decl, &I->caplocal, li + 1, sizeof *I->local_decl);
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
    free(I->smark);
    free(I->srow);
    free(I->scol_lo);
    free(I->scol_hi);
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
