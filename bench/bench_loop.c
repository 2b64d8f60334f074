/* bench_loop.c: parallel loops and reductions against serial code and OpenMP.
 *
 * Three workloads:
 *   sum  sum of sqrt(i) for i < N (ws_parallel_reduce against OpenMP reduction(+))
 *   map  y[i] = f(x[i]) over an array of N doubles (ws_parallel_for)
 *   tri  a triangular loop: iteration i costs i units (ws_parallel_for)
 *   heavy  100 iterations of a few milliseconds each (ws_parallel_for)
 * Each is run serially, with OpenMP `parallel for` schedule(static) and schedule(dynamic,C), with
 * worksteal's automatic grain, and with a sweep of explicit grains (powers of 4), at each worker
 * count of --workers. The table gives the median time and the speedup over serial; the summary
 * compares automatic grain with the best grain of the sweep and with OpenMP static.
 *
 * Isolation: every (workload, variant, worker count) is measured in a child process of its own,
 * forked by a parent that never starts a thread. So OpenMP's spinning idle threads and
 * worksteal's idle workers never share the machine with the other runtime's measurement, and
 * each runtime keeps its default idle policy.
 *
 * Usage: bench_loop [--quick] [--workers 1,2,...] [--reps N] [--workloads sum,map,tri,heavy]
 */
#include "worksteal.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- workloads ---------------------------------------------------------------------------- */

typedef enum { SERIAL, OMP_STATIC, OMP_DYNAMIC, WS } runtime;

typedef struct variant {
    runtime rt;
    size_t grain; /* WS: 0 = automatic */
} variant;

typedef struct workload {
    const char *key;
    const char *title;
    size_t n, quick_n;
    int omp_chunk;    /* the chunk of schedule(dynamic, C) */
    double tolerance; /* relative difference allowed between a checksum and the serial one */
} workload;

static const workload workloads[] = {
    {"sum", "sum of sqrt(i), i < N (reduce)", 100000000, 1000000, 1024, 1e-9},
    {"map", "y[i] = sqrt(x[i]) * 0.5 + x[i] over N doubles (for)", 20000000, 200000, 1024, 0},
    {"tri", "triangular: iteration i costs i units, N iterations (for)", 20000, 2000, 1, 0},
    {"heavy", "N heavy iterations of equal cost (for)", 100, 100, 1, 0},
};
enum { NWORKLOADS = sizeof(workloads) / sizeof(workloads[0]) };

typedef struct state {
    const workload *w;
    size_t n;
    double *x, *y;
    double result; /* the checksum of the last run */
} state;

/* sum ---------------------------------------------------------------------------------------- */

static void sum_fold(size_t begin, size_t end, void *acc, void *ctx)
{
    (void)ctx;
    double s = *(double *)acc;
    for (size_t i = begin; i < end; i++)
        s += sqrt((double)i);
    *(double *)acc = s;
}

static void sum_combine(void *acc, const void *right, void *ctx)
{
    (void)ctx;
    *(double *)acc += *(const double *)right;
}

/* map ---------------------------------------------------------------------------------------- */

static void map_body(size_t begin, size_t end, void *ctx)
{
    state *s = ctx;
    const double *x = s->x;
    double *y = s->y;
    for (size_t i = begin; i < end; i++)
        y[i] = sqrt(x[i]) * 0.5 + x[i];
}

/* tri ---------------------------------------------------------------------------------------- */

/* i units of a dependent chain of multiply-adds: the cost of iteration i is proportional to i. */
static double tri_item(size_t i)
{
    double a = (double)i;
    for (size_t k = 0; k < i; k++)
        a = a * 0.9999999 + 1.0;
    return a;
}

static void tri_body(size_t begin, size_t end, void *ctx)
{
    state *s = ctx;
    for (size_t i = begin; i < end; i++)
        s->y[i] = tri_item(i);
}

/* heavy -------------------------------------------------------------------------------------- */

static size_t heavy_units = 2000000; /* --quick: 20000 */

static double heavy_item(size_t i)
{
    double a = (double)i;
    for (size_t k = 0; k < heavy_units; k++)
        a = a * 0.9999999 + 1.0;
    return a;
}

static void heavy_body(size_t begin, size_t end, void *ctx)
{
    state *s = ctx;
    for (size_t i = begin; i < end; i++)
        s->y[i] = heavy_item(i);
}

static double array_checksum(const double *y, size_t n)
{
    double c = 0;
    for (size_t i = 0; i < n; i++)
        c += y[i] * (double)(i % 7 + 1);
    return c;
}

