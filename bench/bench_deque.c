/* bench_deque.c: the lock-free Chase-Lev deque against the mutex baseline.
 *
 *   bench_deque [--quick] [--runs N] [--csv FILE]
 *
 * Four measurements, each the median of several runs after one warm-up run:
 *   1. push+pop pairs by the owner with one older item left in the deque, so that pop takes
 *      its common path (one locked instruction, no CAS): ns per pair.
 *   2. push+pop pairs on an otherwise empty deque, so that every pop is the last-item case
 *      and settles it with a CAS on top: ns per pair.
 *   3. steal throughput: the owner pushes while one thief steals, with the backlog bounded so
 *      that the deque does not grow without end: millions of items moved per second.
 *   4. the same steal run through the workers' split deque (no locked counterpart).
 * Pairs are timed by the thread's CPU time, steals by the wall clock. The table gives both
 * implementations and the ratio lock-free/locked. --quick is a tiny smoke
 * run (numbers meaningless); --csv also writes the medians to FILE.
 */
#include "atomics.h"
#include "deque.h"
#include "platform.h"

#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------------------------------- */
/* Both implementations behind one table. The generic bodies below are always inlined and
 * called with a constant table, so the compiler turns the indirect calls into direct ones and
 * neither side pays for the abstraction.                                                     */
/* ---------------------------------------------------------------------------------------- */

#if defined(__GNUC__)
#define BENCH_INLINE static inline __attribute__((always_inline))
#else
#define BENCH_INLINE static inline
#endif

typedef struct bench_ops {
    const char *name;
    size_t struct_size;
    int (*init)(void *q, size_t capacity);
    void (*destroy)(void *q);
    int (*push)(void *q, void *item);
    void *(*pop)(void *q);
    void *(*steal)(void *q);
    void (*publish)(void *q); /* NULL, or: make every item stealable (before the owner waits) */
} bench_ops;

static int lf_init(void *q, size_t capacity)
{
    return ws_deque_init(q, capacity);
}
static void lf_destroy(void *q)
{
    ws_deque_destroy(q);
}
static int lk_init(void *q, size_t capacity)
{
    return ws_locked_deque_init(q, capacity);
}
static void lk_destroy(void *q)
{
    ws_locked_deque_destroy(q);
}

/* Adapters from the table's void * deque to each implementation's type. Once a body below is
 * inlined with a constant table, these inline in turn and leave a direct call. */
static int lf_push(void *q, void *item)
{
    return ws_deque_push(q, item);
}
static void *lf_pop(void *q)
{
    return ws_deque_pop(q);
}
static void *lf_steal(void *q)
{
    return ws_deque_steal(q);
}
static int lk_push(void *q, void *item)
{
    return ws_locked_deque_push(q, item);
}
static void *lk_pop(void *q)
{
    return ws_locked_deque_pop(q);
}
static void *lk_steal(void *q)
{
    return ws_locked_deque_steal(q);
}

/* The workers' split deque: push takes the fast path when it fits, as the scheduler's does. */
static int sp_init(void *q, size_t capacity)
{
    return ws_sdeque_init(q, capacity, 0);
}
static void sp_destroy(void *q)
{
    ws_sdeque_destroy(q);
}
static int sp_push(void *q, void *item)
{
    bool published;
    if (!ws__sdeque_fits(q))
        return ws__sdeque_push_slow(q, item, &published) < 0 ? ENOMEM : 0;
    ws__sdeque_push_fitting(q, item);
    return 0;
}
static void *sp_pop(void *q)
{
    return ws__sdeque_pop(q);
}
static void *sp_steal(void *q)
{
    return ws_sdeque_steal(q);
}
static void sp_publish(void *q)
{
    (void)ws__sdeque_publish_all(q);
}

static const bench_ops lockfree_ops = {"lock-free", sizeof(ws_deque), lf_init,  lf_destroy,
                                       lf_push,     lf_pop,           lf_steal, NULL};
static const bench_ops locked_ops = {
    "locked", sizeof(ws_locked_deque), lk_init, lk_destroy, lk_push, lk_pop, lk_steal, NULL};

static const bench_ops split_ops = {"split", sizeof(ws_sdeque), sp_init,   sp_destroy, sp_push,
                                    sp_pop,  sp_steal,          sp_publish};

static void die(const char *what, int err)
{
    fprintf(stderr, "bench_deque: %s: %s\n", what, strerror(err));
    exit(1);
}

static void *deque_new(const bench_ops *ops, size_t capacity)
{
    /* ws_deque wants a WS_CACHE_LINE-aligned address; its size is a multiple of it. */
    size_t size = (ops->struct_size + WS_CACHE_LINE - 1) / WS_CACHE_LINE * WS_CACHE_LINE;
    void *q = aligned_alloc(WS_CACHE_LINE, size);
    if (q == NULL)
        die("aligned_alloc", ENOMEM);
    int err = ops->init(q, capacity);
    if (err != 0)
        die("deque init", err);
    return q;
}

