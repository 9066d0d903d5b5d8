/* exec.h — the concrete interpreter of integer control: it runs a kernel's
 * statements (loops, ifs, lets, vars, assignments) for one thread at a time
 * with concrete values of dims, loop variables and special registers, under a
 * statement budget. Expressions evaluate with the one integer evaluator
 * (consteval.h) through its hooks. The verifier's synchronization checks
 * simulate protocols with it (verifier/sync.h); the TIR-L executor
 * (`run --sim`, sim/) shares its role ranges, thread numbering and dim facts.
 *
 * The interpreter knows a kernel through AxKernel, which its client fills:
 * the statement tables (enclosing role, statement of an expression) and two
 * optional hooks (memoized constants; lets whose value is not an integer the
 * interpreter should take, e.g. the verifier's pipeline stage tokens).
 *
 *     AxExec x;
 *     ax_exec_init(&x, &kf, 100000);
 *     x.stmt = my_visit;             // each non-control statement, and each if
 *     ax_exec_thread(&x, role, t);   // thread.x, lane, warp, wg of thread t
 *     ax_exec(&x, k->body);          // x.unknown: a condition it could not evaluate
 */
#ifndef CAKE_EXEC_H
#define CAKE_EXEC_H
#include "ir.h"
#include "targets.h"
#include "consteval.h"

/* how deep the interpreter follows nested blocks */
#define AX_MAX_DEPTH 200

typedef struct AxKernel AxKernel;
struct AxKernel {
    CakeCtx *ctx;
    Kernel *k;
    Target tg;             /* the target the kernel runs on */
    int64_t warp;          /* lanes per warp on tg: 32, or 64 on AMD */
    int64_t block_threads; /* on tg; 0: unknown */
    const NodeId *role;    /* statement -> the ROLE whose body holds it (0: outside roles) */
    const NodeId *stmt_of; /* expression node -> the statement it belongs to */
    /* optional: the constant value of e (NULL: ce_const_int) */
    int (*konst)(const AxKernel *kf, NodeId e, int64_t *out);
    /* optional: 1 when the LET's value is not taken (it stays unknown) */
    int (*opaque_let)(const AxKernel *kf, NodeId let);
    void *owner;           /* the client's (the hooks' state) */
};

/* the constant value of e (through kf->konst when set) */
int ax_const(const AxKernel *kf, NodeId e, int64_t *out);
/* NAME -> its declaration; else 0 */
NodeId ax_decl(const AxKernel *kf, NodeId e);
/* a role's threads within the block (0: the whole block): first and count */
int ax_role_range(const AxKernel *kf, NodeId role, int64_t *first, int64_t *count);

typedef struct AxExec AxExec;
struct AxExec {
    const AxKernel *kf;
    CeEnv env;                            /* hooks on val/has, spec/has_spec (env.u = this: no copies) */
    int64_t *val; uint8_t *has;          /* per declaration node */
    int64_t spec[SR__COUNT]; uint8_t has_spec[SR__COUNT];
    long budget;                          /* statements left; < 0: gave up */
    int unknown;                          /* hit a condition it cannot evaluate */
    int stopped;                          /* executed `return` */
    int in_grid;                          /* evaluating the grid clause (for grid.x) */
    int64_t sm_count;                     /* the value of `sm.count` (0: TG_DEFAULT_SM_COUNT) */
    NodeId role;                          /* only this role's body (0: outside roles) */
    void (*stmt)(AxExec *x, NodeId st);   /* each non-control statement */
    const uint8_t *skip;                  /* per statement: 1 = not run (NULL: run all) */
    void *u;                              /* the stmt hook's state */
    void *owner;                          /* the client's (the verifier's SyK) */
};

void ax_exec_init(AxExec *x, const AxKernel *kf, long budget);
int ax_eval(AxExec *x, NodeId e, int64_t *out);
/* sets thread.x, lane, warp, wg for block thread t of role (warp and wg count
 * from the role's first warp; lanes per warp: kf->warp); blocks at 0 unless set */
void ax_exec_thread(AxExec *x, NodeId role, int64_t t);
void ax_exec(AxExec *x, NodeId block);

/* binds the kernel's dims to sample `i` (0..AX_NSAMPLES-1) that satisfies the
 * assumes; returns 0 when sample i does not */
#define AX_NSAMPLES 8
int ax_sample_dims(AxExec *x, int i);
/* what the assumes say about dim (a DIM node): `D % mod == 0`, lo <= D <= hi
 * (callers initialize mod = 1 and the bounds) */
void ax_dim_facts(const AxKernel *kf, NodeId dim, int64_t *mod, int64_t *lo, int64_t *hi);
/* "M = 4096, K = 96" of the current sample */
const char *ax_sample_text(AxExec *x);

#endif
