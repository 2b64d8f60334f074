/* test_future_util.h: the helpers that the futures tests share (tests/test_future*.c): a pool
 * made to order and a submit that fails the test on an error. Header-only, like test.h.
 */
#ifndef WS_TEST_FUTURE_UTIL_H
#define WS_TEST_FUTURE_UTIL_H

#include "test.h"
#include "worksteal.h"

#include <stdbool.h>

/* A pool of `workers`, with no spare thread if no_spares (WS_NO_SPARES); stack_size 0: the
 * default. */
static inline ws_pool *future_pool(unsigned workers, bool no_spares, size_t stack_size)
{
    ws_pool *pool = NULL;
    ws_config cfg = {0};
    cfg.workers = workers;
    cfg.max_spares = no_spares ? WS_NO_SPARES : 0;
    cfg.stack_size = stack_size;
    int err = ws_pool_create(&pool, &cfg);
    if (err != 0)
        WS_TEST_FAIL("ws_pool_create(workers=%u): %d (%s)", workers, err, ws_strerror(err));
    return pool;
}

/* fn(arg) as a future on pool (NULL: the calling worker's, or the default pool). */
static inline ws_future *submit(ws_pool *pool, ws_future_fn fn, void *arg)
{
    ws_future *f = NULL;
    int err = ws_future_submit(&f, pool, fn, arg);
    if (err != 0)
        WS_TEST_FAIL("ws_future_submit: %d (%s)", err, ws_strerror(err));
    ASSERT(f != NULL);
    return f;
}

#endif /* WS_TEST_FUTURE_UTIL_H */
