/* test_group_unwaited.c: a C group that got jobs and was never waited for is reported by the
 * debug build of the library (src/group_check.c), and a group used correctly never is.
 *
 * usage: test_group_unwaited CASE
 *   destroy   a job submitted, no wait, the pool destroyed: one stderr line naming the group
 *             (debug builds), nothing otherwise;
 *   reinit    a job submitted and finished, no wait, ws_group_init again: a contract violation
 *             (debug builds; tests/group.cmake runs it in those only, since elsewhere it races
 *             with the worker settling the group's count);
 *   waited    the same with ws_group_wait, ws_group_try_wait, ws_group_timed_wait: no line.
 * WS_TEST_LIB_DEBUG is 1 when the library is the debug build (tests/group.cmake).
 */
#include "test.h"
#include "test_sched_util.h"
#include "worksteal.h"

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>

static atomic_int ran;

static void job(void *p)
{
    (void)p;
    atomic_fetch_add(&ran, 1);
}

/* Submits one job to g and waits until it has run, without a group wait. */
static void submit_and_let_run(ws_group *g)
{
    int before = atomic_load(&ran);
    ASSERT_OK(ws_group_submit(g, job, NULL, 0));
    while (atomic_load(&ran) == before)
        sched_yield();
}

static void destroy_unwaited(void *p)
{
    (void)p;
    ws_pool *pool = sched_pool(2);
    static ws_group g; /* static: the test itself must not leave a dead frame behind */
    ws_group_init(&g, pool);
    submit_and_let_run(&g);
    ws_pool_destroy(pool);
    printf("destroyed\n");
}

static void reinit_unwaited(void *p)
{
    (void)p;
    ws_pool *pool = sched_pool(2);
    static ws_group g;
    ws_group_init(&g, pool);
    submit_and_let_run(&g);
    ws_group_init(&g, pool);
    printf("initialised again\n");
    ws_group_wait(&g);
    ws_pool_destroy(pool);
}

static void all_waited(void *p)
{
    (void)p;
    ws_pool *pool = sched_pool(2);
    ws_group g;
    ws_group_init(&g, pool);
    submit_and_let_run(&g);
    ws_group_wait(&g);
    ws_group_init(&g, pool);
    submit_and_let_run(&g);
    while (ws_group_try_wait(&g) != 0)
        sched_yield();
    ws_group_init(&g, pool);
    submit_and_let_run(&g);
    ASSERT_OK(ws_group_timed_wait(&g, (uint64_t)test_hang_seconds(60) * 1000000000u));
    ws_group_init(&g, pool);
    ws_pool_destroy(pool);
    printf("done\n");
}

static sched_child run(void (*fn)(void *), const char *what)
{
    sched_child ch;
    sched_run_child(&ch, fn, NULL);
    printf("%s: status 0x%x, stdout: %s, stderr: %s", what, (unsigned)ch.status, ch.out,
           ch.err[0] != '\0' ? ch.err : "(nothing)\n");
    return ch;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *c = argc > 1 ? argv[1] : "";
    if (strcmp(c, "destroy") == 0) {
        sched_child ch = run(destroy_unwaited, "destroyed unwaited");
        sched_expect_clean_exit(&ch, "destroy");
        ASSERT(strstr(ch.out, "destroyed") != NULL);
        if (WS_TEST_LIB_DEBUG) {
            ASSERT_EQ(sched_count_lines(ch.err), 1);
            ASSERT(strstr(ch.err, "worksteal: ws_pool_destroy: the group at ") == ch.err);
            ASSERT(strstr(ch.err, "never waited for") != NULL);
        } else {
            ASSERT(ch.err[0] == '\0');
        }
    } else if (strcmp(c, "reinit") == 0) {
        sched_child ch = run(reinit_unwaited, "initialised again unwaited");
        if (WS_TEST_LIB_DEBUG) {
            ASSERT(WIFSIGNALED(ch.status) && WTERMSIG(ch.status) == SIGABRT);
            ASSERT(strstr(ch.err, "worksteal: ws_group_init: a group that got jobs and was never "
                                  "waited for") == ch.err);
        } else {
            sched_expect_clean_exit(&ch, "reinit");
            ASSERT(ch.err[0] == '\0');
        }
    } else if (strcmp(c, "waited") == 0) {
        sched_child ch = run(all_waited, "waited each time");
        sched_expect_clean_exit(&ch, "waited");
        ASSERT(strstr(ch.out, "done") != NULL);
        ASSERT(ch.err[0] == '\0');
    } else {
        fprintf(stderr, "usage: %s destroy|reinit|waited\n", argv[0]);
        return 2;
    }
    printf("ok\n");
    return 0;
}
