/* cg_int.h — internals shared by the code generator's files: the lowering
 * state (Cg), value types (CgTy), the per-target hook table (CgTarget) and
 * the small LLVM helpers of builder.c. Not for use outside codegen/. */
#ifndef CAKE_CG_INT_H
#define CAKE_CG_INT_H

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include "cg.h"
#include "consteval.h"

/* The dtype and lanes of a scalar or vector value, read from Node.type (cg_ty). */
typedef struct { uint8_t dt, lanes; } CgTy;

typedef struct Cg Cg;

enum { SHFL_XOR, SHFL_DOWN, SHFL_UP, SHFL_IDX };

/* Everything that differs between NVPTX and AMDGPU. */
typedef struct CgTarget {
    uint32_t shared_as;            /* address space of shared memory / LDS */
    /* thread.x, block.x/y/z and grid.x/y/z (blocks in the launch): i32 values */
    LLVMValueRef (*tid_x)(Cg *);
    /* thread.x read again where it stands, never hoisted out of a loop (NF_FRESH); NULL: tid_x */
    LLVMValueRef (*tid_x_fresh)(Cg *);
    LLVMValueRef (*ctaid)(Cg *, int dim);
    LLVMValueRef (*nctaid)(Cg *, int dim);
    /* makes a value uniform across the warp where the target profits (AMD readfirstlane) */
    LLVMValueRef (*uniform)(Cg *, LLVMValueRef i32);
    void (*barrier)(Cg *);                                   /* sync */
    void (*named_barrier)(Cg *, LLVMValueRef id, LLVMValueRef count, int arrive, Span);
    void (*fence)(Cg *);                                     /* fence (block scope) */
    void (*fence_gpu)(Cg *);                                 /* fence.gpu (device scope) */
    /* a 32-bit shuffle: v is i32; arg is the lane mask / delta / source lane */
    LLVMValueRef (*shfl)(Cg *, int kind, LLVMValueRef v, LLVMValueRef arg);
    /* f32 math: op is OP_EXP2 .. OP_RCP etc.; returns NULL when the shared code
       should use its generic lowering */
    LLVMValueRef (*math_f32)(Cg *, Op op, LLVMValueRef x);
    LLVMValueRef (*fdiv_f32)(Cg *, LLVMValueRef a, LLVMValueRef b);
    void (*mark_kernel)(Cg *, LLVMValueRef fn, uint32_t threads);
    /* OCP fp8 (cg_fp8.c): two f32 to an i16 holding e4m3/e5m2 lo (bits 0-7) and
       hi, nearest even, saturating; an i16 of two fp8 to an i32 holding f16x2.
       NULL where the target has no OCP fp8 conversions */
    LLVMValueRef (*cvt_f32x2_fp8x2)(Cg *, DType to, LLVMValueRef lo, LLVMValueRef hi);
    LLVMValueRef (*cvt_fp8x2_f16x2)(Cg *, DType from, LLVMValueRef pair);
    /* two f32 to a <2 x bfloat> / <2 x half> (to: DT_BF16 / DT_F16), nearest even, in one
       instruction (cvt.rn.bf16x2.f32); NULL: lane by lane */
    LLVMValueRef (*cvt_f32x2_16x2)(Cg *, DType to, LLVMValueRef lo, LLVMValueRef hi);
    /* a masked global access of `bytes` (1, 2, 4, 8, 16) as one predicated instruction
       (cond i1; the load gives 0 where it is false): the value as `nregs` i32 (or one i16
       for 1 and 2 bytes); NULL: a branch around the access (cg_mem.c) */
    void (*pred_load)(Cg *, LLVMValueRef cond, LLVMValueRef ptr, unsigned bytes, int nc, LLVMValueRef *out);
    void (*pred_store)(Cg *, LLVMValueRef cond, LLVMValueRef ptr, unsigned bytes, LLVMValueRef *in);
    /* TIR-L (docs/tirl.md): mbarriers, bulk tensor copies, async proxies and
     * tensor cores. NVIDIA only (nvptx_tc.c); NULL on AMD, where the
     * unsupported pass has reported them already. Shared addresses (bar,
     * smem) are i32 offsets in the shared window; a tensor map is the i64
     * generic address of its __grid_constant__ parameter. */
    void (*mbar_init)(Cg *, LLVMValueRef bar, LLVMValueRef count);
    void (*mbar_fence_init)(Cg *);
    void (*mbar_arrive)(Cg *, LLVMValueRef bar, LLVMValueRef tx_bytes); /* tx_bytes NULL: plain */
    LLVMValueRef (*mbar_try_wait)(Cg *, LLVMValueRef bar, LLVMValueRef parity); /* i1: phase done */
    void (*cp_mbar_arrive)(Cg *, LLVMValueRef bar);
    void (*syncwarp)(Cg *);
    void (*tma_load)(Cg *, LLVMValueRef map, LLVMValueRef smem, LLVMValueRef bar, LLVMValueRef *c, unsigned n);
    void (*tma_store)(Cg *, LLVMValueRef map, LLVMValueRef smem, LLVMValueRef *c, unsigned n, int add);
    /* brings a tensor map into the TMA unit's cache at the kernel's entry, so the
     * first copy through it does not wait for the descriptor's fetch */
    void (*tmap_prefetch)(Cg *, LLVMValueRef map);
    void (*bulk_commit)(Cg *);
    void (*bulk_wait)(Cg *, int n);
    void (*fence_proxy)(Cg *);
    void (*wg_fence)(Cg *);
    void (*wg_commit)(Cg *);
    void (*wg_wait)(Cg *, int n);
    /* d: nd accumulator values in, results out; a_regs: packed A registers or NULL */
    void (*wgmma)(Cg *, IrTc t, LLVMValueRef desc_a, LLVMValueRef desc_b, LLVMValueRef *a_regs,
                  unsigned na, LLVMValueRef *d, unsigned nd);
    /* the register-operand tensor-core instruction of the target's family
     * (ir/tcfamily.h): mma.sync on NVIDIA, MFMA on AMD; a, b: packed 32-bit
     * registers of A and B; d: nd accumulator values in, results out */
    void (*mma)(Cg *, IrTc t, LLVMValueRef *a, unsigned na, LLVMValueRef *b, unsigned nb,
                LLVMValueRef *d, unsigned nd);
    void (*ldmatrix)(Cg *, int n, int trans, LLVMValueRef addr, LLVMValueRef *out); /* n i32 */
    void (*stmatrix)(Cg *, int n, int trans, LLVMValueRef addr, LLVMValueRef *in);
    void (*setmaxnreg)(Cg *, int inc, int regs);
    void (*cp_async)(Cg *, LLVMValueRef dst, LLVMValueRef src, int bytes, LLVMValueRef ok);
    void (*cp_commit)(Cg *);
    void (*cp_wait)(Cg *, int n);
} CgTarget;

