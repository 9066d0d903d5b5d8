/* ops.h — the one table of TIR operations.
 *
 * Every node of the IR carries one of these ops. The enum (ir.h), the
 * parser's keyword and builtin tables, the printer, the verifier's arity
 * checks and the cost model's classes all expand from this table.
 * ORDER OP: nothing depends on the order of the rows except OP_NONE first.
 *
 * OP(id, spelling, class, nargs, flags, cost)
 *   id        enum suffix: OP_<id>
 *   spelling  the source keyword/builtin name ("" when it has none)
 *   class     syntactic class (OC_*): how it is parsed and printed
 *   nargs     operand count for builtins/statements, -1 variadic
 *   flags     OF_* property bits
 *   cost      cost class (CC_*) for the cost model
 */

/* ---- leaves -------------------------------------------------------- */
OP(NONE,      "",            OC_LEAF,    0, 0,                  CC_FREE)
OP(INT,       "",            OC_LEAF,    0, OF_CONST,           CC_FREE)   /* lit.i */
OP(FLOAT,     "",            OC_LEAF,    0, OF_CONST,           CC_FREE)   /* lit.f */
OP(BOOL,      "",            OC_LEAF,    0, OF_CONST,           CC_FREE)   /* lit.i 0/1: true, false */
OP(NAME,      "",            OC_LEAF,    0, 0,                  CC_FREE)   /* name; decl after resolution */
OP(SPECIAL,   "",            OC_LEAF,    0, 0,                  CC_INT)    /* thread.x, block.y, lane, warp, wg: lit.i = SpecialReg */
OP(COLON,     ":",           OC_LEAF,    0, 0,                  CC_FREE)   /* a whole dimension in an index: x[:, 0] */

/* ---- binary operators (class OC_BIN; a, b) ------------------------- */
OP(ADD,       "+",           OC_BIN,     2, OF_ARITH,           CC_ALU)
OP(SUB,       "-",           OC_BIN,     2, OF_ARITH,           CC_ALU)
OP(MUL,       "*",           OC_BIN,     2, OF_ARITH,           CC_ALU)
OP(DIV,       "/",           OC_BIN,     2, OF_ARITH,           CC_DIV)
OP(MOD,       "%",           OC_BIN,     2, OF_ARITH,           CC_DIV)
OP(POW,       "^",           OC_BIN,     2, OF_ARITH,           CC_SFU)    /* x^2; reference blocks mostly */
OP(SHL,       "<<",          OC_BIN,     2, OF_INTONLY,         CC_INT)
OP(SHR,       ">>",          OC_BIN,     2, OF_INTONLY,         CC_INT)
OP(BAND,      "&",           OC_BIN,     2, OF_INTONLY,         CC_INT)
OP(BOR,       "|",           OC_BIN,     2, OF_INTONLY,         CC_INT)
OP(BXOR,      "xor",         OC_BIN,     2, OF_INTONLY,         CC_INT)    /* spelled a ~ b in source */
OP(LT,        "<",           OC_BIN,     2, OF_CMP,             CC_ALU)
OP(LE,        "<=",          OC_BIN,     2, OF_CMP,             CC_ALU)
OP(GT,        ">",           OC_BIN,     2, OF_CMP,             CC_ALU)
OP(GE,        ">=",          OC_BIN,     2, OF_CMP,             CC_ALU)
OP(EQ,        "==",          OC_BIN,     2, OF_CMP,             CC_ALU)
OP(NE,        "!=",          OC_BIN,     2, OF_CMP,             CC_ALU)
OP(AND,       "&&",          OC_BIN,     2, OF_LOGIC,           CC_ALU)
OP(OR,        "||",          OC_BIN,     2, OF_LOGIC,           CC_ALU)

