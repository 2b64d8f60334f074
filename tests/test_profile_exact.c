/* test_profile_exact: the profiler's algorithm (src/profile.c) on a deterministic clock.
 *
 * The profiler reads a test clock here (ws__prof_set_test_clock) instead of the tick counter:
 * each thread has a clock of its own, which every read advances by 1 ns and which a strand's
 * work advances by exactly the work asked for (profile_shapes.h's shape_work_for, in its
 * virtual mode, adds to the thread's clock instead of spinning). A strand then measures
 * 1 ns plus its work, exactly, wherever and whenever it runs, so every shape of the profiler's
 * tests has a work and a span that can be computed by hand, and the profile must give them to
 * the nanosecond, on 1, 2 and 4 workers, whatever the schedule. The formulas, with a strand
 * ending at each fork, join, spawn, sync and group wait and at the function's return
 * (src/join.c, src/group.c):
 *
 *   chain(n, s): each level a strand of s, a join of the next level with an empty sibling, a
 *     strand after: work = (s+3) n + s+1, span = (s+2) n + s+1, strands 3n + 1.
 *   tree by joins (depth d, node x, leaf y): an inner node is a strand of x+1, the join, a
 *     strand of 1: work = (2^d - 1)(x+2) + 2^d (y+1), span = d (x+2) + y+1.
 *   tree by spawns: spawn left, spawn right, sync right, sync left: strands of x+1, 1, 1, 1, 1;
 *     the span after them is (x+1) + 3 + the child's, so work = (2^d - 1)(x+5) + 2^d (y+1),
 *     span = d (x+4) + y+1.
 *   fan of 8 children of i * step: 17 strands of 1 in the frame, the child spawned i-th starts
 *     at span i: work = 36 step + 25, span = 8 step + 17.
 *   fib(n), a join per call: I = fib(n+1) - 1 inner calls of two strands, L = fib(n+1) leaves
 *     of one: work = 2I + L, span = 2(n-1) + 1.
 *   a group job submitted inside a join, or waited for: no part of the DAG (work 5, span 4;
 *     work 2, span 2).
 *
 * Stalls, injected into the leaves of the depth-10 tree of 20 us leaves, where the detector
 * must take each out exactly (the stall-free work and span are the tree's own, the raw ones
 * keep the stalls, and the stalls are counted): one of 50 us; a burst of six from 3 ns (three
 * quanta of the test clock) to 50 us among seven leaves in a row; a stall in the first leaf of
 * every thread but the first to run leaves, judged by the figures the first published. And
 * jitter, leaves alternately 5 ns short and long on a clock of 10 ns quanta, which the
 * stall-free figures count at the mean: exact, where the raw span has a long leaf.
 */
#include "../src/internal.h"
#include "../src/profile.h"
#include "profile_shapes.h"
#include "test.h"

#include <sched.h>
#include <stdatomic.h>
#include <time.h>

/* ---- the clock ---- */

/* Each thread's clock starts at a base of its own, 2^40 ns apart, so that the clocks of two
 * threads never give the same value (nothing relies on that; it only makes a mix-up show). */
static atomic_ullong next_base = 1ull << 40;
static _Thread_local bool has_base;

static uint64_t test_now(void)
{
    if (!has_base) {
        shape_virtual_now += atomic_fetch_add(&next_base, 1ull << 40);
        has_base = true;
    }
    return shape_virtual_now++;
}

/* ---- checks ---- */

static uint64_t ns_of(double seconds)
{
    return (uint64_t)(seconds * 1e9 + 0.5);
}

static void check_profile(ws_pool *pool, ws_fn fn, void *arg, const char *name, uint64_t work,
                          uint64_t span, uint64_t strands)
{
    ws_profile p;
    ASSERT_OK(ws_pool_profile(pool, fn, arg, &p));
    printf("  %-22s work %10" PRIu64 " ns  span %8" PRIu64 " ns  strands %6" PRIu64 "\n", name,
           ns_of(p.work_s), ns_of(p.span_s), p.strands);
    ASSERT_UEQ(ns_of(p.work_s), work);
    ASSERT_UEQ(ns_of(p.span_s), span);
    ASSERT_UEQ(p.strands, strands);
    ASSERT_UEQ(ns_of(p.stall_free_work_s), work); /* no stall in any of these */
    ASSERT_UEQ(ns_of(p.stall_free_span_s), span);
    ASSERT_UEQ(p.stalls, 0);
    ASSERT(p.burdened_span_s >= p.span_s);
    double parallelism = (double)work / (double)span, error = p.parallelism - parallelism;
    ASSERT(error < 1e-9 * parallelism && -error < 1e-9 * parallelism);
}

