/* profile.c: work and span measurement (for ws_pool_profile, profile_pool.c).
 *
 * The measured computation is a series-parallel DAG of strands: pieces of serial code between
 * fork-join events. Each running function instance has a frame (on the C stack, found through a
 * thread-local pointer) that accumulates, for the part of the DAG it has executed so far:
 *   work   the sum of its strands' times and of its children's work (T1);
 *   span   the longest path through it (T-infinity);
 *   bspan  the burdened span: the span where every path through a stolen child also carries the
 *          measured cost of that steal (see steal_cost).
 * A strand's time is added to work, span and bspan alike. The fork-join events combine:
 *   ws_join(a, b)    work += work(a) + work(b); span += max(span(a), span(b));
 *                    bspan += max(bspan(a), bspan(b) + steal cost of b, if b was stolen).
 *   ws_spawn(t)      remembers span and bspan at the spawn point, in a slot for t.
 *   ws_sync(t)       work += work(t); span = max(span, span at spawn + span(t)); same for bspan.
 * A child runs in a fresh frame wherever it runs (inline at the join or sync, or on a thief),
 * and its totals travel back to the parent in a slot (ws__prof_slot) that the task points to;
 * the thief fills it before completing the task, and the completion's release publishes it.
 * Time spent waiting for a stolen child or a group, looking for work or parked belongs to no
 * strand.
 *
 * How a strand is timed. A strand's time is the CPU time its thread spent on it, measured
 * without a system call per read (docs/profiling.md has the measurements behind each choice):
 *  - The clock is the tick counter of platform.h (the invariant TSC, 10-20 ns a read, else the
 *    monotonic clock through the vDSO), not the thread CPU-time clock, a system call of about
 *    0.7 us here: one such read inside every strand made fine-grained spans 5-20x too long.
 *  - What an empty strand measures (the tail of one read and the head of the next) is
 *    calibrated once per process and taken off every strand.
 *  - The counter is a wall clock, so a strand during which the thread lost its CPU (to another
 *    program) would be charged the time slice of that program. Every strand or gap between
 *    strands longer than LONG_INTERVAL_NS reads the thread's CPU-time clock too, and a long
 *    strand loses the time the thread was off its CPU since the previous such reading (every
 *    interval in between was short, so could not hide a preemption). Short intervals are not
 *    checked: a preemption lasts longer than they do.
 * The remaining error is what the machine charges to the thread itself: interrupts, and on a
 * virtual machine the host's stalls of the virtual CPU (30-70 us, a hundred times a second or
 * more here), which no clock of the thread can tell from its own work. Time waiting for a stolen
 * child, looking for work or parked is in no strand, and neither is an unrelated task that a
 * waiting worker runs (an external or group job: run outside any frame). Steal costs, which are
 * latencies, are timed with the monotonic clock and kept apart, in the burdened span only.
 *
 * This is the measurement of Cilkview and Cilkscale (He, Leiserson and Leiserson, "The Cilkview
 * scalability analyzer", SPAA 2010), done by the runtime instead of compiler instrumentation,
 * with timers instead of instruction counts. The figures are those of the DAG, independent of
 * how the run was scheduled, up to timer noise.
 *
 * Cost when not profiling: none on the fork-join fast path. Profiling closes every worker's
 * fast path (ws__wdeque_force_slow), which sends every join to join.c's general path, where the
 * instrumentation is; ws_spawn and ws_sync test one per-worker flag.
 */
#include "profile.h"
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ws__frame {
    uint64_t work, span, bspan;
    uint64_t free_work, free_span; /* work and span with each stalled strand's stall taken off */
    uint64_t stalled;              /* strands found stalled, its children's included */
    uint64_t strands;              /* strands measured in this instance, its children's included */
    ws_fn fn;                      /* the function this instance runs */
    uint64_t cycles_start; /* the thread's user-mode cycles at the strand's start (cycles mode) */
    unsigned own_strands;  /* strands of this instance alone, so far */
    uint64_t strand_start; /* ws__ticks() at the start of the current strand */
} ws__frame;

/* The frame of the function instance running on this thread, NULL when not profiling. */
static _Thread_local ws__frame *cur_frame WS_TLS_FAST;

