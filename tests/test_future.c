/* test_future: the futures API (ws_future_submit, get, wait, status, cancel, fail, free).
 *
 * usage: test_future CASE [WORKERS] [nospares], one ctest entry per case (tests/future.cmake):
 *   any_order P    N futures got oldest first, newest first and in random order, from a worker
 *                  and from outside the pool (and on the default pool); every result checked,
 *                  every function run exactly once
 *   nqueens P [nospares]  n-queens, n = 8..10 (11 with WS_TEST_LONG), a future per column got
 *                  in submission order, answers checked; with nospares (max_spares =
 *                  WS_NO_SPARES) the process never has more than P threads besides those it
 *                  had before the pool (counted in /proc/self/task from inside the tasks and at
 *                  the end)
 *   oldest_first   rounds of 4 futures got oldest first by their worker: the first three are
 *                  claimed where they sit, the last taken back as the newest item (inline with
 *                  gcc or clang); the deque never holds more than one round, so the slots left
 *                  by the first three go with the last get
 *   outside P      plain threads getting the same futures many times each (submitted from
 *                  outside and from a worker), with workers getting them too; freed once
 *   passed P       futures submitted in one task and got in others, and a future returned as
 *                  another future's result
 *   nested P       a chain of 10,000 futures, each submitting and getting the next, and a wide
 *                  tree of futures with cancellations from the parents and from a thread racing
 *                  them: each function runs exactly once unless a ws_future_cancel on it
 *                  returned true, and then never (its get NULL, its status ECANCELED)
 *   fail           ws_future_fail: the status it gives, the first error wins, a not-started
 *                  future is cancelled by it, fn may fail its own future
 *   busy           ws_future_status is EBUSY until the function returns
 *   free_early P   futures freed before they ran (from outside and from a worker) still run
 *                  exactly once, cancelled ones never; nothing leaks (ASan)
 *   mix P [nospares]  ws_join, ws_spawn/ws_sync and ws_group inside futures, futures inside
 *                  group jobs (with nospares no group waits inside futures: a group wait that
 *                  cannot go on parks its worker and counts on a spare, worksteal.h at
 *                  WS_NO_SPARES; two such waits on two workers hang)
 *   other_pool     a future got by a worker of another pool whose deque is as deep as the
 *                  future's own was at its push: that worker waits, and its own spawn stays its
 *                  own (the inline get takes only a future of its own deque)
 *   abort_double_free, abort_get_after_free, abort_freed_outside, abort_self_get, abort_null
 *                  contract violations abort (SIGABRT) with the library's one line naming the
 *                  function (in a forked child, as tests/test_sched_errors.c does);
 *                  abort_freed_outside: the double free or use after a free made outside any
 *                  worker of the future's pool
 * The blocking cases use a gate: a future that spins until the main thread opens it, so that
 * "not finished yet" and "not started yet" hold by construction rather than by timing.
 */
#include "test_future_util.h"
#include "test_sched_util.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

/* ---- helpers ----------------------------------------------------------------------------- */

/* A permutation of 0..n-1 drawn from *rng. */
static void shuffle(size_t *order, size_t n, uint64_t *rng)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(test_rand(rng) % i);
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

/* A gate that a future spins on until the test opens it: the future is running (started set)
 * and cannot finish until then. */
typedef struct gate {
    atomic_bool started;
    atomic_bool open;
} gate;

static void *gate_wait(void *p)
{
    gate *g = p;
    atomic_store(&g->started, true);
    while (!atomic_load(&g->open))
        sched_yield();
    return g;
}

static void gate_wait_started(gate *g)
{
    while (!atomic_load(&g->started))
        sched_yield();
}

/* A future's work: fib(n) through ws_join, so that futures fork too and thieves find work. */
typedef struct item {
    int n;
    uint64_t out;
    atomic_uint runs;
} item;

static void *item_run(void *p)
{
    item *it = p;
    sched_fib_arg f = {it->n, 0};
    sched_fib_join(&f);
    it->out = f.result;
    atomic_fetch_add(&it->runs, 1);
    return &it->out;
}

static void items_init(item *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        items[i].n = (int)(i % 14);
        items[i].out = 0;
        atomic_init(&items[i].runs, 0);
    }
}

/* Gets future i of items and checks its result and status. */
static void get_checked(ws_future *f, item *items, size_t i)
{
    void *r = ws_future_get(f);
    ASSERT_PTR_EQ(r, &items[i].out);
    ASSERT_UEQ(items[i].out, sched_fib_serial(items[i].n));
    ASSERT_EQ(ws_future_status(f), 0);
}

static void items_check_ran_once(item *items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (atomic_load(&items[i].runs) != 1)
            WS_TEST_FAIL("item %zu ran %u times", i, atomic_load(&items[i].runs));
}

/* ---- any_order --------------------------------------------------------------------------- */

typedef struct batch {
    ws_pool *pool; /* NULL: the submitter's pool (or the default pool) */
    size_t n;
    item *items;
    ws_future **futures;
    size_t *order;
    uint64_t seed;
} batch;

enum get_order { OLDEST_FIRST, NEWEST_FIRST, RANDOM_ORDER };

static void batch_run(batch *b, enum get_order how)
{
    items_init(b->items, b->n);
    for (size_t i = 0; i < b->n; i++)
        b->futures[i] = submit(b->pool, item_run, &b->items[i]);
    uint64_t rng = b->seed + (uint64_t)how;
    shuffle(b->order, b->n, &rng);
    for (size_t k = 0; k < b->n; k++) {
        size_t i = how == OLDEST_FIRST ? k : how == NEWEST_FIRST ? b->n - 1 - k : b->order[k];
        get_checked(b->futures[i], b->items, i);
    }
    for (size_t i = 0; i < b->n; i++) { /* again, now that all are done */
        void *r = NULL;
        ASSERT_EQ(ws_future_wait(b->futures[i], &r), 0);
        ASSERT_PTR_EQ(r, &b->items[i].out);
        ws_future_free(b->futures[i]);
    }
    items_check_ran_once(b->items, b->n);
}

static void batch_all_orders(void *p)
{
    for (int how = OLDEST_FIRST; how <= RANDOM_ORDER; how++)
        batch_run(p, (enum get_order)how);
}

