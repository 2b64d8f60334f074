/* test_trace: WS_TRACE, the Chrome trace-event JSON of src/trace.c.
 *
 * usage: test_trace CASE, one ctest entry per case:
 *   json        the strict JSON reader of test_trace_json.h accepts what RFC 8259 allows and
 *               rejects what it does not (so that "the trace parses" means something)
 *   record      hand-made events on a hand-made pool come out exactly: names, times, durations,
 *               function addresses, the steal's victim and arrow, thread and process names; a
 *               second pool that recorded nothing still appears; unset WS_TRACE traces nothing
 *   overflow    a ring of 8 events (WS_TRACE_EVENTS=5, rounded up) keeps the newest 8, counts
 *               the drops in the JSON, and says so once on stderr
 *   env         invalid WS_TRACE_EVENTS values are ignored with one line each on stderr
 *   alloc_fail  every allocation of ws__trace_pool_init failing in turn gives ENOMEM and leaks
 *               nothing (ASan)
 *   pools       real pools: fib on 2 workers, nqueens on 4, an idle pool of 3 and the default pool
 *               (destroyed at exit); the trace is valid and complete: every worker named, every
 *               task run present once, tasks nested properly, steals matching the statistics
 *   pools_overflow  the same with tiny rings: drops are reported and the JSON is still valid
 *   unwritable  WS_TRACE naming a file in a missing directory: one line on stderr naming WS_TRACE
 *               and the file, and the program runs correctly
 * Each traced run happens in a forked child that ends with exit(), so that the atexit handler
 * closing the JSON array runs; the parent then reads and checks the file.
 */
#include "internal.h"
#include "test_sched_util.h"
#include "test_trace_json.h"

#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>

enum {
    MAX_PIDS = 16,
    MAX_TIDS = 64,
};

/* ---------------------------------------------------------------------------------------- */
/* Files and children                                                                        */
/* ---------------------------------------------------------------------------------------- */

typedef struct tmp_paths {
    char dir[256];
    char trace[300];
} tmp_paths;

static void make_paths(tmp_paths *t)
{
    const char *base = getenv("TMPDIR");
    snprintf(t->dir, sizeof t->dir, "%s/ws-trace-XXXXXX",
             base != NULL && *base != '\0' ? base : "/tmp");
    ASSERT(mkdtemp(t->dir) != NULL);
    snprintf(t->trace, sizeof t->trace, "%s/trace.json", t->dir);
}

static void remove_paths(const tmp_paths *t)
{
    unlink(t->trace);
    ASSERT_OK(rmdir(t->dir));
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        WS_TEST_FAIL("cannot open %s", path);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    ASSERT(buf != NULL);
    size_t r;
    while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            ASSERT(buf != NULL);
        }
    }
    ASSERT(!ferror(f));
    fclose(f);
    *len = n;
    return buf;
}

static bool has_line_with(const char *text, const char *a, const char *b)
{
    for (const char *line = text; *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t n = end != NULL ? (size_t)(end - line) : strlen(line);
        char tmp[1024];
        snprintf(tmp, sizeof tmp, "%.*s", (int)n, line);
        if (strstr(tmp, a) != NULL && (b == NULL || strstr(tmp, b) != NULL))
            return true;
        line += n + (end != NULL);
    }
    return false;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading a trace back                                                                      */
/* ---------------------------------------------------------------------------------------- */

typedef struct span {
    int64_t ts, dur; /* nanoseconds */
} span;

typedef struct thread_info {
    bool named;
    char name[32];
    int64_t recorded, dropped; /* from thread_name's args */
    size_t tasks, parks, steals;
    size_t cpus; /* "cpu" events (kept apart from the ring) */
    span *x;     /* every "X" event, for the nesting check */
    size_t nx, capx;
} thread_info;

typedef struct pool_info {
    bool named;
    char name[32];
    char labels[160];
    size_t tasks, parks, steals;
    thread_info th[MAX_TIDS];
} pool_info;

typedef struct flow_end {
    int64_t id;
    int pid, tid;
} flow_end;

typedef struct trace_info {
    pool_info pool[MAX_PIDS];
    size_t events;
} trace_info;

/* A JSON number that is a whole number (no fraction, no exponent). */
static int64_t whole(const jval *v, const char *what)
{
    if (v == NULL || v->type != J_NUMBER || strpbrk(v->text, ".eE") != NULL)
        WS_TEST_FAIL("%s: missing or not a whole number", what);
    return strtoll(v->text, NULL, 10);
}

/* A time in microseconds (three decimals at most) as nanoseconds, checked non-negative. */
static int64_t micros(const jval *v, const char *what)
{
    if (v == NULL || v->type != J_NUMBER)
        WS_TEST_FAIL("%s: missing or not a number", what);
    if (v->number < 0)
        WS_TEST_FAIL("%s is negative: %s", what, v->text);
    const char *dot = strchr(v->text, '.');
    if (dot != NULL && strlen(dot + 1) > 3)
        WS_TEST_FAIL("%s has more than nanosecond precision: %s", what, v->text);
    return llround(v->number * 1000.0);
}

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1; /* the enclosing one first */
    return 0;
}

