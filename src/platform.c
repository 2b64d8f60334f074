/* platform.c: the operating-system layer behind platform.h.
 *
 * Linux parks threads on futexes. Elsewhere a small table of mutex/condition-variable buckets,
 * hashed by address, gives the same wait/wake contract.
 */
#include "platform.h"
#include "atomics.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#ifdef __linux__
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#endif

/* ---------------------------------------------------------------------------------------- */
/* Fault injection for tests                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* Countdowns set by tests, 0 meaning off, and the hook. Read at every allocation, so on lines
 * of their own (platform.h, WS_CACHE_LINE). Relaxed: tests arm them before the calls they
 * target, and an exact count across threads is not needed. */
static struct {
    alignas(WS_CACHE_LINE) _Atomic long alloc_countdown;
    _Atomic long thread_countdown;
    _Atomic(ws__test_hook_fn) test_hook;
} faults;

void ws__test_fail_alloc_after(long n)
{
    ws_store_relaxed(&faults.alloc_countdown, n); /* relaxed: see above */
}

void ws__test_fail_thread_after(long n)
{
    ws_store_relaxed(&faults.thread_countdown, n); /* relaxed: see above */
}

_Bool ws__test_set_hook(ws__test_hook_fn fn)
{
    /* release: pairs with the acquire in ws__test_hook_call. */
    ws_store_release(&faults.test_hook, fn);
#ifdef WS_TEST_HOOKS
    return 1;
#else
    return 0;
#endif
}

void ws__test_hook_call(int site)
{
    ws__test_hook_fn fn = ws_load_acquire(&faults.test_hook); /* acquire: see ws__test_set_hook */
    if (fn != NULL)
        fn(site);
}

_Bool ws__test_fail_alloc_pending(void)
{
    return ws_load_relaxed(&faults.alloc_countdown) > 0; /* relaxed: see above */
}

_Bool ws__test_fail_thread_pending(void)
{
    return ws_load_relaxed(&faults.thread_countdown) > 0; /* relaxed: see above */
}

/* True when the armed countdown reaches this call. */
static int should_fail(_Atomic long *countdown)
{
    long n = ws_load_relaxed(countdown); /* relaxed: cheap check when disarmed */
    if (n <= 0)
        return 0;
    return ws_fetch_sub_relaxed(countdown, 1) == 1; /* relaxed: only a count */
}

/* ---------------------------------------------------------------------------------------- */
/* Memory                                                                                    */
/* ---------------------------------------------------------------------------------------- */

void *ws__malloc(size_t size)
{
    return should_fail(&faults.alloc_countdown) ? NULL : malloc(size);
}

void *ws__calloc(size_t n, size_t size)
{
    return should_fail(&faults.alloc_countdown) ? NULL : calloc(n, size);
}

void *ws__aligned_alloc(size_t align, size_t size)
{
    void *p = NULL;
    if (should_fail(&faults.alloc_countdown) || posix_memalign(&p, align, size) != 0)
        return NULL;
    memset(p, 0, size);
    return p;
}

void ws__free(void *p)
{
    free(p);
}

/* ---------------------------------------------------------------------------------------- */
/* Threads                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Sets the affinity in a thread's attributes; 0 or an errno code. */
static int attr_set_cpus(pthread_attr_t *attr, const ws__cpuset *cpus)
{
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    for (unsigned cpu = 0; cpu < WS_CPUSET_MAX && cpu < CPU_SETSIZE; cpu++) {
        if (ws__cpuset_has(cpus, cpu))
            CPU_SET(cpu, &set);
    }
    return pthread_attr_setaffinity_np(attr, sizeof set, &set);
#else
    (void)attr;
    (void)cpus;
    return 0; /* no affinity interface here: threads run unpinned */
#endif
}

