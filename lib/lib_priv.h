/* lib_priv.h — the kernel library's in-memory form (cake_lib.h), shared by the
 * manifest reader, the artifact reader and writer, select, build and launch.
 * Everything lives in the arena of the context the library was opened in,
 * except the artifact's blob and the prepared kernels (freed by close). */
#ifndef CAKE_LIB_PRIV_H_LIB
#define CAKE_LIB_PRIV_H_LIB
#include "cake_lib.h"
#include "eval.h"
#include "cake_priv.h"

#define LIB_MAX_DIMS 8        /* dims of one op: the class key holds 8 bits each */
#define LIB_MAX_RANK 15       /* variants one cell of the table ranks */
#define LIB_GRID_POINTS 8     /* the cost model's grid: points per dim at most */
#define LIB_FORMAT_VERSION 1u
#define LIB_MAGIC "CAKELIB\n"
#define LIB_MAX_STEPS 4       /* launches of one sequence variant */
#define LIB_MAX_WS 4          /* workspace tensors of one sequence variant */

/* an explicit condition of a variant: `TERM REL VALUE` or `DIM % MOD == VALUE`, TERM a
   factor or a product of two, a factor `DIM` or `cdiv(DIM, N)` (a tile count:
   `BH * cdiv(S, 192) >= 512`) */
typedef enum { LC_LT, LC_LE, LC_GT, LC_GE, LC_EQ, LC_NE, LC_MOD } LibRel;

typedef struct {
    uint8_t dim;              /* index into the op's dims: the first factor's */
    uint8_t rel;              /* LibRel */
    uint8_t nfac, dim2;       /* factors (1 or 2; LC_MOD: 1) and the second one's dim */
    int64_t div, div2;        /* each factor's divisor: cdiv(DIM, div); 1 for a plain DIM */
    int64_t mod, value;
    const char *text;         /* as written: "M <= 64" */
} LibCond;

/* an assume compiled over the op's dims (lib_domain.c) */
typedef struct {
    uint16_t op; uint8_t kind, dim;
    int32_t a, b, c;          /* children */
    int64_t v;
} LibX;
typedef struct { NodeId node; int32_t root; } LibAssume;   /* root -1: use ce_eval_int */

/* the fitted wave model of a variant (lib_fit.c, docs/library.md "The fitted model") */
enum { LIB_FIT_NONE, LIB_FIT_TILES, LIB_FIT_SPLITK, LIB_FIT_GEMV, LIB_FIT_ROWS, LIB_FIT__COUNT };
enum { LIB_GEO_BM, LIB_GEO_BN, LIB_GEO_BK, LIB_GEO_SPLIT, LIB_GEO_MR, LIB_GEO_COLS, LIB_GEO_LANE_K,
       LIB_GEO__COUNT };
/* the row family's geometry in the same slots: rows per block, columns per block of a
   split row (1: the whole row), threads per row, 2 for a split row (else 1), blocks
   resident per SM */
enum { LIB_GEO_ROWS = LIB_GEO_BM, LIB_GEO_CHUNK = LIB_GEO_BN, LIB_GEO_TPR = LIB_GEO_BK,
       LIB_GEO_PARTS = LIB_GEO_SPLIT, LIB_GEO_RESIDENT = LIB_GEO_MR };
#define LIB_FIT_TERMS 5          /* a + b f1 + c f2 + d f3 (+ e f4: the row family's odd rows) */
#define LIB_FIT_MIN_POINTS 8      /* tuned shapes a variant needs before its fit is used: 2 per term */
#define LIB_FIT_MIN_POINTS_ROWS 5 /* the row family's (docs/library.md says why) */
#define LIB_FIT_MIN_POINTS_F4 15  /* GEMV's f4 (its blocks) is fitted only from this many (docs/library.md) */
#define LIB_FIT_NEAR_BEST 1.05    /* a row variant is fitted only where it came this near the fastest once */
#define LIB_FIT_GEO_MAX 32768     /* a geometry entry's bound (a split row's chunk of 8192 columns) */
#define LIB_FIT_SPAN 2.0          /* a GEMM fit predicts within this factor of the dims it was fitted at (docs/library.md, "The fit's span") */
#define LIB_FIT_SPAN_ROWS 4.0     /* the row family's factor (its M and N) */
typedef struct {
    uint8_t family;               /* LIB_FIT_*: the manifest's `fit`, NONE without */
    uint8_t ok;                   /* coef holds a fit */
    int64_t geo[LIB_GEO__COUNT];  /* its tile geometry at its bindings (lib_fit_geometry) */
    double inv[LIB_GEO__COUNT];   /* 1 / geo (lib_fit_set_geometry) */
    double coef[LIB_FIT_TERMS];   /* ms = coef . features */
    double ata[LIB_FIT_TERMS][LIB_FIT_TERMS], atb[LIB_FIT_TERMS];   /* while folding a table */
    int64_t span[3][2];           /* the least and greatest M, N, K it was fitted at (rows: M, N, N; 0: unbounded) */
    uint32_t npoints;
    uint32_t wins;                /* tuned shapes where it was within LIB_FIT_NEAR_BEST of the fastest */
} LibFit;

