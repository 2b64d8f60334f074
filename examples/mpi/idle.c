/* idle.c: what ranks with nothing to do cost while another works.
 *
 *   mpirun -np N ws-mpi-idle [--seconds S]      (default 3)
 *
 * Rank 0 starts with one record, which sleeps S seconds; every other rank starts with none, so
 * for S seconds they are idle: their progress threads ask for work, are refused, and answer each
 * other's requests. Each rank reports the CPU time its process used during the run (every
 * thread: the progress thread, and a worker that parks), as a share of a core, with its steal
 * counters.
 */
#include <worksteal_mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static void sleep_record(ws_mpi_emitter *out, const void *record, void *acc, void *ctx)
{
    (void)out;
    (void)acc;
    double seconds;
    memcpy(&seconds, record, sizeof seconds);
    (void)ctx;
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void combine_nothing(void *acc, const void *right, void *ctx)
{
    (void)acc;
    (void)right;
    (void)ctx;
}

static double process_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

int main(int argc, char **argv)
{
    double seconds = 3;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            seconds = atof(argv[++i]);
        } else {
            fprintf(stderr, "usage: ws-mpi-idle [--seconds S]\n");
            return 2;
        }
    }
    int provided, me, ranks;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    ws_pool *pool;
    if (ws_pool_create(&pool, &(ws_config){.workers = 1}) != 0) {
        fprintf(stderr, "ws-mpi-idle: cannot create a pool\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char none = 0, result;
    ws_mpi_work work = {.record_size = sizeof seconds,
                        .process = sleep_record,
                        .acc_size = 1,
                        .identity = &none,
                        .combine = combine_nothing,
                        .initial = &seconds,
                        .initial_count = me == 0 ? 1 : 0};
    ws_mpi_stats st;
    MPI_Barrier(MPI_COMM_WORLD);
    double cpu0 = process_cpu_s();
    int err = ws_mpi_run(MPI_COMM_WORLD, pool, &work, NULL, &result, &st);
    double cpu = process_cpu_s() - cpu0;
    if (err != 0) {
        fprintf(stderr, "ws-mpi-idle: ws_mpi_run: %s\n", ws_strerror(err));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double row[6] = {cpu,
                     st.elapsed_s,
                     (double)st.steal_requests,
                     (double)st.steals_failed,
                     (double)st.requests_refused,
                     (double)st.token_passes};
    double *all = me == 0 ? malloc(sizeof row * (size_t)ranks) : NULL;
    MPI_Gather(row, 6, MPI_DOUBLE, all, 6, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (me == 0) {
        printf("rank  CPU s   run s   CPU %%  requests sent (failed /s)  refused  token passes\n");
        for (int r = 0; r < ranks; r++) {
            const double *v = &all[6 * r];
            printf("%4d  %6.3f  %6.3f  %5.2f  %8.0f (%6.0f /s)  %8.0f  %6.0f\n", r, v[0], v[1],
                   100 * v[0] / v[1], v[2], v[3] / v[1], v[4], v[5]);
        }
        free(all);
    }
    ws_pool_destroy(pool);
    MPI_Finalize();
    return 0;
}
