/* peer.h: the peers of ws-bench, other runtimes' fork-join measured on the same workloads.
 *
 * A peer is fib, nqueens and the unbalanced tree (the computations of wl_fib.c, wl_nqueens.c and
 * wl_uts.c: same inputs, same answers, no cutoffs) written the way that runtime's users write
 * them, one task per fork, behind a table of plain C functions:
 *   tbb    oneTBB's tbb::task_group, in a tbb::task_arena of P threads (peer_tbb.cpp)
 *   rayon  Rayon's rayon::join, in a ThreadPool of P threads (peer_rayon/src/lib.rs)
 * Each one is linked into ws-bench only when its toolchain was found at configure time
 * (peers.cmake); peer.c says which. The workloads call a peer's functions from their root, which
 * the peer's run() calls inside its pool (bench_util.c, wb_run_root).
 *
 * Plain C with C linkage: peer_tbb.cpp defines its half, and lib.rs mirrors it with #[no_mangle].
 */
#ifndef WS_BENCH_PEER_H
#define WS_BENCH_PEER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wb_peer {
    /* A pool of `workers` threads (the caller's thread not among them), or NULL on failure. */
    void *(*create)(unsigned workers);
    void (*destroy)(void *pool);
    /* Runs fn(arg) on one of the pool's threads and returns when it and all it forked are done. */
    void (*run)(void *pool, void (*fn)(void *), void *arg);
    /* The computations, called from inside run(). */
    uint64_t (*fib)(int n);                      /* fib(n), forking fib(n-2), for n <= 93 */
    uint64_t (*nqueens)(int n);                  /* solutions, a task per legal placement, n < 32 */
    void (*uts)(int root_kids, uint64_t out[2]); /* the tree of wl_uts.h: nodes, hash sum */
} wb_peer;

/* NULL where the peer was not built. */
extern const wb_peer *const wb_peer_tbb, *const wb_peer_rayon;

/* The oneTBB half (peer_tbb.cpp). */
void *wb_tbb_create(unsigned workers);
void wb_tbb_destroy(void *pool);
void wb_tbb_run(void *pool, void (*fn)(void *), void *arg);
uint64_t wb_tbb_fib(int n);
uint64_t wb_tbb_nqueens(int n);
void wb_tbb_uts(int root_kids, uint64_t out[2]);

/* The Rayon half (peer_rayon/src/lib.rs). */
void *wb_rayon_create(unsigned workers);
void wb_rayon_destroy(void *pool);
void wb_rayon_run(void *pool, void (*fn)(void *), void *arg);
uint64_t wb_rayon_fib(int n);
uint64_t wb_rayon_nqueens(int n);
void wb_rayon_uts(int root_kids, uint64_t out[2]);

#ifdef __cplusplus
}
#endif

#endif /* WS_BENCH_PEER_H */
