/* ws_bench.c: the ws-bench driver.
 *
 * Runs every selected workload on every selected scheduler and worker count, and prints one table
 * per workload, a CSV file, optionally a gnuplot plot, and a summary of the speed goals.
 *
 * Each scheduler is measured in a child process of its own: the driver re-executes this program
 * (or ws-bench-locked, the same sources linked with the mutex-deque build of the library, for the
 * ws-locked column) with the hidden option --child, and reads one tab-separated result line per
 * measurement from a pipe. Two builds of the library cannot share one binary (they define the
 * same symbols), and separate processes also keep each runtime's idle threads (libgomp's spin,
 * for instance) from stealing CPU time from the next measurement. A child that crashes or hangs
 * marks its cells failed instead of taking the whole run down.
 *
 * Rounds. A shared machine has slow spells of a few seconds. Measured one after the other, two
 * schedulers would be compared across different spells. So the driver runs the children of one
 * workload in turn, round after round (--rounds, default 5), each with its share of the reps; a
 * cell's time is the median of its rounds' medians, and a spell falls on one round of one
 * scheduler. A child whose first round took longer than the budget is not run again: its runs
 * are long enough to average such spells out. The profile is measured in the first round only;
 * the ceiling, which the serial child alternates with its own runs, in every round.
 *
 * Child output, one line each (fields separated by tabs):
 *   I  workload  description
 *   R  workload  scheduler  workers  reps  median  min  max  spawns  steals  attempts  parks
 *      others_s  capacity_s  status  answer  depth  self_s
 * (depth: the deepest any worker's deque was, from ws_pool_stats; 0 for other schedulers;
 * self_s: the CPU time this process used in the timed runs, all its threads, for
 * bench/neighbours.sh: a runtime whose waiting threads spin or yield uses more of it when other
 * programs want the CPUs)
 *   C  workload  copies  reps  median  min  max  others_s  capacity_s  status  answer
 * (the serial child with --ceiling: the time of `copies` serial runs side by side, see "The
 * ceiling" below)
 * where the counters are per run (averaged over the reps), others_s is the CPU time other
 * processes used during the timed runs and capacity_s the CPU time those runs could have used
 * (the driver adds both up over the rounds and reports their ratio, others_share), and status
 * is ok, FAIL or error.
 */
#include "bench.h"
#include "verdict.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------------- */
/* Workloads and schedulers                                                                  */
/* ---------------------------------------------------------------------------------------- */

static const wb_workload *const workloads[] = {
    &wb_fib,           &wb_nqueens,   &wb_uts,    &wb_sort_seqmerge,
    &wb_sort_parmerge, &wb_quicksort, &wb_matmul, &wb_batch,
};
#define N_WL ((int)(sizeof(workloads) / sizeof(workloads[0])))

enum { S_SERIAL, S_CENTRAL, S_WS_LOCKED, S_WS, S_WS_STACK, S_OMP, S_TBB, S_RAYON, S_COUNT };
static const char *const sched_names[S_COUNT] = {"serial",   "central", "ws-locked", "ws",
                                                 "ws-stack", "omp",     "tbb",       "rayon"};
static const char *const sched_about[S_COUNT] = {
    "the plain functions, no runtime",
    "one mutex-protected FIFO shared by all workers, condition variable for sleeping",
    "worksteal built with the mutex-protected deque (ws-bench-locked)",
    "worksteal with the split deque (the library as shipped)",
    "worksteal's typed tasks, WS_SPAWN/WS_SYNC (fib, nqueens, uts only)",
    "OpenMP tasks (#pragma omp task / taskwait) in gcc's libgomp",
    "oneTBB's tbb::task_group in a task_arena (fib, nqueens, uts only)",
    "Rayon's rayon::join in a ThreadPool (fib, nqueens, uts only)",
};

/* The peers (peer.h): another runtime's version of the workloads that have one. */
static const wb_peer *peer_of(int sched)
{
    return sched == S_TBB ? wb_peer_tbb : sched == S_RAYON ? wb_peer_rayon : NULL;
}

static bool is_peer(int sched)
{
    return sched == S_TBB || sched == S_RAYON;
}

/* The schedulers that run on a worksteal pool, and so have its counters. */
static bool is_worksteal(int sched)
{
    return sched == S_WS || sched == S_WS_LOCKED || sched == S_WS_STACK;
}

/* Whether workload w has a version for the scheduler. */
static bool has_version(const wb_workload *wl, int sched)
{
    return is_peer(sched) ? wl->has_peers : sched == S_WS_STACK ? wl->has_stack : true;
}

/* This binary's worksteal: which column its "ws" measures. */
#ifdef WB_LOCKED_DEQUE
#define SELF_WS   S_WS_LOCKED
#define OTHER_WS  S_WS
#define OTHER_EXE "ws-bench"
#else
#define SELF_WS   S_WS
#define OTHER_WS  S_WS_LOCKED
#define OTHER_EXE "ws-bench-locked"
#endif

#define MAX_WORKER_COUNTS 32
#define DEFAULT_REPS      5
#define DEFAULT_BUDGET    2.5 /* seconds per cell before the default reps are cut short */
#define DEFAULT_ROUNDS    5
#define MAX_ROUNDS        9
#define DEFAULT_TIMEOUT   300 /* seconds a child may run */
#define MAX_COPIES        64  /* serial copies side by side in one ceiling run */
/* Other programs' share of the CPUs while a measurement ran, above which it is flagged as
 * disturbed. */

/* Which workloads measure the ceiling (P serial copies side by side). */
enum { CEIL_DEFAULT, CEIL_ALL, CEIL_NONE };

typedef struct options {
    bool wl[N_WL];
    bool sched[S_COUNT];
    unsigned workers[MAX_WORKER_COUNTS];
    int nworkers;
    int reps;
    bool reps_given;
    int rounds;    /* the driver: how many times each child runs (see the top) */
    double budget; /* 0: exactly `reps` runs */
    bool quick;
    long size[N_WL]; /* 0: the default (or quick) size */
    const char *csv;
    bool plot, profile;
    bool extras;        /* also run the loop, external-work, futures and phases sections
                           (bench_loop, bench_external, bench_futures, bench_phases) */
    bool extras_forced; /* --extras: even with --quick (then in their quick form) or --workloads */
    bool workloads_given;
    bool no_plot; /* --no-plot: the default run writes the plot unless told not to */
    double timeout;
    int ceiling; /* CEIL_*; in a child, CEIL_ALL: measure it (the driver passes --ceiling) */
    int child;   /* -1: the driver; else the scheduler this child measures */
} options;

/* ---------------------------------------------------------------------------------------- */
/* Small helpers                                                                             */
/* ---------------------------------------------------------------------------------------- */

static unsigned online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

static int find_workload(const char *name, size_t len)
{
    for (int i = 0; i < N_WL; i++)
        if (strlen(workloads[i]->name) == len && strncmp(workloads[i]->name, name, len) == 0)
            return i;
    return -1;
}

static int find_sched(const char *name, size_t len)
{
    for (int i = 0; i < S_COUNT; i++)
        if (strlen(sched_names[i]) == len && strncmp(sched_names[i], name, len) == 0)
            return i;
    return -1;
}

