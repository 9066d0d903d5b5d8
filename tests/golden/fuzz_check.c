/* fuzz_check.c — libFuzzer entry for the whole of `cakec check`: parse,
 * resolve and verify any byte string, then render the diagnostics as text and
 * as JSON, through libcake. A crash, a leak, undefined behaviour, an internal
 * error (cake_verify_source returns 2: this entry aborts, which libFuzzer
 * reports) or a malformed JSON document is a finding.
 * tests/frontend/fuzz_parser.c covers the parser and the printer round trip;
 * this one reaches the verifier with whatever the parser accepts. */
#include <stdio.h>
#include <stdlib.h>
#include <cjson/cJSON.h>
#include "cake.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    CakeCtx *ctx = ctx_new();
    uint32_t file = ctx_add_file(ctx, "fuzz.tir", (const char *)data, (uint32_t)size);
    Module *m;
    if (cake_verify_source(ctx, file, "verify", &m) == 2) {
        fprintf(stderr, "fuzz_check: internal error: %s\n", ctx->bug_msg);
        abort();
    }
    char *json = cake_diags_json(ctx, "check", ctx->nerrors == 0);
    cJSON *doc = json ? cJSON_Parse(json) : NULL;
    if (!doc || !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "diagnostics"))) {
        fprintf(stderr, "fuzz_check: the JSON diagnostics do not parse:\n%s\n", json ? json : "(null)");
        abort();
    }
    cJSON_Delete(doc);
    free(json);
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        diag_print_text(ctx, null, 1);
        fclose(null);
    }
    ctx_free(ctx);
    return 0;
}
