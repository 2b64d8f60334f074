/* worksteal: a work-stealing task-parallel runtime for C.
 *
 * This header is the whole public API. It needs only the standard headers it includes and
 * compiles as C11 and as C++. Every public name starts with ws_ or WS_.
 *
 * Errors. Functions that can fail at run time return 0 or a positive errno code (EINVAL,
 * ENOMEM, EAGAIN, ESHUTDOWN, EBUSY, ECANCELED, ETIMEDOUT, ENOTRECOVERABLE) and leave nothing
 * half-made: if a submit fails, its function never runs. A contract violation that would corrupt
 * state (a NULL function, syncing a task twice or out of order) prints one line on stderr naming
 * the function, then aborts.
 *
 * The long reference is in docs/api.md.
 */
#ifndef WORKSTEAL_H
#define WORKSTEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WS_VERSION_MAJOR 0
#define WS_VERSION_MINOR 2
#define WS_VERSION_PATCH 0
#define WS_VERSION       (WS_VERSION_MAJOR * 10000 + WS_VERSION_MINOR * 100 + WS_VERSION_PATCH)

#if defined(WS_BUILDING_LIBRARY) && defined(__GNUC__)
#define WS_API __attribute__((visibility("default")))
#else
#define WS_API
#endif

#if defined(__GNUC__)
#define WS_NODISCARD __attribute__((warn_unused_result))
#else
#define WS_NODISCARD
#endif

typedef void (*ws_fn)(void *arg);

/* ---- pools ------------------------------------------------------------------------------ */

typedef struct ws_pool ws_pool; /* opaque */

/* Every field: zero means "default". */
typedef struct ws_config {
    unsigned workers;  /* 0: $WS_NUM_WORKERS if set and valid, else the CPUs of the affinity
                          mask, capped by the cgroup CPU quota; at most WS_MAX_WORKERS */
    size_t stack_size; /* bytes per worker stack; 0: $WS_STACK_SIZE if set and valid, else 64 times
                          the main thread's stack limit (RLIMIT_STACK), at most 1 GiB */
    unsigned max_spares; /* spare workers that may run while tasks block (ws_block_begin) or waits
                            cannot go on; 0: WS_DEFAULT_SPARES; at most WS_MAX_SPARES, or
                            WS_NO_SPARES for none (the pool never has more than its P workers) */
    /* Worker placement: "none", "cores", "compact", "scatter", or a CPU list such as "0-3,8"
     * (docs/topology.md). NULL: $WS_PIN if set and valid, else "none" (threads not pinned). */
    const char *pin;
} ws_config;

#define WS_MAX_WORKERS 512u
/* Spares cost nothing until one is needed: its thread and record are made then, and reused.
 * The default bounds how many waits may be blocked at once before the pool runs out of threads
 * (docs/scheduler.md, "Waits"). */
#define WS_DEFAULT_SPARES 256u
#define WS_MAX_SPARES     4096u
/* max_spares: no spare at all. A wait that cannot go on then parks and its worker stays idle;
 * fork-join and futures still finish (docs/scheduler.md, "Getting a future"), but a group wait,
 * which runs only its group's jobs, may wait for work that only a spare could reach, and each
 * blocking call between ws_block_begin and ws_block_end costs the pool a worker. */
#define WS_NO_SPARES 0xFFFFFFFFu

/* Starts a pool of worker threads. config NULL: every field its default. Any thread; may block
 * while threads start. Returns 0, EINVAL (workers above WS_MAX_WORKERS, max_spares above
 * WS_MAX_SPARES, a stack size outside 64 KiB..1 TiB, a pin string that is malformed or names a
 * CPU outside the process's CPU set; each with one line on stderr naming the field and its value),
 * ENOMEM, or EAGAIN (a thread could not be created, which
 * includes a stack size the system cannot give every worker). On error *out is untouched and no
 * thread is left running. */
WS_API WS_NODISCARD int ws_pool_create(ws_pool **out, const ws_config *config);

/* Waits for all work submitted to the pool (including detached ws_submit jobs) and for callers
 * still inside ws_pool_run, ws_sync or a submission on it, stops the workers and frees
 * everything. Any thread except one of this pool's workers (that would wait for itself:
 * contract violation). NULL is ignored; the default pool is a contract violation (it is
 * destroyed at exit). Once it returns the handle is invalid, as a pointer after free (debug
 * builds abort naming the function that uses it). */
WS_API void ws_pool_destroy(ws_pool *pool);

/* The number of workers (P). Any thread. */
WS_API unsigned ws_pool_workers(const ws_pool *pool);
/* P plus max_spares: the bound on ws_worker_id() of the pool's threads, for sizing per-worker
 * arrays. Any thread. */
WS_API unsigned ws_pool_threads(const ws_pool *pool);

/* Runs fn(arg) on a worker of the pool and waits for it and everything it forked. From a worker
 * of the same pool it simply calls fn(arg). Any thread; blocks. Returns 0, ESHUTDOWN if the
 * pool is being destroyed, or ENOTRECOVERABLE if the pool was inherited through fork() (its
 * threads exist only in the parent); on error fn is not run. docs/api.md has the fork, exit,
 * exception and signal-handler rules. */
WS_API int ws_pool_run(ws_pool *pool, ws_fn fn, void *arg);

/* The process-wide default pool, created on first use with a zero config and destroyed at exit.
 * Never NULL: aborts with a message if it cannot be made. Any thread. */
WS_API ws_pool *ws_default_pool(void);

/* 0..P-1 on a worker thread; P..ws_pool_threads()-1 on a spare worker, which runs only while
 * some task is blocked (ws_block_begin, or a worker waiting in ws_pool_run on another pool);
 * -1 elsewhere. */
WS_API int ws_worker_id(void);

/* A static description of an error code returned by this library. */
WS_API const char *ws_strerror(int err);

/* ---- fork-join -------------------------------------------------------------------------- */
/* From any thread. On a worker they use its deque (no allocation); elsewhere they run on the
 * default pool and block the caller until done. */

/* Runs a(a_arg) and b(b_arg), possibly in parallel; returns when both are done. */
WS_API void ws_join(ws_fn a, void *a_arg, ws_fn b, void *b_arg);

/* A spawned task's record, on the caller's stack. Fields are private. */
typedef struct ws_task {
    union {
        void *ws_ptr[8];
        uint64_t ws_u64[8];
    } ws_private;
} ws_task;

/* fn(arg) may run in parallel with the caller, until ws_sync(task). */
WS_API void ws_spawn(ws_task *task, ws_fn fn, void *arg);
/* Returns when the spawned fn(arg) has finished. Sync tasks in reverse spawn order, each once,
 * before the spawning function returns (violations abort with a message). */
WS_API void ws_sync(ws_task *task);

/* ---- the inline fast path of ws_join, ws_spawn and ws_sync ----
 * Internal, not part of the API: the ws__ names below are in this header only so that a fork
 * whose child is not stolen runs inline in the caller, with no call and no locked instruction.
 * The calling thread's worker is found through an initial-exec thread-local pointer, which is
 * NULL on threads that are not workers (and in the library's mutex-deque build); every case
 * but the common one calls the library's functions. Define WS_NO_INLINE_JOIN to call them
 * always. The layouts below mirror src/deque.h and src/internal.h, which check them at compile
 * time; docs/deque.md ("The inline fast path") has the argument. */
#if defined(__GNUC__)
/* The owner's fields of a worker's deque (the first bytes of struct ws_sdeque). bottom, limit,
 * fast_joins and fast_syncs are atomic: accessed with __atomic builtins only. */
struct ws__fast {
    int64_t bottom;
    int64_t take_bar;
    int64_t fast_base;
    void **slot;
    uint64_t mask;
    uint64_t limit;
    uint64_t fast_joins;
    int64_t open_spawns;
    uint64_t fast_syncs;
    /* The inline futures' fields (src/deque.h, WS__FUTURE_FIELDS). */
    void *futures;
    const void *pool;
    uint32_t runner;
    uint32_t futures_room;
    uint32_t dead_slots; /* atomic (src/deque.h): the inline submit leaves it to the library
                            from WS__DEAD_REMOTE on, and the inline get sweeps when it is set */
};
#define WS__DEAD_REMOTE 2u

