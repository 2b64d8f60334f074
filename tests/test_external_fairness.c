/* test_external_fairness: an external job is not starved by workers busy with local work.
 *
 * usage: test_external_fairness WORKERS MODE
 *   wait      every worker runs a job that pushed hundreds of short jobs on its own deque
 *             (ws_group_submit from the worker) and waits for them (ws_group_wait, which pops
 *             its group's jobs from its own deque). An external job submitted then must start
 *             within a bounded number of pickups. A wait never runs external work itself: on
 *             the turns when the worker loop would look at the injectors (every 31st pick) it
 *             counts as blocked, and a spare starts the external job. So the job runs on a
 *             spare, or on a worker that started at most 64 short jobs between the moment
 *             ws_submit returned and the moment the external job started. Counted per thread,
 *             because a thread descheduled between taking the external job and starting it
 *             (more threads than cores, or other programs) lets the others go on picking: a
 *             global count measured the operating system, not the scheduler. For the same
 *             reason each short job lasts about 0.1 ms, so that a spare woken by the
 *             scheduler is run by the operating system long before the backlogs drain. The
 *             global count is printed too. Several trials.
 *   loop      the same, but the jobs return after pushing theirs, so the short jobs are popped
 *             by the worker loop itself.
 *   joinwait  (2+ workers) a job's ws_join child is stolen; it pushes short jobs on the
 *             thief's deque and holds the thief until an external job has started, while every
 *             other worker is busy. The joiner, leapfrogging those jobs while it waits at the
 *             join, never runs the external job on top of its waiting frame: on its next
 *             fairness turn its wait counts as blocked and a spare runs the external job first
 *             thing (counted per thread, as in mode wait: the spare started no short job
 *             before it; the joiner's own pickups until then include the time the operating
 *             system takes to run the woken spare, and are printed).
 *   join      (1 worker) a job makes thousands of ws_join calls that never have to wait (the
 *             child is always popped back): no unrelated work may run inside them, so an
 *             external job submitted meanwhile starts only after that job returned.
 */
#include "test_external_util.h"

enum {
    TRIALS = 5,
    SHORT_JOB_BURN = 60000, /* about 0.1 ms (see mode wait) */
};

static atomic_ullong short_started;       /* short jobs started, all workers */
static atomic_ullong short_by_worker[64]; /* short jobs started, per worker id */

static void short_fn(void *arg)
{
    (void)arg;
    atomic_fetch_add(&short_started, 1);
    int id = ws_worker_id();
    if (id >= 0 && id < 64)
        atomic_fetch_add(&short_by_worker[id], 1);
    (void)ext_burn(SHORT_JOB_BURN);
}

/* ---- wait and loop ----------------------------------------------------------------------- */

typedef struct fair_run {
    ws_pool *pool;
    unsigned workers;
    unsigned per_worker; /* short jobs each parent pushes */
    int wait;            /* parents wait for their group (else they return) */
    atomic_ullong ready; /* parents that pushed all their jobs */
    atomic_ullong go;    /* the external job is queued: parents may go on */
    atomic_ullong x_started;
    unsigned long long x_seen;       /* short_started when the external job started */
    unsigned long long x_seen_local; /* short_by_worker[x_worker] then */
    int x_worker;
    ws_group groups[64]; /* one per parent */
    atomic_uint parent_index;
} fair_run;

static void parent_fn(void *arg)
{
    fair_run *r = arg;
    unsigned me = atomic_fetch_add(&r->parent_index, 1);
    ws_group *g = &r->groups[me];
    for (unsigned i = 0; i < r->per_worker; i++)
        ASSERT_OK(ws_group_submit(g, short_fn, NULL, 0));
    /* Hold this worker until every worker has its own parent and its own backlog (so that no
     * worker is idle: an idle worker would take the external job at once) and the external job
     * is queued (so that the backlogs cannot drain before it is there, however long the
     * submitting thread is descheduled). */
    atomic_fetch_add(&r->ready, 1);
    ext_wait_at_least(&r->go, 1, "the external job to be queued");
    if (r->wait)
        ws_group_wait(g);
}

static void x_fn(void *arg)
{
    fair_run *r = arg;
    r->x_seen = atomic_load(&short_started);
    r->x_worker = ws_worker_id();
    if (r->x_worker >= 0 && r->x_worker < 64)
        r->x_seen_local = atomic_load(&short_by_worker[r->x_worker]);
    atomic_store(&r->x_started, 1);
}

