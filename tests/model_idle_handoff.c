/* model_idle_handoff.c: the park/wake protocol's two-worker and two-submitter cases, under
 * GenMC with RC11, on the steps of the real idle word (src/idle_state.h, included) inside loops
 * that mirror src/idle.c. tests/model_idle.c runs the real idle.c, injector.c and deque instead,
 * but the checker does not finish its two-worker and two-submitter cases with the workers'
 * parking racing the submissions (tests/model_idle.c says why); these cases keep the second
 * submitter's wake-up checked meanwhile, with the caveat that the loops are a copy. The search
 * hand-off is checked on the real idle.c (model_idle's SEARCHER cases); this file's two-worker
 * case is no longer registered.
 *
 * The steps on the idle word are the library's own (src/idle_state.h is included, with its
 * memory orders); the loops around them mirror src/idle.c (ws__idle_find_work, park,
 * wait_for_token, leave_search_busy, ws__idle_wake) and the worker loop of src/worker.c. The
 * places work comes from are reduced to what the protocol relies on:
 *   the injector  a count of pushed jobs: a producer publishes with a seq_cst RMW (the tail
 *                 exchange) and a worker looks with a seq_cst load (ws__injector_maybe_nonempty)
 *                 and takes with a CAS (the consumer lock);
 *   a deque       (DEQUE_PRODUCER) a worker-side producer publishes with a release store and
 *                 observes the idle word with an RMW (a push onto an empty deque and
 *                 ws__idle_notify); thieves look with an acquire load and take with a CAS.
 * A futex wait is an assumption that the epoch moved (executions where it never does are
 * blocked); a lost wake-up is then main waiting forever for a job in its spin loop, which
 * --check-liveness reports as a non-terminating spin loop. wait_for_token is a plain loop, as in
 * src/idle.c, not a counted one: GenMC then treats it as a spin loop and drops the rounds that
 * see no change (one worker and one submitter: 181 executions, 310 counted).
 *
 * WEAKEN: the store-load order the protocol relies on relaxed: every seq_cst load (the
 * producer's look at the idle word after its publication, the worker's look at the injector
 * after announcing itself) becomes an acquire load. The checker must then find a lost wake-up
 * (tests/idle.cmake asserts that it does). NO_HANDOFF: leave_search_busy only stops searching;
 * the two-worker case must then fail too, which shows that it reaches the hand-off.
 *
 * Two workers. Every extra step of a second worker multiplies the executions (a free-running
 * pair with one submitter did not finish in 20 minutes), so the two-worker cases cut what the
 * races they are about do not need:
 *   HOLD        a worker runs one job and keeps it to the end (a long job). Without it a worker
 *               that took one job comes back for the next, and a sleeper nobody woke goes
 *               unnoticed; with it, every job must reach a worker of its own, which is what
 *               the hand-off promises: a producer that saw a searcher relied on it, and the
 *               searcher that takes another job must wake a sleeper in its place.
 *   START_PARKED, START_SEARCHING  the first workers start as if they had parked (counted a
 *               sleeper in the initial word, entering wait_for_token) or started searching
 *               (counted a searcher, entering the search loop) before any producer ran. The
 *               steps skipped only read empty places and change the word by the counts set
 *               here, so every execution explored is one of the real protocol: one where the
 *               pool was idle before the submissions, the usual start. Left out: those steps
 *               overlapping a submission, which the one-worker cases check, and which the
 *               other worker of each two-worker case goes through (it parks while jobs come).
 * Each job is then held, so with JOBS == WORKERS no idle worker is left to wake at exit.
 *
 * Sizes (clang -D): WORKERS (1 or 2), PRODUCERS (outside submitters, 1 or 2), SUBMITS (jobs per
 * submitter, 1 or 2), DEQUE_PRODUCER (0 or 1: one more job, pushed onto a deque by a thread
 * acting as a busy worker). Cases, with their sizes and times, are in tests/idle.cmake.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <genmc.h>

#include "atomics.h"
#ifdef WEAKEN
#undef ws_load_seq_cst
#define ws_load_seq_cst(p) atomic_load_explicit((p), memory_order_acquire)
#endif
#include "idle_state.h"

#ifndef WORKERS
#define WORKERS 1
#endif
#ifndef PRODUCERS
#define PRODUCERS 2
#endif
#ifndef DEQUE_PRODUCER
#define DEQUE_PRODUCER 0
#endif
#ifndef START_PARKED
#define START_PARKED 0
#endif
#ifndef START_SEARCHING
#define START_SEARCHING 0
#endif
#ifndef HOLD
#define HOLD 0
#endif
#ifndef SUBMITS
#define SUBMITS 1
#endif
#define JOBS (PRODUCERS * SUBMITS + DEQUE_PRODUCER)

static _Atomic uint64_t state =
    START_PARKED * WS_IDLE_SLEEPER + START_SEARCHING * WS_IDLE_SEARCHER; /* the idle word */
static _Atomic uint32_t epoch;                                           /* the futex word */
static _Atomic int exiting;
static _Atomic int pushed, taken; /* the injector */
static _Atomic int deque_items, deque_taken;
static _Atomic int done; /* jobs run */

/* ---- where work is -------------------------------------------------------------------- */

static bool injector_maybe_nonempty(void)
{
    return ws_load_seq_cst(&pushed) != ws_load_relaxed(&taken);
}

