/* test_profile: work and span measurement on computations of known shape.
 *
 * The shapes are those of profile_shapes.h. Each is profiled REPS times on 1, 2 and 4 workers;
 * the checks are on measured quantities against known ones, never on how fast anything ran.
 *
 *  - chain of 2000 joins with an empty sibling, with no work (its work is checked) and with
 *    2 us per level: parallelism 1 (up to the empty siblings' few ns).
 *  - chain of 50 levels of 100 us: parallelism 1, work 51 x 100 us.
 *  - balanced tree of depth 6 with 100 us at every node, by joins and by spawns:
 *    T1 = 127 x 100 us, T-infinity = 7 x 100 us, parallelism 127 / 7 = 18.1.
 *  - fan: one frame spawns 8 children of 50, 100, ..., 400 us and syncs them: T-infinity is the
 *    longest child, 400 us; T1 = 1.8 ms; parallelism 4.5.
 *  - balanced tree of depth 10, 1024 leaves of 20 us, nothing at the inner nodes:
 *    T-infinity = 20 us + 10 levels of join strands (tens of ns each).
 *  - fib(25) with a join per call: T1 is the program's own time (a few ns per strand), which the
 *    profiler must not inflate with a clock read per strand (it used to: 0.7 us each, 100x the
 *    work). Its T-infinity, 25 levels of a few ns, is below what a timer resolves on this
 *    machine (docs/profiling.md) and is not checked here; bench/profile_shapes reports it.
 *
 * The tolerances. On this shared 2-core virtual machine the host stalls a virtual CPU for
 * 30-70 us a hundred times a second or more, and charges many of those stalls to the running
 * thread as CPU time that no clock of the thread can tell from its own work (measured in
 * docs/profiling.md; a preemption, which the profiler takes out, is another matter). They land
 * on random strands, and the span, a maximum over paths, picks them up. A busy host also takes
 * the virtual CPU away for milliseconds at a time (steal time): the guest's clocks go on, no
 * thread is switched out, and the profiler rightly counts that time as the strand's. So the
 * shapes keep their own account of what their strands took on the monotonic clock beside their
 * CPU time (profile_shapes.h), and a figure's upper bound is checked once it is divided by that
 * run's ratio of the two (2x through a whole test on a busy CI machine, 2026-12-07); its lower
 * bound is on the figure itself. A span is checked on its median run never to be more than 20%
 * short, and on the run that measured it shortest to be at most 50% long; work, a sum, is
 * checked to 20% on the median run. The 20 us tree is held
 * to what such a machine keeps (its best span within 10x of 20 us, so a parallelism over
 * 1024 / 10; 15x in the unoptimised address-sanitized build): a sanity bound.
 * bench/profile_shapes checks every shape to 20%, with the spread and the load.
 * The timing checks fail the release build only; a sanitized build runs every shape and checks
 * what does not depend on time (strand counts, answers, the consistency of each profile, the
 * bounds computed from it) and prints the timing checks it misses (see INSTRUMENTED_BUILD).
 * The shapes whose values are checked spin on the CPU-time clock for 2 us or more per strand;
 * fib's work is checked against fib's unprofiled time in the same build. The release build
 * also checks the ordering of the shapes' parallelism (each shape's best run):
 * chain < fan < tree of depth 6 < tree of depth 10.
 *
 * Attempts. Now and then the host takes much more than that for a while: a whole shape's runs at
 * twice their work (the fan at 2 workers, 3.8 ms of work for 1.8, under ThreadSanitizer, while two
 * spinning threads got 1.3 CPUs' worth of time, 2026-12-01). A shape whose timing checks miss is
 * therefore profiled again, up to ATTEMPTS times, and fails only if every attempt misses: a wrong
 * measurement misses every time, a stall of the host rarely twice in a row. Checks that do not
 * depend on time (strand counts, answers, bounds computed from a profile) never get a second
 * attempt.
 */
#include "../src/profile.h"
#include "profile_shapes.h"
#include "test.h"
#include "worksteal.h"

#include <errno.h>
#include <stdbool.h>

