/* join.c: fork-join (ws_join, ws_spawn/ws_sync), running taken tasks, and waiting for them.
 *
 * A fork pushes the child's task record, which lives in the forking function's stack frame, on
 * the worker's own deque: no allocation per spawn. The parent goes on; at the join it pops the
 * newest item of its deque. If that is the child, nobody stole it and the parent runs it inline
 * (the fast path: a push, a pop and two counter updates). Otherwise the pop finds the deque
 * empty, because a thief took the child, and with it everything older.
 *
 * Waiting for a stolen child (ws__task_wait). The joiner cannot leave its frame, so it helps
 * while it waits, but only by leapfrogging: it steals from the worker that took its child
 * (Wagner and Calder, "Leapfrogging: a portable technique for implementing efficient
 * futures", 1993; Lace does the same). Everything in the thief's deque descends from the stolen
 * child, so what the joiner runs is work its own join waits for, and its stack grows at most by
 * the depth of the child's subtree: the stack stays bounded by the serial program's depth, which
 * is what the space bound S_P <= P * S_1 needs. Stealing arbitrary work here could pile
 * unrelated frames on top of the waiting one without limit. When there is nothing to leapfrog,
 * the joiner spins, yields, and finally parks on the task's state word; the thief wakes it when
 * the child completes. docs/scheduler.md discusses the choice.
 *
 * Task completion. The runner of a taken task publishes DONE with a release exchange; the old
 * value tells it whether a waiter parked (WS_TASK_WAITER) and needs a futex wake. The waiter
 * reads DONE with acquire, so everything the child did is visible after the join.
 */
#include "internal.h"

#include <errno.h>

/* The innermost unsynced ws_spawn of this thread: the spawn stack that ws_sync checks. */
static _Thread_local ws__task *spawn_top WS_TLS_FAST;

/* Flags of a spawned task record. */
enum {
    SPAWN_IN_DEQUE = 1u << 8, /* pushed on the worker's deque: ws_sync pops it */
    SPAWN_EXTERNAL = 1u << 9, /* injected into t->owner (a pool): ws_sync releases it */
};

static inline void task_init(ws__task *t, ws_fn fn, void *arg)
{
    t->fn = fn;
    t->arg = arg;
    /* relaxed: the record is published by the push's release store of bottom (or the
     * injector's release link), which orders these stores before any reader. */
    ws_store_relaxed(&t->state, WS_TASK_PENDING | WS_KIND_WAITED << WS_TASK_KIND_SHIFT);
}

/* ---------------------------------------------------------------------------------------- */
/* Running and waiting                                                                       */
/* ---------------------------------------------------------------------------------------- */

static void complete(ws__task *t)
{
    /* relaxed: the kind bits were written before the task was published, and the taker is the
     * only thread that changes the word other than WAITER bits. */
    uint32_t kind = ws_load_relaxed(&t->state) >> WS_TASK_KIND_SHIFT & 3u;
    if (kind == WS_KIND_WAITED) {
        /* acq_rel: the release half publishes the task's effects to the waiter's acquire load
         * of state; the acquire half makes the waiter's WAITER flag ours to act on. After this
         * the record may be gone (the waiter returns): only its address is used below. */
        uint32_t old = ws_exchange_acq_rel(&t->state, WS_TASK_DONE);
        if (old & WS_TASK_WAITER)
            ws__futex_wake(&t->state, -1);
    } else if (kind == WS_KIND_DETACHED) {
        ws_pool *pool = t->owner;
        ws__free(t);
        ws__pool_release(pool);
    } else {
        ws__group_job_done(t);
    }
}

void ws__task_run_taken(ws__worker *w, ws__task *t)
{
    /* relaxed: marks the taker, a hint for a leapfrogging joiner, which re-reads it until it
     * is set. An RMW, because the joiner may be or-ing in WAITER at the same time. */
    if (w != NULL)
        ws_fetch_or_relaxed(&t->state, WS_TASK_TAKEN | (w->id + 1) << WS_TASK_THIEF_SHIFT);
    ws__task *saved = spawn_top;
    t->fn(t->arg);
    if (WS_UNLIKELY(spawn_top != saved))
        ws__contract_violation("ws_spawn", "a task returned without ws_sync of a task it spawned");
    complete(t);
}

/* Joiner w helps by running work from the thief of t; NULL if there is none now. */
static ws__task *leapfrog(ws__worker *w, ws__task *t)
{
    /* relaxed: only a hint about whom to steal from; see ws__task_run_taken. */
    uint32_t thief = ws_load_relaxed(&t->state) >> WS_TASK_THIEF_SHIFT;
    if (thief == 0 || thief - 1 == w->id || thief > 0xFFFF)
        return NULL; /* not marked yet (or DONE/SYNCED, which the caller sees next) */
    ws__task *u = ws__steal_from(w, w->pool->workers[thief - 1]);
    if (u != NULL)
        ws__count(w, leapfrogs, 1);
    return u;
}