int ws__thread_start_on(ws__thread *t, size_t stack_size, const ws__cpuset *cpus,
                        void *(*fn)(void *), void *arg)
{
    if (should_fail(&faults.thread_countdown))
        return EAGAIN;
    pthread_attr_t attr;
    int err = pthread_attr_init(&attr);
    if (err != 0)
        return err;
    if (stack_size != 0)
        err = pthread_attr_setstacksize(&attr, stack_size);
    if (err == 0)
        err = pthread_attr_setguardsize(&attr, WS_STACK_GUARD);
    if (err == 0 && cpus != NULL)
        err = attr_set_cpus(&attr, cpus);
    if (err == 0)
        err = pthread_create(t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    return err;
}

int ws__thread_start(ws__thread *t, size_t stack_size, void *(*fn)(void *), void *arg)
{
    return ws__thread_start_on(t, stack_size, NULL, fn, arg);
}

void ws__thread_set_name(ws__thread t, const char *name)
{
#ifdef __linux__
    char cut[16]; /* the kernel keeps 15 characters; longer names are refused, so cut them */
    snprintf(cut, sizeof cut, "%s", name);
    (void)pthread_setname_np(t, cut);
#else
    (void)t;
    (void)name;
#endif
}

bool ws__thread_stack(uintptr_t *low, size_t *size, size_t *guard)
{
#if defined(__linux__) && defined(__GLIBC__)
    pthread_attr_t attr;
    void *addr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return false;
    /* glibc reports the usable stack without its guard, which lies just below addr. */
    bool ok = pthread_attr_getstack(&attr, &addr, size) == 0 &&
              pthread_attr_getguardsize(&attr, guard) == 0;
    pthread_attr_destroy(&attr);
    *low = (uintptr_t)addr;
    return ok;
#else
    (void)low;
    (void)size;
    (void)guard;
    return false;
#endif
}

/* A soft resource limit in bytes: SIZE_MAX if unlimited (or beyond size_t), 0 where unknown. */
static size_t soft_limit(int resource)
{
    struct rlimit rl;
    if (getrlimit(resource, &rl) != 0)
        return 0;
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= (rlim_t)SIZE_MAX)
        return SIZE_MAX;
    return (size_t)rl.rlim_cur;
}

size_t ws__main_stack_limit(void)
{
    return soft_limit(RLIMIT_STACK);
}

bool ws__address_space_limited(void)
{
    size_t limit = soft_limit(RLIMIT_AS);
    return limit != 0 && limit != SIZE_MAX;
}

void *ws__pages_alloc(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, page + size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (mprotect(p, page, PROT_NONE) != 0) {
        munmap(p, page + size);
        return NULL;
    }
    return p + page;
}

void ws__pages_free(void *p, size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    munmap((char *)p - page, page + size);
}

void ws__process_cpus(ws__cpuset *out)
{
    memset(out, 0, sizeof *out);
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(getpid(), sizeof set, &set) == 0) {
        for (unsigned cpu = 0; cpu < WS_CPUSET_MAX && cpu < CPU_SETSIZE; cpu++) {
            if (CPU_ISSET(cpu, &set))
                ws__cpuset_add(out, cpu);
        }
        return;
    }
#endif
    unsigned n = ws__cpu_count();
    for (unsigned cpu = 0; cpu < n; cpu++)
        ws__cpuset_add(out, cpu);
}

void ws__current_cpu(int *cpu, int *node)
{
#ifdef __linux__
    unsigned c, n;
    if (getcpu(&c, &n) == 0) {
        *cpu = (int)c;
        *node = (int)n;
        return;
    }
#endif
    *cpu = -1;
    *node = -1;
}

void ws__thread_join(ws__thread t)
{
    pthread_join(t, NULL);
}

void ws__thread_yield(void)
{
    sched_yield();
}

unsigned ws__cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1u;
}

