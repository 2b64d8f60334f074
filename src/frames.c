/* frames.c: the task stack of typed tasks (WS_TASK_n, worksteal.h).
 *
 * Each worker has a stack of fixed-size frames of its own, in segments of the heap. A stack
 * spawn writes the frame (the task's runner and its arguments) at `head` and moves `head` up; a
 * stack sync moves it down and calls the task with the arguments read back. While a frame lies
 * at or above `split` it is private: no other thread knows of it, so both ends are plain loads
 * and stores, and the spawn's one test is the comparison of the frame's address with `end_fast`.
 *
 * Thieves never read the task stack. Frames reach them through the worker's split deque: the
 * owner hands a frame over by making a ws_spawn record for it (in the segment's array of
 * records, at the frame's index) whose task runs the frame, pushing it like any spawn, and
 * moving `split` above it. From there on the deque's protocol decides who runs it (deque.c),
 * and the sync of a frame below `split` is the library's ws_sync of its record: it takes the
 * record back, or waits for the thief while leapfrogging (wait.c). The frame stays where it is
 * until that sync returns, so a thief runs it in place and writes its result there; the owner's
 * head stays above it meanwhile. The owner hands frames over
 *   - when a thief asks: the thief's request (deque.c, sdeque_ask) exchanges `end_fast` to 0 as
 *     well as the deque's limit, so the owner's next stack spawn comes here and hands over the
 *     older half of its private frames, then publishes them;
 *   - at the first spawn of a typed task the worker took from elsewhere, the oldest frame, if
 *     the pool has other threads (the deque's reserve does the same for its own pushes);
 *   - before it pushes anything else on its deque (ws__frames_flush): every private frame.
 *     The deque's items then stay in spawn order, since private frames are always newer than
 *     the deque's items. To make that hold, the first stack spawn after a flush closes the
 *     deque's fast path, so that every later push of the deque comes through a flush;
 *   - before it sleeps or blocks (idle.c, spare.c): every private frame, then all is published;
 *   - when profiling or tracing, or in the mutex-deque build: every frame at its spawn, so that
 *     ws_spawn and ws_sync instrument typed tasks as they do spawns.
 * A segment holds SEGMENT_FRAMES frames and one more, where a spawn that finds the segment full
 * writes its frame; the slow spawn then hands the segment's private frames over, moves that
 * frame to the bottom of a new segment and hands it over too. Its sync is therefore slow, and
 * goes back to the older segment at once, so that head is where it was before the spawn: a
 * task keeps head in a local of its own (worksteal.h), and a call must return with the worker's
 * head equal to its caller's copy. A recursion deeper than the heap's memory aborts with a message;
 * any other depth works, and the deque's own cap (65,535 items) only makes a handed-over frame run
 * at once (as a ws_spawn that cannot push does).
 *
 * Requests follow the deque's rule ("Requests" in deque.c): every write of `end_fast` after
 * init is a read-modify-write; the owner reopens the fast path only by a CAS from the value it
 * read when its slow spawn began, and then reads the deque's `wanted` again, closing the fast
 * path if a request came meanwhile. So a thief's request is never lost with the fast path open.
 * Nothing but a request makes the owner share its private frames, so no thief may go to sleep
 * without leaving one: a thief tries every worker whose `end_fast` is not 0 (open, or closed by
 * the owner, WS__FRAMES_CLOSED), and a steal that fails there for any reason asks (deque.c);
 * the answer publishes and wakes a sleeper (idle.c). 0 means a request is pending, or that the
 * worker runs no typed task.
 *
 * Checks: the slow sync compares the frame's runner with the sync's task, and refuses a sync at
 * or below the head at which the running typed task began (the floor); the end of each stack
 * task that the worker took from elsewhere (or ran for name_run) checks that head is back at
 * its floor. The fast sync's type check is in worksteal.h.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Frames per segment. A macro so that tests and models can make segments small. */
#ifndef WS_FRAMES_PER_SEGMENT
#define WS_FRAMES_PER_SEGMENT 2048
#endif
enum { SEGMENT_FRAMES = WS_FRAMES_PER_SEGMENT, FRAME = WS__FRAME_SIZE };

