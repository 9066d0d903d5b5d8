/* targets.h — the one target table: one row per target (sm_80, sm_90a, sm_100a,
 * gfx90a, gfx942) with its vendor, warp width, limits, feature bits, tensor-core
 * instruction shapes and LLVM names. The verifier checks every op against the
 * declared targets; the passes, the code generators, the runtime's choice of
 * target and the cost model read the same rows. Nothing else decides a vendor,
 * a warp width or a limit: never from a target's name, never a bare 32 or 64. */
#ifndef CAKE_IR_TARGETS_H
#define CAKE_IR_TARGETS_H
#include "ir.h"
#include "tcfamily.h"

typedef enum { VENDOR_NVIDIA, VENDOR_AMD } Vendor;

typedef enum { /* feature bits (TargetInfo.features) */
    TF_MMA_SYNC = 1u << 0,      /* mma.sync warp-level tensor cores (NVIDIA) */
    TF_LDMATRIX = 1u << 1,      /* ldmatrix (sm_75+) */
    TF_STMATRIX = 1u << 2,      /* stmatrix (sm_90+) */
    TF_CP_ASYNC = 1u << 3,      /* cp.async + commit/wait groups (sm_80+) */
    TF_MBARRIER = 1u << 4,      /* mbarrier init/arrive/wait (sm_80+) */
    TF_MBARRIER_TX = 1u << 5,   /* mbarrier expect_tx / complete_tx (sm_90+) */
    TF_TMA = 1u << 6,           /* cp.async.bulk.tensor (sm_90+) */
    TF_WGMMA = 1u << 7,         /* wgmma.mma_async (sm_90a only) */
    TF_SETMAXNREG = 1u << 8,    /* setmaxnreg (sm_90a, sm_100a) */
    TF_FENCE_PROXY = 1u << 9,   /* fence.proxy.async (sm_90+) */
    TF_NAMED_BARRIER = 1u << 10,/* bar.sync id, count (NVIDIA: 16 barriers) */
    TF_MFMA = 1u << 11,         /* AMD matrix cores (MFMA) */
    TF_FP8 = 1u << 12,          /* e4m3/e5m2 tensor-core inputs */
    TF_BF16 = 1u << 13,         /* bf16 tensor-core inputs */
    TF_TF32 = 1u << 14,         /* tf32 / xf32 tensor-core inputs */
    TF_TCGEN05 = 1u << 15,      /* tcgen05 + tensor memory (sm_100a; not in TIR v1) */
    TF_ROLES = 1u << 16,        /* warp-specialized roles and pipelines (NVIDIA in v1) */
    TF_WARPGROUPS = 1u << 17,   /* the `warpgroups G` block clause (sm_90a and later) */
    TF_FP8_CVT = 1u << 18       /* OCP fp8 (e4m3 = E4M3FN, e5m2) conversions in SIMT code: cvt.rn.satfinite
                                   (sm_89+); gfx942's v_cvt_pk_fp8 is the FNUZ variant, not OCP */
} TargetFeature;

/* one tensor-core instruction shape: m x n x k with A/B element type `ab` and
 * accumulator type `acc` (mma.sync and MFMA: exact shapes; wgmma: m = 64,
 * n = 0 meaning "any multiple of nstep from nstep to 256") */
typedef struct {
    uint16_t m, n, k;
    uint8_t ab, acc;    /* DType */
    uint8_t nstep;      /* wgmma: allowed N step (8 or 16); 0 otherwise */
} TcShape;

/* the shapes of one tensor-core family on one target */
typedef struct { const TcShape *v; uint32_t n; } TcShapes;

