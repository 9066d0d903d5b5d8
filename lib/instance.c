/* instance.c — kernel instances (cake.h, "Instances"): a kernel of a verified
 * module, for one target, at one binding of its parameters, copied out of the
 * module, bound, lowered to TIR-L with its launch plan and compiled. The
 * module is never written: every instance works on its own copy
 * (ir_kernel_clone), so one verified module serves any number of instances.
 *
 * Building one, in order (each step once, the instance remembers how far it
 * got; the cache below makes asking again a lookup):
 *   bind      the copy's bound params read as literals of their values; it is
 *             typed there (ver_kernel_types) when `check` already verified that
 *             combination of declared values, verified there (ver_kernel_bound,
 *             its diagnostics noted "with --set ...") when it did not; at the
 *             defaults it keeps the module's types
 *   lower     pass_run_all on the copy alone: TIR-L and its launch plan
 *   compile   PTX (NVIDIA) or a code object (AMD) through the plugin, kept in
 *             the context's arena
 * Also here, the one home of kernel lookup (cake_find_kernel). */
#include <stdlib.h>
#include <string.h>
#include "cake_priv.h"
#include "passes.h"
#include "verify.h"

/* the cache: every instance built in this context, newest first */
typedef struct LibInstances {
    CakeInstance **items; uint32_t n, cap;
    uint64_t *file_hash; uint32_t capfiles;   /* source_hash per file (0: not taken yet) */
} LibInstances;

/* ---- kernel lookup ------------------------------------------------------------ */

Kernel *lib_kernel(const CakeCtx *ctx, const Module *m, const char *name, Target tg)
{
    for (uint32_t i = 0; m && i < m->nkernels; i++) {
        Kernel *k = m->kernels[i];
        if (name ? !strcmp(ir_symstr(ctx, k->name), name)
                 : tg == TG__COUNT || ir_kernel_targets(k, tg))
            return k;
    }
    return NULL;
}

static Kernel *find_kernel(CakeCtx *ctx, const Module *m, const char *name, Target tg)
{
    Kernel *k = lib_kernel(ctx, m, name, tg);
    if (k)
        return k;
    Diag *d;
    if (name) {
        d = diag_report(ctx, E0970, IR_NOSPAN, "no kernel named `%s` in the file", name);
        const char *names = "";
        for (uint32_t i = 0; i < m->nkernels && i < 8; i++)
            names = ir_fmt(ctx, "%s%s`%s`", names, i ? ", " : "", ir_symstr(ctx, m->kernels[i]->name));
        if (m->nkernels)
            diag_help(ctx, d, "`--kernel` names one of the file's kernels: %s", names);
    } else if (tg == TG__COUNT) {
        d = diag_report(ctx, E0970, IR_NOSPAN, "the file has no kernel");
        diag_help(ctx, d, "write a `kernel NAME { ... }` in it");
    } else {
        d = diag_report(ctx, E0970, IR_NOSPAN, "no kernel of the file lists target %s",
                        ir_target_names[tg]);
        diag_help(ctx, d, "add the target to the kernel's `target` clause, or pass another --target");
    }
    return NULL;
}

Kernel *lib_find_kernel(CakeCtx *ctx, const Module *m, const char *name, Target tg)
{
    return find_kernel(ctx, m, name, tg);
}

int cake_find_kernel(CakeCtx *ctx, const Module *m, const char *name, Target tg, Kernel **out)
{
    int rc;
    *out = NULL;
    CAKE_PROTECTED(ctx, rc, (*out = find_kernel(ctx, m, name, tg)) == NULL);
    return rc;
}

/* ---- the key ---------------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211u;
    return h;
}

/* the value of every parameter of k under the bindings (the others at their
 * defaults), into vals; 0 when one does not evaluate (bind-params reports it) */
static int param_values(CakeCtx *ctx, const Kernel *k, const CeEnv *set, int64_t *vals)
{
    for (uint32_t i = 0; i < k->nparams; i++) {
        const Node *p = &k->nodes[k->params[i]];
        if (!ce_env_get(set, p->name, &vals[i]) && !ce_eval_int(ctx, k, p->a, set, &vals[i]))
            return 0;
    }
    return 1;
}

