/* targets.c — the one target table (targets.h), tensor-core shape lookup, block
 * sizes in threads per target and the choice of a target for a device.
 *
 * Sources: CUDA C Programming Guide, table "Technical Specifications per Compute
 * Capability" (threads, shared memory with opt-in, registers); PTX ISA 8.5
 * (mma.sync shapes, wgmma shapes, feature availability per sm_XX); AMD CDNA2/CDNA3
 * ISA guides (MFMA shapes, LDS 64 KiB per workgroup, 512 VGPR+AGPR per lane). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "targets.h"

#define N_(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

/* mma.sync (PTX "Matrix shapes"): the rows of sm_80 and later, then the fp8
 * m16n8k32 rows sm_89 and later add; sm_80 reads the first MMA_SM80_ROWS */
static const TcShape mma_nv[] = {
    {16, 8, 16, DT_F16, DT_F32, 0},  {16, 8, 16, DT_F16, DT_F16, 0},
    {16, 8, 16, DT_BF16, DT_F32, 0}, {16, 8, 8, DT_F16, DT_F32, 0},
    {16, 8, 8, DT_F16, DT_F16, 0},   {16, 8, 8, DT_BF16, DT_F32, 0},
    {16, 8, 8, DT_TF32, DT_F32, 0},  {16, 8, 4, DT_TF32, DT_F32, 0},
    {16, 8, 32, DT_I8, DT_I32, 0},   {16, 8, 32, DT_U8, DT_I32, 0},
    {16, 8, 16, DT_I8, DT_I32, 0},   {16, 8, 16, DT_U8, DT_I32, 0},
    {8, 8, 4, DT_F64, DT_F64, 0},
    {16, 8, 32, DT_E4M3, DT_F32, 0}, {16, 8, 32, DT_E5M2, DT_F32, 0},
    {16, 8, 32, DT_E4M3, DT_F16, 0}, {16, 8, 32, DT_E5M2, DT_F16, 0},
};
#define MMA_SM80_ROWS 13u
_Static_assert(N_(mma_nv) == MMA_SM80_ROWS + 4, "mma_nv: the sm_80 rows, then the 4 fp8 rows");

/* wgmma.mma_async, sm_90a: M = 64 per warpgroup, N = nstep .. 256 step nstep */
static const TcShape wgmma_sm90a[] = {
    {64, 0, 16, DT_F16, DT_F32, 8},  {64, 0, 16, DT_F16, DT_F16, 8},
    {64, 0, 16, DT_BF16, DT_F32, 8}, {64, 0, 8, DT_TF32, DT_F32, 8},
    {64, 0, 32, DT_E4M3, DT_F32, 8}, {64, 0, 32, DT_E4M3, DT_F16, 8},
    {64, 0, 32, DT_E5M2, DT_F32, 8}, {64, 0, 32, DT_E5M2, DT_F16, 8},
    {64, 0, 32, DT_I8, DT_I32, 16},  {64, 0, 32, DT_U8, DT_I32, 16},
};

/* MFMA, CDNA2 (gfx90a); one block per instruction only */
static const TcShape mfma_gfx90a[] = {
    {32, 32, 8, DT_F16, DT_F32, 0},  {16, 16, 16, DT_F16, DT_F32, 0},
    {32, 32, 8, DT_BF16, DT_F32, 0}, {16, 16, 16, DT_BF16, DT_F32, 0},
    {32, 32, 2, DT_F32, DT_F32, 0},  {16, 16, 4, DT_F32, DT_F32, 0},
    {32, 32, 8, DT_I8, DT_I32, 0},   {16, 16, 16, DT_I8, DT_I32, 0},
    {16, 16, 4, DT_F64, DT_F64, 0},
};

/* MFMA, CDNA3 (gfx942): adds xf32; i8 moves to k = 16 / 32. gfx942's fp8/bf8
 * MFMA (v_mfma_f32_32x32x16_fp8_fp8 ...) reads the FNUZ encodings (E4M3FNUZ,
 * E5M2FNUZ: bias 8 / 16, one NaN, no infinities, no negative zero; CDNA3 ISA
 * "Data types"), not the OCP e4m3 / e5m2 that TIR's fp8 dtypes are (the same
 * bits decode to half or a quarter of the OCP value, and 0x80 is NaN): no OCP
 * fp8 row here (TF_FP8 stays: gfx942 stores OCP fp8; OCP fp8 MFMA is gfx950's). */
