/* cake_lib.h — the kernel library with shape dispatch: the protected C API
 * that `cakec lib` and the Python module are built on (docs/library.md).
 *
 * A library is a folder: .tir files plus manifest.json naming *ops* (gemm,
 * rmsnorm, ...), each with its argument signature and its *variants* (file x
 * kernel x bindings x target). A variant's domain is its kernel's `assume`s
 * at its bindings, plus optional explicit conditions (`when`). `cakec lib
 * build` compiles every variant into one artifact file (the images, the
 * sources, the dispatch table); the calls below read that artifact.
 *
 *     CakeCtx *ctx = ctx_new();
 *     CakeLib *lib;
 *     if (cake_lib_open(ctx, "cake.cakelib", &lib) == 0) {
 *         uint32_t op;
 *         CakeLibDim dims[] = {{"M", 4096}, {"N", 4096}, {"K", 4096}};
 *         CakeLibChoice ch;
 *         if (cake_lib_find_op(ctx, lib, "gemm", &op) == 0 &&
 *             cake_lib_select(ctx, lib, op, dims, 3, &ch) == 0)
 *             cake_lib_launch(ctx, lib, dev, &ch, dims, 3, tensors, NULL, stream);
 *         cake_lib_close(lib);
 *     }
 *     ctx_free(ctx);
 *
 * Return codes as in cake.h: 0 done; 1 the input is wrong (diagnostics in
 * ctx: an unknown op, a shape no variant covers, a corrupted file, a table
 * tuned on another device); 2 internal error (E0005, caught: the process
 * lives on); 3 a device problem. Every entry below is protected (protect.h).
 *
 * Cost: cake_lib_select is a table lookup plus the exact domain test of the
 * variants the table ranks first (no parsing, no compiling, no allocation):
 * well under a microsecond (bench/lib_select_speed.c measures it). The first
 * cake_lib_launch of a variant in a process prepares it (lowers its embedded
 * source for the launch plan and loads its prebuilt image, milliseconds);
 * the first at a shape prepares that launch (grid, parameters, tensor maps)
 * and keeps it (16 shapes per variant); later launches at the shape bind the
 * call's pointers and scalars into it (a tensor map is encoded again only for
 * a tensor that moved) and queue the kernel: no allocation
 * (bench/RESULTS.md has the host time measured per op).
 *
 * A CakeLib lives in the context it was opened in (its arena holds what it
 * parsed): pass that same context to every call on it, and close it before
 * ctx_free. Diagnostics of each call go to that context (clear ctx->ndiags
 * and ctx->nerrors between calls if you keep it for long). A CakeLib is not
 * thread-safe: use it from one thread at a time.
 */
#ifndef CAKE_LIB_H
#define CAKE_LIB_H

#include "cake.h"

typedef struct CakeLib CakeLib;

/* ---- open ------------------------------------------------------------- */

/* Opens an artifact written by `cakec lib build` (or cake_lib_build): checks
 * its magic, version, sizes and checksum (E1205 when anything is off: a
 * truncated or corrupted file is exit 1, never a crash), and parses the
 * embedded sources. 0 with *out, or 1/2 with *out NULL. */
int cake_lib_open(CakeCtx *ctx, const char *path, CakeLib **out);

/* The same from an artifact in memory (copied; data may be freed after). */
int cake_lib_open_mem(CakeCtx *ctx, const void *data, size_t len, CakeLib **out);

void cake_lib_close(CakeLib *lib);   /* NULL is fine; unloads its modules */

/* ---- ops and signatures ------------------------------------------------ */

typedef enum { CAKE_ARG_TENSOR, CAKE_ARG_SCALAR } CakeArgKind;

typedef struct {
    const char *name;            /* "A" */
    CakeArgKind kind;
    const char *dtype;           /* "bf16", "f32", "i32", "e4m3", ... */
    int rank;                    /* 0 for a scalar */
    const char *dims[8];         /* per axis: the dim's name, or NULL for a constant extent */
    int64_t extent[8];           /* the constant extent where dims[i] is NULL */
} CakeLibArg;

typedef struct {
    const char *name;            /* "gemm" */
    const char *doc;             /* one line, "" if none */
    uint32_t nargs;
    const CakeLibArg *args;      /* in launch order */
    uint32_t ndims;
    const char *const *dims;     /* the op's dim names, in order of first appearance */
    uint32_t nvariants;
} CakeLibOp;

typedef struct {
    const char *name;            /* the variant's name in the manifest: "persistent_128x256" */
    const char *file, *kernel;   /* "gemm_sm90_persistent.tir", "gemm_sm90_persistent" */
    const char *set;             /* the bindings: "BM=128,BN=256" ("" for the defaults) */
    const char *target;          /* "sm_90a" */
    uint32_t nconds;             /* assumes + explicit conditions */
    uint32_t launches;           /* a sequence variant: its launches (1 or more); else 0 */
} CakeLibVariant;

