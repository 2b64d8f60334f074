/* test_future_rules: one case per way in which a get of a future can break the futures' promise
 * (docs/api.md, "Futures"): any thread may get any future in any order, and a program whose gets
 * form no cycle finishes, even on a pool held to its P workers (max_spares = WS_NO_SPARES). A
 * helping get may run only work that its future waits for (docs/scheduler.md, "Waits run only
 * the work they wait for"); each case below builds, on purpose, a program in which a get is
 * offered other work, and fails when the get takes it: a hang (caught by the watchdog of
 * tests/test_watchdog.h, which prints where the program stands), the library's abort, or a
 * count that must be zero.
 *
 * usage: test_future_rules CASE [WORKERS] [nospares], one ctest entry per case
 * (tests/future.cmake):
 *   fkmh P       main submits f, k and m; f submits h, never gets it, and computes; k gets f, m
 *                gets k, h gets m. No cycle (one worker finishes it), but the worker running k
 *                may take h while it waits for f (h sits above f's floor on f's worker), and h
 *                then waits for m, which waits for k, which lies under h on the same stack:
 *                a hang. 10 rounds, each on a new pool; P from 3 (extra workers are held by
 *                futures that wait for h to start, so that only k's get can take it).
 *   self_get P   the same without m: h gets k. If k's worker takes h, h gets a future that its
 *                own worker runs further down its stack: the library's abort "the future's own
 *                function (or work it waits for) gets it". 10 rounds, P from 2.
 *   put_back     2 workers. Future k, on worker B, submits x and y on B's deque. Future t, on
 *                worker A, submits o, the only item of A's deque, public, and gets x, which it
 *                claims where it sits and runs above o (A's floor goes above o). x gets y (also
 *                claimed on B's deque), a slow get: its clean-up pops o and puts it back; with o
 *                the last public item, the pop moved top past its index and o lands one higher,
 *                on x's floor. k waits for x meanwhile and leapfrogs A above that floor: it must
 *                not find o there (o belongs to t, under x). o records the get it runs inside,
 *                if any; the case fails if that is k's get of x (o's own get of k would abort:
 *                k runs under it). 20 rounds, each on a new pool.
 *   leapfrog_window [nospares]  2 workers. A worker (the producer) submits a future f,
 *                publishes it, gets it itself, then spawns a task c and syncs it; the other
 *                worker gets f meanwhile. A getter that leapfrogs f's worker checks that f
 *                still runs and then steals: between the two, the producer may finish f and push
 *                c where f's work began. c must never run inside a get (nothing waits for it
 *                there); every get of the case records itself in a thread-local, and c counts
 *                its runs inside one: they must be 0. The getter takes a signal while f ends
 *                (relay_hold_for_stall), so that it pauses at random points of its wait, as
 *                preemption pauses it on a busy machine, but in every iteration. 20,000
 *                iterations (fewer under the sanitizers).
 *   dead_slots_cancel N [nospares]  1 worker, N futures (20,000 or 100,000). A task submits
 *                futures in batches of 1,000 on its worker's deque; main cancels and frees
 *                each batch from outside; after each batch the task submits and gets one future
 *                of its own (where its worker may let go of dead slots). The deque must stay
 *                bounded (ws_pool_stats' max_deque_depth), every cancel must succeed, and no
 *                submit may run its future at once (as at the deque's cap of 65,535 items).
 *   dead_slots_get N [nospares]  2 workers: the same, the futures got (claimed where they
 *                sit, and run) by a task on the other worker instead of cancelled.
 *   shared_gets P  a worker submits futures and gets each one, while the P - 1 other workers
 *                get the same future at the same time; results and exactly-once checked. The
 *                case for ThreadSanitizer: a field of the library that one getter reads while
 *                another writes it must be an atomic (a report fails the test).
 *   own_handle P  a worker submits batches of futures onto its empty deque (public at once: the
 *                reserve, src/deque.h), which the P - 1 idle workers steal as they come (P from
 *                3: tests/future.cmake says why); each function reads its own handle through
 *                its argument, as ws_future_submit allows (it sets *out before fn can start);
 *                the worker then gets and frees them. Fails if a function found no handle;
 *                under ThreadSanitizer, a write of the submit after the push that published the
 *                future is a report.
 * The watchdog aborts a case with a report after 20 s (scaled as ctest scales the TIMEOUT) in
 * which nothing moved. Waits that only shape the interleaving (a future that waits for another
 * to reach its get) give up after 0.5 s (scaled the same way), so that every program here also
 * finishes on a library that does not fall into the trap.
 */
#include "test_future_util.h"
#include "test_sched_util.h"
#include "test_watchdog.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>

/* ---- helpers ----------------------------------------------------------------------------- */

static const char *case_name = "test_future_rules";

/* The rounds of the cases that repeat a shape: `fallback`, or $WS_TEST_ROUNDS (for measuring how
 * often one round fails: a failed round ends the process). */
