/* wl_futures.c: bench_futures, futures measured side by side with fork-join, the mutex pool and
 * Java's ForkJoinPool.
 *
 *   bench_futures [--quick] [--workers LIST] [--rounds N] [--reps N] [--workloads LIST]
 *                 [--fib N] [--nqueens N] [--sum N] [--cap-workers LIST] [--cap-nqueens N]
 *                 [--no-java] [--no-cap]
 *   bench_futures --once fib|nqueens|sum [--version V] [--workers P] [--fib N] ...
 *                 (one run of version V, default ws-future, on a fresh pool, with the pool's
 *                 counters: for bench/futures-syscalls.sh, which counts its futex calls, and for
 *                 instruction counts under callgrind)
 *
 * Three workloads, each written in the futures style and checked against its known answer:
 *   fib      fib(n) with one future per call: submit fib(n-1), compute fib(n-2) directly, get,
 *            free (fib(n+1) - 1 futures);
 *   nqueens  the placements of n queens, one future per legal placement in a row, got oldest
 *            first (the order in which a futures user reads a list of results);
 *   sum      the sum of an array of --sum elements by recursive halving down to SUM_LEAF
 *            elements, a future for the left half and the right half computed directly.
 * Each in these versions:
 *   serial     plain recursion, no runtime;
 *   ws-future  ws_future_submit / ws_future_get / ws_future_free;
 *   ws-spawn   the same computation through ws_spawn / ws_sync (syncs newest first, as ws_sync
 *              requires); for n-queens, ws-bench's own version (wl_nqueens.c);
 *   ws-floor   (fib only) ws-spawn plus the two read-modify-writes that a future's get costs
 *              at least, on the child's own word: the claim before the run and the finish after.
 *              A future that any thread may get, cancel or free while its spawner gets it
 *              needs both (a getter elsewhere may claim it, a waiter may announce itself), so
 *              no implementation of these semantics beats this version: the floor for the goal
 *              of futures within 1.5x of spawn/sync;
 *   cq-future  the futures a user would write over the mutex pool (central_pool.h): one heap
 *              record per future holding a cq_task; submit = malloc + cq_spawn; get = cq_sync,
 *              which runs the job itself if nobody took it and otherwise helps by running queued
 *              jobs until the job is done;
 *   java       RecursiveTask fork()/join() in a ForkJoinPool of P threads (bench/peer_java/),
 *              when a JDK was found at configure time; one JVM per round, which runs every
 *              workload and worker count after a few warm-up runs of each.
 *
 * Rounds. Round after round (--rounds, default 5), every (workload, workers, version) runs
 * --reps times (default 3) after one untimed warm-up run on a fresh pool; a round's figure is the
 * median of its reps. A time is the median of its rounds' figures, and a ratio the median of the
 * rounds' ratios, so a slow spell of the shared machine falls on one round of both sides.
 * Columns: each version's time; fut/spawn = ws-future / ws-spawn, cq/fut = cq-future /
 * ws-future, java/fut = java / ws-future; ns/fut = the ws-future time times P over the number of
 * futures, the worker time per future with its share of the work.
 *
 * The thread cap (--cap-workers, default 1,2,4,8,16): n-queens(--cap-nqueens, default 12) in the
 * futures style with max_spares = WS_NO_SPARES, its root future submitted from the main thread,
 * which counts the entries of /proc/self/task every 200 us until the future is done. The process
 * must never have more than P + 1 threads (the P workers and the main thread); a row with more
 * fails the run. The same with the default max_spares is shown beside it.
 *
 * Exit status 1 if an answer was wrong, a pool could not be made or the thread cap was broken.
 */
#include "bench.h" /* wb_nqueens: ws-spawn's n-queens is ws-bench's own */
#include "verdict.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NQ_MAX      18      /* n-queens: the largest n (a row's children fit in arrays this long) */
#define SUM_LEAF    16      /* elements a sum leaf adds up itself */
#define MAX_COUNTS  16      /* worker counts in a list */
#define MAX_ROUNDS  15      /* --rounds */
#define MAX_REPS    25      /* --reps */
#define CAP_POLL_NS 200000L /* the thread cap's count of /proc/self/task: every 200 us */

enum { W_FIB, W_NQUEENS, W_SUM, W_COUNT };
static const char *const wl_names[W_COUNT] = {"fib", "nqueens", "sum"};

enum { V_SERIAL, V_WS_FUTURE, V_WS_SPAWN, V_WS_FLOOR, V_CQ_FUTURE, V_JAVA, V_COUNT };
static const char *const v_names[V_COUNT] = {"serial",   "ws-future", "ws-spawn",
                                             "ws-floor", "cq-future", "java"};

static void die(const char *what, int err)
{
    fprintf(stderr, "bench_futures: %s: %s\n", what, err ? strerror(err) : "failed");
    exit(1);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++) /* insertion sort: a handful of values */
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---------------------------------------------------------------------------------------- */
/* Futures over the mutex pool: what a naive implementation on central_pool.h looks like     */
/* ---------------------------------------------------------------------------------------- */

typedef struct cq_future {
    cq_task task;
    ws_future_fn fn;
    void *arg, *result;
    bool synced; /* the getter's own flag: a second get returns the result without a sync */
} cq_future;

