/* worker.c: workers: making and starting them, the worker loop, stealing, and running the
 * tasks a worker takes.
 *
 * A worker's next task comes from, in order:
 *   1. the high-priority injector (urgent external work runs before anything else is picked);
 *   2. every FAIR_PERIOD-th pick, the normal injector (so external work is never starved by a
 *      worker that keeps finding local work; Go's scheduler checks its global queue every 61st
 *      pick for the same reason). Waits that help (join.c, group.c) count their picks on the
 *      same counter and look at the injectors on the same turns;
 *   3. its own deque, newest first (LIFO: depth-first, cache-warm, space-bounded);
 *   4. the normal injector (FIFO: external submissions start in submission order); a group job
 *      the loop took from an injector may run its group's next queued jobs with it (group.c,
 *      batch_next), which is what this order would pick next;
 *   5. the oldest task of a victim's deque (random victims; a victim whose deque looks empty is
 *      skipped without a CAS, which is how we prefer workers likely to have work); workers
 *      placed on a known topology (WS_PIN, topology.c) try the nearest victims first;
 *   6. the idle ladder of idle.c: spin, yield, park.
 * Inside a task, fork-join (join.c) pushes and pops the worker's own deque without coming here.
 *
 * Running a taken task. The taker marks a waited task with its id (the hint a leapfrogging
 * joiner steals from, wait.c), runs it, and publishes DONE with a release exchange; the old
 * value tells it whether a waiter parked (WS_TASK_WAITER) and needs a futex wake. The waiter
 * reads DONE with acquire, so everything the task did is visible after the wait. A job (group.c)
 * is finished by its own runner, and the taker does not touch it after running it. An exception
 * that escapes a taken task has nowhere to go (the thread that made the task is not on this
 * stack): the process aborts with one line (docs/api.md, "Exceptions").
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* bottom: a value no task record holds (worksteal.h), so that every inline sync and join test
 * fails; limit 0: every inline push declines. */
const struct ws__fast ws__no_fast_path = {.bottom = INT64_MIN, .take_bar = 0, .limit = 0};

_Thread_local ws__worker *ws__tls_worker WS_TLS_FAST;
/* The same worker's deque, for the inline fork-join of worksteal.h (exported); on every other
 * thread (and in the build on the mutex deque) ws__no_fast_path, so that the inline code needs
 * no test for "not a worker". */
WS_API __thread struct ws__fast *ws__tls_fast WS_TLS_FAST = (struct ws__fast *)&ws__no_fast_path;

_Thread_local struct ws__group *ws__current_group WS_TLS_FAST;

/* The source of a task taken from an injector (for the trace), one string that the worker loop
 * recognises by its address. */
static const char from_injector[] = "injected";

enum {
    DEQUE_INITIAL_CAPACITY = 256, /* grows by doubling; 2 KiB per worker to start */
};

/* ---------------------------------------------------------------------------------------- */
/* Making and starting workers                                                              */
/* ---------------------------------------------------------------------------------------- */

void ws__worker_update_depth_limit(ws__worker *w)
{
    /* relaxed: read only by this worker; ws_pool_profile's thread may store 1 concurrently and
     * then closes the fast path, which sends this worker back here on its next join. */
    bool slow = ws_load_relaxed(&w->profiling) != 0 || w->pool->trace != NULL;
    ws__wdeque_set_depth_cap(&w->deque, slow || w->max_depth == 0 ? 0 : w->max_depth - 1);
}

