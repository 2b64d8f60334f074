/* model_group_ref.c: the pool reference a group holds for its injected jobs (src/group.c:
 * hold_pool, count_out; the word's rule is at the top of group.c) under the GenMC model
 * checker, in every execution the C11 model (RC11) allows.
 *
 *   genmc --rc11 --disable-estimation -- [-DWEAKEN=n] tests/model_group_ref.c
 *
 * The protocol is mirrored here with the same orders (group.c needs the whole library). Two
 * outside threads each submit one job to the same group; two workers each run one of them;
 * a destroyer destroys the pool meanwhile:
 *   submitter  counts its job in (relaxed increment of the group's word); if the word did not
 *              hold the pool's reference, admits one and sets the bit (giving its reference
 *              back if another submitter set it first); looks at the pool (the idle word) and
 *              queues the job (a release store). Refused (destroy began), it counts its job out.
 *   worker     runs the job once queued (touching the pool) and counts it out: the decrement
 *              that leaves the bit alone with a count of 0 clears the bit with a
 *              compare-and-swap and gives the reference back.
 *   destroyer  sets STOPPING, waits until no reference is left, then frees the pool.
 * "The pool" is a plain variable: every use reads it and the free writes it, so GenMC reports a
 * data race whenever a use is not ordered before the free. Checked in every execution: no such
 * race; every queued job ran; in the end the group's word is 0 and no reference is left (none
 * leaked, none given back twice).
 *
 * WEAKEN=n breaks one thing the protocol relies on; the model must then fail
 * (tests/lifecycle.cmake checks that each variant does):
 *   1  the bit is cleared with a plain store after the decrement, not a compare-and-swap (a
 *      submitter that counted in meanwhile relies on a reference given back);
 *   2  the submitter reads the bit with a load before its increment, not from the increment;
 *   3  the completion's decrement is relaxed (a job's uses are not handed to the clearer).
 */
#include <assert.h>
#include <genmc.h> /* __VERIFIER_assume: a blocking wait, as a futex wait is */
#include <pthread.h>
#include <stdatomic.h>

#ifndef WEAKEN
#define WEAKEN 0
#endif

#define STOPPING   (1u << 31)
#define HOLDS_POOL (1u << 31)

static atomic_uint admitted, pending;
static atomic_int queued[2], refused[2], ran[2];
static int pool_memory = 1; /* the pool: read by every use, written by the free */

static void use_pool(void)
{
    assert(pool_memory == 1);
}

static void pool_release(void)
{
    atomic_fetch_sub_explicit(&admitted, 1, memory_order_acq_rel);
}

static int pool_admit(void)
{
    unsigned old = atomic_fetch_add_explicit(&admitted, 1, memory_order_acq_rel);
    if (old & STOPPING) {
        pool_release();
        return -1;
    }
    return 0;
}

static void count_out(void)
{
#if WEAKEN == 3
    unsigned old = atomic_fetch_sub_explicit(&pending, 1, memory_order_relaxed);
#else
    unsigned old = atomic_fetch_sub_explicit(&pending, 1, memory_order_acq_rel);
#endif
    if (old != (HOLDS_POOL | 1))
        return;
#if WEAKEN == 1
    atomic_store_explicit(&pending, 0, memory_order_release);
#else
    unsigned held = HOLDS_POOL;
    if (!atomic_compare_exchange_strong_explicit(&pending, &held, 0, memory_order_acq_rel,
                                                 memory_order_relaxed))
        return;
#endif
    pool_release();
}

static int hold_pool(unsigned old)
{
    if (old & HOLDS_POOL) /* ws__pool_open: a relaxed look at STOPPING */
        return atomic_load_explicit(&admitted, memory_order_relaxed) & STOPPING ? -1 : 0;
    if (pool_admit() != 0)
        return -1;
    if (atomic_fetch_or_explicit(&pending, HOLDS_POOL, memory_order_relaxed) & HOLDS_POOL)
        pool_release();
    return 0;
}

static void *submitter(void *arg)
{
    int i = *(int *)arg;
#if WEAKEN == 2
    unsigned old = atomic_load_explicit(&pending, memory_order_relaxed);
    atomic_fetch_add_explicit(&pending, 1, memory_order_relaxed);
#else
    unsigned old = atomic_fetch_add_explicit(&pending, 1, memory_order_relaxed);
#endif
    if (hold_pool(old) != 0) {
        atomic_store_explicit(&refused[i], 1, memory_order_relaxed);
        count_out();
        return NULL;
    }
    use_pool();                                                 /* the look at the idle word */
    atomic_store_explicit(&queued[i], 1, memory_order_release); /* the injector link */
    return NULL;
}

static void *worker(void *arg)
{
    int i = *(int *)arg;
    int q = atomic_load_explicit(&queued[i], memory_order_acquire);
    int r = atomic_load_explicit(&refused[i], memory_order_relaxed);
    __VERIFIER_assume(q || r);
    if (!q)
        return NULL;
    use_pool(); /* running the job touches the pool */
    atomic_store_explicit(&ran[i], 1, memory_order_relaxed);
    count_out();
    return NULL;
}

static void *destroyer(void *arg)
{
    (void)arg;
    unsigned v = atomic_fetch_or_explicit(&admitted, STOPPING, memory_order_acq_rel) | STOPPING;
    if (v != STOPPING) {
        v = atomic_load_explicit(&admitted, memory_order_acquire); /* the futex wait */
        __VERIFIER_assume(v == STOPPING);
    }
    pool_memory = 0; /* the free */
    return NULL;
}

int main(void)
{
    static int ids[2] = {0, 1};
    pthread_t s[2], w[2], d;
    for (int i = 0; i < 2; i++) {
        pthread_create(&s[i], NULL, submitter, &ids[i]);
        pthread_create(&w[i], NULL, worker, &ids[i]);
    }
    pthread_create(&d, NULL, destroyer, NULL);
    for (int i = 0; i < 2; i++) {
        pthread_join(s[i], NULL);
        pthread_join(w[i], NULL);
        assert(atomic_load_explicit(&queued[i], memory_order_relaxed) ==
               atomic_load_explicit(&ran[i], memory_order_relaxed));
    }
    assert(atomic_load_explicit(&pending, memory_order_relaxed) == 0);
    assert((atomic_load_explicit(&admitted, memory_order_relaxed) & ~STOPPING) == 0);
    pthread_join(d, NULL);
    return 0;
}