/* One run, dispatched on the runtime. ---------------------------------------------------------- */

typedef struct ws_run_arg {
    state *s;
    size_t grain;
} ws_run_arg;

static void ws_run(void *arg)
{
    ws_run_arg *a = arg;
    state *s = a->s;
    if (s->w->key[0] == 's') {
        double zero = 0.0, sum = 0.0;
        if (ws_parallel_reduce(0, s->n, a->grain, sizeof(double), &zero, sum_fold, sum_combine,
                               NULL, &sum) != 0)
            sum = NAN;
        s->result = sum;
    } else {
        const char kind = s->w->key[0];
        ws_parallel_for(0, s->n, a->grain,
                        kind == 'm'   ? map_body
                        : kind == 't' ? tri_body
                                      : heavy_body,
                        s);
    }
}

/* Each OpenMP and serial loop sits in a function of its own, so that no variant's code is
 * shaped by another's (a reduction variable whose address OpenMP takes, for instance, would
 * otherwise live in memory in the serial loop too). */
static double sum_serial(size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += sqrt((double)i);
    return sum;
}

static double sum_omp_static(size_t n, int nt)
{
    double sum = 0.0;
#pragma omp parallel for num_threads(nt) schedule(static) reduction(+ : sum)
    for (size_t i = 0; i < n; i++)
        sum += sqrt((double)i);
    return sum;
}

static double sum_omp_dynamic(size_t n, int nt, int chunk)
{
    double sum = 0.0;
#pragma omp parallel for num_threads(nt) schedule(dynamic, chunk) reduction(+ : sum)
    for (size_t i = 0; i < n; i++)
        sum += sqrt((double)i);
    return sum;
}

static void map_serial(const double *x, double *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = sqrt(x[i]) * 0.5 + x[i];
}

static void map_omp_static(const double *x, double *y, size_t n, int nt)
{
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t i = 0; i < n; i++)
        y[i] = sqrt(x[i]) * 0.5 + x[i];
}

static void map_omp_dynamic(const double *x, double *y, size_t n, int nt, int chunk)
{
#pragma omp parallel for num_threads(nt) schedule(dynamic, chunk)
    for (size_t i = 0; i < n; i++)
        y[i] = sqrt(x[i]) * 0.5 + x[i];
}

static void tri_serial(double *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = tri_item(i);
}

static void tri_omp_static(double *y, size_t n, int nt)
{
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t i = 0; i < n; i++)
        y[i] = tri_item(i);
}

static void tri_omp_dynamic(double *y, size_t n, int nt, int chunk)
{
#pragma omp parallel for num_threads(nt) schedule(dynamic, chunk)
    for (size_t i = 0; i < n; i++)
        y[i] = tri_item(i);
}

static void heavy_serial(double *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = heavy_item(i);
}

static void heavy_omp_static(double *y, size_t n, int nt)
{
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t i = 0; i < n; i++)
        y[i] = heavy_item(i);
}

static void heavy_omp_dynamic(double *y, size_t n, int nt, int chunk)
{
#pragma omp parallel for num_threads(nt) schedule(dynamic, chunk)
    for (size_t i = 0; i < n; i++)
        y[i] = heavy_item(i);
}

static void run_once(state *s, variant v, unsigned workers, ws_pool *pool)
{
    const size_t n = s->n;
    const int chunk = s->w->omp_chunk;
    const int nt = (int)workers;
    const char kind = s->w->key[0];
    if (v.rt == WS) {
        ws_run_arg a = {s, v.grain};
        if (ws_pool_run(pool, ws_run, &a) != 0) {
            fprintf(stderr, "bench_loop: ws_pool_run failed\n");
            exit(1);
        }
    } else if (kind == 's') {
        s->result = v.rt == SERIAL       ? sum_serial(n)
                    : v.rt == OMP_STATIC ? sum_omp_static(n, nt)
                                         : sum_omp_dynamic(n, nt, chunk);
    } else if (kind == 'm') {
        if (v.rt == SERIAL)
            map_serial(s->x, s->y, n);
        else if (v.rt == OMP_STATIC)
            map_omp_static(s->x, s->y, n, nt);
        else
            map_omp_dynamic(s->x, s->y, n, nt, chunk);
    } else if (kind == 'h') {
        if (v.rt == SERIAL)
            heavy_serial(s->y, n);
        else if (v.rt == OMP_STATIC)
            heavy_omp_static(s->y, n, nt);
        else
            heavy_omp_dynamic(s->y, n, nt, chunk);
    } else {
        if (v.rt == SERIAL)
            tri_serial(s->y, n);
        else if (v.rt == OMP_STATIC)
            tri_omp_static(s->y, n, nt);
        else
            tri_omp_dynamic(s->y, n, nt, chunk);
    }
    if (kind != 's')
        s->result = array_checksum(s->y, n);
}

