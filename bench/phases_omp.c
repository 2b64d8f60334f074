/* phases_omp.c: the phases benchmark's programs as OpenMP tasks, written as OpenMP users write
 * them: a parallel region, one generator thread (single), a loop of tasks and a taskwait per
 * phase. Built twice (bench/phases.cmake): with gcc against libgomp, and with clang against
 * libomp where both are found. Run by bench_phases as a child: bench_phases_gomp --child ...
 * (phases.h has the protocol). Each OpenMP runtime keeps its default idle policy. */
#include "phases.h"

#include <omp.h>
#include <stdio.h>
#include <string.h>

static int threads;

static bool omp_start(const char *api, unsigned workers)
{
    threads = (int)workers;
    return strcmp(api, "omp") == 0;
}

static void omp_run_flat(ph_flat *f)
{
    const int tasks = f->shape.tasks, phases = f->shape.phases;
#pragma omp parallel num_threads(threads)
#pragma omp single
    for (int p = 0; p < phases; p++) {
        for (int i = 0; i < tasks; i++) {
#pragma omp task firstprivate(i)
            ph_leaf(f, i);
        }
#pragma omp taskwait
    }
}

static void omp_run_lu(ph_lu *m)
{
    const int nb = m->nb, bs = m->bs;
#pragma omp parallel num_threads(threads)
#pragma omp single
    for (int k = 0; k < nb; k++) {
        ph_lu_step s;
        ph_lu_phase(m, &s, k);
        ph_lu0(ph_lu_at(m, k, k), bs);
        while (ph_lu_next_panel(m, &s)) {
#pragma omp task firstprivate(s)
            ph_panel(s.a, s.c, bs, s.bdiv);
        }
#pragma omp taskwait
        while (ph_lu_next_update(m, &s)) {
#pragma omp task firstprivate(s)
            ph_bmod(s.a, s.b, s.c, bs, s.fresh);
        }
#pragma omp taskwait
    }
}

static void omp_stop(ph_result *r)
{
    (void)r; /* OpenMP has no steal counts to report */
}

int main(int argc, char **argv)
{
    ph_job job;
    if (!ph_job_parse(argc, argv, &job))
        return 2;
    static const ph_runtime rt = {omp_start, NULL, omp_run_flat, omp_run_lu, omp_stop};
    return ph_child_main(&job, &rt);
}
