/* ir.h — the TIR intermediate representation.
 *
 * A module holds kernels; a kernel holds every node of its header, body and
 * reference block in one array (Kernel.nodes), referenced by 32-bit NodeId.
 * Node 0 is the "none" node: a NodeId of 0 means "absent". Variable-length
 * operand lists (block statements, index lists, call arguments, dims) live
 * in Kernel.lists and are named by (list, n). Names are interned Sym ids.
 * All memory comes from the compilation's arena (CakeCtx.arena).
 *
 * The parser produces this IR with spans and unresolved NAME nodes; name
 * resolution fills Node.decl; the verifier fills Node.type (a TypeId into
 * Kernel.types). Later passes may rewrite nodes in place or append new ones.
 */
#ifndef CAKE_IR_H
#define CAKE_IR_H

#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <setjmp.h>

#define CAKE_VERSION "0.1.0"

struct CakeCtx;

typedef uint32_t NodeId;  /* index into Kernel.nodes; 0 = none */
typedef uint32_t Sym;     /* interned name; 0 = none */
typedef uint32_t TypeId;  /* index into Kernel.types; 0 = unknown */

/* ---- ops ------------------------------------------------------------ */
typedef enum {
#define OP(id, sp, cls, n, fl, cc) OP_##id,
#include "ops.h"
#undef OP
    OP__COUNT
} Op;

typedef enum { OC_LEAF, OC_BIN, OC_UN, OC_POST, OC_SLICE, OC_CAST, OC_BUILTIN,
               OC_MEM, OC_RED, OC_PIPE, OC_DECL, OC_TYPE, OC_STMT,
               OC_LOW /* TIR-L: lowered ops, printed @name(operands) */ } OpClass;

enum { /* op flags */
    OF_CONST = 1 << 0, OF_ARITH = 1 << 1, OF_INTONLY = 1 << 2, OF_CMP = 1 << 3,
    OF_LOGIC = 1 << 4, OF_MEM = 1 << 5, OF_MATH = 1 << 6, OF_WARP = 1 << 7,
    OF_BLOCK = 1 << 8, OF_TILE = 1 << 9, OF_SYNC = 1 << 10, OF_ASYNC = 1 << 11,
    OF_SMEM = 1 << 12, OF_TC = 1 << 13, OF_REFONLY = 1 << 14,
    OF_LSTMT = 1 << 15    /* a TIR-L op used as a statement */
};

typedef enum { /* cost classes */
    CC_FREE, CC_ALU, CC_INT, CC_DIV, CC_SFU, CC_CVT, CC_SHFL, CC_BAR, CC_BRANCH,
    CC_GLOAD, CC_GSTORE, CC_SLOAD, CC_SSTORE, CC_TMA, CC_MMA, CC_WGMMA, CC_MFMA,
    CC__COUNT
} CostClass;

typedef struct {
    const char *name;      /* enum suffix, e.g. "ADD" */
    const char *spelling;  /* source spelling, "" if none */
    uint8_t cls;           /* OpClass */
    int8_t nargs;          /* -1 variadic */
    uint16_t flags;        /* OF_* */
    uint8_t cost;          /* CostClass */
} OpInfo;

extern const OpInfo ir_ops[OP__COUNT];

/* ---- data types ------------------------------------------------------ */
/* DT(id, spelling, bits, kind)  kind: 'f' float, 'i' signed, 'u' unsigned, 'b' bool */
#define IR_DTYPES(DT) \
    DT(NONE, "", 0, '-') \
    DT(BOOL, "bool", 1, 'b') \
    DT(I8, "i8", 8, 'i') DT(U8, "u8", 8, 'u') \
    DT(I16, "i16", 16, 'i') DT(U16, "u16", 16, 'u') \
    DT(I32, "i32", 32, 'i') DT(U32, "u32", 32, 'u') \
    DT(I64, "i64", 64, 'i') DT(U64, "u64", 64, 'u') \
    DT(F16, "f16", 16, 'f') DT(BF16, "bf16", 16, 'f') DT(TF32, "tf32", 32, 'f') \
    DT(F32, "f32", 32, 'f') DT(F64, "f64", 64, 'f') \
    DT(E4M3, "e4m3", 8, 'f') DT(E5M2, "e5m2", 8, 'f')

