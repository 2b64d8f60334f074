/* records.c: the heap records of group jobs and detached submissions, recycled.
 *
 * Every job of ws_group_submit and ws_submit needs a record of its own (the submitter keeps
 * none); the submitting thread makes it and a worker finishes it. With malloc and free, a batch
 * from one outside thread paid the allocator's slow path twice per job: the frees land on the
 * worker's side, and the submitter's mallocs take the chunks back one at a time from the arena
 * (at 1 worker, malloc and free were a third of the time of a batch of 10^6 tiny jobs, perf
 * record). Here records go round without the allocator, with one atomic step per BATCH records:
 *
 *   a worker that finishes a job  keeps the record on its own list (no atomics); a full list
 *                                 (BATCH records) becomes a *chain*, pushed onto the pool's
 *                                 stack of chains (one CAS);
 *   a worker that submits         takes from its own list;
 *   any thread whose list is      pops one chain off the pool's stack;
 *   empty
 *   nothing on the stack          malloc, as before.
 *
 * Records are plain ws__malloc blocks, the same for every pool, so a list may hold records
 * that came from any pool, and any of them may be freed with ws__free at any time.
 *
 * Why popping is safe without a tag against ABA: pops (and trims, below) take a try-lock,
 * `taking`, so there is one popper at a time, and pushers only add chains. A pop's CAS from
 * head h to h's successor can then succeed only if h is still the head, and h cannot have left
 * the stack and come back meanwhile, since only the lock holder removes chains. A thread that
 * finds the lock taken does not wait: it allocates. The push's release and the pop's acquire
 * order a finisher's last reads of a record before the next submitter's writes to it.
 *
 * Memory. While the pool is busy the stack holds what its workers finished and nobody has taken
 * back yet: after a burst, as many records as were queued at its peak (bounding it while busy
 * made the submitter allocate whatever the bound cut off, and glibc's malloc took much longer
 * over that mix than over plain malloc and free). When a worker parks, the pool is idle: it
 * trims the stack to KEEP_CHAINS chains (2048 records, 128 KiB) and frees the rest. Each worker
 * holds at most BATCH records, freed with the pool, as is the stack. A thread that is no worker
 * of the pool holds at most one chain, freed by a thread-specific destructor when it exits, and
 * by a destructor of the library for the thread that calls exit() (main returning from main).
 * While the allocation fault injection of the tests is armed, records come from ws__malloc, so
 * that an injected failure lands on a submission as it did before.
 */
#include "internal.h"

#include <pthread.h>

enum { BATCH = WS_RECORD_BATCH, KEEP_CHAINS = WS_RECORD_KEEP_CHAINS };

/* A chain is linked through the records' injector link; its first record links the next chain
 * of the stack through its owner field (both unused while a record is free). */
static ws__task *chain_next(ws__task *chain)
{
    return chain->owner;
}

static void chain_free(ws__task *t)
{
    while (t != NULL) {
        ws__task *next = ws_load_relaxed(&t->next); /* relaxed: held by this thread only */
        ws__free(t);
        t = next;
    }
}

/* Frees a stack's worth of chains, held by this thread only. */
static void chains_free(ws__task *ch)
{
    while (ch != NULL) {
        ws__task *next = chain_next(ch);
        chain_free(ch);
        ch = next;
    }
}

/* Any thread: takes the first record of the list (not empty). */
static ws__task *list_take(ws__record_cache *c)
{
    ws__task *t = c->chain;
    /* relaxed: a free record is only seen by the thread that holds its list. */
    c->chain = ws_load_relaxed(&t->next);
    c->count--;
    return t;
}

/* A worker of pool: pushes the chain of `first` .. `last` (linked through owner) onto the stack. */
static void stack_push(ws_pool *pool, ws__task *first, ws__task *last)
{
    ws__task *head = ws_load_relaxed(&pool->records.stack); /* relaxed: the CAS checks it */
    do
        last->owner = head;
    /* release: publishes the chains' links and orders our last reads of their records before
     * a popper's writes; pairs with the acquire loads in stack_pop and stack_trim. */
    while (!ws_cas_acq_rel(&pool->records.stack, &head, first));
}

/* The try-lock of pops and trims: false if another thread holds it. */
static bool taking_lock(ws_pool *pool)
{
    /* relaxed: a glance, so that an empty stack costs no locked instruction. */
    if (ws_load_relaxed(&pool->records.stack) == NULL)
        return false;
    /* acquire: pairs with the release in taking_unlock; the previous holder's pops are ours. */
    return ws_exchange_acq_rel(&pool->records.taking, 1) == 0;
}

static void taking_unlock(ws_pool *pool)
{
    ws_store_release(&pool->records.taking, 0); /* release: pairs with taking_lock */
}

/* Any thread: one chain off the pool's stack, or NULL (empty, or another thread is taking). */
static ws__task *stack_pop(ws_pool *pool)
{
    if (!taking_lock(pool))
        return NULL;
    ws__task *h;
    do
        /* acquire: pairs with the release CAS in stack_push; h's links are visible. */
        h = ws_load_acquire(&pool->records.stack);
    /* relaxed: the lock makes us the only remover, so h is still h if the CAS succeeds. */
    while (h != NULL && !ws_cas_relaxed(&pool->records.stack, &h, chain_next(h)));
    taking_unlock(pool);
    return h;
}

