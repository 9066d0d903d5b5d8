/* check.h — `cakec run --check`: a kernel against its fp64 reference, on
 * seeded random inputs, over several shapes; independent of the GPU (the
 * device run is a callback). See docs/checking.md.
 *
 * One shape:
 *     CheckReport rep;
 *     int st = check_run(ctx, k, &env, my_launch, my_state, &rep);
 * Several shapes picked from the kernel's assumes (shapes_pick below):
 *     CheckReport reps[8];
 *     uint32_t n = check_suite(ctx, k, &base, NULL, my_launch, my_state, reps, 8);
 *
 * What check_run does for one shape env:
 *   1. compiles the reference (the kernel's own, or CheckOptions.reference:
 *      the task's kernel from `--reference FILE`, whose arguments must match
 *      k's in order, name, dtype and rank — E0956);
 *   2. binds parameter defaults, requires every dim bound (E0953) and every
 *      assume to hold (E0961);
 *   3. allocates one CheckBuffer per argument of k: inputs (arguments the
 *      reference reads) get seeded random data (an integer tensor declared
 *      `values LO .. HI` in that range), outputs (arguments it only
 *      writes) the poison pattern, in/out arguments random data;
 *   4. runs the reference on the host (fp64) on the same inputs;
 *   5. calls launch(): the device run;
 *   6. compares every written argument with the reference (check_compare).
 * Failures are also reported as diagnostics at the argument's declaration:
 * E0957 (values differ), E0958 (element never written), E0959 (NaN),
 * E0962 (the device run failed).
 */
#ifndef CAKE_CHECK_H
#define CAKE_CHECK_H
#include "ir.h"
#include "eval.h"
#include "interp.h"

/* ---- the device callback ------------------------------------------------ */

/* One kernel argument, in host memory. Tensors: `host` holds the storage
 * (span elements at their strides, in the dtype's device encoding: f32 as
 * IEEE single, bf16 as its 16 bits, fp8 as one byte, bool as one byte 0/1);
 * scalars: `host` holds the value in the same encoding. */
typedef struct CheckBuffer {
    uint32_t arg;            /* index into k->args */
    const char *name;
    DType dtype;
    uint8_t is_tensor;
    uint8_t role;            /* INTERP_READ / INTERP_WRITTEN bits (0: unused by the reference) */
    uint8_t workspace;       /* declared `workspace`: zero in, copied back and checked zero */
    uint8_t rank;
    int64_t shape[IR_MAX_RANK];
    int64_t stride[IR_MAX_RANK];   /* elements */
    size_t bytes;            /* of host: storage bytes (tensor) or element bytes (scalar) */
    void *host;
} CheckBuffer;

typedef struct CheckLaunch {
    const Kernel *k;          /* the kernel to run (not the reference kernel) */
    const ShapeEnv *env;      /* params and dims of this run */
    CheckBuffer *bufs;        /* k->nargs of them, in argument order */
    uint32_t nbufs;
    const int64_t *dims;      /* value of k->dims[i]: the trailing i32 params of the ABI */
    uint32_t ndims;
    char *err;                /* the callback writes why it failed (one line) */
    size_t errlen;
} CheckLaunch;

/* Runs the kernel on the device: allocate every tensor (bytes), copy every
 * tensor's host data to it (outputs hold the poison pattern: copy it too),
 * launch with the arguments in order (tensor: device pointer; scalar: the
 * value in host) then the dims as i32, wait, and copy back into host every
 * tensor whose role has INTERP_WRITTEN. Returns 0, or nonzero with l->err
 * filled (cakec exits 3 on it). May be called several times per process. */
typedef int (*CheckLaunchFn)(void *user, CakeCtx *ctx, CheckLaunch *l);

/* ---- options --------------------------------------------------------------- */

typedef enum { CHECK_DIST_UNIFORM, CHECK_DIST_NORMAL } CheckDist;

