/* builder.c — the shared LLVM builder layer: target setup, module and
 * kernel creation, small LLVM helpers, verification, the O3 pipeline and
 * emission (PTX text, objects, code objects). cg_emit is the entry point. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <llvm-c/Analysis.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <llvm-c/Support.h>
#include "cg_int.h"

int cg_link_hsaco(CakeCtx *ctx, const CgOptions *opt, const char *obj, size_t objlen,
                  char **out, size_t *outlen); /* lld.c */

static pthread_once_t targets_once = PTHREAD_ONCE_INIT;

static void init_targets_once(void)
{
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    /* LLVM's own options: ours first, then CAKE_LLVM_ARGS, for investigating
     * the code generator (e.g. "-time-passes", "-print-after=sroa"); read once.
     * -cgpp-huge-func=0: CodeGenPrepare re-visits only the blocks it changed,
     * as it does for functions of more than 10000 blocks, instead of the whole
     * function after every change: a tile kernel is one function of a few
     * blocks with thousands of instructions, where the whole-function restarts
     * were 45% of the back end (gemm_sm80: 45 ms of 100) for the same PTX
     * (bench/RESULTS.md, "compile speed" of 2026-12-01).
     * -vectorize-slp=false: vectors are explicit in TIR (`x[i : +VEC]`, f32x8,
     * packed bf16x2); the SLP vectorizer's search over unrolled tile code (its
     * horizontal reductions over every accumulator phi) was 9% of a
     * flash-attention compile, for the same PTX and AMDGCN on every case of
     * tests/instances/ptx_cases.txt. (The C API's
     * LLVMPassBuilderOptionsSetSLPVectorization does not turn it off.) */
    static char buf[1024];
    static const char *argv[35];
    int argc = 0;
    argv[argc++] = "cakec";
    argv[argc++] = "-cgpp-huge-func=0";
    argv[argc++] = "-vectorize-slp=false";
    const char *extra = getenv("CAKE_LLVM_ARGS");
    if (extra && *extra) {
        snprintf(buf, sizeof buf, "%s", extra);
        for (char *t = strtok(buf, " "); t && argc < 34; t = strtok(NULL, " "))
            argv[argc++] = t;
    }
    LLVMParseCommandLineOptions(argc, argv, NULL);
}

static void init_targets(void)
{
    pthread_once(&targets_once, init_targets_once);
}

static const CgTarget *target_hooks(Target tg)
{
    return tg_vendor(tg) == VENDOR_AMD ? &cg_amdgpu : &cg_nvptx;
}

int cg_kernel_targets(const Kernel *k, Target tg)
{
    return ir_kernel_targets(k, tg);
}

/* ---- small helpers ------------------------------------------------------ */

LLVMTypeRef cg_scalar_type(Cg *cg, DType dt)
{
    switch (dt) {
    case DT_BOOL: return cg->ti1;
    case DT_I8: case DT_U8: case DT_E4M3: case DT_E5M2: return cg->ti8;
    case DT_I16: case DT_U16: return cg->ti16;
    case DT_I32: case DT_U32: return cg->ti32;
    case DT_I64: case DT_U64: return cg->ti64;
    case DT_F16: return cg->tf16;
    case DT_BF16: return cg->tbf16;
    case DT_TF32: case DT_F32: return cg->tf32;
    case DT_F64: return cg->tf64;
    default: return cg->ti32;
    }
}

LLVMTypeRef cg_llvm_type(Cg *cg, CgTy t)
{
    LLVMTypeRef s = cg_scalar_type(cg, (DType)t.dt);
    return t.lanes > 1 ? LLVMVectorType(s, t.lanes) : s;
}

LLVMValueRef cg_i32(Cg *cg, int64_t v)
{
    return LLVMConstInt(cg->ti32, (unsigned long long)v, 1);
}

LLVMValueRef cg_i64(Cg *cg, int64_t v)
{
    return LLVMConstInt(cg->ti64, (unsigned long long)v, 1);
}

/* Calls intrinsic `name` (e.g. "llvm.fma") with the given overload types. */
LLVMValueRef cg_intrin(Cg *cg, const char *name, LLVMTypeRef *ov, unsigned nov,
                       LLVMValueRef *args, unsigned nargs)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id)
        ir_bug(cg->ctx, "unknown LLVM intrinsic %s", name);
    LLVMValueRef f = LLVMGetIntrinsicDeclaration(cg->mod, id, ov, nov);
    LLVMTypeRef ft = LLVMIntrinsicGetType(cg->lc, id, ov, nov);
    return LLVMBuildCall2(cg->b, ft, f, args, nargs, "");
}

