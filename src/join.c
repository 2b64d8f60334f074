/* join.c: fork-join (ws_join, ws_spawn/ws_sync).
 *
 * A fork pushes the child's task record, which lives in the forking function's stack frame, on
 * the worker's own deque: no allocation per spawn. The parent goes on; at the join it pops the
 * newest item of its deque. If that is the child, nobody stole it and the parent runs it inline
 * (the fast path: a push, a pop and one counter update). Otherwise the pop finds the deque
 * empty, because a thief took the child, and with it everything older; the joiner then waits
 * for the thief while leapfrogging (wait.c). A fork from a thread that is no worker runs on the
 * default pool (pool.c).
 */
#include "internal.h"

#include <errno.h>
#include <string.h>

/* The innermost unsynced ws_spawn of this thread that is not in its worker's deque (injected
 * from outside a worker, or profiled): the spawn stack that ws_sync checks. Spawns pushed on a
 * worker's deque are checked by the deque's own order instead (a sync pops its task, and
 * pop_past_free catches a newer unsynced one). Every spawn on a worker, profiled or not, counts
 * in the deque's open_spawns until its sync, which ws__task_run_taken checks. */
static _Thread_local ws__task *spawn_top WS_TLS_FAST;

/* Flags of a spawned task record (next to WS_HIGH_PRIORITY). */
enum {
    SPAWN_IN_DEQUE = 1u << 8,        /* pushed on the worker's deque: ws_sync pops it */
    SPAWN_EXTERNAL = 1u << 9,        /* injected into t->owner (a pool): ws_sync releases it */
    SPAWN_PROFILED = 1u << 10,       /* t->owner is a ws__prof_slot: ws_sync merges and frees it */
    SPAWN_INLINE = WS__SPAWN_INLINE, /* pushed by worksteal.h's inline ws_spawn (uncounted) */
    SPAWN_RAN = 1u << 12,            /* run at the spawn: the deque could not grow */
};

/* ---------------------------------------------------------------------------------------- */
/* Exceptions                                                                                */
/* ---------------------------------------------------------------------------------------- */

/* C++ callers may throw through ws_join; the library is built with -fexceptions, so these
 * cleanups run while such an exception unwinds our frames (docs/api.md, "Exceptions").
 * While a() runs, the child b is on the deque, its record in this frame. If a() throws, the
 * cleanup takes the child back before the frame goes: popped, it is dropped unrun (as in the
 * serial program, where b would not run after a threw); stolen, it is waited for. Nothing is
 * left on the deque, and the exception goes on to the caller. (An exception that escapes a task
 * a worker took from elsewhere aborts: worker.c.) The fast path pays nothing for the guard
 * (WS_UNWIND_GUARD; bench/join-instructions.sh). */
typedef struct unwind_guard {
    ws__task *task; /* NULL: disarmed */
} unwind_guard;

static void join_abandon(ws__task *t);

static inline void join_unwind(unwind_guard *g)
{
    if (WS_UNLIKELY(g->task != NULL))
        join_abandon(g->task);
}

/* Runs `call` with child t on the deque, taking t back if `call` throws. */
#define JOIN_GUARDED(t, call)                                          \
    do {                                                               \
        unwind_guard join_guard_ WS_UNWIND_GUARD(join_unwind) = {(t)}; \
        call;                                                          \
        join_guard_.task = NULL;                                       \
    } while (0)

/* ---------------------------------------------------------------------------------------- */
/* Pushing and popping on a worker                                                           */
/* ---------------------------------------------------------------------------------------- */

/* The push that the deque's fast path declined: the deque is full or could not grow (false:
 * the caller runs the child inline), it was empty (wake an idle worker), it shared work with a
 * thief that asked (wake one too: the thief may have gone to sleep meanwhile), it is deeper than
 * ever (statistics), or the fast path is closed for profiling or tracing. A push onto a non-empty
 * deque that shares nothing wakes nobody: whoever emptied it is awake and will look again. */
static WS_NOINLINE bool push_rare(ws__worker *w, ws__task *t)
{
    ws__frames_flush(w); /* the stack spawns' private frames go first, in spawn order */
    bool published;
    int64_t before = ws__wdeque_push_slow(&w->deque, ws__deque_item(t), &published);
    if (before < 0) {
        ws__count(w, inline_runs, 1);
        if (published)
            ws__idle_notify(w->pool); /* the deque is full, but a thief's request was served */
        return false;
    }
    ws__count(w, spawns, 1);
    if (before >= w->max_depth) {
        w->max_depth = before + 1;
        /* relaxed store: a statistic with one writer (this worker). */
        ws_store_relaxed(&w->counters.max_deque_depth, (uint64_t)before + 1);
    }
    ws__worker_update_depth_limit(w);
    if (before == 0 || published)
        ws__idle_notify(w->pool);
    return true;
}

