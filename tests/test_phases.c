/* test_phases: every worker joins in on a flat batch, whichever API makes it.
 *
 * A flat batch is a generator that forks K = 16 coarse tasks in a loop, then waits for them. Its
 * new items are private to the generator's worker until an idle worker asks and the generator
 * answers (docs/scheduler.md, "Sharing private work"); if some place where the generator takes or
 * makes work fails to answer, the whole batch runs on the generator while the others sleep. Each
 * batch counts as shared when a worker other than the generator's ran at least one of its tasks;
 * a shape fails when half of its batches or more were not (the fault as a rule; a rare batch alone
 * is printed, and docs/scheduler.md says when it happens).
 *
 * APIs (the first argument), each making the batch and the nested fork its own way:
 *   spawn   ws_spawn x K, then ws_sync newest first
 *   stack   WS_SPAWN x K of a stack task, then WS_SYNC x K
 *   group   ws_group_submit x K, then ws_group_wait
 *   future  ws_future_submit x K, then ws_future_get and ws_future_free in submission order
 *   loop    ws_parallel_for over K items, grain 1
 *   join    ws_join over the K items, halving (the API forks two children at a time)
 *   submit  ws_submit x K, then a spin on a counter of finished tasks
 * Shapes, each run in one ws_pool_run task:
 *   top     the batch, at the top of the pool task
 *   nested  a fork of two children made with the same API, a short leaf and the batch, where
 *           the batch is the child a thief can take first (the older item, the forked half)
 *   nested_own  the same with the batch as the child its parent keeps (the newer item, the half
 *           run inline) while a thief takes the leaf
 *   back    two batches back to back (both checked)
 *   park    a batch, a sleep until every other worker is parked, a batch
 *
 * Counted, not timed: each task of a batch spins until some task of the batch has started on a
 * worker other than the generator's, or until the batch's deadline (1 s after it began, scaled as
 * ctest scales the test's TIMEOUT) passes. While the work is shared, the spins end at once; a
 * batch run alone means another worker got nothing for a second while it was pending. Every task
 * must also run exactly once. The rounds per shape: 6, or 20 with WS_TEST_LONG (tests/test.h).
 *
 * usage: test_phases API P [SHAPE...]   (P: workers, more than the cores is fine; SHAPE: the
 *        shapes to run, all by default)
 */
#include "internal.h" /* ws__idle_parked: the park shape waits until the others sleep */
#include "test_sched_util.h"
#include "test_watchdog.h"

#include <stdatomic.h>

/* A stack task whose body forks nothing leaves its hidden parameters unused (as in
 * test_sched_stack.c). */
#pragma GCC diagnostic ignored "-Wunused-parameter"

enum {
    BATCH = 16,
    /* Worker ids: P..P+spares-1 are spares, which may run a task of a blocked wait. */
    MAX_IDS = 8 + WS_DEFAULT_SPARES,
    SHORT_WORK = 2000,  /* pauses of the nested fork's short leaf */
    DEADLINE_CHECK = 64 /* spins between looks at the clock */
};

typedef struct batch batch;

typedef struct item {
    batch *owner;
    _Atomic int runs; /* relaxed: counted by the task, read after the batch's wait */
} item;

struct batch {
    ws_pool *pool;
    int generator;   /* the worker that forks the tasks; written before the first fork */
    double deadline; /* as generator */
    /* release: set by the first task on another worker; acquire in the tasks' spins. */
    _Atomic int shared;
    _Atomic int expired;            /* relaxed: a task saw the deadline pass (a report only) */
    _Atomic int parked_at_deadline; /* relaxed: the pool's sleepers then (a report only) */
    _Atomic int finished;           /* release: a task's end; acquire in submit's counter wait */
    _Atomic long ran_on[MAX_IDS];   /* relaxed: tasks by worker id, read after the wait */
    item items[BATCH];
};

/* The short leaf of the nested shape: a little work, counted. */
typedef struct short_leaf {
    _Atomic int runs; /* relaxed: read after the fork's wait */
} short_leaf;

/* ---- the tasks --------------------------------------------------------------------------- */

static void batch_start(batch *b)
{
    b->generator = ws_worker_id();
    ASSERT(b->generator >= 0);
    b->deadline = sched_now() + test_hang_seconds(1.0);
}