static void case_any_order(unsigned workers)
{
    uint64_t seed = test_seed("any_order");
    size_t n = (size_t)test_scaled(20000, 500);
    batch b = {
        NULL, n, calloc(n, sizeof(item)), calloc(n, sizeof(ws_future *)), calloc(n, sizeof(size_t)),
        seed};
    ASSERT(b.items != NULL && b.futures != NULL && b.order != NULL);
    ws_pool *pool = future_pool(workers, false, 0);
    ASSERT_OK(ws_pool_run(pool, batch_all_orders, &b)); /* submitted and got on a worker */
    b.pool = pool;
    batch_all_orders(&b); /* submitted and got outside the pool */
    ws_pool_destroy(pool);
    b.pool = NULL;
    batch_all_orders(&b); /* the default pool */
    printf("any_order: %zu futures x 3 orders x 3 places on %u workers\n", n, workers);
    free(b.items);
    free(b.futures);
    free(b.order);
}

/* ---- nqueens ----------------------------------------------------------------------------- */

static const uint64_t queens_solutions[] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200};

static atomic_int most_threads; /* the largest thread count seen from inside a task */

static void note_threads(void)
{
    int n = sched_thread_count();
    int seen = atomic_load(&most_threads);
    while (n > seen && !atomic_compare_exchange_weak(&most_threads, &seen, n))
        ;
}

typedef struct queens {
    int n, row;
    uint32_t cols, left, right; /* columns and diagonals attacked on this row */
    uint64_t count;
} queens;

static uint64_t queens_serial(int n, int row, uint32_t cols, uint32_t left, uint32_t right)
{
    if (row == n)
        return 1;
    uint32_t all = (1u << n) - 1, free_cols = all & ~(cols | left | right);
    uint64_t count = 0;
    while (free_cols != 0) {
        uint32_t bit = free_cols & -free_cols;
        free_cols -= bit;
        count +=
            queens_serial(n, row + 1, cols | bit, ((left | bit) << 1) & all, (right | bit) >> 1);
    }
    return count;
}

/* A future per free column of this row, got in submission order. */
static void *queens_future(void *p)
{
    queens *q = p;
    if (q->row < 2)
        note_threads();
    if (q->row >= q->n - 2) {
        q->count = queens_serial(q->n, q->row, q->cols, q->left, q->right);
        return &q->count;
    }
    queens child[32];
    ws_future *f[32];
    int k = 0;
    uint32_t all = (1u << q->n) - 1, free_cols = all & ~(q->cols | q->left | q->right);
    while (free_cols != 0) {
        uint32_t bit = free_cols & -free_cols;
        free_cols -= bit;
        child[k] = (queens){
            q->n, q->row + 1, q->cols | bit, ((q->left | bit) << 1) & all, (q->right | bit) >> 1,
            0};
        f[k] = submit(NULL, queens_future, &child[k]);
        k++;
    }
    uint64_t total = 0;
    for (int i = 0; i < k; i++) {
        uint64_t *r = ws_future_get(f[i]);
        ASSERT_PTR_EQ(r, &child[i].count);
        total += *r;
        ws_future_free(f[i]);
    }
    q->count = total;
    return &q->count;
}

static void queens_on_worker(void *p)
{
    queens_future(p);
}

static void case_nqueens(unsigned workers, bool no_spares)
{
    int threads = sched_thread_baseline();
    int top = test_long() ? 11 : 10;
    ws_pool *pool = future_pool(workers, no_spares, 0);
    atomic_store(&most_threads, 0);
    for (int n = 8; n <= top; n++) {
        queens q = {n, 0, 0, 0, 0, 0};
        ASSERT_OK(ws_pool_run(pool, queens_on_worker, &q)); /* the root on a worker */
        ASSERT_UEQ(q.count, queens_solutions[n]);
        queens r = {n, 0, 0, 0, 0, 0};
        ws_future *root = submit(pool, queens_future, &r); /* the root from outside */
        ASSERT_PTR_EQ(ws_future_get(root), &r.count);
        ws_future_free(root);
        ASSERT_UEQ(r.count, queens_solutions[n]);
    }
    note_threads();
    int most = atomic_load(&most_threads);
    printf("nqueens 8..%d on %u workers (%s): at most %d threads, %d before the pool\n", top,
           workers, no_spares ? "WS_NO_SPARES" : "default spares", most, threads);
    if (no_spares && most > threads + (int)workers)
        WS_TEST_FAIL("%d threads with %u workers and no spares (%d before the pool)", most, workers,
                     threads);
    /* The space bound: a deque holds at most the futures of the frames of one stack, one frame
     * per row, and a frame at row r submits at most top - r (one per free column; rows from
     * top - 2 on submit none), plus the reserve that a push publishes at once. The slots of
     * futures claimed in place count too, so this fails if they pile up (a get, the header's
     * inline one included, must drop those it uncovers). */
    ws_stats st;
    ws_pool_stats(pool, &st);
    uint64_t bound = workers + (no_spares ? 0 : WS_DEFAULT_SPARES);
    for (int row = 0; row <= top - 3; row++)
        bound += (uint64_t)(top - row);
    printf("nqueens: deepest deque %" PRIu64 " (bound %" PRIu64 ")\n", st.max_deque_depth, bound);
    if (st.max_deque_depth > bound)
        WS_TEST_FAIL("a deque %" PRIu64 " deep, above %" PRIu64, st.max_deque_depth, bound);
    ws_pool_destroy(pool);
    ASSERT_EQ(sched_wait_thread_count(threads), threads);
}

/* oldest_first: a worker submits 4 futures per round and gets them oldest first. */
enum { OLDEST_ROUNDS = 500, OLDEST_WIDTH = 4 };

static void *identity(void *p)
{
    return p;
}

static void oldest_first_rounds(void *p)
{
    (void)p;
    int value[OLDEST_WIDTH];
    for (int round = 0; round < OLDEST_ROUNDS; round++) {
        ws_future *f[OLDEST_WIDTH];
        for (int i = 0; i < OLDEST_WIDTH; i++)
            f[i] = submit(NULL, identity, &value[i]);
        for (int i = 0; i < OLDEST_WIDTH; i++) {
            ASSERT_PTR_EQ(ws_future_get(f[i]), &value[i]);
            ws_future_free(f[i]);
        }
    }
}

static void case_oldest_first(void)
{
    ws_pool *pool = future_pool(1, true, 0);
    ASSERT_OK(ws_pool_run(pool, oldest_first_rounds, NULL));
    ws_stats st;
    ws_pool_stats(pool, &st);
    /* one round, plus the reserve a push publishes at once (one worker: one item) */
    uint64_t bound = OLDEST_WIDTH + 1;
    printf("oldest_first: %d rounds of %d, deepest deque %" PRIu64 " (bound %" PRIu64 ")\n",
           OLDEST_ROUNDS, OLDEST_WIDTH, st.max_deque_depth, bound);
    if (st.max_deque_depth > bound)
        WS_TEST_FAIL("a deque %" PRIu64 " deep, above %" PRIu64 ": dead slots piled up",
                     st.max_deque_depth, bound);
    ws_pool_destroy(pool);
}

