/* model_sdeque_inline.c: the inline fork-join of worksteal.h on the split deque (src/deque.c,
 * included as it is) under the GenMC model checker, in every execution RC11 allows.
 *
 *   genmc --rc11 --disable-estimation -- -I src -I include [-DSCENARIO=n] [-DWEAKEN=1]
 *         tests/model_sdeque_inline.c
 *
 * The inline fork pushes with the fast path when the deque's one comparison lets it, and
 * records in the task the bottom just after its push; the inline sync (or join) takes the task
 * back with a plain store of bottom if, and only if, that recorded bottom is the deque's bottom
 * and its index lies at or above the guard (ws__fast_owns). Otherwise, and for a task the
 * library pushed (recorded WS__NOT_INLINE), it pops through the library. One owner and one
 * thief:
 *   SCENARIO 1  reserve 0: the owner forks X, Y, Z and syncs Z, Y, X; the thief steals three
 *               times (its requests make the owner's pushes share older items).
 *   SCENARIO 2  reserve 2: the owner forks X onto the empty deque (the guard goes 2 above it),
 *               then Y (into the reserve, public at once), and syncs Y, X; the thief steals
 *               twice.
 * After both threads: every item taken exactly once.
 *
 * WEAKEN=1 leaves out the guard test, so that a shared task, or one pushed into a reserve, is
 * taken back with plain accesses too: both scenarios must then fail (an item taken twice), and
 * tests/model.cmake checks that they do.
 */
#ifndef SCENARIO
#define SCENARIO 1
#endif
#ifndef WEAKEN
#define WEAKEN 0
#endif

#include "../src/deque.c"
#include "worksteal.h" /* WS__NOT_INLINE */

#define THEFTS (SCENARIO == 1 ? 3 : 2)
#include "model_sdeque_common.h"

/* worksteal.h's inline fork: the fast push, recording the new bottom; else the library's. */
static void fork_push(int i)
{
    items[i].payload = 1 + i;
    if (ws__sdeque_fits(&deque)) {
        ws__sdeque_push_fitting(&deque, &items[i]);
        items[i].end = ws_load_relaxed(&deque.bottom); /* relaxed: the owner's own variable */
        return;
    }
    items[i].end = WS__NOT_INLINE;
    int64_t before = ws__sdeque_push_slow(&deque, &items[i], &published);
    assert(before >= 0);
}

/* worksteal.h's ws__fast_owns: the recorded bottom is the deque's, and its index private. */
static bool fast_owns(int64_t end)
{
    bool newest = ws_load_relaxed(&deque.bottom) == end; /* relaxed: the owner's own variable */
#if WEAKEN == 1
    return newest;
#else
    return newest && end > deque.guard;
#endif
}

/* worksteal.h's inline sync: the plain take if fast_owns, else the library's pop (which finds
 * the item, or nothing: a thief took it). */
static void fork_sync(int i)
{
    int64_t b = items[i].end;
    if (fast_owns(b)) {
        WS_SDEQUE_PUBLISH_BOTTOM(&deque.bottom, b - 1); /* ws__fast_pop's release store */
        items[i].end = WS__NOT_INLINE;
        take(&items[i]);
        return;
    }
    void *x = ws__sdeque_pop(&deque);
    if (x != NULL) {
        assert(x == &items[i]);
        take(x);
    }
}

static void *owner(void *arg)
{
    (void)arg;
#if SCENARIO == 1
    fork_push(0);
    fork_push(1);
    fork_push(2);
    fork_sync(2);
    fork_sync(1);
    fork_sync(0);
#else
    fork_push(0);
    fork_push(1);
    fork_sync(1);
    fork_sync(0);
#endif
    return NULL;
}

int main(void)
{
    int err = ws_sdeque_init(&deque, 4, SCENARIO == 1 ? 0 : 2);
    assert(err == 0);
    run_owner_and_thief(owner, SCENARIO == 1 ? 3 : 2);
    return 0;
}
