/* test_life_lifetime: no caller touches a pool after ws_pool_destroy may have freed it, and
 * destroy waits for callers that still need the pool.
 *
 * Each scenario widens one window with the library's test hook (src/platform.h; compiled in
 * Debug and sanitizer builds): the calling thread sleeps 20 ms at the hook while the main thread
 * destroys the pool. AddressSanitizer reports any access to the freed pool; the test itself checks
 * that destroy waited where it must.
 *   run      ws_pool_run's caller gives back its reference (the hook sleeps right after the
 *            decrement) while destroy frees the pool: the caller must not read the pool after
 *            that decrement (it used to read pool->stopping and bump pool->drained there).
 *   submit   ws_submit's caller sleeps after queuing the job, before the wake-up that reads the
 *            pool; the job runs and finishes meanwhile. destroy must wait for the caller.
 *   refused  a submission refused because destroy began (ESHUTDOWN) gives back its reference
 *            and sleeps; destroy, whose last job finishes meanwhile, frees the pool; the
 *            refused caller must not touch it again.
 * In a release build the hook is compiled out: the scenarios run without the delays (and the
 * checks that need a delay are reported as not applicable in that build).
 */
#include "platform.h" /* the test hook */
#include "test_external_util.h"

#include <pthread.h>
#include <string.h>

static _Thread_local int delay_site = -1; /* the hook sleeps at this site, on this thread */
static atomic_ullong hook_entered;        /* a delayed hook has begun its sleep */
static atomic_int hook_slept;             /* a delayed hook has finished its sleep */

static void delaying_hook(int site)
{
    if (site != delay_site)
        return;
    delay_site = -1; /* once per scenario */
    atomic_fetch_add(&hook_entered, 1);
    sched_sleep_ms(20);
    atomic_store(&hook_slept, 1);
}

typedef struct caller {
    ws_pool *pool;
    int site;
    int result;
    atomic_ullong ran; /* the job or function ran */
    atomic_int returned;
} caller;

static void note_ran(void *arg)
{
    atomic_fetch_add(&((caller *)arg)->ran, 1);
}

static void *run_caller(void *arg)
{
    caller *c = arg;
    delay_site = c->site;
    c->result = ws_pool_run(c->pool, note_ran, c);
    atomic_store(&c->returned, 1);
    return NULL;
}

static void *submit_caller(void *arg)
{
    caller *c = arg;
    delay_site = c->site;
    c->result = ws_submit(c->pool, note_ran, c, 0);
    atomic_store(&c->returned, 1);
    return NULL;
}

static pthread_t start(void *(*fn)(void *), caller *c)
{
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, fn, c));
    return t;
}

static void scenario_run(bool hooks)
{
    caller c = {.pool = ext_pool(2, 0), .site = WS_HOOK_RELEASED};
    atomic_store(&hook_slept, 0);
    pthread_t t = start(run_caller, &c);
    ext_wait_at_least(&c.ran, 1, "the function to run");
    ws_pool_destroy(c.pool); /* may free the pool while the caller sleeps after its release */
    ASSERT_OK(pthread_join(t, NULL));
    ASSERT_OK(c.result);
    printf("run: the caller %s after its last reference while destroy freed the pool\n",
           hooks ? "slept" : "(no hook in this build) went on");
}

static void scenario_submit(bool hooks)
{
    caller c = {.pool = ext_pool(2, 0), .site = WS_HOOK_INJECTED};
    atomic_store(&hook_slept, 0);
    pthread_t t = start(submit_caller, &c);
    ext_wait_at_least(&c.ran, 1, "the job to run");
    ws_pool_destroy(c.pool); /* must wait for the caller's wake-up after its push */
    if (hooks)
        ASSERT_EQ(atomic_load(&hook_slept), 1); /* destroy returned after the sleep */
    ASSERT_OK(pthread_join(t, NULL));
    ASSERT_OK(c.result);
    printf("submit: destroy %s\n", hooks ? "waited for the caller sleeping before its wake-up"
                                         : "returned (no hook in this build)");
}

typedef struct destroyer {
    ws_pool *pool;
    atomic_int done;
} destroyer;

static void *destroy_thread(void *arg)
{
    destroyer *d = arg;
    ws_pool_destroy(d->pool);
    atomic_store(&d->done, 1);
    return NULL;
}

static void scenario_refused(bool hooks)
{
    ext_gate gate;
    ext_gate_init(&gate);
    destroyer d = {.pool = ext_pool(2, 0)};
    ASSERT_OK(ws_submit(d.pool, ext_gate_job, &gate, 0));
    ext_wait_at_least(&gate.arrived, 1, "the held job to start");
    pthread_t dt;
    ASSERT_OK(pthread_create(&dt, NULL, destroy_thread, &d));
    /* Submissions are refused once destroy began; retry until one is. */
    caller c = {.pool = d.pool, .site = WS_HOOK_RELEASED};
    for (;;) {
        delay_site = -1;
        int err = ws_submit(d.pool, note_ran, &c, 0);
        if (err == ESHUTDOWN)
            break;
        ASSERT_OK(err);
        sched_sleep_ms(1);
    }
    /* Now refused for good: one more refusal, sleeping after its release while the held job
     * finishes and destroy frees the pool. The gate opens only once the refused caller is in
     * its sleep, after its last access (without hooks: once it has returned), so that the call
     * itself is made while the pool still exists, as the caller's contract requires. */
    atomic_store(&hook_slept, 0);
    unsigned long long entered = atomic_load(&hook_entered);
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, submit_caller, &c));
    if (hooks)
        ext_wait_at_least(&hook_entered, entered + 1, "the refused caller to sleep at its hook");
    else
        ASSERT_OK(pthread_join(t, NULL));
    ext_gate_open(&gate);
    if (hooks)
        ASSERT_OK(pthread_join(t, NULL));
    ASSERT_EQ(c.result, ESHUTDOWN);
    ASSERT_OK(pthread_join(dt, NULL));
    ASSERT_EQ(atomic_load(&d.done), 1);
    printf("refused: ESHUTDOWN, and the refused caller %s\n",
           hooks ? "slept past the pool's release" : "returned (no hook in this build)");
}

int main(void)
{
    bool hooks = ws__test_set_hook(delaying_hook);
    printf("test hooks %s in this build\n", hooks ? "on" : "off");
    for (int i = 0; i < 3; i++) {
        scenario_run(hooks);
        scenario_submit(hooks);
        scenario_refused(hooks);
    }
    ws__test_set_hook(NULL);
    printf("test_life_lifetime: ok\n");
    return 0;
}
