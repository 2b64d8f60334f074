/* phases_common.c: the work of the phases benchmark (busy loop, sparse LU kernels and matrix)
 * and a child's life (arguments, warm-up, timing, checks, the result line). phases.h has the
 * overview. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "phases.h"

#include "mix64.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double ph_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the flat generator ------------------------------------------------------------------ */

double ph_busy(long iters)
{
    double a = 1.0;
    for (long k = 0; k < iters; k++)
        a = a * 0.9999999 + 1.0;
    return a;
}

void ph_leaf(ph_flat *f, int i)
{
    f->sink[i] += ph_busy(f->shape.iters);
    f->counts[i]++;
}

bool ph_flat_init(ph_flat *f, ph_shape s)
{
    f->shape = s;
    f->counts = calloc((size_t)s.tasks, sizeof(long));
    f->sink = calloc((size_t)s.tasks, sizeof(double));
    if (f->counts == NULL || f->sink == NULL) {
        fprintf(stderr, "bench_phases: out of memory for %d tasks\n", s.tasks);
        ph_flat_free(f);
        return false;
    }
    return true;
}

void ph_flat_free(ph_flat *f)
{
    free(f->counts);
    free(f->sink);
    f->counts = NULL;
    f->sink = NULL;
}

bool ph_flat_check(const ph_flat *f, long phases, char *why, size_t len)
{
    for (int i = 0; i < f->shape.tasks; i++)
        if (f->counts[i] != phases) {
            snprintf(why, len, "task %d ran %ld times, not %ld", i, f->counts[i], phases);
            return false;
        }
    return true;
}

/* ---- the sparse LU ----------------------------------------------------------------------- */

static double *home(const ph_lu *m, int i, int j)
{
    return m->slab + ((size_t)i * (size_t)m->nb + (size_t)j) * (size_t)m->bs * (size_t)m->bs;
}

/* Whether block (i, j) of the matrix as generated is present: the diagonal and its two
 * neighbours, and a third of the rest, scattered. */
static bool present_at_start(int nb, int i, int j)
{
    if (i == j || i == j + 1 || j == i + 1)
        return true;
    return wb_mix64((uint64_t)i * (uint64_t)nb + (uint64_t)j + 0x5eed) % 3 == 0;
}

/* Entry (r, c) of block (i, j) as generated: in [-1, 1], and n on the diagonal, which makes
 * every row diagonally dominant (n is the matrix's order). */
static double entry_at_start(const ph_lu *m, int i, int j, int r, int c)
{
    uint64_t at = (((uint64_t)i * (uint64_t)m->nb + (uint64_t)j) * (uint64_t)m->bs + (uint64_t)r) *
                      (uint64_t)m->bs +
                  (uint64_t)c;
    double v = (double)(wb_mix64(at) % 2001) / 1000.0 - 1.0;
    if (i == j && r == c)
        v += (double)m->nb * (double)m->bs;
    return v;
}

bool ph_lu_init(ph_lu *m, int nb, int bs)
{
    m->nb = nb;
    m->bs = bs;
    m->block = calloc((size_t)nb * (size_t)nb, sizeof(double *));
    m->slab = malloc((size_t)nb * (size_t)nb * (size_t)bs * (size_t)bs * sizeof(double));
    if (m->block == NULL || m->slab == NULL) {
        fprintf(stderr, "bench_phases: out of memory for a %dx%d matrix of %dx%d blocks\n", nb, nb,
                bs, bs);
        ph_lu_free(m);
        return false;
    }
    for (int i = 0; i < nb; i++)
        for (int j = 0; j < nb; j++) {
            double *b = home(m, i, j);
            /* Empty blocks are written too, so that no fill-in meets a fresh page while timed. */
            memset(b, 0, (size_t)bs * (size_t)bs * sizeof(double));
            if (!present_at_start(nb, i, j))
                continue;
            m->block[i * nb + j] = b;
            for (int r = 0; r < bs; r++)
                for (int c = 0; c < bs; c++)
                    b[r * bs + c] = entry_at_start(m, i, j, r, c);
        }
    return true;
}

