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
 * Stalls. A leaf of the depth-10 tree that works 50 us more than its 1023 siblings (the
 * STALL_AT-th leaf to run) is a stall to the profiler's detector on one worker, which has seen
 * many leaves before it: the raw span has the extra 50 us, the stall-free span does not, and
 * one stall is counted. On more workers the leaf may be the first its thread runs, which has
 * no history to judge it by: there the stall-free figures are either of the two exact values.
 */
#include "../src/internal.h"
#include "profile_shapes.h"
#include "test.h"

#include <stdatomic.h>

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

/* ---- a stall ---- */

enum { STALL_AT = 600, STALL_NS = 50000, LEAF_NS = 20000, DEPTH = 10 };
static atomic_int leaves_run;

static void stalled_tree(void *p)
{
    int depth = *(const int *)p;
    if (depth > 0) {
        int child = depth - 1;
        ws_join(stalled_tree, &child, stalled_tree, &child);
        return;
    }
    shape_work_for(LEAF_NS);
    if (atomic_fetch_add(&leaves_run, 1) + 1 == STALL_AT)
        shape_work_for(STALL_NS); /* the machine took the CPU for 50 us */
}

static void check_stall(ws_pool *pool, unsigned workers)
{
    uint64_t leaves = 1u << DEPTH, inner = leaves - 1;
    /* inner nodes: a strand of 1 before the join, 1 after */
    uint64_t work = 2 * inner + leaves * (LEAF_NS + 1), span = 2 * DEPTH + LEAF_NS + 1;
    int depth = DEPTH;
    atomic_store(&leaves_run, 0);
    ws_profile p;
    ASSERT_OK(ws_pool_profile(pool, stalled_tree, &depth, &p));
    printf("  %-22s work %10" PRIu64 " ns  span %8" PRIu64 " ns  stall-free %8" PRIu64
           " and %8" PRIu64 " ns, %" PRIu64 " stalls\n",
           "tree with a stall", ns_of(p.work_s), ns_of(p.span_s), ns_of(p.stall_free_work_s),
           ns_of(p.stall_free_span_s), p.stalls);
    ASSERT_UEQ(ns_of(p.work_s), work + STALL_NS);
    ASSERT_UEQ(ns_of(p.span_s), span + STALL_NS);
    if (workers == 1 || p.stalls == 1) {
        ASSERT_UEQ(p.stalls, 1);
        ASSERT_UEQ(ns_of(p.stall_free_work_s), work);
        ASSERT_UEQ(ns_of(p.stall_free_span_s), span);
    } else {
        ASSERT_UEQ(p.stalls, 0); /* the leaf was its thread's first few: not judged */
        ASSERT_UEQ(ns_of(p.stall_free_work_s), work + STALL_NS);
        ASSERT_UEQ(ns_of(p.stall_free_span_s), span + STALL_NS);
    }
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
        default:
            check_stall(pool, workers);
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
        for (int shape = 0; shape <= 8; shape++)
            run_shape(counts[i], shape);
    }
    ws__prof_set_test_clock(NULL);
    return 0;
}
