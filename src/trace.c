/* trace.c: WS_TRACE=FILE, a timeline of every pool's activity in the Chrome trace-event JSON
 * format (a JSON array of event objects), for Perfetto (ui.perfetto.dev) and chrome://tracing.
 * docs/profiling.md explains how to read one.
 *
 * Recording. A traced pool has a ws__trace: one ring of trace_event records per worker slot
 * (workers, then spares), indexed by the worker id. Only the worker itself writes its ring, with
 * plain stores and no lock; ws__trace_pool_finish reads the rings after pthread_join has returned
 * for every thread that could write them, and the join orders those writes before the reads. So
 * the recording path is: find the ring, store 32 bytes, bump a counter.
 *
 * The ring. WS_TRACE_EVENTS events per worker (default 65536, rounded up to a power of two so that
 * a slot is a mask away), 32 bytes each: 2 MiB per worker slot by default. The arrays come from
 * malloc without being cleared, so a slot costs memory only once its worker has written there (a
 * spare that never runs costs little more than address space). `recorded` counts every event ever
 * written; event i lives in slot i mod capacity, so when a ring wraps the newest events overwrite
 * the oldest, and recorded - capacity of them are lost. The losses are reported in the JSON (the
 * thread_name metadata of each worker carries "recorded" and "dropped"; a pool with losses gets a
 * process label saying how many) and once per process on stderr.
 *
 * The record. start and end times (ws__now_ns), the event's name and one payload word: a task
 * carries the function it ran, a steal the victim's id. The kind is told by the name pointer:
 * steals and parks are recorded with this file's own `name_steal` and `name_park` strings; anything
 * else is a task named by the caller's static `what` string ("join", "spawn", "stolen", ...).
 *
 * The file. One per process, whatever the number of pools. The first pool that finishes opens it
 * (so a program that destroys no traced pool writes nothing), writes "[", then each finishing pool
 * appends its events, under trace_lock, so that pools finished by different threads do not
 * interleave. An atexit handler, registered when the first pool is traced, writes "]" and a
 * newline. Registering it before the pool exists makes it run after the handler that destroys the
 * default pool (handlers run in reverse order), so the default pool's events still land inside the
 * array. A process that ends without exit() (_exit, a crash) leaves the array unclosed, which both
 * viewers accept: the format allows the closing bracket to be missing for that reason. If the file
 * cannot be opened, one line on stderr names WS_TRACE and the file, and tracing stays off for the
 * rest of the process; the program runs on unaffected.
 *
 * The JSON. Times are microseconds (the unit of "ts" and "dur"), with three decimals so that no
 * nanosecond is lost, counted from the first traced pool's creation. Each pool is a process
 * ("pid" = pool->serial, named "pool N") and each worker a thread ("tid" = worker id, named
 * "worker K" or "spare K"). Events:
 *   task   "ph":"X" named after `what`, category "task", "args":{"fn":"0x..."} (the function's
 *          address, as a string because JSON numbers cannot hold 64 bits exactly);
 *   steal  "ph":"i" (instant, thread scope) named "steal" on the thief, "args":{"victim":V}, plus a
 *          flow arrow from the victim's running slice to the thief's next slice ("ph":"s" on the
 *          victim and "ph":"f" on the thief, sharing an "id" unique in the file);
 *   park   "ph":"X" named "park", category "idle";
 *   cpu    "ph":"i" (thread scope) named "cpu", category "cpu", "args":{"cpu":C,"node":N}: the
 *          worker runs on CPU C (NUMA node N, -1 if unknown) from then on. Logged for the first
 *          task or park a worker ends and whenever it has moved since (kept apart from the ring:
 *          the newest 1024 moves per worker), so the timeline shows migration, and a pinned
 *          worker shows one such event.
 * Every worker of a pool gets its thread_name metadata even if it recorded nothing, and a pool
 * that ran nothing still appears, so the output stays valid and complete for any number of pools.
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    DEFAULT_EVENTS = 1u << 16,
    MAX_EVENTS = 1u << 24, /* 512 MiB per worker: far beyond any sensible trace */
};

/* The names that mark the kind of a record (see the top of this file). */
static const char name_steal[] = "steal";
static const char name_park[] = "park";

