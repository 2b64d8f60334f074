/* test_sched_deep: a chain of D nested ws_join calls (10^5 by default) on a pool whose workers
 * have large stacks (config.stack_size). Each level joins a trivial function with the next
 * level, so the recursion is as deep as the chain.
 *
 * usage: test_sched_deep a|b [D [P [stack MiB]]]
 *   a: the recursive call is ws_join's first function. Every level pushes its trivial second
 *      function, so the owner's deque holds up to D jobs that the other workers steal.
 *   b: the recursive call is the second function, the one pushed. It is popped and run inline,
 *      or stolen, in which case the rest of the chain continues on the thief's stack while the
 *      joiner waits for it.
 * The root runs through ws_pool_run, so the chain starts on a worker's stack.
 *
 * Stack needed: the test records the stack address of every level and prints the bytes per
 * level it measured (a few hundred bytes in an optimised build, more under the sanitizers), and
 * checks that the chain fits in half the configured stack, so that a frame that grows is
 * noticed before it turns into a crash. Measured here: about 200-250 bytes per level in a
 * Release build, about 1.1 KiB under ASan (Debug), about 550 bytes under TSan. The default of
 * 256 MiB (512 MiB under the sanitizers) leaves room for about 2.6 KiB (5.2 KiB) per level at
 * D = 10^5.
 *
 * ThreadSanitizer keeps its own shadow call stack of at most 65536 frames and crashes beyond
 * it (a CHECK in its stack depot), whatever the thread's stack size. A level is three frames
 * when its join pops its child back, and up to about seven when the child was stolen and the
 * joiner runs the rest of the chain from inside its wait (mode b crashed TSan at 15000
 * levels), so the default depth there is 8000.
 */
#include "test_sched_util.h"

#include <stdatomic.h>

#if WS_TEST_TSAN
#define DEFAULT_DEPTH 8000
#else
#define DEFAULT_DEPTH 100000
#endif
#if defined(WS_SANITIZED)
#define DEFAULT_STACK_MIB 512
#else
#define DEFAULT_STACK_MIB 256
#endif

typedef struct level {
    struct chain *c;
    long depth;
    long result; /* levels counted from here to the end of the chain */
} level;

typedef struct chain {
    long depth;
    bool recurse_first;
    uintptr_t *sp;      /* sp[d]: the address of a local at level d */
    int *worker;        /* worker[d]: the worker that ran level d */
    _Atomic long *mark; /* mark[d]: set by level d's trivial function */
} chain;

typedef struct trivial_arg {
    chain *c;
    long depth;
} trivial_arg;

static void trivial(void *p)
{
    trivial_arg *t = p;
    long old = atomic_fetch_add_explicit(&t->c->mark[t->depth], t->depth + 1, memory_order_relaxed);
    if (old != 0)
        WS_TEST_FAIL("trivial function of level %ld ran twice", t->depth);
}

static void step(void *p)
{
    level *l = p;
    chain *c = l->c;
    volatile char probe = 0;
    c->sp[l->depth] = (uintptr_t)&probe;
    c->worker[l->depth] = ws_worker_id();
    if (l->depth + 1 == c->depth) {
        l->result = 1;
        return;
    }
    level next = {c, l->depth + 1, 0};
    trivial_arg t = {c, l->depth};
    if (c->recurse_first)
        ws_join(step, &next, trivial, &t);
    else
        ws_join(trivial, &t, step, &next);
    if (atomic_load_explicit(&c->mark[l->depth], memory_order_relaxed) != l->depth + 1)
        WS_TEST_FAIL("level %ld: ws_join returned before its trivial function ran", l->depth);
    l->result = next.result + 1;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep the output in order with stderr on a failure */
    if (argc < 2 || (strcmp(argv[1], "a") != 0 && strcmp(argv[1], "b") != 0)) {
        fprintf(stderr, "usage: %s a|b [depth [workers [stack MiB]]]\n", argv[0]);
        return 2;
    }
    long depth = argc > 2 ? atol(argv[2]) : DEFAULT_DEPTH;
    unsigned workers = argc > 3 ? (unsigned)atoi(argv[3]) : 2;
    size_t stack_mib = argc > 4 ? (size_t)atol(argv[4]) : DEFAULT_STACK_MIB;
    ASSERT(depth >= 1);
    ASSERT(workers >= 1 && workers <= WS_MAX_WORKERS);

    chain c = {depth, argv[1][0] == 'a', NULL, NULL, NULL};
    c.sp = calloc((size_t)depth, sizeof *c.sp);
    c.worker = calloc((size_t)depth, sizeof *c.worker);
    c.mark = calloc((size_t)depth, sizeof *c.mark);
    ASSERT(c.sp != NULL && c.worker != NULL && c.mark != NULL);

    ws_config cfg = {0};
    cfg.workers = workers;
    cfg.stack_size = stack_mib << 20;
    ws_pool *pool = NULL;
    int err = ws_pool_create(&pool, &cfg);
    if (err != 0)
        WS_TEST_FAIL("ws_pool_create(stack %zu MiB): %s", stack_mib, ws_strerror(err));

    for (int rep = 0; rep < 2; rep++) {
        for (long d = 0; d < depth; d++)
            atomic_store_explicit(&c.mark[d], 0, memory_order_relaxed);
        level root = {&c, 0, 0};
        ASSERT_OK(ws_pool_run(pool, step, &root));
        ASSERT_EQ(root.result, depth);
        for (long d = 0; d + 1 < depth; d++)
            ASSERT_EQ(atomic_load_explicit(&c.mark[d], memory_order_relaxed), d + 1);
    }

    /* Stack use: over each run of consecutive levels on one worker, the distance from the
     * first level's local to the deepest one's. */
    uintptr_t max_span = 0, per_level = 0;
    long run_start = 0, switches = 0;
    for (long d = 1; d <= depth; d++) {
        if (d == depth || c.worker[d] != c.worker[run_start]) {
            uintptr_t lo = c.sp[run_start], hi = c.sp[run_start];
            for (long e = run_start; e < d; e++) {
                lo = c.sp[e] < lo ? c.sp[e] : lo;
                hi = c.sp[e] > hi ? c.sp[e] : hi;
            }
            if (hi - lo > max_span)
                max_span = hi - lo;
            if (d - run_start > 1 && (hi - lo) / (uintptr_t)(d - run_start - 1) > per_level)
                per_level = (hi - lo) / (uintptr_t)(d - run_start - 1);
            if (d < depth)
                switches++;
            run_start = d;
        }
    }
    ws_stats st;
    ws_pool_stats(pool, &st);
    printf("mode %s depth %ld P=%u stack %zu MiB: %zu bytes per level, deepest run %zu KiB, "
           "%ld worker switches along the chain; spawns %" PRIu64 " steals %" PRIu64
           " leapfrogs %" PRIu64 " max_deque_depth %" PRIu64 "\n",
           argv[1], depth, workers, stack_mib, (size_t)per_level, (size_t)(max_span >> 10),
           switches, st.spawns, st.steals, st.leapfrogs, st.max_deque_depth);
    ASSERT_LT(max_span, cfg.stack_size / 2);
    ws_pool_destroy(pool);
    free(c.sp);
    free(c.worker);
    free(c.mark);
    printf("ok\n");
    return 0;
}
