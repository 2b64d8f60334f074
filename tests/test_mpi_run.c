/* test_mpi_run.c: ws_mpi_run under mpirun (tests/mpi.cmake runs it on 2 and 4 ranks, with and
 * without random message delays).
 *
 * usage: test_mpi_run REPS
 * Each case runs REPS times:
 *   tree      a binary tree of ids started on rank 0 alone: every id processed exactly once
 *             (count and a hash sum), the per-rank counters add up;
 *   chain     each record emits one child: a serial chain handed between ranks;
 *   everyone  every rank starts with its own records, none emits;
 *   empty     no rank has any record: the run ends at once with the identity;
 *   spread    rank 0 starts with every record, and every record waits until every rank has
 *             processed one, so the test passes only if each rank that started with nothing got
 *             work (no clock is involved: a rank that never gets work makes it time out). With
 *             a chunk of 1, a waiting driver holds no record back: all but the ones running stay
 *             shared, so a thief always finds some while a rank still waits;
 *   errors    bad arguments and size mismatches fail with EINVAL on every rank, a call from
 *             a worker fails at once, and a run after them works;
 *   idle      rank 0 starts with one record that sleeps IDLE_MS, the others with none: the
 *             steal requests each rank sends are bounded by the back-off rule (backoff.h) for
 *             the time the run took on it, counted by ws_mpi_stats (a count against a count:
 *             the sleep only makes the ranks idle, nothing is timed against a threshold).
 */
#include "../src/mpi/backoff.h"
#include "test.h"

#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>
#include <worksteal_mpi.h>

static int me, ranks;

typedef struct tally {
    uint64_t count, hash_sum;
} tally;

static const tally no_tally = {0, 0};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static void add_tally(void *acc, const void *right, void *ctx)
{
    (void)ctx;
    tally *a = acc;
    const tally *b = right;
    a->count += b->count;
    a->hash_sum += b->hash_sum;
}

static void count_record(void *acc, uint64_t id)
{
    tally *t = acc;
    t->count++;
    t->hash_sum += mix(id);
}

static void emit_ok(ws_mpi_emitter *out, const void *record)
{
    ASSERT_OK(ws_mpi_emit(out, record));
}

static ws_mpi_work work_of(ws_mpi_record_fn fn, void *ctx, const void *initial, size_t n)
{
    return (ws_mpi_work){.record_size = sizeof(uint64_t),
                         .process = fn,
                         .acc_size = sizeof(tally),
                         .identity = &no_tally,
                         .combine = add_tally,
                         .ctx = ctx,
                         .initial = initial,
                         .initial_count = n};
}

