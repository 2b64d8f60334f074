/* deque.h: the per-worker work-stealing deque (Chase-Lev), and its mutex baseline.
 *
 * One owner pushes and pops at the bottom (LIFO); any number of thieves steal the oldest item at
 * the top. Items are non-NULL pointers. The struct is visible so that a worker can embed it; its
 * fields are private. A ws_deque must be placed at a WS_CACHE_LINE-aligned address (the
 * control words are padded apart, see deque.c); static, automatic and ws__aligned_alloc storage
 * all qualify.
 */
#ifndef WS_DEQUE_H
#define WS_DEQUE_H

#include "atomics.h"
#include "platform.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The circular array. Slots are written by the owner and read by thieves, relaxed (the
 * release store of bottom publishes them); see deque.c. */
typedef struct ws_deque_array {
    size_t mask;                         /* capacity - 1; capacity is a power of two */
    struct ws_deque_array *retired_next; /* owner only: the chain of retired arrays */
    _Atomic(void *) slot[];
} ws_deque_array;

typedef struct ws_deque {
    /* bottom comes first: the owner's exchange on it in pop then needs no address arithmetic
     * (the deque is the first member of a worker). */
    /* One past the newest item. Written by the owner only; read by thieves. */
    alignas(WS_CACHE_LINE) _Atomic int64_t bottom;
    /* Owner only: the current array's slots and mask, a private copy of what `array` holds, so
     * that push and pop index the array without first loading the shared pointer. Written at
     * init and by growth, both by the owner. */
    _Atomic(void *) *owner_slot;
    size_t owner_mask;
    /* Next index to steal. Written by thieves' CAS and by the owner's CAS on the last item;
     * read by everyone. Only ever grows. */
    alignas(WS_CACHE_LINE) _Atomic int64_t top;
    /* The current circular array. Written by the owner when it grows; read by everyone. */
    alignas(WS_CACHE_LINE) _Atomic(ws_deque_array *) array;
    ws_deque_array *retired;  /* owner only: arrays replaced by growth, freed at destroy */
    _Atomic uint64_t growths; /* written by the owner, read by statistics readers */
} ws_deque;

/* Owner only (no thief may exist yet). Capacity rounded up to a power of two (0 counts as 1).
 * 0 or ENOMEM. */
int ws_deque_init(ws_deque *q, size_t initial_capacity);
/* Owner only, with no thief still running. Frees the array and every retired one. */
void ws_deque_destroy(ws_deque *q);
/* Owner only; lock-free. item != NULL. 0, or ENOMEM (growth failed) with the deque unchanged. */
int ws_deque_push(ws_deque *q, void *item);
/* Owner only; lock-free. The newest item, or NULL if empty (or a thief won the last one). */
void *ws_deque_pop(ws_deque *q);
/* Any thread; lock-free. The oldest item, or NULL if empty or a race was lost. */
void *ws_deque_steal(ws_deque *q);
/* Any thread. Approximate while others run; exact when quiescent. */
size_t ws_deque_size(const ws_deque *q);

/* Internal, for tests and statistics. Owner or quiescent only. */
size_t ws__deque_capacity(const ws_deque *q);
/* Owner only. As ws_deque_push, but returns the deque's size before the push, or -1 (ENOMEM,
 * deque unchanged): the scheduler wakes idle workers only on a push onto an empty deque. */
int64_t ws__deque_push_size(ws_deque *q, void *item);
/* Owner only: the push of a full deque: doubles the array, then pushes. As
 * ws__deque_push_size (-1: ENOMEM, deque unchanged). */
int64_t ws__deque_push_grow(ws_deque *q, void *item);

/* ---- the owner's operations, inline (the exported ws_deque_push/pop call these) ---- */

/* Owner only: bottom, the index the next push fills. */
static inline int64_t ws__deque_owner_bottom(ws_deque *q)
{
    /* relaxed: only the owner writes bottom, and we are the owner. */
    return ws_load_relaxed(&q->bottom);
}

