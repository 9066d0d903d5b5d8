/* vutil.c — helpers the verifier's passes share: type interning and printing,
 * source text of nodes, diagnostics with follow-on suppression, tree walks. */
#include <stdarg.h>
#include <string.h>
#include "vpriv.h"

/* ---- types ------------------------------------------------------------ */

TypeId vt_intern(Ver *v, const Type *t)
{
    return ir_type_intern(v->ctx, v->k, t);
}

TypeId vt_scalar(Ver *v, DType dt)
{
    Type t;
    memset(&t, 0, sizeof t);
    t.kind = TK_SCALAR;
    t.dtype = (uint8_t)dt;
    t.lanes = 1;
    return vt_intern(v, &t);
}

TypeId vt_vector(Ver *v, DType dt, int lanes)
{
    if (lanes <= 1)
        return vt_scalar(v, dt);
    Type t;
    memset(&t, 0, sizeof t);
    t.kind = TK_VECTOR;
    t.dtype = (uint8_t)dt;
    t.lanes = (uint8_t)lanes;
    return vt_intern(v, &t);
}

int vt_is_untyped(const Type *t)
{
    return t->kind == TK_SCALAR && t->dtype == DT_NONE;
}

int vt_is_float_dt(DType dt) { return ir_dtypes[dt].kind == 'f'; }
int vt_is_int_dt(DType dt) { return ir_dtypes[dt].kind == 'i' || ir_dtypes[dt].kind == 'u'; }

int vt_is_int(const Type *t)
{
    if (t->kind == TK_STAGE)
        return 1;
    if (t->kind != TK_SCALAR)
        return 0;
    return t->dtype == DT_NONE ? t->layout == VT_UNTYPED_INT : vt_is_int_dt(t->dtype);
}

int64_t vt_elems(const Type *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->shape[i] < 0 || __builtin_mul_overflow(n, t->shape[i], &n))
            return -1;
    }
    return n;
}

int vt_same_expr(const Kernel *k, NodeId a, NodeId b)
{
    if (a == b)
        return 1;
    if (!a || !b)
        return 0;
    const Node *x = &k->nodes[a], *y = &k->nodes[b];
    if (x->op != y->op || x->n != y->n)
        return 0;
    switch (x->op) {
    case OP_INT: case OP_BOOL: return x->v.i == y->v.i;
    case OP_FLOAT: return x->v.f == y->v.f;
    case OP_CAST: if (x->dtype != y->dtype || x->lanes != y->lanes) return 0; break;
    case OP_NAME: return x->decl ? x->decl == y->decl : x->name == y->name;
    case OP_SPECIAL: return x->sub == y->sub;
    default: break;
    }
    if (!vt_same_expr(k, x->a, y->a) || !vt_same_expr(k, x->b, y->b))
        return 0;
    for (uint32_t i = 0; i < x->n; i++)
        if (!vt_same_expr(k, k->lists[x->list + i], k->lists[y->list + i]))
            return 0;
    return 1;
}

int vt_same_extent(const Ver *v, const Type *a, int i, const Type *b, int j)
{
    if (a->shape[i] >= 0 || b->shape[j] >= 0)
        return a->shape[i] == b->shape[j];
    return vt_same_expr(v->k, a->dims[i], b->dims[j]);
}

static void put_extent(Ver *v, char *buf, size_t size, const Type *t, int i)
{
    if (t->shape[i] >= 0)
        snprintf(buf, size, "%lld", (long long)t->shape[i]);
    else if (t->dims[i])
        snprintf(buf, size, "%s", v_text(v, t->dims[i]));
    else
        snprintf(buf, size, "?");
}

const char *vt_str(Ver *v, TypeId id)
{
    const Type *t = vt(v, id);
    const char *dt = ir_dtypes[t->dtype].spelling;
    char buf[256];
    size_t used = 0;
    buf[0] = 0;
    switch (t->kind) {
    case TK_UNKNOWN: return "?";
    case TK_VOID: return "nothing";
    case TK_SCALAR:
        if (t->dtype == DT_NONE)
            return t->layout == VT_UNTYPED_FLOAT ? "a float literal" : "an integer constant";
        return t->space == SP_GLOBAL ? ir_fmt(v->ctx, "%s (global element)", dt) : dt;
    case TK_VECTOR: return ir_fmt(v->ctx, "%sx%u", dt, t->lanes);
    case TK_MBARRIER: return t->rank ? ir_fmt(v->ctx, "mbarrier[%lld]", (long long)t->shape[0]) : "mbarrier";
    case TK_PIPELINE: return "pipeline";
    case TK_ROLE: return "role";
    case TK_STAGE: return "pipeline stage";
    default: break;
    }
    used += (size_t)snprintf(buf, sizeof buf, "%s%s[", t->kind == TK_TENSOR ? "global " :
                             t->space == SP_SHARED ? "shared " : "", dt);
    for (int i = 0; i < t->rank && used < sizeof buf - 40; i++) {
        char e[64];
        put_extent(v, e, sizeof e, t, i);
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", i ? ", " : "", e);
    }
    snprintf(buf + used, sizeof buf - used, "]%s%s%s", t->transposed ? "^T" : "",
             t->layout ? " layout " : "", t->layout ? ir_layout_names[t->layout] : "");
    return arena_strndup(&v->ctx->arena, buf, strlen(buf));
}

