/* model_wait_rule.c: a wait runs only work that it waits for anyway (docs/scheduler.md, "What a
 * wait may run"): a leapfrogger's help, on the real leapfrog (src/wait.c), the real bounded
 * steal of the split deque (src/deque.c) and the real put-back (src/internal.h), under the GenMC
 * model checker (RC11).
 *
 *   genmc --rc11 --disable-estimation -- -I src -I include -DSCENARIO=n [-DWEAKEN=n] [-DREACH=n]
 *         tests/model_wait_rule.c
 *
 * Two workers of one pool. The runner takes a waited task and runs it as the worker loop runs
 * what it took (worker.c's ws__task_run_taken: raises its floor, marks the task taken with its
 * id, runs it, exchanges DONE, restores its floor). The helper waits for that task as
 * ws__task_wait does: it reads the task's state with acquire and calls the real ws__leapfrog
 * (ROUNDS rounds, 2; its first look sees the task taken or done: a look before the mark finds no
 * runner and only loops), and runs whatever the leapfrog returns with ws__task_run_taken, after
 * checking that it is work the wait waits for.
 *   SCENARIO=1  the runner finishes during the leapfrog. The runner's task X pushes a waited
 *               child c and syncs it (join.c's pop, then the child run inline, or, if the helper
 *               took it, a wait for its DONE); X completes; the runner's continuation pushes
 *               another waited item u, not X's work, and makes it public (as a worker does
 *               before it blocks, ws__sdeque_publish_all). Checked: the helper's leapfrog
 *               returns c or nothing, never u; u stays in the runner's deque or is handed to the
 *               pool's injector, and c and u run exactly once (main runs what is left, the
 *               deque's and then the injector's).
 *   SCENARIO=2  free items. X first pushes a job record h (a free item: ws__deque_item tags
 *               it), then c, as in 1. Checked: the helper never takes h; h runs once, from
 *               where X left it.
 *   SCENARIO=3  the put-back. The runner's deque holds an outer waited item o, its last public
 *               item at index i - 1, when it starts a task T (floor i). T looks for work of its
 *               own as a wait does: it pops its newest item only if that is free
 *               (ws__wdeque_may_look), which o is not; a pop of o would take the last public
 *               item, move top to i, and the put-back (ws__wdeque_put_back) would land o at i,
 *               T's floor. The helper waits for T. Checked: the helper's leapfrog never returns
 *               o; o runs once.
 * Each scenario keeps to the mechanism it checks: with h at the top in 2, the helper cannot reach
 * u (the steal takes the top or nothing), and nothing is pushed after T in 3.
 *
 * Real: the leapfrog (ws__leapfrog, leapfrog_onto, runner_worker), worker.c's
 * ws__task_run_taken, ws__run_child and ws__steal_bounded, the split deque (its bounded steal with
 * its look at the awaited state), the pushes and pops of internal.h (ws__wdeque_push_size with
 * its tag, ws__wdeque_may_look, ws__wdeque_pop_at, ws__wdeque_put_back),
 * the floor's raise and restore, the injector, idle.c's notify after a push. Stubbed
 * (tests/model_platform.h): the futex (no wait here parks), allocation. Mirrored: X's sync
 * (join.c's join_finish: a pop, then ws__run_child, or ws__task_wait, here a wait for DONE with
 * acquire rather than leapfrogging: the helper's deque stays empty), and the helper's wait loop
 * (ws__task_wait without the backoff and the park, which only repeat the look).
 *
 * Each weakening removes one mechanism through a hook of the sources; the model must then fail
 * in the scenario that needs it (tests/model.cmake):
 *   WEAKEN=1  no look at the awaited state in the bounded steal, between its acquires and its
 *             claim (deque.c, WS_SDEQUE_BOUND_LOOK 0): in 1, the helper checks that X runs, the
 *             runner finishes X, restores its floor and pushes u at an index at or above X's
 *             floor, and the helper's steal takes u.
 *   WEAKEN=2  the bounded steal takes free items (deque.c, WS_SDEQUE_STEAL_LEAVES_FREE 0): in 2,
 *             the helper takes h.
 *   WEAKEN=3  a wait pops a waited newest item to look at it (internal.h,
 *             WS_WAIT_LOOKS_AT_FREE_ONLY 0): in 3, o is put back at index i, public (the empty
 *             deque's reserve) and at T's floor, and the helper takes it.
 * REACH=n shows that the real code takes the path a mechanism guards (each case must fail):
 *   REACH=1  in some execution of 1 the helper's leapfrog takes c.
 * Each weakening passes in the other two scenarios. tests/model.cmake runs the three scenarios
 * (6,678, 7,436 and 7 complete executions: the helper's asks, which the runner's takes answer,
 * multiply the first two), the weakenings and the REACH case: under 20 s each on an idle machine.
 */
#include <assert.h>
#include <genmc.h>

#ifndef SCENARIO
#define SCENARIO 1
#endif
#ifndef WEAKEN
#define WEAKEN 0
#endif
#ifndef REACH
#define REACH 0
#endif
#if WEAKEN == 1
#define WS_SDEQUE_BOUND_LOOK 0
#elif WEAKEN == 2
#define WS_SDEQUE_STEAL_LEAVES_FREE 0
#elif WEAKEN == 3
#define WS_WAIT_LOOKS_AT_FREE_ONLY 0
#endif
#define __builtin_ia32_pause() ((void)0) /* ws__cpu_relax (idle.c): never reached here */

#include "../src/deque.c"
#include "../src/idle.c"
#include "../src/injector.c"
#include "../src/wait.c"
#include "../src/worker.c"

#include "model_platform.h"

#ifndef ROUNDS
#define ROUNDS 2 /* the helper's looks at the awaited task */
#endif

