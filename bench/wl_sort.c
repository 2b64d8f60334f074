/* wl_sort.c: three sorts of `size` random 32-bit integers, each checked (sorted, and the same
 * multiset as the input).
 *
 *   sort-seqmerge  mergesort: sort both halves in parallel, then merge them sequentially.
 *   sort-parmerge  the same, but the merge is itself divide and conquer: split the larger run at
 *                  its middle, find that value's place in the other run by binary search, and
 *                  merge the two pairs of pieces in parallel.
 *   quicksort      partition sequentially around a median of three, then sort both sides in
 *                  parallel (the seeds' opening example).
 *
 * The first two are the seeds' example where the span decides the speedup. With a sequential
 * merge the top merge alone touches all n elements on one core, so T_inf = Theta(n) and the
 * parallelism T1/T_inf is only about log n. With the parallel merge the span is
 * Theta(log^3 n) and the parallelism is in the thousands. Quicksort's first partition is
 * sequential too (span Theta(n)).
 *
 * Below the cutoffs everything is sequential, and the serial version is the same recursion with
 * every fork replaced by two calls (wb_fork2 on the serial scheduler).
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SORT_CUTOFF   4096 /* below this, a sequential mergesort */
#define MERGE_CUTOFF  8192 /* below this many elements, a sequential merge */
#define QSORT_CUTOFF  4096 /* below this, a sequential quicksort */
#define INSERT_CUTOFF 24   /* below this, insertion sort */

typedef enum sort_kind { SORT_SEQMERGE, SORT_PARMERGE, SORT_QUICK } sort_kind;

typedef struct sort_state {
    sort_kind kind;
    size_t n;
    int32_t *input; /* the unsorted data, never modified */
    int32_t *a;     /* sorted in place */
    int32_t *tmp;   /* mergesort's scratch */
    uint64_t input_hash;
} sort_state;

/* ---- sequential pieces ---- */

