/* test_stack_depth: how deep a recursion runs on the workers' C stacks, and how an overflow ends.
 *
 *   reach_small, reach_large
 *            one recursive function measured both ways: how deep it reaches as a plain recursion
 *            on the main thread (forked children, an exponential search then a bisection: a child
 *            that returns reached its depth), and that as a typed task (WS_SPAWN, WS_SYNC) on a
 *            worker with the default stack size it reaches that depth too: on 1 worker under
 *            ws_pool_profile (every frame handed over, the whole chain on one stack: the most C
 *            stack per level), and on 2 workers. small: a level of minimal size (16 bytes of C
 * stack as a plain call in a Release build, the hardest ratio); large: 2 KiB of locals per level.
 * The search stops at a ceiling (the main thread's limit may be unlimited), which the typed task
 *            must then reach. reach_small is skipped under ThreadSanitizer: its shadow call stack
 *            of 65,536 calls overflows long before the main thread's 8 MiB (it then crashes or
 *            hangs).
 *   spawn_chain, join_chain
 *            a ws_spawn/ws_sync chain, and a ws_join recursion (the recursive call pushed, run
 *            inline or stolen), on 2 workers with the default stack size: one level per 512 bytes
 *            of that size (spawn) and per 2 KiB (join) in an optimised build, per 4 KiB under
 *            ASan, 5,000 under ThreadSanitizer (its shadow call stack).
 *   default_size
 *            the default stack of workers and spares, in children with other limits (setrlimit):
 *            64 times the soft RLIMIT_STACK, at most 1 GiB (unlimited: 1 GiB); with a finite
 *            RLIMIT_AS the limit itself; WS_STACK_SIZE and config.stack_size win; every thread has
 *            a guard of WS_STACK_GUARD bytes.
 *   overflow_default, overflow_env, overflow_spare, overflow_two, overflow_stack_task,
 *   overflow_spawn, overflow_join, overflow_user_handler
 *            in a forked child, a worker's stack overflows: by a plain recursion with the default
 *            size (512 MiB with an 8 MiB limit: ASan warns about stacks above 64 MiB when the
 *            handler calls abort(), unless it is not instrumented), with WS_STACK_SIZE,
 *            on a spare (a task that overflows after its spawner called ws_block_begin), on two
 *            workers at the same moment (one line all the same), by a typed task, a ws_spawn chain
 * and a ws_join recursion far too deep (spread over two workers, whose stacks may run out at the
 * same time), and with a user's SIGSEGV handler installed before the pool: the child dies by
 * SIGABRT and its stderr is exactly the library's one line naming the thread, the size and the
 * setting. fault_null, fault_user_handler, fault_main faults that are not a worker's overflow end
 * as they would without the library: a NULL write on a worker dies as the same write on a thread of
 * a process without a pool (SIGSEGV outside the sanitizers, whose own report otherwise); a user's
 * SIGSEGV handler installed before the pool is created is called for it; an overflow of the main
 * thread's stack with a pool running dies as it does without one.
 *
 * usage: test_stack_depth CASE
 */
#include "platform.h"
#include "test_sched_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifndef TEST_ASAN
#define TEST_ASAN 0
#endif

/* The spawn and join chains' stack budget per level, set for each build so that the default
 * stack holds them; under ThreadSanitizer a fixed depth that its shadow call stack holds. */
#if WS_TEST_TSAN
#define CHAIN_BUDGET 0u
#define TSAN_CHAIN   5000u
#elif TEST_ASAN
#define CHAIN_BUDGET 4096u
#else
#define CHAIN_BUDGET 512u
#endif
/* The plain recursion's search stops at CEILING_BYTES of main-thread stack, the largest limit
 * whose 64 times the default still is (above it the default is capped); under ThreadSanitizer
 * also at TSAN_CEILING levels, which its shadow call stack holds as typed tasks. */
#define TSAN_CEILING 6000u

/* The line src/overflow.c prints for a worker or spare of the child's first (only) pool. */
#define OVERFLOW_LINE                                                                          \
    "worksteal: thread ws1:%s%u (%s %u of pool 1) overflowed its C stack of %zu bytes: raise " \
    "WS_STACK_SIZE or ws_config.stack_size\n"

