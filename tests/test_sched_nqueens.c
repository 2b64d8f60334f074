/* test_sched_nqueens: the number of solutions of n-queens through ws_spawn/ws_sync, with up to n
 * children per level whose ws_task records sit in an array in the parent's frame.
 *
 * usage: test_sched_nqueens P [n]        on a pool of P workers, root through ws_pool_run
 *        test_sched_nqueens default [n]  ws_spawn/ws_sync called from main: default pool
 * The answer is checked against a serial count made here and, for n <= 14, against the known
 * values (OEIS A000170). Every size from 1 to n is checked.
 */
#include "test_sched_util.h"

#define MAXN 16

typedef struct board {
    int n;
    int rows;              /* queens placed so far, one per row */
    signed char col[MAXN]; /* col[r]: the column of the queen in row r */
} board;

static bool safe(const board *b, int c)
{
    for (int r = 0; r < b->rows; r++) {
        int d = b->col[r] - c;
        if (d == 0 || d == b->rows - r || d == r - b->rows)
            return false;
    }
    return true;
}

static uint64_t serial_count(board *b)
{
    if (b->rows == b->n)
        return 1;
    uint64_t total = 0;
    for (int c = 0; c < b->n; c++) {
        if (!safe(b, c))
            continue;
        b->col[b->rows++] = (signed char)c;
        total += serial_count(b);
        b->rows--;
    }
    return total;
}

typedef struct node {
    board b;
    uint64_t count;
} node;

static void par_count(void *p)
{
    node *self = p;
    board *b = &self->b;
    if (b->rows == b->n) {
        self->count = 1;
        return;
    }
    /* One child per safe column; each gets its own copy of the board. */
    ws_task tasks[MAXN];
    node kids[MAXN];
    int k = 0;
    for (int c = 0; c < b->n; c++) {
        if (!safe(b, c))
            continue;
        kids[k].b = *b;
        kids[k].b.col[kids[k].b.rows++] = (signed char)c;
        kids[k].count = UINT64_MAX; /* poison: a child that never ran shows up */
        ws_spawn(&tasks[k], par_count, &kids[k]);
        k++;
    }
    uint64_t total = 0;
    while (k > 0) {
        k--;
        ws_sync(&tasks[k]);
        ASSERT(kids[k].count != UINT64_MAX);
        total += kids[k].count;
    }
    self->count = total;
}

static const uint64_t known[15] = {1,  1,   0,   0,    2,     10,    4,     40,
                                   92, 352, 724, 2680, 14200, 73712, 365596};

static uint64_t expected(int n)
{
    board b = {n, 0, {0}};
    uint64_t s = serial_count(&b);
    if (n < 15)
        ASSERT_UEQ(s, known[n]);
    return s;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep the output in order with stderr on a failure */
#if defined(WS_SANITIZED)
    int n = 10;
#else
    int n = 11;
#endif
    if (argc < 2) {
        fprintf(stderr, "usage: %s P|default [n]\n", argv[0]);
        return 2;
    }
    if (argc > 2)
        n = atoi(argv[2]);
    ASSERT(n >= 1 && n < MAXN);

    bool use_default = strcmp(argv[1], "default") == 0;
    ws_pool *pool = NULL;
    if (!use_default) {
        int workers = atoi(argv[1]);
        ASSERT(workers >= 1 && workers <= (int)WS_MAX_WORKERS);
        pool = sched_pool((unsigned)workers);
    }
    for (int size = 1; size <= n; size++) {
        uint64_t want = expected(size);
        for (int rep = 0; rep < (size == n ? 3 : 1); rep++) {
            node root = {{size, 0, {0}}, UINT64_MAX};
            if (use_default) {
                /* From main: the tasks go to the default pool and ws_sync blocks until done. */
                ASSERT_EQ(ws_worker_id(), -1);
                par_count(&root);
            } else {
                ASSERT_OK(ws_pool_run(pool, par_count, &root));
            }
            ASSERT_UEQ(root.count, want);
        }
    }
    if (pool != NULL) {
        ws_stats st;
        ws_pool_stats(pool, &st);
        printf("P=%u nqueens(%d)=%" PRIu64 ": spawns %" PRIu64 " steals %" PRIu64 "\n",
               ws_pool_workers(pool), n, expected(n), st.spawns, st.steals);
        ws_pool_destroy(pool);
    } else {
        printf("default pool nqueens(%d)=%" PRIu64 "\n", n, expected(n));
    }
    printf("ok\n");
    return 0;
}
