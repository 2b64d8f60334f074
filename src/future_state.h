/* future_state.h: the state word of a future (future.c), apart so that its model checks this
 * code (tests/model_future.c). Self-contained: future.c checks that the bits below are the task
 * state bits of internal.h.
 *
 * One 32-bit word per future:
 *   KIND       the future kind, for its whole life (queues tell futures by it);
 *   TAKEN      claimed by a runner, whose worker id + 1 sits in RUNNER;
 *   DONE       finished: its function returned, or it was cancelled before it started
 *              (CANCELLED with it);
 *   WAITER     a getter sleeps, or is about to sleep, on the word as a futex;
 *   QUEUED     a deque or injector slot still points to the record;
 *   HANDLE     the user has not freed the future;
 *   INLINE     claimed by worksteal.h's inline get (see WS_FUTURE_INLINE).
 * Exactly once: running needs a claim, one compare-and-swap from a word with neither TAKEN nor
 * DONE, which a taker from a queue, a getter and a cancel (which sets DONE instead) race for.
 * The record's end: it is recycled by the one read-modify-write that leaves DONE set and QUEUED
 * and HANDLE clear (finish, unqueue, or the handle's release), since each of those clears bits
 * of the same word. No lost wake-up: a getter sets WAITER with a compare-and-swap from the value
 * it saw (no DONE) and sleeps only on the value with the bit; the finish or cancel that sets DONE
 * is a read-modify-write of the same word, so it either comes first (the getter's CAS fails and it
 * reads DONE) or reads WAITER and wakes it.
 */
#ifndef WS_FUTURE_STATE_H
#define WS_FUTURE_STATE_H

#include "atomics.h"

#include <stdbool.h>
#include <stdint.h>

enum {
    WS_FUTURE_TAKEN = 1,
    WS_FUTURE_DONE = 2,
    WS_FUTURE_WAITER = 4,
    WS_FUTURE_KIND = 0x30,
    WS_FUTURE_CANCELLED = 0x40,
    WS_FUTURE_QUEUED = 0x80,
    WS_FUTURE_RUNNER_SHIFT = 8,
    WS_FUTURE_RUNNER = 0xFFFFu << WS_FUTURE_RUNNER_SHIFT,
    WS_FUTURE_HANDLE = 1u << 24,
    /* With TAKEN: claimed by a get that took it back from the top of the deque that queued it
     * (worksteal.h's inline get, or the library's); its own work begins at the record's
     * bottom - 1, and the runner's floor stays that of its current task. */
    WS_FUTURE_INLINE = 1u << 25,
    /* A recycled record's word until it is reused: no kind bits, so not a future. */
    WS_FUTURE_FREED = 0x0F0E0000u,
};

/* What the caller of a state change must do next. */
enum {
    WS_FUTURE_WAKE = 1,    /* futex-wake the word (its address only: the record may be gone) */
    WS_FUTURE_RECYCLE = 2, /* nobody holds the record any more: recycle it */
};

/* The relied-on orders and steps, by name, so that the model can weaken each one. */
#ifndef WS_FUTURE_FINISH_RMW
#define WS_FUTURE_FINISH_RMW(p, v) ws_fetch_add_acq_rel((p), (v))
#endif
#ifndef WS_FUTURE_READ
#define WS_FUTURE_READ(p) ws_load_acquire(p)
#endif
#ifndef WS_FUTURE_CLAIM_CAS
#define WS_FUTURE_CLAIM_CAS(p, seen, v) ws_cas_acq_rel((p), (seen), (v))
#endif
#ifndef WS_FUTURE_ANNOUNCE
#define WS_FUTURE_ANNOUNCE(p, seen, v) ws_cas_acq_rel((p), (seen), (v))
#endif
#ifndef WS_FUTURE_DROP
#define WS_FUTURE_DROP(p, bit) ws_fetch_and_acq_rel((p), ~(uint32_t)(bit))
#endif

/* Any thread: the word (acquire: a DONE read here makes the result visible; pairs with the
 * release half of the finish's RMW). */
static inline uint32_t ws__future_read(_Atomic uint32_t *state)
{
    return WS_FUTURE_READ(state);
}

/* The recycling condition after a change that left the word as now. */
static inline unsigned ws__future_recycle_if_free(uint32_t now)
{
    return (now & WS_FUTURE_DONE) && !(now & (WS_FUTURE_QUEUED | WS_FUTURE_HANDLE))
               ? WS_FUTURE_RECYCLE
               : 0;
}

/* A claim's bits: TAKEN, the runner (a worker's id + 1), and INLINE if the runner took the
 * future's slot back from its own deque and runs it at its index. */
static inline uint32_t ws__future_claim_bits(uint32_t runner, bool at_index)
{
    return WS_FUTURE_TAKEN | runner << WS_FUTURE_RUNNER_SHIFT | (at_index ? WS_FUTURE_INLINE : 0);
}

/* Claims the future with `bits` (ws__future_claim_bits) if it has not started: true if the
 * caller is now its runner. */
