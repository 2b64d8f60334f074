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
 *                   [--sweep-step K]   (explicit grains 1, K, K^2, ...; default 4)
 */
#include "verdict.h"
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

/* ---- measurement: one child process per run ------------------------------------------------ */

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
    double seconds;
    double checksum;
    int ok;
} measurement;

/* In the child: set up (untimed), warm up on the first sixteenth of the range (threads started,
 * code and data paged in), then one timed run over the whole range. */
static measurement measure_here(const workload *w, size_t n, variant v, unsigned workers)
{
    measurement m = {0, 0, 0};
    state s = {w, n, NULL, NULL, 0};
    if (w->key[0] != 's') { /* the sum reads no array */
        s.x = malloc(n * sizeof(double));
        s.y = malloc(n * sizeof(double));
        if (s.x == NULL || s.y == NULL)
            return m;
        for (size_t i = 0; i < n; i++) {
            s.x[i] = (double)i * 1e-3;
            s.y[i] = 0;
        }
    }
    ws_pool *pool = NULL;
    if (v.rt == WS) {
        ws_config cfg = {0};
        cfg.workers = workers;
        if (ws_pool_create(&pool, &cfg) != 0)
            return m;
    }
    s.n = n / 16 > 0 ? n / 16 : 1;
    run_once(&s, v, workers, pool);
    s.n = n;
    double t0 = now_s();
    run_once(&s, v, workers, pool);
    m.seconds = now_s() - t0;
    m.checksum = s.result;
    m.ok = 1;
    ws_pool_destroy(pool);
    free(s.x);
    free(s.y);
    return m;
}

static measurement measure(const workload *w, size_t n, variant v, unsigned workers)
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
        m = measure_here(w, n, v, workers);
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

enum { MAX_WORKER_COUNTS = 8, MAX_GRAINS = 16, MAX_REPS = 64, FIXED_VARIANTS = 3 };

/* One variant at one worker count, and its runs. */
typedef struct cell {
    variant v;
    unsigned workers;
    double times[MAX_REPS];
    int runs;
    double median_s;
    double checksum;
    bool ok;
} cell;

static bool checksum_ok(const workload *w, double got, double want)
{
    if (w->tolerance == 0)
        return got == want;
    return fabs(got - want) <= w->tolerance * fabs(want);
}

