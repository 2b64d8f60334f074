/* group.c: groups of jobs and detached submissions.
 *
 * Jobs (ws_group_submit, ws_submit) need a heap record each: the submitter does not keep one.
 * From a worker of the same pool a normal job is forked onto the worker's own deque, like a
 * spawn (cheap, LIFO, stealable); from anywhere else, or with WS_HIGH_PRIORITY, it goes through
 * an injector (FIFO), and counts as external work that ws_pool_destroy waits for.
 *
 * A group counts its unfinished jobs in one 32-bit word, which is also the futex a waiter
 * sleeps on: the decrement that reaches 0 (a job's completion, or a worker settling the count of
 * the batches it owes, see "Owed counts" below) wakes the waiter if one announced itself in the
 * word (group_count.h: no system call when nobody waits), and touches the group no more (the
 * waiter may return and free it at once).
 *
 * Destroy waits for injected jobs (pool.c, the admission word). A group's injected jobs do not
 * each count themselves there: the group holds one reference of its pool for all of them, a bit
 * of the same word (HOLDS_POOL), so that a batch costs the submitter one RMW on the group's
 * word per job and none on the pool's. The rule: a job may be injected only if the bit was set
 * when its own increment was made, or after its submitter set it (having counted a reference
 * in); the bit is cleared, and the reference given back, only by a compare-and-swap from
 * "bit, count 0" to 0. A job counted while the bit is set keeps the count above 0 until it has
 * finished, so that swap cannot succeed meanwhile: the reference outlives every job it covers.
 * Waiters wait for the word to be exactly 0, so they return only after the reference went back
 * (the swap is the clearer's last access to the group).
 *
 * Errors and cancellation. A group records the first error a job reports (ws_group_fail: one
 * compare-and-swap from 0, so the first call to run wins, whatever the submission order) and a
 * cancelled flag. A group made while a group job runs on the thread (or with
 * ws_group_init_nested) points to its parent, and is cancelled when any group up its chain is:
 * the check walks the chain (a load per level), so cancelling never has to find the children, as
 * in oneTBB's tree of task_group_contexts. The check is made when a job is about to start (a
 * cancelled job is counted, its on_cancel runs, its record is freed and the group counted down
 * as for a job that ran: nothing leaks and waits finish) and by jobs that poll
 * ws_group_cancelled. Only group jobs are ever skipped: fork-join inside a job always completes.
 *
 *
 * Waiting. A group wait on a worker of the group's pool runs only the group's own jobs: the
 * newest item of its own deque when that is one of them, or the oldest item of an injector when
 * that is one. Anything else stays where it is for others to run: running unrelated work on top
 * of the waiting frame could make the wait depend on that work (a deadlock when that work waits
 * for the waiter's own group) and grow the stack without bound (docs/scheduler.md). A wait that
 * finds none of its jobs to run counts as blocked when it parks, so a spare keeps the pool's P
 * workers busy meanwhile (spare.c).
 */
#include "group_count.h"
#include "internal.h"

#include <errno.h>

typedef struct ws__group {
    /* Read by every job's runner, written rarely. */
    ws_pool *pool;
    struct ws__group *parent; /* cancelled with it; NULL at the top. Set at init */
    /* 1 once cancelled: written by ws_group_cancel (release), read at job starts and by
     * pollers (acquire), cleared by ws_group_reset. */
    _Atomic uint32_t cancelled;
    _Atomic uint32_t error;   /* the first error: set once by ws_group_fail's CAS */
    _Atomic uint64_t skipped; /* jobs cancelled before they started: counted by their runners */
    /* Threads in a wait for the group: a worker that owes the group counts settles them. */
    _Atomic uint32_t waiters;
    /* Keeps pending off the lines of the fields above, wherever the caller put the group (see
     * below). */
    char apart[WS_CACHE_LINE];
    /* Unfinished jobs, HOLDS_POOL and WAITING (group_count.h): incremented by submitters,
     * decremented by completions; waiters futex on it. */
    _Atomic uint32_t pending;
} ws__group;

_Static_assert(sizeof(ws__group) <= sizeof(ws_group), "ws_group must hold a group");
/* A group only has the alignment of a pointer. With at least WS_CACHE_LINE - 1 bytes between
 * the end of the read-mostly fields and pending, some line boundary lies between them at any
 * address: a submitter's add to pending then never takes the line that a worker reads for each
 * job it runs (docs/external.md, "The group's line"). */