/* Owner only: the number of items, given bottom b from ws__deque_owner_bottom (top may be
 * stale, which errs high: the owner's t is at most the real top, which is at most b). */
static inline int64_t ws__deque_owner_size(ws_deque *q, int64_t b)
{
    /* acquire: pairs with the seq_cst CAS on top in ws_deque_steal, so that a thief's read of
     * slot top happens before we overwrite that slot when the array wraps around (the push that
     * follows this load). */
    return b - ws_load_acquire(&q->top);
}

/* Owner only: pushes item at bottom b (from ws__deque_owner_bottom) onto a deque that the
 * caller knows has room (ws__deque_owner_size(q, b) is below the capacity). */
static inline void ws__deque_push_fitting(ws_deque *q, void *item, int64_t b)
{
    /* relaxed: the release store of bottom below publishes it. The slot is atomic because a
     * thief that will lose its CAS may read it concurrently. */
    ws_store_relaxed(&q->owner_slot[(size_t)b & q->owner_mask], item);
    /* release: the item (and everything the owner wrote before pushing it, such as the task
     * record it points to) is visible to a thief that reads this bottom; pairs with the
     * seq_cst (acquiring) load of bottom in ws_deque_steal. */
    ws_store_release(&q->bottom, b + 1);
}

/* Owner only: ws_deque_push, returning the size before the push, or -1 (ENOMEM, unchanged). */
static inline int64_t ws__deque_push_inline(ws_deque *q, void *item)
{
    int64_t b = ws__deque_owner_bottom(q);
    int64_t size = ws__deque_owner_size(q, b);
    if (WS_UNLIKELY(size > (int64_t)q->owner_mask))
        return ws__deque_push_grow(q, item); /* full: grow first (out of line) */
    ws__deque_push_fitting(q, item, b);
    return size;
}

static inline void *ws__deque_pop_inline(ws_deque *q)
{
    /* relaxed: the owner's own variables. */
    int64_t b = ws_load_relaxed(&q->bottom) - 1;
    /* seq_cst: claims slot b before we read top. With the seq_cst loads in ws_deque_steal this
     * forbids the store-buffering outcome in which we read a stale top (and take slot b
     * without a CAS) while a thief reads the old bottom (and takes slot b too). */
    ws_exchange_seq_cst(&q->bottom, b);
    /* seq_cst: the other half of the total order above. */
    int64_t t = ws_load_seq_cst(&q->top);
    if (t > b) {
        /* Empty. release: restores bottom; keeps every store of bottom a release, so a thief
         * reading any value of bottom synchronizes with the pushes before it. */
        ws_store_release(&q->bottom, b + 1);
        return NULL;
    }
    /* relaxed: our own write, made by push. */
    void *item = ws_load_relaxed(&q->owner_slot[(size_t)b & q->owner_mask]);
    if (t < b)
        return item; /* more than one item: no thief can reach slot b */
    /* The last item: a thief may be stealing it. seq_cst: the CAS on top decides the race,
     * in the same total order as the thieves' CASes. */
    if (!ws_cas_seq_cst(&q->top, &t, t + 1))
        item = NULL;
    /* release: as above. top is now b + 1 either way, so the deque is empty. */
    ws_store_release(&q->bottom, b + 1);
    return item;
}

/* Debug invariant check (owner only, no concurrent steal): aborts with a message if broken. */
void ws__deque_check(const ws_deque *q);

/* ---- the split deque: the workers' deque (deque.c has the protocol) ----
 *
 * Indices below `guard` are public: thieves take the oldest item there with one CAS on the word
 * `ts`, which holds top and guard - top. Indices from guard up are private: the owner pops them
 * with plain loads and stores (no fence, no locked instruction), and every push is plain. A
 * thief that finds nothing public asks for work (sets `wanted` and clears `limit`); the owner's
 * next push fails its one bounds comparison, takes the slow path and moves the guard up over
 * the older half of its private items. A pop below the guard takes the item back with a CAS.
 * Only these moves of the guard pay a locked instruction. The guard may lie above bottom (a
 * reserve): items pushed there are public at once, so that thieves can take up to `reserve`
 * tasks of an owner that pushed them and then blocked, without its help. Unlike ws_deque, a
 * steal can fail while the deque holds items (private ones), so the split deque does not
 * implement the ws_deque contract; docs/deque.md explains the choice. */

