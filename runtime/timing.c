/* timing.c — kernel timing with device events: warm-up runs, an L2 flush
 * before each timed run (outside the timed events), and the statistics of the
 * samples (median, min, mean, max).
 */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

#define RT_DEFAULT_WARMUP 3
#define RT_DEFAULT_RUNS 20
#define RT_MIN_FLUSH_BYTES ((size_t)8 << 20)

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double rt_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void rt_stats(double *ms, int n, RtTiming *out)
{
    memset(out, 0, sizeof *out);
    if (n <= 0)
        return;
    out->runs = n;
    out->median_ms = rt_median(ms, n);
    out->min_ms = ms[0];
    out->max_ms = ms[n - 1];
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += ms[i];
    out->mean_ms = sum / n;
}

/* The flush buffer is twice the L2 (at least 8 MiB), kept for the device's
 * life once allocated. */
static RtStatus ensure_flush(RtDevice *dev)
{
    if (dev->flush)
        return RT_OK;
    size_t bytes = 2 * dev->info.l2_bytes;
    if (bytes < RT_MIN_FLUSH_BYTES)
        bytes = RT_MIN_FLUSH_BYTES;
    RtStatus st = dev->ops->alloc(dev, bytes, &dev->flush);
    if (st == RT_OK)
        dev->flush_bytes = bytes;
    return st;
}

static RtStatus flush_l2(RtDevice *dev, int run)
{
    return dev->ops->memset(dev, dev->flush, (uint32_t)run * 2654435761u,
                            dev->flush_bytes / 4, 4);
}

static RtStatus launch_seq(RtDevice *dev, const RtLaunch *seq, int n)
{
    for (int i = 0; i < n; i++) {
        RtStatus st = rt_launch(dev, &seq[i]);
        if (st != RT_OK)
            return st;
    }
    return RT_OK;
}

typedef struct {
    const RtLaunch *seq;
    int n, variants, warmup, runs;
    bool flush;
    void *ev[2];
} TimeJob;

static RtStatus warm_up(RtDevice *dev, TimeJob *job)
{
    for (int r = 0; r < job->warmup; r++) {
        RtStatus st = launch_seq(dev, job->seq + (r % job->variants) * job->n, job->n);
        if (st != RT_OK)
            return st;
    }
    return rt__sync(dev);
}

static RtStatus time_one(RtDevice *dev, TimeJob *job, int r, double *ms)
{
    RtStatus st = RT_OK;
    if (job->flush)
        st = flush_l2(dev, r);
    if (st == RT_OK)
        st = dev->ops->event_record(dev, job->ev[0]);
    if (st == RT_OK)
        st = launch_seq(dev, job->seq + (r % job->variants) * job->n, job->n);
    if (st == RT_OK)
        st = dev->ops->event_record(dev, job->ev[1]);
    if (st == RT_OK)
        st = rt__sync(dev);
    float t = 0;
    if (st == RT_OK)
        st = dev->ops->event_elapsed(dev, job->ev[0], job->ev[1], &t);
    *ms = t;
    return st;
}

static RtStatus time_runs(RtDevice *dev, TimeJob *job, double *ms)
{
    RtStatus st = warm_up(dev, job);
    for (int r = 0; st == RT_OK && r < job->runs; r++)
        st = time_one(dev, job, r, &ms[r]);
    return st;
}

static RtStatus init_job(RtDevice *dev, TimeJob *job, const RtLaunch *seq, int n,
                         const RtTimeOpts *opts)
{
    RtTimeOpts o = opts ? *opts : (RtTimeOpts){0};
    memset(job, 0, sizeof *job);
    job->seq = seq;
    job->n = n;
    job->variants = o.variants > 0 ? o.variants : 1;
    job->warmup = o.warmup > 0 ? o.warmup : o.warmup < 0 ? 0 : RT_DEFAULT_WARMUP;
    job->runs = o.runs > 0 ? o.runs : RT_DEFAULT_RUNS;
    job->flush = !o.no_flush;
    if (!seq || n <= 0)
        return rt__fail(dev, RT_INVALID, "rt_time: no launches to time");
    RtStatus st = job->flush ? ensure_flush(dev) : RT_OK;
    if (st == RT_OK)
        st = dev->ops->event_create(dev, &job->ev[0]);
    if (st == RT_OK)
        st = dev->ops->event_create(dev, &job->ev[1]);
    return st;
}

static void free_job(RtDevice *dev, TimeJob *job)
{
    if (dev->health != RT_OK)
        return; /* a broken context: leave its events to rt_close */
    for (int i = 0; i < 2; i++)
        if (job->ev[i])
            dev->ops->event_destroy(dev, job->ev[i]);
}

RtStatus rt_time(RtDevice *dev, const RtLaunch *seq, int n, const RtTimeOpts *opts,
                 RtTiming *out, double *samples)
{
    memset(out, 0, sizeof *out);
    RtStatus st = rt__enter(dev);
    if (st != RT_OK || (st = rt__sync(dev)) != RT_OK)
        return st;
    TimeJob job;
    st = init_job(dev, &job, seq, n, opts);
    double *ms = st == RT_OK ? calloc((size_t)job.runs, sizeof *ms) : NULL;
    if (st == RT_OK && !ms)
        st = rt__fail(dev, RT_ERROR, "out of host memory");
    if (st == RT_OK)
        st = time_runs(dev, &job, ms);
    if (st == RT_OK && samples)
        memcpy(samples, ms, (size_t)job.runs * sizeof *ms);
    if (st == RT_OK)
        rt_stats(ms, job.runs, out);
    free(ms);
    free_job(dev, &job);
    return st;
}