static unsigned rounds_or(unsigned fallback)
{
    const char *env = getenv("WS_TEST_ROUNDS");
    return env != NULL && atoi(env) > 0 ? (unsigned)atoi(env) : fallback;
}

/* The get that the calling thread is inside, innermost (NULL: none), and its name: whatever
 * runs on this thread meanwhile runs inside that get. Only the test's gets below set it. */
static _Thread_local const ws_future *getting;
static _Thread_local const char *getting_name;

static void *tracked_get(ws_future *f, const char *name)
{
    const ws_future *outer = getting;
    const char *outer_name = getting_name;
    getting = f;
    getting_name = name;
    void *r = ws_future_get(f);
    getting = outer;
    getting_name = outer_name;
    test_progress();
    return r;
}

/* A wait for another thread of the test that only shapes the interleaving: gives up after
 * half a second, and the program goes on correctly either way (unscaled under the sanitizers:
 * a case with no spares reaches the limit in every round). True if ready() held. */
#define SHAPE_SECONDS 0.5
static bool shape_wait(bool (*ready)(void *), void *arg)
{
    double until = sched_now() + SHAPE_SECONDS;
    while (!ready(arg)) {
        if (sched_now() > until)
            return false;
        sched_yield();
    }
    return true;
}

static bool flag_set(void *p)
{
    return atomic_load((atomic_bool *)p);
}

/* A wait for another thread of the test that the program needs (a handle it publishes): no
 * limit but the watchdog's. */
static void wait_flag(atomic_bool *flag)
{
    while (!atomic_load(flag))
        sched_yield();
}

static void set_flag(atomic_bool *flag)
{
    atomic_store(flag, true);
    test_progress();
}

/* ---- fkmh and self_get ------------------------------------------------------------------- */

enum { SHAPE_ROUNDS = 10, MAX_BLOCKERS = 16 };
static unsigned shape_rounds;

typedef struct shape {
    bool with_m; /* fkmh: h gets m, m gets k; self_get: no m, h gets k */
    unsigned round, workers, blockers;
    ws_future *f, *k, *m, *h, *blocker[MAX_BLOCKERS];
    atomic_bool all_submitted, k_in_get, m_in_get, h_submitted, h_started, h_in_get;
    atomic_uint blockers_started;
    _Atomic(const char *) h_inside; /* the get h started inside, if any (set by h) */
    atomic_int h_worker;
    uint64_t out_f, out_k, out_m, out_h;
} shape;

static shape *shape_now; /* for the watchdog's report */

static void shape_report(void *p)
{
    (void)p;
    const shape *s = shape_now;
    if (s == NULL)
        return;
    fprintf(stderr,
            "%s: round %u of %u on %u workers: k in its get %d, m in its get %d, h submitted %d, "
            "h started %d (inside %s, on worker %d), h in its get %d\n",
            case_name, s->round + 1, shape_rounds, s->workers, atomic_load(&s->k_in_get),
            atomic_load(&s->m_in_get), atomic_load(&s->h_submitted), atomic_load(&s->h_started),
            atomic_load(&s->h_inside) != NULL ? atomic_load(&s->h_inside) : "no get",
            atomic_load(&s->h_worker), atomic_load(&s->h_in_get));
}

/* f's gate: k (and m) are inside their gets, the extra workers held. */
static bool shape_getters_waiting(void *p)
{
    shape *s = p;
    return atomic_load(&s->k_in_get) && (!s->with_m || atomic_load(&s->m_in_get)) &&
           atomic_load(&s->blockers_started) == s->blockers;
}

static void nothing_task(void *p)
{
    (void)p;
}

static void *shape_h(void *p)
{
    shape *s = p;
    atomic_store(&s->h_inside, getting_name);
    atomic_store(&s->h_worker, ws_worker_id());
    set_flag(&s->h_started);
    if (getting != NULL)
        fprintf(stderr,
                "%s: round %u: h started on worker %d inside the get of %s, which does "
                "not wait for h\n",
                case_name, s->round + 1, ws_worker_id(), getting_name);
    set_flag(&s->h_in_get);
    const uint64_t *below = tracked_get(s->with_m ? s->m : s->k, s->with_m ? "m" : "k");
    s->out_h = *below + 1000;
    return &s->out_h;
}

/* f: submits h, never gets it, and computes (forks and joins) until h has started. */
static void *shape_f(void *p)
{
    shape *s = p;
    wait_flag(&s->all_submitted); /* k and m's handles are written */
    shape_wait(shape_getters_waiting, s);
    s->h = submit(NULL, shape_h, s);
    set_flag(&s->h_submitted);
    double until = sched_now() + SHAPE_SECONDS;
    while (!atomic_load(&s->h_started) && sched_now() < until) {
        ws_task t; /* each push shares h with a thief that asked, as any push does */
        ws_spawn(&t, nothing_task, NULL);
        ws_sync(&t);
    }
    s->out_f = 1;
    return &s->out_f;
}

