/* main.c — `cakec-llvm`: the whole compiler, code generation and runtime
 * included (driver.c does the work). `cakec` re-executes its command line
 * here for the commands that need LLVM or a GPU. */
#include "fe.h"
#include "driver.h"

int main(int argc, char **argv)
{
    static const FeBackend full = {fe_cmd_compile, fe_cmd_run};
    return fe_main(argc, argv, &full);
}
