/* model_sdeque_retry.c: a steal that comes back empty while an item it may take stays public
 * says that it lost a race (src/deque.c, included as it is, under the GenMC model checker,
 * RC11), so that a worker about to sleep looks again (src/idle.c, park).
 *
 *   genmc --rc11 --disable-estimation -- -I src -I include [-DWITHOUT=1] tests/model_sdeque_retry.c
 *
 * Reserve 3: the owner pushes X onto the empty deque and Y into the reserve (both public), lets
 * the thief start, pops Y (a CAS on ts that moves the guard down to Y's index), and waits until
 * the thief is done before it pops the rest. X stays public from the thief's start to its end,
 * so its one steal must take it or report a lost race: its CAS can lose to the pop. A thief that
 * took that NULL for an empty deque in its last look before sleeping parked with the owner's
 * public items left, which the owner then ran alone (test_phases spawn 2 back under TSan on a
 * loaded machine, where an idle worker parks after one look). WITHOUT=1 drops the report
 * (WS_SDEQUE_NOTES_LOST 0) and must fail.
 */
#include <genmc.h>

#if WITHOUT == 1 /* (0 when not defined) */
#define WS_SDEQUE_NOTES_LOST 0
#endif

#include "../src/deque.c"

#define MODEL_NITEMS 2
#define THEFTS       1
#include "model_sdeque_common.h"

static atomic_int started, thief_done;
static bool lost; /* the thief's only */

static void *one_steal(void *arg)
{
    (void)arg;
    /* acquire: pairs with the owner's release after X's push. */
    __VERIFIER_assume(atomic_load_explicit(&started, memory_order_acquire) != 0);
    void *x = ws__sdeque_steal_noting(&deque, &lost);
    assert((x == &items[0] || lost) && "a steal came back empty with X public, and no race lost");
    if (x != NULL)
        take(x);
    atomic_store_explicit(&thief_done, 1, memory_order_release);
    return NULL;
}

static void *owner(void *arg)
{
    (void)arg;
    push(0);
    push(1);
    atomic_store_explicit(&started, 1, memory_order_release); /* X and Y are in place */
    void *y = ws__sdeque_pop(&deque);
    assert(y == &items[1]); /* only X is the thief's */
    take(y);
    /* acquire: pairs with the thief's release at its end. */
    __VERIFIER_assume(atomic_load_explicit(&thief_done, memory_order_acquire) != 0);
    pop_all();
    return NULL;
}

int main(void)
{
    int err = ws_sdeque_init(&deque, 4, 3);
    assert(err == 0);
    run_owner_and(owner, one_steal, NITEMS);
    return 0;
}
