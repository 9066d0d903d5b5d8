/* params.c — a kernel verified under each combination of its parameters'
 * declared values (`<CAUSAL = 0 in {0, 1}>`, docs/tir.md 4.1) and under the
 * bindings of `cakec check --set/--shape` (VerBind): one ver_kernel run per
 * variant, the diagnostics of all runs merged. A diagnostic that several runs
 * report (same code, place and message) is kept once; one that not every run
 * reports gets a note saying under which values it occurs ("with CAUSAL=1").
 * A variant binds a parameter by pointing its declaration at a literal of the
 * value (ce_eval reads parameters through their default), then restores it.
 * What no value changes (the tree's roles and reference marks, the reference
 * block's check) is done once for all runs (VerTree, vpriv.h).
 *
 * E0006 a --set value outside the declared values; E0007 more combinations
 * than VER_MAX_VARIANTS (that many are checked, the defaults among them);
 * E0008 a default outside its declared values; E0009 declared values that
 * are not constant integers, an empty range, or more than VER_MAX_VALUES. */
#include <string.h>
#include "vpriv.h"

enum { VER_MAX_VALUES = 64, VER_MAX_VARIANTS = 64, VER_MAX_AXES = 8 };

/* one axis of the variants: a parameter and its values, or (param 0) the
 * kernel's `shape` clause against the --shape binding */
typedef struct {
    NodeId param;
    int64_t vals[VER_MAX_VALUES];
    NodeId lits[VER_MAX_VALUES];   /* a literal per value (0: the declared default) */
    uint32_t n;
} Axis;

typedef struct {
    CakeCtx *ctx;
    Kernel *k;
    Axis ax[VER_MAX_AXES];
    uint32_t nax, nvariants;
    uint32_t off;                             /* run r checks variant off + r (off > 0: capped) */
    int no_lits;                              /* only validating: make no literal nodes */
    ShapeDefault *shapes; uint32_t nshapes;   /* the --shape variant's shape clause */
    const char *shape_text;
} Variants;

/* an empty set of variants of kernel k, in the compilation's arena */
static Variants *variants_new(CakeCtx *ctx, Kernel *k)
{
    Variants *vs = arena_alloc(&ctx->arena, sizeof *vs);
    memset(vs, 0, sizeof *vs);
    vs->ctx = ctx;
    vs->k = k;
    return vs;
}

/* ---- declared values ------------------------------------------------------ */

static int has_value(const Axis *a, int64_t v)
{
    for (uint32_t i = 0; i < a->n; i++)
        if (a->vals[i] == v)
            return 1;
    return 0;
}

static const char *values_text(CakeCtx *ctx, const Axis *a)
{
    const char *s = "";
    for (uint32_t i = 0; i < a->n && i < 8; i++)
        s = ir_fmt(ctx, "%s%s%lld", s, i ? ", " : "", (long long)a->vals[i]);
    return a->n > 8 ? ir_fmt(ctx, "%s, ... (%u values)", s, a->n) : s;
}

static int bad_values(CakeCtx *ctx, const Kernel *k, const Node *p, NodeId at, const char *why)
{
    Diag *d = diag_report(ctx, E0009, at ? k->nodes[at].span : p->span,
                          "the values of param '%s' %s", ir_symstr(ctx, p->name), why);
    diag_help(ctx, d, "list constant integers, `in {0, 1}`, or give a non-empty range, `in 1 .. 9` "
              "(the end excluded), of at most %d values", VER_MAX_VALUES);
    return 0;
}

