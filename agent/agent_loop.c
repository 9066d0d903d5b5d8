/* agent_loop.c — `cakec agent TASK.json`: the search loop over an LLM endpoint.
 * Each iteration is one request (agent_llm.c); the model works through the
 * tools of `cakec mcp` (tool mode) or answers with one ```tir block (--plain).
 * Every kernel it writes is a candidate, evaluated in child processes:
 * check -> run (check on the task's visible shapes, bench) -> cost, and the
 * structured feedback (diagnostics JSON, check result, bench numbers, cost
 * breakdown) goes back to the model with the best candidate so far. Budgets:
 * iterations, tokens, wall time; a `submit` ends the search. Written to
 * --out DIR: trajectory.jsonl (one event a line), best.tir, report.json; the
 * lessons file learns which codes came up and which edits removed them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "agent.h"
#include "agent_loop.h"

/* ---- options -------------------------------------------------------------------- */

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

static int parse_opts(CakeCtx *ctx, int argc, char **argv, LoopOpts *o)
{
    *o = (LoopOpts){.iterations = 10, .tokens = 1000000, .wall_s = 1800, .http_timeout = 120,
                    .retries = 4, .backoff = 1, .out = "agent_out"};
    const char *api = env_or("CAKE_AGENT_API", "openai");
    o->endpoint = env_or("CAKE_AGENT_ENDPOINT", NULL);
    o->model = env_or("CAKE_AGENT_MODEL", NULL);
    o->key_env = env_or("CAKE_AGENT_KEY_ENV", NULL);
    o->plain = !strcmp(env_or("CAKE_AGENT_MODE", "tools"), "plain");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int used = 1;
        if (!strcmp(a, "--json")) { o->json = 1; used = 0; }
        else if (!strcmp(a, "--plain")) { o->plain = 1; used = 0; }
        else if (!strcmp(a, "--tools")) { o->plain = 0; used = 0; }
        else if (!v && a[0] == '-') used = -1;
        else if (!strcmp(a, "--api")) api = v;
        else if (!strcmp(a, "--endpoint")) o->endpoint = v;
        else if (!strcmp(a, "--model")) o->model = v;
        else if (!strcmp(a, "--key-env")) o->key_env = v;
        else if (!strcmp(a, "--iterations")) o->iterations = atoi(v);
        else if (!strcmp(a, "--tokens")) o->tokens = atol(v);
        else if (!strcmp(a, "--wall")) o->wall_s = atof(v);
        else if (!strcmp(a, "--out")) o->out = v;
        else if (!strcmp(a, "--lessons")) o->lessons = v;
        else if (!strcmp(a, "--docs")) o->docs = v;
        else if (!strcmp(a, "--http-timeout")) o->http_timeout = atof(v);
        else if (!strcmp(a, "--retries")) o->retries = atoi(v);
        else if (!strcmp(a, "--backoff")) o->backoff = atof(v);
        else if (!strcmp(a, "--max-tokens")) o->max_tokens = atoi(v);
        else if (a[0] != '-' && !o->task) { o->task = a; used = 0; }
        else used = -1;
        if (used < 0) {
            Diag *d = diag_report(ctx, E0002, IR_NOSPAN, "agent: unexpected argument `%s`", a);
            diag_help(ctx, d, "see docs/agent.md for the options of `cakec agent`");
            return 0;
        }
        i += used;
    }
    if (!strcmp(api, "anthropic"))
        o->api = AG_API_ANTHROPIC;
    else if (strcmp(api, "openai")) {
        diag_report(ctx, E0002, IR_NOSPAN, "agent: --api is openai or anthropic, not `%s`", api);
        return 0;
    }
    if (!o->endpoint)
        o->endpoint = o->api == AG_API_OPENAI ? "https://api.openai.com/v1/chat/completions"
                                              : "https://api.anthropic.com/v1/messages";
    if (!o->key_env)
        o->key_env = getenv("CAKE_AGENT_KEY") ? "CAKE_AGENT_KEY"
                     : o->api == AG_API_OPENAI ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
    if (!o->task || !o->model || o->iterations <= 0) {
        Diag *d = diag_report(ctx, E0002, IR_NOSPAN, "agent needs a task file and a model%s",
                              o->iterations <= 0 ? " (and --iterations > 0)" : "");
        diag_help(ctx, d, "cakec agent TASK.json --model NAME (or CAKE_AGENT_MODEL)");
        return 0;
    }
    return 1;
}

