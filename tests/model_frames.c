/* model_frames.c: the typed tasks' task stack (src/frames.c, included as it is, with the inline
 * spawn and sync of include/worksteal.h) on the real split deque (src/deque.c), under the GenMC
 * model checker (RC11), in every execution it allows.
 *
 *   genmc --rc11 --disable-estimation -- -I src -I include [-DSCENARIO=n] [-DWEAKEN=n]
 *         tests/model_frames.c
 *
 * Worker 0 runs a typed task (frames.c's frames_call, as for a task it took) that spawns two
 * leaves with WS_SPAWN and syncs them with WS_SYNC; worker 1, a thief, steals from worker 0's
 * deque (ws_sdeque_steal, which asks when nothing is public) and runs what it takes as the
 * worker loop does: the record's function (frames.c's run_handed, which runs the frame in place
 * on the thief's own task stack), then the record's state DONE. A leaf checks its argument (a
 * race on the frame or a wrong value is an error) and counts its run.
 *   SCENARIO 1  the thief makes two steal attempts while the owner spawns.
 *   SCENARIO 2  the owner pushes a ws_spawn of its own after its two WS_SPAWNs (the flush: the
 *               private frame goes first, in spawn order); the thief makes one attempt.
 * Checked: each leaf runs exactly once with its argument, and each sync gets its leaf's result;
 * once the thief is done and before the owner syncs, no request is lost: wanted = 1 implies
 * that the deque's limit is 0 and end_fast closed (the owner's next push or stack spawn serves
 * it).
 *
 * Real: frames.c whole (the slow spawn, the hand-over, the flush, the reopen, the slow sync,
 * frames_call and run_handed), the header's ws__frames_push and ws__frames_pop with the type
 * check, the deque. Stubbed: allocation, the clock and the yield (tests/model_platform.h), the
 * wake-up of idle workers (a no-op: model_idle.c checks it), a contract violation (an assertion).
 * Mirrored, since join.c needs the rest of the scheduler: ws_spawn and ws_sync on a worker, as
 * join.c makes them (the record's init, the fast push or push_rare's flush, slow push and depth
 * cap; the pop that takes the record back and runs it, or the wait for DONE with acquire), and
 * the worker loop's end of a task (DONE with release, as ws__task_run_taken).
 *
 * Weakened variants (tests/model.cmake runs each and expects it to fail):
 *   WEAKEN=1  the owner's reopening CAS of end_fast (WS_FRAMES_REOPEN) relaxed: a request whose
 *             0 it overwrote is not seen (scenario 1);
 *   WEAKEN=2  the thief's exchange of end_fast (WS_SDEQUE_ASK_ALSO) relaxed (scenario 1).
 * Those are the orders the task stack adds. A frame handed over is published by the deque's own
 * orders (its arguments are written before the record's push): WEAKEN=3 (the share's release
 * relaxed) and WEAKEN=4 (the thief's acquire of ts relaxed) pass here, since the release store
 * of bottom after the push and the thief's acquire of bottom order the same writes in these
 * executions; tests/model_sdeque.c has the cases where each of those is needed.
 */
#ifndef SCENARIO
#define SCENARIO 1
#endif
#ifndef WEAKEN
#define WEAKEN 0
#endif
#if WEAKEN == 1
#define WS_FRAMES_REOPEN(p, e, v) ws_cas_relaxed((p), (e), (v))
#elif WEAKEN == 2
#define WS_SDEQUE_ASK_ALSO(p) ws_exchange_relaxed((p), 0)
#elif WEAKEN == 3
#define WS_SDEQUE_SHARE(p, v) ws_fetch_add_relaxed((p), (v))
#elif WEAKEN == 4
#define WS_SDEQUE_THIEF_TS(p) ws_load_relaxed(p)
#endif
#define WS_FRAMES_PER_SEGMENT 4

#include "model_frames_sources.h"

#include "model_platform.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

static ws_pool pool;
static ws__worker workers[2];
_Thread_local ws__worker *ws__tls_worker;

