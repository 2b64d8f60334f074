/* test_sched_errors: bad inputs and failures of the pool and fork-join API.
 *
 * usage: test_sched_errors CASE, one ctest entry per case:
 *   max_workers   workers above WS_MAX_WORKERS is EINVAL with *out untouched; exactly
 *                 WS_MAX_WORKERS works; a stack size nothing can provide fails cleanly
 *   env_workers   WS_NUM_WORKERS: invalid values are ignored with one line on stderr naming the
 *                 variable (the pool gets one worker per online CPU); a valid value is used
 *   env_stack     WS_STACK_SIZE with K/M/G/T suffixes; invalid values are ignored with one line
 *                 on stderr; config.stack_size takes precedence over the variable; 1T, the
 *                 largest, is accepted, and the system then refuses such stacks (EAGAIN) or not
 *   env_unknown   a variable that starts with WS_ and that the library does not read gets one
 *                 line on stderr naming the closest one it reads, once per process; WS_TEST_*
 *                 variables (the tests' own) get none
 *   thread_fail   the kth thread creation fails (k = 1, 2, ...): EAGAIN, *out untouched, no
 *                 thread left running, nothing leaked (ASan)
 *   alloc_fail    the kth allocation fails (k = 1, 2, ... until creation succeeds): ENOMEM each
 *                 time, *out untouched, no thread left running, nothing leaked (ASan)
 *   abort_sync_order, abort_sync_twice, abort_join_null, abort_spawn_null (a NULL function
 *                 or task; ws_sync of a NULL task)
 *                 contract violations abort (SIGABRT) with a message naming the function and
 *                 the cause (a sync out of order says "order", one of a task never spawned says
 *                 so)
 * The environment and abort cases run each attempt in a forked child, with its stderr (and
 * stdout) captured through pipes. Forking is done while this process has no other thread.
 */
#include "platform.h"
#include "test_sched_util.h"

#include <limits.h>
#include <pthread.h>

static ws_pool *const SENTINEL = (ws_pool *)(uintptr_t)0x5e5e5e50;

static unsigned online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    ASSERT(n >= 1);
    return n > (long)WS_MAX_WORKERS ? WS_MAX_WORKERS : (unsigned)n;
}

/* ---- max_workers ------------------------------------------------------------------------- */

static void case_max_workers(void)
{
    const unsigned bad[] = {WS_MAX_WORKERS + 1, WS_MAX_WORKERS * 2, UINT_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ws_pool *out = SENTINEL;
        ws_config cfg = {0};
        cfg.workers = bad[i];
        ASSERT_EQ(ws_pool_create(&out, &cfg), EINVAL);
        ASSERT_PTR_EQ(out, SENTINEL);
    }

    int threads = sched_thread_baseline();

    /* A stack no system can map: some error (EINVAL, ENOMEM or EAGAIN), nothing left. */
    {
        ws_pool *out = SENTINEL;
        ws_config cfg = {0};
        cfg.workers = 2;
        cfg.stack_size = SIZE_MAX / 2;
        int err = ws_pool_create(&out, &cfg);
        printf("stack_size %zu: %d (%s)\n", cfg.stack_size, err, ws_strerror(err));
        ASSERT(err == EINVAL || err == ENOMEM || err == EAGAIN);
        ASSERT_PTR_EQ(out, SENTINEL);
        ASSERT_EQ(sched_wait_thread_count(threads), threads);
    }

    /* The maximum itself is accepted. Small stacks keep 512 threads cheap. */
    ws_pool *pool = NULL;
    ws_config cfg = {0};
    cfg.workers = WS_MAX_WORKERS;
    cfg.stack_size = 256u << 10;
    int err = ws_pool_create(&pool, &cfg);
    if (err != 0)
        WS_TEST_FAIL("ws_pool_create(WS_MAX_WORKERS): %d (%s)", err, ws_strerror(err));
    ASSERT_EQ(ws_pool_workers(pool), WS_MAX_WORKERS);
    sched_check_fib_on(pool, 16);
    ws_pool_destroy(pool);
    ASSERT_EQ(sched_wait_thread_count(threads), threads);
}

/* ---- config_reasons ---------------------------------------------------------------------- */