static const TcShape mfma_gfx942[] = {
    {32, 32, 8, DT_F16, DT_F32, 0},   {16, 16, 16, DT_F16, DT_F32, 0},
    {32, 32, 8, DT_BF16, DT_F32, 0},  {16, 16, 16, DT_BF16, DT_F32, 0},
    {32, 32, 2, DT_F32, DT_F32, 0},   {16, 16, 4, DT_F32, DT_F32, 0},
    {32, 32, 4, DT_TF32, DT_F32, 0},  {16, 16, 8, DT_TF32, DT_F32, 0},
    {32, 32, 16, DT_I8, DT_I32, 0},   {16, 16, 32, DT_I8, DT_I32, 0},
    {16, 16, 4, DT_F64, DT_F64, 0},
};

#define NV_BASE (TF_MMA_SYNC | TF_LDMATRIX | TF_CP_ASYNC | TF_MBARRIER | TF_NAMED_BARRIER | \
                 TF_BF16 | TF_TF32 | TF_ROLES)
#define NV_HOPPER (TF_STMATRIX | TF_MBARRIER_TX | TF_TMA | TF_FENCE_PROXY | TF_FP8 | TF_SETMAXNREG | \
                   TF_WARPGROUPS | TF_FP8_CVT)
#define NV_GRID {2147483647, 65535, 65535}
#define AMD_GRID {2147483647, 2147483647, 2147483647}

/* the columns every NVIDIA row shares, then the AMD ones */
#define NVIDIA .vendor = VENDOR_NVIDIA, .warp_size = 32, .warp_word = "warp", \
    .max_threads_per_block = 1024, .regs_per_sm = 65536, .max_regs_per_thread = 255, \
    .max_named_barriers = 16, .group_warps = 4, .max_grid = NV_GRID, .llvm_triple = "nvptx64-nvidia-cuda", \
    .llvm_features = "+ptx85"
#define AMD .vendor = VENDOR_AMD, .warp_size = 64, .warp_word = "wavefront", \
    .max_threads_per_block = 1024, .max_smem_per_block = 65536, .regs_per_sm = 131072, \
    .max_regs_per_thread = 512, .max_agprs = 256, .group_warps = 4, .max_grid = AMD_GRID, .llvm_triple = "amdgcn-amd-amdhsa", \
    .llvm_features = ""
#define SETMAXNREG .reg_alloc_unit = 8, .setmaxnreg_min = 24, .setmaxnreg_max = 256
#define TC(fam, table) [fam] = {table, N_(table)}

const TargetInfo tg_table[TG__COUNT] = {
    [TG_SM80] = {TG_SM80, "sm_80", NVIDIA, .sm = 80, .max_smem_per_block = 166912,
                 .features = NV_BASE, .tc = {[TCF_MMA_SYNC] = {mma_nv, MMA_SM80_ROWS}}, .llvm_cpu = "sm_80"},
    [TG_SM90A] = {TG_SM90A, "sm_90a", NVIDIA, .sm = 90, .family_only = 1,
                  .max_smem_per_block = 232448, SETMAXNREG,
                  .features = NV_BASE | NV_HOPPER | TF_WGMMA,
                  .tc = {TC(TCF_MMA_SYNC, mma_nv), TC(TCF_WGMMA, wgmma_sm90a)}, .llvm_cpu = "sm_90a"},
    /* LLVM 19 has no sm_100a processor: no llvm_cpu, code generation reports E0902 */
    [TG_SM100A] = {TG_SM100A, "sm_100a", NVIDIA, .sm = 100, .family_only = 1,
                   .max_smem_per_block = 232448, SETMAXNREG,
                   .features = NV_BASE | NV_HOPPER | TF_TCGEN05, .tc = {TC(TCF_MMA_SYNC, mma_nv)}},
    [TG_GFX90A] = {TG_GFX90A, "gfx90a", AMD, .features = TF_MFMA | TF_BF16,
                   .tc = {TC(TCF_MFMA, mfma_gfx90a)}, .llvm_cpu = "gfx90a"},
    [TG_GFX942] = {TG_GFX942, "gfx942", AMD, .features = TF_MFMA | TF_BF16 | TF_TF32 | TF_FP8,
                   .tc = {TC(TCF_MFMA, mfma_gfx942)}, .llvm_cpu = "gfx942"},
};

int64_t tg_unit_threads(Target t, Unit unit)
{
    switch (unit) {
    case UNIT_WARPS: return tg_table[t].warp_size;
    case UNIT_WARPGROUPS: return (int64_t)tg_table[t].group_warps * tg_table[t].warp_size;
    default: return 1;
    }
}