/* ---- outside ----------------------------------------------------------------------------- */

typedef struct shared_gets {
    ws_pool *pool;
    size_t n;
    item *items;
    ws_future **futures;
    unsigned rounds;
    uint64_t seed;
} shared_gets;

typedef struct getter {
    shared_gets *s;
    uint64_t seed;
} getter;

/* Gets every future rounds times, in a new random order each round. */
static void get_all_rounds(shared_gets *s, uint64_t seed)
{
    size_t *order = malloc(s->n * sizeof *order);
    ASSERT(order != NULL);
    uint64_t rng = seed | 1;
    for (unsigned r = 0; r < s->rounds; r++) {
        shuffle(order, s->n, &rng);
        for (size_t k = 0; k < s->n; k++)
            get_checked(s->futures[order[k]], s->items, order[k]);
    }
    free(order);
}

static void *getter_thread(void *p)
{
    getter *g = p;
    get_all_rounds(g->s, g->seed);
    return NULL;
}

static void worker_get_half(void *p)
{
    getter *g = p;
    get_all_rounds(g->s, g->seed);
}

static void worker_gets(void *p)
{
    getter *g = p;
    getter a = {g->s, g->seed * 3 + 1}, b = {g->s, g->seed * 5 + 2};
    ws_join(worker_get_half, &a, worker_get_half, &b);
}

/* A pthread that gets through the pool's workers (ws_pool_run blocks it meanwhile). */
static void *worker_getter_thread(void *p)
{
    getter *g = p;
    ASSERT_OK(ws_pool_run(g->s->pool, worker_gets, g));
    return NULL;
}

static void submit_all(void *p)
{
    shared_gets *s = p;
    items_init(s->items, s->n);
    for (size_t i = 0; i < s->n; i++)
        s->futures[i] = submit(s->pool, item_run, &s->items[i]);
}

/* Four plain threads and two workers get every future, concurrently; then each is freed once. */
static void shared_gets_run(shared_gets *s, bool submit_on_worker)
{
    if (submit_on_worker)
        ASSERT_OK(ws_pool_run(s->pool, submit_all, s));
    else
        submit_all(s);
    enum { PLAIN = 4 };
    pthread_t t[PLAIN + 1];
    getter g[PLAIN + 1];
    for (int i = 0; i <= PLAIN; i++) {
        g[i] = (getter){s, s->seed + (uint64_t)i * 7919};
        ASSERT_OK(
            pthread_create(&t[i], NULL, i < PLAIN ? getter_thread : worker_getter_thread, &g[i]));
    }
    for (int i = 0; i <= PLAIN; i++)
        ASSERT_OK(pthread_join(t[i], NULL));
    for (size_t i = 0; i < s->n; i++)
        ws_future_free(s->futures[i]);
    items_check_ran_once(s->items, s->n);
}

static void case_outside(unsigned workers)
{
    uint64_t seed = test_seed("outside");
    size_t n = (size_t)test_scaled(4000, 200);
    shared_gets s = {future_pool(workers, false, 0), n, calloc(n, sizeof(item)),
                     calloc(n, sizeof(ws_future *)), 5, seed};
    ASSERT(s.items != NULL && s.futures != NULL);
    shared_gets_run(&s, false);
    shared_gets_run(&s, true);
    ws_pool_destroy(s.pool);
    printf("outside: %zu futures got %u times by each of 4 threads and 2 workers, twice\n", n,
           s.rounds);
    free(s.items);
    free(s.futures);
}

/* ---- passed ------------------------------------------------------------------------------ */

typedef struct range {
    shared_gets *s;
    size_t begin, end;
    bool reverse;
} range;

static void submit_range(void *p)
{
    range *r = p;
    for (size_t i = r->begin; i < r->end; i++)
        r->s->futures[i] = submit(NULL, item_run, &r->s->items[i]);
}

static void get_range(void *p)
{
    range *r = p;
    for (size_t k = r->begin; k < r->end; k++) {
        size_t i = r->reverse ? r->end - 1 - (k - r->begin) : k;
        get_checked(r->s->futures[i], r->s->items, i);
    }
}

static void free_range(void *p)
{
    range *r = p;
    for (size_t i = r->begin; i < r->end; i++)
        ws_future_free(r->s->futures[i]);
}

/* Two tasks submit; two others get them crosswise (each half got by the task that did not
 * submit it, and each task gets the other half too), a third pair frees them. */
static void passed_between_tasks(void *p)
{
    shared_gets *s = p;
    size_t half = s->n / 2;
    range lo = {s, 0, half, false}, hi = {s, half, s->n, true};
    ws_join(submit_range, &lo, submit_range, &hi);
    range all_fwd = {s, 0, s->n, false}, all_back = {s, 0, s->n, true};
    ws_join(get_range, &hi, get_range, &lo);
    ws_join(get_range, &all_back, get_range, &all_fwd);
    ws_join(free_range, &hi, free_range, &lo);
}

/* A future whose result is another future, submitted by its function. */
typedef struct relay {
    item inner;
    atomic_uint runs;
} relay;

static void *relay_run(void *p)
{
    relay *r = p;
    atomic_fetch_add(&r->runs, 1);
    return submit(NULL, item_run, &r->inner);
}

static void relay_chain(void *p)
{
    shared_gets *s = p;
    size_t n = s->n;
    relay *r = calloc(n, sizeof *r);
    ws_future **outer = calloc(n, sizeof *outer);
    ASSERT(r != NULL && outer != NULL);
    for (size_t i = 0; i < n; i++) {
        items_init(&r[i].inner, 1);
        r[i].inner.n = (int)(i % 12);
        atomic_init(&r[i].runs, 0);
        outer[i] = submit(NULL, relay_run, &r[i]);
    }
    for (size_t k = 0; k < n; k++) {
        size_t i = n - 1 - k;
        ws_future *inner = ws_future_get(outer[i]);
        ASSERT(inner != NULL);
        ASSERT_PTR_EQ(ws_future_get(inner), &r[i].inner.out);
        ASSERT_UEQ(r[i].inner.out, sched_fib_serial(r[i].inner.n));
        ws_future_free(inner);
        ws_future_free(outer[i]);
    }
    for (size_t i = 0; i < n; i++) {
        ASSERT_EQ(atomic_load(&r[i].runs), 1);
        ASSERT_EQ(atomic_load(&r[i].inner.runs), 1);
    }
    free(r);
    free(outer);
}