/* A fork child's task record (the leading fields of the library's ws__task). flags comes
 * before state, so that the inline push writes both (state 0, flags below 2^31) with one store
 * of a 32-bit immediate. */
struct ws__join_rec {
    ws_fn fn;
    void *arg;
    uint32_t flags;
    uint32_t state; /* atomic: 0 (pending, waited) until a thief takes the task */
    void *rest[3];
};

/* A future's record (src/internal.h, ws__future): the task (its next link, rest[1], chains the
 * free records of struct ws__fast's futures), fn, arg, result, error (atomic); then the deque's
 * bottom just after the push that queued it if the inline get may take it back from there (else
 * WS__NOT_INLINE), and the struct ws__fast of the worker on whose list of free records it may go
 * (else NULL). */
struct ws__future_rec {
    struct ws__join_rec task;
    void *(*fn)(void *);
    void *arg;
    void *result;
    uint32_t error;
    int64_t bottom;
    struct ws__fast *home;
};

/* The rest of an inline get's finish that saw a waiter (old: the word before the finish). */
WS_API void ws__future_finish_rare(struct ws__future_rec *r, uint32_t old);
/* fn threw out of an inline get: a contract violation (aborts). */
WS_API void ws__future_escaped(void);
/* An inline get's pop, while its worker's deque may hold dead future slots: sweeps them off the
 * top, which the pop may have uncovered. */
WS_API void ws__future_drop_dead(void);

/* The state word's values the inline futures test (src/future.c checks them): not started, in a
 * queue, held (PENDING); finished, out of every queue, held, no waiter (HELD_DONE); freed. */
#define WS__FUTURE_PENDING   0x010000B0u
#define WS__FUTURE_HELD_DONE 0x01000032u
#define WS__FUTURE_FREED     0x0F0E0000u
#define WS__FUTURE_TAKEN     0x1u
#define WS__FUTURE_DONE      0x2u
#define WS__FUTURE_WAITER    0x4u
#define WS__FUTURE_QUEUED    0x80u
#define WS__FUTURE_INLINE    0x02000000u
/* A future's deque item is its record's address with this bit set: a free task, which a wait's
 * help never takes (src/deque.h, WS_SDEQUE_ITEM_FREE). */
#define WS__ITEM_FREE 1u

/* A spawned task's record (a ws_task), and the inline join's: the task, then the deque's bottom
 * just after the inline fork pushed it (one past its index; at least 1, since indices start at
 * 1), or WS__NOT_INLINE (not pushed by the inline fork, or synced already). */
struct ws__spawn_rec {
    struct ws__join_rec rec;
    int64_t bottom;
};

/* The flag of a record pushed by the inline ws_spawn (src/join.c checks it against its own
 * names), and the mark of a record that the inline sync must leave to the library. */
#define WS__SPAWN_INLINE 0x800u
#define WS__NOT_INLINE   (-1)

/* The calling thread's worker deque; on other threads an owner's line on which every inline
 * push and pop declines (so that no test for NULL is needed). initial-exec: one load, no call,
 * also from a shared library (as the library itself does; the program must not dlopen the
 * library); local-exec, one instruction shorter, when the program links the static library and
 * defines WS_STATIC_LINK (as `pkg-config --static --cflags worksteal` does). */
#if defined(WS_STATIC_LINK)
#define WS__TLS_MODEL "local-exec"
#else
#define WS__TLS_MODEL "initial-exec"
#endif
extern WS_API __thread struct ws__fast *ws__tls_fast __attribute__((tls_model(WS__TLS_MODEL)));

/* The rest of a join whose child may have been stolen, or which found a job above it. */
WS_API void ws__join_finish(struct ws__join_rec *t);
/* a() threw (C++, or C with -fexceptions): takes the pushed child back (docs/api.md). */
WS_API void ws__join_abandon(struct ws__join_rec *t);
/* The cleanup of the inline join's guard: runs only while an exception unwinds the caller. */
static inline void ws__join_unwind(struct ws__join_rec **guard)
{
    if (__builtin_expect(*guard != NULL, 0))
        ws__join_abandon(*guard);
}
#endif

#if defined(__GNUC__) && !defined(WS_BUILDING_LIBRARY) && !defined(WS_NO_INLINE_JOIN)
/* The deque's one comparison: true if a push at bottom may take the fast path, that is
 * bottom - fast_base < limit, unsigned (false on a full or empty deque, a thief asking for
 * work, profiling and tracing: src/deque.h). gcc does not fold an atomic load into a compare;
 * on x86-64 a compare with memory is a single-copy-atomic read, one instruction fewer. */
static inline __attribute__((always_inline)) bool ws__fast_room(struct ws__fast *f, int64_t bottom)
{
    uint64_t d1 = (uint64_t)(bottom - f->fast_base);
#if defined(__x86_64__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
    __asm__ goto("cmpq %1, %0\n\tjae %l[full]" : : "r"(d1), "m"(f->limit) : "cc" : full);
    return true;
full:
    return false;
#else
    return __builtin_expect(d1 < __atomic_load_n(&f->limit, __ATOMIC_RELAXED), 1);
#endif
}

/* Pushes record t (fn, arg; flags) on the calling worker's deque if ws__fast_room lets it, and
 * sets *end to the new bottom (one past the index it filled). False: not a worker, or the push
 * needs the library. */
static inline __attribute__((always_inline)) bool ws__fast_push(struct ws__fast *f,
                                                                struct ws__join_rec *t, ws_fn fn,
                                                                void *arg, uint32_t flags,
                                                                int64_t *end)
{
    int64_t bottom = __atomic_load_n(&f->bottom, __ATOMIC_RELAXED);
    if (!ws__fast_room(f, bottom))
        return false;
    t->fn = fn;
    t->arg = arg;
    /* relaxed: published by the store of bottom. state 0 is pending. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t flags_state = flags; /* both fields in one store; state (the high half) 0 */
    __builtin_memcpy(&t->flags, &flags_state, sizeof flags_state);
#else
    t->flags = flags;
    __atomic_store_n(&t->state, 0u, __ATOMIC_RELAXED);
#endif
    __atomic_store_n(&f->slot[(uint64_t)bottom & f->mask], (void *)t, __ATOMIC_RELAXED);
    __atomic_store_n(&f->bottom, bottom + 1, __ATOMIC_RELEASE); /* pairs with the thieves */
    *end = bottom + 1;
    return true;
}

/* Adds one to a counter of the calling worker's (one writer, read by statistics readers). */
static inline __attribute__((always_inline)) void ws__fast_count(uint64_t *counter)
{
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
    /* Readers load it atomically: an unlocked add to memory is a single-copy-atomic update on
     * x86-64, one instruction where a relaxed load and store are three. */
    __asm__("incq %0" : "+m"(*counter));
#else
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
#endif
}

/* True if the record that the inline fork pushed, recording end (the deque's bottom after its
 * push), is the newest item of the calling worker's deque and private, and no thief asks for
 * work: bottom is still end, and its index end - 1 lies at or above take_bar, which is the
 * guard (a share, or a reserve, leaves the index below it), or above every index while a thief
 * asks (the library then answers). Only the owner moves bottom and the guard, so relaxed reads
 * suffice (docs/deque.md, "The inline fast path"). */
static inline __attribute__((always_inline)) bool ws__fast_owns(struct ws__fast *f, int64_t end)
{
    int64_t bottom = __atomic_load_n(&f->bottom, __ATOMIC_RELAXED);
    if (__builtin_expect(bottom != end, 0))
        return false;
#if defined(__x86_64__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
    /* take_bar as a memory operand (a single-copy-atomic read), as in ws__fast_room; bottom,
     * equal to end, is already in a register. */
    __asm__ goto("cmpq %1, %0\n\tjle %l[below]" : : "r"(bottom), "m"(f->take_bar) : "cc" : below);
    return true;
below:
    return false;
#else
    return __builtin_expect(end > __atomic_load_n(&f->take_bar, __ATOMIC_RELAXED), 1);
#endif
}

/* Takes the newest item, at index top, back (the caller checked that it is private and its
 * own): bottom becomes top. */
static inline __attribute__((always_inline)) void ws__fast_pop(struct ws__fast *f, int64_t top)
{
    __atomic_store_n(&f->bottom, top, __ATOMIC_RELEASE);
}

