/* bench_external: external work, measured (see wl_external.h for the options and
 * docs/external.md for the tables). */
#include "wl_external.h"

int main(int argc, char **argv)
{
    return external_bench_main(argc, argv);
}
