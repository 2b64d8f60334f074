/* model_group_count.c: a group's count word and its waiters (src/group_count.h, the code group.c
 * runs) under the GenMC model checker, in every execution the C11 model (RC11) allows.
 *
 *   genmc --rc11 --disable-estimation -- -I src [-DWEAKEN=n] tests/model_group_count.c
 *
 * Two jobs are counted in (with the pool reference bit when HOLDS=1); two completers each write
 * their job's result (a plain variable) and count their job out, waking the futex and giving the
 * reference back as ws__group_count_down says; a waiter waits as group.c's waits do: read the
 * word, and while jobs are counted announce itself and sleep on the futex. With SUBMIT=1 a third
 * thread counts a third job in while the others run (as a submitter may) and then completes it.
 *
 * The futex (the only OS part) is modelled as the kernel's (model_sleep.h): a wait checks the
 * word and queues itself atomically, then sleeps until a wake issued after it queued; a wake
 * issued while nobody is queued is lost. Checked in every execution: a waiter
 * that reads 0 has seen both results (no data race on them); a waiter that went to sleep gets a
 * wake issued after it queued; the word ends at 0; the reference is given back exactly once
 * (HOLDS=1) and never otherwise.
 *
 * WEAKEN=n breaks one thing the protocol relies on; the model must then fail (tests/group.cmake
 * checks that each variant does):
 *   1  the count-down is relaxed (a job's result is not handed to the waiter);
 *   2  the waiter's read of the word is relaxed (likewise);
 *   3  the waiter announces itself with a plain store of what it saw plus WAITING, not a
 *      compare-and-swap from it (a count-down in between is lost, and the waiter with it);
 *   4  (HOLDS=1) a waiter that reads the flags alone sleeps too (the last count-down's clearing
 *      then fails on the waiter's bit: nobody wakes it, the reference is never given back).
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#ifndef WEAKEN
#define WEAKEN 0
#endif
#ifndef HOLDS
#define HOLDS 0
#endif
#ifndef SUBMIT
#define SUBMIT 0
#endif

#if WEAKEN == 1
#define WS_GROUP_COUNT_DOWN(p, n) atomic_fetch_sub_explicit((p), (n), memory_order_relaxed)
#elif WEAKEN == 2
#define WS_GROUP_WAITER_LOAD(p) atomic_load_explicit((p), memory_order_relaxed)
#elif WEAKEN == 3
#define WS_GROUP_ANNOUNCE(p, seen, v) (atomic_store_explicit((p), (v), memory_order_release), 1)
#elif WEAKEN == 4
#define WS_GROUP_MAY_SLEEP(seen) 1
#endif

#include "group_count.h"
#include "model_sleep.h"

static _Atomic uint32_t pending;
static int result[3];        /* written by the jobs, read by the waiter once the count is 0 */
static _Atomic int released; /* pool references given back */

/* A job's completion, as group.c's count_out. */
static void complete(int job)
{
    result[job] = job + 1;
    unsigned todo = ws__group_count_down(&pending, 1);
    if (todo & WS_GROUP_WAKE)
        model_wake();
    if (todo & WS_GROUP_RELEASE)
        atomic_fetch_add_explicit(&released, 1, memory_order_relaxed);
}

static void *completer(void *arg)
{
    complete((int)(intptr_t)arg);
    return NULL;
}

static void *late_submitter(void *arg)
{
    (void)arg;
    /* relaxed: as ws_group_submit's increment (the job's publication orders it). */
    atomic_fetch_add_explicit(&pending, 1, memory_order_relaxed);
    complete(2);
    return NULL;
}

/* A wait, as group.c's wait_pending (without jobs to help with), until it returns or sleeps.
 * A woken waiter would read the word again; the first sleep is the one that can be lost (a
 * wake is only issued once the word is 0, or cleared to 0 with a late job counted back in). */
static void *waiter(void *arg)
{
    (void)arg;
    for (int round = 0; round < 3; round++) {
        uint32_t n = ws__group_count_read(&pending);
        if (n == 0) {
            assert(result[0] == 1 && result[1] == 2);
            return NULL;
        }
        n = ws__group_count_announce(&pending, n);
        if (n != 0 && model_sleep(0, &pending, n))
            return NULL; /* asleep: main checks that it is woken */
    }
    return NULL; /* bounded: the word kept moving (the model explores other executions) */
}

int main(void)
{
    atomic_init(&pending, 2u | (HOLDS ? WS_GROUP_HOLDS_POOL : 0));
    pthread_t t[4];
    pthread_create(&t[0], NULL, waiter, NULL);
    pthread_create(&t[1], NULL, completer, (void *)0);
    pthread_create(&t[2], NULL, completer, (void *)1);
    if (SUBMIT)
        pthread_create(&t[3], NULL, late_submitter, NULL);
    for (int i = 0; i < 3 + SUBMIT; i++)
        pthread_join(t[i], NULL);
    /* A sleeper is woken by a wake issued after it queued. */
    model_check_woken();
    assert(atomic_load_explicit(&pending, memory_order_relaxed) == 0);
    assert(atomic_load_explicit(&released, memory_order_relaxed) == HOLDS);
    return 0;
}