void ph_lu_free(ph_lu *m)
{
    free(m->block);
    free(m->slab);
    m->block = NULL;
    m->slab = NULL;
}

double *ph_lu_at(const ph_lu *m, int i, int j)
{
    return m->block[i * m->nb + j];
}

double *ph_lu_fill(ph_lu *m, int i, int j, bool *fresh)
{
    double **slot = &m->block[i * m->nb + j];
    *fresh = *slot == NULL;
    if (*fresh)
        *slot = home(m, i, j);
    return *slot;
}

void ph_lu0(double *diag, int bs)
{
    for (int k = 0; k < bs; k++) {
        const double *pivot_row = diag + k * bs;
        for (int i = k + 1; i < bs; i++) {
            double *row = diag + i * bs;
            double l = row[k] / pivot_row[k];
            row[k] = l;
            for (int j = k + 1; j < bs; j++)
                row[j] -= l * pivot_row[j];
        }
    }
}

void ph_fwd(const double *diag, double *row, int bs)
{
    for (int k = 0; k < bs; k++)
        for (int i = k + 1; i < bs; i++) {
            double l = diag[i * bs + k];
            for (int j = 0; j < bs; j++)
                row[i * bs + j] -= l * row[k * bs + j];
        }
}

void ph_bdiv(const double *diag, double *col, int bs)
{
    for (int i = 0; i < bs; i++) {
        double *row = col + i * bs;
        for (int k = 0; k < bs; k++) {
            double u = row[k] / diag[k * bs + k];
            row[k] = u;
            for (int j = k + 1; j < bs; j++)
                row[j] -= u * diag[k * bs + j];
        }
    }
}

void ph_bmod(const double *a, const double *b, double *c, int bs, bool fresh)
{
    if (fresh)
        memset(c, 0, (size_t)bs * (size_t)bs * sizeof(double));
    for (int i = 0; i < bs; i++)
        for (int k = 0; k < bs; k++) {
            double l = a[i * bs + k];
            for (int j = 0; j < bs; j++)
                c[i * bs + j] -= l * b[k * bs + j];
        }
}

void ph_panel(const double *diag, double *blk, int bs, bool bdiv)
{
    if (bdiv)
        ph_bdiv(diag, blk, bs);
    else
        ph_fwd(diag, blk, bs);
}

void ph_lu_phase(const ph_lu *m, ph_lu_step *s, int k)
{
    *s = (ph_lu_step){k, k + 1, k, m->bs, NULL, NULL, NULL, false, false};
}

/* The panel's cursor: j runs along row k (fwd), then i down column k (bdiv). */
bool ph_lu_next_panel(const ph_lu *m, ph_lu_step *s)
{
    s->a = ph_lu_at(m, s->k, s->k);
    while (++s->j < m->nb)
        if ((s->c = ph_lu_at(m, s->k, s->j)) != NULL)
            return true;
    s->bdiv = true;
    for (; s->i < m->nb; s->i++)
        if ((s->c = ph_lu_at(m, s->i, s->k)) != NULL) {
            s->i++;
            return true;
        }
    /* Leaves the cursor where the updates start. */
    s->i = s->k + 1;
    s->j = s->k;
    return false;
}

/* The updates' cursor: (i, j) over the trailing blocks, row by row. */
bool ph_lu_next_update(ph_lu *m, ph_lu_step *s)
{
    for (; s->i < m->nb; s->i++, s->j = s->k) {
        if ((s->a = ph_lu_at(m, s->i, s->k)) == NULL)
            continue;
        while (++s->j < m->nb)
            if ((s->b = ph_lu_at(m, s->k, s->j)) != NULL) {
                s->c = ph_lu_fill(m, s->i, s->j, &s->fresh);
                return true;
            }
    }
    return false;
}

