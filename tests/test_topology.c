/* test_topology: worker placement (WS_PIN, ws_config.pin), the victim order by topology level,
 * the per-level steal counters, pinning and thread names (src/topology.c).
 *
 * usage: test_topology CASE, one ctest entry per case:
 *   parse    pin strings: policies, CPU lists, malformed ones
 *   orders   the CPUs each policy gives on hwloc synthetic topologies (HWLOC_SYNTHETIC), within
 *            a given CPU mask, wrapping when workers outnumber CPUs; a listed CPU outside the
 *            mask is refused; the victim order of a 2 x 2 x 4 machine. Built without hwloc:
 *            every policy is the mask's order and no level is known
 *   levels   16 workers on the synthetic 2-package x 2-L3 x 4-core machine (8 threads per real
 *            core): a join tree whose 16 leaves wait for each other reaches every worker by
 *            stealing; the per-level counts add up to the steals (less those by or from spares,
 *            which stand in for workers parked in ws_sync and have no place) and include steals
 * across packages; with two workers in different packages each holding a deque of tasks, the other
 * 14 take more tasks from the nearer one than from the farther one pin      pinning for real: with
 * "cores", "compact", "scatter" and a CPU list, each worker reads its own affinity
 * (sched_getaffinity) and finds exactly the CPU it was given, one per worker while there are
 * enough; a spare may run on every CPU of the pool; a process restricted to one CPU (as by taskset)
 * refuses a list naming another one (EINVAL for the config field, one stderr line for WS_PIN) and
 * pins inside its mask names    threads are named ws<pool>:w<id> and ws<pool>:spare<id>, as
 * /proc/self/task/N/comm shows from inside and outside env      invalid WS_PIN values are ignored
 * with one stderr line each; invalid config pins are EINVAL with nothing left running trace
 * WS_TRACE of a pinned pool: each worker's "cpu" events name the CPU it is pinned to (and a NUMA
 * node); the pool runs in a child, which closes the trace at exit
 */
#include "internal.h"
#include "test_sched_util.h"
#include "test_trace_json.h"

#include <sched.h>
#include <stdatomic.h>

#define SENTINEL_POOL ((ws_pool *)(uintptr_t)0x5e5e5e50)

static bool have_hwloc(void)
{
    char info[160];
    ws__topology_build_info(info, sizeof info);
    return strncmp(info, "built with hwloc", 16) == 0;
}

/* ---- waiting for every worker -------------------------------------------------------------- */

enum { MAX_W = 64 };

/* Workers that arrived; a leaf waits until `want` distinct workers have. */
typedef struct arrival {
    _Atomic unsigned count;
    _Atomic int seen[MAX_W];
    unsigned want;
} arrival;

/* Marks this worker arrived and waits (sleeping, so that 16 threads share 2 cores) for the
 * others; fails after a minute, naming the ones that never came. */
static void arrive_and_wait(arrival *a)
{
    int id = ws_worker_id();
    ASSERT(id >= 0 && id < MAX_W);
    if (atomic_exchange(&a->seen[id], 1) == 0)
        atomic_fetch_add(&a->count, 1);
    for (int ms = 0; atomic_load(&a->count) < a->want; ms++) {
        if (ms > 60000) {
            for (unsigned i = 0; i < a->want; i++)
                if (!atomic_load(&a->seen[i]))
                    fprintf(stderr, "worker %u never arrived\n", i);
            WS_TEST_FAIL("only %u of %u workers arrived", atomic_load(&a->count), a->want);
        }
        sched_sleep_ms(1);
    }
}

typedef struct tree {
    arrival *a;
    unsigned leaves;
} tree;

/* A join tree with `leaves` leaves, each waiting for every worker. */
static void tree_run(void *p)
{
    tree *t = p;
    if (t->leaves == 1) {
        arrive_and_wait(t->a);
        return;
    }
    tree l = {t->a, t->leaves / 2}, r = {t->a, t->leaves - t->leaves / 2};
    ws_join(tree_run, &l, tree_run, &r);
}

