/* model_frames_wake.c: no thief sleeps while a worker's stack-task frames stay private with
 * nobody asking for them: the task stack (src/frames.c), the split deque (src/deque.c), the
 * park/wake protocol (src/idle.c) and the search of a worker (src/worker.c's look and steal
 * round), under the GenMC model checker (RC11).
 *
 *   genmc --rc11 --disable-estimation -- -I src -I include [-DWITHOUT=n] tests/model_frames_wake.c
 *
 * Worker 0 runs a typed task (frames.c's frames_call, as for a task it took) that makes ROUNDS
 * rounds of WS_SPAWN(leaf) then WS_SYNC(leaf). Worker 1, a thief, runs the worker loop: the idle
 * search (ws__idle_find_work with worker.c's look, park), runs what it takes as the loop does
 * (ws__task_run_taken: frames.c's run_handed runs the frame in place on the thief's own task
 * stack), and searches again, until the pool exits. A leaf checks its argument and counts its run;
 * each runs exactly once and each sync gets its leaf's result.
 *
 * Checked right after each WS_SPAWN (a frame is private, or was just handed over): if the thief
 * sleeps in the futex with no wake-up on its way (the stub's count of sleepers, and no token
 * owed in the idle word), the owner's next spawn takes the slow path and wakes a sleeper, that
 * is end_fast is at most WS__FRAMES_CLOSED and either a request is pending (wanted = 1: the
 * spawn hands frames over and publishes them) or end_fast is a request's 0 (the spawn wakes
 * after reopening from 0). Otherwise the thief sleeps, nothing will ask for the owner's frames
 * and its next spawns keep them private: end_fast open and wanted 0 (a request lost, or never
 * made), or closed by the owner with wanted 0 (that slow spawn reopens and wakes nobody). The
 * thief's sleep is stable (only the owner or the teardown can end it), so a check after each
 * spawn sees every state in which it fell asleep before the owner's next step.
 *
 * Real: frames.c whole (frames_call, the slow spawn with its hand-over, publication, reopen and
 * wake-up, the slow sync, run_handed), the header's ws__frames_push and ws__frames_pop with the
 * type check, the deque (the steal's requests included), idle.c (the search loop, park,
 * wait_for_token, ws__idle_notify, ws__idle_wake_all), the injectors (empty here), worker.c's
 * look (ws__find_elsewhere: its steal round) and ws__task_run_taken, spare.c's ws__block_worker
 * (BLOCK=1). Stubbed
 * (tests/model_platform.h): the futex, with the kernel's semantics, counting its sleepers;
 * allocation, the clock and the yield; the records' trim before a sleep; a contract violation is
 * an assertion. Mirrored, since join.c needs the rest of the scheduler: ws_spawn and ws_sync on a
 * worker, as join.c makes them (tests/model_frames.c has the same), the wait for a stolen record
 * spinning on DONE with acquire rather than leapfrogging. The thief's loop calls
 * ws__idle_find_work directly (next_task's own look before it is the same look).
 *
 * Bounds. The idle ladder is cut to its last step, as in tests/model_idle.c
 * (WS_IDLE_SPIN_ROUNDS and WS_IDLE_YIELD_ROUNDS 0). The thief starts once the typed task runs.
 * A search that slept and finds nothing after waking ends through should_leave, as a spare's
 * does (search_end, the hand-off), and the loop starts the next one in a frame of its own: a
 * second park in one call of ws__idle_find_work writes park's local `more` at the address its
 * first call freed, which GenMC 0.11 reports as an access to freed memory (the fault
 * tests/model_idle.c meets). MODEL_LOOKS (3) bounds the thief's looks while the pool runs
 * (executions with more are dropped): each look multiplies the executions by about 30.
 *
 * The deque's reserve is 2, as a pool of three threads has (worker.c: nworkers + nspares - 1):
 * with a reserve of 1 a steal never meets a public index without an item, and rule 1 below is
 * never reached.
 *
 * The rules that keep thieves from sleeping on private frames, each removed by a hook of the
 * sources:
 *   WITHOUT=1  a steal that meets the reserve (public indices, no item) or loses its CAS does
 *              not ask (WS_SDEQUE_ASK_FOR_FRAMES 0): fails in 2 s (234 executions): the thief
 *              takes the first leaf, meets the reserve's empty index and sleeps while the
 *              owner's second spawn takes its open fast path;
 *   WITHOUT=2  the owner's closing of end_fast writes 0, which thieves skip
 *              (WS_FRAMES_CLOSED_VALUE 0). Expected to pass with one thief: a thief that skipped
 *              a closed worker is woken by the owner's next spawn, which begins from 0 (rule 3);
 *              rule 2 makes it try and ask at once, and makes the hand-off of a search
 *              (idle.c's work_left) count such a worker, which needs a second thief;
 *   WITHOUT=3  a slow spawn that began from a request's 0 wakes nobody unless it served a
 *              request (WS_FRAMES_WAKE_ASKED(seen) (0)). Should fail with two rounds: the first
 *              spawn serves the thief's wanted before the thief's exchange of end_fast, the
 *              owner's sync takes the leaf back, the thief sees 0 and an empty deque and
 *              sleeps, and the second spawn reopens without a wake-up (two looks);
 *   WITHOUT=4  rules 2 and 3 both removed.
 * BLOCK=1 (with spare.c's ws__block_worker, and the mirror's spawn waking as push_rare does): a
 * task that blocks with a frame private and a thief waiting for it (see root below); fails
 * (0 complete executions) without the block's flush of the frames.
 * Bounds that finish: tests/model.cmake runs all rules at one round and one look (2,181
 * executions, 4 s), BLOCK=1 at two looks (2,507, 16 s; three looks gave no verdict within 5
 * minutes) and WITHOUT=1 at the defaults (it fails within 2 s). With every rule, two
 * rounds and three looks gave no verdict within 5 minutes, nor one round with two looks within
 * 2 minutes, nor WITHOUT=3 within 5 minutes: rule 3 is shown by tests/test_sched_stack.c's
 * spread case, not here.
 */
