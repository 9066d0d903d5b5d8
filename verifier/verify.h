/* verify.h — the static verifier: types and shapes, target capabilities,
 * resource budgets, TMA rules, the synchronization protocol and bounds.
 *
 * After ver_verify every expression node and every declaration carries a type
 * (Node.type, a TypeId into Kernel.types; 0 = unknown, after an error):
 *   literals, params, dims   the concrete type their context gave them
 *                            (untyped integers adapt to any integer or float
 *                            type, untyped floats to any float type; alone they
 *                            default to i32 / f32)
 *   thread.x .. threads      i32
 *   ARG                      TK_TENSOR (global) or the scalar type
 *   SHARED / REG tiles       TK_TILE with space, swizzle, layout, scope; Type.lanes > 1
 *                            for a per-thread array of vectors (`reg xs: f32x8[4]`)
 *   INDEX                    an element (scalar) or a view (tile/tensor with the
 *                            kept dims); ^T sets Type.transposed
 *   MBARRIER                 TK_MBARRIER (rank 1 for an array)
 *   PIPELINE                 TK_PIPELINE (shape[0] = stages); acquire()/wait()
 *                            give TK_STAGE with dims[0] = the PIPELINE node
 *   ROLE                     TK_ROLE;  FOR  the loop variable's type
 * An operand whose dtype is narrower than its node's (implicit widening, e.g.
 * bf16 * f32) is widened by the consumer. A float-typed node over i64-typed
 * children is an untyped integer constant used as a float (`x * (BM / 2)`):
 * fold it with ce_const_int and convert the value. */
#ifndef CAKE_VERIFY_H
#define CAKE_VERIFY_H
#include "ir.h"
#include "consteval.h"

/* Verifies every kernel of m (after fe_resolve) and fills Node.type. Reports
 * diagnostics into ctx; returns the number of errors found. */
uint32_t ver_verify(CakeCtx *ctx, Module *m);

/* Verifies one kernel; returns the number of errors it reported. */
uint32_t ver_kernel(CakeCtx *ctx, Kernel *k);

/* What `cakec check --set/--shape` binds (verifier/params.c): parameters fixed
 * to values (set; NULL: none), and a shape (dims bound to sizes) checked
 * beside the kernel's `shape` clause by the checks that evaluate at concrete
 * shapes (the sync simulations' first sample, bounds' concrete verdict). */
typedef struct VerBind {
    const CeEnv *set;
    const CeBinding *shape; uint32_t nshape;
} VerBind;

/* Verifies k under every combination of its parameters' declared values
 * (`<CAUSAL = 0 in {0, 1}>`; at most 64, E0007 past that), params in
 * bind->set fixed to their values (E0006 outside the declared values), and,
 * with bind->shape, at that shape too. Diagnostics reported by several
 * combinations are kept once; one that not all report carries a note naming
 * the values it occurs under. bind may be NULL. The default combination runs
 * last, so Node.type describes the default instance afterwards. Returns the
 * number of errors. ver_verify is this with bind NULL for every kernel. */
uint32_t ver_kernel_bound(CakeCtx *ctx, Kernel *k, const VerBind *bind);

/* Types k at its parameters' current values (Node.type, as ver_kernel
 * leaves it) without running the checks: for a binding the checks already
 * passed (ver_binding_checked). Returns the number of errors (none for such
 * a binding). */
uint32_t ver_kernel_types(CakeCtx *ctx, Kernel *k);

/* 1 when ver_kernel_bound(k, NULL), what `check` runs, verifies the
 * combination of parameter values that set gives (the others at their
 * defaults): every parameter set binds away from its default declares the
 * value (`in {..}`), and the combinations are not capped (E0007). */
int ver_binding_checked(CakeCtx *ctx, const Kernel *k, const CeEnv *set);

/* 1 when every parameter of k that set binds may take that value (its
 * declared values, when it declares some); 0 after E0006 (or E0009). */
int ver_set_allowed(CakeCtx *ctx, Kernel *k, const CeEnv *set);

/* The combinations of k's declared parameter values (`<CAUSAL = 0 in {0, 1}>`),
 * as `--set` specs ("CAUSAL=1,STAGES=2"; in ctx's arena), the default
 * combination last, at most max of them (the last max when there are more).
 * Returns how many (0: no parameter declares values). No diagnostics. */
uint32_t ver_param_combos(CakeCtx *ctx, Kernel *k, const char **out, uint32_t max);

/* ver_verify with bind applied to kernel `which` (the others: NULL) */
uint32_t ver_verify_bound(CakeCtx *ctx, Module *m, const Kernel *which, const VerBind *bind);

/* The type of node n (the "unknown" type, kind TK_UNKNOWN, when none). */
const Type *ver_type(const Kernel *k, NodeId n);

/* Bytes one TMA statement moves (box elements × dtype size): what an
 * mbarrier.expect_tx for it must count. -1 when not a TMA statement or when the
 * box is not constant. Valid after the type check. */
int64_t ver_tma_bytes(const CakeCtx *ctx, const Kernel *k, NodeId tma_stmt);

/* Bytes of shared memory a SHARED declaration takes (elements × dtype size,
 * rounded up to its alignment); -1 when not constant. */
int64_t ver_shared_bytes(const CakeCtx *ctx, const Kernel *k, NodeId shared_decl);

/* The synchronization-protocol and bounds checks (verifier/sync.c,
 * verifier/bounds.c); run after types, targets, resources and TMA. Each
 * returns the number of errors it reported. */
uint32_t ver_sync(CakeCtx *ctx, Kernel *k);
uint32_t ver_bounds(CakeCtx *ctx, Kernel *k);
uint32_t ver_coverage(CakeCtx *ctx, Kernel *k);   /* coverage.c */

/* The alignment proofs (verifier/align.c): every vector access, cp.async,
 * fragment store, ldmatrix/stmatrix and wgmma shared operand sits at an
 * address that is a multiple of its width (E0810, E0811). Returns the number
 * of errors it reported. */
uint32_t ver_align(CakeCtx *ctx, Kernel *k);

#endif
