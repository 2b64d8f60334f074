/* model_sdeque_room.c: a pop below the guard that keeps the reserve's room (src/deque.c,
 * ws__sdeque_pop_public, included as it is) under the GenMC model checker, in every execution
 * RC11 allows.
 *
 *   genmc --rc11 --disable-estimation -- -I src -I include tests/model_sdeque_room.c
 *
 * Reserve 3, capacity 4 (no growth): the owner pushes X onto the empty deque (the guard goes 3
 * above it) and Y (into the reserve), pops (Y, by the CAS that moves the guard down to Y's
 * index, then the guard back up by one index, above the new bottom), pushes Z
 * into that room and pops until empty. One thief steals twice. Whoever takes an item
 * reads its payload; every item is taken exactly once.
 *
 * The pop stores the new bottom before it raises the guard again: with the two swapped, a thief
 * that took X and then acquires the raised guard may read the old bottom and take Y, which the
 * owner popped (the mutant deque-room-before-bottom in tests/mutants/mutants.txt; caught here).
 */
#include "../src/deque.c"

#define THEFTS 2
#include "model_sdeque_common.h"

static void *owner(void *arg)
{
    (void)arg;
    push(0);
    push(1);
    void *x = ws__sdeque_pop(&deque);
    if (x != NULL)
        take(x);
    push(2);
    pop_all();
    return NULL;
}

int main(void)
{
    int err = ws_sdeque_init(&deque, 4, 3);
    assert(err == 0);
    run_owner_and_thief(owner, NITEMS);
    return 0;
}