/* The address of record p (a pointer to a complete type), recomputed at the cold call that
 * needs it: gcc otherwise keeps the address of a record on the caller's stack in a callee-saved
 * register across the caller's calls for the cold paths alone (a push, a move and a pop per
 * fork). The lea touches no memory; the operand names the record so that gcc supplies its own
 * addressing mode (such as (%rsp)), and the result hides where the address came from. */
#if defined(__x86_64__) && !defined(__clang__)
#define WS__COLD_ADDR(p)                                 \
    __extension__({                                      \
        __typeof__(p) ws_p_;                             \
        __asm__("lea %1, %0" : "=r"(ws_p_) : "m"(*(p))); \
        ws_p_;                                           \
    })
#else
#define WS__COLD_ADDR(p) (p)
#endif

static inline __attribute__((always_inline)) void ws__join_inline(ws_fn a, void *a_arg, ws_fn b,
                                                                  void *b_arg)
{
    /* The new bottom goes in the record, which is in memory anyway (the deque holds its address),
     * rather than in a local that the compiler would keep in a callee-saved register across a():
     * 6 instructions fewer per join (bench/join-instructions.sh). */
    struct ws__spawn_rec t;
    if (__builtin_expect(a == NULL || b == NULL ||
                             !ws__fast_push(ws__tls_fast, &t.rec, b, b_arg, 0, &t.bottom),
                         0)) {
        ws_join(a, a_arg, b, b_arg);
        return;
    }
    {
        /* Disarmed on the normal path, where the compiler drops the cleanup call. */
        struct ws__join_rec *guard __attribute__((cleanup(ws__join_unwind))) = &t.rec;
        a(a_arg);
        guard = NULL;
    }
    /* The child is normally still the newest item and private: take it back. a() left the
     * deque as it found it (waits run only their own work, so nothing under the child was
     * popped), unless it left group jobs above it, or a thief's request made the child public:
     * ws__join_finish sees to those. */
    struct ws__fast *f = ws__tls_fast;
    int64_t end = t.bottom;
    if (ws__fast_owns(f, end)) {
        ws__fast_pop(f, end - 1);
        ws__fast_count(&f->fast_joins); /* a fork whose child was not stolen */
        b(t.rec.arg);
        return;
    }
    ws__join_finish(WS__COLD_ADDR(&t.rec));
}

/* The inline ws_sync's test: task, pushed by the inline ws_spawn at the calling worker's newest
 * index, which is private, is taken back (and marked synced); the caller runs it. False:
 * nothing was done, the library's ws_sync must finish the sync. Every sync, and a push by the
 * library, leave WS__NOT_INLINE in the record; a zeroed record's 0 is no bottom (indices start
 * at 1), and threads that are not workers have a bottom no record holds. */
static inline __attribute__((always_inline)) bool ws__sync_take(ws_task *task)
{
    struct ws__spawn_rec *s = (struct ws__spawn_rec *)(void *)task;
    struct ws__fast *f = ws__tls_fast;
    int64_t bottom = s->bottom;
    if (!ws__fast_owns(f, bottom))
        return false;
    ws__fast_pop(f, bottom - 1);
    s->bottom = WS__NOT_INLINE;     /* a second sync goes to the library, which aborts */
    ws__fast_count(&f->fast_syncs); /* closes the open spawn (src/worker.c checks the balance) */
    return true;
}

/* ws_spawn(task, fn, arg), inline. */
static inline __attribute__((always_inline)) void ws__spawn_inline(ws_task *task, ws_fn fn,
                                                                   void *arg)
{
    struct ws__fast *f = ws__tls_fast;
    struct ws__spawn_rec *s = (struct ws__spawn_rec *)(void *)task;
    if (__builtin_expect(task == NULL || fn == NULL ||
                             !ws__fast_push(f, &s->rec, fn, arg, WS__SPAWN_INLINE, &s->bottom),
                         0)) {
        ws_spawn(WS__COLD_ADDR(task), fn, arg);
        return;
    }
    f->open_spawns++;
}

static inline __attribute__((always_inline)) void ws__sync_inline(ws_task *task)
{
    if (__builtin_expect(task != NULL && ws__sync_take(task), 1)) {
        struct ws__join_rec *t = (struct ws__join_rec *)(void *)task;
        t->fn(t->arg);
        return;
    }
    ws_sync(WS__COLD_ADDR(task));
}

#define ws_join(a, a_arg, b, b_arg) ws__join_inline((a), (a_arg), (b), (b_arg))
#define ws_spawn(task, fn, arg)     ws__spawn_inline((task), (fn), (arg))
#define ws_sync(task)               ws__sync_inline(task)
#endif /* the inline fast path */

/* ---- typed tasks ------------------------------------------------------------------------ */
/* WS_TASK_n(R, name, T1, a1, ..., Tn, an) defines a task R name(T1 a1, ...) whose body follows
 * the macro; WS_VOID_TASK_n(name, T1, a1, ...) one with no result. n is 0 to 8. A task's frames
 * need no names: they live on the calling worker's task stack (an array of frames of its own,
 * not the thread's stack), and the worker comes to every task as a hidden parameter. Inside a
 * task's body:
 *     WS_SPAWN(name, a1, ...)  starts name(a1, ...), which may run in parallel from now on
 *     WS_SYNC(name)            waits for the newest unsynced WS_SPAWN of this body, which must be
 *                              of task name, and gives its result (void tasks: nothing)
 *     WS_CALL(name, a1, ...)   calls name(a1, ...) directly (a plain call of the task)
 * and from any thread, anywhere (main, a ws_fn, a loop's body, a group job, another pool's task):
 *     R name_run(ws_pool *pool, T1 a1, ...)   runs name(a1, ...) on pool and returns its result:
 *                                              on a worker of pool a plain call, elsewhere as
 *                                              ws_pool_run (blocks). pool NULL: the calling
 *                                              worker's pool, or the default pool elsewhere.
 * name_run on a pool being destroyed or inherited through fork() (ws_pool_run's ESHUTDOWN,
 * ENOTRECOVERABLE) is a contract violation: one line naming name_run, then abort.
 *
 * WS_DECLARE_TASK_n(R, name, T1, a1, ..., Tn, an) and WS_DECLARE_VOID_TASK_n(name, T1, a1, ...)
 * declare a task that is defined further down the file, with the same list as its definition
 * (its first line, copied), so that tasks defined above it may WS_SPAWN, WS_SYNC and WS_CALL it
 * and name_run may run it: mutual recursion. A list that differs from the definition's is a
 * compile-time error (conflicting types).
 *
 * The arguments and the result together take at most WS_TASK_FRAME_BYTES (a compile-time error
 * says so; pass a pointer to bigger data). Sync each spawn once, newest first, before the body
 * returns: a sync of another task's frame, a sync with no spawn of its own, and a body that
 * returns with a spawn unsynced print one line and abort (docs/api.md, "Typed tasks", says when
 * each is caught and what it costs). Example:
 *     WS_TASK_1(uint64_t, fib, int, n)
 *     {
 *         if (n < 2)
 *             return (uint64_t)n;
 *         WS_SPAWN(fib, n - 1);
 *         uint64_t x = WS_CALL(fib, n - 2);
 *         return x + WS_SYNC(fib);
 *     }
 *     ...
 *     uint64_t r = fib_run(NULL, 40);
 */
#define WS_TASK_FRAME_BYTES 120

/* Internal: the owner's words of a worker's task stack (src/frames.c has the protocol). head:
 * where the next frame goes; end_fast (atomic, accessed with __atomic builtins): a spawn whose
 * frame lies below it takes the fast path, 0 sends every spawn to the library (a thief asking
 * for work, profiling, tracing, the first spawn of a task the worker took); sync_bar (atomic,
 * as end_fast): the address below which frames were handed to the worker's deque, so that a
 * sync there goes to the library, or above every frame while a thief asks for work (the library
 * then answers it); fast_syncs: forks taken back by the fast path (one writer, read by
 * statistics readers). */
struct ws__frames {
    char *head;
    uint64_t end_fast;
    uint64_t sync_bar;
    uint64_t fast_syncs;
};
#define WS__FRAME_SIZE 128
/* A frame's runner: runs its task on the frame's arguments. Called with frame NULL, it answers
 * the name query instead: w then points to a const char *, set to the task's name (src/frames.c
 * names the task in its contract messages). */
