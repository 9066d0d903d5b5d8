/* agent.h — the agent tools of cakec: `cakec mcp` (a Model Context Protocol
 * server), `cakec agent TASK.json` (a search loop over an LLM endpoint),
 * `cakec tune` (a cost-pruned autotuner), `cakec docs` and `cakec lessons`.
 *
 * Everything that compiles or runs a candidate runs `cakec ... --json` as a
 * child process through a runner (agent_runner.c): a kernel that faults, hangs
 * or runs the machine out of memory is a result of that child, never the end
 * of the loop. The tools answer with the JSON document of the CLI command they
 * ran, so an agent sees the same thing through `mcp`, through the built-in loop
 * and on the command line. docs/agent.md describes the commands, the task file
 * and the lessons file.
 *
 * The commands take the context only for their own diagnostics (E1101-E1139);
 * each candidate is compiled by a child with its own context. */
#ifndef CAKE_AGENT_H
#define CAKE_AGENT_H
#include <stddef.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>   /* types only: libcurl itself is opened by agent_curl.c */
#include "ir.h"

/* ---- the command table the driver dispatches on (agent_main.c) ---------- */

typedef struct {
    const char *name;                       /* argv[1] */
    int (*run)(CakeCtx *ctx, int argc, char **argv);   /* argv[0] is the command */
    const char *usage;                      /* one line for `cakec --help` */
} AgCommand;

/* the agent command called `name`, or NULL */
const AgCommand *ag_command(const char *name);
/* the usage lines of every agent command */
void ag_print_usage(FILE *out);

/* prints ctx's diagnostics (text on stderr, or with json the CLI's JSON
 * document with `extra` merged in; extra is consumed) and returns code */
int ag_finish(CakeCtx *ctx, const char *command, int json, int code, cJSON *extra);
/* whether --json is among the arguments (for errors found while parsing them) */
int ag_wants_json(int argc, char **argv);
/* the arguments of `cakec COMMAND [POS] [FLAG V] [--json]`: the positional
 * one at *pos, flag's value at *value, --json at *json; 0 (with E0002
 * reported) on any other argument */
int ag_simple_args(CakeCtx *ctx, const char *command, const char *flag, int argc, char **argv,
                   const char **pos, const char **value, int *json);

/* ---- the child-process runner (agent_runner.c) ---------------------------- */

typedef enum {
    AR_OK,          /* exit 0 */
    AR_USER_ERROR,  /* exit 1: the input is wrong (the JSON says why) */
    AR_INTERNAL,    /* exit 2: a compiler bug in the child */
    AR_FAULT,       /* exit 3 (a device fault cakec caught) or killed by a signal */
    AR_TIMEOUT,     /* ran past the job's timeout: its process group was killed */
    AR_OOM,         /* killed by SIGKILL it did not get from us, or said "out of memory" */
    AR_SPAWN,       /* could not be started at all */
} ArStatus;

typedef struct {
    const char *const *argv;    /* NULL-terminated; argv[0] is the program (PATH is searched) */
    const char *const *env;     /* "NAME=VALUE" added to the environment, NULL-terminated, or NULL */
    double timeout_s;           /* wall-clock limit; <= 0: none */
    size_t max_output;          /* bytes kept of stdout and of stderr each; 0: 16 MiB */
} ArJob;

typedef struct {
    ArStatus status;
    int exit_code;              /* -1 when killed by a signal */
    int signal;                 /* the signal that ended it, 0 if none */
    double wall_s;
    char *out, *err;            /* NUL-terminated, never NULL after a run */
    size_t outlen, errlen;
} ArResult;

/* One interface, so that a remote or batch implementation can replace the
 * local one (docs/agent.md shows Slurm job arrays and Ray in front of it). */
typedef struct ArRunner {
    int (*run)(struct ArRunner *self, const ArJob *job, ArResult *res);  /* 0, or -1 if res unset */
    void *state;
} ArRunner;

ArRunner ar_local_runner(void);          /* fork/exec here, one child at a time */
int ar_run(ArRunner *r, const ArJob *job, ArResult *res);
void ar_result_free(ArResult *res);
const char *ar_status_name(ArStatus s);

/* Batches of jobs (agent_slurm.c): run here one after another, or as one Slurm
 * job array (`sbatch --array`, one job per task, the results read back from
 * the tasks' files). res[i] gets job i's result (free each with
 * ar_result_free). 0, or -1 with err set when the batch as a whole failed (no
 * sbatch, no task ran): then res is unset. */
