/* test_external_util.h: helpers shared by the tests of external work (tests/test_external_*.c):
 * making pools, sleeping, waiting for a condition with a hang guard, gates that hold a worker
 * until the test releases it, counting the process's threads, and running code in a forked
 * child with its stderr captured. Header-only, like test.h.
 */
#ifndef WS_TEST_EXTERNAL_UTIL_H
#define WS_TEST_EXTERNAL_UTIL_H

#include "test.h"
#include "test_sched_util.h" /* threads, child processes */
#include "worksteal.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A wait for another thread that lasts longer than this is reported as a hang (with what was
 * awaited), before ctest's TIMEOUT would kill the test without a word. Not a performance bound:
 * every wait below is for something that must happen eventually. */
#define EXT_HANG_SECONDS test_hang_seconds(120.0)

static inline void ext_sleep_us(unsigned us)
{
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static inline void ext_sleep_ms(unsigned ms)
{
    ext_sleep_us(ms * 1000u);
}

/* Polls *v until it is at least want: yields first, then sleeps 100 us between looks (the
 * machine may have fewer cores than the test has threads). Fails the test after
 * EXT_HANG_SECONDS, naming what it waited for. */
static inline void ext_wait_at_least(atomic_ullong *v, unsigned long long want, const char *what)
{
    double start = sched_now();
    for (unsigned i = 0; atomic_load(v) < want; i++) {
        if (i < 100) {
            sched_yield();
            continue;
        }
        ext_sleep_us(100);
        if (sched_now() - start > EXT_HANG_SECONDS)
            WS_TEST_FAIL("hang: waited %.0f s for %s (%llu of %llu)", EXT_HANG_SECONDS, what,
                         (unsigned long long)atomic_load(v), want);
    }
}

/* A gate: a job holds its worker in gate_hold until the test opens the gate. The holder spins
 * with yields and short sleeps, so it occupies its worker without starving the other threads
 * of a small machine. */
typedef struct ext_gate {
    atomic_int open;
    atomic_ullong arrived; /* holders that reached the gate */
} ext_gate;

static inline void ext_gate_init(ext_gate *g)
{
    atomic_init(&g->open, 0);
    atomic_init(&g->arrived, 0);
}

static inline void ext_gate_hold(ext_gate *g)
{
    atomic_fetch_add(&g->arrived, 1);
    for (unsigned i = 0; !atomic_load(&g->open); i++) {
        if (i < 64)
            sched_yield();
        else
            ext_sleep_us(50);
    }
}

/* As a job function: arg is the gate. */
static inline void ext_gate_job(void *arg)
{
    ext_gate_hold((ext_gate *)arg);
}

static inline void ext_gate_open(ext_gate *g)
{
    atomic_store(&g->open, 1);
}

/* About `n` units of CPU work that the compiler cannot remove. */
static inline uint64_t ext_burn(unsigned n)
{
    volatile uint64_t x = 0x9e3779b97f4a7c15ull;
    for (unsigned i = 0; i < n; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

static inline ws_pool *ext_pool(unsigned workers, unsigned max_spares)
{
    ws_pool *pool = NULL;
    ws_config cfg = {0};
    cfg.workers = workers;
    cfg.max_spares = max_spares;
    int err = ws_pool_create(&pool, &cfg);
    if (err != 0)
        WS_TEST_FAIL("ws_pool_create(workers=%u, max_spares=%u): %d (%s)", workers, max_spares, err,
                     ws_strerror(err));
    ASSERT_EQ(ws_pool_workers(pool), workers);
    return pool;
}

/* A positive number from argv[i], or `fallback` when absent. */
static inline unsigned ext_arg_unsigned(int argc, char **argv, int i, unsigned fallback)
{
    if (argc <= i)
        return fallback;
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*end != '\0' || v < 1 || v > 100000000)
        WS_TEST_FAIL("bad argument %s", argv[i]);
    return (unsigned)v;
}

/* ---- threads and CPU time ---------------------------------------------------------------- */

/* User plus system CPU time of the whole process, in seconds. */
static inline double ext_process_cpu_s(void)
{
    struct rusage ru;
    ASSERT_OK(getrusage(RUSAGE_SELF, &ru));
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

#endif /* WS_TEST_EXTERNAL_UTIL_H */