typedef enum {
#define DT(id, sp, bits, kind) DT_##id,
    IR_DTYPES(DT)
#undef DT
    DT__COUNT
} DType;

typedef struct { const char *spelling; uint8_t bits; char kind; } DTypeInfo;
extern const DTypeInfo ir_dtypes[DT__COUNT];

/* ---- enumerations used in attributes --------------------------------- */
typedef enum { SP_NONE, SP_GLOBAL, SP_SHARED, SP_REG, SP_PARAM } Space;

/* layouts of register tiles; each implies an owning scope */
#define IR_LAYOUTS(L) \
    L(NONE, "", SC_THREAD) \
    L(WGMMA, "wgmma", SC_WARPGROUP)   /* wgmma accumulator (m64nNk*) */ \
    L(WGMMA_A, "wgmma_a", SC_WARPGROUP) /* wgmma A operand from registers */ \
    L(MMA, "mma", SC_WARP)            /* mma.sync m16n8k* accumulator */ \
    L(MMA_A, "mma_a", SC_WARP)        /* mma.sync A fragment (ldmatrix x4) */ \
    L(MMA_B, "mma_b", SC_WARP)        /* mma.sync B fragment (ldmatrix x2) */ \
    L(MFMA, "mfma", SC_WARP)          /* MFMA accumulator (one wavefront) */ \
    L(MFMA_A, "mfma_a", SC_WARP) \
    L(MFMA_B, "mfma_b", SC_WARP) \
    L(ROWS, "rows", SC_BLOCK)         /* rows spread over the block's threads */

typedef enum {
#define L(id, sp, sc) LY_##id,
    IR_LAYOUTS(L)
#undef L
    LY__COUNT
} Layout;

typedef enum { SC_NONE, SC_THREAD, SC_WARP, SC_WARPGROUP, SC_BLOCK } Scope;
extern const char *const ir_layout_names[LY__COUNT];
extern const uint8_t ir_layout_scope[LY__COUNT];
extern const char *const ir_scope_names[SC_BLOCK + 1];

/* special registers (OP_SPECIAL, Node.sub) */
#define IR_SPECIALS(S) \
    S(THREAD_X, "thread.x") S(THREAD_Y, "thread.y") S(THREAD_Z, "thread.z") \
    S(BLOCK_X, "block.x") S(BLOCK_Y, "block.y") S(BLOCK_Z, "block.z") \
    S(LANE, "lane") S(WARP, "warp") S(WG, "wg") \
    S(NTHREADS, "threads") /* block size in threads (inside a role: role size) */ \
    S(GRID_X, "grid.x") S(GRID_Y, "grid.y") S(GRID_Z, "grid.z") /* blocks in the launch */ \
    S(SM_COUNT, "sm.count") /* SMs (CUs) of the launch's device: `grid` clause only */

typedef enum {
#define S(id, sp) SR_##id,
    IR_SPECIALS(S)
#undef S
    SR__COUNT
} SpecialReg;
extern const char *const ir_special_names[SR__COUNT];

/* role units (OP_ROLE, Node.sub) and block-size units (Kernel.block_unit) */
typedef enum { UNIT_THREADS, UNIT_WARPS, UNIT_WARPGROUPS } Unit;

/* targets: the ids and spellings; everything else about a target (vendor, warp
 * width, limits, features) is in the target table, ir/targets.h */
#define IR_TARGETS(T) \
    T(SM80, "sm_80") T(SM90A, "sm_90a") T(SM100A, "sm_100a") T(GFX90A, "gfx90a") T(GFX942, "gfx942")
typedef enum {
#define T(id, sp) TG_##id,
    IR_TARGETS(T)
#undef T
    TG__COUNT
} Target;
extern const char *const ir_target_names[TG__COUNT];
extern const char *const ir_stage_names[];   /* --dump-after stages, NULL-terminated */

/* ---- spans, nodes ---------------------------------------------------- */
typedef struct { uint32_t file, lo, hi; } Span; /* byte offsets [lo, hi) in file */
#define IR_NOSPAN ((Span){UINT32_MAX, 0, 0})  /* a note or diagnostic with no place */

typedef struct {
    uint16_t swizzle;   /* shared: 0, 32, 64, 128 (bytes) */
    uint8_t layout;     /* reg: Layout */
    uint8_t scope;      /* reg: Scope */
    uint8_t unroll;     /* for: 0 none, 255 full, else factor */
    uint8_t space;      /* Space */
    uint16_t align;     /* global/shared: byte alignment (0 = default) */
} Attr;

