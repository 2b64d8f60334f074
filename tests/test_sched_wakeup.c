/* test_sched_wakeup: lost wake-up stress. One tiny task is submitted to a pool, from outside,
 * R times (10^5 by default, scaled down under the sanitizers), and each ws_pool_run must return
 * with the task done. If the pool ever loses a wake-up (a worker parks after the submitter
 * checked for sleepers, with the job already in the injector), a ws_pool_run never returns and
 * the ctest TIMEOUT fails the test.
 *
 * Between rounds the submitter varies its timing at random (seeded, printed): mostly it submits
 * back to back, sometimes it spins a little (to land while the workers spin or yield), and from
 * time to time it waits until the workers have parked (the parks counter grows) before
 * submitting. A second phase does the same from several threads at once.
 *
 * usage: test_sched_wakeup [P [R [submitters]]]   (defaults: 2 workers, 10^5 rounds, 3)
 */
#include "test_sched_util.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct tiny {
    uint64_t magic;
    uint64_t done; /* written by the task, read by the submitter after ws_pool_run returns */
    unsigned workers;
} tiny;

#define MAGIC 0x7e57ab1eULL

static _Atomic uint64_t total_runs;

static void tiny_fn(void *p)
{
    tiny *t = p;
    if (t->magic != MAGIC)
        WS_TEST_FAIL("bad magic");
    int id = ws_worker_id();
    if (id < 0 || (unsigned)id >= t->workers)
        WS_TEST_FAIL("tiny task ran on worker %d of %u", id, t->workers);
    t->done++;
    atomic_fetch_add_explicit(&total_runs, 1, memory_order_relaxed);
}

/* Waits until the parks counter exceeds `since` (some worker went to sleep after the last
 * round), for at most about limit_ms; returns whether it did. */
static bool wait_for_park(ws_pool *pool, uint64_t since, unsigned limit_ms)
{
    for (unsigned i = 0; i < limit_ms; i++) {
        ws_stats st;
        ws_pool_stats(pool, &st);
        if (st.parks > since)
            return true;
        sched_sleep_ms(1);
    }
    return false;
}

typedef struct submitter {
    ws_pool *pool;
    uint64_t rounds;
    uint64_t park_every; /* about one round in park_every waits for the workers to park */
    uint64_t seed;
    uint64_t parked_rounds; /* rounds submitted right after a park was observed */
} submitter;

static void *submit_loop(void *p)
{
    submitter *s = p;
    uint64_t rng = s->seed | 1;
    tiny t = {MAGIC, 0, ws_pool_workers(s->pool)};
    for (uint64_t r = 0; r < s->rounds; r++) {
        uint64_t x = test_rand(&rng);
        if (x % s->park_every == 0) {
            ws_stats st;
            ws_pool_stats(s->pool, &st);
            if (wait_for_park(s->pool, st.parks, 200))
                s->parked_rounds++;
        } else if (x % 8 == 0) {
            volatile unsigned spin = (unsigned)((x >> 16) % 5000);
            while (spin > 0)
                spin--;
        }
        uint64_t before = t.done;
        ASSERT_OK(ws_pool_run(s->pool, tiny_fn, &t));
        if (t.done != before + 1)
            WS_TEST_FAIL("round %" PRIu64 ": ws_pool_run returned, task count %" PRIu64
                         " -> %" PRIu64,
                         r, before, t.done);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep the output in order with stderr on a failure */
    unsigned workers = argc > 1 ? (unsigned)atoi(argv[1]) : 2;
    uint64_t rounds = argc > 2 ? strtoull(argv[2], NULL, 0) : test_scaled(100000, 20000);
    unsigned nsub = argc > 3 ? (unsigned)atoi(argv[3]) : 3;
    ASSERT(workers >= 1 && workers <= WS_MAX_WORKERS);
    ASSERT(nsub >= 1 && nsub <= 64);
    uint64_t seed = test_seed("test_sched_wakeup");

    ws_pool *pool = sched_pool(workers);

    /* Phase 0: a pool that has just been created and whose workers have parked. The limit is
     * only there to turn "never parks" into a message rather than a timeout. */
    if (!wait_for_park(pool, 0, 10000))
        WS_TEST_FAIL("no worker of an idle pool parked within 10 s");
    tiny t = {MAGIC, 0, workers};
    ASSERT_OK(ws_pool_run(pool, tiny_fn, &t));
    ASSERT_UEQ(t.done, 1);

    /* Phase 1: one submitter. */
    uint64_t park_every = rounds / 40 > 16 ? rounds / 40 : 16;
    submitter one = {pool, rounds, park_every, seed, 0};
    submit_loop(&one);

    /* Phase 2: several submitters at once, each with its own stream of random timings. */
    pthread_t th[64];
    submitter subs[64];
    for (unsigned i = 0; i < nsub; i++) {
        subs[i] = (submitter){pool, rounds / nsub + 1, park_every,
                              seed + 0x9E3779B97F4A7C15ULL * (i + 1), 0};
        ASSERT_OK(pthread_create(&th[i], NULL, submit_loop, &subs[i]));
    }
    uint64_t parked = one.parked_rounds;
    for (unsigned i = 0; i < nsub; i++) {
        ASSERT_OK(pthread_join(th[i], NULL));
        parked += subs[i].parked_rounds;
    }

    uint64_t want = 1 + rounds + (uint64_t)nsub * (rounds / nsub + 1);
    ASSERT_UEQ(atomic_load(&total_runs), want);
    ws_stats st;
    ws_pool_stats(pool, &st);
    printf("P=%u rounds %" PRIu64 " (+%u submitters): %" PRIu64 " runs, %" PRIu64
           " submitted right after a park; parks %" PRIu64 " wakeups %" PRIu64
           " injector_takes %" PRIu64 "\n",
           workers, rounds, nsub, want, parked, st.parks, st.wakeups, st.injector_takes);
    ASSERT_GE(st.parks, 1);
    ws_pool_destroy(pool);
    printf("ok\n");
    return 0;
}
