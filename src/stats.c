/* stats.c: the statistics: totals over a pool's workers, and the per-worker report.
 *
 * Each worker counts in its own cache line (ws__counters), with relaxed single-writer updates
 * (ws__count), so counting is always on and costs no shared-line traffic. A reader sums or maxes
 * the counters with relaxed loads: each figure is exact as of some moment, and they are not read
 * at one instant. The list of counters is the WS_STATS_FIELDS X-macro of worksteal.h.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define WS_COMBINE_SUM(total, v) ((total) + (v))
#define WS_COMBINE_MAX(total, v) ((v) > (total) ? (v) : (total))

/* One worker's counters as a ws_stats (deque growths live in the deque). */
static void worker_stats(ws__worker *w, ws_stats *out)
{
    /* relaxed: statistics (see the top of this file). */
#define WS_READ_FIELD_(name, kind, doc) out->name = ws_load_relaxed(&w->counters.name);
    WS_STATS_FIELDS(WS_READ_FIELD_)
#undef WS_READ_FIELD_
    out->deque_growths += ws__wdeque_growths(&w->deque);
    /* relaxed: statistics. Each fast join or sync is one spawn and one pop. */
    uint64_t fast = ws_load_relaxed(&w->deque.fast_joins) + ws_load_relaxed(&w->deque.fast_syncs);
    fast += ws_load_relaxed(&w->stack.f.fast_syncs); /* stack spawns synced by the fast path */
    out->spawns += fast;
    out->pops += fast;
}

void ws_pool_stats(ws_pool *pool, ws_stats *out)
{
    ws__pool_check(pool, "ws_pool_stats");
    if (out == NULL)
        ws__contract_violation("ws_pool_stats", "NULL out");
    memset(out, 0, sizeof *out);
    ws_for_each_worker (pool, w) {
        ws_stats one;
        worker_stats(w, &one);
#define WS_ADD_FIELD_(name, kind, doc) out->name = WS_COMBINE_##kind(out->name, one.name);
        WS_STATS_FIELDS(WS_ADD_FIELD_)
#undef WS_ADD_FIELD_
    }
}

/* The rows "cpu" and "node": where each placed worker runs (a spare: "-"). */
static void report_places(ws_pool *pool)
{
    for (int row = 0; row < 2; row++) {
        fprintf(stderr, "%-16s %14s", row == 0 ? "cpu" : "numa node", "");
        ws_for_each_worker (pool, w) {
            if (w->spare && !w->started)
                continue;
            int v = w->place == NULL ? -1 : row == 0 ? w->place->cpu : w->place->node;
            if (v < 0)
                fprintf(stderr, " %13s", "-");
            else
                fprintf(stderr, " %13d", v);
        }
        fputc('\n', stderr);
    }
}

void ws__stats_report(ws_pool *pool)
{
    ws_stats total;
    ws_pool_stats(pool, &total);
    /* "pool N" as in the trace; spares are counted (and get columns) only if they ever ran */
    unsigned spares_ran = 0;
    ws_for_each_worker (pool, w)
        spares_ran += w->spare && w->started;
    fprintf(stderr, "worksteal: statistics of pool %u (%u workers", pool->serial, pool->nworkers);
    if (spares_ran > 0)
        fprintf(stderr, ", %u spare%s ran", spares_ran, spares_ran == 1 ? "" : "s");
    fprintf(stderr, ")\n");
    fprintf(stderr, "%-16s %14s", "counter", "total");
    ws_for_each_worker (pool, w) {
        if (!w->spare || w->started)
            fprintf(stderr, " %12s%u", w->spare ? "spare" : "w", w->id);
    }
    fputc('\n', stderr);
#define WS_REPORT_FIELD_(name, kind, doc)                   \
    fprintf(stderr, "%-16s %14" PRIu64, #name, total.name); \
    ws_for_each_worker (pool, w) {                          \
        if (!w->spare || w->started) {                      \
            ws_stats one;                                   \
            worker_stats(w, &one);                          \
            fprintf(stderr, " %13" PRIu64, one.name);       \
        }                                                   \
    }                                                       \
    fputc('\n', stderr);
    WS_STATS_FIELDS(WS_REPORT_FIELD_)
#undef WS_REPORT_FIELD_
    if (pool->placement != NULL)
        report_places(pool);
    if (total.spawns > 0)
        fprintf(stderr, "steal rate: %.4f%% of spawns\n",
                100.0 * (double)total.steals / (double)total.spawns);
    char topology[400];
    ws__placement_summary(pool->placement, topology, sizeof topology);
    fprintf(stderr, "topology: %s\n", topology);
}
