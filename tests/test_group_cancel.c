/* test_group_cancel: errors and cancellation of groups, and waits with a limit.
 *
 * usage: test_group_cancel WORKERS MODE, MODE one of
 *   errors   the first ws_group_fail to run wins (not the first submitted), running jobs see it,
 *            ws_group_wait_status returns it, later submissions get ECANCELED
 *   before   jobs queued behind busy workers and cancelled from outside never run: counted as
 *            skipped, their on_cancel frees their argument (ASan checks the leak)
 *   during   running jobs poll ws_group_cancelled and stop when cancelled from outside
 *   inside   a job cancels its own group: its queued siblings never run
 *   nested   groups made inside a job (implicitly, and with ws_group_init_nested) are cancelled
 *            with the outer group; cancelling the inner one leaves the outer alone
 *   forkjoin fork-join and loops inside a job of a cancelled group complete
 *   rounds   one group reused over many rounds, each cancelled at a random point: no job runs
 *            after its round's wait returned, every job runs or is skipped exactly once
 *   timed    ws_group_try_wait and ws_group_timed_wait: EBUSY/ETIMEDOUT while a job is held,
 *            never before the limit; 0 once done; from outside and from a worker
 *   destroy  cancelled jobs still queued when the pool is destroyed: destroy finishes, nothing
 *            leaks
 *   owed     batches from outside that a worker finished and has not yet counted off (src/group.c,
 *            "Owed counts") are counted off without a waiter: a job of another group that waits
 *            for the group returns, ws_group_try_wait polled alone sees 0, and ws_pool_destroy
 *            returns after a batch nobody waited for
 *   placed   a group at every 8-byte offset of two cache lines, in memory that held garbage
 *            before ws_group_init: jobs from outside and from a job all run, cancel, fail, status
 *            and reset behave (the count sits a line apart from the other fields wherever the
 *            group lies, src/group.c)
 */
#include "test.h"
#include "test_external_util.h"
#include "worksteal.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

static unsigned P;
static ws_pool *pool;

/* ---- helpers ------------------------------------------------------------------------------ */

/* Holds every worker of the pool in a detached gate job until the gate opens. */
static void hold_workers(ext_gate *gate)
{
    ext_gate_init(gate);
    for (unsigned i = 0; i < P; i++)
        ASSERT_OK(ws_submit(pool, ext_gate_job, gate, 0));
    ext_wait_at_least(&gate->arrived, P, "every worker held");
}

typedef struct counted {
    atomic_ullong ran, cancelled;
} counted;

typedef struct owned_arg { /* a heap argument that the job or its on_cancel frees */
    counted *c;
    unsigned magic;
} owned_arg;

enum { MAGIC = 0x5ca1ab1e };

static void owned_job(void *p)
{
    owned_arg *a = p;
    ASSERT_EQ(a->magic, MAGIC);
    atomic_fetch_add(&a->c->ran, 1);
    a->magic = 0;
    free(a);
}

static void owned_cancel(void *p)
{
    owned_arg *a = p;
    ASSERT_EQ(a->magic, MAGIC);
    atomic_fetch_add(&a->c->cancelled, 1);
    a->magic = 0;
    free(a);
}

static int submit_owned(ws_group *g, counted *c)
{
    owned_arg *a = malloc(sizeof *a);
    ASSERT(a != NULL);
    a->c = c;
    a->magic = MAGIC;
    int err = ws_group_submit_cancellable(g, owned_job, owned_cancel, a, 0);
    if (err != 0)
        free(a);
    return err;
}

/* ---- errors ------------------------------------------------------------------------------- */

typedef struct fail_ctx {
    ws_group *g;
    atomic_int first_failed, second_may_fail, seen;
    atomic_ullong started;
} fail_ctx;

/* The jobs below wait for each other: each says it blocks, so that a spare worker runs the
 * next one even with one worker. */
static void fail_second(void *p) /* submitted first, fails second */
{
    fail_ctx *c = p;
    atomic_fetch_add(&c->started, 1);
    ws_block_begin();
    while (!atomic_load(&c->first_failed))
        sched_yield();
    ws_block_end();
    ws_group_fail(c->g, 22);
}