extern const CgTarget cg_nvptx;
extern const CgTarget cg_amdgpu;

/* A resolved memory reference: x[i, j : +8] */
typedef struct {
    LLVMValueRef ptr;      /* address of the first element */
    CgTy elem;             /* element dtype, lanes = extent of the access */
    uint32_t align;        /* bytes */
    int contiguous;        /* lanes are adjacent in memory */
    LLVMValueRef stride;   /* i64 element stride of the last dim when not contiguous */
    uint32_t space;        /* Space */
    int inbounds;
    int readonly;          /* a global tensor the kernel never stores to (ld.global.nc) */
} CgRef;

struct Cg {
    CakeCtx *ctx;
    Kernel *k;
    Target tg;
    const CgTarget *t;
    LLVMContextRef lc;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMBuilderRef ab;          /* positioned in the alloca block */
    LLVMBasicBlockRef alloca_bb;
    LLVMValueRef fn;
    LLVMValueRef *val;          /* per NodeId: the value (or address) a declaration binds */
    uint32_t nval;
    NodeId at;                  /* the node being lowered (for diagnostics) */
    uint32_t block_threads;
    uint32_t loop_depth;
    uint32_t nscratch;
    int failed;
    int fast_div;
    int no_minmax_fold;         /* no ptxas workaround (cg_math.c): AMD, or CAKE_NO_MINMAX_FOLD set */
    int no_contract;            /* CAKE_NO_CONTRACT: f32/f64 + - x without the `contract` flag (no fma fusion) */
    int no_packed;              /* CAKE_NO_PACKED: f32 -> bf16/f16 vectors one lane at a time */
    int no_predicate;           /* CAKE_NO_PREDICATE: masked accesses as a branch around the access */
    int no_tree;                /* CAKE_NO_TREE: hsum/hmax/hmin as a chain in lane order */
    int no_licm;                /* CAKE_NOLICM: the kernel's loops marked llvm.licm.disable */
    int wg_hoist;               /* CAKE_WG_HOIST: a wgmma's register A packed before its group's fence */
    int cvt_pairs;              /* CAKE_CVT_PAIRS: packed operands of two f32 -> 16-bit casts as one cvt */
    LLVMValueRef wg_fence_at;   /* the open wgmma group's fence (the call), NULL outside a group */
    int no_tmap_prefetch;       /* CAKE_NO_TMAP_PREFETCH: no prefetch.tensormap at the entry */
    LLVMValueRef smem;          /* the kernel's shared-memory buffer (the plan's slots) */
    LLVMTypeRef tvoid, ti1, ti8, ti16, ti32, ti64, tf16, tbf16, tf32, tf64, tptr_g, tptr_s, tptr;
};