static void *shape_k(void *p)
{
    shape *s = p;
    set_flag(&s->k_in_get);
    s->out_k = *(const uint64_t *)tracked_get(s->f, "f") + 10;
    return &s->out_k;
}

static void *shape_m(void *p)
{
    shape *s = p;
    set_flag(&s->m_in_get);
    s->out_m = *(const uint64_t *)tracked_get(s->k, "k") + 100;
    return &s->out_m;
}

/* Holds a worker until h has started (or the shaping wait gives up). */
static void *shape_blocker(void *p)
{
    shape *s = p;
    atomic_fetch_add(&s->blockers_started, 1);
    test_progress();
    shape_wait(flag_set, &s->h_started);
    return s;
}

static void shape_round(shape *s, bool no_spares)
{
    ws_pool *pool = future_pool(s->workers, no_spares, 0);
    s->f = submit(pool, shape_f, s);
    s->k = submit(pool, shape_k, s);
    if (s->with_m)
        s->m = submit(pool, shape_m, s);
    for (unsigned i = 0; i < s->blockers; i++)
        s->blocker[i] = submit(pool, shape_blocker, s);
    set_flag(&s->all_submitted);
    wait_flag(&s->h_submitted); /* f wrote h's handle */
    ASSERT_UEQ(*(const uint64_t *)tracked_get(s->h, "h"), s->with_m ? 1111 : 1011);
    ASSERT_UEQ(*(const uint64_t *)tracked_get(s->f, "f"), 1);
    ASSERT_UEQ(*(const uint64_t *)tracked_get(s->k, "k"), 11);
    ws_future_free(s->f);
    ws_future_free(s->k);
    ws_future_free(s->h);
    if (s->with_m) {
        ASSERT_UEQ(*(const uint64_t *)tracked_get(s->m, "m"), 111);
        ws_future_free(s->m);
    }
    for (unsigned i = 0; i < s->blockers; i++) {
        ASSERT_PTR_EQ(tracked_get(s->blocker[i], "a blocker"), s);
        ws_future_free(s->blocker[i]);
    }
    ws_pool_destroy(pool);
}

static void case_shape(bool with_m, unsigned workers, bool no_spares)
{
    unsigned busy = with_m ? 3 : 2; /* the workers that f, k (and m) occupy */
    if (workers < busy || workers - busy > MAX_BLOCKERS)
        WS_TEST_FAIL("%s needs %u to %u workers", case_name, busy, busy + MAX_BLOCKERS);
    test_watchdog_start(case_name, 20, shape_report, NULL);
    shape_rounds = rounds_or(SHAPE_ROUNDS);
    for (unsigned round = 0; round < shape_rounds; round++) {
        shape s = {.with_m = with_m,
                   .round = round,
                   .workers = workers,
                   .blockers = workers - busy,
                   .h_worker = -1};
        shape_now = &s;
        shape_round(&s, no_spares);
        shape_now = NULL;
    }
    test_watchdog_stop();
    printf("%s: %u rounds on %u workers (%s): every round finished\n", case_name, shape_rounds,
           workers, no_spares ? "WS_NO_SPARES" : "default spares");
}

/* ---- put_back ---------------------------------------------------------------------------- */

enum { LIFT_ROUNDS = 20 };
static unsigned lift_rounds;

typedef struct lift {
    unsigned round;
    ws_future *k, *t, *o, *x, *y;
    atomic_bool k_started, t_ready, xy_ready, x_claimed, k_in_get, o_started;
    atomic_int t_worker;
    uint64_t out_k, out_o, out_x, out_y;
} lift;

static lift *lift_now; /* for the watchdog's report */

static void lift_report(void *p)
{
    (void)p;
    const lift *l = lift_now;
    if (l == NULL)
        return;
    fprintf(stderr,
            "%s: round %u of %u: x claimed %d, k in its get of x %d, o started %d (t on worker "
            "%d)\n",
            case_name, l->round + 1, lift_rounds, atomic_load(&l->x_claimed),
            atomic_load(&l->k_in_get), atomic_load(&l->o_started), atomic_load(&l->t_worker));
}

static void *lift_y(void *p)
{
    lift *l = p;
    l->out_y = 7;
    return &l->out_y;
}

/* o: t's future. Run inside a get, it must be t's get of o (or main's, which waits for it). */
static void *lift_o(void *p)
{
    lift *l = p;
    set_flag(&l->o_started);
    if (getting != NULL && getting != l->o)
        WS_TEST_FAIL("%s: round %u: o, a future of t queued under x on worker %d, ran on worker "
                     "%d inside the get of %s, which does not wait for it (the put-back lifted "
                     "o over x's floor)",
                     case_name, l->round + 1, atomic_load(&l->t_worker), ws_worker_id(),
                     getting_name);
    l->out_o = *(const uint64_t *)tracked_get(l->k, "k") + 100;
    return &l->out_o;
}

static bool lift_k_waits(void *p)
{
    return atomic_load(&((lift *)p)->k_in_get);
}

/* x: run by t on A (claimed where it sits, on B's deque: A's floor goes above o). Its get of y,
 * queued on B's deque too, is a slow get: the clean-up after it pops o and puts it back. */
