/* test_loop_nested.c: loop bodies that fork. A ws_parallel_for inside the body of a
 * ws_parallel_for (automatic and explicit grain at both levels), a body that splits its own
 * subrange with ws_join, and a ws_parallel_reduce inside a loop body. Every cell of the
 * iteration space must be visited exactly once, and every inner reduction must give the serial
 * answer.
 */
#include "test_loop_util.h"

#include <errno.h>

enum { ROWS = 97, COLS = 1031 };

typedef struct grid {
    size_t outer_grain, inner_grain;
    _Atomic uint32_t count[ROWS][COLS];
    _Atomic uint64_t row_sums_wrong;
} grid;

typedef struct row_ctx {
    grid *g;
    size_t row;
} row_ctx;

static void inner_body(size_t begin, size_t end, void *ctx)
{
    row_ctx *r = ctx;
    for (size_t j = begin; j < end; j++)
        ws_fetch_add_relaxed(&r->g->count[r->row][j], 1); /* relaxed: read after the loops */
}

static void outer_body(size_t begin, size_t end, void *ctx)
{
    grid *g = ctx;
    for (size_t i = begin; i < end; i++) {
        row_ctx r = {g, i};
        ws_parallel_for(0, COLS, g->inner_grain, inner_body, &r);
    }
}

static void check_grid(grid *g, const char *what, const loop_place *place)
{
    for (size_t i = 0; i < ROWS; i++)
        for (size_t j = 0; j < COLS; j++) {
            uint32_t seen = ws_load_relaxed(&g->count[i][j]);
            if (seen != 1)
                WS_TEST_FAIL("%s, %s, grains %zu/%zu: cell (%zu,%zu) visited %u times", what,
                             loop_place_name(place), g->outer_grain, g->inner_grain, i, j, seen);
        }
}

static void nested_for_run(void *arg)
{
    grid *g = arg;
    ws_parallel_for(0, ROWS, g->outer_grain, outer_body, g);
}

/* ---- a body that forks with ws_join ----------------------------------------------------- */

typedef struct half {
    grid *g;
    size_t begin, end;
} half;

static void join_half(void *arg)
{
    half *h = arg;
    size_t n = h->end - h->begin;
    if (n <= 64) {
        for (size_t c = h->begin; c < h->end; c++)
            ws_fetch_add_relaxed(&h->g->count[c / COLS][c % COLS], 1); /* relaxed: as above */
        return;
    }
    half lo = {h->g, h->begin, h->begin + n / 2}, hi = {h->g, h->begin + n / 2, h->end};
    ws_join(join_half, &lo, join_half, &hi);
}

static void joining_body(size_t begin, size_t end, void *ctx)
{
    half h = {ctx, begin, end};
    join_half(&h);
}

static void joining_run(void *arg)
{
    grid *g = arg;
    ws_parallel_for(0, (size_t)ROWS * COLS, g->outer_grain, joining_body, g);
}

/* ---- a reduction inside a loop body ------------------------------------------------------ */

static void sum_fold(size_t begin, size_t end, void *acc, void *ctx)
{
    const size_t *row = ctx;
    uint64_t *s = acc;
    for (size_t j = begin; j < end; j++)
        *s += loop_hash(*row * COLS + j);
}

static void sum_combine(void *acc, const void *right, void *ctx)
{
    (void)ctx;
    *(uint64_t *)acc += *(const uint64_t *)right;
}

static void reducing_body(size_t begin, size_t end, void *ctx)
{
    grid *g = ctx;
    for (size_t i = begin; i < end; i++) {
        uint64_t zero = 0, got = 1, want = 0;
        size_t row = i;
        ASSERT_OK(ws_parallel_reduce(0, COLS, g->inner_grain, sizeof(uint64_t), &zero, sum_fold,
                                     sum_combine, &row, &got));
        for (size_t j = 0; j < COLS; j++)
            want += loop_hash(i * COLS + j);
        if (got != want)
            ws_fetch_add_relaxed(&g->row_sums_wrong, 1); /* relaxed: read after the loop */
        for (size_t j = 0; j < COLS; j++)
            ws_fetch_add_relaxed(&g->count[i][j], 1); /* relaxed: as above */
    }
}

static void reducing_run(void *arg)
{
    grid *g = arg;
    ws_parallel_for(0, ROWS, g->outer_grain, reducing_body, g);
}

int main(void)
{
    loop_place places[LOOP_PLACES];
    loop_places_open(places);
    grid *g = malloc(sizeof(*g));
    ASSERT(g != NULL);
    const size_t grains[][2] = {{0, 0}, {1, 0}, {0, 1}, {3, 100}, {1, 1}, {0, 5000}};
    for (int p = 0; p < LOOP_PLACES; p++) {
        for (size_t k = 0; k < sizeof(grains) / sizeof(grains[0]); k++) {
            memset(g, 0, sizeof(*g));
            g->outer_grain = grains[k][0];
            g->inner_grain = grains[k][1];
            loop_run_at(&places[p], nested_for_run, g);
            check_grid(g, "for in for", &places[p]);

            memset(g, 0, sizeof(*g));
            g->outer_grain = grains[k][0] == 0 ? 0 : grains[k][0] * 97;
            loop_run_at(&places[p], joining_run, g);
            check_grid(g, "join in for", &places[p]);

            memset(g, 0, sizeof(*g));
            g->outer_grain = grains[k][0];
            g->inner_grain = grains[k][1];
            loop_run_at(&places[p], reducing_run, g);
            check_grid(g, "reduce in for", &places[p]);
            ASSERT_UEQ(ws_load_relaxed(&g->row_sums_wrong), 0);
        }
        printf("%s: ok\n", loop_place_name(&places[p]));
    }
    free(g);
    loop_places_close(places);
    printf("test_loop_nested: ok\n");
    return 0;
}