typedef enum { AR_BATCH_LOCAL, AR_BATCH_SLURM } ArBatchKind;
typedef struct {
    ArBatchKind kind;
    const char *dir;            /* Slurm: the work folder (NULL: a fresh one under $TMPDIR) */
    const char *partition;      /* Slurm: --partition (NULL: the cluster's default) */
    const char *sbatch, *squeue; /* Slurm: the programs (NULL: "sbatch", "squeue") */
    double timeout_s;           /* Slurm: how long to wait for the whole array; <= 0: forever */
    int workers;                /* local: children at a time (<= 1: one); worker w runs with
                                   CUDA_VISIBLE_DEVICES=devices[w % ndevices] */
    const char *devices[16]; int ndevices;   /* local: the GPUs (none: all on "0") */
    char devbuf[512];           /* where devices[] point (ar_batch_spread) */
    const char *gres;           /* Slurm: --gres per task (NULL: "gpu:1"; "none": no --gres) */
} ArBatchOpts;
/* The workers of a local batch (`--workers N`, `--devices LIST`): with N, N
 * workers over LIST (else $CUDA_VISIBLE_DEVICES's list, else all on "0");
 * without N, one worker per GPU: of LIST, else of $CUDA_VISIBLE_DEVICES,
 * else (detect set) of the ngpus the driver sees (rt_gpu_count; 0 or 1: one
 * worker). 1, or 0 with why in err. */
int ar_batch_spread(ArBatchOpts *o, const char *workers, const char *devices, int detect,
                    char *err, size_t errlen);
int ar_batch(const ArBatchOpts *o, const ArJob *jobs, int n, ArResult *res, char *err, size_t errlen);
/* "local" (or NULL) and "slurm": 1, else 0 */
int ar_batch_kind(const char *name, ArBatchKind *out);

/* ---- small helpers (agent_util.c) ------------------------------------------ */

char *ag_read_file(const char *path, size_t *len);          /* malloc'd, NUL-terminated */
int ag_write_file(const char *path, const char *data, size_t len);
char *ag_strdup(const char *s);
char *ag_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));  /* malloc'd */
double ag_now(void);                                        /* seconds, monotonic */
/* the cakec to run children with: $CAKE_RUN_CMD, else this executable
 * (its path written to buf) */
const char *ag_cakec_path(char *buf, size_t cap);
/* the first number under any key of `keys` (NULL-terminated), depth first; NAN if none */
double ag_json_find_number(const cJSON *j, const char *const *keys);
const char *ag_json_find_string(const cJSON *j, const char *key);
/* the predicted time in ms in a `cakec cost --json` document, NAN if none */
double ag_cost_ms(const cJSON *cost);

/* ---- task files (agent_task.c) ---------------------------------------------- */

#define AG_MAX_SHAPES 16
typedef struct {
    char *name, *family, *description;
    char *reference;            /* path of the trusted reference .tir (resolved) */
    char *start;                /* path of a starting kernel, or NULL */
    char *target;               /* or NULL: the kernel's own */
    char *shapes[AG_MAX_SHAPES];   int nshapes;      /* visible */
    char *held_out[AG_MAX_SHAPES]; int nheld_out;    /* the final verdict only */
    char *bench_shape;          /* the shape timed; default the first visible */
    double rtol, atol;          /* 0: the check's per-dtype bound only */
    cJSON *inputs;              /* the value ranges, as written (shown to the model) */
    double baseline_ms;         /* at bench_shape; 0: unknown */
    char *baseline_command;     /* how the baseline was timed, or NULL */
} AgTask;

/* loads and validates a task file; 0, or 1 with diagnostics in ctx */
int ag_task_load(CakeCtx *ctx, const char *path, AgTask *t);
void ag_task_free(AgTask *t);
/* the task as shown to the model: no held-out shapes */
cJSON *ag_task_public_json(const AgTask *t);

/* ---- the tools shared by mcp and the agent loop (agent_tools.c) -------------- */

typedef struct {
    ArRunner *runner;
    const char *cakec;          /* ag_cakec_path() */
    char cakec_buf[4096];
    const AgTask *task;         /* or NULL */
    const char *docs_dir;       /* or NULL: found at run time (agent_docs.c) */
    char workdir[256];          /* candidates written as source go here */
    int ncand;
    double timeout_s;           /* per child */
    cJSON *submitted;           /* the last `submit` verdict, or NULL */
} AgTools;

int ag_tools_init(AgTools *t, ArRunner *r, const AgTask *task, const char *docs_dir);
void ag_tools_free(AgTools *t);
/* the tool list: MCP's tools/list "tools" array (name, description, inputSchema) */
cJSON *ag_tools_list(void);
/* runs tool `name` on its arguments; returns the tool's JSON document (never
 * NULL): the CLI's document, or {"ok": false, "error": ...} for bad arguments */
