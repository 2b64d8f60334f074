/* deque_locked.c: the work-stealing deque under one pthread mutex.
 *
 * The baseline the Chase-Lev deque is measured against (bench/, and a bench-only build of the
 * scheduler): the same operations and the same contract as ws_deque_*, each a critical section
 * on q->lock, which guards every field. The array grows by doubling like the lock-free one.
 */
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
    q->top = q->bottom = 0;
    q->growths = 0;
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
    for (int64_t i = q->top; i < q->bottom; i++)
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
    if (q->bottom - q->top <= (int64_t)q->mask || grow_locked(q) == 0) {
        size = q->bottom - q->top;
        q->slot[(size_t)q->bottom++ & q->mask] = item;
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
    if (q->bottom > q->top)
        item = q->slot[(size_t)--q->bottom & q->mask];
    pthread_mutex_unlock(&q->lock);
    return item;
}

void *ws_locked_deque_steal(ws_locked_deque *q)
{
    void *item = NULL;
    pthread_mutex_lock(&q->lock);
    if (q->bottom > q->top)
        item = q->slot[(size_t)q->top++ & q->mask];
    pthread_mutex_unlock(&q->lock);
    return item;
}

size_t ws_locked_deque_size(const ws_locked_deque *q)
{
    ws_locked_deque *m = (ws_locked_deque *)q; /* the lock is the only thing we modify */
    pthread_mutex_lock(&m->lock);
    size_t n = (size_t)(m->bottom - m->top);
    pthread_mutex_unlock(&m->lock);
    return n;
}
