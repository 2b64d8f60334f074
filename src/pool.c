/* pool.c: pools: configuration and environment, creation and destruction, the default pool,
 * the bookkeeping of external work, and ws_pool_run.
 *
 * Lifecycle. ws_pool_create allocates everything, then starts the P worker threads; if any
 * step fails, what was made is unmade (threads stopped and joined) and the error returned.
 * ws_pool_destroy (1) marks the pool stopping, after which outside threads can no longer submit;
 * (2) waits until every external job admitted before has finished, and every caller still
 * inside ws_pool_run, ws_sync or a submission has left, including jobs that running jobs submit
 * meanwhile; (3) sets exit and wakes everyone: a worker leaves once it finds no work anywhere and
 * no task is blocked (a blocked task may still push work that someone must run, spare.c); (4)
 * joins the threads, spares last and until none is left, and frees the memory.
 *
 * The admission word, pool->admitted, is one 32-bit futex word: the STOPPING bit and a count of
 * admitted references (external jobs not yet finished, and callers inside a function that
 * touches the pool after queuing work). A submitter adds to the count and reads the bit in the
 * same read-modify-write; destroy sets the bit with another, so the two are ordered in the
 * word's modification order: either the submitter sees STOPPING and backs out, or destroy sees
 * its count and waits. The release of a reference is a decrement of that word and is the last
 * access to the pool: destroy, which waits on the same word, may free the pool as soon as the
 * count reaches zero, and the releaser's futex wake after it uses only the word's address (a
 * stray wake-up of whatever lives there later is harmless: futex waiters re-check). A model of
 * this protocol is tests/model_pool_lifetime.c.
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIN_STACK_SIZE ((size_t)64 << 10)
#define MAX_STACK_SIZE ((size_t)1 << 40)

/* The default worker stack: STACK_PER_MAIN times the main thread's limit (the soft
 * RLIMIT_STACK), at most MAX_DEFAULT_STACK. A recursion that fits the main thread's stack as
 * plain calls then fits a worker's as typed tasks: a typed task's level takes more C stack than
 * a plain call of the same function, most when its frame was handed to the deque (its sync then
 * runs it through ws_sync), which a chain deeper than a segment of frames does at nearly every
 * level (frames.c). Measured for the smallest function, a plain level of 16 bytes: 384 bytes per
 * stack-task level in a Release build (24 times), 1,760 against 48 under ASan (36 times)
 * (docs/api.md, "Stack depth"; tests/test_stack_depth.c checks it). Thread stacks are address
 * space, reserved at thread start and given memory only where touched, so a large default costs
 * nothing until a recursion uses it. The cap, reached by a main-thread limit of 16 MiB: 1 GiB,
 * Go's limit for a goroutine's stack on 64-bit machines; 768 threads (512 workers, 256 spares)
 * then reserve 768 GiB of the 128 TiB of x86-64's user address space, and a 1 GiB mapping passes
 * the kernel's overcommit heuristic on any machine with 1 GiB of memory. A process whose address
 * space is limited (ulimit -v) gets the main thread's limit itself, which is what its limit was
 * chosen for. */
#define STACK_PER_MAIN    64
#define MAX_DEFAULT_STACK (sizeof(void *) >= 8 ? (size_t)1 << 30 : (size_t)32 << 20)
#define USUAL_MAIN_STACK  ((size_t)8 << 20) /* where the limit is unknown, or unlimited under -v */

/* ---------------------------------------------------------------------------------------- */
/* Environment                                                                               */
/* ---------------------------------------------------------------------------------------- */

static void env_ignored(const char *name, const char *value, const char *want)
{
    fprintf(stderr, "worksteal: ignoring %s=\"%s\" (expected %s)\n", name, value, want);
}

/* Every environment variable the library reads (src/, src/mpi), the one list of them: X(name).
 * README.md's and docs/api.md's tables document each (tests/doc_check.sh). Variables that start
 * with ENV_TESTS_PREFIX belong to the project's tests (tests/test.h) and are left alone. */
#define WS_ENV_VARIABLES(X) \
    X(WS_NUM_WORKERS)       \
    X(WS_STACK_SIZE)        \
    X(WS_PIN)               \
    X(WS_STATS)             \
    X(WS_TRACE)             \
    X(WS_TRACE_EVENTS)      \
    X(WS_PROFILE_CYCLES)    \
    X(WS_MPI_DELAY_US)
