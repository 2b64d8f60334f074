/* loop.c: parallel loops (ws_parallel_for) and reductions (ws_parallel_reduce).
 *
 * Both are built on ws_spawn/ws_sync: a range is cut in halves, the upper half is spawned (it
 * sits at the top of the deque, where a thief takes it) and the owner goes on with the lower
 * half, depth-first, like the serial loop. docs/loops.md is the long version of this comment.
 *
 * Explicit grain (grain > 0): halve until at most `grain` items remain, forking every upper
 * half. The leaves are a function of (end - begin, grain) only.
 *
 * Automatic grain, ws_parallel_for: lazy binary splitting. The owner runs its range in
 * sequential chunks, and before each chunk asks ws__split_wanted() (its deque is empty because a
 * thief took what it pushed, or a worker of the pool is looking for work). Only then is the
 * rest of the range halved and the upper half spawned, and only if the piece split off before
 * has been taken: a range never offers a second piece while the first one waits, so workers
 * that stay idle without stealing (parked, or descheduled by the OS) cannot make it split down
 * to single iterations. So a loop forks about as often as there are thieves to feed, whatever
 * the cost of one iteration. The chunk between two checks adapts to that cost: it starts at one
 * iteration and doubles while a chunk takes less than a target (CHUNK_GROW_NS, more where the
 * clock is slow to read), and halves when one takes more than CHUNK_SHRINK_FACTOR times that.
 * Cheap iterations end up in chunks long enough that the check and the clock read are noise;
 * heavy ones are checked after every iteration or few, so a thief never waits for long.
 *
 * Automatic grain, ws_parallel_reduce: the combination tree must not depend on timing, or
 * floating-point results would change from run to run. The tree is therefore fixed in advance:
 * halve [begin,end) until at most auto_leaf(n) items remain (about n / 1024, capped at 4096);
 * each leaf is folded from a copy of identity, and each internal node combines its left and
 * right child, in that order. Whether an internal node is forked or evaluated by its owner is
 * decided lazily, by the same rule as above (ws__split_wanted(), and no earlier piece still
 * waiting), which changes who computes a node but never what is computed.
 *
 * Accumulators. Up to SMALL_ACC bytes they live in the stack frame of the node that needs them,
 * so a reduction allocates nothing. Larger ones live in a scratch area holding one accumulator
 * per tree level (a node at height h keeps its right child's result in slot h-1; a subtree run
 * by its owner reuses the slots below), allocated once per call and once per forked subtree. If
 * the first allocation fails, ws_parallel_reduce returns ENOMEM before calling anything; if a
 * later one fails, that subtree is simply not forked and its owner evaluates it in its own
 * scratch, which has room for it. So ENOMEM is reported only when nothing has run, and a
 * returned 0 always comes with the right value.
 */
#include "atomics.h"
#include "internal.h"
#include "platform.h"

#include <errno.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Accumulators up to this size live on the stack. 256 bytes covers scalars, small vectors and a
 * 4x4 matrix of doubles; a frame per tree level (at most 64) stays far below any worker stack. */
#define SMALL_ACC 256

/* The leaves of the fixed reduction tree of automatic grain: ceil(n / REDUCE_AUTO_LEAVES) items,
 * at most REDUCE_LEAF_MAX, and never so small that the tree has more than about
 * REDUCE_MAX_LEAVES leaves. 1024 leaves are enough for every worker of a large machine to get
 * several. The cap of 4096 items keeps each fold call short: the steal granularity stays fine
 * on large ranges, and the per-leaf cost (copy identity, one fold call, one combine, about
 * 20 ns) is still only a few percent of 4096 of the cheapest (vectorised) iterations. On the
 * benchmark machine, a floating-point fold also ran up to 10% slower on leaves of 100,000 items
 * than on short ones (docs/loops.md has the measurement). The floor bounds the number of
 * leaves, and so the time spent on them, for astronomically large ranges whose fold is cheap
 * per call. */
#define REDUCE_AUTO_LEAVES 1024u
#define REDUCE_LEAF_MAX    4096u
#define REDUCE_MAX_LEAVES  ((size_t)1 << 20)

/* Chunk adaptation for automatic grain (ws_parallel_for). The per-chunk cost is a
 * ws__split_wanted() call, a clock read (about 20 ns with a TSC clocksource) and an indirect call:
 * some 30 ns, well under 1% of an 8 us chunk. A thief waits at most about one chunk, far less
 * than waking a parked worker. */
