/* test_future_gen: random acyclic programs of futures, each run on a pool and checked against a
 * serial interpreter of the same program.
 *
 * usage: test_future_gen WORKERS [nospares] [--seed S] [--first I] [--count N] [--repeat R]
 *                        [--survey]
 * One ctest entry per worker count (1 to 4), with the default spares and with none
 * (tests/future.cmake), each with its own fixed seed and 12,500 programs (100,000 over the
 * eight; 50,000 each with WS_TEST_LONG, 625 under the sanitizers: tests/test.h), all on one
 * pool; WS_TEST_SEED overrides the seed. Program i of a run is made from the seed and i alone,
 * so that "--seed S --first i --count 1 --repeat 1000" replays it (its interleavings vary from
 * run to run). --survey runs the programs in child processes and goes on after a failure, to
 * count the failures by cause (hangs, wrong results, each message of the library's aborts)
 * instead of stopping at the first.
 *
 * A program. Futures 0..n-1 (n from 3 to 40) and two threads, main and an outside thread. Main
 * submits its futures first (the roots); then every future may start. Each future, main and the
 * outside thread run a body: a list of operations on futures whose handles they know, in order:
 *   submit c   start child c (a future submitting a future, or a thread submitting a root);
 *   get y      ws_future_get (or ws_future_wait): y's result, NULL if y was cancelled;
 *   cancel y   ws_future_cancel, of a cancellable future (one whose body has gets and spins
 *              only, so that a cancel takes nothing else with it);
 *   free y     ws_future_free, exactly once per future, after every get and cancel of it
 *              (below); the futures no body frees, main frees at the end, after a get;
 *   spin k     k pauses, so that the others find the futures running;
 *   fork k     k pauses with a spawn and sync every 64: work that pushes, so that an older item
 *              of the body's deque (a child it submitted) is shared with a worker that asked,
 *              as a real future's work shares it; half of the submits of a future are followed
 *              by one, so that a child waits on the deque while others get its parent.
 * A future's value is a hash of the program, its id and the values it got, in order (a
 * cancelled one counts as a fixed token); the result of its function is the address of its
 * value.
 *
 * Which handles a body knows (the handle must have been written before, by happens-before, not
 * by luck): a future knows itself, what its submitter knew when it submitted it, and the
 * children it submitted so far; main's roots are known to all of them (they start after main's
 * last submit); the outside thread knows the roots and what it submitted so far.
 *
 * Why a program is acyclic. Each future gets a rank, a random number drawn when it is made,
 * independent of who makes it; a future may get only futures of a lower rank (threads may get
 * any future they know). Every chain of gets then goes down in rank and cannot come back: no
 * cycle, whatever the order of creation. Creation does not make an order of its own: a child may
 * get its submitter or anything its submitter knew if their rank is lower, and a future may
 * submit children it never gets (a child of higher rank cannot be got by it). So the shapes
 * that the helping get must survive all appear: a future left running with an unrelated child
 * on its worker, and a chain of gets from that child back down to a future that waits for the
 * first.
 *
 * When a free is allowed. A free of y at a point of a body is placed only where every get and
 * cancel of y happens before that point: in the same body earlier, or in the body of a future
 * whose completion the freeing body has seen through its own gets (transitively; a get of a
 * cancellable future proves only that future done). The serial interpreter checks the placement
 * once more, on its own schedule.
 *
 * The checks. Every function runs exactly once unless a cancel of it returned true, and then
 * never; every get returns the address of its future's value or, for a cancelled one, NULL with
 * status ECANCELED; every value is the serial interpreter's, which runs the program on one
 * thread (a get runs a future that has not run yet, at once; the rest run in submission order)
 * with the cancels as they came out. A hang fails through the watchdog (tests/test_watchdog.h)
 * after 20 s without progress (scaled as ctest scales the TIMEOUT); an abort of the library
 * prints the program too. Double frees and other misuse of memory are left to the library's
 * checks and to AddressSanitizer.
 */
#include "test_future_util.h"
#include "test_sched_util.h"
#include "test_watchdog.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>

/* ---- programs ---------------------------------------------------------------------------- */

enum {
    MAX_FUTURES = 40,
    MAX_OPS = 64,              /* per body */
    MAIN = MAX_FUTURES,        /* the body index of main */
    OUTSIDE = MAX_FUTURES + 1, /* and of the outside thread */
    NODES = MAX_FUTURES + 2,
    CANCELLED_TOKEN = 0x5EED, /* what a cancelled future's value counts as */
    HANG_SECONDS = 20,
};

typedef enum op_kind { OP_SUBMIT, OP_GET, OP_WAIT, OP_CANCEL, OP_FREE, OP_SPIN, OP_FORK } op_kind;

typedef struct op {
    uint8_t kind;   /* op_kind */
    uint8_t target; /* a future */
    uint16_t spin;  /* OP_SPIN: pauses; OP_FORK: pauses, a fork every 64 */
} op;

typedef struct body {
    op ops[MAX_OPS];
    int n;
} body;

typedef uint64_t futures_set; /* bit i: future i (MAX_FUTURES <= 64) */

typedef struct program {
    uint64_t seed, index;
    int n;
    int creator[MAX_FUTURES]; /* a future, MAIN or OUTSIDE */
    bool leaf[MAX_FUTURES];   /* cancellable: gets and spins only */
    uint32_t rank[MAX_FUTURES];
    body bodies[NODES];
} program;

static bool is_future(int node)
{
    return node < MAX_FUTURES;
}

static futures_set bit(int future)
{
    return (futures_set)1 << future;
}

/* ---- generating -------------------------------------------------------------------------- */

