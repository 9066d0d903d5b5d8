/* fe.h — the frontend: lexing, parsing, name resolution, JSON diagnostics, driver. */
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

/* Renders all diagnostics of ctx as the JSON document of the CLI contract
 * (docs/diagnostics.md, "JSON format"); a malloc'd string: free() it. */
char *fe_diags_json(const CakeCtx *ctx, const char *command, int ok);
/* The same with the members of `extra` (a cJSON object, consumed; NULL: none)
 * added to the top-level object: a command's results, e.g. "check", "bench". */
char *fe_diags_json_with(const CakeCtx *ctx, const char *command, int ok, void *extra);

/* The compilation pipeline, one line per stage: parse, resolve, verify (and
 * later the passes and code generation). Stops after the first stage that
 * reports errors, or after the stage named `last` (NULL: run them all);
 * dumps the IR after the stage named by ctx->dump_after ("all": each). */
Module *fe_compile(CakeCtx *ctx, uint32_t file, const char *last);

/* Reads `path` into ctx as a source file; reports E0001 and returns
 * UINT32_MAX if it cannot. */
uint32_t fe_load_file(CakeCtx *ctx, const char *path);

/* The cakec command line (frontend/main.c calls it). Returns the exit code:
 * 0 ok, 1 the input is wrong, 2 internal error, 3 device problem. */
struct FeBackend;
/* The cakec command line; `be` runs the commands past `check` (driver.h). */
int fe_main(int argc, char **argv, const struct FeBackend *be);

void fe_json_delete(void *json);   /* cJSON_Delete for files without cJSON */

#endif