/* One task of a batch: counts where it runs, then spins until the batch is shared (or its
 * deadline passed), so that the generator cannot finish the batch alone in the meantime. */
static void run_item(item *it)
{
    batch *b = it->owner;
    int id = ws_worker_id();
    ASSERT(id >= 0 && id < MAX_IDS);
    atomic_fetch_add_explicit(&it->runs, 1, memory_order_relaxed); /* read after the wait */
    atomic_fetch_add_explicit(&b->ran_on[id], 1, memory_order_relaxed);
    if (id != b->generator) /* release: pairs with the acquire in the spin below */
        atomic_store_explicit(&b->shared, 1, memory_order_release);
    for (unsigned spins = 0;
         !atomic_load_explicit(&b->shared, memory_order_acquire); /* the store above */
         spins++) {
        if (spins % DEADLINE_CHECK == 0 && sched_now() > b->deadline) {
            atomic_store_explicit(&b->expired, 1, memory_order_relaxed); /* a report only */
            atomic_store_explicit(&b->parked_at_deadline, (int)ws__idle_parked(b->pool),
                                  memory_order_relaxed); /* a report only */
            break;
        }
        test_cpu_relax();
    }
    /* release: pairs with the acquire of submit's counter wait. */
    atomic_fetch_add_explicit(&b->finished, 1, memory_order_release);
}

static void item_fn(void *p)
{
    run_item(p);
}

static void *item_future_fn(void *p)
{
    run_item(p);
    return p;
}

static void short_run(short_leaf *s)
{
    for (int i = 0; i < SHORT_WORK; i++)
        test_cpu_relax();
    atomic_fetch_add_explicit(&s->runs, 1, memory_order_relaxed); /* read after the wait */
}

/* ---- the batches, one per API ------------------------------------------------------------ */

static void spawn_batch(batch *b)
{
    ws_task tasks[BATCH];
    batch_start(b);
    for (int i = 0; i < BATCH; i++)
        ws_spawn(&tasks[i], item_fn, &b->items[i]);
    for (int i = BATCH; i-- > 0;)
        ws_sync(&tasks[i]);
}

WS_VOID_TASK_1(stack_item, item *, it)
{
    run_item(it);
}

WS_VOID_TASK_1(stack_batch, batch *, b)
{
    batch_start(b);
    for (int i = 0; i < BATCH; i++)
        WS_SPAWN(stack_item, &b->items[i]);
    for (int i = 0; i < BATCH; i++)
        WS_SYNC(stack_item);
}

static void stack_run_batch(batch *b)
{
    stack_batch_run(b->pool, b); /* on a worker of the pool: a plain call */
}

static void group_batch(batch *b)
{
    ws_group g;
    ws_group_init(&g, b->pool);
    batch_start(b);
    for (int i = 0; i < BATCH; i++)
        ASSERT_OK(ws_group_submit(&g, item_fn, &b->items[i], 0));
    ws_group_wait(&g);
}

static void future_batch(batch *b)
{
    ws_future *f[BATCH];
    batch_start(b);
    for (int i = 0; i < BATCH; i++)
        ASSERT_OK(ws_future_submit(&f[i], NULL, item_future_fn, &b->items[i]));
    for (int i = 0; i < BATCH; i++) {
        ASSERT_PTR_EQ(ws_future_get(f[i]), &b->items[i]);
        ws_future_free(f[i]);
    }
}

static void loop_body(size_t begin, size_t end, void *ctx)
{
    batch *b = ctx;
    for (size_t i = begin; i < end; i++)
        run_item(&b->items[i]);
}

static void loop_batch(batch *b)
{
    batch_start(b);
    ws_parallel_for(0, BATCH, 1, loop_body, b);
}

typedef struct join_range {
    batch *b;
    int begin, end;
} join_range;

static void join_split(void *p)
{
    join_range *r = p;
    if (r->end - r->begin == 1) {
        run_item(&r->b->items[r->begin]);
        return;
    }
    int mid = r->begin + (r->end - r->begin) / 2;
    join_range lo = {r->b, r->begin, mid}, hi = {r->b, mid, r->end};
    ws_join(join_split, &lo, join_split, &hi);
}

