/* agent_cand.c — the candidates of `cakec agent`: setting up a run (task,
 * system prompt, trajectory), evaluating a kernel through the tools, the
 * feedback message, the archive (the best plus the fastest of each cost-model
 * bottleneck), the lessons learned, and the final report. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "agent_loop.h"

/* ---- setup ------------------------------------------------------------------------ */

static const char intro[] =
    "You write GPU kernels in TIR, the tile-level kernel language of the CAKE compiler "
    "`cakec`. Your kernel must compute exactly what the task's trusted reference kernel "
    "computes (it is checked in fp64 on the task's shapes, and on held-out shapes you do not "
    "see) and be as fast as possible. Diagnostics come as JSON with a stable code, the place, "
    "a help line and fix-its; the `docs` tool explains any code. The language reference "
    "follows.\n\n";

static char *build_system(Loop *L, const char *tir_md, const char *ref_src)
{
    cJSON *pub = ag_task_public_json(&L->task);
    char *task = cJSON_Print(pub);
    cJSON_Delete(pub);
    char *lessons = ag_lessons_prompt(L->lessons, L->task.family);
    const char *mode = L->o->plain
        ? "Answer every time with the whole kernel in one ```tir block; you get the check, run "
          "and cost results back."
        : "Work through the tools: check, compile, cost, run, docs; pass the kernel as `source`. "
          "Call `submit` with your final kernel.";
    char *s = ag_printf("%s<language-reference>\n%s\n</language-reference>\n\n%s\n\nThe task:\n%s\n\n"
                        "The trusted reference kernel (its `reference` block is the specification):\n"
                        "```tir\n%s\n```\n\n%s\n",
                        intro, tir_md, lessons ? lessons : "", task ? task : "{}", ref_src, mode);
    free(task);
    free(lessons);
    return s;
}

static int fail(CakeCtx *ctx, DiagCode code, const char *what, const char *path)
{
    diag_report(ctx, code, IR_NOSPAN, "%s `%s`", what, path);
    return 1;
}

/* a task with a baseline command and no time: run it once (it prints a
 * `cakec run --bench --json` document, or any JSON with a median_ms) */
static void measure_baseline(Loop *L)
{
    if (L->task.baseline_ms > 0 || !L->task.baseline_command)
        return;
    const char *argv[] = {"/bin/sh", "-c", L->task.baseline_command, NULL};
    ArJob job = {.argv = argv, .timeout_s = L->tools.timeout_s};
    ArResult r;
    ar_run(&L->runner, &job, &r);
    cJSON *j = cJSON_Parse(r.out);
    static const char *const keys[] = {"median_ms", NULL};
    double ms = ag_json_find_number(j, keys);
    if (ms > 0)
        L->task.baseline_ms = ms;
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "status", ar_status_name(r.status));
    cJSON_AddItemToObject(ev, "ms", ms > 0 ? cJSON_CreateNumber(ms) : cJSON_CreateNull());
    ag_loop_event(L, "baseline", ev);
    cJSON_Delete(j);
    ar_result_free(&r);
}

int ag_loop_init(CakeCtx *ctx, Loop *L, const LoopOpts *o, const char *key)
{
    memset(L, 0, sizeof *L);
    L->ctx = ctx;
    L->o = o;
    L->t0 = ag_now();
    if (ag_task_load(ctx, o->task, &L->task))
        return 1;
    const char *docs = ag_docs_dir(o->docs, L->docs, sizeof L->docs);
    if (!docs)
        return fail(ctx, E1108, "the docs folder (with tir.md) was not found; pass --docs or set CAKE_DOCS:",
                    o->docs ? o->docs : "next to cakec");
    char *tir_path = ag_printf("%s/tir.md", docs);
    char *tir_md = ag_read_file(tir_path, NULL);
    free(tir_path);
    char *ref = ag_read_file(L->task.reference, NULL);
    if (!ref || !tir_md) {
        free(tir_md);
        free(ref);
        return fail(ctx, E1101, "cannot read the task's reference", L->task.reference);
    }
    L->lessons_path = ag_lessons_path(o->lessons);
    L->lessons = ag_lessons_load(L->lessons_path);
    if (!L->lessons) {
        free(tir_md);
        free(ref);
        return fail(ctx, E1110, "the lessons file is not a JSON object:", L->lessons_path);
    }
    mkdir(o->out, 0777);
    char *tp = ag_printf("%s/trajectory.jsonl", o->out);
    L->traj = fopen(tp, "w");
    free(tp);
    if (!L->traj) {
        free(tir_md);
        free(ref);
        return fail(ctx, E0001, "cannot write the trajectory in", o->out);
    }
    L->llm = (AgLlm){.api = o->api, .endpoint = o->endpoint, .model = o->model, .key = key,
                     .timeout_s = o->http_timeout, .retries = o->retries, .backoff_s = o->backoff,
                     .max_tokens = o->max_tokens};
    L->runner = ar_local_runner();
    ag_tools_init(&L->tools, &L->runner, &L->task, docs);
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "task", L->task.name);
    cJSON_AddStringToObject(ev, "model", o->model);
    cJSON_AddStringToObject(ev, "api", o->api == AG_API_OPENAI ? "openai" : "anthropic");
    cJSON_AddStringToObject(ev, "mode", o->plain ? "plain" : "tools");
    ag_loop_event(L, "start", ev);
    measure_baseline(L);                 /* before the prompt, which shows it */
    L->system = build_system(L, tir_md, ref);
    free(tir_md);
    free(ref);
    L->messages = cJSON_CreateArray();
    char *start = L->task.start ? ag_read_file(L->task.start, NULL) : NULL;
    char *first = start ? ag_printf("Start from this kernel and make it correct and fast:\n```tir\n%s\n```", start)
                        : ag_strdup("Write the kernel for the task.");
    ag_msg_user(o->api, L->messages, first);
    free(first);
    free(start);
    return 0;
}

