/* test_sched_stack: typed tasks (WS_TASK_n, worksteal.h; the task stack of src/frames.c).
 *
 *   arity    WS_TASK_n and WS_VOID_TASK_n for n = 0..8 (a struct, a double with a
 *            fraction and a pointer among the arguments, each weighted by its position so that a
 *            swap or a lost argument changes the answer): spawned together inside a task that
 *            is itself spawned, synced newest first, called with WS_CALL; every void task leaves
 *            its mark exactly once per run.
 *   nested   name_run on a given pool, on NULL and on the default pool from main (where NULL is
 *            the default pool), from a ws_pool_run function on a worker of the same pool (a
 *            plain call on that thread, given the pool or NULL), and from a task of another pool
 *            with a WS_SPAWN held open across the runs.
 *   mutual   tasks declared (WS_DECLARE_TASK_n, WS_DECLARE_VOID_TASK_n) and defined after the
 *            tasks that use them: BOTS nqueens' shape (a row task spawning a level task per
 *            column, which spawns the row task again), an even/odd pair with results, a void
 *            pair, and tasks of no arguments, each against a plain recursive computation.
 *   stress   a tree of typed tasks, each node adding one to its own counter (indexed by node id),
 *            with random stalls, many rounds: every counter exactly 1, and fib right.
 *   deep     chains of 100,000+ levels (fewer under ThreadSanitizer, which keeps at most 65,536
 *            calls per stack) with one, then two, WS_SPAWN held open per level, far past a
 *            segment of WS_FRAMES_PER_SEGMENT frames and the deque's 65,535 items; and one task
 *            spawning 10,000 children before syncing them, their values checked newest first.
 *   boundary a spawn, a call that spawns, and their syncs at every head around the ends of the
 *            first two segments: a call that crossed into a new segment returns with head back
 *            where its caller keeps it.
 *   mix      inside a typed task with private frames outstanding: ws_spawn/ws_sync interleaved
 *            with WS_SPAWN/WS_SYNC, ws_join, ws_parallel_for, a group and a future, each running
 *            typed tasks of its own; every result exact.
 *   order    a private frame, a ws_spawn, then a group job's push (which hands the frame over):
 *            the ws_spawn's sync still finds its task on top of the deque.
 *   spread   a root spawning batches of leaves (each batch private when spawned, then synced)
 *            until every other worker has run a few: idle workers ask for a task stack's frames
 *            and get them, also once the deque's reserve has made public room that no push
 *            fills.
 *   stats    ws_pool_stats counts every stack fork of fib as a spawn (on one worker, as a pop
 *            too, and no steal).
 *   profile  fib under ws_pool_profile: the result right, work and span measured, a strand per
 *            fork at least; the pool runs normally afterwards.
 *   trace    fib under WS_TRACE (in a forked child): the trace has one task event per fork, and
 *            one for the root.
 *   forked   name_run on a pool inherited through fork() aborts with one line naming name_run.
 *   abort_sync_other, abort_sync_none, abort_unsynced, abort_no_memory
 *            contract violations, each in a forked child: SIGABRT and exactly the one stderr line
 *            of src/frames.c (a sync of another task's frame, in the fast path and handed over; a
 *            sync with no spawn of the task's own; a task returning with a spawn unsynced; no
 *            memory for a new segment of frames).
 *
 * usage: test_sched_stack CASE [P]   (P: workers, default 2)
 *
 * Built against the static library, and (WS_TEST_SHARED, tests/sched.cmake) against the shared
 * library with lazy binding, as a user links it: every case but abort_no_memory, which needs the
 * static library's allocation hook.
 */
#include "platform.h"
#include "test_sched_util.h"
#include "test_trace_json.h"

#include <stdatomic.h>

/* Two warnings of worksteal.h's typed tasks under -Wextra, errors with -Werror: a task whose body
 * uses none of WS_SPAWN, WS_SYNC and WS_CALL leaves the hidden worker parameter unused
 * (-Wunused-parameter), and WS_VOID_TASK_0 a variable of its runner (-Wunused-variable,
 * silenced at v0 below). The entry test_sched_stack_strict (sched.cmake) builds this file with
 * WS_TEST_STACK_STRICT, without the pragmas, and fails while the header warns. */
#ifndef WS_TEST_STACK_STRICT
#pragma GCC diagnostic ignored "-Wunused-parameter"
#endif

/* ---- arity ------------------------------------------------------------------------------ */

typedef struct pair {
    int x;
    short y;
} pair;

/* Argument n of the tasks below (given the value n in every call) counts its value times
 * 10^(n-1): the struct's value is x - y, the double's 4 * g - 24 (so its fraction must survive),
 * the pointer's what it points to. */
static const pair E = {9, 4};
static const double G = 7.75;
static const long H = 8;

static long weigh_pair(pair e)
{
    return (long)(e.x - e.y);
}

static long weigh_double(double g)
{
    return (long)(g * 4.0) - 24;
}

WS_TASK_0(long, s0)
{
    return 7;
}
WS_TASK_1(long, s1, long, a)
{
    return a;
}
WS_TASK_2(long, s2, long, a, int, b)
{
    return WS_CALL(s1, a) + b * 10L;
}
WS_TASK_3(long, s3, long, a, int, b, short, c)
{
    return WS_CALL(s2, a, b) + c * 100L;
}
WS_TASK_4(long, s4, long, a, int, b, short, c, char, d)
{
    return WS_CALL(s3, a, b, c) + d * 1000L;
}
WS_TASK_5(long, s5, long, a, int, b, short, c, char, d, pair, e)
{
    return WS_CALL(s4, a, b, c, d) + weigh_pair(e) * 10000L;
}
WS_TASK_6(long, s6, long, a, int, b, short, c, char, d, pair, e, unsigned, f)
{
    return WS_CALL(s5, a, b, c, d, e) + (long)f * 100000L;
}
WS_TASK_7(long, s7, long, a, int, b, short, c, char, d, pair, e, unsigned, f, double, g)
{
    return WS_CALL(s6, a, b, c, d, e, f) + weigh_double(g) * 1000000L;
}
WS_TASK_8(long, s8, long, a, int, b, short, c, char, d, pair, e, unsigned, f, double, g,
          const long *, h)
{
    return WS_CALL(s7, a, b, c, d, e, f, g) + *h * 10000000L;
}

static const long WANT[9] = {7, 1, 21, 321, 4321, 54321, 654321, 7654321, 87654321};

/* The void tasks add their first n - 1 arguments' weights to *out; v0 counts its runs. */
static _Atomic long marks[9];
static _Atomic long zero_runs;