#define STACK_PER_MAIN    64u
#define MAX_DEFAULT_STACK ((size_t)1 << 30)
#define USUAL_MAIN_STACK  ((size_t)8 << 20)
#define CEILING_BYTES     (MAX_DEFAULT_STACK / STACK_PER_MAIN)

#define NOINLINE __attribute__((noinline))
/* The compiler must assume x changes here: a call whose result feeds it stays a call, neither a
 * tail call nor a loop. */
#define KEEP(x) __asm__ volatile("" : "+r"(x))

/* ---- the recursion measured both ways ----------------------------------------------------- */

enum { PAD = 2048 };

/* The stack at the deepest level: the address of a local there, and its thread's stack top. */
static uintptr_t leaf_sp, leaf_top;

static NOINLINE void leaf_mark(void)
{
    volatile char here = 0;
    leaf_sp = (uintptr_t)&here;
    pthread_attr_t attr;
    void *low;
    size_t size;
    ASSERT_OK(pthread_getattr_np(pthread_self(), &attr));
    ASSERT_OK(pthread_attr_getstack(&attr, &low, &size));
    pthread_attr_destroy(&attr);
    leaf_top = (uintptr_t)low + size;
}

/* One level of the recursion measured both ways, n levels above its end: `next` gives the next
 * level's result (a plain call, or a typed task's WS_SPAWN then WS_SYNC); the rest is the same
 * code. A large level keeps PAD bytes of locals alive across the next level. */
#define SMALL_LEVEL(next) \
    if (n == 0) {         \
        leaf_mark();      \
        return 0;         \
    }                     \
    uint64_t r = (next);  \
    KEEP(r);              \
    return r + 1

#define LARGE_LEVEL(next)         \
    volatile char pad[PAD];       \
    pad[0] = (char)n;             \
    pad[PAD - 1] = 1;             \
    if (n == 0) {                 \
        leaf_mark();              \
        return pad[PAD - 1] - 1u; \
    }                             \
    uint64_t r = (next);          \
    KEEP(r);                      \
    return r + (uint64_t)pad[PAD - 1]

static NOINLINE uint64_t plain_small(uint64_t n)
{
    SMALL_LEVEL(plain_small(n - 1));
}

WS_TASK_1(uint64_t, task_small, uint64_t, n)
{
    SMALL_LEVEL((WS_SPAWN(task_small, n - 1), WS_SYNC(task_small)));
}

static NOINLINE uint64_t plain_large(uint64_t n)
{
    LARGE_LEVEL(plain_large(n - 1));
}

WS_TASK_1(uint64_t, task_large, uint64_t, n)
{
    LARGE_LEVEL((WS_SPAWN(task_large, n - 1), WS_SYNC(task_large)));
}

typedef struct reach {
    bool large;
    uint64_t depth;
} reach;

static void plain_child(void *p)
{
    const reach *r = p;
    uint64_t got = r->large ? plain_large(r->depth) : plain_small(r->depth);
    ASSERT_UEQ(got, r->depth);
    printf("%zu bytes of stack\n", (size_t)(leaf_top - leaf_sp));
}

/* Whether the plain recursion returns from depth d in a child; *used: the main thread's stack
 * then used, in bytes. */
static bool plain_reaches(bool large, uint64_t d, size_t *used)
{
    reach r = {large, d};
    sched_child ch;
    sched_run_child(&ch, plain_child, &r);
    if (!WIFEXITED(ch.status) || WEXITSTATUS(ch.status) != 0)
        return false;
    ASSERT_EQ(sscanf(ch.out, "%zu", used), 1);
    return true;
}

/* The deepest level the plain recursion reaches on the main thread, up to a ceiling: the depth
 * at which it uses CEILING_BYTES of stack (found from two probes), and TSAN_CEILING levels under
 * ThreadSanitizer. *ceiling: whether the ceiling was reached. */