/* Node fields per op (the contract between parser, printer, verifier, passes,
 * codegen and the reference interpreter). Unlisted fields are 0.
 *   INT v.i | FLOAT v.f | BOOL v.i | NAME name, decl | SPECIAL sub=SpecialReg | COLON -
 *   binary ops a, b | NEG, NOT, TRANS a | INDEX a=base, list=indices (expr|SLICE|COLON)
 *   SLICE a=start, b=extent | FIELD a=base, name=member | CAST dtype, lanes, a
 *   OC_BUILTIN ops (math, SELECT, LDMATRIX, shuffles, reductions, row/col ops): list=args
 *   LOAD a=ref, dtype/lanes=the 'as' type (DT_NONE if absent), b=mask
 *   SUM/RMAX/RMIN name=index variable (the node declares it), a=lo, b=hi, c=body
 *   P_ACQUIRE.. P_EMPTY a=NAME of the pipeline, list=args
 *   PARAM name, a=default, b..c=a range of values it may take (`in b .. c`) or
 *       list=a set of them (`in {v, ...}`) (docs/tir.md 4.1) | DIM name | ARG name, a=TYPE (scalar) or GTYPE
 *   TYPE dtype, lanes, list=dims (n=0: scalar or vector)
 *   GTYPE dtype, lanes, list=dims then strides, sub=number of dims, v.attr.align,
 *       b..c=`values`/`offsets` range (NF_OFFSETS), d=`tolerance` (a number literal)
 *   LET name, a=type (0), b=init | VAR name, a=type, b=init (0)
 *   SHARED name, a=TYPE, v.attr.swizzle, v.attr.align
 *   REG name, a=TYPE, b=init (0), v.attr.layout/scope (flags NF_HAS_LAYOUT/NF_HAS_SCOPE)
 *   MBARRIER name, a=array length (0: a single barrier), b=arrival count
 *   PIPELINE name, a=stages, b=NAME of producer role, c=NAME of consumer role
 *   ROLE name, sub=Unit, a=first unit, b=end unit (0: just a), c=regs (0), d=BLOCK
 *   BLOCK list=statements | REFERENCE a=BLOCK
 *   ASSIGN a=lvalue (NAME or INDEX), b=value, sub=compound op (NONE ADD SUB MUL DIV MAX MIN)
 *   FOR name=loop variable (the node declares it), a=lo, b=hi, c=step (0: 1), d=BLOCK,
 *       v.attr.unroll
 *   IF a=cond, b=BLOCK, c=else: BLOCK, or IF with NF_ELSEIF, or 0
 *   EXPRSTMT a=call | STORE a=ref, b=value, c=mask | CP_ASYNC a=dst, b=src, c=mask
 *   CP_WAIT, TMA_WAIT, WGMMA_WAIT a=count | TMA_LOAD a=dst, b=src, c=mbarrier
 *   TMA_STORE a=dst, b=src, sub=1: `tma.store.add` | STMATRIX a=dst, b=value | BAR_SYNC, BAR_ARRIVE a=id, b=count
 *   MB_ARRIVE a=bar | MB_EXPECT a=bar, b=bytes | MB_WAIT a=bar, b=parity
 *   MMA, WGMMA, MFMA a=accumulator, b=lhs, c=rhs
 * Name resolution sets NAME.decl to the declaring node (PARAM, DIM, ARG, LET,
 * VAR, SHARED, REG, MBARRIER, PIPELINE, ROLE, FOR, SUM). In a reference block (and
 * in tile-wide elementwise assignments of the schedule), an
 * undeclared name used as a whole index of an assignment's left side is an
 * implicit index over that dimension: that first NAME node declares itself
 * (decl = its own id, flag NF_IMPLICIT) and later uses resolve to it. The
 * value of a tile store declares them the same way where it indexes a
 * distributed register tile (`store C[..] <- bf16(acc[r, c]) mask ...`); the
 * value and the mask use them.
 */
