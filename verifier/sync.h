/* sync.h — the synchronization-protocol checker (sync.c and sync_*.c) and the
 * bounds checker (bounds.c). Each check is a small pass over the structured
 * IR (loops and ifs, no CFG); the helpers they share live in sync_util.c
 * (tables, references, tokens, roles), sync_walk.c (visiting, dataflow) and
 * sync_exec.c (the concrete interpreter, thread counts).
 *
 *   sync_pipe.c     pipelines: stage tokens per role, trip counts, expect_tx
 *   sync_mbar.c     explicit mbarriers: arrival counts, parities, deadlocks
 *   sync_race.c     cross-role shared-memory ordering
 *   sync_intra.c    ordering among the threads of one role; single-issue operations
 *   sync_init.c     accumulators read before they are initialised
 *   sync_proxy.c    generic <-> async proxy ordering (fence.proxy.async, tma.store)
 *   sync_cpasync.c  cp.async groups (a concrete simulation of the group queue)
 *   sync_wgmma.c    wgmma groups: accumulators and operand stages
 *   sync_diverge.c  collectives under divergent control, named barrier ids/counts
 *   sync_named.c    named-barrier protocols simulated warp by warp (ping-pong)
 *   bounds.c        global and tile indices (symbolic intervals + congruences)
 *
 * Thread counts, role sizes and the ranges of `lane`, `warp` and `wg` depend
 * on the warp width: sy_run runs a check once per warp width among the
 * kernel's targets (32 on NVIDIA, 64 on AMD), with the block size of that
 * target, when the kernel can see the width (`warps`, roles, `lane`, `warp`,
 * `wg`, named barriers). A problem found on some widths only carries a note
 * naming their targets.
 */
#ifndef CAKE_SYNC_H
#define CAKE_SYNC_H
#include "ir.h"
#include "targets.h"
#include "consteval.h"
#include "exec.h"

/* Entry points, called by ver_verify after type checking. Each returns the
 * number of errors it reported. */
uint32_t ver_sync(CakeCtx *ctx, Kernel *k);
uint32_t ver_bounds(CakeCtx *ctx, Kernel *k);

/* ---- the kernel as the checks see it (sync_util.c) --------------------- */
/* how deep the helpers follow nested statements, blocks and expressions */
#define SY_MAX_DEPTH 200

typedef struct SyRuns SyRuns;

typedef struct {
    CakeCtx *ctx;
    Kernel *k;
    Target tg;         /* the target checked for (the first of its warp width) */
    int64_t warp;      /* lanes per warp on tg: 32, or 64 on AMD */
    NodeId *up;        /* statement -> enclosing FOR/IF/ROLE statement (0: kernel body) */
    uint8_t *in_else;  /* statement -> 1 when it sits in the else part of `up` (an IF) */
    uint8_t *guards;   /* block -> 0 not looked at, 1 no early-return guard, 2 has one (bounds.c) */
    NodeId *role;      /* statement -> ROLE whose body holds it (0: outside roles) */
    uint32_t *pos;     /* statement -> pre-order position (0: not a statement) */
    NodeId *stmt_of;   /* expression node -> the statement it belongs to */
    NodeId *roles;    uint32_t nroles;
    NodeId *pipes;    uint32_t npipes;
    NodeId *mbars;    uint32_t nmbars;
    NodeId *tiles;    uint32_t ntiles;    /* SHARED declarations */
    int64_t block_threads;                /* on tg; 0: unknown */
    NodeId *tok_src;   /* token VAR -> the LET of the first token moved into it */
    uint64_t *reported; uint32_t nreported, capreported;
    SyRuns *runs;      /* what earlier runs for other warp widths reported (NULL: none) */
    uint8_t *cknown;   /* node -> sy_const's answer so far: 0 not asked, 1 constant, 2 not */
    int64_t *cval;     /* node -> its constant value where cknown is 1 */
    uint32_t ncmemo;   /* nodes the memo covers (the kernel's node count at sy_init) */
    int named_decided; /* sync_named.c simulated the named barriers (sync_diverge.c stands down) */
    AxKernel ax;       /* the kernel as analysis/exec.h sees it (owner: this SyK) */
} SyK;

/* Builds the tables of k for target tg. */
void sy_init(SyK *s, CakeCtx *ctx, Kernel *k, Target tg);
/* An entry point's body: runs check on k once per warp width among k's
 * targets (sm_90a's when it lists none); 0 errors for a kernel without a body. */
uint32_t sy_run(CakeCtx *ctx, Kernel *k, uint32_t (*check)(SyK *s));

static inline Node *sy_node(const SyK *s, NodeId id) { return &s->k->nodes[id]; }
static inline Span sy_span(const SyK *s, NodeId id) { return s->k->nodes[id].span; }

