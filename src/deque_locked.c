/* deque_locked.c: the work-stealing deque under one pthread mutex.
 *
 * top and bottom are atomics written under the lock with relaxed stores (the lock orders
 * them); ws__locked_deque_owner_size reads them without the lock, relaxed, as an estimate.
 *
 * The baseline the Chase-Lev deque is measured against (bench/, and a bench-only build of the
 * scheduler): the same operations and the same contract as ws_deque_*, each a critical section
 * on q->lock, which guards every field. The array grows by doubling like the lock-free one.
 */
#include "atomics.h"
#include "deque.h"

#include <errno.h>
#include <string.h>

int ws_locked_deque_init(ws_locked_deque *q, size_t initial_capacity)
{
    size_t cap = 1;
    while (cap < initial_capacity && cap <= SIZE_MAX / 2)
        cap <<= 1;
    if (cap < initial_capacity || cap > SIZE_MAX / sizeof(void *))
        return ENOMEM;
    q->slot = ws__malloc(cap * sizeof(void *));
    if (q->slot == NULL)
        return ENOMEM;
    int err = pthread_mutex_init(&q->lock, NULL);
    if (err != 0) {
        ws__free(q->slot);
        return err;
    }
    q->mask = cap - 1;
    ws_store_relaxed(&q->top, 0); /* relaxed: initialisation */
    ws_store_relaxed(&q->bottom, 0);
    q->growths = 0;
    ws_store_relaxed(&q->fast_joins, 0); /* relaxed: before any other thread sees q */
    q->open_spawns = 0;
    ws_store_relaxed(&q->fast_syncs, 0); /* relaxed: as above */
    return 0;
}

void ws_locked_deque_destroy(ws_locked_deque *q)
{
    pthread_mutex_destroy(&q->lock);
    ws__free(q->slot);
}

/* Called with q->lock held. 0 or ENOMEM (deque unchanged). */
static int grow_locked(ws_locked_deque *q)
{
    size_t cap = (q->mask + 1) * 2;
    if (cap == 0 || cap > SIZE_MAX / sizeof(void *))
        return ENOMEM;
    void **slot = ws__malloc(cap * sizeof(void *));
    if (slot == NULL)
        return ENOMEM;
    /* relaxed: under the lock, which orders every write of top and bottom. */
    int64_t top = ws_load_relaxed(&q->top), bottom = ws_load_relaxed(&q->bottom);
    for (int64_t i = top; i < bottom; i++)
        slot[(size_t)i & (cap - 1)] = q->slot[(size_t)i & q->mask];
    ws__free(q->slot);
    q->slot = slot;
    q->mask = cap - 1;
    q->growths++;
    return 0;
}

int64_t ws__locked_deque_push_size(ws_locked_deque *q, void *item)
{
    int64_t size = -1;
    pthread_mutex_lock(&q->lock);
    /* relaxed: under the lock (see the top of the file). */
    int64_t top = ws_load_relaxed(&q->top), bottom = ws_load_relaxed(&q->bottom);
    if (bottom - top <= (int64_t)q->mask || grow_locked(q) == 0) {
        size = bottom - top;
        q->slot[(size_t)bottom & q->mask] = item;
        ws_store_relaxed(&q->bottom, bottom + 1);
    }
    pthread_mutex_unlock(&q->lock);
    return size;
}

int ws_locked_deque_push(ws_locked_deque *q, void *item)
{
    return ws__locked_deque_push_size(q, item) < 0 ? ENOMEM : 0;
}

void *ws_locked_deque_pop(ws_locked_deque *q)
{
    void *item = NULL;
    pthread_mutex_lock(&q->lock);
    /* relaxed: under the lock. */
    int64_t bottom = ws_load_relaxed(&q->bottom);
    if (bottom > ws_load_relaxed(&q->top)) {
        item = q->slot[(size_t)(bottom - 1) & q->mask];
        ws_store_relaxed(&q->bottom, bottom - 1);
    }
    pthread_mutex_unlock(&q->lock);
    return item;
}

void *ws_locked_deque_steal(ws_locked_deque *q)
{
    return ws__locked_deque_steal_bounded(q, NULL);
}

/* Whether the bound (NULL: none) lets a steal take item at index top. Under the lock: the
 * item, top and the owner's change of the watched word before its push are all ordered by it. */
static bool bound_allows(ws_sdeque_bound *bound, int64_t top, void *item)
{
    if (bound == NULL)
        return true;
    if (top < bound->floor)
        return false;
    if ((uintptr_t)item & WS_SDEQUE_ITEM_FREE) {
        bound->refused_free = true;
        return false;
    }
    /* relaxed: under the lock (see above). */
    return ((ws_load_relaxed(bound->watch) ^ bound->expect) & bound->mask) == 0;
}

void *ws__locked_deque_steal_bounded(ws_locked_deque *q, ws_sdeque_bound *bound)
{
    void *item = NULL;
    pthread_mutex_lock(&q->lock);
    /* relaxed: under the lock. */
    int64_t top = ws_load_relaxed(&q->top);
    if (ws_load_relaxed(&q->bottom) > top) {
        item = q->slot[(size_t)top & q->mask];
        if (bound_allows(bound, top, item))
            ws_store_relaxed(&q->top, top + 1);
        else
            item = NULL;
    }
    pthread_mutex_unlock(&q->lock);
    return item;
}

size_t ws_locked_deque_size(const ws_locked_deque *q)
{
    ws_locked_deque *m = (ws_locked_deque *)q;
    int64_t n = ws__locked_deque_owner_size(m, ws__locked_deque_owner_bottom(m));
    return n > 0 ? (size_t)n : 0;
}

/* The newest item, or NULL if the deque is empty. */
static void *newest(ws_locked_deque *q)
{
    pthread_mutex_lock(&q->lock);
    /* relaxed: under the lock. */
    int64_t bottom = ws_load_relaxed(&q->bottom);
    void *item = bottom > ws_load_relaxed(&q->top) ? q->slot[(size_t)(bottom - 1) & q->mask] : NULL;
    pthread_mutex_unlock(&q->lock);
    return item;
}

bool ws__locked_deque_newest_is_free(ws_locked_deque *q)
{
    return ((uintptr_t)newest(q) & WS_SDEQUE_ITEM_FREE) != 0;
}

bool ws__locked_deque_newest_is(ws_locked_deque *q, const void *item)
{
    return newest(q) == item;
}

int64_t ws__locked_deque_owner_bottom(ws_locked_deque *q)
{
    /* relaxed: an estimate without the lock. */
    return ws_load_relaxed(&q->bottom);
}

int64_t ws__locked_deque_owner_size(ws_locked_deque *q, int64_t b)
{
    /* relaxed: an estimate without the lock; bottom was read first, so a concurrent steal makes
     * it err low rather than negative. */
    return b - ws_load_relaxed(&q->top);
}
