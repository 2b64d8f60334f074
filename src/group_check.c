/* group_check.c: debug builds (WS_DEBUG) report groups that got jobs and were never waited for.
 *
 * A ws_group usually lives on its creator's stack. Left without ws_group_wait, its jobs still
 * run and count themselves out into its memory, which may by then belong to another frame:
 * nothing fails at the mistake, something else breaks later. So in debug builds each group that
 * gets a job is listed here until a wait (ws_group_wait, or a try or timed wait that found it
 * done) takes it off, and:
 *   - ws_group_init on a listed group (the same variable again, or a new frame at the address of
 *     one that returned without waiting) is a contract violation: its jobs' count would be lost;
 *   - ws_pool_destroy, once all its work is done, prints one stderr line for each listed group of
 *     that pool, and forgets it.
 * The list is a fixed table under a mutex (made fork-safe by pthread_atfork); when it is full,
 * further groups are not checked. Release builds compile none of this (internal.h).
 */
#include "internal.h"

#include <stdio.h>

#ifdef WS_DEBUG

#define LISTED 1024

static struct {
    pthread_mutex_t lock;
    const void *group[LISTED]; /* NULL: a free entry */
    const ws_pool *pool[LISTED];
} list = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void lock(void)
{
    pthread_mutex_lock(&list.lock);
}

static void unlock(void)
{
    pthread_mutex_unlock(&list.lock);
}

/* The entry of group, or -1. Under the lock. */
static int find(const void *group)
{
    for (int i = 0; i < LISTED; i++) {
        if (list.group[i] == group)
            return i;
    }
    return -1;
}

static void at_fork_once(void)
{
    pthread_atfork(lock, unlock, unlock);
}

void ws__group_check_init(const void *group)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, at_fork_once);
    lock();
    int i = find(group);
    unlock();
    if (i >= 0)
        ws__contract_violation("ws_group_init",
                               "a group that got jobs and was never waited for "
                               "(call ws_group_wait before reusing or leaving it)");
}

void ws__group_check_submitted(const void *group, const ws_pool *pool)
{
    lock();
    int i = find(group);
    if (i < 0)
        i = find(NULL);
    if (i >= 0) {
        list.group[i] = group;
        list.pool[i] = pool;
    }
    unlock();
}

void ws__group_check_waited(const void *group)
{
    lock();
    int i = find(group);
    if (i >= 0)
        list.group[i] = NULL;
    unlock();
}

void ws__group_check_pool_done(const ws_pool *pool)
{
    lock();
    for (int i = 0; i < LISTED; i++) {
        if (list.group[i] != NULL && list.pool[i] == pool) {
            fprintf(stderr,
                    "worksteal: ws_pool_destroy: the group at %p got jobs and was never waited "
                    "for (ws_group_wait); if it was on a stack frame that returned, its jobs "
                    "wrote into that memory\n",
                    list.group[i]);
            list.group[i] = NULL;
        }
    }
    unlock();
}

#endif /* WS_DEBUG */
