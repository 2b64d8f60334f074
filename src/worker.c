/* worker.c: the worker loop and stealing.
 *
 * A worker's next task comes from, in order:
 *   1. the high-priority injector (urgent external work runs before anything else is picked);
 *   2. every FAIR_PERIOD-th pick, the normal injector (so external work is never starved by a
 *      worker that keeps finding local work; Go's scheduler checks its global queue every 61st
 *      pick for the same reason). Waits that help (join.c, group.c) count their picks on the
 *      same counter and look at the injectors on the same turns;
 *   3. its own deque, newest first (LIFO: depth-first, cache-warm, space-bounded);
 *   4. the normal injector (FIFO: external submissions start in submission order);
 *   5. the oldest task of a victim's deque (random victims; a victim whose deque looks empty is
 *      skipped without a CAS, which is how we prefer workers likely to have work); workers
 *      placed on a known topology (WS_PIN, topology.c) try the nearest victims first;
 *   6. the idle ladder of idle.c: spin, yield, park.
 * Inside a task, fork-join (join.c) pushes and pops the worker's own deque without coming here.
 */
#include "internal.h"

const struct ws__fast ws__no_fast_path = {.bottom = 0, .guard = 0, .limit = 0};

_Thread_local ws__worker *ws__tls_worker WS_TLS_FAST;
/* The same worker's deque, for the inline fork-join of worksteal.h (exported); on every other
 * thread (and in the build on the mutex deque) ws__no_fast_path, so that the inline code needs
 * no test for "not a worker". */
WS_API __thread struct ws__fast *ws__tls_fast WS_TLS_FAST = (struct ws__fast *)&ws__no_fast_path;

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

ws__task *ws__steal_from(ws__worker *w, ws__worker *v)
{
    ws__count(w, steal_attempts, 1);
    ws__prof_note_steal(w);
    ws__task *t = ws__wdeque_steal(&v->deque);
    if (t != NULL) {
        ws__count(w, steals, 1);
        if (w->victims != NULL && v->place != NULL)
            count_level(w, v);
        if (WS_UNLIKELY(w->pool->trace != NULL))
            ws__trace_steal(w, v, ws__now_ns());
    }
    return t;
}

/* Tries the victims workers[ids[k]] (ids NULL: workers[first + k]) for k in [0, n), from a
 * random k, skipping deques that look empty, until a steal succeeds or max_fails steals fail. */
static ws__task *steal_scan(ws__worker *w, const uint16_t *ids, unsigned first, unsigned n,
                            unsigned max_fails, bool *more_work)
{
    ws__worker **workers = w->pool->workers;
    unsigned fails = 0;
    unsigned k = n > 1 ? next_random(w) % n : 0;
    for (unsigned left = n; left > 0; left--, k = k + 1 == n ? 0 : k + 1) {
        ws__worker *v = workers[ids != NULL ? ids[k] : first + k];
        if (v == w || ws__wdeque_size(&v->deque) == 0)
            continue;
        ws__task *t = ws__steal_from(w, v);
        if (t != NULL) {
            *more_work = ws__wdeque_size(&v->deque) > 0;
            return t;
        }
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

/* True if either injector seems to hold work (two or four loads). */
static bool external_work_left(ws_pool *pool)
{
    return ws__injector_maybe_nonempty(&pool->urgent) ||
           ws__injector_maybe_nonempty(&pool->injector);
}

bool ws__fair_turn(ws__worker *w)
{
    return ++w->picks % FAIR_PERIOD == 0;
}

/* Worker w's wait counts as blocked from now until it ends: a spare will run what the wait may
 * not (external work, other waits' work). */
static void wait_block(ws__worker *w, ws__wait *s)
{
    s->blocked = true;
    ws__blocked_enter(w);
}

bool ws__wait_step(ws__worker *w, ws__wait *s, bool progressed)
{
    /* Fairness: a wait never runs external work itself (docs/scheduler.md), but on the turns
     * when the worker loop would look at the injectors, queued external work makes the wait
     * count as blocked, so that a spare starts it as soon as the worker loop would have. */
    if (w != NULL && !s->blocked && ws__fair_turn(w) && external_work_left(w->pool))
        wait_block(w, s);
    if (progressed) {
        s->backoff.round = 0;
        return false;
    }
    if (!ws__backoff_step(&s->backoff))
        return false;
    if (w != NULL && !s->blocked)
        wait_block(w, s); /* about to park: someone else must keep the pool going */
    return true;
}

void ws__wait_end(ws__worker *w, ws__wait *s)
{
    if (s->blocked)
        ws__blocked_leave(w);
}

ws__task *ws__find_elsewhere(ws__worker *w, bool *more_work, const char **what)
{
    ws_pool *pool = w->pool;
    ws__task *t = ws__take_injected(w, &pool->urgent);
    if (t == NULL)
        t = ws__take_injected(w, &pool->injector);
    if (t != NULL) {
        *more_work = external_work_left(pool);
        *what = "injected";
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
    *what = "injected";
    ws__task *t = ws__take_injected(w, &pool->urgent);
    if (t == NULL && ws__fair_turn(w))
        t = ws__take_injected(w, &pool->injector);
    if (t != NULL) {
        /* A burst of external jobs must not run on this worker alone while others sleep: if
         * more is queued, wake a sleeper (a glance first; the submitter already made sure at
         * least one worker would come). */
        if (external_work_left(pool))
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
        /* A ramp-up hint, not a publication (idle.c): a glance, and a wake-up if one is
         * wanted. */
        if (more)
            ws__idle_notify_if_sleepers(pool);
        return t;
    }
    return ws__idle_find_work(w, what);
}

void *ws__worker_main(void *arg)
{
    ws__worker *w = arg;
    ws__tls_worker = w;
    ws__tls_fast = ws__worker_fast(w);
    for (;;) {
        if (w->spare && ws__spare_should_retire(w))
            break;
        const char *what;
        ws__task *t = next_task(w, &what);
        if (t == NULL)
            break;
        ws__task_run_taken(w, t, what);
    }
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