static void print_row(const char *name, cell *const *cells, int nw, double serial_s)
{
    printf("  %-20s", name);
    for (int k = 0; k < nw; k++) {
        if (!cells[k]->ok)
            printf(" | %9s %7s", "-", "");
        else
            printf(" | %9.1f %6.2fx", cells[k]->median_s * 1e3, serial_s / cells[k]->median_s);
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

static double load_average(void)
{
    double load = -1;
    return getloadavg(&load, 1) == 1 ? load : -1;
}

/* The explicit grains tried: 1, then multiplied by this (--sweep-step; the demo uses 16). */
static size_t sweep_step = 4;

/* Measures every variant of workload w at every worker count, `reps` times, interleaved (one
 * run of each cell in turn, then again), so that a change in the machine's load during the
 * benchmark hits every variant alike. Prints the table and the summary; false if a result
 * disagreed with the serial one. */
static bool bench_workload(const workload *w, bool quick, const unsigned *counts, int nw, int reps)
{
    size_t n = quick ? w->quick_n : w->n;
    /* The sweep: powers of 4 below N, skipping grains that would make more than 2^24 leaves
     * (a spawn each: minutes of overhead that no one would choose). */
    size_t grains[MAX_GRAINS];
    int ng = 0;
    for (size_t g = 1; g < n && ng < MAX_GRAINS; g *= sweep_step)
        if (n / g <= ((size_t)1 << 24))
            grains[ng++] = g;

    /* cells[0]: serial; then per worker count: omp static, omp dynamic, automatic, sweep. */
    const int per_count = FIXED_VARIANTS + ng;
    const int ncells = 1 + nw * per_count;
    cell *cells = calloc((size_t)ncells, sizeof(cell));
    if (cells == NULL)
        return false;
    cells[0].v = (variant){SERIAL, 0};
    cells[0].workers = 1;
    for (int k = 0; k < nw; k++) {
        cell *c = &cells[1 + k * per_count];
        c[0].v = (variant){OMP_STATIC, 0};
        c[1].v = (variant){OMP_DYNAMIC, 0};
        c[2].v = (variant){WS, 0};
        for (int gi = 0; gi < ng; gi++)
            c[FIXED_VARIANTS + gi].v = (variant){WS, grains[gi]};
        for (int j = 0; j < per_count; j++)
            c[j].workers = counts[k];
    }

    double load_before = load_average();
    bool checks = true;
    for (int i = 0; i < ncells; i++)
        cells[i].ok = true;
    wb_cpu_sample cpu0 = wb_cpu_sample_now(); /* other programs' share: verdict.h's rule */
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < ncells; i++) {
            measurement m = measure(w, n, cells[i].v, cells[i].workers);
            if (!m.ok) {
                cells[i].ok = false;
                continue;
            }
            cells[i].times[cells[i].runs++] = m.seconds;
            cells[i].checksum = m.checksum;
        }
    wb_others others = {0, 0};
    wb_others_add(&others, cpu0, wb_cpu_sample_now());
    double others_share = wb_others_share(&others);
    for (int i = 0; i < ncells; i++) {
        cell *c = &cells[i];
        if (c->runs != reps)
            c->ok = false;
        if (!c->ok)
            continue;
        qsort(c->times, (size_t)c->runs, sizeof(double), cmp_double);
        c->median_s = c->runs % 2 ? c->times[c->runs / 2]
                                  : 0.5 * (c->times[c->runs / 2 - 1] + c->times[c->runs / 2]);
        if (i > 0 && !checksum_ok(w, c->checksum, cells[0].checksum)) {
            printf("  CHECK FAILED: cell %d (P=%u) checksum %.17g, serial %.17g\n", i, c->workers,
                   c->checksum, cells[0].checksum);
            checks = false;
        }
    }
    if (!cells[0].ok) {
        printf("\n%s: the serial run failed\n", w->title);
        free(cells);
        return false;
    }

    char share[32] = "unknown";
    if (others_share >= 0)
        snprintf(share, sizeof share, "%.0f%%", 100 * others_share);
    printf("\n%s, N = %zu (load average %.1f before, %.1f after; other programs used %s of the "
           "CPUs)\n  %-20s",
           w->title, n, load_before, load_average(), share, "variant");
    for (int k = 0; k < nw; k++)
        printf(" | %10s P=%-4u", "", counts[k]);
    printf("\n");
    double serial_s = cells[0].median_s;
    cell *row[MAX_WORKER_COUNTS];
    for (int k = 0; k < nw; k++)
        row[k] = &cells[0];
    print_row("serial", row, nw, serial_s);
    char name[64];
    for (int j = 0; j < per_count; j++) {
        for (int k = 0; k < nw; k++)
            row[k] = &cells[1 + k * per_count + j];
        if (j == 0)
            snprintf(name, sizeof(name), "omp static");
        else if (j == 1)
            snprintf(name, sizeof(name), "omp dynamic,%d", w->omp_chunk);
        else if (j == 2)
            snprintf(name, sizeof(name), "ws automatic grain");
        else
            snprintf(name, sizeof(name), "ws grain %zu", grains[j - FIXED_VARIANTS]);
        print_row(name, row, nw, serial_s);
    }

    for (int k = 0; k < nw; k++) {
        cell *c = &cells[1 + k * per_count];
        int best = -1;
        for (int gi = 0; gi < ng; gi++)
            if (c[FIXED_VARIANTS + gi].ok &&
                (best < 0 || c[FIXED_VARIANTS + gi].median_s < c[FIXED_VARIANTS + best].median_s))
                best = gi;
        if (best < 0 || !c[0].ok || !c[2].ok)
            continue;
        double vs_best = c[2].median_s / c[FIXED_VARIANTS + best].median_s;
        double vs_static = c[2].median_s / c[0].median_s;
        char v1[128], v2[128];
        printf("  P=%u: automatic / best grain (%zu) = %.3f [<= 1.10: %s]; automatic / omp static "
               "= %.3f",
               counts[k], grains[best], vs_best,
               wb_verdict(vs_best <= 1.10, others_share, quick, false, v1, sizeof v1), vs_static);
        if (w->key[0] == 't' && counts[k] > 1)
            printf(" [< 1: %s]\n",
                   wb_verdict(vs_static < 1.0, others_share, quick, false, v2, sizeof v2));
        else
            printf(" [<= 1.10: %s]\n",
                   wb_verdict(vs_static <= 1.10, others_share, quick, false, v2, sizeof v2));
    }
    fflush(stdout);
    free(cells);
    return checks;
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
        } else if (strcmp(argv[i], "--sweep-step") == 0 && i + 1 < argc) {
            long step = atol(argv[++i]);
            if (step < 2 || step > 1024) {
                fprintf(stderr, "bench_loop: --sweep-step wants 2..1024\n");
                return 2;
            }
            sweep_step = (size_t)step;
        } else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc) {
            nw = 0;
            for (char *tok = strtok(argv[++i], ","); tok != NULL && nw < MAX_WORKER_COUNTS;
                 tok = strtok(NULL, ","))
                counts[nw++] = (unsigned)atoi(tok);
        } else {
            fprintf(stderr,
                    "usage: %s [--quick] [--workers 1,2,...] [--reps N] [--workloads a,b] "
                    "[--sweep-step K]\n",
                    argv[0]);
            return 2;
        }
    }
    if (nw == 0)
        nw = 1;
    for (int k = 0; k < nw; k++)
        if (counts[k] == 0 || counts[k] > WS_MAX_WORKERS) {
            fprintf(stderr, "bench_loop: bad worker count\n");
            return 2;
        }
    if (reps <= 0)
        reps = quick ? 3 : 7;
    if (reps > MAX_REPS)
        reps = MAX_REPS;
    if (quick)
        heavy_units /= 100;

    printf("bench_loop: median of %d runs; every run in a process of its own, after a warm-up "
           "on 1/16 of the range; runs of all variants interleaved; %ld online CPUs\n",
           reps, sysconf(_SC_NPROCESSORS_ONLN));
    printf("columns: median ms and speedup over serial, per worker count P; rows: serial (the\n"
           "  plain loop), omp static and omp dynamic,C (OpenMP's parallel for with that\n"
           "  schedule), ws automatic grain (ws_parallel_for with grain 0: ranges split on\n"
           "  demand), ws grain N (a fixed grain); under each table, worksteal's automatic grain\n"
           "  against the best fixed one and against omp static, with a verdict only when other\n"
           "  programs used at most %.0f%% of the CPUs (as every section of ws-bench)\n",
           100 * WB_DISTURBED);
    bool all_checks = true;
    for (int wi = 0; wi < NWORKLOADS; wi++)
        if (only == NULL || listed(only, workloads[wi].key))
            all_checks &= bench_workload(&workloads[wi], quick, counts, nw, reps);
    printf("\n%s\n", all_checks ? "all results match the serial ones"
                                : "SOME RESULTS DO NOT MATCH THE SERIAL ONES");
    return all_checks ? 0 : 1;
}