typedef struct CheckOptions {
    const Kernel *reference;  /* NULL: k's own reference block */
    uint64_t seed;            /* 0: CHECK_DEFAULT_SEED */
    CheckDist dist;           /* floats: uniform in [-1, 1) (default) or normal(0, 1) */
    int int_lo, int_hi;       /* integer inputs drawn in [int_lo, int_hi] minus 0;
                                 both 0: [-8, 8] signed, [1, 16] unsigned */
    double tol_scale;         /* multiplies every tolerance; 0: 1 */
    double max_elems;         /* refuse shapes whose arguments hold more elements (E0960);
                                 0: 2^27 */
    uint64_t max_steps;       /* reference loop iterations before E0960; 0: 2^32 */
    int no_diags;             /* 1: report failures only in the CheckReport */
    int skip_assumes;         /* 1: the launch's own domain was tested (a library sequence,
                                 checked against its op's reference kernel): the kernel's
                                 assumes are not tested at the shape */
    /* large shapes: over max_elems the check samples whole rows (or output
     * tiles) of the reference, seeded, instead of refusing (check_sample.c) */
    int sample;               /* 0: sample over max_elems or full_flops; 1: always; -1: never (E0960) */
    double full_flops;        /* the reference's estimated work (interp_cost) above which a
                                 shape is sampled; 0: CHECK_FULL_FLOPS */
    double sample_flops;      /* the reference's work on the sample; 0: 2^28 */
    double max_host_bytes;    /* sampled: the host buffers' limit (E0960); 0: 2^36 */
    /* after the device run, every written tensor's bytes (its device encoding)
     * into DIR/ARG.SHAPE.DTYPE.bin, SHAPE the report's shape with ", " as "_"
     * (`run --dump-outputs DIR`: the same seed's outputs of two runs compared
     * byte for byte or within a tolerance); NULL: none */
    const char *dump_dir;
    /* scalar float arguments: drawn uniform in [0.1, 1) unless given here by name */
    uint32_t nscalars;
    struct { Sym name; double value; } scalars[8];
} CheckOptions;

#define CHECK_DEFAULT_SEED UINT64_C(0x43414B45) /* "CAKE" */
/* a shape whose reference costs more (about 10 s of the interpreter) is sampled */
#define CHECK_FULL_FLOPS 0x1p30
#define CHECK_MAX_OUTPUTS 16

/* ---- the report ------------------------------------------------------------ */

typedef enum {
    CHECK_PASS,          /* every compared element within its bound */
    CHECK_FAIL,          /* some element differs, is NaN or was never written */
    CHECK_ERROR,         /* the reference or the shape is wrong (diagnostics in ctx) */
    CHECK_DEVICE_ERROR   /* launch() failed (message in CheckReport.message) */
} CheckStatus;

typedef enum {
    CHECK_BAD_NONE,
    CHECK_BAD_VALUE,      /* |got - want| over the bound */
    CHECK_BAD_NAN,        /* got NaN (NaN never passes, even where want is NaN) */
    CHECK_BAD_UNWRITTEN,  /* got is still the poison pattern */
    CHECK_BAD_INF         /* got or want infinite and not equal */
} CheckBad;

/* The comparison of one output argument. Bound per element:
 *   |got - want| <= rtol * |want| + atol,   atol = atol_rel * max|want|
 * (max over the output). Errors below are over the compared elements. */
typedef struct CheckOutput {
    uint32_t arg;
    const char *name;
    DType dtype;
    int rank;
    int64_t shape[IR_MAX_RANK];
    int ok;
    int64_t n_compared;   /* elements compared (those the reference wrote) */
    int64_t n_bad;        /* of which failed, for any reason */
    int64_t n_nan;
    int64_t n_unwritten;
    int64_t n_skipped;    /* elements the reference never writes: not compared */
    double max_abs_err;   /* max |got - want| */
    double max_rel_err;   /* max |got - want| / (|want| + atol) */
    double mean_abs_err;
    double max_ratio;     /* max |got - want| / bound: <= 1 passes */
    double want_max_abs;  /* max |want| */
    double rtol, atol;    /* the bound used (atol absolute) */
    int64_t worst[IR_MAX_RANK]; double worst_got, worst_want;   /* at max_ratio */
    CheckBad bad;         /* the first bad element's failure, CHECK_BAD_NONE if none */
    int64_t first_bad[IR_MAX_RANK]; double first_bad_got, first_bad_want;
} CheckOutput;

