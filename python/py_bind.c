/* py_bind.c — a call's arguments against the kernel's signature, in plain C
 * (no Python here, so the rules are testable and readable on their own).
 *
 * Order of the checks, each naming the argument and what is wrong:
 *   dtype (TypeError), scalar kind (TypeError), device, rank; then the dims
 *   are bound from the extents that name a dim alone (`bf16[M, K]`: M and K)
 *   and from integer scalars, a dim bound twice must agree; every dim must
 *   be bound; every extent and stride of the declaration, evaluated at the
 *   bound shape, must equal the tensor's (a size-1 extent may have any
 *   stride, as in torch); base addresses must meet the declared alignment
 *   and at least the kernel ABI's 16 bytes;
 *   dims must fit the kernel's 32-bit dim parameters; the assumes must hold.
 */
#include "py_priv.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "protect.h"

static Sym bare_dim(const Kernel *k, NodeId e)
{
    const Node *n = &k->nodes[e];
    if (n->op == OP_DIM)
        return n->name;
    if (n->op == OP_NAME && n->decl && k->nodes[n->decl].op == OP_DIM)
        return k->nodes[n->decl].name;
    return 0;
}

int py_sig_build(const CakeCtx *ctx, const Kernel *k, PySig *sig)
{
    memset(sig, 0, sizeof *sig);
    if (k->nargs > PY_MAX_ARGS)
        return 0;
    sig->nargs = k->nargs;
    for (uint32_t i = 0; i < k->nargs; i++) {
        const Node *a = &k->nodes[k->args[i]];
        const Node *t = &k->nodes[a->a];
        PySigArg *s = &sig->args[i];
        s->name = ir_symstr(ctx, a->name);
        s->dtype = (DType)t->dtype;
        s->tensor = t->op == OP_GTYPE;
        if (!s->tensor)
            continue;
        uint32_t rank = t->sub ? t->sub : t->n;
        s->rank = rank > IR_MAX_RANK ? IR_MAX_RANK : (int)rank;
        s->align = (int)ir_tensor_align(t);
        for (int j = 0; j < s->rank; j++)
            s->bare[j] = bare_dim(k, ir_list_at(k, t, (uint32_t)j));
    }
    return 1;
}

/* the source text of span s, or "" */
static void span_text(const CakeCtx *ctx, Span s, char *buf, size_t len)
{
    buf[0] = 0;
    if (s.file >= ctx->nfiles || s.hi < s.lo || s.hi > ctx->files[s.file].len)
        return;
    snprintf(buf, len, "%.*s", (int)(s.hi - s.lo), ctx->files[s.file].text + s.lo);
}

void py_sig_type_text(const CakeCtx *ctx, const Kernel *k, uint32_t i, char *buf, size_t len)
{
    const Node *a = &k->nodes[k->args[i]];
    span_text(ctx, k->nodes[a->a].span, buf, len);
    if (!buf[0])
        snprintf(buf, len, "%s", ir_dtypes[k->nodes[a->a].dtype].spelling);
}

/* ---- the checks ---------------------------------------------------------- */

typedef struct {
    CakeCtx *ctx;
    const Kernel *k;
    const PySig *sig;
    const PyArgVal *vals;
    ShapeEnv *env;
    char *err;
    size_t errlen;
    int from_arg[SHAPE_ENV_MAX], from_dim[SHAPE_ENV_MAX];  /* where env->b[i] came from */
} Binder;

static PyCheck fail(Binder *b, PyCheck kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static PyCheck fail(Binder *b, PyCheck kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->err, b->errlen, fmt, ap);
    va_end(ap);
    return kind;
}

static void fmt_tuple(const int64_t *v, int n, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", i ? ", " : "", (long long)v[i]);
    if (used < len)
        snprintf(buf + used, len - used, n == 1 ? ",)" : ")");
}

static const char *decl_text(Binder *b, uint32_t i, char *buf, size_t len)
{
    py_sig_type_text(b->ctx, b->k, i, buf, len);
    return buf;
}

static int is_int_kind(DType dt) { return ir_dtypes[dt].kind == 'i' || ir_dtypes[dt].kind == 'u'; }

