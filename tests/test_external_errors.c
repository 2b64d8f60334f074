/* test_external_errors: the error returns and contract violations of submission.
 *
 * usage: test_external_errors CASE
 *   flags         unknown flag bits: ws_submit and ws_group_submit return EINVAL, from an
 *                 outside thread and from a worker; the function never runs, the group stays
 *                 empty (its wait returns), and the pool keeps working
 *   enomem        the record's allocation fails (ws__test_fail_alloc_after(1)): ENOMEM from
 *                 ws_submit and ws_group_submit, normal and high-priority, outside and on a
 *                 worker (where a normal group job would have gone to the worker's deque); the
 *                 function never runs, the group stays empty, the pool keeps working
 *   abort_submit, abort_group_submit
 *                 a NULL function aborts (SIGABRT) with a message on stderr naming the function;
 *                 run in a forked child
 */
#include "platform.h"
#include "test_external_util.h"

static atomic_ullong good_runs;

static void never_fn(void *arg)
{
    (void)arg;
    WS_TEST_FAIL("the function of a failed submission ran");
}

static void good_fn(void *arg)
{
    (void)arg;
    atomic_fetch_add(&good_runs, 1);
}

typedef struct err_ctx {
    ws_pool *pool;
    ws_group *group;
    int errors; /* checks done */
} err_ctx;

/* ---- flags -------------------------------------------------------------------------------- */

static void flags_checks(err_ctx *c)
{
    static const unsigned bad[] = {2u, 4u, 0x100u, 0x1000u, 1u << 31, WS_HIGH_PRIORITY | 2u, ~0u};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ASSERT_EQ(ws_submit(c->pool, never_fn, NULL, bad[i]), EINVAL);
        ASSERT_EQ(ws_group_submit(c->group, never_fn, NULL, bad[i]), EINVAL);
        c->errors += 2;
    }
}

static void flags_on_worker(void *arg)
{
    ASSERT(ws_worker_id() >= 0);
    flags_checks(arg);
}

/* After the failures: the group is empty (its wait returns at once), and the pool still runs
 * jobs of both kinds and both priorities. */
static void check_still_working(err_ctx *c)
{
    ws_group_wait(c->group);
    atomic_store(&good_runs, 0);
    ASSERT_OK(ws_submit(c->pool, good_fn, NULL, 0));
    ASSERT_OK(ws_submit(c->pool, good_fn, NULL, WS_HIGH_PRIORITY));
    ASSERT_OK(ws_group_submit(c->group, good_fn, NULL, 0));
    ASSERT_OK(ws_group_submit(c->group, good_fn, NULL, WS_HIGH_PRIORITY));
    ws_group_wait(c->group);
    ext_wait_at_least(&good_runs, 4, "the jobs submitted after the failures");
}

static void case_flags(void)
{
    ws_pool *pool = ext_pool(2, 0);
    ws_group g;
    ws_group_init(&g, pool);
    err_ctx c = {pool, &g, 0};
    flags_checks(&c);
    ASSERT_OK(ws_pool_run(pool, flags_on_worker, &c));
    check_still_working(&c);
    ws_pool_destroy(pool);
    printf("flags: %d submissions with unknown flags returned EINVAL and never ran\n", c.errors);
}

/* ---- enomem ------------------------------------------------------------------------------- */

static void enomem_checks(err_ctx *c)
{
    for (unsigned flags = 0; flags <= WS_HIGH_PRIORITY; flags++) {
        ws__test_fail_alloc_after(1);
        ASSERT_EQ(ws_submit(c->pool, never_fn, NULL, flags), ENOMEM);
        ws__test_fail_alloc_after(1);
        ASSERT_EQ(ws_group_submit(c->group, never_fn, NULL, flags), ENOMEM);
        ws__test_fail_alloc_after(0);
        c->errors += 2;
    }
}

static void enomem_on_worker(void *arg)
{
    ASSERT(ws_worker_id() >= 0);
    enomem_checks(arg);
}

static void case_enomem(void)
{
    ws_pool *pool = ext_pool(2, 0);
    ws_group g;
    ws_group_init(&g, pool);
    err_ctx c = {pool, &g, 0};
    enomem_checks(&c);
    ASSERT_OK(ws_pool_run(pool, enomem_on_worker, &c));
    check_still_working(&c);
    ws_pool_destroy(pool);
    printf("enomem: %d submissions whose allocation failed returned ENOMEM and never ran\n",
           c.errors);
}

/* ---- aborts ------------------------------------------------------------------------------- */

static void abort_submit_child(void *arg)
{
    (void)arg;
    ws_pool *pool = ext_pool(1, 0);
    int err = ws_submit(pool, NULL, NULL, 0);
    printf("ws_submit(NULL function) returned %d\n", err);
}

static void abort_group_child(void *arg)
{
    (void)arg;
    ws_pool *pool = ext_pool(1, 0);
    ws_group g;
    ws_group_init(&g, pool);
    int err = ws_group_submit(&g, NULL, NULL, 0);
    printf("ws_group_submit(NULL function) returned %d\n", err);
}

static void expect_abort(void (*fn)(void *), const char *function)
{
    sched_child ch;
    sched_run_child(&ch, fn, NULL);
    printf("child stderr: %s", ch.err);
    if (!WIFSIGNALED(ch.status) || WTERMSIG(ch.status) != SIGABRT)
        WS_TEST_FAIL("%s(NULL function): expected SIGABRT, got status %#x", function, ch.status);
    if (strstr(ch.err, function) == NULL)
        WS_TEST_FAIL("%s(NULL function): stderr does not name the function:\n%s", function, ch.err);
    printf("%s with a NULL function aborted with a message naming it\n", function);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2)
        WS_TEST_FAIL("usage: %s flags|enomem|abort_submit|abort_group_submit", argv[0]);
    const char *c = argv[1];
    if (strcmp(c, "flags") == 0)
        case_flags();
    else if (strcmp(c, "enomem") == 0)
        case_enomem();
    else if (strcmp(c, "abort_submit") == 0)
        expect_abort(abort_submit_child, "ws_submit");
    else if (strcmp(c, "abort_group_submit") == 0)
        expect_abort(abort_group_child, "ws_group_submit");
    else
        WS_TEST_FAIL("unknown case %s", c);
    return 0;
}
