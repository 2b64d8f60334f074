/* profile.c: work and span measurement (ws_pool_profile).
 *
 * The measured computation is a series-parallel DAG of strands: pieces of serial code between
 * fork-join events. Each running function instance has a frame (on the C stack, found through a
 * thread-local pointer) that accumulates, for the part of the DAG it has executed so far:
 *   work   the sum of its strands' times and of its children's work (T1);
 *   span   the longest path through it (T-infinity);
 *   bspan  the burdened span: the span where every path through a stolen child also carries the
 *          measured cost of that steal (see steal_cost).
 * A strand's time is added to work, span and bspan alike. The fork-join events combine:
 *   ws_join(a, b)    work += work(a) + work(b); span += max(span(a), span(b));
 *                    bspan += max(bspan(a), bspan(b) + steal cost of b, if b was stolen).
 *   ws_spawn(t)      remembers span and bspan at the spawn point, in a slot for t.
 *   ws_sync(t)       work += work(t); span = max(span, span at spawn + span(t)); same for bspan.
 * A child runs in a fresh frame wherever it runs (inline at the join or sync, or on a thief),
 * and its totals travel back to the parent in a slot (ws__prof_slot) that the task points to;
 * the thief fills it before completing the task, and the completion's release publishes it.
 * Time spent waiting for a stolen child, looking for work or parked belongs to no strand.
 *
 * Strands are timed with the thread's CPU-time clock, so time a thread spends preempted by
 * other programs is not counted as work: profiles are stable on a loaded machine, where the
 * wall clock let a single preempted strand add a whole time slice (milliseconds) to the span.
 * The price is a system call per clock read (about 0.4 us here; the monotonic clock costs 20 ns
 * through the vDSO). A strand is charged about one read, so for very fine-grained code (a few
 * ns per strand, like fib without a cutoff) the work is overestimated and profiling is slow,
 * while the shape, and so the parallelism, stays right. Steal costs, which are latencies, are
 * timed with the monotonic clock.
 *
 * This is the measurement of Cilkview and Cilkscale (He, Leiserson and Leiserson, "The Cilkview
 * scalability analyzer", SPAA 2010), done by the runtime instead of compiler instrumentation,
 * with timers instead of instruction counts. The figures are those of the DAG, independent of
 * how the run was scheduled, up to timer noise and the instrumentation's own cost (two clock
 * reads per event, charged to no strand).
 *
 * Cost when not profiling: none on the fork-join fast path. Profiling sets every worker's
 * depth_limit to 0, which sends every join to join.c's general path, where the instrumentation
 * is; ws_spawn and ws_sync test one per-worker flag.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>

typedef struct ws__frame {
    uint64_t work, span, bspan;
    uint64_t strand_start; /* ws__thread_cpu_ns() at the start of the current strand */
} ws__frame;

/* The frame of the function instance running on this thread, NULL when not profiling. */
static _Thread_local ws__frame *cur_frame WS_TLS_FAST;

static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

bool ws__prof_active(void)
{
    return cur_frame != NULL;
}

void ws__prof_strand_end(void)
{
    ws__frame *f = cur_frame;
    if (f == NULL)
        return;
    uint64_t d = ws__thread_cpu_ns() - f->strand_start;
    f->work += d;
    f->span += d;
    f->bspan += d;
    ws__worker *w = ws__tls_worker;
    if (w != NULL)
        ws__count(w, strands, 1);
}

void ws__prof_strand_begin(void)
{
    if (cur_frame != NULL)
        cur_frame->strand_start = ws__thread_cpu_ns();
}

void ws__prof_run_child(ws_fn fn, void *arg, ws__prof_slot *slot)
{
    ws__frame *parent = cur_frame;
    slot->start_ns = ws__now_ns();
    ws__frame f = {0, 0, 0, ws__thread_cpu_ns()};
    cur_frame = &f;
    fn(arg);
    ws__prof_strand_end();
    cur_frame = parent;
    slot->work = f.work;
    slot->span = f.span;
    slot->bspan = f.bspan;
}

