/* agent_llm.c — the LLM client of `cakec agent`: one chat request over libcurl
 * in either wire format, OpenAI Chat Completions (messages, tools,
 * choices[0].message.tool_calls) or Anthropic Messages (system, content
 * blocks, tool_use / tool_result). Retries with exponential backoff on 429,
 * 5xx and transport timeouts; unknown fields in a reply are ignored; a reply
 * without the fields we need is E1106 with the start of the body. The API key
 * goes into one request header and nowhere else: not into diagnostics, the
 * trajectory or the report. */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agent.h"

typedef struct {
    char *buf;
    size_t len;
} Body;

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    Body *b = ud;
    size_t add = size * n;
    char *nb = realloc(b->buf, b->len + add + 1);
    if (!nb)
        return 0;
    memcpy(nb + b->len, p, add);
    b->len += add;
    nb[b->len] = 0;
    b->buf = nb;
    return add;
}

/* one POST; returns the curl code, *status the HTTP status (0 if none) */
static CURLcode post(const AgLlm *llm, const char *json, Body *out, long *status)
{
    const AgCurl *cu = llm->curl;
    CURL *c = cu->easy_init();
    if (!c)
        return CURLE_FAILED_INIT;
    struct curl_slist *h = cu->slist_append(NULL, "Content-Type: application/json");
    char *auth = llm->api == AG_API_OPENAI ? ag_printf("Authorization: Bearer %s", llm->key)
                                           : ag_printf("x-api-key: %s", llm->key);
    h = cu->slist_append(h, auth);
    if (llm->api == AG_API_ANTHROPIC)
        h = cu->slist_append(h, "anthropic-version: 2023-06-01");
    cu->easy_setopt(c, CURLOPT_URL, llm->endpoint);
    cu->easy_setopt(c, CURLOPT_HTTPHEADER, h);
    cu->easy_setopt(c, CURLOPT_POSTFIELDS, json);
    cu->easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    cu->easy_setopt(c, CURLOPT_WRITEDATA, out);
    cu->easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(llm->timeout_s * 1000));
    cu->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(llm->timeout_s * 1000));
    cu->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    cu->easy_setopt(c, CURLOPT_USERAGENT, "cakec/" CAKE_VERSION);
    CURLcode rc = cu->easy_perform(c);
    *status = 0;
    cu->easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    cu->slist_free_all(h);
    if (auth) {
        memset(auth, 0, strlen(auth));
        free(auth);
    }
    cu->easy_cleanup(c);
    return rc;
}

/* ---- requests ------------------------------------------------------------------- */

static cJSON *tools_for(AgApi api, const cJSON *mcp_tools)
{
    cJSON *out = cJSON_CreateArray();
    const cJSON *t;
    cJSON_ArrayForEach(t, mcp_tools) {
        cJSON *name = cJSON_GetObjectItemCaseSensitive(t, "name");
        cJSON *desc = cJSON_GetObjectItemCaseSensitive(t, "description");
        cJSON *schema = cJSON_GetObjectItemCaseSensitive(t, "inputSchema");
        cJSON *fn = cJSON_CreateObject();
        cJSON_AddItemToObject(fn, "name", cJSON_Duplicate(name, 1));
        cJSON_AddItemToObject(fn, "description", cJSON_Duplicate(desc, 1));
        cJSON_AddItemToObject(fn, api == AG_API_OPENAI ? "parameters" : "input_schema",
                              cJSON_Duplicate(schema, 1));
        if (api == AG_API_OPENAI) {
            cJSON *w = cJSON_CreateObject();
            cJSON_AddStringToObject(w, "type", "function");
            cJSON_AddItemToObject(w, "function", fn);
            fn = w;
        }
        cJSON_AddItemToArray(out, fn);
    }
    return out;
}

static char *request_body(const AgLlm *llm, const char *system, const cJSON *messages,
                          const cJSON *tools)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "model", llm->model);
    if (llm->max_tokens > 0 || llm->api == AG_API_ANTHROPIC)
        cJSON_AddNumberToObject(r, "max_tokens", llm->max_tokens > 0 ? llm->max_tokens : 8192);
    cJSON *msgs = cJSON_Duplicate(messages, 1);
    if (llm->api == AG_API_OPENAI) {
        cJSON *sys = cJSON_CreateObject();
        cJSON_AddStringToObject(sys, "role", "system");
        cJSON_AddStringToObject(sys, "content", system);
        cJSON_InsertItemInArray(msgs, 0, sys);
    } else {
        cJSON_AddStringToObject(r, "system", system);
    }
    cJSON_AddItemToObject(r, "messages", msgs);
    if (tools)
        cJSON_AddItemToObject(r, "tools", tools_for(llm->api, tools));
    char *s = cJSON_PrintUnformatted(r);
    cJSON_Delete(r);
    return s;
}

/* ---- replies -------------------------------------------------------------------- */