typedef struct Node {
    uint16_t op;        /* Op */
    uint16_t sub;       /* ASSIGN: compound op (OP_ADD.. or OP_NONE); SPECIAL: SpecialReg;
                           TMA_STORE, L_TMA_STORE: 1 for `tma.store.add` (a reduction);
                           ROLE: Unit; TYPE: 1 when it has dims (a tile/tensor type) */
    uint8_t dtype;      /* TYPE/CAST/literals: DType */
    uint8_t lanes;      /* TYPE/CAST: vector lanes (1 = scalar) */
    uint16_t flags;     /* NF_* */
    Span span;
    NodeId a, b, c, d;  /* children, meaning per op (see ops.h) */
    uint32_t list, n;   /* operand list: Kernel.lists[list .. list + n) */
    Sym name;           /* declared or referenced name; FIELD member */
    NodeId decl;        /* NAME: its declaration after resolution */
    TypeId type;        /* filled by the verifier */
    union { int64_t i; double f; Attr attr; } v;
} Node;

enum { /* node flags */
    NF_ERROR = 1 << 0,    /* a diagnostic was already reported on this node */
    NF_HAS_LAYOUT = 1 << 1,
    NF_HAS_SCOPE = 1 << 2,
    NF_HAS_STEP = 1 << 3,
    NF_PAREN = 1 << 4,    /* written in parentheses (printer keeps them) */
    NF_ELSEIF = 1 << 5,
    NF_IMPLICIT = 1 << 6, /* implicit index variable (reference, tile assignment, tile store) */
    NF_WORKSPACE = 1 << 7, /* GTYPE: `workspace`, zero on entry and left zero (docs/tir.md 4.2) */
    NF_OFFSETS = 1 << 8,   /* GTYPE: the range b .. c was written `offsets`: sequence offsets */
    NF_FRESH = 1 << 9,     /* SPECIAL thread.x: read where it stands (an element's coordinates:
                              the code generator keeps it, and what is computed from it, in the
                              loop instead of hoisting one value per element out of it) */
    NF_NOHOIST = 1 << 10,  /* FOR: `nohoist`: no loop-invariant code moved out of it (docs/tir.md) */
    NF_FRESH_LOOP = 1 << 11 /* FOR: `fresh`: the element coordinates of the statements in its
                              body read thread.x where they stand (NF_FRESH; docs/tir.md 10.1) */
};

/* A resolved type (verifier output). */
#define IR_MAX_RANK 4
typedef struct {
    uint8_t kind;       /* TK_* */
    uint8_t dtype;      /* DType of elements */
    uint8_t lanes;      /* vector lanes; 1 for scalars and tiles */
    uint8_t space;      /* Space */
    uint8_t layout;     /* Layout (reg tiles) */
    uint8_t scope;      /* Scope (reg tiles) */
    uint8_t rank;       /* 0 for scalars/vectors */
    uint8_t transposed; /* a ^T view */
    uint16_t swizzle;
    uint16_t align;
    int64_t shape[IR_MAX_RANK];   /* constant extents; -1 when symbolic */
    NodeId dims[IR_MAX_RANK];     /* the expression of each extent */
} Type;

typedef enum { TK_UNKNOWN, TK_VOID, TK_SCALAR, TK_VECTOR, TK_TENSOR, TK_TILE,
               TK_MBARRIER, TK_PIPELINE, TK_ROLE, TK_STAGE } TypeKind;

typedef struct { Sym name; int64_t value; Span span; } ShapeDefault;

/* Attributes of the lowered tensor-core ops (L_MMA, L_WGMMA), packed into
 * Node.v.i by ir_tc_pack. */
typedef struct {
    uint16_t m, n, k;     /* instruction shape */
    uint8_t ab, acc;      /* DType of A/B and of the accumulator */
    uint8_t a_regs;       /* wgmma: A comes from registers (the list holds its elements) */
    uint8_t tnsp_a, tnsp_b; /* wgmma: operand is MN-major in shared memory */
    uint8_t b_dt;         /* DType of B when it differs from A (fp8 mixes), else DT_NONE */
    uint8_t fresh;        /* wgmma: D = A * B (scale-d 0), the accumulator's old value unread */
} IrTc;
int64_t ir_tc_pack(IrTc t);
IrTc ir_tc_unpack(int64_t v);

/* A block reduction inside a role (set by the roles pass in Node.v.i of the
 * REDUCE.block node): it synchronizes the role's warps only, with named
 * barrier `barrier` (0: the whole block, barrier 0). */