/* Each rejected config: the field set, and the line ws_pool_create must print for it. */
typedef struct config_reason {
    ws_config cfg;
    const char *line;
} config_reason;

static const config_reason config_reasons[] = {
    {{.workers = 100000}, "worksteal: ws_pool_create: EINVAL: workers = 100000 (expected 0"},
    {{.stack_size = 1000}, "worksteal: ws_pool_create: EINVAL: stack_size = 1000 (expected 0"},
    {{.max_spares = WS_MAX_SPARES + 1}, "worksteal: ws_pool_create: EINVAL: max_spares = 4097"},
    {{.workers = 2, .pin = "sideways"}, "worksteal: ws_pool_create: EINVAL: pin = \"sideways\""},
    {{.workers = 2, .pin = "0-99999"}, "worksteal: ws_pool_create: EINVAL: pin = \"0-99999\""},
};
#define CONFIG_REASONS (sizeof config_reasons / sizeof config_reasons[0])

static void config_reason_child(void *p)
{
    const config_reason *r = p;
    ws_pool *out = SENTINEL;
    int err = ws_pool_create(&out, &r->cfg);
    printf("err %d untouched %d\n", err, out == SENTINEL);
}

/* An EINVAL from a bad config field prints one stderr line naming the field and its value. */
static void case_config_reasons(void)
{
    for (size_t i = 0; i < CONFIG_REASONS; i++) {
        sched_child ch;
        sched_run_child(&ch, config_reason_child, (void *)&config_reasons[i]);
        sched_expect_clean_exit(&ch, config_reasons[i].line);
        int err = 0, untouched = 0;
        ASSERT_EQ(sscanf(ch.out, "err %d untouched %d", &err, &untouched), 2);
        ASSERT_EQ(err, EINVAL);
        ASSERT(untouched);
        printf("stderr: %s", ch.err);
        if (sched_count_lines(ch.err) != 1 || strstr(ch.err, config_reasons[i].line) != ch.err)
            WS_TEST_FAIL("expected one line starting \"%s\", got:\n%s", config_reasons[i].line,
                         ch.err);
    }
}

/* ---- env_workers ------------------------------------------------------------------------- */

typedef struct env_case {
    const char *name;  /* variable */
    const char *value; /* NULL: unset */
    bool null_config;  /* ws_pool_create(&p, NULL) rather than a zeroed config */
    size_t config_stack;
} env_case;

static size_t current_stack_size(void)
{
    pthread_attr_t attr;
    size_t size = 0;
    ASSERT_OK(pthread_getattr_np(pthread_self(), &attr));
    ASSERT_OK(pthread_attr_getstacksize(&attr, &size));
    pthread_attr_destroy(&attr);
    return size;
}

static void record_stack(void *p)
{
    *(size_t *)p = current_stack_size();
}

/* In the child: set the variable, create one pool, print its worker count and its workers'
 * stack size. */
static void env_child(void *p)
{
    const env_case *c = p;
    if (c->value != NULL)
        ASSERT_OK(setenv(c->name, c->value, 1));
    else
        ASSERT_OK(unsetenv(c->name));
    ws_pool *pool = NULL;
    ws_config cfg = {0};
    cfg.stack_size = c->config_stack;
    int err = ws_pool_create(&pool, c->null_config ? NULL : &cfg);
    if (err != 0) {
        printf("create failed %d\n", err);
        return;
    }
    size_t stack = 0;
    ASSERT_OK(ws_pool_run(pool, record_stack, &stack));
    printf("workers %u stack %zu\n", ws_pool_workers(pool), stack);
    ws_pool_destroy(pool);
}

/* Runs one case; returns the worker count and the stack size of the pool made in the child,
 * and checks stderr: exactly one line naming the variable if `warn`, else nothing. */
