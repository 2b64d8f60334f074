/* phases.h: what the phases benchmark shares between its driver (bench_phases.c, which also
 * measures worksteal) and its OpenMP children (phases_omp.c, built once with gcc and libgomp and,
 * where clang and libomp are found, once with clang and libomp).
 *
 * Two programs are measured, each by a child process that runs one (runtime, worker count):
 *   flat  P phases of a flat generator: K tasks of calibrated busy work, then a wait for them
 *   lu    a blocked sparse LU factorisation, a generator loop with a wait per phase
 * The work itself (busy loop, LU kernels, matrix) is compiled once, by the project's compiler,
 * into a library every child links, so that the runtimes differ only in how they run tasks.
 * A child reports one line on stdout (ph_result_print), which the driver parses.
 */
#ifndef WS_BENCH_PHASES_H
#define WS_BENCH_PHASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the flat generator ------------------------------------------------------------------ */

typedef struct ph_shape {
    int tasks;  /* K: tasks per phase */
    int phases; /* P: phases per program run */
    long iters; /* units of busy work per task (ph_busy) */
    int reps;   /* program runs per measurement (short shapes run many to be measurable) */
} ph_shape;

/* One program's data. Task i of a phase adds one to counts[i] (the phases' waits order those
 * writes), so that a run which lost or repeated a task is caught; sink[i] keeps the busy
 * result alive. */
typedef struct ph_flat {
    ph_shape shape;
    long *counts;
    double *sink;
} ph_flat;

/* A dependent chain of iters multiply-adds: work of a calibrated length that no compiler can
 * shorten, and no sleep. */
double ph_busy(long iters);
/* Task i of a phase. Any thread. */
void ph_leaf(ph_flat *f, int i);
/* Allocates f for shape s; false after a message if memory runs out. */
bool ph_flat_init(ph_flat *f, ph_shape s);
void ph_flat_free(ph_flat *f);
/* True if every task ran exactly `phases` times since init; otherwise writes why. */
bool ph_flat_check(const ph_flat *f, long phases, char *why, size_t len);

/* ---- the sparse LU ----------------------------------------------------------------------- */

/* An nb x nb matrix of bs x bs blocks of doubles, row-major; a NULL block is all zeros. Block
 * (i, j) lives at home(i, j) in one slab whether present or not, so that a fill-in needs no
 * allocation while the factorisation runs. */
typedef struct ph_lu {
    int nb, bs;
    double **block; /* nb * nb: the block, or NULL while it is empty */
    double *slab;   /* nb * nb * bs * bs */
} ph_lu;

/* Generates the test matrix (diagonally dominant, so no pivoting is needed; about a third of
 * the off-diagonal blocks present). False after a message if memory runs out. */
bool ph_lu_init(ph_lu *m, int nb, int bs);
void ph_lu_free(ph_lu *m);
/* Block (i, j), or NULL if it is empty. */
double *ph_lu_at(const ph_lu *m, int i, int j);
/* Makes block (i, j) present (its home) for a bmod, and says through *fresh whether it was
 * empty (the bmod then writes rather than updates it). Only the generator calls it. */
double *ph_lu_fill(ph_lu *m, int i, int j, bool *fresh);

/* The four kernels, on bs x bs blocks. */
void ph_lu0(double *diag, int bs);                     /* diag = L U, in place, no pivoting */
void ph_fwd(const double *diag, double *row, int bs);  /* row = L^-1 row */
void ph_bdiv(const double *diag, double *col, int bs); /* col = col U^-1 */
/* c -= a b; or c = -a b if fresh (c was an empty block). */
void ph_bmod(const double *a, const double *b, double *c, int bs, bool fresh);

/* fwd or bdiv of block blk of the panel, by which. */
void ph_panel(const double *diag, double *blk, int bs, bool bdiv);

/* The tasks of phase k of the factorisation, for a generator to walk: first the panel (fwd on
 * each present block of row k, bdiv on each of column k, after the caller's lu0 of the diagonal
 * block), then, once the caller has waited for those, the updates (bmod of each trailing block
 * that a present block of column k and one of row k reach, filled in if empty). Only the
 * generator calls these; the tasks it makes of the steps may run in any order. */
