/* intern.c — string interning: names become small integer ids (Sym). */
#include <string.h>
#include "ir.h"

static uint32_t hash_bytes(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static void table_grow(CakeCtx *ctx)
{
    Interner *in = &ctx->names;
    uint32_t tcap = in->tcap ? in->tcap * 2 : 256;
    uint32_t *table = arena_alloc(&ctx->arena, tcap * sizeof *table);
    for (uint32_t id = 1; id < in->n; id++) {
        uint32_t h = hash_bytes(in->strs[id], in->lens[id]) & (tcap - 1);
        while (table[h])
            h = (h + 1) & (tcap - 1);
        table[h] = id;
    }
    in->table = table;
    in->tcap = tcap;
}

static Sym add_string(CakeCtx *ctx, const char *s, size_t n)
{
    Interner *in = &ctx->names;
    if (in->n == in->cap) {
        uint32_t cap = in->cap ? in->cap * 2 : 256;
        in->strs = arena_realloc(&ctx->arena, in->strs, in->cap * sizeof *in->strs, cap * sizeof *in->strs);
        in->lens = arena_realloc(&ctx->arena, in->lens, in->cap * sizeof *in->lens, cap * sizeof *in->lens);
        in->cap = cap;
    }
    if (in->n == 0) { /* id 0 is the empty name */
        in->strs[0] = arena_strndup(&ctx->arena, "", 0);
        in->lens[0] = 0;
        in->n = 1;
    }
    in->strs[in->n] = arena_strndup(&ctx->arena, s, n);
    in->lens[in->n] = (uint32_t)n;
    return in->n++;
}

Sym ir_intern(CakeCtx *ctx, const char *s, size_t n)
{
    Interner *in = &ctx->names;
    if (n == 0)
        return 0;
    if ((in->n + 1) * 2 >= in->tcap)
        table_grow(ctx);
    uint32_t h = hash_bytes(s, n) & (in->tcap - 1);
    for (;;) {
        uint32_t id = in->table[h];
        if (!id)
            break;
        if (in->lens[id] == n && memcmp(in->strs[id], s, n) == 0)
            return id;
        h = (h + 1) & (in->tcap - 1);
    }
    Sym id = add_string(ctx, s, n);
    in->table[h] = id;
    return id;
}

Sym ir_intern_cstr(CakeCtx *ctx, const char *s)
{
    return ir_intern(ctx, s, strlen(s));
}

const char *ir_symstr(const CakeCtx *ctx, Sym s)
{
    if (s == 0 || s >= ctx->names.n)
        return "";
    return ctx->names.strs[s];
}
