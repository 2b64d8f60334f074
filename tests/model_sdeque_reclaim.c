/* model_sdeque_reclaim.c: the split deque's reclamation of replaced arrays (src/deque.c,
 * included as it is) under the GenMC model checker (RC11): no thief reads an array after the
 * owner has freed it, and every item is still taken exactly once.
 *
 *   genmc --rc11 --disable-estimation -- -I src -I include [-DSCENARIO=n] [-DWEAKEN=n]
 *         tests/model_sdeque_reclaim.c
 *
 * One owner and one thief; a reserve of 1 makes the first item public at once. The model
 * counts any array larger than one slot as big (ratio 1, tripwire at capacity - 1), so that a
 * few items suffice.
 *   SCENARIO 1  grow: the first array has one slot. The owner pushes X (public) and Y (the
 *               array grows: the one-slot array is retired, and freed if no thief is
 *               counted), then pops until empty. The thief steals twice.
 *   SCENARIO 2  shrink: the first array has two slots (a big one). The owner pushes X and Y,
 *               pops until empty, then calls ws__sdeque_trim (what a worker does before it
 *               sleeps), which swaps in a one-slot array and frees the two-slot one unless
 *               the thief is counted; then it pushes Z and pops it. The thief steals three
 *               times.
 * GenMC reports any access to freed memory (the thief's reads of the array's mask and slot)
 * and any data race; each item's plain payload is checked by whoever takes it. After both
 * threads: every item taken exactly once.
 *
 * WEAKEN=n weakens one relied-on order (the macros of src/deque.h); each must fail:
 *   1 WS_SDEQUE_ENTER relaxed, 2 WS_SDEQUE_THIEF_ARRAY acquire, 3 WS_SDEQUE_GROW_PUBLISH
 *   release (the three other quarters of the store buffering), 4 WS_SDEQUE_RECLAIM_LOAD
 *   acquire, 5 WS_SDEQUE_LEAVE relaxed (the free is no longer ordered after the slot read).
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#ifndef SCENARIO
#define SCENARIO 1
#endif
#ifndef WEAKEN
#define WEAKEN 0
#endif

#define WS_SDEQUE_SHRINK_RATIO   1
#define WS_SDEQUE_TRIPWIRE_SHIFT 0

#if WEAKEN == 1
#define WS_SDEQUE_ENTER(p) atomic_fetch_add_explicit((p), 1, memory_order_relaxed)
#elif WEAKEN == 2
#define WS_SDEQUE_THIEF_ARRAY(p) atomic_load_explicit((p), memory_order_acquire)
#elif WEAKEN == 3
#define WS_SDEQUE_GROW_PUBLISH(p, v) atomic_store_explicit((p), (v), memory_order_release)
#elif WEAKEN == 4
#define WS_SDEQUE_RECLAIM_LOAD(p) atomic_load_explicit((p), memory_order_acquire)
#elif WEAKEN == 5
#define WS_SDEQUE_LEAVE(p) atomic_fetch_sub_explicit((p), 1, memory_order_relaxed)
#endif

#include "../src/deque.c"

#define THEFTS (SCENARIO == 1 ? 2 : 3)
#include "model_sdeque_common.h"

static void *owner(void *arg)
{
    (void)arg;
    push(0);
    push(1); /* scenario 1: grows unless the thief took X first */
    pop_all();
#if SCENARIO == 2
    ws__sdeque_trim(&deque);
    assert(ws__sdeque_capacity(&deque) == 1); /* the freed one, or retired if a thief was in */
    push(2);
    pop_all();
#endif
    return NULL;
}

int main(void)
{
    int err = ws_sdeque_init(&deque, SCENARIO == 1 ? 1 : 2, 1);
    assert(err == 0);
    deque.shrink_mask = 0; /* as if the first array had had one slot */
    run_owner_and_thief(owner, SCENARIO == 1 ? 2 : 3);
    ws_sdeque_destroy(&deque);
    return 0;
}
