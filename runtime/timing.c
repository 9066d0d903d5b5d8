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

/* Each run: [flush L2] [gate] start event, the launches, stop event; then the
 * host opens the gate and waits for the stop event (with the timeout). The
 * gate blocks the stream until the whole run is queued, so the events time
 * the kernels and never the host's launch overhead; without a gate (a driver
 * without stream memory operations) short kernels on an idle stream may be
 * timed a little long. */
typedef struct {
    const RtLaunch *seq;
    int n, variants, warmup, runs;
    bool flush;
    void *ev[2];                   /* start, stop */
    volatile uint32_t *gate;       /* host side; NULL: no gate */
    RtPtr gate_dev;
    uint64_t spin_ns;              /* a spin kernel after the gate, before the start event */
} TimeJob;

static const RtLaunch *variant(const TimeJob *job, int r)
{
    return job->seq + (r % job->variants) * job->n;
}

/* $CAKE_TIMING_SPIN_US (0 to 1000; unset: 0): a spin kernel of that many
 * microseconds queued after the gate, so the start event follows a kernel's end
 * as in the peers' timer (bench/device/gated.py): a measurement knob
 * (bench/device/launch_probe.c times an empty kernel both ways) */
static uint64_t spin_ns(void)
{
    const char *e = getenv("CAKE_TIMING_SPIN_US");
    double us = e && *e ? strtod(e, NULL) : 0;
    return us > 0 && us <= 1000 ? (uint64_t)(us * 1e3) : 0;
}

/* One at a time, so the timeout applies to each run. */
static RtStatus warm_up(RtDevice *dev, TimeJob *job)
{
    RtStatus st = RT_OK;
    for (int r = 0; st == RT_OK && r < job->warmup; r++) {
        st = launch_seq(dev, variant(job, r), job->n);
        if (st == RT_OK)
            st = rt__sync(dev);
    }
    return st;
}

static RtStatus queue_run(RtDevice *dev, TimeJob *job, int r)
{
    RtStatus st = job->flush ? flush_l2(dev, r) : RT_OK;
    if (st == RT_OK && job->gate)
        st = dev->ops->wait_value(dev, job->gate_dev, (uint32_t)r + 1);
    if (st == RT_OK && job->spin_ns)
        st = dev->ops->spin(dev, job->spin_ns);
    if (st == RT_OK)
        st = dev->ops->event_record(dev, job->ev[0]);
    if (st == RT_OK)
        st = launch_seq(dev, variant(job, r), job->n);
    if (st == RT_OK)
        st = dev->ops->event_record(dev, job->ev[1]);
    if (job->gate) /* opened even after a failure, so the stream can drain */
        __atomic_store_n(job->gate, (uint32_t)r + 1, __ATOMIC_SEQ_CST);
    return st;
}

static RtStatus time_one(RtDevice *dev, TimeJob *job, int r, double *ms)
{
    float t = 0;
    RtStatus st = queue_run(dev, job, r);
    if (st == RT_OK)
        st = rt__sync(dev);
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

/* The gate is an optimisation: without one, timing still works. */
static void open_gate(RtDevice *dev, TimeJob *job)
{
    if (!dev->ops->gate_create ||
        dev->ops->gate_create(dev, &job->gate, &job->gate_dev) != RT_OK) {
        job->gate = NULL;
        dev->err[0] = '\0';
    }
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
    job->spin_ns = dev->ops->spin ? spin_ns() : 0;
    if (!seq || n <= 0)
        return rt__fail(dev, RT_INVALID, "rt_time: no launches to time");
    RtStatus st = job->flush ? ensure_flush(dev) : RT_OK;
    if (st == RT_OK)
        st = dev->ops->event_create(dev, &job->ev[0]);
    if (st == RT_OK)
        st = dev->ops->event_create(dev, &job->ev[1]);
    if (st == RT_OK)
        open_gate(dev, job);
    return st;
}

static void free_job(RtDevice *dev, TimeJob *job)
{
    if (dev->health != RT_OK)
        return; /* a broken context: leave its events and gate alone */
    for (int i = 0; i < 2; i++)
        if (job->ev[i])
            dev->ops->event_destroy(dev, job->ev[i]);
    if (job->gate)
        dev->ops->gate_free(dev, job->gate);
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
