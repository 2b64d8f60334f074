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

#include "platform.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ws_deque_array ws_deque_array; /* defined in deque.c */

typedef struct ws_deque {
    /* Next index to steal. Written by thieves' CAS and by the owner's CAS on the last item;
     * read by everyone. Only ever grows. */
    alignas(WS_CACHE_LINE) _Atomic int64_t top;
    /* One past the newest item. Written by the owner only; read by thieves. */
    alignas(WS_CACHE_LINE) _Atomic int64_t bottom;
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
/* Debug invariant check (owner only, no concurrent steal): aborts with a message if broken. */
void ws__deque_check(const ws_deque *q);

/* ---- the baseline: the same operations under one pthread mutex (deque_locked.c) ---- */

typedef struct ws_locked_deque {
    pthread_mutex_t lock; /* guards every field below */
    void **slot;
    size_t mask;
    int64_t top, bottom;
    uint64_t growths;
} ws_locked_deque;

int ws_locked_deque_init(ws_locked_deque *q, size_t initial_capacity);
void ws_locked_deque_destroy(ws_locked_deque *q);
int ws_locked_deque_push(ws_locked_deque *q, void *item);           /* owner only; may block */
void *ws_locked_deque_pop(ws_locked_deque *q);                      /* owner only; may block */
void *ws_locked_deque_steal(ws_locked_deque *q);                    /* any thread; may block */
size_t ws_locked_deque_size(const ws_locked_deque *q);              /* any thread; approximate */
int64_t ws__locked_deque_push_size(ws_locked_deque *q, void *item); /* as ws__deque_push_size */

#endif /* WS_DEQUE_H */
