/* test_sched_nested_pools: pools used from inside tasks of other pools.
 *
 *  1. Tasks of pool A (both halves of a ws_join) each run fib on pool B through ws_pool_run:
 *     a worker of A is an outside thread for B, so its work goes through B's injector, and the
 *     ws_joins inside run on B's workers.
 *  2. Nested both ways: a task of A runs a task on B, which runs fib back on A. One worker of A
 *     is blocked in ws_pool_run(B) meanwhile. With two workers A has another to make progress;
 *     with one (pool S), only the spare that the header promises for a worker waiting in
 *     ws_pool_run on another pool can run it, so a missing spare shows up as a hang.
 *  3. A task of A creates a pool C, runs fib on it and destroys it, on both halves of a join.
 *  4. ws_pool_run from a worker of the same pool calls fn directly, on the same worker.
 * The spawn counters of both pools are checked after each step: the joins of a task must land
 * on the deque of the pool that runs the task, so work that leaks to the wrong pool is seen.
 *
 * usage: test_sched_nested_pools [rounds]
 */
#include "test_sched_util.h"

#include <stdatomic.h>

#if defined(WS_SANITIZED)
#define FIB_N 17
#else
#define FIB_N 20
#endif

typedef struct on_pool {
    ws_pool *pool;
    int n;
    uint64_t result;
    int worker; /* ws_worker_id() of the task that ran the root */
} on_pool;

static void fib_root(void *p)
{
    on_pool *o = p;
    o->worker = ws_worker_id();
    sched_fib_arg f = {o->n, 0};
    sched_fib_join(&f);
    o->result = f.result;
}

/* Runs fib(n) on another pool from inside a task, and checks it. */
static void run_fib_elsewhere(ws_pool *pool, int n)
{
    int me = ws_worker_id();
    on_pool o = {pool, n, 0, -2};
    ASSERT_OK(ws_pool_run(pool, fib_root, &o));
    ASSERT_UEQ(o.result, sched_fib_serial(n));
    /* A worker, or a spare standing in for a worker blocked in a nested ws_pool_run. */
    ASSERT(o.worker >= 0 && (unsigned)o.worker < ws_pool_threads(pool));
    /* Back on the caller's thread, its worker id is the caller's again. */
    ASSERT_EQ(ws_worker_id(), me);
}

typedef struct ctx {
    ws_pool *a, *b;
    int n;
} ctx;

/* ---- 1 ---- */

static void a_half_runs_on_b(void *p)
{
    ctx *c = p;
    ASSERT(ws_worker_id() >= 0);
    run_fib_elsewhere(c->b, c->n);
}

static void a_joins_two_runs_on_b(void *p)
{
    ws_join(a_half_runs_on_b, p, a_half_runs_on_b, p);
}

/* ---- 2 ---- */

static void b_runs_back_on_a(void *p)
{
    ctx *c = p;
    run_fib_elsewhere(c->a, c->n);
}

static void a_runs_b_runs_a(void *p)
{
    ctx *c = p;
    ASSERT_OK(ws_pool_run(c->b, b_runs_back_on_a, c));
}

/* ---- 3 ---- */

static void a_makes_pool(void *p)
{
    ctx *c = p;
    ws_pool *inner = sched_pool(2);
    run_fib_elsewhere(inner, c->n);
    ws_pool_destroy(inner);
}

static void a_makes_two_pools(void *p)
{
    ws_join(a_makes_pool, p, a_makes_pool, p);
}

/* ---- 4 ---- */

typedef struct same_pool {
    int outer_id;
    int inner_id;
    bool ran;
} same_pool;

static void same_inner(void *p)
{
    same_pool *s = p;
    s->inner_id = ws_worker_id();
    s->ran = true;
}

static void same_outer(void *p)
{
    ws_pool *pool = *(ws_pool **)p;
    same_pool s = {ws_worker_id(), -2, false};
    ASSERT_OK(ws_pool_run(pool, same_inner, &s));
    /* Called directly: it has run, on this very worker, by the time ws_pool_run returns. */
    ASSERT(s.ran);
    ASSERT_EQ(s.inner_id, s.outer_id);
    ASSERT_EQ(ws_worker_id(), s.outer_id);
}

static uint64_t spawns_of(ws_pool *pool)
{
    ws_stats st;
    ws_pool_stats(pool, &st);
    return st.spawns;
}

/* Runs fn on `on` and checks how many spawns each pool counted meanwhile. */
static void step(ws_pool *on, ws_fn fn, void *arg, ws_pool *a, uint64_t a_spawns, ws_pool *b,
                 uint64_t b_spawns)
{
    uint64_t a0 = spawns_of(a), b0 = spawns_of(b);
    ASSERT_OK(ws_pool_run(on, fn, arg));
    ASSERT_UEQ(spawns_of(a) - a0, a_spawns);
    ASSERT_UEQ(spawns_of(b) - b0, b_spawns);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep the output in order with stderr on a failure */
    int rounds = argc > 1 ? atoi(argv[1]) : (int)test_scaled(20, 5);
    ws_pool *a = sched_pool(2);
    ws_pool *b = sched_pool(3);
    ws_pool *single = sched_pool(1);
    ctx c = {a, b, FIB_N};
    ctx cs = {single, b, FIB_N};

    uint64_t joins = sched_fib_joins(FIB_N);
    for (int r = 0; r < rounds; r++) {
        /* One join on A; two fibs on B. */
        step(a, a_joins_two_runs_on_b, &c, a, 1, b, 2 * joins);
        /* A task of A (no join) runs a task on B (no join) that runs fib on A. */
        step(a, a_runs_b_runs_a, &c, a, joins, b, 0);
        /* The same, the other way round. */
        ctx rev = {b, a, FIB_N};
        step(b, a_joins_two_runs_on_b, &rev, a, 2 * joins, b, 1);
        step(b, a_runs_b_runs_a, &rev, a, 0, b, joins);
        /* The only worker of S waits on B while B's task runs fib back on S. */
        step(single, a_runs_b_runs_a, &cs, single, joins, b, 0);
        /* One join on A; the fibs run on the inner pools. */
        step(a, a_makes_two_pools, &c, a, 1, b, 0);
        step(a, same_outer, &a, a, 0, b, 0);
        step(b, same_outer, &b, a, 0, b, 0);
    }
    ASSERT_EQ(ws_worker_id(), -1);

    ws_stats sa, sb;
    ws_pool_stats(a, &sa);
    ws_pool_stats(b, &sb);
    printf("rounds %d: A spawns %" PRIu64 " steals %" PRIu64 "; B spawns %" PRIu64
           " steals %" PRIu64 "\n",
           rounds, sa.spawns, sa.steals, sb.spawns, sb.steals);
    ws_pool_destroy(single);
    ws_pool_destroy(b);
    ws_pool_destroy(a);
    printf("ok\n");
    return 0;
}