static uint64_t elapsed(uint64_t from, uint64_t to)
{
    return to > from ? to - from : 0;
}

/* The steal cost charged to the burdened span: what the thief spent from the start of its
 * successful steal attempt to starting the child (the steal itself, and the cache misses on the
 * task record). Not the time the child sat in the deque before a thief came, nor the time the
 * parent spent on other work after the child finished: those come from this run's schedule,
 * not from the DAG, and charging them made the burdened span of an irregular tree larger than
 * its work. */
static uint64_t steal_cost(const ws__prof_slot *slot, bool stolen)
{
    if (!stolen || slot->steal_ns == 0)
        return 0;
    return elapsed(slot->steal_ns, slot->start_ns);
}

void ws__prof_mark_stolen(ws__worker *w, ws__prof_slot *slot)
{
    slot->steal_ns = w->steal_begin_ns;
}

void ws__prof_join_merge(const ws__prof_slot *a, const ws__prof_slot *b, bool b_stolen)
{
    ws__frame *f = cur_frame;
    if (f == NULL)
        return;
    f->work += a->work + b->work;
    f->span += max_u64(a->span, b->span);
    f->bspan += max_u64(a->bspan, b->bspan + steal_cost(b, b_stolen));
}

void ws__prof_spawn_mark(ws__prof_slot *slot)
{
    ws__frame *f = cur_frame;
    slot->spawn_span = f != NULL ? f->span : 0;
    slot->spawn_bspan = f != NULL ? f->bspan : 0;
    slot->steal_ns = 0;
}

void ws__prof_sync_merge(const ws__prof_slot *slot, bool stolen)
{
    ws__frame *f = cur_frame;
    if (f == NULL)
        return;
    f->work += slot->work;
    f->span = max_u64(f->span, slot->spawn_span + slot->span);
    f->bspan = max_u64(f->bspan, slot->spawn_bspan + slot->bspan + steal_cost(slot, stolen));
}

/* ---------------------------------------------------------------------------------------- */
/* ws_pool_profile                                                                           */
/* ---------------------------------------------------------------------------------------- */

/* Opens (on) or closes (off) the fork-join fast path of every worker slot. */
static void set_slow_mode(ws_pool *pool, bool on)
{
    ws_for_each_worker (pool, w) {
        /* relaxed: the root's injection (a release) publishes these to the workers that run
         * the profiled computation; a worker busy with other work may see them late, which
         * only delays when its own joins become instrumented. */
        ws_store_relaxed(&w->profiling, on ? 1u : 0u);
        /* relaxed: 0 sends the worker's next join to the general path, which is instrumented
         * while profiling and, when profiling is off again, recomputes the limit itself. */
        ws_store_relaxed(&w->depth_limit, 0u);
    }
}

typedef struct root_ctx {
    ws_fn fn;
    void *arg;
    ws__prof_slot slot;
} root_ctx;

static void profiled_root(void *p)
{
    root_ctx *r = p;
    ws__prof_run_child(r->fn, r->arg, &r->slot);
}

/* Strands counted by all workers (an internal counter next to the public ones). */
static uint64_t total_strands(ws_pool *pool)
{
    uint64_t n = 0;
    ws_for_each_worker (pool, w) {
        n += ws_load_relaxed(&w->counters.strands); /* relaxed: a statistic */
    }
    return n;
}

int ws_pool_profile(ws_pool *pool, ws_fn fn, void *arg, ws_profile *out)
{
    if (pool == NULL || fn == NULL)
        ws__contract_violation("ws_pool_profile", "NULL pool or function");
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
    ws_pool_stats(pool, &before);
    uint64_t strands_before = total_strands(pool);
    set_slow_mode(pool, true);
    root_ctx r = {fn, arg, {0}};
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
    out->strands = total_strands(pool) - strands_before;
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
