/* smem.h — the shared-memory plan of a kernel: the one count of shared memory
 * that the resource check (E0501, verifier/resources.c) reports against the
 * target's limit and the abi pass (passes/abi.c) lays the kernel's buffer out
 * with, so that what `check` accepts is what codegen allocates.
 *
 * Items, for the declarations reachable from the kernel body (the reference
 * block is the oracle's):
 *   SHARED      its elements × dtype bytes, aligned to 8 × S for `swizzle S`
 *               (docs/tir.md §5.2), else to 128 (or its `align` if larger)
 *   MBARRIER    8 bytes per barrier, aligned to 8
 *   PIPELINE    2 × stages mbarriers (full and empty), before the pipes pass
 *               turns it into two MBARRIER arrays
 *   reduce.block.*  one scratch of 8 bytes per warp at each site (16-aligned;
 *               consecutive reductions never share scratch), when the block has
 *               more than one warp
 * Layout: the largest alignment first, in order of appearance within one
 * alignment; offsets from a buffer aligned to 1024 bytes; the total rounded
 * up to 16. */
#ifndef CAKE_SMEM_H
#define CAKE_SMEM_H
#include "consteval.h"

typedef struct {
    NodeId decl;            /* SHARED, MBARRIER, PIPELINE, or the reduction's node */
    int64_t bytes, align, offset;
} SmemItem;

typedef struct {
    SmemItem *items; uint32_t n;
    int64_t total;          /* bytes of the buffer; SMEM_HUGE when absurdly large */
    int unknown;            /* some extent was not a constant (not counted) */
} SmemPlan;

#define SMEM_HUGE (INT64_MAX / 4)   /* sums and products saturate here */

/* The plan of k on target tg with parameters and dims bound by env (NULL: the
 * defaults). Items come from ctx's arena. */
void an_smem_plan(CakeCtx *ctx, const Kernel *k, Target tg, const CeEnv *env, SmemPlan *out);

#endif
