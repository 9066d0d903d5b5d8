/* check_fill.c — the seeded random inputs of `run --check` (check.h,
 * docs/checking.md "Inputs"): one stream per argument, shape and chunk of
 * 2^20 elements, the same values whether a tensor is filled in fp64 or
 * straight into its device encoding (a sampled check of a large shape), on
 * one thread or several. */
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
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

/* ---- chunks: element i comes from the stream of chunk i / FILL_CHUNK --------
 * Chunk 0 is seeded with the argument's seed itself, chunk c > 0 with a value
 * derived from (seed, c); so a tensor is filled in any order, by several
 * threads, with the same values (a 16384 x 16384 input is 256 chunks). */

#define FILL_CHUNK (INT64_C(1) << 20)
#define FILL_THREADS 8

static uint64_t chunk_seed(uint64_t seed, int64_t c)
{
    if (c == 0)
        return seed;
    uint64_t x = seed ^ ((uint64_t)c * UINT64_C(0xD1B54A32D192ED03));
    return splitmix(&x);
}

typedef struct {
    double *data;             /* fp64 values, or */
    void *host;               /* the device encoding */
    int64_t span;
    DType dt;
    uint64_t seed;
    const CheckOptions *opt;
    int ranged;
    int64_t lo, hi;
    int64_t next;             /* the next chunk to fill, under lock */
    pthread_mutex_t lock;
} Fill;

static void fill_values(Fill *F, Filler *f, int64_t a, int64_t b)
{
    if (F->data) {
        for (int64_t i = a; i < b; i++)
            F->data[i] = filler_next(f);
    } else if (F->dt == DT_BF16) { /* the common large input: the value is a bf16 already */
        uint16_t *h = F->host;
        for (int64_t i = a; i < b; i++) {
            float x = (float)filler_next(f);
            uint32_t u;
            memcpy(&u, &x, 4);
            h[i] = (uint16_t)(u >> 16);
        }
    } else if (F->dt == DT_E4M3 || F->dt == DT_E5M2) { /* rounded already: its bits */
        uint8_t *h = F->host;
        for (int64_t i = a; i < b; i++)
            h[i] = (uint8_t)ir_float_bits(F->dt, filler_next(f));
    } else {
        int eb = interp_elem_bytes(F->dt);
        for (int64_t i = a; i < b; i++)
            interp_encode(F->dt, filler_next(f), (char *)F->host + i * eb);
    }
}

static void fill_chunk(Fill *F, int64_t c)
{
    Filler f;
    filler_init(&f, F->dt, chunk_seed(F->seed, c), F->opt);
    if (F->ranged)
        filler_range(&f, F->lo, F->hi);
    int64_t a = c * FILL_CHUNK, b = a + FILL_CHUNK < F->span ? a + FILL_CHUNK : F->span;
    fill_values(F, &f, a, b);
}

static void *fill_worker(void *arg)
{
    Fill *F = arg;
    for (;;) {
        pthread_mutex_lock(&F->lock);
        int64_t c = F->next++;
        pthread_mutex_unlock(&F->lock);
        if (c * FILL_CHUNK >= F->span)
            return NULL;
        fill_chunk(F, c);
    }
}

/* fills every chunk, on up to FILL_THREADS threads (one where that fails) */
static void fill_run(Fill *F)
{
    int64_t chunks = (F->span + FILL_CHUNK - 1) / FILL_CHUNK;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = chunks < FILL_THREADS ? (int)chunks : FILL_THREADS;
    if (cores > 0 && nt > cores)
        nt = (int)cores;
    pthread_mutex_init(&F->lock, NULL);
    pthread_t th[FILL_THREADS];
    int started = 0;
    for (int i = 1; i < nt; i++) /* this thread is the first worker */
        if (pthread_create(&th[started], NULL, fill_worker, F) == 0)
            started++;
    fill_worker(F);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&F->lock);
}