/* ts = top << WS_SDEQUE_AVAIL_BITS | (guard - top). A macro so that a model can make the field
 * small (tests/model_sdeque_publish.c). */
#ifndef WS_SDEQUE_AVAIL_BITS
#define WS_SDEQUE_AVAIL_BITS 16
#endif
#define WS_SDEQUE_AVAIL_MASK  ((UINT64_C(1) << WS_SDEQUE_AVAIL_BITS) - 1)
#define WS_SDEQUE_TOP_ONE     (UINT64_C(1) << WS_SDEQUE_AVAIL_BITS)
#define WS_SDEQUE_MAX_RESERVE 1024
/* The most items the deque holds (65,535): guard - top is at most the larger of the item count
 * and the reserve, so with no more items every one of them can be public at once
 * (ws__sdeque_publish_all). The slow push refuses a push past it: the caller runs the item. A
 * macro so that a model can raise it past the field and fail. */
#ifndef WS_SDEQUE_MAX_ITEMS
#define WS_SDEQUE_MAX_ITEMS ((int64_t)WS_SDEQUE_AVAIL_MASK)
#endif

/* The relied-on orders of the split deque's protocol, by name, so that the model checker's
 * tests (tests/model_sdeque.c) can weaken each one and show that the model then fails. */
#ifndef WS_SDEQUE_SHARE
#define WS_SDEQUE_SHARE(p, v) ws_fetch_add_release((p), (v))
#endif
#ifndef WS_SDEQUE_THIEF_TS
#define WS_SDEQUE_THIEF_TS(p) ws_load_acquire(p)
#endif
#ifndef WS_SDEQUE_PUBLISH_BOTTOM
#define WS_SDEQUE_PUBLISH_BOTTOM(p, v) ws_store_release((p), (v))
#endif
#ifndef WS_SDEQUE_THIEF_BOTTOM
#define WS_SDEQUE_THIEF_BOTTOM(p) ws_load_acquire(p)
#endif
#ifndef WS_SDEQUE_GROW_PUBLISH
#define WS_SDEQUE_GROW_PUBLISH(p, v) ws_store_seq_cst((p), (v))
#endif
#ifndef WS_SDEQUE_THIEF_ARRAY
#define WS_SDEQUE_THIEF_ARRAY(p) ws_load_seq_cst(p)
#endif
/* Reclamation (deque.c): a thief counts itself in `stealers` around its use of an array. */
#ifndef WS_SDEQUE_ENTER
#define WS_SDEQUE_ENTER(p) ws_fetch_add_seq_cst((p), 1)
#endif
#ifndef WS_SDEQUE_LEAVE
#define WS_SDEQUE_LEAVE(p) ws_fetch_sub_release((p), 1)
#endif
#ifndef WS_SDEQUE_RECLAIM_LOAD
#define WS_SDEQUE_RECLAIM_LOAD(p) ws_load_seq_cst(p)
#endif
/* A thief's request (deque.c, "Requests"): its release exchange of limit to 0, and the owner's
 * acquiring CAS that reopens the fast path (tests/model_sdeque_ask.c weakens each). */
#ifndef WS_SDEQUE_ASK
#define WS_SDEQUE_ASK(p) ws_exchange_release((p), 0)
#endif
#ifndef WS_SDEQUE_REOPEN
#define WS_SDEQUE_REOPEN(p, e, v) ws_cas_acquire((p), (e), (v))
#endif
/* The same request's exchange of take_bar to WS_SDEQUE_BAR_ASKED, and the owner's acquiring
 * CAS that puts the guard back there (tests/model_sdeque_ask.c weakens each). */
