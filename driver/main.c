/* main.c — `cakec`: the command line (driver.c does the work). It carries no
 * LLVM: compiling loads the code generator plugin, libcake-llvm.so, in
 * process (lib/codegen.c), so `check` and `print` start in a millisecond. */
#include "driver.h"

int main(int argc, char **argv)
{
    return drv_main(argc, argv);
}
