/* test_life_teardown: ws_pool_destroy runs everything, even work pushed during teardown by a
 * task that then blocks until that work has run.
 *
 * A job A submits a job J to a group from a worker (so J goes on A's worker's own deque, which
 * destroy does not count) and returns; destroy then finds no admitted work left and starts the
 * teardown while J runs. J waits until the other workers have had time to leave, spawns a child
 * onto its own deque, and blocks (ws_block_begin) until the child has run. Only a spare can run
 * the child. It used to hang: the other workers had left and the spare saw the exit flag and
 * quit. Checked: destroy returns, the child ran, and no thread is left.
 */
#include "test_external_util.h"

typedef struct teardown_run {
    ws_pool *pool;
    ws_group group;           /* J's group; nobody waits for it */
    atomic_ullong destroying; /* the main thread is about to call ws_pool_destroy */
    atomic_int child_ran;
    atomic_int j_done;
} teardown_run;

static void child_fn(void *arg)
{
    atomic_store(&((teardown_run *)arg)->child_ran, 1);
}

static void j_fn(void *arg)
{
    teardown_run *r = arg;
    ext_wait_at_least(&r->destroying, 1, "destroy to begin");
    sched_sleep_ms(30); /* long enough for the idle workers to see the exit and leave */
    ws_task child;
    ws_spawn(&child, child_fn, r);
    ws_block_begin();
    for (int i = 0; !atomic_load(&r->child_ran); i++) {
        if (i > 20000)
            WS_TEST_FAIL("the child pushed during teardown never ran");
        sched_sleep_ms(1);
    }
    ws_block_end();
    ws_sync(&child);
    atomic_store(&r->j_done, 1);
}

static void a_fn(void *arg)
{
    teardown_run *r = arg;
    ASSERT_OK(ws_group_submit(&r->group, j_fn, r, 0)); /* onto this worker's deque */
}

int main(void)
{
    int baseline = sched_thread_baseline();
    for (unsigned workers = 1; workers <= 4; workers *= 2) {
        teardown_run *r = calloc(1, sizeof *r);
        ASSERT(r != NULL);
        r->pool = ext_pool(workers, 0);
        ws_group_init(&r->group, r->pool);
        ASSERT_OK(ws_submit(r->pool, a_fn, r, 0));
        atomic_store(&r->destroying, 1);
        ws_pool_destroy(r->pool);
        ASSERT_EQ(atomic_load(&r->child_ran), 1);
        ASSERT_EQ(atomic_load(&r->j_done), 1);
        ASSERT_EQ(sched_wait_thread_count(baseline), baseline);
        printf("%u workers: destroy ran the child pushed during teardown and returned\n", workers);
        free(r);
    }
    printf("test_life_teardown: ok\n");
    return 0;
}
