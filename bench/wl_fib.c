/* wl_fib.c: fib(n) with a fork-join at every level, no cutoff.
 *
 * Almost no work per task, so the time is the scheduler's cost per spawn and join: fib(n) makes
 * fib(n+1)-1 joins. Every version forks fib(n-2) and computes fib(n-1) itself.
 */
#include "../tests/profile_shapes.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct fib_state {
    int n;
    uint64_t result;
} fib_state;

typedef struct fib_arg {
    int n;
    uint64_t r;
} fib_arg;

/* ---- serial ---- */

static uint64_t fib_serial(int n)
{
    return n < 2 ? (uint64_t)n : fib_serial(n - 1) + fib_serial(n - 2);
}

static void root_serial(void *p)
{
    fib_state *s = p;
    s->result = fib_serial(s->n);
}

/* ---- worksteal ---- */

static void fib_ws(void *p)
{
    fib_arg *a = p;
    if (a->n < 2) {
        a->r = (uint64_t)a->n;
        return;
    }
    fib_arg x = {a->n - 1, 0}, y = {a->n - 2, 0};
    ws_join(fib_ws, &x, fib_ws, &y);
    a->r = x.r + y.r;
}

static void root_ws(void *p)
{
    fib_state *s = p;
    fib_arg a = {s->n, 0};
    fib_ws(&a);
    s->result = a.r;
}

/* ---- worksteal's typed tasks ---- */

WS_TASK_1(uint64_t, fib_stack, int, n)
{
    if (n < 2)
        return (uint64_t)n;
    WS_SPAWN(fib_stack, n - 2);
    uint64_t x = WS_CALL(fib_stack, n - 1);
    return x + WS_SYNC(fib_stack);
}

static void root_stack(void *p, ws_pool *pool)
{
    fib_state *s = p;
    s->result = fib_stack_run(pool, s->n);
}

/* ---- central queue ---- */

static void fib_cq(void *p)
{
    fib_arg *a = p;
    if (a->n < 2) {
        a->r = (uint64_t)a->n;
        return;
    }
    fib_arg x = {a->n - 1, 0}, y = {a->n - 2, 0};
    cq_task t;
    cq_spawn(&t, fib_cq, &y);
    fib_cq(&x);
    cq_sync(&t);
    a->r = x.r + y.r;
}

static void root_cq(void *p)
{
    fib_state *s = p;
    fib_arg a = {s->n, 0};
    fib_cq(&a);
    s->result = a.r;
}

/* ---- OpenMP tasks ---- */

static uint64_t fib_omp(int n)
{
    if (n < 2)
        return (uint64_t)n;
    uint64_t x, y;
#pragma omp task shared(y) firstprivate(n)
    y = fib_omp(n - 2);
    x = fib_omp(n - 1);
#pragma omp taskwait
    return x + y;
}

static void root_omp(void *p)
{
    fib_state *s = p;
    s->result = fib_omp(s->n);
}

/* ---- the peers (peer.h) ---- */

static void root_peer(void *p, const wb_peer *peer)
{
    fib_state *s = p;
    s->result = peer->fib(s->n);
}

/* ---- the workload ---- */

static const wb_roots roots = {root_serial, root_cq, root_ws, root_omp, root_peer, root_stack};

static uint64_t fib_iter(int n)
{
    uint64_t a = 0, b = 1;
    for (int i = 0; i < n; i++) {
        uint64_t t = a + b;
        a = b;
        b = t;
    }
    return a;
}

static void *prepare(long size)
{
    if (size < 1 || size > 60) {
        fprintf(stderr, "ws-bench: fib: size must be 1..60, not %ld\n", size);
        return NULL;
    }
    fib_state *s = wb_alloc("fib", sizeof(*s));
    if (s)
        *s = (fib_state){(int)size, 0};
    return s;
}

static void describe(void *p, char *buf, size_t len)
{
    fib_state *s = p;
    snprintf(buf, len, "fib(%d): a join at every level, %llu joins", s->n,
             (unsigned long long)(fib_iter(s->n + 1) - 1));
}

static void reset(void *p)
{
    ((fib_state *)p)->result = 0;
}

static int run(void *p, const wb_runner *r)
{
    return wb_run_root(r, &roots, p);
}

static bool check(void *p, char *buf, size_t len)
{
    fib_state *s = p;
    uint64_t want = fib_iter(s->n);
    if (s->result != want) {
        snprintf(buf, len, "got %llu, want %llu", (unsigned long long)s->result,
                 (unsigned long long)want);
        return false;
    }
    snprintf(buf, len, "fib(%d) = %llu", s->n, (unsigned long long)s->result);
    return true;
}

static void destroy(void *p)
{
    free(p);
}

/* The range of profile_shapes.h, which explains it: like phi^n / n. */
static void expected_parallelism(long size, double *low, double *high)
{
    shape_fib_parallelism((int)size, low, high);
}

const wb_workload wb_fib = {
    .name = "fib",
    .title = "fib(n), a join at every level: the cost of one spawn and join",
    .default_size = 35,
    .quick_size = 20,
    .has_peers = true,
    .has_stack = true,
    .prepare = prepare,
    .describe = describe,
    .reset = reset,
    .run = run,
    .check = check,
    .destroy = destroy,
    .expected_parallelism = expected_parallelism,
};