static void *lift_x(void *p)
{
    lift *l = p;
    set_flag(&l->x_claimed);
    shape_wait(lift_k_waits, l);
    for (int i = 0; i < 2000; i++) /* k reads x's state and starts leapfrogging */
        atomic_signal_fence(memory_order_seq_cst);
    l->out_x = *(const uint64_t *)tracked_get(l->y, "y") + 10;
    shape_wait(flag_set, &l->o_started);
    return &l->out_x;
}

static void *lift_t(void *p)
{
    lift *l = p;
    atomic_store(&l->t_worker, ws_worker_id());
    l->o = submit(NULL, lift_o, l); /* the only item of A's deque, public at once (reserve) */
    set_flag(&l->t_ready);
    wait_flag(&l->xy_ready);
    ASSERT_UEQ(*(const uint64_t *)tracked_get(l->x, "x"), 17);
    ASSERT_UEQ(*(const uint64_t *)tracked_get(l->o, "o"), 118);
    ws_future_free(l->o);
    return l;
}

/* k: on B. Submits x and y once t runs on A (so that no idle worker steals them), and waits
 * for x, claimed and run by t on A, leapfrogging A meanwhile. */
static void *lift_k(void *p)
{
    lift *l = p;
    set_flag(&l->k_started);
    wait_flag(&l->t_ready);
    l->x = submit(NULL, lift_x, l);
    l->y = submit(NULL, lift_y, l);
    set_flag(&l->xy_ready);
    shape_wait(flag_set, &l->x_claimed);
    set_flag(&l->k_in_get);
    l->out_k = *(const uint64_t *)tracked_get(l->x, "x") + 1;
    return &l->out_k;
}

static void lift_round(lift *l, bool no_spares)
{
    ws_pool *pool = future_pool(2, no_spares, 0);
    l->k = submit(pool, lift_k, l); /* B */
    wait_flag(&l->k_started);
    l->t = submit(pool, lift_t, l); /* A, the other worker: B is busy */
    ASSERT_PTR_EQ(tracked_get(l->t, "t"), l);
    ASSERT_UEQ(*(const uint64_t *)tracked_get(l->k, "k"), 18);
    ws_future_free(l->t);
    ws_future_free(l->k);
    ws_future_free(l->x);
    ws_future_free(l->y);
    ws_pool_destroy(pool);
}

static void case_put_back(bool no_spares)
{
    test_watchdog_start(case_name, 20, lift_report, NULL);
    lift_rounds = rounds_or(LIFT_ROUNDS);
    for (unsigned round = 0; round < lift_rounds; round++) {
        lift l = {.round = round, .t_worker = -1};
        lift_now = &l;
        lift_round(&l, no_spares);
        lift_now = NULL;
    }
    test_watchdog_stop();
    printf("%s: %u rounds (%s): o never ran inside k's get of x\n", case_name, lift_rounds,
           no_spares ? "WS_NO_SPARES" : "default spares");
}

/* ---- leapfrog_window and shared_gets ----------------------------------------------------- */

/* One worker (the producer) submits a future per iteration and gets it; `getters` tasks on the
 * other workers get the same future while it runs there; then the producer spawns and syncs a
 * task of its own. The future holds until every getter is inside its get.
 *
 * With stalls (leapfrog_window, one getter), the future, once the getter is inside its get,
 * forks small children (which the getter leapfrogs, as it should, so that it keeps to the
 * spinning rounds of its wait) and sends the getter's thread a signal. The signal lands wherever
 * the getter is; unless that is inside a child, the handler holds the getter there until the
 * producer has finished the future and pushed its own task, and the producer leaves its task
 * in place until the getter's get has returned: the pause that preemption gives a getter on a
 * busy machine, made frequent. A stall that lands between a leapfrog's check of the future's
 * state and its steal shows the window. */
typedef struct relay {
    unsigned getters;
    bool stalls;
    uint64_t iterations;
    /* The iteration's future: written by the producer before it stores seq. */
    ws_future *current;
    uint64_t i, out;
    atomic_uint runs;
    atomic_bool started;     /* the future runs (so that a getter finds it claimed) */
    atomic_uint in_get;      /* getters about to enter their get */
    atomic_bool holding;     /* the future waits for a stall of the getter */
    atomic_bool stalled;     /* the getter's signal handler holds it */
    atomic_bool pushed;      /* the producer pushed its own task */
    atomic_bool released;    /* the handler let the getter go */
    pthread_t getter_thread; /* with stalls: the one getter's */
    atomic_uint_fast64_t seq;
    atomic_uint acks;
    atomic_uint_fast64_t stalls_taken;     /* stalls that held the getter over the future's end */
    atomic_uint_fast64_t after_inside_get; /* the producer's own task run inside a get */
    atomic_uint_fast64_t first_bad_iteration;
} relay;

enum { RELAY_SPIN_LIMIT = 200000, STALL_SIGNAL_OFFSET = 3, STALL_RESEND = 64 };