/* Worker w pushes t; false if the deque could not grow (the caller then runs it inline). */
static inline bool push_task(ws__worker *w, ws__task *t)
{
    if (WS_UNLIKELY(!ws__wdeque_fits(&w->deque)))
        return push_rare(w, t);
    ws__wdeque_push_fitting(&w->deque, ws__deque_item(t));
    ws__count(w, spawns, 1);
    return true;
}

bool ws__fork_push(ws__worker *w, ws__task *t)
{
    return push_task(w, t);
}

/* A join or sync found a waited task of its own frame's above its child: a spawn not synced yet. */
static WS_COLD _Noreturn void unsynced_above(const char *function)
{
    if (strcmp(function, "ws_sync") == 0)
        ws__contract_violation(function, "out of order: a newer ws_spawn of this thread is still "
                                         "unsynced (sync in reverse spawn order, newest first)");
    ws__contract_violation(function, "a ws_spawn made inside it is still unsynced (sync every "
                                     "spawn before the function that made it returns)");
}

/* The pop at a join found p, from index at, instead of the child t. One case is legitimate: p
 * is newer than t, a free item (a job or a future) that the parent's code submitted from this
 * worker and did not wait for. A wait runs only work it waits for (docs/scheduler.md, "What a
 * wait may run"), so such items are set aside while the pops go down to t, then put back, in
 * their order, from t's index up: they stay the frame's, queued, and t runs as if they had come
 * after it. Since waits never take a waited task of their own deque that is not theirs, nothing
 * on this worker takes t out from under p: an older p with t still pending is a task that was
 * never synced, or synced out of order. Returns t if it was still there, or NULL if a thief took
 * it. */
static WS_NOINLINE ws__task *pop_past_free(ws__worker *w, ws__task *t, ws__task *p, int64_t at,
                                           const char *function)
{
    ws__task *aside = NULL; /* newest first, linked through next: popped, so in no queue */
    while (p != NULL && p != t && ws__task_kind(p) != WS_KIND_WAITED) {
        ws_store_relaxed(&p->next, aside); /* relaxed: the popped task is ours alone */
        aside = p;
        p = ws__wdeque_pop_at(w, &at);
    }
    if (p != NULL && p != t) {
        /* relaxed: only this worker could have taken t while p, older, stayed in the deque
         * (thieves take the oldest first), and it marked t in its own program order. */
        if ((ws_load_relaxed(&t->state) & 3u) == WS_TASK_PENDING)
            unsynced_above(function);
        ws__wdeque_put_back(w, p, at);
        p = NULL;
    }
    while (aside != NULL) {
        ws__task *next = ws_load_relaxed(&aside->next); /* relaxed: ours alone, as above */
        ws__wdeque_put_back(w, aside, at);
        aside = next;
    }
    return p;
}

/* The end of a join on worker w whose child t was pushed (and not popped back by the fast
 * path), given what the pop at the join returned (from index at): run t, or wait for the thief
 * that took it. True if it was stolen. */
static bool join_finish_popped(ws__worker *w, ws__task *t, ws__task *popped, int64_t at,
                               const char *function, const char *what)
{
    ws__task *p = popped == t ? t : pop_past_free(w, t, popped, at, function);
    if (p == t) {
        ws__count(w, pops, 1);
        ws__run_child(w, t, what);
        return false;
    }
    ws__task_wait(w, t);
    return true;
}

static bool join_finish(ws__worker *w, ws__task *t, const char *function, const char *what)
{
    int64_t at;
    ws__task *p = ws__wdeque_pop_at(w, &at);
    return join_finish_popped(w, t, p, at, function, what);
}

/* An exception is unwinding the frame of a join whose child t is still pushed (see
 * "Exceptions"): take t back unrun, or wait for its thief. */
static WS_COLD void join_abandon(ws__task *t)
{
    ws__worker *w = ws__tls_worker;
    int64_t at;
    ws__task *p = ws__wdeque_pop_at(w, &at);
    if ((p == t ? t : pop_past_free(w, t, p, at, "ws_join")) != t)
        ws__task_wait(w, t);
}

