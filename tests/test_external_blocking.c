/* test_external_blocking: ws_block_begin/end keep P workers running with spare workers.
 *
 * usage: test_external_blocking WORKERS MAX_SPARES
 *   progress  P tasks call ws_block_begin and then sleep in the kernel until the test releases
 *             them. Compute jobs submitted while all P are blocked must all finish before the
 *             release, on threads with ids in 0..ws_pool_threads()-1. Without spares this would
 *             hang (reported by the hang guard).
 *   rounds    many rounds of P tasks blocking in nanosleep (until all P are blocked, then
 *             20 ms more) with compute jobs queued behind them: the compute jobs make progress
 *             while the tasks sleep (counted over all rounds: jobs finished while every task
 *             was blocked); the spares are reused (the process never has more than baseline +
 *             P + min(P, max_spares) + 2 threads: one spare per blocked task at most, made
 *             only when needed; and no id outside 0..ws_pool_threads()-1 is seen);
 *             and afterwards the spares park: the whole process uses little CPU over an idle
 *             second (generous bound: 0.5 s).
 * MAX_SPARES 0 means the default (WS_DEFAULT_SPARES). Both parts run in one program.
 */
#include "test_external_util.h"

enum { MAX_IDS = 1024 };

typedef struct block_run {
    ws_pool *pool;
    unsigned workers, threads;
    atomic_ullong arrived;   /* tasks that entered their block section, this round */
    atomic_ullong blocked;   /* tasks inside their block section */
    atomic_ullong unblocked; /* tasks that left it */
    atomic_int release;      /* progress: ends the blocking */
    unsigned sleep_ms;       /* rounds: how long each blocked task sleeps */
    atomic_ullong compute_done;
    atomic_ullong done_while_blocked; /* compute jobs finished while every task was blocked */
    atomic_ullong id_seen[MAX_IDS];   /* jobs run per worker id */
    atomic_int bad_id;
} block_run;

static void note_id(block_run *r)
{
    int id = ws_worker_id();
    if (id < 0 || (unsigned)id >= r->threads || id >= MAX_IDS) {
        atomic_store(&r->bad_id, id == 0 ? -1000 : id);
        return;
    }
    atomic_fetch_add(&r->id_seen[id], 1);
}

static void blocker_fn(void *arg)
{
    block_run *r = arg;
    note_id(r);
    ws_block_begin();
    atomic_fetch_add(&r->blocked, 1);
    atomic_fetch_add(&r->arrived, 1);
    if (r->sleep_ms != 0) {
        /* Sleep (blocked) until all P tasks are blocked, then 20 ms more: all P are blocked at
         * the same time for at least that long, however the threads were scheduled. */
        while (atomic_load(&r->arrived) < r->workers)
            ext_sleep_us(500);
        ext_sleep_ms(r->sleep_ms);
    } else {
        while (!atomic_load(&r->release))
            ext_sleep_us(500);
    }
    atomic_fetch_sub(&r->blocked, 1);
    atomic_fetch_add(&r->unblocked, 1);
    ws_block_end();
}

static void compute_fn(void *arg)
{
    block_run *r = arg;
    note_id(r);
    (void)ext_burn(20000);
    /* Counted as progress under blocking only if every blocked task is still blocked now. */
    if (atomic_load(&r->blocked) == r->workers && atomic_load(&r->unblocked) == 0)
        atomic_fetch_add(&r->done_while_blocked, 1);
    atomic_fetch_add(&r->compute_done, 1);
}

static void reset_ids(block_run *r)
{
    for (unsigned i = 0; i < MAX_IDS; i++)
        atomic_store(&r->id_seen[i], 0);
}

/* ---- progress ----------------------------------------------------------------------------- */

static void part_progress(block_run *r, unsigned compute)
{
    atomic_store(&r->release, 0);
    r->sleep_ms = 0;
    atomic_store(&r->compute_done, 0);
    atomic_store(&r->done_while_blocked, 0);
    atomic_store(&r->unblocked, 0);
    reset_ids(r);
    ws_group g;
    ws_group_init(&g, r->pool);
    for (unsigned i = 0; i < r->workers; i++)
        ASSERT_OK(ws_group_submit(&g, blocker_fn, r, 0));
    ext_wait_at_least(&r->blocked, r->workers, "every worker to block");
    for (unsigned i = 0; i < compute; i++)
        ASSERT_OK(ws_group_submit(&g, compute_fn, r, 0));
    /* All of it must finish while the P tasks are blocked: only spares can run it. */
    ext_wait_at_least(&r->compute_done, compute, "the compute jobs to finish during the block");
    unsigned long long while_blocked = atomic_load(&r->done_while_blocked);
    unsigned long long on_spares = 0, on_workers = 0;
    for (unsigned i = 0; i < r->threads; i++)
        *(i < r->workers ? &on_workers : &on_spares) += atomic_load(&r->id_seen[i]);
    atomic_store(&r->release, 1);
    ws_group_wait(&g);
    printf("progress: %u compute jobs finished while %u tasks were blocked; jobs (blockers "
           "included) run by workers 0..%u: %llu, by spares: %llu\n",
           compute, r->workers, r->workers - 1, on_workers, on_spares);
    ASSERT_EQ(atomic_load(&r->bad_id), 0);
    ASSERT_EQ(while_blocked, compute);
    /* The blockers themselves may run on spares (a spare woken by the first ws_block_begin can
     * take the next blocker from the queue), so the ids of the compute jobs prove nothing by
     * themselves; what matters is that they all finished while P tasks were blocked. */
    ASSERT_EQ(on_workers + on_spares, compute + r->workers);
}