#ifndef WS_TEST_STACK_STRICT
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-variable"
#endif
WS_VOID_TASK_0(v0)
{
    atomic_fetch_add(&zero_runs, 1);
}
#ifndef WS_TEST_STACK_STRICT
#pragma GCC diagnostic pop
#endif
WS_VOID_TASK_1(v1, _Atomic long *, out)
{
    atomic_fetch_add(out, 1);
}
WS_VOID_TASK_2(v2, _Atomic long *, out, long, a)
{
    atomic_fetch_add(out, WS_CALL(s1, a));
}
WS_VOID_TASK_3(v3, _Atomic long *, out, long, a, int, b)
{
    atomic_fetch_add(out, WS_CALL(s2, a, b));
}
WS_VOID_TASK_4(v4, _Atomic long *, out, long, a, int, b, short, c)
{
    atomic_fetch_add(out, WS_CALL(s3, a, b, c));
}
WS_VOID_TASK_5(v5, _Atomic long *, out, long, a, int, b, short, c, char, d)
{
    atomic_fetch_add(out, WS_CALL(s4, a, b, c, d));
}
WS_VOID_TASK_6(v6, _Atomic long *, out, long, a, int, b, short, c, char, d, pair, e)
{
    atomic_fetch_add(out, WS_CALL(s5, a, b, c, d, e));
}
WS_VOID_TASK_7(v7, _Atomic long *, out, long, a, int, b, short, c, char, d, pair, e, unsigned, f)
{
    atomic_fetch_add(out, WS_CALL(s6, a, b, c, d, e, f));
}
WS_VOID_TASK_8(v8, _Atomic long *, out, long, a, int, b, short, c, char, d, pair, e, unsigned, f,
               double, g)
{
    atomic_fetch_add(out, WS_CALL(s7, a, b, c, d, e, f, g));
}

/* Every task spawned at once and synced newest first into got[0..8]; then the void ones. */
WS_VOID_TASK_1(spawn_all, long *, got)
{
    WS_SPAWN(s0);
    WS_SPAWN(s1, 1);
    WS_SPAWN(s2, 1, 2);
    WS_SPAWN(s3, 1, 2, 3);
    WS_SPAWN(s4, 1, 2, 3, 4);
    WS_SPAWN(s5, 1, 2, 3, 4, E);
    WS_SPAWN(s6, 1, 2, 3, 4, E, 6);
    WS_SPAWN(s7, 1, 2, 3, 4, E, 6, G);
    WS_SPAWN(s8, 1, 2, 3, 4, E, 6, G, &H);
    got[8] = WS_SYNC(s8);
    got[7] = WS_SYNC(s7);
    got[6] = WS_SYNC(s6);
    got[5] = WS_SYNC(s5);
    got[4] = WS_SYNC(s4);
    got[3] = WS_SYNC(s3);
    got[2] = WS_SYNC(s2);
    got[1] = WS_SYNC(s1);
    got[0] = WS_SYNC(s0);

    WS_SPAWN(v0);
    WS_SPAWN(v1, &marks[1]);
    WS_SPAWN(v2, &marks[2], 1);
    WS_SPAWN(v3, &marks[3], 1, 2);
    WS_SPAWN(v4, &marks[4], 1, 2, 3);
    WS_SPAWN(v5, &marks[5], 1, 2, 3, 4);
    WS_SPAWN(v6, &marks[6], 1, 2, 3, 4, E);
    WS_SPAWN(v7, &marks[7], 1, 2, 3, 4, E, 6);
    WS_SPAWN(v8, &marks[8], 1, 2, 3, 4, E, 6, G);
    WS_SYNC(v8);
    WS_SYNC(v7);
    WS_SYNC(v6);
    WS_SYNC(v5);
    WS_SYNC(v4);
    WS_SYNC(v3);
    WS_SYNC(v2);
    WS_SYNC(v1);
    WS_SYNC(v0);
}

/* Two spawn_all spawned from a task that is itself spawned (nested spawns), and one called. */
WS_VOID_TASK_3(spawn_three, long *, a, long *, b, long *, c)
{
    WS_SPAWN(spawn_all, a);
    WS_SPAWN(spawn_all, b);
    WS_CALL(spawn_all, c);
    WS_SYNC(spawn_all);
    WS_SYNC(spawn_all);
}

/* got: three rows of 9. */
WS_TASK_1(int, arity_root, long *, got)
{
    WS_SPAWN(spawn_three, got, got + 9, got + 18);
    long direct = WS_CALL(s8, 1, 2, 3, 4, E, 6, G, &H);
    WS_SYNC(spawn_three);
    return direct == WANT[8];
}

static void check_got(const long *got, int round)
{
    for (int n = 0; n <= 8; n++)
        if (got[n] != WANT[n])
            WS_TEST_FAIL("round %d: s%d = %ld, expected %ld", round, n, got[n], WANT[n]);
}

/* What the void tasks left after `runs` runs of each: v1 adds 1, vn the weight of n - 1
 * arguments. */
static void expect_marks(long runs)
{
    ASSERT_EQ(atomic_load(&zero_runs), runs);
    ASSERT_EQ(atomic_load(&marks[1]), runs);
    for (int n = 2; n <= 8; n++)
        if (atomic_load(&marks[n]) != runs * WANT[n - 1])
            WS_TEST_FAIL("v%d: %ld after %ld runs, expected %ld", n, atomic_load(&marks[n]), runs,
                         runs * WANT[n - 1]);
}

static void case_arity(unsigned workers)
{
    ws_pool *pool = sched_pool(workers);
    const int rounds = 100;
    for (int r = 0; r < rounds; r++) {
        long got[3 * 9];
        memset(got, 0, sizeof got);
        ASSERT_EQ(arity_root_run(pool, got), 1);
        for (int i = 0; i < 3; i++)
            check_got(got + 9 * i, r);
    }
    expect_marks(3L * rounds);
    /* From main, on the pool and on the default pool. */
    ASSERT_EQ(s0_run(pool), WANT[0]);
    ASSERT_EQ(s5_run(NULL, 1, 2, 3, 4, E), WANT[5]);
    ASSERT_EQ(s8_run(pool, 1, 2, 3, 4, E, 6, G, &H), WANT[8]);
    v0_run(NULL);
    v8_run(pool, &marks[8], 1, 2, 3, 4, E, 6, G);
    ASSERT_EQ(atomic_load(&zero_runs), 3L * rounds + 1);
    ASSERT_EQ(atomic_load(&marks[8]), (3L * rounds + 1) * WANT[7]);
    ws_pool_destroy(pool);
    printf("arity 0..8 on %u workers: %d rounds of 3 x 18 typed tasks, runs from main\n", workers,
           rounds);
}

/* ---- fib, shared by the cases below ------------------------------------------------------ */

WS_TASK_1(uint64_t, sfib, int, n)
{
    if (n < 2)
        return (uint64_t)n;
    WS_SPAWN(sfib, n - 1);
    uint64_t y = WS_CALL(sfib, n - 2);
    return WS_SYNC(sfib) + y;
}

/* The WS_SPAWNs of sfib(n): one per inner node, as ws_join's in sched_fib_join. */
static uint64_t sfib_forks(int n)
{
    return sched_fib_joins(n);
}

static void expect_fib(uint64_t got, int n, const char *where)
{
    if (got != sched_fib_serial(n))
        WS_TEST_FAIL("%s: fib(%d) = %" PRIu64 ", expected %" PRIu64, where, n, got,
                     sched_fib_serial(n));
}

