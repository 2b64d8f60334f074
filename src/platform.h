/* platform.h: the operating-system surface, implemented in platform.c (and overflow.c: the
 * library's threads and the report of their stack overflow).
 *
 * Threads (with CPU affinity, names and stack guards), CPU sets, futex-style wait/wake, the CPU
 * count and the cgroup CPU quota, resource limits, a monotonic clock, and allocation (with test
 * hooks that make the Nth allocation or thread creation fail, so that error paths are tested).
 * `#ifdef __linux__` appears in platform.c only.
 */
#ifndef WS_PLATFORM_H
#define WS_PLATFORM_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Padding unit for data written by different threads: two 64-byte lines, because x86's
 * adjacent-line prefetcher pulls lines in pairs and would otherwise bring back false sharing.
 * The library's globals that hot paths read sit in structs whose first member has this
 * alignment, so that they fill whole lines of their own: the linker may otherwise put a
 * program's static data beside them (a counter that its jobs write), and every write there
 * would make the library's next read a cache miss. */
#define WS_CACHE_LINE 128

#if defined(__GNUC__)
#define WS_LIKELY(x)    __builtin_expect(!!(x), 1)
#define WS_UNLIKELY(x)  __builtin_expect(!!(x), 0)
#define WS_NOINLINE     __attribute__((noinline))
#define WS_COLD         __attribute__((cold, noinline))
#define WS_MAYBE_UNUSED __attribute__((unused))
/* initial-exec: the worker pointer is read on every spawn; the general-dynamic model of a
 * shared library would turn each read into a call to __tls_get_addr. */
#define WS_TLS_FAST __attribute__((tls_model("initial-exec")))
#else
#define WS_LIKELY(x)   (x)
#define WS_UNLIKELY(x) (x)
#define WS_NOINLINE
#define WS_COLD
#define WS_MAYBE_UNUSED
#define WS_TLS_FAST
#endif

/* ---- threads ---- */
typedef pthread_t ws__thread;
/* Below the stack of every thread started here: a guard region of this many bytes that no
 * access may touch (pthread's guardsize), so that a stack overflow faults there. As large as the
 * kernel's gap below the main thread's stack (stack_guard_gap, 256 pages), so that a function
 * whose frame is below 1 MiB cannot step over it into the mapping underneath; address space
 * only, never memory. */
#define WS_STACK_GUARD ((size_t)1 << 20)
/* Starts fn(arg) on a new thread with the given stack size (0: the system default) and a guard
 * of WS_STACK_GUARD bytes. Returns 0, EAGAIN, EINVAL (stack size refused) or ENOMEM. */
int ws__thread_start(ws__thread *t, size_t stack_size, void *(*fn)(void *), void *arg);
void ws__thread_join(ws__thread t);
void ws__thread_yield(void);
unsigned ws__cpu_count(void);
/* Any thread. The CPUs this process can use, at least 1: the CPUs of its affinity mask
 * (ws__process_cpus), or fewer when its cgroup's CPU quota is smaller (ws__cgroup_cpu_limit). */
unsigned ws__available_cpus(void);
/* Any thread. The smallest CPU quota (cgroup v2 cpu.max, or v1 cpu.cfs_quota_us over
 * cpu.cfs_period_us) on the path from the process's cpu cgroup up to its mount, rounded up to
 * whole CPUs; 0 when no level sets one or the cgroup cannot be found. proc_self is the directory
 * holding the process's `cgroup` and `mountinfo` files and root is put in front of every mount
 * point: "/proc/self" and "" for this process, a fake tree in tests. A file that is missing or
 * malformed sets no limit at its level. */
unsigned ws__cgroup_cpu_limit(const char *proc_self, const char *root);

/* ---- CPU sets and placement ---- */
/* A set of OS CPU numbers below WS_CPUSET_MAX (the size of glibc's cpu_set_t; CPUs above it are
 * never used for pinning). */
#define WS_CPUSET_MAX 1024
typedef struct ws__cpuset {
    uint64_t bits[WS_CPUSET_MAX / 64];
} ws__cpuset;

