/* test_deque.c: the deque test suite, run against both implementations.
 *
 *   test_deque <test> <impl> [thieves] [items]
 *
 * <impl> is `lockfree` (ws_deque_*, Chase-Lev), `locked` (ws_locked_deque_*, the mutex
 * baseline) or `split` (ws_sdeque, the workers' split deque; stress, lastrace and splitseq
 * only: its steal may fail while the deque holds private items, which the other tests
 * forbid). All go through one table of function pointers over a void * deque, so every test
 * body below is the same code for each. <test> is one of:
 *
 *   sequential  LIFO pop, FIFO steal, NULL when empty, exact size, and random mixes of push, pop
 *               and steal checked against a plain array model, from small capacities.
 *   growth      from capacity 1 to more than 2^20 items, with order kept after growth.
 *   enomem      a failed initialisation and a failed growth both return ENOMEM, and the deque is
 *               intact afterwards (ws__test_fail_alloc_after).
 *   stress      exactly-once: one owner pushes and pops in random bursts while [thieves] threads
 *               steal; every item is taken exactly once. The items go through a fresh deque of
 *               capacity 1 or 2 every batch, so the arrays grow again and again under contention;
 *               the split deque's owner also trims whenever it finds its deque empty, so its
 *               arrays shrink and are freed while thieves may still be reading them.
 *   lastrace    the single-element race: every round the owner pushes one item and pops it while
 *               [thieves] threads try to steal it; exactly one side gets it.
 *   splitseq    (split only) requests, shares, the guard's moves and the reserve, step by step.
 *   shrink      (split only) replaced arrays freed, and the shrink's triggers and hysteresis.
 *
 * [thieves] and [items] default to 2 and to the sizes below (scaled down under sanitizers by
 * test_scaled); WS_DEQUE_THIEVES and WS_DEQUE_ITEMS override the defaults, WS_TEST_SEED replays a
 * run. Nothing here measures time (shrink only waits past the deque's 10 ms quiet time).
 */
#include "atomics.h"
#include "deque.h"
#include "platform.h"
#include "test.h"

#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>

/* ---------------------------------------------------------------------------------------- */
/* One interface over both implementations                                                   */
/* ---------------------------------------------------------------------------------------- */

typedef struct deque_ops {
    const char *name;
    size_t struct_size;
    int (*init)(void *q, size_t capacity);
    void (*destroy)(void *q);
    int (*push)(void *q, void *item);
    int64_t (*push_size)(void *q, void *item); /* size before the push, or -1 (ENOMEM) */
    void *(*pop)(void *q);
    void *(*steal)(void *q);
    size_t (*size)(const void *q);
    size_t (*capacity)(const void *q); /* NULL: not observable for this implementation */
    void (*trim)(void *q);             /* NULL, or: the owner gives a big array back now */
    void (*check)(const void *q);      /* NULL: no invariant check */
} deque_ops;

static int lf_init(void *q, size_t capacity)
{
    return ws_deque_init(q, capacity);
}
static void lf_destroy(void *q)
{
    ws_deque_destroy(q);
}
static int lf_push(void *q, void *item)
{
    return ws_deque_push(q, item);
}
static int64_t lf_push_size(void *q, void *item)
{
    return ws__deque_push_size(q, item);
}
static void *lf_pop(void *q)
{
    return ws_deque_pop(q);
}
static void *lf_steal(void *q)
{
    return ws_deque_steal(q);
}
static size_t lf_size(const void *q)
{
    return ws_deque_size(q);
}
static size_t lf_capacity(const void *q)
{
    return ws__deque_capacity(q);
}
static void lf_check(const void *q)
{
    ws__deque_check(q);
}

static int lk_init(void *q, size_t capacity)
{
    return ws_locked_deque_init(q, capacity);
}
static void lk_destroy(void *q)
{
    ws_locked_deque_destroy(q);
}
static int lk_push(void *q, void *item)
{
    return ws_locked_deque_push(q, item);
}
static int64_t lk_push_size(void *q, void *item)
{
    return ws__locked_deque_push_size(q, item);
}
static void *lk_pop(void *q)
{
    return ws_locked_deque_pop(q);
}
static void *lk_steal(void *q)
{
    return ws_locked_deque_steal(q);
}
static size_t lk_size(const void *q)
{
    return ws_locked_deque_size(q);
}

/* The split deque (the workers' deque): its push is the scheduler's fast path when it fits;
 * push_size always takes the slow path, which reads top and so reports the exact size.
 * split_reserve is the reserve of the next deque made (the stress test varies it). */
static unsigned split_reserve = 1;

static int sp_init(void *q, size_t capacity)
{
    return ws_sdeque_init(q, capacity, split_reserve);
}
static void sp_destroy(void *q)
{
    ws_sdeque_destroy(q);
}
static int64_t sp_push_size(void *q, void *item)
{
    bool published;
    return ws__sdeque_push_slow(q, item, &published);
}
/* A push as the library makes it (ws__wdeque_push_size): plain when the fast path fits. */
static int sp_push(void *q, void *item)
{
    if (!ws__sdeque_fits(q))
        return sp_push_size(q, item) < 0 ? ENOMEM : 0;
    ws__sdeque_push_fitting(q, item);
    return 0;
}
static void *sp_pop(void *q)
{
    return ws__sdeque_pop(q);
}
static void *sp_steal(void *q)
{
    return ws_sdeque_steal(q);
}
static size_t sp_size(const void *q)
{
    return ws_sdeque_size(q);
}
static size_t sp_capacity(const void *q)
{
    return ws__sdeque_capacity(q);
}
static void sp_trim(void *q)
{
    ws__sdeque_trim(q);
}
/* Owner or quiescent: the invariants of deque.c's opening comment. */
static void sp_check(const void *p)
{
    ws_sdeque *q = (ws_sdeque *)p;
    /* relaxed: no other thread runs. */
    int64_t b = ws_load_relaxed(&q->bottom);
    uint64_t v = ws_load_relaxed(&q->ts);
    int64_t top = q->guard - (int64_t)(v & WS_SDEQUE_AVAIL_MASK);
    ASSERT_UEQ((uint64_t)top & (~UINT64_C(0) >> WS_SDEQUE_AVAIL_BITS), v >> WS_SDEQUE_AVAIL_BITS);
    ASSERT_LE(top, b);
    ASSERT_LE(q->fast_base - 1, top);
    ASSERT_LE(b - top, (int64_t)ws__sdeque_capacity(q));
}

static const deque_ops impls[] = {
    {"lockfree", sizeof(ws_deque), lf_init, lf_destroy, lf_push, lf_push_size, lf_pop, lf_steal,
     lf_size, lf_capacity, NULL, lf_check},
    {"locked", sizeof(ws_locked_deque), lk_init, lk_destroy, lk_push, lk_push_size, lk_pop,
     lk_steal, lk_size, NULL, NULL, NULL},
    {"split", sizeof(ws_sdeque), sp_init, sp_destroy, sp_push, sp_push_size, sp_pop, sp_steal,
     sp_size, sp_capacity, sp_trim, sp_check},
};

