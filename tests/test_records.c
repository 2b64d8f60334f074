/* test_records: the recycled job records of src/records.c.
 *
 * usage: test_records MODE [WORKERS]
 *   reuse   on a worker, records handed back form chains on the pool's stack (full chains
 *           only, the rest on the worker's list); the worker takes its own list back first
 *           (newest first); an outside thread pops the chains one at a time and gets exactly
 *           the records the worker gave back, each once, before it falls back to the allocator
 *   trim    while the pool is busy the stack keeps every chain handed back; once the worker
 *           parks, the stack is trimmed to its idle bound and the surplus freed
 *           (AddressSanitizer checks that each record is freed once, and that none leaks when
 *           the pool is destroyed)
 *   exit    outside threads pop a chain into their lists and exit: the thread-exit destructor
 *           frees what they held (LeakSanitizer fails the ASan build otherwise)
 *   churn   WORKERS workers; short-lived threads submit group jobs and detached jobs while the
 *           records go round between workers, the pool's stack and the threads' lists; every
 *           job runs exactly once and sees its own argument; several pools one after another
 * The pool has one worker in the first three modes; while the test looks at the stack from
 * outside, that worker runs a job that holds it (see hold_begin), so that it cannot park and
 * trim meanwhile.
 */
#include "internal.h"
#include "test.h"
#include "test_external_util.h" /* ext_sleep_ms */

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

enum { N_REUSE = 3 * WS_RECORD_BATCH + 5 };

/* Is p one of the n records in set? */
static bool in_set(ws__job *const *set, size_t n, const ws__job *p)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == p)
            return true;
    return false;
}

/* The chains on the pool's stack; only while nobody pops or trims. */
static unsigned stack_chains(ws_pool *pool)
{
    unsigned n = 0;
    for (ws__task *ch = atomic_load(&pool->records.stack); ch != NULL; ch = ch->owner)
        n++;
    return n;
}

static ws_pool *one_worker_pool(void)
{
    ws_pool *pool;
    ASSERT_OK(ws_pool_create(&pool, &(ws_config){.workers = 1}));
    return pool;
}

/* Keeps the pool's only worker busy (so that it neither parks nor trims) from hold_begin to
 * hold_end, through ws_pool_run from a helper thread (its root needs no record). */
typedef struct hold {
    ws_pool *pool;
    atomic_int started, release;
    pthread_t thread;
} hold;

static void hold_fn(void *arg)
{
    hold *h = arg;
    atomic_store(&h->started, 1);
    while (!atomic_load(&h->release))
        sched_yield();
}

static void *hold_thread(void *arg)
{
    hold *h = arg;
    ASSERT_OK(ws_pool_run(h->pool, hold_fn, h));
    return NULL;
}

static void hold_begin(hold *h, ws_pool *pool)
{
    h->pool = pool;
    atomic_init(&h->started, 0);
    atomic_init(&h->release, 0);
    ASSERT_OK(pthread_create(&h->thread, NULL, hold_thread, h));
    while (!atomic_load(&h->started))
        sched_yield();
}

static void hold_end(hold *h)
{
    atomic_store(&h->release, 1);
    ASSERT_OK(pthread_join(h->thread, NULL));
}

typedef struct reuse_ctx {
    ws_pool *pool;
    ws__job *given[N_REUSE];
} reuse_ctx;

static void reuse_on_worker(void *arg)
{
    reuse_ctx *c = arg;
    for (size_t i = 0; i < N_REUSE; i++) {
        c->given[i] = ws__malloc(sizeof(ws__job));
        ASSERT(c->given[i] != NULL);
        ws__record_free(c->pool, ws__tls_worker, c->given[i]);
    }
    /* A full list becomes a chain when the next record comes back: 3 chains, 5 left. */
    ASSERT_EQ(stack_chains(c->pool), 3);
    for (size_t i = 0; i < 5; i++)
        ASSERT_PTR_EQ(ws__record_new(c->pool, ws__tls_worker), c->given[N_REUSE - 1 - i]);
}

static void mode_reuse(void)
{
    reuse_ctx c = {.pool = one_worker_pool()};
    ASSERT_OK(ws_pool_run(c.pool, reuse_on_worker, &c));
    hold h;
    hold_begin(&h, c.pool);
    /* The worker kept the 5 records it took back; the stack holds the other 192. */
    ws__job *got[3 * WS_RECORD_BATCH];
    for (size_t i = 0; i < 3 * WS_RECORD_BATCH; i++) {
        got[i] = ws__record_new(c.pool, NULL);
        ASSERT(in_set(c.given, N_REUSE - 5, got[i]));
        ASSERT(!in_set(got, i, got[i]));
    }
    ASSERT_EQ(stack_chains(c.pool), 0);
    ws__job *fresh = ws__record_new(c.pool, NULL); /* nothing cached: the allocator */
    ASSERT(fresh != NULL && !in_set(c.given, N_REUSE, fresh));
    hold_end(&h);
    ws__free(fresh);
    for (size_t i = 0; i < 3 * WS_RECORD_BATCH; i++)
        ws__free(got[i]);
    for (size_t i = 0; i < 5; i++)
        ws__free(c.given[N_REUSE - 1 - i]);
    ws_pool_destroy(c.pool);
}

/* Hands back `count` new records on the worker that runs it; then the stack must hold `expect`
 * chains. */
typedef struct give_ctx {
    ws_pool *pool;
    size_t count;
    unsigned expect;
} give_ctx;

static void give_on_worker(void *arg)
{
    give_ctx *g = arg;
    for (size_t i = 0; i < g->count; i++) {
        ws__job *t = ws__malloc(sizeof(ws__job));
        ASSERT(t != NULL);
        ws__record_free(g->pool, ws__tls_worker, t);
    }
    ASSERT_EQ(stack_chains(g->pool), g->expect);
}