/* The strand clock, calibrated once per process (see calibrate); read by every strand (lines of
 * its own, see WS_CACHE_LINE in platform.h). */
typedef struct strand_clock {
    alignas(WS_CACHE_LINE) double ns_per_tick;
    uint64_t residual;   /* ticks an empty strand measures: taken off every strand */
    uint64_t long_ticks; /* a strand or gap longer than this is checked for time off the CPU */
    double overhead_ns;  /* the instrumentation's own time per strand */
    uint64_t quantum;    /* the smallest difference two reads of the counter show, ticks */
    bool cycles;         /* WS_PROFILE_CYCLES=1 and the machine counts user-mode cycles */
    double ns_per_cycle; /* then: calibrated against the tick counter */
} strand_clock;
static strand_clock clk = {.ns_per_tick = 1.0, .long_ticks = UINT64_MAX};
static pthread_once_t clk_once = PTHREAD_ONCE_INIT;

/* Per thread: the latest strand boundary, and the latest point where the tick counter, the
 * thread's CPU-time clock and its count of context switches were read together (time off the
 * CPU is counted from there). */
typedef struct thread_clock {
    uint64_t last;
    uint64_t sync_ticks, sync_cpu_ns, sync_switches;
} thread_clock;
static _Thread_local thread_clock tclk WS_TLS_FAST;

/* Intervals longer than this are checked against the CPU-time clock: a preemption by another
 * program lasts far longer (a time slice), and the check's system call is then a small part of
 * what it checks. */
enum { LONG_INTERVAL_NS = 5000 };

