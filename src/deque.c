/* deque.c: the Chase-Lev work-stealing deque.
 *
 * The algorithm is Chase and Lev, "Dynamic Circular Work-Stealing Deque" (SPAA 2005), with the
 * C11 memory orders of Lê, Pop, Cohen and Zappa Nardelli, "Correct and Efficient Work-Stealing
 * for Weak Memory Models" (PPoPP 2013), and the resize correction that Norris and Demsky's
 * CDSChecker found (OOPSLA 2013): the grown array is published with a release store and thieves
 * load the array pointer with acquire.
 *
 *          thieves steal here (CAS on top)           owner pushes and pops here
 *                    |                                        |
 *                    v                                        v
 *   array:   ... [ top ][ top+1 ][ ... ][ bottom-1 ][ bottom (free) ] ...   (indices mod capacity)
 *                 oldest                  newest
 *
 * Fields and writers:
 *   top     only grows; advanced by a thief's CAS, or by the owner's CAS when it pops the last
 *           item. 64 bits, so it never wraps and a CAS on it has no ABA problem.
 *   bottom  written by the owner only; thieves read it.
 *   array   written by the owner only, when it grows; everyone reads it.
 * Invariants (when no operation is in flight):
 *   1. top <= bottom, and bottom - top <= capacity.
 *   2. The live items are exactly the slots top .. bottom-1 of the current array, none NULL.
 *   3. An array replaced by growth is never written again, and is freed only by
 *      ws_deque_destroy, when no thief can exist. The arrays retired by doubling add up to less
 *      than the current capacity, so keeping them costs at most 2x memory. A thief holding an
 *      old array therefore always reads valid memory, and the item at index i is the same in
 *      every array that holds index i.
 *
 * The memory orders, each justified at its site below; docs/deque.md has the same table:
 *   push   relaxed load of bottom and array (owner's own writes); acquire load of top (a thief's
 *          read of a slot happens before we reuse it); relaxed store of the item; release store
 *          of bottom (publishes the item).
 *   pop    seq_cst exchange on bottom, then seq_cst load of top: the owner's claim on the bottom
 *          slot and the thieves' reads of bottom are in one total order, so the owner and a
 *          thief cannot both believe they own one item. Lê et al. write this as a relaxed store,
 *          a seq_cst fence and a relaxed load; the exchange form gives the same order, is one
 *          locked instruction on x86 with both gcc and clang (clang turns the fence into a slow
 *          mfence), and ThreadSanitizer understands it, while it does not model fences.
 *   steal  seq_cst loads of top then bottom (the other half of that total order; the load of
 *          bottom also acquires the pushed item); acquire load of the array (pairs with the
 *          release in grow); relaxed load of the slot (only valid if the CAS wins); seq_cst CAS
 *          on top (decides every race for an item).
 *
 * To summarize:
 *   1. Only the last item is contended, and one CAS on top settles it.
 *   2. The owner never executes a locked instruction on push, and one on pop.
 *   3. Growth copies the live items to a doubled array, publishes it with release, and keeps
 *      the old array until destroy, so no thief ever reads freed memory.
 *
 * The owner's push and pop are inline functions in deque.h, so that a spawn costs no calls;
 * their comments there carry the same justifications.
 */
#include "deque.h"
#include "atomics.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

_Static_assert(sizeof(int64_t) == 8, "64-bit indices never wrap");

static ws_deque_array *array_new(size_t capacity)
{
    if (capacity > (SIZE_MAX - sizeof(ws_deque_array)) / sizeof(void *))
        return NULL;
    ws_deque_array *a = ws__malloc(sizeof(ws_deque_array) + capacity * sizeof(void *));
    if (a == NULL)
        return NULL;
    a->mask = capacity - 1;
    a->retired_next = NULL;
    return a;
}

static size_t round_up_pow2(size_t n)
{
    size_t c = 1;
    while (c < n && c <= SIZE_MAX / 2)
        c <<= 1;
    return c;
}

int ws_deque_init(ws_deque *q, size_t initial_capacity)
{
    size_t cap = round_up_pow2(initial_capacity);
    if (cap < initial_capacity)
        return ENOMEM;
    ws_deque_array *a = array_new(cap);
    if (a == NULL)
        return ENOMEM;
    /* relaxed: initialisation; the deque is published to thieves by whatever hands them its
     * address (thread creation, or a release store in the caller). */
    ws_store_relaxed(&q->top, 0);
    ws_store_relaxed(&q->bottom, 0);
    ws_store_relaxed(&q->array, a);
    ws_store_relaxed(&q->growths, 0);
    q->owner_slot = a->slot;
    q->owner_mask = a->mask;
    q->retired = NULL;
    return 0;
}

void ws_deque_destroy(ws_deque *q)
{
    /* relaxed: no thief exists any more (the caller's contract). */
    ws__free(ws_load_relaxed(&q->array));
    while (q->retired != NULL) {
        ws_deque_array *next = q->retired->retired_next;
        ws__free(q->retired);
        q->retired = next;
    }
}

