/* test_external_priority: a WS_HIGH_PRIORITY job overtakes the normal backlog.
 *
 * usage: test_external_priority WORKERS [burst_normal|burst_high]
 * The pool is saturated: each of its P workers runs a long job that waits on its own gate, and
 * a backlog of normal jobs waits in the injector behind them. Then high-priority jobs are
 * submitted, and the long jobs are released one at a time, each only once the previous release
 * has had its effect. Checked, by the order of starts (no clock is involved):
 *   - nothing starts while every worker is held;
 *   - the high-priority jobs start before every backlog job, in their submission order;
 *   - they start after the first release only (one finished long job is enough).
 * Three variants: the urgent jobs come from an outside thread with ws_submit, from an outside
 * thread with ws_group_submit, and from inside one of the long jobs (a worker: a high-priority
 * job still goes to the urgent queue, not to the worker's deque).
 *
 * burst_normal, burst_high: a burst of 64 jobs (each sleeping 2 ms) submitted from an outside
 * thread to a parked pool, at normal or high priority: more than one worker must take part
 * (the first worker to find a job wakes another while more are queued). Sleeping jobs need no
 * CPU, so a loaded machine cannot make one worker look like the only one awake.
 */
#include "test_external_util.h"

enum { URGENT = 3, MAX_WORKERS = 64 };

typedef struct prio_run prio_run;

typedef struct prio_job {
    prio_run *run;
    int urgent; /* 1..URGENT for the urgent jobs, 0 for the backlog */
    uint32_t index;
} prio_job;

struct prio_run {
    ws_pool *pool;
    ws_group group;
    unsigned workers;
    ext_gate gates[MAX_WORKERS];
    atomic_ullong long_started;
    atomic_ullong released; /* long jobs released so far */
    atomic_ullong starts;   /* urgent and backlog jobs started */
    prio_job *jobs;
    uint32_t backlog;
    prio_job urgent[URGENT];
    unsigned long long urgent_start[URGENT];    /* its position in the order of starts */
    unsigned long long urgent_released[URGENT]; /* long jobs released when it started */
    unsigned long long *backlog_start;
    int variant;
    atomic_ullong backlog_queued;   /* variant 2: the long job's go-ahead */
    atomic_ullong submitted_inside; /* variant 2: urgent jobs submitted from a long job */
};

static void prio_job_fn(void *arg)
{
    prio_job *j = arg;
    prio_run *r = j->run;
    unsigned long long k = atomic_fetch_add(&r->starts, 1);
    if (j->urgent) {
        r->urgent_start[j->urgent - 1] = k;
        r->urgent_released[j->urgent - 1] = atomic_load(&r->released);
    } else {
        r->backlog_start[j->index] = k;
    }
}

typedef struct long_arg {
    prio_run *run;
    unsigned index;
} long_arg;

static void submit_urgent(prio_run *r)
{
    for (int u = 0; u < URGENT; u++) {
        r->urgent[u] = (prio_job){r, u + 1, 0};
        int err = r->variant == 0
                      ? ws_submit(r->pool, prio_job_fn, &r->urgent[u], WS_HIGH_PRIORITY)
                      : ws_group_submit(&r->group, prio_job_fn, &r->urgent[u], WS_HIGH_PRIORITY);
        ASSERT_OK(err);
    }
}

static void long_fn(void *arg)
{
    long_arg *a = arg;
    prio_run *r = a->run;
    ext_gate *g = &r->gates[a->index];
    atomic_fetch_add(&r->long_started, 1);
    if (r->variant == 2 && a->index == 0) {
        /* Wait until the backlog is queued, then submit from this worker. */
        ext_wait_at_least(&r->backlog_queued, 1, "the backlog to be queued");
        submit_urgent(r);
        atomic_store(&r->submitted_inside, 1);
    }
    ext_gate_hold(g);
}

