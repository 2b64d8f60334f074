/* test_loop_reduce_alloc.c: reductions with accumulators larger than the on-stack limit (they
 * use allocated scratch), and their failure paths.
 *
 * - A 1 KiB accumulator (a histogram plus an order-sensitive hash) gives the serial answer
 *   on every pool, for automatic and explicit grains.
 * - When the first allocation fails, ws_parallel_reduce returns ENOMEM, calls nothing and
 *   leaves result untouched.
 * - When a later allocation fails (the Nth, for N = 2..40), the call either succeeds with the
 *   serial answer or returns ENOMEM with result untouched: never a wrong value reported as 0.
 * - Small accumulators never allocate: with every allocation set to fail, they still succeed.
 */
#include "platform.h"
#include "test_loop_util.h"

#include <errno.h>

enum { BINS = 125 };

typedef struct big {
    uint64_t hash, pow; /* polynomial hash of the index sequence: order-sensitive */
    uint64_t bins[BINS];
    uint64_t count;
} big;

_Static_assert(sizeof(big) > 256, "the accumulator must be larger than the on-stack limit");

static const big big_identity = {.hash = 0, .pow = 1};

enum { HASH_BASE = 1000003 };

static void big_fold(size_t begin, size_t end, void *accp, void *ctx)
{
    big *a = accp;
    if (ctx != NULL)
        ws_fetch_add_relaxed((_Atomic uint64_t *)ctx, 1); /* relaxed: a counter */
    for (size_t i = begin; i < end; i++) {
        a->hash = a->hash * HASH_BASE + (i + 1);
        a->pow *= HASH_BASE;
        a->bins[loop_hash(i) % BINS] += i;
        a->count++;
    }
}

static void big_combine(void *accp, const void *rightp, void *ctx)
{
    (void)ctx;
    big *a = accp;
    const big *r = rightp;
    a->hash = a->hash * r->pow + r->hash;
    a->pow *= r->pow;
    for (int k = 0; k < BINS; k++)
        a->bins[k] += r->bins[k];
    a->count += r->count;
}

static big big_serial(size_t begin, size_t end)
{
    big a = big_identity;
    big_fold(begin, end, &a, NULL);
    return a;
}

typedef struct big_call {
    size_t begin, end, grain;
    long fail_after; /* arm the allocation failure hook right before the call; 0: not armed */
    _Atomic uint64_t *folds;
    big result;
    int rc;
} big_call;

static void big_call_run(void *arg)
{
    big_call *b = arg;
    if (b->fail_after != 0)
        ws__test_fail_alloc_after(b->fail_after);
    b->rc = ws_parallel_reduce(b->begin, b->end, b->grain, sizeof(big), &big_identity, big_fold,
                               big_combine, b->folds, &b->result);
    ws__test_fail_alloc_after(0);
}

static void test_large_accumulator(const loop_place *place)
{
    const size_t sizes[] = {1, 2, 3, 1000, 4099, (size_t)test_scaled(200003, 20011)};
    const size_t grains[] = {0, 1, 5, 1000};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
        for (size_t gi = 0; gi < sizeof(grains) / sizeof(grains[0]); gi++) {
            size_t n = sizes[si];
            big_call b = {.begin = 3, .end = 3 + n, .grain = grains[gi], .rc = -1};
            loop_run_at(place, big_call_run, &b);
            ASSERT_OK(b.rc);
            big want = big_serial(3, 3 + n);
            if (memcmp(&b.result, &want, sizeof(want)) != 0)
                WS_TEST_FAIL("%s: n %zu grain %zu: large accumulator differs from serial",
                             loop_place_name(place), n, grains[gi]);
        }
}

static void test_enomem(const loop_place *place)
{
    big sentinel;
    memset(&sentinel, 0xa5, sizeof(sentinel));

    /* The first allocation fails: ENOMEM before anything runs. */
    const size_t grains[] = {0, 1, 64};
    for (size_t gi = 0; gi < sizeof(grains) / sizeof(grains[0]); gi++) {
        _Atomic uint64_t folds = 0;
        big_call b = {.begin = 0,
                      .end = 5000,
                      .grain = grains[gi],
                      .fail_after = 1,
                      .folds = &folds,
                      .rc = -1};
        b.result = sentinel;
        loop_run_at(place, big_call_run, &b);
        ASSERT_EQ(b.rc, ENOMEM);
        ASSERT(memcmp(&b.result, &sentinel, sizeof(sentinel)) == 0);
        ASSERT_UEQ(ws_load_relaxed(&folds), 0);
    }

    /* A later allocation fails: the right answer, or ENOMEM with result untouched. */
    big want = big_serial(0, 3000);
    int ok = 0, enomem = 0;
    for (long k = 2; k <= 40; k++) {
        for (size_t gi = 0; gi < sizeof(grains) / sizeof(grains[0]); gi++) {
            big_call b = {.begin = 0, .end = 3000, .grain = grains[gi], .fail_after = k, .rc = -1};
            b.result = sentinel;
            loop_run_at(place, big_call_run, &b);
            if (b.rc == 0) {
                ok++;
                if (memcmp(&b.result, &want, sizeof(want)) != 0)
                    WS_TEST_FAIL("%s: failing allocation %ld, grain %zu: returned 0 with a "
                                 "wrong result",
                                 loop_place_name(place), k, grains[gi]);
            } else {
                enomem++;
                ASSERT_EQ(b.rc, ENOMEM);
                ASSERT(memcmp(&b.result, &sentinel, sizeof(sentinel)) == 0);
            }
        }
    }
    printf("%s: later allocation failures: %d succeeded, %d ENOMEM\n", loop_place_name(place), ok,
           enomem);
}

/* ---- small accumulators do not allocate ------------------------------------------------- */

static void sum_fold(size_t begin, size_t end, void *accp, void *ctx)
{
    (void)ctx;
    for (size_t i = begin; i < end; i++)
        *(uint64_t *)accp += loop_hash(i);
}

static void sum_combine(void *accp, const void *rightp, void *ctx)
{
    (void)ctx;
    *(uint64_t *)accp += *(const uint64_t *)rightp;
}

typedef struct small_call {
    size_t grain;
    uint64_t result;
    int rc;
} small_call;

static void small_call_run(void *arg)
{
    small_call *s = arg;
    uint64_t zero = 0;
    ws__test_fail_alloc_after(1);
    s->rc = ws_parallel_reduce(0, 20000, s->grain, sizeof(uint64_t), &zero, sum_fold, sum_combine,
                               NULL, &s->result);
    ws__test_fail_alloc_after(0);
}

static void test_small_does_not_allocate(const loop_place *place)
{
    uint64_t want = 0;
    sum_fold(0, 20000, &want, NULL);
    const size_t grains[] = {0, 1, 7};
    for (size_t gi = 0; gi < sizeof(grains) / sizeof(grains[0]); gi++) {
        small_call s = {grains[gi], 0, -1};
        loop_run_at(place, small_call_run, &s);
        ASSERT_OK(s.rc);
        ASSERT_UEQ(s.result, want);
    }
}

int main(void)
{
    loop_place places[LOOP_PLACES];
    loop_places_open(places);
    for (int i = 0; i < LOOP_PLACES; i++) {
        test_large_accumulator(&places[i]);
        test_enomem(&places[i]);
        test_small_does_not_allocate(&places[i]);
        printf("%s: ok\n", loop_place_name(&places[i]));
    }
    loop_places_close(places);
    printf("test_loop_reduce_alloc: ok\n");
    return 0;
}