uint32_t cake_lib_nops(const CakeLib *lib);
/* op i (< cake_lib_nops) and variant v of it; pointers live as long as lib. 0, or 1. */
int cake_lib_op(const CakeLib *lib, uint32_t i, CakeLibOp *out);
int cake_lib_variant(const CakeLib *lib, uint32_t op, uint32_t v, CakeLibVariant *out);
/* The index of the op named `name`: 0, or 1 with E1201 (no such op; the
 * documented gaps say why, the others are listed as notes). */
int cake_lib_find_op(CakeCtx *ctx, const CakeLib *lib, const char *name, uint32_t *op);

/* The device the dispatch table was tuned on ("NVIDIA H200"), "" when the
 * table holds only the cost model's ranking. */
const char *cake_lib_tuned_device(const CakeLib *lib);

/* ---- select --------------------------------------------------------------- */

typedef struct {
    const char *name;            /* a dim of the op: "M" */
    int64_t value;
} CakeLibDim;

typedef enum {
    CAKE_SEL_TUNED,      /* the tuned table has this shape class: measured fastest there */
    CAKE_SEL_MODEL,      /* no tuned point: the cost model's ranking for the class */
    CAKE_SEL_ORDER,      /* neither ranks a variant whose domain holds: the manifest's order */
    CAKE_SEL_NEAR,       /* no tuned point for the class: the nearest tuned class's ranking
                            (at most LIB_NEAR_BUCKETS buckets away, docs/library.md) */
    CAKE_SEL_FIT,        /* the fitted wave model's ranking at this shape: each variant's
                            time predicted from its tuned times (docs/library.md) */
    CAKE_SEL_MEASURED,   /* the tuned table measured this very shape: its variants by
                            their times there, fastest first */
    CAKE_SEL_MEASURED_NEAR   /* the fit's pick was measured much slower than another variant
                                at the nearest measured shape of this class: that shape's
                                fastest (docs/library.md, "Measured shapes") */
} CakeLibWhy;

#define CAKE_LIB_MAX_VARIANTS 128  /* variants of one op, hidden launches counted */

typedef struct {
    uint32_t op, variant;        /* the variant chosen */
    CakeLibWhy why;
    uint32_t rank;               /* its place in the ranking used (0: first) */
    uint64_t class_key;          /* the shape class (docs/library.md, "Dispatch") */
    /* variants tested, in ranking order, and whether each one's domain held
     * (select stops at the first that holds; cake_lib_explain tests all) */
    uint32_t ntested;
    uint8_t tested[CAKE_LIB_MAX_VARIANTS];
    uint8_t held[CAKE_LIB_MAX_VARIANTS];
    int64_t dimv[16];            /* the op's dims in order (CakeLibOp.dims) */
    /* why CAKE_SEL_MEASURED(_NEAR): the measured shape (its index in the op's table,
     * cake_lib_measured), else -1; for _NEAR the fit's pick it overrode and that pick's
     * time over the fastest's at that shape */
    int32_t measured;
    uint32_t fit_variant;
    double fit_slowdown;
} CakeLibChoice;

/* measured shape i of op (the tuned table's exact shapes): its dims in the op's order into
 * dimv (CakeLibOp.ndims of them) and the n variants timed there, fastest first, with their
 * times (ms) into var and ms (NULL: not wanted): n, or 0 when there
 * is no such shape; at most cap of them are written */
uint32_t cake_lib_measured(const CakeLib *lib, uint32_t op, uint32_t i, int64_t *dimv,
                           uint32_t *var, double *ms, uint32_t cap);

/* Picks the variant for one shape: dims binds every dim of the op (extra
 * names are an error, E1202). 0 with *out; 1 with E1203 when no variant's
 * domain holds (the diagnostic names the nearest variant and the assume, at
 * its line in the embedded source, that fails). */
int cake_lib_select(CakeCtx *ctx, const CakeLib *lib, uint32_t op, const CakeLibDim *dims,
                    uint32_t ndims, CakeLibChoice *out);

/* The same with the dims given as a ShapeEnv of ctx (names interned in ctx). */
int cake_lib_select_env(CakeCtx *ctx, const CakeLib *lib, uint32_t op, const ShapeEnv *env,
                        CakeLibChoice *out);

/* The same choice, with every variant's domain tested (for `lib select`): out
 * lists them all in ranking order. */
int cake_lib_explain(CakeCtx *ctx, const CakeLib *lib, uint32_t op, const CakeLibDim *dims,
                     uint32_t ndims, CakeLibChoice *out);

/* Why variant v's domain fails at choice->dimv: the text of the first failing
 * condition ("N <= THREADS * VEC * ITERS" with THREADS=256 ...), or NULL when
 * it holds. Valid while lib lives. */
