/* blur.c: an image filter with ws_parallel_for: a 3x3 box blur of a grayscale image, row ranges
 * filtered in parallel. Every output row depends only on the input, so the result is the serial
 * filter's, bit for bit. Run: ./example_blur [size] */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <worksteal.h>

typedef struct image {
    size_t width, height;
    const unsigned char *in;
    unsigned char *out;
} image;

/* Rows [begin, end) of the blur: each pixel becomes the mean of its 3x3 neighbourhood (the
 * part of it inside the image). */
static void blur_rows(size_t begin, size_t end, void *ctx)
{
    const image *im = ctx;
    for (size_t y = begin; y < end; y++) {
        for (size_t x = 0; x < im->width; x++) {
            unsigned sum = 0, count = 0;
            for (size_t yy = y ? y - 1 : 0; yy <= y + 1 && yy < im->height; yy++)
                for (size_t xx = x ? x - 1 : 0; xx <= x + 1 && xx < im->width; xx++) {
                    sum += im->in[yy * im->width + xx];
                    count++;
                }
            im->out[y * im->width + x] = (unsigned char)(sum / count);
        }
    }
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    size_t side = argc > 1 ? strtoull(argv[1], NULL, 10) : 2048;
    size_t pixels = side * side;
    unsigned char *in = malloc(pixels + 1), *par = malloc(pixels + 1), *ser = malloc(pixels + 1);
    if (in == NULL || par == NULL || ser == NULL) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < pixels; i++) /* a test pattern: stripes and noise */
        in[i] = (unsigned char)((i % side) * 7 + (i / side) * 3 + (i * 2654435761u >> 28));
    image parallel = {side, side, in, par}, serial = {side, side, in, ser};
    double t0 = seconds();
    ws_parallel_for(0, side, 0, blur_rows, &parallel); /* grain 0: rows split on demand */
    double t1 = seconds();
    blur_rows(0, side, &serial);
    double t2 = seconds();
    int same = memcmp(par, ser, pixels) == 0;
    printf("3x3 blur of a %zux%zu image with ws_parallel_for: %.3f s on %u workers (one thread: "
           "%.3f s), %s\n",
           side, side, t1 - t0, ws_pool_workers(ws_default_pool()), t2 - t1,
           same ? "identical to the serial filter" : "DIFFERENT from the serial filter");
    free(in);
    free(par);
    free(ser);
    return !same;
}