/* ---------------------------------------------------------------------------------------- */
/* CPU quota                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* A container limited to 1.5 CPUs on a 64-CPU host still sees 64 CPUs online and in its
 * affinity mask; only its cgroup says how much CPU time it gets. As Go (1.25) and Rust's
 * available_parallelism do, the quota is found by: (1) the process's cgroup path, from
 * /proc/self/cgroup: the v1 line whose controllers include "cpu", else the v2 line "0::";
 * (2) where that hierarchy is mounted, from /proc/self/mountinfo (fstype "cgroup" with the cpu
 * option, or "cgroup2"); (3) the quota of every directory from the cgroup up to the mount, of
 * which the smallest binds, because a parent's limit caps all its children together. */

#ifdef __linux__

/* A CPU limit as quota over period, both positive; quota 0 means none. */
typedef struct cpu_limit {
    unsigned long long quota, period;
} cpu_limit;

/* Opens dir/name for reading; NULL if it cannot. */
static FILE *open_in(const char *dir, const char *name)
{
    char path[8192];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return NULL;
    return fopen(path, "re");
}

/* Reads the first line of dir/name into buf; false if missing or empty. */
static bool read_first_line(const char *dir, const char *name, char *buf, size_t size)
{
    FILE *f = open_in(dir, name);
    if (f == NULL)
        return false;
    bool ok = fgets(buf, (int)size, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\n")] = '\0';
    return ok && buf[0] != '\0';
}

/* Parses a whole positive decimal number; false on anything else. */
static bool parse_positive(const char *s, unsigned long long *out)
{
    if (*s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v == 0)
        return false;
    *out = v;
    return true;
}

/* The limit set in one cgroup directory: v2's cpu.max ("max 100000" or "150000 100000"), v1's
 * cpu.cfs_quota_us (-1: none) over cpu.cfs_period_us. */
static cpu_limit dir_limit(const char *dir, bool v2)
{
    cpu_limit none = {0, 0}, l;
    char line[128], period[64];
    if (v2) {
        char *space;
        if (!read_first_line(dir, "cpu.max", line, sizeof line) ||
            (space = strchr(line, ' ')) == NULL)
            return none;
        *space = '\0';
        if (!parse_positive(line, &l.quota) || !parse_positive(space + 1, &l.period))
            return none; /* "max", or malformed */
        return l;
    }
    if (!read_first_line(dir, "cpu.cfs_quota_us", line, sizeof line) ||
        !read_first_line(dir, "cpu.cfs_period_us", period, sizeof period) ||
        !parse_positive(line, &l.quota) || !parse_positive(period, &l.period))
        return none;
    return l;
}

/* True if comma-separated list has the item word. */
static bool list_has(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list;; p++) {
        if (strncmp(p, word, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return true;
        p = strchr(p, ',');
        if (p == NULL)
            return false;
    }
}

/* From the process's cgroup file: the path in the v1 cpu hierarchy (*v2 false) or else in the
 * v2 one (*v2 true). False if neither is listed. */
static bool find_cgroup_path(const char *proc_self, char *path, size_t size, bool *v2)
{
    char line[4096];
    FILE *f = open_in(proc_self, "cgroup");
    if (f == NULL)
        return false;
    bool found_v1 = false, found_v2 = false;
    while (!found_v1 && fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        /* "hierarchy-id:controllers:path"; the path may itself hold colons */
        char *c1 = strchr(line, ':'), *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
        if (c2 == NULL || c2[1] != '/')
            continue;
        *c2 = '\0';
        bool is_v2 = strcmp(line, "0:") == 0 && c1 + 1 == c2;
        if (is_v2 ? found_v2 : !list_has(c1 + 1, "cpu"))
            continue;
        if ((size_t)snprintf(path, size, "%s", c2 + 1) >= size)
            continue;
        found_v1 = !is_v2;
        found_v2 = found_v2 || is_v2;
    }
    fclose(f);
    *v2 = !found_v1;
    return found_v1 || found_v2;
}

/* From mountinfo, the mount point and mount root of the v1 cpu hierarchy or the v2 one. */
static bool find_mount(const char *proc_self, bool v2, char *point, char *mroot, size_t size)
{
    char line[8192];
    FILE *f = open_in(proc_self, "mountinfo");
    if (f == NULL)
        return false;
    bool found = false;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        /* "id parent major:minor root point options [optional...] - fstype source super" */
        char *save = NULL, *field[6], *tok = strtok_r(line, " \n", &save);
        int n = 0;
        for (; tok != NULL && n < 6; tok = strtok_r(NULL, " \n", &save))
            field[n++] = tok;
        while (tok != NULL && strcmp(tok, "-") != 0)
            tok = strtok_r(NULL, " \n", &save);
        char *fstype = strtok_r(NULL, " \n", &save), *source = strtok_r(NULL, " \n", &save);
        char *super = strtok_r(NULL, " \n", &save);
        if (n < 6 || fstype == NULL || source == NULL || super == NULL)
            continue;
        found = v2 ? strcmp(fstype, "cgroup2") == 0
                   : strcmp(fstype, "cgroup") == 0 && list_has(super, "cpu");
        found = found && (size_t)snprintf(mroot, size, "%s", field[3]) < size &&
                (size_t)snprintf(point, size, "%s", field[4]) < size;
    }
    fclose(f);
    return found;
}

/* The part of cgroup path that lies below the mount's root, or NULL when the mount does not
 * show it (a mount of another subtree, as in a container without its own cgroup namespace). */
static const char *below_mount_root(const char *path, const char *mroot)
{
    if (strcmp(mroot, "/") == 0)
        return path;
    size_t n = strlen(mroot);
    if (strncmp(path, mroot, n) != 0 || (path[n] != '/' && path[n] != '\0'))
        return NULL;
    return path + n;
}

/* True if limit a is below limit b (no limit is above every limit). */
static bool limit_below(cpu_limit a, cpu_limit b)
{
    if (a.quota == 0)
        return false;
    return b.quota == 0 || (double)a.quota / (double)a.period < (double)b.quota / (double)b.period;
}

unsigned ws__cgroup_cpu_limit(const char *proc_self, const char *root)
{
    char cgpath[4096], point[4096], mroot[4096], dir[8192];
    bool v2;
    if (!find_cgroup_path(proc_self, cgpath, sizeof cgpath, &v2) ||
        !find_mount(proc_self, v2, point, mroot, sizeof point))
        return 0;
    const char *rel = below_mount_root(cgpath, mroot);
    if (rel == NULL)
        return 0;
    int top = snprintf(dir, sizeof dir, "%s%s", root, point);
    if (top < 0 || (size_t)top + strlen(rel) >= sizeof dir)
        return 0;
    snprintf(dir + top, sizeof dir - (size_t)top, "%s", strcmp(rel, "/") == 0 ? "" : rel);
    cpu_limit best = {0, 0};
    for (;;) {
        cpu_limit here = dir_limit(dir, v2);
        if (limit_below(here, best))
            best = here;
        char *slash = strrchr(dir + top, '/');
        if (slash == NULL)
            break; /* the mount point itself has been read */
        *slash = '\0';
    }
    if (best.quota == 0)
        return 0;
    unsigned long long cpus = best.quota / best.period + (best.quota % best.period != 0);
    return cpus < UINT_MAX ? (unsigned)cpus : UINT_MAX;
}

#else

unsigned ws__cgroup_cpu_limit(const char *proc_self, const char *root)
{
    (void)proc_self;
    (void)root;
    return 0; /* no cgroups here */
}

#endif

unsigned ws__available_cpus(void)
{
    ws__cpuset cpus;
    ws__process_cpus(&cpus);
    unsigned n = 0;
    for (unsigned cpu = 0; cpu < WS_CPUSET_MAX; cpu++)
        n += (unsigned)ws__cpuset_has(&cpus, cpu);
    unsigned quota = ws__cgroup_cpu_limit("/proc/self", "");
    if (quota != 0 && quota < n)
        n = quota;
    return n > 0 ? n : 1u;
}

/* ---------------------------------------------------------------------------------------- */
/* Contention                                                                                */
/* ---------------------------------------------------------------------------------------- */

/* The fourth field of a loadavg file, "running/threads": the threads runnable right now on the
 * whole machine, the reader included. */
unsigned ws__runnable_threads_in(const char *text)
{
    unsigned running = 0, threads = 0;
    if (sscanf(text, "%*s %*s %*s %u/%u", &running, &threads) != 2)
        return 0;
    return running;
}

/* /proc/loadavg, opened once (a read of an open file is a few microseconds; an open more). A
 * machine without it reads as 0. */
static int loadavg_fd = -1;
static pthread_once_t loadavg_once = PTHREAD_ONCE_INIT;

static void loadavg_open(void)
{
    loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
}

static _Atomic unsigned forced_runnable; /* ws__test_force_runnable's count, 0 if none */

void ws__test_force_runnable(unsigned n)
{
    ws_store_relaxed(&forced_runnable, n); /* relaxed: set before the pool under test runs */
}

unsigned ws__runnable_threads(void)
{
    unsigned forced = ws_load_relaxed(&forced_runnable); /* relaxed: as above */
    if (forced != 0)
        return forced;
    pthread_once(&loadavg_once, loadavg_open);
    char text[128];
    ssize_t n = loadavg_fd >= 0 ? pread(loadavg_fd, text, sizeof text - 1, 0) : -1;
    if (n <= 0)
        return 0;
    text[n] = '\0';
    return ws__runnable_threads_in(text);
}

unsigned ws__online_cpus(void)
{
    static _Atomic unsigned cached; /* 0 until the first call: sysconf reads a file */
    unsigned n = ws_load_relaxed(&cached);
    if (n == 0) {
        n = ws__cpu_count();
        ws_store_relaxed(&cached, n); /* relaxed: any caller computes the same value */
    }
    return n;
}

/* ---------------------------------------------------------------------------------------- */
/* Time                                                                                      */
/* ---------------------------------------------------------------------------------------- */

uint64_t ws__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t ws__thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int ws__user_cycles_open(void)
{
#if defined(__linux__) && defined(SYS_perf_event_open)
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = PERF_COUNT_HW_CPU_CYCLES;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    return fd >= 0 ? (int)fd : -errno;
#else
    return -ENOSYS;
#endif
}

uint64_t ws__user_cycles_read(int fd)
{
    uint64_t count;
    return read(fd, &count, sizeof count) == (ssize_t)sizeof count ? count : UINT64_MAX;
}

void ws__user_cycles_close(int fd)
{
    close(fd);
}

uint64_t ws__thread_switches(void)
{
#ifdef RUSAGE_THREAD
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) == 0)
        return (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
#endif
    return WS_SWITCHES_UNKNOWN;
}