/* The struct's storage comes from the C library, not ws__malloc, so that an armed allocation
 * failure hits the deque's own allocation. ws_deque wants a WS_CACHE_LINE-aligned address; its
 * size is a multiple of that alignment, as aligned_alloc requires. */
static void *storage_new(const deque_ops *ops)
{
    size_t size = (ops->struct_size + WS_CACHE_LINE - 1) / WS_CACHE_LINE * WS_CACHE_LINE;
    void *p = aligned_alloc(WS_CACHE_LINE, size);
    ASSERT(p != NULL);
    return p;
}

static void *deque_new(const deque_ops *ops, size_t capacity)
{
    void *q = storage_new(ops);
    ASSERT_OK(ops->init(q, capacity));
    return q;
}

static void deque_free(const deque_ops *ops, void *q)
{
    if (ops->check != NULL)
        ops->check(q);
    ops->destroy(q);
    free(q);
}

static bool is_pow2(size_t n)
{
    return n != 0 && (n & (n - 1)) == 0;
}

static size_t log2_of(size_t n)
{
    size_t l = 0;
    while (n > 1) {
        n >>= 1;
        l++;
    }
    return l;
}

/* ---------------------------------------------------------------------------------------- */
/* sequential                                                                                */
/* ---------------------------------------------------------------------------------------- */

/* The model: a plain array holding the live items oldest first, as indices into `pool`. */
typedef struct model {
    size_t *v;
    size_t head, tail; /* live entries are v[head .. tail-1] */
} model;

static void expect_empty(const deque_ops *ops, void *q)
{
    ASSERT_UEQ(ops->size(q), 0);
    ASSERT_PTR_EQ(ops->pop(q), NULL);
    ASSERT_PTR_EQ(ops->steal(q), NULL);
    ASSERT_UEQ(ops->size(q), 0);
}

/* A random mix of push, pop and steal from `capacity`, each result compared with the model. */
static void mixed_against_model(const deque_ops *ops, size_t capacity, size_t steps, uint64_t *rng)
{
    size_t pool_n = steps + 1;
    int *pool = calloc(pool_n, sizeof(int));
    model m = {calloc(pool_n, sizeof(size_t)), 0, 0};
    ASSERT(pool != NULL && m.v != NULL);
    void *q = deque_new(ops, capacity);
    size_t next = 0, max_size = 0;
    /* The push probability drifts between phases, so the deque both fills up (growth with
     * top != 0, i.e. a wrapped array) and drains to empty (pop and steal on empty). */
    unsigned push_pct = 50;
    for (size_t s = 0; s < steps; s++) {
        if (s % 257 == 0)
            push_pct = 20 + (unsigned)(test_rand(rng) % 61);
        unsigned r = (unsigned)(test_rand(rng) % 100);
        if (r < push_pct) {
            /* Half the pushes go through push_size, which reports the size before the push:
             * exact here, since nothing runs concurrently. */
            if (r % 2 == 0)
                ASSERT_OK(ops->push(q, &pool[next]));
            else
                ASSERT_EQ(ops->push_size(q, &pool[next]), m.tail - m.head);
            m.v[m.tail++] = next++;
        } else if (r < push_pct + (100 - push_pct) / 2) {
            void *got = ops->pop(q);
            if (m.head == m.tail) {
                ASSERT_PTR_EQ(got, NULL);
            } else {
                ASSERT_PTR_EQ(got, &pool[m.v[--m.tail]]);
            }
        } else {
            void *got = ops->steal(q);
            if (m.head == m.tail) {
                ASSERT_PTR_EQ(got, NULL);
            } else {
                ASSERT_PTR_EQ(got, &pool[m.v[m.head++]]);
            }
        }
        if (m.head == m.tail)
            m.head = m.tail = 0; /* rewind the model; the deque's indices keep growing */
        size_t live = m.tail - m.head;
        ASSERT_UEQ(ops->size(q), live);
        if (live > max_size)
            max_size = live;
        if (ops->capacity != NULL) {
            ASSERT(is_pow2(ops->capacity(q)));
            ASSERT_GE(ops->capacity(q), live);
        }
        if (ops->check != NULL)
            ops->check(q);
    }
    /* Drain: alternate ends, each checked against the model. */
    for (bool from_top = false; m.head != m.tail; from_top = !from_top) {
        if (from_top)
            ASSERT_PTR_EQ(ops->steal(q), &pool[m.v[m.head++]]);
        else
            ASSERT_PTR_EQ(ops->pop(q), &pool[m.v[--m.tail]]);
    }
    expect_empty(ops, q);
    deque_free(ops, q);
    free(m.v);
    free(pool);
    printf("  mixed from capacity %zu: %zu steps, up to %zu items\n", capacity, steps, max_size);
}