/* ---- nested ----------------------------------------------------------------------------- */

WS_TASK_0(int, worker_here)
{
    return ws_worker_id();
}

typedef struct on_worker {
    ws_pool *pool;
    int n;
    int id, id_inside, id_null; /* ws_worker_id() of the function and of its name_runs */
    uint64_t here, here_null, there;
} on_worker;

/* A ws_pool_run function: name_run on its own pool, given and as NULL (a plain call each), and
 * on the default pool. */
static void run_from_worker(void *p)
{
    on_worker *o = p;
    o->id = ws_worker_id();
    o->id_inside = worker_here_run(o->pool);
    o->id_null = worker_here_run(NULL);
    o->here = sfib_run(o->pool, o->n);
    o->here_null = sfib_run(NULL, o->n);
    o->there = sfib_run(ws_default_pool(), o->n);
}

/* On a worker of one pool, with a spawn held open: runs on the other pool, on its own pool
 * (a plain call), given and as NULL, and on the default pool. */
WS_TASK_3(uint64_t, across, int, n, ws_pool *, here, ws_pool *, there)
{
    WS_SPAWN(sfib, n);
    uint64_t a = sfib_run(there, n);
    uint64_t b = sfib_run(here, n);
    uint64_t c = sfib_run(NULL, n);
    uint64_t d = sfib_run(ws_default_pool(), n);
    return a + b + c + d + WS_SYNC(sfib);
}

static void case_nested(unsigned workers)
{
    ws_pool *pool = sched_pool(workers);
    ws_pool *other = sched_pool(workers);
    int n = (int)test_scaled(20, 12);
    expect_fib(sfib_run(pool, n), n, "main, on the pool");
    expect_fib(sfib_run(NULL, n), n, "main, on the default pool");
    int id = worker_here_run(pool);
    ASSERT(id >= 0 && id < (int)workers);

    on_worker o = {pool, n, -2, -2, -2, 0, 0, 0};
    ASSERT_OK(ws_pool_run(pool, run_from_worker, &o));
    ASSERT(o.id >= 0 && o.id < (int)workers);
    ASSERT_EQ(o.id_inside, o.id); /* the run on its own pool stayed on the thread */
    ASSERT_EQ(o.id_null, o.id);   /* and so did the run on NULL, the calling worker's pool */
    expect_fib(o.here, n, "a worker, on its own pool");
    expect_fib(o.here_null, n, "a worker, on NULL (its own pool)");
    expect_fib(o.there, n, "a worker, on the default pool");

    for (int r = 0; r < 20; r++) {
        uint64_t got = across_run(pool, n, pool, other);
        if (got != 5 * sched_fib_serial(n))
            WS_TEST_FAIL("round %d: %" PRIu64 ", expected 5 x fib(%d) = %" PRIu64, r, got, n,
                         5 * sched_fib_serial(n));
    }
    ws_pool_destroy(other);
    ws_pool_destroy(pool);
    printf("nested runs on %u workers: fib(%d) from main, a worker and another pool's task\n",
           workers, n);
}

/* ---- mutual ----------------------------------------------------------------------------- */

/* Declarations, so that each task below can spawn, call and run one defined after it. */
WS_DECLARE_TASK_5(uint64_t, nq_place, int, n, int, row, uint32_t, cols, uint32_t, d1, uint32_t, d2);
WS_DECLARE_TASK_1(uint64_t, odd_walk, int, n);
WS_DECLARE_VOID_TASK_2(mark_odd, _Atomic uint64_t *, sum, int, depth);
WS_DECLARE_TASK_0(int, seven);
WS_DECLARE_VOID_TASK_0(tick);

/* BOTS nqueens' shape: the solutions with rows 0..row-1 filled (cols, d1, d2: the columns and
 * diagonals attacked on row), one nq_place spawned per free column of row, synced together. */
WS_TASK_5(uint64_t, nq_row, int, n, int, row, uint32_t, cols, uint32_t, d1, uint32_t, d2)
{
    if (row == n)
        return 1;
    uint32_t free_cols = ((1u << n) - 1) & ~(cols | d1 | d2);
    int spawned = 0;
    for (uint32_t f = free_cols; f != 0; f &= f - 1) {
        uint32_t bit = f & (0u - f);
        WS_SPAWN(nq_place, n, row, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1);
        spawned++;
    }
    uint64_t solutions = 0;
    while (spawned-- > 0)
        solutions += WS_SYNC(nq_place);
    return solutions;
}

/* The level task: a queen is placed on row; the next row's search is spawned and waited for. */
WS_TASK_5(uint64_t, nq_place, int, n, int, row, uint32_t, cols, uint32_t, d1, uint32_t, d2)
{
    WS_SPAWN(nq_row, n, row + 1, cols, d1, d2);
    return WS_SYNC(nq_row);
}

static uint64_t nq_plain(int n, int row, uint32_t cols, uint32_t d1, uint32_t d2)
{
    if (row == n)
        return 1;
    uint64_t solutions = 0;
    for (uint32_t f = ((1u << n) - 1) & ~(cols | d1 | d2); f != 0; f &= f - 1) {
        uint32_t bit = f & (0u - f);
        solutions += nq_plain(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1);
    }
    return solutions;
}

/* An even/odd pair with results: each node of a fib-shaped tree is of the other task than its
 * parent, and each task weighs its children differently, so that a child run as the wrong
 * task, or a result given to the wrong sync, changes the answer (unsigned: it may wrap). */
WS_TASK_1(uint64_t, even_walk, int, n)
{
    if (n < 2)
        return (uint64_t)n + 1;
    WS_SPAWN(odd_walk, n - 1);
    uint64_t b = WS_CALL(odd_walk, n - 2);
    return 2 * WS_SYNC(odd_walk) + b;
}

WS_TASK_1(uint64_t, odd_walk, int, n)
{
    if (n < 2)
        return 5;
    WS_SPAWN(even_walk, n - 1);
    uint64_t b = WS_CALL(even_walk, n - 2);
    return WS_SYNC(even_walk) + 3 * b;
}

static uint64_t walk_plain(bool odd, int n)
{
    if (n < 2)
        return odd ? 5 : (uint64_t)n + 1;
    uint64_t a = walk_plain(!odd, n - 1), b = walk_plain(!odd, n - 2);
    return odd ? a + 3 * b : 2 * a + b;
}

/* A void pair: a complete binary tree whose even levels add 1 to *sum and odd levels 1000. */
WS_VOID_TASK_2(mark_even, _Atomic uint64_t *, sum, int, depth)
{
    atomic_fetch_add_explicit(sum, 1, memory_order_relaxed);
    if (depth == 0)
        return;
    WS_SPAWN(mark_odd, sum, depth - 1);
    WS_CALL(mark_odd, sum, depth - 1);
    WS_SYNC(mark_odd);
}