ws__tick_source ws__ticks_source = {.ns_per_tick = 1.0};
static pthread_once_t ticks_once = PTHREAD_ONCE_INIT;

/* CPUID 0x80000007, EDX bit 8: the TSC runs at a constant rate in every P-, C- and T-state (what
 * Linux shows as constant_tsc and nonstop_tsc). */
static bool tsc_is_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return false;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8 & 1u) != 0;
#else
    return false;
#endif
}

/* The monotonic clock and the counter read together: the counter is read on both sides of the
 * clock and the midpoint taken, retrying when something (an interrupt) came between. */
static void read_clock_pair(uint64_t *ns, uint64_t *ticks)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 16; i++) {
        uint64_t a = ws__ticks();
        uint64_t t = ws__now_ns();
        uint64_t b = ws__ticks();
        if (b - a < best) {
            best = b - a;
            *ns = t;
            *ticks = a + (b - a) / 2;
        }
    }
}

static void calibrate_ticks(void)
{
    if (!tsc_is_invariant())
        return; /* the monotonic clock: one tick is one ns */
    ws__ticks_source.use_tsc = 1;
    uint64_t ns0, t0, ns1, t1;
    read_clock_pair(&ns0, &t0);
    struct timespec pause = {0, 2000000};
    nanosleep(&pause, NULL);
    read_clock_pair(&ns1, &t1);
    if (t1 > t0 && ns1 > ns0)
        ws__ticks_source.ns_per_tick = (double)(ns1 - ns0) / (double)(t1 - t0);
    else
        ws__ticks_source.use_tsc = 0; /* a counter that does not advance is no clock */
}

