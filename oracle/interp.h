/* interp.h — the fp64 reference interpreter: evaluates a kernel's `reference`
 * block on host tensors. The correctness oracle of `cakec run --check`
 * (check.h) and the byte/flop counts of `run --bench`.
 *
 * Values. Every tensor lives on the host as an array of doubles plus its
 * dtype; each element holds a value exactly representable in that dtype
 * (a bf16 input is its real value). The reference computes in fp64; integer
 * expressions (indices, dims, int tensors) are exact integers held in doubles
 * (|v| < 2^53), with C semantics for `/` and `%` (truncation toward zero).
 * Every conversion to a dtype rounds to that dtype: casts (`bf16(x)`,
 * `f32(x)`), typed `let`/`var`, and stores into a tensor. Floats round to
 * nearest even (fp8 saturates to its largest finite value, like PTX's
 * .satfinite); float -> int truncates toward zero and saturates (NaN -> 0);
 * int -> int wraps to the width; -> bool is `!= 0`.
 *
 * Use: interp_new once per (reference) kernel; interp_run per shape. Errors in
 * the reference (a construct it does not allow, an out-of-bounds read, an
 * integer division by zero) are reported as E095x diagnostics into ctx at the
 * offending node and the call returns 0.
 */
#ifndef CAKE_INTERP_H
#define CAKE_INTERP_H
#include "ir.h"
#include "eval.h"

/* One argument of a kernel on the host (rank 0: a scalar). */
typedef struct HostTensor {
    DType dtype;
    int rank;
    int64_t shape[IR_MAX_RANK];
    int64_t stride[IR_MAX_RANK];   /* in elements */
    int64_t n;                     /* logical elements: the product of shape (1 for rank 0) */
    int64_t span;                  /* storage elements: 1 + sum (shape-1)*stride (0 if n == 0) */
    double *data;                  /* span values, indexed by sum idx*stride */
    uint8_t *written;              /* optional, span bytes: the reference sets 1 where it stores */
    const void *enc;               /* a read-only input may give its elements here instead, in
                                      the dtype's device encoding (data NULL): no fp64 copy */
} HostTensor;

/* How the reference uses an argument (bits). */
enum { INTERP_READ = 1, INTERP_WRITTEN = 2 };   /* IN = READ, OUT = WRITTEN, INOUT = both */

/* Work of one evaluation of the reference. */
typedef struct InterpCost {
    double flops;        /* float arithmetic ops: + - * / ^, math builtins (1 each), fma (2),
                            each accumulation step of sum/max/min (1); casts, compares,
                            selects and integer (index) arithmetic count 0 */
    double bytes;        /* each read argument once + each written argument once, in its dtype */
    double sum_len;      /* the longest chain of nested sum() terms one value accumulates */
    int exact;           /* 1: counted during an evaluation; 0: estimated (interp_cost) */
    int trig;            /* the reference calls sin or cos (the GPU's are approximate) */
} InterpCost;

typedef struct Interp Interp;

/* Compiles the reference block of k (after fe_resolve). Returns NULL with
 * diagnostics (E0950 no reference, E0951 a construct the reference may not
 * use) when it cannot. */
Interp *interp_new(CakeCtx *ctx, const Kernel *k);
void interp_free(Interp *in);

const Kernel *interp_kernel(const Interp *in);
/* INTERP_READ / INTERP_WRITTEN bits of argument i (k->args order); 0 when unused. */
int interp_arg_role(const Interp *in, uint32_t i);

/* Stop an evaluation after this many loop iterations (E0960); 0: no limit.
 * The default is 2^32. */
void interp_set_max_steps(Interp *in, uint64_t steps);

/* Fills dtype, rank, shape, stride, n and span of argument i under env
 * (data/written untouched). Returns 1, or 0 with E0953 when a dim is unbound. */
int interp_arg_tensor(CakeCtx *ctx, const Kernel *k, uint32_t i, const ShapeEnv *env,
                      HostTensor *t);

/* Evaluates the reference under env (parameters and dims bound; see
 * eval.h) on args[0 .. k->nargs): reads what it reads, stores into written
 * arguments in place (setting ->written where non-NULL). cost may be NULL.
 * Returns 1, or 0 with a diagnostic. */
int interp_run(Interp *in, const ShapeEnv *env, HostTensor *args, InterpCost *cost);

/* Estimates the work of the reference under env without running it: loop trip
 * counts from their bounds (a loop variable stands at the middle of its range,
 * so triangular loops count right), both branches of an if at their larger.
 * Tensor data is not read (a bound that depends on it counts as 0).
 * Returns 1, or 0 when a dim is unbound. */
int interp_cost(Interp *in, const ShapeEnv *env, InterpCost *cost);

/* ---- sampled evaluation (`run --check` at large shapes) ------------------ */

/* Whether (and how) the reference can be evaluated for a subset of its
 * output: its top-level statements are loop nests whose outer loop
 * variable is the first index of every tensor element they store (rows
 * are independent: no variable or array declared outside a nest is set
 * inside it). When every nest is a perfect 2-nest whose inner variable is
 * the second index of every store (`C[m, n] = sum(...)`), tiles of rows x
 * columns can be sampled too. */
typedef struct InterpSamplePlan {
    int ok;
    int tiles;            /* tiles can be sampled */
    int64_t rows, cols;   /* the largest outer (inner) loop end: rows in [0, rows) */
    char why[200];        /* !ok: why not */
} InterpSamplePlan;
int interp_sample_plan(Interp *in, const ShapeEnv *env, InterpSamplePlan *plan);

/* Restricts the following interp_run calls: the outer loop of each nest runs
 * only over row[0 .. n) (ascending, distinct; values its range does not hold
 * are skipped); with col_lo/col_hi, row[i]'s inner loop runs only over
 * [col_lo[i], col_hi[i]). n == 0 (or row NULL) evaluates everything again.
 * The arrays are copied. Elements outside the sample are not written. */
void interp_set_sample(Interp *in, uint32_t n, const int64_t *row, const int64_t *col_lo,
                       const int64_t *col_hi);

/* ---- dtypes on the host ------------------------------------------------ */
/* v rounded to dtype dt (see the rules above). */
double interp_round(DType dt, double v);
/* Writes v (already rounded, or rounded here) in dt's encoding to dst
 * (ir_dtype_bytes(dt) bytes; bool: 1 byte). */
void interp_encode(DType dt, double v, void *dst);
/* The exact value of one element in dt's encoding. */
double interp_decode(DType dt, const void *src);
/* Bytes of one element on the device (bool: 1). */
int interp_elem_bytes(DType dt);

#endif
