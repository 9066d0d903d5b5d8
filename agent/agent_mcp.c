/* agent_mcp.c — `cakec mcp [--task TASK.json] [--docs DIR]`: a Model Context
 * Protocol server on stdin/stdout. JSON-RPC 2.0, one message per line:
 * initialize, ping, tools/list, tools/call, and notifications (no id, no
 * answer). A tool's answer is its CLI JSON document, both as the text content
 * and as structuredContent. Every tool runs in a child process (agent_tools.c),
 * so a kernel that faults or hangs is an answer and the server goes on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agent.h"

#define MCP_PROTOCOL "2025-06-18"

static void send_json(cJSON *msg)
{
    char *s = cJSON_PrintUnformatted(msg);
    if (s) {
        fputs(s, stdout);
        fputc('\n', stdout);
        fflush(stdout);
        free(s);
    }
    cJSON_Delete(msg);
}

static cJSON *reply(const cJSON *id)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "jsonrpc", "2.0");
    cJSON_AddItemToObject(r, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
    return r;
}

static void send_error(const cJSON *id, int code, const char *msg)
{
    cJSON *r = reply(id);
    cJSON *e = cJSON_AddObjectToObject(r, "error");
    cJSON_AddNumberToObject(e, "code", code);
    cJSON_AddStringToObject(e, "message", msg);
    send_json(r);
}

static cJSON *initialize(const cJSON *params)
{
    cJSON *res = cJSON_CreateObject();
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, "protocolVersion");
    cJSON_AddStringToObject(res, "protocolVersion", cJSON_IsString(v) ? v->valuestring : MCP_PROTOCOL);
    cJSON *caps = cJSON_AddObjectToObject(res, "capabilities");
    cJSON_AddObjectToObject(caps, "tools");
    cJSON *info = cJSON_AddObjectToObject(res, "serverInfo");
    cJSON_AddStringToObject(info, "name", "cakec");
    cJSON_AddStringToObject(info, "version", CAKE_VERSION);
    cJSON_AddStringToObject(res, "instructions",
                            "Tools for writing TIR GPU kernels: check (diagnostics as JSON), "
                            "compile, cost, run (check against the reference and time), docs "
                            "(a diagnostic code or a construct), submit. Pass the kernel as "
                            "`source` or `file`.");
    return res;
}

static cJSON *call_tool(AgTools *tools, const cJSON *params)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
    if (!cJSON_IsString(name))
        return NULL;
    cJSON *doc = ag_tools_call(tools, name->valuestring, args);
    cJSON *res = cJSON_CreateObject();
    cJSON *content = cJSON_AddArrayToObject(res, "content");
    cJSON *text = cJSON_CreateObject();
    cJSON_AddStringToObject(text, "type", "text");
    char *s = cJSON_PrintUnformatted(doc);
    cJSON_AddStringToObject(text, "text", s ? s : "{}");
    free(s);
    cJSON_AddItemToArray(content, text);
    /* a failing check is an answer; a call the tool could not carry out is an error */
    int bad = cJSON_GetObjectItemCaseSensitive(doc, "error") != NULL;
    cJSON_AddItemToObject(res, "structuredContent", doc);
    cJSON_AddBoolToObject(res, "isError", bad);
    return res;
}

/* one message; requests get one answer, notifications none */
static void handle(AgTools *tools, const char *line)
{
    cJSON *msg = cJSON_Parse(line);
    if (!msg) {
        send_error(NULL, -32700, "parse error: not JSON");
        return;
    }
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
    if (!cJSON_IsObject(msg) || !cJSON_IsString(method)) {
        if (id && !cJSON_GetObjectItemCaseSensitive(msg, "result"))
            send_error(id, -32600, "invalid request: no method");
        cJSON_Delete(msg);
        return;
    }
    const char *m = method->valuestring;
    cJSON *result = NULL;
    if (!strcmp(m, "initialize"))
        result = initialize(params);
    else if (!strcmp(m, "ping"))
        result = cJSON_CreateObject();
    else if (!strcmp(m, "tools/list")) {
        result = cJSON_CreateObject();
        cJSON_AddItemToObject(result, "tools", ag_tools_list());
    } else if (!strcmp(m, "tools/call")) {
        result = call_tool(tools, params);
        if (!result && id) {
            send_error(id, -32602, "tools/call needs params.name");
            cJSON_Delete(msg);
            return;
        }
    }
    if (!id) {                       /* a notification: never answered */
        cJSON_Delete(result);
    } else if (!result) {
        send_error(id, -32601, "method not found");
    } else {
        cJSON *r = reply(id);
        cJSON_AddItemToObject(r, "result", result);
        send_json(r);
    }
    cJSON_Delete(msg);
}

int ag_cmd_mcp(CakeCtx *ctx, int argc, char **argv)
{
    const char *task_path = NULL, *docs_flag = NULL;
    int json = 0;   /* for the server's own errors before it starts */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--task") && i + 1 < argc)
            task_path = argv[++i];
        else if (!strcmp(argv[i], "--docs") && i + 1 < argc)
            docs_flag = argv[++i];
        else {
            Diag *d = diag_report(ctx, E0002, IR_NOSPAN, "mcp: unexpected argument `%s`", argv[i]);
            diag_help(ctx, d, "cakec mcp [--task TASK.json] [--docs DIR]");
            return ag_finish(ctx, "mcp", json, 1, NULL);
        }
    }
    AgTask task;
    if (task_path && ag_task_load(ctx, task_path, &task))
        return ag_finish(ctx, "mcp", json, 1, NULL);
    char docs[4096];
    ArRunner runner = ar_local_runner();
    AgTools tools;
    if (!ag_tools_init(&tools, &runner, task_path ? &task : NULL,
                       ag_docs_dir(docs_flag, docs, sizeof docs))) {
        diag_report(ctx, E0001, IR_NOSPAN, "mcp: cannot create a temporary folder");
        return ag_finish(ctx, "mcp", json, 2, NULL);
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = 0;
        if (n > 0)
            handle(&tools, line);
    }
    free(line);
    ag_tools_free(&tools);
    if (task_path)
        ag_task_free(&task);
    return 0;
}