static void fail_first(void *p)
{
    fail_ctx *c = p;
    atomic_fetch_add(&c->started, 1);
    ws_block_begin();
    while (atomic_load(&c->started) < 3)
        sched_yield();
    ws_block_end();
    ws_group_fail(c->g, 11);
    atomic_store(&c->first_failed, 1);
}

static void see_failure(void *p) /* running when the group fails: sees the first code */
{
    fail_ctx *c = p;
    atomic_fetch_add(&c->started, 1);
    ws_block_begin();
    while (!ws_group_cancelled(c->g))
        sched_yield();
    ws_block_end();
    atomic_store(&c->seen, ws_group_status(c->g));
    ASSERT_EQ(ws_group_submit(c->g, owned_job, NULL, 0), ECANCELED);
}

static void test_errors(void)
{
    ws_group g;
    ws_group_init(&g, pool);
    fail_ctx c = {.g = &g};
    ASSERT_OK(ws_group_status(&g));
    ASSERT_OK(ws_group_submit(&g, fail_second, &c, 0));
    ASSERT_OK(ws_group_submit(&g, see_failure, &c, 0));
    ASSERT_OK(ws_group_submit(&g, fail_first, &c, 0));
    ASSERT_EQ(ws_group_wait_status(&g), 11);
    ASSERT_EQ(atomic_load(&c.seen), 11);
    ASSERT_EQ(ws_group_status(&g), 11);
    ASSERT_EQ(ws_group_submit(&g, owned_job, NULL, 0), ECANCELED);
    ASSERT_OK(ws_group_reset(&g));
    ASSERT_OK(ws_group_status(&g));
    ASSERT(!ws_group_cancelled(&g));

    /* From outside, without jobs: the first of two failures wins; a cancel without a failure
     * reads as ECANCELED. */
    ws_group_fail(&g, 5);
    ws_group_fail(&g, 6);
    ASSERT_EQ(ws_group_wait_status(&g), 5);
    ASSERT_OK(ws_group_reset(&g));
    ws_group_cancel(&g);
    ASSERT_EQ(ws_group_wait_status(&g), ECANCELED);
    printf("errors: the first failure to run wins (11 over 22, submitted earlier)\n");
}

/* ---- before, destroy ---------------------------------------------------------------------- */

/* Queues n jobs behind workers held at a gate, cancels them, then releases the workers and
 * either waits for the group or destroys the pool (which must not wait for skipped jobs). */
static void cancel_queued(bool at_destroy)
{
    unsigned n = (unsigned)test_scaled(2000, 50);
    /* Static: the gate jobs are detached and may still be looking at the gate after this
     * function returned (a worker preempted between the opening and its next look). */
    static ext_gate gate;
    hold_workers(&gate);
    ws_group g;
    ws_group_init(&g, pool);
    counted c = {0};
    for (unsigned i = 0; i < n; i++)
        ASSERT_OK(submit_owned(&g, &c));
    ws_group_cancel(&g);
    ASSERT_EQ(submit_owned(&g, &c), ECANCELED);
    ASSERT_EQ(ws_group_try_wait(&g), EBUSY);
    ext_gate_open(&gate);
    if (at_destroy) {
        ws_pool_destroy(pool);
        pool = NULL;
        ASSERT_OK(ws_group_try_wait(&g));
        ASSERT_EQ(ws_group_status(&g), ECANCELED);
    } else {
        ASSERT_EQ(ws_group_wait_status(&g), ECANCELED);
    }
    ASSERT_UEQ(atomic_load(&c.ran), 0);
    ASSERT_UEQ(atomic_load(&c.cancelled), n);
    ASSERT_UEQ(ws_group_skipped(&g), n);
    printf("%s: %u queued jobs skipped\n", at_destroy ? "destroy" : "before", n);
    if (at_destroy)
        return;
    /* Reusable once reset. */
    ASSERT_OK(ws_group_reset(&g));
    ASSERT_UEQ(ws_group_skipped(&g), 0);
    for (unsigned i = 0; i < n; i++)
        ASSERT_OK(submit_owned(&g, &c));
    ASSERT_OK(ws_group_wait_status(&g));
    ASSERT_UEQ(atomic_load(&c.ran), n);
    printf("before: then %u ran after the reset\n", n);
}

