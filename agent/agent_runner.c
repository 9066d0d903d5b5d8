/* agent_runner.c — the local child-process runner: fork/exec one command in its
 * own process group, with stdin from /dev/null, stdout and stderr captured
 * through pipes (poll, so neither fills up), a wall-clock timeout after which
 * the whole group gets SIGTERM and, a second later, SIGKILL. The end of the
 * child becomes an ArStatus: a fault, a hang or an out-of-memory kill is a
 * result for the caller, never the caller's end. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "agent.h"

extern char **environ;

typedef struct {
    char *buf;
    size_t len, cap, max;
} Sink;

static void sink_add(Sink *s, const char *data, size_t n)
{
    if (s->len >= s->max)
        return;
    if (n > s->max - s->len)
        n = s->max - s->len;
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + n + 1)
            cap *= 2;
        char *b = realloc(s->buf, cap);
        if (!b)
            return;
        s->buf = b;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    s->buf[s->len] = 0;
}

static char *sink_take(Sink *s, size_t *len)
{
    *len = s->len;
    if (!s->buf)
        return calloc(1, 1);
    return s->buf;
}

/* in the child: own process group, stdin /dev/null, the pipes, the env, exec */
static void child_exec(const ArJob *job, int out_fd, int err_fd)
{
    setpgid(0, 0);
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0)
        dup2(null_fd, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    for (const char *const *e = job->env; e && *e; e++)
        putenv((char *)*e);
    execvp(job->argv[0], (char *const *)job->argv);
    dprintf(2, "runner: cannot start `%s`: %s\n", job->argv[0], strerror(errno));
    _exit(127);
}

static void kill_group(pid_t pid, int sig)
{
    if (kill(-pid, sig) != 0)
        kill(pid, sig);
}

/* reads both pipes until they close or the deadline passes; 1 when timed out */
static int pump(int fds[2], Sink sinks[2], double deadline)
{
    int open_fds = 2;
    char buf[65536];
    while (open_fds) {
        struct pollfd p[2];
        int np = 0, which[2];
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0) {
                p[np].fd = fds[i];
                p[np].events = POLLIN;
                which[np++] = i;
            }
        int wait_ms = -1;
        if (deadline > 0) {
            double left = deadline - ag_now();
            if (left <= 0)
                return 1;
            wait_ms = (int)(left * 1000) + 1;
        }
        int r = poll(p, (nfds_t)np, wait_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return 0;
        for (int k = 0; k < np; k++) {
            if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            int i = which[k];
            ssize_t n = read(fds[i], buf, sizeof buf);
            if (n > 0) {
                sink_add(&sinks[i], buf, (size_t)n);
            } else if (n == 0 || errno != EINTR) {
                close(fds[i]);
                fds[i] = -1;
                open_fds--;
            }
        }
    }
    return 0;
}

/* waits for the child; after a timeout, TERM then KILL its whole group */
static int reap(pid_t pid, int timed_out)
{
    int status = 0;
    if (timed_out) {
        kill_group(pid, SIGTERM);
        for (int i = 0; i < 100; i++) {
            if (waitpid(pid, &status, WNOHANG) == pid)
                goto done;
            usleep(10000);
        }
        kill_group(pid, SIGKILL);
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
done:
    kill_group(pid, SIGKILL);   /* grandchildren left in the group */
    return status;
}

static ArStatus classify(const ArResult *r, int timed_out)
{
    if (timed_out)
        return AR_TIMEOUT;
    if (r->signal == SIGKILL)
        return AR_OOM;           /* not ours: the kernel's OOM killer, as a rule */
    if (r->signal)
        return AR_FAULT;
    if (strstr(r->err, "out of memory") || strstr(r->err, "OUT_OF_MEMORY") ||
        strstr(r->out, "OUT_OF_MEMORY"))
        return r->exit_code == 0 ? AR_OK : AR_OOM;
    switch (r->exit_code) {
    case 0: return AR_OK;
    case 1: return AR_USER_ERROR;
    case 2: return AR_INTERNAL;
    case 127: return AR_SPAWN;
    default: return AR_FAULT;    /* 3: a device fault or hang cakec caught itself */
    }
}

static int local_run(ArRunner *self, const ArJob *job, ArResult *res)
{
    (void)self;
    memset(res, 0, sizeof *res);
    int po[2], pe[2];
    /* close-on-exec: a child started by another thread at the same time must
       not hold this child's pipes open (dup2 onto 1 and 2 clears the flag) */
    if (pipe2(po, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(pe, O_CLOEXEC) != 0) {
        close(po[0]);
        close(po[1]);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    double t0 = ag_now();
    pid_t pid = fork();
    if (pid < 0) {
        close(po[0]); close(po[1]); close(pe[0]); close(pe[1]);
        return -1;
    }
    if (pid == 0) {
        close(po[0]);
        close(pe[0]);
        child_exec(job, po[1], pe[1]);
    }
    setpgid(pid, pid);           /* also here: no race with the child's own call */
    close(po[1]);
    close(pe[1]);
    size_t max = job->max_output ? job->max_output : (size_t)16 << 20;
    Sink sinks[2] = {{.max = max}, {.max = max}};
    int fds[2] = {po[0], pe[0]};
    int timed_out = pump(fds, sinks, job->timeout_s > 0 ? t0 + job->timeout_s : 0);
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    int status = reap(pid, timed_out);
    res->wall_s = ag_now() - t0;
    res->out = sink_take(&sinks[0], &res->outlen);
    res->err = sink_take(&sinks[1], &res->errlen);
    res->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    res->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    res->status = classify(res, timed_out);
    return 0;
}

ArRunner ar_local_runner(void)
{
    return (ArRunner){.run = local_run, .state = NULL};
}

int ar_run(ArRunner *r, const ArJob *job, ArResult *res)
{
    int rc = r->run(r, job, res);
    if (rc != 0) {
        memset(res, 0, sizeof *res);
        res->status = AR_SPAWN;
        res->exit_code = -1;
        res->out = calloc(1, 1);
        res->err = ag_printf("runner: cannot start `%s`: %s", job->argv[0], strerror(errno));
        res->errlen = res->err ? strlen(res->err) : 0;
    }
    return rc;
}

void ar_result_free(ArResult *res)
{
    free(res->out);
    free(res->err);
    res->out = res->err = NULL;
}

const char *ar_status_name(ArStatus s)
{
    static const char *const names[] = {"ok", "user_error", "internal_error", "fault",
                                        "timeout", "oom", "spawn_failed"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}