void ws__records_trim(ws_pool *pool)
{
    if (!taking_lock(pool))
        return;
    /* acquire: as in stack_pop; the lock holder takes the whole stack. */
    ws__task *all = ws_exchange_acq_rel(&pool->records.stack, NULL);
    taking_unlock(pool);
    ws__task *last = all;
    for (unsigned n = 1; last != NULL && n < KEEP_CHAINS; n++)
        last = chain_next(last);
    if (last == NULL) { /* KEEP_CHAINS or fewer: all back */
        if (all != NULL) {
            for (last = all; chain_next(last) != NULL;)
                last = chain_next(last);
            stack_push(pool, all, last);
        }
        return;
    }
    ws__task *surplus = chain_next(last);
    stack_push(pool, all, last);
    chains_free(surplus);
}

/* The calling thread's list when it is no worker of the pool it submits to. */
static _Thread_local ws__record_cache outside_cache;
static pthread_key_t outside_key;
static pthread_once_t outside_key_once = PTHREAD_ONCE_INIT;
static bool outside_key_made;

/* The thread is leaving: its list is freed, and whatever it frees or submits later (another
 * destructor's work) goes through the allocator. */
static void outside_cache_free(void *cache)
{
    ws__record_cache *c = cache;
    chain_free(c->chain);
    c->chain = NULL;
    c->count = 0;
    c->closed = true;
}

static void outside_key_make(void)
{
    outside_key_made = pthread_key_create(&outside_key, outside_cache_free) == 0;
}

/* The process's exit runs no thread-specific destructor, not even for the thread that calls
 * exit() (main, returning from main): that thread's list is freed here, after every atexit
 * handler (the default pool's destruction among them), and its later records come from the
 * allocator. Threads still running at exit keep theirs, as they keep their stacks. */
__attribute__((destructor)) static void outside_cache_free_at_exit(void)
{
    outside_cache_free(&outside_cache);
}

/* The list of a thread that is no worker of the pool, about to hold records: registered so that
 * the thread's exit frees them. False if that cannot be arranged, or if the process is exiting
 * (it then allocates). */
static bool outside_cache_registered(void)
{
    ws__record_cache *c = &outside_cache;
    if (c->closed)
        return false;
    if (c->registered)
        return true;
    pthread_once(&outside_key_once, outside_key_make);
    if (!outside_key_made || pthread_setspecific(outside_key, c) != 0)
        return false;
    c->registered = true;
    return true;
}

/* The list c is empty: refills it with a chain from the pool's stack; false if it cannot (an
 * outside thread whose list cannot be registered, or an empty stack). */
static bool list_refill(ws_pool *pool, ws__record_cache *c)
{
    if (c == &outside_cache && !outside_cache_registered())
        return false;
    ws__task *chain = stack_pop(pool);
    if (chain == NULL)
        return false;
    c->chain = chain;
    c->count = BATCH; /* every chain of the stack is full */
    return true;
}

ws__job *ws__record_new(ws_pool *pool, ws__worker *self)
{
    ws__record_cache *c = self != NULL && self->pool == pool ? &self->records : &outside_cache;
    /* A record's task is its first member: the lists link records through it. While the tests'
     * allocation faults are armed, records come from the allocator (see the top). */
    if (WS_LIKELY(!ws__test_fail_alloc_pending()) && (c->chain != NULL || list_refill(pool, c)))
        return (ws__job *)list_take(c);
    return ws__malloc(sizeof(ws__record));
}

void ws__record_free(ws_pool *pool, ws__worker *self, ws__job *j)
{
    ws__task *t = &j->task;
    if (self == NULL || self->pool != pool) {
        /* Kept on the thread's own list while it has room (records of any pool are alike), so
         * that a freed future stays recognisable as freed until its record is reused. */
        ws__record_cache *c = self != NULL ? &self->records : &outside_cache;
        if (c->count >= BATCH || (self == NULL && !outside_cache_registered())) {
            ws__free(j);
            return;
        }
        ws_store_relaxed(&t->next, c->chain); /* relaxed: this thread's list */
        c->chain = t;
        c->count++;
        return;
    }
    ws__record_cache *c = &self->records;
    if (c->count == BATCH) {
        stack_push(pool, c->chain, c->chain);
        c->chain = NULL;
        c->count = 0;
    }
    ws_store_relaxed(&t->next, c->chain); /* relaxed: this thread's list */
    c->chain = t;
    c->count++;
}

void ws__records_release(ws_pool *pool)
{
    /* relaxed: the pool's threads are joined, which ordered their pushes before us. */
    chains_free(ws_load_relaxed(&pool->records.stack));
    ws_store_relaxed(&pool->records.stack, NULL); /* relaxed: as above */
    unsigned total = pool->nworkers + pool->nspares;
    for (unsigned i = 0; pool->workers != NULL && i < total; i++) {
        ws__worker *w = pool->workers[i];
        if (w != NULL) {
            chain_free(w->records.chain);
            w->records = (ws__record_cache){0};
            chain_free(w->deque.futures); /* linked the same way (future.c, keep_ready) */
            w->deque.futures = NULL;
        }
    }
}