static uint64_t plain_depth(bool large, size_t *used, bool *ceiling)
{
    uint64_t lo = 0, hi = 16, top = UINT64_MAX;
    size_t lo_used = 0, u = 0;
#if WS_TEST_TSAN
    top = TSAN_CEILING;
#endif
    *ceiling = false;
    while (!*ceiling && plain_reaches(large, hi, &u)) {
        if (lo > 0 && u > lo_used && u < CEILING_BYTES) { /* bytes per level: the two probes */
            uint64_t at = hi + (CEILING_BYTES - u) / ((u - lo_used) / (hi - lo));
            top = at < top ? at : top;
        }
        *ceiling = hi == top;
        lo = hi;
        lo_used = u;
        hi = 2 * hi < top ? 2 * hi : top;
    }
    *used = lo_used;
    if (*ceiling)
        return lo;
    ASSERT_GT(lo, 0);
    while (hi - lo > 1) { /* lo reaches, hi does not */
        uint64_t mid = lo + (hi - lo) / 2;
        if (plain_reaches(large, mid, &u)) {
            lo = mid;
            *used = u;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* The default worker stack the library should choose with a soft RLIMIT_STACK of stack_soft
 * and this process's RLIMIT_AS (src/pool.c's rule, restated). */
static size_t default_for(rlim_t stack_soft)
{
    struct rlimit as;
    ASSERT_OK(getrlimit(RLIMIT_AS, &as));
    bool limited = as.rlim_cur != RLIM_INFINITY;
    size_t main_limit = stack_soft == RLIM_INFINITY ? SIZE_MAX : (size_t)stack_soft;
    if (main_limit == SIZE_MAX && limited)
        main_limit = USUAL_MAIN_STACK;
    size_t times = limited ? 1 : STACK_PER_MAIN;
    size_t size = main_limit > MAX_DEFAULT_STACK / times ? MAX_DEFAULT_STACK : main_limit * times;
    return size < ((size_t)64 << 10) ? (size_t)64 << 10 : size;
}

/* The default worker stack the library should choose in this process. */
static size_t expected_default(void)
{
    struct rlimit st;
    ASSERT_OK(getrlimit(RLIMIT_STACK, &st));
    return default_for(st.rlim_cur);
}

typedef struct task_root {
    ws_pool *pool;
    const reach *r;
} task_root;

static void run_task(void *p)
{
    const task_root *t = p;
    uint64_t d = t->r->depth;
    ASSERT_UEQ(t->r->large ? task_large_run(t->pool, d) : task_small_run(t->pool, d), d);
}

/* The typed task r->depth levels deep: profiled on one worker, then on two. Profiled, every
 * frame is handed to the deque at its spawn, and its sync runs it through ws_sync: the path that
 * takes the most C stack per level (src/frames.c), here with the whole chain on one stack. On
 * two workers, as a program runs: frames are handed over when the other worker asks, and the
 * chain may be split between the threads (the workers and the spares that waits summon). */
static void task_child(void *p)
{
    const reach *r = p;
    for (unsigned workers = 1; workers <= 2; workers++) {
        ws_pool *pool = sched_pool(workers);
        task_root t = {pool, r};
        ws_profile prof;
        if (workers == 1)
            ASSERT_OK(ws_pool_profile(pool, run_task, &t, &prof));
        else
            run_task(&t);
        printf("%zu ", (size_t)(leaf_top - leaf_sp));
        ws_pool_destroy(pool);
    }
    printf("bytes of stack\n");
}

static void case_reach(bool large)
{
    const char *name = large ? "reach_large" : "reach_small";
    struct rlimit st;
    ASSERT_OK(getrlimit(RLIMIT_STACK, &st));
    size_t plain_used = 0;
    bool ceiling = false;
    uint64_t depth = plain_depth(large, &plain_used, &ceiling);
    char limit[64] = "unlimited";
    if (st.rlim_cur != RLIM_INFINITY)
        snprintf(limit, sizeof limit, "%llu KiB", (unsigned long long)st.rlim_cur >> 10);
    printf("%s: the main thread's stack limit is %s: a plain recursion reaches %" PRIu64
           " levels%s (%zu bytes of stack, %.1f per level)\n",
           name, limit, depth, ceiling ? ", the search's ceiling" : "", plain_used,
           (double)plain_used / (double)depth);
    reach r = {large, depth};
    sched_child ch;
    sched_run_child(&ch, task_child, &r);
    size_t used[2] = {0, 0};
    if (!WIFEXITED(ch.status) || WEXITSTATUS(ch.status) != 0 ||
        sscanf(ch.out, "%zu %zu", &used[0], &used[1]) != 2)
        WS_TEST_FAIL("%s: a typed task %" PRIu64 " levels deep on a worker with the default stack "
                     "(%zu bytes) did not return: status 0x%x, stdout: %s, stderr:\n%s",
                     name, depth, expected_default(), (unsigned)ch.status, ch.out, ch.err);
    for (int i = 0; i < 2; i++)
        printf("%s: as a typed task on %s with the default stack (%zu bytes), %" PRIu64
               " levels run (the deepest level's thread used %zu bytes of stack, %.1f per "
               "level)\n",
               name, i == 0 ? "1 worker, profiled" : "2 workers", expected_default(), depth,
               used[i], (double)used[i] / (double)depth);
}

/* ---- ws_spawn and ws_join chains ---------------------------------------------------------- */

typedef struct level {
    uint64_t n, result;
    bool join; /* the next level by ws_join (pushed, then run inline or stolen), else ws_spawn */
} level;

static void nothing(void *p)
{
    (void)p;
}

static void chain_level(void *p)
{
    level *l = p;
    if (l->n == 0) {
        l->result = 0;
        return;
    }
    level next = {l->n - 1, 0, l->join};
    if (l->join) {
        ws_join(nothing, NULL, chain_level, &next);
    } else {
        ws_task t;
        ws_spawn(&t, chain_level, &next);
        ws_sync(&t);
    }
    l->result = next.result + 1;
}

typedef struct chain {
    bool join;
    uint64_t depth;
    size_t stack_size; /* 0: the default */
    unsigned workers;
} chain;

static void chain_child(void *p)
{
    const chain *c = p;
    ws_config cfg = {.workers = c->workers, .stack_size = c->stack_size};
    ws_pool *pool = NULL;
    ASSERT_OK(ws_pool_create(&pool, &cfg));
    level root = {c->depth, 0, c->join};
    ASSERT_OK(ws_pool_run(pool, chain_level, &root));
    ASSERT_UEQ(root.result, c->depth);
    ws_pool_destroy(pool);
}

static void case_chain(const char *name, bool join, unsigned budget)
{
#if WS_TEST_TSAN
    (void)budget;
    uint64_t depth = TSAN_CHAIN;
#else
    uint64_t depth = expected_default() / (budget > CHAIN_BUDGET ? budget : CHAIN_BUDGET);
#endif
    chain c = {join, depth, 0, 2};
    sched_child ch;
    sched_run_child(&ch, chain_child, &c);
    if (!WIFEXITED(ch.status) || WEXITSTATUS(ch.status) != 0)
        WS_TEST_FAIL("%s: %" PRIu64 " levels on 2 workers with the default stack (%zu bytes): "
                     "status 0x%x, stderr:\n%s",
                     name, depth, expected_default(), (unsigned)ch.status, ch.err);
    printf("%s: %" PRIu64 " levels ran on 2 workers with the default stack (%zu bytes)\n", name,
           depth, expected_default());
}

/* ---- default_size --------------------------------------------------------------------------- */

typedef struct thread_stack {
    size_t size, guard;
    int id;
    _Atomic int done; /* release: the fields above are written */
} thread_stack;

static void record_stack(void *p)
{
    thread_stack *s = p;
    pthread_attr_t attr;
    ASSERT_OK(pthread_getattr_np(pthread_self(), &attr));
    ASSERT_OK(pthread_attr_getstacksize(&attr, &s->size));
    ASSERT_OK(pthread_attr_getguardsize(&attr, &s->guard));
    pthread_attr_destroy(&attr);
    s->id = ws_worker_id();
    atomic_store_explicit(&s->done, 1, memory_order_release);
}

/* A task on worker 0 that blocks until a spare has recorded its stack (only a spare can take the
 * task it spawned: worker 0 is blocked here). */
static void record_on_spare(void *p)
{
    thread_stack *s = p;
    ws_task t;
    ws_spawn(&t, record_stack, s);
    ws_block_begin();
    while (atomic_load_explicit(&s->done, memory_order_acquire) == 0)
        sched_sleep_ms(1);
    ws_block_end();
    ws_sync(&t);
}

typedef struct size_case {
    const char *what;
    rlim_t stack_soft; /* 0: unchanged */
    bool as_finite;    /* the soft RLIMIT_AS set finite (2^64 - 2: no real limit) */
    const char *env;   /* WS_STACK_SIZE, or NULL */
    size_t config;     /* config.stack_size */
    size_t want;       /* 0: expected_default() in the child */
} size_case;

static void size_child(void *p)
{
    const size_case *c = p;
    if (c->stack_soft != 0 || c->as_finite) {
        int which = c->as_finite ? RLIMIT_AS : RLIMIT_STACK;
        struct rlimit rl;
        ASSERT_OK(getrlimit(which, &rl));
        rl.rlim_cur = c->as_finite ? (rlim_t)-2 : c->stack_soft;
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max) {
            printf("skip: hard limit %llu\n", (unsigned long long)rl.rlim_max);
            return;
        }
        ASSERT_OK(setrlimit(which, &rl));
    }
    if (c->env != NULL)
        ASSERT_OK(setenv("WS_STACK_SIZE", c->env, 1));
    size_t want = c->want != 0 ? c->want : expected_default();
    ws_config cfg = {.workers = 1, .stack_size = c->config, .max_spares = 1};
    ws_pool *pool = NULL;
    ASSERT_OK(ws_pool_create(&pool, &cfg));
    thread_stack worker = {0, 0, -1, 0}, spare = {0, 0, -1, 0};
    ASSERT_OK(ws_pool_run(pool, record_stack, &worker));
    ASSERT_OK(ws_pool_run(pool, record_on_spare, &spare));
    ASSERT_EQ(worker.id, 0);
    ASSERT_EQ(spare.id, 1);
    ws_pool_destroy(pool);
    printf("want %zu worker %zu guard %zu spare %zu guard %zu\n", want, worker.size, worker.guard,
           spare.size, spare.guard);
}

static void case_default_size(void)
{
    const size_case cases[] = {
        {"as inherited", 0, false, NULL, 0, 0},
        {"ulimit -s 256", (rlim_t)256 << 10, false, NULL, 0, (size_t)16 << 20},
        {"ulimit -s 8192", (rlim_t)8 << 20, false, NULL, 0, (size_t)512 << 20},
        {"ulimit -s 16384", (rlim_t)16 << 20, false, NULL, 0, MAX_DEFAULT_STACK},
        {"ulimit -s 65536", (rlim_t)64 << 20, false, NULL, 0, MAX_DEFAULT_STACK},
        {"ulimit -s unlimited", RLIM_INFINITY, false, NULL, 0, MAX_DEFAULT_STACK},
        {"ulimit -v (finite)", 0, true, NULL, 0, 0},
        {"WS_STACK_SIZE=2M", 0, false, "2M", 0, (size_t)2 << 20},
        {"config 3 MiB, WS_STACK_SIZE=2M", 0, false, "2M", (size_t)3 << 20, (size_t)3 << 20},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sched_child ch;
        sched_run_child(&ch, size_child, (void *)&cases[i]);
        sched_expect_clean_exit(&ch, cases[i].what);
        if (strncmp(ch.out, "skip:", 5) == 0) {
            printf("default_size: %s: %s", cases[i].what, ch.out);
            continue;
        }
        size_t want, ws, wg, ss, sg;
        if (sscanf(ch.out, "want %zu worker %zu guard %zu spare %zu guard %zu", &want, &ws, &wg,
                   &ss, &sg) != 5)
            WS_TEST_FAIL("%s: unexpected child output: %s", cases[i].what, ch.out);
        printf("default_size: %s: want %zu; worker %zu (guard %zu), spare %zu (guard %zu)\n",
               cases[i].what, want, ws, wg, ss, sg);
        /* The C library reports the stack it mapped: the request rounded up to pages. */
        const size_t slack = (size_t)64 << 10;
        if (ws < want || ws > want + slack || ss < want || ss > want + slack)
            WS_TEST_FAIL("%s: stacks %zu and %zu, expected %zu", cases[i].what, ws, ss, want);
        ASSERT_GE(wg, WS_STACK_GUARD);
        ASSERT_GE(sg, WS_STACK_GUARD);
    }
}

/* ---- overflows ------------------------------------------------------------------------------ */

/* A recursion that no stack holds: 64 KiB of locals per level, below the 1 MiB guards (the
 * kernel's gap below the main thread's stack, and the library's), so that it faults in the
 * guard; few levels per stack (8,192 in 512 MiB), so that ThreadSanitizer's shadow call stack
 * holds them; one page touched per level. */
static volatile uint64_t endless_depth = (uint64_t)1 << 40;

/* overflow_two: at this depth (near the end of a 256 KiB stack) the two threads wait for each
 * other, then both take the last steps to the guard together. */
static uint64_t meet_depth = UINT64_MAX;
static _Atomic int met;

static void meet(void)
{
    atomic_fetch_add_explicit(&met, 1, memory_order_relaxed);
    while (atomic_load_explicit(&met, memory_order_relaxed) < 2)
        ;
}

static NOINLINE uint64_t endless(uint64_t n)
{
    volatile char pad[64 << 10];
    pad[0] = (char)n;
    if (n == meet_depth)
        meet();
    if (n == endless_depth)
        return 0;
    uint64_t r = endless(n + 1);
    KEEP(r);
    return r + (uint64_t)pad[0];
}

static void endless_task(void *p)
{
    *(uint64_t *)p = endless(0);
}

/* Overflows a spare's stack: spawns the endless task, then blocks until the process dies (the
 * spare the block summons takes the task). */
static void endless_on_spare(void *p)
{
    ws_task t;
    ws_spawn(&t, endless_task, p);
    ws_block_begin();
    for (;;)
        sched_sleep_ms(1000);
}

/* Overflows both workers' stacks at once: the two halves of a join (the second stolen by the
 * other worker) recurse, meet near their stacks' end, and fault together; the first to fault
 * prints, the other must not. The first's abort() is held back a while by a SIGABRT handler
 * (abort calls it, then ends the process when it returns), so that the other's fault comes
 * before the process ends even when the machine is busy. */
static void abort_later(int sig)
{
    (void)sig;
    struct timespec pause = {0, 200000000};
    nanosleep(&pause, NULL);
}

static void endless_twice(void *p)
{
    uint64_t other = 0;
    meet_depth = 2;
    signal(SIGABRT, abort_later);
    ws_join(endless_task, p, endless_task, &other);
}

static ws_pool *child_pool; /* the overflow child's pool */

static void endless_stack_task(void *p)
{
    *(uint64_t *)p = task_small_run(child_pool, (uint64_t)1 << 40);
}

static void endless_chain(uint64_t *result, bool join)
{
    level l = {(uint64_t)1 << 40, 0, join};
    chain_level(&l);
    *result = l.result;
}

static void endless_spawn(void *p)
{
    endless_chain(p, false);
}

static void endless_join(void *p)
{
    endless_chain(p, true);
}

static void user_handler(int sig, siginfo_t *info, void *context)
{
    (void)info;
    (void)context;
    static const char line[] = "user handler: SIGSEGV\n";
    if (write(STDERR_FILENO, line, sizeof line - 1) < 0)
        _exit(98);
    signal(sig, SIG_DFL); /* the fault happens again after we return, and kills */
}

static void install_user_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = user_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    ASSERT_OK(sigaction(SIGSEGV, &sa, NULL));
}