/* the values param p declares, into a (none declared: a->n stays 0) */
static int declared_values(CakeCtx *ctx, Kernel *k, NodeId pid, Axis *a)
{
    const Node *p = &k->nodes[pid];
    a->param = pid;
    a->n = 0;
    if (p->b) {
        int64_t lo, hi;
        if (!ce_const_int(ctx, k, p->b, &lo) || !ce_const_int(ctx, k, p->c, &hi))
            return bad_values(ctx, k, p, 0, "are not compile-time integers");
        if (hi <= lo)
            return bad_values(ctx, k, p, 0, ir_fmt(ctx, "are an empty range (%lld .. %lld; the end is "
                                                "excluded)", (long long)lo, (long long)hi));
        if (hi - lo > VER_MAX_VALUES)
            return bad_values(ctx, k, p, 0, ir_fmt(ctx, "are %lld values", (long long)(hi - lo)));
        for (int64_t v = lo; v < hi; v++)
            a->vals[a->n++] = v;
        return 1;
    }
    for (uint32_t i = 0; i < p->n; i++) {
        NodeId e = ir_list_at(k, p, i);
        int64_t v;
        if (!ce_const_int(ctx, k, e, &v))
            return bad_values(ctx, k, p, e, "are not compile-time integers");
        if (a->n == VER_MAX_VALUES)
            return bad_values(ctx, k, p, 0, ir_fmt(ctx, "are more than %d", VER_MAX_VALUES));
        if (!has_value(a, v))
            a->vals[a->n++] = v;
    }
    return 1;
}

/* ---- the variants ---------------------------------------------------------- */

/* a literal holding v where the default of p was written */
static NodeId literal(CakeCtx *ctx, Kernel *k, NodeId pid, int64_t v)
{
    NodeId lit = ir_node(ctx, k, OP_INT, k->nodes[k->nodes[pid].a].span);
    k->nodes[lit].v.i = v;
    return lit;
}

/* the axis of param pid: the --set value, or its declared values with the
 * default last (so the last run leaves the types of the default instance) */
static int param_axis(Variants *vs, NodeId pid, const CeEnv *set, Axis *a)
{
    CakeCtx *ctx = vs->ctx;
    Kernel *k = vs->k;
    const Node *p = &k->nodes[pid];
    int64_t dflt, v;
    if (!declared_values(ctx, k, pid, a))
        return 0;
    int has_dflt = ce_const_int(ctx, k, p->a, &dflt);
    if (ce_env_get(set, p->name, &v)) {
        if (a->n && !has_value(a, v)) {
            Diag *d = diag_report(ctx, E0006, p->span, "--set %s=%lld is not one of the values param "
                                  "'%s' declares (%s)", ir_symstr(ctx, p->name), (long long)v,
                                  ir_symstr(ctx, p->name), values_text(ctx, a));
            diag_help(ctx, d, "pick one of them, or add %lld to the declaration", (long long)v);
            return 0;
        }
        a->n = 1;
        a->vals[0] = v;
        int64_t own;   /* a derived default (`1 + 128 / HD`) is bound by a literal whatever its value */
        int same = ce_param_own_default(ctx, k, pid, &own) && own == v;
        a->lits[0] = vs->no_lits || same ? 0 : literal(ctx, k, pid, v);
        return 1;
    }
    if (!a->n)
        return 1;
    if (!has_dflt || !has_value(a, dflt)) {
        Diag *d = diag_report(ctx, E0008, k->nodes[p->a].span, "the default of param '%s' is "
                              "not one of the values it declares (%s)", ir_symstr(ctx, p->name),
                              values_text(ctx, a));
        diag_help(ctx, d, "make the default one of them, or add it to the values");
        return 0;
    }
    for (uint32_t i = 0; i + 1 < a->n; i++)
        if (a->vals[i] == dflt) {
            a->vals[i] = a->vals[a->n - 1];
            a->vals[a->n - 1] = dflt;
        }
    for (uint32_t i = 0; i < a->n; i++)
        a->lits[i] = a->vals[i] == dflt ? 0 : literal(ctx, k, pid, a->vals[i]);
    return 1;
}

int ver_set_allowed(CakeCtx *ctx, Kernel *k, const CeEnv *set)
{
    uint32_t errors = ctx->nerrors;
    Variants vs;   /* on the stack, and no literal nodes: the kernel is left as it is */
    memset(&vs, 0, sizeof vs);
    vs.ctx = ctx;
    vs.k = k;
    vs.no_lits = 1;
    for (uint32_t i = 0; i < k->nparams; i++) {
        Axis a;
        int64_t v;
        memset(&a, 0, sizeof a);
        if (ce_env_get(set, k->nodes[k->params[i]].name, &v))
            param_axis(&vs, k->params[i], set, &a);
    }
    return ctx->nerrors == errors;
}