#define WS_FRAMES_ASKED UINT64_MAX
#ifndef WS_SDEQUE_ASK_SYNC
#define WS_SDEQUE_ASK_SYNC(p) ws_exchange_release((p), WS_FRAMES_ASKED)
#endif
#ifndef WS_SDEQUE_ASK_BAR
#define WS_SDEQUE_ASK_BAR(p) ws_exchange_release((p), WS_SDEQUE_BAR_ASKED)
#endif
#ifndef WS_SDEQUE_REOPEN_BAR
#define WS_SDEQUE_REOPEN_BAR(p, e, v) ws_cas_acquire((p), (e), (v))
#endif
#define WS_SDEQUE_BAR_ASKED INT64_MAX
/* A closed stack-spawn word (frames.c's WS__FRAMES_CLOSED): below every frame's address, so the
 * owner's next stack spawn takes the slow path, and not 0, which thieves take for a pending
 * request (or no typed task running) and skip. A thief that empties the deque closes it. */
#ifndef WS_FRAMES_CLOSED_VALUE /* a model sets it to 0 (tests/model_frames_wake.c) */
#define WS_FRAMES_CLOSED_VALUE 1
#endif
/* The same request's exchange of the owner's stack-spawn word (ask_also; src/frames.c), paired
 * with frames.c's WS_FRAMES_REOPEN (tests/model_frames.c weakens each). */
#ifndef WS_SDEQUE_ASK_ALSO
#define WS_SDEQUE_ASK_ALSO(p) ws_exchange_release((p), 0)
#endif

/* The worker's fields that the inline futures of worksteal.h read and write (future.c), kept
 * in its deque beside the owner's fields of the inline fork-join so that they are part of the
 * same struct ws__fast; the deque itself never uses them.
 *   futures       owner only: free future records, each ready for this worker's inline submit;
 *   pool, runner  set before the worker's thread starts: its pool, and its id + 1 shifted to a
 *                 future's runner bits;
 *   futures_room  owner only: how many more records the inline free may keep on `futures`;
 *   dead_slots    any thread (relaxed RMWs; the owner clears): WS_DEAD_LOCAL while the deque
 *                 may hold slots of futures that this worker claimed where they sat, or
 *                 cancelled: a get (the inline one too) then sweeps them off its top; plus
 *                 WS_DEAD_REMOTE for each future of this worker's that another thread made dead
 *                 since the owner last swept: its next submit sweeps the private part
 *                 (worksteal.h's inline submit leaves it to the library from WS_DEAD_REMOTE on). */
#define WS__FUTURE_FIELDS  \
    void *futures;         \
    const void *pool;      \
    uint32_t runner;       \
    uint32_t futures_room; \
    _Atomic uint32_t dead_slots;
enum { WS_DEAD_LOCAL = 1, WS_DEAD_REMOTE = 2 };

