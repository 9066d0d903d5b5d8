/* test_libapi.c — the kernel library's C API (lib/cake_lib.h), as the Python
 * module uses it: build tests/lib/small into an artifact, open it (from the
 * file and from memory), list the ops and a signature, select for dims given
 * as (name, value) pairs and as a ShapeEnv, explain a choice, and refuse bad
 * input with a status and a diagnostic: an unknown op or dim, a shape no
 * variant covers, and every truncation and many corruptions of the file
 * (never a crash). Needs no GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "cake_lib.h"

static char art[256];
static unsigned char *bytes;
static size_t nbytes;

static int has_diag(const CakeCtx *ctx, DiagCode code)
{
    for (uint32_t i = 0; i < ctx->ndiags; i++)
        if (ctx->diags[i].code == code)
            return 1;
    return 0;
}

static int build_small(void **state)
{
    (void)state;
    snprintf(art, sizeof art, "%s/test_libapi_%d.cakelib", P_tmpdir, (int)getpid());
    CakeCtx *ctx = ctx_new();
    CakeLibBuildOptions o = {.ptx_only = 1};
    int rc = cake_lib_build(ctx, CAKE_SOURCE_DIR "/tests/lib/small", art, &o);
    if (rc)
        diag_print_text(ctx, stderr, 0);
    ctx_free(ctx);
    FILE *f = fopen(art, "rb");
    if (rc || !f)
        return -1;
    fseek(f, 0, SEEK_END);
    nbytes = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    bytes = malloc(nbytes);
    size_t got = fread(bytes, 1, nbytes, f);
    fclose(f);
    return got == nbytes ? 0 : -1;
}

static int remove_small(void **state)
{
    (void)state;
    unlink(art);
    free(bytes);
    return 0;
}

static void test_ops_and_signature(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    CakeLib *lib;
    assert_int_equal(cake_lib_open(ctx, art, &lib), 0);
    assert_int_equal(cake_lib_nops(lib), 3);
    uint32_t op;
    assert_int_equal(cake_lib_find_op(ctx, lib, "rmsnorm", &op), 0);
    CakeLibOp o;
    assert_int_equal(cake_lib_op(lib, op, &o), 0);
    assert_string_equal(o.name, "rmsnorm");
    assert_int_equal(o.nargs, 4);
    assert_int_equal(o.ndims, 2);
    assert_string_equal(o.dims[0], "M");
    assert_string_equal(o.dims[1], "N");
    assert_string_equal(o.args[0].name, "x");
    assert_int_equal(o.args[0].kind, CAKE_ARG_TENSOR);
    assert_string_equal(o.args[0].dtype, "bf16");
    assert_int_equal(o.args[0].rank, 2);
    assert_string_equal(o.args[1].dims[0], "N");
    assert_int_equal(o.args[3].kind, CAKE_ARG_SCALAR);
    assert_string_equal(o.args[3].dtype, "f32");
    assert_int_equal(o.nvariants, 5);   /* block256, block64_short, split and its 2 launches */
    CakeLibVariant v;
    assert_int_equal(cake_lib_variant(lib, op, 1, &v), 0);
    assert_string_equal(v.name, "block64_short");
    assert_string_equal(v.set, "THREADS=64,ITERS=2");
    assert_string_equal(v.kernel, "rmsnorm");
    assert_string_equal(v.target, "sm_90a");
    assert_int_equal(cake_lib_op(lib, 3, &o), 1);
    assert_string_equal(cake_lib_tuned_device(lib), "");
    cake_lib_close(lib);
    ctx_free(ctx);
}

