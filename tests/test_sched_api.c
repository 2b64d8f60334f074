/* test_sched_api: the small functions of the pool API.
 *
 *  - ws_worker_id is -1 on threads that are not workers (main, a plain pthread) and 0..P-1 on
 *    the workers; P tasks that each wait for all the others to start must find P distinct ids,
 *    which also shows that a pool of P workers runs P tasks at once;
 *  - ws_pool_workers returns the configured count;
 *  - ws_strerror gives a non-empty string for the library's codes and for unknown ones;
 *  - ws_pool_destroy(NULL) does nothing;
 *  - ws_pool_run from a worker of the same pool calls fn directly on that worker;
 *  - ws_default_pool: the same pool from every thread, even when first used by several threads
 *    at once; its size comes from WS_NUM_WORKERS when that is set (ctest sets 3); ws_join from
 *    several outside threads at once runs on it.
 *
 * usage: test_sched_api
 */
#include "test_sched_util.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>

/* ---- worker ids ---------------------------------------------------------------------------- */

typedef struct gather {
    unsigned workers;
    _Atomic unsigned arrived;
    _Atomic uint64_t seen[(WS_MAX_WORKERS + 63) / 64]; /* bit per worker id */
    _Atomic int bad_id;
    _Atomic int timed_out;
} gather;

/* Waits until all P tasks have started, so each must be on its own worker. Gives up after
 * about 30 s (a liveness limit, not a speed check) so that a failure is reported, not hung. */
static void gather_task(void *p)
{
    gather *g = p;
    int id = ws_worker_id();
    if (id < 0 || (unsigned)id >= g->workers) {
        atomic_store(&g->bad_id, id);
        return;
    }
    atomic_fetch_or(&g->seen[id / 64], UINT64_C(1) << (id % 64));
    atomic_fetch_add(&g->arrived, 1);
    for (int i = 0; i < 30000 && atomic_load(&g->arrived) < g->workers; i++)
        sched_sleep_ms(1);
    if (atomic_load(&g->arrived) < g->workers)
        atomic_store(&g->timed_out, 1);
}

static void gather_root(void *p)
{
    gather *g = p;
    ws_task tasks[64];
    ASSERT(g->workers <= 64);
    for (unsigned i = 0; i < g->workers; i++)
        ws_spawn(&tasks[i], gather_task, g);
    for (unsigned i = g->workers; i-- > 0;)
        ws_sync(&tasks[i]);
}

static unsigned popcount_seen(gather *g)
{
    unsigned n = 0;
    for (size_t i = 0; i < sizeof g->seen / sizeof g->seen[0]; i++)
        n += (unsigned)__builtin_popcountll(atomic_load(&g->seen[i]));
    return n;
}

static void check_worker_ids(ws_pool *pool)
{
    unsigned p = ws_pool_workers(pool);
    gather *g = calloc(1, sizeof *g);
    ASSERT(g != NULL);
    g->workers = p;
    atomic_store(&g->bad_id, -2);
    ASSERT_OK(ws_pool_run(pool, gather_root, g));
    ASSERT_EQ(atomic_load(&g->bad_id), -2);
    if (atomic_load(&g->timed_out))
        WS_TEST_FAIL("only %u of %u tasks got a worker of their own: %u workers seem to stay idle "
                     "while there is work to steal",
                     atomic_load(&g->arrived), p, p - atomic_load(&g->arrived));
    ASSERT_EQ(popcount_seen(g), p);
    free(g);
}

static void *id_on_plain_thread(void *p)
{
    *(int *)p = ws_worker_id();
    return NULL;
}

/* ---- ws_pool_run on the same pool ------------------------------------------------------- */

typedef struct same {
    ws_pool *pool;
    int outer, inner;
    pthread_t outer_thread, inner_thread;
    int order; /* 1 while the inner call runs, 2 after */
} same;

static void same_inner(void *p)
{
    same *s = p;
    s->inner = ws_worker_id();
    s->inner_thread = pthread_self();
    s->order = 1;
}

static void same_outer(void *p)
{
    same *s = p;
    s->outer = ws_worker_id();
    s->outer_thread = pthread_self();
    ASSERT_OK(ws_pool_run(s->pool, same_inner, s));
    ASSERT_EQ(s->order, 1); /* it ran before ws_pool_run returned */
    s->order = 2;
    ASSERT_EQ(ws_worker_id(), s->outer);
}

/* ---- default pool ------------------------------------------------------------------------ */

typedef struct racer {
    pthread_barrier_t *start;
    ws_pool *got;
    int n;
    uint64_t result;
} racer;

