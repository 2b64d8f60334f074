/* lace_port.h: what the ports of Lace's benchmark programs share (bench/lace/compare.sh): Lace's
 * command line (-w WORKERS, -q DQSIZE, one operand) and its wall clock. Header-only, so that each
 * port is one compiler call. */
#ifndef WS_LACE_PORT_H
#define WS_LACE_PORT_H

#include <worksteal.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static inline double lace_port_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Reads -w WORKERS (default 1, as Lace's) and -q DQSIZE (ignored: worksteal's deques grow) and
 * one operand (named in the usage line), then creates *pool with that many workers (0: one per
 * CPU) and stores the count given in *workers (if not NULL). Returns the operand, or NULL after a
 * message on stderr. */
static inline const char *lace_port_start(int argc, char **argv, const char *operand,
                                          ws_pool **pool, unsigned *workers)
{
    unsigned count = 1;
    int c;
    bool bad = false;
    while ((c = getopt(argc, argv, "w:q:h")) != -1) {
        if (c == 'w')
            count = (unsigned)atoi(optarg);
        else if (c != 'q')
            bad = true;
    }
    if (bad || optind != argc - 1) {
        fprintf(stderr, "usage: %s -w <workers> [-q dqsize] <%s>\n", argv[0], operand);
        return NULL;
    }
    int err = ws_pool_create(pool, &(ws_config){.workers = count});
    if (err != 0) {
        fprintf(stderr, "%s: cannot start %u workers: %s\n", argv[0], count, ws_strerror(err));
        return NULL;
    }
    if (workers != NULL)
        *workers = count;
    return argv[optind];
}

#endif /* WS_LACE_PORT_H */