typedef struct ws_sdeque {
    /* The owner's line. bottom is one past the newest item: written by the owner only, read by
     * thieves. take_bar: the guard (below), or WS_SDEQUE_BAR_ASKED while a thief asks for work;
     * the inline take-back of worksteal.h takes an item back with plain accesses only at or
     * above it, so that a request sends the owner's next take-back to the library, which
     * answers it (deque.c, "Requests"); written by the owner and by asking thieves, RMWs only
     * after init. fast_base: one more than a lower bound of top (top as last read with acquire,
     * + 1, which spares the inline push a subtraction); slot and mask the current array: owner
     * only. */
    alignas(WS_CACHE_LINE) _Atomic int64_t bottom;
    _Atomic int64_t take_bar;
    int64_t fast_base;
    _Atomic(void *) *slot;
    size_t mask;
    /* A push finding d = bottom - top items (top as last read) takes the fast path if
     * 1 <= d <= limit, that is if bottom - fast_base < limit, unsigned: the
     * array has room and the deque stays within depth_cap. Set to 0 by a thief asking for work
     * and by ws__sdeque_force_slow; reopened by the owner. Every write after init is a
     * read-modify-write (deque.c, "Requests"). */
    _Atomic uint64_t limit;
    /* The owner's count of joins whose child it pushed and popped back on the fast path (one
     * writer, read by statistics readers); here, beside the fields the inline fork-join of
     * worksteal.h reads, because it counts them (the fields from bottom to fast_syncs are its
     * struct ws__fast). */
    _Atomic uint64_t fast_joins;
    /* Owner only: spawns on this worker (the library's and the inline ones), less those that
     * the library synced; with fast_syncs, the syncs that worksteal.h's inline ws_sync took
     * back (one writer, read by statistics readers), open_spawns - fast_syncs is the number of
     * spawns not synced yet, so that a task returning with one unsynced is caught (worker.c). */
    int64_t open_spawns;
    _Atomic uint64_t fast_syncs;
    WS__FUTURE_FIELDS
    int64_t depth_cap; /* owner only: the total size at which pushes take the slow path */
    int64_t reserve;   /* owner only: how far above an empty deque's bottom the guard goes */
    int64_t guard;     /* owner only: its copy of top + avail (the first private index) */
    /* The thieves' line. ts: top (modulo 2^48) and avail = guard - top, changed only by
     * read-modify-writes (see deque.c). wanted: 1 while a thief waits for the owner to share. */
    alignas(WS_CACHE_LINE) _Atomic uint64_t ts;
    _Atomic uint32_t wanted;
    /* Set by the owner before any thief exists (NULL: none): a word that a thief's request sets
     * to 0 as well as limit, the fast path of the worker's stack spawns (frames.c). */
    _Atomic uint64_t *ask_also;
    /* Likewise: a word that a request raises to WS_FRAMES_ASKED, the bar of the worker's stack
     * syncs (frames.c), so that they answer it. */
    _Atomic uint64_t *ask_sync;
    /* Thieves between their announcement and their last read of a slot (RMWs only): the owner
     * frees retired arrays when it reads 0 after publishing a new array (deque.c). */
    _Atomic uint32_t stealers;
    _Atomic(ws_deque_array *) array; /* written by the owner when it grows or shrinks */
    _Atomic uint64_t growths;        /* written by the owner, read by statistics readers */
    _Atomic size_t bytes; /* the arrays' memory, retired ones included: owner writes, any reads */
    /* Owner only, read in its slow paths: arrays replaced and not yet freed; the shrink's
     * threshold (capacity - 1 above which an array counts as big: 4x the first one); whether
     * the tripwire is armed (a push past capacity/8 then takes the slow path), and since when
     * the deque has been quiet (docs/deque.md, "Giving memory back"). */
    ws_deque_array *retired;
    size_t shrink_mask;
    bool armed;
    uint64_t quiet_since_ns;
} ws_sdeque;

/* Owner only, before any thief exists. 0 or ENOMEM. reserve: how many tasks pushed onto an
 * empty deque thieves may take without the owner's help (at most WS_SDEQUE_MAX_RESERVE; the
 * pool uses its thread count - 1). Indices start at 1 (bottom is never 0). */
int ws_sdeque_init(ws_sdeque *q, size_t initial_capacity, unsigned reserve);
/* Owner only, with no thief still running. */
void ws_sdeque_destroy(ws_sdeque *q);
/* Any thread; lock-free. The oldest public item, or NULL: none is public (the call then asks
 * the owner to share), or a race was lost. */
void *ws_sdeque_steal(ws_sdeque *q);
/* The same, setting *lost when a race was lost (public items may be left; deque.c). */
void *ws__sdeque_steal_noting(ws_sdeque *q, bool *lost);
/* Items are task addresses, with bit 0 set for a free task (WS_SDEQUE_ITEM_FREE: a future or a
 * job, which no frame of the owner's is bound to wait for; internal.h, ws__deque_item). The
 * deque hands every item back as it was pushed, tag included, and the caller strips it; the one
 * operation that reads the tag is the bounded steal below, which leaves a free item where it is. */