static void deque_free(const bench_ops *ops, void *q)
{
    ops->destroy(q);
    free(q);
}

/* Distinct non-NULL items; the deques never dereference them. */
enum { TOKENS = 4096 };
static char tokens[TOKENS];

/* The pairs run on one thread, so they are timed by that thread's CPU time: on a machine busy
 * with other work, time spent descheduled does not count. The steal run needs both threads
 * running at once and is timed by the wall clock. */
static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return ws__now_ns();
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------------------------------- */
/* 1 and 2: owner push+pop pairs                                                             */
/* ---------------------------------------------------------------------------------------- */

/* ns per push+pop pair over n pairs. With keep_one, an older item stays at the top, so pop
 * never meets the last-item case. */
BENCH_INLINE double pairs_body(const bench_ops *ops, uint64_t n, bool keep_one)
{
    void *q = deque_new(ops, 64);
    if (keep_one && ops->push(q, &tokens[0]) != 0)
        die("push", ENOMEM);
    uintptr_t check = 0;
    uint64_t t0 = thread_cpu_ns();
    for (uint64_t i = 0; i < n; i++) {
        void *item = &tokens[1 + (i & (TOKENS - 2))];
        if (WS_UNLIKELY(ops->push(q, item) != 0))
            die("push", ENOMEM);
        check += (uintptr_t)ops->pop(q) - (uintptr_t)item; /* 0 if pop returned our item */
    }
    uint64_t t1 = thread_cpu_ns();
    if (check != 0) {
        fprintf(stderr, "bench_deque: %s: pop returned the wrong item\n", ops->name);
        exit(1);
    }
    deque_free(ops, q);
    return (double)(t1 - t0) / (double)n;
}

static double pairs_kept_lockfree(uint64_t n)
{
    return pairs_body(&lockfree_ops, n, true);
}
static double pairs_kept_locked(uint64_t n)
{
    return pairs_body(&locked_ops, n, true);
}
static double pairs_last_lockfree(uint64_t n)
{
    return pairs_body(&lockfree_ops, n, false);
}
static double pairs_last_locked(uint64_t n)
{
    return pairs_body(&locked_ops, n, false);
}

/* As pairs_body with keep_one, through the inline owner operations of deque.h that the
 * scheduler's spawn and join use (the locked deque has no such form). */
static double pairs_inline_lockfree(uint64_t n)
{
    ws_deque *q = deque_new(&lockfree_ops, 64);
    if (ws__deque_push_inline(q, &tokens[0]) < 0)
        die("push", ENOMEM);
    uintptr_t check = 0;
    uint64_t t0 = thread_cpu_ns();
    for (uint64_t i = 0; i < n; i++) {
        void *item = &tokens[1 + (i & (TOKENS - 2))];
        if (WS_UNLIKELY(ws__deque_push_inline(q, item) < 0))
            die("push", ENOMEM);
        check += (uintptr_t)ws__deque_pop_inline(q) - (uintptr_t)item;
    }
    uint64_t t1 = thread_cpu_ns();
    if (check != 0) {
        fprintf(stderr, "bench_deque: inline: pop returned the wrong item\n");
        exit(1);
    }
    deque_free(&lockfree_ops, q);
    return (double)(t1 - t0) / (double)n;
}

/* ---------------------------------------------------------------------------------------- */
/* 3: steal throughput, one owner pushing and one thief stealing                             */
/* ---------------------------------------------------------------------------------------- */

/* The owner stops pushing while more than BACKLOG items wait, so the deque stays within its
 * initial capacity and the run measures moving items, not growing arrays. */
enum { BACKLOG = 1024, STEAL_CAPACITY = 4 * BACKLOG, PUBLISH_EVERY = 64 };

typedef struct steal_run {
    void *q;
    uint64_t n;
    alignas(WS_CACHE_LINE) _Atomic bool go; /* written by the owner, read by the thief */
    /* Items stolen so far, in steps of PUBLISH_EVERY; written by the thief, read by the owner
     * to bound the backlog. */
    alignas(WS_CACHE_LINE) _Atomic uint64_t stolen;
    uint64_t end_ns; /* written by the thief, read by the owner after the join */
} steal_run;

/* A failed wait: pause, and after a while give up the time slice, so that on a loaded machine
 * (or with the other side descheduled) the run does not spin away whole slices. */
static void backoff(unsigned *count)
{
    if (++*count % 256 == 0)
        ws__thread_yield();
    else
        ws__cpu_relax();
}

