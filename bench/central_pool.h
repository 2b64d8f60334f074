/* central_pool.h: the benchmarks' "central-queue pool", the baseline work stealing is measured
 * against.
 *
 * One FIFO shared by every worker, guarded by one mutex, with a condition variable on which idle
 * workers sleep. Every spawn, every take and every external submission goes through that one lock:
 * this is the design the seeds describe as the symptom ("every task creation and every task
 * acquisition touches one cache line that all cores are fighting over"). It is written plainly
 * and correctly, not made deliberately slow: a sync runs its own child inline when nobody has
 * taken it yet, and otherwise helps by running queued tasks while it waits.
 *
 * Bench-only code; it never goes into the library. Types:
 *   cq_pool   the pool (opaque): the queue, the lock, the workers.
 *   cq_task   one queued call, in caller memory (on the stack for cq_spawn), linked into the
 *             queue intrusively so that spawning never allocates.
 */
#ifndef WS_BENCH_CENTRAL_POOL_H
#define WS_BENCH_CENTRAL_POOL_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct cq_pool cq_pool;

typedef struct cq_task {
    struct cq_task *prev, *next; /* queue links; guarded by the pool lock */
    void (*fn)(void *);
    void *arg;
    _Atomic int state; /* CQ_QUEUED -> CQ_RUNNING -> CQ_DONE; see central_pool.c */
    int external;      /* submitted from outside (counted in the pool's pending) */
} cq_task;

typedef struct cq_stats {
    uint64_t spawns; /* tasks queued (cq_spawn and cq_submit) */
    uint64_t parks;  /* times a worker slept on the condition variable */
    uint64_t helps;  /* queued tasks run by a sync waiting for a taken child */
} cq_stats;

/* Starts `workers` threads (at least 1). Any thread. 0 or an errno code (nothing left running). */
int cq_pool_create(cq_pool **out, unsigned workers);
/* Waits for all submitted work, stops and joins the workers, frees the pool. Not from a worker. */
void cq_pool_destroy(cq_pool *pool);

/* Runs fn(arg) on a worker and blocks until it and everything submitted so far are done.
 * Any thread except the pool's own workers. */
void cq_pool_run(cq_pool *pool, void (*fn)(void *), void *arg);

/* Fork-join, on a worker of a pool only (aborts elsewhere). fn(arg) may run on any worker until
 * cq_sync(task) returns. Sync each task once; any order works. */
void cq_spawn(cq_task *task, void (*fn)(void *), void *arg);
void cq_sync(cq_task *task);

/* A detached job from outside the pool: task must stay valid until cq_pool_wait returns. */
void cq_submit(cq_pool *pool, cq_task *task, void (*fn)(void *), void *arg);
/* Blocks until every submitted job has finished. Any thread except the pool's workers. */
void cq_pool_wait(cq_pool *pool);

/* Counters since creation. Any thread (takes the lock). */
void cq_pool_stats(cq_pool *pool, cq_stats *out);

#endif /* WS_BENCH_CENTRAL_POOL_H */