static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static uint64_t elapsed(uint64_t from, uint64_t to)
{
    return to > from ? to - from : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* The test clock                                                                            */
/* ---------------------------------------------------------------------------------------- */

/* Set by tests only (ws__prof_set_test_clock); read at every strand boundary (a line of its
 * own, see WS_CACHE_LINE in platform.h). */
static struct {
    alignas(WS_CACHE_LINE) _Atomic(ws__prof_clock_fn) now;
    _Atomic uint64_t quantum; /* ns; 0: 1, the default */
} test_clock;

void ws__prof_set_test_clock(ws__prof_clock_fn now)
{
    /* relaxed: set while no profile runs; the next profile's root injection (a release, read
     * with an acquire by the worker that takes the root, and on by steals) publishes it. */
    ws_store_relaxed(&test_clock.now, now);
}

static ws__prof_clock_fn test_clock_fn(void)
{
    return ws_load_relaxed(&test_clock.now); /* relaxed: see ws__prof_set_test_clock */
}

void ws__prof_set_test_quantum(uint64_t ns)
{
    ws_store_relaxed(&test_clock.quantum, ns); /* relaxed: as ws__prof_set_test_clock */
}

static uint64_t test_clock_quantum(void)
{
    uint64_t q = ws_load_relaxed(&test_clock.quantum); /* relaxed: see ws__prof_set_test_clock */
    return q > 0 ? q : 1;
}

/* ---------------------------------------------------------------------------------------- */
/* Stalls                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* A stall is time the machine takes from a CPU without switching its thread out: interrupts
 * and, on a virtual machine, the host holding the virtual CPU. It is charged to the thread by
 * its CPU-time clock and the tick counter alike, and on this guest it is local to one vCPU (of
 * the gaps over 5 us that a thread spinning on each vCPU saw without being switched out, about
 * 10% overlapped a gap of the other; docs/profiling.md), so no other thread can see it either.
 * What is left is the strand's own length: a stall shows as a strand far longer than its like,
 * the recent strands of the same place in the program.
 *
 * A place is the function the frame runs, the strand's position in the frame (first, second,
 * third, the later ones together) and how the strand ended (at a fork or a wait, or at the
 * function's return), so that the leaves of a recursion and its inner calls are different
 * places. Each thread keeps the last STALL_HISTORY strands of each place; from them, at the
 * STALL_HISTORY_MIN-th strand, at twice that, then every STALL_HISTORY strands (a sort of the
 * history each time), it computes the place's figures: its lower quartile q1 and median q2,
 * the length from which a strand is stalled (q2 plus STALL_SPREADS lower spreads, q2 - q1 less
 * a quantum of the clock, and at least STALL_MIN_QUANTA quanta), and its typical length (the
 * mean of its recent strands short of that). A strand is then judged against the figures
 * computed before it:
 *  - stalled if that long: it counts at the typical length;
 *  - within BAND_QUANTA quanta of the typical length, either way, or anywhere short of a
 *    stall in a place whose lower half lies within that band (alike strands): it counts at the
 *    typical length too, since a strand read with an error of up to a quantum at each end
 *    cannot be told from it;
 *  - otherwise as measured.
 * So a stall-free length exceeds the raw one by at most BAND_QUANTA quanta.
 * The lower half, because stalls only ever add time: up to half of the recent strands may be
 * stalled without moving q1 or q2 (they come in bursts here: at load 3-7, more than four of
 * sixteen 20 us leaves in a row now and then, which moved the upper quartile of the rule this
 * replaces), and 32 of them, so that a burst of up to 15 is judged. The spread, so that a place
 * whose strands vary by nature (the fan's children of 50 to 400 us: a spread of 50 us or more)
 * is left alone, while one whose strands are alike (the tree's 20 us leaves, fib's strands of
 * a few ns) has stalls of a few quanta found. The band, because the span is a maximum over
 * paths: fib(25)'s critical path has 49 strands of about 4 ns read on a clock of 9 ns quanta,
 * and the path whose strands happened to read a quantum long measured the span twice over;
 * counted at their place's typical length, the strands of every path are read without that
 * bias, and the work, a sum, keeps its mean (the band takes off about as much as it adds).
 *
 * A thread whose place is younger than STALL_HISTORY_MIN (a thief's first leaves, the first
 * strands of a thread that touch its stack) judges by the figures another thread of the same
 * pool published for that place (hints, below), if any.
 *
 * What this misses: a stall in a place no thread of the pool has seen STALL_HISTORY_MIN times,
 * and one shorter than STALL_MIN_QUANTA quanta or than the place's spread. What it takes for a
 * stall: a strand legitimately much longer than most of its place's recent ones (a place where
 * a minority of the strands is long: the top merges of a recursive sort after its small ones),
 * and page faults. The raw figures stay beside the stall-free ones. Tried and not kept: the
 * upper quartile exceeded by three interquartile ranges (missed the stalls of bursts, and with
 * a floor of 1 us every stall of fib's strands), the median exceeded by half (the fan's 400 us
 * child was one), the second longest recent strand exceeded by half (stalls were missed when
 * two of the recent strands held one). */
enum {
    STALL_HISTORY = 32,    /* recent strands kept per place (a power of two) */
    STALL_HISTORY_MIN = 8, /* recent strands a place needs before it judges one */
    STALL_PLACES = 64,     /* places tracked per thread, direct-mapped */
    STALL_LATER = 3,       /* positions in a frame told apart: 0, 1, 2, the rest */
    STALL_SPREADS = 8,     /* a stall exceeds the median by this many lower spreads */
    STALL_MIN_QUANTA = 3,  /* and by at least this many quanta of the clock */
    BAND_QUANTA = 2,       /* a strand this close to its place's typical length is typical */
};

/* A place's figures, in the clock's units (ticks, or ns on the test clock). */
typedef struct place_figures {
    uint64_t typical;   /* the mean of the recent strands that were not stalled */
    uint64_t low, high; /* a strand in [low, high) counts at the typical length */
    uint64_t stall_at;  /* a strand this long or longer is stalled */
} place_figures;

typedef struct strand_place {
    uintptr_t key;     /* 0: free */
    unsigned n;        /* strands recorded (the last STALL_HISTORY kept, a ring) */
    place_figures fig; /* valid once n >= STALL_HISTORY_MIN */
    uint64_t ticks[STALL_HISTORY];
} strand_place;

/* Per thread; a collision replaces the older place. Not initial-exec: 20 KiB is more static
 * TLS than a library loaded by dlopen may have. */
static _Thread_local strand_place places[STALL_PLACES];

/* Hints: the figures of each place most recently computed by any thread of a pool, for the
 * threads that have not seen the place often enough. A slot holds one place of one pool (by
 * the pool's serial number); a slot that another place or pool takes over is simply
 * overwritten. A hint publishes nothing but itself, and a reader must never mix two of them
 * (the figures of one place under the key of another: a strand misjudged, where the exact-clock
 * tests expect every judgment the same on any schedule). So each slot has a version, odd while
 * a writer rewrites it: a writer takes the slot by a CAS from an even version (one that finds
 * it taken leaves it: the hint is only a hint), stores the fields with release and the next
 * even version with release; a reader loads the version with acquire, the fields with acquire,
 * then the version again, and keeps the hint only if both reads give the same even version. A
 * field written by a later writer, read with acquire, makes that writer's odd version visible
 * to the second read. */
typedef struct place_hint {
    _Atomic uint64_t version;
    _Atomic uintptr_t key;
    _Atomic unsigned pool;
    _Atomic uint64_t typical, low, high, stall_at;
} place_hint;
static place_hint hints[STALL_PLACES];

/* What a judgment needs of the clock: its quantum (the smallest difference two reads show). */
typedef struct stall_clock {
    uint64_t quantum;
} stall_clock;

static unsigned slot_of(uintptr_t key)
{
    return (unsigned)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 58) & (STALL_PLACES - 1);
}

