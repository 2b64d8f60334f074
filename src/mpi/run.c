/* run.c: ws_mpi_run and the rank's side of it that the workers see: the shared record stack and
 * the drivers.
 *
 * A driver is a pool job bound to a slot. It takes a chunk of records from the shared stack
 * into its private stack and processes them newest first; the records it emits go on the
 * private stack. While it has at least two private records and fewer than a chunk are shared, it
 * moves the oldest half of its private records to the shared stack, where idle
 * workers of the rank and thieves from other ranks find them. A driver whose private stack is
 * empty and finds nothing shared ends its job and frees its slot, so an idle worker goes back to
 * the pool (where it may steal the fork-join tasks of other records) instead of blocking.
 * Whoever adds shared records starts drivers on free slots, about one per chunk waiting.
 */
#include "mpi_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void ws__mpi_fatal(const char *fn, const char *what)
{
    fprintf(stderr, "worksteal_mpi: %s: %s\n", fn, what);
    abort();
}

bool ws__mpi_passive_locked(const ws__mpi_rank *rank)
{
    return rank->shared.count == 0 && rank->active == 0;
}

bool ws__mpi_hungry_locked(const ws__mpi_rank *rank)
{
    return rank->shared.count == 0 && rank->active < rank->slots;
}

static void publish_count_locked(ws__mpi_rank *rank)
{
    /* Partner: the relaxed load in driver_job; a stale value only delays a release. */
    atomic_store_explicit(&rank->shared_count, rank->shared.count, memory_order_relaxed);
}

/* ---- drivers ---- */

/* Takes up to a chunk of the newest shared records; false (and the slot is freed) if none. */
static bool refill(ws__mpi_rank *rank, ws_mpi_emitter *d)
{
    pthread_mutex_lock(&rank->lock);
    size_t n = rank->shared.count < rank->config.chunk ? rank->shared.count : rank->config.chunk;
    if (n == 0) {
        d->busy = false;
        rank->active--;
        rank->wakes++;
        pthread_cond_signal(&rank->wake); /* the rank may now be hungry or passive */
        pthread_mutex_unlock(&rank->lock);
        return false;
    }
    if (!ws__records_reserve(&d->own, n))
        ws__mpi_fatal("ws_mpi_run", "out of memory for a worker's records");
    ws__records_move_top(&rank->shared, &d->own, n);
    publish_count_locked(rank);
    pthread_mutex_unlock(&rank->lock);
    return true;
}

/* Shares the oldest half of the private records. */
static void release(ws__mpi_rank *rank, ws_mpi_emitter *d)
{
    size_t n = d->own.count / 2;
    pthread_mutex_lock(&rank->lock);
    bool room = ws__records_reserve(&rank->shared, n);
    if (room) {
        ws__records_move_bottom(&d->own, &rank->shared, n);
        publish_count_locked(rank);
    }
    pthread_mutex_unlock(&rank->lock);
    if (room) /* out of memory: the records stay private and run here */
        ws__mpi_start_drivers(rank);
}

static void driver_job(void *arg)
{
    ws_mpi_emitter *d = arg;
    ws__mpi_rank *rank = d->rank;
    d->thread = pthread_self();
    for (;;) {
        if (d->own.count == 0 && !refill(rank, d))
            return; /* the slot is no longer ours */
        ws__records_pop(&d->own, d->current);
        rank->work->process(d, d->current, d->acc, rank->work->ctx);
        d->processed++;
        /* Partner: publish_count_locked. */
        if (d->own.count >= 2 &&
            atomic_load_explicit(&rank->shared_count, memory_order_relaxed) < rank->config.chunk)
            release(rank, d);
    }
}

void ws__mpi_start_drivers(ws__mpi_rank *rank)
{
    pthread_mutex_lock(&rank->lock);
    size_t chunk = rank->config.chunk;
    size_t want = (rank->shared.count + chunk - 1) / chunk;
    ws_mpi_emitter *start[WS_MAX_WORKERS];
    unsigned n = 0;
    for (unsigned i = 0; i < rank->slots && rank->active < rank->slots && n < want; i++) {
        if (!rank->slot[i].busy) {
            rank->slot[i].busy = true;
            rank->active++;
            start[n++] = &rank->slot[i];
        }
    }
    pthread_mutex_unlock(&rank->lock);
    for (unsigned i = 0; i < n; i++) {
        int err = ws_group_submit(&rank->group, driver_job, start[i], 0);
        if (err == 0)
            continue;
        if (err != ENOMEM)
            ws__mpi_fatal("ws_mpi_run", "the pool refused a job (destroyed during the run?)");
        /* Out of memory: the progress thread tries again on its next round. */
        pthread_mutex_lock(&rank->lock);
        start[i]->busy = false;
        rank->active--;
        pthread_mutex_unlock(&rank->lock);
    }
}