/* The owner's orders on end_fast ("Requests" above), by name so that a model can weaken them;
 * and the wake-up after reopening from a request's 0, by name so that a model can remove it. */
#ifndef WS_FRAMES_REOPEN
#define WS_FRAMES_REOPEN(p, e, v) ws_cas_acquire((p), (e), (v))
#endif
#ifndef WS_FRAMES_WAKE_ASKED
#define WS_FRAMES_WAKE_ASKED(seen) ((seen) == 0)
#endif

struct ws__segment {
    void *block;       /* the allocation (not zeroed: frames are written before they are read) */
    ws__segment *prev; /* the older segment, or NULL */
    char *prev_head;   /* head in prev when this one was entered (prev's frames were handed over) */
    char *end;         /* frames + SEGMENT_FRAMES frames: the overflow frame */
    ws_task records[SEGMENT_FRAMES]; /* the records of handed-over frames, by index */
    alignas(WS_CACHE_LINE) char frames[(SEGMENT_FRAMES + 1) * FRAME];
};

/* Every frame starts with its runner (worksteal.h, WS__STACK_DECLS). */
typedef struct frame_head {
    ws__frame_fn run;
} frame_head;

static ws__task_stack *stack_of(struct ws__frames *f)
{
    return (ws__task_stack *)(void *)f;
}

static ws__worker *worker_of(ws__task_stack *s)
{
    return (ws__worker *)(void *)((char *)s - offsetof(ws__worker, stack));
}

static struct ws__frames *frames_of(ws__task_stack *s)
{
    return (struct ws__frames *)(void *)&s->f;
}

static int64_t private_frames(const ws__task_stack *s)
{
    return (s->f.head - s->split) / FRAME;
}

static void frames_destroy(ws__worker *w)
{
    ws__task_stack *s = &w->stack;
    if (s->spare != NULL)
        ws__free(s->spare->block);
    while (s->seg != NULL) {
        ws__segment *prev = s->seg->prev;
        ws__free(s->seg->block);
        s->seg = prev;
    }
}

static ws__segment *segment_new(ws__task_stack *s)
{
    ws__segment *n = s->spare;
    s->spare = NULL;
    void *block = n == NULL ? ws__malloc(sizeof *n + WS_CACHE_LINE) : NULL;
    if (block != NULL) {
        n = (ws__segment *)(((uintptr_t)block + WS_CACHE_LINE - 1) &
                            ~(uintptr_t)(WS_CACHE_LINE - 1));
        n->block = block;
    }
    if (n == NULL) {
        fprintf(stderr,
                "worksteal: out of memory for a typed task's frames (a segment of %zu "
                "bytes)\n",
                sizeof *n);
        abort();
    }
    n->end = n->frames + (size_t)SEGMENT_FRAMES * FRAME;
    return n;
}

/* Opens the fast path up to the segment's end, unless end_fast changed since the slow spawn read
 * `seen` (a thief's request then stays for the next one); closes it again if a request came. */
static void frames_reopen(ws__task_stack *s, uint64_t seen)
{
    uint64_t open = (uint64_t)(uintptr_t)s->seg->end;
    /* acquire: pairs with the thieves' release exchange (sdeque_ask): if this CAS overwrites a
     * request's 0, that thief's store of wanted is visible below (release sequence). */
    if (!WS_FRAMES_REOPEN(&s->f.end_fast, &seen, open))
        return;
#ifndef WS_LOCKED_DEQUE
    /* relaxed: ordered by the CAS above. */
    if (ws_load_relaxed(&worker_of(s)->deque.wanted) != 0)
        ws__frames_close(worker_of(s));
#endif
}

/* split moved from old: sync_bar follows it, unless a thief raised it (the request then waits
 * for the next slow sync or spawn). */
static void move_bar(ws__task_stack *s, const char *old)
{
    uint64_t e = (uint64_t)(uintptr_t)old;
    /* relaxed: the owner's own value; a thief's raise makes it fail, which is what we want. */
    ws_cas_relaxed(&s->f.sync_bar, &e, (uint64_t)(uintptr_t)s->split);
}