typedef void (*ws__frame_fn)(struct ws__frames *w, void *frame);
/* The slow paths (src/frames.c): the spawn whose frame is written at w->head; the sync that
 * returns the newest frame once its task ran (checking that it is one of run's, named name);
 * a run from any thread; the type check's failure. */
WS_API void ws__frames_spawn_slow(struct ws__frames *w);
WS_API void *ws__frames_sync_slow(struct ws__frames *w, ws__frame_fn run, const char *name);
WS_API void ws__frames_run(ws_pool *pool, ws__frame_fn run, void *frame, const char *what);
WS_API void ws__frames_mismatch(const char *name);
/* x86-64: ws__frames_spawn_slow behind a call that keeps the general registers (src/frames.c,
 * in assembly), so that the values a task computes with after a WS_SPAWN stay in scratch
 * registers across the spawn rather than in callee-saved ones that the task would save and
 * restore on every call. Called only from the inline asm below, which says what it changes.
 *
 * What may run between that asm and the routine: with the shared library the call goes through
 * the program's PLT, and a process's first call through the dynamic linker's lazy resolver
 * (_dl_runtime_resolve, which may also run an IFUNC resolver); a sanitizer runtime adds nothing
 * here (the routine is ours, not intercepted). The x86-64 psABI lets such linkage code change any
 * register that carries no argument: of the general registers, r10 (the static chain) and r11
 * (the PLT's and the resolver's scratch). The resolver keeps the argument registers and rax for
 * the callee, and the callee-saved ones by the calling convention. The routine keeps every
 * general register. So the asm names r10 and r11 as changed, with the flags, memory and the
 * vector and mask registers (which the routine's C function may change); every other general
 * register survives the call, whatever the link. The static library and -Wl,-z,now bind the call
 * before it runs, and hid the two registers' loss; tests/test_stack_link.c checks both links. */
WS_API void ws__frames_spawn_slow_saving(void);

#if defined(__GNUC__) && !defined(WS_BUILDING_LIBRARY) && !defined(WS_NO_INLINE_JOIN)
/* Ends the spawn of the frame written at h == w->head: one comparison, then the new head, stored
 * for the library and returned for the task's own copy (the slow path may change it). */
static inline __attribute__((always_inline)) char *ws__frames_push(struct ws__frames *w, char *h)
{
#if defined(__x86_64__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
    __asm__ goto("cmpq %1, %0\n\tjae %l[slow]" : : "r"(h), "m"(w->end_fast) : "cc" : slow);
#else
    if (__builtin_expect((uint64_t)(uintptr_t)h >= __atomic_load_n(&w->end_fast, __ATOMIC_RELAXED),
                         0))
        goto slow;
#endif
    h += WS__FRAME_SIZE;
    w->head = h;
    return h;
slow:
#if defined(__x86_64__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
    /* Steps over the red zone; the vector registers are the C function's to change. */
    __asm__ volatile("leaq -128(%%rsp), %%rsp\n\t"
                     "call ws__frames_spawn_slow_saving@PLT\n\t"
                     "leaq 128(%%rsp), %%rsp"
                     :
                     : "D"(w)
                     : "memory", "cc", "r10", "r11", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
                       "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
                       "xmm15"
#if defined(__AVX512F__)
                       ,
                       "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23",
                       "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31", "k1",
                       "k2", "k3", "k4", "k5", "k6", "k7"
#endif
    );
#else
    ws__frames_spawn_slow(w);
#endif
    return w->head;
}

/* The newest frame below the task's head *hp, popped (head moved down, in *hp and in memory), if
 * it is still private (not handed to the deque); else NULL. */
static inline __attribute__((always_inline)) void *ws__frames_pop(struct ws__frames *w, char **hp)
{
    char *h = *hp - WS__FRAME_SIZE;
#if defined(__x86_64__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
    /* sync_bar as a memory operand (a single-copy-atomic read), as in ws__fast_room. */
    __asm__ goto("cmpq %1, %0\n\tjb %l[handed]" : : "r"(h), "m"(w->sync_bar) : "cc" : handed);
#else
    if (__builtin_expect((uint64_t)(uintptr_t)h < __atomic_load_n(&w->sync_bar, __ATOMIC_RELAXED),
                         0))
        goto handed;
#endif
    *hp = h;
    w->head = h;
    ws__fast_count(&w->fast_syncs);
    return h;
handed:
    return NULL;
}
#else
static inline char *ws__frames_push(struct ws__frames *w, char *h)
{
    (void)h;
    ws__frames_spawn_slow(w);
    return w->head;
}
static inline void *ws__frames_pop(struct ws__frames *w, char **hp)
{
    (void)w, (void)hp;
    return NULL;
}
#endif

/* The type check of the fast sync: the frame's runner must be the synced task's (3 instructions
 * per fork on x86-64; docs/api.md, "Typed tasks"). WS_UNCHECKED_SYNC leaves it out of the fast
 * sync; the slow sync checks always. */
#if !defined(WS_UNCHECKED_SYNC) && defined(__x86_64__) && defined(__GNUC__) && \
    !defined(__clang__) && !defined(WS_BUILDING_LIBRARY) && !defined(WS_NO_INLINE_JOIN)
/* The runner's address in a scratch register of the asm's own, rather than one that gcc would
 * keep in a callee-saved register across the task's calls. */
#define WS__FRAME_CHECK(f, fn, what)                                               \
    do {                                                                           \
        __asm__ goto("leaq %c1(%%rip), %%rax\n\tcmpq %%rax, %0\n\tjne %l[ws_bad_]" \
                     :                                                             \
                     : "m"((f)->run), "i"(fn)                                      \
                     : "rax", "cc"                                                 \
                     : ws_bad_);                                                   \
        break;                                                                     \
    ws_bad_:                                                                       \
        ws__frames_mismatch(what);                                                 \
    } while (0)
#elif !defined(WS_UNCHECKED_SYNC)
#define WS__FRAME_CHECK(f, fn, what) ((f)->run == (fn) ? (void)0 : ws__frames_mismatch(what))
#else
#define WS__FRAME_CHECK(f, fn, what) ((void)0)
#endif

#if defined(__cplusplus)
#define WS__STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define WS__STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif
#if defined(__GNUC__)
#define WS__EXPECT_TRUE(x) __builtin_expect(!!(x), 1)
#define WS__UNUSED         __attribute__((unused)) /* a body need not use the hidden worker */
/* A task's spawn, sync and call helpers are always inlined. The sync's matters: inlined
 * before gcc's early passes, it leaves a plain call of the task where gcc turns a sync in tail
 * position into a loop, as it does Lace's; otherwise gcc inlines the task into itself several
 * levels deep, which made Lace's fib 1.1 to 1.2 times as long (docs/scheduler.md). unused:
 * clang warns of a static inline function unused in the file it is defined in, as a task's
 * helpers and name_run often are. */
#define WS__HELPER static inline __attribute__((always_inline, unused))
#else
#define WS__EXPECT_TRUE(x) (x)
#define WS__UNUSED
#define WS__HELPER static inline
#endif

/* WS__MAP_n(m, T1, a1, ..., Tn, an) is m(T1, a1) ... m(Tn, an). */
#define WS__MAP_1(m, T, a)      m(T, a)
#define WS__MAP_2(m, T, a, ...) m(T, a) WS__MAP_1(m, __VA_ARGS__)
#define WS__MAP_3(m, T, a, ...) m(T, a) WS__MAP_2(m, __VA_ARGS__)
#define WS__MAP_4(m, T, a, ...) m(T, a) WS__MAP_3(m, __VA_ARGS__)
#define WS__MAP_5(m, T, a, ...) m(T, a) WS__MAP_4(m, __VA_ARGS__)
#define WS__MAP_6(m, T, a, ...) m(T, a) WS__MAP_5(m, __VA_ARGS__)
#define WS__MAP_7(m, T, a, ...) m(T, a) WS__MAP_6(m, __VA_ARGS__)
#define WS__MAP_8(m, T, a, ...) m(T, a) WS__MAP_7(m, __VA_ARGS__)
#define WS__PARAM_(T, a)        , T a
#define WS__LPARAM_(T, a)       T a,
#define WS__FIELD_(T, a)        T a;
#define WS__STORE_(T, a)        ws_f_->u.ws_args.a = a;
#define WS__ARG_(T, a)          , ws_f_->u.ws_args.a
#define WS__PASS_(T, a)         , a
#define WS__RESULT_KEEP(call)   ws_f_->u.ws_result = call
#define WS__RESULT_TAKEN(call)  return call
#define WS__RESULT_RETURN       return ws_f_->u.ws_result
#define WS__VOID_KEEP(call)     call
#define WS__VOID_TAKEN(call) \
    call;                    \
    return
