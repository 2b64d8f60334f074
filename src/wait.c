/* wait.c: waiting for a task (a join's stolen child, ws_sync, ws_pool_run) or a group.
 *
 * A wait runs only work that it waits for, so that nothing unrelated piles up on top of the
 * waiting frame. Each turn round a wait's loop calls ws__wait_step, which walks the ladder of
 * idle.c (spin, yield, park) and keeps the pool going meanwhile: a wait that is about to park,
 * or that sees queued external work on a fairness turn (a wait never runs external work
 * itself), counts as blocked until it ends, and a spare runs what it leaves (spare.c).
 *
 * Waiting for a stolen task (ws__task_wait). The joiner cannot leave its frame, so it helps
 * while it waits, but only by leapfrogging: it steals from the worker that took its child
 * (Wagner and Calder, "Leapfrogging: a portable technique for implementing efficient
 * futures", 1993; Lace does the same), and from that worker only what it pushed since it
 * started the child: the items at or above its floor (ws__worker.floor, the deque's bottom when
 * it started a task taken from elsewhere). Those descend from the stolen child, so what the
 * joiner runs is work its own join waits for, and its stack grows at most by the depth of the
 * child's subtree: the stack stays bounded by the serial program's depth, which is what the space
 * bound S_P <= P * S_1 needs. (In pure fork-join a thief's deque holds nothing older than the
 * child, since it stole with an empty deque; a getter of a future may take work while its own
 * deque holds older items, which the floor keeps out.) Stealing arbitrary work here could pile
 * unrelated frames on top of the waiting one without limit. When there is nothing to leapfrog,
 * the joiner spins, yields, and finally parks on the task's state word, with WAITER or-ed in;
 * the thief's completion (worker.c) wakes it. docs/scheduler.md discusses the choice.
 */
#include "future_state.h"
#include "internal.h"

/* Worker w's wait counts as blocked from now until it ends: a spare will run what the wait may
 * not (external work, other waits' work). */
static void wait_block(ws__worker *w, ws__wait *s)
{
    s->blocked = true;
    ws__blocked_enter(w);
}

bool ws__wait_step(ws__worker *w, ws__wait *s, bool progressed)
{
    /* Fairness: on the turns when the worker loop would look at the injectors, queued external
     * work makes the wait count as blocked, so that a spare starts it as soon as the worker loop
     * would have. */
    if (w != NULL && !s->blocked && ws__fair_turn(w) && ws__external_work_left(w->pool))
        wait_block(w, s);
    if (progressed) {
        s->backoff.round = 0;
        return false;
    }
    if (!ws__backoff_step(&s->backoff))
        return false;
    if (w != NULL && !s->blocked)
        wait_block(w, s); /* about to park: someone else must keep the pool going */
    return true;
}

void ws__wait_end(ws__worker *w, ws__wait *s)
{
    if (s->blocked)
        ws__blocked_leave(w);
}

/* The worker that runner (an id + 1, as in a task's state) names, if it is another worker of w's
 * pool that exists, else NULL. */
static ws__worker *runner_worker(ws__worker *w, uint32_t runner)
{
    if (runner == 0 || runner - 1 == w->id || runner > 0xFFFF)
        return NULL; /* not marked yet (or DONE/SYNCED, which the caller sees next) */
    ws_pool *pool = w->pool;
    /* acquire: a spare's record is made when it is first needed; pairs with the release store
     * of spares_started in spare.c, after which its slot may be read. */
    if (runner - 1 >= pool->nworkers + ws_load_acquire(&pool->spares_started))
        return NULL;
    return pool->workers[runner - 1];
}

/* The bits of a task's state word that stay as they are while one run of it goes on (the
 * claim, the runner, DONE); a waiter's WAITER and a future's queue and handle bits may change. */
#define RUN_BITS (WS_TASK_TAKEN | WS_TASK_DONE | 0xFFFFu << WS_TASK_THIEF_SHIFT)

/* w takes a task at index floor or above from v, never a free one (deque.h), and only while
 * the task whose state is *state is still in the run seen: the deque looks at the state after
 * it acquired the item's publication and before its claim, so that an item the runner pushed
 * after the run ended (its own next work, which this wait does not wait for) is left alone. */
static ws__task *leapfrog_onto(ws__worker *w, ws__worker *v, _Atomic uint32_t *state, uint32_t seen,
                               int64_t floor, bool *only_free)
{
    /* relaxed, after the caller's acquire of the floor: if the task is still as seen, the floor
     * read is the one of its run (the restore comes after its completion), not that of the
     * runner's next task. */
    if (ws_load_relaxed(state) != seen)
        return NULL;
    ws_sdeque_bound bound = {.floor = floor, .watch = state, .expect = seen, .mask = RUN_BITS};
    ws__task *u = ws__steal_bounded(w, v, &bound);
    if (u != NULL)
        ws__count(w, leapfrogs, 1);
    *only_free = bound.refused_free;
    return u;
}

ws__task *ws__leapfrog(ws__worker *w, uint32_t runner, _Atomic uint32_t *state, uint32_t seen,
                       bool *only_free)
{
    *only_free = false;
    ws__worker *v = runner_worker(w, runner);
    if (v == NULL)
        return NULL;
    /* acquire: pairs with ws__floor_restore; the caller read `seen` with acquire after the
     * runner's release marking, so this is the floor of the runner's start or a later one. */
    return leapfrog_onto(w, v, state, seen, ws_load_acquire(&v->floor), only_free);
}

ws__task *ws__leapfrog_above(ws__worker *w, uint32_t runner, _Atomic uint32_t *state, uint32_t seen,
                             int64_t floor, bool *only_free)
{
    *only_free = false;
    ws__worker *v = runner_worker(w, runner);
    return v != NULL ? leapfrog_onto(w, v, state, seen, floor, only_free) : NULL;
}

void ws__wait_give_up(ws__wait *s)
{
    ws__backoff_give_up(&s->backoff);
}

void ws__park_on_state(ws__worker *w, _Atomic uint32_t *state, uint32_t seen)
{
    uint32_t value = ws__state_announce(state, seen); /* the completer's RMW is its partner */
    if (value != 0)
        ws__park_word(w, state, value);
}

void ws__task_wait(ws__worker *w, ws__task *t)
{
    ws__wait wait = {.backoff = ws__backoff_start(w)};
    for (;;) {
        /* acquire: pairs with the release exchange of the task's completion (worker.c); the
         * task's writes are visible once we see DONE. */
        uint32_t s = ws_load_acquire(&t->state);
        if (s == WS_TASK_DONE)
            break;
        bool only_free = false;
        ws__task *u =
            w != NULL ? ws__leapfrog(w, s >> WS_TASK_THIEF_SHIFT, &t->state, s, &only_free) : NULL;
        if (u != NULL)
            ws__task_run_taken(w, u, "leapfrog");
        else if (only_free)
            ws__wait_give_up(&wait);
        if (ws__wait_step(w, &wait, u != NULL))
            ws__park_on_state(w, &t->state, s);
    }
    ws__wait_end(w, &wait);
}