static void env_run(const env_case *c, bool warn, unsigned *workers, size_t *stack)
{
    sched_child ch;
    sched_run_child(&ch, env_child, (void *)c);
    sched_expect_clean_exit(&ch, c->value != NULL ? c->value : "(unset)");
    if (sscanf(ch.out, "workers %u stack %zu", workers, stack) != 2)
        WS_TEST_FAIL("%s=%s: unexpected child output: %s", c->name, c->value, ch.out);
    printf("%s=%s%s: %u workers, %zu-byte stacks; stderr: %s", c->name,
           c->value != NULL ? c->value : "(unset)", c->null_config ? " (NULL config)" : "",
           *workers, *stack, ch.err[0] != '\0' ? ch.err : "(nothing)\n");
    if (warn) {
        if (strstr(ch.err, c->name) == NULL || sched_count_lines(ch.err) != 1)
            WS_TEST_FAIL("%s=%s: expected one line on stderr naming %s, got:\n%s", c->name,
                         c->value, c->name, ch.err);
    } else if (ch.err[0] != '\0') {
        WS_TEST_FAIL("%s=%s: expected nothing on stderr, got:\n%s", c->name, c->value, ch.err);
    }
}

static void case_env_workers(void)
{
    unsigned cpus = online_cpus(), w;
    size_t stack;
    const char *invalid[] = {"abc", "0", "-3", "99999999999"};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        env_case c = {"WS_NUM_WORKERS", invalid[i], i % 2 == 0, 0};
        env_run(&c, true, &w, &stack);
        ASSERT_EQ(w, cpus);
    }
    env_case valid = {"WS_NUM_WORKERS", "3", false, 0};
    env_run(&valid, false, &w, &stack);
    ASSERT_EQ(w, 3);
    valid.null_config = true;
    env_run(&valid, false, &w, &stack);
    ASSERT_EQ(w, 3);
    env_case unset = {"WS_NUM_WORKERS", NULL, true, 0};
    env_run(&unset, false, &w, &stack);
    ASSERT_EQ(w, cpus);
}

/* ---- env_stack --------------------------------------------------------------------------- */

/* The stack a thread reports may differ a little from the request (rounded to pages, or a
 * larger cached stack reused by the C library), never by much. */
static void check_stack(const char *what, size_t got, size_t want)
{
    if (got + (64u << 10) < want || got > want * 4)
        WS_TEST_FAIL("%s: worker stack %zu bytes, expected about %zu", what, got, want);
}

static void case_env_stack(void)
{
    const size_t default_stack = 8u << 20;
    struct {
        const char *value;
        size_t bytes;
    } valid[] = {{"1048576", 1u << 20}, {"768K", 768u << 10}, {"24M", 24u << 20}, {"1G", 1u << 30}};
    unsigned w;
    size_t stack;
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) {
        env_case c = {"WS_STACK_SIZE", valid[i].value, i % 2 == 0, 0};
        env_run(&c, false, &w, &stack);
        check_stack(valid[i].value, stack, valid[i].bytes);
    }
    /* Invalid: ignored with a line on stderr; the default (at least 8 MiB) is used. The last one
     * overflows 64 bits once multiplied by its suffix and must not wrap around. */
    const char *invalid[] = {"abc", "12Q", "-5M", "99999999999G", "2T", "63K"};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        env_case c = {"WS_STACK_SIZE", invalid[i], i % 2 == 1, 0};
        env_run(&c, true, &w, &stack);
        if (stack + (64u << 10) < default_stack)
            WS_TEST_FAIL("WS_STACK_SIZE=%s: worker stack %zu bytes, below the 8 MiB default",
                         invalid[i], stack);
    }
    /* Unset: the default. */
    env_case unset = {"WS_STACK_SIZE", NULL, true, 0};
    env_run(&unset, false, &w, &stack);
    if (stack + (64u << 10) < default_stack)
        WS_TEST_FAIL("default worker stack %zu bytes, below 8 MiB", stack);
        /* 1T, the largest size, is accepted (nothing on stderr); the threads then fail with EAGAIN
         * unless the system can map 1 TiB stacks. Not under sanitizers, whose thread start-up
         * handles such a stack by aborting rather than by the C library's error. */
