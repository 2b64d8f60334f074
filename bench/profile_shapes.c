/* profile_shapes: ws_pool_profile on computations whose span is known, against that span.
 *
 *   profile_shapes [REPS]        (default 11; --quick: 3)
 *   profile_shapes --leaves [REPS [work]]
 *   profile_shapes --gaps [SECONDS]
 *
 * --leaves profiles the tree below on 1 worker REPS times (default 5), each leaf also timing
 * itself with the monotonic clock and the thread's CPU-time clock, and prints the leaves' times
 * (median, 99th percentile, slowest, how many took over 24 us) beside the measured span: the
 * span is a maximum over the 1024 paths, so it is as long as the slowest leaf. With `work`, the
 * leaves run a fixed loop instead (as many iterations as take 20 us at best, calibrated first):
 * a fixed amount of work rather than an amount of the thread's CPU time.
 *
 * --gaps spins for SECONDS (default 3) reading the monotonic clock, and counts the moments the
 * thread did not run for over 5 us (the machine took the CPU: an interrupt, a preemption, the
 * hypervisor). After each, it reads the thread's CPU-time clock: a gap the thread was charged
 * for as CPU time (more than half of it) is one that no clock of the thread can tell from a
 * strand's work; the others are off-CPU time, which the profiler takes out of a strand.
 *
 * For each shape and 1, 2 and 4 workers, profiles REPS times and prints the median span and
 * parallelism with their spread (lowest and highest run), the expected figures, and PASS when
 * the median span is within 20% of the expected one (MISS otherwise). The load average is
 * printed first: on a machine where other programs run, the span, a maximum over paths, picks up
 * the time the machine charged to whichever strand it disturbed (docs/profiling.md), and short
 * spans miss for that reason. The exit status is 0 unless a run failed: misses are figures, not
 * errors. The shapes (strands that do work spin on the thread's CPU-time clock):
 *   chain   2000 joins, each with an empty sibling, no work: parallelism 1, span = work.
 *   tree    balanced, depth 10, 1024 leaves of 20 us: span = a leaf + 10 levels of join strands
 *           (tens of ns each), parallelism = 1024 x 20 us / span, about 1000.
 *   fan     8 spawned children of 50..400 us: span 400 us, parallelism 4.5.
 *   fib     fib(25), a join per call: if every call's strands cost c_i (inner calls, two strands)
 *           and c_l <= c_i (leaves), T1 = 121392 c_i + 121393 c_l and the critical path
 *           fib(25), fib(24), ..., fib(2), fib(1) is 24 c_i + c_l, so the parallelism is
 *           between 121392 / 24 = 5058 and 242785 / 25 = 9711, growing like phi^n / n.
 */
#include "../tests/profile_shapes.h"
#include "worksteal.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TREE_DEPTH = 10, LEAF_NS = 20000, FIB_N = 25 };

typedef struct shape {
    const char *name;
    ws_fn fn;
    void *arg;
    /* The expected span from this run's work and strands (a range: low, high). */
    void (*expected_span)(const ws_profile *p, double *low, double *high);
} shape;

static void chain_span(const ws_profile *p, double *low, double *high)
{
    *low = *high = p->stall_free_work_s; /* the empty siblings are a few ns each */
}

static void tree_span(const ws_profile *p, double *low, double *high)
{
    /* A leaf, which spins past its 20 us by up to two reads of the CPU-time clock (0.7 us
     * each), and TREE_DEPTH levels of two join strands of tens of ns: under 22.5 us. */
    (void)p;
    *low = LEAF_NS * 1e-9;
    *high = *low + 1.5e-6 + 2 * TREE_DEPTH * 50e-9;
}

static void fan_span(const ws_profile *p, double *low, double *high)
{
    (void)p;
    *low = *high = SHAPE_FAN * SHAPE_FAN_STEP_NS * 1e-9;
}

