/* test_loop_util.h: helpers shared by the loop tests (tests/test_loop_*.c).
 *
 * The pools the loop tests run on (1, 2, 4 and 8 workers through ws_pool_run, and "outside": the
 * calling thread, which sends the loop to the default pool), a reference for the leaves of the
 * halving tree, and a cheap deterministic hash. Header-only, like test.h.
 */
#ifndef WS_TEST_LOOP_UTIL_H
#define WS_TEST_LOOP_UTIL_H

#include "atomics.h"
#include "test.h"
#include "worksteal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a loop is started from: a pool of that many workers (through ws_pool_run), or, for
 * workers == 0, the main thread itself (the loop then runs on the default pool). */
typedef struct loop_place {
    unsigned workers;
    ws_pool *pool;
} loop_place;

#define LOOP_PLACES 5

/* Creates the places: 1, 2, 4, 8 workers (more than this machine's cores), then outside. */
static inline void loop_places_open(loop_place places[LOOP_PLACES])
{
    static const unsigned counts[LOOP_PLACES] = {1, 2, 4, 8, 0};
    for (int i = 0; i < LOOP_PLACES; i++) {
        places[i].workers = counts[i];
        places[i].pool = NULL;
        if (counts[i] != 0) {
            ws_config cfg = {0};
            cfg.workers = counts[i];
            ASSERT_OK(ws_pool_create(&places[i].pool, &cfg));
            ASSERT_EQ(ws_pool_workers(places[i].pool), counts[i]);
        }
    }
}

static inline void loop_places_close(loop_place places[LOOP_PLACES])
{
    for (int i = 0; i < LOOP_PLACES; i++)
        ws_pool_destroy(places[i].pool);
}

/* Runs fn(arg) at the place: on its pool, or right here. */
static inline void loop_run_at(const loop_place *place, ws_fn fn, void *arg)
{
    if (place->pool != NULL)
        ASSERT_OK(ws_pool_run(place->pool, fn, arg));
    else
        fn(arg);
}

static inline const char *loop_place_name(const loop_place *place)
{
    switch (place->workers) {
    case 1:
        return "1 worker";
    case 2:
        return "2 workers";
    case 4:
        return "4 workers";
    case 8:
        return "8 workers";
    default:
        return "outside a worker";
    }
}

/* The number of leaves of the halving tree over n items with leaves of at most `leaf` items
 * (n > 0): what docs/loops.md promises for explicit grain. Written as the definition, by
 * recursion, independently of the library's loop. */
static inline uint64_t loop_leaves(size_t n, size_t leaf)
{
    if (n <= leaf)
        return 1;
    return loop_leaves(n / 2, leaf) + loop_leaves(n - n / 2, leaf);
}

/* The automatic leaf size of ws_parallel_reduce, as docs/loops.md states it: ceil(n / 1024)
 * items, at most 4096, but at least ceil(n / 2^20). */
static inline size_t loop_auto_leaf(size_t n)
{
    size_t leaf = n / 1024 + (n % 1024 != 0);
    size_t least = (n >> 20) + ((n & ((1u << 20) - 1)) != 0);
    if (leaf > 4096)
        leaf = 4096;
    return leaf > least ? leaf : least;
}

/* splitmix64: a deterministic per-index value. */
static inline uint64_t loop_hash(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Work that costs about `units` and that the compiler cannot remove (the result is returned). */
static inline uint64_t loop_spin(uint64_t seed, uint64_t units)
{
    uint64_t x = seed | 1;
    for (uint64_t k = 0; k < units; k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

#endif /* WS_TEST_LOOP_UTIL_H */
