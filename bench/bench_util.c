/* bench_util.c: the scheduler dispatch shared by the workloads (see bench.h). */
#include "bench.h"

#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* A workload's peer root and what it is called with, as one argument for the peer's run(). */
typedef struct peer_root {
    void (*root)(void *state, const wb_peer *peer);
    void *state;
    const wb_peer *peer;
} peer_root;

static void call_peer_root(void *p)
{
    const peer_root *c = p;
    c->root(c->state, c->peer);
}

int wb_run_root(const wb_runner *r, const wb_roots *roots, void *state)
{
    switch (r->sched) {
    case WB_SERIAL:
        roots->serial(state);
        return 0;
    case WB_CENTRAL:
        cq_pool_run(r->cq, roots->central, state);
        return 0;
    case WB_WS:
        if (r->profile)
            return ws_pool_profile(r->ws, roots->ws, state, r->profile);
        return ws_pool_run(r->ws, roots->ws, state);
    case WB_WS_STACK:
        if (roots->ws_stack == NULL)
            return ENOTSUP;
        roots->ws_stack(state, r->ws);
        return 0;
    case WB_OMP: {
        ws_fn root = roots->omp;
#pragma omp parallel num_threads(r->workers) firstprivate(root, state)
        {
#pragma omp single
            root(state);
        }
        return 0;
    }
    case WB_PEER: {
        if (roots->peer == NULL)
            return ENOTSUP;
        peer_root c = {roots->peer, state, r->peer};
        r->peer->run(r->peer_pool, call_peer_root, &c);
        return 0;
    }
    }
    return 0;
}

void wb_fork2(const wb_runner *r, ws_fn a, void *x, ws_fn b, void *y)
{
    switch (r->sched) {
    case WB_SERIAL:
        a(x);
        b(y);
        return;
    case WB_CENTRAL: {
        cq_task t;
        cq_spawn(&t, b, y);
        a(x);
        cq_sync(&t);
        return;
    }
    case WB_WS:
    case WB_WS_STACK: /* not reached: the coarse workloads have no stack-task version */
        ws_join(a, x, b, y);
        return;
    case WB_OMP:
#pragma omp task firstprivate(b, y)
        b(y);
        a(x);
#pragma omp taskwait
        return;
    case WB_PEER: /* not reached: the peers run only their own versions (wb_roots.peer) */
        a(x);
        b(y);
        return;
    }
}

double wb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void *wb_alloc(const char *what, size_t bytes)
{
    void *p = malloc(bytes);
    if (!p)
        fprintf(stderr, "ws-bench: out of memory allocating %zu bytes for %s\n", bytes, what);
    return p;
}
