/* model_pool_lifetime.c: the pool's admission word (src/pool.c: ws__pool_admit,
 * ws__pool_release, ws__pool_inject, wait_admitted_gone) under the GenMC model checker, in
 * every execution the C11 model (RC11) allows.
 *
 *   genmc --rc11 --disable-estimation -- [-DWAKE=1] [-DWEAKEN=n] tests/model_pool_lifetime.c
 *
 * The protocol is mirrored here with the same orders (pool.c needs the whole library). Three
 * threads share one pool:
 *   submitter  admits one reference (the job's), looks at the pool for a sleeper to wake, then
 *              queues the job (the link, a release store): until the link nobody can run the
 *              job, so the job's reference covers the look. With WAKE=1 it found a sleeper: it
 *              counts a reference of its own (a relaxed add: the pool is alive), queues the job,
 *              touches the pool for the wake-up and gives its reference back. Refused because
 *              destroy began, it gives the job's reference back and leaves.
 *   worker     runs the job when it is queued: touches the pool, gives the job's reference back.
 *   destroyer  sets STOPPING, waits until the count is zero, then frees the pool.
 * "The pool" is a plain variable: every use reads it and the free writes it, so GenMC reports a
 * data race (an error) whenever a use is not ordered before the free. Checked in every
 * execution: no such race, and every admitted job ran.
 *
 * WEAKEN=n breaks one thing the protocol relies on; the model must then fail
 * (tests/lifecycle.cmake checks that each variant does):
 *   1  the release decrement is relaxed (the uses before it are not handed to destroy);
 *   2  destroy's wait reads the word relaxed (it does not acquire those uses);
 *   3  the releaser reads the pool after its decrement (the shape of the old release, which
 *      read pool->stopping after counting down);
 *   4  the submitter queues the job before its look, with no reference of its own (the job
 *      may run and give the only reference back first).
 */
#include <assert.h>
#include <genmc.h> /* __VERIFIER_assume: a blocking wait, as a futex wait is */
#include <pthread.h>
#include <stdatomic.h>

#ifndef WEAKEN
#define WEAKEN 0
#endif

#define STOPPING (1u << 31)

static atomic_uint admitted;
static atomic_int job_queued, job_ran, refused;
static int pool_memory = 1; /* the pool: read by every use, written by the free */

static void use_pool(void)
{
    assert(pool_memory == 1);
}

static void release(unsigned refs)
{
#if WEAKEN == 1
    unsigned old = atomic_fetch_sub_explicit(&admitted, refs, memory_order_relaxed);
#else
    unsigned old = atomic_fetch_sub_explicit(&admitted, refs, memory_order_acq_rel);
#endif
#if WEAKEN == 3
    use_pool();
#endif
    (void)old; /* the futex wake uses only the address */
}

static int admit(unsigned refs)
{
    unsigned old = atomic_fetch_add_explicit(&admitted, refs, memory_order_acq_rel);
    if (old & STOPPING) {
        release(refs);
        return -1;
    }
    return 0;
}

#ifndef WAKE
#define WAKE 0
#endif

static void queue_job(void)
{
    atomic_store_explicit(&job_queued, 1, memory_order_release); /* the injector link */
}

static void *submitter(void *arg)
{
    (void)arg;
    if (admit(1) != 0) {
        atomic_store_explicit(&refused, 1, memory_order_relaxed); /* (for the worker's wait) */
        return NULL;
    }
#if WEAKEN == 4
    queue_job();
#endif
    use_pool(); /* the look at the idle word */
#if WAKE
    atomic_fetch_add_explicit(&admitted, 1, memory_order_relaxed); /* our own reference */
#endif
#if WEAKEN != 4
    queue_job();
#endif
#if WAKE
    use_pool(); /* the wake-up */
    release(1);
#endif
    return NULL;
}

static void *worker(void *arg)
{
    (void)arg;
    /* The worker loop finds the job when it is queued (relaxed for the refusal: a refused
     * submission leaves nothing to run). */
    int queued = atomic_load_explicit(&job_queued, memory_order_acquire);
    int no_job = atomic_load_explicit(&refused, memory_order_relaxed);
    __VERIFIER_assume(queued || no_job);
    if (!queued)
        return NULL;
    use_pool(); /* running the job touches the pool */
    atomic_store_explicit(&job_ran, 1, memory_order_relaxed);
    release(1);
    return NULL;
}

static void *destroyer(void *arg)
{
    (void)arg;
    unsigned v = atomic_fetch_or_explicit(&admitted, STOPPING, memory_order_acq_rel) | STOPPING;
    if (v != STOPPING) {
        /* The futex wait: blocks until the count is zero. */
#if WEAKEN == 2
        v = atomic_load_explicit(&admitted, memory_order_relaxed);
#else
        v = atomic_load_explicit(&admitted, memory_order_acquire);
#endif
        __VERIFIER_assume(v == STOPPING);
    }
    pool_memory = 0; /* the free */
    return NULL;
}

int main(void)
{
    pthread_t s, w, d;
    pthread_create(&s, NULL, submitter, NULL);
    pthread_create(&w, NULL, worker, NULL);
    pthread_create(&d, NULL, destroyer, NULL);
    pthread_join(s, NULL);
    pthread_join(w, NULL);
    pthread_join(d, NULL);
    /* An admitted job ran (before the free: the race check orders its use of the pool). */
    assert(atomic_load_explicit(&job_queued, memory_order_relaxed) ==
           atomic_load_explicit(&job_ran, memory_order_relaxed));
    return 0;
}
