/* atomics.h: the only file that spells memory_order_*.
 *
 * One helper per (operation, order), so that `grep ws_load_acquire src/` lists every acquire
 * load, and docs/memory-ordering.md can be checked against the code. The helpers are
 * type-generic macros over C11 <stdatomic.h>; every caller puts a comment at the call saying
 * what the order is for and which operation it pairs with.
 */
#ifndef WS_ATOMICS_H
#define WS_ATOMICS_H

#include <stdatomic.h>

#define ws_load_relaxed(p)     atomic_load_explicit((p), memory_order_relaxed)
#define ws_load_acquire(p)     atomic_load_explicit((p), memory_order_acquire)
#define ws_load_seq_cst(p)     atomic_load_explicit((p), memory_order_seq_cst)
#define ws_store_relaxed(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define ws_store_release(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define ws_store_seq_cst(p, v) atomic_store_explicit((p), (v), memory_order_seq_cst)

#define ws_exchange_relaxed(p, v) atomic_exchange_explicit((p), (v), memory_order_relaxed)
#define ws_exchange_release(p, v) atomic_exchange_explicit((p), (v), memory_order_release)
#define ws_exchange_acq_rel(p, v) atomic_exchange_explicit((p), (v), memory_order_acq_rel)
#define ws_exchange_seq_cst(p, v) atomic_exchange_explicit((p), (v), memory_order_seq_cst)

#define ws_fetch_add_relaxed(p, v) atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#define ws_fetch_add_release(p, v) atomic_fetch_add_explicit((p), (v), memory_order_release)
#define ws_fetch_add_acq_rel(p, v) atomic_fetch_add_explicit((p), (v), memory_order_acq_rel)
#define ws_fetch_add_seq_cst(p, v) atomic_fetch_add_explicit((p), (v), memory_order_seq_cst)
#define ws_fetch_sub_relaxed(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_relaxed)
#define ws_fetch_sub_release(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_release)
#define ws_fetch_sub_acq_rel(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_acq_rel)
#define ws_fetch_sub_seq_cst(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_seq_cst)
#define ws_fetch_or_relaxed(p, v)  atomic_fetch_or_explicit((p), (v), memory_order_relaxed)
#define ws_fetch_or_acq_rel(p, v)  atomic_fetch_or_explicit((p), (v), memory_order_acq_rel)
#define ws_fetch_and_acq_rel(p, v) atomic_fetch_and_explicit((p), (v), memory_order_acq_rel)
#define ws_fetch_and_relaxed(p, v) atomic_fetch_and_explicit((p), (v), memory_order_relaxed)

/* Strong CAS; on failure *expected receives the current value, read with relaxed order. */
#define ws_cas_seq_cst(p, expected, desired)                                                  \
    atomic_compare_exchange_strong_explicit((p), (expected), (desired), memory_order_seq_cst, \
                                            memory_order_relaxed)
#define ws_cas_acq_rel(p, expected, desired)                                                  \
    atomic_compare_exchange_strong_explicit((p), (expected), (desired), memory_order_acq_rel, \
                                            memory_order_relaxed)
#define ws_cas_acquire(p, expected, desired)                                                  \
    atomic_compare_exchange_strong_explicit((p), (expected), (desired), memory_order_acquire, \
                                            memory_order_relaxed)
#define ws_cas_relaxed(p, expected, desired)                                                  \
    atomic_compare_exchange_strong_explicit((p), (expected), (desired), memory_order_relaxed, \
                                            memory_order_relaxed)

/* Owner-written counters read by other threads: one writer, so a relaxed load and a relaxed
 * store (no locked instruction) are enough; readers only need each value to be untorn. */
#define ws_counter_add(p, v) ws_store_relaxed((p), ws_load_relaxed(p) + (v))

#endif /* WS_ATOMICS_H */
