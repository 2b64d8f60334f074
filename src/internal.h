/* internal.h: private to the library; declarations shared between src/ files, grouped by the
 * file that defines them. Never installed.
 *
 * The main types:
 *   ws__task     a unit of work: the record behind ws_task, join children, external jobs.
 *   ws__worker   one worker thread: its deque, its private state and its counters.
 *   ws__injector the FIFO queue external submissions go through (injector.c).
 *   ws__idle     who is searching or parked, and the event counter sleepers wait on (idle.c).
 *   ws_pool      the workers, the injectors, the idle state and the lifecycle (pool.c).
 */
#ifndef WS_INTERNAL_H
#define WS_INTERNAL_H

#include "atomics.h"
#include "deque.h"
#include "idle_state.h"
#include "platform.h"
#include "worksteal.h"

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ws__injector ws__injector;
typedef struct ws__worker ws__worker;

/* ---- contract violations (error.c) -------------------------------------------------------- */

/* Reports an API contract violation on stderr, naming the function, and aborts. */
_Noreturn void ws__contract_violation(const char *function, const char *what);

/* ---- the deque a worker uses ------------------------------------------------------------- */
/* The product uses the split deque (deque.h; docs/deque.md says why not Chase-Lev). A
 * bench-only build of the library (WS_LOCKED_DEQUE) runs the same scheduler on the mutex deque,
 * so that the two can be compared on whole programs; it has no fast path (fits is false). */
#ifdef WS_LOCKED_DEQUE
typedef ws_locked_deque ws__wdeque;
#define ws__wdeque_init(q, cap, reserve) ((void)(reserve), ws_locked_deque_init((q), (cap)))
#define ws__wdeque_destroy               ws_locked_deque_destroy
#define ws__wdeque_fits(q)               ((void)(q), false)
#define ws__wdeque_push_fitting(q, item) ((void)ws_locked_deque_push((q), (item)))
#define ws__wdeque_pop(q)                ws__item_task(ws_locked_deque_pop(q))
#define ws__wdeque_steal(q)              ws__item_task(ws_locked_deque_steal(q))
#define ws__wdeque_steal_noting(q, lost) ((void)(lost), ws__wdeque_steal(q)) /* never lost */
#define ws__wdeque_steal_bounded(q, b)   ws__item_task(ws__locked_deque_steal_bounded((q), (b)))
#define ws__wdeque_peek_private(q)       ((void)(q), (ws__task *)NULL)
#define ws__wdeque_newest_is_free        ws__locked_deque_newest_is_free
#define ws__wdeque_newest_is             ws__locked_deque_newest_is
#define ws__wdeque_asked_for(q)          ((void)(q), false)             /* no private items */
#define ws__wdeque_pop_private(q)        ((void)ws_locked_deque_pop(q)) /* never: no peek */
#define ws__wdeque_size                  ws_locked_deque_size
#define ws__wdeque_growths(q)            ((q)->growths)
#define ws__wdeque_set_depth_cap(q, cap) ((void)(q), (void)(cap))
#define ws__wdeque_force_slow(q)         ((void)(q))
#define ws__wdeque_publish_all(q)        ((void)(q), false)
#define ws__wdeque_trim(q)               ((void)(q)) /* it frees old arrays at once */
static inline int64_t ws__wdeque_push_slow(ws_locked_deque *q, void *item, bool *published)
{
    *published = false;
    return ws__locked_deque_push_size(q, item);
}
#else
typedef ws_sdeque ws__wdeque;
#define ws__wdeque_init                  ws_sdeque_init
#define ws__wdeque_destroy               ws_sdeque_destroy
#define ws__wdeque_fits                  ws__sdeque_fits
#define ws__wdeque_push_fitting          ws__sdeque_push_fitting
#define ws__wdeque_push_slow             ws__sdeque_push_slow
#define ws__wdeque_pop(q)                ws__owner_take(q, ws__sdeque_pop(q))
#define ws__wdeque_steal(q)              ws__item_task(ws_sdeque_steal(q))
#define ws__wdeque_steal_noting(q, lost) ws__item_task(ws__sdeque_steal_noting((q), (lost)))
#define ws__wdeque_steal_bounded(q, b)   ws__item_task(ws__sdeque_steal_bounded((q), (b)))
#define ws__wdeque_peek_private(q)       ws__owner_take(q, ws__sdeque_peek_private(q))
#define ws__wdeque_newest_is_free        ws__sdeque_newest_is_free
#define ws__wdeque_newest_is             ws__sdeque_newest_is
#define ws__wdeque_asked_for             ws__sdeque_asked_for
#define ws__wdeque_pop_private           ws__sdeque_pop_private
#define ws__wdeque_size                  ws_sdeque_size
#define ws__wdeque_growths(q)            ws_load_relaxed(&(q)->growths) /* relaxed: a statistic */
#define ws__wdeque_set_depth_cap         ws__sdeque_set_depth_cap
#define ws__wdeque_force_slow            ws__sdeque_force_slow
#define ws__wdeque_publish_all           ws__sdeque_publish_all
#define ws__wdeque_trim                  ws__sdeque_trim
#endif
/* The pops, steals and peek above hand back tasks (ws__item_task); pushes take deque items
 * (ws__deque_item). */
/* Owner only: the deque's bottom (both deques keep it in `bottom`). relaxed: the owner's own. */
#define ws__wdeque_owner_bottom(q) ws_load_relaxed(&(q)->bottom)

/* The inline join of worksteal.h reads the owner's fields of the split deque through struct
 * ws__fast, and builds its child's record as a struct ws__join_rec: the layouts must agree. */
