/* cost.h — the analytic cost model (docs/cost-model.md): what one launch of a
 * verified kernel costs at a shape on a device, before any GPU time is spent.
 *
 * Two steps:
 *   cost_profile (cost_profile.c, with cost_count.c and cost_query.c: the
 *       walk, cost_walk.h)  walks the verified kernel with its params
 *       and dims bound and counts, per block and per role, the work of each
 *       unit: tensor-core FLOPs by instruction (wgmma, mma.sync, MFMA), SIMT
 *       lane operations, MUFU operations, bytes at each level (global loads
 *       and stores, TMA, cp.async, shared reads and writes), barriers, the
 *       bytes each block keeps in flight, the occupancy inputs;
 *   cost_predict (cost_model.c)    turns a profile into a predicted time with
 *       an interval on a device row of the target table (ir/targets.h) and
 *       calibration constants (CostCalib; bench/cost/DEVICE.json).
 * Neither reports diagnostics: they say what they could not model in the
 * result's assumptions and widen the interval (verdict "measure"). */
#ifndef CAKE_COST_H
#define CAKE_COST_H
#include "consteval.h"

enum { COST_TC_WGMMA, COST_TC_MMA, COST_TC_MFMA, COST_TC__N };
#define COST_MAX_ROLES 4
#define COST_MAX_NOTES 24
#define COST_NOTE_LEN 200

/* the work of one block (or of one role of a block) */
typedef struct {
    double tc_flops[COST_TC__N];   /* tensor-core FLOPs (2 per multiply-add) */
    double tc_work[COST_TC__N];    /* the same in 16-bit-input FLOPs (fp8: /2, tf32: x2) */
    double alu;                    /* SIMT lane operations (FMA/ALU pipes) */
    double sfu;                    /* MUFU lane operations (exp2, rsqrt, ...) */
    double shfl;                   /* shuffle lane operations */
    double gld, gst;               /* global bytes loaded / stored by threads */
    double tma_ld, tma_st;         /* bytes moved by TMA loads / stores */
    double cpasync;                /* bytes moved by cp.async (global -> shared) */
    double srd, swr;               /* shared-memory bytes read / written */
    double barriers;               /* barrier and mbarrier waits (per thread group) */
    double flops_simt;             /* floating-point FLOPs on the SIMT pipes */
    double greq;                   /* 128-byte lines the warp instructions of thread loads and
                                      stores touch (coalescing: the lanes' addresses) */
    double dram_rd;                /* global bytes read that the first wave's other blocks
                                      did not read already (its L2 reuse, by tile order) */
} CostWork;

typedef struct {
    char name[32];
    int64_t threads;
    int regs;                      /* the role's `regs` budget, 0 when none */
    CostWork w;                    /* per block */
    double loop_trips;             /* trips of the role's longest loop per block */
} CostRole;

typedef struct {
    Target tg;
    int64_t threads;               /* per block */
    int64_t grid[3], nblocks;
    int64_t smem_bytes;            /* analysis/smem.h's plan */
    int regs_est;                  /* registers per thread: role budget, or an estimate */
    int regs_from_roles;           /* 1: setmaxnreg budgets, 0: estimated here */
    CostWork w;                    /* mean per block over the sampled blocks */
    CostWork wmax;                 /* the busiest sampled block */
    CostRole roles[COST_MAX_ROLES]; uint32_t nroles;
    double inflight_block;         /* bytes one block keeps in flight from global memory */
    int stages;                    /* pipeline / cp.async stages (0: none) */
    double stage_bytes;            /* async bytes one stage (one loop iteration) moves */
    double unique_read, unique_write;  /* bytes of the tensors read / written once */
    int unknown_trips;             /* loops whose trip count did not evaluate */
    int64_t wave;                  /* blocks of the first wave the reuse was measured over */
    int uses_tc[COST_TC__N];
    int spill_bytes;               /* local memory per thread ptxas reported (0: none or unknown) */
    double inflight_loop;          /* per-block global load bytes of one iteration of a loop that
                                      is not unrolled (the backend keeps c.loop_mlp in flight) */
    int narrow;                    /* a global load or store of less than 8 bytes per thread */
    int tile_stores;               /* a per-element store of a register tile to global memory */
    int tc_roles;                  /* roles that issue tensor-core work */
    int lowered;                   /* 1: counted on the lowered level (TIR-L), 0: on the source */
    int scatter;                   /* a global access whose warp instructions touch more than
                                      twice the 128-byte lines their bytes fill */
    char notes[COST_MAX_NOTES][COST_NOTE_LEN]; uint32_t nnotes;  /* assumptions */
} CostProfile;

/* Counts the work of kernel k (the instance's bound copy: verified, typed, not
 * lowered) on target tg with the params and dims bound by env, grid.x/sm.count
 * from sm_count. With low (the same instance lowered: TIR-L and its launch
 * plan) the counts are taken on the lowered kernel, one walk per role of k
 * over the role's threads with the real special registers; without, on k.
 * Returns 1, or 0 when the grid or the block size does not evaluate (why). */
int cost_profile(CakeCtx *ctx, const Kernel *k, const Kernel *low, Target tg,
                 const CeEnv *env, int sm_count, CostProfile *out, char *why, size_t whylen);

/* a calibrated family of the fit (cakec calibrate): the pattern key of its
   training cases (cost_pattern), how many, their largest error and the range of
   predicted times; a prediction says `model` only inside one */