/* What the generator knows while it builds a program: each body's submits (in order), and for
 * each body the handles it knows before its first op (the start set). */
typedef struct draft {
    program *p;
    uint64_t rng;
    bool outside; /* the outside thread takes part */
    int submits[NODES][MAX_FUTURES];
    int nsubmits[NODES];
    futures_set start[NODES];
    futures_set roots;
    /* Ops other than submits, each placed after a number of the body's submits (its slot). */
    struct placed {
        op o;
        int slot;
        uint32_t order; /* random, among ops of the same slot */
    } placed[NODES][MAX_OPS];
    int nplaced[NODES];
} draft;

static uint32_t draw(draft *d, uint32_t below)
{
    return (uint32_t)(test_rand(&d->rng) % below);
}

static bool chance(draft *d, uint32_t percent)
{
    return draw(d, 100) < percent;
}

/* The handles body `node` knows after `slot` of its submits. */
static futures_set known_at(const draft *d, int node, int slot)
{
    futures_set k = d->start[node];
    if (is_future(node))
        k |= bit(node);
    for (int i = 0; i < slot; i++)
        k |= bit(d->submits[node][i]);
    return k;
}

/* Who submits future id: main, the outside thread, or an earlier future that may submit. */
static int draw_creator(draft *d, int id)
{
    int candidates[MAX_FUTURES], k = 0;
    for (int c = 0; c < id; c++)
        if (!d->p->leaf[c])
            candidates[k++] = c;
    uint32_t roll = draw(d, 100);
    if (id == 0 || roll < 30 || k == 0)
        return MAIN;
    if (d->outside && roll < 45)
        return OUTSIDE;
    return candidates[draw(d, (uint32_t)k)];
}

static void draft_creators(draft *d)
{
    program *p = d->p;
    for (int id = 0; id < p->n; id++) {
        p->leaf[id] = id > 0 && chance(d, 35);
        p->rank[id] = (uint32_t)test_rand(&d->rng);
        int c = draw_creator(d, id);
        p->creator[id] = c;
        d->submits[c][d->nsubmits[c]++] = id;
        if (c == MAIN)
            d->roots |= bit(id);
    }
    /* Start sets, in id order: a creator's set is known before its children's. */
    d->start[MAIN] = d->roots;
    d->start[OUTSIDE] = d->roots;
    for (int id = 0; id < p->n; id++) {
        int c = p->creator[id], slot = 0;
        while (d->submits[c][slot] != id)
            slot++;
        d->start[id] = c == OUTSIDE ? known_at(d, OUTSIDE, slot)
                       : c == MAIN  ? d->roots
                                    : known_at(d, c, slot);
        d->start[id] |= d->roots; /* futures start after main's last submit */
    }
}

static bool may_get(const program *p, int node, int y)
{
    return node != y && (!is_future(node) || p->rank[y] < p->rank[node]);
}

static bool may_cancel(const program *p, int node, int y)
{
    return node != y && p->leaf[y];
}

/* A random member of set, or -1 if it is empty. */
static int draw_member(draft *d, futures_set set)
{
    int members[MAX_FUTURES], k = 0;
    for (int i = 0; i < d->p->n; i++)
        if (set & bit(i))
            members[k++] = i;
    return k == 0 ? -1 : members[draw(d, (uint32_t)k)];
}

static void place(draft *d, int node, op o, int slot)
{
    if (d->nplaced[node] + d->nsubmits[node] >= MAX_OPS - MAX_FUTURES / 2)
        return; /* room is kept for the frees */
    struct placed *pl = &d->placed[node][d->nplaced[node]++];
    pl->o = o;
    pl->slot = slot;
    pl->order = (uint32_t)test_rand(&d->rng);
}

/* A slot of node's body: main's ops come after all its submits. */
static int draw_slot(draft *d, int node)
{
    return node == MAIN ? d->nsubmits[MAIN] : (int)draw(d, (uint32_t)d->nsubmits[node] + 1);
}

static uint16_t draw_spin(draft *d)
{
    uint32_t roll = draw(d, 100);
    return (uint16_t)(roll < 50   ? draw(d, 100)
                      : roll < 90 ? 100 + draw(d, 900)
                                  : 1000 + draw(d, 4000));
}

/* A random future that body `node` knows after `slot` of its submits and may act on, or -1. */
static int draw_target(draft *d, int node, int slot, bool (*may)(const program *, int, int))
{
    futures_set can = 0, known = known_at(d, node, slot);
    for (int y = 0; y < d->p->n; y++)
        if ((known & bit(y)) && may(d->p, node, y))
            can |= bit(y);
    return draw_member(d, can);
}

/* Gets, cancels and spins of one body. */
static void draft_ops(draft *d, int node)
{
    bool leaf = is_future(node) && d->p->leaf[node];
    int gets = (int)draw(d, leaf ? 4 : 5);
    for (int g = 0; g < gets; g++) {
        int slot = draw_slot(d, node);
        int y = draw_target(d, node, slot, may_get);
        if (y >= 0)
            place(d, node, (op){(uint8_t)(chance(d, 25) ? OP_WAIT : OP_GET), (uint8_t)y, 0}, slot);
    }
    int cancels = leaf ? 0 : chance(d, 40) ? 1 + (int)draw(d, 2) : 0;
    for (int c = 0; c < cancels; c++) {
        int slot = draw_slot(d, node);
        int y = draw_target(d, node, slot, may_cancel);
        if (y >= 0)
            place(d, node, (op){OP_CANCEL, (uint8_t)y, 0}, slot);
    }
    int spins = (int)draw(d, 3);
    for (int s = 0; s < spins; s++)
        place(d, node, (op){OP_SPIN, 0, draw_spin(d)}, draw_slot(d, node));
    /* A submit followed by work that forks (whose pushes share the child with a worker that
     * asked): the child waits on the deque while others get the parent (main's ops come after
     * all its submits). */
    for (int slot = 1; node != MAIN && slot <= d->nsubmits[node]; slot++)
        if (chance(d, 50))
            place(d, node, (op){OP_FORK, 0, (uint16_t)(200 + draw(d, 1500))}, slot);
}