static void case_passed(unsigned workers)
{
    size_t n = (size_t)test_scaled(20000, 400);
    shared_gets s = {future_pool(workers, false, 0), n, calloc(n, sizeof(item)),
                     calloc(n, sizeof(ws_future *)), 1, 0};
    ASSERT(s.items != NULL && s.futures != NULL);
    for (int round = 0; round < 3; round++) {
        items_init(s.items, n);
        ASSERT_OK(ws_pool_run(s.pool, passed_between_tasks, &s));
        items_check_ran_once(s.items, n);
    }
    ASSERT_OK(ws_pool_run(s.pool, relay_chain, &s));
    ws_pool_destroy(s.pool);
    printf("passed: %zu futures submitted in one task and got in others, on %u workers\n", n,
           workers);
    free(s.items);
    free(s.futures);
}

/* ---- nested ------------------------------------------------------------------------------ */

/* The chain: future i submits future i+1 and gets it; the result is the length below. */
typedef struct chain {
    size_t depth;
    atomic_uint *runs;
    uint64_t *out;
} chain;

typedef struct chain_link {
    chain *c;
    size_t i;
} chain_link;

static void *chain_run(void *p)
{
    chain_link *l = p;
    chain *c = l->c;
    atomic_fetch_add(&c->runs[l->i], 1);
    uint64_t below = 0;
    if (l->i + 1 < c->depth) {
        chain_link next = {c, l->i + 1};
        ws_future *f = submit(NULL, chain_run, &next);
        uint64_t *r = ws_future_get(f);
        ASSERT_PTR_EQ(r, &c->out[l->i + 1]);
        below = *r;
        ws_future_free(f);
    }
    c->out[l->i] = below + 1;
    return &c->out[l->i];
}

static void chain_on_worker(void *p)
{
    chain_link root = {p, 0};
    chain_run(&root);
}

static void chain_check(chain *c)
{
    ASSERT_UEQ(c->out[0], c->depth);
    for (size_t i = 0; i < c->depth; i++) {
        if (atomic_load(&c->runs[i]) != 1)
            WS_TEST_FAIL("chain chain_link %zu ran %u times", i, atomic_load(&c->runs[i]));
        atomic_store(&c->runs[i], 0);
    }
}

/* The tree: node id has children FANOUT*id+1 .. FANOUT*id+FANOUT (those below n). */
enum { FANOUT = 4 };

typedef struct tree {
    size_t n;
    uint64_t seed;
    _Atomic(ws_future *) *handle; /* set once a node is submitted */
    atomic_uint *runs;
    atomic_bool *cancelled; /* some ws_future_cancel on the node returned true */
    uint64_t *out;          /* the nodes of its subtree that ran */
    atomic_bool done;
} tree;

typedef struct node {
    tree *t;
    size_t id;
} node;

static bool cancel_node(tree *t, size_t id)
{
    ws_future *f = atomic_load(&t->handle[id]); /* pairs with the submitter's store */
    if (f == NULL || !ws_future_cancel(f))
        return false;
    atomic_store(&t->cancelled[id], true);
    return true;
}

static void *tree_run(void *p)
{
    node *me = p;
    tree *t = me->t;
    atomic_fetch_add(&t->runs[me->id], 1);
    node child[FANOUT];
    int k = 0;
    for (size_t c = FANOUT * me->id + 1; c <= FANOUT * me->id + FANOUT && c < t->n; c++) {
        child[k] = (node){t, c};
        atomic_store(&t->handle[c], submit(NULL, tree_run, &child[k]));
        uint64_t rng = (t->seed ^ c) * 0x9E3779B97F4A7C15ull | 1;
        if (test_rand(&rng) % 16 == 0)
            cancel_node(t, c);
        k++;
    }
    uint64_t sum = 1;
    for (int i = 0; i < k; i++) {
        ws_future *f = atomic_load(&t->handle[child[i].id]);
        uint64_t *r = ws_future_get(f);
        int status = ws_future_status(f);
        if (r == NULL) {
            ASSERT_EQ(status, ECANCELED);
        } else {
            ASSERT_EQ(status, 0);
            ASSERT_PTR_EQ(r, &t->out[child[i].id]);
            sum += *r;
        }
    }
    t->out[me->id] = sum;
    return &t->out[me->id];
}

/* A plain thread cancelling random nodes while the tree runs. */
static void *canceller(void *p)
{
    tree *t = p;
    uint64_t rng = t->seed * 31 + 7;
    while (!atomic_load(&t->done)) {
        size_t id = 1 + (size_t)(test_rand(&rng) % (t->n - 1));
        cancel_node(t, id);
        if (test_rand(&rng) % 64 == 0)
            sched_yield();
    }
    return NULL;
}

/* Checks the exactly-once rule node by node and frees every handle. Returns the cancellations. */
static size_t tree_check(tree *t)
{
    size_t cancelled = 0, ran = 0;
    for (size_t id = 0; id < t->n; id++) {
        ws_future *f = atomic_load(&t->handle[id]);
        unsigned runs = atomic_load(&t->runs[id]);
        if (f == NULL) { /* an ancestor was cancelled */
            ASSERT(id != 0);
            ASSERT_EQ(runs, 0);
            continue;
        }
        if (atomic_load(&t->cancelled[id])) {
            if (runs != 0)
                WS_TEST_FAIL("node %zu ran %u times after a ws_future_cancel returned true", id,
                             runs);
            ASSERT_PTR_EQ(ws_future_get(f), NULL);
            ASSERT_EQ(ws_future_status(f), ECANCELED);
            cancelled++;
        } else {
            if (runs != 1)
                WS_TEST_FAIL("node %zu ran %u times (never cancelled)", id, runs);
            ASSERT_PTR_EQ(ws_future_get(f), &t->out[id]);
            ASSERT_EQ(ws_future_status(f), 0);
            ran++;
        }
        ws_future_free(f);
    }
    ASSERT_UEQ(t->out[0], ran);
    return cancelled;
}

static void tree_round(ws_pool *pool, tree *t, uint64_t seed)
{
    t->seed = seed;
    for (size_t i = 0; i < t->n; i++) {
        atomic_store(&t->handle[i], NULL);
        atomic_store(&t->runs[i], 0);
        atomic_store(&t->cancelled[i], false);
        t->out[i] = 0;
    }
    atomic_store(&t->done, false);
    pthread_t c;
    ASSERT_OK(pthread_create(&c, NULL, canceller, t));
    node root = {t, 0};
    ws_future *f = submit(pool, tree_run, &root);
    atomic_store(&t->handle[0], f);
    ws_future *again = atomic_load(&t->handle[0]);
    ASSERT_PTR_EQ(ws_future_get(again), &t->out[0]);
    atomic_store(&t->done, true);
    ASSERT_OK(pthread_join(c, NULL));
    size_t cancelled = tree_check(t);
    printf("nested: tree of %zu futures, %zu cancelled\n", t->n, cancelled);
}

