/* progress.c: the progress thread, the only thread of a rank that calls MPI during a run.
 *
 * Each round it receives every waiting message, posts the messages that are due and retires
 * those sent, asks a random rank for work when the rank is hungry (at most one request
 * outstanding), and passes the termination token on when the rank is passive. When a round
 * changes nothing it sleeps on the rank's condition variable, twice as long each time up to
 * poll_max_us, or up to idle_max_us while the rank has no work and no request out (backoff.h);
 * a driver going idle wakes it at once.
 *
 * Messages (tags): REQUEST (empty) asks for work; REPLY carries the records given, possibly
 * none; TOKEN carries Safra's token (the message count q and the colour); DONE ends the run.
 * Termination is Dijkstra-Safra on a ring 0 -> 1 -> ... -> N-1 -> 0 (safra.c), counting REPLY
 * messages that carry records (the only messages that give work): docs/distributed.md has the
 * argument.
 * After DONE every rank waits for the answer to its own request, keeps answering "none", and
 * enters a non-blocking barrier; when the barrier completes no message of the run is in flight.
 */
#include "backoff.h"
#include "mpi_internal.h"
#include "safra.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG_REQUEST = 1, TAG_REPLY, TAG_TOKEN, TAG_DONE };

typedef struct outgoing {
    int dest, tag;
    void *buf; /* owned; freed when sent */
    int len;
    double due; /* MPI_Wtime() before which it is held back (test delays) */
    MPI_Request req;
    bool posted;
} outgoing;

typedef struct progress {
    ws__mpi_rank *rank;
    ws_mpi_stats *stats;
    outgoing *out;
    size_t n_out, cap_out;
    unsigned char *in;
    size_t in_cap;
    uint64_t rng;

    bool asking;            /* a steal request is outstanding */
    double asked_at;        /* when it was sent */
    double next_ask;        /* no request before this time (back-off after "none") */
    double backoff_s;       /* the current back-off */
    unsigned long refusals; /* "none" answers since records last arrived (backoff.h) */

    ws__safra safra; /* counting REPLY messages that carry records */

    bool done; /* termination detected (rank 0) or DONE received */
    bool in_barrier;
    bool finished;
    MPI_Request barrier;
} progress;

static double now(void)
{
    return MPI_Wtime();
}

static uint64_t next_random(progress *p)
{
    /* xorshift64* */
    p->rng ^= p->rng >> 12;
    p->rng ^= p->rng << 25;
    p->rng ^= p->rng >> 27;
    return p->rng * 0x2545f4914f6cdd1dull;
}

/* ---- sending ---- */

static void send_msg(progress *p, int dest, int tag, void *buf, size_t len)
{
    if (p->n_out == p->cap_out) {
        size_t cap = p->cap_out ? 2 * p->cap_out : 16;
        outgoing *grown = realloc(p->out, cap * sizeof(*grown));
        if (!grown)
            ws__mpi_fatal("ws_mpi_run", "out of memory for outgoing messages");
        p->out = grown;
        p->cap_out = cap;
    }
    double delay = 0;
    unsigned max_us = p->rank->config.delay_max_us;
    if (max_us)
        delay = (double)(next_random(p) % ((uint64_t)max_us + 1)) * 1e-6;
    p->out[p->n_out++] =
        (outgoing){dest, tag, buf, (int)len, now() + delay, MPI_REQUEST_NULL, false};
}

/* Posts what is due and retires what was sent; true if anything happened. */
static bool flush(progress *p)
{
    bool any = false;
    double t = now();
    for (size_t i = 0; i < p->n_out;) {
        outgoing *o = &p->out[i];
        if (!o->posted && t >= o->due) {
            MPI_Isend(o->buf, o->len, MPI_BYTE, o->dest, o->tag, p->rank->comm, &o->req);
            o->posted = true;
            any = true;
        }
        int sent = 0;
        if (o->posted)
            MPI_Test(&o->req, &sent, MPI_STATUS_IGNORE);
        if (!sent) {
            i++;
            continue;
        }
        free(o->buf);
        *o = p->out[--p->n_out]; /* order does not matter: the protocol allows any */
        any = true;
    }
    return any;
}