static int placed_cmp(const void *a, const void *b)
{
    const struct placed *x = a, *y = b;
    if (x->slot != y->slot)
        return x->slot < y->slot ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Lays out a body: its submits in order, each slot's ops after the submits before it. */
static void draft_layout(draft *d, int node)
{
    body *b = &d->p->bodies[node];
    qsort(d->placed[node], (size_t)d->nplaced[node], sizeof d->placed[node][0], placed_cmp);
    int k = 0;
    b->n = 0;
    for (int slot = 0; slot <= d->nsubmits[node]; slot++) {
        for (; k < d->nplaced[node] && d->placed[node][k].slot == slot; k++)
            b->ops[b->n++] = d->placed[node][k].o;
        if (slot < d->nsubmits[node])
            b->ops[b->n++] = (op){OP_SUBMIT, (uint8_t)d->submits[node][slot], 0};
    }
}

/* ---- where a free may go ----------------------------------------------------------------- */

/* The futures whose whole body is done once a get of `future` returns: itself and, unless it is
 * cancellable (its get may return without its body having run), what its own gets saw done. */
static futures_set done_after_get(const program *p, int future, futures_set *memo, bool *have)
{
    if (have[future])
        return memo[future];
    futures_set done = bit(future);
    if (!p->leaf[future]) {
        const body *b = &p->bodies[future];
        for (int i = 0; i < b->n; i++)
            if (b->ops[i].kind == OP_GET || b->ops[i].kind == OP_WAIT)
                done |= done_after_get(p, b->ops[i].target, memo, have);
    }
    have[future] = true;
    memo[future] = done;
    return done;
}

/* The handles body `node` knows before its op `at` (submits so far). */
static futures_set known_before(const draft *d, int node, int at)
{
    const body *b = &d->p->bodies[node];
    int slot = 0;
    for (int i = 0; i < at; i++)
        slot += b->ops[i].kind == OP_SUBMIT;
    return known_at(d, node, slot);
}

/* Does every get and cancel of y happen before op `at` of body `node`? */
static bool refs_done_before(const program *p, int y, int node, int at, const futures_set *done_at)
{
    for (int m = 0; m < NODES; m++) {
        if (is_future(m) && m >= p->n)
            continue;
        const body *b = &p->bodies[m];
        for (int i = 0; i < b->n; i++) {
            const op *o = &b->ops[i];
            if (o->target != y || (o->kind != OP_GET && o->kind != OP_WAIT && o->kind != OP_CANCEL))
                continue;
            if (m == node ? i < at : is_future(m) && (done_at[at] & bit(m)))
                continue;
            return false;
        }
    }
    return true;
}

/* Places the in-program frees: for each future, a point of a body (not a cancellable one's)
 * that knows it and that every get and cancel of it happens before, if one is drawn; the rest
 * main frees at the end. Positions are in the layout before the frees go in. */
static void draft_frees(draft *d)
{
    program *p = d->p;
    futures_set memo[MAX_FUTURES] = {0};
    bool have[MAX_FUTURES] = {false};
    struct free_at {
        int future, node, at;
    } frees[MAX_FUTURES];
    int nfrees = 0;
    for (int y = 0; y < p->n; y++) {
        if (!chance(d, 60))
            continue;
        for (int attempt = 0; attempt < 8; attempt++) {
            int node = (int)draw(d, (uint32_t)p->n + 2);
            node = node < p->n ? node : node == p->n ? MAIN : d->outside ? OUTSIDE : MAIN;
            if (is_future(node) && p->leaf[node])
                continue;
            const body *b = &p->bodies[node];
            int first = node == MAIN ? d->nsubmits[MAIN] : 0; /* main's ops follow its submits */
            int at = first + (int)draw(d, (uint32_t)(b->n - first) + 1);
            futures_set done_at[MAX_OPS + 1];
            done_at[0] = 0;
            for (int i = 0; i < b->n; i++)
                done_at[i + 1] = done_at[i] | (b->ops[i].kind == OP_GET || b->ops[i].kind == OP_WAIT
                                                   ? done_after_get(p, b->ops[i].target, memo, have)
                                                   : 0);
            if (!(known_before(d, node, at) & bit(y)) || !refs_done_before(p, y, node, at, done_at))
                continue;
            frees[nfrees++] = (struct free_at){y, node, at};
            break;
        }
    }
    /* Insert from the back of each body, so that earlier positions stay where they were. */
    for (int node = 0; node < NODES; node++) {
        body *b = &p->bodies[node];
        for (int at = b->n; at >= 0; at--)
            for (int f = 0; f < nfrees; f++) {
                if (frees[f].node != node || frees[f].at != at || b->n >= MAX_OPS)
                    continue;
                memmove(&b->ops[at + 1], &b->ops[at], sizeof(op) * (size_t)(b->n - at));
                b->ops[at] = (op){OP_FREE, (uint8_t)frees[f].future, 0};
                b->n++;
            }
    }
}

/* The generator's state for program `index` of the run with seed `seed` (splitmix64's finalizer
 * over both, so that every bit of each counts; never 0, which xorshift would keep). */
static uint64_t program_seed(uint64_t seed, uint64_t index)
{
    uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z != 0 ? z : 1;
}

/* Program `index` of the run with seed `seed`. */
static void generate(program *p, uint64_t seed, uint64_t index)
{
    memset(p, 0, sizeof *p);
    static draft d; /* large: kept off the stack */
    memset(&d, 0, sizeof d);
    d.p = p;
    d.rng = program_seed(seed, index);
    p->seed = seed;
    p->index = index;
    p->n = chance(&d, 50) ? 3 + (int)draw(&d, 8) : 3 + (int)draw(&d, MAX_FUTURES - 2);
    d.outside = chance(&d, 60);
    draft_creators(&d);
    for (int node = 0; node < NODES; node++)
        if ((is_future(node) && node < p->n) || node == MAIN || (node == OUTSIDE && d.outside))
            draft_ops(&d, node);
    for (int node = 0; node < NODES; node++)
        draft_layout(&d, node);
    draft_frees(&d);
}

/* ---- running ----------------------------------------------------------------------------- */

typedef struct run run;

/* The process's state, for the failure reports (the watchdog's and the abort handler's). */
static struct {
    unsigned workers;
    bool no_spares;
    uint64_t seed;
    ws_pool *pool;
    const program *program; /* the one running, or NULL */
    run *run;
    uint64_t repeat;       /* the run of the program, 0 up */
    bool quiet;            /* --survey: one line per failure, no dump */
    int survey_fd;         /* --survey: where a child reports its failure, else -1 */
    const char *fail_kind; /* "hang", "wrong" (a check); NULL: the library's abort */
} gen = {.survey_fd = -1};

typedef struct future_arg {
    run *r;
    int id;
} future_arg;

struct run {
    const program *p;
    ws_future *handle[MAX_FUTURES]; /* written by the submit (before the future can start) */
    uint64_t value[MAX_FUTURES];    /* written by the future: its result points here */
    future_arg args[MAX_FUTURES];
    atomic_uint runs[MAX_FUTURES];
    atomic_bool cancelled[MAX_FUTURES]; /* some cancel of it returned true */
    atomic_bool gate;                   /* main submitted its roots */
    atomic_uint accounted;              /* futures whose body ended, or first cancelled */
    atomic_int at[NODES];               /* the op a body is at: -1 before, its length after */
    atomic_int worker[NODES];           /* where the body runs (ws_worker_id) */
    /* What each get saw (the address, ws_future_status) and each cancel returned. */
    const void *got[NODES][MAX_OPS];
    int status[NODES][MAX_OPS];
};

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 31);
}

