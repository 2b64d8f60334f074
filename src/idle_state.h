/* idle_state.h: the idle word of a pool (who searches, who sleeps, which wake-ups are owed) and
 * the atomic steps on it. The protocol and its argument are in src/idle.c's opening comment;
 * the steps live here, apart from the loops that use them, so that the model in
 * tests/model_idle.c runs these very functions with these very memory orders.
 *
 * One 64-bit word, three 21-bit counts (a pool has at most 2 * WS_MAX_WORKERS threads):
 *   searchers  workers looking for work, including sleepers a waker has claimed;
 *   sleepers   workers parked or about to park that no waker has claimed yet;
 *   tokens     wake-ups owed: claimed sleepers that have not taken theirs yet.
 * Every thread between ws__idle_sleep_begin and ws__idle_sleep_end is counted once, in sleepers
 * (unclaimed) or in tokens (claimed), and every change of the word is a read-modify-write.
 */
#ifndef WS_IDLE_STATE_H
#define WS_IDLE_STATE_H

#include "atomics.h"

#include <stdbool.h>
#include <stdint.h>

#define WS_IDLE_SEARCHER ((uint64_t)1)
#define WS_IDLE_SLEEPER  ((uint64_t)1 << 21)
#define WS_IDLE_TOKEN    ((uint64_t)1 << 42)
#define WS_IDLE_FIELD    ((uint64_t)(1u << 21) - 1)

/* The orders (and steps) the protocol relies on, by name, so that tests/model_idle.c can weaken
 * each one and show that the checker then finds a lost wake-up. */
#ifndef WS_IDLE_OBSERVE_RMW
#define WS_IDLE_OBSERVE_RMW(p) ws_fetch_add_acq_rel((p), 0)
#endif
#ifndef WS_IDLE_OBSERVE_SC
#define WS_IDLE_OBSERVE_SC(p) ws_load_seq_cst(p)
#endif
#ifndef WS_IDLE_CLAIM_CAS
#define WS_IDLE_CLAIM_CAS(p, seen, v) ws_cas_acq_rel((p), (seen), (v))
#endif
#ifndef WS_IDLE_SEARCH_END
#define WS_IDLE_SEARCH_END(p, v) ws_fetch_sub_seq_cst((p), (v))
#endif
#ifndef WS_IDLE_SLEEP_BEGIN
#define WS_IDLE_SLEEP_BEGIN(p, v) ws_fetch_add_seq_cst((p), (v))
#endif
#ifndef WS_IDLE_TOKEN_READ
#define WS_IDLE_TOKEN_READ(p) ws_load_acquire(p)
#endif
#ifndef WS_IDLE_SLEEP_END_CAS
#define WS_IDLE_SLEEP_END_CAS(p, seen, v) ws_cas_acq_rel((p), (seen), (v))
#endif

static inline uint32_t ws__idle_searchers(uint64_t s)
{
    return (uint32_t)(s & WS_IDLE_FIELD);
}

static inline uint32_t ws__idle_sleepers(uint64_t s)
{
    return (uint32_t)((s >> 21) & WS_IDLE_FIELD);
}

static inline uint32_t ws__idle_tokens(uint64_t s)
{
    return (uint32_t)((s >> 42) & WS_IDLE_FIELD);
}

/* A sleeper is worth waking for new work only if nobody searches (a searcher will find the
 * work, or hand the search on when it stops) and somebody sleeps unclaimed. */
static inline bool ws__idle_wake_wanted(uint64_t s)
{
    return ws__idle_searchers(s) == 0 && ws__idle_sleepers(s) != 0;
}

/* A producer that published work with a plain store (a push onto a deque): its view of the
 * word. acq_rel RMW: every change of the word is an RMW, so a parking worker's announcement is
 * ordered with this one in the word's modification order: either we read it, or its RMW reads
 * from (a release sequence headed by) ours, synchronizes with it and its next look sees the
 * work. */
