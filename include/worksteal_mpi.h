/* worksteal_mpi: work stealing across MPI ranks, one worksteal pool per rank.
 *
 * An optional part of worksteal, built only where MPI is found, in its own library
 * (libworksteal_mpi, pkg-config worksteal_mpi, CMake worksteal::worksteal_mpi). It uses only the
 * public API of worksteal.h; the core library never depends on MPI.
 *
 * It runs computations whose pending work is a set of small fixed-size records. A record
 * function processes one record on a worker of the rank's pool (it may fork and join there:
 * that parallelism stays on the rank) and may emit more records. Each rank works through its own
 * records; a rank that runs dry asks random ranks for work, and a rank asked gives away up to
 * half of the records it has made visible (at most steal_max). The run ends when no rank holds a
 * record and none is in flight (a Dijkstra-Safra token detects it), and the per-rank results
 * are combined with the user's reduction. docs/distributed.md has the protocol, the termination
 * argument and the cost model.
 *
 * Threads. MPI must be initialized with at least MPI_THREAD_FUNNELED. All MPI calls are made by
 * the thread that calls ws_mpi_run, which becomes the rank's progress thread for the run (it
 * sleeps between polls, so an idle rank uses almost no CPU); under MPI_THREAD_FUNNELED that must
 * be the main thread. Workers never call MPI.
 *
 * Errors. ws_mpi_run returns 0 or a positive errno code, the same on every rank. Emitting from a
 * thread other than the one running the record is a contract violation: one line on stderr, then
 * abort. Running out of memory for records that already left another rank, or for the run's
 * bookkeeping once it started, cannot be undone without losing records: one line on stderr,
 * then abort (mpirun then ends the job).
 */
#ifndef WORKSTEAL_MPI_H
#define WORKSTEAL_MPI_H

#include <mpi.h>
#include <worksteal.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(WS_MPI_BUILDING_LIBRARY) && defined(__GNUC__)
#define WS_MPI_API __attribute__((visibility("default")))
#else
#define WS_MPI_API
#endif

#define WS_MPI_MAX_RECORD_SIZE 65536u /* bytes */

/* Where a record function puts the records it makes. Opaque; valid during that call only. */
typedef struct ws_mpi_emitter ws_mpi_emitter;

/* Processes one record (record_size bytes, a private copy) on a worker of the rank's pool; adds
 * its result into acc (acc_size bytes owned by the calling driver) and may emit new records. */
typedef void (*ws_mpi_record_fn)(ws_mpi_emitter *out, const void *record, void *acc, void *ctx);

/* The computation. Every rank passes the same sizes; functions and ctx are the rank's own. */
typedef struct ws_mpi_work {
    size_t record_size;       /* 1..WS_MPI_MAX_RECORD_SIZE, plain bytes (copied between ranks) */
    ws_mpi_record_fn process; /* required */
    size_t acc_size;          /* bytes of a result, at least 1 */
    const void *identity;     /* required: the neutral result every accumulator starts from */
    /* acc = acc + right. Must be associative and commutative: records run in any order, on
     * any rank. Runs on the calling thread, after all records are done. */
    ws_combine_fn combine; /* required */
    void *ctx;             /* passed to process and combine */
    const void *initial;   /* this rank's starting records; any rank may have none */
    size_t initial_count;
} ws_mpi_work;

/* Every field: zero means "default". */
typedef struct ws_mpi_config {
    unsigned chunk;          /* records a worker moves between its private stack and the rank's
                                shared one at a time (default 16) */
    unsigned steal_max;      /* most records one steal reply carries (default 1024) */
    unsigned poll_min_us;    /* the progress thread's shortest sleep between polls (default 20) */
    unsigned poll_max_us;    /* its longest while the rank has work or waits for an answer,
                                reached by doubling while nothing happens (default 250) */
    unsigned delay_max_us;   /* testing: hold every message back a random time in
                                [0, delay_max_us] before it is sent, which reorders messages
                                between two ranks (default 0, or $WS_MPI_DELAY_US) */
    unsigned long long seed; /* of the victim choice; the rank number is mixed in (default 1) */
    unsigned idle_max_us;    /* after 64 failed steal requests in a row, the longest back-off
                                before the next (doubling from poll_max_us) and the longest sleep
                                between polls of the rank without work; before, both are at
                                most poll_max_us (default 50000; at least poll_max_us) */
} ws_mpi_config;

/* One rank's counters for one run. */
typedef struct ws_mpi_stats {
    unsigned long long records;          /* records processed on this rank */
    unsigned long long steal_requests;   /* steal requests this rank sent */
    unsigned long long steals_ok;        /* ... answered with records */
    unsigned long long steals_failed;    /* ... answered with none */
    unsigned long long requests_served;  /* requests from other ranks answered with records */
    unsigned long long requests_refused; /* ... answered with none */
    unsigned long long records_sent;     /* records given to other ranks */
    unsigned long long records_received; /* records taken from other ranks */
    unsigned long long token_passes;     /* termination tokens this rank sent on */
    double steal_wait_s; /* summed time from sending a steal request to its answer */
    double elapsed_s;    /* the run on this rank, from its start to the end of termination */
} ws_mpi_stats;

/* Runs the computation on every rank of comm, collectively: every rank of comm calls it, from
 * the thread that may make MPI calls, outside any worksteal worker. Records run on pool (NULL:
 * the default pool). When it returns, every record reachable from all ranks' initial records has
 * been processed exactly once, and *result (acc_size bytes) holds, on every rank, the combination
 * of all accumulators in rank order. stats (may be NULL) receives this rank's counters.
 * Returns 0, EINVAL (a bad argument or a size mismatch on any rank), or ENOMEM (on any rank,
 * before any record ran): the same code on every rank, and on error nothing ran. It returns
 * EINVAL at once, without communicating, when MPI is below MPI_THREAD_FUNNELED, when the caller
 * is not the main thread under MPI_THREAD_FUNNELED, or when it is a worksteal worker, with one
 * line on stderr naming which. */
WS_MPI_API WS_NODISCARD int ws_mpi_run(MPI_Comm comm, ws_pool *pool, const ws_mpi_work *work,
                                       const ws_mpi_config *config, void *result,
                                       ws_mpi_stats *stats);

/* Adds a record (record_size bytes, copied) to the rank's pending work. Only from the thread
 * running the record function that got out, during that call (not from tasks it forks onto other
 * workers). Returns 0, or ENOMEM (the record was not added). */
WS_MPI_API WS_NODISCARD int ws_mpi_emit(ws_mpi_emitter *out, const void *record);

#ifdef __cplusplus
}
#endif

#endif /* WORKSTEAL_MPI_H */
