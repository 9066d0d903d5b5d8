/* cake.h — libcake: the C library API that the cakec CLI is built on.
 *
 * Parse and verify a .tir file, compile a kernel for a target, load it on a
 * device, launch it, check it against its fp64 reference, and time it. Every
 * call takes the compilation context explicitly (one CakeCtx per candidate
 * kernel; free it with ctx_free), so an agent loop can compile thousands of
 * kernels in one process. Diagnostics go into the context (ctx->diags).
 *
 *     CakeCtx *ctx = ctx_new();
 *     CakeKernel ck;
 *     if (cake_compile_file(ctx, "rmsnorm.tir", NULL, TG_SM90A, NULL, &ck) == 0) {
 *         RtDevice *dev; char err[256];
 *         if (rt_open(RT_AUTO, 0, &dev, err, sizeof err) == RT_OK) {
 *             if (cake_load(ctx, dev, &ck) == 0) {
 *                 CheckReport reps[8]; uint32_t n;
 *                 cake_check(ctx, dev, &ck, NULL, 0, NULL, reps, 8, &n);  // several shapes
 *                 CakeBench b;
 *                 cake_bench(ctx, dev, &ck, &env, 0, &b);                 // one shape
 *             }
 *             cake_unload(&ck);
 *             rt_close(dev);
 *         }
 *     }
 *     ctx_free(ctx);
 *
 * Return codes. Every entry point that runs compiler code returns an int:
 *   0  done;
 *   1  the input is wrong: diagnostics in ctx;
 *   2  internal error, a compiler bug: caught at the entry point (protect.h),
 *      recorded as diagnostic E0005 and in ctx->bug_msg. The process lives on
 *      and nothing calls exit; free the context and go on with a fresh one;
 *   3  a device or tool problem: no GPU, a broken device, the code generator
 *      plugin (libcake-llvm.so, E0974) or ld.lld missing.
 * cake_unload, cake_prepared_free and the JSON functions run no compiler
 * code and return nothing to check.
 *
 * Code generation is a plugin: the first call that emits code dlopens
 * libcake-llvm.so ($CAKE_LLVM_PLUGIN, else the file of that name in the
 * folder of the running executable; codegen/cg_plugin.h), so a program that
 * only verifies never loads LLVM.
 *
 * After a kernel faults or times out, CUDA refuses further work in the
 * process (RT_FAULT/RT_TIMEOUT from rt_health): run untrusted candidates in
 * a child process and call rt_exit_now after RT_TIMEOUT.
 */
#ifndef CAKE_LIBCAKE_H
#define CAKE_LIBCAKE_H

#include "ir.h"
#include "rt.h"
#include "check.h"
#include "sim.h"
#include "cg.h"
#include "cost.h"

/* ---- parse and verify ------------------------------------------------- */

/* Reads source file `path` into ctx, then parses, resolves and verifies it
 * (cake_verify_source). *out: the module, also when there are errors (what
 * could be recovered); NULL when the file cannot be read (E0001) or on 2. */
int cake_verify_file(CakeCtx *ctx, const char *path, const char *last, Module **out);

/* The whole of file `path` (at most max_bytes), NUL-terminated, from malloc
 * (the caller frees it), its length in *len when len is not NULL; NULL when it
 * cannot be read or is larger. No context, no diagnostic: for the files
 * (manifests, calibrations, library sources) whose callers report the failure. */
char *cake_read_text(const char *path, size_t max_bytes, size_t *len);

/* The pipeline on source file `file` of ctx (ctx_add_file): parse, resolve,
 * verify, one line each. Stops after the first stage that reports errors
 * (returns 1), or after the stage named `last` ("parse", "resolve",
 * "verify"; NULL: all); dumps the IR after the stage named ctx->dump_after
 * ("all": each) to ctx->dump_out (stderr if NULL). */
int cake_verify_source(CakeCtx *ctx, uint32_t file, const char *last, Module **out);

/* Parses the `--set` and `--shape` specs of the command line ("BM=64,STAGES=3",
 * "M=4096,N=4096"; NULL: none) for kernel k into env: each name a parameter,
 * dim or integer scalar argument of k (both specs accept each kind, as `run`
 * always did). Returns 1, or 0 with E0002 (malformed) or E0006 (a parameter
 * bound outside the values it declares). `check`, `run` and compiling share it. */
