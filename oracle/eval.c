/* eval.c — shape environments and integer evaluation over them (see eval.h). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "eval.h"

void shape_env_clear(ShapeEnv *env)
{
    env->n = 0;
}

int shape_env_set(ShapeEnv *env, Sym name, int64_t value)
{
    for (uint32_t i = 0; i < env->n; i++)
        if (env->b[i].name == name) {
            env->b[i].value = value;
            return 1;
        }
    if (env->n == SHAPE_ENV_MAX)
        return 0;
    env->b[env->n].name = name;
    env->b[env->n].value = value;
    env->n++;
    return 1;
}

CeEnv shape_env_view(const ShapeEnv *env)
{
    CeEnv v = {.b = env ? env->b : NULL, .n = env ? env->n : 0};
    return v;
}

int shape_env_get(const ShapeEnv *env, Sym name, int64_t *out)
{
    CeEnv v = shape_env_view(env);
    return ce_env_get(&v, name, out);
}

static int scalar_int_arg(const Kernel *k, const Node *d)
{
    if (d->op != OP_ARG || !d->a)
        return 0;
    const Node *t = &k->nodes[d->a];
    return t->op == OP_TYPE && t->n == 0 && t->lanes <= 1 &&
           (ir_dtypes[t->dtype].kind == 'i' || ir_dtypes[t->dtype].kind == 'u' ||
            ir_dtypes[t->dtype].kind == 'b');
}

/* consteval's hook for an integer scalar argument inside an expression
 * (`assume n <= N`): its value bound by name, as a dim's is */
static int scalar_arg_value(const CeEnv *v, NodeId decl, int64_t *out)
{
    const Kernel *k = v->u;
    return decl < k->nnodes && scalar_int_arg(k, &k->nodes[decl]) &&
           ce_env_get(v, k->nodes[decl].name, out);
}

int shape_eval_int(const CakeCtx *ctx, const Kernel *k, NodeId e, const ShapeEnv *env,
                   int64_t *out)
{
    if (!e || e >= k->nnodes)
        return 0;
    const Node *n = &k->nodes[e];
    if (n->op == OP_DIM)
        return shape_env_get(env, n->name, out);
    if (n->op == OP_NAME && n->decl && n->decl < k->nnodes) {
        const Node *d = &k->nodes[n->decl];
        if (d->op == OP_DIM || scalar_int_arg(k, d))
            return shape_env_get(env, d->name, out);
    }
    CeEnv v = shape_env_view(env);
    v.decl = scalar_arg_value;
    v.u = (void *)(uintptr_t)k;
    return ce_eval_int(ctx, k, e, &v, out);
}

static int known_name(const Kernel *k, Sym s)
{
    for (uint32_t i = 0; i < k->ndims; i++)
        if (k->nodes[k->dims[i]].name == s)
            return 1;
    for (uint32_t i = 0; i < k->nparams; i++)
        if (k->nodes[k->params[i]].name == s)
            return 1;
    for (uint32_t i = 0; i < k->nargs; i++)
        if (k->nodes[k->args[i]].name == s && scalar_int_arg(k, &k->nodes[k->args[i]]))
            return 1;
    return 0;
}

int shape_env_parse(CakeCtx *ctx, const Kernel *k, ShapeEnv *env, const char *spec,
                    char *err, size_t errlen)
{
    const char *p = spec ? spec : "";
    for (;;) {
        while (*p == ',' || *p == ';' || isspace((unsigned char)*p))
            p++;
        if (!*p)
            return 1;
        const char *name = p;
        while (isalnum((unsigned char)*p) || *p == '_' || (*p == '.' && p > name))
            p++;
        size_t len = (size_t)(p - name);
        while (isspace((unsigned char)*p))
            p++;
        if (!len || *p != '=') {
            snprintf(err, errlen, "expected NAME=VALUE at '%s'", name);
            return 0;
        }
        p++;
        while (isspace((unsigned char)*p))
            p++;
        int neg = *p == '-';
        if (neg)
            p++;
        if (!isdigit((unsigned char)*p)) {
            snprintf(err, errlen, "'%.*s' needs an integer value", (int)len, name);
            return 0;
        }
        int64_t v = 0;
        while (isdigit((unsigned char)*p) || *p == '_') {
            if (*p != '_') {
                if (v > (INT64_MAX - 9) / 10) {
                    snprintf(err, errlen, "value of '%.*s' is too large", (int)len, name);
                    return 0;
                }
                v = v * 10 + (*p - '0');
            }
            p++;
        }
        Sym s = ir_intern(ctx, name, len);
        if (s == ir_intern_cstr(ctx, SHAPE_SM_COUNT) && (neg || v < 1)) {
            snprintf(err, errlen, "'%s' needs a positive value", SHAPE_SM_COUNT);
            return 0;
        }
        if (!known_name(k, s) && s != ir_intern_cstr(ctx, SHAPE_SM_COUNT)) {
            snprintf(err, errlen, "'%.*s' is not a dim, parameter or integer argument of kernel %s",
                     (int)len, name, ir_symstr(ctx, k->name));
            return 0;
        }
        if (!shape_env_set(env, s, neg ? -v : v)) {
            snprintf(err, errlen, "too many bindings (at most %d)", SHAPE_ENV_MAX);
            return 0;
        }
    }
}