/* ---- builder.c: LLVM helpers --------------------------------------------- */
LLVMTypeRef cg_llvm_type(Cg *, CgTy);
LLVMTypeRef cg_scalar_type(Cg *, DType);
LLVMValueRef cg_i32(Cg *, int64_t);
LLVMValueRef cg_i64(Cg *, int64_t);
LLVMValueRef cg_intrin(Cg *, const char *name, LLVMTypeRef *overloads, unsigned noverloads,
                       LLVMValueRef *args, unsigned nargs);
LLVMValueRef cg_call(Cg *, const char *name, LLVMTypeRef ret, LLVMValueRef *args, unsigned n);
LLVMValueRef cg_asm(Cg *, LLVMTypeRef ret, const char *text, const char *cons,
                    LLVMValueRef *args, unsigned n, int side_effects);
LLVMValueRef cg_alloca(Cg *, LLVMTypeRef, const char *name);
LLVMBasicBlockRef cg_block(Cg *, const char *name);
void cg_unsupported(Cg *, NodeId, const char *what);
int cg_const_int(Cg *, NodeId, int64_t *out);
LLVMValueRef cg_shared_global(Cg *, LLVMTypeRef ty, const char *name, uint32_t align);

/* ---- cg_types.c: Node.type as codegen needs it --------------------------- */
CgTy cg_ty(Cg *, NodeId);                 /* e's type; a compiler bug when it has none */
int cg_is_float(CgTy);
int cg_is_signed(CgTy);
int cg_is_int(CgTy);
int cg_same(CgTy, CgTy);
CgTy cg_scalar(DType);

/* ---- cg_expr.c ----------------------------------------------------------- */
LLVMValueRef cg_expr(Cg *, NodeId e);                   /* e's value, in its own type */
/* e's value; a compiler bug unless e's type is `expect` (what legalize promised) */
LLVMValueRef cg_expr_of(Cg *, NodeId e, CgTy expect);
LLVMValueRef cg_cond(Cg *, NodeId e);                   /* a bool scalar as i1 */
LLVMValueRef cg_binop(Cg *, Op op, LLVMValueRef a, LLVMValueRef b, CgTy ty, Span);

