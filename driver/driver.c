/* driver.c — the cakec command line: options, the commands on libcake, output.
 *
 *   cakec check FILE [--set ...] [--shape ...] [--json]   parse, resolve, verify
 *   cakec print FILE                 the canonical IR after name resolution
 *   cakec FILE [-o out] [--target T] [--emit E]
 *   cakec cost FILE --shape ... [--set ...] [--json]
 *   cakec run FILE --shape ... [--reference R] [--check] [--bench] [--json]
 *
 * Exit codes: 0 ok, 1 the input is wrong, 2 internal error, 3 device problem.
 * With --json exactly one JSON document goes to stdout, whatever happens (a
 * compiler bug included: libcake returns 2, and the driver guards its own code). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "cake.h"
#include "protect.h"
#include "driver.h"
#include "agent.h"
#include "lib_cmd.h"

static const char usage[] =
    "usage: cakec FILE [-o OUT] [--target sm_90a|sm_80|gfx942|gfx90a] [--emit ptx|llvm|hsaco|obj|tirl]\n"
    "                 [--set BM=64,...] [--no-report]\n"
    "       cakec check FILE [--set P=V,...] [--shape M=4096,...] [--kernel NAME] [--json]\n"
    "       cakec print FILE\n"
    "       cakec cost FILE [--shape M=4096,...] [--set BM=64,...] [--target T] [--device D]\n"
    "                 [--kernel NAME] [--sweep P=a,b,c Q=x,y] [--compare OTHER.tir] [--svg OUT.svg]\n"
    "                 [--explain] [--json]\n"
    "       cakec run FILE [--shape ...] [--set ...] [--reference REF.tir] [--check] [--bench]\n"
    "                 [--target T] [--kernel NAME] [--timeout SECONDS] [--runs N] [--seed S] [--tol-scale X]\n"
    "                 [--sample] [--dump-outputs DIR] [--sim [--sm-count N] [--no-race]] [--json]\n"
    "       cakec calibrate MEASURED.jsonl [--device D] [-o CONSTANTS.json] [--json]\n"
    "                 fit the cost model's constants (docs/cost-model.md)\n"
    "       cakec lib check|build|ops|select|run|bench|tune ... (docs/library.md)\n"
    "       cakec --help | --version\n"
    "options:\n"
    "  --json               print one JSON document with every diagnostic to stdout\n"
    "  --set P=V,...        check/run/compile: bind parameters (a value a parameter declares\n"
    "                       with `in`); check verifies every combination of declared values\n"
    "                       of the parameters not bound (at most 64)\n"
    "  --shape M=4096,...   check: also evaluate the concrete checks at this shape\n"
    "  --dump-after STAGE   print the IR after STAGE to stderr: parse, resolve, verify, or a\n"
    "                       lowering pass (bind-params legalize unroll pipes async distribute\n"
    "                       roles abi unsupported), or all\n"
    "exit codes: 0 ok, 1 the input is wrong, 2 internal error, 3 device problem\n";

/* ---- output ------------------------------------------------------------- */

/* source order (the lexer reports before the parser); stable, spanless first */
static void sort_diags(CakeCtx *ctx)
{
    for (uint32_t i = 1; i < ctx->ndiags; i++) {
        Diag d = ctx->diags[i];
        uint32_t j = i;
        while (j > 0 && (ctx->diags[j - 1].span.file > d.span.file ||
                         (ctx->diags[j - 1].span.file == d.span.file &&
                          ctx->diags[j - 1].span.lo > d.span.lo))) {
            ctx->diags[j] = ctx->diags[j - 1];
            j--;
        }
        ctx->diags[j] = d;
    }
}

int drv_finish_with(CakeCtx *ctx, const Options *o, int code, void *extra)
{
    sort_diags(ctx);
    if (o->json && code == EXIT_BUG) {
        if (!extra)
            extra = cJSON_CreateObject();
        cJSON_AddBoolToObject(extra, "internal_error", 1);
    }
    if (o->json) {
        char *s = cake_diags_json_with(ctx, o->command ? o->command : "cakec",
                                       ctx->nerrors == 0 && code == 0, extra);
        if (s) {
            puts(s);
            free(s);
        }
    } else {
        int color = isatty(fileno(stderr)) && !getenv("NO_COLOR");
        diag_print_text(ctx, stderr, color);
        cJSON_Delete(extra);
    }
    fflush(stdout);
    return code;
}