/* The earliest time a held-back message is due, or +infinity. */
static double next_due(const progress *p)
{
    double t = 1e300;
    for (size_t i = 0; i < p->n_out; i++)
        if (!p->out[i].posted && p->out[i].due < t)
            t = p->out[i].due;
    return t;
}

static void send_token(progress *p, long long q, bool black)
{
    long long *token = malloc(2 * sizeof(*token));
    if (!token)
        ws__mpi_fatal("ws_mpi_run", "out of memory for the termination token");
    token[0] = q;
    token[1] = black;
    send_msg(p, (p->rank->me + 1) % p->rank->ranks, TAG_TOKEN, token, 2 * sizeof(*token));
    p->stats->token_passes++;
}

/* ---- receiving ---- */

static void on_request(progress *p, int thief)
{
    unsigned char *records = NULL;
    size_t n = p->done ? 0 : ws__mpi_take_for_thief(p->rank, &records);
    if (n > 0) {
        ws__safra_work_sent(&p->safra);
        p->stats->requests_served++;
        p->stats->records_sent += n;
    } else {
        p->stats->requests_refused++;
    }
    send_msg(p, thief, TAG_REPLY, records, n * p->rank->work->record_size);
}

static void on_reply(progress *p, const unsigned char *records, size_t n)
{
    double t = now();
    p->asking = false;
    p->stats->steal_wait_s += t - p->asked_at;
    if (n == 0) {
        p->stats->steals_failed++;
        p->refusals++;
        const ws_mpi_config *c = &p->rank->config;
        p->backoff_s = ws__mpi_backoff_next(
            p->backoff_s, c->poll_min_us * 1e-6,
            ws__mpi_backoff_cap(p->refusals, c->poll_max_us * 1e-6, c->idle_max_us * 1e-6));
        p->next_ask = t + p->backoff_s;
        return;
    }
    if (p->done)
        ws__mpi_fatal("ws_mpi_run", "records arrived after termination (protocol error)");
    ws__safra_work_received(&p->safra);
    p->stats->steals_ok++;
    p->stats->records_received += n;
    p->backoff_s = 0;
    p->refusals = 0;
    p->next_ask = t;
    ws__mpi_give(p->rank, records, n);
}

/* Receives every waiting message; true if there was any. */
static bool receive_all(progress *p)
{
    bool any = false;
    for (;;) {
        int flag, len;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, p->rank->comm, &flag, &st);
        if (!flag)
            return any;
        MPI_Get_count(&st, MPI_BYTE, &len);
        if ((size_t)len > p->in_cap) {
            unsigned char *grown = realloc(p->in, (size_t)len);
            if (!grown)
                ws__mpi_fatal("ws_mpi_run", "out of memory for an incoming message");
            p->in = grown;
            p->in_cap = (size_t)len;
        }
        MPI_Recv(p->in, len, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, p->rank->comm, MPI_STATUS_IGNORE);
        any = true;
        switch (st.MPI_TAG) {
        case TAG_REQUEST:
            on_request(p, st.MPI_SOURCE);
            break;
        case TAG_REPLY:
            on_reply(p, p->in, (size_t)len / p->rank->work->record_size);
            break;
        case TAG_TOKEN: {
            long long token[2];
            memcpy(token, p->in, sizeof(token));
            ws__safra_token_received(&p->safra, token[0], token[1] != 0);
            break;
        }
        case TAG_DONE:
            p->done = true;
            break;
        default:
            ws__mpi_fatal("ws_mpi_run", "unknown message tag");
        }
    }
}

/* ---- decisions ---- */

static bool rank_is(ws__mpi_rank *rank, bool (*state)(const ws__mpi_rank *))
{
    pthread_mutex_lock(&rank->lock);
    bool yes = state(rank);
    pthread_mutex_unlock(&rank->lock);
    return yes;
}

static bool maybe_ask(progress *p)
{
    ws__mpi_rank *rank = p->rank;
    if (p->done || rank->ranks < 2 || p->asking || now() < p->next_ask ||
        !rank_is(rank, ws__mpi_hungry_locked))
        return false;
    int victim = (int)(next_random(p) % (uint64_t)(rank->ranks - 1));
    if (victim >= rank->me)
        victim++;
    send_msg(p, victim, TAG_REQUEST, NULL, 0);
    p->asking = true;
    p->asked_at = now();
    p->stats->steal_requests++;
    return true;
}

