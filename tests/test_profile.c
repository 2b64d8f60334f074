/* test_profile: work and span measurement on computations of known shape.
 *
 * Strands are busy-waits until the thread has used a set amount of CPU time; the profiler
 * times strands in thread CPU time too, so preemption by other programs changes neither. Each
 * shape is still profiled five times and the median checked, against the remaining noise
 * (migrations, cache misses). The checks are on ratios of measured quantities with wide
 * margins, never on how fast anything ran.
 *
 *  1. A serial chain: each level works, then joins the next level with an empty function.
 *     Nothing runs in parallel: parallelism close to 1.
 *  2. A balanced binary tree of depth d: every node works w before forking its two subtrees.
 *     T1 = (2^(d+1) - 1) w and T-infinity = (d + 1) w, so parallelism = (2^(d+1) - 1) / (d + 1).
 *  3. The same tree with ws_spawn/ws_sync instead of ws_join gives the same figures.
 *  4. fib's parallelism grows with n.
 *  5. Consistency: work >= span, burdened span >= span, elapsed >= span; the bounds of
 *     ws_profile_speedup_bound; EBUSY/EINVAL cases.
 */
#include "test.h"
#include "worksteal.h"

#include <errno.h>
#include <time.h>

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Works until the thread has used ns of CPU time. */
static void work_for(uint64_t ns)
{
    uint64_t end = cpu_ns() + ns;
    while (cpu_ns() < end) {
    }
}

static void nothing(void *arg)
{
    (void)arg;
}

#define STRAND_NS                                                              \
    100000u /* 100 us: long against the clock's and the runtime's overheads (a \
             * CPU-time clock read is a system call, ~0.4 us, more under load) */

/* ---- 1: a serial chain ---- */

static void chain(void *p)
{
    int n = *(int *)p;
    work_for(STRAND_NS);
    if (n == 0)
        return;
    int m = n - 1;
    ws_join(chain, &m, nothing, NULL);
}

/* ---- 2, 3: a balanced tree ---- */

static void tree_join(void *p)
{
    int d = *(int *)p;
    work_for(STRAND_NS);
    if (d == 0)
        return;
    int c = d - 1;
    ws_join(tree_join, &c, tree_join, &c);
}

static void tree_spawn(void *p)
{
    int d = *(int *)p;
    work_for(STRAND_NS);
    if (d == 0)
        return;
    int c = d - 1;
    ws_task left, right;
    ws_spawn(&left, tree_spawn, &c);
    ws_spawn(&right, tree_spawn, &c);
    ws_sync(&right);
    ws_sync(&left);
}

/* ---- 4: fib ---- */

typedef struct fib_arg {
    int n;
    long r;
} fib_arg;

static void fib(void *p)
{
    fib_arg *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return;
    }
    fib_arg x = {a->n - 1, 0}, y = {a->n - 2, 0};
    ws_join(fib, &x, fib, &y);
    a->r = x.r + y.r;
}

static void check_consistent(const ws_profile *p)
{
    ASSERT(p->work_s > 0);
    ASSERT(p->span_s > 0);
    ASSERT(p->work_s >= p->span_s * 0.999);
    ASSERT(p->burdened_span_s >= p->span_s * 0.999);
    ASSERT(p->elapsed_s >= p->span_s * 0.9);
    ASSERT(p->parallelism >= 0.99);
    ASSERT(p->strands > 0);
}

static void print_profile(const char *what, const ws_profile *p)
{
    printf("%-22s work %.6f s  span %.6f s  parallelism %8.2f  burdened span %.6f s  "
           "elapsed %.6f s  strands %" PRIu64 "  steals %" PRIu64 "\n",
           what, p->work_s, p->span_s, p->parallelism, p->burdened_span_s, p->elapsed_s, p->strands,
           p->steals);
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Profiles fn(arg) five times; returns the median parallelism, *last gets the last profile. */
static double median_parallelism(ws_pool *pool, ws_fn fn, void *arg, const char *name,
                                 ws_profile *last)
{
    double par[5];
    for (int i = 0; i < 5; i++) {
        ASSERT_OK(ws_pool_profile(pool, fn, arg, last));
        print_profile(name, last);
        check_consistent(last);
        par[i] = last->parallelism;
    }
    qsort(par, 5, sizeof par[0], compare_double);
    return par[2];
}

static void test_chain(ws_pool *pool)
{
    int n = 50;
    ws_profile p;
    ASSERT(median_parallelism(pool, chain, &n, "chain of 50", &p) < 1.3);
    /* 51 strands of 20 us: the work is at least that. */
    ASSERT(p.work_s >= 51 * STRAND_NS * 1e-9 * 0.999);
}

static void test_tree(ws_pool *pool, ws_fn fn, const char *name)
{
    int d = 6;
    double expected = (double)((1 << (d + 1)) - 1) / (d + 1); /* 127 / 7 = 18.1 */
    ws_profile p;
    double median = median_parallelism(pool, fn, &d, name, &p);
    printf("  median parallelism %.2f, expected %.2f\n", median, expected);
    ASSERT(median > expected * 0.75);
    ASSERT(median < expected * 1.25);
    /* The bounds of the last profile: min(P, parallelism), and the burdened estimate below. */
    for (unsigned workers = 1; workers <= 64; workers *= 2) {
        double bound = ws_profile_speedup_bound(&p, workers);
        ASSERT(bound == (workers < p.parallelism ? (double)workers : p.parallelism));
        ASSERT(ws_profile_burdened_speedup(&p, workers) <= bound * 1.0001);
    }
}

static void test_fib_grows(ws_pool *pool)
{
    double last = 0;
    for (int n = 8; n <= 20; n += 6) {
        fib_arg a = {n, 0};
        ws_profile p;
        char name[32];
        snprintf(name, sizeof name, "fib(%d)", n);
        double median = median_parallelism(pool, fib, &a, name, &p);
        ASSERT_EQ(a.r, n == 8 ? 21 : n == 14 ? 377 : 6765);
        ASSERT(median > last);
        last = median;
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
    x->err = ws_pool_profile(x->pool, nothing, NULL, &q);
}

static void test_errors(ws_pool *pool)
{
    ASSERT_EQ(ws_pool_profile(pool, nothing, NULL, NULL), EINVAL);
    nested x = {pool, 0};
    ws_profile p;
    ASSERT_OK(ws_pool_profile(pool, profile_from_inside, &x, &p));
    ASSERT_EQ(x.err, EINVAL); /* from a task of the pool itself */
    /* After profiling, the pool runs normally, and its joins are fast again. */
    fib_arg a = {20, 0};
    ASSERT_OK(ws_pool_run(pool, fib, &a));
    ASSERT_EQ(a.r, 6765);
}

int main(void)
{
    unsigned counts[] = {1, 2, 4};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        printf("--- %u workers\n", counts[i]);
        ws_pool *pool;
        ws_config cfg = {.workers = counts[i]};
        ASSERT_OK(ws_pool_create(&pool, &cfg));
        test_chain(pool);
        test_tree(pool, tree_join, "tree of joins, d=6");
        test_tree(pool, tree_spawn, "tree of spawns, d=6");
        test_fib_grows(pool);
        test_errors(pool);
        ws_pool_destroy(pool);
    }
    return 0;
}