static LibInstances *instances(CakeCtx *ctx)
{
    if (!ctx->instances)
        ctx->instances = arena_alloc(&ctx->arena, sizeof *ctx->instances);
    return ctx->instances;
}

/* the hash of m's source text; a file's text never changes once added, so it
   is hashed once per context (every cake_instance call asks: 10-25 us a file) */
static uint64_t source_hash(CakeCtx *ctx, const Module *m)
{
    if (m->file >= ctx->nfiles)
        return (uint64_t)(uintptr_t)m;
    LibInstances *c = instances(ctx);
    c->file_hash = arena_grow(&ctx->arena, c->file_hash, &c->capfiles, m->file + 1, sizeof *c->file_hash);
    uint64_t *h = &c->file_hash[m->file];
    if (!*h) {   /* a text whose hash is 0 is hashed at every call: the same value */
        const SourceFile *f = &ctx->files[m->file];
        *h = fnv(14695981039346656037u, f->text, f->len);
    }
    return *h;
}

static int same_key(const CakeInstance *a, const CakeInstance *b)
{
    return a->key == b->key && a->source_hash == b->source_hash && a->source->name == b->source->name &&
           a->tg == b->tg && a->nvalues == b->nvalues &&
           !memcmp(a->values, b->values, a->nvalues * sizeof *a->values);
}

static CakeInstance *cache_find(CakeCtx *ctx, const CakeInstance *want)
{
    LibInstances *c = ctx->instances;
    for (uint32_t i = 0; c && i < c->n; i++)
        if (same_key(c->items[i], want))
            return c->items[i];
    return NULL;
}

static void cache_add(CakeCtx *ctx, CakeInstance *inst)
{
    LibInstances *c = instances(ctx);
    c->items = arena_grow(&ctx->arena, c->items, &c->cap, c->n + 1, sizeof *c->items);
    c->items[c->n++] = inst;
}

uint32_t cake_instance_count(const CakeCtx *ctx)
{
    return ctx->instances ? ctx->instances->n : 0;
}

/* ---- bind ------------------------------------------------------------------------- */

/* the bindings of set that name params of k (dims, scalars and other kernels'
 * params are left out, and so is a derived param bound to the value its
 * default gives, `T = BM / WM * 32`), validated against their declared
 * values (E0006) */
static int params_of(CakeCtx *ctx, const Kernel *k, const ShapeEnv *set, ShapeEnv *out)
{
    ShapeEnv all;
    shape_env_clear(&all);
    for (uint32_t i = 0; set && i < set->n; i++)
        for (uint32_t j = 0; j < k->nparams; j++)
            if (k->nodes[k->params[j]].name == set->b[i].name)
                shape_env_set(&all, set->b[i].name, set->b[i].value);
    CeEnv view = shape_env_view(&all);
    shape_env_clear(out);
    for (uint32_t i = 0; i < all.n; i++) {
        const Node *p = NULL;
        for (uint32_t j = 0; j < k->nparams && !p; j++)
            if (k->nodes[k->params[j]].name == all.b[i].name)
                p = &k->nodes[k->params[j]];
        int64_t dflt, v;
        if (!ce_const_int(ctx, k, p->a, &dflt) && ce_eval_int(ctx, k, p->a, &view, &v) &&
            v == all.b[i].value)
            continue;
        shape_env_set(out, all.b[i].name, all.b[i].value);
    }
    view = shape_env_view(out);
    return ver_set_allowed(ctx, (Kernel *)k, &view);
}

/* points every param of k that set binds away from its default at a literal
 * of its value (the way verifier/params.c binds a combination); 1 if any */
static int bind_literals(CakeCtx *ctx, Kernel *k, const ShapeEnv *set)
{
    int rebound = 0;
    for (uint32_t i = 0; i < k->nparams; i++) {
        NodeId pid = k->params[i];
        int64_t v, dflt;
        if (!shape_env_get(set, k->nodes[pid].name, &v) ||
            (ce_param_own_default(ctx, k, pid, &dflt) && dflt == v))
            continue;
        Span at = k->nodes[pid].a ? k->nodes[k->nodes[pid].a].span : k->nodes[pid].span;
        NodeId lit = ir_node(ctx, k, OP_INT, at);
        k->nodes[lit].v.i = v;
        k->nodes[pid].a = lit;
        rebound = 1;
    }
    return rebound;
}