typedef struct overflow {
    const char *name;
    ws_fn root;
    unsigned workers; /* the lines of workers 0..workers-1 are expected (spare: spare 1) */
    size_t config;    /* config.stack_size; 0: the default */
    const char *env;  /* WS_STACK_SIZE, or NULL */
    bool spare;
    bool user_handler;
} overflow;

static void overflow_child(void *p)
{
    const overflow *o = p;
    if (o->env != NULL)
        ASSERT_OK(setenv("WS_STACK_SIZE", o->env, 1));
    if (o->user_handler)
        install_user_handler();
    ws_config cfg = {.workers = o->workers, .stack_size = o->config};
    ws_pool *pool = NULL;
    ASSERT_OK(ws_pool_create(&pool, &cfg));
    child_pool = pool;
    uint64_t result = 0;
    ASSERT_OK(ws_pool_run(pool, o->root, &result));
    printf("returned %" PRIu64 "\n", result);
}

static void expect_overflow(const overflow *o, size_t size)
{
    sched_child ch;
    sched_run_child(&ch, overflow_child, (void *)o);
    printf("%s: status 0x%x, stderr: %s", o->name, (unsigned)ch.status,
           ch.err[0] != '\0' ? ch.err : "(nothing)\n");
    if (!WIFSIGNALED(ch.status) || WTERMSIG(ch.status) != SIGABRT)
        WS_TEST_FAIL("%s: expected death by SIGABRT, got status 0x%x; stdout: %s", o->name,
                     (unsigned)ch.status, ch.out);
    char line[512];
    for (unsigned i = 0; i < o->workers; i++) {
        unsigned id = o->spare ? o->workers + i : i;
        snprintf(line, sizeof line, OVERFLOW_LINE, o->spare ? "spare" : "w", id,
                 o->spare ? "spare worker" : "worker", id, size);
        if (strcmp(ch.err, line) == 0)
            return;
    }
    WS_TEST_FAIL("%s: expected exactly the one line (e.g.)\n%sgot:\n%s", o->name, line, ch.err);
}