static void join_batch(batch *b)
{
    join_range all = {b, 0, BATCH};
    batch_start(b);
    join_split(&all);
}

/* Spins until n of the counter's tasks have finished; a hang guard, not a speed bound. The spin
 * is declared blocking, so that a spare stands in for this worker: with every worker in such a
 * spin (the nested shape on two workers), the jobs would otherwise wait for ever. */
static void spin_until(_Atomic int *finished, int n, const char *what)
{
    double give_up = sched_now() + test_hang_seconds(60.0);
    ws_block_begin();
    /* acquire: pairs with the release of the task's end (run_item, submit_short_fn). */
    while (atomic_load_explicit(finished, memory_order_acquire) < n) {
        if (sched_now() > give_up)
            WS_TEST_FAIL("%s: %d of %d detached jobs finished after 60 s", what,
                         atomic_load_explicit(finished, memory_order_relaxed), n);
        test_cpu_relax();
    }
    ws_block_end();
}

static void submit_batch(batch *b)
{
    batch_start(b);
    for (int i = 0; i < BATCH; i++)
        ASSERT_OK(ws_submit(b->pool, item_fn, &b->items[i], 0));
    spin_until(&b->finished, BATCH, "submit");
}

/* ---- the nested forks: a short leaf and the batch, made with the same API ----------------- */

/* A fork of two children: the one a thief can take first (the older item of a deque, the
 * pushed child of a join or a loop's split) and the one its parent keeps (the newer item, taken
 * back at once; the child a join or a split runs inline). The batch is the first in the shape
 * nested, the second in nested_own: there the thief is busy with the leaf while the parent makes
 * the batch, and asks only once the batch's tasks are private on the parent's deque. */
typedef struct nested nested;
typedef struct child {
    nested *fork;
    bool is_batch;
} child;

struct nested {
    short_leaf s;
    batch *b;
    void (*make_batch)(batch *b);
    child stealable, kept;
    _Atomic int finished; /* release: a child's end; acquire in submit's counter wait */
};

static void child_fn(void *p)
{
    child *c = p;
    if (c->is_batch)
        c->fork->make_batch(c->fork->b);
    else
        short_run(&c->fork->s);
    /* release: pairs with the acquire in spin_until. */
    atomic_fetch_add_explicit(&c->fork->finished, 1, memory_order_release);
}

static void *child_future_fn(void *p)
{
    child_fn(p);
    return p;
}

static void spawn_nested(nested *n)
{
    ws_task older, newer;
    ws_spawn(&older, child_fn, &n->stealable);
    ws_spawn(&newer, child_fn, &n->kept);
    ws_sync(&newer);
    ws_sync(&older);
}

WS_VOID_TASK_1(stack_child, child *, c)
{
    child_fn(c);
}

WS_VOID_TASK_1(stack_nested, nested *, n)
{
    WS_SPAWN(stack_child, &n->stealable);
    WS_SPAWN(stack_child, &n->kept);
    WS_SYNC(stack_child);
    WS_SYNC(stack_child);
}

static void stack_nested_fork(nested *n)
{
    stack_nested_run(n->b->pool, n);
}

static void group_nested(nested *n)
{
    ws_group g;
    ws_group_init(&g, n->b->pool);
    ASSERT_OK(ws_group_submit(&g, child_fn, &n->stealable, 0));
    ASSERT_OK(ws_group_submit(&g, child_fn, &n->kept, 0));
    ws_group_wait(&g);
}

static void future_nested(nested *n)
{
    ws_future *older, *newer;
    ASSERT_OK(ws_future_submit(&older, NULL, child_future_fn, &n->stealable));
    ASSERT_OK(ws_future_submit(&newer, NULL, child_future_fn, &n->kept));
    ASSERT_PTR_EQ(ws_future_get(older), &n->stealable);
    ASSERT_PTR_EQ(ws_future_get(newer), &n->kept);
    ws_future_free(older);
    ws_future_free(newer);
}

/* The split forks the upper half (index 1) and runs the lower one. */
static void loop_nested_body(size_t begin, size_t end, void *ctx)
{
    nested *n = ctx;
    for (size_t i = begin; i < end; i++)
        child_fn(i == 0 ? &n->kept : &n->stealable);
}

