/* test_external_stress: every submitted job runs exactly once, under contention.
 *
 * usage: test_external_stress WORKERS MODE [JOBS_PER_PRODUCER]
 *   submit   4 producer threads ws_submit JOBS jobs each (a random mix of normal and
 *            WS_HIGH_PRIORITY); ws_pool_destroy waits for them
 *   group    the same jobs through ws_group_submit to one shared group; each producer waits
 *            for the group when it is done submitting (while others still submit): its own jobs
 *            must all have finished when its wait returns; then the main thread waits, and
 *            every job must have finished
 *   nested   trees of jobs: the main thread submits roots to a group and waits; each job
 *            submits its two children to the same group while that wait is going on (from a
 *            worker: onto its deque, or with WS_HIGH_PRIORITY to the urgent queue)
 *   reuse    one group for several rounds of the group mode, each checked after its wait
 *   worker   a job on the pool (ws_pool_run) submits to a group from the worker and waits for
 *            it there (a waiting worker helps); several rounds with the same group
 *   mixed    groups inside fork-join: a recursion in which each node ws_spawns its left half,
 *            submits jobs to its own group and waits for them, runs its right half, then
 *            ws_syncs (a group wait may pop and run the spawned half, which ws_sync must then
 *            see as done), and at the leaves ws_joins two group-waiting halves
 *   mixed_high  the same with some group jobs submitted WS_HIGH_PRIORITY: they go to the urgent
 *            queue, so a wait finds its deque empty of group jobs and pops the frame's spawned
 *            half (or an enclosing join's child) instead; the ws_sync or ws_join that owns it
 *            must then see it as done and leave the older tasks it finds for their own frames
 *   cross    two pools: P jobs on each (one per worker) submit to a group of the other pool
 *            and wait for it there. A worker of another pool cannot help: it waits like an
 *            outside thread, and its own pool must start a spare meanwhile, or else every
 *            worker of both pools waits and the inner jobs never run
 * Each job carries a magic value and a run counter: a second run, a corrupted argument or a
 * missing run fails the test. Jobs stall at random (spin or yield) to vary the interleavings.
 * JOBS defaults to test_scaled(20000, 1000). The seed is printed (WS_TEST_SEED replays the
 * stalls and priorities; thread timing is not replayable).
 */
#include "test_external_util.h"

#include <pthread.h>

enum { PRODUCERS = 4, ROUNDS = 5, TREE_DEPTH = 7 };
#define JOB_MAGIC 0x6a6f6273u

typedef struct slot {
    uint32_t magic;
    uint32_t stall; /* random: how this job stalls */
    atomic_uint runs;
    atomic_int done; /* set after the job's work, for the waits' checks */
} slot;

static atomic_ullong total_runs;

static void job_body(slot *s)
{
    if (s->magic != JOB_MAGIC)
        WS_TEST_FAIL("job ran with a corrupt argument (magic %#x)", s->magic);
    unsigned prev = atomic_fetch_add(&s->runs, 1);
    if (prev != 0)
        WS_TEST_FAIL("a job ran %u times", prev + 1);
    if (s->stall % 16 == 0)
        (void)ext_burn(200 + s->stall % 4000);
    else if (s->stall % 251 == 0)
        sched_yield();
    atomic_fetch_add(&total_runs, 1);
    atomic_store(&s->done, 1);
}

static void job_fn(void *arg)
{
    job_body(arg);
}

static slot *slots_new(size_t n, uint64_t *rng)
{
    slot *s = calloc(n, sizeof *s);
    ASSERT(s != NULL);
    for (size_t i = 0; i < n; i++) {
        s[i].magic = JOB_MAGIC;
        s[i].stall = (uint32_t)test_rand(rng);
        atomic_init(&s[i].runs, 0);
        atomic_init(&s[i].done, 0);
    }
    return s;
}

/* Every slot ran exactly once. */
static void check_once(const slot *s, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        unsigned runs = atomic_load(&s[i].runs);
        if (runs != 1)
            WS_TEST_FAIL("%s: job %zu of %zu ran %u times", what, i, n, runs);
    }
}

/* Every slot in [begin, end) is done (its job finished). */
static void check_done(const slot *s, size_t begin, size_t end, const char *what)
{
    for (size_t i = begin; i < end; i++)
        if (!atomic_load(&s[i].done))
            WS_TEST_FAIL("%s: job %zu had not finished when the wait returned", what, i);
}

