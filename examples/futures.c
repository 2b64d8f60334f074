/* futures.c: n-queens with futures. Each placement submits a future per free column of the next
 * row, then gets them in the order it submitted them (oldest first, the order that a deque's
 * owner pops last) and adds up their counts. A get of a future that has not started runs it on
 * the spot, wherever it is queued; one that a thief is running is helped, not waited for idly.
 *
 * Run: ./example_futures [n (default 11)]
 * Exit status 0, or 1 if the count is not the known one (n up to 16).
 */
#include <stdio.h>
#include <stdlib.h>
#include <worksteal.h>

enum { MAX_N = 16, SERIAL_ROWS = 3 }; /* the last rows are searched without futures */

static const long known[MAX_N + 1] = {1,   1,   0,    0,     2,     10,     4,       40,      92,
                                      352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512};

typedef struct board {
    int n, row;
    unsigned cols, left, right; /* the columns and diagonals attacked on this row */
    long count;
} board;

static long count_serial(int n, int row, unsigned cols, unsigned left, unsigned right)
{
    if (row == n)
        return 1;
    unsigned all = (1u << n) - 1, free_cols = all & ~(cols | left | right);
    long count = 0;
    for (; free_cols != 0; free_cols &= free_cols - 1) {
        unsigned bit = free_cols & -free_cols;
        count +=
            count_serial(n, row + 1, cols | bit, ((left | bit) << 1) & all, (right | bit) >> 1);
    }
    return count;
}

/* A future's function: the solutions below board p; returns a pointer to them. */
static void *count_future(void *p)
{
    board *b = p;
    if (b->row >= b->n - SERIAL_ROWS) {
        b->count = count_serial(b->n, b->row, b->cols, b->left, b->right);
        return &b->count;
    }
    board next[MAX_N];
    ws_future *f[MAX_N];
    int k = 0;
    unsigned all = (1u << b->n) - 1, free_cols = all & ~(b->cols | b->left | b->right);
    for (; free_cols != 0; free_cols &= free_cols - 1, k++) {
        unsigned bit = free_cols & -free_cols;
        next[k] = (board){
            b->n, b->row + 1, b->cols | bit, ((b->left | bit) << 1) & all, (b->right | bit) >> 1,
            0};
        /* NULL pool: this worker's own; the future goes on its deque. */
        if (ws_future_submit(&f[k], NULL, count_future, &next[k]) != 0)
            f[k] = NULL; /* out of memory: counted here instead */
    }
    b->count = 0;
    for (int i = 0; i < k; i++) { /* oldest first */
        if (f[i] == NULL) {
            b->count += *(long *)count_future(&next[i]);
            continue;
        }
        b->count += *(long *)ws_future_get(f[i]); /* next[i] outlives it: we wait for it here */
        ws_future_free(f[i]);
    }
    return &b->count;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 11;
    if (n < 1 || n > MAX_N) {
        fprintf(stderr, "usage: %s [n, 1 to %d]\n", argv[0], MAX_N);
        return 1;
    }
    board root = {n, 0, 0, 0, 0, 0};
    ws_future *f;
    /* From main, outside any worker: the future goes to the default pool's injector, and the
     * get sleeps until it is done. */
    int err = ws_future_submit(&f, NULL, count_future, &root);
    if (err != 0) {
        fprintf(stderr, "ws_future_submit: %s\n", ws_strerror(err));
        return 1;
    }
    long count = *(long *)ws_future_get(f);
    ws_future_free(f);
    printf("%d-queens: %ld solutions, a future per column got oldest first, on the %u workers of "
           "the default pool\n",
           n, count, ws_pool_workers(ws_default_pool()));
    return count == known[n] ? 0 : 1;
}
