/* model_sdeque.c: the split deque's protocol (src/deque.c, included as it is) under the GenMC
 * model checker, in every execution the C11 model (RC11) allows.
 *
 *   genmc --rc11 --disable-estimation -- -I src -I include [-DSCENARIO=n] [-DWEAKEN=n]
 *         tests/model_sdeque.c
 *
 * One owner and one thief (tests/model.cmake runs every scenario and variant):
 *   SCENARIO 1  reserve 2, capacity 1: the owner pushes X onto the empty deque (the guard goes
 *               2 above it), then Y (into the reserve: public through the release store of
 *               bottom; the array grows, so X is copied); then it pops until empty. The thief
 *               steals twice.
 *   SCENARIO 2  reserve 0: the owner pushes X and pops it privately, then pushes Y and Z (the
 *               slow push shares if the thief has asked by then) and pops until empty. The
 *               thief steals three times: a stale view must never yield X a second time.
 *   SCENARIO 3  reserve 2, capacity 2 (no growth): the owner pushes X and Y (both public), pops
 *               Y (a pop of a public item, whose CAS fails and retries if the thief's steal of
 *               X comes between its read of ts and its CAS), then pushes Z into X's slot and
 *               pops until empty. The thief steals once. For IMM (--imm): a thief's read of X's
 *               slot must not see Z (load buffering, which RC11 forbids by construction). The
 *               owner's side cannot show it even with the pop's CAS relaxed: GenMC's IMM orders
 *               a compare-and-swap's read before the accesses after it; the thief's side can
 *               (its CAS without the release half fails here).
 * Each item carries a plain payload written before its push; whoever takes it reads it (a data
 * race or a wrong value is an error) and counts the take. After both threads: every item taken
 * exactly once.
 *
 * WEAKEN=n replaces one relied-on order by relaxed (the macros of src/deque.h):
 *   1 WS_SDEQUE_SHARE, 2 WS_SDEQUE_THIEF_TS (scenario 2 catches them),
 *   3 WS_SDEQUE_PUBLISH_BOTTOM, 4 WS_SDEQUE_THIEF_BOTTOM, 5 WS_SDEQUE_GROW_PUBLISH,
 *   6 WS_SDEQUE_THIEF_ARRAY (scenario 1 catches them).
 * Each weakened model must fail; tests/model.cmake checks that it does.
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

#if WEAKEN == 1
#define WS_SDEQUE_SHARE(p, v) atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#elif WEAKEN == 2
#define WS_SDEQUE_THIEF_TS(p) atomic_load_explicit((p), memory_order_relaxed)
#elif WEAKEN == 3
#define WS_SDEQUE_PUBLISH_BOTTOM(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#elif WEAKEN == 4
#define WS_SDEQUE_THIEF_BOTTOM(p) atomic_load_explicit((p), memory_order_relaxed)
#elif WEAKEN == 5
#define WS_SDEQUE_GROW_PUBLISH(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#elif WEAKEN == 6
#define WS_SDEQUE_THIEF_ARRAY(p) atomic_load_explicit((p), memory_order_relaxed)
#endif

#include "../src/deque.c"

#define THEFTS (SCENARIO == 1 ? 2 : SCENARIO == 3 ? 1 : 3)
#include "model_sdeque_common.h"

static void *owner(void *arg)
{
    (void)arg;
#if SCENARIO == 1
    push(0);
    push(1);
    pop_all();
#elif SCENARIO == 3
    push(0);
    push(1);
    void *y = ws__sdeque_pop(&deque);
    if (y != NULL)
        take(y);
    push(2);
    pop_all();
#else
    push(0);
    void *x = ws__sdeque_pop(&deque);
    if (x != NULL)
        take(x);
    push(1);
    push(2);
    pop_all();
#endif
    return NULL;
}

int main(void)
{
    int err = ws_sdeque_init(&deque, SCENARIO == 3 ? 2 : 1, SCENARIO == 2 ? 0 : 2);
    assert(err == 0);
    run_owner_and_thief(owner, SCENARIO == 1 ? 2 : 3);
    return 0;
}
