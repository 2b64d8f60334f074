/* peer_tbb.cpp: the oneTBB peer of ws-bench (peer.h): fib, nqueens and the unbalanced tree with
 * tbb::task_group, the way oneTBB's users write a fork-join: a task_group per node, run() for
 * each forked child, the rest called directly, wait().
 *
 * The computations are those of wl_fib.c, wl_nqueens.c and wl_uts.c, fork for fork: fib forks
 * fib(n-2) and calls fib(n-1); nqueens runs one task per legal placement; the tree runs one task
 * per child (the root's too). The pool is a tbb::task_arena of P slots: run() enters it from the
 * measuring thread, which takes one slot, so P threads compute, as in a worksteal pool of P.
 */
#include "peer.h"
#include "wl_uts.h"

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace
{

/* ---- fib ---- */

uint64_t fib(int n)
{
    if (n < 2)
        return static_cast<uint64_t>(n);
    uint64_t x, y;
    tbb::task_group g;
    g.run([&y, n] { y = fib(n - 2); });
    x = fib(n - 1);
    g.wait();
    return x + y;
}

/* ---- nqueens ---- */

uint32_t nq_free(int n, uint32_t cols, uint32_t d1, uint32_t d2)
{
    return ~(cols | d1 | d2) & ((1u << n) - 1u);
}

uint64_t nqueens(int n, int row, uint32_t cols, uint32_t d1, uint32_t d2)
{
    if (row == n)
        return 1;
    uint64_t counts[32];
    int k = 0;
    tbb::task_group g;
    for (uint32_t avail = nq_free(n, cols, d1, d2); avail; avail &= avail - 1) {
        uint32_t bit = avail & (0u - avail);
        uint64_t *slot = &counts[k++];
        g.run([=] { *slot = nqueens(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1); });
    }
    g.wait();
    uint64_t count = 0;
    while (k-- > 0)
        count += counts[k];
    return count;
}

/* ---- the unbalanced tree ---- */

struct subtree {
    uint64_t nodes, sum;
};

subtree uts(uint64_t id)
{
    uint64_t h = uts_hash(id);
    subtree t = {1, h};
    int n = uts_kids(h);
    if (n > 0) {
        subtree kids[UTS_M];
        tbb::task_group g;
        for (int i = 0; i < n; i++)
            g.run([&kids, h, i] { kids[i] = uts(uts_child(h, i)); });
        g.wait();
        for (int i = 0; i < n; i++) {
            t.nodes += kids[i].nodes;
            t.sum += kids[i].sum;
        }
    }
    return t;
}

/* oneTBB caps its threads at the CPU count unless a global_control allows more, where worksteal
 * and Rayon start the threads they are told to. With several such controls alive oneTBB obeys
 * the smallest, so there is one for the process, raised to the largest pool made. The pools are
 * made by one thread (ws-bench's measuring child). */
std::unique_ptr<tbb::global_control> thread_limit;
std::size_t thread_limit_value;

void allow_threads(std::size_t threads)
{
    if (threads <= thread_limit_value)
        return;
    thread_limit.reset(); /* the old control goes first: two at once would keep the smaller */
    thread_limit.reset(
        new tbb::global_control(tbb::global_control::max_allowed_parallelism, threads));
    thread_limit_value = threads;
}

} // namespace

extern "C" {

void *wb_tbb_create(unsigned workers)
{
    allow_threads(workers);
    auto *arena = new (std::nothrow) tbb::task_arena(static_cast<int>(workers));
    if (arena)
        arena->initialize();
    return arena;
}

void wb_tbb_destroy(void *p)
{
    delete static_cast<tbb::task_arena *>(p);
}

void wb_tbb_run(void *p, void (*fn)(void *), void *arg)
{
    static_cast<tbb::task_arena *>(p)->execute([fn, arg] { fn(arg); });
}

uint64_t wb_tbb_fib(int n)
{
    return fib(n);
}

uint64_t wb_tbb_nqueens(int n)
{
    return nqueens(n, 0, 0, 0, 0);
}

void wb_tbb_uts(int root_kids, uint64_t out[2])
{
    uint64_t h = uts_hash(uts_root_id());
    std::vector<subtree> kids(static_cast<std::size_t>(root_kids));
    tbb::task_group g;
    for (int i = 0; i < root_kids; i++)
        g.run([&kids, h, i] { kids[static_cast<std::size_t>(i)] = uts(uts_child(h, i)); });
    g.wait();
    out[0] = 1;
    out[1] = h;
    for (const subtree &t : kids) {
        out[0] += t.nodes;
        out[1] += t.sum;
    }
}

} // extern "C"
