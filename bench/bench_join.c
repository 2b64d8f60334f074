/* bench_join: the cost of one ws_join whose child is not stolen.
 *
 *   bench_join [n] [reps]    times fib(n) with a join at every level on 1 worker (ws_join,
 *                            ws_spawn/ws_sync and the typed tasks) and the same recursion without
 *                            the runtime; prints ns per join, medians of reps interleaved
 *                            runs: (T_ws - T_serial) / joins.
 *   bench_join --callgrind n runs each root once, for counting instructions with
 *                            valgrind --tool=callgrind --toggle-collect=root_ws (root_spawn,
 *                            root_stack, root_stack_lace, root_serial, root_plain);
 * bench/join-instructions.sh does it and prints the differences.
 *
 * The roots are non-inlined functions, so that callgrind counts the computation only (not the
 * pool's start-up or its idle workers). joins = fib(n + 1) - 1.
 */
#include "worksteal.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct fib_call {
    int n;
    long r;
} fib_call;

static void fib_ws(void *p)
{
    fib_call *c = p;
    if (c->n < 2) {
        c->r = c->n;
        return;
    }
    fib_call x = {c->n - 1, 0}, y = {c->n - 2, 0};
    ws_join(fib_ws, &x, fib_ws, &y);
    c->r = x.r + y.r;
}

/* The same recursion as plain calls: the serial program the joins are charged against. Not
 * inlined into itself (gcc -O3 would unroll the recursion a few levels), so that it makes the
 * same calls as the ws_join version and the difference is the joins alone. */
static __attribute__((noinline)) void fib_serial(void *p)
{
    fib_call *c = p;
    if (c->n < 2) {
        c->r = c->n;
        return;
    }
    fib_call x = {c->n - 1, 0}, y = {c->n - 2, 0};
    fib_serial(&x);
    fib_serial(&y);
    c->r = x.r + y.r;
}

/* The same fork per non-leaf call through ws_spawn/ws_sync. */
static void fib_spawn_sync(void *p)
{
    fib_call *c = p;
    if (c->n < 2) {
        c->r = c->n;
        return;
    }
    fib_call x = {c->n - 1, 0}, y = {c->n - 2, 0};
    ws_task t;
    ws_spawn(&t, fib_spawn_sync, &y);
    fib_spawn_sync(&x);
    ws_sync(&t);
    c->r = x.r + y.r;
}

/* The same fork through the typed tasks: the frame on the worker's task stack, the worker a
 * hidden parameter, the argument and the result typed, the child called directly at the sync. */
WS_TASK_1(long, fib_task, int, n)
{
    if (n < 2)
        return n;
    WS_SPAWN(fib_task, n - 2);
    long x = WS_CALL(fib_task, n - 1);
    return x + WS_SYNC(fib_task);
}

/* The typed fib as Lace's benchmark and Cilk's example write it: spawn fib(n-1), call fib(n-2),
 * an int result. gcc makes different code of the two (docs/scheduler.md, "Cost of a fork"). */
WS_TASK_1(int, fib_task_lace, int, n)
{
    if (n < 2)
        return n;
    WS_SPAWN(fib_task_lace, n - 1);
    int k = WS_CALL(fib_task_lace, n - 2);
    return WS_SYNC(fib_task_lace) + k;
}

static ws_pool *bench_pool; /* the typed roots run fib_task_run on it, from its worker */

/* The plain recursive fib as a C programmer writes it, compiled at -O2 (which may inline
 * calls into itself): the serial program of the method. */
__attribute__((noinline, optimize("O2"))) static long fib_plain(int n)
{
    return n < 2 ? n : fib_plain(n - 1) + fib_plain(n - 2);
}

__attribute__((noinline)) void root_ws(fib_call *c);
__attribute__((noinline)) void root_serial(fib_call *c);
__attribute__((noinline)) void root_spawn(fib_call *c);
__attribute__((noinline)) void root_plain(fib_call *c);
/* The typed tasks' roots keep the names they had when these tasks were called stack tasks, so
 * that bench/join-instructions.sh measures an older executable's the same way. */
__attribute__((noinline)) void root_stack(fib_call *c);
__attribute__((noinline)) void root_stack_lace(fib_call *c);

__attribute__((noinline)) void root_stack(fib_call *c)
{
    c->r = fib_task_run(bench_pool, c->n);
}

static void run_root_stack(void *p)
{
    root_stack(p);
}

__attribute__((noinline)) void root_stack_lace(fib_call *c)
{
    c->r = fib_task_lace_run(bench_pool, c->n);
}

static void run_root_stack_lace(void *p)
{
    root_stack_lace(p);
}

__attribute__((noinline)) void root_spawn(fib_call *c)
{
    fib_spawn_sync(c);
}