/* dtype, scalar kind, device and rank of each argument */
static PyCheck check_kinds(Binder *b)
{
    const PyArgVal *first = NULL;
    char decl[160], shp[160];
    for (uint32_t i = 0; i < b->sig->nargs; i++) {
        const PySigArg *s = &b->sig->args[i];
        const PyArgVal *v = &b->vals[i];
        if (!s->tensor) {
            if (is_int_kind(s->dtype) && v->is_float)
                return fail(b, PY_TYPE_ERROR, "argument `%s`: got a float (%g), but the kernel "
                            "declares it %s", s->name, v->f, ir_dtypes[s->dtype].spelling);
            continue;
        }
        if (v->dtype != (int)s->dtype)
            return fail(b, PY_TYPE_ERROR, "argument `%s`: dtype %s, but the kernel declares %s",
                        s->name, v->dtype_name, decl_text(b, i, decl, sizeof decl));
        if (v->dev_type != PY_DEV_CUDA)
            return fail(b, PY_VALUE_ERROR, "argument `%s` is on the %s, but CAKE kernels take "
                        "CUDA tensors", s->name, v->dev_type == PY_DEV_CPU ? "CPU" : "wrong device");
        if (first && v->dev_index != first->dev_index)
            return fail(b, PY_VALUE_ERROR, "argument `%s` is on cuda:%d, but the earlier "
                        "tensors are on cuda:%d", s->name, v->dev_index, first->dev_index);
        first = first ? first : v;
        if (v->rank != s->rank) {
            fmt_tuple(v->shape, v->rank, shp, sizeof shp);
            return fail(b, PY_VALUE_ERROR, "argument `%s`: rank %d (shape %s), but the kernel "
                        "declares %s (rank %d)", s->name, v->rank, shp,
                        decl_text(b, i, decl, sizeof decl), s->rank);
        }
    }
    return PY_OK;
}

static int env_index(const ShapeEnv *env, Sym name)
{
    for (uint32_t i = 0; i < env->n; i++)
        if (env->b[i].name == name)
            return (int)i;
    return -1;
}

static PyCheck bind_one(Binder *b, Sym name, int64_t value, int arg, int dim)
{
    int at = env_index(b->env, name);
    if (at >= 0) {
        if (b->env->b[at].value == value)
            return PY_OK;
        int fa = b->from_arg[at];
        if (fa < 0)
            return fail(b, PY_VALUE_ERROR, "argument `%s`: dim %d is %lld, but `%s` is %lld",
                        b->sig->args[arg].name, dim, (long long)value,
                        ir_symstr(b->ctx, name), (long long)b->env->b[at].value);
        return fail(b, PY_VALUE_ERROR, "argument `%s`: dim %d is %lld, but %s = %lld from `%s` "
                    "dim %d", b->sig->args[arg].name, dim, (long long)value,
                    ir_symstr(b->ctx, name), (long long)b->env->b[at].value,
                    b->sig->args[fa].name, b->from_dim[at]);
    }
    if (!shape_env_set(b->env, name, value))
        return fail(b, PY_VALUE_ERROR, "the kernel has more dims than CAKE can bind (%d)",
                    SHAPE_ENV_MAX);
    b->from_arg[b->env->n - 1] = arg;
    b->from_dim[b->env->n - 1] = dim;
    return PY_OK;
}

static PyCheck bind_dims(Binder *b)
{
    PyCheck r;
    for (uint32_t i = 0; i < b->env->n; i++)
        b->from_arg[i] = -1;
    for (uint32_t i = 0; i < b->sig->nargs; i++) {
        const PySigArg *s = &b->sig->args[i];
        const PyArgVal *v = &b->vals[i];
        if (!s->tensor) {
            if (is_int_kind(s->dtype) &&
                (r = bind_one(b, b->k->nodes[b->k->args[i]].name, v->i, (int)i, -1)) != PY_OK)
                return r;
            continue;
        }
        for (int j = 0; j < s->rank; j++)
            if (s->bare[j] && (r = bind_one(b, s->bare[j], v->shape[j], (int)i, j)) != PY_OK)
                return r;
    }
    for (uint32_t j = 0; j < b->k->ndims; j++) {
        Sym d = b->k->nodes[b->k->dims[j]].name;
        int at = env_index(b->env, d);
        if (at < 0)
            return fail(b, PY_VALUE_ERROR, "dim `%s` is not the extent of any argument alone, so "
                        "no shape gives it a value", ir_symstr(b->ctx, d));
        if (b->env->b[at].value > INT32_MAX)
            return fail(b, PY_VALUE_ERROR, "dim %s = %lld does not fit the kernel's 32-bit dims",
                        ir_symstr(b->ctx, d), (long long)b->env->b[at].value);
    }
    return PY_OK;
}