int drv_finish(CakeCtx *ctx, const Options *o, int code)
{
    return drv_finish_with(ctx, o, code, NULL);
}

static int usage_error(CakeCtx *ctx, const Options *o, const char *msg)
{
    Diag *d = diag_report(ctx, E0002, IR_NOSPAN, "%s", msg);
    diag_help(ctx, d, "run `cakec --help` for the usage");
    return drv_finish(ctx, o, EXIT_USER);
}

/* ---- commands ----------------------------------------------------------- */

static int run_command(CakeCtx *ctx, Options *o)
{
    int print = !strcmp(o->command, "print");
    Module *m;
    int check = !strcmp(o->command, "check") && (o->set || o->shape);
    int rc = check ? cake_check_file(ctx, o->file, o->kernel, o->set, o->shape, &m)
                   : cake_verify_file(ctx, o->file, print ? "resolve" : NULL, &m);
    if (rc)
        return drv_finish(ctx, o, rc == 2 ? EXIT_BUG : EXIT_USER);
    if (print) {
        ir_print_module(ctx, m, stdout);
        return drv_finish(ctx, o, EXIT_OK);
    }
    if (!strcmp(o->command, "check"))
        return drv_finish(ctx, o, EXIT_OK);
    if (!strcmp(o->command, "compile"))
        return drv_cmd_compile(ctx, o, m);
    if (!strcmp(o->command, "run"))
        return drv_cmd_run(ctx, o, m);
    return drv_cmd_cost(ctx, o, m);
}

static int take_value(int argc, char **argv, int *i, const char **dst)
{
    const char *a = argv[*i];
    const char *eq = strchr(a, '=');
    if (eq && a[0] == '-' && a[1] == '-') {
        *dst = eq + 1;
        return 1;
    }
    if (*i + 1 >= argc)
        return 0;
    *dst = argv[++*i];
    return 1;
}

static int opt_is(const char *a, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(a, name, n) && (a[n] == 0 || a[n] == '=');
}

