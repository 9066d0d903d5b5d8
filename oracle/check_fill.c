/* check_fill.c — the seeded random inputs of `run --check` (check.h,
 * docs/checking.md "Inputs"): one stream per argument and shape, the same
 * values whether a tensor is filled in fp64 at once or straight into its
 * device encoding (a sampled check of a large shape). */
#include <math.h>
#include <string.h>
#include "check.h"

/* ---- random numbers: splitmix64 seeding xoshiro256** -------------------- */

typedef struct { uint64_t s[4]; } Rng;

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static void rng_seed(Rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(Rng *r)
{
    uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return res;
}

static double rng_unit(Rng *r) /* [0, 1) */
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

static double float_max(DType dt)
{
    switch (dt) {
    case DT_F16: return 65504.0;
    case DT_E4M3: return 448.0;
    case DT_E5M2: return 57344.0;
    default: return 1e30;
    }
}

/* one input's random values, element after element (the same sequence
 * whether the tensor is filled at once or chunk by chunk) */
typedef struct {
    Rng r;
    DType dt;
    char kind;
    int normal, range;
    int64_t lo, hi;
} Filler;

static void filler_init(Filler *f, DType dt, uint64_t seed, const CheckOptions *opt)
{
    memset(f, 0, sizeof *f);
    rng_seed(&f->r, seed);
    f->dt = dt;
    f->kind = ir_dtypes[dt].kind;
    f->normal = opt && opt->dist == CHECK_DIST_NORMAL;
    int lo = opt ? opt->int_lo : 0, hi = opt ? opt->int_hi : 0;
    if (lo == 0 && hi == 0) {
        lo = f->kind == 'u' ? 1 : -8;
        hi = f->kind == 'u' ? 16 : 8;
    }
    if (f->kind == 'u' && lo < 0)
        lo = 0;
    f->lo = lo;
    f->hi = hi;
}

/* integers drawn in [lo, hi) with zero allowed: a `values` range */
static void filler_range(Filler *f, int64_t lo, int64_t hi)
{
    f->range = 1;
    f->lo = lo;
    f->hi = hi > lo ? hi : lo + 1;
}

static double filler_next(Filler *f)
{
    Rng *r = &f->r;
    double v = 0;
    if (f->range)
        return interp_round(f->dt, (double)(f->lo + (int64_t)(rng_next(r) % (uint64_t)(f->hi - f->lo))));
    if (f->kind == 'f') {
        for (int tries = 0; v == 0 && tries < 64; tries++) {
            if (f->normal) {
                double u1 = rng_unit(r), u2 = rng_unit(r);
                v = sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
                double m = float_max(f->dt);
                v = v > m ? m : v < -m ? -m : v;
            } else {
                v = 2.0 * rng_unit(r) - 1.0;
            }
            v = interp_round(f->dt, v);
        }
        return v == 0 ? 0.5 : v;
    }
    if (f->kind == 'b')
        return (double)(rng_next(r) & 1);
    uint64_t range = (uint64_t)(f->hi - f->lo) + 1;
    for (int tries = 0; tries < 64; tries++) {
        v = (double)(f->lo + (int64_t)(rng_next(r) % range));
        if (v != 0)
            break;
    }
    return interp_round(f->dt, v);
}

void check_fill_random(HostTensor *t, uint64_t seed, const CheckOptions *opt)
{
    Filler f;
    filler_init(&f, t->dtype, seed, opt);
    int64_t nonzero = 0;
    for (int64_t i = 0; i < t->span; i++) {
        t->data[i] = filler_next(&f);
        nonzero += t->data[i] != 0;
    }
    if (!nonzero && t->span)
        t->data[0] = 1;
}

void check_fill_range(HostTensor *t, uint64_t seed, int64_t lo, int64_t hi)
{
    Filler f;
    filler_init(&f, t->dtype, seed, NULL);
    filler_range(&f, lo, hi);
    for (int64_t i = 0; i < t->span; i++)
        t->data[i] = filler_next(&f);
}

/* the same values straight into the device encoding (no fp64 copy): the
 * inputs of a sampled check */
void check_fill_encoded(void *host, int64_t span, DType dt, uint64_t seed,
                        const CheckOptions *opt, int ranged, int64_t lo, int64_t hi)
{
    Filler f;
    filler_init(&f, dt, seed, opt);
    if (ranged)
        filler_range(&f, lo, hi);
    int eb = interp_elem_bytes(dt);
    if (dt == DT_BF16) { /* the common large input: the value is a bf16 already */
        for (int64_t i = 0; i < span; i++) {
            float x = (float)filler_next(&f);
            uint32_t u;
            memcpy(&u, &x, 4);
            uint16_t h = (uint16_t)(u >> 16);
            memcpy((char *)host + i * 2, &h, 2);
        }
        return;
    }
    for (int64_t i = 0; i < span; i++)
        interp_encode(dt, filler_next(&f), (char *)host + i * eb);
}

uint64_t check_rand(uint64_t *state)
{
    return splitmix(state);
}

double check_random_scalar(DType dt, uint64_t seed)
{
    Rng r;
    rng_seed(&r, seed);
    if (ir_dtypes[dt].kind == 'f')
        return interp_round(dt, 0.1 + 0.9 * rng_unit(&r));
    if (dt == DT_BOOL)
        return 1;
    return (double)(1 + (int)(rng_next(&r) % 8));
}
