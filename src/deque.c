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
 *   3. An array replaced by growth is never written again. In this Chase-Lev deque it is
 *      freed only by ws_deque_destroy, when no thief can exist (the split deque below frees
 *      replaced arrays earlier, under its reclamation rule). The arrays retired by doubling
 *      add up to less than the current capacity, so keeping them costs at most 2x memory. A
 *      thief holding an old array therefore always reads valid memory, and the item at index i
 *      is the same in every array that holds index i.
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
    /* Zeroed: a thief may read a slot of a new array for an index that was taken before the
     * copy (its CAS then fails); zeroing keeps that read from seeing uninitialised memory. */
    ws_deque_array *a = ws__calloc(1, sizeof(ws_deque_array) + capacity * sizeof(void *));
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

/* The first array of a deque: the capacity rounded up to a power of two; NULL: ENOMEM. */
static ws_deque_array *array_initial(size_t initial_capacity)
{
    size_t cap = round_up_pow2(initial_capacity);
    return cap < initial_capacity ? NULL : array_new(cap);
}

int ws_deque_init(ws_deque *q, size_t initial_capacity)
{
    ws_deque_array *a = array_initial(initial_capacity);
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

/* Frees the current array and the chain of retired ones (no thief may exist any more). */
static void arrays_free(ws_deque_array *current, ws_deque_array *retired)
{
    ws__free(current);
    while (retired != NULL) {
        ws_deque_array *next = retired->retired_next;
        ws__free(retired);
        retired = next;
    }
}

void ws_deque_destroy(ws_deque *q)
{
    /* relaxed: no thief exists any more (the caller's contract). */
    arrays_free(ws_load_relaxed(&q->array), q->retired);
}

/* Owner only: a new array of capacity cap (at least b - t) holding old's items t..b-1 at the
 * same indices, not yet visible to anyone; NULL if the memory cannot be had. */
static ws_deque_array *array_copied(ws_deque_array *old, int64_t t, int64_t b, size_t cap)
{
    ws_deque_array *a = cap == 0 ? NULL : array_new(cap);
    for (int64_t i = t; a != NULL && i < b; i++) {
        /* relaxed: the old slots are the owner's own writes; the new array is not yet
         * visible to anyone. */
        void *item = ws_load_relaxed(&old->slot[(size_t)i & old->mask]);
        ws_store_relaxed(&a->slot[(size_t)i & a->mask], item);
    }
    return a;
}

/* Owner only: as array_copied, at twice old's capacity. */
static ws_deque_array *array_doubled(ws_deque_array *old, int64_t t, int64_t b)
{
    return array_copied(old, t, b, (old->mask + 1) * 2);
}

/* Owner only: doubles the array, copying the live items t..b-1; NULL (deque unchanged) if the
 * memory cannot be had. */
static ws_deque_array *grow(ws_deque *q, ws_deque_array *old, int64_t t, int64_t b)
{
    ws_deque_array *a = array_doubled(old, t, b);
    if (a == NULL)
        return NULL;
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

/* ---------------------------------------------------------------------------------------- */
/* The split deque                                                                           */
/* ---------------------------------------------------------------------------------------- */
/*
 * After the split deque of Lace (van Dijk and van de Pol, "Lace: non-blocking split deque for
 * work-stealing", MuCoCoS 2014) and Wool's private tasks (Faxén), on a growable circular
 * array with unbounded indices, and with a reserve above an empty deque's bottom.
 *
 *          public: thieves CAS ts                 private: the owner's plain loads, stores
 *                    |                                        |
 *   index:    [ top ] ... [ guard-1 ] [ guard ] ... [ bottom-1 ] [ bottom (free) ]
 *
 *   ts = top << 16 | avail, guard = top + avail. Both live in one 64-bit word, so one CAS both
 *   claims an item and checks that the guard did not move meanwhile. The guard may also lie
 *   above bottom: then the indices bottom .. guard-1 are public before they hold items, and a
 *   thief takes index top only if it also reads bottom > top.
 *
 * Writers:
 *   thief   CAS ts: (top, avail) -> (top + 1, avail - 1), needs avail >= 1 and bottom > top.
 *   owner   fetch_add ts: avail += k (guard up by k: share, or reserve; release publishes);
 *           CAS ts: avail -> b - top, for top < b < guard (guard down to b, to pop index b);
 *           CAS ts: (top, avail) -> (top + 1, avail - 1) (pop index top, as a thief would).
 *   Nobody stores ts plainly, so every change of ts is a read-modify-write in one modification
 *   order, and there is no store-buffering race to fence against: the owner's pushes and its
 *   pops at or above the guard need no barrier; the only locked instructions are the moves of
 *   the guard, and the pops below it.
 *
 * Invariants (no operation half done): top <= bottom; top <= guard; bottom - top <= capacity;
 * the owner's `guard` equals top + avail; the live items are the slots top .. bottom-1.
 *
 * The inline fork-join of worksteal.h takes a task back with one plain store of bottom when
 * the bottom recorded in it is the deque's and its index lies at or above the guard, that is
 * private (docs/deque.md, "The inline fast path"; tests/model_sdeque_inline.c).
 *
 * Exactly once. A thief claims index i only by a CAS from (i, avail >= 1) after reading
 * bottom > i. The owner claims index i >= guard with plain accesses (no thief can: the guard
 * moves down only by the owner's CAS, and up only by the owner), or i < guard by a CAS on ts
 * that fails if a thief moved top meanwhile. ABA: could ts read (i, a) again after item i was
 * taken and its slot refilled? top only grows (modulo 2^48: a thief would have to stall while
 * 2^48 items are taken); while top == i and i < guard, the owner can pop index i only by
 * advancing top, and cannot push at i (bottom > i). So an unchanged word means item i is
 * untaken and its slot unchanged, and bottom > i still holds.
 *
 * Reclamation. Growth, and the shrink below, copy the live items into a new array, publish it
 * and retire the old one; a thief may have loaded the old pointer and still be about to read
 * a slot of it. So a thief counts itself in `stealers` (a seq_cst RMW) before it loads the
 * array (seq_cst) and leaves (a release RMW) after its read of the slot; the owner publishes
 * a new array (seq_cst) and frees the retired ones only if it then reads stealers == 0
 * (seq_cst). This is store buffering, and seq_cst on all four forbids its bad outcome (the
 * owner reading a count without the thief while the thief reads the old pointer): a thief the
 * owner did not count gets the new array, and one that it counted and saw leave read its
 * slot before the free (the release decrement, acquired by the load). The owner retries at
 * its slow pushes and at empty pops; every change of stealers is an RMW, so a 0 read after
 * several thieves left acquires all their departures (release sequences).
 *
 * Requests. A thief that finds nothing public asks: it stores wanted = 1, then exchanges limit
 * to 0 (release), which sends the owner's next push to the slow path; there the owner reads
 * wanted, and if set clears it and shares. The owner reopens the fast path only by a CAS from
 * the value of limit it read at the start of that slow push, or, outside one (the depth cap's
 * update, a shrink), from a non-zero value: a 0 written meanwhile makes the CAS fail, and the
 * request stays for the next slow push. A CAS can still succeed over a later request's 0 when
 * the slow push began at 0 too; so after a successful reopen the owner reads wanted again and,
 * if set, closes the fast path again. Every write of limit after init is an RMW (the thieves'
 * and the profiler's exchanges, the owner's CAS and exchange), so the CAS, acquiring, reads
 * the last write before it and synchronizes with every request exchanged before it (release
 * sequences): the re-read sees the wanted of a request whose 0 the CAS overwrote, unless the
 * owner cleared wanted after it, which it does only when sharing. Hence at rest wanted = 1
 * implies limit = 0: no request is lost with the fast path open (tests/model_sdeque_ask.c).
 * wanted is a hint otherwise: a request met by a share of other items just asks again.
 *
 * Capacity. avail has 16 bits, and guard - top is at most the larger of the items held and the
 * reserve (a share raises the guard to at most bottom; only an empty deque's reserve puts it
 * above, and a pop below the guard keeps one index of that room, never raising the guard past
 * where it was). So the deque holds at most WS_SDEQUE_MAX_ITEMS = 65,535 items: the fast path's
 * room stops below it, and the slow push refuses a push past it (the caller runs the item, as
 * when the array cannot grow). Then every item can be public at once: ws__sdeque_publish_all,
 * on which a blocked owner relies, publishes all (tests/model_sdeque_publish.c, with a 2-bit
 * field).
 *
 * Shrinking (docs/deque.md, "Giving memory back"). An array more than 4x the first one is
 * big. At a pop that finds the deque empty (or takes its last item) the owner arms a
 * tripwire: the fast path's room becomes capacity/8, so a push past it takes the slow path,
 * which disarms it (the array is in use). The next empty pop at least 10 ms after arming,
 * with the wire still armed, swaps in the first capacity. An owner about to sleep trims at
 * once (ws__sdeque_trim). A shrink waits until earlier retired arrays are freed, so at most
 * one big array waits for the thieves: retired arrays stay below twice the peak capacity.
 *
 * Orders (each named in deque.h, so that tests/model_sdeque.c and model_sdeque_reclaim.c can
 * weaken it):
 *   share         fetch_add release, and the thief's acquire load of ts: items pushed before a
 *                 guard move (and the task records they point to) are visible to the thief.
 *   bottom        every store of bottom is a release, and the thief loads it with acquire:
 *                 items pushed after the guard last moved (into the reserve) are visible.
 *   grow          seq_cst store of the array after copying (a release: the copies); the
 *                 thief's seq_cst load of it (an acquire).
 *   reclaim       the thief's seq_cst increment of stealers before that load, and release
 *                 decrement after its slot read; the owner's seq_cst load of stealers after
 *                 the store of the array (the store-buffering pair, with the two above).
 *   thief CAS     release: orders its read of slot i before the owner's reuse of that slot,
 *                 which the owner makes only after reading top > i with acquire. RC11 already
 *                 forbids the outcome (no load buffering); C11 and some CPUs do not.
 * docs/deque.md and docs/memory-ordering.md have the same table.
 */

/* An array more than SHRINK_RATIO times the first one is big; a push past capacity >>
 * WS_SDEQUE_TRIPWIRE_SHIFT items (deque.h, ws__sdeque_tripwire) shows that a big array is in use.
 * Macros so that the model (tests/model_sdeque_reclaim.c) can shrink arrays of one and two
 * slots. */
#ifndef WS_SDEQUE_SHRINK_RATIO
#define WS_SDEQUE_SHRINK_RATIO 4
#endif
enum { SHRINK_RATIO = WS_SDEQUE_SHRINK_RATIO };
/* How long a big array must stay unused (no push past the tripwire) before an empty pop gives
 * it back: the hysteresis against a program that bursts again and again. */
#define SHRINK_QUIET_NS (UINT64_C(10) * 1000 * 1000)

static size_t array_bytes(const ws_deque_array *a)
{
    return sizeof(ws_deque_array) + (a->mask + 1) * sizeof(void *);
}

/* Owner only: adds delta (modulo 2^N, so also subtracts) to the memory count. */
static void sdeque_count_bytes(ws_sdeque *q, size_t delta)
{
    /* relaxed: one writer; readers want an estimate (statistics, tests). */
    ws_counter_add(&q->bytes, delta);
}

int ws_sdeque_init(ws_sdeque *q, size_t initial_capacity, unsigned reserve)
{
    ws_deque_array *a = array_initial(initial_capacity);
    if (a == NULL)
        return ENOMEM;
    ws_store_relaxed(&q->stealers, 0); /* relaxed: as the other fields below */
    ws_store_relaxed(&q->bytes, array_bytes(a));
    q->shrink_mask =
        a->mask < SIZE_MAX / SHRINK_RATIO ? SHRINK_RATIO * (a->mask + 1) - 1 : SIZE_MAX;
    q->armed = false;
    q->quiet_since_ns = 0;
    /* relaxed: initialisation; the deque reaches thieves through thread creation or a release
     * store by the caller. */
    /* Indices start at 1: a zeroed task record's recorded bottom (worksteal.h) is no bottom. */
    ws_store_relaxed(&q->bottom, 1);
    ws_store_relaxed(&q->ts, WS_SDEQUE_TOP_ONE);
    ws_store_relaxed(&q->wanted, 0);
    q->ask_also = NULL;
    q->ask_sync = NULL;
    ws_store_relaxed(&q->array, a);
    ws_store_relaxed(&q->growths, 0);
    ws_store_relaxed(&q->limit, 0);
    ws_store_relaxed(&q->fast_joins, 0);
    q->open_spawns = 0;
    ws_store_relaxed(&q->fast_syncs, 0);
    q->guard = 1;
    ws_store_relaxed(&q->take_bar, 1); /* relaxed: initialisation, as above */
    q->fast_base = 2;                  /* top 1, as read */
    q->slot = a->slot;
    q->mask = a->mask;
    q->reserve = reserve < WS_SDEQUE_MAX_RESERVE ? reserve : WS_SDEQUE_MAX_RESERVE;
    q->retired = NULL;
    ws__sdeque_set_depth_cap(q, INT64_MAX);
    return 0;
}

void ws_sdeque_destroy(ws_sdeque *q)
{
    /* relaxed: no thief exists any more (the caller's contract). */
    arrays_free(ws_load_relaxed(&q->array), q->retired);
}

/* Owner only: installs the fast path's room (ws__sdeque_room) as limit, unless limit changed
 * since the owner read `seen` (a thief's request or the profiler's closing then stays); and
 * closes it again if a request is still pending ("Requests" above). */
static void sdeque_reopen(ws_sdeque *q, uint64_t seen)
{
    int64_t room = ws__sdeque_room(q);
    uint64_t open = room > 0 ? (uint64_t)room : 0;
    /* acquire: pairs with the thieves' release exchanges in sdeque_ask; every write of limit is
     * an RMW, so if this CAS overwrites a request's 0, that thief's store of wanted is visible
     * to the load below (release sequence). */
    if (!WS_SDEQUE_REOPEN(&q->limit, &seen, open) || open == 0)
        return;
    /* relaxed: ordered by the CAS above. A request we have not served: close again. */
    if (ws_load_relaxed(&q->wanted) != 0)
        ws_exchange_relaxed(&q->limit, 0); /* an RMW, as every write of limit */
}

/* Owner only, having answered a request (or found none): puts the guard back as take_bar if a
 * request had raised it, and raises it again if a request is pending by then ("Requests"). */
static void sdeque_reopen_bar(ws_sdeque *q)
{
    int64_t asked = WS_SDEQUE_BAR_ASKED;
    /* relaxed: a look first (a raise after it waits for the next take-back); acquire: pairs with
     * the thieves' release exchanges of take_bar in sdeque_ask; every write of take_bar is an
     * RMW, so if this CAS overwrites a request's raise, that thief's store of wanted is visible
     * to the load below (release sequence). */
    if (ws_load_relaxed(&q->take_bar) != asked ||
        !WS_SDEQUE_REOPEN_BAR(&q->take_bar, &asked, q->guard))
        return;
    /* relaxed: ordered by the CAS above. A request we have not served: raise it again. */
    if (ws_load_relaxed(&q->wanted) != 0)
        ws_exchange_relaxed(&q->take_bar, WS_SDEQUE_BAR_ASKED); /* an RMW, as every write */
}

/* Owner only: the guard moved from old: take_bar follows it, unless a thief raised it (the
 * request then stays for the owner's next take-back). */
static void sdeque_move_bar(ws_sdeque *q, int64_t old)
{
    /* relaxed: the owner's own value; a thief's raise makes it fail, which is what we want. */
    ws_cas_relaxed(&q->take_bar, &old, q->guard);
}

/* Owner only: sdeque_reopen after the room changed outside a slow push, leaving a closed fast
 * path (a thief's request, the profiler's closing) for the next slow push to serve. */
static void sdeque_reopen_unless_asked(ws_sdeque *q)
{
    /* relaxed: the CAS in sdeque_reopen decides. */
    uint64_t seen = ws_load_relaxed(&q->limit);
    if (seen != 0)
        sdeque_reopen(q, seen);
}

void ws__sdeque_set_depth_cap(ws_sdeque *q, int64_t cap)
{
    q->depth_cap = cap;
    sdeque_reopen_unless_asked(q);
}

void ws__sdeque_force_slow(ws_sdeque *q)
{
    /* relaxed: the owner reads it on its next push; any delay only postpones the slow path.
     * An RMW, as every write of limit ("Requests"). */
    ws_exchange_relaxed(&q->limit, 0);
}

/* Owner only: frees the retired arrays if no thief can still be reading one. */
static void sdeque_reclaim(ws_sdeque *q)
{
    if (q->retired == NULL)
        return;
    /* seq_cst: follows the seq_cst store of the array that retired the newest of them
     * (store buffering with the thief's seq_cst announcement, then load of the array): a
     * thief not counted here loads a newer array. Reading 0 also acquires every departure
     * (their release decrements), so each departed thief's read of a slot happened before the
     * free. */
    if (WS_SDEQUE_RECLAIM_LOAD(&q->stealers) != 0)
        return;
    size_t freed = 0;
    for (ws_deque_array *a = q->retired, *next; a != NULL; a = next) {
        next = a->retired_next;
        freed += array_bytes(a);
        ws__free(a);
    }
    q->retired = NULL;
    sdeque_count_bytes(q, -freed);
}

/* Owner only: replaces the array by one of capacity cap holding the live items t..b-1,
 * retires the old one and frees what it can. false (unchanged) on ENOMEM. */
static bool sdeque_replace(ws_sdeque *q, int64_t t, int64_t b, size_t cap)
{
    /* relaxed: the owner's own pointer. */
    ws_deque_array *old = ws_load_relaxed(&q->array);
    ws_deque_array *a = array_copied(old, t, b, cap);
    if (a == NULL)
        return false;
    /* seq_cst: as a release, the copies are visible to a thief that loads the new pointer (its
     * seq_cst load in ws_sdeque_steal); as seq_cst, it precedes the load of stealers in
     * sdeque_reclaim (the store-buffering pair with the thief's announcement). */
    WS_SDEQUE_GROW_PUBLISH(&q->array, a);
    q->slot = a->slot;
    q->mask = a->mask;
    old->retired_next = q->retired;
    q->retired = old;
    sdeque_count_bytes(q, array_bytes(a));
    q->armed = false; /* a new array: its tripwire is armed at the next empty pop */
    sdeque_reclaim(q);
    return true;
}

/* Owner only: doubles the array, copying the live items t..b-1. false (unchanged) on ENOMEM. */
static bool sdeque_grow(ws_sdeque *q, int64_t t, int64_t b)
{
    if (!sdeque_replace(q, t, b, (q->mask + 1) * 2))
        return false;
    ws_counter_add(&q->growths, 1); /* relaxed: a statistic with one writer */
    return true;
}

/* Owner only, with top t (read with acquire) and bottom b: if the array is big and holds less
 * than capacity/8 items, swaps in the smallest array of at least the first capacity that is
 * at most a quarter full. Only once earlier arrays are freed, so at most one big array waits
 * for the thieves. Keeps the big array on ENOMEM. */
static void sdeque_shrink(ws_sdeque *q, int64_t t, int64_t b)
{
    sdeque_reclaim(q);
    if (q->mask <= q->shrink_mask || q->retired != NULL || b - t >= ws__sdeque_tripwire(q))
        return;
    size_t cap = (q->shrink_mask + 1) / SHRINK_RATIO;
    while (cap < 4 * (size_t)(b - t))
        cap *= 2;
    (void)sdeque_replace(q, t, b, cap);
}

/* Owner only, at a pop that found the deque empty or took its last item (top == bottom == t):
 * frees retired arrays, and gives a big array back once it has been quiet (no push past the
 * tripwire) for SHRINK_QUIET_NS. The first such pop after a deep use arms the tripwire and
 * starts the quiet time; a push past it disarms (sdeque_note_depth). */
static void sdeque_drained(ws_sdeque *q, int64_t t)
{
    sdeque_reclaim(q);
    if (q->mask <= q->shrink_mask)
        return;
    uint64_t now = ws__now_ns();
    if (!q->armed) {
        q->armed = true;
        q->quiet_since_ns = now;
    } else if (now - q->quiet_since_ns >= SHRINK_QUIET_NS) {
        sdeque_shrink(q, t, t);
    } else {
        return;
    }
    sdeque_reopen_unless_asked(q); /* the tripwire, or the small array's room */
}

/* Owner only, in the slow push with b - t items before it: a push past an armed tripwire
 * means the big array is in use; disarm (the caller's reopen then gives the full room). */
static void sdeque_note_depth(ws_sdeque *q, int64_t t, int64_t b)
{
    if (q->armed && b - t >= ws__sdeque_tripwire(q))
        q->armed = false;
}

/* A thief inside a steal leaves within a few instructions unless it was preempted: give it a
 * few chances to, since an owner about to sleep will not come back to free. */
static void sdeque_reclaim_patiently(ws_sdeque *q)
{
    for (int i = 0; q->retired != NULL && i < 16; i++) {
        sdeque_reclaim(q);
        if (q->retired != NULL)
            ws__thread_yield();
    }
}

void ws__sdeque_trim(ws_sdeque *q)
{
    sdeque_reclaim_patiently(q); /* the shrink waits for earlier arrays */
    if (q->mask <= q->shrink_mask)
        return;
    /* relaxed: the owner's own variable; acquire on ts as in the slow push (slots reused). */
    int64_t b = ws_load_relaxed(&q->bottom);
    int64_t t = q->guard - (int64_t)(ws_load_acquire(&q->ts) & WS_SDEQUE_AVAIL_MASK);
    q->fast_base = t + 1;
    sdeque_shrink(q, t, b);
    sdeque_reopen_unless_asked(q);
    sdeque_reclaim_patiently(q); /* the big array, if a thief was in it at the swap */
}

/* Owner only, in the slow push (after pushing at index b, with top t read then; or, refusing a
 * push, with b the newest index): how far to move the guard up. An empty deque gets the
 * reserve above b; a thief's request gets the older half of the private items (at least b). */
static uint64_t sdeque_raise(ws_sdeque *q, int64_t b, int64_t t)
{
    int64_t target = q->guard;
    if (b == t && target < b + q->reserve)
        target = b + q->reserve;
    /* relaxed: set by thieves (sdeque_ask); a request missed here keeps limit at 0 for the
     * next slow push (sdeque_reopen), and the caller's wake-up covers a thief that went to
     * sleep meanwhile. */
    if (ws_load_relaxed(&q->wanted) != 0) {
        ws_store_relaxed(&q->wanted, 0);
        int64_t half = q->guard + (b + 1 - q->guard + 1) / 2;
        if (target < half)
            target = half;
    }
    return target > q->guard ? (uint64_t)(target - q->guard) : 0;
}

/* Owner only: moves the guard up by k. avail + k is at most the larger of the items held and
 * the reserve, so it fits beside top (WS_SDEQUE_MAX_ITEMS); the clamp only keeps a broken
 * invariant from carrying into top. */
static uint64_t sdeque_share(ws_sdeque *q, uint64_t avail, uint64_t k)
{
    if (k > WS_SDEQUE_AVAIL_MASK - avail)
        k = WS_SDEQUE_AVAIL_MASK - avail;
    if (k > 0) {
        /* release: publishes the items below the new guard (and their records) to the
         * thieves' acquire load of ts; the add cannot carry into top (avail + k fits). */
        WS_SDEQUE_SHARE(&q->ts, k);
        q->guard += (int64_t)k;
        sdeque_move_bar(q, q->guard - (int64_t)k);
    }
    return k;
}

bool ws__sdeque_publish_all(ws_sdeque *q)
{
    /* relaxed: the owner's own variable. */
    int64_t b = ws_load_relaxed(&q->bottom);
    if (b <= q->guard)
        return false;
    /* relaxed: only avail's size matters here (the field's room); thieves only lower it. */
    uint64_t avail = ws_load_relaxed(&q->ts) & WS_SDEQUE_AVAIL_MASK;
    return sdeque_share(q, avail, (uint64_t)(b - q->guard)) > 0;
}

int64_t ws__sdeque_push_slow(ws_sdeque *q, void *item, bool *published)
{
    /* relaxed: read before anything else, so that a request arriving later makes the CAS in
     * sdeque_reopen below fail (the CAS orders what it needs). */
    uint64_t seen = ws_load_relaxed(&q->limit);
    /* relaxed: the owner's own variable. */
    int64_t b = ws_load_relaxed(&q->bottom);
    /* acquire: pairs with the release half of the thieves' CAS: their reads of the slots they
     * took happen before we reuse those slots. */
    uint64_t avail = ws_load_acquire(&q->ts) & WS_SDEQUE_AVAIL_MASK;
    int64_t t = q->guard - (int64_t)avail;
    q->fast_base = t + 1;
    *published = false;
    sdeque_note_depth(q, t, b);
    if (b - t >= WS_SDEQUE_MAX_ITEMS) {
        /* Full: refused (the caller runs the item); a request is served from the items held. */
        *published = sdeque_share(q, avail, sdeque_raise(q, b - 1, t)) > 0;
        sdeque_reopen(q, seen);
        sdeque_reopen_bar(q);
        return -1;
    }
    if (b - t > (int64_t)q->mask && !sdeque_grow(q, t, b))
        return -1;
    sdeque_reclaim(q); /* arrays a thief held at the last attempt */
    ws__sdeque_push_fitting(q, item);
    int64_t old_guard = q->guard;
    /* items (not only the reserve) became public */
    *published = sdeque_share(q, avail, sdeque_raise(q, b, t)) > 0 && old_guard < b + 1;
    sdeque_reopen(q, seen);
    sdeque_reopen_bar(q);
    return b - t;
}

/* A thief knows it took the last item by the bottom it read after top (sdeque_emptied). A pop
 * below the guard that takes an item above top therefore stores the new bottom before its CAS:
 * a thief that acquires the CAS's new guard reads that bottom, not an older one that counts the
 * popped item. A pop that finds the deque emptied leaves fast_base at bottom + 1, so the next
 * push reads top: a plain pop of a private item may have lowered bottom under a thief's read.
 * By name, so that tests/model_sdeque_emptied.c can drop each (docs/deque.md, "emptied"). */
#ifndef WS_SDEQUE_POP_LOWERS_FIRST
#define WS_SDEQUE_POP_LOWERS_FIRST 1
#endif
#ifndef WS_SDEQUE_EMPTY_CLOSES
#define WS_SDEQUE_EMPTY_CLOSES 1
#endif

void *ws__sdeque_pop_public(ws_sdeque *q)
{
    /* relaxed: the owner's own variable. */
    int64_t b = ws_load_relaxed(&q->bottom) - 1;
    /* acquire: as in the slow push (fast_base is set from it below). */
    uint64_t v = ws_load_acquire(&q->ts), next;
    int64_t t = q->guard - (int64_t)(v & WS_SDEQUE_AVAIL_MASK);
    /* An item above top: bottom goes down to b ahead of the CAS. Only thieves move top, so a
     * retry can find the item at top or the deque emptied, never again above. */
    bool lowered = WS_SDEQUE_POP_LOWERS_FIRST && b > t;
    if (lowered) /* release: as in ws__sdeque_pop; the CAS publishes it to the thieves that
                  * acquire its new guard. Thieves take only index top < b meanwhile. */
        WS_SDEQUE_PUBLISH_BOTTOM(&q->bottom, b);
    do {
        t = q->guard - (int64_t)(v & WS_SDEQUE_AVAIL_MASK);
        if (b < t) {
            if (lowered) /* release: as every store of bottom; top == bottom again */
                WS_SDEQUE_PUBLISH_BOTTOM(&q->bottom, b + 1);
            sdeque_drained(q, t); /* thieves took everything: top == bottom, empty */
            if (WS_SDEQUE_EMPTY_CLOSES)
                q->fast_base = b + 2; /* bottom + 1: the next push reads top (below) */
            return NULL;
        }
        /* Index top: take it as a thief would. Above: move the guard down to b, leaving the
         * older items public (avail stays >= 1: see the ABA argument above). */
        next = b == t ? v + WS_SDEQUE_TOP_ONE - 1 : v - (uint64_t)(q->guard - b);
        /* acq_rel: one modification order with the thieves' CASes decides every index; the
         * acquire half as in the slow push. A failed CAS re-reads v relaxed, so the empty exit
         * above sets fast_base from bottom, not from that top. */
    } while (!ws_cas_acq_rel(&q->ts, &v, next));
    /* relaxed: our own write, made when the item was pushed. */
    void *item = ws_load_relaxed(&q->slot[(size_t)b & q->mask]);
    if (b == t) {
        if (lowered) /* release: as every store of bottom */
            WS_SDEQUE_PUBLISH_BOTTOM(&q->bottom, b + 1);
        q->fast_base = b + 2; /* top == bottom == b + 1: the deque is empty */
        sdeque_drained(q, b + 1);
        return item;
    }
    int64_t old = q->guard;
    q->guard = b;
    sdeque_move_bar(q, old);
    q->fast_base = t + 1;
    if (!lowered)
        WS_SDEQUE_PUBLISH_BOTTOM(&q->bottom, b); /* release: as in ws__sdeque_pop */
    /* Of the reserve's room above the item, one index stays public (docs/deque.md, "pop below
     * the guard"). After the store of bottom: a thief that acquires the raised guard
     * (sdeque_share's release) reads b as bottom, and cannot take index b. */
    if (old > b + 1)
        sdeque_share(q, (uint64_t)(b - t), 1);
    return item;
}

bool ws__sdeque_answer(ws_sdeque *q)
{
    /* relaxed: read first, as in the slow push (sdeque_reopen's CAS decides). */
    uint64_t seen = ws_load_relaxed(&q->limit);
    /* relaxed: the owner's own variable. acquire: as in the slow push (fast_base from it). */
    int64_t b = ws_load_relaxed(&q->bottom);
    uint64_t avail = ws_load_acquire(&q->ts) & WS_SDEQUE_AVAIL_MASK;
    q->fast_base = q->guard - (int64_t)avail + 1;
    bool published = false;
    /* relaxed: set by thieves (sdeque_ask); ordered for the reopenings by their CASes. */
    if (ws_load_relaxed(&q->wanted) != 0) {
        ws_store_relaxed(&q->wanted, 0);
        /* The private items but the newest, which the owner is about to take: the older half. */
        int64_t older = b - 1 - q->guard;
        if (older > 0)
            published = sdeque_share(q, avail, (uint64_t)(older + 1) / 2) > 0;
    }
    sdeque_reopen(q, seen);
    sdeque_reopen_bar(q);
    return published;
}

void ws__sdeque_sweep_free(ws_sdeque *q, bool (*keep)(void *item, int64_t index, void *ctx),
                           void *ctx)
{
    /* relaxed: the owner's own variable and its own writes of the private slots. */
    int64_t b = ws_load_relaxed(&q->bottom), start = b;
    while (
        start > q->guard &&
        ((uintptr_t)ws_load_relaxed(&q->slot[(size_t)(start - 1) & q->mask]) & WS_SDEQUE_ITEM_FREE))
        start--;
    int64_t to = start;
    for (int64_t i = start; i < b; i++) {
        void *item = ws_load_relaxed(&q->slot[(size_t)i & q->mask]);
        if (keep(item, to, ctx))
            ws_store_relaxed(&q->slot[(size_t)to++ & q->mask], item);
    }
    if (to != b)
        WS_SDEQUE_PUBLISH_BOTTOM(&q->bottom, to); /* release: as every store of bottom */
}

static void sdeque_ask(ws_sdeque *q)
{
    /* relaxed: looking first keeps a waiting thief from writing the owner's line over and
     * over; the store is published by the exchange below. */
    if (ws_load_relaxed(&q->wanted) == 0) {
        ws_store_relaxed(&q->wanted, 1);
        /* release: pairs with the acquiring CAS in sdeque_reopen: an owner that reopens over
         * this 0 sees wanted. An RMW, so that a later thief's exchange does not end this
         * one's release sequence. The owner's bounds check catches the 0. */
        WS_SDEQUE_ASK(&q->limit);
        /* release: the same for the owner's take-backs, with sdeque_reopen_bar's CAS. */
        WS_SDEQUE_ASK_BAR(&q->take_bar);
        if (q->ask_also != NULL)
            WS_SDEQUE_ASK_ALSO(q->ask_also); /* release: the same, for the owner's stack spawns */
        if (q->ask_sync != NULL)
            WS_SDEQUE_ASK_SYNC(q->ask_sync); /* release: and for its stack syncs */
    }
}

/* After a steal that met the reserve's room with no item in it: the owner's next push fills it;
 * but stack-task frames (ask_also not 0: frames.c) stay private until a thief asks, and one that
 * went to sleep would not. */
#ifndef WS_SDEQUE_ASK_FOR_FRAMES /* a model removes the step (tests/model_frames_wake.c) */
#define WS_SDEQUE_ASK_FOR_FRAMES 1
#endif
static void sdeque_ask_for_frames(ws_sdeque *q)
{
    if (!WS_SDEQUE_ASK_FOR_FRAMES)
        return;
    /* relaxed: a hint; the request's exchanges order what it needs. */
    if (q->ask_also != NULL && ws_load_relaxed(q->ask_also) != 0)
        sdeque_ask(q);
}

/* A thief took what was the owner's last item. The owner keeps top as it last read it, so its
 * next push would see a deque that is not empty and take the fast path: no reserve, no wake-up,
 * while every worker that could take the new items may have gone to sleep since (the thief
 * among them). Its next push takes the slow path instead, which reads top. */
static void sdeque_emptied(ws_sdeque *q)
{
    /* relaxed: as ws__sdeque_force_slow; the owner's slow push reads top with acquire. */
    ws_exchange_relaxed(&q->limit, 0); /* an RMW, as every write of limit ("Requests") */
    /* The same for the stack spawns, closed rather than 0, so that thieves still try the owner
     * for its frames; 0 (a request's, or no typed task running) stays: a CAS. relaxed: as above. */
    uint64_t seen = q->ask_also != NULL ? ws_load_relaxed(q->ask_also) : 0;
    if (seen != 0)
        ws_cas_relaxed(q->ask_also, &seen, WS_FRAMES_CLOSED_VALUE);
}

/* The bounded steal leaves a free item where it is, and looks at its watched word before its
 * claim; a model removes either (tests/model_wait_rule.c: a wait then runs a future or a job it
 * does not wait for, or the runner's next work). */
#ifndef WS_SDEQUE_STEAL_LEAVES_FREE
#define WS_SDEQUE_STEAL_LEAVES_FREE 1
#endif
#ifndef WS_SDEQUE_BOUND_LOOK
#define WS_SDEQUE_BOUND_LOOK 1
#endif

/* x - y for indices kept modulo 2^48 (top in ts), as a signed difference. */
static int64_t index_diff(uint64_t x, uint64_t y)
{
    uint64_t d = (x - y) << WS_SDEQUE_AVAIL_BITS;
    return (int64_t)d >> WS_SDEQUE_AVAIL_BITS;
}

/* A steal whose CAS lost (another thief, or the owner's pop or share, changed ts) may have left
 * public items behind: the caller is told (*lost), so that a worker about to sleep looks again
 * rather than park with the owner's items public (src/idle.c, park;
 * tests/model_sdeque_retry.c). Not a retry here: that multiplied the executions of every model
 * that steals. By name, so that the model can drop it. */
#ifndef WS_SDEQUE_NOTES_LOST
#define WS_SDEQUE_NOTES_LOST 1
#endif

/* The steal, of any item (bounded NULL), or only of one that the bound allows; *lost (if not
 * NULL) is set when the CAS lost a race. */
static inline void *sdeque_steal(ws_sdeque *q, ws_sdeque_bound *bounded, bool *lost)
{
    /* acquire: pairs with the owner's release moves of the guard: items pushed before are
     * visible. */
    uint64_t v = WS_SDEQUE_THIEF_TS(&q->ts);
    uint64_t t = v >> WS_SDEQUE_AVAIL_BITS;
    if ((v & WS_SDEQUE_AVAIL_MASK) == 0) {
        sdeque_ask(q);
        return NULL;
    }
    if (bounded && index_diff(t, (uint64_t)bounded->floor) < 0)
        return NULL; /* the oldest public item lies below the floor */
    /* acquire: pairs with the release stores of bottom: an item pushed into the reserve
     * (after the guard last moved) is visible once bottom is seen past it. */
    int64_t left = index_diff((uint64_t)WS_SDEQUE_THIEF_BOTTOM(&q->bottom), t);
    if (left <= 0) {
        sdeque_ask_for_frames(q); /* the reserve's room, and no item in it yet */
        return NULL;
    }
    /* seq_cst: announces us before we load the array; pairs with the seq_cst store of the
     * array then load of stealers in the owner's sdeque_reclaim (store buffering). */
    WS_SDEQUE_ENTER(&q->stealers);
    /* seq_cst: acquires the copies of the seq_cst (releasing) store in sdeque_replace, and is
     * our half of that store buffering. Any array loaded here holds item t (docs/deque.md). */
    ws_deque_array *a = WS_SDEQUE_THIEF_ARRAY(&q->array);
    /* relaxed: used only if the CAS wins, and then the slot was not reused (ABA argument). */
    void *item = ws_load_relaxed(&a->slot[(size_t)t & a->mask]);
    /* release: our reads of the array happen before the owner frees it (its seq_cst load of
     * stealers in sdeque_reclaim reads this decrement or a later value). */
    WS_SDEQUE_LEAVE(&q->stealers);
    /* A wait's help takes no free item. The slot may be stale here, but then the CAS below
     * would fail anyway: a refusal is never wrong, and a taken item's tag is the one read. */
    if (WS_SDEQUE_STEAL_LEAVES_FREE && bounded && ((uintptr_t)item & WS_SDEQUE_ITEM_FREE)) {
        bounded->refused_free = true;
        return NULL;
    }
    /* The bound's watched word, read after the acquires of ts and bottom above, which
     * synchronize with the item's publication: a change the owner made before it published the
     * item is seen here. Between this look and the CAS the item cannot change unseen (a pop of
     * a public index moves ts), so the look and the claim act as one step. relaxed: ordered by
     * those acquires (read-read coherence after them). */
    if (bounded && WS_SDEQUE_BOUND_LOOK &&
        ((ws_load_relaxed(bounded->watch) ^ bounded->expect) & bounded->mask) != 0)
        return NULL;
    /* acq_rel: release orders our read of the slot before the owner's reuse of it (its
     * acquire reads of ts); the CAS fails if top or the guard moved since v was read. */
    if (!ws_cas_acq_rel(&q->ts, &v, v + WS_SDEQUE_TOP_ONE - 1)) {
        sdeque_ask_for_frames(q);
        if (lost != NULL && WS_SDEQUE_NOTES_LOST)
            *lost = true;
        return NULL;
    }
    if (left == 1)
        sdeque_emptied(q);
    return item;
}

void *ws_sdeque_steal(ws_sdeque *q)
{
    return sdeque_steal(q, NULL, NULL);
}

void *ws__sdeque_steal_noting(ws_sdeque *q, bool *lost)
{
    return sdeque_steal(q, NULL, lost);
}

void *ws__sdeque_steal_bounded(ws_sdeque *q, ws_sdeque_bound *bound)
{
    return sdeque_steal(q, bound, NULL);
}

size_t ws_sdeque_size(const ws_sdeque *q)
{
    ws_sdeque *m = (ws_sdeque *)q;
    /* relaxed: an estimate. bottom first, so that concurrent steals make it err low. */
    uint64_t b = (uint64_t)ws_load_relaxed(&m->bottom);
    int64_t d = index_diff(b, ws_load_relaxed(&m->ts) >> WS_SDEQUE_AVAIL_BITS);
    return d > 0 ? (size_t)d : 0;
}

size_t ws__sdeque_capacity(const ws_sdeque *q)
{
    return q->mask + 1;
}

size_t ws__sdeque_bytes(const ws_sdeque *q)
{
    /* relaxed: an estimate (one writer, the owner). */
    return ws_load_relaxed(&((ws_sdeque *)q)->bytes);
}

size_t ws__sdeque_public(const ws_sdeque *q)
{
    /* relaxed: owner or quiescent callers only. */
    return (size_t)(ws_load_relaxed(&((ws_sdeque *)q)->ts) & WS_SDEQUE_AVAIL_MASK);
}