static void case_nested(unsigned workers)
{
    uint64_t seed = test_seed("nested");
    /* Deep recursion: each chain_link nests a get on the stack of whoever runs it. */
    ws_pool *pool = future_pool(workers, true, (size_t)64 << 20);
    chain c = {10000, calloc(10000, sizeof(atomic_uint)), calloc(10000, sizeof(uint64_t))};
    ASSERT(c.runs != NULL && c.out != NULL);
    ASSERT_OK(ws_pool_run(pool, chain_on_worker, &c));
    chain_check(&c);
    chain_link root = {&c, 0};
    ws_future *f = submit(pool, chain_run, &root); /* from outside */
    ASSERT_PTR_EQ(ws_future_get(f), &c.out[0]);
    ws_future_free(f);
    chain_check(&c);
    printf("nested: a chain of %zu futures on %u workers, twice\n", c.depth, workers);
    free(c.runs);
    free(c.out);

    size_t n = (size_t)test_scaled(40000, 3000);
    tree t = {n,
              0,
              calloc(n, sizeof(_Atomic(ws_future *))),
              calloc(n, sizeof(atomic_uint)),
              calloc(n, sizeof(atomic_bool)),
              calloc(n, sizeof(uint64_t)),
              false};
    ASSERT(t.handle != NULL && t.runs != NULL && t.cancelled != NULL && t.out != NULL);
    int rounds = test_long() ? 20 : 5;
    for (int r = 0; r < rounds; r++)
        tree_round(pool, &t, seed + (uint64_t)r);
    ws_pool_destroy(pool);
    free((void *)t.handle);
    free(t.runs);
    free(t.cancelled);
    free(t.out);
}

/* ---- fail, busy, free_early -------------------------------------------------------------- */

static void *count_run(void *p)
{
    atomic_fetch_add((atomic_uint *)p, 1);
    return p;
}

typedef struct self_fail {
    ws_future *self;
    int err;
} self_fail;

static void *fail_self(void *p)
{
    self_fail *s = p;
    ws_future_fail(s->self, s->err);
    return s;
}

static void case_fail(void)
{
    ws_pool *pool = future_pool(1, true, 0);
    gate g = {false, false};
    ws_future *busy = submit(pool, gate_wait, &g);
    gate_wait_started(&g); /* the pool's only worker is held: nothing else starts */

    /* Not started: fail cancels it; its function never runs. */
    atomic_uint runs = 0;
    ws_future *queued = submit(pool, count_run, &runs);
    ASSERT_EQ(ws_future_status(queued), EBUSY);
    ws_future_fail(queued, ENOSPC);
    ws_future_fail(queued, EPERM); /* the first error wins */
    ASSERT_EQ(ws_future_status(queued), ENOSPC);
    ASSERT(ws_future_cancel(queued)); /* cancelled before it started: still true */
    ASSERT_PTR_EQ(ws_future_get(queued), NULL);
    void *r = &runs;
    ASSERT_EQ(ws_future_wait(queued, &r), ENOSPC);
    ASSERT_PTR_EQ(r, NULL);

    /* Running: fail records the error; the function finishes and its result stays. */
    ws_future_fail(busy, EIO);
    ASSERT(!ws_future_cancel(busy));
    ws_future_fail(busy, EPERM);
    atomic_store(&g.open, true);
    ASSERT_PTR_EQ(ws_future_get(busy), &g);
    ASSERT_EQ(ws_future_status(busy), EIO);

    /* Finished: fail still records its error (status reports it over 0). */
    atomic_uint runs2 = 0;
    ws_future *finished = submit(pool, count_run, &runs2);
    ASSERT_PTR_EQ(ws_future_get(finished), &runs2);
    ASSERT_EQ(ws_future_status(finished), 0);
    ws_future_fail(finished, EDOM);
    ASSERT_EQ(ws_future_status(finished), EDOM);
    ASSERT_PTR_EQ(ws_future_get(finished), &runs2);

    /* fn fails its own future (submit sets the handle before fn can start). */
    self_fail s = {NULL, EILSEQ};
    ASSERT_OK(ws_future_submit(&s.self, pool, fail_self, &s));
    ASSERT_PTR_EQ(ws_future_get(s.self), &s);
    ASSERT_EQ(ws_future_status(s.self), EILSEQ);

    ws_future_free(queued);
    ws_future_free(busy);
    ws_future_free(finished);
    ws_future_free(s.self);
    ws_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&runs), 0);
    ASSERT_EQ(atomic_load(&runs2), 1);
    printf("fail: ok\n");
}

static void case_busy(void)
{
    ws_pool *pool = future_pool(1, true, 0);
    gate g = {false, false};
    ws_future *running = submit(pool, gate_wait, &g);
    atomic_uint runs = 0;
    ws_future *queued = submit(pool, count_run, &runs);
    gate_wait_started(&g);
    for (int i = 0; i < 100; i++) {
        ASSERT_EQ(ws_future_status(running), EBUSY);
        ASSERT_EQ(ws_future_status(queued), EBUSY);
    }
    atomic_store(&g.open, true);
    ASSERT_PTR_EQ(ws_future_get(queued), &runs);
    ASSERT_EQ(ws_future_status(queued), 0);
    ASSERT_PTR_EQ(ws_future_get(running), &g);
    ASSERT_EQ(ws_future_status(running), 0);
    ASSERT_EQ(atomic_load(&runs), 1);
    ws_future_free(running);
    ws_future_free(queued);
    ws_pool_destroy(pool);
    printf("busy: ok\n");
}

typedef struct early {
    ws_pool *pool;
    size_t n;
    atomic_uint *runs;
} early;

/* Submits n counting futures and frees each at once; every eighth is cancelled first. */
static void submit_and_free(void *p)
{
    early *e = p;
    for (size_t i = 0; i < e->n; i++) {
        ws_future *f = submit(e->pool, count_run, &e->runs[i]);
        if (i % 8 == 7 && !ws_future_cancel(f))
            WS_TEST_FAIL("future %zu started before its cancel: the pool was not held", i);
        ws_future_free(f);
    }
}

static void early_check(early *e, const char *where)
{
    for (size_t i = 0; i < e->n; i++) {
        unsigned expected = i % 8 == 7 ? 0 : 1;
        if (atomic_load(&e->runs[i]) != expected)
            WS_TEST_FAIL("%s: future %zu freed before it ran ran %u times (expected %u)", where, i,
                         atomic_load(&e->runs[i]), expected);
        atomic_store(&e->runs[i], 0);
    }
}

