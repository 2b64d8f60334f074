/* test_sched_idle: an idle pool uses no CPU once its workers have parked.
 *
 * A pool of P workers (4 by default, more than this machine's cores) runs a small job; then
 * the test waits for the workers to settle and measures the CPU time of the whole process
 * (getrusage, user + system) over one second in which it does nothing but sleep.
 *
 * This is a bound on CPU time, not on wall-clock time. It is generous on purpose: 0.1 s of CPU
 * per idle second, against up to P seconds that P spinning or yielding workers would burn
 * (bounded by the number of cores, so 2 s here). It leaves room for what is legitimately
 * spent: the tick-based accounting of getrusage (a few milliseconds of rounding per thread),
 * the main thread's own sleep and calls, a library that parks with a timeout and re-checks
 * for work now and then, and the sanitizer runtimes' background threads. A pool that spins,
 * yields in a loop or wakes up very often exceeds it by a wide margin.
 *
 * usage: test_sched_idle [P [bound seconds]]
 */
#include "test_sched_util.h"

#include <sys/resource.h>

static double cpu_seconds(void)
{
    struct rusage ru;
    ASSERT_OK(getrusage(RUSAGE_SELF, &ru));
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static double idle_second(ws_pool *pool, unsigned settle_ms)
{
    ws_stats before, after;
    /* Settle: let the workers run down their spin and yield phases and park. */
    sched_sleep_ms(settle_ms);
    ws_pool_stats(pool, &before);
    double t0 = cpu_seconds();
    sched_sleep_ms(1000);
    double t1 = cpu_seconds();
    ws_pool_stats(pool, &after);
    printf("idle second: %.4f s of CPU; parks %" PRIu64 " -> %" PRIu64 ", steal attempts %" PRIu64
           " -> %" PRIu64 "\n",
           t1 - t0, before.parks, after.parks, before.steal_attempts, after.steal_attempts);
    return t1 - t0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep the output in order with stderr on a failure */
    unsigned workers = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
    double bound = argc > 2 ? atof(argv[2]) : 0.1;
    ASSERT(workers >= 1 && workers <= WS_MAX_WORKERS);

    ws_pool *pool = sched_pool(workers);
    sched_check_fib_on(pool, 20);

    /* Right after a job. */
    double used = idle_second(pool, 200);
    if (used >= bound)
        WS_TEST_FAIL("idle pool of %u workers used %.4f s of CPU in one second (bound %.2f)",
                     workers, used, bound);
    ws_stats st;
    ws_pool_stats(pool, &st);
    ASSERT_GE(st.parks, 1);

    /* Again after more work, to check the workers park again after being woken. */
    for (int i = 0; i < 10; i++)
        sched_check_fib_on(pool, 18);
    used = idle_second(pool, 200);
    if (used >= bound)
        WS_TEST_FAIL("idle pool of %u workers used %.4f s of CPU in one second (bound %.2f)",
                     workers, used, bound);

    ws_pool_destroy(pool);
    printf("ok\n");
    return 0;
}
