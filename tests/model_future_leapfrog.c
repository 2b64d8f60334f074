/* model_future_leapfrog.c: a getter of a future that another worker claimed where it sat helps
 * by leapfrogging that worker, and takes only work that the future's run pushed: the real get
 * (src/future.c), the real leapfrog (src/wait.c) and the real deque, under the GenMC model
 * checker (RC11).
 *
 *   genmc --rc11 --disable-estimation --disable-spin-assume -- -I src -I include
 *         tests/model_future_leapfrog.c
 *
 * A pool of three workers: the runner R, the getter G, and a third that stays idle (the deques'
 * reserve is the other threads of the pool, 2, as worker.c's ws__worker_new makes it). Before
 * the threads start, G submits a future f with ws_future_submit (onto its empty deque: public at
 * once), and R's current task has pushed a waited child o (public, at or above R's floor). Then:
 *   R  gets f with ws_future_get: f is not its own, so the get raises R's floor above o and
 *      claims f where it sits (future.c's run_if_pending), runs it and finishes it;
 *   G  gets f with ws_future_get once R has claimed it (G's first look, read relaxed so that it
 *      synchronizes with nothing, is assumed to see the claim): the get finds f taken by R and
 *      leapfrogs R with R's floor, which only the claim's release half hands it, parks on f's
 *      word when there is nothing to take (the idle ladder cut to that last step), and returns
 *      once f is DONE.
 * Checked: G's help never runs o, an outer task of R's that G's get does not wait for (a floor
 * read from before the claim, below o, lets the bounded steal take it); f and o run exactly
 * once (main runs what is left in R's deque, and lets go of f's slot in G's deque, if G's get
 * did not sweep it, as G's worker loop would: f is claimed, so the take only drops the queue's
 * reference). With o on top, the bounded steal can take nothing else (it takes the top or
 * nothing), so f pushes nothing: work of f's own above o would never be reached.
 *
 * Real: ws_future_submit, ws_future_get and what they call (run_if_pending, the claim of
 * src/future_state.h, help_until_done, the finish and its wake, mark_dead, drop_dead),
 * take_queued, join.c's push, the leapfrog and the bounded steal, worker.c's
 * ws__task_run_taken, the wait's steps (wait.c, idle.c's backoff and park, spare.c's blocked
 * count, with no spares), the deque, the records' local list. Stubbed (tests/model_platform.h):
 * the futex, allocation, the clock; profile.c's strand marks (no task is profiled: they do
 * nothing). The idle ladder is cut to its last step (WS_IDLE_SPIN_ROUNDS and
 * WS_IDLE_YIELD_ROUNDS 0): spinning and yielding only repeat the look that a park ends.
 * --disable-spin-assume: GenMC's spin-loop analysis does not finish on these sources (the loops
 * here are bounded: every wait ends in a park).
 *
 * tests/model.cmake runs it: 33 complete executions, about 2 s of CPU. It fails with the
 * claim's compare-and-swap relaxed (fut-claim-relaxed in tests/mutants/mutants.txt): G reads
 * R's floor from before the raise and runs o.
 */
#include <assert.h>
#include <errno.h>
#include <genmc.h>

#define ECANCELED 125 /* future.c's name that the checker's libc lacks (Linux's value) */

#define WS_BUILDING_LIBRARY    /* as the library is built (CMakeLists.txt): the header's own */
#define WS_IDLE_SPIN_ROUNDS    0
#define WS_IDLE_YIELD_ROUNDS   0
#define __builtin_ia32_pause() ((void)0) /* ws__cpu_relax (idle.c): never reached here */

#include "../src/deque.c"
/* future.c and worker.c each have a static task_escaped. */
#define task_escaped future_task_escaped
#include "../src/future.c"
#undef task_escaped
#include "../src/idle.c"
#include "../src/injector.c"
#include "../src/join.c"
#include "../src/spare.c"
#include "../src/wait.c"
#include "../src/worker.c"

#include "model_platform.h"

/* profile.c's strand marks around a wait: no task is profiled here, and profile.c then does
 * nothing (its frame pointer is NULL). */
void ws__prof_strand_end(void)
{
}
void ws__prof_strand_begin(void)
{
}

enum { RUNNER, GETTER, IDLE, NWORKERS };
enum { O, NTASKS };

#include "model_workers.h"

static ws__task tasks[NTASKS];
static atomic_int runs[NTASKS], f_runs;
static ws_future *handle; /* f: written by main before the threads start */
static ws__future record; /* the one record G's list holds for the submit */
static int f_result = 42; /* what f returns the address of */

/* o's function: R's outer task, which no get of f waits for. */
static void o_fn(void *arg)
{
    assert(ws__tls_worker != &workers[GETTER] && "a get's help ran an outer task");
    /* relaxed: a count checked after every thread is joined. */
    atomic_fetch_add_explicit((atomic_int *)arg, 1, memory_order_relaxed);
}

/* f's function. */
static void *f_fn(void *arg)
{
    atomic_fetch_add_explicit(&f_runs, 1, memory_order_relaxed); /* relaxed: as o_fn's */
    return arg;
}

static void *runner(void *arg)
{
    ws__tls_worker = arg;
    void *r = ws_future_get(handle);
    assert(r == &f_result);
    return NULL;
}

static void *getter(void *arg)
{
    ws__tls_worker = arg;
    /* relaxed: only picks the executions in which R claimed f first, ordering nothing. */
    __VERIFIER_assume(ws_load_relaxed(&((ws__future *)(void *)handle)->task.state) &
                      WS_FUTURE_TAKEN);
    void *r = ws_future_get(handle);
    assert(r == &f_result);
    return NULL;
}

int main(void)
{
    model_workers_init();
    for (int i = 0; i < NTASKS; i++)
        ws__task_init(&tasks[i], o_fn, &runs[i]);
    /* G submits f, from the record its list holds (records.c's local list). */
    ws__record_free_local(&workers[GETTER], (ws__job *)(void *)&record);
    ws__tls_worker = &workers[GETTER];
    int err = ws_future_submit(&handle, NULL, f_fn, &f_result);
    assert(err == 0 && handle == (ws_future *)(void *)&record);
    /* R's current task pushed o onto R's empty deque: public at once (the reserve). */
    ws__tls_worker = &workers[RUNNER];
    int64_t before = ws__wdeque_push_size(&workers[RUNNER], &tasks[O]);
    assert(before >= 0);
    ws__tls_worker = NULL;

    pthread_t r, g;
    pthread_create(&r, NULL, runner, &workers[RUNNER]);
    pthread_create(&g, NULL, getter, &workers[GETTER]);
    pthread_join(r, NULL);
    pthread_join(g, NULL);

    /* What is left: o in R's deque (unless G took it), f's slot in G's (unless swept). */
    ws__task *t;
    ws__tls_worker = &workers[RUNNER];
    for (int i = 0; i < NTASKS && (t = ws__wdeque_pop(&workers[RUNNER].deque)) != NULL; i++)
        ws__task_run_taken(&workers[RUNNER], t, "pop");
    ws__tls_worker = &workers[GETTER];
    t = ws__wdeque_pop(&workers[GETTER].deque);
    if (t != NULL) {
        assert(t == &record.task);
        ws__task_run_taken(&workers[GETTER], t, "pop"); /* claimed: only lets go of the slot */
    }
    ws__tls_worker = NULL;
    assert(atomic_load_explicit(&f_runs, memory_order_relaxed) == 1);
    assert(atomic_load_explicit(&runs[O], memory_order_relaxed) == 1);
    return 0;
}