/* ---- during ------------------------------------------------------------------------------- */

typedef struct poll_ctx {
    ws_group *g;
    atomic_ullong started, stopped;
} poll_ctx;

static void poll_job(void *p)
{
    poll_ctx *c = p;
    atomic_fetch_add(&c->started, 1);
    while (!ws_group_cancelled(c->g))
        ext_burn(100);
    atomic_fetch_add(&c->stopped, 1);
}

static void test_during(void)
{
    ws_group g;
    ws_group_init(&g, pool);
    poll_ctx c = {.g = &g};
    for (unsigned i = 0; i < P; i++)
        ASSERT_OK(ws_group_submit(&g, poll_job, &c, 0));
    ext_wait_at_least(&c.started, P, "every polling job started");
    ASSERT_EQ(ws_group_timed_wait(&g, 1000000), ETIMEDOUT);
    ws_group_cancel(&g);
    ASSERT_EQ(ws_group_wait_status(&g), ECANCELED);
    ASSERT_UEQ(atomic_load(&c.stopped), P);
    ASSERT_UEQ(ws_group_skipped(&g), 0);
    printf("during: %u running jobs saw the cancellation and stopped\n", P);
}

/* ---- inside ------------------------------------------------------------------------------- */

typedef struct inside_ctx {
    ws_group *g;
    counted c;
    unsigned n;
} inside_ctx;

static void cancel_own_group(void *p)
{
    inside_ctx *x = p;
    /* From a worker these go on its own deque, behind this job: none can start before the
     * cancel unless another worker steals it. */
    for (unsigned i = 0; i < x->n; i++)
        ASSERT_OK(submit_owned(x->g, &x->c));
    ws_group_cancel(x->g);
    ASSERT(ws_group_cancelled(x->g));
}

static void test_inside(void)
{
    ws_group g;
    ws_group_init(&g, pool);
    inside_ctx x = {.g = &g, .n = (unsigned)test_scaled(5000, 100)};
    ASSERT_OK(ws_group_submit(&g, cancel_own_group, &x, 0));
    ASSERT_EQ(ws_group_wait_status(&g), ECANCELED);
    unsigned long long ran = atomic_load(&x.c.ran), skipped = atomic_load(&x.c.cancelled);
    ASSERT_UEQ(ran + skipped, x.n);
    ASSERT_UEQ(ws_group_skipped(&g), skipped);
    if (P == 1) {
        ASSERT_UEQ(ran, 0); /* nobody could steal */
        ASSERT_UEQ(skipped, x.n);
    }
    printf("inside: %llu of %u siblings skipped, %llu had been stolen and run\n", skipped, x.n,
           ran);
}

/* ---- nested ------------------------------------------------------------------------------- */

typedef struct nested_ctx {
    ws_group *outer;
    atomic_int submitted; /* the outer job has filled its inner groups */
    atomic_int cancel;    /* 1: the test cancelled the outer group; 2: cancel the inner one */
    counted inner_jobs;
    atomic_int inner_cancelled, explicit_cancelled, inner_status, outer_seen;
} nested_ctx;

enum { NESTED_JOBS = 64 };

static void outer_job(void *p)
{
    nested_ctx *x = p;
    ws_group inner, explicit_child;
    ws_group_init(&inner, pool);                   /* nested implicitly: made in a job */
    ws_group_init_nested(&explicit_child, &inner); /* one more level, explicitly */
    /* On this worker's deque, behind this job (other workers may steal and run some). */
    for (int i = 0; i < NESTED_JOBS / 2; i++) {
        ASSERT_OK(submit_owned(&inner, &x->inner_jobs));
        ASSERT_OK(submit_owned(&explicit_child, &x->inner_jobs));
    }
    atomic_store(&x->submitted, 1);
    /* Holds the worker (not as a blocked task: a spare would run the jobs queued here). */
    while (atomic_load(&x->cancel) == 0)
        sched_yield();
    if (atomic_load(&x->cancel) == 2)
        ws_group_cancel(&inner);
    atomic_store(&x->inner_cancelled, ws_group_cancelled(&inner));
    atomic_store(&x->explicit_cancelled, ws_group_cancelled(&explicit_child));
    ws_group_wait(&explicit_child);
    atomic_store(&x->inner_status, ws_group_wait_status(&inner));
    atomic_store(&x->outer_seen, ws_group_cancelled(x->outer));
}