/* ---- unary / postfix ----------------------------------------------- */
OP(NEG,       "-",           OC_UN,      1, OF_ARITH,           CC_ALU)
OP(NOT,       "!",           OC_UN,      1, OF_LOGIC,           CC_ALU)
OP(TRANS,     "^T",          OC_POST,    1, 0,                  CC_FREE)   /* a^T: transposed view of a 2-D tile */
OP(INDEX,     "",            OC_POST,   -1, 0,                  CC_FREE)   /* a[list]: element, slice or sub-tile */
OP(SLICE,     "",            OC_SLICE,   2, 0,                  CC_FREE)   /* a : +b  (start, extent) inside an index */
OP(FIELD,     ".",           OC_POST,    1, 0,                  CC_FREE)   /* a.name (pipeline members handled as calls) */
OP(CAST,      "",            OC_CAST,    1, 0,                  CC_CVT)    /* f32(x), bf16x8(v): dtype/lanes on node */
OP(SELECT,    "select",      OC_BUILTIN, 3, 0,                  CC_ALU)    /* select(c, a, b) */

/* ---- memory expressions -------------------------------------------- */
OP(LOAD,      "load",        OC_MEM,     1, OF_MEM,             CC_GLOAD)  /* load ref [as T] [mask c] */
OP(LDMATRIX,  "ldmatrix",    OC_BUILTIN, 1, OF_MEM|OF_WARP,     CC_SLOAD)  /* ldmatrix(shared ref) -> mma fragment */
OP(LDMATRIX_T,"ldmatrix.trans", OC_BUILTIN, 1, OF_MEM|OF_WARP,  CC_SLOAD)
/* atomics on global memory (docs/tir.md 7.7). No node carries these two ops:
 * `atomic.add(ref, v) [mask c]` and `atomic.exch(ref, v) [mask c]` parse to a
 * LOAD (sub = the atomic op, c = the value: the old element is its result),
 * `atomic.add ref <- v [mask c]` to a STORE (sub = OP_ATOMIC_ADD, result
 * unused: `red`), so the typing, bounds, alignment and distribution of loads
 * and stores apply to them; the rows give the spellings and the cost class. */
OP(ATOMIC_ADD,"atomic.add",  OC_MEM,     2, OF_MEM,             CC_GSTORE) /* f32, i32, u32 */
OP(ATOMIC_EXCH,"atomic.exch", OC_MEM,    2, OF_MEM,             CC_GSTORE) /* f32, i32, u32 */

/* ---- math builtins (elementwise over scalars, vectors and tiles) ---- */
OP(EXP,       "exp",         OC_BUILTIN, 1, OF_MATH,            CC_SFU)
OP(EXP2,      "exp2",        OC_BUILTIN, 1, OF_MATH,            CC_SFU)
/* 2^x on the FMA and integer pipes, not the MUFU (codegen/cg_math.c: round to
 * an integer by the 1.5 * 2^23 trick, a degree-3 polynomial on [-1/2, 1/2],
 * the integer added to the exponent bits): max rel. error 1.0e-4 (2^-13.3),
 * exactly 0 below -125, NaN in -> NaN out; about 11 instructions */
OP(EXP2_FMA,  "exp2.fma",    OC_BUILTIN, 1, OF_MATH,            CC_ALU)
OP(LOG,       "log",         OC_BUILTIN, 1, OF_MATH,            CC_SFU)
OP(LOG2,      "log2",        OC_BUILTIN, 1, OF_MATH,            CC_SFU)
OP(SQRT,      "sqrt",        OC_BUILTIN, 1, OF_MATH,            CC_SFU)
OP(RSQRT,     "rsqrt",       OC_BUILTIN, 1, OF_MATH,            CC_SFU)
OP(RCP,       "rcp",         OC_BUILTIN, 1, OF_MATH,            CC_SFU)
OP(TANH,      "tanh",        OC_BUILTIN, 1, OF_MATH,            CC_SFU)
OP(SIN,       "sin",         OC_BUILTIN, 1, OF_MATH,            CC_SFU)
OP(COS,       "cos",         OC_BUILTIN, 1, OF_MATH,            CC_SFU)
OP(ABS,       "abs",         OC_BUILTIN, 1, OF_MATH,            CC_ALU)
OP(MAX,       "max",         OC_BUILTIN, 2, OF_MATH,            CC_ALU)    /* also max(k in a..b, e) in reference */
OP(MIN,       "min",         OC_BUILTIN, 2, OF_MATH,            CC_ALU)    /* also min(k in a..b, e) in reference */
OP(FMA,       "fma",         OC_BUILTIN, 3, OF_MATH,            CC_ALU)
OP(CDIV,      "cdiv",        OC_BUILTIN, 2, OF_INTONLY,         CC_INT)    /* ceil(a / b) for integers */
OP(DOT,       "dot",         OC_BUILTIN, 2, OF_MATH,            CC_ALU)    /* vector dot product -> scalar (f32) */
OP(HSUM,      "hsum",        OC_BUILTIN, 1, OF_MATH,            CC_ALU)    /* horizontal sum of a vector */
OP(HMAX,      "hmax",        OC_BUILTIN, 1, OF_MATH,            CC_ALU)    /* horizontal max of a vector */
OP(HMIN,      "hmin",        OC_BUILTIN, 1, OF_MATH,            CC_ALU)    /* horizontal min of a vector */

