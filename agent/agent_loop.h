/* agent_loop.h — the state of one `cakec agent` run, shared by the loop
 * (agent_loop.c) and the candidates, archive, trajectory and report
 * (agent_cand.c). */
#ifndef CAKE_AGENT_LOOP_H
#define CAKE_AGENT_LOOP_H
#include <stdio.h>
#include "agent.h"

typedef struct {
    const char *task, *endpoint, *model, *key_env, *out, *lessons, *docs;
    AgApi api;
    int plain, json, iterations, retries, max_tokens;
    long tokens;
    double wall_s, http_timeout, backoff;
} LoopOpts;

typedef enum { CAND_INVALID, CAND_WRONG, CAND_UNRUN, CAND_CORRECT } CandStatus;

typedef struct {
    int id;
    char *source;
    CandStatus status;     /* invalid: check fails; wrong: run fails; unrun: no device */
    double ms;             /* bench median at the task's bench shape, NAN if none */
    double predicted_ms;   /* the cost model's, NAN if none */
    char bottleneck[48];   /* the cost model's, "unknown" if none */
    char codes[8][8];      /* the distinct error codes of check and run */
    int ncodes;
} Cand;

typedef struct {
    CakeCtx *ctx;
    const LoopOpts *o;
    AgTask task;
    AgLlm llm;
    AgCurl curl;           /* llm.curl points here */
    ArRunner runner;
    AgTools tools;
    char docs[4096];
    char *system;
    cJSON *messages;
    cJSON *lessons;
    const char *lessons_path;
    FILE *traj;
    Cand *cands;
    int ncands, capcands;
    int iterations, submitted;
    char last_error[400];   /* the last failed request's diagnostic, for the final report */
    long tokens;
    double t0;
} Loop;

int ag_loop_init(CakeCtx *ctx, Loop *L, const LoopOpts *o, const char *key);
void ag_loop_free(Loop *L);
/* evaluates a kernel's source (the same source is evaluated once); the
 * feedback documents go into `feedback` when non-NULL */
const Cand *ag_loop_evaluate(Loop *L, const char *source, cJSON *feedback);
/* the correct candidate with the least time; else the latest unrun one; else the latest */
const Cand *ag_loop_best(const Loop *L);
const char *ag_cand_status_name(CandStatus s);
/* the next user message: the candidate's feedback and the best so far */
char *ag_loop_feedback_text(const Loop *L, const Cand *c, const cJSON *feedback);
/* plain mode keeps the first message and the last exchanges */
void ag_loop_trim_history(Loop *L);
/* trajectory events */
void ag_loop_event(Loop *L, const char *event, cJSON *fields);
void ag_loop_event_reply(Loop *L, const AgReply *r);
void ag_loop_event_tool(Loop *L, const char *name, const cJSON *result);
void ag_loop_event_error(Loop *L);
/* writes best.tir, report.json and the lessons; returns the report */
cJSON *ag_loop_finish(Loop *L, const char *reason);

#endif