static void check_chain(ws_pool *pool, int n, uint64_t s)
{
    shape_chain_arg c = {n, s};
    uint64_t un = (uint64_t)n;
    check_profile(pool, shape_chain, &c, "chain", (s + 3) * un + s + 1, (s + 2) * un + s + 1,
                  3 * un + 1);
}

static void check_trees(ws_pool *pool, int d, uint64_t x, uint64_t y)
{
    shape_tree_arg t = {d, x, y};
    uint64_t leaves = 1ull << d, inner = leaves - 1, ud = (uint64_t)d;
    check_profile(pool, shape_tree_join, &t, "tree of joins", inner * (x + 2) + leaves * (y + 1),
                  ud * (x + 2) + y + 1, 2 * inner + leaves);
    check_profile(pool, shape_tree_spawn, &t, "tree of spawns", inner * (x + 5) + leaves * (y + 1),
                  ud * (x + 4) + y + 1, 5 * inner + leaves);
}

static void check_fan(ws_pool *pool)
{
    uint64_t step = SHAPE_FAN_STEP_NS;
    check_profile(pool, shape_fan, NULL, "fan", 36 * step + 25, 8 * step + 17, 25);
}

static void check_fib(ws_pool *pool, int n)
{
    uint64_t a = 0, b = 1; /* fib(0), fib(1) */
    for (int i = 0; i < n; i++) {
        uint64_t c = a + b;
        a = b;
        b = c;
    } /* b = fib(n + 1) */
    uint64_t inner = b - 1, leaves = b;
    shape_fib_arg f = {n, 0};
    check_profile(pool, shape_fib, &f, "fib", 2 * inner + leaves, 2 * (uint64_t)(n - 1) + 1,
                  2 * inner + leaves);
    ASSERT_EQ(f.r, (long)a); /* a = fib(n) */
}

/* ---- group jobs: outside the DAG ---- */

static void check_group_jobs(ws_pool *pool)
{
    shape_group_ctx g;
    ws_group_init(&g.group, pool);
    check_profile(pool, shape_join_over_group_job, &g, "join over a group job", 5, 4, 5);
    ASSERT_OK(g.err);
    ws_group_init(&g.group, pool);
    check_profile(pool, shape_wait_for_group_job, &g, "wait for a group job", 2, 2, 2);
    ASSERT_OK(g.err);
}

/* ---- stalls ---- */

/* The depth-10 tree of 20 us leaves, where the machine adds leaf_extra(i) ns to the i-th leaf
 * to run (from 1), or takes them off if negative. */
enum { LEAF_NS = 20000, DEPTH = 10 };
static int64_t (*leaf_extra)(int i);
static atomic_int leaves_run;

static void stalled_tree(void *p)
{
    int depth = *(const int *)p;
    if (depth > 0) {
        int child = depth - 1;
        ws_join(stalled_tree, &child, stalled_tree, &child);
        return;
    }
    int64_t extra = leaf_extra(atomic_fetch_add(&leaves_run, 1) + 1);
    shape_work_for((uint64_t)(LEAF_NS + extra));
}

typedef struct tree_figures {
    uint64_t work, span, free_work, free_span, stalls;
} tree_figures;

static tree_figures profile_stalled_tree(ws_pool *pool, int64_t (*extra)(int), const char *name)
{
    int depth = DEPTH;
    leaf_extra = extra;
    atomic_store(&leaves_run, 0);
    ws_profile p;
    ASSERT_OK(ws_pool_profile(pool, stalled_tree, &depth, &p));
    tree_figures t = {ns_of(p.work_s), ns_of(p.span_s), ns_of(p.stall_free_work_s),
                      ns_of(p.stall_free_span_s), p.stalls};
    printf("  %-22s work %10" PRIu64 " ns  span %8" PRIu64 " ns  stall-free %8" PRIu64
           " and %8" PRIu64 " ns, %" PRIu64 " stalls\n",
           name, t.work, t.span, t.free_work, t.free_span, t.stalls);
    ASSERT_UEQ(p.strands, 2 * ((1u << DEPTH) - 1) + (1u << DEPTH));
    return t;
}