typedef struct ph_lu_step {
    int k, i, j;         /* the phase, and the cursor of the walk */
    int bs;              /* the blocks' order */
    const double *a, *b; /* the task's inputs: the diagonal block (panel); col and row (update) */
    double *c;           /* the block it writes */
    bool bdiv;           /* panel: bdiv (column k) rather than fwd (row k) */
    bool fresh;          /* update: c was empty (ph_bmod's fresh) */
} ph_lu_step;
/* Starts phase k's walk. */
void ph_lu_phase(const ph_lu *m, ph_lu_step *s, int k);
/* The next task of the panel, or of the updates, in *s; false when there is none. */
bool ph_lu_next_panel(const ph_lu *m, ph_lu_step *s);
bool ph_lu_next_update(ph_lu *m, ph_lu_step *s);

/* The whole factorisation on the calling thread. */
void ph_lu_serial(ph_lu *m);
/* True if the factors of m, multiplied back, give the matrix that ph_lu_init made (to 1e-9 of
 * its largest entry). O(n^3) in the matrix's size: for small matrices. */
bool ph_lu_residual_ok(const ph_lu *m, char *why, size_t len);
/* Writes m to path (the reference), or compares m with the one at path: the same blocks
 * present, and no entry differing by more than 1e-9 relative to the largest. False, with why,
 * on a difference or an I/O error. */
bool ph_lu_save(const ph_lu *m, const char *path, char *why, size_t len);
bool ph_lu_compare(const ph_lu *m, const char *path, char *why, size_t len);

/* ---- a child's job and its result --------------------------------------------------------- */

typedef enum { PH_FLAT, PH_LU } ph_program;

typedef struct ph_job {
    ph_program program;
    const char *api; /* which version of the program (the child knows the names it has) */
    unsigned workers;
    ph_shape shape;  /* PH_FLAT */
    int nb, bs;      /* PH_LU */
    const char *ref; /* PH_LU: the serial result's file */
    bool write_ref;  /* PH_LU: write it (the serial child) rather than compare with it */
    bool residual;   /* PH_LU: also check the factors against the matrix (small sizes) */
} ph_job;

typedef struct ph_result {
    double seconds;       /* per program run */
    uint64_t steals;      /* worksteal only: over the timed runs */
    uint64_t idle_max_ns; /* worksteal only: the pool's idle_asking_max_ns over the timed runs */
    bool ok;
} ph_result;

/* How one runtime runs the programs; a child fills this in and calls ph_child_main. */
typedef struct ph_runtime {
    /* Starts `workers` workers (before timing); false if the api is unknown or they fail. */
    bool (*start)(const char *api, unsigned workers);
    /* After the warm-up, before timing: worksteal starts a fresh pool, whose statistics are then
     * the timed runs' alone. May be NULL. */
    void (*restart)(void);
    void (*run_flat)(ph_flat *f);
    void (*run_lu)(ph_lu *m);
    /* Fills in the statistics of the timed runs, and stops. */
    void (*stop)(ph_result *r);
} ph_runtime;

/* Parses a child's arguments (what ph_job_args writes); false after a message. */
bool ph_job_parse(int argc, char **argv, ph_job *job);
/* Writes job as arguments into argv (at most 24 entries, strings in buf), NULL-terminated. */
void ph_job_args(const ph_job *job, const char **argv, char *buf, size_t len);
/* A child's life: prepares the program's data, warms up, times, checks, prints the result line.
 * Returns the exit status. */
int ph_child_main(const ph_job *job, const ph_runtime *rt);
/* The result line's prefix, and its parser (false if line is not one). */
#define PH_RESULT_TAG "phases-result"
bool ph_result_parse(const char *line, ph_result *r);

/* Monotonic seconds. */
double ph_now(void);

#endif /* WS_BENCH_PHASES_H */