void ph_lu_serial(ph_lu *m)
{
    for (int k = 0; k < m->nb; k++) {
        ph_lu_step s;
        ph_lu_phase(m, &s, k);
        ph_lu0(ph_lu_at(m, k, k), m->bs);
        while (ph_lu_next_panel(m, &s))
            ph_panel(s.a, s.c, m->bs, s.bdiv);
        while (ph_lu_next_update(m, &s))
            ph_bmod(s.a, s.b, s.c, m->bs, s.fresh);
    }
}

/* Entry (r, c) of the whole factored matrix (0 where the block is empty). */
static double factor_at(const ph_lu *m, int r, int c)
{
    const double *b = ph_lu_at(m, r / m->bs, c / m->bs);
    return b == NULL ? 0.0 : b[(r % m->bs) * m->bs + c % m->bs];
}

bool ph_lu_residual_ok(const ph_lu *m, char *why, size_t len)
{
    const int n = m->nb * m->bs;
    double largest = 0, worst = 0;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++) {
            /* (L U)(r, c): L is unit lower triangular, U upper; both are stored in m. */
            int last = r < c ? r : c;
            double sum = r <= c ? factor_at(m, r, c) : 0.0;
            for (int k = 0; k < last; k++)
                sum += factor_at(m, r, k) * factor_at(m, k, c);
            if (r > c)
                sum += factor_at(m, r, c) * factor_at(m, c, c);
            int i = r / m->bs, j = c / m->bs;
            double want =
                present_at_start(m->nb, i, j) ? entry_at_start(m, i, j, r % m->bs, c % m->bs) : 0.0;
            largest = fmax(largest, fabs(want));
            worst = fmax(worst, fabs(sum - want));
        }
    if (worst <= 1e-9 * largest)
        return true;
    snprintf(why, len, "L U differs from the matrix by %g (largest entry %g)", worst, largest);
    return false;
}

/* The reference file: nb and bs, a byte per block (present or not), then the present blocks'
 * entries in row-major block order. */
bool ph_lu_save(const ph_lu *m, const char *path, char *why, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        snprintf(why, len, "cannot write %s", path);
        return false;
    }
    const size_t nblocks = (size_t)m->nb * (size_t)m->nb, bsq = (size_t)m->bs * (size_t)m->bs;
    int dims[2] = {m->nb, m->bs};
    bool ok = fwrite(dims, sizeof dims, 1, f) == 1;
    for (size_t b = 0; b < nblocks && ok; b++) {
        unsigned char there = m->block[b] != NULL;
        ok = fwrite(&there, 1, 1, f) == 1;
    }
    for (size_t b = 0; b < nblocks && ok; b++)
        if (m->block[b] != NULL)
            ok = fwrite(m->block[b], sizeof(double), bsq, f) == bsq;
    ok &= fclose(f) == 0;
    if (!ok)
        snprintf(why, len, "cannot write %s", path);
    return ok;
}

bool ph_lu_compare(const ph_lu *m, const char *path, char *why, size_t len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(why, len, "no reference at %s (the serial run failed?)", path);
        return false;
    }
    const size_t nblocks = (size_t)m->nb * (size_t)m->nb, bsq = (size_t)m->bs * (size_t)m->bs;
    int dims[2];
    unsigned char *there = malloc(nblocks);
    double *want = malloc(bsq * sizeof(double));
    bool ok = there != NULL && want != NULL && fread(dims, sizeof dims, 1, f) == 1 &&
              dims[0] == m->nb && dims[1] == m->bs && fread(there, 1, nblocks, f) == nblocks;
    if (!ok)
        snprintf(why, len, "unreadable reference %s", path);
    double largest = 0, worst = 0;
    for (size_t b = 0; b < nblocks && ok; b++) {
        if ((m->block[b] != NULL) != (there[b] != 0)) {
            snprintf(why, len, "block %zu,%zu is %s here but not in the serial result",
                     b / (size_t)m->nb, b % (size_t)m->nb, there[b] ? "empty" : "present");
            ok = false;
        } else if (there[b]) {
            ok = fread(want, sizeof(double), bsq, f) == bsq;
            for (size_t e = 0; e < bsq && ok; e++) {
                largest = fmax(largest, fabs(want[e]));
                worst = fmax(worst, fabs(m->block[b][e] - want[e]));
            }
            if (!ok)
                snprintf(why, len, "short reference %s", path);
        }
    }
    fclose(f);
    free(there);
    free(want);
    if (ok && !(worst <= 1e-9 * largest)) {
        snprintf(why, len, "differs from the serial result by %g (largest entry %g)", worst,
                 largest);
        ok = false;
    }
    return ok;
}

