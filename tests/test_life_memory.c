/* test_life_memory: a deque that grew for a burst gives its memory back once the burst is over.
 *
 * usage: test_life_memory WORKERS
 *
 * A job submits N group jobs from a worker (3,000,000 with WS_TEST_LONG, fewer by default and
 * under sanitizers): they go onto that worker's own deque, which grows to hold them; then it
 * waits for them. The deque used to keep every array it had grown through (about 17 MiB for
 * 3,000,000 jobs) until the pool was destroyed, for the default pool until exit. Checked: every
 * job ran once; the deque held more than 16x its first array during the burst (the jobs wait
 * until the burst is submitted, so each thief holds one of them at most and cannot drain the
 * deque as it fills, however slowly the submitter runs); and once its
 * worker has gone to sleep, it holds its first array only (the big one swapped out before the
 * sleep and freed, and no retired array left). The process's resident memory is printed, not
 * checked: malloc need not return freed memory to the system.
 */
#include "internal.h"
#include "test.h"
#include "test_sched_util.h"

#include <sched.h>
#include <stdio.h>

typedef struct burst_run {
    ws_group group;
    uint64_t n;
    atomic_ullong ran;
    atomic_bool submitted; /* set once the burst is on the deque: the jobs wait for it */
    ws__worker *worker;    /* the worker that submitted the burst */
    size_t start_bytes;    /* its deque's arrays before the burst */
    size_t peak_bytes;     /* ... after the submissions */
    uint64_t parks_after;  /* its park count when the job returned */
} burst_run;

static void job_fn(void *arg)
{
    burst_run *r = arg;
    /* acquire: pairs with the release store in burst_fn. */
    while (!atomic_load_explicit(&r->submitted, memory_order_acquire))
        sched_yield();
    atomic_fetch_add_explicit(&r->ran, 1, memory_order_relaxed);
}

static void burst_fn(void *arg)
{
    burst_run *r = arg;
    ws__worker *w = ws__tls_worker;
    ASSERT(w != NULL);
    r->worker = w;
    r->start_bytes = ws__sdeque_bytes(&w->deque);
    for (uint64_t i = 0; i < r->n; i++)
        ASSERT_OK(ws_group_submit(&r->group, job_fn, r, 0)); /* onto this worker's deque */
    r->peak_bytes = ws__sdeque_bytes(&w->deque);
    atomic_store_explicit(&r->submitted, true, memory_order_release); /* pairs with job_fn */
    ws_group_wait(&r->group);
    /* relaxed: the worker's own counter. */
    r->parks_after = ws_load_relaxed(&w->counters.parks);
}

/* Resident memory of the process in KiB, or 0 if unknown. */
static unsigned long rss_kib(void)
{
    unsigned long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return 0;
    if (fscanf(f, "%lu %lu", &pages, &resident) != 2)
        resident = 0;
    fclose(f);
    return resident * (unsigned long)sysconf(_SC_PAGESIZE) / 1024;
}

int main(int argc, char **argv)
{
    unsigned workers = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 2;
    if (workers == 0)
        workers = 1;
    burst_run *r = calloc(1, sizeof *r);
    ASSERT(r != NULL);
    r->n = test_scaled(3000000, 100000);
    ws_pool *pool = sched_pool(workers);
    ws_group_init(&r->group, pool);
    unsigned long rss_before = rss_kib();
    ASSERT_OK(ws_pool_run(pool, burst_fn, r));
    ASSERT_UEQ(atomic_load(&r->ran), r->n);
    unsigned long rss_burst = rss_kib();
    ws_sdeque *q = &r->worker->deque;
    ASSERT(r->peak_bytes > 16 * r->start_bytes);

    /* The worker goes idle and sleeps. Its count of parks is read with relaxed loads, and so
     * is the deque's byte count; the trim comes before the park in the worker's program order,
     * and a few more reads let it become visible on a machine that reorders them. */
    /* relaxed: a counter with one writer, polled. */
    while (ws_load_relaxed(&r->worker->counters.parks) == r->parks_after)
        sched_sleep_ms(1);
    for (int i = 0; i < 1000 && ws__sdeque_bytes(q) != r->start_bytes; i++)
        sched_sleep_ms(1);
    size_t after = ws__sdeque_bytes(q);
    printf("%u workers, %llu jobs: deque arrays %zu bytes before the burst, %zu at its peak, "
           "%zu once the worker slept; resident memory %lu KiB before, %lu KiB after the "
           "burst, %lu KiB now\n",
           workers, (unsigned long long)r->n, r->start_bytes, r->peak_bytes, after, rss_before,
           rss_burst, rss_kib());
    if (after != r->start_bytes)
        WS_TEST_FAIL("the worker slept with %zu bytes of deque arrays (%zu at the start)", after,
                     r->start_bytes);
    ws_pool_destroy(pool);
    free(r);
    printf("test_life_memory: ok\n");
    return 0;
}
