/* interp_priv.h — what the files of the reference interpreter share
 * (interp_compile.c compiles, interp.c evaluates, interp_fmt.c rounds and
 * encodes): the compiled form of a reference (XNode) and the interpreter's
 * state. Not used outside the interpreter; other stages use interp.h. */
#ifndef CAKE_INTERP_PRIV_H
#define CAKE_INTERP_PRIV_H
#include <setjmp.h>
#include "interp.h"

enum { K_INT, K_FLT, K_BOOL };

enum {
    X_NONE, X_CONST, X_VAR, X_READ, X_READV, X_EXTENT,
    X_ADD, X_SUB, X_MUL, X_FDIV, X_IDIV, X_FMOD, X_IMOD, X_POW,
    X_SHL, X_SHR, X_BAND, X_BOR, X_BXOR,
    X_LT, X_LE, X_GT, X_GE, X_EQ, X_NE, X_AND, X_OR, X_NEG, X_NOT,
    X_CONV, X_MATH, X_MAX2, X_MIN2, X_ABS, X_FMA, X_CDIV, X_SELECT,
    X_SUM, X_RMAX, X_RMIN,
    /* statements */
    X_SEQ, X_FOR, X_IF, X_SETVAR, X_STORE, X_LOCAL
};

enum { M_EXP, M_EXP2, M_LOG, M_LOG2, M_SQRT, M_RSQRT, M_RCP, M_TANH, M_SIN, M_COS };

typedef struct {
    uint8_t op;      /* X_* */
    uint8_t kind;    /* K_* of the value */
    uint8_t dt;      /* X_CONV / X_SETVAR: target dtype; X_STORE: tensor dtype */
    uint8_t cnt;     /* flops one evaluation of this node adds */
    uint8_t sub;     /* X_MATH: M_*; X_SETVAR/X_STORE: compound X_ op or 0; X_CONV: source kind;
                        X_EXTENT: dim */
    uint32_t a, b, c, d;
    uint32_t slot;   /* variable slot, or tensor index (X_READ, X_STORE, X_EXTENT, X_LOCAL):
                        arguments first, then local arrays */
    uint32_t list, n;
    NodeId src;      /* for diagnostics */
    double v;        /* X_CONST */
} XNode;

struct Interp {
    int trig;                   /* a sin or cos was compiled (InterpCost.trig) */
    CakeCtx *ctx;
    const Kernel *k;
    XNode *x; uint32_t nx, capx;
    uint32_t *xl; uint32_t nxl, capxl;
    uint32_t root;
    uint32_t *slot_of;          /* NodeId -> slot + 1 */
    uint8_t *slot_kind; uint8_t *slot_dt; uint32_t nslots, capslots;
    uint8_t *role;              /* per argument */
    int8_t *arg_rank;           /* per argument: declared rank (-1 not a tensor) */
    uint32_t *tens_of;          /* NodeId of an ARG or local VAR -> tensor index + 1 */
    uint32_t nlocal, caplocal;  /* local arrays: `var a: f64[N]` in the reference */
    NodeId *local_decl;
    HostTensor *tt;             /* arguments then locals, during an evaluation */
    int64_t *local_cap;         /* allocated elements of each local */
    int bad;
    /* evaluation state */
    double *vars;
    HostTensor *t;
    uint64_t flops;
    uint64_t steps, max_steps;
    int costmode;
    double sum_len;
    double *ramp;               /* cost estimate: per argument, LO and HI - 1 - LO of
                                   `offsets LO .. HI` (2 per argument), or NULL */
    jmp_buf jb;
    /* sampled evaluation (interp_sample.c): smark[x] is 1 on the outer loop of
     * a top-level nest, 2 on its column loop; the outer loop runs over srow[],
     * row si's column loop over [scol_lo[si], scol_hi[si]) when scol_hi set */
    uint8_t *smark;
    uint32_t nsamp, scur;
    int64_t *srow, *scol_lo, *scol_hi;
};

/* interp.c: evaluates expression xi (the plan evaluates loop bounds with it) */
double ip_eval(Interp *I, uint32_t xi);
int ip_bind(Interp *I, const ShapeEnv *env, HostTensor *args);

/* interp_fmt.c */
/* a conversion inside an expression: f32/f64 are exact (fp64 reference) */
double ip_conv(DType dt, int from, double v);
/* into a tensor element: everything rounds, f32 included */
double ip_conv_store(DType dt, int from, double v);

#endif
