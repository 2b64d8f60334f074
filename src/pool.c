/* pool.c: pools: configuration and environment, creation and destruction, the default pool,
 * and the bookkeeping of external work.
 *
 * Lifecycle. ws_pool_create allocates everything, then starts the P worker threads; if any
 * step fails, what was made is unmade (threads stopped and joined) and the error returned.
 * ws_pool_destroy (1) marks the pool stopping, after which outside threads can no longer submit;
 * (2) waits until every external job admitted before has finished, including jobs that running
 * jobs submit meanwhile; (3) sets exit and wakes everyone: a worker leaves once it finds no work
 * anywhere; (4) joins the threads and frees the memory.
 *
 * The admission protocol, (1)-(2) against a submitter, is store-buffering again: a submitter
 * increments pending and then reads stopping; destroy writes stopping and then reads pending;
 * all seq_cst, so either the submitter sees stopping (and backs out), or destroy sees its job
 * (and waits for it).
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    DEQUE_INITIAL_CAPACITY = 256, /* grows by doubling; 2 KiB per worker to start */
};

#define DEFAULT_STACK_SIZE ((size_t)8 << 20) /* 8 MiB, like the main thread's usual limit */
#define MIN_STACK_SIZE     ((size_t)64 << 10)
#define MAX_STACK_SIZE     ((size_t)1 << 40)

/* ---------------------------------------------------------------------------------------- */
/* Environment                                                                               */
/* ---------------------------------------------------------------------------------------- */

static void env_ignored(const char *name, const char *value, const char *want)
{
    fprintf(stderr, "worksteal: ignoring %s=\"%s\" (expected %s)\n", name, value, want);
}

/* WS_NUM_WORKERS if set and valid, else the online CPUs (capped at WS_MAX_WORKERS). */
static unsigned default_workers(void)
{
    unsigned cpus = ws__cpu_count();
    unsigned n = cpus < WS_MAX_WORKERS ? cpus : WS_MAX_WORKERS;
    const char *env = getenv("WS_NUM_WORKERS");
    if (env == NULL || *env == '\0')
        return n;
    char *end;
    errno = 0;
    long v = strtol(env, &end, 10);
    if (errno != 0 || *end != '\0' || v < 1 || v > (long)WS_MAX_WORKERS) {
        env_ignored("WS_NUM_WORKERS", env, "a whole number from 1 to 512");
        return n;
    }
    return (unsigned)v;
}

/* Parses "<digits>[KMG]" (bytes, binary multiples); 0 if malformed or out of range. */
static size_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *s == '-')
        return 0;
    unsigned shift = 0;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        end++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        end++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        end++;
        break;
    default:
        break;
    }
    if (*end != '\0' || v > (MAX_STACK_SIZE >> shift))
        return 0;
    v <<= shift;
    return v >= MIN_STACK_SIZE ? (size_t)v : 0;
}

static size_t default_stack_size(void)
{
    const char *env = getenv("WS_STACK_SIZE");
    if (env == NULL || *env == '\0')
        return DEFAULT_STACK_SIZE;
    size_t v = parse_size(env);
    if (v == 0) {
        env_ignored("WS_STACK_SIZE", env, "bytes from 64K to 1024G, with an optional K, M or G");
        return DEFAULT_STACK_SIZE;
    }
    return v;
}

/* Places the workers by pin (ws_config.pin), or by WS_PIN when pin is NULL. An invalid pin is
 * EINVAL; an invalid WS_PIN is ignored with one line on stderr, like the other variables. */
static int place_workers(ws_pool *pool, const char *pin)
{
    bool from_env = pin == NULL;
    if (from_env)
        pin = getenv("WS_PIN");
    if (pin == NULL || (from_env && *pin == '\0'))
        return 0;
    ws__pin_spec spec;
    char why[160] = "expected none, cores, compact, scatter or a CPU list such as 0-3,8";
    int err = ws__pin_parse(pin, &spec);
    if (err == 0)
        err = ws__placement_make(&pool->placement, &spec, pool->nworkers, NULL, why, sizeof why);
    if (err == EINVAL && from_env) {
        fprintf(stderr, "worksteal: ignoring WS_PIN=\"%s\" (%s)\n", pin, why);
        return 0;
    }
    const ws__placement *pl = pool->placement;
    for (unsigned i = 0; err == 0 && pl != NULL && i < pool->nworkers; i++) {
        ws__worker *w = pool->workers[i];
        w->place = &pl->places[i];
        if (pl->levels) {
            w->victims = pl->victims + (size_t)i * (pool->nworkers - 1);
            memcpy(w->level_end, pl->level_end[i], sizeof w->level_end);
        }
    }
    return err;
}

/* ---------------------------------------------------------------------------------------- */
/* Creation and destruction                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* A worker thread's first steps: it names itself (from inside, so that its name is set before
 * it runs anything), then runs its body. */