typedef struct {
    uint8_t id;                    /* Target */
    const char *name;              /* "sm_90a" (= ir_target_names[id]) */
    Vendor vendor;
    int warp_size;                 /* lanes per warp: 32, or 64 (an AMD wavefront) */
    const char *warp_word;         /* "warp" or "wavefront", for messages */
    int sm;                        /* NVIDIA compute capability x 10 (90); 0 on AMD */
    int family_only;               /* NVIDIA `a` targets: the code runs on sm / 10 GPUs only */
    int max_threads_per_block;
    int64_t max_smem_per_block;    /* bytes, with opt-in (NVIDIA) or LDS per workgroup (AMD) */
    int64_t regs_per_sm;           /* 32-bit registers per SM (per CU on AMD) */
    int max_regs_per_thread;       /* 255 NVIDIA; 512 AMD (VGPR + AGPR) */
    int max_agprs;                 /* AMD: of those, the accumulation VGPRs (AGPRs) only MFMA
                                      accumulators use: 256 (the other 256 are VGPRs); 0 NVIDIA */
    int reg_alloc_unit;            /* setmaxnreg granularity (8), 0 if no setmaxnreg */
    int setmaxnreg_min, setmaxnreg_max;
    int max_named_barriers;        /* 16 on NVIDIA, 0 on AMD */
    int64_t max_grid[3];
    uint32_t features;             /* TF_* */
    int group_warps;               /* warps in a warpgroup (the wgmma scope and the unit of
                                      `warpgroups`): 4; AMD has no warpgroup instructions and
                                      the verifier refuses the clause there (TF_WARPGROUPS) */
    TcShapes tc[TCF__COUNT];       /* instruction shapes per tensor-core family
                                      (ir/tcfamily.h); n = 0: the target has none */
    const char *llvm_triple;       /* "nvptx64-nvidia-cuda", "amdgcn-amd-amdhsa" */
    const char *llvm_cpu;          /* the LLVM processor; NULL: LLVM cannot generate code for it */
    const char *llvm_features;     /* "+ptx85" */
} TargetInfo;

extern const TargetInfo tg_table[TG__COUNT];

static inline const TargetInfo *tg_info(Target t) { return &tg_table[t]; }
/* the register budget per thread at launch of a block of `threads` threads
 * (setmaxnreg moves from it): floor(regs per SM / threads / 8) * 8, at most the
 * per-thread maximum rounded down to 8 (docs/tir.md §6) */
static inline int64_t tg_launch_regs(const TargetInfo *ti, int64_t threads)
{
    int64_t r = threads > 0 ? ti->regs_per_sm / threads / 8 * 8 : 0;
    int64_t cap = ti->max_regs_per_thread / 8 * 8;
    return r > cap ? cap : r;
}

static inline Vendor tg_vendor(Target t) { return tg_table[t].vendor; }
static inline int tg_warp(Target t) { return tg_table[t].warp_size; }
static inline int tg_has(Target t, uint32_t feature)
{
    return (tg_table[t].features & feature) == feature;
}

/* The value of `sm.count` where no device is known: cg_launch_dims without a
 * device (tests, `cakec FILE`) and the verifier's simulations of a representative
 * block. 132 is the SM count of the H100 and H200 SXM (docs/tir.md §13). */
#define TG_DEFAULT_SM_COUNT 132

/* Threads in one unit of a block-size clause or a role on target t: 1 for
 * `threads`, the warp width for `warps`, four warps for `warpgroups`. */
int64_t tg_unit_threads(Target t, Unit unit);

/* Threads in n units (`warps 4` is 128 on sm_90a, 256 on gfx942); n <= 0
 * gives 0; a product that overflows saturates at INT64_MAX / 2 (far past
 * every limit, and rounding it up cannot overflow). */
int64_t tg_block_threads(Target t, Unit unit, int64_t n);

/* The first target kernel k lists, in table order; sm_90a when it lists none
 * (what `cakec FILE` compiles such a kernel for). */
Target tg_first(const Kernel *k);
/* The same over a module: the first target any of its kernels lists, in
 * table order of the kernels; sm_90a when none lists any (what `cakec FILE`
 * compiles without --target). */
Target tg_first_of(const Module *m);

/* How well code built for target t fits a device whose architecture is
 * `arch` as the runtime reports it ("sm_90", "sm_86", "gfx942"): 2 built for
 * that family, 1 runs there (sm_80 code on a newer NVIDIA GPU), 0 does not run. */
int tg_device_fit(Target t, const char *arch);

/* The target to compile kernel k for on a device of architecture `arch` as
 * the runtime reports it ("sm_90", "gfx942"): among k's targets (k NULL: all
 * targets), one built for the device's family wins (tg_device_fit 2), then
 * the newest that runs there. Returns 1 and sets *tg, or 0 (*tg unchanged)
 * when none of them runs there. The one place that choice is made: `run`,
 * the cost model's device and the library ask it. */
int tg_pick_for_arch(const Kernel *k, const char *arch, Target *tg);

/* Threads that execute one instruction of family f on target t: the warp
 * (wavefront) width times the family's warps (a warpgroup: group_warps). */