static int cmp_flow(const void *a, const void *b)
{
    const flow_end *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The "X" events of one thread must nest (a slice ends before its parent ends), or viewers
 * drop them. */
static void check_nesting(int pid, int tid, thread_info *t)
{
    if (t->nx == 0)
        return; /* qsort must not be given NULL, even for nothing */
    qsort(t->x, t->nx, sizeof *t->x, cmp_span);
    int64_t stack[256];
    int depth = 0;
    for (size_t i = 0; i < t->nx; i++) {
        int64_t start = t->x[i].ts, end = t->x[i].ts + t->x[i].dur;
        while (depth > 0 && stack[depth - 1] <= start)
            depth--;
        if (depth > 0 && end > stack[depth - 1])
            WS_TEST_FAIL("pool %d worker %d: slice [%" PRId64 ", %" PRId64
                         "] ns overlaps the end of its parent (%" PRId64 ")",
                         pid, tid, start, end, stack[depth - 1]);
        ASSERT(depth < 256);
        stack[depth++] = end;
    }
}

static void add_span(thread_info *t, int64_t ts, int64_t dur)
{
    if (t->nx == t->capx) {
        t->capx = t->capx ? t->capx * 2 : 64;
        t->x = realloc(t->x, t->capx * sizeof *t->x);
        ASSERT(t->x != NULL);
    }
    t->x[t->nx++] = (span){ts, dur};
}

static void free_info(trace_info *info)
{
    for (int p = 0; p < MAX_PIDS; p++)
        for (int t = 0; t < MAX_TIDS; t++)
            free(info->pool[p].th[t].x);
}

/* Reads the trace at path, checks everything that must hold of any trace, and summarizes it. */
static void read_trace(const char *path, trace_info *info)
{
    memset(info, 0, sizeof *info);
    size_t len;
    char *text = read_file(path, &len);
    jval root;
    char err[200];
    if (!json_parse(text, len, &root, err, sizeof err))
        WS_TEST_FAIL("%s is not valid JSON: %s", path, err);
    ASSERT(len >= 2 && text[len - 1] == '\n'); /* the array is closed, then a newline */
    free(text);
    ASSERT_EQ(root.type, J_ARRAY);
    info->events = root.n;

    size_t cap_flows = root.n + 1, nstart = 0, nfinish = 0;
    flow_end *starts = calloc(cap_flows, sizeof *starts);
    flow_end *finishes = calloc(cap_flows, sizeof *finishes);
    ASSERT(starts != NULL && finishes != NULL);
    typedef struct steal_rec {
        int pid, thief, victim;
    } steal_rec;
    steal_rec *steals = calloc(cap_flows, sizeof *steals);
    ASSERT(steals != NULL);
    size_t nsteals = 0;

    for (size_t i = 0; i < root.n; i++) {
        const jval *e = &root.items[i];
        ASSERT_EQ(e->type, J_OBJECT);
        const char *ph = json_get_str(e, "ph");
        const char *name = json_get_str(e, "name");
        if (ph == NULL || strlen(ph) != 1 || name == NULL)
            WS_TEST_FAIL("event %zu lacks a one-letter ph or a name", i);
        int64_t pid = whole(json_get(e, "pid"), "pid");
        int64_t tid = whole(json_get(e, "tid"), "tid");
        if (pid < 1 || pid >= MAX_PIDS || tid < 0 || tid >= MAX_TIDS)
            WS_TEST_FAIL("event %zu: pid %" PRId64 " or tid %" PRId64 " out of range", i, pid, tid);
        pool_info *p = &info->pool[pid];
        thread_info *t = &p->th[tid];
        const jval *args = json_get(e, "args");
        switch (ph[0]) {
        case 'M': {
            ASSERT(args != NULL && args->type == J_OBJECT);
            if (strcmp(name, "process_name") == 0) {
                const char *n = json_get_str(args, "name");
                ASSERT(n != NULL && !p->named);
                p->named = true;
                snprintf(p->name, sizeof p->name, "%s", n);
            } else if (strcmp(name, "thread_name") == 0) {
                const char *n = json_get_str(args, "name");
                ASSERT(n != NULL);
                if (t->named)
                    WS_TEST_FAIL("pool %" PRId64 " thread %" PRId64 " named twice", pid, tid);
                t->named = true;
                snprintf(t->name, sizeof t->name, "%s", n);
                t->recorded = whole(json_get(args, "recorded"), "recorded");
                t->dropped = whole(json_get(args, "dropped"), "dropped");
                ASSERT(t->dropped >= 0 && t->dropped <= t->recorded);
            } else if (strcmp(name, "process_labels") == 0) {
                const char *n = json_get_str(args, "labels");
                ASSERT(n != NULL);
                snprintf(p->labels, sizeof p->labels, "%s", n);
            } else if (strcmp(name, "process_sort_index") != 0 &&
                       strcmp(name, "thread_sort_index") != 0) {
                WS_TEST_FAIL("unknown metadata event %s", name);
            }
            break;
        }
        case 'X': {
            int64_t ts = micros(json_get(e, "ts"), "ts");
            int64_t dur = micros(json_get(e, "dur"), "dur");
            const char *cat = json_get_str(e, "cat");
            ASSERT(cat != NULL);
            if (strcmp(cat, "idle") == 0) {
                ASSERT(strcmp(name, "park") == 0);
                t->parks++;
                p->parks++;
            } else {
                ASSERT(strcmp(cat, "task") == 0);
                const char *fn = json_get_str(args, "fn");
                if (fn == NULL || strncmp(fn, "0x", 2) != 0)
                    WS_TEST_FAIL("task event %zu without a function address", i);
                t->tasks++;
                p->tasks++;
            }
            add_span(t, ts, dur);
            break;
        }
        case 'i': {
            const char *scope = json_get_str(e, "s");
            ASSERT(scope != NULL && strcmp(scope, "t") == 0);
            micros(json_get(e, "ts"), "ts");
            if (strcmp(name, "cpu") == 0) { /* where the worker runs from then on */
                ASSERT(whole(json_get(args, "cpu"), "cpu") >= 0);
                ASSERT(whole(json_get(args, "node"), "node") >= -1);
                t->cpus++;
                break;
            }
            ASSERT(strcmp(name, "steal") == 0);
            micros(json_get(e, "ts"), "ts");
            int64_t victim = whole(json_get(args, "victim"), "victim");
            ASSERT(victim >= 0 && victim < MAX_TIDS);
            steals[nsteals++] = (steal_rec){(int)pid, (int)tid, (int)victim};
            t->steals++;
            p->steals++;
            break;
        }
        case 's':
        case 'f': {
            micros(json_get(e, "ts"), "ts");
            flow_end f = {whole(json_get(e, "id"), "id"), (int)pid, (int)tid};
            if (ph[0] == 's')
                starts[nstart++] = f;
            else
                finishes[nfinish++] = f;
            break;
        }
        default:
            WS_TEST_FAIL("unexpected event phase %s", ph);
        }
    }
    json_free(&root);

    /* Steals name a worker of their pool other than the thief. */
    for (size_t i = 0; i < nsteals; i++) {
        steal_rec *s = &steals[i];
        if (!info->pool[s->pid].th[s->victim].named || s->victim == s->thief)
            WS_TEST_FAIL("pool %d: worker %d stole from %d, not another worker of the pool", s->pid,
                         s->thief, s->victim);
    }
    /* Each steal arrow has one start and one end, in the same pool, with a unique id. */
    ASSERT_EQ(nstart, nfinish);
    ASSERT_EQ(nstart, nsteals);
    qsort(starts, nstart, sizeof *starts, cmp_flow);
    qsort(finishes, nfinish, sizeof *finishes, cmp_flow);
    for (size_t i = 0; i < nstart; i++) {
        ASSERT_EQ(starts[i].id, finishes[i].id);
        ASSERT_EQ(starts[i].pid, finishes[i].pid);
        ASSERT(i == 0 || starts[i].id != starts[i - 1].id);
    }
    free(starts);
    free(finishes);
    free(steals);

    for (int pid = 1; pid < MAX_PIDS; pid++) {
        pool_info *p = &info->pool[pid];
        for (int tid = 0; tid < MAX_TIDS; tid++) {
            thread_info *t = &p->th[tid];
            size_t in_ring = t->tasks + t->parks + t->steals;
            if (in_ring > 0 && !t->named)
                WS_TEST_FAIL("pool %d thread %d has events but no thread_name", pid, tid);
            /* A worker that ended a task or a park logged its CPU at least once. */
            if (t->tasks + t->parks > 0)
                ASSERT_GE(t->cpus, 1);
            if (t->named) {
                ASSERT(p->named);
                /* Every event a ring kept is in the file. */
                ASSERT_EQ(in_ring, t->recorded - t->dropped);
            }
            check_nesting(pid, tid, t);
        }
    }
}

/* ---------------------------------------------------------------------------------------- */
/* json                                                                                      */
/* ---------------------------------------------------------------------------------------- */

static void case_json(void)
{
    static const char *const good[] = {
        "[]",
        " [ ] ",
        "{}",
        "0",
        "-0",
        "1.5e-3",
        "-12.25E+2",
        "\"\"",
        "true",
        "null",
        "[1,2,{\"a\":[false,null,\"x\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\"]}]",
        "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
        "{\"a\":1,\"b\":{\"a\":2}}\n",
    };
    static const char *const bad[] = {
        "",
        "[",
        "]",
        "[1,]",
        "[,1]",
        "{\"a\":1,}",
        "{'a':1}",
        "{a:1}",
        "[01]",
        "[1.]",
        "[.5]",
        "[1e]",
        "[+1]",
        "[NaN]",
        "[tru]",
        "[True]",
        "\"\\x\"",
        "\"\\u12\"",
        "\"\\ud800\"",
        "\"\\udc00x\"",
        "\"a\tb\"",
        "\"abc",
        "[1] [2]",
        "[1] x",
        "{\"a\" 1}",
        "{\"a\":1 \"b\":2}",
        "{\"a\":1,\"a\":2}",
        "\"\xc0\xaf\"",
        "\"\xed\xa0\x80\"",
        "\"\x80\"",
        "\"\xe2\x82\"",
        "[1 2]",
        "[\"a\"\"b\"]",
        "[-]",
        "[--1]",
        "[1.2.3]",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        jval v;
        char err[200];
        if (!json_parse(good[i], strlen(good[i]), &v, err, sizeof err))
            WS_TEST_FAIL("valid JSON rejected: %s (%s)", good[i], err);
        json_free(&v);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        jval v;
        char err[200];
        if (json_parse(bad[i], strlen(bad[i]), &v, err, sizeof err))
            WS_TEST_FAIL("invalid JSON accepted: %s", bad[i]);
        ASSERT(err[0] != '\0');
    }
    /* Deep nesting is refused rather than overflowing the stack. */
    char deep[200];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    jval v;
    char err[200];
    ASSERT(!json_parse(deep, strlen(deep), &v, err, sizeof err));
    /* Values come back decoded. */
    const char *doc = "{\"s\":\"a\\u00e9\\n\",\"n\":-2.5,\"l\":[true,null]}";
    ASSERT(json_parse(doc, strlen(doc), &v, err, sizeof err));
    ASSERT(strcmp(json_get_str(&v, "s"), "a\xc3\xa9\n") == 0);
    ASSERT(json_get(&v, "n")->number == -2.5);
    ASSERT_EQ(json_get(&v, "l")->n, 2);
    ASSERT_EQ(json_get(&v, "l")->items[0].type, J_TRUE);
    ASSERT(json_get(&v, "missing") == NULL);
    json_free(&v);
    printf("json: %zu valid and %zu invalid texts judged right\n", sizeof good / sizeof good[0],
           sizeof bad / sizeof bad[0]);
}

/* ---------------------------------------------------------------------------------------- */
/* A hand-made pool, for recording without threads                                           */
/* ---------------------------------------------------------------------------------------- */

typedef struct fake_pool {
    ws_pool pool;
    ws__worker w[3];
    ws__worker *ptr[3];
} fake_pool;

/* Two workers and one spare that never started. Static storage: ws_pool and ws__worker are
 * over-aligned. */
static void fake_init(fake_pool *f, unsigned serial)
{
    memset(f, 0, sizeof *f);
    f->pool.nworkers = 2;
    f->pool.nspares = 1;
    f->pool.workers = f->ptr;
    f->pool.serial = serial;
    for (unsigned i = 0; i < 3; i++) {
        f->ptr[i] = &f->w[i];
        f->w[i].pool = &f->pool;
        f->w[i].id = i;
        f->w[i].spare = i >= 2;
    }
}

static void fn_parent(void *arg)
{
    (void)arg;
}

static void fn_child(void *arg)
{
    (void)arg;
}

static char expected_fn[2][32];

static void child_record(void *arg)
{
    const char *path = arg;
    static fake_pool a, b, off;

    /* Unset and empty WS_TRACE: not traced. */
    unsetenv("WS_TRACE");
    fake_init(&off, 9);
    ASSERT_OK(ws__trace_pool_init(&off.pool));
    ASSERT(off.pool.trace == NULL);
    setenv("WS_TRACE", "", 1);
    ASSERT_OK(ws__trace_pool_init(&off.pool));
    ASSERT(off.pool.trace == NULL);
    ws__trace_pool_finish(&off.pool); /* NULL-safe */

    ASSERT_OK(setenv("WS_TRACE", path, 1));
    unsetenv("WS_TRACE_EVENTS");
    fake_init(&a, 7);
    ASSERT_OK(ws__trace_pool_init(&a.pool));
    ASSERT(a.pool.trace != NULL);
    uint64_t t = ws__now_ns();
    /* Worker 0 runs a parent task with a child inside it; worker 1 steals from worker 0, runs
     * the stolen task, then parks. Tasks are recorded when they end, children first. */
    ws__trace_task(&a.w[0], "join", fn_child, t + 1000, t + 2000);
    ws__trace_steal(&a.w[1], &a.w[0], t + 1500);
    ws__trace_task(&a.w[0], "spawn", fn_parent, t + 500, t + 3500);
    ws__trace_task(&a.w[1], "stolen", fn_child, t + 1600, t + 4000);
    ws__trace_park(&a.w[1], t + 4000, t + 9000);
    ws__trace_pool_finish(&a.pool);
    ASSERT(a.pool.trace == NULL);

    fake_init(&b, 8); /* records nothing */
    ASSERT_OK(ws__trace_pool_init(&b.pool));
    ws__trace_pool_finish(&b.pool);
    exit(0);
}

static const span *only_span(const thread_info *t, int64_t dur)
{
    const span *found = NULL;
    for (size_t i = 0; i < t->nx; i++) {
        if (t->x[i].dur == dur) {
            ASSERT(found == NULL);
            found = &t->x[i];
        }
    }
    if (found == NULL)
        WS_TEST_FAIL("no slice of %" PRId64 " ns", dur);
    return found;
}

static void case_record(void)
{
    tmp_paths tp;
    make_paths(&tp);
    snprintf(expected_fn[0], sizeof expected_fn[0], "0x%" PRIxPTR, (uintptr_t)fn_parent);
    snprintf(expected_fn[1], sizeof expected_fn[1], "0x%" PRIxPTR, (uintptr_t)fn_child);
    sched_child c;
    sched_run_child(&c, child_record, tp.trace);
    sched_expect_clean_exit(&c, "record");
    ASSERT_EQ(c.err[0], '\0');

    trace_info info;
    read_trace(tp.trace, &info);
    pool_info *p = &info.pool[7];
    ASSERT(p->named && strcmp(p->name, "pool 7") == 0);
    ASSERT(strcmp(p->th[0].name, "worker 0") == 0);
    ASSERT(strcmp(p->th[1].name, "worker 1") == 0);
    ASSERT(!p->th[2].named); /* the spare never started and recorded nothing */
    ASSERT_EQ(p->th[0].recorded, 2);
    ASSERT_EQ(p->th[1].recorded, 3);
    ASSERT_EQ(p->th[0].dropped + p->th[1].dropped, 0);
    ASSERT_EQ(p->tasks, 3);
    ASSERT_EQ(p->parks, 1);
    ASSERT_EQ(p->steals, 1);
    ASSERT_EQ(p->labels[0], '\0');
    /* Durations are exact, and so are the differences between times. */
    const span *parent = only_span(&p->th[0], 3000);
    const span *child = only_span(&p->th[0], 1000);
    const span *stolen = only_span(&p->th[1], 2400);
    const span *park = only_span(&p->th[1], 5000);
    ASSERT_EQ(child->ts - parent->ts, 500);
    ASSERT_EQ(stolen->ts - parent->ts, 1100);
    ASSERT_EQ(park->ts - parent->ts, 3500);
    /* The second pool is there with its two workers and nothing else. */
    ASSERT(info.pool[8].named && info.pool[8].th[0].named && info.pool[8].th[1].named);
    ASSERT_EQ(info.pool[8].tasks + info.pool[8].parks + info.pool[8].steals, 0);
    ASSERT(!info.pool[9].named);

    /* Names, categories and arguments, as text. */
    size_t len;
    char *text = read_file(tp.trace, &len);
    ASSERT(strncmp(text, "[\n", 2) == 0);
    ASSERT(strstr(text, "\"name\":\"spawn\",\"cat\":\"task\",\"ph\":\"X\",\"pid\":7,\"tid\":0") !=
           NULL);
    ASSERT(strstr(text, "\"name\":\"stolen\",\"cat\":\"task\",\"ph\":\"X\",\"pid\":7,\"tid\":1") !=
           NULL);
    ASSERT(strstr(text, "\"name\":\"park\",\"cat\":\"idle\",\"ph\":\"X\",\"pid\":7,\"tid\":1") !=
           NULL);
    ASSERT(strstr(text, "\"args\":{\"victim\":0}") != NULL);
    ASSERT(strstr(text, "\"ph\":\"s\",\"pid\":7,\"tid\":0") != NULL); /* arrow from the victim */
    ASSERT(strstr(text, "\"ph\":\"f\",\"pid\":7,\"tid\":1") != NULL); /* to the thief */
    char want[64];
    for (int i = 0; i < 2; i++) {
        snprintf(want, sizeof want, "{\"fn\":\"%s\"}", expected_fn[i]);
        ASSERT(strstr(text, want) != NULL);
    }
    free(text);
    free_info(&info);
    remove_paths(&tp);
    printf("record: exact events for a hand-made pool, and an empty pool\n");
}

/* ---------------------------------------------------------------------------------------- */
/* overflow                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static void child_overflow(void *arg)
{
    static fake_pool a, b;
    ASSERT_OK(setenv("WS_TRACE", (const char *)arg, 1));
    ASSERT_OK(setenv("WS_TRACE_EVENTS", "5", 1)); /* rounded up to 8 */
    fake_init(&a, 1);
    ASSERT_OK(ws__trace_pool_init(&a.pool));
    uint64_t t = ws__now_ns();
    /* 100 back-to-back tasks on worker 0, the ith lasting i microseconds; 3 on worker 1. */
    uint64_t at = t;
    for (uint64_t i = 0; i < 100; i++) {
        ws__trace_task(&a.w[0], "join", fn_child, at, at + i * 1000);
        at += i * 1000;
    }
    for (uint64_t i = 0; i < 3; i++)
        ws__trace_task(&a.w[1], "join", fn_child, t + i * 10, t + i * 10 + 5);
    ws__trace_pool_finish(&a.pool);

    /* A second pool overflows too: reported in its JSON, not again on stderr. */
    fake_init(&b, 2);
    ASSERT_OK(ws__trace_pool_init(&b.pool));
    for (uint64_t i = 0; i < 20; i++)
        ws__trace_steal(&b.w[1], &b.w[0], t + i);
    ws__trace_pool_finish(&b.pool);
    exit(0);
}