static ws_pool *pinned_pool(unsigned workers, const char *pin, unsigned spares)
{
    ws_config cfg = {0};
    cfg.workers = workers;
    cfg.pin = pin;
    cfg.max_spares = spares;
    ws_pool *pool = NULL;
    int err = ws_pool_create(&pool, &cfg);
    if (err != 0)
        WS_TEST_FAIL("ws_pool_create(workers %u, pin \"%s\"): %d", workers, pin, err);
    return pool;
}

static uint64_t worker_counter(ws_pool *pool, unsigned i, size_t offset)
{
    /* offset is an offsetof of a uint64_t counter, so the field is aligned: through void * to
     * say so (clang's -Wcast-align). */
    void *field = (char *)&pool->workers[i]->counters + offset;
    return atomic_load((_Atomic uint64_t *)field);
}

static void print_levels(const char *what, const ws_stats *s)
{
    printf("%s: steals %" PRIu64 " (L2 %" PRIu64 ", L3 %" PRIu64 ", NUMA %" PRIu64
           ", remote %" PRIu64 "), attempts %" PRIu64 ", leapfrogs %" PRIu64 "\n",
           what, s->steals, s->steals_l2, s->steals_l3, s->steals_numa, s->steals_remote,
           s->steal_attempts, s->leapfrogs);
}

/* ---- parse --------------------------------------------------------------------------------- */

static void case_parse(void)
{
    ws__pin_spec s;
    const char *names[] = {"none", "cores", "compact", "scatter"};
    for (int p = 0; p < 4; p++) {
        ASSERT_OK(ws__pin_parse(names[p], &s));
        ASSERT_EQ(s.policy, p);
    }
    ASSERT_OK(ws__pin_parse("3,1,5-7,0", &s));
    ASSERT_EQ(s.policy, WS_PIN_LIST);
    ASSERT_EQ(s.ncpus, 6);
    const int want[] = {3, 1, 5, 6, 7, 0};
    for (int i = 0; i < 6; i++)
        ASSERT_EQ(s.cpus[i], want[i]);
    ASSERT_OK(ws__pin_parse("1023", &s));
    ASSERT_EQ(s.cpus[0], 1023);
    const char *bad[] = {"",   "Cores", "core", "1,",     ",1",   "1-", "-1",         "3-1",
                         "1x", "1 2",   "1024", "0-1024", "1,,2", " 1", "99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (ws__pin_parse(bad[i], &s) != EINVAL)
            WS_TEST_FAIL("\"%s\" was accepted", bad[i]);
    }
    printf("parse: ok\n");
}

/* ---- orders -------------------------------------------------------------------------------- */

static ws__cpuset mask_of(const char *list)
{
    ws__pin_spec s;
    ASSERT_OK(ws__pin_parse(list, &s));
    ws__cpuset m = {{0}};
    for (unsigned i = 0; i < s.ncpus; i++)
        ws__cpuset_add(&m, s.cpus[i]);
    return m;
}

/* Places n workers by pin within mask (NULL: all of the topology) and checks their CPUs. */
static void expect_places(const char *pin, const char *mask, unsigned n, const int *cpus)
{
    ws__pin_spec spec;
    ASSERT_OK(ws__pin_parse(pin, &spec));
    ws__cpuset m;
    if (mask != NULL)
        m = mask_of(mask);
    ws__placement *pl = NULL;
    char why[200];
    int err = ws__placement_make(&pl, &spec, n, mask != NULL ? &m : NULL, why, sizeof why);
    if (err != 0)
        WS_TEST_FAIL("%s in %s: %d (%s)", pin, mask ? mask : "all", err, why);
    printf("%-8s in %-10s:", pin, mask ? mask : "all");
    for (unsigned i = 0; i < n; i++)
        printf(" %d", pl->places[i].cpu);
    printf("\n");
    for (unsigned i = 0; i < n; i++) {
        if (pl->places[i].cpu != cpus[i])
            WS_TEST_FAIL("%s: worker %u on CPU %d, expected %d", pin, i, pl->places[i].cpu,
                         cpus[i]);
    }
    ws__placement_free(pl);
}

static void expect_refused(const char *pin, const char *mask, const char *why_has)
{
    ws__pin_spec spec;
    ASSERT_OK(ws__pin_parse(pin, &spec));
    ws__cpuset m = mask_of(mask);
    ws__placement *pl = (ws__placement *)1;
    char why[200];
    ASSERT_EQ(ws__placement_make(&pl, &spec, 2, &m, why, sizeof why), EINVAL);
    ASSERT(pl == NULL);
    printf("%s in %s refused: %s\n", pin, mask, why);
    if (strstr(why, why_has) == NULL)
        WS_TEST_FAIL("the reason \"%s\" does not say \"%s\"", why, why_has);
}