static bool take_injected(void)
{
    /* acquire: the consumer lock; pairs with the last taker's CAS, so the look at pushed that
     * follows is no older than that taker's (two workers never take one job). */
    int t = ws_load_acquire(&taken);
    if (ws_load_seq_cst(&pushed) == t)
        return false;
    return ws_cas_acq_rel(&taken, &t, t + 1);
}

static bool steal(void)
{
    int t = ws_load_acquire(&deque_taken); /* acquire: as in take_injected (the real load of top
                                            * is seq_cst) */
    if (ws_load_acquire(&deque_items) == t)
        return false;
    return ws_cas_acq_rel(&deque_taken, &t, t + 1);
}

static bool find_elsewhere(void)
{
    return take_injected() || steal();
}

static bool work_left(void)
{
    return injector_maybe_nonempty() ||
           ws_load_acquire(&deque_items) != ws_load_relaxed(&deque_taken);
}

/* ---- src/idle.c ------------------------------------------------------------------------ */

static void idle_wake(uint64_t s)
{
    if (!ws__idle_claim(&state, s))
        return;
    ws_fetch_add_release(&epoch, 1); /* then futex_wake: the spin loop below sees the change */
}

static void leave_search_busy(void)
{
    uint64_t s = ws__idle_search_end(&state);
#ifndef NO_HANDOFF
    if (ws__idle_wake_wanted(s) && work_left())
        idle_wake(s);
#else
    (void)s;
#endif
}

/* The futex wait: blocks until the epoch differs from e (GenMC: an assumption that prunes every
 * execution in which it never does). */
static void futex_wait(uint32_t e)
{
    __VERIFIER_assume(ws_load_relaxed(&epoch) != e);
}

/* The loop of wait_for_token. It ends: the epoch moves at most JOBS + 1 times (one claim per job
 * at most, and the exit), and each futex wait needs a move. */
static void wait_for_token(void)
{
    for (;;) {
        uint32_t e = ws_load_acquire(&epoch);
        if (ws__idle_token_owed(&state) || ws_load_acquire(&exiting))
            return;
        futex_wait(e);
    }
}

/* 1: took a job in its last look; 0: woke up (a searcher again). */
static int park(void)
{
    ws__idle_sleep_begin(&state);
    if (find_elsewhere()) {
        ws__idle_sleep_end(&state);
        leave_search_busy();
        return 1;
    }
    if (injector_maybe_nonempty()) {
        /* yield, and search again */
    } else if (!ws_load_acquire(&exiting)) {
        wait_for_token();
    }
    ws__idle_sleep_end(&state);
    return 0;
}

/* 1: found a job; 0: the pool exits. The caller is a searcher. The spin and yield rounds are
 * left out: only the last look before parking matters to the protocol. */
static int search(void)
{
    for (;;) {
        if (find_elsewhere()) {
            leave_search_busy();
            return 1;
        }
        if (ws_load_acquire(&exiting))
            break;
        if (park())
            return 1;
    }
    (void)ws__idle_search_end(&state);
    return 0;
}

static int idle_find_work(void)
{
    ws__idle_search_begin(&state);
    return search();
}

/* A worker counted as parked in the initial word: it starts in wait_for_token. */
static int wake_and_search(void)
{
    wait_for_token();
    ws__idle_sleep_end(&state);
    return search();
}

/* Where a worker starts: done with a job (the worker loop's first look), or START_*. */
enum start { BUSY, SEARCHING, PARKED };

static int first_job(enum start from)
{
    switch (from) {
    case PARKED:
        return wake_and_search();
    case SEARCHING:
        return search();
    default:
        return find_elsewhere() || idle_find_work();
    }
}

static void *worker(void *arg)
{
    if (!first_job(*(enum start *)arg))
        return NULL;
    ws_fetch_add_release(&done, 1);
    while (!HOLD && (find_elsewhere() || idle_find_work()))
        ws_fetch_add_release(&done, 1);
    return NULL;
}

/* ---- producers ------------------------------------------------------------------------- */

static void *submitter(void *arg)
{
    (void)arg;
    for (int i = 0; i < SUBMITS; i++) {
        ws_fetch_add_seq_cst(&pushed, 1); /* the injector's tail exchange */
        uint64_t s = ws__idle_observe_sc(&state);
        if (ws__idle_wake_wanted(s))
            idle_wake(s);
    }
    return NULL;
}

static void *deque_pusher(void *arg)
{
    (void)arg;
    ws_store_release(&deque_items, 1); /* a push onto an empty deque */
    uint64_t s = ws__idle_observe_rmw(&state);
    if (ws__idle_wake_wanted(s))
        idle_wake(s);
    return NULL;
}

int main(void)
{
    pthread_t w[WORKERS], p[PRODUCERS + 1];
    static enum start from[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        from[i] = i < START_PARKED ? PARKED : i < START_PARKED + START_SEARCHING ? SEARCHING : BUSY;
        pthread_create(&w[i], NULL, worker, &from[i]);
    }
    for (int i = 0; i < PRODUCERS; i++)
        pthread_create(&p[i], NULL, submitter, NULL);
    if (DEQUE_PRODUCER)
        pthread_create(&p[PRODUCERS], NULL, deque_pusher, NULL);
    for (int i = 0; i < PRODUCERS + DEQUE_PRODUCER; i++)
        pthread_join(p[i], NULL);
    while (ws_load_acquire(&done) != JOBS) /* every job runs: a lost wake-up blocks here */
        ;
    ws_store_release(&exiting, 1); /* ws_pool_destroy, then ws__idle_wake_all */
    ws_fetch_add_release(&epoch, 1);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(w[i], NULL);
    return 0;
}