/* Owner only: doubles the array, copying the live items t..b-1; NULL (deque unchanged) if the
 * memory cannot be had. */
static ws_deque_array *grow(ws_deque *q, ws_deque_array *old, int64_t t, int64_t b)
{
    size_t cap = (old->mask + 1) * 2;
    if (cap == 0)
        return NULL;
    ws_deque_array *a = array_new(cap);
    if (a == NULL)
        return NULL;
    for (int64_t i = t; i < b; i++) {
        /* relaxed: the old slots are the owner's own writes; the new array is not yet
         * visible to anyone. */
        void *item = ws_load_relaxed(&old->slot[(size_t)i & old->mask]);
        ws_store_relaxed(&a->slot[(size_t)i & a->mask], item);
    }
    /* release: publishes the copied slots before the pointer; pairs with the acquire load of
     * the array in ws_deque_steal (the CDSChecker correction). */
    ws_store_release(&q->array, a);
    q->owner_slot = a->slot;
    q->owner_mask = a->mask;
    old->retired_next = q->retired;
    q->retired = old;
    /* relaxed: a statistics counter with one writer. */
    ws_counter_add(&q->growths, 1);
    return a;
}

int64_t ws__deque_push_grow(ws_deque *q, void *item)
{
    /* relaxed: the owner's own variables; acquire on top as in ws__deque_push_inline. */
    int64_t b = ws_load_relaxed(&q->bottom);
    ws_deque_array *a = ws_load_relaxed(&q->array);
    int64_t t = ws_load_acquire(&q->top);
    if (b - t > (int64_t)a->mask && grow(q, a, t, b) == NULL)
        return -1;
    return ws__deque_push_inline(q, item); /* fits now: no second growth */
}

int64_t ws__deque_push_size(ws_deque *q, void *item)
{
    return ws__deque_push_inline(q, item);
}

int ws_deque_push(ws_deque *q, void *item)
{
    return ws__deque_push_size(q, item) < 0 ? ENOMEM : 0;
}

void *ws_deque_pop(ws_deque *q)
{
    return ws__deque_pop_inline(q);
}

void *ws_deque_steal(ws_deque *q)
{
    /* seq_cst: top is read before bottom in the total order shared with ws_deque_pop; see the
     * comment on the exchange there. */
    int64_t t = ws_load_seq_cst(&q->top);
    /* seq_cst: the second half of that order; also acquires, so the item stored before the
     * push's release store of bottom is visible. */
    int64_t b = ws_load_seq_cst(&q->bottom);
    if (t >= b)
        return NULL;
    /* acquire: pairs with the release store in grow, so the slots copied into a new array are
     * visible before we read one. */
    ws_deque_array *a = ws_load_acquire(&q->array);
    /* relaxed: the value is only used if the CAS below wins, and then no one can have
     * overwritten the slot (the owner reuses it only after top moves past it). */
    void *item = ws_load_relaxed(&a->slot[(size_t)t & a->mask]);
    /* acquire: the owner grew the array while we read; give the attempt up rather than trust
     * a slot of an array that may be retired. Retired arrays are never freed or written while
     * thieves exist (invariant 3), so this re-check is defence in depth: it keeps the steal
     * correct if arrays are ever reclaimed earlier (an epoch scheme). */
    if (ws_load_acquire(&q->array) != a)
        return NULL;
    /* seq_cst: claims item t; one CAS decides between thieves, and against the owner's CAS on
     * the last item. Its release half pairs with the acquire load of top in push. */
    if (!ws_cas_seq_cst(&q->top, &t, t + 1))
        return NULL;
    return item;
}

size_t ws_deque_size(const ws_deque *q)
{
    /* relaxed: an estimate; the caller gets no ordering from it. Read bottom first so that a
     * concurrent steal makes the estimate low rather than negative. */
    int64_t b = ws_load_relaxed(&((ws_deque *)q)->bottom);
    int64_t t = ws_load_relaxed(&((ws_deque *)q)->top);
    return b > t ? (size_t)(b - t) : 0;
}

size_t ws__deque_capacity(const ws_deque *q)
{
    /* relaxed: owner or quiescent callers only. */
    return ws_load_relaxed(&((ws_deque *)q)->array)->mask + 1;
}

void ws__deque_check(const ws_deque *q)
{
    ws_deque *m = (ws_deque *)q;
    /* relaxed: owner only, no steal in flight. */
    int64_t t = ws_load_relaxed(&m->top), b = ws_load_relaxed(&m->bottom);
    ws_deque_array *a = ws_load_relaxed(&m->array);
    const char *broken = NULL;
    if (t > b)
        broken = "top > bottom";
    else if (b - t > (int64_t)a->mask + 1)
        broken = "more items than capacity";
    for (int64_t i = t; broken == NULL && i < b; i++)
        if (ws_load_relaxed(&a->slot[(size_t)i & a->mask]) == NULL)
            broken = "NULL item in the live range";
    if (broken != NULL) {
        fprintf(stderr, "worksteal: ws__deque_check: %s (top %lld, bottom %lld)\n", broken,
                (long long)t, (long long)b);
        abort();
    }
}