static void check_victims_2x2x4(void)
{
    ws__pin_spec spec;
    ASSERT_OK(ws__pin_parse("compact", &spec));
    ws__placement *pl = NULL;
    char why[200];
    ASSERT_OK(ws__placement_make(&pl, &spec, 16, NULL, why, sizeof why));
    ASSERT(pl->levels && !pl->pinned);
    for (unsigned w = 0; w < 16; w++) {
        const uint16_t *v = pl->victims + w * 15;
        const uint16_t *end = pl->level_end[w];
        /* No L2 in this topology, one CPU per core: nobody shares the thief's L2. */
        ASSERT_EQ(end[WS_LEVEL_L2], 0);
        ASSERT_EQ(end[WS_LEVEL_L3], 3);
        ASSERT_EQ(end[WS_LEVEL_NUMA], 7);
        ASSERT_EQ(end[WS_LEVEL_REMOTE], 15);
        for (unsigned k = 0; k < 15; k++) {
            unsigned u = v[k], level = k < 3 ? WS_LEVEL_L3 : k < 7 ? WS_LEVEL_NUMA : 3;
            ASSERT(u != w && u < 16);
            bool same_l3 = u / 4 == w / 4, same_pack = u / 8 == w / 8;
            unsigned expect = same_l3 ? WS_LEVEL_L3 : same_pack ? WS_LEVEL_NUMA : 3;
            if (expect != level)
                WS_TEST_FAIL("worker %u: victim %u at position %u", w, u, k);
            ASSERT_EQ(ws__steal_level(&pl->places[w], &pl->places[u]), level);
        }
    }
    printf("victims of worker 5:");
    for (unsigned k = 0; k < 15; k++)
        printf(" %u%s", pl->victims[5 * 15 + k], k == 2 || k == 6 ? " |" : "");
    printf("\n");
    ws__placement_free(pl);
}

static void case_orders(void)
{
    if (!have_hwloc()) {
        /* Without hwloc every policy takes the mask's CPUs in order, and wraps around. */
        const int in_order[] = {1, 2, 3, 8, 9, 1, 2};
        expect_places("compact", "1-3,8-9", 7, in_order);
        expect_places("cores", "1-3,8-9", 7, in_order);
        expect_places("scatter", "1-3,8-9", 7, in_order);
        const int listed[] = {9, 1, 9};
        expect_places("9,1", "1-3,8-9", 3, listed);
        expect_refused("4", "1-3,8-9", "CPU 4 is not in this process's CPU set 1-3,8-9");
        ws__pin_spec spec;
        ASSERT_OK(ws__pin_parse("compact", &spec));
        ws__placement *pl = NULL;
        char why[200];
        ASSERT_OK(ws__placement_make(&pl, &spec, 4, NULL, why, sizeof why));
        ASSERT(!pl->levels);
        ASSERT(pl->pinned);
        ws__placement_free(pl);
        printf("orders: ok (built without hwloc)\n");
        return;
    }
    ASSERT_OK(setenv("HWLOC_SYNTHETIC", "pack:2 l3:2 core:4 pu:1", 1));
    int compact[16], wrap[20];
    for (int i = 0; i < 16; i++)
        compact[i] = i;
    for (int i = 0; i < 20; i++)
        wrap[i] = i % 16;
    expect_places("compact", NULL, 16, compact);
    expect_places("compact", NULL, 20, wrap);
    expect_places("cores", NULL, 16, compact); /* one CPU per core: cores is compact */
    /* Alternate packages, then L3s, then cores. */
    const int scatter[] = {0, 8, 4, 12, 1, 9, 5, 13, 2, 10, 6, 14, 3, 11, 7, 15};
    expect_places("scatter", NULL, 16, scatter);
    const int scatter_masked[] = {1, 9, 2, 3, 1};
    expect_places("scatter", "1-3,9", 5, scatter_masked);
    const int listed[] = {5, 3, 4, 15, 5};
    expect_places("5,3-4,15", NULL, 5, listed);
    expect_refused("0,17", "0-15", "CPU 17 is not in this process's CPU set 0-15");
    expect_refused("2", "0-1,8-9", "CPU 2 is not in this process's CPU set 0-1,8-9");
    check_victims_2x2x4();

    /* Two hardware threads per core: cores fills every core before any second thread. */
    ASSERT_OK(setenv("HWLOC_SYNTHETIC", "pack:2 core:2 pu:2", 1));
    const int by_core[] = {0, 2, 4, 6, 1, 3, 5, 7};
    expect_places("cores", NULL, 8, by_core);
    const int by_pack[] = {0, 4, 2, 6, 1, 5, 3, 7};
    expect_places("scatter", NULL, 8, by_pack);
    const int packed[] = {0, 1, 2, 3, 4, 5, 6, 7};
    expect_places("compact", NULL, 8, packed);
    const int cores_masked[] = {1, 2, 4, 3, 5};
    expect_places("cores", "1-5", 5, cores_masked);
    ASSERT_OK(unsetenv("HWLOC_SYNTHETIC"));
    printf("orders: ok\n");
}

