/* agent_slurm.c — batches of jobs: run here one after another (the local
 * runner), or as one Slurm job array, one job per array task, the results
 * gathered from the task's files (docs/library.md, "Tuning on Slurm").
 *
 * The Slurm batch writes, in its work folder (ArBatchOpts.dir, else a fresh
 * one under $TMPDIR):
 *   task_I.sh     the job's command line, quoted, under `timeout`, with its
 *                 stdout to out_I, its stderr to err_I and its exit status to rc_I
 *   array.sh      runs task_$SLURM_ARRAY_TASK_ID.sh
 * then submits `sbatch --parsable --array=0-(N-1) array.sh`, waits until every
 * task has written its rc file (or `squeue` no longer lists the job), and
 * reads every task's three files. A task whose rc
 * file is missing (Slurm killed it, or it never ran) is AR_SPAWN; rc 124 or 137
 * from `timeout` is AR_TIMEOUT. Options for sbatch come from the opts
 * (partition) and $CAKE_SBATCH_ARGS (split at spaces). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "agent.h"
#include "rt.h"

/* ---- the local batch -------------------------------------------------------- */

/* --workers N: N threads, each running its share of the jobs one child at a
 * time, worker w with CUDA_VISIBLE_DEVICES set to device w % ndevices (put in
 * front of the command as `env NAME=VALUE`: nothing is set in the children
 * between fork and exec, where another thread may hold the allocator) */
typedef struct {
    const ArBatchOpts *o;
    const ArJob *jobs;
    ArResult *res;
    int n, next, failed;
    pthread_mutex_t lock;
} Pool;

typedef struct {
    Pool *pool;
    int w;
} Worker;

static void *worker_main(void *arg)
{
    Worker *wk = arg;
    Pool *p = wk->pool;
    const ArBatchOpts *o = p->o;
    ArRunner r = ar_local_runner();
    char dev[96];
    snprintf(dev, sizeof dev, "CUDA_VISIBLE_DEVICES=%s",
             o->ndevices ? o->devices[wk->w % o->ndevices] : "0");
    for (;;) {
        pthread_mutex_lock(&p->lock);
        int i = p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i >= p->n)
            break;
        const char *argv[64];
        int k = 0;
        if (o->workers > 1) {
            argv[k++] = "env";
            argv[k++] = dev;
        }
        for (const char *const *a = p->jobs[i].argv; *a && k < 63; a++)
            argv[k++] = *a;
        argv[k] = NULL;
        ArJob job = p->jobs[i];
        job.argv = argv;
        if (ar_run(&r, &job, &p->res[i]) != 0) {
            pthread_mutex_lock(&p->lock);
            p->failed = 1;
            pthread_mutex_unlock(&p->lock);
        }
    }
    return NULL;
}

static int local_batch(const ArBatchOpts *o, const ArJob *jobs, int n, ArResult *res)
{
    int nw = o->workers > 1 ? o->workers : 1;
    if (nw > n)
        nw = n;
    Pool p = {o, jobs, res, n, 0, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t th[64];
    Worker wk[64];
    if (nw > 64)
        nw = 64;
    int started = 0;
    for (int w = 0; w < nw; w++) {
        wk[w] = (Worker){&p, w};
        if (nw == 1 || pthread_create(&th[w], NULL, worker_main, &wk[w]) != 0)
            break;
        started++;
    }
    if (!started)
        worker_main(&wk[0]);   /* one worker: in this thread */
    for (int w = 0; w < started; w++)
        pthread_join(th[w], NULL);
    return p.failed ? -1 : 0;
}

int ar_batch_spread(ArBatchOpts *o, const char *workers, const char *devices, int detect,
                    char *err, size_t errlen)
{
    long n = 0;
    if (workers) {
        char *end;
        n = strtol(workers, &end, 10);
        if (n < 1 || n > 64 || *end) {
            snprintf(err, errlen, "--workers takes 1 .. 64, not `%s`", workers);
            return 0;
        }
    }
    const char *list = devices ? devices : getenv("CUDA_VISIBLE_DEVICES");
    if (!list && !workers && detect) { /* every GPU the driver sees: 0 .. ngpus-1 */
        int ngpus = rt_gpu_count();
        size_t at = 0;
        for (int g = 0; g < ngpus && g < 16 && at + 8 < sizeof o->devbuf; g++)
            at += (size_t)snprintf(o->devbuf + at, sizeof o->devbuf - at, "%s%d", g ? "," : "", g);
        list = ngpus > 1 ? o->devbuf : NULL;
    }
    if (list != o->devbuf)
        snprintf(o->devbuf, sizeof o->devbuf, "%s", list ? list : "");
    o->ndevices = 0;
    for (char *tok = strtok(o->devbuf, ","); tok && o->ndevices < 16; tok = strtok(NULL, ","))
        o->devices[o->ndevices++] = tok;
    o->workers = workers ? (int)n : o->ndevices > 1 ? o->ndevices : 1;
    return 1;
}

/* ---- the Slurm batch -------------------------------------------------------- */

/* s in single quotes for sh */
static void put_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++)
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    fputc('\'', f);
}