/* Reports diagnostic `code` at node `at` unless (code, at) was reported
 * already (fixpoint iterations visit statements more than once; the run for
 * another warp width found it), or when an earlier check already reported an
 * error on `at` (no follow-on errors). Returns NULL when suppressed;
 * diag_note/diag_help need non-NULL. */
Diag *sy_report(SyK *s, DiagCode code, NodeId at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* 1 when this checker reported `code` on a node inside role (0: outside roles) */
int sy_reported_in(const SyK *s, DiagCode code, NodeId role);

/* the source text of a node's span, for messages */
const char *sy_text(SyK *s, NodeId id);
/* notes "`x` is computed here" at the lets (not stage tokens) expression e reads,
 * at most max of them: where a wrong index or trip count is usually written */
void sy_note_lets(SyK *s, Diag *d, NodeId e, int max);

int sy_const(const SyK *s, NodeId e, int64_t *out);   /* ce_const_int */
NodeId sy_decl(const SyK *s, NodeId e);   /* NAME -> its declaration; else 0 */

/* memory references: `As[s][r, c : +8]^T` */
NodeId sy_ref_base(const SyK *s, NodeId ref);      /* the NAME at the root */
NodeId sy_ref_decl(const SyK *s, NodeId ref);      /* its declaration */
NodeId sy_ref_index0(const SyK *s, NodeId ref);    /* first index applied to the root (0: none) */
int sy_is_shared_ref(const SyK *s, NodeId ref);
/* the index in s->tiles of ref's shared tile, among the first `cap`; -1: none */
int sy_tile_index(const SyK *s, NodeId ref, uint32_t cap);
int64_t sy_ref_bytes(const SyK *s, NodeId ref);    /* bytes of the box a ref selects; -1 unknown */
const char *sy_ref_bytes_text(SyK *s, NodeId ref); /* `BM * D * 2`; NULL: not written so */
/* The INDEX nodes from ref down to its root NAME, outermost first (the last
 * is the first index applied to the root), at most SY_REF_CHAIN of them; their
 * count, or -1 when the way down passes anything but ^T, casts and loads. */
#define SY_REF_CHAIN 16
int sy_ref_chain(const SyK *s, NodeId ref, NodeId chain[SY_REF_CHAIN]);

/* pipelines: P_* member nodes and stage tokens (`let s = ring.acquire()`) */
NodeId sy_pipe_of(const SyK *s, NodeId member);    /* P_* node -> PIPELINE decl */
NodeId sy_pipe_arg(const SyK *s, NodeId member);   /* its first argument (0: none) */
/* Stage tokens are LETs bound to `P.acquire()`/`P.wait()` and VARs that tokens
 * are moved into (`var prev: i32 = s0`, `prev = s`; docs/tir.md 8.6). */
NodeId sy_token_let(const SyK *s, NodeId e);       /* NAME of a token -> its LET or VAR */
Op sy_token_kind(const SyK *s, NodeId tok);        /* OP_P_ACQUIRE, OP_P_WAIT or OP_NONE */
NodeId sy_token_pipe(const SyK *s, NodeId tok);    /* the PIPELINE of a token */
int sy_is_token_var(const SyK *s, NodeId decl);
NodeId sy_role_named(const SyK *s, NodeId name);   /* NAME of a role -> ROLE decl */

/* roles and threads */
int sy_role_range(const SyK *s, NodeId role, int64_t *first, int64_t *count); /* in threads */
const char *sy_role_name(const SyK *s, NodeId role);  /* "role `mma`" or "the kernel body" */
/* (sync_threads.c from here to sy_threads_at)
 * threads per issuing unit of a role (warpgroup, warp; the block outside roles) */
int64_t sy_unit_size(const SyK *s, NodeId role);
/* tma, tma.store, tma.store.wait, mbarrier.expect_tx: once per issuing unit */
int sy_single_issue(const SyK *s, NodeId st);
/* how many threads of its role (or block) execute statement st, evaluating the
 * guards of enclosing ifs per thread; *exact = 0 when a guard depends on more
 * than thread indices (then it is counted as taken). 0 = unknown role size.
 * Single-issue statements count their issuing units instead. */
int64_t sy_threads_at(const SyK *s, NodeId st, int *exact);
/* 1 when FOR/IF/ROLE `anc` encloses statement st */
int sy_encloses(const SyK *s, NodeId anc, NodeId st);
NodeId sy_loop_of(const SyK *s, NodeId st);        /* innermost enclosing FOR (0: none) */
/* the block statement st stands in: the kernel body, an if's then or else
 * block, a loop's or role's body */
NodeId sy_block_of(const SyK *s, NodeId st);
/* x is `if c { ... return }` without else: what follows it in its block has !c */
int sy_is_return_guard(const SyK *s, NodeId x);
NodeId sy_common_loop(const SyK *s, NodeId a, NodeId b);
/* 1 when var v may be assigned after statement p ran and before statement at
 * runs: an assignment after p and before at, or in a loop after p (or p
 * itself) that holds at too (a later iteration). A fact p established about
 * v (its condition, a let) does not hold at `at` then. */
int sy_set_since(const SyK *s, NodeId v, NodeId p, NodeId at);

/* visiting (sync_walk.c) */
typedef void (*SyVisit)(SyK *s, NodeId n, void *u);
void sy_each_stmt(SyK *s, NodeId block, SyVisit fn, void *u); /* pre-order, into roles */
void sy_each_expr(SyK *s, NodeId e, SyVisit fn, void *u);     /* e and its sub-expressions */
void sy_stmt_exprs(SyK *s, NodeId st, SyVisit fn, void *u);   /* expressions of one statement */

/* ---- a forward dataflow over structured statements (sync_walk.c) ------- */
/* Two `if`s of one block that test the same condition, which nothing can
 * change between them (its names are lets, parameters, dims or loop
 * variables; no vars, no memory), are correlated: the flow splits the rest of
 * the block at the first into a path where the condition holds and one where
 * it does not, and takes only the matching branch of the second, joining at
 * the end of the block (`if c { wgmma.wait 0 } ... if c { release }`).
 * At most SY_MAX_KNOWN such conditions are followed at once. */
#define SY_MAX_KNOWN 4
typedef struct SyFlow SyFlow;
struct SyFlow {
    SyK *s;
    size_t size;                                     /* bytes of one state */
    void (*join)(SyFlow *f, void *dst, const void *src);
    void (*stmt)(SyFlow *f, NodeId st, void *state); /* a non-control statement */
    void (*leave)(SyFlow *f, NodeId block, void *state); /* end of a block (may be NULL) */
    void (*exit)(SyFlow *f, NodeId ret, void *state);    /* a `return` (may be NULL) */
    void *u;
    /* the flow's own: the conditions known on the current path */
    NodeId known[SY_MAX_KNOWN]; uint8_t kval[SY_MAX_KNOWN]; uint32_t nknown;
};
/* 1 when expressions a and b are the same tree (same ops, literals, declarations) */
int sy_same_expr(const SyK *s, NodeId a, NodeId b);
/* runs the statements of block over state; returns 0 when no path gets through */
int sy_flow(SyFlow *f, NodeId block, void *state);

/* ---- the concrete interpreter for integer control (analysis/exec.h) ----- */
/* The checks run it as SyExec: an AxExec whose owner is the SyK (sy_xk). */
typedef AxExec SyExec;
static inline SyK *sy_xk(const SyExec *x) { return x->owner; }
static inline void sy_exec_init(SyExec *x, SyK *s, long budget)
{
    ax_exec_init(x, &s->ax, budget);
    x->owner = s;
}
static inline int sy_eval(SyExec *x, NodeId e, int64_t *out) { return ax_eval(x, e, out); }
/* sets thread.x, lane, warp, wg for block thread t of role (warp and wg count
 * from the role's first warp; lanes per warp: s->warp) */
static inline void sy_exec_thread(SyExec *x, NodeId role, int64_t t) { ax_exec_thread(x, role, t); }
static inline void sy_exec(SyExec *x, NodeId block) { ax_exec(x, block); }
/* binds the kernel's dims to sample `i` (0..SY_NSAMPLES-1) that satisfies the
 * assumes; returns 0 when sample i does not */
#define SY_NSAMPLES AX_NSAMPLES
static inline int sy_sample_dims(SyExec *x, int i) { return ax_sample_dims(x, i); }
/* what the assumes say about dim (a DIM node): `D % mod == 0`, lo <= D <= hi
 * (callers initialize mod = 1 and the bounds) */
static inline void sy_dim_facts(SyK *s, NodeId dim, int64_t *mod, int64_t *lo, int64_t *hi)
{
    ax_dim_facts(&s->ax, dim, mod, lo, hi);
}
/* "M = 4096, K = 96" of the current sample */
static inline const char *sy_sample_text(SyExec *x) { return ax_sample_text(x); }

/* ---- the checks (one file each) ----------------------------------------- */
uint32_t sy_check_all(SyK *s);     /* sync.c: every synchronization check, in order */
uint32_t sy_check_bounds(SyK *s);  /* bounds.c */
void sy_check_pipes(SyK *s);
void sy_check_mbars(SyK *s);
void sy_check_races(SyK *s);
void sy_check_intra(SyK *s);   /* sync_intra.c */
void sy_check_init(SyK *s);    /* sync_init.c */
void sy_check_proxy(SyK *s);
void sy_check_cpasync(SyK *s);
void sy_check_wgmma(SyK *s);
void sy_check_diverge(SyK *s);
void sy_check_named(SyK *s);   /* sync_named.c: named-barrier protocols, simulated */

#endif
