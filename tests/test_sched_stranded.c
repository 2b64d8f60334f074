/* test_sched_stranded: work that a blocked worker holds must stay within reach of the other
 * threads (the spares it summons, the pool's other workers), or the program hangs.
 *
 * usage: test_sched_stranded publish|pool_run
 *   publish   on a pool of one worker, one task spawns N = 70,000 tasks (more than the
 *             deque's public part can count in its 16 bits), then blocks (ws_block_begin) in
 *             the kernel until all N have run: a spare must reach every one of them, the
 *             newest included.
 *   pool_run  on pool A of one worker and one spare, a task spawns two tasks, then calls
 * ws_pool_run on pool B, whose job waits for the second spawned task: the worker waiting in
 *             ws_pool_run must make its tasks public, as ws_block_begin does.
 * A hang is the failure; the ctest timeout is the guard.
 */
#include "test.h"
#include "worksteal.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

enum { N = 70000 };

typedef struct publish_run {
    ws_task *tasks;
    atomic_int ran[N];
    atomic_int count;
    pthread_mutex_t lock;
    pthread_cond_t all_ran;
} publish_run;

static publish_run *run;

static void count_one(void *p)
{
    atomic_int *ran = p;
    ASSERT_EQ(atomic_fetch_add(ran, 1), 0);
    if (atomic_fetch_add(&run->count, 1) + 1 == N) {
        pthread_mutex_lock(&run->lock);
        pthread_cond_signal(&run->all_ran);
        pthread_mutex_unlock(&run->lock);
    }
}

static void spawn_then_block(void *arg)
{
    (void)arg;
    for (int i = 0; i < N; i++)
        ws_spawn(&run->tasks[i], count_one, &run->ran[i]);
    ws_block_begin(); /* sleeps in the kernel until every task has run */
    pthread_mutex_lock(&run->lock);
    while (atomic_load(&run->count) < N)
        pthread_cond_wait(&run->all_ran, &run->lock);
    pthread_mutex_unlock(&run->lock);
    ws_block_end();
    for (int i = N; i-- > 0;)
        ws_sync(&run->tasks[i]);
}

static void test_publish(void)
{
    run = calloc(1, sizeof *run);
    ASSERT(run != NULL);
    run->tasks = calloc(N, sizeof *run->tasks);
    ASSERT(run->tasks != NULL);
    pthread_mutex_init(&run->lock, NULL);
    pthread_cond_init(&run->all_ran, NULL);
    ws_pool *pool;
    ws_config cfg = {.workers = 1};
    ASSERT_OK(ws_pool_create(&pool, &cfg));
    ASSERT_OK(ws_pool_run(pool, spawn_then_block, NULL));
    ASSERT_EQ(atomic_load(&run->count), N);
    for (int i = 0; i < N; i++)
        ASSERT_EQ(atomic_load(&run->ran[i]), 1);
    ws_pool_destroy(pool);
    pthread_cond_destroy(&run->all_ran);
    pthread_mutex_destroy(&run->lock);
    free(run->tasks);
    free(run);
}

typedef struct cross_run {
    ws_pool *a, *b;
    ws_task first, second;
    atomic_int first_ran, second_ran;
} cross_run;

static void mark(void *p)
{
    atomic_store((atomic_int *)p, 1);
}

/* The job on pool B: waits (yielding) until the second task spawned on pool A has run. */
static void wait_for_second(void *p)
{
    cross_run *r = p;
    while (atomic_load(&r->second_ran) == 0)
        sched_yield();
}

static void spawn_then_run_elsewhere(void *p)
{
    cross_run *r = p;
    ws_spawn(&r->first, mark, &r->first_ran);
    ws_spawn(&r->second, mark, &r->second_ran);
    ASSERT_OK(ws_pool_run(r->b, wait_for_second, r));
    ws_sync(&r->second);
    ws_sync(&r->first);
}

static void test_pool_run(void)
{
    cross_run r = {0};
    /* One spare: the deque's reserve (threads - 1) makes only the first task public at once. */
    ws_config one_spare = {.workers = 1, .max_spares = 1};
    ws_config one = {.workers = 1};
    ASSERT_OK(ws_pool_create(&r.a, &one_spare));
    ASSERT_OK(ws_pool_create(&r.b, &one));
    ASSERT_OK(ws_pool_run(r.a, spawn_then_run_elsewhere, &r));
    ASSERT_EQ(atomic_load(&r.first_ran), 1);
    ASSERT_EQ(atomic_load(&r.second_ran), 1);
    ws_pool_destroy(r.a);
    ws_pool_destroy(r.b);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 2) {
        fprintf(stderr, "usage: test_sched_stranded publish|pool_run\n");
        return 2;
    }
    if (strcmp(argv[1], "publish") == 0)
        test_publish();
    else if (strcmp(argv[1], "pool_run") == 0)
        test_pool_run();
    else
        return 2;
    printf("test_sched_stranded %s: ok\n", argv[1]);
    return 0;
}