void ag_loop_free(Loop *L)
{
    for (int i = 0; i < L->ncands; i++)
        free(L->cands[i].source);
    free(L->cands);
    free(L->system);
    cJSON_Delete(L->messages);
    cJSON_Delete(L->lessons);
    if (L->traj)
        fclose(L->traj);
    ag_tools_free(&L->tools);
    ag_task_free(&L->task);
}

/* ---- trajectory ----------------------------------------------------------------- */

void ag_loop_event(Loop *L, const char *event, cJSON *fields)
{
    cJSON *j = fields ? fields : cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "t", round((ag_now() - L->t0) * 1000) / 1000);
    cJSON_AddNumberToObject(j, "iter", L->iterations);
    cJSON_AddStringToObject(j, "event", event);
    char *s = cJSON_PrintUnformatted(j);
    if (s && L->traj) {
        fprintf(L->traj, "%s\n", s);
        fflush(L->traj);
    }
    free(s);
    cJSON_Delete(j);
}

void ag_loop_event_reply(Loop *L, const AgReply *r)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "attempts", r->attempts);
    cJSON_AddNumberToObject(j, "tokens_in", (double)r->tokens_in);
    cJSON_AddNumberToObject(j, "tokens_out", (double)r->tokens_out);
    cJSON_AddStringToObject(j, "text", r->text ? r->text : "");
    cJSON *calls = cJSON_AddArrayToObject(j, "tool_calls");
    for (int i = 0; i < r->ncalls; i++)
        cJSON_AddItemToArray(calls, cJSON_CreateString(r->calls[i].name));
    ag_loop_event(L, "reply", j);
}

void ag_loop_event_tool(Loop *L, const char *name, const cJSON *result)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "tool", name);
    cJSON_AddBoolToObject(j, "ok", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(result, "ok")));
    ag_loop_event(L, "tool", j);
}

void ag_loop_event_error(Loop *L)
{
    cJSON *j = cJSON_CreateObject();
    if (L->ctx->ndiags) {
        const Diag *d = &L->ctx->diags[0];
        cJSON_AddStringToObject(j, "code", ir_diag_info[d->code].code);
        cJSON_AddStringToObject(j, "message", d->msg);
    }
    ag_loop_event(L, "error", j);
}

/* ---- evaluation --------------------------------------------------------------------- */

const char *ag_cand_status_name(CandStatus s)
{
    static const char *const names[] = {"invalid", "wrong", "unrun", "correct"};
    return names[s];
}

static void add_codes(Cand *c, const cJSON *doc)
{
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(doc, "diagnostics")) {
        const char *code = ag_json_find_string(d, "code"), *sev = ag_json_find_string(d, "severity");
        if (!code || !sev || strcmp(sev, "error"))
            continue;
        int seen = 0;
        for (int i = 0; i < c->ncodes; i++)
            seen |= !strcmp(c->codes[i], code);
        if (!seen && c->ncodes < 8)
            snprintf(c->codes[c->ncodes++], sizeof c->codes[0], "%s", code);
    }
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(doc, "runs"))
        add_codes(c, r);
}

static int has_code(const Cand *c, const char *code)
{
    for (int i = 0; i < c->ncodes; i++)
        if (!strcmp(c->codes[i], code))
            return 1;
    return 0;
}

