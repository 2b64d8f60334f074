/* test_life_waits: waits run only the work they wait for, so an acyclic dependency cannot
 * deadlock and a chain of waits cannot grow a stack without bound.
 *
 * usage: test_life_waits WORKERS MODE
 *   acyclic  Job J1 (group G1) waits for group G2, whose job K is queued behind an unrelated
 *            job J3; J3 waits for G1, which holds J1. The dependencies are acyclic (J3 -> J1 ->
 *            K), but a wait that runs whatever the injector offers runs J3 on J1's stack, and J1
 *            can then return only after J3, which waits for J1: a deadlock. The other workers
 *            are held busy throughout, so only J1's worker and the spares can make progress.
 *            Checked: everything finishes, and J3 never runs on the thread of J1 while J1 waits.
 *   siblings N sibling jobs of one group, each submitting one WS_HIGH_PRIORITY job to a group of
 *            its own and waiting for it. A wait that runs its own deque's other jobs nests the
 *            siblings' waits on one stack (N = 100,000 overflowed 8 MiB). Checked: all finish,
 *            and no thread's stack held more than 64 KiB of these frames (the distance between
 *            the deepest and the shallowest sibling frame on one thread).
 */
#include "test_external_util.h"

#include <pthread.h>
#include <string.h>

/* ---- acyclic ----------------------------------------------------------------------------- */

typedef struct acyclic_run {
    ws_group g1, g2, g3;
    ext_gate busy;               /* holds the other workers */
    atomic_int j1_waiting;       /* J1 is inside ws_group_wait(G2) */
    atomic_int j1_done;          /* J1 returned from that wait */
    atomic_ullong queued;        /* J3 and K are queued: J1 may wait */
    _Atomic pthread_t j1_thread; /* the thread J1 runs on */
    atomic_int j3_on_j1_thread;  /* J3 ran nested in J1's wait */
    atomic_int k_ran, j3_ran;
} acyclic_run;

static void k_fn(void *arg)
{
    acyclic_run *r = arg;
    atomic_store(&r->k_ran, 1);
}

static void j3_fn(void *arg)
{
    acyclic_run *r = arg;
    if (pthread_equal(pthread_self(), atomic_load(&r->j1_thread)) && atomic_load(&r->j1_waiting) &&
        !atomic_load(&r->j1_done))
        atomic_store(&r->j3_on_j1_thread, 1);
    ws_group_wait(&r->g1); /* J1 is in G1 */
    atomic_store(&r->j3_ran, 1);
}

static void j1_fn(void *arg)
{
    acyclic_run *r = arg;
    atomic_store(&r->j1_thread, pthread_self());
    ext_wait_at_least(&r->queued, 1, "J3 and K to be queued");
    atomic_store(&r->j1_waiting, 1);
    ws_group_wait(&r->g2); /* K is in G2, behind J3 in the injector */
    atomic_store(&r->j1_done, 1);
}

static void mode_acyclic(unsigned workers)
{
    for (int trial = 0; trial < 3; trial++) {
        acyclic_run *r = calloc(1, sizeof *r);
        ASSERT(r != NULL);
        ws_pool *pool = ext_pool(workers, 0);
        ext_gate_init(&r->busy);
        for (unsigned i = 0; i + 1 < workers; i++)
            ASSERT_OK(ws_submit(pool, ext_gate_job, &r->busy, 0));
        ext_wait_at_least(&r->busy.arrived, workers - 1, "the other workers to be held");
        ws_group_init(&r->g1, pool);
        ws_group_init(&r->g2, pool);
        ws_group_init(&r->g3, pool);
        ASSERT_OK(ws_group_submit(&r->g1, j1_fn, r, 0));
        while (atomic_load(&r->j1_thread) == 0)
            sched_sleep_ms(1);
        ASSERT_OK(ws_group_submit(&r->g3, j3_fn, r, 0));
        ASSERT_OK(ws_group_submit(&r->g2, k_fn, r, 0));
        atomic_store(&r->queued, 1);
        ws_group_wait(&r->g3); /* hangs (and the timeout fails the test) on a deadlock */
        ws_group_wait(&r->g1);
        ws_group_wait(&r->g2);
        ASSERT_EQ(atomic_load(&r->k_ran), 1);
        ASSERT_EQ(atomic_load(&r->j3_ran), 1);
        ASSERT_EQ(atomic_load(&r->j1_done), 1);
        ASSERT_EQ(atomic_load(&r->j3_on_j1_thread), 0);
        ext_gate_open(&r->busy);
        ws_pool_destroy(pool);
        free(r);
    }
    printf("acyclic, %u workers: J1 -> K and J3 -> J1 finished, J3 never ran inside J1's wait\n",
           workers);
}