static const overflow OVERFLOWS[] = {
    {"overflow_default", endless_task, 1, 0, NULL, false, false},
    {"overflow_env", endless_task, 1, 0, "512K", false, false},
    {"overflow_spare", endless_on_spare, 1, (size_t)256 << 10, NULL, true, false},
    {"overflow_two", endless_twice, 2, (size_t)256 << 10, NULL, false, false},
    {"overflow_stack_task", endless_stack_task, 2, (size_t)512 << 10, NULL, false, false},
    {"overflow_spawn", endless_spawn, 2, (size_t)512 << 10, NULL, false, false},
    {"overflow_join", endless_join, 2, (size_t)512 << 10, NULL, false, false},
    {"overflow_user_handler", endless_task, 1, (size_t)256 << 10, NULL, false, true},
};

static bool run_overflow(const char *name)
{
    for (size_t i = 0; i < sizeof OVERFLOWS / sizeof OVERFLOWS[0]; i++) {
        const overflow *o = &OVERFLOWS[i];
        if (strcmp(o->name, name) != 0)
            continue;
        size_t size = o->config;
        if (o->env != NULL)
            size = (size_t)512 << 10; /* "512K" */
        else if (size == 0)
            size = expected_default();
        expect_overflow(o, size);
        return true;
    }
    return false;
}