#define ENV_NAME_(name)  #name,
#define ENV_STRING_(x)   #x
#define ENV_STRING(x)    ENV_STRING_(x)
#define ENV_TESTS_PREFIX ENV_STRING(WS_TEST_)
static const char *const env_known[] = {WS_ENV_VARIABLES(ENV_NAME_)};
enum { ENV_KNOWN = sizeof env_known / sizeof env_known[0], ENV_NAME_MAX = 64 };

/* The edit distance (insertions, deletions, substitutions) between a[0..na) and b, b at most
 * ENV_NAME_MAX characters. */
static size_t edit_distance(const char *a, size_t na, const char *b)
{
    size_t nb = strlen(b), row[ENV_NAME_MAX + 1];
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t above = row[j];
            size_t best = diagonal + (a[i - 1] != b[j - 1]);
            best = above + 1 < best ? above + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[nb];
}

/* The known variable closest to name[0..len). */
static const char *env_closest(const char *name, size_t len)
{
    const char *closest = env_known[0];
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < ENV_KNOWN; i++) {
        size_t d = edit_distance(name, len, env_known[i]);
        if (d < best) {
            best = d;
            closest = env_known[i];
        }
    }
    return closest;
}

static bool env_is_known(const char *name, size_t len)
{
    for (size_t i = 0; i < ENV_KNOWN; i++) {
        if (strlen(env_known[i]) == len && memcmp(env_known[i], name, len) == 0)
            return true;
    }
    return false;
}

/* Once per process, at the first ws_pool_create: one line on stderr for each variable of the
 * environment that starts with WS_ and that the library does not read, naming the closest one it
 * does (WS_WORKERS: did you mean WS_NUM_WORKERS?), so that a misspelt setting is not silently
 * ignored. */
extern char **environ; /* POSIX: the program declares it (unistd.h does only with _GNU_SOURCE) */
/* The environment's list; a model, whose checker has none, defines it as NULL. */
#ifndef WS_ENVIRON
#define WS_ENVIRON environ
#endif

static void env_check_unknown(void)
{
    for (char **e = WS_ENVIRON; e != NULL && *e != NULL; e++) {
        const char *name = *e, *eq = strchr(name, '=');
        size_t len = eq != NULL ? (size_t)(eq - name) : strlen(name);
        if (strncmp(name, "WS_", 3) != 0 || env_is_known(name, len) ||
            strncmp(name, ENV_TESTS_PREFIX, strlen(ENV_TESTS_PREFIX)) == 0)
            continue;
        size_t shown = len < ENV_NAME_MAX ? len : ENV_NAME_MAX;
        fprintf(stderr,
                "worksteal: ignoring unknown environment variable %.*s (did you mean %s?)\n",
                (int)shown, name, env_closest(name, shown));
    }
}

/* WS_NUM_WORKERS if set and valid, else the CPUs the process can use: its affinity mask, capped
 * by its cgroup's CPU quota (and at WS_MAX_WORKERS). */