/* ---- levels -------------------------------------------------------------------------------- */

enum { NEAR_TASKS = 128 };

typedef struct race {
    arrival a;
    _Atomic unsigned spawned; /* workers 0 and 8 have filled their deques */
    _Atomic unsigned left;    /* the other workers went stealing */
    _Atomic uint64_t sink;
} race;

static void small_task(void *p)
{
    race *r = p;
    uint64_t x = 0;
    for (int i = 0; i < 1000000; i++) /* about half a millisecond */
        x += (uint64_t)i * (uint64_t)i ^ x >> 7;
    atomic_fetch_add_explicit(&r->sink, x, memory_order_relaxed);
}

/* A group job: workers 0 and 8 fill their deques and wait until the others have gone to steal;
 * the others wait for the deques to be full, then leave the job to steal. */
static void race_job(void *p)
{
    race *r = p;
    arrive_and_wait(&r->a);
    int id = ws_worker_id();
    if (id == 0 || id == 8) {
        ws_task t[NEAR_TASKS];
        for (int i = 0; i < NEAR_TASKS; i++)
            ws_spawn(&t[i], small_task, r);
        atomic_fetch_add(&r->spawned, 1);
        while (atomic_load(&r->left) < r->a.want - 2)
            sched_sleep_ms(1);
        for (int i = NEAR_TASKS; i-- > 0;)
            ws_sync(&t[i]);
        return;
    }
    while (atomic_load(&r->spawned) < 2)
        sched_yield();
    atomic_fetch_add(&r->left, 1);
}

