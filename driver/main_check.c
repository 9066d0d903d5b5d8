/* main_check.c — `cakec`: the driver without LLVM, so that `cakec check` and
 * `cakec print` start in about a millisecond (loading LLVM alone costs 5 to
 * 15 ms per process). The commands that compile or run re-execute the same
 * command line in `cakec-llvm`, found next to this executable. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fe.h"
#include "driver.h"

static int exec_full(CakeCtx *ctx, const Options *o, Module *m)
{
    (void)m;
    char self[PATH_MAX], full[PATH_MAX + 16];
    const char *env = getenv("CAKE_LLVM_DRIVER");
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (env && *env) {
        snprintf(full, sizeof full, "%s", env);
    } else if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash)
            slash[1] = 0;
        snprintf(full, sizeof full, "%scakec-llvm", slash ? self : "");
    } else {
        snprintf(full, sizeof full, "cakec-llvm");
    }
    fflush(NULL);
    execv(full, o->argv);
    Diag *d = diag_report(ctx, E0974, IR_NOSPAN, "cannot start `%s`, the code generator: %s", full,
                          strerror(errno));
    diag_help(ctx, d, "install cakec-llvm next to cakec (it is built with it), or set CAKE_LLVM_DRIVER");
    return drv_finish(ctx, o, EXIT_BUG);
}

int main(int argc, char **argv)
{
    static const FeBackend check_only = {exec_full, exec_full};
    return fe_main(argc, argv, &check_only);
}
