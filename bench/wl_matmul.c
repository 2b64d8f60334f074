/* wl_matmul.c: recursive blocked matrix multiply, C = A * B for n x n doubles, n a power of two.
 *
 * C += A*B splits each matrix into four quadrants and does the eight quadrant products in two
 * rounds of four parallel ones (each round writes each quadrant of C once, so no two tasks of a
 * round write the same memory). Below MM_LEAF the product is a plain loop nest. The entries are
 * small integers, so every summation order gives the same exact doubles, and the result is
 * compared entry by entry with the serial product of one unblocked loop nest, computed once in
 * prepare.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MM_LEAF 64 /* a 64x64 block of each matrix is 32 KiB: three fit in L2 */

typedef struct mm_state {
    size_t n;
    double *a, *b, *c, *want;
} mm_state;

typedef struct mm_arg {
    const wb_runner *r;
    const double *a, *b;
    double *c;
    size_t n, ld; /* block size and row stride */
} mm_arg;

/* c += a*b on an n x n block, row stride ld. */
static void mm_leaf(const double *restrict a, const double *restrict b, double *restrict c,
                    size_t n, size_t ld)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < n; k++) {
            double aik = a[i * ld + k];
            for (size_t j = 0; j < n; j++)
                c[i * ld + j] += aik * b[k * ld + j];
        }
}

static void mm_task(void *p);

/* Two quadrant products forked together; two of these make a round of four. */
typedef struct mm_pair {
    const wb_runner *r;
    mm_arg *x, *y;
} mm_pair;

static void mm_pair_task(void *p)
{
    mm_pair *q = p;
    wb_fork2(q->r, mm_task, q->x, mm_task, q->y);
}

static void mm_round(const wb_runner *r, mm_arg k[4])
{
    mm_pair p0 = {r, &k[0], &k[1]}, p1 = {r, &k[2], &k[3]};
    wb_fork2(r, mm_pair_task, &p0, mm_pair_task, &p1);
}

static void mm_task(void *p)
{
    mm_arg *m = p;
    size_t n = m->n, ld = m->ld;
    if (n <= MM_LEAF) {
        mm_leaf(m->a, m->b, m->c, n, ld);
        return;
    }
    size_t h = n / 2;
    const double *a11 = m->a, *a12 = m->a + h, *a21 = m->a + h * ld, *a22 = m->a + h * ld + h;
    const double *b11 = m->b, *b12 = m->b + h, *b21 = m->b + h * ld, *b22 = m->b + h * ld + h;
    double *c11 = m->c, *c12 = m->c + h, *c21 = m->c + h * ld, *c22 = m->c + h * ld + h;
    mm_arg first[4] = {
        {m->r, a11, b11, c11, h, ld},
        {m->r, a11, b12, c12, h, ld},
        {m->r, a21, b11, c21, h, ld},
        {m->r, a21, b12, c22, h, ld},
    };
    mm_round(m->r, first);
    mm_arg second[4] = {
        {m->r, a12, b21, c11, h, ld},
        {m->r, a12, b22, c12, h, ld},
        {m->r, a22, b21, c21, h, ld},
        {m->r, a22, b22, c22, h, ld},
    };
    mm_round(m->r, second);
}

/* ---- the workload ---- */

typedef struct mm_run {
    mm_state *s;
    const wb_runner *r;
} mm_run;

static void mm_root(void *p)
{
    mm_run *run = p;
    mm_arg m = {run->r, run->s->a, run->s->b, run->s->c, run->s->n, run->s->n};
    mm_task(&m);
}

static const wb_roots roots = {mm_root, mm_root, mm_root, mm_root, NULL, NULL};

static void destroy(void *p)
{
    mm_state *s = p;
    if (!s)
        return;
    free(s->a);
    free(s->b);
    free(s->c);
    free(s->want);
    free(s);
}

static void *prepare(long size)
{
    if (size < MM_LEAF || size > 8192 || (size & (size - 1)) != 0) {
        fprintf(stderr, "ws-bench: matmul: size must be a power of two in %d..8192, not %ld\n",
                MM_LEAF, size);
        return NULL;
    }
    size_t n = (size_t)size, bytes = n * n * sizeof(double);
    mm_state *s = wb_alloc("matmul", sizeof(*s));
    if (!s)
        return NULL;
    *s = (mm_state){.n = n};
    s->a = wb_alloc("matmul A", bytes);
    s->b = wb_alloc("matmul B", bytes);
    s->c = wb_alloc("matmul C", bytes);
    s->want = wb_alloc("matmul reference", bytes);
    if (!s->a || !s->b || !s->c || !s->want) {
        destroy(s);
        return NULL;
    }
    uint64_t x = 777;
    for (size_t i = 0; i < n * n; i++) {
        s->a[i] = (double)((int)(wb_mix64(x += 0x9e3779b97f4a7c15ull) % 9) - 4);
        s->b[i] = (double)((int)(wb_mix64(x += 0x9e3779b97f4a7c15ull) % 9) - 4);
    }
    /* The reference: the whole product as one plain loop nest, no blocks, no recursion. */
    memset(s->want, 0, bytes);
    mm_leaf(s->a, s->b, s->want, n, n);
    memset(s->c, 0, bytes); /* touch C once, so no run pays its page faults */
    return s;
}

static void describe(void *p, char *buf, size_t len)
{
    mm_state *s = p;
    size_t leaves = (s->n / MM_LEAF) * (s->n / MM_LEAF) * (s->n / MM_LEAF);
    snprintf(buf, len, "matmul %zux%zu doubles, recursive quadrants down to %dx%d (%zu leaves)",
             s->n, s->n, MM_LEAF, MM_LEAF, leaves);
}

static void reset(void *p)
{
    mm_state *s = p;
    memset(s->c, 0, s->n * s->n * sizeof(double));
}

static int run(void *p, const wb_runner *r)
{
    mm_run mr = {p, r};
    return wb_run_root(r, &roots, &mr);
}

static bool check(void *p, char *buf, size_t len)
{
    mm_state *s = p;
    for (size_t i = 0; i < s->n * s->n; i++) {
        if (s->c[i] != s->want[i]) {
            snprintf(buf, len, "C[%zu][%zu] = %g, want %g", i / s->n, i % s->n, s->c[i],
                     s->want[i]);
            return false;
        }
    }
    snprintf(buf, len, "equal to the serial product");
    return true;
}

const wb_workload wb_matmul = {
    .name = "matmul",
    .title = "recursive blocked matrix multiply, checked against the serial product",
    .default_size = 1024,
    .quick_size = 128,
    .prepare = prepare,
    .describe = describe,
    .reset = reset,
    .run = run,
    .check = check,
    .destroy = destroy,
};
