/* error.c: error descriptions and contract-violation reports.
 *
 * Run-time failures are returned as positive errno codes; ws_strerror describes the ones this
 * library returns. A contract violation (a misuse that would corrupt state if execution went
 * on) is reported in one line naming the public function, and the process aborts.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* The codes the library returns, as one list: X(code, description). */
#define WS_ERRORS(X)                                                       \
    X(0, "success")                                                        \
    X(EINVAL, "invalid argument")                                          \
    X(ENOMEM, "out of memory")                                             \
    X(EAGAIN, "resource temporarily unavailable (cannot create a thread)") \
    X(ESHUTDOWN, "the pool is being destroyed")                            \
    X(EBUSY, "busy (a pool being profiled, a group with jobs pending)")    \
    X(ECANCELED, "the group is cancelled")                                 \
    X(ETIMEDOUT, "the time limit passed first")                            \
    X(ENOTRECOVERABLE,                                                     \
      "the pool was inherited through fork(): its threads exist only in the parent")

const char *ws_strerror(int err)
{
    switch (err) {
#define WS_ERROR_CASE_(code, text) \
    case code:                     \
        return text;
        WS_ERRORS(WS_ERROR_CASE_)
#undef WS_ERROR_CASE_
    default:
        return "unknown error";
    }
}

_Noreturn void ws__contract_violation(const char *function, const char *what)
{
    fprintf(stderr, "worksteal: %s: %s\n", function, what);
    fflush(stderr);
    abort();
}

void ws__pool_check(const ws_pool *pool, const char *function)
{
    if (pool == NULL)
        ws__contract_violation(function, "NULL pool");
    ws__pool_check_live(pool, function);
}
