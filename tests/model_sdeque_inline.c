/* model_sdeque_inline.c: the inline fork-join of include/worksteal.h (its inline functions, as
 * they are) on the split deque (src/deque.c, as it is) under the GenMC model checker, in every
 * execution RC11 allows.
 *
 *   genmc --rc11 --disable-estimation -- -I src -I include [-DSCENARIO=n] [-DWEAKEN=1]
 *         tests/model_sdeque_inline.c
 *
 * The owner forks with the header's ws__fast_push (the deque's one comparison, the record's
 * fields, the plain push), which records the bottom just after its push; when it declines, the
 * owner pushes as join.c's push_rare does (the slow push, which may grow the array and share on
 * a request, then the depth cap's update of ws__worker_update_depth_limit). It syncs with the
 * header's ws__sync_take (ws__fast_owns: the recorded bottom is the deque's and its index
 * private; then the plain take), else as the library does: it pops, and if a thief took the
 * task, waits for the thief's completion. Two thieves steal once each (scenario 3: one thief,
 * twice), and run what they take as worker.c does: they mark the record's state (a relaxed RMW),
 * read fn and arg, run it, and complete it (an acq_rel exchange to DONE). SCENARIO 1  reserve 0, an
 * array of 2 slots: the owner forks X, Y, Z (the array grows under the inline path), syncs Z, Y, X.
 *   SCENARIO 2  reserve 2, an array of 2 slots that counts as big: the owner forks X onto the
 *               empty deque (the guard goes 2 above it) and Y (into the reserve, public at
 *               once), syncs Y, X, trims (the array shrinks to 1 slot, as before a worker
 *               sleeps), forks Z into the small array, and syncs it.
 *   SCENARIO 3  reserve 2, one thief: the owner forks W onto the empty deque and X (into the
 *               reserve), syncs X and W, then forks X again in the same record (a frame reused
 *               once its thief completed it, after the thief's RMWs on its state) and syncs it.
 * The owner has been 4 deep before (worker.c's max_depth), so that its fast path is open up to
 * that depth: a worker's first pushes at each new depth take the slow path.
 * After all threads: every fork ran exactly once (its record's function, with its argument),
 * and a thief's request is not lost (wanted = 1 implies limit = 0).
 *
 * WEAKEN=1 replaces ws__fast_owns by a test of the recorded bottom alone (no guard test), so
 * that a task pushed into a reserve is taken back with plain accesses too: scenarios 2 and 3
 * must then fail (a race on the record, a task run twice), and tests/model.cmake checks that
 * they do. (Scenario 1's thieves steal too little to reach a shared task the owner took back.)
 */
#ifndef SCENARIO
#define SCENARIO 1
#endif

#define WS_SDEQUE_SHRINK_RATIO   1 /* scenario 2: a 2-slot array is big (shrink_mask below) */
#define WS_SDEQUE_TRIPWIRE_SHIFT 0

#include "../src/deque.c"
/* The header's portable spellings, as under ThreadSanitizer: the checker runs no inline
 * assembly (ws__fast_count's add to memory). And the record's flags and state written as two
 * stores, as on a big-endian machine, not one 64-bit store over both: the checker does not
 * model mixed-size accesses. The same bytes are written, before the same release. */
#define __SANITIZE_THREAD__ 1
#undef __BYTE_ORDER__
#include "worksteal.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* The library's allocation and clock (platform.c), as model_sdeque_common.h has them. */
#define MODEL_NITEMS 3
#define THEFTS       1 /* its thief is not used here: steal_once below runs the record */
#include "model_sdeque_common.h"

/* The calling thread's worker deque (worker.c): the owner's, set when it starts. */
__thread struct ws__fast *ws__tls_fast;

enum { TASK_TAKEN = 1, TASK_DONE = 2, THIEF_SHIFT = 8 }; /* src/internal.h's state values */

static ws_task task[NITEMS];
static atomic_int runs[NITEMS];
static int64_t max_depth; /* the owner's deepest push so far (worker.c's max_depth) */

static void count_run(void *arg)
{
    int i = (int)(intptr_t)arg;
    atomic_fetch_add_explicit(&runs[i], 1, memory_order_relaxed);
}

static struct ws__fast *fast(void)
{
    return (struct ws__fast *)&deque;
}
static struct ws__spawn_rec *rec(int i)
{
    return (struct ws__spawn_rec *)(void *)&task[i];
}

/* join.c's push_rare, with worker.c's depth cap (max_depth - 1). */
static void push_rare(int i)
{
    bool published;
    int64_t before = ws__sdeque_push_slow(&deque, &task[i], &published);
    assert(before >= 0);
    if (before >= max_depth)
        max_depth = before + 1;
    ws__sdeque_set_depth_cap(&deque, max_depth - 1);
}