static uintptr_t place_key(const ws__frame *f, bool at_return)
{
    unsigned pos = f->own_strands < STALL_LATER ? f->own_strands : STALL_LATER;
    /* Functions are at least 16-byte aligned here, and pos * 2 + 1 < 16: the low bits are
     * free. Keys may still meet in the table, which only restarts a history. */
    return (uintptr_t)f->fn + pos * 2u + (at_return ? 1u : 0u);
}

/* The pool of the calling thread, by serial number, noted when the thread enters a profiled
 * computation (its root, or a stolen child); 0 until then (no hints). A worker stays in its
 * pool for life. */
static _Thread_local unsigned thread_pool_serial WS_TLS_FAST;

void ws__prof_enter_pool(unsigned serial)
{
    thread_pool_serial = serial;
}

static unsigned thread_pool(void)
{
    return thread_pool_serial;
}

static void publish_hint(uintptr_t key, const place_figures *fig)
{
    unsigned pool = thread_pool();
    if (pool == 0)
        return;
    place_hint *h = &hints[slot_of(key)];
    /* relaxed: the CAS only takes the slot; the release stores below order it before them. */
    uint64_t v = ws_load_relaxed(&h->version);
    if ((v & 1) != 0 || !ws_cas_relaxed(&h->version, &v, v + 1))
        return; /* another writer has the slot */
    /* release, all: a reader's acquire load of any of them sees the odd version (above). */
    ws_store_release(&h->key, key);
    ws_store_release(&h->pool, pool);
    ws_store_release(&h->typical, fig->typical);
    ws_store_release(&h->low, fig->low);
    ws_store_release(&h->high, fig->high);
    ws_store_release(&h->stall_at, fig->stall_at);
    ws_store_release(&h->version, v + 2); /* release: pairs with read_hint's first load */
}

/* The hint for key in the calling thread's pool, if there is one. */
static bool read_hint(uintptr_t key, place_figures *fig)
{
    unsigned pool = thread_pool();
    place_hint *h = &hints[slot_of(key)];
    /* acquire: pairs with publish_hint's release of the even version: its fields are seen. */
    uint64_t v = ws_load_acquire(&h->version);
    /* acquire, all: pairs with a later writer's release stores (see place_hint). */
    if ((v & 1) != 0 || pool == 0 || ws_load_acquire(&h->key) != key ||
        ws_load_acquire(&h->pool) != pool)
        return false;
    fig->typical = ws_load_acquire(&h->typical);
    fig->low = ws_load_acquire(&h->low);
    fig->high = ws_load_acquire(&h->high);
    fig->stall_at = ws_load_acquire(&h->stall_at);
    /* relaxed: after the acquire loads above, which a later writer's odd version precedes. */
    return ws_load_relaxed(&h->version) == v;
}

/* Moves the k-th smallest of v[0, n) to v[k], with none larger before it and none smaller after
 * (Hoare's selection: linear on average, where sorting the history cost about 80 instructions
 * a strand, callgrind). */