/* ---------------------------------------------------------------------------------------- */
/* ws_join                                                                                   */
/* ---------------------------------------------------------------------------------------- */

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
    if (!ws__run_on_default(join_on_pool, &j)) {
        a(a_arg); /* the process is exiting: run serially, lose nothing */
        b(b_arg);
    }
}

/* A join while the pool is profiled or traced: each half runs in its own frame (profile) or as
 * a traced task, and the frame's totals are combined by the join rule of profile.c. */
static void join_instrumented(ws__worker *w, ws_fn a, void *a_arg, ws__task *t)
{
    bool profiled = ws__prof_active();
    ws__prof_slot sa = {0}, sb = {0};
    if (profiled) {
        ws__prof_strand_end();
        /* relaxed: not published yet (the push's release store does it). */
        ws_store_relaxed(&t->state, ws_load_relaxed(&t->state) | WS_TASK_PROFILED);
        t->owner = &sb;
    }
    bool pushed = push_task(w, t);
    JOIN_GUARDED(pushed ? t : NULL, if (profiled) ws__prof_run_child(a, a_arg, &sa);
                 else if (w->pool->trace != NULL) ws__run_traced(w, "join", a, a_arg);
                 else a(a_arg));
    bool stolen = false;
    if (pushed)
        stolen = join_finish(w, t, "ws_join", "join");
    else
        ws__run_child(w, t, "join");
    if (profiled) {
        ws__prof_join_merge(&sa, &sb, stolen);
        ws__prof_strand_begin();
    }
}

/* A join whose push has a rare outcome (see push_rare): the general path. */
static WS_NOINLINE void join_general(ws__worker *w, ws_fn a, void *a_arg, ws_fn b, void *b_arg)
{
    ws__task t;
    ws__task_init(&t, b, b_arg);
    /* relaxed: see ws__worker_update_depth_limit. */
    if (WS_UNLIKELY(ws_load_relaxed(&w->profiling) != 0 || w->pool->trace != NULL)) {
        join_instrumented(w, a, a_arg, &t);
        return;
    }
    if (!push_task(w, &t)) {
        a(a_arg);
        b(b_arg);
        return;
    }
    JOIN_GUARDED(&t, a(a_arg));
    join_finish(w, &t, "ws_join", "join");
}

/* The fast path: the deque's one comparison says that the push fits (not full, private part
 * not empty, no thief asking, not deeper than ever, pool neither profiled nor traced), so the
 * push is two plain stores and the pop, while the child is private, two plain loads and a
 * store. Every other case goes to out-of-line functions as tail calls, so nothing lives in
 * callee-saved registers across a(): the worker pointer is reloaded from thread-local storage,
 * and b, b_arg are read back from t. The child counts as a spawn and a pop in one counter
 * (the deque's fast_joins). worksteal.h inlines the same fast path into callers. */
void ws_join(ws_fn a, void *a_arg, ws_fn b, void *b_arg)
{
    ws__worker *w = ws__tls_worker;
    if (WS_UNLIKELY(w == NULL)) {
        join_outside(a, a_arg, b, b_arg);
        return;
    }
    if (WS_UNLIKELY(a == NULL || b == NULL))
        ws__contract_violation("ws_join", "NULL function");
    if (WS_UNLIKELY(!ws__wdeque_fits(&w->deque))) {
        join_general(w, a, a_arg, b, b_arg);
        return;
    }
    ws__task t;
    ws__task_init(&t, b, b_arg);
    ws__wdeque_push_fitting(&w->deque, &t); /* a waited task: its item is its address */
    JOIN_GUARDED(&t, a(a_arg));
    ws__join_finish((struct ws__join_rec *)&t);
}

/* The inline join of worksteal.h: a() threw with the child t still pushed (see Exceptions). */
void ws__join_abandon(struct ws__join_rec *t)
{
    join_abandon((ws__task *)t);
}

/* The end of a fork whose child t was pushed by a fast path (the library's ws_join, or the
 * inline code of worksteal.h when its child is not where the inline test looks), which counted
 * nothing: pop the child back and run it, or run jobs above it first, or wait. */
static void finish_fast_push(ws__worker *w, ws__task *t, const char *function, const char *what)
{
    int64_t at;
    ws__task *p = ws__wdeque_pop_at(w, &at);
    if (WS_LIKELY(p == t)) {
        /* relaxed: a statistic with one writer (this worker). */
        ws_counter_add(&w->deque.fast_joins, 1);
        t->fn(t->arg);
        return;
    }
    ws__count(w, spawns, 1); /* pushed, but not popped back */
    join_finish_popped(w, t, p, at, function, what);
}