/* ---- a child's job and its result --------------------------------------------------------- */

/* The value after option argv[i], as a positive int; 0 if absent or not positive. */
static long positive(int argc, char **argv, int i)
{
    if (i + 1 >= argc)
        return 0;
    long v = strtol(argv[i + 1], NULL, 10);
    return v > 0 ? v : 0;
}

bool ph_job_parse(int argc, char **argv, ph_job *job)
{
    memset(job, 0, sizeof *job);
    job->api = "";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(a, "--child") == 0)
            continue;
        if (strcmp(a, "--write-ref") == 0) {
            job->write_ref = true;
            continue;
        }
        if (strcmp(a, "--residual") == 0) {
            job->residual = true;
            continue;
        }
        if (!has_value) {
            fprintf(stderr, "bench_phases child: %s wants a value\n", a);
            return false;
        }
        if (strcmp(a, "--program") == 0)
            job->program = strcmp(argv[i + 1], "lu") == 0 ? PH_LU : PH_FLAT;
        else if (strcmp(a, "--api") == 0)
            job->api = argv[i + 1];
        else if (strcmp(a, "--ref") == 0)
            job->ref = argv[i + 1];
        else if (strcmp(a, "--workers") == 0)
            job->workers = (unsigned)positive(argc, argv, i);
        else if (strcmp(a, "--tasks") == 0)
            job->shape.tasks = (int)positive(argc, argv, i);
        else if (strcmp(a, "--phases") == 0)
            job->shape.phases = (int)positive(argc, argv, i);
        else if (strcmp(a, "--iters") == 0)
            job->shape.iters = positive(argc, argv, i);
        else if (strcmp(a, "--reps") == 0)
            job->shape.reps = (int)positive(argc, argv, i);
        else if (strcmp(a, "--nb") == 0)
            job->nb = (int)positive(argc, argv, i);
        else if (strcmp(a, "--bs") == 0)
            job->bs = (int)positive(argc, argv, i);
        else {
            fprintf(stderr, "bench_phases child: unknown option %s\n", a);
            return false;
        }
        i++;
    }
    bool flat_ok = job->shape.tasks > 0 && job->shape.phases > 0 && job->shape.reps > 0;
    bool lu_ok = job->nb > 0 && job->bs > 0 && job->ref != NULL;
    if (job->workers == 0 || !(job->program == PH_FLAT ? flat_ok : lu_ok)) {
        fprintf(stderr, "bench_phases child: incomplete job\n");
        return false;
    }
    return true;
}