static void run_variant(unsigned workers, int variant, uint32_t backlog)
{
    static const char *names[] = {"ws_submit from outside", "ws_group_submit from outside",
                                  "ws_group_submit from a worker"};
    prio_run *r = calloc(1, sizeof *r);
    ASSERT(r != NULL);
    r->workers = workers;
    r->variant = variant;
    r->backlog = backlog;
    r->pool = ext_pool(workers, 0);
    ws_group_init(&r->group, r->pool);
    r->jobs = calloc(backlog, sizeof *r->jobs);
    r->backlog_start = calloc(backlog, sizeof *r->backlog_start);
    ASSERT(r->jobs != NULL && r->backlog_start != NULL);
    long_arg args[MAX_WORKERS];
    for (unsigned i = 0; i < workers; i++) {
        ext_gate_init(&r->gates[i]);
        args[i] = (long_arg){r, i};
    }
    /* Saturate: one long job per worker, all running before anything else is queued. */
    for (unsigned i = 0; i < workers; i++)
        ASSERT_OK(ws_submit(r->pool, long_fn, &args[i], 0));
    ext_wait_at_least(&r->long_started, workers, "every worker to run a long job");

    for (uint32_t i = 0; i < backlog; i++) {
        r->jobs[i] = (prio_job){r, 0, i};
        ASSERT_OK(i % 2 == 0 ? ws_submit(r->pool, prio_job_fn, &r->jobs[i], 0)
                             : ws_group_submit(&r->group, prio_job_fn, &r->jobs[i], 0));
    }
    if (variant == 2) {
        atomic_store(&r->backlog_queued, 1);
        ext_wait_at_least(&r->submitted_inside, 1, "the urgent jobs from the worker");
    } else {
        submit_urgent(r);
    }
    /* Every worker is held: nothing has started. */
    ASSERT_EQ(atomic_load(&r->starts), 0);

    /* Release the long jobs one by one: the first release must let all urgent jobs start. */
    for (unsigned i = 0; i < workers; i++) {
        atomic_fetch_add(&r->released, 1);
        ext_gate_open(&r->gates[i]);
        if (i == 0)
            ext_wait_at_least(&r->starts, URGENT, "the urgent jobs to start");
    }
    ws_group_wait(&r->group);
    ws_pool_destroy(r->pool);

    ASSERT_EQ(atomic_load(&r->starts), backlog + URGENT);
    unsigned long long first_backlog = ~0ull;
    for (uint32_t i = 0; i < backlog; i++)
        if (r->backlog_start[i] < first_backlog)
            first_backlog = r->backlog_start[i];
    for (int u = 0; u < URGENT; u++) {
        printf("  urgent job %d: start #%llu, after %llu release(s)\n", u + 1, r->urgent_start[u],
               r->urgent_released[u]);
        /* Started in submission order, before every backlog job... */
        ASSERT_EQ(r->urgent_start[u], u);
        ASSERT_LT(r->urgent_start[u], first_backlog);
        /* ...and only the first long job had to finish for that. */
        ASSERT_EQ(r->urgent_released[u], 1);
    }
    printf("%u workers, %s: %d urgent jobs started before all %u backlog jobs "
           "(first backlog start #%llu)\n",
           workers, names[variant], URGENT, backlog, first_backlog);
    free(r->jobs);
    free(r->backlog_start);
    free(r);
}

/* ---- burst ------------------------------------------------------------------------------- */

enum { BURST = 64 };

typedef struct burst_run {
    atomic_ullong per_worker[MAX_WORKERS];
    atomic_ullong done;
} burst_run;

static void burst_fn(void *arg)
{
    burst_run *b = arg;
    int id = ws_worker_id();
    ASSERT(id >= 0 && id < MAX_WORKERS);
    atomic_fetch_add(&b->per_worker[id], 1);
    ext_sleep_ms(2);
    atomic_fetch_add(&b->done, 1);
}

static void run_burst(unsigned workers, unsigned flags)
{
    burst_run *b = calloc(1, sizeof *b);
    ASSERT(b != NULL);
    ws_pool *pool = ext_pool(workers, 0);
    ext_sleep_ms(100); /* let the workers park */
    for (int i = 0; i < BURST; i++)
        ASSERT_OK(ws_submit(pool, burst_fn, b, flags));
    ext_wait_at_least(&b->done, BURST, "the burst to run");
    ws_pool_destroy(pool);
    unsigned active = 0;
    printf("%u workers, a burst of %d %s jobs on a parked pool; jobs per worker:", workers, BURST,
           flags ? "high-priority" : "normal");
    for (unsigned i = 0; i < workers; i++) {
        unsigned long long n = atomic_load(&b->per_worker[i]);
        printf(" %llu", n);
        active += n != 0;
    }
    printf("\n");
    if (active < 2)
        WS_TEST_FAIL("only %u worker took part in a burst of %d %s jobs", active, BURST,
                     flags ? "high-priority" : "normal");
    free(b);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    unsigned workers = ext_arg_unsigned(argc, argv, 1, 2);
    ASSERT(workers <= MAX_WORKERS);
    if (argc > 2) {
        ASSERT(workers >= 2);
        if (strcmp(argv[2], "burst_normal") == 0)
            run_burst(workers, 0);
        else if (strcmp(argv[2], "burst_high") == 0)
            run_burst(workers, WS_HIGH_PRIORITY);
        else
            WS_TEST_FAIL("unknown case %s", argv[2]);
        return 0;
    }
    uint32_t backlog = (uint32_t)test_scaled(2000, 200);
    for (int variant = 0; variant < 3; variant++)
        run_variant(workers, variant, backlog);
    return 0;
}