int64_t tg_block_threads(Target t, Unit unit, int64_t n)
{
    int64_t th;
    if (n <= 0)
        return 0;
    if (__builtin_mul_overflow(n, tg_unit_threads(t, unit), &th))
        return INT64_MAX / 2;
    return th;
}

Target tg_first(const Kernel *k)
{
    for (int t = 0; t < TG__COUNT; t++)
        if (k->targets[t])
            return (Target)t;
    return TG_SM90A;
}

Target tg_first_of(const Module *m)
{
    for (uint32_t i = 0; i < m->nkernels; i++)
        if (m->kernels[i]->ntargets)
            return tg_first(m->kernels[i]);
    return TG_SM90A;
}

int tg_device_fit(Target t, const char *arch)
{
    const TargetInfo *ti = &tg_table[t];
    if (ti->vendor == VENDOR_AMD)
        return strcmp(arch, ti->name) == 0 ? 2 : 0;
    if (strncmp(arch, "sm_", 3) != 0)  /* the NVIDIA runtime names a GPU sm_<cc> */
        return 0;
    int cc = atoi(arch + 3);
    if (cc / 10 == ti->sm / 10)
        return 2;
    return cc > ti->sm && !ti->family_only ? 1 : 0;
}

int tg_pick_for_arch(const Kernel *k, const char *arch, Target *tg)
{
    int best = 0;
    Target pick = *tg;
    for (int t = 0; t < TG__COUNT; t++) {
        int fit = tg_device_fit((Target)t, arch);
        if ((k && !ir_kernel_targets(k, (Target)t)) || !fit || fit < best ||
            (fit == best && tg_table[t].sm <= tg_table[pick].sm))
            continue;
        pick = (Target)t;
        best = fit;
    }
    if (best)
        *tg = pick;
    return best != 0;
}

int tg_tc_scope_threads(Target t, TcFamily f)
{
    const TargetInfo *ti = &tg_table[t];
    return ti->warp_size * (tc_families[f].group ? 1 : ti->group_warps);
}

static const TcShape *tc_table(Target t, Op op, uint32_t *n)
{
    const TcShapes *s = &tg_table[t].tc[tc_family_of(op)];
    *n = s->n;
    return s->v;
}

static int wgmma_n_ok(const TcShape *s, int64_t n)
{
    if (n < 8 || n > 256 || n % 8)
        return 0;
    /* integer wgmma: N = 8, 16, 24, then multiples of 16 */
    return s->nstep == 8 || n <= 24 || n % 16 == 0;
}

const TcShape *tg_tc_find(Target t, Op op, int64_t m, int64_t n, int64_t k, DType ab, DType acc)
{
    uint32_t cnt;
    const TcShape *tab = tc_table(t, op, &cnt);
    for (uint32_t i = 0; i < cnt; i++) {
        const TcShape *s = &tab[i];
        if (s->ab != ab || s->acc != acc || s->m != m || s->k != k)
            continue;
        if (s->nstep ? wgmma_n_ok(s, n) : s->n == n)
            return s;
    }
    return NULL;
}

static int divides(int64_t unit, int64_t x) { return x < 0 || (unit > 0 && x % unit == 0 && x > 0); }

const TcShape *tg_tc_tile(Target t, Op op, int64_t M, int64_t N, int64_t K, DType ab, DType acc)
{
    uint32_t cnt;
    const TcShape *tab = tc_table(t, op, &cnt);
    for (uint32_t i = 0; i < cnt; i++) {
        const TcShape *s = &tab[i];
        if (s->ab != ab || s->acc != acc || !divides(s->k, K))
            continue;
        if (s->nstep) {
            if ((M < 0 || M == s->m) && (N < 0 || wgmma_n_ok(s, N)))
                return s;
        } else if (divides(s->m, M) && divides(s->n, N)) {
            return s;
        }
    }
    return NULL;
}

