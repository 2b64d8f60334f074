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
 * more spinners would steal CPU from the workers producing the work. None spins or yields while
 * the machine has no CPU to spare (ws__idle_contended, below; docs/scheduler.md): they park.
 *
 * Waking. One word (idle_state.h) counts searchers, unclaimed sleepers and owed wake-ups
 * (tokens). A producer that publishes work wakes a sleeper only if nobody searches: a searcher
 * will find the work, or hand the search on when it stops. To wake, it *claims* a sleeper: one
 * CAS turns an unclaimed sleeper into a searcher that is owed a token; then it bumps `epoch`
 * and wakes one futex waiter on it. A sleeper waits until a token is owed and takes one (any:
 * sleepers are interchangeable). Because the claim counts the sleeper as a searcher at once,
 * the next producer sees a searcher and does not wake a second worker: at most one wake-up is
 * in flight per search, with no flag to clear afterwards, so no interleaving of a waker with a
 * sleeper that leaves on its own can leave the pool deaf (the two lost wake-ups of the old
 * wake_pending flag: an absorbed futex wake that left it set for good, and a clear that
 * suppressed another producer's wake-up).
 *
 * A searcher that finds work stops searching (search_end). If it was the last searcher and
 * someone sleeps unclaimed, it looks once more over the injectors and every deque and claims a
 * sleeper only if work is left that it did not take: a producer that saw it searching relied
 * on it. The first task of a parked pool therefore wakes one worker, which runs it without
 * waking another; a burst ramps up one worker per task found with more left (no herd).
 *
 * Why no wake-up is lost: store buffering, with every change of the word a read-modify-write.
 *
 *      searcher going to sleep                 producer of work
 *      -----------------------                 ----------------
 *      sleep_begin: searchers -1,              publish the task  (deque push, or seq_cst
 *                   sleepers +1 (seq_cst RMW)                     exchange of the injector tail)
 *      look for work again                     observe the word  (acq_rel RMW after a push,
 *                                                                  seq_cst load after the tail)
 *      if none: wait for a token               if nobody searches and somebody sleeps: claim
 *
 * Deque push: both sides RMW the word, so they are ordered in its modification order. If the
 * sleeper's RMW comes first, the producer reads it (or a later value) and claims it unless a
 * searcher exists. If the producer's comes first, the sleeper's RMW reads from its release
 * sequence (all later changes are RMWs), synchronizes with it, and the look sees the task.
 * Injector: the tail exchange, the producer's load of the word, the sleeper's RMW and its load
 * of the tail are all seq_cst, one total order: one of the two loads sees the other's write.
 * A producer that saw a searcher relies on it: the searcher's search_end (or sleep_begin) is a
 * seq_cst RMW after the producer's observation, and its look that follows (for leftover work,
 * or its last look before sleeping) sees the task by the same argument. A producer that saw a
 * claimed searcher relies on the claimed sleeper, which searches after taking its token.
 * A sleeper reads `epoch` before it checks for a token and futex-waits only while epoch still
 * holds that value; a claim bumps epoch after it, so a claim between the check and the wait
 * makes the wait return at once. The model tests/model_idle.c runs this file, injector.c and the
 * deque as they are under RC11 with GenMC and a futex that wakes one (one worker with an outside
 * submitter, whose push may be in flight, or with a deque push) and finds a lost wake-up when
 * the in-flight check below is removed or an order of the store buffering, the claim's epoch
 * bump or the sleeper's epoch read is weakened (docs/scheduler.md, which also says why a push's
 * possibly stale view of an empty deque is left alone).
 *
 * A sleeper whose last look sees an injector non-empty but can take nothing (a producer between
 * its tail exchange and its link, or another worker draining) does not sleep: it yields and
 * searches again, since that producer may have observed it as a searcher already. Nor does one
 * whose steal lost its CAS: the winner may be the owner's pop, which leaves the older public
 * items behind with nobody announcing them (deque.c, WS_SDEQUE_NOTES_LOST).
 *
 * Ramp-up hints are not publications: a worker that takes an external job and sees more queued,
 * or steals and sees more on the victim's deque, glances at the word (a relaxed load) and wakes a
 * sleeper only if one is wanted. Their work was announced by its publisher already, and a push
 * onto a non-empty deque wakes nobody: the deque's owner runs what nobody steals. The strict
 * protocol covers every push onto an empty deque and every external submission.
 */
