/* server.c: a server-like loop. Several client threads send requests to one pool, each request a
 * job in a group of its own, and each client waits for its own reply. The handler is parallel
 * itself (a ws_parallel_reduce), so requests and their inner tasks share the workers.
 * Run: ./example_server [clients] [requests per client] */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <worksteal.h>

typedef struct request {
    uint64_t n;     /* the question: the sum of i*i for i < n */
    uint64_t reply; /* the answer, written by the handler */
    int err;
} request;

static void fold_squares(size_t begin, size_t end, void *acc, void *ctx)
{
    (void)ctx;
    uint64_t *sum = acc;
    for (size_t i = begin; i < end; i++)
        *sum += (uint64_t)i * i;
}

static void add(void *acc, const void *right, void *ctx)
{
    (void)ctx;
    *(uint64_t *)acc += *(const uint64_t *)right;
}

static void handle(void *arg)
{
    request *r = arg;
    uint64_t zero = 0;
    r->err = ws_parallel_reduce(0, r->n, 0, sizeof zero, &zero, fold_squares, add, NULL, &r->reply);
}

typedef struct client {
    pthread_t thread;
    ws_pool *pool;
    unsigned requests, seed;
    unsigned wrong;
    double total_wait, longest_wait;
} client;

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *client_main(void *arg)
{
    client *c = arg;
    for (unsigned k = 0; k < c->requests; k++) {
        c->seed = c->seed * 1103515245u + 12345u;
        request r = {.n = 1000 + (c->seed >> 8) % 100000};
        double t0 = seconds();
        ws_group g;
        ws_group_init(&g, c->pool);
        int err = ws_group_submit(&g, handle, &r, 0);
        ws_group_wait(&g); /* returns when this client's request is answered */
        double wait = seconds() - t0;
        uint64_t n = r.n, want = (n - 1) * n * (2 * n - 1) / 6;
        c->wrong += err != 0 || r.err != 0 || r.reply != want;
        c->total_wait += wait;
        c->longest_wait = wait > c->longest_wait ? wait : c->longest_wait;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned nclients = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
    unsigned per_client = argc > 2 ? (unsigned)atoi(argv[2]) : 500;
    if (nclients < 1 || nclients > 64) {
        fprintf(stderr, "clients: 1 to 64\n");
        return 2;
    }
    ws_pool *pool;
    int err = ws_pool_create(&pool, NULL); /* NULL: the defaults (a worker per CPU) */
    if (err != 0) {
        fprintf(stderr, "ws_pool_create: %s\n", ws_strerror(err));
        return 1;
    }
    client clients[64];
    unsigned started = 0;
    for (; started < nclients; started++) {
        clients[started] = (client){.pool = pool, .requests = per_client, .seed = started + 1};
        if (pthread_create(&clients[started].thread, NULL, client_main, &clients[started]) != 0)
            break;
    }
    unsigned wrong = 0;
    double total = 0, longest = 0;
    for (unsigned i = 0; i < started; i++) {
        pthread_join(clients[i].thread, NULL);
        wrong += clients[i].wrong;
        total += clients[i].total_wait;
        longest = clients[i].longest_wait > longest ? clients[i].longest_wait : longest;
    }
    unsigned sent = started * per_client;
    printf("%u client threads sent %u requests to %u workers: %u answered wrongly; mean wait "
           "%.0f us, longest %.1f ms\n",
           started, sent, ws_pool_workers(pool), wrong, sent ? total / sent * 1e6 : 0.0,
           longest * 1e3);
    ws_pool_destroy(pool);
    return wrong != 0 || started != nclients;
}