int cake_parse_bindings(CakeCtx *ctx, Kernel *k, const char *set, const char *shape, ShapeEnv *env);

/* cake_verify_file as `cakec check --set S --shape D` does it: the bindings
 * (cake_parse_bindings) apply to the kernel named `kernel` (NULL: the first);
 * its parameters bound there are verified at those values (the others at
 * every combination of their declared values), and its bound dims add a
 * shape to the concrete checks (verify.h: VerBind). */
int cake_check_file(CakeCtx *ctx, const char *path, const char *kernel, const char *set,
                    const char *shape, Module **out);

/* ---- kernels and instances ------------------------------------------- */

/* The one home of kernel lookup: the kernel of m named `name`; with name
 * NULL, the first kernel that lists target tg (a kernel listing no target
 * lists them all), or with tg TG__COUNT the first kernel. 1 and *out NULL
 * with E0970 when there is none (the help lists the file's kernels). */
int cake_find_kernel(CakeCtx *ctx, const Module *m, const char *name, Target tg, Kernel **out);

/* An instance: a kernel of a verified module, for one target, at one binding
 * of its compile-time parameters (docs/tirl.md, "Instances"). Everything
 * that compiles or runs a kernel builds one: `cakec FILE`, `run`, `cost`,
 * the oracle's launches, `tune` (through the CLI), the library, Python.
 *
 * The module is read-only after `check`: an instance is built on its own copy
 * of the kernel (ir_kernel_clone) in three stages, each done once:
 *   CAKE_INST_BOUND     the copy's params bound (their declarations read as
 *                       literals of the values) and typed there. A binding of
 *                       declared values (`<CAUSAL = 0 in {0, 1}>`) that
 *                       `check` verified is only typed, never verified again;
 *                       any other (`--set BM=64` of a param that declares no
 *                       values) is verified here once, at the source level,
 *                       its diagnostics noted "with --set BM=64"
 *   CAKE_INST_LOWERED   the pass pipeline (passes.h) on the copy: TIR-L, and
 *                       the launch plan in k->plan (shared memory, tensor maps,
 *                       the ABI parameter order KPlan.params)
 *   CAKE_INST_COMPILED  PTX text (NVIDIA) or a code object (AMD) in image/len
 * Instances are cached in ctx by their key (a hash of the source text, the
 * kernel's name, the target and the value of every parameter, defaults
 * included: `--set BM=128` where 128 is the default is the instance without
 * --set): asking for one again returns the same instance, advanced to the
 * stage asked for if it was built to an earlier one. The cache, the copies and
 * the images live in ctx's arena and go with ctx_free; an instance that
 * failed is not cached. */
typedef enum { CAKE_INST_BOUND = 1, CAKE_INST_LOWERED, CAKE_INST_COMPILED } CakeInstStage;

typedef struct CakeInstance {
    const Module *m;          /* the verified module it comes from (never written) */
    const Kernel *source;     /* the kernel in m */
    Kernel *k;                /* its own copy: bound; lowered (TIR-L, k->plan) from LOWERED */
    Kernel *bound;            /* from LOWERED: the bound, typed copy before lowering (the
                                 level the cost model counts, whether lowered or not) */
    Target tg;
    ShapeEnv set;             /* the bindings asked for, of params of the kernel only */
    int64_t *values;          /* the value of every param (Kernel.params order) */
    uint32_t nvalues;
    uint64_t source_hash, key;
    uint8_t stage;            /* the CakeInstStage reached */
    uint8_t coverage_pending; /* verified at the bound stage without the output coverage
                                 check (E0820 ...), which runs before lowering */
    Kernel *cost_low;         /* the cost model's lowered copy of the bound kernel (TIR-L; it
                                 does not depend on the dims), made once; NULL until then */
    uint8_t cost_low_failed;  /* 1: that lowering reported errors (the source level is counted) */
    const char *image;        /* after COMPILED: PTX (NUL-terminated) or a code object */
    size_t len;
} CakeInstance;

/* The instance of kernel `kernel` of m (NULL: the first listing tg) for tg at
 * bindings `set` ("BM=64,STAGES=3", parsed as cake_parse_bindings does; NULL:
 * the defaults), built to `stage`. m must be verified without errors
 * (cake_verify_file / cake_check_file). 0 and *out; 1 (diagnostics: E0970,
 * E0002, E0006, the verifier's for an unchecked binding, E0902 where lowering
 * or codegen has no rule yet), 2, or 3 (the code generator plugin, E0974). */