static void test_select(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    CakeLib *lib;
    assert_int_equal(cake_lib_open_mem(ctx, bytes, nbytes, &lib), 0);
    uint32_t op;
    assert_int_equal(cake_lib_find_op(ctx, lib, "rmsnorm", &op), 0);
    CakeLibChoice ch;
    /* N = 2048 > 64 * 8 * 2: only block256's domain holds */
    CakeLibDim dims[] = {{"N", 2048}, {"M", 4096}};
    assert_int_equal(cake_lib_select(ctx, lib, op, dims, 2, &ch), 0);
    CakeLibVariant v;
    cake_lib_variant(lib, op, ch.variant, &v);
    assert_string_equal(v.name, "block256");
    assert_int_equal(ch.dimv[0], 4096);
    assert_int_equal(ch.dimv[1], 2048);
    assert_non_null(cake_lib_failed_cond(lib, &ch, 1));
    assert_non_null(strstr(cake_lib_failed_cond(lib, &ch, 1), "N <= THREADS * VEC * ITERS"));
    assert_null(cake_lib_failed_cond(lib, &ch, 0));
    /* explain tests every variant */
    assert_int_equal(cake_lib_explain(ctx, lib, op, dims, 2, &ch), 0);
    assert_int_equal(ch.ntested, 3);   /* the launches of `split` are never tested alone */
    /* the same through a ShapeEnv */
    ShapeEnv env;
    shape_env_clear(&env);
    shape_env_set(&env, ir_intern_cstr(ctx, "M"), 4096);
    shape_env_set(&env, ir_intern_cstr(ctx, "N"), 2048);
    CakeLibChoice ch2;
    assert_int_equal(cake_lib_select_env(ctx, lib, op, &env, &ch2), 0);
    assert_int_equal(ch2.variant, ch.variant);
    /* one long row: only the sequence `split` covers it; it is not one kernel */
    CakeLibChoice cs;
    CakeLibDim lr[] = {{"M", 2}, {"N", 65536}};
    assert_int_equal(cake_lib_select(ctx, lib, op, lr, 2, &cs), 0);
    cake_lib_variant(lib, op, cs.variant, &v);
    assert_string_equal(v.name, "split");
    assert_string_equal(v.kernel, "rmsnorm_split_stats+rmsnorm_split_apply");
    CakeKernel *ck = NULL;
    ctx->ndiags = ctx->nerrors = 0;
    assert_int_equal(cake_lib_kernel(ctx, lib, NULL, &cs, &ck), 1);
    assert_null(ck);
    assert_int_equal(ctx->diags[0].code, E1204);
    /* the op's range is enforced: N = 70000 > 65536 */
    CakeLibDim far[] = {{"M", 2}, {"N", 70000}};
    ctx->ndiags = ctx->nerrors = 0;
    assert_int_equal(cake_lib_select(ctx, lib, op, far, 2, &cs), 1);
    assert_int_equal(ctx->diags[0].code, E1214);
    ctx->ndiags = ctx->nerrors = 0;
    /* the choice's env binds the dims and the variant's parameters */
    ShapeEnv ce;
    assert_int_equal(cake_lib_choice_env(ctx, lib, &ch2, &ce), 0);
    int64_t x;
    assert_true(shape_env_get(&ce, ir_intern_cstr(ctx, "N"), &x) && x == 2048);
    /* gemm: the explicit condition `M <= 256` of sm80_64x64 */
    assert_int_equal(cake_lib_find_op(ctx, lib, "gemm", &op), 0);
    CakeLibDim g[] = {{"M", 4096}, {"N", 4096}, {"K", 4096}};
    assert_int_equal(cake_lib_explain(ctx, lib, op, g, 3, &ch), 0);
    assert_string_equal(cake_lib_failed_cond(lib, &ch, 0), "M <= 256");
    cake_lib_variant(lib, op, ch.variant, &v);
    assert_string_equal(v.name, "sm80_128x128");
    assert_int_equal(ctx->nerrors, 0);
    cake_lib_close(lib);
    ctx_free(ctx);
}