void ws__join_finish(struct ws__join_rec *rec)
{
    finish_fast_push(ws__tls_worker, (ws__task *)rec, "ws_join", "join");
}

/* ---------------------------------------------------------------------------------------- */
/* Spawn and sync                                                                            */
/* ---------------------------------------------------------------------------------------- */

static WS_NOINLINE void spawn_outside(ws__task *t)
{
    ws_pool *pool = ws__default_pool_if_live();
    if (pool == NULL || ws__pool_admit(pool, 1) != 0) {
        t->flags = 0;
        t->fn(t->arg); /* the process is exiting: run it now, lose nothing */
        ws_store_relaxed(&t->state, WS_TASK_DONE); /* relaxed: read by this thread only */
        return;
    }
    /* The reference is ws_sync's: it keeps the pool alive until the sync has waited. */
    t->owner = pool;
    t->flags = SPAWN_EXTERNAL;
    ws__pool_inject(pool, t);
}

/* Pushes spawned task t on w, or runs it now if the deque cannot grow. */
static void spawn_push(ws__worker *w, ws__task *t)
{
    if (WS_LIKELY(push_task(w, t)))
        return;
    t->flags = (t->flags & ~SPAWN_IN_DEQUE) | SPAWN_RAN;
    ws__run_child(w, t, "spawn");
    ws_store_relaxed(&t->state, WS_TASK_DONE); /* relaxed: read by this thread only */
}

static void spawn_stack_push(ws__task *t)
{
    t->prev_spawn = spawn_top;
    spawn_top = t;
}

/* ws_spawn while the pool is profiled: the spawn point's span goes in a slot for ws_sync.
 * False: no memory for the slot (the caller spawns it unprofiled). */
static WS_NOINLINE bool spawn_profiled(ws__worker *w, ws__task *t)
{
    ws__prof_strand_end(); /* first, so that the allocation below is charged to no strand */
    ws__prof_slot *slot = ws__malloc(sizeof *slot);
    if (slot != NULL) {
        ws__prof_spawn_mark(slot);
        /* relaxed: not published yet (the push's release store does it). */
        ws_store_relaxed(&t->state, ws_load_relaxed(&t->state) | WS_TASK_PROFILED);
        t->flags = SPAWN_IN_DEQUE | SPAWN_PROFILED;
        t->owner = slot;
        spawn_stack_push(t);
        spawn_push(w, t);
        w->deque.open_spawns++; /* until sync_profiled, as for every spawn on a worker */
    }
    ws__prof_strand_begin();
    return slot != NULL;
}

void ws_spawn(ws_task *task, ws_fn fn, void *arg)
{
    if (WS_UNLIKELY(task == NULL || fn == NULL))
        ws__contract_violation("ws_spawn", "NULL task or function");
    ws__task *t = (ws__task *)task;
    ws__task_init(t, fn, arg);
    ((ws__spawn *)t)->bottom = WS__NOT_INLINE; /* the inline ws_sync leaves it to ws_sync */
    ws__worker *w = ws__tls_worker;
    if (WS_UNLIKELY(w == NULL)) {
        spawn_stack_push(t);
        spawn_outside(t);
        return;
    }
    /* relaxed: see ws__worker_update_depth_limit. */
    if (WS_UNLIKELY(ws_load_relaxed(&w->profiling) != 0) && ws__prof_active() &&
        spawn_profiled(w, t))
        return;
    t->flags = SPAWN_IN_DEQUE;
    spawn_push(w, t);
    if (t->flags == SPAWN_IN_DEQUE)
        w->deque.open_spawns++;
}

/* Whether t is on this thread's stack of unsynced spawns (walked only to name a violation). */
static bool on_spawn_stack(const ws__task *t)
{
    for (const ws__task *s = spawn_top; s != NULL; s = s->prev_spawn) {
        if (s == t)
            return true;
    }
    return false;
}

static WS_COLD void sync_violation(ws__task *t)
{
    if (t == NULL)
        ws__contract_violation("ws_sync", "NULL task");
    /* relaxed: the spawning thread's own earlier store. */
    if (ws_load_relaxed(&t->state) == WS_TASK_SYNCED)
        ws__contract_violation("ws_sync", "task synced twice");
    if (t->flags == 0)
        ws__contract_violation("ws_sync", "no ws_spawn to sync: the task was never spawned "
                                          "(call ws_spawn on it first)");
    if (!on_spawn_stack(t))
        ws__contract_violation("ws_sync", "a task this thread did not spawn (ws_sync must run "
                                          "on the thread that called ws_spawn)");
    ws__contract_violation("ws_sync", "out of order: not the newest unsynced ws_spawn of this "
                                      "thread (sync in reverse spawn order, newest first)");
}