/* Holds every worker of the pool in a gate until the futures have been submitted and freed. */
static void free_early_outside(unsigned workers, early *e)
{
    e->pool = future_pool(workers, false, 0);
    gate *g = calloc(workers, sizeof *g);
    ws_future **held = calloc(workers, sizeof *held);
    ASSERT(g != NULL && held != NULL);
    for (unsigned i = 0; i < workers; i++)
        held[i] = submit(e->pool, gate_wait, &g[i]);
    for (unsigned i = 0; i < workers; i++)
        gate_wait_started(&g[i]);
    submit_and_free(e);
    for (unsigned i = 0; i < workers; i++)
        atomic_store(&g[i].open, true);
    for (unsigned i = 0; i < workers; i++)
        ws_future_free(held[i]); /* freed while running, or done */
    ws_pool_destroy(e->pool);    /* waits for the freed futures */
    early_check(e, "outside");
    free(g);
    free(held);
}

/* On a worker: the futures go on its deque and are freed before it returns to them (with one
 * worker nobody else can start them; with more, a thief may, so only counts are checked). */
static void submit_and_free_on_worker(void *p)
{
    early *e = p;
    for (size_t i = 0; i < e->n; i++) {
        ws_future *f = submit(NULL, count_run, &e->runs[i]);
        if (i % 8 == 7 && !ws_future_cancel(f))
            atomic_store(&e->runs[i], 0); /* a thief ran it first: not a failure */
        ws_future_free(f);
    }
}

static void case_free_early(unsigned workers)
{
    size_t n = (size_t)test_scaled(20000, 1000);
    early e = {NULL, n, calloc(n, sizeof(atomic_uint))};
    ASSERT(e.runs != NULL);
    free_early_outside(workers, &e);
    ws_pool *one = future_pool(1, false, 0);
    e.pool = one;
    ASSERT_OK(ws_pool_run(one, submit_and_free_on_worker, &e));
    ws_pool_destroy(one);
    early_check(&e, "one worker");
    /* Several workers: thieves race the frees; every uncancelled future runs exactly once. */
    e.pool = future_pool(workers, false, 0);
    ASSERT_OK(ws_pool_run(e.pool, submit_and_free_on_worker, &e));
    ws_pool_destroy(e.pool);
    for (size_t i = 0; i < n; i++)
        if (i % 8 != 7 && atomic_load(&e.runs[i]) != 1)
            WS_TEST_FAIL("future %zu freed early ran %u times", i, atomic_load(&e.runs[i]));
    printf("free_early: %zu futures freed before they ran, on 1 and %u workers\n", n, workers);
    free(e.runs);
}

/* ---- mix --------------------------------------------------------------------------------- */

enum { MIX_JOBS = 8 };

typedef struct mix_job {
    item now, later;
    ws_future *later_future; /* got by whoever waited for the group */
} mix_job;

/* A group job: a future submitted and got inside it, and one got after the group's wait. */
static void mix_group_job(void *p)
{
    mix_job *j = p;
    ws_future *f = submit(NULL, item_run, &j->now);
    ASSERT_PTR_EQ(ws_future_get(f), &j->now.out);
    ws_future_free(f);
    j->later_future = submit(NULL, item_run, &j->later);
}

static void mix_jobs_init(mix_job *jobs, int seed)
{
    for (int i = 0; i < MIX_JOBS; i++) {
        items_init(&jobs[i].now, 1);
        items_init(&jobs[i].later, 1);
        jobs[i].now.n = (seed + i) % 16;
        jobs[i].later.n = (seed + 2 * i) % 16;
        jobs[i].later_future = NULL;
    }
}

/* Runs MIX_JOBS group jobs on pool and waits for them and their futures. */
static void mix_group(ws_pool *pool, int seed)
{
    mix_job jobs[MIX_JOBS];
    mix_jobs_init(jobs, seed);
    ws_group g;
    ws_group_init(&g, pool);
    for (int i = 0; i < MIX_JOBS; i++)
        ASSERT_OK(ws_group_submit(&g, mix_group_job, &jobs[i], 0));
    ASSERT_EQ(ws_group_wait_status(&g), 0);
    for (int i = 0; i < MIX_JOBS; i++) {
        ASSERT_UEQ(jobs[i].now.out, sched_fib_serial(jobs[i].now.n));
        get_checked(jobs[i].later_future, &jobs[i].later, 0);
        ws_future_free(jobs[i].later_future);
        ASSERT_EQ(atomic_load(&jobs[i].now.runs), 1);
        ASSERT_EQ(atomic_load(&jobs[i].later.runs), 1);
    }
}

typedef struct mix {
    ws_pool *pool;
    int seed;
    bool groups; /* false with no spares: a group wait may need a spare (WS_NO_SPARES) */
    uint64_t out;
} mix;

/* A future that joins, spawns and syncs, and runs a group whose jobs use futures. */
static void *mix_future(void *p)
{
    mix *m = p;
    sched_fib_arg joined = {16 + m->seed % 4, 0};
    sched_fib_join(&joined);
    ASSERT_UEQ(joined.result, sched_fib_serial(joined.n));
    ws_task t1, t2;
    sched_fib_arg a = {12, 0}, b = {13, 0};
    ws_spawn(&t1, sched_fib_join, &a);
    ws_spawn(&t2, sched_fib_join, &b);
    ws_sync(&t2);
    ws_sync(&t1);
    ASSERT_UEQ(a.result + b.result, sched_fib_serial(14));
    if (m->groups)
        mix_group(m->pool, m->seed);
    m->out = joined.result;
    return &m->out;
}

enum { MIX_FUTURES = 24 };

static void mix_on_worker(void *p)
{
    const mix *proto = p;
    mix m[MIX_FUTURES];
    ws_future *f[MIX_FUTURES];
    for (int i = 0; i < MIX_FUTURES; i++) {
        m[i] = (mix){proto->pool, i, proto->groups, 0};
        f[i] = submit(NULL, mix_future, &m[i]);
    }
    for (int i = 0; i < MIX_FUTURES; i++) {
        int k = i % 2 == 0 ? i : MIX_FUTURES - i; /* both ends, alternately */
        ASSERT_PTR_EQ(ws_future_get(f[k]), &m[k].out);
        ASSERT_UEQ(m[k].out, sched_fib_serial(16 + m[k].seed % 4));
    }
    for (int i = 0; i < MIX_FUTURES; i++)
        ws_future_free(f[i]);
}

static void case_mix(unsigned workers, bool no_spares)
{
    ws_pool *pool = future_pool(workers, no_spares, 0);
    int rounds = test_long() ? 8 : 2;
    for (int r = 0; r < rounds; r++) {
        mix m = {pool, r, !no_spares, 0};
        ASSERT_OK(ws_pool_run(pool, mix_on_worker, &m)); /* futures from a worker */
        ws_future *f = submit(pool, mix_future, &m);     /* a future from outside */
        ASSERT_PTR_EQ(ws_future_get(f), &m.out);
        ws_future_free(f);
        mix_group(pool, r); /* futures in the jobs of a group waited for outside */
    }
    ws_pool_destroy(pool);
    printf("mix: joins, spawns and groups inside futures, futures inside group jobs, on %u "
           "workers (%s)\n",
           workers, no_spares ? "WS_NO_SPARES" : "default spares");
}