/* ---- producers: submit and group ---------------------------------------------------------- */

typedef struct producer {
    pthread_t thread;
    ws_pool *pool;
    ws_group *group; /* NULL: detached jobs */
    slot *slots;     /* this producer's slots */
    size_t n;
    uint64_t rng;
} producer;

static void *producer_main(void *p)
{
    producer *pr = p;
    for (size_t i = 0; i < pr->n; i++) {
        unsigned flags = test_rand(&pr->rng) % 8 == 0 ? WS_HIGH_PRIORITY : 0;
        int err = pr->group != NULL ? ws_group_submit(pr->group, job_fn, &pr->slots[i], flags)
                                    : ws_submit(pr->pool, job_fn, &pr->slots[i], flags);
        ASSERT_OK(err);
        if (test_rand(&pr->rng) % 1024 == 0)
            sched_yield(); /* let the workers catch up now and then */
    }
    if (pr->group != NULL) {
        /* A wait while other producers still submit: it covers at least this thread's jobs. */
        ws_group_wait(pr->group);
        check_done(pr->slots, 0, pr->n, "a producer's own wait");
    }
    return NULL;
}

static void run_producers(ws_pool *pool, ws_group *g, slot *slots, size_t per, uint64_t seed)
{
    producer pr[PRODUCERS];
    for (unsigned p = 0; p < PRODUCERS; p++) {
        pr[p] = (producer){0, pool, g, slots + p * per, per, seed * 31 + p + 1};
        ASSERT_OK(pthread_create(&pr[p].thread, NULL, producer_main, &pr[p]));
    }
    for (unsigned p = 0; p < PRODUCERS; p++)
        ASSERT_OK(pthread_join(pr[p].thread, NULL));
}

static void mode_submit(unsigned workers, size_t per, uint64_t seed)
{
    size_t n = per * PRODUCERS;
    uint64_t rng = seed;
    slot *s = slots_new(n, &rng);
    ws_pool *pool = ext_pool(workers, 0);
    run_producers(pool, NULL, s, per, seed);
    ws_pool_destroy(pool);
    check_once(s, n, "ws_submit");
    printf("submit: %zu detached jobs from %d producers on %u workers ran once each\n", n,
           PRODUCERS, workers);
    free(s);
}

static void mode_group(unsigned workers, size_t per, uint64_t seed, unsigned rounds)
{
    size_t n = per * PRODUCERS;
    ws_pool *pool = ext_pool(workers, 0);
    ws_group g;
    ws_group_init(&g, pool);
    for (unsigned round = 0; round < rounds; round++) {
        uint64_t rng = seed + round;
        slot *s = slots_new(n, &rng);
        atomic_store(&total_runs, 0);
        run_producers(pool, &g, s, per, seed + round);
        ws_group_wait(&g);
        /* Read before anything else: everything must be done at the moment wait returns. */
        unsigned long long runs = atomic_load(&total_runs);
        ASSERT_EQ(runs, n);
        check_done(s, 0, n, "the main thread's wait");
        check_once(s, n, "ws_group_submit");
        ws_group_wait(&g); /* an empty group: returns at once */
        free(s);
    }
    ws_pool_destroy(pool);
    printf("group: %u round(s) of %zu jobs from %d producers on %u workers, same group: all "
           "ran once, all done when each wait returned\n",
           rounds, n, PRODUCERS, workers);
}

/* ---- nested: jobs submit more jobs to the group being waited on --------------------------- */

typedef struct tree_node {
    slot s;
    ws_group *group;
    struct tree_node *nodes; /* the tree's nodes, in heap order: children of i at 2i+1, 2i+2 */
    unsigned index;
    unsigned count;
    unsigned seed;
} tree_node;

static void tree_fn(void *arg)
{
    tree_node *t = arg;
    for (unsigned c = 2 * t->index + 1; c <= 2 * t->index + 2 && c < t->count; c++) {
        tree_node *child = &t->nodes[c];
        unsigned flags = (t->seed + c) % 5 == 0 ? WS_HIGH_PRIORITY : 0;
        ASSERT_OK(ws_group_submit(t->group, tree_fn, child, flags));
    }
    job_body(&t->s);
}

