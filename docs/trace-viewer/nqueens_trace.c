/* nqueens_trace: counts the placements of n queens on a pool of P workers, one ws_spawn per
 * legal placement, so that WS_TRACE has something to show. docs/trace-viewer/make-screenshot.sh
 * builds it and runs it with WS_TRACE set; docs/profiling.md shows the result.
 *
 * usage: nqueens_trace [n [P]]   (defaults: n = 10, P = 2)
 */
#include "worksteal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct board {
    int n, row;
    uint32_t cols, diag1, diag2; /* attacked columns, as bit masks */
    uint64_t count;
} board;

static void place(void *p)
{
    board *b = p;
    if (b->row == b->n) {
        b->count = 1;
        return;
    }
    ws_task tasks[32];
    board kids[32];
    int k = 0;
    uint32_t free_cols = ~(b->cols | b->diag1 | b->diag2) & ((1u << b->n) - 1u);
    for (; free_cols != 0; free_cols &= free_cols - 1) {
        uint32_t bit = free_cols & -free_cols;
        kids[k] = (board){
            b->n, b->row + 1, b->cols | bit, (b->diag1 | bit) << 1, (b->diag2 | bit) >> 1, 0};
        ws_spawn(&tasks[k], place, &kids[k]);
        k++;
    }
    b->count = 0;
    while (k-- > 0) { /* sync in reverse spawn order */
        ws_sync(&tasks[k]);
        b->count += kids[k].count;
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    unsigned workers = argc > 2 ? (unsigned)atoi(argv[2]) : 2;
    if (n < 1 || n > 16 || workers < 1) {
        fprintf(stderr, "usage: nqueens_trace [n (1-16) [workers]]\n");
        return 2;
    }
    ws_config config = {0};
    config.workers = workers;
    ws_pool *pool;
    int err = ws_pool_create(&pool, &config);
    if (err != 0) {
        fprintf(stderr, "nqueens_trace: ws_pool_create: %s\n", ws_strerror(err));
        return 1;
    }
    board root = {n, 0, 0, 0, 0, 0};
    err = ws_pool_run(pool, place, &root);
    ws_pool_destroy(pool);
    if (err != 0) {
        fprintf(stderr, "nqueens_trace: ws_pool_run: %s\n", ws_strerror(err));
        return 1;
    }
    printf("%d-queens: %llu solutions on %u workers\n", n, (unsigned long long)root.count, workers);
    return 0;
}