static void test_sequential(const deque_ops *ops, uint64_t seed)
{
    enum { N = 100 };
    int pool[N];

    /* The requested capacity is rounded up to a power of two, 0 counting as 1. */
    static const size_t asked[] = {0, 1, 2, 3, 5, 64, 100};
    static const size_t rounded[] = {1, 1, 2, 4, 8, 64, 128};
    for (size_t i = 0; i < sizeof asked / sizeof asked[0]; i++) {
        void *q = deque_new(ops, asked[i]);
        if (ops->capacity != NULL)
            ASSERT_UEQ(ops->capacity(q), rounded[i]);
        expect_empty(ops, q);
        deque_free(ops, q);
    }

    for (size_t cap = 1; cap <= 256; cap *= 4) {
        void *q = deque_new(ops, cap);
        expect_empty(ops, q);

        /* pop is LIFO */
        for (int i = 0; i < N; i++) {
            ASSERT_OK(ops->push(q, &pool[i]));
            ASSERT_UEQ(ops->size(q), (size_t)i + 1);
        }
        for (int i = N - 1; i >= 0; i--) {
            ASSERT_PTR_EQ(ops->pop(q), &pool[i]);
            ASSERT_UEQ(ops->size(q), (size_t)i);
        }
        expect_empty(ops, q);

        /* steal is FIFO */
        for (int i = 0; i < N; i++)
            ASSERT_OK(ops->push(q, &pool[i]));
        for (int i = 0; i < N; i++) {
            ASSERT_PTR_EQ(ops->steal(q), &pool[i]);
            ASSERT_UEQ(ops->size(q), (size_t)(N - 1 - i));
        }
        expect_empty(ops, q);

        /* Both ends at once: the oldest goes to steal, the newest to pop. */
        for (int i = 0; i < N; i++)
            ASSERT_OK(ops->push(q, &pool[i]));
        for (int i = 0; i < N / 2; i++) {
            ASSERT_PTR_EQ(ops->steal(q), &pool[i]);
            ASSERT_PTR_EQ(ops->pop(q), &pool[N - 1 - i]);
        }
        expect_empty(ops, q);

        /* A single item, taken by pop and then by steal, repeatedly: the last-item path. */
        for (int i = 0; i < N; i++) {
            ASSERT_OK(ops->push(q, &pool[i]));
            ASSERT_UEQ(ops->size(q), 1);
            ASSERT_PTR_EQ(i % 2 ? ops->steal(q) : ops->pop(q), &pool[i]);
            expect_empty(ops, q);
        }

        /* The same pointer pushed twice is two items. */
        ASSERT_OK(ops->push(q, &pool[0]));
        ASSERT_OK(ops->push(q, &pool[0]));
        ASSERT_UEQ(ops->size(q), 2);
        ASSERT_PTR_EQ(ops->steal(q), &pool[0]);
        ASSERT_PTR_EQ(ops->pop(q), &pool[0]);
        expect_empty(ops, q);
        deque_free(ops, q);
    }

    /* Growth of a wrapped array: capacity 4, top advanced to 2, then two pushes wrap around
     * the end and a third forces growth with the live items split across the wrap. */
    {
        void *q = deque_new(ops, 4);
        for (int i = 0; i < 4; i++)
            ASSERT_OK(ops->push(q, &pool[i]));
        ASSERT_PTR_EQ(ops->steal(q), &pool[0]);
        ASSERT_PTR_EQ(ops->steal(q), &pool[1]);
        ASSERT_OK(ops->push(q, &pool[4]));
        ASSERT_OK(ops->push(q, &pool[5]));
        if (ops->capacity != NULL)
            ASSERT_UEQ(ops->capacity(q), 4);
        ASSERT_OK(ops->push(q, &pool[6]));
        if (ops->capacity != NULL)
            ASSERT_UEQ(ops->capacity(q), 8);
        ASSERT_UEQ(ops->size(q), 5);
        if (ops->check != NULL)
            ops->check(q);
        ASSERT_PTR_EQ(ops->steal(q), &pool[2]);
        ASSERT_PTR_EQ(ops->pop(q), &pool[6]);
        ASSERT_PTR_EQ(ops->steal(q), &pool[3]);
        ASSERT_PTR_EQ(ops->pop(q), &pool[5]);
        ASSERT_PTR_EQ(ops->pop(q), &pool[4]);
        expect_empty(ops, q);
        deque_free(ops, q);
    }

    /* Random mixes against the model. */
    uint64_t rng = seed | 1;
    size_t steps = (size_t)test_scaled(200000, 50000);
    static const size_t caps[] = {1, 2, 3, 16};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        mixed_against_model(ops, caps[i], steps, &rng);
}

/* ---------------------------------------------------------------------------------------- */
/* growth                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* Pushes n items from capacity 1: the capacity is always the smallest power of two that holds
 * the items (it doubles exactly when full). */
static void fill_from_one(const deque_ops *ops, void *q, int *pool, size_t n)
{
    size_t growths = 0, cap = ops->capacity != NULL ? ops->capacity(q) : 0;
    for (size_t i = 0; i < n; i++) {
        ASSERT_OK(ops->push(q, &pool[i]));
        if (ops->capacity != NULL) {
            size_t c = ops->capacity(q);
            if (c != cap) {
                ASSERT_UEQ(c, cap * 2); /* doubled, and only when full */
                ASSERT_UEQ(i, cap);
                cap = c;
                growths++;
            }
        }
    }
    ASSERT_UEQ(ops->size(q), n);
    if (ops->capacity != NULL) {
        ASSERT_UEQ(growths, log2_of(cap));
        ASSERT_GE(cap, n);
        ASSERT_LT(cap / 2, n);
    }
    if (ops->check != NULL)
        ops->check(q);
}

static void test_growth(const deque_ops *ops)
{
    size_t n = ((size_t)1 << 20) + 4321; /* over 2^20 in every build: cheap, single-threaded */
    int *pool = calloc(n, sizeof(int));
    ASSERT(pool != NULL);

    /* LIFO after growth. */
    void *q = deque_new(ops, 1);
    fill_from_one(ops, q, pool, n);
    for (size_t i = n; i-- > 0;)
        ASSERT_PTR_EQ(ops->pop(q), &pool[i]);
    expect_empty(ops, q);
    deque_free(ops, q);

    /* FIFO after growth. */
    q = deque_new(ops, 1);
    fill_from_one(ops, q, pool, n);
    for (size_t i = 0; i < n; i++)
        ASSERT_PTR_EQ(ops->steal(q), &pool[i]);
    expect_empty(ops, q);
    deque_free(ops, q);

    /* Growth with top far from 0: steal as we push, so the live window slides through the
     * arrays and every growth copies a wrapped range. Then both ends are checked. */
    q = deque_new(ops, 1);
    size_t stolen = 0;
    for (size_t i = 0; i < n; i++) {
        ASSERT_OK(ops->push(q, &pool[i]));
        if (i % 3 == 2)
            ASSERT_PTR_EQ(ops->steal(q), &pool[stolen++]);
    }
    ASSERT_UEQ(ops->size(q), n - stolen);
    if (ops->check != NULL)
        ops->check(q);
    size_t top = stolen, bottom = n;
    while (top < bottom) {
        ASSERT_PTR_EQ(ops->pop(q), &pool[--bottom]);
        if (top < bottom)
            ASSERT_PTR_EQ(ops->steal(q), &pool[top++]);
    }
    expect_empty(ops, q);
    size_t cap = ops->capacity != NULL ? ops->capacity(q) : 0;
    deque_free(ops, q);
    free(pool);
    printf("  %zu items from capacity 1, in order at both ends", n);
    if (ops->capacity != NULL)
        printf(" (sliding window ended at capacity %zu)", cap);
    printf("\n");
}