int ver_binding_checked(CakeCtx *ctx, const Kernel *k, const CeEnv *set)
{
    uint64_t total = 1;
    uint32_t axes = 0;
    for (uint32_t i = 0; i < k->nparams; i++) {
        const Node *p = &k->nodes[k->params[i]];
        Axis a;
        memset(&a, 0, sizeof a);
        int64_t v, dflt;
        int has_dflt = ce_const_int(ctx, k, p->a, &dflt);
        if (p->b || p->n) { /* declared values: an axis of the combinations */
            uint32_t nd = ctx->ndiags, ne = ctx->nerrors;
            int ok = declared_values(ctx, (Kernel *)k, k->params[i], &a);
            ctx->ndiags = nd;   /* check reported these already */
            ctx->nerrors = ne;
            if (!ok || !has_dflt || !has_value(&a, dflt))
                return 0;
            if (a.n > 1) {
                total *= a.n;
                axes++;
            }
        }
        int64_t own;
        if (!ce_env_get(set, p->name, &v) || (ce_param_own_default(ctx, k, k->params[i], &own) && v == own))
            continue;
        if (!a.n || !has_value(&a, v))
            return 0;
    }
    return total <= VER_MAX_VARIANTS && axes < VER_MAX_AXES;
}

/* the shape clause with the --shape bindings of dims over it */
static void shape_axis(Variants *vs, const VerBind *bind)
{
    CakeCtx *ctx = vs->ctx;
    Kernel *k = vs->k;
    uint32_t n = k->nshapes;
    ShapeDefault *sh = arena_alloc(&ctx->arena, (n + bind->nshape + 1) * sizeof *sh);
    memcpy(sh, k->shapes, n * sizeof *sh);
    const char *text = "";
    for (uint32_t i = 0; i < bind->nshape; i++) {
        uint32_t j = 0;
        while (j < n && sh[j].name != bind->shape[i].name)
            j++;
        if (j == n)
            n++;
        sh[j] = (ShapeDefault){bind->shape[i].name, bind->shape[i].value, k->span};
        text = ir_fmt(ctx, "%s%s%s=%lld", text, i ? "," : "", ir_symstr(ctx, bind->shape[i].name),
                      (long long)bind->shape[i].value);
    }
    vs->shapes = sh;
    vs->nshapes = n;
    vs->shape_text = text;
    Axis *a = &vs->ax[vs->nax++];
    memset(a, 0, sizeof *a);
    a->n = 2;           /* 0: the kernel's own `shape` clause, 1: --shape */
    a->vals[1] = 1;
}

/* value index of axis i in variant v (mixed radix, axis 0 fastest) */
static uint32_t digit(const Variants *vs, uint32_t v, uint32_t i)
{
    for (uint32_t j = 0; j < i; j++)
        v /= vs->ax[j].n;
    return v % vs->ax[i].n;
}

/* binds variant v: params at their values, the shape clause */
static void bind_variant(Variants *vs, uint32_t v, NodeId *dflt, ShapeDefault *shapes0, uint32_t nshapes0)
{
    Kernel *k = vs->k;
    k->shapes = shapes0;
    k->nshapes = nshapes0;
    for (uint32_t i = 0; i < vs->nax; i++) {
        const Axis *a = &vs->ax[i];
        uint32_t d = digit(vs, v, i);
        if (!a->param) {
            if (d) {
                k->shapes = vs->shapes;
                k->nshapes = vs->nshapes;
            }
            continue;
        }
        k->nodes[a->param].a = a->lits[d] ? a->lits[d] : dflt[i];
    }
}

/* ---- merging the runs' diagnostics -------------------------------------------- */

static int same_diag(const Diag *a, const Diag *b)
{
    return a->code == b->code && a->span.file == b->span.file && a->span.lo == b->span.lo &&
           a->span.hi == b->span.hi && !strcmp(a->msg, b->msg);
}

