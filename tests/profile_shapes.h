/* profile_shapes.h: fork-join computations whose work and span are known, for the profiler's
 * test (tests/test_profile.c) and its benchmark (bench/profile_shapes.c). Header-only (static
 * functions), so that each program stays one file.
 *
 * Strands that do work busy-wait until their thread has used a set amount of CPU time, so that a
 * strand's work does not depend on how often the machine preempts it.
 */
#ifndef WS_PROFILE_SHAPES_H
#define WS_PROFILE_SHAPES_H

#include "worksteal.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

static inline uint64_t shape_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t shape_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The thread's context switches so far (0 where the count is unknown). */
static inline uint64_t shape_switches(void)
{
#ifdef RUSAGE_THREAD
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) == 0)
        return (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
#endif
    return 0;
}

/* What the working strands took, summed over every thread: their CPU time and their time on the
 * monotonic clock. The second is longer when the host of a virtual machine takes the virtual
 * CPU away, for milliseconds at a time when it is busy (steal time): the guest's clocks go on
 * and no thread of the guest is switched out, so the profiler counts that time as the strand's,
 * as it must (no clock of the thread tells it apart). The test holds the profiler's figures to
 * the time strands really took (shape_spins_since). A strand whose thread was switched out is
 * counted at its CPU time: the profiler takes such a loss out, and the test checks that it does.
 * Relaxed: read after ws_pool_profile has returned, whose completion orders every strand's
 * additions before it. Kept only when shape_spins_counted is set (tests/test_profile.c): the
 * account's clock reads and system calls lengthen each strand by about a microsecond, which
 * bench/profile_shapes, which holds short strands to their nominal length, leaves out. */
static bool shape_spins_counted;
typedef struct shape_spins {
    uint64_t cpu_ns, wall_ns;
} shape_spins;
static _Atomic uint64_t shape_spin_cpu_ns, shape_spin_wall_ns;

static inline shape_spins shape_spins_now(void)
{
    shape_spins s = {atomic_load_explicit(&shape_spin_cpu_ns, memory_order_relaxed),
                     atomic_load_explicit(&shape_spin_wall_ns, memory_order_relaxed)};
    return s;
}

/* How much longer than their CPU time the strands took since `from`: 1 when the host took
 * nothing (or nothing worked). */
static inline double shape_spins_since(shape_spins from)
{
    shape_spins to = shape_spins_now();
    uint64_t cpu = to.cpu_ns - from.cpu_ns, wall = to.wall_ns - from.wall_ns;
    return cpu > 0 && wall > cpu ? (double)wall / (double)cpu : 1.0;
}

/* The virtual mode of tests/test_profile_exact.c: work advances the calling thread's clock
 * (shape_virtual_now, which the profiler reads there) by exactly its amount, without running. */
static bool shape_virtual;
static _Thread_local uint64_t shape_virtual_now;

/* Works until the thread has used ns of CPU time; no time at all for 0 (each clock read is a
 * system call of about 0.7 us, which would make an empty inner node a strand of 1.4 us). */
static inline void shape_work_for(uint64_t ns)
{
    if (shape_virtual) {
        shape_virtual_now += ns;
        return;
    }
    if (ns == 0)
        return;
    bool counted = shape_spins_counted;
    uint64_t switches = counted ? shape_switches() : 0;
    uint64_t wall0 = counted ? shape_wall_ns() : 0, cpu0 = shape_cpu_ns(), cpu;
    while ((cpu = shape_cpu_ns()) < cpu0 + ns) {
    }
    if (!counted)
        return;
    uint64_t wall = shape_wall_ns() - wall0;
    if (shape_switches() != switches)
        wall = cpu - cpu0;
    atomic_fetch_add_explicit(&shape_spin_cpu_ns, cpu - cpu0, memory_order_relaxed);
    atomic_fetch_add_explicit(&shape_spin_wall_ns, wall, memory_order_relaxed);
}

static inline void shape_nothing(void *arg)
{
    (void)arg;
}

/* A serial chain: each level works strand_ns, then joins the next level with an empty sibling.
 * Span = work (up to the empty siblings), parallelism 1. */
typedef struct shape_chain_arg {
    int n;
    uint64_t strand_ns;
} shape_chain_arg;

static inline void shape_chain(void *p)
{
    const shape_chain_arg *c = p;
    if (c->strand_ns > 0)
        shape_work_for(c->strand_ns);
    if (c->n == 0)
        return;
    shape_chain_arg next = {c->n - 1, c->strand_ns};
    ws_join(shape_chain, &next, shape_nothing, NULL);
}

/* A balanced binary tree of the given depth: each inner node works node_ns, then forks its two
 * subtrees (by ws_join, or by two ws_spawn and their ws_sync); each leaf works leaf_ns.
 * T1 = (2^d - 1) node + 2^d leaf, T-infinity = d node + leaf (plus the join strands). */
