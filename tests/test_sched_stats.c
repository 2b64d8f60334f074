/* test_sched_stats: the counters of ws_pool_stats against counts the test knows exactly.
 *
 * fib(n) through ws_join makes sched_fib_joins(n) joins, and each join pushes one job on the
 * joining worker's deque, so on a fresh pool:
 *   spawns == joins (times the number of runs), steals <= spawns, and every pushed job is
 *   either popped back by its owner or stolen: pops + steals == spawns;
 *   steal_attempts >= steals, leapfrogs <= steals;
 *   each ws_pool_run from outside is one job taken from the injector;
 *   on one worker nothing can be stolen (steals == 0, pops == spawns), and the deque is at its
 *   deepest, n - 1 jobs, at the bottom of the leftmost path.
 * ws_spawn is checked the same way with a flat loop of spawns, and a loop of joins of two
 * trivial functions, which never has more than one job on the deque, must report a deepest
 * deque of exactly 1.
 *
 * usage: test_sched_stats [n]
 */
#include "test_sched_util.h"

static void print_stats(const char *what, const ws_stats *st)
{
    printf("%s: spawns %" PRIu64 " steals %" PRIu64 " steal_attempts %" PRIu64 " parks %" PRIu64
           " pops %" PRIu64 " inline_runs %" PRIu64 " injector_takes %" PRIu64 " wakeups %" PRIu64
           " deque_growths %" PRIu64 " max_deque_depth %" PRIu64 " leapfrogs %" PRIu64 "\n",
           what, st->spawns, st->steals, st->steal_attempts, st->parks, st->pops, st->inline_runs,
           st->injector_takes, st->wakeups, st->deque_growths, st->max_deque_depth, st->leapfrogs);
}

static void check_consistent(const ws_stats *st)
{
    ASSERT_LE(st->steals, st->spawns);
    ASSERT_GE(st->steal_attempts, st->steals);
    ASSERT_LE(st->leapfrogs, st->steals);
    ASSERT_UEQ(st->pops + st->steals, st->spawns);
    ASSERT_UEQ(st->inline_runs, 0);
    if (st->spawns > 0)
        ASSERT_GE(st->max_deque_depth, 1);
}

typedef struct flat {
    int n;
    int ran;
} flat;

static void flat_child(void *p)
{
    (void)p;
}

static void flat_spawns(void *p)
{
    flat *f = p;
    ws_task tasks[64];
    for (int i = 0; i < f->n; i++)
        ws_spawn(&tasks[i], flat_child, NULL);
    for (int i = f->n; i-- > 0;)
        ws_sync(&tasks[i]);
    f->ran = 1;
}

static void nothing(void *p)
{
    (void)p;
}

static void shallow_joins(void *p)
{
    int n = *(int *)p;
    for (int i = 0; i < n; i++)
        ws_join(nothing, NULL, nothing, NULL);
}

/* Joins that keep the deque at most one deep. */
static void shallow_case(unsigned workers)
{
    ws_pool *pool = sched_pool(workers);
    int n = 100;
    ASSERT_OK(ws_pool_run(pool, shallow_joins, &n));
    ws_stats st;
    ws_pool_stats(pool, &st);
    char what[64];
    snprintf(what, sizeof what, "%d shallow joins on %u worker(s)", n, workers);
    print_stats(what, &st);
    ASSERT_UEQ(st.spawns, (uint64_t)n);
    ASSERT_UEQ(st.max_deque_depth, 1);
    check_consistent(&st);
    ws_pool_destroy(pool);
}

static void fib_case(unsigned workers, int n, int runs)
{
    ws_pool *pool = sched_pool(workers);
    ws_stats st;
    ws_pool_stats(pool, &st);
    ASSERT_UEQ(st.spawns, 0);
    ASSERT_UEQ(st.steals, 0);
    ASSERT_UEQ(st.injector_takes, 0);

    for (int r = 0; r < runs; r++)
        sched_check_fib_on(pool, n);
    ws_pool_stats(pool, &st);
    char what[64];
    snprintf(what, sizeof what, "fib(%d) x%d on %u worker(s)", n, runs, workers);
    print_stats(what, &st);
    ASSERT_UEQ(st.spawns, (uint64_t)runs * sched_fib_joins(n));
    ASSERT_UEQ(st.injector_takes, (uint64_t)runs);
    check_consistent(&st);
    if (workers == 1) {
        ASSERT_UEQ(st.steals, 0);
        ASSERT_UEQ(st.leapfrogs, 0);
        ASSERT_UEQ(st.pops, st.spawns);
        ASSERT_UEQ(st.max_deque_depth, (uint64_t)(n - 1));
    }

    /* ws_spawn: 64 children at a time. */
    ws_stats before = st;
    flat f = {64, 0};
    ASSERT_OK(ws_pool_run(pool, flat_spawns, &f));
    ASSERT_EQ(f.ran, 1);
    ws_pool_stats(pool, &st);
    ASSERT_UEQ(st.spawns - before.spawns, 64);
    ASSERT_UEQ(st.injector_takes - before.injector_takes, 1);
    check_consistent(&st);
    if (workers == 1) {
        ASSERT_UEQ(st.steals, 0);
        ASSERT_UEQ(st.max_deque_depth, 64);
    }
    ws_pool_destroy(pool);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep the output in order with stderr on a failure */
#if defined(WS_SANITIZED)
    int n = 20;
#else
    int n = 25;
#endif
    if (argc > 1)
        n = atoi(argv[1]);
    ASSERT(n >= 3 && n <= 60);
    shallow_case(1);
    shallow_case(2);
    fib_case(1, n, 2);
    fib_case(2, n, 3);
    fib_case(4, n, 2);
    printf("ok\n");
    return 0;
}
