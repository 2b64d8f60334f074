/* test_life_faults: every allocation and every thread creation made to fail in turn.
 *
 * usage: test_life_faults alloc|thread
 * One scenario exercises what allocates or starts threads: pool creation; detached and group
 * submissions from outside; a job that submits hundreds of group jobs onto its own deque and
 * spawns hundreds of children (the deque grows); a parallel loop and a reduction with a large
 * accumulator; a blocked task (a spare is made and started). For k = 1, 2, ... the k-th
 * allocation (or thread creation) from the start of the scenario fails, until a run in which
 * the k-th is never reached. Every run must end with a documented result: ws_pool_create
 * returns ENOMEM or EAGAIN with nothing left; a submission returns ENOMEM and its function never
 * runs; every accepted job runs exactly once; a spawn or a group job that cannot be pushed runs
 * inline; the loop covers its range exactly once; the reduction returns 0 with the right sum or
 * ENOMEM; the blocked task finishes (with or without a spare); no thread is left, and (under
 * AddressSanitizer) nothing leaks. The sanitizer builds, ten times slower, fail the first 64
 * sites in turn and then every 5th (the release build fails every one).
 */
#include "platform.h" /* the failure countdowns */
#include "test_external_util.h"

#include <string.h>

enum { OUTSIDE_JOBS = 10, LOCAL_JOBS = 300, SPAWNS = 300, LOOP_N = 3000 };

typedef struct faults_run {
    ws_pool *pool;
    atomic_ullong accepted, ran; /* jobs accepted by a submission, jobs run */
    atomic_ullong spawned_ran;
    atomic_uint hits[LOOP_N];
    ws_group local;
    atomic_int blocked_done;
    int reduce_err;
    uint64_t reduce_sum;
} faults_run;

static void job(void *arg)
{
    atomic_fetch_add(&((faults_run *)arg)->ran, 1);
}

static void spawned(void *arg)
{
    atomic_fetch_add(&((faults_run *)arg)->spawned_ran, 1);
}

static void submit_counted(faults_run *r, ws_group *g)
{
    int err = g != NULL ? ws_group_submit(g, job, r, 0) : ws_submit(r->pool, job, r, 0);
    if (err == 0)
        atomic_fetch_add(&r->accepted, 1);
    else if (err != ENOMEM)
        WS_TEST_FAIL("a submission returned %d (%s), expected 0 or ENOMEM", err, ws_strerror(err));
}

static void local_work(void *arg)
{
    faults_run *r = arg;
    ws_group_init(&r->local, r->pool);
    for (int i = 0; i < LOCAL_JOBS; i++)
        submit_counted(r, &r->local);
    ws_task *t = malloc(SPAWNS * sizeof *t);
    ASSERT(t != NULL);
    for (int i = 0; i < SPAWNS; i++)
        ws_spawn(&t[i], spawned, r);
    for (int i = SPAWNS - 1; i >= 0; i--)
        ws_sync(&t[i]);
    free(t);
    ws_group_wait(&r->local);
}

static void count_range(size_t b, size_t e, void *ctx)
{
    faults_run *r = ctx;
    for (size_t i = b; i < e; i++)
        atomic_fetch_add(&r->hits[i], 1);
}

typedef struct big_acc {
    uint64_t sum;
    char pad[504]; /* over 256 bytes: the reduction allocates scratch for it */
} big_acc;

static void fold(size_t b, size_t e, void *acc, void *ctx)
{
    (void)ctx;
    for (size_t i = b; i < e; i++)
        ((big_acc *)acc)->sum += i;
}

static void combine(void *acc, const void *right, void *ctx)
{
    (void)ctx;
    ((big_acc *)acc)->sum += ((const big_acc *)right)->sum;
}

/* The loops, on the scenario's pool. */
static void loops(void *arg)
{
    faults_run *r = arg;
    ws_parallel_for(0, LOOP_N, 1, count_range, r);
    big_acc zero, out;
    memset(&zero, 0, sizeof zero);
    memset(&out, 0xab, sizeof out);
    r->reduce_err =
        ws_parallel_reduce(0, LOOP_N, 64, sizeof zero, &zero, fold, combine, NULL, &out);
    r->reduce_sum = out.sum;
}