typedef struct {
    CakeLibVariant pub;
    Target tg;
    uint32_t src;             /* its source in CakeLib.srcs */
    Span at;                  /* its name in the manifest (IR_NOSPAN from an artifact) */
    Span set_at;              /* its `set` in the manifest (IR_NOSPAN without one) */
    LibCond *conds; uint32_t nconds;
    Module *m; Kernel *k;     /* parsed and verified: the domain's assumes */
    CeBinding *pb; uint32_t npb;  /* its parameter bindings (the `set`), Syms of the ctx */
    LibX *xs; LibAssume *as; uint32_t nas;   /* its assumes, compiled (lib_domain.c) */
    char image_kind[8];       /* "cubin", "ptx" or "hsaco" */
    char image_tool[12];      /* a cubin's assembler: "nvJitLink" or "ptxas" (lib build -v) */
    size_t image_off, image_len;  /* in the artifact's blob */
    CakeKernel *ck;           /* prepared for a launch (lib_launch.c), or NULL */
    RtDevice *ck_dev;
    /* a sequence variant (docs/library.md, "Variants of several launches"): its
       launches are hidden variants of the same op (part_of: the sequence's index),
       run in order on the op's arguments and workspace tensors the library
       allocates; the sequence itself has no image and no assumes of its own */
    int16_t part_of;          /* a launch of sequence variant part_of, or -1 */
    uint8_t nsteps;           /* > 0: a sequence of these variants, in order */
    uint8_t steps[LIB_MAX_STEPS];
    const char *ws[LIB_MAX_WS]; uint8_t nws;   /* its workspace tensors' names */
    RtPtr ws_ptr; size_t ws_bytes;             /* the workspace, kept for the next launch */
    LibFit fit;
    struct LibRec *recs;      /* its launches prepared, by shape (lib_cache.c), or NULL */
    uint32_t rec_next, rec_last;   /* the slot replaced next, the one found last */
} LibVariant;

typedef struct {
    uint64_t key;             /* the shape class (lib_select.c) */
    uint8_t n;
    uint8_t rank[LIB_MAX_RANK];   /* variant indices, fastest first */
} LibCell;

/* a measured shape of the tuned table (docs/library.md, "Measured shapes"): its dims and
   every variant timed there, fastest first, with its time */
typedef struct {
    uint64_t key;             /* its class (lib_class_key) */
    const int64_t *dimv;      /* the op's ndims */
    uint32_t n;
    const uint8_t *var;       /* n variants, fastest first */
    const float *ms;          /* their times there */
} LibMeas;
#define LIB_MEAS_CONTRADICT 1.25  /* the fit's pick this much slower at the nearest measured
                                     shape of the class than its fastest: that one instead */

/* the flat form of what a select reads per variant (lib_domain.c, lib_fit.c), made
   once the variants and their fits are final (lib_plan): every domain's bounds per
   dim, the few checks that are not bounds, and the fitted variants' coefficients
   beside the index of their features' geometry. `ready` 0: select takes the plain
   path (the compiled assumes, each variant's fit). */