/* ---- contract violations ----------------------------------------------------------------- */

typedef struct violation {
    const char *what;
    const char *function; /* the message must name it */
    void (*body)(ws_pool *pool);
    unsigned workers; /* 0: body runs outside any worker (on a pool of 1), else in a task */
} violation;

static void *return_arg(void *p)
{
    return p;
}

static void double_free_done(ws_pool *pool)
{
    ws_future *f = submit(pool, return_arg, &f);
    ASSERT_PTR_EQ(ws_future_get(f), &f);
    ws_future_free(f);
    ws_future_free(f);
}

/* On a worker of a one-worker pool f stays on the caller's deque; outside, the pool's only
 * worker is held in a gate: either way f has not started when it is freed twice. */
static void double_free_pending(ws_pool *pool)
{
    gate g = {false, false};
    bool outside = ws_worker_id() < 0;
    ws_future *held = outside ? submit(pool, gate_wait, &g) : NULL;
    if (outside)
        gate_wait_started(&g);
    ws_future *f = submit(pool, return_arg, &f);
    ws_future_free(f);
    ws_future_free(f);
    atomic_store(&g.open, true);
    if (held != NULL)
        ws_future_free(held);
}

static void get_after_free(ws_pool *pool)
{
    ws_future *f = submit(pool, return_arg, &f);
    ASSERT_PTR_EQ(ws_future_get(f), &f);
    ws_future_free(f);
    (void)ws_future_get(f);
}

static void status_after_free(ws_pool *pool)
{
    ws_future *f = submit(pool, return_arg, &f);
    (void)ws_future_get(f);
    ws_future_free(f);
    (void)ws_future_status(f);
}

static void cancel_after_free(ws_pool *pool)
{
    ws_future *f = submit(pool, return_arg, &f);
    (void)ws_future_get(f);
    ws_future_free(f);
    (void)ws_future_cancel(f);
}

/* fn finds its own handle through its argument (set before fn can start) and gets it. */
static void *get_self(void *p)
{
    return ws_future_get(*(ws_future **)p);
}

static void self_get(ws_pool *pool)
{
    ws_future *f = NULL;
    ASSERT_OK(ws_future_submit(&f, pool, get_self, &f));
    (void)ws_future_get(f);
}

static void submit_null_out(ws_pool *pool)
{
    int err = ws_future_submit(NULL, pool, return_arg, NULL);
    printf("ws_future_submit returned %d\n", err);
}

static void submit_null_fn(ws_pool *pool)
{
    ws_future *f = NULL;
    int err = ws_future_submit(&f, pool, NULL, NULL);
    printf("ws_future_submit returned %d\n", err);
}

static void get_null(ws_pool *pool)
{
    (void)pool;
    (void)ws_future_get(NULL);
}

static void free_null(ws_pool *pool)
{
    (void)pool;
    ws_future_free(NULL);
}

static void fail_zero(ws_pool *pool)
{
    ws_future *f = submit(pool, return_arg, NULL);
    (void)ws_future_get(f);
    ws_future_fail(f, 0);
}

static const violation *running_violation;

static void violation_task(void *p)
{
    running_violation->body(p);
}

static void violation_child(void *p)
{
    const violation *v = p;
    ws_pool *pool = future_pool(v->workers == 0 ? 1 : v->workers, true, 0);
    running_violation = v;
    if (v->workers == 0)
        v->body(pool);
    else
        printf("ws_pool_run returned %d\n", ws_pool_run(pool, violation_task, pool));
    printf("returned without aborting\n");
}

static void expect_abort(const violation *v)
{
    sched_child ch;
    sched_run_child(&ch, violation_child, (void *)v);
    char where[64];
    if (v->workers == 0)
        snprintf(where, sizeof where, "outside any worker");
    else
        snprintf(where, sizeof where, "in a task on %u worker(s)", v->workers);
    printf("%s, %s: status 0x%x, stderr: %s", v->what, where, (unsigned)ch.status,
           ch.err[0] != '\0' ? ch.err : "(nothing)\n");
    if (!WIFSIGNALED(ch.status) || WTERMSIG(ch.status) != SIGABRT)
        WS_TEST_FAIL("%s, %s: expected death by SIGABRT, got status 0x%x; stdout:\n%s", v->what,
                     where, (unsigned)ch.status, ch.out);
    /* The library's own line, not a sanitizer's report whose stack names the function too. */
    char message[96];
    snprintf(message, sizeof message, "worksteal: %s: ", v->function);
    if (strstr(ch.err, message) == NULL)
        WS_TEST_FAIL("%s, %s: no line \"%s...\" on stderr:\n%s", v->what, where, message, ch.err);
#if !defined(WS_SANITIZED)
    if (sched_count_lines(ch.err) != 1) /* a sanitizer may add its own report */
        WS_TEST_FAIL("%s, %s: expected one line on stderr, got:\n%s", v->what, where, ch.err);
#endif
}

static void run_violations(const violation *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        expect_abort(&v[i]);
}

#define RUN_VIOLATIONS(...)                           \
    do {                                              \
        const violation v_[] = {__VA_ARGS__};         \
        run_violations(v_, sizeof v_ / sizeof v_[0]); \
    } while (0)

static bool run_abort_case(const char *c)
{
    if (strcmp(c, "abort_double_free") == 0) {
        RUN_VIOLATIONS(
            {"a double free", "ws_future_free", double_free_done, 1},
            {"a double free", "ws_future_free", double_free_done, 2},
            {"a double free before the future ran", "ws_future_free", double_free_pending, 0},
            {"a double free before the future ran", "ws_future_free", double_free_pending, 1});
    } else if (strcmp(c, "abort_get_after_free") == 0) {
        RUN_VIOLATIONS({"a get after free", "ws_future_get", get_after_free, 1},
                       {"a get after free", "ws_future_get", get_after_free, 2},
                       {"a status after free", "ws_future_status", status_after_free, 2},
                       {"a cancel after free", "ws_future_cancel", cancel_after_free, 1});
    } else if (strcmp(c, "abort_freed_outside") == 0) {
        /* The same, the future freed by a thread that is not a worker of its pool. */
        RUN_VIOLATIONS({"a double free", "ws_future_free", double_free_done, 0},
                       {"a get after free", "ws_future_get", get_after_free, 0},
                       {"a status after free", "ws_future_status", status_after_free, 0},
                       {"a cancel after free", "ws_future_cancel", cancel_after_free, 0});
    } else if (strcmp(c, "abort_self_get") == 0) {
        RUN_VIOLATIONS({"a future getting itself", "ws_future_get", self_get, 0},
                       {"a future getting itself", "ws_future_get", self_get, 1},
                       {"a future getting itself", "ws_future_get", self_get, 2});
    } else if (strcmp(c, "abort_null") == 0) {
        RUN_VIOLATIONS({"a NULL out", "ws_future_submit", submit_null_out, 0},
                       {"a NULL out", "ws_future_submit", submit_null_out, 1},
                       {"a NULL function", "ws_future_submit", submit_null_fn, 0},
                       {"a NULL function", "ws_future_submit", submit_null_fn, 1},
                       {"a get of NULL", "ws_future_get", get_null, 0},
                       {"a free of NULL", "ws_future_free", free_null, 1},
                       {"a fail with error 0", "ws_future_fail", fail_zero, 0});
    } else {
        return false;
    }
    return true;
}