static relay *stalled_relay;                         /* the relay whose getter takes the stalls */
static _Thread_local volatile sig_atomic_t in_child; /* the thread runs a child of the future */

/* Bounded spins (a count, not a clock), for waits that shape the interleaving. */
static bool relay_spin_until(const atomic_uint *value, unsigned expected)
{
    for (unsigned spins = 0; atomic_load(value) != expected && spins < RELAY_SPIN_LIMIT; spins++) {
        if (spins < 1024)
            test_cpu_relax();
        else
            sched_yield();
    }
    return atomic_load(value) == expected;
}

static void relay_spin_until_set(const atomic_bool *flag)
{
    for (unsigned spins = 0; !atomic_load(flag) && spins < RELAY_SPIN_LIMIT; spins++)
        atomic_signal_fence(memory_order_seq_cst);
}

static int stall_signal(void)
{
    return SIGRTMIN + STALL_SIGNAL_OFFSET;
}

/* The getter's signal handler (async-signal-safe: lock-free atomics only). */
static void stall_handler(int sig)
{
    (void)sig;
    relay *r = stalled_relay;
    if (r == NULL || in_child || !atomic_load(&r->holding) || atomic_load(&r->stalled))
        return;
    atomic_store(&r->stalled, true);
    relay_spin_until_set(&r->pushed);
    atomic_store(&r->released, true);
}

static void stalls_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = stall_handler;
    sa.sa_flags = SA_RESTART;
    ASSERT_OK(sigaction(stall_signal(), &sa, NULL));
}

/* A child of the future: the getter may leapfrog it (work its get waits for). */
static void relay_child(void *p)
{
    (void)p;
    in_child = 1;
    for (int i = 0; i < 32; i++)
        atomic_signal_fence(memory_order_seq_cst);
    in_child = 0;
}

/* The future's end with stalls: forks children until the getter's handler holds it. */
static void relay_hold_for_stall(relay *r)
{
    atomic_store(&r->holding, true);
    for (unsigned k = 0; !atomic_load(&r->stalled) && k < RELAY_SPIN_LIMIT / 10; k++) {
        if (k % STALL_RESEND == 0)
            ASSERT_OK(pthread_kill(r->getter_thread, stall_signal()));
        ws_task child;
        ws_spawn(&child, relay_child, r);
        for (int i = 0; i < 64; i++)
            atomic_signal_fence(memory_order_seq_cst);
        ws_sync(&child);
    }
    atomic_store(&r->holding, false);
    if (atomic_load(&r->stalled))
        atomic_fetch_add(&r->stalls_taken, 1);
}

static void *relay_future(void *p)
{
    relay *r = p;
    atomic_fetch_add(&r->runs, 1);
    atomic_store(&r->started, true);
    bool getters_in = relay_spin_until(&r->in_get, r->getters);
    if (r->stalls && getters_in) /* the getter's thread is known once it is in */
        relay_hold_for_stall(r);
    r->out = 3 * r->i + 1;
    return &r->out;
}

/* The producer's task after its get: nothing waits for it inside any get. */
static void relay_after(void *p)
{
    relay *r = p;
    if (getting != NULL) {
        uint_fast64_t none = 0;
        atomic_compare_exchange_strong(&r->first_bad_iteration, &none, r->i);
        atomic_fetch_add(&r->after_inside_get, 1);
    }
}

/* A wait for the other side of the relay: spins first (both sides run at once, each on its own
 * worker), and yields only once the other side seems descheduled. */
static void relay_wait(bool (*ready)(relay *, uint64_t), relay *r, uint64_t arg)
{
    for (unsigned spins = 0; !ready(r, arg); spins++) {
        if (spins < 1024)
            test_cpu_relax();
        else
            sched_yield();
    }
}

static bool relay_all_acked(relay *r, uint64_t getters)
{
    return atomic_load(&r->acks) == getters;
}

static bool relay_published(relay *r, uint64_t i)
{
    return atomic_load(&r->seq) == i;
}

static bool relay_started(relay *r, uint64_t unused)
{
    (void)unused;
    return atomic_load(&r->started);
}

/* The get of the iteration's future, as tracked_get, without the watchdog's shared counter:
 * the producer's task must follow the get's end as closely as a program's would. */
static const uint64_t *relay_get(ws_future *f)
{
    getting = f;
    getting_name = "the producer's future";
    const uint64_t *v = ws_future_get(f);
    getting = NULL;
    getting_name = NULL;
    return v;
}

