/* profile_pool.c: ws_pool_profile, which measures the work and span of one computation on a
 * pool (the measurement itself is profile.c's), and the speed-up bounds read from the result.
 *
 * While it runs, every worker of the pool is in the profiled mode: its fork-join fast path is
 * closed, so that every join and spawn takes join.c's general path, where the instrumentation
 * is. One profile at a time per pool; a task of the pool cannot profile its own pool.
 */
#include "internal.h"
#include "profile.h"

#include <errno.h>
#include <string.h>

/* Opens (on) or closes (off) the fork-join fast path of every worker slot. */
static void set_slow_mode(ws_pool *pool, bool on)
{
    ws_for_each_worker (pool, w) {
        /* relaxed: the root's injection (a release) publishes these to the workers that run
         * the profiled computation; a worker busy with other work may see them late, which
         * only delays when its own joins become instrumented. */
        ws_store_relaxed(&w->profiling, on ? 1u : 0u);
        /* Sends the worker's next join to the general path, which is instrumented while
         * profiling and, when profiling is off again, recomputes the limit itself. */
        ws__wdeque_force_slow(&w->deque);
        ws__frames_close(w); /* and its next stack spawn (frames.c) */
    }
}

typedef struct root_ctx {
    ws_fn fn;
    void *arg;
    unsigned pool_serial;
    ws__prof_slot slot;
} root_ctx;

static void profiled_root(void *p)
{
    root_ctx *r = p;
    ws__prof_enter_pool(r->pool_serial);
    ws__prof_run_child(r->fn, r->arg, &r->slot);
}

int ws_pool_profile(ws_pool *pool, ws_fn fn, void *arg, ws_profile *out)
{
    if (pool == NULL || fn == NULL)
        ws__contract_violation("ws_pool_profile", "NULL pool or function");
    ws__pool_check_live(pool, "ws_pool_profile");
    if (out == NULL)
        return EINVAL;
    ws__worker *w = ws__tls_worker;
    if (w != NULL && w->pool == pool)
        return EINVAL; /* a task of the pool cannot stop the pool to measure it */
    uint32_t idle = 0;
    /* acq_rel: one profile at a time per pool. */
    if (!ws_cas_acq_rel(&pool->profiling, &idle, 1u))
        return EBUSY;
    ws_stats before, after;
    double overhead_ns = ws__prof_calibrate();
    ws_pool_stats(pool, &before);
    set_slow_mode(pool, true);
    root_ctx r = {fn, arg, pool->serial, {0}};
    uint64_t t0 = ws__now_ns();
    int err = ws_pool_run(pool, profiled_root, &r);
    uint64_t t1 = ws__now_ns();
    set_slow_mode(pool, false);
    ws_pool_stats(pool, &after);
    ws_store_release(&pool->profiling, 0u); /* release: pairs with the CAS above */
    if (err != 0)
        return err;
    memset(out, 0, sizeof *out);
    out->work_s = (double)r.slot.work * 1e-9;
    out->span_s = (double)r.slot.span * 1e-9;
    out->burdened_span_s = (double)r.slot.bspan * 1e-9;
    out->parallelism = r.slot.span > 0 ? (double)r.slot.work / (double)r.slot.span : 1.0;
    out->elapsed_s = (double)(t1 - t0) * 1e-9;
    out->steals = after.steals - before.steals;
    out->strands = r.slot.strands;
    out->overhead_per_strand_s = overhead_ns * 1e-9;
    out->stall_free_work_s = (double)r.slot.free_work * 1e-9;
    out->stall_free_span_s = (double)r.slot.free_span * 1e-9;
    out->stall_free_parallelism =
        r.slot.free_span > 0 ? (double)r.slot.free_work / (double)r.slot.free_span : 1.0;
    out->stalls = r.slot.stalled;
    out->stall_clock = ws__prof_uses_cycles() ? 1u : 0u;
    return 0;
}

double ws_profile_speedup_bound(const ws_profile *p, unsigned workers)
{
    double bound = p->parallelism;
    return (double)workers < bound ? (double)workers : bound;
}

double ws_profile_burdened_speedup(const ws_profile *p, unsigned workers)
{
    if (p->work_s <= 0 || workers == 0)
        return 1.0;
    double t = p->work_s / workers + p->burdened_span_s;
    return p->work_s / t;
}