static cJSON *tool(Loop *L, const char *name, const char *source, const char *key, const char *val,
                   int bench)
{
    cJSON *args = cJSON_CreateObject();
    cJSON_AddStringToObject(args, "source", source);
    if (key)
        cJSON_AddStringToObject(args, key, val);
    if (bench)
        cJSON_AddBoolToObject(args, "bench", 1);
    cJSON *r = ag_tools_call(&L->tools, name, args);
    cJSON_Delete(args);
    return r;
}

/* the lines that differ between a and b (common first and last lines cut) */
static char *diff_side(const char *a, const char *b, int want_a)
{
    const char *pa = a, *pb = b;
    while (*pa && *pa == *pb) { pa++; pb++; }
    while (pa > a && pa[-1] != '\n') { pa--; pb--; }
    const char *ea = a + strlen(a), *eb = b + strlen(b);
    while (ea > pa && eb > pb && ea[-1] == eb[-1]) { ea--; eb--; }
    while (*ea && *ea != '\n') { ea++; eb++; }
    const char *s = want_a ? pa : pb, *e = want_a ? ea : eb;
    size_t n = (size_t)(e - s);
    return ag_printf("%.*s%s", (int)(n > 600 ? 600 : n), s, n > 600 ? "\n..." : "");
}

/* codes of the previous candidate that this one no longer has: the edit fixed them */
static void learn(Loop *L, const Cand *prev, const Cand *c)
{
    for (int i = 0; i < c->ncodes; i++)
        ag_lessons_note(L->lessons, L->task.family, c->codes[i], NULL, NULL);
    if (!prev)
        return;
    for (int i = 0; i < prev->ncodes; i++)
        if (!has_code(c, prev->codes[i]) && c->status >= prev->status) {
            char *before = diff_side(prev->source, c->source, 1);
            char *after = diff_side(prev->source, c->source, 0);
            ag_lessons_note(L->lessons, L->task.family, prev->codes[i], before, after);
            free(before);
            free(after);
        }
}

static Cand *new_cand(Loop *L, const char *source)
{
    if (L->ncands == L->capcands) {
        L->capcands = L->capcands ? 2 * L->capcands : 16;
        L->cands = realloc(L->cands, sizeof *L->cands * (size_t)L->capcands);
    }
    Cand *c = &L->cands[L->ncands++];
    memset(c, 0, sizeof *c);
    c->id = L->ncands;
    c->source = ag_strdup(source);
    c->ms = c->predicted_ms = NAN;
    snprintf(c->bottleneck, sizeof c->bottleneck, "unknown");
    return c;
}

static void judge_run(Cand *c, const cJSON *run)
{
    static const char *const keys[] = {"median_ms", NULL};
    add_codes(c, run);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "ok"))) {
        c->status = CAND_CORRECT;
        /* the bench is the last of the task's runs, or the run itself */
        const cJSON *runs = cJSON_GetObjectItemCaseSensitive(run, "runs");
        const cJSON *last = cJSON_GetArrayItem(runs, cJSON_GetArraySize(runs) - 1);
        c->ms = ag_json_find_number(cJSON_GetObjectItemCaseSensitive(last, "bench"), keys);
        if (isnan(c->ms))
            c->ms = ag_json_find_number(cJSON_GetObjectItemCaseSensitive(run, "bench"), keys);
    } else {
        c->status = has_code(c, "E0973") || has_code(c, "E0974") ? CAND_UNRUN : CAND_WRONG;
    }
}