/* Calls a function by name (declaring it), e.g. a non-overloaded intrinsic. */
LLVMValueRef cg_call(Cg *cg, const char *name, LLVMTypeRef ret, LLVMValueRef *args, unsigned n)
{
    LLVMTypeRef small[8];
    LLVMTypeRef *ps = n <= 8 ? small : arena_alloc(&cg->ctx->arena, n * sizeof *ps);
    for (unsigned i = 0; i < n; i++)
        ps[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef ft = LLVMFunctionType(ret, ps, n, 0);
    LLVMValueRef f = LLVMGetNamedFunction(cg->mod, name);
    if (!f)
        f = LLVMAddFunction(cg->mod, name, ft);
    return LLVMBuildCall2(cg->b, ft, f, args, n, "");
}

LLVMValueRef cg_asm(Cg *cg, LLVMTypeRef ret, const char *text, const char *cons,
                    LLVMValueRef *args, unsigned n, int side_effects)
{
    LLVMTypeRef small[8];
    LLVMTypeRef *ps = n <= 8 ? small : arena_alloc(&cg->ctx->arena, n * sizeof *ps);
    for (unsigned i = 0; i < n; i++)
        ps[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef ft = LLVMFunctionType(ret, ps, n, 0);
    LLVMValueRef f = LLVMGetInlineAsm(ft, text, strlen(text), cons, strlen(cons), side_effects,
                                      0, LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(cg->b, ft, f, args, n, "");
}

LLVMValueRef cg_alloca(Cg *cg, LLVMTypeRef ty, const char *name)
{
    return LLVMBuildAlloca(cg->ab, ty, name);
}

LLVMBasicBlockRef cg_block(Cg *cg, const char *name)
{
    return LLVMAppendBasicBlockInContext(cg->lc, cg->fn, name);
}

LLVMValueRef cg_shared_global(Cg *cg, LLVMTypeRef ty, const char *name, uint32_t align)
{
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(cg->mod, ty, name, cg->t->shared_as);
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetInitializer(g, LLVMGetUndef(ty));
    LLVMSetAlignment(g, align < 16 ? 16 : align);
    return g;
}

void cg_unsupported(Cg *cg, NodeId at, const char *what)
{
    Node *n = ir_get(cg->k, at);
    cg->failed = 1;
    if (n->flags & NF_ERROR)
        return;
    n->flags |= NF_ERROR;
    Diag *d = diag_report(cg->ctx, E0902, n->span, "not supported by code generation yet: %s", what);
    diag_help(cg->ctx, d, "docs/tirl.md lists what the lowering passes and code generation "
                          "cover");
}

int cg_const_int(Cg *cg, NodeId e, int64_t *out)
{
    return ce_const_int(cg->ctx, cg->k, e, out);
}

/* ---- kernels ---------------------------------------------------------------- */

static int arg_written(Kernel *k, NodeId arg)
{
    for (uint32_t i = 1; i < k->nnodes; i++) {
        Node *n = &k->nodes[i];
        NodeId ref = 0;
        if (n->op == OP_STORE || n->op == OP_ASSIGN || (n->op == OP_LOAD && n->sub)) /* sub: an atomic */
            ref = n->a;
        else if (n->op == OP_TMA_STORE)
            ref = n->a;
        while (ref && (k->nodes[ref].op == OP_INDEX || k->nodes[ref].op == OP_TRANS))
            ref = k->nodes[ref].a;
        if (ref && k->nodes[ref].op == OP_NAME && k->nodes[ref].decl == arg)
            return 1;
    }
    return 0;
}

static int in_reference(Kernel *k, NodeId id)
{
    (void)k;
    (void)id;
    return 0;
}

/* every tensor map of the plan prefetched at the entry, by every thread (a hint:
 * the copies of one warp are one request): the first TMA copy through a map
 * otherwise waits for the descriptor's fetch from the parameter space */
static void prefetch_tmaps(Cg *cg, const KPlan *plan)
{
    if (cg->no_tmap_prefetch || !cg->t->tmap_prefetch)
        return;
    for (uint32_t np = 0; np < plan->nparams; np++)
        if (plan->params[np].kind == KP_TMAP)
            cg->t->tmap_prefetch(cg, LLVMBuildPtrToInt(cg->b, LLVMGetParam(cg->fn, np), cg->ti64, ""));
}

static void lower_kernel(Cg *cg, Kernel *k)
{
    CakeCtx *ctx = cg->ctx;
    cg->k = k;
    cg->nval = k->nnodes;
    cg->val = arena_alloc(&ctx->arena, (k->nnodes + 1) * sizeof *cg->val);
    cg->nscratch = 0;
    cg->loop_depth = 0;
    cg->block_threads = cg_threads_of(ctx, k, cg->tg);
    /* the ptxas workaround (cg_math.c) is for NVIDIA only; the variable shows the bug on a device */
    cg->no_minmax_fold = tg_vendor(cg->tg) != VENDOR_NVIDIA || getenv("CAKE_NO_MINMAX_FOLD") != NULL;
    /* the code-quality switches, to measure before/after with one binary (bench/device/run_fp8.sh) */
    cg->no_contract = getenv("CAKE_NO_CONTRACT") != NULL;
    cg->no_packed = getenv("CAKE_NO_PACKED") != NULL;
    cg->wg_hoist = getenv("CAKE_WG_HOIST") != NULL;
    cg->no_licm = getenv("CAKE_NOLICM") != NULL;
    cg->cvt_pairs = getenv("CAKE_CVT_PAIRS") != NULL;
    cg->no_predicate = getenv("CAKE_NO_PREDICATE") != NULL;
    cg->no_tree = getenv("CAKE_NO_TREE") != NULL;
    cg->no_tmap_prefetch = getenv("CAKE_NO_TMAP_PREFETCH") != NULL;
    if (!cg->block_threads) {
        Diag *d = diag_report(ctx, E0904, k->block_span.hi ? k->block_span : k->span,
                              "the block size of kernel '%s' must be a compile-time constant "
                              "in 1..1024", ir_symstr(ctx, k->name));
        diag_help(ctx, d, "write `threads 256` (or an expression over params)");
        cg->failed = 1;
        cg->block_threads = 32;
    }

    const KPlan *plan = k->plan;
    if (!plan)
        ir_bug(ctx, "code generation: kernel '%s' has no launch plan; run pass_run_all first",
               ir_symstr(ctx, k->name));
    if (plan->nparams > 64) {
        diag_report(ctx, E0902, k->span, "more than 64 kernel parameters");
        cg->failed = 1;
        return;
    }
    LLVMTypeRef ps[64];
    for (uint32_t i = 0; i < plan->nparams; i++) { /* the ABI order (ir.h KParam) */
        const KParam *kp = &plan->params[i];
        if (kp->kind == KP_TENSOR)
            ps[i] = cg->tptr_g;
        else if (kp->kind == KP_SCALAR)
            ps[i] = cg_ty(cg, kp->decl).dt == DT_BOOL ? cg->ti8 : cg_llvm_type(cg, cg_ty(cg, kp->decl));
        else if (kp->kind == KP_DIM)
            ps[i] = cg->ti32;
        else /* a CUtensorMap, by value (__grid_constant__) */
            ps[i] = cg->tptr;
    }
    LLVMTypeRef ft = LLVMFunctionType(cg->tvoid, ps, plan->nparams, 0);
    const char *name = ir_symstr(ctx, k->name);
    cg->fn = LLVMAddFunction(cg->mod, name, ft);
    cg->t->mark_kernel(cg, cg->fn, cg->block_threads);

    cg->alloca_bb = cg_block(cg, "entry");
    LLVMBasicBlockRef body = cg_block(cg, "body");
    LLVMPositionBuilderAtEnd(cg->ab, cg->alloca_bb);
    LLVMPositionBuilderAtEnd(cg->b, body);

    unsigned kind_noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
    unsigned kind_ro = LLVMGetEnumAttributeKindForName("readonly", 8);
    unsigned kind_nocap = LLVMGetEnumAttributeKindForName("nocapture", 9);
    unsigned kind_align = LLVMGetEnumAttributeKindForName("align", 5);
    unsigned kind_byval = LLVMGetEnumAttributeKindForName("byval", 5);
    LLVMTypeRef map_ty = LLVMArrayType2(cg->ti8, 128);
    for (uint32_t np = 0; np < plan->nparams; np++) {
        const KParam *kp = &plan->params[np];
        NodeId id = kp->decl;
        LLVMValueRef p = LLVMGetParam(cg->fn, np);
        const char *pn = ir_symstr(ctx, ir_get(k, id)->name);
        LLVMSetValueName2(p, pn, strlen(pn));
        unsigned idx = np + 1;
        if (kp->kind == KP_TENSOR) {
            const Node *t = ir_get(k, ir_get(k, id)->a);
            LLVMAddAttributeAtIndex(cg->fn, idx, LLVMCreateEnumAttribute(cg->lc, kind_noalias, 0));
            LLVMAddAttributeAtIndex(cg->fn, idx, LLVMCreateEnumAttribute(cg->lc, kind_nocap, 0));
            uint64_t al = t->v.attr.align > 16 ? t->v.attr.align : 16;
            LLVMAddAttributeAtIndex(cg->fn, idx, LLVMCreateEnumAttribute(cg->lc, kind_align, al));
            if (!arg_written(k, id))
                LLVMAddAttributeAtIndex(cg->fn, idx, LLVMCreateEnumAttribute(cg->lc, kind_ro, 0));
            cg->val[id] = p;
        } else if (kp->kind == KP_SCALAR) {
            cg->val[id] = ir_get(k, ir_get(k, id)->a)->dtype == DT_BOOL
                              ? LLVMBuildTrunc(cg->b, p, cg->ti1, "") : p;
        } else if (kp->kind == KP_DIM) { /* passed as i32, used in the dim's type (i64) */
            cg->val[id] = cg_convert(cg, p, cg_scalar(DT_I32), cg_ty(cg, id));
        } else {
            LLVMAddAttributeAtIndex(cg->fn, idx, LLVMCreateTypeAttribute(cg->lc, kind_byval, map_ty));
            LLVMAddAttributeAtIndex(cg->fn, idx, LLVMCreateEnumAttribute(cg->lc, kind_align, 64));
            cg->val[id] = p;
        }
    }
    (void)in_reference;
    prefetch_tmaps(cg, plan);

    cg_kernel(cg);

    if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(cg->b)))
        LLVMBuildRetVoid(cg->b);
    LLVMBuildBr(cg->ab, body);
}

/* ---- the pipeline ------------------------------------------------------------ */

static char *dup_buf(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}

typedef struct {
    LLVMContextRef lc;
    LLVMModuleRef mod;
    LLVMBuilderRef b, ab;
    LLVMTargetMachineRef tm;
    CakeCtx *ctx;          /* where LLVM's own warnings go (llvm_diag) */
    Span at;               /* the kernel they belong to, when one kernel is compiled */
    const char *said[8];   /* LLVM messages already reported, not repeated */
    int nsaid;
} LlvmState;

/* LLVM's diagnostics, which it would otherwise print on stderr as
 * "warning: <unknown>:0:0: ...": warnings and errors become W0903 at the kernel
 * (LLVM's messages carry no source position), each distinct message once;
 * remarks and notes are dropped. An LLVM error also fails its stage (an LLVM
 * error return, reported as a bug there). */
static void llvm_diag(LLVMDiagnosticInfoRef di, void *p)
{
    LlvmState *st = p;
    LLVMDiagnosticSeverity sev = LLVMGetDiagInfoSeverity(di);
    if (sev != LLVMDSError && sev != LLVMDSWarning)
        return;
    char *raw = LLVMGetDiagInfoDescription(di);
    const char *text = raw ? raw : "", *unknown = "<unknown>:0:0: ";
    if (!strncmp(text, unknown, strlen(unknown)))
        text += strlen(unknown); /* no debug locations: LLVM knows no position */
    const char *msg = ir_fmt(st->ctx, "%s", text);
    LLVMDisposeMessage(raw);
    for (int i = 0; i < st->nsaid; i++)
        if (!strcmp(st->said[i], msg))
            return;
    if (st->nsaid < (int)(sizeof st->said / sizeof st->said[0]))
        st->said[st->nsaid++] = msg;
    Diag *d = diag_report(st->ctx, W0903, st->at, "LLVM %s: %s",
                          sev == LLVMDSError ? "error" : "warning", msg);
    diag_help(st->ctx, d, "LLVM could not do what the kernel asked (an `unroll` it could not honour, "
                          "for one): the code is correct but may be slower; see the kernel's other warnings");
}

static void llvm_free(LlvmState *s)
{
    if (s->b) LLVMDisposeBuilder(s->b);
    if (s->ab) LLVMDisposeBuilder(s->ab);
    if (s->mod) LLVMDisposeModule(s->mod);
    if (s->tm) LLVMDisposeTargetMachine(s->tm);
    if (s->lc) LLVMContextDispose(s->lc);
    memset(s, 0, sizeof *s);
}

static int emit_body(CakeCtx *ctx, Module *m, Kernel *k, Target tg, CgEmit what,
                     const CgOptions *opt, char **out, size_t *len, LlvmState *st)
{
    const CgTarget *t = target_hooks(tg);
    const TargetInfo *ti = tg_info(tg);
    int amd = ti->vendor == VENDOR_AMD;
    init_targets();

    char *err = NULL;
    LLVMTargetRef target;
    if (LLVMGetTargetFromTriple(ti->llvm_triple, &target, &err))
        ir_bug(ctx, "LLVM has no target %s: %s", ti->llvm_triple, err ? err : "");
    st->tm = LLVMCreateTargetMachine(target, ti->llvm_triple, ti->llvm_cpu, ti->llvm_features,
                                     opt->opt_level >= 2 ? LLVMCodeGenLevelAggressive
                                     : opt->opt_level == 1 ? LLVMCodeGenLevelLess
                                                           : LLVMCodeGenLevelNone,
                                     amd ? LLVMRelocPIC : LLVMRelocDefault, LLVMCodeModelDefault);
    if (!st->tm)
        ir_bug(ctx, "cannot create an LLVM target machine for %s", ir_target_names[tg]);

    Cg cg = {0};
    cg.ctx = ctx;
    cg.tg = tg;
    cg.t = t;
    cg.fast_div = opt->fast_div;
    st->lc = cg.lc = LLVMContextCreate();
    st->ctx = ctx;
    LLVMContextSetDiagnosticHandler(st->lc, llvm_diag, st);
    st->mod = cg.mod = LLVMModuleCreateWithNameInContext("cake", cg.lc);
    LLVMSetTarget(cg.mod, ti->llvm_triple);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(st->tm);
    char *dls = LLVMCopyStringRepOfTargetData(dl);
    LLVMSetDataLayout(cg.mod, dls);
    LLVMDisposeMessage(dls);
    LLVMDisposeTargetData(dl);
    st->b = cg.b = LLVMCreateBuilderInContext(cg.lc);
    st->ab = cg.ab = LLVMCreateBuilderInContext(cg.lc);
    cg.tvoid = LLVMVoidTypeInContext(cg.lc);
    cg.ti1 = LLVMInt1TypeInContext(cg.lc);
    cg.ti8 = LLVMInt8TypeInContext(cg.lc);
    cg.ti16 = LLVMInt16TypeInContext(cg.lc);
    cg.ti32 = LLVMInt32TypeInContext(cg.lc);
    cg.ti64 = LLVMInt64TypeInContext(cg.lc);
    cg.tf16 = LLVMHalfTypeInContext(cg.lc);
    cg.tbf16 = LLVMBFloatTypeInContext(cg.lc);
    cg.tf32 = LLVMFloatTypeInContext(cg.lc);
    cg.tf64 = LLVMDoubleTypeInContext(cg.lc);
    cg.tptr_g = LLVMPointerTypeInContext(cg.lc, 1);
    cg.tptr_s = LLVMPointerTypeInContext(cg.lc, t->shared_as);
    cg.tptr = LLVMPointerTypeInContext(cg.lc, amd ? 5 : 0);

    uint32_t nerr = ctx->nerrors, nk = 0;
    Kernel *only = NULL;
    for (uint32_t i = 0; i < m->nkernels; i++)
        if (k ? m->kernels[i] == k : cg_kernel_targets(m->kernels[i], tg)) {
            lower_kernel(&cg, m->kernels[i]);
            only = nk++ ? NULL : m->kernels[i];
        }
    st->at = only ? only->span : IR_NOSPAN; /* LLVM's warnings come from the passes below */
    if (!nk) {
        Diag *d = diag_report(ctx, E0902, k ? k->target_span : IR_NOSPAN,
                              "no kernel to compile for %s", ir_target_names[tg]);
        diag_help(ctx, d, "add %s to a kernel's `target` clause, or pick one of its targets "
                          "with --target", ir_target_names[tg]);
        return 1;
    }
    if (cg.failed || ctx->nerrors > nerr)
        return 1;

    if (!opt->no_verify) {
        char *msg = NULL;
        if (LLVMVerifyModule(cg.mod, LLVMReturnStatusAction, &msg)) {
            if (getenv("CAKE_DUMP_BAD_LLVM")) { /* for the bug report */
                char *s = LLVMPrintModuleToString(cg.mod);
                fprintf(stderr, "%s\n", s);
                LLVMDisposeMessage(s);
            }
            ir_bug(ctx, "code generation produced invalid LLVM IR: %s", msg ? msg : "");
        }
        LLVMDisposeMessage(msg);
    }
    if (what == CG_EMIT_LLVM && opt->llvm_before_passes) {
        char *s = LLVMPrintModuleToString(cg.mod);
        *out = dup_buf(s, strlen(s));
        *len = strlen(s);
        LLVMDisposeMessage(s);
        return 0;
    }
    if (opt->opt_level > 0) {
        char pipeline[32];
        snprintf(pipeline, sizeof pipeline, "default<O%d>", opt->opt_level > 3 ? 3 : opt->opt_level);
        const char *custom = getenv("CAKE_LLVM_PIPELINE"); /* for measuring other pass lists */
        LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
        LLVMErrorRef e = LLVMRunPasses(cg.mod, custom ? custom : pipeline, st->tm, po);
        LLVMDisposePassBuilderOptions(po);
        if (e) {
            char *msg = LLVMGetErrorMessage(e);
            char *copy = ir_fmt(ctx, "%s", msg);
            LLVMDisposeErrorMessage(msg);
            ir_bug(ctx, "LLVM pass pipeline failed: %s", copy);
        }
    }
    if (what == CG_EMIT_LLVM) {
        char *s = LLVMPrintModuleToString(cg.mod);
        *len = strlen(s);
        *out = dup_buf(s, *len);
        LLVMDisposeMessage(s);
        return 0;
    }
    LLVMCodeGenFileType ft = (what == CG_EMIT_PTX || !amd) ? LLVMAssemblyFile : LLVMObjectFile;
    if (what == CG_EMIT_PTX && amd)
        ft = LLVMAssemblyFile; /* AMDGCN assembly text */
    LLVMMemoryBufferRef mb = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(st->tm, cg.mod, ft, &err, &mb)) {
        char *copy = ir_fmt(ctx, "%s", err ? err : "");
        LLVMDisposeMessage(err);
        ir_bug(ctx, "LLVM code emission failed: %s", copy);
    }
    const char *p = LLVMGetBufferStart(mb);
    size_t n = LLVMGetBufferSize(mb);
    int rc = 0;
    if (what == CG_EMIT_HSACO && amd) {
        rc = cg_link_hsaco(ctx, opt, p, n, out, len);
    } else {
        *out = dup_buf(p, n);
        *len = n;
    }
    LLVMDisposeMemoryBuffer(mb);
    return rc;
}

