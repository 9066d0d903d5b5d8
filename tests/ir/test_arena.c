/* test_arena.c — the arena's block pool (ir/arena.c): a freed arena's blocks are
 * reused by the next arena drawing on the pool, an allocation from a reused
 * block is zero (arena_alloc) wherever the block was written before, the raw
 * form leaves the old bytes, a block too large for the pool's bound goes back
 * to free(), and under AddressSanitizer a block waiting in the pool is poisoned
 * (a use after the arena was freed is reported). A context made with
 * ctx_new_pooled gives its blocks back at ctx_free, and a cost evaluation in a
 * pooled context predicts what one in a fresh context does. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "cake.h"

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

static void test_reuse_is_zero(void **state)
{
    (void)state;
    ArenaPool *pool = arena_pool_new(0);
    assert_non_null(pool);
    Arena a = {.pool = pool};
    unsigned char *p = arena_alloc(&a, 1000), *q = arena_alloc(&a, 5000);
    memset(p, 0xAB, 1000);
    memset(q, 0xCD, 5000);
    arena_free(&a);
    assert_true(arena_pool_bytes(pool) >= 6000);   /* kept, not freed */
    size_t held = arena_pool_bytes(pool);
    unsigned char *r = arena_alloc(&a, 3000), *s = arena_alloc(&a, 4000);
    assert_true(arena_pool_bytes(pool) < held);     /* the block came back out */
    assert_true(r == p);                            /* the same warm block */
    assert_true(all_zero(r, 3000));
    assert_true(all_zero(s, 4000));                 /* across the old allocations' edges */
    arena_free(&a);
    unsigned char *raw = arena_alloc_raw(&a, 16);
    assert_true(raw == p);
    assert_int_equal(raw[0], 0);                    /* cleared by the zeroing pass above */
    memset(raw, 0x5A, 16);
    arena_free(&a);
    raw = arena_alloc_raw(&a, 16);
    assert_int_equal(raw[0], 0x5A);                 /* raw: the old bytes stay */
    unsigned char *z = arena_alloc(&a, 64);         /* past them: zero */
    assert_true(all_zero(z, 64));
    arena_free(&a);
    arena_pool_free(pool);
}

static void test_big_block_and_bound(void **state)
{
    (void)state;
    ArenaPool *pool = arena_pool_new(1 << 20);      /* holds at most 1 MiB */
    Arena a = {.pool = pool};
    unsigned char *big = arena_alloc(&a, 3 << 20);  /* a block of its own, past the bound */
    memset(big, 1, 3 << 20);
    unsigned char *small = arena_alloc(&a, 100);
    memset(small, 2, 100);
    arena_free(&a);
    assert_true(arena_pool_bytes(pool) <= (size_t)1 << 20);
    assert_true(arena_pool_bytes(pool) > 0);        /* the small block stayed */
    unsigned char *again = arena_alloc(&a, 2 << 20);   /* none in the pool is large enough */
    assert_true(all_zero(again, 2 << 20));
    arena_free(&a);
    arena_pool_free(pool);
    Arena plain = {0};                              /* no pool: calloc and free, as before */
    assert_true(all_zero(arena_alloc(&plain, 4096), 4096));
    arena_free(&plain);
}

static void test_poisoned_in_pool(void **state)
{
    (void)state;
#ifdef TEST_ASAN
    ArenaPool *pool = arena_pool_new(0);
    Arena a = {.pool = pool};
    unsigned char *p = arena_alloc(&a, 256);
    assert_int_equal(__asan_address_is_poisoned(p), 0);
    arena_free(&a);
    assert_int_equal(__asan_address_is_poisoned(p), 1);   /* a use after the free is reported */
    assert_int_equal(__asan_address_is_poisoned(p + 100000), 1);
    p = arena_alloc(&a, 256);
    assert_int_equal(__asan_address_is_poisoned(p), 0);
    arena_free(&a);
    arena_pool_free(pool);
#else
    skip();   /* only an ASan build can tell */
#endif
}

static void test_pooled_context_costs_the_same(void **state)
{
    (void)state;
    ArenaPool *pool = arena_pool_new(0);
    CostResult r[3];
    for (int i = 0; i < 3; i++) {   /* fresh, then pooled twice (the second on warm blocks) */
        CakeCtx *ctx = i ? ctx_new_pooled(pool) : ctx_new();
        Module *m;
        assert_int_equal(cake_verify_file(ctx, CAKE_SOURCE_DIR "/examples/gemm_sm90.tir", NULL, &m), 0);
        CostCalib cal;
        cost_calib_default(&cal);
        CakeCostOptions co = {.kernel = "gemm_sm90", .shape = "M=4096,N=4096,K=4096", .calib = &cal};
        assert_int_equal(cake_cost(ctx, m, &co, &r[i]), 0);
        ctx_free(ctx);
        if (i)
            assert_true(arena_pool_bytes(pool) > 0);
    }
    for (int i = 1; i < 3; i++) {
        assert_true(r[i].time_ms == r[0].time_ms);
        assert_true(r[i].lo_ms == r[0].lo_ms && r[i].hi_ms == r[0].hi_ms);
        assert_true(r[i].flops == r[0].flops && r[i].dram_bytes == r[0].dram_bytes);
        assert_true(memcmp(r[i].res_ms, r[0].res_ms, sizeof r[0].res_ms) == 0);
        assert_int_equal(r[i].nnotes, r[0].nnotes);
    }
    arena_pool_free(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reuse_is_zero),
        cmocka_unit_test(test_big_block_and_bound),
        cmocka_unit_test(test_poisoned_in_pool),
        cmocka_unit_test(test_pooled_context_costs_the_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