static unsigned default_workers(void)
{
    unsigned cpus = ws__available_cpus();
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

/* Parses "<digits>[KMGT]" (bytes, binary multiples); 0 if malformed or out of range. */
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
    case 't':
    case 'T':
        shift = 40;
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

/* The default worker stack, from the main thread's limit (see STACK_PER_MAIN above). */
static size_t derived_stack_size(void)
{
    bool limited = ws__address_space_limited();
    size_t main_limit = ws__main_stack_limit();
    if (main_limit == 0 || (main_limit == SIZE_MAX && limited))
        main_limit = USUAL_MAIN_STACK;
    size_t times = limited ? 1 : STACK_PER_MAIN;
    size_t size = main_limit > MAX_DEFAULT_STACK / times ? MAX_DEFAULT_STACK : main_limit * times;
    return size < MIN_STACK_SIZE ? MIN_STACK_SIZE : size;
}

static size_t default_stack_size(void)
{
    const char *env = getenv("WS_STACK_SIZE");
    if (env == NULL || *env == '\0')
        return derived_stack_size();
    size_t v = parse_size(env);
    if (v == 0) {
        env_ignored("WS_STACK_SIZE", env, "bytes from 64K to 1T, with an optional K, M, G or T");
        return derived_stack_size();
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
    if (err == EINVAL)
        fprintf(stderr, "worksteal: ws_pool_create: EINVAL: pin = \"%s\" (%s)\n", pin, why);
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

/* Joins the spare threads, until none is left: a spare may start another before it leaves
 * (a task blocked during teardown), so the list is read again under the lock each time. */
static void join_spares(ws_pool *pool)
{
    for (;;) {
        ws__worker *s = NULL;
        pthread_mutex_lock(&pool->spare_lock);
        for (unsigned i = 0; i < pool->nspares && s == NULL; i++) {
            ws__worker *c = pool->workers[pool->nworkers + i];
            if (c != NULL && c->started && !c->joined)
                s = c;
        }
        if (s != NULL) {
            ws_store_release(&s->spare_state, 1); /* release: pairs with spare_main's acquire */
            ws__futex_wake(&s->spare_state, 1);
        }
        pthread_mutex_unlock(&pool->spare_lock);
        if (s == NULL)
            return;
        ws__thread_join(s->thread);
        s->joined = true;
    }
}

/* Frees the workers' records and the pool's job records; their threads are gone. */
static void workers_free(ws_pool *pool)
{
    ws__records_release(pool);
    unsigned total = pool->nworkers + pool->nspares;
    for (unsigned i = 0; i < total && pool->workers != NULL; i++) {
        ws__worker *w = pool->workers[i];
        if (w == NULL)
            continue;
        ws__wdeque_destroy(&w->deque);
        ws__frames_destroy(w);
        ws__free(w);
    }
    ws__free(pool->workers);
}

/* The pool's own memory, once nothing of it is used. Debug builds keep the last QUARANTINE
 * pools allocated and marked destroyed instead, so that a later call on the handle reads valid
 * memory and aborts naming itself (ws__pool_check_live) rather than reading freed memory; the
 * oldest is freed when a newer one comes, and the rest at exit (no block is left for a leak
 * checker). Release builds free the pool at once and check nothing. */
#ifdef WS_DEBUG
enum { QUARANTINE = 16 };
static struct {
    pthread_mutex_t lock;
    ws_pool *pools[QUARANTINE]; /* under lock; slot next is the oldest */
    unsigned next;
} quarantine = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void pool_free(ws_pool *pool)
{
    pool->magic = WS_POOL_DESTROYED;
    pthread_mutex_lock(&quarantine.lock);
    ws_pool *oldest = quarantine.pools[quarantine.next];
    quarantine.pools[quarantine.next] = pool;
    quarantine.next = (quarantine.next + 1) % QUARANTINE;
    pthread_mutex_unlock(&quarantine.lock);
    ws__free(oldest);
}

__attribute__((destructor)) static void quarantine_free_at_exit(void)
{
    pthread_mutex_lock(&quarantine.lock);
    for (unsigned i = 0; i < QUARANTINE; i++) {
        ws__free(quarantine.pools[i]);
        quarantine.pools[i] = NULL;
    }
    pthread_mutex_unlock(&quarantine.lock);
}
#else
static void pool_free(ws_pool *pool)
{
    ws__free(pool);
}
#endif

/* Stops and joins every started thread, frees everything. For destroy and failed creates. */
static void pool_teardown(ws_pool *pool)
{
    /* seq_cst: against ws__blocked_leave's decrement and load of exit, and the idle workers'
     * loads of exit then blocked (ws__pool_finished): whoever comes last in the total order
     * sees both, so the last blocked task out wakes the idle workers or they see it gone. */
    ws_store_seq_cst(&pool->exit, 1);
    ws__idle_wake_all(pool);
    for (unsigned i = 0; i < pool->nworkers && pool->workers != NULL; i++) {
        ws__worker *w = pool->workers[i];
        if (w != NULL && w->started)
            ws__thread_join(w->thread);
    }
    if (pool->workers != NULL)
        join_spares(pool);
    ws__trace_pool_finish(pool);
    workers_free(pool);
    ws__placement_free(pool->placement);
    pthread_mutex_destroy(&pool->spare_lock);
    pool_free(pool);
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

/* The process's pools, read by every wait (a pool is alive) and every call on the default
 * pool: on lines of their own (platform.h, WS_CACHE_LINE). */
static struct {
    /* The default pool (see "The default pool" below). */
    alignas(WS_CACHE_LINE) ws_pool *_Atomic default_pool;
    /* Pools created in this process so far: a pool's serial number names it in traces. */
    _Atomic unsigned serials;
    /* Bumped in the child of every fork(): pools made before belong to the parent (see
     * below). */
    _Atomic unsigned fork_generation;
} pools;
static void inherited_pool_free(ws_pool *pool);

static void register_fork_handlers(void);

/* What the process does once, at its first ws_pool_create. */
static void first_pool_once(void)
{
    register_fork_handlers();
    env_check_unknown();
}

/* One line on stderr naming a config field out of range (the reason of ws_pool_create's EINVAL). */
static void config_field_invalid(const char *field, unsigned long long value,
                                 unsigned long long min, unsigned long long max)
{
    fprintf(stderr,
            "worksteal: ws_pool_create: EINVAL: %s = %llu (expected 0 for the default, or %llu "
            "to %llu)\n",
            field, value, min, max);
}

/* True, with one line on stderr naming the field, if a set field of the caller's config is out
 * of range (the defaults, from the environment, are valid by construction). */
static bool config_rejected(const ws_config *cfg)
{
    if (cfg->workers > WS_MAX_WORKERS)
        config_field_invalid("workers", cfg->workers, 1, WS_MAX_WORKERS);
    else if (cfg->stack_size != 0 &&
             (cfg->stack_size < MIN_STACK_SIZE || cfg->stack_size > MAX_STACK_SIZE))
        config_field_invalid("stack_size", cfg->stack_size, MIN_STACK_SIZE, MAX_STACK_SIZE);
    else if (cfg->max_spares > WS_MAX_SPARES && cfg->max_spares != WS_NO_SPARES)
        config_field_invalid("max_spares", cfg->max_spares, 1, WS_MAX_SPARES);
    else
        return false;
    return true;
}

int ws_pool_create(ws_pool **out, const ws_config *config)
{
    static pthread_once_t first_pool = PTHREAD_ONCE_INIT;
    if (out == NULL)
        return EINVAL;
    pthread_once(&first_pool, first_pool_once);
    ws_config cfg = {0};
    if (config != NULL)
        cfg = *config;
    if (config_rejected(&cfg))
        return EINVAL;
    unsigned n = cfg.workers != 0 ? cfg.workers : default_workers();
    size_t stack = cfg.stack_size != 0 ? cfg.stack_size : default_stack_size();
    unsigned spares = cfg.max_spares == WS_NO_SPARES ? 0
                      : cfg.max_spares != 0          ? cfg.max_spares
                                                     : WS_DEFAULT_SPARES;

    ws_pool *pool = ws__aligned_alloc(WS_CACHE_LINE, sizeof(ws_pool));
    if (pool == NULL)
        return ENOMEM;
    if (pthread_mutex_init(&pool->spare_lock, NULL) != 0) {
        ws__free(pool);
        return ENOMEM;
    }
    pool->magic = WS_POOL_LIVE;
    pool->nworkers = n;
    pool->nspares = spares;
    pool->stack_size = stack;
    /* relaxed: before the pool is shared. */
    pool->generation = ws_load_relaxed(&pools.fork_generation);
    ws__injector_init(&pool->urgent);
    ws__injector_init(&pool->injector);
    int err = ENOMEM;
    /* Spare records are made when a spare is first needed (spare.c): only their slots here. */
    pool->workers = ws__calloc(n + spares, sizeof(ws__worker *));
    for (unsigned i = 0; pool->workers != NULL && i < n; i++) {
        pool->workers[i] = ws__worker_new(pool, i, false);
        if (pool->workers[i] == NULL)
            goto fail;
    }
    if (pool->workers == NULL)
        goto fail;
    pool->serial = ws_fetch_add_relaxed(&pools.serials, 1) + 1; /* relaxed: a unique number */
    err = place_workers(pool, cfg.pin);
    if (err == 0)
        err = ws__trace_pool_init(pool);
    if (err != 0)
        goto fail;
    if (pool->trace != NULL) {
        for (unsigned i = 0; i < n; i++)
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

/* The admission word (see the top of this file). */
#define ADMIT_STOPPING (1u << 31)
#define ADMIT_LIMIT    (1u << 30) /* references at once; beyond, submissions get EAGAIN */

/* Sets STOPPING and waits until no admitted reference is left. */
static void wait_admitted_gone(ws_pool *pool)
{
    /* acq_rel: ordered against every admission's RMW on the same word (see the top). */
    uint32_t v = ws_fetch_or_acq_rel(&pool->admitted, ADMIT_STOPPING) | ADMIT_STOPPING;
    while (v != ADMIT_STOPPING) {
        ws__futex_wait(&pool->admitted, v);
        /* acquire: pairs with the release half of the decrements in ws__pool_release: what
         * the jobs and callers did is visible, and they touch the pool no more. */
        v = ws_load_acquire(&pool->admitted);
    }
}

static void pool_destroy(ws_pool *pool)
{
    if (!ws__pool_alive(pool)) {
        inherited_pool_free(pool);
        return;
    }
    wait_admitted_gone(pool);
    ws__group_check_pool_done(pool); /* debug builds: groups never waited for (group_check.c) */
    if (stats_env_on())
        ws__stats_report(pool);
    pool_teardown(pool);
}

void ws_pool_destroy(ws_pool *pool)
{
    if (pool == NULL)
        return;
    ws__pool_check_live(pool, "ws_pool_destroy");
    ws__worker *w = ws__tls_worker;
    if (w != NULL && w->pool == pool)
        ws__contract_violation("ws_pool_destroy", "called from a task of the pool itself");
    if (pool == ws_load_relaxed(&pools.default_pool)) /* relaxed: only compared */
        ws__contract_violation("ws_pool_destroy", "the default pool is destroyed at exit, "
                                                  "not by the caller");
    pool_destroy(pool);
}

/* ---------------------------------------------------------------------------------------- */
/* External work                                                                             */
/* ---------------------------------------------------------------------------------------- */

/* Does pool refuse new work from the calling thread, given the admission word's value v? */
static int pool_refusal(ws_pool *pool, uint32_t v)
{
    if (!(v & ADMIT_STOPPING))
        return 0;
    ws__worker *w = ws__tls_worker;
    return w == NULL || w->pool != pool ? ESHUTDOWN : 0;
}

int ws__pool_admit(ws_pool *pool, uint32_t refs)
{
    if (!ws__pool_alive(pool))
        return ENOTRECOVERABLE;
    /* acq_rel: the admission protocol (see the top of this file). */
    uint32_t old = ws_fetch_add_acq_rel(&pool->admitted, refs);
    ws_test_hook(WS_HOOK_ADMITTED);
    int err = pool_refusal(pool, old);
    if (err == 0 && (old & ~ADMIT_STOPPING) >= ADMIT_LIMIT)
        err = EAGAIN;
    if (err != 0)
        ws__pool_release(pool, refs);
    return err;
}

int ws__pool_open(ws_pool *pool)
{
    if (!ws__pool_alive(pool))
        return ENOTRECOVERABLE;
    /* relaxed: the caller's work is covered by a reference already counted, which keeps
     * destroy waiting whatever this load reads; it only makes new submissions see a destroy
     * that began, as ws__pool_admit's RMW would. */
    return pool_refusal(pool, ws_load_relaxed(&pool->admitted));
}

void ws__pool_release(ws_pool *pool, uint32_t refs)
{
    /* acq_rel: the release half hands our accesses to the pool over to destroy's acquire
     * load; after this decrement the pool may be freed: only its address is used below. */
    uint32_t old = ws_fetch_sub_acq_rel(&pool->admitted, refs);
    ws_test_hook(WS_HOOK_RELEASED);
    if (old == (ADMIT_STOPPING | refs))
        ws__futex_wake(&pool->admitted, -1);
}

/* Until t is linked, nobody can take it, so the reference counted for it (its own, its
 * group's, or its waiting caller's) keeps the pool alive: the submitter looks for a sleeper to
 * wake first and links t after, and a submission that wakes nobody touches the pool no more
 * once t is linked (no reference of its own to take and give back). One that wakes a sleeper
 * holds a reference of its own across the link and the wake-up. */
void ws__pool_inject(ws_pool *pool, ws__task *t)
{
    ws__injector *q = (t->flags & WS_HIGH_PRIORITY) ? &pool->urgent : &pool->injector;
    ws__task *prev = ws__injector_push_begin(q, t);
    ws_test_hook(WS_HOOK_INJECTED);
    uint64_t s = ws__idle_observe_sc(&pool->idle.state);
    if (WS_LIKELY(!ws__idle_wake_wanted(s))) {
        ws__injector_push_end(prev, t);
        return;
    }
    /* relaxed: the pool is alive (t is not linked); the release below hands our accesses over
     * to destroy, as any reference's does. */
    ws_fetch_add_relaxed(&pool->admitted, 1);
    ws__injector_push_end(prev, t);
    ws__idle_wake(pool, s);
    ws__pool_release(pool, 1);
}

int ws_pool_run(ws_pool *pool, ws_fn fn, void *arg)
{
    if (pool == NULL || fn == NULL)
        ws__contract_violation("ws_pool_run", "NULL pool or function");
    ws__pool_check_live(pool, "ws_pool_run");
    ws__worker *w = ws__tls_worker;
    if (w != NULL && w->pool == pool) {
        fn(arg);
        return 0;
    }
    /* Our reference keeps the pool alive from the push to our last look at it. */
    int err = ws__pool_admit(pool, 1);
    if (err != 0)
        return err;
    ws__task t;
    ws__task_init(&t, fn, arg);
    ws__pool_inject(pool, &t);
    /* A worker of another pool cannot help here: it blocks, as in ws_block_begin (its own
     * pool's spares then reach every task it spawned). */
    if (w != NULL)
        ws__block_worker(w);
    ws__task_wait(NULL, &t);
    if (w != NULL)
        ws__blocked_leave(w);
    ws__pool_release(pool, 1);
    return 0;
}

void ws__typed_run(ws_pool *pool, ws_fn fn, void *arg, const char *what)
{
    ws__worker *w = ws__tls_worker;
    if (pool != NULL)
        ws__pool_check_live(pool, what);
    else /* as ws_future_submit: a task's name_run from its own pool's code stays a call */
        pool = w != NULL ? w->pool : ws_default_pool();
    int err = ws_pool_run(pool, fn, arg);
    if (err == ESHUTDOWN)
        ws__contract_violation(what, "the pool is being destroyed (ws_pool_run: ESHUTDOWN)");
    if (err != 0)
        ws__contract_violation(what, "the pool was inherited through fork() (ws_pool_run: "
                                     "ENOTRECOVERABLE)");
}

unsigned ws_pool_workers(const ws_pool *pool)
{
    ws__pool_check(pool, "ws_pool_workers");
    return pool->nworkers;
}

unsigned ws_pool_threads(const ws_pool *pool)
{
    ws__pool_check(pool, "ws_pool_threads");
    return pool->nworkers + pool->nspares;
}

/* ---------------------------------------------------------------------------------------- */
/* fork()                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* A child of fork() has only the thread that forked: the pools it inherited have no workers.
 * The child handler bumps fork_generation, which marks every inherited pool dead (the
 * functions that would queue work on one return ENOTRECOVERABLE, and ws_pool_destroy only
 * frees its memory), and forgets the default pool, which is made again on first use. The
 * prepare handler takes default_lock so that no fork happens while another thread holds it;
 * the child's copy is then released, not inherited locked. Per-pool locks are not taken: an
 * inherited pool is never used in the child. */

bool ws__pool_alive(const ws_pool *pool)
{
    /* relaxed: bumped only in a child, by its only thread, before anything else runs there. */
    return pool->generation == ws_load_relaxed(&pools.fork_generation);
}

/* Frees an inherited pool's memory in a child process; its threads exist only in the parent. */
static void inherited_pool_free(ws_pool *pool)
{
    workers_free(pool);
    pool_free(pool);
}

/* ---------------------------------------------------------------------------------------- */
/* The default pool                                                                          */
/* ---------------------------------------------------------------------------------------- */

/* The default pool is made on first use and destroyed by an atexit handler. After that
 * handler ran, fork-join and loops called from outside a worker run inline on the caller
 * (ws__default_pool_if_live returns NULL), and an explicit ws_default_pool() makes a new pool
 * and registers its destruction again: no thread is left running either way.
 *
 * exit() called from a task (of any pool) cannot wait for the default pool's work: that work may
 * be waiting for the very task that called exit (a default-pool job inside ws_pool_run on
 * another pool whose task exits). Then the pool is destroyed only if no work is admitted when
 * STOPPING is set; otherwise it is left to the process's end, threads and memory as they are.
 * exit() from any other thread waits for the work, as ws_pool_destroy does. */
static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static bool default_registered; /* an atexit handler is pending; under default_lock */
static bool exit_began;         /* the handler ran; under default_lock */

/* Sets STOPPING; true if no admitted reference was left (a destroy then waits for nothing). */
static bool stop_if_idle(ws_pool *pool)
{
    /* acq_rel: as wait_admitted_gone's, which then finds the count as read here. */
    return ws_fetch_or_acq_rel(&pool->admitted, ADMIT_STOPPING) == 0;
}

static void destroy_default_pool(void)
{
    pthread_mutex_lock(&default_lock);
    /* relaxed: under default_lock; readers outside it only compare or re-check under it. */
    ws_pool *pool = ws_load_relaxed(&pools.default_pool);
    ws_store_relaxed(&pools.default_pool, NULL);
    default_registered = false;
    exit_began = true;
    pthread_mutex_unlock(&default_lock);
    ws__worker *w = ws__tls_worker;
    if (pool == NULL || (w != NULL && (w->pool == pool || !stop_if_idle(pool))))
        return; /* exit() called from a task while the pool has work (see above) */
    pool_destroy(pool);
}

/* With default_lock held: makes the default pool (aborting if it cannot) and registers its
 * destruction at exit. */
static ws_pool *default_pool_make(void)
{
    ws_pool *pool;
    int err = ws_pool_create(&pool, NULL);
    if (err != 0) {
        fprintf(stderr, "worksteal: ws_default_pool: cannot create the default pool: %s\n",
                ws_strerror(err));
        abort();
    }
    ws_store_release(&pools.default_pool, pool); /* release: publishes the made pool */
    if (!default_registered)
        default_registered = atexit(destroy_default_pool) == 0;
    return pool;
}

/* The default pool, made on first use; after the exit handler ran, made again only if
 * remake_after_exit (otherwise NULL). */
static ws_pool *default_pool_get(bool remake_after_exit)
{
    /* acquire: pairs with the release store in default_pool_make; the pool is fully made. */
    ws_pool *pool = ws_load_acquire(&pools.default_pool);
    if (WS_LIKELY(pool != NULL))
        return pool;
    pthread_mutex_lock(&default_lock);
    pool = ws_load_relaxed(&pools.default_pool); /* relaxed: under default_lock */
    if (pool == NULL && (remake_after_exit || !exit_began))
        pool = default_pool_make();
    pthread_mutex_unlock(&default_lock);
    return pool;
}

ws_pool *ws_default_pool(void)
{
    return default_pool_get(true);
}

ws_pool *ws__default_pool_if_live(void)
{
    return default_pool_get(false);
}

bool ws__run_on_default(ws_fn fn, void *arg)
{
    ws_pool *pool = ws__default_pool_if_live();
    return pool != NULL && ws_pool_run(pool, fn, arg) == 0;
}

static void atfork_prepare(void)
{
    pthread_mutex_lock(&default_lock);
}

static void atfork_parent(void)
{
    pthread_mutex_unlock(&default_lock);
}

static void atfork_child(void)
{
    /* relaxed: the child has one thread. */
    ws_fetch_add_relaxed(&pools.fork_generation, 1);
    ws_store_relaxed(&pools.default_pool, NULL);
    ws__tls_worker = NULL; /* a task that forked: the child's thread is no worker */
    pthread_mutex_unlock(&default_lock);
}

static void register_fork_handlers(void)
{
    if (pthread_atfork(atfork_prepare, atfork_parent, atfork_child) != 0)
        fprintf(stderr, "worksteal: pthread_atfork failed: pools will not work in children of "
                        "fork()\n");
}