#define WS_SDEQUE_ITEM_FREE ((uintptr_t)1)
/* The bound of a wait's steal (wait.c, the leapfrog): an item at index floor or above (an index
 * the owner's bottom had: items it pushed since), not free, and taken only while the bits mask
 * of *watch still equal those of expect (the run that the thief waits for goes on). */
typedef struct ws_sdeque_bound {
    int64_t floor;
    const _Atomic uint32_t *watch;
    uint32_t expect, mask;
    bool refused_free; /* out: the steal left a free item (at the top, at or above floor) */
} ws_sdeque_bound;
/* Any thread; lock-free. As ws_sdeque_steal, but only an item that the bound allows, else NULL
 * (a free item at the top blocks the items above it: the steal takes the top or nothing). The
 * look at the watched word comes after the loads that acquire the item's publication and before
 * the claim, and acts with the claim as one step (deque.c, sdeque_steal). */
void *ws__sdeque_steal_bounded(ws_sdeque *q, ws_sdeque_bound *bound);
/* Any thread: public and private items together. Approximate while others run. */
size_t ws_sdeque_size(const ws_sdeque *q);
/* Owner only: the push that the fast path declined: grows if full, shares if a thief asked.
 * Returns the size before the push, or -1 with the item not pushed (the deque holds
 * WS_SDEQUE_MAX_ITEMS items, or ENOMEM): the caller runs it. *published is set when the call
 * made items visible to thieves (the caller may then wake one). */
int64_t ws__sdeque_push_slow(ws_sdeque *q, void *item, bool *published);
/* Owner only: the pop of an index below the guard (takes a public item back). */
void *ws__sdeque_pop_public(ws_sdeque *q);
/* Owner only, about to take its newest item back (a sync, a wait, its loop's pop) while a thief
 * asks (take_bar is WS_SDEQUE_BAR_ASKED): moves the guard over the older half of the private
 * items below the newest one and reopens the fast paths. True if it published items (the
 * caller then wakes a worker to take them). */
bool ws__sdeque_answer(ws_sdeque *q);
/* Any thread: is a thief's request waiting for this deque's owner to share its private items? */
static inline bool ws__sdeque_asked_for(ws_sdeque *q)
{
    /* relaxed: a statistic's hint (worker.c, note_asked). */
    return ws_load_relaxed(&q->wanted) != 0;
}
/* Owner only: does a thief ask for work (its request waits for the owner's answer)? */
static inline bool ws__sdeque_asked(ws_sdeque *q)
{
    /* relaxed: the owner's line; a request seen late is answered at the next take. */
    return ws_load_relaxed(&q->take_bar) == WS_SDEQUE_BAR_ASKED;
}
/* Owner only: from now on pushes take the slow path once the deque holds more than cap items
 * (cap 0: every push), so that the caller can watch the depth; recomputes limit, unless it is
 * 0 (a thief's request, or ws__sdeque_force_slow), which stays for the next slow push. */
void ws__sdeque_set_depth_cap(ws_sdeque *q, int64_t cap);
/* Any thread: sends the owner's next push to the slow path. */
void ws__sdeque_force_slow(ws_sdeque *q);
/* Owner only, before it blocks (a wait that parks, a declared blocking call): makes every item
 * public, since no push of the owner will answer a thief's request meanwhile. True if it
 * published anything (the caller then wakes a worker to take it). */
bool ws__sdeque_publish_all(ws_sdeque *q);
/* Owner only, about to sleep with nothing to do: gives a big, mostly empty array back at once
 * (no hysteresis: it will not look again until woken) and frees retired arrays. */
void ws__sdeque_trim(ws_sdeque *q);
/* Owner or quiescent: the capacity; the number of public indices, guard - top (for tests). */
size_t ws__sdeque_capacity(const ws_sdeque *q);
size_t ws__sdeque_public(const ws_sdeque *q);
/* Any thread: bytes held in arrays, retired ones included (an estimate while the owner runs). */
size_t ws__sdeque_bytes(const ws_sdeque *q);