enum { RUNNER, HELPER, NWORKERS };
/* The task records: X (T in scenario 3) is the awaited task, the others are queued items. */
enum { X, C, U, H, O, NTASKS };
enum { T = X };

#include "model_workers.h"

static ws__task tasks[NTASKS];
static atomic_int runs[NTASKS];

static void count_run(void *arg)
{
    /* relaxed: a count checked after every thread is joined. */
    atomic_fetch_add_explicit((atomic_int *)arg, 1, memory_order_relaxed);
}

/* Worker w pushes task i as a fork does (the tag, the fast or the slow push, the notify). */
static void push(ws__worker *w, int i)
{
    int64_t before = ws__wdeque_push_size(w, &tasks[i]);
    assert(before >= 0); /* the deque has room */
}

/* ---- the runner --------------------------------------------------------------------------- */

#if SCENARIO != 3
/* X's sync of c, as join.c's join_finish: pop it back and run it, or wait for the thief. */
static void sync_child(ws__worker *w)
{
    ws__task *p = ws__wdeque_pop(&w->deque);
    if (p == &tasks[C]) {
        ws__run_child(w, p, "join");
        return;
    }
    assert(p == NULL); /* c was stolen: nothing above it (h, if pushed, lies below) */
    /* acquire: pairs with the release half of the completion's exchange (worker.c). */
    __VERIFIER_assume(ws_load_acquire(&tasks[C].state) == WS_TASK_DONE);
}

static void x_body(void *arg)
{
    (void)arg;
    ws__worker *w = &workers[RUNNER];
    if (SCENARIO == 2)
        push(w, H);
    push(w, C);
    sync_child(w);
}
#else
/* T looks for work of its own as a wait does (a group wait for its jobs, a get's sweep): only
 * at a free newest item, which o, an outer frame's waited item, is not. */
static void t_body(void *arg)
{
    (void)arg;
    ws__worker *w = &workers[RUNNER];
    if (!ws__wdeque_may_look(w))
        return;
    int64_t at;
    ws__task *p = ws__wdeque_pop_at(w, &at);
    assert(p == &tasks[O]); /* below the helper's floor: only this worker takes it */
    ws__wdeque_put_back(w, p, at);
}
#endif

static void *runner(void *arg)
{
    ws__worker *w = arg;
    ws__task_run_taken(w, &tasks[X], "stolen");
    if (SCENARIO != 3) {
        push(w, U); /* the runner's next work */
        ws__wdeque_publish_all(&w->deque);
    }
    return NULL;
}

/* ---- the helper --------------------------------------------------------------------------- */

static void *helper(void *arg)
{
    ws__worker *w = arg;
    for (int round = 0; round < ROUNDS; round++) {
        /* acquire: as ws__task_wait's look (pairs with the completion's exchange). */
        uint32_t s = ws_load_acquire(&tasks[X].state);
        if (round == 0)
            __VERIFIER_assume(s != WS_TASK_PENDING);
        if (s == WS_TASK_DONE)
            break;
        bool only_free;
        ws__task *t = ws__leapfrog(w, s >> WS_TASK_THIEF_SHIFT, &tasks[X].state, s, &only_free);
        if (t == NULL)
            continue;
        assert(t != &tasks[O] && "a wait ran an outer task put back at its floor");
        assert(t != &tasks[H] && "a wait's help took a free item");
        assert(t != &tasks[U] && "a wait ran its runner's next work");
        assert(t == &tasks[C]);
        assert(REACH != 1 && "reached: a leapfrog took the child");
        ws__task_run_taken(w, t, "leapfrog");
    }
    return NULL;
}

/* ---- the pool ----------------------------------------------------------------------------- */

/* After the joins: whoever takes the items left runs them, from the deque, then the injector.
 * Loops bounded by the number of tasks (GenMC 0.11 took the unbounded pop loop, whose pops now
 * begin with a look at a request, for a spin loop and never finished). */
static void run_left(ws__worker *w)
{
    ws__task *t;
    for (int i = 0; i < NTASKS && (t = ws__wdeque_pop(&w->deque)) != NULL; i++)
        t->fn(t->arg);
    for (int i = 0; i < NTASKS && (t = ws__injector_take(&pool.injector)) != NULL; i++)
        t->fn(t->arg);
}

static int run_count(int i)
{
    return atomic_load_explicit(&runs[i], memory_order_relaxed);
}

int main(void)
{
    model_workers_init();
    for (int i = 0; i < NTASKS; i++)
        ws__task_init(&tasks[i], count_run, &runs[i]);
    /* relaxed: before the threads start. h is a job record (free); the others are waited. */
    ws_store_relaxed(&tasks[H].state, WS_KIND_DETACHED << WS_TASK_KIND_SHIFT);
#if SCENARIO == 3
    tasks[T].fn = t_body;
    push(&workers[RUNNER], O); /* onto the empty deque: public at once (the reserve) */
#else
    tasks[X].fn = x_body;
#endif
    pthread_t r, g;
    pthread_create(&r, NULL, runner, &workers[RUNNER]);
    pthread_create(&g, NULL, helper, &workers[HELPER]);
    pthread_join(r, NULL);
    pthread_join(g, NULL);
    run_left(&workers[RUNNER]);
    assert(ws_load_relaxed(&tasks[X].state) == WS_TASK_DONE);
    if (SCENARIO == 3) {
        assert(run_count(O) == 1);
    } else {
        assert(run_count(C) == 1 && run_count(U) == 1);
        assert(run_count(H) == (SCENARIO == 2));
    }
    for (int i = 0; i < NWORKERS; i++)
        ws__wdeque_destroy(&workers[i].deque);
    return 0;
}