/* Prepares count nodes of one tree (heap order) with group g. */
static void tree_init(tree_node *nodes, unsigned count, ws_group *g, uint64_t *rng)
{
    for (unsigned i = 0; i < count; i++) {
        tree_node *t = &nodes[i];
        t->s.magic = JOB_MAGIC;
        t->s.stall = (uint32_t)test_rand(rng);
        atomic_init(&t->s.runs, 0);
        atomic_init(&t->s.done, 0);
        t->group = g;
        t->nodes = nodes;
        t->index = i;
        t->count = count;
        t->seed = (unsigned)test_rand(rng);
    }
}

static void check_tree(const tree_node *nodes, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        if (atomic_load(&nodes[i].s.runs) != 1 || !atomic_load(&nodes[i].s.done))
            WS_TEST_FAIL("%s: node %zu of %zu ran %u times (done %d) when the wait returned", what,
                         i, n, atomic_load(&nodes[i].s.runs), atomic_load(&nodes[i].s.done));
    }
}

static void mode_nested(unsigned workers, size_t per, uint64_t seed)
{
    unsigned count = (1u << (TREE_DEPTH + 1)) - 1; /* nodes per tree */
    size_t trees = per * PRODUCERS / count;
    if (trees < 4)
        trees = 4;
    size_t n = trees * count;
    tree_node *nodes = calloc(n, sizeof *nodes);
    ASSERT(nodes != NULL);
    ws_pool *pool = ext_pool(workers, 0);
    ws_group g;
    ws_group_init(&g, pool);
    uint64_t rng = seed;
    for (size_t t = 0; t < trees; t++)
        tree_init(&nodes[t * count], count, &g, &rng);
    atomic_store(&total_runs, 0);
    for (size_t t = 0; t < trees; t++)
        ASSERT_OK(ws_group_submit(&g, tree_fn, &nodes[t * count], 0));
    ws_group_wait(&g);
    ASSERT_EQ(atomic_load(&total_runs), n);
    check_tree(nodes, n, "nested");
    ws_pool_destroy(pool);
    printf("nested: %zu trees of %u jobs each submitted by their parents while the group was "
           "waited on, %u workers: all ran once before the wait returned\n",
           trees, count, workers);
    free(nodes);
}

/* ---- worker: submitting and waiting on a worker ------------------------------------------- */

typedef struct worker_run {
    ws_group group;
    tree_node *nodes;
    unsigned count;
    size_t trees;
    unsigned rounds;
    uint64_t seed;
    int on_worker; /* the ws_worker_id() the root ran on */
} worker_run;

static void worker_root(void *arg)
{
    worker_run *r = arg;
    r->on_worker = ws_worker_id();
    ASSERT(r->on_worker >= 0);
    uint64_t rng = r->seed;
    for (unsigned round = 0; round < r->rounds; round++) {
        size_t n = r->trees * r->count;
        for (size_t t = 0; t < r->trees; t++)
            tree_init(&r->nodes[t * r->count], r->count, &r->group, &rng);
        atomic_store(&total_runs, 0);
        for (size_t t = 0; t < r->trees; t++)
            ASSERT_OK(ws_group_submit(&r->group, tree_fn, &r->nodes[t * r->count],
                                      t % 3 == 0 ? WS_HIGH_PRIORITY : 0));
        ws_group_wait(&r->group);
        ASSERT_EQ(atomic_load(&total_runs), n);
        check_tree(r->nodes, n, "a wait on a worker");
    }
}

static void mode_worker(unsigned workers, size_t per, uint64_t seed)
{
    worker_run r;
    memset(&r, 0, sizeof r);
    r.count = (1u << (TREE_DEPTH + 1)) - 1;
    r.trees = per * PRODUCERS / r.count / ROUNDS;
    if (r.trees < 4)
        r.trees = 4;
    r.rounds = ROUNDS;
    r.seed = seed;
    r.nodes = calloc(r.trees * r.count, sizeof *r.nodes);
    ASSERT(r.nodes != NULL);
    ws_pool *pool = ext_pool(workers, 0);
    ws_group_init(&r.group, pool);
    ASSERT_OK(ws_pool_run(pool, worker_root, &r));
    ws_stats st;
    ws_pool_stats(pool, &st);
    ws_pool_destroy(pool);
    printf("worker: %u rounds of %zu trees of %u jobs, submitted and waited for on worker %d "
           "of %u: all ran once (spawns %llu, pops %llu, steals %llu, injector takes %llu)\n",
           r.rounds, r.trees, r.count, r.on_worker, workers, (unsigned long long)st.spawns,
           (unsigned long long)st.pops, (unsigned long long)st.steals,
           (unsigned long long)st.injector_takes);
    free(r.nodes);
}