/* Owner only: true if the next push may take the fast path (ws__sdeque_push_fitting). One
 * comparison: bottom - fast_base, which is d - 1, wraps around when the deque is empty (d == 0),
 * so that the slow path can tell the caller that it pushed onto an empty deque. A push into a
 * reserve (the guard above bottom) is public at once. */
static inline bool ws__sdeque_fits(ws_sdeque *q)
{
    /* relaxed: bottom is ours; limit is a flag (a thief's request, the profiler's closing):
     * a late view only delays the slow push, which reads it again (deque.c, "Requests"). */
    uint64_t d1 = (uint64_t)(ws_load_relaxed(&q->bottom) - q->fast_base);
    return WS_LIKELY(d1 < ws_load_relaxed(&q->limit));
}

/* A push past capacity >> WS_SDEQUE_TRIPWIRE_SHIFT items into a big array whose tripwire is
 * armed takes the slow path (deque.c, "Shrinking"). A macro so that a model can change it. */
#ifndef WS_SDEQUE_TRIPWIRE_SHIFT
#define WS_SDEQUE_TRIPWIRE_SHIFT 3
#endif

/* Owner only: the depth at which a push trips the wire of a big array; and the fast path's
 * room, the most items counted from top as last read that keep the array from overflowing, the
 * deque within depth_cap and below an armed tripwire, derived from those fields each time, so
 * that it follows every change of the array. */
static inline int64_t ws__sdeque_tripwire(const ws_sdeque *q)
{
    return (int64_t)(q->mask >> WS_SDEQUE_TRIPWIRE_SHIFT);
}
static inline int64_t ws__sdeque_room(const ws_sdeque *q)
{
    int64_t room = (int64_t)q->mask < q->depth_cap ? (int64_t)q->mask : q->depth_cap;
    if (room > WS_SDEQUE_MAX_ITEMS - 1)
        room = WS_SDEQUE_MAX_ITEMS - 1; /* a push past the most items takes the slow path */
    return q->armed && room > ws__sdeque_tripwire(q) ? ws__sdeque_tripwire(q) : room;
}

/* Owner only, after ws__sdeque_fits: plain stores (a release store is a plain store on x86). */
static inline void ws__sdeque_push_fitting(ws_sdeque *q, void *item)
{
    /* relaxed: the owner's own variable. */
    int64_t b = ws_load_relaxed(&q->bottom);
    /* relaxed: published by the release store of bottom (if below the guard) or by a share. */
    ws_store_relaxed(&q->slot[(size_t)b & q->mask], item);
    /* release: a thief that reads this bottom and finds index b below the guard takes the
     * item: it must see the slot and the record the item points to (its acquire load). */
    WS_SDEQUE_PUBLISH_BOTTOM(&q->bottom, b + 1);
}

/* Owner only: the newest item, or NULL if the deque is empty (or thieves took the rest).
 * Plain loads and stores when the item lies at or above the guard. */
static inline void *ws__sdeque_pop(ws_sdeque *q)
{
    /* relaxed: the owner's own variable. */
    int64_t b = ws_load_relaxed(&q->bottom) - 1;
    if (WS_UNLIKELY(b < q->guard))
        return ws__sdeque_pop_public(q);
    /* relaxed: our own write; private (no thief may claim an index at or above the guard). */
    void *item = ws_load_relaxed(&q->slot[(size_t)b & q->mask]);
    /* release: every store of bottom is a release, so that a thief reading any value of it
     * sees the pushes before (the items it may take below the guard). */
    WS_SDEQUE_PUBLISH_BOTTOM(&q->bottom, b);
    return item;
}

/* Owner only: the newest item if it is private (a pop would take it with plain accesses),
 * else NULL. */
static inline void *ws__sdeque_peek_private(ws_sdeque *q)
{
    /* relaxed: the owner's own variable and its own write of the slot. */
    int64_t b = ws_load_relaxed(&q->bottom) - 1;
    return b >= q->guard ? ws_load_relaxed(&q->slot[(size_t)b & q->mask]) : NULL;
}

