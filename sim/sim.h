/* sim.h — the CPU executor of TIR-L (`cakec run --sim`, docs/sim.md): runs a
 * lowered kernel instance (its TIR-L and launch plan) on the host, block by
 * block, every thread of a block as its own green thread, with the
 * semantics of the hardware the lowered ops name: shared memory with its
 * swizzle, block and named barriers, mbarriers with arrival and transaction
 * counts and phases, TMA loads and stores, cp.async groups, wgmma (its
 * descriptors decoded from the bits, its accumulators from the fragment maps
 * of ir/layout.h), mma.sync, ldmatrix/stmatrix, warp shuffles and block
 * reductions.
 *
 * Asynchronous work completes as late as the protocol allows (TMA loads when
 * no thread can go on, wgmma and bulk stores at the wait that retires them),
 * so a missing wait shows as a wrong value or as a race, not by luck.
 * What it reports (diagnostics into ctx, the run fails):
 *   E0980  deadlock: no thread can go on; the waiting threads, grouped, with
 *          what each waits for (an mbarrier's phase, a barrier's arrivals)
 *   E0981  race: an access unordered with an asynchronous one (shared memory a
 *          TMA is still writing, a wgmma or bulk store still reading;
 *          accumulators of a wgmma in flight), or two threads' unordered
 *          accesses to one shared-memory byte (vector clocks over barriers,
 *          mbarriers and warp collectives)
 *   E0982  an access outside a tensor, the shared buffer or a register array
 *   E0983  a construct the executor does not run (yet)
 *   E0984  the threads of a warp / warpgroup reach different collective ops
 * It is the device callback of oracle/check.h: `run --sim` checks the kernel
 * against its fp64 reference exactly like `run --check` does on a GPU. */
#ifndef CAKE_SIM_H
#define CAKE_SIM_H
#include "ir.h"
#include "check.h"

typedef struct SimOptions {
    int64_t sm_count;    /* `sm.count` in the grid clause; 0: 2 (persistent kernels loop) */
    int no_race;         /* 1: skip the vector-clock race detector (faster) */
    long max_steps;      /* statements per block before giving up (0: 2^31) */
    const char *bug;     /* a planted bug for the tests (docs/sim.md): NULL none */
} SimOptions;

/* Runs lowered kernel l->k (IR_LEVEL_LOWERED, with its plan) on the buffers of
 * l (host memory, device encodings), every block of the grid. Returns 0, or
 * nonzero with l->err filled and a diagnostic in ctx: 1 the kernel is wrong
 * (E0980-E0982, E0984), 2 the executor cannot run it (E0983). */
int sim_launch(CakeCtx *ctx, const SimOptions *opt, CheckLaunch *l);

#endif