static void run_nested(int which)
{
    /* A pool of its own: a spare woken by an earlier wait (a parked wait counts as blocked) could
     * otherwise still be awake and run the inner jobs before they are cancelled. */
    ws_pool *shared = pool;
    pool = ext_pool(P, 4);
    ws_group outer;
    ws_group_init(&outer, pool);
    nested_ctx x = {.outer = &outer};
    ASSERT_OK(ws_group_submit(&outer, outer_job, &x, 0));
    while (!atomic_load(&x.submitted))
        sched_yield();
    if (which == 1)
        ws_group_cancel(&outer); /* from outside, while the outer job runs */
    atomic_store(&x.cancel, which);
    int status = ws_group_wait_status(&outer);
    ASSERT_EQ(atomic_load(&x.inner_cancelled), 1);
    ASSERT_EQ(atomic_load(&x.explicit_cancelled), 1);
    ASSERT_EQ(atomic_load(&x.inner_status), ECANCELED);
    ASSERT_UEQ(atomic_load(&x.inner_jobs.ran) + atomic_load(&x.inner_jobs.cancelled), NESTED_JOBS);
    if (P == 1)
        ASSERT_UEQ(atomic_load(&x.inner_jobs.cancelled), NESTED_JOBS);
    if (which == 1) {
        ASSERT_EQ(status, ECANCELED);
        ASSERT_EQ(atomic_load(&x.outer_seen), 1);
    } else {
        ASSERT_OK(status); /* cancelling the inner group leaves the outer one alone */
        ASSERT_EQ(atomic_load(&x.outer_seen), 0);
    }
    printf("nested (cancel %s): inner groups cancelled, %llu of %d inner jobs skipped\n",
           which == 1 ? "outer" : "inner", (unsigned long long)atomic_load(&x.inner_jobs.cancelled),
           NESTED_JOBS);
    ws_pool_destroy(pool);
    pool = shared;
}

static void test_nested(void)
{
    run_nested(1);
    run_nested(2);
    /* A group made outside any job has no parent; one made after a job returned has none
     * either (the thread's current group does not outlive the job). */
    ws_group a, b;
    ws_group_init(&a, pool);
    ws_group_init(&b, pool);
    ws_group_cancel(&a);
    ASSERT(!ws_group_cancelled(&b));
}

/* ---- forkjoin ----------------------------------------------------------------------------- */

static atomic_ullong fj_leaves, fj_items;

static void fj_leaf(void *p)
{
    (void)p;
    atomic_fetch_add(&fj_leaves, 1);
}

static void fj_tree(void *p)
{
    int depth = (int)(intptr_t)p;
    if (depth == 0) {
        fj_leaf(NULL);
        return;
    }
    ws_join(fj_tree, (void *)(intptr_t)(depth - 1), fj_tree, (void *)(intptr_t)(depth - 1));
}

static void fj_body(size_t b, size_t e, void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&fj_items, e - b);
}

static void cancel_then_fork(void *p)
{
    ws_group *g = p;
    ws_group_cancel(g);
    fj_tree((void *)(intptr_t)10);
    ws_parallel_for(0, 100000, 64, fj_body, NULL);
    ws_task t;
    ws_spawn(&t, fj_leaf, NULL);
    ws_sync(&t);
}

