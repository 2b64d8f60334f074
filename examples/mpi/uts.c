/* uts.c (ws-mpi-uts): Unbalanced Tree Search over MPI ranks with worksteal_mpi.
 *
 * Rank 0 starts with the root of a UTS tree (T1, T3 of the benchmark's sample set, or a small
 * test tree); every other rank starts with nothing and gets its share by stealing. A record is a
 * node (its 20-byte SHA-1 state and its height); processing it counts it and emits its children.
 * Prints the tree's node, leaf and depth counts (checked against the published ones with
 * --check), and per rank the nodes processed, steals and time.
 *
 *   mpirun -np 4 ws-mpi-uts --tree T1 --workers 1 --check
 *   ws-mpi-uts --tree T3 --profile      (no MPI run: work and span of the tree as fork-join)
 */
#include "ranks_report.h"
#include "uts_tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void process_node(ws_mpi_emitter *out, const void *record, void *acc, void *ctx)
{
    const uts_params *p = ctx;
    uts_node node;
    memcpy(&node, record, sizeof(node));
    int kids = uts_children(p, &node);
    uts_count_node(acc, &node, kids);
    for (int i = 0; i < kids; i++) {
        uts_node child = uts_child(&node, i);
        if (ws_mpi_emit(out, &child) != 0) {
            fprintf(stderr, "ws-mpi-uts: out of memory for pending nodes\n");
            abort();
        }
    }
}

static void add_counts(void *acc, const void *right, void *ctx)
{
    (void)ctx;
    uts_count_add(acc, right);
}

/* ---- --profile: the same tree as fork-join on one pool, under the work/span profiler ---- */

typedef struct subtree {
    const uts_params *p;
    uts_node node;
    uts_count count;
} subtree;

static void count_subtree(void *arg)
{
    subtree *s = arg;
    int kids = uts_children(s->p, &s->node);
    s->count = (uts_count){0};
    uts_count_node(&s->count, &s->node, kids);
    if (kids == 0)
        return;
    subtree *child = malloc((size_t)kids * sizeof(*child));
    ws_task *task = malloc((size_t)kids * sizeof(*task));
    if (!child || !task) {
        fprintf(stderr, "ws-mpi-uts: out of memory\n");
        abort();
    }
    for (int i = 0; i < kids; i++) {
        child[i] = (subtree){s->p, uts_child(&s->node, i), {0}};
        ws_spawn(&task[i], count_subtree, &child[i]);
    }
    for (int i = kids - 1; i >= 0; i--) {
        ws_sync(&task[i]);
        uts_count_add(&s->count, &child[i].count);
    }
    free(child);
    free(task);
}

static int profile(const uts_params *p, unsigned workers)
{
    ws_pool *pool;
    ws_config cfg = {.workers = workers};
    if (ws_pool_create(&pool, &cfg) != 0) {
        fprintf(stderr, "ws-mpi-uts: cannot create a pool\n");
        return 1;
    }
    subtree root = {p, uts_root(p), {0}};
    ws_profile prof;
    int err = ws_pool_profile(pool, count_subtree, &root, &prof);
    ws_pool_destroy(pool);
    if (err) {
        fprintf(stderr, "ws-mpi-uts: ws_pool_profile: %s\n", ws_strerror(err));
        return 1;
    }
    printf("tree %s: %llu nodes, work %.3f s (%.0f ns a node), span %.6f s, parallelism %.0f, "
           "burdened span %.6f s\n",
           p->name, (unsigned long long)root.count.nodes, prof.work_s,
           1e9 * prof.work_s / (double)root.count.nodes, prof.span_s, prof.parallelism,
           prof.burdened_span_s);
    return uts_count_matches(p, &root.count) ? 0 : 1;
}

/* ---- the distributed run ---- */

static int usage(void)
{
    fprintf(stderr, "usage: ws-mpi-uts [--tree NAME] [--profile] %s\n  trees: %s\n",
            ex_common_usage(), uts_names());
    return 2;
}

int main(int argc, char **argv)
{
    const uts_params *p = uts_find("T1");
    ex_options o = {.reps = 1};
    bool want_profile = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--tree") == 0 && i + 1 < argc) {
            p = uts_find(argv[++i]);
            if (!p)
                return usage();
        } else if (strcmp(argv[i], "--profile") == 0) {
            want_profile = true;
        } else if (!ex_parse_common(&o, argc, argv, &i)) {
            return usage();
        }
    }
    if (want_profile)
        return profile(p, o.workers);

    ex_mpi_start(&argc, &argv);
    int me, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);

    uts_count want = {p->nodes, p->leaves, p->depth};
    if (p->nodes == 0 && !uts_count_serial(p, &want)) {
        fprintf(stderr, "ws-mpi-uts: out of memory for the reference count\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    ws_pool *pool;
    ws_config cfg = {.workers = o.workers};
    if (ws_pool_create(&pool, &cfg) != 0) {
        fprintf(stderr, "ws-mpi-uts: cannot create a pool\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    uts_node root = uts_root(p);
    uts_count zero = {0};
    ws_mpi_work work = {
        .record_size = sizeof(uts_node),
        .process = process_node,
        .acc_size = sizeof(uts_count),
        .identity = &zero,
        .combine = add_counts,
        .ctx = (void *)p,
        .initial = &root,
        .initial_count = me == 0, /* the other ranks start with nothing */
    };
    if (me == 0)
        printf("UTS %s over %d ranks x %u workers: want %llu nodes, %llu leaves, depth %llu\n",
               p->name, ranks, ws_pool_workers(pool), (unsigned long long)want.nodes,
               (unsigned long long)want.leaves, (unsigned long long)want.depth);
    int failures = 0;
    for (int rep = 0; rep < o.reps; rep++) {
        uts_count got;
        ws_mpi_stats stats;
        int err = ws_mpi_run(MPI_COMM_WORLD, pool, &work, &o.config, &got, &stats);
        if (err) {
            if (me == 0)
                fprintf(stderr, "ws-mpi-uts: ws_mpi_run: %s\n", ws_strerror(err));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        bool print = !o.quiet && (rep == 0 || rep == o.reps - 1);
        double t = ex_report_ranks(&stats, "nodes", print);
        bool ok = got.nodes == want.nodes && got.leaves == want.leaves && got.depth == want.depth;
        failures += !ok;
        if (me == 0 && (print || !ok))
            printf("run %d: %llu nodes, %llu leaves, depth %llu in %.3f s (%.2f M nodes/s) %s\n",
                   rep + 1, (unsigned long long)got.nodes, (unsigned long long)got.leaves,
                   (unsigned long long)got.depth, t, (double)got.nodes / t * 1e-6,
                   ok ? "(exact)" : "WRONG");
    }
    if (me == 0 && o.reps > 1)
        printf("%d of %d runs exact\n", o.reps - failures, o.reps);
    ws_pool_destroy(pool);
    MPI_Finalize();
    return o.check && failures ? 1 : 0;
}
