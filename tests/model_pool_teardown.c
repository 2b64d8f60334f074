/* model_pool_teardown.c: a pool's teardown (src/pool.c's pool_teardown: exit, the wake-up of
 * every sleeper, the joins of the workers and of the spares) against workers asleep, searching
 * or running, and against a task blocked during the teardown whose work only a spare can run
 * (src/spare.c), under the GenMC model checker (RC11, with --check-liveness).
 *
 *   genmc --rc11 --check-liveness --disable-instruction-caching --disable-estimation --
 *         -I src -I include -DSCENARIO=n tests/model_pool_teardown.c
 *
 * (--disable-instruction-caching: a precaution against the fault of GenMC 0.11 that stops the
 * larger cases of tests/model_idle.c, a stack slot of a later call taken for freed memory; with
 * the cache off, model_idle's two-worker case ran 6,192 executions without it, and then gave no
 * verdict within 3 minutes of CPU.)
 *
 * Real: pool.c whole (pool_teardown, join_spares, workers_free, ws__pool_inject), spare.c whole
 * (spare_main, ws_block_begin and ws_block_end, wake_spare, spare_should_retire), idle.c,
 * injector.c, the deque, and worker.c (ws__worker_main's loop, next_task and its steal round,
 * ws__worker_new, ws__worker_start, ws__task_run_taken). Stubbed (tests/model_platform.h and
 * below): the futex (the kernel's semantics), allocation, the clock, a thread's start (a plain
 * pthread_create of the worker's body) and its join, which waits in a spin for the thread's
 * body to return, so that a thread nobody wakes at teardown is a spin that never ends, which
 * --check-liveness reports (a join that blocked would only cut the execution); the run of a
 * task's function (join.c's ws__run_child: the function, called); the statistics, the trace,
 * the placement and the records (none here).
 *
 * Scenarios:
 *   1  one worker, one job injected (ws__pool_inject) and then the teardown at once: the worker
 *      is asleep, searching, or running the job when exit is set; it runs the job exactly once
 *      and leaves, and the teardown returns;
 *   2  one worker and one spare slot: job A, injected, injects job B, blocks (ws_block_begin),
 *      waits in a spin until B ran, and unblocks (ws_block_end); the teardown starts once A is
 *      blocked. Only a spare can run B (the worker is blocked in A): blocking must wake one,
 *      the spare must not leave while A is blocked, and the last one out of the block wakes the
 *      idle threads (the exit flag is set by then), or they see it themselves.
 * Each ends with every thread joined and every job run once. MODEL_YIELDS (2) bounds the yields
 * of a search that saw a push in flight, as in tests/model_idle.c; an execution cut there
 * releases the model's spins (model_execution_cut). Two workers without a job (the teardown
 * against two searchers) gave no verdict within 10 minutes at a load average of 12.
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
#define WORKERS 1
#define SPARES  (SCENARIO == 2 ? 1 : 0)
#define JOBS    SCENARIO

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
    }
    pthread_join(t, NULL);
}

/* ---- the jobs --------------------------------------------------------------------------- */

static ws_pool *pool;
static ws__task jobs[JOBS];
static atomic_int runs[JOBS];

/* Job i is admitted (a reference that destroy waits for, as ws_submit takes) and injected. */
static void submit(int i, ws_fn fn)
{
    ws__task_init(&jobs[i], fn, NULL);
    /* a job runs to its end on its runner, as a detached job does (worker.c) */
    ws_store_relaxed(&jobs[i].state, WS_TASK_PENDING | WS_KIND_DETACHED << WS_TASK_KIND_SHIFT);
    int err = ws__pool_admit(pool, 1);
    assert(err == 0);
    ws__pool_inject(pool, &jobs[i]);
}

/* Runs job i's body: counts the run (exactly once), then gives its reference back. */
static void job_end(int i)
{
    /* release: pairs with the acquire spins of main and job A. */
    int before = atomic_fetch_add_explicit(&runs[i], 1, memory_order_release);
    assert(before == 0);
    ws__pool_release(pool, 1);
}

static void job_b(void *arg)
{
    (void)arg;
    job_end(1);
}

/* Job A (scenario 2): B goes to the injector, and A blocks until it ran: with the worker
 * blocked here, only a spare can run it. */
static void job_a(void *arg)
{
    (void)arg;
    if (SCENARIO == 2) {
        submit(1, job_b);
        ws_block_begin();
        /* acquire: pairs with job_end's release increment. A spin: never-ending if nobody
         * runs B (--check-liveness). */
        while (atomic_load_explicit(&runs[1], memory_order_acquire) == 0 && !model_execution_cut())
            ;
        ws_block_end();
    }
    job_end(0);
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

int main(void)
{
    pool = pool_make();
    int err = pool_start_workers(pool);
    assert(err == 0);
    submit(0, job_a);
    /* The job runs (a worker wakes for it): a spin that --check-liveness reports if it never
     * ends. Scenario 2 tears down as soon as A is blocked. acquire: pairs with job_end's
     * release; seq_cst: as ws__pool_finished reads blocked. */
    while (atomic_load_explicit(&runs[0], memory_order_acquire) == 0 &&
           (SCENARIO != 2 || ws_load_seq_cst(&pool->blocked) == 0) && !model_execution_cut())
        ;
    /* ws_pool_destroy, less its debug check and statistics: the admitted jobs finish, then the
     * teardown. */
    wait_admitted_gone(pool);
    pool_teardown(pool);
    for (int i = 0; i < JOBS; i++)
        assert(atomic_load_explicit(&runs[i], memory_order_relaxed) == 1);
    return 0;
}
