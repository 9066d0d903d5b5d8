/* agent_main.c — the agent commands' table (the driver dispatches on it),
 * their common output, and `cakec docs TOPIC`. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cake.h"
#include "agent.h"

static const AgCommand commands[] = {
    {"mcp", ag_cmd_mcp,
     "cakec mcp [--task TASK.json] [--docs DIR]        MCP server on stdio (docs/agent.md)"},
    {"agent", ag_cmd_agent,
     "cakec agent TASK.json [--api openai|anthropic] [--endpoint URL] [--model M] [--plain]\n"
     "                 [--iterations N] [--tokens N] [--wall S] [--out DIR] [--lessons FILE]"},
    {"tune", ag_cmd_tune,
     "cakec tune FILE --space BM=64,128 STAGES=2,3 ... [--shape M=...] [--top K] [--cap N]\n"
     "                 [--set ...] [--check] [--timeout S] [-o BEST.tir] [--json]"},
    {"docs", ag_cmd_docs,
     "cakec docs TOPIC [--docs DIR] [--json]          the docs section of a code or construct"},
    {"lessons", ag_cmd_lessons,
     "cakec lessons [FILE] [--family F] [--json]      what earlier agent runs learned"},
};

const AgCommand *ag_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(name, commands[i].name))
            return &commands[i];
    return NULL;
}

void ag_print_usage(FILE *out)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "       %s\n", commands[i].usage);
}

int ag_finish(CakeCtx *ctx, const char *command, int json, int code, cJSON *extra)
{
    if (json) {
        char *s = cake_diags_json_with(ctx, command, ctx->nerrors == 0 && code == 0, extra);
        if (s) {
            puts(s);
            free(s);
        }
    } else {
        diag_print_text(ctx, stderr, isatty(fileno(stderr)) && !getenv("NO_COLOR"));
        cJSON_Delete(extra);
    }
    fflush(stdout);
    return code;
}

int ag_wants_json(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++)
        json |= !strcmp(argv[i], "--json");
    return json;
}

int ag_simple_args(CakeCtx *ctx, const char *command, const char *flag, int argc, char **argv,
                   const char **pos, const char **value, int *json)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            *json = 1;
        else if (!strcmp(argv[i], flag) && i + 1 < argc)
            *value = argv[++i];
        else if (!*pos && argv[i][0] != '-')
            *pos = argv[i];
        else {
            diag_report(ctx, E0002, IR_NOSPAN, "%s: unexpected argument `%s`", command, argv[i]);
            return 0;
        }
    }
    return 1;
}

/* cakec docs TOPIC [--docs DIR] [--json] */
int ag_cmd_docs(CakeCtx *ctx, int argc, char **argv)
{
    const char *topic = NULL, *flag = NULL;
    int json = 0;
    if (!ag_simple_args(ctx, "docs", "--docs", argc, argv, &topic, &flag, &json))
        return ag_finish(ctx, "docs", json, 1, NULL);
    if (!topic) {
        Diag *d = diag_report(ctx, E0002, IR_NOSPAN, "docs: no topic");
        diag_help(ctx, d, "cakec docs E0801, cakec docs mbarrier");
        return ag_finish(ctx, "docs", json, 1, NULL);
    }
    char buf[4096];
    const char *dir = ag_docs_dir(flag, buf, sizeof buf);
    if (!dir) {
        Diag *d = diag_report(ctx, E1108, IR_NOSPAN, "the docs folder (with tir.md) was not found");
        diag_help(ctx, d, "pass --docs DIR or set CAKE_DOCS to the docs/ folder of the source tree");
        return ag_finish(ctx, "docs", json, 1, NULL);
    }
    cJSON *j = ag_docs_lookup(dir, topic, 0);
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok"))) {
        Diag *d = diag_report(ctx, E1109, IR_NOSPAN, "no documentation section for `%s`", topic);
        diag_help(ctx, d, "a diagnostic code (E0801) or a word of a heading of docs/tir.md");
        cJSON_Delete(j);
        return ag_finish(ctx, "docs", json, 1, NULL);
    }
    if (!json) {
        fputs(cJSON_GetObjectItemCaseSensitive(j, "text")->valuestring, stdout);
        cJSON_Delete(j);
        return ag_finish(ctx, "docs", 0, 0, NULL);
    }
    cJSON_DeleteItemFromObject(j, "command");
    cJSON_DeleteItemFromObject(j, "ok");
    return ag_finish(ctx, "docs", 1, 0, j);
}