static inline uint64_t ws__idle_observe_rmw(_Atomic uint64_t *word)
{
    return WS_IDLE_OBSERVE_RMW(word);
}

/* A producer that published work with a seq_cst RMW (the injector's tail exchange): its view
 * of the word. seq_cst load: with the publication, the sleeper's seq_cst announcement and the
 * sleeper's seq_cst load of the tail, four seq_cst accesses in one total order (store
 * buffering): one of the two sees the other. No locked instruction. */
static inline uint64_t ws__idle_observe_sc(_Atomic uint64_t *word)
{
    return WS_IDLE_OBSERVE_SC(word);
}

/* A waker that saw s: turns one unclaimed sleeper into a searcher owed a token, in one step, so
 * that no other producer wakes a second sleeper for the same search. False if the word changed
 * so that no wake-up is wanted any more (someone searches, or nobody sleeps). acq_rel: the
 * sleeper that takes the token acquires it, and with it the work published before. */
static inline bool ws__idle_claim(_Atomic uint64_t *word, uint64_t s)
{
    while (ws__idle_wake_wanted(s))
        if (WS_IDLE_CLAIM_CAS(word, &s, s + WS_IDLE_SEARCHER - WS_IDLE_SLEEPER + WS_IDLE_TOKEN))
            return true;
    return false;
}

/* A worker starts searching. relaxed: only a count here; the protocol's order is carried by
 * the steps that end a search (ws__idle_search_end, ws__idle_sleep_begin). */
static inline void ws__idle_search_begin(_Atomic uint64_t *word)
{
    ws_fetch_add_relaxed(word, WS_IDLE_SEARCHER);
}

/* A searcher found work and stops searching; returns the word after. seq_cst: a producer that
 * saw us searching relied on us; this RMW against the producer's publication and observation
 * is store buffering again, so the look for leftover work that follows sees its work. */
static inline uint64_t ws__idle_search_end(_Atomic uint64_t *word)
{
    return WS_IDLE_SEARCH_END(word, WS_IDLE_SEARCHER) - WS_IDLE_SEARCHER;
}

/* A searcher found nothing and announces itself as a sleeper before its last look (one step:
 * a producer never sees it as neither). seq_cst: the sleeper's half of the store buffering
 * with ws__idle_observe_rmw and ws__idle_observe_sc. */
static inline void ws__idle_sleep_begin(_Atomic uint64_t *word)
{
    WS_IDLE_SLEEP_BEGIN(word, WS_IDLE_SLEEPER - WS_IDLE_SEARCHER);
}

/* A sleeper is owed a wake-up. acquire: pairs with the release half of ws__idle_claim. */
static inline bool ws__idle_token_owed(_Atomic uint64_t *word)
{
    return ws__idle_tokens(WS_IDLE_TOKEN_READ(word)) != 0;
}

/* A sleeper (woken, or leaving because its last look found something, or because the pool
 * exits) becomes a searcher again: it takes an owed token if there is one (the waker already
 * counted it as a searcher), else it removes itself from the unclaimed sleepers. One of the two
 * is always possible, since it is counted in one of them. acq_rel: acquires the claim's work,
 * and the next step of the protocol (search_end or sleep_begin) is ordered after it. True if it
 * took a token (it was woken: the statistics count the wake-up here). */
static inline bool ws__idle_sleep_end(_Atomic uint64_t *word)
{
    uint64_t s = ws_load_relaxed(word); /* relaxed: the CAS below checks it */
    for (;;) {
        bool token = ws__idle_tokens(s) != 0;
        uint64_t next = token ? s - WS_IDLE_TOKEN : s - WS_IDLE_SLEEPER + WS_IDLE_SEARCHER;
        if (WS_IDLE_SLEEP_END_CAS(word, &s, next))
            return token;
    }
}

#endif /* WS_IDLE_STATE_H */