typedef struct { uint32_t first_warp, nwarps, barrier; } IrRoleRed;
static inline int64_t ir_role_red_pack(IrRoleRed r)
{
    return (int64_t)((uint64_t)r.first_warp | (uint64_t)r.nwarps << 16 | (uint64_t)r.barrier << 32);
}
static inline IrRoleRed ir_role_red_unpack(int64_t v)
{
    IrRoleRed r = {(uint32_t)(v & 0xffff), (uint32_t)(v >> 16 & 0xffff), (uint32_t)(v >> 32 & 0xff)};
    return r;
}

/* The launch plan of a lowered kernel (passes/abi.c): where every shared
 * declaration lives in the one shared-memory buffer, the tensor maps passed
 * as parameters, and the register budget. Codegen and the runtime read it. */
typedef struct {
    NodeId decl;          /* SHARED, MBARRIER or a block reduction's node */
    uint32_t offset;      /* bytes from the start of the buffer */
    uint32_t bytes, align;
} SmemSlot;

/* One kernel parameter, in the order of the kernel ABI (codegen/cg.h): every
 * `arg` in declaration order (a global tensor as a pointer, a scalar by
 * value), then every dim of Kernel.dims as i32, then every tensor map of the
 * plan. `index` counts within the kind: the tensor's place among the tensor
 * arguments (the `tensors` of cake_launch), the scalar's among the scalars,
 * the dim's in Kernel.dims, the map's in KPlan.tmaps. The abi pass
 * (passes/abi.c) writes this list; codegen declares the function from it and
 * the runtime fills it: the one home of the order. */
typedef enum { KP_TENSOR, KP_SCALAR, KP_DIM, KP_TMAP } KParamKind;
typedef struct {
    uint8_t kind;         /* KParamKind */
    uint32_t index;
    NodeId decl;          /* the ARG, DIM or L_TMAP node */
} KParam;

typedef struct KPlan {
    KParam *params; uint32_t nparams;   /* the ABI order (above) */
    SmemSlot *smem; uint32_t nsmem;
    uint32_t smem_bytes;      /* the buffer's size (dynamic shared memory on NVIDIA) */
    NodeId *tmaps; uint32_t ntmaps;   /* L_TMAP declarations, in parameter order */
    uint32_t block_threads;
    uint32_t maxnreg;         /* register cap at entry (setmaxnreg kernels), 0 = none */
} KPlan;

typedef struct Kernel {
    Sym name;
    Span span;           /* the kernel keyword .. its name */
    Span end_span;       /* the closing brace */
    NodeId *params;   uint32_t nparams;   /* OP_PARAM */
    NodeId *args;     uint32_t nargs;     /* OP_ARG */
    NodeId *dims;     uint32_t ndims;     /* OP_DIM: symbolic dims in order of appearance */
    NodeId *assumes;  uint32_t nassumes;  /* expressions */
    NodeId grid[3];   uint32_t ngrid;
    NodeId block_size;                    /* expression; 0 if absent */
    uint8_t block_unit;                   /* Unit */
    Span block_span;
    uint8_t targets[TG__COUNT]; uint32_t ntargets; Span target_span;
    Span target_spans[TG__COUNT];
    ShapeDefault *shapes; uint32_t nshapes;
    NodeId body;                          /* OP_BLOCK */
    NodeId reference;                     /* OP_BLOCK or 0 */
    Node *nodes;      uint32_t nnodes, capnodes;
    NodeId *lists;    uint32_t nlists, caplists;
    Type *types;      uint32_t ntypes, captypes;
    uint8_t level;                        /* IR_LEVEL_* */
    uint8_t types_bound;                  /* Node.type describes a `check --set` binding, not
                                             the defaults (verifier/params.c) */
    KPlan *plan;                          /* the launch plan (TIR-L), or NULL */
    uint32_t *type_map; uint32_t type_cap, type_mapped; /* ir_type_intern's index */
} Kernel;

enum { IR_LEVEL_TIR, IR_LEVEL_LOWERED };

typedef struct Module {
    Kernel **kernels; uint32_t nkernels;
    uint32_t file;                        /* source file id */
} Module;

