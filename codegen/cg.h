/* cg.h — code generation: TIR kernels → LLVM IR → PTX (NVPTX) or AMDGCN code
 * objects (AMDGPU), through the LLVM C API (LLVM 19).
 *
 * One shared lowering (builder.c, cg_*.c) with a small per-target hook table
 * (nvptx.c, amdgpu.c). The input is a verified kernel after pass_run_all
 * (passes/passes.h).
 *
 * ======================= THE KERNEL ABI (runtime contract) =================
 *
 * Symbol. The kernel's LLVM function, PTX .entry and AMDHSA kernel descriptor
 * are all named exactly as the kernel (`kernel rmsnorm` → "rmsnorm"); there is
 * no mangling. (The AMDHSA descriptor symbol is "rmsnorm.kd", as usual.)
 *
 * Parameters, in this order:
 *   1. every `arg`, in declaration order:
 *        - a global tensor  → one pointer to its first element, 8 bytes
 *          (ptr addrspace(1); PTX .param .u64; AMDHSA global_buffer). The
 *          pointer must be aligned to 16 bytes (cuMemAlloc/hipMalloc give
 *          256) or to the tensor's `align` when larger. Tensor arguments are
 *          `noalias` (like C `__restrict__`): two arguments must not overlap
 *          in memory unless neither is written. Arguments never written by
 *          the kernel are also marked readonly (lets NVPTX use ld.global.nc).
 *        - a scalar         → by value, in its dtype: i8/u8/bool 1 byte
 *          (bool is passed as an i8 0/1), i16/u16/f16/bf16 2, i32/u32/f32 4,
 *          i64/u64/f64 8; natural alignment (CUDA's kernelParams / HIP's
 *          kernarg layout rules apply unchanged).
 *   2. then every symbolic dim of Kernel.dims, in order, as i32 (4 bytes).
 *      A dim must be in 0 .. 2^31-1.
 *   Strides of a tensor are NOT parameters: they are the `strides [..]`
 *   expressions of its type (over params and dims), or row-major from its
 *   dims by default.
 *
 * Launch. grid = the `grid [g0, g1, g2]` clause evaluated on the dims and
 *   params (missing extents are 1) → (gridDim.x, .y, .z) = (g0, g1, g2);
 *   `sm.count` there is the launching device's multiprocessor count
 *   (CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT; HIP: compute units). The kernel
 *   reads the extents back as `grid.x/y/z` (%nctaid; AMDGPU: the dispatch
 *   packet's grid size over the workgroup size).
 *   block = (T, 1, 1) with T = `threads T`, or 32·W for `warps W`, or 128·G for
 *   `warpgroups G` on NVPTX; on AMDGPU a warp is a 64-lane wavefront, so
 *   `warps W` is 64·W threads (`threads T` is T on both). The block size is
 *   a compile-time constant: the PTX carries .reqntid T and the code object
 *   amdgpu-flat-work-group-size "T,T"; launching with another block size is
 *   an error (CUDA refuses; results are undefined on HIP). cg_launch_dims
 *   below does this arithmetic for the runtime.
 *   3. then every tensor map of the launch plan (KPlan.tmaps: TMA), a 128-byte
 *      CUtensorMap passed by value, 64-byte aligned, __grid_constant__; the
 *      runtime encodes it (cuTensorMapEncodeTiled) for the tensor argument,
 *      box and swizzle the plan's L_TMAP gives.
 * Shared memory: one buffer laid out by the launch plan (KPlan.smem: every
 *   `shared` tile, mbarrier and reduce.block scratch at its offset). On
 *   NVPTX it is dynamic shared memory (extern .shared, 1024-byte aligned):
 *   launch with KPlan.smem_bytes (CgLaunch.dyn_shared_bytes), raising the
 *   function's limit first when it is over 48 KiB; on AMDGPU a static LDS
 *   array (group_segment_fixed_size). With setmaxnreg roles the kernel
 *   carries .maxnreg KPlan.maxnreg.
 *
 * ===========================================================================
 *
 * Types: code generation reads Node.type and nothing else; it needs a kernel
 * verified (ver_verify) and run through pass_run_all, whose legalize pass
 * makes every conversion an explicit cast (the invariant is at the top of
 * passes/legalize.c). Index arithmetic is computed in those types: i32 for
 * thread/block ids, literals and loop variables over i32 bounds, i64 once a
 * dim (an i64 value, passed as i32 and extended at the entry) takes part. The
 * element offset of a tensor access is computed in i64 (each index extended,
 * multiplied by its i64 stride), so a tensor may hold more than 2^31 elements
 * while each dim stays below 2^31. Integer arithmetic wraps (no nsw/nuw flags).
 */