/* The first word of a body's value: its program and its id. */
static uint64_t value_start(const program *p, int node)
{
    return mix(mix(p->seed, p->index), (uint64_t)node);
}

static void pause_for(unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        test_cpu_relax();
}

static void fork_nothing(void *arg)
{
    (void)arg;
}

/* n pauses with a spawn and sync every 64: work of the body's own, whose pushes share older
 * items with a worker that asked for them (src/deque.h). */
static void fork_for(unsigned n)
{
    for (unsigned done = 0; done < n; done += 64) {
        ws_task t;
        ws_spawn(&t, fork_nothing, NULL);
        pause_for(64);
        ws_sync(&t);
    }
}

static void gen_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void *future_main(void *arg);

/* The value a get returned, checked to be its future's value or NULL (cancelled). */
static uint64_t got_value(run *r, int node, int i, int y, const void *res)
{
    if (res != NULL && res != &r->value[y])
        gen_fail("op %d of %s%d: the get of f%d returned %p, neither its value's address %p nor "
                 "NULL",
                 i, is_future(node) ? "f" : "thread ", node, y, res, (void *)&r->value[y]);
    return res != NULL ? *(const uint64_t *)res : CANCELLED_TOKEN;
}

static void run_op(run *r, int node, int i, uint64_t *h)
{
    const op *o = &r->p->bodies[node].ops[i];
    int y = o->target;
    switch ((op_kind)o->kind) {
    case OP_SUBMIT: {
        /* A future's submit names no pool (the calling worker's); a thread's names it. */
        ws_pool *pool = is_future(node) ? NULL : gen.pool;
        int err = ws_future_submit(&r->handle[y], pool, future_main, &r->args[y]);
        if (err != 0)
            gen_fail("ws_future_submit of f%d: %d (%s)", y, err, ws_strerror(err));
        break;
    }
    case OP_GET:
    case OP_WAIT: {
        void *res = NULL;
        if (o->kind == OP_GET) {
            res = ws_future_get(r->handle[y]);
            r->status[node][i] = ws_future_status(r->handle[y]);
        } else {
            r->status[node][i] = ws_future_wait(r->handle[y], &res);
        }
        r->got[node][i] = res;
        *h = mix(*h, got_value(r, node, i, y, res));
        break;
    }
    case OP_CANCEL: {
        bool now = ws_future_cancel(r->handle[y]);
        r->status[node][i] = now;
        if (now && !atomic_exchange(&r->cancelled[y], true))
            atomic_fetch_add(&r->accounted, 1);
        break;
    }
    case OP_FREE:
        ws_future_free(r->handle[y]);
        break;
    case OP_SPIN:
        pause_for(o->spin);
        break;
    case OP_FORK:
        fork_for(o->spin);
        break;
    }
}

