/* wl_nqueens.c: count the placements of n queens, one spawned task per legal placement.
 *
 * The fan-out varies from node to node (0 to n children) and most branches die early: an
 * irregular tree that no static split would balance. Rows are filled top-down; the free columns
 * of a row are the bits not attacked by a queen above (column and both diagonals, as bitmasks).
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

#define NQ_MAX 18 /* the table of known answers below goes this far */

typedef struct nq_state {
    int n;
    uint64_t solutions;
    uint64_t nodes; /* tasks spawned by one run: computed once in prepare */
} nq_state;

/* A partial placement: `row` queens placed; the three masks mark attacked columns. */
typedef struct nq_arg {
    int n, row;
    uint32_t cols, d1, d2;
    uint64_t count;
} nq_arg;

static inline uint32_t nq_free(int n, uint32_t cols, uint32_t d1, uint32_t d2)
{
    return ~(cols | d1 | d2) & ((1u << n) - 1u);
}

/* ---- serial ---- */

static uint64_t nq_serial(int n, int row, uint32_t cols, uint32_t d1, uint32_t d2)
{
    if (row == n)
        return 1;
    uint64_t count = 0;
    for (uint32_t avail = nq_free(n, cols, d1, d2); avail; avail &= avail - 1) {
        uint32_t bit = avail & -avail;
        count += nq_serial(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1);
    }
    return count;
}

static void root_serial(void *p)
{
    nq_state *s = p;
    s->solutions = nq_serial(s->n, 0, 0, 0, 0);
}

/* Nodes of the search tree below the root: one spawn each in the parallel versions. */
static uint64_t nq_nodes(int n, int row, uint32_t cols, uint32_t d1, uint32_t d2)
{
    uint64_t nodes = 0;
    if (row == n)
        return 0;
    for (uint32_t avail = nq_free(n, cols, d1, d2); avail; avail &= avail - 1) {
        uint32_t bit = avail & -avail;
        nodes += 1 + nq_nodes(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1);
    }
    return nodes;
}

/* ---- worksteal ---- */

static void nq_ws(void *p)
{
    nq_arg *a = p;
    if (a->row == a->n) {
        a->count = 1;
        return;
    }
    nq_arg kids[NQ_MAX];
    ws_task tasks[NQ_MAX];
    int k = 0;
    for (uint32_t avail = nq_free(a->n, a->cols, a->d1, a->d2); avail; avail &= avail - 1) {
        uint32_t bit = avail & -avail;
        kids[k] =
            (nq_arg){a->n, a->row + 1, a->cols | bit, (a->d1 | bit) << 1, (a->d2 | bit) >> 1, 0};
        ws_spawn(&tasks[k], nq_ws, &kids[k]);
        k++;
    }
    uint64_t count = 0;
    while (k-- > 0) {
        ws_sync(&tasks[k]);
        count += kids[k].count;
    }
    a->count = count;
}

static void root_ws(void *p)
{
    nq_state *s = p;
    nq_arg a = {s->n, 0, 0, 0, 0, 0};
    nq_ws(&a);
    s->solutions = a.count;
}

/* ---- worksteal's typed tasks ---- */

WS_TASK_5(uint64_t, nq_stack, int, n, int, row, uint32_t, cols, uint32_t, d1, uint32_t, d2)
{
    if (row == n)
        return 1;
    int k = 0;
    for (uint32_t avail = nq_free(n, cols, d1, d2); avail; avail &= avail - 1) {
        uint32_t bit = avail & -avail;
        WS_SPAWN(nq_stack, n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1);
        k++;
    }
    uint64_t count = 0;
    while (k-- > 0)
        count += WS_SYNC(nq_stack);
    return count;
}

static void root_stack(void *p, ws_pool *pool)
{
    nq_state *s = p;
    s->solutions = nq_stack_run(pool, s->n, 0, 0, 0, 0);
}

/* ---- central queue ---- */