static void select_kth(uint64_t *v, int n, int k)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        uint64_t pivot = v[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                uint64_t t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return; /* j < k < i: v[k] equals the pivot, in place */
    }
}

/* The figures of a place's recent strands (see above). */
static place_figures figures_of(const strand_place *p, const stall_clock *sc)
{
    uint64_t v[STALL_HISTORY];
    int n = p->n < STALL_HISTORY ? (int)p->n : STALL_HISTORY;
    memcpy(v, p->ticks, sizeof v);
    select_kth(v, n, n / 2);
    select_kth(v, n / 2, n / 4); /* among the lower half, all at most v[n / 2] */
    uint64_t q1 = v[n / 4], q2 = v[n / 2], band = BAND_QUANTA * sc->quantum;
    uint64_t spread = q2 - q1 > sc->quantum ? q2 - q1 - sc->quantum : 0;
    place_figures fig = {.stall_at =
                             q2 + max_u64(STALL_SPREADS * spread, STALL_MIN_QUANTA * sc->quantum)};
    uint64_t sum = 0;
    unsigned kept = 0; /* at least half: those up to v[n / 2] = q2 */
    for (int i = 0; i < n; i++) {
        sum += v[i] < fig.stall_at ? v[i] : 0;
        kept += v[i] < fig.stall_at;
    }
    fig.typical = sum / kept;
    fig.low = fig.typical > band ? fig.typical - band : 0;
    /* Alike (the lower half within the band): nothing short of a stall is measurable. */
    fig.high = q2 - q1 <= band ? fig.stall_at : fig.typical + band + 1;
    return fig;
}

/* The stall-free length of a strand of d ticks at place key (see above), and whether it was
 * stalled; records d. */
static uint64_t stall_free_ticks(uintptr_t key, uint64_t d, const stall_clock *sc, bool *stalled)
{
    strand_place *p = &places[slot_of(key)];
    if (p->key != key) {
        p->key = key;
        p->n = 0;
    }
    place_figures fig = p->fig;
    bool judged = p->n >= STALL_HISTORY_MIN || read_hint(key, &fig);
    /* The raw length: a place whose strands really grow moves its figures after a few. */
    p->ticks[p->n++ % STALL_HISTORY] = d;
    if (p->n % STALL_HISTORY == 0 || p->n == STALL_HISTORY_MIN || p->n == 2 * STALL_HISTORY_MIN) {
        p->fig = figures_of(p, sc);
        publish_hint(key, &p->fig);
    }
    *stalled = judged && d >= fig.stall_at;
    if (*stalled || (judged && d >= fig.low && d < fig.high))
        return fig.typical;
    return d;
}

/* ---------------------------------------------------------------------------------------- */
/* User-mode cycles (WS_PROFILE_CYCLES=1)                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Where the machine has a PMU, its count of the thread's user-mode cycles leaves out
 * interrupts and the host's stalls: with WS_PROFILE_CYCLES=1, each strand's stall-free length
 * is its user-mode cycles, converted at the rate calibrated once against the tick counter
 * (which assumes the core's clock steady over the run), and the detector above is not used.
 * Each read is a system call (hundreds of ns), spent in the kernel, so it lengthens the raw
 * figures but not the stall-free ones. A thread whose counter cannot be opened uses the
 * detector; where the first one cannot (this virtual machine: ENOENT), one line on stderr
 * says so and the mode stays off. */
enum { CYCLES_UNTRIED, CYCLES_OPEN, CYCLES_NONE };
static _Thread_local int cycles_state, cycles_fd;
static pthread_key_t cycles_key; /* closes a thread's counter when it exits */

static void close_cycles(void *fd_plus_one)
{
    ws__user_cycles_close((int)(intptr_t)fd_plus_one - 1);
}

