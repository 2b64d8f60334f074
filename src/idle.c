/* idle.c: what a worker does when it has nothing to do, and how it is woken.
 *
 * The ladder. A worker out of work searches (steals from random victims, looks at the injectors)
 * while spinning with a CPU pause, then while yielding its time slice, then parks on a futex.
 * Spinning catches work that appears within microseconds without a system call; yielding lets
 * an oversubscribed machine (more workers than cores) run the busy threads; parking makes an
 * idle pool cost no CPU at all. The constants:
 *   SPIN_ROUNDS 64 search rounds, each followed by SPIN_PAUSES pauses: about 20-100 us in all on
 *                  current x86 (a pause is 10-140 cycles depending on the core), comparable to
 *                  the cost of a park and wake-up pair (two system calls and a context switch),
 *                  so a worker never spends much more spinning than a wake-up would have cost.
 *   YIELD_ROUNDS 16 rounds with sched_yield: a few more chances on a loaded machine before the
 *                  futex, at a few microseconds each.
 * Only about half the busy workers may spin at once (Go's scheduler makes the same choice):
 * more spinners would steal CPU from the workers producing the work.
 *
 * Waking. Who sleeps and who searches is counted in ws__idle. A producer that publishes work
 * wakes one sleeper if nobody is searching (a searcher will find the work). A searcher that
 * finds work and was the last searcher wakes one sleeper to search in its place, so
 * parallelism ramps up one worker at a time instead of waking everyone (no thundering herd).
 * At most one wake-up is in flight at a time (wake_pending).
 *
 * Why no wake-up is lost: the store-buffering pattern, with a full barrier on both sides.
 *
 *      worker going to sleep                     producer of work
 *      ---------------------                     ----------------
 *      e = epoch                  (acquire)      publish the task      (push / exchange)
 *      searching -= 1             (seq_cst RMW)  sleepers += 0         (seq_cst RMW)
 *      sleepers += 1              (seq_cst RMW)  if sleepers > 0 and nobody searches:
 *      look for work again        (seq_cst loads)    epoch += 1; futex_wake(epoch)
 *      if none: futex_wait(epoch, e)
 *
 * Either the sleeper's second look sees the task, or the producer's check sees the sleeper:
 * the two RMWs on `sleepers` are ordered one way or the other, and whichever comes second reads
 * from (and synchronizes with) the first. The producer's RMW is the full barrier a fence would
 * be, without a standalone fence (which ThreadSanitizer does not model). If the producer bumps
 * the epoch between the sleeper's read of e and its futex_wait, the kernel sees epoch != e and
 * futex_wait returns at once. This is the pattern of linux include/linux/wait.h around
 * waitqueue_active, and of the SB litmus test with full fences.
 *
 * External submissions publish with a seq_cst exchange of the injector's tail, so the producer
 * needs no RMW of its own: seq_cst loads of sleepers and searching follow (ws__idle_notify_
 * after_rmw), and the four seq_cst operations are totally ordered. The sleeper's look sees the
 * new tail even when the producer's link to the job is not yet visible; a sleeper that sees an
 * injector non-empty but could take nothing therefore does not sleep (see park).
 *
 * A push onto a non-empty deque wakes nobody and pays nothing: whoever emptied the deque is
 * awake and will look again, and a searcher that finds work and was the last searcher wakes the
 * next sleeper. The strict protocol covers every push onto an empty deque and every external
 * submission, which is what guarantees progress (a lost wake-up there could leave a submitted
 * job waiting forever).
 */
#include "internal.h"

enum {
    SPIN_ROUNDS = 64,
    SPIN_PAUSES = 32,
    YIELD_ROUNDS = 16,
};

bool ws__backoff_step(ws__backoff *b)
{
    uint32_t r = b->round++;
    if (r < SPIN_ROUNDS) {
        for (int i = 0; i < SPIN_PAUSES; i++)
            ws__cpu_relax();
        return false;
    }
    if (r < SPIN_ROUNDS + YIELD_ROUNDS) {
        ws__thread_yield();
        return false;
    }
    return true;
}

/* Counts a wake-up sent, on the calling worker's counters or the pool's for outside threads. */
static void count_wakeup(ws_pool *pool)
{
    ws__worker *w = ws__tls_worker;
    if (w != NULL && w->pool == pool)
        ws__count(w, wakeups, 1);
    else
        ws_fetch_add_relaxed(&pool->idle.outside_wakeups, 1); /* relaxed: a statistic */
}

