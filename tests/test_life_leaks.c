/* test_life_leaks: programs that use every part of the API and leave nothing allocated, run
 * under valgrind by tests/valgrind_leaks.sh ("All heap blocks were freed").
 *
 * usage: test_life_leaks CASE WORKERS
 *   futures   50 futures submitted from main, each submitting, getting and freeing one of its
 *             own on its worker; main gets and frees the 50, then destroys the pool (main's
 *             list of records, filled by its frees, used to outlive exit: 4,800 bytes)
 *   pool      an explicit pool: every API from a root run by ws_pool_run, futures from main and
 *             from an outside thread, groups and ws_submit from outside, then ws_pool_destroy
 *   default   the same on the default pool (of WS_NUM_WORKERS workers, which the caller sets),
 *             from main and from a second thread that exits before main does; the default pool
 *             is destroyed at exit
 * Each case checks its results and prints one line; the leak check is valgrind's.
 */
#include "test_sched_util.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <worksteal.h>

static ws_pool *the_pool; /* NULL: the default pool */

/* ---- fork-join ---- */

static void fib_spawn(void *p)
{
    sched_fib_arg *c = p;
    if (c->n < 2) {
        c->result = (uint64_t)c->n;
        return;
    }
    sched_fib_arg x = {c->n - 1, 0}, y = {c->n - 2, 0};
    ws_task t;
    ws_spawn(&t, fib_spawn, &x);
    fib_spawn(&y);
    ws_sync(&t);
    c->result = x.result + y.result;
}

WS_TASK_1(long, fib_task, int, n)
{
    if (n < 2)
        return n;
    WS_SPAWN(fib_task, n - 1);
    long y = WS_CALL(fib_task, n - 2);
    return WS_SYNC(fib_task) + y;
}

/* ---- futures ---- */

static void *leaf(void *a)
{
    return a;
}

static void *outer(void *a)
{
    ws_future *f;
    ASSERT_OK(ws_future_submit(&f, NULL, leaf, a));
    void *r = ws_future_get(f);
    ws_future_free(f);
    return r;
}

/* n futures of outer() on the_pool from the calling thread: the sum of 0..n-1. */
static long futures_round(int n)
{
    ws_future *fs[64];
    ASSERT(n <= 64);
    for (long i = 0; i < n; i++)
        ASSERT_OK(ws_future_submit(&fs[i], the_pool, outer, (void *)i));
    long sum = 0;
    for (int i = 0; i < n; i++) {
        sum += (long)ws_future_get(fs[i]);
        ws_future_free(fs[i]);
    }
    return sum;
}

/* ---- loops, groups, jobs, blocking ---- */

static void count_range(size_t b, size_t e, void *ctx)
{
    atomic_fetch_add((atomic_ullong *)ctx, e - b);
}

static void fold_sum(size_t b, size_t e, void *acc, void *ctx)
{
    (void)ctx;
    for (size_t i = b; i < e; i++)
        *(uint64_t *)acc += i;
}

static void combine_sum(void *acc, const void *right, void *ctx)
{
    (void)ctx;
    *(uint64_t *)acc += *(const uint64_t *)right;
}

static atomic_int jobs_ran;

static void job(void *arg)
{
    (void)arg;
    atomic_fetch_add(&jobs_ran, 1);
}

static void blocking_job(void *arg)
{
    (void)arg;
    ws_block_begin(); /* a spare may start meanwhile */
    usleep(2000);
    ws_block_end();
    atomic_fetch_add(&jobs_ran, 1);
}

/* A group of n jobs (half of them blocking) and one cancelled group, waited for. */
static void groups(int n)
{
    ws_group g;
    ws_group_init(&g, the_pool);
    for (int i = 0; i < n; i++)
        ASSERT_OK(ws_group_submit(&g, i % 2 ? blocking_job : job, NULL, 0));
    ws_group_wait(&g);
    ws_group c;
    ws_group_init(&c, the_pool);
    ws_group_cancel(&c);
    int err = ws_group_submit_cancellable(&c, job, job, NULL, 0);
    ASSERT(err == 0 || err == ECANCELED);
    (void)ws_group_wait_status(&c);
}

/* ---- everything, from one root ---- */

typedef struct all_result {
    long join, spawn, task, futures;
    unsigned long long loop;
    uint64_t reduce;
} all_result;

static void all_root(void *arg)
{
    all_result *r = arg;
    sched_fib_arg a = {15, 0}, b = {15, 0};
    sched_fib_join(&a);
    fib_spawn(&b);
    r->join = (long)a.result;
    r->spawn = (long)b.result;
    r->task = fib_task_run(the_pool, 15);
    r->futures = futures_round(20);
    atomic_ullong hits = 0;
    ws_parallel_for(0, 3000, 0, count_range, &hits);
    r->loop = atomic_load(&hits);
    uint64_t zero = 0;
    ASSERT_OK(ws_parallel_reduce(0, 1000, 0, sizeof zero, &zero, fold_sum, combine_sum, NULL,
                                 &r->reduce));
    groups(6);
}

static void check_all(const all_result *r)
{
    ASSERT_EQ(r->join, 610);
    ASSERT_EQ(r->spawn, 610);
    ASSERT_EQ(r->task, 610);
    ASSERT_EQ(r->futures, 190);
    ASSERT_UEQ(r->loop, 3000);
    ASSERT_UEQ(r->reduce, 499500);
}

/* The whole API from the calling thread (an outside thread of the_pool). */
static void from_outside(void)
{
    all_result r;
    memset(&r, 0, sizeof r);
    if (the_pool != NULL)
        ASSERT_OK(ws_pool_run(the_pool, all_root, &r));
    else
        all_root(&r); /* outside a worker: every call goes to the default pool */
    check_all(&r);
    ASSERT_EQ(futures_round(30), 435);
    groups(4);
    for (int i = 0; i < 8; i++)
        ASSERT_OK(ws_submit(the_pool != NULL ? the_pool : ws_default_pool(),
                            i % 4 ? job : blocking_job, NULL, 0));
    sched_fib_arg c = {12, 0};
    sched_fib_join(&c); /* the default pool from outside (on an explicit pool's case too) */
    ASSERT_UEQ(c.result, 144);
    ASSERT_EQ(fib_task_run(the_pool, 12), 144);
}

static void *outside_thread(void *arg)
{
    (void)arg;
    from_outside();
    return NULL;
}

static void from_two_threads(void)
{
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, outside_thread, NULL));
    from_outside();
    ASSERT_OK(pthread_join(t, NULL));
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_life_leaks futures|pool|default WORKERS\n");
        return 2;
    }
    ws_config cfg = {.workers = (unsigned)atoi(argv[2])};
    if (strcmp(argv[1], "futures") == 0) {
        ASSERT_OK(ws_pool_create(&the_pool, &cfg));
        ASSERT_EQ(futures_round(50), 1225);
        ws_pool_destroy(the_pool);
    } else if (strcmp(argv[1], "pool") == 0) {
        ASSERT_OK(ws_pool_create(&the_pool, &cfg));
        from_two_threads();
        ws_pool_destroy(the_pool);
    } else if (strcmp(argv[1], "default") == 0) {
        /* WORKERS reaches the default pool through WS_NUM_WORKERS (set by the caller: a setenv
         * here would leave the environment's copy allocated). */
        from_two_threads();
    } else {
        fprintf(stderr, "test_life_leaks: unknown case %s\n", argv[1]);
        return 2;
    }
    printf("test_life_leaks %s %s: ok\n", argv[1], argv[2]);
    return 0;
}