/* Parks until t is DONE; s is the state last read (not DONE). */
static void park_on_task(ws__worker *w, ws__task *t, uint32_t s)
{
    if (!(s & WS_TASK_WAITER)) {
        /* acq_rel: announces the waiter to the completer's exchange; failure means the state
         * moved (DONE), and the caller re-reads it. */
        if (!ws_cas_acq_rel(&t->state, &s, s | WS_TASK_WAITER))
            return;
        s |= WS_TASK_WAITER;
    }
    if (w != NULL)
        ws__count(w, parks, 1);
    ws__futex_wait(&t->state, s);
}

void ws__task_wait(ws__worker *w, ws__task *t)
{
    ws__backoff b = {0};
    for (;;) {
        /* acquire: pairs with the release exchange in complete; the child's writes are visible
         * once we see DONE. */
        uint32_t s = ws_load_acquire(&t->state);
        if (s == WS_TASK_DONE)
            return;
        ws__task *u = w != NULL ? leapfrog(w, t) : NULL;
        if (u != NULL) {
            ws__task_run_taken(w, u);
            b.round = 0;
        } else if (ws__backoff_step(&b)) {
            park_on_task(w, t, s);
        }
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Fork and join on a worker                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* The rare outcomes of a push: the deque could not grow (false: the caller runs the child
 * inline), it was empty (wake an idle worker), or it is deeper than ever (statistics). */
static WS_NOINLINE bool push_rare(ws__worker *w, int64_t before)
{
    if (before < 0) {
        ws__count(w, inline_runs, 1);
        return false;
    }
    ws__count(w, spawns, 1);
    if (before >= w->max_depth) {
        w->max_depth = before + 1;
        w->depth_limit = (uint64_t)before;
        /* relaxed store: a statistic with one writer (this worker). */
        ws_store_relaxed(&w->counters.max_deque_depth, (uint64_t)before + 1);
    }
    if (before == 0)
        ws__idle_notify(w->pool);
    return true;
}

/* True when a push that found `before` items needs push_rare: one unsigned comparison catches
 * all the cases (before - 1 wraps around for -1 and 0; a full deque has before >= capacity >=
 * max_depth). A push onto a non-empty deque wakes nobody: whoever emptied it is awake and will
 * look again. */
static inline bool push_is_rare(ws__worker *w, int64_t before)
{
    return WS_UNLIKELY((uint64_t)before - 1 >= w->depth_limit);
}

/* Worker w pushes t; false if the deque could not grow (the caller then runs it inline). */
static inline bool push_task(ws__worker *w, ws__task *t)
{
    int64_t before = ws__wdeque_push_size(&w->deque, t);
    if (push_is_rare(w, before))
        return push_rare(w, before);
    ws__count(w, spawns, 1);
    return true;
}

/* The child t of worker w was not popped back: p is what the pop found instead. */
static WS_NOINLINE void join_stolen(ws__worker *w, ws__task *t, ws__task *p, const char *function)
{
    if (p != NULL)
        ws__contract_violation(function, "the deque holds a task that was never synced");
    ws__task_wait(w, t);
}

struct join_args {
    ws_fn a, b;
    void *a_arg, *b_arg;
};

static void join_on_pool(void *p)
{
    struct join_args *j = p;
    ws_join(j->a, j->a_arg, j->b, j->b_arg);
}

/* ws_join from a thread that is not a worker: run it on the default pool. */
static WS_NOINLINE void join_outside(ws_fn a, void *a_arg, ws_fn b, void *b_arg)
{
    if (a == NULL || b == NULL)
        ws__contract_violation("ws_join", "NULL function");
    struct join_args j = {a, b, a_arg, b_arg};
    if (ws_pool_run(ws_default_pool(), join_on_pool, &j) != 0) {
        a(a_arg); /* the default pool is shutting down (exit): run serially, lose nothing */
        b(b_arg);
    }
}

/* The end of a join on worker w whose child t was pushed: pop it back and run it, or wait for
 * the thief that took it. */
static inline void join_finish(ws__worker *w, ws__task *t, const char *function)
{
    ws__task *p = ws__wdeque_pop(&w->deque);
    if (WS_LIKELY(p == t)) {
        ws__count(w, pops, 1);
        t->fn(t->arg);
        return;
    }
    join_stolen(w, t, p, function);
}

/* A join whose push has a rare outcome (see push_rare): the general path. */
static WS_NOINLINE void join_general(ws__worker *w, ws_fn a, void *a_arg, ws_fn b, void *b_arg)
{
    ws__task t;
    task_init(&t, b, b_arg);
    if (!push_task(w, &t)) {
        a(a_arg);
        b(b_arg);
        return;
    }
    a(a_arg);
    join_finish(w, &t, "ws_join");
}

/* The fast path: the deque is neither empty nor full nor deeper than ever, so the push needs no
 * check and no call. Every other case goes to out-of-line functions as tail calls, so nothing
 * lives in callee-saved registers across a(): the worker pointer is reloaded from thread-local
 * storage, and b, b_arg are read back from t. The child counts as a spawn and a pop in one
 * counter (fast_joins). */
void ws_join(ws_fn a, void *a_arg, ws_fn b, void *b_arg)
{
    ws__worker *w = ws__tls_worker;
    if (WS_UNLIKELY(w == NULL)) {
        join_outside(a, a_arg, b, b_arg);
        return;
    }
    if (WS_UNLIKELY(a == NULL || b == NULL))
        ws__contract_violation("ws_join", "NULL function");
    int64_t bottom = ws__wdeque_owner_bottom(&w->deque);
    if (push_is_rare(w, ws__wdeque_owner_size(&w->deque, bottom))) {
        join_general(w, a, a_arg, b, b_arg);
        return;
    }
    ws__task t;
    task_init(&t, b, b_arg);
    ws__wdeque_push_fitting(&w->deque, &t, bottom);
    a(a_arg);
    w = ws__tls_worker;
    ws__task *p = ws__wdeque_pop(&w->deque);
    if (WS_LIKELY(p == &t)) {
        ws__count(w, fast_joins, 1);
        t.fn(t.arg);
        return;
    }
    ws__count(w, spawns, 1); /* pushed, but not popped back */
    join_stolen(w, &t, p, "ws_join");
}

/* ---------------------------------------------------------------------------------------- */
/* Spawn and sync                                                                            */
/* ---------------------------------------------------------------------------------------- */

static WS_NOINLINE void spawn_outside(ws__task *t)
{
    ws_pool *pool = ws_default_pool();
    if (ws__pool_admit(pool) != 0) {
        t->fn(t->arg); /* the default pool is shutting down (exit): run it now */
        ws_store_relaxed(&t->state, WS_TASK_DONE); /* relaxed: read by this thread only */
        return;
    }
    t->owner = pool;
    t->flags = SPAWN_EXTERNAL;
    ws__pool_inject(pool, t);
}

void ws_spawn(ws_task *task, ws_fn fn, void *arg)
{
    if (WS_UNLIKELY(task == NULL || fn == NULL))
        ws__contract_violation("ws_spawn", "NULL task or function");
    ws__task *t = (ws__task *)task;
    task_init(t, fn, arg);
    t->flags = 0;
    t->prev_spawn = spawn_top;
    spawn_top = t;
    ws__worker *w = ws__tls_worker;
    if (WS_UNLIKELY(w == NULL)) {
        spawn_outside(t);
        return;
    }
    t->flags = SPAWN_IN_DEQUE;
    if (WS_UNLIKELY(!push_task(w, t))) {
        t->flags = 0;
        fn(arg);
        ws_store_relaxed(&t->state, WS_TASK_DONE); /* relaxed: read by this thread only */
    }
}

static WS_COLD void sync_violation(ws__task *t)
{
    if (t == NULL)
        ws__contract_violation("ws_sync", "NULL task");
    /* relaxed: the spawning thread's own earlier store. */
    if (ws_load_relaxed(&t->state) == WS_TASK_SYNCED)
        ws__contract_violation("ws_sync", "task synced twice");
    ws__contract_violation("ws_sync", "not the most recent unsynced ws_spawn of this thread "
                                      "(sync in reverse spawn order)");
}

void ws_sync(ws_task *task)
{
    ws__task *t = (ws__task *)task;
    if (WS_UNLIKELY(t == NULL || t != spawn_top))
        sync_violation(t);
    spawn_top = t->prev_spawn;
    if (WS_LIKELY(t->flags & SPAWN_IN_DEQUE)) {
        join_finish(ws__tls_worker, t, "ws_sync");
    } else {
        ws__task_wait(NULL, t);
        if (t->flags & SPAWN_EXTERNAL)
            ws__pool_release(t->owner);
    }
    /* relaxed: only this thread reads it, to diagnose a second ws_sync. */
    ws_store_relaxed(&t->state, WS_TASK_SYNCED);
}

/* ---------------------------------------------------------------------------------------- */
/* Running a function on a pool from outside                                                 */
/* ---------------------------------------------------------------------------------------- */

int ws_pool_run(ws_pool *pool, ws_fn fn, void *arg)
{
    if (pool == NULL || fn == NULL)
        ws__contract_violation("ws_pool_run", "NULL pool or function");
    ws__worker *w = ws__tls_worker;
    if (w != NULL && w->pool == pool) {
        fn(arg);
        return 0;
    }
    int err = ws__pool_admit(pool);
    if (err != 0)
        return err;
    ws__task t;
    task_init(&t, fn, arg);
    t.flags = 0;
    ws__pool_inject(pool, &t);
    /* A worker of another pool cannot help here: it blocks, and says so to its own pool. */
    if (w != NULL)
        ws_block_begin();
    ws__task_wait(NULL, &t);
    if (w != NULL)
        ws_block_end();
    ws__pool_release(pool);
    return 0;
}
