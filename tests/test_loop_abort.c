/* test_loop_abort.c: a NULL body, fold or combine is a contract violation: the call prints one
 * line on stderr naming the function and aborts. Each case runs in a forked child (before this
 * process starts any thread), whose stderr is captured through a pipe; the parent checks that
 * the child died of SIGABRT and that the message names the function.
 */
#include "test_loop_util.h"
#include "test_sched_util.h" /* sched_run_child */

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void noop_body(size_t begin, size_t end, void *ctx)
{
    (void)begin;
    (void)end;
    (void)ctx;
}

static void noop_fold(size_t begin, size_t end, void *acc, void *ctx)
{
    (void)begin;
    (void)end;
    (void)acc;
    (void)ctx;
}

static void noop_combine(void *acc, const void *right, void *ctx)
{
    (void)acc;
    (void)right;
    (void)ctx;
}

typedef enum {
    NULL_BODY,
    NULL_BODY_EMPTY_RANGE,
    NULL_FOLD,
    NULL_COMBINE,
    NULL_COMBINE_EMPTY_RANGE,
} violation;

static void commit(violation v)
{
    uint64_t zero = 0, out = 0;
    int rc = 0;
    switch (v) {
    case NULL_BODY:
        ws_parallel_for(0, 100, 0, NULL, NULL);
        break;
    case NULL_BODY_EMPTY_RANGE:
        ws_parallel_for(5, 5, 1, NULL, NULL);
        break;
    case NULL_FOLD:
        rc = ws_parallel_reduce(0, 100, 0, sizeof(zero), &zero, NULL, noop_combine, NULL, &out);
        break;
    case NULL_COMBINE:
        rc = ws_parallel_reduce(0, 100, 0, sizeof(zero), &zero, noop_fold, NULL, NULL, &out);
        break;
    case NULL_COMBINE_EMPTY_RANGE:
        rc = ws_parallel_reduce(3, 3, 0, sizeof(zero), &zero, noop_fold, NULL, NULL, &out);
        break;
    }
    (void)rc;
}

/* commit() with the violation passed through a pointer, for sched_run_child. */
static void commit_in_child(void *arg)
{
    commit(*(violation *)arg);
}

int main(void)
{
    static const struct {
        violation v;
        const char *function;
    } cases[] = {
        {NULL_BODY, "ws_parallel_for"},
        {NULL_BODY_EMPTY_RANGE, "ws_parallel_for"},
        {NULL_FOLD, "ws_parallel_reduce"},
        {NULL_COMBINE, "ws_parallel_reduce"},
        {NULL_COMBINE_EMPTY_RANGE, "ws_parallel_reduce"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        static sched_child child;
        violation v = cases[i].v;
        sched_run_child(&child, commit_in_child, &v);
        int status = child.status;
        const char *err = child.err;
        if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
            WS_TEST_FAIL("case %zu: the child was not killed by SIGABRT (status 0x%x), stderr: %s",
                         i, status, err);
        if (strstr(err, cases[i].function) == NULL)
            WS_TEST_FAIL("case %zu: stderr does not name %s: %s", i, cases[i].function, err);
        if (sched_count_lines(err) != 1 || err[strlen(err) - 1] != '\n')
            WS_TEST_FAIL("case %zu: expected exactly one line on stderr, got: %s", i, err);
        printf("case %zu: aborted with: %s", i, err);
    }
    /* The valid calls still work in this process. */
    ws_parallel_for(0, 100, 0, noop_body, NULL);
    printf("test_loop_abort: ok\n");
    return 0;
}