int64_t shape_env_sm_count(CakeCtx *ctx, const ShapeEnv *env)
{
    int64_t v;
    return shape_env_get(env, ir_intern_cstr(ctx, SHAPE_SM_COUNT), &v) && v > 0 ? v : 0;
}

void shape_env_add_defaults(const Kernel *k, ShapeEnv *env)
{
    int64_t v;
    for (uint32_t i = 0; i < k->nshapes; i++)
        if (!shape_env_get(env, k->shapes[i].name, &v))
            shape_env_set(env, k->shapes[i].name, k->shapes[i].value);
}

int shape_env_bind_params(CakeCtx *ctx, const Kernel *k, ShapeEnv *env)
{
    int ok = 1;
    for (uint32_t i = 0; i < k->nparams; i++) {
        const Node *p = &k->nodes[k->params[i]];
        int64_t v;
        if (shape_env_get(env, p->name, &v))
            continue;
        if (!p->a || !shape_eval_int(ctx, k, p->a, env, &v)) {
            diag_report(ctx, E0953, p->span, "parameter '%s' has no value",
                        ir_symstr(ctx, p->name));
            ok = 0;
            continue;
        }
        shape_env_set(env, p->name, v);
    }
    return ok;
}

int shape_env_complete(CakeCtx *ctx, const Kernel *k, const ShapeEnv *env, int report)
{
    int ok = 1;
    for (uint32_t i = 0; i < k->ndims; i++) {
        const Node *d = &k->nodes[k->dims[i]];
        int64_t v;
        if (shape_env_get(env, d->name, &v))
            continue;
        ok = 0;
        if (report) {
            Diag *g = diag_report(ctx, E0953, d->span, "dim '%s' has no value",
                                  ir_symstr(ctx, d->name));
            diag_help(ctx, g, "give it one: --shape %s=...", ir_symstr(ctx, d->name));
        }
    }
    return ok;
}

int shape_env_assumes_hold(CakeCtx *ctx, const Kernel *k, const ShapeEnv *env, int report,
                           NodeId *failed)
{
    for (uint32_t i = 0; i < k->nassumes; i++) {
        int64_t v;
        if (!shape_eval_int(ctx, k, k->assumes[i], env, &v) || v)
            continue;
        if (failed)
            *failed = k->assumes[i];
        if (report) {
            char buf[256];
            diag_report(ctx, E0961, k->nodes[k->assumes[i]].span,
                        "this assume does not hold for %s",
                        shape_env_format(ctx, k, env, buf, sizeof buf));
        }
        return 0;
    }
    return 1;
}

char *shape_env_format(const CakeCtx *ctx, const Kernel *k, const ShapeEnv *env, char *buf,
                       size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (uint32_t pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < env->n; i++) {
            int is_dim = 0, is_param = 0;
            for (uint32_t j = 0; j < k->ndims; j++)
                is_dim |= k->nodes[k->dims[j]].name == env->b[i].name;
            for (uint32_t j = 0; j < k->nparams; j++)
                is_param |= k->nodes[k->params[j]].name == env->b[i].name;
            if ((pass == 0) != is_dim || (pass == 1 && is_param))
                continue;
            int w = snprintf(buf + used, len - used, "%s%s=%lld", used ? ", " : "",
                             ir_symstr(ctx, env->b[i].name), (long long)env->b[i].value);
            if (w < 0 || (size_t)w >= len - used)
                return buf;
            used += (size_t)w;
        }
    return buf;
}

int shape_arg_geometry(const CakeCtx *ctx, const Kernel *k, uint32_t i, const ShapeEnv *env,
                       DType *dtype, int *rank, int64_t shape[IR_MAX_RANK],
                       int64_t stride[IR_MAX_RANK])
{
    const Node *a = &k->nodes[k->args[i]];
    if (!a->a)
        return 0;
    const Node *t = &k->nodes[a->a];
    *dtype = (DType)t->dtype;
    if (t->op != OP_GTYPE) {
        *rank = 0;
        return 1;
    }
    uint32_t r = t->sub ? t->sub : t->n;
    if (r > IR_MAX_RANK || r > t->n)
        return 0;
    *rank = (int)r;
    for (uint32_t j = 0; j < r; j++)
        if (!shape_eval_int(ctx, k, ir_list_at(k, t, j), env, &shape[j]) || shape[j] < 0)
            return 0;
    if (t->n >= 2 * r) {
        for (uint32_t j = 0; j < r; j++)
            if (!shape_eval_int(ctx, k, ir_list_at(k, t, r + j), env, &stride[j]) ||
                stride[j] < 0)
                return 0;
    } else {
        int64_t s = 1;
        for (uint32_t j = r; j-- > 0;) {
            stride[j] = s;
            if (__builtin_mul_overflow(s, shape[j] ? shape[j] : 1, &s))
                return 0;
        }
    }
    return 1;
}
