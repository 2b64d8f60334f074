/* test_idle_litmus: the store-buffering pattern behind parking and waking, as a litmus test.
 *
 * Two threads race once per round. The "producer" publishes work (x = 1) and then reads the
 * sleeper count s; the "sleeper" announces itself (s += 1) and then looks for work (reads x).
 * A lost wake-up is the outcome where both read 0: the producer saw no sleeper and the sleeper
 * saw no work. The library's protocols (src/idle.c) must forbid it, and this test runs the same
 * operation sequences, through the same helpers of src/atomics.h, many times:
 *
 *   rmw       producer: release store x; acq_rel RMW s += 0   (ws__idle_observe_rmw after a
 *                                                              push onto a deque)
 *   exchange  producer: seq_cst exchange x; seq_cst load s    (ws__idle_observe_sc after the
 *                                                              injector's tail exchange)
 *   both use  sleeper:  seq_cst RMW s += 1; seq_cst load x   (ws__idle_sleep_begin, then the
 *                                                              last look)
 *
 * A control runs the pattern with plain relaxed stores and loads, where the outcome is allowed:
 * it is counted and printed (x86's store buffer shows it now and then), never asserted, as a
 * sign that the harness can observe reorderings at all. x86 forbids the outcome for any locked
 * instruction whatever its C11 order, so only a weakly ordered machine (arm64) can tell a
 * too-weak order here; the test documents and checks the pattern as written.
 *
 * usage: test_idle_litmus [rounds]   (default 10^6, fewer under sanitizers)
 */
#include "atomics.h"
#include "test.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

enum { RMW, EXCHANGE, CONTROL };

typedef struct shared {
    int variant;
    uint64_t rounds;
    _Atomic uint64_t arrived; /* both threads add 1 per round: the round's start barrier */
    _Atomic uint64_t done;    /* rounds the producer has finished */
    _Atomic uint32_t x, s;    /* the two locations of the pattern */
    uint32_t *r1;             /* what the producer read, per round */
} shared;

/* Spins until *v >= want, yielding now and then so that a loaded machine (or more threads than
 * cores) does not turn each round into a scheduler time slice. acquire: see the callers. */
static void wait_until(_Atomic uint64_t *v, uint64_t want)
{
    for (unsigned spins = 0; ws_load_acquire(v) < want; spins++)
        if (spins % 1024 == 1023)
            sched_yield();
}

/* Both threads leave round i's barrier at about the same moment, so that their two operations
 * really race. acq_rel: the sleeper's reset of x and s happens before the producer's round. */
static void barrier(shared *sh, uint64_t i)
{
    ws_fetch_add_acq_rel(&sh->arrived, 1);
    wait_until(&sh->arrived, 2 * i);
}

static void *producer(void *p)
{
    shared *sh = p;
    for (uint64_t i = 1; i <= sh->rounds; i++) {
        barrier(sh, i);
        uint32_t r;
        if (sh->variant == RMW) {
            ws_store_release(&sh->x, 1);         /* publish (a deque push's release store) */
            r = ws_fetch_add_acq_rel(&sh->s, 0); /* ws__idle_observe_rmw */
        } else if (sh->variant == EXCHANGE) {
            ws_exchange_seq_cst(&sh->x, 1); /* the injector's tail exchange */
            r = ws_load_seq_cst(&sh->s);    /* ws__idle_observe_sc */
        } else {
            ws_store_relaxed(&sh->x, 1); /* control: no ordering at all */
            r = ws_load_relaxed(&sh->s);
        }
        sh->r1[i - 1] = r;
        ws_store_release(&sh->done, i); /* release: publishes r1[i - 1] */
    }
    return NULL;
}

/* The sleeper side runs on the calling thread; returns how many rounds both read 0. */
static uint64_t run(int variant, uint64_t rounds)
{
    shared sh = {.variant = variant, .rounds = rounds};
    sh.r1 = calloc(rounds, sizeof *sh.r1);
    ASSERT(sh.r1 != NULL);
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, producer, &sh));
    uint64_t both_zero = 0;
    for (uint64_t i = 1; i <= rounds; i++) {
        ws_store_relaxed(&sh.x, 0); /* relaxed: ordered before the round by the barrier */
        ws_store_relaxed(&sh.s, 0);
        barrier(&sh, i);
        uint32_t r2;
        if (variant == CONTROL) {
            ws_store_relaxed(&sh.s, 1);
            r2 = ws_load_relaxed(&sh.x);
        } else {
            ws_fetch_add_seq_cst(&sh.s, 1); /* ws__idle_sleep_begin */
            r2 = ws_load_seq_cst(&sh.x);    /* park: look for work again */
        }
        wait_until(&sh.done, i); /* acquire: pairs with the producer's release */
        if (sh.r1[i - 1] == 0 && r2 == 0)
            both_zero++;
    }
    ASSERT_OK(pthread_join(t, NULL));
    free(sh.r1);
    return both_zero;
}

int main(int argc, char **argv)
{
    uint64_t rounds = argc > 1 ? strtoull(argv[1], NULL, 10) : test_scaled(1000000, 20000);
    uint64_t control = run(CONTROL, rounds);
    printf("control (relaxed store, relaxed load): both read 0 in %" PRIu64 " of %" PRIu64
           " rounds (allowed)\n",
           control, rounds);
    uint64_t rmw = run(RMW, rounds);
    printf("rmw (release store; seq_cst RMW):       both read 0 in %" PRIu64 " rounds\n", rmw);
    uint64_t xchg = run(EXCHANGE, rounds);
    printf("exchange (seq_cst exchange; seq_cst load): both read 0 in %" PRIu64 " rounds\n", xchg);
    ASSERT_EQ(rmw, 0);
    ASSERT_EQ(xchg, 0);
    return 0;
}