/* ---- measurement, one child process per variant ------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct measurement {
    double median_s;
    double checksum;
    int ok;
} measurement;

/* In the child: set up, one warm-up run, then `reps` timed runs. */
static measurement measure_here(const workload *w, size_t n, variant v, unsigned workers, int reps)
{
    measurement m = {0, 0, 0};
    state s = {w, n, NULL, NULL, 0};
    s.x = malloc(n * sizeof(double));
    s.y = malloc(n * sizeof(double));
    if (s.x == NULL || s.y == NULL)
        return m;
    for (size_t i = 0; i < n; i++) {
        s.x[i] = (double)i * 1e-3;
        s.y[i] = 0;
    }
    ws_pool *pool = NULL;
    if (v.rt == WS) {
        ws_config cfg = {0};
        cfg.workers = workers;
        if (ws_pool_create(&pool, &cfg) != 0)
            return m;
    }
    double times[64];
    if (reps > 64)
        reps = 64;
    run_once(&s, v, workers, pool);
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        run_once(&s, v, workers, pool);
        times[r] = now_s() - t0;
    }
    qsort(times, (size_t)reps, sizeof(double), cmp_double);
    m.median_s = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
    m.checksum = s.result;
    m.ok = 1;
    ws_pool_destroy(pool);
    free(s.x);
    free(s.y);
    return m;
}

static measurement measure(const workload *w, size_t n, variant v, unsigned workers, int reps)
{
    measurement m = {0, 0, 0};
    int fds[2];
    if (pipe(fds) != 0)
        return m;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return m;
    if (pid == 0) {
        close(fds[0]);
        m = measure_here(w, n, v, workers, reps);
        ssize_t wr = write(fds[1], &m, sizeof(m));
        _exit(wr == (ssize_t)sizeof(m) ? 0 : 1);
    }
    close(fds[1]);
    if (read(fds[0], &m, sizeof(m)) != (ssize_t)sizeof(m))
        m.ok = 0;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        m.ok = 0;
    return m;
}

/* ---- the table ---------------------------------------------------------------------------- */

enum { MAX_WORKER_COUNTS = 8, MAX_GRAINS = 16 };

static bool checksum_ok(const workload *w, double got, double want)
{
    if (w->tolerance == 0)
        return got == want;
    return fabs(got - want) <= w->tolerance * fabs(want);
}

static void print_row(const char *name, const measurement *ms, int nw, double serial_s)
{
    printf("  %-22s", name);
    for (int k = 0; k < nw; k++) {
        if (!ms[k].ok)
            printf(" | %10s %7s", "-", "");
        else
            printf(" | %10.2f %6.2fx", ms[k].median_s * 1e3, serial_s / ms[k].median_s);
    }
    printf("\n");
}

/* True if key is one of the comma-separated names in list. */
static bool listed(const char *list, const char *key)
{
    size_t len = strlen(key);
    for (const char *p = list; p != NULL; p = strchr(p, ',')) {
        if (*p == ',')
            p++;
        if (strncmp(p, key, len) == 0 && (p[len] == ',' || p[len] == '\0'))
            return true;
    }
    return false;
}

static const char *verdict(bool met)
{
    return met ? "met" : "MISSED";
}