_Static_assert(offsetof(ws__group, pending) >= offsetof(ws__group, apart) + WS_CACHE_LINE - 1,
               "pending must be a line apart from the read-mostly fields");

/* In pending: the group holds one admitted reference of its pool (see the top). */
#define HOLDS_POOL WS_GROUP_HOLDS_POOL

/* ---------------------------------------------------------------------------------------- */
/* Submission                                                                                */
/* ---------------------------------------------------------------------------------------- */

/* Pushes job t on the calling worker's deque, like a spawn, when it is a worker of pool and t
 * is no urgent job; false if t must go through an injector. */
static bool fork_job(ws_pool *pool, ws__task *t)
{
    ws__worker *w = ws__tls_worker;
    if (w == NULL || w->pool != pool || (t->flags & WS_HIGH_PRIORITY))
        return false;
    ws__frames_flush(w); /* the stack spawns' private frames go first, in spawn order */
    if (ws__wdeque_push_size(w, t) < 0)
        return false;
    ws__count(w, spawns, 1);
    ws__idle_notify(pool);
    return true;
}

static void detached_run(void *job);
static void group_job_run(void *job);

/* A job record for fn(arg) of the given kind (WS_KIND_DETACHED or WS_KIND_GROUP), owned by its
 * pool or its group; NULL if out of memory. */
static ws__job *job_new(ws_pool *pool, ws_fn fn, void *arg, unsigned flags, unsigned kind,
                        void *owner)
{
    ws__job *j = ws__record_new(pool, ws__tls_worker);
    if (j == NULL)
        return NULL;
    j->task.fn = kind == WS_KIND_GROUP ? group_job_run : detached_run;
    j->task.arg = j;
    /* relaxed: published by the push or the injector link (release). */
    ws_store_relaxed(&j->task.state, WS_TASK_PENDING | (uint32_t)kind << WS_TASK_KIND_SHIFT);
    j->task.flags = flags;
    j->task.owner = owner;
    j->fn = fn;
    j->arg = arg;
    j->on_cancel = NULL;
    return j;
}

/* The runner of a detached job (its task's fn): runs it, then frees it and gives its reference
 * to the pool back. */
static void detached_run(void *job)
{
    ws__job *j = job;
    ws_pool *pool = j->task.owner;
    j->fn(j->arg);
    ws__record_free(pool, ws__tls_worker, j);
    ws__pool_release(pool, 1);
}

int ws_submit(ws_pool *pool, ws_fn fn, void *arg, unsigned flags)
{
    if (pool == NULL || fn == NULL)
        ws__contract_violation("ws_submit", "NULL pool or function");
    ws__pool_check_live(pool, "ws_submit");
    if (flags & ~WS_HIGH_PRIORITY)
        return EINVAL;
    ws__job *j = job_new(pool, fn, arg, flags, WS_KIND_DETACHED, pool);
    if (j == NULL)
        return ENOMEM;
    /* The job's reference, given back when it finishes; it also covers our wake-up after the
     * push (ws__pool_inject). */
    int err = ws__pool_admit(pool, 1);
    if (err != 0) {
        ws__record_free(pool, ws__tls_worker, j);
        return err;
    }
    ws__pool_inject(pool, &j->task);
    return 0;
}

static void group_init(ws__group *g, ws_pool *pool, ws__group *parent)
{
    ws__group_check_init(g); /* debug builds: not a group never waited for (group_check.c) */
    g->pool = pool;
    g->parent = parent;
    /* relaxed: not shared yet. */
    ws_store_relaxed(&g->pending, 0);
    ws_store_relaxed(&g->cancelled, 0);
    ws_store_relaxed(&g->error, 0);
    ws_store_relaxed(&g->skipped, 0);
    ws_store_relaxed(&g->waiters, 0);
}

void ws_group_init(ws_group *group, ws_pool *pool)
{
    if (group == NULL)
        ws__contract_violation("ws_group_init", "NULL group");
    if (pool != NULL)
        ws__pool_check_live(pool, "ws_group_init");
    group_init((ws__group *)group, pool != NULL ? pool : ws_default_pool(), ws__current_group);
}

void ws_group_init_nested(ws_group *group, ws_group *parent)
{
    if (group == NULL || parent == NULL)
        ws__contract_violation("ws_group_init_nested", "NULL group or parent");
    ws__group *p = (ws__group *)parent;
    group_init((ws__group *)group, p->pool, p);
}

