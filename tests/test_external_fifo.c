/* test_external_fifo: external submissions start in submission order on a one-worker pool.
 *
 * usage: test_external_fifo CASE [JOBS]
 *   single  one outside thread submits JOBS jobs (default 10^4) while the only worker is held by
 *           a job waiting on a gate, so the whole backlog sits in the injector; then the gate
 *           opens. Every job records its position in the order of starts: job i must start
 *           i-th. Half the jobs go through ws_submit, half through ws_group_submit (both use
 *           the same injector), in runs of RUN of each kind: a worker that takes a group job
 *           runs the group's next queued jobs with it (group.c), up to where a detached job
 *           ends the run.
 *   multi   four producer threads submit JOBS/4 jobs each; the gate opens once half of all the
 *           jobs are queued, so the worker drains the queue while producers keep adding to it.
 *           Each producer's jobs must start in that producer's order (jobs of different
 *           producers may interleave in any way).
 */
#include "test_external_util.h"

#include <pthread.h>

/* Jobs of one kind in a row (see single above). */
enum { RUN = 7 };

typedef struct fifo_run fifo_run;

typedef struct fifo_job {
    fifo_run *run;
    uint32_t producer;
    uint32_t index; /* position in its producer's submission order */
} fifo_job;

struct fifo_run {
    ws_pool *pool;
    ws_group group;
    ext_gate gate;
    fifo_job *jobs;          /* producer p's jobs at [p * per, (p + 1) * per) */
    uint32_t per;            /* jobs per producer */
    uint32_t *started;       /* started[k]: the job (index into jobs) that started k-th */
    atomic_ullong next;      /* starts so far */
    atomic_ullong submitted; /* jobs queued so far, all producers */
    atomic_int wrong_worker; /* a job ran somewhere else than worker 0 */
};

static void fifo_job_fn(void *arg)
{
    fifo_job *j = arg;
    fifo_run *r = j->run;
    if (ws_worker_id() != 0)
        atomic_store(&r->wrong_worker, 1);
    unsigned long long k = atomic_fetch_add(&r->next, 1);
    r->started[k] = (uint32_t)(j - r->jobs);
}

typedef struct producer_arg {
    fifo_run *run;
    uint32_t producer;
} producer_arg;

static void *producer_main(void *p)
{
    producer_arg *a = p;
    fifo_run *r = a->run;
    for (uint32_t i = 0; i < r->per; i++) {
        fifo_job *j = &r->jobs[(size_t)a->producer * r->per + i];
        j->run = r;
        j->producer = a->producer;
        j->index = i;
        /* Runs of detached and group jobs: both kinds share the injector and its order. */
        int err = i / RUN % 2 == 0 ? ws_submit(r->pool, fifo_job_fn, j, 0)
                                   : ws_group_submit(&r->group, fifo_job_fn, j, 0);
        ASSERT_OK(err);
        atomic_fetch_add(&r->submitted, 1);
    }
    return NULL;
}

static void run_case(unsigned producers, uint32_t total)
{
    fifo_run r;
    memset(&r, 0, sizeof r);
    r.per = total / producers;
    total = r.per * producers;
    r.pool = ext_pool(1, 0);
    ws_group_init(&r.group, r.pool);
    ext_gate_init(&r.gate);
    atomic_init(&r.next, 0);
    atomic_init(&r.submitted, 0);
    atomic_init(&r.wrong_worker, 0);
    r.jobs = calloc(total, sizeof *r.jobs);
    r.started = calloc(total, sizeof *r.started);
    ASSERT(r.jobs != NULL && r.started != NULL);

    /* Hold the only worker, so that the jobs queue up behind it. */
    ASSERT_OK(ws_submit(r.pool, ext_gate_job, &r.gate, 0));
    ext_wait_at_least(&r.gate.arrived, 1, "the gate job to start");

    pthread_t threads[8];
    producer_arg args[8];
    ASSERT(producers <= 8);
    if (producers == 1) {
        args[0] = (producer_arg){&r, 0};
        producer_main(&args[0]);
        ASSERT_EQ(atomic_load(&r.next), 0); /* nothing ran while the worker was held */
    } else {
        for (unsigned p = 0; p < producers; p++) {
            args[p] = (producer_arg){&r, p};
            ASSERT_OK(pthread_create(&threads[p], NULL, producer_main, &args[p]));
        }
        ext_wait_at_least(&r.submitted, total / 2, "half of the jobs to be queued");
        printf("gate opens with %llu of %u jobs queued\n",
               (unsigned long long)atomic_load(&r.submitted), total);
    }
    ext_gate_open(&r.gate);
    for (unsigned p = 0; producers > 1 && p < producers; p++)
        ASSERT_OK(pthread_join(threads[p], NULL));
    ws_group_wait(&r.group);
    ws_pool_destroy(r.pool); /* waits for the detached jobs */

    ASSERT_EQ(atomic_load(&r.next), total);
    ASSERT_EQ(atomic_load(&r.wrong_worker), 0);
    /* Each producer's jobs, in the order they started, have increasing indexes. */
    uint32_t *expect = calloc(producers, sizeof *expect);
    ASSERT(expect != NULL);
    uint32_t interleavings = 0;
    for (uint32_t k = 0; k < total; k++) {
        const fifo_job *j = &r.jobs[r.started[k]];
        if (j->index != expect[j->producer])
            WS_TEST_FAIL("start %u: producer %u's job %u started, expected its job %u", k,
                         j->producer, j->index, expect[j->producer]);
        expect[j->producer]++;
        if (k > 0 && r.jobs[r.started[k - 1]].producer != j->producer)
            interleavings++;
    }
    for (unsigned p = 0; p < producers; p++)
        ASSERT_EQ(expect[p], r.per);
    printf("%u producer(s), %u jobs: every producer's jobs started in its order "
           "(%u switches between producers)\n",
           producers, total, interleavings);
    free(expect);
    free(r.jobs);
    free(r.started);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2)
        WS_TEST_FAIL("usage: %s single|multi [JOBS]", argv[0]);
    uint32_t jobs = (uint32_t)ext_arg_unsigned(argc, argv, 2, 10000);
    if (strcmp(argv[1], "single") == 0)
        run_case(1, jobs);
    else if (strcmp(argv[1], "multi") == 0)
        run_case(4, jobs);
    else
        WS_TEST_FAIL("unknown case %s", argv[1]);
    return 0;
}