static inline void ws__cpuset_add(ws__cpuset *s, unsigned cpu)
{
    if (cpu < WS_CPUSET_MAX)
        s->bits[cpu / 64] |= (uint64_t)1 << (cpu % 64);
}

static inline int ws__cpuset_has(const ws__cpuset *s, unsigned cpu)
{
    return cpu < WS_CPUSET_MAX && (s->bits[cpu / 64] >> (cpu % 64) & 1u);
}

/* Any thread. The CPUs this process may run on (its main thread's affinity, which taskset and
 * cgroup cpusets set); where that cannot be read, CPUs 0..ws__cpu_count()-1. */
void ws__process_cpus(ws__cpuset *out);
/* As ws__thread_start, with the new thread restricted to *cpus from its first instruction
 * (cpus NULL: inherited from the caller). EINVAL also when the system refuses the set. */
int ws__thread_start_on(ws__thread *t, size_t stack_size, const ws__cpuset *cpus,
                        void *(*fn)(void *), void *arg);
/* Any thread. Names thread t for ps, top -H, gdb and perf (at most 15 characters are kept: the
 * kernel's limit). Best effort: a failure changes nothing else. */
void ws__thread_set_name(ws__thread t, const char *name);
/* The calling thread's stack: its lowest usable address, its usable size and the size of the
 * guard region just below it. False where the system does not say. */
_Bool ws__thread_stack(uintptr_t *low, size_t *size, size_t *guard);
/* Any thread. The soft RLIMIT_STACK, the main thread's stack limit: bytes, SIZE_MAX if
 * unlimited, 0 where unknown. */
size_t ws__main_stack_limit(void);
/* Any thread. True if the process's address space is limited (a finite soft RLIMIT_AS, as set
 * by `ulimit -v` and some batch schedulers). */
_Bool ws__address_space_limited(void);
/* Any thread. size bytes of read-write memory with an inaccessible page just below it (for an
 * alternate signal stack), or NULL; ws__pages_free gives it back. */
void *ws__pages_alloc(size_t size);
void ws__pages_free(void *p, size_t size);
/* The CPU the calling thread runs on and that CPU's NUMA node, -1 where unknown. A hint: the
 * thread may move right after. */
void ws__current_cpu(int *cpu, int *node);

/* ---- library threads and their stack overflow (overflow.c) ---- */
/* As ws__thread_start_on, for a thread of the library's own: the new thread runs fn(arg) with
 * an alternate signal stack, and a fault in the guard region below its stack prints one line on
 * stderr, "worksteal: <who> overflowed its C stack of <stack_size> bytes: raise WS_STACK_SIZE
 * or ws_config.stack_size", and aborts. The first call installs the process's SIGSEGV and
 * SIGBUS handler, which passes every other fault on to the action installed before it. Returns
 * as ws__thread_start_on, or ENOMEM. */
int ws__overflow_thread_start(ws__thread *t, size_t stack_size, const ws__cpuset *cpus,
                              const char *who, void *(*fn)(void *), void *arg);

/* A pause for spin loops: tells the CPU we are spinning (saves power, frees the sibling
 * hyperthread) without giving up the time slice. */
static inline void ws__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* ---- futex-style waiting ---- */
/* Any thread; may block. Sleeps while *addr == expected, until a wake on addr (spurious
 * returns are allowed, so callers re-check in a loop). */
void ws__futex_wait(_Atomic uint32_t *addr, uint32_t expected);
/* As ws__futex_wait, sleeping at most about timeout_ns nanoseconds. */
void ws__futex_wait_ns(_Atomic uint32_t *addr, uint32_t expected, uint64_t timeout_ns);
/* Any thread; never blocks for long. Wakes up to n waiters on addr (n < 0: all). Returns how
 * many were woken, or -1 if unknown (the condition-variable fallback). */
int ws__futex_wake(_Atomic uint32_t *addr, int n);

