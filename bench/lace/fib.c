/* fib.c: Lace's fib benchmark (benchmarks/fib/fib-lace.c in Lace 1.4.2) written with worksteal's
 * typed tasks, for bench/lace/compare.sh. The same recursion (spawn fib(n-1), call fib(n-2),
 * sync), the same command line, and the same two output lines, so that the two programs run and
 * read alike:
 *
 *   fib -w WORKERS [-q DQSIZE] N
 *   fib(N) = ...
 *   Time: SECONDS
 *
 * The time is that of the root's run alone, as Lace's is (the pool is started before it and
 * stopped after). -q, Lace's deque size, is accepted and ignored: worksteal's deques and task
 * stacks grow as needed.
 */
#define _POSIX_C_SOURCE 200809L

#include "lace_port.h"

#include <stdio.h>
#include <stdlib.h>

WS_TASK_1(int, pfib, int, n)
{
    if (n < 2)
        return n;
    WS_SPAWN(pfib, n - 1);
    int k = WS_CALL(pfib, n - 2);
    int m = WS_SYNC(pfib);
    return m + k;
}

int main(int argc, char **argv)
{
    ws_pool *pool;
    const char *arg = lace_port_start(argc, argv, "N", &pool, NULL);
    if (arg == NULL)
        return 1;
    int n = atoi(arg);
    double t1 = lace_port_now();
    int m = pfib_run(pool, n);
    double t2 = lace_port_now();
    printf("fib(%d) = %d\n", n, m);
    printf("Time: %f\n", t2 - t1);
    ws_pool_destroy(pool);
    return 0;
}