static void cq_future_body(void *p)
{
    cq_future *f = p;
    f->result = f->fn(f->arg);
}

static cq_future *cq_future_submit(ws_future_fn fn, void *arg)
{
    cq_future *f = malloc(sizeof(*f));
    if (!f)
        die("cq_future_submit", ENOMEM);
    *f = (cq_future){.fn = fn, .arg = arg};
    cq_spawn(&f->task, cq_future_body, f);
    return f;
}

static void *cq_future_get(cq_future *f)
{
    if (!f->synced) {
        cq_sync(&f->task);
        f->synced = true;
    }
    return f->result;
}

static void cq_future_free(cq_future *f)
{
    cq_future_get(f); /* its job may still run, and it writes into the record */
    free(f);
}

static ws_future *ws_submit_or_die(ws_future_fn fn, void *arg)
{
    ws_future *f;
    int err = ws_future_submit(&f, NULL, fn, arg);
    if (err)
        die("ws_future_submit", err);
    return f;
}

/* ---------------------------------------------------------------------------------------- */
/* fib                                                                                        */
/* ---------------------------------------------------------------------------------------- */

static uint64_t fib_serial(int n)
{
    return n < 2 ? (uint64_t)n : fib_serial(n - 1) + fib_serial(n - 2);
}

/* The argument and the result travel in the pointers, as futures users pass small values. */
static void *fib_ws_future(void *arg)
{
    intptr_t n = (intptr_t)arg;
    if (n < 2)
        return arg;
    ws_future *f = ws_submit_or_die(fib_ws_future, (void *)(n - 1));
    uintptr_t b = (uintptr_t)fib_ws_future((void *)(n - 2));
    uintptr_t a = (uintptr_t)ws_future_get(f);
    ws_future_free(f);
    return (void *)(a + b);
}

static void *fib_cq_future(void *arg)
{
    intptr_t n = (intptr_t)arg;
    if (n < 2)
        return arg;
    cq_future *f = cq_future_submit(fib_cq_future, (void *)(n - 1));
    uintptr_t b = (uintptr_t)fib_cq_future((void *)(n - 2));
    uintptr_t a = (uintptr_t)cq_future_get(f);
    cq_future_free(f);
    return (void *)(a + b);
}

typedef struct fib_arg {
    int n;
    uint64_t r;
} fib_arg;

/* fib through ws_spawn / ws_sync, calling itself as self; with rmw, also a future's two
 * read-modify-writes on the child's word (see ws-floor). Inlined into both versions, so each is
 * compiled with its own constant rmw. */
static inline __attribute__((always_inline)) void fib_spawn_body(fib_arg *a, ws_fn self, bool rmw)
{
    if (a->n < 2) {
        a->r = (uint64_t)a->n;
        return;
    }
    fib_arg x = {a->n - 1, 0}, y = {a->n - 2, 0};
    _Atomic uint32_t word = 0;
    ws_task t;
    ws_spawn(&t, self, &x);
    self(&y);
    uint32_t pending = 0;
    if (rmw) /* acq_rel, as a claim: a getter elsewhere may race for the run */
        (void)atomic_compare_exchange_strong_explicit(&word, &pending, 1, memory_order_acq_rel,
                                                      memory_order_relaxed);
    ws_sync(&t);
    if (rmw) /* acq_rel, as a finish: publishes the result, reads a waiter's announcement */
        (void)atomic_fetch_add_explicit(&word, 2, memory_order_acq_rel);
    a->r = x.r + y.r;
}

static void fib_ws_spawn(void *p)
{
    fib_spawn_body(p, fib_ws_spawn, false);
}

static void fib_ws_floor(void *p)
{
    fib_spawn_body(p, fib_ws_floor, true);
}

/* ---------------------------------------------------------------------------------------- */
/* n-queens                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* A partial placement: `row` queens placed; the masks mark the attacked columns. */
typedef struct nq_arg {
    int n, row;
    uint32_t cols, d1, d2;
    uint64_t count; /* ws-spawn's result */
} nq_arg;

static inline uint32_t nq_free(const nq_arg *a)
{
    return ~(a->cols | a->d1 | a->d2) & ((1u << a->n) - 1u);
}

/* The placement below a with a queen on `bit`. */
static inline nq_arg nq_child(const nq_arg *a, uint32_t bit)
{
    return (nq_arg){a->n, a->row + 1, a->cols | bit, (a->d1 | bit) << 1, (a->d2 | bit) >> 1, 0};
}

static uint64_t nq_serial(const nq_arg *a)
{
    if (a->row == a->n)
        return 1;
    uint64_t count = 0;
    for (uint32_t avail = nq_free(a); avail; avail &= avail - 1) {
        nq_arg kid = nq_child(a, avail & -avail);
        count += nq_serial(&kid);
    }
    return count;
}

/* Legal placements below a: one future (or spawn) each. */
static uint64_t nq_tasks(const nq_arg *a)
{
    uint64_t tasks = 0;
    for (uint32_t avail = nq_free(a); avail; avail &= avail - 1) {
        nq_arg kid = nq_child(a, avail & -avail);
        tasks += 1 + nq_tasks(&kid);
    }
    return tasks;
}

