/* test_mix_gen: random programs that mix the fork-join APIs, each run on a fresh pool and
 * checked against a serial interpreter of the same program.
 *
 * A program is a tree of up to MAX_NODES nodes, at most MAX_DEPTH deep. An inner node runs its
 * children (2 to MAX_KIDS of them) with one API, drawn at random:
 *   spawn   ws_spawn each child, ws_sync newest first
 *   stack   WS_SPAWN each child as a stack task, WS_SYNC each
 *   group   ws_group_submit each child, ws_group_wait
 *   future  ws_future_submit each child, ws_future_get in submission order, ws_future_free
 *   loop    ws_parallel_for over the children, grain 1
 *   join    ws_join of two children (a join node has exactly two)
 * and its value is a hash of its id and its children's values, in order. A leaf does a little
 * busy work (a random number of rounds of a hash) and its value is the result. The serial
 * interpreter computes the same values by plain recursion. The checks: the root's value is the
 * interpreter's, every node ran exactly once, and each get returned its child's record.
 *
 * Each program runs on a pool of 1 to 4 workers made for it, so that the pool's statistics are
 * the program's own: idle_asking_ns and idle_asking_max_ns (a worker idle after asking a busy one
 * for its private work, until it found work) are summed up, and the runs with a spell over 1 ms
 * counted, in a summary at the end. They are printed only: timing is not asserted on.
 *
 * usage: test_mix_gen [PROGRAMS]   (default: 400, 1,600 with WS_TEST_LONG, 40 under the
 *        sanitizers: test_scaled in tests/test.h; WS_TEST_SEED replays a run, whose seed is
 *        always printed)
 * A hang fails through the watchdog (tests/test_watchdog.h), which prints the program.
 */
#include "test_sched_util.h"
#include "test_watchdog.h"

#include <stdatomic.h>

/* A stack task whose body only calls leaves its hidden parameters unused (as in
 * test_sched_stack.c). */
#pragma GCC diagnostic ignored "-Wunused-parameter"

enum { MAX_NODES = 64, MAX_KIDS = 6, MAX_DEPTH = 4, MAX_WORK = 20000 };

enum kind { LEAF, SPAWN, STACK, GROUP, FUTURE, LOOP, JOIN, KINDS };
static const char *const kind_names[KINDS] = {"leaf",   "spawn", "stack", "group",
                                              "future", "loop",  "join"};

typedef struct program program;

typedef struct node {
    program *prog;
    enum kind kind;
    int id;
    int work; /* leaf: rounds of the hash */
    int kids, kid[MAX_KIDS];
    uint64_t value;   /* written by the node's run, read by its parent after the wait */
    _Atomic int runs; /* relaxed: counted by the run, read after the program finished */
} node;

struct program {
    ws_pool *pool;
    uint64_t seed;
    int index, workers, count;
    node nodes[MAX_NODES];
};

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    return h * 0xBF58476D1CE4E5B9ULL;
}

/* ---- making a program -------------------------------------------------------------------- */

/* Makes a subtree of at most budget nodes (budget >= 1) and returns its root's id. */
static int make_node(program *p, uint64_t *rng, int depth, int budget)
{
    int id = p->count++;
    node *n = &p->nodes[id];
    n->prog = p;
    n->id = id;
    if (depth == MAX_DEPTH || budget < 3 || test_rand(rng) % 3 == 0) {
        n->kind = LEAF;
        n->work = (int)(test_rand(rng) % MAX_WORK);
        return id;
    }
    n->kind = (enum kind)(1 + test_rand(rng) % (KINDS - 1));
    n->kids = n->kind == JOIN ? 2 : 2 + (int)(test_rand(rng) % (MAX_KIDS - 1));
    if (n->kids > budget - 1)
        n->kids = budget - 1;
    int left = budget - 1; /* for the children; each one leaves a node for every later one */
    for (int k = 0; k < n->kids; k++) {
        int before = p->count;
        n->kid[k] = make_node(p, rng, depth + 1, left - (n->kids - 1 - k));
        left -= p->count - before;
    }
    return id;
}

