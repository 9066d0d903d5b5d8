/* interp.c — the fp64 reference interpreter (see interp.h): evaluation.
 *
 * interp_new (interp_compile.c) has compiled the reference block into a
 * compact tree of XNodes (interp_priv.h), so evaluation here is a switch over
 * small structs plus array indexing, with no allocation per element; errors
 * longjmp out of the evaluation. Also the binding of arguments (interp_run)
 * and the cost estimate without running (interp_cost). Dtype conversions are
 * in interp_fmt.c. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "interp_priv.h"

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

/* ---- dot products: sum(k in a .. b, f32(A[.., k, ..]) * f32(B[.., k, ..])) ----
 * The reference's hot loop (GEMM, attention). Evaluated without a call per
 * node: both operands are element reads (X_READV, or X_READ whose indices are
 * the sum's variable or do not involve it: `Q[h, off + i, d]`),
 * through exact f32/f64 conversions, so the loop walks two offsets by their
 * strides. Same order of additions as the generic loop: the same result. */

typedef struct {
    const HostTensor *t;
    int64_t off, step;
} DotSide;

static const XNode *dot_operand(const Interp *I, uint32_t xi)
{
    const XNode *x = &I->x[xi];
    while (x->op == X_CONV && (x->dt == DT_F32 || x->dt == DT_F64)) /* exact: ip_conv */
        x = &I->x[x->a];
    return x->op == X_READV || x->op == X_READ ? x : NULL;
}

/* 1 when expression xi may read variable slot var (an index that moves with
 * the sum's variable) */
static int mentions(const Interp *I, uint32_t xi, uint32_t var, int depth)
{
    if (!xi)
        return 0;
    const XNode *x = &I->x[xi];
    if (depth > 32)
        return 1;
    switch (x->op) {
    case X_CONST: case X_EXTENT: return 0;
    case X_VAR: return x->slot == var;
    case X_READV:
        for (uint32_t j = 0; j < x->n; j++)
            if (I->xl[x->list + j] == var)
                return 1;
        return 0;
    case X_READ:
        for (uint32_t j = 0; j < x->n; j++)
            if (mentions(I, I->xl[x->list + j], var, depth + 1))
                return 1;
        return 0;
    case X_SUM: case X_RMAX: case X_RMIN: case X_SEQ: case X_FOR: case X_IF: case X_SETVAR: case X_STORE:
    case X_LOCAL:
        return 1; /* not an index form this walk follows */
    default:
        return mentions(I, x->a, var, depth + 1) || mentions(I, x->b, var, depth + 1) ||
               mentions(I, x->c, var, depth + 1) || mentions(I, x->d, var, depth + 1);
    }
}

/* the offsets of r at k = lo and their step per k; 0 when an index is out of
 * bounds or not an integer (the generic loop then reports it) */
static int dot_side(Interp *I, const XNode *r, uint32_t var, int64_t lo, int64_t last,
                    DotSide *d)
{
    const HostTensor *t = &I->t[r->slot];
    const uint32_t *l = &I->xl[r->list];
    d->t = t;
    d->off = d->step = 0;
    for (uint32_t j = 0; j < r->n; j++) {
        int64_t a = lo, b = last;
        int moves = r->op == X_READV ? l[j] == var
                    : I->x[l[j]].op == X_VAR && I->x[l[j]].slot == var;
        if (!moves && r->op == X_READ && mentions(I, l[j], var, 0))
            return 0; /* an index that moves otherwise (k + 1, 2 * k): the generic loop */
        if (!moves) {
            double v = r->op == X_READV ? I->vars[l[j]] : ev(I, l[j]);
            if (v != trunc(v) || !(v > -1.0) || v >= (double)t->shape[j])
                return 0;
            a = b = (int64_t)v;
        } else {
            d->step += t->stride[j];
        }
        if (a < 0 || b >= t->shape[j])
            return 0;
        d->off += a * t->stride[j];
    }
    return 1;
}