static void test_forkjoin(void)
{
    ws_group g;
    ws_group_init(&g, pool);
    ASSERT_OK(ws_group_submit(&g, cancel_then_fork, &g, 0));
    ASSERT_EQ(ws_group_wait_status(&g), ECANCELED);
    ASSERT_UEQ(atomic_load(&fj_leaves), 1024 + 1);
    ASSERT_UEQ(atomic_load(&fj_items), 100000);
    printf("forkjoin: a cancelled job's joins, loop and spawn all completed\n");
}

/* ---- rounds ------------------------------------------------------------------------------- */

enum { ROUND_JOBS = 200 };

typedef struct round_ctx {
    ws_group *g;
    atomic_int round;  /* the round whose wait has not returned yet */
    atomic_int closed; /* rounds whose wait returned */
    atomic_uchar done[ROUND_JOBS];
    atomic_ullong ran;
    unsigned cancel_at;
} round_ctx;

typedef struct round_job { /* on the heap, freed by whichever of run and skip is called */
    round_ctx *x;
    int round;
    unsigned index;
} round_job;

static void round_run(void *p)
{
    round_job *j = p;
    round_ctx *x = j->x;
    if (atomic_load(&x->closed) >= j->round)
        WS_TEST_FAIL("a job of round %d ran after its wait returned", j->round);
    if (atomic_fetch_add(&x->done[j->index], 1) != 0)
        WS_TEST_FAIL("job %u of round %d ran or was skipped twice", j->index, j->round);
    atomic_fetch_add(&x->ran, 1);
    if (j->index == x->cancel_at)
        ws_group_cancel(x->g);
    free(j);
}

static void round_skip(void *p)
{
    round_job *j = p;
    if (atomic_fetch_add(&j->x->done[j->index], 1) != 0)
        WS_TEST_FAIL("job %u of round %d ran or was skipped twice", j->index, j->round);
    free(j);
}

static void test_rounds(uint64_t seed)
{
    ws_group g;
    ws_group_init(&g, pool);
    round_ctx x = {.g = &g};
    uint64_t rng = seed | 1;
    unsigned rounds = (unsigned)test_scaled(300, 20);
    unsigned long long skipped_total = 0;
    for (int r = 1; r <= (int)rounds; r++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        x.cancel_at = (unsigned)(rng % (ROUND_JOBS + ROUND_JOBS / 4)); /* sometimes never */
        for (unsigned i = 0; i < ROUND_JOBS; i++)
            atomic_store(&x.done[i], 0);
        for (unsigned i = 0; i < ROUND_JOBS; i++) {
            round_job *j = malloc(sizeof *j);
            ASSERT(j != NULL);
            *j = (round_job){&x, r, i};
            int err = ws_group_submit_cancellable(&g, round_run, round_skip, j, 0);
            if (err == ECANCELED) {
                free(j);
                atomic_fetch_add(&x.done[i], 1);
                continue;
            }
            ASSERT_OK(err);
        }
        int status = ws_group_wait_status(&g);
        atomic_store(&x.closed, r);
        for (unsigned i = 0; i < ROUND_JOBS; i++)
            ASSERT_EQ(atomic_load(&x.done[i]), 1);
        ASSERT_EQ(status, x.cancel_at < ROUND_JOBS ? ECANCELED : 0);
        skipped_total += ws_group_skipped(&g);
        ASSERT_OK(ws_group_reset(&g));
    }
    printf("rounds: %u rounds on one group, %llu jobs skipped in all, %llu ran\n", rounds,
           skipped_total, (unsigned long long)atomic_load(&x.ran));
}

/* ---- timed -------------------------------------------------------------------------------- */

enum { LIMIT_MS = 30 };
/* Not a precision bound (the machine is shared): only catches a wait that ignores its limit. */
#define ABSURDLY_LATE_S 5.0

static void check_timeout(ws_group *g)
{
    double t0 = sched_now();
    ASSERT_EQ(ws_group_timed_wait(g, (uint64_t)LIMIT_MS * 1000000u), ETIMEDOUT);
    double waited = sched_now() - t0;
    if (waited < LIMIT_MS * 1e-3)
        WS_TEST_FAIL("timed wait returned after %.6f s, before its %d ms limit", waited, LIMIT_MS);
    if (waited > ABSURDLY_LATE_S)
        WS_TEST_FAIL("timed wait of %d ms returned after %.3f s", LIMIT_MS, waited);
    printf("timed: ETIMEDOUT after %.3f ms (limit %d ms)\n", waited * 1e3, LIMIT_MS);
}