static void insertion_sort(int32_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        int32_t v = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

/* Merges the sorted runs a[0..na) and b[0..nb) into dst (which overlaps neither). */
static void merge_seq(const int32_t *a, size_t na, const int32_t *b, size_t nb, int32_t *dst)
{
    size_t i = 0, j = 0, k = 0;
    while (i < na && j < nb)
        dst[k++] = b[j] < a[i] ? b[j++] : a[i++];
    memcpy(dst + k, a + i, (na - i) * sizeof(*a));
    k += na - i;
    memcpy(dst + k, b + j, (nb - j) * sizeof(*b));
}

/* Sorts src[0..n); the result ends in dst if into_dst, else in src. The other is scratch. */
static void msort_seq(int32_t *src, int32_t *dst, size_t n, bool into_dst)
{
    if (n <= INSERT_CUTOFF) {
        insertion_sort(src, n);
        if (into_dst)
            memcpy(dst, src, n * sizeof(*src));
        return;
    }
    size_t h = n / 2;
    msort_seq(src, dst, h, !into_dst);
    msort_seq(src + h, dst + h, n - h, !into_dst);
    if (into_dst)
        merge_seq(src, h, src + h, n - h, dst);
    else
        merge_seq(dst, h, dst + h, n - h, src);
}

/* ---- parallel merge ---- */

typedef struct pmerge_arg {
    const wb_runner *r;
    const int32_t *a, *b;
    size_t na, nb;
    int32_t *dst;
} pmerge_arg;

/* The first index of b[0..n) whose value is >= v. */
static size_t lower_bound(const int32_t *b, size_t n, int32_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void pmerge_task(void *p)
{
    pmerge_arg *m = p;
    const int32_t *a = m->a, *b = m->b;
    size_t na = m->na, nb = m->nb;
    if (na < nb) { /* split the larger run, so each half gets at most 3/4 of the elements */
        const int32_t *t = a;
        a = b;
        b = t;
        size_t tn = na;
        na = nb;
        nb = tn;
    }
    if (na + nb <= MERGE_CUTOFF) {
        merge_seq(a, na, b, nb, m->dst);
        return;
    }
    size_t ma = na / 2, mb = lower_bound(b, nb, a[ma]);
    m->dst[ma + mb] = a[ma];
    pmerge_arg x = {m->r, a, b, ma, mb, m->dst};
    pmerge_arg y = {m->r, a + ma + 1, b + mb, na - ma - 1, nb - mb, m->dst + ma + mb + 1};
    wb_fork2(m->r, pmerge_task, &x, pmerge_task, &y);
}

/* ---- mergesort ---- */

typedef struct msort_arg {
    const wb_runner *r;
    int32_t *src, *dst;
    size_t n;
    bool into_dst, par_merge;
} msort_arg;

static void msort_task(void *p)
{
    msort_arg *s = p;
    if (s->n <= SORT_CUTOFF) {
        msort_seq(s->src, s->dst, s->n, s->into_dst);
        return;
    }
    size_t h = s->n / 2;
    msort_arg x = {s->r, s->src, s->dst, h, !s->into_dst, s->par_merge};
    msort_arg y = {s->r, s->src + h, s->dst + h, s->n - h, !s->into_dst, s->par_merge};
    wb_fork2(s->r, msort_task, &x, msort_task, &y);
    int32_t *from = s->into_dst ? s->src : s->dst, *to = s->into_dst ? s->dst : s->src;
    if (s->par_merge) {
        pmerge_arg m = {s->r, from, from + h, h, s->n - h, to};
        pmerge_task(&m);
    } else {
        merge_seq(from, h, from + h, s->n - h, to);
    }
}

/* ---- quicksort ---- */

static inline void swap32(int32_t *x, int32_t *y)
{
    int32_t t = *x;
    *x = *y;
    *y = t;
}

/* Hoare partition of a[0..n), n >= 2, around the median of the first, middle and last values,
 * left at the middle index. Returns p with a[0..p] <= pivot <= a[p+1..n), 0 <= p < n-1. */
static size_t partition(int32_t *a, size_t n)
{
    size_t mid = (n - 1) / 2;
    if (a[mid] < a[0])
        swap32(&a[mid], &a[0]);
    if (a[n - 1] < a[0])
        swap32(&a[n - 1], &a[0]);
    if (a[n - 1] < a[mid])
        swap32(&a[n - 1], &a[mid]);
    int32_t pivot = a[mid];
    size_t i = 0, j = n - 1;
    for (;;) {
        while (a[i] < pivot)
            i++;
        while (a[j] > pivot)
            j--;
        if (i >= j)
            return j;
        swap32(&a[i], &a[j]);
        i++;
        j--;
    }
}

static void qsort_seq(int32_t *a, size_t n)
{
    while (n > INSERT_CUTOFF) {
        size_t p = partition(a, n) + 1;
        /* recurse into the smaller side, loop on the larger: the stack stays O(log n) */
        if (p < n - p) {
            qsort_seq(a, p);
            a += p;
            n -= p;
        } else {
            qsort_seq(a + p, n - p);
            n = p;
        }
    }
    insertion_sort(a, n);
}

typedef struct qsort_arg {
    const wb_runner *r;
    int32_t *a;
    size_t n;
} qsort_arg;

static void qsort_task(void *p)
{
    qsort_arg *q = p;
    if (q->n <= QSORT_CUTOFF) {
        qsort_seq(q->a, q->n);
        return;
    }
    size_t m = partition(q->a, q->n) + 1;
    qsort_arg x = {q->r, q->a, m}, y = {q->r, q->a + m, q->n - m};
    wb_fork2(q->r, qsort_task, &x, qsort_task, &y);
}

/* ---- the workloads ---- */

/* The scheduler-independent root: the runner travels in the state for the duration of a run. */
typedef struct sort_run {
    sort_state *s;
    const wb_runner *r;
} sort_run;

static void sort_root(void *p)
{
    sort_run *run = p;
    sort_state *s = run->s;
    if (s->kind == SORT_QUICK) {
        qsort_arg q = {run->r, s->a, s->n};
        qsort_task(&q);
    } else {
        msort_arg m = {run->r, s->a, s->tmp, s->n, false, s->kind == SORT_PARMERGE};
        msort_task(&m);
    }
}

static const wb_roots roots = {sort_root, sort_root, sort_root, sort_root, NULL, NULL};

/* An order-independent hash of a multiset of values. */
static uint64_t multiset_hash(const int32_t *a, size_t n)
{
    uint64_t h = 0;
    for (size_t i = 0; i < n; i++)
        h += wb_mix64((uint64_t)(uint32_t)a[i] + 0x9e3779b97f4a7c15ull);
    return h;
}

static void destroy(void *p)
{
    sort_state *s = p;
    if (!s)
        return;
    free(s->input);
    free(s->a);
    free(s->tmp);
    free(s);
}

static void *prepare_kind(long size, sort_kind kind)
{
    if (size < 1 || size > (1l << 30)) {
        fprintf(stderr, "ws-bench: sort: size must be 1..2^30 elements, not %ld\n", size);
        return NULL;
    }
    sort_state *s = wb_alloc("sort", sizeof(*s));
    if (!s)
        return NULL;
    *s = (sort_state){.kind = kind, .n = (size_t)size};
    s->input = wb_alloc("sort input", s->n * sizeof(int32_t));
    s->a = wb_alloc("sort array", s->n * sizeof(int32_t));
    s->tmp = kind == SORT_QUICK ? NULL : wb_alloc("sort scratch", s->n * sizeof(int32_t));
    if (!s->input || !s->a || (kind != SORT_QUICK && !s->tmp)) {
        destroy(s);
        return NULL;
    }
    uint64_t x = 12345;
    for (size_t i = 0; i < s->n; i++)
        s->input[i] = (int32_t)(uint32_t)wb_mix64(x += 0x9e3779b97f4a7c15ull);
    s->input_hash = multiset_hash(s->input, s->n);
    if (s->tmp) /* touch the scratch once, so no run pays its page faults */
        memset(s->tmp, 0, s->n * sizeof(int32_t));
    return s;
}

static void *prepare_seqmerge(long size)
{
    return prepare_kind(size, SORT_SEQMERGE);
}

static void *prepare_parmerge(long size)
{
    return prepare_kind(size, SORT_PARMERGE);
}

static void *prepare_quick(long size)
{
    return prepare_kind(size, SORT_QUICK);
}

static void describe(void *p, char *buf, size_t len)
{
    sort_state *s = p;
    static const char *what[] = {
        [SORT_SEQMERGE] = "mergesort, sequential merge (span n)",
        [SORT_PARMERGE] = "mergesort, parallel merge (span log^3 n)",
        [SORT_QUICK] = "quicksort, sequential partition (span n)",
    };
    snprintf(buf, len, "%s of %zu random ints, cutoff %d", what[s->kind], s->n,
             s->kind == SORT_QUICK ? QSORT_CUTOFF : SORT_CUTOFF);
}

static void reset(void *p)
{
    sort_state *s = p;
    memcpy(s->a, s->input, s->n * sizeof(int32_t));
}

static int run(void *p, const wb_runner *r)
{
    sort_run sr = {p, r};
    return wb_run_root(r, &roots, &sr);
}

static bool check(void *p, char *buf, size_t len)
{
    sort_state *s = p;
    for (size_t i = 1; i < s->n; i++) {
        if (s->a[i - 1] > s->a[i]) {
            snprintf(buf, len, "not sorted at index %zu (%d > %d)", i, s->a[i - 1], s->a[i]);
            return false;
        }
    }
    if (multiset_hash(s->a, s->n) != s->input_hash) {
        snprintf(buf, len, "sorted, but not a permutation of the input");
        return false;
    }
    snprintf(buf, len, "sorted");
    return true;
}

const wb_workload wb_sort_seqmerge = {
    .name = "sort-seqmerge",
    .title = "mergesort with a sequential merge: span Theta(n)",
    .default_size = 10000000,
    .quick_size = 100000,
    .profile_by_default = true,
    .prepare = prepare_seqmerge,
    .describe = describe,
    .reset = reset,
    .run = run,
    .check = check,
    .destroy = destroy,
};

const wb_workload wb_sort_parmerge = {
    .name = "sort-parmerge",
    .title = "mergesort with a parallel merge: span Theta(log^3 n)",
    .default_size = 10000000,
    .quick_size = 100000,
    .profile_by_default = true,
    .prepare = prepare_parmerge,
    .describe = describe,
    .reset = reset,
    .run = run,
    .check = check,
    .destroy = destroy,
};

const wb_workload wb_quicksort = {
    .name = "quicksort",
    .title = "quicksort, sequential partition, both sides in parallel",
    .default_size = 10000000,
    .quick_size = 100000,
    .prepare = prepare_quick,
    .describe = describe,
    .reset = reset,
    .run = run,
    .check = check,
    .destroy = destroy,
};
