/* model_injector.c: the injector queue (src/injector.c, included as it is) with several
 * producers and several consumers, under the GenMC model checker (RC11).
 *
 *   genmc --rc11 --disable-estimation -- -I src -I include [-DPRODUCERS=n -DITEMS=n
 *         -DCONSUMERS=n -DTRIES=n] tests/model_injector.c
 *
 * PRODUCERS threads push ITEMS records each (ws__injector_push: the tail exchange, then the
 * link); CONSUMERS threads each try TRIES takes (ws__injector_take: the try-lock, take_locked,
 * the unlock), as workers do between their other looks. Each record carries a plain payload
 * written before its push: a consumer that takes it reads the payload (a data race or a wrong
 * value is an error) and counts the take. After every thread is joined, main takes what is
 * left: every record is taken exactly once, and those of one producer in the order it pushed
 * them. The park/wake protocol around the queue (the seq_cst tail and the sleepers) is
 * tests/model_idle.c's; here the queue alone, with two producers or two consumers, which
 * model_idle cannot afford with the worker loop around them:
 *   two producers and two consumers, one record and one take each: the consumer lock, and the
 *     producers' serialization on the tail;
 *   one producer of three records and one consumer of two takes: a record returned without a
 *     look at the tail (the third of a queue), so that the link and its read alone publish it;
 *   one producer of four records and one consumer of three takes (tests/idle.cmake): the third
 *     take returns a record whose link the second take read first in take_locked, so that the
 *     acquire of that read alone publishes it (329 executions; that read relaxed gives a race).
 * WEAKEN=n relaxes the orders these cases rely on, through the hooks of injector.c (each must
 * fail; tests/model.cmake checks it): 1 the consumer lock (WS_INJECTOR_LOCK and
 * WS_INJECTOR_UNLOCK), two consumers; 2 the link (WS_INJECTOR_LINK) and 3 its read
 * (WS_INJECTOR_NEXT_READ), the third record.
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

#ifndef WEAKEN
#define WEAKEN 0
#endif
#if WEAKEN == 1
#define WS_INJECTOR_LOCK(p)   ws_exchange_relaxed((p), 1)
#define WS_INJECTOR_UNLOCK(p) ws_store_relaxed((p), 0)
#elif WEAKEN == 2
#define WS_INJECTOR_LINK(p, v) ws_store_relaxed((p), (v))
#elif WEAKEN == 3
#define WS_INJECTOR_NEXT_READ(p) ws_load_relaxed(p)
#endif

#include "../src/injector.c"

#ifndef PRODUCERS
#define PRODUCERS 2
#endif
#ifndef ITEMS
#define ITEMS 1
#endif
#ifndef CONSUMERS
#define CONSUMERS 2
#endif
#ifndef TRIES
#define TRIES 1
#endif
#define RECORDS (PRODUCERS * ITEMS)

static ws__injector queue;
static ws__task records[RECORDS];
static int payload[RECORDS]; /* plain: written before the push, read by the taker */
static atomic_int taken[RECORDS];
static atomic_int order[PRODUCERS]; /* the next record each producer's taker expects */

static void record_fn(void *arg)
{
    (void)arg;
}

static void take(ws__task *t)
{
    int i = (int)(t - records);
    assert(i >= 0 && i < RECORDS && t->fn == record_fn && t->arg == &payload[i]);
    assert(payload[i] == 1 + i);
    /* relaxed: counts, checked after every thread is joined; FIFO per producer: the records of
     * producer p are taken in the order p pushed them (one consumer at a time holds the lock,
     * and the lock orders the consumers). */
    assert(atomic_fetch_add_explicit(&taken[i], 1, memory_order_relaxed) == 0);
    int p = i / ITEMS;
    assert(atomic_fetch_add_explicit(&order[p], 1, memory_order_relaxed) == i % ITEMS);
}

static void *producer(void *arg)
{
    int p = (int)(intptr_t)arg;
    for (int k = 0; k < ITEMS; k++) {
        int i = p * ITEMS + k;
        payload[i] = 1 + i;
        ws__task_init(&records[i], record_fn, &payload[i]);
        ws__injector_push(&queue, &records[i]);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (int k = 0; k < TRIES; k++) {
        ws__task *t = ws__injector_take(&queue);
        if (t != NULL)
            take(t);
    }
    return NULL;
}

int main(void)
{
    ws__injector_init(&queue);
    pthread_t pt[PRODUCERS], ct[CONSUMERS];
    for (int p = 0; p < PRODUCERS; p++)
        pthread_create(&pt[p], NULL, producer, (void *)(intptr_t)p);
    for (int c = 0; c < CONSUMERS; c++)
        pthread_create(&ct[c], NULL, consumer, NULL);
    for (int p = 0; p < PRODUCERS; p++)
        pthread_join(pt[p], NULL);
    for (int c = 0; c < CONSUMERS; c++)
        pthread_join(ct[c], NULL);
    /* Every push is complete: what is left comes out now, in order. */
    for (ws__task *t; (t = ws__injector_take(&queue)) != NULL;)
        take(t);
    for (int i = 0; i < RECORDS; i++)
        assert(atomic_load_explicit(&taken[i], memory_order_relaxed) == 1);
    return 0;
}