typedef struct timed_ctx {
    ws_group *held;
    int result;
} timed_ctx;

static void timed_from_worker(void *p)
{
    timed_ctx *c = p;
    check_timeout(c->held);
    c->result = 1;
}

/* Holds its worker at the gate, as a blocked task: a spare stands in meanwhile. */
static void blocked_gate_job(void *p)
{
    ws_block_begin();
    ext_gate_hold(p);
    ws_block_end();
}

static void test_timed(void)
{
    ext_gate gate;
    ext_gate_init(&gate);
    ws_group g;
    ws_group_init(&g, pool);
    ASSERT_OK(ws_group_try_wait(&g));
    ASSERT_OK(ws_group_timed_wait(&g, 0));
    ASSERT_OK(ws_group_submit(&g, blocked_gate_job, &gate, 0));
    ext_wait_at_least(&gate.arrived, 1, "the held job started");
    ASSERT_EQ(ws_group_try_wait(&g), EBUSY);
    ASSERT_EQ(ws_group_timed_wait(&g, 0), ETIMEDOUT);
    check_timeout(&g);
    /* From a worker (with one worker, a spare runs the job while the waiter sleeps). */
    timed_ctx c = {.held = &g};
    ws_group h;
    ws_group_init(&h, pool);
    ASSERT_OK(ws_group_submit(&h, timed_from_worker, &c, 0));
    ws_group_wait(&h);
    ASSERT_EQ(c.result, 1);
    ext_gate_open(&gate);
    ASSERT_OK(ws_group_timed_wait(&g, UINT64_MAX)); /* no overflow: "forever" */
    ASSERT_OK(ws_group_try_wait(&g));
    ASSERT_OK(ws_group_status(&g)); /* a timeout is not an error of the group */
}

/* ---- owed ------------------------------------------------------------------------------- */

typedef struct owed_ctx {
    ws_group *g;
    unsigned long long jobs;
    atomic_ullong ran;
} owed_ctx;

static void owed_job(void *p)
{
    owed_ctx *c = p;
    atomic_fetch_add(&c->ran, 1);
}

/* A job of another group, queued behind c's batch: the worker that takes it may owe c's group
 * the counts of the batch it just ran. */
static void owed_waiter(void *p)
{
    owed_ctx *c = p;
    ws_group_wait(c->g);
    ASSERT_EQ(atomic_load(&c->ran), c->jobs);
}

static void owed_batch(ws_pool *on, ws_group *g, owed_ctx *c)
{
    ws_group_init(g, on);
    c->g = g;
    atomic_store(&c->ran, 0);
    for (unsigned long long i = 0; i < c->jobs; i++)
        ASSERT_OK(ws_group_submit(g, owed_job, c, 0));
}

/* ws_group_try_wait, polled with nobody waiting, turns 0 (a hang is a failure). */
static void poll_until_done(ws_group *g)
{
    double start = sched_now();
    while (ws_group_try_wait(g) == EBUSY) {
        if (sched_now() - start > EXT_HANG_SECONDS)
            WS_TEST_FAIL("hang: try_wait still EBUSY after %.0f s", EXT_HANG_SECONDS);
        sched_yield();
    }
}

static void test_owed(void)
{
    unsigned rounds = (unsigned)test_scaled(60, 6);
    owed_ctx c = {.jobs = test_scaled(3000, 300)};
    for (unsigned r = 0; r < rounds; r++) {
        ws_group g;
        if (r % 3 == 0) {
            owed_batch(pool, &g, &c);
            ws_group h;
            ws_group_init(&h, pool);
            ASSERT_OK(ws_group_submit(&h, owed_waiter, &c, 0));
            ASSERT_OK(ws_group_timed_wait(&h, (uint64_t)(EXT_HANG_SECONDS * 1e9)));
        } else if (r % 3 == 1) {
            owed_batch(pool, &g, &c);
            ext_wait_at_least(&c.ran, c.jobs, "the batch's jobs");
            poll_until_done(&g);
        } else {
            ws_pool *own = ext_pool(P, 0);
            owed_batch(own, &g, &c);
            ws_pool_destroy(own); /* waits for the batch, through the group's reference */
            ASSERT_EQ(atomic_load(&c.ran), c.jobs);
        }
        ASSERT_OK(ws_group_try_wait(&g));
    }
}

