/* cost_walk.h — what the files of the cost model's walk share: the walk's
 * state and the functions one file calls in another. cost_profile.c runs the
 * walk (five sampled blocks) and sums it into a profile; cost_count.c counts
 * expressions and statements; cost_query.c answers the walk's questions
 * (bindings, notes, sizes of types, conditions at sampled threads, the
 * arguments touched, cache reuse, bank conflicts). */
#ifndef CAKE_COST_WALK_H
#define CAKE_COST_WALK_H
#include "cost.h"

#define NSAMPLE_THREADS 4
#define MAX_LOOPS 24
#define UNROLL_WALK_MAX 64
#define COST_MEMO 4096   /* entries of a per-node memo (a power of two) */
#define EXPR_MEMO 4096   /* entries of the arithmetic memo (a power of two) */

/* values computed once per key (cw_memo_key: a node, or the source statement
   its copies share) of the walked kernel; open addressing, an entry of an older
   generation is empty (a new generation clears the memo) */
typedef struct {
    uint64_t key[COST_MEMO]; uint32_t gen[COST_MEMO]; double a[COST_MEMO], b[COST_MEMO];
    uint32_t cur;
} CostMemo;

/* the SIMT work of a pure arithmetic expression (no memory access, no
   reduction, no barrier) per execution, by node and role size: the lowered
   level revisits the same nodes at every sampled block and unrolled iteration */
typedef struct { double alu, sfu, shfl, flops; } ExprWork;   /* one cache line's half */
typedef struct {
    uint64_t key[EXPR_MEMO];      /* apart from the counts: cleared alone, probed in L1 */
    ExprWork work[EXPR_MEMO];     /* an entry's counts together: one line read per hit */
    uint8_t *pure;                /* per node: 0 not known, 1 pure, 2 not */
} ExprMemo;

typedef struct {
    CakeCtx *ctx;
    const Kernel *k;
    Target tg;
    CeEnv env;                    /* base bindings plus the hooks below */
    int64_t block[3], grid[3];
    int64_t thread;               /* the sampled thread.x */
    int sm_count;
    NodeId loop_decl[MAX_LOOPS]; int64_t loop_val[MAX_LOOPS]; int nloops;
    int64_t block_threads, role_threads;
    CostWork *w;                  /* the current role's counts (or the block's) */
    CostProfile *p;
    int first;                    /* the first sample: notes and registers are taken once */
    int unrolled;                 /* inside an unrolled loop */
    double batch;                 /* per-thread global load bytes of the current unrolled batch */
    double inflight_thread;
    double inflight_loop;         /* per-thread load bytes of one non-unrolled loop iteration */
    double stage[MAX_LOOPS]; int nstage;   /* per-iteration async bytes, per non-unrolled loop */
    double async_stage;           /* the largest per-iteration async bytes of a loop */
    int cp_wait;                  /* the largest cp.async.wait count (-1: none) */
    double regs_tile;             /* per-thread registers of the reg declarations */
    uint8_t *arg_rw;              /* per argument: 1 read, 2 written */
    CostMemo *reuse;              /* per global read: the first wave's reuse */
    /* the lowered level (TIR-L): the walk runs once per role over the role's
       threads [group_first, group_first + role_threads); special registers are
       the real (absolute) ones, conditions are sampled at lanes and warps of
       the group, and cond_f is the fraction of the group on the current path */
    int lowered;
    int64_t group_first;
    double cond_f;
    CostMemo *lines;              /* per global access: lines touched, fewest possible */
    CostMemo *conds;              /* TIR-L: condition fractions of the current role's walk */
    CostMemo *conds_blocks;       /* TIR-L: those that read no block index, by role, kept over
                                     the sampled blocks (the same inputs: the same fraction) */
    uint32_t group;               /* the role being walked (its index; 0 without roles) */
    uint32_t thread_reads;        /* reads of a thread-dependent special register (thread.x,
                                     lane, warp, wg) by the evaluator: a condition that reads
                                     none is uniform over the group, evaluated once */
    ExprMemo *arith;              /* pure arithmetic counted once per node and role size */
    uint32_t block_reads;         /* reads of block.x, .y, .z by what the counts depend on (the
                                     per-profile memos of lines and reuse excepted): a walk
                                     that reads none counts the same at every sampled block */
} Walk;

/* ---- cost_query.c ---- */
/* the key of node `at`: its source span and op (the lowered level's copies of
   one statement — per-element epilogues — share it), plus the values of the
   loops being walked when with_loops; the node itself where it has no span */
uint64_t cw_memo_key(const Walk *w, NodeId at, int with_loops);
int cw_memo_get(const CostMemo *m, uint64_t key, double *a, double *b);
void cw_memo_put(CostMemo *m, uint64_t key, double a, double b);
/* the CeEnv hooks: loop variables of the walk, special registers of the sample */
int cw_hook_decl(const CeEnv *env, NodeId decl, int64_t *out);
int cw_hook_special(const CeEnv *env, NodeId at, int64_t *out);
/* a note (fmt takes what and line), on the first sample only */
void cw_note(Walk *w, const char *fmt, const char *what, uint32_t line);
uint32_t cw_line_of(const Walk *w, NodeId id);
int cw_eval(Walk *w, NodeId e, int64_t *out);
/* types: extents, elements, bytes, threads of their scope, copies per block */
const Type *cw_type_of(const Walk *w, NodeId id);
double cw_extent(Walk *w, const Type *t, int i);
double cw_elems(Walk *w, const Type *t);
double cw_dt_bytes(const Type *t);
double cw_bytes_of(Walk *w, const Type *t);
double cw_scope_threads(const Walk *w, const Type *t);
double cw_copies(const Walk *w, const Type *t);
/* the fraction of the sampled threads for which cond holds */
double cw_cond_frac(Walk *w, NodeId cond);
/* arguments, reuse and banks */
void cw_mark_arg(Walk *w, NodeId ref, uint8_t how);
double cw_wave_reuse(Walk *w, NodeId at, NodeId ref);
/* the same for a lowered TMA: its coordinate operands */
double cw_wave_reuse_list(Walk *w, NodeId at, const NodeId *ix, uint32_t n);
double cw_bank_ways(Walk *w, NodeId ref);
/* the 128-byte lines one warp instruction of global access `at` to ref (bytes
   per thread, mask or 0) touches, and the fewest its bytes could touch */
double cw_lines(Walk *w, NodeId at, NodeId ref, double bytes, NodeId mask, double *min_lines);
Space cw_space_of(const Walk *w, NodeId ref);

/* ---- cost_count.c ---- */
/* counts the statements of block b, each m times */
void cw_block_stmts(Walk *w, NodeId b, double m);
/* a new level of per-iteration async bytes (one per non-unrolled loop) */
void cw_stage_push(Walk *w);
void cw_stage_pop(Walk *w);

#endif
