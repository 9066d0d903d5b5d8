/* lib_cmd.h — what the `cakec lib` commands share (lib_cmd.c, lib_run.c, lib_tune.c). */
#ifndef CAKE_LIB_CMD_H
#define CAKE_LIB_CMD_H
#include "cake_lib.h"
#include "driver.h"
#include <cjson/cJSON.h>

typedef struct {
    Options opt;              /* file, out, shape, device, runs, seed, timeout, json, check */
    const char *sub;          /* check, build, ops, select, run, bench, tune */
    const char *op, *table, *shapes, *runner, *workers, *fake, *slurm_dir, *partition, *devices, *child_timeout;
    const char *gres;         /* lib tune --runner slurm: --gres per task (default gpu:1; none) */
    const char *variant;      /* run/bench --variant V: that one, not the table's */
    const char *skip;         /* bench --all --skip V1,V2: not those (e.g. failed their check) */
    const char *repeat;       /* select --repeat N: time N selects */
    const char *per_task;     /* tune --per-task candidate|shape */
    const char *jobs;   /* build -j N */
    int ptx, no_model, verbose, overhead, all;
    int sample;               /* run --check / bench --shapes --check: the oracle compares a
                                 seeded sample of rows (or tiles) at every shape */
    const char *bad_option;   /* the option parse did not know (for the message) */
} LibOptions;

/* `cakec lib ...` (argv[0] is "lib"): the exit code */
int drv_cmd_lib(CakeCtx *ctx, int argc, char **argv);

int lib_open_any(CakeCtx *ctx, const char *path, CakeLib **lib);
int lib_parse_dims(CakeCtx *ctx, const char *spec, CakeLibDim *dims, uint32_t *n, uint32_t max);
/* the choice for --op/--shape, every domain tested: EXIT_OK or the exit code */
int lib_choose(CakeCtx *ctx, const LibOptions *o, CakeLib *lib, CakeLibChoice *ch);

/* the output of `run --check` and `run --bench` (commands.c), which `lib run/bench` share */
cJSON *drv_check_json(const CheckReport *r);
cJSON *drv_bench_json(const CakeBench *b);
void drv_check_text(const CheckReport *r);
void drv_bench_text(const CakeBench *b, const CostResult *c);
/* b as "bench" in extra, the prediction c (NULL: none) beside it as "cost" and in
   the bench document, and the text on stdout unless json: `run --bench` and `lib bench` */
void drv_bench_report(const CakeBench *b, const CostResult *c, cJSON *extra, int json);
/* where a measurement ran: device name, PCI address, CUDA_VISIBLE_DEVICES, SM clock
   before and after (commands.c; dev NULL: --fake-measure DEVICE) */
cJSON *drv_measured_on(CakeCtx *ctx, const RtDevice *dev, const char *fake, int mhz0, int mhz1);

double lib_now_ns(void);
double lib_select_ns(CakeCtx *ctx, const CakeLib *lib, const CakeLibChoice *ch, int n);

int lib_cmd_run(CakeCtx *ctx, const LibOptions *o);    /* run, bench (lib_run.c) */
int lib_cmd_tune(CakeCtx *ctx, const LibOptions *o);   /* lib_tune.c */

#endif