static void *relay_producer(void *p)
{
    relay *r = p;
    for (uint64_t i = 1; i <= r->iterations; i++) {
        r->i = i;
        atomic_store(&r->runs, 0);
        atomic_store(&r->started, false);
        atomic_store(&r->in_get, 0);
        atomic_store(&r->stalled, false);
        atomic_store(&r->pushed, false);
        atomic_store(&r->released, false);
        ws_future *f = submit(NULL, relay_future, r);
        r->current = f;
        atomic_store(&r->seq, i);
        const uint64_t *v = relay_get(f);
        ws_task after;
        ws_spawn(&after, relay_after, r);
        atomic_store(&r->pushed, true);
        if (atomic_load(&r->stalled)) { /* the getter resumes: leave it the chance to steal */
            relay_spin_until_set(&r->released);
            relay_spin_until(&r->acks, r->getters);
        }
        ws_sync(&after);
        ASSERT_PTR_EQ(v, &r->out);
        ASSERT_UEQ(*v, 3 * i + 1);
        relay_wait(relay_all_acked, r, r->getters);
        atomic_store(&r->acks, 0);
        ASSERT_EQ(atomic_load(&r->runs), 1);
        ws_future_free(f);
    }
    return r;
}

static void *relay_getter(void *p)
{
    relay *r = p;
    if (r->stalls)
        r->getter_thread = pthread_self();
    for (uint64_t i = 1; i <= r->iterations; i++) {
        relay_wait(relay_published, r, i);
        if (r->stalls) /* a getter that comes first runs the future itself: no window then */
            relay_wait(relay_started, r, 0);
        atomic_fetch_add(&r->in_get, 1);
        const uint64_t *v = relay_get(r->current);
        ASSERT_PTR_EQ(v, &r->out);
        ASSERT_UEQ(*v, 3 * i + 1);
        atomic_fetch_add(&r->acks, 1);
        if (i % 256 == 0)
            test_progress();
    }
    return r;
}

static void relay_report(void *p)
{
    relay *r = p;
    fprintf(stderr, "%s: iteration %" PRIu64 " of %" PRIu64 ", %u getter(s) acked\n", case_name,
            (uint64_t)atomic_load(&r->seq), r->iterations, atomic_load(&r->acks));
}

static void relay_run(relay *r, unsigned workers, bool no_spares)
{
    ws_pool *pool = future_pool(workers, no_spares, 0);
    test_watchdog_start(case_name, 20, relay_report, r);
    stalled_relay = r->stalls ? r : NULL;
    if (r->stalls)
        stalls_install();
    ws_future *getter[MAX_BLOCKERS];
    for (unsigned g = 0; g < r->getters; g++)
        getter[g] = submit(pool, relay_getter, r);
    ws_future *producer = submit(pool, relay_producer, r);
    ASSERT_PTR_EQ(ws_future_get(producer), r);
    ws_future_free(producer);
    for (unsigned g = 0; g < r->getters; g++) {
        ASSERT_PTR_EQ(ws_future_get(getter[g]), r);
        ws_future_free(getter[g]);
    }
    test_watchdog_stop();
    ws_stats st;
    ws_pool_stats(pool, &st);
    printf("%s: %" PRIu64 " iterations on %u workers (%s): the producer's own task ran inside "
           "a get %" PRIu64 " times (first in iteration %" PRIu64 "); %" PRIu64
           " leapfrogs, %" PRIu64 " stalls of a getter over the future's end\n",
           case_name, r->iterations, workers, no_spares ? "WS_NO_SPARES" : "default spares",
           (uint64_t)atomic_load(&r->after_inside_get),
           (uint64_t)atomic_load(&r->first_bad_iteration), st.leapfrogs,
           (uint64_t)atomic_load(&r->stalls_taken));
    ws_pool_destroy(pool);
}

static void case_leapfrog_window(bool no_spares)
{
    relay r = {.getters = 1, .stalls = true, .iterations = test_scaled(80000, 5000)};
    relay_run(&r, 2, no_spares);
    uint64_t inside = atomic_load(&r.after_inside_get);
    if (inside != 0)
        WS_TEST_FAIL("%s: a getter ran the producer's own task, which its get does not wait for, "
                     "%" PRIu64 " times in %" PRIu64 " iterations",
                     case_name, inside, r.iterations);
}

static void case_shared_gets(unsigned workers)
{
    if (workers < 2 || workers - 1 > MAX_BLOCKERS)
        WS_TEST_FAIL("%s needs 2 to %u workers", case_name, MAX_BLOCKERS + 1);
    /* ThreadSanitizer is what this case is for: it runs there as long as in the plain build. */
    relay r = {.getters = workers - 1,
               .iterations = WS_TEST_TSAN ? 4000 : test_scaled(16000, 1000)};
    relay_run(&r, workers, false);
}

/* ---- own_handle -------------------------------------------------------------------------- */

/* A batch of futures submitted by a worker whose deque was empty: the reserve makes each public
 * as soon as it is pushed, and the idle workers steal them as they come. Each function reads
 * its own handle through its argument (ws_future_submit sets *out before fn can start); the
 * producer then gets each future (running those nobody took), checks what its function saw and
 * frees it, which leaves the deque empty for the next batch. */
enum { OWN_BATCH = 64 };

typedef struct own {
    uint64_t batches;
    ws_future *handle[OWN_BATCH]; /* NULL until the submit sets it */
    ws_future *seen[OWN_BATCH];   /* what each function found there */
    atomic_uint ran;              /* functions of the batch that ran */
} own;

