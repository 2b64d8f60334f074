/* future.c: futures: ws_future_submit, then ws_future_get in any order, from any thread, and
 * ws_future_free once.
 *
 * A future is a heap record (records.c, recycled) whose task is queued like a fork's child: on
 * the submitting worker's own deque, or through the injector from elsewhere. Whoever runs it
 * first claims it on its state word with one compare-and-swap from "pending": a worker that took
 * it from a queue (ws__task_run_taken), or a getter, which claims it wherever it is queued (in its
 * own deque at any depth, in another worker's deque, in the injector) and runs it at once. The
 * queue's slot is left as it is: the state word is the marker that the pop, steal and injector
 * paths read, so a queue that later yields a claimed future only lets go of it. Nothing is ever
 * taken out of the middle of a deque, so the deques keep their protocol untouched.
 *
 * The state word (task.state) of a future:
 *   kind bits  WS_KIND_FUTURE, for its whole life (the queues tell futures by them);
 *   TAKEN      claimed, with the runner's worker id + 1 above WS_TASK_THIEF_SHIFT (the hint that
 *              a getter leapfrogs, wait.c);
 *   DONE       finished: fn returned (result written), or cancelled before it started
 *              (CANCELLED with it);
 *   WAITER     a getter parks on the word: the RMW that sets DONE wakes it;
 *   QUEUED     a deque or injector slot still points to the record;
 *   HANDLE     the user has not called ws_future_free.
 * The record goes back to the recycler when DONE is set and QUEUED and HANDLE are clear, by the
 * one RMW (or, for a finished future whose slot is gone, the one free) that makes it so. A
 * getter on a worker of the future's pool never sleeps while it can help (docs/scheduler.md,
 * "Getting a future": the argument that an acyclic program finishes with no spare thread).
 */
#include "future_state.h"
#include "internal.h"

#include <errno.h>
#include <limits.h>

_Static_assert((int)WS_FUTURE_TAKEN == (int)WS_TASK_TAKEN &&
                   (int)WS_FUTURE_DONE == (int)WS_TASK_DONE &&
                   (int)WS_FUTURE_WAITER == (int)WS_TASK_WAITER &&
                   (int)WS_FUTURE_KIND == (int)(WS_KIND_FUTURE << WS_TASK_KIND_SHIFT) &&
                   (int)WS_FUTURE_RUNNER_SHIFT == (int)WS_TASK_THIEF_SHIFT,
               "future_state.h's bits must be the task state's");
_Static_assert(WS__FUTURE_PENDING == (WS_FUTURE_KIND | WS_FUTURE_HANDLE | WS_FUTURE_QUEUED) &&
                   WS__FUTURE_HELD_DONE == (WS_FUTURE_KIND | WS_FUTURE_HANDLE | WS_FUTURE_DONE) &&
                   WS__FUTURE_FREED == WS_FUTURE_FREED && WS__FUTURE_TAKEN == WS_FUTURE_TAKEN &&
                   WS__FUTURE_DONE == WS_FUTURE_DONE && WS__FUTURE_WAITER == WS_FUTURE_WAITER &&
                   WS__FUTURE_QUEUED == WS_FUTURE_QUEUED && WS__FUTURE_INLINE == WS_FUTURE_INLINE &&
                   WS__ITEM_FREE == WS_SDEQUE_ITEM_FREE,
               "worksteal.h's inline futures must test future_state.h's values");

/* task.flags of a future queued through the injector: it holds a pool reference until a worker
 * takes it from there. */
enum { F_INJECTED = 1u << 8 };

static inline ws__future *future_of(ws__task *t)
{
    return (ws__future *)(void *)t;
}

/* The record of handle f, checked as far as a recycled record can be: aborts naming function
 * if f is NULL or was freed (and not reused since). Returns its state (ws__future_read). */
static uint32_t checked_state(const ws_future *handle, const char *function)
{
    if (handle == NULL)
        ws__contract_violation(function, "NULL future");
    ws__future *f = (ws__future *)(void *)handle;
    uint32_t s = ws__future_read(&f->task.state);
    if ((s & (3u << WS_TASK_KIND_SHIFT)) != WS_FUTURE_KIND || !(s & WS_FUTURE_HANDLE))
        ws__contract_violation(function, "the future was freed (ws_future_free)");
    return s;
}