/* ---------------------------------------------------------------------------------------- */
/* enomem                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static void test_enomem(const deque_ops *ops)
{
    enum { N = 8 };
    int pool[2 * N + 1];

    /* A failed initialisation reports ENOMEM; the next one works. */
    void *q = storage_new(ops);
    ws__test_fail_alloc_after(1);
    ASSERT_EQ(ops->init(q, 4), ENOMEM);
    ws__test_fail_alloc_after(0);
    ASSERT_OK(ops->init(q, 4));
    expect_empty(ops, q);
    ops->destroy(q);

    /* A request that no allocator can satisfy also fails cleanly. */
    ASSERT_EQ(ops->init(q, SIZE_MAX), ENOMEM);
    ASSERT_EQ(ops->init(q, SIZE_MAX / 4 + 2), ENOMEM);
    free(q);

    /* Fill to capacity with top advanced (a wrapped array), then fail the growth: ENOMEM, the
     * deque unchanged. Then the same push succeeds once the allocator works again. */
    for (int round = 0; round < 2; round++) {
        q = deque_new(ops, N);
        for (int i = 0; i < 3; i++)
            ASSERT_OK(ops->push(q, &pool[2 * N]));
        for (int i = 0; i < 3; i++)
            ASSERT_PTR_EQ(ops->steal(q), &pool[2 * N]);
        for (int i = 0; i < N; i++)
            ASSERT_OK(ops->push(q, &pool[i]));
        ASSERT_UEQ(ops->size(q), N);
        for (int attempt = 0; attempt < 4; attempt++) {
            ws__test_fail_alloc_after(1);
            if (attempt % 2 == 0)
                ASSERT_EQ(ops->push(q, &pool[N]), ENOMEM);
            else
                ASSERT_EQ(ops->push_size(q, &pool[N]), -1);
            ws__test_fail_alloc_after(0);
            ASSERT_UEQ(ops->size(q), N);
            if (ops->capacity != NULL)
                ASSERT_UEQ(ops->capacity(q), N);
            if (ops->check != NULL)
                ops->check(q);
        }
        if (round == 0) {
            /* Intact: every item still comes out, newest first, then the deque is empty. */
            for (int i = N - 1; i >= 0; i--)
                ASSERT_PTR_EQ(ops->pop(q), &pool[i]);
            expect_empty(ops, q);
        } else {
            /* Disarmed: the push grows the deque, and both ends still see the right order. */
            ASSERT_EQ(ops->push_size(q, &pool[N]), N);
            for (int i = N + 1; i < 2 * N; i++)
                ASSERT_OK(ops->push(q, &pool[i]));
            ASSERT_UEQ(ops->size(q), 2 * N);
            if (ops->capacity != NULL)
                ASSERT_UEQ(ops->capacity(q), 2 * N);
            for (int i = 0; i < N; i++) {
                ASSERT_PTR_EQ(ops->steal(q), &pool[i]);
                ASSERT_PTR_EQ(ops->pop(q), &pool[2 * N - 1 - i]);
            }
            expect_empty(ops, q);
        }
        deque_free(ops, q);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* splitseq: the split deque's own rules, one thread                                         */
/* ---------------------------------------------------------------------------------------- */

static void *split_new(size_t capacity, unsigned reserve)
{
    split_reserve = reserve;
    return deque_new(&impls[2], capacity);
}

/* Private items are not stolen until a thief asks and the owner pushes again; then the older
 * half becomes public; pops above the guard are private, pops below take items back; the
 * reserve makes the first items pushed onto an empty deque public at once. */
static void test_splitseq(void)
{
    const deque_ops *ops = &impls[2];
    int v[16];
    ws_sdeque *q = split_new(4, 0);
    for (int i = 0; i < 6; i++)
        ASSERT_OK(ops->push(q, &v[i])); /* grows from 4 to 8 */
    ASSERT_UEQ(ops->size(q), 6);
    ASSERT_UEQ(ws__sdeque_public(q), 0);
    ASSERT_PTR_EQ(ops->steal(q), NULL); /* all private: the thief asks */
    ASSERT_PTR_EQ(ops->steal(q), NULL);
    ASSERT_OK(ops->push(q, &v[6])); /* sees the request: shares 4 of the 7 */
    ASSERT_UEQ(ws__sdeque_public(q), 4);
    ASSERT_PTR_EQ(ops->steal(q), &v[0]);
    ASSERT_PTR_EQ(ops->steal(q), &v[1]);
    ASSERT_UEQ(ws__sdeque_public(q), 2);
    for (int i = 6; i >= 4; i--)
        ASSERT_PTR_EQ(ops->pop(q), &v[i]); /* private pops */
    ASSERT_PTR_EQ(ops->pop(q), &v[3]);     /* below the guard: moves it down */
    ASSERT_UEQ(ws__sdeque_public(q), 1);
    ASSERT_PTR_EQ(ops->pop(q), &v[2]); /* the last public item, taken like a thief */
    ASSERT_UEQ(ws__sdeque_public(q), 0);
    expect_empty(ops, q);
    deque_free(ops, q);

    q = split_new(4, 2);
    ASSERT_EQ(ops->push_size(q, &v[0]), 0); /* empty: the guard goes 2 above */
    ASSERT_OK(ops->push(q, &v[1]));         /* into the reserve: public at once */
    ASSERT_OK(ops->push(q, &v[2]));         /* above the guard: private */
    ASSERT_PTR_EQ(ops->steal(q), &v[0]);
    ASSERT_PTR_EQ(ops->steal(q), &v[1]);
    ASSERT_PTR_EQ(ops->steal(q), NULL);
    ASSERT_PTR_EQ(ops->pop(q), &v[2]);
    ASSERT_PTR_EQ(ops->pop(q), NULL); /* the rest was stolen */
    expect_empty(ops, q);
    ASSERT_EQ(ops->push_size(q, &v[3]), 0); /* empty again: a new reserve */
    ASSERT_PTR_EQ(ops->steal(q), &v[3]);
    ASSERT_PTR_EQ(ops->pop(q), NULL);
    expect_empty(ops, q);
    deque_free(ops, q);

    /* A reserve above items that the owner pops back: the pops take them back with CAS. */
    q = split_new(2, 3);
    for (int i = 0; i < 3; i++)
        ASSERT_OK(ops->push(q, &v[i]));
    for (int i = 2; i >= 0; i--)
        ASSERT_PTR_EQ(ops->pop(q), &v[i]);
    expect_empty(ops, q);
    deque_free(ops, q);
}

/* ---------------------------------------------------------------------------------------- */
/* requests: a closed fast path stays closed until a slow push, one thread                  */
/* ---------------------------------------------------------------------------------------- */

/* A push as join.c's push_rare makes it when the fast path declines: the slow push, then (what
 * ws__worker_update_depth_limit does) a new depth cap. steal_between, if set, runs between the
 * two, as a thief's request (or the profiler's ws__sdeque_force_slow) can. */
static void push_rare_with(ws_sdeque *q, void *item, void (*between)(ws_sdeque *))
{
    bool published;
    ASSERT(ws__sdeque_push_slow(q, item, &published) >= 0);
    if (between != NULL)
        between(q);
    ws__sdeque_set_depth_cap(q, INT64_MAX);
}
static void ask_between(ws_sdeque *q)
{
    ASSERT_PTR_EQ(ws_sdeque_steal(q), NULL); /* nothing public: the thief asks */
}

/* A thief that asks while the owner is inside a slow push (after it read the request flag) is
 * served by the owner's next slow push: the depth cap's update must not reopen the fast path
 * over the request, or no push would share again. The same for the profiler's closing of the
 * fast path. And however many items the owner holds, ws__sdeque_publish_all makes every one
 * public (the deque refuses a push past WS_SDEQUE_MAX_ITEMS: the caller runs the item). */
static void test_requests(void)
{
    const deque_ops *ops = &impls[2];
    enum { N = 12 };
    int v[N];
    ws_sdeque *q = split_new(256, 0);
    ASSERT_OK(ops->push(q, &v[0])); /* onto the empty deque: slow */
    ASSERT_OK(ops->push(q, &v[1]));
    push_rare_with(q, &v[2], ask_between);
    for (int i = 3; i < N; i++)
        ASSERT_OK(ops->push(q, &v[i]));
    ASSERT(ws__sdeque_public(q) > 0); /* the next push saw the request and shared */
    ASSERT_PTR_EQ(ops->steal(q), &v[0]);
    deque_free(ops, q);

    q = split_new(256, 0);
    ASSERT_OK(ops->push(q, &v[0]));
    ASSERT_OK(ops->push(q, &v[1]));
    push_rare_with(q, &v[2], ws__sdeque_force_slow);
    ASSERT(!ws__sdeque_fits(q)); /* still closed: the next push goes to the slow path */
    deque_free(ops, q);

    enum { MANY = WS_SDEQUE_MAX_ITEMS + 5000 };
    int *w = calloc(MANY, sizeof *w);
    ASSERT(w != NULL);
    q = split_new(256, 4);
    size_t pushed = 0;
    while (pushed < MANY && ops->push(q, &w[pushed]) == 0)
        pushed++;
    ASSERT_UEQ(pushed, WS_SDEQUE_MAX_ITEMS); /* the rest is refused (the caller runs it) */
    ASSERT(ws__sdeque_publish_all(q));
    ASSERT_UEQ(ws__sdeque_public(q), ops->size(q)); /* every item, not 65,535 of them */
    for (size_t i = 0; i < pushed; i++)
        ASSERT_PTR_EQ(ops->steal(q), &w[i]);
    expect_empty(ops, q);
    deque_free(ops, q);
    free(w);
}

/* ---------------------------------------------------------------------------------------- */
/* shrink: the split deque gives memory back, one thread                                    */
/* ---------------------------------------------------------------------------------------- */

/* Bytes of one array of capacity cap, as deque.c counts them. */
static size_t array_size(size_t cap)
{
    return sizeof(ws_deque_array) + cap * sizeof(void *);
}

/* Pushes v[0..n-1], then pops them all in LIFO order and pops once more (empty). */
static void burst(ws_sdeque *q, int *v, int n)
{
    const deque_ops *ops = &impls[2];
    for (int i = 0; i < n; i++)
        ASSERT_OK(ops->push(q, &v[i]));
    for (int i = n - 1; i >= 0; i--)
        ASSERT_PTR_EQ(ops->pop(q), &v[i]);
    ASSERT_PTR_EQ(ops->pop(q), NULL);
}

/* Retired arrays are freed at once with no thief about; a big array stays while bursts come
 * back (the tripwire at capacity/8 disarms the shrink), goes at an empty pop once it has been
 * quiet for 10 ms, and goes at once before the owner sleeps (ws__sdeque_trim), keeping live
 * items in order. */
static void test_shrink(void)
{
    const deque_ops *ops = &impls[2];
    int v[64];
    ws_sdeque *q = split_new(4, 0);
    ASSERT_UEQ(ws__sdeque_bytes(q), array_size(4));
    burst(q, v, 40); /* grows 4 -> 64; each replaced array is freed at once */
    ASSERT_UEQ(ops->capacity(q), 64);
    ASSERT_UEQ(ws__sdeque_bytes(q), array_size(64));
    /* relaxed: one thread. */
    uint64_t growths = ws_load_relaxed(&q->growths);
    for (int round = 0; round < 5; round++) /* bursts past capacity/8: the array stays */
        burst(q, v, 9);
    ASSERT_UEQ(ops->capacity(q), 64);
    ASSERT_UEQ(ws_load_relaxed(&q->growths), growths); /* relaxed: one thread */
    uint64_t armed_ns = ws__now_ns(); /* about when the last burst's empty pop armed it */
    burst(q, v, 7);                   /* below the tripwire */
    if (ws__now_ns() - armed_ns < 10 * 1000 * 1000) /* not yet quiet for 10 ms: kept */
        ASSERT_UEQ(ops->capacity(q), 64);
    struct timespec pause = {0, 11 * 1000 * 1000};
    nanosleep(&pause, NULL); /* longer than the quiet time: the next empty pop shrinks */
    ASSERT_PTR_EQ(ops->pop(q), NULL);
    ASSERT_UEQ(ops->capacity(q), 4);
    ASSERT_UEQ(ws__sdeque_bytes(q), array_size(4));

    burst(q, v, 40);    /* grows again */
    ws__sdeque_trim(q); /* empty, about to sleep: at once */
    ASSERT_UEQ(ops->capacity(q), 4);
    for (int i = 0; i < 40; i++)
        ASSERT_OK(ops->push(q, &v[i]));
    for (int i = 39; i >= 3; i--)
        ASSERT_PTR_EQ(ops->pop(q), &v[i]);
    ws__sdeque_trim(q); /* 3 items of 64: a 16-slot array, at most a quarter full */
    ASSERT_UEQ(ops->capacity(q), 16);
    ASSERT_UEQ(ws__sdeque_bytes(q), array_size(16));
    ASSERT_UEQ(ops->size(q), 3);
    ASSERT_PTR_EQ(ops->steal(q), NULL); /* private: the thief asks */
    ASSERT_OK(ops->push(q, &v[3]));     /* shares the older half */
    ASSERT_PTR_EQ(ops->steal(q), &v[0]);
    for (int i = 3; i >= 1; i--)
        ASSERT_PTR_EQ(ops->pop(q), &v[i]);
    expect_empty(ops, q);
    deque_free(ops, q);

    /* A thief's request pending while the owner trims: limit stays 0 for the next slow push,
     * and the room that push installs is the smaller array's (else a burst of pushes into the
     * reserve could overrun it). */
    q = split_new(4, 8);
    burst(q, v, 40);
    ASSERT_UEQ(ops->capacity(q), 64);
    ASSERT_PTR_EQ(ops->steal(q), NULL); /* asks: limit 0 */
    ws__sdeque_trim(q);
    ASSERT_UEQ(ops->capacity(q), 4);
    ASSERT(ws__sdeque_room(q) <= (int64_t)q->mask);
    ASSERT_EQ(ops->push_size(q, &v[0]), 0); /* onto the empty deque: a reserve of 8 */
    for (int i = 1; i < 8; i++)
        ASSERT_OK(ops->push(q, &v[i])); /* into the reserve; grows past 4 on the way */
    ASSERT(ops->capacity(q) >= 8);
    for (int i = 0; i < 8; i++)
        ASSERT_PTR_EQ(ops->steal(q), &v[i]); /* all public, oldest first */
    expect_empty(ops, q);
    deque_free(ops, q);
}

/* ---------------------------------------------------------------------------------------- */
/* Items with a magic value and a consume counter                                            */
/* ---------------------------------------------------------------------------------------- */

#define ITEM_MAGIC 0x57d3c0de5eed1e55ULL

typedef struct item {
    uint64_t magic;         /* ITEM_MAGIC; written by the owner before the push */
    uint64_t seq;           /* the item's number in the run; same */
    uint64_t round;         /* the batch (stress) or round (lastrace) it belongs to; same */
    _Atomic uint32_t taken; /* consumptions; incremented by whoever gets the item */
} item;

/* Records one consumption of x, which came from a deque of round `round`. The plain fields
 * were published by the push (release) and acquired by the pop or steal. */
static void consume(void *x, uint64_t round, const char *who)
{
    item *it = x;
    if (it->magic != ITEM_MAGIC)
        WS_TEST_FAIL("%s got a pointer that is not an item (%p, magic %" PRIx64 ")", who, x,
                     it->magic);
    if (it->round != round)
        WS_TEST_FAIL("%s got item %" PRIu64 " of round %" PRIu64 " from round %" PRIu64, who,
                     it->seq, it->round, round);
    /* release: the reads above happen before whoever acquires this count reuses the record. */
    uint32_t before = ws_fetch_add_release(&it->taken, 1);
    if (before != 0)
        WS_TEST_FAIL("item %" PRIu64 " taken twice (%s got it after %u earlier consumption(s))",
                     it->seq, who, before);
}

static void item_set(item *it, uint64_t seq, uint64_t round)
{
    it->magic = ITEM_MAGIC;
    it->seq = seq;
    it->round = round;
    /* relaxed: published with the plain fields by the push that follows. */
    ws_store_relaxed(&it->taken, 0);
}

/* Random short stalls vary the interleavings: now and then a few pause instructions, rarely
 * a yield of the time slice. */
static void maybe_stall(uint64_t *rng)
{
    uint64_t r = test_rand(rng);
    if ((r & 63) == 0) {
        for (unsigned i = (unsigned)((r >> 8) & 127); i > 0; i--)
            ws__cpu_relax();
    } else if ((r & 8191) == 1) {
        ws__thread_yield();
    }
}

static uint64_t env_or(const char *name, uint64_t fallback)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return fallback;
    char *end;
    unsigned long long n = strtoull(v, &end, 0);
    if (*end != '\0' || n == 0) {
        fprintf(stderr, "test_deque: ignoring invalid %s=%s\n", name, v);
        return fallback;
    }
    return n;
}