#if !defined(WS_SANITIZED)
    env_case tera = {"WS_STACK_SIZE", "1T", false, 0};
    sched_child ch;
    sched_run_child(&ch, env_child, &tera);
    sched_expect_clean_exit(&ch, "1T");
    printf("WS_STACK_SIZE=1T: %s", ch.out);
    if (ch.err[0] != '\0')
        WS_TEST_FAIL("WS_STACK_SIZE=1T: expected nothing on stderr, got:\n%s", ch.err);
    int err = 0;
    if (sscanf(ch.out, "create failed %d", &err) == 1)
        ASSERT_EQ(err, EAGAIN);
    else if (sscanf(ch.out, "workers %u stack %zu", &w, &stack) == 2)
        check_stack("WS_STACK_SIZE=1T", stack, (size_t)1 << 40);
    else
        WS_TEST_FAIL("WS_STACK_SIZE=1T: unexpected child output: %s", ch.out);
#endif
    /* A non-zero config.stack_size wins over the variable. */
    env_case both = {"WS_STACK_SIZE", "64M", false, 2u << 20};
    env_run(&both, false, &w, &stack);
    check_stack("config 2 MiB with WS_STACK_SIZE=64M", stack, 2u << 20);
}

/* ---- thread_fail, alloc_fail ------------------------------------------------------------- */

typedef void (*arm_fn)(long n);

/* Arms the hook for k = 1, 2, ... and creates a pool of `workers` until creation succeeds;
 * every failure must be `want_err` with *out untouched and no thread left running. Returns the
 * k that succeeded. */
static long fail_until_success(arm_fn arm, const char *hook, unsigned workers, int want_err,
                               int threads)
{
    for (long k = 1; k < 100000; k++) {
        ws_pool *out = SENTINEL;
        ws_config cfg = {0};
        cfg.workers = workers;
        arm(k);
        int err = ws_pool_create(&out, &cfg);
        arm(0);
        if (err == 0) {
            ASSERT(out != SENTINEL && out != NULL);
            ASSERT_EQ(ws_pool_workers(out), workers);
            sched_check_fib_on(out, 18);
            ws_pool_destroy(out);
            ASSERT_EQ(sched_wait_thread_count(threads), threads);
            printf("%s, %u workers: creation fails for k = 1..%ld, succeeds at %ld\n", hook,
                   workers, k - 1, k);
            return k;
        }
        if (err != want_err)
            WS_TEST_FAIL("%s(%ld), %u workers: ws_pool_create returned %d (%s), expected %d", hook,
                         k, workers, err, ws_strerror(err), want_err);
        ASSERT_PTR_EQ(out, SENTINEL);
        int now = sched_wait_thread_count(threads);
        if (now != threads)
            WS_TEST_FAIL("%s(%ld), %u workers: %d threads after the failed creation, %d before",
                         hook, k, workers, now, threads);
    }
    WS_TEST_FAIL("%s: ws_pool_create never succeeded", hook);
    return -1;
}

static void case_thread_fail(void)
{
    int threads = sched_thread_baseline();
    const unsigned sizes[] = {1, 2, 4, 8};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        long k = fail_until_success(ws__test_fail_thread_after, "ws__test_fail_thread_after",
                                    sizes[i], EAGAIN, threads);
        /* Each worker is a thread, so the first `workers` creations must have failed. */
        ASSERT_GT(k, (long)sizes[i]);
    }
}

static void case_alloc_fail(void)
{
    int threads = sched_thread_baseline();
    const unsigned sizes[] = {1, 2, 4};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        long k = fail_until_success(ws__test_fail_alloc_after, "ws__test_fail_alloc_after",
                                    sizes[i], ENOMEM, threads);
        /* A pool cannot be made without allocating. */
        ASSERT_GT(k, 1);
    }
}

/* ---- env_unknown ------------------------------------------------------------------------- */

typedef struct unknown_case {
    const char *set;  /* NAME=VALUE put in the environment */
    const char *line; /* the expected stderr, whole ("" for none) */
} unknown_case;

/* In the child: the variable set, two pools made one after the other (the check runs once). */
static void unknown_child(void *p)
{
    const unknown_case *c = p;
    ASSERT_OK(putenv((char *)c->set));
    for (int i = 0; i < 2; i++) {
        ws_pool *pool;
        ASSERT_OK(ws_pool_create(&pool, &(ws_config){.workers = 1}));
        ws_pool_destroy(pool);
    }
}

