/* test_sched_util.h: helpers shared by the scheduler tests (tests/test_sched_*.c).
 *
 * Reference computations (fib with ws_join, its join count), thread counting through
 * /proc/self/task, and running a piece of code in a forked child with its stdout and stderr
 * captured, for the tests of environment parsing and of contract violations that abort.
 * Header-only, like test.h, so that each test stays one program.
 */
#ifndef WS_TEST_SCHED_UTIL_H
#define WS_TEST_SCHED_UTIL_H

#include "test.h"
#include "worksteal.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- fib --------------------------------------------------------------------------------- */

static inline uint64_t sched_fib_serial(int n)
{
    uint64_t a = 0, b = 1;
    for (int i = 0; i < n; i++) {
        uint64_t t = a + b;
        a = b;
        b = t;
    }
    return a;
}

/* The number of ws_join calls sched_fib_join makes for n: one per inner node of the call tree,
 * that is fib(n+1) - 1 for n >= 1. Computed by the recurrence so that it does not rely on that
 * identity. */
static inline uint64_t sched_fib_joins(int n)
{
    uint64_t j0 = 0, j1 = 0; /* joins for n-2 and n-1, starting at n = 0 and 1 */
    if (n < 2)
        return 0;
    for (int i = 2; i <= n; i++) {
        uint64_t j = 1 + j1 + j0;
        j0 = j1;
        j1 = j;
    }
    return j1;
}

typedef struct sched_fib_arg {
    int n;
    uint64_t result;
} sched_fib_arg;

static inline void sched_fib_join(void *p)
{
    sched_fib_arg *f = (sched_fib_arg *)p;
    if (f->n < 2) {
        f->result = (uint64_t)f->n;
        return;
    }
    sched_fib_arg a = {f->n - 1, 0}, b = {f->n - 2, 0};
    ws_join(sched_fib_join, &a, sched_fib_join, &b);
    f->result = a.result + b.result;
}

/* Runs fib(n) on pool through ws_pool_run and checks the answer. */
static inline void sched_check_fib_on(ws_pool *pool, int n)
{
    sched_fib_arg f = {n, 0};
    ASSERT_OK(ws_pool_run(pool, sched_fib_join, &f));
    ASSERT_UEQ(f.result, sched_fib_serial(n));
}

static inline ws_pool *sched_pool(unsigned workers)
{
    ws_pool *pool = NULL;
    ws_config cfg = {0};
    cfg.workers = workers;
    int err = ws_pool_create(&pool, &cfg);
    if (err != 0)
        WS_TEST_FAIL("ws_pool_create(workers=%u): %d (%s)", workers, err, ws_strerror(err));
    ASSERT(pool != NULL);
    ASSERT_EQ(ws_pool_workers(pool), workers);
    return pool;
}

/* ---- time and threads -------------------------------------------------------------------- */

/* Seconds on the monotonic clock, for hang guards (never a speed bound in a test). */
static inline double sched_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void sched_sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The number of threads of this process. */
static inline int sched_thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    ASSERT(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* Waits until the process has `expected` threads and returns the count. A joined thread can
 * stay listed for a moment after pthread_join returns (the kernel clears the thread id, which
 * pthread_join waits for, slightly before it removes the task), so poll for a while before
 * reporting a thread left running. */
static inline int sched_wait_thread_count(int expected)
{
    int n = sched_thread_count();
    for (int i = 0; i < 2000 && n != expected; i++) {
        sched_sleep_ms(1);
        n = sched_thread_count();
    }
    return n;
}

/* The thread count to compare against after a test. A pool is created and destroyed first:
 * the sanitizers' runtimes start a helper thread of their own at the first pthread_create,
 * which must not be mistaken for a thread the library left behind. */
static inline int sched_thread_baseline(void)
{
    ws_pool *warm = sched_pool(1);
    ws_pool_destroy(warm);
    int n = sched_thread_count();
    for (int i = 0; i < 100; i++) {
        sched_sleep_ms(5);
        int m = sched_thread_count();
        if (m == n)
            break;
        n = m;
    }
    return n;
}

/* ---- running code in a child process ----------------------------------------------------- */

typedef struct sched_child {
    int status;      /* from waitpid */
    char out[4096];  /* the child's stdout, NUL-terminated (truncated if longer) */
    char err[16384]; /* the child's stderr, NUL-terminated (truncated if longer) */
} sched_child;

/* Forks, runs fn(arg) in the child with stdout and stderr sent to pipes, then _exit(0) (so no
 * atexit handler of the parent's runtime runs twice). Call only while the process has a
 * single thread: the child of a multi-threaded fork may not start threads. A child that hangs
 * is killed by SIGALRM after test_hang_seconds(60), which the caller sees in the status. */
static inline void sched_run_child(sched_child *c, void (*fn)(void *), void *arg)
{
    int out[2], err[2];
    ASSERT_OK(pipe(out));
    ASSERT_OK(pipe(err));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        close(out[0]);
        close(err[0]);
        if (dup2(out[1], STDOUT_FILENO) < 0 || dup2(err[1], STDERR_FILENO) < 0)
            _exit(99);
        close(out[1]);
        close(err[1]);
        alarm((unsigned)test_hang_seconds(60));
        fn(arg);
        fflush(stdout);
        fflush(stderr);
        _exit(0);
    }
    close(out[1]);
    close(err[1]);

    /* Read both pipes until both reach end of file, so that neither can fill and block. */
    size_t len[2] = {0, 0};
    char *buf[2] = {c->out, c->err};
    size_t cap[2] = {sizeof c->out - 1, sizeof c->err - 1};
    struct pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(p, 2, -1) < 0) {
            ASSERT(errno == EINTR);
            continue;
        }
        for (int i = 0; i < 2; i++) {
            if (p[i].fd < 0 || p[i].revents == 0)
                continue;
            char tmp[1024];
            ssize_t r = read(p[i].fd, tmp, sizeof tmp);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                close(p[i].fd);
                p[i].fd = -1;
                open_fds--;
                continue;
            }
            size_t take = (size_t)r;
            if (take > cap[i] - len[i])
                take = cap[i] - len[i];
            memcpy(buf[i] + len[i], tmp, take);
            len[i] += take;
        }
    }
    c->out[len[0]] = '\0';
    c->err[len[1]] = '\0';
    while (waitpid(pid, &c->status, 0) < 0)
        ASSERT(errno == EINTR);
}

static inline int sched_count_lines(const char *s)
{
    int n = 0;
    for (; *s != '\0'; s++)
        if (*s == '\n')
            n++;
    return n;
}

/* Fails unless the child exited normally with status 0. */
static inline void sched_expect_clean_exit(const sched_child *c, const char *what)
{
    if (!WIFEXITED(c->status) || WEXITSTATUS(c->status) != 0)
        WS_TEST_FAIL("%s: child did not exit cleanly (status 0x%x); stderr:\n%s", what,
                     (unsigned)c->status, c->err);
}

#endif /* WS_TEST_SCHED_UTIL_H */