#define COST_MAX_PATTERNS 24
typedef struct {
    char key[40];
    int n;
    int kernels;                          /* the distinct training kernels (file, kernel) among
                                             them; 0: not recorded (an older file) */
    double err;                           /* the 80th percentile of |predicted / measured - 1| */
    double t_lo, t_hi;                    /* predicted ms of the training cases */
    double mlp_lo, waves_lo;              /* the fewest bytes in flight (per what Little's law
                                             needs) and waves of its training cases; 0: not
                                             recorded (an older file) */
} CostPattern;

/* calibration constants (bench/cost/DEVICE.json; cost_calib_default) */
typedef struct {
    double eff_wgmma, eff_mma, eff_mfma;  /* achieved fraction of each tensor peak */
    double eff_hbm, eff_l2;               /* achieved fraction of the bandwidths */
    double eff_alu, eff_sfu, eff_smem;    /* achieved fraction of the SIMT pipes and shared memory */
    double overlap;                       /* tensor vs SIMT overlap within a role, 0..1 */
    double l2_miss;                       /* fraction of re-reads between blocks that miss L2 */
    double rel_err;                       /* half-width of the interval, relative */
    double launch_us;                     /* 0: the device row's */
    double pipe_lat;                      /* scale of a pipeline stage's latency + transfer */
    double loop_mlp;                      /* iterations of a loop that is not unrolled whose loads
                                             the code keeps in flight (the backend unrolls) */
    double lat_block;                     /* scale of a block's latency chain per round of
                                             resident blocks (0: not a bound) */
    double req_rate;                      /* 128-byte lines of thread accesses per ns, device-wide
                                             (0: not a bound) */
    double lat_mem;                       /* scale of the DRAM latency in Little's law (the loaded
                                             latency the bytes in flight must cover; 1: the row's) */
    double res_exposed;                   /* the share of the other memory and compute terms' time
                                             that the bounding term does not hide (0: perfect overlap) */
    double mlp_knee;                      /* how sharply DRAM bandwidth reaches its peak as the bytes
                                             in flight pass what Little's law needs: bw = peak /
                                             (1 + (needed / in flight)^k)^(1/k) (0: a hard knee,
                                             min(peak, in flight / latency)) */
    double pipe_knee;                     /* the same between the compute path and the pipeline's
                                             latency bound: (compute^k + pipeline^k)^(1/k) (0: max) */
    double body_knee;                     /* the same over the body's terms (compute, shared memory,
                                             requests, memory): resources that are all near their
                                             limit slow each other (0: the largest alone) */
    char source[160];                     /* "built-in defaults" or the file, date, command */
    CostPattern pat[COST_MAX_PATTERNS];   /* the calibrated families; none: every pattern */
    int npat;
    double pat_err;                       /* a family fitted worse than this is not calibrated */
} CostCalib;

void cost_calib_default(CostCalib *c);

enum { CR_TENSOR, CR_SIMT, CR_SFU, CR_SMEM, CR_L2, CR_DRAM, CR_REQ, CR_LATENCY, CR_LAUNCH, CR__N };
extern const char *const cost_resource_names[CR__N];

typedef struct {
    char kernel[64], target[16], device[32], device_full[64], shape[256];
    double time_ms, lo_ms, hi_ms;
    double flops, tflops, dram_bytes, l2_bytes, gbps;
    double intensity;              /* FLOP per DRAM byte */
    double peak_tflops, peak_gbps; /* the device's roofline */
    double roofline_ms;            /* max(FLOPs / peak, DRAM bytes / bandwidth) */
    double roofline_fraction;      /* roofline_ms / time_ms */
    int bottleneck;                /* CR_* */
    double res_ms[CR__N];          /* time each resource alone needs */
    /* occupancy */
    int64_t threads, nblocks, smem_bytes;
    int regs, regs_estimated, blocks_per_sm;
    const char *occ_limiter;       /* "threads", "shared memory", "registers", "blocks", "grid" */
    double occupancy;              /* resident warps / max warps */
    double waves, wave_efficiency;
    double inflight_bytes, inflight_needed;   /* Little's law, whole device */
    double inflight_block;         /* bytes one block keeps in flight */
    double pipeline_ms;            /* a block's stage fills x latency / stages in flight (per SM) */
    struct {
        char name[32]; int64_t threads; int regs; double ms;
        double tensor_ms, simt_ms, mufu_ms, shared_ms;   /* the role's work on each unit alone */
    } roles[COST_MAX_ROLES];
    uint32_t nroles;
    int measure;                   /* 1: outside what the model knows, measure */
    char pattern[40];              /* cost_pattern: the family it is judged in */
    char infeasible[160];          /* why the variant cannot launch or spills; "" when feasible */
    double body_ms[4];             /* compute (per-SM critical path), pipeline, shared, memory */
    char notes[COST_MAX_NOTES][COST_NOTE_LEN]; uint32_t nnotes;
} CostResult;

/* The pattern key of a prediction ("wgmma/tensor/roles", "simt/dram"): the
 * unit doing the work, the bound, whether the kernel has warp roles. */
void cost_pattern(const CostProfile *p, const CostResult *r, char *key, size_t n);

/* The prediction for profile p on device d with calibration c. */
void cost_predict(const CostProfile *p, const TgDevice *d, const CostCalib *c, CostResult *out);

/* appends an assumption to a profile or result (printf-like, truncated) */
void cost_note(char notes[][COST_NOTE_LEN], uint32_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