#include "internal.h"

/* The orders and the step the protocol relies on, by name, so that tests/model_idle.c can weaken
 * or remove each one and show that the checker then finds a lost wake-up. */
#ifndef WS_IDLE_EPOCH_BUMP
#define WS_IDLE_EPOCH_BUMP(p) ws_fetch_add_release((p), 1)
#endif
#ifndef WS_IDLE_EPOCH_READ
#define WS_IDLE_EPOCH_READ(p) ws_load_acquire(p)
#endif
#ifndef WS_IDLE_PUSH_IN_FLIGHT
#define WS_IDLE_PUSH_IN_FLIGHT(pool) ws__external_work_left(pool)
#endif
#ifndef WS_IDLE_HANDOFF
#define WS_IDLE_HANDOFF(s) ws__idle_wake_wanted(s)
#endif

/* The model (tests/model_idle.c) sets both rounds to 0: only the last look before parking
 * matters to the protocol, and each earlier look would multiply the executions it explores. */
#ifndef WS_IDLE_SPIN_ROUNDS
#define WS_IDLE_SPIN_ROUNDS 64
#endif
#ifndef WS_IDLE_YIELD_ROUNDS
#define WS_IDLE_YIELD_ROUNDS 16
#endif

enum {
    SPIN_ROUNDS = WS_IDLE_SPIN_ROUNDS,
    SPIN_PAUSES = 32,
    YIELD_ROUNDS = WS_IDLE_YIELD_ROUNDS,
};

/* Contention (see ws__idle_contended): how often the machine's runnable threads are counted,
 * and the top of the busy score (count_runnable). */
#define PROBE_INTERVAL_NS 1000000u
#define BUSY_COUNTS       3

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

void ws__backoff_give_up(ws__backoff *b)
{
    b->round = SPIN_ROUNDS + YIELD_ROUNDS;
}

ws__backoff ws__backoff_start(const ws__worker *w)
{
    /* An outside thread waits for work it has just handed to the pool, usually after waking a
     * worker for it: spinning would hold a CPU that worker may need (on a busy machine the
     * woken worker lands on the waiter's CPU and would start only when the spin ends). */
    ws__backoff b = {w == NULL ? SPIN_ROUNDS : 0};
    return b;
}

void ws__idle_wake(ws_pool *pool, uint64_t s)
{
    ws__idle *idle = &pool->idle;
    if (!ws__idle_claim(&idle->state, s))
        return;
    /* release: a sleeper that reads the new epoch (acquire, in wait_for_token) sees the claim. */
    WS_IDLE_EPOCH_BUMP(&idle->epoch);
    ws__futex_wake(&idle->epoch, 1);
}

void ws__idle_notify(ws_pool *pool)
{
    uint64_t s = ws__idle_observe_rmw(&pool->idle.state);
    if (ws__idle_wake_wanted(s))
        ws__idle_wake(pool, s);
}

/* Worker w's private items and frames must not wait with it while it neither pushes nor takes
 * for a long time (asleep, or running a future it did not take from its deque's bottom): no
 * thief's request is answered meanwhile (the split deque, docs/deque.md). */
void ws__share_private_work(ws__worker *w)
{
    ws__frames_flush(w);
    if (ws__wdeque_publish_all(&w->deque))
        ws__idle_notify(w->pool);
}

void ws__park_word(ws__worker *w, _Atomic uint32_t *word, uint32_t value)
{
    if (w == NULL) {
        ws__futex_wait(word, value);
        return;
    }
    ws__share_private_work(w); /* none of its pushes or takes answers while it sleeps */
    ws__count(w, parks, 1);
    bool traced = w->pool->trace != NULL;
    uint64_t start = traced ? ws__now_ns() : 0;
    ws__futex_wait(word, value);
    if (traced)
        ws__trace_park(w, start, ws__now_ns());
}

void ws__idle_wake_all(ws_pool *pool)
{
    /* release: the caller's writes (the exit flag) are visible to a sleeper that reads the new
     * epoch; one that read the old one returns from its futex wait at once or is woken here. */
    ws_fetch_add_release(&pool->idle.epoch, 1);
    ws__futex_wake(&pool->idle.epoch, -1);
}