#define CHUNK_GROW_NS       8000u          /* double the chunk while one takes less than this */
#define CHUNK_SHRINK_FACTOR 8u             /* halve it when one takes this many times longer */
#define CHUNK_MAX           (SIZE_MAX / 4) /* doubling stays far from overflow */
/* Where reading the clock is slow (a virtual machine without a usable TSC makes it a system
 * call of a microsecond or more), the target grows to this many clock reads, so that the
 * overhead per chunk stays well under 1%. */
#define CHUNK_CLOCK_READS 256u

/* ---------------------------------------------------------------------------------------- */
/* ws_parallel_for                                                                           */
/* ---------------------------------------------------------------------------------------- */

/* One ws_parallel_for call. Read-only while the loop runs; lives in the caller's frame. */
struct loop {
    ws_range_fn body;
    void *ctx;
    size_t grain;     /* 0: automatic */
    bool fork;        /* false: run everything on the calling thread (no pool could take it) */
    uint64_t grow_ns; /* automatic grain: the chunk target (chunk_target_ns) */
};

/* A subrange handed to a task: spawned halves point to one of these in their parent's frame. */
struct for_piece {
    const struct loop *loop;
    size_t begin, end;
    size_t chunk; /* automatic grain: the chunk size to start with */
    /* Set when the piece starts running. Written by whoever runs it, read by the owner of the
     * range it was split from, which offers no second piece while this one waits. */
    _Atomic bool started;
};

static void for_piece_run(void *arg);

/* Explicit grain: halve until at most grain items remain; the upper half is spawned and the
 * lower half continues here. */
static void for_grain(const struct loop *l, size_t begin, size_t end)
{
    while (end - begin > l->grain) {
        size_t mid = begin + (end - begin) / 2;
        if (!l->fork) {
            for_grain(l, begin, mid);
            begin = mid;
            continue;
        }
        struct for_piece upper = {l, mid, end, 0, false};
        ws_task task;
        ws_spawn(&task, for_piece_run, &upper);
        for_grain(l, begin, mid);
        ws_sync(&task);
        return;
    }
    l->body(begin, end, l->ctx);
}

/* The chunk duration to aim for: CHUNK_GROW_NS, or CHUNK_CLOCK_READS clock reads if that is
 * longer. The clock is timed once per process. */
static uint64_t chunk_target_ns(void)
{
    /* Written once by whichever thread first measures; every thread measures about the same
     * value, so a race only repeats the measurement. */
    static _Atomic uint64_t target;
    uint64_t t = ws_load_relaxed(&target); /* relaxed: a plain number, see above */
    if (WS_LIKELY(t != 0))
        return t;
    uint64_t read_ns = UINT64_MAX;
    for (int i = 0; i < 16; i++) {
        uint64_t a = ws__now_ns(), b = ws__now_ns();
        read_ns = b - a < read_ns ? b - a : read_ns;
    }
    t = read_ns * CHUNK_CLOCK_READS > CHUNK_GROW_NS ? read_ns * CHUNK_CLOCK_READS : CHUNK_GROW_NS;
    ws_store_relaxed(&target, t); /* relaxed: see above */
    return t;
}

/* The next chunk size, from how long the last chunk of `chunk` iterations took. */
static size_t chunk_adapt(const struct loop *l, size_t chunk, uint64_t elapsed_ns)
{
    if (elapsed_ns < l->grow_ns && chunk < CHUNK_MAX)
        return chunk * 2;
    if (elapsed_ns > l->grow_ns * CHUNK_SHRINK_FACTOR && chunk > 1)
        return chunk / 2;
    return chunk;
}

/* True when the piece last split off this range (if any) has been taken: until then a thief
 * already has something to take, and splitting again would only add overhead. This is what
 * keeps a pool with parked or descheduled workers (for which ws__split_wanted stays true) from
 * cutting the range down to single iterations. */
static bool piece_taken(const struct for_piece *last)
{
    /* relaxed: a heuristic read; a stale false delays a split by one chunk. */
    return last == NULL || ws_load_relaxed(&last->started);
}

/* Automatic grain: lazy binary splitting (see the top of the file). `last` is the most recent
 * piece split off the enclosing range, NULL if none is waiting. */