#define WS__VOID_RETURN return

/* The prototypes of a task: what a declaration gives, and what its definition repeats. PARAMS:
 * its parameters, each after a comma (as WS__PARAM_ makes them); LPARAMS: the same, each before
 * a comma; each list in parentheses, which WS__LIST removes (its commas would otherwise separate
 * this macro's arguments). Two hidden parameters come first in name's parameters (a register each
 * in every call), last in the inline helpers (so that WS_SPAWN needs no comma rule): the worker's
 * task stack, and its head, which the body keeps in a local of its own (a register, where memory
 * would put a store and a load on every fork's path) and stores for the library at each spawn
 * and sync; it reloads it only after a slow path, the one place that can move it. A call leaves
 * head where it found it (frames.c: a sync leaves a segment at once). */
#define WS__LIST(...) __VA_ARGS__
#define WS__TASK_PROTOS(R, name, PARAMS, LPARAMS)                                               \
    static R name(struct ws__frames *ws_w_ WS__UNUSED, char *ws_h_ WS__UNUSED WS__LIST PARAMS); \
    WS__HELPER void name##_spawn_(WS__LIST LPARAMS struct ws__frames *ws_w_, char **ws_hp_);    \
    WS__HELPER R name##_sync_(struct ws__frames *ws_w_, char **ws_hp_);                         \
    WS__HELPER R name##_call_(WS__LIST LPARAMS struct ws__frames *ws_w_, char *ws_h_);          \
    static inline WS__UNUSED R name##_run(ws_pool *ws_pool_ WS__LIST PARAMS)

/* The definitions of a task. FIELDS, STORE: the frame's argument fields and the stores into
 * them; ARGS: the frame's arguments, each after a comma; PASS: the parameters' names, each after
 * a comma; KIND: WS__RESULT_ or WS__VOID_ (what the run does with the call, how the fast sync
 * returns it, what the slow sync and name_run return); RESULT: the frame's result field, if
 * any. */
