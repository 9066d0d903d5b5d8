/* tcfamily.h — the tensor-core families, one row each: mma.sync, wgmma, MFMA
 * (and a row reserved for tcgen05). A row says what every pass needs to know
 * about a family without naming its ops: the source and lowered ops, the
 * scope that executes one instruction (a warp, a warpgroup of `group_warps`
 * warps, a wavefront) and its width from ir/targets, the fragment layouts of
 * C, A and B (ir/layout: ly_coord gives the thread and register of every
 * element — the semantics an executor reads), where A and B come from
 * (registers or shared-memory descriptors), how A/B elements pack into 32-bit
 * registers, the async protocol, the cost class, and the name of the shape
 * table in each target row (TargetInfo.tc[family]).
 *
 * The hooks of a family live with their layers, indexed by TcFamily (arrows
 * point down, so ir/ holds no function of a pass):
 *   passes/distribute_tc.c  dist_tc[]    a source statement -> lowered instructions
 *   passes/lcheck.c         lck_tc[]     the operand count of a lowered instruction
 *   analysis/cost_count.c   tc_family_unit   the cost unit (COST_TC_*) of a family
 *   codegen/cg_lower.c      cg_tc[]      a lowered instruction -> the target's hook
 * Adding a family is a row here, a shape table per target and those hooks. */
#ifndef CAKE_IR_TCFAMILY_H
#define CAKE_IR_TCFAMILY_H
#include "ir.h"
#include "layout.h"

typedef enum { TCF_NONE, TCF_MMA_SYNC, TCF_WGMMA, TCF_MFMA, TCF_TCGEN05, TCF__COUNT } TcFamily;

typedef enum { TCS_WARP, TCS_WARPGROUP, TCS_WAVEFRONT } TcScope;

/* where an operand comes from */
typedef enum {
    TCO_REG,          /* a register fragment of the family's layout */
    TCO_SMEM_DESC,    /* a shared-memory matrix descriptor (wgmma B) */
    TCO_REG_OR_SMEM,  /* either (wgmma A) */
    TCO_TMEM          /* tensor memory (tcgen05; not in TIR v1) */
} TcOperandSrc;

/* how an instruction completes */
typedef enum {
    TCA_NONE,              /* synchronous in the issuing scope (mma.sync, MFMA: the
                              hardware interlocks the accumulator registers) */
    TCA_FENCE_COMMIT_WAIT, /* fence before, commit group after, wait N (wgmma) */
    TCA_MBARRIER           /* commit to an mbarrier (tcgen05) */
} TcAsync;

typedef struct {
    uint8_t id;             /* TcFamily */
    const char *name;       /* "mma.sync", "wgmma", "MFMA" (messages) */
    uint16_t op;            /* the source statement: OP_MMA, OP_WGMMA, OP_MFMA */
    uint16_t lowered;       /* the TIR-L instruction: OP_L_MMA, OP_L_WGMMA, OP_L_MFMA */
    uint16_t wait;          /* the source wait statement (OP_WGMMA_WAIT), OP_NONE */
    uint16_t l_fence, l_commit, l_wait;  /* TCA_FENCE_COMMIT_WAIT: the lowered fence before an
                                            instruction, the commit after it, the wait */
    uint32_t feature;       /* the target feature bit (TF_*) */
    uint8_t scope;          /* TcScope */
    uint8_t group;          /* 1: one warp (wavefront) executes it; 0: TargetInfo.group_warps */
    uint8_t c, a, b;        /* Layout of the accumulator and of register A / B fragments
                               (LY_NONE: that operand is never in registers) */
    uint8_t a_src, b_src;   /* TcOperandSrc */
    uint8_t reg_bits;       /* A/B fragments pack 32/bits elements per register of this
                               width, lowest element in the low bits */
    uint8_t c_pack16;       /* a 16-bit accumulator packs element pairs (mma.sync f16) */
    uint8_t async;          /* TcAsync */
    uint8_t cost;           /* CostClass of one instruction (ir/ops.h CC_*) */
    const char *shape_fmt;  /* how a shape is spelled: "m%un%uk%u", "%ux%ux%u" */
    uint8_t fresh;          /* the instruction can ignore its accumulator's input (wgmma's
                               scale-d 0): the source form `acc = a * b` (IrTc.fresh) */
} TcFamilyInfo;

extern const TcFamilyInfo tc_families[TCF__COUNT];

static inline const TcFamilyInfo *tc_family(TcFamily f) { return &tc_families[f]; }
/* the family of a source tensor-core op (mma, wgmma, mfma, wgmma.wait) or of a
 * lowered one (L_MMA, L_WGMMA, L_MFMA, L_WG_FENCE/COMMIT/WAIT); TCF_NONE else */
TcFamily tc_family_of(Op op);
/* 1 when op is a family's source tensor-core statement (mma, wgmma, mfma) */
static inline int tc_is_source(Op op)
{
    TcFamily f = tc_family_of(op);
    return f != TCF_NONE && op == tc_families[f].op;
}
/* the family whose accumulator, A or B layout is l; TCF_NONE for rows / none */
TcFamily tc_family_of_layout(Layout l);

/* The operands of a lowered instruction (TIR-L, docs/tirl.md §6.5), in order:
 *   mma.sync, MFMA: C's elements, A's, B's;
 *   wgmma: A's descriptor (absent when A is in registers: IrTc.a_regs), B's
 *          descriptor, C's elements, then A's elements when a_regs.
 * The elements of one operand are its instruction fragment in canonical order:
 * element q that thread thr lists is (row, col) = ly_coord(&frag, thr, q) of the
 * instruction's C [m, n], A [m, k] or B [k, n], with frag from tc_fragment. That is
 * the whole semantics of the instruction: D[i][j] = C[i][j] + sum_k A[i][k] B[k][j]
 * over the scope's threads (tg_tc_scope_threads), which an executor of TIR-L reads
 * from these maps. */
typedef enum { TC_C, TC_A, TC_B } TcOperand;
/* Fills *frag with operand `which` of instruction t of family f on target tg (its
 * layout, dtype, shape and the target's warp width); 0 when that operand is not in
 * registers (wgmma B, wgmma A without a_regs) or f has no such layout. */
int tc_fragment(Target tg, TcFamily f, TcOperand which, IrTc t, LyTile *frag);

#endif