enum { LP_MOD, LP_MOD2, LP_NE, LP_COND, LP_ASSUME };   /* LP_MOD2: LP_MOD by a power of two */
typedef struct {
    uint8_t kind, dim;        /* LP_*; LP_MOD, LP_MOD2: dim % a == b, LP_NE: dim != a */
    uint16_t var;             /* LP_COND: cond i of variant var, LP_ASSUME: its assume i */
    uint32_t i;
    int64_t a, b;
} LibCheck;
typedef struct {
    uint8_t ready, fit_ready;
    int64_t *lo, *hi;         /* [v * ndims + d]: dim d of variant v must lie in lo .. hi */
    uint8_t *never;           /* [v]: its domain holds nowhere (a launch of a sequence) */
    uint32_t *rest;           /* checks[rest[v] .. rest[v + 1]): the rest of v's domain */
    LibCheck *checks;
    uint32_t nfit;            /* the fitted variants, in index order: */
    uint8_t *fit_var;         /*   the variant */
    uint16_t *fit_geo;        /*   its geometry's index (variants of one geometry share */
    double (*fit_coef)[LIB_FIT_TERMS];   /* their features), its coefficients */
    uint32_t ngeo;
    uint8_t *geo_var;         /* [g]: a variant of geometry g */
} LibPlan;

typedef struct {
    CakeLibOp pub;
    CakeLibArg *args;
    const char **dims; Sym *dsym;
    LibVariant *v;
    LibCell *tuned; uint32_t ntuned;   /* sorted by key */
    LibCell *model; uint32_t nmodel;   /* sorted by key (congruence bits zero) */
    LibMeas *meas; uint32_t nmeas;     /* sorted by class, then dims (lib_meas_sort) */
    uint8_t glo[LIB_MAX_DIMS], ghi[LIB_MAX_DIMS];   /* the model grid's buckets: glo, glo + gstep, */
    uint8_t gstep[LIB_MAX_DIMS];                    /* ... up to ghi (at most LIB_GRID_POINTS) */
    int64_t lo[LIB_MAX_DIMS], hi[LIB_MAX_DIMS];     /* the op's `range` per dim */
    uint8_t has_range[LIB_MAX_DIMS];                /* the manifest gave a range for the dim */
    int64_t fit_sms;          /* the SMs of the tuned device the fits count waves over */
    double fit_inv_sms, fit_inv_sms8;   /* 1 / fit_sms, 1 / (8 fit_sms) (lib_fit_set_sms) */
    uint8_t fit_dim[3];       /* the indices of dims M, N, K (lib_fit_dims) */
    uint32_t nfit;            /* variants with a fit */
    const char *reference;    /* the variant whose kernel's reference is the op's (sequences
                                 are checked against it); NULL: the first single launch */
    LibPlan plan;
} LibOp;

typedef struct {
    const char *path; const char *text; uint32_t len;
    const char *shown;        /* the path diagnostics name: DIR/path from a folder */
    uint32_t file;            /* as a source file of the ctx, UINT32_MAX before */
    Module *vm;               /* verified, once (lib_instance.c), or NULL */
    int failed;               /* it did not verify: said once, not again per variant */
    size_t off;               /* in the blob */
} LibSource;
typedef struct { const char *op, *why; } LibGap;

struct CakeLib {
    CakeCtx *ctx;             /* the context it was opened in */
    const char *name, *tuned_device, *built_with;
    LibSource *srcs; uint32_t nsrcs;
    LibOp *ops; uint32_t nops;
    LibGap *gaps; uint32_t ngaps;
    uint8_t *blob; size_t blob_len;   /* malloc'd: sources and images */
};

/* ---- lib_manifest.c ---- */
/* Reads DIR/manifest.json and the sources it names into a fresh library (no
 * images yet): diagnostics at the manifest's lines. 0, or 1. */
int lib_manifest_read(CakeCtx *ctx, const char *dir, CakeLib **out);
/* The same from the text of a manifest (or an artifact's meta document, a
 * superset) into lib; dir NULL: the sources are in lib->srcs already. */
int lib_manifest_parse(CakeCtx *ctx, CakeLib *lib, const char *dir, const char *path,
                       const char *text, uint32_t len);
/* Parses and verifies each variant's kernel from its source and checks its
 * signature against the op's (E1207, E1208). 0, or 1. */
