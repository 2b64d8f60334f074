/* model_pool_run.c: a worker that calls ws_pool_run on another pool blocks without stranding the
 * work it spawned (src/pool.c's ws_pool_run: ws__block_worker of src/spare.c, which makes the
 * split deque public with ws__sdeque_publish_all, notifies the idle workers and summons a
 * spare), under the GenMC model checker (RC11).
 *
 *   genmc --rc11 --disable-estimation -- -I src -I include [-DTHIEF=1] [-DSKIP_PUBLISH]
 *         [-DWEAKEN=n] tests/model_pool_run.c
 *
 * Real: the deque (src/deque.c and deque.h's inline functions), ws__block_worker,
 * ws__blocked_enter, wake_spare and spare_slot (src/spare.c), ws__idle_notify (src/idle.c, with
 * src/injector.c that it looks at), the pool and worker records of src/internal.h. Stubbed: the
 * futex (tests/model_platform.h, the kernel's semantics), allocation; the spare's thread runs
 * the model's thief below in place of the worker loop (worker.c, which this path does not
 * change), after the wait of spare.c's spare_main (mirrored: spare_main calls the worker loop).
 *
 * Pool A has one worker, the owner, and one spare, started before and retired (it sleeps on its
 * word, as spare_main does). The owner runs a task that forks NITEMS tasks as join.c does (the
 * fast path when the deque's one comparison allows, else the slow push and an idle notify when
 * the deque was empty or a request was served), then calls ws_pool_run on pool B: after the
 * job's injection into B (not modelled: B's side is model_idle.c's), it blocks through
 * ws__block_worker and waits for B's job, which waits for the forked tasks; it runs nothing
 * meanwhile. The spare, woken for the blocked owner, steals from the owner's deque: it must
 * take every forked task, each exactly once (a task it cannot reach is a hang: B's job waits
 * for it). THIEF=1 adds another worker of A that steals once during the forks (and asks, so
 * that a slow push shares), so the spare's steals race a thief.
 *
 * Weakened variants (each must fail; tests/model.cmake):
 *   SKIP_PUBLISH  the path as ws_pool_run had it before: ws__blocked_enter without
 *                 ws__block_worker's publish_all (the forked tasks stay private);
 *   WEAKEN=1      the spare's wait for its word (spare_main) reads it relaxed, not acquire:
 *                 the wake-up no longer hands it the publication;
 *   WEAKEN=2      the owner's releases that publish its tasks to a thief relaxed: the share
 *                 (WS_SDEQUE_SHARE) and the stores of bottom (WS_SDEQUE_PUBLISH_BOTTOM);
 *   WEAKEN=3      their partners, the thief's acquire loads of ts (WS_SDEQUE_THIEF_TS) and of
 *                 bottom (WS_SDEQUE_THIEF_BOTTOM), relaxed.
 * Each pair is weakened whole because either half publishes the tasks: with only the share (or
 * only bottom's store) relaxed, the other one still hands the thief the task's record, and the
 * model passes (checked; the split deque's models weaken each one where it is the only one).
 */
#include <assert.h>
#include <genmc.h>

#ifndef WEAKEN
#define WEAKEN 0
#endif
#if WEAKEN == 2
#define WS_SDEQUE_SHARE(p, v)          ws_fetch_add_relaxed((p), (v))
#define WS_SDEQUE_PUBLISH_BOTTOM(p, v) ws_store_relaxed((p), (v))
#elif WEAKEN == 3
#define WS_SDEQUE_THIEF_TS(p)     ws_load_relaxed(p)
#define WS_SDEQUE_THIEF_BOTTOM(p) ws_load_relaxed(p)
#endif
/* spare_main's wait: acquire, pairs with the release store in wake_spare. */
#if WEAKEN == 1
#define SPARE_WAIT_READ(p) ws_load_relaxed(p)
#else
#define SPARE_WAIT_READ(p) ws_load_acquire(p)
#endif
#define __builtin_ia32_pause() ((void)0) /* ws__cpu_relax (idle.c): never reached here */

#include "../src/deque.c"
#include "../src/idle.c"
#include "../src/injector.c"
#include "../src/spare.c"

#include "model_platform.h"

#ifndef THIEF
#define THIEF 0
#endif
#define NITEMS (2 + THIEF) /* one more than the reserve, which is public at once */

/* worker.c's: read by ws_block_begin and ws_block_end, which this model does not call. */
_Thread_local ws__worker *ws__tls_worker;

