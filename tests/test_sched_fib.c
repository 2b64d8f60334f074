/* test_sched_fib: fib(n) through ws_join, exact answer, on a pool of P workers or through the
 * default pool.
 *
 * usage: test_sched_fib P [n]        a pool of P workers created with ws_pool_create; the root
 *                                    runs through ws_pool_run
 *        test_sched_fib default [n]  ws_join called from main, outside any worker: the work goes
 *                                    to the default pool
 * Every n from 0 to the given one is checked, so the base cases are covered, and the largest is
 * run a few times, so that different interleavings of steals are seen.
 */
#include "test_sched_util.h"

#include <stdatomic.h>

/* fib that also checks, at every node, that it runs on a thread of the expected pool: a worker,
 * or a spare standing in for a worker whose join wait parked (ids below ws_pool_threads). */
typedef struct fib_checked {
    int n;
    unsigned workers; /* ws_pool_threads of the pool */
    uint64_t result;
} fib_checked;

static _Atomic int bad_worker_id = -2; /* -2: never set */

static void fib_checked_fn(void *p)
{
    fib_checked *f = p;
    int id = ws_worker_id();
    if (id < 0 || (unsigned)id >= f->workers)
        atomic_store(&bad_worker_id, id);
    if (f->n < 2) {
        f->result = (uint64_t)f->n;
        return;
    }
    fib_checked a = {f->n - 1, f->workers, 0}, b = {f->n - 2, f->workers, 0};
    ws_join(fib_checked_fn, &a, fib_checked_fn, &b);
    f->result = a.result + b.result;
}

static void run_on_pool(unsigned workers, int n, int repeats)
{
    ws_pool *pool = sched_pool(workers);
    unsigned threads = ws_pool_threads(pool);
    for (int i = 0; i <= n; i++) {
        fib_checked f = {i, threads, 0};
        ASSERT_OK(ws_pool_run(pool, fib_checked_fn, &f));
        ASSERT_UEQ(f.result, sched_fib_serial(i));
    }
    for (int r = 0; r < repeats; r++) {
        fib_checked f = {n, threads, 0};
        ASSERT_OK(ws_pool_run(pool, fib_checked_fn, &f));
        ASSERT_UEQ(f.result, sched_fib_serial(n));
    }
    ASSERT_EQ(atomic_load(&bad_worker_id), -2);
    ws_stats st;
    ws_pool_stats(pool, &st);
    printf("P=%u fib(%d)=%" PRIu64 ": spawns %" PRIu64 " steals %" PRIu64 " parks %" PRIu64 "\n",
           workers, n, sched_fib_serial(n), st.spawns, st.steals, st.parks);
    ws_pool_destroy(pool);
}

static void run_on_default_pool(int n, int repeats)
{
    ASSERT_EQ(ws_worker_id(), -1);
    unsigned workers = ws_pool_workers(ws_default_pool());
    ASSERT_GE(workers, 1);
    unsigned threads = ws_pool_threads(ws_default_pool());
    for (int i = 0; i <= n; i++) {
        /* ws_join from main: both halves are handed to the default pool and main blocks. */
        fib_checked a = {i, threads, 0}, b = {i + 1, threads, 0};
        ws_join(fib_checked_fn, &a, fib_checked_fn, &b);
        ASSERT_UEQ(a.result, sched_fib_serial(i));
        ASSERT_UEQ(b.result, sched_fib_serial(i + 1));
    }
    for (int r = 0; r < repeats; r++) {
        fib_checked a = {n - 1, threads, 0}, b = {n - 2, threads, 0};
        ws_join(fib_checked_fn, &a, fib_checked_fn, &b);
        ASSERT_UEQ(a.result + b.result, sched_fib_serial(n));
    }
    ASSERT_EQ(atomic_load(&bad_worker_id), -2);
    ASSERT_EQ(ws_worker_id(), -1);
    printf("default pool (P=%u) fib(%d)=%" PRIu64 "\n", workers, n, sched_fib_serial(n));
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep the output in order with stderr on a failure */
#if defined(WS_SANITIZED)
    int n = 26;
#else
    int n = 28;
#endif
    if (argc < 2) {
        fprintf(stderr, "usage: %s P|default [n]\n", argv[0]);
        return 2;
    }
    if (argc > 2)
        n = atoi(argv[2]);
    ASSERT(n >= 2 && n <= 90);
    if (strcmp(argv[1], "default") == 0) {
        run_on_default_pool(n, 3);
    } else {
        int workers = atoi(argv[1]);
        ASSERT(workers >= 1 && workers <= (int)WS_MAX_WORKERS);
        run_on_pool((unsigned)workers, n, 3);
    }
    printf("ok\n");
    return 0;
}