uint32_t tg_tc_describe(Target t, Op op, DType ab, char *buf, size_t size)
{
    uint32_t cnt, found = 0;
    const TcShape *tab = tc_table(t, op, &cnt);
    size_t used = 0;
    if (size)
        buf[0] = 0;
    for (uint32_t i = 0; i < cnt; i++) {
        const TcShape *s = &tab[i];
        if (ab != DT_NONE && s->ab != ab)
            continue;
        char one[64];
        char shp[32];
        if (s->nstep)
            snprintf(shp, sizeof shp, "m64nNk%u", s->k);
        else
            snprintf(shp, sizeof shp, tc_families[tc_family_of(op)].shape_fmt, s->m, s->n, s->k);
        if (s->nstep)
            snprintf(one, sizeof one, "%s %s->%s (N = %u..256 step %u)", shp,
                     ir_dtypes[s->ab].spelling, ir_dtypes[s->acc].spelling, s->nstep, s->nstep);
        else
            snprintf(one, sizeof one, "%s %s->%s", shp, ir_dtypes[s->ab].spelling, ir_dtypes[s->acc].spelling);
        int w = snprintf(buf + used, size > used ? size - used : 0, "%s%s", found ? ", " : "", one);
        if (w > 0 && used + (size_t)w < size)
            used += (size_t)w;
        found++;
    }
    return found;
}

uint32_t tg_op_feature(Op op)
{
    switch (op) {
    case OP_MMA: case OP_WGMMA: case OP_WGMMA_WAIT: case OP_MFMA:
        return tc_families[tc_family_of(op)].feature;
    case OP_LDMATRIX: case OP_LDMATRIX_T: return TF_LDMATRIX;
    case OP_STMATRIX: return TF_STMATRIX;
    case OP_CP_ASYNC: case OP_CP_COMMIT: case OP_CP_WAIT: return TF_CP_ASYNC;
    case OP_TMA_LOAD: case OP_TMA_STORE: case OP_TMA_WAIT: return TF_TMA;
    case OP_MB_EXPECT: return TF_MBARRIER_TX;
    case OP_MBARRIER: case OP_MB_ARRIVE: case OP_MB_WAIT: return TF_MBARRIER;
    case OP_FENCE_PROXY: return TF_FENCE_PROXY;
    case OP_BAR_SYNC: case OP_BAR_ARRIVE: return TF_NAMED_BARRIER;
    case OP_ROLE: case OP_PIPELINE: return TF_ROLES;
    default: return 0;
    }
}

const char *tg_feature_name(uint32_t feature)
{
    switch (feature) {
    case TF_MMA_SYNC: return "mma.sync";
    case TF_LDMATRIX: return "ldmatrix";
    case TF_STMATRIX: return "stmatrix";
    case TF_CP_ASYNC: return "cp.async";
    case TF_MBARRIER: return "mbarriers";
    case TF_MBARRIER_TX: return "mbarrier transaction counts (expect_tx)";
    case TF_TMA: return "TMA (cp.async.bulk.tensor)";
    case TF_WGMMA: return "wgmma";
    case TF_SETMAXNREG: return "setmaxnreg";
    case TF_FENCE_PROXY: return "fence.proxy.async";
    case TF_NAMED_BARRIER: return "named barriers";
    case TF_MFMA: return "MFMA";
    case TF_FP8: return "fp8 tensor-core inputs";
    case TF_BF16: return "bf16 tensor-core inputs";
    case TF_TF32: return "tf32 tensor-core inputs";
    case TF_TCGEN05: return "tcgen05";
    case TF_ROLES: return "warp-specialized roles and pipelines (v1: NVIDIA only)";
    case TF_WARPGROUPS: return "warpgroups (sm_90a and later)";
    case TF_FP8_CVT: return "OCP fp8 conversions in SIMT code";
    default: return "this feature";
    }
}

/* ---- devices (targets.h) -------------------------------------------------------
 * Sources, per column:
 *   sm_count, clock_ghz, hbm_gbps, l2_bytes, tensor peaks: the vendors' datasheets
 *     (NVIDIA H100/H200 and A100 datasheets and the Hopper/Ampere architecture
 *     whitepapers; AMD Instinct MI300X and MI250X datasheets and the CDNA2/CDNA3
 *     whitepapers). clock_ghz is the clock at which the dense tensor peak is
 *     quoted: H100/H200 989.4 TFLOP/s bf16 = 132 SMs x 4096 FLOP/clk x 1.83 GHz;
 *     A100 312 = 108 x 2048 x 1.41; MI300X 1307.4 = 304 x 2048 x 2.1;
 *     MI250X 383 = 220 x 1024 x 1.7.
 *   smem_per_sm, max_threads_per_sm, max_blocks_per_sm: CUDA C Programming Guide,
 *     "Technical Specifications per Compute Capability"; AMD: 64 KiB LDS per CU,
 *     32 wavefronts of 64 lanes per CU (CDNA ISA guides).
 *   fma_lanes: FP32 cores per SM (whitepapers: 128 on Hopper, 64 on A100; 64 per
 *     CU on CDNA2/3 without packed math); mufu_lanes: 16 SFU results per SM per
 *     clock (4 per SM sub-partition), likewise 4 per SIMD on CDNA.
 *   smem_bytes_clk: 128 B/clk (32 banks x 4 B) per SM, likewise LDS per CU.
 *   mma_sync_flops on Hopper: mma.sync does not reach the wgmma rate; about 62%
 *     in published microbenchmarks (Luo et al., "Benchmarking and Dissecting the
 *     Nvidia Hopper GPU Architecture", 2024) — an estimate the calibration file
 *     scales (bench/cost/h200.json).
 *   l2_gbps and the latencies: approximate microbenchmark values (the same paper;
 *     Chips and Cheese's H100 and MI300X articles), rounded; calibrated values
 *     override them at run time (bench/cost/DEVICE.json).
 *   launch_us: the event-timed launch of an empty kernel, about 2-3 us. */
