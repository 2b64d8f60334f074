/* spare.c: blocked tasks and the spare workers that stand in for them.
 *
 * A worker is lost to the pool while its task sleeps in the kernel (between ws_block_begin and
 * ws_block_end), and also while it waits for work that it may not run itself: a join or group
 * wait runs only the work it waits for (join.c, group.c), so a waiting worker that can make no
 * progress, or that leaves queued external work to others, counts as blocked too. For each
 * blocked worker the pool wakes (or starts) a spare, up to max_spares: a spare runs the
 * ordinary worker loop on its own stack, so the work that the blocked worker cannot take still
 * runs, and the P workers' worth of CPUs stays busy. Between two tasks, and whenever its search
 * for work comes back empty, a spare retires (parks on its own word) once more spares are awake
 * than workers are blocked.
 *
 * Deadlock freedom. A wait only ever runs work it depends on, so a thread's stack holds a chain
 * of frames each waiting for the one above it: no frame waits behind unrelated work. With an
 * acyclic dependency graph some waited-for task is always runnable, and every blocked waiter
 * has summoned a spare to run it, as long as fewer than max_spares waiters are blocked at once
 * (docs/scheduler.md). The spare can reach it: a task the waiter spawned may be private in the
 * waiter's deque, so every way of blocking makes the whole deque public first
 * (ws__block_worker, and ws__park_word for waits), which covers every item since the deque
 * holds no more than its public count can name (deque.c, "Capacity"). Spare threads are created on
 * first need, their records allocated then, and reused.
 *
 * During teardown (pool->exit set) spares do not retire and do not leave while a task is
 * blocked: a blocked task may still be waiting for work that only they can run (pool.c).
 */
#include "internal.h"

static void *spare_main(void *arg)
{
    ws__worker *w = arg;
    ws_pool *pool = w->pool;
    for (;;) {
        /* acquire: pairs with the release store in wake_spare (what the spare reads once awake
         * has atomics of its own today: tests/mutants/mutants.txt, spare-wait-relaxed). */
        while (ws_load_acquire(&w->spare_state) == 0)
            ws__futex_wait(&w->spare_state, 0);
        if (ws__pool_finished(pool))
            break;
        ws__worker_main(w);
        if (ws__pool_finished(pool))
            break;
    }
    return NULL;
}

/* Spare w, between tasks or after a search that found nothing (its worker loop's should_leave):
 * true if it must retire now (more spares awake than blocked tasks). */
static bool spare_should_retire(ws__worker *w)
{
    ws_pool *pool = w->pool;
    /* relaxed: a heuristic check between tasks; the lock below decides. */
    if (ws_load_relaxed(&pool->spares_running) <= ws_load_relaxed(&pool->blocked) ||
        ws__wdeque_size(&w->deque) != 0)
        return false;
    bool retire = false;
    pthread_mutex_lock(&pool->spare_lock);
    /* relaxed: under spare_lock, which ws__pool_teardown takes after setting exit. */
    if (ws_load_relaxed(&pool->spares_running) > ws_load_relaxed(&pool->blocked) &&
        ws_load_relaxed(&pool->exit) == 0) {
        /* relaxed: under spare_lock, which orders the writers. */
        ws_store_relaxed(&pool->spares_running, ws_load_relaxed(&pool->spares_running) - 1);
        ws_store_release(&w->spare_state, 0); /* release: pairs with spare_main's acquire */
        retire = true;
    }
    pthread_mutex_unlock(&pool->spare_lock);
    return retire;
}

/* With spare_lock held: the record of spare slot i, allocated on first use (NULL: no memory). */
static ws__worker *spare_slot(ws_pool *pool, unsigned i)
{
    ws__worker **slot = &pool->workers[pool->nworkers + i];
    if (*slot == NULL) {
        *slot = ws__worker_new(pool, pool->nworkers + i, true);
        if (*slot != NULL)
            (*slot)->should_leave = spare_should_retire;
    }
    return *slot;
}

/* With spare_lock held: wakes a retired spare or starts a new one. False if none can run. */
static bool wake_spare(ws_pool *pool)
{
    for (unsigned i = 0; i < pool->nspares; i++) {
        ws__worker *s = spare_slot(pool, i);
        if (s == NULL)
            return false;
        if (ws_load_relaxed(&s->spare_state) != 0) /* relaxed: under spare_lock */
            continue;
        ws_store_release(&s->spare_state, 1); /* release: pairs with spare_main's acquire */
        if (s->started) {
            ws__futex_wake(&s->spare_state, 1);
        } else if (ws__worker_start(s, spare_main) == 0) {
            s->started = true;
            /* release: steal rounds and ws_for_each_worker (acquire) may now read this slot. */
            if (i + 1 > ws_load_relaxed(&pool->spares_started))
                ws_store_release(&pool->spares_started, i + 1);
        } else {
            ws_store_relaxed(&s->spare_state, 0); /* relaxed: under spare_lock */
            return false;
        }
        return true;
    }
    return false;
}

void ws__blocked_enter(ws__worker *w)
{
    ws_pool *pool = w->pool;
    /* seq_cst: counted before we look at the spares below, and ordered against teardown's
     * store of exit and the idle workers' reads (ws__pool_finished). */
    uint32_t blocked = ws_fetch_add_seq_cst(&pool->blocked, 1) + 1;
    /* relaxed: a quick check; the lock below decides. */
    if (ws_load_relaxed(&pool->spares_running) >= blocked || pool->nspares == 0)
        return;
    pthread_mutex_lock(&pool->spare_lock);
    while (ws_load_relaxed(&pool->spares_running) < ws_load_relaxed(&pool->blocked) &&
           wake_spare(pool)) {
        /* relaxed: under spare_lock. */
        ws_store_relaxed(&pool->spares_running, ws_load_relaxed(&pool->spares_running) + 1);
    }
    pthread_mutex_unlock(&pool->spare_lock);
}

void ws__blocked_leave(ws__worker *w)
{
    ws_pool *pool = w->pool;
    /* seq_cst, with the load of exit: during teardown the last one out wakes the idle workers,
     * or they see the count at zero themselves (pool_teardown, ws__pool_finished). */
    if (ws_fetch_sub_seq_cst(&pool->blocked, 1) == 1 && ws_load_seq_cst(&pool->exit) != 0)
        ws__idle_wake_all(pool);
}

void ws__block_worker(ws__worker *w)
{
    /* As before parking (ws__park_word): the blocked task's spawned work stays stealable. */
    ws__frames_flush(w);
    if (ws__wdeque_publish_all(&w->deque))
        ws__idle_notify(w->pool);
    ws__blocked_enter(w);
}

void ws_block_begin(void)
{
    ws__worker *w = ws__tls_worker;
    if (w != NULL)
        ws__block_worker(w);
}

void ws_block_end(void)
{
    ws__worker *w = ws__tls_worker;
    if (w != NULL)
        ws__blocked_leave(w);
}