static ws_pool pool;
static ws__worker owner_rec, thief_rec, spare_rec;
static ws__worker *worker_list[3];

static ws__task items[NITEMS];
static int payload[NITEMS]; /* plain: written before the fork, read by the runner */
static atomic_int runs[NITEMS];

static void item_fn(void *arg)
{
    (void)arg;
}

static void run(ws__task *t)
{
    assert(t != NULL && t->fn == item_fn);
    int i = (int)(t - items);
    assert(t->arg == &payload[i] && payload[i] == 1 + i);
    /* relaxed: a count checked after every thread is joined. */
    int before = atomic_fetch_add_explicit(&runs[i], 1, memory_order_relaxed);
    assert(before == 0);
}

/* ---- the owner ---------------------------------------------------------------------------- */

/* The slow push's out-parameter, not a block-scoped local (the checker mistakes a reused stack
 * slot for freed memory). */
static bool published;

/* A fork as join.c makes it (push_task, push_rare); a refused push runs the task at once. */
static void fork_task(ws__worker *w, int i)
{
    payload[i] = 1 + i;
    ws__task_init(&items[i], item_fn, &payload[i]);
    if (ws__wdeque_fits(&w->deque)) {
        ws__wdeque_push_fitting(&w->deque, &items[i]);
        return;
    }
    int64_t before = ws__wdeque_push_slow(&w->deque, &items[i], &published);
    if (before < 0)
        run(&items[i]);
    if (before == 0 || published)
        ws__idle_notify(w->pool);
}

static void *owner(void *arg)
{
    ws__worker *w = arg;
    for (int i = 0; i < NITEMS; i++) {
        fork_task(w, i);
    }
    /* ws_pool_run(B, ...) from a worker of A: B's job is queued, then the worker blocks. */
#ifdef SKIP_PUBLISH
    ws__blocked_enter(w);
#else
    ws__block_worker(w);
#endif
    return NULL; /* it waits for B's job, and runs nothing meanwhile */
}

/* ---- thieves ------------------------------------------------------------------------------ */

static void *thief(void *arg)
{
    (void)arg;
    ws__task *t = ws__wdeque_steal(&owner_rec.deque);
    if (t != NULL)
        run(t);
    return NULL;
}

/* The retired spare: spare_main's wait for its word, then, in place of the worker loop, steals
 * from the blocked owner: one per forked task, and one more for a steal lost to the thief (a
 * failed CAS means that the thief took a task). */
static void *spare(void *arg)
{
    ws__worker *w = arg;
    while (SPARE_WAIT_READ(&w->spare_state) == 0)
        ws__futex_wait(&w->spare_state, 0);
    for (int i = 0; i < NITEMS + THIEF; i++) {
        ws__task *t = ws__wdeque_steal(&owner_rec.deque);
        if (t != NULL)
            run(t);
    }
    return NULL;
}

/* ---- the pool ----------------------------------------------------------------------------- */

static void worker_init(ws__worker *w, unsigned id)
{
    w->pool = &pool;
    w->id = id;
    /* the reserve of worker.c's ws__worker_new: the other threads of the pool */
    int err = ws__wdeque_init(&w->deque, 2, pool.nworkers + pool.nspares - 1);
    assert(err == 0);
    worker_list[id] = w;
}

int main(void)
{
    pool.nworkers = 1 + THIEF;
    pool.nspares = 1;
    pool.workers = worker_list;
    pthread_mutex_init(&pool.spare_lock, NULL);
    ws__injector_init(&pool.urgent);
    ws__injector_init(&pool.injector);
    worker_init(&owner_rec, 0);
    if (THIEF)
        worker_init(&thief_rec, 1);
    worker_init(&spare_rec, pool.nworkers);
    spare_rec.spare = true;
    spare_rec.started = true; /* started before, now retired: spare_state 0 */
    spare_rec.should_leave = spare_should_retire;
    pthread_t o, t, s;
    pthread_create(&s, NULL, spare, &spare_rec);
    if (THIEF)
        pthread_create(&t, NULL, thief, &thief_rec);
    pthread_create(&o, NULL, owner, &owner_rec);
    pthread_join(o, NULL);
    if (THIEF)
        pthread_join(t, NULL);
    pthread_join(s, NULL);
    for (int i = 0; i < NITEMS; i++)
        assert(atomic_load_explicit(&runs[i], memory_order_relaxed) == 1);
    return 0;
}