static void case_env_unknown(void)
{
    const unknown_case cases[] = {
        {"WS_WORKERS=2", "worksteal: ignoring unknown environment variable WS_WORKERS (did you "
                         "mean WS_NUM_WORKERS?)\n"},
        {"WS_STAT=1", "worksteal: ignoring unknown environment variable WS_STAT (did you mean "
                      "WS_STATS?)\n"},
        {"WS_TRACE_EVENT=4096", "worksteal: ignoring unknown environment variable WS_TRACE_EVENT "
                                "(did you mean WS_TRACE_EVENTS?)\n"},
        {"WS_NUM_WORKERS=1", ""},   /* known */
        {"WS_TEST_ANYTHING=1", ""}, /* the tests' own */
        {"WSX_WORKERS=1", ""},      /* not the library's prefix */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sched_child ch;
        sched_run_child(&ch, unknown_child, (void *)&cases[i]);
        sched_expect_clean_exit(&ch, cases[i].set);
        printf("%s: stderr: %s", cases[i].set, ch.err[0] != '\0' ? ch.err : "(nothing)\n");
        if (strcmp(ch.err, cases[i].line) != 0)
            WS_TEST_FAIL("%s: expected on stderr\n%s\ngot\n%s", cases[i].set, cases[i].line,
                         ch.err);
    }
}

/* ---- contract violations ----------------------------------------------------------------- */

static void nothing(void *p)
{
    (void)p;
}

typedef struct violation {
    const char *what;     /* description */
    const char *function; /* the name (or words) the message must contain */
    void (*body)(void *); /* the violation */
    unsigned workers;     /* 0: call body from the child's main thread, outside any worker */
} violation;

static void sync_out_of_order(void *p)
{
    (void)p;
    ws_task t1, t2;
    ws_spawn(&t1, nothing, NULL);
    ws_spawn(&t2, nothing, NULL);
    ws_sync(&t1);
    ws_sync(&t2);
}

static void sync_twice(void *p)
{
    (void)p;
    ws_task t;
    ws_spawn(&t, nothing, NULL);
    ws_sync(&t);
    ws_sync(&t);
}

/* The first spawn onto an empty deque goes through the library, later ones take the inline path
 * of worksteal.h: these cases cover both kinds of record. */
static void sync_twice_inline(void *p)
{
    (void)p;
    ws_task t1, t2;
    ws_spawn(&t1, nothing, NULL);
    ws_spawn(&t2, nothing, NULL); /* inline */
    ws_sync(&t2);
    ws_sync(&t2);
}

/* The second sync comes after another inline spawn filled the same index: the synced record
 * must not pass for the new one (which would then run twice, and the new one never). The inline
 * ws_sync takes back only private items: items pushed onto an empty deque are public up to the
 * reserve (the pool's thread count, spares included, at most 1024), so the test stands on that
 * many open spawns first; and a push deeper than the deque has been goes through the library
 * (the depth statistic), so t1 goes there first. */
enum { UNDER = 1100 };
static void sync_twice_reused(void *p)
{
    (void)p;
    static ws_task under[UNDER];
    for (int i = 0; i < UNDER; i++)
        ws_spawn(&under[i], nothing, NULL);
    ws_task t1, t2, t3;
    ws_spawn(&t1, nothing, NULL); /* deeper than ever: through the library */
    ws_sync(&t1);
    ws_spawn(&t2, nothing, NULL); /* inline */
    ws_sync(&t2);
    ws_spawn(&t3, nothing, NULL); /* inline, at t2's index */
    ws_sync(&t2);
    ws_sync(&t3);
    for (int i = UNDER - 1; i >= 0; i--)
        ws_sync(&under[i]);
}

/* Syncs the older task first while the newer, inline one is still in the deque. A sync out of
 * order is caught by the deque's own order, so only on one worker: on two, a thief may hold
 * both tasks, and then the order harms nothing and is not reported (docs/api.md). */
static void sync_out_of_order_3(void *p)
{
    (void)p;
    ws_task t1, t2, t3;
    ws_spawn(&t1, nothing, NULL);
    ws_spawn(&t2, nothing, NULL);
    ws_spawn(&t3, nothing, NULL);
    ws_sync(&t3);
    ws_sync(&t1);
    ws_sync(&t2);
}