/* Safra's rules (safra.c) for a passive rank holding the token. */
static bool maybe_pass_token(progress *p)
{
    ws__mpi_rank *rank = p->rank;
    if (p->done || !p->safra.has_token || !rank_is(rank, ws__mpi_passive_locked))
        return false;
    long long q;
    bool black;
    switch (ws__safra_passive(&p->safra, &q, &black)) {
    case WS__SAFRA_SEND:
        send_token(p, q, black);
        return true;
    case WS__SAFRA_TERMINATE:
        p->done = true;
        for (int r = 1; r < rank->ranks; r++)
            send_msg(p, r, TAG_DONE, NULL, 0);
        return true;
    case WS__SAFRA_KEEP:
        break;
    }
    return false;
}

/* After termination: leave once the own request is answered and everything sent. */
static bool maybe_leave(progress *p)
{
    if (!p->done || p->asking)
        return false;
    if (!p->in_barrier) {
        if (p->n_out > 0)
            return false;
        MPI_Ibarrier(p->rank->comm, &p->barrier);
        p->in_barrier = true;
        return true;
    }
    int complete = 0;
    MPI_Test(&p->barrier, &complete, MPI_STATUS_IGNORE);
    p->finished = complete != 0;
    return p->finished;
}

/* Sleeps up to seconds, or until a driver signals. */
static void sleep_for(ws__mpi_rank *rank, double seconds, unsigned long wakes_seen)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    long long ns = until.tv_nsec + (long long)(seconds * 1e9);
    until.tv_sec += (time_t)(ns / 1000000000);
    until.tv_nsec = (long)(ns % 1000000000);
    pthread_mutex_lock(&rank->lock);
    if (rank->wakes == wakes_seen)
        pthread_cond_timedwait(&rank->wake, &rank->lock, &until);
    pthread_mutex_unlock(&rank->lock);
}

/* How long to sleep after a round that changed nothing, given the last sleep (backoff.h):
 * doubling up to poll_max while the rank has work, else up to the back-off's cap; and a rank
 * in deep idle that waits only for the time of its next request sleeps until then, since it
 * has nothing to give to whoever asks meanwhile, and waits for an answer with polls of at least
 * poll_max. Never past a held-back message's time. */
static double next_sleep(progress *p, double last)
{
    const ws_mpi_config *c = &p->rank->config;
    double poll_max = c->poll_max_us * 1e-6, cap = poll_max, t = now();
    /* Before deep idle the cap is poll_max either way: no need to look at the rank (a lock). */
    bool deep = p->refusals >= WS__MPI_DEEP_IDLE && rank_is(p->rank, ws__mpi_passive_locked);
    if (deep)
        cap = ws__mpi_backoff_cap(p->refusals, poll_max, c->idle_max_us * 1e-6);
    double s = ws__mpi_backoff_next(last, c->poll_min_us * 1e-6, cap);
    if (deep && !p->asking && !p->done && p->next_ask - t > s)
        s = p->next_ask - t < cap ? p->next_ask - t : cap;
    if (deep && p->asking && s < poll_max)
        s = poll_max;
    double until_due = next_due(p) - t;
    return until_due < s ? (until_due > 0 ? until_due : 0) : s;
}

void ws__mpi_progress(ws__mpi_rank *rank, ws_mpi_stats *stats)
{
    progress p = {.rank = rank, .stats = stats};
    ws__safra_init(&p.safra, rank->me, rank->ranks);
    p.rng = (rank->config.seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(rank->me + 1))) | 1;
    double sleep_s = 0; /* the last sleep; 0 after a round that did something */
    while (!p.finished) {
        pthread_mutex_lock(&rank->lock);
        unsigned long wakes_seen = rank->wakes;
        pthread_mutex_unlock(&rank->lock);

        bool any = receive_all(&p);
        ws__mpi_start_drivers(rank); /* retries a start that failed for memory */
        any |= maybe_ask(&p);
        any |= maybe_pass_token(&p);
        any |= flush(&p);
        any |= maybe_leave(&p);
        if (any) {
            sleep_s = 0;
            continue;
        }
        sleep_s = next_sleep(&p, sleep_s);
        sleep_for(rank, sleep_s, wakes_seen);
    }
    free(p.out);
    free(p.in);
}