/* ---- time ---- */
uint64_t ws__now_ns(void);        /* monotonic */
uint64_t ws__thread_cpu_ns(void); /* CPU time of the calling thread (a system call, ~0.7 us) */

/* A cheap wall-clock counter for timing short intervals (the profiler's strands): the CPU's
 * time-stamp counter where it is invariant (constant rate, never stopped: CPUID says so), else
 * the monotonic clock. ws__ticks_ns_per_tick() converts; its first call chooses the source and
 * calibrates it against the monotonic clock (about 2 ms); ws__ticks is valid after it. */
double ws__ticks_ns_per_tick(void);
/* Written once by the first ws__ticks_ns_per_tick; read by every ws__ticks (lines of its own,
 * see WS_CACHE_LINE). */
typedef struct ws__tick_source {
    alignas(WS_CACHE_LINE) int use_tsc;
    double ns_per_tick;
} ws__tick_source;
extern ws__tick_source ws__ticks_source;
static inline uint64_t ws__ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (ws__ticks_source.use_tsc)
        return __builtin_ia32_rdtsc();
#endif
    return ws__now_ns();
}

/* A counter of the calling thread's CPU cycles in user mode (no kernel, no hypervisor time:
 * interrupts and a host's stalls do not count), for the profiler's WS_PROFILE_CYCLES=1: a file
 * descriptor, or -errno where the machine has none (no PMU, as in most virtual machines, or
 * perf_event_paranoid forbids it). Read returns the count, UINT64_MAX if the read failed. */
int ws__user_cycles_open(void);
uint64_t ws__user_cycles_read(int fd);
void ws__user_cycles_close(int fd);

/* Context switches of the calling thread so far (voluntary or not; a system call), or
 * WS_SWITCHES_UNKNOWN where the system does not count them per thread. */
uint64_t ws__thread_switches(void);
#define WS_SWITCHES_UNKNOWN UINT64_MAX

/* ---- contention ---- */

/* The threads runnable on the whole machine right now, the caller included (/proc/loadavg; a
 * read of an open file, a few microseconds), or 0 where the system does not say. */
unsigned ws__runnable_threads(void);
/* The same, from a loadavg file's text (tests). */
unsigned ws__runnable_threads_in(const char *text);
/* The machine's online CPUs (ws__cpu_count), cached after the first call. */
unsigned ws__online_cpus(void);
/* Test hook: ws__runnable_threads returns n from now on (0: the machine's count again). */
void ws__test_force_runnable(unsigned n);

/* ---- memory ---- */
/* malloc/calloc/free, through one place so that tests can make allocations fail. */
void *ws__malloc(size_t size);
void *ws__calloc(size_t n, size_t size);
void *ws__aligned_alloc(size_t align, size_t size); /* zeroed; free with ws__free */
void ws__free(void *p);

/* Test hooks: the Nth call from now fails (1: the next one); 0 disables. Any thread. */
void ws__test_fail_alloc_after(long n);
void ws__test_fail_thread_after(long n);
/* True while an armed countdown has not yet reached its failing call. */
_Bool ws__test_fail_alloc_pending(void);
_Bool ws__test_fail_thread_pending(void);

/* Test hooks at the windows of the lifetime protocols (pool.c): in Debug and sanitizer builds
 * (WS_TEST_HOOKS) each site calls the function a test installed, which may sleep there to widen
 * the window; in release builds the sites compile to nothing. */
enum {
    WS_HOOK_ADMITTED, /* a submitter's reference was just counted */
    WS_HOOK_INJECTED, /* an external task was just queued, before the wake-up */
    WS_HOOK_RELEASED, /* a reference was just given back */
};
typedef void (*ws__test_hook_fn)(int site);
/* Installs fn (NULL: none). Returns false in builds without hooks. Any thread. */
_Bool ws__test_set_hook(ws__test_hook_fn fn);
void ws__test_hook_call(int site);
#ifdef WS_TEST_HOOKS
#define ws_test_hook(site) ws__test_hook_call(site)
#else
#define ws_test_hook(site) ((void)0)
#endif

#endif /* WS_PLATFORM_H */
