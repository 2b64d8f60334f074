/* test_life_fork: fork() after pools exist. The child has only the thread that forked.
 *   - The default pool, in use in the parent, is made again in the child on first use:
 *     ws_parallel_for and ws_join in the child run (they used to hang on a pool whose threads
 *     exist only in the parent).
 *   - A pool the child inherited fails clearly: ws_pool_run, ws_submit and ws_group_submit return
 *     ENOTRECOVERABLE, and ws_pool_destroy frees it without waiting for threads it does not have.
 *   - A fork while other threads create and use the default pool and submit work does not leave
 *     the child with a library lock held (the child's default pool works). Under
 *     AddressSanitizer and ThreadSanitizer those threads pause at each fork (see PAUSE_FOR_FORK).
 *   - The parent's pools go on working after each fork.
 * Each child's output is checked by the parent; a hang is killed by the child's alarm.
 */
#include "test_external_util.h"

#include <pthread.h>
#include <string.h>

static atomic_ullong hits;

static void count_range(size_t b, size_t e, void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&hits, e - b);
}

static void nop(void *arg)
{
    (void)arg;
}

static void in_child(void *arg)
{
    ws_pool *inherited = arg;
    atomic_store(&hits, 0);
    ws_parallel_for(0, 10000, 0, count_range, NULL);
    sched_fib_arg f = {20, 0};
    sched_fib_join(&f);
    int run = ws_pool_run(inherited, nop, NULL);
    int submit = ws_submit(inherited, nop, NULL, 0);
    ws_group g;
    ws_group_init(&g, inherited);
    int gsubmit = ws_group_submit(&g, nop, NULL, 0);
    ws_group_wait(&g); /* nothing was admitted: returns at once */
    ws_pool_destroy(inherited);
    printf("hits %llu fib %llu run %d submit %d group %d\n", (unsigned long long)atomic_load(&hits),
           (unsigned long long)f.result, run, submit, gsubmit);
}

static void check_child(const sched_child *c, const char *what)
{
    sched_expect_clean_exit(c, what);
    char want[256];
    snprintf(want, sizeof want, "hits 10000 fib %llu run %d submit %d group %d\n",
             (unsigned long long)sched_fib_serial(20), ENOTRECOVERABLE, ENOTRECOVERABLE,
             ENOTRECOVERABLE);
    if (strcmp(c->out, want) != 0)
        WS_TEST_FAIL("%s: the child printed \"%s\", expected \"%s\"; stderr:\n%s", what, c->out,
                     want, c->err);
}

/* Forks from a process with live pools (the child helper of test_sched_util.h expects a single
 * thread, which this test deliberately is not: the library is what is being tested here). */
static void fork_and_check(ws_pool *inherited, const char *what)
{
    sched_child c;
    memset(&c, 0, sizeof c);
    sched_run_child(&c, in_child, inherited);
    check_child(&c, what);
}

static atomic_int stop_busy;

/* The sanitizers' runtimes (gcc 12) do not make their own allocators safe across fork(): a
 * child forked while another thread holds one of their locks hangs on it, in the sanitizer.
 * Under AddressSanitizer the child hung inside malloc before the library ran at all; under
 * ThreadSanitizer (1 run in 40) the child's first new worker spun in the runtime's thread start
 * (ProcCreate) on its internal allocator's lock (internal_allocator_cache_mu), which it does not
 * take around a fork. In those builds the busy threads pause around each fork, and the pools'
 * workers go idle (parked, outside the allocator); the library's own fork handling is the
 * same, and the normal build forks while they run. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
enum { PAUSE_FOR_FORK = 1 };
#else
enum { PAUSE_FOR_FORK = 0 };
#endif
static atomic_int pause_busy; /* the main thread is about to fork */
static atomic_ullong paused;  /* busy threads waiting at their safe point */

static void *busy_thread(void *arg)
{
    ws_pool *pool = arg;
    while (!atomic_load(&stop_busy)) {
        if (atomic_load(&pause_busy)) {
            atomic_fetch_add(&paused, 1);
            while (atomic_load(&pause_busy))
                sched_sleep_ms(1);
            atomic_fetch_sub(&paused, 1);
        }
        ws_parallel_for(0, 1000, 0, count_range, NULL);
        ASSERT_OK(ws_submit(pool, nop, NULL, 0));
    }
    return NULL;
}

int main(void)
{
    ws_pool *pool = ext_pool(2, 0);
    /* The default pool in use before the fork. */
    ws_parallel_for(0, 1000, 0, count_range, NULL);
    if (PAUSE_FOR_FORK)
        sched_sleep_ms(20); /* both pools' new workers finish starting (in the sanitizer's
                               allocator) and park */
    fork_and_check(pool, "fork with an idle default pool");

    pthread_t busy[2];
    for (int i = 0; i < 2; i++)
        ASSERT_OK(pthread_create(&busy[i], NULL, busy_thread, pool));
    for (int i = 0; i < (int)test_scaled(20, 5); i++) {
        if (PAUSE_FOR_FORK) {
            atomic_store(&pause_busy, 1);
            ext_wait_at_least(&paused, 2, "the busy threads to pause");
            sched_sleep_ms(20); /* the workers finish and park */
        }
        fork_and_check(pool, "fork while other threads use the pools");
        atomic_store(&pause_busy, 0);
    }
    atomic_store(&stop_busy, 1);
    for (int i = 0; i < 2; i++)
        ASSERT_OK(pthread_join(busy[i], NULL));

    sched_check_fib_on(pool, 20); /* the parent's pools still work */
    ws_pool_destroy(pool);
    printf("test_life_fork: ok\n");
    return 0;
}
