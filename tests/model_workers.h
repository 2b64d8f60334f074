/* model_workers.h: a pool of NWORKERS workers set up as ws_pool_create and worker.c's
 * ws__worker_new set them up (the pool's injectors, each worker's id, pool and deque with the
 * reserve of the pool's other threads), without their threads: the models that run the real
 * worker code on threads of their own (model_wait_rule.c, model_future_leapfrog.c). Included
 * after the real sources and after the model's NWORKERS (an enum or a macro).
 */
#ifndef WS_MODEL_WORKERS_H
#define WS_MODEL_WORKERS_H

#include <assert.h>

static ws_pool pool;
static ws__worker workers[NWORKERS];
static ws__worker *worker_list[NWORKERS];

static void model_workers_init(void)
{
    pool.nworkers = NWORKERS;
    pool.workers = worker_list;
    ws__injector_init(&pool.urgent);
    ws__injector_init(&pool.injector);
    for (int i = 0; i < NWORKERS; i++) {
        ws__worker *w = &workers[i];
        w->pool = &pool;
        w->id = (unsigned)i;
        /* the reserve of worker.c's ws__worker_new: the other threads of the pool */
        int err = ws__wdeque_init(&w->deque, 2, NWORKERS - 1);
        assert(err == 0);
        worker_list[i] = w;
    }
}

#endif /* WS_MODEL_WORKERS_H */