/* Worker w keeps f, a free record whose home it is, for worksteal.h's inline submit, which
 * writes only the fields that change from one future to the next: the task's function, argument,
 * flags and pool stay as future_init set them. */
static void keep_ready(ws__worker *w, ws__future *f)
{
    ws_store_relaxed(&f->task.next, (ws__task *)w->deque.futures); /* relaxed: w's own list */
    w->deque.futures = f;
    w->deque.futures_room--;
}

/* Worker w: a record for a future it submits, one it keeps ready if it has one (so that the list
 * does not fill while the inline submit declines), else from the recycler; NULL: out of memory. */
static ws__future *take_ready(ws__worker *w)
{
    ws__future *f = w->deque.futures;
    if (f == NULL)
        return (ws__future *)(void *)ws__record_new_local(w);
    w->deque.futures = (ws__future *)(void *)ws_load_relaxed(&f->task.next); /* w's own list */
    w->deque.futures_room++;
    return f;
}

/* Nobody holds f any more: its record goes back to the recycler. */
static inline void recycle(ws__future *f)
{
    ws_pool *pool = f->task.owner;
    ws__worker *w = ws__tls_worker;
    /* relaxed: nobody else holds the record; the next owner's writes come after ours. */
    ws_store_relaxed(&f->task.state, WS_FUTURE_FREED);
    if (w != NULL && f->home == ws__worker_fast(w) && w->deque.futures_room != 0)
        keep_ready(w, f);
    else if (w != NULL && w->pool == pool)
        ws__record_free_local(w, (ws__job *)(void *)f);
    else
        ws__record_free(pool, w, (ws__job *)(void *)f);
}

/* Carries out what a state change asked for (future_state.h), if anything: out of line, since
 * a change by a runner or a getter rarely asks for anything. f may be gone after. */
static WS_NOINLINE void follow_up_rare(ws__future *f, unsigned todo);
static inline void follow_up(ws__future *f, unsigned todo)
{
    if (WS_UNLIKELY(todo != 0))
        follow_up_rare(f, todo);
}

static WS_NOINLINE void follow_up_rare(ws__future *f, unsigned todo)
{
    if (todo & WS_FUTURE_WAKE)
        ws__futex_wake(&f->task.state, INT_MAX); /* the word's address only */
    if (todo & WS_FUTURE_RECYCLE)
        recycle(f);
}

/* ---------------------------------------------------------------------------------------- */
/* Claiming, running, finishing                                                              */
/* ---------------------------------------------------------------------------------------- */

/* Worker w's claim of f, taken from a queue or claimed where it sits: true if w runs it. */
static bool claim(ws__worker *w, ws__future *f)
{
    return ws__future_claim(&f->task.state, w->id + 1);
}

/* Worker w took f's slot back from the top of its own deque: f's own work begins at f's index,
 * as with worksteal.h's inline get (docs/scheduler.md, "Getting a future"). w claims it INLINE
 * from there and keeps its floor, so that a leapfrogger waiting for w's current task still sees
 * that task's floor and everything f's run pushes above it. True if w runs it. */
static bool claim_at_index(ws__worker *w, ws__future *f)
{
    /* relaxed: read by leapfroggers after they see INLINE; published by the claim's release */
    ws_store_relaxed(&f->bottom, ws__wdeque_owner_bottom(&w->deque) + 1);
    return ws__future_claim_as(&f->task.state, ws__future_claim_bits(w->id + 1, true));
}

/* The runner w of f is done with it (at_index: claimed by claim_at_index; queued: w took the
 * queue's slot). f may be gone after. */
static void finish(ws__worker *w, ws__future *f, bool at_index, bool queued)
{
    uint32_t clear = ws__future_claim_bits(w->id + 1, at_index) | (queued ? WS_FUTURE_QUEUED : 0);
    follow_up(f, ws__future_finish(&f->task.state, clear));
}

/* A queue's slot for f is consumed without running it (a getter claimed it, or it was
 * cancelled): the queue's reference goes. */
static void unqueue(ws__future *f)
{
    uint32_t old;
    follow_up(f, ws__future_drop(&f->task.state, WS_FUTURE_QUEUED, &old));
}

/* f's function, its result kept in the record. */
static void call_fn(void *p)
{
    ws__future *f = p;
    f->result = f->fn(f->arg);
}