static void for_auto(const struct loop *l, size_t begin, size_t end, size_t chunk,
                     const struct for_piece *last)
{
    uint64_t start = ws__now_ns();
    while (begin < end) {
        if (end - begin >= 2 && piece_taken(last) && ws__split_wanted()) {
            size_t mid = begin + (end - begin) / 2;
            struct for_piece upper = {l, mid, end, chunk, false};
            ws_task task;
            ws_spawn(&task, for_piece_run, &upper);
            for_auto(l, begin, mid, chunk, &upper);
            ws_sync(&task);
            return;
        }
        size_t n = end - begin < chunk ? end - begin : chunk;
        l->body(begin, begin + n, l->ctx);
        begin += n;
        uint64_t now = ws__now_ns();
        if (n == chunk)
            chunk = chunk_adapt(l, chunk, now - start);
        start = now;
    }
}

static void for_piece_run(void *arg)
{
    struct for_piece *p = arg;
    const struct loop *l = p->loop;
    /* relaxed: only read by piece_taken, a heuristic. */
    ws_store_relaxed(&p->started, true);
    if (l->grain != 0)
        for_grain(l, p->begin, p->end);
    else if (l->fork)
        for_auto(l, p->begin, p->end, p->chunk, NULL);
    else
        l->body(p->begin, p->end, l->ctx);
}