static void make_program(program *p, uint64_t seed, int index)
{
    memset(p, 0, sizeof *p);
    p->seed = seed;
    p->index = index;
    uint64_t rng = mix(seed, (uint64_t)index) | 1;
    p->workers = 1 + (int)(test_rand(&rng) % 4);
    make_node(p, &rng, 0, MAX_NODES);
}

static void print_node(const program *p, int id, int depth)
{
    const node *n = &p->nodes[id];
    fprintf(stderr, "%*s%d %s", 2 * depth, "", id, kind_names[n->kind]);
    if (n->kind == LEAF)
        fprintf(stderr, " work %d", n->work);
    fprintf(stderr, " (ran %d)\n", atomic_load_explicit(&n->runs, memory_order_relaxed));
    for (int k = 0; k < n->kids; k++)
        print_node(p, n->kid[k], depth + 1);
}

static program *current; /* for the reports below */

static void report(void *ctx)
{
    (void)ctx;
    program *p = current;
    fprintf(stderr,
            "program %d of seed %" PRIu64 " on %d workers (replay: WS_TEST_SEED=%" PRIu64 "):\n",
            p->index, p->seed, p->workers, p->seed);
    print_node(p, 0, 1);
}

/* ---- the serial interpreter -------------------------------------------------------------- */

static uint64_t leaf_value(const node *n)
{
    uint64_t h = (uint64_t)n->id + 1;
    for (int i = 0; i < n->work; i++)
        h = mix(h, (uint64_t)i);
    return h;
}

static uint64_t serial_value(const program *p, int id)
{
    const node *n = &p->nodes[id];
    if (n->kind == LEAF)
        return leaf_value(n);
    uint64_t h = (uint64_t)id;
    for (int k = 0; k < n->kids; k++)
        h = mix(h, serial_value(p, n->kid[k]));
    return h;
}

/* ---- the program on the pool ------------------------------------------------------------- */

static void run_node(node *n);

static void node_fn(void *arg)
{
    run_node(arg);
}

static void *node_future_fn(void *arg)
{
    run_node(arg);
    return arg;
}

static node *kid(node *n, int k)
{
    return &n->prog->nodes[n->kid[k]];
}

WS_VOID_TASK_1(stack_node, node *, n)
{
    run_node(n);
}

WS_VOID_TASK_1(stack_fork, node *, n)
{
    for (int k = 0; k < n->kids; k++)
        WS_SPAWN(stack_node, kid(n, k));
    for (int k = 0; k < n->kids; k++)
        WS_SYNC(stack_node);
}

static void loop_body(size_t begin, size_t end, void *ctx)
{
    for (size_t k = begin; k < end; k++)
        run_node(kid(ctx, (int)k));
}

static void run_kids(node *n)
{
    switch (n->kind) {
    case SPAWN: {
        ws_task t[MAX_KIDS];
        for (int k = 0; k < n->kids; k++)
            ws_spawn(&t[k], node_fn, kid(n, k));
        for (int k = n->kids; k-- > 0;)
            ws_sync(&t[k]);
        break;
    }
    case STACK:
        stack_fork_run(n->prog->pool, n); /* on a worker of the pool: a plain call */
        break;
    case GROUP: {
        ws_group g;
        ws_group_init(&g, n->prog->pool);
        for (int k = 0; k < n->kids; k++)
            ASSERT_OK(ws_group_submit(&g, node_fn, kid(n, k), 0));
        ws_group_wait(&g);
        break;
    }
    case FUTURE: {
        ws_future *f[MAX_KIDS];
        for (int k = 0; k < n->kids; k++)
            ASSERT_OK(ws_future_submit(&f[k], NULL, node_future_fn, kid(n, k)));
        for (int k = 0; k < n->kids; k++) {
            ASSERT_PTR_EQ(ws_future_get(f[k]), kid(n, k));
            ws_future_free(f[k]);
        }
        break;
    }
    case LOOP:
        ws_parallel_for(0, (size_t)n->kids, 1, loop_body, n);
        break;
    case JOIN:
        ws_join(node_fn, kid(n, 0), node_fn, kid(n, 1));
        break;
    default:
        WS_TEST_FAIL("node %d: kind %d has no children", n->id, (int)n->kind);
    }
}