/* ---------------------------------------------------------------------------------------- */
/* stress                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* Items go through the deques in batches. Every batch gets a fresh deque of capacity 1 or 2,
 * so the arrays grow many times while thieves are stealing. A thief finds the current deque
 * through `current`; the deque of batch k is destroyed once every thief has announced (in
 * `seen`) that it loaded a later batch, so no thief can still be inside it. */
enum { STRESS_BATCH = 1 << 14 };

typedef struct stress_round {
    void *deque;
    uint64_t number; /* 1, 2, ...; written before `current` publishes the round */
} stress_round;

typedef struct stress_thief {
    alignas(WS_CACHE_LINE) pthread_t thread;
    struct stress *s;
    uint64_t rng;
    _Atomic uint64_t stolen; /* written by this thief only (release); read by the owner */
    _Atomic uint64_t seen;   /* last round number this thief loaded; same */
} stress_thief;

typedef struct stress {
    const deque_ops *ops;
    alignas(WS_CACHE_LINE) _Atomic(stress_round *) current; /* written by the owner */
    _Atomic bool done;                                      /* written by the owner */
} stress;

static void *stress_thief_main(void *arg)
{
    stress_thief *t = arg;
    stress *s = t->s;
    uint64_t stolen = 0, seen = 0;
    unsigned misses = 0;
    for (;;) {
        /* acquire: pairs with the owner's release store of current, so the round's fields
         * and its initialised deque are visible. */
        stress_round *r = ws_load_acquire(&s->current);
        if (r == NULL) {
            /* acquire: the owner clears current and then sets done (release). */
            if (ws_load_acquire(&s->done))
                break;
            ws__thread_yield();
            continue;
        }
        if (r->number != seen) {
            seen = r->number;
            /* release: every steal on earlier rounds' deques happens before the owner, who
             * acquires this, destroys them. */
            ws_store_release(&t->seen, seen);
        }
        void *x = s->ops->steal(r->deque);
        if (x != NULL) {
            consume(x, r->number, "a thief");
            /* release: one writer; the consumption above happens before the owner's check of
             * the batch, which acquires this count. */
            ws_store_release(&t->stolen, ++stolen);
            misses = 0;
        } else if (++misses % 64 == 0) {
            ws__thread_yield(); /* more threads than cores: let the owner run */
        }
        maybe_stall(&t->rng);
    }
    return NULL;
}