static bool parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* 12.3 ms, 1.23 s, 456 us */
static const char *fmt_time(double s, char *buf, size_t len)
{
    if (s < 1e-3)
        snprintf(buf, len, "%.0f us", s * 1e6);
    else if (s < 1.0)
        snprintf(buf, len, "%.1f ms", s * 1e3);
    else
        snprintf(buf, len, "%.2f s", s);
    return buf;
}

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++) { /* insertion sort: n is a handful */
        double x = v[i];
        int j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static long workload_size(const options *o, int w)
{
    if (o->size[w])
        return o->size[w];
    return o->quick ? workloads[w]->quick_size : workloads[w]->default_size;
}

/* ---------------------------------------------------------------------------------------- */
/* Child: measure one scheduler                                                              */
/* ---------------------------------------------------------------------------------------- */

typedef struct counters {
    double spawns, steals, attempts, parks;
    double depth;  /* max_deque_depth over the pool's life (the space bound check) */
    double others; /* share of the machine's CPU time other processes used during the runs, or
                      -1 when the runs were too short to tell */
} counters;

/* ---- the ceiling: P serial copies side by side ----
 *
 * What P workers can gain at best on this machine: P threads each run the serial program on an
 * input of their own, released together, and P times one copy's time alone over the time of the
 * P copies is the ceiling. It is P on P free, independent cores; below that when the virtual
 * CPUs are hyperthread siblings, share a cache, or clock down when all are busy, and then no
 * runtime reaches P on this workload here. The serial child alternates one run alone with one
 * run of each number of copies, so that a drift in the machine's speed falls on both. */

typedef struct copy_run {
    const wb_workload *wl;
    void *state;
    const wb_runner *r; /* the serial runner */
    atomic_uint *ready; /* copies waiting at the gate */
    atomic_bool *go;    /* the gate */
    double start, end;
    int err;
} copy_run;

static void *copy_main(void *p)
{
    copy_run *c = p;
    /* relaxed: only counts arrivals; the input was written before pthread_create */
    atomic_fetch_add_explicit(c->ready, 1, memory_order_relaxed);
    /* relaxed: the gate only lines up the starts, it publishes nothing */
    while (!atomic_load_explicit(c->go, memory_order_relaxed))
        sched_yield();
    c->start = wb_now();
    c->err = c->wl->run(c->state, c->r);
    c->end = wb_now();
    return NULL;
}

/* Runs the serial workload on states[0..n-1] at once, a thread each, all started once every
 * thread waits at the gate; *elapsed is from the first start to the last end. 0, EAGAIN if a
 * thread could not start, or a run's error. */
static int run_copies(const wb_workload *wl, void *const *states, unsigned n, const wb_runner *r,
                      double *elapsed)
{
    copy_run runs[MAX_COPIES];
    pthread_t threads[MAX_COPIES];
    atomic_uint ready;
    atomic_bool go;
    atomic_init(&ready, 0);
    atomic_init(&go, false);
    unsigned started = 0;
    for (; started < n && started < MAX_COPIES; started++) {
        runs[started] = (copy_run){wl, states[started], r, &ready, &go, 0, 0, 0};
        if (pthread_create(&threads[started], NULL, copy_main, &runs[started]) != 0)
            break;
    }
    /* relaxed: the count of copy_main's arrivals; pthread_join below orders their results */
    while (atomic_load_explicit(&ready, memory_order_relaxed) < started)
        sched_yield();
    atomic_store_explicit(&go, true, memory_order_relaxed); /* relaxed: see copy_main */
    int err = started < n ? EAGAIN : 0;
    double first = INFINITY, last = 0;
    for (unsigned i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
        err = runs[i].err ? runs[i].err : err;
        first = runs[i].start < first ? runs[i].start : first;
        last = runs[i].end > last ? runs[i].end : last;
    }
    *elapsed = started > 0 ? last - first : 0;
    return err;
}

/* One measurement: a workload on one scheduler at one worker count, or (copies) the ceiling. */
typedef struct meas {
    int sched;
    unsigned workers; /* for a ceiling: how many copies */
    bool ceiling;     /* `workers` serial copies side by side, on the inputs in copies */
    void **copies;
    wb_runner r;
    double times[64];
    int reps, max_reps;
    bool done;
    const char *status; /* ok, FAIL, error */
    char answer[256];
    double others_s, timed_s; /* other processes' CPU time, and our wall time, in the runs */
    double self_s;            /* our CPU time in the runs */
    ws_stats ws0;
    cq_stats cq0;
    counters per_run;
} meas;

static void meas_start(const options *o, meas *m, int sched, unsigned workers)
{
    *m = (meas){.sched = sched, .workers = workers, .status = "ok"};
    m->max_reps = o->reps < 64 ? o->reps : 64;
    m->r.workers = workers;
    int err = 0;
    switch (sched) {
    case S_SERIAL:
        m->r.sched = WB_SERIAL;
        break;
    case S_CENTRAL:
        m->r.sched = WB_CENTRAL;
        err = cq_pool_create(&m->r.cq, workers);
        break;
    case S_WS:
    case S_WS_LOCKED:
    case S_WS_STACK: {
        m->r.sched = sched == S_WS_STACK ? WB_WS_STACK : WB_WS;
        ws_config cfg = {.workers = workers};
        err = ws_pool_create(&m->r.ws, &cfg);
        break;
    }
    case S_OMP:
        m->r.sched = WB_OMP;
        break;
    case S_TBB:
    case S_RAYON:
        m->r.sched = WB_PEER;
        m->r.peer = peer_of(sched);
        if (m->r.peer == NULL)
            err = ENOSYS; /* this ws-bench was built without it */
        else if ((m->r.peer_pool = m->r.peer->create(workers)) == NULL)
            err = EAGAIN;
        break;
    }
    if (err) {
        snprintf(m->answer, sizeof(m->answer), "could not start %u workers: %s", workers,
                 strerror(err));
        m->status = "error";
        m->done = true;
        return;
    }
}

/* One timed run of m (of all its copies at once, for a ceiling), then its check. */
static void meas_run(const options *o, meas *m, const wb_workload *wl, void *state)
{
    void **states = m->ceiling ? m->copies : &state;
    unsigned n = m->ceiling ? m->workers : 1;
    for (unsigned i = 0; i < n && wl->reset; i++)
        wl->reset(states[i]);
    /* The counters start at the first run, not at the pool's start: a round may be a single
     * run, and the parks of workers going idle after starting are no run's. */
    if (m->reps == 0 && m->r.ws)
        ws_pool_stats(m->r.ws, &m->ws0);
    if (m->reps == 0 && m->r.cq)
        cq_pool_stats(m->r.cq, &m->cq0);
    wb_cpu_sample c0 = wb_cpu_sample_now();
    double t0 = wb_now(), t = 0;
    int err = m->ceiling ? run_copies(wl, states, n, &m->r, &t) : wl->run(state, &m->r);
    if (!m->ceiling)
        t = wb_now() - t0;
    wb_cpu_sample c1 = wb_cpu_sample_now();
    double others = (c1.all_s - c0.all_s) - (c1.self_s - c0.self_s);
    m->others_s += others > 0 ? others : 0;
    m->self_s += c1.self_s - c0.self_s;
    m->timed_s += c1.wall_s - c0.wall_s;
    if (err) {
        snprintf(m->answer, sizeof(m->answer), "the run was refused: %s", ws_strerror(err));
        m->status = "error";
        m->done = true;
        return;
    }
    m->times[m->reps++] = t;
    for (unsigned i = 0; i < n; i++) {
        if (!wl->check(states[i], m->answer, sizeof(m->answer))) {
            m->status = "FAIL";
            m->done = true;
            return;
        }
    }
    /* Slow measurements get fewer runs: as many as fit in the budget at the first run's pace,
     * and an odd number, so that the median is one of the runs. A ceiling makes as many runs as
     * the serial measurement it alternates with (measure_all). */
    if (m->reps == 1 && o->budget > 0 && !m->ceiling) {
        double fit = o->budget / (t > 1e-9 ? t : 1e-9);
        int k = fit < (double)m->max_reps ? (int)fit : m->max_reps;
        if (k < 1)
            k = 1;
        if (k % 2 == 0)
            k--;
        m->max_reps = k;
    }
    if (m->reps >= m->max_reps)
        m->done = true;
}

/* Stops m's pool and prints its R line. False if it did not end ok. */
static bool meas_finish(meas *m, const wb_workload *wl)
{
    ws_stats ws1 = {0};
    cq_stats cq1 = {0};
    if (m->r.ws) {
        ws_pool_stats(m->r.ws, &ws1);
        ws_pool_destroy(m->r.ws);
    }
    if (m->r.cq) {
        cq_pool_stats(m->r.cq, &cq1);
        cq_pool_destroy(m->r.cq);
    }
    if (m->r.peer_pool)
        m->r.peer->destroy(m->r.peer_pool);
    counters *c = &m->per_run;
    int reps = m->reps;
    if (reps > 0 && is_worksteal(m->sched)) {
        c->spawns = (double)(ws1.spawns - m->ws0.spawns) / reps;
        c->steals = (double)(ws1.steals - m->ws0.steals) / reps;
        c->attempts = (double)(ws1.steal_attempts - m->ws0.steal_attempts) / reps;
        c->parks = (double)(ws1.parks - m->ws0.parks) / reps;
        c->depth = (double)ws1.max_deque_depth;
    } else if (reps > 0 && m->sched == S_CENTRAL) {
        c->spawns = (double)(cq1.spawns - m->cq0.spawns) / reps;
        c->parks = (double)(cq1.parks - m->cq0.parks) / reps;
    }
    double lo = 0, hi = 0, med = 0;
    if (reps > 0) {
        lo = hi = m->times[0];
        for (int i = 1; i < reps; i++) {
            lo = m->times[i] < lo ? m->times[i] : lo;
            hi = m->times[i] > hi ? m->times[i] : hi;
        }
        med = median(m->times, reps);
    }
    for (char *p = m->answer; *p; p++) /* keep the line format intact */
        if (*p == '\t' || *p == '\n')
            *p = ' ';
    if (m->ceiling)
        printf("C\t%s\t%u\t%d\t%.9g\t%.9g\t%.9g\t%.6f\t%.6f\t%s\t%s\n", wl->name, m->workers, reps,
               med, lo, hi, m->others_s, m->timed_s * online_cpus(), m->status, m->answer);
    else
        printf("R\t%s\t%s\t%u\t%d\t%.9g\t%.9g\t%.9g\t%.9g\t%.9g\t%.9g\t%.9g\t%.6f\t%.6f\t%s\t%s\t%."
               "0f\t%.6f\n",
               wl->name, sched_names[m->sched], m->sched == S_SERIAL ? 0u : m->workers, reps, med,
               lo, hi, c->spawns, c->steals, c->attempts, c->parks, m->others_s,
               m->timed_s * online_cpus(), m->status, m->answer, c->depth, m->self_s);
    fflush(stdout);
    return strcmp(m->status, "ok") == 0;
}

/* The worker counts that get a ceiling: there is nothing to compare at 1. */
static bool has_ceiling(unsigned p)
{
    return p > 1 && p <= MAX_COPIES;
}

/* How many ceilings this child measures: with --ceiling, the serial child one per worker count
 * above 1, after the serial measurement, whose runs they alternate with. *most: the most copies
 * among them. */
static int count_ceilings(const options *o, unsigned *most)
{
    int n = 0;
    for (int i = 0; i < o->nworkers && o->child == S_SERIAL && o->ceiling == CEIL_ALL; i++) {
        if (has_ceiling(o->workers[i])) {
            n++;
            *most = o->workers[i] > *most ? o->workers[i] : *most;
        }
    }
    return n;
}

/* Starts the n ceilings count_ceilings counted, in ms[0..n-1], on the inputs in copies (NULL:
 * they could not be made, and the ceilings report an error). */
static void start_ceilings(const options *o, meas *ms, int n, void **copies)
{
    for (int i = 0, k = 0; k < n; i++) {
        if (!has_ceiling(o->workers[i]))
            continue;
        meas *m = &ms[k++];
        meas_start(o, m, S_SERIAL, o->workers[i]);
        m->ceiling = true;
        m->copies = copies;
        if (!copies) {
            snprintf(m->answer, sizeof(m->answer), "could not prepare the copies' inputs");
            m->status = "error";
            m->done = true;
        }
    }
}

/* Frees what prepare_copies made (not the measured input, copies[0]). */
static void free_copies(int w, void **copies, unsigned n)
{
    for (unsigned i = 1; copies && i < n; i++)
        workloads[w]->destroy(copies[i]);
    free(copies);
}

/* The inputs of n serial copies: the measured one first, then n - 1 of their own. NULL if one
 * could not be made (prepare says why). */
static void **prepare_copies(const options *o, int w, void *state, unsigned n)
{
    void **copies = calloc(n, sizeof(*copies));
    if (!copies)
        return NULL;
    copies[0] = state;
    for (unsigned i = 1; i < n; i++) {
        copies[i] = workloads[w]->prepare(workload_size(o, w));
        if (!copies[i]) {
            free_copies(w, copies, i);
            return NULL;
        }
    }
    return copies;
}

/* Measures one workload on this child's scheduler at every worker count. The pools are all
 * started first and the runs interleaved (one run at each count, round after round), so that a
 * change in the machine's load while this child runs falls on every count alike, and the
 * ratios between counts stay fair; idle pools park and cost nothing meanwhile. */
static bool measure_all(const options *o, int w, void *state)
{
    const wb_workload *wl = workloads[w];
    int n = o->child == S_SERIAL ? 1 : o->nworkers;
    unsigned most = 1;
    int nceil = count_ceilings(o, &most);
    meas *ms = calloc((size_t)(n + nceil), sizeof(*ms));
    if (!ms) {
        fprintf(stderr, "ws-bench: out of memory\n");
        return false;
    }
    void **copies = nceil ? prepare_copies(o, w, state, most) : NULL;
    for (int i = 0; i < n; i++)
        meas_start(o, &ms[i], o->child, o->child == S_SERIAL ? 1 : o->workers[i]);
    start_ceilings(o, ms + n, nceil, copies);
    for (bool more = true; more;) {
        more = false;
        for (int i = 0; i < n + nceil; i++) {
            if (ms[i].done)
                continue;
            if (ms[i].ceiling)
                ms[i].max_reps = ms[0].max_reps;
            meas_run(o, &ms[i], wl, state);
            more |= !ms[i].done;
        }
    }
    bool ok = true;
    for (int i = 0; i < n + nceil; i++)
        ok &= meas_finish(&ms[i], wl);
    free(ms);
    free_copies(w, copies, most);
    return ok;
}

/* One run under ws_pool_profile on the largest worker count; prints its W line:
 *   W  workload  workers  work  span  parallelism  burdened_span  strands  steals  elapsed
 *      overhead_per_strand  status
 * A workload that is no fork-join computation (the batch) leaves no strands: status n/a. */
static bool profile_run(const options *o, int w, void *state)
{
    const wb_workload *wl = workloads[w];
    unsigned workers = o->workers[o->nworkers - 1];
    ws_profile prof = {0};
    wb_runner r = {.sched = WB_WS, .workers = workers, .profile = &prof};
    ws_config cfg = {.workers = workers};
    const char *status = "ok";
    int err = ws_pool_create(&r.ws, &cfg);
    if (err == 0) {
        if (wl->reset)
            wl->reset(state);
        err = wl->run(state, &r);
        char answer[256];
        if (err == 0 && !wl->check(state, answer, sizeof(answer)))
            status = "FAIL";
        ws_pool_destroy(r.ws);
    }
    if (err)
        status = "error";
    else if (prof.strands == 0 && strcmp(status, "ok") == 0)
        status = "n/a";
    printf("W\t%s\t%u\t%.9g\t%.9g\t%.9g\t%.9g\t%llu\t%llu\t%.9g\t%.9g\t%s\n", wl->name, workers,
           prof.work_s, prof.span_s, prof.parallelism, prof.burdened_span_s,
           (unsigned long long)prof.strands, (unsigned long long)prof.steals, prof.elapsed_s,
           prof.overhead_per_strand_s, status);
    fflush(stdout);
    return strcmp(status, "ok") == 0 || strcmp(status, "n/a") == 0;
}

static int child_main(const options *o)
{
    bool all_ok = true;
    for (int w = 0; w < N_WL; w++) {
        if (!o->wl[w])
            continue;
        void *state = workloads[w]->prepare(workload_size(o, w));
        if (!state) {
            printf("R\t%s\t%s\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\terror\tcould not prepare the "
                   "input\t0\t0\n",
                   workloads[w]->name, sched_names[o->child]);
            fflush(stdout);
            all_ok = false;
            continue;
        }
        char desc[256];
        workloads[w]->describe(state, desc, sizeof(desc));
        printf("I\t%s\t%s\n", workloads[w]->name, desc);
        fflush(stdout);
        all_ok &= measure_all(o, w, state);
        if (o->profile && o->child == S_WS)
            all_ok &= profile_run(o, w, state);
        workloads[w]->destroy(state);
    }
    return all_ok ? 0 : 1;
}

/* ---------------------------------------------------------------------------------------- */
/* Driver: results                                                                           */
/* ---------------------------------------------------------------------------------------- */

typedef struct cell {
    int wl, sched;
    unsigned workers; /* 0 for serial */
    int reps;
    double median, min, max;
    counters c;
    int rounds;                      /* rounds reported so far */
    double round_median[MAX_ROUNDS]; /* each round's median; median is their median */
    counters round_sum;              /* the rounds' counters, summed; c is their mean */
    wb_others cpu;   /* other processes' CPU time in the runs, summed over the rounds */
    char status[32]; /* ok, FAIL, error, crashed, timeout, n/a */
    char answer[256];
} cell;

static cell *cells;
static size_t ncells, cells_cap;
static char descriptions[N_WL][256];

/* --profile: one ws_pool_profile run per workload, from the ws child. */
typedef struct profile_row {
    bool have;
    unsigned workers;
    ws_profile p;
    char status[16];
} profile_row;
static profile_row profiles[N_WL];

/* The ceilings, from the serial child: `copies` serial runs side by side. */
typedef struct ceiling_row {
    int wl;
    unsigned copies;
    int reps;
    double median; /* the time of the copies together: the median of the rounds' medians */
    double others;
    int rounds;
    double round_median[MAX_ROUNDS];
    wb_others cpu; /* other processes' CPU time in the runs, summed over the rounds */
    char status[32];
    char answer[256];
} ceiling_row;
static ceiling_row ceilings[N_WL * MAX_WORKER_COUNTS];
static int nceilings;

static cell *find_cell(int wl, int sched, unsigned workers)
{
    for (size_t i = 0; i < ncells; i++)
        if (cells[i].wl == wl && cells[i].sched == sched && cells[i].workers == workers)
            return &cells[i];
    return NULL;
}

static cell *add_cell(int wl, int sched, unsigned workers)
{
    cell *c = find_cell(wl, sched, workers);
    if (c)
        return c;
    if (ncells == cells_cap) {
        size_t cap = cells_cap ? 2 * cells_cap : 64;
        cell *bigger = realloc(cells, cap * sizeof(*cells));
        if (!bigger) {
            fprintf(stderr, "ws-bench: out of memory\n");
            exit(2);
        }
        cells = bigger;
        cells_cap = cap;
    }
    c = &cells[ncells++];
    *c = (cell){.wl = wl, .sched = sched, .workers = workers, .c.others = -1};
    return c;
}

static bool cell_ok(const cell *c)
{
    return c && strcmp(c->status, "ok") == 0 && c->reps > 0;
}

/* Splits a line at tabs in place; returns the field count. */
static int split_tabs(char *line, char **f, int max)
{
    int n = 0;
    f[n++] = line;
    for (char *p = line; *p && n < max; p++) {
        if (*p == '\t') {
            *p = '\0';
            f[n++] = p + 1;
        }
    }
    return n;
}

static const ceiling_row *find_ceiling(int wl, unsigned copies);

static void round_cpu_add(wb_others *r, const char *others_s, const char *capacity_s)
{
    r->others_s += strtod(others_s, NULL);
    r->capacity_s += strtod(capacity_s, NULL);
}

/* A C line: one round's ceiling, added to the rounds before (as parse_child_line does). */
static void parse_ceiling_line(char **f)
{
    int w = find_workload(f[1], strlen(f[1]));
    unsigned copies = (unsigned)strtoul(f[2], NULL, 10);
    ceiling_row *c = (ceiling_row *)find_ceiling(w, copies);
    if (w < 0 || (c == NULL && nceilings == N_WL * MAX_WORKER_COUNTS))
        return;
    if (c == NULL) {
        c = &ceilings[nceilings++];
        *c = (ceiling_row){.wl = w, .copies = copies};
    }
    if (c->rounds == MAX_ROUNDS)
        return;
    round_cpu_add(&c->cpu, f[7], f[8]);
    c->others = wb_others_share(&c->cpu);
    c->reps += atoi(f[3]);
    c->round_median[c->rounds++] = strtod(f[4], NULL);
    c->median = median(c->round_median, c->rounds);
    if (c->rounds == 1 || strcmp(f[9], "ok") != 0) {
        snprintf(c->status, sizeof(c->status), "%s", f[9]);
        snprintf(c->answer, sizeof(c->answer), "%s", f[10]);
    }
}

static const ceiling_row *find_ceiling(int wl, unsigned copies)
{
    for (int i = 0; i < nceilings; i++)
        if (ceilings[i].wl == wl && ceilings[i].copies == copies)
            return &ceilings[i];
    return NULL;
}

/* The ceiling for P = copies: P times one copy's time alone (the serial row, measured in the same
 * rounds) over the time of the P copies together; NAN if either is missing or failed. */
static double ceiling_of(int wl, unsigned copies)
{
    const ceiling_row *c = find_ceiling(wl, copies);
    const cell *serial = find_cell(wl, S_SERIAL, 0);
    if (!c || strcmp(c->status, "ok") != 0 || c->reps == 0 || c->median <= 0 || !cell_ok(serial))
        return NAN;
    return copies * serial->median / c->median;
}

static void parse_child_line(char *line, int expect_sched)
{
    char *f[19];
    int n = split_tabs(line, f, 19);
    if (n == 3 && strcmp(f[0], "I") == 0) {
        int w = find_workload(f[1], strlen(f[1]));
        if (w >= 0 && !descriptions[w][0])
            snprintf(descriptions[w], sizeof(descriptions[w]), "%s", f[2]);
        return;
    }
    if (n == 12 && strcmp(f[0], "W") == 0) {
        int w = find_workload(f[1], strlen(f[1]));
        if (w < 0)
            return;
        profile_row *pr = &profiles[w];
        pr->have = true;
        pr->workers = (unsigned)strtoul(f[2], NULL, 10);
        pr->p.work_s = strtod(f[3], NULL);
        pr->p.span_s = strtod(f[4], NULL);
        pr->p.parallelism = strtod(f[5], NULL);
        pr->p.burdened_span_s = strtod(f[6], NULL);
        pr->p.strands = strtoull(f[7], NULL, 10);
        pr->p.steals = strtoull(f[8], NULL, 10);
        pr->p.elapsed_s = strtod(f[9], NULL);
        pr->p.overhead_per_strand_s = strtod(f[10], NULL);
        snprintf(pr->status, sizeof(pr->status), "%s", f[11]);
        return;
    }
    if (n == 11 && strcmp(f[0], "C") == 0) {
        parse_ceiling_line(f);
        return;
    }
    if (n != 18 || strcmp(f[0], "R") != 0)
        return;
    int w = find_workload(f[1], strlen(f[1]));
    int s = find_sched(f[2], strlen(f[2]));
    if (w < 0 || s < 0)
        return;
    if (s == S_WS || s == S_WS_LOCKED)
        s = expect_sched; /* the child names its deque by what it was linked with */
    cell *c = add_cell(w, s, (unsigned)strtoul(f[3], NULL, 10));
    if (c->rounds == MAX_ROUNDS)
        return;
    double min = strtod(f[6], NULL), max = strtod(f[7], NULL);
    c->min = c->rounds == 0 || min < c->min ? min : c->min;
    c->max = c->rounds == 0 || max > c->max ? max : c->max;
    c->reps += atoi(f[4]);
    c->round_median[c->rounds++] = strtod(f[5], NULL);
    c->median = median(c->round_median, c->rounds);
    /* The counters: the mean over the rounds; the depth: the most. */
    counters *sum = &c->round_sum;
    double depth = strtod(f[16], NULL);
    sum->spawns += strtod(f[8], NULL);
    sum->steals += strtod(f[9], NULL);
    sum->attempts += strtod(f[10], NULL);
    sum->parks += strtod(f[11], NULL);
    sum->depth = depth > sum->depth ? depth : sum->depth;
    round_cpu_add(&c->cpu, f[12], f[13]);
    c->c = (counters){.spawns = sum->spawns / c->rounds,
                      .steals = sum->steals / c->rounds,
                      .attempts = sum->attempts / c->rounds,
                      .parks = sum->parks / c->rounds,
                      .depth = sum->depth,
                      .others = wb_others_share(&c->cpu)};
    if (c->rounds == 1 || strcmp(f[14], "ok") != 0) { /* a failed round marks the cell */
        snprintf(c->status, sizeof(c->status), "%s", f[14]);
        snprintf(c->answer, sizeof(c->answer), "%s", f[15]);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Driver: child processes                                                                   */
/* ---------------------------------------------------------------------------------------- */

static char self_path[PATH_MAX];

static void find_self(const char *argv0)
{
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
    if (n > 0) {
        self_path[n] = '\0';
        return;
    }
    snprintf(self_path, sizeof(self_path), "%s", argv0);
}

/* The binary measuring `sched`: this one, or its sibling built against the other deque. The
 * typed tasks are measured on the split deque, the library as shipped. */
static void exe_for(int sched, char *buf, size_t len)
{
    if ((sched == S_WS_STACK ? S_WS : sched) != OTHER_WS) {
        snprintf(buf, len, "%s", self_path);
        return;
    }
    const char *slash = strrchr(self_path, '/');
    int dir = slash ? (int)(slash - self_path) + 1 : 0;
    snprintf(buf, len, "%.*s%s", dir, self_path, OTHER_EXE);
}

#ifndef WB_LIBEXEC_DIR
#define WB_LIBEXEC_DIR "../libexec/worksteal" /* where an install puts them, from bin/ */
#endif

/* Finds the benchmark program `name`: next to this one (the build tree), or in the installed
 * libexec directory relative to it. False if neither has it. */
static bool find_sibling(const char *name, char *exe, size_t len)
{
    const char *slash = strrchr(self_path, '/');
    int dir = slash ? (int)(slash - self_path) + 1 : 0;
    snprintf(exe, len, "%.*s%s", dir, self_path, name);
    if (access(exe, X_OK) == 0)
        return true;
    snprintf(exe, len, "%.*s%s/%s", dir, self_path, WB_LIBEXEC_DIR, name);
    return access(exe, X_OK) == 0;
}

/* Runs the benchmark program `name` with the given arguments, its output interleaved with ours.
 * Returns its exit status; 0 if it is not there (the section is skipped with a message: a
 * partial copy of the programs is no failed measurement), -1 if it could not run. */
/* Appends what fd gives until its end to *buf (NUL-terminated, grown with realloc), echoing it
 * to our stdout. */
static void tee_fd(int fd, char **buf, size_t *len)
{
    char chunk[4096];
    ssize_t r;
    while ((r = read(fd, chunk, sizeof(chunk))) != 0) {
        if (r < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        fwrite(chunk, 1, (size_t)r, stdout);
        fflush(stdout);
        char *bigger = realloc(*buf, *len + (size_t)r + 1);
        if (bigger == NULL)
            continue; /* the output still reaches stdout; the plot loses it */
        memcpy(bigger + *len, chunk, (size_t)r);
        *len += (size_t)r;
        bigger[*len] = '\0';
        *buf = bigger;
    }
}

/* Runs the program `name` found next to this one with args. Its output goes to ours and, when
 * captured is not NULL, to *captured too (malloc'd, NUL-terminated, or NULL; the caller frees
 * it), for the plot. Returns its exit status. */
static int run_sibling(const char *name, const char *const args[], char **captured)
{
    char exe[PATH_MAX + 64];
    if (!find_sibling(name, exe, sizeof(exe))) {
        printf("section skipped: %s is neither next to this program nor in %s/ beside it\n"
               "(the build tree has it in build/bench/, an install in libexec/worksteal/).\n",
               name, WB_LIBEXEC_DIR);
        return 0;
    }
    const char *argv[16] = {exe};
    for (int i = 0; args[i] != NULL && i < 14; i++)
        argv[i + 1] = args[i];
    int out[2] = {-1, -1};
    if (captured != NULL && pipe(out) != 0)
        captured = NULL;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (captured != NULL) {
            close(out[0]);
            dup2(out[1], STDOUT_FILENO);
            close(out[1]);
        }
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    if (captured != NULL) {
        close(out[1]);
        size_t len = 0;
        *captured = NULL;
        if (pid > 0)
            tee_fd(out[0], captured, &len);
        close(out[0]);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The demo's last four sections: parallel loops against OpenMP, external work, futures against
 * fork-join, the mutex pool and Java's ForkJoinPool, and phase-structured programs against OpenMP
 * tasks; with --quick, their smoke runs. */
static void read_loop_output(const char *out, const char *const names[], int nnames);
static void read_external_output(const char *out);
static void read_futures_output(const char *out);

static bool run_extras(bool quick)
{
    static const char *const loop_args[] = {"--reps",       "3",  "--workloads", "sum,map,tri",
                                            "--sweep-step", "16", NULL};
    static const char *const loop_names[] = {"sum", "map", "tri"}; /* as in loop_args */
    static const char *const external_args[] = {"--reps", "3", "--samples", "2000", NULL};
    static const char *const quick_args[] = {"--quick", NULL};
    if (quick)
        printf("\n== parallel loops: bench_loop --quick\n");
    else
        printf("\n== parallel loops: bench_loop --reps 3 --workloads sum,map,tri --sweep-step 16 "
               "(the full sweep: bench_loop)\n");
    char *out = NULL;
    int a = run_sibling("bench_loop", quick ? quick_args : loop_args, &out);
    if (out != NULL && a == 0)
        read_loop_output(out, loop_names, quick ? 0 : 3); /* the plot's loop bars */
    free(out);
    out = NULL;
    if (quick)
        printf("\n== external work: bench_external --quick\n");
    else
        printf("\n== external work: bench_external --reps 3 --samples 2000 "
               "(the full run: bench_external)\n");
    int b = run_sibling("bench_external", quick ? quick_args : external_args, &out);
    if (out != NULL && b == 0)
        read_external_output(out); /* the plot's external-work bars */
    free(out);
    static const char *const futures_args[] = {"--rounds", "3", NULL};
    if (quick)
        printf("\n== futures: bench_futures --quick\n");
    else
        printf("\n== futures: bench_futures --rounds 3 (the full run: bench_futures)\n");
    out = NULL;
    int c = run_sibling("bench_futures", quick ? quick_args : futures_args, &out);
    if (out != NULL && c == 0)
        read_futures_output(out); /* the plot's futures bars */
    free(out);
    /* Its --quick is the demo's short form (every shape, the coarse ones included), and --smoke
     * its test's. */
    static const char *const phases_args[] = {"--quick", NULL};
    static const char *const phases_smoke[] = {"--smoke", NULL};
    if (quick)
        printf("\n== phases: bench_phases --smoke\n");
    else
        printf("\n== phases and sparse LU against OpenMP tasks: bench_phases --quick (the full "
               "run: bench_phases)\n");
    int d = run_sibling("bench_phases", quick ? phases_smoke : phases_args, NULL);
    return a == 0 && b == 0 && c == 0 && d == 0;
}

/* Whether the serial child of workload w measures its ceilings: by default on fib, nqueens and uts,
 * the workloads whose 2-worker speedup the goals judge; --ceiling adds the others (P copies of a
 * sort hold P inputs), --no-ceiling drops them all. */
static bool ceiling_wanted(const options *o, int w)
{
    if (o->ceiling != CEIL_DEFAULT)
        return o->ceiling == CEIL_ALL;
    const char *name = workloads[w]->name;
    return strcmp(name, "fib") == 0 || strcmp(name, "nqueens") == 0 || strcmp(name, "uts") == 0;
}

/* The reps of round `round`: the requested reps shared out over the rounds, the first rounds
 * taking one more when they do not divide evenly. */
static int round_reps(const options *o, int round)
{
    return o->reps / o->rounds + (round < o->reps % o->rounds);
}

/* Runs one child for (workload w, scheduler sched), round `round` (see the top); adds to its
 * cells. On a crash or timeout, writes `why` into the cells the child did not report. */
static void run_child(const options *o, int w, int sched, int round)
{
    char exe[PATH_MAX + 32];
    exe_for(sched, exe, sizeof(exe));
    unsigned expect_workers[MAX_WORKER_COUNTS];
    int nexpect = 0;
    if (sched == S_SERIAL)
        expect_workers[nexpect++] = 0;
    else
        for (int i = 0; i < o->nworkers; i++)
            expect_workers[nexpect++] = o->workers[i];

    int reported[MAX_WORKER_COUNTS]; /* each cell's rounds before this one */
    for (int i = 0; i < nexpect; i++) {
        const cell *c = find_cell(w, sched, expect_workers[i]);
        reported[i] = c ? c->rounds : 0;
    }
    char why[64] = "";
    if (access(exe, X_OK) != 0) {
        snprintf(why, sizeof(why), "n/a");
        for (int i = 0; i < nexpect; i++) {
            cell *c = add_cell(w, sched, expect_workers[i]);
            snprintf(c->status, sizeof(c->status), "n/a");
            snprintf(c->answer, sizeof(c->answer), "%s not found", OTHER_EXE);
        }
        return;
    }

    /* argv: exe --child S --workloads W --workers L --reps N --budget B --size W=N [--profile]
     * [--ceiling] */
    char workers_arg[MAX_WORKER_COUNTS * 12] = "", reps_arg[16], budget_arg[32], size_arg[96];
    for (int i = 0; i < o->nworkers; i++) {
        size_t used = strlen(workers_arg);
        snprintf(workers_arg + used, sizeof(workers_arg) - used, "%s%u", i ? "," : "",
                 o->workers[i]);
    }
    snprintf(reps_arg, sizeof(reps_arg), "%d", round_reps(o, round));
    snprintf(budget_arg, sizeof(budget_arg), "%g", o->budget / o->rounds);
    snprintf(size_arg, sizeof(size_arg), "%s=%ld", workloads[w]->name, workload_size(o, w));
    const char *child_sched = (sched == S_WS || sched == S_WS_LOCKED) ? "ws" : sched_names[sched];
    const char *argv[] = {exe,         "--child",   child_sched, "--workloads", workloads[w]->name,
                          "--workers", workers_arg, "--reps",    reps_arg,      "--budget",
                          budget_arg,  "--size",    size_arg,    NULL,          NULL,
                          NULL};
    int extra = 13;
    if ((o->profile || workloads[w]->profile_by_default) && sched == S_WS && round == 0)
        argv[extra++] = "--profile";
    if (sched == S_SERIAL && ceiling_wanted(o, w))
        argv[extra++] = "--ceiling";

    int fds[2];
    if (pipe(fds) != 0) {
        perror("ws-bench: pipe");
        exit(2);
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("ws-bench: fork");
        exit(2);
    }
    if (pid == 0) {
        close(fds[0]);
        if (dup2(fds[1], STDOUT_FILENO) < 0)
            _exit(127);
        close(fds[1]);
        execv(exe, (char *const *)argv); /* execv does not modify them */
        fprintf(stderr, "ws-bench: cannot run %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    close(fds[1]);

    char buf[8192];
    size_t have = 0;
    double deadline = wb_now() + o->timeout;
    bool timed_out = false;
    for (;;) {
        double left = deadline - wb_now();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
        int pr = poll(&pfd, 1, left > 1 ? 1000 : (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            continue;
        ssize_t got = read(fds[0], buf + have, sizeof(buf) - 1 - have);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        have += (size_t)got;
        buf[have] = '\0';
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n'))) {
            *nl = '\0';
            parse_child_line(line, sched);
            line = nl + 1;
        }
        have = strlen(line);
        memmove(buf, line, have + 1);
        if (have == sizeof(buf) - 1)
            have = 0; /* an absurdly long line: drop it */
    }
    close(fds[0]);
    if (timed_out) {
        kill(pid, SIGKILL);
        snprintf(why, sizeof(why), "timeout");
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!timed_out && WIFSIGNALED(status))
        snprintf(why, sizeof(why), "crashed (signal %d)", WTERMSIG(status));
    else if (!timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 127)
        snprintf(why, sizeof(why), "could not start");
    for (int i = 0; i < nexpect; i++) {
        const cell *had = find_cell(w, sched, expect_workers[i]);
        if (had && had->rounds > reported[i])
            continue;
        cell *c = add_cell(w, sched, expect_workers[i]);
        snprintf(c->status, sizeof(c->status), "%s", why[0] ? why : "no result");
        snprintf(c->answer, sizeof(c->answer), "the measuring process did not report");
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Driver: output                                                                            */
/* ---------------------------------------------------------------------------------------- */

/* How many times faster `c` is than `base` (their time over ours); NAN if either is missing. */
static double ratio(const cell *base, const cell *c)
{
    if (!cell_ok(base) || !cell_ok(c) || c->median <= 0)
        return NAN;
    return base->median / c->median;
}

static void put_ratio(double r, int width)
{
    if (isnan(r))
        printf("%*s", width, "-");
    else
        printf("%*.2f", width, r);
}

static void print_profile(const options *o, int w)
{
    const profile_row *pr = &profiles[w];
    if (!pr->have) {
        printf("  work/span: not measured (needs the ws scheduler in --schedulers)\n");
        return;
    }
    if (strcmp(pr->status, "n/a") == 0) {
        printf("  work/span: n/a (not a fork-join computation)\n");
        return;
    }
    if (strcmp(pr->status, "ok") != 0) {
        printf("  work/span: the profiled run failed (%s)\n", pr->status);
        return;
    }
    char t1[32], tinf[32], tb[32];
    printf("  work/span (ws_pool_profile, %u workers, %llu strands): T1 = %s, Tinf = %s, "
           "parallelism T1/Tinf = %.1f, burdened span %s\n",
           pr->workers, (unsigned long long)pr->p.strands, fmt_time(pr->p.work_s, t1, sizeof(t1)),
           fmt_time(pr->p.span_s, tinf, sizeof(tinf)), pr->p.parallelism,
           fmt_time(pr->p.burdened_span_s, tb, sizeof(tb)));
    double strand_ns = pr->p.strands > 0 ? pr->p.work_s * 1e9 / (double)pr->p.strands : 0;
    printf("  profiler overhead %.0f ns per strand (the mean strand is %.0f ns)",
           pr->p.overhead_per_strand_s * 1e9, strand_ns);
    if (workloads[w]->expected_parallelism != NULL) {
        double low, high;
        workloads[w]->expected_parallelism(workload_size(o, w), &low, &high);
        printf("; expected parallelism (analytic) %.0f..%.0f", low, high);
    }
    printf("\n");
    printf("  predicted speedup bound min(P, T1/Tinf) (burdened estimate):");
    for (int i = 0; i < o->nworkers; i++)
        printf(" P=%u: %.2f (%.2f)", o->workers[i], ws_profile_speedup_bound(&pr->p, o->workers[i]),
               ws_profile_burdened_speedup(&pr->p, o->workers[i]));
    printf("\n");
}

static void put_others(const cell *c)
{
    if (c->c.others < 0)
        printf(" %6s", "-");
    else
        printf(" %5.0f%%", 100 * c->c.others);
}

/* The ceiling line: what P workers can gain at best on this workload on this machine. */
static void print_ceiling(const options *o, int w)
{
    const cell *serial = find_cell(w, S_SERIAL, 0);
    bool any = false;
    for (int i = 0; i < o->nworkers; i++) {
        const ceiling_row *c = find_ceiling(w, o->workers[i]);
        if (c == NULL)
            continue;
        if (!any)
            printf("  ceiling (P serial copies side by side; P x one copy's time alone over "
                   "theirs):");
        any = true;
        double x = ceiling_of(w, c->copies);
        const char *star = c->copies > online_cpus() ? "*" : "";
        if (isnan(x)) {
            printf(" P=%u%s: %s%s%s", c->copies, star, c->status, c->answer[0] ? ": " : "",
                   c->answer);
            continue;
        }
        char alone[32], together[32];
        printf(" P=%u%s: %.2fx (%s alone, %s for %u)", c->copies, star, x,
               fmt_time(serial->median, alone, sizeof(alone)),
               fmt_time(c->median, together, sizeof(together)), c->copies);
        if (c->others > WB_DISTURBED)
            printf(" disturbed: others %.0f%%", 100 * c->others);
    }
    if (any)
        printf("\n");
}

/* The space bound of work stealing, S_P <= P * S_1: the deepest deque of any worker on P
 * workers against the 1-worker (serial-order) depth S_1. */
static void print_space(const options *o, int w)
{
    const cell *one = find_cell(w, S_WS, 1);
    if (!o->sched[S_WS] || one == NULL || !cell_ok(one) || one->c.depth <= 0)
        return;
    printf("  space: deepest deque S_1 = %.0f tasks on 1 worker;", one->c.depth);
    for (int i = 0; i < o->nworkers; i++) {
        const cell *c = find_cell(w, S_WS, o->workers[i]);
        if (c == NULL || !cell_ok(c) || o->workers[i] == 1)
            continue;
        printf(" P=%u: deepest %.0f (all %u deques <= %.0f, bound P*S_1 = %.0f)%s", o->workers[i],
               c->c.depth, o->workers[i], c->c.depth * o->workers[i], one->c.depth * o->workers[i],
               c->c.depth <= one->c.depth ? "" : " ABOVE S_1");
    }
    printf("\n");
}

/* ws against the peers at each worker count: the peer's time over ws's (above 1: ws is faster). */
static void print_peers(const options *o, int w)
{
    bool peers = o->sched[S_TBB] || o->sched[S_RAYON];
    if (peers && !workloads[w]->has_peers) {
        printf("  tbb, rayon: n/a (the peers have fib, nqueens and uts only)\n");
        return;
    }
    if (!peers || !o->sched[S_WS])
        return;
    printf("  ws against the peers, their time over ws's (above 1: ws is faster):\n");
    for (int i = 0; i < o->nworkers; i++) {
        const cell *ws = find_cell(w, S_WS, o->workers[i]);
        printf("    %3u worker%s", o->workers[i], o->workers[i] > 1 ? "s" : " ");
        for (int s = S_TBB; s <= S_RAYON; s++) {
            if (!o->sched[s])
                continue;
            printf("   x %-5s", sched_names[s]);
            put_ratio(ratio(find_cell(w, s, o->workers[i]), ws), 6);
        }
        printf("\n");
    }
}

/* The typed tasks against ws_join / ws_spawn at each worker count: ws's time over ws-stack's
 * (above 1: the typed tasks are faster). */
static void print_stack(const options *o, int w)
{
    if (!o->sched[S_WS_STACK])
        return;
    if (!workloads[w]->has_stack) {
        printf("  ws-stack: n/a (stack-task versions of fib, nqueens and uts only)\n");
        return;
    }
    if (!o->sched[S_WS])
        return;
    printf("  ws's time over ws-stack's (above 1: the typed tasks are faster):");
    for (int i = 0; i < o->nworkers; i++) {
        printf("  %u worker%s", o->workers[i], o->workers[i] > 1 ? "s" : "");
        put_ratio(ratio(find_cell(w, S_WS, o->workers[i]), find_cell(w, S_WS_STACK, o->workers[i])),
                  6);
    }
    printf("\n");
}

/* When even worksteal's best row is slower than the serial program, say why, so that the table
 * (and the plot) are not read as the scheduler failing. */
static void print_below_serial(const options *o, int w)
{
    const cell *serial = find_cell(w, S_SERIAL, 0);
    double best = NAN;
    for (int i = 0; i < o->nworkers; i++) {
        double sp = ratio(serial, find_cell(w, S_WS, o->workers[i]));
        if (!isnan(sp) && (isnan(best) || sp > best))
            best = sp;
    }
    if (isnan(best) || best >= 1.0)
        return;
    const char *name = workloads[w]->name;
    if (strcmp(name, "fib") != 0 && strcmp(name, "nqueens") != 0 && strcmp(name, "batch") != 0)
        printf("  x serial below 1 on every row: unexpected for this workload, whose tasks are\n"
               "  large; see the others column (a busy machine) and run it again.\n");
    else if (strcmp(name, "batch") == 0)
        printf("  x serial below 1: the serial row is a plain loop calling each job, which takes\n"
               "  a few ns; every scheduler pays a submission (a record and a queue) per job, so\n"
               "  this table measures the cost of a submission, not a speedup.\n");
    else
        printf("  x serial below 1: a task here does a few ns of work, less than a spawn and join\n"
               "  cost, while the serial program makes plain calls; this workload measures the\n"
               "  cost of a spawn (compare the schedulers: x central, x omp) and how it scales\n"
               "  (x 1 wkr). Real programs stop forking below a grain size (examples/fib.c).\n");
}

static void print_table(const options *o, int w)
{
    unsigned cpus = online_cpus();
    printf("\n== %s: %s\n", workloads[w]->name,
           descriptions[w][0] ? descriptions[w] : workloads[w]->title);
    printf("%8s %-10s %10s %4s %8s %8s %9s %9s %7s %7s %6s %6s  %s\n", "workers", "scheduler",
           "median", "reps", "x serial", "x 1 wkr", "x central", "x locked", "x omp", "steal%",
           "parks", "others", "check");
    const cell *serial = find_cell(w, S_SERIAL, 0);
    char t[32];
    if (o->sched[S_SERIAL] && serial) {
        printf("%8s %-10s %10s %4d %8s %8s %9s %9s %7s %7s %6s", "-", "serial",
               cell_ok(serial) ? fmt_time(serial->median, t, sizeof(t)) : "-", serial->reps,
               cell_ok(serial) ? "1.00" : "-", "-", "-", "-", "-", "-", "-");
        put_others(serial);
        printf("  %s%s%s\n", serial->status, serial->answer[0] ? ": " : "", serial->answer);
    }
    for (int i = 0; i < o->nworkers; i++) {
        unsigned p = o->workers[i];
        for (int s = S_CENTRAL; s < S_COUNT; s++) {
            if (!o->sched[s])
                continue;
            const cell *c = find_cell(w, s, p);
            if (!c || strcmp(c->status, "n/a") == 0)
                continue; /* the missing ws-bench-locked is reported once, at the end */
            char wk[16];
            snprintf(wk, sizeof(wk), "%u%s", p, p > cpus ? "*" : "");
            printf("%8s %-10s %10s %4d", wk, sched_names[s],
                   cell_ok(c) ? fmt_time(c->median, t, sizeof(t)) : "-", c->reps);
            put_ratio(ratio(serial, c), 9);
            put_ratio(ratio(find_cell(w, s, 1), c), 9);
            put_ratio(ratio(find_cell(w, S_CENTRAL, p), c), 10);
            put_ratio(ratio(find_cell(w, S_WS_LOCKED, p), c), 10);
            put_ratio(ratio(find_cell(w, S_OMP, p), c), 8);
            if (is_worksteal(s) && cell_ok(c) && c->c.spawns > 0)
                printf(" %7.3f", 100.0 * c->c.steals / c->c.spawns);
            else
                printf(" %7s", "-");
            if ((is_worksteal(s) || s == S_CENTRAL) && cell_ok(c))
                printf(" %6.0f", c->c.parks);
            else
                printf(" %6s", "-");
            put_others(c);
            /* The answer is shown once, on the serial row; other rows say ok, or what failed. */
            bool ok = strcmp(c->status, "ok") == 0;
            printf("  %s%s%s\n", c->status, ok ? "" : ": ", ok ? "" : c->answer);
        }
    }
    print_peers(o, w);
    print_stack(o, w);
    print_ceiling(o, w);
    print_space(o, w);
    print_below_serial(o, w);
    if (o->profile || (workloads[w]->profile_by_default && o->sched[S_WS]))
        print_profile(o, w);
    fflush(stdout);
}

static void write_csv(const options *o)
{
    FILE *f = fopen(o->csv, "w");
    if (!f) {
        fprintf(stderr, "ws-bench: cannot write %s: %s\n", o->csv, strerror(errno));
        return;
    }
    fprintf(f, "workload,size,scheduler,workers,reps,median_s,min_s,max_s,speedup_vs_serial,"
               "spawns_per_run,steals_per_run,steal_attempts_per_run,parks_per_run,others_cpu,"
               "status,ceiling\n");
    for (size_t i = 0; i < ncells; i++) {
        const cell *c = &cells[i];
        double sp = ratio(find_cell(c->wl, S_SERIAL, 0), c);
        fprintf(f, "%s,%ld,%s,%u,%d,%.6f,%.6f,%.6f,", workloads[c->wl]->name,
                workload_size(o, c->wl), sched_names[c->sched], c->workers, c->reps, c->median,
                c->min, c->max);
        if (isnan(sp))
            fprintf(f, ",");
        else
            fprintf(f, "%.4f,", sp);
        fprintf(f, "%.0f,%.0f,%.0f,%.0f,", c->c.spawns, c->c.steals, c->c.attempts, c->c.parks);
        if (c->c.others >= 0)
            fprintf(f, "%.3f", c->c.others);
        fprintf(f, ",%s,", c->status);
        double cap = c->workers > 1 ? ceiling_of(c->wl, c->workers) : NAN;
        if (!isnan(cap))
            fprintf(f, "%.4f", cap);
        fprintf(f, "\n");
    }
    fclose(f);
    printf("\nResults written to %s\n", o->csv);
}

static bool on_path(const char *prog)
{
    const char *path = getenv("PATH");
    if (!path)
        return false;
    char buf[PATH_MAX];
    for (const char *p = path; *p;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? p : ".", prog);
        if (access(buf, X_OK) == 0)
            return true;
        if (!end)
            break;
        p = end + 1;
    }
    return false;
}

/* The CSV path with its extension replaced. */
static void sibling_file(const char *csv, const char *ext, char *buf, size_t len)
{
    const char *dot = strrchr(csv, '.'), *slash = strrchr(csv, '/');
    int base = (dot && (!slash || dot > slash)) ? (int)(dot - csv) : (int)strlen(csv);
    snprintf(buf, len, "%.*s%s", base, csv, ext);
}

/* ---- the plot ----
 *
 * One picture of what the demo claims, in two panels with one colour per runtime throughout:
 *   left   the time of every other runtime relative to worksteal's, per workload, on the
 *          largest worker count (log scale; above 1: slower than worksteal), with the loop
 *          and external-work sections' comparisons (OpenMP's static loop, the mutex-queue
 *          pool) when they ran;
 *   right  the cost of a fork on one worker, per runtime, for fib and nqueens (a join per node):
 * the time above the serial program's, divided by the forks worksteal counted. gnuplot draws it
 * when it is installed; the plot is optional, the tables say everything. */

#define MAX_EXTRA_BARS 16

/* A comparison from the closing sections: a peer's time over worksteal's. */
typedef struct extra_bar {
    char label[48];
    int sched; /* the colour: S_OMP for OpenMP's loop, S_CENTRAL for the mutex-queue pool */
    double rel;
} extra_bar;
static extra_bar extra_bars[MAX_EXTRA_BARS];
static int n_extra_bars;

static void add_extra_bar(const char *label, int sched, double rel)
{
    if (n_extra_bars == MAX_EXTRA_BARS || !(rel > 0) || !isfinite(rel))
        return;
    extra_bar *b = &extra_bars[n_extra_bars++];
    snprintf(b->label, sizeof(b->label), "%s", label);
    b->sched = sched;
    b->rel = rel;
}

/* bench_loop's output: each section's last "automatic / omp static = R" (its largest worker
 * count; R is worksteal's time over OpenMP's), labelled with the section's workload name. */
static void read_loop_output(const char *out, const char *const names[], int nnames)
{
    static const char key[] = "automatic / omp static = ";
    int section = -1;
    double last = NAN;
    for (const char *line = out; *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) + 1 : strlen(line);
        char buf[512];
        snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1), line);
        const char *r = strstr(buf, key);
        bool heading = buf[0] != ' ' && strstr(buf, ", N = ") != NULL;
        if (heading && section >= 0 && section < nnames && !isnan(last)) {
            char label[48];
            snprintf(label, sizeof(label), "loop %s", names[section]);
            add_extra_bar(label, S_OMP, 1.0 / last);
            last = NAN;
        }
        if (heading)
            section++;
        else if (r != NULL)
            last = strtod(r + strlen(key), NULL);
        line += len;
    }
    if (section >= 0 && section < nnames && !isnan(last)) {
        char label[48];
        snprintf(label, sizeof(label), "loop %s", names[section]);
        add_extra_bar(label, S_OMP, 1.0 / last);
    }
}

/* bench_external's output: the injector's throughput against the mutex queue (first producer
 * row, ws_submit/mutex) and each "worksteal/mutex" p50 latency ratio, labelled by section. */
static void read_external_output(const char *out)
{
    char title[40] = "";
    bool throughput_row = false;
    for (const char *line = out; *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        char buf[512];
        snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1), line);
        int num, used = 0;
        if (sscanf(buf, "%d. %n", &num, &used) == 1 && used > 0) {
            size_t t = strcspn(buf + used, ":");
            snprintf(title, sizeof(title), "%.*s", (int)(t < 30 ? t : 30), buf + used);
            throughput_row = false;
        } else if (strstr(buf, "ws_submit/mutex") != NULL) {
            throughput_row = true; /* the header; the next row is one producer's */
        } else if (throughput_row) {
            double v[6];
            int producers;
            if (sscanf(buf, "%d %lf %lf %lf %lf %lfx", &producers, &v[0], &v[1], &v[2], &v[3],
                       &v[4]) == 6) {
                char label[48];
                snprintf(label, sizeof(label), "%s (%d producer)", title, producers);
                add_extra_bar(label, S_CENTRAL, v[4]);
            }
            throughput_row = false;
        } else if (strncmp(buf, "   worksteal/mutex", 18) == 0) {
            double x = strtod(buf + 18, NULL);
            char label[48];
            snprintf(label, sizeof(label), "%s p50", title);
            add_extra_bar(label, S_CENTRAL, 1.0 / x);
        }
        line += len + (eol != NULL);
    }
}

/* The runtimes the plot can show, in legend order, each with its fixed colour: the schedulers,
 * and Java's ForkJoinPool, which only the futures section measures (P_JAVA). */
enum { P_JAVA = S_COUNT, P_COUNT };
static const int plot_scheds[] = {S_WS,  S_WS_STACK, S_WS_LOCKED, S_CENTRAL, S_OMP,
                                  S_TBB, S_RAYON,    P_JAVA,      S_SERIAL};
#define N_PLOT_SCHEDS ((int)(sizeof(plot_scheds) / sizeof(plot_scheds[0])))
static const char *const plot_colour[P_COUNT] = {
    [S_SERIAL] = "#777777", [S_CENTRAL] = "#999999",  [S_WS_LOCKED] = "#56B4E9",
    [S_WS] = "#0072B2",     [S_WS_STACK] = "#CC79A7", [S_OMP] = "#E69F00",
    [S_TBB] = "#009E73",    [S_RAYON] = "#D55E00",    [P_JAVA] = "#F0E442",
};
static const char *const plot_label[P_COUNT] = {
    [P_JAVA] = "Java ForkJoinPool (futures)",
    [S_SERIAL] = "serial code (no runtime)",
    [S_CENTRAL] = "central queue (mutex)",
    [S_WS_LOCKED] = "worksteal, mutex deque",
    [S_WS] = "worksteal",
    [S_WS_STACK] = "worksteal, typed tasks",
    [S_OMP] = "OpenMP (libgomp)",
    [S_TBB] = "oneTBB",
    [S_RAYON] = "Rayon",
};

/* bench_futures's output: each table's last row (its largest worker count), cq/fut (the mutex
 * pool's futures over worksteal's) and java/fut (ForkJoinPool's), labelled "futures" and the
 * table's workload. Rows: workers, six times, fut/spawn, cq/fut, java/fut, ns/fut. */
static void read_futures_output(const char *out)
{
    char label[48] = "", last[512] = "";
    for (const char *line = out;; line++) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        char buf[512];
        snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1), line);
        unsigned workers;
        bool row = sscanf(buf, "%u", &workers) == 1 && label[0] != '\0';
        if (row)
            snprintf(last, sizeof(last), "%s", buf);
        if ((!row || eol == NULL) && last[0] != '\0') { /* the table ended: its last row */
            char cq[32], java[32];
            if (sscanf(last, "%*s %*s %*s %*s %*s %*s %*s %*s %31s %31s", cq, java) == 2) {
                add_extra_bar(label, S_CENTRAL, strtod(cq, NULL));
                add_extra_bar(label, P_JAVA, strtod(java, NULL));
            }
            last[0] = '\0';
        }
        if (strstr(buf, " futures per run;") != NULL) {
            char name[24];
            if (sscanf(buf, "%23[a-z]", name) == 1)
                snprintf(label, sizeof(label), "futures %s", name);
        } else if (!row && strncmp(buf, "workers", 7) != 0) {
            label[0] = '\0';
        }
        if (eol == NULL)
            break;
        line = eol;
    }
}

/* One panel's table: a row per workload or comparison, a column per runtime shown. */
typedef struct plot_table {
    int scheds[N_PLOT_SCHEDS], nscheds;
    char row[N_WL + MAX_EXTRA_BARS][48];
    double v[N_WL + MAX_EXTRA_BARS][N_PLOT_SCHEDS]; /* NAN: not measured */
    int nrows;
} plot_table;

/* Drops the runtimes without a single value, so that no legend entry or column is empty. */
static void plot_table_prune(plot_table *t)
{
    int kept = 0;
    for (int k = 0; k < t->nscheds; k++) {
        bool any = false;
        for (int r = 0; r < t->nrows; r++)
            any |= !isnan(t->v[r][k]);
        if (!any)
            continue;
        for (int r = 0; r < t->nrows; r++)
            t->v[r][kept] = t->v[r][k];
        t->scheds[kept++] = t->scheds[k];
    }
    t->nscheds = kept;
}

/* The left panel: every runtime's time over worksteal's on p workers, then the closing
 * sections' comparisons. */
static void plot_relative_table(plot_table *t, const options *o, unsigned p)
{
    *t = (plot_table){.nscheds = N_PLOT_SCHEDS - 1};
    for (int k = 1; k < N_PLOT_SCHEDS; k++)
        t->scheds[k - 1] = plot_scheds[k];
    for (int w = 0; w < N_WL; w++) {
        const cell *ws = find_cell(w, S_WS, p);
        if (!o->wl[w] || !cell_ok(ws))
            continue;
        snprintf(t->row[t->nrows], sizeof(t->row[0]), "%.47s", workloads[w]->name);
        for (int k = 0; k < t->nscheds; k++) { /* ratio(base, c): base's time over c's */
            unsigned workers = t->scheds[k] == S_SERIAL ? 0 : p; /* serial's cells have 0 */
            t->v[t->nrows][k] = ratio(find_cell(w, t->scheds[k], workers), ws);
        }
        t->nrows++;
    }
    /* The closing sections' bars, one row per label (futures: the mutex pool's and Java's). */
    int first_extra = t->nrows;
    for (int i = 0; i < n_extra_bars; i++) {
        int r = first_extra;
        while (r < t->nrows && strcmp(t->row[r], extra_bars[i].label) != 0)
            r++;
        if (r == t->nrows) {
            snprintf(t->row[r], sizeof(t->row[0]), "%.47s", extra_bars[i].label);
            for (int k = 0; k < t->nscheds; k++)
                t->v[r][k] = NAN;
            t->nrows++;
        }
        for (int k = 0; k < t->nscheds; k++)
            if (t->scheds[k] == extra_bars[i].sched)
                t->v[r][k] = extra_bars[i].rel;
    }
    plot_table_prune(t);
}

/* The right panel: ns per fork above the serial program on one worker, for fib and nqueens
 * (one join per node), every runtime's time divided by the forks worksteal counted (the same
 * tree). */
static void plot_fork_table(plot_table *t, const options *o)
{
    static const char *const per_node[] = {"fib", "nqueens"}; /* a ws_join per node */
    *t = (plot_table){.nscheds = N_PLOT_SCHEDS};
    memcpy(t->scheds, plot_scheds, sizeof(plot_scheds));
    for (int w = 0; w < N_WL; w++) {
        const cell *serial = find_cell(w, S_SERIAL, 0), *ws = find_cell(w, S_WS, 1);
        bool wanted = false;
        for (size_t i = 0; i < sizeof(per_node) / sizeof(per_node[0]); i++)
            wanted |= strcmp(workloads[w]->name, per_node[i]) == 0;
        if (!o->wl[w] || !wanted || !cell_ok(serial) || !cell_ok(ws) || ws->c.spawns <= 0)
            continue;
        snprintf(t->row[t->nrows], sizeof(t->row[0]), "%.47s", workloads[w]->name);
        for (int k = 0; k < t->nscheds; k++) {
            const cell *c = find_cell(w, t->scheds[k], 1); /* serial: the baseline, no bar */
            t->v[t->nrows][k] = cell_ok(c) && t->scheds[k] != S_SERIAL
                                    ? (c->median - serial->median) / ws->c.spawns * 1e9
                                    : NAN;
        }
        t->nrows++;
    }
    plot_table_prune(t);
}

/* The table as a datablock, then "plot" with one bar series per runtime in its colour (the
 * first line is always read as the column headers: the legend's entries, when it is shown). */
static void plot_table_write(FILE *f, const plot_table *t, const char *block, const char *extra)
{
    fprintf(f, "$%s << EOD\nlabel", block);
    for (int k = 0; k < t->nscheds; k++)
        fprintf(f, " \"%s\"", plot_label[t->scheds[k]]);
    fprintf(f, "\n");
    for (int r = 0; r < t->nrows; r++) {
        fprintf(f, "\"%s\"", t->row[r]);
        for (int k = 0; k < t->nscheds; k++)
            fprintf(f, isnan(t->v[r][k]) ? " -" : " %.4g", t->v[r][k]);
        fprintf(f, "\n");
    }
    fprintf(f, "EOD\nset xrange [-0.6:%d.6]\nplot ", t->nrows - 1);
    for (int k = 0; k < t->nscheds; k++)
        fprintf(f, "%s%s%s using %d%s lc rgb '%s' title columnheader", k ? ", " : "",
                k ? "''" : "$", k ? "" : block, k + 2, k ? "" : ":xtic(1)",
                plot_colour[t->scheds[k]]);
    fprintf(f, "%s\n", extra);
}

/* A log axis that holds every value and 1, with some room. */
static void plot_log_range(FILE *f, const plot_table *t)
{
    double lo = 1, hi = 1;
    for (int r = 0; r < t->nrows; r++) {
        for (int k = 0; k < t->nscheds; k++) {
            if (!isnan(t->v[r][k]) && t->v[r][k] > 0) {
                lo = t->v[r][k] < lo ? t->v[r][k] : lo;
                hi = t->v[r][k] > hi ? t->v[r][k] : hi;
            }
        }
    }
    fprintf(f, "set logscale y\nset yrange [%.3g:%.3g]\n", lo / 1.5, hi * 1.5);
}

static void write_plot(const options *o)
{
    char gp[PATH_MAX], png[PATH_MAX];
    sibling_file(o->csv, ".gp", gp, sizeof(gp));
    sibling_file(o->csv, ".png", png, sizeof(png));
    FILE *f = fopen(gp, "w");
    if (!f) {
        fprintf(stderr, "ws-bench: cannot write %s: %s\n", gp, strerror(errno));
        return;
    }
    unsigned p = o->workers[o->nworkers - 1];
    static plot_table rel, fork;
    plot_relative_table(&rel, o, p);
    plot_fork_table(&fork, o);
    bool fork_panel = fork.nrows > 0 && fork.nscheds > 0;
    fprintf(f, "# ws-bench's picture: time relative to worksteal, and the cost of a fork.\n");
    fprintf(f, "set terminal pngcairo size %d,600 font 'sans,11'\nset output '%s'\n",
            fork_panel ? 1600 : 1150, png);
    fprintf(f, "set style data histogram\nset style histogram clustered gap 1\n"
               "set style fill solid 0.9 border -1\nset datafile missing '-'\n"
               "set grid ytics\nset xtics rotate by 30 right nomirror\n"
               "set key outside top center horizontal samplen 1.5\n");
    if (fork_panel)
        fprintf(f, "set multiplot\nset size 0.72,1\nset origin 0,0\n");
    fprintf(f,
            "set title \"Each runtime's time relative to worksteal's on %u workers (log scale; "
            "above 1: slower than worksteal)\"\nset ylabel 'time / worksteal time'\n"
            "set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lw 3 lc rgb '%s' "
            "front\n",
            p, plot_colour[S_WS]);
    plot_log_range(f, &rel);
    char ws_line[96]; /* worksteal's entry in the legend: the line at 1 */
    snprintf(ws_line, sizeof(ws_line), ", NaN with lines lw 3 lc rgb '%s' title 'worksteal (= 1)'",
             plot_colour[S_WS]);
    plot_table_write(f, &rel, "rel", ws_line);
    if (fork_panel) {
        fprintf(f, "unset arrow 1\nunset logscale y\nset size 0.28,1\n"
                   "set origin 0.72,0\nset yrange [0:*]\nset offsets 0, 0, graph 0.5, 0\n"
                   "set key inside top left vertical opaque\n"
                   "set title 'Cost of a fork, 1 worker'\n"
                   "set ylabel 'ns per fork above the serial code'\n");
        plot_table_write(f, &fork, "fork", "");
        fprintf(f, "unset multiplot\n");
    }
    fclose(f);
    if (!on_path("gnuplot")) {
        printf("Plot: gnuplot is not on PATH, so only the script %s was written.\n"
               "      Install gnuplot (Debian/Ubuntu: apt-get install gnuplot-nox), then run\n"
               "      gnuplot %s  to get %s.\n",
               gp, gp, png);
        return;
    }
    char cmd[2 * PATH_MAX + 32];
    snprintf(cmd, sizeof(cmd), "gnuplot '%s'", gp);
    if (system(cmd) == 0)
        printf("Plot: %s (script %s)\n", png, gp);
    else
        printf("Plot: gnuplot failed on %s\n", gp);
}

/* ---- how much of the machine this run gets ---- */

/* The machine is shared: other programs' threads take CPU time from the measurements, and a
 * 2-worker run cannot be twice as fast when only one CPU is free. This check spins one thread
 * for about 50 ms, then one per CPU for the same work each, and returns how many CPUs' worth of
 * throughput the second round got (the CPU count on an idle machine). */
static volatile uint64_t spin_sink;

static void *spin(void *arg)
{
    uint64_t n = *(const uint64_t *)arg, x = 1;
    for (uint64_t i = 0; i < n; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull; /* a dependent chain */
    spin_sink = x;
    return NULL;
}

static double available_cpus(void)
{
    uint64_t n = 1u << 20;
    double t1;
    for (;;) {
        double t0 = wb_now();
        spin(&n);
        t1 = wb_now() - t0;
        if (t1 > 0.02 || n > (1ull << 40))
            break;
        n *= 2;
    }
    n = (uint64_t)((double)n * 0.05 / t1);
    double t0 = wb_now();
    spin(&n);
    t1 = wb_now() - t0;
    unsigned p = online_cpus() < 64 ? online_cpus() : 64;
    pthread_t threads[64];
    unsigned started = 0;
    t0 = wb_now();
    for (; started < p; started++)
        if (pthread_create(&threads[started], NULL, spin, &n) != 0)
            break;
    for (unsigned i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    double tp = wb_now() - t0;
    return started > 0 && tp > 0 ? started * t1 / tp : 0;
}

static double cpus_at_start = -1, cpus_at_end = -1;

/* ---- the targets ---- */

/* The larger "others" share of the cells, or -1 if none is known. */
static double cells_others(const cell *const *c, int n)
{
    double others = -1;
    for (int i = 0; i < n; i++)
        others = c[i]->c.others > others ? c[i]->c.others : others;
    return others;
}

/* Why measurements with this "others" share cannot be judged, or NULL if they can: verdict.h's
 * rule, with this run's --quick and CPU check. */
static bool judge_quick, judge_busy; /* set by print_targets */

static const char *no_verdict(double others, char *buf, size_t len)
{
    return wb_no_verdict(others, judge_quick, judge_busy, buf, len);
}

static void print_target(const char *text, const cell *base, const cell *c, double goal)
{
    double value = ratio(base, c);
    if (isnan(value))
        return; /* not measured in this run (--workloads, --schedulers, --workers) */
    const cell *both[] = {base, c};
    char verdict[128];
    printf("  %-46s >= %5.2fx %7.2fx  %s\n", text, goal, value,
           wb_verdict(value >= goal, cells_others(both, 2), judge_quick, judge_busy, verdict,
                      sizeof(verdict)));
}

/* The span argument: the two mergesorts do the same work, but the sequential merge leaves a span
 * of Theta(n), so it should scale less. The verdict comes from this run's numbers. */
static void print_span_verdict(int seqm, int parm)
{
    const cell *seq1 = find_cell(seqm, S_WS, 1), *seq2 = find_cell(seqm, S_WS, 2);
    const cell *par1 = find_cell(parm, S_WS, 1), *par2 = find_cell(parm, S_WS, 2);
    double s_seq = ratio(seq1, seq2), s_par = ratio(par1, par2);
    if (isnan(s_seq) || isnan(s_par))
        return;
    const cell *all[] = {seq1, seq2, par1, par2};
    char why[96];
    const char *blocked = no_verdict(cells_others(all, 4), why, sizeof(why));
    printf("\nThe span argument: a sequential merge leaves the last merge of all n elements to\n"
           "one core, so its span is Theta(n) and its parallelism T1/Tinf only about log n;\n"
           "the parallel merge cuts the span to Theta(log^3 n). On 2 cores the predicted gap\n"
           "is small (the one unshared merge is a few %% of the work); it widens with the\n"
           "cores.\n");
    const profile_row *ps = &profiles[seqm], *pp = &profiles[parm];
    if (ps->have && pp->have && strcmp(ps->status, "ok") == 0 && strcmp(pp->status, "ok") == 0)
        printf("  measured parallelism (ws_pool_profile): %.1f with the sequential merge, %.1f\n"
               "  with the parallel merge; predicted 2-worker speedups (burdened): %.2fx, %.2fx\n",
               ps->p.parallelism, pp->p.parallelism, ws_profile_burdened_speedup(&ps->p, 2),
               ws_profile_burdened_speedup(&pp->p, 2));
    printf("  measured 2-worker speedups of ws: %.2fx with the sequential merge, %.2fx with the\n"
           "  parallel merge: ",
           s_seq, s_par);
    if (blocked)
        printf("no verdict, %s\n", blocked);
    else if (s_seq < s_par)
        printf("the sequential merge scaled less, as the span argument predicts\n");
    else
        printf("NOT as predicted in this run: the difference the argument predicts on\n"
               "  2 cores is about as small as the noise between runs; run again, or on more "
               "cores\n");
}

/* The 2-worker speedup of ws beside the ceiling: how much of what this machine allows two
 * workers the scheduler gets, and whether a goal above the ceiling can be met here at all. */
static void print_against_ceiling(void)
{
    bool header = false;
    for (int w = 0; w < N_WL; w++) {
        const cell *one = find_cell(w, S_WS, 1), *two = find_cell(w, S_WS, 2);
        double cap = ceiling_of(w, 2), sp = ratio(one, two);
        if (isnan(cap) || isnan(sp))
            continue;
        if (!header)
            printf(
                "  2-worker speedup of ws (2 workers over 1) beside the ceiling on this machine\n"
                "  (2 serial copies side by side: 2 x one copy's time alone over theirs):\n");
        header = true;
        printf("    %s: %.2fx (ceiling on this machine %.2fx; %.0f%% of it)", workloads[w]->name,
               sp, cap, 100 * sp / cap);
        const cell *all[] = {one, two};
        double others = cells_others(all, 2), ceil_others = find_ceiling(w, 2)->others;
        char why[96];
        const char *blocked =
            no_verdict(ceil_others > others ? ceil_others : others, why, sizeof(why));
        printf("%s%s\n", blocked ? ": unreliable, " : "", blocked ? blocked : "");
    }
}

static void print_targets(const options *o)
{
    int fib = find_workload("fib", 3), nq = find_workload("nqueens", 7);
    int uts = find_workload("uts", 3), seqm = find_workload("sort-seqmerge", 13);
    int parm = find_workload("sort-parmerge", 13);
    printf("\nSpeed goals of worksteal, at 2 workers unless said, on this machine (%u CPUs),\n"
           "judged only on undisturbed measurements:\n",
           online_cpus());
    double avail = cpus_at_start < cpus_at_end ? cpus_at_start : cpus_at_end;
    judge_quick = o->quick;
    judge_busy = avail >= 0 && avail < 0.9 * (online_cpus() < 2 ? online_cpus() : 2);
    if (judge_busy)
        printf("  (the CPU check found only about %.1f CPUs' worth of time: other programs were\n"
               "  busy, so the 2-worker figures below understate what an idle machine gives)\n",
               avail);
    print_target("ws faster than central, fib", find_cell(fib, S_CENTRAL, 2),
                 find_cell(fib, S_WS, 2), 3.0);
    print_target("ws faster than central, nqueens", find_cell(nq, S_CENTRAL, 2),
                 find_cell(nq, S_WS, 2), 3.0);
    print_target("ws faster than omp (libgomp), fib", find_cell(fib, S_OMP, 2),
                 find_cell(fib, S_WS, 2), 5.0);
    const int peer_wl[] = {fib, nq, uts};
    for (int s = S_TBB; s <= S_RAYON; s++)
        for (int i = 0; i < 3; i++)
            for (unsigned p = 1; p <= 2; p++) {
                char text[96];
                snprintf(text, sizeof(text), "ws faster than %s, %s, %u worker%s", sched_names[s],
                         workloads[peer_wl[i]]->name, p, p > 1 ? "s" : "");
                print_target(text, find_cell(peer_wl[i], s, p), find_cell(peer_wl[i], S_WS, p),
                             1.0);
            }
    /* 1.95 on the three fork-join workloads (docs/benchmarks.md), 1.9 on the parallel sort. */
    const int scaled[] = {fib, nq, uts, parm};
    for (int i = 0; i < 4; i++) {
        char text[96];
        snprintf(text, sizeof(text), "ws 2 workers over 1 worker, %s", workloads[scaled[i]]->name);
        print_target(text, find_cell(scaled[i], S_WS, 1), find_cell(scaled[i], S_WS, 2),
                     scaled[i] == parm ? 1.9 : 1.95);
    }
    print_against_ceiling();
    print_span_verdict(seqm, parm);
}

/* ---------------------------------------------------------------------------------------- */
/* Options                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ws-bench [options]\n"
            "\n"
            "Runs the benchmark workloads on each scheduler at each worker count, prints a table\n"
            "per workload (median time, speedup, ratios against the baselines, steals, parks,\n"
            "answer check), writes a CSV file, and judges the speed goals on undisturbed rows.\n"
            "Exits non-zero if any answer is wrong or a measurement could not run.\n"
            "\n"
            "options:\n"
            "  --workloads LIST   comma-separated subset of:");
    for (int i = 0; i < N_WL; i++)
        fprintf(f, "%s%s", i ? "," : " ", workloads[i]->name);
    fprintf(f,
            "\n"
            "                     (default: all)\n"
            "  --schedulers LIST  subset of: serial,central,ws-locked,ws,ws-stack,omp,tbb,\n"
            "                     rayon\n"
            "                     (default: all; tbb and rayon where this ws-bench was built\n"
            "                     with them)\n"
            "  --workers LIST     worker counts, e.g. 1,2,4,8 (default: 1, 2, 4, ... up to the\n"
            "                     %u online CPUs); counts above the CPUs are marked '*'\n"
            "  --reps N           timed runs per measurement, the median is shown (default: %d,\n"
            "                     fewer, but an odd number, when they would take over %.1f s)\n"
            "  --rounds N         the schedulers are measured in turn N times, the reps shared\n"
            "                     out over the rounds, and a time is the median of its rounds'\n"
            "                     medians, so that a slow spell of the machine falls on one\n"
            "                     round of one scheduler (default: %d, at most %d and at most\n"
            "                     the reps; a scheduler whose first round took over %.1f s is\n"
            "                     not run again unless --reps is given)\n"
            "  --size NAME=N      a workload's size (repeatable): fib n, nqueens n, uts root\n"
            "                     children, sorts elements, matmul n (a power of two), batch\n"
            "                     jobs\n"
            "  --quick            tiny sizes, for a smoke test\n"
            "  --csv FILE         where the CSV goes (default: bench-results.csv)\n"
            "  --plot             write FILE.gp and, with gnuplot, FILE.png: each runtime's time\n"
            "                     relative to worksteal's per workload, and the cost of a fork\n"
            "                     on one worker (the default, except with --quick)\n"
            "  --no-plot          do not write the plot\n"
            "  --profile          also measure work, span and parallelism of each workload with\n"
            "                     ws_pool_profile (one more run on the largest worker count;\n"
            "                     about a microsecond per task, so slow on fib and nqueens)\n"
            "  --ceiling          measure the ceiling of every workload, not only of fib,\n"
            "                     nqueens and uts (the default): for each worker count P > 1,\n"
            "                     P serial copies run side by side, each on its own input, and\n"
            "                     P x one copy's time alone over theirs is the most P workers\n"
            "                     can gain here; needs serial in --schedulers, and P copies of\n"
            "                     each input in memory\n"
            "  --no-ceiling       measure no ceiling\n"
            "  --timeout S        seconds one scheduler's measurements may take (default: %d)\n"
            "  --no-extras        skip the four sections that follow the workload tables by\n"
            "                     default: parallel loops (bench_loop), external work\n"
            "                     (bench_external), futures (bench_futures) and phases against\n"
            "                     OpenMP tasks (bench_phases), run in short form; they are\n"
            "                     also skipped with --quick or --workloads\n"
            "  --extras           run those four sections even with --quick (then in their\n"
            "                     smoke-test form) or --workloads\n"
            "  --help             this text\n"
            "\n"
            "workloads:\n",
            online_cpus(), DEFAULT_REPS, DEFAULT_BUDGET, DEFAULT_ROUNDS, MAX_ROUNDS, DEFAULT_BUDGET,
            DEFAULT_TIMEOUT);
    for (int i = 0; i < N_WL; i++)
        fprintf(f, "  %-14s %s (default size %ld)\n", workloads[i]->name, workloads[i]->title,
                workloads[i]->default_size);
    fprintf(f, "\nschedulers:\n");
    for (int i = 0; i < S_COUNT; i++)
        fprintf(f, "  %-14s %s\n", sched_names[i], sched_about[i]);
}

static bool parse_list(const char *arg, bool *sel, int n, int (*find)(const char *, size_t),
                       const char *what)
{
    for (int i = 0; i < n; i++)
        sel[i] = false;
    const char *p = arg;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        int k = find(p, len);
        if (k < 0) {
            fprintf(stderr, "ws-bench: unknown %s '%.*s' (see --help)\n", what, (int)len, p);
            return false;
        }
        sel[k] = true;
        p += len + (end ? 1 : 0);
    }
    return true;
}

static bool parse_workers(const char *arg, options *o)
{
    o->nworkers = 0;
    char *copy = strdup(arg);
    if (!copy)
        return false;
    bool ok = true;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        long v;
        if (!parse_long(tok, 1, WS_MAX_WORKERS, &v) || o->nworkers == MAX_WORKER_COUNTS) {
            fprintf(stderr, "ws-bench: bad worker count '%s' (1..%u, at most %d counts)\n", tok,
                    WS_MAX_WORKERS, MAX_WORKER_COUNTS);
            ok = false;
            break;
        }
        bool dup = false;
        for (int i = 0; i < o->nworkers; i++)
            dup |= o->workers[i] == (unsigned)v;
        if (!dup)
            o->workers[o->nworkers++] = (unsigned)v;
    }
    free(copy);
    if (ok && o->nworkers == 0) {
        fprintf(stderr, "ws-bench: --workers needs at least one count\n");
        ok = false;
    }
    /* ascending, so the tables read top-down */
    for (int i = 1; i < o->nworkers; i++)
        for (int j = i; j > 0 && o->workers[j - 1] > o->workers[j]; j--) {
            unsigned t = o->workers[j];
            o->workers[j] = o->workers[j - 1];
            o->workers[j - 1] = t;
        }
    return ok;
}

static bool parse_size(const char *arg, options *o)
{
    const char *eq = strchr(arg, '=');
    int w = eq ? find_workload(arg, (size_t)(eq - arg)) : -1;
    long v;
    if (w < 0 || !parse_long(eq + 1, 1, LONG_MAX, &v)) {
        fprintf(stderr, "ws-bench: --size wants NAME=N with a workload name, not '%s'\n", arg);
        return false;
    }
    o->size[w] = v;
    return true;
}

enum {
    OPT_WORKLOADS = 256,
    OPT_SCHEDULERS,
    OPT_WORKERS,
    OPT_REPS,
    OPT_ROUNDS,
    OPT_SIZE,
    OPT_QUICK,
    OPT_CSV,
    OPT_PLOT,
    OPT_PROFILE,
    OPT_TIMEOUT,
    OPT_HELP,
    OPT_CHILD,
    OPT_BUDGET,
    OPT_NO_EXTRAS,
    OPT_EXTRAS,
    OPT_NO_PLOT,
    OPT_CEILING,
    OPT_NO_CEILING,
};

/* 0: go on; 1: exit 0 (help); 2: usage error. */
static int parse_options(int argc, char **argv, options *o)
{
    static const struct option longopts[] = {
        {"workloads", required_argument, NULL, OPT_WORKLOADS},
        {"schedulers", required_argument, NULL, OPT_SCHEDULERS},
        {"workers", required_argument, NULL, OPT_WORKERS},
        {"reps", required_argument, NULL, OPT_REPS},
        {"rounds", required_argument, NULL, OPT_ROUNDS},
        {"size", required_argument, NULL, OPT_SIZE},
        {"quick", no_argument, NULL, OPT_QUICK},
        {"csv", required_argument, NULL, OPT_CSV},
        {"plot", no_argument, NULL, OPT_PLOT},
        {"profile", no_argument, NULL, OPT_PROFILE},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"no-extras", no_argument, NULL, OPT_NO_EXTRAS},
        {"extras", no_argument, NULL, OPT_EXTRAS},
        {"no-plot", no_argument, NULL, OPT_NO_PLOT},
        {"ceiling", no_argument, NULL, OPT_CEILING},
        {"no-ceiling", no_argument, NULL, OPT_NO_CEILING},
        {"help", no_argument, NULL, OPT_HELP},
        {"child", required_argument, NULL, OPT_CHILD},   /* internal */
        {"budget", required_argument, NULL, OPT_BUDGET}, /* internal */
        {NULL, 0, NULL, 0},
    };
    *o = (options){.reps = DEFAULT_REPS,
                   .rounds = DEFAULT_ROUNDS,
                   .budget = DEFAULT_BUDGET,
                   .csv = "bench-results.csv",
                   .timeout = DEFAULT_TIMEOUT,
                   .extras = true,
                   .child = -1};
    for (int i = 0; i < N_WL; i++)
        o->wl[i] = true;
    for (int i = 0; i < S_COUNT; i++)
        o->sched[i] = true;
    bool workers_given = false;
    long v;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case OPT_WORKLOADS:
            if (!parse_list(optarg, o->wl, N_WL, find_workload, "workload"))
                return 2;
            o->workloads_given = true;
            break;
        case OPT_SCHEDULERS:
            if (!parse_list(optarg, o->sched, S_COUNT, find_sched, "scheduler"))
                return 2;
            break;
        case OPT_WORKERS:
            if (!parse_workers(optarg, o))
                return 2;
            workers_given = true;
            break;
        case OPT_REPS:
            if (!parse_long(optarg, 1, 64, &v)) {
                fprintf(stderr, "ws-bench: --reps wants 1..64, not '%s'\n", optarg);
                return 2;
            }
            o->reps = (int)v;
            o->reps_given = true;
            break;
        case OPT_ROUNDS:
            if (!parse_long(optarg, 1, MAX_ROUNDS, &v)) {
                fprintf(stderr, "ws-bench: --rounds wants 1..%d, not '%s'\n", MAX_ROUNDS, optarg);
                return 2;
            }
            o->rounds = (int)v;
            break;
        case OPT_SIZE:
            if (!parse_size(optarg, o))
                return 2;
            break;
        case OPT_QUICK:
            o->quick = true;
            break;
        case OPT_CSV:
            o->csv = optarg;
            break;
        case OPT_PLOT:
            o->plot = true;
            break;
        case OPT_PROFILE:
            o->profile = true;
            break;
        case OPT_NO_EXTRAS:
            o->extras = false;
            break;
        case OPT_EXTRAS:
            o->extras_forced = true;
            break;
        case OPT_NO_PLOT:
            o->no_plot = true;
            break;
        case OPT_CEILING:
            o->ceiling = CEIL_ALL;
            break;
        case OPT_NO_CEILING:
            o->ceiling = CEIL_NONE;
            break;
        case OPT_TIMEOUT:
            if (!parse_long(optarg, 1, 86400, &v)) {
                fprintf(stderr, "ws-bench: --timeout wants seconds, not '%s'\n", optarg);
                return 2;
            }
            o->timeout = (double)v;
            break;
        case OPT_CHILD:
            o->child = find_sched(optarg, strlen(optarg));
            if (o->child < 0 || o->child == S_WS_LOCKED) {
                fprintf(stderr, "ws-bench: bad --child '%s'\n", optarg);
                return 2;
            }
            if (o->child == S_WS)
                o->child = SELF_WS;
            break;
        case OPT_BUDGET:
            o->budget = strtod(optarg, NULL);
            break;
        case OPT_HELP:
        case 'h':
            usage(stdout);
            return 1;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ws-bench: unexpected argument '%s' (see --help)\n", argv[optind]);
        return 2;
    }
    if (o->reps_given && o->child < 0)
        o->budget = 0; /* an explicit --reps is honoured exactly */
    if (o->rounds > o->reps)
        o->rounds = o->reps; /* a round has at least one run */
    if (!workers_given) {
        unsigned cpus = online_cpus();
        o->nworkers = 0;
        for (unsigned p = 1; p < cpus && o->nworkers < MAX_WORKER_COUNTS - 1; p *= 2)
            o->workers[o->nworkers++] = p;
        o->workers[o->nworkers++] = cpus;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* main                                                                                      */
/* ---------------------------------------------------------------------------------------- */

/* The peers this ws-bench was built without: skipped, with how to get them. */
static bool peer_unbuilt[S_COUNT];

static const char *peer_install_hint(int sched)
{
    return sched == S_TBB
               ? "apt-get install -y libtbb-dev, then make demo again"
               : "apt-get install -y cargo rustc librust-rayon-dev, then make demo again";
}

static void skip_unbuilt_peers(options *o)
{
    for (int s = 0; s < S_COUNT; s++) {
        if (o->sched[s] && is_peer(s) && peer_of(s) == NULL) {
            o->sched[s] = false;
            peer_unbuilt[s] = true;
        }
    }
}

static void print_header(const options *o, int argc, char **argv)
{
    char model[128] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof(line), f)) {
            if (strncmp(line, "model name", 10) == 0) {
                char *colon = strchr(line, ':');
                if (colon) {
                    snprintf(model, sizeof(model), "%s", colon + 2);
                    model[strcspn(model, "\n")] = '\0';
                }
                break;
            }
        }
        fclose(f);
    }
    double load = -1;
    f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = -1;
        fclose(f);
    }
    printf("ws-bench: worksteal %d.%d.%d, %s, %u online CPUs; gcc %s, OpenMP %d\n",
           WS_VERSION_MAJOR, WS_VERSION_MINOR, WS_VERSION_PATCH, model, online_cpus(), __VERSION__,
           _OPENMP);
    cpus_at_start = available_cpus();
    if (load >= 0)
        printf("load average at start: %.2f; CPU check: %u spinning threads ran %.2fx as fast as "
               "one (%u if idle)\n",
               load, online_cpus(), cpus_at_start, online_cpus());
    if (cpus_at_start >= 0 && cpus_at_start < 0.9 * online_cpus())
        printf("  other programs are using the CPUs: timings, and speedups most of all, will be "
               "disturbed\n");
    printf("command:");
    for (int i = 0; i < argc; i++)
        printf(" %s", argv[i]);
    printf("\nworkers:");
    for (int i = 0; i < o->nworkers; i++)
        printf(" %u", o->workers[i]);
    printf("   reps: %s%d%s in %d round%s\n", o->reps_given ? "" : "up to ", o->reps,
           o->reps_given ? "" : " (fewer for slow measurements)", o->rounds,
           o->rounds == 1 ? "" : "s");
    printf("schedulers:\n");
    for (int s = 0; s < S_COUNT; s++) {
        if (o->sched[s])
            printf("  %-10s %s\n", sched_names[s], sched_about[s]);
        else if (peer_unbuilt[s])
            printf("  %-10s skipped, not built: %s\n", sched_names[s], peer_install_hint(s));
    }
    printf("columns: median wall time of the runs; x serial = speedup over the serial run;\n"
           "  x 1 wkr = this scheduler's 1-worker time over this time; x central, x locked,\n"
           "  x omp = that baseline's time at the same workers over this time (above 1: this\n"
           "  row is faster; below the fib, nqueens and uts tables, x tbb and x rayon say the\n"
           "  same of ws against the peers, and a line gives ws's time over ws-stack's);\n"
           "  steal%% = steals per spawn; parks = times a worker slept, per run; others = share\n"
           "  of the CPUs other programs used during the runs (above 10%%, the row is\n"
           "  disturbed); '*' = more workers than CPUs (oversubscribed).\n");
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_options(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (o.child >= 0)
        return child_main(&o);

    find_self(argv[0]);
    skip_unbuilt_peers(&o);
    double started = wb_now();
    print_header(&o, argc, argv);
    bool tty = isatty(STDERR_FILENO);
    for (int w = 0; w < N_WL; w++) {
        if (!o.wl[w])
            continue;
        bool long_runs[S_COUNT] = {false}; /* its first round took over the budget */
        for (int round = 0; round < o.rounds; round++) {
            for (int s = 0; s < S_COUNT; s++) {
                if (!o.sched[s] || !has_version(workloads[w], s) || long_runs[s])
                    continue;
                if (tty)
                    fprintf(stderr, "\r  measuring %s on %s, round %d of %d ...%20s\r",
                            workloads[w]->name, sched_names[s], round + 1, o.rounds, "");
                double t0 = wb_now();
                run_child(&o, w, s, round);
                long_runs[s] = o.budget > 0 && wb_now() - t0 > o.budget;
            }
        }
        if (tty)
            fprintf(stderr, "\r%70s\r", "");
        print_table(&o, w);
    }

    bool failed = false, missing_locked = false;
    for (size_t i = 0; i < ncells; i++) {
        if (strcmp(cells[i].status, "n/a") == 0)
            missing_locked = true;
        else if (strcmp(cells[i].status, "ok") != 0)
            failed = true;
    }
    for (int i = 0; i < nceilings; i++)
        failed |= strcmp(ceilings[i].status, "ok") != 0;
    if (missing_locked)
        printf("\nws-locked: %s was not found next to this program; build it (it is built\n"
               "whenever the library provides the worksteal_locked_static target).\n",
               OTHER_EXE);
    cpus_at_end = available_cpus();
    printf("\nCPU check at the end: %u spinning threads ran %.2fx as fast as one (%u if idle).\n",
           online_cpus(), cpus_at_end, online_cpus());
    print_targets(&o);
    bool extras = o.extras && (o.extras_forced || (!o.quick && !o.workloads_given));
    if (extras && !run_extras(o.quick)) {
        printf("\nFAIL: a loop, external-work or futures measurement failed (see above).\n");
        failed = true;
    }
    write_csv(&o);
    if (o.plot || (!o.quick && !o.no_plot))
        write_plot(&o);
    double took = wb_now() - started;
    printf("ws-bench ran for %d min %02d s in all.\n", (int)(took / 60), (int)took % 60);
    if (failed)
        printf("\nFAIL: some measurements failed or computed a wrong answer (see the tables).\n");
    free(cells);
    return failed ? 1 : 0;
}