/* Runs ops [from, to) of body `node`, folding what its gets return into *h. */
static void run_ops(run *r, int node, int from, int to, uint64_t *h)
{
    atomic_store_explicit(&r->worker[node], ws_worker_id(), memory_order_relaxed);
    for (int i = from; i < to; i++) {
        atomic_store_explicit(&r->at[node], i, memory_order_relaxed);
        test_progress();
        run_op(r, node, i, h);
    }
    atomic_store_explicit(&r->at[node], to, memory_order_relaxed);
    test_progress();
}

static void *future_main(void *arg)
{
    future_arg *a = arg;
    run *r = a->r;
    int id = a->id;
    atomic_fetch_add(&r->runs[id], 1);
    while (!atomic_load(&r->gate)) /* main's roots are submitted */
        sched_yield();
    uint64_t h = value_start(r->p, id);
    run_ops(r, id, 0, r->p->bodies[id].n, &h);
    r->value[id] = h;
    atomic_fetch_add(&r->accounted, 1);
    return &r->value[id];
}

/* The outside thread: runs its body of each program that has one, when main hands it over. */
typedef struct outside {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    run *work; /* handed over by main, NULL once done */
    bool quit;
    pthread_t thread;
} outside;

static void *outside_main(void *arg)
{
    outside *o = arg;
    pthread_mutex_lock(&o->lock);
    for (;;) {
        while (o->work == NULL && !o->quit)
            pthread_cond_wait(&o->cond, &o->lock);
        if (o->quit)
            break;
        run *r = o->work;
        pthread_mutex_unlock(&o->lock);
        uint64_t h = value_start(r->p, OUTSIDE);
        run_ops(r, OUTSIDE, 0, r->p->bodies[OUTSIDE].n, &h);
        pthread_mutex_lock(&o->lock);
        o->work = NULL;
        pthread_cond_broadcast(&o->cond);
    }
    pthread_mutex_unlock(&o->lock);
    return NULL;
}

static void outside_hand_over(outside *o, run *r)
{
    pthread_mutex_lock(&o->lock);
    o->work = r;
    pthread_cond_broadcast(&o->cond);
    pthread_mutex_unlock(&o->lock);
}

static void outside_wait(outside *o)
{
    pthread_mutex_lock(&o->lock);
    while (o->work != NULL)
        pthread_cond_wait(&o->cond, &o->lock);
    pthread_mutex_unlock(&o->lock);
}

/* ---- the serial interpreter -------------------------------------------------------------- */

/* The program on one thread: main's body, the outside thread's, then the futures not run yet
 * in submission order; a get of a future that has not run runs it at once. The cancels count
 * as they came out of the parallel run (which cancel wins is up to the interleaving): a
 * cancelled future never runs and its gets return NULL. Checks on the way that every handle is
 * used between its submit and its free and that no get waits for a future that is running
 * under it (a cycle): a failure there is the generator's. */
typedef struct serial {
    const program *p;
    const run *r;
    enum { UNSUBMITTED, QUEUED, RUNNING, FINISHED } state[MAX_FUTURES];
    bool freed[MAX_FUTURES];
    uint64_t value[MAX_FUTURES];
    int queue[MAX_FUTURES], head, tail;
    bool ran[MAX_FUTURES];
} serial;

static void serial_run(serial *s, int id);

static void serial_check_handle(serial *s, int node, int i, int y)
{
    if (s->state[y] == UNSUBMITTED || s->freed[y])
        gen_fail("generator: op %d of %s%d uses f%d %s", i, is_future(node) ? "f" : "thread ", node,
                 y, s->freed[y] ? "after its free" : "before its submit");
}

static uint64_t serial_body(serial *s, int node)
{
    const body *b = &s->p->bodies[node];
    uint64_t h = value_start(s->p, node);
    for (int i = 0; i < b->n; i++) {
        const op *o = &b->ops[i];
        int y = o->target;
        if (o->kind != OP_SUBMIT && o->kind != OP_SPIN && o->kind != OP_FORK)
            serial_check_handle(s, node, i, y);
        if (o->kind == OP_SUBMIT) {
            s->state[y] = QUEUED;
            s->queue[s->tail++] = y;
        } else if (o->kind == OP_FREE) {
            s->freed[y] = true;
        } else if (o->kind == OP_GET || o->kind == OP_WAIT) {
            if (atomic_load(&s->r->cancelled[y])) {
                h = mix(h, CANCELLED_TOKEN);
                continue;
            }
            if (s->state[y] == RUNNING)
                gen_fail("generator: f%d gets f%d, which runs under it (a cycle)", node, y);
            if (s->state[y] == QUEUED)
                serial_run(s, y);
            h = mix(h, s->value[y]);
        }
    }
    return h;
}

static void serial_run(serial *s, int id)
{
    s->state[id] = RUNNING;
    s->value[id] = serial_body(s, id);
    s->state[id] = FINISHED;
    s->ran[id] = true;
}

static void serial_program(serial *s, const program *p, const run *r)
{
    memset(s, 0, sizeof *s);
    s->p = p;
    s->r = r;
    (void)serial_body(s, MAIN);
    (void)serial_body(s, OUTSIDE);
    while (s->head < s->tail) {
        int y = s->queue[s->head++];
        if (s->state[y] == QUEUED && !atomic_load(&r->cancelled[y]))
            serial_run(s, y);
    }
}

/* ---- checks ------------------------------------------------------------------------------ */

static bool freed_in_program(const program *p, int y)
{
    for (int node = 0; node < NODES; node++)
        for (int i = 0; i < p->bodies[node].n; i++)
            if (p->bodies[node].ops[i].kind == OP_FREE && p->bodies[node].ops[i].target == y)
                return true;
    return false;
}