static void case_overflow(void)
{
    tmp_paths tp;
    make_paths(&tp);
    sched_child c;
    sched_run_child(&c, child_overflow, tp.trace);
    sched_expect_clean_exit(&c, "overflow");
    printf("child's stderr:\n%s", c.err);
    ASSERT_EQ(sched_count_lines(c.err), 1);
    ASSERT(has_line_with(c.err, "WS_TRACE", "92"));

    trace_info info;
    read_trace(tp.trace, &info);
    thread_info *w0 = &info.pool[1].th[0], *w1 = &info.pool[1].th[1];
    ASSERT_EQ(w0->recorded, 100);
    ASSERT_EQ(w0->dropped, 92);
    ASSERT_EQ(w0->tasks, 8);
    /* The newest eight survive: durations 92..99 us. */
    for (int64_t d = 92; d < 100; d++)
        only_span(w0, d * 1000);
    ASSERT_EQ(w1->recorded, 3);
    ASSERT_EQ(w1->dropped, 0);
    ASSERT_EQ(w1->tasks, 3);
    ASSERT(strstr(info.pool[1].labels, "92") != NULL);
    thread_info *b1 = &info.pool[2].th[1];
    ASSERT_EQ(b1->recorded, 20);
    ASSERT_EQ(b1->dropped, 12);
    ASSERT_EQ(b1->steals, 8);
    ASSERT(strstr(info.pool[2].labels, "12") != NULL);
    free_info(&info);
    remove_paths(&tp);
    printf("overflow: the newest events kept, drops reported\n");
}

