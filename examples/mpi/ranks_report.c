/* ranks_report.c: the MPI examples' shared start-up, options and per-rank table. */
#include "ranks_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ex_mpi_start(int *argc, char ***argv)
{
    int provided;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    if (provided < MPI_THREAD_FUNNELED) {
        fprintf(stderr, "MPI offers thread level %d, below MPI_THREAD_FUNNELED\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static bool parse_unsigned(const char *s, unsigned *out)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*s == '\0' || *end != '\0' || s[0] == '-' || v > 1000000000ul)
        return false;
    *out = (unsigned)v;
    return true;
}

/* The value after a valued option; aborts the job if it is missing or not a number. */
static unsigned option_value(int argc, char **argv, int *i)
{
    unsigned v = 0;
    if (*i + 1 >= argc || !parse_unsigned(argv[*i + 1], &v)) {
        fprintf(stderr, "%s needs a number\n", argv[*i]);
        exit(2);
    }
    ++*i;
    return v;
}

bool ex_parse_common(ex_options *o, int argc, char **argv, int *i)
{
    const char *opt = argv[*i];
    if (strcmp(opt, "--check") == 0)
        o->check = true;
    else if (strcmp(opt, "--quiet") == 0)
        o->quiet = true;
    else if (strcmp(opt, "--workers") == 0)
        o->workers = option_value(argc, argv, i);
    else if (strcmp(opt, "--reps") == 0)
        o->reps = (int)option_value(argc, argv, i);
    else if (strcmp(opt, "--delay-us") == 0)
        o->config.delay_max_us = option_value(argc, argv, i);
    else if (strcmp(opt, "--chunk") == 0)
        o->config.chunk = option_value(argc, argv, i);
    else if (strcmp(opt, "--steal-max") == 0)
        o->config.steal_max = option_value(argc, argv, i);
    else if (strcmp(opt, "--poll-max-us") == 0)
        o->config.poll_max_us = option_value(argc, argv, i);
    else
        return false;
    return true;
}

const char *ex_common_usage(void)
{
    return "[--workers N] [--reps R] [--check] [--quiet] [--delay-us D] [--chunk C] "
           "[--steal-max S] [--poll-max-us U]";
}

double ex_report_ranks(const ws_mpi_stats *mine, const char *records_name, bool print)
{
    int me, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    ws_mpi_stats *all = me == 0 ? malloc((size_t)ranks * sizeof(*all)) : NULL;
    if (me == 0 && !all)
        MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Gather(mine, (int)sizeof(*mine), MPI_BYTE, all, (int)sizeof(*mine), MPI_BYTE, 0,
               MPI_COMM_WORLD);
    double longest = 0;
    if (me == 0) {
        if (print)
            printf("%5s %12s %9s %9s %9s %9s %9s %9s %11s %8s\n", "rank", records_name, "requests",
                   "stolen", "failed", "received", "served", "refused", "steal rtt", "time");
        for (int r = 0; r < ranks; r++) {
            const ws_mpi_stats *s = &all[r];
            double answered = (double)(s->steals_ok + s->steals_failed);
            if (print)
                printf("%5d %12llu %9llu %9llu %9llu %9llu %9llu %9llu %9.1fus %7.3fs\n", r,
                       s->records, s->steal_requests, s->steals_ok, s->steals_failed,
                       s->records_received, s->requests_served, s->requests_refused,
                       answered > 0 ? 1e6 * s->steal_wait_s / answered : 0.0, s->elapsed_s);
            if (s->elapsed_s > longest)
                longest = s->elapsed_s;
        }
        free(all);
    }
    MPI_Bcast(&longest, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return longest;
}

int ex_idle_ranks(const ws_mpi_stats *mine)
{
    int idle = mine->records == 0, total;
    MPI_Allreduce(&idle, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return total;
}