/* Owner only: whether the newest item, public or private, is free (WS_SDEQUE_ITEM_FREE), as
 * far as the owner can tell without taking it: a thief may take a public one meanwhile, and an
 * empty deque's answer means nothing (a pop then finds nothing). The slot is the owner's own
 * write, and its tag is read without following the pointer. */
static inline void *ws__sdeque_newest(ws_sdeque *q)
{
    /* relaxed: the owner's own variable and its own write of the slot. */
    int64_t b = ws_load_relaxed(&q->bottom) - 1;
    return ws_load_relaxed(&q->slot[(size_t)b & q->mask]);
}
static inline bool ws__sdeque_newest_is_free(ws_sdeque *q)
{
    return ((uintptr_t)ws__sdeque_newest(q) & WS_SDEQUE_ITEM_FREE) != 0;
}
/* Owner only: as far as the owner can tell, is its newest item `item` (as it was pushed)? */
static inline bool ws__sdeque_newest_is(ws_sdeque *q, const void *item)
{
    return ws__sdeque_newest(q) == item;
}

/* Owner only: sweeps the private items that keep(item, index, ctx) rejects out of the run of
 * free items on top of the deque (from the newest down to the first item that is not free, or
 * the guard), keeping the others in their order; keep learns the index each kept item moves to.
 * The run is private, so no thief can take from it meanwhile. */
void ws__sdeque_sweep_free(ws_sdeque *q, bool (*keep)(void *item, int64_t index, void *ctx),
                           void *ctx);

/* Owner only: takes back the newest item, which ws__sdeque_peek_private has just returned. */
static inline void ws__sdeque_pop_private(ws_sdeque *q)
{
    /* relaxed: the owner's own variable. release: as in ws__sdeque_pop. */
    WS_SDEQUE_PUBLISH_BOTTOM(&q->bottom, ws_load_relaxed(&q->bottom) - 1);
}

/* ---- the baseline: the same operations under one pthread mutex (deque_locked.c) ---- */

typedef struct ws_locked_deque {
    pthread_mutex_t lock; /* guards every field below (writes to top and bottom included) */
    void **slot;
    size_t mask;
    /* Atomic only so that the size can be estimated without the lock (relaxed loads). */
    _Atomic int64_t top, bottom;
    uint64_t growths;
    _Atomic uint64_t fast_joins; /* as in ws_sdeque (the locked build has no inline join) */
    int64_t open_spawns;         /* as in ws_sdeque */
    _Atomic uint64_t fast_syncs; /* as in ws_sdeque (always 0 here) */
    WS__FUTURE_FIELDS            /* as in ws_sdeque (the inline futures never run here) */
} ws_locked_deque;

int ws_locked_deque_init(ws_locked_deque *q, size_t initial_capacity);
void ws_locked_deque_destroy(ws_locked_deque *q);
int ws_locked_deque_push(ws_locked_deque *q, void *item); /* owner only; may block */
void *ws_locked_deque_pop(ws_locked_deque *q);            /* owner only; may block */
void *ws_locked_deque_steal(ws_locked_deque *q);          /* any thread; may block */
/* As the split deque's. */
void *ws__locked_deque_steal_bounded(ws_locked_deque *q, ws_sdeque_bound *bound);
size_t ws_locked_deque_size(const ws_locked_deque *q);              /* any thread; approximate */
int64_t ws__locked_deque_push_size(ws_locked_deque *q, void *item); /* as ws__deque_push_size */
/* Owner only; lock-free: the size and bottom read without the lock (estimates). */
int64_t ws__locked_deque_owner_bottom(ws_locked_deque *q);
bool ws__locked_deque_newest_is_free(ws_locked_deque *q); /* as the split deque's; may block */
bool ws__locked_deque_newest_is(ws_locked_deque *q, const void *item); /* likewise */
int64_t ws__locked_deque_owner_size(ws_locked_deque *q, int64_t b);

#endif /* WS_DEQUE_H */