static bool chain_cancelled(const ws__group *g)
{
    for (; g != NULL; g = g->parent) {
        /* acquire: pairs with the release store in ws_group_cancel, so that a job that sees
         * the cancellation also sees the error ws_group_fail recorded before it. */
        if (ws_load_acquire(&g->cancelled) != 0)
            return true;
    }
    return false;
}

/* A job of g is about to be injected; old is the count its increment read. Makes sure g holds
 * its pool's reference (see the top): 0, or the error of the admission. */
static int hold_pool(ws__group *g, uint32_t old)
{
    if (old & HOLDS_POOL)
        return ws__pool_open(g->pool);
    int err = ws__pool_admit(g->pool, 1);
    if (err != 0)
        return err;
    /* relaxed: the bit is read by the increments and compare-and-swaps of the same word; the
     * reference itself is ordered for destroy by the admission's RMW. */
    if (ws_fetch_or_relaxed(&g->pending, HOLDS_POOL) & HOLDS_POOL)
        ws__pool_release(g->pool, 1); /* another submitter set it first */
    return 0;
}

/* n jobs of g are finished (or never queued). The last one wakes the waiters, if any, and
 * gives back the pool's reference if g holds it (group_count.h). g may be gone as soon as the
 * count is 0. */
static void count_out(ws__group *g, ws_pool *pool, uint32_t n)
{
    unsigned todo = ws__group_count_down(&g->pending, n);
    if (todo & WS_GROUP_WAKE)
        ws__futex_wake(&g->pending, -1); /* the word's address only: g may be gone */
    if (todo & WS_GROUP_RELEASE)
        ws__pool_release(pool, 1);
}

int ws_group_submit_cancellable(ws_group *group, ws_fn fn, ws_fn on_cancel, void *arg,
                                unsigned flags)
{
    if (group == NULL || fn == NULL)
        ws__contract_violation("ws_group_submit", "NULL group or function");
    if (flags & ~WS_HIGH_PRIORITY)
        return EINVAL;
    ws__group *g = (ws__group *)group;
    ws_pool *pool = g->pool;
    ws__job *j = job_new(pool, fn, arg, flags, WS_KIND_GROUP, g);
    if (j == NULL)
        return chain_cancelled(g) ? ECANCELED : ENOMEM;
    j->on_cancel = on_cancel;
    ws__group_check_submitted(g, pool); /* before the job can finish and a wait return */
    /* relaxed: the job's publication (a release push or link) orders this increment before
     * the job's completion can decrement it. The cancellation check comes after it, on the
     * line the increment brought in (a failed submission counts itself out). */
    uint32_t old = ws_fetch_add_relaxed(&g->pending, 1);
    int err = chain_cancelled(g) ? ECANCELED : 0;
    if (err == 0 && fork_job(pool, &j->task))
        return 0;
    if (err == 0)
        err = hold_pool(g, old);
    if (err == 0) {
        ws__pool_inject(pool, &j->task);
        return 0;
    }
    ws__record_free(pool, ws__tls_worker, j);
    count_out(g, pool, 1);
    return err;
}

int ws_group_submit(ws_group *group, ws_fn fn, void *arg, unsigned flags)
{
    return ws_group_submit_cancellable(group, fn, NULL, arg, flags);
}

/* Runs job j of g, or, if a group up g's chain is cancelled, counts it skipped and runs its
 * on_cancel instead. */
static void job_body(ws__job *j, ws__group *g)
{
    if (WS_LIKELY(!chain_cancelled(g))) {
        j->fn(j->arg);
    } else {
        /* relaxed: published to waiters by the release decrement in count_out. */
        ws_fetch_add_relaxed(&g->skipped, 1);
        if (j->on_cancel != NULL)
            j->on_cancel(j->arg);
    }
}

/* Jobs of one group that the worker loop runs in one go (see batch_next), and the most finished
 * jobs a worker may owe a group (see owe). */
enum { BATCH_MAX = 64, OWED_MAX = 1u << 16 };
/* How long a batch that emptied the injector waits for its group's next jobs (see linger). */
#define BATCH_LINGER_NS 40000u

/* The injector is empty after a batch of g's jobs: waits until it is not, for up to
 * BATCH_LINGER_NS, looking at it only every 64 pauses. A submitter streaming jobs to a worker
 * that keeps up with it leaves the injector empty after every few jobs; the worker then takes
 * each job as soon as it is linked, and the two take the injector's tail, the records and the
 * idle word from each other for every job (docs/external.md, "Lingering batches"). The pauses
 * let a few jobs queue up between looks, and keep the wait short for a job that comes alone.
 * True: look again; false if cut short: someone waits for g (its count is owed), urgent work
 * came, or the machine has no CPU to spare for the wait (ws__idle_contended). */