static void *worker_thread(void *arg)
{
    ws__worker *w = arg;
    char name[32];
    snprintf(name, sizeof name, w->spare ? "ws%u:spare%u" : "ws%u:w%u", w->pool->serial, w->id);
    ws__thread_set_name(pthread_self(), name);
    return w->body(w);
}

int ws__worker_start(ws__worker *w, void *(*fn)(void *))
{
    ws_pool *pool = w->pool;
    const ws__placement *pl = pool->placement;
    const ws__worker *self = ws__tls_worker;
    ws__cpuset one = {{0}};
    const ws__cpuset *cpus = NULL;
    if (pl != NULL && pl->pinned && w->place != NULL) {
        ws__cpuset_add(&one, (unsigned)w->place->cpu);
        cpus = &one;
    } else if (pl != NULL && pl->pinned) {
        cpus = &pl->cpus; /* a spare: anywhere the workers may run */
    } else if (self != NULL && self->place != NULL && self->pool->placement->pinned) {
        ws__process_cpus(&one); /* not the pinned creator's single CPU */
        cpus = &one;
    }
    w->body = fn;
    return ws__thread_start_on(&w->thread, pool->stack_size, cpus, worker_thread, w);
}

static ws__worker *worker_new(ws_pool *pool, unsigned id, bool spare)
{
    ws__worker *w = ws__aligned_alloc(WS_CACHE_LINE, sizeof(ws__worker));
    if (w == NULL)
        return NULL;
    if (ws__wdeque_init(&w->deque, DEQUE_INITIAL_CAPACITY) != 0) {
        ws__free(w);
        return NULL;
    }
    w->pool = pool;
    w->id = id;
    w->spare = spare;
    ws_store_relaxed(&w->depth_limit, 0u); /* relaxed: before the thread starts */
    /* Distinct non-zero seeds (xorshift must not start at 0). */
    w->rng = 0x9E3779B97F4A7C15ull * (id + 1) ^ (uintptr_t)w;
    if (w->rng == 0)
        w->rng = 1;
    return w;
}

/* Stops and joins every started thread, frees everything. For destroy and failed creates. */
static void pool_teardown(ws_pool *pool)
{
    /* release: pairs with the acquire loads of exit in the worker loop and spares. */
    ws_store_release(&pool->exit, 1);
    ws__idle_wake_all(pool);
    unsigned total = pool->nworkers + pool->nspares;
    for (unsigned i = 0; i < total && pool->workers != NULL; i++) {
        ws__worker *w = pool->workers[i];
        if (w == NULL || !w->started)
            continue;
        if (w->spare) {
            ws_store_release(&w->spare_state, 1); /* release: the spare sees exit */
            ws__futex_wake(&w->spare_state, 1);
        }
        ws__thread_join(w->thread);
    }
    ws__trace_pool_finish(pool);
    for (unsigned i = 0; i < total && pool->workers != NULL; i++) {
        ws__worker *w = pool->workers[i];
        if (w == NULL)
            continue;
        ws__wdeque_destroy(&w->deque);
        ws__free(w);
    }
    ws__free(pool->workers);
    ws__placement_free(pool->placement);
    pthread_mutex_destroy(&pool->spare_lock);
    ws__free(pool);
}

static int pool_start_workers(ws_pool *pool)
{
    for (unsigned i = 0; i < pool->nworkers; i++) {
        ws__worker *w = pool->workers[i];
        int err = ws__worker_start(w, ws__worker_main);
        if (err != 0)
            return err;
        w->started = true;
    }
    return 0;
}

/* Pools created in this process so far: a pool's serial number names it in traces. */
static _Atomic unsigned pool_serials;

int ws_pool_create(ws_pool **out, const ws_config *config)
{
    if (out == NULL)
        return EINVAL;
    ws_config cfg = {0};
    if (config != NULL)
        cfg = *config;
    unsigned n = cfg.workers != 0 ? cfg.workers : default_workers();
    size_t stack = cfg.stack_size != 0 ? cfg.stack_size : default_stack_size();
    if (n > WS_MAX_WORKERS || stack < MIN_STACK_SIZE || stack > MAX_STACK_SIZE ||
        cfg.max_spares > WS_MAX_WORKERS)
        return EINVAL;
    unsigned spares = cfg.max_spares != 0 ? cfg.max_spares : n;

    ws_pool *pool = ws__aligned_alloc(WS_CACHE_LINE, sizeof(ws_pool));
    if (pool == NULL)
        return ENOMEM;
    if (pthread_mutex_init(&pool->spare_lock, NULL) != 0) {
        ws__free(pool);
        return ENOMEM;
    }
    pool->nworkers = n;
    pool->nspares = spares;
    pool->stack_size = stack;
    ws__injector_init(&pool->urgent);
    ws__injector_init(&pool->injector);
    int err = ENOMEM;
    pool->workers = ws__calloc(n + spares, sizeof(ws__worker *));
    for (unsigned i = 0; pool->workers != NULL && i < n + spares; i++) {
        pool->workers[i] = worker_new(pool, i, i >= n);
        if (pool->workers[i] == NULL)
            goto fail;
    }
    if (pool->workers == NULL)
        goto fail;
    pool->serial = ws_fetch_add_relaxed(&pool_serials, 1) + 1; /* relaxed: a unique number */
    err = place_workers(pool, cfg.pin);
    if (err == 0)
        err = ws__trace_pool_init(pool);
    if (err != 0)
        goto fail;
    if (pool->trace != NULL) {
        for (unsigned i = 0; i < n + spares; i++)
            ws__worker_update_depth_limit(pool->workers[i]);
    }
    err = pool_start_workers(pool);
    if (err != 0)
        goto fail;
    *out = pool;
    return 0;
fail:
    pool_teardown(pool);
    return err;
}