static void mode_backlog(unsigned workers, int wait)
{
    unsigned per_worker = (unsigned)test_scaled(600, 300);
    long long bound = 64;
    long long worst = 0;
    ASSERT(workers <= 64);
    for (int trial = 0; trial < TRIALS; trial++) {
        fair_run *r = calloc(1, sizeof *r);
        ASSERT(r != NULL);
        r->pool = ext_pool(workers, 0);
        r->workers = workers;
        r->per_worker = per_worker;
        r->wait = wait;
        for (unsigned i = 0; i < workers; i++)
            ws_group_init(&r->groups[i], r->pool);
        atomic_store(&short_started, 0);
        for (unsigned i = 0; i < 64; i++)
            atomic_store(&short_by_worker[i], 0);
        for (unsigned i = 0; i < workers; i++)
            ASSERT_OK(ws_submit(r->pool, parent_fn, r, 0));
        ext_wait_at_least(&r->ready, workers, "every worker to push its backlog");
        unsigned long long before = atomic_load(&short_started);
        unsigned long long after_local[64];
        ASSERT_OK(ws_submit(r->pool, x_fn, r, 0));
        unsigned long long after = atomic_load(&short_started);
        for (unsigned i = 0; i < 64; i++)
            after_local[i] = atomic_load(&short_by_worker[i]);
        atomic_store(&r->go, 1);
        ext_wait_at_least(&r->x_started, 1, "the external job to start");
        for (unsigned i = 0; i < workers; i++)
            ws_group_wait(&r->groups[i]);
        ws_pool_destroy(r->pool);
        unsigned long long total = (unsigned long long)per_worker * workers;
        ASSERT_EQ(atomic_load(&short_started), total);
        ASSERT(r->x_worker >= 0 && r->x_worker < 64);
        long long waited = (long long)r->x_seen_local - (long long)after_local[r->x_worker];
        printf("trial %d: the external job started on worker %d after %lld of its pickups "
               "(all workers: %lld, %lld counted from before ws_submit; %llu of %llu short jobs "
               "had started)\n",
               trial, r->x_worker, waited, (long long)r->x_seen - (long long)after,
               (long long)r->x_seen - (long long)before, r->x_seen, total);
        if (waited > bound)
            WS_TEST_FAIL("the external job waited %lld pickups of its worker, more than %lld",
                         waited, bound);
        /* It did not simply wait for the backlogs to drain. */
        ASSERT_LT(r->x_seen, total);
        if (waited > worst)
            worst = waited;
        free(r);
    }
    printf("%u workers, parents %s: at most %lld pickups before the external job started "
           "(bound %lld, %u short jobs queued per worker)\n",
           workers, wait ? "waiting in ws_group_wait" : "returned to the worker loop", worst, bound,
           per_worker);
}

/* ---- joinwait ----------------------------------------------------------------------------- */

/* The join's child (on the thief) waits until the external job is queued, pushes short jobs on
 * the thief's deque and then, without helping, holds the thief until the external job starts.
 * The joiner, waiting for the child, leapfrogs: it steals those short jobs from the thief, one
 * pick each, and must look at the injectors within a few dozen picks. Without that it would
 * drain the jobs and park, and the test would report a hang. (The external job is queued
 * before the joiner starts waiting on purpose: a joiner that has parked sleeps until its child
 * completes and is not woken by new external work.) */
typedef struct joinwait_run {
    ws_pool *pool;
    unsigned per_child; /* short jobs the child pushes */
    ext_gate busy;      /* holds the other workers */
    ws_group group;     /* the child's short jobs */
    atomic_ullong child_started;
    atomic_ullong x_submitted;
    atomic_ullong child_ready;
    atomic_ullong x_started;
    int joiner_worker, child_worker, x_worker;
    unsigned long long x_seen, after;
    unsigned long long x_seen_local; /* short jobs its runner started before it */
} joinwait_run;

static void jw_first(void *arg)
{
    joinwait_run *r = arg;
    r->joiner_worker = ws_worker_id();
    /* Return only once a thief has the second half and its jobs, so that the join waits. */
    ext_wait_at_least(&r->child_ready, 1, "the join's child to be stolen");
}

static void jw_second(void *arg)
{
    joinwait_run *r = arg;
    r->child_worker = ws_worker_id();
    atomic_store(&r->child_started, 1);
    ext_wait_at_least(&r->x_submitted, 1, "the external job to be queued");
    for (unsigned i = 0; i < r->per_child; i++)
        ASSERT_OK(ws_group_submit(&r->group, short_fn, NULL, 0));
    atomic_store(&r->child_ready, 1);
    ext_wait_at_least(&r->x_started, 1, "the external job to start inside the join's wait");
    ws_group_wait(&r->group);
}

static void jw_parent(void *arg)
{
    ws_join(jw_first, arg, jw_second, arg);
}

static void jw_x(void *arg)
{
    joinwait_run *r = arg;
    r->x_worker = ws_worker_id();
    r->x_seen = atomic_load(&short_started);
    if (r->x_worker >= 0 && r->x_worker < 64)
        r->x_seen_local = atomic_load(&short_by_worker[r->x_worker]);
    atomic_store(&r->x_started, 1);
}