/* Every get of body `node` (which ran to its end) against the interpreter. */
static void check_gets(const run *r, int node)
{
    const body *b = &r->p->bodies[node];
    for (int i = 0; i < b->n; i++) {
        const op *o = &b->ops[i];
        if (o->kind != OP_GET && o->kind != OP_WAIT)
            continue;
        int y = o->target;
        bool cancelled = atomic_load(&r->cancelled[y]);
        const void *want = cancelled ? NULL : (const void *)&r->value[y];
        int want_status = cancelled ? ECANCELED : 0;
        if (r->got[node][i] != want || r->status[node][i] != want_status)
            gen_fail("op %d of %s%d: the get of f%d returned %p with status %d, expected %p "
                     "with status %d",
                     i, is_future(node) ? "f" : "thread ", node, y, r->got[node][i],
                     r->status[node][i], want, want_status);
    }
}

static void check_program(const run *r)
{
    const program *p = r->p;
    serial s;
    serial_program(&s, p, r);
    for (int y = 0; y < p->n; y++) {
        bool cancelled = atomic_load(&r->cancelled[y]);
        unsigned runs = atomic_load(&r->runs[y]);
        if (runs != (cancelled ? 0u : 1u))
            gen_fail("f%d ran %u times, and a cancel of it %s", y, runs,
                     cancelled ? "returned true" : "never returned true");
        if (cancelled)
            continue;
        if (!s.ran[y])
            gen_fail("generator: f%d never ran in the serial interpreter", y);
        if (r->value[y] != s.value[y])
            gen_fail("f%d's value is %#" PRIx64 ", the serial interpreter's %#" PRIx64, y,
                     r->value[y], s.value[y]);
        check_gets(r, y);
    }
    check_gets(r, MAIN);
    check_gets(r, OUTSIDE);
    if (atomic_load(&r->accounted) != (unsigned)p->n)
        gen_fail("%u futures ended or were cancelled, of %d", atomic_load(&r->accounted), p->n);
}

/* ---- reports ----------------------------------------------------------------------------- */

static const char *op_name(uint8_t kind)
{
    static const char *const names[] = {"submit", "get", "wait", "cancel", "free", "spin", "fork"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

static void dump_body(FILE *out, const program *p, const run *r, int node)
{
    const body *b = &p->bodies[node];
    int at = r != NULL ? atomic_load_explicit(&r->at[node], memory_order_relaxed) : -1;
    for (int i = 0; i < b->n; i++) {
        const op *o = &b->ops[i];
        fprintf(out, "      %2d %-6s", i, op_name(o->kind));
        if (o->kind == OP_SPIN || o->kind == OP_FORK)
            fprintf(out, " %u", o->spin);
        else
            fprintf(out, " f%d", o->target);
        fprintf(out, "%s\n", r != NULL && i == at ? "   <- here" : "");
    }
}

static void dump_program(FILE *out, const program *p, const run *r)
{
    fprintf(out, "program %" PRIu64 " of seed %" PRIu64 ": %d futures\n", p->index, p->seed, p->n);
    for (int node = 0; node < NODES; node++) {
        if (is_future(node) && node >= p->n)
            continue;
        if (!is_future(node) && p->bodies[node].n == 0)
            continue;
        if (is_future(node)) {
            const char *by = p->creator[node] == MAIN      ? "main"
                             : p->creator[node] == OUTSIDE ? "the outside thread"
                                                           : "f";
            fprintf(out, "  f%d (rank %" PRIu32 "%s), submitted by %s", node, p->rank[node],
                    p->leaf[node] ? ", cancellable" : "", by);
            if (is_future(p->creator[node]))
                fprintf(out, "%d", p->creator[node]);
        } else {
            fprintf(out, "  %s", node == MAIN ? "main" : "the outside thread");
        }
        if (r != NULL) {
            int at = atomic_load_explicit(&r->at[node], memory_order_relaxed);
            if (is_future(node))
                fprintf(out, ": ran %u time(s)%s", atomic_load(&r->runs[node]),
                        atomic_load(&r->cancelled[node]) ? ", cancelled" : "");
            if (at >= 0)
                fprintf(out, ", %s on worker %d", at >= p->bodies[node].n ? "finished" : "running",
                        atomic_load_explicit(&r->worker[node], memory_order_relaxed));
        }
        fprintf(out, "\n");
        dump_body(out, p, r, node);
    }
}

/* The line that names the failing program, and how to run it again. */
static void report_failure(const char *kind)
{
    const program *p = gen.program;
    if (p == NULL)
        return;
    fprintf(stderr,
            "test_future_gen: %s in program %" PRIu64 " (%d futures, run %" PRIu64 " of it) on %u "
            "workers (%s); replay: test_future_gen %u%s --seed %" PRIu64 " --first %" PRIu64
            " --count 1 --repeat 1000\n",
            kind, p->index, p->n, gen.repeat, gen.workers,
            gen.no_spares ? "WS_NO_SPARES" : "default spares", gen.workers,
            gen.no_spares ? " nospares" : "", gen.seed, p->index);
    if (!gen.quiet)
        dump_program(stderr, p, gen.run);
    if (gen.survey_fd >= 0)
        dprintf(gen.survey_fd, "survey: %" PRIu64 " %s\n", p->index, kind);
}

/* Any abort: the library's (a contract violation), a check's (gen_fail) or the watchdog's. */
static void on_abort(int sig)
{
    (void)sig;
    static atomic_flag reporting = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&reporting))
        for (;;) /* another thread reports, then ends the process */
            pause();
    fflush(stdout);
    report_failure(gen.fail_kind != NULL ? gen.fail_kind : "abort");
}