const char *cake_lib_failed_cond(const CakeLib *lib, const CakeLibChoice *choice, uint32_t v);

/* ---- launch --------------------------------------------------------------- */

/* Launches the chosen variant on dev: tensors[i] the device pointer of every
 * tensor argument of the op's signature (in order, scalars skipped),
 * scalars[i] pointing at the value of every scalar argument (in its dtype's
 * encoding). stream: a CUstream (hipStream_t) of the caller, in the device's
 * primary context, or NULL for the runtime's own stream. Asynchronous: it
 * returns once the kernel is queued. 0, 1 (E1204: the variant cannot run on
 * this device, or a table tuned on another device, E1206), 3. */
int cake_lib_launch(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, const CakeLibChoice *choice,
                    const RtPtr *tensors, const void *const *scalars, void *stream);

/* Drops the launches cake_lib_launch kept (each next launch at a shape
 * prepares it again): memory back, or the first-launch cost measured. */
void cake_lib_forget_launches(CakeLib *lib);

/* The compiled kernel of a choice on dev (prepared on first use; owned by
 * lib): for `lib run --check` and `lib bench`, which go through cake_check
 * and cake_bench on it. 0, 1, 3. */
int cake_lib_kernel(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, const CakeLibChoice *choice,
                    CakeKernel **out);

/* `lib run --check` and `lib bench` of a choice, one launch or a sequence
 * (docs/library.md, "Variants of several launches"): one launch goes through
 * cake_check / cake_bench on its kernel at the choice's shape; a sequence runs
 * all its launches on the oracle's inputs and is compared with its op's
 * reference (the reference block of the op's `reference` variant, else of its
 * first variant of one launch), and is timed as one sample of all its launches.
 * 0 (the verdict in *rep, *n = 1), 1, 2, 3. */
int cake_lib_check(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, const CakeLibChoice *choice,
                   const CheckOptions *opt, CheckReport *rep, uint32_t *n);
int cake_lib_bench(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, const CakeLibChoice *choice, int runs,
                   CakeBench *out);

/* The ShapeEnv of a choice (its dims and its variant's parameters), for
 * cake_check and cake_bench on the kernel of cake_lib_kernel. */
int cake_lib_choice_env(CakeCtx *ctx, const CakeLib *lib, const CakeLibChoice *choice, ShapeEnv *env);

/* The cost model's time of the choice on `device` ("h200"; NULL: the
 * target's default): 0 with *ms, 1 when the model has no answer. */
int cake_lib_predict(CakeCtx *ctx, const CakeLib *lib, const CakeLibChoice *choice,
                     const char *device, double *ms);
/* The same with the whole prediction (analysis/cost.h), as `cakec cost` prints it. */
int cake_lib_cost(CakeCtx *ctx, const CakeLib *lib, const CakeLibChoice *choice, const char *device,
                  CostResult *out);

/* ---- build and tune (the tools behind `cakec lib build` / `lib tune`) ---- */

typedef struct {
    const char *table;           /* a tuned table (JSON, `lib tune -o`) to embed; NULL: none */
    int no_model;                /* skip the cost model's ranking grid */
    int ptx_only;                /* store PTX even where nvJitLink could make cubins */
    const char *device;          /* the cost model's device for the grid (NULL: "h200") */
    int verbose;                 /* one line per variant on stderr */
    /* workers > 1 (`lib build -j N`): the images are compiled by that many processes
     * forked after the check (this one among them), which share its verified
     * modules and write their images to a temporary folder this one reads; the
     * artifact is the one a build in one process writes. fork(): the caller must
     * have no other threads (cakec has none). */
    int workers;
} CakeLibBuildOptions;

/* Reads DIR/manifest.json, checks every variant (its kernel checks, its
 * signature is the op's: diagnostics at the manifest's line), compiles each
 * (a cubin through nvJitLink where present, PTX otherwise) and writes the
 * artifact to `out`. 0, 1 (diagnostics), 2, 3 (the code generator missing). */
int cake_lib_build(CakeCtx *ctx, const char *dir, const char *out, const CakeLibBuildOptions *o);

/* Writes artifact `in` again to `out` with the tuned table `table` (NULL:
 * none) in place of its own: no compiling (`cakec lib build FILE --table T`). */
int cake_lib_retable(CakeCtx *ctx, const char *in, const char *table, const char *out);

/* Reads and checks DIR/manifest.json only (no code generation): `cakec lib check`. */
int cake_lib_check_dir(CakeCtx *ctx, const char *dir);

/* Opens a library folder as it is (checked, not compiled, no table): the ops,
 * signatures and select (by manifest order) work; a launch compiles the
 * variant on first use. For tools and tests; lib run/bench use artifacts. */
int cake_lib_read_dir(CakeCtx *ctx, const char *dir, CakeLib **out);

#endif
