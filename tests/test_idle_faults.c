/* test_idle_faults: wake-ups that a submitter's preemption could lose, provoked by holding the
 * submitter at its futex wake.
 *
 * This program defines syscall() and sched_yield() itself, so the library linked into it calls
 * these definitions (the release library calls the C library's). They watch the one worker
 * (its futex waits and its yields) and hold a submitter that wakes one waiter:
 *
 *   before  the submitter's wake is held until the worker is inside a futex wait. Normally it is
 *           already (it parked, and the wake goes through at once); but when the worker's last
 *           look before sleeping took the job, the wake is held until it has run the job and
 *           parked again. A protocol that leaves a "wake-up in flight" flag for the woken worker
 *           to clear, and sends that worker back to sleep when it sees no new epoch, stays deaf
 *           to every later submission.
 *   after   after a wake that reached nobody (the worker's last look was taking the job), the
 *           submitter is held until the worker sleeps again and a second submitter has
 *           submitted. A protocol that clears its "wake-up in flight" flag after such a wake has
 *           suppressed the second submitter's wake-up.
 *
 * Each round, the submitter waits until the worker has made its last yield before parking
 * (YIELD_ROUNDS, as in idle.c) and submits, while the worker lingers a random moment in that
 * yield, so that the submitter's publication races with the worker's announcement as a sleeper
 * and its last look. A lost wake-up leaves a job queued that
 * nobody runs: its submitter waits forever and the ctest TIMEOUT fails the test. Every job must
 * run exactly once. The test uses no internal interface, so it runs against any version of the
 * protocol.
 *
 * usage: test_idle_faults before|after [rounds]   (1000 by default, 4000 with WS_TEST_LONG=1)
 */
#include "internal.h"
#include "test.h"

#include <dlfcn.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { YIELD_ROUNDS = 16, HOLD_LIMIT_MS = 50 };

static bool hold_after;                  /* the mode: true for "after" */
static _Atomic int worker_waiting;       /* the worker is inside a futex wait */
static _Atomic uint32_t worker_yields;   /* the worker's yields since its last job */
static _Atomic int second_state;         /* the second submitter: IDLE, GO, SUBMITTED */
static _Thread_local bool second_thread; /* this thread is the second submitter */
static _Atomic uint64_t second_jobs;     /* jobs the second submitter ran */
enum { IDLE, GO, SUBMITTED };

static uint64_t ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Spins until *v == want or HOLD_LIMIT_MS passed (the hold must never be the hang itself). */
static void hold_until(_Atomic int *v, int want)
{
    uint64_t end = ms_now() + HOLD_LIMIT_MS;
    while (atomic_load(v) != want && ms_now() < end)
        ;
}

/* The C library's syscall(), found once in main before any other thread exists. */
static long (*real)(long, ...);

static void find_real_syscall(void)
{
    void *sym = dlsym(RTLD_NEXT, "syscall");
    ASSERT(sym != NULL);
    memcpy(&real, &sym, sizeof real); /* POSIX: a function's address, as an object pointer */
}