/* Having answered a request (or found none): puts split back as sync_bar if a request raised
 * it, and raises it again if a request is pending by then, as frames_reopen does for end_fast. */
static void reopen_bar(ws__task_stack *s)
{
#ifndef WS_LOCKED_DEQUE
    uint64_t asked = WS_FRAMES_ASKED;
    /* relaxed: a look first, as in deque.c's sdeque_reopen_bar; acquire: pairs with the thieves'
     * release exchange (sdeque_ask): if this CAS overwrites a request's raise, that thief's store
     * of wanted is visible below (release sequence). */
    if (ws_load_relaxed(&s->f.sync_bar) != asked ||
        !WS_FRAMES_REOPEN(&s->f.sync_bar, &asked, (uint64_t)(uintptr_t)s->split))
        return;
    /* relaxed: ordered by the CAS above. */
    if (ws_load_relaxed(&worker_of(s)->deque.wanted) != 0)
        ws_exchange_relaxed(&s->f.sync_bar, WS_FRAMES_ASKED); /* an RMW, as every write */
#else
    (void)s;
#endif
}

/* The record of a frame of the current segment (its index in the segment's records). */
static ws_task *record_of(ws__task_stack *s, const char *frame)
{
    return &s->seg->records[(size_t)(frame - s->seg->frames) / FRAME];
}

/* The task of a handed-over frame's record: runs the frame on whichever worker took it. */
static void run_handed(void *frame);

/* Hands the k oldest private frames to the deque, oldest first, as ws_spawn records. */
static void hand_over(ws__task_stack *s, int64_t k)
{
    bool was = s->handing;
    s->handing = true;
    char *old = s->split;
    for (int64_t i = 0; i < k; i++) {
        char *frame = s->split;
        s->split = frame + FRAME;
        ws_spawn(record_of(s, frame), run_handed, frame);
    }
    move_bar(s, old);
    s->handing = was;
}

static void frames_flush(ws__worker *w)
{
    ws__task_stack *s = &w->stack;
    if (s->handing || s->seg == NULL)
        return;
    hand_over(s, private_frames(s));
    ws__frames_close(worker_of(s));
    s->fresh = true;
}

/* Owner only: the spawn at head has written its frame in the segment's overflow frame. Hands
 * the segment's private frames over and moves the frame to the bottom of a new segment. The
 * frame waits in a copy meanwhile: a frame handed over past the deque's cap runs at once, here,
 * and its own spawns reach this same overflow frame. end_fast, which bounds the old segment,
 * is closed (the caller's reopen then opens the new segment's bound, or fails if a request
 * came, and the next spawn does). */
static void segment_enter(ws__task_stack *s)
{
    char *h = s->f.head;
    char pending[FRAME];
    memcpy(pending, h, FRAME);
    ws__frames_close(worker_of(s));
    hand_over(s, private_frames(s));
    ws__segment *n = segment_new(s);
    n->prev = s->seg;
    n->prev_head = h;
    memcpy(n->frames, pending, FRAME);
    s->seg = n;
    s->f.head = n->frames + FRAME;
    char *old = s->split;
    s->split = n->frames;
    move_bar(s, old);
    hand_over(s, 1);
}

/* Owner only: head is at the bottom of a segment that has an older one: back to that one. */
static void segment_leave(ws__task_stack *s)
{
    ws__segment *old = s->seg;
    ws__frames_close(worker_of(s)); /* end_fast bounds the segment left */
    s->seg = old->prev;
    s->f.head = old->prev_head;
    char *was = s->split;
    s->split = old->prev_head; /* its frames were handed over when old was entered */
    move_bar(s, was);
    if (s->spare != NULL)
        ws__free(s->spare->block);
    s->spare = old;
}

static bool instrumented(ws__worker *w)
{
#ifdef WS_LOCKED_DEQUE
    (void)w;
    return true;
#else
    /* relaxed: see ws__worker_update_depth_limit. */
    return ws_load_relaxed(&w->profiling) != 0 || w->pool->trace != NULL;
#endif
}

