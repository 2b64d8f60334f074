/* test_future_index: where a get that takes its future back runs it (src/future.c), seen from
 * inside the library: the worker's floor, the future's claim, and what its deque still holds.
 *
 * usage: test_future_index CASE, on a pool of one worker (one ctest entry per case,
 * tests/future.cmake):
 *   at_index   a task submits two futures and gets them newest first through the library's
 *              ws_future_get (the header's inline get left out): each runs with the worker's
 *              floor where the task's run put it, claimed INLINE, with the index where its own
 *              work begins (the record's bottom - 1) the deque's bottom at its start. A floor
 *              raised there would hide the task's older items from a worker leapfrogging on the
 *              task, which then parks and summons a spare (docs/scheduler.md, "Getting a
 *              future").
 *   put_back   a future that is its deque's only item, public, is popped and put back by the
 *              clean-up after a slow get (of a future queued elsewhere); the pop moved the
 *              deque's top past its index, so it goes back one index higher. Its get must
 *              still take it back: while it runs, the deque holds nothing. With the old index
 *              kept, the get claimed it where it sat and its dead slot stayed public under
 *              everything it pushed.
 * The asserts are on the library's own state, so both cases are deterministic: one worker,
 * and the only other thread (put_back's submitter) acts while the task waits for it.
 */
#include "future_state.h"
#include "internal.h"
#include "test.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

static ws_pool *one_worker_pool(void)
{
    ws_pool *pool = NULL;
    ws_config cfg = {0};
    cfg.workers = 1;
    ASSERT_OK(ws_pool_create(&pool, &cfg));
    return pool;
}

static ws_future *submit(ws_pool *pool, ws_future_fn fn, void *arg)
{
    ws_future *f = NULL;
    ASSERT_OK(ws_future_submit(&f, pool, fn, arg));
    ASSERT(f != NULL);
    return f;
}

/* What a future's function saw of its worker when it started. */
typedef struct seen {
    int64_t floor;
    int64_t bottom;
    size_t deque_size;
    uint32_t state;
    int64_t record_bottom;
    ws_future *self;
} seen;

static void *look(void *p)
{
    seen *s = p;
    ws__worker *w = ws__tls_worker;
    ASSERT(w != NULL);
    ws__future *f = (ws__future *)(void *)s->self;
    s->floor = ws_load_relaxed(&w->floor);
    s->bottom = ws__wdeque_owner_bottom(&w->deque);
    s->deque_size = ws__wdeque_size(&w->deque);
    s->state = ws_load_relaxed(&f->task.state);
    s->record_bottom = f->bottom;
    return s;
}

/* s's future, submitted on the calling worker. */
static ws_future *submit_look(seen *s)
{
    s->self = submit(NULL, look, s);
    return s->self;
}

/* A get through the library (the parentheses keep worksteal.h's inline get out). */
static void *library_get(ws_future *f)
{
    return (ws_future_get)(f);
}

/* The future ran at the worker's newest index, by worker w, with floor `floor`. */
static void check_at_index(const seen *s, ws__worker *w, int64_t floor, const char *which)
{
    printf("%s: floor %" PRId64 " (task's %" PRId64 "), state %#x, record bottom %" PRId64
           ", deque bottom %" PRId64 ", %zu item(s) below\n",
           which, s->floor, floor, (unsigned)s->state, s->record_bottom, s->bottom, s->deque_size);
    ASSERT_EQ(s->floor, floor);
    ASSERT(s->state & WS_FUTURE_TAKEN);
    ASSERT(s->state & WS_FUTURE_INLINE);
    ASSERT_UEQ((s->state & WS_FUTURE_RUNNER) >> WS_FUTURE_RUNNER_SHIFT, w->id + 1);
    ASSERT_EQ(s->record_bottom - 1, s->bottom);
}

/* ---- at_index ---------------------------------------------------------------------------- */

static void at_index_task(void *p)
{
    (void)p;
    ws__worker *w = ws__tls_worker;
    int64_t floor = ws_load_relaxed(&w->floor);
    seen older = {0}, newer = {0};
    ws_future *a = submit_look(&older);
    ws_future *b = submit_look(&newer);
    ASSERT_PTR_EQ(library_get(b), &newer);
    check_at_index(&newer, w, floor, "newer");
    ASSERT_UEQ(newer.deque_size, 1); /* the older future, below: a leapfrogger's to take */
    ASSERT_PTR_EQ(library_get(a), &older);
    check_at_index(&older, w, floor, "older");
    ASSERT_UEQ(older.deque_size, 0);
    ws_future_free(a);
    ws_future_free(b);
}

static void case_at_index(void)
{
    ws_pool *pool = one_worker_pool();
    ASSERT_OK(ws_pool_run(pool, at_index_task, NULL));
    ws_pool_destroy(pool);
}

/* ---- put_back ---------------------------------------------------------------------------- */

typedef struct outside_submit {
    ws_pool *pool;
    ws_future *queued; /* submitted from outside: in the injector, the worker being busy */
    atomic_bool done;
} outside_submit;

static void *nothing(void *p)
{
    return p;
}

static void *submitter(void *p)
{
    outside_submit *o = p;
    o->queued = submit(o->pool, nothing, o);
    atomic_store(&o->done, true);
    return NULL;
}

static void put_back_task(void *p)
{
    outside_submit *o = p;
    ws__worker *w = ws__tls_worker;
    int64_t floor = ws_load_relaxed(&w->floor);
    pthread_t thread;
    ASSERT_OK(pthread_create(&thread, NULL, submitter, o));
    while (!atomic_load(&o->done))
        sched_yield();
    ASSERT_OK(pthread_join(thread, NULL));
    /* As a thief that finds nothing public does: ask, so that the next push publishes. */
    ASSERT(ws__wdeque_steal(&w->deque) == NULL);
    seen s = {0};
    ws_future *f = submit_look(&s);
    ASSERT_UEQ(ws__wdeque_size(&w->deque), 1);
    ASSERT(ws__wdeque_peek_private(&w->deque) == NULL); /* the setup: f public, alone */
    int64_t pushed_at = ws__wdeque_owner_bottom(&w->deque) - 1;
    /* A slow get: the future sits in the injector; then the clean-up pops f and puts it back. */
    ASSERT_PTR_EQ(ws_future_get(o->queued), o);
    ws_future_free(o->queued);
    int64_t now_at = ws__wdeque_owner_bottom(&w->deque) - 1;
    printf("put_back: pushed at %" PRId64 ", now at %" PRId64 "\n", pushed_at, now_at);
    ASSERT_UEQ(ws__wdeque_size(&w->deque), 1);
    ASSERT_EQ(now_at, pushed_at + 1); /* the setup: the pop moved top past f's first index */
    ASSERT_PTR_EQ(ws_future_get(f), &s);
    check_at_index(&s, w, floor, "put back");
    ASSERT_UEQ(s.deque_size, 0); /* taken back: no dead slot of its own below its work */
    ws_future_free(f);
}

static void case_put_back(void)
{
    ws_pool *pool = one_worker_pool();
    outside_submit o = {.pool = pool};
    ASSERT_OK(ws_pool_run(pool, put_back_task, &o));
    ws_pool_destroy(pool);
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    if (strcmp(c, "at_index") == 0)
        case_at_index();
    else if (strcmp(c, "put_back") == 0)
        case_put_back();
    else
        WS_TEST_FAIL("usage: test_future_index at_index|put_back");
    printf("test_future_index %s: ok\n", c);
    return 0;
}