/* ---- arena ----------------------------------------------------------- */
typedef struct ArenaBlock ArenaBlock;
/* the blocks of freed arenas, kept for the next ones (arena.c): owned by a caller
   that compiles many times in one process, given to its contexts (ctx_new_pooled);
   not locked: the contexts of one pool live on one thread */
typedef struct ArenaPool ArenaPool;
typedef struct {
    ArenaBlock *head; size_t used_total;
    struct CakeCtx *owner;   /* out of memory is ir_bug(owner): set by ctx_new */
    ArenaPool *pool;         /* where blocks come from and go back to; NULL: calloc and free */
} Arena;
void *arena_alloc(Arena *a, size_t size);              /* zeroed, 16-aligned */
/* 16-aligned, NOT zeroed (a reused block's old bytes): for arrays whose every
   element is written before it is read (the kernel's nodes and lists) */
void *arena_alloc_raw(Arena *a, size_t size);
void *arena_realloc(Arena *a, void *p, size_t old, size_t size);
/* p holds *cap elements of elem bytes: makes room for `need` of them, doubling
 * the capacity (from 16); returns the array (moved, or p); the new room zero */
void *arena_grow(Arena *a, void *p, uint32_t *cap, uint32_t need, size_t elem);
void *arena_grow_raw(Arena *a, void *p, uint32_t *cap, uint32_t need, size_t elem); /* room not zeroed */
char *arena_strndup(Arena *a, const char *s, size_t n);
void arena_free(Arena *a);       /* every block back to the pool (or to free()); the arena is empty */
enum { ARENA_POOL_KEEP = 256 << 20 };   /* a pool's default bound: blocks past it go to free() */
ArenaPool *arena_pool_new(size_t keep);   /* keep: the most bytes it holds (0: ARENA_POOL_KEEP); NULL: no memory */
void arena_pool_free(ArenaPool *p);       /* after every arena drawing on it was freed */
size_t arena_pool_bytes(const ArenaPool *p);   /* the bytes it holds now */

/* ---- interning ------------------------------------------------------- */
typedef struct {
    char **strs; uint32_t *lens; uint32_t n, cap;   /* id -> string (id 0 = "") */
    uint32_t *table; uint32_t tcap;                 /* open addressing: ids */
} Interner;
Sym ir_intern(struct CakeCtx *ctx, const char *s, size_t n);
Sym ir_intern_cstr(struct CakeCtx *ctx, const char *s);
const char *ir_symstr(const struct CakeCtx *ctx, Sym s);

/* ---- sources and diagnostics ---------------------------------------- */
typedef struct {
    const char *path;
    const char *text; uint32_t len;
    uint32_t *line_starts; uint32_t nlines;
} SourceFile;

typedef enum { SEV_ERROR, SEV_WARNING, SEV_NOTE } Severity;

typedef struct { Span span; const char *msg; } DiagNote;
typedef struct { Span span; const char *replacement; const char *applicability; } DiagFixit;

typedef struct Diag {
    uint16_t code;        /* DiagCode */
    uint8_t severity;
    Span span;
    const char *msg;
    DiagNote *notes; uint32_t nnotes;
    const char **helps; uint32_t nhelps;
    DiagFixit *fixits; uint32_t nfixits;
} Diag;

typedef enum {
#define DIAG(code, sev, title) code,
#include "diagcodes.h"
#undef DIAG
    DIAG__COUNT
} DiagCode;

typedef struct { const char *code; uint8_t severity; const char *title; } DiagInfo;
extern const DiagInfo ir_diag_info[DIAG__COUNT];

/* ---- the context: one per compilation (or per agent candidate) -------- */
typedef struct CakeCtx {
    Arena arena;                 /* everything of this compilation */
    Interner names;
    SourceFile *files; uint32_t nfiles;
    Diag *diags; uint32_t ndiags, capdiags;
    uint32_t nerrors, nwarnings;
    uint32_t max_errors;         /* stop collecting after this many (0 = 200) */
    Diag diag_sink;              /* what diag_report returns past max_errors */
    jmp_buf *bug_jmp;            /* set by library entry points: ir_bug longjmps here */
    const char *bug_msg;         /* the last bug's message (bug_text), NULL if none */
    char bug_text[512];          /* not in the arena: out of memory is a bug too */
    const char *dump_after;      /* pass name to dump IR after ("all" for every pass) */
    FILE *dump_out;
    int lcheck;                  /* check the lowered IR after every pass (tests, debug) */
    int defer_coverage;          /* set by lib/instance.c while it verifies a binding for the
                                    bound stage: the output coverage check (the costly one)
                                    runs when the instance is lowered, before any code exists */
    struct LibInstances *instances;   /* lib/instance.c's cache of kernel instances (in the
                                         arena; NULL until the first) */
} CakeCtx;