/* ---------------------------------------------------------------------------------------- */
/* env                                                                                       */
/* ---------------------------------------------------------------------------------------- */

/* Records n task events on worker 0 of a pool traced with WS_TRACE_EVENTS=value. */
static void record_n(const char *value, unsigned serial, uint64_t n)
{
    static fake_pool f;
    if (value != NULL)
        ASSERT_OK(setenv("WS_TRACE_EVENTS", value, 1));
    else
        unsetenv("WS_TRACE_EVENTS");
    fake_init(&f, serial);
    ASSERT_OK(ws__trace_pool_init(&f.pool));
    uint64_t t = ws__now_ns();
    for (uint64_t i = 0; i < n; i++)
        ws__trace_task(&f.w[0], "join", fn_child, t + i, t + i);
    ws__trace_pool_finish(&f.pool);
}

static const char *const bad_events[] = {"abc", "-3", "0", "12x", "16777217", "99999999999999"};
enum { N_BAD_EVENTS = sizeof bad_events / sizeof bad_events[0] };

static void child_env(void *arg)
{
    ASSERT_OK(setenv("WS_TRACE", (const char *)arg, 1));
    record_n("3", 1, 5);         /* rounded up to 4: one dropped */
    record_n("65536", 2, 65537); /* exactly the default: one dropped */
    record_n(NULL, 3, 65537);    /* the default */
    for (unsigned i = 0; i < N_BAD_EVENTS; i++)
        record_n(bad_events[i], 4 + i, 65537); /* ignored: the default */
    exit(0);
}

