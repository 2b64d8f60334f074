/* test_mpi_backoff: the waits of worksteal_mpi's progress thread (src/mpi/backoff.h), without
 * MPI. The back-off between failed steal requests doubles from poll_min up to poll_max, and
 * after 64 refusals in a row on up to idle_max, so the requests an idle rank sends are bounded
 * by a count that depends only on the interval:
 * checked here on the sequence itself and on a simulated idle rank whose victims answer after
 * various delays. tests/test_mpi_run.c (case idle) checks the same bound on real runs, from the
 * counters of ws_mpi_stats.
 */
#include "backoff.h"
#include "test.h"

#define US 1e-6

/* The waits after each refusal of a rank refused every time, with the defaults: poll_min
 * 20 us, poll_max 250 us, idle_max 20 ms. */
static double wait_after(unsigned long refusals, double previous)
{
    return ws__mpi_backoff_next(previous, 20 * US, ws__mpi_backoff_cap(refusals, 250 * US, 0.02));
}

static void test_sequence(void)
{
    double wait = 0;
    double first[] = {20, 40, 80, 160, 250};
    for (unsigned long r = 1; r <= 63; r++) {
        wait = wait_after(r, wait);
        ASSERT_EQ((long)(wait / US + 0.5), (long)(r <= 5 ? first[r - 1] : 250));
    }
    /* Deep idle from the 64th refusal in a row: doubling on from 250 us to 20 ms. */
    double deep[] = {500, 1000, 2000, 4000, 8000, 16000, 20000, 20000, 20000};
    for (unsigned long r = 64; r < 64 + sizeof deep / sizeof deep[0]; r++) {
        wait = wait_after(r, wait);
        ASSERT_EQ((long)(wait / US + 0.5), (long)deep[r - 64]);
    }
    ASSERT(ws__mpi_backoff_cap(WS__MPI_DEEP_IDLE - 1, 1, 2) == 1);
    ASSERT(ws__mpi_backoff_cap(WS__MPI_DEEP_IDLE, 1, 2) == 2);
    ASSERT(ws__mpi_backoff_next(1.0, 20 * US, 250 * US) == 250 * US); /* above the cap */
}

static void test_requests_within(void)
{
    /* 1 at once; 63 after waits of 20, 40, 80, 160 and 59 x 250 us (15,050 us); 6 after
     * 500 .. 16,000 us (31,500 us; 46,550 us in all); then one per 20 ms:
     * (1,000,000 - 46,550) / 20,000 = 47 more within a second. */
    ASSERT_EQ(ws__mpi_backoff_requests_within(1.0, 20 * US, 250 * US, 0.02), 1 + 63 + 6 + 47);
    /* Without deep idle (idle_max = poll_max, the former rule): 4 waits of 20..160 us (300 us),
     * then (1 s - 300 us) / 250 us. */
    ASSERT_EQ(ws__mpi_backoff_requests_within(1.0, 20 * US, 250 * US, 250 * US), 1 + 4 + 3998);
    ASSERT_EQ(ws__mpi_backoff_requests_within(0, 20 * US, 250 * US, 0.02), 1);
    ASSERT_EQ(ws__mpi_backoff_requests_within(19.9 * US, 20 * US, 250 * US, 0.02), 1);
    ASSERT_EQ(ws__mpi_backoff_requests_within(20 * US, 20 * US, 250 * US, 0.02), 2);
}

/* An idle rank as progress.c runs it: it asks, the answer "none" comes after rtt, it waits the
 * back-off, asks again. Whatever the answers' delays, the requests within the elapsed time stay
 * within the bound. */
static void test_simulated_idle_rank(void)
{
    uint64_t seed = test_seed("test_mpi_backoff");
    for (int run = 0; run < 1000; run++) {
        double t = 0, wait = 0, end = 0.05 + (double)(test_rand(&seed) % 2000) * 1e-3;
        unsigned long requests = 0;
        for (;;) {
            requests++;                                           /* sent at t, refused */
            double rtt = (double)(test_rand(&seed) % 30000) * US; /* a victim asleep up to 30 ms */
            wait = wait_after(requests, wait);
            if (t + rtt + wait > end)
                break;
            t += rtt + wait;
        }
        unsigned long bound = ws__mpi_backoff_requests_within(end, 20 * US, 250 * US, 0.02);
        if (requests > bound)
            WS_TEST_FAIL("%lu requests in %.3f s, bound %lu", requests, end, bound);
    }
}

int main(void)
{
    test_sequence();
    test_requests_within();
    test_simulated_idle_rank();
    printf("test_mpi_backoff: ok\n");
    return 0;
}