/* ---- reference-only reductions: sum(k in a..b, e) ------------------- */
OP(SUM,       "sum",         OC_RED,     3, OF_REFONLY,         CC_ALU)    /* sum(k in a..b, c): name = k */
OP(RMAX,      "max",         OC_RED,     3, OF_REFONLY,         CC_ALU)    /* max(k in a..b, e) */
OP(RMIN,      "min",         OC_RED,     3, OF_REFONLY,         CC_ALU)    /* min(k in a..b, e) */

/* ---- cross-thread communication ------------------------------------ */
OP(SHFL_XOR,  "shfl.xor",    OC_BUILTIN, 2, OF_WARP,            CC_SHFL)
OP(SHFL_DOWN, "shfl.down",   OC_BUILTIN, 2, OF_WARP,            CC_SHFL)
OP(SHFL_UP,   "shfl.up",     OC_BUILTIN, 2, OF_WARP,            CC_SHFL)
OP(SHFL_IDX,  "shfl.idx",    OC_BUILTIN, 2, OF_WARP,            CC_SHFL)
OP(WARP_ADD,  "reduce.warp.add", OC_BUILTIN, 1, OF_WARP,        CC_SHFL)
OP(WARP_MAX,  "reduce.warp.max", OC_BUILTIN, 1, OF_WARP,        CC_SHFL)
OP(WARP_MIN,  "reduce.warp.min", OC_BUILTIN, 1, OF_WARP,        CC_SHFL)
OP(BLOCK_ADD, "reduce.block.add", OC_BUILTIN, 1, OF_BLOCK,      CC_BAR)
OP(BLOCK_MAX, "reduce.block.max", OC_BUILTIN, 1, OF_BLOCK,      CC_BAR)
OP(BLOCK_MIN, "reduce.block.min", OC_BUILTIN, 1, OF_BLOCK,      CC_BAR)

/* ---- tile reductions: row-wise (over columns) and column-wise ------ */
OP(ROWSUM,    "rowsum",      OC_BUILTIN, 1, OF_TILE,            CC_SHFL)   /* T[R,C] -> T[R] */
OP(ROWMAX,    "rowmax",      OC_BUILTIN, 1, OF_TILE,            CC_SHFL)
OP(ROWMIN,    "rowmin",      OC_BUILTIN, 1, OF_TILE,            CC_SHFL)
OP(COLSUM,    "colsum",      OC_BUILTIN, 1, OF_TILE,            CC_SHFL)   /* T[R,C] -> T[C] */
OP(COLMAX,    "colmax",      OC_BUILTIN, 1, OF_TILE,            CC_SHFL)
OP(COLMIN,    "colmin",      OC_BUILTIN, 1, OF_TILE,            CC_SHFL)

/* ---- pipeline members: ring.acquire() etc. (a = pipeline name) ----- */
OP(P_ACQUIRE, "acquire",     OC_PIPE,    0, OF_SYNC,            CC_BAR)    /* producer: wait slot empty, -> stage */
OP(P_COMMIT,  "commit",      OC_PIPE,    1, OF_SYNC,            CC_BAR)    /* producer: arrive full(s) (non-TMA) */
OP(P_WAIT,    "wait",        OC_PIPE,    0, OF_SYNC,            CC_BAR)    /* consumer: wait slot full, -> stage */
OP(P_RELEASE, "release",     OC_PIPE,    1, OF_SYNC,            CC_BAR)    /* consumer: arrive empty(s) */
OP(P_FULL,    "full",        OC_PIPE,    1, 0,                  CC_FREE)   /* the full mbarrier of stage s */
OP(P_EMPTY,   "empty",       OC_PIPE,    1, 0,                  CC_FREE)   /* the empty mbarrier of stage s */

