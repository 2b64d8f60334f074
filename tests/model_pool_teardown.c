/* model_pool_teardown.c: a pool's teardown (src/pool.c's pool_teardown: exit, the wake-up of
 * every sleeper, the joins of the workers and of the spares) against workers asleep, searching
 * or running, and against a task blocked during the teardown whose work only a spare can run
 * (src/spare.c), under the GenMC model checker (RC11, with --check-liveness).
 *
 *   genmc --rc11 --check-liveness --disable-instruction-caching --disable-estimation --
 *         -I src -I include -DSCENARIO=n [-DMEET=0] tests/model_pool_teardown.c
 *
 * (--disable-instruction-caching: a precaution against the fault of GenMC 0.11 that stops the
 * larger cases of tests/model_idle.c, a stack slot of a later call taken for freed memory; with
 * the cache off, model_idle's two-worker case ran 6,192 executions without it, and then gave no
 * verdict within 3 minutes of CPU.)
 *
 * Real: pool.c whole (pool_teardown, join_spares, workers_free, ws__pool_inject), spare.c whole
 * (spare_main, ws_block_begin and ws_block_end, ws__block_worker's publication and notify,
 * wake_spare, spare_should_retire), idle.c, injector.c, the deque, and worker.c
 * (ws__worker_main's loop, next_task and its steal round, ws__worker_new, ws__worker_start,
 * ws__task_run_taken and the run of a task's function). Stubbed (tests/model_platform.h and
 * below): the futex (the kernel's semantics), allocation, the clock, a thread's start (a plain
 * pthread_create of the worker's body) and its join, which waits in a spin for the thread's
 * body to return, so that a thread nobody wakes at teardown is a spin that never ends, which
 * --check-liveness reports (a join that blocked would only cut the execution); the statistics,
 * the trace, the placement and the records (none here). Mirrored: group.c's submission from a
 * worker (push_own: ws__wdeque_push_size onto the worker's own deque, then a notify).
 *
 * Scenarios:
 *   1  one worker, one job injected (ws__pool_inject) and then the teardown at once: the worker
 *      is asleep, searching, or running the job when exit is set; it runs the job exactly once
 *      and leaves, and the teardown returns;
 *   2  one worker and one spare slot, as tests/test_life_teardown.c: the worker's body runs job
 *      A (a job that destroy does not count, as a group job a worker submits to its own deque),
 *      which pushes job B onto the worker's deque, blocks (ws_block_begin), waits in a spin
 *      until B ran, and unblocks (ws_block_end); then the body ends (the worker loop's search
 *      and leaving are scenario 1's). Only a spare can run B: blocking must publish B and start
 *      one. MEET=1 (the default): the teardown starts once B ran, and A unblocks only while the
 *      spare sleeps in the futex (other executions are dropped): the spare must not leave while
 *      A is blocked, and the last one out of the block wakes the idle spare (the exit flag is
 *      set by then) or the spare sees the count at zero itself (the store buffering of exit and
 *      blocked, all seq_cst). MEET=0: the teardown starts once A ended, with the spare retired
 *      (join_spares must wake it) or asleep in the idle protocol. TWICE=1 (with MEET=0): A
 *      unblocks and, once the spare retired (other executions are dropped), pushes B2 and
 *      blocks again: the block must wake the retired spare (wake_spare's futex wake);
 *   3  two workers, no spare: B1 and B2 wait on worker 0's deque (B1 public, in the deque's
 *      reserve; B2 private); worker 1 runs the worker loop alone, takes B1 and sleeps in the
 *      futex (other executions are dropped); then worker 0 starts, and its body runs A, which
 *      blocks at once and waits until B2 ran. The block's publication makes B2 stealable and
 *      its notify is the only wake-up of the sleeper.
 * Each ends with every thread joined and every job run once. MODEL_YIELDS (2) bounds the yields
 * of a search that saw a push in flight, as in tests/model_idle.c; an execution cut there or by
 * a scenario's choice (model_stop_here) releases the model's spins, and main and the joins
 * stop there too (model_execution_cut). Two workers without a job (the teardown against two
 * searchers) gave no verdict within 10 minutes at a load average of 12; scenario 2 without the
 * choice of MEET (the teardown once B ran, A unblocking at any time) explored 10,345 executions
 * in 119 s of CPU, too long for make test. Executions: scenario 1 12,953 (82 s of CPU),
 * scenario 2 2,800 (53 s), MEET=0 493 (5 s), TWICE=1 3,332 (38 s), scenario 3 7 (1 s). Each of
 * these fails when a step it relies on is changed (tests/mutants/mutants.txt and holdout.txt):
 * exit stored with release, or read relaxed by the last one out, or blocked read with acquire
 * by an idle thread (scenario 2); join_spares' wake of a retired spare removed, or the
 * teardown's wake-up before its store of exit (MEET=0); wake_spare's wake of a retired spare
 * removed (TWICE=1); the block's notify after its publication removed (scenario 3: the sleeper
 * never wakes, and A's spin never ends); an idle thread that leaves at exit with a task blocked
 * cuts scenario 2 below its floor.
 */
