/* model_future_inline.c: the futures' inline fast path of include/worksteal.h (its submit and
 * get, as they are) on the split deque (src/deque.c) against the state word's other parties
 * (src/future_state.h), under the GenMC model checker, in every execution RC11 allows.
 *
 *   genmc --rc11 --disable-estimation -- -I src -I include [-DCANCEL=1] [-DWEAKEN=n]
 *         tests/model_future_inline.c
 *
 * The owner, a worker, submits a future with the header's ws__future_submit_inline (a record
 * from its list of ready ones, pushed as an inline spawn), hands the handle to another thread
 * (a release store), and gets it with ws__future_get_inline: while the future is its deque's
 * newest private item and not started, that claims it (INLINE), takes the slot back, runs it and
 * finishes it with one fetch-and-add, calling ws__future_finish_rare if a waiter announced
 * itself. Otherwise the header calls the library's get, which here is future.c's protocol on
 * the word: claim and run the future where it sits if it has not started, else announce
 * itself and sleep (model_sleep.h). The owner then reaches the slot as its worker loop
 * would: a future that someone else claimed is only let go (QUEUED dropped).
 *   getter     holds the handle (from the owner's store, read with acquire), and gets it by
 *              the same protocol: claims and runs it, or announces itself and sleeps; once DONE
 *              it reads the result;
 *   canceller  (CANCEL=1) ws_future_cancel's step: cancels it if it has not started.
 * ws__future_finish_rare is future.c's: the wake that ws__future_inline_finish_todo asks for.
 * Checked in every execution: the function ran exactly once, or never when the cancel won; a
 * get that returned read the result (or NULL after the cancel); a sleeper is woken; the record
 * is never recycled (the handle is held throughout); the deque is empty at the end.
 *
 * WEAKEN=n breaks one thing the inline get relies on; the model must then fail (tests/model.cmake
 * checks that each variant does):
 *   1  its claim is a store, not a compare-and-swap (a rival claims too: two runners);
 *   2  its finish is relaxed (the result is not handed to the getter elsewhere);
 *   3  its finish is a load and a store, not one RMW (a waiter announced in between is lost).
 */
#ifndef WEAKEN
#define WEAKEN 0
#endif
#ifndef CANCEL
#define CANCEL 0
#endif

#include <stdint.h>

static uint32_t finish_plain(uint32_t *p, uint32_t v)
{
    uint32_t old = __atomic_load_n(p, __ATOMIC_ACQUIRE);
    __atomic_store_n(p, old + v, __ATOMIC_RELEASE);
    return old;
}

#if WEAKEN == 1
#define WS__FUTURE_INLINE_CLAIM(p, seen, v) (__atomic_store_n((p), (v), __ATOMIC_RELEASE), 1)
#elif WEAKEN == 2
#define WS__FUTURE_INLINE_FINISH(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#elif WEAKEN == 3
#define WS__FUTURE_INLINE_FINISH(p, v) finish_plain((p), (v))
#endif

#include "../src/deque.c"
#include "future_state.h"
/* The header's portable spellings, as in model_sdeque_inline.c: the checker runs no inline
 * assembly and does not model mixed-size accesses. */
#define __SANITIZE_THREAD__ 1
#undef __BYTE_ORDER__
#include "worksteal.h"

#include "model_platform.h"
#include "model_sleep.h"

#include <assert.h>
#include <genmc.h>
#include <pthread.h>
#include <stdatomic.h>

/* The calling thread's worker deque (worker.c): the owner's, set when it starts. */
__thread struct ws__fast *ws__tls_fast;

static ws_sdeque deque;              /* the owner's */
static struct ws__future_rec record; /* the owner's one ready record */
static int pool_token;               /* the owner's pool, by address */
static int value;                    /* what the future returns the address of */
static int older;                    /* an item pushed before the future */
static _Atomic int runs, cancel_won, recycled;
static _Atomic(ws_future *) handed; /* the handle, passed to the getter */

enum { OWNER = 1, GETTER = 2 }; /* runners: a worker's id + 1 */

static struct ws__fast *fast(void)
{
    return (struct ws__fast *)&deque;
}

static _Atomic uint32_t *word(void)
{
    return (_Atomic uint32_t *)&record.task.state;
}

static void *work(void *arg)
{
    (void)arg;
    atomic_fetch_add_explicit(&runs, 1, memory_order_relaxed);
    return &value;
}

/* future.c's follow_up: the wake, and the recycling, which cannot come while a handle is held. */
static void follow_up(unsigned todo)
{
    if (todo & WS_FUTURE_WAKE)
        model_wake();
    if (todo & WS_FUTURE_RECYCLE)
        atomic_fetch_add_explicit(&recycled, 1, memory_order_relaxed);
}

void ws__future_finish_rare(struct ws__future_rec *r, uint32_t old)
{
    (void)r;
    follow_up(ws__future_inline_finish_todo(old));
}

void ws__future_drop_dead(void)
{
    assert(!"no get claimed a future where it sat before this one was pushed");
}

void ws__future_escaped(void)
{
    assert(!"the function does not throw");
}

int(ws_future_submit)(ws_future **out, ws_pool *pool, ws_future_fn fn, void *arg)
{
    (void)out, (void)pool, (void)fn, (void)arg;
    assert(!"the inline submit declined: its record and its deque's fast path are ready");
    return 0;
}