void ph_job_args(const ph_job *job, const char **argv, char *buf, size_t len)
{
    int n = 0;
    argv[n++] = "--child";
    argv[n++] = "--program";
    argv[n++] = job->program == PH_LU ? "lu" : "flat";
    argv[n++] = "--api";
    argv[n++] = job->api;
    /* Each number goes into buf, and its option with it. */
    long values[7];
    const char *names[7];
    int nv = 0;
    names[nv] = "--workers", values[nv++] = (long)job->workers;
    if (job->program == PH_FLAT) {
        names[nv] = "--tasks", values[nv++] = job->shape.tasks;
        names[nv] = "--phases", values[nv++] = job->shape.phases;
        names[nv] = "--iters", values[nv++] = job->shape.iters;
        names[nv] = "--reps", values[nv++] = job->shape.reps;
    } else {
        names[nv] = "--nb", values[nv++] = job->nb;
        names[nv] = "--bs", values[nv++] = job->bs;
        argv[n++] = "--ref";
        argv[n++] = job->ref;
        if (job->write_ref)
            argv[n++] = "--write-ref";
        if (job->residual)
            argv[n++] = "--residual";
    }
    for (int v = 0; v < nv; v++) {
        int w = snprintf(buf, len, "%ld", values[v]);
        if (w < 0 || (size_t)w >= len)
            break;
        argv[n++] = names[v];
        argv[n++] = buf;
        buf += w + 1;
        len -= (size_t)w + 1;
    }
    argv[n] = NULL;
}

/* The flat program: a one-phase warm-up (threads started, code and data paged in), then
 * shape.reps timed runs. */
static bool child_flat(const ph_job *job, const ph_runtime *rt, ph_result *r)
{
    ph_flat f;
    if (!ph_flat_init(&f, job->shape))
        return false;
    f.shape.phases = 1;
    rt->run_flat(&f);
    f.shape.phases = job->shape.phases;
    if (rt->restart)
        rt->restart();
    double t0 = ph_now();
    for (int rep = 0; rep < job->shape.reps; rep++)
        rt->run_flat(&f);
    r->seconds = (ph_now() - t0) / job->shape.reps;
    char why[160];
    bool ok = ph_flat_check(&f, 1 + (long)job->shape.phases * job->shape.reps, why, sizeof why);
    if (!ok)
        fprintf(stderr, "bench_phases: flat program, %s: WRONG: %s\n", job->api, why);
    ph_flat_free(&f);
    return ok;
}

/* The LU: one timed factorisation (the matrix is made before), then its checks. */
static bool child_lu(const ph_job *job, const ph_runtime *rt, ph_result *r)
{
    ph_lu m;
    if (!ph_lu_init(&m, job->nb, job->bs))
        return false;
    if (rt->restart)
        rt->restart();
    double t0 = ph_now();
    rt->run_lu(&m);
    r->seconds = ph_now() - t0;
    char why[200];
    bool ok = job->write_ref ? ph_lu_save(&m, job->ref, why, sizeof why)
                             : ph_lu_compare(&m, job->ref, why, sizeof why);
    if (ok && job->residual)
        ok = ph_lu_residual_ok(&m, why, sizeof why);
    if (!ok)
        fprintf(stderr, "bench_phases: sparse LU, %s on %u workers: WRONG: %s\n", job->api,
                job->workers, why);
    ph_lu_free(&m);
    return ok;
}

int ph_child_main(const ph_job *job, const ph_runtime *rt)
{
    if (!rt->start(job->api, job->workers)) {
        fprintf(stderr, "bench_phases: cannot start %s on %u workers\n", job->api, job->workers);
        return 2;
    }
    ph_result r = {0, 0, 0, false};
    r.ok = job->program == PH_FLAT ? child_flat(job, rt, &r) : child_lu(job, rt, &r);
    rt->stop(&r);
    printf("%s ok=%d seconds=%.9g steals=%" PRIu64 " idle_max_ns=%" PRIu64 "\n", PH_RESULT_TAG,
           r.ok, r.seconds, r.steals, r.idle_max_ns);
    fflush(stdout);
    return r.ok ? 0 : 1;
}

bool ph_result_parse(const char *line, ph_result *r)
{
    int ok = 0;
    uint64_t steals = 0, idle = 0;
    if (sscanf(line, PH_RESULT_TAG " ok=%d seconds=%lf steals=%" SCNu64 " idle_max_ns=%" SCNu64,
               &ok, &r->seconds, &steals, &idle) != 4)
        return false;
    r->ok = ok != 0;
    r->steals = steals;
    r->idle_max_ns = idle;
    return true;
}