WS_VOID_TASK_2(mark_odd, _Atomic uint64_t *, sum, int, depth)
{
    atomic_fetch_add_explicit(sum, 1000, memory_order_relaxed);
    for (int child = 0; child < 2 && depth > 0; child++) /* both spawned: two open at once */
        WS_SPAWN(mark_even, sum, depth - 1);
    for (int child = 0; child < 2 && depth > 0; child++)
        WS_SYNC(mark_even);
}

static _Atomic long ticks;

/* Arity 0 declared: a spawn and a call of each before its definition. */
WS_TASK_0(int, zero_user)
{
    WS_SPAWN(tick);
    WS_SPAWN(seven);
    int s = WS_CALL(seven);
    WS_CALL(tick);
    s += WS_SYNC(seven);
    WS_SYNC(tick);
    return s;
}

WS_TASK_0(int, seven)
{
    return 7;
}

WS_VOID_TASK_0(tick)
{
    atomic_fetch_add(&ticks, 1);
}

static void case_mutual(unsigned workers)
{
    ws_pool *pool = sched_pool(workers);
    enum { QUEENS = 8, WALK = 22, MARK_DEPTH = 12 };
    uint64_t queens = nq_plain(QUEENS, 0, 0, 0, 0);
    ASSERT_UEQ(queens, 92);
    uint64_t walk = walk_plain(false, WALK), odd = walk_plain(true, WALK);
    /* 2^(d+1) - 1 nodes; of those at even depths (mark_even's, depth counted from the root),
     * there are (4^(d/2+1) - 1) / 3 for even d. */
    uint64_t nodes = (2ull << MARK_DEPTH) - 1;
    uint64_t even_nodes = ((4ull << MARK_DEPTH) - 1) / 3;
    uint64_t want_marked = even_nodes + 1000 * (nodes - even_nodes);
    int rounds = (int)test_scaled(40, 4);
    for (int r = 0; r < rounds; r++) {
        uint64_t got = nq_row_run(pool, QUEENS, 0, 0, 0, 0);
        if (got != queens)
            WS_TEST_FAIL("round %d: nqueens(%d) = %" PRIu64 ", expected %" PRIu64, r, QUEENS, got,
                         queens);
        got = even_walk_run(pool, WALK);
        if (got != walk)
            WS_TEST_FAIL("round %d: even_walk(%d) = %" PRIu64 ", expected %" PRIu64, r, WALK, got,
                         walk);
        got = odd_walk_run(pool, WALK);
        if (got != odd)
            WS_TEST_FAIL("round %d: odd_walk(%d) = %" PRIu64 ", expected %" PRIu64, r, WALK, got,
                         odd);
        _Atomic uint64_t marked = 0;
        mark_even_run(pool, &marked, MARK_DEPTH);
        if (atomic_load(&marked) != want_marked)
            WS_TEST_FAIL("round %d: marked %" PRIu64 ", expected %" PRIu64, r, atomic_load(&marked),
                         want_marked);
        ASSERT_EQ(zero_user_run(pool), 14);
    }
    ASSERT_EQ(atomic_load(&ticks), 2L * rounds);
    ws_pool_destroy(pool);
    printf("mutual recursion on %u workers, %d rounds: nqueens(%d) = %" PRIu64
           ", the even/odd walks and marks exact\n",
           workers, rounds, QUEENS, queens);
}

/* ---- stress ----------------------------------------------------------------------------- */

enum { WIDTH = 3 };

typedef struct tree_state {
    _Atomic uint32_t *runs; /* per node id */
    uint64_t seed;
} tree_state;

static tree_state tree;

/* A stall of a few hundred iterations at about one node in 32, chosen by the seed. */
static void maybe_stall(uint64_t id)
{
    uint64_t x = (id + 1) * 0x9E3779B97F4A7C15ULL ^ tree.seed;
    x ^= x >> 29;
    if ((x & 31) != 0)
        return;
    for (volatile unsigned i = 0; i < (unsigned)(x >> 40) % 500; i++)
        ;
}

/* Node id of a complete tree of width WIDTH: its children are WIDTH * id + 1 .. + WIDTH. The
 * first children are spawned, the last called; returns the nodes of the subtree. */
WS_TASK_2(uint64_t, node, uint64_t, id, int, depth)
{
    /* relaxed: a count read after name_run returned. */
    atomic_fetch_add_explicit(&tree.runs[id], 1, memory_order_relaxed);
    maybe_stall(id);
    if (depth == 0)
        return 1;
    for (int i = 1; i < WIDTH; i++)
        WS_SPAWN(node, WIDTH * id + (uint64_t)i, depth - 1);
    uint64_t n = 1 + WS_CALL(node, WIDTH * id + WIDTH, depth - 1);
    for (int i = 1; i < WIDTH; i++)
        n += WS_SYNC(node);
    return n;
}

static uint64_t tree_nodes(int depth)
{
    uint64_t n = 1, level = 1;
    for (int d = 0; d < depth; d++)
        n += level *= WIDTH;
    return n;
}

static void case_stress(unsigned workers)
{
    tree.seed = test_seed("test_sched_stack stress");
    int depth = 10;
    uint64_t nodes = tree_nodes(depth);
    tree.runs = calloc(nodes, sizeof *tree.runs);
    ASSERT(tree.runs != NULL);
    ws_pool *pool = sched_pool(workers);
    int rounds = (int)test_scaled(800, 4);
    int n = (int)test_scaled(88, 14);
    if (n > 24)
        n = 24;
    for (int r = 0; r < rounds; r++) {
        for (uint64_t i = 0; i < nodes; i++)
            atomic_store_explicit(&tree.runs[i], 0, memory_order_relaxed); /* before the run */
        tree.seed += 1;
        uint64_t got = node_run(pool, 0, depth);
        ASSERT_UEQ(got, nodes);
        for (uint64_t i = 0; i < nodes; i++) {
            uint32_t c = atomic_load_explicit(&tree.runs[i], memory_order_relaxed);
            if (c != 1)
                WS_TEST_FAIL("round %d: node %" PRIu64 " ran %u times", r, i, c);
        }
        if (r % 8 == 0)
            expect_fib(sfib_run(pool, n), n, "stress");
    }
    ws_pool_destroy(pool);
    free(tree.runs);
    printf("stress on %u workers: %d rounds of %" PRIu64 " nodes, each exactly once; fib(%d)\n",
           workers, rounds, nodes, n);
}

/* ---- deep ------------------------------------------------------------------------------- */

enum { MAX_WORKERS = 64 };
static _Atomic long leaf_runs[MAX_WORKERS]; /* by worker id: where leaves ran (spread) */

WS_TASK_1(long, leaf, long, k)
{
    int id = ws_worker_id();
    ASSERT(id >= 0 && id < MAX_WORKERS);
    /* relaxed: a count read as a hint by a task of the same run, and after it returned. */
    atomic_fetch_add_explicit(&leaf_runs[id], 1, memory_order_relaxed);
    return 3 * k + 1;
}

static void expect_leaf(long got, long k, const char *where)
{
    if (got != 3 * k + 1)
        WS_TEST_FAIL("%s: leaf(%ld) synced as %ld, expected %ld", where, k, got, 3 * k + 1);
}