/* What a sampled check compared: `count` whole rows (the outer loop of the
 * reference: its first output index) out of `of`, or `count` tiles of
 * tile[0] x tile[1] output elements out of `of` tiles; chosen from `seed`. */
typedef struct CheckSample {
    int on;               /* 0: every output element was compared */
    int tiles;            /* 0: rows, 1: tiles */
    int64_t count, of;
    int64_t tile[2];
    uint64_t seed;
} CheckSample;

typedef struct CheckReport {
    CheckStatus status;
    int ok;                       /* status == CHECK_PASS */
    uint64_t seed;
    ShapeEnv env;                 /* the shape this report is about */
    char shape[256];              /* "M=37, N=65" */
    uint32_t noutputs;
    CheckOutput out[CHECK_MAX_OUTPUTS];
    /* over all outputs */
    int64_t n_bad;
    int unwritten;                /* some element was never written */
    int has_nan;
    double max_abs_err, max_rel_err, mean_abs_err, max_ratio;
    int first_bad_output;         /* index into out[], -1 if none */
    InterpCost cost;              /* the reference's work at this shape (exact) */
    double ref_seconds;           /* host time of the reference */
    double device_seconds;        /* wall time of launch(), transfers included */
    char message[512];            /* one line: what happened */
    CheckSample sample;           /* a large shape: what was sampled */
} CheckReport;

/* Checks k at one shape. env binds dims (and parameter overrides); parameters
 * not bound take their defaults. Returns the status (also in out->status). */
CheckStatus check_run(CakeCtx *ctx, Kernel *k, const ShapeEnv *env, CheckLaunchFn launch,
                      void *user, CheckReport *out);
CheckStatus check_run_ex(CakeCtx *ctx, Kernel *k, const ShapeEnv *env, CheckLaunchFn launch,
                         void *user, const CheckOptions *opt, CheckReport *out);

/* the most reports check_suite fills */
#define CHECK_SUITE_MAX 16
/* the shapes `run --check` asks check_suite for, per parameter combination */
#define CHECK_DEFAULT_SHAPES 8

/* Picks shapes (shapes_pick) from base and checks k at each; stops at the
 * first CHECK_ERROR or CHECK_DEVICE_ERROR. Returns how many reports it
 * filled (0 with E0955 when no shape satisfies the assumes). A kernel whose
 * grid reads `sm.count` (a persistent kernel) is checked with sm.count bound
 * below the tile count at some shapes (2, the device's, 3, in turn), so
 * that its blocks walk several tiles each; base's sm.count, if bound, is kept. */
uint32_t check_suite(CakeCtx *ctx, Kernel *k, const ShapeEnv *base, const CheckOptions *opt,
                     CheckLaunchFn launch, void *user, CheckReport *reps, uint32_t max);

/* The shapes check_suite checks (shapes_pick, then sm.count bound for a persistent
 * grid), without running anything: their number (0: none fits, E0955 reported). */
uint32_t check_suite_shapes(CakeCtx *ctx, Kernel *k, const ShapeEnv *base,
                            const CheckOptions *opt, ShapeEnv *shapes, uint32_t max);

const char *check_status_name(CheckStatus s);   /* "pass", "fail", "error", "device_error" */
const char *check_bad_name(CheckBad b);          /* "none", "value", "nan", "unwritten", "inf" */

/* ---- pieces, exposed for tests and for the bench ------------------------------- */

/* The tolerance for an output of dtype dt whose values come from sums of up
 * to sum_len terms (InterpCost.sum_len; 0 or 1: none), times scale (0: 1). */
void check_tolerance(DType dt, double sum_len, double scale, double *rtol, double *atol_rel);

/* The poison byte of dt: 0xFF for floats (a NaN in every float format),
 * 0xAB for integers and bool. */