/* ---- placed ------------------------------------------------------------------------------ */

enum { PLACED_JOBS = 200, PLACED_SPAN = 256 };

typedef struct placed_ctx {
    ws_group *g;
    atomic_uint ran;
} placed_ctx;

static void placed_job(void *p)
{
    placed_ctx *c = p;
    atomic_fetch_add(&c->ran, 1);
}

static void placed_submitter(void *p) /* a job that submits more jobs of its own group */
{
    placed_ctx *c = p;
    for (int i = 0; i < PLACED_JOBS / 2; i++)
        ASSERT_OK(ws_group_submit(c->g, placed_job, c, 0));
}

static void test_placed(void)
{
    unsigned char *buf = malloc(sizeof(ws_group) + PLACED_SPAN);
    ASSERT(buf != NULL);
    for (size_t off = 0; off < PLACED_SPAN; off += 8) {
        memset(buf, 0xa5, sizeof(ws_group) + PLACED_SPAN);
        ws_group *g = (ws_group *)(void *)(buf + off);
        placed_ctx c = {.g = g};
        ws_group_init(g, pool);
        ASSERT_OK(ws_group_submit(g, placed_submitter, &c, 0));
        for (int i = 0; i < PLACED_JOBS / 2; i++)
            ASSERT_OK(ws_group_submit(g, placed_job, &c, 0));
        ws_group_wait(g);
        ASSERT_EQ(atomic_load(&c.ran), (unsigned)PLACED_JOBS);
        ASSERT_OK(ws_group_status(g));
        ASSERT_EQ(ws_group_skipped(g), 0u);
        ws_group_fail(g, EIO);
        ws_group_cancel(g);
        ASSERT(ws_group_cancelled(g));
        ASSERT_EQ(ws_group_submit(g, placed_job, &c, 0), ECANCELED);
        ASSERT_EQ(ws_group_wait_status(g), EIO);
        ASSERT_OK(ws_group_reset(g));
        ASSERT(!ws_group_cancelled(g));
        ASSERT_OK(ws_group_submit(g, placed_job, &c, 0));
        ws_group_wait(g);
        ASSERT_EQ(atomic_load(&c.ran), (unsigned)PLACED_JOBS + 1);
    }
    free(buf);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        WS_TEST_FAIL("usage: %s WORKERS MODE", argv[0]);
    P = ext_arg_unsigned(argc, argv, 1, 2);
    const char *mode = argv[2];
    uint64_t seed = test_seed("test_group_cancel");
    pool = ext_pool(P, 4); /* spares for the jobs that wait for each other */
    if (strcmp(mode, "errors") == 0)
        test_errors();
    else if (strcmp(mode, "before") == 0)
        cancel_queued(false);
    else if (strcmp(mode, "during") == 0)
        test_during();
    else if (strcmp(mode, "inside") == 0)
        test_inside();
    else if (strcmp(mode, "nested") == 0)
        test_nested();
    else if (strcmp(mode, "forkjoin") == 0)
        test_forkjoin();
    else if (strcmp(mode, "rounds") == 0)
        test_rounds(seed);
    else if (strcmp(mode, "timed") == 0)
        test_timed();
    else if (strcmp(mode, "destroy") == 0)
        cancel_queued(true);
    else if (strcmp(mode, "placed") == 0)
        test_placed();
    else if (strcmp(mode, "owed") == 0)
        test_owed();
    else
        WS_TEST_FAIL("unknown mode %s", mode);
    ws_pool_destroy(pool);
    printf("test_group_cancel %u %s: passed\n", P, mode);
    return 0;
}