CakeCtx *ctx_new(void);          /* NULL when out of memory */
/* a context whose arena draws its blocks from pool and gives them back at
   ctx_free (NULL: ctx_new): the caller owns the pool and frees it after its
   contexts; compiling many variants in turn then reuses warm pages */
CakeCtx *ctx_new_pooled(ArenaPool *pool);
void ctx_free(CakeCtx *ctx);

uint32_t ctx_add_file(CakeCtx *ctx, const char *path, const char *text, uint32_t len);
void span_linecol(const CakeCtx *ctx, Span s, uint32_t *line, uint32_t *col,
                  uint32_t *end_line, uint32_t *end_col);   /* 1-based; end_col exclusive */
Span span_join(Span a, Span b);

Diag *diag_report(CakeCtx *ctx, DiagCode code, Span span, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void diag_note(CakeCtx *ctx, Diag *d, Span span, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void diag_help(CakeCtx *ctx, Diag *d, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void diag_fixit(CakeCtx *ctx, Diag *d, Span span, const char *replacement);
/* drops each note from index `first` on that repeats an earlier diagnostic (same code, place,
   message and notes): a kernel checked at several bindings reports its notes once each time */
void diag_drop_repeated_notes(CakeCtx *ctx, uint32_t first);
void diag_print_text(const CakeCtx *ctx, FILE *out, int color);
char *ir_fmt(CakeCtx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *ir_vfmt(CakeCtx *ctx, const char *fmt, va_list ap);

/* An internal invariant failed: a compiler bug. Records the message in
 * ctx->bug_msg and longjmps to ctx->bug_jmp, which every libcake entry point
 * (lib/protect.h) and the driver set: the call returns 2 and the process lives
 * on. Only code called without an entry point around it (a unit test calling a
 * stage directly) gets the old behaviour: the message on stderr and exit 2. */
_Noreturn void ir_bug(CakeCtx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define IR_ASSERT(ctx, cond) \
    do { if (!(cond)) ir_bug((ctx), "%s:%d: assertion failed: %s", __FILE__, __LINE__, #cond); } while (0)

/* ---- building kernels ---------------------------------------------- */
/* 1 when kernel k lists target tg in its `target` clause, or lists none */
int ir_kernel_targets(const Kernel *k, Target tg);
/* 1 when argument i (index into k->args) is declared `workspace`: the caller
 * passes it zero-filled and the kernel leaves it zero-filled (docs/tir.md 4.2) */
int ir_arg_workspace(const Kernel *k, uint32_t i);
/* 1 when argument i declares `offsets LO .. HI`: its elements are the offsets of
 * sequences packed in one dim (cu_seqlens), drawn as such by the check (tir.md 4.2) */
int ir_arg_offsets(const Kernel *k, uint32_t i);
/* the factor argument i declares with `tolerance X` on the check's error bound
 * of that output (docs/checking.md "Tolerance"), or 0 when it declares none */
double ir_arg_tolerance(const Kernel *k, uint32_t i);
Kernel *ir_kernel_new(CakeCtx *ctx);
/* A deep copy of src in ctx's arena (nodes, lists, types, the header arrays;
 * node ids stay the same), to bind and lower without touching src: what an
 * instance (lib/cake.h) is built from. The launch plan is shared, not copied
 * (a verified kernel has none). */
Kernel *ir_kernel_clone(CakeCtx *ctx, const Kernel *src);
NodeId ir_node(CakeCtx *ctx, Kernel *k, Op op, Span span);   /* appends a zeroed node */
static inline Node *ir_get(Kernel *k, NodeId id) { return &k->nodes[id]; }
/* The kernel ABI's least alignment of a tensor base (tir.md 13): the verifier's
 * alignment proofs count on it and the runtime refuses a tensor without it. */
#define IR_ABI_TENSOR_ALIGN 16
/* the alignment a tensor of type `gtype` (a GTYPE node) has: its `align`, at least the ABI's */
static inline uint32_t ir_tensor_align(const Node *gtype)
{
    return gtype->v.attr.align > IR_ABI_TENSOR_ALIGN ? gtype->v.attr.align : IR_ABI_TENSOR_ALIGN;
}
uint32_t ir_list(CakeCtx *ctx, Kernel *k, const NodeId *items, uint32_t n); /* copies; returns start */
static inline NodeId ir_list_at(const Kernel *k, const Node *n, uint32_t i) { return k->lists[n->list + i]; }
/* a literal or a name with no children: a node the lowering's whole-body walks
 * (abi, unsupported, roles, the shared-memory plan) have nothing to do at, so
 * they skip the call for it (most operands of lowered code are such leaves, or
 * indices of them) */
static inline int ir_plain_leaf(const Node *n)
{
    return (n->op == OP_INT || n->op == OP_FLOAT || n->op == OP_BOOL || n->op == OP_NAME) &&
           !(n->a | n->b | n->c | n->d | n->n);
}
/* an index of a plain leaf by plain leaves (acc[3], x[i, 0]): nothing to do there either */
static inline int ir_plain_index(const Kernel *k, const Node *n)
{
    if (n->op != OP_INDEX || !n->a || n->a >= k->nnodes || !ir_plain_leaf(&k->nodes[n->a]) ||
        (n->b | n->c | n->d))
        return 0;
    for (uint32_t i = 0; i < n->n; i++) {
        NodeId x = k->lists[n->list + i];
        if (!x || x >= k->nnodes || !ir_plain_leaf(&k->nodes[x]))
            return 0;
    }
    return 1;
}
/* id is a child such a walk needs to call itself for */
static inline int ir_walk_child(const Kernel *k, NodeId id)
{
    if (!id || id >= k->nnodes)
        return 0;
    const Node *n = &k->nodes[id];
    return !ir_plain_leaf(n) && !ir_plain_index(k, n);
}
TypeId ir_type_add(CakeCtx *ctx, Kernel *k, const Type *t);   /* appends, even a duplicate */
/* The id of the type equal to *t (every field compared) in k, added when there is
 * none; types appended with ir_type_add are found too. Passes that create typed
 * nodes use this (or ir_type_scalar) so that one type has one id. */
TypeId ir_type_intern(CakeCtx *ctx, Kernel *k, const Type *t);
/* The interned value type dt (lanes 1: TK_SCALAR) or dt x lanes (TK_VECTOR). */
TypeId ir_type_scalar(CakeCtx *ctx, Kernel *k, DType dt, int lanes);
void ir_push_node_list(CakeCtx *ctx, NodeId **arr, uint32_t *n, NodeId id);

/* ---- printing ---------------------------------------------------------- */
/* Prints the module as TIR source; the output re-parses to the same IR. A
 * lowered kernel (Kernel.level == IR_LEVEL_LOWERED) prints as TIR-L, whose
 * @ops and plan comments are for reading only (docs/tirl.md). */
void ir_print_module(const CakeCtx *ctx, const Module *m, FILE *out);
void ir_print_kernel(const CakeCtx *ctx, const Kernel *k, FILE *out);
void ir_print_expr(const CakeCtx *ctx, const Kernel *k, NodeId e, FILE *out);

/* ---- small helpers --------------------------------------------------- */
int ir_lookup_dtype(const char *s, size_t n, DType *dt, uint8_t *lanes); /* "bf16x8" */
int ir_lookup_target(const char *s, size_t n, Target *t);
int ir_lookup_layout(const char *s, size_t n, Layout *l);
int ir_dtype_bytes(DType dt);   /* 0 for bool/none; fp8 = 1 */

/* ---- numfmt.c: the small float formats ---------------------------------- */
/* v rounded to dt (f32, tf32, bf16, f16, e4m3, e5m2) to nearest even; e4m3 and
 * e5m2 saturate to ±448 and ±57344 (inf too), as cvt.rn.satfinite does; other
 * dtypes: v */
double ir_float_round(DType dt, double v);
/* the bits of v rounded to dt (f16, e4m3, e5m2; 0 for other dtypes); a NaN is
 * the format's positive canonical NaN */
uint32_t ir_float_bits(DType dt, double v);
double ir_float_value(DType dt, uint32_t bits);   /* the inverse (f16, e4m3, e5m2) */

#endif