/* ---- rounds ------------------------------------------------------------------------------- */

static void part_rounds(block_run *r, unsigned rounds, unsigned compute, int baseline,
                        unsigned max_spares)
{
    /* Spares are made only as needed and reused: never more than one per blocked task. */
    unsigned needed = max_spares < r->workers ? max_spares : r->workers;
    int limit = baseline + (int)r->workers + (int)needed + 2;
    int most = 0;
    unsigned long long progress_total = 0, min_progress = ~0ull;
    r->sleep_ms = 20;
    for (unsigned round = 0; round < rounds; round++) {
        atomic_store(&r->compute_done, 0);
        atomic_store(&r->done_while_blocked, 0);
        atomic_store(&r->unblocked, 0);
        atomic_store(&r->arrived, 0);
        ws_group g;
        ws_group_init(&g, r->pool);
        for (unsigned i = 0; i < r->workers; i++)
            ASSERT_OK(ws_group_submit(&g, blocker_fn, r, 0));
        ext_wait_at_least(&r->arrived, r->workers, "every worker to block");
        for (unsigned i = 0; i < compute; i++)
            ASSERT_OK(ws_group_submit(&g, compute_fn, r, 0));
        int threads = sched_thread_count();
        ws_group_wait(&g);
        int after_wait = sched_thread_count();
        if (after_wait > threads)
            threads = after_wait;
        ASSERT_EQ(atomic_load(&r->compute_done), compute);
        unsigned long long p = atomic_load(&r->done_while_blocked);
        progress_total += p;
        if (p < min_progress)
            min_progress = p;
        if (threads > most)
            most = threads;
        if (threads > limit)
            WS_TEST_FAIL("round %u: %d threads, more than baseline %d + P %u + %u spares + 2",
                         round, threads, baseline, r->workers, needed);
    }
    /* The spares run compute jobs while the blockers sleep: some must finish meanwhile. A
     * compute job is far shorter than a sleep, so over all the rounds this is zero only if no
     * spare ever ran while the workers were blocked. */
    if (progress_total == 0)
        WS_TEST_FAIL("no compute job finished while all %u tasks were blocked, in %u rounds",
                     r->workers, rounds);
    int after = sched_thread_count();
    ASSERT_LE(after, limit);
    ASSERT_EQ(atomic_load(&r->bad_id), 0);
    unsigned ids = 0;
    for (unsigned i = 0; i < r->threads; i++)
        ids += atomic_load(&r->id_seen[i]) != 0;
    printf("rounds: %u rounds of %u blocked tasks (20 ms each) and %u compute jobs: %llu compute "
           "jobs in all (at least %llu per round) finished while every task was blocked; at "
           "most %d threads (baseline %d, limit %d), %u distinct worker ids seen of %u\n",
           rounds, r->workers, compute, progress_total, min_progress, most, baseline, limit, ids,
           r->threads);

    /* Idle: spares and workers must all park. */
    ext_sleep_ms(100); /* let the spin and yield phases end */
    double cpu0 = ext_process_cpu_s(), t0 = sched_now();
    ext_sleep_ms(1000);
    double cpu = ext_process_cpu_s() - cpu0, wall = sched_now() - t0;
    printf("idle: %.3f s of CPU over %.3f s after the rounds (bound 0.5 s)\n", cpu, wall);
    ASSERT(cpu < 0.5);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    unsigned workers = ext_arg_unsigned(argc, argv, 1, 2);
    unsigned max_spares = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 0;
    int baseline = sched_thread_baseline();
    block_run *r = calloc(1, sizeof *r);
    ASSERT(r != NULL);
    r->pool = ext_pool(workers, max_spares);
    r->workers = workers;
    r->threads = ws_pool_threads(r->pool);
    unsigned spares = max_spares != 0 ? max_spares : WS_DEFAULT_SPARES;
    ASSERT_EQ(r->threads, workers + spares);
    printf("%u workers, max_spares %u: ws_pool_threads %u, baseline %d threads\n", workers, spares,
           r->threads, baseline);
    part_progress(r, (unsigned)test_scaled(200, 20));
    part_rounds(r, (unsigned)test_scaled(30, 8), (unsigned)test_scaled(400, 40), baseline, spares);
    ws_pool_destroy(r->pool);
    free(r);
    return 0;
}
