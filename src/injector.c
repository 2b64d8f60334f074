/* injector.c: the FIFO queue that external submissions go through.
 *
 * Producers are any threads; consumers are the pool's workers. The queue is an intrusive linked
 * list of task records after Dmitry Vyukov's multi-producer single-consumer queue (the
 * "intrusive MPSC node-based queue", 2010): a producer swaps itself in as the tail with one
 * atomic exchange and then links the previous tail to itself, so producers never wait for each
 * other or for the consumer. Workers take turns as the single consumer through a try-lock: a
 * worker that finds the consumer side busy goes on to steal instead of waiting, so the try-lock
 * never blocks anyone. docs/scheduler.md says why this shape and not a sharded queue.
 *
 *   producer:  t->next = NULL;  prev = exchange(tail, t);  prev->next = t   (release)
 *   consumer:  follows head->next (acquire); the stub node lets head move past the last item.
 *
 * Between a producer's exchange and its link, the consumer sees the chain end early and returns
 * NULL although an item exists ("a push in flight"). That is not a lost wake-up: a worker about
 * to park that sees the tail moved but can take nothing yields and looks again instead of
 * sleeping (idle.c, park).
 *
 * Invariants:
 *   1. head is the stub or the oldest item not yet returned; only the lock holder moves it.
 *   2. An item is returned only once its next link is set, so no producer writes to a returned
 *      record: the record may be freed or reused as soon as it is returned.
 *   3. FIFO per producer: items of one thread are linked in the order of their exchanges.
 */
#include "internal.h"

/* The orders the queue and the parking protocol rely on, by name, so that tests/model_idle.c
 * can weaken each one and show that the checker then finds a lost job or a data race. */
#ifndef WS_INJECTOR_TAIL_EXCHANGE
#define WS_INJECTOR_TAIL_EXCHANGE(p, v) ws_exchange_seq_cst((p), (v))
#endif
#ifndef WS_INJECTOR_TAIL_READ
#define WS_INJECTOR_TAIL_READ(p) ws_load_seq_cst(p)
#endif
#ifndef WS_INJECTOR_LINK
#define WS_INJECTOR_LINK(p, v) ws_store_release((p), (v))
#endif
#ifndef WS_INJECTOR_NEXT_READ
#define WS_INJECTOR_NEXT_READ(p) ws_load_acquire(p)
#endif
#ifndef WS_INJECTOR_LOCK
#define WS_INJECTOR_LOCK(p) ws_exchange_acq_rel((p), 1)
#endif
#ifndef WS_INJECTOR_UNLOCK
#define WS_INJECTOR_UNLOCK(p) ws_store_release((p), 0)
#endif

void ws__injector_init(ws__injector *q)
{
    /* relaxed: initialisation, before the pool's threads exist. */
    ws_store_relaxed(&q->stub.next, NULL);
    ws_store_relaxed(&q->tail, &q->stub);
    ws_store_relaxed(&q->head, &q->stub);
    ws_store_relaxed(&q->consumer, 0);
}

ws__task *ws__injector_push_begin(ws__injector *q, ws__task *t)
{
    /* relaxed: the release store that links t (ws__injector_push_end) publishes this. */
    ws_store_relaxed(&t->next, NULL);
    /* seq_cst: producers serialize on the tail (the acquire half orders our link store after
     * the previous producer's writes to prev), and the exchange is the producer's half of the
     * store-buffering protocol with parking workers: it is followed by a seq_cst load of the
     * sleeper count (ws__pool_inject), against the sleeper's seq_cst increment and seq_cst
     * load of the tail (ws__injector_maybe_nonempty). */
    return WS_INJECTOR_TAIL_EXCHANGE(&q->tail, t);
}

void ws__injector_push_end(ws__task *prev, ws__task *t)
{
    /* release: publishes t's fields and the link; pairs with the acquire loads of next in
     * take_locked. */
    WS_INJECTOR_LINK(&prev->next, t);
}

void ws__injector_push(ws__injector *q, ws__task *t)
{
    ws__injector_push_end(ws__injector_push_begin(q, t), t);
}

bool ws__injector_maybe_nonempty(ws__injector *q)
{
    /* relaxed: a hint; head moves only forward under the consumer lock. */
    if (ws_load_relaxed(&q->head) != &q->stub)
        return true;
    /* seq_cst: a parking worker calls this after announcing itself as a sleeper (a seq_cst
     * RMW); a producer exchanges the tail (a seq_cst RMW) and then loads the sleeper count with
     * seq_cst before deciding whether to wake anyone (ws__pool_inject). All four
     * are seq_cst, so one of the two sees the other: store buffering. */
    return WS_INJECTOR_TAIL_READ(&q->tail) != &q->stub;
}

/* Called with the consumer lock held: the oldest item (if owner is not NULL, only if it belongs
 * to owner), or NULL. */
static ws__task *take_locked(ws__injector *q, const void *owner)
{
    ws__task *stub = &q->stub;
    /* relaxed: head is only written under the consumer lock, which we hold. */
    ws__task *head = ws_load_relaxed(&q->head);
    /* acquire: pairs with the producer's release store of the link; t's fields are visible. */
    ws__task *next = WS_INJECTOR_NEXT_READ(&head->next);
    if (head == stub) {
        if (next == NULL)
            return NULL;                  /* empty, or the first push is in flight */
        ws_store_relaxed(&q->head, next); /* relaxed: under the lock */
        head = next;
        next = WS_INJECTOR_NEXT_READ(&head->next); /* acquire: as above */
    }
    /* head is linked and not returned: its fields are stable. */
    if (owner != NULL && !ws__task_is_job_of(head, owner))
        return NULL;
    if (next != NULL) {
        ws_store_relaxed(&q->head, next); /* relaxed: under the lock */
        return head;
    }
    /* head is the last linked item. acquire: if the tail is still head, no producer is in
     * flight and we may put the stub behind head. */
    if (ws_load_acquire(&q->tail) != head)
        return NULL; /* a push is in flight; its producer will notify */
    ws__injector_push(q, stub);
    next = WS_INJECTOR_NEXT_READ(&head->next); /* acquire: as above */
    if (next == NULL)
        return NULL;                  /* another producer got between; its link is pending */
    ws_store_relaxed(&q->head, next); /* relaxed: under the lock */
    return head;
}

ws__task *ws__injector_take_owned(ws__injector *q, const void *owner)
{
    if (!ws__injector_maybe_nonempty(q))
        return NULL;
    /* acquire: pairs with the release store that unlocks, so the previous consumer's moves of
     * head are visible. A busy consumer side means someone is draining: go elsewhere. */
    if (WS_INJECTOR_LOCK(&q->consumer) != 0)
        return NULL;
    ws__task *t = take_locked(q, owner);
    /* release: hands head over to the next consumer. */
    WS_INJECTOR_UNLOCK(&q->consumer);
    return t;
}

ws__task *ws__injector_take(ws__injector *q)
{
    return ws__injector_take_owned(q, NULL);
}