/* d levels of direct calls, each holding one spawn open until the levels below returned. */
WS_TASK_1(long, chain1, long, d)
{
    if (d == 0)
        return 0;
    WS_SPAWN(leaf, d);
    long below = WS_CALL(chain1, d - 1);
    expect_leaf(WS_SYNC(leaf), d, "chain1");
    return below + 1;
}

/* The same with two spawns open per level. */
WS_TASK_1(long, chain2, long, d)
{
    if (d == 0)
        return 0;
    WS_SPAWN(leaf, 2 * d);
    WS_SPAWN(leaf, 2 * d + 1);
    long below = WS_CALL(chain2, d - 1);
    expect_leaf(WS_SYNC(leaf), 2 * d + 1, "chain2");
    expect_leaf(WS_SYNC(leaf), 2 * d, "chain2");
    return below + 2;
}

/* n children spawned before any sync; synced newest first. */
WS_TASK_1(long, wide, long, n)
{
    for (long i = 0; i < n; i++)
        WS_SPAWN(leaf, i);
    for (long i = n - 1; i >= 0; i--)
        expect_leaf(WS_SYNC(leaf), i, "wide");
    return n;
}

/* One spawn and its sync in a task of its own: called where head is at a segment's end, it
 * enters a new segment and leaves it again before it returns. */
WS_TASK_1(long, one_spawn, long, k)
{
    WS_SPAWN(leaf, k);
    return WS_SYNC(leaf);
}

/* pad leaves spawned, then, at that head: a call that spawns, a spawn, another such call, a
 * spawn; everything synced newest first. */
WS_TASK_1(long, at_boundary, long, pad)
{
    for (long i = 0; i < pad; i++)
        WS_SPAWN(leaf, i);
    expect_leaf(WS_CALL(one_spawn, pad), pad, "at_boundary");
    WS_SPAWN(leaf, pad + 1);
    expect_leaf(WS_CALL(one_spawn, pad + 2), pad + 2, "at_boundary");
    WS_SPAWN(leaf, pad + 3);
    expect_leaf(WS_SYNC(leaf), pad + 3, "at_boundary");
    expect_leaf(WS_SYNC(leaf), pad + 1, "at_boundary");
    for (long i = pad - 1; i >= 0; i--)
        expect_leaf(WS_SYNC(leaf), i, "at_boundary");
    return pad;
}

static void case_boundary(unsigned workers)
{
    ws_pool *pool = sched_pool(workers);
    /* Every head from a few frames below the first segment's end (WS_FRAMES_PER_SEGMENT: 2048)
     * to a few above it, and the same at the second one's: each call, spawn and sync of
     * `at_boundary` meets the boundary in one of the runs. */
    for (long base = 2048; base <= 2 * 2048; base += 2048)
        for (long pad = base - 8; pad <= base + 8; pad++)
            ASSERT_EQ(at_boundary_run(pool, pad), pad);
    ws_pool_destroy(pool);
    printf("boundary on %u workers: spawns, calls and syncs at every head around two segments' "
           "ends\n",
           workers);
}

static void case_deep(unsigned workers)
{
    /* ThreadSanitizer keeps call stacks of at most 65,536 calls. */
    const long levels = WS_TEST_TSAN ? 30000 : 102400;
    const long children = 10000;
    ws_pool *pool;
    ws_config cfg = {.workers = workers, .stack_size = (size_t)512 << 20};
    ASSERT_OK(ws_pool_create(&pool, &cfg));
    for (int r = 0; r < 3; r++) {
        ASSERT_EQ(chain1_run(pool, levels), levels);
        ASSERT_EQ(chain2_run(pool, levels / 2), levels);
        ASSERT_EQ(wide_run(pool, children), children);
    }
    ws_stats st;
    ws_pool_stats(pool, &st);
    ws_pool_destroy(pool);
    printf("deep on %u workers: chains of %ld open spawns (one and two per level), %ld children "
           "of one task; %" PRIu64 " run inline past the deque's cap, deepest deque %" PRIu64 "\n",
           workers, levels, children, st.inline_runs, st.max_deque_depth);
}

/* ---- mix -------------------------------------------------------------------------------- */

typedef struct mix_ctx {
    ws_pool *pool;
    int n;
    _Atomic uint32_t *hits; /* per index of the loop */
    size_t len;
} mix_ctx;

static mix_ctx mix;

typedef struct fib_job {
    int n;
    uint64_t result;
} fib_job;

/* A ws_fn (for ws_spawn, ws_join, group jobs and ws_pool_profile) running a typed task: a plain
 * call on a worker of mix.pool, the pool of the case. */
static void fib_job_run(void *p)
{
    fib_job *j = p;
    j->result = sfib_run(mix.pool, j->n);
}

static void *fib_future(void *p)
{
    fib_job_run(p);
    return p;
}

static void loop_body(size_t b, size_t e, void *ctx)
{
    (void)ctx;
    for (size_t i = b; i < e; i++) {
        /* relaxed: counts read after the loop returned. */
        atomic_fetch_add_explicit(&mix.hits[i], 1, memory_order_relaxed);
        if (i % 97 == 0 && sfib_run(mix.pool, 10) != 55)
            WS_TEST_FAIL("fib(10) in the loop body at %zu", i);
    }
}

/* Each kind of work of the rest of the API, started while this task's WS_SPAWNs are open. */
WS_TASK_1(long, mixer, int, n)
{
    WS_SPAWN(sfib, n);
    WS_SPAWN(leaf, 1);

    /* ws_spawn and WS_SPAWN interleaved: the frames before a ws_spawn are older than it. */
    fib_job a = {n, 0}, b = {n - 1, 0};
    ws_task ta, tb;
    ws_spawn(&ta, fib_job_run, &a);
    WS_SPAWN(leaf, 2);
    ws_spawn(&tb, fib_job_run, &b);
    WS_SPAWN(leaf, 3);
    expect_leaf(WS_SYNC(leaf), 3, "mix");
    ws_sync(&tb);
    expect_leaf(WS_SYNC(leaf), 2, "mix");
    ws_sync(&ta);
    expect_fib(a.result, n, "mix, ws_spawn");
    expect_fib(b.result, n - 1, "mix, ws_spawn");

    fib_job c = {n, 0}, d = {n - 2, 0};
    ws_join(fib_job_run, &c, fib_job_run, &d);
    expect_fib(c.result, n, "mix, ws_join");
    expect_fib(d.result, n - 2, "mix, ws_join");

    for (size_t i = 0; i < mix.len; i++)
        atomic_store_explicit(&mix.hits[i], 0, memory_order_relaxed); /* before the loop */
    ws_parallel_for(0, mix.len, 0, loop_body, NULL);
    for (size_t i = 0; i < mix.len; i++)
        if (atomic_load_explicit(&mix.hits[i], memory_order_relaxed) != 1)
            WS_TEST_FAIL("loop index %zu ran %u times", i,
                         atomic_load_explicit(&mix.hits[i], memory_order_relaxed));

    enum { JOBS = 16 };
    fib_job jobs[JOBS];
    ws_group g;
    ws_group_init(&g, mix.pool);
    for (int i = 0; i < JOBS; i++) {
        jobs[i] = (fib_job){n - i % 4, 0};
        ASSERT_OK(ws_group_submit(&g, fib_job_run, &jobs[i], 0));
    }
    ws_group_wait(&g);
    ASSERT_OK(ws_group_status(&g));
    for (int i = 0; i < JOBS; i++)
        expect_fib(jobs[i].result, n - i % 4, "mix, group job");

    fib_job e = {n, 0};
    ws_future *f;
    ASSERT_OK(ws_future_submit(&f, NULL, fib_future, &e));
    ASSERT_PTR_EQ(ws_future_get(f), &e);
    ws_future_free(f);
    expect_fib(e.result, n, "mix, future");

    expect_leaf(WS_SYNC(leaf), 1, "mix");
    return (long)WS_SYNC(sfib);
}

