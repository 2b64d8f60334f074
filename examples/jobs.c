/* jobs.c: a batch of independent jobs submitted from outside the pool and waited for as a group,
 * then one urgent job (WS_HIGH_PRIORITY), which runs before the normal jobs still queued.
 * Run: ./example_jobs [jobs] */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <worksteal.h>

static atomic_int finished; /* normal jobs done so far */
static int unfinished_when_urgent_ran = -1;
static int total_jobs;

static void job(void *arg)
{
    volatile unsigned x = (unsigned)(size_t)arg; /* a couple of microseconds of work */
    for (int i = 0; i < 2000; i++)
        x = x * 1103515245u + 12345u;
    atomic_fetch_add(&finished, 1);
}

static void urgent(void *arg)
{
    (void)arg;
    unfinished_when_urgent_ran = total_jobs - atomic_load(&finished);
}

int main(int argc, char **argv)
{
    total_jobs = argc > 1 ? atoi(argv[1]) : 20000;
    ws_pool *pool;
    ws_config config = {.workers = 4};
    int err = ws_pool_create(&pool, &config);
    if (err != 0) {
        fprintf(stderr, "ws_pool_create: %s\n", ws_strerror(err));
        return 1;
    }
    ws_group group;
    ws_group_init(&group, pool);
    for (int i = 0; i < total_jobs && err == 0; i++)
        err = ws_group_submit(&group, job, (void *)(size_t)i, 0);
    if (err == 0) /* submitted last, it runs before the normal jobs still waiting */
        err = ws_group_submit(&group, urgent, NULL, WS_HIGH_PRIORITY);
    ws_group_wait(&group); /* every job submitted so far has finished */
    if (err != 0)
        fprintf(stderr, "ws_group_submit: %s\n", ws_strerror(err));
    else
        printf("%d jobs, then an urgent one: all done; the urgent job, submitted last, ran while "
               "%d normal jobs were unfinished (high priority jumps the queue)\n",
               atomic_load(&finished), unfinished_when_urgent_ran);
    ws_pool_destroy(pool);
    return err != 0 || atomic_load(&finished) != total_jobs;
}