/* ws_sync of a profiled spawn: the child's totals merge by the sync rule of profile.c. */
static WS_NOINLINE void sync_profiled(ws__task *t)
{
    ws__prof_slot *slot = t->owner;
    ws__worker *w = ws__tls_worker;
    ws__prof_strand_end();
    w->deque.open_spawns--;
    bool stolen = false;
    if (t->flags & SPAWN_IN_DEQUE)
        stolen = join_finish(w, t, "ws_sync", "spawn");
    ws__prof_sync_merge(slot, stolen);
    ws__free(slot);
    ws__prof_strand_begin();
}

/* ws_sync's fast path: t, spawned on worker w's deque, is its newest item and private (at or
 * above the guard), and the fast path is open (limit not 0: not profiled, not traced, no
 * thief asking): take it back with plain accesses and run it. False: nothing was done. */
static inline bool sync_popped_fast(ws__worker *w, ws__task *t)
{
#ifdef WS_LOCKED_DEQUE
    (void)w, (void)t;
    return false;
#else
    ws_sdeque *q = &w->deque;
    /* relaxed: the owner's own variables; limit as in ws__sdeque_fits. */
    int64_t b = ws_load_relaxed(&q->bottom) - 1;
    if (b < q->guard || ws_load_relaxed(&q->limit) == 0 ||
        ws_load_relaxed(&q->slot[(size_t)b & q->mask]) != t)
        return false;
    ws_store_release(&q->bottom, b); /* release: as in ws__sdeque_pop */
    ws__count(w, pops, 1);
    t->fn(t->arg);
    return true;
#endif
}

/* ws_sync of a task that a ws_spawn on this worker pushed on its deque (the library's, which
 * counted the push, or worksteal.h's inline one, which did not, when the inline ws_sync could
 * not take it back), or ran at once. Such tasks are not on the spawn stack: the deque's order
 * and the worker's count of open spawns stand for it. */
static WS_NOINLINE void sync_on_worker(ws__task *t)
{
    ws__worker *w = ws__tls_worker;
    ws__spawn *s = (ws__spawn *)t;
    /* relaxed: the spawning thread's own earlier store. The inline ws_sync marks the index. */
    if (ws_load_relaxed(&t->state) == WS_TASK_SYNCED ||
        (t->flags == SPAWN_INLINE && s->bottom == WS__NOT_INLINE))
        ws__contract_violation("ws_sync", "task synced twice");
    if (t->flags != SPAWN_RAN) {
        if (w == NULL)
            ws__contract_violation("ws_sync", "a task synced on a thread that did not spawn it");
        w->deque.open_spawns--;
        if (t->flags == SPAWN_INLINE)
            finish_fast_push(w, t, "ws_sync", "spawn");
        else if (!sync_popped_fast(w, t))
            join_finish(w, t, "ws_sync", "spawn");
    }
    /* relaxed: only this thread reads it, to diagnose a second ws_sync. */
    ws_store_relaxed(&t->state, WS_TASK_SYNCED);
    s->bottom = WS__NOT_INLINE; /* and the inline ws_sync leaves it to ws_sync */
}

void ws_sync(ws_task *task)
{
    ws__task *t = (ws__task *)task;
    if (WS_LIKELY(t != NULL && (t->flags == SPAWN_IN_DEQUE || t->flags == SPAWN_INLINE ||
                                t->flags == SPAWN_RAN))) {
        sync_on_worker(t);
        return;
    }
    /* On the spawn stack: injected from outside a worker, or profiled. */
    if (WS_UNLIKELY(t == NULL || t != spawn_top))
        sync_violation(t);
    spawn_top = t->prev_spawn;
    /* The flags, not the state: a thief's completion overwrites the state's PROFILED bit. */
    if (t->flags & SPAWN_PROFILED) {
        sync_profiled(t);
    } else if (t->flags & SPAWN_EXTERNAL) {
        ws__task_wait(NULL, t);
        ws__pool_release(t->owner, 1);
    }
    /* relaxed: only this thread reads it, to diagnose a second ws_sync. */
    ws_store_relaxed(&t->state, WS_TASK_SYNCED);
}