static WS_NOINLINE void wake_one(ws_pool *pool)
{
    ws__idle *idle = &pool->idle;
    /* acq_rel: one wake-up in flight at a time; cleared by the worker that leaves its park. */
    if (ws_exchange_acq_rel(&idle->wake_pending, 1) != 0)
        return;
    /* release: the work published before this wake-up is visible to the woken worker, which
     * reads the epoch with acquire before looking for work. */
    ws_fetch_add_release(&idle->epoch, 1);
    count_wakeup(pool);
    if (ws__futex_wake(&idle->epoch, 1) <= 0) {
        /* Nobody was inside futex_wait (a sleeper between its count and its wait sees the new
         * epoch and returns by itself). release: as the clear in leave_park. */
        ws_store_release(&idle->wake_pending, 0);
    }
}

void ws__idle_notify(ws_pool *pool)
{
    ws__idle *idle = &pool->idle;
    /* seq_cst read-modify-write (adding 0): the full barrier of the producer's column. Both
     * sides update `sleepers` with an RMW, so they are ordered in its modification order: if
     * the sleeper's increment comes first we read it here; if ours comes first, the sleeper's
     * RMW reads from ours, synchronizes with it, and its second look sees the work we published
     * before. An RMW rather than a fence: ThreadSanitizer models it, and clang compiles a
     * seq_cst fence to a slow mfence. */
    if (ws_fetch_add_seq_cst(&idle->sleepers, 0) == 0)
        return;
    /* relaxed: the RMW above already ordered us after the searcher's decrement that preceded
     * its increment of sleepers. */
    if (ws_load_relaxed(&idle->searching) != 0)
        return;
    wake_one(pool);
}

void ws__idle_notify_after_rmw(ws_pool *pool)
{
    ws__idle *idle = &pool->idle;
    /* seq_cst loads: the caller published its work with a seq_cst RMW; the sleeper increments
     * sleepers with a seq_cst RMW and then loads the published location with seq_cst. All four
     * are in the single total order, so if this load misses the sleeper, the sleeper's load
     * sees the work. No locked instruction and no write to the shared line, unlike
     * ws__idle_notify. searching is read after sleepers, so a sleeper seen here is also seen
     * to have stopped searching. */
    if (ws_load_seq_cst(&idle->sleepers) == 0 || ws_load_seq_cst(&idle->searching) != 0)
        return;
    wake_one(pool);
}

void ws__park_word(ws__worker *w, _Atomic uint32_t *word, uint32_t value)
{
    if (w == NULL) {
        ws__futex_wait(word, value);
        return;
    }
    /* Its deque's private items must not sleep with it: no push of this worker will answer a
     * thief's request meanwhile (the split deque, docs/deque.md). */
    if (ws__wdeque_publish_all(&w->deque))
        ws__idle_notify(w->pool);
    ws__count(w, parks, 1);
    bool traced = w->pool->trace != NULL;
    uint64_t start = traced ? ws__now_ns() : 0;
    ws__futex_wait(word, value);
    if (traced)
        ws__trace_park(w, start, ws__now_ns());
}

void ws__idle_wake_all(ws_pool *pool)
{
    /* release: as in wake_one; the caller's writes (the exit flag) are visible to the woken. */
    ws_fetch_add_release(&pool->idle.epoch, 1);
    ws__futex_wake(&pool->idle.epoch, -1);
}

/* ---------------------------------------------------------------------------------------- */
/* The searching state                                                                       */
/* ---------------------------------------------------------------------------------------- */

/* A worker may spin only while fewer than half the busy workers spin (at least one may). */
static bool may_spin(ws_pool *pool)
{
    ws__idle *idle = &pool->idle;
    /* relaxed: a heuristic; a wrong guess only changes how long someone spins. */
    uint32_t searching = ws_load_relaxed(&idle->searching);
    uint32_t sleepers = ws_load_relaxed(&idle->sleepers);
    uint32_t awake = pool->nworkers + ws_load_relaxed(&pool->spares_running);
    uint32_t busy = awake > searching + sleepers ? awake - searching - sleepers : 0;
    return searching == 0 || 2 * searching < busy;
}

/* A searcher found a task and stops searching; if it was the last searcher, it wakes a sleeper
 * to search in its place (which also ramps parallelism up one worker at a time). */
static void leave_search_busy(ws_pool *pool)
{
    /* seq_cst: part of the store-buffering protocol. A producer that saw searching > 0 relied
     * on a searcher to find its work; we found something, but perhaps not that work (it may
     * not have been visible to our look yet). So the last searcher to leave always hands the
     * search on to a sleeper, as Go's scheduler does: at worst the sleeper finds nothing and
     * parks again; without it, that work could wait for as long as our task runs. */
    uint32_t was = ws_fetch_sub_seq_cst(&pool->idle.searching, 1);
    if (was == 1)
        ws__idle_notify(pool);
}