static void test_refusals(void **state)
{
    (void)state;
    CakeCtx *ctx = ctx_new();
    CakeLib *lib;
    assert_int_equal(cake_lib_open(ctx, art, &lib), 0);
    uint32_t op;
    assert_int_equal(cake_lib_find_op(ctx, lib, "swiglu", &op), 1);
    assert_true(has_diag(ctx, E1201));
    assert_int_equal(cake_lib_find_op(ctx, lib, "softmax", &op), 0);
    CakeLibChoice ch;
    CakeLibDim big[] = {{"M", 64}, {"N", 100000}};
    assert_int_equal(cake_lib_select(ctx, lib, op, big, 2, &ch), 1);
    assert_true(has_diag(ctx, E1203));
    CakeLibDim extra[] = {{"M", 64}, {"N", 64}, {"K", 1}};
    assert_int_equal(cake_lib_select(ctx, lib, op, extra, 3, &ch), 1);
    CakeLibDim missing[] = {{"M", 64}};
    assert_int_equal(cake_lib_select(ctx, lib, op, missing, 1, &ch), 1);
    CakeLibDim zero[] = {{"M", 0}, {"N", 64}};
    assert_int_equal(cake_lib_select(ctx, lib, op, zero, 2, &ch), 1);
    assert_true(has_diag(ctx, E1202));
    assert_int_equal(cake_lib_select(ctx, lib, 99, big, 2, &ch), 1);
    cake_lib_close(lib);
    ctx_free(ctx);
}

/* every truncation, and a changed byte at many places: a status and E1205 */
static void test_damaged_files(void **state)
{
    (void)state;
    unsigned char *copy = malloc(nbytes);
    for (size_t len = 0; len < nbytes; len += len < 64 ? 1 : 997) {
        CakeCtx *ctx = ctx_new();
        CakeLib *lib = (CakeLib *)1;
        assert_int_equal(cake_lib_open_mem(ctx, bytes, len, &lib), 1);
        assert_null(lib);
        assert_true(has_diag(ctx, E1205));
        ctx_free(ctx);
    }
    for (size_t at = 0; at < nbytes; at += 1 + nbytes / 300) {
        memcpy(copy, bytes, nbytes);
        copy[at] ^= 0x5a;
        CakeCtx *ctx = ctx_new();
        CakeLib *lib;
        int rc = cake_lib_open_mem(ctx, copy, nbytes, &lib);
        assert_int_equal(rc, 1);
        assert_true(has_diag(ctx, E1205));
        ctx_free(ctx);
    }
    free(copy);
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* a changed meta document with a checksum that matches it: read or refused
   (1), never a crash or an internal error */
static void test_damaged_meta(void **state)
{
    (void)state;
    unsigned char *copy = malloc(nbytes);
    uint64_t mlen = 0;
    for (int i = 7; i >= 0; i--)
        mlen = mlen << 8 | bytes[16 + i];
    static const unsigned char junk[] = {'"', '}', ']', '0', 'x', ',', ':', '-', '9', 0};
    int refused = 0;
    for (size_t at = 40; at < 40 + mlen; at += 1 + mlen / 150)
        for (size_t j = 0; j < sizeof junk; j++) {
            memcpy(copy, bytes, nbytes);
            copy[at] = junk[j];
            uint64_t h = 1469598103934665603ull;
            for (size_t i = 40; i < nbytes; i++)
                h = (h ^ copy[i]) * 1099511628211ull;
            put64(copy + 32, h);
            CakeCtx *ctx = ctx_new();
            CakeLib *lib;
            int rc = cake_lib_open_mem(ctx, copy, nbytes, &lib);
            assert_true(rc == 0 || rc == 1);
            refused += rc == 1;
            if (rc == 0) {
                uint32_t op = 0;
                CakeLibChoice ch;
                CakeLibDim d[] = {{"M", 100}, {"N", 1000}, {"K", 64}};
                for (op = 0; op < cake_lib_nops(lib); op++)
                    cake_lib_select(ctx, lib, op, d, 2, &ch);
            }
            cake_lib_close(lib);
            ctx_free(ctx);
        }
    assert_true(refused > 0);
    free(copy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ops_and_signature),
        cmocka_unit_test(test_select),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_damaged_files),
        cmocka_unit_test(test_damaged_meta),
    };
    return cmocka_run_group_tests(tests, build_small, remove_small);
}