static long usage(const cJSON *j, const char *key)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "usage"), key);
    return cJSON_IsNumber(n) ? (long)n->valuedouble : 0;
}

static void add_call(AgReply *r, const char *id, const char *name, cJSON *args)
{
    if (r->ncalls == (int)(sizeof r->calls / sizeof r->calls[0])) {
        cJSON_Delete(args);
        return;
    }
    AgToolCall *c = &r->calls[r->ncalls++];
    c->id = ag_strdup(id ? id : "");
    c->name = ag_strdup(name ? name : "");
    c->args = args ? args : cJSON_CreateObject();
}

static int parse_openai(const cJSON *j, AgReply *r)
{
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "choices"), 0), "message");
    if (!cJSON_IsObject(msg))
        return 0;
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
    r->text = ag_strdup(cJSON_IsString(content) ? content->valuestring : "");
    r->assistant = cJSON_CreateObject();
    cJSON_AddStringToObject(r->assistant, "role", "assistant");
    cJSON_AddItemToObject(r->assistant, "content", cJSON_IsString(content)
                                                       ? cJSON_CreateString(content->valuestring)
                                                       : cJSON_CreateNull());
    const cJSON *calls = cJSON_GetObjectItemCaseSensitive(msg, "tool_calls"), *c;
    if (cJSON_GetArraySize(calls) > 0)
        cJSON_AddItemToObject(r->assistant, "tool_calls", cJSON_Duplicate(calls, 1));
    cJSON_ArrayForEach(c, calls) {
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(c, "function");
        const char *args = ag_json_find_string(fn, "arguments");
        cJSON *a = args ? cJSON_Parse(args) : NULL;
        if (args && !cJSON_IsObject(a)) {
            cJSON_Delete(a);
            a = cJSON_CreateObject();
            cJSON_AddStringToObject(a, "_unparsed_arguments", args);
        }
        add_call(r, ag_json_find_string(c, "id"), ag_json_find_string(fn, "name"), a);
    }
    /* every call in the history must be answered: keep only those we run */
    cJSON *kept = cJSON_GetObjectItemCaseSensitive(r->assistant, "tool_calls");
    while (kept && cJSON_GetArraySize(kept) > r->ncalls)
        cJSON_DeleteItemFromArray(kept, r->ncalls);
    r->tokens_in = usage(j, "prompt_tokens");
    r->tokens_out = usage(j, "completion_tokens");
    return 1;
}

static int parse_anthropic(const cJSON *j, AgReply *r)
{
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(j, "content"), *b;
    if (!cJSON_IsArray(content))
        return 0;
    r->text = ag_strdup("");
    cJSON_ArrayForEach(b, content) {
        const char *type = ag_json_find_string(b, "type");
        if (type && !strcmp(type, "text")) {
            char *t = ag_printf("%s%s", r->text, ag_json_find_string(b, "text") ? ag_json_find_string(b, "text") : "");
            free(r->text);
            r->text = t;
        } else if (type && !strcmp(type, "tool_use")) {
            const cJSON *in = cJSON_GetObjectItemCaseSensitive(b, "input");
            add_call(r, ag_json_find_string(b, "id"), ag_json_find_string(b, "name"),
                     cJSON_IsObject(in) ? cJSON_Duplicate(in, 1) : NULL);
        }
    }
    r->assistant = cJSON_CreateObject();
    cJSON_AddStringToObject(r->assistant, "role", "assistant");
    cJSON_AddItemToObject(r->assistant, "content", cJSON_Duplicate(content, 1));
    r->tokens_in = usage(j, "input_tokens");
    r->tokens_out = usage(j, "output_tokens");
    return 1;
}

static int retryable(CURLcode cc, long status)
{
    if (cc != CURLE_OK)
        return cc == CURLE_OPERATION_TIMEDOUT || cc == CURLE_COULDNT_CONNECT ||
               cc == CURLE_RECV_ERROR || cc == CURLE_SEND_ERROR || cc == CURLE_GOT_NOTHING ||
               cc == CURLE_PARTIAL_FILE;
    return status == 429 || status >= 500;
}

/* the body with every copy of the key blanked (an endpoint may echo it) */
static void redact(const AgLlm *llm, char *body)
{
    size_t n = llm->key ? strlen(llm->key) : 0;
    for (char *p = body && n >= 4 ? strstr(body, llm->key) : NULL; p; p = strstr(p + n, llm->key))
        memset(p, '*', n);
}

static void malformed(CakeCtx *ctx, const AgLlm *llm, const char *body)
{
    Diag *d = diag_report(ctx, E1106, IR_NOSPAN, "malformed reply from %s: %.200s", llm->endpoint,
                          body && *body ? body : "(empty body)");
    diag_help(ctx, d, llm->api == AG_API_OPENAI
                          ? "an OpenAI-style reply has choices[0].message; is --api right?"
                          : "an Anthropic-style reply has a content array; is --api right?");
}