static void case_levels(void)
{
    bool levels = have_hwloc();
    if (levels)
        ASSERT_OK(setenv("HWLOC_SYNTHETIC", "pack:2 l3:2 core:4 pu:1", 1));
    const unsigned n = 16;
    ws_pool *pool = pinned_pool(n, "compact", 0);
    ASSERT(pool->placement != NULL && pool->placement->levels == levels);

    /* 1. Every worker is reached, by stealing. */
    arrival a = {0};
    a.want = n;
    tree t = {&a, n};
    ASSERT_OK(ws_pool_run(pool, tree_run, &t));
    ws_stats s;
    ws_pool_stats(pool, &s);
    print_levels("tree of 16 waiting leaves", &s);
    unsigned root = n;
    for (unsigned i = 0; i < n; i++) {
        uint64_t steals = worker_counter(pool, i, offsetof(ws__counters, steals));
        if (worker_counter(pool, i, offsetof(ws__counters, injector_takes)) == 1)
            root = i;
        else if (steals == 0)
            WS_TEST_FAIL("worker %u got a leaf without stealing", i);
    }
    ASSERT(root < n);
    uint64_t by_level = s.steals_l2 + s.steals_l3 + s.steals_numa + s.steals_remote;
    if (levels) {
        ASSERT_UEQ(by_level, s.steals);
        ASSERT_UEQ(s.steals_l2, 0);    /* nobody shares an L2 here */
        ASSERT_GE(s.steals_remote, 1); /* the other package was reached */
    } else {
        ASSERT_UEQ(by_level, 0);
    }

    /* 2. Nearer victims first: two full deques, in different packages. On a new pool: the first
     * part's parked joins woke spares, and a spare still awake could take one of the 16 jobs
     * below, leaving worker 0 or 8 without one and the others waiting for its deque forever
     * (seen about once in 45 runs under load). A new pool has no spare until a task blocks,
     * and nothing blocks before every worker holds its job. */
    ws_pool_destroy(pool);
    pool = pinned_pool(n, "compact", 0);
    ws_pool_stats(pool, &s);
    ws_stats before = s;
    race *r = calloc(1, sizeof *r);
    ASSERT(r != NULL);
    r->a.want = n;
    ws_group g;
    ws_group_init(&g, pool);
    for (unsigned i = 0; i < n; i++)
        ASSERT_OK(ws_group_submit(&g, race_job, r, 0));
    ws_group_wait(&g);
    ws_pool_stats(pool, &s);
    ws_stats d = s;
#define WS_DIFF_(name, kind, doc) d.name = s.name - before.name;
    WS_STATS_FIELDS(WS_DIFF_)
#undef WS_DIFF_
    print_levels("two deques of 128 tasks, in workers 0 and 8", &d);
    if (levels) {
        /* Spares (standing in for a worker parked in ws_sync) are not placed: their steals are
         * in no level. */
        ASSERT_LE(d.steals_l2 + d.steals_l3 + d.steals_numa + d.steals_remote, d.steals);
        ASSERT_GE(d.steals_l3, 1);
        /* Workers 1-7 are nearer to 0 and 9-15 to 8, and go to the other package only when
         * their own victim is empty: under a quarter of the steals cross (a flat random order
         * sends about half of them across). */
        ASSERT_LT(4 * d.steals_remote, d.steals);
    }
    free(r);
    ws_pool_destroy(pool);
    printf("levels: ok\n");
}

/* ---- pin ----------------------------------------------------------------------------------- */

/* What a worker saw of itself. */
typedef struct seen {
    arrival a;
    ws_pool *pool;
    int cpus[MAX_W]; /* its only CPU, or -1 - (number of CPUs) if it has several */
    char comm[MAX_W][32];
} seen;

static int only_cpu(void)
{
    cpu_set_t set;
    ASSERT_OK(sched_getaffinity(0, sizeof set, &set));
    int n = CPU_COUNT(&set);
    if (n != 1)
        return -1 - n;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            return c;
    return -1;
}

static void read_comm(pid_t tid, char *out, size_t n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
    FILE *f = fopen(path, "r");
    ASSERT(f != NULL);
    ASSERT(fgets(out, (int)n, f) != NULL);
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
}

static void look_job(void *p)
{
    seen *s = p;
    int id = ws_worker_id();
    s->cpus[id] = only_cpu();
    read_comm(gettid(), s->comm[id], sizeof s->comm[id]);
    arrive_and_wait(&s->a);
}

/* Every worker of pool looks at itself once. */
static seen *look(ws_pool *pool)
{
    unsigned n = ws_pool_workers(pool);
    seen *s = calloc(1, sizeof *s);
    ASSERT(s != NULL && n <= MAX_W);
    s->a.want = n;
    s->pool = pool;
    ws_group g;
    ws_group_init(&g, pool);
    for (unsigned i = 0; i < n; i++)
        ASSERT_OK(ws_group_submit(&g, look_job, s, 0));
    ws_group_wait(&g);
    return s;
}

static void process_cpus(int *cpus, unsigned *n)
{
    cpu_set_t set;
    ASSERT_OK(sched_getaffinity(getpid(), sizeof set, &set));
    *n = 0;
    for (int c = 0; c < CPU_SETSIZE && *n < MAX_W; c++)
        if (CPU_ISSET(c, &set))
            cpus[(*n)++] = c;
    ASSERT(*n >= 1);
}

/* Each worker of a pool pinned by pin runs on exactly the CPU it was placed on, which is in
 * the process's set; while workers <= CPUs, no two share one. */