static uint64_t stress_stolen(stress_thief *thieves, unsigned n)
{
    uint64_t sum = 0;
    for (unsigned i = 0; i < n; i++)
        sum += ws_load_acquire(&thieves[i].stolen); /* acquire: pairs with the thief's release */
    return sum;
}

static void stress_wait_seen(stress_thief *thieves, unsigned n, uint64_t number)
{
    for (unsigned i = 0; i < n; i++)
        while (ws_load_acquire(&thieves[i].seen) < number) /* acquire: see the thief's store */
            ws__thread_yield();
}

/* The owner found its deque empty: for the split deque, give a big array back at once (as a
 * worker does before it sleeps), while thieves may still be reading the old one. 1 if the
 * array shrank. */
static int stress_trim(const deque_ops *ops, void *q)
{
    if (ops->trim == NULL)
        return 0;
    size_t before = ops->capacity(q);
    ops->trim(q);
    return ops->capacity(q) < before;
}

static void test_stress(const deque_ops *ops, uint64_t seed, unsigned nthieves, uint64_t nitems)
{
    uint64_t nbatches = (nitems + STRESS_BATCH - 1) / STRESS_BATCH;
    item *items = calloc(STRESS_BATCH, sizeof(item));
    stress_round *rounds = calloc(nbatches, sizeof(stress_round));
    stress_thief *thieves = aligned_alloc(WS_CACHE_LINE, nthieves * sizeof(stress_thief));
    ASSERT(items != NULL && rounds != NULL && thieves != NULL);
    stress s = {.ops = ops};
    ws_store_relaxed(&s.current, NULL); /* relaxed: before the threads exist */
    ws_store_relaxed(&s.done, false);
    for (unsigned i = 0; i < nthieves; i++) {
        thieves[i].s = &s;
        thieves[i].rng = (seed + 0x9e3779b97f4a7c15ULL * (i + 1)) | 1;
        ws_store_relaxed(&thieves[i].stolen, 0); /* relaxed: before the threads exist */
        ws_store_relaxed(&thieves[i].seen, 0);
        ASSERT_OK(pthread_create(&thieves[i].thread, NULL, stress_thief_main, &thieves[i]));
    }

    uint64_t rng = seed | 1, pushed = 0, popped = 0, growths = 0, max_size = 0, shrinks = 0;
    for (uint64_t k = 0; k < nbatches; k++) {
        uint64_t n = nitems - pushed < STRESS_BATCH ? nitems - pushed : STRESS_BATCH;
        split_reserve = (unsigned)(k % 3); /* only the split deque has a reserve */
        void *q = deque_new(ops, 1 + (k & 1));
        size_t cap0 = ops->capacity != NULL ? ops->capacity(q) : 0;
        rounds[k].deque = q;
        rounds[k].number = k + 1;
        /* release: publishes the initialised deque and the round; pairs with the thieves'
         * acquire of current. */
        ws_store_release(&s.current, &rounds[k]);

        /* Random bursts of pushes and pops; now and then a long burst of pushes, which
         * outruns the thieves and makes the array grow. */
        uint64_t i = 0, popped_batch = 0;
        while (i < n) {
            uint64_t r = test_rand(&rng);
            uint64_t burst = 1 + ((r >> 8) & 31);
            if (((r >> 40) & 255) == 0)
                burst = 1 + ((r >> 16) & 2047);
            if (r & 128) {
                for (uint64_t j = 0; j < burst && i < n; j++, i++) {
                    item_set(&items[i], pushed + i, k + 1);
                    if (r & 64) {
                        ASSERT_OK(ops->push(q, &items[i]));
                    } else {
                        /* Thieves only shrink the deque, so the size before this push is at
                         * most what the owner has pushed and not popped in this batch. */
                        int64_t before = ops->push_size(q, &items[i]);
                        ASSERT_GE(before, 0);
                        ASSERT_LE(before, i - popped_batch);
                    }
                }
                size_t sz = ops->size(q);
                if (sz > max_size)
                    max_size = sz;
            } else {
                for (uint64_t j = 0; j < burst; j++) {
                    void *x = ops->pop(q);
                    if (x == NULL) {
                        shrinks += stress_trim(ops, q);
                        break;
                    }
                    consume(x, k + 1, "the owner");
                    popped++;
                    popped_batch++;
                }
            }
            maybe_stall(&rng);
        }
        pushed += n;
        void *x;
        while ((x = ops->pop(q)) != NULL) {
            consume(x, k + 1, "the owner");
            popped++;
        }
        /* The owner found the deque empty; wait for the thieves to finish consuming what they
         * took. A lost item would hang here, and the test's timeout reports it. */
        while (popped + stress_stolen(thieves, nthieves) < pushed)
            ws__thread_yield();
        ASSERT_EQ(popped + stress_stolen(thieves, nthieves), pushed);
        ASSERT_UEQ(ops->size(q), 0);
        for (uint64_t j = 0; j < n; j++) {
            /* relaxed: the acquire loads of the thieves' counts above ordered these. */
            uint32_t taken = ws_load_relaxed(&items[j].taken);
            if (taken != 1)
                WS_TEST_FAIL("item %" PRIu64 " taken %u times", items[j].seq, taken);
        }
        if (ops->capacity != NULL && ops->trim == NULL)
            growths += log2_of(ops->capacity(q)) - log2_of(cap0);

        /* Every thief has moved on from the previous batch's deque by now (or soon will). */
        if (k > 0) {
            stress_wait_seen(thieves, nthieves, k + 1);
            deque_free(ops, rounds[k - 1].deque);
            rounds[k - 1].deque = NULL;
        }
    }

    ws_store_release(&s.current, NULL); /* release: see the thieves' exit test */
    ws_store_release(&s.done, true);    /* release: pairs with the thieves' acquire of done */
    for (unsigned i = 0; i < nthieves; i++)
        pthread_join(thieves[i].thread, NULL);
    if (nbatches > 0)
        deque_free(ops, rounds[nbatches - 1].deque);

    uint64_t stolen = stress_stolen(thieves, nthieves);
    ASSERT_EQ(popped + stolen, nitems);
    printf("  %" PRIu64 " items in %" PRIu64 " batches, %u thieves: popped by the owner %" PRIu64
           ", stolen %" PRIu64 " (%.1f%%), largest size %" PRIu64,
           nitems, nbatches, nthieves, popped, stolen,
           nitems ? 100.0 * (double)stolen / (double)nitems : 0.0, max_size);
    if (ops->capacity != NULL && ops->trim == NULL)
        printf(", %" PRIu64 " growths under contention", growths);
    if (ops->trim != NULL) {
        printf(", %" PRIu64 " shrinks under contention", shrinks);
        if (shrinks == 0)
            WS_TEST_FAIL("no shrink: the owner never found a big array empty");
    }
    printf("\n  stolen per thief:");
    for (unsigned i = 0; i < nthieves; i++)
        printf(" %" PRIu64, ws_load_relaxed(&thieves[i].stolen)); /* relaxed: joined */
    printf("\n");
    free(thieves);
    free(rounds);
    free(items);
}