static int write_task(const char *dir, int i, const ArJob *job)
{
    char *path = ag_printf("%s/task_%d.sh", dir, i);
    FILE *f = path ? fopen(path, "w") : NULL;
    free(path);
    if (!f)
        return 0;
    fprintf(f, "#!/bin/sh\n# one candidate of a cakec tuning batch\ncd ");
    put_quoted(f, dir);
    fputc('\n', f);
    if (job->timeout_s > 0)
        fprintf(f, "timeout -k 5 %g ", job->timeout_s);
    if (job->env) {
        fputs("env ", f);
        for (const char *const *e = job->env; *e; e++) {
            put_quoted(f, *e);
            fputc(' ', f);
        }
    }
    for (const char *const *a = job->argv; *a; a++) {
        put_quoted(f, *a);
        fputc(' ', f);
    }
    fprintf(f, "> out_%d 2> err_%d < /dev/null\necho $? > rc_%d.tmp && mv rc_%d.tmp rc_%d\n", i, i, i, i, i);
    return fclose(f) == 0;
}

static int write_array(const char *dir)
{
    char *path = ag_printf("%s/array.sh", dir);
    FILE *f = path ? fopen(path, "w") : NULL;
    free(path);
    if (!f)
        return 0;
    fprintf(f, "#!/bin/sh\n# the array of a cakec tuning batch: task I runs task_I.sh\n"
               "exec sh \"%s/task_${SLURM_ARRAY_TASK_ID}.sh\"\n", dir);
    return fclose(f) == 0;
}

static char *read_small(const char *dir, const char *name, int i, size_t *len)
{
    char *path = ag_printf("%s/%s_%d", dir, name, i);
    char *s = path ? ag_read_file(path, len) : NULL;
    free(path);
    if (!s) {
        s = calloc(1, 1);
        *len = 0;
    }
    return s;
}

static void gather(const char *dir, int n, double wall, ArResult *res)
{
    for (int i = 0; i < n; i++) {
        ArResult *r = &res[i];
        memset(r, 0, sizeof *r);
        r->out = read_small(dir, "out", i, &r->outlen);
        r->err = read_small(dir, "err", i, &r->errlen);
        size_t len;
        char *rc = read_small(dir, "rc", i, &len);
        r->wall_s = wall;
        r->exit_code = len ? atoi(rc) : -1;
        free(rc);
        r->status = !len ? AR_SPAWN
                    : r->exit_code == 124 || r->exit_code == 137 ? AR_TIMEOUT
                    : r->exit_code == 0 ? AR_OK
                    : r->exit_code == 1 ? AR_USER_ERROR
                    : r->exit_code == 2 ? AR_INTERNAL : AR_FAULT;
    }
}

static int done_count(const char *dir, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        char *path = ag_printf("%s/rc_%d", dir, i);
        k += path && access(path, R_OK) == 0;
        free(path);
    }
    return k;
}

/* 1 while Slurm still lists a task of the job */
static int job_listed(const ArBatchOpts *o, const char *job)
{
    const char *argv[] = {o->squeue ? o->squeue : "squeue", "-h", "-j", job, "-o", "%i", NULL};
    ArRunner local = ar_local_runner();
    ArJob q = {.argv = argv, .timeout_s = 30};
    ArResult r;
    if (ar_run(&local, &q, &r))
        return 0;
    int listed = r.status == AR_OK && r.outlen > 0;
    ar_result_free(&r);
    return listed;
}

/* waits until every task left its rc file, or Slurm no longer lists the job
   (then what is missing never ran), or the timeout */