/* ---- the loop -------------------------------------------------------------------- */

static void progress(const Loop *L, int iter, const char *what)
{
    const Cand *b = ag_loop_best(L);
    fprintf(stderr, "agent: iter %d/%d  tokens %ld  %s", iter, L->o->iterations, L->tokens, what);
    if (b && b->status == CAND_CORRECT)
        fprintf(stderr, "  best #%d %.4f ms%s", b->id, b->ms, "");
    if (b && b->status == CAND_CORRECT && L->task.baseline_ms > 0)
        fprintf(stderr, " (%.2fx baseline)", L->task.baseline_ms / b->ms);
    fputc('\n', stderr);
}

static int ag_has_tir(const char *text)
{
    char *k = ag_extract_tir(text);
    free(k);
    return k != NULL;
}

/* tool mode: runs the calls, answers each, and evaluates the kernels they carry */
static void do_tool_calls(Loop *L, const AgReply *r, char *what, size_t cap)
{
    snprintf(what, cap, "%d tool call%s", r->ncalls, r->ncalls == 1 ? "" : "s");
    for (int i = 0; i < r->ncalls; i++) {
        const AgToolCall *c = &r->calls[i];
        cJSON *res;
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(c->args, "source");
        if (cJSON_GetObjectItemCaseSensitive(c->args, "_unparsed_arguments"))
            res = cJSON_Parse("{\"ok\":false,\"error\":\"the tool arguments are not a JSON object\"}");
        else
            res = ag_tools_call(&L->tools, c->name, c->args);
        char *text = cJSON_PrintUnformatted(res);
        ag_msg_tool_result(L->o->api, L->messages, c->id, text ? text : "{}");
        ag_loop_event_tool(L, c->name, res);
        free(text);
        cJSON_Delete(res);
        if (cJSON_IsString(src) && strcmp(c->name, "docs") && strcmp(c->name, "compile")) {
            const Cand *cd = ag_loop_evaluate(L, src->valuestring, NULL);
            snprintf(what, cap, "candidate #%d %s", cd->id, ag_cand_status_name(cd->status));
        }
        if (!strcmp(c->name, "submit"))
            L->submitted = 1;
    }
}

/* plain mode: the ```tir block of the reply is the candidate */
static void do_plain(Loop *L, const AgReply *r, char *what, size_t cap)
{
    char *src = ag_extract_tir(r->text);
    if (!src) {
        snprintf(what, cap, "no ```tir block in the reply");
        ag_loop_event(L, "no_code", NULL);
        ag_msg_user(L->o->api, L->messages,
                    "Your reply has no ```tir block. Answer with the whole kernel in one ```tir block.");
        return;
    }
    cJSON *feedback = cJSON_CreateObject();
    const Cand *c = ag_loop_evaluate(L, src, feedback);
    snprintf(what, cap, "candidate #%d %s", c->id, ag_cand_status_name(c->status));
    char *msg = ag_loop_feedback_text(L, c, feedback);
    ag_msg_user(L->o->api, L->messages, msg);
    free(msg);
    cJSON_Delete(feedback);
    free(src);
}

static const char *over_budget(const Loop *L, int iter)
{
    if (iter >= L->o->iterations)
        return "iterations";
    if (L->tokens >= L->o->tokens)
        return "tokens";
    if (ag_now() - L->t0 >= L->o->wall_s)
        return "wall time";
    return NULL;
}

