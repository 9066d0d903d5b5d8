/* json.c — diagnostics as the JSON document of the CLI contract
 * (docs/diagnostics.md, "JSON format"). */
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "cake.h"

static const char *sev_name(uint8_t sev)
{
    return sev == SEV_ERROR ? "error" : sev == SEV_WARNING ? "warning" : "note";
}

static cJSON *span_json(const CakeCtx *ctx, Span s)
{
    uint32_t line, col, eline, ecol;
    span_linecol(ctx, s, &line, &col, &eline, &ecol);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", ctx->files[s.file].path);
    cJSON_AddNumberToObject(o, "line", line);
    cJSON_AddNumberToObject(o, "col", col);
    cJSON_AddNumberToObject(o, "end_line", eline);
    cJSON_AddNumberToObject(o, "end_col", ecol);
    return o;
}

static int has_span(const CakeCtx *ctx, Span s) { return s.file < ctx->nfiles; }

/* the source lines the span covers (at most 3), without the final newline */
static cJSON *snippet_json(const CakeCtx *ctx, Span s)
{
    uint32_t line, col, eline, ecol;
    span_linecol(ctx, s, &line, &col, &eline, &ecol);
    const SourceFile *f = &ctx->files[s.file];
    if (eline > line + 2)
        eline = line + 2;
    uint32_t lo = f->line_starts[line - 1];
    uint32_t hi = eline < f->nlines ? f->line_starts[eline] : f->len;
    while (hi > lo && (f->text[hi - 1] == '\n' || f->text[hi - 1] == '\r'))
        hi--;
    char *buf = malloc(hi - lo + 1);
    if (!buf)
        return cJSON_CreateString("");
    /* JSON strings must be valid UTF-8: replace other bytes */
    for (uint32_t i = lo; i < hi; i++) {
        unsigned char c = (unsigned char)f->text[i];
        buf[i - lo] = (char)(c >= 0x80 || (c < 0x20 && c != '\t' && c != '\n') ? '?' : c);
    }
    buf[hi - lo] = 0;
    cJSON *str = cJSON_CreateString(buf);
    free(buf);
    return str;
}

static cJSON *diag_json(const CakeCtx *ctx, const Diag *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "code", ir_diag_info[d->code].code);
    cJSON_AddStringToObject(o, "severity", sev_name(d->severity));
    cJSON_AddStringToObject(o, "message", d->msg);
    if (has_span(ctx, d->span)) {
        cJSON_AddItemToObject(o, "span", span_json(ctx, d->span));
        cJSON_AddItemToObject(o, "snippet", snippet_json(ctx, d->span));
    } else {
        cJSON_AddNullToObject(o, "span");
        cJSON_AddNullToObject(o, "snippet");
    }
    cJSON *notes = cJSON_AddArrayToObject(o, "notes");
    for (uint32_t i = 0; i < d->nnotes; i++) {
        cJSON *n = cJSON_CreateObject();
        cJSON_AddStringToObject(n, "message", d->notes[i].msg);
        if (has_span(ctx, d->notes[i].span))
            cJSON_AddItemToObject(n, "span", span_json(ctx, d->notes[i].span));
        cJSON_AddItemToArray(notes, n);
    }
    cJSON *helps = cJSON_AddArrayToObject(o, "help");
    for (uint32_t i = 0; i < d->nhelps; i++)
        cJSON_AddItemToArray(helps, cJSON_CreateString(d->helps[i]));
    cJSON *fixits = cJSON_AddArrayToObject(o, "fixits");
    for (uint32_t i = 0; i < d->nfixits; i++) {
        const DiagFixit *f = &d->fixits[i];
        if (!has_span(ctx, f->span))
            continue;
        cJSON *x = cJSON_CreateObject();
        cJSON_AddItemToObject(x, "span", span_json(ctx, f->span));
        cJSON_AddStringToObject(x, "replacement", f->replacement);
        cJSON_AddStringToObject(x, "applicability", f->applicability);
        cJSON_AddItemToArray(fixits, x);
    }
    return o;
}

char *cake_diags_json(const CakeCtx *ctx, const char *command, int ok)
{
    return cake_diags_json_with(ctx, command, ok, NULL);
}

char *cake_diags_json_with(const CakeCtx *ctx, const char *command, int ok, void *extra)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "command", command ? command : "");
    cJSON_AddBoolToObject(root, "ok", ok);
    cJSON_AddNumberToObject(root, "errors", ctx->nerrors);
    cJSON_AddNumberToObject(root, "warnings", ctx->nwarnings);
    cJSON *list = cJSON_AddArrayToObject(root, "diagnostics");
    for (uint32_t i = 0; i < ctx->ndiags; i++)
        cJSON_AddItemToArray(list, diag_json(ctx, &ctx->diags[i]));
    if (extra) { /* the command's own results: moved into the document */
        cJSON *ex = extra;
        while (ex->child) {
            cJSON *item = cJSON_DetachItemViaPointer(ex, ex->child);
            cJSON_AddItemToObject(root, item->string, item);
        }
        cJSON_Delete(ex);
    }
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}

void cake_json_delete(void *json)
{
    cJSON_Delete(json);
}
