/* test_loop_reduce.c: ws_parallel_reduce gives the serial fold, for commutative operators (sum,
 * max) and for associative but non-commutative ones that only come out right if subranges are
 * combined left to right: the sequence of indices (it must read begin, begin+1, ..., end-1), a
 * polynomial hash of that sequence (string concatenation), and a product of 2x2 matrices.
 * Every fold must start from a fresh copy of identity, and with an explicit grain the folds are
 * exactly the leaves of the halving tree. Also the edge cases: empty range (result = identity),
 * one item, grain larger than the range, ranges ending at SIZE_MAX, result aliasing identity,
 * and EINVAL for bad arguments with result untouched.
 */
#include "test_loop_util.h"

#include <errno.h>

/* What every test accumulator carries besides its value: fold checks it starts from identity. */
typedef struct common {
    size_t base, n, grain;
    _Atomic uint64_t folds, combines, bad;
} common;

static void check_fold_args(common *c, size_t begin, size_t end)
{
    /* relaxed: counters, read after the reduction returned */
    ws_fetch_add_relaxed(&c->folds, 1);
    if (!(begin < end && begin >= c->base && end - c->base <= c->n &&
          (c->grain == 0 || end - begin <= c->grain)))
        ws_fetch_add_relaxed(&c->bad, 1);
}

/* ---- the accumulator: everything at once, so one run checks all operators ---------------- */

typedef struct acc {
    uint64_t sum;         /* sum of hash(i) */
    uint64_t max;         /* max of hash(i) */
    uint64_t first, last; /* the sequence of indices seen, if count > 0 */
    uint64_t count;
    uint64_t in_order;  /* 1 while the sequence is consecutive */
    uint64_t hash, pow; /* polynomial hash of the sequence: concatenation */
    uint64_t m[2][2];   /* product of the matrices of the indices, in order */
} acc;

static const acc identity = {
    .sum = 0, .max = 0, .count = 0, .in_order = 1, .hash = 0, .pow = 1, .m = {{1, 0}, {0, 1}}};

enum { HASH_BASE = 1000003 };

static void mat_mul(uint64_t out[2][2], const uint64_t a[2][2], const uint64_t b[2][2])
{
    uint64_t r[2][2];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            r[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j];
    memcpy(out, r, sizeof(r));
}

/* A matrix per index; products of these do not commute. */
static void index_matrix(uint64_t m[2][2], uint64_t i)
{
    m[0][0] = 1 + i % 3;
    m[0][1] = 1;
    m[1][0] = i % 5;
    m[1][1] = 1 + (i >> 3) % 2;
}

static void acc_push(acc *a, uint64_t i)
{
    uint64_t h = loop_hash(i);
    a->sum += h;
    a->max = h > a->max ? h : a->max;
    if (a->count == 0)
        a->first = i;
    else if (i != a->last + 1)
        a->in_order = 0;
    a->last = i;
    a->count++;
    a->hash = a->hash * HASH_BASE + (i + 1);
    a->pow *= HASH_BASE;
    uint64_t m[2][2];
    index_matrix(m, i);
    mat_mul(a->m, (const uint64_t(*)[2])a->m, (const uint64_t(*)[2])m);
}

static void acc_fold(size_t begin, size_t end, void *accp, void *ctx)
{
    common *c = ctx;
    acc *a = accp;
    check_fold_args(c, begin, end);
    if (memcmp(a, &identity, sizeof(*a)) != 0)
        ws_fetch_add_relaxed(&c->bad, 1); /* relaxed: a counter; fold must start at identity */
    for (size_t i = begin; i < end; i++)
        acc_push(a, i);
}

static void acc_combine(void *accp, const void *rightp, void *ctx)
{
    common *c = ctx;
    acc *a = accp;
    const acc *r = rightp;
    ws_fetch_add_relaxed(&c->combines, 1); /* relaxed: a counter */
    a->sum += r->sum;
    a->max = r->max > a->max ? r->max : a->max;
    if (r->count > 0) {
        if (a->count == 0) {
            a->first = r->first;
        } else if (r->first != a->last + 1) {
            a->in_order = 0;
        }
        a->last = r->last;
    }
    a->count += r->count;
    a->in_order &= r->in_order;
    a->hash = a->hash * r->pow + r->hash;
    a->pow *= r->pow;
    mat_mul(a->m, (const uint64_t(*)[2])a->m, r->m);
}

static acc serial_answer(size_t begin, size_t end)
{
    acc a = identity;
    for (size_t i = begin; i < end; i++)
        acc_push(&a, i);
    return a;
}

typedef struct reduce_call {
    size_t begin, end, grain;
    common *c;
    acc result;
    int rc;
} reduce_call;

static void reduce_call_run(void *arg)
{
    reduce_call *r = arg;
    r->rc = ws_parallel_reduce(r->begin, r->end, r->grain, sizeof(acc), &identity, acc_fold,
                               acc_combine, r->c, &r->result);
}

static void check_shape(const loop_place *place, size_t base, size_t n, size_t grain)
{
    common c = {.base = base, .n = n, .grain = grain};
    reduce_call r = {base, base + n, grain, &c, {0}, -1};
    memset(&r.result, 0x5a, sizeof(r.result));
    loop_run_at(place, reduce_call_run, &r);
    ASSERT_OK(r.rc);
    acc want = serial_answer(base, base + n);
    if (memcmp(&r.result, &want, sizeof(want)) != 0 || ws_load_relaxed(&c.bad) != 0)
        WS_TEST_FAIL("%s: base %zu n %zu grain %zu: result differs from the serial fold "
                     "(in order %" PRIu64 ", count %" PRIu64 " vs %" PRIu64 ", bad %" PRIu64 ")",
                     loop_place_name(place), base, n, grain, r.result.in_order, r.result.count,
                     want.count, ws_load_relaxed(&c.bad));
    uint64_t folds = ws_load_relaxed(&c.folds), combines = ws_load_relaxed(&c.combines);
    if (n == 0) {
        ASSERT_UEQ(folds, 0);
    } else {
        /* The fixed tree: explicit grain, or loop_auto_leaf(n) for automatic grain. */
        size_t leaf = grain != 0 ? grain : loop_auto_leaf(n);
        ASSERT_UEQ(folds, loop_leaves(n, leaf));
        ASSERT_UEQ(combines, folds - 1);
    }
}