static void blocker(void *arg)
{
    faults_run *r = arg;
    ws_block_begin();
    sched_sleep_ms(2);
    ws_block_end();
    atomic_store(&r->blocked_done, 1);
}

/* One run of the scenario; returns a short description of how it ended. */
static const char *scenario(void)
{
    faults_run *r = calloc(1, sizeof *r);
    ASSERT(r != NULL);
    ws_config cfg = {0};
    cfg.workers = 2;
    cfg.max_spares = 2;
    ws_pool *sentinel = (ws_pool *)r;
    r->pool = sentinel;
    int err = ws_pool_create(&r->pool, &cfg);
    if (err != 0) {
        if (err != ENOMEM && err != EAGAIN)
            WS_TEST_FAIL("ws_pool_create returned %d (%s)", err, ws_strerror(err));
        ASSERT_PTR_EQ(r->pool, sentinel);
        free(r);
        return "create failed";
    }
    for (int i = 0; i < OUTSIDE_JOBS; i++)
        submit_counted(r, NULL);
    ws_group g;
    ws_group_init(&g, r->pool);
    for (int i = 0; i < OUTSIDE_JOBS; i++)
        submit_counted(r, &g);
    ASSERT_OK(ws_pool_run(r->pool, local_work, r));
    ws_group_wait(&g);
    ws_group bg;
    ws_group_init(&bg, r->pool);
    err = ws_group_submit(&bg, blocker, r, 0);
    if (err != 0 && err != ENOMEM)
        WS_TEST_FAIL("submitting the blocker returned %d", err);
    ws_group_wait(&bg);
    ASSERT_EQ(atomic_load(&r->blocked_done), err == 0);

    ASSERT_OK(ws_pool_run(r->pool, loops, r));
    ws_pool_destroy(r->pool);
    ASSERT_EQ(atomic_load(&r->ran), atomic_load(&r->accepted));
    ASSERT_EQ(atomic_load(&r->spawned_ran), SPAWNS);
    for (size_t i = 0; i < LOOP_N; i++)
        ASSERT_EQ(atomic_load(&r->hits[i]), 1);
    if (r->reduce_err == 0)
        ASSERT_UEQ(r->reduce_sum, (uint64_t)LOOP_N * (LOOP_N - 1) / 2);
    else if (r->reduce_err != ENOMEM)
        WS_TEST_FAIL("ws_parallel_reduce returned %d", r->reduce_err);
    free(r);
    return "ran";
}

int main(int argc, char **argv)
{
    bool threads = argc == 2 && strcmp(argv[1], "thread") == 0;
    if (argc != 2 || (!threads && strcmp(argv[1], "alloc") != 0))
        WS_TEST_FAIL("usage: %s alloc|thread", argv[0]);
    int baseline = sched_thread_baseline();
    long k, tried = 0;
#ifdef WS_SANITIZED
    const long stride = 5;
#else
    const long stride = 1;
#endif
    for (k = 1; k < 100000; k += k < 64 ? 1 : stride, tried++) {
        if (threads)
            ws__test_fail_thread_after(k);
        else
            ws__test_fail_alloc_after(k);
        const char *how = scenario();
        bool reached = threads ? !ws__test_fail_thread_pending() : !ws__test_fail_alloc_pending();
        ws__test_fail_thread_after(0);
        ws__test_fail_alloc_after(0);
        int now = sched_wait_thread_count(baseline);
        if (now != baseline)
            WS_TEST_FAIL("k = %ld: %d threads left, %d before", k, now, baseline);
        if (k <= 3 || !reached)
            printf("k = %ld: %s (the failure %s)\n", k, how,
                   reached ? "happened" : "was never reached");
        if (!reached)
            break;
    }
    ASSERT_GT(k, 3);
    printf("test_life_faults %s: %ld of the first %ld %s failed in turn, each run ended as "
           "documented\n",
           argv[1], tried, k - 1, threads ? "thread creations" : "allocations");
    return 0;
}