/* ---------------------------------------------------------------------------------------- */
/* lastrace                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Each round the owner pushes one item, announces the round, waits a random few pauses and
 * pops, while every thief that sees the announcement tries one steal. Records come from a
 * ring; the owner checks that a record was taken exactly once before reusing it. */
enum { RACE_RING = 1 << 16, RACE_WINDOW = 1024, RACE_DELAY_MAX = 64 };
#define RACE_STOP UINT64_MAX

typedef struct race_thief {
    alignas(WS_CACHE_LINE) pthread_t thread;
    struct race *race;
    uint64_t attempts, wins; /* read by the owner after the join */
} race_thief;

typedef struct race {
    const deque_ops *ops;
    void *q;
    alignas(WS_CACHE_LINE) _Atomic uint64_t round; /* written by the owner; thieves spin on it */
} race;

static void *race_thief_main(void *arg)
{
    race_thief *t = arg;
    race *rc = t->race;
    uint64_t last = 0;
    unsigned spins = 0;
    for (;;) {
        /* acquire: pairs with the owner's release store of round (not needed for the item,
         * which the steal acquires, but it keeps the round number and the pushed item
         * ordered for the check in consume). */
        uint64_t r = ws_load_acquire(&rc->round);
        if (r == RACE_STOP)
            break;
        if (r == last) {
            if (++spins % 256 == 0)
                ws__thread_yield(); /* more threads than cores */
            else
                ws__cpu_relax();
            continue;
        }
        last = r;
        t->attempts++;
        void *x = rc->ops->steal(rc->q);
        if (x != NULL) {
            /* Every earlier round's item was taken before round r was announced, so the
             * deque can only hold the item of round r or, if the owner has moved on since,
             * a later one. */
            item *it = x;
            if (it->magic == ITEM_MAGIC && it->round < r)
                WS_TEST_FAIL("a thief got the item of round %" PRIu64 " in round %" PRIu64,
                             it->round, r);
            consume(x, it->round, "a thief");
            t->wins++;
        }
    }
    return NULL;
}