int ws_mpi_emit(ws_mpi_emitter *out, const void *record)
{
    if (!out || !record)
        ws__mpi_fatal("ws_mpi_emit", "NULL emitter or record");
    if (!pthread_equal(out->thread, pthread_self()))
        ws__mpi_fatal("ws_mpi_emit", "called from a thread that is not running the record");
    if (!ws__records_reserve(&out->own, 1))
        return ENOMEM;
    ws__records_push(&out->own, record, 1);
    return 0;
}

/* ---- the progress thread's side of the shared stack ---- */

void ws__mpi_give(ws__mpi_rank *rank, const void *records, size_t n)
{
    pthread_mutex_lock(&rank->lock);
    if (!ws__records_reserve(&rank->shared, n))
        ws__mpi_fatal("ws_mpi_run", "out of memory for records received from another rank");
    ws__records_push(&rank->shared, records, n);
    publish_count_locked(rank);
    pthread_mutex_unlock(&rank->lock);
    ws__mpi_start_drivers(rank);
}

size_t ws__mpi_take_for_thief(ws__mpi_rank *rank, unsigned char **out)
{
    *out = NULL;
    pthread_mutex_lock(&rank->lock);
    size_t n = (rank->shared.count + 1) / 2;
    if (n > rank->config.steal_max)
        n = rank->config.steal_max;
    if (n > INT_MAX / rank->shared.size)
        n = INT_MAX / rank->shared.size; /* an MPI message counts its bytes in an int */
    if (n > 0)
        *out = malloc(n * rank->shared.size);
    if (*out) {
        ws__records_take_bottom(&rank->shared, *out, n);
        publish_count_locked(rank);
    } else {
        n = 0; /* out of memory: answer "none", the records stay here */
    }
    pthread_mutex_unlock(&rank->lock);
    return n;
}

/* ---- the run ---- */

static unsigned env_unsigned(const char *name, unsigned fallback)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return fallback;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v > 100000000ul || s[0] == '-') {
        fprintf(stderr, "worksteal_mpi: ignoring %s=%s (want a number of microseconds)\n", name, s);
        return fallback;
    }
    return (unsigned)v;
}

static ws_mpi_config config_with_defaults(const ws_mpi_config *given)
{
    ws_mpi_config c = given ? *given : (ws_mpi_config){0};
    c.chunk = c.chunk ? c.chunk : 16;
    c.steal_max = c.steal_max ? c.steal_max : 1024;
    c.poll_min_us = c.poll_min_us ? c.poll_min_us : 20;
    c.poll_max_us = c.poll_max_us ? c.poll_max_us : 250;
    if (c.poll_max_us < c.poll_min_us)
        c.poll_max_us = c.poll_min_us;
    c.idle_max_us = c.idle_max_us ? c.idle_max_us : 50000;
    if (c.idle_max_us < c.poll_max_us)
        c.idle_max_us = c.poll_max_us;
    c.delay_max_us = c.delay_max_us ? c.delay_max_us : env_unsigned("WS_MPI_DELAY_US", 0);
    c.seed = c.seed ? c.seed : 1;
    return c;
}

static int check_call(const ws_mpi_work *work, const void *result)
{
    if (!work || !result || !work->process || !work->combine || !work->identity)
        return EINVAL;
    if (work->record_size == 0 || work->record_size > WS_MPI_MAX_RECORD_SIZE)
        return EINVAL;
    if (work->acc_size == 0 || (work->initial_count > 0 && !work->initial))
        return EINVAL;
    return 0;
}

/* The calling thread may make MPI calls while workers run, and is not a worker (the progress
 * loop would hold it). If not, the call fails at once, without communicating, and says why on
 * one stderr line. */
static bool thread_may_run(void)
{
    const char *why = NULL;
    int level = MPI_THREAD_SINGLE, is_main = 0;
    if (ws_worker_id() < 0) {
        MPI_Query_thread(&level);
        MPI_Is_thread_main(&is_main);
    }
    if (ws_worker_id() >= 0)
        why = "called from a worksteal worker (call it from a thread outside the pool)";
    else if (level == MPI_THREAD_SINGLE)
        why = "MPI runs at MPI_THREAD_SINGLE (a plain MPI_Init): initialize it with "
              "MPI_Init_thread and MPI_THREAD_FUNNELED or above";
    else if (level == MPI_THREAD_FUNNELED && !is_main)
        why = "MPI runs at MPI_THREAD_FUNNELED and this is not its main thread (call it from "
              "the thread that initialized MPI, or ask for MPI_THREAD_SERIALIZED)";
    if (why != NULL)
        fprintf(stderr, "worksteal_mpi: ws_mpi_run: EINVAL: %s\n", why);
    return why == NULL;
}