uint8_t check_poison_byte(DType dt);

/* Fills t (span elements, t->data allocated) with seeded random values of
 * its dtype: see CheckOptions. Never all zeros. */
void check_fill_random(HostTensor *t, uint64_t seed, const CheckOptions *opt);

/* Fills t with seeded values drawn uniformly in [lo, hi) (zero included):
 * the inputs of an argument declared `values lo .. hi`. */
void check_fill_range(HostTensor *t, uint64_t seed, int64_t lo, int64_t hi);

/* Fills t (rank 1, n = B + 1 elements) with the boundaries of B sequences packed
 * in rows lo .. hi - 1: t[0] = lo, t[B] = hi - 1 when the last one is long, lengths
 * in a fixed pattern of short and long sequences, from B = 5 on one boundary that
 * steps back (unsorted offsets, an empty sequence) and from B = 9 on empty ones:
 * an argument declared `offsets lo .. hi`. */
void check_fill_offsets(HostTensor *t, uint64_t seed, int64_t lo, int64_t hi);

/* The value range `values LO .. HI` of argument i of k under env: 1 with
 * *lo = LO, *hi = HI (HI excluded); -1 when the argument declares none; 0
 * with E0124 when it does not evaluate or is empty (HI <= LO). */
int check_arg_values(CakeCtx *ctx, const Kernel *k, uint32_t i, const ShapeEnv *env,
                     int64_t *lo, int64_t *hi);

/* splitmix64: the next value of a seeded stream */
uint64_t check_rand(uint64_t *state);

/* The values check_fill_random (ranged: check_fill_range(lo, hi)) would
 * draw, written in dt's device encoding to host (span elements). */
void check_fill_encoded(void *host, int64_t span, DType dt, uint64_t seed,
                        const CheckOptions *opt, int ranged, int64_t lo, int64_t hi);

/* A scalar argument's random value: floats uniform in [0.1, 1), bool 1,
 * integers in [1, 8]. */
double check_random_scalar(DType dt, uint64_t seed);

/* Chooses the sample of a large shape (check_sample.c): whole rows, or
 * output tiles when the reference is a perfect 2-nest and a row costs more
 * than an eighth of opt->sample_flops; always the first and the last row
 * (the last tile: the ragged corner), the rest drawn from seed. Restricts I
 * to it (interp_set_sample) and fills *s. Returns 1, or 0 with E0960 when
 * the reference cannot be sampled (interp_sample_plan says why). */
int check_sample_choose(CakeCtx *ctx, const Kernel *k, Interp *I, const ShapeEnv *env,
                        const CheckOptions *opt, uint64_t seed, CheckSample *s);

/* Compares got (t's layout, dtype encoding) with want (t->data, the
 * reference; t->written, if set, marks the elements to compare) and fills
 * out (arg, name stay as they are). The absolute bound is atol_rel x the
 * largest |want|, at least atol_abs. Returns out->ok. */
int check_compare(const HostTensor *want, const void *got, double rtol, double atol_rel,
                  double atol_abs, CheckOutput *out);

/* ---- test shapes ---------------------------------------------------------------- */

typedef struct PickOptions {
    uint32_t max_shapes;   /* 0: 6 */
    double max_flops;      /* per shape, by the reference's cost estimate; 0: 2^26 */
    double max_elems;      /* per shape, all arguments together; 0: 2^22 */
} PickOptions;

/* Chooses up to max test shapes for k: each binds every dim not bound in
 * base (base's bindings are kept: parameters, pinned dims), satisfies every
 * assume that evaluates, and stays small (ref's cost estimate; ref may be
 * NULL). The set mixes tile-aligned shapes, ragged ones (not multiples of the
 * tile sizes, when the assumes allow), the smallest one, and the kernel's
 * `shape` defaults scaled down. Returns how many it wrote (0 when none fits;
 * no diagnostic). */
uint32_t shapes_pick(CakeCtx *ctx, const Kernel *k, Interp *ref, const ShapeEnv *base,
                     const PickOptions *opt, ShapeEnv *out, uint32_t max);

#endif