static void *nq_ws_future(void *p)
{
    const nq_arg *a = p;
    if (a->row == a->n)
        return (void *)1;
    nq_arg kids[NQ_MAX];
    ws_future *fs[NQ_MAX];
    int k = 0;
    for (uint32_t avail = nq_free(a); avail; avail &= avail - 1, k++) {
        kids[k] = nq_child(a, avail & -avail);
        fs[k] = ws_submit_or_die(nq_ws_future, &kids[k]);
    }
    uintptr_t count = 0;
    for (int i = 0; i < k; i++) { /* oldest first */
        count += (uintptr_t)ws_future_get(fs[i]);
        ws_future_free(fs[i]);
    }
    return (void *)count;
}

static void *nq_cq_future(void *p)
{
    const nq_arg *a = p;
    if (a->row == a->n)
        return (void *)1;
    nq_arg kids[NQ_MAX];
    cq_future *fs[NQ_MAX];
    int k = 0;
    for (uint32_t avail = nq_free(a); avail; avail &= avail - 1, k++) {
        kids[k] = nq_child(a, avail & -avail);
        fs[k] = cq_future_submit(nq_cq_future, &kids[k]);
    }
    uintptr_t count = 0;
    for (int i = 0; i < k; i++) { /* oldest first */
        count += (uintptr_t)cq_future_get(fs[i]);
        cq_future_free(fs[i]);
    }
    return (void *)count;
}

/* ---------------------------------------------------------------------------------------- */
/* sum over a tree of futures                                                                 */
/* ---------------------------------------------------------------------------------------- */

typedef struct sum_arg {
    const uint32_t *v;
    size_t n;
    uint64_t r; /* ws-spawn's result */
} sum_arg;

/* The array's values: the same formula in FuturesPeer.java. */
static uint32_t sum_value(size_t i)
{
    return (uint32_t)((uint32_t)i * 0x9E3779B1u) >> 20;
}

static uint64_t sum_serial(const uint32_t *v, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s;
}

/* Inner nodes of the halving tree over n elements: one future (or spawn) each. */
static uint64_t sum_tasks(size_t n)
{
    return n <= SUM_LEAF ? 0 : 1 + sum_tasks(n / 2) + sum_tasks(n - n / 2);
}

static void *sum_ws_future(void *p)
{
    const sum_arg *a = p;
    if (a->n <= SUM_LEAF)
        return (void *)(uintptr_t)sum_serial(a->v, a->n);
    sum_arg left = {a->v, a->n / 2, 0}, right = {a->v + a->n / 2, a->n - a->n / 2, 0};
    ws_future *f = ws_submit_or_die(sum_ws_future, &left);
    uintptr_t r = (uintptr_t)sum_ws_future(&right);
    uintptr_t l = (uintptr_t)ws_future_get(f);
    ws_future_free(f);
    return (void *)(l + r);
}

static void *sum_cq_future(void *p)
{
    const sum_arg *a = p;
    if (a->n <= SUM_LEAF)
        return (void *)(uintptr_t)sum_serial(a->v, a->n);
    sum_arg left = {a->v, a->n / 2, 0}, right = {a->v + a->n / 2, a->n - a->n / 2, 0};
    cq_future *f = cq_future_submit(sum_cq_future, &left);
    uintptr_t r = (uintptr_t)sum_cq_future(&right);
    uintptr_t l = (uintptr_t)cq_future_get(f);
    cq_future_free(f);
    return (void *)(l + r);
}

static void sum_ws_spawn(void *p)
{
    sum_arg *a = p;
    if (a->n <= SUM_LEAF) {
        a->r = sum_serial(a->v, a->n);
        return;
    }
    sum_arg left = {a->v, a->n / 2, 0}, right = {a->v + a->n / 2, a->n - a->n / 2, 0};
    ws_task t;
    ws_spawn(&t, sum_ws_spawn, &left);
    sum_ws_spawn(&right);
    ws_sync(&t);
    a->r = left.r + right.r;
}

/* ---------------------------------------------------------------------------------------- */
/* One run of a (workload, version)                                                           */
/* ---------------------------------------------------------------------------------------- */

typedef struct options {
    bool wl[W_COUNT];
    unsigned workers[MAX_COUNTS], cap_workers[MAX_COUNTS];
    int nworkers, ncap;
    int rounds, reps;
    long fib_n, nq_n, cap_nq_n, sum_n;
    bool java, cap;
    bool quick;       /* --quick: too small for the goals' verdicts */
    int once;         /* -1, or the workload that runs once */
    int once_version; /* the version it runs in */
} options;

typedef struct instance {
    int n;         /* fib, nqueens */
    uint32_t *v;   /* sum: the array, */
    size_t len;    /* its length */
    uint64_t want; /* the answer */
    uint64_t futures;
    void *nq_state; /* nqueens: wl_nqueens.c's state, for ws-spawn */
} instance;

/* What a root run computes: the version's function on the instance, its answer in `got`. */
typedef struct root_call {
    int wl, version;
    const instance *in;
    ws_pool *ws; /* the pool it runs on, for ws-bench's n-queens */
    uint64_t got;
} root_call;

