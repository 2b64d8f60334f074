/* test_sched_typed: the typed task layer (WS_TASK_n of worksteal.h) and the inline ws_join.
 *
 * usage: test_sched_typed P    on a pool of P workers: fib through typed spawn/sync, a
 *                              two- and a three-argument task, a task without arguments, and
 *                              fib through the inline ws_join, each against the plain answer;
 *                              the pool's statistics count every fork as a spawn.
 */
#include "test_sched_util.h"

static uint64_t fib_plain(int n)
{
    return n < 2 ? (uint64_t)n : fib_plain(n - 1) + fib_plain(n - 2);
}

WS_TASK_1(uint64_t, fib, int, n)
{
    if (n < 2)
        return (uint64_t)n;
    fib_frame f;
    fib_spawn(&f, n - 2);
    uint64_t x = fib(n - 1);
    return x + fib_sync(&f);
}

/* The sum of lo..hi-1 by halving, two children spawned per level and synced in reverse. */
WS_TASK_2(long, range_sum, long, lo, long, hi)
{
    if (hi - lo <= 2) {
        long s = 0;
        for (long i = lo; i < hi; i++)
            s += i;
        return s;
    }
    long mid = lo + (hi - lo) / 2;
    range_sum_frame left, right;
    range_sum_spawn(&left, lo, mid);
    range_sum_spawn(&right, mid, hi);
    long r = range_sum_sync(&right);
    return range_sum_sync(&left) + r;
}

/* The inner nodes of range_sum's tree over [lo, hi). */
static uint64_t inner_nodes(long lo, long hi)
{
    if (hi - lo <= 2)
        return 0;
    long mid = lo + (hi - lo) / 2;
    return 1 + inner_nodes(lo, mid) + inner_nodes(mid, hi);
}

WS_TASK_3(double, affine, double, a, double, x, double, b)
{
    return a * x + b;
}

WS_TASK_0(int, forty_two)
{
    return 42;
}

typedef struct fib_join {
    int n;
    uint64_t r;
} fib_join;

static void fib_join_fn(void *p)
{
    fib_join *f = p;
    if (f->n < 2) {
        f->r = (uint64_t)f->n;
        return;
    }
    fib_join a = {f->n - 1, 0}, b = {f->n - 2, 0};
    ws_join(fib_join_fn, &a, fib_join_fn, &b);
    f->r = a.r + b.r;
}

typedef struct typed_run {
    int n;
    uint64_t fib, fib_joined;
    long sum;
    double affine;
    int constant;
} typed_run;

static void typed_root(void *p)
{
    typed_run *r = p;
    r->fib = fib(r->n);
    r->sum = range_sum(0, 10000);
    affine_frame af;
    affine_spawn(&af, 2.0, 3.0, 1.0);
    forty_two_frame cf;
    forty_two_spawn(&cf);
    r->constant = forty_two_sync(&cf);
    r->affine = affine_sync(&af);
    fib_join j = {r->n, 0};
    fib_join_fn(&j);
    r->fib_joined = j.r;
}

int main(int argc, char **argv)
{
    unsigned workers = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 2;
    int n = test_scaled(27, 20);
    ws_pool *pool;
    ws_config config = {.workers = workers};
    ASSERT_OK(ws_pool_create(&pool, &config));
    typed_run r = {.n = n};
    ASSERT_OK(ws_pool_run(pool, typed_root, &r));
    uint64_t want = fib_plain(n);
    ASSERT_UEQ(r.fib, want);
    ASSERT_UEQ(r.fib_joined, want);
    ASSERT_EQ(r.sum, 10000L * 9999 / 2);
    ASSERT(r.affine == 7.0);
    ASSERT_EQ(r.constant, 42);
    ws_stats st;
    ws_pool_stats(pool, &st);
    /* Every fork went through a deque (none ran inline for want of memory): fib(n) makes
     * fib(n + 1) - 1 forks each way, range_sum 2 per inner node, plus the two single spawns. */
    ASSERT_EQ(st.inline_runs, 0);
    ASSERT_UEQ(st.spawns, 2 * (fib_plain(n + 1) - 1) + 2 * inner_nodes(0, 10000) + 2);
    /* Each was taken back by its owner or stolen, once. */
    ASSERT_UEQ(st.pops + st.steals, st.spawns);
    ws_pool_destroy(pool);
    printf("typed tasks on %u workers: fib(%d) = %llu both ways, %llu spawns, %llu steals\n",
           workers, n, (unsigned long long)r.fib, (unsigned long long)st.spawns,
           (unsigned long long)st.steals);
    return 0;
}