/* This thread's counter, opened on first use; false if it has none. */
static bool thread_cycles(void)
{
    if (WS_UNLIKELY(cycles_state == CYCLES_UNTRIED)) {
        cycles_fd = ws__user_cycles_open();
        cycles_state = cycles_fd >= 0 ? CYCLES_OPEN : CYCLES_NONE;
        if (cycles_fd >= 0 &&
            pthread_setspecific(cycles_key, (void *)(intptr_t)(cycles_fd + 1)) != 0) {
            ws__user_cycles_close(cycles_fd);
            cycles_state = CYCLES_NONE;
        }
    }
    return cycles_state == CYCLES_OPEN;
}

static void calibrate_cycles(void)
{
    const char *env = getenv("WS_PROFILE_CYCLES");
    if (env == NULL || strcmp(env, "1") != 0)
        return;
    int fd = ws__user_cycles_open();
    if (fd < 0) {
        fprintf(stderr,
                "worksteal: WS_PROFILE_CYCLES=1: no user-mode cycle counter here (%s); stalls "
                "are estimated from strand lengths\n",
                strerror(-fd));
        return;
    }
    uint64_t c0 = ws__user_cycles_read(fd), t0 = ws__ticks(), t1;
    do { /* 2 ms of user-mode work */
        t1 = ws__ticks();
    } while ((double)(t1 - t0) * clk.ns_per_tick < 2e6);
    uint64_t c1 = ws__user_cycles_read(fd);
    ws__user_cycles_close(fd);
    if (c0 == UINT64_MAX || c1 == UINT64_MAX || c1 <= c0 ||
        pthread_key_create(&cycles_key, close_cycles) != 0)
        return;
    clk.ns_per_cycle = (double)(t1 - t0) * clk.ns_per_tick / (double)(c1 - c0);
    clk.cycles = true;
}

bool ws__prof_uses_cycles(void)
{
    return clk.cycles;
}

/* Reads the CPU-time clock and the switch count, and notes them with the tick counter; returns
 * the counter after. */
static uint64_t resync(void)
{
    uint64_t a = ws__ticks();
    uint64_t cpu = ws__thread_cpu_ns();
    tclk.sync_switches = ws__thread_switches();
    uint64_t b = ws__ticks();
    tclk.sync_ticks = a + (b - a) / 2;
    tclk.sync_cpu_ns = cpu;
    return b;
}

/* The ticks of the strand [start, now] on this thread, less the time the thread spent off its
 * CPU meanwhile, when the strand was long enough to have been preempted. Whether the thread was
 * switched out is told by its context-switch count; only then is the CPU-time clock used, since
 * on a virtual machine it also runs slow or fast by tens to hundreds of us without any switch:
 * the guest learns of stolen time late, and takes it back from whatever runs next (taking the
 * difference off every long strand made some measure 0; docs/profiling.md). The
 * off-CPU time is measured since the last synchronisation point; every interval between that
 * point and the strand's start was shorter than long_ticks, else it would have synchronised. */
static uint64_t strand_ticks(uint64_t start, uint64_t now)
{
    uint64_t d = now > start ? now - start : 0; /* 0 if the counters of two CPUs disagree */
    tclk.last = now;
    if (d <= clk.long_ticks)
        return d;
    uint64_t from_ticks = tclk.sync_ticks, from_cpu = tclk.sync_cpu_ns;
    uint64_t from_switches = tclk.sync_switches;
    tclk.last = resync();
    if (tclk.sync_switches == from_switches && from_switches != WS_SWITCHES_UNKNOWN)
        return d;
    double wall_ns = (double)(tclk.sync_ticks - from_ticks) * clk.ns_per_tick;
    double off_ns = wall_ns - (double)(tclk.sync_cpu_ns - from_cpu);
    uint64_t off = off_ns > 0 ? (uint64_t)(off_ns / clk.ns_per_tick) : 0;
    return off < d ? d - off : 0;
}

bool ws__prof_active(void)
{
    return cur_frame != NULL;
}

/* Adds a strand of ns, free_ns without stalls (and stalled if it had one), to frame f. */
static void add_strand(ws__frame *f, uint64_t ns, uint64_t free_ns, bool stalled)
{
    f->strands++;
    f->own_strands++;
    f->work += ns;
    f->span += ns;
    f->bspan += ns;
    f->free_work += free_ns;
    f->free_span += free_ns;
    f->stalled += stalled;
}