static void case_env(void)
{
    tmp_paths tp;
    make_paths(&tp);
    sched_child c;
    sched_run_child(&c, child_env, tp.trace);
    sched_expect_clean_exit(&c, "env");
    printf("child's stderr:\n%s", c.err);
    for (unsigned i = 0; i < N_BAD_EVENTS; i++) {
        char value[64];
        snprintf(value, sizeof value, "\"%s\"", bad_events[i]);
        ASSERT(has_line_with(c.err, "WS_TRACE_EVENTS", value));
    }
    /* One line per bad value, plus the single line about drops. */
    ASSERT_EQ(sched_count_lines(c.err), N_BAD_EVENTS + 1);
    trace_info info;
    read_trace(tp.trace, &info);
    ASSERT_EQ(info.pool[1].th[0].dropped, 1);
    ASSERT_EQ(info.pool[1].th[0].tasks, 4);
    for (unsigned pid = 2; pid < 4 + N_BAD_EVENTS; pid++) {
        ASSERT_EQ(info.pool[pid].th[0].recorded, 65537);
        ASSERT_EQ(info.pool[pid].th[0].dropped, 1);
    }
    free_info(&info);
    remove_paths(&tp);
    printf("env: invalid WS_TRACE_EVENTS ignored with a message\n");
}