/* ---- declarations (statements that bind a name) -------------------- */
OP(PARAM,     "",            OC_DECL,    1, 0,                  CC_FREE)   /* <NAME = a> compile-time int */
OP(DIM,       "",            OC_DECL,    0, 0,                  CC_FREE)   /* symbolic dim, bound by an arg shape */
OP(ARG,       "arg",         OC_DECL,    1, 0,                  CC_FREE)   /* arg NAME: a=type */
OP(LET,       "let",         OC_DECL,    2, 0,                  CC_FREE)   /* let NAME [: a] = b */
OP(VAR,       "var",         OC_DECL,    2, 0,                  CC_FREE)   /* var NAME : a [= b] */
OP(SHARED,    "shared",      OC_DECL,    1, OF_SMEM,            CC_FREE)   /* shared NAME: a [swizzle N] */
OP(REG,       "reg",         OC_DECL,    2, 0,                  CC_FREE)   /* reg NAME: a [layout L] [scope S] [= b] */
OP(MBARRIER,  "mbarrier",    OC_DECL,    2, OF_SYNC,            CC_FREE)   /* mbarrier NAME[a] count b */
OP(PIPELINE,  "pipeline",    OC_DECL,    1, OF_SYNC,            CC_FREE)   /* pipeline NAME: a stages from role P to role C */
OP(ROLE,      "role",        OC_DECL,    3, 0,                  CC_FREE)   /* role NAME: unit a..b [, regs c] block */

/* ---- types (syntactic) --------------------------------------------- */
OP(TYPE,      "",            OC_TYPE,   -1, 0,                  CC_FREE)   /* dtype [x lanes] [list = dims] */
OP(GTYPE,     "global",      OC_TYPE,   -1, 0,                  CC_FREE)   /* global dtype[dims] [strides..] [align] [values b .. c] */

/* ---- statements ---------------------------------------------------- */
OP(BLOCK,     "",            OC_STMT,   -1, 0,                  CC_FREE)   /* { list } */
OP(REFERENCE, "reference",   OC_STMT,    1, 0,                  CC_FREE)   /* reference a=block */
OP(ASSIGN,    "=",           OC_STMT,    2, 0,                  CC_ALU)    /* a = b ; flags: compound op */
OP(FOR,       "for",         OC_STMT,    4, 0,                  CC_FREE)   /* for NAME in a .. b [step c] [unroll] d */
OP(IF,        "if",          OC_STMT,    3, 0,                  CC_BRANCH) /* if a b=block [else c] */
OP(EXPRSTMT,  "",            OC_STMT,    1, 0,                  CC_FREE)   /* a call used as a statement */
OP(STORE,     "store",       OC_STMT,    2, OF_MEM,             CC_GSTORE) /* store a <- b [mask c] */
OP(CP_ASYNC,  "cp.async",    OC_STMT,    2, OF_MEM|OF_ASYNC,    CC_GLOAD)  /* cp.async a(shared) <- b(global) [mask c] */
OP(CP_COMMIT, "cp.async.commit", OC_STMT, 0, OF_ASYNC,          CC_FREE)
OP(CP_WAIT,   "cp.async.wait", OC_STMT,  1, OF_ASYNC|OF_SYNC,   CC_BAR)    /* cp.async.wait N */
OP(TMA_LOAD,  "tma",         OC_STMT,    3, OF_MEM|OF_ASYNC,    CC_TMA)    /* tma a(shared) <- b(global) on c(mbarrier) */
OP(TMA_STORE, "tma.store",   OC_STMT,    2, OF_MEM|OF_ASYNC,    CC_TMA)    /* tma.store a(global) <- b(shared) */
OP(TMA_WAIT,  "tma.store.wait", OC_STMT, 1, OF_ASYNC|OF_SYNC,   CC_BAR)    /* wait until <= N bulk stores pending */
OP(TMA_STORE_ADD, "tma.store.add", OC_STMT, 2, OF_MEM|OF_ASYNC, CC_TMA) /* only a spelling: parsed as TMA_STORE, sub 1 (adds) */
OP(STMATRIX,  "stmatrix",    OC_STMT,    2, OF_MEM|OF_WARP,     CC_SSTORE) /* stmatrix a(shared) <- b(fragment) */
OP(SYNC,      "sync",        OC_STMT,    0, OF_SYNC|OF_BLOCK,   CC_BAR)    /* block barrier */
OP(BAR_SYNC,  "barrier",     OC_STMT,    2, OF_SYNC,            CC_BAR)    /* barrier ID, COUNT (named, sync) */
OP(BAR_ARRIVE,"barrier.arrive", OC_STMT, 2, OF_SYNC,            CC_BAR)    /* barrier.arrive ID, COUNT */
OP(MB_ARRIVE, "mbarrier.arrive", OC_STMT, 1, OF_SYNC,           CC_BAR)    /* mbarrier.arrive bar */
OP(MB_EXPECT, "mbarrier.expect_tx", OC_STMT, 2, OF_SYNC,        CC_BAR)    /* mbarrier.expect_tx bar, BYTES */
OP(MB_WAIT,   "mbarrier.wait", OC_STMT,  2, OF_SYNC,            CC_BAR)    /* mbarrier.wait bar, PARITY */
OP(FENCE_PROXY, "fence.proxy.async", OC_STMT, 0, OF_SYNC,       CC_FREE)
OP(FENCE,     "fence",       OC_STMT,    0, OF_SYNC,            CC_FREE)   /* fence (memory fence, block scope) */
OP(FENCE_GPU, "fence.gpu",   OC_STMT,    0, OF_SYNC,            CC_BAR)    /* fence.acq_rel.gpu: orders this thread's global
                                                                              accesses for other blocks (7.7) */
