/* main.c — the cakec executable: everything is in fe_main (driver.c). */
#include "fe.h"

int main(int argc, char **argv)
{
    return fe_main(argc, argv);
}