static void wait_array(const ArBatchOpts *o, const char *dir, const char *job, int n, double t0)
{
    double last_q = 0;
    while (done_count(dir, n) < n) {
        double now = ag_now();
        if (o->timeout_s > 0 && now - t0 > o->timeout_s)
            return;
        if (now - last_q > 2) {
            if (!job_listed(o, job)) {
                usleep(300000);   /* the last task's files may still be landing */
                return;
            }
            last_q = now;
        }
        usleep(100000);
    }
}

static int slurm_batch(const ArBatchOpts *o, const ArJob *jobs, int n, ArResult *res, char *err,
                       size_t errlen)
{
    char tmpl[512];
    const char *dir = o->dir;
    if (!dir) {
        const char *tmp = getenv("TMPDIR");
        snprintf(tmpl, sizeof tmpl, "%s/cake-slurm.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        dir = mkdtemp(tmpl);
    } else if (mkdir(dir, 0755) && errno != EEXIST) {
        dir = NULL;
    }
    if (!dir) {
        snprintf(err, errlen, "cannot make the batch's work folder: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (!write_task(dir, i, &jobs[i])) {
            snprintf(err, errlen, "cannot write %s/task_%d.sh", dir, i);
            return -1;
        }
    if (!write_array(dir)) {
        snprintf(err, errlen, "cannot write %s/array.sh", dir);
        return -1;
    }
    char array[64], output[600], chdir_[600], script[600], part[200];
    snprintf(array, sizeof array, "--array=0-%d", n - 1);
    snprintf(output, sizeof output, "--output=%s/slurm_%%a.log", dir);
    snprintf(chdir_, sizeof chdir_, "--chdir=%s", dir);
    snprintf(script, sizeof script, "%s/array.sh", dir);
    const char *argv[48] = {o->sbatch ? o->sbatch : "sbatch", "--parsable", "--job-name=cake-tune",
                            array, output, chdir_};
    int k = 6;
    char gres[128];
    if (!o->gres || strcmp(o->gres, "none")) { /* one GPU per task: Slurm sets its CUDA_VISIBLE_DEVICES */
        snprintf(gres, sizeof gres, "--gres=%s", o->gres ? o->gres : "gpu:1");
        argv[k++] = gres;
    }
    if (o->partition) {
        snprintf(part, sizeof part, "--partition=%s", o->partition);
        argv[k++] = part;
    }
    char *extra = getenv("CAKE_SBATCH_ARGS") ? ag_strdup(getenv("CAKE_SBATCH_ARGS")) : NULL;
    for (char *tok = extra ? strtok(extra, " ") : NULL; tok && k < 44; tok = strtok(NULL, " "))
        argv[k++] = tok;
    argv[k++] = script;
    argv[k] = NULL;
    ArRunner local = ar_local_runner();
    ArJob submit = {.argv = argv, .timeout_s = 60};
    ArResult sr;
    double t0 = ag_now();
    int rc = ar_run(&local, &submit, &sr);
    free(extra);
    if (rc || sr.status != AR_OK) {
        snprintf(err, errlen, "sbatch failed (%s, exit %d): %.300s", rc ? "not run" : ar_status_name(sr.status),
                 rc ? -1 : sr.exit_code, rc ? "" : sr.err);
        if (!rc)
            ar_result_free(&sr);
        return -1;
    }
    char job[64];
    snprintf(job, sizeof job, "%.*s", (int)strcspn(sr.out, ";\n"), sr.out);
    ar_result_free(&sr);
    wait_array(o, dir, job, n, t0);
    gather(dir, n, (ag_now() - t0) / n, res);
    int ran = 0;
    for (int i = 0; i < n; i++)
        ran += res[i].status != AR_SPAWN;
    if (!ran) {
        snprintf(err, errlen, "no task of the array left a result in %s", dir);
        for (int i = 0; i < n; i++)
            ar_result_free(&res[i]);
        return -1;
    }
    return 0;
}

int ar_batch(const ArBatchOpts *o, const ArJob *jobs, int n, ArResult *res, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    if (n <= 0)
        return 0;
    if (o->kind == AR_BATCH_SLURM)
        return slurm_batch(o, jobs, n, res, err, errlen);
    return local_batch(o, jobs, n, res);
}

int ar_batch_kind(const char *name, ArBatchKind *out)
{
    if (!name || !strcmp(name, "local"))
        *out = AR_BATCH_LOCAL;
    else if (!strcmp(name, "slurm"))
        *out = AR_BATCH_SLURM;
    else
        return 0;
    return 1;
}