const Cand *ag_loop_evaluate(Loop *L, const char *source, cJSON *feedback)
{
    for (int i = 0; i < L->ncands; i++)
        if (!strcmp(L->cands[i].source, source)) {
            if (feedback)
                cJSON_AddNumberToObject(feedback, "same_as_candidate", L->cands[i].id);
            return &L->cands[i];
        }
    const Cand *prev = L->ncands ? &L->cands[L->ncands - 1] : NULL;
    int prev_index = prev ? (int)(prev - L->cands) : -1;
    Cand *c = new_cand(L, source);
    prev = prev_index >= 0 ? &L->cands[prev_index] : NULL;   /* after the realloc */
    cJSON *check = tool(L, "check", source, NULL, NULL, 0);
    add_codes(c, check);
    cJSON *run = NULL, *cost = NULL;
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(check, "ok"))) {
        run = tool(L, "run", source, NULL, NULL, 1);
        judge_run(c, run);
        cost = tool(L, "cost", source, "shape", L->task.bench_shape, 0);
        c->predicted_ms = ag_cost_ms(cost);
        const char *b = ag_json_find_string(cost, "bottleneck");
        if (b)
            snprintf(c->bottleneck, sizeof c->bottleneck, "%s", b);
    }
    learn(L, prev, c);
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddNumberToObject(ev, "id", c->id);
    cJSON_AddStringToObject(ev, "status", ag_cand_status_name(c->status));
    cJSON_AddItemToObject(ev, "ms", isnan(c->ms) ? cJSON_CreateNull() : cJSON_CreateNumber(c->ms));
    cJSON_AddStringToObject(ev, "bottleneck", c->bottleneck);
    cJSON *codes = cJSON_AddArrayToObject(ev, "codes");
    for (int i = 0; i < c->ncodes; i++)
        cJSON_AddItemToArray(codes, cJSON_CreateString(c->codes[i]));
    cJSON_AddStringToObject(ev, "source", source);
    ag_loop_event(L, "candidate", ev);
    if (feedback) {
        cJSON_AddItemToObject(feedback, "check", check);
        if (run)
            cJSON_AddItemToObject(feedback, "run", run);
        if (cost)
            cJSON_AddItemToObject(feedback, "cost", cost);
    } else {
        cJSON_Delete(check);
        cJSON_Delete(run);
        cJSON_Delete(cost);
    }
    return c;
}

const Cand *ag_loop_best(const Loop *L)
{
    const Cand *best = NULL;
    for (int i = 0; i < L->ncands; i++) {
        const Cand *c = &L->cands[i];
        if (!best || c->status > best->status ||
            (c->status == best->status && c->status == CAND_CORRECT && c->ms < best->ms) ||
            (c->status == best->status && c->status != CAND_CORRECT))
            best = c;
    }
    return best;
}

char *ag_loop_feedback_text(const Loop *L, const Cand *c, const cJSON *feedback)
{
    char *fb = feedback ? cJSON_PrintUnformatted(feedback) : NULL;
    const Cand *b = ag_loop_best(L);
    char *head = c ? ag_printf("Candidate #%d is %s.%s%s\nFeedback (the JSON of check, run and cost):\n%s\n",
                               c->id, ag_cand_status_name(c->status), c->ncodes ? " Codes: " : "",
                               c->ncodes ? c->codes[0] : "", fb ? fb : "{}")
                   : ag_strdup(L->o->plain ? "" : "Use the tools on your kernel (pass it as `source`), "
                                                  "then call `submit` with the final kernel.\n");
    char base[64] = "";
    if (L->task.baseline_ms > 0)
        snprintf(base, sizeof base, " (baseline %.4f ms)", L->task.baseline_ms);
    char ms[48] = "";
    if (b && !isnan(b->ms))
        snprintf(ms, sizeof ms, ", %.4f ms", b->ms);
    char *best = b ? ag_printf("\nThe best candidate so far, #%d (%s%s, bottleneck %s)%s:\n```tir\n%s\n```\n",
                               b->id, ag_cand_status_name(b->status), ms, b->bottleneck, base,
                               b->source)
                   : ag_strdup("");
    char *s = ag_printf("%s%s\n%s", head ? head : "", best ? best : "",
                        L->o->plain ? "Fix the errors or make the best kernel faster; answer with the "
                                      "whole kernel in one ```tir block."
                                    : "Go on, or submit.");
    free(fb);
    free(head);
    free(best);
    return s;
}

void ag_loop_trim_history(Loop *L)
{
    while (cJSON_GetArraySize(L->messages) > 5)
        cJSON_DeleteItemFromArray(L->messages, 1);
}

/* ---- the end ------------------------------------------------------------------------ */

static cJSON *cand_json(const Cand *c)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "id", c->id);
    cJSON_AddStringToObject(j, "status", ag_cand_status_name(c->status));
    cJSON_AddItemToObject(j, "ms", isnan(c->ms) ? cJSON_CreateNull() : cJSON_CreateNumber(c->ms));
    cJSON_AddItemToObject(j, "predicted_ms", isnan(c->predicted_ms) ? cJSON_CreateNull()
                                                                    : cJSON_CreateNumber(c->predicted_ms));
    cJSON_AddStringToObject(j, "bottleneck", c->bottleneck);
    return j;
}