static const char *search(Loop *L)
{
    cJSON *tools = L->o->plain ? NULL : ag_tools_list();
    const char *reason = NULL;
    int iter = 0;
    while (!(reason = over_budget(L, iter))) {
        iter++;
        L->iterations = iter;
        AgReply r;
        char what[200];
        L->ctx->nerrors = 0;                        /* each request's errors are its own */
        L->ctx->ndiags = 0;
        if (ag_llm_chat(L->ctx, &L->llm, L->system, L->messages, tools, &r)) {
            long st = r.http_status;
            snprintf(L->last_error, sizeof L->last_error, "%s: %s",
                     ir_diag_info[L->ctx->diags[0].code].code, L->ctx->diags[0].msg);
            ag_loop_event_error(L);
            snprintf(what, sizeof what, "request failed: %s (%s)",
                     ir_diag_info[L->ctx->diags[0].code].title, ir_diag_info[L->ctx->diags[0].code].code);
            ag_reply_free(&r);
            progress(L, iter, what);
            if (L->ctx->diags[0].code == E1105 && st >= 400 && st < 500 && st != 429) {
                fprintf(stderr, "agent: %s\n", L->ctx->diags[0].msg);
                reason = "the endpoint refused the request";
                break;
            }
            continue;
        }
        L->tokens += r.tokens_in + r.tokens_out;
        ag_loop_event_reply(L, &r);
        ag_msg_assistant(L->o->api, L->messages, &r);
        if (r.ncalls > 0)
            do_tool_calls(L, &r, what, sizeof what);
        else if (L->o->plain || ag_has_tir(r.text))   /* a tool-mode model may answer with code too */
            do_plain(L, &r, what, sizeof what);
        else {
            snprintf(what, sizeof what, "no tool call");
            char *msg = ag_loop_feedback_text(L, NULL, NULL);
            ag_msg_user(L->o->api, L->messages, msg);
            free(msg);
        }
        ag_reply_free(&r);
        progress(L, iter, what);
        if (L->submitted) {
            reason = "submitted";
            break;
        }
        if (L->o->plain)
            ag_loop_trim_history(L);
    }
    cJSON_Delete(tools);
    return reason;
}

int ag_cmd_agent(CakeCtx *ctx, int argc, char **argv)
{
    LoopOpts o;
    int json = ag_wants_json(argc, argv);
    if (!parse_opts(ctx, argc, argv, &o))
        return ag_finish(ctx, "agent", json, 1, NULL);
    const char *key = getenv(o.key_env);
    if (!key || !*key) {
        Diag *d = diag_report(ctx, E1107, IR_NOSPAN, "no API key: `%s` is not set", o.key_env);
        diag_help(ctx, d, "export the key in that variable, or name another with --key-env");
        return ag_finish(ctx, "agent", json, 1, NULL);
    }
    Loop L;
    if (ag_loop_init(ctx, &L, &o, key))
        return ag_finish(ctx, "agent", json, 1, NULL);
    char why[512];
    if (!ag_curl_open(&L.curl, why, sizeof why)) {
        diag_report(ctx, E1105, IR_NOSPAN, "%s", why);
        return ag_finish(ctx, "agent", json, 1, NULL);
    }
    L.llm.curl = &L.curl;
    L.curl.global_init(CURL_GLOBAL_DEFAULT);
    const char *reason = search(&L);
    cJSON *report = ag_loop_finish(&L, reason);
    L.curl.global_cleanup();
    ag_curl_close(&L.curl);
    ctx->nerrors = 0;
    ctx->ndiags = 0;
    int code = 0;
    const Cand *best = ag_loop_best(&L);
    if (!best || best->status != CAND_CORRECT) {
        Diag *d = diag_report(ctx, E1111, IR_NOSPAN, "no correct candidate in %d iterations (%s)",
                              L.iterations, reason);
        if (L.last_error[0])
            diag_note(ctx, d, IR_NOSPAN, "the last failed request: %s", L.last_error);
        diag_help(ctx, d, "the trajectory in %s/trajectory.jsonl shows what the model tried", o.out);
        code = 1;
    }
    ag_loop_free(&L);
    if (!json) {
        cJSON_Delete(report);
        report = NULL;
    }
    return ag_finish(ctx, "agent", json, code, report);
}
