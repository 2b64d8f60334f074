/* test_sched_contention: idle workers do not spin while the machine has no CPU to spare
 * (ws__idle_contended, src/idle.c).
 *
 *   parse       the runnable-thread count read from /proc/loadavg's text, and malformed texts
 *               (0: unknown, which never counts as contended).
 *   contended   the machine's count forced (a test hook) to more runnable threads than CPUs,
 *               and the pool left to count it a few times: a worker that runs out of work parks
 *               without spinning or yielding, after external jobs (no lingering batch) and
 *               fork-join work alike; every job still runs once.
 *               The same rounds with the count forced low spin, then yield 16 times, before
 *               they park. This program defines sched_yield() (the library's yields call it)
 *               and counts the workers' calls: the assertions are on counts, never on time.
 *
 *   score       the verdict follows most of the last counts, not one: forced counts, busy or
 *               not, each after more than a millisecond, and the pool's answer after each.
 *
 * usage: test_sched_contention parse|contended|score
 */
#include "../src/internal.h" /* ws__idle_contended */
#include "../src/platform.h"
#include "test_sched_util.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { ROUNDS = 20, JOBS = 8 };

static void case_parse(void)
{
    ASSERT_EQ(ws__runnable_threads_in("0.79 1.07 2.03 5/108 15519\n"), 5u);
    ASSERT_EQ(ws__runnable_threads_in("12.00 9.50 8.25 131/2048 4194303"), 131u);
    const char *bad[] = {"", "0.79 1.07 2.03", "0.79 1.07 2.03 x/108 1", "0.79 1.07 2.03 5 1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (ws__runnable_threads_in(bad[i]) != 0)
            WS_TEST_FAIL("\"%s\" read as %u runnable threads, expected 0 (unknown)", bad[i],
                         ws__runnable_threads_in(bad[i]));
    unsigned now = ws__runnable_threads();
    printf("this machine: %u runnable threads now, %u CPUs online\n", now, ws__online_cpus());
    ASSERT(now >= 1); /* the caller runs; /proc/loadavg exists on every Linux */
}

static _Atomic unsigned ran[JOBS];
static _Atomic uint64_t worker_yields;

int sched_yield(void)
{
    if (ws_worker_id() >= 0)
        atomic_fetch_add(&worker_yields, 1);
    return (int)syscall(SYS_sched_yield);
}

static void mark(void *arg)
{
    atomic_fetch_add(&ran[(uintptr_t)arg], 1);
}

/* One round: JOBS external jobs of a group and a fork-join pair from inside a job, waited for;
 * then the pool is left until every worker has parked again. */
static void fork_pair(void *arg)
{
    (void)arg;
    ws_join(mark, (void *)(uintptr_t)0, mark, (void *)(uintptr_t)1);
}

static uint64_t parks(ws_pool *pool)
{
    ws_stats s;
    ws_pool_stats(pool, &s);
    return s.parks;
}

static void wait_all_parked(ws_pool *pool, uint64_t before, unsigned workers)
{
    for (int i = 0; i < 20000 && parks(pool) < before + workers; i++)
        sched_sleep_ms(1);
    if (parks(pool) < before + workers)
        WS_TEST_FAIL("the workers did not park within 20 s (parks %llu -> %llu)",
                     (unsigned long long)before, (unsigned long long)parks(pool));
}

static void noop(void *arg)
{
    (void)arg;
}

/* A pool's verdict follows most of its last counts of the machine, made at most once a
 * millisecond by an idle worker (idle.c, count_runnable): jobs 2 ms apart, until it has counted
 * often enough to have one. */
static void let_pool_count(ws_pool *pool)
{
    for (int i = 0; i < 8; i++) {
        ASSERT_OK(ws_pool_run(pool, noop, NULL));
        sched_sleep_ms(2);
    }
}

/* The workers' yields in ROUNDS rounds with the machine's runnable count forced to runnable. */
static uint64_t yields_in_rounds(unsigned runnable)
{
    ws__test_force_runnable(runnable);
    const unsigned workers = 2;
    ws_pool *pool = sched_pool(workers);
    let_pool_count(pool);
    wait_all_parked(pool, 0, workers);
    uint64_t yields = atomic_load(&worker_yields);
    ws_stats before;
    ws_pool_stats(pool, &before);
    for (int r = 0; r < ROUNDS; r++) {
        memset(ran, 0, sizeof ran);
        uint64_t p = parks(pool);
        ws_group g;
        ws_group_init(&g, pool);
        for (uintptr_t j = 2; j < JOBS; j++)
            ASSERT_OK(ws_group_submit(&g, mark, (void *)j, 0));
        ASSERT_OK(ws_group_submit(&g, fork_pair, NULL, 0));
        ASSERT_OK(ws_group_wait_status(&g));
        for (unsigned j = 0; j < JOBS; j++)
            if (atomic_load(&ran[j]) != 1)
                WS_TEST_FAIL("round %d: job %u ran %u times", r, j, atomic_load(&ran[j]));
        wait_all_parked(pool, p, 1); /* at least the worker that ran the last job */
    }
    ws_stats after;
    ws_pool_stats(pool, &after);
    ws_pool_destroy(pool);
    ws__test_force_runnable(0);
    yields = atomic_load(&worker_yields) - yields;
    printf("runnable forced to %u: %llu yields in %d rounds, %llu parks\n", runnable,
           (unsigned long long)yields, ROUNDS, (unsigned long long)(after.parks - before.parks));
    return yields;
}

static void case_contended(void)
{
    uint64_t busy = yields_in_rounds(ws__online_cpus() + 2);
    uint64_t quiet = yields_in_rounds(1);
    /* Contended, a worker yields only where it must not sleep (a job in an injector that it
     * cannot take yet: rare); otherwise each idle spell yields 16 times before it parks. */
    if (busy > ROUNDS)
        WS_TEST_FAIL("contended: %llu yields in %d rounds: the workers did not park at once",
                     (unsigned long long)busy, ROUNDS);
    if (quiet < 16 * ROUNDS)
        WS_TEST_FAIL("not contended: %llu yields in %d rounds, expected 16 or more per round",
                     (unsigned long long)quiet, ROUNDS);
}

/* The verdict of a pool whose worker is held in a job (so that only this thread counts), asked
 * after the next count (more than a millisecond since the last) with the machine's count forced
 * to runnable. */
static bool verdict_after_count(ws_pool *pool, unsigned runnable)
{
    ws__test_force_runnable(runnable);
    sched_sleep_ms(2);
    return ws__idle_contended(pool);
}

static _Atomic int held; /* 1 while hold_worker runs, 2 once it may return */

static void hold_worker(void *arg)
{
    (void)arg;
    atomic_store(&held, 1);
    while (atomic_load(&held) != 2)
        sched_sleep_ms(1);
}

static void case_score(void)
{
    const unsigned busy = ws__online_cpus() + 3, quiet = 1; /* the held worker is awake */
    ws_pool *pool = sched_pool(1);
    ws_group g;
    ws_group_init(&g, pool);
    ASSERT_OK(ws_group_submit(&g, hold_worker, NULL, 0));
    while (atomic_load(&held) != 1)
        sched_sleep_ms(1);
    (void)verdict_after_count(pool, quiet); /* whatever the worker counted before */
    (void)verdict_after_count(pool, quiet);
    ASSERT(!verdict_after_count(pool, quiet));
    /* Busy counts that are not three in a row (net) do not make it contended... */
    ASSERT(!verdict_after_count(pool, busy));
    ASSERT(!verdict_after_count(pool, busy));
    ASSERT(!verdict_after_count(pool, quiet));
    ASSERT(!verdict_after_count(pool, busy));
    /* ...the third does; */
    ASSERT(verdict_after_count(pool, busy));
    ASSERT(verdict_after_count(pool, busy));
    /* quiet counts end it only once they outweigh the busy ones. */
    ASSERT(verdict_after_count(pool, quiet));
    ASSERT(verdict_after_count(pool, quiet));
    ASSERT(verdict_after_count(pool, busy));
    ASSERT(verdict_after_count(pool, quiet));
    ASSERT(!verdict_after_count(pool, quiet));
    ASSERT(!verdict_after_count(pool, busy));
    ws__test_force_runnable(0);
    atomic_store(&held, 2);
    ASSERT_OK(ws_group_wait_status(&g));
    ws_pool_destroy(pool);
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "parse";
    if (strcmp(c, "parse") == 0)
        case_parse();
    else if (strcmp(c, "contended") == 0)
        case_contended();
    else if (strcmp(c, "score") == 0)
        case_score();
    else
        WS_TEST_FAIL("unknown case %s", c);
    printf("test_sched_contention %s: ok\n", c);
    return 0;
}