static long real_syscall(long number, long a[6])
{
    if (real == NULL) /* a call before main: one thread only */
        find_real_syscall();
    return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* The interposed system call: every argument is passed on unchanged. */
long syscall(long number, ...)
{
    va_list ap;
    va_start(ap, number);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    int cmd = number == SYS_futex ? (int)(a[1] & FUTEX_CMD_MASK) : -1;
    if (cmd == FUTEX_WAIT && ws_worker_id() >= 0) {
        atomic_store(&worker_waiting, 1);
        long r = real_syscall(number, a);
        atomic_store(&worker_waiting, 0);
        return r;
    }
    bool held = cmd == FUTEX_WAKE && a[2] == 1 && ws_worker_id() < 0 && !second_thread;
    if (held && !hold_after)
        hold_until(&worker_waiting, 1);
    long r = real_syscall(number, a);
    if (held && hold_after && r == 0) {
        hold_until(&worker_waiting, 1);
        atomic_store(&second_state, GO);
        hold_until(&second_state, SUBMITTED);
    }
    return r;
}

/* Counts the worker's yields once they return (on a busy machine a yield can give the CPU away
 * for milliseconds), then keeps the worker a random moment more: the submitter, which submits as
 * soon as it sees the count, thereby lands at every offset from the worker's announcement and
 * last look, before, inside and after that window of a few hundred nanoseconds. */
int sched_yield(void)
{
    static _Thread_local uint64_t rng = 0x9e3779b97f4a7c15ull;
    long none[6] = {0};
    int r = (int)real_syscall(SYS_sched_yield, none);
    if (ws_worker_id() >= 0) {
        atomic_fetch_add(&worker_yields, 1);
        for (volatile uint32_t spin = (uint32_t)(test_rand(&rng) % 1024); spin > 0; spin--)
            ;
    }
    return r;
}

typedef struct job {
    _Atomic int runs;
} job;

static void job_fn(void *p)
{
    atomic_store(&worker_yields, 0);
    atomic_fetch_add(&((job *)p)->runs, 1);
}

/* Submits one job and waits until it ran (forever, if its wake-up was lost). */
static void submit_and_wait(ws_pool *pool)
{
    job j;
    atomic_init(&j.runs, 0);
    ASSERT_OK(ws_submit(pool, job_fn, &j, 0));
    while (atomic_load(&j.runs) == 0)
        sched_yield();
    ASSERT_EQ(atomic_load(&j.runs), 1);
}

/* Waits until the worker has made its last yield before parking. */
static void wait_until_parking(void)
{
    while (atomic_load(&worker_yields) < YIELD_ROUNDS)
        ;
}

/* "after": submits one job each time the held submitter says so. */
static void *second_submitter(void *p)
{
    ws_pool *pool = p;
    second_thread = true;
    for (;;) {
        int st;
        while ((st = atomic_load(&second_state)) == IDLE)
            sched_yield();
        if (st != GO)
            break; /* the end of the test */
        job j;
        atomic_init(&j.runs, 0);
        ASSERT_OK(ws_submit(pool, job_fn, &j, 0));
        atomic_store(&second_state, SUBMITTED);
        while (atomic_load(&j.runs) == 0)
            sched_yield();
        ASSERT_EQ(atomic_load(&j.runs), 1);
        atomic_fetch_add(&second_jobs, 1);
        atomic_store(&second_state, IDLE);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "before") != 0 && strcmp(argv[1], "after") != 0)) {
        fprintf(stderr, "usage: test_idle_faults before|after [rounds]\n");
        return 2;
    }
    hold_after = strcmp(argv[1], "after") == 0;
    find_real_syscall();
    /* The worker's way to its park, yields included, as on a machine with a CPU to spare: on
     * a contended one it would park without yielding (ws__idle_contended). */
    ws__test_force_runnable(1);
    uint64_t rounds = argc > 2 ? strtoull(argv[2], NULL, 10) : test_scaled(4000, 800);
    ws_pool *pool = NULL;
    ws_config cfg = {0};
    cfg.workers = 1;
    ASSERT_OK(ws_pool_create(&pool, &cfg));
    pthread_t helper;
    if (hold_after)
        ASSERT_OK(pthread_create(&helper, NULL, second_submitter, pool));
    fflush(stdout);
    for (uint64_t r = 0; r < rounds; r++) {
        wait_until_parking();
        submit_and_wait(pool);
        while (atomic_load(&second_state) != IDLE) /* its job must run, too */
            sched_yield();
        if ((r + 1) % 100 == 0) {
            printf("  %" PRIu64 " rounds\n", r + 1); /* where a hang stopped */
            fflush(stdout);
        }
    }
    if (hold_after) {
        atomic_store(&second_state, -1);
        pthread_join(helper, NULL);
    }
    ws_stats st;
    ws_pool_stats(pool, &st);
    printf("test_idle_faults %s: %" PRIu64 " rounds, %" PRIu64 " jobs from the second submitter,"
           " %" PRIu64 " parks, %" PRIu64 " wake-ups\n",
           argv[1], rounds, atomic_load(&second_jobs), st.parks, st.wakeups);
    ws_pool_destroy(pool);
    return 0;
}