int cake_instance(CakeCtx *ctx, const Module *m, const char *kernel, Target tg, const char *set,
                  CakeInstStage stage, const CakeInstance **out);

/* The same for kernel k of m with bindings already parsed; those that name no
 * parameter of k (dims, scalar args, another kernel's params) are ignored. */
int cake_instance_env(CakeCtx *ctx, const Module *m, const Kernel *k, Target tg, const ShapeEnv *set,
                      CakeInstStage stage, const CakeInstance **out);

/* The output coverage check (E0820 ...) of a bound instance whose binding was
 * verified for the bound stage only (coverage_pending; lowering runs it too):
 * 0, or 1 with its diagnostics. A cost sweep checks its best variants so. */
int cake_instance_cover(CakeCtx *ctx, const CakeInstance *inst);

/* How many instances ctx's cache holds (tests, statistics). */
uint32_t cake_instance_count(const CakeCtx *ctx);
/* cake_check_file on source file `file` of ctx (ctx_add_file): the library
 * checks its variants' kernels, read from its artifact, this way. */
int cake_check_source(CakeCtx *ctx, uint32_t file, const char *kernel, const char *set,
                      const char *shape, Module **out);

/* ---- compile ---------------------------------------------------------- */

typedef struct CakeKernel {
    Module *m;          /* the verified module (not lowered: the instance has its own copy) */
    Kernel *k;          /* the instance's lowered kernel (the file's first one for the target) */
    Target tg;
    char *image;        /* PTX text (NVPTX) or a code object (AMDGPU); malloc'd */
    size_t len;
    RtModule *mod;      /* after cake_load */
    RtFunction *fn;
    RtDevice *dev;      /* the device it is loaded on (tensor maps are encoded there) */
    RtFuncInfo info;
} CakeKernel;

/* Parses, resolves, verifies, lowers and emits the kernel named `kernel`
 * (NULL: the first kernel listing tg) of source file `path` for tg.
 * `set` binds compile-time params ("BM=64,STAGES=3"; NULL: defaults).
 * A CakeKernel is a compiled instance (cake_instance, CAKE_INST_COMPILED)
 * with a malloc'd copy of its image and, after cake_load, its device code. */
int cake_compile_file(CakeCtx *ctx, const char *path, const char *kernel, Target tg,
                      const char *set, CakeKernel *out);

/* The same from a module already parsed and verified in ctx (which it does
 * not change: compiling the same kernel, target and bindings again is a
 * lookup in ctx's instance cache). */
int cake_compile_module(CakeCtx *ctx, Module *m, const char *kernel, Target tg,
                        const char *set, CakeKernel *out);

/* Emits `what` for kernel k of m (NULL: every kernel listing tg) after the
 * passes (pass_run_all) ran: cg_emit of cg.h, through the plugin. opt NULL:
 * the defaults (O3). *out is malloc'd (free() it), *len its bytes. */
int cake_emit(CakeCtx *ctx, Module *m, Kernel *k, Target tg, CgEmit what, const CgOptions *opt,
              char **out, size_t *len);

/* ---- run -------------------------------------------------------------- */

/* Loads the image on dev; JIT errors become diagnostics E0971 (with the JIT
 * log's lines as notes): 1, or 3 when the device is broken (rt_health). */
int cake_load(CakeCtx *ctx, RtDevice *dev, CakeKernel *ck);
void cake_unload(CakeKernel *ck);   /* also frees the image */

/* Launches ck once on device buffers: tensors[i] for every tensor argument
 * (in argument order, scalars skipped), scalars[i] pointing at the value of
 * every scalar argument (in its dtype's encoding), dims from env. Waits.
 * 1: a dim has no value (E0953), an extent is out of range, or a tensor's
 * base is not 16-byte aligned (the kernel ABI) or breaks its `align`; 3: the
 * device failed (rt_error(dev) says how). */
int cake_launch(CakeCtx *ctx, RtDevice *dev, CakeKernel *ck, const ShapeEnv *env,
                const RtPtr *tensors, const void *const *scalars);

/* `run --check`: the kernel against a reference (opt->reference, or its own
 * reference block) at several shapes picked from its assumes (or at the one
 * shape `env` when only_env is set; a shape too large to evaluate in full is
 * checked on a sample: CheckReport.sample). Fills reps (up to max) and sets
 * *n to how many; each says whether it passed. 0, or 2. */