/* ---- other faults --------------------------------------------------------------------------- */

/* A write through NULL: a fault (UBSan's check of the null store is off here, or it would
 * report and abort before the store). */
#if defined(__clang__)
__attribute__((no_sanitize("undefined")))
#else
__attribute__((no_sanitize_undefined))
#endif
static NOINLINE void
null_write(void *p)
{
    volatile int *volatile target = NULL;
    (void)p;
    *target = 1;
}

static void *null_write_thread(void *p)
{
    null_write(p);
    return NULL;
}

/* The same NULL write on a thread of the process's own, without any pool. */
static void reference_fault_child(void *p)
{
    (void)p;
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, null_write_thread, NULL));
    pthread_join(t, NULL);
}

static const bool yes = true;

static void worker_fault_child(void *p)
{
    if (p != NULL)
        install_user_handler();
    ws_pool *pool = sched_pool(1);
    ASSERT_OK(ws_pool_run(pool, null_write, NULL));
}

/* The status of a child that dies as src/overflow.c should leave it: its stderr must not hold
 * the overflow line. */
static int fault_status(void (*fn)(void *), void *arg, const char *what, sched_child *ch)
{
    sched_run_child(ch, fn, arg);
    printf("%s: status 0x%x, stderr: %.300s%s", what, (unsigned)ch->status,
           ch->err[0] != '\0' ? ch->err : "(nothing)\n", strlen(ch->err) > 300 ? " ...\n" : "");
    if (strstr(ch->err, "overflowed its C stack") != NULL)
        WS_TEST_FAIL("%s: reported as a stack overflow", what);
    return ch->status;
}