/* Closes f's strand (at_return: the function's last), read on the tick counter. */
static void close_strand_ticks(ws__frame *f, bool at_return)
{
    uint64_t d = strand_ticks(f->strand_start, ws__ticks());
    d = d > clk.residual ? d - clk.residual : 0;
    uint64_t ns = (uint64_t)((double)d * clk.ns_per_tick);
    if (clk.cycles && thread_cycles()) {
        uint64_t c = ws__user_cycles_read(cycles_fd);
        uint64_t free_ns = (uint64_t)((double)(c - f->cycles_start) * clk.ns_per_cycle);
        bool stalled = c != UINT64_MAX && c > f->cycles_start && free_ns < ns;
        add_strand(f, ns, stalled ? free_ns : ns, stalled);
        return;
    }
    bool stalled = false;
    stall_clock sc = {clk.quantum};
    uint64_t free_d = stall_free_ticks(place_key(f, at_return), d, &sc, &stalled);
    add_strand(f, ns, (uint64_t)((double)free_d * clk.ns_per_tick), stalled);
}

static void close_strand(ws__frame *f, bool at_return)
{
    ws__prof_clock_fn test = test_clock_fn();
    if (WS_LIKELY(test == NULL)) {
        close_strand_ticks(f, at_return);
        return;
    }
    uint64_t d = elapsed(f->strand_start, test());
    bool stalled;
    stall_clock sc = {test_clock_quantum()};
    uint64_t free_d = stall_free_ticks(place_key(f, at_return), d, &sc, &stalled);
    add_strand(f, d, free_d, stalled);
}

static void open_strand_ticks(ws__frame *f)
{
    uint64_t now = ws__ticks();
    /* After a long gap (a wait, a steal, a preemption between strands), synchronise, so that
     * the gap's time off the CPU is not taken off the next long strand. */
    if (now - tclk.last > clk.long_ticks)
        now = resync();
    tclk.last = now;
    if (clk.cycles && thread_cycles()) {
        f->cycles_start = ws__user_cycles_read(cycles_fd);
        now = ws__ticks(); /* the read's system call is before the strand */
    }
    f->strand_start = now;
}

static void open_strand(ws__frame *f)
{
    ws__prof_clock_fn test = test_clock_fn();
    if (WS_LIKELY(test == NULL))
        open_strand_ticks(f);
    else
        f->strand_start = test();
}

void ws__prof_strand_end(void)
{
    ws__frame *f = cur_frame;
    if (f != NULL)
        close_strand(f, false);
}

void ws__prof_strand_begin(void)
{
    ws__frame *f = cur_frame;
    if (f != NULL)
        open_strand(f);
}

void ws__prof_run_child(ws_fn fn, void *arg, ws__prof_slot *slot)
{
    ws__frame *parent = cur_frame;
    ws__frame f = {.fn = fn};
    cur_frame = &f;
    open_strand(&f);
    fn(arg);
    close_strand(&f, true);
    cur_frame = parent;
    slot->work = f.work;
    slot->span = f.span;
    slot->bspan = f.bspan;
    slot->free_work = f.free_work;
    slot->free_span = f.free_span;
    slot->stalled = f.stalled;
    slot->strands = f.strands;
}