static bool linger(ws_pool *pool, ws__group *g)
{
    /* relaxed: a hint, as in settle. */
    if (ws_load_relaxed(&g->waiters) != 0 || ws__idle_contended(pool))
        return false;
    uint64_t end = ws__now_ns() + BATCH_LINGER_NS;
    do {
        for (int i = 0; i < 64; i++)
            ws__cpu_relax();
        /* relaxed: as above. */
        if (ws_load_relaxed(&g->waiters) != 0 || ws__injector_maybe_nonempty(&pool->urgent))
            return false;
        if (ws__injector_maybe_nonempty(&pool->injector))
            return true;
    } while (!ws__idle_contended(pool) && ws__now_ns() < end);
    return false;
}

/* Worker w runs a batch of g's jobs for its worker loop: the next one, or NULL when the loop
 * would pick something else now (its own deque or the urgent queue hold work, or the oldest
 * queued job is not g's), or when the batch must end: it is full, the pool is traced or
 * profiled (the loop's run wraps each task), or the injector stayed empty while it lingered. */
static ws__job *batch_next(ws__worker *w, ws__group *g, uint32_t done)
{
    ws_pool *pool = w->pool;
    /* relaxed: see ws__worker_update_depth_limit. */
    if (done == BATCH_MAX || pool->trace != NULL || ws_load_relaxed(&w->profiling) != 0 ||
        ws__wdeque_size(&w->deque) != 0 || ws__injector_maybe_nonempty(&pool->urgent))
        return NULL;
    ws__task *t = ws__injector_take_owned(&pool->injector, g);
    /* Only an empty injector: another group's job, or a push in flight, ends the batch now. */
    if (t == NULL && !ws__injector_maybe_nonempty(&pool->injector) && linger(pool, g))
        t = ws__injector_take_owned(&pool->injector, g);
    if (t == NULL)
        return NULL;
    ws__count(w, injector_takes, 1);
    return (ws__job *)t; /* a job's task is its first member */
}

/* Owed counts. A submitter streaming jobs to a worker that runs them as fast as they come keeps
 * the injector nearly empty: batches end after a few jobs, and counting each batch off the
 * group's word took the word's line from the submitter every few jobs (docs/external.md,
 * "Owed counts"). So the worker loop's batches owe their counts instead (w->owed) and settle them
 * when the worker would do anything else: run another task, yield or park in its search for
 * work, or leave; or when a thread waits for the group (waiters, read in each round of the
 * search's spin). Observable is only the count reaching 0, which means no job is left: a worker
 * that owes counts has finished its batches and does nothing but look for the next one, and a
 * waiter makes it settle within a spin round. Without a waiter (ws_group_try_wait, ws_pool_destroy
 * through the group's pool reference) the count is settled when the spin phase ends, tens of
 * microseconds later at most. */
static void settle(ws__worker *w, bool force)
{
    ws__group *g = (ws__group *)w->owed_group;
    /* relaxed: a hint; without it, the spin's end settles. */
    if (!force && ws_load_relaxed(&g->waiters) == 0)
        return;
    uint32_t n = w->owed;
    w->owed = 0;
    w->owed_group = NULL;
    count_out(g, g->pool, n);
}

/* Worker w finished done jobs of g in a batch of its loop: owes them, and counts everything it
 * owes off at once if it may not keep owing (see settle for the waiters). */
static void owe(ws__worker *w, ws__group *g, uint32_t done)
{
    w->owed_group = g; /* the loop settled any other group's before running this batch */
    w->owed += done;
    w->settle = settle;
    /* relaxed: see ws__worker_update_depth_limit. */
    bool keep = w->owed < OWED_MAX && g->pool->trace == NULL && ws_load_relaxed(&w->profiling) == 0;
    settle(w, !keep);
}

/* The runner of a group job (its task's fn): runs it as the thread's current group's job, which
 * groups made meanwhile are nested in (job_body); then frees its record and counts it out.
 *
 * A job the worker loop took from the injector is the first of a batch: while the oldest queued
 * job is one of the same group and nothing else would come first (batch_next), the runner takes
 * it and runs it too, which is what the loop would do next, and owes the group the whole batch's
 * count at once (owe). Only the count reaching 0 is observable (waits), and it cannot while the
 * batch's next job, counted before it was queued, is unfinished; so the deferred decrements
 * change nothing but the traffic: a submitter adding to the group's word while a worker
 * subtracted from it took the word's cache line from each other twice per job. */
