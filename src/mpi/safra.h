/* safra.h: the Dijkstra-Safra termination rules of one rank, free of MPI so that a simulation
 * can drive them (tests/test_mpi_safra.c). progress.c calls them; docs/distributed.md has the
 * argument. Only messages that can make a passive rank active ("work") are counted. */
#ifndef WS_MPI_SAFRA_H
#define WS_MPI_SAFRA_H

#include <stdbool.h>

typedef struct ws__safra {
    int me, ranks;
    long long counter; /* work messages sent minus received */
    bool black;        /* received work since the token last left */
    bool has_token;
    bool token_returned; /* rank 0: the token is back from a round */
    long long token_q;
    bool token_black;
} ws__safra;

typedef enum ws__safra_action {
    WS__SAFRA_KEEP,      /* no token here */
    WS__SAFRA_SEND,      /* send the token (q, black) to rank (me + 1) % ranks */
    WS__SAFRA_TERMINATE, /* rank 0: every rank is passive and no work is in flight */
} ws__safra_action;

void ws__safra_init(ws__safra *s, int me, int ranks);
void ws__safra_work_sent(ws__safra *s);
void ws__safra_work_received(ws__safra *s);
void ws__safra_token_received(ws__safra *s, long long q, bool black);
/* The rank is passive: what to do with the token, if it holds it. On WS__SAFRA_SEND, *q and
 * *black are the token to send, and the rank no longer holds it. */
ws__safra_action ws__safra_passive(ws__safra *s, long long *q, bool *black);

#endif