void ws__prof_run_unmeasured(ws_fn fn, void *arg)
{
    ws__frame *frame = cur_frame;
    cur_frame = NULL;
    fn(arg);
    cur_frame = frame;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The counter's quantum, in ticks: the median step between two reads that differ (21 ticks
 * here, 8.6 ns: this guest's counter advances in steps). */
static uint64_t quantum_of_ticks(void)
{
    enum { READS = 1001 };
    static uint64_t step[READS];
    for (int i = 0; i < READS; i++) {
        uint64_t t0 = ws__ticks(), t1;
        while ((t1 = ws__ticks()) == t0) {
        }
        step[i] = t1 - t0;
    }
    qsort(step, READS, sizeof step[0], compare_u64);
    return max_u64(step[READS / 2], 1);
}

/* The function of calibrate's frame: its strands go through the stall detector as any
 * profiled strand does (on the calling thread's own history, under a place of their own). */
static void calibration_strand(void *arg)
{
    (void)arg;
}

/* Measures what an empty strand measures (the median of many: the residual taken off every
 * strand) and what a strand costs in all, with the functions that open and close strands (the
 * calling thread's own frame, if it has one, is left alone, and nothing is counted). */
static void calibrate(void)
{
    enum { SAMPLES = 2001 };
    static uint64_t inside[SAMPLES], cycle[SAMPLES];
    clk.ns_per_tick = ws__ticks_ns_per_tick();
    clk.long_ticks = (uint64_t)(LONG_INTERVAL_NS / clk.ns_per_tick);
    clk.quantum = quantum_of_ticks();
    calibrate_cycles();
    ws__frame f = {.fn = calibration_strand}; /* judged like any, so that the cost counts */
    for (int i = 0; i < SAMPLES; i++) {
        uint64_t t = ws__ticks();
        open_strand_ticks(&f); /* the counter's path, whatever clock a test has set */
        uint64_t before = f.work;
        close_strand_ticks(&f, true);
        inside[i] = f.work - before; /* ns, since the residual is still 0 */
        cycle[i] = ws__ticks() - t;
    }
    qsort(inside, SAMPLES, sizeof inside[0], compare_u64);
    qsort(cycle, SAMPLES, sizeof cycle[0], compare_u64);
    clk.residual = (uint64_t)((double)inside[SAMPLES / 2] / clk.ns_per_tick);
    clk.overhead_ns = (double)cycle[SAMPLES / 2] * clk.ns_per_tick;
}

/* The steal cost charged to the burdened span: what the thief spent from the start of its
 * successful steal attempt to starting the child (the steal itself, and the cache misses on the
 * task record). Not the time the child sat in the deque before a thief came, nor the time the
 * parent spent on other work after the child finished: those come from this run's schedule,
 * not from the DAG, and charging them made the burdened span of an irregular tree larger than
 * its work. */
static uint64_t steal_cost(const ws__prof_slot *slot, bool stolen)
{
    if (!stolen || slot->steal_ns == 0)
        return 0;
    return elapsed(slot->steal_ns, slot->start_ns);
}

void ws__prof_mark_stolen(ws__worker *w, ws__prof_slot *slot)
{
    ws__prof_enter_pool(w->pool->serial);
    slot->steal_ns = w->steal_begin_ns;
    slot->start_ns = ws__now_ns();
}

void ws__prof_join_merge(const ws__prof_slot *a, const ws__prof_slot *b, bool b_stolen)
{
    ws__frame *f = cur_frame;
    if (f == NULL)
        return;
    f->work += a->work + b->work;
    f->strands += a->strands + b->strands;
    f->span += max_u64(a->span, b->span);
    f->free_work += a->free_work + b->free_work;
    f->free_span += max_u64(a->free_span, b->free_span);
    f->stalled += a->stalled + b->stalled;
    f->bspan += max_u64(a->bspan, b->bspan + steal_cost(b, b_stolen));
}

void ws__prof_spawn_mark(ws__prof_slot *slot)
{
    ws__frame *f = cur_frame;
    slot->spawn_span = f != NULL ? f->span : 0;
    slot->spawn_bspan = f != NULL ? f->bspan : 0;
    slot->spawn_free_span = f != NULL ? f->free_span : 0;
    slot->steal_ns = 0;
}

void ws__prof_sync_merge(const ws__prof_slot *slot, bool stolen)
{
    ws__frame *f = cur_frame;
    if (f == NULL)
        return;
    f->work += slot->work;
    f->strands += slot->strands;
    f->span = max_u64(f->span, slot->spawn_span + slot->span);
    f->free_work += slot->free_work;
    f->free_span = max_u64(f->free_span, slot->spawn_free_span + slot->free_span);
    f->stalled += slot->stalled;
    f->bspan = max_u64(f->bspan, slot->spawn_bspan + slot->bspan + steal_cost(slot, stolen));
}

double ws__prof_calibrate(void)
{
    pthread_once(&clk_once, calibrate);
    return clk.overhead_ns;
}

double ws__prof_quantum_ns(void)
{
    if (test_clock_fn() != NULL)
        return (double)test_clock_quantum();
    return (double)clk.quantum * clk.ns_per_tick;
}