ws__worker *ws__worker_new(ws_pool *pool, unsigned id, bool spare)
{
    ws__worker *w = ws__aligned_alloc(WS_CACHE_LINE, sizeof(ws__worker));
    if (w == NULL)
        return NULL;
    /* Thieves may take as many tasks of a blocked owner as there are other threads. */
    unsigned reserve = pool->nworkers + pool->nspares - 1;
    if (ws__wdeque_init(&w->deque, DEQUE_INITIAL_CAPACITY, reserve) != 0) {
        ws__free(w);
        return NULL;
    }
    w->pool = pool;
    w->id = id;
    w->spare = spare;
    w->asking_since = 0;
    w->deque.pool = pool;
    w->deque.runner = (id + 1) << WS_TASK_THIEF_SHIFT;
    /* The records the inline futures keep ready; none in the mutex-deque build, which has no
     * inline path. */
    w->deque.futures_room = ws__worker_fast(w) == (void *)&w->deque ? WS_FUTURES_READY : 0;
    ws__frames_init(w);
#ifndef WS_LOCKED_DEQUE
    w->deque.ask_also = &w->stack.f.end_fast; /* a thief's request reaches the stack spawns */
    w->deque.ask_sync = &w->stack.f.sync_bar; /* and the stack syncs */
#endif
    /* relaxed: before the thread starts; a spare made while the pool is profiled starts in the
     * profiled mode like the others (profile_pool.c). */
    ws_store_relaxed(&w->profiling, ws_load_relaxed(&pool->profiling));
    ws__worker_update_depth_limit(w);
    /* Distinct non-zero seeds (xorshift must not start at 0). */
    w->rng = 0x9E3779B97F4A7C15ull * (id + 1) ^ (uintptr_t)w;
    if (w->rng == 0)
        w->rng = 1;
    return w;
}

/* The thread name of worker w (docs/topology.md, "Thread names"). */
static void worker_name(const ws__worker *w, char *name, size_t size)
{
    snprintf(name, size, w->spare ? "ws%u:spare%u" : "ws%u:w%u", w->pool->serial, w->id);
}

/* A worker thread's first steps: it names itself (from inside, so that its name is set before
 * it runs anything), then runs its body. */
static void *worker_thread(void *arg)
{
    ws__worker *w = arg;
    char name[32];
    worker_name(w, name, sizeof name);
    ws__thread_set_name(pthread_self(), name);
    return w->body(w);
}

int ws__worker_start(ws__worker *w, void *(*fn)(void *))
{
    ws_pool *pool = w->pool;
    const ws__placement *pl = pool->placement;
    const ws__worker *self = ws__tls_worker;
    ws__cpuset one = {{0}};
    const ws__cpuset *cpus = NULL;
    if (pl != NULL && pl->pinned && w->place != NULL) {
        ws__cpuset_add(&one, (unsigned)w->place->cpu);
        cpus = &one;
    } else if (pl != NULL && pl->pinned) {
        cpus = &pl->cpus; /* a spare: anywhere the workers may run */
    } else if (self != NULL && self->place != NULL && self->pool->placement->pinned) {
        ws__process_cpus(&one); /* not the pinned creator's single CPU */
        cpus = &one;
    }
    w->body = fn;
    /* Who the line of a stack overflow names (overflow.c). */
    char name[32], who[96];
    worker_name(w, name, sizeof name);
    snprintf(who, sizeof who, "thread %s (%s %u of pool %u)", name,
             w->spare ? "spare worker" : "worker", w->id, pool->serial);
    return ws__overflow_thread_start(&w->thread, pool->stack_size, cpus, who, worker_thread, w);
}

/* ---------------------------------------------------------------------------------------- */
/* Running taken tasks                                                                      */
/* ---------------------------------------------------------------------------------------- */

static WS_COLD void task_escaped(void)
{
    ws__contract_violation("a task run by a worker",
                           "an exception escaped it (catch exceptions inside tasks)");
}

static inline void task_unwind(ws__task **guard)
{
    if (WS_UNLIKELY(*guard != NULL))
        task_escaped();
}

/* Runs fn(arg) for worker w as a traced task, shown in the trace as `shown`. */
static void run_traced_as(ws__worker *w, const char *what, ws_fn fn, void *arg, ws_fn shown)
{
    uint64_t start = ws__now_ns();
    fn(arg);
    ws__trace_task(w, what, shown, start, ws__now_ns());
}

void ws__run_traced(ws__worker *w, const char *what, ws_fn fn, void *arg)
{
    run_traced_as(w, what, fn, arg, fn);
}