static void untype(Kernel *k)
{
    for (NodeId id = 1; id < k->nnodes; id++) {
        k->nodes[id].type = 0;
        k->nodes[id].flags &= (uint16_t)~NF_ERROR;
    }
}

/* the instance's own copy of its kernel, bound and typed; NULL after errors */
static Kernel *bind(CakeCtx *ctx, CakeInstance *inst)
{
    const Kernel *src = inst->source;
    Kernel *k = ir_kernel_clone(ctx, src);
    CeEnv view = shape_env_view(&inst->set);
    uint32_t errors = ctx->nerrors;
    int checked = ver_binding_checked(ctx, src, &view);
    if (!checked) {
        /* a combination `check` never saw: verify it at the source level, each
         * param that declares values fixed at its own (one combination) */
        ShapeEnv fixed = inst->set;
        for (uint32_t i = 0; i < k->nparams; i++) {
            const Node *p = &k->nodes[k->params[i]];
            if (p->b || p->n)
                shape_env_set(&fixed, p->name, inst->values[i]);
        }
        CeEnv fview = shape_env_view(&fixed);
        VerBind vb = {.set = &fview};
        untype(k);
        /* the cost model asks for many bound variants: the coverage check (its
           cost grows with the output) waits until the instance is lowered */
        int defer = ctx->defer_coverage;
        ctx->defer_coverage = 1;
        ver_kernel_bound(ctx, k, &vb);
        ctx->defer_coverage = defer;
        inst->coverage_pending = 1;
        bind_literals(ctx, k, &inst->set);
    } else if (bind_literals(ctx, k, &inst->set) || src->types_bound) {
        untype(k);
        ver_kernel_types(ctx, k);
    }
    k->types_bound = 0;
    return ctx->nerrors == errors ? k : NULL;
}

/* ---- the stages -------------------------------------------------------------------- */

/* the output coverage check bind() deferred: 0, or 1 with its diagnostics */
static int cover(CakeCtx *ctx, CakeInstance *inst)
{
    if (!inst->coverage_pending)
        return 0;
    uint32_t errors = ctx->nerrors;
    ver_coverage(ctx, inst->k);
    if (ctx->nerrors > errors)
        return 1;
    inst->coverage_pending = 0;
    return 0;
}

int cake_instance_cover(CakeCtx *ctx, const CakeInstance *inst)
{
    int rc;
    CAKE_PROTECTED(ctx, rc, cover(ctx, (CakeInstance *)inst));
    return rc;
}

static int lower(CakeCtx *ctx, CakeInstance *inst)
{
    if (cover(ctx, inst))   /* before any code exists */
        return 1;
    /* the passes rewrite their own copy: the bound one stays for the cost model */
    inst->bound = inst->k;
    inst->k = ir_kernel_clone(ctx, inst->bound);
    Module one = {&inst->k, 1, inst->m->file};
    CeEnv view = shape_env_view(&inst->set);
    return pass_run_all(ctx, &one, inst->k, inst->tg, &view) ? 1 : 0;
}

static int compile(CakeCtx *ctx, CakeInstance *inst)
{
    const CgPlugin *cg = lib_codegen(ctx);
    if (!cg)
        return 3;
    Module one = {&inst->k, 1, inst->m->file};
    CgOptions opt = {.opt_level = 3};
    char *image = NULL;
    size_t len = 0;
    int rc = cg->emit(ctx, &one, inst->k, inst->tg,
                      tg_vendor(inst->tg) == VENDOR_NVIDIA ? CG_EMIT_PTX : CG_EMIT_HSACO, &opt, &image, &len);
    if (rc == 2) /* cg_emit caught a bug itself, to free its LLVM objects */
        cake_bug_caught(ctx);
    if (rc) {
        free(image);
        return rc;
    }
    char *copy = arena_alloc(&ctx->arena, len + 1);
    memcpy(copy, image, len);
    free(image);
    inst->image = copy;
    inst->len = len;
    return 0;
}

