/* bench_join: the cost of one ws_join whose child is not stolen.
 *
 *   bench_join [n] [reps]    times fib(n) with a join at every level on 1 worker and the same
 *                            recursion without the runtime; prints ns per join, the median of
 *                            reps runs: (T_ws - T_serial) / joins.
 *   bench_join --callgrind n runs each root once, for counting instructions with
 *                            valgrind --tool=callgrind --toggle-collect=root_ws (or root_serial);
 *                            bench/join-instructions.sh does both and prints the difference.
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

__attribute__((noinline)) void root_ws(fib_call *c);
__attribute__((noinline)) void root_serial(fib_call *c);

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
    if (callgrind)
        reps = 1;
    double *t_ws = calloc((size_t)reps, sizeof(double));
    double *t_serial = calloc((size_t)reps, sizeof(double));
    long result = 0;
    for (int i = 0; i < reps && t_ws != NULL && t_serial != NULL; i++) {
        fib_call a = {n, 0}, b = {n, 0};
        double t0 = now_s();
        err = ws_pool_run(pool, run_root_ws, &a);
        double t1 = now_s();
        root_serial(&b);
        double t2 = now_s();
        if (err != 0 || a.r != b.r) {
            fprintf(stderr, "bench_join: wrong answer or error (%ld, %ld)\n", a.r, b.r);
            return 1;
        }
        t_ws[i] = t1 - t0;
        t_serial[i] = t2 - t1;
        result = a.r;
    }
    ws_pool_destroy(pool);
    if (t_ws == NULL || t_serial == NULL)
        return 1;
    qsort(t_ws, (size_t)reps, sizeof(double), compare);
    qsort(t_serial, (size_t)reps, sizeof(double), compare);
    long joins = joins_of(n);
    printf("fib(%d) = %ld, %ld joins, 1 worker, median of %d\n", n, result, joins, reps);
    printf("  ws_join recursion %8.2f ms\n", t_ws[reps / 2] * 1e3);
    printf("  plain recursion   %8.2f ms\n", t_serial[reps / 2] * 1e3);
    printf("  cost of a join    %8.2f ns\n", (t_ws[reps / 2] - t_serial[reps / 2]) * 1e9 / joins);
    free(t_ws);
    free(t_serial);
    return 0;
}