__attribute__((noinline)) void root_plain(fib_call *c)
{
    c->r = fib_plain(c->n);
}

static void run_root_spawn(void *p)
{
    root_spawn(p);
}

__attribute__((noinline)) void root_ws(fib_call *c)
{
    fib_ws(c);
}

__attribute__((noinline)) void root_serial(fib_call *c)
{
    fib_serial(c);
}

static void run_root_ws(void *p)
{
    root_ws(p);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static long joins_of(int n)
{
    long a = 0, b = 1; /* fib(n + 1) - 1 */
    for (int i = 0; i < n + 1; i++) {
        long t = a + b;
        a = b;
        b = t;
    }
    return a - 1;
}

int main(int argc, char **argv)
{
    bool callgrind = argc > 1 && strcmp(argv[1], "--callgrind") == 0;
    int arg0 = callgrind ? 2 : 1;
    int n = argc > arg0 ? atoi(argv[arg0]) : 32;
    int reps = argc > arg0 + 1 ? atoi(argv[arg0 + 1]) : 9;
    if (n < 2 || n > 45 || reps < 1 || reps > 99) {
        fprintf(stderr, "usage: bench_join [--callgrind] [n 2..45] [reps 1..99]\n");
        return 2;
    }
    ws_pool *pool;
    ws_config config = {.workers = 1};
    int err = ws_pool_create(&pool, &config);
    if (err != 0) {
        fprintf(stderr, "ws_pool_create: %s\n", ws_strerror(err));
        return 1;
    }
    bench_pool = pool;
    if (callgrind)
        reps = 1;
    /* The six versions, interleaved run by run: ws_join, spawn/sync, the typed tasks (as the
     * others' fib, and as Lace's), the serial recursion with the same calls, the plain -O2 fib. */
    enum { WS, SPAWN, TASK, TASK_LACE, SERIAL, PLAIN, VERSIONS };
    double *t[VERSIONS];
    for (int v = 0; v < VERSIONS; v++)
        if ((t[v] = calloc((size_t)reps, sizeof(double))) == NULL)
            return 1;
    long result = 0;
    for (int i = 0; i < reps; i++) {
        fib_call c[VERSIONS] = {{n, 0}, {n, 0}, {n, 0}, {n, 0}, {n, 0}, {n, 0}};
        static void (*const run[VERSIONS])(void *) = {run_root_ws, run_root_spawn, run_root_stack,
                                                      run_root_stack_lace};
        for (int v = 0; v < VERSIONS; v++) {
            double t0 = now_s();
            if (v == SERIAL)
                root_serial(&c[v]);
            else if (v == PLAIN)
                root_plain(&c[v]);
            else
                err |= ws_pool_run(pool, run[v], &c[v]);
            t[v][i] = now_s() - t0;
        }
        if (err != 0 || c[WS].r != c[SERIAL].r || c[SPAWN].r != c[SERIAL].r ||
            c[TASK].r != c[SERIAL].r || c[TASK_LACE].r != c[SERIAL].r ||
            c[PLAIN].r != c[SERIAL].r) {
            fprintf(stderr, "bench_join: wrong answer or error\n");
            return 1;
        }
        result = c[WS].r;
    }
    ws_pool_destroy(pool);
    double med[VERSIONS];
    for (int v = 0; v < VERSIONS; v++) {
        qsort(t[v], (size_t)reps, sizeof(double), compare);
        med[v] = t[v][reps / 2];
        free(t[v]);
    }
    long joins = joins_of(n);
    printf("fib(%d) = %ld, %ld joins, 1 worker, median of %d interleaved runs\n", n, result, joins,
           reps);
    printf("  ws_join recursion    %8.2f ms\n", med[WS] * 1e3);
    printf("  spawn/sync recursion %8.2f ms\n", med[SPAWN] * 1e3);
    printf("  typed task           %8.2f ms\n", med[TASK] * 1e3);
    printf("  typed, Lace's fib    %8.2f ms\n", med[TASK_LACE] * 1e3);
    printf("  plain recursion      %8.2f ms   (the same calls)\n", med[SERIAL] * 1e3);
    printf("  plain fib at -O2     %8.2f ms\n", med[PLAIN] * 1e3);
    printf("  cost of a join       %8.2f ns   (over the same calls)\n",
           (med[WS] - med[SERIAL]) * 1e9 / joins);
    printf("  cost of a spawn/sync %8.2f ns\n", (med[SPAWN] - med[SERIAL]) * 1e9 / joins);
    printf("  cost of a typed fork %8.2f ns   (over the plain -O2 fib)\n",
           (med[TASK] - med[PLAIN]) * 1e9 / joins);
    printf("  cost of a Lace fork  %8.2f ns   (the typed fork in Lace's fib)\n",
           (med[TASK_LACE] - med[PLAIN]) * 1e9 / joins);
    return 0;
}