/* Outside the sanitizers a fault dies by SIGSEGV, with nothing on stderr. */
static void expect_plain_segv(const char *what, const sched_child *ch)
{
#if !defined(WS_SANITIZED)
    if (!WIFSIGNALED(ch->status) || WTERMSIG(ch->status) != SIGSEGV)
        WS_TEST_FAIL("%s: expected death by SIGSEGV, got status 0x%x", what, (unsigned)ch->status);
#else
    (void)what;
    (void)ch;
#endif
}

static void case_fault_null(void)
{
    sched_child ref, lib;
    int want = fault_status(reference_fault_child, NULL, "a NULL write, no pool", &ref);
    int got = fault_status(worker_fault_child, NULL, "a NULL write on a worker", &lib);
    expect_plain_segv("a NULL write, no pool", &ref);
    expect_plain_segv("a NULL write on a worker", &lib);
    if (got != want)
        WS_TEST_FAIL("a NULL write on a worker ended with status 0x%x, without a pool 0x%x",
                     (unsigned)got, (unsigned)want);
}

static void case_fault_user_handler(void)
{
    sched_child ch;
    int status = fault_status(worker_fault_child, (void *)&yes,
                              "a NULL write on a worker, user handler", &ch);
    if (strcmp(ch.err, "user handler: SIGSEGV\n") != 0)
        WS_TEST_FAIL("the user's handler was not called once (stderr above)");
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV)
        WS_TEST_FAIL("expected death by SIGSEGV after the user's handler, got 0x%x",
                     (unsigned)status);
}

