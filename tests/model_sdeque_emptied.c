/* model_sdeque_emptied.c: a push onto a deque that thieves emptied takes the slow path (which
 * reads top, sees the deque empty and wakes a sleeper: join.c's push_rare), even when the thief
 * that took the last item could not tell it was the last (src/deque.c, included as it is, under
 * the GenMC model checker, RC11).
 *
 *   genmc --rc11 --disable-estimation -- -I src -I include [-DSCENARIO=n] [-DWITHOUT=n]
 *         tests/model_sdeque_emptied.c
 *
 * A thief knows it took the last item when the bottom it read is one past the index it took
 * (deque.c's sdeque_emptied), but that bottom may be older than an owner's pop that lowered it,
 * so the owner must also see for itself:
 *   SCENARIO 1  reserve 3: the owner pushes X onto the empty deque and Y into the reserve, pops Y
 *               (a CAS below the guard, then the store of bottom), then pushes Z. A thief that
 *               read the new top but the old bottom takes X believing Y is still there.
 *   SCENARIO 2  reserve 1: X public, Y private; the owner pops Y (plain) and X (below the
 *               guard: finds it gone), then pushes Z. The thief read bottom before the pop of Y.
 * One thief steals once. Checked before Z's push: if the thief's steal of X has happened (a
 * seq_cst flag it sets after its CAS, read seq_cst by the owner: the CAS then happens before the
 * push), the deque is empty and the push must take the slow path and find it so (it returns 0
 * items before). On the fast path the push would publish nothing and wake nobody while the thief
 * may have gone to sleep: the missed wake-up that left flat batches to their generator
 * (tests/test_phases.c). Every item is taken exactly once.
 *
 * WITHOUT=1 makes the pop above top store bottom after its CAS, as it did
 * (WS_SDEQUE_POP_LOWERS_FIRST 0): scenario 1 fails. WITHOUT=2 drops the close of the fast path
 * after a pop that finds the deque emptied (WS_SDEQUE_EMPTY_CLOSES 0): scenario 2 fails.
 * tests/model.cmake runs all four.
 */
#ifndef SCENARIO
#define SCENARIO 1
#endif
#if WITHOUT == 1 /* (0 when not defined) */
#define WS_SDEQUE_POP_LOWERS_FIRST 0
#elif WITHOUT == 2
#define WS_SDEQUE_EMPTY_CLOSES 0
#endif

#include "../src/deque.c"

#define THEFTS 1
#include "model_sdeque_common.h"

static atomic_int took_x; /* seq_cst: the ghost of "the thief's steal of X is done" */

static void *one_steal(void *arg)
{
    (void)arg;
    void *x = ws_sdeque_steal(&deque);
    if (x == NULL)
        return NULL;
    take(x);
    if (x == &items[0])
        atomic_store_explicit(&took_x, 1, memory_order_seq_cst);
    return NULL;
}

static void *owner(void *arg)
{
    (void)arg;
    push(0);
    push(1);
    void *y = ws__sdeque_pop(&deque);
    if (y != NULL)
        take(y);
#if SCENARIO == 2
    void *x = ws__sdeque_pop(&deque);
    if (x != NULL)
        take(x);
#endif
    bool emptied = atomic_load_explicit(&took_x, memory_order_seq_cst) != 0;
    items[2].payload = 3;
    if (ws__sdeque_fits(&deque)) {
        assert(!emptied && "a push onto a deque that thieves emptied takes the fast path");
        ws__sdeque_push_fitting(&deque, &items[2]);
    } else {
        int64_t before = ws__sdeque_push_slow(&deque, &items[2], &published);
        assert(before >= 0);
        assert((!emptied || before == 0) && "the slow push did not see the deque emptied");
    }
    pop_all();
    return NULL;
}

int main(void)
{
    int err = ws_sdeque_init(&deque, 4, SCENARIO == 1 ? 3 : 1);
    assert(err == 0);
    run_owner_and(owner, one_steal, NITEMS);
    return 0;
}
