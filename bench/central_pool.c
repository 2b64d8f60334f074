/* central_pool.c: the central-queue pool of central_pool.h.
 *
 * Locking: one mutex, `lock`, guards the queue (head, tail), pending, sleepers, stop and the
 * counters. It is the only lock; nothing else is held with it. A task's state moves
 * QUEUED -> RUNNING under the lock (whoever unlinks it), then RUNNING -> DONE outside it, by a
 * release store after fn returns, which a syncing parent reads with an acquire load.
 *
 * Sleeping: a worker that finds the queue empty counts itself in `sleepers` and waits on `work`,
 * all under the lock, so a producer that queues under the same lock and signals when sleepers is
 * non-zero cannot lose the wake-up. A sync that waits for a child another worker is running does
 * not sleep: it runs queued tasks (helping), and spins then yields when there are none.
 */
#include "central_pool.h"

#include "atomics.h"
#include "platform.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

enum { CQ_QUEUED = 1, CQ_RUNNING = 2, CQ_DONE = 3 };

/* A waiting sync runs queued tasks on its own stack; each such help nests a frame, so it stops
 * helping past this depth (and only spins) rather than risk the stack. */
#define CQ_MAX_HELP_DEPTH 64
/* Worker stacks: deep trees (the unbalanced tree search) recurse thousands of levels, and helping
 * nests further; this is address space, only touched pages cost memory. */
#define CQ_STACK_SIZE ((size_t)64 << 20)
/* Polls of a child's state between yields while a sync waits: about a microsecond of pauses,
 * short next to a yield's system call. */
#define CQ_SPINS 64

struct cq_pool {
    pthread_mutex_t lock;
    pthread_cond_t work;   /* signalled when a task is queued or stop is set; workers wait */
    pthread_cond_t idle;   /* broadcast when pending drops to 0; cq_pool_wait waits */
    cq_task *head, *tail;  /* the FIFO: queue at tail, take at head (guarded by lock) */
    _Atomic size_t queued; /* tasks in the FIFO; written under lock, read relaxed as a hint */
    size_t pending;        /* external tasks submitted and not finished (guarded by lock) */
    unsigned sleepers;     /* workers waiting on `work` (guarded by lock) */
    bool stop;             /* set by destroy (guarded by lock) */
    cq_stats stats;        /* guarded by lock */
    unsigned workers;
    pthread_t *threads;
};

static _Thread_local cq_pool *tls_pool; /* the pool whose worker this thread is, or NULL */
static _Thread_local int tls_depth;     /* helping nesting on this worker */

static void die(const char *fn, const char *msg)
{
    fprintf(stderr, "%s: %s\n", fn, msg);
    abort();
}

/* ---- queue, all with the lock held ---- */

static void enqueue_locked(cq_pool *p, cq_task *t)
{
    t->next = NULL;
    t->prev = p->tail;
    if (p->tail)
        p->tail->next = t;
    else
        p->head = t;
    p->tail = t;
    /* relaxed: a hint for lock-free peeks; the lock orders the queue itself */
    ws_store_relaxed(&p->queued, ws_load_relaxed(&p->queued) + 1);
    p->stats.spawns++;
    if (p->sleepers > 0)
        pthread_cond_signal(&p->work);
}

static void unlink_locked(cq_pool *p, cq_task *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        p->head = t->next;
    if (t->next)
        t->next->prev = t->prev;
    else
        p->tail = t->prev;
    /* relaxed: hint only, as in enqueue_locked */
    ws_store_relaxed(&p->queued, ws_load_relaxed(&p->queued) - 1);
    /* relaxed: the lock orders this against the sync that reads it under the same lock */
    ws_store_relaxed(&t->state, CQ_RUNNING);
}

/* Runs a task the caller has unlinked, then publishes its completion. */
static void run_task(cq_pool *p, cq_task *t)
{
    int external = t->external; /* read first: a finished spawned task's memory may be gone */
    t->fn(t->arg);
    if (!external) {
        /* release: publishes fn's writes; pairs with the acquire load in cq_sync */
        ws_store_release(&t->state, CQ_DONE);
        return;
    }
    pthread_mutex_lock(&p->lock);
    if (--p->pending == 0)
        pthread_cond_broadcast(&p->idle);
    pthread_mutex_unlock(&p->lock);
}

/* ---- workers ---- */

