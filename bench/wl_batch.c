/* wl_batch.c: a flat batch of tiny independent jobs, submitted one by one from outside the pool.
 *
 * This measures the external path, not fork-join: the driver's thread, which is no worker,
 * submits `size` jobs and waits for all of them (worksteal: ws_group_submit and ws_group_wait,
 * through the pool's FIFO injector; the central pool: cq_submit and cq_pool_wait; OpenMP: one
 * thread creating a task per job inside a single construct, the nearest equivalent). Each job
 * adds a hash of its slot's address to its slot, so the check catches a job that ran twice as
 * well as one that never ran.
 */
#include "bench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct batch_state {
    size_t n;
    uint64_t *slots;
    cq_task *cq_tasks; /* the central pool's records, one per job */
} batch_state;

static inline uint64_t batch_value(const uint64_t *slot)
{
    return wb_mix64((uint64_t)(uintptr_t)slot) | 1; /* never 0, so a missed job shows */
}

static void batch_job(void *arg)
{
    uint64_t *slot = arg;
    *slot += batch_value(slot);
}

static void run_omp(batch_state *s, unsigned workers)
{
    uint64_t *slots = s->slots;
    size_t n = s->n;
#pragma omp parallel num_threads(workers) firstprivate(slots, n)
    {
#pragma omp single
        {
            for (size_t i = 0; i < n; i++) {
#pragma omp task firstprivate(i)
                batch_job(&slots[i]);
            }
#pragma omp taskwait
        }
    }
}

static int run(void *p, const wb_runner *r)
{
    batch_state *s = p;
    switch (r->sched) {
    case WB_SERIAL:
        for (size_t i = 0; i < s->n; i++)
            batch_job(&s->slots[i]);
        return 0;
    case WB_CENTRAL:
        for (size_t i = 0; i < s->n; i++)
            cq_submit(r->cq, &s->cq_tasks[i], batch_job, &s->slots[i]);
        cq_pool_wait(r->cq);
        return 0;
    case WB_WS: {
        ws_group g;
        ws_group_init(&g, r->ws);
        int err = 0;
        for (size_t i = 0; i < s->n && err == 0; i++)
            err = ws_group_submit(&g, batch_job, &s->slots[i], 0);
        ws_group_wait(&g);
        return err;
    }
    case WB_OMP:
        run_omp(s, r->workers);
        return 0;
    case WB_WS_STACK:
    case WB_PEER:
        return ENOTSUP; /* no stack-task or peer version (has_stack, has_peers) */
    }
    return 0;
}

static void destroy(void *p)
{
    batch_state *s = p;
    if (!s)
        return;
    free(s->slots);
    free(s->cq_tasks);
    free(s);
}

static void *prepare(long size)
{
    if (size < 1 || size > 100000000) {
        fprintf(stderr, "ws-bench: batch: size must be 1..10^8 jobs, not %ld\n", size);
        return NULL;
    }
    batch_state *s = wb_alloc("batch", sizeof(*s));
    if (!s)
        return NULL;
    *s = (batch_state){.n = (size_t)size};
    s->slots = wb_alloc("batch slots", s->n * sizeof(*s->slots));
    s->cq_tasks = wb_alloc("batch records", s->n * sizeof(*s->cq_tasks));
    if (!s->slots || !s->cq_tasks) {
        destroy(s);
        return NULL;
    }
    memset(s->cq_tasks, 0, s->n * sizeof(*s->cq_tasks)); /* no page faults in the timed part */
    return s;
}

static void describe(void *p, char *buf, size_t len)
{
    batch_state *s = p;
    snprintf(buf, len, "batch: %zu tiny independent jobs submitted from a non-worker thread", s->n);
}

static void reset(void *p)
{
    batch_state *s = p;
    memset(s->slots, 0, s->n * sizeof(*s->slots));
}

static bool check(void *p, char *buf, size_t len)
{
    batch_state *s = p;
    for (size_t i = 0; i < s->n; i++) {
        uint64_t want = batch_value(&s->slots[i]);
        if (s->slots[i] != want) {
            snprintf(buf, len, "job %zu ran %s", i, s->slots[i] == 0 ? "never" : "more than once");
            return false;
        }
    }
    snprintf(buf, len, "every job ran once");
    return true;
}

const wb_workload wb_batch = {
    .name = "batch",
    .title = "a flat batch of tiny jobs submitted from outside: injector throughput",
    .default_size = 1000000,
    .quick_size = 10000,
    .prepare = prepare,
    .describe = describe,
    .reset = reset,
    .run = run,
    .check = check,
    .destroy = destroy,
};
