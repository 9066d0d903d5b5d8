/* driver.h — the cakec command line's options, shared by the driver's files. */
#ifndef CAKE_DRIVER_H
#define CAKE_DRIVER_H
#include "ir.h"

enum { EXIT_OK = 0, EXIT_USER = 1, EXIT_BUG = 2, EXIT_DEVICE = 3 };

typedef struct {
    const char *command;     /* check, print, compile, cost, run */
    const char *file;
    const char *out, *target, *emit, *shape, *set, *reference;
    const char *kernel, *timeout, *runs, *seed;
    const char *dump_outputs; /* run: the written tensors of each checked shape into this folder */
    const char *tol_scale;   /* run --check --tol-scale X: multiplies every tolerance */
    int json, check, bench;
    int sim, no_race;        /* run --sim: the CPU executor of TIR-L; --no-race */
    int sample;              /* run --check/--sim --sample: compare a seeded sample at every shape */
    const char *sm_count;    /* run --sim --sm-count N */
    int no_report;           /* --no-report: compile without the assembler's resource report */
    const char *dump_after;
    const char *device, *compare, *svg;   /* cost */
    int explain;                          /* cost --explain: which term bounds the time */
    const char *sweep[8]; int nsweep;      /* cost --sweep P=a,b,c Q=x,y */
} Options;

/* The cakec command line (main.c). Returns the exit code: 0 ok, 1 the input
 * is wrong, 2 internal error, 3 device problem. */
int drv_main(int argc, char **argv);

/* prints the diagnostics (text or the JSON document) and returns code; with
 * EXIT_BUG the JSON document says "internal_error": true */
int drv_finish(CakeCtx *ctx, const Options *o, int code);
/* prints the diagnostics with `extra` (a cJSON object, consumed; may be NULL)
 * merged into the JSON document */
int drv_finish_with(CakeCtx *ctx, const Options *o, int code, void *extra);

/* the commands past `check` (commands.c), on a verified module */
int drv_cmd_compile(CakeCtx *ctx, const Options *o, Module *m);
int drv_cmd_run(CakeCtx *ctx, const Options *o, Module *m);
int drv_cmd_cost(CakeCtx *ctx, const Options *o, Module *m);   /* cost.c */
/* `cakec calibrate MEASURED.jsonl ...` (calibrate.c): its own options */
int drv_cmd_calibrate(CakeCtx *ctx, int argc, char **argv);

#endif
