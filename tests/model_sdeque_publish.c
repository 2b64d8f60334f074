/* model_sdeque_publish.c: a blocking owner makes every item of its split deque public
 * (ws__sdeque_publish_all, src/deque.c "Capacity", included as it is) under the GenMC model
 * checker, in every execution RC11 allows, with the public count's field cut to 2 bits (at
 * most 3 public indices), so that the model meets the field's limit with a handful of items.
 *
 *   genmc --rc11 --disable-estimation -- -I src -I include [-DWEAKEN=1]
 *         tests/model_sdeque_publish.c
 *
 * The owner pushes 4 items as the library does (the fast path, else the slow push; a refused
 * push runs the item at once, as join.c does), then publishes all and blocks (stops). A thief
 * steals meanwhile (asking, so that the owner's pushes share). Then a spare, run after both,
 * steals until the deque is empty: every item, the newest included, is taken exactly once,
 * and the deque is then empty. Without the deque's refusal of a push past WS_SDEQUE_MAX_ITEMS
 * (3 here), publish_all leaves the newest item private and the spare cannot reach it.
 *
 * WEAKEN=1 lets the deque hold one item more than the field counts (WS_SDEQUE_MAX_ITEMS 4, as
 * the deque was before the limit): the newest item stays private and the spare's steals end
 * before it. Must fail (tests/model.cmake).
 */
#define WS_SDEQUE_AVAIL_BITS 2
#if WEAKEN == 1 /* (0 when not defined) */
#define WS_SDEQUE_MAX_ITEMS 4
#endif

#include "../src/deque.c"

#define MODEL_NITEMS 4
#define THEFTS       1
#include "model_sdeque_common.h"

_Static_assert(WS_SDEQUE_AVAIL_MASK == 3, "the model's field holds 3");

static void *owner(void *arg)
{
    (void)arg;
    for (int i = 0; i < NITEMS; i++) {
        items[i].payload = 1 + i;
        if (ws__sdeque_fits(&deque))
            ws__sdeque_push_fitting(&deque, &items[i]);
        else if (ws__sdeque_push_slow(&deque, &items[i], &published) < 0)
            take(&items[i]); /* refused: the caller runs it */
    }
    (void)ws__sdeque_publish_all(&deque);
    return NULL;
}

int main(void)
{
    int err = ws_sdeque_init(&deque, 4, 1);
    assert(err == 0);
    pthread_t o, t;
    pthread_create(&o, NULL, owner, NULL);
    pthread_create(&t, NULL, thief, NULL);
    pthread_join(o, NULL);
    pthread_join(t, NULL);
    void *x;
    while ((x = ws_sdeque_steal(&deque)) != NULL) /* the spare */
        take(x);
    assert(ws_sdeque_size(&deque) == 0);
    for (int i = 0; i < NITEMS; i++)
        assert(atomic_load_explicit(&items[i].taken, memory_order_relaxed) == 1);
    return 0;
}