/* ---------------------------------------------------------------------------------------- */
/* alloc_fail                                                                                */
/* ---------------------------------------------------------------------------------------- */

static void child_alloc_fail(void *arg)
{
    static fake_pool f;
    ASSERT_OK(setenv("WS_TRACE", (const char *)arg, 1));
    long k;
    for (k = 1; k < 100; k++) {
        fake_init(&f, 1);
        ws__test_fail_alloc_after(k);
        int err = ws__trace_pool_init(&f.pool);
        ws__test_fail_alloc_after(0);
        if (err == 0)
            break;
        ASSERT_EQ(err, ENOMEM);
        ASSERT(f.pool.trace == NULL);
    }
    ASSERT(f.pool.trace != NULL);
    printf("succeeded once allocation %ld was allowed to fail\n", k);
    ASSERT_GT(k, 1); /* at least one failure was injected and handled */
    ws__trace_task(&f.w[0], "join", fn_child, ws__now_ns(), ws__now_ns());
    ws__trace_pool_finish(&f.pool);
    exit(0);
}

static void case_alloc_fail(void)
{
    tmp_paths tp;
    make_paths(&tp);
    sched_child c;
    sched_run_child(&c, child_alloc_fail, tp.trace);
    printf("%s", c.out);
    sched_expect_clean_exit(&c, "alloc_fail"); /* LeakSanitizer fails the exit on a leak */
    trace_info info;
    read_trace(tp.trace, &info);
    ASSERT_EQ(info.pool[1].tasks, 1);
    free_info(&info);
    remove_paths(&tp);
}

/* ---------------------------------------------------------------------------------------- */
/* Real pools                                                                                */
/* ---------------------------------------------------------------------------------------- */

/* What the child tells the parent, in shared memory. */
typedef struct shared {
    _Atomic uint64_t ran[MAX_PIDS][MAX_TIDS]; /* user functions run, per pool and worker */
    unsigned workers[MAX_PIDS];               /* P of each pool, by serial */
    uint64_t expected_tasks[MAX_PIDS];        /* traced task runs */
    uint64_t steals[MAX_PIDS];                /* ws_pool_stats steals */
    bool used[MAX_PIDS];
    bool probed[MAX_PIDS]; /* a steal was forced (run_probed) */
} shared;

static shared *sh;
static unsigned current; /* the serial of the pool running now */

static void count_run(void)
{
    int id = ws_worker_id();
    if (id < 0)
        return; /* the root of a computation called from main */
    ASSERT(id < MAX_TIDS);
    /* relaxed: a count read by the parent after the child exited. */
    atomic_fetch_add_explicit(&sh->ran[current][id], 1, memory_order_relaxed);
}

typedef struct fib_arg {
    int n;
    uint64_t result;
} fib_arg;

static void fib(void *p)
{
    fib_arg *f = p;
    count_run();
    if (f->n < 2) {
        f->result = (uint64_t)f->n;
        return;
    }
    fib_arg a = {f->n - 1, 0}, b = {f->n - 2, 0};
    ws_join(fib, &a, fib, &b);
    f->result = a.result + b.result;
}

typedef struct queens {
    int n, rows;
    signed char col[16];
    uint64_t count;
} queens;

static _Atomic uint64_t spawns;

static void nqueens(void *p)
{
    queens *q = p;
    count_run();
    if (q->rows == q->n) {
        q->count = 1;
        return;
    }
    ws_task tasks[16];
    queens kids[16];
    int k = 0;
    for (int c = 0; c < q->n; c++) {
        bool ok = true;
        for (int r = 0; r < q->rows && ok; r++) {
            int d = q->col[r] - c;
            ok = d != 0 && d != q->rows - r && d != r - q->rows;
        }
        if (!ok)
            continue;
        kids[k] = *q;
        kids[k].col[kids[k].rows++] = (signed char)c;
        kids[k].count = 0;
        /* relaxed: a count read after ws_pool_run returned. */
        atomic_fetch_add_explicit(&spawns, 1, memory_order_relaxed);
        ws_spawn(&tasks[k], nqueens, &kids[k]);
        k++;
    }
    q->count = 0;
    while (k-- > 0) {
        ws_sync(&tasks[k]);
        q->count += kids[k].count;
    }
}