static void loop_nested(nested *n)
{
    ws_parallel_for(0, 2, 1, loop_nested_body, n);
}

static void join_nested(nested *n)
{
    ws_join(child_fn, &n->kept, child_fn, &n->stealable);
}

static void submit_nested(nested *n)
{
    ASSERT_OK(ws_submit(n->b->pool, child_fn, &n->stealable, 0));
    ASSERT_OK(ws_submit(n->b->pool, child_fn, &n->kept, 0));
    spin_until(&n->finished, 2, "submit nested");
}

typedef struct api {
    const char *name;
    void (*make_batch)(batch *b);
    void (*make_nested)(nested *n);
} api;

static const api apis[] = {
    {"spawn", spawn_batch, spawn_nested},    {"stack", stack_run_batch, stack_nested_fork},
    {"group", group_batch, group_nested},    {"future", future_batch, future_nested},
    {"loop", loop_batch, loop_nested},       {"join", join_batch, join_nested},
    {"submit", submit_batch, submit_nested},
};

/* ---- shapes ------------------------------------------------------------------------------ */

enum shape { TOP, NESTED, NESTED_OWN, BACK, PARK, SHAPES };
static const char *const shape_names[SHAPES] = {"top", "nested", "nested_own", "back", "park"};

typedef struct round {
    const api *api;
    enum shape shape;
    ws_pool *pool;
    unsigned workers;
    batch first, second;
    nested fork;
    uint64_t parks_seen; /* parks counted during the park shape's pause */
} round;

/* Sleeps 50 ms, then until every other worker is parked (the idle word's count of sleepers,
 * src/idle_state.h): the next batch then starts while they sleep. Returns the parks that the
 * pool's statistics counted meanwhile. */
static uint64_t pause_until_parked(round *r)
{
    ws_stats st;
    ws_pool_stats(r->pool, &st);
    uint64_t before = st.parks;
    double give_up = sched_now() + test_hang_seconds(30.0);
    sched_sleep_ms(50);
    while (ws__idle_parked(r->pool) < r->workers - 1) {
        if (sched_now() > give_up)
            WS_TEST_FAIL("park: %u of %u idle workers parked after 30 s", ws__idle_parked(r->pool),
                         r->workers - 1);
        sched_sleep_ms(10);
    }
    ws_pool_stats(r->pool, &st);
    return st.parks - before;
}

static void round_task(void *p)
{
    round *r = p;
    switch (r->shape) {
    case TOP:
        r->api->make_batch(&r->first);
        break;
    case NESTED:
    case NESTED_OWN:
        r->api->make_nested(&r->fork);
        break;
    case BACK:
        r->api->make_batch(&r->first);
        r->api->make_batch(&r->second);
        break;
    case PARK:
        r->api->make_batch(&r->first);
        r->parks_seen = pause_until_parked(r);
        r->api->make_batch(&r->second);
        break;
    default:
        ASSERT(0);
    }
}

static void batch_init(batch *b, ws_pool *pool)
{
    memset(b, 0, sizeof *b);
    b->pool = pool;
    b->generator = -1;
    for (int i = 0; i < BATCH; i++)
        b->items[i].owner = b;
}

/* Every task ran once, and at least one on a worker other than the generator's. Returns the
 * tasks run elsewhere. */
static long batch_check(const round *r, const batch *b, const char *which, int n)
{
    const char *where = r->api->name, *shape = shape_names[r->shape];
    for (int i = 0; i < BATCH; i++)
        if (atomic_load_explicit(&b->items[i].runs, memory_order_relaxed) != 1)
            WS_TEST_FAIL("%s %s P=%u round %d, %s batch: task %d ran %d times", where, shape,
                         r->workers, n, which, i,
                         atomic_load_explicit(&b->items[i].runs, memory_order_relaxed));
    ASSERT(b->generator >= 0 && b->generator < MAX_IDS);
    long total = 0, own = atomic_load_explicit(&b->ran_on[b->generator], memory_order_relaxed);
    for (int id = 0; id < MAX_IDS; id++)
        total += atomic_load_explicit(&b->ran_on[id], memory_order_relaxed);
    ASSERT_EQ(total, BATCH);
    if (own == BATCH)
        printf("%s %s P=%u round %d, %s batch: all %d tasks ran on the generator, worker %d; no "
               "other worker took one within the batch's deadline (%d of the others asleep "
               "then)\n",
               where, shape, r->workers, n, which, BATCH, b->generator,
               atomic_load_explicit(&b->parked_at_deadline, memory_order_relaxed));
    return BATCH - own;
}