static inline bool ws__future_claim_as(_Atomic uint32_t *state, uint32_t bits)
{
    /* relaxed: the CAS below decides. */
    uint32_t s = ws_load_relaxed(state);
    while (!(s & (WS_FUTURE_TAKEN | WS_FUTURE_DONE))) {
        /* acq_rel: the release half publishes the runner's floor (or, INLINE, the record's
         * bottom) to leapfroggers (wait.c, tests/model_future_leapfrog.c). The acquire half
         * orders nothing the run needs (the submitter's writes reach a claimer by the handle's
         * route, docs/api.md); kept, at no cost on x86, for a future writer of this word. Fails
         * if a rival claimed or cancelled it, or a getter announced itself (then we try again). */
        if (WS_FUTURE_CLAIM_CAS(state, &s, s | bits))
            return true;
    }
    return false;
}

/* Worker runner (its id + 1) claims the future if it has not started, as one taken from a queue
 * or claimed where it sits: true if it is now its runner. */
static inline bool ws__future_claim(_Atomic uint32_t *state, uint32_t runner)
{
    return ws__future_claim_as(state, ws__future_claim_bits(runner, false));
}

/* What a finish that found the word at old, and cleared `clear` (and set DONE), asks for. */
static inline unsigned ws__future_finish_todo(uint32_t old, uint32_t clear)
{
    return ((old & WS_FUTURE_WAITER) ? WS_FUTURE_WAKE : 0) |
           ws__future_recycle_if_free(old - clear + WS_FUTURE_DONE);
}

/* What the finish of worksteal.h's inline get, which found the word at old, asks for: it cleared
 * its claim (TAKEN, RUNNER, INLINE) and the slot's QUEUED, as it took the slot back. */
static inline unsigned ws__future_inline_finish_todo(uint32_t old)
{
    uint32_t clear =
        WS_FUTURE_TAKEN | (old & (WS_FUTURE_RUNNER | WS_FUTURE_INLINE)) | WS_FUTURE_QUEUED;
    return ws__future_finish_todo(old, clear);
}

/* The runner is done: clears `clear` (its claim's bits, and QUEUED if it took the queue's
 * slot) and sets DONE in one RMW. Returns WS_FUTURE_* flags. */
static inline unsigned ws__future_finish(_Atomic uint32_t *state, uint32_t clear)
{
    /* acq_rel: the release half publishes the result to getters' acquire reads of DONE; the
     * acquire half makes a WAITER or a released handle seen here ours to act on. The bits of
     * clear are set and DONE is not, so the addition cannot carry. */
    uint32_t old = WS_FUTURE_FINISH_RMW(state, WS_FUTURE_DONE - clear);
    return ws__future_finish_todo(old, clear);
}

/* A reference goes: QUEUED (a queue's slot consumed without running the future) or HANDLE
 * (ws_future_free). Returns WS_FUTURE_RECYCLE or 0, and the word before in *old. */
static inline unsigned ws__future_drop(_Atomic uint32_t *state, uint32_t bit, uint32_t *old)
{
    /* acq_rel: the release half orders our reads of the record before its recycling by
     * another holder; the acquire half makes theirs ours when we recycle. */
    *old = WS_FUTURE_DROP(state, bit);
    return ws__future_recycle_if_free(*old & ~bit);
}

/* Cancels the future if it has not started: true if it is now cancelled (or was); *todo gets
 * WS_FUTURE_WAKE when a getter sleeps on it. */
static inline bool ws__future_cancel(_Atomic uint32_t *state, unsigned *todo)
{
    *todo = 0;
    /* relaxed: the CAS below decides. */
    uint32_t s = ws_load_relaxed(state);
    while (!(s & (WS_FUTURE_TAKEN | WS_FUTURE_DONE))) {
        /* acq_rel: a claim by nobody: the release half publishes DONE to getters, the acquire
         * half makes a sleeping getter's WAITER ours to wake. */
        if (ws_cas_acq_rel(state, &s, s | WS_FUTURE_DONE | WS_FUTURE_CANCELLED)) {
            *todo = (s & WS_FUTURE_WAITER) ? WS_FUTURE_WAKE : 0;
            return true;
        }
    }
    return (s & WS_FUTURE_CANCELLED) != 0;
}

/* A waiter about to sleep on a state word it read as seen (without DONE): the value to sleep on,
 * with WAITER, or 0 if the word moved meanwhile (read it again). Also the waiters' step for
 * other tasks' state words (wait.c), whose WAITER bit is the same. */
static inline uint32_t ws__state_announce(_Atomic uint32_t *state, uint32_t seen)
{
    if (seen & WS_FUTURE_WAITER)
        return seen;
    /* acq_rel: the partner of the finishing RMW (see the top); fails if the word moved. */
    if (!WS_FUTURE_ANNOUNCE(state, &seen, seen | WS_FUTURE_WAITER))
        return 0;
    return seen | WS_FUTURE_WAITER;
}

#endif /* WS_FUTURE_STATE_H */