BENCH_INLINE void thief_body(const bench_ops *ops, steal_run *run)
{
    /* acquire: pairs with the owner's release store of go; the deque is initialised. */
    while (!ws_load_acquire(&run->go))
        ws__cpu_relax();
    uint64_t got = 0;
    unsigned misses = 0;
    while (got < run->n) {
        if (ops->steal(run->q) != NULL) {
            if (++got % PUBLISH_EVERY == 0)
                ws_store_relaxed(&run->stolen, got); /* relaxed: a progress count only */
            misses = 0;
        } else {
            backoff(&misses);
        }
    }
    run->end_ns = ws__now_ns();
}

static void *thief_lockfree(void *arg)
{
    thief_body(&lockfree_ops, arg);
    return NULL;
}
static void *thief_locked(void *arg)
{
    thief_body(&locked_ops, arg);
    return NULL;
}

/* Millions of items per second moved from the owner to the thief. */
BENCH_INLINE double steal_body(const bench_ops *ops, void *(*thief)(void *), uint64_t n)
{
    steal_run *run = aligned_alloc(WS_CACHE_LINE, sizeof(steal_run));
    if (run == NULL)
        die("aligned_alloc", ENOMEM);
    memset(run, 0, sizeof *run);
    run->q = deque_new(ops, STEAL_CAPACITY);
    run->n = n;
    ws_store_relaxed(&run->go, false); /* relaxed: before the thread exists */
    ws_store_relaxed(&run->stolen, 0);
    pthread_t t;
    int err = pthread_create(&t, NULL, thief, run);
    if (err != 0)
        die("pthread_create", err);
    uint64_t t0 = ws__now_ns();
    ws_store_release(&run->go, true); /* release: see the thief's acquire */
    for (uint64_t i = 0; i < n; i++) {
        if (i % PUBLISH_EVERY == 0) {
            /* relaxed: a progress count; a stale value only makes us wait a little longer */
            unsigned waits = 0;
            while (i - ws_load_relaxed(&run->stolen) > BACKLOG) {
                if (ops->publish != NULL)
                    ops->publish(run->q); /* the split deque's private items, as a worker does */
                backoff(&waits);
            }
        }
        if (WS_UNLIKELY(ops->push(run->q, &tokens[i & (TOKENS - 1)]) != 0))
            die("push", ENOMEM);
    }
    if (ops->publish != NULL)
        ops->publish(run->q); /* the thief takes every item */
    pthread_join(t, NULL);
    double seconds = (double)(run->end_ns - t0) * 1e-9;
    deque_free(ops, run->q);
    free(run);
    return (double)n / seconds / 1e6;
}

static void *thief_split(void *arg)
{
    thief_body(&split_ops, arg);
    return NULL;
}

static double steal_lockfree(uint64_t n)
{
    return steal_body(&lockfree_ops, thief_lockfree, n);
}
static double steal_locked(uint64_t n)
{
    return steal_body(&locked_ops, thief_locked, n);
}
/* The same with the workers' split deque (no locked counterpart: the row has no ratio). */
static double steal_split(uint64_t n)
{
    return steal_body(&split_ops, thief_split, n);
}

/* ---------------------------------------------------------------------------------------- */
/* Driver                                                                                    */
/* ---------------------------------------------------------------------------------------- */

enum { MAX_RUNS = 99 };

typedef struct result {
    const char *label, *csv_name, *unit;
    bool higher_is_better;
    double (*run_lockfree)(uint64_t n), (*run_locked)(uint64_t n);
    uint64_t n, quick_n;     /* operations per run, normal and --quick */
    double lockfree, locked; /* medians */
} result;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* glibc drops the lock prefix from its mutex operations while a process has only one thread,
 * which would make the locked deque look several times cheaper than it can ever be inside a
 * pool. A thread that only sleeps keeps the process multi-threaded for the whole run. */
static pthread_mutex_t companion_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t companion_cond = PTHREAD_COND_INITIALIZER;
static bool companion_stop; /* guarded by companion_lock */

static void *companion_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&companion_lock);
    while (!companion_stop)
        pthread_cond_wait(&companion_cond, &companion_lock);
    pthread_mutex_unlock(&companion_lock);
    return NULL;
}

/* Runs the two implementations alternately, so that a slow phase of a loaded machine hits
 * both sides alike; one warm-up run of each is discarded. */
static void measure(result *r, int runs, uint64_t n)
{
    double lf[MAX_RUNS], lk[MAX_RUNS];
    (void)r->run_lockfree(n);
    if (r->run_locked != NULL)
        (void)r->run_locked(n);
    for (int i = 0; i < runs; i++) {
        lf[i] = r->run_lockfree(n);
        lk[i] = r->run_locked != NULL ? r->run_locked(n) : 0;
    }
    r->lockfree = median(lf, runs);
    r->locked = median(lk, runs);
}