/* ---- cg_math.c ----------------------------------------------------------- */
LLVMValueRef cg_convert(Cg *, LLVMValueRef v, CgTy from, CgTy to);
LLVMValueRef cg_splat(Cg *, LLVMValueRef scalar, unsigned lanes);
LLVMValueRef cg_math(Cg *, Op op, LLVMValueRef *args, unsigned n, CgTy ty, NodeId at);
LLVMValueRef cg_fdiv(Cg *, LLVMValueRef a, LLVMValueRef b, CgTy ty);
LLVMValueRef cg_horizontal(Cg *, Op op, LLVMValueRef v, CgTy vty);
LLVMValueRef cg_dot(Cg *, LLVMValueRef a, LLVMValueRef b, CgTy vty);
LLVMValueRef cg_minmax(Cg *, int is_max, LLVMValueRef a, LLVMValueRef b, CgTy ty);

/* ---- cg_fp8.c ------------------------------------------------------------ */
int cg_is_fp8(DType);
LLVMValueRef cg_fp8_convert(Cg *, LLVMValueRef v, CgTy from, CgTy to);  /* one side e4m3/e5m2 */

/* ---- cg_mem.c ------------------------------------------------------------ */
/* the address of ref for an access of a `value`-typed value (its lanes: the slice) */
int cg_ref(Cg *, NodeId ref, CgTy value, CgRef *out);
LLVMValueRef cg_index64(Cg *, NodeId index);   /* an index, extended to i64 */
LLVMValueRef cg_load(Cg *, const CgRef *, NodeId mask, Span);
void cg_store(Cg *, const CgRef *, LLVMValueRef v, NodeId mask, Span);
/* an atomic read-modify-write (OP_ATOMIC_ADD, OP_ATOMIC_EXCH) of one global
 * element; returns the old element (0 where the mask is off) */
LLVMValueRef cg_atomic(Cg *, const CgRef *, Op op, LLVMValueRef v, NodeId mask);

/* ---- cg_reduce.c --------------------------------------------------------- */
LLVMValueRef cg_shuffle(Cg *, int kind, LLVMValueRef v, CgTy ty, LLVMValueRef arg);
LLVMValueRef cg_warp_reduce(Cg *, Op op, LLVMValueRef v, CgTy ty);
LLVMValueRef cg_block_reduce(Cg *, Op op, LLVMValueRef v, CgTy ty);
LLVMValueRef cg_lane(Cg *);
LLVMValueRef cg_warp_id(Cg *);

/* ---- cg_lower.c: TIR-L ---------------------------------------------------- */
void cg_lowered_stmt(Cg *, NodeId s);
LLVMValueRef cg_lowered_expr(Cg *, NodeId e, CgTy ty);
/* the byte offset (i32) in the shared-memory buffer of element idx[] of a
 * SHARED or MBARRIER declaration, swizzled unless raw (docs/tir.md §5.2) */
LLVMValueRef cg_smem_offset(Cg *, NodeId decl, LLVMValueRef *idx, uint32_t rank, int raw);
LLVMValueRef cg_smem_ptr(Cg *, LLVMValueRef offset);     /* a shared pointer at offset */
uint32_t cg_smem_slot(Cg *, NodeId decl, int *found);     /* the plan's offset of decl */
void cg_declare_smem(Cg *);                               /* the kernel's shared buffer */
void cg_cp_async(Cg *, NodeId s);
LLVMValueRef cg_pack_i32(Cg *, LLVMValueRef *v, unsigned n, DType dt);  /* n 16-bit (2) or 8-bit (4) */
void cg_unpack_i32(Cg *, LLVMValueRef w, DType dt, LLVMValueRef *out);

/* ---- cg_stmt.c ----------------------------------------------------------- */
void cg_block_stmts(Cg *, NodeId block);
void cg_kernel(Cg *);

/* ---- launch.c -------------------------------------------------------------- */
/* the block size in threads on tg (ce_block_threads); 0 when it is not a
   constant within the target's limit */
uint32_t cg_threads_of(const CakeCtx *, const Kernel *, Target);

#endif