static void gen_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    fprintf(stderr, "test_future_gen: FAIL: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    gen.fail_kind = strncmp(fmt, "generator", 9) == 0 ? "generator bug" : "wrong result";
    abort();
}

static void on_hang(void *ctx)
{
    (void)ctx;
    gen.fail_kind = "hang";
}

/* ---- the programs, one after another on one pool ----------------------------------------- */

static run the_run; /* large: static */

/* Futures whose handle main still holds are got (main waits there); the rest must have ended
 * or been cancelled, counted by `accounted`, which also orders their handles' writes (written by
 * the futures that submitted them) before main's reads. */
static void wait_all_accounted(run *r)
{
    for (unsigned spins = 0; atomic_load(&r->accounted) < (unsigned)r->p->n; spins++) {
        if (spins < 1000) {
            sched_yield();
        } else {
            struct timespec ts = {0, 50 * 1000};
            nanosleep(&ts, NULL);
        }
    }
}

/* Main's end: a get, then the free, of each future no body freed. */
static void main_frees_the_rest(run *r)
{
    for (int y = 0; y < r->p->n; y++) {
        if (freed_in_program(r->p, y))
            continue;
        const void *res = ws_future_get(r->handle[y]);
        int status = ws_future_status(r->handle[y]);
        bool cancelled = atomic_load(&r->cancelled[y]);
        if (res != (cancelled ? NULL : (const void *)&r->value[y]) ||
            status != (cancelled ? ECANCELED : 0))
            gen_fail("main's last get of f%d returned %p with status %d (%s)", y, res, status,
                     cancelled ? "cancelled" : "not cancelled");
        ws_future_free(r->handle[y]);
        test_progress();
    }
}

static void run_program(const program *p, outside *o)
{
    run *r = &the_run;
    memset(r, 0, sizeof *r);
    r->p = p;
    for (int id = 0; id < MAX_FUTURES; id++)
        r->args[id] = (future_arg){r, id};
    for (int node = 0; node < NODES; node++)
        atomic_store(&r->at[node], -1);
    gen.run = r;
    const body *b = &p->bodies[MAIN];
    int roots = 0;
    while (roots < b->n && b->ops[roots].kind == OP_SUBMIT)
        roots++;
    uint64_t h = value_start(p, MAIN);
    run_ops(r, MAIN, 0, roots, &h);
    atomic_store(&r->gate, true);
    bool with_outside = p->bodies[OUTSIDE].n > 0;
    if (with_outside)
        outside_hand_over(o, r);
    run_ops(r, MAIN, roots, b->n, &h);
    if (with_outside)
        outside_wait(o);
    wait_all_accounted(r);
    main_frees_the_rest(r);
    check_program(r);
}

typedef struct tally {
    uint64_t programs, futures, gets, cancels, cancelled, frees;
} tally;

static void tally_program(tally *t, const program *p, const run *r)
{
    t->programs++;
    t->futures += (uint64_t)p->n;
    for (int node = 0; node < NODES; node++)
        for (int i = 0; i < p->bodies[node].n; i++) {
            uint8_t kind = p->bodies[node].ops[i].kind;
            t->gets += kind == OP_GET || kind == OP_WAIT;
            t->cancels += kind == OP_CANCEL;
            t->frees += kind == OP_FREE;
        }
    for (int y = 0; y < p->n; y++)
        t->cancelled += atomic_load(&r->cancelled[y]);
}

/* Programs first .. first + count - 1, each run `repeat` times, on one pool. */
static void run_programs(uint64_t first, uint64_t count, uint64_t repeat)
{
    gen.pool = future_pool(gen.workers, gen.no_spares, 0);
    outside o = {.work = NULL, .quit = false};
    pthread_mutex_init(&o.lock, NULL);
    pthread_cond_init(&o.cond, NULL);
    ASSERT_OK(pthread_create(&o.thread, NULL, outside_main, &o));
    test_watchdog_start("test_future_gen", HANG_SECONDS, on_hang, NULL);
    static program p;
    tally t = {0};
    for (uint64_t i = first; i < first + count; i++) {
        generate(&p, gen.seed, i);
        gen.program = &p;
        /* ThreadSanitizer ends the process on a report without an abort, so without this
         * handler's report: the last of these lines brackets the program. */
        if (WS_TEST_TSAN && !gen.quiet && (i - first) % 64 == 0)
            printf("test_future_gen: programs from %" PRIu64 "\n", i);
        for (gen.repeat = 0; gen.repeat < repeat; gen.repeat++) {
            run_program(&p, &o);
            tally_program(&t, &p, &the_run);
        }
    }
    gen.program = NULL;
    test_watchdog_stop();
    pthread_mutex_lock(&o.lock);
    o.quit = true;
    pthread_cond_broadcast(&o.cond);
    pthread_mutex_unlock(&o.lock);
    ASSERT_OK(pthread_join(o.thread, NULL));
    ws_stats st;
    ws_pool_stats(gen.pool, &st);
    ws_pool_destroy(gen.pool);
    if (!gen.quiet)
        printf("test_future_gen: %" PRIu64 " program runs on %u workers (%s): %" PRIu64
               " futures, %" PRIu64 " gets, %" PRIu64 " cancels (%" PRIu64 " futures cancelled), "
               "%" PRIu64 " frees inside the programs; %" PRIu64 " leapfrogs, %" PRIu64
               " steals; every result as the serial interpreter's\n",
               t.programs, gen.workers, gen.no_spares ? "WS_NO_SPARES" : "default spares",
               t.futures, t.gets, t.cancels, t.cancelled, t.frees, st.leapfrogs, st.steals);
}