typedef struct trace_event {
    uint64_t start_ns; /* ws__now_ns() */
    uint64_t end_ns;   /* equal to start_ns for a steal */
    const char *name;  /* name_steal, name_park, or the task's `what` */
    union {
        ws_fn fn;        /* a task: the function it ran */
        uint64_t victim; /* a steal: the id of the worker robbed */
    } u;
} trace_event;

_Static_assert(sizeof(trace_event) == 32, "a trace event is meant to take 32 bytes");

/* Where a worker ran from a time on: its CPU and that CPU's NUMA node. */
typedef struct trace_cpu {
    uint64_t ns;
    int32_t cpu, node;
} trace_cpu;

enum { CPU_LOG = 1u << 10 }; /* moves kept per worker (the newest; a power of two) */

/* One worker's ring. Written by that worker only, read by ws__trace_pool_finish after the
 * worker's thread has been joined: plain fields, ordered by the join. On its own cache line so
 * that workers bumping their counters do not share lines. */
typedef struct trace_ring {
    alignas(WS_CACHE_LINE) uint64_t recorded; /* events ever written; the next goes in
                                                 slot recorded & mask */
    trace_event *events;                      /* capacity slots */
    /* The CPU log, kept apart from the events: moves are rare, and each worker's first CPU is
     * always there however many events the ring drops. */
    uint64_t moves;  /* entries ever written; the next goes in slot moves % CPU_LOG */
    uint64_t where;  /* the last entry's (node + 1) << 32 | (cpu + 1); 0: none yet */
    trace_cpu *cpus; /* CPU_LOG slots */
} trace_ring;

struct ws__trace {
    uint64_t mask;   /* capacity - 1 */
    unsigned nrings; /* nworkers + nspares, as at init */
    unsigned serial; /* a fallback pid, in case the pool has no serial */
    char *path;      /* WS_TRACE as at init (stored after the rings) */
    trace_ring rings[];
};

/* ---------------------------------------------------------------------------------------- */
/* The process-global file                                                                   */
/* ---------------------------------------------------------------------------------------- */

typedef enum file_state {
    FILE_UNOPENED, /* no pool has finished yet */
    FILE_OPEN,     /* "[" written; events are appended */
    FILE_FAILED,   /* could not be opened: tracing is off for good */
    FILE_CLOSED,   /* "]" written at exit */
} file_state;

/* trace_lock guards every field of g. Taken by ws__trace_pool_init (briefly), by
 * ws__trace_pool_finish while it writes a pool out, and by the exit handler; never while
 * holding another lock of the library, and no other lock is taken under it. */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    bool started;        /* t0 set and the exit handler registered */
    bool drops_reported; /* the one stderr line about dropped events was printed */
    bool late_reported;  /* the one stderr line about a pool finished after exit was printed */
    file_state state;
    uint64_t t0;           /* ws__now_ns() at the first traced pool's creation */
    FILE *file;            /* FILE_OPEN only */
    pid_t owner;           /* the process that opened the file (a forked child must not close it) */
    uint64_t events;       /* objects written so far: the next one needs a comma before it */
    uint64_t next_flow_id; /* ids of steal arrows, unique in the file */
    unsigned next_serial;  /* fallback pool numbers */
} g;

static void trace_at_exit(void)
{
    pthread_mutex_lock(&trace_lock);
    if (g.state == FILE_OPEN && g.owner == getpid()) {
        fputs("\n]\n", g.file);
        fclose(g.file);
        g.file = NULL;
        g.state = FILE_CLOSED;
    }
    pthread_mutex_unlock(&trace_lock);
}

/* The ring capacity: WS_TRACE_EVENTS rounded up to a power of two, or the default. */
static uint64_t ring_capacity(void)
{
    const char *env = getenv("WS_TRACE_EVENTS");
    if (env == NULL || *env == '\0')
        return DEFAULT_EVENTS;
    char *end;
    errno = 0;
    unsigned long v = strtoul(env, &end, 10);
    if (errno != 0 || *end != '\0' || *env == '-' || v < 1 || v > MAX_EVENTS) {
        fprintf(stderr,
                "worksteal: ignoring WS_TRACE_EVENTS=\"%s\" (expected a whole number from 1 to "
                "%u)\n",
                env, (unsigned)MAX_EVENTS);
        return DEFAULT_EVENTS;
    }
    uint64_t cap = 1;
    while (cap < v)
        cap <<= 1;
    return cap;
}