/* the best, and the fastest correct candidate of each other bottleneck */
static cJSON *archive(const Loop *L, const Cand *best)
{
    cJSON *a = cJSON_CreateArray();
    if (best)
        cJSON_AddItemToArray(a, cand_json(best));
    for (int i = 0; i < L->ncands; i++) {
        const Cand *c = &L->cands[i];
        if (c == best || c->status != CAND_CORRECT)
            continue;
        int better = 0;
        for (int k = 0; k < L->ncands; k++) {
            const Cand *o = &L->cands[k];
            better |= o->status == CAND_CORRECT && !strcmp(o->bottleneck, c->bottleneck) &&
                      (o->ms < c->ms || (o->ms == c->ms && k < i) || o == best);
        }
        if (!better) {
            cJSON_AddItemToArray(a, cand_json(c));
            char *p = ag_printf("%s/cand_%d.tir", L->o->out, c->id);
            ag_write_file(p, c->source, strlen(c->source));
            free(p);
        }
    }
    return a;
}

static void print_report(const cJSON *r)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(r, "best");
    printf("agent: stopped on %s after %d iterations, %d tokens, %d candidates\n",
           ag_json_find_string(r, "stopped"), cJSON_GetObjectItemCaseSensitive(r, "iterations")->valueint,
           cJSON_GetObjectItemCaseSensitive(r, "tokens")->valueint,
           cJSON_GetObjectItemCaseSensitive(r, "candidates")->valueint);
    if (!b) {
        printf("no candidate\n");
        return;
    }
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(b, "ms"), *sp = cJSON_GetObjectItemCaseSensitive(r, "speedup");
    printf("best: candidate #%d, %s", cJSON_GetObjectItemCaseSensitive(b, "id")->valueint,
           ag_json_find_string(b, "status"));
    if (cJSON_IsNumber(ms))
        printf(", %.4f ms", ms->valuedouble);
    if (cJSON_IsNumber(sp))
        printf(", %.3fx the baseline", sp->valuedouble);
    printf(", held-out shapes: %s; written to %s\n", ag_json_find_string(r, "held_out"),
           ag_json_find_string(b, "file"));
}

cJSON *ag_loop_finish(Loop *L, const char *reason)
{
    const Cand *best = ag_loop_best(L);
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "task", L->task.name);
    cJSON_AddStringToObject(r, "model", L->o->model);
    cJSON_AddStringToObject(r, "stopped", reason ? reason : "?");
    cJSON_AddNumberToObject(r, "iterations", L->iterations);
    cJSON_AddNumberToObject(r, "tokens", (double)L->tokens);
    cJSON_AddNumberToObject(r, "wall_s", round((ag_now() - L->t0) * 10) / 10);
    cJSON_AddNumberToObject(r, "candidates", L->ncands);
    if (best) {
        cJSON *b = cand_json(best);
        char *p = ag_printf("%s/best.tir", L->o->out);
        ag_write_file(p, best->source, strlen(best->source));
        cJSON_AddStringToObject(b, "file", p);
        cJSON_AddItemToObject(r, "best", b);
        cJSON *v = best->status == CAND_CORRECT ? ag_held_out_verdict(&L->tools, p) : NULL;
        cJSON_AddStringToObject(r, "held_out", v ? ag_json_find_string(v, "held_out") : "not run");
        if (v) {
            cJSON_AddNumberToObject(r, "held_out_passed", cJSON_GetObjectItemCaseSensitive(v, "passed")->valueint);
            cJSON_AddNumberToObject(r, "held_out_total", cJSON_GetObjectItemCaseSensitive(v, "total")->valueint);
        }
        cJSON_Delete(v);
        free(p);
    }
    if (L->task.baseline_ms > 0) {
        cJSON_AddNumberToObject(r, "baseline_ms", L->task.baseline_ms);
        if (best && best->status == CAND_CORRECT && best->ms > 0)
            cJSON_AddNumberToObject(r, "speedup", L->task.baseline_ms / best->ms);
    }
    cJSON_AddItemToObject(r, "archive", archive(L, best));
    char *s = cJSON_Print(r), *p = ag_printf("%s/report.json", L->o->out);
    if (s && p)
        ag_write_file(p, s, strlen(s));
    free(s);
    free(p);
    ag_loop_event(L, "end", cJSON_Duplicate(r, 1));
    cJSON *fam = ag_lessons_family(L->lessons, L->task.family);
    cJSON *runs = cJSON_GetObjectItemCaseSensitive(fam, "runs");
    if (cJSON_IsNumber(runs))
        cJSON_SetNumberValue(runs, runs->valuedouble + 1);
    else
        cJSON_AddNumberToObject(fam, "runs", 1);
    ag_lessons_save(L->lessons_path, L->lessons);
    if (!L->o->json)
        print_report(r);
    return r;
}