static void group_job_run(void *job)
{
    ws__job *j = job;
    ws__group *g = j->task.owner;
    ws_pool *pool = g->pool;
    ws__worker *w = ws__tls_worker;
    bool batch = w != NULL && w->loop_injected == &j->task;
    if (batch)
        w->loop_injected = NULL; /* a record reused inside the batch is no task of the loop's */
    ws__group *outer = ws__current_group;
    ws__current_group = g;
    uint32_t done = 0;
    do {
        job_body(j, g);
        ws__record_free(pool, w, j);
        done++;
    } while (batch && (j = batch_next(w, g, done)) != NULL);
    ws__current_group = outer;
    if (batch)
        owe(w, g, done);
    else
        count_out(g, pool, done);
}

/* ---------------------------------------------------------------------------------------- */
/* Waiting                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Worker w, waiting for g: one of g's jobs that it can take without touching other work (see
 * the top of this file), or NULL. */
static ws__task *own_job(ws__worker *w, ws__group *g)
{
    ws__task *t = NULL;
    if (ws__wdeque_may_look(w)) { /* a waited task is no job: leave it be */
        int64_t at;
        t = ws__wdeque_pop_at(w, &at);
        if (t != NULL && ws__task_is_job_of(t, g)) {
            ws__count(w, pops, 1);
            return t;
        }
        if (t != NULL)
            ws__wdeque_put_back(w, t, at);
    }
    ws_pool *pool = w->pool;
    t = ws__injector_take_owned(&pool->urgent, g);
    if (t == NULL)
        t = ws__injector_take_owned(&pool->injector, g);
    if (t != NULL)
        ws__count(w, injector_takes, 1);
    return t;
}

/* A thread starts (delta 1) or ends (-1) a wait for g: workers that owe g counts settle them. */
static void waiting(ws__group *g, int delta)
{
    /* relaxed: a hint (settle). */
    ws_fetch_add_relaxed(&g->waiters, (uint32_t)delta);
}

/* Waits until g has no pending job; w (NULL outside a worker of g's pool) runs g's jobs
 * meanwhile. */
static void wait_pending(ws__group *g, ws__worker *w)
{
    ws__wait wait = {.backoff = ws__backoff_start(w)};
    waiting(g, 1);
    for (;;) {
        uint32_t n = ws__group_count_read(&g->pending);
        if (n == 0)
            break;
        ws__task *t = w != NULL ? own_job(w, g) : NULL;
        if (t != NULL)
            ws__task_run_taken(w, t, "job");
        if (!ws__wait_step(w, &wait, t != NULL))
            continue;
        if ((n = ws__group_count_announce(&g->pending, n)) != 0)
            ws__park_word(w, &g->pending, n);
        else
            ws__thread_yield(); /* the word moved, or is a moment from 0 */
    }
    waiting(g, -1);
    ws__wait_end(w, &wait);
}

void ws_group_wait(ws_group *group)
{
    if (group == NULL)
        ws__contract_violation("ws_group_wait", "NULL group");
    ws__group *g = (ws__group *)group;
    /* relaxed: only a diagnosis; a live pool's group is waited for below. */
    if (!ws__pool_alive(g->pool) && ws_load_relaxed(&g->pending) != 0)
        ws__contract_violation("ws_group_wait", "the group's pool was inherited through fork() "
                                                "and its jobs run only in the parent");
    ws__worker *w = ws__tls_worker;
    /* A wait is no strand's work, in a profiled computation (profile.c); the jobs it runs are
     * outside the measured DAG and run without a frame. */
    ws__prof_strand_end();
    if (w == NULL || w->pool == g->pool) {
        wait_pending(g, w);
        ws__group_check_waited(g);
        ws__prof_strand_begin();
        return;
    }
    /* A worker of another pool cannot help this one, and its own pool loses it while it waits.
     * Say so to its pool, as ws_pool_run does, so that a spare keeps that pool's P workers
     * running: without this, two pools whose jobs wait for groups of the other deadlock once
     * every worker of both waits (tests/test_external_stress.c, mode cross). */
    /* acquire: as in wait_pending; an empty group needs no spare. */
    if (ws_load_acquire(&g->pending) != 0) {
        ws_block_begin();
        wait_pending(g, NULL);
        ws_block_end();
    }
    ws__group_check_waited(g);
    ws__prof_strand_begin();
}