void ws__run_child(ws__worker *w, ws__task *t, const char *what)
{
    /* relaxed: the PROFILED bit was set before the task was published. */
    uint32_t state = ws_load_relaxed(&t->state);
    void *arg = t->arg;
    if (WS_UNLIKELY(state & WS_TASK_PROFILED)) {
        if (w != NULL && (strcmp(what, "stolen") == 0 || strcmp(what, "leapfrog") == 0))
            ws__prof_mark_stolen(w, t->owner);
        ws__prof_run_child(t->fn, arg, t->owner);
    } else if (WS_UNLIKELY(w != NULL && ws_load_relaxed(&w->profiling) != 0)) {
        /* relaxed: see ws__worker_update_depth_limit. A task outside the measured DAG (an
         * external or group job run during a wait) runs without a frame. */
        ws__prof_run_unmeasured(t->fn, arg);
    } else if (WS_UNLIKELY(w != NULL && w->pool->trace != NULL)) {
        /* A job shows its own function, not its runner's (read first: the runner frees it). */
        bool job = ws__task_kind(t) != WS_KIND_WAITED;
        run_traced_as(w, what, t->fn, arg, job ? ((ws__job *)t)->fn : t->fn);
    } else {
        t->fn(arg);
    }
}

/* The runner of waited task t is done with it. */
static void complete_waited(ws__task *t)
{
    /* acq_rel: the release half publishes the task's effects to the waiter's acquire load of
     * state (wait.c); the acquire half makes the waiter's WAITER flag ours to act on. After
     * this the record may be gone (the waiter returns): only its address is used below. */
    uint32_t old = ws_exchange_acq_rel(&t->state, WS_TASK_DONE);
    if (old & WS_TASK_WAITER)
        ws__futex_wake(&t->state, -1);
}

void ws__run_taken_body(ws__worker *w, ws__task *t, const char *what)
{
    int64_t open = w != NULL ? ws__open_spawns(w) : 0;
    struct ws__group *group = ws__current_group;
    ws__current_group = NULL; /* a stolen child is in no group; a job's runner sets its own */
    {
        ws__task *guard WS_UNWIND_GUARD(task_unwind) = t;
        ws__run_child(w, t, what);
        guard = NULL;
    }
    ws__current_group = group;
    if (WS_UNLIKELY(w != NULL && ws__open_spawns(w) != open))
        ws__contract_violation("ws_spawn", "a task returned without ws_sync of a task it spawned");
}

void ws__task_run_taken(ws__worker *w, ws__task *t, const char *what)
{
    uint32_t kind = ws__task_kind(t);
    if (w == NULL || kind == WS_KIND_DETACHED || kind == WS_KIND_GROUP) {
        ws__run_taken_body(w, t, what); /* a job: its runner finishes it */
        return;
    }
    /* A waited task, or a future (whose runner claims it, future.c): leapfroggers may come. */
    int64_t floor = ws__floor_raise(w);
    /* acq_rel: marks the taker, a hint for a leapfrogging joiner, which re-reads it until it
     * is set; the release half publishes the floor just raised (ws__leapfrog). An RMW, because
     * the joiner may be or-ing in WAITER at the same time. Only waited tasks have joiners;
     * jobs skip the locked instruction. */
    if (kind == WS_KIND_WAITED)
        ws_fetch_or_acq_rel(&t->state, WS_TASK_TAKEN | (w->id + 1) << WS_TASK_THIEF_SHIFT);
    ws__run_taken_body(w, t, what);
    if (kind == WS_KIND_WAITED)
        complete_waited(t);
    ws__floor_restore(w, floor);
}

/* ---------------------------------------------------------------------------------------- */
/* Stealing                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* Every FAIR_PERIOD-th pick looks at the injectors first. Go's scheduler uses 61; we use 31, so
 * that an external job waits at most a few dozen pickups. Prime, so it does not resonate with
 * loops of regular period; an empty injector costs two loads to look at. */
enum { FAIR_PERIOD = 31 };

static inline uint32_t next_random(ws__worker *w)
{
    /* xorshift64: enough to spread victims; each worker has its own state. */
    uint64_t x = w->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    w->rng = x;
    return (uint32_t)(x >> 32);
}

/* Bounded local search: a level that still has victims is left for the next one after this many
 * failed steals (lost races), so that a contended neighbourhood does not keep a thief from work
 * further away. The last level is searched to its end. */