static ws_pool *traced_pool(unsigned workers)
{
    ws_pool *pool = sched_pool(workers);
    ASSERT(pool->trace != NULL);
    ASSERT(pool->serial > 0 && pool->serial < MAX_PIDS);
    current = pool->serial;
    sh->used[current] = true;
    sh->workers[current] = workers;
    return pool;
}

static void finish_pool(ws_pool *pool)
{
    ws_stats st;
    ws_pool_stats(pool, &st);
    sh->steals[pool->serial] = st.steals;
    ws_pool_destroy(pool);
}

/* Enough work for the workers to steal from each other: fib(22) and 10-queens (35538 spawns);
 * smaller under the sanitizers. */
static int fib_n(void)
{
    uint64_t n = test_scaled(22, 16);
    return n > 22 ? 22 : (int)n;
}

static int queens_n(void)
{
    return test_scaled(10, 8) >= 10 ? 10 : 8;
}

static uint64_t queens_answer(int n)
{
    return n == 10 ? 724 : 92;
}

/* A root task that first makes sure a steal happens, then runs body(arg) inline: it spawns a
 * child and, instead of syncing, waits until the child has run, which only a thief can do. So
 * every pool it runs on records at least one steal, with no timing assumption (a lost wake-up
 * would hang here until the timeout). */
typedef struct probe {
    ws_fn body;
    void *arg;
    _Atomic int stolen_by; /* -1 until the child ran, then its worker id */
    int root;              /* the root's worker id */
} probe;

static void probe_child(void *p)
{
    probe *pr = p;
    count_run();
    /* release: the parent reads it with acquire; nothing else is published. */
    atomic_store_explicit(&pr->stolen_by, ws_worker_id(), memory_order_release);
}

static void probe_root(void *p)
{
    probe *pr = p;
    count_run();
    pr->root = ws_worker_id();
    ws_task t;
    ws_spawn(&t, probe_child, pr);
    /* acquire: pairs with the release store in probe_child. */
    while (atomic_load_explicit(&pr->stolen_by, memory_order_acquire) < 0)
        sched_yield();
    ws_sync(&t);
    pr->body(pr->arg);
}

/* Runs body(arg) on pool after a forced steal; checks that the steal happened. */
static void run_probed(ws_pool *pool, ws_fn body, void *arg)
{
    probe pr = {body, arg, -1, -1};
    sh->probed[pool->serial] = true;
    ASSERT_OK(ws_pool_run(pool, probe_root, &pr));
    int thief = atomic_load_explicit(&pr.stolen_by, memory_order_relaxed);
    ASSERT(thief >= 0 && thief != pr.root);
}

/* fib on 2 workers, nqueens on 4, an idle pool of 3, then fib from main on the default pool
 * (2 workers), which is destroyed at exit. */
static void run_pools(void)
{
    int n = fib_n();
    ws_pool *pool = traced_pool(2);
    fib_arg f = {n, 0};
    run_probed(pool, fib, &f);
    ASSERT_UEQ(f.result, sched_fib_serial(n));
    /* One traced task per half of each join, the probe's child and the root. */
    sh->expected_tasks[pool->serial] = 2 * sched_fib_joins(n) + 2;
    finish_pool(pool);

    pool = traced_pool(4);
    queens q = {queens_n(), 0, {0}, 0};
    run_probed(pool, nqueens, &q);
    ASSERT_UEQ(q.count, queens_answer(q.n));
    /* One per spawned child, the probe's child and the root. */
    sh->expected_tasks[pool->serial] = atomic_load_explicit(&spawns, memory_order_relaxed) + 2;
    finish_pool(pool);

    pool = traced_pool(3);
    sh->expected_tasks[pool->serial] = 0;
    finish_pool(pool);

    ASSERT_OK(setenv("WS_NUM_WORKERS", "2", 1));
    ws_pool *def = ws_default_pool();
    ASSERT(def->trace != NULL);
    current = def->serial;
    sh->used[current] = true;
    sh->workers[current] = 2;
    fib_arg g = {12, 0};
    fib(&g); /* from main: the first join runs on the default pool through ws_pool_run */
    ASSERT_UEQ(g.result, sched_fib_serial(12));
    /* The first join's two halves run inside join.c's root task: as for a root fib task. */
    sh->expected_tasks[current] = 2 * sched_fib_joins(12) + 1;
    ws_stats st;
    ws_pool_stats(def, &st); /* the pool is idle now: no more steals */
    sh->steals[current] = st.steals;
}

static void child_pools(void *arg)
{
    ASSERT_OK(setenv("WS_TRACE", (const char *)arg, 1));
    /* Room for every event (fib(22) alone makes 57314), so that the trace must be complete. */
    ASSERT_OK(setenv("WS_TRACE_EVENTS", "131072", 1));
    run_pools();
    exit(0);
}