static void *race_default(void *p)
{
    racer *r = p;
    int rc = pthread_barrier_wait(r->start);
    ASSERT(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
    r->got = ws_default_pool();
    return NULL;
}

static void *join_from_outside(void *p)
{
    racer *r = p;
    int rc = pthread_barrier_wait(r->start);
    ASSERT(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
    ASSERT_EQ(ws_worker_id(), -1);
    sched_fib_arg a = {r->n - 1, 0}, b = {r->n - 2, 0};
    ws_join(sched_fib_join, &a, sched_fib_join, &b);
    r->result = a.result + b.result;
    ASSERT_EQ(ws_worker_id(), -1);
    return NULL;
}

static void run_threads(void *(*fn)(void *), racer *r, unsigned n)
{
    pthread_t th[16];
    pthread_barrier_t start;
    ASSERT(n <= 16);
    ASSERT_OK(pthread_barrier_init(&start, NULL, n));
    for (unsigned i = 0; i < n; i++) {
        r[i].start = &start;
        ASSERT_OK(pthread_create(&th[i], NULL, fn, &r[i]));
    }
    for (unsigned i = 0; i < n; i++)
        ASSERT_OK(pthread_join(th[i], NULL));
    pthread_barrier_destroy(&start);
}

static void check_default_pool(void)
{
    racer r[8];
    memset(r, 0, sizeof r);
    run_threads(race_default, r, 8);
    ws_pool *def = r[0].got;
    ASSERT(def != NULL);
    for (int i = 1; i < 8; i++)
        ASSERT_PTR_EQ(r[i].got, def);
    ASSERT_PTR_EQ(ws_default_pool(), def);

    const char *env = getenv("WS_NUM_WORKERS");
    if (env != NULL && strcmp(env, "3") == 0)
        ASSERT_EQ(ws_pool_workers(def), 3);
    printf("default pool: %u workers (WS_NUM_WORKERS=%s)\n", ws_pool_workers(def),
           env != NULL ? env : "(unset)");
    check_worker_ids(def);

    for (int i = 0; i < 8; i++)
        r[i].n = 16 + i;
    run_threads(join_from_outside, r, 8);
    for (int i = 0; i < 8; i++)
        ASSERT_UEQ(r[i].result, sched_fib_serial(r[i].n));
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep the output in order with stderr on a failure */
    ASSERT_EQ(ws_worker_id(), -1);
    int plain = -2;
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, id_on_plain_thread, &plain));
    ASSERT_OK(pthread_join(t, NULL));
    ASSERT_EQ(plain, -1);

    ws_pool_destroy(NULL);

    const int known[] = {0, EINVAL, ENOMEM, EAGAIN, ESHUTDOWN};
    const int unknown[] = {-1, 12345, INT_MAX, INT_MIN};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const char *s = ws_strerror(known[i]);
        ASSERT(s != NULL && s[0] != '\0');
        printf("ws_strerror(%d) = \"%s\"\n", known[i], s);
        for (size_t j = 0; j < i; j++)
            if (strcmp(s, ws_strerror(known[j])) == 0)
                WS_TEST_FAIL("ws_strerror(%d) and ws_strerror(%d) are both \"%s\"", known[i],
                             known[j], s);
    }
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *s = ws_strerror(unknown[i]);
        ASSERT(s != NULL && s[0] != '\0');
        printf("ws_strerror(%d) = \"%s\"\n", unknown[i], s);
    }

    const unsigned sizes[] = {1, 2, 3, 5, 8};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        ws_pool *pool = sched_pool(sizes[i]);
        ASSERT_EQ(ws_pool_workers(pool), sizes[i]);
        check_worker_ids(pool);
        same s = {pool, -2, -3, pthread_self(), pthread_self(), 0};
        ASSERT_OK(ws_pool_run(pool, same_outer, &s));
        ASSERT_EQ(s.order, 2);
        /* A worker, or a spare standing in for a worker parked in a wait. */
        ASSERT(s.outer >= 0 && (unsigned)s.outer < ws_pool_threads(pool));
        ASSERT_EQ(s.inner, s.outer);
        ASSERT(pthread_equal(s.inner_thread, s.outer_thread));
        ASSERT(!pthread_equal(s.outer_thread, pthread_self()));
        ASSERT_EQ(ws_worker_id(), -1);
        ws_pool_destroy(pool);
    }

    check_default_pool();
    ASSERT_EQ(ws_worker_id(), -1);
    printf("ok\n");
    return 0;
}
