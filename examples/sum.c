/* sum.c: a parallel reduction over a range, with automatic grain. Run: ./example_sum [n] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <worksteal.h>

static void fold(size_t begin, size_t end, void *acc, void *ctx)
{
    (void)ctx;
    double *sum = acc;
    for (size_t i = begin; i < end; i++)
        *sum += sqrt((double)i);
}

static void combine(void *acc, const void *right, void *ctx)
{
    (void)ctx;
    *(double *)acc += *(const double *)right;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000000u;
    double zero = 0, sum;
    int err = ws_parallel_reduce(0, n, 0, sizeof sum, &zero, fold, combine, NULL, &sum);
    if (err != 0) {
        fprintf(stderr, "ws_parallel_reduce: %s\n", ws_strerror(err));
        return 1;
    }
    printf("sum of sqrt(i) for i < %zu = %.6e, by ws_parallel_reduce (the same bits on any number "
           "of workers)\n",
           n, sum);
    return 0;
}
