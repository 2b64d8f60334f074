/* nqueens_first.c: a parallel search that stops at its first hit (group cancellation).
 *
 * The search for placements of N queens is split into group jobs down to a few rows, then each
 * job searches its subtree serially, polling ws_group_cancelled at every node. The job that
 * finds a solution records it and cancels the group: jobs not started yet are skipped by the
 * pool, running ones return at their next node. For comparison the program first counts every
 * solution with the same code and no cancellation.
 *
 * Run: ./example_nqueens_first [N (default 13)] [WORKERS (default 2)]
 * Exit status 0; 2 if the search did not stop early (it visited more than a tenth of the full
 * search's nodes), which the tests check.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <worksteal.h>

enum { MAX_N = 20, JOB_ROWS = 4 }; /* rows placed by group jobs; the rest is serial */

typedef struct search {
    ws_group group;
    int n;
    int stop_at_first; /* 0: count every solution */
    atomic_ullong nodes, nodes_after_hit, jobs_after_hit, solutions;
    atomic_int hit; /* set by the first finder, before it cancels */
    uint64_t t0_ns;
    atomic_ullong hit_ns;
    int first[MAX_N];
} search;

typedef struct board { /* one job: the first `row` queens are placed */
    search *s;
    int row;
    uint32_t cols, diag1, diag2;
    int col_of[MAX_N];
} board;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct tally {
    unsigned long long nodes, after_hit;
} tally;

static void found(search *s, const board *b)
{
    atomic_fetch_add(&s->solutions, 1);
    if (!s->stop_at_first)
        return;
    int expected = 0;
    if (atomic_compare_exchange_strong(&s->hit, &expected, 1)) {
        atomic_store(&s->hit_ns, now_ns() - s->t0_ns);
        for (int i = 0; i < s->n; i++)
            s->first[i] = b->col_of[i];
        ws_group_cancel(&s->group);
    }
}

/* Serial depth-first search below b; false once the group is cancelled. */
static bool dfs(search *s, board *b, tally *t)
{
    t->nodes++;
    if (atomic_load_explicit(&s->hit, memory_order_relaxed))
        t->after_hit++;
    if (s->stop_at_first && ws_group_cancelled(&s->group))
        return false;
    if (b->row == s->n) {
        found(s, b);
        return true;
    }
    uint32_t all = (1u << s->n) - 1;
    uint32_t free_cols = all & ~(b->cols | b->diag1 | b->diag2);
    while (free_cols != 0) {
        uint32_t bit = free_cols & -free_cols;
        free_cols ^= bit;
        board next = *b;
        next.col_of[b->row] = __builtin_ctz(bit);
        next.row = b->row + 1;
        next.cols = b->cols | bit;
        next.diag1 = (b->diag1 | bit) << 1;
        next.diag2 = (b->diag2 | bit) >> 1;
        if (!dfs(s, &next, t))
            return false;
    }
    return true;
}

static void job(void *arg);

static void discard(void *arg)
{
    free(arg);
}

/* Near the root, each free column becomes a group job; deeper, the search is serial. */
static void job(void *arg)
{
    board *b = arg;
    search *s = b->s;
    if (atomic_load(&s->hit))
        atomic_fetch_add(&s->jobs_after_hit, 1); /* started after the hit, before the cancel */
    tally t = {0, 0};
    if (b->row < JOB_ROWS && b->row < s->n) {
        t.nodes++;
        uint32_t all = (1u << s->n) - 1;
        uint32_t free_cols = all & ~(b->cols | b->diag1 | b->diag2);
        while (free_cols != 0) {
            uint32_t bit = free_cols & -free_cols;
            free_cols ^= bit;
            board *next = malloc(sizeof *next);
            if (next == NULL)
                abort();
            *next = *b;
            next->col_of[b->row] = __builtin_ctz(bit);
            next->row = b->row + 1;
            next->cols = b->cols | bit;
            next->diag1 = (b->diag1 | bit) << 1;
            next->diag2 = (b->diag2 | bit) >> 1;
            if (ws_group_submit_cancellable(&s->group, job, discard, next, 0) != 0) {
                free(next); /* ECANCELED: the search is over */
                break;
            }
        }
    } else {
        dfs(s, b, &t);
    }
    atomic_fetch_add(&s->nodes, t.nodes);
    atomic_fetch_add(&s->nodes_after_hit, t.after_hit);
    free(b);
}

static void run(search *s, ws_pool *pool, int n, int stop_at_first)
{
    ws_group_init(&s->group, pool);
    s->n = n;
    s->stop_at_first = stop_at_first;
    board *root = calloc(1, sizeof *root);
    if (root == NULL)
        abort();
    root->s = s;
    s->t0_ns = now_ns();
    if (ws_group_submit_cancellable(&s->group, job, discard, root, 0) != 0)
        abort();
    ws_group_wait(&s->group);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 13;
    unsigned workers = argc > 2 ? (unsigned)atoi(argv[2]) : 2;
    if (n < 4 || n > MAX_N) {
        fprintf(stderr, "N must be 4..%d\n", MAX_N);
        return 1;
    }
    ws_pool *pool;
    ws_config config = {.workers = workers};
    int err = ws_pool_create(&pool, &config);
    if (err != 0) {
        fprintf(stderr, "ws_pool_create: %s\n", ws_strerror(err));
        return 1;
    }
    static search full, first;
    run(&full, pool, n, 0);
    double full_ms = (double)(now_ns() - full.t0_ns) / 1e6;
    run(&first, pool, n, 1);
    double total_ms = (double)(now_ns() - first.t0_ns) / 1e6;
    unsigned long long nodes = atomic_load(&first.nodes);
    char placement[4 * MAX_N + 1] = "";
    for (int i = 0; i < n; i++) {
        size_t used = strlen(placement);
        snprintf(placement + used, sizeof placement - used, "%s%d", i ? " " : "", first.first[i]);
    }
    /* One line: the hit, how little of the full search it took, and what cancelling skipped. */
    printf("%d queens on %u workers: first solution (%s) after %.3f ms, search over after %.3f ms, "
           "%llu nodes (%.4f%% of the full search's %llu, which took %.1f ms and found %llu); "
           "after the hit %llu nodes, %llu jobs started, %llu cancelled unstarted\n",
           n, ws_pool_workers(pool), placement, (double)atomic_load(&first.hit_ns) / 1e6, total_ms,
           nodes, 100.0 * (double)nodes / (double)atomic_load(&full.nodes),
           (unsigned long long)atomic_load(&full.nodes), full_ms,
           (unsigned long long)atomic_load(&full.solutions),
           (unsigned long long)atomic_load(&first.nodes_after_hit),
           (unsigned long long)atomic_load(&first.jobs_after_hit),
           (unsigned long long)ws_group_skipped(&first.group));
    ws_pool_destroy(pool);

    /* The placement must be a solution, and the search must have stopped early. */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (first.first[i] == first.first[j] || abs(first.first[i] - first.first[j]) == i - j) {
                fprintf(stderr, "not a solution (rows %d and %d)\n", j, i);
                return 1;
            }
    if (atomic_load(&first.hit) != 1 || nodes * 10 > atomic_load(&full.nodes)) {
        fprintf(stderr, "the search did not stop early\n");
        return 2;
    }
    return 0;
}
