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

/* ---- the baseline: the same operations under one pthread mutex (deque_locked.c) ---- */

typedef struct ws_locked_deque {
    pthread_mutex_t lock; /* guards every field below (writes to top and bottom included) */
    void **slot;
    size_t mask;
    /* Atomic only so that the size can be estimated without the lock (relaxed loads). */
    _Atomic int64_t top, bottom;
    uint64_t growths;
} ws_locked_deque;

int ws_locked_deque_init(ws_locked_deque *q, size_t initial_capacity);
void ws_locked_deque_destroy(ws_locked_deque *q);
int ws_locked_deque_push(ws_locked_deque *q, void *item);           /* owner only; may block */
void *ws_locked_deque_pop(ws_locked_deque *q);                      /* owner only; may block */
void *ws_locked_deque_steal(ws_locked_deque *q);                    /* any thread; may block */
size_t ws_locked_deque_size(const ws_locked_deque *q);              /* any thread; approximate */
int64_t ws__locked_deque_push_size(ws_locked_deque *q, void *item); /* as ws__deque_push_size */
/* Owner only; lock-free: the size and bottom read without the lock (estimates). */
int64_t ws__locked_deque_owner_bottom(ws_locked_deque *q);
int64_t ws__locked_deque_owner_size(ws_locked_deque *q, int64_t b);

#endif /* WS_DEQUE_H */