/* ---- messages ------------------------------------------------------ */

Span v_span(const Ver *v, NodeId n) { return n ? v->k->nodes[n].span : v->k->span; }

/* the source text of node n (clamped to its file) at *text, its length at
 * *len; 0 when n has no text */
static int source_of(const Ver *v, NodeId n, const char **text, uint32_t *len)
{
    Span s = v_span(v, n);
    if (s.file >= v->ctx->nfiles || s.hi <= s.lo)
        return 0;
    const SourceFile *f = &v->ctx->files[s.file];
    uint32_t hi = s.hi > f->len ? f->len : s.hi;
    uint32_t lo = s.lo > hi ? hi : s.lo;
    *text = f->text + lo;
    *len = hi - lo;
    return 1;
}

const char *v_text(Ver *v, NodeId n)
{
    const char *text;
    uint32_t len;
    if (!source_of(v, n, &text, &len))
        return "?";
    if (len > 60)  /* long expressions: the first line, shortened */
        return ir_fmt(v->ctx, "%.*s...", 57, text);
    return arena_strndup(&v->ctx->arena, text, len);
}

/* the exact source text of node n, never shortened: for fix-it replacements,
 * which tools apply as they are (v_text shortens long expressions with
 * `...` for messages) */
const char *v_source(Ver *v, NodeId n)
{
    const char *text;
    uint32_t len;
    if (!source_of(v, n, &text, &len))
        return "?";
    return arena_strndup(&v->ctx->arena, text, len);
}

const char *v_name(const Ver *v, NodeId n)
{
    if (!n)
        return "?";
    const Node *x = &v->k->nodes[n];
    return ir_symstr(v->ctx, x->name);
}

int v_err(const Ver *v, NodeId n) { return n && (v->k->nodes[n].flags & NF_ERROR); }

void v_mark(Ver *v, NodeId n)
{
    if (n)
        v->k->nodes[n].flags |= NF_ERROR;
}

Diag *v_report(Ver *v, DiagCode code, NodeId at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = ir_vfmt(v->ctx, fmt, ap);
    va_end(ap);
    if (ir_diag_info[code].severity == SEV_ERROR)
        v_mark(v, at);
    return diag_report(v->ctx, code, v_span(v, at), "%s", msg);
}

void v_note_decl(Ver *v, Diag *d, NodeId decl, const char *what)
{
    if (!decl)
        return;
    const Node *x = &v->k->nodes[decl];
    TypeId t = x->type;
    if (what)
        diag_note(v->ctx, d, x->span, "%s", what);
    else if (t && vt(v, t)->kind != TK_UNKNOWN)
        diag_note(v->ctx, d, x->span, "`%s` declared here as %s", ir_symstr(v->ctx, x->name),
                  vt_str(v, t));
    else
        diag_note(v->ctx, d, x->span, "`%s` declared here", ir_symstr(v->ctx, x->name));
}

NodeId v_root_decl(const Ver *v, NodeId e)
{
    for (int guard = 0; e && guard < 64; guard++) {
        const Node *n = &v->k->nodes[e];
        switch (n->op) {
        case OP_NAME: return n->decl;
        case OP_INDEX: case OP_TRANS: e = n->a; break;
        default: return 0;
        }
    }
    return 0;
}

const VRole *v_role(const Ver *v, NodeId role_node)
{
    for (uint32_t i = 0; i < v->nroles; i++)
        if (v->roles[i].node == role_node)
            return &v->roles[i];
    return NULL;
}

int v_const(const Ver *v, NodeId e, int64_t *out)
{
    return e && ce_const_int(v->ctx, v->k, e, out);
}

/* ---- walking ------------------------------------------------------- */

void v_walk(Ver *v, NodeId n, void (*fn)(Ver *, NodeId, void *), void *arg)
{
    if (!n || n >= v->k->nnodes)
        return;
    fn(v, n, arg);
    const Node *x = &v->k->nodes[n];
    NodeId kids[4] = {x->a, x->b, x->c, x->d};
    uint32_t list = x->list, cnt = x->n;
    for (int i = 0; i < 4; i++)
        v_walk(v, kids[i], fn, arg);
    for (uint32_t i = 0; i < cnt; i++)
        v_walk(v, v->k->lists[list + i], fn, arg);
}