double ws__ticks_ns_per_tick(void)
{
    pthread_once(&ticks_once, calibrate_ticks);
    return ws__ticks_source.ns_per_tick;
}

/* ---------------------------------------------------------------------------------------- */
/* Futex-style wait and wake                                                                 */
/* ---------------------------------------------------------------------------------------- */

#ifdef __linux__

void ws__futex_wait(_Atomic uint32_t *addr, uint32_t expected)
{
    /* The kernel re-reads *addr under its bucket lock, so a wake between our caller's check
     * and this call is not lost: the wait returns EAGAIN at once. PRIVATE: never shared
     * between processes. */
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

void ws__futex_wait_ns(_Atomic uint32_t *addr, uint32_t expected, uint64_t timeout_ns)
{
    /* FUTEX_WAIT takes a relative timeout, measured on CLOCK_MONOTONIC. */
    struct timespec rel = {.tv_sec = (time_t)(timeout_ns / 1000000000u),
                           .tv_nsec = (long)(timeout_ns % 1000000000u)};
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, expected, &rel, NULL, 0);
}

int ws__futex_wake(_Atomic uint32_t *addr, int n)
{
    long woken = syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, n < 0 ? INT32_MAX : n,
                         NULL, NULL, 0);
    return woken < 0 ? -1 : (int)woken;
}

