/* test_watchdog.h: a hang guard for the tests whose failure mode is a hang (a deadlock of the
 * library on a program that has none). A thread watches a progress counter that the test bumps
 * at every step it makes; when the counter has not moved for the given time, it prints one line
 * naming the test, runs the test's own report (its seed, the program, where each part of it
 * stands) and aborts, so that a hang fails with that report long before ctest's TIMEOUT kills
 * the process without one. Also the pause of the spinning waits of those tests.
 *
 * One watchdog per process. Header-only, for C11 and C++17 (the tests of both languages use it):
 * pthreads and the GCC/Clang __atomic builtins, which both languages accept.
 */
#ifndef WS_TEST_WATCHDOG_H
#define WS_TEST_WATCHDOG_H

#include "test.h"

#include <pthread.h>
#include <stdbool.h>

typedef struct test_watchdog {
    unsigned long progress; /* __atomic: bumped by the test, read by the watchdog */
    unsigned stop;          /* __atomic: set by test_watchdog_stop */
    double seconds;         /* no progress for this long is a hang */
    const char *name;       /* the test, for the line printed on a hang */
    void (*report)(void *ctx);
    void *ctx;
    pthread_t thread;
    bool running;
} test_watchdog;

static test_watchdog test_watchdog_one;

static inline double test_watchdog_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One pause of a spinning wait (the CPU's pause instruction where there is one). */
static inline void test_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

/* Any thread: the test made a step. */
static inline void test_progress(void)
{
    __atomic_fetch_add(&test_watchdog_one.progress, 1, __ATOMIC_RELAXED);
}

static void *test_watchdog_main(void *arg)
{
    test_watchdog *w = (test_watchdog *)arg;
    unsigned long seen = __atomic_load_n(&w->progress, __ATOMIC_RELAXED);
    double since = test_watchdog_now();
    while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
        struct timespec tick = {0, 50 * 1000 * 1000};
        nanosleep(&tick, NULL);
        unsigned long now = __atomic_load_n(&w->progress, __ATOMIC_RELAXED);
        if (now != seen) {
            seen = now;
            since = test_watchdog_now();
            continue;
        }
        if (test_watchdog_now() - since < w->seconds)
            continue;
        fflush(stdout);
        fprintf(stderr, "%s: FAIL: hang: no progress for %.0f s (watchdog)\n", w->name, w->seconds);
        if (w->report != NULL)
            w->report(w->ctx);
        fflush(stderr);
        abort();
    }
    return NULL;
}

/* Starts the watchdog: a hang is `base_seconds` (test_hang_seconds scales them as ctest scales
 * the test's TIMEOUT) without a call of test_progress. report (may be NULL) prints what the
 * test knows, on stderr, before the abort. */
static inline void test_watchdog_start(const char *name, double base_seconds,
                                       void (*report)(void *ctx), void *ctx)
{
    test_watchdog *w = &test_watchdog_one;
    w->seconds = test_hang_seconds(base_seconds);
    w->name = name;
    w->report = report;
    w->ctx = ctx;
    __atomic_store_n(&w->stop, 0u, __ATOMIC_RELAXED);
    if (pthread_create(&w->thread, NULL, test_watchdog_main, w) != 0)
        WS_TEST_FAIL("%s: cannot start the watchdog thread", name);
    w->running = true;
}

static inline void test_watchdog_stop(void)
{
    test_watchdog *w = &test_watchdog_one;
    if (!w->running)
        return;
    __atomic_store_n(&w->stop, 1u, __ATOMIC_RELEASE);
    pthread_join(w->thread, NULL);
    w->running = false;
}

#endif /* WS_TEST_WATCHDOG_H */
