/* wl_uts.c: an unbalanced tree search, counting the nodes of a binomial tree.
 *
 * The root has `size` children. Every other node has UTS_M children with probability UTS_Q and
 * none otherwise, decided by a hash of the node's id (wl_uts.h), so the tree is fixed but its
 * shape cannot be known without walking it: with q*m just below 1 most subtrees stop at once and
 * a few run hundreds of levels deep (the seeds' "the recursion is unbalanced and you have no way
 * to know that in advance").
 * Every node is one spawned task; the answer is the node count and a sum of the node hashes.
 */
#include "wl_uts.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct uts_arg {
    uint64_t id;
    uint64_t nodes, sum; /* of the subtree, filled by the task */
} uts_arg;

typedef struct uts_state {
    int root_kids;
    uint64_t nodes, sum;           /* the last run's answer */
    uint64_t want_nodes, want_sum; /* the reference */
    unsigned depth;                /* the deepest node (the root is at 0) */
    uts_arg *kids;                 /* root_kids of each, for the root's fan-out */
    ws_task *ws_tasks;
    cq_task *cq_tasks;
} uts_state;

/* ---- serial ---- */

static void uts_serial(uint64_t id, uint64_t *nodes, uint64_t *sum)
{
    uint64_t h = uts_hash(id);
    *nodes += 1;
    *sum += h;
    for (int i = 0, n = uts_kids(h); i < n; i++)
        uts_serial(uts_child(h, i), nodes, sum);
}

static void root_serial(void *p)
{
    uts_state *s = p;
    uint64_t h = uts_hash(uts_root_id()), nodes = 1, sum = h;
    for (int i = 0; i < s->root_kids; i++)
        uts_serial(uts_child(h, i), &nodes, &sum);
    s->nodes = nodes;
    s->sum = sum;
}

/* ---- worksteal ---- */

static void uts_ws(void *p)
{
    uts_arg *a = p;
    uint64_t h = uts_hash(a->id), nodes = 1, sum = h;
    int n = uts_kids(h);
    if (n > 0) {
        uts_arg kids[UTS_M];
        ws_task tasks[UTS_M];
        for (int i = 0; i < n; i++) {
            kids[i] = (uts_arg){uts_child(h, i), 0, 0};
            ws_spawn(&tasks[i], uts_ws, &kids[i]);
        }
        for (int i = n - 1; i >= 0; i--) {
            ws_sync(&tasks[i]);
            nodes += kids[i].nodes;
            sum += kids[i].sum;
        }
    }
    a->nodes = nodes;
    a->sum = sum;
}

static void root_ws(void *p)
{
    uts_state *s = p;
    uint64_t h = uts_hash(uts_root_id()), nodes = 1, sum = h;
    for (int i = 0; i < s->root_kids; i++) {
        s->kids[i] = (uts_arg){uts_child(h, i), 0, 0};
        ws_spawn(&s->ws_tasks[i], uts_ws, &s->kids[i]);
    }
    for (int i = s->root_kids - 1; i >= 0; i--) {
        ws_sync(&s->ws_tasks[i]);
        nodes += s->kids[i].nodes;
        sum += s->kids[i].sum;
    }
    s->nodes = nodes;
    s->sum = sum;
}

/* ---- worksteal's typed tasks ---- */

/* A subtree's node count and hash sum: the result of a typed task. */
typedef struct uts_count {
    uint64_t nodes, sum;
} uts_count;

static uts_count uts_count_add(uts_count a, uts_count b)
{
    return (uts_count){a.nodes + b.nodes, a.sum + b.sum};
}

WS_TASK_1(uts_count, uts_stack, uint64_t, id)
{
    uint64_t h = uts_hash(id);
    uts_count c = {1, h};
    int n = uts_kids(h);
    for (int i = 0; i < n; i++)
        WS_SPAWN(uts_stack, uts_child(h, i));
    while (n-- > 0)
        c = uts_count_add(c, WS_SYNC(uts_stack));
    return c;
}

/* The root's fan-out of root_kids, a spawn each, as root_ws does. */
WS_TASK_1(uts_count, uts_stack_root, int, root_kids)
{
    uint64_t h = uts_hash(uts_root_id());
    uts_count c = {1, h};
    for (int i = 0; i < root_kids; i++)
        WS_SPAWN(uts_stack, uts_child(h, i));
    for (int i = 0; i < root_kids; i++)
        c = uts_count_add(c, WS_SYNC(uts_stack));
    return c;
}