int lib_variants_check(CakeCtx *ctx, CakeLib *lib);
/* parses a `when` condition against op's dims: 1, or 0 */
int lib_cond_parse(const LibOp *op, const char *text, LibCond *out);
/* Binds variant v's `set` into its CeBinding list: 1, or 0 with diagnostics */
int lib_variant_bind(CakeCtx *ctx, LibVariant *v);

/* ---- lib_build.c ---- */
/* Folds a tuned table (JSON of `lib tune`) into lib's tuned cells: 0, or 1 (E1211, E1206). */
int lib_table_fold(CakeCtx *ctx, CakeLib *lib, const char *path);
/* The cost model's time (ms) of variant v of op at dimv on `device`, on module m
   (NULL: v->m, which must be verified); -1 when the model has no answer */
double lib_variant_cost(CakeCtx *ctx, const LibOp *op, const LibVariant *v, Module *m,
                        const int64_t *dimv, const char *device, CostResult *res);

/* ---- lib_artifact.c ---- */
/* The meta document and the blob, written as the artifact file. 0, or 1. */
int lib_artifact_write(CakeCtx *ctx, const CakeLib *lib, const char *path);

/* ---- lib_domain.c ---- */
/* compiles v's assumes at its bindings (after lib_variant_bind) */
void lib_domain_compile(CakeCtx *ctx, const LibOp *op, LibVariant *v);
/* assume i of v at dimv: 1 when it holds or does not evaluate, 0 when it fails */
int lib_assume_holds(const CakeLib *lib, const LibOp *op, const LibVariant *v, uint32_t i,
                     const int64_t *dimv);
/* op's domains in the plan's flat form (after every variant's lib_domain_compile) */
void lib_domain_plan(CakeCtx *ctx, LibOp *op);
/* variant v's domain at dimv through the plan (op->plan.ready): lib_domain_holds's answer */
int lib_domain_fast(const CakeLib *lib, const LibOp *op, uint32_t v, const int64_t *dimv);

/* ---- lib_fit.c ---- */
int lib_fit_family(const char *name);          /* LIB_FIT_*, 0 for an unknown name */
const char *lib_fit_family_name(int family);
/* op's dims M, N, K into op->fit_dim: 1; else, for an op of two dims or more, its first two
   (rows, columns: the row family's only) and 2; 0 when it has fewer (then it has no fits) */
int lib_fit_dims(LibOp *op);
/* a fit's geometry (each at least 1) and its inverses; op's SM count and its inverses */
void lib_fit_set_geometry(LibFit *f, const int64_t *geo);
void lib_fit_set_sms(LibOp *op, int64_t sms);
/* v's tile geometry from its kernel's parameters at its bindings (v->k bound; a
   sequence: its last launch's) */
void lib_fit_geometry(CakeCtx *ctx, const LibOp *op, LibVariant *v);
/* one tuned time of v at dimv into its normal equations; then the fit */
void lib_fit_add(const LibOp *op, LibVariant *v, const int64_t *dimv, double ms);
void lib_fit_solve(LibVariant *v);
/* v's predicted ms at dimv, or -1 without a fit */
double lib_fit_predict(const LibOp *op, const LibVariant *v, const int64_t *dimv);
/* op's fits in the plan's flat form (after lib_fit_solve or an artifact's fits);
   lib_fit_unplan drops it (before a table is folded again) */
void lib_fit_plan(CakeCtx *ctx, LibOp *op);
void lib_fit_unplan(LibOp *op);
/* the plan's fitted variants' predicted ms at dimv: t[i] of variant op->plan.fit_var[i]
   (op->plan.fit_ready); how many are above 0 */
uint32_t lib_fit_predict_fitted(const LibOp *op, const int64_t *dimv, double *t);
/* every variant's predicted ms at dimv into t (-1: no fit): how many are above 0 */
uint32_t lib_fit_predict_all(const LibOp *op, const int64_t *dimv, double *t);
/* the variant of t predicted fastest, taken out of t (its time set to -1), or
   UINT32_MAX when none is left: a select tests them in this order and mostly
   stops at the first */
uint32_t lib_fit_next(const LibOp *op, double *t);

/* ---- lib_select.c ---- */
uint64_t lib_class_key(const LibOp *op, const int64_t *dimv);
uint64_t lib_grid_key(const LibOp *op, const int64_t *dimv);
unsigned lib_bucket(int64_t v);   /* bits of v: 0 for v <= 0, 1 for 1, 2 for 2..3 ... */
/* 1 when variant v's domain holds at dimv; *failed: the failing assume, or 0 for a cond
   (*cond set) */
