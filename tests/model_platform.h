/* model_platform.h: the library's platform functions (src/platform.c is not part of a model)
 * as GenMC models them: allocation as plain malloc, a clock that never moves, a yield that is
 * one step, and a futex with the kernel's semantics. Included by the models after the real
 * sources (the model_sdeque_* models through model_sdeque_common.h).
 */
#ifndef WS_MODEL_PLATFORM_H
#define WS_MODEL_PLATFORM_H

#include <assert.h>
#include <genmc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

/* The library's allocation wrappers, as plain malloc. */
void *ws__malloc(size_t size)
{
    return malloc(size);
}
void *ws__calloc(size_t n, size_t size)
{
    /* The checker models malloc, not calloc; zero in words, the size of every field. */
    uint64_t *p = malloc(n * size);
    for (size_t i = 0; p != NULL && i < n * size / sizeof(uint64_t); i++)
        p[i] = 0;
    return p;
}
/* Records that a model keeps in static storage and the code frees (model_pool_teardown.c's pool
 * and workers: fields of a malloc'd record zeroed in words would be read with other sizes, which
 * the checker rejects as mixed-size accesses): a free of one is a no-op. Registered by main
 * before it starts a thread. */
static void *model_static[4];
static int model_nstatic;
static void *model_static_record(void *p)
{
    assert(model_nstatic < 4);
    model_static[model_nstatic++] = p;
    return p;
}
void ws__free(void *p)
{
    for (int i = 0; i < model_nstatic; i++)
        if (p == model_static[i])
            return;
    free(p);
}
/* The shrink's clock and the trim's yield (platform.c): the quiet time of an empty pop's
 * shrink never passes; a trim's retry is one step. A model whose threads retry after a yield
 * until another thread moves (a worker that saw a push in flight) bounds the yields of an
 * execution with MODEL_YIELDS (executions with more are dropped) and says why the bound hides
 * nothing. */
uint64_t ws__now_ns(void)
{
    return 0;
}
static atomic_int model_yields;
static atomic_int model_cut; /* 1 once a thread of this execution stopped at a bound */

/* A thread stops at a bound of the model: the execution is dropped (blocked). */
static void model_stop_here(void)
{
    /* relaxed: read by a spin of main (model_idle.c) that must not wait for this thread. An
     * RMW: stores of two threads would be unordered writes, which the checker rejects. */
    atomic_exchange_explicit(&model_cut, 1, memory_order_relaxed);
    __VERIFIER_assume(0);
}

void ws__thread_yield(void)
{
#ifdef MODEL_YIELDS
    /* relaxed: a count of this execution's yields, for the bound only. */
    int n = atomic_fetch_add_explicit(&model_yields, 1, memory_order_relaxed);
    if (n >= MODEL_YIELDS)
        model_stop_here();
#endif
}

/* Whether a thread of this execution stopped at a bound (model_stop_here): main, waiting in a
 * spin for the threads to finish (a spin that --check-liveness reports if it never ends), stops
 * waiting for it. */
static int model_execution_cut(void)
{
    return atomic_load_explicit(&model_cut, memory_order_relaxed); /* relaxed: see the store */
}

/* The futex, as the kernel implements it: a wait takes the bucket lock, returns at once if the
 * word no longer holds the expected value, else queues the thread and sleeps; the check and the
 * queueing are one step under the lock, so a wake that follows a change of the word finds the
 * waiter queued, or the waiter sees the change. A wake takes the lock and wakes at most n of the
 * threads queued on that word, oldest first (the kernel's order for equal priorities), and
 * returns how many. The sleep is an assumption that a waker cleared the thread's flag
 * (executions in which nobody does are blocked, and a lost wake-up shows where its work was
 * awaited). No spurious returns: the callers loop anyway,
 * and a spurious return only adds a look. */
#ifndef MODEL_FUTEX_WAITS
#define MODEL_FUTEX_WAITS 8 /* futex waits per execution, all threads together */
#endif
typedef struct model_futex_waiter {
    _Atomic uint32_t *addr; /* under futex_lock */
    atomic_int asleep;      /* 1 while queued; the waker's release store ends the sleep */
} model_futex_waiter;
static pthread_mutex_t futex_lock = PTHREAD_MUTEX_INITIALIZER;
static model_futex_waiter futex_queue[MODEL_FUTEX_WAITS];
static int futex_queued;          /* under futex_lock */
static atomic_int futex_sleepers; /* queued and not woken; changed under futex_lock */

void ws__futex_wait(_Atomic uint32_t *addr, uint32_t expected)
{
    pthread_mutex_lock(&futex_lock);
    /* relaxed: under the lock, as the kernel reads the word under the bucket lock; a waker's
     * change before its wake (which takes the lock) is seen. */
    if (atomic_load_explicit(addr, memory_order_relaxed) != expected) {
        pthread_mutex_unlock(&futex_lock);
        return;
    }
    assert(futex_queued < MODEL_FUTEX_WAITS);
    model_futex_waiter *me = &futex_queue[futex_queued++];
    me->addr = addr;
    atomic_store_explicit(&me->asleep, 1, memory_order_relaxed); /* relaxed: under the lock */
    /* release: model_futex_sleeping's RMW (acquire) that reads this count sees what the sleeper
     * did before it slept; every change of the count is an RMW (one release sequence). */
    atomic_fetch_add_explicit(&futex_sleepers, 1, memory_order_release);
    pthread_mutex_unlock(&futex_lock);
    /* acquire: pairs with the waker's release store, as the kernel's wake-up orders. */
    __VERIFIER_assume(atomic_load_explicit(&me->asleep, memory_order_acquire) == 0);
}

int ws__futex_wake(_Atomic uint32_t *addr, int n)
{
    int woken = 0;
    pthread_mutex_lock(&futex_lock);
    for (int i = 0; i < futex_queued && (n < 0 || woken < n); i++) {
        model_futex_waiter *q = &futex_queue[i];
        /* relaxed: under the lock (only wakers clear the flag, and they hold it). */
        if (q->addr == addr && atomic_load_explicit(&q->asleep, memory_order_relaxed) != 0) {
            /* release: as the increment; before the flag, so that a woken thread is never
             * still counted. */
            atomic_fetch_sub_explicit(&futex_sleepers, 1, memory_order_release);
            atomic_store_explicit(&q->asleep, 0, memory_order_release); /* release: see the wait */
            woken++;
        }
    }
    pthread_mutex_unlock(&futex_lock);
    return woken;
}

/* How many threads sleep in a futex wait that no wake has reached. An RMW: it comes after every
 * change of the count that happened before it (the wakes of threads the caller joined), and a
 * change after it can only be a wake issued by a thread still awake. (A read-only look under
 * futex_lock would be cut by the checker as a critical section without effect.) */
static int model_futex_sleeping(void)
{
    /* acq_rel: see above. */
    return atomic_fetch_add_explicit(&futex_sleepers, 0, memory_order_acq_rel);
}

#endif /* WS_MODEL_PLATFORM_H */