/* A get by the library's protocol (future.c), for thread `who` (0: the owner, 1: the getter),
 * runner its id + 1: the result, or NULL if it sleeps (the sleep ends the thread) or the future
 * was cancelled. Bounded: executions that need more rounds are dropped (an announce fails only
 * when the word moved, which a finish or a claim does once each). */
static void *library_get(int who, uint32_t runner)
{
    for (int round = 0; round < 4; round++) {
        uint32_t s = ws__future_read(word());
        if (s & WS_FUTURE_DONE)
            return record.result;
        if (!(s & WS_FUTURE_TAKEN)) {
            if (ws__future_claim(word(), runner)) {
                record.result = record.fn(record.arg);
                uint32_t clear = WS_FUTURE_TAKEN | runner << WS_FUTURE_RUNNER_SHIFT;
                follow_up(ws__future_finish(word(), clear)); /* the slot stays: QUEUED */
            }
            continue;
        }
        uint32_t v = ws__state_announce(word(), s);
        if (v != 0 && model_sleep(who, word(), v))
            return NULL;
    }
    __VERIFIER_assume(0);
    return NULL;
}

void *(ws_future_get)(ws_future *f)
{
    assert(f == (ws_future *)(void *)&record);
    return library_get(0, OWNER);
}

/* A get's result: the function's, or NULL if the cancel won. */
static void check_result(void *r)
{
    assert(r == &value || (r == NULL && (ws__future_read(word()) & WS_FUTURE_CANCELLED)));
}

/* The owner's worker loop reaching the slots: a future someone else claimed is let go. */
static void drain(void)
{
    void *x;
    /* A future's item is its record with the free tag (worksteal.h, WS__ITEM_FREE). */
    while ((x = (void *)((uintptr_t)ws__sdeque_pop(&deque) & ~WS_SDEQUE_ITEM_FREE)) != NULL) {
        if (x == &older)
            continue;
        assert(x == &record);
        bool unclaimed = ws__future_claim(word(), OWNER);
        assert(!unclaimed); /* a get claimed it, or the cancel won */
        uint32_t old;
        follow_up(ws__future_drop(word(), WS_FUTURE_QUEUED, &old));
    }
}

static void *owner(void *arg)
{
    (void)arg;
    ws__tls_fast = fast();
    ws_future *f = NULL;
    int err = ws_future_submit(&f, NULL, work, NULL);
    assert(err == 0 && f == (ws_future *)(void *)&record);
    /* release: the handle passed on, as a program passes it (a lock, a queue, a join). */
    atomic_store_explicit(&handed, f, memory_order_release);
    void *r = ws_future_get(f);
    if (r == NULL && model_asleep[0])
        return NULL; /* asleep: main checks that it is woken */
    check_result(r);
    drain();
    return NULL;
}

static void *getter(void *arg)
{
    (void)arg;
    /* acquire: pairs with the owner's release store of the handle. */
    __VERIFIER_assume(atomic_load_explicit(&handed, memory_order_acquire) != NULL);
    void *r = library_get(1, GETTER);
    if (r == NULL && model_asleep[1])
        return NULL;
    check_result(r);
    return NULL;
}

static void *canceller(void *arg)
{
    (void)arg;
    __VERIFIER_assume(atomic_load_explicit(&handed, memory_order_acquire) != NULL);
    unsigned todo;
    if (ws__future_cancel(word(), &todo))
        atomic_store_explicit(&cancel_won, 1, memory_order_relaxed);
    follow_up(todo);
    return NULL;
}

int main(void)
{
    int err = ws_sdeque_init(&deque, 2, 0);
    assert(err == 0);
    ws__sdeque_set_depth_cap(&deque, 3); /* the owner has been 4 deep before */
    /* An older item below, as in a worker running a task: a push onto an empty deque takes the
     * slow path (it wakes idle workers), and the first slow push opens the fast path. */
    static bool published; /* not block-scoped: see model_sdeque_common.h */
    assert(ws__sdeque_push_slow(&deque, &older, &published) == 0);
    deque.futures = &record;
    deque.pool = &pool_token;
    deque.runner = (uint32_t)OWNER << WS_FUTURE_RUNNER_SHIFT;
    deque.futures_room = 0;
    deque.dead_slots = 0;
    record.home = fast();
    record.task.rest[1] = NULL;
    record.task.state = WS__FUTURE_FREED;
    pthread_t t[3];
    pthread_create(&t[0], NULL, owner, NULL);
    pthread_create(&t[1], NULL, getter, NULL);
    if (CANCEL)
        pthread_create(&t[2], NULL, canceller, NULL);
    for (int i = 0; i < 2 + CANCEL; i++)
        pthread_join(t[i], NULL);
    int won = atomic_load_explicit(&cancel_won, memory_order_relaxed);
    assert(atomic_load_explicit(&runs, memory_order_relaxed) == (won ? 0 : 1));
    model_check_woken();
    assert(model_asleep[0] || ws_sdeque_size(&deque) == 0);
    assert(atomic_load_explicit(&recycled, memory_order_relaxed) == 0);
    return 0;
}