#ifndef CAKE_CG_H
#define CAKE_CG_H

#include "ir.h"

typedef enum {
    CG_EMIT_LLVM,   /* textual LLVM IR after the optimization pipeline */
    CG_EMIT_PTX,    /* PTX text (NVPTX targets) */
    CG_EMIT_OBJ,    /* relocatable ELF object (AMDGPU targets; NVPTX: same as PTX) */
    CG_EMIT_HSACO   /* AMDGPU code object (the object linked with ld.lld -shared) */
} CgEmit;

typedef struct {
    int opt_level;          /* 0..3; the default options use 3 ("default<O3>") */
    int no_verify;          /* skip LLVMVerifyModule (never in tests) */
    int llvm_before_passes; /* CG_EMIT_LLVM: print the IR before the pipeline */
    int fast_div;           /* f32 x / y as div.approx.f32 (NVPTX) or x * rcp(y) (AMDGPU)
                               instead of the IEEE correctly rounded division */
    const char *lld;        /* ld.lld to run; NULL: $CAKE_LLD, then ld.lld-19 / ld.lld
                               next to llvm-config-19 --bindir, then PATH */
} CgOptions;

/* What the runtime needs to launch a kernel; all extents evaluated. */
typedef struct {
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t shared_bytes;  /* the launch plan's shared-memory buffer, in bytes */
    uint32_t dyn_shared_bytes; /* NVIDIA: the plan's shared buffer; AMD: 0 */
} CgLaunch;

/* Lowers kernel k of module m (k == NULL: every kernel of m that lists tg in
 * its `target` clause, into one module; none is E0902) for target tg and
 * emits `what`. Run pass_run_all (passes/passes.h) first. On success returns 0 and *out is a malloc'd
 * buffer of *len bytes (NUL-terminated for the text forms; free() it).
 * Returns 1 when diagnostics were reported into ctx (e.g. E0902 for an op
 * code generation does not handle yet), 2 on an internal error (ctx->bug_msg
 * says what; the LLVM verifier's report is in it), 3 when a tool is missing
 * (ld.lld for CG_EMIT_HSACO; E0903 reported). */
int cg_emit(CakeCtx *ctx, Module *m, Kernel *k, Target tg, CgEmit what,
            const CgOptions *opt, char **out, size_t *len);

/* Evaluates the launch configuration of k for target tg given the values of
 * its symbolic dims (dim_values[i] for k->dims[i]) and the SM (CU) count of
 * the device it is launched on, the value of `sm.count` in the grid clause
 * (sm_count <= 0: no device known, TG_DEFAULT_SM_COUNT). Returns 0, or 1
 * with a diagnostic if an extent is not computable or out of range. */
int cg_launch_dims(CakeCtx *ctx, const Kernel *k, Target tg, const int64_t *dim_values,
                   int64_t sm_count, CgLaunch *out);

/* The block size in threads of k on tg (threads / warps / warpgroups clause
 * evaluated on its params); 0 with a diagnostic if it is not a constant. */
uint32_t cg_block_threads(CakeCtx *ctx, const Kernel *k, Target tg);

/* Bytes of static shared memory k uses on tg: its `shared` declarations and
 * the reduce.block scratch code generation adds. */
uint32_t cg_shared_bytes(CakeCtx *ctx, const Kernel *k, Target tg);

/* 1 when kernel k lists target tg (or lists no target at all). */
int cg_kernel_targets(const Kernel *k, Target tg);

#endif