void ws__idle_notify(ws_pool *p)
{
    (void)p;
}

_Noreturn void ws__contract_violation(const char *function, const char *what)
{
    (void)function, (void)what;
    assert(0 && "contract violation");
    abort();
}

void ws__typed_run(ws_pool *p, ws_fn fn, void *arg, const char *what)
{
    (void)p, (void)what;
    fn(arg);
}

#include "model_join_mirror.h"

/* ---- the tasks ---------------------------------------------------------------------------- */

static atomic_int runs[3];

WS_TASK_1(int, leaf, int, x)
{
    (void)ws_w_;
    assert(x >= 1 && x <= 2);
    atomic_fetch_add_explicit(&runs[x], 1, memory_order_relaxed);
    return 10 * x;
}

static ws_task own; /* scenario 2's ws_spawn */
static atomic_int own_runs;
static atomic_int thief_done;

static void own_fn(void *arg)
{
    (void)arg;
    atomic_fetch_add_explicit(&own_runs, 1, memory_order_relaxed);
}

/* No request lost: checked once the thief is done (it asks no more) and before the syncs. */
static void check_requests(void)
{
    /* acquire: pairs with the thief's release at its end. */
    while (atomic_load_explicit(&thief_done, memory_order_acquire) == 0)
        ;
    ws__worker *w = &workers[0];
    /* relaxed: the thief is done; the owner's own writes. */
    if (ws_load_relaxed(&w->deque.wanted) != 0) {
        assert(ws_load_relaxed(&w->deque.limit) == 0);
        assert(ws_load_relaxed(&w->stack.f.end_fast) <= WS__FRAMES_CLOSED);
    }
}

WS_TASK_0(int, root)
{
    WS_SPAWN(leaf, 1);
    WS_SPAWN(leaf, 2);
    if (SCENARIO == 2)
        ws_spawn(&own, own_fn, NULL);
    check_requests();
    if (SCENARIO == 2)
        ws_sync(&own);
    int b = WS_SYNC(leaf);
    int a = WS_SYNC(leaf);
    assert(a == 10 && b == 20);
    return a + b;
}

/* ---- the workers -------------------------------------------------------------------------- */

static root_sframe_ root_frame;

static void *owner(void *arg)
{
    (void)arg;
    ws__tls_worker = &workers[0];
    root_frame.run = root_frun_;
    frames_call(&workers[0], root_frun_, &root_frame);
    assert(root_frame.u.ws_result == 30);
    return NULL;
}

static void *thief(void *arg)
{
    (void)arg;
    ws__tls_worker = &workers[1];
    for (int i = 0; i < (SCENARIO == 1 ? 2 : 1); i++) {
        ws__task *t = ws_sdeque_steal(&workers[0].deque);
        if (t == NULL)
            continue;
        t->fn(t->arg);
        /* release: the run (the frame's result) before DONE; pairs with ws_sync's acquire. */
        ws_store_release(&t->state, WS_TASK_DONE);
    }
    atomic_store_explicit(&thief_done, 1, memory_order_release);
    return NULL;
}

int main(void)
{
    pool.nworkers = 2;
    for (int i = 0; i < 2; i++) {
        ws__worker *w = &workers[i];
        w->pool = &pool;
        w->id = (unsigned)i;
        int err = ws__wdeque_init(&w->deque, 4, 1);
        assert(err == 0);
        ws__frames_init(w);
        w->deque.ask_also = &w->stack.f.end_fast;
    }
    pthread_t o, t;
    pthread_create(&o, NULL, owner, NULL);
    pthread_create(&t, NULL, thief, NULL);
    pthread_join(o, NULL);
    pthread_join(t, NULL);
    for (int x = 1; x <= 2; x++)
        assert(atomic_load_explicit(&runs[x], memory_order_relaxed) == 1);
    assert(SCENARIO != 2 || atomic_load_explicit(&own_runs, memory_order_relaxed) == 1);
    return 0;
}