/* The inline ws_spawn: the header's push, else the library's (which records no bottom). */
static void fork_task(int i)
{
    if (ws__fast_push(fast(), &rec(i)->rec, count_run, (void *)(intptr_t)i, WS__SPAWN_INLINE,
                      &rec(i)->bottom))
        return;
    struct ws__join_rec *r = &rec(i)->rec;
    r->fn = count_run;
    r->arg = (void *)(intptr_t)i;
    r->flags = 0;
    __atomic_store_n(&r->state, 0u, __ATOMIC_RELAXED); /* published by the push */
    rec(i)->bottom = WS__NOT_INLINE;
    push_rare(i);
}

#if WEAKEN == 1 /* (0 when not defined) */
/* ws__sync_take without the guard test. */
static bool sync_take(ws_task *t)
{
    struct ws__spawn_rec *s = (struct ws__spawn_rec *)(void *)t;
    if (__atomic_load_n(&fast()->bottom, __ATOMIC_RELAXED) != s->bottom)
        return false;
    ws__fast_pop(fast(), s->bottom - 1);
    s->bottom = WS__NOT_INLINE;
    return true;
}
#else
#define sync_take ws__sync_take
#endif

/* The inline ws_sync: the header's take-back, else the library's pop, or a wait for the thief
 * (worker.c completes the task with a release exchange; wait.c loads the state with acquire). */
static void sync_task(int i)
{
    struct ws__join_rec *r = &rec(i)->rec;
    if (sync_take(&task[i])) {
        r->fn(r->arg);
        return;
    }
    rec(i)->bottom = WS__NOT_INLINE;
    void *x = ws__sdeque_pop(&deque);
    if (x != NULL) {
        assert(x == &task[i]);
        r->fn(r->arg);
        return;
    }
    while (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != TASK_DONE)
        ;
}

static void *owner(void *arg)
{
    (void)arg;
    ws__tls_fast = fast();
#if SCENARIO == 1
    fork_task(0);
    fork_task(1);
    fork_task(2);
    sync_task(2);
    sync_task(1);
    sync_task(0);
#elif SCENARIO == 3
    fork_task(0);
    fork_task(1);
    sync_task(1);
    sync_task(0);
    fork_task(1); /* the same record again */
    sync_task(1);
#else
    fork_task(0);
    fork_task(1);
    sync_task(1);
    sync_task(0);
    ws__sdeque_trim(&deque);
    assert(ws__sdeque_capacity(&deque) == 1);
    fork_task(2);
    sync_task(2);
#endif
    return NULL;
}

/* Steal attempts of each thief. Scenario 3's one thief tries twice, so that it can reach X
 * behind W. A third attempt in scenario 1 (an ask, then two takes of what the owner shares)
 * did not finish in 15 minutes; scenario 1 is there for the growth and the requests, and the
 * take-back of a shared item is what scenario 2's reserve exercises. */
static const int steals[2] = {SCENARIO == 3 ? 2 : 1, 1};

/* A worker's steals: the record's state marked (worker.c), its function run, the task done. */
static void *thief_steals(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    for (int i = 0; i < steals[id]; i++) {
        struct ws__join_rec *r = ws_sdeque_steal(&deque);
        if (r == NULL)
            continue;
        __atomic_fetch_or(&r->state, TASK_TAKEN | (uint32_t)(id + 1) << THIEF_SHIFT,
                          __ATOMIC_RELAXED);
        r->fn(r->arg);
        __atomic_exchange_n(&r->state, TASK_DONE, __ATOMIC_ACQ_REL);
    }
    return NULL;
}

int main(void)
{
    int err = ws_sdeque_init(&deque, 2, SCENARIO == 1 ? 0 : 2);
    assert(err == 0);
    max_depth = 4;
    ws__sdeque_set_depth_cap(&deque, max_depth - 1);
#if SCENARIO == 2
    deque.shrink_mask = 0; /* as if the first array had had one slot */
#endif
    enum { THIEVES = SCENARIO == 3 ? 1 : 2, FORKS = SCENARIO == 3 ? 2 : NITEMS };
    pthread_t o, t[THIEVES];
    pthread_create(&o, NULL, owner, NULL);
    for (uintptr_t i = 0; i < THIEVES; i++)
        pthread_create(&t[i], NULL, thief_steals, (void *)i);
    pthread_join(o, NULL);
    for (int i = 0; i < THIEVES; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < FORKS; i++) /* scenario 3 forks X twice */
        assert(atomic_load_explicit(&runs[i], memory_order_relaxed) ==
               (SCENARIO == 3 && i == 1 ? 2 : 1));
    /* relaxed: every thread has been joined. */
    assert(ws_load_relaxed(&deque.wanted) == 0 || ws_load_relaxed(&deque.limit) == 0);
    return 0;
}