static void rank_free(ws__mpi_rank *rank)
{
    if (!rank)
        return;
    for (unsigned i = 0; rank->slot && i < rank->slots; i++) {
        ws__records_free(&rank->slot[i].own);
        free(rank->slot[i].acc);
        free(rank->slot[i].current);
    }
    free(rank->slot);
    free(rank->mine);
    free(rank->gathered);
    ws__records_free(&rank->shared);
    pthread_cond_destroy(&rank->wake);
    pthread_mutex_destroy(&rank->lock);
    free(rank);
}

static int rank_create(ws__mpi_rank **out, MPI_Comm comm, ws_pool *pool, const ws_mpi_work *work,
                       const ws_mpi_config *config)
{
    ws__mpi_rank *rank = calloc(1, sizeof(*rank));
    if (!rank)
        return ENOMEM;
    rank->work = work;
    rank->config = config_with_defaults(config);
    rank->pool = pool;
    rank->slots = ws_pool_workers(pool);
    MPI_Comm_size(comm, &rank->ranks);
    pthread_mutex_init(&rank->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&rank->wake, &attr);
    pthread_condattr_destroy(&attr);
    ws__records_init(&rank->shared, work->record_size);
    rank->slot = calloc(rank->slots, sizeof(*rank->slot));
    rank->mine = malloc(work->acc_size);
    rank->gathered = malloc(work->acc_size * (size_t)rank->ranks);
    bool ok = rank->slot && rank->mine && rank->gathered &&
              ws__records_reserve(&rank->shared, work->initial_count);
    for (unsigned i = 0; ok && i < rank->slots; i++) {
        ws_mpi_emitter *d = &rank->slot[i];
        d->rank = rank;
        ws__records_init(&d->own, work->record_size);
        d->acc = malloc(work->acc_size);
        d->current = malloc(work->record_size);
        ok = d->acc && d->current;
        if (ok)
            memcpy(d->acc, work->identity, work->acc_size);
    }
    if (!ok) {
        rank_free(rank);
        return ENOMEM;
    }
    ws__records_push(&rank->shared, work->initial, work->initial_count);
    publish_count_locked(rank);
    *out = rank;
    return 0;
}

/* Every rank learns whether any rank failed, and whether all passed the same sizes. */
static int agree(MPI_Comm comm, int err, const ws_mpi_work *work)
{
    long long mine[5] = {err, 0, 0, 0, 0};
    if (work) {
        mine[1] = (long long)work->record_size;
        mine[2] = -(long long)work->record_size;
        mine[3] = (long long)work->acc_size;
        mine[4] = -(long long)work->acc_size;
    }
    long long all[5];
    MPI_Allreduce(mine, all, 5, MPI_LONG_LONG, MPI_MAX, comm);
    if (all[0] != 0)
        return (int)all[0];
    if (all[1] != -all[2] || all[3] != -all[4])
        return EINVAL;
    return 0;
}

/* The rank's accumulators in slot order, then all ranks' in rank order, into result. */
static void combine_results(ws__mpi_rank *rank, void *result)
{
    const ws_mpi_work *w = rank->work;
    memcpy(rank->mine, w->identity, w->acc_size);
    for (unsigned i = 0; i < rank->slots; i++)
        w->combine(rank->mine, rank->slot[i].acc, w->ctx);
    MPI_Allgather(rank->mine, (int)w->acc_size, MPI_BYTE, rank->gathered, (int)w->acc_size,
                  MPI_BYTE, rank->comm);
    memmove(result, w->identity, w->acc_size);
    for (int r = 0; r < rank->ranks; r++)
        w->combine(result, rank->gathered + (size_t)r * w->acc_size, w->ctx);
}

int ws_mpi_run(MPI_Comm comm, ws_pool *pool, const ws_mpi_work *work, const ws_mpi_config *config,
               void *result, ws_mpi_stats *stats)
{
    if (!thread_may_run())
        return EINVAL;
    ws__mpi_rank *rank = NULL;
    int err = check_call(work, result);
    if (!err)
        err = rank_create(&rank, comm, pool ? pool : ws_default_pool(), work, config);
    err = agree(comm, err, work);
    if (err) {
        rank_free(rank);
        return err;
    }
    MPI_Comm_dup(comm, &rank->comm);
    MPI_Comm_rank(rank->comm, &rank->me);
    ws_group_init(&rank->group, rank->pool);

    ws_mpi_stats mine = {0};
    double start = MPI_Wtime();
    ws__mpi_start_drivers(rank);
    ws__mpi_progress(rank, &mine);
    ws_group_wait(&rank->group); /* every driver has already freed its slot; let them return */
    mine.elapsed_s = MPI_Wtime() - start;
    for (unsigned i = 0; i < rank->slots; i++)
        mine.records += rank->slot[i].processed;

    combine_results(rank, result);
    if (stats)
        *stats = mine;
    MPI_Comm_free(&rank->comm);
    rank_free(rank);
    return 0;
}
