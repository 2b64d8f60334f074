/* test_mpi_safra.c: the termination rules of worksteal_mpi (src/mpi/safra.c), without MPI, under
 * random schedules of a simulated computation.
 *
 * R ranks (2..5) hold units of work. At each step one enabled event, chosen at random, happens:
 * an active rank processes a unit (which may create up to two more, within a budget), an active
 * rank sends some of its units to another rank (a work message), any message in flight is
 * delivered (in any order: the channels are not FIFO), or a passive rank holding the token
 * applies the rules. The test fails if rank 0 ever declares termination while a rank holds work
 * or work is in flight (safety), or if a finished computation is not detected within a bound
 * (liveness). Removing the blackening of a rank that receives work makes it fail within a few
 * thousand schedules (docs/distributed.md, "Tests").
 *
 * usage: test_mpi_safra [SCHEDULES]
 */
#include "test.h"

#include "safra.h"

#include <stdbool.h>

#define MAX_RANKS 5
#define MAX_MSGS  256
#define MAX_STEPS 200000

typedef struct msg {
    int to;
    bool token;
    long long q; /* token */
    bool black;  /* token */
    int units;   /* work */
} msg;

typedef struct world {
    int ranks;
    ws__safra s[MAX_RANKS];
    int work[MAX_RANKS];
    msg bag[MAX_MSGS];
    int in_flight;
    int budget; /* units still to be created */
    uint64_t rng;
} world;

static uint64_t next(world *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

static int below(world *w, int n)
{
    return (int)(next(w) % (uint64_t)n);
}

static void post(world *w, msg m)
{
    ASSERT_LT(w->in_flight, MAX_MSGS);
    w->bag[w->in_flight++] = m;
}

static bool work_in_flight(const world *w)
{
    for (int i = 0; i < w->in_flight; i++)
        if (!w->bag[i].token)
            return true;
    return false;
}

/* The enabled events, encoded: 0..R-1 process, R..2R-1 send, 2R..3R-1 token rules at a passive
 * holder, 3R.. deliver message i. Returns their number. */
static int enabled(const world *w, int *ev)
{
    int n = 0, r = w->ranks;
    for (int i = 0; i < r; i++) {
        if (w->work[i] > 0) {
            ev[n++] = i;
            ev[n++] = r + i;
        } else if (w->s[i].has_token) {
            ev[n++] = 2 * r + i;
        }
    }
    for (int i = 0; i < w->in_flight; i++)
        ev[n++] = 3 * r + i;
    return n;
}

/* Runs one schedule; false if it declared termination wrongly or never did. */
static bool run_schedule(uint64_t seed, int ranks, int units)
{
    world w = {.ranks = ranks, .budget = units, .rng = seed * 0x9e3779b97f4a7c15ull | 1};
    for (int i = 0; i < ranks; i++)
        ws__safra_init(&w.s[i], i, ranks);
    w.work[below(&w, ranks)] = 1; /* the root, anywhere */
    int ev[3 * MAX_RANKS + MAX_MSGS];
    for (int step = 0; step < MAX_STEPS; step++) {
        int n = enabled(&w, ev);
        ASSERT_GT(n, 0); /* the token is always somewhere */
        int e = ev[below(&w, n)], r = w.ranks;
        if (e < r) { /* process one unit */
            w.work[e]--;
            int made = below(&w, 3);
            made = made < w.budget ? made : w.budget;
            w.budget -= made;
            w.work[e] += made;
        } else if (e < 2 * r) { /* send some units to another rank */
            int from = e - r, to = (from + 1 + below(&w, r - 1)) % r;
            int units_sent = 1 + below(&w, w.work[from]);
            w.work[from] -= units_sent;
            ws__safra_work_sent(&w.s[from]);
            post(&w, (msg){.to = to, .units = units_sent});
        } else if (e < 3 * r) { /* a passive rank holding the token */
            int at = e - 2 * r;
            long long q;
            bool black;
            ws__safra_action a = ws__safra_passive(&w.s[at], &q, &black);
            if (a == WS__SAFRA_TERMINATE) {
                for (int i = 0; i < r; i++)
                    if (w.work[i] != 0)
                        return false;
                return !work_in_flight(&w);
            }
            if (a == WS__SAFRA_SEND)
                post(&w, (msg){.to = (at + 1) % r, .token = true, .q = q, .black = black});
        } else { /* deliver a message */
            msg m = w.bag[e - 3 * r];
            w.bag[e - 3 * r] = w.bag[--w.in_flight];
            if (m.token) {
                ws__safra_token_received(&w.s[m.to], m.q, m.black);
            } else {
                w.work[m.to] += m.units;
                ws__safra_work_received(&w.s[m.to]);
            }
        }
    }
    return false; /* never detected */
}

int main(int argc, char **argv)
{
    long schedules = argc > 1 ? atol(argv[1]) : 20000;
    ASSERT_GT(schedules, 0);
    for (int ranks = 2; ranks <= MAX_RANKS; ranks++) {
        for (long i = 0; i < schedules; i++) {
            uint64_t seed = (uint64_t)ranks * 1000003u + (uint64_t)i;
            if (!run_schedule(seed, ranks, 1 + (int)(i % 40)))
                WS_TEST_FAIL("%d ranks, schedule %ld: termination declared with work left, or "
                             "never",
                             ranks, i);
        }
    }
    /* One rank alone terminates at once when passive. */
    ws__safra s;
    ws__safra_init(&s, 0, 1);
    long long q;
    bool black;
    ASSERT_EQ(ws__safra_passive(&s, &q, &black), WS__SAFRA_TERMINATE);
    printf("test_mpi_safra: %ld schedules for each of 2..%d ranks: ok\n", schedules, MAX_RANKS);
    return 0;
}
