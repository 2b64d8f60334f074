/* test_sched_typed_arity: the typed layer's forms beyond WS_TASK_0..3 (worksteal.h).
 *
 *   arity    WS_TASK_n and WS_VOID_TASK_n for n = 0..8: each task's arguments weighted by their
 *            position (a swap or a lost argument changes the answer), spawned together and
 *            synced in reverse, called directly, and run with name_run from outside (on a
 *            given pool and on the default one); every void task leaves its mark once.
 *   nested   name_run from a task of another pool (the caller's pool keeps its workers meanwhile)
 *            and from a task of the same pool (a plain call).
 *   deep     a chain of 70,000 typed spawns held open at once, more than a deque's 65,535 items:
 *            each leaf runs exactly once, nothing crashes; on one worker the forks past the cap
 *            run inline.
 *   shutdown name_run on a pool inherited through fork() aborts with one line naming it.
 *
 * usage: test_sched_typed_arity arity|nested|deep|shutdown [P]
 */
#include "test_sched_util.h"

#include <signal.h>
#include <stdatomic.h>

/* ---- arity ------------------------------------------------------------------------------ */

/* sum_n(a1, ..., an) = a1 * 1 + a2 * 10 + ... + an * 10^(n-1) */
WS_TASK_0(long, sum0)
{
    return 7;
}
WS_TASK_1(long, sum1, long, a)
{
    return a;
}
WS_TASK_2(long, sum2, long, a, int, b)
{
    return a + b * 10L;
}
WS_TASK_3(long, sum3, long, a, int, b, short, c)
{
    return a + b * 10L + c * 100L;
}
WS_TASK_4(long, sum4, long, a, int, b, short, c, char, d)
{
    return a + b * 10L + c * 100L + d * 1000L;
}
WS_TASK_5(long, sum5, long, a, int, b, short, c, char, d, long, e)
{
    return a + b * 10L + c * 100L + d * 1000L + e * 10000L;
}
WS_TASK_6(long, sum6, long, a, int, b, short, c, char, d, long, e, unsigned, f)
{
    return a + b * 10L + c * 100L + d * 1000L + e * 10000L + (long)f * 100000L;
}
WS_TASK_7(long, sum7, long, a, int, b, short, c, char, d, long, e, unsigned, f, double, g)
{
    return a + b * 10L + c * 100L + d * 1000L + e * 10000L + (long)f * 100000L + (long)g * 1000000L;
}
WS_TASK_8(long, sum8, long, a, int, b, short, c, char, d, long, e, unsigned, f, double, g,
          const long *, h)
{
    return a + b * 10L + c * 100L + d * 1000L + e * 10000L + (long)f * 100000L +
           (long)g * 1000000L + *h * 10000000L;
}

/* The void tasks store sum_n of their arguments in out[n]. */
static _Atomic long marks[9];
static _Atomic int zero_runs;

WS_VOID_TASK_0(mark0)
{
    atomic_fetch_add(&zero_runs, 1);
}
WS_VOID_TASK_1(mark1, _Atomic long *, out)
{
    atomic_fetch_add(out, 1);
}
WS_VOID_TASK_2(mark2, _Atomic long *, out, long, a)
{
    atomic_fetch_add(out, a);
}
WS_VOID_TASK_3(mark3, _Atomic long *, out, long, a, int, b)
{
    atomic_fetch_add(out, a + b * 10L);
}
WS_VOID_TASK_4(mark4, _Atomic long *, out, long, a, int, b, short, c)
{
    atomic_fetch_add(out, a + b * 10L + c * 100L);
}
WS_VOID_TASK_5(mark5, _Atomic long *, out, long, a, int, b, short, c, char, d)
{
    atomic_fetch_add(out, a + b * 10L + c * 100L + d * 1000L);
}
WS_VOID_TASK_6(mark6, _Atomic long *, out, long, a, int, b, short, c, char, d, long, e)
{
    atomic_fetch_add(out, a + b * 10L + c * 100L + d * 1000L + e * 10000L);
}
WS_VOID_TASK_7(mark7, _Atomic long *, out, long, a, int, b, short, c, char, d, long, e, unsigned, f)
{
    atomic_fetch_add(out, a + b * 10L + c * 100L + d * 1000L + e * 10000L + (long)f * 100000L);
}
WS_VOID_TASK_8(mark8, _Atomic long *, out, long, a, int, b, short, c, char, d, long, e, unsigned, f,
               double, g)
{
    atomic_fetch_add(out, a + b * 10L + c * 100L + d * 1000L + e * 10000L + (long)f * 100000L +
                              (long)g * 1000000L);
}

static const long H = 8;
static const long WANT[9] = {7, 1, 21, 321, 4321, 54321, 654321, 7654321, 87654321};

