/* group_count.h: a group's count word (group.c), apart so that its model checks this code
 * (tests/model_group_count.c).
 *
 * One 32-bit word: the number of unfinished jobs in the low bits, HOLDS_POOL (the group holds a
 * reference of its pool for its injected jobs, group.c) and WAITING (a thread sleeps, or is about
 * to sleep, on the word as a futex). Submitters add one per job; completions count down; the
 * count-down that leaves no job clears the word to 0 with a compare-and-swap and then, only if
 * WAITING was set, wakes the sleepers: a job's completion makes no system call while nobody
 * waits.
 *
 * Why no waiter sleeps through the count reaching 0: a waiter that saw a count n > 0 sets WAITING
 * with a compare-and-swap from exactly the value it saw, and sleeps only while the word still
 * holds that value with the bit (the futex's own check). The count-down and the waiter's
 * compare-and-swap are read-modify-writes of one word, so one comes first in its modification
 * order: if the waiter's does, the count-down that reaches 0 reads WAITING and wakes it after it
 * cleared the word (a sleeper queued before the wake is woken; one that checks the word later sees
 * it changed and does not sleep); if the count-down's does, the waiter's compare-and-swap fails
 * on the changed word and the waiter reads it again. WAITING is never set on a word that counts
 * no job: a waiter that reads flags alone (the last count-down between its decrement and its
 * clearing) reads again instead of sleeping, since that clearing would fail on its bit and wake
 * nobody.
 */
#ifndef WS_GROUP_COUNT_H
#define WS_GROUP_COUNT_H

#include "atomics.h"

#include <stdint.h>

#define WS_GROUP_HOLDS_POOL (1u << 31)
#define WS_GROUP_WAITING    (1u << 30)
#define WS_GROUP_COUNT_MASK (WS_GROUP_WAITING - 1)

/* The relied-on orders, by name, so that the model can weaken each one. */
#ifndef WS_GROUP_COUNT_DOWN
#define WS_GROUP_COUNT_DOWN(p, n) ws_fetch_sub_acq_rel((p), (n))
#endif
#ifndef WS_GROUP_WAITER_LOAD
#define WS_GROUP_WAITER_LOAD(p) ws_load_acquire(p)
#endif
/* Whether a waiter that read seen may sleep: only while seen counts a job. */
#ifndef WS_GROUP_MAY_SLEEP
#define WS_GROUP_MAY_SLEEP(seen) (((seen)&WS_GROUP_COUNT_MASK) != 0)
#endif
/* The waiter's announcement: a compare-and-swap from the value it saw (true if it took). */
#ifndef WS_GROUP_ANNOUNCE
#define WS_GROUP_ANNOUNCE(p, seen, v) ws_cas_acq_rel((p), (seen), (v))
#endif

/* What the caller of ws__group_count_down must do. */
enum {
    WS_GROUP_WAKE = 1,    /* futex-wake the word's sleepers (its address only: it may be gone) */
    WS_GROUP_RELEASE = 2, /* give the pool's reference back */
};

/* Any thread: n jobs counted in on *word are finished. Returns WS_GROUP_* flags; after a
 * non-zero result the caller touches the group no more (its waiters may return and free it). */
static inline unsigned ws__group_count_down(_Atomic uint32_t *word, uint32_t n)
{
    /* acq_rel: the release half publishes the jobs' effects to the waiters' acquire load of 0
     * (WS_GROUP_WAITER_LOAD); the acquire half orders the count-downs of concurrent jobs. */
    uint32_t left = WS_GROUP_COUNT_DOWN(word, n) - n;
    if ((left & WS_GROUP_COUNT_MASK) != 0 || left == 0)
        return 0; /* jobs left, or none and no flag: nothing to do */
    /* acq_rel: as the count-down. Fails if a submitter counted a job in meanwhile, whose own
     * completion comes back here (the flags stay until then). */
    if (!ws_cas_acq_rel(word, &left, 0))
        return 0;
    return ((left & WS_GROUP_WAITING) ? WS_GROUP_WAKE : 0) |
           ((left & WS_GROUP_HOLDS_POOL) ? WS_GROUP_RELEASE : 0);
}

/* Any thread: the word read for a wait (acquire: a 0 read here makes the jobs' effects
 * visible). */
static inline uint32_t ws__group_count_read(_Atomic uint32_t *word)
{
    return WS_GROUP_WAITER_LOAD(word);
}

/* Any thread about to sleep on *word, which it read as seen (not 0): the value to sleep on, with
 * WAITING set, or 0 if it must not sleep: the word changed meanwhile, or it counts no job and
 * only its flags await the last count-down's clearing (read it again). */
static inline uint32_t ws__group_count_announce(_Atomic uint32_t *word, uint32_t seen)
{
    if (!WS_GROUP_MAY_SLEEP(seen))
        return 0; /* the last count-down is between its two steps: 0 is a moment away */
    if (seen & WS_GROUP_WAITING)
        return seen;
    /* acq_rel: the partner of the count-down's RMW (see the top); fails if the word moved. */
    if (!WS_GROUP_ANNOUNCE(word, &seen, seen | WS_GROUP_WAITING))
        return 0;
    return seen | WS_GROUP_WAITING;
}

#endif /* WS_GROUP_COUNT_H */
