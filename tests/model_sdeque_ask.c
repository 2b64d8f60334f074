/* model_sdeque_ask.c: a thief's request for work on the split deque (src/deque.c, included as
 * it is, "Requests") under the GenMC model checker, in every execution RC11 allows.
 *
 *   genmc --rc11 --disable-estimation -- -I src -I include [-DSCENARIO=n] [-DWEAKEN=n]
 *         tests/model_sdeque_ask.c
 *
 * The owner pushes as join.c's push_rare does: the fast path when the deque's comparison lets
 * it, else the slow push followed by the depth cap's update (ws__worker_update_depth_limit),
 * which may reopen the fast path. Thieves steal once each; finding nothing public, they ask.
 *   SCENARIO 1  one thief; the owner pushes two items.
 *   SCENARIO 2  two thieves; the owner pushes one item.
 * After all threads: no item taken twice, and no request lost: wanted = 1 implies limit = 0
 * (the owner's next push takes the slow path and shares). With wanted = 1 and the fast path
 * open, no thief asks again and the owner shares nothing: its items stay private. And no
 * request consumed without a share: if a steal came back empty (its thief asked, or lost to a
 * thief that took a shared item; the reserve is 0) and wanted is 0 again, the owner's slow push
 * that cleared it moved the guard up.
 *
 * WEAKEN=1 makes the owner's reopening CAS relaxed (scenario 1 must fail); WEAKEN=2 makes the
 * thieves' exchange of limit a plain release store, which ends the release sequence of an
 * earlier thief's exchange (scenario 2 must fail); WEAKEN=3 makes it a relaxed exchange
 * (scenario 1 must fail). tests/model.cmake checks all three.
 */
#ifndef SCENARIO
#define SCENARIO 1
#endif
#if WEAKEN == 1 /* (0 when not defined) */
#define WS_SDEQUE_REOPEN(p, e, v) ws_cas_relaxed((p), (e), (v))
#elif WEAKEN == 2
#define WS_SDEQUE_ASK(p) ws_store_release((p), 0)
#elif WEAKEN == 3
#define WS_SDEQUE_ASK(p) ws_exchange_relaxed((p), 0)
#endif

#include "../src/deque.c"

#define THEFTS             1
#define MODEL_COUNT_MISSED 1
#include "model_sdeque_common.h"

/* join.c's push_rare: the slow push, then the depth cap as the worker recomputes it. */
static void push_rare(int i)
{
    items[i].payload = 1 + i;
    if (ws__sdeque_fits(&deque)) {
        ws__sdeque_push_fitting(&deque, &items[i]);
        return;
    }
    int64_t before = ws__sdeque_push_slow(&deque, &items[i], &published);
    assert(before >= 0);
    ws__sdeque_set_depth_cap(&deque, before + 1);
}

static void *owner(void *arg)
{
    (void)arg;
    push_rare(0);
#if SCENARIO == 1
    push_rare(1);
#endif
    return NULL;
}

int main(void)
{
    int err = ws_sdeque_init(&deque, 4, 0);
    assert(err == 0);
    int64_t guard0 = deque.guard;
    pthread_t o, t[2];
    int nthieves = SCENARIO == 1 ? 1 : 2;
    pthread_create(&o, NULL, owner, NULL);
    for (int i = 0; i < nthieves; i++)
        pthread_create(&t[i], NULL, thief, NULL);
    pthread_join(o, NULL);
    for (int i = 0; i < nthieves; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < NITEMS; i++)
        assert(atomic_load_explicit(&items[i].taken, memory_order_relaxed) <= 1);
    /* relaxed: every thread has been joined. */
    assert(ws_load_relaxed(&deque.wanted) == 0 || ws_load_relaxed(&deque.limit) == 0);
    assert(ws_load_relaxed(&deque.wanted) != 0 ||
           atomic_load_explicit(&missed, memory_order_relaxed) == 0 || deque.guard > guard0);
    return 0;
}