const TgDevice tg_devices[] = {
    {"h200", "NVIDIA H200 SXM 141GB", TG_SM90A, 132, 1.83, 4800, 50e6, 12000, 233472, 2048, 32,
     2560, 4096, 0, 128, 16, 128, 700, 200, 16, 20, 2.5,
     "NVIDIA H200 datasheet (4.8 TB/s HBM3e, 989 TFLOP/s bf16 dense), Hopper whitepaper"},
    {"h100", "NVIDIA H100 SXM5 80GB", TG_SM90A, 132, 1.83, 3350, 50e6, 12000, 233472, 2048, 32,
     2560, 4096, 0, 128, 16, 128, 700, 200, 16, 20, 2.5,
     "NVIDIA H100 datasheet (3.35 TB/s HBM3, 989 TFLOP/s bf16 dense), Hopper whitepaper"},
    {"a100", "NVIDIA A100 SXM4 80GB", TG_SM80, 108, 1.41, 2039, 40e6, 4000, 167936, 2048, 32,
     2048, 0, 0, 64, 16, 128, 600, 200, 20, 20, 2.5,
     "NVIDIA A100 datasheet (2039 GB/s HBM2e, 312 TFLOP/s bf16 dense), Ampere whitepaper"},
    {"mi300x", "AMD Instinct MI300X", TG_GFX942, 304, 2.1, 5300, 32e6, 10000, 65536, 2048, 32,
     0, 0, 2048, 64, 16, 128, 800, 250, 30, 30, 4.0,
     "AMD MI300X datasheet (5.3 TB/s HBM3, 1307 TFLOP/s bf16 dense; L2 4 MB per XCD), CDNA3 whitepaper"},
    {"mi250x", "AMD Instinct MI250X", TG_GFX90A, 220, 1.7, 3277, 16e6, 6000, 65536, 2048, 32,
     0, 0, 1024, 64, 16, 128, 800, 250, 30, 30, 4.0,
     "AMD MI250X datasheet (3.2 TB/s HBM2e, 383 TFLOP/s bf16 dense, both GCDs), CDNA2 whitepaper"},
};
const uint32_t tg_ndevices = N_(tg_devices);

const TgDevice *tg_device_find(const char *name)
{
    for (uint32_t i = 0; i < tg_ndevices; i++)
        if (!strcasecmp(name, tg_devices[i].name))
            return &tg_devices[i];
    return NULL;
}

const TgDevice *tg_device_default(Target t)
{
    for (uint32_t i = 0; i < tg_ndevices; i++)
        if (tg_devices[i].target == t)
            return &tg_devices[i];
    return NULL;
}

const TgDevice *tg_device_match(const char *gpu_name)
{
    for (uint32_t i = 0; gpu_name && i < tg_ndevices; i++)
        if (strcasestr(gpu_name, tg_devices[i].name))
            return &tg_devices[i];
    return NULL;
}

const char *tg_device_arch(const TgDevice *d, char *buf, size_t size)
{
    const TargetInfo *own = &tg_table[d->target];
    if (own->vendor == VENDOR_AMD)
        snprintf(buf, size, "%s", own->name);
    else
        snprintf(buf, size, "sm_%d", own->sm);
    return buf;
}

int tg_device_runs(const TgDevice *d, Target t)
{
    char arch[16];
    return d->target == t || tg_device_fit(t, tg_device_arch(d, arch, sizeof arch)) > 0;
}