static void test_shapes(const loop_place *place)
{
    const size_t big = (size_t)test_scaled(1000003, 20011);
    const size_t sizes[] = {0, 1, 2, 3, 7, 1000, 1025, 4099, big};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        size_t n = sizes[si];
        const size_t grains[] = {0, 1, 3, 1000, n + 1, SIZE_MAX};
        for (size_t gi = 0; gi < sizeof(grains) / sizeof(grains[0]); gi++) {
            if (grains[gi] == 1 && n == big && test_scale() < 1.0)
                continue; /* a million spawns is slow under sanitizers; n = 4099 covers it */
            check_shape(place, 0, n, grains[gi]);
            check_shape(place, 777, n, grains[gi]);
            check_shape(place, SIZE_MAX - n, n, grains[gi]);
        }
    }
}

/* ---- ranges too large to iterate: fold only adds up lengths ------------------------------ */

static void length_fold(size_t begin, size_t end, void *accp, void *ctx)
{
    (void)ctx;
    *(uint64_t *)accp += (uint64_t)(end - begin);
}

static void sum_combine(void *accp, const void *rightp, void *ctx)
{
    (void)ctx;
    *(uint64_t *)accp += *(const uint64_t *)rightp;
}

typedef struct length_call {
    size_t begin, end, grain;
    uint64_t total;
    int rc;
} length_call;

static void length_call_run(void *arg)
{
    length_call *l = arg;
    uint64_t zero = 0;
    l->rc = ws_parallel_reduce(l->begin, l->end, l->grain, sizeof(uint64_t), &zero, length_fold,
                               sum_combine, NULL, &l->total);
}

static void test_huge(const loop_place *place)
{
    const size_t grains[] = {0, SIZE_MAX / 100, SIZE_MAX / 2, SIZE_MAX};
    for (size_t start = 0; start < 3; start++)
        for (size_t gi = 0; gi < sizeof(grains) / sizeof(grains[0]); gi++) {
            length_call l = {start, SIZE_MAX, grains[gi], 0, -1};
            loop_run_at(place, length_call_run, &l);
            ASSERT_OK(l.rc);
            ASSERT_UEQ(l.total, (uint64_t)(SIZE_MAX - start));
        }
}

/* ---- edge cases ------------------------------------------------------------------------- */

static void count_fold(size_t begin, size_t end, void *accp, void *ctx)
{
    (void)begin;
    (void)end;
    (void)accp;
    ws_fetch_add_relaxed((_Atomic uint64_t *)ctx, 1); /* relaxed: a counter */
}

static void edge_cases_run(void *arg)
{
    (void)arg;
    _Atomic uint64_t calls = 0;
    uint64_t id = 42, out = 7;

    /* EINVAL, with result untouched and nothing called. */
    ASSERT_EQ(ws_parallel_reduce(0, 10, 0, 0, &id, count_fold, sum_combine, &calls, &out), EINVAL);
    ASSERT_EQ(ws_parallel_reduce(0, 10, 0, 8, NULL, count_fold, sum_combine, &calls, &out), EINVAL);
    ASSERT_EQ(ws_parallel_reduce(0, 10, 0, 8, &id, count_fold, sum_combine, &calls, NULL), EINVAL);
    ASSERT_EQ(ws_parallel_reduce(10, 5, 0, 8, &id, count_fold, sum_combine, &calls, &out), EINVAL);
    ASSERT_EQ(ws_parallel_reduce(SIZE_MAX, 0, 1, 8, &id, count_fold, sum_combine, &calls, &out),
              EINVAL);
    ASSERT_UEQ(out, 7);
    ASSERT_UEQ(ws_load_relaxed(&calls), 0);

    /* Empty: result = identity, fold never called; also when result is identity itself. */
    ASSERT_OK(ws_parallel_reduce(5, 5, 0, 8, &id, count_fold, sum_combine, &calls, &out));
    ASSERT_UEQ(out, 42);
    ASSERT_OK(ws_parallel_reduce(5, 5, 3, 8, &id, count_fold, sum_combine, &calls, &id));
    ASSERT_UEQ(id, 42);
    ASSERT_UEQ(ws_load_relaxed(&calls), 0);

    /* result aliasing identity on a real range: identity is read before result is written. */
    uint64_t both = 1000;
    ASSERT_OK(ws_parallel_reduce(0, 5000, 0, 8, &both, length_fold, sum_combine, NULL, &both));
    /* Every leaf starts at 1000: the total is the length plus 1000 per leaf. */
    ASSERT_UEQ(both, 5000 + 1000 * loop_leaves(5000, loop_auto_leaf(5000)));
}

int main(void)
{
    loop_place places[LOOP_PLACES];
    loop_places_open(places);
    for (int i = 0; i < LOOP_PLACES; i++) {
        test_shapes(&places[i]);
        test_huge(&places[i]);
        loop_run_at(&places[i], edge_cases_run, NULL);
        printf("%s: ok\n", loop_place_name(&places[i]));
    }
    loop_places_close(places);
    printf("test_loop_reduce: ok\n");
    return 0;
}