void check_fill_random(HostTensor *t, uint64_t seed, const CheckOptions *opt)
{
    Fill F = {.data = t->data, .span = t->span, .dt = t->dtype, .seed = seed, .opt = opt};
    fill_run(&F);
    int64_t i = 0;
    while (i < t->span && t->data[i] == 0)
        i++;
    if (i == t->span && t->span)
        t->data[0] = 1;
}

void check_fill_range(HostTensor *t, uint64_t seed, int64_t lo, int64_t hi)
{
    Fill F = {.data = t->data, .span = t->span, .dt = t->dtype, .seed = seed,
              .ranged = 1, .lo = lo, .hi = hi};
    fill_run(&F);
}

/* ---- sequence offsets (`offsets LO .. HI`) ------------------------------- */

enum { SEQ_LONG, SEQ_SHORT, SEQ_EMPTY, SEQ_BACK };

/* the pattern of B sequences: short first (so that no long one starts at the
 * first row), then long ones at the odd places, each followed by a short one
 * (places 2, 6, ...: a long block's neighbour that finishes first), by one whose
 * end steps back before its start (place 4: unsorted offsets, an empty
 * sequence) or by an empty one (places 8, 12, ...) */
static int seq_kind(int64_t b, int64_t B)
{
    if (B == 1)
        return SEQ_LONG;
    if (b == 0 || b % 4 == 2)
        return SEQ_SHORT;
    if (b % 2)
        return SEQ_LONG;
    return b == 4 ? SEQ_BACK : SEQ_EMPTY;
}

void check_fill_offsets(HostTensor *t, uint64_t seed, int64_t lo, int64_t hi)
{
    for (int64_t j = 0; j < t->span; j++)
        t->data[j] = (double)lo;
    int64_t n = t->rank == 1 ? t->shape[0] : 0, st = n ? t->stride[0] : 1;
    if (n < 2)
        return;
    Rng r;
    rng_seed(&r, seed);
    int64_t B = n - 1, rows = hi - 1 - lo, small = 0, nlong = 0;
    int64_t short_max = rows / (4 * B) > 1 ? rows / (4 * B) : 1;
    double w = 0, wl[64] = {0};
    for (int64_t b = 0; b < B; b++) {
        int kind = seq_kind(b, B);
        if (kind == SEQ_SHORT)
            small += 1 + (int64_t)(rng_next(&r) % (uint64_t)short_max);
        if (kind == SEQ_LONG && nlong < 64)
            w += wl[nlong++] = 1 + 0.5 * rng_unit(&r);
    }
    double scale = small > rows ? (double)rows / (double)small : 1; /* more shorts than rows */
    int64_t rest = rows - (int64_t)((double)small * scale), placed = 0, il = 0, at = lo;
    rng_seed(&r, seed); /* the same short lengths again, now placed */
    for (int64_t b = 0; b < B; b++) {
        int kind = seq_kind(b, B);
        int64_t len = 0;
        if (kind == SEQ_SHORT)
            len = (int64_t)((double)(1 + (int64_t)(rng_next(&r) % (uint64_t)short_max)) * scale);
        if (kind == SEQ_LONG) {
            rng_unit(&r);
            len = il + 1 == nlong || il >= 63 ? rest - placed : (int64_t)((double)rest * wl[il] / w);
            placed += len;
            il++;
        }
        int64_t end = at + len;
        if (end > hi - 1)
            end = hi - 1;
        if (kind == SEQ_BACK && at > lo) /* ends before it starts: empty, and the next one longer */
            t->data[(b + 1) * st] = (double)(at - 1 - (int64_t)(rng_next(&r) % (uint64_t)(at - lo)));
        else
            t->data[(b + 1) * st] = (double)end;
        at = end;
    }
}

/* the same values straight into the device encoding (no fp64 copy): the
 * inputs of a sampled check */
void check_fill_encoded(void *host, int64_t span, DType dt, uint64_t seed,
                        const CheckOptions *opt, int ranged, int64_t lo, int64_t hi)
{
    Fill F = {.host = host, .span = span, .dt = dt, .seed = seed, .opt = opt,
              .ranged = ranged, .lo = lo, .hi = hi};
    fill_run(&F);
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