/* The tree's figures without any stall: an inner node is a strand of 1 ns before its join and
 * one of 1 ns after. */
static const uint64_t TREE_WORK = 2 * ((1u << DEPTH) - 1) + (1u << DEPTH) * (LEAF_NS + 1);
static const uint64_t TREE_SPAN = 2 * DEPTH + LEAF_NS + 1;

/* Each stall is taken out exactly: the stall-free figures are the tree's. */
static void check_stalls_taken_out(tree_figures t, uint64_t stalled_ns, uint64_t stalls)
{
    ASSERT_UEQ(t.work, TREE_WORK + stalled_ns);
    ASSERT_UEQ(t.stalls, stalls);
    ASSERT_UEQ(t.free_work, TREE_WORK);
    ASSERT_UEQ(t.free_span, TREE_SPAN);
}

/* One stall of 50 us, at the 600th leaf. Every thread has seen leaves by then, or has a hint
 * from one that has (of the 599 leaves before it, one thread ran at least 150, and published
 * its figures after its 8th, before its 9th leaf's increment of leaves_run). */
enum { STALL_AT = 600, STALL_NS = 50000 };

static int64_t one_stall(int i)
{
    return i == STALL_AT ? STALL_NS : 0;
}

static void check_stall(ws_pool *pool)
{
    tree_figures t = profile_stalled_tree(pool, one_stall, "tree with a stall");
    ASSERT_UEQ(t.span, TREE_SPAN + STALL_NS);
    check_stalls_taken_out(t, STALL_NS, 1);
}

/* A burst: six stalls among seven leaves in a row, from 3 ns (three quanta of the test clock,
 * the shortest stall recognised) to 50 us. The stalled strands are under half of any recent
 * history, so the place's median and lower quartile stay those of its clean leaves. */
static const uint64_t burst_ns[] = {3, 400, 5000, 0, 50000, 7, 20000};
enum { BURST = sizeof burst_ns / sizeof burst_ns[0] };

static int64_t burst(int i)
{
    return i >= STALL_AT && i < STALL_AT + BURST ? (int64_t)burst_ns[i - STALL_AT] : 0;
}

static void check_burst(ws_pool *pool)
{
    tree_figures t = profile_stalled_tree(pool, burst, "tree with a burst");
    uint64_t sum = 0, longest = 0;
    for (int i = 0; i < BURST; i++) {
        sum += burst_ns[i];
        longest = burst_ns[i] > longest ? burst_ns[i] : longest;
    }
    ASSERT_UEQ(t.span, TREE_SPAN + longest);
    check_stalls_taken_out(t, sum, BURST - 1);
}

/* Jitter within the band: on a clock of JITTER_QUANTUM_NS, each thread's leaves alternate
 * between 5 ns short and 5 ns long (the first short). Read on such a clock they cannot be told
 * apart, so the stall-free figures count each at its place's typical length, the mean: the
 * tree's exact figures, where the raw span has a long leaf. A place's first strands in a fresh
 * pool have no figures to be judged by, so the stall-free figures are exact from the second
 * profile of the pool on. */
enum { JITTER_NS = 5, JITTER_QUANTUM_NS = 10 };
static _Thread_local unsigned jittered_leaves;

static int64_t jitter(int i)
{
    (void)i;
    return jittered_leaves++ % 2 == 0 ? -JITTER_NS : JITTER_NS;
}

static void check_jitter(ws_pool *pool, int rep)
{
    ws__prof_set_test_quantum(JITTER_QUANTUM_NS);
    tree_figures t = profile_stalled_tree(pool, jitter, "tree with jitter");
    ws__prof_set_test_quantum(0);
    ASSERT_UEQ(t.span, TREE_SPAN + JITTER_NS);
    ASSERT_UEQ(t.stalls, 0);
    if (rep > 0) {
        ASSERT_UEQ(t.free_work, TREE_WORK);
        ASSERT_UEQ(t.free_span, TREE_SPAN);
    }
}

