/* model_future.c: a future's state word (src/future_state.h, the code future.c runs) under the
 * GenMC model checker, in every execution the C11 model (RC11) allows.
 *
 *   genmc --rc11 --disable-estimation -- -I src [-DCANCEL=1] [-DWEAKEN=n] tests/model_future.c
 *
 * The future is submitted (KIND, HANDLE, QUEUED) and queued; three threads race for it:
 *   taker      takes it from the queue (after the queue's release publication), claims it and
 *              runs it (the result is a plain variable), or, if it lost, lets the queue's slot go;
 *   getter     holds the handle: reads the word; claims and runs the future if it has not
 *              started; else announces itself and sleeps on the futex; once DONE reads the
 *              result, then frees the handle;
 *   canceller  (CANCEL=1) cancels it.
 * With FREE_EARLY=1 the getter reads a field of the record (its argument) and frees the handle
 * at once, without a get (ws_future_free of a future not waited for): the runner's finish then
 * sees the handle gone and recycles the record, which must come after the getter's read (the
 * finish's acquire half).
 * Every change is followed as future.c follows it: a wake on the futex (model_sleep.h),
 * and a recycling of the record, which overwrites the result (so GenMC reports a data race with
 * any read of the record that the recycling is not ordered after). Checked in every execution: the
 * function ran exactly once, or never when the cancel won (and the cancel wins only if it never
 * ran); a getter that read DONE read the result (42) or saw the cancel; a sleeper is woken; the
 * record is recycled once when both references are gone, never while one is held.
 *
 * WEAKEN=n breaks one thing the protocol relies on; the model must then fail (tests/model.cmake
 * checks that each variant does):
 *   1  the finish's RMW is relaxed (the result is not handed to the getter);
 *   2  the getter's read of the word is relaxed (likewise);
 *   3  a claim is a store, not a compare-and-swap (two runners);
 *   4  a reference is dropped with a load and a store, not one RMW (a concurrent finish is lost:
 *      the record is recycled twice or never);
 *   5  a getter announces itself with a store, not a compare-and-swap from what it saw (a
 *      finish in between is overwritten: nobody wakes it).
 */
#include <assert.h>
#include <genmc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#ifndef WEAKEN
#define WEAKEN 0
#endif
#ifndef CANCEL
#define CANCEL 0
#endif
#ifndef FREE_EARLY
#define FREE_EARLY 0
#endif

static uint32_t drop_plain(_Atomic uint32_t *p, uint32_t bit)
{
    uint32_t old = atomic_load_explicit(p, memory_order_acquire);
    atomic_store_explicit(p, old & ~bit, memory_order_release);
    return old;
}

#if WEAKEN == 1
#define WS_FUTURE_FINISH_RMW(p, v) atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#elif WEAKEN == 2
#define WS_FUTURE_READ(p) atomic_load_explicit((p), memory_order_relaxed)
#elif WEAKEN == 3
#define WS_FUTURE_CLAIM_CAS(p, seen, v) (atomic_store_explicit((p), (v), memory_order_release), 1)
#elif WEAKEN == 4
#define WS_FUTURE_DROP(p, bit) drop_plain((p), (bit))
#elif WEAKEN == 5
#define WS_FUTURE_ANNOUNCE(p, seen, v) (atomic_store_explicit((p), (v), memory_order_release), 1)
#endif

#include "future_state.h"
#include "model_sleep.h"

static _Atomic uint32_t state;
static _Atomic int queued; /* the queue's slot: 1 once published (release) */
static int result;         /* the record's memory: written by the run and by the recycling */
static int record_arg;     /* likewise: written before the submission and by the recycling */
static _Atomic int runs, recycled, cancel_won, got;

static void follow_up(unsigned todo)
{
    if (todo & WS_FUTURE_WAKE)
        model_wake();
    if (todo & WS_FUTURE_RECYCLE) {
        atomic_fetch_add_explicit(&recycled, 1, memory_order_relaxed);
        result = -1; /* the next owner of the record writes it */
        record_arg = -1;
    }
}

static void run(uint32_t runner, int queued_slot)
{
    atomic_fetch_add_explicit(&runs, 1, memory_order_relaxed);
    result = 42;
    uint32_t clear = WS_FUTURE_TAKEN | runner << WS_FUTURE_RUNNER_SHIFT;
    follow_up(ws__future_finish(&state, clear | (queued_slot ? WS_FUTURE_QUEUED : 0)));
}

static void *taker(void *arg)
{
    (void)arg;
    /* acquire: the queue's publication (a deque's release store of bottom, an injector link). */
    __VERIFIER_assume(atomic_load_explicit(&queued, memory_order_acquire) == 1);
    if (ws__future_claim(&state, 1)) {
        run(1, 1);
    } else {
        uint32_t old;
        follow_up(ws__future_drop(&state, WS_FUTURE_QUEUED, &old));
    }
    return NULL;
}

static void *getter(void *arg)
{
    (void)arg;
    if (FREE_EARLY) {
        assert(record_arg == 7);
        uint32_t old;
        follow_up(ws__future_drop(&state, WS_FUTURE_HANDLE, &old));
        return NULL;
    }
    for (int round = 0; round < 3; round++) {
        uint32_t s = ws__future_read(&state);
        if (s & WS_FUTURE_DONE) {
            int r = result;
            assert(r == 42 || (s & WS_FUTURE_CANCELLED));
            atomic_store_explicit(&got, 1, memory_order_relaxed);
            uint32_t old;
            follow_up(ws__future_drop(&state, WS_FUTURE_HANDLE, &old));
            return NULL;
        }
        if (!(s & WS_FUTURE_TAKEN)) {
            if (ws__future_claim(&state, 2))
                run(2, 0);
            continue;
        }
        uint32_t v = ws__state_announce(&state, s);
        if (v != 0 && model_sleep(0, &state, v))
            return NULL; /* asleep: main checks that it is woken */
    }
    return NULL; /* bounded: the model explores the executions where it got there */
}

static void *canceller(void *arg)
{
    (void)arg;
    unsigned todo;
    if (ws__future_cancel(&state, &todo))
        atomic_store_explicit(&cancel_won, 1, memory_order_relaxed);
    follow_up(todo);
    return NULL;
}

int main(void)
{
    atomic_init(&state, WS_FUTURE_KIND | WS_FUTURE_HANDLE | WS_FUTURE_QUEUED);
    record_arg = 7;
    pthread_t t[3];
    pthread_create(&t[0], NULL, getter, NULL);
    pthread_create(&t[1], NULL, taker, NULL);
    if (CANCEL)
        pthread_create(&t[2], NULL, canceller, NULL);
    /* release: the queue's publication of the record. */
    atomic_store_explicit(&queued, 1, memory_order_release);
    for (int i = 0; i < 2 + CANCEL; i++)
        pthread_join(t[i], NULL);
    int won = atomic_load_explicit(&cancel_won, memory_order_relaxed);
    int ran = atomic_load_explicit(&runs, memory_order_relaxed);
    assert(ran == (won ? 0 : 1));
    model_check_woken();
    int freed = atomic_load_explicit(&recycled, memory_order_relaxed);
    assert(freed == (FREE_EARLY || atomic_load_explicit(&got, memory_order_relaxed) ? 1 : 0));
    return 0;
}
