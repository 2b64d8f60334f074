/* ranks_report.h: what the MPI examples share: starting MPI for worksteal_mpi, the common
 * options, and a per-rank table of a run's counters printed by rank 0. */
#ifndef WS_EXAMPLE_RANKS_REPORT_H
#define WS_EXAMPLE_RANKS_REPORT_H

#include <stdbool.h>
#include <worksteal_mpi.h>

typedef struct ex_options {
    unsigned workers;     /* per rank; 0: the pool default */
    int reps;             /* runs */
    bool check;           /* exit 1 unless every run's answer is right */
    bool quiet;           /* no per-rank table */
    ws_mpi_config config; /* from --delay-us, --chunk, --steal-max, --poll-max-us */
} ex_options;

/* MPI_Init_thread with MPI_THREAD_FUNNELED; exits if MPI offers less. */
void ex_mpi_start(int *argc, char ***argv);
/* Parses a common option at argv[*i] (moving *i past its value); false if it is not one. */
bool ex_parse_common(ex_options *o, int argc, char **argv, int *i);
const char *ex_common_usage(void);
/* Rank 0 prints one line per rank (records, steals, time); collective. Returns the largest
 * elapsed time over the ranks, on every rank. */
double ex_report_ranks(const ws_mpi_stats *mine, const char *records_name, bool print);
/* The ranks that processed no record (collective); 0 when every rank did some work. */
int ex_idle_ranks(const ws_mpi_stats *mine);

#endif