int ag_llm_chat(CakeCtx *ctx, const AgLlm *llm, const char *system, const cJSON *messages,
                const cJSON *tools, AgReply *out)
{
    memset(out, 0, sizeof *out);
    char *req = request_body(llm, system, messages, tools);
    double wait = llm->backoff_s > 0 ? llm->backoff_s : 1;
    Body body = {0};
    CURLcode cc = CURLE_OK;
    long status = 0;
    for (int attempt = 0; attempt <= llm->retries; attempt++) {
        free(body.buf);
        body = (Body){0};
        out->attempts = attempt + 1;
        cc = post(llm, req, &body, &status);
        if (!retryable(cc, status) || attempt == llm->retries)
            break;
        fprintf(stderr, "agent: %s, retrying in %.2g s\n",
                cc != CURLE_OK ? llm->curl->easy_strerror(cc) : status == 429 ? "HTTP 429 (rate limited)"
                                                                         : "HTTP 5xx", wait);
        usleep((useconds_t)(wait * 1e6));
        wait = wait * 2 > 60 ? 60 : wait * 2;
    }
    free(req);
    out->http_status = status;
    redact(llm, body.buf);
    int rc = 1;
    if (cc != CURLE_OK) {
        Diag *d = diag_report(ctx, E1105, IR_NOSPAN, "request to %s failed after %d attempts: %s",
                              llm->endpoint, out->attempts, llm->curl->easy_strerror(cc));
        diag_help(ctx, d, "check --endpoint and the network; --http-timeout raises the time limit");
    } else if (status < 200 || status >= 300) {
        Diag *d = diag_report(ctx, E1105, IR_NOSPAN, "%s answered HTTP %ld after %d attempts: %.300s",
                              llm->endpoint, status, out->attempts, body.buf ? body.buf : "");
        diag_help(ctx, d, status == 401 || status == 403 ? "the API key was refused: check the key's environment variable"
                                                         : "see the endpoint's message above");
    } else {
        cJSON *j = cJSON_Parse(body.buf ? body.buf : "");
        if (cJSON_IsObject(j) && (llm->api == AG_API_OPENAI ? parse_openai(j, out) : parse_anthropic(j, out)))
            rc = 0;
        else
            malformed(ctx, llm, body.buf);
        cJSON_Delete(j);
    }
    free(body.buf);
    return rc;
}

void ag_reply_free(AgReply *r)
{
    free(r->text);
    for (int i = 0; i < r->ncalls; i++) {
        free(r->calls[i].id);
        free(r->calls[i].name);
        cJSON_Delete(r->calls[i].args);
    }
    cJSON_Delete(r->assistant);
    memset(r, 0, sizeof *r);
}

/* ---- the history ----------------------------------------------------------------- */

void ag_msg_user(AgApi api, cJSON *messages, const char *text)
{
    (void)api;
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "role", "user");
    cJSON_AddStringToObject(m, "content", text);
    cJSON_AddItemToArray(messages, m);
}

void ag_msg_assistant(AgApi api, cJSON *messages, const AgReply *r)
{
    (void)api;
    if (r->assistant)
        cJSON_AddItemToArray(messages, cJSON_Duplicate(r->assistant, 1));
}

/* Anthropic's tool results are blocks of one user message: consecutive
 * results join the last message when it is one of those */
void ag_msg_tool_result(AgApi api, cJSON *messages, const char *id, const char *text)
{
    cJSON *m;
    if (api == AG_API_OPENAI) {
        m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "role", "tool");
        cJSON_AddStringToObject(m, "tool_call_id", id);
        cJSON_AddStringToObject(m, "content", text);
        cJSON_AddItemToArray(messages, m);
        return;
    }
    cJSON *block = cJSON_CreateObject();
    cJSON_AddStringToObject(block, "type", "tool_result");
    cJSON_AddStringToObject(block, "tool_use_id", id);
    cJSON_AddStringToObject(block, "content", text);
    cJSON *last = cJSON_GetArrayItem(messages, cJSON_GetArraySize(messages) - 1);
    const char *role = ag_json_find_string(last, "role");
    cJSON *content = cJSON_GetObjectItemCaseSensitive(last, "content");
    if (role && !strcmp(role, "user") && cJSON_IsArray(content)) {
        cJSON_AddItemToArray(content, block);
        return;
    }
    m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "role", "user");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(m, "content"), block);
    cJSON_AddItemToArray(messages, m);
}

char *ag_extract_tir(const char *text)
{
    const char *start = text ? strstr(text, "```tir") : NULL;
    if (!start)
        return NULL;
    start = strchr(start, '\n');
    if (!start)
        return NULL;
    start++;
    const char *end = strstr(start, "```");
    if (!end)
        return NULL;
    return ag_printf("%.*s", (int)(end - start), start);
}