int ws_group_wait_status(ws_group *group)
{
    ws_group_wait(group);
    return ws_group_status(group);
}

int ws_group_try_wait(ws_group *group)
{
    if (group == NULL)
        ws__contract_violation("ws_group_try_wait", "NULL group");
    /* acquire: as in wait_pending. */
    if (ws_load_acquire(&((ws__group *)group)->pending) != 0)
        return EBUSY;
    ws__group_check_waited(group);
    return 0;
}

/* Sleeps on g's count until it is 0 (0) or the clock passes deadline (ETIMEDOUT). */
static int sleep_until_done(ws__group *g, uint64_t deadline)
{
    for (;;) {
        uint32_t n = ws__group_count_read(&g->pending);
        if (n == 0)
            return 0;
        uint64_t now = ws__now_ns();
        if (now >= deadline)
            return ETIMEDOUT;
        if ((n = ws__group_count_announce(&g->pending, n)) != 0)
            ws__futex_wait_ns(&g->pending, n, deadline - now);
        else
            ws__thread_yield(); /* as in wait_pending */
    }
}

int ws_group_timed_wait(ws_group *group, uint64_t timeout_ns)
{
    if (group == NULL)
        ws__contract_violation("ws_group_timed_wait", "NULL group");
    ws__group *g = (ws__group *)group;
    uint64_t now = ws__now_ns();
    uint64_t deadline = timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
    if (ws_group_try_wait(group) == 0)
        return 0;
    /* It does not help, so on a worker it holds a CPU from its pool: a spare stands in. */
    ws__prof_strand_end(); /* as in ws_group_wait */
    ws_block_begin();
    waiting(g, 1);
    int err = sleep_until_done(g, deadline);
    if (err == 0)
        ws__group_check_waited(g);
    waiting(g, -1);
    ws_block_end();
    ws__prof_strand_begin();
    return err;
}

/* ---------------------------------------------------------------------------------------- */
/* Errors and cancellation                                                                   */
/* ---------------------------------------------------------------------------------------- */

void ws_group_fail(ws_group *group, int err)
{
    if (group == NULL || err <= 0)
        ws__contract_violation("ws_group_fail", "NULL group or an error code not above 0");
    ws__group *g = (ws__group *)group;
    uint32_t none = 0;
    /* acq_rel: the first call wins; the release store of cancelled below publishes the code
     * to whoever sees the cancellation. */
    ws_cas_acq_rel(&g->error, &none, (uint32_t)err);
    ws_group_cancel(group);
}

void ws_group_cancel(ws_group *group)
{
    if (group == NULL)
        ws__contract_violation("ws_group_cancel", "NULL group");
    /* release: pairs with the acquire load in chain_cancelled. */
    ws_store_release(&((ws__group *)group)->cancelled, 1);
}

bool ws_group_cancelled(const ws_group *group)
{
    if (group == NULL)
        ws__contract_violation("ws_group_cancelled", "NULL group");
    return chain_cancelled((const ws__group *)group);
}

int ws_group_status(const ws_group *group)
{
    if (group == NULL)
        ws__contract_violation("ws_group_status", "NULL group");
    const ws__group *g = (const ws__group *)group;
    bool cancelled = chain_cancelled(g); /* first: its acquire makes the error visible */
    /* acquire: pairs with ws_group_fail's CAS, for a failure without a cancellation seen. */
    int err = (int)ws_load_acquire(&g->error);
    return err != 0 ? err : cancelled ? ECANCELED : 0;
}

uint64_t ws_group_skipped(const ws_group *group)
{
    if (group == NULL)
        ws__contract_violation("ws_group_skipped", "NULL group");
    /* relaxed: a count, exact once a wait has returned (its acquire orders it). */
    return ws_load_relaxed(&((const ws__group *)group)->skipped);
}

int ws_group_reset(ws_group *group)
{
    if (group == NULL)
        ws__contract_violation("ws_group_reset", "NULL group");
    if (ws_group_try_wait(group) != 0)
        return EBUSY;
    ws__group *g = (ws__group *)group;
    /* relaxed: no job is pending and the caller is the only one using g (documented). */
    ws_store_relaxed(&g->cancelled, 0);
    ws_store_relaxed(&g->error, 0);
    ws_store_relaxed(&g->skipped, 0);
    return 0;
}