#include <assert.h>
#include <errno.h>
#include <genmc.h>
#include <pthread.h>

/* pool.c's names that the checker's libc lacks; the model calls neither. */
typedef int pthread_once_t;
#define PTHREAD_ONCE_INIT 0
#define ENOTRECOVERABLE   131
static int pthread_once(pthread_once_t *once, void (*fn)(void))
{
    if (*once == 0) {
        *once = 1;
        fn();
    }
    return 0;
}

#define WS_IDLE_SPIN_ROUNDS    0
#define WS_IDLE_YIELD_ROUNDS   0
#define __builtin_ia32_pause() ((void)0)    /* ws__cpu_relax: never reached with 0 spin rounds */
#define WS_ENVIRON             ((char **)0) /* the checker has no environment */
/* The checker's interpreter calls no var-arg function: a thread's name stays empty. */
#include <stdio.h>
#define snprintf(buf, size, ...) ((void)(size), (buf)[0] = '\0', 0)

#include "../src/deque.c"
#include "../src/idle.c"
#include "../src/injector.c"
#include "../src/pool.c"
#include "../src/spare.c"
#include "../src/worker.c"

#ifndef MODEL_YIELDS
#define MODEL_YIELDS 2 /* as in tests/model_idle.c, which says why the bound hides nothing */
#endif
#include "model_platform.h"

#ifndef SCENARIO
#define SCENARIO 1
#endif
#ifndef MEET
#define MEET 1 /* scenario 2: the teardown meets A blocked (1) or after its end (0) */
#endif
#ifndef TWICE
#define TWICE 0 /* scenario 2, MEET=0: A blocks a second time, once the spare retired */
#endif
#define WORKERS (SCENARIO == 3 ? 2 : 1)
#define SPARES  (SCENARIO == 2 ? 1 : 0)
#define JOBS    (SCENARIO + TWICE)

/* ---- the stubs ----------------------------------------------------------------------------- */

/* ws__worker_new's allocation: a static record (model_platform.h, model_static_record). */
static ws__worker worker_recs[WORKERS + SPARES];
static int worker_recs_used; /* under spare_lock once the workers run */
void *ws__aligned_alloc(size_t align, size_t size)
{
    (void)align;
    assert(size == sizeof(ws__worker) && worker_recs_used < WORKERS + SPARES);
    return &worker_recs[worker_recs_used++];
}
void ws__contract_violation(const char *what, const char *why)
{
    (void)what;
    (void)why;
    assert(0 && "contract violation");
}
void ws__records_trim(ws_pool *pool)
{
    (void)pool;
}
void ws__records_release(ws_pool *pool)
{
    (void)pool;
}
void ws__trace_pool_finish(ws_pool *pool)
{
    (void)pool;
}
void ws__placement_free(ws__placement *pl)
{
    (void)pl;
}
unsigned ws__runnable_threads(void)
{
    return 0;
}
unsigned ws__online_cpus(void)
{
    return 2;
}

/* A thread and its end: the join waits in a spin (see the top) for the body to return. */
enum { MAX_THREADS = 3 };
static struct model_thread {
    void *(*fn)(void *);
    void *arg;
    pthread_t self; /* written by its creator before the record of its worker says started */
    atomic_int ended;
} threads[MAX_THREADS];
static atomic_int nthreads;

static void *thread_body(void *arg)
{
    struct model_thread *m = arg;
    m->fn(m->arg);
    /* release: pairs with ws__thread_join's acquire. */
    atomic_store_explicit(&m->ended, 1, memory_order_release);
    return NULL;
}