static void fib_span(const ws_profile *p, double *low, double *high)
{
    double par_low, par_high;
    shape_fib_parallelism(FIB_N, &par_low, &par_high);
    *low = p->stall_free_work_s / par_high;
    *high = p->stall_free_work_s / par_low;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void print_load(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    char line[128] = "unknown";
    if (f != NULL) {
        if (fgets(line, sizeof line, f) == NULL)
            snprintf(line, sizeof line, "unknown\n");
        fclose(f);
    }
    printf("load average (1, 5, 15 min; runnable/threads): %s", line);
}

/* Profiles s reps times on a pool of `workers`; prints one line. False if a run failed. */
static bool run_shape(const shape *s, unsigned workers, int reps)
{
    ws_pool *pool;
    ws_config cfg = {.workers = workers};
    if (ws_pool_create(&pool, &cfg) != 0)
        return false;
    double *span = calloc((size_t)reps, sizeof *span), *par = calloc((size_t)reps, sizeof *par);
    double *low = calloc((size_t)reps, sizeof *low), *high = calloc((size_t)reps, sizeof *high);
    double *free_span = calloc((size_t)reps, sizeof *free_span);
    bool ok = span != NULL && par != NULL && low != NULL && high != NULL && free_span != NULL;
    ws_profile p = {0};
    uint64_t stalls = 0;
    for (int i = 0; ok && i < reps; i++) {
        ok = ws_pool_profile(pool, s->fn, s->arg, &p) == 0;
        span[i] = p.span_s;
        par[i] = p.parallelism;
        free_span[i] = p.stall_free_span_s;
        stalls += p.stalls;
        s->expected_span(&p, &low[i], &high[i]);
    }
    ws_pool_destroy(pool);
    if (ok) {
        qsort(span, (size_t)reps, sizeof *span, compare_double);
        qsort(par, (size_t)reps, sizeof *par, compare_double);
        qsort(low, (size_t)reps, sizeof *low, compare_double);
        qsort(high, (size_t)reps, sizeof *high, compare_double);
        qsort(free_span, (size_t)reps, sizeof *free_span, compare_double);
        double m = span[reps / 2], lo = low[reps / 2], hi = high[reps / 2];
        double fm = free_span[reps / 2];
        bool pass = m >= lo * 0.8 && m <= hi * 1.2, free_pass = fm >= lo * 0.8 && fm <= hi * 1.2;
        printf("%-6s %u  span %9.2f us [%9.2f .. %9.2f] %s  stall-free %9.2f us [%9.2f .. %9.2f] "
               "%s  expected %9.2f",
               s->name, workers, m * 1e6, span[0] * 1e6, span[reps - 1] * 1e6,
               pass ? "PASS" : "MISS", fm * 1e6, free_span[0] * 1e6, free_span[reps - 1] * 1e6,
               free_pass ? "PASS" : "MISS", lo * 1e6);
        if (hi > lo)
            printf("..%.2f", hi * 1e6);
        printf(" us  parallelism %8.2f [%8.2f .. %8.2f]  stalls %5.1f/run  overhead %3.0f "
               "ns/strand\n",
               par[reps / 2], par[0], par[reps - 1], (double)stalls / reps,
               p.overhead_per_strand_s * 1e9);
    }
    free(free_span);
    free(span);
    free(par);
    free(low);
    free(high);
    return ok;
}

/* --leaves: the tree of shape_tree_join, with leaves that time themselves. */
enum { LEAVES = 1 << TREE_DEPTH };
static double leaf_wall_s[LEAVES], leaf_cpu_s[LEAVES];
static atomic_int leaves_done;
static uint64_t leaf_iterations; /* 0: the leaves spin on the CPU-time clock instead */
static _Thread_local volatile uint64_t leaf_sink;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fixed_work(uint64_t iterations)
{
    uint64_t x = 1;
    for (uint64_t i = 0; i < iterations; i++)
        x = x * 6364136223846793005u + 1442695040888963407u; /* a dependent chain */
    leaf_sink = x;
}

/* Sets leaf_iterations to what takes LEAF_NS at best. */
static void calibrate_fixed_work(void)
{
    enum { PROBE = 100000 };
    double best = 1;
    for (int i = 0; i < 50; i++) {
        double t0 = now_s();
        fixed_work(PROBE);
        double t = now_s() - t0;
        best = t < best ? t : best;
    }
    leaf_iterations = (uint64_t)(PROBE * (LEAF_NS * 1e-9) / best);
}

static void timed_tree(void *p)
{
    int depth = *(const int *)p;
    if (depth > 0) {
        int child = depth - 1;
        ws_join(timed_tree, &child, timed_tree, &child);
        return;
    }
    double t0 = now_s();
    uint64_t c0 = shape_cpu_ns();
    if (leaf_iterations > 0)
        fixed_work(leaf_iterations);
    else
        shape_work_for(LEAF_NS);
    uint64_t c1 = shape_cpu_ns();
    double t1 = now_s();
    int i = atomic_fetch_add_explicit(&leaves_done, 1, memory_order_relaxed);
    if (i < LEAVES) {
        leaf_wall_s[i] = t1 - t0;
        leaf_cpu_s[i] = (double)(c1 - c0) * 1e-9;
    }
}

/* "median  99th percentile  slowest  over 24 us" of n sorted times, in us. */
static void print_times(const char *name, double *t, int n)
{
    qsort(t, (size_t)n, sizeof t[0], compare_double);
    int slow = 0;
    for (int i = 0; i < n; i++)
        slow += t[i] > 1.2 * LEAF_NS * 1e-9;
    printf("%s %6.2f %8.2f %8.2f %4d", name, t[n / 2] * 1e6, t[n * 99 / 100] * 1e6, t[n - 1] * 1e6,
           slow);
}

static bool run_leaves(int reps, bool fixed)
{
    if (fixed)
        calibrate_fixed_work();
    ws_pool *pool;
    ws_config cfg = {.workers = 1};
    if (ws_pool_create(&pool, &cfg) != 0)
        return false;
    print_load();
    printf("tree of depth %d, 1 worker, leaves %s: the leaves' times (median, 99th percentile, "
           "slowest, how many over 24 us; in us) against the span\n",
           TREE_DEPTH, fixed ? "of fixed work" : "spinning for 20 us of CPU time");
    bool ok = true;
    for (int r = 0; ok && r < reps; r++) {
        int depth = TREE_DEPTH;
        ws_profile p;
        atomic_store(&leaves_done, 0);
        ok = ws_pool_profile(pool, timed_tree, &depth, &p) == 0 &&
             atomic_load(&leaves_done) == LEAVES;
        if (!ok)
            break;
        print_times("wall", leaf_wall_s, LEAVES);
        print_times(" | CPU", leaf_cpu_s, LEAVES);
        printf(" | span %8.2f\n", p.span_s * 1e6);
    }
    ws_pool_destroy(pool);
    return ok;
}

/* --gaps: the interruptions a spinning thread sees, and whether its CPU time counts them. */
static void run_gaps(double seconds)
{
    enum { GAP_NS = 5000, MAX_GAPS = 1 << 16 };
    static double charged[MAX_GAPS], off_cpu[MAX_GAPS];
    int n_charged = 0, n_off = 0;
    print_load();
    double start = now_s(), last = start, sync_wall = start;
    uint64_t sync_cpu = shape_cpu_ns();
    while (last - start < seconds) {
        double t = now_s();
        if (t - last > GAP_NS * 1e-9) {
            uint64_t cpu = shape_cpu_ns();
            double wall = now_s();
            double gap = t - last;
            double off = (wall - sync_wall) - (double)(cpu - sync_cpu) * 1e-9;
            if (off < gap / 2 && n_charged < MAX_GAPS)
                charged[n_charged++] = gap;
            else if (off >= gap / 2 && n_off < MAX_GAPS)
                off_cpu[n_off++] = gap;
            sync_wall = wall;
            sync_cpu = cpu;
            t = now_s();
        }
        last = t;
    }
    printf("%.1f s spinning: gaps over 5 us (median, 99th percentile, longest, in us)\n", seconds);
    printf("charged as CPU time %6d (%6.1f per s):", n_charged, n_charged / seconds);
    if (n_charged > 0) {
        qsort(charged, (size_t)n_charged, sizeof charged[0], compare_double);
        printf(" %8.1f %8.1f %8.1f", charged[n_charged / 2] * 1e6,
               charged[n_charged * 99 / 100] * 1e6, charged[n_charged - 1] * 1e6);
    }
    printf("\noff the CPU         %6d (%6.1f per s):", n_off, n_off / seconds);
    if (n_off > 0) {
        qsort(off_cpu, (size_t)n_off, sizeof off_cpu[0], compare_double);
        printf(" %8.1f %8.1f %8.1f", off_cpu[n_off / 2] * 1e6, off_cpu[n_off * 99 / 100] * 1e6,
               off_cpu[n_off - 1] * 1e6);
    }
    printf("\n");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--gaps") == 0) {
        run_gaps(argc > 2 ? atof(argv[2]) : 3);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--leaves") == 0)
        return run_leaves(argc > 2 ? atoi(argv[2]) : 5, argc > 3 && strcmp(argv[3], "work") == 0)
                   ? 0
                   : 1;
    int reps = 11;
    if (argc > 1)
        reps = strcmp(argv[1], "--quick") == 0 ? 3 : atoi(argv[1]);
    if (reps < 1) {
        fprintf(stderr, "usage: profile_shapes [REPS | --quick | --leaves [REPS [work]] | "
                        "--gaps [SECONDS]]\n");
        return 2;
    }
    shape_chain_arg chain = {2000, 0};
    shape_tree_arg tree = {TREE_DEPTH, 0, LEAF_NS};
    shape_fib_arg fib = {FIB_N, 0};
    shape shapes[] = {
        {"chain", shape_chain, &chain, chain_span},
        {"tree", shape_tree_join, &tree, tree_span},
        {"fan", shape_fan, NULL, fan_span},
        {"fib", shape_fib, &fib, fib_span},
    };
    print_load();
    printf("median of %d profiles [lowest .. highest]; PASS: median span within 20%% of the "
           "expected\n",
           reps);
    bool ok = true;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (unsigned workers = 1; workers <= 4; workers *= 2)
            ok &= run_shape(&shapes[i], workers, reps);
    print_load();
    return ok ? 0 : 1;
}