#include <assert.h>
#include <genmc.h>

#ifndef BLOCK
#define BLOCK 0
#endif
#if BLOCK
#undef ROUNDS
#define ROUNDS            2 /* the two leaves of the block case */
#define MODEL_SPAWN_WAKES 1 /* a wake-up missing from the mirror would be a false alarm here */
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif
#ifndef WITHOUT
#define WITHOUT 0
#endif
#if WITHOUT == 1
#define WS_SDEQUE_ASK_FOR_FRAMES 0
#elif WITHOUT == 2
#define WS_FRAMES_CLOSED_VALUE 0
#elif WITHOUT == 3
#define WS_FRAMES_WAKE_ASKED(seen) ((void)(seen), 0)
#elif WITHOUT == 4
#define WS_FRAMES_CLOSED_VALUE     0
#define WS_FRAMES_WAKE_ASKED(seen) ((void)(seen), 0)
#endif
#define WS_FRAMES_PER_SEGMENT  4
#define WS_IDLE_SPIN_ROUNDS    0
#define WS_IDLE_YIELD_ROUNDS   0
#define __builtin_ia32_pause() ((void)0) /* ws__cpu_relax: never reached with 0 spin rounds */

#include "../src/idle.c"
#include "../src/injector.c"
#include "../src/spare.c"
#include "../src/worker.c"
#include "model_frames_sources.h"

#include "model_platform.h"

#include <pthread.h>
#include <stdatomic.h>

static ws_pool pool;
static ws__worker workers[2];
static ws__worker *worker_list[2];

/* The thief's looks while the pool runs, at most MODEL_LOOKS (executions with more are dropped). */
#ifndef MODEL_LOOKS
#define MODEL_LOOKS 3
#endif
static int looks;

static ws__task *look(ws__worker *w, bool *more, const char **what)
{
    if (looks++ >= MODEL_LOOKS && !ws__pool_finished(w->pool))
        model_stop_here(); /* ends the block case's spin too (model_execution_cut) */
    return ws__find_elsewhere(w, more, what);
}

/* Whether the thief parked (and slept) in its current search. */
static bool parked;

/* The records' trim before a sleep (records.c): the pool has no records here. */
void ws__records_trim(ws_pool *p)
{
    (void)p;
    parked = true;
}

/* A search that slept and found nothing after waking ends as a spare's does (the hand-off's
 * search_end), and the loop starts the next in a frame of its own: a second park in one call of
 * ws__idle_find_work writes park's local `more` at the address its first call freed, which
 * the checker reports as an access to freed memory (tests/model_idle.c meets the same fault). */
static bool search_again(ws__worker *w)
{
    (void)w;
    return parked;
}

_Noreturn void ws__contract_violation(const char *function, const char *what)
{
    (void)function, (void)what;
    assert(0 && "contract violation");
    abort();
}

#include "model_join_mirror.h"

/* ---- the tasks ---------------------------------------------------------------------------- */

static atomic_int runs[ROUNDS + 1];

WS_TASK_1(int, leaf, int, x)
{
    (void)ws_w_;
    assert(x >= 1 && x <= ROUNDS);
    atomic_fetch_add_explicit(&runs[x], 1, memory_order_relaxed);
    return 10 * x;
}

/* Right after a WS_SPAWN of worker 0: a thief asleep with no wake-up on its way is woken by the
 * owner's next spawn (see the opening comment). */
static void check_not_stranded(void)
{
    /* The RMW acquires the sleeper's release increment: what it did before it slept (its
     * request, its announcement in the idle word) is seen below. */
    if (model_futex_sleeping() == 0)
        return;
    /* acquire: as the sleeper reads its token. */
    if (ws__idle_tokens(ws_load_acquire(&pool.idle.state)) != 0)
        return;
    ws__worker *w = &workers[0];
    /* relaxed: the sleeper's writes are ordered by the RMW above, the rest are the owner's. */
    uint64_t end_fast = ws_load_relaxed(&w->stack.f.end_fast);
    uint64_t wanted = ws_load_relaxed(&w->deque.wanted);
    assert(end_fast <= WS__FRAMES_CLOSED && "the next spawn keeps its frame private");
    assert((wanted != 0 || end_fast == 0) && "the next spawn wakes nobody");
}