static double speedup(const result *r)
{
    return r->higher_is_better ? r->lockfree / r->locked : r->locked / r->lockfree;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_deque [--quick] [--runs N] [--csv FILE]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    bool quick = false;
    int runs = 7;
    const char *csv = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            quick = true;
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
            if (runs < 1 || runs > MAX_RUNS)
                usage();
        } else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            csv = argv[++i];
        } else {
            usage();
        }
    }
    if (quick && runs == 7)
        runs = 3;

    result res[] = {
        {"push+pop pair, deque not empty", "pair_not_empty", "ns/pair", false, pairs_kept_lockfree,
         pairs_kept_locked, 10000000, 100000, 0, 0},
        {"push+pop pair, last item (CAS)", "pair_last_item", "ns/pair", false, pairs_last_lockfree,
         pairs_last_locked, 10000000, 100000, 0, 0},
        {"steal: 1 owner pushing, 1 thief", "steal_throughput", "Mitems/s", true, steal_lockfree,
         steal_locked, 2000000, 20000, 0, 0},
        {"push+pop pair, inline owner path", "pair_inline", "ns/pair", false, pairs_inline_lockfree,
         NULL, 10000000, 100000, 0, 0},
        {"steal: split deque (the workers')", "steal_split", "Mitems/s", true, steal_split, NULL,
         2000000, 20000, 0, 0},
    };
    enum { NRES = sizeof res / sizeof res[0] };
    pthread_t companion;
    int err = pthread_create(&companion, NULL, companion_main, NULL);
    if (err != 0)
        die("pthread_create", err);
    for (int i = 0; i < NRES; i++)
        measure(&res[i], runs, quick ? res[i].quick_n : res[i].n);
    pthread_mutex_lock(&companion_lock);
    companion_stop = true;
    pthread_cond_signal(&companion_cond);
    pthread_mutex_unlock(&companion_lock);
    pthread_join(companion, NULL);

#if defined(__clang__)
    const char *compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
    const char *compiler = "gcc " __VERSION__;
#else
    const char *compiler = "unknown compiler";
#endif
    double load[1] = {-1};
    if (getloadavg(load, 1) != 1)
        load[0] = -1;
    printf("deque benchmark%s: median of %d runs; %s; %u CPUs, load average %.2f\n\n",
           quick ? " (--quick smoke run, numbers meaningless)" : "", runs, compiler,
           ws__cpu_count(), load[0]);
    printf("%-34s %-9s %11s %11s   %s\n", "benchmark", "unit", "lock-free", "locked",
           "lock-free/locked");
    for (int i = 0; i < NRES; i++) {
        const result *r = &res[i];
        if (r->run_locked == NULL) {
            printf("%-34s %-9s %11.2f %11s\n", r->label, r->unit, r->lockfree, "-");
            continue;
        }
        printf("%-34s %-9s %11.2f %11.2f   %6.3f  (lock-free %.1fx %s)\n", r->label, r->unit,
               r->lockfree, r->locked, r->lockfree / r->locked, speedup(r),
               speedup(r) >= 1 ? "faster" : "slower");
    }
    printf("\nThe first three rows call the exported functions of both deques; the fourth calls\n"
           "the lock-free deque's inline owner operations (deque.h), as the scheduler does; the\n"
           "last moves items through the workers' split deque as the steal row does. Pairs\n"
           "are timed in thread CPU time; the steal run by the wall clock, since it needs both\n"
           "threads running at once (on a loaded machine it varies a lot).\n");
    double target = speedup(&res[0]);
    printf("target: the lock-free push+pop pair at least 3x faster than the locked one: %s "
           "(%.1fx)\n",
           target >= 3 ? "met" : "NOT met", target);

    if (csv != NULL) {
        FILE *f = fopen(csv, "w");
        if (f == NULL)
            die(csv, errno);
        fprintf(f, "benchmark,unit,lockfree,locked,ratio_lockfree_over_locked,runs\n");
        for (int i = 0; i < NRES; i++) {
            if (res[i].run_locked != NULL)
                fprintf(f, "%s,%s,%.4f,%.4f,%.4f,%d\n", res[i].csv_name, res[i].unit,
                        res[i].lockfree, res[i].locked, res[i].lockfree / res[i].locked, runs);
            else /* no locked counterpart: empty fields */
                fprintf(f, "%s,%s,%.4f,,,%d\n", res[i].csv_name, res[i].unit, res[i].lockfree,
                        runs);
        }
        if (fclose(f) != 0)
            die(csv, errno);
    }
    return 0;
}
