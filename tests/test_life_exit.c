/* test_life_exit: the default pool at exit, and contract messages for misused pools.
 *   late      an atexit handler that runs after the default pool was destroyed at exit calls
 *             ws_parallel_for, ws_join, ws_spawn/ws_sync and ws_parallel_reduce: they run inline
 *             on the caller, with correct results, and leave no thread behind (they used to
 *             make a new default pool that was never destroyed). An explicit
 *             ws_default_pool() there makes a pool whose destruction runs at the end of exit.
 *   exit      exit() from a task of the default pool, and from a task of another pool run by a
 *             job of the default pool (which waits for it): the process exits with the status
 *             given; the second used to hang, the default pool's destruction waiting for the job.
 *   misuse    ws_pool_destroy(ws_default_pool()), and NULL pools given to ws_pool_workers,
 *             ws_pool_threads and ws_pool_stats, each abort with one line naming the function
 *             (they used to free the default pool under its users, or crash).
 * Each case runs in a child process whose output the parent checks.
 */
#include "test_external_util.h"

#include <string.h>

static atomic_ullong late_hits;

static void count_range(size_t b, size_t e, void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&late_hits, e - b);
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

static void set_one(void *arg)
{
    *(int *)arg = 1;
}

static void late_handler(void)
{
    int before = sched_thread_count();
    ws_parallel_for(0, 5000, 0, count_range, NULL);
    sched_fib_arg f = {18, 0};
    sched_fib_join(&f);
    int spawned = 0;
    ws_task t;
    ws_spawn(&t, set_one, &spawned);
    ws_sync(&t);
    uint64_t zero = 0, sum = 0;
    int err = ws_parallel_reduce(0, 1000, 0, sizeof zero, &zero, fold_sum, combine_sum, NULL, &sum);
    int after = sched_thread_count();
    printf("late: hits %llu fib %llu spawned %d reduce %d sum %llu new threads %d\n",
           (unsigned long long)atomic_load(&late_hits), (unsigned long long)f.result, spawned, err,
           (unsigned long long)sum, after - before);
    ws_pool *again = ws_default_pool(); /* made again; destroyed at the end of exit */
    int run = ws_pool_run(again, set_one, &spawned);
    printf("late: explicit default pool: run %d\n", run);
    fflush(stdout);
}

static void late_child(void *arg)
{
    (void)arg;
    atexit(late_handler); /* registered first, so it runs after the default pool's handler */
    ws_parallel_for(0, 100, 0, count_range, NULL); /* makes the default pool */
    atomic_store(&late_hits, 0);
    exit(0);
}

static void check_late(void)
{
    sched_child c;
    memset(&c, 0, sizeof c);
    sched_run_child(&c, late_child, NULL);
    sched_expect_clean_exit(&c, "late");
    char want[256];
    snprintf(want, sizeof want,
             "late: hits 5000 fib %llu spawned 1 reduce 0 sum 499500 new threads 0\n"
             "late: explicit default pool: run 0\n",
             (unsigned long long)sched_fib_serial(18));
    if (strcmp(c.out, want) != 0)
        WS_TEST_FAIL("late: the child printed\n%s\nexpected\n%s\nstderr:\n%s", c.out, want, c.err);
    printf("late: calls after the default pool's destruction ran inline, no thread left\n");
}

/* exit() from a task: of the default pool itself, or of another pool inside a job of the default
 * pool, which waits for that task (the default pool's destruction at exit must not wait for its
 * work then). Each must end the process with its status, not hang. */
static ws_pool *inner_pool;

static void exit_now(void *arg)
{
    printf("exit from a task: %s\n", (const char *)arg);
    fflush(stdout);
    exit(3);
}

static void run_on_inner(void *arg)
{
    (void)ws_pool_run(inner_pool, exit_now, arg);
}

static void exit_nested_child(void *arg)
{
    (void)arg;
    ASSERT_OK(ws_pool_create(&inner_pool, &(ws_config){.workers = 1}));
    (void)ws_pool_run(ws_default_pool(), run_on_inner, (char *)"nested");
}

static void exit_default_child(void *arg)
{
    (void)arg;
    (void)ws_pool_run(ws_default_pool(), exit_now, (char *)"default");
}

static void check_exit_from_task(void (*child)(void *), const char *what)
{
    sched_child c;
    memset(&c, 0, sizeof c);
    sched_run_child(&c, child, NULL);
    char want[64];
    snprintf(want, sizeof want, "exit from a task: %s\n", what);
    if (!WIFEXITED(c.status) || WEXITSTATUS(c.status) != 3 || strcmp(c.out, want) != 0)
        WS_TEST_FAIL("exit from a task (%s): status 0x%x (want exit 3), stdout:\n%s\nstderr:\n%s",
                     what, (unsigned)c.status, c.out, c.err);
    printf("%s", c.out);
}

static void destroy_default(void *arg)
{
    (void)arg;
    ws_pool_destroy(ws_default_pool());
}

static void workers_null(void *arg)
{
    (void)arg;
    printf("%u\n", ws_pool_workers(NULL));
}

static void threads_null(void *arg)
{
    (void)arg;
    printf("%u\n", ws_pool_threads(NULL));
}

static void stats_null(void *arg)
{
    (void)arg;
    ws_stats s;
    ws_pool_stats(NULL, &s);
}

static void expect_contract(void (*fn)(void *), const char *line)
{
    sched_child c;
    memset(&c, 0, sizeof c);
    sched_run_child(&c, fn, NULL);
    if (!WIFSIGNALED(c.status) || WTERMSIG(c.status) != SIGABRT)
        WS_TEST_FAIL("expected an abort with \"%s\"; status 0x%x, stderr:\n%s", line,
                     (unsigned)c.status, c.err);
    if (strstr(c.err, line) == NULL || sched_count_lines(c.err) != 1)
        WS_TEST_FAIL("expected one line \"%s\"; stderr:\n%s", line, c.err);
    printf("misuse: %s", c.err);
}

int main(void)
{
    check_late();
    check_exit_from_task(exit_default_child, "default");
    check_exit_from_task(exit_nested_child, "nested");
    expect_contract(destroy_default, "worksteal: ws_pool_destroy: the default pool is destroyed "
                                     "at exit, not by the caller");
    expect_contract(workers_null, "worksteal: ws_pool_workers: NULL pool");
    expect_contract(threads_null, "worksteal: ws_pool_threads: NULL pool");
    expect_contract(stats_null, "worksteal: ws_pool_stats: NULL pool");
    printf("test_life_exit: ok\n");
    return 0;
}