static shared *map_shared(void)
{
    void *m = mmap(NULL, sizeof(shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT(m != MAP_FAILED);
    memset(m, 0, sizeof(shared));
    return m;
}

static void case_pools(void)
{
    tmp_paths tp;
    make_paths(&tp);
    sh = map_shared();
    sched_child c;
    sched_run_child(&c, child_pools, tp.trace);
    sched_expect_clean_exit(&c, "pools");
    ASSERT_EQ(c.err[0], '\0'); /* no drops, no complaints */
    trace_info info;
    read_trace(tp.trace, &info);
    printf("pools: %zu events\n", info.events);
    unsigned npools = 0;
    for (unsigned pid = 1; pid < MAX_PIDS; pid++) {
        pool_info *p = &info.pool[pid];
        if (!sh->used[pid]) {
            ASSERT(!p->named);
            continue;
        }
        npools++;
        char want[32];
        snprintf(want, sizeof want, "pool %u", pid);
        ASSERT(p->named && strcmp(p->name, want) == 0);
        printf("  pool %u: %u workers, %zu tasks, %zu steals, %zu parks\n", pid, sh->workers[pid],
               p->tasks, p->steals, p->parks);
        for (unsigned id = 0; id < sh->workers[pid]; id++) {
            thread_info *t = &p->th[id];
            snprintf(want, sizeof want, "worker %u", id);
            if (!t->named || strcmp(t->name, want) != 0)
                WS_TEST_FAIL("pool %u: no thread named \"%s\"", pid, want);
            ASSERT_EQ(t->dropped, 0);
            uint64_t ran = atomic_load_explicit(&sh->ran[pid][id], memory_order_relaxed);
            if (ran > 0 && t->tasks == 0)
                WS_TEST_FAIL("pool %u worker %u ran %" PRIu64 " functions but has no task event",
                             pid, id, ran);
        }
        /* Exactly one event per task run, and one steal event per steal counted; the probe
         * forced one steal in each pool that ran fib or nqueens. */
        ASSERT_EQ(p->tasks, sh->expected_tasks[pid]);
        ASSERT_EQ(p->steals, sh->steals[pid]);
        if (sh->probed[pid]) {
            ASSERT_GE(p->steals, 1);
            unsigned busy = 0;
            for (unsigned id = 0; id < sh->workers[pid]; id++)
                busy += atomic_load_explicit(&sh->ran[pid][id], memory_order_relaxed) > 0;
            ASSERT_GE(busy, 2);
        }
    }
    ASSERT_EQ(npools, 4);
    free_info(&info);
    munmap(sh, sizeof(shared));
    remove_paths(&tp);
}

static void child_pools_overflow(void *arg)
{
    ASSERT_OK(setenv("WS_TRACE", (const char *)arg, 1));
    ASSERT_OK(setenv("WS_TRACE_EVENTS", "64", 1));
    run_pools();
    exit(0);
}

static void case_pools_overflow(void)
{
    tmp_paths tp;
    make_paths(&tp);
    sh = map_shared();
    sched_child c;
    sched_run_child(&c, child_pools_overflow, tp.trace);
    sched_expect_clean_exit(&c, "pools_overflow");
    printf("child's stderr:\n%s", c.err);
    ASSERT_EQ(sched_count_lines(c.err), 1);
    ASSERT(has_line_with(c.err, "WS_TRACE", "WS_TRACE_EVENTS"));
    trace_info info;
    read_trace(tp.trace, &info); /* valid, nested, every kept event present */
    int64_t dropped = 0;
    for (unsigned pid = 1; pid < MAX_PIDS; pid++) {
        int64_t pool_dropped = 0;
        for (unsigned id = 0; id < MAX_TIDS; id++) {
            thread_info *t = &info.pool[pid].th[id];
            ASSERT_LE(t->tasks + t->parks + t->steals, 64);
            pool_dropped += t->dropped;
        }
        if (pool_dropped > 0)
            ASSERT(strstr(info.pool[pid].labels, "dropped") != NULL);
        dropped += pool_dropped;
    }
    printf("pools_overflow: %" PRId64 " events dropped\n", dropped);
    ASSERT_GT(dropped, 0);
    free_info(&info);
    munmap(sh, sizeof(shared));
    remove_paths(&tp);
}

/* ---------------------------------------------------------------------------------------- */
/* unwritable                                                                                */
/* ---------------------------------------------------------------------------------------- */

static void child_unwritable(void *arg)
{
    ASSERT_OK(setenv("WS_TRACE", (const char *)arg, 1));
    for (int round = 0; round < 2; round++) {
        ws_pool *pool = sched_pool(2);
        sched_check_fib_on(pool, fib_n());
        ws_pool_destroy(pool);
        pool = sched_pool(4);
        queens q = {8, 0, {0}, 0};
        ASSERT_OK(ws_pool_run(pool, nqueens, &q));
        ASSERT_UEQ(q.count, 92);
        ws_pool_destroy(pool);
    }
    printf("ran correctly\n");
    exit(0);
}

static void case_unwritable(void)
{
    tmp_paths tp;
    make_paths(&tp);
    char bad[400];
    snprintf(bad, sizeof bad, "%s/missing-dir/trace.json", tp.dir);
    sh = map_shared();
    sched_child c;
    sched_run_child(&c, child_unwritable, bad);
    sched_expect_clean_exit(&c, "unwritable");
    printf("child's stderr:\n%s", c.err);
    ASSERT(strstr(c.out, "ran correctly") != NULL);
    ASSERT_EQ(sched_count_lines(c.err), 1);
    ASSERT(has_line_with(c.err, "WS_TRACE", bad));
    struct stat st;
    ASSERT(stat(bad, &st) != 0);
    munmap(sh, sizeof(shared));
    remove_paths(&tp);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_trace json|record|overflow|env|alloc_fail|pools|"
                        "pools_overflow|unwritable\n");
        return 2;
    }
    static const struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {
        {"json", case_json},
        {"record", case_record},
        {"overflow", case_overflow},
        {"env", case_env},
        {"alloc_fail", case_alloc_fail},
        {"pools", case_pools},
        {"pools_overflow", case_pools_overflow},
        {"unwritable", case_unwritable},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (strcmp(argv[1], cases[i].name) == 0) {
            cases[i].fn();
            printf("ok\n");
            return 0;
        }
    }
    fprintf(stderr, "test_trace: unknown case %s\n", argv[1]);
    return 2;
}