int cake_check(CakeCtx *ctx, RtDevice *dev, CakeKernel *ck, const ShapeEnv *env, int only_env,
               const CheckOptions *opt, CheckReport *reps, uint32_t max, uint32_t *n);

/* `run --sim`: the same check with the CPU executor of TIR-L (sim/sim.h) as
 * the device: kernel `kernel` of m (NULL: the first for tg) lowered for tg at
 * bindings `set`, run block by block on the host. No GPU, no code generator.
 * A deadlock, a race or an out-of-bounds access the executor finds fails the
 * shape (CHECK_DEVICE_ERROR, its diagnostic E0980-E0984 in ctx). 0 (reports
 * in reps, *n of them), 1 (the kernel does not lower: diagnostics), or 2. */
int cake_sim_check(CakeCtx *ctx, const Module *m, const char *kernel, Target tg, const char *set,
                   const ShapeEnv *env, int only_env, const CheckOptions *copt, const SimOptions *sopt,
                   CheckReport *reps, uint32_t max, uint32_t *n);

typedef struct CakeBench {
    char shape[256];
    RtTiming t;            /* ms */
    double bytes, flops;   /* the reference's counts at this shape */
    double gbps, tflops;
    double peak_gbps;      /* the device's datasheet bandwidth (0 if unknown) */
    double roofline;       /* achieved / peak bandwidth (memory-bound) */
    int regs, local_bytes, shared_bytes;
    uint32_t grid[3], block[3];
    char message[256];     /* why it failed */
} CakeBench;

/* `run --bench`: random inputs at shape env (integer tensors declared
 * `values LO .. HI` in that range), warm-up, L2 flushed between runs, median
 * of `runs` (0: 50) timed launches between device events. 3 when it failed
 * (out->message says why), also when env violates one of the kernel's
 * assumes (E0961 at the assume; nothing is timed). */
int cake_bench(CakeCtx *ctx, RtDevice *dev, CakeKernel *ck, const ShapeEnv *env, int runs,
               CakeBench *out);

/* A launch of ck at shape env on the given buffers, ready for rt_run or
 * rt_time: grid and block from the `grid` clause and the block size, the
 * parameters in the order of the ABI (cg.h). Free it with cake_prepared_free
 * (also after a failure). 1 as for cake_launch. */
typedef struct CakePrepared {
    RtLaunch rl;
    void **params;
    RtPtr *ptrs;
    int32_t *dims;
    RtTensorMap *maps;   /* the plan's tensor maps, encoded for this launch's tensors */
    RtTmaDesc *map_desc; /* per tensor map: its descriptor (cake_prepared_rebind) */
    uint32_t *map_tensor;   /* per tensor map: the index of its tensor */
    uint32_t nmaps;
} CakePrepared;

int cake_prepare(CakeCtx *ctx, CakeKernel *ck, const ShapeEnv *env, const RtPtr *tensors,
                 const void *const *scalars, CakePrepared *p);
/* p (prepared for ck) on other buffers and scalars at the same shape: the
 * pointers and scalar addresses replaced, the tensor maps of the tensors whose
 * address changed encoded again; nothing allocated, the grid not evaluated (a
 * kept launch's cost per call: the library's and the Python module's caches).
 * 0, 1 (E0962: a tensor map the new address cannot have; a base that is not
 * aligned as for cake_launch: p keeps its earlier binding), 3. */
int cake_prepared_rebind(CakeCtx *ctx, CakeKernel *ck, CakePrepared *p, const RtPtr *tensors,
                         const void *const *scalars);
void cake_prepared_free(CakePrepared *p);

/* ---- resources of compiled PTX (lib/cake_res.c) ------------------------- */

/* The registers, spills and local memory of every kernel of a compiled PTX
 * module of m (lowered for tg), as nvJitLink or ptxas reports them (no GPU
 * needed): into res (at most max), *tool the assembler's name. Adds W0901 at a
 * kernel that spills and W0902 at a role whose `regs` budget is not what the
 * kernel got (the entry cap differs from the plan's, or the kernel spills
 * under a raised budget). *n: how many kernels, 0 when there is no assembler
 * (*tool NULL) or the target is not NVIDIA. Returns 0, or 2 on an internal error. */