static unsigned long long sum_over_ranks(unsigned long long v)
{
    unsigned long long total;
    MPI_Allreduce(&v, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

/* ---- tree: ids 1..2^(depth+1)-1, children 2i and 2i+1 ---- */

#define TREE_DEPTH 13

static void tree_node(ws_mpi_emitter *out, const void *record, void *acc, void *ctx)
{
    (void)ctx;
    uint64_t id;
    memcpy(&id, record, sizeof(id));
    count_record(acc, id);
    if (id < (1ull << TREE_DEPTH)) {
        uint64_t kids[2] = {2 * id, 2 * id + 1};
        emit_ok(out, &kids[0]);
        emit_ok(out, &kids[1]);
    }
}

static void case_tree(ws_pool *pool)
{
    uint64_t root = 1;
    ws_mpi_work w = work_of(tree_node, NULL, &root, me == 0);
    tally got;
    ws_mpi_stats st;
    ASSERT_OK(ws_mpi_run(MPI_COMM_WORLD, pool, &w, NULL, &got, &st));
    tally want = {0, 0};
    for (uint64_t id = 1; id < (2ull << TREE_DEPTH); id++)
        count_record(&want, id);
    ASSERT_UEQ(got.count, want.count);
    ASSERT_UEQ(got.hash_sum, want.hash_sum);
    ASSERT_UEQ(sum_over_ranks(st.records), want.count);
    ASSERT_UEQ(sum_over_ranks(st.records_sent), sum_over_ranks(st.records_received));
    ASSERT_UEQ(sum_over_ranks(st.steal_requests),
               sum_over_ranks(st.requests_served + st.requests_refused));
    ASSERT_UEQ(sum_over_ranks(st.steals_ok), sum_over_ranks(st.requests_served));
    ASSERT_UEQ(st.steal_requests, st.steals_ok + st.steals_failed);
}

/* ---- chain: record k emits k+1 until CHAIN_LENGTH ---- */

#define CHAIN_LENGTH 3000

static void chain_link(ws_mpi_emitter *out, const void *record, void *acc, void *ctx)
{
    (void)ctx;
    uint64_t k;
    memcpy(&k, record, sizeof(k));
    count_record(acc, k);
    if (k + 1 < CHAIN_LENGTH) {
        uint64_t next = k + 1;
        emit_ok(out, &next);
    }
}

static void case_chain(ws_pool *pool)
{
    uint64_t first = 0;
    ws_mpi_work w = work_of(chain_link, NULL, &first, me == ranks - 1);
    tally got;
    ASSERT_OK(ws_mpi_run(MPI_COMM_WORLD, pool, &w, NULL, &got, NULL));
    tally want = {0, 0};
    for (uint64_t k = 0; k < CHAIN_LENGTH; k++)
        count_record(&want, k);
    ASSERT_UEQ(got.count, want.count);
    ASSERT_UEQ(got.hash_sum, want.hash_sum);
}

/* ---- everyone: each rank starts with PER_RANK leaf records ---- */

#define PER_RANK 500

static void leaf(ws_mpi_emitter *out, const void *record, void *acc, void *ctx)
{
    (void)out;
    (void)ctx;
    uint64_t id;
    memcpy(&id, record, sizeof(id));
    count_record(acc, id);
}

static void case_everyone(ws_pool *pool)
{
    uint64_t mine[PER_RANK];
    for (int i = 0; i < PER_RANK; i++)
        mine[i] = (uint64_t)me * PER_RANK + (uint64_t)i;
    ws_mpi_work w = work_of(leaf, NULL, mine, PER_RANK);
    tally got;
    ASSERT_OK(ws_mpi_run(MPI_COMM_WORLD, pool, &w, NULL, &got, NULL));
    tally want = {0, 0};
    for (uint64_t id = 0; id < (uint64_t)ranks * PER_RANK; id++)
        count_record(&want, id);
    ASSERT_UEQ(got.count, want.count);
    ASSERT_UEQ(got.hash_sum, want.hash_sum);
}

/* ---- empty ---- */

static void case_empty(ws_pool *pool)
{
    ws_mpi_work w = work_of(leaf, NULL, NULL, 0);
    tally got = {7, 7};
    ws_mpi_stats st;
    ASSERT_OK(ws_mpi_run(MPI_COMM_WORLD, pool, &w, NULL, &got, &st));
    ASSERT_UEQ(got.count, 0);
    ASSERT_UEQ(got.hash_sum, 0);
    ASSERT_UEQ(st.records, 0);
    ASSERT_UEQ(st.records_received, 0);
}

/* ---- spread: marker files in a directory rank 0 made ---- */

#define SPREAD_RECORDS 64
#define SPREAD_WAIT_MS 100000 /* only a rank that never gets work makes a run wait this long */

typedef struct spread {
    char dir[64];
} spread;

static void marker_path(const spread *s, int rank, char *buf, size_t len)
{
    snprintf(buf, len, "%s/rank-%d", s->dir, rank);
}

static bool every_rank_marked(const spread *s)
{
    for (int r = 0; r < ranks; r++) {
        char path[96];
        marker_path(s, r, path, sizeof(path));
        if (access(path, F_OK) != 0)
            return false;
    }
    return true;
}

static void spread_record(ws_mpi_emitter *out, const void *record, void *acc, void *ctx)
{
    (void)out;
    const spread *s = ctx;
    uint64_t id;
    memcpy(&id, record, sizeof(id));
    char path[96];
    marker_path(s, me, path, sizeof(path));
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fclose(f);
    for (int waited = 0; !every_rank_marked(s); waited++) {
        if (waited == SPREAD_WAIT_MS)
            WS_TEST_FAIL("a rank that started with no records never got one");
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    count_record(acc, id);
}

static void case_spread(ws_pool *pool)
{
    spread s = {{0}};
    if (me == 0) {
        snprintf(s.dir, sizeof(s.dir), "/tmp/ws-mpi-spread-XXXXXX");
        ASSERT(mkdtemp(s.dir) != NULL);
    }
    MPI_Bcast(s.dir, sizeof(s.dir), MPI_CHAR, 0, MPI_COMM_WORLD);
    uint64_t ids[SPREAD_RECORDS];
    for (int i = 0; i < SPREAD_RECORDS; i++)
        ids[i] = (uint64_t)i;
    ws_mpi_work w = work_of(spread_record, &s, ids, me == 0 ? SPREAD_RECORDS : 0);
    tally got;
    ws_mpi_stats st;
    ws_mpi_config one_at_a_time = {.chunk = 1};
    ASSERT_OK(ws_mpi_run(MPI_COMM_WORLD, pool, &w, &one_at_a_time, &got, &st));
    ASSERT_UEQ(got.count, SPREAD_RECORDS);
    ASSERT_GT(st.records, 0);
    if (me != 0)
        ASSERT_GT(st.records_received, 0);
    char path[96];
    marker_path(&s, me, path, sizeof(path));
    ASSERT_OK(unlink(path));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        ASSERT_OK(rmdir(s.dir));
}

/* ---- errors ---- */

static void run_from_worker(void *arg)
{
    int *err = arg;
    tally got;
    ws_mpi_work w = work_of(leaf, NULL, NULL, 0);
    *err = ws_mpi_run(MPI_COMM_WORLD, NULL, &w, NULL, &got, NULL);
}

static void case_errors(ws_pool *pool)
{
    tally got;
    ws_mpi_work w = work_of(leaf, NULL, NULL, 0);
    w.record_size = 0;
    ASSERT_EQ(ws_mpi_run(MPI_COMM_WORLD, pool, &w, NULL, &got, NULL), EINVAL);
    w = work_of(leaf, NULL, NULL, 0);
    w.record_size = WS_MPI_MAX_RECORD_SIZE + 1;
    ASSERT_EQ(ws_mpi_run(MPI_COMM_WORLD, pool, &w, NULL, &got, NULL), EINVAL);
    w = work_of(leaf, NULL, NULL, 0);
    if (me == ranks - 1)
        w.process = NULL; /* one rank's mistake fails every rank */
    ASSERT_EQ(ws_mpi_run(MPI_COMM_WORLD, pool, &w, NULL, &got, NULL), EINVAL);
    w = work_of(leaf, NULL, NULL, 0);
    if (me == 0)
        w.acc_size = sizeof(uint64_t); /* sizes differ between ranks */
    ASSERT_EQ(ws_mpi_run(MPI_COMM_WORLD, pool, &w, NULL, &got, NULL), EINVAL);
    w = work_of(leaf, NULL, NULL, 3); /* records promised, none given */
    ASSERT_EQ(ws_mpi_run(MPI_COMM_WORLD, pool, &w, NULL, &got, NULL), EINVAL);
    ASSERT_EQ(ws_mpi_run(MPI_COMM_WORLD, pool, NULL, NULL, &got, NULL), EINVAL);
    int from_worker = 0; /* refused at once, on this rank alone: nothing to agree on */
    ASSERT_OK(ws_pool_run(pool, run_from_worker, &from_worker));
    ASSERT_EQ(from_worker, EINVAL);
    case_everyone(pool);
}

/* ---- idle: the steal requests of ranks with nothing to do ---- */

#define IDLE_MS 1000

static void sleeping_record(ws_mpi_emitter *out, const void *record, void *acc, void *ctx)
{
    (void)out;
    (void)ctx;
    uint64_t id;
    memcpy(&id, record, sizeof(id));
    nanosleep(&(struct timespec){IDLE_MS / 1000, IDLE_MS % 1000 * 1000000L}, NULL);
    count_record(acc, id);
}

static void case_idle(ws_pool *pool)
{
    uint64_t one = 7;
    ws_mpi_work w = work_of(sleeping_record, NULL, &one, me == 0);
    tally got;
    ws_mpi_stats st;
    ws_mpi_config defaults = {0}; /* poll_min 20 us, poll_max 250 us, idle_max 50 ms */
    ASSERT_OK(ws_mpi_run(MPI_COMM_WORLD, pool, &w, &defaults, &got, &st));
    ASSERT_UEQ(got.count, 1);
    /* Each success restarts the back-off, so a rank may go through the sequence once more per
     * record it got. (The one record may move more than once: until a worker starts it, it sits
     * in a rank's queue, where another rank's request can take it; on a loaded machine it
     * went back and forth five times once.) */
    unsigned long bound = ws__mpi_backoff_requests_within(st.elapsed_s, 20e-6, 250e-6, 50e-3);
    if (st.steal_requests > (st.steals_ok + 1) * bound)
        WS_TEST_FAIL(
            "rank %d: %llu steal requests (%llu failed) in %.3f s, the back-off allows %lu", me,
            st.steal_requests, st.steals_failed, st.elapsed_s, bound);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    ASSERT_GE(provided, MPI_THREAD_FUNNELED);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    ASSERT_GT(reps, 0);

    ws_pool *pool;
    ASSERT_OK(ws_pool_create(&pool, &(ws_config){.workers = 1}));
    case_errors(pool);
    for (int rep = 0; rep < reps; rep++) {
        case_tree(pool);
        case_chain(pool);
        case_everyone(pool);
        case_empty(pool);
    }
    case_spread(pool);
    case_idle(pool);
    ws_pool_destroy(pool);
    if (me == 0)
        printf("test_mpi_run: %d ranks, %d repetitions: ok\n", ranks, reps);
    MPI_Finalize();
    return 0;
}