typedef struct own_slot {
    own *o;
    int i;
} own_slot;

static void *own_future(void *p)
{
    own_slot *slot = p;
    slot->o->seen[slot->i] = slot->o->handle[slot->i];
    atomic_fetch_add(&slot->o->ran, 1);
    return slot;
}

static void *own_producer(void *p)
{
    own *o = p;
    own_slot slots[OWN_BATCH];
    uint64_t missing = 0;
    for (uint64_t b = 0; b < o->batches; b++) {
        atomic_store(&o->ran, 0);
        for (int i = 0; i < OWN_BATCH; i++) {
            slots[i] = (own_slot){o, i};
            o->handle[i] = NULL;
            o->seen[i] = NULL;
            int err = ws_future_submit(&o->handle[i], NULL, own_future, &slots[i]);
            if (err != 0)
                WS_TEST_FAIL("ws_future_submit: %d (%s)", err, ws_strerror(err));
        }
        /* A while for the thieves (bounded: the gets below run what they leave). */
        double until = sched_now() + test_hang_seconds(0.005);
        while (atomic_load(&o->ran) < OWN_BATCH && sched_now() < until)
            test_cpu_relax();
        for (int i = 0; i < OWN_BATCH; i++) {
            ASSERT_PTR_EQ(ws_future_get(o->handle[i]), &slots[i]);
            if (o->seen[i] != o->handle[i])
                missing++;
            ws_future_free(o->handle[i]);
        }
        test_progress();
    }
    return (void *)(uintptr_t)missing;
}

static void case_own_handle(unsigned workers)
{
    own o = {.batches = test_scaled(2000, 400)};
    ws_pool *pool = future_pool(workers, false, 0);
    test_watchdog_start(case_name, 20, NULL, NULL);
    ws_future *producer = submit(pool, own_producer, &o);
    uint64_t missing = (uintptr_t)ws_future_get(producer);
    ws_future_free(producer);
    test_watchdog_stop();
    ws_stats st;
    ws_pool_stats(pool, &st);
    ws_pool_destroy(pool);
    printf("%s: %" PRIu64 " futures on %u workers (%" PRIu64 " steals), %" PRIu64
           " functions found no handle of their own\n",
           case_name, o.batches * OWN_BATCH, workers, st.steals, missing);
    if (missing != 0)
        WS_TEST_FAIL("%s: %" PRIu64 " functions ran before their submit set their handle",
                     case_name, missing);
}

/* ---- dead_slots_cancel and dead_slots_get ------------------------------------------------ */

/* Batches larger than the reserve of public slots above an empty deque (at most the pool's
 * threads - 1, src/deque.h): the producer's own future lies among private items, so that its
 * get may take the inline path, which sweeps only when its worker's hint says so. */
enum { DEAD_BATCH = 1000 };

typedef struct dead {
    uint64_t n;
    bool by_get; /* let go of by a getter on another worker, else cancelled from outside */
    ws_future *batch[DEAD_BATCH];
    atomic_uint_fast64_t handed, taken; /* futures handed to the other side, and let go of */
    atomic_uint_fast64_t cancelled, ran, ran_at_submit;
    uint64_t own;
} dead;

static _Thread_local bool submitting; /* inside the test's submit of a victim */

static void *dead_victim(void *p)
{
    dead *d = p;
    atomic_fetch_add(&d->ran, 1);
    if (submitting) /* run at once by its submit: the deque took no more */
        atomic_fetch_add(&d->ran_at_submit, 1);
    return d;
}

static void *dead_own(void *p)
{
    dead *d = p;
    d->own = 42;
    return &d->own;
}

static bool dead_handed(void *p)
{
    dead *d = p;
    return atomic_load(&d->handed) > atomic_load(&d->taken);
}

/* On a worker: batches of futures for the other side, and one future of its own after each. */
static void *dead_producer(void *p)
{
    dead *d = p;
    for (uint64_t i = 0; i < d->n; i += DEAD_BATCH) {
        submitting = true;
        for (int j = 0; j < DEAD_BATCH; j++)
            d->batch[j] = submit(NULL, dead_victim, d);
        submitting = false;
        atomic_store(&d->handed, i + DEAD_BATCH);
        while (atomic_load(&d->taken) != i + DEAD_BATCH)
            sched_yield();
        ws_future *mine = submit(NULL, dead_own, d);
        ASSERT_UEQ(*(const uint64_t *)ws_future_get(mine), 42);
        ws_future_free(mine);
    }
    return d;
}

/* The other side of one batch: cancel and free (any thread), or get and free (a worker). */
static void dead_take_batch(dead *d)
{
    while (!dead_handed(d))
        sched_yield();
    for (int j = 0; j < DEAD_BATCH; j++) {
        ws_future *f = d->batch[j];
        if (d->by_get)
            ASSERT_PTR_EQ(ws_future_get(f), d);
        else if (ws_future_cancel(f))
            atomic_fetch_add(&d->cancelled, 1);
        ws_future_free(f);
    }
    atomic_fetch_add(&d->taken, DEAD_BATCH);
    test_progress();
}

