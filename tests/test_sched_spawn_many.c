/* test_sched_spawn_many: one task spawns N children (10^6 by default), their ws_task records in
 * a heap array, before syncing any of them; then it syncs them in reverse order. The owner's
 * deque must grow while other workers steal from its top, and every child must run exactly
 * once: each child has its own counter and a magic value, and a child that runs twice, or not
 * at all before its ws_sync returns, fails the test.
 *
 * usage: test_sched_spawn_many [P [N]]   (defaults: 4 workers, 10^6 children)
 */
#include "test_sched_util.h"

#include <stdatomic.h>

#define MAGIC 0x5ca1ab1e0ddba11ULL

typedef struct child {
    uint64_t magic;
    size_t index;
    _Atomic uint32_t runs; /* times this child ran */
    _Atomic int worker;    /* the worker it ran on */
} child;

typedef struct job {
    size_t n;
    ws_task *tasks;
    child *kids;
    uint64_t seed;
    int spawner; /* worker id of the spawning task */
    size_t ran_elsewhere;
} job;

static _Atomic uint64_t stall_state;

static void child_fn(void *p)
{
    child *c = p;
    if (c->magic != MAGIC)
        WS_TEST_FAIL("child %zu: bad magic %#" PRIx64, c->index, c->magic);
    uint32_t before = atomic_fetch_add_explicit(&c->runs, 1, memory_order_relaxed);
    if (before != 0)
        WS_TEST_FAIL("child %zu ran twice", c->index);
    atomic_store_explicit(&c->worker, ws_worker_id(), memory_order_relaxed);
    /* A rare short stall, so that the thieves and the owner interleave in varied ways. */
    if ((c->index & 4095) == 0) {
        uint64_t s = atomic_fetch_add_explicit(&stall_state, 1, memory_order_relaxed);
        s = s * 0x9E3779B97F4A7C15ULL ^ c->index;
        volatile unsigned spin = (unsigned)(test_rand(&s) % 20000);
        while (spin > 0)
            spin--;
    }
}

static void spawner(void *p)
{
    job *j = p;
    j->spawner = ws_worker_id();
    for (size_t i = 0; i < j->n; i++)
        ws_spawn(&j->tasks[i], child_fn, &j->kids[i]);
    for (size_t i = j->n; i-- > 0;) {
        ws_sync(&j->tasks[i]);
        /* ws_sync returned: the child has finished, so its run is visible here. */
        uint32_t runs = atomic_load_explicit(&j->kids[i].runs, memory_order_relaxed);
        if (runs != 1)
            WS_TEST_FAIL("child %zu ran %u times when its ws_sync returned", i, runs);
        if (atomic_load_explicit(&j->kids[i].worker, memory_order_relaxed) != j->spawner)
            j->ran_elsewhere++;
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep the output in order with stderr on a failure */
    unsigned workers = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
    size_t n = argc > 2 ? (size_t)strtoull(argv[2], NULL, 0) : (size_t)1000000;
    ASSERT(workers >= 1 && workers <= WS_MAX_WORKERS);
    ASSERT(n >= 1);
    uint64_t seed = test_seed("test_sched_spawn_many");
    atomic_store(&stall_state, seed);

    job j = {n, NULL, NULL, seed, -1, 0};
    j.tasks = malloc(n * sizeof *j.tasks);
    j.kids = malloc(n * sizeof *j.kids);
    ASSERT(j.tasks != NULL && j.kids != NULL);
    for (size_t i = 0; i < n; i++) {
        j.kids[i].magic = MAGIC;
        j.kids[i].index = i;
        atomic_init(&j.kids[i].runs, 0);
        atomic_init(&j.kids[i].worker, -1);
    }

    ws_pool *pool = sched_pool(workers);
    ASSERT_OK(ws_pool_run(pool, spawner, &j));
    ASSERT(j.spawner >= 0 && j.spawner < (int)workers);
    for (size_t i = 0; i < n; i++)
        ASSERT_EQ(atomic_load(&j.kids[i].runs), 1);

    ws_stats st;
    ws_pool_stats(pool, &st);
    printf("P=%u N=%zu: spawns %" PRIu64 " steals %" PRIu64 " pops %" PRIu64 " inline_runs %" PRIu64
           " deque_growths %" PRIu64 " max_deque_depth %" PRIu64
           "; %zu children ran on another worker\n",
           workers, n, st.spawns, st.steals, st.pops, st.inline_runs, st.deque_growths,
           st.max_deque_depth, j.ran_elsewhere);
    /* A spawn onto a full deque (WS_SDEQUE_MAX_ITEMS items) runs the child at once. */
    ASSERT_GE(st.spawns + st.inline_runs, n);
    ASSERT_LE(st.steals, st.spawns);
    if (workers == 1)
        ASSERT_EQ(j.ran_elsewhere, 0);
    ws_pool_destroy(pool);
    free(j.tasks);
    free(j.kids);
    printf("ok\n");
    return 0;
}