static void root_stack(void *p, ws_pool *pool)
{
    uts_state *s = p;
    uts_count c = uts_stack_root_run(pool, s->root_kids);
    s->nodes = c.nodes;
    s->sum = c.sum;
}

/* ---- central queue ---- */

static void uts_cq(void *p)
{
    uts_arg *a = p;
    uint64_t h = uts_hash(a->id), nodes = 1, sum = h;
    int n = uts_kids(h);
    if (n > 0) {
        uts_arg kids[UTS_M];
        cq_task tasks[UTS_M];
        for (int i = 0; i < n; i++) {
            kids[i] = (uts_arg){uts_child(h, i), 0, 0};
            cq_spawn(&tasks[i], uts_cq, &kids[i]);
        }
        for (int i = n - 1; i >= 0; i--) {
            cq_sync(&tasks[i]);
            nodes += kids[i].nodes;
            sum += kids[i].sum;
        }
    }
    a->nodes = nodes;
    a->sum = sum;
}

static void root_cq(void *p)
{
    uts_state *s = p;
    uint64_t h = uts_hash(uts_root_id()), nodes = 1, sum = h;
    for (int i = 0; i < s->root_kids; i++) {
        s->kids[i] = (uts_arg){uts_child(h, i), 0, 0};
        cq_spawn(&s->cq_tasks[i], uts_cq, &s->kids[i]);
    }
    for (int i = s->root_kids - 1; i >= 0; i--) {
        cq_sync(&s->cq_tasks[i]);
        nodes += s->kids[i].nodes;
        sum += s->kids[i].sum;
    }
    s->nodes = nodes;
    s->sum = sum;
}

/* ---- OpenMP tasks ---- */

static void uts_omp(uts_arg *a)
{
    uint64_t h = uts_hash(a->id), nodes = 1, sum = h;
    int n = uts_kids(h);
    if (n > 0) {
        uts_arg kids[UTS_M];
        for (int i = 0; i < n; i++) {
            kids[i] = (uts_arg){uts_child(h, i), 0, 0};
#pragma omp task shared(kids) firstprivate(i)
            uts_omp(&kids[i]);
        }
#pragma omp taskwait
        for (int i = n - 1; i >= 0; i--) {
            nodes += kids[i].nodes;
            sum += kids[i].sum;
        }
    }
    a->nodes = nodes;
    a->sum = sum;
}

static void root_omp(void *p)
{
    uts_state *s = p;
    uint64_t h = uts_hash(uts_root_id()), nodes = 1, sum = h;
    uts_arg *kids = s->kids;
    for (int i = 0; i < s->root_kids; i++) {
        kids[i] = (uts_arg){uts_child(h, i), 0, 0};
#pragma omp task firstprivate(kids, i)
        uts_omp(&kids[i]);
    }
#pragma omp taskwait
    for (int i = s->root_kids - 1; i >= 0; i--) {
        nodes += kids[i].nodes;
        sum += kids[i].sum;
    }
    s->nodes = nodes;
    s->sum = sum;
}

/* ---- the peers (peer.h) ---- */

static void root_peer(void *p, const wb_peer *peer)
{
    uts_state *s = p;
    uint64_t out[2];
    peer->uts(s->root_kids, out);
    s->nodes = out[0];
    s->sum = out[1];
}

/* ---- the reference: an iterative walk with an explicit stack ---- */

typedef struct uts_frame {
    uint64_t id;
    unsigned depth;
} uts_frame;

