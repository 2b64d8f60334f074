/* wl_external.c: benchmarks of external work: the injector, wake-ups and priorities.
 *
 *   bench_external [--quick] [--workers N] [--reps N] [--jobs N] [--samples N] [--csv FILE]
 *                  [--sections throughput,queues,wakeup,priority,batch,lone]
 *
 * 1. Injector throughput. 1, 2 and 4 producer threads (outside the pool) submit --jobs tiny jobs
 *    in total (default 10^6) to a pool of --workers workers (default: the online CPUs); the
 *    clock runs from the moment the producers start to the moment the last job has run. Three
 *    variants: ws_submit (detached jobs; the main thread polls the jobs' counters), ws_group_submit
 *    (one group; the main thread waits in ws_group_wait), the central-queue pool of
 *    central_pool.h, whose one mutex guards one FIFO (cq_submit; cq_pool_wait), and mq_pool
 *    below, the same mutex FIFO with one heap record per job like worksteal. The central pool's
 *    records are preallocated (its API takes caller memory), which spares it the allocator.
 *    Median of --reps runs (default 5), variants interleaved run by run so that a change in the
 *    machine's load hits all of them alike.
 * 1b. The queues alone: the injector's push and take against a mutex FIFO, without a pool (see
 *    bench_queues below).
 * 2. Wake-up latency: the time from ws_submit on a parked pool to the start of the job, p50 and
 *    p99 over --samples samples (default 10^4). Before each sample the benchmark waits until
 *    every worker has parked (read from the pool's idle counters) and then 300 us more. The same
 *    for the mutex pool, whose idle workers sleep on its condition variable as soon as the
 *    queue is empty (a 300 us pause before each sample), and for ws_pool_run from outside on
 *    the parked pool (the call to the job's start). Samples of the three alternate with a
 *    fourth, the floor under all of them: one futex wait woken by another thread, from the wake
 *    call to the sleeper running (see fx_sleeper).
 * 3. Priority latency: a pool saturated by one long job per worker (5 ms of spinning) and a
 *    backlog of 64 normal jobs (200 us each) in the injector; a probe job submitted then (after
 *    a random pause of up to 1 ms) with WS_HIGH_PRIORITY, or at normal priority: the time from
 *    its submission to its start, p50 and p99 (high and normal samples alternate).
 * 4. Batch: --jobs tiny group jobs submitted from the main thread and waited for, at 1 and 2
 *    workers, against the mutex pool (ws-bench's batch workload in small; see bench_batch). Run
 *    only when named in --sections.
 * 5. Lone jobs: --samples / 2 group jobs (at least 50) submitted one at a time from the main
 *    thread, 10 us apart, to a pool of 1 worker; the same to the mutex pool, and to a bare
 *    thread that only spins on the index of the last job posted (the machine's floor: what a
 *    stall of its CPU adds). The three take turns in blocks of 50 jobs (half a millisecond), so
 *    that a stall of the machine, often a millisecond or more on a virtual machine, falls on all
 *    three alike rather than on whichever block it hits; after an untimed block to each. The
 *    time from the submission to the job's start, p50, p90 and p99, over every job but each
 *    block's first (its taker slept since its last block: section 2 measures that wake-up).
 *    The worker has finished each job before the next comes, so this is what a job submitted
 *    alone waits; a batch that lingers for its group's next jobs must not hold it back
 *    (docs/external.md, "Lingering batches").
 * --quick: tiny sizes for CI (numbers meaningless). --csv FILE: one row per figure.
 * A run in which a job was lost or ran twice makes the program exit 1.
 */
#include "wl_external.h"

#include "central_pool.h"
#include "internal.h" /* the pool's idle counters: wait until every worker has parked */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { MAX_PRODUCERS = 4, BACKLOG = 64 };