/* ---------------------------------------------------------------------------------------- */
/* Contention (internal.h says what counts as contended, docs/scheduler.md why)              */
/* ---------------------------------------------------------------------------------------- */

/* Counts the machine's runnable threads now (the caller took the due count): busy if as many
 * outsiders are runnable as CPUs online. A busy count moves a score up, a quiet one down, within
 * [0, BUSY_COUNTS]; the machine turns contended when the score reaches the top and uncontended
 * when it reaches 0 (why one count is not the verdict: docs/scheduler.md, "A machine with no
 * CPU to spare"). */
static void count_runnable(ws_pool *pool)
{
    ws__idle *idle = &pool->idle;
    /* The threads runnable on the machine (0 if unknown), less this pool's awake workers (the
     * caller among them): the outsiders, the submitters of the pool's work included. */
    unsigned runnable = ws__runnable_threads();
    /* relaxed (all of this): a heuristic; a stale answer only changes how a worker waits. */
    uint32_t awake = pool->nworkers + ws_load_relaxed(&pool->spares_running) -
                     ws__idle_sleepers(ws_load_relaxed(&idle->state));
    unsigned outsiders = runnable > awake ? runnable - awake : 0;
    uint32_t score = ws_load_relaxed(&idle->busy_score);
    if (outsiders >= ws__online_cpus())
        score += score < BUSY_COUNTS;
    else
        score -= score > 0;
    ws_store_relaxed(&idle->busy_score, score);
    if (score == BUSY_COUNTS || score == 0)
        ws_store_relaxed(&idle->contended, score != 0);
}

bool ws__idle_contended(ws_pool *pool)
{
    ws__idle *idle = &pool->idle;
    uint64_t now = ws__now_ns();
    /* relaxed: a heuristic, as in count_runnable. */
    uint64_t due = ws_load_relaxed(&idle->probe_due);
    if (now >= due && ws_cas_relaxed(&idle->probe_due, &due, now + PROBE_INTERVAL_NS))
        count_runnable(pool);
    return ws_load_relaxed(&idle->contended) != 0; /* relaxed: as above */
}

/* ---------------------------------------------------------------------------------------- */
/* Searching                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* A worker may spin only while fewer than half the busy workers spin (at least one may). */
static bool may_spin(ws_pool *pool)
{
    /* relaxed: a heuristic; a wrong guess only changes how long someone spins. */
    uint64_t s = ws_load_relaxed(&pool->idle.state);
    uint32_t searching = ws__idle_searchers(s);
    uint32_t idle = searching + ws__idle_sleepers(s); /* claimed sleepers count as searchers */
    uint32_t awake = pool->nworkers + ws_load_relaxed(&pool->spares_running);
    uint32_t busy = awake > idle ? awake - idle : 0;
    return searching == 0 || 2 * searching < busy;
}

/* Is there work that some worker could take: a non-empty injector or deque? seq_cst loads of
 * the injector tails (ws__injector_maybe_nonempty), as the store buffering needs; the deques'
 * pushes were followed by an RMW of the idle word, which the caller's RMW synchronized with. */
static bool work_left(ws_pool *pool)
{
    if (ws__injector_maybe_nonempty(&pool->urgent) || ws__injector_maybe_nonempty(&pool->injector))
        return true;
    /* acquire: pairs with the release store in wake_spare; the new spare's deque is set up. */
    unsigned n = pool->nworkers + ws_load_acquire(&pool->spares_started);
    for (unsigned i = 0; i < n; i++)
        if (ws__worker_may_have_work(pool->workers[i]))
            return true;
    return false;
}

/* A searcher found a task (or a spare retires) and stops searching. If it was the last searcher,
 * somebody sleeps and work is left that it does not take, it wakes a sleeper to search in its
 * place. */
static void leave_search_busy(ws_pool *pool)
{
    uint64_t s = ws__idle_search_end(&pool->idle.state);
    if (WS_IDLE_HANDOFF(s) && work_left(pool))
        ws__idle_wake(pool, s);
}