static void case_mix(unsigned workers)
{
    ws_pool *pool = sched_pool(workers);
    mix.pool = pool;
    mix.n = (int)test_scaled(18, 12);
    if (mix.n > 18)
        mix.n = 18;
    mix.len = 10000;
    mix.hits = calloc(mix.len, sizeof *mix.hits);
    ASSERT(mix.hits != NULL);
    int rounds = (int)test_scaled(40, 3);
    for (int r = 0; r < rounds; r++)
        expect_fib((uint64_t)mixer_run(pool, mix.n), mix.n, "mix, WS_SPAWN");
    ws_pool_destroy(pool);
    free(mix.hits);
    printf("mix on %u workers: %d rounds, fib(%d) every way from one typed task\n", workers, rounds,
           mix.n);
}

/* ---- order ------------------------------------------------------------------------------ */

static _Atomic long order_jobs;

static void order_job(void *p)
{
    (void)p;
    atomic_fetch_add(&order_jobs, 1);
}

/* A private frame, then a ws_spawn, then a push that hands the frame over (a group job's):
 * the frame must reach the deque before the ws_spawn's task, which is newer, or the sync of the
 * task pops the frame's record instead. The first spawn of a task taken from elsewhere is
 * handed over at once when the pool has other workers (src/frames.c). */
WS_TASK_1(long, order_root, ws_pool *, pool)
{
    WS_SPAWN(leaf, 1);
    WS_SPAWN(leaf, 2);
    ws_task t;
    ws_spawn(&t, order_job, NULL);
    ws_group g;
    ws_group_init(&g, pool);
    ASSERT_OK(ws_group_submit(&g, order_job, NULL, 0));
    ws_group_wait(&g);
    ws_sync(&t);
    expect_leaf(WS_SYNC(leaf), 2, "order");
    expect_leaf(WS_SYNC(leaf), 1, "order");
    return 1;
}

static void case_order(unsigned workers)
{
    ws_pool *pool = sched_pool(workers);
    long rounds = (long)test_scaled(2000, 100);
    for (long r = 0; r < rounds; r++)
        ASSERT_EQ(order_root_run(pool, pool), 1);
    ASSERT_EQ(atomic_load(&order_jobs), 2 * rounds);
    ws_pool_destroy(pool);
    printf("order on %u workers: %ld rounds of a frame, a ws_spawn and a group job\n", workers,
           rounds);
}

/* ---- spread ----------------------------------------------------------------------------- */

enum { SPREAD_BATCH = 4, SPREAD_WANT = 3 };

static bool spread_done(unsigned workers, int self)
{
    for (unsigned i = 0; i < workers; i++) {
        /* relaxed: see leaf. */
        long runs = atomic_load_explicit(&leaf_runs[i], memory_order_relaxed);
        if ((int)i != self && runs < SPREAD_WANT)
            return false;
    }
    return true;
}

/* Spawns batches of leaves, all private when spawned, until every other worker ran a few. */
WS_TASK_1(long, spread_root, unsigned, workers)
{
    int self = ws_worker_id();
    double deadline = sched_now() + test_hang_seconds(120.0);
    long batches = 0;
    for (; !spread_done(workers, self); batches++) {
        if (batches % 1024 == 0 && sched_now() > deadline)
            WS_TEST_FAIL("spread: after %ld batches, another worker ran fewer than %d of them",
                         batches, SPREAD_WANT);
        ASSERT_EQ(WS_CALL(wide, SPREAD_BATCH), SPREAD_BATCH);
    }
    return batches;
}

/* A task stack's private frames reach idle workers: they ask, and the next spawn answers,
 * even after the deque's reserve has made public indices that no item fills. */
static void case_spread(unsigned workers)
{
    ASSERT(workers <= MAX_WORKERS);
    ws_pool *pool = sched_pool(workers);
    long batches = spread_root_run(pool, workers);
    ws_stats st;
    ws_pool_stats(pool, &st);
    ws_pool_destroy(pool);
    printf("spread on %u workers: every other worker ran %d leaves or more after %ld batches "
           "(%" PRIu64 " steals)\n",
           workers, SPREAD_WANT, batches, st.steals);
    ASSERT_GE(st.steals, (uint64_t)(workers - 1) * SPREAD_WANT);
}

/* ---- stats ------------------------------------------------------------------------------ */

static void case_stats(unsigned workers)
{
    ws_pool *pool = sched_pool(workers);
    int n = 20;
    ws_stats before, after;
    ws_pool_stats(pool, &before);
    expect_fib(sfib_run(pool, n), n, "stats");
    ws_pool_stats(pool, &after);
    ws_pool_destroy(pool);
    uint64_t forks = sfib_forks(n);
    uint64_t spawns = after.spawns - before.spawns, pops = after.pops - before.pops;
    printf("stats: fib(%d) on %u worker(s), %" PRIu64 " forks: %" PRIu64 " spawns, %" PRIu64
           " pops\n",
           n, workers, forks, spawns, pops);
    ASSERT_GE(spawns, forks);
    if (workers == 1) { /* every fork is popped back by its owner */
        ASSERT_GE(pops, forks);
        ASSERT_EQ(after.steals, 0);
    }
}

/* ---- profile ---------------------------------------------------------------------------- */

static void case_profile(unsigned workers)
{
    ws_pool *pool = sched_pool(workers);
    int n = (int)test_scaled(18, 12);
    if (n > 18)
        n = 18;
    mix.pool = pool;
    fib_job pf = {n, 0};
    ws_profile prof;
    ASSERT_OK(ws_pool_profile(pool, fib_job_run, &pf, &prof));
    expect_fib(pf.result, n, "profiled");
    printf("profile on %u workers: fib(%d), %" PRIu64 " forks: work %.6f s, span %.6f s, %" PRIu64
           " strands, %" PRIu64 " steals\n",
           workers, n, sfib_forks(n), prof.work_s, prof.span_s, prof.strands, prof.steals);
    ASSERT(prof.work_s > 0 && prof.span_s > 0);
    ASSERT(prof.span_s <= prof.work_s * (1 + 1e-9));
    ASSERT_GE(prof.strands, sfib_forks(n));
    /* Profiling over, the fast path comes back and runs right. */
    expect_fib(sfib_run(pool, n), n, "after profiling");
    ws_pool_destroy(pool);
}