int ws__thread_start_on(ws__thread *t, size_t stack_size, const ws__cpuset *cpus,
                        void *(*fn)(void *), void *arg)
{
    (void)stack_size;
    (void)cpus;
    (void)fn; /* worker.c's worker_thread: names the thread, then runs the worker's body */
    ws__worker *w = arg;
    /* relaxed: a slot of its own; its fields are published by the thread's creation. */
    int i = atomic_fetch_add_explicit(&nthreads, 1, memory_order_relaxed);
    assert(i < MAX_THREADS);
    threads[i].fn = w->body;
    threads[i].arg = w;
    int err = pthread_create(t, NULL, thread_body, &threads[i]);
    threads[i].self = *t;
    return err;
}

/* overflow.c's start: its signal stack and fault handler are the OS's part. */
int ws__overflow_thread_start(ws__thread *t, size_t stack_size, const ws__cpuset *cpus,
                              const char *who, void *(*fn)(void *), void *arg)
{
    (void)who;
    return ws__thread_start_on(t, stack_size, cpus, fn, arg);
}

void ws__thread_join(ws__thread t)
{
    /* relaxed: the joiner learnt of t after its creator counted it (see self). */
    int n = atomic_load_explicit(&nthreads, memory_order_relaxed);
    for (int i = 0; i < n; i++) {
        if (threads[i].self != t)
            continue;
        /* acquire: pairs with thread_body's release store. */
        while (atomic_load_explicit(&threads[i].ended, memory_order_acquire) == 0 &&
               !model_execution_cut())
            ;
        if (model_execution_cut())
            model_stop_here(); /* a dropped execution: its threads may still run */
    }
    pthread_join(t, NULL);
}

/* ---- the jobs --------------------------------------------------------------------------- */

static ws_pool *pool;
static ws__task jobs[JOBS];
static atomic_int runs[JOBS];

/* Job i as a detached job: it runs to its end on its runner (worker.c). */
static void job_init(int i, ws_fn fn)
{
    ws__task_init(&jobs[i], fn, (void *)(intptr_t)i);
    ws_store_relaxed(&jobs[i].state, WS_TASK_PENDING | WS_KIND_DETACHED << WS_TASK_KIND_SHIFT);
}

/* Scenario 1: job i is admitted (a reference that destroy waits for, as ws_submit takes) and
 * injected. */
static void submit(int i, ws_fn fn)
{
    job_init(i, fn);
    int err = ws__pool_admit(pool, 1);
    assert(err == 0);
    ws__pool_inject(pool, &jobs[i]);
}

/* Scenarios 2 and 3: job i goes onto worker w's own deque, as a group job that a task of w
 * submits (group.c's push and notify; scenario 2 leaves out the notify, which wakes nobody
 * there): destroy does not count it. Owner only (main before w starts, or w). */
static void push_own(ws__worker *w, int i, ws_fn fn)
{
    job_init(i, fn);
    int64_t before = ws__wdeque_push_size(w, &jobs[i]);
    assert(before >= 0);
}

/* Runs job i's body: counts the run (exactly once), then gives its reference back if it has
 * one (scenario 1). */
static void job_end(int i)
{
    /* release: pairs with the acquire spins of main and job A. */
    int before = atomic_fetch_add_explicit(&runs[i], 1, memory_order_release);
    assert(before == 0);
    if (SCENARIO == 1)
        ws__pool_release(pool, 1);
}

static void job_b(void *arg)
{
    job_end((int)(intptr_t)arg);
}

/* Job A (scenario 2): B goes onto the worker's deque, and A blocks until it ran: with the
 * worker blocked here, only a spare can run it. Scenario 3: B1 and B2 go onto the deque (B1
 * public at once, in the reserve; B2 private), and A blocks once the other worker sleeps: the
 * block's publication and its notify are what make B2 reachable and wake the sleeper. */
static void job_a(void *arg)
{
    (void)arg;
    for (int r = 1; SCENARIO == 2 && r <= 1 + TWICE; r++) {
        /* TWICE: the second round only in the executions where the spare retired (it sleeps on
         * its own word): the block must wake it again. */
        if (r == 2 &&
            (model_futex_sleeping() != 1 || ws_load_relaxed(&pool->workers[1]->spare_state) != 0))
            model_stop_here();
        push_own(ws__tls_worker, r, job_b);
        ws_block_begin();
        /* acquire: pairs with job_end's release increment. A spin: never-ending if nobody
         * runs B (--check-liveness). */
        while (atomic_load_explicit(&runs[r], memory_order_acquire) == 0 && !model_execution_cut())
            ;
        /* MEET=1: only the executions in which the spare sleeps in the futex when A unblocks. */
        if (MEET && model_futex_sleeping() != 1)
            model_stop_here();
        ws_block_end();
    }
    if (SCENARIO == 3) {
        ws_block_begin();
        /* acquire: pairs with job_end's release increments. A spin: never-ending if nobody
         * runs B1 and B2 (--check-liveness). */
        while ((atomic_load_explicit(&runs[1], memory_order_acquire) == 0 ||
                atomic_load_explicit(&runs[2], memory_order_acquire) == 0) &&
               !model_execution_cut())
            ;
        ws_block_end();
    }
    job_end(0);
}