static void test_lastrace(const deque_ops *ops, uint64_t seed, unsigned nthieves, uint64_t rounds)
{
    item *ring = calloc(RACE_RING, sizeof(item));
    race_thief *thieves = aligned_alloc(WS_CACHE_LINE, nthieves * sizeof(race_thief));
    ASSERT(ring != NULL && thieves != NULL);
    race rc = {.ops = ops, .q = deque_new(ops, 1)};
    ws_store_relaxed(&rc.round, 0); /* relaxed: before the threads exist */
    for (unsigned i = 0; i < nthieves; i++) {
        thieves[i].race = &rc;
        thieves[i].attempts = thieves[i].wins = 0;
        ASSERT_OK(pthread_create(&thieves[i].thread, NULL, race_thief_main, &thieves[i]));
    }

    uint64_t rng = seed | 1, owner_wins = 0, thief_wins = 0, window_thief_wins = 0;
    /* Pauses before the pop, at most RACE_DELAY_MAX (a pause is some tens of ns); adapted
     * every RACE_WINDOW rounds so that the thieves win between 1/8 and 1/2 of the rounds. */
    unsigned delay_max = 16;
    for (uint64_t r = 1; r <= rounds; r++) {
        item *it = &ring[r % RACE_RING];
        if (r > RACE_RING) {
            /* acquire: pairs with the release in consume, so the consumer's reads of the
             * record happen before we rewrite it. */
            uint32_t taken = ws_load_acquire(&it->taken);
            if (taken != 1)
                WS_TEST_FAIL("round %" PRIu64 ": item taken %u times", it->round, taken);
        }
        item_set(it, r, r);
        /* The previous round's item is gone, and we saw who took it (the acquire of taken
         * below, or our own pop), so the owner knows the deque is empty: push_size must say
         * so. The scheduler relies on this to wake idle workers. */
        ASSERT_EQ(ops->push_size(rc.q, it), 0);
        /* release: announces the round after the push; the thieves spin on it. */
        ws_store_release(&rc.round, r);
        for (unsigned d = (unsigned)(test_rand(&rng) % delay_max); d > 0; d--)
            ws__cpu_relax();
        void *x = ops->pop(rc.q);
        if (x != NULL) {
            ASSERT_PTR_EQ(x, it);
            consume(x, r, "the owner");
            owner_wins++;
        } else {
            /* A thief won: wait until it has recorded the item. If pop said empty but nobody
             * has the item, a steal from here finds it, which is the bug being looked for. */
            thief_wins++;
            window_thief_wins++;
            for (unsigned spin = 1; ws_load_acquire(&it->taken) == 0; spin++) {
                if (spin % 1024 == 0) {
                    void *lost = ops->steal(rc.q);
                    if (lost != NULL)
                        WS_TEST_FAIL("round %" PRIu64 ": pop returned NULL but the item was "
                                     "still in the deque",
                                     r);
                    ws__thread_yield();
                }
            }
        }
        ASSERT_UEQ(ops->size(rc.q), 0);
        /* Keep both outcomes common: lengthen the owner's delay while thieves rarely win,
         * shorten it while they win most rounds. */
        if (r % RACE_WINDOW == 0) {
            if (window_thief_wins * 8 < RACE_WINDOW && delay_max < RACE_DELAY_MAX)
                delay_max *= 2;
            else if (window_thief_wins * 2 > RACE_WINDOW && delay_max > 1)
                delay_max /= 2;
            window_thief_wins = 0;
        }
    }
    ws_store_release(&rc.round, RACE_STOP); /* release: ends the thieves' loops */
    uint64_t sum = 0, attempts = 0;
    for (unsigned i = 0; i < nthieves; i++) {
        pthread_join(thieves[i].thread, NULL);
        sum += thieves[i].wins;
        attempts += thieves[i].attempts;
    }
    expect_empty(ops, rc.q);
    uint64_t checked = rounds < RACE_RING ? rounds : RACE_RING;
    for (uint64_t j = 0; j < checked; j++) {
        item *it = &ring[(rounds - j) % RACE_RING];
        uint32_t taken = ws_load_relaxed(&it->taken); /* relaxed: every thread joined */
        if (taken != 1)
            WS_TEST_FAIL("round %" PRIu64 ": item taken %u times", it->round, taken);
    }
    ASSERT_EQ(owner_wins + thief_wins, rounds);
    ASSERT_EQ(sum, thief_wins);
    printf("  %" PRIu64 " rounds, %u thieves: the owner won %" PRIu64 ", thieves won %" PRIu64
           " with %" PRIu64 " steal attempts (final owner delay up to %u pauses)\n",
           rounds, nthieves, owner_wins, thief_wins, attempts, delay_max);
    if (owner_wins == 0 || thief_wins == 0)
        printf("  note: one side never won; the race was not exercised in this run\n");
    deque_free(ops, rc.q);
    free(thieves);
    free(ring);
}

/* ---------------------------------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr,
            "usage: test_deque sequential|growth|enomem|stress|lastrace|splitseq|shrink|requests "
            "lockfree|locked|split [thieves] [items]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 3)
        usage();
    const deque_ops *ops = NULL;
    for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++)
        if (strcmp(argv[2], impls[i].name) == 0)
            ops = &impls[i];
    if (ops == NULL)
        usage();
    const char *test = argv[1];
    unsigned thieves = (unsigned)env_or("WS_DEQUE_THIEVES", 2);
    if (argc > 3)
        thieves = (unsigned)strtoul(argv[3], NULL, 0);
    if (thieves == 0 || thieves > 256)
        usage();

    char label[64];
    snprintf(label, sizeof label, "deque %s %s", test, ops->name);
    uint64_t seed = test_seed(label);

    if (strcmp(test, "sequential") == 0) {
        test_sequential(ops, seed);
    } else if (strcmp(test, "growth") == 0) {
        test_growth(ops);
    } else if (strcmp(test, "splitseq") == 0) {
        test_splitseq();
    } else if (strcmp(test, "shrink") == 0) {
        test_shrink();
    } else if (strcmp(test, "requests") == 0) {
        test_requests();
    } else if (strcmp(test, "enomem") == 0) {
        test_enomem(ops);
    } else if (strcmp(test, "stress") == 0) {
        uint64_t n = env_or("WS_DEQUE_ITEMS", test_scaled(10000000, 2000000));
        if (argc > 4)
            n = strtoull(argv[4], NULL, 0);
        test_stress(ops, seed, thieves, n);
    } else if (strcmp(test, "lastrace") == 0) {
        uint64_t n = env_or("WS_DEQUE_ITEMS", test_scaled(2000000, 500000));
        if (argc > 4)
            n = strtoull(argv[4], NULL, 0);
        test_lastrace(ops, seed, thieves, n);
    } else {
        usage();
    }
    printf("%s: ok\n", label);
    return 0;
}