/* Worker w claimed f: runs its function as a task taken from elsewhere (ws__run_taken_body: in no
 * group, profiled or traced as the pool asks) and finishes it (queued: w took the queue's
 * slot). */
static void run_claimed(ws__worker *w, ws__future *f, bool at_index, bool queued, const char *what)
{
    ws__task body;
    ws__task_init(&body, call_fn, f);
    ws__run_taken_body(w, &body, what);
    finish(w, f, at_index, queued);
}

/* The task function of a future's record: run by a worker that took the record from a deque or
 * an injector (ws__task_run_taken, which raised the worker's floor first). Runs f unless a getter
 * claimed it first or it was cancelled, then lets go of the queue's slot. */
static void take_queued(void *p)
{
    ws__future *f = p;
    ws__worker *w = ws__tls_worker;
    ws_pool *pool = f->task.owner;
    bool injected = f->task.flags & F_INJECTED; /* read first: the record may be recycled */
    if (claim(w, f)) {
        call_fn(f);
        finish(w, f, false, true);
    } else {
        unqueue(f);
    }
    if (injected)
        ws__pool_release(pool, 1); /* the reference ws_future_submit took for the injector */
}

/* ---------------------------------------------------------------------------------------- */
/* Submitting                                                                                */
/* ---------------------------------------------------------------------------------------- */

/* A new record for fn(arg) on pool, queued (flags: its task's), with the handle; home: the
 * submitting worker's struct ws__fast (on a worker of pool), else NULL. */
static inline void future_init(ws__future *f, ws_pool *pool, ws_future_fn fn, void *arg,
                               uint32_t flags, struct ws__fast *home)
{
    f->task.fn = take_queued;
    f->task.arg = f;
    f->task.flags = flags;
    f->task.owner = pool;
    ws_store_relaxed(&f->bottom, WS__NOT_INLINE); /* relaxed: as the stores below */
    f->home = home;
    f->fn = fn;
    f->arg = arg;
    f->result = NULL;
    /* relaxed: the record is published by the push's release store or the injector's release
     * link, which order these stores before any reader. */
    ws_store_relaxed(&f->error, 0);
    ws_store_relaxed(&f->task.state, WS_FUTURE_KIND | WS_FUTURE_HANDLE | WS_FUTURE_QUEUED);
}

/* Is worker w's pool profiled or traced? Then a future runs only through ws__run_taken_body,
 * which measures it (the fast paths leave it alone). */
static inline bool measured(ws__worker *w)
{
    /* relaxed: see ws__worker_update_depth_limit. */
    return ws_load_relaxed(&w->profiling) != 0 || w->pool->trace != NULL;
}

/* Worker w's push of f declined by the fast path: the slow push, or, if the deque cannot grow,
 * the run at once (as a fork does: nothing is lost). */
static WS_NOINLINE int submit_rare(ws__worker *w, ws__future *f)
{
    /* The index the push fills (if it does), written before the push: once pushed, f may run,
     * finish and be recycled at once. The inline get checks that it is still newest and
     * private; relaxed, as below. */
    ws__frames_flush(w); /* the push's own flush would move bottom after the store below */
    if (!measured(w))
        ws_store_relaxed(&f->bottom, ws__wdeque_owner_bottom(&w->deque) + 1);
    if (ws__fork_push(w, &f->task))
        return 0;
    /* relaxed: still private. */
    ws_store_relaxed(&f->task.state, WS_FUTURE_KIND | WS_FUTURE_HANDLE);
    int64_t floor = ws__floor_raise(w);
    if (claim(w, f))
        run_claimed(w, f, false, false, "future");
    ws__floor_restore(w, floor);
    return 0;
}

/* From elsewhere (an outside thread, a worker of another pool): through the injector, holding a
 * reference of the pool until a worker takes the record from there. */
static WS_NOINLINE int submit_outside(ws__future **out, ws_pool *pool, ws_future_fn fn, void *arg)
{
    ws__pool_check_live(pool, "ws_future_submit");
    int err = ws__pool_admit(pool, 1);
    if (err != 0)
        return err;
    ws__future *f = (ws__future *)(void *)ws__record_new(pool, ws__tls_worker);
    if (f == NULL) {
        ws__pool_release(pool, 1);
        return ENOMEM;
    }
    future_init(f, pool, fn, arg, F_INJECTED, NULL);
    *out = f;
    ws__pool_inject(pool, &f->task);
    return 0;
}