int cg_emit(CakeCtx *ctx, Module *m, Kernel *k, Target tg, CgEmit what,
            const CgOptions *opt, char **out, size_t *len)
{
    static const CgOptions defaults = {.opt_level = 3};
    const CgOptions *volatile o = opt ? opt : &defaults;
    *out = NULL;
    *len = 0;
    if (what == CG_EMIT_HSACO && target_hooks(tg) != &cg_amdgpu) {
        diag_report(ctx, E0002, IR_NOSPAN, "--emit hsaco needs an AMDGPU target (gfx90a, gfx942), "
                                           "not %s", ir_target_names[tg]);
        return 1;
    }
    if (!tg_info(tg)->llvm_cpu) {
        diag_report(ctx, E0902, k ? k->span : IR_NOSPAN,
                    "target %s is not supported by code generation yet (LLVM 19)", ir_target_names[tg]);
        return 1;
    }
    LlvmState st = {0};
    jmp_buf jb, *saved = ctx->bug_jmp;
    ctx->bug_jmp = &jb;
    int rc;
    if (setjmp(jb)) {
        ctx->bug_jmp = saved;
        llvm_free(&st);
        free(*out);
        *out = NULL;
        *len = 0;
        return 2; /* ctx->bug_msg says what; the caller prints it and exits 2 */
    }
    rc = emit_body(ctx, m, k, tg, what, o, out, len, &st);
    ctx->bug_jmp = saved;
    llvm_free(&st);
    return rc;
}