static void main_overflow_child(void *p)
{
    ws_pool *pool = p != NULL ? sched_pool(2) : NULL;
    printf("returned %" PRIu64 "\n", endless(0));
    ws_pool_destroy(pool);
}

static void case_fault_main(void)
{
    sched_child ref, lib;
    int want = fault_status(main_overflow_child, NULL, "main thread's overflow, no pool", &ref);
    int got =
        fault_status(main_overflow_child, (void *)&yes, "main thread's overflow, a pool", &lib);
    expect_plain_segv("main thread's overflow, no pool", &ref);
    expect_plain_segv("main thread's overflow, a pool", &lib);
    if (got != want)
        WS_TEST_FAIL("the main thread's overflow ended with status 0x%x with a pool, 0x%x "
                     "without",
                     (unsigned)got, (unsigned)want);
}

/* ---- main --------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *c = argc > 1 ? argv[1] : "";
    if (strcmp(c, "reach_small") == 0) {
#if WS_TEST_TSAN
        printf("reach_small: SKIP: under ThreadSanitizer, whose shadow call stack (65,536 calls) "
               "overflows before the main thread's stack\n");
        return 77;
#else
        case_reach(false);
#endif
    } else if (strcmp(c, "reach_large") == 0) {
        case_reach(true);
    } else if (strcmp(c, "spawn_chain") == 0) {
        case_chain("spawn_chain", false, 512);
    } else if (strcmp(c, "join_chain") == 0) {
        case_chain("join_chain", true, 2048);
    } else if (strcmp(c, "default_size") == 0) {
        case_default_size();
    } else if (strcmp(c, "fault_null") == 0) {
        case_fault_null();
    } else if (strcmp(c, "fault_user_handler") == 0) {
        case_fault_user_handler();
    } else if (strcmp(c, "fault_main") == 0) {
        case_fault_main();
    } else if (!run_overflow(c)) {
        fprintf(stderr, "usage: %s CASE (see the top of tests/test_stack_depth.c)\n", argv[0]);
        return 2;
    }
    printf("ok\n");
    return 0;
}