static void check_pinned(const char *pin, unsigned workers)
{
    int cpus[MAX_W];
    unsigned ncpus;
    process_cpus(cpus, &ncpus);
    ws_pool *pool = pinned_pool(workers, pin, 0);
    ASSERT(pool->placement != NULL && pool->placement->pinned);
    seen *s = look(pool);
    int uses[WS_CPUSET_MAX] = {0};
    printf("%-8s %u workers on CPUs:", pin, workers);
    for (unsigned i = 0; i < workers; i++) {
        int c = s->cpus[i];
        printf(" %d", c);
        if (c < 0)
            WS_TEST_FAIL("%s: worker %u may run on %d CPUs", pin, i, -1 - c);
        ASSERT_EQ(c, pool->workers[i]->place->cpu);
        bool in_mask = false;
        for (unsigned k = 0; k < ncpus; k++)
            in_mask |= cpus[k] == c;
        ASSERT(in_mask);
        uses[c]++;
    }
    printf("\n");
    for (unsigned i = 0; i < workers; i++) {
        unsigned most = (workers + ncpus - 1) / ncpus;
        if ((unsigned)uses[s->cpus[i]] > most)
            WS_TEST_FAIL("%s: CPU %d has %d workers", pin, s->cpus[i], uses[s->cpus[i]]);
    }
    free(s);
    ws_pool_destroy(pool);
}

typedef struct spare_check {
    _Atomic int done;
    int id, ncpus;
    char comm[32];
} spare_check;

static void blocker_job(void *p)
{
    spare_check *c = p;
    ws_block_begin();
    while (!atomic_load(&c->done))
        sched_sleep_ms(1);
    ws_block_end();
}

static void spare_job(void *p)
{
    spare_check *c = p;
    c->id = ws_worker_id();
    int one = only_cpu();
    c->ncpus = one >= 0 ? 1 : -1 - one;
    read_comm(gettid(), c->comm, sizeof c->comm);
    atomic_store(&c->done, 1);
}

/* A one-worker pool whose worker blocks: a spare runs the second job. */
static void run_on_spare(ws_pool *pool, spare_check *c)
{
    ws_group g;
    ws_group_init(&g, pool);
    ASSERT_OK(ws_group_submit(&g, blocker_job, c, 0));
    ASSERT_OK(ws_group_submit(&g, spare_job, c, 0));
    ws_group_wait(&g);
    ASSERT_GE(c->id, 1); /* a spare */
}

/* In a child whose process mask is one CPU: lists are checked against it. */
static void masked_child(void *arg)
{
    int cpu = *(int *)arg, other = cpu == 0 ? 1 : 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    ASSERT_OK(sched_setaffinity(getpid(), sizeof set, &set));
    char list[16];
    snprintf(list, sizeof list, "%d", other);
    ws_config cfg = {0};
    cfg.workers = 2;
    cfg.pin = list;
    ws_pool *pool = SENTINEL_POOL;
    ASSERT_EQ(ws_pool_create(&pool, &cfg), EINVAL);
    ASSERT(pool == SENTINEL_POOL);
    ASSERT_OK(setenv("WS_PIN", list, 1));
    cfg.pin = NULL;
    ASSERT_OK(ws_pool_create(&pool, &cfg));
    ASSERT(pool->placement == NULL); /* ignored */
    ws_pool_destroy(pool);
    ASSERT_OK(setenv("WS_PIN", "cores", 1));
    ASSERT_OK(ws_pool_create(&pool, &cfg));
    seen *s = look(pool);
    ASSERT_EQ(s->cpus[0], cpu);
    ASSERT_EQ(s->cpus[1], cpu); /* one CPU for two workers: they share it */
    free(s);
    ws_pool_destroy(pool);
    printf("masked child: ok\n");
}