#ifndef WS_LOCKED_DEQUE
/* The reserve of a task stack, as the deque's reserve (docs/deque.md): while the worker's
 * deque holds nothing that thieves could take, its first spawns hand their frames over, one per
 * spawn, so that another worker finds one without the owner's help (which it gives only at its
 * spawns and syncs). That happens when the worker starts a typed task taken from elsewhere
 * (fresh: its first frame, once it has one): as many frames as the pool has workers while one
 * of them is idle, else one; and when thieves took its deque's last item (deque.c,
 * sdeque_emptied, sends the next spawn here) while a worker is idle. With every worker busy,
 * frames handed over at each steal would mostly be synced back through the deque (as many as
 * the workers at every steal: fib took 3 times Lace's time at 2 workers). */
static bool refill(ws__task_stack *s, ws__worker *w)
{
    int64_t reserve = (int64_t)w->pool->nworkers;
    if (reserve < 2 || private_frames(s) == 0)
        return false;
    if (s->fresh) {
        s->fresh = false;
        if (s->split != s->floor)
            return false; /* the task handed frames over already */
        s->refill = ws__idle_any(w->pool) ? reserve : 1;
    } else if (s->refill == 0 && ws__wdeque_size(&w->deque) == 0 && ws__idle_any(w->pool)) {
        s->refill = reserve;
    }
    if (s->refill == 0)
        return false;
    hand_over(s, 1);
    s->refill--;
    return true;
}

/* Worker w, in a slow spawn or sync: if a thief asks for work, hands the older half of the
 * private frames (at least one) to the deque. True if it did (the caller publishes them). */
static bool serve(ws__task_stack *s, ws__worker *w)
{
    /* relaxed: set by the thief before its release exchanges, which the reopening CASes
     * acquire; one read late here is answered at the next slow spawn or sync. */
    if (ws_load_relaxed(&w->deque.wanted) == 0 || private_frames(s) == 0)
        return false;
    hand_over(s, (private_frames(s) + 1) / 2);
    return true;
}
#endif

/* A sync found sync_bar raised: a thief asks for work while this worker runs typed tasks,
 * which push nothing else it could share. Answers as a slow spawn does (docs/scheduler.md,
 * "Sharing private work"); a frame handed over here is synced through the deque. */
static WS_NOINLINE void answer(ws__task_stack *s)
{
#ifndef WS_LOCKED_DEQUE
    ws__worker *w = worker_of(s);
    if (!instrumented(w) && serve(s, w)) {
        ws__wdeque_publish_all(&w->deque);
        ws__wdeque_force_slow(&w->deque); /* frames stay private: pushes come through a flush */
        ws__idle_notify(w->pool);
    }
#endif
    reopen_bar(s);
}

void ws__frames_spawn_slow(struct ws__frames *pf)
{
    ws__task_stack *s = stack_of(pf);
    ws__worker *w = worker_of(s);
    if (WS_UNLIKELY(s->seg == NULL))
        ws__contract_violation("WS_SPAWN(...)", "not inside a typed task");
    /* relaxed: read first, so that a request arriving later makes the reopening CAS fail. */
    uint64_t seen = ws_load_relaxed(&s->f.end_fast);
    if (s->f.head == s->seg->end)
        segment_enter(s);
    else
        s->f.head += FRAME;
    if (instrumented(w)) {
        hand_over(s, private_frames(s)); /* the fast path stays closed */
        return;
    }
#ifndef WS_LOCKED_DEQUE
    bool publish = refill(s, w);
    publish |= serve(s, w); /* a request missed here keeps end_fast at 0 for the next one */
    if (publish)
        ws__wdeque_publish_all(&w->deque);
    /* The hand-overs above pushed through the deque's slow push, which reopens its fast path.
     * While frames are private (from this spawn on, fast spawns included), the deque's pushes
     * must come through a flush. */
    ws__wdeque_force_slow(&w->deque);
    frames_reopen(s, seen);
    reopen_bar(s);
    if (s->refill > 0)
        ws__frames_close(w); /* the next spawn hands a frame over too */
    /* After the reopen: a thief that goes to sleep after this wake-up looked (idle.c) sees
     * end_fast as reopened, or a later request's 0, and tries this worker, not a 0 of the
     * request just served. seen == 0: a request's 0, which thieves skip, though its wanted
     * may have been served already (by a push between the thief's two stores). */
    if (publish || WS_FRAMES_WAKE_ASKED(seen))
        ws__idle_notify(w->pool);
#else
    frames_reopen(s, seen);
#endif
}