/* ---- siblings ---------------------------------------------------------------------------- */

enum { MAX_THREADS = 1024 };

typedef struct siblings_run {
    unsigned n;
    ws_group siblings;
    atomic_uint done;
    /* Per worker id: the highest and lowest address of a sibling's frame seen there. */
    _Atomic uintptr_t high[MAX_THREADS], low[MAX_THREADS];
} siblings_run;

static siblings_run *sib;
static ws_pool *sib_pool;

static void urgent_fn(void *arg)
{
    (void)arg;
    atomic_fetch_add(&sib->done, 1);
}

static void note_frame(siblings_run *r, uintptr_t at)
{
    int id = ws_worker_id();
    ASSERT(id >= 0 && id < MAX_THREADS);
    uintptr_t h = atomic_load(&r->high[id]);
    while (at > h && !atomic_compare_exchange_weak(&r->high[id], &h, at))
        ;
    uintptr_t l = atomic_load(&r->low[id]);
    while ((l == 0 || at < l) && !atomic_compare_exchange_weak(&r->low[id], &l, at))
        ;
}

static void sibling_fn(void *arg)
{
    siblings_run *r = arg;
    ws_group own;
    note_frame(r, (uintptr_t)&own);
    ws_group_init(&own, sib_pool);
    ASSERT_OK(ws_group_submit(&own, urgent_fn, NULL, WS_HIGH_PRIORITY));
    ws_group_wait(&own);
}

static void siblings_root(void *arg)
{
    siblings_run *r = arg;
    for (unsigned i = 0; i < r->n; i++)
        ASSERT_OK(ws_group_submit(&r->siblings, sibling_fn, r, 0));
    ws_group_wait(&r->siblings);
}

static void mode_siblings(unsigned workers)
{
    siblings_run *r = calloc(1, sizeof *r);
    ASSERT(r != NULL);
    sib = r;
    r->n = (unsigned)test_scaled(100000, 20000);
    ws_pool *pool = ext_pool(workers, 0);
    sib_pool = pool;
    ws_group_init(&r->siblings, pool);
    ASSERT_OK(ws_pool_run(pool, siblings_root, r));
    ASSERT_EQ(atomic_load(&r->done), r->n);
    uintptr_t deepest = 0;
    for (unsigned i = 0; i < MAX_THREADS; i++) {
        uintptr_t h = atomic_load(&r->high[i]), l = atomic_load(&r->low[i]);
        if (h != 0 && h - l > deepest)
            deepest = h - l;
    }
    printf("siblings, %u workers: %u waits on urgent jobs finished; sibling frames on one "
           "thread spanned at most %zu bytes of stack\n",
           workers, r->n, (size_t)deepest);
    ASSERT_LT(deepest, 64 * 1024);
    ws_pool_destroy(pool);
    free(r);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        WS_TEST_FAIL("usage: %s WORKERS acyclic|siblings", argv[0]);
    unsigned workers = (unsigned)strtoul(argv[1], NULL, 10);
    ASSERT(workers >= 1);
    if (strcmp(argv[2], "acyclic") == 0)
        mode_acyclic(workers);
    else if (strcmp(argv[2], "siblings") == 0)
        mode_siblings(workers);
    else
        WS_TEST_FAIL("unknown mode %s", argv[2]);
    printf("test_life_waits: ok\n");
    return 0;
}
