/* quicksort.c: a parallel quicksort: partition the array, then sort both sides in parallel with
 * ws_join. Run: ./example_quicksort [n] */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <worksteal.h>

typedef struct sort_call {
    int *a;
    size_t n;
} sort_call;

enum { CUTOFF = 4096 }; /* below it, forking costs more than it gains: sort serially */

static int compare_ints(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

/* Hoare partition around the middle element: a[0, k) <= pivot <= a[k, n), with 0 < k < n. */
static size_t partition(int *a, size_t n)
{
    int pivot = a[(n - 1) / 2];
    size_t i = 0, j = n - 1;
    for (;;) {
        while (a[i] < pivot)
            i++;
        while (a[j] > pivot)
            j--;
        if (i >= j)
            return j + 1;
        int t = a[i];
        a[i++] = a[j];
        a[j--] = t;
    }
}

static void sort(void *p)
{
    sort_call *c = p;
    if (c->n < CUTOFF) {
        qsort(c->a, c->n, sizeof(int), compare_ints);
        return;
    }
    size_t k = partition(c->a, c->n);
    sort_call left = {c->a, k}, right = {c->a + k, c->n - k};
    ws_join(sort, &left, sort, &right); /* the two sides may be sorted in parallel */
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000u;
    int *a = malloc((n ? n : 1) * sizeof(int)), *b = malloc((n ? n : 1) * sizeof(int));
    if (a == NULL || b == NULL) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    unsigned x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        a[i] = b[i] = (int)(x >> 1);
    }
    double t0 = seconds();
    sort_call all = {a, n};
    sort(&all); /* outside a worker, its ws_join calls run on the default pool */
    double t1 = seconds();
    qsort(b, n, sizeof(int), compare_ints);
    double t2 = seconds();
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += a[i] != b[i];
    printf("parallel quicksort of %zu ints on %u workers: %.3f s (the C library's qsort: %.3f s), "
           "%s\n",
           n, ws_pool_workers(ws_default_pool()), t1 - t0, t2 - t1,
           wrong ? "WRONG ORDER" : "same result");
    free(a);
    free(b);
    return wrong != 0;
}