/* ws__frames_spawn_slow(w in rdi), keeping every general register the C function may change
 * (worksteal.h's inline spawn relies on it) and aligning the stack for it: rbx holds the
 * caller's stack pointer. The rest is the caller's declared clobbers (flags, vector registers,
 * memory). */
#if defined(__x86_64__) && !defined(__clang__)
__asm__(".text\n"
        ".globl ws__frames_spawn_slow_saving\n"
        ".type ws__frames_spawn_slow_saving, @function\n"
        "ws__frames_spawn_slow_saving:\n"
        ".cfi_startproc\n"
        "pushq %rax\n .cfi_adjust_cfa_offset 8\n"
        "pushq %rcx\n .cfi_adjust_cfa_offset 8\n"
        "pushq %rdx\n .cfi_adjust_cfa_offset 8\n"
        "pushq %rsi\n .cfi_adjust_cfa_offset 8\n"
        "pushq %rdi\n .cfi_adjust_cfa_offset 8\n"
        "pushq %r8\n .cfi_adjust_cfa_offset 8\n"
        "pushq %r9\n .cfi_adjust_cfa_offset 8\n"
        "pushq %r10\n .cfi_adjust_cfa_offset 8\n"
        "pushq %r11\n .cfi_adjust_cfa_offset 8\n"
        "pushq %rbx\n .cfi_adjust_cfa_offset 8\n"
        "movq %rsp, %rbx\n .cfi_def_cfa_register %rbx\n"
        "andq $-16, %rsp\n"
        "call ws__frames_spawn_slow@PLT\n"
        "movq %rbx, %rsp\n .cfi_def_cfa_register %rsp\n"
        "popq %rbx\n .cfi_adjust_cfa_offset -8\n"
        "popq %r11\n .cfi_adjust_cfa_offset -8\n"
        "popq %r10\n .cfi_adjust_cfa_offset -8\n"
        "popq %r9\n .cfi_adjust_cfa_offset -8\n"
        "popq %r8\n .cfi_adjust_cfa_offset -8\n"
        "popq %rdi\n .cfi_adjust_cfa_offset -8\n"
        "popq %rsi\n .cfi_adjust_cfa_offset -8\n"
        "popq %rdx\n .cfi_adjust_cfa_offset -8\n"
        "popq %rcx\n .cfi_adjust_cfa_offset -8\n"
        "popq %rax\n .cfi_adjust_cfa_offset -8\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size ws__frames_spawn_slow_saving, .-ws__frames_spawn_slow_saving\n");
#endif

static WS_COLD void sync_violation(const char *name, const char *what)
{
    char function[96];
    snprintf(function, sizeof function, "WS_SYNC(%s)", name);
    ws__contract_violation(function, what);
}

void ws__frames_mismatch(const char *name)
{
    sync_violation(name, "the newest unsynced WS_SPAWN is of another task");
}

/* Whether p lies in segment g (its overflow frame included). */
static bool in_segment(const ws__segment *g, const char *p)
{
    return (uintptr_t)p >= (uintptr_t)g->frames && (uintptr_t)p <= (uintptr_t)g->end;
}

/* Owner only: goes back from the bottoms of segments entered since the running typed task began
 * (the sync of a segment's bottom frame is slow: segment_enter hands it over). */
static void frames_settle(ws__task_stack *s)
{
    while (s->f.head != s->floor && s->seg->prev != NULL && s->f.head == s->seg->frames)
        segment_leave(s);
}