static void case_pin(void)
{
    int cpus[MAX_W];
    unsigned ncpus;
    process_cpus(cpus, &ncpus);
    if (ncpus >= 2) {
        sched_child c;
        int cpu = cpus[ncpus - 1];
        sched_run_child(&c, masked_child, &cpu);
        printf("%s", c.out);
        sched_expect_clean_exit(&c, "masked child");
        /* One line for the config's pin (EINVAL), one for the variable's (ignored). */
        ASSERT_EQ(sched_count_lines(c.err), 2);
        ASSERT(strstr(c.err, "worksteal: ws_pool_create: EINVAL: pin = ") == c.err);
        ASSERT(strstr(c.err, "worksteal: ignoring WS_PIN=") != NULL);
        ASSERT(strstr(strchr(c.err, '\n'), "is not in this process's CPU set") != NULL);
        printf("a pin and WS_PIN outside the mask:\n%s", c.err);
    } else {
        printf("one CPU in this process's set: the mask checks need two, skipped\n");
    }
    unsigned n = ncpus > 8 ? 8 : ncpus;
    check_pinned("cores", n);
    check_pinned("compact", n);
    check_pinned("scatter", n);
    check_pinned("compact", 2 * n + 1); /* more workers than CPUs: shared evenly */
    char list[32];
    snprintf(list, sizeof list, "%d,%d", cpus[ncpus - 1], cpus[0]);
    check_pinned(list, 2);

    /* A spare of a pinned pool floats over the pool's CPUs. */
    ws_pool *pool = pinned_pool(1, "cores", 1);
    spare_check c = {0};
    run_on_spare(pool, &c);
    printf("spare %d runs on %d CPUs\n", c.id, c.ncpus);
    ASSERT_EQ(c.ncpus, (int)ncpus);
    ws_pool_destroy(pool);
    printf("pin: ok\n");
}

/* ---- names --------------------------------------------------------------------------------- */

/* Threads of this process whose name starts with prefix. */
static int threads_named(const char *prefix)
{
    DIR *d = opendir("/proc/self/task");
    ASSERT(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char comm[32];
        read_comm((pid_t)atoi(e->d_name), comm, sizeof comm);
        n += strncmp(comm, prefix, strlen(prefix)) == 0;
    }
    closedir(d);
    return n;
}

static void case_names(void)
{
    ws_pool *pool = pinned_pool(3, "none", 1);
    ASSERT(pool->placement == NULL);
    seen *s = look(pool);
    for (unsigned i = 0; i < 3; i++) {
        char want[32];
        snprintf(want, sizeof want, "ws%u:w%u", pool->serial, i);
        printf("worker %u is named %s\n", i, s->comm[i]);
        ASSERT(strcmp(s->comm[i], want) == 0);
    }
    free(s);
    char prefix[16];
    snprintf(prefix, sizeof prefix, "ws%u:w", pool->serial);
    ASSERT_EQ(threads_named(prefix), 3); /* seen from outside too */
    ws_pool_destroy(pool);

    pool = pinned_pool(1, "none", 1);
    spare_check c = {0};
    run_on_spare(pool, &c);
    char want[32];
    snprintf(want, sizeof want, "ws%u:spare%d", pool->serial, c.id);
    printf("spare %d is named %s\n", c.id, c.comm);
    ASSERT(strcmp(c.comm, want) == 0);
    snprintf(prefix, sizeof prefix, "ws%u:", pool->serial);
    ASSERT_EQ(threads_named(prefix), 2); /* the worker and the spare */
    ws_pool_destroy(pool);
    printf("names: ok\n");
}

/* ---- env ----------------------------------------------------------------------------------- */

static void env_child(void *arg)
{
    const char *value = arg;
    ASSERT_OK(setenv("WS_PIN", value, 1));
    ws_pool *pool = NULL;
    ws_config cfg = {0};
    cfg.workers = 2;
    ASSERT_OK(ws_pool_create(&pool, &cfg));
    printf("placed %d\n", pool->placement != NULL);
    ws_pool_destroy(pool);
}

static void case_env(void)
{
    const char *bad[] = {"bogus", "3-1", "0,", "99999", "Compact"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sched_child c;
        sched_run_child(&c, env_child, (void *)bad[i]);
        sched_expect_clean_exit(&c, bad[i]);
        printf("WS_PIN=%s: %s", bad[i], c.err);
        ASSERT_EQ(sched_count_lines(c.err), 1);
        ASSERT(strstr(c.err, "worksteal: ignoring WS_PIN=") != NULL);
        ASSERT(strstr(c.out, "placed 0") != NULL);
    }
    const char *good[] = {"", "none", "compact"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        sched_child c;
        sched_run_child(&c, env_child, (void *)good[i]);
        sched_expect_clean_exit(&c, good[i]);
        ASSERT_EQ(sched_count_lines(c.err), 0);
        ASSERT(strstr(c.out, i == 2 ? "placed 1" : "placed 0") != NULL);
    }
    int base = sched_thread_baseline();
    const char *bad_config[] = {"", "bogus", "0-", "1024"};
    for (size_t i = 0; i < sizeof bad_config / sizeof bad_config[0]; i++) {
        ws_config cfg = {0};
        cfg.workers = 2;
        cfg.pin = bad_config[i];
        ws_pool *pool = SENTINEL_POOL;
        ASSERT_EQ(ws_pool_create(&pool, &cfg), EINVAL);
        ASSERT(pool == SENTINEL_POOL);
    }
    ASSERT_EQ(sched_wait_thread_count(base), base);
    printf("env: ok\n");
}

