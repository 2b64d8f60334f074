/* test_sched_pool_churn: creates and destroys K pools (1000 by default, scaled down under the
 * sanitizers), up to three alive at a time, with 1 to 4 workers each (chosen at random, seeded
 * and printed). Some pools run fib, some a trivial task, some nothing at all, and some are
 * destroyed right after creation while their workers may still be starting. The test must not
 * hang (ctest TIMEOUT), must not leak (the ASan build checks at exit), and must leave no thread
 * behind (/proc/self/task is counted at the end).
 *
 * usage: test_sched_pool_churn [K]
 */
#include "test_sched_util.h"

#include <stdatomic.h>

static _Atomic int trivial_runs;

static void trivial(void *p)
{
    (void)p;
    atomic_fetch_add_explicit(&trivial_runs, 1, memory_order_relaxed);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep the output in order with stderr on a failure */
    uint64_t k = argc > 1 ? strtoull(argv[1], NULL, 0) : test_scaled(1000, 200);
    uint64_t seed = test_seed("test_sched_pool_churn");
    uint64_t rng = seed | 1;
    int threads_before = sched_thread_baseline();

    enum { LIVE = 3 };
    ws_pool *live[LIVE] = {NULL, NULL, NULL};
    uint64_t workers_total = 0, fibs = 0, trivials = 0;
    for (uint64_t i = 0; i < k; i++) {
        uint64_t x = test_rand(&rng);
        unsigned workers = 1 + (unsigned)(x % 4);
        ws_pool *pool = sched_pool(workers);
        workers_total += workers;
        switch ((x >> 8) % 4) {
        case 0: /* destroyed at once */
            ws_pool_destroy(pool);
            continue;
        case 1:
            sched_check_fib_on(pool, 12 + (int)((x >> 16) % 6));
            fibs++;
            break;
        case 2:
            ASSERT_OK(ws_pool_run(pool, trivial, NULL));
            trivials++;
            break;
        default: /* no work */
            break;
        }
        /* Keep it alive for a while; destroy the one it replaces, which may be idle (parked)
         * or may still be winding down after its work. */
        unsigned slot = (unsigned)((x >> 24) % LIVE);
        ws_pool_destroy(live[slot]);
        live[slot] = pool;
    }
    for (unsigned s = 0; s < LIVE; s++)
        ws_pool_destroy(live[s]);

    ASSERT_EQ(atomic_load(&trivial_runs), trivials);
    int threads_after = sched_wait_thread_count(threads_before);
    printf("%" PRIu64 " pools (%" PRIu64 " workers in all), %" PRIu64 " ran fib, %" PRIu64
           " a trivial task; threads %d before, %d after\n",
           k, workers_total, fibs, trivials, threads_before, threads_after);
    ASSERT_EQ(threads_after, threads_before);
    printf("ok\n");
    return 0;
}
