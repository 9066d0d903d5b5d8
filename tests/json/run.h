/* run.h — runs cakec as a child process for the CLI and JSON tests and
 * captures its stdout, stderr and exit status. Header-only: each test
 * executable includes it once. CAKEC and CAKE_SOURCE_DIR come from
 * tests/CMakeLists.txt. */
#ifndef CAKE_TEST_RUN_H
#define CAKE_TEST_RUN_H
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    char *out, *err;     /* NUL-terminated; never NULL after run_cakec */
    size_t outlen, errlen;
    int status;          /* exit code, or 128 + signal */
} Run;

static char *slurp_fd(int fd, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    ssize_t r;
    while (s && (r = read(fd, s + n, cap - n - 1)) != 0) {
        if (r < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        n += (size_t)r;
        if (cap - n < 2) {
            char *t = realloc(s, cap * 2);
            if (!t)
                break;
            s = t;
            cap *= 2;
        }
    }
    if (s)
        s[n] = 0;
    *len = n;
    return s;
}

/* runs CAKEC with argv (NULL-terminated, without argv[0]); `env` is one
 * "NAME=VALUE" to add, or NULL. stderr goes to a temp file so that neither
 * pipe can fill up. */
static Run run_cakec_env(const char *env, const char *const *args)
{
    Run r = {0};
    char tmpl[] = "/tmp/cake_test_XXXXXX";
    int te = mkstemp(tmpl);
    int po[2];
    if (te < 0 || pipe(po) != 0) {
        r.status = -1;
        r.out = calloc(1, 1);
        r.err = calloc(1, 1);
        return r;
    }
    unlink(tmpl);
    const char *argv[32];
    int n = 0;
    argv[n++] = CAKEC;
    for (int i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(te, 2);
        close(po[0]);
        close(po[1]);
        close(te);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        if (env)
            putenv((char *)env);
        execv(CAKEC, (char *const *)argv);
        _exit(127);
    }
    close(po[1]);
    r.out = slurp_fd(po[0], &r.outlen);
    close(po[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    lseek(te, 0, SEEK_SET);
    r.err = slurp_fd(te, &r.errlen);
    close(te);
    return r;
}

#define run_cakec(...) run_cakec_env(NULL, (const char *const[]){__VA_ARGS__, NULL})

static inline void run_free(Run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

/* a path under the source tree (static buffer per call site is enough here) */
static inline const char *src_path(char *buf, size_t n, const char *rel)
{
    snprintf(buf, n, "%s/%s", CAKE_SOURCE_DIR, rel);
    return buf;
}

/* writes text to a fresh temp file; returns its path (free it) */
static inline char *temp_file(const char *text, size_t len)
{
    char *path = strdup("/tmp/cake_test_XXXXXX.tir");
    int fd = mkstemps(path, 4);
    if (fd < 0) {
        free(path);
        return NULL;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    close(fd);
    return path;
}

#endif