#define WS__TASK_DEFS(R, name, PARAMS, LPARAMS, FIELDS, STORE, ARGS, PASS, KIND, RESULT) \
    WS__TASK_PROTOS(R, name, (PARAMS), (LPARAMS));                                       \
    typedef struct name##_sframe_ {                                                      \
        ws__frame_fn run;                                                                \
        union {                                                                          \
            struct {                                                                     \
                char ws_none_;                                                           \
                FIELDS                                                                   \
            } ws_args;                                                                   \
            RESULT                                                                       \
        } u;                                                                             \
    } name##_sframe_;                                                                    \
    WS__STATIC_ASSERT(sizeof(name##_sframe_) <= WS__FRAME_SIZE,                          \
                      "the arguments and result of task " #name                          \
                      " exceed WS_TASK_FRAME_BYTES: pass a pointer to them");            \
    static void name##_frun_(struct ws__frames *ws_w_, void *ws_p_)                      \
    {                                                                                    \
        name##_sframe_ *ws_f_ = (name##_sframe_ *)ws_p_;                                 \
        (void)ws_f_; /* a task without arguments or result does not read it */           \
        if (ws_p_ == NULL) {                                                             \
            *(const char **)(void *)ws_w_ = #name; /* the name query (ws__frame_fn) */   \
            return;                                                                      \
        }                                                                                \
        KIND##KEEP(name(ws_w_, ws_w_->head ARGS));                                       \
    }                                                                                    \
    WS__HELPER void name##_spawn_(LPARAMS struct ws__frames *ws_w_, char **ws_hp_)       \
    {                                                                                    \
        name##_sframe_ *ws_f_ = (name##_sframe_ *)(void *)*ws_hp_;                       \
        ws_f_->run = name##_frun_;                                                       \
        STORE *ws_hp_ = ws__frames_push(ws_w_, (char *)ws_f_);                           \
    }                                                                                    \
    WS__HELPER R name##_sync_(struct ws__frames *ws_w_, char **ws_hp_)                   \
    {                                                                                    \
        name##_sframe_ *ws_f_ = (name##_sframe_ *)ws__frames_pop(ws_w_, ws_hp_);         \
        if (WS__EXPECT_TRUE(ws_f_ != NULL)) {                                            \
            WS__FRAME_CHECK(ws_f_, name##_frun_, #name);                                 \
            KIND##TAKEN(name(ws_w_, *ws_hp_ ARGS));                                      \
        }                                                                                \
        ws_f_ = (name##_sframe_ *)ws__frames_sync_slow(ws_w_, name##_frun_, #name);      \
        *ws_hp_ = ws_w_->head;                                                           \
        KIND##RETURN;                                                                    \
    }                                                                                    \
    WS__HELPER R name##_call_(LPARAMS struct ws__frames *ws_w_, char *ws_h_)             \
    {                                                                                    \
        KIND##TAKEN(name(ws_w_, ws_h_ PASS));                                            \
    }                                                                                    \
    static inline WS__UNUSED R name##_run(ws_pool *ws_pool_ PARAMS)                      \
    {                                                                                    \
        name##_sframe_ ws_frame_, *ws_f_ = &ws_frame_;                                   \
        ws_f_->run = name##_frun_;                                                       \
        STORE ws__frames_run(ws_pool_, name##_frun_, ws_f_, #name "_run");               \
        KIND##RETURN;                                                                    \
    }                                                                                    \
    static R name(struct ws__frames *ws_w_ WS__UNUSED, char *ws_h_ WS__UNUSED PARAMS)

/* A task of n >= 1 arguments, their pairs in ...; RESULT: the result's field, if any. */
#define WS__TASK_N(n, R, name, KIND, RESULT, ...)                                              \
    WS__TASK_DEFS(R, name, WS__MAP_##n(WS__PARAM_, __VA_ARGS__),                               \
                  WS__MAP_##n(WS__LPARAM_, __VA_ARGS__), WS__MAP_##n(WS__FIELD_, __VA_ARGS__), \
                  WS__MAP_##n(WS__STORE_, __VA_ARGS__), WS__MAP_##n(WS__ARG_, __VA_ARGS__),    \
                  WS__MAP_##n(WS__PASS_, __VA_ARGS__), KIND, RESULT)
#define WS__TASK_R(n, R, name, ...) WS__TASK_N(n, R, name, WS__RESULT_, R ws_result;, __VA_ARGS__)
#define WS__TASK_V(n, name, ...)    WS__TASK_N(n, void, name, WS__VOID_, , __VA_ARGS__)
#define WS__DECLARE_N(n, R, name, ...)                               \
    WS__TASK_PROTOS(R, name, (WS__MAP_##n(WS__PARAM_, __VA_ARGS__)), \
                    (WS__MAP_##n(WS__LPARAM_, __VA_ARGS__)))

#define WS_TASK_0(R, name)        WS__TASK_DEFS(R, name, , , , , , , WS__RESULT_, R ws_result;)
#define WS_VOID_TASK_0(name)      WS__TASK_DEFS(void, name, , , , , , , WS__VOID_, )
#define WS_TASK_1(R, name, ...)   WS__TASK_R(1, R, name, __VA_ARGS__)
#define WS_TASK_2(R, name, ...)   WS__TASK_R(2, R, name, __VA_ARGS__)
#define WS_TASK_3(R, name, ...)   WS__TASK_R(3, R, name, __VA_ARGS__)
#define WS_TASK_4(R, name, ...)   WS__TASK_R(4, R, name, __VA_ARGS__)
#define WS_TASK_5(R, name, ...)   WS__TASK_R(5, R, name, __VA_ARGS__)
#define WS_TASK_6(R, name, ...)   WS__TASK_R(6, R, name, __VA_ARGS__)
#define WS_TASK_7(R, name, ...)   WS__TASK_R(7, R, name, __VA_ARGS__)
#define WS_TASK_8(R, name, ...)   WS__TASK_R(8, R, name, __VA_ARGS__)
#define WS_VOID_TASK_1(name, ...) WS__TASK_V(1, name, __VA_ARGS__)
#define WS_VOID_TASK_2(name, ...) WS__TASK_V(2, name, __VA_ARGS__)
#define WS_VOID_TASK_3(name, ...) WS__TASK_V(3, name, __VA_ARGS__)
#define WS_VOID_TASK_4(name, ...) WS__TASK_V(4, name, __VA_ARGS__)
#define WS_VOID_TASK_5(name, ...) WS__TASK_V(5, name, __VA_ARGS__)
#define WS_VOID_TASK_6(name, ...) WS__TASK_V(6, name, __VA_ARGS__)
#define WS_VOID_TASK_7(name, ...) WS__TASK_V(7, name, __VA_ARGS__)
#define WS_VOID_TASK_8(name, ...) WS__TASK_V(8, name, __VA_ARGS__)

#define WS_DECLARE_TASK_0(R, name)        WS__TASK_PROTOS(R, name, (), ())
#define WS_DECLARE_VOID_TASK_0(name)      WS__TASK_PROTOS(void, name, (), ())
#define WS_DECLARE_TASK_1(R, name, ...)   WS__DECLARE_N(1, R, name, __VA_ARGS__)
#define WS_DECLARE_TASK_2(R, name, ...)   WS__DECLARE_N(2, R, name, __VA_ARGS__)
#define WS_DECLARE_TASK_3(R, name, ...)   WS__DECLARE_N(3, R, name, __VA_ARGS__)
#define WS_DECLARE_TASK_4(R, name, ...)   WS__DECLARE_N(4, R, name, __VA_ARGS__)
#define WS_DECLARE_TASK_5(R, name, ...)   WS__DECLARE_N(5, R, name, __VA_ARGS__)
#define WS_DECLARE_TASK_6(R, name, ...)   WS__DECLARE_N(6, R, name, __VA_ARGS__)
#define WS_DECLARE_TASK_7(R, name, ...)   WS__DECLARE_N(7, R, name, __VA_ARGS__)
#define WS_DECLARE_TASK_8(R, name, ...)   WS__DECLARE_N(8, R, name, __VA_ARGS__)
#define WS_DECLARE_VOID_TASK_1(name, ...) WS__DECLARE_N(1, void, name, __VA_ARGS__)
#define WS_DECLARE_VOID_TASK_2(name, ...) WS__DECLARE_N(2, void, name, __VA_ARGS__)
#define WS_DECLARE_VOID_TASK_3(name, ...) WS__DECLARE_N(3, void, name, __VA_ARGS__)
#define WS_DECLARE_VOID_TASK_4(name, ...) WS__DECLARE_N(4, void, name, __VA_ARGS__)
#define WS_DECLARE_VOID_TASK_5(name, ...) WS__DECLARE_N(5, void, name, __VA_ARGS__)
#define WS_DECLARE_VOID_TASK_6(name, ...) WS__DECLARE_N(6, void, name, __VA_ARGS__)
#define WS_DECLARE_VOID_TASK_7(name, ...) WS__DECLARE_N(7, void, name, __VA_ARGS__)
#define WS_DECLARE_VOID_TASK_8(name, ...) WS__DECLARE_N(8, void, name, __VA_ARGS__)

/* WS_SPAWN(name, args...), WS_CALL(name, args...): name is the first item of the list, the
 * arguments the rest, each followed by a comma before the hidden worker (an empty rest works in
 * C11, where a macro's variable part may be empty but not absent). */
#define WS__CAT_(a, b)     a##b
#define WS__CAT(a, b)      WS__CAT_(a, b)
#define WS__FIRST_(x, ...) x
#define WS__AFTER_(x, ...) __VA_ARGS__
#define WS_SPAWN(...) \
    WS__CAT(WS__FIRST_(__VA_ARGS__, ~), _spawn_)(WS__AFTER_(__VA_ARGS__, ) ws_w_, &ws_h_)
#define WS_CALL(...) \
    WS__CAT(WS__FIRST_(__VA_ARGS__, ~), _call_)(WS__AFTER_(__VA_ARGS__, ) ws_w_, ws_h_)
#define WS_SYNC(name) name##_sync_(ws_w_, &ws_h_)

/* ---- loops ------------------------------------------------------------------------------ */

typedef void (*ws_range_fn)(size_t begin, size_t end, void *ctx);

/* Calls body(b, e, ctx) on disjoint, non-empty subranges that together cover [begin,end), and
 * returns when all calls are done. Any thread; blocks (outside a worker the loop runs on the
 * default pool). grain > 0: the range is halved, each upper half forked, until at most grain
 * items remain. grain 0: automatic; the range runs in adaptive chunks and is halved only when
 * another worker wants work. begin >= end: nothing is called. body may fork and run nested
 * loops. A NULL body is a contract violation (aborts). docs/loops.md has the details. */
WS_API void ws_parallel_for(size_t begin, size_t end, size_t grain, ws_range_fn body, void *ctx);

typedef void (*ws_fold_fn)(size_t begin, size_t end, void *acc, void *ctx);
typedef void (*ws_combine_fn)(void *acc, const void *right, void *ctx);

/* Folds [begin,end) into *result over a fixed tree: the range is halved until at most grain
 * items remain (grain 0: about n / 1024, at most 4096; docs/loops.md); fold(b, e, acc, ctx) runs
 * on each leaf with acc a fresh copy of identity (acc_size bytes), and combine(acc, right, ctx)
 * merges each right sibling into its left one (acc = acc + right, in range order). The tree
 * depends only on end - begin and grain, never on the worker count or timing, so floating-point
 * results are reproducible bit for bit (given deterministic fold and combine). Any thread;
 * blocks. Empty range: result = identity (result may alias identity). Returns 0, EINVAL
 * (acc_size 0, NULL identity or result, begin > end), or ENOMEM (an accumulator over 256 bytes
 * and no memory for its scratch); on error nothing is called and result is untouched. A NULL
 * fold or combine is a contract violation (aborts). */
WS_API WS_NODISCARD int ws_parallel_reduce(size_t begin, size_t end, size_t grain, size_t acc_size,
                                           const void *identity, ws_fold_fn fold,
                                           ws_combine_fn combine, void *ctx, void *result);

/* ---- groups and submission -------------------------------------------------------------- */

/* A set of jobs that can be waited for together, on the caller's stack. Fields are private; the
 * size keeps the word that submitters count on apart from what running jobs read. */
typedef struct ws_group {
    union {
        void *ws_ptr[24];
        uint64_t ws_u64[24];
    } ws_private;
} ws_group;

#define WS_HIGH_PRIORITY 1u /* runs before normal external work */

/* pool NULL: the default pool. Called by a group job (in its own function, or in fork-join code
 * it runs on its own thread), the new group is nested in that job's group: cancelling the outer
 * group cancels it too. A nested group must be finished with (waited for) before the job that
 * made it returns. */
WS_API void ws_group_init(ws_group *g, ws_pool *pool);
/* As ws_group_init on parent's pool, nested in parent whatever the calling thread runs. */
WS_API void ws_group_init_nested(ws_group *g, ws_group *parent);
/* Any thread. 0, EINVAL (unknown flags), ENOMEM, ESHUTDOWN, ENOTRECOVERABLE (a pool inherited
 * through fork()), or ECANCELED (g or a group it is nested in is cancelled); on error fn never
 * runs. */
WS_API WS_NODISCARD int ws_group_submit(ws_group *g, ws_fn fn, void *arg, unsigned flags);
/* As ws_group_submit; if the job is cancelled before it starts, on_cancel(arg) runs instead of
 * fn(arg) (to free arg; on_cancel may be NULL). */
WS_API WS_NODISCARD int ws_group_submit_cancellable(ws_group *g, ws_fn fn, ws_fn on_cancel,
                                                    void *arg, unsigned flags);
/* Every job submitted to g so far has finished. On a worker of g's pool it runs g's own jobs
 * meanwhile (never unrelated work). */
WS_API void ws_group_wait(ws_group *g);
/* ws_group_wait, then ws_group_status(g). */
WS_API int ws_group_wait_status(ws_group *g);
/* Never blocks, never helps. 0 if every job submitted to g so far has finished, else EBUSY. A
 * worker may count a batch of outside jobs off g up to tens of microseconds after they ran,
 * unless someone waits for g (docs/external.md, "Owed counts"). */
WS_API int ws_group_try_wait(ws_group *g);
/* As ws_group_wait for at most timeout_ns nanoseconds, without helping: 0 when every job has
 * finished, ETIMEDOUT when the time is up first. On a worker the caller counts as blocked
 * (ws_block_begin) while it sleeps. */
WS_API int ws_group_timed_wait(ws_group *g, uint64_t timeout_ns);

/* Errors and cancellation (docs/api.md). Any thread, while g is initialised. */
/* Records err (> 0) as g's error if g has none yet (the first ws_group_fail to run wins), then
 * cancels g. err <= 0 is a contract violation. */
WS_API void ws_group_fail(ws_group *g, int err);
/* Jobs of g (and of groups nested in it) that have not started yet never run; later submissions
 * return ECANCELED. Running jobs finish (they may poll ws_group_cancelled). Idempotent. */
WS_API void ws_group_cancel(ws_group *g);
/* True if g or a group it is nested in is cancelled. Cheap (a load per nesting level). */
WS_API bool ws_group_cancelled(const ws_group *g);
/* g's first error; else ECANCELED if ws_group_cancelled(g); else 0. */
WS_API int ws_group_status(const ws_group *g);
/* Jobs of g that were cancelled before they started (since init or reset). */
WS_API uint64_t ws_group_skipped(const ws_group *g);
/* Makes a finished group new again (no error, not cancelled, nothing skipped), keeping its pool
 * and nesting. 0, or EBUSY if jobs are pending (nothing changes). Not concurrently with other
 * calls on g. */
WS_API int ws_group_reset(ws_group *g);
/* A detached job. Any thread. 0, EINVAL, ENOMEM, ESHUTDOWN or ENOTRECOVERABLE; on error fn
 * never runs. */
WS_API WS_NODISCARD int ws_submit(ws_pool *pool, ws_fn fn, void *arg, unsigned flags);

/* ---- futures ---------------------------------------------------------------------------- */
/* A future is the result of fn(arg) submitted to a pool: it may be got in any order, from any
 * thread, any number of times, and is given back with ws_future_free exactly once. Its record is
 * recycled (no allocation per future once a pool is warm). docs/api.md, "Futures", has the
 * rules; docs/scheduler.md, "Getting a future", why a get always makes progress. */

typedef struct ws_future ws_future; /* opaque */
typedef void *(*ws_future_fn)(void *arg);

/* Starts fn(arg) on pool (NULL: the calling worker's pool, or the default pool outside a worker)
 * and sets *out to its future, before fn can start (so fn may find its own handle through arg).
 * On a worker of pool the future goes on the worker's own deque (LIFO, like ws_spawn); elsewhere
 * through the injector (FIFO). Any thread. 0, ENOMEM, ESHUTDOWN (the pool is being destroyed)
 * or ENOTRECOVERABLE (a pool inherited through fork()); on error fn never runs and *out is
 * untouched. A NULL out or fn is a contract violation (aborts). */
WS_API WS_NODISCARD int ws_future_submit(ws_future **out, ws_pool *pool, ws_future_fn fn,
                                         void *arg);
/* fn's result, once fn has returned; NULL if f was cancelled before it started. Any thread, any
 * number of times before ws_future_free. On a worker of f's pool the caller never sleeps while
 * it can help: it runs f itself if f has not started (wherever f is queued), and otherwise runs
 * work of the worker running f; it parks only when none is left. Elsewhere it sleeps until f is
 * done. Getting a future from inside its own fn (directly) is a contract violation (aborts);
 * a longer cycle of gets deadlocks. */
WS_API void *ws_future_get(ws_future *f);
/* ws_future_get, then the status (never EBUSY); *result (if result is not NULL) gets the
 * result. */
WS_API int ws_future_wait(ws_future *f, void **result);
/* Never blocks: 0 once fn has returned, EBUSY before, ECANCELED if f was cancelled before fn
 * started, or the error given to ws_future_fail (which wins over both). Any thread. */
WS_API int ws_future_status(const ws_future *f);
/* If fn has not started, it never will (ws_future_get returns NULL). Idempotent; no effect on
 * a running or finished future. Any thread. True if f is now cancelled before it started. */
WS_API bool ws_future_cancel(ws_future *f);
/* Records err (> 0) as f's error unless it has one (the first call wins), then cancels f. Any
 * thread, fn's own code included. err <= 0 is a contract violation. */
WS_API void ws_future_fail(ws_future *f, int err);
/* Gives f back. Exactly once per future, from any thread, at any time: a future freed before fn
 * has run still runs (unless cancelled) and its record is recycled afterwards. A second free,
 * or a get after the free, is a contract violation, caught (abort) while the record has not been
 * reused for another submission. */
WS_API void ws_future_free(ws_future *f);

/* ---- the inline fast path of the futures ----
 * Internal, not part of the API: a future submitted on a worker and got by the same worker while
 * it is still the newest item of its deque runs inline, as a spawn and its sync do, with the
 * claim and the finish of its state word (src/future_state.h) as its only locked instructions;
 * its record comes from, and goes back to, a list the worker keeps ready (struct ws__fast's
 * futures). Every other case calls the library. WS_NO_INLINE_JOIN turns it off as well.
 * docs/api.md, "Futures", has the argument. */
#if defined(__GNUC__) && !defined(WS_BUILDING_LIBRARY) && !defined(WS_NO_INLINE_JOIN)
/* The inline get's claim and finish, by name, so that tests/model_future_inline.c can weaken
 * each. */
#ifndef WS__FUTURE_INLINE_CLAIM
#define WS__FUTURE_INLINE_CLAIM(p, seen, v) \
    __atomic_compare_exchange_n((p), (seen), (v), 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)
#endif
#ifndef WS__FUTURE_INLINE_FINISH
#define WS__FUTURE_INLINE_FINISH(p, v) __atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#endif

static inline void ws__future_unwind(struct ws__future_rec **guard)
{
    if (__builtin_expect(*guard != NULL, 0))
        ws__future_escaped();
}

static inline __attribute__((always_inline, warn_unused_result)) int
ws__future_submit_inline(ws_future **out, ws_pool *pool, ws_future_fn fn, void *arg)
{
    struct ws__fast *q = ws__tls_fast;
    struct ws__future_rec *r = (struct ws__future_rec *)q->futures;
    int64_t bottom = __atomic_load_n(&q->bottom, __ATOMIC_RELAXED);
    if (__builtin_expect(out == NULL || fn == NULL || r == NULL ||
                             (pool != NULL && (const void *)pool != q->pool) ||
                             !ws__fast_room(q, bottom) ||
                             __atomic_load_n(&q->dead_slots, __ATOMIC_RELAXED) >= WS__DEAD_REMOTE,
                         0))
        return (ws_future_submit)(out, pool, fn, arg);
    /* relaxed: the list is the owner's. */
    q->futures = __atomic_load_n(&r->task.rest[1], __ATOMIC_RELAXED);
    q->futures_room++;
    r->fn = fn;
    r->arg = arg;
    r->result = NULL;
    /* relaxed: published by the store of bottom, as an inline spawn's record is. */
    __atomic_store_n(&r->error, 0u, __ATOMIC_RELAXED);
    __atomic_store_n(&r->task.state, WS__FUTURE_PENDING, __ATOMIC_RELAXED);
    /* relaxed: read by this worker's inline get (after its home test: other threads skip it) and
     * by leapfroggers after an INLINE claim's release; before the push, as *out is (fn may find
     * its handle through it, and once pushed the future may run and be recycled at once). */
    __atomic_store_n(&r->bottom, bottom + 1, __ATOMIC_RELAXED);
    *out = (ws_future *)(void *)r;
    __atomic_store_n(&q->slot[(uint64_t)bottom & q->mask], (void *)((uintptr_t)r | WS__ITEM_FREE),
                     __ATOMIC_RELAXED);
    __atomic_store_n(&q->bottom, bottom + 1, __ATOMIC_RELEASE); /* pairs with the thieves */
    return 0;
}

static inline __attribute__((always_inline)) void *ws__future_get_inline(ws_future *f)
{
    struct ws__future_rec *r = (struct ws__future_rec *)(void *)f;
    struct ws__fast *q = ws__tls_fast;
    if (__builtin_expect(r == NULL, 0))
        return (ws_future_get)(f);
    /* acquire: as the library's read of the word (future_state.h). */
    uint32_t s = __atomic_load_n(&r->task.state, __ATOMIC_ACQUIRE);
    /* Pushed on this worker's deque (home), still the newest item there, private, and not
     * started: as the inline sync's test (docs/deque.md, "The inline fast path"). The home test
     * comes first: only the home worker reads bottom (relaxed: its own write). */
    if (__builtin_expect(s != WS__FUTURE_PENDING || r->home != q, 0))
        return (ws_future_get)(f);
    int64_t end = __atomic_load_n(&r->bottom, __ATOMIC_RELAXED);
    if (__builtin_expect(!ws__fast_owns(q, end), 0))
        return (ws_future_get)(f);
    /* acq_rel: the claim of future_state.h (ws__future_claim), marked INLINE: a getter
     * elsewhere that leapfrogs takes only items at or above the future's own index, end - 1
     * (docs/scheduler.md, "Getting a future"). Fails if a getter elsewhere claimed or cancelled
     * it, or announced itself: the library then does it all. */
    uint32_t claim = WS__FUTURE_TAKEN | WS__FUTURE_INLINE | q->runner;
    if (__builtin_expect(!WS__FUTURE_INLINE_CLAIM(&r->task.state, &s, s | claim), 0))
        return (ws_future_get)(f);
    ws__fast_pop(q, end - 1);
    /* The pop may uncover dead slots (futures that gets claimed where they sat): they go
     * before fn pushes anything above them. */
    if (__builtin_expect(__atomic_load_n(&q->dead_slots, __ATOMIC_RELAXED) != 0, 0))
        ws__future_drop_dead();
    void *result;
    {
        /* Disarmed on the normal path, where the compiler drops the cleanup call. */
        struct ws__future_rec *guard __attribute__((cleanup(ws__future_unwind))) = r;
        result = r->fn(r->arg);
        guard = NULL;
    }
    r->result = result;
    /* acq_rel: the finish of future_state.h (ws__future_finish). The bits cleared are set and
     * DONE is not, so the addition cannot carry. */
    uint32_t clear = claim | WS__FUTURE_QUEUED;
    uint32_t old = WS__FUTURE_INLINE_FINISH(&r->task.state, WS__FUTURE_DONE - clear);
    if (__builtin_expect(old & WS__FUTURE_WAITER, 0))
        ws__future_finish_rare(r, old);
    return result;
}

static inline __attribute__((always_inline)) void ws__future_free_inline(ws_future *f)
{
    struct ws__future_rec *r = (struct ws__future_rec *)(void *)f;
    struct ws__fast *q = ws__tls_fast;
    /* acquire: as the library's read of the word: the runner's last accesses to the record
     * come before its reuse. */
    if (__builtin_expect(r != NULL &&
                             __atomic_load_n(&r->task.state, __ATOMIC_ACQUIRE) ==
                                 WS__FUTURE_HELD_DONE &&
                             r->home == q && q->futures_room != 0,
                         1)) {
        /* relaxed: nobody else holds the record (finished, out of every queue). */
        __atomic_store_n(&r->task.state, WS__FUTURE_FREED, __ATOMIC_RELAXED);
        __atomic_store_n(&r->task.rest[1], q->futures, __ATOMIC_RELAXED);
        q->futures = r;
        q->futures_room--;
        return;
    }
    (ws_future_free)(f);
}

#define ws_future_submit(out, pool, fn, arg) ws__future_submit_inline((out), (pool), (fn), (arg))
#define ws_future_get(f)                     ws__future_get_inline(f)
#define ws_future_free(f)                    ws__future_free_inline(f)
#endif /* the inline fast path of the futures */

/* Brackets a blocking call (I/O, a lock, a sleep) inside a task: meanwhile the pool keeps P
 * workers running by waking or starting a spare. Outside a worker they do nothing. */
WS_API void ws_block_begin(void);
WS_API void ws_block_end(void);

/* ---- measurement ------------------------------------------------------------------------ */

/* The counters, as one list: X(name, how totals combine: SUM or MAX, description). */
#define WS_STATS_FIELDS(X)                                                                  \
    X(spawns, SUM, "tasks pushed on a worker's own deque")                                  \
    X(steals, SUM, "tasks taken from another worker's deque")                               \
    X(steal_attempts, SUM, "steal attempts, including failed ones")                         \
    X(parks, SUM, "times a worker went to sleep")                                           \
    X(pops, SUM, "spawned tasks popped back and run by their owner")                        \
    X(inline_runs, SUM, "children run inline because the deque was full or could not grow") \
    X(injector_takes, SUM, "external jobs taken from the injectors")                        \
    X(wakeups, SUM, "times an idle worker was woken for work")                              \
    X(deque_growths, SUM, "times a deque array doubled")                                    \
    X(max_deque_depth, MAX, "the deepest any deque has been")                               \
    X(leapfrogs, SUM, "steals by a join waiting for its stolen child, from the thief")      \
    X(steals_l2, SUM, "steals between placed workers sharing an L2 (or a core)")            \
    X(steals_l3, SUM, "steals between placed workers sharing an L3, not an L2")             \
    X(steals_numa, SUM, "steals within a NUMA node (or package), not an L3")                \
    X(steals_remote, SUM, "steals between placed workers on different NUMA nodes")          \
    X(idle_asking_ns, SUM,                                                                  \
      "ns workers were idle after asking a busy worker for its private work, until they "   \
      "found work")                                                                         \
    X(idle_asking_max_ns, MAX, "the longest of those spells, ns")

typedef struct ws_stats {
#define WS_STATS_FIELD_(name, kind, doc) uint64_t name;
    WS_STATS_FIELDS(WS_STATS_FIELD_)
#undef WS_STATS_FIELD_
} ws_stats;

/* Totals over all workers since creation. Any thread; the figures of a running pool are a
 * consistent-enough snapshot (each counter is exact, they are not read at one instant). */
WS_API void ws_pool_stats(ws_pool *pool, ws_stats *out);

typedef struct ws_profile {
    double work_s;          /* T1: total time spent in tasks */
    double span_s;          /* T-infinity: the longest chain of dependent work */
    double parallelism;     /* work / span */
    double burdened_span_s; /* span with each steal's measured cost on the paths it delays */
    double elapsed_s;       /* wall-clock time of the run */
    uint64_t strands;       /* pieces of serial work measured */
    uint64_t steals;        /* steals during the run */
    /* The profiler's own time per strand (its clock reads and accounting), measured when the
     * process first profiles; strands not much longer than this are measured coarsely. */
    double overhead_per_strand_s;
    /* Stalls: time the machine took from a CPU without switching its thread out (interrupts;
     * on a virtual machine, the host), charged to whatever strand ran. A strand far longer
     * than the recent strands of the same place in the program is taken as stalled, and counts
     * at their typical length in the stall-free figures, as does one too close to that length
     * for the clock to tell them apart (docs/profiling.md). */
    double stall_free_work_s;      /* work_s with each stalled strand's excess taken off */
    double stall_free_span_s;      /* span_s likewise: the longest path, strands stall-free */
    double stall_free_parallelism; /* stall_free_work_s / stall_free_span_s */
    uint64_t stalls;               /* strands found stalled */
    /* 1: the stall-free figures come from the thread's user-mode CPU cycles
     * (WS_PROFILE_CYCLES=1 on a machine with a PMU), 0: from the detector above. */
    unsigned stall_clock;
} ws_profile;

/* ws_pool_run with work/span measurement of the fork-join computation fn(arg) (ws_join,
 * ws_spawn/ws_sync and the loops built on them; group and detached jobs are not part of it).
 * Any thread but the pool's own workers; blocks. Returns 0, EINVAL (NULL out, or called from a
 * task of the pool), EBUSY (the pool is already being profiled), or as ws_pool_run. */
WS_API int ws_pool_profile(ws_pool *pool, ws_fn fn, void *arg, ws_profile *out);
/* The speedup bound of the work/span laws on `workers` workers: min(workers, T1/T-infinity). */
WS_API double ws_profile_speedup_bound(const ws_profile *p, unsigned workers);
/* An estimate that also charges steal costs: T1 / (T1/workers + burdened span). */
WS_API double ws_profile_burdened_speedup(const ws_profile *p, unsigned workers);

#ifdef __cplusplus
}
#endif

#endif /* WORKSTEAL_H */