/* drops the diagnostics of run v that an earlier run reported; masks[i]: the
 * runs that reported diagnostic first + i */
static void merge_run(CakeCtx *ctx, uint32_t first, uint32_t start, uint64_t *masks, uint32_t v)
{
    uint32_t w = start;
    for (uint32_t i = start; i < ctx->ndiags; i++) {
        Diag *d = &ctx->diags[i];
        uint32_t j = first;
        while (j < start && !same_diag(&ctx->diags[j], d))
            j++;
        if (j < start) {
            masks[j - first] |= (uint64_t)1 << v;
            if (d->severity == SEV_ERROR)
                ctx->nerrors--;
            else if (d->severity == SEV_WARNING)
                ctx->nwarnings--;
            continue;
        }
        masks[w - first] = (uint64_t)1 << v;
        ctx->diags[w++] = *d;
    }
    ctx->ndiags = w;
}

/* "CAUSAL=1", "STAGES=2 or 3, CAUSAL=1", "--shape M=64": the variants of mask,
 * when they are all combinations of some values per axis; NULL otherwise */
static const char *box_text(Variants *vs, uint64_t mask, NodeId *at)
{
    CakeCtx *ctx = vs->ctx;
    uint64_t per[VER_MAX_AXES] = {0};
    uint32_t count = 0, prod = 1;
    for (uint32_t r = 0; r < vs->nvariants; r++)
        if (mask >> r & 1) {
            count++;
            for (uint32_t i = 0; i < vs->nax; i++)
                per[i] |= (uint64_t)1 << digit(vs, vs->off + r, i);
        }
    for (uint32_t i = 0; i < vs->nax; i++)
        prod *= (uint32_t)__builtin_popcountll(per[i]);
    if (prod != count)
        return NULL;
    const char *s = "";
    for (uint32_t i = 0; i < vs->nax; i++) {
        const Axis *a = &vs->ax[i];
        if ((uint32_t)__builtin_popcountll(per[i]) == a->n)
            continue;
        const char *part = "";
        for (uint32_t j = 0, nj = 0; j < a->n; j++)
            if (per[i] >> j & 1)
                part = ir_fmt(ctx, "%s%s%lld", part, nj++ ? " or " : "", (long long)a->vals[j]);
        if (!a->param)
            part = per[i] & 2 ? ir_fmt(ctx, "at --shape %s", vs->shape_text) : "at the `shape` clause";
        else
            part = ir_fmt(ctx, "%s=%s", ir_symstr(ctx, vs->k->nodes[a->param].name), part);
        if (!*at)
            *at = a->param;
        s = ir_fmt(ctx, "%s%s%s", s, *s ? ", " : "", part);
    }
    return s;
}

static const char *variant_text(Variants *vs, uint32_t v)
{
    const char *s = "";
    for (uint32_t i = 0; i < vs->nax; i++) {
        const Axis *a = &vs->ax[i];
        uint32_t d = digit(vs, v, i);
        if (a->n < 2)
            continue;
        const char *part = a->param ? ir_fmt(vs->ctx, "%s=%lld", ir_symstr(vs->ctx, vs->k->nodes[a->param].name),
                                             (long long)a->vals[d])
                         : d ? ir_fmt(vs->ctx, "at --shape %s", vs->shape_text) : "at the `shape` clause";
        s = ir_fmt(vs->ctx, "%s%s%s", s, *s ? ", " : "", part);
    }
    return s;
}