/* returns NULL on success, else the error message */
static const char *parse_args(CakeCtx *ctx, int argc, char **argv, Options *o, int *info)
{
    static const char *const commands[] = {"check", "print", "cost", "run"};
    int first = 1;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--json"))
            o->json = 1;
    if (argc > 1)
        for (int c = 0; c < 4; c++)
            if (!strcmp(argv[1], commands[c])) {
                o->command = commands[c];
                first = 2;
            }
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        const char **dst = NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { *info = 'h'; return NULL; }
        if (!strcmp(a, "--version")) { *info = 'v'; return NULL; }
        if (!strcmp(a, "--json")) continue;
        if (!strcmp(a, "--check")) { o->check = 1; continue; }
        if (!strcmp(a, "--bench")) { o->bench = 1; continue; }
        if (!strcmp(a, "--sim")) { o->sim = 1; continue; }
        if (!strcmp(a, "--no-race")) { o->no_race = 1; continue; }
        if (!strcmp(a, "--sample")) { o->sample = 1; continue; }
        if (!strcmp(a, "--no-report")) { o->no_report = 1; continue; }
        if (!strcmp(a, "--explain")) { o->explain = 1; continue; }
        if (!strcmp(a, "-o")) dst = &o->out;
        else if (opt_is(a, "--target")) dst = &o->target;
        else if (opt_is(a, "--emit")) dst = &o->emit;
        else if (opt_is(a, "--shape")) dst = &o->shape;
        else if (opt_is(a, "--set")) dst = &o->set;
        else if (opt_is(a, "--reference")) dst = &o->reference;
        else if (opt_is(a, "--dump-after")) dst = &o->dump_after;
        else if (opt_is(a, "--kernel")) dst = &o->kernel;
        else if (opt_is(a, "--timeout")) dst = &o->timeout;
        else if (opt_is(a, "--runs")) dst = &o->runs;
        else if (opt_is(a, "--seed")) dst = &o->seed;
        else if (opt_is(a, "--dump-outputs")) dst = &o->dump_outputs;
        else if (opt_is(a, "--sm-count")) dst = &o->sm_count;
        else if (opt_is(a, "--tol-scale")) dst = &o->tol_scale;
        else if (opt_is(a, "--device")) dst = &o->device;
        else if (opt_is(a, "--compare")) dst = &o->compare;
        else if (opt_is(a, "--svg")) dst = &o->svg;
        else if (opt_is(a, "--sweep")) {
            /* the P=a,b,c items that follow (an item has '=', the file has none) */
            const char *v;
            if (!take_value(argc, argv, &i, &v))
                return ir_fmt(ctx, "option `%s` needs a value", a);
            do {
                if (o->nsweep >= 8)
                    return "--sweep takes at most 8 parameters";
                o->sweep[o->nsweep++] = v;
            } while (i + 1 < argc && argv[i + 1][0] != '-' && strchr(argv[i + 1], '=') && (v = argv[++i]));
            continue;
        }
        if (dst) {
            if (!take_value(argc, argv, &i, dst))
                return ir_fmt(ctx, "option `%s` needs a value", a);
            if (dst == &o->out && !strcmp(o->out, "-"))
                o->out = NULL;   /* `-o -` is standard output, as everywhere */
            continue;
        }
        if (a[0] == '-' && a[1])
            return ir_fmt(ctx, "unknown option `%s`", a);
        if (o->file)
            return ir_fmt(ctx, "more than one input file (`%s` and `%s`)", o->file, a);
        o->file = a;
    }
    if (!o->command)
        o->command = "compile";
    if (!o->file)
        return "no input file";
    if (o->dump_after) {
        int known = 0;
        for (int i = 0; ir_stage_names[i]; i++)
            known |= !strcmp(o->dump_after, ir_stage_names[i]);
        if (!known)
            return ir_fmt(ctx, "unknown stage `%s` for --dump-after (parse, resolve, verify, "
                               "a lowering pass of docs/tirl.md, all)", o->dump_after);
    }
    return NULL;
}

int drv_main(int argc, char **argv)
{
    CakeCtx *ctx = ctx_new();
    if (!ctx) {
        fputs("cakec: internal error: out of memory\n", stderr);
        return EXIT_BUG;
    }
    /* the agent commands (agent/agent_main.c) read their own options */
    if (argc > 1 && !strcmp(argv[1], "lib")) {   /* the library's commands (lib_cmd.c) */
        int rc = drv_cmd_lib(ctx, argc - 1, argv + 1);
        ctx_free(ctx);
        return rc;
    }
    if (argc > 1 && !strcmp(argv[1], "calibrate")) {   /* the cost model's fit (calibrate.c) */
        int rc = drv_cmd_calibrate(ctx, argc - 1, argv + 1);
        ctx_free(ctx);
        return rc;
    }
    const AgCommand *agent = argc > 1 ? ag_command(argv[1]) : NULL;
    if (agent) {
        int rc = agent->run(ctx, argc - 1, argv + 1);
        ctx_free(ctx);
        return rc;
    }
    Options o = {0};
    int info = 0;
    const char *err = parse_args(ctx, argc, argv, &o, &info);
    int code;
    if (info == 'h') {
        fputs(usage, stdout);
        fputs("agent commands (docs/agent.md):\n", stdout);
        ag_print_usage(stdout);
        code = EXIT_OK;
    } else if (info == 'v') {
        printf("cakec %s\n", CAKE_VERSION);
        code = EXIT_OK;
    } else if (err) {
        code = usage_error(ctx, &o, err);
    } else {
        ctx->dump_after = o.dump_after;
        /* the driver's own code is guarded like libcake's entry points */
        CAKE_PROTECTED_OR(ctx, code, run_command(ctx, &o), -1);
        if (code < 0)
            code = drv_finish(ctx, &o, EXIT_BUG);
    }
    ctx_free(ctx);
    return code;
}
