/* knapsack.c: Lace's knapsack benchmark (benchmarks/knapsack/knapsack-lace.c in Lace 1.4.2)
 * written with worksteal's typed tasks, for bench/lace/compare.sh. The same input file, the same
 * order of the items (by value per weight, descending, with the same qsort comparison), the same
 * search and the same output lines:
 *
 *   knapsack -w WORKERS [-q DQSIZE] FILE      FILE: n capacity, then n lines "value weight"
 *   Best value is ...
 *   Time: SECONDS
 *
 * The search is Lace's: every item is both left out (spawned) and put in (called), without
 * pruning (Lace's bound is computed but its use is commented out, and so is the shared best;
 * neither is here), down to the last item or a full or overfull knapsack. Lace's input reader
 * expects 3 fields from a 2-field fscanf, so Lace's own program rejects every file with items;
 * compare.sh builds it with that test corrected, and this reader tests for 2.
 */
#define _POSIX_C_SOURCE 200809L

#include "lace_port.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_ITEMS 256

struct item {
    int value;
    int weight;
};

/* Higher value per weight first. */
static int compare(const void *pa, const void *pb)
{
    const struct item *a = pa, *b = pb;
    double c = ((double)a->value / a->weight) - ((double)b->value / b->weight);
    return c > 0 ? -1 : c < 0 ? 1 : 0;
}

/* Reads the file into items, sorted; 0, or -1 after a message. */
static int read_input(const char *filename, struct item *items, int *capacity, int *n)
{
    FILE *f = fopen(filename, "r");
    if (f == NULL) {
        fprintf(stderr, "open_input(\"%s\") failed\n", filename);
        return -1;
    }
    int ok = fscanf(f, "%d %d", n, capacity) == 2 && *n >= 0 && *n <= MAX_ITEMS;
    for (int i = 0; ok && i < *n; i++)
        ok = fscanf(f, "%d %d", &items[i].value, &items[i].weight) == 2 && items[i].weight > 0;
    fclose(f);
    if (!ok) {
        fprintf(stderr, "%s: not a knapsack input of at most %d items\n", filename, MAX_ITEMS);
        return -1;
    }
    qsort(items, (size_t)*n, sizeof(struct item), compare);
    return 0;
}

/* The best value of items e[0..n-1] in capacity c, with value v packed so far. */
WS_TASK_4(int, knapsack, struct item *, e, int, c, int, n, int, v)
{
    if (c < 0)
        return INT_MIN;
    if (n == 0 || c == 0)
        return v;
    WS_SPAWN(knapsack, e + 1, c, n - 1, v);
    int with = WS_CALL(knapsack, e + 1, c - e->weight, n - 1, v + e->value);
    int without = WS_SYNC(knapsack);
    return with > without ? with : without;
}

int main(int argc, char **argv)
{
    ws_pool *pool;
    const char *file = lace_port_start(argc, argv, "filename", &pool, NULL);
    if (file == NULL)
        return 1;
    struct item items[MAX_ITEMS];
    int n, capacity;
    if (read_input(file, items, &capacity, &n) != 0) {
        ws_pool_destroy(pool);
        return 1;
    }
    double t1 = lace_port_now();
    int sol = knapsack_run(pool, items, capacity, n, 0);
    double t2 = lace_port_now();
    printf("Best value is %d\n", sol);
    printf("Time: %f\n", t2 - t1);
    ws_pool_destroy(pool);
    return 0;
}