/* ---- --survey: every program, in child processes, failures counted ----------------------- */

/* The failures of a survey, by cause: the watchdog's hang, a wrong result, or the library's
 * message for an abort of its own (its line on stderr, "worksteal: function: reason"). */
typedef struct causes {
    char name[16][160];
    uint64_t count[16];
    int n;
} causes;

static void causes_add(causes *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->name[i], name) == 0) {
            c->count[i]++;
            return;
        }
    if (c->n == 16)
        name = "other";
    int i = c->n < 16 ? c->n++ : 15;
    snprintf(c->name[i], sizeof c->name[i], "%s", name);
    c->count[i]++;
}

/* Runs programs from `next` in a child, its stderr read here. Returns the index of the program
 * that failed and adds its cause, or `end` if every one passed. */
static uint64_t survey_child(uint64_t next, uint64_t end, causes *c)
{
    int fd[2];
    ASSERT_OK(pipe(fd));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        if (dup2(fd[1], STDERR_FILENO) < 0)
            _exit(99);
        gen.survey_fd = STDERR_FILENO;
        run_programs(next, end - next, 1);
        _exit(0);
    }
    close(fd[1]);
    static char out[1 << 16];
    char chunk[4096];
    size_t len = 0;
    ssize_t got;
    while ((got = read(fd[0], chunk, sizeof chunk)) > 0) { /* to the end, keeping what fits */
        size_t take = (size_t)got < sizeof out - 1 - len ? (size_t)got : sizeof out - 1 - len;
        memcpy(out + len, chunk, take);
        len += take;
    }
    out[len] = '\0';
    close(fd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        ASSERT(errno == EINTR);
    const char *line = strstr(out, "survey: ");
    uint64_t index;
    char kind[64];
    if (line == NULL || sscanf(line, "survey: %" SCNu64 " %63[^\n]", &index, kind) != 2) {
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            return end;
        fprintf(stderr, "%s", out);
        WS_TEST_FAIL("survey: a child died (status %#x) without naming its program",
                     (unsigned)status);
    }
    const char *library = strstr(out, "worksteal: ");
    char cause[160];
    if (strcmp(kind, "abort") == 0 && library != NULL)
        snprintf(cause, sizeof cause, "%.*s", (int)strcspn(library, "\n"), library);
    else
        snprintf(cause, sizeof cause, "%s", kind);
    causes_add(c, cause);
    printf("  program %" PRIu64 ": %s\n", index, cause);
    return index;
}

static void survey(uint64_t first, uint64_t count)
{
    uint64_t end = first + count, failures = 0;
    causes c = {.n = 0};
    for (uint64_t next = first; next < end; next++) {
        next = survey_child(next, end, &c);
        failures += next < end;
    }
    printf("test_future_gen --survey: programs %" PRIu64 "..%" PRIu64 " of seed %" PRIu64
           " on %u workers (%s): %" PRIu64 " failed (%.2f%%)\n",
           first, end - 1, gen.seed, gen.workers, gen.no_spares ? "WS_NO_SPARES" : "default spares",
           failures, 100.0 * (double)failures / (double)count);
    for (int i = 0; i < c.n; i++)
        printf("  %" PRIu64 " x %s\n", c.count[i], c.name[i]);
}

/* ---- main -------------------------------------------------------------------------------- */

static void usage(const char *why)
{
    fprintf(stderr,
            "test_future_gen: %s\nusage: test_future_gen WORKERS [nospares] [--seed S] "
            "[--first I] [--count N] [--repeat R] [--survey]\n",
            why);
    exit(2);
}

static uint64_t number_arg(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        usage("an option lacks its number");
    char *end;
    uint64_t v = strtoull(argv[++*i], &end, 0);
    if (*end != '\0')
        usage("not a number");
    return v;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2)
        usage("no worker count");
    char *end;
    unsigned long workers = strtoul(argv[1], &end, 10);
    if (*end != '\0' || workers == 0 || workers > 64)
        usage("the worker count must be 1 to 64");
    gen.workers = (unsigned)workers;
    uint64_t seed = (uint64_t)time(NULL), first = 0, repeat = 1;
    uint64_t count = test_scaled(50000, 250);
    bool survey_mode = false;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "nospares") == 0)
            gen.no_spares = true;
        else if (strcmp(argv[i], "--seed") == 0)
            seed = number_arg(argc, argv, &i);
        else if (strcmp(argv[i], "--first") == 0)
            first = number_arg(argc, argv, &i);
        else if (strcmp(argv[i], "--count") == 0)
            count = number_arg(argc, argv, &i);
        else if (strcmp(argv[i], "--repeat") == 0)
            repeat = number_arg(argc, argv, &i);
        else if (strcmp(argv[i], "--survey") == 0)
            survey_mode = true;
        else
            usage("unknown argument");
    }
    const char *env = getenv("WS_TEST_SEED");
    gen.seed = env != NULL && *env != '\0' ? strtoull(env, NULL, 0) : seed;
    if (count == 0 || repeat == 0)
        usage("--count and --repeat must be positive");
    printf("test_future_gen: seed %" PRIu64 " (WS_TEST_SEED overrides), programs %" PRIu64
           "..%" PRIu64 ", %u workers (%s)\n",
           gen.seed, first, first + count - 1, gen.workers,
           gen.no_spares ? "WS_NO_SPARES" : "default spares");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_abort;
    sigaction(SIGABRT, &sa, NULL);
    if (survey_mode) {
        gen.quiet = true;
        survey(first, count);
    } else {
        run_programs(first, count, repeat);
    }
    printf("ok\n");
    return 0;
}