static void *worker_main(void *arg)
{
    cq_pool *p = arg;
    tls_pool = p;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->head && !p->stop) {
            p->sleepers++;
            p->stats.parks++;
            pthread_cond_wait(&p->work, &p->lock);
            p->sleepers--;
        }
        if (!p->head)
            break; /* stopping, and nothing left */
        cq_task *t = p->head;
        unlink_locked(p, t);
        pthread_mutex_unlock(&p->lock);
        run_task(p, t);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int cq_pool_create(cq_pool **out, unsigned workers)
{
    if (workers == 0)
        workers = 1;
    cq_pool *p = calloc(1, sizeof(*p));
    if (!p)
        return ENOMEM;
    p->threads = calloc(workers, sizeof(*p->threads));
    if (!p->threads) {
        free(p);
        return ENOMEM;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->idle, NULL);
    atomic_init(&p->queued, 0);

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    int err = pthread_attr_setstacksize(&attr, CQ_STACK_SIZE);
    unsigned started = 0;
    while (err == 0 && started < workers) {
        err = pthread_create(&p->threads[started], &attr, worker_main, p);
        if (err == 0)
            started++;
    }
    pthread_attr_destroy(&attr);
    p->workers = started;
    if (err != 0) {
        cq_pool_destroy(p); /* stops and joins the workers that did start */
        return err;
    }
    *out = p;
    return 0;
}

void cq_pool_destroy(cq_pool *p)
{
    if (!p)
        return;
    if (tls_pool == p)
        die("cq_pool_destroy", "called from one of the pool's own workers");
    cq_pool_wait(p);
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->workers; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->idle);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->lock);
    free(p->threads);
    free(p);
}

/* ---- external work ---- */

void cq_submit(cq_pool *p, cq_task *t, void (*fn)(void *), void *arg)
{
    if (!fn)
        die("cq_submit", "NULL function");
    t->fn = fn;
    t->arg = arg;
    t->external = 1;
    atomic_init(&t->state, CQ_QUEUED);
    pthread_mutex_lock(&p->lock);
    p->pending++;
    enqueue_locked(p, t);
    pthread_mutex_unlock(&p->lock);
}

void cq_pool_wait(cq_pool *p)
{
    if (tls_pool == p)
        die("cq_pool_wait", "called from one of the pool's own workers");
    pthread_mutex_lock(&p->lock);
    while (p->pending > 0)
        pthread_cond_wait(&p->idle, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

void cq_pool_run(cq_pool *p, void (*fn)(void *), void *arg)
{
    cq_task root;
    cq_submit(p, &root, fn, arg);
    cq_pool_wait(p);
}

/* ---- fork-join ---- */

void cq_spawn(cq_task *t, void (*fn)(void *), void *arg)
{
    cq_pool *p = tls_pool;
    if (!p)
        die("cq_spawn", "called outside a worker of a central-queue pool");
    if (!fn)
        die("cq_spawn", "NULL function");
    t->fn = fn;
    t->arg = arg;
    t->external = 0;
    atomic_init(&t->state, CQ_QUEUED);
    pthread_mutex_lock(&p->lock);
    enqueue_locked(p, t);
    pthread_mutex_unlock(&p->lock);
}

/* Unlinks and returns the oldest queued task, or NULL. */
static cq_task *take_head(cq_pool *p)
{
    /* relaxed: a stale hint only costs a lock round trip or a later retry */
    if (ws_load_relaxed(&p->queued) == 0)
        return NULL;
    pthread_mutex_lock(&p->lock);
    cq_task *t = p->head;
    if (t) {
        unlink_locked(p, t);
        p->stats.helps++;
    }
    pthread_mutex_unlock(&p->lock);
    return t;
}

void cq_sync(cq_task *t)
{
    cq_pool *p = tls_pool;
    if (!p)
        die("cq_sync", "called outside a worker of a central-queue pool");
    pthread_mutex_lock(&p->lock);
    /* relaxed: QUEUED -> RUNNING only happens under the lock we hold */
    int state = ws_load_relaxed(&t->state);
    if (state == CQ_QUEUED) {
        unlink_locked(p, t);
        pthread_mutex_unlock(&p->lock);
        t->fn(t->arg);                  /* nobody took it: run it here, like a plain call */
        ws_store_relaxed(&t->state, 0); /* relaxed: only this thread reads it from now on */
        return;
    }
    pthread_mutex_unlock(&p->lock);
    if (state != CQ_RUNNING && state != CQ_DONE)
        die("cq_sync", "task was not spawned, or was synced twice");

    /* acquire: pairs with the release store of CQ_DONE in run_task, so the child's results are
     * visible once we see it done */
    while (ws_load_acquire(&t->state) != CQ_DONE) {
        cq_task *other = tls_depth < CQ_MAX_HELP_DEPTH ? take_head(p) : NULL;
        if (other) {
            tls_depth++;
            run_task(p, other);
            tls_depth--;
            continue;
        }
        for (int i = 0; i < CQ_SPINS; i++) {
            ws__cpu_relax();
            /* acquire: as above */
            if (ws_load_acquire(&t->state) == CQ_DONE)
                break;
        }
        if (ws_load_acquire(&t->state) != CQ_DONE) /* acquire: as above */
            sched_yield();
    }
    /* Retire the record, so that syncing it a second time is reported instead of passing. */
    ws_store_relaxed(&t->state, 0); /* relaxed: the runner no longer touches it */
}

void cq_pool_stats(cq_pool *p, cq_stats *out)
{
    pthread_mutex_lock(&p->lock);
    *out = p->stats;
    pthread_mutex_unlock(&p->lock);
}