/* ---------------------------------------------------------------------------------------- */
/* Parking                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Sleeps until a wake-up is owed (or the pool exits). */
static void wait_for_token(ws__worker *w)
{
    ws_pool *pool = w->pool;
    ws__idle *idle = &pool->idle;
    ws__count(w, parks, 1);
    uint64_t start = pool->trace != NULL ? ws__now_ns() : 0;
    for (;;) {
        /* acquire: pairs with the release increment in ws__idle_wake and ws__idle_wake_all;
         * read before the checks, so a claim or exit after them changes it and the futex wait
         * returns at once. */
        uint32_t e = WS_IDLE_EPOCH_READ(&idle->epoch);
        if (ws__idle_token_owed(&idle->state) || ws__pool_finished(pool))
            break;
        ws__futex_wait(&idle->epoch, e);
    }
    if (pool->trace != NULL)
        ws__trace_park(w, start, ws__now_ns());
}

/* Sleeper w becomes a searcher again; a token it takes is a wake-up it received. */
static void sleep_end(ws__worker *w)
{
    if (ws__idle_sleep_end(&w->pool->idle.state))
        ws__count(w, wakeups, 1);
}

/* Searcher w parks until woken. Returns a task found by the last look before sleeping (w is
 * then no longer a searcher), or NULL after waking up (w is a searcher again). */
static ws__task *park(ws__worker *w, ws__look_fn look, const char **what)
{
    ws_pool *pool = w->pool;
    ws__idle *idle = &pool->idle;
    ws__idle_sleep_begin(&idle->state);
    bool more = false;
    w->steal_lost = false;
    ws__task *t = look(w, &more, what);
    if (t != NULL) {
        sleep_end(w);
        leave_search_busy(pool);
        return t;
    }
    if (WS_IDLE_PUSH_IN_FLIGHT(pool) || w->steal_lost) {
        /* External work is queued or being pushed, but the look found none to take: another
         * worker holds the consumer side, or a producer has swapped the tail and not yet
         * linked its job. That producer may have observed us as a searcher, so we must not
         * sleep: yield and search again. Likewise after a steal that lost its race: the
         * winner may have been the owner's pop, with public items left behind (deque.c). */
        ws__thread_yield();
    } else if (!ws__pool_finished(pool)) {
        ws__wdeque_trim(&w->deque); /* a big array does not sleep with us (docs/deque.md) */
        ws__records_trim(pool);     /* the pool is idle: give back a burst's records */
        wait_for_token(w);
    }
    sleep_end(w);
    return NULL;
}

ws__task *ws__idle_find_work(ws__worker *w, ws__look_fn look, const char **what)
{
    ws_pool *pool = w->pool;
    ws__backoff b = {0};
    if (!may_spin(pool))
        b.round = SPIN_ROUNDS; /* straight to yielding */
    ws__idle_search_begin(&pool->idle.state);
    for (;;) {
        bool more = false;
        ws__task *t = look(w, &more, what);
        if (t != NULL) {
            leave_search_busy(pool);
            return t;
        }
        if (ws__pool_finished(pool))
            break;
        /* A spare with no more blocked worker to stand in for retires as soon as it finds
         * nothing to do, rather than stay on as an extra thief (spare.c). A producer that saw
         * it searching relied on it, so it stops searching as a finder does: its last look
         * after that step hands the search on if work came meanwhile (with the injector's
         * link after the producer's look, such a spare could otherwise retire with a job
         * queued and every worker asleep: test_external_blocking P 0, rounds). */
        if (w->should_leave != NULL && w->should_leave(w)) {
            leave_search_busy(pool);
            return NULL;
        }
        if (b.round < SPIN_ROUNDS + YIELD_ROUNDS && ws__idle_contended(pool))
            b.round = SPIN_ROUNDS + YIELD_ROUNDS; /* park now (ws__idle_contended) */
        /* Spinning, the worker keeps its owed group counts unless someone waits for them;
         * before it yields or sleeps it settles them. */
        ws__worker_settle(w, b.round >= SPIN_ROUNDS);
        if (!ws__backoff_step(&b))
            continue;
        t = park(w, look, what);
        if (t != NULL)
            return t;
        b.round = 0;
    }
    (void)ws__idle_search_end(&pool->idle.state); /* the pool exits: nothing to hand on */
    return NULL;
}
