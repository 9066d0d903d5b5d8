/* sim_priv.h — the executor's state (sim.h): values, threads, the block's
 * shared memory and synchronization objects, pending asynchronous work. */
#ifndef CAKE_SIM_PRIV_H
#define CAKE_SIM_PRIV_H
#include <ucontext.h>
#include "sim.h"
#include "interp.h"
#include "layout.h"

enum { SIM_LANES = 16, SIM_MAX_THREADS = 1024, SIM_STACK = 256 * 1024, SIM_MAX_ARGS = 64 };

/* one lane of a value: floats and integers (ints exact, 64 bits) */
typedef union { double f; int64_t i; } SL;
/* a value: dtype (its kind says which member of SL), lanes */
typedef struct { uint8_t dt, n; SL l[SIM_LANES]; } SV;

static inline int sv_isf(uint8_t dt) { return ir_dtypes[dt].kind == 'f'; }

typedef enum { TS_READY, TS_BLOCKED, TS_DONE } ThState;
typedef struct Sim Sim;
typedef struct SimThread SimThread;

/* a cp.async in flight: bytes copied (or zero-filled) at its completion */
typedef struct { uint32_t dst; const uint8_t *src; uint32_t bytes; int64_t group; } SimCopy;

struct SimThread {
    ucontext_t uc;
    char *stack;
    int tid;
    ThState state;
    int stopped;                  /* executed `return` */
    SL *frame;                    /* one SL per slot (Sim.slot) */
    uint8_t *inflight;            /* per slot: 1 written by a wgmma in flight, 2 read by one */
    int (*ready)(Sim *s, SimThread *t);  /* blocked: the condition to go on */
    const void *wobj; int64_t warg; uint32_t wgen;
    NodeId wnode;                 /* the statement it waits at */
    int64_t wg_commits;           /* wgmma groups committed */
    int64_t bulk_commits;         /* bulk (TMA store) groups committed */
    SimCopy *copies; uint32_t ncopies, capcopies; int64_t cp_groups;
    uint32_t *vc;                 /* vector clock (race detector), SIM_MAX_THREADS entries */
    SV dep[4];                    /* operands deposited at a collective */
    SL *depv; uint32_t ndepv;     /* more deposited values (tensor-core fragments) */
    uint32_t *deps; uint32_t ndeps;   /* deposited lvalue slots */
};

/* an mbarrier (keyed by its shared offset) */
typedef struct {
    uint32_t addr; int init;
    int64_t count, pending, tx;
    uint32_t phase;               /* phases completed */
    uint32_t *vc;                 /* joined clocks of this phase's arrivals */
    uint32_t *vc_done;            /* the clocks of the last completed phase */
} SimMbar;

/* a collective of a thread group (warp, warpgroup, block, named barrier) */
typedef struct {
    NodeId node; int arrived; uint32_t gen;
    int64_t count;                /* named barriers: the count of this round */
    uint32_t *vc;
} SimColl;

/* a TMA load in flight */
typedef struct {
    NodeId map; uint32_t smem, bar; int64_t c[5]; int issuer; uint32_t clk;
} SimTma;

/* a wgmma in flight: its warpgroup's operands, captured at issue */
typedef struct {
    NodeId node; int wg; int64_t group; uint64_t da, db;
    uint32_t *dslot;   /* 128 x nd accumulator slots */
    uint32_t *aslot;   /* 128 x na A slots (.areg) */
    int nd, na;
} SimWg;

/* a TMA store in flight */
typedef struct { NodeId map; uint32_t smem; int64_t c[5]; int64_t group; int issuer; } SimBulk;

struct Sim {
    CakeCtx *ctx;
    Kernel *k;
    const SimOptions *opt;
    CheckLaunch *L;
    uint32_t *slot; uint32_t nslots;     /* node -> first frame slot (+1; 0: none) */
    int64_t grid[3], block[3];
    int nthreads, warp;
    SimThread *th;
    ucontext_t sched;
    SimThread *cur;
    uint8_t *smem; uint32_t smem_bytes;
    uint8_t *async_w, *async_r;         /* per shared byte: pending async writers / readers */
    uint32_t *sh_wt, *sh_wc, *sh_rt, *sh_rc;  /* per shared byte: last write/read thread+1, clock */
    SimMbar *mbars; uint32_t nmbars, capmbars;
    SimColl warps[SIM_MAX_THREADS / 32], wgs[SIM_MAX_THREADS / 128], bars[16], block_coll;
    SimTma *tmas; uint32_t ntmas, captmas;
    SimWg *wgmma; uint32_t nwgmma, capwgmma;
    SimBulk *bulks; uint32_t nbulks, capbulks;
    void *argp[SIM_MAX_ARGS];            /* per kernel arg index: its host buffer */
    int64_t sm_count;
    long steps;
    int failed;                          /* 1 kernel error, 2 unsupported: stop */
    int race_on;
    int bug;                             /* planted bug (tests) */
};