int main(int argc, char **argv)
{
    bool quick = false;
    int reps = 0;
    unsigned counts[MAX_WORKER_COUNTS] = {1, 2};
    int nw = 2;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            quick = true;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--workloads") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc) {
            nw = 0;
            for (char *tok = strtok(argv[++i], ","); tok != NULL && nw < MAX_WORKER_COUNTS;
                 tok = strtok(NULL, ","))
                counts[nw++] = (unsigned)atoi(tok);
        } else {
            fprintf(stderr,
                    "usage: %s [--quick] [--workers 1,2,...] [--reps N] [--workloads a,b]\n",
                    argv[0]);
            return 2;
        }
    }
    for (int k = 0; k < nw; k++)
        if (counts[k] == 0 || counts[k] > WS_MAX_WORKERS) {
            fprintf(stderr, "bench_loop: bad worker count\n");
            return 2;
        }
    if (reps <= 0)
        reps = quick ? 3 : 7;
    if (quick)
        heavy_units /= 100;

    printf("bench_loop: median of %d runs after one warm-up; each variant in its own process; "
           "%ld online CPUs\n",
           reps, sysconf(_SC_NPROCESSORS_ONLN));
    printf("columns: median ms and speedup over serial, per worker count\n");
    bool all_checks = true;

    for (int wi = 0; wi < NWORKLOADS; wi++) {
        const workload *w = &workloads[wi];
        if (only != NULL && !listed(only, w->key))
            continue;
        size_t n = quick ? w->quick_n : w->n;
        printf("\n%s, N = %zu\n  %-22s", w->title, n, "variant");
        for (int k = 0; k < nw; k++)
            printf(" | %7s P=%-3u", "", counts[k]);
        printf("\n");

        measurement serial = measure(w, n, (variant){SERIAL, 0}, 1, reps);
        if (!serial.ok) {
            printf("  serial run failed\n");
            all_checks = false;
            continue;
        }
        measurement row[MAX_WORKER_COUNTS];
        for (int k = 0; k < nw; k++)
            row[k] = serial;
        print_row("serial", row, nw, serial.median_s);

        measurement omp_static[MAX_WORKER_COUNTS], omp_dyn[MAX_WORKER_COUNTS];
        measurement autog[MAX_WORKER_COUNTS];
        for (int k = 0; k < nw; k++) {
            omp_static[k] = measure(w, n, (variant){OMP_STATIC, 0}, counts[k], reps);
            omp_dyn[k] = measure(w, n, (variant){OMP_DYNAMIC, 0}, counts[k], reps);
            autog[k] = measure(w, n, (variant){WS, 0}, counts[k], reps);
        }
        char name[64];
        print_row("omp static", omp_static, nw, serial.median_s);
        snprintf(name, sizeof(name), "omp dynamic,%d", w->omp_chunk);
        print_row(name, omp_dyn, nw, serial.median_s);
        print_row("ws automatic grain", autog, nw, serial.median_s);

        /* The sweep: powers of 4 below N, skipping grains that would make more than 2^24
         * leaves (a spawn each: minutes of overhead that no one would choose). */
        size_t grains[MAX_GRAINS];
        int ng = 0;
        for (size_t g = 1; g < n && ng < MAX_GRAINS; g *= 4)
            if (n / g <= ((size_t)1 << 24))
                grains[ng++] = g;
        measurement sweep[MAX_GRAINS][MAX_WORKER_COUNTS];
        for (int gi = 0; gi < ng; gi++) {
            for (int k = 0; k < nw; k++)
                sweep[gi][k] = measure(w, n, (variant){WS, grains[gi]}, counts[k], reps);
            snprintf(name, sizeof(name), "ws grain %zu", grains[gi]);
            print_row(name, sweep[gi], nw, serial.median_s);
        }

        /* Checks: every variant computed the serial answer. */
        for (int k = 0; k < nw; k++) {
            const measurement *all[3 + MAX_GRAINS] = {&omp_static[k], &omp_dyn[k], &autog[k]};
            for (int gi = 0; gi < ng; gi++)
                all[3 + gi] = &sweep[gi][k];
            for (int j = 0; j < 3 + ng; j++)
                if (!all[j]->ok || !checksum_ok(w, all[j]->checksum, serial.checksum)) {
                    printf("  CHECK FAILED: variant %d at P=%u (checksum %.17g, serial %.17g)\n", j,
                           counts[k], all[j]->checksum, serial.checksum);
                    all_checks = false;
                }
        }

        /* Summary per worker count. */
        for (int k = 0; k < nw; k++) {
            int best = 0;
            for (int gi = 1; gi < ng; gi++)
                if (sweep[gi][k].median_s < sweep[best][k].median_s)
                    best = gi;
            double vs_best = autog[k].median_s / sweep[best][k].median_s;
            double vs_static = autog[k].median_s / omp_static[k].median_s;
            printf("  P=%u: automatic / best grain (%zu) = %.3f [<= 1.10: %s]; "
                   "automatic / omp static = %.3f",
                   counts[k], grains[best], vs_best, verdict(vs_best <= 1.10), vs_static);
            if (w->key[0] == 't')
                printf(" [< 1: %s]\n", verdict(vs_static < 1.0));
            else
                printf(" [<= 1.10: %s]\n", verdict(vs_static <= 1.10));
        }
    }
    printf("\n%s\n", all_checks ? "all results match the serial ones"
                                : "SOME RESULTS DO NOT MATCH THE SERIAL ONES");
    return all_checks ? 0 : 1;
}
