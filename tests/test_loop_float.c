/* test_loop_float.c: floating-point reductions are deterministic. For a given range and grain,
 * ws_parallel_reduce folds the same leaves and combines them in the same tree whatever the
 * worker count and the timing, so a sum of doubles is bit-identical on 1, 2, 4 and 8 workers,
 * outside a worker, and from run to run. The test also rebuilds the documented tree itself
 * (halve until at most `leaf` items remain; leaf = grain, or loop_auto_leaf(n) for automatic
 * grain) and requires the very same bits.
 */
#include "test_loop_util.h"

#include <math.h>

/* Terms of very different magnitudes, so that the order of additions shows in the last bits. */
static double term(size_t i)
{
    return sin((double)i) * 1e-3 + 1.0 / ((double)i + 1.0) + (i % 97 == 0 ? 1e6 : 0.0);
}

static void float_fold(size_t begin, size_t end, void *acc, void *ctx)
{
    (void)ctx;
    double s = *(double *)acc;
    for (size_t i = begin; i < end; i++)
        s += term(i);
    *(double *)acc = s;
}

static void float_combine(void *acc, const void *right, void *ctx)
{
    (void)ctx;
    *(double *)acc += *(const double *)right;
}

/* The documented tree, evaluated serially. */
static double tree_sum(size_t begin, size_t end, size_t leaf)
{
    if (end - begin <= leaf) {
        double s = 0.0;
        float_fold(begin, end, &s, NULL);
        return s;
    }
    size_t mid = begin + (end - begin) / 2;
    double left = tree_sum(begin, mid, leaf);
    double right = tree_sum(mid, end, leaf);
    return left + right;
}

typedef struct float_call {
    size_t begin, end, grain;
    double result;
} float_call;

static void float_call_run(void *arg)
{
    float_call *f = arg;
    double zero = 0.0;
    ASSERT_OK(ws_parallel_reduce(f->begin, f->end, f->grain, sizeof(double), &zero, float_fold,
                                 float_combine, NULL, &f->result));
}

static uint64_t bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof(u));
    return u;
}

int main(void)
{
    loop_place places[LOOP_PLACES];
    loop_places_open(places);
    const size_t n = (size_t)test_scaled(3000017, 100003);
    const size_t begin = 11;
    const size_t grains[] = {0, 1000, 77777, 3};
    int differs_from_plain = 0;
    for (size_t g = 0; g < sizeof(grains) / sizeof(grains[0]); g++) {
        size_t grain = grains[g];
        size_t m = grain < 100 ? n / 20 : n; /* fine grains: a shorter range, same point */
        size_t leaf = grain != 0 ? grain : loop_auto_leaf(m);
        double want = tree_sum(begin, begin + m, leaf);
        double plain = 0.0;
        float_fold(begin, begin + m, &plain, NULL);
        differs_from_plain += bits(plain) != bits(want);
        for (int p = 0; p < LOOP_PLACES; p++) {
            for (int rep = 0; rep < 3; rep++) {
                float_call f = {begin, begin + m, grain, -1.0};
                loop_run_at(&places[p], float_call_run, &f);
                if (bits(f.result) != bits(want))
                    WS_TEST_FAIL("grain %zu, %s, run %d: %.17g (0x%016" PRIx64
                                 "), want %.17g (0x%016" PRIx64 ")",
                                 grain, loop_place_name(&places[p]), rep, f.result, bits(f.result),
                                 want, bits(want));
            }
        }
        /* Sanity: the tree sum is the sum, up to rounding. */
        ASSERT(fabs(want - plain) <= 1e-9 * fabs(plain));
        printf("grain %zu over %zu items: %.17g (serial left-to-right %.17g)\n", grain, m, want,
               plain);
    }
    printf("the tree order differed from plain left-to-right in %d of 4 cases\n",
           differs_from_plain);
    loop_places_close(places);
    printf("test_loop_float: ok\n");
    return 0;
}