int cake_ptx_report(CakeCtx *ctx, Module *m, Target tg, const char *ptx, size_t len,
                    RtPtxRes *res, int max, int *n, const char **tool);

/* ---- the cost model (docs/cost-model.md) ------------------------------ */

typedef struct CakeCostOptions {
    const char *kernel;       /* NULL: the file's first kernel */
    Target target; int has_target;   /* else the kernel's first target */
    const char *device;       /* "h200" ...; NULL: the target's default device */
    const char *shape, *set;  /* "M=4096,N=4096", "BM=64"; the `shape` clause fills the rest */
    const char *calib_dir;    /* NULL: $CAKE_COST_DIR, else bench/cost; "none": built-in */
    const CostCalib *calib;   /* non-NULL: these constants, no file */
    int regs;                 /* registers per thread ptxas reported (run --bench); 0: estimate */
    int spill_bytes;          /* local memory per thread ptxas reported (spills): infeasible */
    int cover;                /* 1: also run the output coverage check a new binding defers
                                 (cake_instance_cover): a variant that fails it is error E0820 */
    int source_level;         /* 1: count on the source level (the bound copy) instead of the
                                 lowered one (TIR-L); `cakec cost --source-level`, comparisons */
} CakeCostOptions;

/* Predicts one launch of a verified kernel of m (analysis/cost.h): time with an
 * interval, rates, roofline fraction, bottleneck, resources, occupancy and the
 * assumptions. 0, 1 (diagnostics: unknown device E1001/E1002, a dim without a
 * value E1003, a grid that does not evaluate E1004, ...) or 2. */
int cake_cost(CakeCtx *ctx, Module *m, const CakeCostOptions *o, CostResult *out);

/* The profile cake_cost predicts from (its counts, analysis/cost.h), the device
 * it is costed on and out's header (kernel, target, shape): cakec calibrate
 * predicts one profile under many constants. 0, 1 (diagnostics) or 2. */
int cake_cost_profile(CakeCtx *ctx, Module *m, const CakeCostOptions *o, CostProfile *p,
                      const TgDevice **dev, CostResult *out);

/* The calibration constants of device d: DIR/NAME.json (dir NULL: $CAKE_COST_DIR,
 * else bench/cost; "none": the built-in defaults). 1 when a file was read; a
 * file that does not parse is W1001 and the defaults. */
int cake_cost_calib(CakeCtx *ctx, const char *dir, const TgDevice *d, CostCalib *c);

/* One measured launch for cake_cost_fit: the case (file, kernel or NULL, params
 * "BM=64" or NULL, shape), its measured median, whether it is fitted on, and
 * the registers ptxas reported (0: unknown); the fit fills ok, r (the
 * prediction with the fitted constants) or err. */
typedef struct {
    const char *file, *kernel, *set, *shape;
    double meas_ms;
    int train, regs, spill_bytes;
    int outside;              /* held out and reported apart: 1 a kernel written outside the
                                 project (split "outside"), 2 a new shape of a held-out kernel
                                 (split "fresh"); 0 the rest */
    int ok;
    CostResult r;
    char err[200];
} CakeFitCase;

/* Fits the constants of device `device` on the cases with train set (mean
 * |log(predicted / measured)|, coordinate descent; docs/cost-model.md §5),
 * sets the interval from the training errors and the calibrated families
 * (CostCalib.pat), and predicts every case with them. 0 or 2. */
int cake_cost_fit(CakeCtx *ctx, const char *device, CakeFitCase *cases, uint32_t n, CostCalib *out);

/* The result as a cJSON object (free with cake_json_delete); schema in
 * docs/cost-model.md. */
void *cake_cost_json(const CostResult *r);

/* ---- diagnostics as JSON ---------------------------------------------- */

/* All diagnostics of ctx as the JSON document of the CLI contract
 * (docs/diagnostics.md, "JSON format"); a malloc'd string: free() it. */
char *cake_diags_json(const CakeCtx *ctx, const char *command, int ok);
/* The same with the members of `extra` (a cJSON object, consumed; NULL: none)
 * added to the top-level object: a command's results, e.g. "check", "bench". */
char *cake_diags_json_with(const CakeCtx *ctx, const char *command, int ok, void *extra);
void cake_json_delete(void *json);   /* cJSON_Delete for callers without cJSON */

#endif