#define WS_SAME_FIELD_(a, fa, b, fb)                                 \
    _Static_assert(offsetof(a, fa) == offsetof(b, fb) &&             \
                       sizeof(((a *)0)->fa) == sizeof(((b *)0)->fb), \
                   #a "." #fa " must match " #b "." #fb)
WS_SAME_FIELD_(ws_sdeque, bottom, struct ws__fast, bottom);
WS_SAME_FIELD_(ws_sdeque, take_bar, struct ws__fast, take_bar);
WS_SAME_FIELD_(ws_sdeque, fast_base, struct ws__fast, fast_base);
WS_SAME_FIELD_(ws_sdeque, slot, struct ws__fast, slot);
WS_SAME_FIELD_(ws_sdeque, mask, struct ws__fast, mask);
WS_SAME_FIELD_(ws_sdeque, limit, struct ws__fast, limit);
WS_SAME_FIELD_(ws_sdeque, fast_joins, struct ws__fast, fast_joins);
WS_SAME_FIELD_(ws_sdeque, open_spawns, struct ws__fast, open_spawns);
WS_SAME_FIELD_(ws_sdeque, fast_syncs, struct ws__fast, fast_syncs);
WS_SAME_FIELD_(ws_sdeque, futures, struct ws__fast, futures);
WS_SAME_FIELD_(ws_sdeque, pool, struct ws__fast, pool);
WS_SAME_FIELD_(ws_sdeque, runner, struct ws__fast, runner);
WS_SAME_FIELD_(ws_sdeque, futures_room, struct ws__fast, futures_room);
WS_SAME_FIELD_(ws_sdeque, dead_slots, struct ws__fast, dead_slots);

/* ---- the task stack of typed tasks (frames.c) -------------------------------------------- */

/* The library's view of worksteal.h's struct ws__frames: the same layout, with the words that
 * other threads touch atomic (end_fast: thieves asking; fast_syncs: statistics readers). */
typedef struct ws__frames_words {
    char *head;
    _Atomic uint64_t end_fast;
    _Atomic uint64_t sync_bar; /* split (ws__task_stack), or WS_FRAMES_ASKED: thieves raise it */
    _Atomic uint64_t fast_syncs;
} ws__frames_words;
WS_SAME_FIELD_(ws__frames_words, head, struct ws__frames, head);
WS_SAME_FIELD_(ws__frames_words, end_fast, struct ws__frames, end_fast);
WS_SAME_FIELD_(ws__frames_words, sync_bar, struct ws__frames, sync_bar);
WS_SAME_FIELD_(ws__frames_words, fast_syncs, struct ws__frames, fast_syncs);
_Static_assert(sizeof(ws__frames_words) == sizeof(struct ws__frames), "ws__frames layout");

typedef struct ws__segment ws__segment;

/* A worker's task stack: frames in segments of the heap, the newest segment holding head. */
typedef struct ws__task_stack {
    ws__frames_words f;
    char *split;        /* the frames below it were handed to the deque (sync_bar follows it) */
    ws__segment *seg;   /* the segment head lies in; NULL until the worker runs a typed task */
    ws__segment *spare; /* the last segment left, kept for the next overflow */
    char *floor;        /* head when the typed task the worker runs now began */
    bool fresh;         /* no spawn since then, or since the deque last took the frames */
    int64_t refill;     /* frames the next spawns still hand over, one each (frames.c) */
    bool handing;       /* frames are being pushed on the deque: the push must not flush */
    /* frames.c's flush and destroy, set when the worker first runs a typed task: the layers
     * below call them through here (they run before those of frames.c, which uses them). */
    void (*flush)(struct ws__worker *w);
    void (*destroy)(struct ws__worker *w);
} ws__task_stack;

/* ---- tasks and jobs ---------------------------------------------------------------------- */

/* Task states. The state word holds: the task's kind (WS_KIND_*, shifted by WS_TASK_KIND_SHIFT;
 * 0 for the common waited task, so a join initialises the word with one store); PENDING (0)
 * while the task sits in a deque or an injector; TAKEN, or-ed with the taker's worker id + 1
 * shifted by WS_TASK_THIEF_SHIFT, once a worker took it from elsewhere (the leapfrogging hint);
 * DONE when its function has returned (exactly DONE: the completer overwrites the whole word).
 * WAITER is or-ed in by a thread that parks until DONE, so that the completer knows to wake it.
 * SYNCED marks a ws_task that ws_sync has finished with (to catch a second sync). */
enum {
    WS_TASK_PENDING = 0,
    WS_TASK_TAKEN = 1,
    WS_TASK_DONE = 2,
    WS_TASK_WAITER = 4,
    WS_TASK_PROFILED = 8, /* t->owner points to the ws__prof_slot the runner fills */
    WS_TASK_KIND_SHIFT = 4,
    WS_TASK_THIEF_SHIFT = 8,
    WS_TASK_SYNCED = 0x5d5d0003u,
};

/* What finishing a task means, by kind. */
enum {
    WS_KIND_WAITED = 0,   /* someone waits on state (a join, a sync, ws_pool_run's caller) */
    WS_KIND_DETACHED = 1, /* heap record of ws_submit: free it, count the pool's pending down */
    WS_KIND_GROUP = 2,    /* heap record of ws_group_submit: free it, count the group down */
    WS_KIND_FUTURE = 3,   /* heap record of ws_future_submit: its runner claims it (future.c) */
};

typedef struct ws__task {
    ws_fn fn;
    void *arg;
    uint32_t flags;                /* submission flags (WS_HIGH_PRIORITY), spawn flags */
    _Atomic uint32_t state;        /* see above; taker and completer write, waiter reads */
    struct ws__task *prev_spawn;   /* spawning thread only: the ws_spawn stack (join.c) */
    struct ws__task *_Atomic next; /* injector link: producers and the consumer (injector.c) */
    void *owner;                   /* the group (WS_KIND_GROUP) or pool (DETACHED) */
} ws__task;

/* A job (ws_submit, ws_group_submit): a heap record (records.c) whose task runs the job's
 * runner (group.c: task.fn, with the job as task.arg), which runs fn(arg) (or on_cancel(arg), in
 * a cancelled group), then finishes the job and frees the record. Whoever takes a job runs it
 * like any task and touches it no more. */
typedef struct ws__job {
    ws__task task;
    ws_fn fn;
    void *arg;
    ws_fn on_cancel; /* group jobs: runs instead of fn if cancelled; may be NULL */
} ws__job;

/* A future (future.c): a heap record like a job's, recycled by records.c, whose task is queued
 * on a deque or an injector and claimed (state word) by whoever runs it. */
typedef struct ws__future {
    ws__task task; /* kind WS_KIND_FUTURE; task.arg is the future, task.owner its pool */
    ws_future_fn fn;
    void *arg;
    void *result;           /* written by the runner before DONE, read after it */
    _Atomic uint32_t error; /* ws_future_fail's: set once by a CAS from 0 */
    /* worksteal.h's inline futures: the deque's bottom after the push that queued the future,
     * if the inline get may take it back from there (else WS__NOT_INLINE), and once claimed
     * INLINE, one past the index where its work begins; the worker (its struct ws__fast) on
     * whose list of free records it may go (else NULL). Written by the submitter's worker. */
    _Atomic int64_t bottom; /* relaxed accesses: the home worker's; leapfroggers after a claim */
    struct ws__fast *home;
} ws__future;
WS_SAME_FIELD_(ws__future, task, struct ws__future_rec, task);
WS_SAME_FIELD_(ws__future, fn, struct ws__future_rec, fn);
WS_SAME_FIELD_(ws__future, arg, struct ws__future_rec, arg);
WS_SAME_FIELD_(ws__future, result, struct ws__future_rec, result);
WS_SAME_FIELD_(ws__future, error, struct ws__future_rec, error);
WS_SAME_FIELD_(ws__future, bottom, struct ws__future_rec, bottom);
WS_SAME_FIELD_(ws__future, home, struct ws__future_rec, home);
WS_SAME_FIELD_(ws__task, next, struct ws__join_rec, rest[1]);

/* A cleanup that runs only while an exception unwinds the frame (C++, or C with -fexceptions:
 * the library is built with it; docs/api.md, "Exceptions"). On the normal path the guard is
 * disarmed before its scope ends and the compiler drops the call. */
#if defined(__GNUC__)
#define WS_UNWIND_GUARD(fn) __attribute__((cleanup(fn)))
#else
#define WS_UNWIND_GUARD(fn)
#endif

/* A task's kind (WS_KIND_*), written before it was published. */
static inline uint32_t ws__task_kind(ws__task *t)
{
    /* relaxed: the kind bits were written before the task was published, and nobody changes
     * them until it is finished. */
    return ws_load_relaxed(&t->state) >> WS_TASK_KIND_SHIFT & 3u;
}

/* Deque items (deque.h). A task whose kind is not WAITED is free: a future or a job, which no
 * frame is bound to wait for (a fork's child, a spawn, a handed-over stack frame are all synced
 * by the frame that pushed them). A wait helps only with work that it waits for, so the steal of
 * a wait (ws__leapfrog) never takes a free item: docs/scheduler.md, "What a wait may run". */
static inline void *ws__deque_item(ws__task *t)
{
    uintptr_t free_bit = ws__task_kind(t) != WS_KIND_WAITED ? WS_SDEQUE_ITEM_FREE : 0;
    return (void *)((uintptr_t)t | free_bit);
}
static inline ws__task *ws__item_task(void *item)
{
    return (ws__task *)(void *)((uintptr_t)item & ~WS_SDEQUE_ITEM_FREE);
}

/* Is t a job of the given group (and not another task that names something in owner)? */
static inline bool ws__task_is_job_of(ws__task *t, const void *group)
{
    return ws__task_kind(t) == WS_KIND_GROUP && t->owner == group;
}

/* A new task record for fn(arg), pending, waited for (WS_KIND_WAITED). */
static inline void ws__task_init(ws__task *t, ws_fn fn, void *arg)
{
    t->fn = fn;
    t->arg = arg;
    t->flags = 0; /* the caller sets its own; 0 is none */
    /* relaxed: the record is published by the push's release store of bottom (or the
     * injector's release link), which orders these stores before any reader. */
    ws_store_relaxed(&t->state, WS_TASK_PENDING | WS_KIND_WAITED << WS_TASK_KIND_SHIFT);
}

_Static_assert(sizeof(ws__task) <= sizeof(ws_task), "ws_task must hold a task record");
_Static_assert(sizeof(ws__task) == sizeof(struct ws__join_rec), "the inline join's record");
WS_SAME_FIELD_(ws__task, fn, struct ws__join_rec, fn);
WS_SAME_FIELD_(ws__task, arg, struct ws__join_rec, arg);
WS_SAME_FIELD_(ws__task, state, struct ws__join_rec, state);
WS_SAME_FIELD_(ws__task, flags, struct ws__join_rec, flags);
_Static_assert(alignof(ws__task) <= alignof(ws_task), "ws_task must align a task record");

/* A ws_task as a spawn uses it: the record, then the deque's bottom just after worksteal.h's
 * inline ws_spawn pushed it (WS__NOT_INLINE when the library spawned it, and once synced). */
typedef struct ws__spawn {
    ws__task task;
    int64_t bottom;
} ws__spawn;
_Static_assert(sizeof(ws__spawn) <= sizeof(ws_task), "ws_task must hold a spawn record");
WS_SAME_FIELD_(ws__spawn, bottom, struct ws__spawn_rec, bottom);

/* ---- work and span (profile.c) --------------------------------------------------------- */

/* Where a child's measured totals go (on the parent's stack for joins, on the heap for spawns):
 * written by the thread that runs the child before the task completes. */
typedef struct ws__prof_slot {
    uint64_t work, span, bspan;    /* the child's totals, ns */
    uint64_t free_work, free_span; /* the same without the stalls seen inside its strands, ns */
    uint64_t stalled;              /* its strands that lost time to a stall */
    /* The steal cost, if stolen: the thief's attempt began at steal_ns, the child started at
     * start_ns. */
    uint64_t steal_ns, start_ns;
    uint64_t spawn_span, spawn_bspan; /* ws_spawn: the parent's span at the spawn point */
    uint64_t spawn_free_span;         /* and its stall-free span */
    uint64_t strands;                 /* the strands measured in the child */
} ws__prof_slot;

/* All on the calling thread's current frame; no-ops when it has none (not profiling). */
bool ws__prof_active(void);
void ws__prof_strand_end(void);
void ws__prof_strand_begin(void);
/* Runs fn(arg) in a fresh frame; its totals go to slot. */
void ws__prof_run_child(ws_fn fn, void *arg, ws__prof_slot *slot);
/* Runs fn(arg), a task outside the measured DAG (an external or group job picked up during a
 * wait), with no frame: its time is charged to no strand and its joins are not measured. */
void ws__prof_run_unmeasured(ws_fn fn, void *arg);
void ws__prof_join_merge(const ws__prof_slot *a, const ws__prof_slot *b, bool b_stolen);
void ws__prof_spawn_mark(ws__prof_slot *slot);
void ws__prof_sync_merge(const ws__prof_slot *slot, bool stolen);
/* Calibrates the strand clock once per process; returns the instrumentation's own time per
 * strand, ns. */
double ws__prof_calibrate(void);
/* After calibration: true if strands' stall-free lengths come from user-mode cycles
 * (WS_PROFILE_CYCLES=1 on a machine that counts them), false if from the stall detector. */
bool ws__prof_uses_cycles(void);
/* Tests only: strands read now() instead of the tick counter, as nanoseconds with nothing
 * taken off (no calibration, no preemption check); NULL restores the counter. Set
 * it while no profile runs: the next profile's root injection publishes it to the workers. */
typedef uint64_t (*ws__prof_clock_fn)(void);
void ws__prof_set_test_clock(ws__prof_clock_fn now);
/* Worker w is about to try a steal: note the time if the pool is being profiled. */
static inline void ws__prof_note_steal(struct ws__worker *w);
/* A stolen child's slot: the time the thief began the successful steal, and now, when it
 * starts the child. */
void ws__prof_mark_stolen(struct ws__worker *w, ws__prof_slot *slot);

/* ---- statistics (stats.c) ---------------------------------------------------------------- */

/* Per-worker counters, one writer each (the worker), read by ws_pool_stats. The deque's
 * fast_joins counts joins whose child was pushed and popped back on the fast path: each is one
 * spawn and one pop (one counter update instead of two on the hottest path). */
typedef struct ws__counters {
#define WS_COUNTER_FIELD_(name, kind, doc) _Atomic uint64_t name;
    WS_STATS_FIELDS(WS_COUNTER_FIELD_)
#undef WS_COUNTER_FIELD_
} ws__counters;

/* The calling worker adds to its own counter: relaxed, single writer (see atomics.h). */
#define ws__count(w, field, v) ws_counter_add(&(w)->counters.field, (v))

/* The spawns on worker w not synced yet (see ws_sdeque.open_spawns). */
static inline int64_t ws__open_spawns(struct ws__worker *w);

/* Prints the per-worker report of pool on stderr (WS_STATS=1 at destroy). */
void ws__stats_report(ws_pool *pool);

/* ---- the machine's shape and worker placement (topology.c) ------------------------------- */

/* How far a victim is from its thief, nearest first: the levels of the victim order and of the
 * per-level steal counters (steals_l2 ... steals_remote). */
enum { WS_LEVEL_L2, WS_LEVEL_L3, WS_LEVEL_NUMA, WS_LEVEL_REMOTE, WS_LEVELS };

typedef enum ws__pin_policy {
    WS_PIN_NONE,
    WS_PIN_CORES,
    WS_PIN_COMPACT,
    WS_PIN_SCATTER,
    WS_PIN_LIST,
} ws__pin_policy;

/* A parsed WS_PIN value (or ws_config.pin). */
typedef struct ws__pin_spec {
    ws__pin_policy policy;
    unsigned ncpus; /* WS_PIN_LIST: the CPUs listed, in order */
    uint16_t cpus[WS_CPUSET_MAX];
} ws__pin_spec;

/* Where a placed worker runs. */
typedef struct ws__place {
    int cpu;                    /* OS CPU number */
    int node;                   /* OS number of its NUMA node, -1: unknown */
    int group[WS_LEVEL_REMOTE]; /* ids of its L2 (or core), L3 and NUMA node groups; -1: none */
} ws__place;

/* A pool's placement, made at creation and read-only after. */
typedef struct ws__placement {
    ws__pin_policy policy;
    unsigned nworkers;
    bool pinned;       /* threads are pinned; false for a topology of another machine */
    bool levels;       /* groups are known: workers use victims[] (else the flat order) */
    ws__cpuset cpus;   /* the usable CPUs: spares run anywhere in them */
    ws__place *places; /* per worker (spares are not placed) */
    uint16_t *victims; /* worker i's other workers, nearest first, at i * (nworkers - 1) */
    uint16_t (*level_end)[WS_LEVELS]; /* per worker: where each level's victims end */
    char machine[160];                /* what was read, for the statistics */
} ws__placement;

/* Any thread. Parses "none", "cores", "compact", "scatter" or a CPU list ("0-3,8"): 0 or EINVAL. */
int ws__pin_parse(const char *text, ws__pin_spec *out);
/* Any thread; may block (reads the machine). Places nworkers workers by spec on the usable CPUs
 * (mask, or NULL for the process's CPU set). 0 with *out NULL for WS_PIN_NONE; EINVAL (and a
 * reason in why) for a listed CPU outside the usable ones; ENOMEM. */
int ws__placement_make(ws__placement **out, const ws__pin_spec *spec, unsigned nworkers,
                       const ws__cpuset *mask, char *why, size_t why_len);
void ws__placement_free(ws__placement *pl); /* NULL-safe */
/* One line on the placement (pl may be NULL) and the machine, for the statistics. */
void ws__placement_summary(const ws__placement *pl, char *buf, size_t n);
/* How the library reads machines: the hwloc version, or a note that it was built without. */
void ws__topology_build_info(char *buf, size_t n);
/* The level (WS_LEVEL_*) of the nearest group two places share. */
unsigned ws__steal_level(const ws__place *a, const ws__place *b);

/* ---- job records, recycled (records.c) ---------------------------------------------------- */

enum {
    WS_RECORD_BATCH = 64,       /* records per chain */
    WS_RECORD_KEEP_CHAINS = 32, /* chains an idle pool keeps: 2048 records, 128 KiB */
    WS_FUTURES_READY = 64,      /* future records a worker keeps ready for the inline submit */
};

/* Free job records held by one thread: a list (count records when it is a worker's). */
typedef struct ws__record_cache {
    ws__task *chain;
    uint32_t count;
    bool registered; /* a thread-exit destructor will free it (outside threads) */
    bool closed;     /* its thread is leaving (or the process): later records use the allocator */
} ws__record_cache;

/* The pool's stack of full chains: pushed by its workers, popped one chain at a time under the
 * try-lock `taking`. */
typedef struct ws__record_stack {
    alignas(WS_CACHE_LINE) ws__task *_Atomic stack; /* CAS by pushers and the lock holder */
    _Atomic uint32_t taking;                        /* 1 while a thread pops or trims */
} ws__record_stack;

/* Every record holds a job or a future. */
typedef union ws__record {
    ws__job job;
    ws__future future;
} ws__record;

/* Any thread (self: the calling thread's worker, or NULL): a record for a job submitted to pool,
 * or NULL (out of memory). */
ws__job *ws__record_new(ws_pool *pool, ws__worker *self);
/* Any thread (self as above): t, a finished job of pool, is no longer needed. */
void ws__record_free(ws_pool *pool, ws__worker *self, ws__job *j);
/* A worker about to park (the pool is idle): frees the stack's chains beyond
 * WS_RECORD_KEEP_CHAINS. */
void ws__records_trim(ws_pool *pool);
/* Pool teardown, after the threads are joined: frees every record the pool holds. */
void ws__records_release(ws_pool *pool);

/* ---- workers (worker.c) ------------------------------------------------------------------ */

typedef struct ws__worker {
    ws__wdeque deque; /* thief-visible; padded inside (deque.h) */

    /* Owner-private: read and written only by this worker's thread, except id and pool which
     * are set before the thread starts. */
    alignas(WS_CACHE_LINE) ws_pool *pool;
    unsigned id;
    uint64_t rng;   /* xorshift state for victim selection */
    uint32_t picks; /* scheduling picks, for the every-Nth injector check */
    /* The task the worker loop runs, when it took it from an injector (else NULL): the runner
     * of that task, if it is a group job, may run the next queued jobs of its group with it
     * (group.c, batch_next). Only that task matches, not one run inside it. */
    const struct ws__task *loop_injected;
    int64_t max_depth; /* deepest this deque has been (published to counters on change) */
    /* 1 while ws_pool_profile measures the pool. Written by the profiling thread, read by the
     * worker (relaxed). */
    _Atomic uint32_t profiling;
    /* The deque's bottom when the worker started the task it runs now that it took from
     * elsewhere (a steal, a claim, an injector): the items at or above it are that task's own
     * work. A waiter leapfrogging this worker takes only those (wait.c). Written by the worker
     * (release), read by leapfroggers (acquire). */
    _Atomic int64_t floor;
    uint64_t steal_begin_ns; /* while profiling: when the latest steal attempt began */
    uint64_t asking_since;   /* idle since then with work asked for in sight (worker.c), or 0 */
    bool steal_lost; /* a steal of its search's last look lost a race (idle.c's park reads it) */
    ws__record_cache records; /* free job records (records.c) */
    ws__thread thread;
    void *(*body)(void *); /* what the thread runs (pool.c, before it starts) */
    /* Placed pools only (pool.c, before the thread starts): where this worker runs, and the
     * other workers nearest first (NULL: steal in the flat random order). */
    const ws__place *place;
    const uint16_t *victims;
    uint16_t level_end[WS_LEVELS];
    bool started; /* the thread was created (pool.c at creation, spare.c under spare_lock) */
    bool joined;  /* the thread was joined (pool.c, teardown only) */
    bool spare;   /* a spare worker for blocked tasks (spare.c) */
    /* When the worker loop leaves: NULL for the P workers (at exit); a spare's retirement test
     * (spare.c), checked between tasks and whenever a search for work comes back empty. */
    bool (*should_leave)(ws__worker *w);
    /* Owed counts (group.c, "Owed counts"): jobs of the group owed_group that this worker
     * finished in batches from the injector and has not yet counted off the group's word.
     * settle(w, force) counts them off: always when force, else only if a thread waits for
     * the group. Call it through ws__worker_settle. */
    const void *owed_group;
    uint32_t owed;
    void (*settle)(ws__worker *w, bool force);
    /* Spares only: 1 while the spare works, 0 while retired. Written under pool->spare_lock,
     * read by the spare's thread, which futex-waits on it. */
    _Atomic uint32_t spare_state;

    /* The task stack of typed tasks (frames.c): owner only, but for thieves' requests. */
    alignas(WS_CACHE_LINE) ws__task_stack stack;

    /* Counters: written by this worker only, read by statistics readers. */
    alignas(WS_CACHE_LINE) ws__counters counters;
} ws__worker;

/* Worker w counts off the group jobs it owes (see owed above): always when force (before it
 * runs other work, yields or sleeps), else only if someone waits for their group. */
static inline void ws__worker_settle(ws__worker *w, bool force)
{
    if (w->owed != 0)
        w->settle(w, force);
}

/* Worker w: a record of its own pool from its own list, or as ws__record_new when the list is
 * empty (inline: the futures' fast path; the tests' allocation faults reach it only then). */
static inline ws__job *ws__record_new_local(ws__worker *w)
{
    ws__task *t = w->records.chain;
    if (WS_UNLIKELY(t == NULL))
        return ws__record_new(w->pool, w);
    /* relaxed: a free record is only seen by the thread that holds its list. */
    w->records.chain = ws_load_relaxed(&t->next);
    w->records.count--;
    return (ws__job *)(void *)t;
}
/* Worker w: j, a finished record of its own pool, goes on its own list (as ws__record_free). */
static inline void ws__record_free_local(ws__worker *w, ws__job *j)
{
    if (WS_UNLIKELY(w->records.count == WS_RECORD_BATCH)) {
        ws__record_free(w->pool, w, j);
        return;
    }
    ws_store_relaxed(&j->task.next, w->records.chain); /* relaxed: this thread's list */
    w->records.chain = &j->task;
    w->records.count++;
}
/* Worker w starts a task taken from elsewhere: raises its floor to its deque's bottom (see
 * ws__worker.floor) and returns the old floor, which ws__floor_restore puts back after.
 */
static inline int64_t ws__floor_raise(ws__worker *w)
{
    /* relaxed: the worker's own variable. */
    int64_t old = ws_load_relaxed(&w->floor);
    /* relaxed: published by the release RMW that marks the task taken (worker.c, future.c),
     * which a leapfrogger reads with acquire before it reads the floor. */
    ws_store_relaxed(&w->floor, ws__wdeque_owner_bottom(&w->deque));
    return old;
}
static inline void ws__floor_restore(ws__worker *w, int64_t old)
{
    /* release: after the task's completion (an RMW on its state): a leapfrogger that reads this
     * older floor (acquire) and then the task's state sees the completion (wait.c). */
    ws_store_release(&w->floor, old);
}

/* Worker w recomputes its deque's depth cap after max_depth, profiling or tracing
 * changed: pushes leave the fast path at a new maximum depth (for the statistic), and always
 * while the pool is profiled or traced (ws_pool_profile's thread closes the fast path with
 * ws__wdeque_force_slow; the slow push then calls this). */
void ws__worker_update_depth_limit(ws__worker *w);

/* The worker running on this thread, or NULL. */
extern _Thread_local ws__worker *ws__tls_worker WS_TLS_FAST;

/* What ws__tls_fast points to on threads that are not workers: an owner's line on which every
 * inline push declines (limit 0) and every inline take-back fails (its bottom, INT64_MIN, is
 * no task record's), so that worksteal.h's inline code calls the library. Read only. */
extern const struct ws__fast ws__no_fast_path;

/* What worksteal.h's ws__tls_fast holds for worker w: its deque's owner fields, or
 * ws__no_fast_path in the mutex-deque build (no inline fork-join there). */
static inline struct ws__fast *ws__worker_fast(ws__worker *w)
{
#ifdef WS_LOCKED_DEQUE
    (void)w;
    return (struct ws__fast *)&ws__no_fast_path;
#else
    return (struct ws__fast *)(void *)&w->deque;
#endif
}

/* The worker thread's body (pool.c and spare.c start it). */
void *ws__worker_main(void *worker);
/* Any thread: a new worker record for slot id (spares: spare.c, on first need); NULL if out of
 * memory. */
ws__worker *ws__worker_new(ws_pool *pool, unsigned id, bool spare);
/* Any thread, while creating w's pool or starting a spare: starts w's thread on fn, pinned
 * where the pool places it, and names it "ws<pool serial>:w<id>" or "ws<serial>:spare<id>". */
int ws__worker_start(ws__worker *w, void *(*fn)(void *));
/* Worker w (NULL in tests) runs t, a task taken from elsewhere (a steal, an injector, a
 * leapfrog, a group job popped by a wait), outside any group, then finishes it: a waited task
 * becomes DONE (its waiter may then return); a job's runner finishes the job itself. */
void ws__task_run_taken(ws__worker *w, ws__task *t, const char *what);
/* Worker w (NULL in tests) runs t, a task it took from elsewhere or claimed: outside any group,
 * an escaping exception aborting, and the spawns of t's function checked for their syncs. The
 * caller raises its floor before it marks t as its own, and finishes t. */
void ws__run_taken_body(ws__worker *w, ws__task *t, const char *what);
/* Worker w (NULL in tests) runs t's function inline, measured and traced as the pool asks; t
 * stays the caller's to finish. */
void ws__run_child(ws__worker *w, ws__task *t, const char *what);
/* Worker w runs fn(arg) as a traced task (the pool is traced). */
void ws__run_traced(ws__worker *w, const char *what, ws_fn fn, void *arg);
/* The group of the job this thread runs (set by a group job's runner, group.c); every task taken
 * from elsewhere starts in none (ws__task_run_taken). */
extern _Thread_local struct ws__group *ws__current_group WS_TLS_FAST;
/* Worker w: one attempt at finding a task anywhere but its own deque (high-priority queue,
 * injector, then one round of steals from random victims). NULL if none was found. Sets
 * *more_work when the place it took from still seems to hold work, and *what to "injected" or
 * "stolen" (for the trace). */
ws__task *ws__find_elsewhere(ws__worker *w, bool *more_work, const char **what);
/* Worker w is picking work (its loop, or a wait that helps): true on every FAIR_PERIOD-th pick,
 * when the injectors must be looked at first. */
bool ws__fair_turn(ws__worker *w);
/* Worker w takes one task from injector q, counting it. */
ws__task *ws__take_injected(ws__worker *w, ws__injector *q);
/* Worker w steals once from victim v, counting the attempt. */
ws__task *ws__steal_from(ws__worker *w, ws__worker *v);
/* As ws__steal_from, but only a task that the bound allows (deque.h, ws_sdeque_bound). */
ws__task *ws__steal_bounded(ws__worker *w, ws__worker *v, ws_sdeque_bound *bound);
/* Worker w (the caller) pushes t on its deque, as a fork does: false if the deque could not grow
 * (the caller runs t itself). join.c. */
bool ws__fork_push(ws__worker *w, ws__task *t);

/* The task stack (frames.c). Owner only. init: before the thread starts (no memory yet);
 * destroy: frees the segments. flush: before the worker pushes anything else on its deque or
 * publishes it, hands every private frame to the deque (so that the deque's items stay in spawn
 * order) and sends the next stack spawn to the slow path (which closes the deque's fast path
 * again). close: the next stack spawn takes the slow path (profiling, tracing). */
static inline void ws__frames_init(ws__worker *w);
static inline void ws__frames_destroy(ws__worker *w);
static inline void ws__frames_flush(ws__worker *w);
static inline void ws__frames_close(ws__worker *w);
/* end_fast below every frame's address, written by the owner (or the profiler) to send the next
 * stack spawn to the slow path: frames may stay private, so thieves still try the worker and
 * ask. A thief's request writes 0, as does the end of a worker's outermost typed task. */
enum { WS__FRAMES_CLOSED = WS_FRAMES_CLOSED_VALUE }; /* deque.h */

bool ws__split_wanted(void);

/* ---- idle workers: spin, yield, park (idle.c) -------------------------------------------- */

typedef struct ws__idle {
    /* Searchers, unclaimed sleepers and owed wake-ups in one word (idle_state.h). Written by
     * workers entering and leaving the search and by wakers; read by producers. */
    alignas(WS_CACHE_LINE) _Atomic uint64_t state;
    /* Event counter sleepers wait on (a futex): bumped after every claim and at exit. */
    alignas(WS_CACHE_LINE) _Atomic uint32_t epoch;
    /* Whether the machine has a CPU free for a spinning worker (idle.c, "Contention"): the
     * last answer, the score of the counts behind it, and when the runnable threads are due
     * to be counted again (monotonic ns). */
    alignas(WS_CACHE_LINE) _Atomic uint32_t contended;
    _Atomic uint32_t busy_score;
    _Atomic uint64_t probe_due;
} ws__idle;

/* Any thread, after publishing work with a plain store (a push onto an empty deque): wakes
 * one sleeper if nobody searches. Lock-free (one RMW, a futex wake at most). */
void ws__idle_notify(ws_pool *pool);
/* True if the machine has no CPU free for a worker that spins: as many threads runnable that
 * are not the pool's awake workers as CPUs online, in most of the last counts (counted at most
 * once a millisecond per pool; idle.c, count_runnable). A worker that spins then takes a CPU from a
 * thread that needs it, and once the scheduler takes it back, the spinner waits out another
 * thread's time slice (a few milliseconds) with the work it spins for; a worker that parks is woken
 * through the futex, and the scheduler runs a thread it wakes promptly. Spinning waits (the idle
 * search, a lingering batch) park at once instead. */
bool ws__idle_contended(ws_pool *pool);
/* Any thread that took work and saw more left (a cascade, not a publication): a glance at the
 * idle word without a barrier, and a wake-up only if one is wanted. The publisher of the work
 * already made sure that one worker would come (idle.c). */
static inline void ws__idle_notify_if_sleepers(ws_pool *pool);
/* Any thread: claims a sleeper if the idle word s (just read) still wants one, and wakes it. */
void ws__idle_wake(ws_pool *pool, uint64_t s);
/* Any thread: are workers searching or sleeping (a hint: relaxed, for splitting decisions)? */
static inline bool ws__idle_any(ws_pool *pool);
/* Any thread: unclaimed sleepers (a hint, for benchmarks that wait until a pool is parked). */
static inline uint32_t ws__idle_parked(ws_pool *pool);
/* Any thread (w: its worker, or NULL): sleeps on a futex word while it holds value, counting
 * and tracing the park when w is a worker. Used by waits on tasks and groups. */
void ws__park_word(ws__worker *w, _Atomic uint32_t *word, uint32_t value);
void ws__share_private_work(ws__worker *w);
/* Any thread: wakes every parked worker (shutdown, spare management). */
void ws__idle_wake_all(ws_pool *pool);
/* Where an idle worker looks for work (worker.c: ws__find_elsewhere): a task, its source in
 * *what, and in *more_work whether that place seems to hold more; NULL if none was found. */
typedef ws__task *(*ws__look_fn)(ws__worker *w, bool *more_work, const char **what);
/* Worker w, with nothing to do: looks for work with `look` while it spins, yields, then parks
 * until work appears. Returns a task (and its source in *what), or NULL when the pool is
 * stopping and no work is left, or when w->should_leave says so. */
ws__task *ws__idle_find_work(ws__worker *w, ws__look_fn look, const char **what);
/* The waiting ladder shared by every wait (idle workers, joins, group waits, external callers):
 * each failed look calls ws__backoff_step, which pauses, then yields, and finally says "park". */
typedef struct ws__backoff {
    uint32_t round;
} ws__backoff;
/* Returns true when the caller should park now (the spin and yield budget is spent). */
bool ws__backoff_step(ws__backoff *b);
/* The ladder's end at once: the next ws__backoff_step says "park". */
void ws__backoff_give_up(ws__backoff *b);
/* The ladder's start for a wait of worker w (NULL: an outside thread, which skips the spinning
 * and starts by yielding). */
ws__backoff ws__backoff_start(const ws__worker *w);

/* ---- waiting for tasks and groups (wait.c) ---------------------------------------------- */

/* A wait for a task (join.c) or a group (group.c). Waits run only the work they wait for;
 * a wait that cannot go on, or that leaves queued external work to others, counts as blocked
 * (spare.c) until it ends. */
typedef struct ws__wait {
    ws__backoff backoff;
    bool blocked; /* counted in pool->blocked until ws__wait_end */
} ws__wait;
/* Worker w (NULL outside a worker) went once round its wait loop; progressed: it ran a task
 * the wait depends on. True when the caller should park now (it then counts as blocked). */
bool ws__wait_step(ws__worker *w, ws__wait *s, bool progressed);
/* Worker w's wait found work it may not run (a free item of the worker it waits for): it parks
 * now, counting as blocked, so that a spare or another worker takes that work at once rather
 * than after the ladder's spins and yields. */
void ws__wait_give_up(ws__wait *s);
/* The wait is over (w as in ws__wait_step). */
void ws__wait_end(ws__worker *w, ws__wait *s);
/* Any thread (w: its worker, or NULL); may block (spin, yield, then park). Returns when t is
 * DONE. On a worker it helps by leapfrogging: it steals only from the worker that took t. */
void ws__task_wait(ws__worker *w, ws__task *t);
/* Waiter w helps the worker runner (an id + 1, as in a task's state; 0: none) that runs the task
 * whose state word is *state, last read as seen: a task that runner pushed since it started that
 * task, or NULL; *only_free is set when it left a free item there (work for others). */
ws__task *ws__leapfrog(ws__worker *w, uint32_t runner, _Atomic uint32_t *state, uint32_t seen,
                       bool *only_free);
/* As ws__leapfrog, with the floor of that task's run known to the caller (a future claimed
 * inline: future.c) instead of the runner's. */
ws__task *ws__leapfrog_above(ws__worker *w, uint32_t runner, _Atomic uint32_t *state, uint32_t seen,
                             int64_t floor, bool *only_free);
/* Any thread (w: its worker, or NULL): or-s WAITER into *state (last read as seen, without DONE)
 * and parks until the word changes; returns at once if it changed first. */
void ws__park_on_state(ws__worker *w, _Atomic uint32_t *state, uint32_t seen);

/* ---- tracing (trace.c) ------------------------------------------------------------------ */
/* WS_TRACE=FILE: every pool records task runs, steals and parks in a ring buffer per worker
 * (oldest events dropped, with a count), and appends them to FILE in the Chrome trace-event JSON
 * format when it is destroyed; the JSON array is closed at process exit. Each worker writes only
 * its own ring, so recording takes no lock; the rings are read after the workers have stopped.
 * When tracing is off, pool->trace is NULL and the hooks are never called: the callers test
 * pool->trace on their rare paths only, and fork-join takes its general path while tracing (the
 * fast path is closed by ws__wdeque_force_slow and a depth cap of 0), so the fast path pays
 * nothing. */

typedef struct ws__trace ws__trace; /* defined in trace.c */

/* Any thread, at pool creation (before workers start): reads WS_TRACE and, if set, allocates
 * pool->trace with one ring per worker slot (workers and spares). 0, or ENOMEM (nothing
 * allocated). Unset or empty WS_TRACE: 0, and pool->trace stays NULL. */
int ws__trace_pool_init(ws_pool *pool);
/* At pool destroy, after every worker thread has been joined: appends the pool's events to the
 * trace file and frees pool->trace. NULL-safe. Also used on a failed creation. */
void ws__trace_pool_finish(ws_pool *pool);
/* Worker w only (its own ring). Times are ws__now_ns() values. `what` is a static string:
 * "join" (a join child run inline), "spawn" (a spawned child run at ws_sync), "stolen", "injected"
 * (an external job), "leapfrog" (stolen while waiting at a join). */
void ws__trace_task(ws__worker *w, const char *what, ws_fn fn, uint64_t start_ns, uint64_t end_ns);
/* Worker `thief` only: it stole a task from `victim` at time ns. */
void ws__trace_steal(ws__worker *thief, ws__worker *victim, uint64_t ns);
/* Worker w only: it was parked from start_ns to end_ns. */
void ws__trace_park(ws__worker *w, uint64_t start_ns, uint64_t end_ns);

/* ---- the injector (injector.c) ----------------------------------------------------------- */

struct ws__injector {
    /* Producers exchange the tail (wait-free push). */
    alignas(WS_CACHE_LINE) ws__task *_Atomic tail;
    /* Consumer side, guarded by the try-lock `consumer`: one worker drains at a time. head is
     * atomic only so that the emptiness hint can read it without the lock. */
    alignas(WS_CACHE_LINE) _Atomic uint32_t consumer;
    ws__task *_Atomic head;
    ws__task stub;
};

void ws__injector_init(ws__injector *q);
/* Any thread; wait-free. Appends t (FIFO). */
void ws__injector_push(ws__injector *q, ws__task *t);
/* ws__injector_push in two steps: _begin makes t the tail and returns the previous tail; no
 * consumer can take t, or anything queued behind it, until _end(prev, t) links it. */
ws__task *ws__injector_push_begin(ws__injector *q, ws__task *t);
void ws__injector_push_end(ws__task *prev, ws__task *t);
/* Any thread; never waits (a try-lock: a busy consumer side returns NULL at once), but not
 * lock-free: a consumer preempted while it holds the try-lock keeps the others out until it
 * runs again. The oldest task, or NULL if empty, busy, or a producer is half-way through a
 * push. */
ws__task *ws__injector_take(ws__injector *q);
/* As ws__injector_take, but only if the oldest task's owner is `owner` (a group's jobs). */
ws__task *ws__injector_take_owned(ws__injector *q, const void *owner);
/* Any thread. False only if the queue looks empty (a cheap hint: two loads). */
bool ws__injector_maybe_nonempty(ws__injector *q);

/* ---- pools (pool.c) ---------------------------------------------------------------------- */

struct ws_pool {
    unsigned nworkers; /* P, fixed at creation */
    unsigned nspares;  /* spare workers allocated (group.c starts them on demand) */
    size_t stack_size;
    ws__worker **workers; /* P workers then the spares */

    ws__injector urgent;   /* WS_HIGH_PRIORITY external jobs */
    ws__injector injector; /* normal external jobs */
    ws__idle idle;
    ws__record_stack records; /* free job records (records.c) */

    /* Lifecycle, written by ws_pool_destroy and submitters, read by everyone. */
    /* The STOPPING bit and the count of admitted references (pool.c): submitters and
     * releasers RMW it, destroy sets the bit and futex-waits on it. */
    alignas(WS_CACHE_LINE) _Atomic uint32_t admitted;
    _Atomic uint32_t exit;    /* teardown began: workers leave once idle and nothing is blocked */
    _Atomic uint32_t blocked; /* tasks between ws_block_begin and ws_block_end */
    _Atomic uint32_t spares_running; /* spares working; written under spare_lock */
    _Atomic uint32_t spares_started; /* spare slots with a thread; written under spare_lock */
    pthread_mutex_t spare_lock;      /* guards starting, waking and retiring spares (group.c) */

    _Atomic uint32_t profiling; /* 1 while ws_pool_profile runs (profile.c) */
    ws__trace *trace;           /* non-NULL when WS_TRACE is set (trace.c) */
    ws__placement *placement;   /* NULL: workers not placed (topology.c) */
    unsigned serial;            /* the pool's number in this process, from 1 (trace pid) */
    unsigned generation;        /* the process's fork generation at creation (pool.c) */
    uint32_t magic; /* WS_POOL_LIVE, WS_POOL_DESTROYED once destroyed (debug builds, pool.c) */
};

#define WS_POOL_LIVE      0x9001ab1eu /* ws_pool.magic */
#define WS_POOL_DESTROYED 0xdeadb001u

static inline void ws__idle_notify_if_sleepers(ws_pool *pool)
{
    /* relaxed: a glance without a barrier (see idle.c); ws__idle_wake's CAS decides. */
    uint64_t s = ws_load_relaxed(&pool->idle.state);
    if (WS_UNLIKELY(ws__idle_wake_wanted(s)))
        ws__idle_wake(pool, s);
}

/* Worker w pushes t on its own deque, fast or slow path, off the join path (a group job, a
 * task put back). -1 if the deque is full or could not grow (unchanged), else at least 0 (0:
 * the deque was empty). If the push shared work with a thief that asked, a sleeper is woken: the
 * thief may have gone to sleep meanwhile, and nothing else would wake it. */
static inline int64_t ws__wdeque_push_size(ws__worker *w, ws__task *t)
{
    bool published = false;
    int64_t before = 1;
    if (ws__wdeque_fits(&w->deque))
        ws__wdeque_push_fitting(&w->deque, ws__deque_item(t));
    else
        before = ws__wdeque_push_slow(&w->deque, ws__deque_item(t), &published);
    if (published)
        ws__idle_notify(w->pool);
    return before;
}

#ifndef WS_LOCKED_DEQUE
/* Worker w answers a thief's request, which its deque's take_bar shows (ws__sdeque_answer),
 * waking a worker if it published items (the thief may have gone to sleep meanwhile). Out of
 * line: the owner's takes only test for a request. */
static WS_NOINLINE WS_MAYBE_UNUSED void ws__answer_request(ws__worker *w)
{
    if (ws__sdeque_answer(&w->deque))
        ws__idle_notify(w->pool);
}

_Static_assert(offsetof(ws__worker, deque) == 0, "a worker begins with its deque");
/* The owner's pops and peeks (the macros above): first an answer to a thief that asks, so that
 * every place where the owner takes its own work serves requests (docs/scheduler.md, "Sharing
 * private work"); q is the deque at the start of its worker. The take itself is an argument,
 * evaluated after the answer. */
#define ws__owner_take(q, take) (ws__answer_if_asked(q), ws__item_task(take))
static inline void ws__answer_if_asked(ws_sdeque *q)
{
    if (WS_UNLIKELY(ws__sdeque_asked(q)))
        ws__answer_request((ws__worker *)(void *)q);
}
#endif

/* Owner only: the newest item, and its index in *at (the index a put back must keep). */
static inline ws__task *ws__wdeque_pop_at(ws__worker *w, int64_t *at)
{
    *at = ws__wdeque_owner_bottom(&w->deque) - 1;
    return ws__wdeque_pop(&w->deque);
}

/* Owner only: may a wait pop its newest item to look at it? Only if it is free: a wait looks
 * for its group's jobs and for dead futures, never for a waited task, whose put-back could not
 * keep its place (ws__wdeque_put_back). A model removes the test (tests/model_wait_rule.c). */
#ifndef WS_WAIT_LOOKS_AT_FREE_ONLY
#define WS_WAIT_LOOKS_AT_FREE_ONLY 1
#endif
static inline bool ws__wdeque_may_look(ws__worker *w)
{
    return !WS_WAIT_LOOKS_AT_FREE_ONLY || ws__wdeque_newest_is_free(&w->deque);
}

/* Worker w puts back t, popped from index at only to look at it (a wait that takes only its own
 * work, a join taking its child from under free items). A pop of the last public item moves top
 * past it, and a push then lands one index higher, which may lie at or above the floor of a run
 * that a leapfrogger helps with: a free item may go there (no wait's help takes one), and a
 * future that w queued learns its new index, or its get would not find it newest. A waited task
 * could be an outer frame's child, which a leapfrogger there would run: no wait pops one to look
 * at it (ws__wdeque_may_look). */
static inline void ws__wdeque_put_back(ws__worker *w, ws__task *t, int64_t at)
{
    (void)at;
#ifdef WS_DEBUG
    if (ws__task_kind(t) == WS_KIND_WAITED && ws__wdeque_owner_bottom(&w->deque) != at)
        ws__contract_violation("ws__wdeque_put_back", "internal: a waited task moved");
#endif
    ws__future *f = (ws__future *)(void *)t;
    /* relaxed: f->bottom is read by this worker (its gets) and, once f is claimed INLINE, by
     * leapfroggers after the claim's release. Written before the push, which lands at bottom:
     * once it is back in the deque, f may be taken, run and recycled at once. */
    if (ws__task_kind(t) == WS_KIND_FUTURE && f->home == ws__worker_fast(w) &&
        ws_load_relaxed(&f->bottom) != WS__NOT_INLINE)
        ws_store_relaxed(&f->bottom, ws__wdeque_owner_bottom(&w->deque) + 1);
    ws__wdeque_push_size(w, t); /* it was just popped: no growth, cannot fail */
}

static inline bool ws__idle_any(ws_pool *pool)
{
    /* relaxed: a heuristic; a stale value only delays or adds one split. */
    uint64_t s = ws_load_relaxed(&pool->idle.state);
    return ws__idle_searchers(s) != 0 || ws__idle_sleepers(s) != 0;
}

static inline uint32_t ws__idle_parked(ws_pool *pool)
{
    /* relaxed: a poll by a benchmark, no ordering needed. */
    return ws__idle_sleepers(ws_load_relaxed(&pool->idle.state));
}

static inline void ws__prof_note_steal(ws__worker *w)
{
    /* relaxed: see ws__worker_update_depth_limit. */
    if (WS_UNLIKELY(ws_load_relaxed(&w->profiling) != 0))
        w->steal_begin_ns = ws__now_ns();
}

static inline int64_t ws__open_spawns(ws__worker *w)
{
    /* relaxed: w's own counter (the caller is w's thread). */
    return w->deque.open_spawns - (int64_t)ws_load_relaxed(&w->deque.fast_syncs);
}

/* The spare workers (for blocking tasks) are workers P..P+nspares-1 of workers[]; the loop
 * visits the P workers and the spare slots made so far. acquire: pairs with the release store
 * of spares_started in spare.c; the slots below it are made. */
#define ws_for_each_worker(pool, w)                                                            \
    for (ws__worker **w##_it_ = (pool)->workers,                                               \
                    **w##_end_ =                                                               \
                        w##_it_ + (pool)->nworkers + ws_load_acquire(&(pool)->spares_started), \
                    *w = NULL;                                                                 \
         w##_it_ < w##_end_ && ((w = *w##_it_), 1); w##_it_++)

/* Any thread. Counts refs references to pool in (0): each external job holds one until it has
 * finished, and a caller that touches the pool after queuing work holds one until it is done
 * with the pool. Refuses (ESHUTDOWN) once destroy began, except from the pool's own workers,
 * whose submissions destroy waits for; ENOTRECOVERABLE for a pool inherited through fork();
 * EAGAIN past 2^30 references. */
int ws__pool_admit(ws_pool *pool, uint32_t refs);
/* Any thread whose work is covered by a reference already counted: 0, or the error
 * ws__pool_admit would return for a new submission (a destroy began, a pool inherited through
 * fork()). */
int ws__pool_open(ws_pool *pool);
/* Any thread: gives back refs references. The pool may be freed as soon as this returns, so
 * it must be the caller's last access to the pool. */
void ws__pool_release(ws_pool *pool, uint32_t refs);
/* Any thread, for a task covered by a reference counted before (its own, its group's, or its
 * waiting caller's): queues the task and wakes a worker if one is wanted. */
void ws__pool_inject(ws_pool *pool, ws__task *t);
/* False for a pool inherited through fork(): its threads exist only in the parent. */
bool ws__pool_alive(const ws_pool *pool);
/* The run of a typed task's name_run (frames.c): ws_pool_run(pool, fn, arg), where pool NULL is
 * the calling worker's pool, or the default pool on other threads; an error aborts, naming
 * what. Any thread; blocks. */
void ws__typed_run(ws_pool *pool, ws_fn fn, void *arg, const char *what);
/* The default pool for fork-join and loops called from outside a worker, made on first use;
 * NULL once the process is exiting (its default pool destroyed): the caller runs inline. */
ws_pool *ws__default_pool_if_live(void);
/* Any thread but a worker: runs fn(arg) on the default pool and returns true, or returns
 * false at once when the process is exiting (the caller then runs the work itself, serially). */
bool ws__run_on_default(ws_fn fn, void *arg);

/* True once the pool's threads may leave: teardown began and no task is blocked (a blocked
 * task may still push work). seq_cst: see pool_teardown and ws__blocked_leave. */
static inline bool ws__pool_finished(ws_pool *pool)
{
    return ws_load_seq_cst(&pool->exit) != 0 && ws_load_seq_cst(&pool->blocked) == 0;
}

/* Any thread: does either injector seem to hold work (two or four loads)? */
static inline bool ws__external_work_left(ws_pool *pool)
{
    return ws__injector_maybe_nonempty(&pool->urgent) ||
           ws__injector_maybe_nonempty(&pool->injector);
}

/* ---- blocked tasks and spare workers (spare.c) ------------------------------------------- */

/* Worker w is blocked (a task between ws_block_begin and ws_block_end, or a wait that cannot
 * run the work the pool has): wakes or starts a spare to keep P workers running. May block
 * briefly on spare_lock. */
void ws__blocked_enter(ws__worker *w);
/* Worker w's task is about to block where the worker can run nothing (ws_block_begin,
 * ws_pool_run on another pool): makes every item of its deque public (no push of its will
 * answer a thief meanwhile), wakes a worker to take them, then ws__blocked_enter. */
void ws__block_worker(ws__worker *w);
/* Worker w is no longer blocked. */
void ws__blocked_leave(ws__worker *w);

/* ---- unwaited groups, debug builds only (group_check.c) ----------------------------------- */

#ifdef WS_DEBUG
/* ws_group_init of group: a contract violation if it got jobs and was never waited for. */
void ws__group_check_init(const void *group);
/* group (of pool) got a job; ... */
void ws__group_check_submitted(const void *group, const ws_pool *pool);
/* ... until a wait found it done. */
void ws__group_check_waited(const void *group);
/* pool's work is all done: one stderr line per group of it that was never waited for. */
void ws__group_check_pool_done(const ws_pool *pool);
#else
static inline void ws__group_check_init(const void *group)
{
    (void)group;
}
static inline void ws__group_check_submitted(const void *group, const ws_pool *pool)
{
    (void)group, (void)pool;
}
static inline void ws__group_check_waited(const void *group)
{
    (void)group;
}
static inline void ws__group_check_pool_done(const ws_pool *pool)
{
    (void)pool;
}
#endif

/* ---- errors (error.c) -------------------------------------------------------------------- */

/* Aborts with the contract message of `function` if pool is NULL (or destroyed, in debug
 * builds: ws__pool_check_live). */
void ws__pool_check(const ws_pool *pool, const char *function);
/* Debug builds (WS_DEBUG): aborts with one line naming function if pool was destroyed; its
 * memory, kept in a quarantine (pool.c), is still readable. Release builds check nothing. */
static inline void ws__pool_check_live(const ws_pool *pool, const char *function)
{
#ifdef WS_DEBUG
    if (pool->magic != WS_POOL_LIVE)
        ws__contract_violation(function, "the pool was destroyed (a handle is invalid once "
                                         "ws_pool_destroy returns)");
#else
    (void)pool, (void)function;
#endif
}

static inline void ws__frames_init(ws__worker *w)
{
    ws__task_stack *s = &w->stack;
    s->f.head = NULL;
    s->split = NULL;
    /* relaxed: before the thread starts. 0: every spawn goes to the slow path (frames.c makes
     * the first segment when the worker first runs a typed task); split NULL likewise. */
    ws_store_relaxed(&s->f.end_fast, 0);
    ws_store_relaxed(&s->f.sync_bar, 0);
    ws_store_relaxed(&s->f.fast_syncs, 0);
    s->seg = NULL;
    s->spare = NULL;
    s->floor = NULL;
    s->fresh = false;
    s->refill = 0;
    s->handing = false;
    s->flush = NULL;
    s->destroy = NULL;
}

static inline void ws__frames_destroy(ws__worker *w)
{
    if (w->stack.destroy != NULL)
        w->stack.destroy(w);
}

static inline void ws__frames_flush(ws__worker *w)
{
    if (w->stack.flush != NULL)
        w->stack.flush(w);
}

static inline void ws__frames_close(ws__worker *w)
{
    /* An RMW, as every write of end_fast (frames.c, "Requests"). */
    ws_exchange_relaxed(&w->stack.f.end_fast, WS__FRAMES_CLOSED);
}

/* Any thread: whether worker v may have work for a thief: items in its deque, or stack-task
 * frames that no request has reached yet (end_fast open or closed by the owner, not 0: its next
 * spawn answers a request; frames.c).
 * relaxed: a hint; the steal, or the request it makes, decides. */
static inline bool ws__worker_may_have_work(ws__worker *v)
{
    return ws__wdeque_size(&v->deque) > 0 || ws_load_relaxed(&v->stack.f.end_fast) != 0;
}

#endif /* WS_INTERNAL_H */