static void sweep_remote_dead(ws__worker *w);

int ws_future_submit(ws_future **out, ws_pool *pool, ws_future_fn fn, void *arg)
{
    if (WS_UNLIKELY(out == NULL || fn == NULL))
        ws__contract_violation("ws_future_submit", "NULL out or function");
    ws__worker *w = ws__tls_worker;
    if (WS_UNLIKELY(w == NULL || (pool != NULL && pool != w->pool)))
        return submit_outside((ws__future **)out, pool != NULL ? pool : ws_default_pool(), fn, arg);
    /* On a worker of the pool: part of the work its destroy waits for already; on its deque as
     * a spawn. */
    sweep_remote_dead(w);
    ws__future *f = take_ready(w);
    if (WS_UNLIKELY(f == NULL))
        return ENOMEM;
    future_init(f, w->pool, fn, arg, 0, ws__worker_fast(w));
    *out = (ws_future *)(void *)f;
    if (WS_UNLIKELY(!ws__wdeque_fits(&w->deque)))
        return submit_rare(w, f);
    /* relaxed: the inline get may take it back (read by this worker's gets; leapfroggers read
     * only a claimed future's); written before the push, after which f may run and be gone. */
    ws_store_relaxed(&f->bottom, ws__wdeque_owner_bottom(&w->deque) + 1);
    ws__wdeque_push_fitting(&w->deque, ws__deque_item(&f->task));
    ws__count(w, spawns, 1);
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Getting                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Thread w (its worker, or NULL) made f dead while its slot may still sit in its home deque
 * (f->home: the deque of the worker that submitted it, if any): the home worker sweeps it, its
 * gets off the top when w is that worker, its next submit through the private part otherwise. */
static void mark_dead(ws__worker *w, ws__future *f)
{
    /* relaxed, here and below: a hint the home worker reads at its gets and submits; RMWs, so
     * that marks made at once by several threads all count. */
    if (w != NULL && w->pool == f->task.owner && f->home == ws__worker_fast(w)) {
        ws_fetch_or_relaxed(&w->deque.dead_slots, WS_DEAD_LOCAL);
        return;
    }
#ifndef WS_LOCKED_DEQUE /* (there every future's home is the no-fast-path line) */
    if (f->home == NULL)
        return; /* submitted from elsewhere: queued in an injector, whose taker lets go of it */
    ws_sdeque *home = (ws_sdeque *)(void *)f->home; /* struct ws__fast begins a ws_sdeque */
    if (ws_load_relaxed(&home->dead_slots) < UINT32_MAX / 2) /* a count, not a wrap */
        ws_fetch_add_relaxed(&home->dead_slots, WS_DEAD_REMOTE);
#endif
}

/* Is t a future whose queue slot no longer matters (claimed by a getter, or cancelled)? */
static inline bool is_dead_future(ws__task *t)
{
    /* relaxed: a slot's future was published to its queue's owner before; TAKEN and DONE only
     * ever get set, and the slot's reference (QUEUED) keeps the record alive. */
    return ws__task_kind(t) == WS_KIND_FUTURE &&
           (ws_load_relaxed(&t->state) & (WS_FUTURE_TAKEN | WS_FUTURE_DONE)) != 0;
}

/* Worker w lets go of the slots of dead futures on top of its deque, private ones only (plain
 * pops). A get may claim a future below newer items and leave its slot; without this, gets in
 * oldest-first order would leave a slot per future until the worker loop got down to them,
 * and the deque would grow with the whole computation instead of its depth. Only while w's
 * hint dead_slots is set (src/deque.h), so that gets in spawn/sync order never look. */
static WS_NOINLINE void drop_dead_private_rare(ws__worker *w);
static inline void drop_dead_private(ws__worker *w)
{
    /* relaxed: a hint; other threads only add to it (mark_dead). */
    if (WS_UNLIKELY(ws_load_relaxed(&w->deque.dead_slots)))
        drop_dead_private_rare(w);
}

static WS_NOINLINE void drop_dead_private_rare(ws__worker *w)
{
    ws__task *t;
    while ((t = ws__wdeque_peek_private(&w->deque)) != NULL && is_dead_future(t)) {
        ws__wdeque_pop_private(&w->deque);
        ws__count(w, pops, 1);
        unqueue(future_of(t));
    }
}

#ifndef WS_LOCKED_DEQUE
/* The sweep's keep(): lets go of a dead future's slot; a live future of this worker's learns
 * where it now sits (its inline get's test). */
static bool keep_live(void *item, int64_t index, void *ctx)
{
    ws__worker *w = ctx;
    ws__task *t = ws__item_task(item);
    if (is_dead_future(t)) {
        unqueue(future_of(t));
        return false;
    }
    ws__future *f = future_of(t);
    /* relaxed: this worker's own field while the future is queued here (as in put_back). */
    if (ws__task_kind(t) == WS_KIND_FUTURE && f->home == ws__worker_fast(w) &&
        ws_load_relaxed(&f->bottom) != WS__NOT_INLINE)
        ws_store_relaxed(&f->bottom, index + 1);
    return true;
}
#endif

/* Before a submit on worker w: if other threads made futures of w's dead since its last sweep,
 * lets go of their slots in the private top of its deque (the free items above its newest
 * waited task), so that a deque holds the live futures of the frames on its stack, and not what
 * was cancelled or got elsewhere meanwhile. */
static void sweep_remote_dead(ws__worker *w)
{
#ifndef WS_LOCKED_DEQUE
    /* relaxed: a hint (mark_dead); a mark made after this read waits for the next submit. */
    if (WS_LIKELY(ws_load_relaxed(&w->deque.dead_slots) < WS_DEAD_REMOTE))
        return;
    ws_fetch_and_relaxed(&w->deque.dead_slots, WS_DEAD_LOCAL); /* relaxed: as above */
    ws__sdeque_sweep_free(&w->deque, keep_live, w);
#else
    (void)w;
#endif
}

/* As drop_dead_private, and through the public part (pops with a CAS), after a slow get, down
 * to the floor of w's current task (what lies below is an outer task's: its own gets sweep it).
 * Only a free item can be a dead future; a waited one stops the sweep where it is. An empty
 * deque clears the hint. */
static void drop_dead(ws__worker *w)
{
    for (;;) {
        drop_dead_private(w);
        /* relaxed: the owner's own floor. */
        if (ws__wdeque_owner_bottom(&w->deque) <= ws_load_relaxed(&w->floor) ||
            !ws__wdeque_may_look(w))
            return;
        int64_t at;
        ws__task *t = ws__wdeque_pop_at(w, &at);
        if (t == NULL) {
            /* relaxed: a hint; a future another thread kills now has no slot here. */
            ws_store_relaxed(&w->deque.dead_slots, 0);
            return;
        }
        if (!is_dead_future(t)) {
            ws__wdeque_put_back(w, t, at);
            return;
        }
        ws__count(w, pops, 1);
        unqueue(future_of(t));
    }
}

/* Worker w takes f's slot back if f is its deque's newest item: with plain accesses if private,
 * else with the pop's CAS against thieves (as a sync does), so that no dead slot is left for a
 * thief to take. False if f is not there (queued elsewhere or deeper, or just stolen). */
static bool pop_if_newest(ws__worker *w, ws__future *f)
{
    if (ws__wdeque_peek_private(&w->deque) == &f->task) {
        ws__wdeque_pop_private(&w->deque);
    } else {
        /* f->bottom: the bottom after f's push on its home deque; if the deque's bottom is that
         * again and its newest slot holds f, the pop takes f, or nothing if a thief took it. */
        if (f->home != ws__worker_fast(w) ||
            ws_load_relaxed(&f->bottom) != ws__wdeque_owner_bottom(&w->deque) || /* our own */
            !ws__wdeque_newest_is(&w->deque, ws__deque_item(&f->task)))
            return false;
        if (ws__wdeque_pop(&w->deque) != &f->task)
            return false;
    }
    ws__count(w, pops, 1);
    return true;
}

/* Worker w, a getter of f (not DONE): if f is w's newest item, takes its slot back and runs it;
 * else claims it where it is queued and runs it. False if someone else runs it (or ran it). */
static bool run_if_pending(ws__worker *w, ws__future *f)
{
    if (pop_if_newest(w, f)) {
        bool ran = claim_at_index(w, f);
        if (ran)
            run_claimed(w, f, true, true, "future");
        else
            unqueue(f); /* a rival claimed it first; the slot we took is consumed */
        return ran;
    }
    int64_t floor = ws__floor_raise(w); /* before the claim publishes it */
    bool ran = claim(w, f);
    if (ran) {
        /* f is not this deque's newest item, so none of this worker's takes answers a thief
         * while it runs: an idle worker would wait for the items above it. Only then: publishing
         * at every such get made every later pop a CAS (n-queens got oldest first, 1.3-1.5x). */
        if (ws__idle_any(w->pool))
            ws__share_private_work(w);
        run_claimed(w, f, false, false, "future");
        mark_dead(w, f); /* its slot stays where it was, maybe in its home deque */
    }
    ws__floor_restore(w, floor);
    return ran;
}

/* Worker w of f's pool waits for f, helping: f itself if it has not started, else work that the
 * worker running f pushed since it started f (leapfrogging); parks when there is none. */
static void help_until_done(ws__worker *w, ws__future *f)
{
    ws__wait wait = {.backoff = ws__backoff_start(w)};
    for (;;) {
        /* acquire: pairs with finish's release; the result is visible once we see DONE. */
        uint32_t s = ws__future_read(&f->task.state);
        if (s & WS_TASK_DONE)
            break;
        if (!(s & WS_TASK_TAKEN)) {
            if (run_if_pending(w, f))
                break;
            continue; /* claimed or cancelled meanwhile: read it again */
        }
        uint32_t runner = (s & WS_FUTURE_RUNNER) >> WS_FUTURE_RUNNER_SHIFT;
        if (runner == w->id + 1)
            ws__contract_violation("ws_future_get", "the future's own function (or work it "
                                                    "waits for) gets it: it would wait forever");
        /* An inline claim's work begins at the future's own index (WS_FUTURE_INLINE); any other
         * claim raised its runner's floor. */
        bool only_free = false;
        ws__task *u = (s & WS_FUTURE_INLINE)
                          /* relaxed: published by the INLINE claim's release (s acquired) */
                          ? ws__leapfrog_above(w, runner, &f->task.state, s,
                                               ws_load_relaxed(&f->bottom) - 1, &only_free)
                          : ws__leapfrog(w, runner, &f->task.state, s, &only_free);
        if (u != NULL)
            ws__task_run_taken(w, u, "leapfrog");
        else if (only_free)
            ws__wait_give_up(&wait); /* the futures it submitted are others' to run */
        if (ws__wait_step(w, &wait, u != NULL))
            ws__park_on_state(w, &f->task.state, s);
    }
    ws__wait_end(w, &wait);
}

/* A thread that cannot run f (not a worker of its pool) sleeps until f is done. */
static void sleep_until_done(ws__future *f)
{
    ws__wait wait = {.backoff = ws__backoff_start(NULL)};
    for (;;) {
        uint32_t s = ws__future_read(&f->task.state);
        if (s & WS_TASK_DONE)
            break;
        if (ws__wait_step(NULL, &wait, false))
            ws__park_on_state(NULL, &f->task.state, s);
    }
}

/* Returns once f is DONE (its state read with acquire). */
static void await_done(ws__future *f)
{
    ws__worker *w = ws__tls_worker;
    if (w != NULL && w->pool == f->task.owner) {
        help_until_done(w, f);
    } else if (w != NULL) {
        /* A worker of another pool cannot help this one: its own pool keeps its P workers
         * running with a spare meanwhile (as ws_pool_run and ws_group_wait do). */
        ws_block_begin();
        sleep_until_done(f);
        ws_block_end();
    } else {
        sleep_until_done(f);
    }
}

void ws__future_escaped(void)
{
    ws__contract_violation("ws_future_get", "an exception escaped a future's function "
                                            "(catch exceptions inside it)");
}

static void task_escaped(ws__task **guard)
{
    if (WS_UNLIKELY(*guard != NULL))
        ws__future_escaped();
}

void ws__future_finish_rare(struct ws__future_rec *r, uint32_t old)
{
    follow_up((ws__future *)(void *)r, ws__future_inline_finish_todo(old));
}

void ws__future_drop_dead(void)
{
    drop_dead_private(ws__tls_worker);
}

/* The fast path of a get on worker w, as a sync's: f is w's newest item, private, and the pool
 * is neither profiled nor traced: take the slot back with plain accesses, claim f (a getter
 * elsewhere may be claiming it too), run its function and finish it. False if f is not there,
 * or a rival claimed it first. */
static inline bool get_newest(ws__worker *w, ws__future *f)
{
    if (ws__wdeque_peek_private(&w->deque) != &f->task || measured(w))
        return false;
    ws__wdeque_pop_private(&w->deque);
    ws__count(w, pops, 1);
    bool ran = claim_at_index(w, f);
    if (WS_LIKELY(ran)) {
        ws__task *guard WS_UNWIND_GUARD(task_escaped) = &f->task;
        f->result = f->fn(f->arg);
        guard = NULL;
        finish(w, f, true, true);
    } else {
        unqueue(f); /* a rival claimed it first; the slot we took is consumed */
    }
    return ran;
}

/* The slow path of a get: f was not DONE and is not w's newest item (w: the calling thread's
 * worker, or NULL). */
static WS_NOINLINE void get_slow(ws__future *f)
{
    ws__prof_strand_end(); /* a wait is no strand's work (profile.c) */
    await_done(f);
    ws__prof_strand_begin();
    ws__worker *w = ws__tls_worker;
    if (w != NULL && w->pool == f->task.owner)
        drop_dead(w);
}

void *ws_future_get(ws_future *handle)
{
    uint32_t s = checked_state(handle, "ws_future_get");
    ws__future *f = (ws__future *)(void *)handle;
    ws__worker *w = ws__tls_worker;
    if (!(s & WS_TASK_DONE)) {
        if (w == NULL || !get_newest(w, f))
            get_slow(f);
        else
            drop_dead_private(w);
    } else if (w != NULL) {
        drop_dead_private(w);
    }
    return f->result;
}

int ws_future_wait(ws_future *handle, void **result)
{
    void *r = ws_future_get(handle);
    if (result != NULL)
        *result = r;
    return ws_future_status(handle);
}

int ws_future_status(const ws_future *handle)
{
    uint32_t s = checked_state(handle, "ws_future_status");
    const ws__future *f = (const ws__future *)(const void *)handle;
    if (!(s & WS_TASK_DONE))
        return EBUSY;
    /* acquire: pairs with ws_future_fail's CAS (made before its cancellation). */
    int err = (int)ws_load_acquire(&((ws__future *)f)->error);
    return err != 0 ? err : (s & WS_FUTURE_CANCELLED) ? ECANCELED : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Cancelling and freeing                                                                    */
/* ---------------------------------------------------------------------------------------- */

bool ws_future_cancel(ws_future *handle)
{
    (void)checked_state(handle, "ws_future_cancel");
    ws__future *f = (ws__future *)(void *)handle;
    unsigned todo;
    bool cancelled = ws__future_cancel(&f->task.state, &todo);
    if (cancelled)
        mark_dead(ws__tls_worker, f); /* its slot may be in its home deque */
    follow_up(f, todo);               /* the queue's slot goes when a worker reaches it (unqueue) */
    return cancelled;
}

void ws_future_fail(ws_future *handle, int err)
{
    if (err <= 0)
        ws__contract_violation("ws_future_fail", "err must be a positive error code");
    (void)checked_state(handle, "ws_future_fail");
    ws__future *f = (ws__future *)(void *)handle;
    uint32_t none = 0;
    /* release: pairs with ws_future_status's acquire load; the first call wins. */
    (void)ws_cas_acq_rel(&f->error, &none, (uint32_t)err);
    (void)ws_future_cancel(handle);
}

void ws_future_free(ws_future *handle)
{
    uint32_t s = checked_state(handle, "ws_future_free");
    ws__future *f = (ws__future *)(void *)handle;
    if ((s & WS_FUTURE_DONE) && !(s & WS_FUTURE_QUEUED)) {
        /* Finished and out of every queue: nobody else writes the word now. */
        recycle(f);
        return;
    }
    uint32_t old;
    unsigned todo = ws__future_drop(&f->task.state, WS_FUTURE_HANDLE, &old);
    if (!(old & WS_FUTURE_HANDLE))
        ws__contract_violation("ws_future_free", "the future was freed (ws_future_free)");
    follow_up(f, todo);
}