/* Scenarios 2 and 3: worker 0's body runs A as its loop would run a job it took (worker.c), and
 * then ends: its loop's search and its leaving are scenario 1's. */
static void *owner_body(void *arg)
{
    ws__worker *w = arg;
    ws__tls_worker = w;
    ws__task_run_taken(w, &jobs[0], "job");
    ws__tls_worker = NULL;
    return NULL;
}

/* ---- the pool ------------------------------------------------------------------------------ */

/* As ws_pool_create makes it, less what the model leaves out (placement, trace, records). */
static ws_pool *pool_make(void)
{
    static ws_pool pool_rec;
    ws_pool *p = model_static_record(&pool_rec);
    for (int i = 0; i < WORKERS + SPARES; i++)
        model_static_record(&worker_recs[i]);
    p->nworkers = WORKERS;
    p->nspares = SPARES;
    p->serial = 1;
    p->workers = ws__calloc(WORKERS + SPARES, sizeof(ws__worker *));
    pthread_mutex_init(&p->spare_lock, NULL);
    ws__injector_init(&p->urgent);
    ws__injector_init(&p->injector);
    for (unsigned i = 0; i < WORKERS; i++) {
        p->workers[i] = ws__worker_new(p, i, false);
        assert(p->workers[i] != NULL);
    }
    return p;
}

/* Scenario 3: B1 and B2 go onto worker 0's deque while it has not started (B1 public, in the
 * reserve; B2 private), then worker 1 runs the worker loop alone: it steals and runs B1, and
 * only the executions in which it then sleeps in the futex go on (the others reach the same end
 * with a searcher awake, tests/model_idle.c's case). Starting the workers one after the other
 * keeps the case to seconds; the sleeper's own steps are all explored. */
static void start_sleeper(void)
{
    for (int i = 1; i <= 2; i++)
        push_own(pool->workers[0], i, job_b);
    int err = ws__worker_start(pool->workers[1], ws__worker_main);
    assert(err == 0);
    pool->workers[1]->started = true;
    /* acquire: pairs with job_end's release. A spin that --check-liveness reports if the
     * sleeper never takes B1. */
    while (atomic_load_explicit(&runs[1], memory_order_acquire) == 0 && !model_execution_cut())
        ;
    if (model_execution_cut() || model_futex_sleeping() != 1)
        model_stop_here();
}

int main(void)
{
    pool = pool_make();
    if (SCENARIO >= 2) {
        /* As pool_start_workers, but worker 0's body runs A and ends (owner_body). */
        job_init(0, job_a);
        if (SCENARIO == 3)
            start_sleeper();
        for (unsigned i = 0; i < WORKERS; i++) {
            if (pool->workers[i]->started)
                continue;
            int err = ws__worker_start(pool->workers[i], i == 0 ? owner_body : ws__worker_main);
            assert(err == 0);
            pool->workers[i]->started = true;
        }
    } else {
        int err = pool_start_workers(pool);
        assert(err == 0);
    }
    if (SCENARIO == 1)
        submit(0, job_a);
    /* The job runs (a worker wakes for it): a spin that --check-liveness reports if it never
     * ends. Scenario 2 tears down as soon as A is blocked. acquire: pairs with job_end's
     * release; seq_cst: as ws__pool_finished reads blocked. */
    while (atomic_load_explicit(&runs[SCENARIO == 2 && MEET ? 1 : 0], memory_order_acquire) == 0 &&
           !model_execution_cut())
        ;
    if (model_execution_cut())
        model_stop_here(); /* dropped: the teardown would free what its threads still use */
    /* ws_pool_destroy, less its debug check and statistics: the admitted jobs finish, then the
     * teardown. */
    wait_admitted_gone(pool);
    pool_teardown(pool);
    for (int i = 0; i < JOBS; i++)
        assert(atomic_load_explicit(&runs[i], memory_order_relaxed) == 1);
    return 0;
}