cJSON *ag_tools_call(AgTools *t, const char *name, const cJSON *args);
/* the file a tool call names: args.file, or args.source written to the workdir */
char *ag_tools_source_file(AgTools *t, const cJSON *args);
/* runs `cakec ARGS... --json` and returns its JSON (with "runner" added when the
 * child did not answer: status, exit code, signal, stderr tail) */
cJSON *ag_cakec_json(AgTools *t, const char *const *args);
/* the held-out verdict of a file: {"held_out": "pass"|"fail"|"error", "passed", "total"} */
cJSON *ag_held_out_verdict(AgTools *t, const char *file);

/* ---- docs (agent_docs.c) ----------------------------------------------------- */

/* the docs folder: `flag`, else $CAKE_DOCS, else next to the executable
 * (../docs, ../share/cake/docs, ./docs); NULL when none has tir.md */
const char *ag_docs_dir(const char *flag, char *buf, size_t cap);
/* the section of docs/diagnostics.md (a code) or docs/tir.md (a construct)
 * about `topic`; {"ok", "topic", "file", "heading", "text"} */
cJSON *ag_docs_lookup(const char *docs_dir, const char *topic, size_t max_chars);

/* ---- the LLM client (agent_llm.c) ------------------------------------------- */

typedef enum { AG_API_OPENAI, AG_API_ANTHROPIC } AgApi;

/* libcurl's entry points, from dlopen (agent_curl.c): types from curl/curl.h */
typedef struct AgCurl {
    void *lib;
    CURLcode (*global_init)(long flags);
    void (*global_cleanup)(void);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} AgCurl;
/* 1 when libcurl is loaded (or was); 0 and a reason in err */
int ag_curl_open(AgCurl *c, char *err, size_t errlen);
void ag_curl_close(AgCurl *c);

typedef struct {
    AgApi api;
    const char *endpoint;       /* full URL of chat/completions or messages */
    const char *model;
    const char *key;            /* never logged */
    double timeout_s;           /* per request */
    int retries;                /* on 429, 5xx and timeouts */
    double backoff_s;           /* first wait; doubles each retry */
    int max_tokens;             /* per reply */
    const AgCurl *curl;         /* loaded by the caller (ag_curl_open) */
} AgLlm;

typedef struct {
    char *id, *name;
    cJSON *args;
} AgToolCall;

typedef struct {
    char *text;                 /* the reply's text (may be empty, never NULL on success) */
    AgToolCall calls[16]; int ncalls;
    long tokens_in, tokens_out;
    cJSON *assistant;           /* the assistant message to append to the history */
    int attempts;
    long http_status;
} AgReply;

/* One request: `system`, the history `messages` (in api's format) and the
 * tools (MCP list, or NULL for plain mode). 0, or 1 with a diagnostic in ctx
 * (unreachable, HTTP error after retries, malformed reply). */
int ag_llm_chat(CakeCtx *ctx, const AgLlm *llm, const char *system, const cJSON *messages,
                const cJSON *tools, AgReply *out);
void ag_reply_free(AgReply *r);
/* appends to `messages` in api's format */
void ag_msg_user(AgApi api, cJSON *messages, const char *text);
void ag_msg_assistant(AgApi api, cJSON *messages, const AgReply *r);
void ag_msg_tool_result(AgApi api, cJSON *messages, const char *id, const char *text);
/* the first ```tir block of a text, malloc'd, or NULL */
char *ag_extract_tir(const char *text);

/* ---- lessons (agent_lessons.c) ---------------------------------------------- */

/* the lessons file: `flag`, else $CAKE_LESSONS, else cake_lessons.json */
const char *ag_lessons_path(const char *flag);
cJSON *ag_lessons_load(const char *path);     /* an empty object when missing */
int ag_lessons_save(const char *path, const cJSON *lessons);
/* records that `code` showed up in a candidate of `family`, and (fix_before
 * and fix_after non-NULL) that the edit from before to after removed it */
void ag_lessons_note(cJSON *lessons, const char *family, const char *code,
                     const char *fix_before, const char *fix_after);
/* the family's object in the lessons (created when missing) */
cJSON *ag_lessons_family(cJSON *lessons, const char *family);
/* the lessons of a family as prompt text (malloc'd; "" when none) */
char *ag_lessons_prompt(const cJSON *lessons, const char *family);

/* ---- the commands ------------------------------------------------------------- */
int ag_cmd_mcp(CakeCtx *ctx, int argc, char **argv);
int ag_cmd_agent(CakeCtx *ctx, int argc, char **argv);
int ag_cmd_tune(CakeCtx *ctx, int argc, char **argv);
int ag_cmd_docs(CakeCtx *ctx, int argc, char **argv);
int ag_cmd_lessons(CakeCtx *ctx, int argc, char **argv);

#endif