/* Return with spawned tasks unsynced. In a real program the records would die with the frame
 * while still in the deque, and a thief could take one before the library's check at the
 * task's return aborts: it would run whatever the dead frame's memory then holds, and the
 * process would die of that instead of the abort. The records are static here, so that a thief
 * runs `nothing` and only the library's check can end the process. */
static ws_task leaked[2];

static void return_unsynced(void *p)
{
    (void)p;
    ws_spawn(&leaked[0], nothing, NULL);
}

static void return_unsynced_inline(void *p)
{
    (void)p;
    ws_spawn(&leaked[0], nothing, NULL);
    ws_spawn(&leaked[1], nothing, NULL); /* inline */
    ws_sync(&leaked[1]);
    ws_sync(&leaked[0]);
    ws_spawn(&leaked[0], nothing, NULL);
    ws_spawn(&leaked[1], nothing, NULL); /* inline, and left unsynced with leaked[0] */
}

/* The same record spawned again before its sync. */
static void spawn_twice(void *p)
{
    (void)p;
    ws_task t1, t2;
    ws_spawn(&t1, nothing, NULL);
    ws_spawn(&t2, nothing, NULL);
    ws_spawn(&t2, nothing, NULL);
    ws_sync(&t2);
    ws_sync(&t2);
    ws_sync(&t1);
}

static void *sync_elsewhere(void *task)
{
    ws_sync(task);
    return NULL;
}

/* A ws_sync on another thread than the ws_spawn's. */
static void sync_other_thread(void *p)
{
    (void)p;
    ws_task t;
    ws_spawn(&t, nothing, NULL);
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, sync_elsewhere, &t));
    ASSERT_OK(pthread_join(th, NULL));
}

/* A ws_sync of a record that was never spawned (zeroed, as a frame's initializer leaves it). */
static void sync_unspawned(void *p)
{
    (void)p;
    ws_task t = {{{0}}};
    ws_sync(&t);
}

static void join_null_a(void *p)
{
    (void)p;
    ws_join(NULL, NULL, nothing, NULL);
}

static void join_null_b(void *p)
{
    (void)p;
    ws_join(nothing, NULL, NULL, NULL);
}

static void spawn_null(void *p)
{
    (void)p;
    ws_task t;
    ws_spawn(&t, NULL, NULL);
    ws_sync(&t);
}

static void spawn_null_task(void *p)
{
    ws_spawn(NULL, spawn_null, p);
}

static void sync_null_task(void *p)
{
    (void)p;
    ws_sync(NULL);
}

static void violation_child(void *p)
{
    const violation *v = p;
    if (v->workers == 0) {
        v->body(NULL);
    } else {
        ws_pool *pool = sched_pool(v->workers);
        int err = ws_pool_run(pool, v->body, NULL);
        printf("ws_pool_run returned %d\n", err);
        ws_pool_destroy(pool);
    }
    printf("returned without aborting\n");
}

static void expect_abort(const violation *v)
{
    sched_child ch;
    sched_run_child(&ch, violation_child, (void *)v);
    char where[64];
    if (v->workers == 0)
        snprintf(where, sizeof where, "outside any worker");
    else
        snprintf(where, sizeof where, "in a task on %u worker(s)", v->workers);
    printf("%s, %s: status 0x%x, stderr: %s", v->what, where, (unsigned)ch.status,
           ch.err[0] != '\0' ? ch.err : "(nothing)\n");
    if (!WIFSIGNALED(ch.status) || WTERMSIG(ch.status) != SIGABRT)
        WS_TEST_FAIL("%s, %s: expected death by SIGABRT, got status 0x%x; stdout:\n%s", v->what,
                     where, (unsigned)ch.status, ch.out);
    if (strstr(ch.err, v->function) == NULL)
        WS_TEST_FAIL("%s, %s: the message does not name %s:\n%s", v->what, where, v->function,
                     ch.err);
}

/* The real cause, named: a sync out of order (on a worker the deque's order catches it, outside
 * one the thread's spawn stack), and a sync with no spawn at all. */
#define ORDER    "worksteal: ws_sync: out of order"
#define NO_SPAWN "worksteal: ws_sync: no ws_spawn to sync: the task was never spawned"