static uint64_t run_fib(int version, const instance *in)
{
    switch (version) {
    case V_SERIAL:
        return fib_serial(in->n);
    case V_WS_FUTURE:
        return (uintptr_t)fib_ws_future((void *)(intptr_t)in->n);
    case V_CQ_FUTURE:
        return (uintptr_t)fib_cq_future((void *)(intptr_t)in->n);
    case V_WS_FLOOR: {
        fib_arg a = {in->n, 0};
        fib_ws_floor(&a);
        return a.r;
    }
    default: {
        fib_arg a = {in->n, 0};
        fib_ws_spawn(&a);
        return a.r;
    }
    }
}

/* ws-bench's n-queens through ws_spawn / ws_sync: its own check says whether it is right. */
static uint64_t run_nqueens_spawn(const instance *in, ws_pool *ws)
{
    wb_runner r = {.sched = WB_WS, .workers = ws_pool_workers(ws), .ws = ws};
    char answer[128];
    wb_nqueens.reset(in->nq_state);
    int err = wb_nqueens.run(in->nq_state, &r); /* on a worker of ws: a plain call */
    if (err)
        die("wb_nqueens.run", err);
    if (wb_nqueens.check(in->nq_state, answer, sizeof(answer)))
        return in->want;
    fprintf(stderr, "bench_futures: wl_nqueens.c: %s\n", answer);
    return 0;
}

static uint64_t run_nqueens(int version, const instance *in, ws_pool *ws)
{
    nq_arg root = {in->n, 0, 0, 0, 0, 0};
    switch (version) {
    case V_SERIAL:
        return nq_serial(&root);
    case V_WS_FUTURE:
        return (uintptr_t)nq_ws_future(&root);
    case V_CQ_FUTURE:
        return (uintptr_t)nq_cq_future(&root);
    default:
        return run_nqueens_spawn(in, ws);
    }
}

static uint64_t run_sum(int version, const instance *in)
{
    sum_arg root = {in->v, in->len, 0};
    switch (version) {
    case V_SERIAL:
        return sum_serial(in->v, in->len);
    case V_WS_FUTURE:
        return (uintptr_t)sum_ws_future(&root);
    case V_CQ_FUTURE:
        return (uintptr_t)sum_cq_future(&root);
    default:
        sum_ws_spawn(&root);
        return root.r;
    }
}

static void root_body(void *p)
{
    root_call *c = p;
    c->got = c->wl == W_FIB       ? run_fib(c->version, c->in)
             : c->wl == W_NQUEENS ? run_nqueens(c->version, c->in, c->ws)
                                  : run_sum(c->version, c->in);
}

/* The pool a version runs on: none, a worksteal pool or a mutex pool, of P workers. */
typedef struct runner {
    int version;
    ws_pool *ws;
    cq_pool *cq;
} runner;

static runner runner_start(int version, unsigned workers)
{
    runner r = {version, NULL, NULL};
    int err = 0;
    if (version == V_WS_FUTURE || version == V_WS_SPAWN || version == V_WS_FLOOR)
        err = ws_pool_create(&r.ws, &(ws_config){.workers = workers});
    else if (version == V_CQ_FUTURE)
        err = cq_pool_create(&r.cq, workers);
    if (err)
        die("creating a pool", err);
    return r;
}

static void runner_stop(runner *r)
{
    ws_pool_destroy(r->ws);
    cq_pool_destroy(r->cq);
}

/* One timed run; false (after a message) if the answer is wrong. */
static bool timed_run(const runner *r, int wl, const instance *in, double *seconds)
{
    root_call c = {wl, r->version, in, r->ws, 0};
    double t0 = now_s();
    if (r->ws) {
        int err = ws_pool_run(r->ws, root_body, &c);
        if (err)
            die("ws_pool_run", err);
    } else if (r->cq) {
        cq_pool_run(r->cq, root_body, &c);
    } else {
        root_body(&c);
    }
    *seconds = now_s() - t0;
    if (c.got == in->want)
        return true;
    fprintf(stderr, "bench_futures: %s on %s: got %llu, want %llu\n", wl_names[wl],
            v_names[r->version], (unsigned long long)c.got, (unsigned long long)in->want);
    return false;
}

/* ---------------------------------------------------------------------------------------- */
/* The Java peer                                                                              */
/* ---------------------------------------------------------------------------------------- */

/* One JVM: every selected workload at every worker count, its medians into
 * java_s[wl][worker index] (negative where missing). False if it failed or answered wrong. */
static bool java_round(const options *o, const instance *ins, double java_s[W_COUNT][MAX_COUNTS])
{
#ifdef WB_JAVA
    char workers[128] = "", names[64] = "", cmd[1024];
    for (int i = 0; i < o->nworkers; i++)
        snprintf(workers + strlen(workers), sizeof(workers) - strlen(workers), "%s%u", i ? "," : "",
                 o->workers[i]);
    for (int wl = 0; wl < W_COUNT; wl++)
        if (o->wl[wl])
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
                     names[0] ? "," : "", wl_names[wl]);
    snprintf(cmd, sizeof(cmd),
             "'%s' -cp '%s' FuturesPeer --fib %ld --nqueens %ld --sum %ld --leaf %d --workers %s "
             "--reps %d --workloads %s",
             WB_JAVA, WB_JAVA_CLASSES, o->fib_n, o->nq_n, o->sum_n, SUM_LEAF, workers, o->reps,
             names);
    FILE *p = popen(cmd, "r");
    if (!p)
        return false;
    char line[256], name[32];
    unsigned w;
    double s;
    unsigned long long answer;
    bool ok = true;
    while (fgets(line, sizeof(line), p)) {
        if (sscanf(line, "%31s %u %lf %llu", name, &w, &s, &answer) != 4)
            continue;
        for (int wl = 0; wl < W_COUNT; wl++)
            for (int i = 0; i < o->nworkers; i++)
                if (strcmp(name, wl_names[wl]) == 0 && o->workers[i] == w) {
                    java_s[wl][i] = s;
                    if (answer != ins[wl].want) {
                        fprintf(stderr, "bench_futures: %s on java: got %llu, want %llu\n", name,
                                answer, (unsigned long long)ins[wl].want);
                        ok = false;
                    }
                }
    }
    return pclose(p) == 0 && ok;