/* takes inst from the stage it reached to `stage` */
static int advance(CakeCtx *ctx, CakeInstance *inst, CakeInstStage stage)
{
    int rc = 0;
    if (inst->stage < CAKE_INST_LOWERED && stage >= CAKE_INST_LOWERED) {
        if ((rc = lower(ctx, inst)))
            return rc;
        inst->stage = CAKE_INST_LOWERED;
    }
    if (inst->stage < CAKE_INST_COMPILED && stage >= CAKE_INST_COMPILED) {
        if ((rc = compile(ctx, inst)))
            return rc;
        inst->stage = CAKE_INST_COMPILED;
    }
    return 0;
}

static int instance(CakeCtx *ctx, const Module *m, const Kernel *k, Target tg, const ShapeEnv *set,
                    CakeInstStage stage, const CakeInstance **out)
{
    if (!ir_kernel_targets(k, tg)) {
        Diag *d = diag_report(ctx, E0970, k->span, "kernel `%s` does not list target %s",
                              ir_symstr(ctx, k->name), ir_target_names[tg]);
        diag_help(ctx, d, "add the target to the kernel's `target` clause, or pass another --target");
        return 1;
    }
    CakeInstance want;
    memset(&want, 0, sizeof want);
    want.m = m;
    want.source = k;
    want.tg = tg;
    if (!params_of(ctx, k, set, &want.set))
        return 1;
    CeEnv view = shape_env_view(&want.set);
    int64_t local[SHAPE_ENV_MAX];   /* a lookup allocates nothing; a new instance copies them */
    want.values = k->nparams <= SHAPE_ENV_MAX ? local
                                              : arena_alloc(&ctx->arena, k->nparams * sizeof *want.values);
    want.nvalues = k->nparams;
    int keyed = param_values(ctx, k, &view, want.values);
    want.source_hash = source_hash(ctx, m);
    const char *name = ir_symstr(ctx, k->name);
    uint64_t h = fnv(want.source_hash, name, strlen(name));
    h = fnv(h, &tg, sizeof tg);
    want.key = fnv(h, want.values, want.nvalues * sizeof *want.values);
    CakeInstance *inst = keyed ? cache_find(ctx, &want) : NULL;
    if (!inst) {
        inst = arena_alloc(&ctx->arena, sizeof *inst);
        *inst = want;
        inst->values = arena_alloc(&ctx->arena, (want.nvalues + 1) * sizeof *inst->values);
        memcpy(inst->values, want.values, want.nvalues * sizeof *inst->values);
        if (!(inst->k = bind(ctx, inst)))
            return 1;
        inst->stage = CAKE_INST_BOUND;
        if (keyed)
            cache_add(ctx, inst);
    }
    int rc = advance(ctx, inst, stage);
    if (rc)
        return rc;
    *out = inst;
    return 0;
}

int cake_instance_env(CakeCtx *ctx, const Module *m, const Kernel *k, Target tg, const ShapeEnv *set,
                      CakeInstStage stage, const CakeInstance **out)
{
    int rc;
    *out = NULL;
    CAKE_PROTECTED(ctx, rc, instance(ctx, m, k, tg, set, stage, out));
    if (rc)
        *out = NULL;
    return rc;
}

static int instance_text(CakeCtx *ctx, const Module *m, const char *kernel, Target tg, const char *set,
                         CakeInstStage stage, const CakeInstance **out)
{
    Kernel *k = find_kernel(ctx, m, kernel, tg);
    if (!k)
        return 1;
    ShapeEnv env;
    if (!cake_parse_bindings(ctx, k, set, NULL, &env))
        return 1;
    return instance(ctx, m, k, tg, &env, stage, out);
}

int cake_instance(CakeCtx *ctx, const Module *m, const char *kernel, Target tg, const char *set,
                  CakeInstStage stage, const CakeInstance **out)
{
    int rc;
    *out = NULL;
    CAKE_PROTECTED(ctx, rc, instance_text(ctx, m, kernel, tg, set, stage, out));
    if (rc)
        *out = NULL;
    return rc;
}