static void run_violations(const violation *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        expect_abort(&v[i]);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep the output in order with stderr on a failure */
    if (argc < 2) {
        fprintf(stderr, "usage: %s CASE\n", argv[0]);
        return 2;
    }
    const char *c = argv[1];
    if (strcmp(c, "max_workers") == 0) {
        case_max_workers();
    } else if (strcmp(c, "config_reasons") == 0) {
        case_config_reasons();
    } else if (strcmp(c, "env_workers") == 0) {
        case_env_workers();
    } else if (strcmp(c, "env_stack") == 0) {
        case_env_stack();
    } else if (strcmp(c, "env_unknown") == 0) {
        case_env_unknown();
    } else if (strcmp(c, "thread_fail") == 0) {
        case_thread_fail();
    } else if (strcmp(c, "alloc_fail") == 0) {
        case_alloc_fail();
    } else if (strcmp(c, "abort_sync_order") == 0) {
        const violation v[] = {
            {"ws_sync out of reverse spawn order", ORDER, sync_out_of_order, 1},
            {"ws_sync out of reverse spawn order", ORDER, sync_out_of_order, 0},
            {"ws_sync on another thread", "this thread did not spawn", sync_other_thread, 0},
        };
        run_violations(v, sizeof v / sizeof v[0]);
    } else if (strcmp(c, "abort_sync_twice") == 0) {
        const violation v[] = {
            {"ws_sync of the same task twice", "ws_sync", sync_twice, 1},
            {"ws_sync of the same task twice", "ws_sync", sync_twice, 2},
            {"ws_sync of the same inline-spawned task twice", "ws_sync", sync_twice_inline, 1},
            {"ws_sync of the same inline-spawned task twice", "ws_sync", sync_twice_inline, 2},
            {"ws_sync twice, the index reused in between", "synced twice", sync_twice_reused, 1},
            {"ws_sync twice, the index reused in between", "synced twice", sync_twice_reused, 2},
            {"ws_sync of a task never spawned", NO_SPAWN, sync_unspawned, 1},
            {"ws_sync of a task never spawned", NO_SPAWN, sync_unspawned, 0},
        };
        run_violations(v, sizeof v / sizeof v[0]);
    } else if (strcmp(c, "abort_unsynced") == 0) {
        const violation v[] = {
            {"a task returning with a spawn unsynced", "ws_spawn", return_unsynced, 1},
            {"a task returning with a spawn unsynced", "ws_spawn", return_unsynced, 2},
            {"a task returning with an inline spawn unsynced", "ws_spawn", return_unsynced_inline,
             1},
            {"a task returning with an inline spawn unsynced", "ws_spawn", return_unsynced_inline,
             2},
            {"a record spawned again before its sync", "ws_sync", spawn_twice, 1},
            {"ws_sync out of order, three spawns", ORDER, sync_out_of_order_3, 1},
        };
        run_violations(v, sizeof v / sizeof v[0]);
    } else if (strcmp(c, "abort_join_null") == 0) {
        const violation v[] = {
            {"ws_join with a NULL first function", "ws_join", join_null_a, 2},
            {"ws_join with a NULL second function", "ws_join", join_null_b, 2},
            {"ws_join with a NULL first function", "ws_join", join_null_a, 0},
            {"ws_join with a NULL second function", "ws_join", join_null_b, 0},
        };
        run_violations(v, sizeof v / sizeof v[0]);
    } else if (strcmp(c, "abort_spawn_null") == 0) {
        const violation v[] = {
            {"ws_spawn with a NULL function", "ws_spawn", spawn_null, 2},
            {"ws_spawn with a NULL function", "ws_spawn", spawn_null, 0},
            {"ws_spawn with a NULL task", "NULL task", spawn_null_task, 2},
            {"ws_spawn with a NULL task", "NULL task", spawn_null_task, 0},
            {"ws_sync with a NULL task", "NULL task", sync_null_task, 2},
            {"ws_sync with a NULL task", "NULL task", sync_null_task, 0},
        };
        run_violations(v, sizeof v / sizeof v[0]);
    } else {
        fprintf(stderr, "unknown case %s\n", c);
        return 2;
    }
    printf("ok\n");
    return 0;
}