#define LONG_JOB_NS    5000000ull /* a saturating job: 5 ms */
#define BACKLOG_JOB_NS 200000ull  /* a backlog job: 200 us */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_us(unsigned us)
{
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void spin_for_ns(uint64_t ns)
{
    uint64_t end = now_ns() + ns;
    while (now_ns() < end)
        ;
}

typedef struct xb_opts {
    bool quick;
    unsigned workers;
    int reps;
    unsigned long jobs;
    unsigned samples;      /* wake-up samples per pool */
    unsigned prio_samples; /* priority samples per priority */
    const char *csv;
    const char *sections; /* comma-separated subset of SECTION_NAMES, or NULL for all */
} xb_opts;

static FILE *csv_file;
static bool lost_jobs; /* a run lost or duplicated a job */

static void csv_row(const char *section, const char *variant, unsigned param, const char *metric,
                    double value)
{
    if (csv_file != NULL)
        fprintf(csv_file, "%s,%s,%u,%s,%.6g\n", section, variant, param, metric, value);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of v[0..n), nearest rank; sorts v. */
static double quantile(double *v, size_t n, double q)
{
    qsort(v, n, sizeof *v, cmp_double);
    size_t k = (size_t)(q * (double)n + 0.5);
    if (k > 0)
        k--;
    return v[k < n ? k : n - 1];
}

static ws_pool *make_ws_pool(unsigned workers)
{
    ws_pool *pool = NULL;
    ws_config cfg = {0};
    cfg.workers = workers;
    int err = ws_pool_create(&pool, &cfg);
    if (err != 0) {
        fprintf(stderr, "ws_pool_create: %s\n", ws_strerror(err));
        exit(2);
    }
    return pool;
}

static cq_pool *make_cq_pool(unsigned workers)
{
    cq_pool *pool = NULL;
    int err = cq_pool_create(&pool, workers);
    if (err != 0) {
        fprintf(stderr, "cq_pool_create: %s\n", strerror(err));
        exit(2);
    }
    return pool;
}

/* ---------------------------------------------------------------------------------------- */
/* A mutex FIFO pool with one heap record per job                                            */
/* ---------------------------------------------------------------------------------------- */

/* The central-queue pool takes caller memory for its records, so its runs pay no allocation,
 * while worksteal allocates a record per job (in the producer) and frees it (in the worker).
 * This small pool has the same queue as the central one (one mutex, one FIFO, a condition
 * variable for idle workers) and worksteal's record discipline, so that the two queue designs
 * can also be compared at equal allocation cost. Locking: `lock` guards head, tail, sleepers
 * and stop; the workers sleep on `work`. */
typedef struct mq_job {
    struct mq_job *next;
    void (*fn)(void *);
    void *arg;
} mq_job;

typedef struct mq_pool {
    pthread_mutex_t lock;
    pthread_cond_t work;
    mq_job *head, *tail;
    unsigned sleepers;
    bool stop;
    unsigned nthreads;
    pthread_t threads[64];
} mq_pool;

static void *mq_worker(void *p)
{
    mq_pool *q = p;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (q->head == NULL && !q->stop) {
            q->sleepers++;
            pthread_cond_wait(&q->work, &q->lock);
            q->sleepers--;
        }
        mq_job *j = q->head;
        if (j == NULL)
            break; /* stop, and the queue is empty */
        q->head = j->next;
        if (q->head == NULL)
            q->tail = NULL;
        pthread_mutex_unlock(&q->lock);
        j->fn(j->arg);
        free(j);
        pthread_mutex_lock(&q->lock);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

static mq_pool *mq_create(unsigned workers)
{
    mq_pool *q = calloc(1, sizeof *q);
    if (q == NULL || workers > 64) {
        fprintf(stderr, "mq_create: out of memory or too many workers\n");
        exit(2);
    }
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->work, NULL);
    for (unsigned i = 0; i < workers; i++) {
        if (pthread_create(&q->threads[i], NULL, mq_worker, q) != 0) {
            fprintf(stderr, "mq_create: pthread_create failed\n");
            exit(2);
        }
        q->nthreads++;
    }
    return q;
}

static void mq_submit(mq_pool *q, void (*fn)(void *), void *arg)
{
    mq_job *j = malloc(sizeof *j);
    if (j == NULL) {
        fprintf(stderr, "mq_submit: out of memory\n");
        exit(2);
    }
    j->next = NULL;
    j->fn = fn;
    j->arg = arg;
    pthread_mutex_lock(&q->lock);
    if (q->tail != NULL)
        q->tail->next = j;
    else
        q->head = j;
    q->tail = j;
    if (q->sleepers > 0)
        pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->lock);
}

/* Runs everything queued, then stops and frees the pool. */
static void mq_destroy(mq_pool *q)
{
    pthread_mutex_lock(&q->lock);
    q->stop = true;
    pthread_cond_broadcast(&q->work);
    pthread_mutex_unlock(&q->lock);
    for (unsigned i = 0; i < q->nthreads; i++)
        pthread_join(q->threads[i], NULL);
    pthread_cond_destroy(&q->work);
    pthread_mutex_destroy(&q->lock);
    free(q);
}

/* ---------------------------------------------------------------------------------------- */
/* 1. Injector throughput                                                                    */
/* ---------------------------------------------------------------------------------------- */

enum { TP_WS_SUBMIT, TP_WS_GROUP, TP_MUTEX, TP_MUTEX_MALLOC, TP_VARIANTS };
static const char *const tp_names[TP_VARIANTS] = {"ws_submit", "ws_group_submit", "mutex",
                                                  "mutex_malloc"};

typedef struct tp_counter {
    alignas(64) atomic_ulong n; /* jobs of one producer that ran */
} tp_counter;

typedef struct tp_run {
    int variant;
    ws_pool *ws;
    cq_pool *cq;
    mq_pool *mq;
    ws_group group;
    cq_task *tasks; /* the mutex pool's records, jobs of producer p at [p * per, ...) */
    unsigned producers;
    unsigned long per;
    tp_counter counts[MAX_PRODUCERS];
    atomic_uint ready;
    atomic_int go;
} tp_run;

typedef struct tp_producer {
    tp_run *run;
    unsigned index;
    pthread_t thread;
} tp_producer;

static void tiny_fn(void *arg)
{
    /* relaxed: a count, read after the pool's own completion wait (or polled) */
    atomic_fetch_add_explicit((atomic_ulong *)arg, 1, memory_order_relaxed);
}

static void *tp_producer_main(void *p)
{
    tp_producer *pr = p;
    tp_run *r = pr->run;
    atomic_ulong *count = &r->counts[pr->index].n;
    atomic_fetch_add(&r->ready, 1);
    while (!atomic_load(&r->go))
        sched_yield();
    for (unsigned long i = 0; i < r->per; i++) {
        int err = 0;
        switch (r->variant) {
        case TP_WS_SUBMIT:
            err = ws_submit(r->ws, tiny_fn, count, 0);
            break;
        case TP_WS_GROUP:
            err = ws_group_submit(&r->group, tiny_fn, count, 0);
            break;
        case TP_MUTEX:
            cq_submit(r->cq, &r->tasks[pr->index * r->per + i], tiny_fn, count);
            break;
        default:
            mq_submit(r->mq, tiny_fn, count);
            break;
        }
        if (err != 0) {
            fprintf(stderr, "submit: %s\n", ws_strerror(err));
            exit(2);
        }
    }
    return NULL;
}

static unsigned long tp_count(tp_run *r)
{
    unsigned long sum = 0;
    for (unsigned p = 0; p < r->producers; p++)
        sum += atomic_load_explicit(&r->counts[p].n, memory_order_relaxed); /* relaxed: a poll */
    return sum;
}

/* One timed run: seconds from the producers' start to the last job's end. */
static double tp_once(tp_run *r, int variant, unsigned producers, unsigned long total)
{
    r->variant = variant;
    r->producers = producers;
    r->per = total / producers;
    for (unsigned p = 0; p < MAX_PRODUCERS; p++)
        atomic_store(&r->counts[p].n, 0);
    atomic_store(&r->ready, 0);
    atomic_store(&r->go, 0);
    ws_group_init(&r->group, r->ws);
    tp_producer pr[MAX_PRODUCERS];
    for (unsigned p = 0; p < producers; p++) {
        pr[p] = (tp_producer){r, p, 0};
        if (pthread_create(&pr[p].thread, NULL, tp_producer_main, &pr[p]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(2);
        }
    }
    while (atomic_load(&r->ready) < producers)
        sched_yield();
    uint64_t t0 = now_ns();
    atomic_store(&r->go, 1);
    for (unsigned p = 0; p < producers; p++)
        pthread_join(pr[p].thread, NULL);
    unsigned long expect = r->per * producers;
    if (variant == TP_WS_SUBMIT || variant == TP_MUTEX_MALLOC) {
        while (tp_count(r) < expect)
            sleep_us(20);
    } else if (variant == TP_WS_GROUP) {
        ws_group_wait(&r->group);
    } else {
        cq_pool_wait(r->cq);
    }
    uint64_t t1 = now_ns();
    for (unsigned p = 0; p < producers; p++) {
        unsigned long n = atomic_load(&r->counts[p].n);
        if (n != r->per) {
            fprintf(stderr, "%s, %u producers: producer %u's jobs ran %lu times, expected %lu\n",
                    tp_names[variant], producers, p, n, r->per);
            lost_jobs = true;
        }
    }
    return (double)(t1 - t0) * 1e-9;
}

static void bench_throughput(const xb_opts *o)
{
    static const unsigned producer_counts[] = {1, 2, 4};
    enum { NPC = 3 };
    tp_run *r = calloc(1, sizeof *r);
    double *runs = calloc((size_t)o->reps * NPC * TP_VARIANTS, sizeof *runs);
    if (r == NULL || runs == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    r->ws = make_ws_pool(o->workers);
    r->cq = make_cq_pool(o->workers);
    r->mq = mq_create(o->workers);
    r->tasks = calloc(o->jobs, sizeof *r->tasks);
    if (r->tasks == NULL) {
        fprintf(stderr, "out of memory for %lu task records\n", o->jobs);
        exit(2);
    }
    /* Warm-up: threads, allocator caches, page faults on the records. */
    for (int v = 0; v < TP_VARIANTS; v++)
        (void)tp_once(r, v, 2, o->jobs < 100000 ? o->jobs : 100000);
    for (int rep = 0; rep < o->reps; rep++)
        for (int pc = 0; pc < NPC; pc++)
            for (int v = 0; v < TP_VARIANTS; v++)
                runs[((size_t)pc * TP_VARIANTS + v) * o->reps + rep] =
                    tp_once(r, v, producer_counts[pc], o->jobs);

    printf("1. Injector throughput: %lu tiny jobs from outside threads to a pool of %u "
           "workers,\n   until all have run (million jobs per second, median of %d runs)\n\n",
           o->jobs, o->workers, o->reps);
    printf("   %-10s %10s %16s %12s %13s %17s %19s\n", "producers", "ws_submit", "ws_group_submit",
           "mutex queue", "mutex+malloc", "ws_submit/mutex", "ws_submit/mutex+m");
    for (int pc = 0; pc < NPC; pc++) {
        double rate[TP_VARIANTS];
        for (int v = 0; v < TP_VARIANTS; v++) {
            double *s = &runs[((size_t)pc * TP_VARIANTS + v) * o->reps];
            double t = quantile(s, (size_t)o->reps, 0.5);
            rate[v] = (double)(o->jobs / producer_counts[pc] * producer_counts[pc]) / t * 1e-6;
            csv_row("throughput", tp_names[v], producer_counts[pc], "mjobs_per_s", rate[v]);
        }
        printf("   %-10u %10.2f %16.2f %12.2f %13.2f %16.2fx %18.2fx\n", producer_counts[pc],
               rate[TP_WS_SUBMIT], rate[TP_WS_GROUP], rate[TP_MUTEX], rate[TP_MUTEX_MALLOC],
               rate[TP_WS_SUBMIT] / rate[TP_MUTEX], rate[TP_WS_SUBMIT] / rate[TP_MUTEX_MALLOC]);
    }
    printf("\n");
    ws_pool_destroy(r->ws);
    cq_pool_destroy(r->cq);
    mq_destroy(r->mq);
    free(r->tasks);
    free(runs);
    free(r);
}

/* ---------------------------------------------------------------------------------------- */
/* 1b. The queues alone                                                                      */
/* ---------------------------------------------------------------------------------------- */

/* The injector (src/injector.c) against a mutex FIFO, without a pool around them: producer
 * threads append preallocated records, two consumer threads take them (the injector's
 * consumers through its try-lock: a busy or empty queue answers NULL, and they retry), until
 * all are taken. This isolates the queue from what a submission also does (allocate a record,
 * count the pool's pending work, look for sleeping workers). */

typedef struct qa_run {
    bool injector;
    ws__injector *inj;
    pthread_mutex_t lock; /* mutex variant: guards head and tail */
    ws__task *head, *tail;
    ws__task *records;
    unsigned producers;
    unsigned long per;
    atomic_ulong taken;
    atomic_uint ready;
    atomic_int go;
} qa_run;

typedef struct qa_thread {
    qa_run *run;
    unsigned index;
    pthread_t thread;
} qa_thread;

static void *qa_producer(void *p)
{
    qa_thread *th = p;
    qa_run *r = th->run;
    ws__task *mine = r->records + (size_t)th->index * r->per;
    atomic_fetch_add(&r->ready, 1);
    while (!atomic_load(&r->go))
        sched_yield();
    for (unsigned long i = 0; i < r->per; i++) {
        ws__task *t = &mine[i];
        if (r->injector) {
            ws__injector_push(r->inj, t);
        } else {
            t->prev_spawn = NULL; /* the mutex queue's link */
            pthread_mutex_lock(&r->lock);
            if (r->tail != NULL)
                r->tail->prev_spawn = t;
            else
                r->head = t;
            r->tail = t;
            pthread_mutex_unlock(&r->lock);
        }
    }
    return NULL;
}

static void *qa_consumer(void *p)
{
    qa_thread *th = p;
    qa_run *r = th->run;
    unsigned long total = r->per * r->producers;
    atomic_fetch_add(&r->ready, 1);
    while (!atomic_load(&r->go))
        sched_yield();
    unsigned idle = 0;
    /* relaxed: a count of items taken, polled; exactness is checked after the joins */
    while (atomic_load_explicit(&r->taken, memory_order_relaxed) < total) {
        ws__task *t = NULL;
        if (r->injector) {
            t = ws__injector_take(r->inj);
        } else {
            pthread_mutex_lock(&r->lock);
            t = r->head;
            if (t != NULL) {
                r->head = t->prev_spawn;
                if (r->head == NULL)
                    r->tail = NULL;
            }
            pthread_mutex_unlock(&r->lock);
        }
        if (t == NULL) {
            if (++idle % 64 == 0)
                sched_yield();
            continue;
        }
        t->flags++; /* taken once more: must end at exactly 1 */
        atomic_fetch_add_explicit(&r->taken, 1, memory_order_relaxed);
    }
    return NULL;
}

/* Seconds to move all records through the queue. */
static double qa_once(qa_run *r, bool injector, unsigned producers, unsigned long total)
{
    r->injector = injector;
    r->producers = producers;
    r->per = total / producers;
    ws__injector_init(r->inj);
    r->head = r->tail = NULL;
    for (unsigned long i = 0; i < r->per * producers; i++)
        r->records[i].flags = 0;
    atomic_store(&r->taken, 0);
    atomic_store(&r->ready, 0);
    atomic_store(&r->go, 0);
    qa_thread th[MAX_PRODUCERS + 2];
    unsigned n = producers + 2;
    for (unsigned i = 0; i < n; i++) {
        th[i] = (qa_thread){r, i, 0};
        if (pthread_create(&th[i].thread, NULL, i < producers ? qa_producer : qa_consumer,
                           &th[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(2);
        }
    }
    while (atomic_load(&r->ready) < n)
        sched_yield();
    uint64_t t0 = now_ns();
    atomic_store(&r->go, 1);
    for (unsigned i = 0; i < n; i++)
        pthread_join(th[i].thread, NULL);
    uint64_t t1 = now_ns();
    for (unsigned long i = 0; i < r->per * producers; i++) {
        if (r->records[i].flags != 1) {
            fprintf(stderr, "%s queue: record %lu taken %u times\n",
                    injector ? "injector" : "mutex", i, r->records[i].flags);
            lost_jobs = true;
            break;
        }
    }
    return (double)(t1 - t0) * 1e-9;
}

static void bench_queues(const xb_opts *o)
{
    static const unsigned producer_counts[] = {1, 2, 4};
    enum { NPC = 3 };
    qa_run *r = calloc(1, sizeof *r);
    double *runs = calloc((size_t)o->reps * NPC * 2, sizeof *runs);
    if (r == NULL || runs == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    r->inj = aligned_alloc(WS_CACHE_LINE, (sizeof(ws__injector) + WS_CACHE_LINE - 1) /
                                              WS_CACHE_LINE * WS_CACHE_LINE);
    r->records = calloc(o->jobs, sizeof *r->records);
    if (r->inj == NULL || r->records == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    pthread_mutex_init(&r->lock, NULL);
    for (int q = 0; q < 2; q++)
        (void)qa_once(r, q == 0, 2, o->jobs < 100000 ? o->jobs : 100000);
    for (int rep = 0; rep < o->reps; rep++)
        for (int pc = 0; pc < NPC; pc++)
            for (int q = 0; q < 2; q++)
                runs[((size_t)pc * 2 + q) * o->reps + rep] =
                    qa_once(r, q == 0, producer_counts[pc], o->jobs);
    printf("1b. The queues alone: %lu preallocated records from producer threads to 2 consumer "
           "threads\n    (million items per second, median of %d runs)\n\n",
           o->jobs, o->reps);
    printf("   %-10s %14s %12s %17s\n", "producers", "MPSC injector", "mutex FIFO",
           "injector/mutex");
    for (int pc = 0; pc < NPC; pc++) {
        double rate[2];
        for (int q = 0; q < 2; q++) {
            double t = quantile(&runs[((size_t)pc * 2 + q) * o->reps], (size_t)o->reps, 0.5);
            rate[q] = (double)(o->jobs / producer_counts[pc] * producer_counts[pc]) / t * 1e-6;
            csv_row("queue", q == 0 ? "injector" : "mutex_fifo", producer_counts[pc],
                    "mitems_per_s", rate[q]);
        }
        printf("   %-10u %14.2f %12.2f %16.2fx\n", producer_counts[pc], rate[0], rate[1],
               rate[0] / rate[1]);
    }
    printf("\n");
    pthread_mutex_destroy(&r->lock);
    free(r->inj);
    free(r->records);
    free(runs);
    free(r);
}

/* ---------------------------------------------------------------------------------------- */
/* 2. Wake-up latency                                                                        */
/* ---------------------------------------------------------------------------------------- */

typedef struct wk_slot {
    uint64_t start; /* written by the job, read after done */
    atomic_int done;
} wk_slot;

static void wk_stamp(void *arg)
{
    wk_slot *s = arg;
    s->start = now_ns();
    atomic_store_explicit(&s->done, 1, memory_order_release); /* release: publishes start */
}

static void wk_wait(wk_slot *s)
{
    /* acquire: pairs with the release in wk_stamp */
    while (!atomic_load_explicit(&s->done, memory_order_acquire))
        sched_yield();
}

/* Waits until every worker of pool has parked (or 100 ms passed); true if they did. */
static bool ws_wait_parked(ws_pool *pool)
{
    for (int i = 0; i < 1000; i++) {
        if (ws__idle_parked(pool) >= pool->nworkers)
            return true;
        sleep_us(100);
    }
    return false;
}

static void latency_row(const char *name, double *v, size_t n, double *p50, double *p99)
{
    *p50 = quantile(v, n, 0.50);
    *p99 = quantile(v, n, 0.99);
    double p90 = quantile(v, n, 0.90);
    printf("   %-18s %9.1f %9.1f %9.1f %9.1f\n", name, *p50, p90, *p99, v[n - 1]);
}

/* The floor under every wake-up above: one thread sleeps in a futex wait, another changes the
 * word and wakes it, and the sample is the time from the wake call to the sleeper running
 * again. A pool's wake-up adds its own steps to this (the claim, the sleeper's search); the
 * mutex pool's condition variable is a futex too. The sleeper is the only thread of its kind,
 * so the kernel's choice of CPU is the same as for a parked worker. */
typedef struct fx_sleeper {
    _Atomic uint32_t word; /* bumped by the waker; the sleeper waits while it is unchanged */
    wk_slot *slot;         /* where the woken sleeper stamps its start; NULL: leave */
    pthread_t thread;
} fx_sleeper;

static void *fx_sleeper_main(void *arg)
{
    fx_sleeper *f = arg;
    /* The word's first value (the record is zeroed), not a load: on a busy machine the first
     * sample's bump can come before this thread first runs, and a load would then take the
     * bumped value as the one to wait past, and sleep through the only wake-up. */
    uint32_t seen = 0;
    for (;;) {
        while (atomic_load(&f->word) == seen)
            ws__futex_wait(&f->word, seen);
        seen = atomic_load(&f->word);
        wk_slot *s = f->slot;
        if (s == NULL)
            return NULL;
        wk_stamp(s);
    }
}

static double fx_sample(fx_sleeper *f)
{
    wk_slot s;
    s.start = 0;
    atomic_init(&s.done, 0);
    f->slot = &s;
    uint64_t t0 = now_ns();
    atomic_fetch_add(&f->word, 1); /* seq_cst: publishes slot before the sleeper reads it */
    ws__futex_wake(&f->word, 1);
    wk_wait(&s);
    return (double)(s.start - t0) * 1e-3;
}

/* The wake-up of a parked pool through ws_pool_run from outside: the caller blocks until the
 * job has run, and the sample is the time from the call to the job's start. */
static double ws_run_sample(ws_pool *pool)
{
    wk_slot s;
    s.start = 0;
    atomic_init(&s.done, 0);
    uint64_t t0 = now_ns();
    if (ws_pool_run(pool, wk_stamp, &s) != 0) {
        fprintf(stderr, "ws_pool_run failed\n");
        exit(2);
    }
    return (double)(s.start - t0) * 1e-3;
}

static void bench_wakeup(const xb_opts *o)
{
    size_t n = o->samples;
    double *ws = calloc(n, sizeof *ws), *cq = calloc(n, sizeof *cq), *run = calloc(n, sizeof *run);
    double *fx = calloc(n, sizeof *fx);
    fx_sleeper *sleeper = calloc(1, sizeof *sleeper);
    if (ws == NULL || cq == NULL || run == NULL || fx == NULL || sleeper == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    ws_pool *wp = make_ws_pool(o->workers);
    cq_pool *cp = make_cq_pool(o->workers);
    if (pthread_create(&sleeper->thread, NULL, fx_sleeper_main, sleeper) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        exit(2);
    }
    unsigned parked = 0;
    for (size_t i = 0; i < n; i++) {
        wk_slot s;
        s.start = 0;
        atomic_init(&s.done, 0);
        parked += ws_wait_parked(wp);
        sleep_us(300);
        uint64_t t0 = now_ns();
        if (ws_submit(wp, wk_stamp, &s, 0) != 0) {
            fprintf(stderr, "ws_submit failed\n");
            exit(2);
        }
        wk_wait(&s);
        ws[i] = (double)(s.start - t0) * 1e-3;

        cq_task task;
        atomic_init(&s.done, 0);
        sleep_us(300);
        t0 = now_ns();
        cq_submit(cp, &task, wk_stamp, &s);
        wk_wait(&s);
        cq_pool_wait(cp); /* the record is the pool's until then */
        cq[i] = (double)(s.start - t0) * 1e-3;

        parked += ws_wait_parked(wp);
        sleep_us(300);
        run[i] = ws_run_sample(wp);

        sleep_us(300);
        fx[i] = fx_sample(sleeper);
    }
    ws_pool_destroy(wp);
    cq_pool_destroy(cp);
    sleeper->slot = NULL;
    atomic_fetch_add(&sleeper->word, 1); /* seq_cst: publishes the NULL slot: leave */
    ws__futex_wake(&sleeper->word, 1);
    pthread_join(sleeper->thread, NULL);

    printf("2. Wake-up latency: from the submit on a parked pool of %u workers to the job's "
           "start\n   (microseconds, %zu samples; worksteal fully parked before %u of %zu)\n\n",
           o->workers, n, parked, 2 * n);
    printf("   %-18s %9s %9s %9s %9s\n", "pool", "p50", "p90", "p99", "max");
    double w50, w99, c50, c99, r50, r99, f50, f99;
    latency_row("worksteal", ws, n, &w50, &w99);
    latency_row("ws_pool_run", run, n, &r50, &r99);
    latency_row("mutex queue", cq, n, &c50, &c99);
    latency_row("futex wake floor", fx, n, &f50, &f99);
    printf("   %-18s %8.2fx %9s %8.2fx\n", "worksteal/mutex", w50 / c50, "", w99 / c99);
    printf("   %-18s %8.2fx %9s %8.2fx\n\n", "worksteal/floor", w50 / f50, "", w99 / f99);
    csv_row("wakeup", "worksteal", o->workers, "p50_us", w50);
    csv_row("wakeup", "worksteal", o->workers, "p99_us", w99);
    csv_row("wakeup", "ws_pool_run", o->workers, "p50_us", r50);
    csv_row("wakeup", "ws_pool_run", o->workers, "p99_us", r99);
    csv_row("wakeup", "mutex", o->workers, "p50_us", c50);
    csv_row("wakeup", "mutex", o->workers, "p99_us", c99);
    csv_row("wakeup", "futex", o->workers, "p50_us", f50);
    csv_row("wakeup", "futex", o->workers, "p99_us", f99);
    free(fx);
    free(sleeper);
    free(ws);
    free(cq);
    free(run);
}

/* ---------------------------------------------------------------------------------------- */
/* 3. Priority latency on a saturated pool                                                   */
/* ---------------------------------------------------------------------------------------- */

typedef struct pr_state {
    atomic_uint long_started;
    atomic_uint long_finished;
} pr_state;

static void pr_long_fn(void *arg)
{
    pr_state *s = arg;
    atomic_fetch_add(&s->long_started, 1);
    spin_for_ns(LONG_JOB_NS);
    atomic_fetch_add(&s->long_finished, 1);
}

static void pr_backlog_fn(void *arg)
{
    (void)arg;
    spin_for_ns(BACKLOG_JOB_NS);
}

/* One sample: the probe's latency in microseconds. *saturated counts the samples whose probe
 * was submitted while every long job was still running. */
static double pr_once(ws_pool *pool, unsigned workers, unsigned flags, uint64_t *rng,
                      unsigned *saturated)
{
    pr_state st;
    atomic_init(&st.long_started, 0);
    atomic_init(&st.long_finished, 0);
    ws_group g;
    ws_group_init(&g, pool);
    for (unsigned i = 0; i < workers; i++)
        if (ws_group_submit(&g, pr_long_fn, &st, 0) != 0)
            exit(2);
    while (atomic_load(&st.long_started) < workers)
        sched_yield();
    for (unsigned i = 0; i < BACKLOG; i++)
        if (ws_group_submit(&g, pr_backlog_fn, NULL, 0) != 0)
            exit(2);
    *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
    sleep_us((unsigned)(*rng >> 33) % 1000u);
    wk_slot probe;
    probe.start = 0;
    atomic_init(&probe.done, 0);
    uint64_t t0 = now_ns();
    if (ws_group_submit(&g, wk_stamp, &probe, flags) != 0)
        exit(2);
    *saturated += atomic_load(&st.long_finished) == 0;
    ws_group_wait(&g);
    if (!atomic_load(&probe.done)) {
        fprintf(stderr, "the probe job did not run\n");
        lost_jobs = true;
        return 0;
    }
    return (double)(probe.start - t0) * 1e-3;
}

static void bench_priority(const xb_opts *o)
{
    size_t n = o->prio_samples;
    double *hi = calloc(n, sizeof *hi), *lo = calloc(n, sizeof *lo);
    if (hi == NULL || lo == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    ws_pool *pool = make_ws_pool(o->workers);
    uint64_t rng = 12345;
    unsigned saturated = 0;
    for (size_t i = 0; i < n; i++) {
        hi[i] = pr_once(pool, o->workers, WS_HIGH_PRIORITY, &rng, &saturated);
        lo[i] = pr_once(pool, o->workers, 0, &rng, &saturated);
    }
    ws_pool_destroy(pool);
    printf("3. Priority: latency of a job submitted to a pool of %u workers saturated by %u "
           "long\n   jobs (%.0f ms each) with %d normal jobs (%.0f us each) queued "
           "(microseconds,\n   %zu samples each; in %u of the %zu, no long job had finished when "
           "the probe was submitted)\n\n",
           o->workers, o->workers, LONG_JOB_NS * 1e-6, BACKLOG, BACKLOG_JOB_NS * 1e-3, n, saturated,
           2 * n);
    printf("   %-18s %9s %9s %9s %9s\n", "probe", "p50", "p90", "p99", "max");
    double h50, h99, l50, l99;
    latency_row("WS_HIGH_PRIORITY", hi, n, &h50, &h99);
    latency_row("normal", lo, n, &l50, &l99);
    printf("   %-18s %8.2fx %9s %8.2fx\n\n", "normal/high", l50 / h50, "", l99 / h99);
    csv_row("priority", "high", o->workers, "p50_us", h50);
    csv_row("priority", "high", o->workers, "p99_us", h99);
    csv_row("priority", "normal", o->workers, "p50_us", l50);
    csv_row("priority", "normal", o->workers, "p99_us", l99);
    free(hi);
    free(lo);
}

/* ---------------------------------------------------------------------------------------- */
/* 4. A batch of group jobs from the main thread                                            */
/* ---------------------------------------------------------------------------------------- */

/* ws-bench's batch workload in small: --jobs tiny jobs submitted one by one from this thread
 * (no worker) and waited for, ws_group_submit + ws_group_wait against cq_submit + cq_pool_wait
 * (records preallocated), at 1 and 2 workers. Median of --reps runs, the two pools alternating
 * run by run. */
static double batch_once(ws_pool *wp, cq_pool *cp, cq_task *tasks, unsigned long jobs,
                         atomic_ulong *count)
{
    atomic_store(count, 0);
    uint64_t t0 = now_ns();
    if (wp != NULL) {
        ws_group g;
        ws_group_init(&g, wp);
        for (unsigned long i = 0; i < jobs; i++)
            if (ws_group_submit(&g, tiny_fn, count, 0) != 0) {
                fprintf(stderr, "ws_group_submit failed\n");
                exit(2);
            }
        ws_group_wait(&g);
    } else {
        for (unsigned long i = 0; i < jobs; i++)
            cq_submit(cp, &tasks[i], tiny_fn, count);
        cq_pool_wait(cp);
    }
    uint64_t t1 = now_ns();
    if (atomic_load(count) != jobs) {
        fprintf(stderr, "batch: %lu of %lu jobs ran\n", atomic_load(count), jobs);
        lost_jobs = true;
    }
    return (double)(t1 - t0) * 1e-9;
}

static void bench_batch(const xb_opts *o)
{
    static const unsigned worker_counts[] = {1, 2};
    cq_task *tasks = calloc(o->jobs, sizeof *tasks);
    double *runs = calloc((size_t)o->reps * 2, sizeof *runs);
    atomic_ulong *count = calloc(1, sizeof *count);
    if (tasks == NULL || runs == NULL || count == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    printf("4. Batch: %lu tiny group jobs submitted from the main thread and waited for\n"
           "   (milliseconds, median of %d runs)\n\n",
           o->jobs, o->reps);
    printf("   %-8s %12s %12s %16s\n", "workers", "worksteal", "mutex queue", "ws rate/mutex");
    for (int k = 0; k < 2; k++) {
        unsigned workers = worker_counts[k];
        ws_pool *wp = make_ws_pool(workers);
        cq_pool *cp = make_cq_pool(workers);
        (void)batch_once(wp, NULL, tasks, o->jobs, count); /* warm-up */
        (void)batch_once(NULL, cp, tasks, o->jobs, count);
        for (int rep = 0; rep < o->reps; rep++) {
            runs[rep] = batch_once(wp, NULL, tasks, o->jobs, count);
            runs[o->reps + rep] = batch_once(NULL, cp, tasks, o->jobs, count);
        }
        ws_pool_destroy(wp);
        cq_pool_destroy(cp);
        double tw = quantile(runs, (size_t)o->reps, 0.5);
        double tc = quantile(runs + o->reps, (size_t)o->reps, 0.5);
        printf("   %-8u %12.1f %12.1f %15.2fx\n", workers, tw * 1e3, tc * 1e3, tc / tw);
        csv_row("batch", "worksteal", workers, "ms", tw * 1e3);
        csv_row("batch", "mutex", workers, "ms", tc * 1e3);
    }
    printf("\n");
    free(tasks);
    free(runs);
    free(count);
}

/* ---------------------------------------------------------------------------------------- */
/* Driver                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static int usage(void)
{
    fprintf(stderr, "usage: bench_external [--quick] [--workers N] [--reps N] [--jobs N] "
                    "[--samples N] [--csv FILE] [--sections LIST]\n"
                    "  LIST: comma-separated subset of "
                    "throughput,queues,wakeup,priority,batch,lone\n");
    return 1;
}

static bool parse_ulong(const char *s, unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v == 0)
        return false;
    *out = v;
    return true;
}

/* ---------------------------------------------------------------------------------------- */
/* 5. Lone jobs                                                                              */
/* ---------------------------------------------------------------------------------------- */

enum { LONE_GAP_NS = 10000, LONE_BLOCK = 50 };

/* The floor under the lone jobs: a thread that does nothing but spin on the index of the last
 * job posted, and stamps each job's start as soon as it sees it, with no queue, no record and no
 * sleep. It spins only through its own blocks and sleeps on a condition variable between them,
 * so that it takes no CPU from the pools' blocks. What it waits is what the machine adds: a
 * stall of its CPU (the host preempting the vCPU, an interrupt) delays it as it delays a pool's
 * worker. */
typedef struct lone_spinner {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    size_t from, to;       /* under lock: the block to stamp */
    unsigned long blocks;  /* under lock: blocks given so far */
    bool quit;             /* under lock */
    _Atomic bool spinning; /* set once the thread spins for the block just given */
    _Atomic size_t posted; /* the jobs posted so far (the last one's index + 1) */
    wk_slot *slots;
    pthread_t thread;
} lone_spinner;

static void *lone_spinner_main(void *arg)
{
    lone_spinner *s = arg;
    unsigned long served = 0;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (s->blocks == served && !s->quit)
            pthread_cond_wait(&s->cond, &s->lock);
        if (s->quit)
            break;
        size_t from = s->from, to = s->to;
        served = s->blocks;
        pthread_mutex_unlock(&s->lock);
        atomic_store(&s->spinning, true);
        for (size_t i = from; i < to; i++) {
            /* acquire: pairs with the poster's release; the slot's reset comes before. */
            while (atomic_load_explicit(&s->posted, memory_order_acquire) <= i)
                ;
            wk_stamp(&s->slots[i]);
        }
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static void lone_spinner_tell(lone_spinner *s, size_t from, size_t to, bool quit)
{
    pthread_mutex_lock(&s->lock);
    s->from = from;
    s->to = to;
    s->blocks++;
    s->quit = quit;
    atomic_store(&s->posted, from); /* none of the block's jobs yet */
    atomic_store(&s->spinning, false);
    pthread_cond_signal(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

/* The lone run's three takers of jobs: the worksteal pool, the mutex pool, the bare spinner. */
enum { LONE_WS, LONE_CQ, LONE_BARE, LONE_TAKERS };

typedef struct lone_run {
    ws_pool *wp;
    cq_pool *cp;
    lone_spinner *spinner;
    cq_task *tasks;
    wk_slot *slots;
    uint64_t *sent;
    double *lat[LONE_TAKERS];  /* per taker: microseconds from a job's submission to its start */
    size_t count[LONE_TAKERS]; /* per taker: the waits in lat */
} lone_run;

/* Job i to taker who. */
static void lone_post(lone_run *r, int who, ws_group *g, size_t i)
{
    if (who == LONE_CQ) {
        cq_submit(r->cp, &r->tasks[i], wk_stamp, &r->slots[i]);
    } else if (who == LONE_BARE) {
        /* release: the slot's reset before the spinner's acquire load. */
        atomic_store_explicit(&r->spinner->posted, i + 1, memory_order_release);
    } else if (ws_group_submit(g, wk_stamp, &r->slots[i], 0) != 0) {
        fprintf(stderr, "ws_group_submit failed\n");
        exit(2);
    }
}

/* Jobs [from, to) of the lone run to taker who, one every LONE_GAP_NS, each stamping its start
 * in slots[i]; then, if timed, the waits of all but the first into lat[who]. The first job of a
 * block finds its taker asleep since its previous block (section 2 measures that wake-up); each
 * later one comes 10 us after the one before it has run. */
static void lone_block(lone_run *r, int who, size_t from, size_t to, bool timed)
{
    ws_group g;
    if (who == LONE_WS)
        ws_group_init(&g, r->wp);
    if (who == LONE_BARE) {
        lone_spinner_tell(r->spinner, from, to, false);
        while (!atomic_load(&r->spinner->spinning))
            sched_yield();
    }
    for (size_t i = from; i < to; i++) {
        spin_for_ns(LONE_GAP_NS);
        r->slots[i].start = 0;
        atomic_init(&r->slots[i].done, 0);
        r->sent[i] = now_ns();
        lone_post(r, who, &g, i);
    }
    if (who == LONE_WS)
        ws_group_wait(&g);
    else if (who == LONE_CQ)
        cq_pool_wait(r->cp);
    else
        wk_wait(&r->slots[to - 1]); /* the spinner stamps in order */
    for (size_t i = from + 1; timed && i < to; i++)
        r->lat[who][r->count[who]++] = (double)(r->slots[i].start - r->sent[i]) * 1e-3;
}

/* n jobs to each taker, in blocks of LONE_BLOCK that rotate among them (each first in every
 * third round), so that what else the machine does meanwhile falls on all alike; after one
 * untimed block to each, so that none pays its thread's first run (a cold worker, on a virtual
 * machine a vCPU the host had put to sleep) inside the figures. */
static void lone_run_all(lone_run *r, size_t n)
{
    size_t warm = LONE_BLOCK < n ? LONE_BLOCK : n;
    for (int who = 0; who < LONE_TAKERS; who++)
        lone_block(r, who, 0, warm, false);
    for (size_t from = 0; from < n; from += LONE_BLOCK) {
        size_t to = from + LONE_BLOCK < n ? from + LONE_BLOCK : n;
        for (int k = 0; k < LONE_TAKERS; k++)
            lone_block(r, (int)((from / LONE_BLOCK + (size_t)k) % LONE_TAKERS), from, to, true);
    }
}

static void bench_lone(const xb_opts *o)
{
    size_t n = o->samples / 2 > LONE_BLOCK ? o->samples / 2 : LONE_BLOCK; /* a timed job or more */
    lone_run r = {0};
    lone_spinner *spinner = calloc(1, sizeof *spinner);
    r.tasks = calloc(n, sizeof *r.tasks);
    r.slots = calloc(n, sizeof *r.slots);
    r.sent = calloc(n, sizeof *r.sent);
    bool ok = spinner != NULL && r.tasks != NULL && r.slots != NULL && r.sent != NULL;
    for (int who = 0; who < LONE_TAKERS; who++)
        ok = ok && (r.lat[who] = calloc(n, sizeof *r.lat[who])) != NULL;
    if (!ok) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    pthread_mutex_init(&spinner->lock, NULL);
    pthread_cond_init(&spinner->cond, NULL);
    spinner->slots = r.slots;
    if (pthread_create(&spinner->thread, NULL, lone_spinner_main, spinner) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        exit(2);
    }
    r.spinner = spinner;
    r.wp = make_ws_pool(1);
    r.cp = make_cq_pool(1);
    lone_run_all(&r, n);
    lone_spinner_tell(spinner, 0, 0, true);
    pthread_join(spinner->thread, NULL);
    ws_pool_destroy(r.wp);
    cq_pool_destroy(r.cp);
    printf("5. Lone jobs: %zu group jobs, one every %u us from the main thread to a pool of 1 "
           "worker,\n   in blocks of %u taking turns with the mutex pool and a bare spinning "
           "thread (the\n   machine's floor), from the submission to the job's start "
           "(microseconds)\n\n",
           n, LONE_GAP_NS / 1000u, (unsigned)LONE_BLOCK);
    printf("   %-18s %9s %9s %9s %9s\n", "pool", "p50", "p90", "p99", "max");
    static const char *const names[LONE_TAKERS] = {"worksteal", "mutex queue", "bare spin"};
    static const char *const csv_names[LONE_TAKERS] = {"worksteal", "mutex", "bare_spin"};
    double p50[LONE_TAKERS], p99[LONE_TAKERS];
    for (int who = 0; who < LONE_TAKERS; who++) {
        latency_row(names[who], r.lat[who], r.count[who], &p50[who], &p99[who]);
        csv_row("lone", csv_names[who], 1, "p50_us", p50[who]);
        csv_row("lone", csv_names[who], 1, "p99_us", p99[who]);
    }
    printf("   %-18s %8.2fx %9s %8.2fx\n\n", "worksteal/mutex", p50[LONE_WS] / p50[LONE_CQ], "",
           p99[LONE_WS] / p99[LONE_CQ]);
    pthread_mutex_destroy(&spinner->lock);
    pthread_cond_destroy(&spinner->cond);
    free(spinner);
    free(r.tasks);
    free(r.slots);
    free(r.sent);
    for (int who = 0; who < LONE_TAKERS; who++)
        free(r.lat[who]);
}

/* Is section `name` in the comma-separated list? NULL: every section but the batch, which
 * repeats ws-bench's batch workload (the demo runs both) and is run when asked for. */
static bool section_wanted(const char *list, const char *name)
{
    if (list == NULL)
        return strcmp(name, "batch") != 0;
    size_t len = strlen(name);
    for (const char *p = list; p != NULL; p = strchr(p, ',') != NULL ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\0'))
            return true;
    return false;
}

int external_bench_main(int argc, char **argv)
{
    xb_opts o = {0};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned long workers = 0, reps = 0, jobs = 0, samples = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(a, "--quick") == 0)
            o.quick = true;
        else if (strcmp(a, "--csv") == 0 && has_value)
            o.csv = argv[++i];
        else if (strcmp(a, "--sections") == 0 && has_value)
            o.sections = argv[++i];
        else if (strcmp(a, "--workers") == 0 && has_value && parse_ulong(argv[i + 1], &workers))
            i++;
        else if (strcmp(a, "--reps") == 0 && has_value && parse_ulong(argv[i + 1], &reps))
            i++;
        else if (strcmp(a, "--jobs") == 0 && has_value && parse_ulong(argv[i + 1], &jobs))
            i++;
        else if (strcmp(a, "--samples") == 0 && has_value && parse_ulong(argv[i + 1], &samples))
            i++;
        else
            return usage();
    }
    o.workers = workers != 0 ? (unsigned)workers : cpus > 0 ? (unsigned)cpus : 2;
    o.reps = reps != 0 ? (int)reps : o.quick ? 1 : 5;
    o.jobs = jobs != 0 ? jobs : o.quick ? 20000 : 1000000;
    o.samples = samples != 0 ? (unsigned)samples : o.quick ? 200 : 10000;
    o.prio_samples = o.quick ? 10 : 200;
    if (o.jobs < MAX_PRODUCERS)
        o.jobs = MAX_PRODUCERS;

    if (o.csv != NULL) {
        csv_file = fopen(o.csv, "w");
        if (csv_file == NULL) {
            fprintf(stderr, "%s: %s\n", o.csv, strerror(errno));
            return 1;
        }
        fprintf(csv_file, "section,variant,param,metric,value\n");
    }
    double load[1] = {-1};
    if (getloadavg(load, 1) != 1)
        load[0] = -1;
    printf("external work benchmark%s: %u workers, %ld online CPUs, load average %.2f\n\n",
           o.quick ? " (--quick: tiny sizes, numbers meaningless)" : "", o.workers, cpus, load[0]);
    double t0 = (double)now_ns() * 1e-9;
    static const struct {
        const char *name;
        void (*run)(const xb_opts *);
    } sections[] = {{"throughput", bench_throughput}, {"queues", bench_queues},
                    {"wakeup", bench_wakeup},         {"priority", bench_priority},
                    {"batch", bench_batch},           {"lone", bench_lone}};
    for (size_t k = 0; k < sizeof sections / sizeof sections[0]; k++)
        if (section_wanted(o.sections, sections[k].name))
            sections[k].run(&o);
    printf("bench_external ran for %.1f s\n", (double)now_ns() * 1e-9 - t0);
    if (csv_file != NULL && fclose(csv_file) != 0) {
        fprintf(stderr, "%s: write error\n", o.csv);
        return 1;
    }
    if (lost_jobs) {
        fprintf(stderr, "bench_external: a job was lost or ran twice\n");
        return 1;
    }
    return 0;
}
