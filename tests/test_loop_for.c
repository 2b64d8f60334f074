/* test_loop_for.c: ws_parallel_for calls body on disjoint subranges that cover [begin,end),
 * every index exactly once, for many shapes: sizes 0 to a million, explicit grains from 1 to
 * larger than the range and automatic grain, ranges that end at SIZE_MAX, and from pools of 1,
 * 2, 4 and 8 workers as well as from outside a worker (the default pool).
 *
 * Each index has a counter; a second visit, a missed index, a subrange outside the range, an
 * empty subrange or one larger than the grain fails the test. With an explicit grain the number
 * of body calls must be exactly the number of leaves of the halving tree.
 */
#include "test_loop_util.h"

#include <errno.h>

typedef struct visit {
    size_t base, n, grain;
    uint64_t seed;
    _Atomic uint32_t *count; /* n counters, one per index */
    _Atomic uint64_t calls;
    _Atomic uint64_t bad; /* subranges that broke the contract */
} visit;

static void visit_body(size_t begin, size_t end, void *ctx)
{
    visit *v = ctx;
    /* relaxed: counters only, read after the loop returned (which orders everything). */
    ws_fetch_add_relaxed(&v->calls, 1);
    if (!(begin < end && begin >= v->base && end - v->base <= v->n &&
          (v->grain == 0 || end - begin <= v->grain))) {
        ws_fetch_add_relaxed(&v->bad, 1);
        return;
    }
    for (size_t i = begin; i < end; i++) {
        size_t k = i - v->base;
        ws_fetch_add_relaxed(&v->count[k], 1);
        /* A rare stall shifts the interleavings from run to run (the seed is printed). */
        if (loop_hash(k ^ v->seed) % 8192 == 0)
            (void)loop_spin(k, 2000);
    }
}

typedef struct for_call {
    size_t begin, end, grain;
    visit *v;
} for_call;

static void for_call_run(void *arg)
{
    for_call *c = arg;
    ws_parallel_for(c->begin, c->end, c->grain, visit_body, c->v);
}

static void check_shape(const loop_place *place, size_t base, size_t n, size_t grain, uint64_t seed)
{
    visit v = {.base = base, .n = n, .grain = grain, .seed = seed};
    v.count = calloc(n > 0 ? n : 1, sizeof(*v.count));
    ASSERT(v.count != NULL);
    for_call c = {base, base + n, grain, &v};
    loop_run_at(place, for_call_run, &c);

    uint64_t calls = ws_load_relaxed(&v.calls);
    if (ws_load_relaxed(&v.bad) != 0 || (n == 0 && calls != 0))
        WS_TEST_FAIL("%s: base %zu n %zu grain %zu: %" PRIu64 " bad subranges of %" PRIu64,
                     loop_place_name(place), base, n, grain, ws_load_relaxed(&v.bad), calls);
    for (size_t k = 0; k < n; k++) {
        uint32_t seen = ws_load_relaxed(&v.count[k]);
        if (seen != 1)
            WS_TEST_FAIL("%s: base %zu n %zu grain %zu: index base+%zu visited %u times",
                         loop_place_name(place), base, n, grain, k, seen);
    }
    if (n > 0 && grain != 0)
        ASSERT_UEQ(calls, loop_leaves(n, grain));
    if (n > 0)
        ASSERT(calls >= 1);
    free(v.count);
}

static void test_shapes(const loop_place *place, uint64_t seed)
{
    const size_t big = (size_t)test_scaled(1000003, 20011);
    const size_t sizes[] = {0, 1, 2, 3, 7, 1000, big};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        size_t n = sizes[si];
        const size_t grains[] = {0, 1, 3, 1000, n + 1, SIZE_MAX};
        for (size_t gi = 0; gi < sizeof(grains) / sizeof(grains[0]); gi++) {
            check_shape(place, 0, n, grains[gi], seed);
            check_shape(place, 12345, n, grains[gi], seed);
            /* Ranges that end exactly at SIZE_MAX: no midpoint or chunk may overflow. */
            check_shape(place, SIZE_MAX - n, n, grains[gi], seed);
        }
    }
}

/* ---- ranges too large to visit: only their lengths are added up ------------------------- */

typedef struct lengths {
    size_t grain;
    _Atomic uint64_t total, calls, bad;
} lengths;

static void length_body(size_t begin, size_t end, void *ctx)
{
    lengths *l = ctx;
    /* relaxed: counters, read after the loop returned. */
    if (begin >= end || (l->grain != 0 && end - begin > l->grain))
        ws_fetch_add_relaxed(&l->bad, 1);
    ws_fetch_add_relaxed(&l->total, (uint64_t)(end - begin));
    ws_fetch_add_relaxed(&l->calls, 1);
}

typedef struct huge_call {
    size_t begin, end, grain;
    lengths *l;
} huge_call;

static void huge_call_run(void *arg)
{
    huge_call *c = arg;
    ws_parallel_for(c->begin, c->end, c->grain, length_body, c->l);
}

static void test_huge(const loop_place *place)
{
    /* [0, SIZE_MAX) and [1, SIZE_MAX): the whole size_t range, explicit and automatic grain. */
    const size_t grains[] = {0, SIZE_MAX / 64 + 1, SIZE_MAX / 3, SIZE_MAX};
    for (size_t start = 0; start < 2; start++) {
        for (size_t gi = 0; gi < sizeof(grains) / sizeof(grains[0]); gi++) {
            lengths l = {.grain = grains[gi]};
            huge_call c = {start, SIZE_MAX, grains[gi], &l};
            loop_run_at(place, huge_call_run, &c);
            ASSERT_UEQ(ws_load_relaxed(&l.bad), 0);
            ASSERT_UEQ(ws_load_relaxed(&l.total), (uint64_t)(SIZE_MAX - start));
            if (grains[gi] != 0)
                ASSERT_UEQ(ws_load_relaxed(&l.calls), loop_leaves(SIZE_MAX - start, grains[gi]));
        }
    }
}

/* ---- begin > end is an empty range ------------------------------------------------------ */

static void test_reversed(const loop_place *place)
{
    lengths l = {.grain = 0};
    huge_call c = {10, 5, 0, &l};
    loop_run_at(place, huge_call_run, &c);
    c = (huge_call){SIZE_MAX, 0, 1, &l};
    loop_run_at(place, huge_call_run, &c);
    c = (huge_call){7, 7, 3, &l};
    loop_run_at(place, huge_call_run, &c);
    ASSERT_UEQ(ws_load_relaxed(&l.calls), 0);
}

int main(void)
{
    uint64_t seed = test_seed("test_loop_for");
    loop_place places[LOOP_PLACES];
    loop_places_open(places);
    for (int i = 0; i < LOOP_PLACES; i++) {
        test_shapes(&places[i], seed);
        test_huge(&places[i]);
        test_reversed(&places[i]);
        printf("%s: ok\n", loop_place_name(&places[i]));
    }
    loop_places_close(places);
    printf("test_loop_for: ok\n");
    return 0;
}
