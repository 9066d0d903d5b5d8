/* arena.c — the per-compilation bump allocator: everything is freed at once.
 * Blocks come zeroed from calloc (fresh pages from the system cost no
 * clearing) and memory is never handed out twice, so an allocation is zero
 * without a memset of its own: coverage's per-element maps are megabytes. */
#include <stdlib.h>
#include <string.h>
#include "ir.h"

struct ArenaBlock {
    ArenaBlock *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

enum { ARENA_MIN_BLOCK = 256 * 1024 };   /* above malloc's mmap threshold: fresh zero pages, no clearing */

static ArenaBlock *block_new(Arena *a, size_t size)
{
    ArenaBlock *b = calloc(1, sizeof *b + size);
    if (!b)
        ir_bug(a->owner, "out of memory (an arena block of %zu bytes)", size);
    b->next = NULL;
    b->size = size;
    b->used = 0;
    return b;
}

void *arena_alloc(Arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    ArenaBlock *b = a->head;
    if (!b || b->size - b->used < size) {
        size_t want = size > ARENA_MIN_BLOCK ? size : ARENA_MIN_BLOCK;
        b = block_new(a, want);
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += size;
    a->used_total += size;
    return p;   /* zero: the block was calloc'ed and p was never handed out */
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

void *arena_grow(Arena *a, void *p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    uint32_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    p = arena_realloc(a, p, *cap * elem, c * elem);
    *cap = c;
    return p;
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
        free(b);
        b = next;
    }
    a->head = NULL;
    a->used_total = 0;
}