void ws_parallel_for(size_t begin, size_t end, size_t grain, ws_range_fn body, void *ctx)
{
    if (body == NULL)
        ws__contract_violation("ws_parallel_for", "body is NULL");
    if (begin >= end)
        return;
    size_t n = end - begin;
    if (n == 1 || (grain != 0 && n <= grain)) {
        /* One subrange whatever the pool: no reason to leave this thread. */
        body(begin, end, ctx);
        return;
    }
    struct loop l = {body, ctx, grain, true, grain == 0 ? chunk_target_ns() : 0};
    struct for_piece all = {&l, begin, end, 1, false};
    if (ws_worker_id() >= 0) {
        for_piece_run(&all);
        return;
    }
    if (!ws__run_on_default(for_piece_run, &all)) {
        /* The process is exiting, its default pool gone: run the loop here, in order. */
        l.fork = false;
        for_piece_run(&all);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* ws_parallel_reduce                                                                        */
/* ---------------------------------------------------------------------------------------- */

/* One ws_parallel_reduce call. Read-only while it runs; lives in the caller's frame. */
struct reduce {
    size_t leaf;   /* a node with at most this many items is a leaf */
    size_t stride; /* bytes between scratch slots: acc_size rounded up to max_align_t */
    size_t acc_size;
    const void *identity;
    ws_fold_fn fold;
    ws_combine_fn combine;
    void *ctx;
    bool eager; /* explicit grain: fork every internal node */
    bool fork;  /* false: run everything on the calling thread (no pool could take it) */
};

/* A subtree handed to a task: its result goes to `out`; `scratch` has a slot for each level
 * below `height` (only used for accumulators larger than SMALL_ACC). */
struct reduce_piece {
    const struct reduce *r;
    size_t begin, end;
    unsigned height;
    void *out;
    unsigned char *scratch;
    _Atomic bool started; /* as in struct for_piece */
};

static size_t ceil_div(size_t n, size_t d)
{
    return n / d + (n % d != 0);
}

/* The automatic leaf size for n items (see REDUCE_AUTO_LEAVES): a function of n only. */
static size_t auto_leaf(size_t n)
{
    size_t leaf = ceil_div(n, REDUCE_AUTO_LEAVES);
    if (leaf > REDUCE_LEAF_MAX)
        leaf = REDUCE_LEAF_MAX;
    size_t least = ceil_div(n, REDUCE_MAX_LEAVES);
    return leaf > least ? leaf : least;
}

/* The height of the tree over n items: the number of halvings (keeping the larger half, the
 * upper one) until at most `leaf` remain. At most 64 for a 64-bit size_t. */
static unsigned tree_height(size_t n, size_t leaf)
{
    unsigned h = 0;
    while (n > leaf) {
        n -= n / 2;
        h++;
    }
    return h;
}

static void reduce_piece_run(void *arg);

/* Folds [begin,end) into acc following the fixed tree. `height` bounds the node's height: its
 * children get height - 1, and an internal node keeps its right child's result in scratch slot
 * height - 1 (large accumulators), so nodes below it use lower slots only. */
static void reduce_node(const struct reduce *r, size_t begin, size_t end, unsigned height,
                        void *acc, unsigned char *scratch, const struct reduce_piece *last)
{
    if (end - begin <= r->leaf) {
        memcpy(acc, r->identity, r->acc_size);
        r->fold(begin, end, acc, r->ctx);
        return;
    }
    size_t mid = begin + (end - begin) / 2;
    alignas(max_align_t) unsigned char local[SMALL_ACC];
    bool small = r->acc_size <= SMALL_ACC;
    void *right = small ? (void *)local : scratch + (size_t)(height - 1) * r->stride;

    bool forked = false;
    /* relaxed: a heuristic, as in piece_taken. */
    if (r->fork &&
        (r->eager || ((last == NULL || ws_load_relaxed(&last->started)) && ws__split_wanted()))) {
        /* A forked right child with levels below it (height - 1 > 0) needs scratch of its own
         * for them. If that cannot be had, the right child is evaluated here instead, in our
         * scratch, which has room for it: nothing fails, the tree is the same. */
        unsigned char *child_scratch = NULL;
        if (!small && height > 1)
            child_scratch = ws__malloc((size_t)(height - 1) * r->stride);
        if (small || height <= 1 || child_scratch != NULL) {
            struct reduce_piece upper = {r, mid, end, height - 1, right, child_scratch, false};
            ws_task task;
            ws_spawn(&task, reduce_piece_run, &upper);
            reduce_node(r, begin, mid, height - 1, acc, scratch, &upper);
            ws_sync(&task);
            ws__free(child_scratch);
            forked = true;
        }
    }
    if (!forked) {
        reduce_node(r, begin, mid, height - 1, acc, scratch, last);
        reduce_node(r, mid, end, height - 1, right, scratch, last);
    }
    r->combine(acc, right, r->ctx);
}

static void reduce_piece_run(void *arg)
{
    struct reduce_piece *p = arg;
    /* relaxed: only read as a heuristic by the node that forked this piece. */
    ws_store_relaxed(&p->started, true);
    reduce_node(p->r, p->begin, p->end, p->height, p->out, p->scratch, NULL);
}

int ws_parallel_reduce(size_t begin, size_t end, size_t grain, size_t acc_size,
                       const void *identity, ws_fold_fn fold, ws_combine_fn combine, void *ctx,
                       void *result)
{
    if (fold == NULL)
        ws__contract_violation("ws_parallel_reduce", "fold is NULL");
    if (combine == NULL)
        ws__contract_violation("ws_parallel_reduce", "combine is NULL");
    if (acc_size == 0 || identity == NULL || result == NULL || begin > end)
        return EINVAL;
    size_t n = end - begin;
    if (n == 0) {
        memmove(result, identity, acc_size); /* result may be identity itself */
        return 0;
    }

    struct reduce r = {
        .leaf = grain != 0 ? grain : auto_leaf(n),
        .acc_size = acc_size,
        .identity = identity,
        .fold = fold,
        .combine = combine,
        .ctx = ctx,
        .eager = grain != 0,
        .fork = true,
    };
    unsigned height = tree_height(n, r.leaf);

    /* The root accumulator, kept apart from result so that result is untouched on error and
     * may alias identity. Large accumulators: one scratch slot per level, then the root. */
    alignas(max_align_t) unsigned char local[SMALL_ACC];
    unsigned char *scratch = NULL;
    void *acc = local;
    if (acc_size > SMALL_ACC) {
        size_t align = alignof(max_align_t);
        if (acc_size > SIZE_MAX - align)
            return ENOMEM;
        r.stride = (acc_size + align - 1) / align * align;
        if (r.stride > SIZE_MAX / (height + 1u))
            return ENOMEM;
        scratch = ws__malloc((size_t)(height + 1u) * r.stride);
        if (scratch == NULL)
            return ENOMEM;
        acc = scratch + (size_t)height * r.stride;
    }

    struct reduce_piece all = {&r, begin, end, height, acc, scratch, false};
    if (height == 0 || ws_worker_id() >= 0) {
        reduce_piece_run(&all);
    } else if (!ws__run_on_default(reduce_piece_run, &all)) {
        /* The process is exiting, its default pool gone: same tree, on this thread. */
        r.fork = false;
        reduce_piece_run(&all);
    }
    memcpy(result, acc, acc_size);
    ws__free(scratch);
    return 0;
}