#else
    (void)o, (void)ins, (void)java_s;
    return false;
#endif
}

/* ---------------------------------------------------------------------------------------- */
/* The side-by-side table                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* Every round's figure, per (workload, worker index, version); negative: not measured. */
static double figures[W_COUNT][MAX_COUNTS][V_COUNT][MAX_ROUNDS];
/* Other programs' CPU time during the C versions' runs (the Java peer's JVM is a child process,
 * which would count as another program): verdict.h's rule for the goals. */
static wb_others others_in_runs;

/* One round of one (workload, workers, version): the median of --reps runs after a warm-up. */
static bool measure(const options *o, int wl, const instance *in, int version, unsigned workers,
                    double *out)
{
    runner r = runner_start(version, workers);
    double t[MAX_REPS];
    bool ok = timed_run(&r, wl, in, &t[0]);
    for (int i = 0; i < o->reps && ok; i++)
        ok = timed_run(&r, wl, in, &t[i]);
    runner_stop(&r);
    *out = median(t, o->reps);
    return ok;
}

/* The median over the rounds of a/b; NAN if either side is missing. */
static double ratio_median(const options *o, const double *a, const double *b)
{
    double v[MAX_ROUNDS];
    int n = 0;
    for (int r = 0; r < o->rounds; r++)
        if (a[r] > 0 && b[r] > 0)
            v[n++] = a[r] / b[r];
    return n ? median(v, n) : -1;
}

static double time_median(const options *o, const double *a)
{
    double v[MAX_ROUNDS];
    int n = 0;
    for (int r = 0; r < o->rounds; r++)
        if (a[r] > 0)
            v[n++] = a[r];
    return n ? median(v, n) : -1;
}

static void put_ms(double s)
{
    if (s < 0)
        printf(" %10s", "-");
    else
        printf(" %10.2f", s * 1e3);
}

static void put_ratio(double r)
{
    if (r < 0)
        printf(" %9s", "-");
    else
        printf(" %8.2fx", r);
}

static void print_table(const options *o, int wl, const instance *in)
{
    printf("\n%s(%ld): %llu futures per run; ms, median of %d rounds (each the median of %d)\n",
           wl_names[wl],
           wl == W_FIB       ? o->fib_n
           : wl == W_NQUEENS ? o->nq_n
                             : o->sum_n,
           (unsigned long long)in->futures, o->rounds, o->reps);
    printf("%7s", "workers");
    for (int v = 0; v < V_COUNT; v++)
        printf(" %10s", v_names[v]);
    printf(" %9s %9s %9s %9s\n", "fut/spawn", "cq/fut", "java/fut", "ns/fut");
    for (int i = 0; i < o->nworkers; i++) {
        printf("%7u", o->workers[i]);
        for (int v = 0; v < V_COUNT; v++)
            put_ms(time_median(o, figures[wl][i][v]));
        double(*f)[MAX_ROUNDS] = figures[wl][i];
        put_ratio(ratio_median(o, f[V_WS_FUTURE], f[V_WS_SPAWN]));
        put_ratio(ratio_median(o, f[V_CQ_FUTURE], f[V_WS_FUTURE]));
        put_ratio(ratio_median(o, f[V_JAVA], f[V_WS_FUTURE]));
        printf(" %9.1f\n", time_median(o, f[V_WS_FUTURE]) * 1e9 * o->workers[i] /
                               (double)(in->futures ? in->futures : 1));
    }
}

/* The goals on fib at each worker count: futures within 1.5x of spawn/sync, the mutex pool at
 * least 10x slower; and the mutex pool over spawn/sync, the ceiling of the second goal for any
 * future that costs a spawn and a sync or more. Printed, not enforced: the machine is shared;
 * judged by verdict.h's rule, as every section of ws-bench. */
