/* test_life_destroyed: a call on a pool after ws_pool_destroy returned is caught in a debug build.
 *
 * Each public function that takes a pool is called, in a child process, on a pool that was
 * created and destroyed: the child must abort with one line "worksteal: <function>: the pool
 * was destroyed ...". A debug build (CMAKE_BUILD_TYPE=Debug, WS_DEBUG in the library; the ASan
 * suite) keeps a destroyed pool's memory marked, in a quarantine; a release build frees it at
 * once, so there such a call reads freed memory and the test is skipped (exit 77) with the
 * reason (WS_TEST_LIB_DEBUG, tests/lifecycle.cmake). ws_submit on a destroyed pool used to
 * return ESHUTDOWN after reading freed memory.
 */
#include "test_sched_util.h"

#include <string.h>

static void nothing(void *arg)
{
    (void)arg;
}

static void *nothing_future(void *arg)
{
    return arg;
}

WS_TASK_1(int, typed_id, int, x)
{
    return x;
}

static ws_pool *destroyed_pool(void)
{
    ws_pool *pool;
    ASSERT_OK(ws_pool_create(&pool, &(ws_config){.workers = 1}));
    ws_pool_destroy(pool);
    return pool;
}

static void call_destroy(ws_pool *p)
{
    ws_pool_destroy(p);
}

static void call_workers(ws_pool *p)
{
    printf("%u\n", ws_pool_workers(p));
}

static void call_threads(ws_pool *p)
{
    printf("%u\n", ws_pool_threads(p));
}

static void call_run(ws_pool *p)
{
    printf("%d\n", ws_pool_run(p, nothing, NULL));
}

static void call_submit(ws_pool *p)
{
    printf("%d\n", ws_submit(p, nothing, NULL, 0));
}

static void call_future_submit(ws_pool *p)
{
    ws_future *f;
    printf("%d\n", ws_future_submit(&f, p, nothing_future, NULL));
}

static void call_group_init(ws_pool *p)
{
    ws_group g;
    ws_group_init(&g, p);
}

static void call_stats(ws_pool *p)
{
    ws_stats s;
    ws_pool_stats(p, &s);
}

static void call_profile(ws_pool *p)
{
    ws_profile prof;
    printf("%d\n", ws_pool_profile(p, nothing, NULL, &prof));
}

static void call_typed_run(ws_pool *p)
{
    printf("%d\n", typed_id_run(p, 1));
}

typedef struct use_case {
    const char *function;
    void (*call)(ws_pool *p);
} use_case;

static const use_case cases[] = {
    {"ws_pool_destroy", call_destroy},  {"ws_pool_workers", call_workers},
    {"ws_pool_threads", call_threads},  {"ws_pool_run", call_run},
    {"ws_submit", call_submit},         {"ws_future_submit", call_future_submit},
    {"ws_group_init", call_group_init}, {"ws_pool_stats", call_stats},
    {"ws_pool_profile", call_profile},  {"typed_id_run", call_typed_run},
};

static void child(void *arg)
{
    const use_case *c = arg;
    c->call(destroyed_pool());
}

int main(void)
{
    if (!WS_TEST_LIB_DEBUG) {
        printf("SKIP: a release build of the library frees a destroyed pool at once: only a "
               "debug build (CMAKE_BUILD_TYPE=Debug, as the ASan suite) catches a use of its "
               "handle\n");
        return 77;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sched_child c;
        memset(&c, 0, sizeof c);
        sched_run_child(&c, child, (void *)&cases[i]);
        char want[128];
        snprintf(want, sizeof want,
                 "worksteal: %s: the pool was destroyed (a handle is invalid "
                 "once ws_pool_destroy returns)\n",
                 cases[i].function);
        if (!WIFSIGNALED(c.status) || WTERMSIG(c.status) != SIGABRT || strcmp(c.err, want) != 0)
            WS_TEST_FAIL("%s on a destroyed pool: status 0x%x, want an abort with\n%sstderr:\n%s",
                         cases[i].function, (unsigned)c.status, want, c.err);
        printf("%s", c.err);
    }
    printf("test_life_destroyed: ok\n");
    return 0;
}
