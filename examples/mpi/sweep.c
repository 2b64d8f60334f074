/* sweep.c (ws-mpi-sweep): a parameter sweep with irregular cost over MPI ranks, the second
 * worksteal_mpi workload, which is not a tree search.
 *
 * The parameters are the rows of a Mandelbrot image; a row's cost is the escape-time iterations
 * of its pixels, from a few per pixel outside the set to max_iter inside, so rows through the
 * set cost hundreds of times more than rows above it. Each rank starts with an equal band of
 * rows (one record per band); a record holding more than one row splits into two halves, so a
 * band sits on the stack as ever smaller ranges that other ranks can take; a one-row record
 * is computed with a parallel reduction over its pixels on the rank's pool, the fork-join part.
 * The bands in the middle of the image are the costly ones, so the outer ranks run dry first
 * and steal. The answer (total iterations and a row-weighted checksum) is checked against a
 * serial computation with --check.
 *
 *   mpirun -np 4 ws-mpi-sweep --rows 1024 --cols 1024 --max-iter 1000 --workers 1 --check
 */
#include "ranks_report.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sweep {
    unsigned rows, cols, max_iter;
} sweep;

typedef struct rows {
    uint32_t lo, hi; /* [lo, hi) */
} rows;

typedef struct answer {
    uint64_t iterations; /* over all pixels */
    uint64_t checksum;   /* sum over rows of (row + 1) * the row's iterations */
    uint64_t rows;       /* rows computed */
} answer;

static unsigned escape_time(const sweep *s, unsigned row, size_t col)
{
    double cr = -2.0 + 2.5 * (double)col / s->cols;
    double ci = -1.25 + 2.5 * (double)row / s->rows;
    double zr = 0, zi = 0;
    unsigned k = 0;
    while (k < s->max_iter && zr * zr + zi * zi <= 4.0) {
        double t = zr * zr - zi * zi + cr;
        zi = 2 * zr * zi + ci;
        zr = t;
        k++;
    }
    return k;
}

typedef struct row_job {
    const sweep *s;
    unsigned row;
} row_job;

static void fold_pixels(size_t begin, size_t end, void *acc, void *ctx)
{
    const row_job *j = ctx;
    uint64_t *sum = acc;
    for (size_t col = begin; col < end; col++)
        *sum += escape_time(j->s, j->row, col);
}

static void add_u64(void *acc, const void *right, void *ctx)
{
    (void)ctx;
    *(uint64_t *)acc += *(const uint64_t *)right;
}

static uint64_t row_iterations(const sweep *s, unsigned row)
{
    row_job job = {s, row};
    uint64_t zero = 0, sum = 0;
    if (ws_parallel_reduce(0, s->cols, 64, sizeof(sum), &zero, fold_pixels, add_u64, &job, &sum) !=
        0) {
        fprintf(stderr, "ws-mpi-sweep: ws_parallel_reduce failed\n");
        abort();
    }
    return sum;
}

static void emit_or_die(ws_mpi_emitter *out, const rows *r)
{
    if (ws_mpi_emit(out, r) != 0) {
        fprintf(stderr, "ws-mpi-sweep: out of memory for pending rows\n");
        abort();
    }
}

static void process_rows(ws_mpi_emitter *out, const void *record, void *acc, void *ctx)
{
    const sweep *s = ctx;
    rows r;
    memcpy(&r, record, sizeof(r));
    if (r.hi - r.lo > 1) {
        uint32_t mid = r.lo + (r.hi - r.lo) / 2;
        emit_or_die(out, &(rows){mid, r.hi});
        emit_or_die(out, &(rows){r.lo, mid});
        return;
    }
    answer *a = acc;
    uint64_t it = row_iterations(s, r.lo);
    a->iterations += it;
    a->checksum += (uint64_t)(r.lo + 1) * it;
    a->rows++;
}

static void add_answers(void *acc, const void *right, void *ctx)
{
    (void)ctx;
    answer *a = acc;
    const answer *b = right;
    a->iterations += b->iterations;
    a->checksum += b->checksum;
    a->rows += b->rows;
}

