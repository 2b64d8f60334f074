/* wl_uts.h: the unbalanced tree of the uts workload (wl_uts.c), in C that C++ compiles too, so
 * that the oneTBB peer (peer_tbb.cpp) walks the very same tree.
 *
 * A binomial tree with the UTS benchmark's T3 parameters (Olivier et al., 2006): every non-root
 * node has UTS_M children with probability UTS_Q and none otherwise, decided by a hash of the
 * node's id. The node's "work" is a chain of UTS_ROUNDS mixing steps (mix64.h) standing in for
 * UTS's SHA-1. The Rayon peer (peer_rayon/src/lib.rs) writes these lines in Rust;
 * ws-bench checks every peer's node count and hash sum against the reference.
 */
#ifndef WS_BENCH_WL_UTS_H
#define WS_BENCH_WL_UTS_H

#include "mix64.h"

#include <stdint.h>

#define UTS_M      8
#define UTS_Q      536334041u /* 0.124875 * 2^32: q*m = 0.999 */
#define UTS_ROUNDS 40         /* mixing steps per node: about 100 ns */
#define UTS_GOLDEN 0x9e3779b97f4a7c15ull

/* The node's work: its hash, from which its children are derived. */
static inline uint64_t uts_hash(uint64_t id)
{
    for (int r = 0; r < UTS_ROUNDS; r++)
        id = wb_mix64(id);
    return id;
}

static inline int uts_kids(uint64_t h)
{
    return (uint32_t)(h >> 32) < UTS_Q ? UTS_M : 0;
}

static inline uint64_t uts_child(uint64_t h, int i)
{
    return h + UTS_GOLDEN * (uint64_t)(i + 1);
}

static inline uint64_t uts_root_id(void)
{
    return 1;
}

#endif /* WS_BENCH_WL_UTS_H */
