/* knapsack: the 0/1 knapsack problem by branch and bound, with a typed task of four arguments
 * for the search and a void one for the input.
 *
 *   example_knapsack [ITEMS [WORKERS]]   (default 28 items, the default pool)
 *
 * best(i, room, value) is the best value reachable from item i on with `room` capacity left and
 * `value` packed so far: it spawns the branch that takes item i and calls the one that skips it
 * (WS_SPAWN, WS_CALL, WS_SYNC: the frame lives on the worker's task stack, unnamed). A branch
 * whose value plus everything left could not beat the best found so far is cut (the shared best
 * only grows, so a cut never loses the optimum). The answer is checked against the classic
 * dynamic program. A void task, fill_items, builds the input in parallel; best_run and
 * fill_items_run start each from outside the pool.
 */
#include <worksteal.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct item {
    int weight, value;
} item;

enum { MAX_ITEMS = 40 };
static item items[MAX_ITEMS];
static int nitems;
static long suffix_value[MAX_ITEMS + 1]; /* the value of items i.. together */
static _Atomic long best_found;

/* Items first..last-1, with weights and values from a fixed formula (no shared state). */
WS_VOID_TASK_2(fill_items, int, first, int, last)
{
    if (last - first > 4) {
        int mid = first + (last - first) / 2;
        WS_SPAWN(fill_items, mid, last);
        WS_CALL(fill_items, first, mid);
        WS_SYNC(fill_items);
        return;
    }
    for (int i = first; i < last; i++) {
        unsigned h = (unsigned)i * 2654435761u;
        items[i].weight = 10 + (int)(h % 91);
        items[i].value = items[i].weight + (int)((h >> 8) % 47);
    }
}

static void raise_best(long value)
{
    long seen = atomic_load_explicit(&best_found, memory_order_relaxed);
    while (value > seen &&
           !atomic_compare_exchange_weak_explicit(&best_found, &seen, value, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

WS_TASK_4(long, best, const item *, all, int, i, int, room, long, value)
{
    if (i == nitems) {
        raise_best(value);
        return value;
    }
    if (value + suffix_value[i] <= atomic_load_explicit(&best_found, memory_order_relaxed))
        return 0; /* cannot beat what is known */
    bool fits = all[i].weight <= room;
    if (fits)
        WS_SPAWN(best, all, i + 1, room - all[i].weight, value + all[i].value);
    long skip = WS_CALL(best, all, i + 1, room, value);
    long with = fits ? WS_SYNC(best) : 0;
    return with > skip ? with : skip;
}

/* The dynamic program over capacities, for the check. */
static long best_by_table(int capacity)
{
    long *table = calloc((size_t)capacity + 1, sizeof *table);
    if (table == NULL)
        return -1;
    for (int i = 0; i < nitems; i++)
        for (int c = capacity; c >= items[i].weight; c--) {
            long with = table[c - items[i].weight] + items[i].value;
            if (with > table[c])
                table[c] = with;
        }
    long r = table[capacity];
    free(table);
    return r;
}

int main(int argc, char **argv)
{
    nitems = argc > 1 ? atoi(argv[1]) : 28;
    if (nitems < 1 || nitems > MAX_ITEMS) {
        fprintf(stderr, "usage: example_knapsack [ITEMS (1..%d) [WORKERS]]\n", MAX_ITEMS);
        return 2;
    }
    ws_pool *pool = NULL; /* NULL: the default pool */
    if (argc > 2 && ws_pool_create(&pool, &(ws_config){.workers = (unsigned)atoi(argv[2])}) != 0) {
        fprintf(stderr, "example_knapsack: could not create the pool\n");
        return 1;
    }
    fill_items_run(pool, 0, nitems);
    int capacity = 0;
    for (int i = nitems - 1; i >= 0; i--) {
        suffix_value[i] = suffix_value[i + 1] + items[i].value;
        capacity += items[i].weight;
    }
    capacity /= 2; /* room for about half the items */
    long got = best_run(pool, items, 0, capacity, 0);
    long want = best_by_table(capacity);
    if (pool != NULL)
        ws_pool_destroy(pool);
    printf("knapsack of %d items, capacity %d: best value %ld (%s)\n", nitems, capacity, got,
           got == want ? "checked against the table" : "WRONG");
    return got == want ? 0 : 1;
}