/* Every task spawned at once, synced newest first; then the void ones. */
static void spawn_all(void *p)
{
    long *got = p;
    sum0_frame f0;
    sum1_frame f1;
    sum2_frame f2;
    sum3_frame f3;
    sum4_frame f4;
    sum5_frame f5;
    sum6_frame f6;
    sum7_frame f7;
    sum8_frame f8;
    sum0_spawn(&f0);
    sum1_spawn(&f1, 1);
    sum2_spawn(&f2, 1, 2);
    sum3_spawn(&f3, 1, 2, 3);
    sum4_spawn(&f4, 1, 2, 3, 4);
    sum5_spawn(&f5, 1, 2, 3, 4, 5);
    sum6_spawn(&f6, 1, 2, 3, 4, 5, 6);
    sum7_spawn(&f7, 1, 2, 3, 4, 5, 6, 7.0);
    sum8_spawn(&f8, 1, 2, 3, 4, 5, 6, 7.0, &H);
    got[8] = sum8_sync(&f8);
    got[7] = sum7_sync(&f7);
    got[6] = sum6_sync(&f6);
    got[5] = sum5_sync(&f5);
    got[4] = sum4_sync(&f4);
    got[3] = sum3_sync(&f3);
    got[2] = sum2_sync(&f2);
    got[1] = sum1_sync(&f1);
    got[0] = sum0_sync(&f0);

    mark0_frame v0;
    mark1_frame v1;
    mark2_frame v2;
    mark3_frame v3;
    mark4_frame v4;
    mark5_frame v5;
    mark6_frame v6;
    mark7_frame v7;
    mark8_frame v8;
    mark0_spawn(&v0);
    mark1_spawn(&v1, &marks[1]);
    mark2_spawn(&v2, &marks[2], 1);
    mark3_spawn(&v3, &marks[3], 1, 2);
    mark4_spawn(&v4, &marks[4], 1, 2, 3);
    mark5_spawn(&v5, &marks[5], 1, 2, 3, 4);
    mark6_spawn(&v6, &marks[6], 1, 2, 3, 4, 5);
    mark7_spawn(&v7, &marks[7], 1, 2, 3, 4, 5, 6);
    mark8_spawn(&v8, &marks[8], 1, 2, 3, 4, 5, 6, 7.0);
    mark8_sync(&v8);
    mark7_sync(&v7);
    mark6_sync(&v6);
    mark5_sync(&v5);
    mark4_sync(&v4);
    mark3_sync(&v3);
    mark2_sync(&v2);
    mark1_sync(&v1);
    mark0_sync(&v0);
}

/* What the void tasks left in marks[] after `rounds` rounds: each mark_n adds sum_(n-1) of
 * its arguments, mark1 adds 1 (its only argument is the mark's place). */
static void expect_marks(int rounds)
{
    ASSERT_EQ(atomic_load(&zero_runs), rounds);
    ASSERT_EQ(atomic_load(&marks[1]), rounds);
    for (int n = 2; n <= 8; n++)
        if (atomic_load(&marks[n]) != rounds * WANT[n - 1])
            WS_TEST_FAIL("mark%d: %ld after %d rounds, expected %ld", n, atomic_load(&marks[n]),
                         rounds, rounds * WANT[n - 1]);
}

static void case_arity(unsigned workers)
{
    ws_pool *pool = sched_pool(workers);
    long got[9] = {0};
    const int rounds = 100;
    for (int r = 0; r < rounds; r++) {
        ASSERT_OK(ws_pool_run(pool, spawn_all, got));
        for (int n = 0; n <= 8; n++)
            if (got[n] != WANT[n])
                WS_TEST_FAIL("round %d: sum%d = %ld, expected %ld", r, n, got[n], WANT[n]);
    }
    expect_marks(rounds);
    /* Direct calls, and runs from outside: on the pool, and on the default pool. */
    ASSERT_EQ(sum8(1, 2, 3, 4, 5, 6, 7.0, &H), WANT[8]);
    ASSERT_EQ(sum0_run(pool), WANT[0]);
    ASSERT_EQ(sum3_run(pool, 1, 2, 3), WANT[3]);
    ASSERT_EQ(sum8_run(pool, 1, 2, 3, 4, 5, 6, 7.0, &H), WANT[8]);
    ASSERT_EQ(sum5_run(NULL, 1, 2, 3, 4, 5), WANT[5]);
    mark0_run(pool);
    mark8_run(NULL, &marks[8], 1, 2, 3, 4, 5, 6, 7.0);
    ASSERT_EQ(atomic_load(&zero_runs), rounds + 1);
    ASSERT_EQ(atomic_load(&marks[8]), (rounds + 1) * WANT[7]);
    ws_pool_destroy(pool);
    printf("arity 0..8 on %u workers: %d rounds of 18 tasks, runs from outside\n", workers, rounds);
}

/* ---- nested ----------------------------------------------------------------------------- */

/* The nodes of a complete tree of the given depth and width (at most 8): the children spawned
 * in a loop, each into its own frame, synced in reverse. */
