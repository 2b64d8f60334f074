/* model_sdeque_retry.c: a steal that comes back empty while an item it may take stays public
 * says that it lost a race (src/deque.c, included as it is, under the GenMC model checker,
 * RC11), so that a worker about to sleep looks again (src/idle.c, park).
 *
 *   genmc --rc11 --disable-estimation -- -I src -I include [-DWITHOUT=1] tests/model_sdeque_retry.c
 *
 * Reserve 3: the owner pushes X onto the empty deque and Y into the reserve (both public), starts
 * the thief, pops Y (a CAS on ts that moves the guard down to Y's index) and stops; the rest is
 * popped once both are done. X stays public from the thief's start to its end,
 * so its one steal must take it or report a lost race: its CAS can lose to the pop. A thief that
 * took that NULL for an empty deque in its last look before sleeping parked with the owner's
 * public items left, which the owner then ran alone (test_phases spawn 2 back under TSan on a
 * loaded machine, where an idle worker parks after one look). WITHOUT=1 drops the report
 * (WS_SDEQUE_NOTES_LOST 0) and must fail.
 */
#if WITHOUT == 1 /* (0 when not defined) */
#define WS_SDEQUE_NOTES_LOST 0
#endif

#include "../src/deque.c"

#define MODEL_NITEMS 2
#define THEFTS       1
#include "model_sdeque_common.h"

static bool lost; /* the thief's only */
static pthread_t thief_thread;

static void *one_steal(void *arg)
{
    (void)arg;
    void *x = ws__sdeque_steal_noting(&deque, &lost);
    assert((x == &items[0] || lost) && "a steal came back empty with X public, and no race lost");
    if (x != NULL)
        take(x);
    return NULL;
}

/* The thief starts once X and Y are in place (its creation orders them before its steal); the
 * owner pops Y and stops, and main, once both are joined, takes what is left as the owner. */
static void *owner(void *arg)
{
    (void)arg;
    push(0);
    push(1);
    pthread_create(&thief_thread, NULL, one_steal, NULL);
    void *y = ws__sdeque_pop(&deque);
    assert(y == &items[1]); /* only X is the thief's */
    take(y);
    return NULL;
}

int main(void)
{
    int err = ws_sdeque_init(&deque, 4, 3);
    assert(err == 0);
    pthread_t o;
    pthread_create(&o, NULL, owner, NULL);
    pthread_join(o, NULL);
    pthread_join(thief_thread, NULL);
    pop_all();
    for (int i = 0; i < NITEMS; i++)
        assert(atomic_load_explicit(&items[i].taken, memory_order_relaxed) == 1);
    return 0;
}