static void print_goals(const options *o)
{
    if (!o->wl[W_FIB])
        return;
    double others = wb_others_share(&others_in_runs);
    printf("\ngoals on fib (printed, not enforced: timing on a shared machine; ");
    if (others >= 0)
        printf("other programs used %.0f%% of the CPUs during the runs):\n", 100 * others);
    else
        printf("the runs were too short to tell how busy the machine was):\n");
    for (int i = 0; i < o->nworkers; i++) {
        double(*f)[MAX_ROUNDS] = figures[W_FIB][i];
        double fs = ratio_median(o, f[V_WS_FUTURE], f[V_WS_SPAWN]);
        double cq = ratio_median(o, f[V_CQ_FUTURE], f[V_WS_FUTURE]);
        double floor = ratio_median(o, f[V_WS_FLOOR], f[V_WS_SPAWN]);
        double above = ratio_median(o, f[V_WS_FUTURE], f[V_WS_FLOOR]);
        double cq_spawn = ratio_median(o, f[V_CQ_FUTURE], f[V_WS_SPAWN]);
        char v1[128], v2[128];
        printf(
            "  %u worker%s: futures / spawn-sync %.2fx (goal <= 1.5x: %s), mutex pool / "
            "futures %.1fx (goal >= 10x: %s)\n"
            "             the floor (ws-floor) / spawn-sync %.2fx; futures / the floor %.2fx\n"
            "             mutex pool / spawn-sync %.1fx: the most that a future costing at least "
            "a spawn and a sync can reach\n",
            o->workers[i], o->workers[i] == 1 ? "" : "s", fs,
            wb_verdict(fs <= 1.5, others, o->quick, false, v1, sizeof v1), cq,
            wb_verdict(cq >= 10, others, o->quick, false, v2, sizeof v2), floor, above, cq_spawn);
    }
}

static bool side_by_side(const options *o, const instance *ins)
{
    bool ok = true;
    for (int wl = 0; wl < W_COUNT; wl++)
        for (int i = 0; i < MAX_COUNTS; i++)
            for (int v = 0; v < V_COUNT; v++)
                for (int r = 0; r < MAX_ROUNDS; r++)
                    figures[wl][i][v][r] = -1;
    for (int round = 0; round < o->rounds; round++) {
        fprintf(stderr, "  round %d of %d ...\n", round + 1, o->rounds);
        wb_cpu_sample cpu0 = wb_cpu_sample_now();
        for (int wl = 0; wl < W_COUNT; wl++) {
            if (!o->wl[wl])
                continue;
            for (int i = 0; i < o->nworkers; i++)
                for (int v = 0; v < V_JAVA; v++) {
                    if ((v == V_SERIAL && i > 0) /* serial does not depend on P */ ||
                        (v == V_WS_FLOOR && wl != W_FIB))
                        continue;
                    ok &= measure(o, wl, &ins[wl], v, o->workers[i], &figures[wl][i][v][round]);
                    if (v == V_SERIAL)
                        for (int j = 1; j < o->nworkers; j++)
                            figures[wl][j][v][round] = figures[wl][i][v][round];
                }
        }
        wb_others_add(&others_in_runs, cpu0, wb_cpu_sample_now());
        if (o->java) {
            double java_s[W_COUNT][MAX_COUNTS];
            for (int wl = 0; wl < W_COUNT; wl++)
                for (int i = 0; i < MAX_COUNTS; i++)
                    java_s[wl][i] = -1;
            if (!java_round(o, ins, java_s)) {
                fprintf(stderr, "bench_futures: the Java peer failed in round %d\n", round + 1);
                ok = false;
            }
            for (int wl = 0; wl < W_COUNT; wl++)
                for (int i = 0; i < o->nworkers; i++)
                    figures[wl][i][V_JAVA][round] = java_s[wl][i];
        }
    }
    printf(
        "\ncolumns (the median of the rounds, ms):\n"
        "  serial     the plain recursion, no runtime\n"
        "  ws-future  worksteal's futures: a ws_future_submit, get and free per call\n"
        "  ws-spawn   worksteal's ws_spawn/ws_sync: the same computation as fork-join\n"
        "  ws-floor   (fib) ws-spawn plus the two read-modify-writes that any future with these\n"
        "             semantics needs (its claim and its finish): the least a future can cost\n"
        "  cq-future  futures over the mutex pool (central_pool.h): malloc + cq_spawn, cq_sync\n"
        "  java       Java's ForkJoinPool, RecursiveTask fork()/join() on P threads (if built)\n"
        "  fut/spawn  ws-future / ws-spawn;  cq/fut  cq-future / ws-future;  java/fut  java /\n"
        "             ws-future (medians of the rounds' ratios); ns/fut  ws-future's time x P\n"
        "             per future: the worker time of a future with its share of the work\n");
    for (int wl = 0; wl < W_COUNT; wl++)
        if (o->wl[wl])
            print_table(o, wl, &ins[wl]);
    print_goals(o);
    return ok;
}

/* ---------------------------------------------------------------------------------------- */
/* The thread cap                                                                             */
/* ---------------------------------------------------------------------------------------- */

static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* n-queens(n) in the futures style on P workers with the given max_spares, its root future
 * submitted from here; *most gets the most threads seen while it ran. False if the answer is
 * wrong. */
static bool capped_run(int n, unsigned workers, unsigned max_spares, int *most, double *seconds)
{
    ws_pool *pool;
    int err = ws_pool_create(&pool, &(ws_config){.workers = workers, .max_spares = max_spares});
    if (err)
        die("ws_pool_create", err);
    nq_arg root = {n, 0, 0, 0, 0, 0};
    *most = thread_count();
    double t0 = now_s();
    ws_future *f;
    err = ws_future_submit(&f, pool, nq_ws_future, &root);
    if (err)
        die("ws_future_submit", err);
    while (ws_future_status(f) == EBUSY) {
        int t = thread_count();
        *most = t > *most ? t : *most;
        nanosleep(&(struct timespec){0, CAP_POLL_NS}, NULL);
    }
    uint64_t got = (uintptr_t)ws_future_get(f);
    *seconds = now_s() - t0;
    ws_future_free(f);
    int t = thread_count();
    *most = t > *most ? t : *most;
    ws_pool_destroy(pool);
    uint64_t want = nq_serial(&root);
    if (got == want)
        return true;
    fprintf(stderr, "bench_futures: capped nqueens(%d) on %u workers: got %llu, want %llu\n", n,
            workers, (unsigned long long)got, (unsigned long long)want);
    return false;
}