static double dot_elem(const HostTensor *t, int64_t off)
{
    if (t->data)
        return t->data[off];
    if (t->dtype == DT_BF16) {
        uint16_t h;
        memcpy(&h, (const char *)t->enc + off * 2, 2);
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    return interp_decode(t->dtype, (const char *)t->enc + off * interp_elem_bytes(t->dtype));
}

/* an fp8 tensor given in its encoding: decoded through a table of its 256 values */
static int byte_float(const HostTensor *t)
{
    return !t->data && (t->dtype == DT_E4M3 || t->dtype == DT_E5M2);
}

static double dot_bytes(const DotSide *a, const DotSide *b, int64_t n)
{
    double va[256], vb[256];
    for (uint32_t i = 0; i < 256; i++) {
        va[i] = ir_float_value(a->t->dtype, i);
        vb[i] = ir_float_value(b->t->dtype, i);
    }
    const uint8_t *pa = (const uint8_t *)a->t->enc + a->off, *pb = (const uint8_t *)b->t->enc + b->off;
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += va[pa[i * a->step]] * vb[pb[i * b->step]];
    return s;
}

/* the sum x over [lo, hi) as a dot product; 0 when it is not one */
static int dot(Interp *I, const XNode *x, double lo, double hi, double *acc)
{
    const XNode *m = &I->x[x->c];
    if (x->op != X_SUM || m->op != X_MUL || lo != trunc(lo) || !(hi > lo) || hi - lo > 0x1p52)
        return 0;
    const XNode *ra = dot_operand(I, m->a), *rb = dot_operand(I, m->b);
    int64_t l0 = (int64_t)lo, n = (int64_t)ceil(hi - lo);
    DotSide a, b;
    if (!ra || !rb || !dot_side(I, ra, x->slot, l0, l0 + n - 1, &a) ||
        !dot_side(I, rb, x->slot, l0, l0 + n - 1, &b))
        return 0;
    double s = 0;
    if (a.t->data && b.t->data) {
        const double *pa = a.t->data + a.off, *pb = b.t->data + b.off;
        for (int64_t i = 0; i < n; i++)
            s += pa[i * a.step] * pb[i * b.step];
    } else if (n >= 64 && byte_float(a.t) && byte_float(b.t)) {
        s = dot_bytes(&a, &b, n);
    } else {
        for (int64_t i = 0; i < n; i++)
            s += dot_elem(a.t, a.off + i * a.step) * dot_elem(b.t, b.off + i * b.step);
    }
    I->vars[x->slot] = (double)(l0 + n - 1);
    I->flops += (uint64_t)n * ((uint64_t)x->cnt + m->cnt);
    *acc = s;
    return 1;
}

static double reduce(Interp *I, const XNode *x)
{
    double lo = ev(I, x->a), hi = ev(I, x->b);
    double acc = x->op == X_SUM ? 0 : x->op == X_RMAX ? -INFINITY : INFINITY;
    if (I->costmode)
        return 0;
    if (hi > lo)
        steps(I, x, (uint64_t)(hi - lo));
    if (dot(I, x, lo, hi, &acc))
        return acc;
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

/* element off of a tensor: from its fp64 data, or decoded from its encoding */
static double elem(const HostTensor *t, int64_t off)
{
    if (t->data)
        return t->data[off];
    return interp_decode(t->dtype, (const char *)t->enc + off * interp_elem_bytes(t->dtype));
}

/* a read in the cost estimate: 0, except from sequence offsets (`offsets LO ..
 * HI`), spaced evenly over LO .. HI - 1 so that each of B sequences is about
 * (HI - 1 - LO) / B long (a varlen reference's loops get their real size) */
static double cost_read(Interp *I, const XNode *x)
{
    if (!I->ramp || x->slot >= I->k->nargs || x->n != 1 || I->ramp[2 * x->slot + 1] <= 0)
        return 0;
    double n = (double)I->t[x->slot].shape[0];
    double i = x->op == X_READV ? I->vars[I->xl[x->list]] : ev(I, I->xl[x->list]);
    double at = n > 1 ? i / (n - 1) : 0;
    at = at < 0 ? 0 : at > 1 ? 1 : at;
    return floor(I->ramp[2 * x->slot] + at * I->ramp[2 * x->slot + 1]);
}

static double ev(Interp *I, uint32_t xi)
{
    const XNode *x = &I->x[xi];
    switch (x->op) {
    case X_CONST: return x->v;
    case X_VAR: return I->vars[x->slot];
    case X_READV: {
        if (I->costmode)
            return cost_read(I, x);
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
        return elem(t, off);
    }
    case X_READ:
        if (I->costmode)
            return cost_read(I, x);
        return elem(&I->t[x->slot], offset(I, x));
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
    case X_SHL: /* two's complement: shifting a negative value left is defined on its bits */
        return (double)(int64_t)((uint64_t)(int64_t)ev(I, x->a) << ((int64_t)ev(I, x->b) & 63));
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
    case X_CONV: return ip_conv((DType)x->dt, x->sub, ev(I, x->a));
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

static void exec(Interp *I, uint32_t xi);

/* a sampled loop: the outer loop over the sampled rows (in its range and on
 * its step), the column loop over the current row's columns */
static void exec_sampled(Interp *I, const XNode *x, int mark, double lo, double hi, double st)
{
    if (mark == 1) {
        for (uint32_t si = 0; si < I->nsamp; si++) {
            double r = (double)I->srow[si];
            if (r < lo || r >= hi || fmod(r - lo, st) != 0)
                continue;
            steps(I, x, 1);
            I->scur = si;
            I->vars[x->slot] = r;
            exec(I, x->d);
        }
        return;
    }
    double c0 = I->scol_hi ? (double)I->scol_lo[I->scur] : lo;
    double c1 = I->scol_hi ? (double)I->scol_hi[I->scur] : hi;
    double i = lo;
    if (c0 > lo)
        i = lo + ceil((c0 - lo) / st) * st;
    for (; i < hi && i < c1; i += st) {
        steps(I, x, 1);
        I->vars[x->slot] = i;
        exec(I, x->d);
    }
}

double ip_eval(Interp *I, uint32_t xi) { return ev(I, xi); }

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
        if (I->nsamp && I->smark[xi]) {
            exec_sampled(I, x, I->smark[xi], lo, hi, st);
            return;
        }
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
        I->vars[x->slot] = x->dt ? ip_conv((DType)x->dt, I->x[x->a].kind, v) : v;
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
        t->data[off] = ip_conv_store((DType)x->dt, I->x[x->a].kind, v);
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

int ip_bind(Interp *I, const ShapeEnv *env, HostTensor *args) { return bind(I, env, args); }

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
        if (I->arg_rank[i] >= 0 && I->role[i] && args[i].n && !args[i].data &&
            (!args[i].enc || (I->role[i] & INTERP_WRITTEN)))
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
        cost->trig = I->trig;
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
    double *ramp = calloc(2 * (size_t)k->nargs + 2, sizeof *ramp);
    for (uint32_t i = 0; ramp && i < k->nargs; i++) {
        const Node *g = &k->nodes[k->nodes[k->args[i]].a];
        int64_t lo, hi;
        if (ir_arg_offsets(k, i) && shape_eval_int(I->ctx, k, g->b, env, &lo) &&
            shape_eval_int(I->ctx, k, g->c, env, &hi) && hi - 1 > lo) {
            ramp[2 * i] = (double)lo;
            ramp[2 * i + 1] = (double)(hi - 1 - lo);
        }
    }
    I->ramp = ramp;
    I->costmode = 1;
    if (setjmp(I->jb)) {
        I->costmode = 0;
        I->t = NULL;
        I->ramp = NULL;
        free(ramp);
        free(geo);
        return 0;
    }
    cost->flops = ce(I, I->root, 1);
    I->ramp = NULL;
    free(ramp);
    cost->bytes = arg_bytes(I, geo);
    cost->sum_len = I->sum_len;
    cost->exact = 0;
    I->costmode = 0;
    I->t = NULL;
    free(geo);
    return 1;
}