static const char *shape_now(Binder *b, char *buf, size_t len)
{
    return shape_env_format(b->ctx, b->k, b->env, buf, len);
}

/* extents and strides of each tensor as the declaration says at this shape */
static PyCheck check_geometry(Binder *b)
{
    char decl[160], got[160], want[160], now[256];
    for (uint32_t i = 0; i < b->sig->nargs; i++) {
        const PySigArg *s = &b->sig->args[i];
        const PyArgVal *v = &b->vals[i];
        if (!s->tensor)
            continue;
        DType dt;
        int rank;
        int64_t shape[IR_MAX_RANK], stride[IR_MAX_RANK];
        if (!shape_arg_geometry(b->ctx, b->k, i, b->env, &dt, &rank, shape, stride))
            return fail(b, PY_VALUE_ERROR, "argument `%s`: %s does not evaluate at %s",
                        s->name, decl_text(b, i, decl, sizeof decl), shape_now(b, now, sizeof now));
        for (int j = 0; j < rank; j++)
            if (shape[j] != v->shape[j]) {
                fmt_tuple(v->shape, rank, got, sizeof got);
                fmt_tuple(shape, rank, want, sizeof want);
                return fail(b, PY_VALUE_ERROR, "argument `%s`: shape %s, but the kernel declares "
                            "%s, which is %s at %s", s->name, got,
                            decl_text(b, i, decl, sizeof decl), want, shape_now(b, now, sizeof now));
            }
        for (int j = 0; j < rank; j++)
            if (shape[j] > 1 && stride[j] != v->stride[j]) {
                fmt_tuple(v->stride, rank, got, sizeof got);
                fmt_tuple(stride, rank, want, sizeof want);
                return fail(b, PY_VALUE_ERROR, "argument `%s`: strides %s (in elements), but the "
                            "kernel needs %s%s", s->name, got, want,
                            b->k->nodes[b->k->nodes[b->k->args[i]].a].n > (uint32_t)rank
                                ? " (its `strides` clause)"
                                : " (row-major contiguous: pass x.contiguous())");
            }
        if (v->ptr % (RtPtr)s->align)
            return fail(b, PY_VALUE_ERROR, "argument `%s`: its address 0x%llx is not a multiple "
                        "of %d bytes, which %s requires%s", s->name, (unsigned long long)v->ptr,
                        s->align, decl_text(b, i, decl, sizeof decl),
                        s->align == IR_ABI_TENSOR_ALIGN ? " (the kernel ABI: every tensor's base is 16-byte aligned; "
                                                   "pass x.clone() for a view that starts inside an allocation)"
                                                 : "");
    }
    return PY_OK;
}

static PyCheck check_assumes(Binder *b)
{
    NodeId failed = 0;
    if (shape_env_assumes_hold(b->ctx, b->k, b->env, 0, &failed))
        return PY_OK;
    char text[200], now[256];
    const Node *n = &b->k->nodes[failed];
    span_text(b->ctx, n->span, text, sizeof text);
    uint32_t line = 0, col = 0, el, ec;
    if (n->span.file < b->ctx->nfiles)
        span_linecol(b->ctx, n->span, &line, &col, &el, &ec);
    return fail(b, PY_VALUE_ERROR, "the shape %s breaks `assume %s` of kernel `%s` (%s:%u)",
                shape_now(b, now, sizeof now), text, ir_symstr(b->ctx, b->k->name),
                n->span.file < b->ctx->nfiles ? b->ctx->files[n->span.file].path : "?", line);
}

static PyCheck bind_check(Binder *b)
{
    PyCheck r;
    if ((r = check_kinds(b)) != PY_OK || (r = bind_dims(b)) != PY_OK ||
        (r = check_geometry(b)) != PY_OK)
        return r;
    return check_assumes(b);
}

PyCheck py_bind_check(CakeCtx *ctx, const Kernel *k, const PySig *sig, const PyArgVal *vals,
                      ShapeEnv *env, char *err, size_t errlen)
{
    Binder b = {.ctx = ctx, .k = k, .sig = sig, .vals = vals, .env = env, .err = err,
                .errlen = errlen};
    int rc;
    err[0] = 0;
    CAKE_PROTECTED_OR(ctx, rc, (int)bind_check(&b), (int)PY_BUG);
    if (rc == PY_BUG) /* a bug below: E0005 recorded */
        snprintf(err, errlen, "internal error while binding the arguments: %s",
                 ctx->bug_msg ? ctx->bug_msg : "?");
    return (PyCheck)rc;
}