static void nq_cq(void *p)
{
    nq_arg *a = p;
    if (a->row == a->n) {
        a->count = 1;
        return;
    }
    nq_arg kids[NQ_MAX];
    cq_task tasks[NQ_MAX];
    int k = 0;
    for (uint32_t avail = nq_free(a->n, a->cols, a->d1, a->d2); avail; avail &= avail - 1) {
        uint32_t bit = avail & -avail;
        kids[k] =
            (nq_arg){a->n, a->row + 1, a->cols | bit, (a->d1 | bit) << 1, (a->d2 | bit) >> 1, 0};
        cq_spawn(&tasks[k], nq_cq, &kids[k]);
        k++;
    }
    uint64_t count = 0;
    while (k-- > 0) {
        cq_sync(&tasks[k]);
        count += kids[k].count;
    }
    a->count = count;
}

static void root_cq(void *p)
{
    nq_state *s = p;
    nq_arg a = {s->n, 0, 0, 0, 0, 0};
    nq_cq(&a);
    s->solutions = a.count;
}

/* ---- OpenMP tasks ---- */

static uint64_t nq_omp(int n, int row, uint32_t cols, uint32_t d1, uint32_t d2)
{
    if (row == n)
        return 1;
    uint64_t counts[NQ_MAX];
    int k = 0;
    for (uint32_t avail = nq_free(n, cols, d1, d2); avail; avail &= avail - 1) {
        uint32_t bit = avail & -avail;
#pragma omp task shared(counts) firstprivate(k, bit)
        counts[k] = nq_omp(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1);
        k++;
    }
#pragma omp taskwait
    uint64_t count = 0;
    while (k-- > 0)
        count += counts[k];
    return count;
}

static void root_omp(void *p)
{
    nq_state *s = p;
    s->solutions = nq_omp(s->n, 0, 0, 0, 0);
}

/* ---- the peers (peer.h) ---- */

static void root_peer(void *p, const wb_peer *peer)
{
    nq_state *s = p;
    s->solutions = peer->nqueens(s->n);
}

/* ---- the workload ---- */

static const wb_roots roots = {root_serial, root_cq, root_ws, root_omp, root_peer, root_stack};

/* Known solution counts (OEIS A000170). */
static const uint64_t nq_known[NQ_MAX + 1] = {
    1,   1,    0,     0,     2,      10,      4,        40,       92,        352,
    724, 2680, 14200, 73712, 365596, 2279184, 14772512, 95815104, 666090624,
};

static void *prepare(long size)
{
    if (size < 1 || size > NQ_MAX) {
        fprintf(stderr, "ws-bench: nqueens: size must be 1..%d, not %ld\n", NQ_MAX, size);
        return NULL;
    }
    nq_state *s = wb_alloc("nqueens", sizeof(*s));
    if (s)
        *s = (nq_state){(int)size, 0, nq_nodes((int)size, 0, 0, 0, 0)};
    return s;
}

static void describe(void *p, char *buf, size_t len)
{
    nq_state *s = p;
    snprintf(buf, len, "nqueens(%d): a task per legal placement, %llu tasks", s->n,
             (unsigned long long)s->nodes);
}

static void reset(void *p)
{
    ((nq_state *)p)->solutions = 0;
}

static int run(void *p, const wb_runner *r)
{
    return wb_run_root(r, &roots, p);
}

static bool check(void *p, char *buf, size_t len)
{
    nq_state *s = p;
    uint64_t want = nq_known[s->n];
    if (s->solutions != want) {
        snprintf(buf, len, "got %llu solutions, want %llu", (unsigned long long)s->solutions,
                 (unsigned long long)want);
        return false;
    }
    snprintf(buf, len, "%llu solutions", (unsigned long long)s->solutions);
    return true;
}

static void destroy(void *p)
{
    free(p);
}

const wb_workload wb_nqueens = {
    .name = "nqueens",
    .title = "n queens, a task per legal placement: irregular fan-out",
    .default_size = 13,
    .quick_size = 8,
    .has_peers = true,
    .has_stack = true,
    .prepare = prepare,
    .describe = describe,
    .reset = reset,
    .run = run,
    .check = check,
    .destroy = destroy,
};