typedef struct shape_tree_arg {
    int depth;
    uint64_t node_ns, leaf_ns;
} shape_tree_arg;

static inline void shape_tree_join(void *p)
{
    const shape_tree_arg *t = p;
    shape_work_for(t->depth == 0 ? t->leaf_ns : t->node_ns);
    if (t->depth == 0)
        return;
    shape_tree_arg c = {t->depth - 1, t->node_ns, t->leaf_ns};
    ws_join(shape_tree_join, &c, shape_tree_join, &c);
}

static inline void shape_tree_spawn(void *p)
{
    const shape_tree_arg *t = p;
    shape_work_for(t->depth == 0 ? t->leaf_ns : t->node_ns);
    if (t->depth == 0)
        return;
    shape_tree_arg c = {t->depth - 1, t->node_ns, t->leaf_ns};
    ws_task left, right;
    ws_spawn(&left, shape_tree_spawn, &c);
    ws_spawn(&right, shape_tree_spawn, &c);
    ws_sync(&right);
    ws_sync(&left);
}

/* A fan: one frame spawns SHAPE_FAN children working 1, 2, ..., SHAPE_FAN times
 * SHAPE_FAN_STEP_NS and syncs them. T-infinity = the longest child, SHAPE_FAN steps;
 * T1 = SHAPE_FAN (SHAPE_FAN + 1) / 2 steps; parallelism (SHAPE_FAN + 1) / 2. */
enum { SHAPE_FAN = 8 };
#define SHAPE_FAN_STEP_NS 50000u

static inline void shape_fan_child(void *p)
{
    shape_work_for(*(const uint64_t *)p);
}

static inline void shape_fan(void *p)
{
    (void)p;
    ws_task t[SHAPE_FAN];
    uint64_t ns[SHAPE_FAN];
    for (int i = 0; i < SHAPE_FAN; i++) {
        ns[i] = (uint64_t)(i + 1) * SHAPE_FAN_STEP_NS;
        ws_spawn(&t[i], shape_fan_child, &ns[i]);
    }
    for (int i = SHAPE_FAN - 1; i >= 0; i--)
        ws_sync(&t[i]);
}

/* fib(n) with a join per call and no cutoff. It makes I = fib(n+1) - 1 inner calls (a join, two
 * strands each) and L = fib(n+1) leaves (one strand). If an inner call's strands cost c_i and a
 * leaf's c_l <= c_i, T1 = I c_i + L c_l and the longest path, fib(n), fib(n-1), ..., fib(2),
 * fib(1), is (n-1) c_i + c_l: the parallelism lies between I / (n-1) and (I + L) / n. */
typedef struct shape_fib_arg {
    int n;
    long r;
} shape_fib_arg;

static inline void shape_fib(void *p)
{
    shape_fib_arg *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return;
    }
    shape_fib_arg x = {a->n - 1, 0}, y = {a->n - 2, 0};
    ws_join(shape_fib, &x, shape_fib, &y);
    a->r = x.r + y.r;
}

/* A group job is no part of the DAG: one submitted inside a join's first half, which the join
 * runs while it waits for the second half (or a thief does), and one still pending at the
 * frame's ws_group_wait (on 1 worker, the wait runs it). The job works 2 ms and joins; none of
 * it, nor the wait, may reach the measured frame. */
typedef struct shape_group_ctx {
    ws_group group;
    int err;
} shape_group_ctx;

static inline void shape_group_job(void *p)
{
    (void)p;
    shape_work_for(2000000);
    ws_join(shape_nothing, NULL, shape_nothing, NULL);
}

static inline void shape_submit_group_job(void *p)
{
    shape_group_ctx *g = p;
    g->err = ws_group_submit(&g->group, shape_group_job, NULL, 0);
}

static inline void shape_join_over_group_job(void *p)
{
    shape_group_ctx *g = p;
    ws_join(shape_submit_group_job, g, shape_nothing, NULL);
    ws_group_wait(&g->group);
}

static inline void shape_wait_for_group_job(void *p)
{
    shape_group_ctx *g = p;
    shape_submit_group_job(g);
    ws_group_wait(&g->group);
}

/* The range of fib(n)'s parallelism above. */
static inline void shape_fib_parallelism(int n, double *low, double *high)
{
    double a = 0, b = 1; /* fib(0), fib(1) */
    for (int i = 0; i < n; i++) {
        double c = a + b;
        a = b;
        b = c;
    } /* b = fib(n + 1) */
    *low = n > 1 ? (b - 1) / (n - 1) : 1;
    *high = n > 1 ? (2 * b - 1) / n : 1;
}

#endif /* WS_PROFILE_SHAPES_H */