static void mode_trim(void)
{
    ws_pool *pool = one_worker_pool();
    unsigned chains = WS_RECORD_KEEP_CHAINS + 5;
    give_ctx g = {pool, (size_t)chains * WS_RECORD_BATCH + 1, chains};
    ASSERT_OK(ws_pool_run(pool, give_on_worker, &g));
    /* The worker parks soon (its idle ladder is well under a second) and trims then. The stack
     * is looked at while a held job keeps the worker from trimming at the same time. */
    unsigned seen = chains;
    for (int i = 0; i < 2000 && seen != WS_RECORD_KEEP_CHAINS; i++) {
        while (ws__idle_parked(pool) == 0)
            ext_sleep_ms(1);
        hold h;
        hold_begin(&h, pool);
        seen = stack_chains(pool);
        hold_end(&h);
        ASSERT(seen == chains || seen == WS_RECORD_KEEP_CHAINS);
    }
    ASSERT_EQ(seen, WS_RECORD_KEEP_CHAINS);
    ws_pool_destroy(pool); /* frees the stack and the worker's list */
}

static void *take_and_exit(void *arg)
{
    ws_pool *pool = arg;
    ws__job *t = ws__record_new(pool, NULL); /* pops a chain into this thread's list */
    ASSERT(t != NULL);
    ws__free(t);
    return NULL;
}

static void mode_exit(void)
{
    ws_pool *pool = one_worker_pool();
    unsigned expect = 0;
    for (int round = 0; round < 4; round++) {
        /* 4 full chains each round (the worker's list keeps the last record or few). */
        give_ctx g = {pool, 4 * WS_RECORD_BATCH + 1, expect + 4};
        ASSERT_OK(ws_pool_run(pool, give_on_worker, &g));
        hold h;
        hold_begin(&h, pool);
        pthread_t th;
        ASSERT_OK(pthread_create(&th, NULL, take_and_exit, pool));
        ASSERT_OK(pthread_join(th, NULL));
        expect += 3;
        ASSERT_EQ(stack_chains(pool), expect);
        hold_end(&h);
    }
    ws_pool_destroy(pool);
}

/* ---- churn ---------------------------------------------------------------------------- */

enum { MAGIC = 0x5eed };

typedef struct churn_job {
    unsigned magic;
    atomic_uint runs;
} churn_job;

typedef struct churn_thread {
    ws_pool *pool;
    churn_job *jobs;
    size_t n;
    pthread_t thread;
} churn_thread;

static void churn_fn(void *arg)
{
    churn_job *j = arg;
    ASSERT_EQ(j->magic, MAGIC);
    /* release: the next round rewrites magic once it has seen this run (acquire loads). */
    atomic_fetch_add_explicit(&j->runs, 1, memory_order_release);
}

static void *churn_submitter(void *arg)
{
    churn_thread *c = arg;
    ws_group g;
    ws_group_init(&g, c->pool);
    for (size_t i = 0; i < c->n; i++) {
        if (i % 3 == 0)
            ASSERT_OK(ws_submit(c->pool, churn_fn, &c->jobs[i], 0));
        else
            ASSERT_OK(
                ws_group_submit(&g, churn_fn, &c->jobs[i], i % 7 == 0 ? WS_HIGH_PRIORITY : 0));
    }
    ws_group_wait(&g);
    return NULL;
}

static void mode_churn(unsigned workers)
{
    enum { THREADS = 3 };
    size_t per = test_scaled(20000, 500);
    int rounds = (int)test_scaled(40, 4);
    churn_job *jobs = calloc((size_t)THREADS * per, sizeof *jobs);
    ASSERT(jobs != NULL);
    for (int pool_round = 0; pool_round < 2; pool_round++) {
        ws_pool *pool;
        ASSERT_OK(ws_pool_create(&pool, &(ws_config){.workers = workers}));
        for (int r = 0; r < rounds; r++) {
            for (size_t i = 0; i < THREADS * per; i++) {
                jobs[i].magic = MAGIC;
                atomic_store(&jobs[i].runs, 0);
            }
            churn_thread th[THREADS];
            for (int t = 0; t < THREADS; t++) {
                th[t] = (churn_thread){pool, jobs + (size_t)t * per, per, 0};
                ASSERT_OK(pthread_create(&th[t].thread, NULL, churn_submitter, &th[t]));
            }
            for (int t = 0; t < THREADS; t++)
                ASSERT_OK(pthread_join(th[t].thread, NULL));
            /* The group jobs are done; the detached ones are waited for by polling. */
            for (size_t i = 0; i < THREADS * per; i++) {
                while (atomic_load(&jobs[i].runs) == 0)
                    sched_yield();
            }
            for (size_t i = 0; i < THREADS * per; i++)
                ASSERT_EQ(atomic_load(&jobs[i].runs), 1);
        }
        ws_pool_destroy(pool);
        for (size_t i = 0; i < THREADS * per; i++)
            ASSERT_EQ(atomic_load(&jobs[i].runs), 1);
    }
    free(jobs);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    unsigned workers = argc > 2 ? (unsigned)atoi(argv[2]) : 2;
    if (strcmp(mode, "reuse") == 0)
        mode_reuse();
    else if (strcmp(mode, "trim") == 0)
        mode_trim();
    else if (strcmp(mode, "exit") == 0)
        mode_exit();
    else if (strcmp(mode, "churn") == 0)
        mode_churn(workers);
    else {
        fprintf(stderr, "usage: test_records reuse|trim|exit|churn [WORKERS]\n");
        return 2;
    }
    printf("test_records %s: ok\n", mode);
    return 0;
}
