/* test_external_destroy: ws_pool_destroy runs every queued external job, and refuses outside
 * submissions once it has begun.
 *
 * usage: test_external_destroy WORKERS CASE
 *   queued  every worker is held by a job waiting on a gate; JOBS external jobs (10^4; half
 *           detached, half in a group, some high-priority) queue behind them. Another thread
 *           calls ws_pool_destroy. The main thread keeps submitting probes until one returns
 *           ESHUTDOWN (probes accepted before that must run; refused ones never), checks that
 *           ws_group_submit and ws_pool_run are refused too and that destroy has not returned,
 *           then opens the gate. When destroy returns, every queued job has run exactly once,
 *           and so have the jobs that running jobs submitted from their worker during the
 *           destroy (a worker of the pool may still submit).
 *   chain   a chain of jobs, each submitting the next from its worker (detached, or to a
 *           group), is still running when destroy is called: destroy returns only after the
 *           whole chain has run.
 */
#include "test_external_util.h"

#include <pthread.h>

enum { SPAWN_EVERY = 97, MAX_PROBES = 1 << 20 };

typedef struct destroy_run {
    ws_pool *pool;
    ws_group group;
    ext_gate gate;
    uint32_t jobs;
    atomic_uchar *ran;              /* per queued job */
    atomic_ullong children_ran;     /* jobs submitted from workers during the destroy */
    atomic_ullong children_refused; /* must stay 0 */
    atomic_uchar *probe_ran;        /* per probe */
    int *probe_err;
    atomic_int destroy_started;
    atomic_int destroy_returned;
} destroy_run;

typedef struct job_ref {
    destroy_run *run;
    uint32_t index;
} job_ref;

static void child_fn(void *arg)
{
    destroy_run *r = arg;
    atomic_fetch_add(&r->children_ran, 1);
}

static void queued_fn(void *arg)
{
    job_ref *j = arg;
    destroy_run *r = j->run;
    if (atomic_fetch_add(&r->ran[j->index], 1) != 0)
        WS_TEST_FAIL("queued job %u ran twice", j->index);
    if (j->index % SPAWN_EVERY == 0) {
        /* From a worker of the pool, submissions are still accepted while destroy waits. */
        int e1 = ws_submit(r->pool, child_fn, r, 0);
        int e2 = ws_group_submit(&r->group, child_fn, r, j->index % 2 ? WS_HIGH_PRIORITY : 0);
        if (e1 != 0 || e2 != 0)
            atomic_fetch_add(&r->children_refused, 1);
    }
}

static void probe_fn(void *arg)
{
    atomic_uchar *ran = arg;
    atomic_fetch_add(ran, 1);
}

static void refused_fn(void *arg)
{
    (void)arg;
    WS_TEST_FAIL("a refused submission ran");
}

static void *destroy_main(void *p)
{
    destroy_run *r = p;
    atomic_store(&r->destroy_started, 1);
    ws_pool_destroy(r->pool);
    atomic_store(&r->destroy_returned, 1);
    return NULL;
}