/* ---- mixed: groups inside fork-join ------------------------------------------------------ */

enum { MIXED_JOBS = 3 };

typedef struct mixed_arg {
    int depth;
    uint64_t seed;
    uint64_t jobs; /* group jobs run in this subtree, checked at each wait */
} mixed_arg;

typedef struct mixed_job {
    slot s;
    atomic_ullong *count;
} mixed_job;

static void mixed_job_fn(void *arg)
{
    mixed_job *j = arg;
    job_body(&j->s);
    atomic_fetch_add(j->count, 1);
}

static ws_pool *mixed_pool;
static bool mixed_high; /* some group jobs go to the urgent queue instead of the deque */

/* Submits MIXED_JOBS jobs to a fresh group and waits: all must be done when the wait returns. */
static uint64_t mixed_wait_jobs(uint64_t seed)
{
    ws_group g;
    ws_group_init(&g, mixed_pool);
    mixed_job jobs[MIXED_JOBS];
    atomic_ullong count;
    atomic_init(&count, 0);
    for (int i = 0; i < MIXED_JOBS; i++) {
        jobs[i].s.magic = JOB_MAGIC;
        jobs[i].s.stall = (uint32_t)(seed >> (i * 8));
        atomic_init(&jobs[i].s.runs, 0);
        atomic_init(&jobs[i].s.done, 0);
        jobs[i].count = &count;
        unsigned flags = mixed_high && i == 0 && seed % 7 == 0 ? WS_HIGH_PRIORITY : 0;
        ASSERT_OK(ws_group_submit(&g, mixed_job_fn, &jobs[i], flags));
    }
    ws_group_wait(&g);
    /* The records are on this stack: every job must be completely done now. */
    ASSERT_EQ(atomic_load(&count), MIXED_JOBS);
    for (int i = 0; i < MIXED_JOBS; i++)
        ASSERT_EQ(atomic_load(&jobs[i].s.done), 1);
    return MIXED_JOBS;
}

static void mixed_fn(void *p)
{
    mixed_arg *m = p;
    if (m->depth == 0) {
        m->jobs = mixed_wait_jobs(m->seed);
        return;
    }
    mixed_arg left = {m->depth - 1, m->seed * 6364136223846793005ull + 1, 0};
    mixed_arg right = {m->depth - 1, m->seed * 2862933555777941757ull + 3, 0};
    if (m->depth % 2 == 0) {
        ws_task t;
        ws_spawn(&t, mixed_fn, &left);
        uint64_t mine = mixed_wait_jobs(m->seed);
        mixed_fn(&right);
        ws_sync(&t);
        m->jobs = left.jobs + right.jobs + mine;
    } else {
        ws_join(mixed_fn, &left, mixed_fn, &right);
        m->jobs = left.jobs + right.jobs;
    }
}

/* Group jobs in a tree of the given depth (even depths wait for a group of their own). */
static uint64_t mixed_expected(int depth)
{
    if (depth == 0)
        return MIXED_JOBS;
    return 2 * mixed_expected(depth - 1) + (depth % 2 == 0 ? MIXED_JOBS : 0);
}

static void mode_mixed(unsigned workers, size_t per, uint64_t seed)
{
    int depth = 4;
    while (depth < 14 && mixed_expected(depth + 1) <= per * PRODUCERS / 4)
        depth++;
    mixed_pool = ext_pool(workers, 0);
    atomic_store(&total_runs, 0);
    for (int round = 0; round < ROUNDS; round++) {
        mixed_arg root = {depth, seed + (uint64_t)round, 0};
        ASSERT_OK(ws_pool_run(mixed_pool, mixed_fn, &root));
        ASSERT_UEQ(root.jobs, mixed_expected(depth));
    }
    ASSERT_UEQ(atomic_load(&total_runs), ROUNDS * mixed_expected(depth));
    ws_stats st;
    ws_pool_stats(mixed_pool, &st);
    ws_pool_destroy(mixed_pool);
    printf("%s: %d rounds of a depth-%d recursion with %llu group jobs each, %u workers: every "
           "wait saw its jobs done (steals %llu, leapfrogs %llu)\n",
           mixed_high ? "mixed_high" : "mixed", ROUNDS, depth,
           (unsigned long long)mixed_expected(depth), workers, (unsigned long long)st.steals,
           (unsigned long long)st.leapfrogs);
}