int tg_tc_scope_threads(Target t, TcFamily f);

/* Finds the tensor-core shape of `op` (OP_MMA, OP_WGMMA or OP_MFMA) on target t
 * for m x n x k with A/B dtype ab and accumulator dtype acc; NULL if the target
 * has no such instruction. */
const TcShape *tg_tc_find(Target t, Op op, int64_t m, int64_t n, int64_t k, DType ab, DType acc);

/* Finds an instruction shape of `op` on target t whose m, n, k divide a tile
 * computation of M x N x K (acc [M, N], A [M, K], B [K, N]) with dtypes ab/acc;
 * wgmma: M must be 64 and N a legal N. Extents < 0 (symbolic) match anything.
 * NULL if none. */
const TcShape *tg_tc_tile(Target t, Op op, int64_t M, int64_t N, int64_t K, DType ab, DType acc);

/* Writes the shapes of `op` on target t for A/B dtype ab (DT_NONE: all) into buf
 * as "m16n8k16 bf16->f32, m16n8k8 bf16->f32"; returns the number of shapes. */
uint32_t tg_tc_describe(Target t, Op op, DType ab, char *buf, size_t size);

/* The feature an op needs (0: none); used for the legality check and its help. */
uint32_t tg_op_feature(Op op);

/* The name of a feature bit ("wgmma", "TMA", ...). */
const char *tg_feature_name(uint32_t feature);

/* ---- devices: the per-GPU numbers of the cost model (analysis/cost.h) ----
 * One row per device, each tied to the target its code is built for by
 * default; a device also runs the older targets of its vendor (sm_80 code on
 * an H200). Rates are per SM (per CU on AMD) per clock at `clock_ghz`, the
 * clock the datasheet's peak rates are quoted at; `src` names the source of
 * the row's numbers (ir/targets.c gives each column's). */
typedef struct {
    const char *name;            /* "h200" (the --device spelling) */
    const char *full_name;       /* "NVIDIA H200 SXM 141GB" */
    uint8_t target;              /* Target its own code is built for */
    int sm_count;                /* SMs (CUs) */
    double clock_ghz;            /* the clock of the peak rates below */
    double hbm_gbps;             /* HBM bandwidth, GB/s (datasheet) */
    double l2_bytes;             /* last-level on-chip cache the blocks share */
    double l2_gbps;              /* L2 read bandwidth, GB/s (measured, see src) */
    int64_t smem_per_sm;         /* shared memory (LDS) per SM, bytes */
    int max_threads_per_sm, max_blocks_per_sm;
    /* dense tensor-core FLOP per SM per clock, 16-bit inputs; 8-bit = 2x, tf32 = 1/2x */
    double mma_sync_flops;       /* mma.sync (0: none) */
    double wgmma_flops;          /* wgmma (0: none) */
    double mfma_flops;           /* MFMA (0: none) */
    double fma_lanes;            /* fp32 FMA lanes per SM per clock (an FMA = 2 FLOP) */
    double mufu_lanes;           /* MUFU / transcendental results per SM per clock */
    double smem_bytes_clk;       /* shared-memory bandwidth per SM per clock */
    double lat_dram_ns, lat_l2_ns, lat_smem_ns, lat_barrier_ns;   /* latencies */
    double launch_us;            /* launch overhead of one kernel */
    const char *src;             /* where the numbers come from */
} TgDevice;

extern const TgDevice tg_devices[];
extern const uint32_t tg_ndevices;

/* The device row named `name` ("h200", case-insensitive; also the full name's
 * model "H200"), or NULL. */
const TgDevice *tg_device_find(const char *name);
/* The device the cost model assumes for code of target t when none is named:
 * h200 for sm_90a, a100 for sm_80, mi300x for gfx942, mi250x for gfx90a; NULL
 * for a target with no device row (sm_100a). */
const TgDevice *tg_device_default(Target t);
/* The device row whose model the runtime's device name contains ("NVIDIA H200"
 * -> h200, "AMD Instinct MI300X" -> mi300x), or NULL. */
const TgDevice *tg_device_match(const char *gpu_name);
/* The architecture of device d as the runtime names it ("sm_90", "gfx942"),
 * written into buf. */
const char *tg_device_arch(const TgDevice *d, char *buf, size_t size);
/* 1 when code built for target t runs on device d (tg_device_fit on its arch). */
int tg_device_runs(const TgDevice *d, Target t);

#endif