static bool stats_env_on(void)
{
    const char *env = getenv("WS_STATS");
    return env != NULL && *env != '\0' && strcmp(env, "0") != 0;
}

void ws_pool_destroy(ws_pool *pool)
{
    if (pool == NULL)
        return;
    ws__worker *w = ws__tls_worker;
    if (w != NULL && w->pool == pool)
        ws__contract_violation("ws_pool_destroy", "called from a task of the pool itself");
    /* seq_cst: the admission protocol (see the top of this file). */
    ws_store_seq_cst(&pool->stopping, 1);
    for (;;) {
        /* acquire: pairs with the release bump in ws__pool_release. */
        uint32_t d = ws_load_acquire(&pool->drained);
        if (ws_load_seq_cst(&pool->pending) == 0) /* seq_cst: the admission protocol */
            break;
        ws__futex_wait(&pool->drained, d);
    }
    if (stats_env_on())
        ws__stats_report(pool);
    pool_teardown(pool);
}

/* ---------------------------------------------------------------------------------------- */
/* External work                                                                             */
/* ---------------------------------------------------------------------------------------- */

int ws__pool_admit(ws_pool *pool)
{
    /* seq_cst: the admission protocol (see the top of this file). */
    ws_fetch_add_seq_cst(&pool->pending, 1);
    if (ws_load_seq_cst(&pool->stopping) != 0) {
        ws__worker *w = ws__tls_worker;
        if (w == NULL || w->pool != pool) {
            ws__pool_release(pool);
            return ESHUTDOWN;
        }
    }
    return 0;
}

void ws__pool_release(ws_pool *pool)
{
    /* seq_cst: the admission protocol; the last job out wakes a waiting destroy. */
    if (ws_fetch_sub_seq_cst(&pool->pending, 1) == 1 && ws_load_seq_cst(&pool->stopping) != 0) {
        ws_fetch_add_release(&pool->drained, 1); /* release: pairs with destroy's acquire */
        ws__futex_wake(&pool->drained, -1);
    }
}

void ws__pool_inject(ws_pool *pool, ws__task *t)
{
    ws__injector_push((t->flags & WS_HIGH_PRIORITY) ? &pool->urgent : &pool->injector, t);
    ws__idle_notify_after_rmw(pool);
}

unsigned ws_pool_workers(const ws_pool *pool)
{
    return pool->nworkers;
}

unsigned ws_pool_threads(const ws_pool *pool)
{
    return pool->nworkers + pool->nspares;
}

/* ---------------------------------------------------------------------------------------- */
/* The default pool                                                                          */
/* ---------------------------------------------------------------------------------------- */

static ws_pool *_Atomic default_pool;
static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;

static void destroy_default_pool(void)
{
    /* acq_rel: takes the pool away from later ws_default_pool calls. */
    ws_pool *pool = ws_exchange_acq_rel(&default_pool, NULL);
    ws__worker *w = ws__tls_worker;
    if (pool == NULL || (w != NULL && w->pool == pool))
        return; /* exit() called from one of its tasks: it cannot wait for itself */
    ws_pool_destroy(pool);
}

ws_pool *ws_default_pool(void)
{
    /* acquire: pairs with the release store below; the pool is fully made. */
    ws_pool *pool = ws_load_acquire(&default_pool);
    if (WS_LIKELY(pool != NULL))
        return pool;
    pthread_mutex_lock(&default_lock);
    pool = ws_load_relaxed(&default_pool); /* relaxed: under default_lock */
    if (pool == NULL) {
        static bool registered;
        int err = ws_pool_create(&pool, NULL);
        if (err != 0) {
            fprintf(stderr, "worksteal: ws_default_pool: cannot create the default pool: %s\n",
                    ws_strerror(err));
            abort();
        }
        ws_store_release(&default_pool, pool); /* release: publishes the made pool */
        if (!registered)
            registered = atexit(destroy_default_pool) == 0;
    }
    pthread_mutex_unlock(&default_lock);
    return pool;
}