/* The address-sanitized build is unoptimised: its join strands take a few hundred ns, not a few
 * ns, and the 20 us tree's ten levels of them count. */
#if defined(__SANITIZE_ADDRESS__)
#define SLOW_STRANDS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLOW_STRANDS 1
#endif
#endif
#ifndef SLOW_STRANDS
#define SLOW_STRANDS 0
#endif

enum { REPS = 5, ATTEMPTS = 3 };
#define US 1000u

/* The attempt at the current shape (1 .. ATTEMPTS), and whether a timing check of it missed. */
static int attempt;
static bool missed;

/* The sanitized builds (WS_SANITIZED): their figures are not the release build's (the empty
 * chain's strands of a few ns cost many times more), and under ThreadSanitizer the timing checks
 * missed in every attempt on 2026-12-01 05:51 UTC, in the build of 31689fa as in the current one,
 * while the release build passed: there they report misses and check only what does not depend
 * on time. */
#if defined(WS_SANITIZED)
#define INSTRUMENTED_BUILD 1
#else
#define INSTRUMENTED_BUILD 0
#endif

/* A timing check: a miss before the last attempt is noted (the shape is profiled again), on the
 * last it fails the test (reported only, in a sanitized build). */
#define EXPECT(cond)                                                                \
    do {                                                                            \
        if (!(cond)) {                                                              \
            if (attempt == ATTEMPTS && !INSTRUMENTED_BUILD)                         \
                ASSERT(cond);                                                       \
            printf("  missed on attempt %d of %d: %s\n", attempt, ATTEMPTS, #cond); \
            missed = true;                                                          \
        }                                                                           \
    } while (0)

/* Loop condition for a shape's attempts: true while another one is wanted. */
static bool another_attempt(void)
{
    if (attempt > 0 && (!missed || attempt == ATTEMPTS))
        return false;
    attempt++;
    missed = false;
    return true;
}

/* Profiles a shape (the body, which uses EXPECT for its timing checks) until its checks hold. */
#define ATTEMPTS_OF(body)                   \
    for (attempt = 0; another_attempt();) { \
        body                                \
    }

typedef struct fib_run {
    shape_fib_arg fib;
    uint64_t cpu_ns; /* the thread CPU time of the whole run */
} fib_run;

/* fib on a 1-worker pool, timed in the worker's CPU time: the program's own work. */
static void timed_fib(void *p)
{
    fib_run *a = p;
    uint64_t t0 = shape_cpu_ns();
    shape_fib(&a->fib);
    a->cpu_ns = shape_cpu_ns() - t0;
}

/* ---- profiling a shape REPS times ---- */

/* Each run's figures, and its work and span divided by how much longer than their CPU time its
 * strands took (shape_spins_since: 1 unless the machine took the CPU away from them). */
typedef struct runs {
    ws_profile last;
    double work[REPS], span[REPS], par[REPS];
    double slowdown[REPS], cpu_work[REPS], cpu_span[REPS];
} runs;

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v)
{
    double s[REPS];
    memcpy(s, v, sizeof s);
    qsort(s, REPS, sizeof s[0], compare_double);
    return s[REPS / 2];
}

