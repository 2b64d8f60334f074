/* safra.c: one rank's part of the Dijkstra-Safra termination detection (EWD 998) on the ring
 * 0 -> 1 -> ... -> N-1 -> 0. A lone rank 0 terminates as soon as it is passive. */
#include "safra.h"

void ws__safra_init(ws__safra *s, int me, int ranks)
{
    *s = (ws__safra){.me = me, .ranks = ranks, .has_token = me == 0};
    s->token_returned = ranks == 1; /* alone, the "round" is over at once */
}

void ws__safra_work_sent(ws__safra *s)
{
    s->counter++;
}

void ws__safra_work_received(ws__safra *s)
{
    s->counter--;
    s->black = true;
}

void ws__safra_token_received(ws__safra *s, long long q, bool black)
{
    s->has_token = true;
    s->token_returned = s->me == 0;
    s->token_q = q;
    s->token_black = black;
}

ws__safra_action ws__safra_passive(ws__safra *s, long long *q, bool *black)
{
    if (!s->has_token)
        return WS__SAFRA_KEEP;
    if (s->me != 0) {
        *q = s->token_q + s->counter;
        *black = s->token_black || s->black;
    } else if (s->token_returned && !s->token_black && !s->black && s->token_q + s->counter == 0) {
        return WS__SAFRA_TERMINATE;
    } else { /* rank 0 starts a round */
        *q = 0;
        *black = false;
    }
    s->black = false;
    s->has_token = false;
    s->token_returned = false;
    return WS__SAFRA_SEND;
}
