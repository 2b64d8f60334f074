/* queens.c: Lace's n-queens benchmark (benchmarks/queens/queens-lace.c in Lace 1.4.2) written
 * with worksteal's typed tasks, for bench/lace/compare.sh. The same search: a task per legal
 * placement of the next queen, each given a copy of the placements so far on its parent's stack
 * (alloca), every placement checked against all earlier ones, the children's counts summed after
 * all of them were spawned. The same command line and output lines:
 *
 *   queens -w WORKERS [-q DQSIZE] N
 *   running queens N with WORKERS workers...
 *   Result: Q(N) = ...
 *   Time: SECONDS
 */
#define _POSIX_C_SOURCE 200809L

#include "lace_port.h"

#include <alloca.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether no two of the n queens in rows a[0..n-1] attack each other. */
static int placements_ok(int n, const char *a)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            int d = j - i;
            if (a[j] == a[i] || a[j] == a[i] - d || a[j] == a[i] + d)
                return 0;
        }
    return 1;
}

/* The number of ways to complete the j queens of a to n. */
WS_TASK_3(long, nqueens, int, n, int, j, char *, a)
{
    if (j == n)
        return 1;
    int spawned = 0;
    for (int i = 0; i < n; i++) {
        char *b = alloca((size_t)j + 1); /* lives until this task returns, past the syncs */
        memcpy(b, a, (size_t)j);
        b[j] = (char)i;
        if (placements_ok(j + 1, b)) {
            WS_SPAWN(nqueens, n, j + 1, b);
            spawned++;
        }
    }
    long sum = 0;
    while (spawned-- > 0)
        sum += WS_SYNC(nqueens);
    return sum;
}

int main(int argc, char **argv)
{
    ws_pool *pool;
    unsigned workers;
    const char *arg = lace_port_start(argc, argv, "n", &pool, &workers);
    if (arg == NULL)
        return 1;
    int n = atoi(arg);
    if (n < 1 || n > 32) {
        fprintf(stderr, "queens: n must be 1 to 32\n");
        ws_pool_destroy(pool);
        return 1;
    }
    char *a = alloca((size_t)n);
    printf("running queens %d with %u workers...\n", n, workers);
    double t1 = lace_port_now();
    long result = nqueens_run(pool, n, 0, a);
    double t2 = lace_port_now();
    printf("Result: Q(%d) = %ld\n", n, result);
    printf("Time: %f\n", t2 - t1);
    ws_pool_destroy(pool);
    return 0;
}
