/* test_loop_balance.c: a triangular loop (iteration i costs i units) on a 2-worker pool is
 * spread over more than one thread. With automatic grain the whole range starts on one worker,
 * so another one only gets work if the loop splits when it is asked to; the pool's statistics
 * must show steals, at least two threads must have run iterations, and every index must be run
 * once. (A worker waiting at a join it cannot help with counts as blocked and a spare stands in
 * for it, so the threads are the pool's workers and spares: ids below ws_pool_threads.)
 * (No timing is measured: a steal either happened or it did not.)
 */
#include "test_loop_util.h"

typedef struct tri {
    size_t n, grain;
    uint64_t unit;           /* spin units per unit of cost */
    _Atomic uint32_t *count; /* per index */
    unsigned threads;        /* ws_pool_threads */
    _Atomic uint64_t *cost;  /* cost run by each thread, by worker id */
    _Atomic uint64_t checksum;
    _Atomic uint64_t bad;
} tri;

static void tri_body(size_t begin, size_t end, void *ctx)
{
    tri *t = ctx;
    int id = ws_worker_id();
    if (id < 0 || (unsigned)id >= t->threads) {
        ws_fetch_add_relaxed(&t->bad, 1); /* relaxed: read after the loop */
        return;
    }
    uint64_t sum = 0, cost = 0;
    for (size_t i = begin; i < end; i++) {
        sum += loop_spin(i, (uint64_t)i * t->unit);
        cost += i;
        ws_fetch_add_relaxed(&t->count[i], 1); /* relaxed: read after the loop */
    }
    /* relaxed: totals read after the loop returned */
    ws_fetch_add_relaxed(&t->cost[id], cost);
    ws_fetch_add_relaxed(&t->checksum, sum);
}

static void tri_run(void *arg)
{
    tri *t = arg;
    ws_parallel_for(0, t->n, t->grain, tri_body, t);
}

int main(void)
{
    ws_pool *pool = NULL;
    ws_config cfg = {0};
    cfg.workers = 2;
    ASSERT_OK(ws_pool_create(&pool, &cfg));

    const size_t grains[] = {0, 16, 1};
    for (size_t g = 0; g < sizeof(grains) / sizeof(grains[0]); g++) {
        tri t = {.n = 3000, .grain = grains[g], .unit = 40, .threads = ws_pool_threads(pool)};
        t.count = calloc(t.n, sizeof(*t.count));
        t.cost = calloc(t.threads, sizeof(*t.cost));
        ASSERT(t.count != NULL && t.cost != NULL);
        ws_stats before, after;
        ws_pool_stats(pool, &before);
        ASSERT_OK(ws_pool_run(pool, tri_run, &t));
        ws_pool_stats(pool, &after);

        ASSERT_UEQ(ws_load_relaxed(&t.bad), 0);
        for (size_t i = 0; i < t.n; i++)
            ASSERT_EQ(ws_load_relaxed(&t.count[i]), 1);
        uint64_t total = 0, largest = 0;
        unsigned ran = 0;
        for (unsigned i = 0; i < t.threads; i++) {
            uint64_t c = ws_load_relaxed(&t.cost[i]);
            total += c;
            ran += c != 0;
            largest = c > largest ? c : largest;
        }
        ASSERT_UEQ(total, (uint64_t)t.n * (t.n - 1) / 2);
        printf("grain %zu: steals %" PRIu64 ", spawns %" PRIu64 ", %u threads ran iterations, "
               "the busiest %.3f of the cost\n",
               grains[g], after.steals - before.steals, after.spawns - before.spawns, ran,
               (double)largest / (double)total);
        ASSERT_GT(after.steals - before.steals, 0);
        ASSERT_GE(ran, 2);
        free(t.count);
        free(t.cost);
    }
    ws_pool_destroy(pool);
    printf("test_loop_balance: ok\n");
    return 0;
}
