/* lld.c — links an AMDGPU relocatable object into a code object (.hsaco) by
 * running `ld.lld -shared` on temporary files. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cg_int.h"

int cg_link_hsaco(CakeCtx *ctx, const CgOptions *opt, const char *obj, size_t objlen,
                  char **out, size_t *outlen);

static int is_exec(const char *p)
{
    return p && *p && access(p, X_OK) == 0;
}

/* $CAKE_LLD, then ld.lld-19 / ld.lld in LLVM 19's bindir, then next to the
 * running cakec (a carried toolchain), then PATH. */
static const char *find_lld(CakeCtx *ctx, const CgOptions *opt)
{
    if (opt && opt->lld)
        return opt->lld;
    const char *env = getenv("CAKE_LLD");
    if (is_exec(env))
        return env;
    static const char *const fixed[] = {"/usr/lib/llvm-19/bin/ld.lld", "/usr/bin/ld.lld-19"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        if (is_exec(fixed[i]))
            return fixed[i];
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 16);
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash) {
            strcpy(slash + 1, "ld.lld");
            if (is_exec(self))
                return ir_fmt(ctx, "%s", self);
        }
    }
    const char *path = getenv("PATH");
    if (path) {
        char *dup = ir_fmt(ctx, "%s", path);
        for (char *dir = strtok(dup, ":"); dir; dir = strtok(NULL, ":")) {
            const char *names[] = {"ld.lld-19", "ld.lld"};
            for (int i = 0; i < 2; i++) {
                char *c = ir_fmt(ctx, "%s/%s", dir, names[i]);
                if (is_exec(c))
                    return c;
            }
        }
    }
    return NULL;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int cg_link_hsaco(CakeCtx *ctx, const CgOptions *opt, const char *obj, size_t objlen,
                  char **out, size_t *outlen)
{
    const char *lld = find_lld(ctx, opt);
    if (!lld) {
        Diag *d = diag_report(ctx, E0903, IR_NOSPAN, "cannot link the AMDGPU code object: "
                                                     "ld.lld not found");
        diag_help(ctx, d, "install lld-19, or set CAKE_LLD to an ld.lld (LLVM 17 or newer)");
        return 3;
    }
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    char *dir = ir_fmt(ctx, "%s/cakec-XXXXXX", tmp);
    if (!mkdtemp(dir)) {
        diag_report(ctx, E0903, IR_NOSPAN, "cannot create a temporary directory in %s: %s", tmp,
                    strerror(errno));
        return 3;
    }
    char *in = ir_fmt(ctx, "%s/k.o", dir), *res = ir_fmt(ctx, "%s/k.hsaco", dir);
    char *log = ir_fmt(ctx, "%s/lld.log", dir);
    int rc = 3;
    int fd = open(in, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write_all(fd, obj, objlen) != 0) {
        diag_report(ctx, E0903, IR_NOSPAN, "cannot write %s: %s", in, strerror(errno));
        if (fd >= 0)
            close(fd);
        goto done;
    }
    close(fd);
    pid_t pid = fork();
    if (pid == 0) {
        int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (lfd >= 0) {
            dup2(lfd, 1);
            dup2(lfd, 2);
        }
        execl(lld, lld, "-shared", "--no-undefined", "-o", res, in, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char text[2048] = "";
        FILE *f = fopen(log, "r");
        if (f) {
            size_t n = fread(text, 1, sizeof text - 1, f);
            text[n] = 0;
            fclose(f);
        }
        Diag *d = diag_report(ctx, E0903, IR_NOSPAN, "%s failed (status %d): %s", lld,
                              WIFEXITED(status) ? WEXITSTATUS(status) : -1, text);
        diag_help(ctx, d, "set CAKE_LLD to a working ld.lld");
        goto done;
    }
    FILE *f = fopen(res, "rb");
    if (!f) {
        diag_report(ctx, E0903, IR_NOSPAN, "ld.lld wrote no %s", res);
        goto done;
    }
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    *out = malloc(sz > 0 ? (size_t)sz + 1 : 1);
    *outlen = sz > 0 && *out ? fread(*out, 1, (size_t)sz, f) : 0;
    fclose(f);
    rc = *out ? 0 : 2;
done:
    unlink(in);
    unlink(res);
    unlink(log);
    rmdir(dir);
    return rc;
}
