/* fe.h — the frontend: lexing, parsing and name resolution. The pipeline that
 * runs it with the verifier is libcake's (lib/cake.h, cake_verify_file). */
#ifndef CAKE_FE_H
#define CAKE_FE_H
#include "ir.h"

/* Parses source file `file` (added with ctx_add_file) into a module. Never
 * returns NULL; on syntax errors the module holds what could be recovered and
 * diagnostics are in ctx. */
Module *fe_parse(CakeCtx *ctx, uint32_t file);

/* Resolves every NAME to its declaration (Node.decl); reports E02xx. Returns
 * the number of errors it reported. */
uint32_t fe_resolve(CakeCtx *ctx, Module *m);

#endif