int lib_domain_holds(const CakeLib *lib, const LibOp *op, const LibVariant *v,
                     const int64_t *dimv, NodeId *failed, const LibCond **cond);
/* an explicit condition at dimv */
int lib_cond_holds(const LibCond *c, const int64_t *dimv);
/* sorts cells by key */
void lib_cells_sort(LibCell *c, uint32_t n);
/* sorts op's measured shapes by class, then dims; merges two of the same dims (the lesser
   time of each variant) */
void lib_meas_sort(CakeCtx *ctx, LibOp *op);
/* the measured shapes of class key (dimv's class): *exact the one at exactly dimv, or NULL;
   returns the one nearest dimv (*exact where there is one; else the least sum over the dims
   of |log(d / d')|, ties to the first in order), or NULL when the class has none */
const LibMeas *lib_meas_class(const LibOp *op, uint64_t key, const int64_t *dimv, const LibMeas **exact);
/* that distance: the product over the dims of the larger over the smaller */
double lib_meas_distance(const int64_t *a, const int64_t *b, uint32_t ndims);
/* every op's plan (lib_domain_plan, lib_fit_plan): once the variants and fits are final */
void lib_plan(CakeCtx *ctx, CakeLib *lib);

/* ---- lib_seq.c ---- */
/* the variant whose kernel's reference block is op's: its `reference`, else the first
   variant of one launch */
const LibVariant *lib_op_reference(const LibOp *op);
/* frees the workspaces of lib's sequence variants */
void lib_seq_free(CakeLib *lib);
/* launches sequence variant ch->variant as cake_lib_launch does: 0, 1, 3 */
int lib_seq_launch(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, const CakeLibChoice *ch,
                   const RtPtr *tensors, const void *const *scalars, void *stream);

/* ---- lib_cache.c ---- */
enum { LIB_CACHE_SLOTS = 16 };   /* shapes kept per variant */
typedef struct LibRec LibRec;
/* v's kept launch at these dims, or NULL */
LibRec *lib_rec_find(LibVariant *v, const int64_t *dimv, uint32_t ndims);
/* a fresh record for these dims (the oldest replaced); lib_rec_done once its steps are made */
LibRec *lib_rec_claim(CakeCtx *ctx, LibVariant *v, const int64_t *dimv, uint32_t ndims);
LibPrep *lib_rec_step(LibRec *r, uint32_t s);
void **lib_rec_aux(LibRec *r);
void lib_rec_done(LibRec *r, uint32_t nsteps);
/* r emptied (a failed preparation, a step reloaded) */
void lib_rec_drop(LibRec *r);
/* v's records freed; every variant's of lib */
void lib_cache_free(LibVariant *v);
void lib_cache_forget(CakeLib *lib);

/* ---- lib_launch.c ---- */
/* prepares variant v (one launch) on dev: 0, 1, 3 */
int lib_variant_prepare(CakeCtx *ctx, CakeLib *lib, RtDevice *dev, LibVariant *v);
/* the dims of a choice and its variant's parameters, as a ShapeEnv of lib's ctx */
void lib_choice_env(const CakeLib *lib, const CakeLibChoice *ch, ShapeEnv *env);

/* lib_build.c: whether target t's variants are stored as cubins for an
   artifact built for `device` (NULL: h200): SASS runs on its own major only */
int lib_cubin_fits(Target t, const char *device);

/* ---- lib_instance.c: the one seam to kernel instances ---- */
/* Variant v of lib as an instance built to `stage`: CAKE_INST_BOUND (its
 * binding verified), CAKE_INST_LOWERED (out->k with the launch plan) or
 * CAKE_INST_COMPILED (also out->image, malloc'd). 0, 1, 2, 3. */
int lib_instance(CakeCtx *ctx, const CakeLib *lib, const LibVariant *v, CakeInstStage stage,
                 CakeKernel *out);
/* the verified module of source src, parsed and verified once */
int lib_source_module(CakeCtx *ctx, const CakeLib *lib, uint32_t src, Module **out);

#endif