WS_TASK_2(uint64_t, tree, int, depth, int, width)
{
    if (depth == 0)
        return 1;
    tree_frame child[8];
    for (int i = 0; i < width; i++)
        tree_spawn(&child[i], depth - 1, width);
    uint64_t n = 1;
    for (int i = width - 1; i >= 0; i--)
        n += tree_sync(&child[i]);
    return n;
}

static uint64_t tree_nodes(int depth, int width)
{
    uint64_t n = 1, level = 1;
    for (int d = 0; d < depth; d++)
        n += level *= (uint64_t)width;
    return n;
}

static ws_pool *other_pool;

/* On a worker of one pool: a run on the other pool, and one on its own (a plain call). */
WS_TASK_1(uint64_t, across, int, depth)
{
    tree_frame f;
    tree_spawn(&f, depth, 3); /* held open across the run on the other pool */
    uint64_t there = tree_run(other_pool, depth, 3);
    uint64_t here = tree_run(NULL, depth, 3);
    return there + here + tree_sync(&f);
}

static void case_nested(unsigned workers)
{
    ws_pool *pool = sched_pool(workers);
    other_pool = sched_pool(workers);
    int depth = test_scaled(10, 7);
    uint64_t want = tree_nodes(depth, 3);
    for (int r = 0; r < 20; r++) {
        uint64_t got = across_run(pool, depth);
        if (got != 3 * want)
            WS_TEST_FAIL("round %d: %llu, expected 3 x %llu nodes", r, (unsigned long long)got,
                         (unsigned long long)want);
    }
    ws_pool_destroy(other_pool);
    ws_pool_destroy(pool);
    printf("nested runs on %u workers: a tree of %llu nodes three ways, 20 rounds\n", workers,
           (unsigned long long)want);
}

/* ---- deep ------------------------------------------------------------------------------- */

/* 70,000 open spawns, two per level: the chain's depth in calls stays at 35,000 (ThreadSanitizer
 * keeps call stacks of at most 65,536 frames). */
enum { DEEP = 70000 };
static _Atomic long leaves;

WS_VOID_TASK_0(leaf)
{
    atomic_fetch_add(&leaves, 1);
}

/* 2 * d leaves spawned and held open down a chain of direct calls, then synced on the way
 * back. */
WS_VOID_TASK_1(chain, int, d)
{
    if (d == 0)
        return;
    leaf_frame f, g;
    leaf_spawn(&f);
    leaf_spawn(&g);
    chain(d - 1);
    leaf_sync(&g);
    leaf_sync(&f);
}

static void case_deep(unsigned workers)
{
    ws_pool *pool;
    ws_config cfg = {.workers = workers, .stack_size = (size_t)512 << 20};
    ASSERT_OK(ws_pool_create(&pool, &cfg));
    chain_run(pool, DEEP / 2);
    ASSERT_EQ(atomic_load(&leaves), DEEP);
    ws_stats st;
    ws_pool_stats(pool, &st);
    ws_pool_destroy(pool);
    printf("deep: %d open spawns on %u workers, %llu run inline past the deque's cap, deepest "
           "deque %llu\n",
           DEEP, workers, (unsigned long long)st.inline_runs,
           (unsigned long long)st.max_deque_depth);
    if (workers == 1) /* with thieves, the chain's leaves may be stolen as fast as they come */
        ASSERT(st.inline_runs > 0 && st.max_deque_depth == 65535);
}

/* ---- shutdown --------------------------------------------------------------------------- */

/* In a child process: a pool, then a grandchild forked from it that runs a task on it. */
static void run_in_forked_child(void *arg)
{
    (void)arg;
    ws_pool *pool = sched_pool(1);
    pid_t pid = fork();
    if (pid == 0) {
        (void)tree_run(pool, 2, 2); /* aborts */
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ;
    printf("grandchild: %s %d\n", WIFSIGNALED(status) ? "signal" : "exit",
           WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    ws_pool_destroy(pool);
}

static void case_shutdown(void)
{
    sched_child c;
    sched_run_child(&c, run_in_forked_child, NULL);
    sched_expect_clean_exit(&c, "shutdown");
    char want[64];
    snprintf(want, sizeof want, "grandchild: signal %d", SIGABRT);
    if (strstr(c.out, want) == NULL)
        WS_TEST_FAIL("tree_run on a pool inherited through fork() did not abort: %s", c.out);
    if (strstr(c.err, "worksteal: tree_run: ") == NULL || sched_count_lines(c.err) != 1)
        WS_TEST_FAIL("expected one line naming tree_run, got:\n%s", c.err);
    printf("shutdown: %s", c.err);
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "arity";
    unsigned workers = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 2;
    if (strcmp(c, "arity") == 0)
        case_arity(workers);
    else if (strcmp(c, "nested") == 0)
        case_nested(workers);
    else if (strcmp(c, "deep") == 0)
        case_deep(workers);
    else if (strcmp(c, "shutdown") == 0)
        case_shutdown();
    else
        WS_TEST_FAIL("unknown case %s", c);
    return 0;
}
