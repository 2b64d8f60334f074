/* test.h: assertions that print both sides and stay on in every build, and the knobs shared by
 * the tests (scale, seed). Header-only so each test is one self-contained program.
 */
#ifndef WS_TEST_H
#define WS_TEST_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* 1 when built with ThreadSanitizer (gcc or clang), else 0: timing checks loosen under it. */
#if defined(__SANITIZE_THREAD__)
#define WS_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WS_TEST_TSAN 1
#endif
#endif
#ifndef WS_TEST_TSAN
#define WS_TEST_TSAN 0
#endif

#define WS_TEST_FAIL(...)                                     \
    do {                                                      \
        fflush(stdout);                                       \
        fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                         \
        fputc('\n', stderr);                                  \
        abort();                                              \
    } while (0)

#define ASSERT(cond)                   \
    do {                               \
        if (!(cond))                   \
            WS_TEST_FAIL("%s", #cond); \
    } while (0)

/* Compare as intmax_t / uintmax_t and print both sides. */
#define ASSERT_CMP_(a, op, b, T, fmt)                                             \
    do {                                                                          \
        T a_ = (T)(a), b_ = (T)(b);                                               \
        if (!(a_ op b_))                                                          \
            WS_TEST_FAIL("%s %s %s (%" fmt " vs %" fmt ")", #a, #op, #b, a_, b_); \
    } while (0)
#define ASSERT_EQ(a, b)  ASSERT_CMP_(a, ==, b, intmax_t, PRIdMAX)
#define ASSERT_NE(a, b)  ASSERT_CMP_(a, !=, b, intmax_t, PRIdMAX)
#define ASSERT_LT(a, b)  ASSERT_CMP_(a, <, b, intmax_t, PRIdMAX)
#define ASSERT_LE(a, b)  ASSERT_CMP_(a, <=, b, intmax_t, PRIdMAX)
#define ASSERT_GT(a, b)  ASSERT_CMP_(a, >, b, intmax_t, PRIdMAX)
#define ASSERT_GE(a, b)  ASSERT_CMP_(a, >=, b, intmax_t, PRIdMAX)
#define ASSERT_UEQ(a, b) ASSERT_CMP_(a, ==, b, uintmax_t, PRIuMAX)
#define ASSERT_OK(e)     ASSERT_EQ((e), 0)
#define ASSERT_PTR_EQ(a, b)                                      \
    do {                                                         \
        const void *a_ = (a), *b_ = (b);                         \
        if (a_ != b_)                                            \
            WS_TEST_FAIL("%s == %s (%p vs %p)", #a, #b, a_, b_); \
    } while (0)

/* WS_TEST_LONG=1: the stress tests at their full length (as CI runs them); by default they run
 * a quarter of it, so that `make test` stays short on a busy machine. */
static inline int test_long(void)
{
    const char *env = getenv("WS_TEST_LONG");
    return env != NULL && *env != '\0' && strcmp(env, "0") != 0;
}

/* Sizes shrink under sanitizers (about 10-50x slower) and without WS_TEST_LONG; WS_TEST_SCALE
 * (a positive number, default 1) multiplies every size for longer local runs. Each size keeps its
 * own minimum (test_scaled). */
static inline double test_scale(void)
{
    double s = test_long() ? 1.0 : 0.25;
    const char *env = getenv("WS_TEST_SCALE");
    if (env != NULL && atof(env) > 0)
        s *= atof(env);
#if defined(WS_SANITIZED)
    s *= 0.05;
#endif
    return s;
}

static inline uint64_t test_scaled(uint64_t n, uint64_t minimum)
{
    uint64_t v = (uint64_t)((double)n * test_scale());
    return v < minimum ? minimum : v;
}

/* A hang guard inside a test: base seconds (sized for the plain build on an idle machine) times
 * WS_TEST_TIMEOUT_SCALE, which ctest sets to the factor it applied to the test's own TIMEOUT
 * (the top CMakeLists.txt, "test time limits"), so that both guards grow together. */
static inline double test_hang_seconds(double base)
{
    const char *env = getenv("WS_TEST_TIMEOUT_SCALE");
    double scale = env != NULL ? atof(env) : 0;
    return base * (scale > 0 ? scale : 1);
}

/* A seed from WS_TEST_SEED, else from the clock; always printed so a failure can be replayed. */
static inline uint64_t test_seed(const char *test)
{
    const char *env = getenv("WS_TEST_SEED");
    uint64_t seed = env != NULL ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
    printf("%s: seed %" PRIu64 " (set WS_TEST_SEED to replay)\n", test, seed);
    return seed;
}

/* xorshift64*: a small, fast generator with a per-thread state. */
static inline uint64_t test_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

#endif /* WS_TEST_H */