typedef struct tally {
    long elsewhere; /* tasks run by a worker other than their generator */
    int expired;    /* batches whose deadline passed before they were shared */
    int alone;      /* batches that ran all on their generator */
    int batches;
    uint64_t parks;
} tally;

static void tally_batch(tally *t, const round *r, const batch *b, const char *which, int n)
{
    long elsewhere = batch_check(r, b, which, n);
    t->elsewhere += elsewhere;
    t->alone += elsewhere == 0;
    t->expired += atomic_load_explicit(&b->expired, memory_order_relaxed);
    t->batches++;
}

static void run_round(ws_pool *pool, const api *a, enum shape shape, int n, tally *t)
{
    round *r = calloc(1, sizeof *r);
    ASSERT(r != NULL);
    r->api = a;
    r->shape = shape;
    r->pool = pool;
    r->workers = ws_pool_workers(pool);
    batch_init(&r->first, pool);
    batch_init(&r->second, pool);
    r->fork.b = &r->first;
    r->fork.make_batch = a->make_batch;
    r->fork.stealable = (child){&r->fork, shape == NESTED};
    r->fork.kept = (child){&r->fork, shape == NESTED_OWN};
    ASSERT_OK(ws_pool_run(pool, round_task, r));

    tally_batch(t, r, &r->first, "first", n);
    if (shape == BACK || shape == PARK)
        tally_batch(t, r, &r->second, "second", n);
    if (shape == NESTED || shape == NESTED_OWN)
        ASSERT_EQ(atomic_load_explicit(&r->fork.s.runs, memory_order_relaxed), 1);
    t->parks += r->parks_seen;
    free(r);
}

static bool shape_chosen(enum shape s, int argc, char **argv)
{
    if (argc == 3)
        return true;
    for (int i = 3; i < argc; i++)
        if (strcmp(argv[i], shape_names[s]) == 0)
            return true;
    return false;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s spawn|stack|group|future|loop|join|submit WORKERS [SHAPE...]\n",
                argv[0]);
        return 2;
    }
    const api *a = NULL;
    for (size_t i = 0; i < sizeof apis / sizeof apis[0]; i++)
        if (strcmp(argv[1], apis[i].name) == 0)
            a = &apis[i];
    unsigned workers = (unsigned)atoi(argv[2]);
    if (a == NULL || workers < 2 || workers > 8) {
        fprintf(stderr, "%s: unknown API '%s' or workers not in 2..8\n", argv[0], argv[1]);
        return 2;
    }
    int rounds = test_long() ? 20 : 6;
    ws_pool *pool = sched_pool(workers);
    for (int s = 0; s < SHAPES; s++) {
        if (!shape_chosen((enum shape)s, argc, argv))
            continue;
        tally t = {0};
        for (int n = 0; n < rounds; n++)
            run_round(pool, a, (enum shape)s, n, &t);
        printf("%s %s P=%u: %d batches of %d, %ld tasks run off their generator, %d past the "
               "deadline",
               a->name, shape_names[s], workers, t.batches, BATCH, t.elsewhere, t.expired);
        if (s == PARK)
            printf(", %" PRIu64 " parks in the pauses", t.parks);
        printf(", %d run alone\n", t.alone);
        /* A batch run alone is a worker that slept or searched elsewhere for the whole
         * deadline while the batch waited: the fault this test is about when it is the rule
         * (most batches); as a rare event it is a missed wake-up docs/scheduler.md describes. */
        if (2 * t.alone >= t.batches)
            WS_TEST_FAIL("%s %s P=%u: %d of %d batches ran all on their generator", a->name,
                         shape_names[s], workers, t.alone, t.batches);
    }
    ws_pool_destroy(pool);
    return 0;
}
