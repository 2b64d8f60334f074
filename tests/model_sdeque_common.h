/* model_sdeque_common.h: what the split deque's models (model_sdeque.c,
 * model_sdeque_reclaim.c) share, included after src/deque.c: the library's platform functions
 * that deque.c calls (model_platform.h), and items checked by whoever takes them.
 *
 * Each item carries a plain payload written before its push; whoever takes it reads it (a
 * data race or a wrong value is an error) and counts the take.
 */
#ifndef WS_MODEL_SDEQUE_COMMON_H
#define WS_MODEL_SDEQUE_COMMON_H

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "model_platform.h"

/* Items per model: 3 unless the model says otherwise. */
#ifndef MODEL_NITEMS
#define MODEL_NITEMS 3
#endif
enum { NITEMS = MODEL_NITEMS };

typedef struct model_item {
    int payload;      /* plain: written before the push, read by the taker */
    atomic_int taken; /* takes */
    int64_t end;      /* owner only: as a ws_task's recorded bottom (model_sdeque_inline.c) */
} model_item;

static model_item items[NITEMS];
static ws_sdeque deque;

static void take(void *x)
{
    model_item *it = x;
    assert(it != NULL);
    assert(it->payload == 1 + (int)(it - items));
    atomic_fetch_add_explicit(&it->taken, 1, memory_order_relaxed);
}

/* The slow push's out-parameter, not a block-scoped local: GenMC reports a later push's write
 * to a block-scoped one as an access to freed memory once clang reuses its stack slot. */
static bool published;

/* A push as the library makes it (ws__wdeque_push_size): plain when the fast path fits. */
static void push(int i)
{
    items[i].payload = 1 + i;
    if (ws__sdeque_fits(&deque)) {
        ws__sdeque_push_fitting(&deque, &items[i]);
    } else {
        int64_t before = ws__sdeque_push_slow(&deque, &items[i], &published);
        assert(before >= 0);
    }
}

static void pop_all(void)
{
    void *x;
    while ((x = ws__sdeque_pop(&deque)) != NULL)
        take(x);
}

/* Steals that came back empty (the thief then asked, or lost a race to another taker), counted
 * in the models that define MODEL_COUNT_MISSED (the count's writes add executions). */
static atomic_int missed;

/* The thief: THEFTS steal attempts (a number the model defines). */
static void *thief(void *arg)
{
    (void)arg;
    for (int i = 0; i < THEFTS; i++) {
        void *x = ws_sdeque_steal(&deque);
        if (x != NULL)
            take(x);
#ifdef MODEL_COUNT_MISSED
        else /* relaxed: a count read after every thread is joined */
            atomic_fetch_add_explicit(&missed, 1, memory_order_relaxed);
#endif
    }
    return NULL;
}

/* Runs the owner and a thief of the model's own on the initialised deque, then checks that each
 * of the first n items was taken exactly once. */
static void run_owner_and(void *(*owner)(void *), void *(*a_thief)(void *), int n)
{
    pthread_t o, t;
    pthread_create(&o, NULL, owner, NULL);
    pthread_create(&t, NULL, a_thief, NULL);
    pthread_join(o, NULL);
    pthread_join(t, NULL);
    for (int i = 0; i < n; i++)
        assert(atomic_load_explicit(&items[i].taken, memory_order_relaxed) == 1);
}

/* The same with the thief above. */
static void run_owner_and_thief(void *(*owner)(void *), int n)
{
    run_owner_and(owner, thief, n);
}

#endif /* WS_MODEL_SDEQUE_COMMON_H */