/* Fills want_nodes, want_sum and depth; false if out of memory. */
static bool uts_reference(uts_state *s)
{
    size_t cap = 1024, top = 0;
    uts_frame *stack = wb_alloc("uts reference", cap * sizeof(*stack));
    if (!stack)
        return false;
    uint64_t h = uts_hash(uts_root_id()), nodes = 1, sum = h;
    unsigned depth = 0;
    for (int i = s->root_kids - 1; i >= 0; i--) {
        if (top == cap) {
            uts_frame *bigger = realloc(stack, 2 * cap * sizeof(*stack));
            if (!bigger) {
                free(stack);
                return false;
            }
            stack = bigger;
            cap *= 2;
        }
        stack[top++] = (uts_frame){uts_child(h, i), 1};
    }
    while (top > 0) {
        uts_frame f = stack[--top];
        uint64_t fh = uts_hash(f.id);
        nodes++;
        sum += fh;
        if (f.depth > depth)
            depth = f.depth;
        int n = uts_kids(fh);
        if (top + (size_t)n > cap) {
            uts_frame *bigger = realloc(stack, 2 * cap * sizeof(*stack));
            if (!bigger) {
                free(stack);
                return false;
            }
            stack = bigger;
            cap *= 2;
        }
        for (int i = n - 1; i >= 0; i--)
            stack[top++] = (uts_frame){uts_child(fh, i), f.depth + 1};
    }
    free(stack);
    s->want_nodes = nodes;
    s->want_sum = sum;
    s->depth = depth;
    return true;
}

/* References for the default and --quick sizes, from uts_reference, so that every process of a
 * demo does not walk the tree once more just to know the answer. */
static const struct {
    int root_kids;
    unsigned depth;
    uint64_t nodes, sum;
} uts_known[] = {
    {20, 5, 93ull, 0x5c065e0615f9e06aull},
    {3000, 1364, 3295409ull, 0x15853443d55d2ccaull},
};

/* ---- the workload ---- */

static const wb_roots roots = {root_serial, root_cq, root_ws, root_omp, root_peer, root_stack};

static void destroy(void *p)
{
    uts_state *s = p;
    if (!s)
        return;
    free(s->kids);
    free(s->ws_tasks);
    free(s->cq_tasks);
    free(s);
}

static void *prepare(long size)
{
    if (size < 1 || size > 1000000) {
        fprintf(stderr, "ws-bench: uts: size (root children) must be 1..1000000, not %ld\n", size);
        return NULL;
    }
    uts_state *s = wb_alloc("uts", sizeof(*s));
    if (!s)
        return NULL;
    *s = (uts_state){.root_kids = (int)size};
    s->kids = wb_alloc("uts root", (size_t)size * sizeof(*s->kids));
    s->ws_tasks = wb_alloc("uts root", (size_t)size * sizeof(*s->ws_tasks));
    s->cq_tasks = wb_alloc("uts root", (size_t)size * sizeof(*s->cq_tasks));
    if (!s->kids || !s->ws_tasks || !s->cq_tasks) {
        destroy(s);
        return NULL;
    }
    for (size_t i = 0; i < sizeof(uts_known) / sizeof(uts_known[0]); i++) {
        if (uts_known[i].root_kids == s->root_kids) {
            s->want_nodes = uts_known[i].nodes;
            s->want_sum = uts_known[i].sum;
            s->depth = uts_known[i].depth;
            return s;
        }
    }
    if (!uts_reference(s)) {
        fprintf(stderr, "ws-bench: uts: out of memory for the reference walk\n");
        destroy(s);
        return NULL;
    }
    return s;
}

static void describe(void *p, char *buf, size_t len)
{
    uts_state *s = p;
    snprintf(buf, len,
             "uts: binomial tree (T3: root %d children, then %d with p=0.124875), %llu nodes, "
             "depth %u, a task per node",
             s->root_kids, UTS_M, (unsigned long long)s->want_nodes, s->depth);
}

static void reset(void *p)
{
    uts_state *s = p;
    s->nodes = 0;
    s->sum = 0;
}

static int run(void *p, const wb_runner *r)
{
    return wb_run_root(r, &roots, p);
}

static bool check(void *p, char *buf, size_t len)
{
    uts_state *s = p;
    if (s->nodes != s->want_nodes || s->sum != s->want_sum) {
        snprintf(buf, len, "got %llu nodes (hash sum %016llx), want %llu (%016llx)",
                 (unsigned long long)s->nodes, (unsigned long long)s->sum,
                 (unsigned long long)s->want_nodes, (unsigned long long)s->want_sum);
        return false;
    }
    snprintf(buf, len, "%llu nodes", (unsigned long long)s->nodes);
    return true;
}

const wb_workload wb_uts = {
    .name = "uts",
    .title = "unbalanced tree search (binomial tree): a shape nobody can predict",
    .default_size = 3000,
    .quick_size = 20,
    .has_peers = true,
    .has_stack = true,
    .prepare = prepare,
    .describe = describe,
    .reset = reset,
    .run = run,
    .check = check,
    .destroy = destroy,
};