/* ---- trace -------------------------------------------------------------------------------- */

typedef struct trace_run {
    char path[64];
    int cpus[MAX_W]; /* each worker's pinned CPU, as the child saw it */
    unsigned workers;
} trace_run;

static void trace_child(void *arg)
{
    trace_run *t = arg;
    ASSERT_OK(setenv("WS_TRACE", t->path, 1));
    ws_pool *pool = pinned_pool(t->workers, "cores", 0);
    seen *s = look(pool);
    for (unsigned i = 0; i < t->workers; i++)
        printf("worker %u pinned to %d\n", i, pool->workers[i]->place->cpu);
    free(s);
    ws_pool_destroy(pool);
    exit(0); /* closes the trace's JSON array */
}

static void case_trace(void)
{
    int cpus[MAX_W];
    unsigned ncpus;
    process_cpus(cpus, &ncpus);
    trace_run t = {0};
    snprintf(t.path, sizeof t.path, "/tmp/ws_test_topology_%d.json", (int)getpid());
    t.workers = ncpus > 4 ? 4 : ncpus;
    sched_child c;
    sched_run_child(&c, trace_child, &t);
    printf("%s", c.out);
    sched_expect_clean_exit(&c, "traced child");

    FILE *f = fopen(t.path, "rb");
    ASSERT(f != NULL);
    static char text[1 << 22];
    size_t len = fread(text, 1, sizeof text, f);
    fclose(f);
    unlink(t.path);
    ASSERT(len > 0 && len < sizeof text);
    jval root;
    char err[200];
    if (!json_parse(text, len, &root, err, sizeof err))
        WS_TEST_FAIL("the trace is not valid JSON: %s", err);
    unsigned events[MAX_W] = {0};
    for (size_t i = 0; i < root.n; i++) {
        const jval *e = &root.items[i];
        const char *name = json_get_str(e, "name");
        if (name == NULL || strcmp(name, "cpu") != 0)
            continue;
        const jval *args = json_get(e, "args"), *tid = json_get(e, "tid");
        ASSERT(args != NULL && tid != NULL);
        int w = atoi(tid->text), cpu = atoi(json_get(args, "cpu")->text);
        int node = atoi(json_get(args, "node")->text);
        ASSERT(w >= 0 && (unsigned)w < t.workers);
        char want[32];
        snprintf(want, sizeof want, "worker %d pinned to %d\n", w, cpu);
        if (strstr(c.out, want) == NULL)
            WS_TEST_FAIL("worker %d traced on CPU %d, not its pinned CPU", w, cpu);
        ASSERT(node >= 0);
        events[w]++;
    }
    json_free(&root);
    for (unsigned w = 0; w < t.workers; w++) {
        printf("worker %u: %u cpu event(s)\n", w, events[w]);
        ASSERT_EQ(events[w], 1); /* pinned: one CPU, never a move */
    }
    printf("trace: ok\n");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    ASSERT(argc == 2);
    ASSERT_OK(unsetenv("WS_PIN"));
    char info[160];
    ws__topology_build_info(info, sizeof info);
    printf("%s\n", info);
    const char *c = argv[1];
    if (strcmp(c, "parse") == 0)
        case_parse();
    else if (strcmp(c, "orders") == 0)
        case_orders();
    else if (strcmp(c, "levels") == 0)
        case_levels();
    else if (strcmp(c, "pin") == 0)
        case_pin();
    else if (strcmp(c, "names") == 0)
        case_names();
    else if (strcmp(c, "env") == 0)
        case_env();
    else if (strcmp(c, "trace") == 0)
        case_trace();
    else
        WS_TEST_FAIL("unknown case %s", c);
    return 0;
}
