/* api_costs: N tasks through one API on a pool of one worker, for counting the instructions a
 * task costs with callgrind (bench/api-instructions.sh runs it at N and 2N and divides the
 * difference by N, so that start-up, teardown and idle waiting cancel out). Each task adds one
 * to a counter; the run checks the count.
 *
 *   api_costs CASE N    CASE: join      fib-shaped ws_join recursion with N - 1 joins at most
 *                                       (the smallest fib tree of at least N leaves' worth)
 *                             for       ws_parallel_for over N items, grain 1
 *                             reduce    ws_parallel_reduce over N items, grain 1
 *                             future    N futures submitted, got and freed one after another
 *                             group     N group jobs submitted, then one ws_group_wait
 *                             submit    N detached ws_submit jobs (the pool's teardown waits)
 * Every case runs inside ws_pool_run on the worker, as a task's code would.
 */
#include "worksteal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long hits; /* one worker: only its thread writes it */

static void hit(void *arg)
{
    (void)arg;
    hits++;
}

static void hit_range(size_t begin, size_t end, void *ctx)
{
    (void)ctx;
    hits += (long)(end - begin);
}

static void fold_count(size_t begin, size_t end, void *acc, void *ctx)
{
    (void)ctx;
    *(long *)acc += (long)(end - begin);
}

static void combine_count(void *acc, const void *right, void *ctx)
{
    (void)ctx;
    *(long *)acc += *(const long *)right;
}

static void *hit_future(void *arg)
{
    hits++;
    return arg;
}

/* N leaves, split in halves: N - 1 joins. */
typedef struct span {
    long n;
} span;

static void join_leaves(void *p)
{
    span *s = p;
    if (s->n == 1) {
        hits++;
        return;
    }
    span a = {s->n / 2}, b = {s->n - s->n / 2};
    ws_join(join_leaves, &a, join_leaves, &b);
}

typedef struct run_case {
    const char *name;
    long n;
    ws_pool *pool;
    int err;
} run_case;

static void run_tasks(void *p)
{
    run_case *c = p;
    long n = c->n;
    if (strcmp(c->name, "join") == 0) {
        span s = {n};
        join_leaves(&s);
    } else if (strcmp(c->name, "for") == 0) {
        ws_parallel_for(0, (size_t)n, 1, hit_range, NULL);
    } else if (strcmp(c->name, "reduce") == 0) {
        long zero = 0, sum = 0;
        c->err |= ws_parallel_reduce(0, (size_t)n, 1, sizeof zero, &zero, fold_count, combine_count,
                                     NULL, &sum);
        hits += sum;
    } else if (strcmp(c->name, "future") == 0) {
        for (long i = 0; i < n; i++) {
            ws_future *f;
            c->err |= ws_future_submit(&f, NULL, hit_future, NULL);
            (void)ws_future_get(f);
            ws_future_free(f);
        }
    } else if (strcmp(c->name, "group") == 0) {
        ws_group g;
        ws_group_init(&g, NULL);
        for (long i = 0; i < n; i++)
            c->err |= ws_group_submit(&g, hit, NULL, 0);
        ws_group_wait(&g);
    } else if (strcmp(c->name, "submit") == 0) {
        for (long i = 0; i < n; i++)
            c->err |= ws_submit(c->pool, hit, NULL, 0);
    } else {
        c->err = -1;
    }
}

int main(int argc, char **argv)
{
    if (argc != 3 || atol(argv[2]) < 1) {
        fprintf(stderr, "usage: api_costs join|for|reduce|future|group|submit N\n");
        return 2;
    }
    ws_pool *pool;
    if (ws_pool_create(&pool, &(ws_config){.workers = 1}) != 0)
        return 1;
    run_case c = {argv[1], atol(argv[2]), pool, 0};
    int err = ws_pool_run(pool, run_tasks, &c);
    ws_pool_destroy(pool);
    if (err != 0 || c.err != 0 || hits != c.n) {
        fprintf(stderr, "api_costs %s: error, or %ld tasks ran of %ld\n", c.name, hits, c.n);
        return 1;
    }
    printf("api_costs %s: %ld tasks\n", c.name, hits);
    return 0;
}