/* ---- trace ------------------------------------------------------------------------------ */

enum { TRACE_N = 16 };

static unsigned trace_workers;

static void traced_child(void *path)
{
    ASSERT_OK(setenv("WS_TRACE", (const char *)path, 1));
    ASSERT_OK(setenv("WS_TRACE_EVENTS", "65536", 1));
    ws_pool *pool = sched_pool(trace_workers);
    expect_fib(sfib_run(pool, TRACE_N), TRACE_N, "traced");
    ws_pool_destroy(pool); /* writes the pool's events */
    exit(0);               /* closes the JSON array */
}

/* The task events ("ph": "X", "cat": "task") of the trace at path. */
static size_t count_task_events(const char *path)
{
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        WS_TEST_FAIL("no trace at %s", path);
    ASSERT_OK(fseek(file, 0, SEEK_END));
    long len = ftell(file);
    ASSERT(len > 0);
    rewind(file);
    char *text = malloc((size_t)len);
    ASSERT(text != NULL);
    ASSERT_EQ(fread(text, 1, (size_t)len, file), len);
    fclose(file);
    jval root;
    char err[200];
    if (!json_parse(text, (size_t)len, &root, err, sizeof err))
        WS_TEST_FAIL("the trace is not valid JSON: %s", err);
    free(text);
    ASSERT_EQ(root.type, J_ARRAY);
    size_t tasks = 0;
    for (size_t i = 0; i < root.n; i++) {
        const char *ph = json_get_str(&root.items[i], "ph");
        const char *cat = json_get_str(&root.items[i], "cat");
        tasks += ph != NULL && cat != NULL && strcmp(ph, "X") == 0 && strcmp(cat, "task") == 0;
    }
    json_free(&root);
    return tasks;
}

static void case_trace(unsigned workers)
{
    trace_workers = workers;
    const char *base = getenv("TMPDIR");
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "%s/ws-stack-XXXXXX", base != NULL && *base != '\0' ? base : "/tmp");
    ASSERT(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/trace.json", dir);
    sched_child c;
    sched_run_child(&c, traced_child, path);
    sched_expect_clean_exit(&c, "trace");
    size_t tasks = count_task_events(path);
    uint64_t forks = sfib_forks(TRACE_N);
    printf("trace: fib(%d) on %u workers, %" PRIu64 " forks: %zu task events\n", TRACE_N, workers,
           forks, tasks);
    /* Each fork is handed over as a ws_spawn while tracing, and the root is ws_pool_run's. */
    ASSERT_EQ(tasks, forks + 1);
    ASSERT_OK(unlink(path));
    ASSERT_OK(rmdir(dir));
}