static answer serial_answer(const sweep *s)
{
    answer a = {0};
    for (unsigned row = 0; row < s->rows; row++) {
        uint64_t it = 0;
        for (size_t col = 0; col < s->cols; col++)
            it += escape_time(s, row, col);
        a.iterations += it;
        a.checksum += (uint64_t)(row + 1) * it;
        a.rows++;
    }
    return a;
}

static int usage(void)
{
    fprintf(stderr, "usage: ws-mpi-sweep [--rows R] [--cols C] [--max-iter K] %s\n",
            ex_common_usage());
    return 2;
}

static bool parse_size(const char *s, unsigned *out)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*s == '\0' || *end != '\0' || s[0] == '-' || v == 0 || v > 1000000ul)
        return false;
    *out = (unsigned)v;
    return true;
}

int main(int argc, char **argv)
{
    sweep s = {512, 512, 1000};
    ex_options o = {.reps = 1};
    for (int i = 1; i < argc; i++) {
        unsigned *field = strcmp(argv[i], "--rows") == 0       ? &s.rows
                          : strcmp(argv[i], "--cols") == 0     ? &s.cols
                          : strcmp(argv[i], "--max-iter") == 0 ? &s.max_iter
                                                               : NULL;
        if (field) {
            if (i + 1 >= argc || !parse_size(argv[++i], field))
                return usage();
        } else if (!ex_parse_common(&o, argc, argv, &i)) {
            return usage();
        }
    }
    ex_mpi_start(&argc, &argv);
    int me, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    answer want = {0};
    if (o.check)
        want = serial_answer(&s);

    ws_pool *pool;
    ws_config cfg = {.workers = o.workers};
    if (ws_pool_create(&pool, &cfg) != 0) {
        fprintf(stderr, "ws-mpi-sweep: cannot create a pool\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    /* An equal band of rows per rank: equal in rows, not in cost. */
    rows band = {(uint32_t)((uint64_t)s.rows * (unsigned)me / (unsigned)ranks),
                 (uint32_t)((uint64_t)s.rows * (unsigned)(me + 1) / (unsigned)ranks)};
    answer zero = {0};
    ws_mpi_work work = {
        .record_size = sizeof(rows),
        .process = process_rows,
        .acc_size = sizeof(answer),
        .identity = &zero,
        .combine = add_answers,
        .ctx = &s,
        .initial = &band,
        .initial_count = band.hi > band.lo,
    };
    if (me == 0)
        printf("sweep: %u x %u Mandelbrot rows, at most %u iterations a pixel, over %d ranks x "
               "%u workers\n",
               s.rows, s.cols, s.max_iter, ranks, ws_pool_workers(pool));
    int failures = 0;
    for (int rep = 0; rep < o.reps; rep++) {
        answer got;
        ws_mpi_stats stats;
        int err = ws_mpi_run(MPI_COMM_WORLD, pool, &work, &o.config, &got, &stats);
        if (err) {
            if (me == 0)
                fprintf(stderr, "ws-mpi-sweep: ws_mpi_run: %s\n", ws_strerror(err));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        bool print = !o.quiet && (rep == 0 || rep == o.reps - 1);
        double t = ex_report_ranks(&stats, "records", print);
        bool ok = !o.check || (got.iterations == want.iterations && got.checksum == want.checksum &&
                               got.rows == want.rows);
        failures += !ok;
        if (me == 0 && (print || !ok))
            printf("run %d: %llu rows, %llu iterations, checksum %016llx in %.3f s %s\n", rep + 1,
                   (unsigned long long)got.rows, (unsigned long long)got.iterations,
                   (unsigned long long)got.checksum, t,
                   !o.check ? ""
                   : ok     ? "(matches the serial sweep)"
                            : "WRONG");
    }
    if (me == 0 && o.reps > 1)
        printf("%d of %d runs right\n", o.reps - failures, o.reps);
    ws_pool_destroy(pool);
    MPI_Finalize();
    return o.check && failures ? 1 : 0;
}
