/* model_join_mirror.h: join.c's ws_spawn and ws_sync on a worker, as the stack-task models
 * need them (tests/model_frames.c, tests/model_frames_wake.c): join.c itself needs the rest of
 * the scheduler. The record's init, the fast push or push_rare's flush, slow push and depth cap,
 * and push_rare's wake-up when MODEL_SPAWN_WAKES is 1 (left out by default: a model with the real
 * idle.c then sees fewer wake-ups, never more); the pop that takes the record back and runs it,
 * or the wait for DONE with acquire. Included after the sources, which give ws__tls_worker and
 * the deque (and idle.c, for the wake-up). */
#ifndef WS_MODEL_JOIN_MIRROR_H
#define WS_MODEL_JOIN_MIRROR_H

#include <assert.h>

#ifndef MODEL_SPAWN_WAKES
#define MODEL_SPAWN_WAKES 0
#endif

void ws_spawn(ws_task *task, ws_fn fn, void *arg)
{
    ws__worker *w = ws__tls_worker;
    ws__task *t = (ws__task *)task;
    ws__task_init(t, fn, arg);
    if (ws__wdeque_fits(&w->deque)) {
        ws__wdeque_push_fitting(&w->deque, t);
        return;
    }
    /* push_rare */
    ws__frames_flush(w);
    bool published;
    int64_t before = ws__wdeque_push_slow(&w->deque, t, &published);
    assert(before >= 0);
    ws__wdeque_set_depth_cap(&w->deque, before + 1);
#if MODEL_SPAWN_WAKES
    if (before == 0 || published)
        ws__idle_notify(w->pool);
#endif
}

void ws_sync(ws_task *task)
{
    ws__worker *w = ws__tls_worker;
    ws__task *t = (ws__task *)task;
    ws__task *p = ws__wdeque_pop(&w->deque);
    if (p != NULL) {
        assert(p == t); /* the deque's items are in spawn order */
        t->fn(t->arg);
        return;
    }
    /* acquire: pairs with the release half of the thief's exchange to DONE: the leaf's result
     * in the frame. */
    while (ws_load_acquire(&t->state) != WS_TASK_DONE)
        ;
}

#endif /* WS_MODEL_JOIN_MIRROR_H */