static void run_node(node *n)
{
    atomic_fetch_add_explicit(&n->runs, 1, memory_order_relaxed); /* read after the run */
    test_progress();
    if (n->kind == LEAF) {
        n->value = leaf_value(n);
        return;
    }
    run_kids(n);
    uint64_t h = (uint64_t)n->id;
    for (int k = 0; k < n->kids; k++)
        h = mix(h, kid(n, k)->value);
    n->value = h;
}

static void root_fn(void *arg)
{
    program *p = arg;
    run_node(&p->nodes[0]);
}

/* ---- the runs ---------------------------------------------------------------------------- */

typedef struct summary {
    uint64_t asking_ns, asking_max_ns;
    int long_spells; /* runs with a spell over 1 ms */
    int leaves, nodes;
    int by_kind[KINDS];
} summary;

static void check_program(program *p, summary *s)
{
    for (int id = 0; id < p->count; id++) {
        const node *n = &p->nodes[id];
        int runs = atomic_load_explicit(&n->runs, memory_order_relaxed);
        if (runs != 1) {
            report(NULL);
            WS_TEST_FAIL("program %d: node %d (%s) ran %d times", p->index, id, kind_names[n->kind],
                         runs);
        }
        s->by_kind[n->kind]++;
        s->leaves += n->kind == LEAF;
    }
    s->nodes += p->count;
    uint64_t want = serial_value(p, 0);
    if (p->nodes[0].value != want) {
        report(NULL);
        WS_TEST_FAIL("program %d: the pool's value %016" PRIx64 ", the interpreter's %016" PRIx64,
                     p->index, p->nodes[0].value, want);
    }
}

static void run_program(program *p, summary *s)
{
    ws_pool *pool = sched_pool((unsigned)p->workers);
    p->pool = pool;
    ASSERT_OK(ws_pool_run(pool, root_fn, p));
    ws_stats st;
    ws_pool_stats(pool, &st);
    ws_pool_destroy(pool);
    check_program(p, s);
    s->asking_ns += st.idle_asking_ns;
    if (st.idle_asking_max_ns > s->asking_max_ns)
        s->asking_max_ns = st.idle_asking_max_ns;
    s->long_spells += st.idle_asking_max_ns > 1000000;
}

int main(int argc, char **argv)
{
    int programs = argc > 1 ? atoi(argv[1]) : (int)test_scaled(1600, 40);
    ASSERT_GT(programs, 0);
    uint64_t seed = test_seed("test_mix_gen");
    program *p = calloc(1, sizeof *p);
    ASSERT(p != NULL);
    current = p;
    test_watchdog_start("test_mix_gen", 20.0, report, NULL);
    summary s = {0};
    for (int i = 0; i < programs; i++) {
        make_program(p, seed, i);
        run_program(p, &s);
    }
    test_watchdog_stop();
    free(p);
    printf("test_mix_gen: %d programs, %d nodes (%d leaves; spawn %d, stack %d, group %d, future "
           "%d, loop %d, join %d), each run exactly once with the interpreter's values\n",
           programs, s.nodes, s.leaves, s.by_kind[SPAWN], s.by_kind[STACK], s.by_kind[GROUP],
           s.by_kind[FUTURE], s.by_kind[LOOP], s.by_kind[JOIN]);
    printf("test_mix_gen: idle while asking: %.3f ms in all, longest spell %.3f ms, %d runs with "
           "a spell over 1 ms (printed only, not asserted)\n",
           (double)s.asking_ns / 1e6, (double)s.asking_max_ns / 1e6, s.long_spells);
    return 0;
}