/* ---------------------------------------------------------------------------------------- */
/* Creation and recording                                                                    */
/* ---------------------------------------------------------------------------------------- */

static void trace_free(ws__trace *t)
{
    for (unsigned i = 0; i < t->nrings; i++) {
        ws__free(t->rings[i].events);
        ws__free(t->rings[i].cpus);
    }
    ws__free(t);
}

int ws__trace_pool_init(ws_pool *pool)
{
    pool->trace = NULL;
    const char *path = getenv("WS_TRACE");
    if (path == NULL || *path == '\0')
        return 0;

    pthread_mutex_lock(&trace_lock);
    bool off = g.state == FILE_FAILED || g.state == FILE_CLOSED;
    if (!g.started && !off) {
        g.started = true;
        g.t0 = ws__now_ns();
        /* If registration fails the array is left unclosed, which viewers accept. */
        (void)atexit(trace_at_exit);
    }
    unsigned serial = ++g.next_serial;
    pthread_mutex_unlock(&trace_lock);
    if (off)
        return 0; /* the file could not be opened (said once already), or the process is exiting */

    uint64_t cap = ring_capacity();
    unsigned n = pool->nworkers + pool->nspares;
    size_t path_len = strlen(path) + 1;
    size_t head = sizeof(ws__trace) + (size_t)n * sizeof(trace_ring);
    ws__trace *t = ws__aligned_alloc(WS_CACHE_LINE, head + path_len); /* zeroed */
    if (t == NULL)
        return ENOMEM;
    t->mask = cap - 1;
    t->nrings = n;
    t->serial = serial;
    t->path = (char *)t + head;
    memcpy(t->path, path, path_len);
    for (unsigned i = 0; i < n; i++) {
        /* Not cleared: a slot is read only after its worker wrote it (see the top). */
        t->rings[i].events = ws__malloc((size_t)cap * sizeof(trace_event));
        t->rings[i].cpus = ws__malloc(CPU_LOG * sizeof(trace_cpu));
        if (t->rings[i].events == NULL || t->rings[i].cpus == NULL) {
            trace_free(t); /* the rings not reached yet are NULL (zeroed header) */
            return ENOMEM;
        }
    }
    pool->trace = t;
    return 0;
}

/* The next slot of w's ring, or NULL if the pool is not traced. Worker w only. */
static inline trace_event *ring_next(ws__worker *w)
{
    ws__trace *t = w->pool->trace;
    if (WS_UNLIKELY(t == NULL || w->id >= t->nrings))
        return NULL;
    trace_ring *r = &t->rings[w->id];
    trace_event *e = &r->events[r->recorded & t->mask];
    r->recorded++;
    return e;
}

/* Worker w, traced, at time ns: logs its CPU if it moved since the last look. Looked at when a
 * task or a park ends (getcpu: a few nanoseconds through the vDSO), so a move shows up at the
 * end of the first slice run on the new CPU. */
static void note_cpu(ws__worker *w, uint64_t ns)
{
    int cpu, node;
    ws__current_cpu(&cpu, &node);
    trace_ring *r = &w->pool->trace->rings[w->id];
    uint64_t where = (uint64_t)(uint32_t)(node + 1) << 32 | (uint32_t)(cpu + 1);
    if (cpu < 0 || where == r->where)
        return;
    r->where = where;
    r->cpus[r->moves++ % CPU_LOG] = (trace_cpu){ns, cpu, node};
}

void ws__trace_task(ws__worker *w, const char *what, ws_fn fn, uint64_t start_ns, uint64_t end_ns)
{
    trace_event *e = ring_next(w);
    if (e == NULL)
        return;
    e->start_ns = start_ns;
    e->end_ns = end_ns;
    e->name = what != NULL ? what : "task";
    e->u.fn = fn;
    note_cpu(w, end_ns);
}

void ws__trace_steal(ws__worker *thief, ws__worker *victim, uint64_t ns)
{
    trace_event *e = ring_next(thief);
    if (e == NULL)
        return;
    e->start_ns = ns;
    e->end_ns = ns;
    e->name = name_steal;
    e->u.victim = victim->id;
}