void *ws__frames_sync_slow(struct ws__frames *pf, ws__frame_fn run, const char *name)
{
    ws__task_stack *s = stack_of(pf);
    if (s->seg == NULL || s->f.head == s->floor)
        sync_violation(name, "no unsynced WS_SPAWN in this task");
    char *h = s->f.head - FRAME;
    if (in_segment(s->seg, s->floor) && (uintptr_t)h < (uintptr_t)s->floor)
        sync_violation(name, "no unsynced WS_SPAWN in this task");
    frame_head *frame = (frame_head *)(void *)h;
    if (frame->run != run)
        ws__frames_mismatch(name);
    /* relaxed: the owner's line; a raise seen late is answered at the next slow sync. */
    if (ws_load_relaxed(&s->f.sync_bar) == WS_FRAMES_ASKED)
        answer(s);
    if (h >= s->split) { /* private after all (the fast path is off in this build) */
        s->f.head = h;
        ws_counter_add(&s->f.fast_syncs, 1); /* relaxed: a statistic with one writer */
        run(pf, frame);
    } else {
        /* Handed over: head stays above the frame until its task is done (a thief may run it
         * in place, and this worker may run others while it waits). */
        ws_sync(record_of(s, h));
        s->f.head = h;
        char *old = s->split;
        s->split = h;
        move_bar(s, old);
    }
    frames_settle(s); /* the frame stays valid: a segment left is kept as the spare */
    return frame;
}

/* The name of the task whose frames run runs (the name query of ws__frame_fn). */
static const char *task_name(ws__frame_fn run)
{
    const char *name = "a typed task";
    run((struct ws__frames *)(void *)&name, NULL);
    return name;
}

/* The typed task run returned, leaving frames of its own (or of typed tasks it called) on the
 * stack: names it and the newest frame's task (in the current segment, unless head is at its
 * bottom). */
static WS_COLD _Noreturn void returned_unsynced(ws__task_stack *s, ws__frame_fn run)
{
    const char *spawned = "...";
    if (s->f.head != s->seg->frames)
        spawned = task_name(((const frame_head *)(void *)(s->f.head - FRAME))->run);
    char what[200];
    snprintf(what, sizeof what,
             "returned with a WS_SPAWN(%s) unsynced, its own or a typed task's it called (WS_SYNC "
             "every WS_SPAWN before the body returns)",
             spawned);
    ws__contract_violation(task_name(run), what);
}

/* Runs a typed task's frame on worker w: the task began here, from elsewhere (a steal, a take
 * back, name_run). */
static void frames_call(ws__worker *w, ws__frame_fn run, void *frame)
{
    ws__task_stack *s = &w->stack;
    if (s->seg == NULL) {
        s->seg = segment_new(s);
        s->seg->prev = NULL;
        s->f.head = s->seg->frames;
        char *old = s->split;
        s->split = s->seg->frames;
        move_bar(s, old);
        s->flush = frames_flush;
        s->destroy = frames_destroy;
    }
    char *floor = s->floor;
    /* The frames of the task this one runs inside go to the deque: below split, a sync of this
     * task that reaches them takes the slow path, which refuses it (the floor). */
    if (!s->handing)
        hand_over(s, private_frames(s));
    s->floor = s->f.head;
    s->fresh = true;
    ws__frames_close(worker_of(s));
    run(frames_of(s), frame); /* its last slow sync left any segment it entered */
    if (s->f.head != s->floor)
        returned_unsynced(s, run);
    s->floor = floor;
    /* The outer task's next spawn closes the deque's fast path again, which this one's pushes
     * may have reopened. */
    s->fresh = true;
    if (floor != NULL)
        ws__frames_close(worker_of(s));
    else /* no typed task left on this worker: nothing for thieves to ask for */
        ws_exchange_relaxed(&s->f.end_fast, 0); /* an RMW, as every write ("Requests") */
}

static void run_handed(void *frame)
{
    frames_call(ws__tls_worker, ((frame_head *)frame)->run, frame);
}

struct frames_root {
    ws__frame_fn run;
    void *frame;
};

static void run_root(void *p)
{
    struct frames_root *r = p;
    frames_call(ws__tls_worker, r->run, r->frame);
}

void ws__frames_run(ws_pool *pool, ws__frame_fn run, void *frame, const char *what)
{
    struct frames_root r = {run, frame};
    ws__typed_run(pool, run_root, &r, what);
}
