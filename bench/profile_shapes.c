/* profile_shapes: ws_pool_profile on computations whose span is known, against that span.
 *
 *   profile_shapes [REPS]        (default 11; --quick: 3)
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

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    *low = *high = p->work_s; /* the empty siblings are a few ns each */
}

static void tree_span(const ws_profile *p, double *low, double *high)
{
    /* A leaf and TREE_DEPTH levels of two join strands of tens of ns: under 21 us. */
    (void)p;
    *low = LEAF_NS * 1e-9;
    *high = *low + 2 * TREE_DEPTH * 50e-9;
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
    *low = p->work_s / par_high;
    *high = p->work_s / par_low;
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
    bool ok = span != NULL && par != NULL && low != NULL && high != NULL;
    ws_profile p = {0};
    for (int i = 0; ok && i < reps; i++) {
        ok = ws_pool_profile(pool, s->fn, s->arg, &p) == 0;
        span[i] = p.span_s;
        par[i] = p.parallelism;
        s->expected_span(&p, &low[i], &high[i]);
    }
    ws_pool_destroy(pool);
    if (ok) {
        qsort(span, (size_t)reps, sizeof *span, compare_double);
        qsort(par, (size_t)reps, sizeof *par, compare_double);
        qsort(low, (size_t)reps, sizeof *low, compare_double);
        qsort(high, (size_t)reps, sizeof *high, compare_double);
        double m = span[reps / 2], lo = low[reps / 2], hi = high[reps / 2];
        bool pass = m >= lo * 0.8 && m <= hi * 1.2;
        printf("%-6s %u  span %9.2f us [%9.2f .. %9.2f]  expected %9.2f", s->name, workers, m * 1e6,
               span[0] * 1e6, span[reps - 1] * 1e6, lo * 1e6);
        if (hi > lo)
            printf("..%.2f", hi * 1e6);
        printf(" us  parallelism %8.2f [%8.2f .. %8.2f]  overhead %3.0f ns/strand  %s\n",
               par[reps / 2], par[0], par[reps - 1], p.overhead_per_strand_s * 1e9,
               pass ? "PASS" : "MISS");
    }
    free(span);
    free(par);
    free(low);
    free(high);
    return ok;
}

int main(int argc, char **argv)
{
    int reps = 11;
    if (argc > 1)
        reps = strcmp(argv[1], "--quick") == 0 ? 3 : atoi(argv[1]);
    if (reps < 1) {
        fprintf(stderr, "usage: profile_shapes [REPS | --quick]\n");
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