#else /* condition-variable fallback */

#define BUCKETS 64
static struct bucket {
    pthread_mutex_t lock;
    pthread_cond_t cond;
} buckets[BUCKETS];
static pthread_once_t buckets_once = PTHREAD_ONCE_INIT;

static void buckets_init(void)
{
    for (int i = 0; i < BUCKETS; i++) {
        pthread_mutex_init(&buckets[i].lock, NULL);
        pthread_cond_init(&buckets[i].cond, NULL);
    }
}

static struct bucket *bucket_of(_Atomic uint32_t *addr)
{
    pthread_once(&buckets_once, buckets_init);
    return &buckets[((uintptr_t)addr >> 4) % BUCKETS];
}

void ws__futex_wait(_Atomic uint32_t *addr, uint32_t expected)
{
    struct bucket *b = bucket_of(addr);
    pthread_mutex_lock(&b->lock);
    /* relaxed: the bucket lock orders this check against the waker's notify, which takes the
     * same lock after changing *addr. */
    if (ws_load_relaxed(addr) == expected)
        pthread_cond_wait(&b->cond, &b->lock);
    pthread_mutex_unlock(&b->lock);
}

void ws__futex_wait_ns(_Atomic uint32_t *addr, uint32_t expected, uint64_t timeout_ns)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until); /* the condition variable's default clock */
    uint64_t ns = (uint64_t)until.tv_nsec + timeout_ns % 1000000000u;
    until.tv_sec += (time_t)(timeout_ns / 1000000000u + ns / 1000000000u);
    until.tv_nsec = (long)(ns % 1000000000u);
    struct bucket *b = bucket_of(addr);
    pthread_mutex_lock(&b->lock);
    /* relaxed: as in ws__futex_wait. */
    if (ws_load_relaxed(addr) == expected)
        pthread_cond_timedwait(&b->cond, &b->lock, &until);
    pthread_mutex_unlock(&b->lock);
}

int ws__futex_wake(_Atomic uint32_t *addr, int n)
{
    (void)n; /* buckets are shared by addresses, so wake everyone; waiters re-check */
    struct bucket *b = bucket_of(addr);
    pthread_mutex_lock(&b->lock);
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->lock);
    return -1;
}

#endif