static atomic_int started;

#if BLOCK
/* BLOCK=1: the typed task spawns two leaves (the first handed over at once, as the first spawn
 * of a task taken from elsewhere does; the second private), lets the thief search only then,
 * blocks at once as ws_block_begin does (ws__block_worker; no spare here) and waits until both
 * leaves ran. A thief that found the second frame private asked for it and waits (searching or
 * asleep): only the block's flush of the private frame (whose push serves the request and wakes
 * a sleeper) makes it reachable, and without it every execution blocks, below the case's floor
 * of complete executions. The waits are assumptions, as GenMC's spin-loop analysis would make
 * them (with --check-liveness, that analysis took a retried CAS of the deque's pop for a spin
 * that never ends). */
WS_TASK_0(int, root)
{
    WS_SPAWN(leaf, 1);
    WS_SPAWN(leaf, 2);
    /* release: the thief starts searching once both frames are in place. */
    atomic_store_explicit(&started, 1, memory_order_release);
    ws__block_worker(&workers[0]);
    /* relaxed: the leaves' results are read by their syncs below, which order them. */
    __VERIFIER_assume(atomic_load_explicit(&runs[1], memory_order_relaxed) == 1 &&
                      atomic_load_explicit(&runs[2], memory_order_relaxed) == 1);
    ws__blocked_leave(&workers[0]);
    int r2 = WS_SYNC(leaf);
    int r1 = WS_SYNC(leaf);
    assert(r1 == 10 && r2 == 20);
    return r1 + r2;
}
#else
WS_TASK_0(int, root)
{
    /* release: the thief starts searching once the typed task runs (its end_fast closed). */
    atomic_store_explicit(&started, 1, memory_order_release);
    int sum = 0;
    for (int i = 1; i <= ROUNDS; i++) {
        WS_SPAWN(leaf, i);
        check_not_stranded();
        int r = WS_SYNC(leaf);
        assert(r == 10 * i);
        sum += r;
    }
    return sum;
}
#endif

/* ---- the workers -------------------------------------------------------------------------- */

static root_sframe_ root_frame;

static void *owner(void *arg)
{
    (void)arg;
    ws__tls_worker = &workers[0];
    root_frame.run = root_frun_;
    frames_call(&workers[0], root_frun_, &root_frame);
    assert(root_frame.u.ws_result == 10 * ROUNDS * (ROUNDS + 1) / 2);
    return NULL;
}

/* The worker loop (ws__worker_main's), as a recursion: each search gets a frame of its own
 * (tests/model_idle.c says why). */
static void work(ws__worker *w)
{
    const char *what;
    parked = false;
    ws__task *t = ws__idle_find_work(w, look, &what);
    if (t == NULL && ws__pool_finished(w->pool))
        return;
    if (t == NULL) {
        work(w);
        return;
    }
    ws__task_run_taken(w, t, what);
    work(w);
}

static void *thief(void *arg)
{
    ws__worker *w = arg;
    ws__tls_worker = w;
    /* acquire: pairs with the release at the typed task's start. */
    while (atomic_load_explicit(&started, memory_order_acquire) == 0)
        ;
    work(w);
    return NULL;
}

int main(void)
{
    pool.nworkers = 2;
    pool.workers = worker_list;
    ws__injector_init(&pool.urgent);
    ws__injector_init(&pool.injector);
    for (int i = 0; i < 2; i++) {
        ws__worker *w = &workers[i];
        w->pool = &pool;
        w->id = (unsigned)i;
        w->rng = 1 + (uint64_t)i;
        int err = ws__wdeque_init(&w->deque, 4, 2);
        assert(err == 0);
        ws__frames_init(w);
        if (i == 1)
            w->should_leave = search_again;
        w->deque.ask_also = &w->stack.f.end_fast;
        worker_list[i] = w;
    }
    pthread_t o, t;
    pthread_create(&o, NULL, owner, NULL);
    pthread_create(&t, NULL, thief, &workers[1]);
    pthread_join(o, NULL);
    /* pool.c's teardown: exit (seq_cst, against ws__pool_finished), then every sleeper. */
    ws_store_seq_cst(&pool.exit, 1);
    ws__idle_wake_all(&pool);
    pthread_join(t, NULL);
    for (int x = 1; x <= ROUNDS; x++)
        assert(atomic_load_explicit(&runs[x], memory_order_relaxed) == 1);
#if BLOCK
    for (int i = 0; i < 2; i++) /* the thief's task stack too: it ran a leaf */
        frames_destroy(&workers[i]);
#endif
    return 0;
}