/* ---- cross: waiting on another pool's group ---------------------------------------------- */

typedef struct cross_arg {
    ws_pool *other;
    slot *slots;
    size_t n;
    int waited_on; /* ws_worker_id() of the waiting job */
    atomic_ullong *arrived;
    unsigned long long all;
} cross_arg;

static atomic_ullong cross_arrived;

static void cross_fn(void *p)
{
    cross_arg *c = p;
    c->waited_on = ws_worker_id();
    atomic_fetch_add(c->arrived, 1);
    ext_wait_at_least(c->arrived, c->all, "every worker of both pools to run a cross job");
    ws_group g;
    ws_group_init(&g, c->other);
    for (size_t i = 0; i < c->n; i++)
        ASSERT_OK(ws_group_submit(&g, job_fn, &c->slots[i], i % 4 == 0 ? WS_HIGH_PRIORITY : 0));
    ws_group_wait(&g);
    check_done(c->slots, 0, c->n, "a wait on another pool's group");
}

static void mode_cross(unsigned workers, size_t per, uint64_t seed)
{
    ws_pool *a = ext_pool(workers, 0), *b = ext_pool(workers, 0);
    /* One waiting job per worker: all of both pools' workers end up waiting, and the jobs they
     * wait for can only run on spares. */
    const unsigned JOBS_PER_SIDE = workers;
    size_t n = per / JOBS_PER_SIDE + 1;
    uint64_t rng = seed;
    slot *s = slots_new(2 * JOBS_PER_SIDE * n, &rng);
    cross_arg *args = calloc(2 * JOBS_PER_SIDE, sizeof *args);
    ASSERT(args != NULL);
    ws_group ga, gb;
    ws_group_init(&ga, a);
    ws_group_init(&gb, b);
    /* Hold every worker of both pools in a cross job before any inner job is submitted. */
    for (unsigned i = 0; i < 2 * JOBS_PER_SIDE; i++) {
        args[i] =
            (cross_arg){i % 2 ? a : b, s + (size_t)i * n, n, -1, &cross_arrived, 2 * JOBS_PER_SIDE};
        ASSERT_OK(ws_group_submit(i % 2 ? &gb : &ga, cross_fn, &args[i], 0));
    }
    ws_group_wait(&ga);
    ws_group_wait(&gb);
    for (unsigned i = 0; i < 2 * JOBS_PER_SIDE; i++)
        ASSERT(args[i].waited_on >= 0);
    ws_pool_destroy(a);
    ws_pool_destroy(b);
    check_once(s, 2 * JOBS_PER_SIDE * n, "cross-pool groups");
    printf("cross: %u jobs on two pools of %u workers each waited for %zu jobs on the other "
           "pool: all ran once\n",
           2 * JOBS_PER_SIDE, workers, n);
    free(args);
    free(s);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 3)
        WS_TEST_FAIL(
            "usage: %s WORKERS submit|group|nested|reuse|worker|mixed|mixed_high|cross [JOBS]",
            argv[0]);
    unsigned workers = ext_arg_unsigned(argc, argv, 1, 1);
    const char *mode = argv[2];
    size_t per = ext_arg_unsigned(argc, argv, 3, (unsigned)test_scaled(20000, 1000));
    uint64_t seed = test_seed("test_external_stress");
    printf("%u workers, mode %s, %zu jobs per producer\n", workers, mode, per);
    if (strcmp(mode, "submit") == 0)
        mode_submit(workers, per, seed);
    else if (strcmp(mode, "group") == 0)
        mode_group(workers, per, seed, 1);
    else if (strcmp(mode, "reuse") == 0)
        mode_group(workers, per / ROUNDS, seed, ROUNDS);
    else if (strcmp(mode, "nested") == 0)
        mode_nested(workers, per, seed);
    else if (strcmp(mode, "worker") == 0)
        mode_worker(workers, per, seed);
    else if (strcmp(mode, "mixed") == 0)
        mode_mixed(workers, per, seed);
    else if (strcmp(mode, "mixed_high") == 0)
        mixed_high = true, mode_mixed(workers, per, seed);
    else if (strcmp(mode, "cross") == 0)
        mode_cross(workers, per, seed);
    else
        WS_TEST_FAIL("unknown mode %s", mode);
    return 0;
}
