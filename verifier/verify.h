/* verify.h — the static verifier: types and shapes, target capabilities,
 * resource budgets, TMA rules, the synchronization protocol and bounds. */
#ifndef CAKE_VERIFY_H
#define CAKE_VERIFY_H
#include "ir.h"

/* Verifies every kernel of m (after fe_resolve) and fills Node.type. Reports
 * diagnostics into ctx; returns the number of errors found. */
uint32_t ver_verify(CakeCtx *ctx, Module *m);

#endif