/* the note on each merged diagnostic that not every run reported */
static void note_variants(Variants *vs, uint32_t first, const uint64_t *masks)
{
    CakeCtx *ctx = vs->ctx;
    uint64_t all = vs->nvariants == 64 ? ~(uint64_t)0 : ((uint64_t)1 << vs->nvariants) - 1;
    for (uint32_t i = first; i < ctx->ndiags; i++) {
        uint64_t m = masks[i - first];
        if (m == all)
            continue;
        NodeId at = 0;
        const char *s = box_text(vs, m, &at);
        if (!s) {
            s = "";
            for (uint32_t r = 0, n = 0; r < vs->nvariants; r++)
                if (m >> r & 1)
                    s = n++ < 4 ? ir_fmt(ctx, "%s%s%s", s, *s ? "; " : "", variant_text(vs, vs->off + r))
                                : n == 5 ? ir_fmt(ctx, "%s; ...", s) : s;
        }
        for (uint32_t a = 0; !at && a < vs->nax; a++)
            at = vs->ax[a].param;
        diag_note(ctx, &ctx->diags[i], at ? vs->k->nodes[at].span : vs->k->span, "only %s",
                  *s == 'a' ? s : ir_fmt(ctx, "with %s", s));
    }
}

/* a note on every diagnostic of a run bound by --set to values other than the defaults */
static void note_set(Variants *vs, uint32_t first)
{
    CakeCtx *ctx = vs->ctx;
    const char *s = "";
    NodeId at = 0;
    for (uint32_t i = 0; i < vs->nax; i++) {
        const Axis *a = &vs->ax[i];
        if (a->param && a->n == 1 && a->lits[0]) {
            s = ir_fmt(ctx, "%s%s%s=%lld", s, *s ? "," : "", ir_symstr(ctx, vs->k->nodes[a->param].name),
                       (long long)a->vals[0]);
            at = at ? at : a->param;
        }
    }
    if (!at)
        return;
    for (uint32_t i = first; i < ctx->ndiags; i++)
        diag_note(ctx, &ctx->diags[i], vs->k->nodes[at].span, "with --set %s", s);
}

/* ---- the entry point ------------------------------------------------------------ */

static void reset_kernel(Kernel *k)
{
    for (NodeId id = 1; id < k->nnodes; id++) {
        k->nodes[id].type = 0;
        k->nodes[id].flags &= (uint16_t)~NF_ERROR;
    }
}

static void too_many(Variants *vs, uint64_t total, int dropped)
{
    NodeId at = 0;
    for (uint32_t i = 0; i < vs->nax && !at; i++)
        at = vs->ax[i].n > 1 ? vs->ax[i].param : 0;
    Diag *d = diag_report(vs->ctx, E0007, at ? vs->k->nodes[at].span : vs->k->span, "kernel `%s` has %s%llu "
                          "combinations of declared parameter values; only %d of them were checked (the "
                          "defaults among them)", ir_symstr(vs->ctx, vs->k->name), dropped ?
                          "more than " : "", (unsigned long long)total, VER_MAX_VARIANTS);
    diag_help(vs->ctx, d, "fix some parameters with `cakec check --set P=V`, or declare fewer values");
}