/* ---------------------------------------------------------------------------------------- */
/* Parking                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Leaves the parked state, becoming a searcher again. */
static void leave_park(ws__idle *idle)
{
    /* seq_cst: as the increment in park; the order (searching up, then sleepers down) keeps a
     * producer from seeing "no searcher, no sleeper" while we are awake but not yet looking. */
    ws_fetch_add_seq_cst(&idle->searching, 1);
    ws_fetch_sub_seq_cst(&idle->sleepers, 1);
    /* acq_rel exchange, not a store: a new wake-up may be sent, we are the searcher the last
     * one asked for, and a producer whose wake-up was suppressed meanwhile (its exchange found
     * wake_pending set) made its exchange before ours in wake_pending's order, so ours reads
     * from it and acquires its work: our search will see it. A plain store would not
     * synchronize with that producer, and on x86 our search could run before its work was
     * visible, leaving the work queued with every other worker asleep. */
    ws_exchange_acq_rel(&idle->wake_pending, 0);
}

/* Searcher w parks until woken. Returns a task found by the last look before sleeping (w is
 * then no longer a searcher), or NULL after waking up (w is a searcher again). */
static ws__task *park(ws__worker *w, const char **what)
{
    ws_pool *pool = w->pool;
    ws__idle *idle = &pool->idle;
    /* acquire: pairs with the release increment in wake_one; if the epoch moved, the work it
     * announced is visible to the look below. */
    uint32_t e = ws_load_acquire(&idle->epoch);
    /* seq_cst: stop searching, then announce the sleeper before looking again (the
     * store-buffering diagram). This order matters: a producer whose RMW on sleepers reads our
     * increment also sees the decrement before it, so it cannot mistake us for a searcher. */
    ws_fetch_sub_seq_cst(&idle->searching, 1);
    ws_fetch_add_seq_cst(&idle->sleepers, 1);
    bool more = false;
    ws__task *t = ws__find_elsewhere(w, &more, what);
    if (t != NULL) {
        /* seq_cst: as above. We are busy now, neither sleeping nor searching. */
        ws_fetch_sub_seq_cst(&idle->sleepers, 1);
        if (more)
            ws__idle_notify(pool);
        return t;
    }
    if (ws__injector_maybe_nonempty(&pool->urgent) ||
        ws__injector_maybe_nonempty(&pool->injector)) {
        /* External work is queued or being pushed, but the look found none to take: another
         * worker holds the consumer side, or a producer has swapped the tail and not yet
         * linked its job. That producer may already have read the sleeper count (it does so
         * right after its seq_cst exchange, before the link is visible here), so it will not
         * wake us: do not sleep, yield and look again. */
        ws__thread_yield();
    } else if (!ws__pool_finished(pool)) {
        ws__count(w, parks, 1);
        uint64_t start = pool->trace != NULL ? ws__now_ns() : 0;
        /* acquire: as above; loop over spurious returns of futex_wait. */
        while (ws_load_acquire(&idle->epoch) == e)
            ws__futex_wait(&idle->epoch, e);
        if (pool->trace != NULL)
            ws__trace_park(w, start, ws__now_ns());
    }
    leave_park(idle);
    return NULL;
}

ws__task *ws__idle_find_work(ws__worker *w, const char **what)
{
    ws_pool *pool = w->pool;
    ws__backoff b = {0};
    if (!may_spin(pool))
        b.round = SPIN_ROUNDS; /* straight to yielding */
    /* seq_cst: entering the search is part of the store-buffering protocol. */
    ws_fetch_add_seq_cst(&pool->idle.searching, 1);
    for (;;) {
        bool more = false;
        ws__task *t = ws__find_elsewhere(w, &more, what);
        if (t != NULL) {
            leave_search_busy(pool);
            return t;
        }
        if (ws__pool_finished(pool))
            break;
        /* A spare with no more blocked worker to stand in for retires as soon as it finds
         * nothing to do, rather than stay on as an extra thief (spare.c). */
        if (w->spare && ws__spare_should_retire(w))
            break;
        if (!ws__backoff_step(&b))
            continue;
        t = park(w, what);
        if (t != NULL)
            return t;
        b.round = 0;
    }
    ws_fetch_sub_seq_cst(&pool->idle.searching, 1); /* seq_cst: as above */
    return NULL;
}