static bool thread_cap(const options *o)
{
    printf("\nthread cap: nqueens(%ld) in the futures style (gets oldest first), root submitted "
           "from the main thread,\nwhich counts /proc/self/task every %ld us; the cap is P + 1 "
           "(P workers and the main thread)\n",
           o->cap_nq_n, CAP_POLL_NS / 1000);
    printf("%7s %14s %8s %6s %16s %10s\n", "workers", "WS_NO_SPARES", "ms", "cap", "default spares",
           "ms");
    bool ok = true;
    for (int i = 0; i < o->ncap; i++) {
        unsigned p = o->cap_workers[i];
        int none, dflt;
        double none_s, dflt_s;
        ok &= capped_run((int)o->cap_nq_n, p, WS_NO_SPARES, &none, &none_s);
        ok &= capped_run((int)o->cap_nq_n, p, 0, &dflt, &dflt_s);
        bool within = none <= (int)p + 1;
        printf("%7u %14d %8.1f %6s %16d %10.1f\n", p, none, none_s * 1e3, within ? "ok" : "BROKEN",
               dflt, dflt_s * 1e3);
        ok &= within;
    }
    return ok;
}

/* ---------------------------------------------------------------------------------------- */
/* Options and main                                                                           */
/* ---------------------------------------------------------------------------------------- */

static bool parse_counts(const char *s, unsigned *out, int *n)
{
    *n = 0;
    for (char *end; *s; s = end + (*end == ',')) {
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > (long)WS_MAX_WORKERS || *n == MAX_COUNTS ||
            (*end && *end != ','))
            return false;
        out[(*n)++] = (unsigned)v;
    }
    return *n > 0;
}

static int find_workload(const char *s, size_t len)
{
    for (int w = 0; w < W_COUNT; w++)
        if (strlen(wl_names[w]) == len && strncmp(s, wl_names[w], len) == 0)
            return w;
    return -1;
}

/* A version --once can run (not java). */
static int find_version(const char *s)
{
    for (int v = 0; v < V_JAVA; v++)
        if (strcmp(s, v_names[v]) == 0)
            return v;
    return -1;
}

static bool parse_workloads(const char *s, bool *wl)
{
    memset(wl, 0, sizeof(bool) * W_COUNT);
    while (*s) {
        size_t len = strcspn(s, ",");
        int w = find_workload(s, len);
        if (w < 0)
            return false;
        wl[w] = true;
        s += len + (s[len] == ',');
    }
    return true;
}

static bool parse_num(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_futures [--quick] [--workers LIST] [--rounds N] [--reps N]\n"
               "         [--workloads fib,nqueens,sum] [--fib N] [--nqueens N] [--sum N]\n"
               "         [--cap-workers LIST] [--cap-nqueens N] [--no-java] [--no-cap]\n"
               "       bench_futures --once fib|nqueens|sum [--version V] [--workers P] "
               "[sizes]\n"
               "(bench/wl_futures.c describes the measurements)\n");
}

static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){.wl = {true, true, true},
                   .workers = {1, 2},
                   .nworkers = 2,
                   .cap_workers = {1, 2, 4, 8, 16},
                   .ncap = 5,
                   .rounds = 5,
                   .reps = 3,
                   .fib_n = 28,
                   .nq_n = 11,
                   .cap_nq_n = 12,
                   .sum_n = 1L << 22,
                   .java = true,
                   .cap = true,
                   .once = -1,
                   .once_version = V_WS_FUTURE};
    enum {
        O_QUICK = 256,
        O_WORKERS,
        O_ROUNDS,
        O_REPS,
        O_WORKLOADS,
        O_FIB,
        O_NQ,
        O_SUM,
        O_CAPW,
        O_CAPNQ,
        O_NOJAVA,
        O_NOCAP,
        O_ONCE,
        O_VERSION,
        O_HELP
    };
    static const struct option opts[] = {
        {"quick", no_argument, NULL, O_QUICK},
        {"workers", required_argument, NULL, O_WORKERS},
        {"rounds", required_argument, NULL, O_ROUNDS},
        {"reps", required_argument, NULL, O_REPS},
        {"workloads", required_argument, NULL, O_WORKLOADS},
        {"fib", required_argument, NULL, O_FIB},
        {"nqueens", required_argument, NULL, O_NQ},
        {"sum", required_argument, NULL, O_SUM},
        {"cap-workers", required_argument, NULL, O_CAPW},
        {"cap-nqueens", required_argument, NULL, O_CAPNQ},
        {"no-java", no_argument, NULL, O_NOJAVA},
        {"no-cap", no_argument, NULL, O_NOCAP},
        {"once", required_argument, NULL, O_ONCE},
        {"version", required_argument, NULL, O_VERSION},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    long v;
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        bool good = true;
        switch (c) {
        case O_QUICK:
            o->quick = true;
            o->rounds = 1, o->reps = 1, o->fib_n = 16, o->nq_n = 7, o->cap_nq_n = 8;
            o->sum_n = 4096;
            break;
        case O_WORKERS:
            good = parse_counts(optarg, o->workers, &o->nworkers);
            break;
        case O_CAPW:
            good = parse_counts(optarg, o->cap_workers, &o->ncap);
            break;
        case O_ROUNDS:
            good = parse_num(optarg, 1, MAX_ROUNDS, &v), o->rounds = (int)v;
            break;
        case O_REPS:
            good = parse_num(optarg, 1, MAX_REPS, &v), o->reps = (int)v;
            break;
        case O_WORKLOADS:
            good = parse_workloads(optarg, o->wl);
            break;
        case O_FIB:
            good = parse_num(optarg, 1, 40, &o->fib_n);
            break;
        case O_NQ:
            good = parse_num(optarg, 1, NQ_MAX, &o->nq_n);
            break;
        case O_CAPNQ:
            good = parse_num(optarg, 1, NQ_MAX, &o->cap_nq_n);
            break;
        case O_SUM:
            good = parse_num(optarg, 1, 1L << 30, &o->sum_n);
            break;
        case O_NOJAVA:
            o->java = false;
            break;
        case O_NOCAP:
            o->cap = false;
            break;
        case O_ONCE:
            good = (o->once = find_workload(optarg, strlen(optarg))) >= 0;
            break;
        case O_VERSION:
            good = (o->once_version = find_version(optarg)) >= 0;
            break;
        case O_HELP:
            usage(stdout);
            return 1;
        default:
            good = false;
        }
        if (!good) {
            if (c != '?')
                fprintf(stderr, "bench_futures: bad value '%s'\n", optarg);
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
    }
    return 0;
}

