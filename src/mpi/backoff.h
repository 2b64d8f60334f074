/* backoff.h: how long the progress thread waits, free of MPI so that a test can check the
 * sequence (tests/test_mpi_backoff.c). progress.c uses it for two waits:
 *  - between failed steal requests: each "none" doubles the wait from poll_min, up to poll_max
 *    for the first WS__MPI_DEEP_IDLE refusals in a row, then up to idle_max: the rank has asked
 *    for at least WS__MPI_DEEP_IDLE x poll_max (16 ms by default) and found nothing, so the run
 *    is likely starved or ending, and it rests ("deep idle"). Records arriving end it.
 *  - between polls when a round changed nothing: the sleep doubles from poll_min up to the
 *    same cap while the rank has no work, and up to poll_max while it has work (so that its
 *    victims' requests are answered at once); a rank in deep idle that waits only for the time
 *    of its next request sleeps until then: it has nothing to give whoever asks meanwhile.
 * Short idle spells, the common case while a computation runs, thus see the waits of poll_max
 * and a steal as soon as work appears; only a rank refused WS__MPI_DEEP_IDLE times in a row
 * slows down, to about one request and a few polls per idle_max. A rank that sleeps long also
 * answers requests and forwards the termination token late (up to idle_max a hop), which is
 * why the cap is not reached before the rank has been idle for a while.
 * ws__mpi_backoff_requests_within bounds the requests of a rank refused every time. */
#ifndef WS_MPI_BACKOFF_H
#define WS_MPI_BACKOFF_H

/* Refusals in a row after which a rank is in deep idle. */
#define WS__MPI_DEEP_IDLE 64u

/* The longest wait after `refusals` failed requests in a row. */
static inline double ws__mpi_backoff_cap(unsigned long refusals, double poll_max, double idle_max)
{
    return refusals >= WS__MPI_DEEP_IDLE ? idle_max : poll_max;
}

/* The wait after one of `current` (0: none yet): twice as long, within [min, max]. */
static inline double ws__mpi_backoff_next(double current, double min, double max)
{
    double next = current * 2;
    return next < min ? min : next > max ? max : next;
}

/* The most requests a rank whose every request is refused at once can send within `seconds`:
 * the first at once, then one after each wait of the sequence above. */
static inline unsigned long ws__mpi_backoff_requests_within(double seconds, double min,
                                                            double poll_max, double idle_max)
{
    unsigned long n = 1;
    double wait = 0, spent = 0;
    for (;;) {
        wait = ws__mpi_backoff_next(wait, min, ws__mpi_backoff_cap(n, poll_max, idle_max));
        if (spent + wait > seconds)
            return n;
        spent += wait;
        n++;
    }
}

#endif /* WS_MPI_BACKOFF_H */