/* sim_eval.c */
void sim_eval(Sim *s, SimThread *t, NodeId e, SV *out);
int64_t sim_int(Sim *s, SimThread *t, NodeId e);
void sim_convert(SV *v, uint8_t dt, int lanes);
const Type *sim_type(const Sim *s, NodeId e);
uint32_t sim_lvalue(Sim *s, SimThread *t, NodeId e, int *lanes, uint8_t *dt);
void sim_slot_read(Sim *s, SimThread *t, uint32_t slot, SL *out);
void sim_slot_write(Sim *s, SimThread *t, uint32_t slot, SL v, NodeId at);
/* a memory reference (INDEX of a tensor arg or a shared tile) */
typedef struct { int shared; uint32_t soff; uint8_t *gptr; uint8_t dt; int lanes, eb; int ok; } SimRef;
int sim_ref(Sim *s, SimThread *t, NodeId ref, SimRef *r);
void sim_mem_load(Sim *s, SimThread *t, const SimRef *r, SV *out, NodeId at);
void sim_mem_store(Sim *s, SimThread *t, const SimRef *r, const SV *v, NodeId at);
uint32_t sim_saddr(Sim *s, SimThread *t, NodeId ref, int raw);

/* sim_stmt.c */
void sim_block_run(Sim *s, SimThread *t, NodeId block);
void sim_lowered(Sim *s, SimThread *t, NodeId st);

/* sim_sched.c: threads and synchronization */
void sim_fail(Sim *s, int how, DiagCode code, NodeId at, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void sim_block_on(Sim *s, SimThread *t, int (*ready)(Sim *, SimThread *));
int sim_coll(Sim *s, SimThread *t, SimColl *c, NodeId node, int expected);
void sim_coll_done(Sim *s, SimThread *t, SimColl *c);
int sim_live_in(Sim *s, int first, int count);
SimMbar *sim_mbar(Sim *s, uint32_t addr, NodeId at, int create);
void sim_mbar_arrive(Sim *s, SimThread *t, SimMbar *m, int64_t tx);
void sim_mbar_tx_done(Sim *s, SimMbar *m, int64_t bytes, const uint32_t *vc);
void sim_barrier(Sim *s, SimThread *t, int id, int64_t count, int wait, NodeId at);
void sim_vc_join(Sim *s, uint32_t *dst, const uint32_t *src);
void sim_race_access(Sim *s, SimThread *t, uint32_t off, uint32_t n, int write, NodeId at);
void sim_async_drain(Sim *s);
/* "shared byte 4096 of `As`" (the plan slot holding byte off) */
const char *sim_smem_name(Sim *s, uint32_t off);

/* sim_tc.c: tensor cores, fragments, TMA, bulk copies */
void sim_wgmma_issue(Sim *s, SimThread *t, NodeId st);
void sim_wgmma_wait(Sim *s, SimThread *t, int64_t n, NodeId at);
void sim_wgmma_retire_all(Sim *s);
void sim_mma(Sim *s, SimThread *t, NodeId st);
void sim_ldmatrix(Sim *s, SimThread *t, NodeId st, int store);
void sim_tma_load(Sim *s, SimThread *t, NodeId st);
void sim_tma_complete(Sim *s, SimTma *x);
void sim_tma_store(Sim *s, SimThread *t, NodeId st);
void sim_bulk_wait(Sim *s, SimThread *t, int64_t n);
void sim_cp_async(Sim *s, SimThread *t, NodeId st);
void sim_cp_wait(Sim *s, SimThread *t, int64_t n);

static inline Node *sim_node(const Sim *s, NodeId id) { return &s->k->nodes[id]; }
static inline NodeId sim_arg(const Sim *s, NodeId n, uint32_t i) { return s->k->lists[s->k->nodes[n].list + i]; }

#endif