static double lowest(const double *v)
{
    double m = v[0];
    for (int i = 1; i < REPS; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

static double highest(const double *v)
{
    double m = v[0];
    for (int i = 1; i < REPS; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

static void check_consistent(const ws_profile *p)
{
    ASSERT(p->work_s > 0);
    ASSERT(p->span_s > 0);
    ASSERT(p->work_s >= p->span_s * 0.999);
    ASSERT(p->burdened_span_s >= p->span_s * 0.999);
    ASSERT(p->parallelism >= 0.99);
    ASSERT(p->strands > 0);
    ASSERT(p->overhead_per_strand_s > 0);
    ASSERT(p->overhead_per_strand_s < 100e-6);
    /* A strand's stall-free length is at most its raw length plus the detector's band of two
     * quanta of the clock (src/profile.c), so the stall-free figures exceed the raw ones by at
     * most that much per strand. */
    double band_s = 2 * ws__prof_quantum_ns() * 1e-9 * (double)p->strands;
    ASSERT(p->stall_free_work_s <= p->work_s + band_s);
    ASSERT(p->stall_free_span_s <= p->span_s + band_s);
    ASSERT(p->stall_free_span_s <= p->stall_free_work_s * 1.001);
    ASSERT(p->stalls <= p->strands);
}

static void profile_runs(ws_pool *pool, ws_fn fn, void *arg, const char *name, runs *r)
{
    for (int i = 0; i < REPS; i++) {
        shape_spins before = shape_spins_now();
        ASSERT_OK(ws_pool_profile(pool, fn, arg, &r->last));
        const ws_profile *p = &r->last;
        check_consistent(p);
        r->work[i] = p->work_s;
        r->span[i] = p->span_s;
        r->par[i] = p->parallelism;
        r->slowdown[i] = shape_spins_since(before);
        r->cpu_work[i] = p->work_s / r->slowdown[i];
        r->cpu_span[i] = p->span_s / r->slowdown[i];
    }
    printf("%-24s work %9.3f ms  span %9.2f us (best %9.2f)  parallelism %8.2f (best %8.2f)  "
           "strands %" PRIu64 "  overhead %.0f ns/strand  wall/CPU %.2f\n",
           name, median(r->work) * 1e3, median(r->span) * 1e6, lowest(r->span) * 1e6,
           median(r->par), highest(r->par), r->last.strands, r->last.overhead_per_strand_s * 1e9,
           median(r->slowdown));
}

/* The work of the median run within `tolerance` of its expected CPU time: never short of it,
 * and never longer once the time the machine took from the strands is taken off. */
static bool work_near(const runs *r, double expected, double tolerance)
{
    return median(r->work) >= expected * (1 - tolerance) &&
           median(r->cpu_work) <= expected * (1 + tolerance);
}

/* Spans of REPS runs: the median never more than 20% short, and the shortest at most `over`
 * long. The machine adds time to a run more often than it takes any away, so the shortest run
 * is the one to hold to its length; but on a virtual machine the CPU-time clock that takes out
 * a preemption also hands back stolen time late, which made one strand of 400 us measure
 * 308 us in one run of eighteen under heavy load (docs/profiling.md), so the lower bound is on
 * the median. */
static bool spans_near(const runs *r, double expected, double over)
{
    return median(r->span) >= expected * 0.8 && lowest(r->cpu_span) <= expected * (1 + over);
}

/* How much a span of hundreds of us may gain on the shortest of REPS runs: 20% on this machine
 * loaded by other builds, 22% seen with two copies of this test running at once, so 50%. */
#define SPAN_OVER 0.5

/* The parallelism of each shape, for the ordering check: its best run, as the span checks hold
 * the shortest span. A host that takes the CPU away lengthens a run's span (at a busy moment
 * of CI, the depth-6 tree's median parallelism was 2.7, under the fan's 4.5, while its best
 * run had 15.3). */
typedef struct shape_parallelism {
    double chain2000, fan, tree6, tree10;
} shape_parallelism;

static void test_chains(ws_pool *pool, shape_parallelism *sp)
{
    runs r;
    shape_chain_arg empty = {2000, 0};
    ATTEMPTS_OF({
        profile_runs(pool, shape_chain, &empty, "chain of 2000, no work", &r);
        sp->chain2000 = highest(r.par);
        /* 6001 strands of a few ns: tens of us in all (up to 0.7 ms when the 2000 levels'
         * stack is touched for the first time). Each level has three strands, two of them on
         * the path, so the parallelism lies between 1 (free siblings) and 1.5 (strands of equal
         * cost; 1.53 seen, from noise of a ns), and says nothing: the tight bound is on the
         * chain below, and here only the work is checked (a clock read per strand made it over
         * 4 ms). */
        if (!INSTRUMENTED_BUILD)
            EXPECT(median(r.work) < 2e-3);
    })

    shape_chain_arg small = {2000, 2 * US};
    ATTEMPTS_OF({
        profile_runs(pool, shape_chain, &small, "chain of 2000 x 2 us", &r);
        EXPECT(median(r.par) < 1.1); /* a 0.7 us clock read per strand: 3.4 / 2.7 = 1.26 */
    })

    shape_chain_arg coarse = {50, 100 * US};
    ATTEMPTS_OF({
        profile_runs(pool, shape_chain, &coarse, "chain of 50 x 100 us", &r);
        ASSERT_EQ(r.last.strands, 151); /* 51 levels, the last of which joins nothing */
        EXPECT(median(r.par) < 1.2);
        EXPECT(work_near(&r, 51 * coarse.strand_ns * 1e-9, 0.2));
    })
}

static void test_tree6(ws_pool *pool, ws_fn fn, const char *name, shape_parallelism *sp)
{
    shape_tree_arg t = {6, 100 * US, 100 * US};
    double expected = 127.0 / 7; /* (2^7 - 1) / 7 */
    runs r;
    ATTEMPTS_OF({
        profile_runs(pool, fn, &t, name, &r);
        sp->tree6 = highest(r.par);
        EXPECT(work_near(&r, 127 * 100e-6, 0.2));
        EXPECT(spans_near(&r, 7 * 100e-6, SPAN_OVER));
        EXPECT(highest(r.par) >= expected / (1 + SPAN_OVER));
        EXPECT(median(r.par) <= expected * 1.25);
    })
    /* The bounds of the last profile: min(P, parallelism), and the burdened estimate below. */
    const ws_profile *p = &r.last;
    for (unsigned workers = 1; workers <= 64; workers *= 2) {
        double bound = ws_profile_speedup_bound(p, workers);
        ASSERT(bound == (workers < p->parallelism ? (double)workers : p->parallelism));
        ASSERT(ws_profile_burdened_speedup(p, workers) <= bound * 1.0001);
    }
}

static void test_fan(ws_pool *pool, shape_parallelism *sp)
{
    runs r;
    double step = SHAPE_FAN_STEP_NS * 1e-9;
    ATTEMPTS_OF({
        profile_runs(pool, shape_fan, NULL, "fan of 8, 50..400 us", &r);
        sp->fan = highest(r.par);
        EXPECT(work_near(&r, SHAPE_FAN * (SHAPE_FAN + 1) / 2 * step, 0.2));
        EXPECT(spans_near(&r, SHAPE_FAN * step, SPAN_OVER));
    })
}

static void test_tree10(ws_pool *pool, shape_parallelism *sp)
{
    shape_tree_arg t = {10, 0, 20 * US};
    double leaves_s = 1024 * 20e-6;
    runs r;
    double factor = SLOW_STRANDS ? 15 : 10;
    ATTEMPTS_OF({
        profile_runs(pool, shape_tree_join, &t, "tree d=10, 20 us leaves", &r);
        sp->tree10 = highest(r.par);
        /* The work is the leaves' (the inner strands add tens of us in all). */
        EXPECT(median(r.work) >= leaves_s * 0.95);
        EXPECT(median(r.cpu_work) <= leaves_s * 1.5);
        /* T-infinity is one leaf and 10 levels of joins: about 20 us. */
        EXPECT(median(r.span) >= 20e-6 * 0.8);
        EXPECT(lowest(r.cpu_span) <= 20e-6 * factor);
        EXPECT(highest(r.par) >= 1024 / factor);
    })
}

/* The program's own CPU time for fib(25): the median of a few unprofiled runs on one worker. */
static uint64_t fib_reference(void)
{
    ws_pool *pool;
    ws_config cfg = {.workers = 1};
    ASSERT_OK(ws_pool_create(&pool, &cfg));
    double cpu_ns[REPS];
    for (int i = 0; i < REPS; i++) {
        fib_run a = {{25, 0}, 0};
        ASSERT_OK(ws_pool_run(pool, timed_fib, &a));
        ASSERT_EQ(a.fib.r, 75025);
        cpu_ns[i] = (double)a.cpu_ns;
    }
    ws_pool_destroy(pool);
    return (uint64_t)median(cpu_ns);
}

static void test_fib(ws_pool *pool)
{
    shape_fib_arg a = {25, 0};
    runs r;
    ATTEMPTS_OF({
        /* The reference in the same attempt: a slow spell of the host falls on both. */
        uint64_t serial_cpu_ns = fib_reference();
        profile_runs(pool, shape_fib, &a, "fib(25)", &r);
        ASSERT_EQ(a.r, 75025);
        ASSERT_EQ(r.last.strands, 364177); /* 121392 joins x 2 strands + 121393 leaves */
        /* The work is the program's own time; a clock read per strand would make it 100x that.
         * The profiled joins take the general path, slower than the fast path the reference
         * ran. */
        double ratio = median(r.work) / (serial_cpu_ns * 1e-9);
        printf("  fib(25) work / its unprofiled CPU time (%.3f ms) = %.2f\n", serial_cpu_ns * 1e-6,
               ratio);
        EXPECT(ratio < 8);
    })
}

/* A group job is no part of the DAG (profile_shapes.h). One submitted inside a join's first half
 * is pushed on the worker's deque above the second half, so the join runs it while it waits for
 * that half, or a thief does; either way its time and its own joins must not reach the joining
 * frame, and neither must the frame's ws_group_wait (waiting while a thief runs the job, or
 * running the job itself). */
static void test_group_job_unmeasured(ws_pool *pool)
{
    ws_fn roots[] = {shape_join_over_group_job, shape_wait_for_group_job};
    for (int i = 0; i < 2 * REPS; i++) {
        ATTEMPTS_OF({
            shape_group_ctx g;
            ws_group_init(&g.group, pool);
            ws_profile p;
            ASSERT_OK(ws_pool_profile(pool, roots[i % 2], &g, &p));
            ASSERT_OK(g.err);
            check_consistent(&p);
            EXPECT(p.work_s < 1e-3); /* the job spins 2 ms */
        })
    }
}

/* While a profile runs, a second one on the same pool is refused. */
typedef struct nested {
    ws_pool *pool;
    int err;
} nested;

static void profile_from_inside(void *p)
{
    nested *x = p;
    ws_profile q;
    x->err = ws_pool_profile(x->pool, shape_nothing, NULL, &q);
}

static void test_errors(ws_pool *pool)
{
    ASSERT_EQ(ws_pool_profile(pool, shape_nothing, NULL, NULL), EINVAL);
    nested x = {pool, 0};
    ws_profile p;
    ASSERT_OK(ws_pool_profile(pool, profile_from_inside, &x, &p));
    ASSERT_EQ(x.err, EINVAL); /* from a task of the pool itself */
    /* After profiling, the pool runs normally, and its joins are fast again. */
    shape_fib_arg a = {20, 0};
    ASSERT_OK(ws_pool_run(pool, shape_fib, &a));
    ASSERT_EQ(a.r, 6765);
}

int main(void)
{
    shape_spins_counted = true;
    unsigned counts[] = {1, 2, 4};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        printf("--- %u workers\n", counts[i]);
        ws_pool *pool;
        ws_config cfg = {.workers = counts[i]};
        ASSERT_OK(ws_pool_create(&pool, &cfg));
        shape_parallelism sp;
        test_chains(pool, &sp);
        test_tree6(pool, shape_tree_join, "tree d=6 of joins", &sp);
        test_tree6(pool, shape_tree_spawn, "tree d=6 of spawns", &sp);
        test_fan(pool, &sp);
        test_tree10(pool, &sp);
        test_fib(pool);
        /* Known ratios of about 1 : 4.5 : 18 : 1000, far apart enough for any machine. */
        if (!INSTRUMENTED_BUILD) {
            ASSERT(sp.chain2000 < sp.fan);
            ASSERT(sp.fan < sp.tree6);
            ASSERT(sp.tree6 < sp.tree10);
        }
        test_group_job_unmeasured(pool);
        test_errors(pool);
        ws_pool_destroy(pool);
    }
    return 0;
}
