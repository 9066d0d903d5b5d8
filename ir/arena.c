/* arena.c — the per-compilation bump allocator: everything is freed at once.
 * Blocks come zeroed from calloc (fresh pages from the system cost no
 * clearing) and memory is never handed out twice, so an allocation is zero
 * without a memset of its own: coverage's per-element maps are megabytes.
 *
 * A block pool (ArenaPool) keeps the blocks of freed arenas for the next
 * ones: a caller that compiles many times in one process (the cost model's
 * sweeps, a tuner, the library's grid) reuses warm pages instead of faulting
 * fresh ones (~2 us a page on the 2-core machine). A reused block is not
 * clear: each block remembers how far it was ever handed out (`dirty`), and
 * an allocation below that mark is cleared when it is handed out, so the zero
 * promise holds; arena_alloc_raw skips the clearing for arrays whose every
 * element is written before it is read (the kernel's nodes and lists). Under
 * AddressSanitizer a block in the pool is poisoned: a use after the arena was
 * freed is reported as it would be for a block given back to free(). */
#include <stdlib.h>
#include <string.h>
#include "ir.h"

#if defined(__SANITIZE_ADDRESS__)
#define ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_ASAN 1
#endif
#endif
#ifdef ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

struct ArenaBlock {
    ArenaBlock *next;
    size_t size, used;
    size_t dirty;        /* bytes [0, dirty) may be nonzero: handed out before (a pool's block) */
    _Alignas(16) unsigned char data[];
};

struct ArenaPool {
    ArenaBlock *free;    /* blocks of freed arenas, poisoned under ASan */
    size_t bytes, keep;  /* held now; the most it holds (the rest goes back to free()) */
};

enum { ARENA_MIN_BLOCK = 256 * 1024 };   /* above malloc's mmap threshold: fresh zero pages, no clearing */

ArenaPool *arena_pool_new(size_t keep)
{
    ArenaPool *p = calloc(1, sizeof *p);
    if (p)
        p->keep = keep ? keep : ARENA_POOL_KEEP;
    return p;
}

void arena_pool_free(ArenaPool *p)
{
    if (!p)
        return;
    for (ArenaBlock *b = p->free, *next; b; b = next) {
        next = b->next;
        UNPOISON(b->data, b->size);
        free(b);
    }
    free(p);
}

size_t arena_pool_bytes(const ArenaPool *p)
{
    return p ? p->bytes : 0;
}

/* the pool's smallest block of at least size bytes, taken out of it; NULL if none */
static ArenaBlock *pool_take(ArenaPool *p, size_t size)
{
    ArenaBlock **best = NULL;
    for (ArenaBlock **at = &p->free; *at; at = &(*at)->next)
        if ((*at)->size >= size && (!best || (*at)->size < (*best)->size))
            best = at;
    if (!best)
        return NULL;
    ArenaBlock *b = *best;
    *best = b->next;
    p->bytes -= b->size;
    UNPOISON(b->data, b->size);
    return b;
}

static ArenaBlock *block_new(Arena *a, size_t size)
{
    ArenaBlock *b = a->pool ? pool_take(a->pool, size) : NULL;
    if (!b) {
        b = calloc(1, sizeof *b + size);
        if (!b)
            ir_bug(a->owner, "out of memory (an arena block of %zu bytes)", size);
        b->size = size;
        b->dirty = 0;
    }
    b->next = NULL;
    b->used = 0;
    return b;
}

/* size bytes (a multiple of 16) from the head block; zero unless raw */
static void *alloc(Arena *a, size_t size, int raw)
{
    ArenaBlock *b = a->head;
    if (!b || b->size - b->used < size) {
        size_t want = size > ARENA_MIN_BLOCK ? size : ARENA_MIN_BLOCK;
        b = block_new(a, want);
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    if (!raw && b->used < b->dirty)   /* a reused block: clear what was handed out before */
        memset(p, 0, b->dirty - b->used < size ? b->dirty - b->used : size);
    b->used += size;
    a->used_total += size;
    return p;
}

void *arena_alloc(Arena *a, size_t size)
{
    return alloc(a, (size + 15) & ~(size_t)15, 0);   /* zero: never handed out, or cleared */
}

void *arena_alloc_raw(Arena *a, size_t size)
{
    return alloc(a, (size + 15) & ~(size_t)15, 1);
}

void *arena_realloc(Arena *a, void *p, size_t old, size_t size)
{
    if (size <= old)
        return p;
    void *q = arena_alloc(a, size);
    if (p && old)
        memcpy(q, p, old);
    return q;
}

static void *grow(Arena *a, void *p, uint32_t *cap, uint32_t need, size_t elem, int raw)
{
    if (need <= *cap)
        return p;
    uint32_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = raw ? arena_alloc_raw(a, c * elem) : arena_alloc(a, c * elem);
    if (p && *cap)
        memcpy(q, p, *cap * elem);
    *cap = c;
    return q;
}

void *arena_grow(Arena *a, void *p, uint32_t *cap, uint32_t need, size_t elem)
{
    return grow(a, p, cap, need, elem, 0);
}

void *arena_grow_raw(Arena *a, void *p, uint32_t *cap, uint32_t need, size_t elem)
{
    return grow(a, p, cap, need, elem, 1);
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

void arena_free(Arena *a)
{
    ArenaBlock *b = a->head;
    while (b) {
        ArenaBlock *next = b->next;
        ArenaPool *p = a->pool;
        if (p && p->bytes + b->size <= p->keep) {
            if (b->used > b->dirty)
                b->dirty = b->used;
            b->next = p->free;
            p->free = b;
            p->bytes += b->size;
            POISON(b->data, b->size);
        } else {
            free(b);
        }
        b = next;
    }
    a->head = NULL;
    a->used_total = 0;
}