static void case_queued(unsigned workers)
{
    destroy_run *r = calloc(1, sizeof *r);
    ASSERT(r != NULL);
    r->jobs = 10000;
    r->ran = calloc(r->jobs, sizeof *r->ran);
    r->probe_ran = calloc(MAX_PROBES, sizeof *r->probe_ran);
    r->probe_err = calloc(MAX_PROBES, sizeof *r->probe_err);
    job_ref *refs = calloc(r->jobs, sizeof *refs);
    ASSERT(r->ran != NULL && r->probe_ran != NULL && r->probe_err != NULL && refs != NULL);
    r->pool = ext_pool(workers, 0);
    ws_group_init(&r->group, r->pool);
    ext_gate_init(&r->gate);
    for (unsigned i = 0; i < workers; i++)
        ASSERT_OK(ws_submit(r->pool, ext_gate_job, &r->gate, 0));
    ext_wait_at_least(&r->gate.arrived, workers, "every worker to be held");
    for (uint32_t i = 0; i < r->jobs; i++) {
        refs[i] = (job_ref){r, i};
        unsigned flags = i % 50 == 0 ? WS_HIGH_PRIORITY : 0;
        ASSERT_OK(i % 2 == 0 ? ws_submit(r->pool, queued_fn, &refs[i], flags)
                             : ws_group_submit(&r->group, queued_fn, &refs[i], flags));
    }

    pthread_t destroyer;
    ASSERT_OK(pthread_create(&destroyer, NULL, destroy_main, r));
    unsigned probes = 0, accepted = 0;
    for (;;) {
        if (probes == MAX_PROBES)
            WS_TEST_FAIL("no submission was refused after %u probes", probes);
        unsigned i = probes++;
        r->probe_err[i] = ws_submit(r->pool, probe_fn, &r->probe_ran[i], 0);
        if (r->probe_err[i] == ESHUTDOWN)
            break;
        ASSERT_OK(r->probe_err[i]);
        accepted++;
        ext_sleep_us(100);
    }
    /* Destroy has begun: outside submissions of every kind are refused. */
    ASSERT_EQ(ws_submit(r->pool, refused_fn, NULL, WS_HIGH_PRIORITY), ESHUTDOWN);
    ASSERT_EQ(ws_group_submit(&r->group, refused_fn, NULL, 0), ESHUTDOWN);
    ASSERT_EQ(ws_group_submit(&r->group, refused_fn, NULL, WS_HIGH_PRIORITY), ESHUTDOWN);
    ASSERT_EQ(ws_pool_run(r->pool, refused_fn, NULL), ESHUTDOWN);
    /* Nothing could run yet, and destroy waits for the queued jobs. */
    ASSERT_EQ(atomic_load(&r->destroy_returned), 0);
    for (uint32_t i = 0; i < r->jobs; i++)
        ASSERT_EQ(atomic_load(&r->ran[i]), 0);
    ext_gate_open(&r->gate);
    ASSERT_OK(pthread_join(destroyer, NULL));

    ASSERT_EQ(atomic_load(&r->destroy_returned), 1);
    for (uint32_t i = 0; i < r->jobs; i++)
        if (atomic_load(&r->ran[i]) != 1)
            WS_TEST_FAIL("queued job %u ran %u times", i, atomic_load(&r->ran[i]));
    for (unsigned i = 0; i < probes; i++) {
        unsigned expect = r->probe_err[i] == 0 ? 1 : 0;
        if (atomic_load(&r->probe_ran[i]) != expect)
            WS_TEST_FAIL("probe %u (result %d) ran %u times", i, r->probe_err[i],
                         atomic_load(&r->probe_ran[i]));
    }
    unsigned spawners = (r->jobs + SPAWN_EVERY - 1) / SPAWN_EVERY;
    ASSERT_EQ(atomic_load(&r->children_refused), 0);
    ASSERT_EQ(atomic_load(&r->children_ran), 2 * spawners);
    printf("%u workers: %u queued jobs and %u jobs submitted from workers during the destroy "
           "all ran once before it returned; %u probe(s) accepted before the first ESHUTDOWN, "
           "the refused ones never ran\n",
           workers, r->jobs, 2 * spawners, accepted);
    free(refs);
    free(r->ran);
    free(r->probe_ran);
    free(r->probe_err);
    free(r);
}

/* ---- chain -------------------------------------------------------------------------------- */

typedef struct chain_run {
    ws_pool *pool;
    ws_group group;
    unsigned length;
    atomic_ullong links; /* links run */
    atomic_ullong started;
} chain_run;

static void chain_fn(void *arg)
{
    chain_run *c = arg;
    unsigned long long k = atomic_fetch_add(&c->links, 1) + 1;
    atomic_store(&c->started, 1);
    (void)ext_burn(2000);
    if (k < c->length) {
        int err = k % 2 ? ws_submit(c->pool, chain_fn, c, k % 3 ? 0 : WS_HIGH_PRIORITY)
                        : ws_group_submit(&c->group, chain_fn, c, 0);
        if (err != 0)
            WS_TEST_FAIL("link %llu: a worker's submission during destroy returned %d", k, err);
    }
}

static void case_chain(unsigned workers)
{
    chain_run c;
    memset(&c, 0, sizeof c);
    c.length = (unsigned)test_scaled(20000, 1000);
    c.pool = ext_pool(workers, 0);
    ws_group_init(&c.group, c.pool);
    ASSERT_OK(ws_submit(c.pool, chain_fn, &c, 0));
    ext_wait_at_least(&c.started, 1, "the chain to start");
    ws_pool_destroy(c.pool);
    ASSERT_EQ(atomic_load(&c.links), c.length);
    printf("%u workers: destroy returned after all %u links of a chain that kept submitting "
           "during it\n",
           workers, c.length);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 3)
        WS_TEST_FAIL("usage: %s WORKERS queued|chain", argv[0]);
    unsigned workers = ext_arg_unsigned(argc, argv, 1, 1);
    if (strcmp(argv[2], "queued") == 0)
        case_queued(workers);
    else if (strcmp(argv[2], "chain") == 0)
        case_chain(workers);
    else
        WS_TEST_FAIL("unknown case %s", argv[2]);
    return 0;
}