/* A stall in a thread's first leaf, which its own history cannot judge: the thread judges it by
 * the figures that another thread of the pool published. The first thread to run a leaf
 * (first_runner) runs eight, which publishes the place's figures, then waits at its ninth for
 * another thread to start a leaf; every other thread's first leaf waits for that ninth leaf
 * and is then stalled. */
static atomic_int first_runner, first_runner_leaves, others_started, young_stalls;
static _Thread_local bool ran_a_leaf;

static void wait_until(atomic_int *v, int at_least)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (atomic_load(v) < at_least) { /* seq_cst: see young_stall */
        clock_gettime(CLOCK_MONOTONIC, &now);
        ASSERT(now.tv_sec - start.tv_sec < 60); /* a hang guard: no thread took any work */
        sched_yield();
    }
}

static int64_t young_stall(int i)
{
    (void)i;
    int me = ws_worker_id() + 1, none = 0;
    bool first_leaf = !ran_a_leaf;
    ran_a_leaf = true;
    /* seq_cst, all: a thread's publication of its figures, at the close of its 8th leaf, is
     * sequenced before its increment at the 9th, which the waiting thread reads. */
    if (atomic_compare_exchange_strong(&first_runner, &none, me) || none == me) {
        if (atomic_fetch_add(&first_runner_leaves, 1) + 1 == 9)
            wait_until(&others_started, 1);
        return 0;
    }
    if (!first_leaf)
        return 0;
    atomic_fetch_add(&others_started, 1);
    wait_until(&first_runner_leaves, 9);
    atomic_fetch_add(&young_stalls, 1);
    return STALL_NS;
}

static void check_young_stall(ws_pool *pool, unsigned workers, int rep)
{
    if (rep == 0) {
        atomic_store(&first_runner, 0);
        atomic_store(&first_runner_leaves, 0);
        atomic_store(&others_started, 0);
    }
    atomic_store(&young_stalls, 0);
    if (workers == 1)
        return; /* one thread: no other to be young */
    tree_figures t = profile_stalled_tree(pool, young_stall, "stalled young threads");
    uint64_t stalls = (uint64_t)atomic_load(&young_stalls);
    ASSERT(rep > 0 || stalls >= 1); /* the first profile waited for another thread's leaf */
    check_stalls_taken_out(t, stalls * STALL_NS, stalls);
}

/* Each shape on a pool of its own, profiled three times: the stall detector keeps a history per
 * thread, and a shape whose strands are longer than another's at the same place (the trees of
 * 100 us and of 20 us leaves) would be a stall to it after that other shape. */
static void run_shape(unsigned workers, int shape)
{
    ws_pool *pool;
    ws_config cfg = {.workers = workers};
    ASSERT_OK(ws_pool_create(&pool, &cfg));
    for (int rep = 0; rep < 3; rep++) {
        switch (shape) {
        case 0:
            check_chain(pool, 2000, 0);
            break;
        case 1:
            check_chain(pool, 2000, 2000);
            break;
        case 2:
            check_chain(pool, 50, 100000);
            break;
        case 3:
            check_trees(pool, 6, 100000, 100000);
            break;
        case 4:
            check_trees(pool, 10, 0, 20000);
            break;
        case 5:
            check_fan(pool);
            break;
        case 6:
            check_fib(pool, 25);
            break;
        case 7:
            check_group_jobs(pool);
            break;
        case 8:
            check_stall(pool);
            break;
        case 9:
            check_burst(pool);
            break;
        case 10:
            check_jitter(pool, rep);
            break;
        default:
            check_young_stall(pool, workers, rep);
            break;
        }
    }
    ws_pool_destroy(pool);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    shape_virtual = true;
    ws__prof_set_test_clock(test_now);
    unsigned counts[] = {1, 2, 4};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        printf("--- %u workers\n", counts[i]);
        for (int shape = 0; shape <= 11; shape++)
            run_shape(counts[i], shape);
    }
    ws__prof_set_test_clock(NULL);
    return 0;
}