enum { LEVEL_FAILS = 2 };

/* A steal between placed workers, counted at the level of the nearest group they share. */
static void count_level(ws__worker *w, const ws__worker *v)
{
    switch (ws__steal_level(w->place, v->place)) {
    case WS_LEVEL_L2:
        ws__count(w, steals_l2, 1);
        break;
    case WS_LEVEL_L3:
        ws__count(w, steals_l3, 1);
        break;
    case WS_LEVEL_NUMA:
        ws__count(w, steals_numa, 1);
        break;
    default:
        ws__count(w, steals_remote, 1);
        break;
    }
}

/* Worker w steals once from victim v (bound NULL: any item), counting and tracing the
 * attempt. */
static ws__task *steal_once(ws__worker *w, ws__worker *v, ws_sdeque_bound *bound)
{
    ws__count(w, steal_attempts, 1);
    ws__prof_note_steal(w);
    ws__task *t = bound != NULL ? ws__wdeque_steal_bounded(&v->deque, bound)
                                : ws__wdeque_steal_noting(&v->deque, &w->steal_lost);
    if (t != NULL) {
        ws__count(w, steals, 1);
        if (w->victims != NULL && v->place != NULL)
            count_level(w, v);
        if (WS_UNLIKELY(w->pool->trace != NULL))
            ws__trace_steal(w, v, ws__now_ns());
    }
    return t;
}

ws__task *ws__steal_from(ws__worker *w, ws__worker *v)
{
    return steal_once(w, v, NULL);
}

ws__task *ws__steal_bounded(ws__worker *w, ws__worker *v, ws_sdeque_bound *bound)
{
    return steal_once(w, v, bound);
}

/* Worker w's steal from v failed: if v holds private work that a thief asked for (w, or one
 * before it), w is idle while there is work it could take, from now until it finds some
 * (note_found). The statistic idle_asking_ns adds up such spells. */
static void note_asked(ws__worker *w, ws__worker *v)
{
    if (w->asking_since == 0 && ws__wdeque_asked_for(&v->deque))
        w->asking_since = ws__now_ns();
}

/* Worker w found work after an idle spell: the time since it first found work asked for goes to
 * its statistics. */
static void note_found(ws__worker *w)
{
    if (WS_LIKELY(w->asking_since == 0))
        return;
    uint64_t ns = ws__now_ns() - w->asking_since;
    w->asking_since = 0;
    ws__count(w, idle_asking_ns, ns);
    /* relaxed: statistics with one writer (this worker), as ws__count's. */
    if (ns > ws_load_relaxed(&w->counters.idle_asking_max_ns))
        ws_store_relaxed(&w->counters.idle_asking_max_ns, ns);
}

/* Tries the victims workers[ids[k]] (ids NULL: workers[first + k]) for k in [0, n), from a
 * random k, skipping workers that look idle, until a steal succeeds or max_fails steals fail. */
static ws__task *steal_scan(ws__worker *w, const uint16_t *ids, unsigned first, unsigned n,
                            unsigned max_fails, bool *more_work)
{
    ws__worker **workers = w->pool->workers;
    unsigned fails = 0;
    unsigned k = n > 1 ? next_random(w) % n : 0;
    for (unsigned left = n; left > 0; left--, k = k + 1 == n ? 0 : k + 1) {
        ws__worker *v = workers[ids != NULL ? ids[k] : first + k];
        if (v == w || !ws__worker_may_have_work(v))
            continue;
        ws__task *t = ws__steal_from(w, v);
        if (t != NULL) {
            *more_work = ws__worker_may_have_work(v);
            return t;
        }
        note_asked(w, v);
        if (++fails == max_fails)
            break;
    }
    return NULL;
}

/* One pass over the other workers (and awake spares). A placed worker goes level by level,
 * nearest first (see LEVEL_FAILS), then to the spares; others from a random start. */