static void prepare(const options *o, instance *ins)
{
    ins[W_FIB] = (instance){.n = (int)o->fib_n, .want = fib_serial((int)o->fib_n)};
    ins[W_FIB].futures = o->fib_n < 2 ? 0 : fib_serial((int)o->fib_n + 1) - 1;
    nq_arg root = {(int)o->nq_n, 0, 0, 0, 0, 0};
    ins[W_NQUEENS] = (instance){.n = (int)o->nq_n, .want = nq_serial(&root)};
    ins[W_NQUEENS].nq_state = wb_nqueens.prepare(o->nq_n);
    if (!ins[W_NQUEENS].nq_state)
        exit(1);
    ins[W_NQUEENS].futures = nq_tasks(&root);
    size_t len = (size_t)o->sum_n;
    uint32_t *v = malloc(len * sizeof(*v));
    if (!v)
        die("the array to sum", ENOMEM);
    for (size_t i = 0; i < len; i++)
        v[i] = sum_value(i);
    ins[W_SUM] = (instance){.v = v, .len = len, .want = sum_serial(v, len)};
    ins[W_SUM].futures = sum_tasks(len);
}

/* --once: one version of one workload, once, on a fresh pool of the first --workers count;
 * prints the number of futures (what bench/futures-syscalls.sh divides by) and the counters of
 * a worksteal pool. */
static int run_once(const options *o, const instance *ins)
{
    runner r = runner_start(o->once_version, o->workers[0]);
    double s;
    bool ok = timed_run(&r, o->once, &ins[o->once], &s);
    ws_stats st = {0};
    if (r.ws)
        ws_pool_stats(r.ws, &st);
    runner_stop(&r);
    printf("futures %llu workers %u ms %.3f spawns %llu pops %llu steals %llu parks %llu "
           "wakeups %llu leapfrogs %llu max_deque_depth %llu %s\n",
           (unsigned long long)ins[o->once].futures, o->workers[0], s * 1e3,
           (unsigned long long)st.spawns, (unsigned long long)st.pops,
           (unsigned long long)st.steals, (unsigned long long)st.parks,
           (unsigned long long)st.wakeups, (unsigned long long)st.leapfrogs,
           (unsigned long long)st.max_deque_depth, ok ? "ok" : "FAIL");
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_options(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : 2;
    instance ins[W_COUNT];
    prepare(&o, ins);
    if (o.once >= 0) {
        rc = run_once(&o, ins);
        free(ins[W_SUM].v);
        wb_nqueens.destroy(ins[W_NQUEENS].nq_state);
        return rc;
    }
#ifdef WB_JAVA
    if (o.java && access(WB_JAVA_CLASSES "/FuturesPeer.class", R_OK) != 0) {
        printf("java: skipped, the peer's classes are not in %s (cmake --build <dir> --target "
               "peer_java)\n",
               WB_JAVA_CLASSES);
        o.java = false;
    }
#else
    if (o.java)
        printf("java: skipped, no JDK was found when this program was configured (Debian: "
               "apt-get install -y default-jdk-headless)\n");
    o.java = false;
#endif
    bool ok = side_by_side(&o, ins);
    if (o.cap)
        ok &= thread_cap(&o);
    free(ins[W_SUM].v);
    wb_nqueens.destroy(ins[W_NQUEENS].nq_state);
    if (!ok)
        printf("\nFAIL: a run answered wrong, a peer failed, or the thread cap was broken (see "
               "above)\n");
    return ok ? 0 : 1;
}
