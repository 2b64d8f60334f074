/* test_stats_report: the WS_STATS=1 report names each pool as the trace does ("pool N", in
 * creation order) and counts only the spare workers that ran: its heading's count ("K spares
 * ran", absent when none did) equals the spare columns of its table, and a pool where a task
 * blocked with ws_block_begin reports at least one.
 */
#include "test_sched_util.h"

static void blocking_task(void *arg)
{
    (void)arg;
    ws_block_begin(); /* the pool starts a spare to keep its two workers busy meanwhile */
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    ws_block_end();
}

/* In the child: two pools, each destroyed with WS_STATS=1; only the second blocks. */
static void two_pools(void *arg)
{
    (void)arg;
    ASSERT_OK(setenv("WS_STATS", "1", 1));
    ws_pool *plain = sched_pool(2);
    sched_check_fib_on(plain, 18);
    ws_pool_destroy(plain);
    ws_pool *blocking = sched_pool(2);
    ASSERT_OK(ws_pool_run(blocking, blocking_task, NULL));
    ws_pool_destroy(blocking);
}

/* The number of spare columns in the table header that follows the heading `heading`. */
static unsigned spare_columns(const char *err, const char *heading)
{
    const char *p = strstr(err, heading);
    ASSERT(p != NULL);
    const char *header = strchr(p, '\n');
    ASSERT(header != NULL);
    unsigned n = 0;
    for (const char *q = header + 1; *q != '\0' && *q != '\n'; q++)
        n += strncmp(q, "spare", 5) == 0;
    return n;
}

/* The spares a heading says ran: 0 without ", K spare(s) ran". */
static unsigned spares_in_heading(const char *heading)
{
    const char *p = strstr(heading, ", ");
    unsigned k = 0;
    if (p == NULL)
        return 0;
    ASSERT(sscanf(p, ", %u spare", &k) == 1);
    return k;
}

/* The line of s that contains `what`, or NULL; copied into buf. */
static const char *line_with(const char *s, const char *what, char *buf, size_t len)
{
    const char *p = strstr(s, what);
    if (p == NULL)
        return NULL;
    while (p > s && p[-1] != '\n')
        p--;
    size_t n = strcspn(p, "\n");
    snprintf(buf, len, "%.*s", (int)n, p);
    return buf;
}

int main(void)
{
    sched_child c;
    sched_run_child(&c, two_pools, NULL);
    sched_expect_clean_exit(&c, "two pools with WS_STATS=1");
    printf("child's stderr:\n%s", c.err);
    char first[256], second[256];
    if (line_with(c.err, "statistics of pool 1 ", first, sizeof first) == NULL ||
        line_with(c.err, "statistics of pool 2 ", second, sizeof second) == NULL)
        WS_TEST_FAIL("expected reports headed \"statistics of pool 1\" and \"pool 2\"");
    const char *want = "worksteal: statistics of pool 1 (2 workers";
    if (strncmp(first, want, strlen(want)) != 0)
        WS_TEST_FAIL("first pool: got \"%s\"", first);
    ASSERT_EQ(spares_in_heading(first), spare_columns(c.err, first));
    ASSERT_EQ(spares_in_heading(second), spare_columns(c.err, second));
    if (spares_in_heading(second) < 1)
        WS_TEST_FAIL("second pool, a task blocked: expected a spare that ran, got \"%s\"", second);
    return 0;
}