uint32_t ver_kernel_bound(CakeCtx *ctx, Kernel *k, const VerBind *bind)
{
    uint32_t errors = ctx->nerrors;
    Variants *vs = variants_new(ctx, k);
    uint64_t total = 1;
    int failed = 0, dropped = 0;
    for (uint32_t i = 0; i < k->nparams; i++) {
        Axis a;
        memset(&a, 0, sizeof a);
        if (!param_axis(vs, k->params[i], bind ? bind->set : NULL, &a)) {
            failed = 1;
            continue;
        }
        if (a.n == 0 || (a.n == 1 && !a.lits[0]))
            continue;
        if (vs->nax == VER_MAX_AXES - 1) { /* left at its default; E0007 says so */
            dropped = 1;
            continue;
        }
        vs->ax[vs->nax++] = a;
        total *= a.n;
    }
    if (failed)
        return ctx->nerrors - errors;
    if (bind && bind->nshape) {
        shape_axis(vs, bind);
        total *= 2;
    }
    if (!vs->nax)
        return ver_kernel(ctx, k);
    if (total > VER_MAX_VARIANTS || dropped)
        too_many(vs, total, dropped);
    vs->off = total > VER_MAX_VARIANTS ? (uint32_t)(total - VER_MAX_VARIANTS) : 0;
    vs->nvariants = total > VER_MAX_VARIANTS ? VER_MAX_VARIANTS : (uint32_t)total;
    NodeId dflt[VER_MAX_AXES];
    for (uint32_t i = 0; i < vs->nax; i++)
        dflt[i] = vs->ax[i].param ? k->nodes[vs->ax[i].param].a : 0;
    ShapeDefault *shapes0 = k->shapes;
    uint32_t nshapes0 = k->nshapes, first = ctx->ndiags;
    uint64_t *masks = NULL;
    uint32_t capmasks = 0;
    /* what no value changes is done once (VerTree), before the runs merged */
    VerTree tree;
    ver_tree(ctx, k, &tree);
    first = ctx->ndiags;
    /* the default combination is the last (each axis lists its default last) */
    for (uint32_t r = 0; r < vs->nvariants; r++) {
        uint32_t start = ctx->ndiags;
        if (r)
            reset_kernel(k);
        bind_variant(vs, vs->off + r, dflt, shapes0, nshapes0);
        ver_kernel_tree(ctx, k, &tree);
        masks = arena_grow(&ctx->arena, masks, &capmasks, ctx->ndiags - first + 1, sizeof *masks);
        merge_run(ctx, first, start, masks, r);
    }
    note_variants(vs, first, masks);
    note_set(vs, first);
    k->types_bound = 0;
    for (uint32_t i = 0; i < vs->nax; i++)
        if (vs->ax[i].param) {
            k->types_bound |= vs->ax[i].n == 1 && vs->ax[i].lits[0];
            k->nodes[vs->ax[i].param].a = dflt[i];
        }
    k->shapes = shapes0;
    k->nshapes = nshapes0;
    return ctx->nerrors - errors;
}

uint32_t ver_verify_bound(CakeCtx *ctx, Module *m, const Kernel *which, const VerBind *bind)
{
    uint32_t errors = ctx->nerrors;
    for (uint32_t i = 0; i < m->nkernels; i++)
        ver_kernel_bound(ctx, m->kernels[i], m->kernels[i] == which ? bind : NULL);
    return ctx->nerrors - errors;
}

/* ---- the combinations for `run --check` --------------------------------------- */

uint32_t ver_param_combos(CakeCtx *ctx, Kernel *k, const char **out, uint32_t max)
{
    Variants *vs = variants_new(ctx, k);
    uint32_t nd = ctx->ndiags, ne = ctx->nerrors, nw = ctx->nwarnings;
    uint64_t total = 1;
    for (uint32_t i = 0; i < k->nparams && vs->nax < VER_MAX_AXES; i++) {
        Axis a;
        int64_t dflt;
        memset(&a, 0, sizeof a);
        if (!declared_values(ctx, k, k->params[i], &a) || a.n < 2 ||
            !ce_const_int(ctx, k, k->nodes[k->params[i]].a, &dflt) || !has_value(&a, dflt))
            continue;
        for (uint32_t j = 0; j + 1 < a.n; j++) /* the default last */
            if (a.vals[j] == dflt) {
                a.vals[j] = a.vals[a.n - 1];
                a.vals[a.n - 1] = dflt;
            }
        vs->ax[vs->nax++] = a;
        total *= a.n;
    }
    ctx->ndiags = nd; /* `check` reported what is wrong with the declarations */
    ctx->nerrors = ne;
    ctx->nwarnings = nw;
    if (!vs->nax || !max)
        return 0;
    vs->nvariants = total > max ? max : (uint32_t)total;
    vs->off = (uint32_t)(total - vs->nvariants); /* the default combination is the last */
    for (uint32_t r = 0; r < vs->nvariants; r++) {
        const char *s = "";
        for (uint32_t i = 0; i < vs->nax; i++) {
            const Axis *a = &vs->ax[i];
            s = ir_fmt(ctx, "%s%s%s=%lld", s, i ? "," : "", ir_symstr(ctx, k->nodes[a->param].name),
                       (long long)a->vals[digit(vs, vs->off + r, i)]);
        }
        out[r] = s;
    }
    return vs->nvariants;
}
