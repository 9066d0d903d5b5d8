/* test_align.c — the alignment proofs (verifier/align.c) through the C API:
 * the machine-applicable fix-it of E0810 (an `assume` line before the body)
 * produces a file that parses and checks clean, wherever the body's `{`
 * stands. The golden files in tests/diag/align/ cover the messages. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "fe.h"
#include "verify.h"

/* parses, resolves and verifies src in a fresh context */
static CakeCtx *check(const char *src)
{
    CakeCtx *ctx = ctx_new();
    uint32_t file = ctx_add_file(ctx, "t.tir", src, (uint32_t)strlen(src));
    Module *m = fe_parse(ctx, file);
    fe_resolve(ctx, m);
    ver_verify(ctx, m);
    return ctx;
}

static int count(const CakeCtx *ctx, DiagCode code)
{
    int n = 0;
    for (uint32_t i = 0; i < ctx->ndiags; i++)
        n += ctx->diags[i].code == code;
    return n;
}

/* src with every distinct fix-it of the `code` diagnostics applied (they
 * insert, so no two overlap but several may be the same insertion) */
static char *apply_fixits(const CakeCtx *ctx, const char *src, DiagCode code)
{
    const DiagFixit *fx[16];
    int n = 0;
    for (uint32_t i = 0; i < ctx->ndiags; i++) {
        const Diag *d = &ctx->diags[i];
        for (uint32_t j = 0; d->code == code && j < d->nfixits && n < 16; j++) {
            int dup = 0;
            for (int h = 0; h < n; h++)
                dup |= fx[h]->span.lo == d->fixits[j].span.lo && !strcmp(fx[h]->replacement, d->fixits[j].replacement);
            assert_string_equal(d->fixits[j].applicability, "machine-applicable");
            if (!dup)
                fx[n++] = &d->fixits[j];
        }
    }
    assert_true(n > 0);
    size_t len = strlen(src), extra = 0;
    for (int i = 0; i < n; i++)
        extra += strlen(fx[i]->replacement);
    char *out = calloc(len + extra + 1, 1);
    size_t at = 0, w = 0;
    for (size_t pos = 0; pos <= len; pos++) { /* insertions in source order */
        for (int i = 0; i < n; i++)
            if (fx[i]->span.lo == pos) {
                assert_int_equal(fx[i]->span.hi, fx[i]->span.lo);
                memcpy(out + w, src + at, pos - at);
                w += pos - at;
                at = pos;
                memcpy(out + w, fx[i]->replacement, strlen(fx[i]->replacement));
                w += strlen(fx[i]->replacement);
            }
    }
    memcpy(out + w, src + at, len - at);
    return out;
}

static void fixit_checks_clean(const char *src, DiagCode code, int want)
{
    CakeCtx *ctx = check(src);
    assert_int_equal(count(ctx, code), want);
    assert_int_equal((int)ctx->nerrors, want);
    char *fixed = apply_fixits(ctx, src, code);
    CakeCtx *again = check(fixed);
    if (again->nerrors) {
        diag_print_text(again, stderr, 0);
        fail_msg("the fixed file does not check clean:\n%s", fixed);
    }
    ctx_free(again);
    ctx_free(ctx);
    free(fixed);
}

static const char *ROW_SUM =
    "kernel row_sum\n"
    "  target sm_80\n"
    "  arg x: global bf16[M, N]\n"
    "  arg y: global f32[M]\n"
    "  grid [M]\n"
    "  threads 32\n"
    "{\n"
    "  var s: f32 = 0\n"
    "  for i in thread.x * 8 .. N step 32 * 8 {\n"
    "    s += hsum(load x[block.x, i : +8] as f32x8 mask i + 8 <= N)\n"
    "  }\n"
    "  let t = reduce.warp.add(s)\n"
    "  if lane == 0 {\n"
    "    store y[block.x] <- t\n"
    "  }\n"
    "}\n";

/* the `{` on the last header line: the fix-it starts a new line */
static const char *BRACE_ON_HEADER =
    "kernel copy2\n"
    "  target sm_80\n"
    "  arg x: global f32[M, K]\n"
    "  arg y: global f32[M, K]\n"
    "  grid [M]\n"
    "  threads 64 {\n"
    "  for i in thread.x * 4 .. K step 64 * 4 {\n"
    "    store y[block.x, i : +4] <- (load x[block.x, i : +4] mask i + 4 <= K) mask i + 4 <= K\n"
    "  }\n"
    "}\n";

static const char *CP_ASYNC =
    "kernel stage\n"
    "  target sm_80\n"
    "  arg A: global bf16[M, K]\n"
    "  grid [cdiv(M, 16)]\n"
    "  threads 32\n"
    "  assume M % 16 == 0\n"
    "{\n"
    "  shared As: bf16[16, 64]\n"
    "  for c in 0 .. 4 unroll {\n"
    "    let q = c * 32 + thread.x ; let r = q / 8 ; let col = (q % 8) * 8\n"
    "    cp.async As[r, col : +8] <- A[block.x * 16 + r, col : +8] mask col + 8 <= K\n"
    "  }\n"
    "  cp.async.commit\n"
    "  cp.async.wait 0\n"
    "  sync\n"
    "}\n";

static void fixit_row_sum(void **state)
{
    (void)state;
    fixit_checks_clean(ROW_SUM, E0810, 1);
}

static void fixit_brace_on_header(void **state)
{
    (void)state;
    fixit_checks_clean(BRACE_ON_HEADER, E0810, 2);
}

static void fixit_cp_async(void **state)
{
    (void)state;
    fixit_checks_clean(CP_ASYNC, E0810, 1);
}

/* a mask proves the alignment of the access it guards, but not a cp.async's:
 * a false mask still writes the zero-filled destination */
static void masks(void **state)
{
    (void)state;
    CakeCtx *ctx = check(
        "kernel m\n"
        "  target sm_80\n"
        "  arg x: global f32[M, K] align 16\n"
        "  arg y: global f32[M, K] align 16\n"
        "  grid [M]\n"
        "  threads 64\n"
        "{\n"
        "  for i in thread.x * 4 .. K step 64 * 4 {\n"
        "    store y[block.x, i : +4] <- (load x[block.x, i : +4] mask K % 4 == 0 && i + 4 <= K) "
        "mask K % 4 == 0 && i + 4 <= K\n"
        "  }\n"
        "}\n");
    assert_int_equal((int)ctx->nerrors, 0);
    ctx_free(ctx);
    size_t len = strlen(CP_ASYNC);
    char *src = calloc(len + 32, 1);
    const char *m = strstr(CP_ASYNC, "mask col + 8 <= K");
    assert_non_null(m);
    size_t at = (size_t)(m - CP_ASYNC) + strlen("mask ");
    memcpy(src, CP_ASYNC, at);
    strcat(src, "K % 8 == 0 && ");
    strcat(src, CP_ASYNC + at);
    ctx = check(src);
    assert_int_equal(count(ctx, E0810), 1);
    ctx_free(ctx);
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixit_row_sum),
        cmocka_unit_test(fixit_brace_on_header),
        cmocka_unit_test(fixit_cp_async),
        cmocka_unit_test(masks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