static ws__task *steal_round(ws__worker *w, bool *more_work)
{
    ws_pool *pool = w->pool;
    /* acquire: pairs with the release store in wake_spare; the new spare's deque is set up. */
    unsigned spares = ws_load_acquire(&pool->spares_started);
    if (w->victims == NULL)
        return steal_scan(w, NULL, 0, pool->nworkers + spares, UINT32_MAX, more_work);
    unsigned begin = 0, total = w->level_end[WS_LEVELS - 1];
    for (unsigned l = 0; l < WS_LEVELS; l++) {
        unsigned end = w->level_end[l];
        unsigned max_fails = end < total ? LEVEL_FAILS : UINT32_MAX;
        ws__task *t = steal_scan(w, w->victims + begin, 0, end - begin, max_fails, more_work);
        if (t != NULL)
            return t;
        begin = end;
    }
    return steal_scan(w, NULL, pool->nworkers, spares, UINT32_MAX, more_work);
}

ws__task *ws__take_injected(ws__worker *w, ws__injector *q)
{
    ws__task *t = ws__injector_take(q);
    if (t != NULL)
        ws__count(w, injector_takes, 1);
    return t;
}

bool ws__fair_turn(ws__worker *w)
{
    return ++w->picks % FAIR_PERIOD == 0;
}

ws__task *ws__find_elsewhere(ws__worker *w, bool *more_work, const char **what)
{
    ws_pool *pool = w->pool;
    ws__task *t = ws__take_injected(w, &pool->urgent);
    if (t == NULL)
        t = ws__take_injected(w, &pool->injector);
    if (t != NULL) {
        *more_work = ws__external_work_left(pool);
        *what = from_injector;
        return t;
    }
    *what = "stolen";
    return steal_round(w, more_work);
}

/* The worker loop's choice of its next task, and its source in *what; NULL when the pool
 * exits. */
static ws__task *next_task(ws__worker *w, const char **what)
{
    ws_pool *pool = w->pool;
    *what = from_injector;
    ws__task *t = ws__take_injected(w, &pool->urgent);
    if (t == NULL && ws__fair_turn(w))
        t = ws__take_injected(w, &pool->injector);
    if (t != NULL) {
        /* A burst of external jobs must not run on this worker alone while others sleep: if
         * more is queued, wake a sleeper (a glance first; the submitter already made sure at
         * least one worker would come). */
        if (ws__external_work_left(pool))
            ws__idle_notify_if_sleepers(pool);
        return t;
    }
    t = ws__wdeque_pop(&w->deque);
    if (t != NULL) {
        ws__count(w, pops, 1);
        *what = "job";
        return t;
    }
    bool more = false;
    t = ws__find_elsewhere(w, &more, what);
    if (t != NULL) {
        note_found(w);
        /* A ramp-up hint, not a publication (idle.c): a glance, and a wake-up if one is
         * wanted. */
        if (more)
            ws__idle_notify_if_sleepers(pool);
        return t;
    }
    t = ws__idle_find_work(w, ws__find_elsewhere, what);
    note_found(w);
    return t;
}

void *ws__worker_main(void *arg)
{
    ws__worker *w = arg;
    ws__tls_worker = w;
    ws__tls_fast = ws__worker_fast(w);
    for (;;) {
        if (w->should_leave != NULL && w->should_leave(w))
            break;
        const char *what;
        ws__task *t = next_task(w, &what);
        if (t == NULL)
            break;
        /* Only the owed group's next batch may run before its count is settled. */
        if (what != from_injector || !ws__task_is_job_of(t, w->owed_group))
            ws__worker_settle(w, true);
        w->loop_injected = what == from_injector ? t : NULL;
        ws__task_run_taken(w, t, what);
        w->loop_injected = NULL;
    }
    ws__worker_settle(w, true);
    ws__tls_worker = NULL;
    ws__tls_fast = (struct ws__fast *)&ws__no_fast_path;
    return NULL;
}

int ws_worker_id(void)
{
    ws__worker *w = ws__tls_worker;
    return w != NULL ? (int)w->id : -1;
}

bool ws__split_wanted(void)
{
    ws__worker *w = ws__tls_worker;
    if (w == NULL)
        return false;
    if (ws__wdeque_size(&w->deque) == 0)
        return true;
    return ws__idle_any(w->pool);
}
