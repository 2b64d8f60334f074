/* bench.h: what the ws-bench driver (ws_bench.c) and its workloads (wl_*.c) share.
 *
 * A workload is a table of functions (wb_workload): prepare its input once, reset it before each
 * timed run, run it on one scheduler, check the answer. A run is told which scheduler to use by a
 * wb_runner: serial (plain functions, no runtime), the central-queue pool (central_pool.h),
 * worksteal (the library, linked as either deque variant), worksteal's typed tasks, OpenMP tasks,
 * or a peer runtime (peer.h: oneTBB, Rayon).
 *
 * Fine-grained workloads (fib, nqueens, the tree) write one version per scheduler, so that each
 * fork is that scheduler's own call and nothing else; worksteal has two there, one through
 * ws_join or ws_spawn/ws_sync and one through typed tasks (WS_TASK_n, WS_SPAWN/WS_SYNC).
 * Coarse-grained ones (the sorts, matrix multiply) fork through wb_fork2, whose switch on the
 * scheduler is noise next to their cutoffs.
 */
#ifndef WS_BENCH_H
#define WS_BENCH_H

#include "central_pool.h"
#include "mix64.h"
#include "peer.h"
#include "worksteal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum wb_sched {
    WB_SERIAL,   /* the plain functions */
    WB_CENTRAL,  /* central_pool.h */
    WB_WS,       /* worksteal, whichever deque this binary was linked with */
    WB_WS_STACK, /* worksteal's typed tasks, for the workloads that have that version */
    WB_OMP,      /* OpenMP tasks */
    WB_PEER,     /* another runtime (peer.h), for the workloads that have its version */
} wb_sched;

typedef struct wb_runner {
    wb_sched sched;
    unsigned workers;
    ws_pool *ws; /* WB_WS, WB_WS_STACK: a pool with `workers` workers */
    cq_pool *cq; /* WB_CENTRAL: a pool with `workers` workers */
    /* WB_WS: if not NULL, the root runs under ws_pool_profile, which fills this in */
    ws_profile *profile;
    const wb_peer *peer; /* WB_PEER: which one, and */
    void *peer_pool;     /* its pool of `workers` threads */
} wb_runner;

typedef struct wb_workload {
    const char *name;  /* the --workloads key */
    const char *title; /* one line: what it measures */
    long default_size; /* serial run of a fraction of a second on a 2-core machine */
    long quick_size;   /* --quick: a few milliseconds */
    /* Measure work and span (ws_pool_profile) even without --profile: the demo's evidence for a
     * claim about span. Only for coarse-grained workloads, where profiling is cheap. */
    bool profile_by_default;
    /* Has a version for the peers (wb_roots.peer): fib, nqueens and the tree. */
    bool has_peers;
    /* Has a version in typed tasks (wb_roots.ws_stack): fib, nqueens and the tree. */
    bool has_stack;
    /* Builds the input (untimed). NULL after a message on stderr if the size is unusable or
     * memory runs out. */
    void *(*prepare)(long size);
    /* One line describing the instance: size, task count. */
    void (*describe)(void *state, char *buf, size_t len);
    /* Restores the input before each timed run (untimed); NULL if nothing to do. */
    void (*reset)(void *state);
    /* The timed part. Returns 0, or an errno code if the scheduler refused the work. */
    int (*run)(void *state, const wb_runner *r);
    /* Verifies the last run; writes the answer (or what went wrong) into buf. */
    bool (*check)(void *state, char *buf, size_t len);
    void (*destroy)(void *state);
    /* The parallelism T1/Tinf the computation of this size has, as a range, where it is known
     * analytically (--profile prints it beside the measured one); NULL if it is not. */
    void (*expected_parallelism)(long size, double *low, double *high);
} wb_workload;

/* The workloads, in the order the demo shows them. */
extern const wb_workload wb_fib, wb_nqueens, wb_uts, wb_sort_seqmerge, wb_sort_parmerge,
    wb_quicksort, wb_matmul, wb_batch;

/* The root functions of one workload, one per scheduler, each called with the state. */
typedef struct wb_roots {
    ws_fn serial, central, ws, omp;
    /* The computation through a peer's functions (NULL if the workload has none). */
    void (*peer)(void *state, const wb_peer *peer);
    /* The computation as typed tasks, started from outside the pool with name_run (NULL if the
     * workload has none). */
    void (*ws_stack)(void *state, ws_pool *pool);
} wb_roots;

/* Runs the scheduler's root on r: a plain call, cq_pool_run, ws_pool_run, name_run of a stack
 * task, inside an OpenMP parallel region of r->workers threads, on one thread (omp single), or in
 * the peer's pool. 0, ws_pool_run's error, or ENOTSUP for a peer or typed tasks and a workload
 * without that version. */
int wb_run_root(const wb_runner *r, const wb_roots *roots, void *state);

/* Runs a(x) and b(y) as a fork-join on r's scheduler (b is the forked one); returns when both
 * are done. Called from inside a root run by wb_run_root. */
void wb_fork2(const wb_runner *r, ws_fn a, void *x, ws_fn b, void *y);

/* Monotonic time in seconds. */
double wb_now(void);

/* malloc that prints what failed; NULL on failure. */
void *wb_alloc(const char *what, size_t bytes);

#endif /* WS_BENCH_H */
