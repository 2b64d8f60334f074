/* mpi_internal.h: private to libworksteal_mpi. One block per defining file.
 *
 * A run has one ws__mpi_rank per rank: the rank's shared record stack (the records other
 * workers and other ranks may take), its drivers (pool jobs that each keep a private record
 * stack and process records from it), and the progress thread's protocol state (steal requests,
 * the termination token, messages in flight). docs/distributed.md describes the protocol; the
 * termination rules are in safra.h. */
#ifndef WS_MPI_INTERNAL_H
#define WS_MPI_INTERNAL_H

#include "worksteal_mpi.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- records.c: a double-ended stack of fixed-size records ---- */

typedef struct ws__records {
    unsigned char *buf;
    size_t size;  /* bytes per record */
    size_t cap;   /* records; a power of two, or 0 */
    size_t first; /* index of the bottom (oldest) record */
    size_t count;
} ws__records;

void ws__records_init(ws__records *r, size_t size);
void ws__records_free(ws__records *r);
/* Room for n more records; false if out of memory (nothing changed). */
bool ws__records_reserve(ws__records *r, size_t n);
/* Appends n records from src on top; the caller reserved room. */
void ws__records_push(ws__records *r, const void *src, size_t n);
/* Removes the top record into dst; the stack is not empty. */
void ws__records_pop(ws__records *r, void *dst);
/* Moves the n oldest records of from onto the top of to (oldest first); to has room. */
void ws__records_move_bottom(ws__records *from, ws__records *to, size_t n);
/* Moves the n newest records of from onto the top of to (in their order); to has room. */
void ws__records_move_top(ws__records *from, ws__records *to, size_t n);
/* Copies the n oldest records out into dst and removes them. */
void ws__records_take_bottom(ws__records *r, void *dst, size_t n);

/* ---- run.c: the run, its drivers and its shared stack ---- */

typedef struct ws__mpi_rank ws__mpi_rank;

/* A driver slot: at most one pool job runs on it at a time. */
struct ws_mpi_emitter {
    ws__mpi_rank *rank;
    ws__records own;        /* this driver's private stack */
    unsigned char *acc;     /* the slot's accumulator, kept over the slot's jobs */
    unsigned char *current; /* the record being processed */
    pthread_t thread;       /* the thread running the current record */
    uint64_t processed;     /* records processed on this slot */
    bool busy;              /* a job runs on this slot (under rank->lock) */
};

struct ws__mpi_rank {
    const ws_mpi_work *work;
    ws_mpi_config config; /* defaults filled in */
    ws_pool *pool;
    ws_group group;
    MPI_Comm comm; /* a private duplicate of the caller's */
    int me, ranks;

    pthread_mutex_t lock; /* guards shared, the slots' busy flags and active */
    pthread_cond_t wake;  /* the progress thread sleeps on it; drivers signal going idle */
    ws__records shared;
    /* shared.count, for drivers to peek without the lock: written under lock by any thread,
     * read by drivers deciding whether to release records (a stale value only delays one). */
    _Atomic size_t shared_count;
    unsigned active; /* drivers running */
    unsigned slots;  /* the pool's workers: the most drivers at once */
    ws_mpi_emitter *slot;
    unsigned char *mine, *gathered; /* the rank's result, and every rank's, at the end */
    unsigned long wakes; /* signals on wake so far (under lock), so none is slept through */
};

/* Under rank->lock: the rank holds no record (none shared, no driver running). */
bool ws__mpi_passive_locked(const ws__mpi_rank *rank);
/* Under rank->lock: a worker has nothing to do and nothing is shared. */
bool ws__mpi_hungry_locked(const ws__mpi_rank *rank);
/* Puts n records that arrived from another rank on the shared stack and starts drivers for
 * them. Progress thread. Aborts the job if out of memory. */
void ws__mpi_give(ws__mpi_rank *rank, const void *records, size_t n);
/* Takes up to half the shared records (rounded up, at most steal_max) for a thief into a new
 * buffer *out (NULL when none); returns their number. Progress thread. */
size_t ws__mpi_take_for_thief(ws__mpi_rank *rank, unsigned char **out);
/* Starts drivers while shared records wait and slots are free. Any thread. */
void ws__mpi_start_drivers(ws__mpi_rank *rank);
/* One line on stderr, then abort (or MPI_Abort from the progress thread). */
_Noreturn void ws__mpi_fatal(const char *fn, const char *what);

/* ---- progress.c: the progress thread: steals, the token, messages ---- */

/* Serves the run until termination is detected and every rank has left the protocol. Called
 * on the thread that called ws_mpi_run, after the drivers for the initial records started. */
void ws__mpi_progress(ws__mpi_rank *rank, ws_mpi_stats *stats);

#endif