static void *dead_getter(void *p)
{
    dead *d = p;
    for (uint64_t i = 0; i < d->n; i += DEAD_BATCH)
        dead_take_batch(d);
    return d;
}

static void dead_report(void *p)
{
    dead *d = p;
    fprintf(stderr, "%s: %" PRIu64 " of %" PRIu64 " futures handed, %" PRIu64 " let go of\n",
            case_name, (uint64_t)atomic_load(&d->handed), d->n, (uint64_t)atomic_load(&d->taken));
}

static void case_dead_slots(bool by_get, uint64_t n, bool no_spares)
{
    dead *d = calloc(1, sizeof *d);
    ASSERT(d != NULL);
    d->n = (n + DEAD_BATCH - 1) / DEAD_BATCH * DEAD_BATCH;
    d->by_get = by_get;
    ws_pool *pool = future_pool(by_get ? 2 : 1, no_spares, 0);
    test_watchdog_start(case_name, 20, dead_report, d);
    ws_future *getter = by_get ? submit(pool, dead_getter, d) : NULL;
    ws_future *producer = submit(pool, dead_producer, d);
    if (!by_get) /* main cancels from outside */
        for (uint64_t i = 0; i < d->n; i += DEAD_BATCH)
            dead_take_batch(d);
    ASSERT_PTR_EQ(ws_future_get(producer), d);
    ws_future_free(producer);
    if (getter != NULL) {
        ASSERT_PTR_EQ(ws_future_get(getter), d);
        ws_future_free(getter);
    }
    test_watchdog_stop();
    ws_stats st;
    ws_pool_stats(pool, &st);
    ws_pool_destroy(pool);
    /* Two batches and the producer's own future, far below the futures let go of. */
    uint64_t bound = 2 * DEAD_BATCH + 1;
    printf("%s: %" PRIu64 " futures %s: deepest deque %" PRIu64 " (bound %" PRIu64 "), %" PRIu64
           " cancels succeeded, %" PRIu64 " ran, %" PRIu64 " of them at once in their submit\n",
           case_name, d->n, by_get ? "got from another worker" : "cancelled from outside",
           st.max_deque_depth, bound, (uint64_t)atomic_load(&d->cancelled),
           (uint64_t)atomic_load(&d->ran), (uint64_t)atomic_load(&d->ran_at_submit));
    uint64_t at_submit = atomic_load(&d->ran_at_submit), ran = atomic_load(&d->ran);
    uint64_t cancelled = atomic_load(&d->cancelled);
    if (at_submit != 0)
        WS_TEST_FAIL("%s: %" PRIu64 " submits ran their future at once instead of queueing it "
                     "(a deque at its cap of 65,535 items)",
                     case_name, at_submit);
    if (by_get ? ran != d->n : cancelled != d->n || ran != 0)
        WS_TEST_FAIL("%s: %" PRIu64 " futures, %" PRIu64 " ran, %" PRIu64 " cancels succeeded",
                     case_name, d->n, ran, cancelled);
    if (st.max_deque_depth > bound)
        WS_TEST_FAIL("%s: a deque %" PRIu64 " deep, above %" PRIu64 ": the dead slots that "
                     "another thread made stayed on the deque",
                     case_name, st.max_deque_depth, bound);
    free(d);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep the output in order with stderr on a failure */
    if (argc < 2) {
        fprintf(stderr, "usage: %s CASE [WORKERS | COUNT] [nospares]\n", argv[0]);
        return 2;
    }
    const char *c = argv[1];
    unsigned long number = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
    bool no_spares = argc > 3 && strcmp(argv[3], "nospares") == 0;
    case_name = c;
    if (strcmp(c, "fkmh") == 0 && number > 0)
        case_shape(true, (unsigned)number, no_spares);
    else if (strcmp(c, "self_get") == 0 && number > 0)
        case_shape(false, (unsigned)number, no_spares);
    else if (strcmp(c, "put_back") == 0)
        case_put_back(argc > 2 && strcmp(argv[2], "nospares") == 0);
    else if (strcmp(c, "leapfrog_window") == 0)
        case_leapfrog_window(argc > 2 && strcmp(argv[2], "nospares") == 0);
    else if (strcmp(c, "shared_gets") == 0 && number > 0)
        case_shared_gets((unsigned)number);
    else if (strcmp(c, "dead_slots_cancel") == 0 && number > 0)
        case_dead_slots(false, number, no_spares);
    else if (strcmp(c, "dead_slots_get") == 0 && number > 0)
        case_dead_slots(true, number, no_spares);
    else if (strcmp(c, "own_handle") == 0 && number > 0)
        case_own_handle((unsigned)number);
    else {
        fprintf(stderr, "unknown case or missing count: %s\n", c);
        return 2;
    }
    printf("ok\n");
    return 0;
}