void ws__trace_park(ws__worker *w, uint64_t start_ns, uint64_t end_ns)
{
    trace_event *e = ring_next(w);
    if (e == NULL)
        return;
    e->start_ns = start_ns;
    e->end_ns = end_ns;
    e->name = name_park;
    e->u.fn = NULL;
    note_cpu(w, end_ns);
}

/* ---------------------------------------------------------------------------------------- */
/* Writing a pool out (all under trace_lock)                                                 */
/* ---------------------------------------------------------------------------------------- */

/* Starts the next object of the array: a separator unless it is the first. */
static void begin_object(void)
{
    if (g.events++ > 0)
        fputs(",\n", g.file);
}

/* s as a JSON string: quotes, backslashes and control characters escaped. */
static void put_json_string(const char *s)
{
    fputc('"', g.file);
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(g.file, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(g.file, "\\u%04x", *p);
        else
            fputc(*p, g.file);
    }
    fputc('"', g.file);
}

/* A duration in nanoseconds as microseconds with three decimals, exactly (no floating point). */
static void put_us(uint64_t ns)
{
    fprintf(g.file, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

/* The time of ns on the trace's clock: microseconds since t0 (never negative). */
static void put_ts(uint64_t ns)
{
    put_us(ns > g.t0 ? ns - g.t0 : 0);
}

/* The common head of an event: {"name":...,"cat":...,"ph":...,"pid":..,"tid":.. */
static void put_head(const char *name, const char *cat, char ph, unsigned pid, unsigned tid)
{
    begin_object();
    fputs("{\"name\":", g.file);
    put_json_string(name);
    if (cat != NULL)
        fprintf(g.file, ",\"cat\":\"%s\"", cat);
    fprintf(g.file, ",\"ph\":\"%c\",\"pid\":%u,\"tid\":%u", ph, pid, tid);
}

static void put_metadata(unsigned pid, ws__worker *w, const trace_ring *r, uint64_t cap)
{
    uint64_t dropped = r->recorded > cap ? r->recorded - cap : 0;
    put_head("thread_name", NULL, 'M', pid, w->id);
    fprintf(g.file,
            ",\"args\":{\"name\":\"%s %u\",\"recorded\":%" PRIu64 ",\"dropped\":%" PRIu64 "}}",
            w->spare ? "spare" : "worker", w->id, r->recorded, dropped);
    /* Spares after workers, each group in id order (ids already are). */
    put_head("thread_sort_index", NULL, 'M', pid, w->id);
    fprintf(g.file, ",\"args\":{\"sort_index\":%u}}", w->id);
}

static void put_event(unsigned pid, unsigned tid, const trace_event *e)
{
    uint64_t dur = e->end_ns > e->start_ns ? e->end_ns - e->start_ns : 0;
    if (e->name == name_steal) {
        uint64_t flow = ++g.next_flow_id;
        put_head(name_steal, "steal", 'i', pid, tid);
        fputs(",\"s\":\"t\",\"ts\":", g.file);
        put_ts(e->start_ns);
        fprintf(g.file, ",\"args\":{\"victim\":%" PRIu64 "}}", e->u.victim);
        /* The arrow: starts in the slice the victim is running, ends at the thief's next slice
         * (the stolen task). */
        put_head(name_steal, "steal", 's', pid, (unsigned)e->u.victim);
        fprintf(g.file, ",\"id\":%" PRIu64 ",\"ts\":", flow);
        put_ts(e->start_ns);
        fputc('}', g.file);
        put_head(name_steal, "steal", 'f', pid, tid);
        fprintf(g.file, ",\"id\":%" PRIu64 ",\"ts\":", flow);
        put_ts(e->start_ns);
        fputc('}', g.file);
        return;
    }
    bool park = e->name == name_park;
    put_head(e->name, park ? "idle" : "task", 'X', pid, tid);
    fputs(",\"ts\":", g.file);
    put_ts(e->start_ns);
    fputs(",\"dur\":", g.file);
    put_us(dur);
    if (park)
        fputc('}', g.file);
    else
        fprintf(g.file, ",\"args\":{\"fn\":\"0x%" PRIxPTR "\"}}", (uintptr_t)e->u.fn);
}

/* A worker's CPU log as instant events "cpu" (the oldest entries dropped if it wrapped). */
static void put_cpus(unsigned pid, unsigned tid, const trace_ring *r)
{
    uint64_t first = r->moves > CPU_LOG ? r->moves - CPU_LOG : 0;
    for (uint64_t k = first; k < r->moves; k++) {
        const trace_cpu *c = &r->cpus[k % CPU_LOG];
        put_head("cpu", "cpu", 'i', pid, tid);
        fputs(",\"s\":\"t\",\"ts\":", g.file);
        put_ts(c->ns);
        fprintf(g.file, ",\"args\":{\"cpu\":%d,\"node\":%d}}", (int)c->cpu, (int)c->node);
    }
}

/* Opens the file for the first pool that finishes; false if tracing is off. */
static bool file_ready(const ws__trace *t, unsigned pid)
{
    if (g.state == FILE_UNOPENED) {
        g.file = fopen(t->path, "w");
        if (g.file == NULL) {
            fprintf(stderr,
                    "worksteal: WS_TRACE=%s: cannot open the file (%s); no trace is written\n",
                    t->path, strerror(errno));
            g.state = FILE_FAILED;
            return false;
        }
        g.state = FILE_OPEN;
        g.owner = getpid();
        fputs("[\n", g.file);
    }
    if (g.state == FILE_CLOSED && !g.late_reported) {
        g.late_reported = true;
        fprintf(stderr,
                "worksteal: WS_TRACE: pool %u was destroyed after the trace was closed at exit; "
                "its events are not in the trace\n",
                pid);
    }
    return g.state == FILE_OPEN;
}

/* Writes pool's metadata and events; returns the number of events dropped by its rings. */
static uint64_t write_pool(ws_pool *pool, unsigned pid)
{
    ws__trace *t = pool->trace;
    uint64_t cap = t->mask + 1, dropped = 0, recorded = 0;

    put_head("process_name", NULL, 'M', pid, 0);
    fprintf(g.file, ",\"args\":{\"name\":\"pool %u\"}}", pid);
    put_head("process_sort_index", NULL, 'M', pid, 0);
    fprintf(g.file, ",\"args\":{\"sort_index\":%u}}", pid);
    unsigned total = pool->nworkers + pool->nspares;
    for (unsigned i = 0; i < total && i < t->nrings && pool->workers != NULL; i++) {
        ws__worker *w = pool->workers[i];
        const trace_ring *r = &t->rings[i];
        /* Workers always appear; spares only if they ever ran (started, or left events). */
        if (w == NULL || (w->spare && !w->started && r->recorded == 0))
            continue;
        put_metadata(pid, w, r, cap);
        uint64_t first = r->recorded > cap ? r->recorded - cap : 0;
        for (uint64_t k = first; k < r->recorded; k++)
            put_event(pid, w->id, &r->events[k & t->mask]);
        put_cpus(pid, w->id, r);
        dropped += first;
        recorded += r->recorded;
    }
    if (dropped > 0) {
        put_head("process_labels", NULL, 'M', pid, 0);
        fprintf(g.file,
                ",\"args\":{\"labels\":\"%" PRIu64 " of %" PRIu64
                " events dropped (rings of %" PRIu64 ")\"}}",
                dropped, recorded, cap);
    }
    if (dropped > 0 && !g.drops_reported) {
        g.drops_reported = true;
        fprintf(stderr,
                "worksteal: WS_TRACE: pool %u lost its %" PRIu64 " oldest of %" PRIu64
                " events (a ring holds %" PRIu64
                " per worker; set WS_TRACE_EVENTS for more); further losses are noted in the "
                "trace only\n",
                pid, dropped, recorded, cap);
    }
    return dropped;
}

void ws__trace_pool_finish(ws_pool *pool)
{
    ws__trace *t = pool->trace;
    if (t == NULL)
        return;
    unsigned pid = pool->serial != 0 ? pool->serial : t->serial;
    pthread_mutex_lock(&trace_lock);
    if (file_ready(t, pid)) {
        write_pool(pool, pid);
        /* Each pool's events reach the file when the pool goes, so a later crash keeps them. */
        fflush(g.file);
    }
    pthread_mutex_unlock(&trace_lock);
    pool->trace = NULL;
    trace_free(t);
}