OP(MMA,       "mma",         OC_STMT,    3, OF_TC|OF_WARP,      CC_MMA)    /* mma a += b * c */
OP(WGMMA,     "wgmma",       OC_STMT,    3, OF_TC|OF_ASYNC,     CC_WGMMA)  /* wgmma a += b * c */
OP(WGMMA_WAIT,"wgmma.wait",  OC_STMT,    1, OF_TC|OF_SYNC,      CC_BAR)    /* wgmma.wait N */
OP(MFMA,      "mfma",        OC_STMT,    3, OF_TC|OF_WARP,      CC_MFMA)   /* mfma a += b * c */
OP(RETURN,    "return",      OC_STMT,    0, 0,                  CC_FREE)   /* leave the kernel (this thread) */

/* ==== TIR-L: the lowered level (docs/tirl.md) =========================
 * Produced by the lowering passes (passes/pipeline.c), never by the parser;
 * printed as `@spelling(operands)` (print-only: TIR-L does not re-parse).
 * Every operand is in `list`; immediate attributes are in sub / v.i (see
 * the per-row comment and ir.h's IrTc). Spellings have no dots, so the
 * lexer never mistakes them for source builtins. */
/* ---- mbarriers (bar: an L_SADDR of an mbarrier element) ------------ */
OP(L_MBAR_INIT,   "mbar_init",      OC_LOW, 2, OF_LSTMT|OF_SYNC,  CC_FREE)   /* (bar, count) */
OP(L_MBAR_FENCE,  "fence_mbar_init", OC_LOW, 0, OF_LSTMT|OF_SYNC, CC_FREE)   /* fence.mbarrier_init */
OP(L_MBAR_ARRIVE, "mbar_arrive",    OC_LOW, 1, OF_LSTMT|OF_SYNC,  CC_BAR)    /* (bar): this thread arrives */
OP(L_MBAR_ARRIVE_TX, "mbar_arrive_tx", OC_LOW, 2, OF_LSTMT|OF_SYNC, CC_BAR)  /* (bar, bytes): arrive.expect_tx */
OP(L_MBAR_WAIT,   "mbar_wait",      OC_LOW, 2, OF_LSTMT|OF_SYNC,  CC_BAR)    /* (bar, parity): try_wait.parity loop */
OP(L_CP_MBAR_ARRIVE, "cp_async_mbar_arrive", OC_LOW, 1, OF_LSTMT|OF_SYNC, CC_BAR) /* (bar): .noinc, after this thread's cp.async */
OP(L_SYNCWARP,    "syncwarp",       OC_LOW, 0, OF_LSTMT|OF_SYNC,  CC_FREE)   /* bar.warp.sync -1 */
/* ---- bulk tensor copies (TMA); map: NAME of an L_TMAP -------------- */
OP(L_TMA_LOAD,    "tma_load",       OC_LOW, -1, OF_LSTMT|OF_MEM|OF_ASYNC, CC_TMA) /* (map, smem, bar, c0 ..): coords innermost first */
OP(L_TMA_STORE,   "tma_store",      OC_LOW, -1, OF_LSTMT|OF_MEM|OF_ASYNC, CC_TMA) /* (map, smem, c0 ..) */
OP(L_BULK_COMMIT, "bulk_commit",    OC_LOW, 0, OF_LSTMT|OF_ASYNC, CC_FREE)   /* cp.async.bulk.commit_group */
OP(L_BULK_WAIT,   "bulk_wait_read", OC_LOW, 1, OF_LSTMT|OF_SYNC,  CC_BAR)    /* (n): wait_group.read n */
/* ---- warpgroup MMA ------------------------------------------------- */
OP(L_WG_FENCE,    "wgmma_fence",    OC_LOW, 0, OF_LSTMT|OF_TC,    CC_FREE)
OP(L_WG_COMMIT,   "wgmma_commit",   OC_LOW, 0, OF_LSTMT|OF_TC,    CC_FREE)
OP(L_WG_WAIT,     "wgmma_wait",     OC_LOW, 1, OF_LSTMT|OF_TC|OF_SYNC, CC_BAR) /* (n) */
OP(L_WGMMA,       "wgmma",          OC_LOW, -1, OF_LSTMT|OF_TC,   CC_WGMMA)  /* (descA | 0, descB, d.., a..): v.i IrTc */
/* ---- warp MMA and fragment moves ------------------------------------ */
OP(L_MMA,         "mma",            OC_LOW, -1, OF_LSTMT|OF_TC,   CC_MMA)    /* (d.., a.., b..): v.i IrTc */
OP(L_MFMA,        "mfma",           OC_LOW, -1, OF_LSTMT|OF_TC,   CC_MFMA)   /* (d.., a.., b..): v.i IrTc; one wavefront */
OP(L_LDMATRIX,    "ldmatrix",       OC_LOW, -1, OF_LSTMT|OF_MEM,  CC_SLOAD)  /* (addr, dst..): sub = x1/x2/x4, v.i 1 = .trans */
OP(L_STMATRIX,    "stmatrix",       OC_LOW, -1, OF_LSTMT|OF_MEM,  CC_SSTORE) /* (addr, src..): sub = x1/x2/x4, v.i 1 = .trans */
/* ---- registers --------------------------------------------------------- */
OP(L_SETMAXNREG,  "setmaxnreg",     OC_LOW, 0, OF_LSTMT,          CC_FREE)   /* sub 1 = inc, 0 = dec; v.i = registers */
/* ---- expressions ------------------------------------------------------ */
OP(L_SADDR,       "saddr",          OC_LOW, -1, 0,                CC_INT)    /* u32 shared address: (ref) swizzled element, or
                                                                                sub 1: (NAME, byte offset) unswizzled from the base */
OP(L_WGDESC,      "wgmma_desc",     OC_LOW, 1, 0,                 CC_INT)    /* u64 descriptor of (saddr): v.i = lbo | sbo << 20 | swizzle << 40 */
OP(L_PACK,        "pack",           OC_LOW, -1, 0,                CC_FREE)   /* a vector of its scalar operands */
OP(L_LANE,        "lane",           OC_LOW, 1, 0,                 CC_FREE)   /* (vector): its lane v.i, a scalar */
/* ---- declarations ------------------------------------------------------ */
OP(L_TMAP,        "tensormap",      OC_LOW, -1, OF_LSTMT,         CC_FREE)   /* name; a = NAME of the tensor arg; list = box
                                                                                (innermost first); v.attr.swizzle */
