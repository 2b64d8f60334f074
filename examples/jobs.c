/* jobs.c: a batch of independent jobs submitted from outside, waited for as a group, with one
 * urgent job. Run: ./example_jobs */
#include <stdatomic.h>
#include <stdio.h>
#include <worksteal.h>

static atomic_int done;

static void job(void *arg)
{
    (void)arg;
    atomic_fetch_add(&done, 1);
}

static void urgent(void *arg)
{
    printf("urgent job ran after %d of the normal ones\n", atomic_load((atomic_int *)arg));
}

int main(void)
{
    ws_pool *pool;
    ws_config config = {.workers = 4};
    int err = ws_pool_create(&pool, &config);
    if (err != 0) {
        fprintf(stderr, "ws_pool_create: %s\n", ws_strerror(err));
        return 1;
    }
    ws_group group;
    ws_group_init(&group, pool);
    for (int i = 0; i < 100000 && err == 0; i++)
        err = ws_group_submit(&group, job, NULL, 0);
    if (err == 0)
        err = ws_group_submit(&group, urgent, &done, WS_HIGH_PRIORITY);
    ws_group_wait(&group); /* every job submitted so far has finished */
    printf("%d jobs done (%s)\n", atomic_load(&done), ws_strerror(err));
    ws_pool_destroy(pool);
    return err != 0;
}