/* other_pool: pool A's only worker submits r (on its own deque, the inline path once A is warm)
 * and holds at a gate; a worker of pool B, its deque as deep as A's (one spawn), gets r. B cannot
 * run r (another pool's): it must wait for A, and leave its own spawn where it is for its sync,
 * even though its deque's bottom is the one r recorded at its push. */
typedef struct cross {
    ws_pool *a, *b;
    ws_future *r;
    item it;   /* r's work */
    gate hold; /* A's task holds here after submitting r */
    atomic_bool b_waits;
    atomic_uint spawned_runs;
} cross;

static void *cross_nothing(void *p)
{
    return p;
}

static void cross_spawned(void *p)
{
    atomic_fetch_add(&((cross *)p)->spawned_runs, 1);
}

static void cross_in_a(void *p)
{
    cross *x = p;
    /* Warm: records ready, and the deque's fast path open at depths 1 and 2 (a push onto an
     * empty deque, or to a new greatest depth, takes the slow path). */
    for (int i = 0; i < 100; i++) {
        ws_future *f = submit(NULL, cross_nothing, x);
        ws_future *g = submit(NULL, cross_nothing, x);
        ws_future *h = submit(NULL, cross_nothing, x);
        ASSERT(ws_future_get(h) == x && ws_future_get(g) == x && ws_future_get(f) == x);
        ws_future_free(h);
        ws_future_free(g);
        ws_future_free(f);
    }
    ws_future *under = submit(NULL, cross_nothing, x);
    x->r = submit(NULL, item_run, &x->it); /* inline, at depth 2 */
    gate_wait(&x->hold);
    ASSERT(ws_future_get(x->r) == &x->it.out); /* freed by the main thread, after B's get */
    ASSERT(ws_future_get(under) == x);
    ws_future_free(under);
}

static void cross_in_b(void *p)
{
    cross *x = p;
    for (int i = 0; i < 100; i++) { /* warm, as A: the spawns below take the inline path */
        ws_task u, v, w;
        ws_spawn(&u, cross_spawned, x);
        ws_spawn(&v, cross_spawned, x);
        ws_spawn(&w, cross_spawned, x);
        ws_sync(&w);
        ws_sync(&v);
        ws_sync(&u);
    }
    atomic_store(&x->spawned_runs, 0);
    ws_task under, t; /* t at depth 2, as r on A's deque */
    ws_spawn(&under, cross_spawned, x);
    ws_spawn(&t, cross_spawned, x);
    atomic_store(&x->b_waits, true);
    ASSERT(ws_future_get(x->r) == &x->it.out);
    ws_sync(&t);
    ws_sync(&under);
    ASSERT_EQ(atomic_load(&x->spawned_runs), 2u);
}

static void *cross_run_a(void *p)
{
    ASSERT_OK(ws_pool_run(((cross *)p)->a, cross_in_a, p));
    return NULL;
}

static void *cross_run_b(void *p)
{
    ASSERT_OK(ws_pool_run(((cross *)p)->b, cross_in_b, p));
    return NULL;
}

static void case_other_pool(void)
{
    for (int round = 0; round < 20; round++) {
        /* No spares: no reserve of public slots above an empty deque (src/deque.h). */
        cross x = {.a = future_pool(1, true, 0), .b = future_pool(1, true, 0)};
        x.it.n = 12;
        pthread_t ta, tb;
        ASSERT_EQ(pthread_create(&ta, NULL, cross_run_a, &x), 0);
        gate_wait_started(&x.hold); /* r is on A's deque, A's worker held */
        ASSERT_EQ(pthread_create(&tb, NULL, cross_run_b, &x), 0);
        while (!atomic_load(&x.b_waits))
            sched_yield();
        atomic_store(&x.hold.open, true);
        ASSERT_EQ(pthread_join(tb, NULL), 0);
        ASSERT_EQ(pthread_join(ta, NULL), 0);
        ws_future_free(x.r);
        items_check_ran_once(&x.it, 1);
        ws_pool_destroy(x.a);
        ws_pool_destroy(x.b);
    }
    printf("other_pool: 20 rounds, each future and spawn ran once\n");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep the output in order with stderr on a failure */
    if (argc < 2) {
        fprintf(stderr, "usage: %s CASE [WORKERS] [nospares]\n", argv[0]);
        return 2;
    }
    const char *c = argv[1];
    unsigned workers = argc > 2 ? (unsigned)atoi(argv[2]) : 2;
    bool no_spares = argc > 3 && strcmp(argv[3], "nospares") == 0;
    if (workers == 0) {
        fprintf(stderr, "bad worker count %s\n", argv[2]);
        return 2;
    }
    if (strcmp(c, "any_order") == 0)
        case_any_order(workers);
    else if (strcmp(c, "nqueens") == 0)
        case_nqueens(workers, no_spares);
    else if (strcmp(c, "oldest_first") == 0)
        case_oldest_first();
    else if (strcmp(c, "outside") == 0)
        case_outside(workers);
    else if (strcmp(c, "passed") == 0)
        case_passed(workers);
    else if (strcmp(c, "nested") == 0)
        case_nested(workers);
    else if (strcmp(c, "fail") == 0)
        case_fail();
    else if (strcmp(c, "busy") == 0)
        case_busy();
    else if (strcmp(c, "free_early") == 0)
        case_free_early(workers);
    else if (strcmp(c, "mix") == 0)
        case_mix(workers, no_spares);
    else if (strcmp(c, "other_pool") == 0)
        case_other_pool();
    else if (!run_abort_case(c)) {
        fprintf(stderr, "unknown case %s\n", c);
        return 2;
    }
    printf("ok\n");
    return 0;
}