static void mode_joinwait(unsigned workers)
{
    ASSERT(workers >= 2);
    for (int trial = 0; trial < TRIALS; trial++) {
        joinwait_run r;
        memset(&r, 0, sizeof r);
        ext_gate_init(&r.busy);
        r.pool = ext_pool(workers, 0);
        r.per_child = (unsigned)test_scaled(600, 300);
        ws_group_init(&r.group, r.pool);
        atomic_store(&short_started, 0);
        for (unsigned i = 0; i < 64; i++)
            atomic_store(&short_by_worker[i], 0);
        /* Occupy all workers but two: the joiner and the thief. */
        for (unsigned i = 0; i + 2 < workers; i++)
            ASSERT_OK(ws_submit(r.pool, ext_gate_job, &r.busy, 0));
        ext_wait_at_least(&r.busy.arrived, workers - 2, "the other workers to be held");
        ASSERT_OK(ws_submit(r.pool, jw_parent, &r, 0));
        ext_wait_at_least(&r.child_started, 1, "the join's child to be stolen");
        ASSERT_OK(ws_submit(r.pool, jw_x, &r, 0));
        unsigned long long after = atomic_load(&short_started);
        atomic_store(&r.x_submitted, 1);
        ext_wait_at_least(&r.x_started, 1, "the external job to start");
        ext_gate_open(&r.busy);
        ws_pool_destroy(r.pool);
        long long waited = (long long)r.x_seen - (long long)after;
        printf("trial %d, %u workers: joiner on worker %d, its child stolen by worker %d; the "
               "external job ran on worker %d after %llu of that thread's pickups, %lld "
               "leapfrogged pickups of the joiner meanwhile (%llu of %u)\n",
               trial, workers, r.joiner_worker, r.child_worker, r.x_worker, r.x_seen_local, waited,
               r.x_seen, r.per_child);
        ASSERT_NE(r.joiner_worker, r.child_worker);
        ASSERT_GE(r.x_worker, (int)workers); /* a spare, not the waiting joiner */
        ASSERT(r.x_worker < 64);
        ASSERT_LE(r.x_seen_local, 64);
        ASSERT_LT(r.x_seen, r.per_child); /* it did not wait for the backlog to drain */
    }
}

/* ---- join: the fast path is not a scheduling point ---------------------------------------- */

typedef struct join_run {
    atomic_ullong x_submitted;
    atomic_int parent_done;
    atomic_ullong x_started;
    int x_saw_parent_done;
    int parent_worker, x_worker;
} join_run;

typedef struct fib_arg {
    int n;
    uint64_t r;
} fib_arg;

static void fib_fn(void *p)
{
    fib_arg *f = p;
    if (f->n < 2) {
        f->r = (uint64_t)f->n;
        return;
    }
    fib_arg a = {f->n - 1, 0}, b = {f->n - 2, 0};
    ws_join(fib_fn, &a, fib_fn, &b);
    f->r = a.r + b.r;
}

static void join_parent(void *arg)
{
    join_run *r = arg;
    r->parent_worker = ws_worker_id();
    ext_wait_at_least(&r->x_submitted, 1, "the external job to be submitted");
    fib_arg f = {22, 0}; /* 28656 joins, each a scheduling point if the fast path were one */
    fib_fn(&f);
    ASSERT_UEQ(f.r, 17711);
    atomic_store(&r->parent_done, 1);
}

static void join_x(void *arg)
{
    join_run *r = arg;
    r->x_worker = ws_worker_id();
    r->x_saw_parent_done = atomic_load(&r->parent_done);
    atomic_store(&r->x_started, 1);
}

static void mode_join(void)
{
    join_run r;
    memset(&r, 0, sizeof r);
    ws_pool *pool = ext_pool(1, 0);
    ASSERT_OK(ws_submit(pool, join_parent, &r, 0));
    ASSERT_OK(ws_submit(pool, join_x, &r, 0));
    atomic_store(&r.x_submitted, 1);
    ext_wait_at_least(&r.x_started, 1, "the external job to start");
    ws_stats st;
    ws_pool_stats(pool, &st);
    ws_pool_destroy(pool);
    printf("1 worker: the external job started after the job making 28656 joins returned "
           "(parks %llu, steals %llu)\n",
           (unsigned long long)st.parks, (unsigned long long)st.steals);
    ASSERT_EQ(r.x_saw_parent_done, 1);
    ASSERT_EQ(r.x_worker, 0);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 3)
        WS_TEST_FAIL("usage: %s WORKERS wait|loop|joinwait|join", argv[0]);
    unsigned workers = ext_arg_unsigned(argc, argv, 1, 2);
    const char *mode = argv[2];
    if (strcmp(mode, "wait") == 0)
        mode_backlog(workers, 1);
    else if (strcmp(mode, "loop") == 0)
        mode_backlog(workers, 0);
    else if (strcmp(mode, "joinwait") == 0)
        mode_joinwait(workers);
    else if (strcmp(mode, "join") == 0)
        mode_join();
    else
        WS_TEST_FAIL("unknown mode %s", mode);
    return 0;
}
