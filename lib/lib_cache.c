/* lib_cache.c — the library's launch cache: per variant, the launches it
 * prepared, kept by the op's dims (LIB_CACHE_SLOTS of them, the oldest
 * replaced). A launch at a shape seen before binds the call's buffers and
 * scalars into the kept record (lib_prep_bind: no allocation, no grid
 * evaluation, tensor maps encoded again only for tensors that moved) and goes
 * straight to rt_launch. A record holds one LibPrep per launch (a sequence
 * variant: one per step, with its layout in aux). */
#include <stdlib.h>
#include <string.h>
#include "lib_priv.h"

struct LibRec {
    uint8_t used, nsteps;
    int64_t dimv[LIB_MAX_DIMS];
    LibPrep step[LIB_MAX_STEPS];
    void *aux;                /* malloc'd, the owner's (lib_seq.c: the sequence's layout) */
};

static void rec_clear(LibRec *r)
{
    for (uint32_t s = 0; s < LIB_MAX_STEPS; s++)
        if (r->step[s].ck)
            lib_prep_free(&r->step[s]);
    free(r->aux);
    memset(r, 0, sizeof *r);
}

LibRec *lib_rec_find(LibVariant *v, const int64_t *dimv, uint32_t ndims)
{
    if (!v->recs)
        return NULL;
    uint32_t n = ndims * sizeof *dimv;
    LibRec *last = &v->recs[v->rec_last];
    if (last->used && !memcmp(last->dimv, dimv, n))
        return last;
    for (uint32_t i = 0; i < LIB_CACHE_SLOTS; i++)
        if (v->recs[i].used && !memcmp(v->recs[i].dimv, dimv, n)) {
            v->rec_last = i;
            return &v->recs[i];
        }
    return NULL;
}

LibRec *lib_rec_claim(CakeCtx *ctx, LibVariant *v, const int64_t *dimv, uint32_t ndims)
{
    if (!v->recs && !(v->recs = calloc(LIB_CACHE_SLOTS, sizeof *v->recs)))
        ir_bug(ctx, "out of memory for the launch cache of variant `%s`", v->pub.name);
    uint32_t i = v->rec_next;
    v->rec_next = (i + 1) % LIB_CACHE_SLOTS;
    LibRec *r = &v->recs[i];
    rec_clear(r);
    memcpy(r->dimv, dimv, ndims * sizeof *dimv);
    v->rec_last = i;
    return r;
}

LibPrep *lib_rec_step(LibRec *r, uint32_t s) { return &r->step[s]; }
void **lib_rec_aux(LibRec *r) { return &r->aux; }

void lib_rec_done(LibRec *r, uint32_t nsteps)
{
    r->nsteps = (uint8_t)nsteps;
    r->used = 1;
}

void lib_rec_drop(LibRec *r)
{
    rec_clear(r);
}

void lib_cache_free(LibVariant *v)
{
    for (uint32_t i = 0; v->recs && i < LIB_CACHE_SLOTS; i++)
        rec_clear(&v->recs[i]);
    free(v->recs);
    v->recs = NULL;
    v->rec_next = v->rec_last = 0;
}

void lib_cache_forget(CakeLib *lib)
{
    for (uint32_t i = 0; i < lib->nops; i++)
        for (uint32_t j = 0; j < lib->ops[i].pub.nvariants; j++)
            lib_cache_free(&lib->ops[i].v[j]);
}

void cake_lib_forget_launches(CakeLib *lib)
{
    if (lib)
        lib_cache_forget(lib);
}
