/* driver.h — the cakec command line's options, shared by the driver's files. */
#ifndef CAKE_DRIVER_H
#define CAKE_DRIVER_H
#include "ir.h"

enum { EXIT_OK = 0, EXIT_USER = 1, EXIT_BUG = 2, EXIT_DEVICE = 3 };

struct FeBackend;

typedef struct {
    const struct FeBackend *be; /* the commands past `check`; NULL: not built in */
    char **argv;
    const char *command;     /* check, print, compile, cost, run */
    const char *file;
    const char *out, *target, *emit, *shape, *set, *reference;
    const char *kernel, *timeout, *runs, *seed;
    int json, check, bench;
    const char *dump_after;
} Options;

/* prints the diagnostics (text or the JSON document) and returns code */
int drv_finish(CakeCtx *ctx, const Options *o, int code);
/* prints the diagnostics with `extra` (a cJSON object, consumed; may be NULL)
 * merged into the JSON document */
int drv_finish_with(CakeCtx *ctx, const Options *o, int code, void *extra);

/* The commands that need LLVM or a device. `cakec` (main_check.c) carries no
 * LLVM, so that `check` starts in a millisecond: its backend re-executes the
 * same command line in `cakec-llvm` (main.c), whose backend runs them. */
typedef struct FeBackend {
    int (*compile)(CakeCtx *ctx, const Options *o, Module *m);
    int (*run)(CakeCtx *ctx, const Options *o, Module *m);
} FeBackend;

int fe_cmd_compile(CakeCtx *ctx, const Options *o, Module *m);
int fe_cmd_run(CakeCtx *ctx, const Options *o, Module *m);

#endif