/* In a child process: a pool, then a grandchild forked from it that runs a task on it. */
static void run_in_forked_child(void *arg)
{
    (void)arg;
    ws_pool *pool = sched_pool(1);
    pid_t pid = fork();
    if (pid == 0) {
        (void)sfib_run(pool, 2); /* aborts */
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ;
    printf("grandchild: %s %d\n", WIFSIGNALED(status) ? "signal" : "exit",
           WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    ws_pool_destroy(pool);
}

/* name_run on a pool inherited through fork() aborts with one line naming name_run. */
static void case_forked(unsigned workers)
{
    (void)workers;
    sched_child c;
    sched_run_child(&c, run_in_forked_child, NULL);
    sched_expect_clean_exit(&c, "forked");
    char want[64];
    snprintf(want, sizeof want, "grandchild: signal %d", SIGABRT);
    if (strstr(c.out, want) == NULL)
        WS_TEST_FAIL("sfib_run on a pool inherited through fork() did not abort: %s", c.out);
    if (strstr(c.err, "worksteal: sfib_run: ") == NULL || sched_count_lines(c.err) != 1)
        WS_TEST_FAIL("expected one line naming sfib_run, got:\n%s", c.err);
    printf("forked: %s", c.err);
}

/* ---- contract violations ---------------------------------------------------------------- */

WS_TASK_1(int, ta, int, x)
{
    return x;
}
WS_TASK_1(int, tb, int, x)
{
    return x;
}

static void nothing(void *p)
{
    (void)p;
}

/* A spawn of ta synced as tb, with the frame private (the fast path). */
WS_TASK_0(int, other_private)
{
    WS_SPAWN(ta, 1);
    return WS_SYNC(tb);
}

/* The same after a ws_spawn handed the frame to the deque. */
WS_TASK_0(int, other_handed)
{
    WS_SPAWN(ta, 1);
    ws_task t;
    ws_spawn(&t, nothing, NULL);
    ws_sync(&t);
    return WS_SYNC(tb);
}

WS_TASK_0(int, sync_none)
{
    return WS_SYNC(ta);
}

/* A sync too many after the task's own spawn was synced. */
WS_TASK_0(int, sync_extra)
{
    WS_SPAWN(ta, 1);
    int x = WS_SYNC(ta);
    return x + WS_SYNC(ta);
}

/* sync_none run on the same worker (a plain call of ws_pool_run) from a typed task whose own
 * spawn of ta is still private: sync_none has no spawn of its own, whatever lies below it. */
WS_TASK_1(int, sync_none_nested, ws_pool *, pool)
{
    WS_SPAWN(ta, 1);
    int x = sync_none_run(pool);
    return x + WS_SYNC(ta);
}

WS_TASK_0(int, unsynced)
{
    WS_SPAWN(ta, 1);
    return 0;
}

/* The spawn left open by a task that its parent synced (and so ran by a plain call). */
WS_TASK_0(int, unsynced_child)
{
    WS_SPAWN(unsynced);
    return WS_SYNC(unsynced);
}

/* frames spawned, then synced. arm: the library's next allocation fails. */
WS_TASK_2(long, segments, long, frames, bool, arm)
{
#if !defined(WS_TEST_SHARED) /* the shared library does not export the allocation hook */
    if (arm)
        ws__test_fail_alloc_after(1);
#else
    (void)arm;
#endif
    for (long i = 0; i < frames; i++)
        WS_SPAWN(leaf, i);
    long sum = 0;
    for (long i = 0; i < frames; i++)
        sum += WS_SYNC(leaf);
    return sum;
}

enum { PLAIN, PROFILED };

typedef struct violation {
    const char *what;
    const char *line; /* the expected stderr, whole (or its start, for abort_no_memory) */
    int (*task)(ws_pool *pool);
    unsigned workers;
    int how; /* PLAIN: name_run from main; PROFILED: from a ws_pool_profile function */
    /* Another line that names the cause as well, or NULL: the task that left the frame, when a
     * thief ran it, rather than the one that called it (whose end catches it otherwise). */
    const char *alt;
} violation;

static int run_other_private(ws_pool *pool)
{
    return other_private_run(pool);
}
static int run_other_handed(ws_pool *pool)
{
    return other_handed_run(pool);
}
static int run_sync_none(ws_pool *pool)
{
    return sync_none_run(pool);
}
static int run_sync_extra(ws_pool *pool)
{
    return sync_extra_run(pool);
}
static int run_sync_none_nested(ws_pool *pool)
{
    return sync_none_nested_run(pool, pool);
}
static int run_unsynced(ws_pool *pool)
{
    return unsynced_run(pool);
}
static int run_unsynced_child(ws_pool *pool)
{
    return unsynced_child_run(pool);
}

/* Three segments of frames twice in one task: the first pass makes them and grows the deque's
 * array to hold the frames handed over at each new segment; the worker keeps the first segment
 * and the second as its spare, so the second pass's first allocation is the third segment.
 * (Between two tasks, an idle worker may trim its deque, which would then grow again first.) */
WS_TASK_1(long, segments_twice, long, frames)
{
    long want = 3 * (frames * (frames - 1) / 2) + frames;
    ASSERT_EQ(WS_CALL(segments, frames, false), want);
    return WS_CALL(segments, frames, true);
}

static int run_no_memory(ws_pool *pool)
{
    return (int)segments_twice_run(pool, 2 * 2048 + 10); /* WS_FRAMES_PER_SEGMENT: 2048 */
}

typedef struct profiled_violation {
    const violation *v;
    ws_pool *pool;
} profiled_violation;

static void violation_profiled(void *p)
{
    profiled_violation *pv = p;
    (void)pv->v->task(pv->pool);
}

static void violation_child(void *p)
{
    const violation *v = p;
    ws_pool *pool = sched_pool(v->workers);
    if (v->how == PROFILED) {
        profiled_violation pv = {v, pool};
        ws_profile prof;
        printf("ws_pool_profile returned %d\n",
               ws_pool_profile(pool, violation_profiled, &pv, &prof));
    } else {
        printf("the task returned %d\n", v->task(pool));
    }
    ws_pool_destroy(pool);
    printf("returned without aborting\n");
}

static void check_violation(const violation *v, const sched_child *ch)
{
    printf("%s, %u worker(s)%s: status 0x%x, stderr: %s", v->what, v->workers,
           v->how == PROFILED ? ", profiled" : "", (unsigned)ch->status,
           ch->err[0] != '\0' ? ch->err : "(nothing)\n");
    if (!WIFSIGNALED(ch->status) || WTERMSIG(ch->status) != SIGABRT)
        WS_TEST_FAIL("%s: expected death by SIGABRT, got status 0x%x; stdout:\n%s", v->what,
                     (unsigned)ch->status, ch->out);
    bool named = strncmp(ch->err, v->line, strlen(v->line)) == 0 ||
                 (v->alt != NULL && strncmp(ch->err, v->alt, strlen(v->alt)) == 0);
    if (!named || sched_count_lines(ch->err) != 1)
        WS_TEST_FAIL("%s: expected the one line\n%s\ngot:\n%s", v->what, v->line, ch->err);
}

static void expect_violation(const violation *v)
{
    sched_child ch;
    sched_run_child(&ch, violation_child, (void *)v);
    check_violation(v, &ch);
}

#define OTHER_TASK "worksteal: WS_SYNC(tb): the newest unsynced WS_SPAWN is of another task\n"
#define NO_SPAWN   "worksteal: WS_SYNC(ta): no unsynced WS_SPAWN in this task\n"
#define UNSYNCED                                                                                \
    "worksteal: unsynced: returned with a WS_SPAWN(ta) unsynced, its own or a typed task's it " \
    "called (WS_SYNC every WS_SPAWN before the body returns)\n"
#define UNSYNCED_CHILD                                                                             \
    "worksteal: unsynced_child: returned with a WS_SPAWN(ta) unsynced, its own or a typed task's " \
    "it called (WS_SYNC every WS_SPAWN before the body returns)\n"
#define NO_MEMORY "worksteal: out of memory for a typed task's frames (a segment of "

static const violation VIOLATIONS[] = {
    {"abort_sync_other", OTHER_TASK, run_other_private, 1, PLAIN, NULL},
    {"abort_sync_other", OTHER_TASK, run_other_private, 2, PLAIN, NULL},
    {"abort_sync_other", OTHER_TASK, run_other_private, 1, PROFILED, NULL},
    {"abort_sync_other", OTHER_TASK, run_other_handed, 1, PLAIN, NULL},
    {"abort_sync_other", OTHER_TASK, run_other_handed, 2, PLAIN, NULL},
    {"abort_sync_none", NO_SPAWN, run_sync_none, 1, PLAIN, NULL},
    {"abort_sync_none", NO_SPAWN, run_sync_none, 2, PLAIN, NULL},
    {"abort_sync_none", NO_SPAWN, run_sync_extra, 1, PLAIN, NULL},
    {"abort_sync_none", NO_SPAWN, run_sync_extra, 1, PROFILED, NULL},
    {"abort_sync_none", NO_SPAWN, run_sync_none_nested, 1, PROFILED, NULL},
    {"abort_sync_none", NO_SPAWN, run_sync_none_nested, 1, PLAIN, NULL},
    {"abort_unsynced", UNSYNCED, run_unsynced, 1, PLAIN, NULL},
    {"abort_unsynced", UNSYNCED, run_unsynced, 2, PLAIN, NULL},
    {"abort_unsynced", UNSYNCED, run_unsynced, 1, PROFILED, NULL},
    {"abort_unsynced", UNSYNCED_CHILD, run_unsynced_child, 1, PLAIN, UNSYNCED},
    {"abort_unsynced", UNSYNCED_CHILD, run_unsynced_child, 2, PLAIN, UNSYNCED},
    {"abort_no_memory", NO_MEMORY, run_no_memory, 1, PLAIN, NULL},
};

/* Every violation of the case; false if the case names none. */
static bool run_violations(const char *c)
{
    bool found = false;
    for (size_t i = 0; i < sizeof VIOLATIONS / sizeof VIOLATIONS[0]; i++) {
        if (strcmp(VIOLATIONS[i].what, c) != 0)
            continue;
        found = true;
        expect_violation(&VIOLATIONS[i]);
    }
    return found;
}

typedef struct test_case {
    const char *name;
    void (*run)(unsigned workers);
} test_case;

static const test_case CASES[] = {
    {"arity", case_arity},   {"nested", case_nested},     {"stress", case_stress},
    {"deep", case_deep},     {"mix", case_mix},           {"order", case_order},
    {"stats", case_stats},   {"profile", case_profile},   {"trace", case_trace},
    {"spread", case_spread}, {"boundary", case_boundary}, {"mutual", case_mutual},
    {"forked", case_forked},
};

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* in order with stderr on a failure */
    const char *name = argc > 1 ? argv[1] : "arity";
    unsigned workers = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 2;
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        if (strcmp(CASES[i].name, name) == 0) {
            CASES[i].run(workers);
            return 0;
        }
    }
    if (!run_violations(name))
        WS_TEST_FAIL("unknown case %s", name);
    return 0;
}
