/* model_sleep.h: the futex as the models of a waiter's word use it (model_future.c,
 * model_future_inline.c, model_group_count.c), the kernel's semantics cut short. A wait queues
 * itself if the word holds the value (the test and the queueing one step under the bucket
 * lock), and then sleeps until a wake issued after it queued; the model ends the sleeping thread
 * there, and model_check_woken (main, after the joins) checks that such a wake came. A sleeper
 * woken would read the word again; a lost wake-up is a sleeper with no wake after it queued.
 */
#ifndef WS_MODEL_SLEEP_H
#define WS_MODEL_SLEEP_H

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

enum { MODEL_SLEEPERS = 2 }; /* threads that may sleep, each with its own number */

static pthread_mutex_t model_bucket = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint32_t model_wakes;             /* wakes issued, under the bucket lock */
static int model_asleep[MODEL_SLEEPERS];         /* under the bucket lock */
static uint32_t model_asleep_at[MODEL_SLEEPERS]; /* the wakes issued before it queued */

/* Thread `who` sleeps on word if it holds val: 1 if it queued (it then ends), else 0. */
static int model_sleep(int who, _Atomic uint32_t *word, uint32_t val)
{
    pthread_mutex_lock(&model_bucket);
    /* relaxed: under the lock, as the kernel reads the word under the bucket lock. */
    int queue = atomic_load_explicit(word, memory_order_relaxed) == val;
    if (queue) {
        model_asleep[who] = 1;
        model_asleep_at[who] = atomic_load_explicit(&model_wakes, memory_order_relaxed);
    }
    pthread_mutex_unlock(&model_bucket);
    return queue;
}

/* A futex wake of the word: it reaches every thread queued before it. */
static void model_wake(void)
{
    pthread_mutex_lock(&model_bucket);
    atomic_fetch_add_explicit(&model_wakes, 1, memory_order_relaxed);
    pthread_mutex_unlock(&model_bucket);
}

/* main, after joining every thread: each sleeper was woken by a wake issued after it queued. */
static void model_check_woken(void)
{
    for (int i = 0; i < MODEL_SLEEPERS; i++)
        assert(!model_asleep[i] ||
               atomic_load_explicit(&model_wakes, memory_order_relaxed) > model_asleep_at[i]);
}

#endif /* WS_MODEL_SLEEP_H */
